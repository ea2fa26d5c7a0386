#!/bin/bash
# rdma-core's own pyverbs test suite (Debian's python3-pyverbs ships it under
# /usr/share/doc/rdma-core/tests) against a uroce device on lo: the whole
# suite, or the tests named in UROCE_SUITE_MODULES.  Prints ran, passed,
# skipped (reasons grouped), failed and errors by module; a failure or error
# in any test fails this test.
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib/common.sh"
. "$here/../lib/pairs.sh"
need_root
isolate_netns "$@"
src=/usr/share/doc/rdma-core/tests
[ -f "$src/run_tests.py" ] || skip "python3-pyverbs' test suite is not installed"
use_private_registry
add_dev uroce0 lo
gid=$(gid_of "" uroce0 127.0.0.1)
[ -n "$gid" ] || fail "no RoCEv2 GID for 127.0.0.1 on uroce0"
# Tests of huge-page MRs skip without 2 MiB huge pages: reserve some for the
# run and give them back at exit.  The pool is the machine's: other
# programs (UCX takes huge pages when there are any) may use some
# meanwhile, hence 512 MiB where the suite needs a few pages at a time.
hp=/sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages
if [ -w "$hp" ] && [ "$(cat "$hp")" = 0 ]; then
	echo 256 >"$hp" || true
	on_exit "echo 0 > '$hp'"
fi
work=$(mktemp -d /tmp/uroce-suite.XXXXXX)
on_exit "rm -rf '$work'"
cp -r "$src" "$work/tests"
gunzip -f "$work"/tests/*.gz
cd "$work"
set +e
# shellcheck disable=SC2086  # a list of test names
timeout ${UROCE_SUITE_TIMEOUT:-540} "$UROCE" run "$PY" "$here/rdma_core_suite.py" \
	"$work/tests" --dev uroce0 --gid "$gid" -v ${UROCE_SUITE_MODULES:-} >"$work/log" 2>&1
rc=$?
set -e
sed -n '/^== rdma-core pyverbs suite/,$p' "$work/log"
if [ $rc -ne 0 ]; then
	grep -B2 -A25 -E '^(FAIL|ERROR):' "$work/log" | head -150
	tail -20 "$work/log"
	fail "rdma-core pyverbs suite: exit $rc"
fi
pass "rdma-core pyverbs suite: $(grep '^SUMMARY' "$work/log")"
