#!/bin/bash
# Completion channels and async events through the verbs API (cq_events.c)
# on a device on lo, under `uroce run`.
. "$(dirname "$0")/../lib/common.sh"
need_root
isolate_netns "$@"
use_private_registry
add_dev uroce0 lo
: "${CQ_EVENTS:?CQ_EVENTS must name the cq_events binary}"
# An ASan build (build-asan): `uroce run` puts its instrumented preload
# library ahead of the ASan runtime in LD_PRELOAD; the runtime still comes
# in with it, so let ASan accept that order.
case "$(ldd "$CQ_EVENTS")" in
*libasan*) export ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0 ;;
esac
gidx=$("$UROCE" run ibv_devinfo -v -d uroce0 | sed -n 's/.*GID\[ *\([0-9]*\)\]:.*::ffff:127.0.0.1.*/\1/p' | head -1)
[ -n "$gidx" ] || fail "no IPv4 GID on uroce0"
# CQ_EVENTS_ONLY=unacked: only the objects destroyed before their events
# are acknowledged (the unacked_events test, meant for the ASan build too).
timeout 300 "$UROCE" run "$CQ_EVENTS" uroce0 "$gidx" ${CYCLES:-100000} ${CQ_EVENTS_ONLY:-}
