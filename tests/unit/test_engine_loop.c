// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * The engine's reliability rules, two engines in one process over the loop
 * transport (no root, no sockets): `test_engine_loop CASE`.  Each case sets
 * rules on the bus, runs one exchange between RC QPs a (node A) and b
 * (node B), and checks the completions, the data, and the PSNs, NAKs and
 * resends the bus logged.  How to write another: docs/testing.md.
 */
#include <limits.h>
#include <string.h>
#include <time.h>

#include "loopkit.h"

#define PSN_A 100          /* a's first PSN */
#define PSN_B 5000
#define MTU 1024

struct pair {
	struct lk_node A, B;
	struct lk_cq *acq, *bcq;
	struct uroce_qp *a, *b;
	uint8_t *abuf, *bbuf;   /* each side's registered memory */
	struct uroce_mr *amr, *bmr;
	size_t len;
};

static void pair_open_type(struct pair *p, enum ibv_qp_type type, size_t len,
			   const struct lk_conn *c)
{
	const int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |
			IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC;

	lk_init();
	lk_node_open(&p->A, "A", 1);
	lk_node_open(&p->B, "B", 2);
	p->acq = lk_cq_new(64);
	p->bcq = lk_cq_new(64);
	p->a = lk_qp_new(&p->A, type, p->acq, p->acq);
	p->b = lk_qp_new(&p->B, type, p->bcq, p->bcq);
	p->len = len;
	p->abuf = aligned_alloc(64, len);
	p->bbuf = aligned_alloc(64, len);
	LK_CHECK(p->abuf && p->bbuf, "alloc");
	memset(p->abuf, 0, len);
	memset(p->bbuf, 0, len);
	p->amr = lk_mr(&p->A, p->abuf, len, acc);
	p->bmr = lk_mr(&p->B, p->bbuf, len, acc);
	lk_connect(p->a, &p->A, p->b, &p->B, c);
}

static void pair_open(struct pair *p, size_t len, const struct lk_conn *c)
{
	pair_open_type(p, IBV_QPT_RC, len, c);
}

static void dump_log(void);

/* LK_DUMP=1 in the environment: the bus log on stderr at the end. */
static void pair_close(struct pair *p)
{
	if (getenv("LK_DUMP"))
		dump_log();
	lk_qp_free(p->a);
	lk_qp_free(p->b);
	lk_mr_free(&p->A, p->amr);
	lk_mr_free(&p->B, p->bmr);
	lk_node_close(&p->A);
	lk_node_close(&p->B);
	lk_cq_free(p->acq);
	lk_cq_free(p->bcq);
	free(p->abuf);
	free(p->bbuf);
}

/* Wait for one completion on C and check it. */
static void expect_wc(struct lk_cq *c, uint64_t wr_id, enum ibv_wc_status status,
		      enum ibv_wc_opcode op, uint32_t byte_len)
{
	struct ibv_wc wc;

	if (!lk_cq_wait(c, &wc, LK_WAIT_MS)) {
		struct lk_log log;

		lk_log_get(&log);
		lk_log_dump(&log);
		LK_CHECK(0, "no completion for wr %llu within %d ms", (unsigned long long)wr_id,
			 LK_WAIT_MS);
	}
	LK_CHECK(wc.wr_id == wr_id && wc.status == status, "wr %llu status %s, want wr %llu %s",
		 (unsigned long long)wc.wr_id, ibv_wc_status_str(wc.status),
		 (unsigned long long)wr_id, ibv_wc_status_str(status));
	if (status == IBV_WC_SUCCESS)
		LK_CHECK(wc.opcode == op && wc.byte_len == byte_len, "opcode %d byte_len %u",
			 wc.opcode, wc.byte_len);
}

/* No further completion on C. */
static void expect_no_wc(struct lk_cq *c)
{
	struct ibv_wc wc;

	LK_CHECK(!lk_cq_poll(c, &wc), "unexpected completion wr %llu status %s",
		 (unsigned long long)wc.wr_id, ibv_wc_status_str(wc.status));
}

static void post_recv(struct pair *p, uint64_t wr_id)
{
	struct ibv_sge sge = { (uintptr_t)p->bbuf, (uint32_t)p->len, p->bmr->vmr.ibv_mr.lkey };
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 };

	lk_post_recv(p->b, &wr);
}

/* a sends its whole buffer to b. */
static void post_send(struct pair *p, uint64_t wr_id)
{
	struct ibv_sge sge = { (uintptr_t)p->abuf, (uint32_t)p->len, p->amr->vmr.ibv_mr.lkey };
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
	};

	lk_post_send(p->a, &wr);
}

/* a reads b's buffer into its own. */
static void post_read(struct pair *p, uint64_t wr_id)
{
	struct ibv_sge sge = { (uintptr_t)p->abuf, (uint32_t)p->len, p->amr->vmr.ibv_mr.lkey };
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_RDMA_READ,
		.send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = (uintptr_t)p->bbuf, .rkey = p->bmr->vmr.ibv_mr.rkey },
	};

	lk_post_send(p->a, &wr);
}

static int add_rule(const char *from, int kind, int64_t psn, enum uroce_loop_act act,
		    unsigned int count, unsigned int after)
{
	struct uroce_loop_rule r = uroce_loop_match_any();
	int id;

	r.from = from;
	r.kind = kind;
	r.psn = psn;
	r.act = act;
	r.count = count;
	r.after = after;
	id = uroce_loop_rule_add(&r);
	LK_CHECK(id >= 0, "rule");
	return id;
}

/* Records of the bus log from port FROM of KIND, PSN, AETH (-1: any). */
static size_t logged(int from, int kind, int64_t psn, int aeth)
{
	struct lk_log log;
	size_t n;

	lk_log_get(&log);
	n = lk_log_count(&log, from, kind, psn, aeth);
	lk_log_put(&log);
	return n;
}

/* Wait (bounded) until the log has at least WANT such records. */
static size_t wait_logged(int from, int kind, int64_t psn, int aeth, size_t want)
{
	struct timespec tick = { 0, 1000000 };
	size_t n = 0;

	for (int ms = 0; ms < LK_WAIT_MS && (n = logged(from, kind, psn, aeth)) < want; ms++)
		nanosleep(&tick, NULL);
	return n;
}

static void dump_log(void)
{
	struct lk_log log;

	lk_log_get(&log);
	lk_log_dump(&log);
	lk_log_put(&log);
}

#define NAK_SEQ (ROCE_AETH_NAK | ROCE_NAK_PSN_SEQ)

/*
 * A lost packet in the middle of a message (IBTA 9.7.5.1.4, 9.9.2): the
 * next packet reaches b out of sequence, b answers with one PSN sequence
 * NAK naming the lost PSN, and a goes back to it (go-back-N).
 */
static void case_nak(void)
{
	struct pair p;
	const uint32_t lost = PSN_A + 5;

	/* timeout 18 (1 s): no timer resend before the NAK, however loaded the host */
	pair_open(&p, 16 * MTU,
		  &(struct lk_conn){ .psn_a = PSN_A, .psn_b = PSN_B, .timeout = 18 });
	int drop = add_rule(p.A.netdev, ROCE_K_SEND, lost, UROCE_LOOP_DROP, 1, 0);

	lk_fill(p.abuf, p.len, 1);
	post_recv(&p, 7);
	post_send(&p, 1);
	expect_wc(p.acq, 1, IBV_WC_SUCCESS, IBV_WC_SEND, 0);
	expect_wc(p.bcq, 7, IBV_WC_SUCCESS, IBV_WC_RECV, (uint32_t)p.len);
	LK_CHECK(lk_holds(p.bbuf, p.len, 1), "received data differs");
	LK_CHECK(uroce_loop_rule_hits(drop) == 1, "PSN %u not dropped", lost);
	/* b's NAK names the lost PSN: the one it expects. */
	if (logged(p.B.port, ROCE_K_ACK, lost, NAK_SEQ) < 1) {
		dump_log();
		LK_CHECK(0, "no PSN sequence NAK for %u", lost);
	}
	LK_CHECK(lk_stat(&p.B, UROCE_STAT_NAKS_TX_SEQ) >= 1 &&
		 lk_stat(&p.A, UROCE_STAT_NAKS_RX_SEQ) >= 1, "NAK counters");
	LK_CHECK(lk_stat(&p.B, UROCE_STAT_OUT_OF_SEQUENCE) >= 1, "out_of_sequence");
	/* Go-back-N: a sent the lost PSN again, and every PSN after it. */
	for (uint32_t psn = lost; psn < PSN_A + 16; psn++)
		LK_CHECK(logged(p.A.port, ROCE_K_SEND, psn, -1) >= 2, "PSN %u not resent", psn);
	LK_CHECK(logged(p.A.port, ROCE_K_SEND, PSN_A, -1) == 1, "PSN before the loss resent");
	LK_CHECK(lk_stat(&p.A, UROCE_STAT_RETRANSMITS) >= 1, "retransmissions");
	expect_no_wc(p.acq);
	expect_no_wc(p.bcq);
	pair_close(&p);
}

/*
 * A lost last packet: nothing follows it, so no NAK can come; a's timer
 * (the tail-loss probe or the local ACK timeout, IBTA 9.7.6.1.3) sends it
 * again, and b completes the message once.
 */
static void case_timer(void)
{
	struct pair p;
	const uint32_t last = PSN_A + 3;

	/* timeout 10: 4.096 us * 2^10 = 4 ms */
	pair_open(&p, 4 * MTU,
		  &(struct lk_conn){ .psn_a = PSN_A, .psn_b = PSN_B, .timeout = 10 });
	int drop = add_rule(p.A.netdev, ROCE_K_SEND, last, UROCE_LOOP_DROP, 1, 0);

	lk_fill(p.abuf, p.len, 2);
	post_recv(&p, 7);
	post_send(&p, 1);
	expect_wc(p.bcq, 7, IBV_WC_SUCCESS, IBV_WC_RECV, (uint32_t)p.len);
	expect_wc(p.acq, 1, IBV_WC_SUCCESS, IBV_WC_SEND, 0);
	LK_CHECK(lk_holds(p.bbuf, p.len, 2), "received data differs");
	LK_CHECK(uroce_loop_rule_hits(drop) == 1, "last PSN not dropped");
	LK_CHECK(logged(p.A.port, ROCE_K_SEND, last, -1) >= 2, "last PSN not resent");
	LK_CHECK(logged(p.B.port, ROCE_K_ACK, -1, NAK_SEQ) == 0, "a NAK without a gap");
	LK_CHECK(lk_stat(&p.A, UROCE_STAT_ACK_TIMEOUTS) + lk_stat(&p.A, UROCE_STAT_TAIL_PROBES) >= 1,
		 "no timer fired");
	expect_no_wc(p.bcq);
	pair_close(&p);
}

/* Wait (bounded) until counter S of node N reaches AT_LEAST; its value. */
static uint64_t wait_stat(const struct lk_node *n, enum uroce_stat s, uint64_t at_least)
{
	struct timespec tick = { 0, 1000000 };
	uint64_t v = 0;

	for (int ms = 0; ms < LK_WAIT_MS && (v = lk_stat(n, s)) < at_least; ms++)
		nanosleep(&tick, NULL);
	return v;
}

/*
 * A duplicated READ request, its copy arriving after b's memory changed:
 * b keeps no record of a READ and executes it again (IBTA 9.7.5.1.1,
 * allows it: re-executed within the PSNs it accepted), so the copy's responses
 * carry the new bytes.  a has completed the READ: they are stale, dropped,
 * and its buffer keeps what the READ returned.
 */
static void case_read_dup(void)
{
	struct pair p;

	pair_open(&p, 4 * MTU,
		  &(struct lk_conn){ .psn_a = PSN_A, .psn_b = PSN_B, .timeout = 18 });
	int dup = add_rule(p.A.netdev, ROCE_K_READ_REQ, PSN_A, UROCE_LOOP_DUP, 1, UINT_MAX);

	lk_fill(p.bbuf, p.len, 3);
	post_read(&p, 1);
	expect_wc(p.acq, 1, IBV_WC_SUCCESS, IBV_WC_RDMA_READ, (uint32_t)p.len);
	LK_CHECK(lk_holds(p.abuf, p.len, 3), "READ data differs");
	LK_CHECK(uroce_loop_rule_hits(dup) == 1, "READ request not duplicated");
	LK_CHECK(logged(p.B.port, ROCE_K_READ_RESP, -1, -1) == 4, "4 responses first");

	uint64_t stale = lk_stat(&p.A, UROCE_STAT_DROP_STALE);

	lk_fill(p.bbuf, p.len, 4);
	uroce_loop_release();
	if (wait_logged(p.B.port, ROCE_K_READ_RESP, -1, -1, 8) != 8) {
		dump_log();
		LK_CHECK(0, "the duplicate READ was not answered again");
	}
	for (uint32_t psn = PSN_A; psn < PSN_A + 4; psn++)
		LK_CHECK(logged(p.B.port, ROCE_K_READ_RESP, psn, -1) == 2, "response %u", psn);
	LK_CHECK(lk_stat(&p.B, UROCE_STAT_DUPLICATES) == 1, "b counted no duplicate");
	LK_CHECK(wait_stat(&p.A, UROCE_STAT_DROP_STALE, stale + 4) >= stale + 4,
		 "a did not drop the stale responses");
	LK_CHECK(lk_holds(p.abuf, p.len, 3), "a stale response was placed");
	expect_no_wc(p.acq);
	/* The connection goes on: the next READ, at the next PSN, sees the new bytes. */
	post_read(&p, 2);
	expect_wc(p.acq, 2, IBV_WC_SUCCESS, IBV_WC_RDMA_READ, (uint32_t)p.len);
	LK_CHECK(lk_holds(p.abuf, p.len, 4), "second READ data differs");
	LK_CHECK(logged(p.A.port, ROCE_K_READ_REQ, PSN_A + 4, -1) == 1, "second READ's PSN");
	pair_close(&p);
}

/*
 * READ responses out of order (comp.c, read_gap_lost): a response
 * overtaken by fewer than 4 later ones is late, not lost.  a places those
 * beyond the gap at once, fills the gap when it comes, and asks for
 * nothing again.  Overtaken by 5, it is taken for lost: a asks again from
 * the gap (a new READ request at that PSN), and the data is still whole.
 */
static void read_reorder(unsigned int overtaken, bool asks_again)
{
	struct pair p;
	const uint32_t late = PSN_A + 2;

	pair_open(&p, 16 * MTU,
		  &(struct lk_conn){ .psn_a = PSN_A, .psn_b = PSN_B, .timeout = 18 });
	int hold = add_rule(p.B.netdev, ROCE_K_READ_RESP, late, UROCE_LOOP_HOLD, 1, overtaken);

	lk_fill(p.bbuf, p.len, 8);
	post_read(&p, 1);
	expect_wc(p.acq, 1, IBV_WC_SUCCESS, IBV_WC_RDMA_READ, (uint32_t)p.len);
	LK_CHECK(lk_holds(p.abuf, p.len, 8), "READ data differs");
	LK_CHECK(uroce_loop_rule_hits(hold) == 1, "response %u not held", late);
	if ((logged(p.A.port, ROCE_K_READ_REQ, late, -1) == 1) != asks_again ||
	    logged(p.A.port, ROCE_K_READ_REQ, PSN_A, -1) != 1) {
		dump_log();
		LK_CHECK(0, "overtaken by %u: READ asked again %s, want %s", overtaken,
			 asks_again ? "no" : "yes", asks_again ? "yes" : "no");
	}
	/* a may complete from the released response before b has seen the
	 * request it sent again: wait for b's count, bounded. */
	if (asks_again)
		wait_stat(&p.B, UROCE_STAT_DUPLICATES, 1);
	LK_CHECK(lk_stat(&p.B, UROCE_STAT_DUPLICATES) == (asks_again ? 1 : 0), "b's duplicates");
	expect_no_wc(p.acq);
	pair_close(&p);
}

static void case_read_late(void)
{
	read_reorder(2, false);
}

static void case_read_gap(void)
{
	read_reorder(5, true);
}

/*
 * UC (IBTA 9.8.3, no acknowledgements): a lost packet in the middle of a
 * SEND loses the whole message, silently: no NAK, no resend, no receive
 * completion for it.  The receive WQE it had started serves the next
 * message, which arrives whole (as rxe's responder does).  a's sends complete as sent (UC has no acknowledgements).
 */
static void case_uc_loss(void)
{
	struct pair p;
	const uint32_t half = 4 * MTU;

	pair_open_type(&p, IBV_QPT_UC, 2 * half,
		       &(struct lk_conn){ .psn_a = PSN_A, .psn_b = PSN_B });
	int drop = add_rule(p.A.netdev, ROCE_K_SEND, PSN_A + 1, UROCE_LOOP_DROP, 1, 0);
	struct ibv_sge rsge = { (uintptr_t)p.bbuf, half, p.bmr->vmr.ibv_mr.lkey };
	struct ibv_recv_wr rwr = { .wr_id = 7, .sg_list = &rsge, .num_sge = 1 };

	lk_fill(p.abuf, p.len, 9);
	lk_post_recv(p.b, &rwr);
	for (uint32_t m = 0; m < 2; m++) {
		struct ibv_sge sge = { (uintptr_t)p.abuf + m * half, half, p.amr->vmr.ibv_mr.lkey };
		struct ibv_send_wr wr = {
			.wr_id = 1 + m, .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
			.send_flags = IBV_SEND_SIGNALED,
		};

		lk_post_send(p.a, &wr);
	}
	expect_wc(p.acq, 1, IBV_WC_SUCCESS, IBV_WC_SEND, 0);
	expect_wc(p.acq, 2, IBV_WC_SUCCESS, IBV_WC_SEND, 0);
	expect_wc(p.bcq, 7, IBV_WC_SUCCESS, IBV_WC_RECV, half);
	LK_CHECK(!memcmp(p.bbuf, p.abuf + half, half), "b holds other bytes than message 2");
	LK_CHECK(uroce_loop_rule_hits(drop) == 1, "PSN %u not dropped", PSN_A + 1);
	/* Counted per packet: the two that followed the lost one. */
	LK_CHECK(lk_stat(&p.B, UROCE_STAT_DROP_UC_PARTIAL) == 2, "drop_uc_partial_message %llu",
		 (unsigned long long)lk_stat(&p.B, UROCE_STAT_DROP_UC_PARTIAL));
	LK_CHECK(logged(p.B.port, -1, -1, -1) == 0, "b answered a UC packet");
	for (uint32_t psn = PSN_A; psn < PSN_A + 8; psn++)
		LK_CHECK(logged(p.A.port, ROCE_K_SEND, psn, -1) == 1, "PSN %u sent again", psn);
	expect_no_wc(p.bcq);
	pair_close(&p);
}

/* a's fetch-and-add of ADD to b's first 8 bytes. */
static void post_fetch_add(struct pair *p, uint64_t wr_id, uint64_t add)
{
	struct ibv_sge sge = { (uintptr_t)p->abuf, 8, p->amr->vmr.ibv_mr.lkey };
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD, .send_flags = IBV_SEND_SIGNALED,
		.wr.atomic = { .remote_addr = (uintptr_t)p->bbuf, .rkey = p->bmr->vmr.ibv_mr.rkey,
			       .compare_add = add },
	};

	lk_post_send(p->a, &wr);
}

/*
 * A duplicated atomic (IBTA 9.7.5.1.1, o9-20): b must not execute it
 * twice; it answers the copy from its kept result, with the same original
 * value, and a drops that second ATOMIC ACK.
 */
static void case_atomic_dup(void)
{
	struct pair p;
	uint64_t v;

	pair_open(&p, 64, &(struct lk_conn){ .psn_a = PSN_A, .psn_b = PSN_B, .timeout = 18 });
	int dup = add_rule(p.A.netdev, ROCE_K_FETCH_ADD, PSN_A, UROCE_LOOP_DUP, 1, 0);

	v = 1000;
	memcpy(p.bbuf, &v, 8);
	post_fetch_add(&p, 1, 5);
	expect_wc(p.acq, 1, IBV_WC_SUCCESS, IBV_WC_FETCH_ADD, 8);
	LK_CHECK(uroce_loop_rule_hits(dup) == 1, "atomic not duplicated");
	memcpy(&v, p.abuf, 8);
	LK_CHECK(v == 1000, "fetched %llu, want 1000", (unsigned long long)v);
	if (wait_logged(p.B.port, ROCE_K_ATOMIC_ACK, PSN_A, -1, 2) != 2) {
		dump_log();
		LK_CHECK(0, "the duplicate atomic was not answered");
	}
	LK_CHECK(lk_stat(&p.B, UROCE_STAT_DUPLICATES) == 1, "b counted no duplicate");
	LK_CHECK(wait_stat(&p.A, UROCE_STAT_DROP_STALE, 1) >= 1, "second ATOMIC ACK not dropped");
	memcpy(&v, p.bbuf, 8);
	LK_CHECK(v == 1005, "b holds %llu: executed twice?", (unsigned long long)v);
	/* The next atomic sees one addition, not two. */
	post_fetch_add(&p, 2, 5);
	expect_wc(p.acq, 2, IBV_WC_SUCCESS, IBV_WC_FETCH_ADD, 8);
	memcpy(&v, p.abuf, 8);
	LK_CHECK(v == 1005, "second fetch %llu, want 1005", (unsigned long long)v);
	memcpy(&v, p.bbuf, 8);
	LK_CHECK(v == 1010, "b holds %llu, want 1010", (unsigned long long)v);
	expect_no_wc(p.acq);
	pair_close(&p);
}

/* RNR timer code 14: 1.28 ms (IBTA table 45). */
/*
 * A receive burst's responses are dispatched before its requests
 * (engine/recv.c): b's ACK of a's SEND, held on the bus until b's own
 * SEND to a has passed it, still completes a's SEND before a's receive of
 * b's SEND on a's one CQ, as from a NIC that acknowledged on receipt.
 * (Over GSO the ACK rides behind the SEND in one datagram: pkt.c.)
 */
static void case_ack_first(void)
{
	struct pair p;
	const uint32_t half = 64;

	pair_open(&p, 2 * half, &(struct lk_conn){ .psn_a = PSN_A, .psn_b = PSN_B, .timeout = 18 });
	int hold = add_rule(p.B.netdev, ROCE_K_ACK, PSN_A, UROCE_LOOP_HOLD, 1, 1);
	struct ibv_sge a_in = { (uintptr_t)p.abuf + half, half, p.amr->vmr.ibv_mr.lkey };
	struct ibv_sge a_out = { (uintptr_t)p.abuf, half, p.amr->vmr.ibv_mr.lkey };
	struct ibv_sge b_in = { (uintptr_t)p.bbuf, half, p.bmr->vmr.ibv_mr.lkey };
	struct ibv_sge b_out = { (uintptr_t)p.bbuf + half, half, p.bmr->vmr.ibv_mr.lkey };
	struct ibv_wc wc;

	lk_fill(p.abuf, half, 3);
	lk_fill(p.bbuf + half, half, 4);
	lk_post_recv(p.a, &(struct ibv_recv_wr){ .wr_id = 8, .sg_list = &a_in, .num_sge = 1 });
	lk_post_recv(p.b, &(struct ibv_recv_wr){ .wr_id = 7, .sg_list = &b_in, .num_sge = 1 });
	lk_post_send(p.a, &(struct ibv_send_wr){ .wr_id = 1, .sg_list = &a_out, .num_sge = 1,
						 .opcode = IBV_WR_SEND,
						 .send_flags = IBV_SEND_SIGNALED });
	expect_wc(p.bcq, 7, IBV_WC_SUCCESS, IBV_WC_RECV, half);
	lk_post_send(p.b, &(struct ibv_send_wr){ .wr_id = 2, .sg_list = &b_out, .num_sge = 1,
						 .opcode = IBV_WR_SEND,
						 .send_flags = IBV_SEND_SIGNALED });
	LK_CHECK(lk_cq_wait(p.acq, &wc, LK_WAIT_MS), "no completion on a");
	LK_CHECK(wc.wr_id == 1 && wc.opcode == IBV_WC_SEND,
		 "a's first completion is wr %llu (opcode %d), want its SEND's (wr 1)",
		 (unsigned long long)wc.wr_id, wc.opcode);
	expect_wc(p.acq, 8, IBV_WC_SUCCESS, IBV_WC_RECV, half);
	expect_wc(p.bcq, 2, IBV_WC_SUCCESS, IBV_WC_SEND, 0);
	LK_CHECK(uroce_loop_rule_hits(hold) == 1, "b's ACK was not held");
	LK_CHECK(lk_holds(p.bbuf, half, 3) && lk_holds(p.abuf + half, half, 4), "data differs");
	expect_no_wc(p.acq);
	pair_close(&p);
}

#define RNR_CODE 14
#define RNR_NAK (ROCE_AETH_RNR_NAK | RNR_CODE)

/*
 * Receiver not ready (IBTA 9.7.5.2.8): b has no receive WQE, answers the
 * SEND with an RNR NAK, a waits out the RNR timer and sends again, and
 * once b posts a receive the message goes through (rnr_retry 7: forever).
 */
static void case_rnr(void)
{
	struct pair p;

	pair_open(&p, 2 * MTU, &(struct lk_conn){ .psn_a = PSN_A, .psn_b = PSN_B, .timeout = 18,
						  .min_rnr_timer = RNR_CODE });
	lk_fill(p.abuf, p.len, 5);
	post_send(&p, 1);
	if (wait_logged(p.B.port, ROCE_K_ACK, PSN_A, RNR_NAK, 2) < 2) {
		dump_log();
		LK_CHECK(0, "no second RNR NAK");
	}
	expect_no_wc(p.acq);
	post_recv(&p, 7);
	expect_wc(p.bcq, 7, IBV_WC_SUCCESS, IBV_WC_RECV, (uint32_t)p.len);
	expect_wc(p.acq, 1, IBV_WC_SUCCESS, IBV_WC_SEND, 0);
	LK_CHECK(lk_holds(p.bbuf, p.len, 5), "received data differs");
	/* Every RNR NAK was followed by a resend of the first packet. */
	size_t naks = logged(p.B.port, ROCE_K_ACK, PSN_A, RNR_NAK);

	LK_CHECK(logged(p.A.port, ROCE_K_SEND, PSN_A, -1) == naks + 1, "%zu RNR NAKs, %zu sends",
		 naks, logged(p.A.port, ROCE_K_SEND, PSN_A, -1));
	LK_CHECK(lk_stat(&p.A, UROCE_STAT_RNR_NAKS_RX) == naks &&
		 lk_stat(&p.B, UROCE_STAT_RNR_NAKS_TX) == naks, "RNR counters");
	expect_no_wc(p.bcq);
	pair_close(&p);
}

/* rnr_retry 2 and never a receive: the third RNR NAK fails the SEND
 * (IBV_WC_RNR_RETRY_EXC_ERR) and a's QP goes to the error state. */
static void case_rnr_exhausted(void)
{
	struct pair p;

	pair_open(&p, MTU, &(struct lk_conn){ .psn_a = PSN_A, .psn_b = PSN_B, .timeout = 18,
					      .min_rnr_timer = RNR_CODE, .rnr_retry = 2 });
	lk_fill(p.abuf, p.len, 6);
	post_send(&p, 1);
	expect_wc(p.acq, 1, IBV_WC_RNR_RETRY_EXC_ERR, IBV_WC_SEND, 0);
	LK_CHECK(logged(p.B.port, ROCE_K_ACK, PSN_A, RNR_NAK) == 3, "%zu RNR NAKs, want 3",
		 logged(p.B.port, ROCE_K_ACK, PSN_A, RNR_NAK));
	LK_CHECK(logged(p.A.port, ROCE_K_SEND, PSN_A, -1) == 3, "sends");
	LK_CHECK(lk_stat(&p.A, UROCE_STAT_RNR_RETRY_EXCEEDED) == 1, "rnr_retry_exceeded");
	LK_CHECK(lk_qp_state(p.a) == IBV_QPS_ERR, "a's QP in state %d", lk_qp_state(p.a));
	/* The failed WQE's completion reports it, no event (IBTA 11.6.3.1). */
	LK_CHECK(lk_qp_event(p.a) == -1, "event %d", lk_qp_event(p.a));
	pair_close(&p);
}

/*
 * Everything a sends is lost: the local ACK timeout (timeout 8: 1 ms)
 * resends retry_cnt (2) times, then the WQE fails with
 * IBV_WC_RETRY_EXC_ERR (IBTA 9.7.6.1.3) and the QP goes to error.
 */
static void case_retry_exhausted(void)
{
	struct pair p;

	pair_open(&p, MTU, &(struct lk_conn){ .psn_a = PSN_A, .psn_b = PSN_B, .timeout = 8,
					      .retry_cnt = 2 });
	int drop = add_rule(p.A.netdev, UROCE_LOOP_ANY, UROCE_LOOP_ANY, UROCE_LOOP_DROP, 0, 0);

	post_recv(&p, 7);
	post_send(&p, 1);
	expect_wc(p.acq, 1, IBV_WC_RETRY_EXC_ERR, IBV_WC_SEND, 0);
	size_t sent = logged(p.A.port, ROCE_K_SEND, PSN_A, -1);

	LK_CHECK(sent == 3 && uroce_loop_rule_hits(drop) == sent, "sent %zu times, want 3", sent);
	LK_CHECK(lk_stat(&p.A, UROCE_STAT_RETRY_EXCEEDED) == 1, "retry_exceeded");
	LK_CHECK(lk_stat(&p.A, UROCE_STAT_ACK_TIMEOUTS) >= 2, "ack_timeouts");
	LK_CHECK(lk_qp_state(p.a) == IBV_QPS_ERR, "a's QP in state %d", lk_qp_state(p.a));
	LK_CHECK(lk_qp_event(p.a) == -1, "event %d", lk_qp_event(p.a));
	expect_no_wc(p.bcq);
	pair_close(&p);
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		void (*run)(void);
	} cases[] = {
		{ "nak", case_nak },
		{ "timer", case_timer },
		{ "read_dup", case_read_dup },
		{ "read_late", case_read_late },
		{ "read_gap", case_read_gap },
		{ "atomic_dup", case_atomic_dup },
		{ "uc_loss", case_uc_loss },
		{ "rnr", case_rnr },
		{ "rnr_exhausted", case_rnr_exhausted },
		{ "retry_exhausted", case_retry_exhausted },
		{ "ack_first", case_ack_first },
	};

	for (size_t i = 0; argc == 2 && i < sizeof(cases) / sizeof(cases[0]); i++)
		if (!strcmp(argv[1], cases[i].name)) {
			cases[i].run();
			printf("engine_loop %s: ok\n", argv[1]);
			return 0;
		}
	fprintf(stderr, "usage: %s CASE (see cases[])\n", argv[0]);
	return 2;
}
