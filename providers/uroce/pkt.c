// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Engine <-> wire: builds and parses RoCEv2 packets for the engine.
 * TEMPORARY self-contained version until the wire module lands; then this
 * file delegates to wire/ (opcode table, headers, ICRC, pcap).
 */
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <isa-l/crc.h>

#include "engine.h"
#include "pkt.h"

enum { OP_RC = 0x00, OP_UC = 0x20, OP_UD = 0x60 };

int uroce_pkt_opcode(int qp_type, enum uroce_pkt_kind kind, bool first, bool last,
		     bool imm, bool inv)
{
	int base = qp_type == IBV_QPT_UC ? OP_UC : qp_type == IBV_QPT_UD ? OP_UD : OP_RC;
	int op;

	switch (kind) {
	case PK_SEND:
		if (first && last)
			op = inv ? 0x17 : imm ? 0x05 : 0x04;
		else if (first)
			op = 0x00;
		else if (last)
			op = inv ? 0x16 : imm ? 0x03 : 0x02;
		else
			op = 0x01;
		break;
	case PK_WRITE:
		if (first && last)
			op = imm ? 0x0b : 0x0a;
		else if (first)
			op = 0x06;
		else if (last)
			op = imm ? 0x09 : 0x08;
		else
			op = 0x07;
		break;
	case PK_READ_REQ:
		op = 0x0c;
		break;
	case PK_READ_RESP:
		op = first && last ? 0x10 : first ? 0x0d : last ? 0x0f : 0x0e;
		break;
	case PK_ACK:
		op = 0x11;
		break;
	case PK_ATOMIC_ACK:
		op = 0x12;
		break;
	case PK_CMP_SWAP:
		op = 0x13;
		break;
	case PK_FETCH_ADD:
		op = 0x14;
		break;
	default:
		return 0x81;
	}
	return base | op;
}

static void put16(uint8_t *p, uint16_t v) { v = htons(v); memcpy(p, &v, 2); }
static void put32(uint8_t *p, uint32_t v) { v = htonl(v); memcpy(p, &v, 4); }
static void put64(uint8_t *p, uint64_t v) { v = htobe64(v); memcpy(p, &v, 8); }
static uint16_t get16(const uint8_t *p) { uint16_t v; memcpy(&v, p, 2); return ntohs(v); }
static uint32_t get32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return ntohl(v); }
static uint64_t get64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return be64toh(v); }

/* ICRC over a pseudo IP/UDP header as the kernel will write it. */
static uint32_t icrc(const struct uroce_av *av, uint16_t sport, const uint8_t *hdr,
		     uint32_t hlen, const struct iovec *pl, int n, const uint8_t *pad,
		     uint32_t padlen, uint32_t udplen)
{
	uint8_t ph[48], bth[12];
	uint32_t crc, plen = 0;

	memset(ph, 0xff, 8);
	crc = crc32_gzip_refl(0, ph, 8);
	if (av->family == AF_INET) {
		uint8_t ip[20] = { 0x45, 0xff };
		put16(ip + 2, 20 + udplen);
		ip[6] = 0x40; /* DF, ID 0 */
		ip[8] = 0xff;
		ip[9] = 17;
		ip[10] = ip[11] = 0xff;
		memcpy(ip + 12, av->sgid.raw + 12, 4);
		memcpy(ip + 16, &av->dst.in4.sin_addr, 4);
		crc = crc32_gzip_refl(crc, ip, 20);
	} else {
		uint8_t ip[40] = { 0x6f, 0xff, 0xff, 0xff };
		put16(ip + 4, udplen);
		ip[6] = 17;
		ip[7] = 0xff;
		memcpy(ip + 8, av->sgid.raw, 16);
		memcpy(ip + 24, &av->dst.in6.sin6_addr, 16);
		crc = crc32_gzip_refl(crc, ip, 40);
	}
	uint8_t udp[8];
	put16(udp, sport);
	put16(udp + 2, 4791);
	put16(udp + 4, udplen);
	udp[6] = udp[7] = 0xff;
	crc = crc32_gzip_refl(crc, udp, 8);
	memcpy(bth, hdr, 12);
	bth[4] = 0xff;
	crc = crc32_gzip_refl(crc, bth, 12);
	crc = crc32_gzip_refl(crc, hdr + 12, hlen - 12);
	for (int i = 0; i < n; i++) {
		crc = crc32_gzip_refl(crc, pl[i].iov_base, pl[i].iov_len);
		plen += pl[i].iov_len;
	}
	(void)plen;
	if (padlen)
		crc = crc32_gzip_refl(crc, pad, padlen);
	return crc;
}

int uroce_pkt_send(struct uroce_engine *eng, const struct uroce_av *av, uint16_t sport,
		   const struct uroce_pkt *pkt, const struct iovec *payload, int n)
{
	uint8_t hdr[64], pad[4] = { 0 }, tail[4];
	struct iovec iov[UROCE_MAX_SGE + 3];
	uint32_t h = 12, plen = 0, padlen, crc;
	uint8_t op = pkt->opcode & 0x1f;
	int ret;

	for (int i = 0; i < n; i++)
		plen += payload[i].iov_len;
	padlen = (4 - (plen & 3)) & 3;
	memset(hdr, 0, sizeof(hdr));
	hdr[0] = pkt->opcode;
	hdr[1] = (pkt->solicited ? 0x80 : 0) | (padlen << 4);
	put16(hdr + 2, pkt->pkey);
	put32(hdr + 4, pkt->dqpn & 0xffffff);
	put32(hdr + 8, (pkt->ackreq ? 0x80000000u : 0) | (pkt->psn & 0xffffff));
	if ((pkt->opcode & 0xe0) == OP_UD) {
		put32(hdr + h, pkt->qkey);
		put32(hdr + h + 4, pkt->sqpn & 0xffffff);
		h += 8;
	}
	/* RETH: WRITE first/only, READ request */
	if (op == 0x06 || op == 0x0a || op == 0x0b || op == 0x0c) {
		put64(hdr + h, pkt->va);
		put32(hdr + h + 8, pkt->rkey);
		put32(hdr + h + 12, pkt->dma_len);
		h += 16;
	}
	if (op == 0x13 || op == 0x14) {
		put64(hdr + h, pkt->va);
		put32(hdr + h + 8, pkt->rkey);
		put64(hdr + h + 12, pkt->swap_add);
		put64(hdr + h + 20, pkt->compare);
		h += 28;
	}
	/* AETH: ACK, ATOMIC ACK, READ response first/last/only */
	if (op == 0x11 || op == 0x12 || op == 0x0d || op == 0x0f || op == 0x10) {
		put32(hdr + h, (uint32_t)pkt->syndrome << 24 | (pkt->msn & 0xffffff));
		h += 4;
	}
	if (op == 0x12) {
		put64(hdr + h, pkt->orig);
		h += 8;
	}
	/* ImmDt: SEND/WRITE last/only with immediate */
	if (op == 0x03 || op == 0x05 || op == 0x09 || op == 0x0b) {
		memcpy(hdr + h, &pkt->imm, 4);
		h += 4;
	}
	if (op == 0x16 || op == 0x17) {
		put32(hdr + h, pkt->inv_rkey);
		h += 4;
	}
	crc = icrc(av, sport, hdr, h, payload, n, pad, padlen, 8 + h + plen + padlen + 4);
	tail[0] = crc; tail[1] = crc >> 8; tail[2] = crc >> 16; tail[3] = crc >> 24;
	int k = 0;
	iov[k++] = (struct iovec){ hdr, h };
	for (int i = 0; i < n; i++)
		iov[k++] = payload[i];
	if (padlen)
		iov[k++] = (struct iovec){ pad, padlen };
	iov[k++] = (struct iovec){ tail, 4 };
	ret = uroce_udp_send(eng, av, sport, iov, k);
	if (ret && uroce_debug)
		fprintf(stderr, "uroce: send of opcode 0x%02x psn %u failed: %s\n", pkt->opcode,
			pkt->psn, strerror(-ret));
	if (!ret) {
		atomic_fetch_add(&eng->cnt.tx_pkts, 1);
		atomic_fetch_add(&eng->cnt.tx_bytes, h + plen + padlen + 4);
	}
	return ret;
}

int uroce_pkt_parse(struct uroce_engine *eng, const struct uroce_rx *rx, struct uroce_pkt *p)
{
	const uint8_t *b = rx->buf;
	uint32_t h = 12, len = rx->len;
	uint8_t op, tr;
	uint32_t padlen;

	memset(p, 0, sizeof(*p));
	if (len < 16)
		return -EINVAL;
	p->opcode = b[0];
	op = b[0] & 0x1f;
	tr = b[0] & 0xe0;
	if ((b[1] & 0x0f) != 0) /* TVer */
		return -EINVAL;
	p->solicited = b[1] & 0x80;
	padlen = (b[1] >> 4) & 3;
	p->pkey = get16(b + 2);
	p->dqpn = get32(b + 4) & 0xffffff;
	p->ackreq = b[8] & 0x80;
	p->psn = get32(b + 8) & 0xffffff;
	p->qp_type = tr == OP_UC ? IBV_QPT_UC : tr == OP_UD ? IBV_QPT_UD : IBV_QPT_RC;
	if (tr != OP_RC && tr != OP_UC && tr != OP_UD)
		return -EINVAL;
	if (tr == OP_UD) {
		if (op != 0x04 && op != 0x05)
			return -EINVAL;
		if (len < h + 8 + 4)
			return -EINVAL;
		p->qkey = get32(b + h);
		p->sqpn = get32(b + h + 4) & 0xffffff;
		h += 8;
	}
	if (op > 0x17 || op == 0x15 || (tr == OP_UC && !(op <= 0x0b)))
		return -EINVAL;
	p->first = op == 0x00 || op == 0x04 || op == 0x05 || op == 0x06 || op == 0x0a ||
		   op == 0x0b || op == 0x0c || op == 0x0d || op == 0x10 || (op >= 0x11 && op != 0x16);
	p->last = op == 0x02 || op == 0x03 || op == 0x04 || op == 0x05 || op == 0x08 ||
		  op == 0x09 || op == 0x0a || op == 0x0b || op == 0x0c || op == 0x0f ||
		  op >= 0x10;
	p->has_imm = op == 0x03 || op == 0x05 || op == 0x09 || op == 0x0b;
	p->has_inv = op == 0x16 || op == 0x17;
	if (op <= 0x05 || op == 0x16 || op == 0x17)
		p->kind = PK_SEND;
	else if (op <= 0x0b)
		p->kind = PK_WRITE;
	else if (op == 0x0c)
		p->kind = PK_READ_REQ;
	else if (op <= 0x10)
		p->kind = PK_READ_RESP;
	else if (op == 0x11)
		p->kind = PK_ACK;
	else if (op == 0x12)
		p->kind = PK_ATOMIC_ACK;
	else if (op == 0x13)
		p->kind = PK_CMP_SWAP;
	else
		p->kind = PK_FETCH_ADD;
	p->is_response = p->kind == PK_READ_RESP || p->kind == PK_ACK || p->kind == PK_ATOMIC_ACK;
	if (op == 0x06 || op == 0x0a || op == 0x0b || op == 0x0c) {
		if (len < h + 16 + 4)
			return -EINVAL;
		p->va = get64(b + h);
		p->rkey = get32(b + h + 8);
		p->dma_len = get32(b + h + 12);
		h += 16;
	}
	if (op == 0x13 || op == 0x14) {
		if (len < h + 28 + 4)
			return -EINVAL;
		p->va = get64(b + h);
		p->rkey = get32(b + h + 8);
		p->swap_add = get64(b + h + 12);
		p->compare = get64(b + h + 20);
		h += 28;
	}
	if (op == 0x11 || op == 0x12 || op == 0x0d || op == 0x0f || op == 0x10) {
		if (len < h + 4 + 4)
			return -EINVAL;
		p->syndrome = b[h];
		p->msn = get32(b + h) & 0xffffff;
		h += 4;
	}
	if (op == 0x12) {
		if (len < h + 8 + 4)
			return -EINVAL;
		p->orig = get64(b + h);
		h += 8;
	}
	if (p->has_imm || p->has_inv) {
		if (len < h + 4 + 4)
			return -EINVAL;
		if (p->has_imm)
			memcpy(&p->imm, b + h, 4);
		else
			p->inv_rkey = get32(b + h);
		h += 4;
	}
	if (len < h + padlen + 4)
		return -EINVAL;
	p->payload = b + h;
	p->paylen = len - h - padlen - 4;
	(void)eng;
	return 0;
}

void uroce_pkt_trace_open(struct uroce_engine *eng)
{
	(void)eng;
}

void uroce_pkt_trace_close(struct uroce_engine *eng)
{
	(void)eng;
}
