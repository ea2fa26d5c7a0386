#!/bin/bash
# RDMA netlink answered in the process (docs/netlink.md): under `uroce run`
# libibverbs finds the device over netlink, as on a kernel with RDMA, and
# iproute2's rdma tool lists it.  Here the kernel has no RDMA netlink, so
# the answers are uroce's alone; the merged case runs in the stock_kernel
# guests.  The node is numbered past the kernel's (uverbs1024 and up).
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/pairs.sh"
need_root
isolate_netns "$@"
use_private_registry
add_dev nl0 lo
here=$(dirname "$0")

uverbs=$("$UROCE" link show nl0 | grep -o 'uverbs[0-9]*$')
n=${uverbs#uverbs}
[ "$n" -ge 1024 ] || fail "nl0's node is $uverbs, among the kernel's names"
pass "node /dev/infiniband/$uverbs"

# libibverbs asks over netlink: the device index is netlink's (-1 from sysfs).
idx=$("$UROCE" run /usr/bin/python3 -c '
import ctypes
v = ctypes.CDLL("libibverbs.so.1")
v.ibv_get_device_list.restype = ctypes.POINTER(ctypes.c_void_p)
v.ibv_get_device_name.restype = ctypes.c_char_p
v.ibv_get_device_name.argtypes = v.ibv_get_device_index.argtypes = [ctypes.c_void_p]
l = v.ibv_get_device_list(None)
i = 0
while l[i]:
    if v.ibv_get_device_name(l[i]) == b"nl0":
        print(v.ibv_get_device_index(l[i]))
    i += 1
') || fail "listing devices with libibverbs"
[ "$idx" = $((0x40000000 + n)) ] || fail "nl0's device index is '$idx', not netlink's $((0x40000000 + n))"
out=$("$UROCE" run ibv_devices) || fail "ibv_devices: $out"
guid=$(tr -d : <"$UROCE_RUNDIR"/ns-*/sys/class/infiniband/nl0/node_guid)
grep -Eq "^\s+nl0\s+$guid\$" <<<"$out" || fail "ibv_devices does not list nl0 with GUID $guid: $out"
"$UROCE" run ibv_devinfo -d nl0 | grep -Eq 'state:\s+PORT_ACTIVE' || fail "ibv_devinfo -d nl0"
pass "ibv_devices and ibv_devinfo find nl0 over netlink"

# iproute2's rdma: link (text and JSON), dev, sys.
"$UROCE" run rdma link show | tee /dev/stderr |
	grep -q '^link nl0/1 state ACTIVE physical_state LINK_UP netdev lo' || fail "rdma link show"
"$UROCE" run rdma link show -j | /usr/bin/python3 -c '
import json, sys
links = [l for l in json.load(sys.stdin) if l["ifname"] == "nl0"]
want = {"ifindex": 0x40000000 + int(sys.argv[1]), "port": 1, "state": "ACTIVE",
        "physical_state": "LINK_UP", "netdev": "lo", "netdev_index": 1}
assert len(links) == 1, links
bad = {k: (links[0].get(k), v) for k, v in want.items() if links[0].get(k) != v}
assert not bad, bad
' "$n" || fail "rdma link show -j"
"$UROCE" run rdma dev show nl0 | grep -q "^$((0x40000000 + n)): nl0: node_type ca .*node_guid" ||
	fail "rdma dev show nl0"
"$UROCE" run rdma link show nl0/1 | grep -q '^link nl0/1 ' || fail "rdma link show nl0/1"
if "$UROCE" run rdma link show nosuch/1 2>/dev/null; then fail "rdma link show of no device"; fi
pass "rdma link show (-j), dev show, one link, no such device"

# rdma statistic: uroce's counters, moving with traffic, as `uroce stat` sums them.
nl_stat() { "$UROCE" run rdma statistic show link nl0/1 | grep -o " $1 [0-9]*" | awk '{print $2}'; }
before=$(nl_stat tx_packets)
[ -n "$before" ] || fail "rdma statistic show has no tx_packets"
GID=$(gid_of "" nl0 127.0.0.1)
PAIR_TIMEOUT=60 pair rc "" nl0 $GID "" nl0 $GID 127.0.0.1 -- ibv_rc_pingpong -n 100
after=$(nl_stat tx_packets)
[ "$after" -gt "$before" ] || fail "tx_packets did not move: $before -> $after"
mine=$(timeout 10 "$UROCE" stat nl0 | awk '$1 == "tx_packets" { print $2 }')
[ "$after" = "$mine" ] || fail "rdma says tx_packets $after, uroce stat $mine"
"$UROCE" run rdma statistic show -j | /usr/bin/python3 -c '
import json, sys
s = [l for l in json.load(sys.stdin) if l["ifname"] == "nl0"]
assert len(s) == 1 and s[0]["port"] == 1 and s[0]["rx_packets"] > 0, s
' || fail "rdma statistic show -j"
pass "rdma statistic show: tx_packets $before -> $after after a pingpong, as uroce stat"

# rdma resource: a running ibv_rc_pingpong pair's objects, as the
# processes' tables in shared memory list them (device/res.h).  stdbuf:
# the pingpongs print their QPNs before the run, not at its end.
res_log=$(mktemp /tmp/uroce-res.XXXXXX)
on_exit "rm -f '$res_log' '$res_log.c'"
res_port=$((PAIR_PORT + 100))
timeout 120 "$UROCE" run stdbuf -oL ibv_rc_pingpong -d nl0 -g $GID -p $res_port -n 100000000 \
	>"$res_log" 2>&1 &
res_srv=$!
stop_at_exit $res_srv
wait_listen $res_port $res_srv 60 || fail "rdma resource: the pingpong server did not start"
timeout 120 "$UROCE" run stdbuf -oL ibv_rc_pingpong -d nl0 -g $GID -p $res_port -n 100000000 \
	127.0.0.1 >"$res_log.c" 2>&1 &
res_cli=$!
stop_at_exit $res_cli
both_rts() {
	[ "$("$UROCE" run rdma resource show qp link nl0/1 | grep -c ' state RTS ')" = 2 ]
}
wait_until 30 both_rts || { "$UROCE" run rdma resource show qp; fail "rdma resource show qp: not two QPs in RTS"; }
"$UROCE" run rdma resource show | tee /dev/stderr |
	grep -Eq "^$((0x40000000 + n)): nl0: pd 2 cq 2 qp 2 mr 2\s*\$" || fail "rdma resource show"
qpn_of() { sed -n 's/.*local address: .*QPN \(0x[0-9a-f]*\).*/\1/p' "$1"; }
"$UROCE" run rdma resource show -j qp | /usr/bin/python3 "$here/netlink_check.py" --res-qp nl0 \
	$res_srv $res_cli "$(qpn_of "$res_log")" "$(qpn_of "$res_log.c")" || fail "rdma resource show qp -j"
for what in cq mr pd; do
	"$UROCE" run rdma resource show -j $what | /usr/bin/python3 "$here/netlink_check.py" \
		--res-$what nl0 $res_srv $res_cli || fail "rdma resource show $what -j"
done
"$UROCE" run rdma resource show qp link nl0/1 | tee /dev/stderr | grep -q "type RC state RTS" ||
	fail "rdma resource show qp"
kill $res_cli $res_srv 2>/dev/null
wait $res_cli $res_srv 2>/dev/null || true
"$UROCE" run rdma resource show nl0 | grep -Eq ": nl0: pd 0 cq 0 qp 0 mr 0\s*\$" ||
	fail "rdma resource show: the pingpongs' objects outlive them"
pass "rdma resource show (qp, cq, mr, pd): a pingpong pair's objects, gone with them"

# Requests by hand: errors, bad input.
"$UROCE" run /usr/bin/python3 "$here/netlink_check.py" nl0 "$n" || fail "netlink_check.py"

# Without uroce run nothing is emulated: the kernel's answer stands.
if out=$(rdma link show 2>&1); then
	grep -q nl0 <<<"$out" && fail "nl0 listed outside uroce run"
fi
pass "outside uroce run, netlink is the kernel's"
