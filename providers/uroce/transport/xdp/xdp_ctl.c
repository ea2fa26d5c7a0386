// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * The xdp transport's control operations: a connection's QPN entered in
 * the XDP program's map (steer) so that its frames come to this process's
 * sockets, the MACs of a path, and what the udp transport beneath does
 * for it: forwarding, source ports, local sends, multicast groups.
 */
#include <errno.h>
#include <string.h>
#include <bpf/bpf.h>

#include "transport/xdp/xdp_frame.h"
#include "transport/xdp/xdp_xport.h"

int xdp_forward(struct uroce_xport *x, uint16_t port, const struct uroce_rx *rx)
{
	struct xdp_xport *t = xx(x);

	return t->udp && t->udp->ops->forward ? t->udp->ops->forward(t->udp, port, rx) : -EOPNOTSUPP;
}

int xdp_steer(struct uroce_xport *x, uint32_t qpn, int family, const uint8_t *local,
	      const uint8_t *peer, uint16_t peer_port)
{
	struct xdp_xport *t = xx(x);
	uint32_t longest = t->rx_max_len;   /* the program's rule: xdp_maps.h */
	int ret = t->udp && t->udp->ops->steer ? t->udp->ops->steer(t->udp, qpn, family, local, peer,
							   peer_port) : 0;

	if (t->xsk && qpn < UROCE_XDP_MAX_QPNS &&
	    bpf_map_update_elem(t->prog.qpns_fd, &qpn, &longest, BPF_ANY) == 0)
		__atomic_fetch_or(&t->steered[qpn / 8], (uint8_t)(1u << (qpn % 8)), __ATOMIC_RELAXED);
	return ret;
}

int xdp_macs(struct uroce_xport *x, const struct uroce_path *path, uint8_t *smac,
	     uint8_t *dmac)
{
	struct xdp_xport *t = xx(x);
	bool local = false;
	int ret;

	if (!t->xsk)
		return -EOPNOTSUPP;
	ret = uroce_xdp_nl_resolve(t->nl, path->family, path->dst, 0, dmac, &local);
	if (ret)
		return ret;
	if (local)
		return -EHOSTUNREACH;
	memcpy(smac, t->mac, 6);
	return 0;
}

void xdp_unsteer(struct uroce_xport *x, uint32_t qpn)
{
	struct xdp_xport *t = xx(x);

	if (t->xsk && qpn < UROCE_XDP_MAX_QPNS &&
	    (t->steered[qpn / 8] & (1u << (qpn % 8)))) {
		bpf_map_delete_elem(t->prog.qpns_fd, &qpn);
		__atomic_fetch_and(&t->steered[qpn / 8], (uint8_t)~(1u << (qpn % 8)),
				   __ATOMIC_RELAXED);
	}
	if (t->udp && t->udp->ops->unsteer)
		t->udp->ops->unsteer(t->udp, qpn);
}

/* Frames carry any source port, but what takes the udp transport (the
 * host's own addresses, long packets) leaves from its socket: one port
 * for both, the ICRC covers it. */
int xdp_claim_port(struct uroce_xport *x, int family, const uint8_t *local, uint16_t want)
{
	struct xdp_xport *t = xx(x);

	return t->udp && t->udp->ops->claim_port ?
	       t->udp->ops->claim_port(t->udp, family, local, want) : want;
}

/* Packets for another process of this device, and multicast groups: the
 * udp transport beneath (the program passes QP 0xFFFFFF to the kernel). */
int xdp_send_local(struct uroce_xport *x, uint16_t port, const struct uroce_txpkt *pkt)
{
	struct xdp_xport *t = xx(x);

	return t->udp && t->udp->ops->send_local ? t->udp->ops->send_local(t->udp, port, pkt) :
		-EOPNOTSUPP;
}

int xdp_mcast_join(struct uroce_xport *x, int family, const uint8_t *group)
{
	struct xdp_xport *t = xx(x);

	return t->udp && t->udp->ops->mcast_join ? t->udp->ops->mcast_join(t->udp, family, group) :
		-EOPNOTSUPP;
}

void xdp_mcast_leave(struct uroce_xport *x, const uint8_t *group)
{
	struct xdp_xport *t = xx(x);

	if (t->udp && t->udp->ops->mcast_leave)
		t->udp->ops->mcast_leave(t->udp, group);
}
