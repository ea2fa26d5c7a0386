// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Ethernet, IPv4/IPv6 and UDP around RoCEv2 packets for the xdp transport:
 * the wire module writes and reads the headers (roce_write_outer,
 * roce_parse_outer); this file maps them to the transport's path and
 * receive records and adds the IPv6 UDP checksum.
 */
#include <errno.h>
#include <string.h>
#include <netinet/in.h>

#include "transport/xdp/xdp_frame.h"
#include "wire/wire.h"

#define DEFAULT_HOPS 64

/* RFC 1071 one's-complement sum over LEN bytes, added to SUM; the bytes
 * start at offset *POS of the data summed (a byte at an odd offset is the
 * low half of its 16-bit word), which moves on by LEN. */
static uint32_t csum_add(uint32_t sum, const uint8_t *p, uint32_t len, uint32_t *pos)
{
	if (len && (*pos & 1)) {
		sum += *p++;
		len--;
		++*pos;
	}
	*pos += len;
	for (; len > 1; p += 2, len -= 2)
		sum += (uint32_t)p[0] << 8 | p[1];
	if (len)
		sum += (uint32_t)p[0] << 8;
	return sum;
}

static uint16_t csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

void uroce_frame_build(const struct iovec *frame, unsigned int nframes, const uint8_t src_mac[6],
		       const uint8_t dst_mac[6], const struct uroce_path *path,
		       uint32_t payload_len)
{
	uint32_t udp_len = UROCE_UDP_HLEN + payload_len, hlen = uroce_frame_hlen(path->family);
	uint8_t *first = frame[0].iov_base;
	struct roce_net net;

	/* IPv4: DF and ID 0, the values the engine's ICRC covers (transport.h). */
	roce_net_from_socket(&net, path->family, path->src, path->dst, path->sport,
			     path->dport ? path->dport : UROCE_XPORT_ROCE_PORT);
	memcpy(net.smac, src_mac, 6);
	memcpy(net.dmac, dst_mac, 6);
	net.tos = path->tclass;
	net.ttl = path->hop_limit ? path->hop_limit : DEFAULT_HOPS;
	net.flow_label = path->flow_label;
	net.udp_check = 0;   /* IPv4: none (allowed, IBTA A17.3.3) */
	roce_write_outer(first, hlen, &net, udp_len);
	if (path->family == AF_INET6) {
		/* RFC 8200 8.1: a peer's kernel drops IPv6 UDP without a checksum. */
		uint8_t *ip = first + UROCE_ETH_HLEN, *udp = first + hlen - UROCE_UDP_HLEN;
		uint32_t pos = 0, sum = csum_add(0, ip + 8, 32, &pos) + udp_len + IPPROTO_UDP;
		uint16_t c;

		pos = 0;
		sum = csum_add(sum, udp, (uint32_t)frame[0].iov_len - (hlen - UROCE_UDP_HLEN), &pos);
		for (unsigned int i = 1; i < nframes; i++)
			sum = csum_add(sum, frame[i].iov_base, (uint32_t)frame[i].iov_len, &pos);
		c = csum_fold(sum);
		c = c ? c : 0xffff;
		udp[6] = c >> 8;
		udp[7] = c & 0xff;
	}
}

int uroce_frame_parse(uint8_t *frame, uint32_t len, struct uroce_rx *rx)
{
	struct roce_net net;
	uint32_t off, plen;
	int r = roce_parse_outer(frame, len, &net, &off, &plen);

	if (r != ROCE_OK)
		return r;
	memset(rx, 0, sizeof(*rx));
	rx->buf = frame + off;
	rx->len = plen;
	rx->family = net.family;
	memcpy(rx->src_ip, net.src, 16);
	memcpy(rx->dst_ip, net.dst, 16);
	rx->src_port = net.sport;
	rx->dst_port = net.dport;
	rx->tos = net.tos;
	rx->ttl = net.ttl;
	rx->flow = net.flow_label;
	rx->ip_id = net.ip_id;
	rx->df = net.df;
	rx->ip_id_exact = net.family == AF_INET;
	rx->has_macs = true;
	memcpy(rx->smac, net.smac, 6);
	memcpy(rx->dmac, net.dmac, 6);
	return 0;
}
