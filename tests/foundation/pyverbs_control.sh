#!/bin/bash
# pyverbs drives the control-path verbs on a device on lo, as root and as an
# unprivileged user once root has added the device.
. "$(dirname "$0")/../lib/common.sh"
need_root
isolate_netns "$@"
use_private_registry
add_dev uroce0 lo
here=$(cd "$(dirname "$0")" && pwd)

timeout 60 "$UROCE" run "$PY" "$here/control_verbs.py" uroce0 || fail "control verbs as root"

# The same as a user without privileges (needs read access to the build tree),
# with a runtime directory of its own (where `uroce run` keeps its copy of
# the device tree) that goes at exit.
if id nobody >/dev/null 2>&1 && setpriv --reuid=nobody --regid=nogroup --clear-groups test -x "$UROCE" \
	&& setpriv --reuid=nobody --regid=nogroup --clear-groups test -r "$here/control_verbs.py"; then
	xdg=$(mktemp -d /tmp/uroce-pv-xdg.XXXXXX)
	on_exit "rm -rf '$xdg'"
	chown nobody:nogroup "$xdg"
	timeout 60 setpriv --reuid=nobody --regid=nogroup --clear-groups env XDG_RUNTIME_DIR="$xdg" \
		"$UROCE" run "$PY" "$here/control_verbs.py" uroce0 || fail "control verbs as nobody"
	ls "$xdg"/uroce-*/ns-*/sys >/dev/null || fail "uroce run as nobody kept no device tree in its runtime directory"
	pass "non-root user"
else
	echo "note: user nobody cannot reach the build tree; unprivileged run not checked"
fi
