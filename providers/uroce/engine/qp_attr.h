/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The attributes of ibv_modify_qp that a QP takes as they are given, once
 * checked: verbs/qp_modify.c, and tests/unit/loopkit.c, which stands in
 * for verbs in the engine's unit tests.  The state, the address vector
 * and what needs the engine's hooks stay with the caller.  Included
 * through engine/engine.h.
 */
#ifndef UROCE_ENGINE_QP_ATTR_H
#define UROCE_ENGINE_QP_ATTR_H

#include <infiniband/verbs.h>

/* Copy into TO each plain attribute of FROM that MASK (enum
 * ibv_qp_attr_mask) names; PSNs are 24 bits (IBTA 9.7.1). */
static inline void uroce_qp_attr_take(struct ibv_qp_attr *to, const struct ibv_qp_attr *from,
				      int mask)
{
#define TAKE(bit, field) if (mask & IBV_QP_##bit) to->field = from->field
	TAKE(PKEY_INDEX, pkey_index);
	TAKE(PORT, port_num);
	TAKE(QKEY, qkey);
	TAKE(ACCESS_FLAGS, qp_access_flags);
	TAKE(PATH_MTU, path_mtu);
	TAKE(DEST_QPN, dest_qp_num);
	TAKE(TIMEOUT, timeout);
	TAKE(RETRY_CNT, retry_cnt);
	TAKE(RNR_RETRY, rnr_retry);
	TAKE(MIN_RNR_TIMER, min_rnr_timer);
	TAKE(MAX_QP_RD_ATOMIC, max_rd_atomic);
	TAKE(MAX_DEST_RD_ATOMIC, max_dest_rd_atomic);
	TAKE(EN_SQD_ASYNC_NOTIFY, en_sqd_async_notify);
	TAKE(PATH_MIG_STATE, path_mig_state);
#undef TAKE
	if (mask & IBV_QP_RQ_PSN)
		to->rq_psn = from->rq_psn & 0xffffff;
	if (mask & IBV_QP_SQ_PSN)
		to->sq_psn = from->sq_psn & 0xffffff;
}

#endif
