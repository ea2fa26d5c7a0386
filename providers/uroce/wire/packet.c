// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Building and parsing RoCEv2 packets from the opcode table.  Every read
 * is checked against the buffer's length before it happens; a packet is
 * accepted only if its headers, pad count and length agree with its opcode.
 */
#include <endian.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>

#include "wire/bytes.h"
#include "wire/wire.h"


static const char *const reason_names[ROCE_REASON_COUNT] = {
	[ROCE_OK] = "ok",
	[ROCE_E_TRUNCATED] = "truncated",
	[ROCE_E_LENGTH] = "bad_length",
	[ROCE_E_ETHERTYPE] = "bad_ethertype",
	[ROCE_E_IP] = "bad_ip_header",
	[ROCE_E_PORT] = "bad_udp_port",
	[ROCE_E_TVER] = "bad_tver",
	[ROCE_E_OPCODE] = "bad_opcode",
	[ROCE_E_PAD] = "bad_pad",
	[ROCE_E_PAYLOAD] = "bad_payload",
	[ROCE_E_ICRC] = "bad_icrc",
};

const char *roce_reason_name(int reason)
{
	return reason >= 0 && reason < ROCE_REASON_COUNT ? reason_names[reason] : "unknown";
}

static void set_from_info(struct roce_pkt *p, const struct roce_opinfo *o)
{
	p->info = o;
	p->opcode = o->opcode;
	p->kind = o->kind;
	p->transport = o->transport;
	p->first = o->first;
	p->last = o->last;
	p->is_response = o->response;
	p->has_imm = o->imm;
	p->has_inv = o->inv;
}

/* The extended headers of O at B (the BTH), into P. */
static void read_ext(const struct roce_opinfo *o, const uint8_t *b, struct roce_pkt *p)
{
	const uint8_t *h;

	if (o->hdrs & (1u << ROCE_H_XRCETH))
		p->xrc_srqn = get32(b + o->off[ROCE_H_XRCETH]) & ROCE_QPN_MASK;
	if (o->hdrs & (1u << ROCE_H_DETH)) {
		h = b + o->off[ROCE_H_DETH];
		p->qkey = get32(h);
		p->sqpn = get32(h + 4) & ROCE_QPN_MASK;
	}
	if (o->hdrs & (1u << ROCE_H_RETH)) {
		h = b + o->off[ROCE_H_RETH];
		p->va = get64(h);
		p->rkey = get32(h + 8);
		p->dma_len = get32(h + 12);
	}
	if (o->hdrs & (1u << ROCE_H_ATOMICETH)) {
		h = b + o->off[ROCE_H_ATOMICETH];
		p->va = get64(h);
		p->rkey = get32(h + 8);
		p->swap_add = get64(h + 12);
		p->compare = get64(h + 20);
	}
	if (o->hdrs & (1u << ROCE_H_AETH)) {
		h = b + o->off[ROCE_H_AETH];
		p->syndrome = h[0];
		p->msn = get32(h) & 0xffffff;
	}
	if (o->hdrs & (1u << ROCE_H_ATOMICACKETH))
		p->orig = get64(b + o->off[ROCE_H_ATOMICACKETH]);
	if (o->hdrs & (1u << ROCE_H_IMMDT))
		memcpy(&p->imm, b + o->off[ROCE_H_IMMDT], 4);
	if (o->hdrs & (1u << ROCE_H_IETH))
		p->inv_rkey = get32(b + o->off[ROCE_H_IETH]);
}

static void write_ext(const struct roce_opinfo *o, uint8_t *b, const struct roce_pkt *p)
{
	uint8_t *h;

	if (o->hdrs & (1u << ROCE_H_XRCETH))
		put32(b + o->off[ROCE_H_XRCETH], p->xrc_srqn & ROCE_QPN_MASK);
	if (o->hdrs & (1u << ROCE_H_DETH)) {
		h = b + o->off[ROCE_H_DETH];
		put32(h, p->qkey);
		put32(h + 4, p->sqpn & ROCE_QPN_MASK);
	}
	if (o->hdrs & (1u << ROCE_H_RETH)) {
		h = b + o->off[ROCE_H_RETH];
		put64(h, p->va);
		put32(h + 8, p->rkey);
		put32(h + 12, p->dma_len);
	}
	if (o->hdrs & (1u << ROCE_H_ATOMICETH)) {
		h = b + o->off[ROCE_H_ATOMICETH];
		put64(h, p->va);
		put32(h + 8, p->rkey);
		put64(h + 12, p->swap_add);
		put64(h + 20, p->compare);
	}
	if (o->hdrs & (1u << ROCE_H_AETH))
		put32(b + o->off[ROCE_H_AETH], (uint32_t)p->syndrome << 24 | (p->msn & 0xffffff));
	if (o->hdrs & (1u << ROCE_H_ATOMICACKETH))
		put64(b + o->off[ROCE_H_ATOMICACKETH], p->orig);
	if (o->hdrs & (1u << ROCE_H_IMMDT))
		memcpy(b + o->off[ROCE_H_IMMDT], &p->imm, 4);
	if (o->hdrs & (1u << ROCE_H_IETH))
		put32(b + o->off[ROCE_H_IETH], p->inv_rkey);
	if (o->hdrs & (1u << ROCE_H_CNP))
		memset(b + o->off[ROCE_H_CNP], 0, ROCE_CNP_RESERVED);
}

int roce_parse(const uint8_t *b, uint32_t len, struct roce_pkt *p)
{
	const struct roce_opinfo *o;
	uint32_t body;

	memset(p, 0, sizeof(*p));
	if (len < sizeof(struct roce_bth) + ROCE_ICRC_LEN)
		return ROCE_E_TRUNCATED;
	o = roce_opinfo(b[0]);
	if (!o)
		return ROCE_E_OPCODE;
	set_from_info(p, o);
	if (b[1] & ROCE_BTH_TVER_MASK)
		return ROCE_E_TVER;
	p->solicited = b[1] & ROCE_BTH_SE;
	p->migreq = b[1] & ROCE_BTH_MIGREQ;
	p->padcnt = (b[1] & ROCE_BTH_PAD_MASK) >> ROCE_BTH_PAD_SHIFT;
	p->pkey = get16(b + 2);
	p->fecn = get32(b + 4) & ROCE_BTH_FECN;
	p->becn = get32(b + 4) & ROCE_BTH_BECN;
	p->dqpn = get32(b + 4) & ROCE_QPN_MASK;
	p->ackreq = get32(b + 8) & ROCE_BTH_ACKREQ;
	p->psn = get32(b + 8) & ROCE_PSN_MASK;
	if (len < (uint32_t)o->hdrlen + ROCE_ICRC_LEN)
		return ROCE_E_TRUNCATED;
	read_ext(o, b, p);
	p->hdrlen = o->hdrlen;
	body = len - o->hdrlen - ROCE_ICRC_LEN;
	memcpy(&p->icrc, b + len - ROCE_ICRC_LEN, 4);
	p->icrc = le32toh(p->icrc);
	/* Payload + pad is a multiple of 4 (IBTA 9.2.1); only the packet that
	 * ends a message is padded (9.7.5.2.1: first/middle carry whole MTUs). */
	if (body & 3)
		return ROCE_E_LENGTH;
	if (!o->payload)
		return body ? ROCE_E_PAYLOAD : p->padcnt ? ROCE_E_PAD : ROCE_OK;
	if (p->padcnt > body || (p->padcnt && !o->last))
		return ROCE_E_PAD;
	p->payload = b + o->hdrlen;
	p->paylen = body - p->padcnt;
	return ROCE_OK;
}

int roce_build(uint8_t *b, uint32_t cap, const struct roce_pkt *p, uint32_t paylen)
{
	const struct roce_opinfo *o = roce_opinfo(p->opcode);
	uint32_t pad = roce_padlen(paylen);

	if (!o || cap < o->hdrlen)
		return -1;
	b[0] = o->opcode;
	b[1] = (p->solicited ? ROCE_BTH_SE : 0) | (p->migreq ? ROCE_BTH_MIGREQ : 0) |
	       pad << ROCE_BTH_PAD_SHIFT;
	put16(b + 2, p->pkey);
	put32(b + 4, (p->fecn ? ROCE_BTH_FECN : 0) | (p->becn ? ROCE_BTH_BECN : 0) |
			     (p->dqpn & ROCE_QPN_MASK));
	put32(b + 8, (p->ackreq ? ROCE_BTH_ACKREQ : 0) | (p->psn & ROCE_PSN_MASK));
	write_ext(o, b, p);
	return o->hdrlen;
}

void roce_net_from_socket(struct roce_net *net, int family, const uint8_t *src,
			  const uint8_t *dst, uint16_t sport, uint16_t dport)
{
	memset(net, 0, sizeof(*net));
	net->family = family;
	memcpy(net->src, src, 16);
	memcpy(net->dst, dst, 16);
	net->ttl = 64;
	net->df = true;           /* IP_PMTUDISC_DO */
	net->sport = sport;
	net->dport = dport;
}

uint32_t roce_write_outer(uint8_t *buf, uint32_t cap, const struct roce_net *net,
			    uint32_t udplen)
{
	uint32_t iplen = net->family == AF_INET6 ? sizeof(struct roce_ipv6) : sizeof(struct roce_ipv4);
	uint32_t n = sizeof(struct roce_eth) + iplen + sizeof(struct roce_udp);
	uint8_t *ip = buf + sizeof(struct roce_eth), *udp = ip + iplen;

	if (cap < n)
		return 0;
	memcpy(buf, net->dmac, 6);
	memcpy(buf + 6, net->smac, 6);
	put16(buf + 12, net->family == AF_INET6 ? ROCE_ETHERTYPE_IPV6 : ROCE_ETHERTYPE_IPV4);
	if (net->family == AF_INET6) {
		put32(ip, 6u << 28 | (uint32_t)net->tos << 20 | (net->flow_label & 0xfffff));
		put16(ip + 4, udplen);
		ip[6] = ROCE_IPPROTO_UDP;
		ip[7] = net->ttl;
		memcpy(ip + 8, net->src, 16);
		memcpy(ip + 24, net->dst, 16);
	} else {
		uint32_t sum = 0;

		ip[0] = 0x45;
		ip[1] = net->tos;
		put16(ip + 2, iplen + udplen);
		put16(ip + 4, net->ip_id);
		put16(ip + 6, net->df ? 0x4000 : 0);
		ip[8] = net->ttl;
		ip[9] = ROCE_IPPROTO_UDP;
		put16(ip + 10, 0);
		memcpy(ip + 12, net->src + 12, 4);
		memcpy(ip + 16, net->dst + 12, 4);
		for (int i = 0; i < 20; i += 2)
			sum += get16(ip + i);
		while (sum >> 16)
			sum = (sum & 0xffff) + (sum >> 16);
		put16(ip + 10, ~sum);
	}
	put16(udp, net->sport);
	put16(udp + 2, net->dport);
	put16(udp + 4, udplen);
	put16(udp + 6, net->udp_check);
	return n;
}

int roce_build_frame(uint8_t *buf, uint32_t cap, const struct roce_pkt *p,
		     const struct roce_net *net, const void *payload, uint32_t paylen)
{
	const struct roce_opinfo *o = roce_opinfo(p->opcode);
	uint32_t pad = roce_padlen(paylen), outer, udplen;
	struct iovec iov = { (void *)payload, paylen };
	uint32_t icrc;
	uint8_t *hdr;
	int h;

	if (!o)
		return -1;
	udplen = sizeof(struct roce_udp) + o->hdrlen + paylen + pad + ROCE_ICRC_LEN;
	outer = roce_write_outer(buf, cap, net, udplen);
	if (!outer || cap - outer < udplen - sizeof(struct roce_udp))
		return -1;
	hdr = buf + outer;
	h = roce_build(hdr, cap - outer, p, paylen);
	if (h < 0)
		return -1;
	if (paylen)
		memcpy(hdr + h, payload, paylen);
	memset(hdr + h + paylen, 0, pad);
	icrc = htole32(roce_icrc(net, hdr, h, &iov, paylen ? 1 : 0, pad));
	memcpy(hdr + h + paylen + pad, &icrc, 4);
	return outer + udplen - sizeof(struct roce_udp);
}

int roce_parse_outer(const uint8_t *f, uint32_t len, struct roce_net *net, uint32_t *off,
		     uint32_t *udplen)
{
	uint32_t e = sizeof(struct roce_eth), iplen, flen = len;
	const uint8_t *ip = f + e, *udp;
	uint16_t type;

	memset(net, 0, sizeof(*net));
	if (len < e)
		return ROCE_E_TRUNCATED;
	memcpy(net->dmac, f, 6);
	memcpy(net->smac, f + 6, 6);
	type = get16(f + 12);
	if (type == ROCE_ETHERTYPE_IPV4) {
		uint16_t frag;

		iplen = sizeof(struct roce_ipv4);
		if (len < e + iplen)
			return ROCE_E_TRUNCATED;
		if (ip[0] != 0x45 || ip[9] != ROCE_IPPROTO_UDP)
			return ROCE_E_IP; /* options or not UDP */
		frag = get16(ip + 6);
		if (frag & 0xbfff)
			return ROCE_E_IP; /* a fragment, or the reserved bit */
		if (get16(ip + 2) < iplen || get16(ip + 2) > len - e)
			return ROCE_E_LENGTH;
		net->family = AF_INET;
		net->tos = ip[1];
		net->ip_id = get16(ip + 4);
		net->df = frag & 0x4000;
		net->ttl = ip[8];
		memset(net->src + 10, 0xff, 2);
		memset(net->dst + 10, 0xff, 2);
		memcpy(net->src + 12, ip + 12, 4);
		memcpy(net->dst + 12, ip + 16, 4);
		len = e + get16(ip + 2); /* Ethernet may pad short frames */
	} else if (type == ROCE_ETHERTYPE_IPV6) {
		uint32_t vtf;

		iplen = sizeof(struct roce_ipv6);
		if (len < e + iplen)
			return ROCE_E_TRUNCATED;
		vtf = get32(ip);
		if (vtf >> 28 != 6 || ip[6] != ROCE_IPPROTO_UDP)
			return ROCE_E_IP;
		if (get16(ip + 4) > len - e - iplen)
			return ROCE_E_LENGTH;
		net->family = AF_INET6;
		net->tos = vtf >> 20;
		net->flow_label = vtf & 0xfffff;
		net->ttl = ip[7];
		memcpy(net->src, ip + 8, 16);
		memcpy(net->dst, ip + 24, 16);
		len = e + iplen + get16(ip + 4);
	} else {
		return ROCE_E_ETHERTYPE;
	}
	udp = ip + iplen;
	/* Too short for UDP: the frame itself, or the length its IP header gives. */
	if (len < e + iplen + sizeof(struct roce_udp))
		return flen < e + iplen + sizeof(struct roce_udp) ? ROCE_E_TRUNCATED : ROCE_E_LENGTH;
	net->sport = get16(udp);
	net->dport = get16(udp + 2);
	net->udp_check = get16(udp + 6);
	if (net->dport != ROCE_UDP_PORT)
		return ROCE_E_PORT;
	*udplen = get16(udp + 4);
	if (*udplen < sizeof(struct roce_udp) || *udplen != len - e - iplen)
		return ROCE_E_LENGTH;
	*off = e + iplen + sizeof(struct roce_udp);
	*udplen -= sizeof(struct roce_udp);
	return ROCE_OK;
}

int roce_parse_frame(const uint8_t *frame, uint32_t len, struct roce_pkt *p,
		     struct roce_net *net)
{
	struct roce_net local;
	uint32_t off, plen;
	int r;

	if (!net)
		net = &local;
	memset(p, 0, sizeof(*p));
	r = roce_parse_outer(frame, len, net, &off, &plen);
	if (r)
		return r;
	r = roce_parse(frame + off, plen, p);
	if (r)
		return r;
	return roce_icrc_check(net, frame + off, plen);
}
