#!/bin/bash
# Inside a fresh chroot where the uroce .deb was just installed with apt
# (tests/releases/deb.sh): the installed uroce adds a device on lo, and
# ibv_rc_pingpong --chk passes under `uroce run` and after
# eval "$(uroce env)"; the man page and the provider are where they belong.
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
"$U" link del r0 || fail "uroce link del"
