# The stock_kernel suite's guests (sourced, not run): QEMU guests of the
# rxe-vm harness (../shared/rxe-vm, README there) running Debian 12's own
# kernel, with uroce installed from this build.  docs/stock-kernel.md.
#
# sk_setup: skips with the reason when something is missing (root, QEMU,
#   the harness); builds the harness's kernel and rootfs if they are not
#   cached; makes a bridge in a network namespace of this test's own
#   ($SK_NS, host address $SK_HOST 10.79.N.1) and the install tree.
# sk_guest NAME IP [--no-rxe]: boots an agent guest, stopped at exit.
# sk_exec NAME CMD: runs CMD (sh) in guest NAME; its output on stdout,
#   its exit code as ours.  uroce is installed in every guest.
. "$(dirname "${BASH_SOURCE[0]}")/../lib/common.sh"

sk_setup() {
	need_root
	command -v qemu-system-x86_64 >/dev/null || skip "needs qemu-system-x86 (scripts/deps.sh installs it)"
	local src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd) d
	for d in "${RXEVM_DIR:-}" "$src/../shared/rxe-vm" /work/shared/rxe-vm; do
		[ -n "$d" ] && [ -x "$d/run-guest.sh" ] && { SK_HARNESS=$(cd "$d" && pwd); break; }
	done
	[ -n "${SK_HARNESS:-}" ] || skip "no rxe-vm harness (set RXEVM_DIR, or put it at ../shared/rxe-vm)"
	export RXEVM_CACHE=${RXEVM_CACHE:-/var/cache/rxe-vm}
	if [ ! -f "$RXEVM_CACHE/vmlinuz" ] || [ ! -f "$RXEVM_CACHE/initrd.cpio" ]; then
		"$SK_HARNESS/build.sh" >"/tmp/uroce-sk-build.$$.log" 2>&1 ||
			{ tail -5 "/tmp/uroce-sk-build.$$.log"; rm -f "/tmp/uroce-sk-build.$$.log";
			  skip "the harness could not build its guest (build.sh needs Debian's package registry)"; }
		rm -f "/tmp/uroce-sk-build.$$.log"
	fi
	local id net
	id=$(uniq_id)
	net=$(( 0x$id % 200 + 20 ))
	SK_TMP=$(mktemp -d /tmp/uroce-sk.XXXXXX)
	note_created dir "$SK_TMP"
	on_exit "rm -rf '$SK_TMP'"
	export RXEVM_NETNS=uroceK$id RXEVM_BRIDGE=urk$id RXEVM_HOST_IP=10.79.$net.1/24
	export RXEVM_RUN=$SK_TMP/run
	SK_NS=$RXEVM_NETNS SK_HOST=10.79.$net.1 SK_NET=10.79.$net
	note_created netns "$SK_NS"
	on_exit "'$SK_HARNESS/net.sh' down >/dev/null 2>&1"
	"$SK_HARNESS/net.sh" up >/dev/null
	ip -n "$SK_NS" link set lo up
	# The build as a package would lay it out; the guest copies it to /.
	# It has no ldconfig: the libraries it lacks go in its libdir.
	local bdir=$(dirname "$(dirname "$UROCE")") lib f
	meson install -C "$bdir" --destdir "$SK_TMP/root" --no-rebuild --quiet >/dev/null
	mkdir -p "$SK_TMP/root/usr/lib/x86_64-linux-gnu"
	for f in $(find "$SK_TMP/root" -type f \( -name '*.so' -o -perm -u+x \)); do
		ldd "$f" 2>/dev/null | awk '$3 ~ /^\// { print $3 }'
	done | sort -u | while read -r lib; do
		[ -e "$RXEVM_CACHE/rootfs/usr/lib/x86_64-linux-gnu/${lib##*/}" ] ||
			[ -e "$RXEVM_CACHE/rootfs/lib/x86_64-linux-gnu/${lib##*/}" ] ||
			cp -L "$lib" "$SK_TMP/root/usr/lib/x86_64-linux-gnu/"
	done
}

sk_guest() {
	local name=$1 ip=$2
	shift 2
	on_exit "'$SK_HARNESS/run-guest.sh' --stop '$name' >/dev/null 2>&1"
	"$SK_HARNESS/run-guest.sh" --bg --name "$name" --ip "$ip/24" --host-dir "$SK_TMP/root" \
		--ready-timeout 300 "$@" >"$SK_TMP/$name.boot" 2>&1 ||
		{ cat "$SK_TMP/$name.boot"; fail "guest $name did not boot"; }
	sk_exec "$name" 'cp -a /mnt/host/. / && uroce link show' >/dev/null ||
		fail "guest $name: installing uroce failed"
}

sk_exec() {
	"$SK_HARNESS/run-guest.sh" --exec "$1" "$2" --timeout "${SK_TIMEOUT:-240}"
}

# sk_check WHAT CMD: run guest command CMD (sk_exec on $SK_G) and pass or
# fail case WHAT on its exit code, printing its output when it fails.
sk_check() {
	local out rc=0
	out=$(sk_exec "$SK_G" "$2" 2>&1) || rc=$?
	if [ $rc != 0 ]; then
		echo "--- $SK_G: $2"
		echo "$out"
		SK_FAILED+=("$1")
		echo "FAIL: $1 (exit $rc)"
		return 1
	fi
	pass "$1"
}
SK_FAILED=()
sk_done() {
	[ ${#SK_FAILED[@]} = 0 ] || fail "${#SK_FAILED[@]} case(s) failed: ${SK_FAILED[*]}"
}

# sk_pair WHAT SETUP SERVER CLIENT [CHECK]: case WHAT runs, in guest $SK_G
# after the shell lines SETUP, SERVER in the background and CLIENT (tried
# again, a second apart, while the server is up and the client fails: it
# may not listen yet).  Both must exit 0 and print no error, and CHECK
# (guest shell, on /tmp/s.out and /tmp/c.out) must hold.  SK_IN, if set,
# goes before each (ip netns exec NS: busybox's timeout would run its own
# ip applet).
sk_pair() {
	sk_check "$1" "cd /tmp
$2
${SK_IN:-} timeout 120 $3 >s.out 2>&1 & s=\$!
rc=1
for i in \$(seq 30); do
	${SK_IN:-} timeout 60 $4 >c.out 2>&1 && { rc=0; break; }
	kill -0 \$s 2>/dev/null || break
	sleep 1
done
wait \$s || rc=1
cat s.out; tail -4 c.out
[ \$rc = 0 ] && ! grep -Eiq 'error|fail|couldn|mismatch|invalid' s.out c.out && ${5:-:}"
}

# A guest shell line: g= the index of the GID ::ffff:127.0.0.1 of uroce
# device $1, seen under prefix $2 (ip netns exec NS, or nothing).
sk_lo_gid() {
	echo "g=\$(${2:-} uroce run ibv_devinfo -v -d $1 | sed -n 's/.*GID\[ *\([0-9]*\)\]:[[:space:]]*::ffff:127.0.0.1,.*/\1/p' | head -1)
[ -n \"\$g\" ] || { echo 'no GID 127.0.0.1 on $1'; exit 1; }"
}
