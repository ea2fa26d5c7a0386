#!/bin/bash
# perftest with on-demand paging (--odp: its MRs are registered with
# IBV_ACCESS_ON_DEMAND and it checks the device's odp_caps first): send,
# write and read bandwidth and latency, on lo and across two namespaces.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/pairs.sh"
need_root
use_private_registry
add_dev lo0 lo
veth_pair_with_devices 34
lg=$(gid_of "" lo0 127.0.0.1)
PAIR_TIMEOUT=200
for w in lo veth; do
	if [ $w = lo ]; then set -- "" lo0 $lg "" lo0 $lg 127.0.0.1
	else set -- $VETH_A $DEV_A $GID_A $VETH_B $DEV_B $GID_B $ADDR_A; fi
	for t in ib_write_bw ib_send_bw ib_read_bw; do
		pair $w "$@" -- $t --odp -F -a -n 20
	done
	pair $w "$@" -- ib_write_lat --odp -F -n 200
	pair $w "$@" -- ib_send_bw --odp -F -c UD -n 200
done
