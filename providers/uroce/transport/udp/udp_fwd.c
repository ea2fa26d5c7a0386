// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Forwarding between the processes of a device: a packet whose QP lives
 * in another process goes to that process's forwarding socket, with the
 * addresses and IP fields it arrived with ahead of it (struct
 * udp_fwd_hdr); a packet one process sends to another of the device goes
 * there directly (send_local).  docs/engine.md, "Many processes, one
 * device".
 */
#include <errno.h>
#include <unistd.h>
#include <sys/socket.h>

#include "transport/udp/udp.h"

/*
 * The forwarding socket: on ADDR, at a port no other socket may join and
 * no QP sends from.  A QP's TX socket (transport.h: ports 0xC000-0xFFFF)
 * binds with SO_REUSEPORT; had it the forwarding socket's port, it joined
 * its group and took a share of the packets forwarded to this process,
 * which nothing reads (issue 14: a QP of 8 x 64 ran out of retries while
 * every packet reached its owner's port).  So: no SO_REUSEPORT here, and a
 * port below 0xC000 (of the kernel's usual ephemeral range), else any.
 */
int udp_fwd_socket(int family, const uint8_t *ip16, int ifindex)
{
	int fd = udp_rx_socket(family, 0, 0), ret;

	if (fd < 0)
		return fd;
	ret = udp_bind_exclusive(fd, family, ip16, ifindex, (uint32_t)getpid() * 2654435761u);
	if (ret) {
		close(fd);
		return ret;
	}
	return fd;
}

/* H and IOV[0..IOVCNT) as one datagram to the forwarding socket at PORT. */
static int fwd_send(struct udp_xport *u, uint16_t port, struct udp_fwd_hdr *h,
		    const struct iovec *iov, unsigned int iovcnt)
{
	struct iovec v[UROCE_XPORT_MAX_IOV + 1];
	struct sockaddr_storage to;
	struct msghdr msg = { .msg_name = &to, .msg_iov = v, .msg_iovlen = iovcnt + 1 };

	if (!port)
		return -ENOENT;
	if (iovcnt > UROCE_XPORT_MAX_IOV)
		return -EINVAL;
	v[0] = (struct iovec){ h, sizeof(*h) };
	memcpy(v + 1, iov, iovcnt * sizeof(*iov));
	msg.msg_namelen = uroce_xport_sockaddr(u->rx_addr[0].family, u->rx_addr[0].ip, port,
					     u->ifindex, &to);
	return sendmsg(u->fwd_fd, &msg, MSG_DONTWAIT) < 0 ? -errno : 0;
}

int udp_forward(struct uroce_xport *x, uint16_t port, const struct uroce_rx *rx)
{
	struct udp_fwd_hdr h = {
		.family = rx->family, .src_port = rx->src_port, .dst_port = rx->dst_port,
		.tos = rx->tos, .ttl = UDP_FWD_TTL | rx->ttl,
	};
	struct iovec iov = { rx->buf, rx->len };

	memcpy(h.src_ip, rx->src_ip, 16);
	memcpy(h.dst_ip, rx->dst_ip, 16);
	return fwd_send(to_udp(x), port, &h, &iov, 1);
}

/*
 * Both directions of a flow between two processes of one device hash to
 * one socket of the SO_REUSEPORT group, and the process holding it must
 * pass the other's packets on; when it exits first, what was queued there
 * is lost.  So a packet for a process of this device goes straight to its
 * forwarding socket, marked FWD_DIRECT, with the IP fields the wire would
 * show from our sockets (TOS 0, the default TTL, no flow label).
 */
int udp_send_local(struct uroce_xport *x, uint16_t port, const struct uroce_txpkt *pkt)
{
	struct udp_xport *u = to_udp(x);
	const struct uroce_path *p = pkt->path;
	struct udp_fwd_hdr h = {
		.family = p->family, .src_port = p->sport, .dst_port = p->dport,
		.ttl = UDP_FWD_TTL | UDP_FWD_DIRECT | UDP_DEFAULT_TTL,
	};
	int i;

	for (i = 0; i < u->n_rx; i++)
		if (!memcmp(u->rx_addr[i].ip, p->dst, 16))
			break;
	if (i == u->n_rx)
		return -EADDRNOTAVAIL;
	memcpy(h.src_ip, p->src, 16);
	memcpy(h.dst_ip, p->dst, 16);
	return fwd_send(u, port, &h, pkt->iov, pkt->iovcnt);
}
