/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * RoCEv2 on the wire: the headers of a packet, in network byte order, as
 * IBTA vol. 1 ch. 9.2-9.4 (BTH and the extended transport headers) and
 * Annex A17 (RoCEv2: IB transport over UDP/IP, ICRC) define them.  Shared
 * by the provider, the tools, the tests and the fuzzer.
 *
 * A RoCEv2 frame:  Ethernet | IPv4 or IPv6 | UDP (dport 4791) | BTH |
 *                  extended headers (by opcode) | payload | pad (0-3) | ICRC
 * Every multi-byte field is big-endian except the ICRC, which is the
 * little-endian image of the CRC-32 register (as the Ethernet FCS).
 */
#ifndef UROCE_ROCE_HDR_H
#define UROCE_ROCE_HDR_H

#include <stdint.h>

#define ROCE_UDP_PORT 4791
#define ROCE_ETHERTYPE_IPV4 0x0800
#define ROCE_ETHERTYPE_IPV6 0x86dd
#define ROCE_IPPROTO_UDP 17

struct roce_eth {
	uint8_t dst[6];
	uint8_t src[6];
	uint16_t ethertype;
} __attribute__((packed));

struct roce_ipv4 {
	uint8_t ver_ihl;          /* 0x45: no options */
	uint8_t tos;              /* DSCP/ECN: masked in the ICRC */
	uint16_t tot_len;
	uint16_t id;
	uint16_t frag_off;        /* 0x4000: DF */
	uint8_t ttl;              /* masked in the ICRC */
	uint8_t protocol;         /* 17 */
	uint16_t check;           /* masked in the ICRC */
	uint8_t saddr[4];
	uint8_t daddr[4];
} __attribute__((packed));

struct roce_ipv6 {
	uint32_t ver_tc_flow;     /* version 6; traffic class and flow label masked in the ICRC */
	uint16_t payload_len;
	uint8_t next_hdr;         /* 17 */
	uint8_t hop_limit;        /* masked in the ICRC */
	uint8_t saddr[16];
	uint8_t daddr[16];
} __attribute__((packed));

struct roce_udp {
	uint16_t sport;
	uint16_t dport;           /* 4791 */
	uint16_t len;
	uint16_t check;           /* 0 from RoCE senders; masked in the ICRC */
} __attribute__((packed));

/* Base Transport Header, IBTA 9.2 (12 bytes). */
struct roce_bth {
	uint8_t opcode;
	uint8_t flags;            /* SE:1 M:1 PadCnt:2 TVer:4 */
	uint16_t pkey;
	uint32_t dqpn;            /* FECN:1 BECN:1 Resv6:6 DestQP:24; byte 4 masked in the ICRC */
	uint32_t apsn;            /* AckReq:1 Resv7:7 PSN:24 */
} __attribute__((packed));

#define ROCE_BTH_SE 0x80
#define ROCE_BTH_MIGREQ 0x40
#define ROCE_BTH_PAD_SHIFT 4
#define ROCE_BTH_PAD_MASK 0x30
#define ROCE_BTH_TVER_MASK 0x0f
#define ROCE_BTH_FECN 0x80000000u
#define ROCE_BTH_BECN 0x40000000u
#define ROCE_BTH_ACKREQ 0x80000000u
#define ROCE_QPN_MASK 0x00ffffffu
#define ROCE_QPN_MULTICAST 0x00ffffffu  /* a multicast packet's DestQP (IBTA 9.2) */
#define ROCE_PSN_MASK 0x00ffffffu

/* Datagram Extended Transport Header, IBTA 9.3.3 (UD). */
struct roce_deth {
	uint32_t qkey;
	uint32_t sqpn;            /* Resv8:8 SrcQP:24 */
} __attribute__((packed));

/* XRC Extended Transport Header (IBTA vol. 1 ch. 9, XRC since 1.2.1): on
 * XRC requests only, right after the BTH; names the XRC SRQ at the target
 * that the message goes to. */
struct roce_xrceth {
	uint32_t srqn;            /* Resv8:8 XRCSRQ:24 */
} __attribute__((packed));

/* RDMA Extended Transport Header, IBTA 9.3.4 (WRITE first/only, READ request). */
struct roce_reth {
	uint64_t va;
	uint32_t rkey;
	uint32_t dma_len;
} __attribute__((packed));

/* Atomic Extended Transport Header, IBTA 9.3.5 (CmpSwap, FetchAdd). */
struct roce_atomiceth {
	uint64_t va;
	uint32_t rkey;
	uint64_t swap_add;        /* swap data (CmpSwap) or add data (FetchAdd) */
	uint64_t compare;
} __attribute__((packed));

/* ACK Extended Transport Header, IBTA 9.3.6: syndrome and MSN. */
struct roce_aeth {
	uint32_t syn_msn;         /* Syndrome:8 MSN:24 */
} __attribute__((packed));

/* AETH syndrome (IBTA 9.3.6, table 44): the top bits select ACK / RNR NAK / NAK. */
#define ROCE_AETH_ACK 0x00          /* | credit count; 0x1f = invalid (no end-to-end credits) */
#define ROCE_AETH_RNR_NAK 0x20      /* | RNR timer code */
#define ROCE_AETH_NAK 0x60          /* | NAK code */
#define ROCE_AETH_TYPE_MASK 0x60
#define ROCE_AETH_CREDITS_INVALID 0x1f
enum roce_nak_code {
	ROCE_NAK_PSN_SEQ = 0,
	ROCE_NAK_INVALID_REQ = 1,
	ROCE_NAK_REMOTE_ACCESS = 2,
	ROCE_NAK_REMOTE_OP = 3,
	ROCE_NAK_INVALID_RD_REQ = 4,
};

/* Atomic ACK Extended Transport Header, IBTA 9.3.7. */
struct roce_atomicacketh {
	uint64_t orig;
} __attribute__((packed));

/* Immediate data (ImmDt, 9.3.8) and invalidate key (IETH, 9.3.9): 4 bytes each. */
struct roce_immdt {
	uint32_t imm;
} __attribute__((packed));

struct roce_ieth {
	uint32_t rkey;
} __attribute__((packed));

/* The 40 bytes a UD receive buffer starts with (IBTA 11.4.1.1): the GRH,
 * which for RoCEv2 over IPv4 holds the IPv4 header in its last 20 bytes. */
struct roce_grh {
	uint32_t ver_tc_flow;
	uint16_t paylen;
	uint8_t next_hdr;
	uint8_t hop_limit;
	uint8_t sgid[16];
	uint8_t dgid[16];
} __attribute__((packed));

/* RoCEv2 Congestion Notification Packet (Annex A17.9.3): BTH with opcode
 * 0x81, then 16 reserved bytes, then the ICRC. */
#define ROCE_CNP_RESERVED 16

#define ROCE_ICRC_LEN 4

/* Base opcodes (IBTA 9.2, table 38); the transport is in the top 3 bits. */
enum roce_transport {
	ROCE_TR_RC = 0x00,
	ROCE_TR_UC = 0x20,
	ROCE_TR_RD = 0x40,
	ROCE_TR_UD = 0x60,
	ROCE_TR_CNP = 0x80,
	ROCE_TR_XRC = 0xa0,       /* XRC: RC's opcodes, requests carry an XRCETH */
	ROCE_TR_MASK = 0xe0,
};

enum roce_base_opcode {
	ROCE_SEND_FIRST = 0x00,
	ROCE_SEND_MIDDLE = 0x01,
	ROCE_SEND_LAST = 0x02,
	ROCE_SEND_LAST_IMM = 0x03,
	ROCE_SEND_ONLY = 0x04,
	ROCE_SEND_ONLY_IMM = 0x05,
	ROCE_WRITE_FIRST = 0x06,
	ROCE_WRITE_MIDDLE = 0x07,
	ROCE_WRITE_LAST = 0x08,
	ROCE_WRITE_LAST_IMM = 0x09,
	ROCE_WRITE_ONLY = 0x0a,
	ROCE_WRITE_ONLY_IMM = 0x0b,
	ROCE_READ_REQ = 0x0c,
	ROCE_READ_RESP_FIRST = 0x0d,
	ROCE_READ_RESP_MIDDLE = 0x0e,
	ROCE_READ_RESP_LAST = 0x0f,
	ROCE_READ_RESP_ONLY = 0x10,
	ROCE_ACK = 0x11,
	ROCE_ATOMIC_ACK = 0x12,
	ROCE_CMP_SWAP = 0x13,
	ROCE_FETCH_ADD = 0x14,
	ROCE_SEND_LAST_INV = 0x16,
	ROCE_SEND_ONLY_INV = 0x17,
	ROCE_ATOMIC_WRITE = 0x1d,   /* IBTA 1.5 (RC only): RETH + 8 bytes of payload */
	ROCE_BASE_MASK = 0x1f,
};

#define ROCE_OPCODE_CNP 0x81

#endif
