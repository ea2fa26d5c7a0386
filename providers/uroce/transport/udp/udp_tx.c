// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * The udp transport's send path: a burst of packets in as few system calls
 * as the kernel allows.
 *
 * - A run of packets to one path (same source socket, destination, fields),
 *   all of one size but the last, which may be shorter, becomes one
 *   datagram with UDP_SEGMENT (GSO): the kernel cuts it into one UDP
 *   datagram per packet.  Each segment is a whole RoCE packet.
 * - The runs that leave through one source socket go in one sendmmsg.
 *
 * The IPv4 ID: Linux writes ID 0 on a DF datagram from an unconnected
 * socket and numbers GSO segments on from it, so segment k carries ID k.
 * A connected socket (udp_txconn.c) writes its next ID instead, one per
 * datagram, and its segments count on from that.  The engine computed
 * every ICRC for ID 0; each packet's is corrected here, in place (the CRC
 * is affine in the ID bits: wire/icrc.c).  IPv6 has no ID.  Pieces that
 * follow one another in memory go to the kernel as one iovec: the engine
 * writes small packets one after the other, so a run of them is one piece
 * however many packets it holds.
 */
#include <endian.h>
#include <errno.h>
#include <string.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <sys/socket.h>

#include "transport/udp/udp.h"
#include "wire/wire.h"

/* GSO bounds: segments per datagram (the kernel's UDP_MAX_SEGMENTS is 64
 * or 128) and the bytes of one UDP datagram. */
#define GSO_MAX_SEGS 64
#define GSO_MAX_BYTES 65000

/* The messages of one sendmmsg, per thread (send runs on many threads). */
static __thread struct {
	struct mmsghdr msgs[UDP_BURST];
	struct sockaddr_storage to[UDP_BURST];
	union {
		/* UDP_SEGMENT, the traffic class and the hop limit */
		char buf[CMSG_SPACE(sizeof(uint16_t)) + 2 * CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} ctl[UDP_BURST];
	unsigned int npkts[UDP_BURST];          /* packets in each message */
	struct iovec iov[UDP_BURST * UROCE_XPORT_MAX_IOV];
	uint32_t fixed[UDP_BURST];              /* what each packet's ICRC was XORed with */
} tb;

static bool same_socket(const struct uroce_path *a, const struct uroce_path *b)
{
	return a == b || (a->family == b->family && a->sport == b->sport &&
			  !memcmp(a->src, b->src, 16));
}

/* How many packets from PKTS[0..N) one GSO datagram can carry. */
static unsigned int run_length(struct udp_xport *u, const struct uroce_txpkt *pkts,
			       unsigned int n, unsigned int iov_room)
{
	uint32_t seg = pkts[0].len, bytes = seg;
	unsigned int k = 1, iovs = pkts[0].iovcnt;

	if (!__atomic_load_n(&u->gso, __ATOMIC_RELAXED) || seg > u->x.caps.max_payload)
		return 1;
	while (k < n && k < GSO_MAX_SEGS && uroce_path_same(pkts[k].path, pkts[0].path) &&
	       pkts[k].len <= seg && bytes + pkts[k].len <= GSO_MAX_BYTES &&
	       iovs + pkts[k].iovcnt <= iov_room) {
		bytes += pkts[k].len;
		iovs += pkts[k].iovcnt;
		if (pkts[k++].len < seg)
			break;      /* only the last segment may be shorter */
	}
	return k;
}

/* XOR the ICRC of P (the last 4 bytes of its last iovec) with X. */
static void icrc_xor(const struct uroce_txpkt *p, uint32_t x)
{
	const struct iovec *last = &p->iov[p->iovcnt - 1];
	uint8_t *at = (uint8_t *)last->iov_base + last->iov_len - 4;
	uint32_t crc;

	memcpy(&crc, at, 4);
	crc = htole32(le32toh(crc) ^ x);
	memcpy(at, &crc, 4);
}

/* Correct P's ICRC for the IPv4 ID it leaves with; *FIXED: by what. */
static void fix_id(const struct uroce_txpkt *p, uint16_t id, uint32_t *fixed)
{
	*fixed = 0;
	if (id && p->path->family == AF_INET) {
		*fixed = roce_icrc_id_fix(p->len, id);
		icrc_xor(p, *fixed);
	}
}

/* Append packet P, which leaves with ID, to IOV[0..*USED), joining pieces
 * that follow one another in memory; *FIXED: what its ICRC was corrected
 * by. */
static void put_segment(const struct uroce_txpkt *p, uint16_t id, struct iovec *iov,
			unsigned int *used, uint32_t *fixed)
{
	fix_id(p, id, fixed);
	for (uint32_t i = 0; i < p->iovcnt; i++) {
		struct iovec *prev = *used ? &iov[*used - 1] : NULL;

		if (prev && (uint8_t *)prev->iov_base + prev->iov_len == p->iov[i].iov_base)
			prev->iov_len += p->iov[i].iov_len;
		else
			iov[(*used)++] = p->iov[i];
	}
}

/* Append a control message to H, whose buffer is large enough. */
static void put_cmsg(struct msghdr *h, int level, int type, const void *data, size_t len)
{
	struct cmsghdr *c = (struct cmsghdr *)((char *)h->msg_control + h->msg_controllen);

	c->cmsg_level = level;
	c->cmsg_type = type;
	c->cmsg_len = CMSG_LEN(len);
	memcpy(CMSG_DATA(c), data, len);
	h->msg_controllen += CMSG_SPACE(len);
}

/* The GRH's traffic class and hop limit are the IP header's DSCP/ECN and
 * TTL (IBTA A17.4.5.1), as rxe writes them; hop limit 0 leaves the
 * socket's default TTL, as the xdp transport's frames do. */
static void put_ip_fields(struct msghdr *h, const struct uroce_path *path)
{
	bool v4 = path->family == AF_INET;
	int tclass = path->tclass, hops = path->hop_limit;

	if (tclass)
		put_cmsg(h, v4 ? IPPROTO_IP : IPPROTO_IPV6, v4 ? IP_TOS : IPV6_TCLASS, &tclass,
			 sizeof(tclass));
	if (hops)
		put_cmsg(h, v4 ? IPPROTO_IP : IPPROTO_IPV6, v4 ? IP_TTL : IPV6_HOPLIMIT, &hops,
			 sizeof(hops));
}

/* Message M of tb: packets PKTS[0..RUN) as one datagram with IPv4 ID
 * (CONNECTED: its socket has the destination and the IP fields; any
 * control message but UDP_SEGMENT would have the kernel look the route up
 * again), their iovecs from IOV on, their ICRC corrections in
 * FIXED[0..RUN).  Returns the iovecs used. */
static unsigned int build_msg(struct udp_xport *u, unsigned int m, const struct uroce_txpkt *pkts,
			      unsigned int run, struct iovec *iov, uint32_t *fixed, uint16_t id,
			      bool connected)
{
	const struct uroce_path *path = pkts[0].path;
	struct msghdr *h = &tb.msgs[m].msg_hdr;
	unsigned int used = 0;

	memset(h, 0, sizeof(*h));
	if (!connected) {
		h->msg_name = &tb.to[m];
		h->msg_namelen = uroce_xport_sockaddr(path->family, path->dst, path->dport,
						    u->ifindex, &tb.to[m]);
	}
	h->msg_control = tb.ctl[m].buf;
	if (!connected)
		put_ip_fields(h, path);
	tb.npkts[m] = run;
	if (run == 1) {
		fix_id(&pkts[0], id, &fixed[0]);
		h->msg_iov = (struct iovec *)pkts[0].iov;
		h->msg_iovlen = pkts[0].iovcnt;
		if (!h->msg_controllen)
			h->msg_control = NULL;
		return 0;
	}
	for (unsigned int k = 0; k < run; k++)
		put_segment(&pkts[k], (uint16_t)(id + k), iov, &used, &fixed[k]);
	h->msg_iov = iov;
	h->msg_iovlen = used;
	/* UDP_SEGMENT: cut at the first packet's size (IBTA: each a whole packet). */
	uint16_t seg = (uint16_t)pkts[0].len;

	put_cmsg(h, SOL_UDP, UDP_SEGMENT, &seg, sizeof(seg));
	return used;
}

/* GSO refused by this path (no checksum offload, segment beyond the MTU):
 * send without it from now on. */
static bool gso_refused(struct udp_xport *u, int err, unsigned int m)
{
	bool had_gso = false;

	for (unsigned int i = 0; i < m; i++)
		had_gso |= tb.npkts[i] > 1;
	if (!had_gso || (err != -EIO && err != -EINVAL && err != -EMSGSIZE && err != -ENOTSUP))
		return false;
	__atomic_store_n(&u->gso, false, __ATOMIC_RELAXED);
	__atomic_store_n(&u->x.caps.tx_segmentation, false, __ATOMIC_RELAXED);
	return true;
}

/* Packets [FROM, TO) were not sent: their ICRCs back to what the engine
 * wrote (ID 0), for a send that cuts them into datagrams afresh. */
static void unfix(const struct uroce_txpkt *pkts, unsigned int from, unsigned int to)
{
	for (unsigned int k = from; k < to; k++)
		if (tb.fixed[k])
			icrc_xor(&pkts[k], tb.fixed[k]);
}

int udp_send(struct uroce_xport *x, const struct uroce_txpkt *pkts, unsigned int n)
{
	struct udp_xport *u = to_udp(x);
	unsigned int sent = 0;

	bool unconnected = false;    /* a connected send failed: the rest go without */
	int send_err;

	if (n > UDP_BURST)
		n = UDP_BURST;

	while (sent < n) {
		const struct uroce_path *p0 = pkts[sent].path;
		struct udp_txconn *c = unconnected ? NULL : udp_txconn_lock(u, p0);
		int fd = c ? udp_txconn_fd(c) : udp_tx_socket(u, p0->family, p0->src, p0->sport), r;
		uint16_t id = c ? udp_txconn_next_id(c) : 0;
		unsigned int m = 0, i = sent, iovs = 0;

		if (fd < 0)
			return sent ? (int)sent : fd;
		/* The datagrams that leave through this socket: a connected
		 * one's take an ID each. */
		while (i < n && (c ? uroce_path_same(pkts[i].path, p0) : same_socket(pkts[i].path, p0))) {
			unsigned int room = sizeof(tb.iov) / sizeof(tb.iov[0]) - iovs;
			unsigned int run = run_length(u, pkts + i, n - i, room);

			iovs += build_msg(u, m, pkts + i, run, tb.iov + iovs, tb.fixed + i,
					  c ? (uint16_t)(id + m) : 0, c != NULL);
			m++;
			i += run;
		}
		if (m == 1)
			r = sendmsg(fd, &tb.msgs[0].msg_hdr, 0) < 0 ? -1 : 1;
		else
			r = sendmmsg(fd, tb.msgs, m, 0);
		send_err = r < (int)m ? errno : 0;
		if (c)
			udp_txconn_unlock(c, r > 0 ? (unsigned int)r : 0, r < (int)m);
		for (int k = 0; k < r; k++)
			sent += tb.npkts[k];
		if (r < (int)m)
			unfix(pkts, sent, i);
		/* Anything but a full buffer (a peer's ICMP error, reported on
		 * the connected socket's next send): the shared socket sends
		 * what is left, as before. */
		if (c && send_err && send_err != EAGAIN && send_err != ENOBUFS) {
			unconnected = true;
			continue;
		}
		if (r < 0) {
			int err = -send_err;

			if (gso_refused(u, err, m))
				continue;   /* again, one datagram per packet */
			return sent ? (int)sent : err;
		}
		if ((unsigned int)r < m)
			return (int)sent;
	}
	return (int)sent;
}
