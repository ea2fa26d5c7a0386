# pair CMD ARGS...: an unmodified verbs program as server on device r0 (GID
# index $gid), then as client to 127.0.0.1 once the server's TCP port
# listens (polled, bounded); both under `$U run` (or plainly when RUN is
# set to empty, after eval "$(uroce env)"), bounded by timeout.  Fails
# on a non-zero exit or an error word in either output.  Sourced; needs U,
# gid, work, fail and pass.  Callers give perftest -u 20 (a 4 s ACK timeout per
# try instead of 67 ms): a CI machine busy unpacking chroots can starve a
# process longer than 7 x 67 ms, which ends an RC QP with RETRY_EXC_ERR.
# lo_gid: the GID index of 127.0.0.1 on device r0 (empty if none).
lo_gid() {
	"$U" run ibv_devinfo -v -d r0 | sed -n 's/.*GID\[ *\([0-9]*\)\]:.*::ffff:127\.0\.0\.1,.*/\1/p' | head -1
}

# Below the kernel's ephemeral range (32768 up), where another test's
# connection may hold the port we choose.
port=$(( 20000 + RANDOM % 12000 ))
RUN=${RUN-run}
pair() {
	local gidopt=-g spid rc=0 i
	case $1 in ib_*) gidopt=-x ;; esac
	port=$((port + 1))
	timeout 120 ${RUN:+"$U" $RUN} "$@" -d r0 $gidopt "$gid" -p $port >"$work/s" 2>&1 &
	spid=$!
	for ((i = 0; i < 300; i++)); do
		ss -ltnH "sport = :$port" | grep -q . && break
		kill -0 $spid 2>/dev/null || break
		sleep 0.1
	done
	timeout 120 ${RUN:+"$U" $RUN} "$@" -d r0 $gidopt "$gid" -p $port 127.0.0.1 >"$work/c" 2>&1 || rc=$?
	wait $spid || rc=$((rc ? rc : $?))
	if [ $rc -ne 0 ] || grep -Eiq 'error|fail|couldn|unable|mismatch|incorrect' "$work/s" "$work/c"; then
		echo "--- server"; cat "$work/s"; echo "--- client"; cat "$work/c"
		fail "$* (exit $rc)"
	fi
	pass "$([ -n "$RUN" ] || echo "(uroce env) ")$*: $(grep -E 'iters in|^ *[0-9]+ +[0-9]+ ' "$work/c" | tail -1 | tr -s ' \t' ' ')"
}
