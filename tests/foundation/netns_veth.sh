#!/bin/bash
# Devices live in the network namespace they were created in: two
# namespaces joined by a veth pair, each with its own device, each sees
# only its own device, its own address as GID, MTU 1024 for 1500 bytes.
. "$(dirname "$0")/../lib/common.sh"
need_root
use_private_registry
id=$(uniq_id)
A=uroceA$id B=uroceB$id
make_ns $A
make_ns $B
make_veth $A va$id 10.201.7.1/24 $B vb$id 10.201.7.2/24
add_dev rxa va$id $A
add_dev rxb vb$id $B

check_side() { # ns dev other_dev addr
	local ns=$1 dev=$2 other=$3 addr=$4 list info
	list=$(ip netns exec $ns "$UROCE" run ibv_devices)
	grep -qw "$dev" <<<"$list" || fail "$ns does not see $dev"
	grep -qw "$other" <<<"$list" && fail "$ns sees the other namespace's $other"
	info=$(ip netns exec $ns "$UROCE" run ibv_devinfo -v -d $dev)
	grep -Eq "GID\[ *[0-9]+\]:\s+::ffff:$addr, RoCE v2" <<<"$info" || fail "$dev lacks GID ::ffff:$addr"
	grep -Eq 'active_mtu:\s+1024' <<<"$info" || fail "$dev: active_mtu is not 1024 on a 1500-byte veth"
	grep -Eq 'state:\s+PORT_ACTIVE' <<<"$info" || fail "$dev not active"
	pass "$ns: $dev with ::ffff:$addr, MTU 1024"
}
check_side $A rxa rxb 10.201.7.1
check_side $B rxb rxa 10.201.7.2

# Port state follows the interface; the MTU too (9000 -> 4096).
ip -n $A link set va$id down
ip netns exec $A "$UROCE" run ibv_devinfo -d rxa | grep -Eq 'state:\s+PORT_DOWN' || fail "port not down with the link down"
ip -n $A link set va$id mtu 9000 up
ip -n $B link set vb$id mtu 9000
ip netns exec $A "$UROCE" run ibv_devinfo -d rxa | grep -Eq 'active_mtu:\s+4096' || fail "MTU 9000 does not give 4096"
pass "port state and MTU follow the interface"
