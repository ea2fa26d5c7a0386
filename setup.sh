#!/bin/bash
# One command from a fresh Debian 12 machine to a working uroce device:
# installs what is missing, builds, adds device uroce0 on lo and runs
# unmodified libibverbs programs over it.  Run as root (sudo ./setup.sh).
set -euo pipefail
cd "$(dirname "$0")"
[ "$(id -u)" = 0 ] || { echo "uroce: setup.sh needs root (apt-get, /dev/infiniband): sudo $0" >&2; exit 1; }
scripts/deps.sh
[ -f build/build.ninja ] || meson setup build >/dev/null
ninja -C build
U=build/cli/uroce
"$U" link show uroce0 >/dev/null 2>&1 || "$U" link add uroce0 netdev lo
"$U" link show uroce0
echo "== ibv_devices"
"$U" run ibv_devices
echo "== ibv_devinfo -d uroce0"
"$U" run ibv_devinfo -d uroce0
gid=$("$U" run ibv_devinfo -v -d uroce0 | sed -n 's/.*GID\[ *\([0-9]*\)\]:.*::ffff:127.0.0.1,.*/\1/p' | head -1)

# Server and client: two processes sharing uroce0, talking RoCEv2 over lo.
# pair PORT CMD ARGS...: the client starts once the server listens on PORT.
. tests/lib/wait.sh
pair() {
	local port=$1 srv_log cli_rc=0 srv_rc=0
	shift
	srv_log=$(mktemp)
	timeout 120 "$U" run "$@" -p "$port" >"$srv_log" 2>&1 &
	local pid=$!
	wait_listen "$port" $pid 60 || { cat "$srv_log"; rm -f "$srv_log"; exit 1; }
	timeout 120 "$U" run "$@" -p "$port" 127.0.0.1 || cli_rc=$?
	wait $pid || srv_rc=$?
	if [ $cli_rc -ne 0 ] || [ $srv_rc -ne 0 ]; then
		cat "$srv_log"; rm -f "$srv_log"
		echo "uroce: '$*' failed (client $cli_rc, server $srv_rc)" >&2
		exit 1
	fi
	rm -f "$srv_log"
}
echo "== ibv_rc_pingpong --chk over uroce0 (GID $gid)"
pair 18515 ibv_rc_pingpong -d uroce0 -g "$gid" -s 4096 -n 1000 -c
echo "== ib_write_bw over uroce0"
pair 18515 ib_write_bw -d uroce0 -x "$gid" -F -s 65536 -n 2000
echo "== ib_read_lat over uroce0"
pair 18516 ib_read_lat -d uroce0 -x "$gid" -F -n 1000
echo
echo "uroce0 is ready: run any verbs program with '$U run PROGRAM' (no root needed)."
