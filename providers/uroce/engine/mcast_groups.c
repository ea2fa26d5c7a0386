// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * UD multicast in the engine: the groups this process's QPs on a device
 * joined, and the delivery of a packet for QP 0xFFFFFF to the QPs attached
 * to its group (IBTA 10.5.2).  The verbs (ibv_attach_mcast and
 * ibv_detach_mcast, verbs/mcast.c) check their arguments and call here.
 *
 * RoCEv2 has no subnet manager: a multicast GID is an IP multicast address
 * (IBTA A17.4.x), and joining the group is joining that IP group on the
 * device's interface through the transport (ops->mcast_join: the udp
 * transport holds a socket per group), so every process on the host
 * receives its own copy, and the engine hands it to every attached QP of
 * the process.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "engine/engine_int.h"
#include "engine/pkt.h"

/* The joined group of GID, or NULL.  Under mcast_lock. */
static struct uroce_mcast_grp *find_grp(struct uroce_engine *eng, const uint8_t *gid)
{
	for (int i = 0; eng->mcast && i < UROCE_MAX_MCAST_GRP; i++)
		if (eng->mcast[i].joined && !memcmp(eng->mcast[i].mgid.raw, gid, 16))
			return &eng->mcast[i];
	return NULL;
}

/* A new group in a free slot, joined; an errno, or 0 with *OUT set. */
static int new_grp(struct uroce_engine *eng, const union ibv_gid *gid, int family,
		   struct uroce_mcast_grp **out)
{
	const struct uroce_xport_ops *ops = eng->xport->ops;
	int err;

	if (!ops->mcast_join)
		return EOPNOTSUPP;
	if (!eng->mcast && !(eng->mcast = calloc(UROCE_MAX_MCAST_GRP, sizeof(*eng->mcast))))
		return ENOMEM;
	for (int i = 0; i < UROCE_MAX_MCAST_GRP; i++) {
		struct uroce_mcast_grp *g = &eng->mcast[i];

		if (g->joined)
			continue;
		memset(g, 0, sizeof(*g));
		g->mgid = *gid;
		err = ops->mcast_join(eng->xport, family, gid->raw);
		if (err)
			return err == -ENOSPC ? ENOMEM : -err;
		g->joined = true;
		*out = g;
		return 0;
	}
	return ENOMEM; /* max_mcast_grp */
}

/* The engine of QP, NULL before it has one. */
static struct uroce_engine *qp_engine(const struct uroce_qp *qp)
{
	return qp->engine ? qp->engine->eng : NULL;
}

int uroce_mcast_attach(struct uroce_qp *qp, const union ibv_gid *gid, int family)
{
	struct uroce_engine *eng = qp_engine(qp);
	uint32_t qpn = qp->vqp.qp.qp_num;
	struct uroce_mcast_grp *g;
	int err = 0;

	if (!eng)
		return EINVAL;
	pthread_mutex_lock(&eng->mcast_lock);
	g = find_grp(eng, gid->raw);
	if (!g)
		err = new_grp(eng, gid, family, &g);
	for (int i = 0; !err && i < g->n_qps; i++)
		if (g->qpns[i] == qpn)
			goto out; /* attached already: nothing to do (as the kernel) */
	if (!err && g->n_qps == UROCE_MAX_MCAST_QP_ATTACH)
		err = ENOMEM; /* max_mcast_qp_attach */
	if (!err)
		g->qpns[g->n_qps++] = qpn;
out:
	pthread_mutex_unlock(&eng->mcast_lock);
	return err;
}

/* Take QPN off G (under mcast_lock); leave the group when it was the last.
 * The transport leaves it safely against its own receive path (which
 * takes no engine lock), so mcast_lock may be held meanwhile. */
static void remove_qpn(struct uroce_engine *eng, struct uroce_mcast_grp *g, int idx)
{
	g->qpns[idx] = g->qpns[--g->n_qps];
	if (g->n_qps)
		return;
	g->joined = false;
	eng->xport->ops->mcast_leave(eng->xport, g->mgid.raw);
}

int uroce_mcast_detach(struct uroce_qp *qp, const union ibv_gid *gid)
{
	struct uroce_engine *eng = qp_engine(qp);
	uint32_t qpn = qp->vqp.qp.qp_num;
	struct uroce_mcast_grp *g;
	int err = EINVAL;

	if (!eng)
		return EINVAL;
	pthread_mutex_lock(&eng->mcast_lock);
	g = find_grp(eng, gid->raw);
	for (int i = 0; g && i < g->n_qps; i++)
		if (g->qpns[i] == qpn) {
			remove_qpn(eng, g, i);
			err = 0;
			break;
		}
	pthread_mutex_unlock(&eng->mcast_lock);
	return err;
}

/* Destroying a QP still attached is EBUSY, as in uverbs (mcast_list). */
bool uroce_mcast_attached(struct uroce_qp *qp)
{
	struct uroce_engine *eng = qp_engine(qp);
	bool found = false;

	if (!eng || qp->vqp.qp.qp_type != IBV_QPT_UD)
		return false;
	pthread_mutex_lock(&eng->mcast_lock);
	for (int i = 0; eng->mcast && i < UROCE_MAX_MCAST_GRP && !found; i++)
		for (int j = 0; eng->mcast[i].joined && j < eng->mcast[i].n_qps; j++)
			found |= eng->mcast[i].qpns[j] == qp->vqp.qp.qp_num;
	pthread_mutex_unlock(&eng->mcast_lock);
	return found;
}

void uroce_mcast_close(struct uroce_engine *eng)
{
	for (int i = 0; eng->mcast && eng->xport && i < UROCE_MAX_MCAST_GRP; i++)
		if (eng->mcast[i].joined)
			eng->xport->ops->mcast_leave(eng->xport, eng->mcast[i].mgid.raw);
	free(eng->mcast);
	eng->mcast = NULL;
}

void uroce_mcast_rx(struct uroce_engine *eng, struct uroce_rx *rx, const struct roce_pkt *pkt)
{
	uint32_t qpns[UROCE_MAX_MCAST_QP_ATTACH];
	struct uroce_mcast_grp *g;
	int n = 0;

	/* Only UD sends are multicast (IBTA 10.5.2); the group is where the
	 * datagram was addressed: a unicast one for QP 0xFFFFFF finds none. */
	if (pkt->transport != ROCE_TR_UD) {
		uroce_count(eng, UROCE_STAT_DROP_QP_TYPE, 1);
		return;
	}
	pthread_mutex_lock(&eng->mcast_lock);
	g = find_grp(eng, rx->dst_ip);
	if (g) {
		n = g->n_qps;
		memcpy(qpns, g->qpns, n * sizeof(qpns[0]));
	}
	pthread_mutex_unlock(&eng->mcast_lock);
	if (!n)
		uroce_count(eng, UROCE_STAT_DROP_NO_QP, 1);
	for (int i = 0; i < n; i++) {
		struct uroce_qp *qp = uroce_engine_qp_locked(eng, qpns[i]);

		if (!qp)
			continue;
		uroce_resp_rx(qp, pkt, rx);
		pthread_mutex_unlock(&qp->lock);
	}
}
