#!/bin/bash
# perftest with -R (QPs connected by rdma_cm, data exchanged over rdma_cm):
# every bandwidth and latency test of the issue, RC, and ib_send_bw -c UD
# (SIDR), on lo and across two namespaces.
#
# Debian 12's perftest (4.5-0.17) races itself: after its handshake over
# the control connection the client connects at once, while the server
# only then creates, binds and listens on its id.  A REQ that comes first
# is answered REJ 8 (invalid service ID; UD: SIDR_REP status 1, seen as
# UNREACHABLE error 1), as by the kernel's CM, and that perftest's retry
# path then crashes by construction: rdma_cm_destroy_cma() destroys the
# ids and the event channel and frees cma_master.nodes, and the retry
# calls rdma_resolve_addr(nodes[i].cma_id, ...) on the freed array
# (docs/cm.md; fixed upstream in perftest 3d9d8d0).  Only a client that
# fails after that event is run again (the server stopped at once), and
# counted.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/lib.sh"
need_root
use_private_registry
cm_setup
CM_TIMEOUT=120
races=0
CM_AGAIN_RE='RDMA_CM_EVENT_(REJECTED; error: 8|UNREACHABLE; error: 1)\.'
# Who wins is which of the two processes the scheduler runs when the
# handshake ends: about a coin toss on an idle machine, and on a loaded one
# the client's more often (two `yes` running: 38 lost races in the 16 pairs
# of a passing run; a loaded CI run lost 15 in a row, the count this loop
# used to stop at).  So a pair runs again for as long as it keeps losing
# the race, up to PERF_RACE_SECONDS (each try takes about a second); the
# try after that is its last.
PERF_RACE_SECONDS=180
perf_pair() {
	local w=$1 sdev=$2 cdev=$3 rc start=$SECONDS last=
	shift 3
	while :; do
		[ $((SECONDS - start)) -lt $PERF_RACE_SECONDS ] || last=1
		port=$((7400 + RANDOM % 500))
		rc=0
		([ -z "$last" ] || CM_AGAIN_RE=
		 cm_pair "perftest $w" $SRV_NS $CLI_NS -- "$@" -d $sdev -p $port \
			-- "$@" -d $cdev -p $port $SRV_ADDR) || rc=$?
		if [ $rc -eq 2 ]; then
			races=$((races + 1))
			continue
		fi
		[ $rc -eq 0 ] || fail "perftest $w: $*"
		return 0
	done
}
for w in ${CM_WHERE:-lo veth}; do
	cm_where $w
	if [ $w = lo ]; then sdev=lo0 cdev=lo0; else sdev=cma cdev=cmb; fi
	for t in ib_send_bw ib_write_bw ib_read_bw ib_atomic_bw ib_send_lat ib_write_lat ib_read_lat; do
		perf_pair $w $sdev $cdev $t -R -n 200
	done
	perf_pair $w $sdev $cdev ib_send_bw -R -c UD -n 200
done
echo "perftest's own listen race (REJ 8, run again): $races time(s)"
