# A provider loaded under the wrong libibverbs must be refused loudly and
# use nothing (sourced; needs here, src, fail and pass).
#
# devices ROOT UROCE PROVIDER [PREFIX]: in ROOT ("/" or a chroot, through
# enter.sh: a private namespace), a device r0 on lo, then ibv_devices under
# `UROCE run` with UROCE_PROVIDER=PROVIDER; with PREFIX (an rdma-core built
# by rdma_core.sh), that release's ibv_devices and libraries.  Prints its
# output and then rc=<its exit status>.
devices() {
	local libs=
	[ -z "${4:-}" ] || libs="PATH=$4/bin:\$PATH LD_LIBRARY_PATH=$4/lib"
	"$here/enter.sh" "$1" "$src" -- bash -c \
		"$2 link add r0 netdev lo >/dev/null && $libs UROCE_PROVIDER=$3 timeout 60 $2 run ibv_devices 2>&1; echo rc=\$?"
}

# check_refused WHAT OUTPUT RE: OUTPUT (of devices) shows a clean exit, no
# device r0, and exactly one line matching RE (the refusal, saying why).
check_refused() {
	local what=$1 out=$2 want=$3
	echo "$out" | sed "s/^/  [$what] /"
	grep -q '^rc=0$' <<<"$out" || fail "$what: ibv_devices did not exit cleanly"
	grep -Eq '^ +r0 ' <<<"$out" && fail "$what: the device was used by a mismatched provider"
	[ "$(grep -c "$want" <<<"$out")" = 1 ] || fail "$what: no one-line refusal matching '$want'"
	pass "$what refused: $(grep "$want" <<<"$out" | cut -c1-200)"
}
