// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * The provider plugin: registration with libibverbs, device and context
 * lifetime, and the table of verbs we implement.  Verbs left out of the
 * table keep libibverbs' defaults, which fail with EOPNOTSUPP.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>

#include "verbs/abi_guard.h"
#include "provider_version.h"
#include "engine/engine.h"
#include "cm/cm.h"
#include "verbs/verbs.h"

/* Our registry writes device/modalias = "uroce:NAME" (see tree.c). */
static const struct verbs_match_ent uroce_match_table[] = {
	{ .u.modalias = "uroce:*", .kind = PABI_MATCH_MODALIAS },
	{ .kind = PABI_MATCH_SENTINEL },
};

static void read_attr(const char *ibdev_path, const char *file, char *buf, size_t len)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/uroce/%s", ibdev_path, file);
	if (uroce_read_file(path, buf, len) < 0)
		buf[0] = 0;
}

static struct verbs_device *uroce_alloc_device(struct verbs_sysfs_dev *sysfs_dev)
{
	struct uroce_device *dev = calloc(1, sizeof(*dev));
	char transport[16];

	if (!dev)
		return NULL;
	read_attr(sysfs_dev->ibdev_path, "netdev", dev->netdev, sizeof(dev->netdev));
	read_attr(sysfs_dev->ibdev_path, "transport", transport, sizeof(transport));
	if (uroce_transport_parse(transport, &dev->transport))
		dev->transport = UROCE_TRANSPORT_UDP;
	return &dev->vdev;
}

static void uroce_uninit_device(struct verbs_device *vdev)
{
	free(to_udev(&vdev->device));
}

static void uroce_free_context(struct ibv_context *ibctx);

/*
 * The driver's index: every verb uroce implements, grouped by the object
 * it acts on, as rdma-core's providers/rxe/rxe.c lists its own.  A verb
 * that is not here is libibverbs' default, which fails with EOPNOTSUPP.
 */
static const struct verbs_context_ops uroce_ctx_ops = {
	/* the device and the context: attributes (query.c), the HCA clock
	 * (cq_ex.c), asynchronous events (events.c) */
	.query_device_ex = uroce_query_device_ex,
	.query_port = uroce_query_port,
	.query_rt_values = uroce_query_rt_values,
	.async_event = uroce_async_event_done,
	.free_context = uroce_free_context,
	/* protection, thread and parent domains (pd.c) */
	.alloc_pd = uroce_alloc_pd,
	.dealloc_pd = uroce_dealloc_pd,
	.alloc_td = uroce_alloc_td,
	.dealloc_td = uroce_dealloc_td,
	.alloc_parent_domain = uroce_alloc_parent_domain,
	/* memory regions (mr.c) and memory windows (mw.c) */
	.reg_mr = uroce_reg_mr,
	.rereg_mr = uroce_rereg_mr,
	.dereg_mr = uroce_dereg_mr,
	.advise_mr = uroce_advise_mr,
	.alloc_mw = uroce_alloc_mw,
	.dealloc_mw = uroce_dealloc_mw,
	.bind_mw = uroce_bind_mw,
	/* completion queues (cq.c, cq_ex.c) and their channels (events.c) */
	.create_cq = uroce_create_cq,
	.create_cq_ex = uroce_create_cq_ex,
	.poll_cq = uroce_poll_cq,
	.req_notify_cq = uroce_req_notify_cq,
	.cq_event = uroce_cq_event,
	.resize_cq = uroce_resize_cq,
	.destroy_cq = uroce_destroy_cq,
	/* shared receive queues, XRC SRQs too (srq.c) */
	.create_srq = uroce_create_srq,
	.create_srq_ex = uroce_create_srq_ex,
	.modify_srq = uroce_modify_srq,
	.query_srq = uroce_query_srq,
	.post_srq_recv = uroce_post_srq_recv,
	.destroy_srq = uroce_destroy_srq,
	/* queue pairs (qp.c, qp_modify.c), posting (post.c; the ibv_wr_*
	 * API through ibv_qp_ex, wr.c), UD multicast (mcast.c) */
	.create_qp = uroce_create_qp,
	.create_qp_ex = uroce_create_qp_ex,
	.modify_qp = uroce_modify_qp,
	.query_qp = uroce_query_qp,
	.post_send = uroce_post_send,
	.post_recv = uroce_post_recv,
	.destroy_qp = uroce_destroy_qp,
	.attach_mcast = uroce_attach_mcast,
	.detach_mcast = uroce_detach_mcast,
	/* address handles (ah.c) */
	.create_ah = uroce_create_ah,
	.destroy_ah = uroce_destroy_ah,
	/* XRC domains and the numbers of XRC SRQs (xrc.c) */
	.open_xrcd = uroce_open_xrcd,
	.close_xrcd = uroce_close_xrcd,
	.get_srq_num = uroce_get_srq_num,
};

/*
 * libibverbs hands us an open /dev/infiniband/uverbsN, a stand-in node with
 * no kernel behind it.  A few verbs of libibverbs' core write uverbs
 * commands to that fd directly; put an eventfd in its place so that such a
 * write fails with EINVAL instead of "succeeding" into /dev/null.
 */
static int neuter_cmd_fd(int cmd_fd)
{
	int efd = eventfd(0, EFD_CLOEXEC);

	if (efd < 0)
		return -errno;
	if (dup3(efd, cmd_fd, O_CLOEXEC) < 0) {
		int err = -errno;

		close(efd);
		return err;
	}
	close(efd);
	return 0;
}

/*
 * Completion channels need liburoce-preload.so (which `uroce run` preloads).
 * Without it libibverbs' own ibv_create_comp_channel fails with EINVAL
 * (neuter_cmd_fd); say why, once per process.
 */
static void warn_no_preload(void)
{
	if (!dlsym(RTLD_DEFAULT, "uroce_preload_active"))
		fprintf(stderr, "uroce: liburoce-preload.so is not loaded: "
			"ibv_create_comp_channel() will fail with EINVAL; "
			"run the program under `uroce run`\n");
}

static void check_preload(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, warn_no_preload);
}

/* The GID table follows the netdev's addresses: refresh it at every open. */
static void refresh_tree(struct ibv_device *ibdev, struct uroce_context *ctx)
{
	struct uroce_device *dev = to_udev(ibdev);
	struct uroce_netdev nd;

	if (uroce_netdev_query(dev->netdev, &nd))
		return;
	ctx->node_guid = uroce_netdev_guid(&nd);
	if (access(ibdev->ibdev_path, W_OK) == 0)
		uroce_tree_refresh_port(ibdev->ibdev_path, &nd);
}

static struct verbs_context *uroce_alloc_context(struct ibv_device *ibdev,
						 int cmd_fd, void *private_data)
{
	struct uroce_context *ctx;
	int pipefd[2];

	ctx = pabi_alloc_context(ibdev, cmd_fd, struct uroce_context, vctx);
	if (!ctx)
		return NULL;
	ctx->async_wr_fd = -1;
	if (neuter_cmd_fd(cmd_fd))
		goto err;
	/* Asynchronous events: ibv_get_async_event() reads struct
	 * ib_uverbs_async_event_desc records from async_fd. */
	if (pipe2(pipefd, O_CLOEXEC))
		goto err;
	ctx->vctx.context.async_fd = pipefd[0];
	ctx->async_wr_fd = pipefd[1];
	fcntl(ctx->async_wr_fd, F_SETFL, O_NONBLOCK);
	if (uroce_keytab_init(&ctx->mr_keys))
		goto err;
	pthread_mutex_init(&ctx->lock, NULL);
	ctx->res = uroce_res_open(ibdev->name);
	ctx->vctx.context.num_comp_vectors = UROCE_NUM_COMP_VECTORS;
	refresh_tree(ibdev, ctx);
	check_preload();
	/* Port and GID events need a watcher; a context works without one. */
	if (uroce_monitor_start(ctx))
		fprintf(stderr, "uroce: %s: no port/GID events (netlink watch failed)\n",
			ibdev->name);
	verbs_set_ops(&ctx->vctx, &uroce_ctx_ops);
	return &ctx->vctx;
err:
	{
		int err = errno;

		if (ctx->async_wr_fd >= 0)
			close(ctx->async_wr_fd);
		verbs_uninit_context(&ctx->vctx);
		free(ctx);
		errno = err ? err : ENOMEM;
		return NULL;
	}
}

static void uroce_free_context(struct ibv_context *ibctx)
{
	struct uroce_context *ctx = to_uctx(ibctx);

	uroce_monitor_stop(ctx);
	uroce_engine_put(ctx->engine);
	uroce_evobj_zombies_free(ctx);
	uroce_keytab_destroy(&ctx->mr_keys);
	uroce_res_close(ctx->res);
	pthread_mutex_destroy(&ctx->lock);
	if (ctx->async_wr_fd >= 0)
		close(ctx->async_wr_fd);
	verbs_uninit_context(&ctx->vctx);
	free(ctx);
}

static const struct verbs_device_ops uroce_dev_ops = {
	.name = "uroce",
	.match_min_abi_version = UROCE_DRIVER_ABI,
	.match_max_abi_version = UROCE_DRIVER_ABI,
	.match_table = uroce_match_table,
	.alloc_device = uroce_alloc_device,
	.uninit_device = uroce_uninit_device,
	.alloc_context = uroce_alloc_context,
};

/* cm/ucma.c: offer the rdma_cm device to liburoce-preload.so (weak: the
 * CM is built only with its QP1 layer) */
void uroce_ucma_register(void) __attribute__((weak));

const struct uroce_upcalls uroce_verbs_upcalls = {
	.cq_push = uroce_cq_push_ex,
	.cq_events_hold = uroce_cq_events_hold,
	.qp_event = uroce_qp_async_event,
	.obj_event = uroce_evobj_async_event,
	.mw_local_op = uroce_mw_local_op,
	.mw_remote_invalidate = uroce_mw_remote_invalidate,
	.xrc_resolve = uroce_xrc_resolve,
	.xrc_release = uroce_xrc_release,
	.gsi_attach = uroce_gsi_attach,
	.gsi_detach = uroce_gsi_detach,
	.gsi_rx = uroce_gsi_rx,
	.gsi_local_port = uroce_gsi_local_port,
};

__attribute__((constructor)) static void uroce_register(void)
{
	/* Before any device can open: the engine calls up through it. */
	uroce_engine_set_upcalls(&uroce_verbs_upcalls);
	if (!uroce_abi_guard_ok())
		return;
	pabi_register_driver(&uroce_dev_ops);
	if (uroce_ucma_register)
		uroce_ucma_register();
}
