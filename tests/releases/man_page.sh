#!/bin/bash
# man uroce documents every subcommand of `uroce help` and every knob of
# the table the code reads its environment by (`uroce knobs --names`, from
# providers/uroce/knob/knob.h), names no UROCE_* variable the table lacks,
# and renders cleanly.  It also checks itself: a copy of the page without
# one knob must fail.
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
page=$src/man/uroce.8
knobs=$("${UROCE:?}" knobs --names)
[ -n "$knobs" ] || { echo "FAIL: uroce knobs --names printed nothing"; exit 1; }

# check_knobs PAGE: every knob has its own ".B NAME" entry in PAGE, and
# every UROCE_* entry of PAGE is a knob.
check_knobs() {
	local p=$1 bad=0 v
	for v in $knobs; do
		grep -q "^\.B $v\$" "$p" || { echo "FAIL: knob $v is not in uroce(8)"; bad=1; }
	done
	for v in $(sed -n 's/^\.B \(UROCE_[A-Z0-9_]*\)$/\1/p' "$p" | sort -u); do
		grep -qx "$v" <<<"$knobs" || { echo "FAIL: uroce(8) documents $v, which no knob reads"; bad=1; }
	done
	return $bad
}

rc=0
check_knobs "$page" || rc=1
cmds=$("$UROCE" help | sed -n 's/^ *\(Usage: \)\{0,1\}\(eval "$(\)\{0,1\}uroce \([a-z]*\).*/\3/p' | sort -u)
for c in $cmds; do
	grep -Eq "^\.(B|BR|BI) \"?$c\b" "$page" || { echo "FAIL: subcommand $c is not in uroce(8)"; rc=1; }
done
warn=$(LC_ALL=C.UTF-8 MANWIDTH=80 man --warnings -l "$page" 2>&1 >/dev/null || true)
[ -z "$warn" ] || { echo "FAIL: man warns: $warn"; rc=1; }

# The check can fail: drop the entry of one knob (the last) from a copy.
omit=$(tail -n 1 <<<"$knobs")
copy=$(mktemp)
trap 'rm -f "$copy"' EXIT
grep -vx "\.B $omit" "$page" >"$copy"
if out=$(check_knobs "$copy"); then
	echo "FAIL: a page without $omit passed the check"
	rc=1
else
	echo "self-check: without $omit the page fails: $out"
fi
[ $rc -eq 0 ] && echo "ok: uroce(8) covers $(echo $knobs | wc -w) knobs ($(echo $knobs)) and subcommands: $(echo $cmds)"
exit $rc
