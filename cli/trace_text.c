// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * The plain-text view of `uroce trace`: per QP pair, one line per record
 * in time order, side A at the left margin and side B indented; "-->" a
 * packet leaving, "<--" one arriving (with its time on the wire), and
 * under each protocol decision the rule behind it, in words.
 */
#include <string.h>

#include "trace.h"

void tr_side_name(const struct tr_set *set, const struct tr_pair *p, int side, char *buf, size_t n)
{
	const struct tr_side *s = &p->s[side];

	if (s->file < 0) {
		snprintf(buf, n, "(not traced)");
		return;
	}
	snprintf(buf, n, "QP %u (%s, pid %d)", s->qpn, set->files[s->file].comm,
		 set->files[s->file].pid);
}

/* The text of record R (without its time and side). */
int tr_line(const struct tr_set *set, const struct tr_rec *r, char *buf, size_t n)
{
	int k;

	if (!r->is_pkt) {
		k = tr_ev_line(r, buf, n);
		if (r->cause >= 0 && (size_t)k < n) {
			char c[160];

			tr_pkt_line(&set->recs[r->cause], c, sizeof(c));
			k += snprintf(buf + k, n - (size_t)k, "  <= from %s %.*s",
				      set->recs[r->cause].out ? "sending" : "the arrival of",
				      (int)strcspn(c, ",:"), c);
		}
		return k;
	}
	k = snprintf(buf, n, "%s ", r->out ? "-->" : "<--");
	k += tr_pkt_line(r, buf + k, n - (size_t)k);
	if (r->out && r->resend && (size_t)k < n)
		k += snprintf(buf + k, n - (size_t)k, "  [sent again, time %d]", r->resend + 1);
	if (r->lost && (size_t)k < n)
		k += snprintf(buf + k, n - (size_t)k, "  [LOST: never arrived]");
	if (!r->out && r->match >= 0 && (size_t)k < n)
		k += snprintf(buf + k, n - (size_t)k, "  (%.1f us after it left)",
			      (double)(r->ts - set->recs[r->match].ts) / 1000.0);
	return k;
}

void tr_text(const struct tr_set *set, const struct tr_view *v, FILE *out)
{
	for (int p = 0; p < set->n_pairs; p++) {
		const struct tr_pair *pr = &set->pairs[p];
		char a[128], b[128], line[512];
		int rows = 0;

		for (uint32_t i = 0; i < set->n; i++)
			if (set->recs[i].shown && set->recs[i].pair == p)
				rows++;
		if (!rows)
			continue;
		tr_side_name(set, pr, 0, a, sizeof(a));
		tr_side_name(set, pr, 1, b, sizeof(b));
		fprintf(out, "== %s QP pair: A = %s, B = %s\n", pr->type, a, b);
		fprintf(out, "   time (ms)  side\n");
		rows = 0;
		for (uint32_t i = 0; i < set->n; i++) {
			const struct tr_rec *r = &set->recs[i];
			const char *sec, *words, *title;

			if (!r->shown || r->pair != p)
				continue;
			if (v->max_rows && rows++ >= v->max_rows) {
				fprintf(out, "   ... (more: --max-rows)\n");
				break;
			}
			tr_line(set, r, line, sizeof(line));
			fprintf(out, "%12.4f  %s%s %s\n", (double)(r->ts - set->t0) / 1e6,
				r->side ? "    " : "", r->side ? "B" : "A", line);
			title = v->explain && !r->is_pkt ? tr_rule(r, &sec, &words) : NULL;
			if (title)
				fprintf(out, "%12s  %s  why: IBTA %s, %s: %s\n", "", r->side ? "    " : "",
					sec, title, words);
			if (v->explain && r->lost)
				fprintf(out, "%12s  %s  why: the wire dropped it; the receiver notices the gap "
					"at the next packet (PSN sequence error NAK, IBTA 9.7.5.1.4) or the "
					"sender's timer does (IBTA 9.7.6.1.3)\n", "", r->side ? "    " : "");
		}
		fputc('\n', out);
	}
}
