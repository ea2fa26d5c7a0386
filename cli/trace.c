// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * `uroce trace [options] FILE...`: merge the UROCE_TRACE files of several
 * processes (both ends of a connection), select what the filters ask for
 * and print the per-QP timeline as text or as an SVG sequence diagram.
 */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "trace.h"

struct filter {
	uint32_t qpn;                /* 0: every QP */
	bool wr_set;
	uint64_t wr;
	int nth;                     /* with wr: only the Nth WQE of that id (0: all) */
	double from, to;             /* seconds from the first record; to < 0: end */
};

static int usage(FILE *f)
{
	fputs("Usage: uroce trace [--qp QPN] [--wr WR_ID [--nth N]] [--from S] [--to S]\n"
	      "                   [--svg] [--max-rows N] [--no-explain] FILE...\n"
	      "Merge UROCE_TRACE files (one per process, both ends) into a per-QP timeline:\n"
	      "each verb, its packets, the peer's handling, ACK/NAK and the completion, with\n"
	      "the IBTA rule behind each protocol decision.\n"
	      "  --qp QPN      only the QP pair with this QP\n"
	      "  --wr WR_ID    only the send WQEs with this wr_id: post, packets (by PSN),\n"
	      "                the peer's handling and completions, the ACK, the completion\n"
	      "  --nth N       with --wr: only the Nth such WQE (1 = the first)\n"
	      "  --from/--to S only records S seconds after the first record or later/earlier\n"
	      "  --svg         an SVG sequence diagram (two lifelines per QP pair) on stdout\n"
	      "  --max-rows N  at most N rows per QP pair\n"
	      "  --no-explain  without the explanations of protocol decisions\n", f);
	return 2;
}

static bool in_pair(const struct tr_set *set, int pair, uint32_t qpn)
{
	const struct tr_pair *p;

	if (!qpn)
		return true;
	if (pair < 0)
		return false;
	p = &set->pairs[pair];
	return (p->s[0].file >= 0 && p->s[0].qpn == qpn) || (p->s[1].file >= 0 && p->s[1].qpn == qpn);
}

static bool is_ev(const struct tr_rec *r, const char *ev)
{
	return !r->is_pkt && !strcmp(r->ev, ev);
}

static bool same_qp(const struct tr_rec *a, const struct tr_rec *b)
{
	return a->file == b->file && a->qpn == b->qpn;
}

/* PSN P within [FIRST, FIRST + N). */
static bool psn_in(uint32_t p, uint32_t first, uint32_t n)
{
	return ((p - first) & 0xffffff) < (n ? n : 1);
}

/* Show what belongs to the WQE whose "wqe" record is W. */
static void show_wqe(struct tr_set *set, uint32_t w)
{
	struct tr_rec *wr = &set->recs[w];
	uint64_t id = tr_num(wr, "WR", 0), t_from = wr->ts, t_to = UINT64_MAX;
	uint32_t first = (uint32_t)tr_num(wr, "PSN", 0), np = (uint32_t)tr_num(wr, "NPKTS", 1);
	uint32_t i, start = w;

	wr->shown = true;
	/* Its post: the last one of that id before it. */
	for (i = w; i-- > 0;)
		if (same_qp(&set->recs[i], wr) && is_ev(&set->recs[i], "post_send") &&
		    tr_num(&set->recs[i], "WR", 0) == id) {
			set->recs[i].shown = true;
			t_from = set->recs[i].ts;
			start = i;
			break;
		}
	/* Its completion: the first of that id after it, and what caused it. */
	for (i = w + 1; i < set->n; i++)
		if (same_qp(&set->recs[i], wr) && is_ev(&set->recs[i], "cqe") &&
		    tr_num(&set->recs[i], "WR", 0) == id) {
			struct tr_rec *c = &set->recs[i];

			c->shown = true;
			t_to = c->ts;
			if (c->cause >= 0) {
				set->recs[c->cause].shown = true;
				if (set->recs[c->cause].match >= 0)
					set->recs[set->recs[c->cause].match].shown = true;
			}
			break;
		}
	/* Between the two, in the pair: its PSNs both ways, decisions about
	 * them, the peer's completions those packets caused.  Packets shown
	 * bring their other half; the window grows to the last of them, so
	 * that the peer's handling of a late arrival is shown too. */
	for (int pass = 0; pass < 4; pass++) {
		uint64_t last = t_to;

		/* Records are in time order: only the window is read. */
		for (i = start; i < set->n && set->recs[i].ts <= t_to; i++) {
			struct tr_rec *r = &set->recs[i];

			if (r->pair != wr->pair || r->ts < t_from)
				continue;
			if (r->is_pkt && r->parse == ROCE_OK && psn_in(r->pkt.psn, first, np))
				r->shown = true;
			else if (is_ev(r, "why") && psn_in((uint32_t)tr_num(r, "PSN", 0), first, np))
				r->shown = true;
			else if (is_ev(r, "cqe") && !same_qp(r, wr) && r->cause >= 0 &&
				 psn_in(set->recs[r->cause].pkt.psn, first, np))
				r->shown = true;
		}
		for (i = start; i < set->n && set->recs[i].ts <= t_to; i++) {
			struct tr_rec *r = &set->recs[i];

			if (r->shown && r->is_pkt && r->match >= 0) {
				set->recs[r->match].shown = true;
				if (set->recs[r->match].ts > last)
					last = set->recs[r->match].ts;
			}
		}
		if (last == t_to)
			break;
		t_to = last;
	}
	/* Completions those packets caused (a UD receive comes after the
	 * sender's completion; a completion follows its packet at once). */
	for (i = start; i < set->n && set->recs[i].ts <= t_to + 100000000u; i++) {
		struct tr_rec *r = &set->recs[i];

		if (is_ev(r, "cqe") && r->pair == wr->pair && r->cause >= 0 && set->recs[r->cause].shown)
			r->shown = true;
	}
}

static void select_records(struct tr_set *set, const struct filter *f)
{
	int seen = 0;

	for (uint32_t i = 0; i < set->n; i++) {
		struct tr_rec *r = &set->recs[i];

		if (!in_pair(set, r->pair, f->qpn))
			continue;
		if (!f->wr_set) {
			r->shown = true;
			continue;
		}
		if (is_ev(r, "wqe") && tr_num(r, "WR", 0) == f->wr && (!f->nth || ++seen == f->nth))
			show_wqe(set, i);
	}
	for (uint32_t i = 0; i < set->n; i++) {
		struct tr_rec *r = &set->recs[i];
		double t = (double)(r->ts - set->t0) / 1e9;

		if (t < f->from || (f->to >= 0 && t > f->to))
			r->shown = false;
	}
}

int cmd_trace(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "qp", required_argument, NULL, 'q' },
		{ "wr", required_argument, NULL, 'w' },
		{ "nth", required_argument, NULL, 'n' },
		{ "from", required_argument, NULL, 'f' },
		{ "to", required_argument, NULL, 't' },
		{ "svg", no_argument, NULL, 's' },
		{ "max-rows", required_argument, NULL, 'm' },
		{ "no-explain", no_argument, NULL, 'x' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct filter f = { .to = -1 };
	struct tr_view v = { .explain = true };
	struct tr_set set = { 0 };
	bool svg = false;
	char *end;
	int c;

	optind = 0;
	/* argv[0] is the first argument: getopt wants a program name there. */
	argc++;
	argv--;
	while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		switch (c) {
		case 'q':
			f.qpn = (uint32_t)strtoul(optarg, &end, 0);
			if (*end || !f.qpn)
				return fail("--qp: not a QP number: %s", optarg);
			break;
		case 'w':
			f.wr = strtoull(optarg, &end, 0);
			if (*end)
				return fail("--wr: not a number: %s", optarg);
			f.wr_set = true;
			break;
		case 'n':
			f.nth = atoi(optarg);
			if (f.nth < 1)
				return fail("--nth: a number from 1 on: %s", optarg);
			break;
		case 'f':
		case 't':
			*(c == 'f' ? &f.from : &f.to) = strtod(optarg, &end);
			if (*end)
				return fail("--%s: not a number of seconds: %s", c == 'f' ? "from" : "to", optarg);
			break;
		case 's':
			svg = true;
			break;
		case 'm':
			v.max_rows = atoi(optarg);
			break;
		case 'x':
			v.explain = false;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			return usage(stderr);
		}
	}
	if (optind >= argc)
		return usage(stderr);
	if (f.nth && !f.wr_set)
		return fail("--nth needs --wr");
	for (int i = optind; i < argc; i++)
		if (tr_read(&set, argv[i]) < 0)
			return 1;
	tr_model(&set);
	select_records(&set, &f);
	if (svg)
		tr_svg(&set, &v, stdout);
	else
		tr_text(&set, &v, stdout);
	for (uint32_t i = 0; i < set.n; i++)
		free(set.recs[i].fields);
	free(set.recs);
	free(set.pairs);
	free(set.files);
	return 0;
}
