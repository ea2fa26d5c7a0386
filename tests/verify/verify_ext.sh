#!/bin/bash
# verbs_ext (our own, public verbs API only): extended CQs and timestamps,
# memory windows, ODP and rereg_mr, ATOMIC WRITE, XRC, with data checks and
# error cases, verbs_mcast (UD multicast, two processes) and verbs_teardown
# (a responder that stops its QP at its receive completion has ACKed the
# SEND) and verbs_threads (three threads post to one RC QP while another
# polls), on a device on lo in a namespace of the test's own.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/pairs.sh"
need_root
isolate_netns "$@"
: "${VERBS_EXT:?}" "${VERBS_MCAST:?}" "${VERBS_TEARDOWN:?}" "${VERBS_THREADS:?}"
use_private_registry
add_dev ext0 lo
gid=$(gid_of "" ext0 127.0.0.1)
[ -n "$gid" ] || fail "no GID for 127.0.0.1"
rc=0
timeout 300 "$UROCE" run "$VERBS_EXT" -d ext0 -g "$gid" || rc=$?
[ $rc -eq 0 ] || fail "verbs_ext (exit $rc)"
pass "verbs_ext"
timeout 120 "$UROCE" run "$VERBS_MCAST" -d ext0 -g "$gid" || rc=$?
[ $rc -eq 0 ] || fail "verbs_mcast (exit $rc)"
pass "verbs_mcast"
timeout 120 "$UROCE" run "$VERBS_TEARDOWN" -d ext0 -g "$gid" || rc=$?
[ $rc -eq 0 ] || fail "verbs_teardown (exit $rc)"
pass "verbs_teardown"
timeout 240 "$UROCE" run "$VERBS_THREADS" -d ext0 -g "$gid" || rc=$?
[ $rc -eq 0 ] || fail "verbs_threads (exit $rc)"
pass "verbs_threads"
