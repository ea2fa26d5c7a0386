// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * The opcode table: for every RC, UC, UD and XRC opcode of IBTA vol. 1 ch. 9
 * (table 38, "OpCode field") and the RoCEv2 CNP, which extended headers
 * follow the BTH, where they sit, and what the packet means.  Building and
 * parsing are both driven by it.
 */
#include <stddef.h>

#include "wire/wire.h"

#define H(x) (1u << ROCE_H_##x)

/* Extended header sizes, in table order (enum roce_hdr). */
static const uint8_t hdr_size[ROCE_H_COUNT] = {
	[ROCE_H_XRCETH] = sizeof(struct roce_xrceth),
	[ROCE_H_DETH] = sizeof(struct roce_deth),
	[ROCE_H_RETH] = sizeof(struct roce_reth),
	[ROCE_H_ATOMICETH] = sizeof(struct roce_atomiceth),
	[ROCE_H_AETH] = sizeof(struct roce_aeth),
	[ROCE_H_ATOMICACKETH] = sizeof(struct roce_atomicacketh),
	[ROCE_H_IMMDT] = sizeof(struct roce_immdt),
	[ROCE_H_IETH] = sizeof(struct roce_ieth),
	[ROCE_H_CNP] = ROCE_CNP_RESERVED,
};

/* Flags of a row. */
enum {
	F_FIRST = 1 << 0,
	F_LAST = 1 << 1,
	F_PAY = 1 << 2,           /* carries payload */
	F_RESP = 1 << 3,          /* a response */
	F_ACK = 1 << 4,           /* request the responder acknowledges (RC) */
	F_ONLY = F_FIRST | F_LAST,
};

/* One base opcode (the low 5 bits), valid on the transports in TR. */
struct base_row {
	const char *name;
	uint8_t kind;
	uint16_t hdrs;
	uint8_t flags;
	uint8_t tr;               /* bit per transport: RC 1, UC 2, UD 4 */
};

/* XRC has RC's operations (IBTA 9.2 table 38, the 101 prefix); RC rows
 * name it in T_RC. */
enum { T_RC = 1, T_UC = 2, T_UD = 4, T_XRC = 8, T_RCUC = T_RC | T_UC };

/* IBTA 9.2 table 38 and 9.3 (which headers each opcode carries). */
static const struct base_row base[32] = {
	[ROCE_SEND_FIRST] = { "SEND_FIRST", ROCE_K_SEND, 0, F_FIRST | F_PAY, T_RCUC },
	[ROCE_SEND_MIDDLE] = { "SEND_MIDDLE", ROCE_K_SEND, 0, F_PAY, T_RCUC },
	[ROCE_SEND_LAST] = { "SEND_LAST", ROCE_K_SEND, 0, F_LAST | F_PAY, T_RCUC },
	[ROCE_SEND_LAST_IMM] = { "SEND_LAST_WITH_IMMEDIATE", ROCE_K_SEND, H(IMMDT),
				 F_LAST | F_PAY, T_RCUC },
	[ROCE_SEND_ONLY] = { "SEND_ONLY", ROCE_K_SEND, 0, F_ONLY | F_PAY, T_RCUC | T_UD },
	[ROCE_SEND_ONLY_IMM] = { "SEND_ONLY_WITH_IMMEDIATE", ROCE_K_SEND, H(IMMDT),
				 F_ONLY | F_PAY, T_RCUC | T_UD },
	[ROCE_WRITE_FIRST] = { "RDMA_WRITE_FIRST", ROCE_K_WRITE, H(RETH), F_FIRST | F_PAY, T_RCUC },
	[ROCE_WRITE_MIDDLE] = { "RDMA_WRITE_MIDDLE", ROCE_K_WRITE, 0, F_PAY, T_RCUC },
	[ROCE_WRITE_LAST] = { "RDMA_WRITE_LAST", ROCE_K_WRITE, 0, F_LAST | F_PAY, T_RCUC },
	[ROCE_WRITE_LAST_IMM] = { "RDMA_WRITE_LAST_WITH_IMMEDIATE", ROCE_K_WRITE, H(IMMDT),
				  F_LAST | F_PAY, T_RCUC },
	[ROCE_WRITE_ONLY] = { "RDMA_WRITE_ONLY", ROCE_K_WRITE, H(RETH), F_ONLY | F_PAY, T_RCUC },
	[ROCE_WRITE_ONLY_IMM] = { "RDMA_WRITE_ONLY_WITH_IMMEDIATE", ROCE_K_WRITE,
				  H(RETH) | H(IMMDT), F_ONLY | F_PAY, T_RCUC },
	[ROCE_READ_REQ] = { "RDMA_READ_REQUEST", ROCE_K_READ_REQ, H(RETH), F_ONLY, T_RC },
	[ROCE_READ_RESP_FIRST] = { "RDMA_READ_RESPONSE_FIRST", ROCE_K_READ_RESP, H(AETH),
				   F_FIRST | F_PAY | F_RESP, T_RC },
	[ROCE_READ_RESP_MIDDLE] = { "RDMA_READ_RESPONSE_MIDDLE", ROCE_K_READ_RESP, 0,
				    F_PAY | F_RESP, T_RC },
	[ROCE_READ_RESP_LAST] = { "RDMA_READ_RESPONSE_LAST", ROCE_K_READ_RESP, H(AETH),
				  F_LAST | F_PAY | F_RESP, T_RC },
	[ROCE_READ_RESP_ONLY] = { "RDMA_READ_RESPONSE_ONLY", ROCE_K_READ_RESP, H(AETH),
				  F_ONLY | F_PAY | F_RESP, T_RC },
	[ROCE_ACK] = { "ACKNOWLEDGE", ROCE_K_ACK, H(AETH), F_ONLY | F_RESP, T_RC },
	[ROCE_ATOMIC_ACK] = { "ATOMIC_ACKNOWLEDGE", ROCE_K_ATOMIC_ACK, H(AETH) | H(ATOMICACKETH),
			      F_ONLY | F_RESP, T_RC },
	[ROCE_CMP_SWAP] = { "COMPARE_SWAP", ROCE_K_CMP_SWAP, H(ATOMICETH), F_ONLY, T_RC },
	[ROCE_FETCH_ADD] = { "FETCH_ADD", ROCE_K_FETCH_ADD, H(ATOMICETH), F_ONLY, T_RC },
	[ROCE_SEND_LAST_INV] = { "SEND_LAST_WITH_INVALIDATE", ROCE_K_SEND, H(IETH),
				 F_LAST | F_PAY, T_RC },
	[ROCE_SEND_ONLY_INV] = { "SEND_ONLY_WITH_INVALIDATE", ROCE_K_SEND, H(IETH),
				 F_ONLY | F_PAY, T_RC },
	/* IBTA 1.5 (9.4.1.x, ATOMIC WRITE): a RETH naming 8 aligned bytes and
	 * those 8 bytes as payload; acknowledged by a plain ACK. */
	[ROCE_ATOMIC_WRITE] = { "ATOMIC_WRITE", ROCE_K_ATOMIC_WRITE, H(RETH), F_ONLY | F_PAY, T_RC },
};

static const struct {
	uint8_t code, bit;
	const char *prefix;
} transports[] = {
	{ ROCE_TR_RC, T_RC, "RC_" },
	{ ROCE_TR_UC, T_UC, "UC_" },
	{ ROCE_TR_UD, T_UD, "UD_" },
	{ ROCE_TR_XRC, T_XRC, "XRC_" },
};

/* The full table, filled once from the rows above. */
static struct roce_opinfo table[256];
static char names[256][40];
/* The reverse: opcode + 1 (0: none) by transport (RC/UC/RD/UD, top 3 bits
 * >> 5; XRC 5), kind, first, last, imm, inv, for building packets in O(1). */
static uint8_t by_shape[8][ROCE_K_CNP][2][2][2][2];

static void fill_row(struct roce_opinfo *o, uint8_t opcode, uint8_t tr, uint8_t kind,
		     uint16_t hdrs, uint8_t flags)
{
	uint8_t off = sizeof(struct roce_bth);

	o->opcode = opcode;
	o->transport = tr;
	o->kind = kind;
	o->hdrs = hdrs;
	for (int h = 0; h < ROCE_H_COUNT; h++) {
		if (!(hdrs & (1u << h)))
			continue;
		o->off[h] = off;
		off += hdr_size[h];
	}
	o->hdrlen = off;
	o->first = flags & F_FIRST;
	o->last = flags & F_LAST;
	o->payload = flags & F_PAY;
	o->response = flags & F_RESP;
	/* Every RC request is acknowledged, explicitly or by a later ACK
	 * (IBTA 9.7.5.1); UC and UD are not. */
	o->ack = (tr == ROCE_TR_RC || tr == ROCE_TR_XRC) && !o->response;
	o->imm = hdrs & H(IMMDT);
	o->inv = hdrs & H(IETH);
}

static void build_table(void)
{
	for (unsigned t = 0; t < sizeof(transports) / sizeof(transports[0]); t++) {
		for (int b = 0; b < 32; b++) {
			const struct base_row *r = &base[b];
			uint8_t op = transports[t].code | b;
			uint16_t hdrs = r->hdrs;

			unsigned int tr = r->tr;

			/* Every RC operation but ATOMIC WRITE (which IBTA 1.5
			 * gives RC only here) exists for XRC too. */
			if (tr & T_RC && b != ROCE_ATOMIC_WRITE)
				tr |= T_XRC;
			if (!r->name || !(tr & transports[t].bit))
				continue;
			/* UD sends carry a DETH (IBTA 9.3.3). */
			if (transports[t].code == ROCE_TR_UD)
				hdrs |= H(DETH);
			/* XRC requests name the target's XRC SRQ (XRCETH);
			 * responses do not. */
			if (transports[t].code == ROCE_TR_XRC && !(r->flags & F_RESP))
				hdrs |= H(XRCETH);
			fill_row(&table[op], op, transports[t].code, r->kind, hdrs, r->flags);
			by_shape[transports[t].code >> 5][r->kind][table[op].first][table[op].last]
				[table[op].imm][table[op].inv] = op + 1;
			snprintf(names[op], sizeof(names[op]), "%s%s", transports[t].prefix, r->name);
			table[op].name = names[op];
		}
	}
	/* RoCEv2 CNP (Annex A17.9.3): BTH, 16 reserved bytes. */
	fill_row(&table[ROCE_OPCODE_CNP], ROCE_OPCODE_CNP, ROCE_TR_CNP, ROCE_K_CNP, H(CNP), F_ONLY);
	table[ROCE_OPCODE_CNP].name = "CNP";
}

static void __attribute__((constructor)) init_table(void)
{
	build_table();
}

const struct roce_opinfo *roce_opinfo(uint8_t opcode)
{
	return table[opcode].name ? &table[opcode] : NULL;
}

int roce_opcodes(uint8_t *out, int max)
{
	int n = 0;

	for (int op = 0; op < 256; op++)
		if (table[op].name && n < max)
			out[n++] = op;
	return n;
}

int roce_opcode(uint8_t transport, enum roce_kind kind, bool first, bool last,
		bool imm, bool inv)
{
	if (kind == ROCE_K_CNP)
		return ROCE_OPCODE_CNP;
	/* Immediate data and the invalidate key ride on a message's last
	 * packet only (IBTA 9.3.8, 9.3.9). */
	imm = imm && last;
	inv = inv && last;
	if ((transport & ~ROCE_TR_MASK) || transport == ROCE_TR_RD || transport == ROCE_TR_CNP ||
	    transport > ROCE_TR_XRC || kind >= ROCE_K_CNP)
		return -1;
	return by_shape[transport >> 5][kind][first][last][imm][inv] - 1;
}
