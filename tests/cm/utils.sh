#!/bin/bash
# rdmacm-utils, unmodified, on lo and across two namespaces: ucmatose with
# four connections (it checks every message's completion), udaddy (UD, via
# SIDR), rdma_server/rdma_client and rdma_xserver/rdma_xclient (the
# rdma_create_ep path: synchronous ids), rstream and riostream (rsockets,
# verifying the data), cmtime (20 connections); each pair must exit 0 and
# print no error.  ucmatose and udaddy use fixed ports: the namespaces are ours.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/lib.sh"
need_root
use_private_registry
cm_setup
for w in ${CM_WHERE:-lo veth}; do
	cm_where $w
	port=$((7600 + RANDOM % 300))
	cm_pair "ucmatose $w" $SRV_NS $CLI_NS -- ucmatose -b $SRV_ADDR -c 4 -C 20 \
		-- ucmatose -s $SRV_ADDR -c 4 -C 20
	# udaddy's UD datagrams have no retransmission: one lost datagram hangs
	# it (on lo: between two processes of one device, docs/cm.md).
	cm_pair "udaddy $w" $SRV_NS $CLI_NS -- udaddy -b $SRV_ADDR -C 10 \
		-- udaddy -s $SRV_ADDR -C 10
	cm_pair "rdma_server $w" $SRV_NS $CLI_NS -- rdma_server -s $SRV_ADDR -p $port \
		-- rdma_client -s $SRV_ADDR -p $port
	cm_pair "rdma_xserver $w" $SRV_NS $CLI_NS -- rdma_xserver -p $((port + 1)) \
		-- rdma_xclient -s $SRV_ADDR -p $((port + 1))
	# rsockets, with their data verification (-T v)
	cm_pair "rstream $w" $SRV_NS $CLI_NS -- rstream -b $SRV_ADDR -p $((port + 2)) -T v -S 65536 -C 100 \
		-- rstream -s $SRV_ADDR -p $((port + 2)) -T v -S 65536 -C 100
	cm_pair "riostream $w" $SRV_NS $CLI_NS -- riostream -b $SRV_ADDR -p $((port + 3)) -T v -S 65536 -C 100 \
		-- riostream -s $SRV_ADDR -p $((port + 3)) -T v -S 65536 -C 100
	# cmtime: 20 connections set up and torn down; its server runs forever
	CM_SERVER_FOREVER=1 cm_pair "cmtime $w" $SRV_NS $CLI_NS -- cmtime -b $SRV_ADDR -p $((port + 4)) \
		-- cmtime -s $SRV_ADDR -p $((port + 4)) -c 20
	grep -q '^destroy' "$CM_CLI_LOG" || fail "cmtime $w: no timing table"
done
