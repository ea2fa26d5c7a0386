#!/bin/bash
# rdma-core's own pyverbs test suite (Debian python3-pyverbs ships it) against
# a uroce device.  Modules listed in UROCE_SUITE_MODULES; a failure or error
# in any test fails this test, skips are reported.
. "$(dirname "$0")/../lib/common.sh"
need_root
isolate_netns "$@"
src=/usr/share/doc/rdma-core/tests
[ -f "$src/run_tests.py" ] || skip "python3-pyverbs' test suite is not installed"
use_private_registry
add_dev uroce0 lo
work=$(mktemp -d /tmp/uroce-suite.XXXXXX)
on_exit "rm -rf '$work'"
cp -r "$src" "$work/tests"
gunzip -f "$work"/tests/*.gz
cd "$work"
# test_shared_pd is left out: it imports a context by its kernel command fd.
modules=${UROCE_SUITE_MODULES:-test_device test_pd test_mr test_cq test_cq_events test_qp test_qpex test_atomic test_addr test_relaxed_ordering test_parent_domain test_odp test_fork}
set +e
PYTHONPATH="$work/tests" timeout 600 "$UROCE" run "$PY" tests/run_tests.py --dev uroce0 -v $modules >"$work/log" 2>&1
rc=$?
set -e
grep -E '\.\.\. (ok|FAIL|ERROR|skipped)' "$work/log" | sed 's/^/  /' | tail -100
tail -5 "$work/log"
[ $rc -eq 0 ] || { grep -B2 -A20 -E '^(FAIL|ERROR):' "$work/log" | head -80; fail "rdma-core suite ($modules): exit $rc"; }
pass "rdma-core pyverbs suite: $(grep -E '^Ran ' "$work/log")"
