#!/bin/bash
# perftest with -R (QPs connected by rdma_cm, data exchanged over rdma_cm):
# every bandwidth and latency test of the issue, RC, on lo and across two
# namespaces.  Not here: `ib_send_bw -R -c UD` (see docs/cm.md: its client
# sends its SIDR_REQ before that perftest's server listens, every time so
# far; SIDR itself is tested with udaddy in utils.sh).
#
# Debian 12's perftest (4.5-0.17) has a race of its own: after its
# handshake the client may connect before the server has called
# rdma_listen; the server's CM then answers REJ 8 (UD: SIDR_REP status 1,
# "unsupported", seen as UNREACHABLE error 1), as the kernel's does, and
# that perftest's retry path crashes (fixed upstream in perftest
# 3d9d8d0, "Fix crashes ... in RDMA CM connection retry").  Only that
# signature is run again, at most four times, and counted.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/lib.sh"
need_root
use_private_registry
cm_setup
CM_TIMEOUT=120
races=0
perf_pair() {
	local w=$1 sdev=$2 cdev=$3
	shift 3
	for attempt in 1 2 3 4 5; do
		port=$((7400 + RANDOM % 500))
		if (cm_pair "perftest $w" $SRV_NS $CLI_NS -- "$@" -d $sdev -p $port \
			-- "$@" -d $cdev -p $port $SRV_ADDR) >/tmp/i11cm-perf.$$ 2>&1; then
			tail -1 /tmp/i11cm-perf.$$
			rm -f /tmp/i11cm-perf.$$
			return 0
		fi
		if [ $attempt -lt 5 ] && grep -Eq 'RDMA_CM_EVENT_(REJECTED; error: 8|UNREACHABLE; error: 1)\.' /tmp/i11cm-perf.$$; then
			races=$((races + 1))
			continue
		fi
		cat /tmp/i11cm-perf.$$
		rm -f /tmp/i11cm-perf.$$
		fail "perftest $w: $*"
	done
}
for w in ${CM_WHERE:-lo veth}; do
	cm_where $w
	if [ $w = lo ]; then sdev=lo0 cdev=lo0; else sdev=cma cdev=cmb; fi
	for t in ib_send_bw ib_write_bw ib_read_bw ib_atomic_bw ib_send_lat ib_write_lat ib_read_lat; do
		perf_pair $w $sdev $cdev $t -R -n 200
	done
done
echo "perftest's own listen race (REJ 8, run again): $races time(s)"
