// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * What a request on the emulated NETLINK_RDMA socket is answered with
 * (docs/netlink.md): the kernel's RDMA_NL_NLDEV commands that read, for
 * uroce's devices, from a table of one function per command that writes
 * one device's messages.  The attributes are the kernel's
 * (drivers/infiniband/core/nldev.c: fill_dev_info, fill_port_info,
 * nldev_get_chardev, nldev_sys_get_doit), with what libibverbs requires
 * (rdma-core libibverbs/ibdev_nl.c) and iproute2's rdma tool prints.
 *
 * A request names a device by RDMA_NLDEV_ATTR_DEV_INDEX (or DEV_NAME):
 * one of ours is answered here; any other goes to the kernel where it
 * has RDMA, and fails with ENODEV where not.  A dump of every device is
 * the kernel's part first, then ours, then one NLMSG_DONE.  Commands that
 * change something (NEWLINK, SET, STAT_SET...) fail with EOPNOTSUPP on
 * ours: `uroce link` is how uroce devices are made and changed.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <infiniband/verbs.h>

#include "cm/cm.h"
#include "preload/nl.h"

/* A dev_t as the kernel's huge_encode_dev encodes it. */
#define NL_CDEV(major, minor) (((minor) & 0xffu) | ((major) << 8) | (((minor) & ~0xffu) << 12))
/* The null device the node /dev/infiniband/uverbsN stands for (1:3, see
 * device/registry.h). */
#define NL_UVERBS_CDEV NL_CDEV(1u, 3u)
/* The UCMA ABI that cm/ucma_cmd.c speaks (the kernel's RDMA_USER_CM_ABI_VERSION). */
#define NL_UCMA_ABI 4

/* One device's messages for command C; 0 or -errno. */
typedef int (*nl_dev_fn)(struct nl_out *o, const struct nl_req *r, const struct nl_dev *d);

static void dev_head(struct nlb *b, const struct nl_dev *d)
{
	nlb_u32(b, RDMA_NLDEV_ATTR_DEV_INDEX, d->index);
	nlb_str(b, RDMA_NLDEV_ATTR_DEV_NAME, d->name);
}

static int dev_info(struct nl_out *o, const struct nl_req *r, const struct nl_dev *d)
{
	struct nlb b;

	(void)r;
	nl_out_start(o, &b, RDMA_NLDEV_CMD_GET, 0);
	dev_head(&b, d);
	nlb_u32(&b, RDMA_NLDEV_ATTR_PORT_INDEX, 1); /* the number of ports */
	if (d->fw[0])
		nlb_str(&b, RDMA_NLDEV_ATTR_FW_VERSION, d->fw);
	nlb_u64(&b, RDMA_NLDEV_ATTR_NODE_GUID, d->node_guid);
	nlb_u64(&b, RDMA_NLDEV_ATTR_SYS_IMAGE_GUID, d->node_guid);
	nlb_u8(&b, RDMA_NLDEV_ATTR_DEV_NODE_TYPE, RDMA_NODE_IB_CA);
	nlb_u8(&b, RDMA_NLDEV_ATTR_DEV_DIM, 0);
	nlb_str(&b, RDMA_NLDEV_ATTR_DEV_PROTOCOL, "roce");
	return nl_out_add(o, &b);
}

static int port_info(struct nl_out *o, const struct nl_req *r, const struct nl_dev *d)
{
	uint32_t port = 1;
	struct nlb b;

	if (!r->dump && r->tb[RDMA_NLDEV_ATTR_PORT_INDEX] &&
	    (nl_attr_u32(r->tb[RDMA_NLDEV_ATTR_PORT_INDEX], &port) || port != 1))
		return -EINVAL;
	nl_out_start(o, &b, RDMA_NLDEV_CMD_PORT_GET, 0);
	dev_head(&b, d);
	nlb_u32(&b, RDMA_NLDEV_ATTR_PORT_INDEX, 1);
	/* As ibv_query_port says (verbs/query.c); a RoCE port has no LID. */
	nlb_u64(&b, RDMA_NLDEV_ATTR_CAP_FLAGS, IBV_PORT_CM_SUP | IBV_PORT_IP_BASED_GIDS);
	nlb_u8(&b, RDMA_NLDEV_ATTR_PORT_STATE, d->port_state);
	nlb_u8(&b, RDMA_NLDEV_ATTR_PORT_PHYS_STATE, d->phys_state);
	if (d->ifindex) {
		nlb_u32(&b, RDMA_NLDEV_ATTR_NDEV_INDEX, d->ifindex);
		nlb_str(&b, RDMA_NLDEV_ATTR_NDEV_NAME, d->netdev);
	}
	return nl_out_add(o, &b);
}

/* Which character device serves the device: its uverbs node only. */
static int chardev(struct nl_out *o, const struct nl_req *r, const struct nl_dev *d)
{
	const char *type = nl_attr_str(r->tb[RDMA_NLDEV_ATTR_CHARDEV_TYPE]);
	char name[32];
	struct nlb b;

	if (!type)
		return -EINVAL;
	if (strcmp(type, "uverbs"))
		return -EOPNOTSUPP;
	snprintf(name, sizeof(name), "uverbs%d", d->uverbs);
	nl_out_start(o, &b, RDMA_NLDEV_CMD_GET_CHARDEV, 0);
	nlb_u64(&b, RDMA_NLDEV_ATTR_CHARDEV, NL_UVERBS_CDEV);
	nlb_u64(&b, RDMA_NLDEV_ATTR_CHARDEV_ABI, d->abi);
	nlb_str(&b, RDMA_NLDEV_ATTR_CHARDEV_NAME, name);
	return nl_out_add(o, &b);
}

/* The rdma_cm device, asked for without a device index.  Under the preload
 * the process's /dev/infiniband/rdma_cm is uroce's whenever a device is
 * listed (preload_cm.c: the provider registers it when libibverbs loads
 * its drivers, and the CM mux there hands ids on other devices to the
 * kernel's file), so the answer is the number its fstat gives.  librdmacm
 * asks before it lists devices (ucma_init), that is before the provider
 * is loaded, then opens the path and refuses a file whose st_rdev
 * differs; the kernel's answer (rdma_ucm's misc minor) made it refuse
 * ours (docs/netlink.md).  The kernel is still asked, its answer
 * dropped: the request is what loads rdma_ucm on demand. */
static int is_rdma_cm(const struct nl_req *r)
{
	const char *type = nl_attr_str(r->tb[RDMA_NLDEV_ATTR_CHARDEV_TYPE]);

	return r->cmd == RDMA_NLDEV_CMD_GET_CHARDEV && type && !strcmp(type, "rdma_cm");
}

static int rdma_cm_chardev(struct nl_out *o)
{
	struct nlb b;

	nl_out_start(o, &b, RDMA_NLDEV_CMD_GET_CHARDEV, 0);
	nlb_u64(&b, RDMA_NLDEV_ATTR_CHARDEV, NL_CDEV(UROCE_RDMA_CM_MAJOR, UROCE_RDMA_CM_MINOR));
	nlb_u64(&b, RDMA_NLDEV_ATTR_CHARDEV_ABI, NL_UCMA_ABI);
	nlb_str(&b, RDMA_NLDEV_ATTR_CHARDEV_NAME, "rdma_cm");
	return nl_out_add(o, &b);
}

static const struct nl_cmd {
	int cmd;
	nl_dev_fn fn;
	int dumps;          /* a dump lists every device */
} cmds[] = {
	{ RDMA_NLDEV_CMD_GET, dev_info, 1 },
	{ RDMA_NLDEV_CMD_PORT_GET, port_info, 1 },
	{ RDMA_NLDEV_CMD_GET_CHARDEV, chardev, 0 },
	{ RDMA_NLDEV_CMD_STAT_GET, nl_stat_port, 1 },
	{ RDMA_NLDEV_CMD_RES_GET, nl_res_summary, 1 },
	{ RDMA_NLDEV_CMD_RES_QP_GET, nl_res_list, 1 },
	{ RDMA_NLDEV_CMD_RES_CQ_GET, nl_res_list, 1 },
	{ RDMA_NLDEV_CMD_RES_MR_GET, nl_res_list, 1 },
	{ RDMA_NLDEV_CMD_RES_PD_GET, nl_res_list, 1 },
};

static const struct nl_cmd *find_cmd(int cmd)
{
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (cmds[i].cmd == cmd)
			return &cmds[i];
	return NULL;
}

/* The kernel's system settings, as a kernel without RDMA would have them:
 * devices shared by every network namespace, and fork copies registered
 * memory as any other (uroce pins nothing: docs/memory.md). */
static void sys_info(struct nl_out *o)
{
	struct nlb b;

	nl_out_start(o, &b, RDMA_NLDEV_CMD_SYS_GET, 0);
	nlb_u8(&b, RDMA_NLDEV_SYS_ATTR_NETNS_MODE, 1);
	nlb_u8(&b, RDMA_NLDEV_SYS_ATTR_COPY_ON_FORK, 1);
	nl_out_add(o, &b);
}

/* The device a request names, or NULL; *NAMED says whether it names one. */
static const struct nl_dev *target(const struct nl_req *r, const struct nl_dev *devs, int n,
				   int *named)
{
	const char *name = nl_attr_str(r->tb[RDMA_NLDEV_ATTR_DEV_NAME]);
	uint32_t index;
	int by_index = !nl_attr_u32(r->tb[RDMA_NLDEV_ATTR_DEV_INDEX], &index);

	*named = by_index || name;
	for (int i = 0; i < n; i++)
		if (by_index ? devs[i].index == index : name && !strcmp(devs[i].name, name))
			return &devs[i];
	return NULL;
}

/* End an answer: a dump's NLMSG_DONE, or an error, or the ack asked for. */
static void finish(struct nl_out *o, const struct nl_req *r, int err)
{
	if (r->dump && !err)
		nl_out_done(o);
	else if (err || (r->h->nlmsg_flags & NLM_F_ACK))
		nl_out_error(o, r->h, err);
	else
		nl_out_flush(o);
}

/* Answer R into O; how it ends (0 or -errno). */
static int answer(struct nl_out *o, const struct nl_req *r, int kernel)
{
	struct nl_dev devs[NL_MAX_DEVS];
	const struct nl_cmd *c;
	const struct nl_dev *d;
	int n, named, err = 0;

	if (RDMA_NL_GET_CLIENT(r->h->nlmsg_type) != RDMA_NL_NLDEV)
		return kernel ? nl_kernel_ask(r->h, o) : -EOPNOTSUPP;
	n = nl_devs_load(devs, NL_MAX_DEVS);
	c = find_cmd(r->cmd);
	d = target(r, devs, n, &named);
	if (d) /* one of ours */
		return c ? c->fn(o, r, d) : -EOPNOTSUPP;
	if (!named && is_rdma_cm(r)) {
		if (kernel) {
			struct nl_out dropped;

			nl_out_init(&dropped, -1, r->h, o->pid);
			nl_kernel_ask(r->h, &dropped);
		}
		return rdma_cm_chardev(o);
	}
	if (kernel && (named || !c || !r->dump)) /* the kernel's alone */
		return nl_kernel_ask(r->h, o);
	if (named)
		return -ENODEV;
	if (r->cmd == RDMA_NLDEV_CMD_SYS_GET && !r->dump) {
		sys_info(o);
		return 0;
	}
	if (!c || !r->dump || !c->dumps)
		return r->cmd == RDMA_NLDEV_CMD_GET_CHARDEV ? -ENOENT : -EOPNOTSUPP;
	/* A dump of every device: the kernel's (whatever it says), then ours;
	 * entries past the budget are left out (docs/netlink.md). */
	if (kernel)
		nl_kernel_ask(r->h, o);
	for (int i = 0; i < n && !err; i++)
		err = c->fn(o, r, &devs[i]);
	return err == -ENOBUFS ? 0 : err;
}

void nl_answer(int fd, uint32_t pid, int kernel, const struct nlmsghdr *h)
{
	struct nl_out o;
	struct nl_req r;

	nl_out_init(&o, fd, h, pid);
	if (nl_req_parse(&r, h)) {
		nl_out_error(&o, h, -EINVAL);
		return;
	}
	o.multi = r.dump ? NLM_F_MULTI : 0;
	finish(&o, &r, answer(&o, &r, kernel));
}
