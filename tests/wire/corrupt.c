// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Corrupted RoCEv2 packets: for a valid packet of every opcode, over IPv4
 * and IPv6, every truncation, every single-bit flip, impossible pad
 * counts, payload where none belongs, TVer != 0, every unknown opcode and
 * IP/UDP lengths that lie.  Each class must be rejected with its reason
 * (or, for the fields the ICRC masks, accepted).  Every mutated packet
 * lives in its own exactly-sized heap block, so ASan sees any overread.
 * Prints a table of results per class and reason.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "wire/wire.h"

#define R(x) (1u << ROCE_E_##x)
#define OK_ (1u << ROCE_OK)

enum cls {
	C_TRUNC_FRAME, C_TRUNC_UDP, C_FLIP_COVERED, C_FLIP_MASKED, C_FLIP_NET, C_FLIP_NET_MASKED,
	C_FLIP_FRAME, C_FLIP_FRAME_BODY, C_FLIP_FRAME_MASKED, C_PAD_NOPAY, C_PAD_OVER, C_PAD_NOTLAST, C_PAYLOAD,
	C_UNALIGNED, C_OPCODE, C_TVER, C_IP_LEN, C_UDP_LEN, C_ETH_PAD, C_ETHERTYPE, C_IP_HDR,
	C_PORT, C_COUNT,
};

static const char *const cls_name[C_COUNT] = {
	[C_TRUNC_FRAME] = "truncated frame", [C_TRUNC_UDP] = "truncated UDP payload",
	[C_FLIP_COVERED] = "bit flip, ICRC-covered", [C_FLIP_MASKED] = "bit flip, BTH byte 4",
	[C_FLIP_NET] = "net field flip, covered", [C_FLIP_NET_MASKED] = "net field flip, masked",
	[C_FLIP_FRAME] = "frame flip, headers", [C_FLIP_FRAME_BODY] = "frame flip, after BTH",
	[C_FLIP_FRAME_MASKED] = "frame flip, masked field",
	[C_PAD_NOPAY] = "pad, opcode w/o payload", [C_PAD_OVER] = "pad > payload",
	[C_PAD_NOTLAST] = "pad on first/middle", [C_PAYLOAD] = "payload where none",
	[C_UNALIGNED] = "payload+pad % 4 != 0", [C_OPCODE] = "unknown opcode",
	[C_TVER] = "TVer != 0", [C_IP_LEN] = "IP length lies", [C_UDP_LEN] = "UDP length lies",
	[C_ETH_PAD] = "Ethernet padding", [C_ETHERTYPE] = "not IP ethertype",
	[C_IP_HDR] = "IP options/fragment/proto", [C_PORT] = "UDP dport != 4791",
};

static unsigned counts[C_COUNT][ROCE_REASON_COUNT];
static unsigned failures;

/* Count RESULT for class C; it must be one of ALLOWED (bits of reasons). */
static void expect(enum cls c, int result, unsigned allowed, const char *what, int opcode,
		   int at)
{
	if (result < 0 || result >= ROCE_REASON_COUNT) {
		failures++;
		fprintf(stderr, "FAIL: %s: opcode 0x%02x at %d: reason %d out of range\n",
			cls_name[c], opcode, at, result);
		return;
	}
	counts[c][result]++;
	if (!(allowed & (1u << result)) && failures++ < 50)
		fprintf(stderr, "FAIL: %s (%s): opcode 0x%02x at %d: %s\n", cls_name[c], what,
			opcode, at, roce_reason_name(result));
}

/* ---- valid packets ---- */

struct sample {
	uint8_t f[1024];
	int len;                  /* frame */
	int off;                  /* UDP payload offset */
	struct roce_net net;
	const struct roce_opinfo *o;
};

static void make_net(struct roce_net *n, int family)
{
	uint8_t src[16] = { 0xfd, 0x12, [14] = 0x34, 0x56 }, dst[16] = { 0xfd, 0x12, [15] = 9 };

	if (family == AF_INET) {
		static const uint8_t s4[16] = { [10] = 0xff, 0xff, 10, 1, 2, 3 };
		static const uint8_t d4[16] = { [10] = 0xff, 0xff, 10, 1, 2, 4 };

		memcpy(src, s4, 16);
		memcpy(dst, d4, 16);
	}
	roce_net_from_socket(n, family, src, dst, 0xc123, ROCE_UDP_PORT);
	memcpy(n->smac, "\x02\x00\x00\x00\x00\x01", 6);
	memcpy(n->dmac, "\x02\x00\x00\x00\x00\x02", 6);
	n->ip_id = 0x1234;
	n->tos = 0x02;
	n->flow_label = 0x12345;
}

/* A valid frame of OPCODE with PAYLEN bytes of payload (0 if it has none). */
static void make_sample(struct sample *s, uint8_t opcode, int family, uint32_t paylen)
{
	static uint8_t data[512];
	struct roce_pkt p = {
		.opcode = opcode, .pkey = 0xffff, .dqpn = 0x123456, .psn = 0xabcdef,
		.ackreq = true, .va = 0x1122334455667788ull, .rkey = 0x99aabbcc, .dma_len = 4096,
		.syndrome = 0x1f, .msn = 77, .swap_add = 5, .compare = 6, .orig = 7,
		.imm = htonl(0xfeedbeef), .inv_rkey = 0x42, .qkey = 0x11111111, .sqpn = 0x22,
	};

	for (unsigned i = 0; i < sizeof(data); i++)
		data[i] = i * 13 + 1;
	s->o = roce_opinfo(opcode);
	make_net(&s->net, family);
	if (!s->o->payload)
		paylen = 0;
	s->len = roce_build_frame(s->f, sizeof(s->f), &p, &s->net, data, paylen);
	s->off = 14 + (family == AF_INET6 ? 40 : 20) + 8;
}

/* Payload sizes worth corrupting for O: none, with and without pad. */
static int sizes(const struct roce_opinfo *o, uint32_t *out)
{
	if (!o->payload)
		return out[0] = 0, 1;
	if (!o->last)
		return out[0] = 64, 1;
	out[0] = 0;
	out[1] = 1;
	out[2] = 61;
	return 3;
}

static uint8_t *dup(const uint8_t *b, uint32_t n)
{
	uint8_t *c = malloc(n ? n : 1);

	memcpy(c, b, n);
	return c;
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = v >> 8;
	p[1] = v;
}

static uint16_t get16(const uint8_t *p)
{
	return p[0] << 8 | p[1];
}

static void ipv4_checksum(uint8_t *ip)
{
	uint32_t sum = 0;

	put16(ip + 10, 0);
	for (int i = 0; i < 20; i += 2)
		sum += get16(ip + i);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	put16(ip + 10, ~sum);
}

/* Restore a right ICRC after editing the UDP payload U[LEN] (so that only
 * the edit is wrong). */
static void fix_icrc(const struct roce_net *net, uint8_t *u, uint32_t len)
{
	uint32_t c = htole32(roce_icrc(net, u, len - 4, NULL, 0, 0));

	memcpy(u + len - 4, &c, 4);
}

static int parse_frame(const uint8_t *f, uint32_t len)
{
	uint8_t *c = dup(f, len);
	struct roce_pkt p;
	struct roce_net n;
	int r = roce_parse_frame(c, len, &p, &n);

	free(c);
	return r;
}

/* roce_parse then, if the structure is fine, the ICRC with NET. */
static int parse_udp(const uint8_t *u, uint32_t len, const struct roce_net *net)
{
	uint8_t *c = dup(u, len);
	struct roce_net n = *net;
	struct roce_pkt p;
	int r = roce_parse(c, len, &p);

	if (r == ROCE_OK)
		r = roce_icrc_check(&n, c, len);
	free(c);
	return r;
}

/* ---- the classes ---- */

static void truncations(const struct sample *s)
{
	uint32_t ulen = s->len - s->off;

	for (int cut = 0; cut < s->len; cut++)
		expect(C_TRUNC_FRAME, parse_frame(s->f, cut), R(TRUNCATED) | R(LENGTH), "frame",
		       s->o->opcode, cut);
	/* No IP/UDP length to disagree with: a cut payload is caught by the pad
	 * count, the 4-byte alignment or the ICRC. */
	for (uint32_t cut = 0; cut < ulen; cut++)
		expect(C_TRUNC_UDP, parse_udp(s->f + s->off, cut, &s->net),
		       R(TRUNCATED) | R(PAD) | R(LENGTH) | R(ICRC), "udp", s->o->opcode, cut);
}

/* Every bit of BTH ... ICRC with the exact NET: only BTH byte 4 is masked. */
static void flips_udp(const struct sample *s)
{
	uint32_t ulen = s->len - s->off;

	for (uint32_t bit = 0; bit < ulen * 8; bit++) {
		uint8_t *c = dup(s->f + s->off, ulen);
		struct roce_net n = s->net;
		bool masked = bit / 8 == 4;

		c[bit / 8] ^= 0x80 >> bit % 8;
		expect(masked ? C_FLIP_MASKED : C_FLIP_COVERED, roce_icrc_check(&n, c, ulen),
		       masked ? OK_ : R(ICRC), "icrc", s->o->opcode, bit);
		free(c);
	}
}

/* Flip each bit of a net field of SIZE bytes at P (inside a copy of NET). */
static void flip_net_field(const struct sample *s, size_t field, size_t size, bool masked,
			   const char *what)
{
	for (size_t bit = 0; bit < size * 8; bit++) {
		struct roce_net n = s->net;
		uint8_t *c = dup(s->f + s->off, s->len - s->off);

		((uint8_t *)&n)[field + bit / 8] ^= 1u << bit % 8;
		expect(masked ? C_FLIP_NET_MASKED : C_FLIP_NET, roce_icrc_check(&n, c, s->len - s->off),
		       masked ? OK_ : R(ICRC), what, s->o->opcode, bit);
		free(c);
	}
}

#define NET_FIELD(f) offsetof(struct roce_net, f), sizeof(((struct roce_net *)0)->f)

/* The IP/UDP fields of NET: covered ones must fail, masked ones pass
 * (Annex A17.3.3: TOS/traffic class, TTL/hop limit, flow label, UDP checksum). */
static void flips_net(const struct sample *s)
{
	bool v6 = s->net.family == AF_INET6;
	size_t a = v6 ? 0 : 12, alen = v6 ? 16 : 4;

	flip_net_field(s, offsetof(struct roce_net, src) + a, alen, false, "src");
	flip_net_field(s, offsetof(struct roce_net, dst) + a, alen, false, "dst");
	flip_net_field(s, NET_FIELD(sport), false, "sport");
	flip_net_field(s, NET_FIELD(dport), false, "dport");
	if (!v6) {
		struct roce_net n = s->net;
		uint8_t *c = dup(s->f + s->off, s->len - s->off);

		flip_net_field(s, NET_FIELD(ip_id), false, "ip_id");
		n.df = !n.df;
		expect(C_FLIP_NET, roce_icrc_check(&n, c, s->len - s->off), R(ICRC), "df",
		       s->o->opcode, 0);
		free(c);
	} else {
		flip_net_field(s, offsetof(struct roce_net, flow_label), 2, true, "flow_label");
	}
	flip_net_field(s, NET_FIELD(tos), true, "tos");
	flip_net_field(s, NET_FIELD(ttl), true, "ttl");
	flip_net_field(s, NET_FIELD(udp_check), true, "udp_check");
}

/* Is frame byte I in a field the ICRC masks?  1 yes, 0 no, -1 either (the
 * IPv4 header checksum, which the parser may or may not check). */
static int frame_masked(const struct sample *s, int i, int bit)
{
	int ip = i - 14, u = s->off - 8;

	if (s->net.family == AF_INET6) {
		if (ip == 0)
			return bit >= 4;           /* low nibble: traffic class */
		if (ip >= 1 && ip <= 3)
			return 1;                  /* traffic class, flow label */
		if (ip == 7)
			return 1;                  /* hop limit */
	} else {
		if (ip == 1 || ip == 8)
			return 1;                  /* TOS, TTL */
		if (ip == 10 || ip == 11)
			return -1;                 /* header checksum */
	}
	if (i == u + 6 || i == u + 7)
		return -1;                         /* UDP checksum: 0 = none */
	return i == s->off + 4;                    /* BTH byte 4 */
}

/* Every bit from the ethertype on, through roce_parse_frame.  IPv4 TOS and
 * TTL flips get a right header checksum, so only the ICRC judges them. */
static void flips_frame(const struct sample *s)
{
	for (int bit = 12 * 8; bit < s->len * 8; bit++) {
		int i = bit / 8, m = frame_masked(s, i, bit % 8);
		uint8_t *c = dup(s->f, s->len);
		int r;

		c[i] ^= 0x80 >> bit % 8;
		if (s->net.family == AF_INET && m == 1 && i < s->off)
			ipv4_checksum(c + 14);
		r = roce_parse_frame(c, s->len, &(struct roce_pkt){ 0 }, &(struct roce_net){ 0 });
		free(c);
		if (m < 0)
			continue;
		if (m)
			expect(C_FLIP_FRAME_MASKED, r, OK_, "frame", s->o->opcode, bit);
		else if (i >= s->off + (int)sizeof(struct roce_bth))
			expect(C_FLIP_FRAME_BODY, r, R(ICRC), "frame", s->o->opcode, bit);
		else
			expect(C_FLIP_FRAME, r, ~OK_, "frame", s->o->opcode, bit);
	}
}

/* Rewrite the BTH flags byte (pad count, TVer), fix the ICRC, parse. */
static int with_flags(const struct sample *s, uint8_t pad, uint8_t tver, uint32_t extra)
{
	uint32_t ulen = s->len - s->off, n = ulen + extra;
	uint8_t *c = calloc(1, n);
	struct roce_net net = s->net;
	struct roce_pkt p;
	int r;

	/* EXTRA zero bytes go before the ICRC */
	memcpy(c, s->f + s->off, ulen - 4);
	c[1] = (c[1] & ~(ROCE_BTH_PAD_MASK | ROCE_BTH_TVER_MASK)) | pad << ROCE_BTH_PAD_SHIFT | tver;
	fix_icrc(&net, c, n);
	r = roce_parse(c, n, &p);
	if (r == ROCE_OK)
		r = roce_icrc_check(&net, c, n);
	free(c);
	return r;
}

static void bad_pads(const struct sample *s, uint32_t paylen)
{
	const struct roce_opinfo *o = s->o;

	for (uint8_t pad = 1; pad <= 3; pad++) {
		if (!o->payload)
			expect(C_PAD_NOPAY, with_flags(s, pad, 0, 0), R(PAD), "pad", o->opcode, pad);
		else if (!o->last)
			expect(C_PAD_NOTLAST, with_flags(s, pad, 0, 0), R(PAD), "pad", o->opcode, pad);
		else if (paylen == 0)
			expect(C_PAD_OVER, with_flags(s, pad, 0, 0), R(PAD), "pad", o->opcode, pad);
	}
	for (uint32_t extra = 1; extra <= 3; extra++)
		expect(C_UNALIGNED, with_flags(s, roce_padlen(paylen), 0, extra), R(LENGTH) | R(PAD),
		       "align", o->opcode, extra);
	if (!o->payload)
		expect(C_PAYLOAD, with_flags(s, 0, 0, 4), R(PAYLOAD), "payload", o->opcode, 4);
	for (uint8_t tver = 1; tver < 16; tver++)
		expect(C_TVER, with_flags(s, roce_padlen(paylen), tver, 0), R(TVER), "tver",
		       o->opcode, tver);
}

/* Set a 16-bit length at frame offset AT to VAL (IPv4: fix the header
 * checksum); roce_parse_frame must say ROCE_E_LENGTH. */
static void lying_length(const struct sample *s, enum cls c, int at, uint16_t val)
{
	uint8_t *f = dup(s->f, s->len);

	put16(f + at, val);
	if (s->net.family == AF_INET)
		ipv4_checksum(f + 14);
	expect(c, roce_parse_frame(f, s->len, &(struct roce_pkt){ 0 }, NULL), R(LENGTH), "len",
	       s->o->opcode, val);
	free(f);
}

static void lengths(const struct sample *s)
{
	static const int deltas[] = { 1, 4, 100, -1, -4, -8 };
	static const uint16_t absolute[] = { 0, 7, 0xffff };
	int ip = s->net.family == AF_INET6 ? 14 + 4 : 14 + 2, udp = s->off - 8 + 4;

	for (unsigned i = 0; i < sizeof(deltas) / sizeof(deltas[0]); i++) {
		lying_length(s, C_IP_LEN, ip, get16(s->f + ip) + deltas[i]);
		lying_length(s, C_UDP_LEN, udp, get16(s->f + udp) + deltas[i]);
	}
	for (unsigned i = 0; i < sizeof(absolute) / sizeof(absolute[0]); i++) {
		lying_length(s, C_IP_LEN, ip, absolute[i]);
		lying_length(s, C_UDP_LEN, udp, absolute[i]);
	}
}

/* Frame-level structure: trailing Ethernet padding is fine; a foreign
 * ethertype, IPv4 options, fragments, another protocol, another port not. */
static void frame_structure(const struct sample *s)
{
	uint8_t *f = calloc(1, s->len + 6);
	bool v4 = s->net.family == AF_INET;

	memcpy(f, s->f, s->len);
	expect(C_ETH_PAD, parse_frame(f, s->len + 6), OK_, "eth pad", s->o->opcode, 6);
	put16(f + 12, 0x8100);
	expect(C_ETHERTYPE, parse_frame(f, s->len), R(ETHERTYPE), "vlan", s->o->opcode, 12);
	memcpy(f, s->f, s->len);
	f[14 + (v4 ? 9 : 6)] = 6; /* TCP */
	if (v4)
		ipv4_checksum(f + 14);
	expect(C_IP_HDR, parse_frame(f, s->len), R(IP), "proto", s->o->opcode, 0);
	if (v4) {
		memcpy(f, s->f, s->len);
		f[14 + 6] |= 0x20; /* more fragments */
		ipv4_checksum(f + 14);
		expect(C_IP_HDR, parse_frame(f, s->len), R(IP), "MF", s->o->opcode, 0);
		memcpy(f, s->f, s->len);
		f[14] = 0x46; /* IHL 6: options */
		ipv4_checksum(f + 14);
		expect(C_IP_HDR, parse_frame(f, s->len), R(IP), "IHL", s->o->opcode, 0);
	}
	memcpy(f, s->f, s->len);
	put16(f + s->off - 6, 4790);
	expect(C_PORT, parse_frame(f, s->len), R(PORT), "port", s->o->opcode, 0);
	free(f);
}

/* All 256 opcodes: the table and the parser agree on which exist. */
static void opcodes(const struct roce_net *net)
{
	uint8_t known[256] = { 0 }, ops[256], b[64] = { 0 };
	int m = roce_opcodes(ops, 256);

	for (int i = 0; i < m; i++)
		known[ops[i]] = 1;
	for (int op = 0; op < 256; op++) {
		const struct roce_opinfo *o = roce_opinfo(op);
		struct roce_pkt p;

		if (!o != !known[op] || (o && o->opcode != op)) {
			failures++;
			fprintf(stderr, "FAIL: roce_opinfo(0x%02x) disagrees with roce_opcodes\n", op);
		}
		if (known[op])
			continue;
		b[0] = op;
		fix_icrc(net, b, 32);
		expect(C_OPCODE, roce_parse(b, 32, &p), R(OPCODE), "opcode", op, 0);
	}
}

static void one_sample(uint8_t op, int family, uint32_t paylen)
{
	struct sample s;

	make_sample(&s, op, family, paylen);
	if (s.len < 0 || parse_frame(s.f, s.len) != ROCE_OK) {
		failures++;
		fprintf(stderr, "FAIL: cannot build a valid 0x%02x packet\n", op);
		return;
	}
	truncations(&s);
	flips_udp(&s);
	flips_net(&s);
	flips_frame(&s);
	bad_pads(&s, s.o->payload ? paylen : 0);
	lengths(&s);
	frame_structure(&s);
}

static void print_table(void)
{
	printf("%-28s", "class");
	for (int r = 0; r < ROCE_REASON_COUNT; r++)
		printf(" %9.9s", roce_reason_name(r));
	printf("\n");
	for (int c = 0; c < C_COUNT; c++) {
		printf("%-28s", cls_name[c]);
		for (int r = 0; r < ROCE_REASON_COUNT; r++)
			printf(" %9u", counts[c][r]);
		printf("\n");
	}
}

int main(void)
{
	static const int families[] = { AF_INET, AF_INET6 };
	uint8_t ops[256];
	int m = roce_opcodes(ops, 256), samples = 0;
	struct roce_net net;

	for (int i = 0; i < m; i++)
		for (int f = 0; f < 2; f++) {
			uint32_t sz[3];
			int n = sizes(roce_opinfo(ops[i]), sz);

			for (int k = 0; k < n; k++, samples++)
				one_sample(ops[i], families[f], sz[k]);
		}
	make_net(&net, AF_INET);
	opcodes(&net);
	print_table();
	printf("opcodes: %d, samples: %d, failures: %u\n", m, samples, failures);
	for (int c = 0; c < C_COUNT; c++) {
		unsigned total = 0;

		for (int r = 0; r < ROCE_REASON_COUNT; r++)
			total += counts[c][r];
		if (!total) {
			failures++;
			fprintf(stderr, "FAIL: class \"%s\" never exercised\n", cls_name[c]);
		}
	}
	return failures != 0;
}
