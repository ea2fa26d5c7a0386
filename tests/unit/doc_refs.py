#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
# Every file a doc page names exists in the source tree.
#
#   doc_refs.py [SOURCE_ROOT]
#
# Pages: README.md, docs/*.md, docs/learn/*.md, bench/README.md and
# kernel-uapi/README.md.  What counts as a reference (docs/design.md,
# "Doc pages and their references"):
#   - a markdown link or image to a local target ([text](path)), resolved
#     against the page's folder; its #anchor, if any, must be a heading's;
#   - in a code span or a fenced block, each word that starts with a
#     top-level folder of the tree (`providers/...`, `tests/...`,
#     `docs/...`, `cli/...`, `bench/...`, `kernel-uapi/...`, `man/...`,
#     ...), or with a folder of providers/uroce (`engine/cc.c`, a layer-
#     relative name) when it ends in a file extension or a slash;
#   - in prose, the same words when they end in a file extension;
#   - a bare page name (`verbs_ext.md`), against the page's folder.
# A name without an extension may be a program's: `tests/xdp/xdp_probe`
# is found as tests/xdp/xdp_probe.c.
# Not references: absolute paths (runtime places such as
# /dev/infiniband/uverbsN or /run/uroce), URLs, and words with a
# placeholder (<...>, $VAR, %p, {...}).  A word with '*' must match
# something.  `build/X` names a build product: X, X.c, or a target its
# folder's meson.build names must exist.
import glob
import os
import re
import sys

PAGES = ["README.md", "docs/*.md", "docs/learn/*.md", "bench/README.md",
         "kernel-uapi/README.md"]
REQUIRED = ["README.md", "bench/README.md", "kernel-uapi/README.md"]

FENCE = re.compile(r"^\s*(```|~~~)")
CODE_SPAN = re.compile(r"(`+)(.+?)\1")
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
# Word separators inside code and prose: blanks, quotes, brackets and the
# punctuation that sits next to a path in a sentence or a command line.
SPLIT = re.compile(r"[\s\"'(),;=|<>\[\]`]+")
EXT = re.compile(r"\.[A-Za-z0-9]+$")
PLACEHOLDER = re.compile(r"[<>${}%]")
VERBOSE = bool(os.environ.get("DOC_REFS_VERBOSE"))


def roots_of(src):
    """Top-level folders of the tree, and the layer folders of the provider."""
    top = {d for d in os.listdir(src)
           if os.path.isdir(os.path.join(src, d))
           and not d.startswith(".") and not d.startswith("build")}
    prov = os.path.join(src, "providers", "uroce")
    layers = {d for d in os.listdir(prov) if os.path.isdir(os.path.join(prov, d))}
    return top, layers - top


def clean(word):
    """A word as a path: no trailing sentence punctuation, no :LINE, no #anchor."""
    word = word.rstrip(".:!?")
    word = re.sub(r":\d+(-\d+)?$", "", word)
    return word.split("#", 1)[0]


def exists(src, rel):
    path = os.path.join(src, rel)
    if "*" in rel or "?" in rel:
        return bool(glob.glob(path))
    return os.path.exists(path)


def built_exists(src, rel):
    """build/X: the source of a build product."""
    if "*" in rel:  # made when something runs, not when it builds
        return True
    if exists(src, rel) or exists(src, rel + ".c"):
        return True
    folder, name = os.path.split(rel)
    meson = os.path.join(src, folder, "meson.build")
    if os.path.isfile(meson):
        with open(meson, encoding="utf-8") as f:
            return re.search(r"['\"]%s['\"]" % re.escape(name), f.read()) is not None
    return False


def word_refs(word, in_code, roots):
    """The path a word refers to (relative to the tree), or None."""
    top, layers = roots
    if "://" in word or word.startswith("/") or word.startswith("~"):
        return None
    word = clean(word)
    if not word or PLACEHOLDER.search(word) or "/" not in word:
        return None
    if word.startswith("./"):
        word = word[2:]
    first = word.split("/", 1)[0]
    has_ext = EXT.search(word) is not None
    if first == "build":
        return ("build", word[len("build/"):]) if in_code else None
    if first in top and (in_code or has_ext):
        return ("tree", word)
    if first in layers and (has_ext or (in_code and word.endswith("/"))):
        return ("tree", "providers/uroce/" + word)
    return None


def refs_of_text(text, in_code, roots):
    for word in SPLIT.split(text):
        if not word:
            continue
        ref = word_refs(word, in_code, roots)
        if ref:
            yield word, ref
        elif in_code:
            bare = clean(word)
            if re.fullmatch(r"[A-Za-z0-9_.-]+\.md", bare):
                yield word, ("page", bare)


def anchors_of(src, page):
    """The anchors a markdown renderer gives a page's headings (GitHub's rule:
    lower case, punctuation dropped, blanks to '-', repeats numbered)."""
    seen, anchors, in_fence = {}, set(), False
    with open(os.path.join(src, page), encoding="utf-8") as f:
        for line in f:
            if FENCE.match(line):
                in_fence = not in_fence
            m = None if in_fence else re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
            if not m:
                continue
            text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", m.group(1))
            slug = re.sub(r"[^\w\- ]", "", text.lower()).replace(" ", "-")
            n = seen.get(slug, 0)
            seen[slug] = n + 1
            anchors.add(slug if n == 0 else "%s-%d" % (slug, n))
    return anchors


def check_page(src, page, roots):
    """The broken references of one page, as 'PAGE:LINE: WORD (why)'."""
    bad = []
    here = os.path.dirname(page)
    in_fence = False
    with open(os.path.join(src, page), encoding="utf-8") as f:
        lines = f.read().split("\n")
    for n, line in enumerate(lines, 1):
        if FENCE.match(line):
            in_fence = not in_fence
            continue
        found = []
        if in_fence:
            found += refs_of_text(line, True, roots)
        else:
            for m in LINK.finditer(line):
                target = m.group(1)
                if re.match(r"[a-z]+:", target):  # http:, mailto:
                    continue
                found.append((target, ("link", target)))
            prose = LINK.sub(" ", line)
            for m in CODE_SPAN.finditer(prose):
                found += refs_of_text(m.group(2), True, roots)
            found += refs_of_text(CODE_SPAN.sub(" ", prose), False, roots)
        for word, (kind, rel) in found:
            if VERBOSE:
                print("%s:%d: %s -> %s %s" % (page, n, word, kind, rel))
            if kind == "tree":
                # a program is named by its source's path without ".c"
                ok = exists(src, rel) or (not EXT.search(rel) and exists(src, rel + ".c"))
            elif kind == "build":
                ok = built_exists(src, rel)
            elif kind == "link":
                rel, _, anchor = rel.partition("#")
                rel = os.path.normpath(os.path.join(here, rel or os.path.basename(page)))
                ok = exists(src, rel)
                if ok and anchor and rel.endswith(".md"):
                    ok = anchor in anchors_of(src, rel)
                    rel += "#" + anchor
            else:  # a bare page name: beside the page, or at the top
                ok = exists(src, os.path.join(here, rel)) or exists(src, rel)
            if not ok:
                bad.append("%s:%d: %s (no %s)" % (page, n, word, rel))
    return bad


def self_test():
    """The rules above on known lines: a checker that cannot fail proves nothing."""
    import tempfile
    with tempfile.TemporaryDirectory(prefix="uroce-doc-refs.") as src:
        for d in ("docs", "tests/unit", "providers/uroce/engine",
                  "providers/uroce/device", "bench"):
            os.makedirs(os.path.join(src, d))
        for f in ("docs/a.md", "tests/unit/x.sh", "providers/uroce/engine/cc.c",
                  "bench/udp_peer.c"):
            open(os.path.join(src, f), "w").close()
        with open(os.path.join(src, "docs", "page.md"), "w") as f:
            f.write("\n".join([
                "ok: `docs/a.md`, [a](a.md), `engine/cc.c`, tests/unit/x.sh.",
                "ok: `/dev/infiniband/uverbsN`, `/run/uroce`, `device/modalias`,",
                "ok: `tests/*/x.sh`, `docs/<name>.md`, `build/bench/udp_peer`",
                "```sh", "sudo tests/unit/x.sh --flag /tmp/t-%p.pcap", "```",
                "bad1: `docs/b.md`", "bad2: [b](../tests/b.sh)",
                "bad3: see engine/gone.c.", "bad4: `build/bench/nothing`",
                "```", "bad5 tests/unit/y.sh", "```",
                "bad6: `gone.md`", "bad7: `tests/*/nothing.sh`",
                "## A `q` heading: (2026-11-29)", "ok: [h](#a-q-heading-2026-11-29)",
                "bad8: [h](page.md#a-q-heading)", "## A `q` heading: (2026-11-29)",
                "ok: [h](#a-q-heading-2026-11-29-1)", "bad9: [h](#nowhere)",
            ]) + "\n")
        got = check_page(src, "docs/page.md", roots_of(src))
    lines = sorted({int(b.split(":")[1]) for b in got})
    want = [7, 8, 9, 10, 12, 14, 15, 18, 21]
    if lines != want:
        print("doc_refs: self-test: broken references found on lines %s, "
              "expected %s:\n  %s" % (lines, want, "\n  ".join(got)))
        return False
    return True


def main():
    src = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                          os.path.join(os.path.dirname(__file__), "..", ".."))
    roots = roots_of(src)
    if not self_test():
        return 1
    bad = ["%s: missing (a doc page every tree has)" % p
           for p in REQUIRED if not os.path.isfile(os.path.join(src, p))]
    pages = sorted({os.path.relpath(p, src) for pat in PAGES
                    for p in glob.glob(os.path.join(src, pat))})
    for page in pages:
        bad += check_page(src, page, roots)
    for b in bad:
        print("doc_refs: " + b)
    print("doc_refs: %d pages, %d broken references" % (len(pages), len(bad)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
