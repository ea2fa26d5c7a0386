// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * ibv_modify_qp: the IBTA state machine of a QP as a table of its legal
 * transitions, the checks of the values they set, and the hand-over to
 * the engine (uroce_engine_qp_modified), which does the protocol side.
 */
#include <errno.h>
#include <string.h>

#include "engine/engine.h"
#include "trace/trace.h"
#include "verbs/verbs.h"

/*
 * ---- the state machine (IBTA 10.3.1 and 11.2.4.2) ------------------------
 *
 * For each (current, next) state: the QP types for which the transition
 * exists, and per type the attributes it requires and those it allows.
 * The facts are the IBTA's "QP state transition properties" as the Linux
 * kernel's core (qp_state_table in drivers/infiniband/core/verbs.c)
 * enforces them for every device:
 *   - RESET goes only to RESET or INIT (RESET -> ERR is refused);
 *   - every other state may go to RESET or ERR with no attribute;
 *   - SQE exists for UC/UD only (an RC QP with a send error goes to ERR),
 *     so SQE -> RTS is a UC/UD transition;
 *   - IBV_QP_CUR_STATE is optional only where the table lists it
 *     (RTR->RTS, RTS->RTS, SQD->RTS, SQE->RTS), and it must then name the
 *     state the QP is really in.
 */

#define A(x) IBV_QP_##x
enum { T_UD, T_UC, T_RC, T_NUM };
#define V_UD (1u << T_UD)
#define V_UC (1u << T_UC)
#define V_RC (1u << T_RC)
#define V_ALL (V_UD | V_UC | V_RC)

struct transition {
	unsigned int valid;          /* V_* bits: the types the transition exists for */
	int required[T_NUM];
	int optional[T_NUM];
};

static const struct transition qp_transitions[IBV_QPS_ERR + 1][IBV_QPS_ERR + 1] = {
	[IBV_QPS_RESET] = {
		[IBV_QPS_RESET] = { .valid = V_ALL },
		[IBV_QPS_INIT] = { .valid = V_ALL,
			.required = {
				[T_UD] = A(PKEY_INDEX) | A(PORT) | A(QKEY),
				[T_UC] = A(PKEY_INDEX) | A(PORT) | A(ACCESS_FLAGS),
				[T_RC] = A(PKEY_INDEX) | A(PORT) | A(ACCESS_FLAGS),
			} },
	},
	[IBV_QPS_INIT] = {
		[IBV_QPS_RESET] = { .valid = V_ALL },
		[IBV_QPS_ERR] = { .valid = V_ALL },
		[IBV_QPS_INIT] = { .valid = V_ALL,
			.optional = {
				[T_UD] = A(PKEY_INDEX) | A(PORT) | A(QKEY),
				[T_UC] = A(PKEY_INDEX) | A(PORT) | A(ACCESS_FLAGS),
				[T_RC] = A(PKEY_INDEX) | A(PORT) | A(ACCESS_FLAGS),
			} },
		[IBV_QPS_RTR] = { .valid = V_ALL,
			.required = {
				[T_UC] = A(AV) | A(PATH_MTU) | A(DEST_QPN) | A(RQ_PSN),
				[T_RC] = A(AV) | A(PATH_MTU) | A(DEST_QPN) | A(RQ_PSN) |
					 A(MAX_DEST_RD_ATOMIC) | A(MIN_RNR_TIMER),
			},
			.optional = {
				[T_UD] = A(PKEY_INDEX) | A(QKEY),
				[T_UC] = A(ALT_PATH) | A(ACCESS_FLAGS) | A(PKEY_INDEX),
				[T_RC] = A(ALT_PATH) | A(ACCESS_FLAGS) | A(PKEY_INDEX),
			} },
	},
	[IBV_QPS_RTR] = {
		[IBV_QPS_RESET] = { .valid = V_ALL },
		[IBV_QPS_ERR] = { .valid = V_ALL },
		[IBV_QPS_RTS] = { .valid = V_ALL,
			.required = {
				[T_UD] = A(SQ_PSN),
				[T_UC] = A(SQ_PSN),
				[T_RC] = A(TIMEOUT) | A(RETRY_CNT) | A(RNR_RETRY) | A(SQ_PSN) |
					 A(MAX_QP_RD_ATOMIC),
			},
			.optional = {
				[T_UD] = A(CUR_STATE) | A(QKEY),
				[T_UC] = A(CUR_STATE) | A(ALT_PATH) | A(ACCESS_FLAGS) | A(PATH_MIG_STATE),
				[T_RC] = A(CUR_STATE) | A(ALT_PATH) | A(ACCESS_FLAGS) |
					 A(MIN_RNR_TIMER) | A(PATH_MIG_STATE),
			} },
	},
	[IBV_QPS_RTS] = {
		[IBV_QPS_RESET] = { .valid = V_ALL },
		[IBV_QPS_ERR] = { .valid = V_ALL },
		[IBV_QPS_RTS] = { .valid = V_ALL,
			.optional = {
				[T_UD] = A(CUR_STATE) | A(QKEY),
				[T_UC] = A(CUR_STATE) | A(ACCESS_FLAGS) | A(ALT_PATH) | A(PATH_MIG_STATE),
				[T_RC] = A(CUR_STATE) | A(ACCESS_FLAGS) | A(ALT_PATH) |
					 A(PATH_MIG_STATE) | A(MIN_RNR_TIMER),
			} },
		[IBV_QPS_SQD] = { .valid = V_ALL,
			.optional = {
				[T_UD] = A(EN_SQD_ASYNC_NOTIFY),
				[T_UC] = A(EN_SQD_ASYNC_NOTIFY),
				[T_RC] = A(EN_SQD_ASYNC_NOTIFY),
			} },
	},
	[IBV_QPS_SQD] = {
		[IBV_QPS_RESET] = { .valid = V_ALL },
		[IBV_QPS_ERR] = { .valid = V_ALL },
		[IBV_QPS_RTS] = { .valid = V_ALL,
			.optional = {
				[T_UD] = A(CUR_STATE) | A(QKEY),
				[T_UC] = A(CUR_STATE) | A(ALT_PATH) | A(ACCESS_FLAGS) | A(PATH_MIG_STATE),
				[T_RC] = A(CUR_STATE) | A(ALT_PATH) | A(ACCESS_FLAGS) |
					 A(MIN_RNR_TIMER) | A(PATH_MIG_STATE),
			} },
		[IBV_QPS_SQD] = { .valid = V_ALL,
			.optional = {
				[T_UD] = A(PKEY_INDEX) | A(QKEY),
				[T_UC] = A(AV) | A(ALT_PATH) | A(ACCESS_FLAGS) | A(PKEY_INDEX) |
					 A(PATH_MIG_STATE),
				[T_RC] = A(PORT) | A(AV) | A(TIMEOUT) | A(RETRY_CNT) | A(RNR_RETRY) |
					 A(MAX_QP_RD_ATOMIC) | A(MAX_DEST_RD_ATOMIC) | A(ALT_PATH) |
					 A(ACCESS_FLAGS) | A(PKEY_INDEX) | A(MIN_RNR_TIMER) |
					 A(PATH_MIG_STATE),
			} },
	},
	[IBV_QPS_SQE] = {
		[IBV_QPS_RESET] = { .valid = V_ALL },
		[IBV_QPS_ERR] = { .valid = V_ALL },
		[IBV_QPS_RTS] = { .valid = V_UD | V_UC,
			.optional = {
				[T_UD] = A(CUR_STATE) | A(QKEY),
				[T_UC] = A(CUR_STATE) | A(ACCESS_FLAGS),
			} },
	},
	[IBV_QPS_ERR] = {
		[IBV_QPS_RESET] = { .valid = V_ALL },
		[IBV_QPS_ERR] = { .valid = V_ALL },
	},
};

static int type_index(enum ibv_qp_type t)
{
	return t == IBV_QPT_UD ? T_UD : t == IBV_QPT_UC ? T_UC : T_RC;
}

/*
 * XRC's two halves follow RC's rows but for what a half has no use for
 * (the kernel's qp_state_table, XRC_INI and XRC_TGT columns): the send
 * QP's responder side (MAX_DEST_RD_ATOMIC, MIN_RNR_TIMER at RTR) and the
 * receive QP's requester side (RETRY_CNT, RNR_RETRY, MAX_QP_RD_ATOMIC at
 * RTS) are not required.  They stay allowed: programs written for RC pass
 * them.
 */
static const struct {
	enum ibv_qp_type type;
	enum ibv_qp_state cur, next;
	int not_required;
} xrc_relaxed[] = {
	{ IBV_QPT_XRC_SEND, IBV_QPS_INIT, IBV_QPS_RTR, A(MAX_DEST_RD_ATOMIC) | A(MIN_RNR_TIMER) },
	{ IBV_QPT_XRC_RECV, IBV_QPS_RTR, IBV_QPS_RTS,
	  A(RETRY_CNT) | A(RNR_RETRY) | A(MAX_QP_RD_ATOMIC) },
};

static int relaxed(enum ibv_qp_type type, enum ibv_qp_state cur, enum ibv_qp_state next)
{
	for (size_t i = 0; i < sizeof(xrc_relaxed) / sizeof(xrc_relaxed[0]); i++)
		if (xrc_relaxed[i].type == type && xrc_relaxed[i].cur == cur &&
		    xrc_relaxed[i].next == next)
			return xrc_relaxed[i].not_required;
	return 0;
}

/* 0, or the errno a transition from CUR with ATTR/MASK must fail with. */
static int check_transition(struct uroce_qp *qp, enum ibv_qp_state cur,
			    const struct ibv_qp_attr *attr, int mask)
{
	enum ibv_qp_state next = (mask & IBV_QP_STATE) ? attr->qp_state : cur;
	const struct transition *t;
	int ti = type_index(qp->vqp.qp.qp_type);
	int required;

	if ((unsigned int)next > IBV_QPS_ERR || (unsigned int)cur > IBV_QPS_ERR)
		return EINVAL;
	if ((mask & IBV_QP_CUR_STATE) && attr->cur_qp_state != cur)
		return EINVAL;
	t = &qp_transitions[cur][next];
	if (!(t->valid & (1u << ti)))
		return EINVAL;
	required = t->required[ti] & ~relaxed(qp->vqp.qp.qp_type, cur, next);
	if ((mask & required) != required)
		return EINVAL;
	if (mask & ~(t->required[ti] | t->optional[ti] | IBV_QP_STATE))
		return EINVAL;
	return 0;
}

/*
 * QP access flags we accept.  rdma-core 45+ adds the FLUSH permissions
 * (IBA 1.5 FLUSH); like the kernel's drivers we accept them on the QP, as
 * they only permit requests this responder never executes (no MR can be
 * registered with a FLUSH access flag, reg_mr refuses those).
 */
#define QP_ACCESS_ACCEPTED                                                     \
	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | \
	 IBV_ACCESS_REMOTE_ATOMIC | IBV_ACCESS_ON_DEMAND                             \
	 PABI_SINCE_45(| IBV_ACCESS_FLUSH_GLOBAL | IBV_ACCESS_FLUSH_PERSISTENT))

/* Values in range (IBTA 10.3 / the verbs man pages). */
static int check_values(struct uroce_qp *qp, const struct ibv_qp_attr *a, int mask)
{
	if ((mask & IBV_QP_PORT) && a->port_num != 1)
		return EINVAL;
	if ((mask & IBV_QP_PKEY_INDEX) && a->pkey_index != 0)
		return EINVAL;
	/* ON_DEMAND is an MR's flag; programs pass an MR's flags whole (rdma-core's
	 * test_odp does) and the kernel lets it through: accepted, no effect. */
	if ((mask & IBV_QP_ACCESS_FLAGS) &&
	    (a->qp_access_flags & ~(QP_ACCESS_ACCEPTED)))
		return EINVAL;
	if ((mask & IBV_QP_PATH_MTU) && (a->path_mtu < IBV_MTU_256 || a->path_mtu > IBV_MTU_4096))
		return EINVAL;
	if ((mask & IBV_QP_TIMEOUT) && a->timeout > 31)
		return EINVAL;
	if ((mask & IBV_QP_RETRY_CNT) && a->retry_cnt > 7)
		return EINVAL;
	if ((mask & IBV_QP_RNR_RETRY) && a->rnr_retry > 7)
		return EINVAL;
	if ((mask & IBV_QP_MIN_RNR_TIMER) && a->min_rnr_timer > 31)
		return EINVAL;
	if ((mask & IBV_QP_MAX_QP_RD_ATOMIC) && a->max_rd_atomic > UROCE_MAX_RD_ATOM)
		return EINVAL;
	if ((mask & IBV_QP_MAX_DEST_RD_ATOMIC) && a->max_dest_rd_atomic > UROCE_MAX_RD_ATOM)
		return EINVAL;
	if ((mask & IBV_QP_DEST_QPN) && a->dest_qp_num > 0xffffff)
		return EINVAL;
	if (mask & IBV_QP_ALT_PATH)
		return EINVAL; /* no automatic path migration (one port, one path) */
	if ((mask & IBV_QP_PATH_MIG_STATE) && (unsigned int)a->path_mig_state > IBV_MIG_ARMED)
		return EINVAL; /* stored and reported, never acted on (as rxe) */
	if ((mask & IBV_QP_AV) && a->ah_attr.port_num != 1)
		return EINVAL; /* as the kernel's modify_qp: the AV's port must exist */
	return 0;
}

int uroce_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr, int mask)
{
	struct uroce_qp *qp = to_uqp(ibqp);
	struct uroce_av av;
	enum ibv_qp_state old;
	int err;

	if (uroce_parents(qp->fork_gen))
		return EPERM;  /* a forked child's copy of its parent's */
	/* No post runs meanwhile: a post reads the state without the QP's
	 * lock, and Reset rewinds the send queue's indices (post.c). */
	pthread_mutex_lock(&qp->post_lock);
	pthread_mutex_lock(&qp->lock);
	old = qp->state;
	err = check_transition(qp, old, attr, mask);
	if (!err)
		err = check_values(qp, attr, mask);
	if (!err && (mask & IBV_QP_AV))
		err = uroce_av_from_attr(qp->ctx, &attr->ah_attr, &av);
	if (err) {
		pthread_mutex_unlock(&qp->lock);
		pthread_mutex_unlock(&qp->post_lock);
		return err;
	}

	uroce_qp_attr_take(&qp->attr, attr, mask);
	if (mask & IBV_QP_AV) {
		qp->attr.ah_attr = attr->ah_attr;
		qp->av = av;
	}
	if (mask & IBV_QP_STATE) {
		if (attr->qp_state != old)
			uroce_engine_qp_leaving(qp);
		qp->state = attr->qp_state;
		qp->attr.qp_state = attr->qp_state;
		qp->vqp.qp.state = attr->qp_state;
	}
	if (qp->state == IBV_QPS_RESET && old != IBV_QPS_RESET) {
		/* RESET discards every WQE without a completion (IBTA 10.3.1.1). */
		qp->sq.prod = qp->sq.cons = 0;
		qp->rq.prod = qp->rq.cons = 0;
	}
	UROCE_TRACE(uroce_trace_modify(qp, old, attr, mask));
	uroce_engine_qp_modified(qp, old, mask);
	uroce_track_update(qp->ctx, UROCE_RES_QP, qp, qp->res_slot);
	pthread_mutex_unlock(&qp->lock);
	pthread_mutex_unlock(&qp->post_lock);
	/* A QP reused after Reset never meets the flushes of its previous life. */
	if (qp->state == IBV_QPS_RESET && old != IBV_QPS_RESET)
		uroce_qp_clean_cqs(qp);
	return 0;
}
