// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * The sequence-diagram view of `uroce trace`: an SVG with two lifelines
 * per QP pair (A left, B right), time running down one row per record.
 * A packet is an arrow from the row where it left to the row where it
 * arrived (red and ending in a cross when it never arrived); events sit
 * beside their side's lifeline, protocol decisions in red with their IBTA
 * section.
 */
#include <stdlib.h>
#include <string.h>

#include "trace.h"

/* Width, the two lifelines, a row, a pair's header; texts are cut at
 * TEXT_MAX characters (11 px monospace: some 6.6 px each), so that side
 * A's, right-aligned at its lifeline, stay clear of the time column. */
enum { W = 1400, XA = 520, XB = 880, ROW = 18, HEAD = 60, TEXT_MAX = 62 };

static void esc(FILE *out, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '&': fputs("&amp;", out); break;
		case '"': fputs("&quot;", out); break;
		default: fputc(*s, out);
		}
	}
}

static void text(FILE *out, int x, int y, const char *anchor, const char *cls, const char *s)
{
	char cut[TEXT_MAX + 4];

	if (strlen(s) > TEXT_MAX) {
		snprintf(cut, sizeof(cut), "%.*s...", TEXT_MAX - 3, s);
		s = cut;
	}
	fprintf(out, "<text x=\"%d\" y=\"%d\" text-anchor=\"%s\" class=\"%s\">", x, y, anchor, cls);
	esc(out, s);
	fputs("</text>\n", out);
}

void tr_svg(const struct tr_set *set, const struct tr_view *v, FILE *out)
{
	int *row = calloc(set->n ? set->n : 1, sizeof(*row));
	int total = 0, y0 = 20;

	if (!row)
		return;
	/* Rows: per pair, one per shown record, after a header. */
	for (int p = 0; p < set->n_pairs; p++) {
		int rows = 0;

		for (uint32_t i = 0; i < set->n; i++)
			if (set->recs[i].shown && set->recs[i].pair == p &&
			    (!v->max_rows || rows < v->max_rows))
				row[i] = ++rows;
		if (rows)
			total += HEAD + (rows + 2) * ROW;
	}
	fprintf(out, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		"font-family=\"monospace\" font-size=\"11\">\n", W, total + 40);
	fputs("<style>.ev{fill:#222}.why{fill:#b00;font-weight:bold}.pkt{fill:#036}"
	      ".lost{fill:#c00}.t{fill:#888}.h{font-size:13px;font-weight:bold}"
	      "line.p{stroke:#036;stroke-width:1.2}line.l{stroke:#c00;stroke-dasharray:4 2}"
	      "line.life{stroke:#999;stroke-width:2}</style>\n"
	      "<defs><marker id=\"arr\" markerWidth=\"8\" markerHeight=\"6\" refX=\"8\" refY=\"3\" "
	      "orient=\"auto\"><path d=\"M0,0 L8,3 L0,6 z\" fill=\"#036\"/></marker></defs>\n"
	      "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n", out);
	for (int p = 0; p < set->n_pairs; p++) {
		const struct tr_pair *pr = &set->pairs[p];
		char a[128], b[128], line[512];
		int rows = 0, ybase;

		for (uint32_t i = 0; i < set->n; i++)
			if (set->recs[i].pair == p && row[i] > rows)
				rows = row[i];
		if (!rows)
			continue;
		tr_side_name(set, pr, 0, a, sizeof(a));
		tr_side_name(set, pr, 1, b, sizeof(b));
		snprintf(line, sizeof(line), "%s QP pair", pr->type);
		text(out, W / 2, y0 + 14, "middle", "h", line);
		text(out, XA, y0 + 34, "middle", "h", a);
		text(out, XB, y0 + 34, "middle", "h", b);
		ybase = y0 + HEAD;
		fprintf(out, "<line class=\"life\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>\n", XA,
			ybase - 14, XA, ybase + (rows + 1) * ROW);
		fprintf(out, "<line class=\"life\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>\n", XB,
			ybase - 14, XB, ybase + (rows + 1) * ROW);
		for (uint32_t i = 0; i < set->n; i++) {
			const struct tr_rec *r = &set->recs[i];
			int y = ybase + row[i] * ROW, x = r->side ? XB : XA, xo = r->side ? XA : XB;
			const char *sec, *words, *title;

			if (r->pair != p || !row[i])
				continue;
			snprintf(line, sizeof(line), "%.3f ms", (double)(r->ts - set->t0) / 1e6);
			text(out, 4, y, "start", "t", line);
			if (!r->is_pkt) {
				title = tr_rule(r, &sec, &words);
				tr_ev_line(r, line, sizeof(line));
				text(out, r->side ? XB + 8 : XA - 8, y, r->side ? "start" : "end",
				     title ? "why" : "ev", line);
				continue;
			}
			if (!r->out) {
				/* Arrivals: drawn by their sending's arrow, unless it is
				 * not in view. */
				if (r->match >= 0 && row[r->match])
					continue;
				fprintf(out, "<line class=\"p\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" "
					"marker-end=\"url(#arr)\"/>\n", (x + xo) / 2, y - ROW / 2, x, y);
				tr_pkt_line(r, line, sizeof(line));
				text(out, x + (r->side ? 8 : -8), y, r->side ? "start" : "end", "pkt", line);
				continue;
			}
			tr_pkt_line(r, line, sizeof(line));
			if (r->resend)
				strncat(line, " (sent again)", sizeof(line) - strlen(line) - 1);
			if (r->match >= 0 && row[r->match]) {
				int y2 = ybase + row[r->match] * ROW;

				fprintf(out, "<line class=\"p\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" "
					"marker-end=\"url(#arr)\"/>\n", x, y - 4, xo, y2 - 4);
				text(out, (x + xo) / 2, y - 6 + (y2 - y) / 2, "middle", "pkt", line);
			} else if (r->lost) {
				int xm = (x + xo) / 2;

				fprintf(out, "<line class=\"l\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>\n",
					x, y - 4, xm, y + 4);
				text(out, xm + 4, y + 8, "middle", "lost", "X");
				strncat(line, " LOST", sizeof(line) - strlen(line) - 1);
				text(out, (x + xm) / 2, y - 6, "middle", "lost", line);
			} else {
				fprintf(out, "<line class=\"p\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" "
					"marker-end=\"url(#arr)\"/>\n", x, y - 4, (x + xo) / 2, y - 4);
				text(out, (x + xo) / 2, y - 6, "middle", "pkt", line);
			}
		}
		y0 = ybase + (rows + 2) * ROW;
	}
	fputs("</svg>\n", out);
	free(row);
}
