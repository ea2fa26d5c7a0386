#!/bin/bash
# Run inside a release (a chroot, or the host) by tests/releases/release.sh,
# in a private mount and network namespace: build uroce with this release's
# libibverbs-dev, then run this release's own unmodified binaries on a
# device on lo.
#
#   inside.sh SRC BUILD [--no-build]
set -euo pipefail
src=$1 build=$2
if [ "${3:-}" != --no-build ]; then
	[ -f "$build/build.ninja" ] || meson setup "$build" "$src" >"$build.setup.log" 2>&1 ||
		{ cat "$build.setup.log"; echo "FAIL: meson setup"; exit 1; }
	ninja -C "$build" >"$build.ninja.log" 2>&1 ||
		{ tail -40 "$build.ninja.log"; echo "FAIL: build"; exit 1; }
fi
U=$build/cli/uroce
rel=$(pkg-config --modversion libibverbs)
work=$(mktemp -d /tmp/uroce-release.XXXXXX)
trap '[ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
fail() { echo "FAIL [$rel]: $*"; exit 1; }
pass() { echo "ok [$rel]: $*"; }

"$U" link add r0 netdev lo >"$work/link" 2>&1 || { cat "$work/link"; fail "uroce link add"; }
gid=$("$U" run ibv_devinfo -v -d r0 | sed -n 's/.*GID\[ *\([0-9]*\)\]:.*::ffff:127\.0\.0\.1,.*/\1/p' | head -1)
[ -n "$gid" ] || fail "no GID for 127.0.0.1 on r0"

port=$(( 20000 + RANDOM % 20000 ))
# pair CMD ARGS...: CMD as server, then as client once the server listens.
pair() {
	local gidopt=-g spid rc=0 i
	case $1 in ib_*) gidopt=-x ;; esac
	port=$((port + 1))
	timeout 120 "$U" run "$@" -d r0 $gidopt "$gid" -p $port >"$work/s" 2>&1 &
	spid=$!
	for ((i = 0; i < 300; i++)); do
		ss -ltnH "sport = :$port" | grep -q . && break
		kill -0 $spid 2>/dev/null || break
		sleep 0.1
	done
	timeout 120 "$U" run "$@" -d r0 $gidopt "$gid" -p $port 127.0.0.1 >"$work/c" 2>&1 || rc=$?
	wait $spid || rc=$((rc ? rc : $?))
	if [ $rc -ne 0 ] || grep -Eiq 'error|fail|couldn|unable|mismatch|incorrect' "$work/s" "$work/c"; then
		echo "--- server"; cat "$work/s"; echo "--- client"; cat "$work/c"
		fail "$* (exit $rc)"
	fi
	pass "$*: $(grep -E 'iters in|^ *[0-9]+ +[0-9]+ ' "$work/c" | tail -1 | tr -s ' \t' ' ')"
}
pair ibv_rc_pingpong --chk -n 500 -s 4096
pair ibv_ud_pingpong --chk -n 500 -s 1024
pair ib_write_bw -n 2000 -s 65536
pair ib_read_lat -n 1000 -s 64

# rdma-core's own test_qpex: goes through verbs_qp (ibv_qp_to_qp_ex) in libibverbs.
t=/usr/share/doc/rdma-core/tests
[ -f "$t/run_tests.py" ] || fail "python3-pyverbs' tests are not installed"
cp -r "$t" "$work/tests"
gunzip -f "$work"/tests/*.gz
rc=0
# Its test base asks `rdma link show -j` for the netdev: answer from our registry.
(cd "$work" && UROCE=$U PATH="$(dirname "$0"):$PATH" PYTHONPATH="$work/tests" timeout 300 "$U" run python3 tests/run_tests.py --dev r0 -v test_qpex) >"$work/py" 2>&1 || rc=$?
ran=$(grep -E '^Ran [0-9]+ test' "$work/py" || true)
oks=$(grep -cE '\.\.\. ok$' "$work/py" || true)
if [ $rc -ne 0 ] || [ "${oks:-0}" -lt 10 ]; then
	grep -B2 -A20 -E '^(FAIL|ERROR):' "$work/py" | head -60; tail -5 "$work/py"
	fail "test_qpex (exit $rc, $oks passed)"
fi
pass "test_qpex: $ran, $oks ok, $(grep -cE '\.\.\. skipped' "$work/py" || true) skipped"
