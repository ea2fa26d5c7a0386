// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Multicast groups of rdma CM ids: JOIN_IP_MCAST / JOIN_MCAST and
 * LEAVE_MCAST as the kernel answers them for a RoCE v2 port (ucma.c's
 * ucma_process_join and ucma_leave_multicast, cma.c's
 * cma_iboe_join_multicast and cma_make_mc_event).
 *
 * RoCE has no SA: a join is local.  The group's MGID is its IP address as
 * a GID (IPv4 as ::ffff:a.b.c.d, cma_iboe_set_mgid for RoCE v2; IPv6 as
 * is), and MULTICAST_JOIN carries the AH to send to it and QPN 0xFFFFFF.
 * librdmacm then attaches the id's QP itself (ibv_attach_mcast, unless
 * the join is send-only), and the attach makes the device's transport
 * receive the group (verbs/mcast.c: one socket per group and process,
 * joined on the netdev).  That socket's membership stands for the kernel's
 * IGMP join (cma_igmp_send), so the CM joins nothing itself: a second
 * membership would only duplicate it.  Full and send-only members are
 * therefore alike here: librdmacm attaches the QP of a full member only
 * (and the kernel makes no IGMP join for a send-only one).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <infiniband/verbs.h>

#include "cm/ucma.h"

#define MCAST_QPN 0xFFFFFF   /* IBTA 9.8.1: the multicast destination QP */
#define MCAST_HOP_LIMIT 64   /* IPV6_DEFAULT_HOPLIMIT, what the kernel gives RoCE v2 */

static struct ucma_slots groups;

void ucma_mcast_fork_child(void)
{
	memset(&groups, 0, sizeof(groups));
}

/* A join the kernel would take but the device cannot use: say why. */
static int refuse(const struct sockaddr *addr, const char *why)
{
	char a[INET6_ADDRSTRLEN] = "?";
	const void *ip = addr->sa_family == AF_INET ?
			 (const void *)&((const struct sockaddr_in *)addr)->sin_addr :
			 (const void *)&((const struct sockaddr_in6 *)addr)->sin6_addr;

	inet_ntop(addr->sa_family, ip, a, sizeof(a));
	fprintf(stderr, "uroce cm: rdma_join_multicast %s: %s (EINVAL)\n", a, why);
	return -EINVAL;
}

/* MULTICAST_JOIN (cma_make_mc_event, ib_init_ah_from_mcmember): the group
 * as a global AH from the id's GID, SL, rate, flow label and traffic class
 * 0, no LID; QPN 0xFFFFFF and the id's Q_Key; uid and id are the group's. */
static void join_event(struct ucma_mcast *mc)
{
	struct ucma_ctx *ctx = mc->ctx;
	struct ucma_event *ev = ucma_event_queue(ctx, RDMA_CM_EVENT_MULTICAST_JOIN, 0);
	struct rdma_ucm_ud_param *ud;

	if (!ev)
		return;
	ev->mc = mc;
	ev->resp.uid = mc->uid;
	ev->resp.id = mc->id;
	ud = &ev->resp.param.ud;
	ud->qp_num = MCAST_QPN;
	ud->qkey = conn_ud_qkey(ctx);
	ud->ah_attr.is_global = 1;
	ud->ah_attr.port_num = 1;
	ucma_addr_to_gid((const struct sockaddr *)&mc->addr, ud->ah_attr.grh.dgid);
	ud->ah_attr.grh.sgid_index = ctx->dev.gid_index;
	ud->ah_attr.grh.hop_limit = MCAST_HOP_LIMIT;
}

int ucma_mcast_join(struct ucma_ctx *ctx, uint64_t uid, const struct sockaddr *addr, uint32_t *id)
{
	struct ucma_mcast *mc;

	/* ucma_get_ctx_dev, rdma_join_multicast: an id on a device, bound or
	 * resolved (not yet routed or connected), of a UD port space. */
	if (!ctx->have_dev)
		return -EINVAL;
	if (ctx->state != UCMA_ADDR_BOUND && ctx->state != UCMA_ADDR_RESOLVED)
		return -EINVAL;
	if (ctx->qp_type != IBV_QPT_UD)
		return -EINVAL;
	if (ucma_addr_zero(addr)) /* cma_iboe_join_multicast */
		return -EINVAL;
	/* The kernel lets these through and the attach fails afterwards
	 * (MULTICAST_ERROR); the join is the place to say it. */
	if (!ucma_addr_multicast(addr))
		return refuse(addr, "not a multicast address");
	if (addr->sa_family != ctx->src.ss_family)
		return refuse(addr, "not the family of the id's address");
	mc = calloc(1, sizeof(*mc));
	if (!mc)
		return -ENOMEM;
	if (ucma_slot_add(&groups, mc, &mc->id)) {
		free(mc);
		return -ENOMEM;
	}
	mc->uid = uid;
	mc->ctx = ctx;
	memcpy(&mc->addr, addr, ucma_addr_len(addr));
	mc->next = ctx->mcs;
	ctx->mcs = mc;
	join_event(mc);
	*id = mc->id;
	return 0;
}

static void mcast_free(struct ucma_mcast *mc)
{
	ucma_slot_del(&groups, mc->id);
	free(mc);
}

int ucma_mcast_leave(struct ucma_file *f, uint32_t id, uint32_t *reported)
{
	struct ucma_mcast *mc = ucma_slot_get(&groups, id), **pp;

	if (!mc)
		return -ENOENT;
	if (mc->ctx->file != f)
		return -EINVAL;
	for (pp = &mc->ctx->mcs; *pp != mc; pp = &(*pp)->next)
		;
	*pp = mc->next;
	ucma_event_drop_mc(mc);
	*reported = mc->events_reported;
	mcast_free(mc);
	return 0;
}

/* DESTROY_ID and close (ucma_cleanup_multicast): the id's events are gone
 * already, its groups go with it. */
void ucma_mcast_free_all(struct ucma_ctx *ctx)
{
	while (ctx->mcs) {
		struct ucma_mcast *mc = ctx->mcs;

		ctx->mcs = mc->next;
		mcast_free(mc);
	}
}
