#!/bin/bash
# libfabric (Debian's libfabric-bin), unmodified, across two namespaces:
# fi_pingpong over the verbs provider's MSG endpoints (rdma_cm connects
# them) and over ofi_rxm's RDM endpoints on top, with data checks (-c).
# libfabric probes every interface with rdma_bind_addr at fi_getinfo, so
# the addresses of no uroce device must fail there cleanly.  Not on lo:
# libfabric's verbs provider skips loopback interfaces.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/lib.sh"
need_root
use_private_registry
cm_setup
cm_where veth
port=$((9200 + RANDOM % 500))
# fi_pingpong's server is ready when its TCP control socket listens.
CM_READY=tcp:$port cm_pair "fi_pingpong verbs msg" $SRV_NS $CLI_NS \
	-- fi_pingpong -p verbs -e msg -c -B $port -I 100 \
	-- fi_pingpong -p verbs -e msg -c -P $port -I 100 $SRV_ADDR
grep -q '^64k' "$CM_CLI_LOG" || fail "msg: no 64k line"
port=$((port + 1))
CM_READY=tcp:$port cm_pair "fi_pingpong verbs;ofi_rxm rdm" $SRV_NS $CLI_NS \
	-- fi_pingpong -p "verbs;ofi_rxm" -e rdm -c -B $port -I 100 -S 4096 \
	-- fi_pingpong -p "verbs;ofi_rxm" -e rdm -c -P $port -I 100 -S 4096 $SRV_ADDR
grep -q '^4k' "$CM_CLI_LOG" || fail "rdm: no 4k line"
