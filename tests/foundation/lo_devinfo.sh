#!/bin/bash
# A device on lo, seen by stock ibv_devices / ibv_devinfo under "uroce run":
# InfiniBand transport, Ethernet link layer, PORT_ACTIVE, MTU 4096 and a GID
# table that is exactly lo's addresses.
. "$(dirname "$0")/../lib/common.sh"
need_root
isolate_netns "$@"
use_private_registry
add_dev uroce0 lo

out=$("$UROCE" run ibv_devices)
echo "$out"
guid=$(cat "$UROCE_RUNDIR"/ns-*/sys/class/infiniband/uroce0/node_guid | tr -d :)
grep -Eq "^\s+uroce0\s+$guid\$" <<<"$out" || fail "ibv_devices does not list uroce0 with GUID $guid"

info=$("$UROCE" run ibv_devinfo -v -d uroce0)
for want in 'transport:\s+InfiniBand' 'link_layer:\s+Ethernet' 'state:\s+PORT_ACTIVE' \
	    'active_mtu:\s+4096' 'max_mtu:\s+4096' 'phys_state:\s+LINK_UP'; do
	grep -Eq "$want" <<<"$info" || fail "ibv_devinfo lacks /$want/"
done

# The RoCE v2 GIDs are exactly lo's addresses (IPv4 as ::ffff:a.b.c.d).
got=$(echo "$info" | sed -n 's/.*GID\[ *[0-9]*\]:\s*\(\S*\), RoCE v2/\1/p' | sort)
want=$( (ip -4 -o addr show dev lo | awk '{split($4,a,"/"); print "::ffff:" a[1]}';
	 ip -6 -o addr show dev lo | awk '{split($4,a,"/"); print a[1]}') | sort)
[ -n "$got" ] || fail "no GIDs shown"
[ "$got" = "$want" ] || fail "GIDs [$got] are not lo's addresses [$want]"
pass "ibv_devinfo: GIDs = $(echo $got)"

# GIDs follow the interface's addresses: a new one appears at the next
# start, the old ones keep their index.
idx_before=$("$UROCE" run ibv_devinfo -v -d uroce0 | grep -E 'GID.*::1,')
ip addr add 127.0.0.77/8 dev lo
on_exit "ip addr del 127.0.0.77/8 dev lo"
info=$("$UROCE" run ibv_devinfo -v -d uroce0)
grep -q '::ffff:127.0.0.77, RoCE v2' <<<"$info" || fail "new address not in the GID table"
grep -qF "$idx_before" <<<"$info" || fail "existing GID moved: $idx_before"
ip addr del 127.0.0.77/8 dev lo
info=$("$UROCE" run ibv_devinfo -v -d uroce0)
grep -q '127.0.0.77' <<<"$info" && fail "removed address still in the GID table"
pass "GID table follows address changes"
