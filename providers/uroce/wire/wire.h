/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The RoCEv2 wire module: one opcode table drives building and parsing of
 * every packet; the ICRC of Annex A17; a pcap tracer.  No dependency on
 * libibverbs: used by the provider, the tests, the fuzzer and the bench.
 *
 * Two framings:
 *  - the UDP payload (BTH ... ICRC), which is what a UDP socket sends and
 *    receives; the IP/UDP fields the ICRC covers come from a roce_net;
 *  - the full Ethernet frame (AF_XDP, pcap, tests).
 */
#ifndef UROCE_WIRE_H
#define UROCE_WIRE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <uroce/roce_hdr.h>

/* The CM's MADs, which QP 1 carries (cm_mad.c). */
#include "wire/cm_mad.h"

/* What a packet does, independent of its transport. */
enum roce_kind {
	ROCE_K_SEND,
	ROCE_K_WRITE,
	ROCE_K_READ_REQ,
	ROCE_K_READ_RESP,
	ROCE_K_ACK,
	ROCE_K_ATOMIC_ACK,
	ROCE_K_CMP_SWAP,
	ROCE_K_FETCH_ADD,
	ROCE_K_ATOMIC_WRITE,      /* IBTA 1.5: 8 bytes stored at once */
	ROCE_K_CNP,
};

/* Extended headers, in the order they follow the BTH (IBTA 9.2, figure 29). */
enum roce_hdr {
	ROCE_H_XRCETH,            /* XRC requests; never with a DETH */
	ROCE_H_DETH,
	ROCE_H_RETH,
	ROCE_H_ATOMICETH,
	ROCE_H_AETH,
	ROCE_H_ATOMICACKETH,
	ROCE_H_IMMDT,
	ROCE_H_IETH,
	ROCE_H_CNP,               /* the CNP's 16 reserved bytes */
	ROCE_H_COUNT,
};

/* One row of the opcode table. */
struct roce_opinfo {
	const char *name;         /* IBTA name, e.g. "RC_SEND_ONLY" */
	uint8_t opcode;
	uint8_t transport;        /* ROCE_TR_* */
	uint8_t kind;             /* enum roce_kind */
	uint16_t hdrs;            /* bit (1 << ROCE_H_x) per extended header present */
	uint8_t hdrlen;           /* BTH + extended headers, bytes */
	uint8_t off[ROCE_H_COUNT];/* offset of each present header from the BTH */
	bool first, last;         /* starts / ends a message (ONLY: both) */
	bool payload;             /* may carry payload */
	bool response;            /* responder -> requester (ACK, READ response, ATOMIC ACK) */
	bool ack;                 /* an RC request the responder must acknowledge */
	bool imm, inv;            /* carries ImmDt / IETH */
};

/* The row for OPCODE, or NULL if uroce does not know it (RD, reserved). */
const struct roce_opinfo *roce_opinfo(uint8_t opcode);
/* The opcode for a packet of KIND on TRANSPORT at a position in its message
 * (IMM and INV count only for the last packet); -1 if there is none. */
int roce_opcode(uint8_t transport, enum roce_kind kind, bool first, bool last,
		bool imm, bool inv);
/* Every known opcode, for tests: fills up to MAX, returns the count. */
int roce_opcodes(uint8_t *out, int max);

/* A packet's transport fields: parsed from the wire or to be built. */
struct roce_pkt {
	const struct roce_opinfo *info;
	uint8_t opcode;
	enum roce_kind kind;
	uint8_t transport;        /* ROCE_TR_RC / UC / UD / XRC / CNP */
	bool first, last;
	bool is_response;
	bool has_imm, has_inv;
	/* BTH */
	bool solicited, migreq, ackreq, fecn, becn;
	uint8_t padcnt;           /* parsed; the builder computes it */
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
	/* ImmDt (kept in network order, as ibv_wc wants it), IETH */
	uint32_t imm;
	uint32_t inv_rkey;
	/* XRCETH */
	uint32_t xrc_srqn;
	/* DETH */
	uint32_t qkey;
	uint32_t sqpn;
	/* parsed: headers' length, payload (without pad and ICRC), ICRC */
	uint32_t hdrlen;
	const uint8_t *payload;
	uint32_t paylen;
	uint32_t icrc;
};

/* The IP family a RoCEv2 GID stands for (IBTA A17.4.4): an IPv4-mapped
 * GID (::ffff:a.b.c.d) is the IPv4 address a.b.c.d, any other an IPv6
 * address. */
static inline int roce_gid_family(const uint8_t *gid)
{
	static const uint8_t v4_mapped[12] = { [10] = 0xff, [11] = 0xff };

	return memcmp(gid, v4_mapped, 12) ? AF_INET6 : AF_INET;
}

/* A hash of an IPv4 endpoint (GID IP16, UDP PORT), for small tables keyed
 * by it (a sender's connected sockets, a receiver's IPv4 ID guesses). */
static inline uint32_t roce_v4_endpoint_hash(const uint8_t *ip16, uint16_t port)
{
	uint32_t h = port * 2654435761u;

	for (int i = 12; i < 16; i++)
		h = (h ^ ip16[i]) * 16777619u;
	return h;
}

/* The Ethernet/IP/UDP fields around a RoCEv2 packet. */
struct roce_net {
	int family;               /* AF_INET or AF_INET6 */
	uint8_t smac[6], dmac[6];
	uint8_t src[16], dst[16]; /* IPv4: in the last 4 bytes (IPv4-mapped GID) */
	uint8_t tos;              /* IPv4 TOS or IPv6 traffic class */
	uint8_t ttl;              /* or hop limit */
	uint32_t flow_label;      /* IPv6 */
	uint16_t ip_id;           /* IPv4 */
	bool df;                  /* IPv4 don't-fragment */
	bool id_unknown;          /* IPv4 ID and DF not seen (a UDP socket received it) */
	uint16_t sport, dport;
	uint16_t udp_check;
};

/* Why a packet was rejected.  Each has a counter in the engine. */
enum roce_reason {
	ROCE_OK = 0,
	ROCE_E_TRUNCATED,         /* shorter than its headers and ICRC */
	ROCE_E_LENGTH,            /* an IP/UDP length disagrees with the bytes */
	ROCE_E_ETHERTYPE,         /* frame: not IPv4/IPv6 */
	ROCE_E_IP,                /* frame: IP version, options, fragment, not UDP */
	ROCE_E_PORT,              /* frame: UDP destination port is not 4791 */
	ROCE_E_TVER,              /* BTH transport header version is not 0 */
	ROCE_E_OPCODE,            /* opcode unknown or reserved */
	ROCE_E_PAD,               /* pad count impossible for this packet */
	ROCE_E_PAYLOAD,           /* payload where the opcode carries none */
	ROCE_E_ICRC,              /* invariant CRC mismatch */
	ROCE_REASON_COUNT,
};
const char *roce_reason_name(int reason);

/* Parse BTH ... ICRC (a UDP payload).  Checks every length and field the
 * format constrains; does not check the ICRC (see roce_icrc_check). */
int roce_parse(const uint8_t *buf, uint32_t len, struct roce_pkt *p);

/* Parse a whole Ethernet frame: Ethernet, IPv4/IPv6, UDP, then roce_parse
 * and the ICRC.  NET (if not NULL) receives the outer fields. */
int roce_parse_frame(const uint8_t *frame, uint32_t len, struct roce_pkt *p,
		     struct roce_net *net);

/* Ethernet, IP and UDP of a frame into NET; the UDP payload's (BTH ...
 * ICRC) offset and length into *OFF, *UDPLEN.  Lengths are checked against
 * the frame; the RoCEv2 part is not looked at.  ROCE_OK or a reason. */
int roce_parse_outer(const uint8_t *frame, uint32_t len, struct roce_net *net, uint32_t *off,
		     uint32_t *udplen);

/* Write the BTH and extended headers of P (opcode, fields) for PAYLEN bytes
 * of payload into BUF (CAP bytes).  Returns the header length, or -1 if the
 * opcode is unknown or CAP too small.  The pad count is derived from PAYLEN
 * (payload + pad is a multiple of 4, IBTA 9.2.1). */
int roce_build(uint8_t *buf, uint32_t cap, const struct roce_pkt *p, uint32_t paylen);
/* The most roce_build writes: BTH and the longest set of extended headers
 * (XRCETH + RETH + ImmDt, or DETH + ImmDt, or AtomicETH ...), rounded up. */
#define ROCE_MAX_HDR 64

/* Pad bytes after PAYLEN bytes of payload. */
static inline uint32_t roce_padlen(uint32_t paylen)
{
	return (4 - (paylen & 3)) & 3;
}

/* A whole frame: Ethernet/IP/UDP from NET, headers of P, PAYLOAD, pad and
 * ICRC, IPv4 header checksum.  Returns the frame length, or -1. */
int roce_build_frame(uint8_t *buf, uint32_t cap, const struct roce_pkt *p,
		     const struct roce_net *net, const void *payload, uint32_t paylen);

/* Ethernet, IP and UDP headers from NET for a UDP datagram of UDPLEN bytes
 * (UDP header included); IPv4 header checksum computed.  Returns their
 * length, or 0 if CAP is too small. */
uint32_t roce_write_outer(uint8_t *buf, uint32_t cap, const struct roce_net *net, uint32_t udplen);

/* ICRC (Annex A17.3.3) of a packet whose BTH and extended headers are
 * HDR[HDRLEN], followed by the payload iovecs and PADLEN zero bytes, sent
 * with the IP/UDP fields of NET.  The value to store little-endian. */
uint32_t roce_icrc(const struct roce_net *net, const uint8_t *hdr, uint32_t hdrlen,
		   const struct iovec *payload, int n, uint32_t padlen);

/* What changing the IPv4 ID by ID_XOR does to the ICRC of a packet of LEN
 * bytes (BTH ... ICRC): the CRC is affine in the ID bits, so the ICRC (as
 * a number, before it is stored little-endian) changes by this XOR.  Lets
 * a transport whose segmentation offload numbers the segments (GSO gives
 * segment k ID k) correct packets built for ID 0.  Each bit's change is
 * worked out once per size and kept by the calling thread. */
uint32_t roce_icrc_id_fix(uint32_t len, uint16_t id_xor);

/* Check the ICRC of BUF[LEN] (BTH ... ICRC) received with NET's fields.
 * When NET->id_unknown (IPv4 through a UDP socket, which does not reveal
 * the IP ID or DF), accept if some ID/DF makes the ICRC right and store
 * them in NET; NET->ip_id with DF is tried first (the likeliest ID, 0 from
 * uroce senders, a segment index in a coalesced datagram).  0 or ROCE_E_ICRC. */
int roce_icrc_check(struct roce_net *net, const uint8_t *buf, uint32_t len);

/* Fill NET's outer fields the way Linux sends a UDP datagram from an
 * unconnected socket with IP_PMTUDISC_DO: IPv4 DF, ID 0. */
void roce_net_from_socket(struct roce_net *net, int family, const uint8_t *src,
			  const uint8_t *dst, uint16_t sport, uint16_t dport);

/* Packet traces: pcap (UROCE_PCAP) or pcapng with annotations
 * (UROCE_TRACE).  A trace is bounded by MAX_BYTES; writes are serialised. */
struct roce_pcap;
struct roce_pcap *roce_pcap_open(const char *path, uint64_t max_bytes);
/* pcapng; APPL names the writing application in the section header. */
struct roce_pcap *roce_pcapng_open(const char *path, uint64_t max_bytes, const char *appl);
/* The clock of trace records: CLOCK_REALTIME in nanoseconds, the same for
 * every process of the host, so that traces of both ends merge. */
uint64_t roce_pcap_clock(void);
/* Record one UDP payload (BTH ... ICRC) as a frame with NET's outer headers. */
void roce_pcap_write(struct roce_pcap *pc, const struct roce_net *net,
		     const struct iovec *udp_payload, int n);
/* The same, stamped TS_NS (0: now), sent (OUT) or received. */
void roce_pcap_write_at(struct roce_pcap *pc, uint64_t ts_ns, bool out,
			const struct roce_net *net, const struct iovec *udp_payload, int n);
/* Record a whole frame. */
void roce_pcap_write_frame(struct roce_pcap *pc, const uint8_t *frame, uint32_t len);
/* pcapng: one systemd journal export entry ("FIELD=value\n" lines, among
 * them __REALTIME_TIMESTAMP in microseconds), LEN bytes. */
void roce_pcapng_journal(struct roce_pcap *pc, const char *entry, uint32_t len);
/* Made-up but stable MAC addresses for a synthesised Ethernet header. */
void roce_net_fake_macs(struct roce_net *net);
/* Packets written / left out because the size bound was reached. */
void roce_pcap_stats(struct roce_pcap *pc, uint64_t *written, uint64_t *skipped);
void roce_pcap_close(struct roce_pcap *pc);

#endif
