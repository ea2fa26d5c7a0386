#!/bin/bash
# Inside a fresh chroot where the uroce .deb was just installed with apt
# (tests/releases/deb.sh): the installed uroce adds a device on lo, and
# ibv_rc_pingpong --chk passes under `uroce run` and after
# eval "$(uroce env)", and rping -V through uroce's CM (whose reaper,
# uroce-reaper, the package installs); the man page and the provider are
# where they belong.
set -euo pipefail
U=/usr/bin/uroce
rel=$(dpkg-query -W -f='${Version}' libibverbs1)
work=$(mktemp -d)
fail() { echo "FAIL [deb, libibverbs1 $rel]: $*"; exit 1; }
pass() { echo "ok [deb, libibverbs1 $rel]: $*"; }
for f in /usr/share/man/man8/uroce.8.gz /etc/libibverbs.d/uroce.driver \
	/usr/lib/*/libibverbs/liburoce-preload.so; do
	[ -e "$f" ] || fail "$f is not installed"
done
ls /usr/lib/*/libibverbs/liburoce-rdmav*.so >/dev/null || fail "no provider installed"
drv=$(sed -n 's/^driver //p' /etc/libibverbs.d/uroce.driver)
ls "$drv"-rdmav*.so >/dev/null || fail "uroce.driver names $drv, which has no provider"
# the CM's reaper (docs/fork.md), where the provider looks for it
reaper=$(find /usr -name uroce-reaper -type f -perm -u+x | head -1)
[ -n "$reaper" ] || fail "uroce-reaper is not installed"
grep -qaF "$reaper" /usr/lib/*/libibverbs/liburoce-rdmav*.so || fail "the provider does not name $reaper"
pass "installed: $(ls /usr/lib/*/libibverbs/liburoce-rdmav*.so), uroce(8), uroce.driver -> $drv, $reaper"
"$U" link add r0 netdev lo || fail "uroce link add r0 netdev lo"
out=$("$U" run ibv_devices 2>&1)
grep -Eq '^ +r0 ' <<<"$out" || { echo "$out"; fail "ibv_devices does not list r0"; }
grep -qi warn <<<"$out" && { echo "$out"; fail "ibv_devices warns"; }
. "$(dirname "$0")/pair.sh"
gid=$(lo_gid)
[ -n "$gid" ] || fail "no GID for 127.0.0.1 on r0"
pair ibv_rc_pingpong --chk -n 200 -s 4096
(eval "$("$U" env)" && RUN= && pair ibv_rc_pingpong --chk -n 200 -s 4096) || exit 1

# rping -V through uroce's CM, which starts the installed uroce-reaper: the
# server is ready when the CM says it listens (UROCE_CM_DEBUG).
. "$(dirname "$0")/../cm/rping_race.sh"
rping_ok() {   # rping_ok OUT RC: exit 0, or rdma-core 44's teardown race
	[ "$2" = 0 ] || { [ "$2" = 255 ] && rping_teardown_race "$1"; }
}
port=$((port + 1)) rc=0
UROCE_CM_DEBUG=1 timeout 60 "$U" run rping -s -a 127.0.0.1 -p $port -v -V -C 20 >"$work/rs" 2>&1 &
spid=$!
for ((i = 0; i < 600; i++)); do
	grep -q 'uroce cm: listening' "$work/rs" && break
	kill -0 $spid 2>/dev/null || break
	sleep 0.05
done
UROCE_CM_DEBUG=1 timeout 60 "$U" run rping -c -a 127.0.0.1 -p $port -v -V -C 20 >"$work/rc" 2>&1 &
rping_client_wait $! "$work/rc" $spid "$work/rs" || rc=$?
rping_ok "$work/rc" $rc || { cat "$work/rc"; echo "--- server"; cat "$work/rs"; fail "rping -c (exit $rc)"; }
rc=0; wait $spid || rc=$?
rping_ok "$work/rs" $rc || { cat "$work/rs"; fail "rping -s (exit $rc)"; }
if [ -n "$RPING_CM_RACE" ]; then
	# the client's stdout is lost; its errors (stderr) are not
	pings=$(grep -c 'server ping data' "$work/rs" || true)
	grep -Eiq 'mismatch|error|fail' "$work/rc" && { cat "$work/rc"; fail "rping -c reported an error"; }
else
	pings=$(grep -c 'ping data' "$work/rc" || true)
fi
[ "$pings" = 20 ] || { cat "$work/rc"; fail "rping -V: $pings pings, not 20"; }
grep -h 'uroce cm: cannot start' "$work/rs" "$work/rc" && fail "the CM could not start its reaper"
pass "rping -V through uroce's CM: 20 verified pings"
"$U" link del r0 || fail "uroce link del"
