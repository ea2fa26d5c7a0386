// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * The invariant CRC of RoCEv2 (IBTA Annex A17.3.3).  It is the CRC-32 of
 * the Ethernet FCS (reflected, init and final xor ~0) over:
 *   8 bytes of 0xff standing in for the IB LRH,
 *   the IP header with the fields routers change set to all ones
 *     (IPv4: TOS, TTL, header checksum; IPv6: traffic class, flow label,
 *     hop limit),
 *   the UDP header with its checksum set to all ones,
 *   the BTH with byte 4 (FECN, BECN, reserved) set to all ones,
 *   everything after the BTH up to the ICRC (headers, payload, pad).
 * The CRC is ISA-L's crc32_gzip_refl, which uses PCLMULQDQ (x86) or the
 * ARMv8 CRC/PMULL instructions where the CPU has them and tables otherwise.
 *
 * A UDP socket does not reveal the IPv4 header's ID and DF bits, which the
 * ICRC covers.  uroce's own peers send ID 0 with DF (what Linux does for an
 * unconnected socket with IP_PMTUDISC_DO), so that is tried first.  Other
 * senders (rxe increments the ID) are checked by solving for those bits:
 * the CRC is affine over GF(2), so the 17 unknown bits change the result
 * by a linear map, and multiplying by x^(8n) modulo the CRC's polynomial
 * moves a change through the n bytes that follow it.  A CRC-32 detects every error within 32 bits, so
 * the map is injective and the solution, if any, is unique; the price is
 * that 17 of the 32 bits no longer check random corruption (a 2^-15 chance
 * to miss it, against 2^-32 when the ID is known).
 */
#include <endian.h>
#include <string.h>
#include <sys/socket.h>
#include <isa-l/crc.h>
#include <zlib.h>

#include "wire/bytes.h"
#include "wire/wire.h"

#if defined(__x86_64__)
/* ISA-L 2.30's AVX-512 CRC (crc32_gzip_refl_by16_10, Debian 12's) returns
 * with the upper halves of the vector registers in use: no vzeroupper.
 * Every SSE instruction after it (the packet builder's copies, glibc's)
 * then ran in the CPU's mixed state, measured as the first such
 * instruction after each CRC taking ~9 % of an ib_write_bw 1 MiB run
 * (docs/performance.md).  vzeroupper is an AVX instruction: only where
 * the CPU has AVX, the only place that CRC is chosen. */
static bool cpu_has_avx;

__attribute__((constructor)) static void icrc_cpu_init(void)
{
	cpu_has_avx = __builtin_cpu_supports("avx");
}

static inline void vector_state_clean(void)
{
	if (cpu_has_avx)
		__asm__ volatile("vzeroupper" ::: "memory");
}
#else
static inline void vector_state_clean(void)
{
}
#endif

static uint32_t crc(uint32_t c, const void *p, uint64_t n)
{
	uint32_t r = crc32_gzip_refl(c, (const unsigned char *)p, n);

	vector_state_clean();
	return r;
}

/* The CRC of the 8 bytes of 0xff that stand in for the LRH: every ICRC
 * starts from it. */
static uint32_t crc_lrh(void)
{
	static const uint8_t lrh[8] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	static uint32_t c;   /* 0 until computed (the CRC of 8 x 0xff is not 0) */

	if (!c)
		c = crc(0, lrh, 8);
	return c;
}

/* Longest masked IP + UDP header (IPv6), and the longest prefix put before
 * one CRC call: that plus a BTH and its extended headers (a packet's HDR,
 * at most ROCE_MAX_HDR) and, for small packets, the payload. */
enum { OUTER_MAX = 40 + 8, SMALL_PAYLOAD = 256 };

/* The masked IP and UDP headers into H (OUTER_MAX bytes); their length. */
static uint32_t put_outer(uint8_t *h, const struct roce_net *net, uint16_t ip_id, bool df,
			  uint32_t udplen)
{
	uint32_t n;

	if (net->family == AF_INET6) {
		memset(h, 0xff, 4); /* version, traffic class, flow label */
		h[0] = 0x6f;
		put16(h + 4, udplen);
		h[6] = ROCE_IPPROTO_UDP;
		h[7] = 0xff;
		memcpy(h + 8, net->src, 16);
		memcpy(h + 24, net->dst, 16);
		n = 40;
	} else {
		h[0] = 0x45;
		h[1] = 0xff;
		put16(h + 2, 20 + udplen);
		put16(h + 4, ip_id);
		put16(h + 6, df ? 0x4000 : 0);
		h[8] = 0xff;
		h[9] = ROCE_IPPROTO_UDP;
		h[10] = h[11] = 0xff;
		memcpy(h + 12, net->src + 12, 4);
		memcpy(h + 16, net->dst + 12, 4);
		n = 20;
	}
	put16(h + n, net->sport);
	put16(h + n + 2, net->dport);
	put16(h + n + 4, udplen);
	h[n + 6] = h[n + 7] = 0xff;
	return n + 8;
}

/* The masked outer headers, then HDR[HDRLEN] (a BTH first) with the BTH's
 * variant byte masked, into H: their length.  One CRC call covers them
 * all: ISA-L's call has a fixed cost that five calls per packet of 64
 * bytes paid five times (59 against 21 ns). */
static uint32_t put_prefix(uint8_t *h, const struct roce_net *net, uint16_t ip_id, bool df,
			   uint32_t udplen, const uint8_t *hdr, uint32_t hdrlen)
{
	uint32_t n = put_outer(h, net, ip_id, df, udplen);

	memcpy(h + n, hdr, hdrlen);
	h[n + 4] = 0xff; /* BTH byte 4: FECN, BECN, reserved */
	return n + hdrlen;
}

uint32_t roce_icrc(const struct roce_net *net, const uint8_t *hdr, uint32_t hdrlen,
		   const struct iovec *payload, int n, uint32_t padlen)
{
	static const uint8_t zero[4];
	uint8_t h[OUTER_MAX + ROCE_MAX_HDR + SMALL_PAYLOAD + 4];
	uint32_t paylen = 0, head = hdrlen < ROCE_MAX_HDR ? hdrlen : ROCE_MAX_HDR, len, c;

	for (int i = 0; i < n; i++)
		paylen += payload[i].iov_len;
	len = put_prefix(h, net, net->ip_id, net->df,
			 sizeof(struct roce_udp) + hdrlen + paylen + padlen + ROCE_ICRC_LEN, hdr, head);
	if (head == hdrlen && paylen <= SMALL_PAYLOAD) {
		/* Small: payload and pad into the same buffer, one call. */
		for (int i = 0; i < n; i++) {
			memcpy(h + len, payload[i].iov_base, payload[i].iov_len);
			len += payload[i].iov_len;
		}
		memset(h + len, 0, padlen & 3);
		return crc(crc_lrh(), h, len + (padlen & 3));
	}
	c = crc(crc(crc_lrh(), h, len), hdr + head, hdrlen - head);
	for (int i = 0; i < n; i++)
		c = crc(c, payload[i].iov_base, payload[i].iov_len);
	return crc(c, zero, padlen & 3);
}

/* The CRC of BUF[LEN] (BTH ... before the ICRC) with ID and DF. */
static uint32_t crc_packet(const struct roce_net *net, uint16_t id, bool df, const uint8_t *buf,
			   uint32_t len)
{
	uint8_t h[OUTER_MAX + sizeof(struct roce_bth)];
	uint32_t n = put_prefix(h, net, id, df, sizeof(struct roce_udp) + len + ROCE_ICRC_LEN, buf,
				sizeof(struct roce_bth));

	return crc(crc(crc_lrh(), h, n), buf + sizeof(struct roce_bth),
		   len - sizeof(struct roce_bth));
}

/* A CRC register moved past N zero bytes is multiplied by x^(8 N) modulo
 * the CRC-32 polynomial.  Bit-reflected, as the register: bit 31 is x^0.
 * (zlib has this as crc32_combine_gen/_op only from 1.2.12; Ubuntu 22.04
 * ships 1.2.11.) */
#define CRC32_POLY_REFLECTED 0xedb88320u

static uint32_t gf2_mulmod(uint32_t a, uint32_t b)
{
	uint32_t r = 0;

	for (int i = 31; i >= 0; i--) {
		if (a >> i & 1)
			r ^= b;
		b = b >> 1 ^ (b & 1 ? CRC32_POLY_REFLECTED : 0);   /* b *= x */
	}
	return r;
}

/* x^(8 N) mod P, by squaring x^8. */
static uint32_t crc_zeros_op(size_t n)
{
	uint32_t r = 1u << 31, sq = 1u << 23;   /* 1 and x^8 */

	for (; n; n >>= 1, sq = gf2_mulmod(sq, sq))
		if (n & 1)
			r = gf2_mulmod(r, sq);
	return r;
}

/* The change in the final CRC when a 2-byte field changes by V: the raw
 * register difference of the two bytes, moved by OP (crc_zeros_op) through
 * the bytes that follow the field.  zlib's crc32 is the same CRC; for two
 * bytes its table beats ISA-L's vector code, which also needs a vzeroupper. */
static uint32_t field_delta(uint16_t v, uint32_t op)
{
	static const uint8_t zero[2];
	uint8_t b[2];

	put16(b, v);
	return gf2_mulmod(op, (uint32_t)(crc32(0, b, 2) ^ crc32(0, zero, 2)));
}

/* Per-thread tables of what depends only on a packet's size, for the
 * last KEPT_SIZES sizes: a stream's packets come in one or two. */
enum { KEPT_SIZES = 4 };

/* The slot of such a table (sizes LENS, next to refill *NEXT) that holds
 * LEN, or the one refilled for it, with *FILL set. */
static unsigned int kept_slot(uint32_t lens[KEPT_SIZES], unsigned int *next, uint32_t len,
			      bool *fill)
{
	unsigned int i;

	for (i = 0; i < KEPT_SIZES; i++)
		if (lens[i] == len) {
			*fill = false;
			return i;
		}
	i = (*next)++ % KEPT_SIZES;
	lens[i] = len;
	*fill = true;
	return i;
}

/* Each ID bit's change of the ICRC of one size, worked out when the size
 * is first seen: a crc_zeros_op map and one field_delta per bit.  Worked
 * out for every GSO datagram, they cost 0.5 us per 16 segments (0.06 us
 * kept), ~2 % of a core at 20 Gbit/s.  All 16 at once: a connected
 * socket's IDs (udp_txconn.c) set any of them, and a lookup in the loop
 * below cost a call for the thread-local table each time. */
static __thread struct {
	uint32_t len[KEPT_SIZES];    /* BTH ... ICRC; 0: unused */
	unsigned int next;
	uint32_t bit[KEPT_SIZES][16];
} id_fixes;

uint32_t roce_icrc_id_fix(uint32_t len, uint16_t id_xor)
{
	__typeof__(id_fixes) *t = &id_fixes;
	bool fill;
	unsigned int i = kept_slot(t->len, &t->next, len, &fill);
	uint32_t *bit = t->bit[i], d = 0;

	if (fill) {
		/* Bytes covered after the IPv4 ID field (offset 4 of the IP
		 * header): the rest of the IP header, UDP, BTH ... before the
		 * ICRC. */
		uint32_t after = len < ROCE_ICRC_LEN ? ROCE_ICRC_LEN : len;
		uint32_t map = crc_zeros_op(20 - 6 + sizeof(struct roce_udp) + after -
					    ROCE_ICRC_LEN);

		for (unsigned int b = 0; b < 16; b++)
			bit[b] = field_delta((uint16_t)(1u << b), map);
	}
	/* Linear in the ID bits: the sum of each set bit's own change. */
	for (unsigned int x = id_xor; x; x &= x - 1)
		d ^= bit[__builtin_ctz(x)];
	return d;
}

enum { ID_BITS = 16, UNKNOWNS = ID_BITS + 1 };

/* Solving D = sum of x_k * F[k] over GF(2) for the ID and DF bits x of
 * packets of one size: the F[k] (what each bit changes) in echelon form,
 * each row with the bits x it combines.  ~1 us to work out; every packet
 * of an rxe peer (IDs that count up) needs them. */
struct id_solver {
	int rank;
	uint32_t vec[UNKNOWNS], comb[UNKNOWNS], pivot[UNKNOWNS];
};
static __thread struct {
	uint32_t len[KEPT_SIZES];    /* BTH ... before the ICRC; 0: unused */
	unsigned int next;
	struct id_solver s[KEPT_SIZES];
} id_solvers;

static void solver_init(struct id_solver *s, uint32_t len)
{
	/* The ID bits' changes are roce_icrc_id_fix's; DF's: the bytes
	 * covered after the flags/fragment field (offset 6 of the IP header)
	 * move its change. */
	uint32_t op_df = crc_zeros_op(20 - 8 + sizeof(struct roce_udp) + len);

	s->rank = 0;
	for (int k = 0; k < UNKNOWNS; k++) {
		uint32_t v = k < ID_BITS ? roce_icrc_id_fix(len + ROCE_ICRC_LEN, (uint16_t)(1u << k)) :
					   field_delta(0x4000, op_df);
		uint32_t c = 1u << k;

		for (int i = 0; i < s->rank; i++)
			if (v & s->pivot[i]) {
				v ^= s->vec[i];
				c ^= s->comb[i];
			}
		if (!v)
			continue;
		s->pivot[s->rank] = v & -v;
		s->vec[s->rank] = v;
		s->comb[s->rank++] = c;
	}
}

static const struct id_solver *solver_of_size(uint32_t len)
{
	bool fill;
	unsigned int i = kept_slot(id_solvers.len, &id_solvers.next, len, &fill);

	if (fill)
		solver_init(&id_solvers.s[i], len);
	return &id_solvers.s[i];
}

/* The x bits that change the CRC by D, or -1. */
static long solve(const struct id_solver *s, uint32_t d)
{
	uint32_t x = 0;

	for (int i = 0; i < s->rank; i++)
		if (d & s->pivot[i]) {
			d ^= s->vec[i];
			x ^= s->comb[i];
		}
	return d ? -1 : (long)x;
}

int roce_icrc_check(struct roce_net *net, const uint8_t *buf, uint32_t len)
{
	uint32_t want, got;
	bool unknown = net->family != AF_INET6 && net->id_unknown;
	long x;

	if (len < sizeof(struct roce_bth) + ROCE_ICRC_LEN)
		return ROCE_E_ICRC;
	len -= ROCE_ICRC_LEN;
	memcpy(&want, buf + len, 4);
	want = le32toh(want);
	got = crc_packet(net, net->ip_id, unknown ? true : net->df, buf, len);
	if (got == want) {
		if (unknown) {
			net->df = true;
			net->id_unknown = false;
		}
		return ROCE_OK;
	}
	if (!unknown)
		return ROCE_E_ICRC;
	/* X says which bits differ from the guess tried above (ID, DF set) */
	x = solve(solver_of_size(len), got ^ want);
	if (x < 0)
		return ROCE_E_ICRC;
	net->ip_id ^= x & 0xffff;
	net->df = !(x >> ID_BITS & 1);
	net->id_unknown = false;
	return ROCE_OK;
}
