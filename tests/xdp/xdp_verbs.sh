#!/bin/bash
# Unmodified verbs programs over transport xdp across a veth between two
# namespaces: xdp on both ends, and xdp on one end with udp on the other
# (wire compatibility), ibv_{rc,uc,srq,ud}_pingpong with --chk; after
# `uroce link del` of the last devices no XDP program remains.  (Ping, TCP
# and SIGKILL with the program attached: xdp_transport.sh.)
# SKIPs while `uroce link add ... transport xdp` is refused (docs/xdp.md).
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/pairs.sh"
need_root
use_private_registry
id=$(uniq_id)
A=xdpvA$id B=xdpvB$id IA=vva$id IB=vvb$id
make_ns $A
make_ns $B
make_veth $A $IA 10.232.7.1/24 $B $IB 10.232.7.2/24
if ! out=$(ip netns exec $A "$UROCE" link add xa netdev $IA transport xdp 2>&1); then
	case $out in
	*"does not select transports yet"*) skip "transport xdp is not selectable yet: $out" ;;
	*) fail "link add transport xdp: $out" ;;
	esac
fi
on_exit "ip netns exec $A '$UROCE' link del xa"
add_dev xb $IB $B transport xdp
add_dev ua $IA $A        # udp devices on the same interfaces
add_dev ub $IB $B
GA=$(gid_of $A xa 10.232.7.1) GB=$(gid_of $B xb 10.232.7.2)
UGA=$(gid_of $A ua 10.232.7.1) UGB=$(gid_of $B ub 10.232.7.2)
prog_on() { ip -n "$1" link show "$2" | grep -q 'prog/xdp'; }

# server end (namespace, device, GID), then client end
for ends in "xdp-xdp $B xb $GB $A xa $GA" "xdp-udp $B xb $GB $A ua $UGA" "udp-xdp $B ub $UGB $A xa $GA"; do
	set -- $ends
	name=$1 sns=$2 sdev=$3 sgid=$4 cns=$5 cdev=$6 cgid=$7
	for size in 1 4096; do
		for t in rc uc srq; do
			pair $name $sns $sdev $sgid $cns $cdev $cgid 10.232.7.2 -- ibv_${t}_pingpong -c -n 500 -s $size
		done
	done
	pair $name $sns $sdev $sgid $cns $cdev $cgid 10.232.7.2 -- ibv_ud_pingpong -c -n 500 -s 1024
done
for d in "$A xa" "$A ua" "$B xb" "$B ub"; do
	set -- $d
	ip netns exec $1 "$UROCE" link del $2 || fail "link del $2"
done
prog_on $A $IA && fail "a program stayed on $IA after link del"
prog_on $B $IB && fail "a program stayed on $IB after link del"
pass "after uroce link del no XDP program remains"
