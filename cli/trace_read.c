// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Reading a UROCE_TRACE file: pcapng blocks into struct tr_rec.  Enhanced
 * Packet Blocks are RoCEv2 frames (parsed with the wire module), systemd
 * Journal Export Blocks are uroce's events.  Only the blocks uroce writes
 * are understood; others are skipped.  Files in the other byte order or
 * damaged are refused with a message naming the offset.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "wire/wire.h"
#include "trace.h"

enum { SHB = 0x0a0d0d0a, IDB = 1, EPB = 6, SJEB = 9, BYTE_ORDER_MAGIC = 0x1a2b3c4d };

static uint32_t u32(const uint8_t *p)
{
	uint32_t v;

	memcpy(&v, p, 4);
	return v;
}

static struct tr_rec *new_rec(struct tr_set *set)
{
	struct tr_rec *r;

	if (set->n == set->cap) {
		uint32_t cap = set->cap ? set->cap * 2 : 4096;
		struct tr_rec *n = realloc(set->recs, cap * sizeof(*n));

		if (!n)
			return NULL;
		set->recs = n;
		set->cap = cap;
	}
	r = &set->recs[set->n++];
	memset(r, 0, sizeof(*r));
	r->pair = r->match = r->cause = -1;
	return r;
}

/* An EPB: interface, time, lengths, frame, options (epb_flags). */
static int read_epb(struct tr_rec *r, const uint8_t *b, uint32_t len, uint64_t units_ns)
{
	uint32_t cap, off, flags = 0;
	struct roce_net net;

	if (len < 32)
		return -1;
	r->ts = ((uint64_t)u32(b + 12) << 32 | u32(b + 16)) * units_ns;
	cap = u32(b + 20);
	r->frame_len = u32(b + 24);
	if (28 + (uint64_t)cap + 4 > len)
		return -1;
	r->is_pkt = true;
	r->parse = roce_parse_frame(b + 28, cap, &r->pkt, &net);
	if (r->parse == ROCE_OK && r->pkt.transport == ROCE_TR_UD && r->pkt.dqpn == 1) {
		struct cm_msg m;

		r->mad.ok = cm_mad_parse(r->pkt.payload, r->pkt.paylen, &m) == CM_MAD_OK;
		r->mad.attr = m.attr_id;
		r->mad.local_id = m.local_comm_id;
		r->mad.remote_id = m.remote_comm_id;
		r->mad.qpn = m.local_qpn;
		r->mad.psn = m.starting_psn;
	}
	r->pkt.payload = NULL;
	for (off = 28 + ((cap + 3) & ~3u); off + 4 <= len - 4;) {
		uint16_t code, olen;

		memcpy(&code, b + off, 2);
		memcpy(&olen, b + off + 2, 2);
		if (code == 0)
			break;
		if (code == 2 && olen == 4)
			flags = u32(b + off + 4);
		off += 4 + ((olen + 3u) & ~3u);
	}
	r->out = (flags & 3) == 2;
	return 0;
}

static int read_sjeb(struct tr_rec *r, const uint8_t *b, uint32_t len)
{
	uint32_t n = len - 12;
	const char *e = (const char *)b + 8, *p;
	char *f = malloc(n + 2), *w = f;

	if (!f)
		return -1;
	/* "\nKEY=VALUE" per line; UROCE_ prefixes dropped. */
	for (p = e; p < e + n && *p;) {
		const char *nl = memchr(p, '\n', (size_t)(e + n - p));
		size_t l = nl ? (size_t)(nl - p) : (size_t)(e + n - p);

		if (l > 6 && !memcmp(p, "UROCE_", 6)) {
			p += 6;
			l -= 6;
		}
		*w++ = '\n';
		memcpy(w, p, l);
		w += l;
		p += l + 1;
	}
	*w++ = '\n';
	*w = 0;
	r->fields = f;
	r->ts = tr_num(r, "NS", 0);
	tr_field(r, "EV", r->ev, sizeof(r->ev));
	return 0;
}

int tr_read(struct tr_set *set, const char *path)
{
	FILE *fp = fopen(path, "rb");
	uint8_t *buf = NULL;
	size_t size = 0, off = 0;
	uint64_t units_ns = 1000;  /* pcapng default: microseconds */
	struct tr_file *tf;
	uint32_t seq = 0;
	int idx = set->n_files;

	if (!fp)
		return fail("%s: %s", path, strerror(errno)) * -1;
	for (;;) {
		uint8_t *nb = realloc(buf, size + 65536);
		size_t got;

		if (!nb) {
			free(buf);
			fclose(fp);
			return -fail("%s: out of memory", path);
		}
		buf = nb;
		got = fread(buf + size, 1, 65536, fp);
		size += got;
		if (got < 65536)
			break;
	}
	fclose(fp);
	if (size < 28 || u32(buf) != SHB || u32(buf + 8) != BYTE_ORDER_MAGIC) {
		free(buf);
		return -fail("%s: not a pcapng file of this byte order (UROCE_TRACE writes one; "
			     "UROCE_PCAP's pcap files have no events)", path);
	}
	tf = realloc(set->files, (idx + 1) * sizeof(*tf));
	if (!tf) {
		free(buf);
		return -fail("out of memory");
	}
	set->files = tf;
	tf = &set->files[idx];
	memset(tf, 0, sizeof(*tf));
	tf->path = path;
	snprintf(tf->comm, sizeof(tf->comm), "?");
	set->n_files++;
	while (off + 12 <= size) {
		uint32_t type = u32(buf + off), len = u32(buf + off + 4);
		struct tr_rec *r;

		if (len < 12 || len % 4 || off + len > size) {
			if (off + len > size && len >= 12)
				fprintf(stderr, "uroce: %s: the last block is cut short (the process "
					"was still writing?); read up to it\n", path);
			else
				fprintf(stderr, "uroce: %s: bad block length %u at offset %zu\n",
					path, len, off);
			break;
		}
		if (type == IDB) {
			/* if_tsresol: uroce writes 9 (ns). */
			for (uint32_t o = 16; o + 4 <= len - 4;) {
				uint16_t code, olen;

				memcpy(&code, buf + off + o, 2);
				memcpy(&olen, buf + off + o + 2, 2);
				if (code == 0)
					break;
				if (code == 9 && olen == 1) {
					uint8_t res = buf[off + o + 4];

					units_ns = 1;
					for (int i = res; i < 9; i++)
						units_ns *= 10;
				}
				o += 4 + ((olen + 3u) & ~3u);
			}
		} else if (type == EPB || type == SJEB) {
			r = new_rec(set);
			if (!r) {
				free(buf);
				return -fail("out of memory");
			}
			r->file = idx;
			r->seq = seq++;
			if ((type == EPB ? read_epb(r, buf + off, len, units_ns)
					 : read_sjeb(r, buf + off, len)) < 0) {
				set->n--;
				fprintf(stderr, "uroce: %s: bad block at offset %zu, skipped\n", path, off);
			} else if (!r->is_pkt && !strcmp(r->ev, "process")) {
				tr_field(r, "COMM", tf->comm, sizeof(tf->comm));
				tf->pid = (int)tr_num(r, "PID", 0);
			}
		}
		off += len;
	}
	free(buf);
	return 0;
}

const char *tr_field(const struct tr_rec *r, const char *key, char *buf, size_t n)
{
	size_t kl = strlen(key);
	const char *p;

	if (!r->fields)
		return NULL;
	for (p = r->fields; (p = strchr(p, '\n')); p++) {
		if (!strncmp(p + 1, key, kl) && p[1 + kl] == '=') {
			const char *v = p + 2 + kl, *e = strchr(v, '\n');
			size_t l = e ? (size_t)(e - v) : strlen(v);

			if (l >= n)
				l = n - 1;
			memcpy(buf, v, l);
			buf[l] = 0;
			return buf;
		}
	}
	return NULL;
}

uint64_t tr_num(const struct tr_rec *r, const char *key, uint64_t dflt)
{
	char b[32];

	return tr_field(r, key, b, sizeof(b)) ? strtoull(b, NULL, 0) : dflt;
}
