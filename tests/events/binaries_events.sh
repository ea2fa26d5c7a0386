#!/bin/bash
# Unmodified programs that sleep in ibv_get_cq_event: ibv_{rc,srq,ud}_pingpong
# -e with --chk, and perftest --events, on lo (two processes sharing a device)
# and between two network namespaces over a veth pair.
. "$(dirname "$0")/../lib/common.sh"
need_root
use_private_registry
id=$(uniq_id)
A=uroceXA$id B=uroceXB$id
make_ns $A
make_ns $B
make_veth $A xa$id 10.201.11.1/24 $B xb$id 10.201.11.2/24
add_dev lo0 lo
add_dev xa xa$id $A
add_dev xb xb$id $B
port=$(( 19000 + RANDOM % 2000 ))

gid_of() { # ns dev addr -> GID index of addr
	local ns=$1 dev=$2 addr=$3
	${ns:+ip netns exec $ns} "$UROCE" run ibv_devinfo -v -d $dev |
		sed -n "s/.*GID\[ *\([0-9]*\)\]:.*::ffff:$addr,.*/\1/p" | head -1
}

# pair NAME SRV_NS SRV_DEV SRV_GID CLI_NS CLI_DEV CLI_GID SERVER_ADDR -- CMD ARGS...
pair() {
	local name=$1 sns=$2 sdev=$3 sgid=$4 cns=$5 cdev=$6 cgid=$7 saddr=$8
	shift 9
	local log=$(mktemp /tmp/uroce-ev.XXXXXX) rc=0
	on_exit "rm -f '$log' '$log.c'"
	port=$((port + 1))
	local opts=("$@")
	local devopt=-d gidopt=-g portopt=-p
	case ${opts[0]} in ib_*) gidopt=-x ;; esac
	${sns:+ip netns exec $sns} timeout 120 "$UROCE" run "${opts[@]}" $devopt $sdev $gidopt $sgid $portopt $port >"$log" 2>&1 &
	local spid=$!
	sleep 1
	${cns:+ip netns exec $cns} timeout 120 "$UROCE" run "${opts[@]}" $devopt $cdev $gidopt $cgid $portopt $port $saddr >"$log.c" 2>&1 || rc=$?
	wait $spid || rc=$((rc ? rc : $?))
	if [ $rc -ne 0 ] || grep -Eiq 'error|fail|couldn|unable' "$log" "$log.c"; then
		echo "--- server"; cat "$log"; echo "--- client"; cat "$log.c"
		fail "$name: ${opts[*]} (exit $rc)"
	fi
	pass "$name: ${opts[*]}: $(grep -E 'iters in|^ *[0-9]+ +[0-9]+ ' "$log.c" | tail -1 | tr -s ' ')"
}

lg=$(gid_of "" lo0 127.0.0.1)
ag=$(gid_of $A xa 10.201.11.1)
bg=$(gid_of $B xb 10.201.11.2)
[ -n "$lg" ] && [ -n "$ag" ] && [ -n "$bg" ] || fail "GID indices not found"

for where in lo veth; do
	if [ $where = lo ]; then set -- "" lo0 $lg "" lo0 $lg 127.0.0.1
	else set -- $A xa $ag $B xb $bg 10.201.11.1; fi
	pair $where "$@" -- ibv_rc_pingpong -e -c -s 4096 -n 1000
	pair $where "$@" -- ibv_srq_pingpong -e -c -s 4096 -n 200
	pair $where "$@" -- ibv_ud_pingpong -e -c -s 512 -n 1000
	for t in ib_send_lat ib_send_bw ib_read_lat; do
		pair $where "$@" -- $t -e -F -n 500
	done
done
