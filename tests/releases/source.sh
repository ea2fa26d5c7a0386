#!/bin/bash
# uroce on an rdma-core release built from its own source (rdma_core.sh),
# not from a distribution's packages:
#
#   source.sh VERSION HOST_BUILD
#
# uroce is built against it (uroce_for.sh); its provider must be named for,
# and bound to, the IBVERBS_PRIVATE_<N> that release's libibverbs defines
# (readelf on both).  Then that release's own unmodified programs run over
# a uroce device on lo with that release's libibverbs and librdmacm:
# ibv_rc_pingpong and ibv_ud_pingpong with --chk, ibv_xsrq_pingpong, and
# through uroce's CM rping -V and udaddy.  Skips (77) with the reason when
# the source or a build tool is missing.  Root (namespaces).
set -euo pipefail
ver=$1 host_build=$(realpath "$2")
here=$(cd "$(dirname "$0")" && pwd)
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (network namespaces, /dev/infiniband nodes)"; exit 77; }
rc=0
out=$("$here/uroce_for.sh" "$ver" "$host_build") || rc=$?
[ $rc -eq 77 ] && exit 77
[ $rc -eq 0 ] || { echo "FAIL [$ver]: no uroce build for rdma-core $ver"; exit 1; }
read -r prefix build <<<"$out"
export UROCE=$build/cli/uroce
. "$here/../lib/common.sh"
. "$here/../lib/pairs.sh"
. "$here/../cm/lib.sh"
# A namespace of its own: the five releases run at once, and their builds
# must not share the host's 127.0.0.1:4791 (one CI run's first QP was
# refused EADDRINUSE there while another release's test ran).
isolate_netns "$@"
fail() { echo "FAIL [$ver]: $*" >&2; exit 1; }
pass() { echo "ok [$ver]: $*"; }

# The provider ABI: what this release's libibverbs defines, our provider's
# file name and the version its private symbols are bound to.
lib=$prefix/lib/libibverbs.so.1
defined=$(readelf -V --wide "$lib" | grep -o 'IBVERBS_PRIVATE_[0-9]*' | sort -u)
[ "$(wc -l <<<"$defined")" = 1 ] || fail "$lib defines '$defined', not one IBVERBS_PRIVATE_N"
n=${defined#IBVERBS_PRIVATE_}
so=$build/providers/uroce/liburoce-rdmav$n.so
[ -f "$so" ] || fail "no $so: $(ls "$build"/providers/uroce/liburoce-rdmav*.so)"
needed=$(readelf -V --wide "$so" | grep -o 'IBVERBS_PRIVATE_[0-9]*' | sort -u)
[ "$needed" = "$defined" ] || fail "$so needs '$needed', the release defines $defined"
bound=$(readelf --dyn-syms --wide "$so" | grep -oE '[A-Za-z0-9_]+@IBVERBS_PRIVATE_[0-9]+' | sort)
[ "$(grep -c "@$defined\$" <<<"$bound")" = 4 ] && ! grep -qv "@$defined\$" <<<"$bound" ||
	fail "private symbols bound: $(echo $bound)"
pass "provider liburoce-rdmav$n.so binds $(echo ${bound//@$defined/}) to $defined, as $lib defines"

# From here on every program is the release's own, with its libraries.
export PATH=$prefix/bin:$PATH LD_LIBRARY_PATH=$prefix/lib
for p in ibv_rc_pingpong ibv_ud_pingpong ibv_xsrq_pingpong rping udaddy; do
	[ "$(command -v $p)" = "$prefix/bin/$p" ] || fail "$p is not the release's own"
	libs=$(ldd "$prefix/bin/$p")
	grep -q "=> $prefix/lib/libibverbs.so.1 " <<<"$libs" ||
		fail "$p does not load $prefix/lib/libibverbs.so.1"
done

use_private_registry
add_dev lo0 lo
lg=$(gid_of "" lo0 127.0.0.1)
[ -n "$lg" ] || fail "no IPv4 GID on lo0"
set -- lo "" lo0 $lg "" lo0 $lg 127.0.0.1
pair "$@" -- ibv_rc_pingpong --chk -n 500 -s 4096
pair "$@" -- ibv_ud_pingpong --chk -n 500 -s 1024
# ibv_xsrq_pingpong opens its XRC domain through /tmp/xrc_domain and leaves it.
remove_if_new /tmp/xrc_domain
pair "$@" -- ibv_xsrq_pingpong -n 200 -s 4096 -m 1024

# librdmacm's programs, through uroce's CM, in a namespace of their own.
ns=i11cmR$(uniq_id)
make_ns $ns
add_dev lo1 lo $ns
port=$((7000 + RANDOM % 1000))
cm_pair "rping" $ns $ns -- rping -s -a 127.0.0.1 -p $port -v -V -C 100 -S 4000 \
	-- rping -c -a 127.0.0.1 -p $port -v -V -C 100 -S 4000
pings=$(grep -c 'ping data' "$CM_CLI_LOG" || true)
[ -z "$RPING_CM_RACE" ] || pings=$(grep -c 'server ping data' "$CM_SRV_LOG" || true)
[ "$pings" -eq 100 ] || { cat "$CM_CLI_LOG"; fail "rping: $pings pings, not 100"; }
pass "rping -V: 100 verified pings of 4000 bytes"
cm_pair "udaddy" $ns $ns -- udaddy -b 127.0.0.1 -C 10 -- udaddy -s 127.0.0.1 -C 10
