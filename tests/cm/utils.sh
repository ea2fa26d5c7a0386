#!/bin/bash
# rdmacm-utils, unmodified, on lo and across two namespaces: ucmatose with
# four connections (it checks every message's completion), udaddy (UD, via
# SIDR), rdma_server/rdma_client and rdma_xserver/rdma_xclient (the
# rdma_create_ep path: synchronous ids), each pair must exit 0 and print
# no error.  ucmatose and udaddy use fixed ports: the namespaces are ours.
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
	cm_pair "udaddy $w" $SRV_NS $CLI_NS -- udaddy -b $SRV_ADDR -C 20 \
		-- udaddy -s $SRV_ADDR -C 20
	cm_pair "rdma_server $w" $SRV_NS $CLI_NS -- rdma_server -s $SRV_ADDR -p $port \
		-- rdma_client -s $SRV_ADDR -p $port
	cm_pair "rdma_xserver $w" $SRV_NS $CLI_NS -- rdma_xserver -p $((port + 1)) \
		-- rdma_xclient -s $SRV_ADDR -p $((port + 1))
done
