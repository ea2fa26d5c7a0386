/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The engine's view of one RoCEv2 packet, for both directions: the parsed
 * fields of a received packet, or the fields of one to send.  pkt.c maps
 * it onto the wire module (wire/: opcode table, headers, ICRC, pcap).
 */
#ifndef UROCE_PKT_H
#define UROCE_PKT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

struct uroce_engine;
struct uroce_rx;
struct uroce_av;

/* What a packet does, independent of the transport (RC/UC/UD). */
enum uroce_pkt_kind {
	PK_SEND,
	PK_WRITE,
	PK_READ_REQ,
	PK_READ_RESP,
	PK_ACK,
	PK_ATOMIC_ACK,
	PK_CMP_SWAP,
	PK_FETCH_ADD,
	PK_CNP,
};

/* AETH syndrome (IBTA 9.3.5, table 43): top 3 bits say ACK / RNR NAK / NAK. */
enum {
	AETH_ACK = 0x00,          /* | credit count (0x1f: no credits, as rxe) */
	AETH_RNR_NAK = 0x20,      /* | RNR timer code */
	AETH_NAK = 0x60,          /* | NAK code */
	AETH_TYPE_MASK = 0x60,
	AETH_CREDITS_INVALID = 0x1f,
};

enum {
	NAK_PSN_SEQ = 0,
	NAK_INVALID_REQ = 1,
	NAK_REMOTE_ACCESS = 2,
	NAK_REMOTE_OP = 3,
	NAK_INVALID_RD_REQ = 4,
};

struct uroce_pkt {
	uint8_t opcode;           /* BTH opcode */
	enum uroce_pkt_kind kind;
	int qp_type;              /* IBV_QPT_RC / UC / UD (from the opcode) */
	bool first, last;         /* starts / ends a message (ONLY = both) */
	bool is_response;         /* ACK, READ response, ATOMIC ACK */
	bool has_imm, has_inv;
	bool ackreq, solicited;
	uint16_t pkey;
	uint32_t dqpn;
	uint32_t psn;
	/* RETH, or AtomicETH's address and key */
	uint64_t va;
	uint32_t rkey;
	uint32_t dma_len;
	/* AETH */
	uint8_t syndrome;
	uint32_t msn;
	/* AtomicETH / AtomicAckETH */
	uint64_t swap_add;
	uint64_t compare;
	uint64_t orig;
	/* ImmDt (network order, as ibv_wc wants it), IETH */
	uint32_t imm;
	uint32_t inv_rkey;
	/* DETH */
	uint32_t qkey;
	uint32_t sqpn;
	/* received payload (without pad and ICRC) */
	const uint8_t *payload;
	uint32_t paylen;
};

/* The opcode for a packet of KIND on QP_TYPE at a position in its message. */
int uroce_pkt_opcode(int qp_type, enum uroce_pkt_kind kind, bool first, bool last,
		     bool imm, bool inv);

/* Parse and check (lengths, version, ICRC) a received packet: 0, -EBADMSG
 * (ICRC) or -EINVAL (anything else malformed). */
int uroce_pkt_parse(struct uroce_engine *eng, const struct uroce_rx *rx, struct uroce_pkt *pkt);

/* Build headers for PKT (opcode set), append PAYLOAD, pad and ICRC, send
 * from (av->sgid, sport) to av->dst; 0 or -errno. */
int uroce_pkt_send(struct uroce_engine *eng, const struct uroce_av *av, uint16_t sport,
		   const struct uroce_pkt *pkt, const struct iovec *payload, int n);

/* pcap tracing of every packet sent and received (UROCE_PCAP). */
void uroce_pkt_trace_open(struct uroce_engine *eng);
void uroce_pkt_trace_close(struct uroce_engine *eng);

#endif
