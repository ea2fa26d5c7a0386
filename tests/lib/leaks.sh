#!/bin/bash
# What the tests leave behind (run first and last by meson, see
# tests/meson.build):
#   leaks.sh start  LEDGER SNAPSHOT   empties the ledger, notes what exists
#   leaks.sh check  LEDGER SNAPSHOT   fails if anything the tests made is left
# A leak is: a network namespace or private registry a test noted in the
# ledger (common.sh: make_ns, use_private_registry) that still exists; a
# registry, uverbs node or /dev/shm file of a dead network namespace
# (`uroce link prune -n`) that appeared during the run; a /dev/infiniband
# node that appeared during the run and that no registry names; a file or
# directory of the tests' own names in /tmp (/tmp/uroce-*, /tmp/i11cm*;
# not /tmp/uroce-UID, the runtime directory `uroce run` keeps for a user
# without XDG_RUNTIME_DIR, nor bench/run.sh's) that appeared during the run;
# a process still running with a noted private registry (UROCE_RUNDIR) in
# its environment: its test is over.
# The machine may be shared: things other people make while the suite runs
# are not in the ledger, and are alive, so they are not counted.
set -euo pipefail
. "$(dirname "$0")/wait.sh"
: "${UROCE:?UROCE must name the uroce binary}"
mode=$1 ledger=$2 snap=$3
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root"; exit 77; }

# One line per thing that may leak: KIND PATH.
inventory() {
	ls -d /run/uroce/ns-* 2>/dev/null | sed 's/^/registry /' || true
	ls -d /dev/shm/uroce-* 2>/dev/null | sed 's/^/shm /' || true
	ls -d /dev/infiniband/uverbs* 2>/dev/null | sed 's/^/node /' || true
	tmp_inventory
}
tmp_inventory() {
	ls -d /tmp/uroce-* /tmp/i11cm* 2>/dev/null | grep -Ev '^/tmp/uroce-([0-9]+|bench\..*)$' |
		sed 's/^/tmp /' || true
}
# Was KIND PATH there before the run?
in_snapshot() { grep -qxF "$1 $2" "$snap"; }

# Another test suite running now (a `meson test` that is not this
# script's ancestor) makes files of the same names: then /tmp is not judged.
ppid_of() {
	local stat
	stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 0
	stat=${stat##*) }
	set -- $stat
	echo "$2"
}
other_suite() {
	local p=$$ mine=" "
	while [ "${p:-0}" -gt 1 ]; do
		mine+="$p "
		p=$(ppid_of "$p")
	done
	# ... or a test script run by hand (a developer beside the suite):
	# this check runs last and alone, so no script of this suite is left.
	for p in $(pgrep -f 'meson.* test|/tests/[a-z_]+/[a-z0-9_]+\.(sh|py)( |$)' || true); do
		# (this script's own subshells carry its command line)
		[ "$p" != $$ ] && [ "$(ppid_of "$p")" != $$ ] || continue
		[ "${mine#* $p }" = "$mine" ] && return 0
	done
	return 1
}

case $mode in
start)
	: >"$ledger"
	inventory | sort >"$snap"
	echo "noted $(wc -l <"$snap") registries, /dev/shm files and nodes"
	exit 0 ;;
check) ;;
*) echo "usage: $0 start|check LEDGER SNAPSHOT" >&2; exit 2 ;;
esac
[ -f "$snap" ] || { echo "SKIP: no snapshot (run the whole suite)"; exit 77; }
leaks=()

# 1. What the tests noted.
while read -r kind what; do
	case $kind in
	netns) [ -e "/run/netns/$what" ] && leaks+=("network namespace $what") ;;
	dir) [ -e "$what" ] && leaks+=("registry $what") ;;
	esac
done < <(sort -u "$ledger" 2>/dev/null || true)

# 2. Dead namespaces' registries, nodes and QPN tables that are new.
dead=$(UROCE_RUNDIR= "$UROCE" link prune -n) || { echo "FAIL: uroce link prune -n"; exit 1; }
while read -r kind path; do
	[ -n "$kind" ] || continue
	in_snapshot "$kind" "$path" || leaks+=("$kind $path of a dead network namespace")
done <<<"$dead"

# 3. New nodes no registry names (a registry removed without `link del`);
# a node someone is adding right now gets its record within moments.
# (A loop, not cat | grep -q: under pipefail, the glob that matches
# nothing, or cat's SIGPIPE, failed the pipeline even when grep matched.)
named() {
	local f
	for f in /run/uroce/ns-*/devices/* /tmp/uroce-*/ns-*/devices/*; do
		[ -f "$f" ] && grep -qx "uverbs ${1#/dev/infiniband/uverbs}" "$f" && return 0
	done
	return 1
}
named_or_gone() { [ ! -e "$1" ] || named "$1"; }
for node in /dev/infiniband/uverbs*; do
	[ -e "$node" ] || continue
	in_snapshot node "$node" && continue
	wait_until 5 named_or_gone "$node" || leaks+=("node $node that no registry names")
done

# 4. Files in /tmp.
if other_suite; then
	echo "note: another test suite runs on this machine: /tmp not checked"
else
	while read -r kind path; do
		in_snapshot "$kind" "$path" || leaks+=("$path")
	done < <(tmp_inventory)
fi

# 5. Processes that outlived their test (one killed only its `timeout`).
rundir_of() { tr '\0' '\n' 2>/dev/null <"/proc/$1/environ" | sed -n 's/^UROCE_RUNDIR=//p' || true; }
for p in $(ls /proc | grep -E '^[0-9]+$'); do
	[ "$p" != $$ ] || continue
	dir=$(rundir_of "$p")
	[ -n "$dir" ] && grep -qxF "dir $dir" "$ledger" 2>/dev/null || continue
	leaks+=("process $p ($(tr '\0' ' ' 2>/dev/null <"/proc/$p/cmdline" || true)) of the test registry $dir")
done

if [ ${#leaks[@]} -gt 0 ]; then
	printf 'FAIL: left behind: %s\n' "${leaks[@]}"
	exit 1
fi
echo "ok: the tests left nothing behind ($(sort -u "$ledger" | grep -c . || true) namespaces and registries noted)"
