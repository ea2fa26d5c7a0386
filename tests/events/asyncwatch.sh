#!/bin/bash
# ibv_asyncwatch (unmodified) sees PORT_ERR / PORT_ACTIVE when the veth goes
# down and up, GID_CHANGE when an address is added, DEVICE_FATAL when the
# device is deleted under it.
. "$(dirname "$0")/../lib/common.sh"
need_root
use_private_registry
id=$(uniq_id)
A=uroceEA$id B=uroceEB$id
make_ns $A
make_ns $B
make_veth $A ea$id 10.201.9.1/24 $B eb$id 10.201.9.2/24
add_dev ev0 ea$id $A
log=$(mktemp /tmp/uroce-asyncwatch.XXXXXX)
on_exit "rm -f '$log'"
ip netns exec $A timeout 60 "$UROCE" run stdbuf -oL ibv_asyncwatch -d ev0 >"$log" 2>&1 &
pid=$!
stop_at_exit $pid
wait_for() { # pattern seconds
	wait_until "$2" grep -q "$1" "$log" && return 0
	cat "$log"
	fail "ibv_asyncwatch did not print $1"
}
wait_for 'async event FD' 10
ip -n $A link set ea$id down
wait_for 'IBV_EVENT_PORT_ERR' 10
ip -n $A link set ea$id up
wait_for 'IBV_EVENT_PORT_ACTIVE' 10
pass "PORT_ERR and PORT_ACTIVE"
ip -n $A addr add 10.201.10.1/24 dev ea$id
wait_for 'IBV_EVENT_GID_CHANGE' 10
pass "GID_CHANGE"
info=$(ip netns exec $A "$UROCE" run ibv_devinfo -v -d ev0)
grep -q '::ffff:10.201.10.1' <<<"$info" || fail "new GID not in the table"
ip netns exec $A "$UROCE" link del ev0
wait_for 'IBV_EVENT_DEVICE_FATAL' 10
pass "DEVICE_FATAL when the device is deleted"
cat "$log"
