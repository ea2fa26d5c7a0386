#!/bin/bash
# A uroce built for one rdma-core release, loaded under another release's
# libibverbs (built from source, rdma_core.sh), does not register and says
# why in one line; no device is usable through it:
#   - the host's build (rdma-core 44) under 39's libibverbs, and the build
#     for 39 under the host's: same PABI 34, ibv_qp_ex 344 vs 352 bytes:
#     our ABI guard refuses;
#   - the build for 61 under 63's and the one for 63 under 61's: both PABI
#     59, verbs_context_ops and verbs_context differ: the guard refuses;
#   - the build for 61 under 64's (PABI 64), its file named as 64 looks
#     for it: the dynamic linker refuses (no IBVERBS_PRIVATE_59 there).
#
#   guard.sh HOST_BUILD
set -euo pipefail
host_build=$(realpath "$1")
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (namespaces)"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }
pass() { echo "ok: $*"; }
. "$here/refused.sh"
# uroce for each release (the 64 build is made but not used).
declare -A P B
for v in 39 61 63 64; do
	rc=0
	out=$("$here/uroce_for.sh" $v.0 "$host_build") || rc=$?
	[ $rc -eq 77 ] && exit 77
	[ $rc -eq 0 ] || fail "no uroce build for rdma-core $v.0"
	read -r "P[$v]" "B[$v]" <<<"$out"
done
p39=${P[39]} p61=${P[61]} p63=${P[63]} p64=${P[64]} b39=${B[39]} b61=${B[61]} b63=${B[63]}
work=$(mktemp -d /var/tmp/uroce-guard.XXXXXX)   # not /tmp: enter.sh keeps the host's
trap 'rm -rf "$work"' EXIT
# as the other release's libibverbs names a provider: liburoce-rdmav<PABI>.so
cp "$host_build/providers/uroce/liburoce-rdmav34.so" "$work/h44-rdmav34.so"
cp "$b39/providers/uroce/liburoce-rdmav34.so" "$work/b39-rdmav34.so"
cp "$b61/providers/uroce/liburoce-rdmav59.so" "$work/b61-rdmav59.so"
cp "$b61/providers/uroce/liburoce-rdmav59.so" "$work/b61-rdmav64.so"
cp "$b63/providers/uroce/liburoce-rdmav59.so" "$work/b63-rdmav59.so"

check_refused "rdma-core 44 build under 39" "$(devices / "$host_build/cli/uroce" "$work/h44" "$p39")" \
	"^uroce: not registering: built for rdma-core 44.* libibverbs is rdma-core 39\.0 "
check_refused "rdma-core 39 build under the host's 44" "$(devices / "$b39/cli/uroce" "$work/b39")" \
	"^uroce: not registering: built for rdma-core 39.* libibverbs is rdma-core 44\.0 "
check_refused "rdma-core 61 build under 63" "$(devices / "$b61/cli/uroce" "$work/b61" "$p63")" \
	"^uroce: not registering: built for rdma-core 61.* libibverbs is rdma-core 63\.0 "
check_refused "rdma-core 63 build under 61" "$(devices / "$b63/cli/uroce" "$work/b63" "$p61")" \
	"^uroce: not registering: built for rdma-core 63.* libibverbs is rdma-core 61\.0 "
check_refused "rdma-core 61 build under 64" "$(devices / "$b61/cli/uroce" "$work/b61" "$p64")" \
	"IBVERBS_PRIVATE_59' not found"
# And each, under its own release, is used (the checks above can fail).
out=$(devices / "$b61/cli/uroce" "$work/b61" "$p61")
grep -Eq '^ +r0 ' <<<"$out" || { echo "$out"; fail "the build for 61 under 61's libibverbs shows no device"; }
pass "the build for 61 under 61's own libibverbs shows r0"
