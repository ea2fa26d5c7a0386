#!/bin/bash
# Clear errors and non-zero exits: unknown interface, duplicate name, bad
# names, not root, no devices; link show/del of unknown devices.
. "$(dirname "$0")/../lib/common.sh"
need_root
isolate_netns "$@"
use_private_registry

expect_err() { # expect_err "message regex" CMD...
	local re=$1; shift
	local out rc=0
	out=$("$@" 2>&1) || rc=$?
	[ $rc -ne 0 ] || fail "'$*' succeeded; expected an error"
	grep -Eq "$re" <<<"$out" || fail "'$*' said [$out], expected /$re/"
	echo "ok: '$*' -> $out"
}

expect_err 'no uroce devices in this network namespace' "$UROCE" run true
expect_err 'no network interface "nosuch0"' "$UROCE" link add d0 netdev nosuch0
expect_err 'invalid device name' "$UROCE" link add 'a/b' netdev lo
expect_err 'missing "netdev IFACE"' "$UROCE" link add d0
expect_err 'unknown transport' "$UROCE" link add d0 netdev lo transport tcp
add_dev d0 lo
expect_err 'device "d0" already exists' "$UROCE" link add d0 netdev lo
expect_err 'no device "zz"' "$UROCE" link del zz
expect_err 'no device "zz"' "$UROCE" link show zz
"$UROCE" link show d0 | grep -q '^link d0/1 state ACTIVE' || fail "link show d0"
expect_err 'unknown command' "$UROCE" frobnicate

# Not root: adding and deleting say that root is needed; running works.
if id nobody >/dev/null 2>&1; then
	expect_err 'needs root' setpriv --reuid=nobody --regid=nogroup --clear-groups "$UROCE" link add d1 netdev lo
	expect_err 'needs root' setpriv --reuid=nobody --regid=nogroup --clear-groups "$UROCE" link del d0
fi
pass "errors are clear"
