// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * The hooks the verbs layer calls on a QP (engine.h): its QPN and
 * per-QP protocol state at create, each change of state (what RTR and
 * RTS start, what Reset clears), posts on either queue, and destroy.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine_int.h"
#include "wire/wire.h"

int uroce_engine_qp_create(struct uroce_qp *qp)
{
	struct uroce_context *ctx = qp->ctx;
	struct uroce_qp_eng *qe;
	struct uroce_engine *eng;
	uint32_t qpn;

	pthread_mutex_lock(&ctx->lock);
	/* a context a forked child inherited gets the child's own engine */
	if (!ctx->engine || uroce_parents(ctx->engine->gen))
		ctx->engine = uroce_engine_get(ctx);
	eng = ctx->engine;
	pthread_mutex_unlock(&ctx->lock);
	if (!eng)
		return errno ? errno : EIO;
	qe = calloc(1, sizeof(*qe));
	if (!qe)
		return ENOMEM;
	qpn = uroce_qpn_alloc_qp(eng->qpns, eng->xport->fwd_port);
	if (!qpn) {
		free(qe);
		return ENOMEM;
	}
	qe->eng = eng;
	qe->qp = qp;
	qe->rwqe = (struct uroce_recv_wqe *)qe->rwqe_buf;
	qp->engine = qe;
	qp->vqp.qp.qp_num = qpn;
	pthread_rwlock_wrlock(&eng->qps_lock);
	eng->qps[qpn] = qp;
	eng->qp_list[eng->n_qps++] = qp;
	pthread_rwlock_unlock(&eng->qps_lock);
	return 0;
}

void uroce_engine_qp_destroy(struct uroce_qp *qp)
{
	struct uroce_qp_eng *qe = qp->engine;
	struct uroce_engine *eng;
	uint32_t qpn = qp->vqp.qp.qp_num;

	if (!qe)
		return;
	eng = qe->eng;
	pthread_rwlock_wrlock(&eng->qps_lock);
	eng->qps[qpn] = NULL;
	for (uint32_t i = 0; i < eng->n_qps; i++)
		if (eng->qp_list[i] == qp) {
			eng->qp_list[i] = eng->qp_list[--eng->n_qps];
			break;
		}
	pthread_rwlock_unlock(&eng->qps_lock);
	/* Nothing can find the QP now; wait for a packet being processed. */
	pthread_mutex_lock(&qp->lock);
	uroce_engine_qp_leaving(qp);
	uroce_engine_arm(qe, false);
	pthread_mutex_unlock(&qp->lock);
	pthread_mutex_lock(&eng->rx_lock);
	if (eng->xport->ops->unsteer)
		eng->xport->ops->unsteer(eng->xport, qpn);
	pthread_mutex_unlock(&eng->rx_lock);
	uroce_qpn_free(eng->qpns, qpn);
	free(qe);
	qp->engine = NULL;
}

static uint32_t mtu_bytes(enum ibv_mtu m)
{
	return m >= IBV_MTU_256 && m <= IBV_MTU_4096 ? 128u << m : 1024;
}

/*
 * A NIC acknowledges a request on receipt.  Here the ACK may still wait for
 * the end of the receive burst when the application, which already saw the
 * receive completion, moves the QP to Error or Reset (rdma_disconnect) or
 * destroys it: it leaves now, or the peer's send never completes.
 */
void uroce_engine_qp_leaving(struct uroce_qp *qp)
{
	if (qp->engine)
		uroce_resp_ack_before_requests(qp);
}

/*
 * A UD QP sends from whichever of the device's addresses an AH names, so
 * its one source port must be ready on all of them (transport.h,
 * claim_port): WANT; where another program holds WANT, the port the
 * transport gives in its place, which is then claimed on the other
 * addresses too.  An address that cannot take it (a tentative IPv6 one,
 * or a second program in the way) is left to the first send, as before.
 */
static uint16_t claim_ud_port(struct uroce_engine *eng, uint16_t want)
{
	struct uroce_xport *x = eng->xport;
	struct uroce_netdev nd;
	int moved_at = -1;

	if (!x->ops->claim_port || uroce_netdev_query(eng->netdev, &nd))
		return want;
	for (int i = 0; i < nd.n_addrs; i++) {
		int port;

		if (i == moved_at)
			continue;
		port = x->ops->claim_port(x, roce_gid_family(nd.addrs[i]), nd.addrs[i], want);
		if (port > 0 && port != want && moved_at < 0) {
			want = (uint16_t)port;
			moved_at = i;
			i = -1;     /* the new port on the other addresses */
		}
	}
	return want;
}

void uroce_engine_qp_modified(struct uroce_qp *qp, enum ibv_qp_state old_state,
			      int attr_mask)
{
	struct uroce_qp_eng *qe = qp->engine;

	switch (qp->state) {
	case IBV_QPS_RESET: {
		struct uroce_engine *eng = qe->eng;
		struct uroce_qp *self = qe->qp;
		bool armed = qe->armed;

		if (eng->xport->ops->unsteer)
			eng->xport->ops->unsteer(eng->xport, qp->vqp.qp.qp_num);
		memset(qe, 0, sizeof(*qe));
		qe->eng = eng;
		qe->qp = self;
		qe->armed = armed;
		qe->rwqe = (struct uroce_recv_wqe *)qe->rwqe_buf;
		uroce_engine_arm(qe, false);
		break;
	}
	case IBV_QPS_RTR:
		if (qp->vqp.qp.qp_type == IBV_QPT_UD) {
			/* RoCEv2 source port: entropy from the QPN (A17.3.1). */
			qp->udp_sport = claim_ud_port(qe->eng, uroce_xport_sport(qp->vqp.qp.qp_num));
		} else if (old_state != IBV_QPS_RTR || (attr_mask & (IBV_QP_DEST_QPN | IBV_QP_AV))) {
			/* Connected QPs: the QP's port, and a receive socket
			 * connected to the port the peer (if it is uroce) sends
			 * from, before any packet flows: no packet of the
			 * connection takes the shared socket and arrives late. */
			uint32_t me = qp->vqp.qp.qp_num, peer = qp->attr.dest_qp_num;

			struct uroce_xport *x = qe->eng->xport;

			qp->udp_sport = uroce_xport_sport(me);
			if (x->ops->claim_port) {
				int port = x->ops->claim_port(x, qp->av.family, qp->av.sgid.raw,
							      qp->udp_sport);

				if (port > 0)
					qp->udp_sport = (uint16_t)port;
			}
			qe->reconnects = 0;
			qe->conn_port = uroce_xport_sport(peer);
			if (!x->ops->steer || x->ops->steer(x, me, qp->av.family, qp->av.sgid.raw,
							    qp->av.dgid.raw, qe->conn_port))
				qe->conn_port = 0;
		}
		if (old_state != IBV_QPS_RTR) {
			qe->epsn = qp->attr.rq_psn & 0xffffff;
			qe->msn = 0;
		}
		if (qp->vqp.qp.qp_type == IBV_QPT_UD) {
			struct uroce_netdev nd;

			qe->mtu = uroce_netdev_query(qe->eng->netdev, &nd) ? 1024 :
				  mtu_bytes(uroce_netdev_ib_mtu(nd.mtu));
		} else {
			qe->mtu = mtu_bytes(qp->attr.path_mtu);
		}
		break;
	case IBV_QPS_RTS:
		if (old_state == IBV_QPS_RTR || (attr_mask & IBV_QP_SQ_PSN)) {
			qe->sq_psn = qp->attr.sq_psn & 0xffffff;
			qe->cur_psn = qe->sq_psn;
			qe->una_psn = qe->sq_psn;
			qe->sq_next = qp->sq.cons;
			qe->cur_off = 0;
		}
		qe->retry_left = qp->attr.retry_cnt;
		qe->rnr_left = qp->attr.rnr_retry;
		qe->draining = false;
		uroce_req_progress(qp);
		break;
	case IBV_QPS_SQD:
		if (old_state != IBV_QPS_SQD) {
			qe->draining = true;
			qe->drained_sent = false;
		}
		uroce_check_drained(qp);
		break;
	case IBV_QPS_ERR:
		uroce_qp_flush(qp);
		if (qp->srq && old_state != IBV_QPS_ERR)
			uroce_up->qp_event(qp, IBV_EVENT_QP_LAST_WQE_REACHED);
		break;
	default:
		break;
	}
}

void uroce_engine_sq_posted(struct uroce_qp *qp)
{
	if (qp->state == IBV_QPS_ERR)
		uroce_qp_flush(qp);
	else if (!uroce_cc_post_waits(qp))
		uroce_req_progress(qp);
}

/*
 * A post published its WQEs without the QP's lock (verbs/post.c).  It may
 * leave them to the engine when the engine's next pass is sure to come
 * and would send them anyway: an RC QP in RTS whose posts wait for the ACK
 * clock has packets outstanding, and their response (or a timer) calls
 * uroce_req_progress.  The post stored sq.prod before the fence here, then
 * reads the state and PSNs.  The pass that could be the last (a response
 * that acknowledges everything, a move to the error state) stores una_psn
 * or the state, and then reads sq.prod behind a fence of its own
 * (uroce_req_progress, flush_queues).  Of two such store-fence-load
 * sequences at least one load sees the other's store: either this post
 * takes the lock, or that pass sees its WQEs.
 */
bool uroce_engine_post_deferred(struct uroce_qp *qp)
{
	atomic_thread_fence(memory_order_seq_cst);
	return __atomic_load_n(&qp->state, __ATOMIC_RELAXED) == IBV_QPS_RTS &&
	       uroce_cc_post_waits(qp);
}

void uroce_engine_rq_posted(struct uroce_qp *qp)
{
	if (qp->state != IBV_QPS_ERR)
		return;
	pthread_mutex_lock(&qp->lock);
	uroce_qp_flush(qp);
	pthread_mutex_unlock(&qp->lock);
}

bool uroce_engine_sq_draining(const struct uroce_qp *qp)
{
	return qp->state == IBV_QPS_SQD && qp->engine->sq_next != qp->sq.cons;
}
