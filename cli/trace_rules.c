// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Words for what a trace shows: one line per packet and per event, and
 * the protocol rule behind a decision or a NAK, from tables: the
 * decisions of providers/uroce/trace/why.h and the AETH syndromes of
 * IBTA 9.3.6 (table 44).
 */
#include <inttypes.h>
#include <string.h>

#include "wire/wire.h"
#include "trace.h"
#include "trace/trace.h"

static const struct {
	const char *name, *arg, *section, *title, *words;
} whys[] = {
#define WHY_ROW(n, arg, sec, title, words) { #n, arg, sec, title, words },
	UROCE_WHY_LIST(WHY_ROW)
#undef WHY_ROW
};

/* NAK codes (IBTA 9.3.6, table 44) and the decision that sends each. */
static const struct {
	const char *name;
	enum uroce_why why;
} nak_codes[] = {
	[ROCE_NAK_PSN_SEQ] = { "PSN sequence error", UROCE_WHY_NAK_SEQ },
	[ROCE_NAK_INVALID_REQ] = { "invalid request", UROCE_WHY_NAK_FATAL },
	[ROCE_NAK_REMOTE_ACCESS] = { "remote access error", UROCE_WHY_NAK_FATAL },
	[ROCE_NAK_REMOTE_OP] = { "remote operational error", UROCE_WHY_NAK_FATAL },
	[ROCE_NAK_INVALID_RD_REQ] = { "invalid RD request", UROCE_WHY_NAK_FATAL },
};

/* IBTA 9.7.5.2.8, table 45: RNR NAK timer codes in microseconds. */
static const uint32_t rnr_timer_us[32] = {
	655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960, 1280,
	1920, 2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720, 40960, 61440,
	81920, 122880, 163840, 245760, 327680, 491520,
};

#define LEN(a) (sizeof(a) / sizeof((a)[0]))

int tr_pkt_line(const struct tr_rec *r, char *buf, size_t n)
{
	const struct roce_pkt *p = &r->pkt;
	uint8_t syn = p->syndrome;
	int k;

	if (r->parse != ROCE_OK)
		return snprintf(buf, n, "packet not RoCEv2 or damaged (%s)", roce_reason_name(r->parse));
	if (r->mad.ok && r->mad.qpn)
		return snprintf(buf, n, "CM %s on QP 1, comm id 0x%08x -> 0x%08x, QP %u, starting PSN %u "
				"(IBTA 12.6)", cm_attr_name(r->mad.attr), r->mad.local_id,
				r->mad.remote_id, r->mad.qpn, r->mad.psn);
	if (r->mad.ok)
		return snprintf(buf, n, "CM %s on QP 1, comm id 0x%08x -> 0x%08x (IBTA 12.6)",
				cm_attr_name(r->mad.attr), r->mad.local_id, r->mad.remote_id);
	k = snprintf(buf, n, "%s PSN %u", p->info ? p->info->name : "?", p->psn);
	if (p->info && p->info->payload)
		k += snprintf(buf + k, n - (size_t)k, ", %u bytes", p->paylen);
	if (p->kind == ROCE_K_READ_REQ || (p->info && (p->info->hdrs & (1u << ROCE_H_RETH))))
		k += snprintf(buf + k, n - (size_t)k, ", RETH length %u", p->dma_len);
	if (p->kind == ROCE_K_CMP_SWAP)
		k += snprintf(buf + k, n - (size_t)k, ", compare %" PRIu64 " swap %" PRIu64,
			      p->compare, p->swap_add);
	if (p->kind == ROCE_K_FETCH_ADD)
		k += snprintf(buf + k, n - (size_t)k, ", add %" PRIu64, p->swap_add);
	if (p->kind == ROCE_K_ATOMIC_ACK)
		k += snprintf(buf + k, n - (size_t)k, ", original value %" PRIu64, p->orig);
	if (p->info && (p->info->hdrs & (1u << ROCE_H_AETH))) {
		if ((syn & ROCE_AETH_TYPE_MASK) == ROCE_AETH_NAK)
			k += snprintf(buf + k, n - (size_t)k, ", NAK %s",
				      (syn & 0x1f) < LEN(nak_codes) ? nak_codes[syn & 0x1f].name : "(reserved code)");
		else if ((syn & ROCE_AETH_TYPE_MASK) == ROCE_AETH_RNR_NAK)
			k += snprintf(buf + k, n - (size_t)k, ", RNR NAK: wait %u us",
				      rnr_timer_us[syn & 0x1f]);
		if (p->kind == ROCE_K_ACK && (syn & ROCE_AETH_TYPE_MASK) == ROCE_AETH_ACK)
			k += snprintf(buf + k, n - (size_t)k, ": everything up to here arrived");
		k += snprintf(buf + k, n - (size_t)k, " (MSN %u)", p->msn);
	}
	if (p->ackreq)
		k += snprintf(buf + k, n - (size_t)k, ", AckReq");
	if (p->transport == ROCE_TR_UD)
		k += snprintf(buf + k, n - (size_t)k, ", from QP %u, Q_Key 0x%x", p->sqpn, p->qkey);
	return k;
}

static int why_index(const struct tr_rec *r)
{
	char name[32];

	if (!tr_field(r, "WHY", name, sizeof(name)))
		return -1;
	for (size_t i = 0; i < LEN(whys); i++)
		if (!strcmp(whys[i].name, name))
			return (int)i;
	return -1;
}

/* What the number recorded with a decision means, or NULL. */
static const char *why_arg(const struct tr_rec *r)
{
	int w = why_index(r);

	return w >= 0 && whys[w].arg[0] ? whys[w].arg : NULL;
}

int tr_ev_line(const struct tr_rec *r, char *buf, size_t n)
{
	char a[256], b[64], c[64], d[64];

#define F(key, v) (tr_field(r, key, v, sizeof(v)) ? v : "?")
	if (!strcmp(r->ev, "post_send"))
		return snprintf(buf, n, "ibv_post_send wr_id %s %s, %s bytes", F("WR", b), F("OP", c),
				F("LEN", d));
	if (!strcmp(r->ev, "post_recv"))
		return snprintf(buf, n, "ibv_post_recv wr_id %s, %s bytes", F("WR", b), F("LEN", d));
	if (!strcmp(r->ev, "wqe")) {
		uint32_t first = (uint32_t)tr_num(r, "PSN", 0), np = (uint32_t)tr_num(r, "NPKTS", 0);

		return snprintf(buf, n, "WQE wr_id %s %s starts: %u packet(s), PSN %u..%u", F("WR", b),
				F("OP", c), np, first, (first + (np ? np - 1 : 0)) & 0xffffff);
	}
	if (!strcmp(r->ev, "modify"))
		return snprintf(buf, n, "QP state %s -> %s %s", F("FROM", b), F("TO", c), F("ATTRS", a));
	if (!strcmp(r->ev, "cqe"))
		return snprintf(buf, n, "completion wr_id %s %s %s, %s bytes", F("WR", b), F("OP", c),
				F("STATUS", d), F("LEN", a));
	if (!strcmp(r->ev, "why")) {
		const char *sec, *words, *title = tr_rule(r, &sec, &words);
		int k = snprintf(buf, n, "%s, PSN %u", title ? title : F("WHY", b),
				 (uint32_t)tr_num(r, "PSN", 0));

		if (tr_field(r, "ARG", c, sizeof(c)) && why_arg(r) && (size_t)k < n)
			k += snprintf(buf + k, n - (size_t)k, ", %s %s", why_arg(r), c);
		if ((size_t)k < n)
			k += snprintf(buf + k, n - (size_t)k, " (IBTA %s)", sec ? sec : "?");
		return k;
	}
	if (!strcmp(r->ev, "cm_state"))
		return snprintf(buf, n, "CM id %s: %s -> %s", F("CM_ID", b), F("FROM", c), F("TO", d));
	if (!strcmp(r->ev, "cm_event"))
		return snprintf(buf, n, "CM id %s: RDMA_CM_EVENT_%s (status %s)", F("CM_ID", b),
				F("EVENT", c), F("STATUS", d));
	if (!strcmp(r->ev, "process"))
		return snprintf(buf, n, "process %s (pid %s) starts tracing", F("COMM", c), F("PID", b));
	return snprintf(buf, n, "%s", r->ev);
#undef F
}

const char *tr_rule(const struct tr_rec *r, const char **section, const char **words)
{
	int w = -1;

	*section = *words = NULL;
	if (!r->is_pkt && !strcmp(r->ev, "why")) {
		w = why_index(r);
	} else if (r->is_pkt && r->parse == ROCE_OK && r->pkt.kind == ROCE_K_ACK) {
		uint8_t t = r->pkt.syndrome & ROCE_AETH_TYPE_MASK, code = r->pkt.syndrome & 0x1f;

		if (t == ROCE_AETH_RNR_NAK)
			w = UROCE_WHY_RNR_NAK;
		else if (t == ROCE_AETH_NAK)
			w = code < LEN(nak_codes) ? (int)nak_codes[code].why : UROCE_WHY_NAK_FATAL;
	}
	if (w < 0)
		return NULL;
	*section = whys[w].section;
	*words = whys[w].words;
	return whys[w].title;
}
