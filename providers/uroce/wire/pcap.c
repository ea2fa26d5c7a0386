// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * A pcap writer for packet traces (libpcap's file format: a global header,
 * then a record header and the frame for each packet; nanosecond stamps,
 * link type Ethernet).  Packets that went through a UDP socket get
 * Ethernet/IP/UDP headers synthesised from their addresses, so Wireshark
 * decodes them as RoCEv2.  Each record is one write(2) under a mutex, so
 * the file is valid at every moment, even if the process dies; the file
 * stops growing at its size bound and the rest is counted as skipped.
 * Written here rather than with libpcap: it is 100 lines and libpcap's
 * dumper is neither thread-safe nor bounded.
 */
#include <endian.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/socket.h>

#include "wire.h"

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

struct roce_pcap {
	pthread_mutex_t lock;
	int fd;
	uint64_t size, max_bytes;
	uint64_t written, skipped;
};

struct roce_pcap *roce_pcap_open(const char *path, uint64_t max_bytes)
{
	struct pcap_file_hdr h = {
		.magic = PCAP_MAGIC_NS, .major = 2, .minor = 4,
		.snaplen = SNAPLEN, .linktype = LINKTYPE_ETHERNET,
	};
	struct roce_pcap *pc = calloc(1, sizeof(*pc));

	if (!pc)
		return NULL;
	pc->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (pc->fd < 0 || write(pc->fd, &h, sizeof(h)) != sizeof(h)) {
		if (pc->fd >= 0)
			close(pc->fd);
		free(pc);
		return NULL;
	}
	pthread_mutex_init(&pc->lock, NULL);
	pc->size = sizeof(h);
	pc->max_bytes = max_bytes;
	return pc;
}

/* Append one record: the frame is HEAD[HLEN] followed by the iovecs. */
static void put_record(struct roce_pcap *pc, const void *head, uint32_t hlen,
		       const struct iovec *iov, int n)
{
	struct iovec v[2 + n];
	struct pcap_rec_hdr r;
	struct timespec ts;
	uint32_t len = hlen, cap;
	int k = 0;

	for (int i = 0; i < n; i++)
		len += iov[i].iov_len;
	cap = len < SNAPLEN ? len : SNAPLEN;
	clock_gettime(CLOCK_REALTIME, &ts);
	r = (struct pcap_rec_hdr){ ts.tv_sec, ts.tv_nsec, cap, len };
	v[k++] = (struct iovec){ &r, sizeof(r) };
	if (hlen)
		v[k++] = (struct iovec){ (void *)head, hlen };
	for (int i = 0; i < n; i++)
		v[k++] = iov[i];
	pthread_mutex_lock(&pc->lock);
	if (pc->size + sizeof(r) + cap > pc->max_bytes) {
		pc->skipped++;
	} else {
		/* The snap length cuts the last iovecs; trim them to CAP. */
		uint32_t left = sizeof(r) + cap;
		int m = 0;

		while (m < k && left) {
			if (v[m].iov_len > left)
				v[m].iov_len = left;
			left -= v[m++].iov_len;
		}
		if (writev(pc->fd, v, m) == (ssize_t)(sizeof(r) + cap)) {
			pc->size += sizeof(r) + cap;
			pc->written++;
		} else {
			pc->skipped++;
		}
	}
	pthread_mutex_unlock(&pc->lock);
}

void roce_pcap_write(struct roce_pcap *pc, const struct roce_net *net,
		     const struct iovec *udp_payload, int n)
{
	uint8_t outer[14 + 40 + 8];
	uint32_t udplen = sizeof(struct roce_udp), olen;

	if (!pc)
		return;
	for (int i = 0; i < n; i++)
		udplen += udp_payload[i].iov_len;
	olen = roce_write_outer(outer, sizeof(outer), net, udplen);
	if (olen)
		put_record(pc, outer, olen, udp_payload, n);
}

void roce_pcap_write_frame(struct roce_pcap *pc, const uint8_t *frame, uint32_t len)
{
	struct iovec v = { (void *)frame, len };

	if (pc)
		put_record(pc, NULL, 0, &v, 1);
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
