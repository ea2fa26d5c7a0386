// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * ibv_attach_mcast / ibv_detach_mcast: UD QPs and multicast GIDs only
 * (IPv4-mapped 224.0.0.0/4 or IPv6 ff00::/8: RoCEv2 has no subnet
 * manager, IBTA A17.4.x); the engine keeps the groups (engine/mcast_groups.c).
 * The LID is ignored, as for every RoCE device.
 */
#include <errno.h>
#include <string.h>

#include "engine/engine.h"
#include "verbs/verbs.h"
#include "wire/wire.h"

/* The address family of a multicast GID, or 0 if GID is not one (the
 * kernel's rdma_is_multicast_addr). */
static int mgid_family(const union ibv_gid *gid)
{
	if (roce_gid_family(gid->raw) == AF_INET)
		return (gid->raw[12] & 0xf0) == 0xe0 ? AF_INET : 0;
	return gid->raw[0] == 0xff ? AF_INET6 : 0;
}

/* (EINVAL also from the engine: a QP without one yet.) */
int uroce_attach_mcast(struct ibv_qp *ibqp, const union ibv_gid *gid, uint16_t lid)
{
	int family = mgid_family(gid);

	(void)lid;
	if (ibqp->qp_type != IBV_QPT_UD || !family)
		return EINVAL;
	return uroce_mcast_attach(to_uqp(ibqp), gid, family);
}

int uroce_detach_mcast(struct ibv_qp *ibqp, const union ibv_gid *gid, uint16_t lid)
{
	(void)lid;
	if (ibqp->qp_type != IBV_QPT_UD || !mgid_family(gid))
		return EINVAL;
	return uroce_mcast_detach(to_uqp(ibqp), gid);
}
