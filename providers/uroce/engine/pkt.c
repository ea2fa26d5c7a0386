// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Engine <-> wire: RoCEv2 packets through the device's transport.  Sending:
 * the wire module writes the headers, the payload goes out from the
 * application's buffers (gather), the ICRC is computed for the IP/UDP
 * fields the kernel will write.  Receiving: parse, then check the ICRC
 * with the addresses the socket reports (the IPv4 ID is solved for, as a
 * UDP socket does not show it: wire/icrc.c).  Both directions can be
 * traced to a pcap file.
 */
#include <endian.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "wire/wire.h"
#include "knob/knob.h"
#include "engine/engine_int.h"
#include "engine/pkt.h"
#include "trace/trace.h"

/* The wire's reasons and the counters for them are in the same order. */
_Static_assert(UROCE_STAT_DROP_ICRC - UROCE_STAT_DROP_TRUNCATED == ROCE_E_ICRC - ROCE_E_TRUNCATED,
	       "drop counters follow enum roce_reason");

int uroce_pkt_opcode(enum ibv_qp_type qp_type, enum roce_kind kind, bool first, bool last,
		     bool imm, bool inv)
{
	return roce_opcode(uroce_pkt_transport(qp_type), kind, first, last, imm, inv);
}

/* ---- tracing: one file per process, shared by its devices ---------------- */

static pthread_mutex_t trace_lock = PTHREAD_MUTEX_INITIALIZER;
static struct roce_pcap *trace;
static int trace_users;

static uint64_t trace_limit(void)
{
	return uroce_knob_num(UROCE_KNOB_PCAP_MAX);
}

/* $UROCE_PCAP, or NULL when it is unset or empty. */
static const char *pcap_path(void)
{
	return uroce_knob_str(UROCE_KNOB_PCAP);
}

bool uroce_pkt_traced(void)
{
	return pcap_path() || uroce_tracing;
}

void uroce_pkt_trace_open(struct uroce_engine *eng)
{
	const char *path = pcap_path();
	char file[4096];
	const char *pp;

	(void)eng;
	if (!path)
		return;
	pthread_mutex_lock(&trace_lock);
	if (trace_users++ == 0) {
		/* "%p": the process ID, so that both ends of a test can trace. */
		pp = strstr(path, "%p");
		if (pp)
			snprintf(file, sizeof(file), "%.*s%d%s", (int)(pp - path), path,
				 (int)getpid(), pp + 2);
		else
			snprintf(file, sizeof(file), "%s", path);
		trace = roce_pcap_open(file, trace_limit());
		if (!trace)
			fprintf(stderr, "uroce: cannot write the packet trace %s: %s\n", file,
				strerror(errno));
	}
	pthread_mutex_unlock(&trace_lock);
}

void uroce_pkt_trace_close(struct uroce_engine *eng)
{
	(void)eng;
	if (!pcap_path())
		return;
	pthread_mutex_lock(&trace_lock);
	if (trace_users > 0 && --trace_users == 0 && trace) {
		uint64_t written, skipped;

		roce_pcap_stats(trace, &written, &skipped);
		if (skipped)
			fprintf(stderr, "uroce: packet trace full: %llu packets written, %llu left out "
				"(UROCE_PCAP_MAX)\n", (unsigned long long)written,
				(unsigned long long)skipped);
		roce_pcap_close(trace);
		trace = NULL;
	}
	pthread_mutex_unlock(&trace_lock);
}

/* ---- send ---------------------------------------------------------------- */

/* Packets queued by this thread: at most a transport burst.  Their
 * headers, pads and ICRCs, and the whole of a packet whose payload is at
 * most TX_WHOLE_MAX bytes, are written one after the other into BYTES:
 * a run of small packets is then one piece of memory, which the kernel
 * copies in one go (ib_write_bw -s 64 handed it 3-4 pieces a packet, ~200
 * per GSO datagram). */
#define TXQ_MAX 64
#define TX_WHOLE_MAX 256
#define TX_SLOT_MAX (ROCE_MAX_HDR + TX_WHOLE_MAX + 8)
static __thread struct tx_queue {
	struct uroce_engine *eng;
	int depth;
	uint64_t now_ns;             /* the batch's clock, read at first use; 0: not yet */
	unsigned int n;
	uint32_t flushes;            /* flushes so far (uroce_tx_position) */
	size_t used;                 /* of bytes */
	struct uroce_txpkt pkts[TXQ_MAX];
	struct uroce_path paths[TXQ_MAX];
	uint8_t bytes[TXQ_MAX * TX_SLOT_MAX];
	struct iovec iov[TXQ_MAX][UROCE_MAX_SGE + 2];
} txq;

/* txq's address, for one call of a function below.  In a shared library
 * it is a call (__tls_get_addr), which GCC repeats at every use of txq
 * even through a local pointer, unless the pointer is opaque to it: the
 * send path made about 50 such calls a round trip (callgrind). */
static inline struct tx_queue *txq_here(void)
{
	struct tx_queue *q = &txq;

	__asm__("" : "+r"(q));
	return q;
}

int uroce_tx_flush(void)
{
	struct tx_queue *q = txq_here();
	struct uroce_engine *eng = q->eng;
	unsigned int n = q->n, done = 0;
	int ret = 0;

	q->n = 0;
	q->used = 0;
	q->flushes++;
	while (done < n) {
		int r = eng->xport->ops->send(eng->xport, q->pkts + done, n - done);

		uint64_t bytes = 0;

		if (r <= 0) {
			ret = r ? r : -EIO;
			break;
		}
		/* Counted once a call: each count is an atomic add. */
		for (int i = 0; i < r; i++)
			bytes += q->pkts[done + i].len;
		uroce_count(eng, UROCE_STAT_TX_BYTES, bytes);
		uroce_count(eng, UROCE_STAT_TX_PACKETS, r);
		done += r;
	}
	/* The transport kept packets its queue did not take: the progress
	 * thread sends them (transport.h, tx_flush). */
	if (uroce_xport_tx_left(eng->xport))
		uroce_engine_wake(eng);
	if (ret)
		uroce_count(eng, UROCE_STAT_TX_NOT_SENT, n - done);
	if (ret && uroce_debug)
		fprintf(stderr, "uroce: %s: %u of %u packets not sent: %s\n", eng->devname, n - done,
			n, strerror(-ret));
	return ret;
}

uint64_t uroce_tx_position(void)
{
	struct tx_queue *q = txq_here();

	return (uint64_t)q->flushes << 32 | q->n;
}

/*
 * A ping-pong's SEND of 5 bytes or more is longer than the ACK that goes
 * with it, and a GSO datagram's segments are of one size but the last,
 * which may be shorter: ACK first, they left as two datagrams, and the
 * SEND reached the peer a datagram later (ib_send_lat -s 17 took 1 us a
 * way more than -s 2 on lo, docs/performance.md).  The ACK last, they
 * are one datagram, which the peer takes in one receive burst, and its
 * engine dispatches a burst's responses before its requests (recv.c):
 * its application sees the ACK's completion first, as from a NIC that
 * sends it on receipt.  So the ACK moves only where that holds: behind the
 * packets that follow it, if those are all of its path, of one size
 * longer than it, and few enough for one datagram, with nothing of its
 * path before it that the run would join.
 */
enum { TRAIL_MAX = 4 };     /* packets the ACK may follow: at most 4 x 4 KiB, one datagram */

bool uroce_tx_ack_trails(uint64_t pos)
{
	struct tx_queue *q = txq_here();
	unsigned int at = (uint32_t)pos, n = q->n;
	struct uroce_txpkt ack;

	if (pos >> 32 != q->flushes || at + 1 >= n || n - at - 1 > TRAIL_MAX || !q->eng ||
	    !__atomic_load_n(&q->eng->xport->caps.tx_segmentation, __ATOMIC_RELAXED))
		return false;
	if (at && uroce_path_same(&q->paths[at - 1], &q->paths[at]))
		return false;
	for (unsigned int i = at + 1; i < n; i++)
		if (!uroce_path_same(&q->paths[i], &q->paths[at]) ||
		    q->pkts[i].len != q->pkts[at + 1].len || q->pkts[i].len <= q->pkts[at].len ||
		    q->pkts[i].len > q->eng->xport->caps.max_payload)
			return false;
	/* Each packet keeps its own slot's path, iovecs and bytes. */
	ack = q->pkts[at];
	memmove(&q->pkts[at], &q->pkts[at + 1], (n - at - 1) * sizeof(q->pkts[0]));
	q->pkts[n - 1] = ack;
	return true;
}

static uint64_t clock_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/*
 * Inside a transmit batch the clock stands still: the time is read once,
 * at its first use, and kept until the batch ends.  ib_send_lat's side
 * read it 7.4 times a round trip (timers restarted on the request and on
 * its ACK, the round-trip sample, the ACK hold), 5.4 with this, at 20 ns
 * a read on this VM (docs/performance.md).  What the batch sends
 * leaves at its end, later than the time kept: a timer set from it runs
 * out that much sooner, a round-trip sample is that much longer; a
 * batch lasts microseconds, the timers milliseconds.
 */
uint64_t uroce_now_ns(void)
{
	struct tx_queue *q = txq_here();

	if (q->depth <= 0)
		return clock_ns();
	if (!q->now_ns)
		q->now_ns = clock_ns();
	return q->now_ns;
}

void uroce_tx_begin(struct uroce_engine *eng)
{
	struct tx_queue *q = txq_here();

	if (q->n && q->eng != eng)
		uroce_tx_flush();
	q->eng = eng;
	q->depth++;
}

int uroce_tx_end(struct uroce_engine *eng)
{
	struct tx_queue *q = txq_here();

	(void)eng;
	if (q->depth > 0 && --q->depth > 0)
		return 0;
	q->now_ns = 0;
	return q->n ? uroce_tx_flush() : 0;
}

static void path_of(struct uroce_path *p, const struct uroce_av *av, uint16_t sport)
{
	p->family = av->family;
	memcpy(p->src, av->sgid.raw, 16);
	memcpy(p->dst, av->dgid.raw, 16);
	p->sport = sport;
	p->dport = ROCE_UDP_PORT;
	p->tclass = av->traffic_class;
	p->hop_limit = av->hop_limit;
	p->flow_label = av->flow_label;
}

/* A CM MAD or a UD datagram may be for a process of this device: the
 * forwarding port of the process it is for (ours if nobody else owns the
 * destination), or 0 where the transport has no direct path.  RC and UC
 * keep the wire: a loss there is retransmitted, their connected sockets
 * spread the load over one buffer per QP (four RC QPs' READ bursts through
 * one forwarding socket ran out of retries under load), and they need no
 * exception.  Whether the destination is an address of this device is the
 * transport's to say (ops->send_local). */
static uint16_t local_port(struct uroce_engine *eng, const struct uroce_av *av,
			   const struct roce_pkt *pkt, const struct iovec *payload, int n)
{
	uint16_t port = 0;

	if (!eng->xport->ops->send_local || (pkt->opcode & ROCE_TR_MASK) != ROCE_TR_UD)
		return 0;
	if (pkt->dqpn == CM_GSI_QPN)
		return n == 1 ? uroce_up->gsi_local_port(eng, payload[0].iov_base, payload[0].iov_len,
						     av->dgid.raw) : eng->xport->fwd_port;
	if (!uroce_qpn_owner(eng->qpns, pkt->dqpn, 0, &port) || !port)
		port = eng->xport->fwd_port;
	return port;
}

/* The Ethernet addresses a trace records for a packet sent on PATH: the
 * frame's where the transport builds frames, else made up (a socket's
 * datagram gets them from the kernel, after us). */
static void tx_macs(struct uroce_engine *eng, struct roce_net *net, const struct uroce_path *path)
{
	if (!eng->xport->ops->macs || eng->xport->ops->macs(eng->xport, path, net->smac, net->dmac))
		roce_net_fake_macs(net);
}

/* ... and for a packet received: the frame's, or made up. */
static void rx_macs(struct roce_net *net, const struct uroce_rx *rx)
{
	if (!rx->has_macs) {
		roce_net_fake_macs(net);
		return;
	}
	memcpy(net->smac, rx->smac, 6);
	memcpy(net->dmac, rx->dmac, 6);
}

/* Build the packet into the queue's next slot; trace it.  A UD packet to
 * another process of this device goes to it directly, never through the
 * shared ADDR:4791 sockets (docs/engine.md); the queue (the wire) if that
 * fails. */
static int enqueue(struct uroce_engine *eng, const struct uroce_av *av, uint16_t sport,
		   const struct roce_pkt *pkt, const struct iovec *payload, int n)
{
	struct tx_queue *q = txq_here();
	unsigned int s;
	uint32_t plen = 0, padlen, crc;
	uint16_t local = local_port(eng, av, pkt, payload, n);
	uint64_t t0 = uroce_trace_clock(); /* before the peer can see it */
	struct roce_net net;
	struct iovec *iov, whole;
	uint8_t *hdr, *tail;
	bool in_one;
	int h, k = 0;

	if (q->n && (q->eng != eng || q->n == TXQ_MAX ||
		      q->n >= eng->xport->caps.max_burst))
		uroce_tx_flush();
	q->eng = eng;
	s = q->n;
	iov = q->iov[s];
	hdr = q->bytes + q->used;
	for (int i = 0; i < n; i++)
		plen += payload[i].iov_len;
	padlen = roce_padlen(plen);
	h = roce_build(hdr, ROCE_MAX_HDR, pkt, plen);
	if (h < 0) {
		fprintf(stderr, "uroce: internal error: no packet format for opcode 0x%02x\n",
			pkt->opcode);
		return -EINVAL;
	}
	in_one = plen <= TX_WHOLE_MAX;
	if (in_one) {
		/* Small: the payload joins the headers. */
		whole = (struct iovec){ hdr + h, plen };
		for (int i = 0, at = 0; i < n; at += (int)payload[i++].iov_len)
			memcpy(hdr + h + at, payload[i].iov_base, payload[i].iov_len);
		payload = &whole;
		n = 1;
		tail = hdr + h + plen;
	} else {
		tail = hdr + h;
	}
	roce_net_from_socket(&net, av->family, av->sgid.raw, av->dgid.raw, sport, ROCE_UDP_PORT);
	crc = htole32(roce_icrc(&net, hdr, h, payload, n, padlen));
	/* Pad bytes are zero; the ICRC follows them. */
	memset(tail, 0, padlen);
	memcpy(tail + padlen, &crc, 4);
	if (in_one) {
		iov[k++] = (struct iovec){ hdr, h + plen + padlen + 4 };
	} else {
		iov[k++] = (struct iovec){ hdr, h };
		for (int i = 0; i < n; i++)
			iov[k++] = payload[i];
		iov[k++] = (struct iovec){ tail, padlen + 4 };
	}
	path_of(&q->paths[s], av, sport);
	q->pkts[s] = (struct uroce_txpkt){
		.path = &q->paths[s], .iov = iov, .iovcnt = k, .len = h + plen + padlen + 4,
	};
	if (local && eng->xport->ops->send_local(eng->xport, local, &q->pkts[s]) == 0) {
		uroce_count(eng, UROCE_STAT_TX_PACKETS, 1);
		uroce_count(eng, UROCE_STAT_TX_BYTES, q->pkts[s].len);
	} else {
		q->n++;
		q->used = (size_t)(tail + padlen + 4 - q->bytes);
	}
	if (trace || uroce_tracing) {
		/* What the transports write (IBTA A17.4.5.1); the ICRC masks both. */
		net.tos = av->traffic_class;
		net.ttl = av->hop_limit ? av->hop_limit : net.ttl;
		tx_macs(eng, &net, &q->paths[s]);
		roce_pcap_write(trace, &net, iov, k);
	}
	UROCE_TRACE(uroce_trace_pkt(t0, true, &net, iov, k));
	return 0;
}

int uroce_pkt_queue(struct uroce_engine *eng, const struct uroce_av *av, uint16_t sport,
		    const struct roce_pkt *pkt, const struct iovec *payload, int n)
{
	struct tx_queue *q = txq_here();
	int ret = enqueue(eng, av, sport, pkt, payload, n);

	if (ret || q->depth > 0)
		return ret;
	return uroce_tx_flush();
}

int uroce_pkt_send(struct uroce_engine *eng, const struct uroce_av *av, uint16_t sport,
		   const struct roce_pkt *pkt, const struct iovec *payload, int n)
{
	int ret = enqueue(eng, av, sport, pkt, payload, n);

	return ret ? ret : uroce_tx_flush();
}

/* ---- receive ------------------------------------------------------------- */

/*
 * A socket transport does not see the IPv4 ID, which the ICRC covers: it
 * says the packet's index in its coalesced datagram (rx->ip_id), and the
 * check tries that first, then solves for the ID bits (wire/icrc.c, about
 * as long again as the check).  A uroce peer sending unconnected writes
 * ID 0; one sending through a connected socket (udp_txconn.c) counts up
 * by one a datagram, as rxe counts by one a packet.  So the first guess
 * is the source's last datagram's ID moved by its last step; a wrong one
 * costs the solving, never a packet.
 */
/* RX's source's entry and the key it must hold (never 0: empty). */
static _Atomic uint64_t *id_entry(struct uroce_engine *eng, const struct uroce_rx *rx,
				  uint32_t *key)
{
	uint32_t h = roce_v4_endpoint_hash(rx->src_ip, rx->src_port);
	size_t n = sizeof(eng->rx_id_guess) / sizeof(eng->rx_id_guess[0]);

	*key = h | 1;
	return &eng->rx_id_guess[h % n];
}

/* The guess for RX's ID (its index in its datagram on top), from entry G. */
static uint16_t id_guess(uint64_t g, uint32_t key, const struct uroce_rx *rx)
{
	uint16_t last = (uint16_t)(g >> 16), step = (uint16_t)g;

	if ((uint32_t)(g >> 32) != key)
		return rx->ip_id;
	/* Index 0 starts a datagram; the others are segments of the last. */
	return (uint16_t)(rx->ip_id ? last + rx->ip_id : last + step);
}

/* RX had ID (its datagram's is that less its index): entry G becomes. */
static uint64_t id_learned(uint64_t g, uint32_t key, const struct uroce_rx *rx, uint16_t id)
{
	uint16_t base = (uint16_t)(id - rx->ip_id), step = 0;

	if ((uint32_t)(g >> 32) == key)
		step = rx->ip_id ? (uint16_t)g : (uint16_t)(base - (uint16_t)(g >> 16));
	return (uint64_t)key << 32 | (uint32_t)base << 16 | step;
}

int uroce_pkt_parse(struct uroce_engine *eng, const struct uroce_rx *rx, struct roce_pkt *p)
{
	struct roce_net net;
	int r;

	bool guess = !rx->ip_id_exact && rx->family == AF_INET;
	_Atomic uint64_t *entry = NULL;
	uint64_t g = 0;
	uint32_t key = 0;

	if (guess) {
		entry = id_entry(eng, rx, &key);
		g = atomic_load_explicit(entry, memory_order_relaxed);
	}
	roce_net_from_socket(&net, rx->family, rx->src_ip, rx->dst_ip, rx->src_port, rx->dst_port);
	net.ip_id = guess ? id_guess(g, key, rx) : rx->ip_id;
	net.id_unknown = !rx->ip_id_exact;
	if (rx->ip_id_exact)
		net.df = rx->df;
	r = roce_parse(rx->buf, rx->len, p);
	if (r == ROCE_OK)
		r = roce_icrc_check(&net, rx->buf, rx->len);
	if (r == ROCE_OK && guess)
		atomic_store_explicit(entry, id_learned(g, key, rx, net.ip_id),
				      memory_order_relaxed);
	if (trace || uroce_tracing) {
		struct iovec v = { rx->buf, rx->len };

		net.tos = rx->tos;
		net.ttl = rx->ttl ? rx->ttl : net.ttl;
		rx_macs(&net, rx);
		roce_pcap_write(trace, &net, &v, 1);
	}
	UROCE_TRACE(uroce_trace_rx(&net, rx->buf, rx->len));
	if (r != ROCE_OK) {
		uroce_count(eng, UROCE_STAT_DROP_TRUNCATED + (r - ROCE_E_TRUNCATED), 1);
		if (uroce_debug)
			fprintf(stderr, "uroce: dropped a packet from port %u: %s\n", rx->src_port,
				roce_reason_name(r));
	}
	return r;
}
