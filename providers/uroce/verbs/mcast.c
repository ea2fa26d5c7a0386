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

static struct uroce_engine *qp_engine(struct uroce_qp *qp)
{
	return qp->engine ? ((struct uroce_qp_eng *)qp->engine)->eng : NULL;
}

int uroce_attach_mcast(struct ibv_qp *ibqp, const union ibv_gid *gid, uint16_t lid)
{
	struct uroce_engine *eng = qp_engine(to_uqp(ibqp));
	int family = mgid_family(gid);

	(void)lid;
	if (ibqp->qp_type != IBV_QPT_UD || !family || !eng)
		return EINVAL;
	return uroce_mcast_attach(eng, gid, family, ibqp->qp_num);
}

int uroce_detach_mcast(struct ibv_qp *ibqp, const union ibv_gid *gid, uint16_t lid)
{
	struct uroce_engine *eng = qp_engine(to_uqp(ibqp));

	(void)lid;
	if (ibqp->qp_type != IBV_QPT_UD || !mgid_family(gid) || !eng)
		return EINVAL;
	return uroce_mcast_detach(eng, gid, ibqp->qp_num);
}
