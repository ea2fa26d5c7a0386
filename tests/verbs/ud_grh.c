// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * What a UD receive completion carries, as RoCEv2 defines it and rxe/mlx5
 * deliver it: for every GID of the device (IPv4 and IPv6), one UD QP sends
 * messages of several lengths (padded and not) to another; the receiver
 * checks the completion (IBV_WC_GRH, src_qp, sl = L3 header type, slid 0,
 * pkey_index 0, byte_len), that libibverbs' ibv_init_ah_from_wc() reads the
 * sender's GID and our GID index back out of the GRH area, and that a reply
 * through ibv_create_ah_from_wc() arrives.  It prints each GRH area as
 *   grh FAMILY UDP_PAYLOAD_LEN SRC_IP DST_IP HEX40
 * for ud_grh.py to compare byte for byte with the header rxe writes.
 * With "listen ipv4|ipv6", it prints "qpn N IP" (a QP and the first GID of
 * that family) and waits (10 s at most) for one UD message there, sent by
 * ud_grh.py from a plain UDP socket with a TOS/TTL of its choice, and
 * prints its GRH area the same way.
 * Run under `uroce run`:  ud_grh DEVICE [listen ipv4|ipv6]
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <infiniband/verbs.h>

#define QKEY 0x11111111u
#define BUFSZ 8192

static int failures;

static void check(int cond, const char *fmt, const char *what, unsigned a)
{
	printf("%s: ", cond ? "ok" : "FAIL");
	printf(fmt, what, a);
	printf("\n");
	if (!cond)
		failures++;
}

static struct ibv_qp *ud_qp(struct ibv_pd *pd, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr ia = { .send_cq = cq, .recv_cq = cq, .qp_type = IBV_QPT_UD,
				       .cap = { .max_send_wr = 8, .max_recv_wr = 8,
						.max_send_sge = 1, .max_recv_sge = 1 } };
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = QKEY };
	struct ibv_qp *qp = ibv_create_qp(pd, &ia);

	if (!qp ||
	    ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY))
		goto err;
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE))
		goto err;
	a.qp_state = IBV_QPS_RTS;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN))
		goto err;
	return qp;
err:
	fprintf(stderr, "ud_grh: UD QP setup failed: %s\n", strerror(errno));
	exit(1);
}

/* One completion of CQ within 10 s (bounded even if a packet is lost). */
static struct ibv_wc poll_one(struct ibv_cq *cq)
{
	struct ibv_wc wc;
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		int n = ibv_poll_cq(cq, 1, &wc);

		if (n == 1)
			return wc;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (n < 0 || t.tv_sec - t0.tv_sec > 10) {
			printf("FAIL: no completion\n");
			exit(1);
		}
	}
}

static void post_recv(struct ibv_qp *qp, struct ibv_mr *mr, uint8_t *buf)
{
	struct ibv_sge sge = { (uintptr_t)buf, BUFSZ, mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1 }, *bad;

	memset(buf, 0xa5, BUFSZ);   /* what is not written must not stay 0xa5 */
	if (ibv_post_recv(qp, &wr, &bad))
		exit(1);
}

static void send_ud(struct ibv_qp *qp, struct ibv_mr *mr, uint8_t *buf, uint32_t len,
		    struct ibv_ah *ah, uint32_t rqpn)
{
	struct ibv_sge sge = { (uintptr_t)buf, len, mr->lkey };
	struct ibv_send_wr wr = { .wr_id = 2, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED,
				  .wr.ud = { .ah = ah, .remote_qpn = rqpn, .remote_qkey = QKEY } };
	struct ibv_send_wr *bad;

	if (ibv_post_send(qp, &wr, &bad))
		exit(1);
}

static void ip_str(const union ibv_gid *g, int v4, char *out)
{
	inet_ntop(v4 ? AF_INET : AF_INET6, v4 ? (const void *)(g->raw + 12) : g->raw, out,
		  INET6_ADDRSTRLEN);
}

static void one_gid(struct ibv_context *ctx, struct ibv_pd *pd, int gidx)
{
	static const uint32_t lens[] = { 1, 3, 100, 1021, 2048 };
	static const uint8_t v4pfx[12] = { [10] = 0xff, [11] = 0xff };
	union ibv_gid gid;
	struct ibv_cq *cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	struct ibv_qp *a = ud_qp(pd, cq), *b = ud_qp(pd, cq);
	uint8_t *sbuf = calloc(1, BUFSZ), *rbuf = calloc(1, BUFSZ);
	struct ibv_mr *smr = ibv_reg_mr(pd, sbuf, BUFSZ, IBV_ACCESS_LOCAL_WRITE);
	struct ibv_mr *rmr = ibv_reg_mr(pd, rbuf, BUFSZ, IBV_ACCESS_LOCAL_WRITE);
	char ipa[INET6_ADDRSTRLEN];
	int v4;

	if (ibv_query_gid(ctx, 1, gidx, &gid) || !cq || !smr || !rmr)
		exit(1);
	v4 = !memcmp(gid.raw, v4pfx, 12);
	const char *fam = v4 ? "ipv4" : "ipv6";
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1,
				  .grh = { .dgid = gid, .sgid_index = gidx, .hop_limit = 64 } };
	struct ibv_ah *ah = ibv_create_ah(pd, &aa);

	if (!ah)
		exit(1);
	ip_str(&gid, v4, ipa);
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		uint32_t len = lens[i];
		struct ibv_ah_attr back;
		struct ibv_wc wc;

		post_recv(b, rmr, rbuf);
		for (uint32_t k = 0; k < len; k++)
			sbuf[k] = (uint8_t)(k * 7 + len);
		send_ud(a, smr, sbuf, len, ah, b->qp_num);
		wc = poll_one(cq);
		if (wc.opcode == IBV_WC_SEND)   /* the send and the receive, in either order */
			wc = poll_one(cq);
		else
			poll_one(cq);
		check(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV, "%s recv %u B", fam, len);
		check(wc.byte_len == 40 + len, "%s byte_len = 40 + %u", fam, len);
		check(wc.wc_flags & IBV_WC_GRH, "%s IBV_WC_GRH (%u B)", fam, len);
		check(wc.src_qp == a->qp_num, "%s src_qp (%u B)", fam, len);
		check(wc.qp_num == b->qp_num, "%s qp_num (%u B)", fam, len);
		/* IBTA A17.4.5.1 via the SL, as mlx5 reports it: 2 IPv4, 1 IPv6. */
		check(wc.sl == (v4 ? 2 : 1), "%s sl = L3 header type, got %u", fam, wc.sl);
		check(wc.slid == 0 && wc.dlid_path_bits == 0, "%s slid/dlid_path_bits 0 (%u B)", fam, len);
		check(wc.pkey_index == 0, "%s pkey_index 0 (%u B)", fam, len);
		check(!memcmp(rbuf + 40, sbuf, len) && rbuf[40 + len] == 0xa5,
		      "%s payload after the GRH area (%u B)", fam, len);
		if (ibv_init_ah_from_wc(ctx, 1, &wc, (struct ibv_grh *)rbuf, &back)) {
			check(0, "%s ibv_init_ah_from_wc (%u B)", fam, len);
		} else {
			check(back.is_global && !memcmp(&back.grh.dgid, &gid, 16) &&
			      back.grh.sgid_index == gidx && back.grh.hop_limit == 64,
			      "%s ibv_init_ah_from_wc: sender GID, our GID index (%u B)", fam, len);
		}
		printf("grh %s %u %s %s ", fam, 12 + 8 + len + ((4 - len % 4) % 4) + 4, ipa, ipa);
		for (int k = 0; k < 40; k++)
			printf("%02x", rbuf[k]);
		printf("\n");

		/* A reply to where the completion says the message came from. */
		struct ibv_ah *rah = ibv_create_ah_from_wc(pd, &wc, (struct ibv_grh *)rbuf, 1);

		check(rah != NULL, "%s ibv_create_ah_from_wc (%u B)", fam, len);
		if (rah) {
			post_recv(a, rmr, rbuf);
			send_ud(b, smr, sbuf, len, rah, wc.src_qp);
			wc = poll_one(cq);
			if (wc.opcode == IBV_WC_SEND)
				wc = poll_one(cq);
			else
				poll_one(cq);
			check(wc.status == IBV_WC_SUCCESS && wc.qp_num == a->qp_num &&
			      wc.src_qp == b->qp_num && !memcmp(rbuf + 40, sbuf, len),
			      "%s reply through ibv_create_ah_from_wc (%u B)", fam, len);
			ibv_destroy_ah(rah);
		}
	}
	ibv_destroy_ah(ah);
	ibv_destroy_qp(a);
	ibv_destroy_qp(b);
	ibv_dereg_mr(smr);
	ibv_dereg_mr(rmr);
	ibv_destroy_cq(cq);
	free(sbuf);
	free(rbuf);
}

/* One UD QP that waits for one message from outside; prints its GRH area. */
static int listen_one(struct ibv_context *ctx, struct ibv_pd *pd, int want_v4)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	struct ibv_qp *qp = ud_qp(pd, cq);
	uint8_t *rbuf = calloc(1, BUFSZ);
	struct ibv_mr *mr = ibv_reg_mr(pd, rbuf, BUFSZ, IBV_ACCESS_LOCAL_WRITE);
	struct ibv_wc wc;
	union ibv_gid gid;
	char ip[INET6_ADDRSTRLEN];
	int v4;

	if (!mr)
		return 1;
	for (int g = 0;; g++) {
		static const uint8_t v4pfx[12] = { [10] = 0xff, [11] = 0xff };

		if (ibv_query_gid(ctx, 1, g, &gid)) {
			fprintf(stderr, "ud_grh: no %s GID\n", want_v4 ? "IPv4" : "IPv6");
			return 1;
		}
		v4 = !memcmp(gid.raw, v4pfx, 12);
		if (v4 == want_v4 && (gid.global.subnet_prefix || gid.global.interface_id))
			break;
	}
	post_recv(qp, mr, rbuf);
	ip_str(&gid, v4, ip);
	printf("qpn %u %s\n", qp->qp_num, ip);
	fflush(stdout);
	wc = poll_one(cq);
	check(wc.status == IBV_WC_SUCCESS && (wc.wc_flags & IBV_WC_GRH), "%s received (%u)",
	      v4 ? "ipv4" : "ipv6", wc.status);
	check(wc.sl == (v4 ? 2 : 1), "%s sl = L3 header type, got %u", v4 ? "ipv4" : "ipv6", wc.sl);
	printf("grh %s %u - %s ", v4 ? "ipv4" : "ipv6", wc.byte_len - 40 + 12 + 8 + 4, ip);
	for (int k = 0; k < 40; k++)
		printf("%02x", rbuf[k]);
	printf("\n");
	return failures != 0;
}

int main(int argc, char **argv)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;
	struct ibv_port_attr pa;
	int seen[2] = { 0, 0 };

	for (int i = 0; list && list[i]; i++)
		if (argc > 1 && !strcmp(ibv_get_device_name(list[i]), argv[1]))
			ctx = ibv_open_device(list[i]);
	if (!ctx) {
		fprintf(stderr, "ud_grh: device %s not found\n", argc > 1 ? argv[1] : "(none given)");
		return 1;
	}
	struct ibv_pd *pd = ibv_alloc_pd(ctx);

	if (!pd || ibv_query_port(ctx, 1, &pa))
		return 1;
	if (argc > 3 && !strcmp(argv[2], "listen"))
		return listen_one(ctx, pd, !strcmp(argv[3], "ipv4"));
	for (int g = 0; g < pa.gid_tbl_len; g++) {
		static const uint8_t v4pfx[12] = { [10] = 0xff, [11] = 0xff };
		union ibv_gid gid;
		int v4;

		if (ibv_query_gid(ctx, 1, g, &gid))
			break;
		v4 = !memcmp(gid.raw, v4pfx, 12);
		if (gid.global.subnet_prefix == 0 && gid.global.interface_id == 0)
			continue;
		if (seen[v4]++)
			continue;   /* one GID of each family */
		one_gid(ctx, pd, g);
	}
	check(seen[0] && seen[1], "%s%u GIDs of both families tested", "", 0);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	printf("%d failures\n", failures);
	return failures ? 1 : 0;
}
