// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Vector tests of the CM MAD codec (wire/cm_mad.c).
 *
 *   cm_vectors rxe [DIR]     every CM MAD of the Soft-RoCE captures
 *                            rdma_cm_rping.pcap and ud_send_bw_cm.pcap:
 *                            UD SEND_ONLY to QP 1 with the GSI Q_Key, decoded,
 *                            rebuilt byte for byte with the ICRC, and the
 *                            kernel's values checked field by field
 *   cm_vectors pcapgen FILE  one packet of every attribute, as the GSI sends
 *                            it, into a pcap; prints what tshark must decode
 *   cm_vectors corrupt       truncations, bit flips and random MADs: never a
 *                            crash, every refusal a known reason; what is
 *                            accepted encodes again to what was decoded
 *   cm_vectors packet KIND SRC DST SPORT SERVICE_PORT
 *                            hex of a UDP payload (BTH ... ICRC) to send
 *                            from SRC:SPORT to DST:4791 (IPv4): KIND is req,
 *                            sidr_req, or a broken REQ (bad_class, short,
 *                            bad_qkey, rc_send)
 *   cm_vectors decode HEX    the CM MAD in a received UDP payload, one line
 *   cm_vectors trace FILE    every CM MAD of a uroce trace (UROCE_PCAP) as
 *                            for the rxe captures; prints the attributes seen
 *
 * Exit 0 pass, 1 fail, 77 skip.
 */
#include <endian.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/socket.h>

#include "wire/cm_mad.h"
#include "wire/wire.h"

static int failures;

#define FAIL(...) do { fprintf(stderr, "FAIL: " __VA_ARGS__); fputc('\n', stderr); \
		       failures++; } while (0)
#define EXPECT(file, idx, what, got, want) do { \
	if ((uint64_t)(got) != (uint64_t)(want)) \
		FAIL("%s #%d: %s = 0x%" PRIx64 ", expected 0x%" PRIx64, file, idx, what, \
		     (uint64_t)(got), (uint64_t)(want)); } while (0)

#include "pcap_in.h"

/* A GSI packet around a MAD: UD SEND_ONLY, dest QP 1, Q_Key 0x80010000. */
static void gsi_pkt(struct roce_pkt *p, uint32_t psn)
{
	memset(p, 0, sizeof(*p));
	p->opcode = CM_GSI_OPCODE;
	p->pkey = CM_GSI_PKEY;
	p->dqpn = CM_GSI_QPN;
	p->ackreq = true;
	p->psn = psn;
	p->qkey = CM_GSI_QKEY;
	p->sqpn = CM_GSI_QPN;
}

/* ---- rxe captures ------------------------------------------------------------ */

static unsigned attr_seen[0x20];

/* What the kernel put in the messages of rdma_cm_rping.pcap (RDMA_CM.md §3). */
static void check_rping(const char *file, int idx, const struct cm_msg *m)
{
	struct cm_cma_addrs a;

	if (strcmp(file, "rdma_cm_rping.pcap"))
		return;
	if (idx == 1) {
		EXPECT(file, idx, "REQ local_comm_id", m->local_comm_id, 0xbaac866f);
		EXPECT(file, idx, "REQ service_id", m->service_id, cm_service_id(CM_RDMA_PS_TCP, 7174));
		EXPECT(file, idx, "REQ local_ca_guid", m->local_ca_guid, 0x505400fffe770003ull);
		EXPECT(file, idx, "REQ local_qpn", m->local_qpn, 0x11);
		EXPECT(file, idx, "REQ responder_resources", m->responder_resources, 1);
		EXPECT(file, idx, "REQ initiator_depth", m->initiator_depth, 1);
		EXPECT(file, idx, "REQ remote_cm_response_timeout", m->remote_cm_response_timeout, 20);
		EXPECT(file, idx, "REQ transport_type", m->transport_type, CM_TRANSPORT_RC);
		EXPECT(file, idx, "REQ starting_psn", m->starting_psn, 0xeabfc7);
		EXPECT(file, idx, "REQ local_cm_response_timeout", m->local_cm_response_timeout, 20);
		EXPECT(file, idx, "REQ retry_count", m->retry_count, 7);
		EXPECT(file, idx, "REQ pkey", m->pkey, 0xffff);
		EXPECT(file, idx, "REQ path_mtu", m->path_mtu, 3);
		EXPECT(file, idx, "REQ rnr_retry_count", m->rnr_retry_count, 7);
		EXPECT(file, idx, "REQ max_cm_retries", m->max_cm_retries, 15);
		EXPECT(file, idx, "REQ local lid", m->primary.local_lid, CM_PERMISSIVE_LID);
		EXPECT(file, idx, "REQ remote lid", m->primary.remote_lid, CM_PERMISSIVE_LID);
		EXPECT(file, idx, "REQ local gid", m->primary.local_gid[15], 3);
		EXPECT(file, idx, "REQ remote gid", m->primary.remote_gid[15], 2);
		EXPECT(file, idx, "REQ flow_label", m->primary.flow_label, 0xB7A44);
		EXPECT(file, idx, "REQ hop_limit", m->primary.hop_limit, 64);
		EXPECT(file, idx, "REQ local_ack_timeout", m->primary.local_ack_timeout, 19);
		EXPECT(file, idx, "REQ private_data_len", m->private_data_len, CM_REQ_PRIVATE_DATA_SIZE);
		EXPECT(file, idx, "REQ tid", m->tid, 0x26f86acbaull);
		if (cm_cma_hdr_unpack(m->private_data, &a))
			FAIL("%s #%d: the CMA header does not decode", file, idx);
		EXPECT(file, idx, "CMA family", a.family, AF_INET);
		EXPECT(file, idx, "CMA src port", a.src_port, 57858);
		EXPECT(file, idx, "CMA src ip", a.src[15], 3);
		EXPECT(file, idx, "CMA dst ip", a.dst[15], 2);
		EXPECT(file, idx, "CMA mapped", a.dst[10] & a.dst[11], 0xff);
		/* the header encodes back to the same bytes */
		uint8_t h[CM_CMA_HDR_SIZE];

		cm_cma_hdr_pack(h, &a);
		if (memcmp(h, m->private_data, sizeof(h)))
			FAIL("%s #%d: the CMA header rebuilds differently", file, idx);
	}
	if (idx == 2) {
		EXPECT(file, idx, "REP remote_comm_id", m->remote_comm_id, 0xbaac866f);
		EXPECT(file, idx, "REP starting_psn", m->starting_psn, 10134932);
		EXPECT(file, idx, "REP target_ack_delay", m->target_ack_delay, 15);
	}
}

static void check_sidr(const char *file, const struct cm_msg *m, int idx)
{
	struct cm_cma_addrs a;

	if (strcmp(file, "ud_send_bw_cm.pcap"))
		return;
	if (m->attr_id == CM_ATTR_SIDR_REQ) {
		EXPECT(file, idx, "SIDR_REQ service_id", m->service_id, cm_service_id(CM_RDMA_PS_UDP, 18515));
		EXPECT(file, idx, "SIDR_REQ pkey", m->pkey, 0xffff);
		if (cm_cma_hdr_unpack(m->private_data, &a) || a.family != AF_INET)
			FAIL("%s #%d: SIDR_REQ CMA header", file, idx);
	}
	if (m->attr_id == CM_ATTR_SIDR_REP) {
		EXPECT(file, idx, "SIDR_REP status", m->sidr_status, CM_SIDR_SUCCESS);
		EXPECT(file, idx, "SIDR_REP qkey", m->local_qkey, CM_RDMA_UDP_QKEY);
		EXPECT(file, idx, "SIDR_REP service_id", m->service_id, cm_service_id(CM_RDMA_PS_UDP, 18515));
		if (!m->local_qpn)
			FAIL("%s #%d: SIDR_REP without a QPN", file, idx);
	}
}

/*
 * uroce's own traces: the fields a Linux peer relies on, as rxe sends them
 * (RDMA_CM.md §3): P_Key 0xffff, permissive LIDs, the GIDs and the CMA
 * header naming the packet's own addresses and the service's port, hop
 * limit 64, an rdma_cm service ID.
 */
static bool uroce_trace;

static void check_linux_shape(const char *file, int idx, const struct cm_msg *m,
			      const struct roce_net *net)
{
	struct cm_cma_addrs a;

	if (!uroce_trace)
		return;
	if (m->attr_id == CM_ATTR_REQ) {
		EXPECT(file, idx, "REQ pkey", m->pkey, 0xffff);
		EXPECT(file, idx, "REQ local lid", m->primary.local_lid, CM_PERMISSIVE_LID);
		EXPECT(file, idx, "REQ remote lid", m->primary.remote_lid, CM_PERMISSIVE_LID);
		EXPECT(file, idx, "REQ hop limit", m->primary.hop_limit, 64);
		if (memcmp(m->primary.local_gid, net->src, 16) || memcmp(m->primary.remote_gid, net->dst, 16))
			FAIL("%s #%d: REQ GIDs are not the packet's addresses", file, idx);
		if (!m->max_cm_retries || !m->path_mtu || m->path_mtu > 5)
			FAIL("%s #%d: REQ max CM retries %u, path MTU %u", file, idx, m->max_cm_retries,
			     m->path_mtu);
	}
	if (m->attr_id == CM_ATTR_REQ || m->attr_id == CM_ATTR_SIDR_REQ) {
		if (cm_cma_hdr_unpack(m->private_data, &a))
			FAIL("%s #%d: %s without a CMA header", file, idx, cm_attr_name(m->attr_id));
		else if (memcmp(a.src, net->src, 16) || memcmp(a.dst, net->dst, 16))
			FAIL("%s #%d: the CMA header's addresses are not the packet's", file, idx);
		if (!cm_service_id_is_ip(m->service_id))
			FAIL("%s #%d: service ID 0x%" PRIx64 " is not rdma_cm's", file, idx, m->service_id);
	}
}

static int rxe_file(const char *dir, const char *name)
{
	static uint8_t f[MAX_FRAME], out[MAX_FRAME];
	char path[4096];
	struct pcap_in in;
	int len, idx = 0, n = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (pcap_in_open(&in, path)) {
		printf("%s: cannot read: skip\n", path);
		return -1;
	}
	while ((len = pcap_in_next(&in, f)) > 0) {
		struct roce_pkt p, q;
		struct roce_net net;
		struct cm_msg m;
		uint8_t mad[CM_MAD_SIZE];
		uint32_t plen;
		int r;

		idx++;
		if (!udp_payload(f, len, &plen))
			continue;
		r = roce_parse_frame(f, len, &p, &net);
		if (r != ROCE_OK || p.dqpn != CM_GSI_QPN)
			continue;
		n++;
		EXPECT(name, idx, "opcode", p.opcode, CM_GSI_OPCODE);
		EXPECT(name, idx, "qkey", p.qkey, CM_GSI_QKEY);
		EXPECT(name, idx, "source qp", p.sqpn, CM_GSI_QPN);
		EXPECT(name, idx, "udp sport", net.sport, CM_GSI_UDP_SPORT);
		r = cm_mad_parse(p.payload, p.paylen, &m);
		if (r != CM_MAD_OK) {
			FAIL("%s #%d: cm_mad_parse: %s", name, idx, cm_mad_reason_name(r));
			continue;
		}
		if (m.attr_id < 0x20)
			attr_seen[m.attr_id]++;
		check_rping(name, idx, &m);
		check_sidr(name, &m, idx);
		check_linux_shape(name, idx, &m, &net);
		/* the MAD, then the whole frame around it, byte for byte */
		r = cm_mad_build(&m, mad);
		if (r != CM_MAD_OK || memcmp(mad, p.payload, CM_MAD_SIZE)) {
			FAIL("%s #%d (%s): the rebuilt MAD differs", name, idx, cm_attr_name(m.attr_id));
			continue;
		}
		gsi_pkt(&q, p.psn);
		q.solicited = p.solicited;
		r = roce_build_frame(out, sizeof(out), &q, &net, mad, sizeof(mad));
		if (r != len || memcmp(out, f, len))
			FAIL("%s #%d (%s): the rebuilt frame differs", name, idx, cm_attr_name(m.attr_id));
		printf("  %s #%-3d %-8s psn %u tid 0x%" PRIx64 ": rebuilt byte for byte\n", name, idx,
		       cm_attr_name(m.attr_id), p.psn, m.tid);
	}
	fclose(in.f);
	return n;
}

static int cmd_rxe(const char *dir)
{
	static const uint16_t want[] = { CM_ATTR_REQ, CM_ATTR_REP, CM_ATTR_RTU, CM_ATTR_DREQ,
					 CM_ATTR_DREP, CM_ATTR_SIDR_REQ, CM_ATTR_SIDR_REP };
	int a = rxe_file(dir, "rdma_cm_rping.pcap");
	int b = rxe_file(dir, "ud_send_bw_cm.pcap");

	if (a < 0 || b < 0)
		return 77;
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		if (!attr_seen[want[i]])
			FAIL("no %s in the captures", cm_attr_name(want[i]));
	printf("CM MADs in the rxe captures: %d, failures %d\n", a + b, failures);
	return failures ? 1 : 0;
}

static int cmd_trace(char *path)
{
	char *slash = strrchr(path, '/');
	int n;

	if (!slash)
		return 2;
	*slash = 0;
	uroce_trace = true;
	n = rxe_file(path, slash + 1);
	printf("CM MADs:");
	for (int a = 0; a < 0x20; a++)
		if (attr_seen[a])
			printf(" %s=%u", cm_attr_name(a), attr_seen[a]);
	printf("\n");
	if (n <= 0)
		FAIL("no CM MAD in %s/%s", path, slash + 1);
	return failures ? 1 : 0;
}

/* ---- messages of every attribute --------------------------------------------- */

static void fill_msg(struct cm_msg *m, uint16_t attr, uint32_t seed)
{
	static const uint8_t g1[16] = { [10] = 0xff, 0xff, 10, 0xee, 0, 1 };
	static const uint8_t g2[16] = { [10] = 0xff, 0xff, 10, 0xee, 0, 2 };

	memset(m, 0, sizeof(*m));
	m->attr_id = attr;
	m->tid = 0x100000000ull | seed;
	m->local_comm_id = 0x40000000 | seed;
	m->remote_comm_id = 0x80000000 | (seed * 7);
	m->private_data_len = cm_private_data_size(attr);
	for (int i = 0; i < m->private_data_len; i++)
		m->private_data[i] = (uint8_t)(i + seed);
	switch (attr) {
	case CM_ATTR_REQ: {
		struct cm_cma_addrs a = { .family = AF_INET, .src_port = 40000 + seed };

		memcpy(a.src, g1, 16);
		memcpy(a.dst, g2, 16);
		m->remote_comm_id = 0;
		m->service_id = cm_service_id(CM_RDMA_PS_TCP, 7174);
		m->local_ca_guid = 0x0200aabbccddeeffull;
		m->local_qpn = 0x123 + seed;
		m->responder_resources = 4;
		m->initiator_depth = 2;
		m->remote_cm_response_timeout = 20;
		m->starting_psn = 0xabcdef;
		m->local_cm_response_timeout = 20;
		m->retry_count = 7;
		m->pkey = 0xffff;
		m->path_mtu = 3;
		m->rnr_retry_count = 7;
		m->max_cm_retries = 15;
		m->primary.local_lid = m->primary.remote_lid = CM_PERMISSIVE_LID;
		memcpy(m->primary.local_gid, g1, 16);
		memcpy(m->primary.remote_gid, g2, 16);
		m->primary.flow_label = 0xB7A44;
		m->primary.hop_limit = 64;
		m->primary.local_ack_timeout = 19;
		cm_cma_hdr_pack(m->private_data, &a);
		break;
	}
	case CM_ATTR_REP:
		m->local_qpn = 0x456;
		m->starting_psn = 0x123456;
		m->responder_resources = 2;
		m->initiator_depth = 4;
		m->target_ack_delay = 15;
		m->rnr_retry_count = 7;
		m->local_ca_guid = 0x0200112233445566ull;
		break;
	case CM_ATTR_REJ:
		m->msg_rejected = CM_MSG_RESPONSE_REQ;
		m->reason = CM_REJ_INVALID_SERVICE_ID;
		m->local_comm_id = 0;
		break;
	case CM_ATTR_MRA:
		m->msg_mraed = CM_MSG_RESPONSE_REQ;
		m->service_timeout = 22;
		break;
	case CM_ATTR_DREQ:
		m->remote_qpn = 0x789;
		break;
	case CM_ATTR_SIDR_REQ: {
		struct cm_cma_addrs a = { .family = AF_INET, .src_port = 40000 + seed };

		memcpy(a.src, g1, 16);
		memcpy(a.dst, g2, 16);
		m->request_id = 0x40000000 | seed;
		m->pkey = 0xffff;
		m->service_id = cm_service_id(CM_RDMA_PS_UDP, 18515);
		cm_cma_hdr_pack(m->private_data, &a);
		break;
	}
	case CM_ATTR_SIDR_REP:
		m->request_id = 0x40000000 | seed;
		m->sidr_status = CM_SIDR_SUCCESS;
		m->local_qpn = 0x99;
		m->service_id = cm_service_id(CM_RDMA_PS_UDP, 18515);
		m->local_qkey = CM_RDMA_UDP_QKEY;
		break;
	}
}

static const uint16_t all_attrs[] = { CM_ATTR_REQ, CM_ATTR_MRA, CM_ATTR_REJ, CM_ATTR_REP,
				      CM_ATTR_RTU, CM_ATTR_DREQ, CM_ATTR_DREP, CM_ATTR_SIDR_REQ,
				      CM_ATTR_SIDR_REP };
#define N_ATTRS (sizeof(all_attrs) / sizeof(all_attrs[0]))

/* One line per packet as tshark prints it: attribute ID, TID, DETH Q_Key,
 * dest QP, ICRC. */
static int cmd_pcapgen(const char *path)
{
	static const uint8_t a1[16] = { [10] = 0xff, 0xff, 10, 0xee, 0, 1 };
	static const uint8_t a2[16] = { [10] = 0xff, 0xff, 10, 0xee, 0, 2 };
	struct roce_pcap *pc = roce_pcap_open(path, 1 << 20);
	struct roce_net net;

	if (!pc) {
		perror(path);
		return 1;
	}
	roce_net_from_socket(&net, AF_INET, a1, a2, CM_GSI_UDP_SPORT, ROCE_UDP_PORT);
	net.smac[0] = net.dmac[0] = 0x02;
	net.dmac[5] = 1;
	for (size_t i = 0; i < N_ATTRS; i++) {
		uint8_t hdr[64], mad[CM_MAD_SIZE], tail[4];
		struct roce_pkt p;
		struct cm_msg m;
		int h;

		fill_msg(&m, all_attrs[i], (uint32_t)i + 1);
		if (cm_mad_build(&m, mad) != CM_MAD_OK)
			FAIL("%s does not build", cm_attr_name(m.attr_id));
		gsi_pkt(&p, (uint32_t)i);
		h = roce_build(hdr, sizeof(hdr), &p, sizeof(mad));
		struct iovec pay = { mad, sizeof(mad) };
		uint32_t crc = htole32(roce_icrc(&net, hdr, h, &pay, 1, 0));

		memcpy(tail, &crc, 4);
		struct iovec iov[3] = { { hdr, h }, { mad, sizeof(mad) }, { tail, 4 } };

		roce_pcap_write(pc, &net, iov, 3);
		printf("0x%04x,0x%016" PRIx64 ",0x%016x,0x%06x,0x%08x\n", m.attr_id, m.tid,
		       CM_GSI_QKEY, CM_GSI_QPN, __builtin_bswap32(le32toh(crc)));
	}
	roce_pcap_close(pc);
	return failures ? 1 : 0;
}

/* ---- corruption ----------------------------------------------------------------- */

static unsigned reasons[CM_MAD_REASON_COUNT];

/* Parse BUF; what is accepted must build, and the build must parse to the
 * same message (reserved bits are the only bytes allowed to differ). */
static void try_mad(const uint8_t *buf, uint32_t len)
{
	struct cm_msg m, m2;
	uint8_t out[CM_MAD_SIZE];
	int r = cm_mad_parse(buf, len, &m);

	if (r < 0 || r >= CM_MAD_REASON_COUNT) {
		FAIL("cm_mad_parse returned %d", r);
		return;
	}
	reasons[r]++;
	if (r != CM_MAD_OK)
		return;
	if (cm_mad_build(&m, out) != CM_MAD_OK) {
		FAIL("an accepted %s does not build", cm_attr_name(m.attr_id));
		return;
	}
	if (cm_mad_parse(out, sizeof(out), &m2) != CM_MAD_OK || memcmp(&m, &m2, sizeof(m)))
		FAIL("an accepted %s does not round-trip", cm_attr_name(m.attr_id));
}

static int cmd_corrupt(void)
{
	uint8_t good[CM_MAD_SIZE], buf[CM_MAD_SIZE + 8];
	unsigned total = 0, seed = 12345;

	for (size_t i = 0; i < N_ATTRS; i++) {
		struct cm_msg m;

		fill_msg(&m, all_attrs[i], (uint32_t)i);
		if (cm_mad_build(&m, good) != CM_MAD_OK) {
			FAIL("%s does not build", cm_attr_name(all_attrs[i]));
			continue;
		}
		/* truncations and one byte too many */
		for (uint32_t len = 0; len <= CM_MAD_SIZE + 1; len++, total++) {
			memcpy(buf, good, CM_MAD_SIZE);
			buf[CM_MAD_SIZE] = 0;
			try_mad(buf, len);
		}
		/* every single bit flipped */
		for (uint32_t bit = 0; bit < CM_MAD_SIZE * 8; bit++, total++) {
			memcpy(buf, good, CM_MAD_SIZE);
			buf[bit / 8] ^= 1u << (bit % 8);
			try_mad(buf, CM_MAD_SIZE);
		}
		/* random bytes after a valid header */
		for (int k = 0; k < 2000; k++, total++) {
			memcpy(buf, good, CM_MAD_HDR_SIZE);
			for (int j = CM_MAD_HDR_SIZE; j < CM_MAD_SIZE; j++) {
				seed = seed * 1103515245u + 12345u;
				buf[j] = seed >> 16;
			}
			try_mad(buf, CM_MAD_SIZE);
		}
	}
	/* out-of-range fields are refused by the builder */
	struct cm_msg m;

	fill_msg(&m, CM_ATTR_REQ, 1);
	m.local_qpn = 1u << 24;
	if (cm_mad_build(&m, good) != CM_MAD_E_FIELD)
		FAIL("a 25-bit QPN builds");
	fill_msg(&m, CM_ATTR_REQ, 1);
	m.private_data_len = CM_REQ_PRIVATE_DATA_SIZE + 1;
	if (cm_mad_build(&m, good) != CM_MAD_E_FIELD)
		FAIL("93 bytes of REQ private data build");
	fill_msg(&m, CM_ATTR_REJ, 1);
	m.ari_length = CM_REJ_ARI_MAX + 1;
	if (cm_mad_build(&m, good) != CM_MAD_E_FIELD)
		FAIL("a REJ with 73 bytes of ARI builds");
	m.attr_id = CM_ATTR_LAP;
	if (cm_mad_build(&m, good) != CM_MAD_E_ATTR)
		FAIL("a LAP builds");
	printf("corrupted MADs: %u;", total);
	for (int r = 0; r < CM_MAD_REASON_COUNT; r++)
		printf(" %s=%u", cm_mad_reason_name(r), reasons[r]);
	printf("\n");
	for (int r = CM_MAD_E_LENGTH; r < CM_MAD_REASON_COUNT; r++)
		if (!reasons[r])
			FAIL("no corrupted MAD was refused as %s", cm_mad_reason_name(r));
	return failures ? 1 : 0;
}

/* ---- packets for the QP1 integration test (tests/cm/qp1.sh) ---------------------- */

static int parse_ip4(const char *s, uint8_t gid[16])
{
	memset(gid, 0, 16);
	gid[10] = gid[11] = 0xff;
	return inet_pton(AF_INET, s, gid + 12) == 1 ? 0 : -1;
}

static int cmd_packet(char **argv)
{
	const char *kind = argv[0];
	uint8_t src[16], dst[16], mad[CM_MAD_SIZE], out[512];
	uint16_t sport = (uint16_t)atoi(argv[3]), svc = (uint16_t)atoi(argv[4]);
	struct roce_net net;
	struct roce_pkt p;
	struct cm_msg m;
	uint32_t madlen = CM_MAD_SIZE;
	int h;

	if (parse_ip4(argv[1], src) || parse_ip4(argv[2], dst))
		return 2;
	if (!strcmp(kind, "sidr_req")) {
		fill_msg(&m, CM_ATTR_SIDR_REQ, (uint32_t)getpid());
		m.service_id = cm_service_id(CM_RDMA_PS_UDP, svc);
	} else {
		fill_msg(&m, CM_ATTR_REQ, (uint32_t)getpid());
		m.service_id = cm_service_id(CM_RDMA_PS_TCP, svc);
	}
	/* the CMA header names the addresses of this packet */
	struct cm_cma_addrs a = { .family = AF_INET, .src_port = sport };

	memcpy(a.src, src, 16);
	memcpy(a.dst, dst, 16);
	cm_cma_hdr_pack(m.private_data, &a);
	memcpy(m.primary.local_gid, src, 16);
	memcpy(m.primary.remote_gid, dst, 16);
	if (cm_mad_build(&m, mad) != CM_MAD_OK)
		return 1;
	gsi_pkt(&p, 0);
	if (!strcmp(kind, "bad_class"))
		mad[1] = 0x04;               /* performance management */
	else if (!strcmp(kind, "short"))
		madlen = 200;
	else if (!strcmp(kind, "bad_qkey"))
		p.qkey = 0x80010001;
	else if (!strcmp(kind, "rc_send"))
		p.opcode = ROCE_TR_RC | ROCE_SEND_ONLY;
	else if (strcmp(kind, "req") && strcmp(kind, "sidr_req"))
		return 2;
	roce_net_from_socket(&net, AF_INET, src, dst, sport, ROCE_UDP_PORT);
	h = roce_build(out, sizeof(out), &p, madlen);
	if (h < 0)
		return 1;
	memcpy(out + h, mad, madlen);
	struct iovec pay = { mad, madlen };
	uint32_t crc = htole32(roce_icrc(&net, out, h, &pay, 1, roce_padlen(madlen)));

	memset(out + h + madlen, 0, roce_padlen(madlen));
	memcpy(out + h + madlen + roce_padlen(madlen), &crc, 4);
	for (uint32_t i = 0; i < h + madlen + roce_padlen(madlen) + 4; i++)
		printf("%02x", out[i]);
	printf(" %u\n", m.attr_id == CM_ATTR_REQ ? m.local_comm_id : m.request_id);
	return 0;
}

static int cmd_decode(const char *hex)
{
	uint8_t buf[4096];
	uint32_t n = 0;
	struct roce_pkt p;
	struct cm_msg m;
	int r;

	while (hex[0] && hex[1] && n < sizeof(buf)) {
		unsigned int v;

		if (sscanf(hex, "%2x", &v) != 1)
			return 2;
		buf[n++] = (uint8_t)v;
		hex += 2;
	}
	r = roce_parse(buf, n, &p);
	if (r != ROCE_OK) {
		printf("bad packet: %s\n", roce_reason_name(r));
		return 1;
	}
	r = cm_mad_parse(p.payload, p.paylen, &m);
	if (r != CM_MAD_OK) {
		printf("bad MAD: %s\n", cm_mad_reason_name(r));
		return 1;
	}
	printf("opcode=0x%02x dqpn=%u sqpn=%u qkey=0x%08x attr=%s tid=0x%" PRIx64
	       " local_comm_id=%u remote_comm_id=%u reason=%u msg_rejected=%u request_id=%u"
	       " sidr_status=%u\n", p.opcode, p.dqpn, p.sqpn, p.qkey, cm_attr_name(m.attr_id),
	       m.tid, m.local_comm_id, m.remote_comm_id, m.reason, m.msg_rejected, m.request_id,
	       m.sidr_status);
	return 0;
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : "";

	if (!strcmp(cmd, "rxe")) {
		const char *dir = argc > 2 ? argv[2] : getenv("RXE_PCAP_DIR");

		return cmd_rxe(dir ? dir : "/work/shared/pcap/rxe");
	}
	if (!strcmp(cmd, "pcapgen") && argc > 2)
		return cmd_pcapgen(argv[2]);
	if (!strcmp(cmd, "corrupt"))
		return cmd_corrupt();
	if (!strcmp(cmd, "packet") && argc > 6)
		return cmd_packet(argv + 2);
	if (!strcmp(cmd, "decode") && argc > 2)
		return cmd_decode(argv[2]);
	if (!strcmp(cmd, "trace") && argc > 2)
		return cmd_trace(argv[2]);
	fprintf(stderr, "usage: cm_vectors rxe [DIR] | pcapgen FILE | corrupt | "
		"packet KIND SRC DST SPORT SERVICE_PORT | decode HEX\n");
	return 2;
}
