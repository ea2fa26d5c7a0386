#!/bin/bash
# The rdma CM beside the kernel's (docs/cm.md, "Beside the kernel's rdma
# CM"): a guest with rdma_rxe, rxe0 on eth0 and the kernel's rdma_cm, and
# a uroce device, so that under `uroce run` liburoce-preload.so muxes:
# each rdma_cm file is decided by its first address.
#   - in a second netns (uroce's device su0 on lo, rxe0 visible too, the
#     kernel's rdma_cm open beside ours): rping -V over su0 goes to
#     uroce's CM, with the kernel's id numbers;
#   - in the initial netns, where rxe0's addresses are: rping -V, client
#     and server both under `uroce run`, goes to the kernel's CM over
#     rxe0.  rxe holds *:4791 there, so no uroce device can be made in
#     that netns; su0's registry is linked into it (its ns-<cookie>
#     directory) so that the provider loads and the mux is on: uroce's
#     engine never starts there, rping makes no uroce QP.
#     Without the mux uroce's CM would refuse rxe0's address (ENODEV):
#     rping passing is the kernel's file having taken the fd over.
. "$(dirname "$0")/lib.sh"
sk_setup
use_private_registry
SK_G=skmux
GIP=$SK_NET.2
sk_guest $SK_G $GIP

N="ip netns exec un"
cookie='python3 -c "import socket, struct; s = socket.socket(); print(struct.unpack(\"Q\", s.getsockopt(socket.SOL_SOCKET, 71, 8))[0])"'
sk_check "guest: su0 on lo of a second netns, its registry linked into the initial one" "
ip netns add un && ip -n un link set lo up && $N uroce link add su0 netdev lo &&
ci=\$($cookie) && cu=\$($N $cookie) && d=\${UROCE_RUNDIR:-/run/uroce} &&
ln -s ns-\$cu \$d/ns-\$ci && uroce run ibv_devices | tee d.out && grep -qw su0 d.out &&
test -c /dev/infiniband/rdma_cm"

SK_IN=$N
P="uroce run rping -a 127.0.0.1 -p 18641 -V -C 20 -S 1000"
sk_pair "guest (netns): rping -V over su0 beside the kernel's rdma_cm (uroce's CM)" "" \
	"${P/rping/rping -s}" "${P/rping/rping -c -v}" '[ "$(grep -c "^ping data: " c.out)" = 20 ]'
SK_IN=
P="uroce run rping -a $GIP -p 18642 -V -C 20 -S 1000"
sk_pair "guest: rping -V over rxe0 under uroce run, su0 listed (the kernel's CM)" "" \
	"${P/rping/rping -s}" "${P/rping/rping -c -v}" '[ "$(grep -c "^ping data: " c.out)" = 20 ]'
sk_done
