/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The wire tests' pcap reader: libpcap files of Ethernet frames, and the
 * UDP payload of a RoCEv2 frame.  Header-only: each test program is one file. */
#ifndef UROCE_TESTS_PCAP_IN_H
#define UROCE_TESTS_PCAP_IN_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "wire/wire.h"

#ifndef MAX_FRAME
#define MAX_FRAME 16384
#endif

/* ---- a tiny pcap reader (libpcap file format, Ethernet link type) ---- */

struct pcap_in {
	FILE *f;
	bool swap;
};

static inline uint32_t rd32(const uint8_t *p, bool swap)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return swap ? __builtin_bswap32(v) : v;
}

static inline int pcap_in_open(struct pcap_in *in, const char *path)
{
	uint8_t h[24];
	uint32_t magic;

	in->f = fopen(path, "rb");
	if (!in->f || fread(h, 1, 24, in->f) != 24)
		return -1;
	memcpy(&magic, h, 4);
	in->swap = magic == 0xd4c3b2a1u || magic == 0x4d3cb2a1u;
	magic = rd32(h, in->swap);
	if (magic != 0xa1b2c3d4u && magic != 0xa1b23c4du)
		return -1;
	return rd32(h + 20, in->swap) == 1 ? 0 : -1; /* LINKTYPE_ETHERNET */
}

/* The next record into BUF (MAX_FRAME); its length, 0 at the end, -1 on error. */
static inline int pcap_in_next(struct pcap_in *in, uint8_t *buf)
{
	uint8_t r[16];
	uint32_t caplen;

	if (fread(r, 1, 16, in->f) != 16)
		return 0;
	caplen = rd32(r + 8, in->swap);
	if (caplen > MAX_FRAME || fread(buf, 1, caplen, in->f) != caplen)
		return -1;
	return caplen;
}

/* The UDP payload of a RoCEv2 frame (dport 4791), or NULL. */
static inline const uint8_t *udp_payload(const uint8_t *f, uint32_t len, uint32_t *plen)
{
	uint16_t type = (uint16_t)f[12] << 8 | f[13];
	uint32_t ip = type == ROCE_ETHERTYPE_IPV6 ? 40 : 20, u = 14 + ip;

	if (len < u + 8 || (type != ROCE_ETHERTYPE_IPV4 && type != ROCE_ETHERTYPE_IPV6))
		return NULL;
	if ((f[u + 2] << 8 | f[u + 3]) != ROCE_UDP_PORT)
		return NULL;
	*plen = ((uint32_t)f[u + 4] << 8 | f[u + 5]) - 8;
	return f + u + 8;
}

#endif
