// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Tying the records of several trace files together: one time order; for
 * each record its local QP and the QP it talks to; QP pairs (both ends,
 * found from the destinations set by ibv_modify_qp, or for UD from the
 * packets); each packet sent matched with the same packet received
 * (PSN, opcode, destination QP; the latest sending before the arrival);
 * packets sent again; packets
 * that never arrived; and the packet that produced each completion (the
 * engine completes while it handles that packet, in the same thread).
 */
#include <stdlib.h>
#include <string.h>

#include "trace.h"

struct qpinfo {
	int file;
	uint32_t qpn, dest;          /* dest 0: not connected (yet) / UD */
	char type[4];
	int pair, side;
	int last_rx_req, last_rx_resp, last_tx;
};

static struct qpinfo *qps;
static int n_qps;

static struct qpinfo *qp_find(int file, uint32_t qpn, bool add)
{
	struct qpinfo *q;

	for (int i = 0; i < n_qps; i++)
		if (qps[i].file == file && qps[i].qpn == qpn)
			return &qps[i];
	if (!add || !qpn)
		return NULL;
	q = realloc(qps, (n_qps + 1) * sizeof(*q));
	if (!q)
		return NULL;
	qps = q;
	q = &qps[n_qps++];
	memset(q, 0, sizeof(*q));
	q->file = file;
	q->qpn = qpn;
	q->pair = -1;
	q->last_rx_req = q->last_rx_resp = q->last_tx = -1;
	return q;
}

/* The local QP of FILE connected to DEST. */
static uint32_t local_of(int file, uint32_t dest)
{
	for (int i = 0; i < n_qps; i++)
		if (qps[i].file == file && qps[i].dest == dest)
			return qps[i].qpn;
	return 0;
}

static int by_time(const void *a, const void *b)
{
	const struct tr_rec *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	if (x->file != y->file)
		return x->file - y->file;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static struct tr_set *g_set;

/* Packets in match order: the same packet (destination QP, PSN, opcode,
 * UD source QP) together, in time order. */
static int by_packet(const void *a, const void *b)
{
	const struct tr_rec *x = &g_set->recs[*(const uint32_t *)a];
	const struct tr_rec *y = &g_set->recs[*(const uint32_t *)b];

	if (x->pkt.dqpn != y->pkt.dqpn)
		return x->pkt.dqpn < y->pkt.dqpn ? -1 : 1;
	if (x->pkt.psn != y->pkt.psn)
		return x->pkt.psn < y->pkt.psn ? -1 : 1;
	if (x->pkt.opcode != y->pkt.opcode)
		return x->pkt.opcode - y->pkt.opcode;
	if (x->pkt.sqpn != y->pkt.sqpn)
		return x->pkt.sqpn < y->pkt.sqpn ? -1 : 1;
	return by_time(x, y);
}

static bool same_packet(const struct tr_rec *x, const struct tr_rec *y)
{
	return x->pkt.dqpn == y->pkt.dqpn && x->pkt.psn == y->pkt.psn &&
	       x->pkt.opcode == y->pkt.opcode && x->pkt.sqpn == y->pkt.sqpn;
}

/* The newest sending already matched, per flow (sending file, destination
 * QP): packets of one flow arrive in the order they left (one UDP path). */
struct flow_hw {
	int file;
	uint32_t dqpn;
	uint64_t ts;
};

static uint64_t *flow_hw(struct flow_hw **fl, int *n, int file, uint32_t dqpn)
{
	struct flow_hw *f;

	for (int i = 0; i < *n; i++)
		if ((*fl)[i].file == file && (*fl)[i].dqpn == dqpn)
			return &(*fl)[i].ts;
	f = realloc(*fl, (*n + 1) * sizeof(*f));
	if (!f)
		return NULL;
	*fl = f;
	f[*n] = (struct flow_hw){ file, dqpn, 0 };
	return &f[(*n)++].ts;
}

/*
 * Within each run of the same packet, number the resends of each sender.
 * Then, in time order, give each reception a sending of it: the oldest
 * one not yet received that left after everything of its flow already
 * received (an older one would have arrived first: it was lost), else
 * the latest before it.  A packet one process received and passed on to
 * the owner of its QP is received twice: the second arrival points to
 * the same sending.
 */
static void match_packets(struct tr_set *set)
{
	uint32_t *idx = malloc(set->n * sizeof(*idx)), *grp = malloc(set->n * 2 * sizeof(*grp)), n = 0;
	struct flow_hw *fl = NULL;
	int n_fl = 0;

	if (!idx || !grp) {
		free(idx);
		free(grp);
		return;
	}
	for (uint32_t i = 0; i < set->n; i++)
		if (set->recs[i].is_pkt && set->recs[i].parse == ROCE_OK)
			idx[n++] = i;
	g_set = set;
	qsort(idx, n, sizeof(*idx), by_packet);
	for (uint32_t a = 0, b; a < n; a = b) {
		for (b = a + 1; b < n && same_packet(&set->recs[idx[a]], &set->recs[idx[b]]); b++)
			;
		for (uint32_t i = a; i < b; i++) {
			struct tr_rec *r = &set->recs[idx[i]];

			grp[2 * idx[i]] = a;
			grp[2 * idx[i] + 1] = i;  /* sendings before it: [a, i) */
			if (r->out)
				for (uint32_t j = a; j < i; j++)
					if (set->recs[idx[j]].out && set->recs[idx[j]].file == r->file)
						r->resend++;
		}
	}
	for (uint32_t i = 0; i < set->n; i++) {
		struct tr_rec *r = &set->recs[i];
		int pick = -1, latest = -1, any = -1;

		if (!r->is_pkt || r->parse != ROCE_OK || r->out)
			continue;
		for (uint32_t j = grp[2 * i]; j < grp[2 * i + 1]; j++) {
			struct tr_rec *t = &set->recs[idx[j]];
			uint64_t *hw;

			if (!t->out)
				continue;
			any = (int)idx[j];
			if (t->match >= 0)
				continue;
			latest = (int)idx[j];
			hw = flow_hw(&fl, &n_fl, t->file, t->pkt.dqpn);
			if (pick < 0 && (!hw || t->ts >= *hw))
				pick = (int)idx[j];
		}
		if (pick < 0)
			pick = latest;
		if (pick >= 0) {
			uint64_t *hw = flow_hw(&fl, &n_fl, set->recs[pick].file, set->recs[pick].pkt.dqpn);

			set->recs[pick].match = (int)i;
			if (hw && set->recs[pick].ts > *hw)
				*hw = set->recs[pick].ts;
		}
		r->match = pick >= 0 ? pick : any;
	}
	free(fl);
	free(grp);
	free(idx);
}

/* The local and remote QP of each record. */
static void find_qps(struct tr_set *set)
{
	/* Destinations from ibv_modify_qp (RC, UC), types. */
	for (uint32_t i = 0; i < set->n; i++) {
		struct tr_rec *r = &set->recs[i];
		struct qpinfo *q;
		char t[4];

		if (r->is_pkt || strcmp(r->ev, "modify"))
			continue;
		q = qp_find(r->file, (uint32_t)tr_num(r, "QPN", 0), true);
		if (!q)
			continue;
		if (tr_field(r, "TYPE", t, sizeof(t)))
			snprintf(q->type, sizeof(q->type), "%s", t);
		if (tr_num(r, "DEST", 0))
			q->dest = (uint32_t)tr_num(r, "DEST", 0);
	}
	for (uint32_t i = 0; i < set->n; i++) {
		struct tr_rec *r = &set->recs[i];
		struct qpinfo *q;

		if (r->is_pkt) {
			if (r->parse != ROCE_OK)
				continue;
			if (r->pkt.transport == ROCE_TR_UD) {
				r->qpn = r->out ? r->pkt.sqpn : r->pkt.dqpn;
				r->peer = r->out ? r->pkt.dqpn : r->pkt.sqpn;
			} else if (r->out) {
				r->peer = r->pkt.dqpn;
				r->qpn = local_of(r->file, r->peer);
			} else {
				r->qpn = r->pkt.dqpn;
			}
			if (r->qpn == 1)
				r->peer = 1;
		} else {
			r->qpn = (uint32_t)tr_num(r, "QPN", 0);
			if (!r->qpn && !strncmp(r->ev, "cm_", 3))
				r->qpn = 1;    /* the CM, before a QP exists: with QP1's MADs */
		}
		q = qp_find(r->file, r->qpn, true);
		if (!q)
			continue;
		if (r->qpn == 1)
			snprintf(q->type, sizeof(q->type), "CM");
		if (q->dest)
			r->peer = q->dest;
		else if (r->peer && r->is_pkt && r->pkt.transport == ROCE_TR_UD && r->qpn != 1)
			q->dest = r->peer; /* UD: the first QP it talks to */
	}
}

static int pair_new(struct tr_set *set, struct qpinfo *a, struct qpinfo *b)
{
	struct tr_pair *p = realloc(set->pairs, (set->n_pairs + 1) * sizeof(*p));

	if (!p)
		return -1;
	set->pairs = p;
	p = &set->pairs[set->n_pairs];
	memset(p, 0, sizeof(*p));
	p->s[0] = (struct tr_side){ a->file, a->qpn };
	p->s[1] = b ? (struct tr_side){ b->file, b->qpn } : (struct tr_side){ -1, 0 };
	snprintf(p->type, sizeof(p->type), "%s", a->type[0] ? a->type : b && b->type[0] ? b->type : "?");
	a->pair = set->n_pairs;
	a->side = 0;
	if (b) {
		b->pair = set->n_pairs;
		b->side = 1;
	}
	return set->n_pairs++;
}

/* Pairs: RC/UC QPs whose destinations name each other; otherwise (UD, QP1)
 * the QPs of two processes whose packets matched. */
static void find_pairs(struct tr_set *set)
{
	for (int i = 0; i < n_qps; i++) {
		struct qpinfo *a = &qps[i];

		if (a->pair >= 0 || !a->dest || a->qpn == 1)
			continue;
		for (int j = 0; j < n_qps; j++) {
			struct qpinfo *b = &qps[j];

			if (b != a && b->pair < 0 && b->qpn == a->dest && b->dest == a->qpn) {
				pair_new(set, a, b);
				break;
			}
		}
	}
	for (uint32_t i = 0; i < set->n; i++) {
		struct tr_rec *r = &set->recs[i], *m;
		struct qpinfo *a, *b;

		if (!r->is_pkt || !r->out || r->match < 0)
			continue;
		m = &set->recs[r->match];
		a = qp_find(r->file, r->qpn, false);
		b = qp_find(m->file, m->qpn, false);
		if (a && b && a != b && a->pair < 0 && b->pair < 0)
			pair_new(set, a, b);
	}
	for (int i = 0; i < n_qps; i++)
		if (qps[i].pair < 0)
			pair_new(set, &qps[i], NULL);
}

static bool is_request(const struct tr_rec *r)
{
	return r->pkt.info && !r->pkt.info->response;
}

/* CQEs: the packet whose handling queued them.  A receive completes on a
 * request packet, an RC send on a response; UC/UD sends when they leave. */
static void find_causes(struct tr_set *set)
{
	for (uint32_t i = 0; i < set->n; i++) {
		struct tr_rec *r = &set->recs[i];
		struct qpinfo *q = qp_find(r->file, r->qpn, false);
		char op[24];

		if (!q)
			continue;
		if (r->is_pkt) {
			if (r->parse != ROCE_OK)
				continue;
			if (r->out)
				q->last_tx = (int)i;
			else if (is_request(r))
				q->last_rx_req = (int)i;
			else
				q->last_rx_resp = (int)i;
			continue;
		}
		if (strcmp(r->ev, "cqe") || !tr_field(r, "OP", op, sizeof(op)))
			continue;
		if (!strncmp(op, "RECV", 4))
			r->cause = q->last_rx_req;
		else if (!strcmp(q->type, "RC"))
			r->cause = q->last_rx_resp;
		else
			r->cause = q->last_tx;
	}
}

void tr_model(struct tr_set *set)
{
	qsort(set->recs, set->n, sizeof(*set->recs), by_time);
	set->t0 = set->n ? set->recs[0].ts : 0;
	free(qps);
	qps = NULL;
	n_qps = 0;
	find_qps(set);
	match_packets(set);
	/* UD and QP1 packets sent before their QP's peer was known. */
	find_pairs(set);
	for (uint32_t i = 0; i < set->n; i++) {
		struct tr_rec *r = &set->recs[i];
		struct qpinfo *q = qp_find(r->file, r->qpn, false);

		if (!q)
			continue;
		r->pair = q->pair;
		r->side = q->side;
		if (r->is_pkt && r->out && r->match < 0 && q->pair >= 0 &&
		    set->pairs[q->pair].s[1].file >= 0)
			r->lost = true;
	}
	find_causes(set);
}
