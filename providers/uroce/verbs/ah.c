// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Address handles and address vectors.  On RoCE the address is the GRH:
 * the destination GID is an IP address (IPv4-mapped or IPv6), the source
 * GID one of our port's addresses (IBTA A17.4).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include "engine/engine.h"
#include "verbs/verbs.h"
#include "wire/wire.h"

int uroce_av_from_attr(struct uroce_context *ctx, const struct ibv_ah_attr *attr,
		       struct uroce_av *av)
{
	const struct ibv_global_route *grh = &attr->grh;
	static const union ibv_gid zero;

	/* RoCE has no LIDs: the GRH is the address (IBTA A16.x / A17.4); the
	 * only port is 1 (the kernel refuses an AV naming another). */
	if (!attr->is_global || attr->port_num != 1)
		return EINVAL;
	if (grh->sgid_index >= UROCE_GID_TBL_LEN ||
	    !memcmp(&grh->dgid, &zero, sizeof(zero)))
		return EINVAL;
	memset(av, 0, sizeof(*av));
	if (ibv_query_gid(&ctx->vctx.context, 1, grh->sgid_index, &av->sgid) ||
	    !memcmp(&av->sgid, &zero, sizeof(zero)))
		return EINVAL;
	av->dgid = grh->dgid;
	av->sgid_index = grh->sgid_index;
	av->hop_limit = grh->hop_limit;
	av->traffic_class = grh->traffic_class;
	av->flow_label = grh->flow_label;
	av->sl = attr->sl;
	/* Source and destination must be of one family. */
	av->family = roce_gid_family(av->dgid.raw);
	if (roce_gid_family(av->sgid.raw) != av->family)
		return EINVAL;
	if (av->family == AF_INET) {
		av->dst.in4.sin_family = AF_INET;
		av->dst.in4.sin_port = htons(4791);
		memcpy(&av->dst.in4.sin_addr, av->dgid.raw + 12, 4);
	} else {
		av->dst.in6.sin6_family = AF_INET6;
		av->dst.in6.sin6_port = htons(4791);
		memcpy(&av->dst.in6.sin6_addr, av->dgid.raw, 16);
		if (IN6_IS_ADDR_LINKLOCAL(&av->dst.in6.sin6_addr))
			av->dst.in6.sin6_scope_id =
				if_nametoindex(to_udev(ctx->vctx.context.device)->netdev);
	}
	return 0;
}

struct ibv_ah *uroce_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	struct uroce_ah *ah = calloc(1, sizeof(*ah));
	int err;

	if (!ah) {
		errno = ENOMEM;
		return NULL;
	}
	err = uroce_av_from_attr(to_uctx(pd->context), attr, &ah->av);
	if (err) {
		free(ah);
		errno = err;
		return NULL;
	}
	atomic_fetch_add(&to_upd(pd)->users, 1);
	return &ah->ibv_ah;
}

int uroce_destroy_ah(struct ibv_ah *ibah)
{
	struct uroce_ah *ah = (struct uroce_ah *)ibah;

	atomic_fetch_sub(&to_upd(ibah->pd)->users, 1);
	free(ah);
	return 0;
}
