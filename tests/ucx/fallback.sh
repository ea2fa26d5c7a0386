#!/bin/bash
# What UCX cannot use on uroce, and that it says so instead of crashing:
# the hardware-specific transports (rc_mlx5, dc_mlx5, ud_mlx5: they drive a
# ConnectX's queues directly, not through verbs) are not offered and are
# refused with an error; the transport aliases that prefer them (rc, ud)
# fall back to rc_verbs/ud_verbs.  On-demand paging works: with
# UCX_IB_REG_METHODS=odp alone (no fallback method) UCX registers one
# implicit ODP MR and uses its keys for everything, and the run must pass
# and exit cleanly.
. "$(dirname "$0")/../lib/common.sh"
. "$(dirname "$0")/lib.sh"
need_root
need_ucx
use_private_registry
id=$(uniq_id)
NS_LO=uroceX${id}f
make_ns $NS_LO
add_dev $UDEV lo $NS_LO

info=$(in_ns $NS_LO ucx_info -d 2>&1) || fail "ucx_info -d"
tls=$(echo "$info" | awk '/Transport:/ { t = $3 } /Device: '$UDEV':1/ { print t }' | sort | tr '\n' ' ')
[ "$tls" = "rc_verbs ud_verbs " ] || fail "ucx_info -d offers '$tls' on $UDEV:1 (want rc_verbs ud_verbs)"
pass "ucx_info -d: $UDEV:1 offers $tls"

for tl in rc_mlx5 dc_mlx5 ud_mlx5; do
	perf_refused lo $NS_LO "Cannot use $tl/$UDEV:1" -- -t am_lat -x $tl -d $UDEV:1 -n 10
done
export UCX_NET_DEVICES=$UDEV:1
UCX_TLS=rc_x,ud_x,self perf_refused lo $NS_LO "Destination is unreachable" -- -t tag_lat -n 10
# Three runs (six processes): UCX 1.13 segfaulted at exit in
# uct_ib_md_close for each process whose implicit ODP lkey was odd
# (docs/design.md, Memory regions), so a provider making odd keys again
# fails here with near certainty (1 - 2^-6).
for i in 1 2 3; do
	UCX_TLS=rc_verbs,ud_verbs,self UCX_IB_REG_METHODS=odp \
		perf lo $NS_LO $NS_LO 127.0.0.1 20 -- -t tag_lat -n 20
done
UCX_TLS=rc,ud,self perf lo $NS_LO $NS_LO 127.0.0.1 100 -- -t tag_lat -n 200 -w 10
