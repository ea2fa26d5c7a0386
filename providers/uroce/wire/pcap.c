// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Packet trace files.  Two formats:
 *  - pcap (libpcap's: a global header, then a record header and the frame
 *    per packet; nanosecond stamps, link type Ethernet): UROCE_PCAP;
 *  - pcapng (a section header, one Ethernet interface with nanosecond
 *    stamps, an Enhanced Packet Block per packet with its direction in
 *    epb_flags, and systemd Journal Export Blocks for text annotations,
 *    which Wireshark 3.0 and later list between the packets): UROCE_TRACE.
 * Packets that went through a UDP socket get Ethernet/IP/UDP headers
 * synthesised from their addresses, so Wireshark decodes them as RoCEv2.
 * Each record is one write(2) under a mutex, so the file is valid at every
 * moment, even if the process dies; the file stops growing at its size
 * bound and the rest is counted as skipped.  Written here rather than with
 * libpcap: libpcap's dumper is neither thread-safe nor bounded, and it
 * writes no annotations.
 */
#include <endian.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>

#include "wire/wire.h"

#define PCAP_MAGIC_NS 0xa1b23c4du
#define LINKTYPE_ETHERNET 1
#define SNAPLEN 65535

struct pcap_file_hdr {
	uint32_t magic;
	uint16_t major, minor;
	int32_t thiszone;
	uint32_t sigfigs, snaplen, linktype;
};

struct pcap_rec_hdr {
	uint32_t sec, nsec, caplen, len;
};

/* pcapng (draft-ietf-opsawg-pcapng): the blocks uroce writes. */
enum {
	PCAPNG_SHB = 0x0a0d0d0a,
	PCAPNG_IDB = 1,
	PCAPNG_EPB = 6,
	PCAPNG_SJEB = 9,          /* systemd Journal Export Block */
	PCAPNG_BYTE_ORDER = 0x1a2b3c4d,
	OPT_END = 0,
	OPT_SHB_USERAPPL = 4,
	OPT_IF_TSRESOL = 9,
	OPT_EPB_FLAGS = 2,
};

struct pcapng_block {
	uint32_t type, len;
};

struct pcapng_epb {
	struct pcapng_block b;
	uint32_t if_id, ts_hi, ts_lo, caplen, len;
};

struct roce_pcap {
	pthread_mutex_t lock;
	int fd;
	bool ng;
	uint64_t size, max_bytes;
	uint64_t written, skipped;
};

uint64_t roce_pcap_clock(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + ts.tv_nsec;
}

static struct roce_pcap *pc_open(const char *path, uint64_t max_bytes, bool ng,
				 const void *head, uint32_t hlen)
{
	struct roce_pcap *pc = calloc(1, sizeof(*pc));

	if (!pc)
		return NULL;
	pc->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (pc->fd < 0 || write(pc->fd, head, hlen) != (ssize_t)hlen) {
		if (pc->fd >= 0)
			close(pc->fd);
		free(pc);
		return NULL;
	}
	pthread_mutex_init(&pc->lock, NULL);
	pc->ng = ng;
	pc->size = hlen;
	pc->max_bytes = max_bytes;
	return pc;
}

struct roce_pcap *roce_pcap_open(const char *path, uint64_t max_bytes)
{
	struct pcap_file_hdr h = {
		.magic = PCAP_MAGIC_NS, .major = 2, .minor = 4,
		.snaplen = SNAPLEN, .linktype = LINKTYPE_ETHERNET,
	};

	return pc_open(path, max_bytes, false, &h, sizeof(h));
}

/* Append option CODE with LEN bytes of VAL at P (padded to 4); returns the
 * bytes written. */
static uint32_t put_opt(uint8_t *p, uint16_t code, const void *val, uint16_t len)
{
	uint32_t n = 4 + ((len + 3u) & ~3u);

	memset(p, 0, n);
	memcpy(p, &code, 2);
	memcpy(p + 2, &len, 2);
	memcpy(p + 4, val, len);
	return n;
}

/* Close a block of LEN bytes at B (type set, options written): its length
 * at both ends.  Returns the whole length. */
static uint32_t end_block(uint8_t *b, uint32_t len)
{
	len += 4;
	memcpy(b + 4, &len, 4);
	memcpy(b + len - 4, &len, 4);
	return len;
}

struct roce_pcap *roce_pcapng_open(const char *path, uint64_t max_bytes, const char *appl)
{
	uint8_t buf[512];
	uint32_t n, shb, type;
	uint16_t u16;
	int64_t section_len = -1;
	uint8_t tsresol = 9;     /* 10^-9 s */
	uint32_t snap = SNAPLEN;

	/* Section header: byte order, version 1.0, length unknown, the
	 * writing application. */
	type = PCAPNG_SHB;
	memcpy(buf, &type, 4);
	n = 8;
	type = PCAPNG_BYTE_ORDER;
	memcpy(buf + n, &type, 4);
	u16 = 1;
	memcpy(buf + n + 4, &u16, 2);
	u16 = 0;
	memcpy(buf + n + 6, &u16, 2);
	memcpy(buf + n + 8, &section_len, 8);
	n += 16;
	if (appl)
		n += put_opt(buf + n, OPT_SHB_USERAPPL, appl, (uint16_t)strnlen(appl, 256));
	n += put_opt(buf + n, OPT_END, NULL, 0);
	shb = end_block(buf, n);
	/* One interface: Ethernet, nanosecond stamps. */
	type = PCAPNG_IDB;
	memcpy(buf + shb, &type, 4);
	n = 8;
	u16 = LINKTYPE_ETHERNET;
	memcpy(buf + shb + n, &u16, 2);
	u16 = 0;
	memcpy(buf + shb + n + 2, &u16, 2);
	memcpy(buf + shb + n + 4, &snap, 4);
	n += 8;
	n += put_opt(buf + shb + n, OPT_IF_TSRESOL, &tsresol, 1);
	n += put_opt(buf + shb + n, OPT_END, NULL, 0);
	n = shb + end_block(buf + shb, n);
	return pc_open(path, max_bytes, true, buf, n);
}

/* Write the iovecs V[K] (TOTAL bytes) as one record, or count it skipped. */
static void append(struct roce_pcap *pc, struct iovec *v, int k, uint32_t total)
{
	pthread_mutex_lock(&pc->lock);
	if (pc->size + total > pc->max_bytes) {
		pc->skipped++;
	} else if (writev(pc->fd, v, k) == (ssize_t)total) {
		pc->size += total;
		pc->written++;
	} else {
		pc->skipped++;
	}
	pthread_mutex_unlock(&pc->lock);
}

/*
 * Append one packet: the frame is HEAD[HLEN] followed by the iovecs, taken
 * at TS_NS; OUT says whether it was sent (pcapng keeps the direction).
 */
static void put_record(struct roce_pcap *pc, uint64_t ts_ns, bool out, const void *head,
		       uint32_t hlen, const struct iovec *iov, int n)
{
	static const uint8_t zero[4];
	struct iovec v[4 + n];
	union {
		struct pcap_rec_hdr r;
		struct pcapng_epb e;
	} h;
	uint8_t tail[16];
	uint32_t len = hlen, cap, left, total, tlen = 0, flags = out ? 2 : 1;
	int k = 1, m;

	for (int i = 0; i < n; i++)
		len += iov[i].iov_len;
	cap = len < SNAPLEN ? len : SNAPLEN;
	if (hlen)
		v[k++] = (struct iovec){ (void *)head, hlen };
	for (int i = 0; i < n; i++)
		v[k++] = iov[i];
	/* The snap length cuts the last iovecs; trim them to CAP. */
	for (left = cap, m = 1; m < k && left; m++) {
		if (v[m].iov_len > left)
			v[m].iov_len = left;
		left -= v[m].iov_len;
	}
	k = m;
	if (!pc->ng) {
		h.r = (struct pcap_rec_hdr){ ts_ns / 1000000000u, ts_ns % 1000000000u, cap, len };
		v[0] = (struct iovec){ &h, sizeof(h.r) };
		append(pc, v, k, sizeof(h.r) + cap);
		return;
	}
	/* EPB: header, frame, pad, epb_flags (bits 0-1: 1 inbound, 2
	 * outbound), end of options, length. */
	v[k++] = (struct iovec){ (void *)zero, (4 - (cap & 3)) & 3 };
	tlen += put_opt(tail, OPT_EPB_FLAGS, &flags, 4);
	tlen += put_opt(tail + tlen, OPT_END, NULL, 0);
	total = sizeof(h.e) + cap + (uint32_t)v[k - 1].iov_len + tlen + 4;
	memcpy(tail + tlen, &total, 4);
	v[k++] = (struct iovec){ tail, tlen + 4 };
	h.e = (struct pcapng_epb){ { PCAPNG_EPB, total }, 0, (uint32_t)(ts_ns >> 32),
				   (uint32_t)ts_ns, cap, len };
	v[0] = (struct iovec){ &h, sizeof(h.e) };
	append(pc, v, k, total);
}

void roce_pcap_write_at(struct roce_pcap *pc, uint64_t ts_ns, bool out,
			const struct roce_net *net, const struct iovec *udp_payload, int n)
{
	uint8_t outer[14 + 40 + 8];
	uint32_t udplen = sizeof(struct roce_udp), olen;

	if (!pc)
		return;
	for (int i = 0; i < n; i++)
		udplen += udp_payload[i].iov_len;
	olen = roce_write_outer(outer, sizeof(outer), net, udplen);
	if (olen)
		put_record(pc, ts_ns ? ts_ns : roce_pcap_clock(), out, outer, olen, udp_payload, n);
}

void roce_pcap_write(struct roce_pcap *pc, const struct roce_net *net,
		     const struct iovec *udp_payload, int n)
{
	roce_pcap_write_at(pc, 0, false, net, udp_payload, n);
}

void roce_pcap_write_frame(struct roce_pcap *pc, const uint8_t *frame, uint32_t len)
{
	struct iovec v = { (void *)frame, len };

	if (pc)
		put_record(pc, roce_pcap_clock(), false, NULL, 0, &v, 1);
}

void roce_pcapng_journal(struct roce_pcap *pc, const char *entry, uint32_t len)
{
	static const uint8_t zero[4];
	struct pcapng_block b = { PCAPNG_SJEB, 0 };
	uint32_t pad = (4 - (len & 3)) & 3;
	struct iovec v[4] = {
		{ &b, sizeof(b) }, { (void *)entry, len }, { (void *)zero, pad }, { &b.len, 4 },
	};

	if (!pc || !pc->ng)
		return;
	b.len = sizeof(b) + len + pad + 4;
	append(pc, v, 4, b.len);
}

void roce_net_fake_macs(struct roce_net *net)
{
	memset(net->smac, 0, 6);
	memset(net->dmac, 0, 6);
	net->smac[0] = net->dmac[0] = 0x02; /* locally administered */
	memcpy(net->smac + 2, net->src + 12, 4);
	memcpy(net->dmac + 2, net->dst + 12, 4);
}

void roce_pcap_stats(struct roce_pcap *pc, uint64_t *written, uint64_t *skipped)
{
	pthread_mutex_lock(&pc->lock);
	*written = pc->written;
	*skipped = pc->skipped;
	pthread_mutex_unlock(&pc->lock);
}

void roce_pcap_close(struct roce_pcap *pc)
{
	if (!pc)
		return;
	close(pc->fd);
	pthread_mutex_destroy(&pc->lock);
	free(pc);
}
