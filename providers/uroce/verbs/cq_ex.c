// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Extended CQs (ibv_create_cq_ex(3)): the same ring as cq.c, read through
 * ibv_start_poll / ibv_next_poll / ibv_end_poll and the ibv_wc_read_*
 * accessors; completion timestamps; ibv_query_rt_values_ex.
 *
 * The "HCA clock" is CLOCK_MONOTONIC_RAW in nanoseconds: hca_core_clock is
 * 1 GHz (1000000 kHz), completion_timestamp_mask covers all 64 bits, and
 * ibv_query_rt_values_ex reads the same clock, so a completion timestamp
 * and a raw clock value compare directly.  The wallclock timestamp is
 * CLOCK_REALTIME in nanoseconds.  Both are taken when the completion is
 * queued (cq.c, uroce_cq_push_ex), only for CQs that asked for them.
 *
 * Each start_poll/next_poll takes one entry off the ring into cq->cur
 * under the CQ's lock and releases it again, so the producers are never
 * held up between polls, and an empty next_poll, which a caller may repeat
 * before end_poll (rdma-core's tests do), serves the wire as poll_cq does.
 */
#include <errno.h>
#include <stdlib.h>

#include "engine/engine.h"
#include "verbs/verbs.h"

#define UROCE_WC_FLAGS_TS                                                      \
	(IBV_WC_EX_WITH_COMPLETION_TIMESTAMP |                                 \
	 IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)
#define UROCE_WC_FLAGS (IBV_WC_STANDARD_FLAGS | UROCE_WC_FLAGS_TS)

uint64_t uroce_clock_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static struct uroce_cq *from_ex(struct ibv_cq_ex *cq)
{
	return to_ucq(ibv_cq_ex_to_cq(cq));
}

static const struct ibv_wc *cur(struct ibv_cq_ex *cq)
{
	return &from_ex(cq)->cur.wc;
}

/* Take the next entry into cur and expose its wr_id and status. */
static int take(struct ibv_cq_ex *ibcq)
{
	struct uroce_cq *cq = from_ex(ibcq);
	int ret = uroce_cq_take(cq, &cq->cur);

	if (ret)
		return -ret;
	ibcq->wr_id = cq->cur.wc.wr_id;
	ibcq->status = cq->cur.wc.status;
	return 0;
}

static int start_poll(struct ibv_cq_ex *ibcq, struct ibv_poll_cq_attr *attr)
{
	if (attr->comp_mask)
		return EINVAL;
	return take(ibcq);
}

static int next_poll(struct ibv_cq_ex *ibcq)
{
	return take(ibcq);
}

static void end_poll(struct ibv_cq_ex *ibcq)
{
	(void)ibcq; /* every entry was released when it was taken */
}

static enum ibv_wc_opcode read_opcode(struct ibv_cq_ex *cq) { return cur(cq)->opcode; }
static uint32_t read_vendor_err(struct ibv_cq_ex *cq) { return cur(cq)->vendor_err; }
static uint32_t read_byte_len(struct ibv_cq_ex *cq) { return cur(cq)->byte_len; }
/* Also the invalidated R_Key of a SEND with Invalidate (ibv_wc's union). */
static __be32 read_imm_data(struct ibv_cq_ex *cq) { return cur(cq)->imm_data; }
static uint32_t read_qp_num(struct ibv_cq_ex *cq) { return cur(cq)->qp_num; }
static uint32_t read_src_qp(struct ibv_cq_ex *cq) { return cur(cq)->src_qp; }
static unsigned int read_wc_flags(struct ibv_cq_ex *cq) { return cur(cq)->wc_flags; }
static uint32_t read_slid(struct ibv_cq_ex *cq) { return cur(cq)->slid; }
static uint8_t read_sl(struct ibv_cq_ex *cq) { return cur(cq)->sl; }
static uint8_t read_dlid_path_bits(struct ibv_cq_ex *cq) { return cur(cq)->dlid_path_bits; }
static uint64_t read_completion_ts(struct ibv_cq_ex *cq) { return from_ex(cq)->cur.ts; }
static uint64_t read_completion_wallclock_ns(struct ibv_cq_ex *cq)
{
	return from_ex(cq)->cur.wallclock;
}

struct ibv_cq_ex *uroce_create_cq_ex(struct ibv_context *context,
				     struct ibv_cq_init_attr_ex *attr)
{
	struct uroce_cq *cq;
	struct ibv_cq_ex *ex;
	int err = 0;

	if (attr->comp_mask & ~(uint32_t)(IBV_CQ_INIT_ATTR_MASK_FLAGS | IBV_CQ_INIT_ATTR_MASK_PD))
		err = EINVAL;
	else if (attr->wc_flags & ~(uint64_t)UROCE_WC_FLAGS)
		err = EOPNOTSUPP; /* CVLAN, flow tag, tag matching: not offered */
	else if ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
		 (attr->flags & ~(uint32_t)IBV_CREATE_CQ_ATTR_SINGLE_THREADED))
		err = EOPNOTSUPP; /* IGNORE_OVERRUN: an overrun always reports */
	else if ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD) &&
		 (!attr->parent_domain || attr->parent_domain->context != context ||
		  !uroce_is_parent_domain(attr->parent_domain)))
		err = EINVAL; /* only a parent domain may be given (pd.c) */
	if (err) {
		errno = err;
		return NULL;
	}
	if (attr->cqe > INT32_MAX) {
		errno = EINVAL;
		return NULL;
	}
	cq = uroce_cq_alloc(context, (int)attr->cqe, attr->channel, (int)attr->comp_vector,
			    (attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD) ? attr->parent_domain : NULL);
	if (!cq)
		return NULL;
	/* SINGLE_THREADED is a hint: the lock is cheap enough to keep. */
	cq->wc_flags = attr->wc_flags;
	/* libibverbs' ibv_create_cq_ex runs verbs_init_cq on what we return
	 * (context, channel and its CQ count, cq_context): not here too. */
	ex = &cq->vcq.cq_ex;
	ex->start_poll = start_poll;
	ex->next_poll = next_poll;
	ex->end_poll = end_poll;
	ex->read_opcode = read_opcode;
	ex->read_vendor_err = read_vendor_err;
	ex->read_byte_len = read_byte_len;
	ex->read_imm_data = read_imm_data;
	ex->read_qp_num = read_qp_num;
	ex->read_src_qp = read_src_qp;
	ex->read_wc_flags = read_wc_flags;
	ex->read_slid = read_slid;
	ex->read_sl = read_sl;
	ex->read_dlid_path_bits = read_dlid_path_bits;
	if (attr->wc_flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP)
		ex->read_completion_ts = read_completion_ts;
	if (attr->wc_flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)
		ex->read_completion_wallclock_ns = read_completion_wallclock_ns;
	return ex;
}

/* ibv_query_rt_values_ex(3): the raw clock only, in tv_nsec as a 64-bit
 * count of HCA clock ticks (tv_sec 0), as hardware providers give it. */
int uroce_query_rt_values(struct ibv_context *context, struct ibv_values_ex *values)
{
	(void)context;
	if (values->comp_mask & ~(uint32_t)IBV_VALUES_MASK_RAW_CLOCK)
		return EOPNOTSUPP;
	if (values->comp_mask & IBV_VALUES_MASK_RAW_CLOCK) {
		values->raw_clock.tv_sec = 0;
		values->raw_clock.tv_nsec = (long)uroce_clock_ns(CLOCK_MONOTONIC_RAW);
	}
	return 0;
}
