// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * What pyverbs cannot show (it closes an object's users before the object):
 * a PD, CQ or SRQ still in use cannot be destroyed (EBUSY, as on an RNIC),
 * and can once its users are gone; ibv_create_ah_from_wc builds an AH from
 * a received RoCEv2 IPv4 and IPv6 GRH; every QP has the extended post API;
 * CQ resize keeps at least what is asked.  Run under `uroce run`:
 *   verbs_objects DEVICE
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/ip.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/verbs.h>

static int failures;

static void check(int cond, const char *what, int err)
{
	printf("%s: %s", cond ? "ok" : "FAIL", what);
	if (err >= 0)
		printf(" (%s)", err ? strerror(err) : "0");
	printf("\n");
	if (!cond)
		failures++;
}

static uint16_t ip_csum(const void *p, size_t n)
{
	const uint16_t *w = p;
	uint32_t sum = 0;

	for (size_t i = 0; i < n / 2; i++)
		sum += w[i];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)~sum;
}

int main(int argc, char **argv)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	int n, err, v4_index = -1, v6_index = -1;
	union ibv_gid gid, v4_gid = { .raw = { 0 } }, v6_gid = { .raw = { 0 } };
	static const uint8_t v4_prefix[12] = { [10] = 0xff, [11] = 0xff };
	static const union ibv_gid zero;

	if (argc != 2) {
		fprintf(stderr, "usage: %s DEVICE\n", argv[0]);
		return 2;
	}
	list = ibv_get_device_list(&n);
	for (int i = 0; list && i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), argv[1]))
			ctx = ibv_open_device(list[i]);
	if (!ctx) {
		fprintf(stderr, "cannot open %s\n", argv[1]);
		return 1;
	}
	for (int i = 0; i < 16 && !ibv_query_gid(ctx, 1, i, &gid); i++) {
		if (!memcmp(&gid, &zero, sizeof(gid)))
			continue;
		if (!memcmp(gid.raw, v4_prefix, 12) && v4_index < 0)
			v4_index = i, v4_gid = gid;
		else if (memcmp(gid.raw, v4_prefix, 12) && v6_index < 0)
			v6_index = i, v6_gid = gid;
	}
	check(v4_index >= 0, "an IPv4 GID on lo", -1);

	struct ibv_pd *pd = ibv_alloc_pd(ctx);
	struct ibv_cq *scq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	struct ibv_cq *rcq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	struct ibv_srq_init_attr sia = { .attr = { .max_wr = 16, .max_sge = 1 } };
	struct ibv_srq *srq = ibv_create_srq(pd, &sia);

	check(pd && scq && rcq && srq, "PD, two CQs, SRQ", -1);
	if (!pd || !scq || !rcq || !srq)
		return 1;

	struct ibv_qp_init_attr qia = {
		.send_cq = scq, .recv_cq = rcq, .srq = srq, .qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_send_sge = 1 }, .sq_sig_all = 1,
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &qia);

	check(qp != NULL, "RC QP on the SRQ", qp ? -1 : errno);
	if (!qp)
		return 1;
	check(ibv_qp_to_qp_ex(qp) != NULL, "ibv_qp_to_qp_ex works on an ibv_create_qp QP", -1);
	check(qp->state == IBV_QPS_RESET && qp->qp_type == IBV_QPT_RC && qp->pd == pd &&
	      qp->send_cq == scq && qp->recv_cq == rcq && qp->srq == srq && qp->context == ctx,
	      "ibv_qp fields set", -1);
	{
		struct ibv_qp_attr a;
		struct ibv_qp_init_attr ia;

		err = ibv_query_qp(qp, &a, IBV_QP_STATE | IBV_QP_CAP, &ia);
		check(!err && ia.send_cq == scq && ia.recv_cq == rcq && ia.srq == srq &&
		      ia.sq_sig_all == 1 && ia.qp_type == IBV_QPT_RC && ia.cap.max_send_wr >= 4 &&
		      a.qp_state == IBV_QPS_RESET, "query_qp: init_attr as created", err);
	}

	err = ibv_destroy_cq(scq);
	check(err == EBUSY, "destroy_cq of a QP's send CQ: EBUSY", err);
	err = ibv_destroy_cq(rcq);
	check(err == EBUSY, "destroy_cq of a QP's receive CQ: EBUSY", err);
	err = ibv_destroy_srq(srq);
	check(err == EBUSY, "destroy_srq of a QP's SRQ: EBUSY", err);
	err = ibv_dealloc_pd(pd);
	check(err == EBUSY, "dealloc_pd of a PD with a QP, an SRQ: EBUSY", err);

	/* ibv_create_ah_from_wc: a RoCEv2 GRH holds an IPv4 header in its last
	 * 20 bytes (IPv4 GIDs) or is an IPv6 header (next header UDP). */
	{
		uint8_t buf[40] = { 0 };
		struct iphdr *ip = (struct iphdr *)(buf + 20);
		struct ibv_wc wc = { .status = IBV_WC_SUCCESS, .opcode = IBV_WC_RECV,
				     .wc_flags = IBV_WC_GRH, .qp_num = qp->qp_num };
		struct ibv_ah *ah;

		ip->version = 4;
		ip->ihl = 5;
		ip->ttl = 64;
		ip->protocol = IPPROTO_UDP;
		ip->tot_len = htons(100);
		memcpy(&ip->daddr, v4_gid.raw + 12, 4);   /* to us */
		ip->saddr = htonl(0x7f000002);             /* from 127.0.0.2 */
		ip->check = ip_csum(ip, 20);
		ah = ibv_create_ah_from_wc(pd, &wc, (struct ibv_grh *)buf, 1);
		check(ah != NULL, "create_ah_from_wc, IPv4 GRH", ah ? -1 : errno);
		if (ah) {
			err = ibv_dealloc_pd(pd);
			check(err == EBUSY, "dealloc_pd of a PD with an AH: EBUSY", err);
			err = ibv_destroy_ah(ah);
			check(!err, "destroy_ah", err);
		}
		wc.wc_flags = 0;
		errno = 0;
		ah = ibv_create_ah_from_wc(pd, &wc, (struct ibv_grh *)buf, 1);
		check(!ah && errno == EINVAL, "create_ah_from_wc without GRH (RoCE): EINVAL", errno);
		if (ah)
			ibv_destroy_ah(ah);
		if (v6_index >= 0) {
			struct ibv_grh *g = (struct ibv_grh *)buf;

			memset(buf, 0, sizeof(buf));
			g->version_tclass_flow = htonl(6u << 28);
			g->next_hdr = IPPROTO_UDP;
			g->hop_limit = 64;
			g->dgid = v6_gid;
			g->sgid = v6_gid;
			wc.wc_flags = IBV_WC_GRH;
			ah = ibv_create_ah_from_wc(pd, &wc, g, 1);
			check(ah != NULL, "create_ah_from_wc, IPv6 GRH", ah ? -1 : errno);
			if (ah)
				ibv_destroy_ah(ah);
		} else {
			printf("note: no IPv6 GID on lo, IPv6 GRH not checked\n");
		}
	}

	err = ibv_destroy_qp(qp);
	check(!err, "destroy_qp", err);
	err = ibv_destroy_srq(srq);
	check(!err, "destroy_srq once no QP uses it", err);

	/* resize_cq: at least what is asked, growing and shrinking. */
	err = ibv_resize_cq(scq, 1000);
	check(!err && scq->cqe >= 1000, "resize_cq to 1000", err);
	err = ibv_resize_cq(scq, 10);
	check(!err && scq->cqe >= 10 && scq->cqe < 1000, "resize_cq down to 10", err);
	err = ibv_resize_cq(scq, 0);
	check(err == EINVAL, "resize_cq to 0: EINVAL", err);

	err = ibv_destroy_cq(scq);
	check(!err, "destroy_cq once no QP uses it", err);
	err = ibv_destroy_cq(rcq);
	check(!err, "destroy the other CQ", err);
	err = ibv_dealloc_pd(pd);
	check(!err, "dealloc_pd once empty", err);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	printf("%d failed\n", failures);
	return failures ? 1 : 0;
}
