#!/bin/bash
# Open MPI 4.1 with pml ucx over uroce, restricted so that no byte can take
# another path (btl self only: no shared memory, no TCP BTL; UCX limited to
# rc_verbs/ud_verbs/self on the uroce device): our data-checking mpi_check
# with one rank in each of two namespaces joined by a veth (-np 2) and two
# in each (-np 4), launched into the namespaces by netns_agent.sh; uroce's
# packet counters prove the traffic took uroce.  Then one rank of a 2-rank
# job is killed mid-transfer: mpirun must exit non-zero within 30 s and
# leave nothing behind.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/lib.sh"
need_root
need_ucx
command -v mpirun >/dev/null || skip "openmpi-bin is not installed (scripts/deps.sh installs it)"
[ -x "${MPI_CHECK:-}" ] || skip "mpi_check was not built (libopenmpi-dev missing at configure time)"
here=$(cd "$(dirname "$0")" && pwd)
use_private_registry
ucx_places
hosts=$(mktemp /tmp/uroce-mpihosts.XXXXXX)
on_exit "rm -f '$hosts' '$hosts.log'"
# The agent gives each namespace's ORTE daemon a session tree of its own
# here (netns_agent.sh says why).
NETNS_AGENT_TMPDIR=$(mktemp -d /tmp/uroce-mpitmp.XXXXXX)
note_created dir "$NETNS_AGENT_TMPDIR"
export NETNS_AGENT_TMPDIR
on_exit "rm -rf '$NETNS_AGENT_TMPDIR'"

# mpirun runs in NS_A; its daemons (in both namespaces, through the agent)
# reach it over the veth only.  The two "hosts" share this machine's CPUs,
# which Open MPI cannot see: -np 4 is 4 spinning ranks (and their uroce
# progress threads) on 2 CPUs here, so the ranks yield when idle, as Open
# MPI makes them on a node it knows to be oversubscribed.  A rank the
# scheduler leaves without a CPU for the peers' whole retry budget (UCX's
# 8 x 1.07 s) looks dead to them (IBV_WC_RETRY_EXC_ERR): docs/performance.md,
# "Why a peer runs out of retries"; one idle CI run here failed so.
# Replaces the (sub)shell it runs in: `mpi ... &` leaves timeout's pid in $!.
mpi() { # NP SLOTS ARGS...
	local np=$1 slots=$2
	shift 2
	printf '%s slots=%s\n%s slots=%s\n' $NS_A $slots $NS_B $slots >"$hosts"
	exec ip netns exec $NS_A timeout ${MPI_TIMEOUT:-120} mpirun --allow-run-as-root \
		-np $np --hostfile "$hosts" \
		--mca plm rsh --mca plm_rsh_agent "$here/netns_agent.sh" \
		--mca plm_rsh_no_tree_spawn 1 \
		--mca oob_tcp_if_include $VETH_NET \
		--mca pml ucx --mca btl self --mca osc ucx --mca mpi_yield_when_idle 1 \
		-x UCX_NET_DEVICES=$UDEV:1 -x UCX_TLS=rc_verbs,ud_verbs,self \
		-x UROCE_RUNDIR -x PATH \
		"$UROCE" run "$MPI_CHECK" "$@"
}
packets() { echo $(( $(rx_packets $NS_A) + $(rx_packets $NS_B) )); }

for np in 2 4; do
	before=$(packets)
	rc=0
	out=$(mpi $np $((np / 2)) 2>&1) || rc=$?
	[ $rc -eq 0 ] || { echo "$out"; fail "mpirun -np $np (exit $rc)"; }
	after=$(packets)
	grep -q "mpi_check: .* on $np ranks, 0 failed" <<<"$out" || { echo "$out"; fail "mpi_check -np $np"; }
	# 4 MiB ping-pong alone is > 8000 packets at a 1024-byte MTU.
	[ $((after - before)) -ge 8000 ] || fail "-np $np: only $((after - before)) packets over uroce"
	pass "mpirun -np $np: $(grep 'mpi_check:' <<<"$out") [$((after - before)) packets over uroce]"
done

# Kill one rank while 1 MiB messages flow: its daemon reports the death,
# mpirun stops the job and exits non-zero within 30 s, it names the rank
# and the signal, the surviving rank is stopped too, and nothing of the job
# is left: no process in either namespace, no session directory.
mpi 2 1 stream 100 >"$hosts.log" 2>&1 &
mpid=$!   # timeout, running mpirun
stop_at_exit $mpid
streaming() { [ "$(grep -c '^streaming rank' "$hosts.log")" -ge 2 ] || ! _alive $mpid; }
wait_until 60 streaming || { cat "$hosts.log"; fail "stream job: no data flowing after 60 s"; }
victim=$(sed -n 's/^streaming rank 1 pid \([0-9]*\)$/\1/p' "$hosts.log")
survivor=$(sed -n 's/^streaming rank 0 pid \([0-9]*\)$/\1/p' "$hosts.log")
[ -n "$victim" ] && [ -n "$survivor" ] || { cat "$hosts.log"; fail "stream job did not start"; }
t0=$(date +%s%N)
kill -9 "$victim"   # our own job's rank (no PID namespace)
wait_until 30 eval '! _alive $mpid' || { cat "$hosts.log"; fail "mpirun still running 30 s after rank 1 was killed"; }
rc=0
wait $mpid || rc=$?
dt=$(( ($(date +%s%N) - t0) / 1000000 ))
[ $rc -ne 0 ] && [ $rc -ne 124 ] || { cat "$hosts.log"; fail "mpirun exited $rc after a rank was killed"; }
grep -q "process rank 1 with PID $victim .* signal 9" "$hosts.log" ||
	{ cat "$hosts.log"; fail "mpirun did not report rank 1 killed by signal 9"; }
ns_pids() { echo $(ip netns pids $NS_A) $(ip netns pids $NS_B); }
ns_empty() { [ -z "$(ns_pids)" ]; }
wait_until 10 ns_empty || { ps -o pid,args -p "$(ns_pids)"; fail "processes left in the job's namespaces"; }
! _alive "$survivor" || fail "surviving rank 0 (pid $survivor) still runs"
[ -z "$(find "$NETNS_AGENT_TMPDIR" -mindepth 2 | head -1)" ] ||
	{ find "$NETNS_AGENT_TMPDIR"; fail "session directories left behind"; }
pass "rank 1 killed mid-transfer: mpirun exited $rc after $dt ms; rank 0 stopped, nothing left"
