/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The engine's side of the wire: sending and receiving one RoCEv2 packet
 * through the UDP transport.  The packet's fields are the wire module's
 * struct roce_pkt (wire/wire.h), built and parsed from its opcode table;
 * this file adds the transport's addresses, the ICRC check of received
 * packets and pcap tracing (UROCE_PCAP).
 */
#ifndef UROCE_PKT_H
#define UROCE_PKT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>
#include <infiniband/verbs.h>

#include "wire/wire.h"

struct uroce_engine;
struct uroce_rx;
struct uroce_av;

/* The wire transport of a QP type. */
static inline uint8_t uroce_pkt_transport(enum ibv_qp_type type)
{
	return type == IBV_QPT_UC ? ROCE_TR_UC : type == IBV_QPT_UD ? ROCE_TR_UD :
	       type == IBV_QPT_XRC_SEND || type == IBV_QPT_XRC_RECV ? ROCE_TR_XRC : ROCE_TR_RC;
}

/* The opcode for a packet of KIND on QP_TYPE at a position in its message. */
int uroce_pkt_opcode(enum ibv_qp_type qp_type, enum roce_kind kind, bool first, bool last,
		     bool imm, bool inv);

/* Parse and check (lengths, version, pad, ICRC) a received packet: ROCE_OK
 * or the enum roce_reason it was rejected for. */
int uroce_pkt_parse(struct uroce_engine *eng, const struct uroce_rx *rx, struct roce_pkt *pkt);

/* What uroce_pkt_send (engine.h: the CM sends QP 1's MADs with it) does,
 * queued while this thread is inside uroce_tx_begin/end or until
 * the queue is full (then 0 means queued; a send error is counted and
 * reported by UROCE_DEBUG, the protocol recovers as from a loss).  PAYLOAD
 * must stay valid until the next uroce_tx_flush. */
int uroce_pkt_queue(struct uroce_engine *eng, const struct uroce_av *av, uint16_t sport,
		    const struct roce_pkt *pkt, const struct iovec *payload, int n);

/* Transmit batching (docs/transport.md): what one post or progress pass
 * produces leaves in one transport send (GSO, sendmmsg).  begin/end nest;
 * the outermost end flushes.  flush sends what is queued now (before a
 * payload's memory may change: the MR lock is released, a UD/UC WQE is
 * completed).  0 or the first -errno. */
void uroce_tx_begin(struct uroce_engine *eng);
int uroce_tx_end(struct uroce_engine *eng);
int uroce_tx_flush(void);
/* Where the next packet this thread queues goes (it changes with every
 * flush): the packet queued last is at this less one.  NOWHERE: no
 * position. */
uint64_t uroce_tx_position(void);
#define UROCE_TX_NOWHERE UINT64_MAX
/* The ACK queued at POS goes behind the packets queued after it, if they
 * and it then leave as one datagram (pkt.c); true if it moved. */
bool uroce_tx_ack_trails(uint64_t pos);

/* pcap tracing of every packet sent and received by the process's uroce
 * devices into $UROCE_PCAP ("%p" in it becomes the PID), at most
 * $UROCE_PCAP_MAX bytes (default 256 MiB; K/M/G suffixes). */
void uroce_pkt_trace_open(struct uroce_engine *eng);
/* Are received packets recorded (UROCE_PCAP, UROCE_TRACE)?  Then each
 * one's IP fields are wanted from the transport. */
bool uroce_pkt_traced(void);
void uroce_pkt_trace_close(struct uroce_engine *eng);

#endif
