# Helpers of the fork suite (sourced after ../lib/common.sh and ../cm/lib.sh).

# no_process_left NS: true once no process is in namespace NS (`ip netns
# pids`), within 10 s; else prints what is left and is false.
no_process_left() {
	local ns=$1 i
	for i in $(seq 200); do
		[ -z "$(ip netns pids "$ns")" ] && return 0
		sleep 0.05
	done
	ps -o pid,ppid,etimes,args -p "$(ip netns pids "$ns" | paste -sd,)" || true
	return 1
}
