// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Vector tests of the RoCEv2 wire module against outside implementations.
 *
 *   wire_vectors opcodes              print the opcode table (for golden.py)
 *   wire_vectors golden PCAP TXT      check scapy's frames against TXT
 *   wire_vectors rxe [DIR]            check the Soft-RoCE (rdma_rxe) captures
 *   wire_vectors pcapgen FILE         trace every opcode with roce_pcap_write;
 *                                     prints what tshark must decode
 *   wire_vectors pcapbound FILE BYTES size bound of the tracer
 *   wire_vectors pcapmt FILE          4 threads x 1000 packets into one trace
 *   wire_vectors seeds DIR            fuzzer seed corpus (frames, UDP payloads,
 *                                     CM MADs)
 *   wire_vectors idfix                IPv4 ID corrections (GSO) and the solve
 *                                     for an unseen ID, against whole ICRCs
 *
 * Exit 0 pass, 1 fail, 77 skip.
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "wire/cm_mad.h"
#include "wire/wire.h"

#define MAX_FRAME 16384

static int failures;

#define FAIL(...) do { fprintf(stderr, "FAIL: " __VA_ARGS__); fputc('\n', stderr); \
		       failures++; } while (0)

#include "pcap_in.h"

/* ---- opcodes ---- */

static int cmd_opcodes(void)
{
	uint8_t ops[256];
	int n = roce_opcodes(ops, 256);

	for (int i = 0; i < n; i++)
		printf("0x%02x %s\n", ops[i], roce_opinfo(ops[i])->name);
	return n > 0 ? 0 : 1;
}

/* ---- golden: scapy's frames against their expected fields ---- */

static uint64_t field(const struct roce_pkt *p, const struct roce_net *n, const char *k, bool *ok)
{
	static const char *const none = "";
	const struct { const char *k; uint64_t v; } t[] = {
		{ "op", p->opcode }, { "fam", n->family == AF_INET6 ? 6 : 4 },
		{ "dqpn", p->dqpn }, { "psn", p->psn }, { "pkey", p->pkey },
		{ "se", p->solicited }, { "m", p->migreq }, { "ackreq", p->ackreq },
		{ "fecn", p->fecn }, { "becn", p->becn }, { "pad", p->padcnt },
		{ "paylen", p->paylen }, { "va", p->va }, { "rkey", p->rkey },
		{ "dmalen", p->dma_len }, { "syn", p->syndrome }, { "msn", p->msn },
		{ "swap", p->swap_add }, { "cmp", p->compare }, { "orig", p->orig },
		{ "imm", be32toh(p->imm) }, { "ieth", p->inv_rkey }, { "qkey", p->qkey },
		{ "sqpn", p->sqpn }, { "xrcsrq", p->xrc_srqn }, { "icrc", p->icrc }, { "sport", n->sport },
		{ "tos", n->tos }, { "ttl", n->ttl }, { "flow", n->flow_label },
		{ "id", n->ip_id }, { "df", n->df }, { none, 0 },
	};

	for (int i = 0; t[i].k != none; i++)
		if (!strcmp(t[i].k, k))
			return *ok = true, t[i].v;
	*ok = false;
	return 0;
}

/* Keys the sidecar must give for each extended header of the opcode. */
static const char *const hdr_keys[ROCE_H_COUNT] = {
	[ROCE_H_XRCETH] = " xrcsrq=", [ROCE_H_DETH] = " qkey= sqpn=", [ROCE_H_RETH] = " va= rkey= dmalen=",
	[ROCE_H_ATOMICETH] = " va= rkey= swap= cmp=", [ROCE_H_AETH] = " syn= msn=",
	[ROCE_H_ATOMICACKETH] = " orig=", [ROCE_H_IMMDT] = " imm=",
	[ROCE_H_IETH] = " ieth=", [ROCE_H_CNP] = "",
};

static bool line_has_keys(const char *line, const char *keys)
{
	char k[16];
	int n;

	for (const char *s = keys; sscanf(s, " %15s%n", k, &n) == 1; s += n)
		if (!strstr(line, k))
			return false;
	return true;
}

/* Compare every "key=0xvalue" of LINE with the parsed packet; the count. */
static int compare_line(int idx, char *line, const struct roce_pkt *p, const struct roce_net *n)
{
	char *save = NULL;
	int count = 0;

	for (int h = 0; h < ROCE_H_COUNT; h++)
		if (p->info->hdrs & (1u << h) && !line_has_keys(line, hdr_keys[h]))
			FAIL("frame %d: expected values lack%s", idx, hdr_keys[h]);
	for (char *tok = strtok_r(line, " \n", &save); tok; tok = strtok_r(NULL, " \n", &save)) {
		char *eq = strchr(tok, '=');
		uint64_t want, got;
		bool ok;

		if (!eq)
			continue;
		*eq = 0;
		want = strtoull(eq + 1, NULL, 0);
		got = field(p, n, tok, &ok);
		if (!ok)
			FAIL("frame %d: unknown key %s", idx, tok);
		else if (got != want)
			FAIL("frame %d (%s): %s = 0x%" PRIx64 ", scapy says 0x%" PRIx64,
			     idx, p->info->name, tok, got, want);
		count++;
	}
	return count;
}

/* Rebuild a parsed frame and compare; check roce_icrc independently. */
static void check_rebuild(int idx, const uint8_t *f, int len, const struct roce_pkt *p,
			  struct roce_net *net)
{
	static uint8_t out[MAX_FRAME];
	struct iovec iov = { (void *)p->payload, p->paylen };
	uint32_t plen, icrc;
	const uint8_t *udp = udp_payload(f, len, &plen);
	int n = roce_build_frame(out, sizeof(out), p, net, p->payload, p->paylen);

	if (n != len || memcmp(out, f, len))
		FAIL("frame %d (%s): rebuilt frame differs (%d vs %d bytes)", idx, p->info->name,
		     n, len);
	icrc = roce_icrc(net, udp, p->hdrlen, &iov, p->paylen ? 1 : 0, p->padcnt);
	if (icrc != p->icrc)
		FAIL("frame %d (%s): roce_icrc 0x%08x, wire 0x%08x", idx, p->info->name, icrc,
		     p->icrc);
}

/* Opcodes with at least one good vector per family (bit 0 IPv4, bit 1 IPv6). */
static uint8_t seen[256];

static void golden_one(int idx, const uint8_t *f, int len, char *line)
{
	struct roce_pkt p;
	struct roce_net net;
	int before = failures, r = roce_parse_frame(f, len, &p, &net);

	if (r != ROCE_OK) {
		FAIL("frame %d: roce_parse_frame: %s", idx, roce_reason_name(r));
		return;
	}
	compare_line(idx, line, &p, &net);
	check_rebuild(idx, f, len, &p, &net);
	if (failures == before)
		seen[p.opcode] |= net.family == AF_INET6 ? 2 : 1;
}

static int coverage(const char *what)
{
	uint8_t ops[256];
	int m = roce_opcodes(ops, 256), n = 0;

	for (int i = 0; i < m; i++) {
		if (seen[ops[i]] == 3)
			n++;
		else
			FAIL("opcode 0x%02x %s not covered over %s", ops[i],
			     roce_opinfo(ops[i])->name, seen[ops[i]] ? "both families" : "any");
	}
	printf("%s: %d of %d\n", what, n, m);
	return n == m;
}

static int cmd_golden(const char *pcap, const char *txt)
{
	static uint8_t f[MAX_FRAME];
	static char line[4096];
	struct pcap_in in;
	FILE *t = fopen(txt, "r");
	int len, idx = 0;

	if (pcap_in_open(&in, pcap) || !t) {
		fprintf(stderr, "cannot read %s or %s\n", pcap, txt);
		return 1;
	}
	while ((len = pcap_in_next(&in, f)) > 0) {
		if (!fgets(line, sizeof(line), t)) {
			FAIL("more frames than expected values");
			break;
		}
		golden_one(idx++, f, len, line);
	}
	if (len < 0 || fgets(line, sizeof(line), t))
		FAIL("pcap and expected values disagree in length");
	printf("golden frames: %d, failures: %d\n", idx, failures);
	coverage("opcodes covered");
	return failures || !idx;
}

/* ---- rxe: every RoCEv2 packet of the Soft-RoCE captures ---- */

static unsigned rxe_count[256];

/* The ICRC with the IP ID and DF unknown (a UDP socket's view). */
static void check_id_unknown(const char *file, int idx, const uint8_t *f, int len,
			     const struct roce_net *net)
{
	/* the guesses a receiver tries first: 0 (uroce's senders), and a
	 * wrong one that is not 0 (a segment index of a coalesced datagram) */
	const uint16_t guess[] = { 0, net->ip_id ^ 0x5a5a };
	const uint8_t *udp;
	uint32_t plen = 0;
	int r;

	udp = udp_payload(f, len, &plen);
	for (unsigned g = 0; g < sizeof(guess) / sizeof(guess[0]); g++) {
		struct roce_net u = *net;

		u.id_unknown = true;
		u.ip_id = guess[g];
		u.df = false;
		r = roce_icrc_check(&u, udp, plen);
		if (r != ROCE_OK)
			FAIL("%s #%d: id_unknown ICRC check (guess %u): %s", file, idx, guess[g],
			     roce_reason_name(r));
		else if (u.ip_id != net->ip_id || u.df != net->df)
			FAIL("%s #%d: id_unknown (guess %u) recovered ID %u DF %d, frame has %u %d",
			     file, idx, guess[g], u.ip_id, u.df, net->ip_id, net->df);
	}
}

static int rxe_file(const char *dir, const char *name)
{
	static uint8_t f[MAX_FRAME];
	char path[4096];
	struct pcap_in in;
	int len, idx = 0, n = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (pcap_in_open(&in, path)) {
		FAIL("cannot read %s", path);
		return 0;
	}
	while ((len = pcap_in_next(&in, f)) > 0) {
		struct roce_pkt p;
		struct roce_net net;
		uint32_t plen;
		int r;

		idx++;
		if (!udp_payload(f, len, &plen))
			continue;
		n++;
		r = roce_parse_frame(f, len, &p, &net);
		if (r != ROCE_OK) {
			FAIL("%s #%d: roce_parse_frame: %s", name, idx, roce_reason_name(r));
			continue;
		}
		rxe_count[p.opcode]++;
		check_rebuild(idx, f, len, &p, &net);
		if (net.family == AF_INET)
			check_id_unknown(name, idx, f, len, &net);
	}
	fclose(in.f);
	printf("  %-28s %4d RoCEv2 packets\n", name, n);
	return n;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

static int is_pcap(const struct dirent *d)
{
	size_t n = strlen(d->d_name);

	return n > 5 && !strcmp(d->d_name + n - 5, ".pcap");
}

static int cmd_rxe(const char *dir)
{
	struct dirent **list;
	int files = scandir(dir, &list, is_pcap, by_name), total = 0, ops = 0;

	if (files < 0) {
		printf("%s: %s: skip\n", dir, strerror(errno));
		return 77;
	}
	for (int i = 0; i < files; i++) {
		total += rxe_file(dir, list[i]->d_name);
		free(list[i]);
	}
	free(list);
	printf("per opcode:\n");
	for (int op = 0; op < 256; op++)
		if (rxe_count[op]) {
			printf("  0x%02x %-34s %5u\n", op, roce_opinfo(op)->name, rxe_count[op]);
			ops++;
		}
	printf("files: %d, RoCEv2 packets: %d, failures: %d\n", files, total, failures);
	printf("opcodes covered by rxe captures: %d\n", ops);
	return failures || !total;
}

/* ---- pcap tracer ---- */

/* A packet of OPCODE with fields derived from SEED; PAYLEN bytes of payload. */
static void make_pkt(struct roce_pkt *p, uint8_t opcode, uint32_t seed)
{
	memset(p, 0, sizeof(*p));
	p->opcode = opcode;
	/* not QP0/QP1, which tshark decodes as management datagrams */
	p->dqpn = (seed * 2654435761u & ROCE_QPN_MASK) | 0x10;
	p->psn = (seed * 40503u + 7) & ROCE_PSN_MASK;
	p->pkey = 0xffff;
	p->ackreq = seed & 1;
	p->va = 0x1000000000ull + seed * 4096ull;
	p->rkey = 0x1234 + seed;
	p->dma_len = 1000 + seed;
	p->syndrome = ROCE_AETH_ACK | ROCE_AETH_CREDITS_INVALID;
	p->msn = seed;
	p->swap_add = seed;
	p->compare = ~(uint64_t)seed;
	p->orig = 42;
	p->imm = htonl(0xdead0000u | seed);
	p->inv_rkey = 0x5555;
	p->qkey = 0x11111111;
	p->sqpn = 0x11;
}

static void make_net(struct roce_net *net, int family, uint32_t seed)
{
	uint8_t src[16] = { 0xfd, 0, [15] = 1 }, dst[16] = { 0xfd, 0, [15] = 2 };

	if (family == AF_INET) {
		memset(src, 0, 16);
		memset(dst, 0, 16);
		src[10] = src[11] = dst[10] = dst[11] = 0xff;
		src[12] = dst[12] = 10;
		src[15] = 1;
		dst[15] = 2;
	}
	roce_net_from_socket(net, family, src, dst, 0xc000 | (seed & 0x3fff), ROCE_UDP_PORT);
}

/* Trace one packet as three iovecs: headers, payload, pad + ICRC. */
static uint32_t trace_pkt(struct roce_pcap *pc, const struct roce_pkt *p,
			  const struct roce_net *net, uint32_t paylen)
{
	static uint8_t data[4096];
	uint8_t hdr[64], tail[8] = { 0 };
	uint32_t pad = roce_padlen(paylen), icrc;
	struct iovec pl = { (void *)data, paylen };
	int h = roce_build(hdr, sizeof(hdr), p, paylen);

	/* Not zeros: tshark's RPC-over-RDMA heuristic claims (and then calls
	 * malformed) a SEND payload that starts with zeros. */
	for (uint32_t i = 0; !data[0] && i < sizeof(data); i++)
		data[i] = 0x5a ^ (i * 7);
	icrc = htole32(roce_icrc(net, hdr, h, &pl, 1, pad));
	memcpy(tail + pad, &icrc, 4);
	roce_pcap_write(pc, net, (struct iovec[]){ { hdr, h }, pl, { tail, pad + 4 } }, 3);
	return icrc;
}

static uint32_t payload_for(const struct roce_opinfo *o, uint32_t seed)
{
	if (!o->payload)
		return 0;
	return o->last ? seed % 301 : 4 * (1 + seed % 75);
}

/* Every opcode, IPv4 and IPv6; prints "opcode,destqp,psn,dmalen,icrc" the
 * way tshark shows them. */
static int cmd_pcapgen(const char *path)
{
	struct roce_pcap *pc = roce_pcap_open(path, 1u << 30);
	uint8_t ops[256];
	int m = roce_opcodes(ops, 256);
	uint32_t seed = 1;

	if (!pc)
		return 1;
	for (int fam = 0; fam < 2; fam++)
		for (int i = 0; i < m; i++, seed++) {
			const struct roce_opinfo *o = roce_opinfo(ops[i]);
			struct roce_pkt p;
			struct roce_net net;
			uint32_t icrc;

			make_pkt(&p, ops[i], seed);
			make_net(&net, fam ? AF_INET6 : AF_INET, seed);
			icrc = le32toh(trace_pkt(pc, &p, &net, payload_for(o, seed)));
			printf("%u,0x%06x,%u,", p.opcode, p.dqpn, p.psn);
			if (o->hdrs & (1u << ROCE_H_RETH))
				printf("%u", p.dma_len);
			/* tshark 4.0 does not know the CNP: no ICRC field */
			if (o->kind == ROCE_K_CNP)
				printf(",\n");
			else
				printf(",0x%08x\n", __builtin_bswap32(icrc));
		}
	roce_pcap_close(pc);
	return 0;
}

/* A bound of BYTES: some packets written, the rest counted as skipped. */
static int cmd_pcapbound(const char *path, const char *bytes)
{
	uint64_t max = strtoull(bytes, NULL, 0), written, skipped;
	struct roce_pcap *pc = roce_pcap_open(path, max);
	enum { N = 200 };
	struct stat st;

	if (!pc)
		return 1;
	for (uint32_t i = 0; i < N; i++) {
		struct roce_pkt p;
		struct roce_net net;

		make_pkt(&p, ROCE_WRITE_ONLY, i);
		make_net(&net, AF_INET, i);
		trace_pkt(pc, &p, &net, 256);
	}
	roce_pcap_stats(pc, &written, &skipped);
	roce_pcap_close(pc);
	printf("%" PRIu64 "\n", written);
	fprintf(stderr, "bound %" PRIu64 ": written %" PRIu64 ", skipped %" PRIu64 "\n", max,
		written, skipped);
	if (stat(path, &st) || (uint64_t)st.st_size > max)
		FAIL("file is %lld bytes, bound %" PRIu64, (long long)st.st_size, max);
	if (!written || !skipped || written + skipped != N)
		FAIL("written %" PRIu64 " + skipped %" PRIu64 " != %d (or one is 0)", written,
		     skipped, N);
	return failures != 0;
}

enum { MT_THREADS = 4, MT_PKTS = 1000, MT_QP0 = 0x100 };

struct mt_arg {
	struct roce_pcap *pc;
	uint32_t thread;
};

static void *mt_writer(void *a)
{
	struct mt_arg *arg = a;

	for (uint32_t i = 0; i < MT_PKTS; i++) {
		struct roce_pkt p;
		struct roce_net net;

		make_pkt(&p, ROCE_SEND_ONLY, i);
		p.dqpn = MT_QP0 + arg->thread;
		p.psn = i;
		make_net(&net, arg->thread & 1 ? AF_INET6 : AF_INET, i);
		trace_pkt(arg->pc, &p, &net, i % 200);
	}
	return NULL;
}

/* Read the trace back: every record parses, every (thread, psn) once. */
static void mt_verify(const char *path)
{
	static uint8_t f[MAX_FRAME], got[MT_THREADS][MT_PKTS];
	struct pcap_in in;
	int len, n = 0;

	if (pcap_in_open(&in, path)) {
		FAIL("cannot reopen %s", path);
		return;
	}
	while ((len = pcap_in_next(&in, f)) > 0) {
		struct roce_pkt p;
		int r = roce_parse_frame(f, len, &p, NULL);

		n++;
		p.dqpn -= MT_QP0;
		if (r != ROCE_OK || p.dqpn >= MT_THREADS || p.psn >= MT_PKTS ||
		    got[p.dqpn][p.psn]++)
			FAIL("record %d: %s, qp %u psn %u", n, roce_reason_name(r), p.dqpn, p.psn);
	}
	fclose(in.f);
	if (len < 0 || n != MT_THREADS * MT_PKTS)
		FAIL("read back %d records", n);
	printf("read back %d records, all parsed\n", n);
}

static int cmd_pcapmt(const char *path)
{
	struct roce_pcap *pc = roce_pcap_open(path, 1u << 30);
	struct mt_arg args[MT_THREADS];
	pthread_t t[MT_THREADS];
	uint64_t written, skipped;

	if (!pc)
		return 1;
	for (uint32_t i = 0; i < MT_THREADS; i++) {
		args[i] = (struct mt_arg){ pc, i };
		pthread_create(&t[i], NULL, mt_writer, &args[i]);
	}
	for (int i = 0; i < MT_THREADS; i++)
		pthread_join(t[i], NULL);
	roce_pcap_stats(pc, &written, &skipped);
	roce_pcap_close(pc);
	printf("written %" PRIu64 ", skipped %" PRIu64 "\n", written, skipped);
	if (written != MT_THREADS * MT_PKTS || skipped)
		FAIL("expected %d written", MT_THREADS * MT_PKTS);
	mt_verify(path);
	return failures != 0;
}

/* ---- fuzzer seeds: a frame and a UDP payload of every opcode ---- */

static void write_file(const char *dir, const char *name, const uint8_t *b, int n)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (!f || fwrite(b, 1, n, f) != (size_t)n)
		FAIL("cannot write %s", path);
	if (f)
		fclose(f);
}

static int cmd_seeds(const char *dir)
{
	static const uint8_t data[512];
	uint8_t ops[256], f[1024];
	int m = roce_opcodes(ops, 256);
	char name[64];

	if (mkdir(dir, 0755) && errno != EEXIST) {
		FAIL("cannot create %s", dir);
		return 1;
	}
	for (int fam = 0; fam < 2; fam++)
		for (int i = 0; i < m; i++) {
			const struct roce_opinfo *o = roce_opinfo(ops[i]);
			int off = 14 + (fam ? 40 : 20) + 8, n;
			struct roce_pkt p;
			struct roce_net net;

			make_pkt(&p, ops[i], i);
			make_net(&net, fam ? AF_INET6 : AF_INET, i);
			n = roce_build_frame(f, sizeof(f), &p, &net, data, payload_for(o, i) % 64);
			snprintf(name, sizeof(name), "frame_%s_v%d", o->name, fam ? 6 : 4);
			write_file(dir, name, f, n);
			snprintf(name, sizeof(name), "udp_%s_v%d", o->name, fam ? 6 : 4);
			write_file(dir, name, f + off, n - off);
		}
	/* a MAD of every CM attribute (fuzz_parse also tries inputs as MADs) */
	static const uint16_t attrs[] = { CM_ATTR_REQ, CM_ATTR_MRA, CM_ATTR_REJ, CM_ATTR_REP,
					  CM_ATTR_RTU, CM_ATTR_DREQ, CM_ATTR_DREP,
					  CM_ATTR_SIDR_REQ, CM_ATTR_SIDR_REP };
	for (size_t i = 0; i < sizeof(attrs) / sizeof(attrs[0]); i++) {
		struct cm_msg cm = { .attr_id = attrs[i], .local_comm_id = 1, .remote_comm_id = 2,
				     .private_data_len = 8, .private_data = "seed" };

		if (cm_mad_build(&cm, f) != CM_MAD_OK)
			FAIL("CM %s does not build", cm_attr_name(attrs[i]));
		snprintf(name, sizeof(name), "mad_%s", cm_attr_name(attrs[i]));
		write_file(dir, name, f, CM_MAD_SIZE);
	}
	printf("seeds: %d\n", 4 * m + (int)(sizeof(attrs) / sizeof(attrs[0])));
	return failures != 0;
}

/* ---- the IPv4 ID: corrections for GSO segments, solving on receive ---- */

/* The ICRC of PKT (a 12-byte BTH, PAY bytes of payload) sent with ID. */
static uint32_t icrc_with_id(struct roce_net *n, uint8_t *pkt, uint32_t pay, uint16_t id)
{
	struct iovec payload = { pkt + 12, pay };

	n->ip_id = id;
	return roce_icrc(n, pkt, 12, &payload, 1, 0);
}

/* What roce_icrc_id_fix and the receive-side solve give, against the whole
 * ICRC computed for each ID, over more packet sizes than a thread keeps
 * tables for (they are refilled as the sizes take turns). */
static int cmd_idfix(void)
{
	static uint8_t pkt[12 + 8004 + ROCE_ICRC_LEN];
	struct roce_net n = { .family = AF_INET, .ttl = 64, .sport = 49152, .dport = 4791 };

	n.src[15] = 1;
	n.dst[15] = 2;
	srand(14);
	for (size_t i = 0; i < sizeof(pkt); i++)
		pkt[i] = (uint8_t)rand();
	for (int r = 0; r < 3000; r++) {
		uint32_t pay = (uint32_t)(rand() % 9) * 1000 + 4, len = 12 + pay + ROCE_ICRC_LEN;
		uint16_t id = (uint16_t)rand();
		uint32_t c0, c, le;

		n.df = rand() & 1;
		c0 = icrc_with_id(&n, pkt, pay, 0);
		c = icrc_with_id(&n, pkt, pay, id);
		if ((c0 ^ roce_icrc_id_fix(len, id)) != c)
			FAIL("id_fix: %u bytes, ID %u", len, id);
		le = htole32(c);
		memcpy(pkt + 12 + pay, &le, 4);
		struct roce_net rx = n;

		rx.ip_id = 0;
		rx.df = true;
		rx.id_unknown = true;
		if (roce_icrc_check(&rx, pkt, len) != ROCE_OK || rx.ip_id != id || rx.df != n.df)
			FAIL("solve: %u bytes, ID %u DF %d: got ID %u DF %d", len, id, n.df, rx.ip_id,
			     rx.df);
	}
	printf("idfix: 3000 packets of 9 sizes, %d failures\n", failures);
	return failures != 0;
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : "";

	if (!strcmp(cmd, "opcodes"))
		return cmd_opcodes();
	if (!strcmp(cmd, "golden") && argc == 4)
		return cmd_golden(argv[2], argv[3]);
	if (!strcmp(cmd, "rxe")) {
		const char *dir = argc > 2 ? argv[2] : getenv("RXE_PCAP_DIR");

		return cmd_rxe(dir ? dir : "/work/shared/pcap/rxe");
	}
	if (!strcmp(cmd, "pcapgen") && argc == 3)
		return cmd_pcapgen(argv[2]);
	if (!strcmp(cmd, "pcapbound") && argc == 4)
		return cmd_pcapbound(argv[2], argv[3]);
	if (!strcmp(cmd, "pcapmt") && argc == 3)
		return cmd_pcapmt(argv[2]);
	if (!strcmp(cmd, "seeds") && argc == 3)
		return cmd_seeds(argv[2]);
	if (!strcmp(cmd, "idfix"))
		return cmd_idfix();
	fprintf(stderr, "usage: wire_vectors opcodes | golden PCAP TXT | rxe [DIR] | "
		"pcapgen FILE | pcapbound FILE BYTES | pcapmt FILE | seeds DIR | idfix\n");
	return 2;
}
