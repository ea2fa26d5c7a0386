#!/bin/bash
# perftest over uroce, both post APIs (ibv_wr_* by default, and
# --use_old_post_send): every RC test with a size sweep up to 8 MiB (-a;
# the old API at one multi-packet size),
# the bandwidth tests also with four QPs (-q 4) and bidirectional (-b),
# and UC / UD / XRC where perftest offers them (UC SENDs at sizes whose
# window the kernel's buffers hold: below), and UD multicast (--mcg).  On
# lo (two processes, one device) and across two namespaces over a veth
# pair.  A run fails if either side exits non-zero or prints an error.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/../lib/pairs.sh"
need_root
isolate_netns "$@"
use_private_registry
add_dev lo0 lo
veth_pair_with_devices 32
lg=$(gid_of "" lo0 127.0.0.1)
PAIR_TIMEOUT=300
where=${PERFTEST_WHERE:-lo veth}

for w in $where; do
	if [ $w = lo ]; then set -- "" lo0 $lg "" lo0 $lg 127.0.0.1
	else set -- $VETH_A $DEV_A $GID_A $VETH_B $DEV_B $GID_B $ADDR_A; fi
	# The size sweep (-a) runs with the ibv_wr_* API only: the two APIs
	# differ in how a WR is built, not in what the engine does with its
	# size, and a sweep to 8 MiB is most of this test's time.  The old
	# API gets one size of three packets and a byte instead.
	for api in "" --use_old_post_send; do
		for t in ib_send_bw ib_write_bw ib_read_bw ib_send_lat ib_write_lat ib_read_lat; do
			if [ -z "$api" ]; then pair $w "$@" -- $t -F -a -n 20
			else pair $w "$@" -- $t -F -s 12289 -n 100 $api; fi
		done
		for t in ib_atomic_bw ib_atomic_lat; do
			pair $w "$@" -- $t -F -n 500 $api
		done
		for t in ib_send_bw ib_write_bw ib_read_bw ib_atomic_bw; do
			pair $w "$@" -- $t -F -q 4 -n 200 $api
			pair $w "$@" -- $t -F -b -n 200 $api
		done
	done
	# UC has no retries and no flow control: a SEND whose packet the
	# receiver's socket buffer could not hold is gone, and ib_send_bw's
	# server waits for it until it gives up.  -a -n 20 has 20 * 8 MiB in
	# flight, which a receiver held off its CPU for a few milliseconds (a
	# loaded machine: 1 run in 15 lost 1170 packets, UdpRcvbufErrors) cannot
	# take.  Each size here keeps at most 5 MiB in flight (5120 packets at
	# the veth's MTU), which the kernel holds with the receiver not running
	# at all: uroce's socket buffer took 7943 packets of 4 KiB, 29127 of
	# 1 KiB, with nothing reading; the backlog (deep_backlog) 8192.  One
	# packet, a packet and a byte, many packets, 1 MiB messages.
	for sn in 1:100 4096:100 4097:100 65536:40 1048576:5; do
		pair $w "$@" -- ib_send_bw -F -c UC -s ${sn%:*} -n ${sn#*:}
	done
	pair $w "$@" -- ib_write_bw -F -c UC -a -n 20
	pair $w "$@" -- ib_send_lat -F -c UC -n 500
	pair $w "$@" -- ib_write_lat -F -c UC -n 500
	pair $w "$@" -- ib_send_bw -F -c UD -n 500
	pair $w "$@" -- ib_send_lat -F -c UD -n 500
	# perftest's XRC opens its domain through files of fixed names in
	# /tmp, and leaves them.
	remove_if_new /tmp/xrc_domain /tmp/xrc_domain_client /tmp/xrc_domain_server
	for api in "" --use_old_post_send; do
		pair $w "$@" -- ib_send_bw -F -c XRC -n 2000 -s 65536 $api
		pair $w "$@" -- ib_write_bw -F -c XRC -n 2000 -s 65536 $api
	done
	pair $w "$@" -- ib_send_bw -F -c XRC -q 4 -n 1000 -s 4096
	pair $w "$@" -- ib_read_bw -F -c XRC -n 200 -s 65536
	pair $w "$@" -- ib_send_lat -F -c XRC -n 500
	# Multicast: the server's UD QP is attached to the group and must
	# receive all -n datagrams.  perftest's default MGID is an IPv6
	# interface-local group (ff01::), which an IPv4 GID cannot send to:
	# an IPv4-mapped group is named instead.
	pair $w "$@" -- ib_send_bw -F -c UD --mcg -n 1000 -M 0:0:0:0:0:0:0:0:0:0:255:255:239:1:2:3
done
