#!/bin/bash
# uroce on a stock kernel that has RDMA modules but uses none: a guest on
# Debian 12's kernel booted with --no-rxe (the rxe-vm harness), uroce
# installed in it (docs/stock-kernel.md).  Nothing RDMA is loaded at boot;
# the first netlink socket and rdma_cm request load ib_core and rdma_ucm.
#   - `uroce link add` on lo works, and under `uroce run` ibv_devices,
#     ibv_devinfo and `rdma link show` list the device next to the kernel's
#     (empty) answer, and so does ibv_devices after eval "$(uroce env)";
#   - ibv_rc_pingpong --chk and rping -V (uroce's CM, on a kernel whose
#     rdma_ucm has its own rdma_cm device) over lo, data checked.
. "$(dirname "$0")/lib.sh"
sk_setup
SK_G=sknorxe
sk_guest $SK_G $SK_NET.2 --no-rxe

sk_check "guest: no RDMA module at boot; uroce link add on lo" '
grep -q "^ib_core " /proc/modules && { echo "ib_core is loaded at boot"; exit 1; }
uroce link add sn0 netdev lo && uroce link show | grep -w sn0'

sk_check "guest: uroce run ibv_devices lists sn0; ib_core loaded on demand" '
uroce run ibv_devices | tee /tmp/d.out
grep -qw sn0 /tmp/d.out && grep -q "^ib_core " /proc/modules'

sk_check "guest: after eval \"\$(uroce env)\" (the README's CI recipe), ibv_devices lists sn0" '
eval "$(uroce env)"; ibv_devices | tee /tmp/e.out; grep -qw sn0 /tmp/e.out'

sk_check "guest: uroce run ibv_devinfo -d sn0" '
uroce run ibv_devinfo -d sn0 | tee /tmp/i.out; grep -q "PORT_ACTIVE" /tmp/i.out'

sk_check "guest: uroce run rdma link show lists sn0" '
uroce run rdma link show | tee /tmp/l.out; grep -q "^link sn0/1 " /tmp/l.out'

P="uroce run ibv_rc_pingpong -d sn0 -g \$g -c -n 100 -s 4096 -p 18620"
sk_pair "guest: ibv_rc_pingpong --chk over sn0 on lo" "$(sk_lo_gid sn0)" "$P" "$P 127.0.0.1" \
	'grep -q "iters in" c.out'
P="uroce run rping -a 127.0.0.1 -p 18621 -V -C 20 -S 1000"
sk_pair "guest: rping -V over sn0 on lo (uroce CM), data verified; rdma_ucm loaded on demand" \
	"" "${P/rping/rping -s}" "${P/rping/rping -c -v}" \
	'[ "$(grep -c "^ping data: " c.out)" = 20 ] && grep -q "^rdma_ucm " /proc/modules'
sk_done
