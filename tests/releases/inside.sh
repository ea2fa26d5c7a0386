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
. "$(dirname "$0")/pair.sh"
gid=$(lo_gid)
[ -n "$gid" ] || fail "no GID for 127.0.0.1 on r0"

pair ibv_rc_pingpong --chk -n 500 -s 4096
pair ibv_ud_pingpong --chk -n 500 -s 1024
pair ib_write_bw -n 2000 -s 65536 -u 20
pair ib_read_lat -n 1000 -s 64 -u 20

# The whole shell sees the devices after eval "$(uroce env)".
(eval "$("$U" env)" && RUN= && pair ibv_rc_pingpong --chk -n 200 -s 1024) || exit 1

# rdma-core's own test_qpex: goes through verbs_qp (ibv_qp_to_qp_ex) in libibverbs.
t=/usr/share/doc/rdma-core/tests
[ -f "$t/run_tests.py" ] || fail "python3-pyverbs' tests are not installed"
cp -r "$t" "$work/tests"
gunzip -f "$work"/tests/*.gz
rc=0
# Its test base asks iproute2's `rdma link show -j` for the netdev: the
# release's own rdma, answered over RDMA netlink by the preload.
command -v rdma >/dev/null || fail "iproute2's rdma is not installed"
(cd "$work" && PYTHONPATH="$work/tests" timeout 300 "$U" run python3 tests/run_tests.py --dev r0 -v test_qpex) >"$work/py" 2>&1 || rc=$?
ran=$(grep -E '^Ran [0-9]+ test' "$work/py" || true)
oks=$(grep -cE '\.\.\. ok$' "$work/py" || true)
if [ $rc -ne 0 ] || [ "${oks:-0}" -lt 10 ]; then
	grep -B2 -A20 -E '^(FAIL|ERROR):' "$work/py" | head -60; tail -5 "$work/py"
	fail "test_qpex (exit $rc, $oks passed)"
fi
pass "test_qpex: $ran, $oks ok, $(grep -cE '\.\.\. skipped' "$work/py" || true) skipped"
