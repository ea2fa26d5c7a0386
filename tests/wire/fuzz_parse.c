// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * libFuzzer target of the RoCEv2 parser.  The input is tried both as an
 * Ethernet frame and as a UDP payload (BTH ... ICRC): roce_parse_frame,
 * roce_parse and roce_icrc_check (IPv4 ID known and unknown, IPv6) must
 * not crash or read out of bounds, and whatever is accepted must come
 * back byte for byte from roce_build / roce_build_frame, except the bits
 * the builder cannot know (reserved fields, IPv4 header checksum).  The
 * input is also tried as a CM MAD (cm_mad_parse / cm_mad_build).
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "wire/cm_mad.h"
#include "wire/wire.h"

#define CHECK(x) do { if (!(x)) { fprintf(stderr, "fuzz_parse: %s\n", #x); abort(); } } while (0)

/* Compare a rebuilt BTH and extended headers with the input, ignoring the
 * reserved bits (IBTA 9.2: resv6 in byte 4, resv7 in byte 8; 9.3.3: the
 * DETH's resv8, the XRCETH's; A17.9.3: the CNP's 16 reserved bytes), which the parser
 * ignores and the builder zeroes.  Whether the input's reserved bits that
 * the ICRC covers (all but resv6) were zero. */
static bool same_headers(const uint8_t *in, const uint8_t *out, const struct roce_opinfo *o)
{
	uint8_t a[64], b[64];

	memcpy(a, in, o->hdrlen);
	memcpy(b, out, o->hdrlen);
	a[4] &= 0xc0;
	a[8] &= 0x80;
	if (o->hdrs & (1u << ROCE_H_DETH))
		a[o->off[ROCE_H_DETH] + 4] = 0;
	if (o->hdrs & (1u << ROCE_H_XRCETH))
		a[o->off[ROCE_H_XRCETH]] = 0;
	if (o->hdrs & (1u << ROCE_H_CNP))
		memset(a + o->off[ROCE_H_CNP], 0, ROCE_CNP_RESERVED);
	CHECK(!memcmp(a, b, o->hdrlen));
	a[4] = in[4];
	return !memcmp(a, in, o->hdrlen);
}

static bool all_zero(const uint8_t *b, uint32_t n)
{
	while (n--)
		if (*b++)
			return false;
	return true;
}

static void fuzz_udp(const uint8_t *d, size_t n)
{
	static const uint8_t a4[16] = { [10] = 0xff, 0xff, 10, 0, 0, 1 };
	struct roce_pkt p;
	struct roce_net net;
	uint8_t out[64];

	if (roce_parse(d, n, &p) != ROCE_OK)
		return;
	CHECK(p.info && p.hdrlen + p.paylen + p.padcnt + ROCE_ICRC_LEN == n);
	CHECK(roce_build(out, sizeof(out), &p, p.paylen) == (int)p.hdrlen);
	same_headers(d, out, p.info);
	roce_net_from_socket(&net, AF_INET, a4, a4, 0xc000, ROCE_UDP_PORT);
	roce_icrc_check(&net, d, n);
	roce_net_from_socket(&net, AF_INET, a4, a4, 0xc000, ROCE_UDP_PORT);
	net.id_unknown = true;
	if (roce_icrc_check(&net, d, n) == ROCE_OK) {
		net.id_unknown = false;
		CHECK(roce_icrc_check(&net, d, n) == ROCE_OK);
	}
	roce_net_from_socket(&net, AF_INET6, a4, a4, 0xc000, ROCE_UDP_PORT);
	net.id_unknown = true;
	roce_icrc_check(&net, d, n);
}

/* A frame the parser accepted is rebuilt; the IPv4 header checksum (which
 * the ICRC masks and the parser ignores) and Ethernet padding aside. */
static void fuzz_frame(const uint8_t *d, size_t n)
{
	static uint8_t out[65536 + 128];
	struct roce_pkt p;
	struct roce_net net, u;
	uint32_t off, ulen;
	int len;

	if (roce_parse_frame(d, n, &p, &net) != ROCE_OK)
		return;
	off = 14 + (net.family == AF_INET6 ? 40 : 20) + 8;
	ulen = p.hdrlen + p.paylen + p.padcnt + ROCE_ICRC_LEN;
	len = roce_build_frame(out, sizeof(out), &p, &net, p.payload, p.paylen);
	CHECK(len == (int)(off + ulen) && (size_t)len <= n);
	if (net.family == AF_INET) {
		out[24] = d[24];
		out[25] = d[25];
	}
	CHECK(!memcmp(d, out, off));
	CHECK(!p.paylen || !memcmp(p.payload, out + off + p.hdrlen, p.paylen));
	/* pad bytes and reserved bits are the sender's; when they are zero,
	 * the builder's ICRC must be the input's */
	if (same_headers(d + off, out + off, p.info) &&
	    all_zero(d + off + p.hdrlen + p.paylen, p.padcnt))
		CHECK(!memcmp(d + off + p.hdrlen, out + off + p.hdrlen, ulen - p.hdrlen));
	/* a UDP socket's view: the ID and DF are found again */
	u = net;
	u.id_unknown = true;
	CHECK(roce_icrc_check(&u, d + off, ulen) == ROCE_OK);
	if (net.family == AF_INET)
		CHECK(u.ip_id == net.ip_id && u.df == net.df);
}

/* The input as a CM MAD: a refusal is a known reason; what is accepted
 * encodes again, and that encoding decodes to the same message. */
static void fuzz_cm(const uint8_t *d, size_t n)
{
	static struct cm_msg m, m2;
	uint8_t out[CM_MAD_SIZE];
	int r = cm_mad_parse(d, n, &m);

	CHECK(r >= CM_MAD_OK && r < CM_MAD_REASON_COUNT);
	if (r != CM_MAD_OK)
		return;
	CHECK(cm_mad_build(&m, out) == CM_MAD_OK);
	CHECK(cm_mad_parse(out, sizeof(out), &m2) == CM_MAD_OK);
	CHECK(!memcmp(&m, &m2, sizeof(m)));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size > 65536)
		return 0;
	fuzz_udp(data, size);
	fuzz_frame(data, size);
	fuzz_cm(data, size);
	return 0;
}
