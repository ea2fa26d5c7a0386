// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * The UCMA command table (rdma/rdma_user_cm.h, ABI 4): command -> handler
 * and the sizes of its body and response, and the handlers of the address
 * half (ids, bind, resolve, query, listen, options).  The connection half
 * (CONNECT, ACCEPT, REJECT, DISCONNECT, NOTIFY, INIT_QP_ATTR) hands over to
 * conn.c, multicast joins to ucma_mcast.c.  Semantics follow the kernel's
 * ucma.c and cma.c; where they are not obvious the comment names the
 * kernel function.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>

#include "cm/ucma.h"

#define UCMA_MAX_BACKLOG 1024          /* the kernel's max_backlog default */
#define AF_IB_FAMILY 27

void ucma_respond(uint64_t response, const void *resp, size_t len)
{
	/* The response pointer is the caller's own memory (same process). */
	memcpy((void *)(uintptr_t)response, resp, len);
}

/* SA's address as text, for the debug lines. */
static const char *addr_text(const struct sockaddr *sa, char *buf, size_t len)
{
	const void *a = sa->sa_family == AF_INET ?
			(const void *)&((const struct sockaddr_in *)sa)->sin_addr :
			(const void *)&((const struct sockaddr_in6 *)sa)->sin6_addr;

	if (!inet_ntop(sa->sa_family, a, buf, len))
		snprintf(buf, len, "?");
	return buf;
}

/* The id named ID, if it belongs to F (ucma_get_ctx). */
static struct ucma_ctx *ctx_get(struct ucma_file *f, uint32_t id)
{
	struct ucma_ctx *ctx = ucma_ctx_find(id);

	return ctx && ctx->file == f ? ctx : NULL;
}

#define WITH_CTX(f, idv, ctx, body)                               \
	({                                                        \
		int ret_;                                         \
		pthread_mutex_lock(&ucma_lock);                   \
		struct ucma_ctx *ctx = ctx_get(f, idv);           \
		if (!ctx)                                         \
			ret_ = -EINVAL;                           \
		else                                              \
			ret_ = (body);                            \
		pthread_mutex_unlock(&ucma_lock);                 \
		ret_;                                             \
	})

static int cmd_create_id(struct ucma_file *f, void *in, uint16_t out_len)
{
	struct rdma_ucm_create_id *cmd = in;
	struct rdma_ucm_create_id_resp resp = { 0 };
	struct ucma_ctx *ctx;
	uint8_t qpt;

	/* ucma_get_qp_type */
	switch (cmd->ps) {
	case RDMA_PS_TCP:
		qpt = IBV_QPT_RC;
		break;
	case RDMA_PS_UDP:
	case RDMA_PS_IPOIB:
		qpt = IBV_QPT_UD;
		break;
	case RDMA_PS_IB:
		qpt = cmd->qp_type;
		if (qpt != IBV_QPT_RC && qpt != IBV_QPT_UD)
			return -EINVAL;
		break;
	default:
		return -EINVAL;
	}
	pthread_mutex_lock(&ucma_lock);
	ctx = ucma_ctx_new(f);
	if (ctx) {
		ctx->uid = cmd->uid;
		ctx->ps = cmd->ps;
		ctx->qp_type = qpt;
		resp.id = ctx->id;
	}
	pthread_mutex_unlock(&ucma_lock);
	if (!ctx)
		return -ENOMEM;
	ucma_respond(cmd->response, &resp, sizeof(resp));
	return 0;
}

static int cmd_destroy_id(struct ucma_file *f, void *in, uint16_t out_len)
{
	struct rdma_ucm_destroy_id *cmd = in;
	struct rdma_ucm_destroy_id_resp resp = { 0 };
	struct ucma_ctx *ctx;

	pthread_mutex_lock(&ucma_lock);
	ctx = ctx_get(f, cmd->id);
	if (ctx)
		resp.events_reported = ucma_ctx_free(ctx);
	pthread_mutex_unlock(&ucma_lock);
	if (!ctx)
		return -EINVAL;
	ucma_respond(cmd->response, &resp, sizeof(resp));
	return 0;
}

/* Bind CTX to ADDR (rdma_bind_addr): a uroce device's address or the
 * wildcard, and a port of the shared port table (0: ephemeral). */
static int bind_addr(struct ucma_ctx *ctx, const struct sockaddr *addr)
{
	struct ucma_dev dev;
	struct sockaddr_storage ss;
	uint16_t port;
	int ret;

	if (ctx->state != UCMA_IDLE)
		return -EINVAL;
	if (addr->sa_family != AF_INET && addr->sa_family != AF_INET6)
		return -EAFNOSUPPORT;
	memset(&ss, 0, sizeof(ss));
	memcpy(&ss, addr, ucma_addr_len(addr));
	if (!ucma_addr_any(addr)) {
		/* cma_acquire_dev_by_src_ip: only addresses of RDMA devices */
		ret = ucma_dev_by_addr(addr, &dev);
		if (ret) {
			char a[INET6_ADDRSTRLEN];

			if (uroce_debug_cm > 1)
				fprintf(stderr, "uroce cm: %s is on no uroce device\n",
					addr_text(addr, a, sizeof(a)));
			return ret;
		}
		ctx->dev = dev;
		ctx->have_dev = true;
	}
	port = ucma_addr_port(addr);
	ret = conn_port_bind(ctx, (struct sockaddr *)&ss, &port);
	if (ret) {
		ctx->have_dev = false;
		return ret;
	}
	ucma_addr_set_port((struct sockaddr *)&ss, port);
	ctx->src = ss;
	ctx->state = UCMA_ADDR_BOUND;
	return 0;
}

static int cmd_bind_ip(struct ucma_file *f, void *in, uint16_t out_len)
{
	struct rdma_ucm_bind_ip *cmd = in;

	return WITH_CTX(f, cmd->id, ctx, bind_addr(ctx, (struct sockaddr *)&cmd->addr));
}

static int cmd_bind(struct ucma_file *f, void *in, uint16_t out_len)
{
	struct rdma_ucm_bind *cmd = in;

	/* AF_IB addressing is InfiniBand's, not RoCE's: refusing it makes
	 * librdmacm use the IP commands (ucma_set_af_ib_support). */
	if (cmd->addr.ss_family == AF_IB_FAMILY)
		return -EAFNOSUPPORT;
	return WITH_CTX(f, cmd->id, ctx, bind_addr(ctx, (struct sockaddr *)&cmd->addr));
}

/* RESOLVE_IP: pick the source (bound address, given one, or the route's),
 * which must be a uroce device's; ADDR_RESOLVED or ADDR_ERROR follows. */
static int resolve_ip(struct ucma_ctx *ctx, const struct sockaddr *src, const struct sockaddr *dst)
{
	struct sockaddr_storage s;
	int ret;

	if (dst->sa_family != AF_INET && dst->sa_family != AF_INET6)
		return -EINVAL;
	if (ctx->state != UCMA_IDLE && ctx->state != UCMA_ADDR_BOUND)
		return -EINVAL;
	if (ctx->state == UCMA_IDLE) {
		/* cma_bind_addr: the given source, else the wildcard of dst's family */
		memset(&s, 0, sizeof(s));
		if (src->sa_family == dst->sa_family)
			memcpy(&s, src, ucma_addr_len(src));
		else
			s.ss_family = dst->sa_family;
		ret = bind_addr(ctx, (struct sockaddr *)&s);
		if (ret)
			return ret;
	}
	memset(&ctx->dst, 0, sizeof(ctx->dst));
	memcpy(&ctx->dst, dst, ucma_addr_len(dst));
	if (!ctx->have_dev) {
		const struct sockaddr *bound = (const struct sockaddr *)&ctx->src;
		uint16_t port = ucma_addr_port(bound);

		/* A multicast destination (the first step of a join) leaves
		 * by the interface of a given source, loopback too, with no
		 * route (ip_route_output_key_hash_rcu's special case). */
		ret = ucma_route_src(dst, ucma_addr_multicast(dst) && !ucma_addr_zero(bound) ?
					  bound : NULL, &s);
		if (!ret)
			ret = ucma_dev_by_addr((struct sockaddr *)&s, &ctx->dev);
		if (ret) {
			/* addr_handler: the resolution itself failed */
			ucma_event_queue(ctx, RDMA_CM_EVENT_ADDR_ERROR, ret);
			return 0;
		}
		ctx->have_dev = true;
		ucma_addr_set_port((struct sockaddr *)&s, port);
		ctx->src = s;
	}
	ctx->state = UCMA_ADDR_RESOLVED;
	ucma_event_queue(ctx, RDMA_CM_EVENT_ADDR_RESOLVED, 0);
	return 0;
}

static int cmd_resolve_ip(struct ucma_file *f, void *in, uint16_t out_len)
{
	struct rdma_ucm_resolve_ip *cmd = in;

	return WITH_CTX(f, cmd->id, ctx, resolve_ip(ctx, (struct sockaddr *)&cmd->src_addr,
						     (struct sockaddr *)&cmd->dst_addr));
}

static int cmd_resolve_addr(struct ucma_file *f, void *in, uint16_t out_len)
{
	struct rdma_ucm_resolve_addr *cmd = in;

	if (cmd->dst_addr.ss_family == AF_IB_FAMILY)
		return -EAFNOSUPPORT;
	return WITH_CTX(f, cmd->id, ctx, resolve_ip(ctx, (struct sockaddr *)&cmd->src_addr,
						     (struct sockaddr *)&cmd->dst_addr));
}

/* RESOLVE_ROUTE (cma_resolve_iboe_route): no SA on RoCE, the path comes
 * from the addresses and the netdev. */
static int resolve_route(struct ucma_ctx *ctx)
{
	if (ctx->state != UCMA_ADDR_RESOLVED && ctx->state != UCMA_ROUTE_RESOLVED)
		return -EINVAL;
	conn_set_path(ctx);
	ctx->route = true;
	ctx->state = UCMA_ROUTE_RESOLVED;
	ucma_event_queue(ctx, RDMA_CM_EVENT_ROUTE_RESOLVED, 0);
	return 0;
}

static int cmd_resolve_route(struct ucma_file *f, void *in, uint16_t out_len)
{
	struct rdma_ucm_resolve_route *cmd = in;

	return WITH_CTX(f, cmd->id, ctx, resolve_route(ctx));
}

/* QUERY_ROUTE (ucma_query_route, ucma_copy_iboe_route): the addresses, the
 * device by node GUID, and the path once resolved. */
static int query_route(struct ucma_ctx *ctx, struct rdma_ucm_query_route_resp *r)
{
	struct ib_user_path_rec *p = &r->ib_route[0];

	memset(r, 0, sizeof(*r));
	memcpy(&r->src_addr, &ctx->src, sizeof(r->src_addr));
	memcpy(&r->dst_addr, &ctx->dst, sizeof(r->dst_addr));
	r->ibdev_index = (uint32_t)-1; /* libibverbs in sysfs mode has no index */
	if (!ctx->have_dev)
		return 0;
	r->node_guid = ctx->dev.node_guid_be;
	r->port_num = 1;
	memcpy(p->sgid, ctx->dev.gid, 16);
	if (ctx->dst.ss_family)
		ucma_addr_to_gid((struct sockaddr *)&ctx->dst, p->dgid);
	p->pkey = htons(0xffff);
	if (ctx->route) {
		r->num_paths = 1;
		conn_fill_path(ctx, p);
	}
	return 0;
}

static int cmd_query_route(struct ucma_file *f, void *in, uint16_t out_len)
{
	struct rdma_ucm_query *cmd = in;
	struct rdma_ucm_query_route_resp resp;
	int ret = WITH_CTX(f, cmd->id, ctx, query_route(ctx, &resp));

	if (!ret)
		ucma_respond(cmd->response, &resp, sizeof(resp));
	return ret;
}

static int cmd_query(struct ucma_file *f, void *in, uint16_t out_len)
{
	/* Only librdmacm with AF_IB support asks; we refused AF_IB. */
	return -ENOSYS;
}

static int listen_ctx(struct ucma_ctx *ctx, uint32_t backlog)
{
	int ret;

	if (ctx->state == UCMA_LISTEN) {
		ctx->backlog = backlog; /* rdma_listen again: a new backlog */
		return 0;
	}
	if (ctx->state == UCMA_IDLE) {
		struct sockaddr_in any = { .sin_family = AF_INET };

		ret = bind_addr(ctx, (struct sockaddr *)&any);
		if (ret)
			return ret;
	}
	if (ctx->state != UCMA_ADDR_BOUND)
		return -EINVAL;
	ctx->backlog = backlog;
	ret = conn_listen(ctx);
	if (ret)
		return ret;
	ctx->state = UCMA_LISTEN;
	if (uroce_debug_cm) {
		char a[INET6_ADDRSTRLEN];
		const struct sockaddr *sa = (const struct sockaddr *)&ctx->src;

		fprintf(stderr, "uroce cm: listening on %s:%u\n", addr_text(sa, a, sizeof(a)),
			ucma_addr_port(sa));
	}
	return 0;
}

static int cmd_listen(struct ucma_file *f, void *in, uint16_t out_len)
{
	struct rdma_ucm_listen *cmd = in;
	uint32_t backlog = cmd->backlog > 0 && cmd->backlog < UCMA_MAX_BACKLOG ? cmd->backlog :
			   UCMA_MAX_BACKLOG;

	return WITH_CTX(f, cmd->id, ctx, listen_ctx(ctx, backlog));
}

static int cmd_connect(struct ucma_file *f, void *in, uint16_t out_len)
{
	struct rdma_ucm_connect *cmd = in;

	if (!cmd->conn_param.valid)
		return -EINVAL;
	return WITH_CTX(f, cmd->id, ctx, conn_connect(ctx, &cmd->conn_param));
}

static int accept_ctx(struct ucma_ctx *ctx, struct rdma_ucm_accept *cmd)
{
	if (!cmd->conn_param.valid) /* the active side's ACCEPT: send the RTU */
		return conn_establish(ctx);
	/* ucma_accept: the id reports events from now on */
	ctx->uid = cmd->uid;
	return conn_accept(ctx, &cmd->conn_param);
}

static int cmd_accept(struct ucma_file *f, void *in, uint16_t out_len)
{
	struct rdma_ucm_accept *cmd = in;

	return WITH_CTX(f, cmd->id, ctx, accept_ctx(ctx, cmd));
}

static int cmd_reject(struct ucma_file *f, void *in, uint16_t out_len)
{
	struct rdma_ucm_reject *cmd = in;
	uint8_t reason = cmd->reason ? cmd->reason : CONN_REJ_CONSUMER_DEFINED;

	/* ucma_reject: only the consumer's two reasons */
	if (reason != CONN_REJ_CONSUMER_DEFINED && reason != CONN_REJ_VENDOR_OPTION_NOT_SUPPORTED)
		return -EINVAL;
	return WITH_CTX(f, cmd->id, ctx, conn_reject(ctx, reason, cmd->private_data,
						     cmd->private_data_len));
}

static int cmd_disconnect(struct ucma_file *f, void *in, uint16_t out_len)
{
	struct rdma_ucm_disconnect *cmd = in;

	return WITH_CTX(f, cmd->id, ctx, conn_disconnect(ctx));
}

static int cmd_init_qp_attr(struct ucma_file *f, void *in, uint16_t out_len)
{
	struct rdma_ucm_init_qp_attr *cmd = in;
	struct ib_uverbs_qp_attr resp;
	int ret;

	if (cmd->qp_state > IBV_QPS_ERR)
		return -EINVAL;
	memset(&resp, 0, sizeof(resp));
	ret = WITH_CTX(f, cmd->id, ctx, conn_init_qp_attr(ctx, cmd->qp_state, &resp));
	if (!ret)
		ucma_respond(cmd->response, &resp, sizeof(resp));
	return ret;
}

static int cmd_get_event(struct ucma_file *f, void *in, uint16_t out_len)
{
	struct rdma_ucm_get_event *cmd = in;
	struct rdma_ucm_event_resp resp;
	size_t min = sizeof(resp) - sizeof(resp.reserved) - sizeof(resp.ece);
	int ret;

	if (out_len < min)
		return -ENOSPC;
	ret = ucma_event_take(f, &resp);
	if (!ret)
		ucma_respond(cmd->response, &resp, out_len < sizeof(resp) ? out_len : sizeof(resp));
	return ret;
}

/* SET_OPTION (ucma_set_option_id): TOS, REUSEADDR, AFONLY, ACK_TIMEOUT. */
static int set_option(struct ucma_ctx *ctx, const struct rdma_ucm_set_option *cmd)
{
	const void *val = (const void *)(uintptr_t)cmd->optval;
	int v;

	if (cmd->level == RDMA_OPTION_IB && cmd->optname == RDMA_OPTION_IB_PATH)
		return -EINVAL; /* an SA path record: InfiniBand only */
	if (cmd->level != RDMA_OPTION_ID)
		return -ENOSYS;
	if (cmd->optname == RDMA_OPTION_ID_TOS || cmd->optname == RDMA_OPTION_ID_ACK_TIMEOUT) {
		if (cmd->optlen != 1)
			return -EINVAL;
		v = *(const uint8_t *)val;
	} else {
		if (cmd->optlen != sizeof(int))
			return -EINVAL;
		memcpy(&v, val, sizeof(v));
	}
	switch (cmd->optname) {
	case RDMA_OPTION_ID_TOS:
		ctx->tos = v;
		ctx->tos_set = true;
		return 0;
	case RDMA_OPTION_ID_REUSEADDR:
		/* rdma_set_reuseaddr: only before the id is bound */
		if (ctx->state != UCMA_IDLE)
			return -EINVAL;
		ctx->reuseaddr = v != 0;
		return 0;
	case RDMA_OPTION_ID_AFONLY:
		if (ctx->state != UCMA_IDLE)
			return -EINVAL;
		ctx->afonly = v != 0;
		return 0;
	case RDMA_OPTION_ID_ACK_TIMEOUT:
		ctx->ack_timeout = v > 31 ? 31 : v;
		return 0;
	default:
		return -ENOSYS;
	}
}

static int cmd_set_option(struct ucma_file *f, void *in, uint16_t out_len)
{
	struct rdma_ucm_set_option *cmd = in;

	if (cmd->optlen > 64 || !cmd->optval)
		return -EINVAL;
	return WITH_CTX(f, cmd->id, ctx, set_option(ctx, cmd));
}

static int cmd_notify(struct ucma_file *f, void *in, uint16_t out_len)
{
	struct rdma_ucm_notify *cmd = in;

	/* rdma_notify: only "communication established" means anything */
	if (cmd->event != IBV_EVENT_COMM_EST)
		return WITH_CTX(f, cmd->id, ctx, 0);
	return WITH_CTX(f, cmd->id, ctx, conn_notify_established(ctx));
}

/* JOIN_IP_MCAST and JOIN_MCAST (ucma_process_join): the group's handle in
 * a create_id response; MULTICAST_JOIN follows on the id's file. */
static int join(struct ucma_file *f, uint32_t id, uint64_t uid, const struct sockaddr *addr,
		uint16_t join_flags, uint64_t response)
{
	struct rdma_ucm_create_id_resp resp = { 0 };
	int ret;

	if (join_flags >= RDMA_MC_JOIN_FLAG_RESERVED)
		return -EINVAL;
	ret = WITH_CTX(f, id, ctx, ucma_mcast_join(ctx, uid, addr, &resp.id));
	if (!ret)
		ucma_respond(response, &resp, sizeof(resp));
	return ret;
}

static int cmd_join_ip(struct ucma_file *f, void *in, uint16_t out_len)
{
	struct rdma_ucm_join_ip_mcast *cmd = in;
	const struct sockaddr *sa = (const struct sockaddr *)&cmd->addr;

	/* ucma_join_ip_multicast: an IP address, joined as a full member */
	if (!ucma_addr_len(sa))
		return -EINVAL;
	return join(f, cmd->id, cmd->uid, sa, RDMA_MC_JOIN_FLAG_FULLMEMBER, cmd->response);
}

static int cmd_join_mcast(struct ucma_file *f, void *in, uint16_t out_len)
{
	struct rdma_ucm_join_mcast *cmd = in;
	const struct sockaddr *sa = (const struct sockaddr *)&cmd->addr;

	/* an IP address of its family's size (ucma_process_join); AF_IB
	 * is refused, as everywhere */
	if (!ucma_addr_len(sa) || cmd->addr_size != ucma_addr_len(sa))
		return -EINVAL;
	return join(f, cmd->id, cmd->uid, sa, cmd->join_flags, cmd->response);
}

/* LEAVE_MCAST (ucma_leave_multicast): the events reported for the group,
 * which librdmacm waits to have acknowledged. */
static int cmd_leave(struct ucma_file *f, void *in, uint16_t out_len)
{
	struct rdma_ucm_destroy_id *cmd = in;
	struct rdma_ucm_destroy_id_resp resp = { 0 };
	int ret;

	pthread_mutex_lock(&ucma_lock);
	ret = ucma_mcast_leave(f, cmd->id, &resp.events_reported);
	pthread_mutex_unlock(&ucma_lock);
	if (!ret)
		ucma_respond(cmd->response, &resp, sizeof(resp));
	return ret;
}

/* MIGRATE_ID, written on the new file: the id and its queued events move
 * (ucma_migrate_id). */
static int cmd_migrate_id(struct ucma_file *f, void *in, uint16_t out_len)
{
	struct rdma_ucm_migrate_id *cmd = in;
	struct rdma_ucm_migrate_resp resp = { 0 };
	struct ucma_file *old;
	struct ucma_ctx *ctx;
	int ret = 0;

	pthread_mutex_lock(&ucma_lock);
	old = ucma_file_find((int)cmd->fd);
	ctx = old ? ucma_ctx_find(cmd->id) : NULL;
	if (!ctx || ctx->file != old)
		ret = -EINVAL;
	else if (old != f)
		ret = ucma_ctx_migrate(ctx, f);
	if (!ret)
		resp.events_reported = ctx->events_reported;
	pthread_mutex_unlock(&ucma_lock);
	if (!ret)
		ucma_respond(cmd->response, &resp, sizeof(resp));
	return ret;
}

#define CMD(op, fn, in, out) \
	[RDMA_USER_CM_CMD_##op] = { #op, fn, sizeof(struct in), out }

static const struct ucma_cmd cmd_table[] = {
	CMD(CREATE_ID, cmd_create_id, rdma_ucm_create_id, sizeof(struct rdma_ucm_create_id_resp)),
	CMD(DESTROY_ID, cmd_destroy_id, rdma_ucm_destroy_id, sizeof(struct rdma_ucm_destroy_id_resp)),
	CMD(BIND_IP, cmd_bind_ip, rdma_ucm_bind_ip, 0),
	CMD(RESOLVE_IP, cmd_resolve_ip, rdma_ucm_resolve_ip, 0),
	CMD(RESOLVE_ROUTE, cmd_resolve_route, rdma_ucm_resolve_route, 0),
	CMD(QUERY_ROUTE, cmd_query_route, rdma_ucm_query, sizeof(struct rdma_ucm_query_route_resp)),
	CMD(CONNECT, cmd_connect, rdma_ucm_connect, 0),
	CMD(LISTEN, cmd_listen, rdma_ucm_listen, 0),
	CMD(ACCEPT, cmd_accept, rdma_ucm_accept, 0),
	CMD(REJECT, cmd_reject, rdma_ucm_reject, 0),
	CMD(DISCONNECT, cmd_disconnect, rdma_ucm_disconnect, 0),
	CMD(INIT_QP_ATTR, cmd_init_qp_attr, rdma_ucm_init_qp_attr, sizeof(struct ib_uverbs_qp_attr)),
	CMD(GET_EVENT, cmd_get_event, rdma_ucm_get_event, sizeof(struct rdma_ucm_event_resp)),
	CMD(SET_OPTION, cmd_set_option, rdma_ucm_set_option, 0),
	CMD(NOTIFY, cmd_notify, rdma_ucm_notify, 0),
	CMD(JOIN_IP_MCAST, cmd_join_ip, rdma_ucm_join_ip_mcast, sizeof(struct rdma_ucm_create_id_resp)),
	CMD(LEAVE_MCAST, cmd_leave, rdma_ucm_destroy_id, sizeof(struct rdma_ucm_destroy_id_resp)),
	CMD(MIGRATE_ID, cmd_migrate_id, rdma_ucm_migrate_id, sizeof(struct rdma_ucm_migrate_resp)),
	CMD(QUERY, cmd_query, rdma_ucm_query, 0),
	CMD(BIND, cmd_bind, rdma_ucm_bind, 0),
	CMD(RESOLVE_ADDR, cmd_resolve_addr, rdma_ucm_resolve_addr, 0),
	CMD(JOIN_MCAST, cmd_join_mcast, rdma_ucm_join_mcast, sizeof(struct rdma_ucm_create_id_resp)),
	/* GET_OPTION: the kernel has no handler either (ENOSYS) */
};

const struct ucma_cmd *ucma_cmd_lookup(uint32_t cmd)
{
	if (cmd >= sizeof(cmd_table) / sizeof(cmd_table[0]) || !cmd_table[cmd].fn)
		return NULL;
	return &cmd_table[cmd];
}
