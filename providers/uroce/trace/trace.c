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
#include <infiniband/verbs.h>

#include "knob/knob.h"
#include "trace/trace.h"
#include "wire/wire.h"

bool uroce_tracing;

static pthread_mutex_t file_lock = PTHREAD_MUTEX_INITIALIZER;
static struct roce_pcap *file;
static pid_t file_pid;
static bool file_failed;

__attribute__((constructor)) static void trace_init(void)
{
	uroce_tracing = uroce_knob_str(UROCE_KNOB_TRACE) != NULL;
}

uint64_t uroce_trace_clock_slow(void)
{
	return roce_pcap_clock();
}

/* ---- names ------------------------------------------------------------------------ */

static const char *const wc_names[] = {
	[IBV_WC_SEND] = "SEND", [IBV_WC_RDMA_WRITE] = "RDMA_WRITE", [IBV_WC_RDMA_READ] = "RDMA_READ",
	[IBV_WC_COMP_SWAP] = "COMP_SWAP", [IBV_WC_FETCH_ADD] = "FETCH_ADD",
	[IBV_WC_BIND_MW] = "BIND_MW", [IBV_WC_LOCAL_INV] = "LOCAL_INV",
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

const char *uroce_trace_why_name(enum uroce_why why)
{
	return UROCE_NAME_OF(why_names, why);
}

const char *uroce_trace_why_title(enum uroce_why why)
{
	return UROCE_NAME_OF(why_titles, why);
}

static const char *wc_opcode_name(enum ibv_wc_opcode op)
{
	if (op == IBV_WC_RECV)
		return "RECV";
	if (op == IBV_WC_RECV_RDMA_WITH_IMM)
		return "RECV_RDMA_WITH_IMM";
	return UROCE_NAME_OF(wc_names, op);
}

/* ---- the file ---------------------------------------------------------------------- */

static void write_entry(const char *entry, uint32_t len);

static struct roce_pcap *trace_file(void)
{
	pid_t me = getpid();
	char path[4096], comm[64] = "?", appl[128];
	const char *p = uroce_knob_str(UROCE_KNOB_TRACE), *pp;
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
		f = roce_pcapng_open(path, uroce_knob_num(UROCE_KNOB_TRACE_MAX), appl);
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

/* ---- records: journal fields (the writer, trace.h) ---------------------------------- */

void uroce_rec_add(struct uroce_rec *r, const char *key, const char *fmt, ...)
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

void uroce_rec_begin(struct uroce_rec *r, const char *ev, uint32_t qpn)
{
	uint64_t ts = (trace_file(), roce_pcap_clock()); /* the file's first record comes first */

	r->n = 0;
	r->msg[0] = 0;
	r->n = (size_t)snprintf(r->buf, sizeof(r->buf), "__REALTIME_TIMESTAMP=%" PRIu64 "\n",
				ts / 1000);
	uroce_rec_add(r, "NS", "%" PRIu64, ts);
	uroce_rec_add(r, "EV", "%s", ev);
	if (qpn)
		uroce_rec_add(r, "QPN", "%u", qpn);
}

void uroce_rec_msg(struct uroce_rec *r, const char *fmt, ...)
{
	size_t used = strlen(r->msg);
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(r->msg + used, sizeof(r->msg) - used, fmt, ap);
	va_end(ap);
}

void uroce_rec_end(struct uroce_rec *r)
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

void uroce_trace_post_recv(uint32_t qpn, const struct ibv_recv_wr *wr)
{
	uint64_t len = 0;
	struct uroce_rec r;

	for (int i = 0; i < wr->num_sge; i++)
		len += wr->sg_list[i].length;
	uroce_rec_begin(&r, "post_recv", qpn);
	uroce_rec_add(&r, "WR", "0x%" PRIx64, wr->wr_id);
	uroce_rec_add(&r, "LEN", "%" PRIu64, len);
	if (qpn)
		uroce_rec_msg(&r, "QP %u ibv_post_recv wr_id 0x%" PRIx64 " %" PRIu64 " bytes", qpn,
			      wr->wr_id, len);
	else
		uroce_rec_msg(&r, "ibv_post_srq_recv wr_id 0x%" PRIx64 " %" PRIu64 " bytes",
			      wr->wr_id, len);
	uroce_rec_end(&r);
}

void uroce_trace_cqe(const struct ibv_wc *wc)
{
	struct uroce_rec r;

	uroce_rec_begin(&r, "cqe", wc->qp_num);
	uroce_rec_add(&r, "WR", "0x%" PRIx64, wc->wr_id);
	uroce_rec_add(&r, "OP", "%s", wc_opcode_name(wc->opcode));
	uroce_rec_add(&r, "STATUS", "%s", ibv_wc_status_str(wc->status));
	uroce_rec_add(&r, "LEN", "%u", wc->byte_len);
	uroce_rec_msg(&r, "QP %u completion wr_id 0x%" PRIx64 " %s %s, %u bytes", wc->qp_num,
		      wc->wr_id, wc_opcode_name(wc->opcode), ibv_wc_status_str(wc->status),
		      wc->byte_len);
	uroce_rec_end(&r);
}

/* ---- rdma CM ----------------------------------------------------------------------- */

void uroce_trace_cm_state(uint32_t id, uint32_t qpn, const char *from, const char *to)
{
	struct uroce_rec r;

	if (!strcmp(from, to))
		return;
	uroce_rec_begin(&r, "cm_state", qpn);
	uroce_rec_add(&r, "CM_ID", "%u", id);
	uroce_rec_add(&r, "FROM", "%s", from);
	uroce_rec_add(&r, "TO", "%s", to);
	uroce_rec_msg(&r, "CM id %u%s: %s -> %s", id, qpn ? "" : " (no QP yet)", from, to);
	uroce_rec_end(&r);
}

void uroce_trace_cm_event(uint32_t id, uint32_t qpn, uint32_t event, int32_t status)
{
	struct uroce_rec r;

	uroce_rec_begin(&r, "cm_event", qpn);
	uroce_rec_add(&r, "CM_ID", "%u", id);
	uroce_rec_add(&r, "EVENT", "%s", UROCE_NAME_OF(cm_event_names, event));
	uroce_rec_add(&r, "STATUS", "%d", status);
	uroce_rec_msg(&r, "CM id %u: event RDMA_CM_EVENT_%s status %d", id,
		      UROCE_NAME_OF(cm_event_names, event), status);
	uroce_rec_end(&r);
}
