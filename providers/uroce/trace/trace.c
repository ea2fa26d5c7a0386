// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * The trace writer: turns the hooks of trace.h into pcapng records of the
 * process's trace file.  Packets are Enhanced Packet Blocks (Wireshark
 * decodes them as RoCEv2); every other event is a systemd journal entry
 * whose MESSAGE is a sentence for people (Wireshark lists it between the
 * packets) and whose UROCE_* fields are for `uroce trace`.  The file is
 * opened at the first event, and again in a forked child.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <infiniband/verbs.h>

#include "engine/engine.h"
#include "trace/trace.h"
#include "wire/wire.h"

bool uroce_tracing;

static pthread_mutex_t file_lock = PTHREAD_MUTEX_INITIALIZER;
static struct roce_pcap *file;
static pid_t file_pid;
static bool file_failed;

__attribute__((constructor)) static void trace_init(void)
{
	const char *p = getenv("UROCE_TRACE");

	uroce_tracing = p && *p;
}

uint64_t uroce_trace_clock_slow(void)
{
	return roce_pcap_clock();
}

/* ---- names ------------------------------------------------------------------------ */

static const char *const wr_names[] = {
	[IBV_WR_RDMA_WRITE] = "RDMA_WRITE", [IBV_WR_RDMA_WRITE_WITH_IMM] = "RDMA_WRITE_WITH_IMM",
	[IBV_WR_SEND] = "SEND", [IBV_WR_SEND_WITH_IMM] = "SEND_WITH_IMM",
	[IBV_WR_RDMA_READ] = "RDMA_READ", [IBV_WR_ATOMIC_CMP_AND_SWP] = "ATOMIC_CMP_AND_SWP",
	[IBV_WR_ATOMIC_FETCH_AND_ADD] = "ATOMIC_FETCH_AND_ADD", [IBV_WR_LOCAL_INV] = "LOCAL_INV",
	[IBV_WR_BIND_MW] = "BIND_MW", [IBV_WR_SEND_WITH_INV] = "SEND_WITH_INV",
};

static const char *const wc_names[] = {
	[IBV_WC_SEND] = "SEND", [IBV_WC_RDMA_WRITE] = "RDMA_WRITE", [IBV_WC_RDMA_READ] = "RDMA_READ",
	[IBV_WC_COMP_SWAP] = "COMP_SWAP", [IBV_WC_FETCH_ADD] = "FETCH_ADD",
	[IBV_WC_BIND_MW] = "BIND_MW", [IBV_WC_LOCAL_INV] = "LOCAL_INV",
};

static const char *const qps_names[] = {
	[IBV_QPS_RESET] = "RESET", [IBV_QPS_INIT] = "INIT", [IBV_QPS_RTR] = "RTR",
	[IBV_QPS_RTS] = "RTS", [IBV_QPS_SQD] = "SQD", [IBV_QPS_SQE] = "SQE", [IBV_QPS_ERR] = "ERR",
};

/* enum rdma_cm_event_type (rdma/rdma_cma.h), in order. */
static const char *const cm_event_names[] = {
	"ADDR_RESOLVED", "ADDR_ERROR", "ROUTE_RESOLVED", "ROUTE_ERROR", "CONNECT_REQUEST",
	"CONNECT_RESPONSE", "CONNECT_ERROR", "UNREACHABLE", "REJECTED", "ESTABLISHED",
	"DISCONNECTED", "DEVICE_REMOVAL", "MULTICAST_JOIN", "MULTICAST_ERROR", "ADDR_CHANGE",
	"TIMEWAIT_EXIT",
};

static const char *const why_names[] = {
#define WHY_NAME(n, arg, sec, title, words) #n,
	UROCE_WHY_LIST(WHY_NAME)
#undef WHY_NAME
};

static const char *const why_titles[] = {
#define WHY_TITLE(n, arg, sec, title, words) title " (IBTA " sec ")",
	UROCE_WHY_LIST(WHY_TITLE)
#undef WHY_TITLE
};

#define NAME_OF(tbl, i) ((unsigned)(i) < sizeof(tbl) / sizeof(tbl[0]) && tbl[i] ? tbl[i] : "?")

static const char *wc_opcode_name(enum ibv_wc_opcode op)
{
	if (op == IBV_WC_RECV)
		return "RECV";
	if (op == IBV_WC_RECV_RDMA_WITH_IMM)
		return "RECV_RDMA_WITH_IMM";
	return NAME_OF(wc_names, op);
}

/* ---- the file ---------------------------------------------------------------------- */

static void write_entry(const char *entry, uint32_t len);

static struct roce_pcap *trace_file(void)
{
	pid_t me = getpid();
	char path[4096], comm[64] = "?", appl[128];
	const char *p = getenv("UROCE_TRACE"), *pp;
	struct roce_pcap *f;
	FILE *c;

	if (__atomic_load_n(&file, __ATOMIC_ACQUIRE) && file_pid == me)
		return file;
	pthread_mutex_lock(&file_lock);
	if (file_pid != me) {
		/* A forked child writes its own file (and never the parent's). */
		file = NULL;
		file_failed = false;
	}
	if (!file && !file_failed && p) {
		pp = strstr(p, "%p");
		if (pp)
			snprintf(path, sizeof(path), "%.*s%d%s", (int)(pp - p), p, (int)me, pp + 2);
		else
			snprintf(path, sizeof(path), "%s", p);
		c = fopen("/proc/self/comm", "r");
		if (c) {
			if (fgets(comm, sizeof(comm), c))
				comm[strcspn(comm, "\n")] = 0;
			fclose(c);
		}
		snprintf(appl, sizeof(appl), "uroce (%s, pid %d)", comm, (int)me);
		f = roce_pcapng_open(path, roce_pcap_size_env("UROCE_TRACE_MAX", 256ull << 20), appl);
		if (!f) {
			fprintf(stderr, "uroce: cannot write the trace %s: %s\n", path, strerror(errno));
			file_failed = true;
			uroce_tracing = false; /* the hooks cost a branch again */
		} else {
			char e[256];
			uint64_t ts = roce_pcap_clock();
			int n = snprintf(e, sizeof(e),
					 "__REALTIME_TIMESTAMP=%" PRIu64 "\nMESSAGE=%s (pid %d) starts tracing\n"
					 "UROCE_NS=%" PRIu64 "\nUROCE_EV=process\nUROCE_PID=%d\nUROCE_COMM=%s\n",
					 ts / 1000, comm, (int)me, ts, (int)me, comm);

			roce_pcapng_journal(f, e, (uint32_t)n);
		}
		file_pid = me;
		__atomic_store_n(&file, f, __ATOMIC_RELEASE); /* opened before it is seen */
	}
	pthread_mutex_unlock(&file_lock);
	return file;
}

static void write_entry(const char *entry, uint32_t len)
{
	struct roce_pcap *f = trace_file();

	if (f)
		roce_pcapng_journal(f, entry, len);
}

/* ---- records: journal fields ------------------------------------------------------- */

struct rec {
	char buf[1536];
	size_t n;
	char msg[512];
};

static void rec_add(struct rec *r, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void rec_add(struct rec *r, const char *key, const char *fmt, ...)
{
	va_list ap;
	int k;

	if (r->n >= sizeof(r->buf))
		return;
	k = snprintf(r->buf + r->n, sizeof(r->buf) - r->n, "UROCE_%s=", key);
	if (k > 0)
		r->n += (size_t)k;
	if (r->n >= sizeof(r->buf))
		return;
	va_start(ap, fmt);
	k = vsnprintf(r->buf + r->n, sizeof(r->buf) - r->n, fmt, ap);
	va_end(ap);
	if (k > 0)
		r->n += (size_t)k;
	if (r->n < sizeof(r->buf) - 1)
		r->buf[r->n++] = '\n';
}

/* Start record EV about QPN (0: none), stamped now. */
static void rec_begin(struct rec *r, const char *ev, uint32_t qpn)
{
	uint64_t ts = (trace_file(), roce_pcap_clock()); /* the file's first record comes first */

	r->n = 0;
	r->msg[0] = 0;
	r->n = (size_t)snprintf(r->buf, sizeof(r->buf), "__REALTIME_TIMESTAMP=%" PRIu64 "\n",
				ts / 1000);
	rec_add(r, "NS", "%" PRIu64, ts);
	rec_add(r, "EV", "%s", ev);
	if (qpn)
		rec_add(r, "QPN", "%u", qpn);
}

static void rec_msg(struct rec *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void rec_msg(struct rec *r, const char *fmt, ...)
{
	size_t used = strlen(r->msg);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->msg + used, sizeof(r->msg) - used, fmt, ap);
	va_end(ap);
}

static void rec_end(struct rec *r)
{
	int k;

	if (r->n < sizeof(r->buf)) {
		k = snprintf(r->buf + r->n, sizeof(r->buf) - r->n, "MESSAGE=uroce: %s\n", r->msg);
		if (k > 0)
			r->n += (size_t)k;
	}
	if (r->n > sizeof(r->buf))
		r->n = sizeof(r->buf);
	write_entry(r->buf, (uint32_t)r->n);
}

/* ---- packets ----------------------------------------------------------------------- */

void uroce_trace_pkt(uint64_t ts, bool out, struct roce_net *net, const struct iovec *iov, int n)
{
	struct roce_pcap *f = trace_file();

	/* NET's MACs: the caller's (engine/pkt.c: the frame's, or made up). */
	roce_pcap_write_at(f, ts, out, net, iov, n);
}

void uroce_trace_rx(struct roce_net *net, uint8_t *buf, uint32_t len)
{
	struct iovec v = { buf, len };

	uroce_trace_pkt(0, false, net, &v, 1);
}

/* ---- verbs ------------------------------------------------------------------------- */

void uroce_trace_sq_posted(struct uroce_qp *qp, uint32_t from, uint32_t to)
{
	for (uint32_t i = from; i != to; i++) {
		const struct uroce_send_wqe *w = ring_slot(&qp->sq, i);
		struct rec r;

		rec_begin(&r, "post_send", qp->vqp.qp.qp_num);
		rec_add(&r, "WR", "0x%" PRIx64, w->wr_id);
		rec_add(&r, "OP", "%s", NAME_OF(wr_names, w->opcode));
		rec_add(&r, "LEN", "%" PRIu64, w->length);
		rec_add(&r, "FLAGS", "0x%x", w->send_flags);
		rec_msg(&r, "QP %u ibv_post_send wr_id 0x%" PRIx64 " %s %" PRIu64 " bytes%s",
			qp->vqp.qp.qp_num, w->wr_id, NAME_OF(wr_names, w->opcode), w->length,
			w->send_flags & IBV_SEND_SIGNALED ? " signaled" : "");
		rec_end(&r);
	}
}

void uroce_trace_post_recv(uint32_t qpn, const struct ibv_recv_wr *wr)
{
	uint64_t len = 0;
	struct rec r;

	for (int i = 0; i < wr->num_sge; i++)
		len += wr->sg_list[i].length;
	rec_begin(&r, "post_recv", qpn);
	rec_add(&r, "WR", "0x%" PRIx64, wr->wr_id);
	rec_add(&r, "LEN", "%" PRIu64, len);
	if (qpn)
		rec_msg(&r, "QP %u ibv_post_recv wr_id 0x%" PRIx64 " %" PRIu64 " bytes", qpn,
			wr->wr_id, len);
	else
		rec_msg(&r, "ibv_post_srq_recv wr_id 0x%" PRIx64 " %" PRIu64 " bytes", wr->wr_id, len);
	rec_end(&r);
}

void uroce_trace_wqe_start(struct uroce_qp *qp, const struct uroce_send_wqe *w)
{
	const struct uroce_qp_eng *qe = qp->engine;
	uint32_t n;
	struct rec r;

	if (uroce_is_local_op(w->opcode))
		n = 0;
	else if (w->opcode == IBV_WR_ATOMIC_CMP_AND_SWP || w->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD)
		n = 1;
	else
		n = uroce_npkts(qe, w->length);
	rec_begin(&r, "wqe", qp->vqp.qp.qp_num);
	rec_add(&r, "WR", "0x%" PRIx64, w->wr_id);
	rec_add(&r, "OP", "%s", NAME_OF(wr_names, w->opcode));
	rec_add(&r, "LEN", "%" PRIu64, w->length);
	rec_add(&r, "PSN", "%u", w->first_psn);
	rec_add(&r, "NPKTS", "%u", n);
	rec_msg(&r, "QP %u starts wr_id 0x%" PRIx64 ": %u packet(s), PSN %u..%u", qp->vqp.qp.qp_num,
		w->wr_id, n, w->first_psn, psn_add(w->first_psn, n ? n - 1 : 0));
	rec_end(&r);
}

/* The attributes ibv_modify_qp can change, as a table: mask bit, name,
 * where the value is. */
static const struct {
	int bit;
	const char *name;
	size_t off, size;
} attr_tbl[] = {
#define A(bit, field) { IBV_QP_##bit, #field, offsetof(struct ibv_qp_attr, field), \
			sizeof(((struct ibv_qp_attr *)0)->field) }
	A(PKEY_INDEX, pkey_index), A(QKEY, qkey), A(ACCESS_FLAGS, qp_access_flags),
	A(PATH_MTU, path_mtu), A(DEST_QPN, dest_qp_num), A(RQ_PSN, rq_psn), A(SQ_PSN, sq_psn),
	A(TIMEOUT, timeout), A(RETRY_CNT, retry_cnt), A(RNR_RETRY, rnr_retry),
	A(MIN_RNR_TIMER, min_rnr_timer), A(MAX_QP_RD_ATOMIC, max_rd_atomic),
	A(MAX_DEST_RD_ATOMIC, max_dest_rd_atomic),
#undef A
};

void uroce_trace_modify(struct uroce_qp *qp, int old, const struct ibv_qp_attr *attr, int mask)
{
	char attrs[512] = "";
	size_t n = 0;
	struct rec r;

	for (size_t i = 0; i < sizeof(attr_tbl) / sizeof(attr_tbl[0]) && n < sizeof(attrs); i++) {
		uint64_t v = 0;

		if (!(mask & attr_tbl[i].bit))
			continue;
		memcpy(&v, (const char *)attr + attr_tbl[i].off, attr_tbl[i].size); /* little endian */
		n += (size_t)snprintf(attrs + n, sizeof(attrs) - n, "%s%s=%" PRIu64, n ? " " : "",
				      attr_tbl[i].name, v);
	}
	if ((mask & IBV_QP_AV) && n < sizeof(attrs)) {
		char gid[INET6_ADDRSTRLEN];

		inet_ntop(AF_INET6, attr->ah_attr.grh.dgid.raw, gid, sizeof(gid));
		n += (size_t)snprintf(attrs + n, sizeof(attrs) - n, "%sdgid=%s sgid_index=%u hop_limit=%u",
				      n ? " " : "", gid, attr->ah_attr.grh.sgid_index,
				      attr->ah_attr.grh.hop_limit);
	}
	rec_begin(&r, "modify", qp->vqp.qp.qp_num);
	rec_add(&r, "TYPE", "%s", qp->vqp.qp.qp_type == IBV_QPT_RC ? "RC" :
		qp->vqp.qp.qp_type == IBV_QPT_UC ? "UC" : qp->vqp.qp.qp_type == IBV_QPT_UD ? "UD" : "?");
	rec_add(&r, "FROM", "%s", NAME_OF(qps_names, old));
	rec_add(&r, "TO", "%s", NAME_OF(qps_names, qp->state));
	if (mask & IBV_QP_DEST_QPN)
		rec_add(&r, "DEST", "%u", attr->dest_qp_num);
	rec_add(&r, "ATTRS", "%s", attrs);
	rec_msg(&r, "QP %u ibv_modify_qp %s -> %s %s", qp->vqp.qp.qp_num, NAME_OF(qps_names, old),
		NAME_OF(qps_names, qp->state), attrs);
	rec_end(&r);
}

void uroce_trace_to_error(struct uroce_qp *qp, int ev)
{
	struct rec r;

	if (qp->state == IBV_QPS_ERR)
		return;
	rec_begin(&r, "modify", qp->vqp.qp.qp_num);
	rec_add(&r, "FROM", "%s", NAME_OF(qps_names, qp->state));
	rec_add(&r, "TO", "ERR");
	rec_add(&r, "ATTRS", "async_event=%s", ev < 0 ? "none" : ibv_event_type_str(ev));
	rec_msg(&r, "QP %u goes to the error state (%s)", qp->vqp.qp.qp_num,
		ev < 0 ? "a completion error" : ibv_event_type_str(ev));
	rec_end(&r);
}

void uroce_trace_cqe(const struct ibv_wc *wc)
{
	struct rec r;

	rec_begin(&r, "cqe", wc->qp_num);
	rec_add(&r, "WR", "0x%" PRIx64, wc->wr_id);
	rec_add(&r, "OP", "%s", wc_opcode_name(wc->opcode));
	rec_add(&r, "STATUS", "%s", ibv_wc_status_str(wc->status));
	rec_add(&r, "LEN", "%u", wc->byte_len);
	rec_msg(&r, "QP %u completion wr_id 0x%" PRIx64 " %s %s, %u bytes", wc->qp_num, wc->wr_id,
		wc_opcode_name(wc->opcode), ibv_wc_status_str(wc->status), wc->byte_len);
	rec_end(&r);
}

void uroce_trace_why(struct uroce_qp *qp, enum uroce_why why, uint32_t psn, int64_t arg)
{
	struct rec r;

	rec_begin(&r, "why", qp->vqp.qp.qp_num);
	rec_add(&r, "WHY", "%s", NAME_OF(why_names, why));
	rec_add(&r, "PSN", "%u", psn);
	if (arg >= 0)
		rec_add(&r, "ARG", "%" PRId64, arg);
	rec_msg(&r, "QP %u PSN %u: %s", qp->vqp.qp.qp_num, psn, NAME_OF(why_titles, why));
	rec_end(&r);
}

/* ---- rdma CM ----------------------------------------------------------------------- */

void uroce_trace_cm_state(uint32_t id, uint32_t qpn, const char *from, const char *to)
{
	struct rec r;

	if (!strcmp(from, to))
		return;
	rec_begin(&r, "cm_state", qpn);
	rec_add(&r, "CM_ID", "%u", id);
	rec_add(&r, "FROM", "%s", from);
	rec_add(&r, "TO", "%s", to);
	rec_msg(&r, "CM id %u%s: %s -> %s", id, qpn ? "" : " (no QP yet)", from, to);
	rec_end(&r);
}

void uroce_trace_cm_event(uint32_t id, uint32_t qpn, uint32_t event, int32_t status)
{
	struct rec r;

	rec_begin(&r, "cm_event", qpn);
	rec_add(&r, "CM_ID", "%u", id);
	rec_add(&r, "EVENT", "%s", NAME_OF(cm_event_names, event));
	rec_add(&r, "STATUS", "%d", status);
	rec_msg(&r, "CM id %u: event RDMA_CM_EVENT_%s status %d", id,
		NAME_OF(cm_event_names, event), status);
	rec_end(&r);
}
