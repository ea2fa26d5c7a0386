// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Watches what a port's state is made of: the netdev's link state and
 * addresses (rtnetlink notifications through libnl-3) and the device's
 * registry record (inotify).  Changes become asynchronous events:
 * PORT_ACTIVE / PORT_ERR, GID_CHANGE (after the GID files are refreshed),
 * DEVICE_FATAL when the device is deleted under a running program.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <netlink/netlink.h>
#include <netlink/route/link.h>
#include <linux/rtnetlink.h>

#include "engine/engine.h"
#include "verbs/verbs.h"

struct uroce_monitor {
	struct uroce_context *ctx;
	pthread_t thread;
	int stop_fd;
	int ino_fd;
	struct nl_sock *sk;
	char record[UROCE_NAME_MAX];
	struct uroce_netdev last;
	bool last_ok;
	bool dead;
};

static int note_change(struct nl_msg *msg, void *arg)
{
	*(bool *)arg = true;
	return NL_OK;
}

static bool port_up(const struct uroce_netdev *nd, bool ok)
{
	return ok && nd->admin_up && nd->carrier;
}

static void check_netdev(struct uroce_monitor *m)
{
	struct uroce_context *ctx = m->ctx;
	struct ibv_device *ibdev = ctx->vctx.context.device;
	struct uroce_netdev nd;
	bool ok = uroce_netdev_query(to_udev(ibdev)->netdev, &nd) == 0;

	if (port_up(&nd, ok) != port_up(&m->last, m->last_ok))
		uroce_async_event(ctx, port_up(&nd, ok) ? IBV_EVENT_PORT_ACTIVE : IBV_EVENT_PORT_ERR, 1);
	if (ok && (!m->last_ok || nd.n_addrs != m->last.n_addrs ||
		   memcmp(nd.addrs, m->last.addrs, sizeof(nd.addrs[0]) * nd.n_addrs))) {
		if (access(ibdev->ibdev_path, W_OK) == 0)
			uroce_tree_refresh_port(ibdev->ibdev_path, &nd);
		if (m->last_ok)
			uroce_async_event(ctx, IBV_EVENT_GID_CHANGE, 1);
	}
	m->last = nd;
	m->last_ok = ok;
}

static void check_record(struct uroce_monitor *m)
{
	char buf[4096] __attribute__((aligned(8)));
	ssize_t n = read(m->ino_fd, buf, sizeof(buf));

	for (ssize_t off = 0; n > 0 && off < n;) {
		struct inotify_event *ev = (struct inotify_event *)(buf + off);

		if ((ev->mask & (IN_DELETE | IN_MOVED_FROM)) && ev->len &&
		    !strcmp(ev->name, m->record) && !m->dead) {
			m->dead = true;
			uroce_async_event(m->ctx, IBV_EVENT_DEVICE_FATAL, 0);
		}
		off += sizeof(*ev) + ev->len;
	}
}

static void *monitor_thread(void *arg)
{
	struct uroce_monitor *m = arg;
	bool changed = false;

	nl_socket_modify_cb(m->sk, NL_CB_VALID, NL_CB_CUSTOM, note_change, &changed);
	for (;;) {
		struct pollfd p[3] = {
			{ m->stop_fd, POLLIN, 0 },
			{ nl_socket_get_fd(m->sk), POLLIN, 0 },
			{ m->ino_fd, POLLIN, 0 },
		};

		if (poll(p, m->ino_fd >= 0 ? 3 : 2, -1) < 0 && errno != EINTR)
			break;
		if (p[0].revents)
			break;
		if (p[1].revents) {
			changed = false;
			nl_recvmsgs_default(m->sk);
			if (changed)
				check_netdev(m);
		}
		if (m->ino_fd >= 0 && p[2].revents)
			check_record(m);
	}
	return NULL;
}

int uroce_monitor_start(struct uroce_context *ctx)
{
	struct uroce_monitor *m = calloc(1, sizeof(*m));
	char nsdir[PATH_MAX], devdir[PATH_MAX + 16];

	if (!m)
		return ENOMEM;
	m->ctx = ctx;
	m->ino_fd = -1;
	m->stop_fd = eventfd(0, EFD_CLOEXEC);
	m->sk = nl_socket_alloc();
	if (m->stop_fd < 0 || !m->sk)
		goto fail;
	nl_socket_disable_seq_check(m->sk);
	if (nl_connect(m->sk, NETLINK_ROUTE) ||
	    nl_socket_add_memberships(m->sk, RTNLGRP_LINK, RTNLGRP_IPV4_IFADDR,
				      RTNLGRP_IPV6_IFADDR, 0))
		goto fail;
	nl_socket_set_nonblocking(m->sk);
	snprintf(m->record, sizeof(m->record), "%s", ctx->vctx.context.device->name);
	if (uroce_ns_dir(nsdir, sizeof(nsdir)) == 0) {
		snprintf(devdir, sizeof(devdir), "%s/devices", nsdir);
		m->ino_fd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
		if (m->ino_fd >= 0 && inotify_add_watch(m->ino_fd, devdir, IN_DELETE | IN_MOVED_FROM) < 0) {
			close(m->ino_fd);
			m->ino_fd = -1;
		}
	}
	m->last_ok = uroce_netdev_query(to_udev(ctx->vctx.context.device)->netdev, &m->last) == 0;
	if (pthread_create(&m->thread, NULL, monitor_thread, m))
		goto fail;
	ctx->monitor = m;
	return 0;
fail:
	if (m->sk)
		nl_socket_free(m->sk);
	if (m->stop_fd >= 0)
		close(m->stop_fd);
	if (m->ino_fd >= 0)
		close(m->ino_fd);
	free(m);
	return EIO;
}

void uroce_monitor_stop(struct uroce_context *ctx)
{
	struct uroce_monitor *m = ctx->monitor;
	uint64_t one = 1;

	if (!m)
		return;
	if (write(m->stop_fd, &one, sizeof(one)) < 0)
		(void)0;
	pthread_join(m->thread, NULL);
	nl_socket_free(m->sk);
	close(m->stop_fd);
	if (m->ino_fd >= 0)
		close(m->ino_fd);
	free(m);
	ctx->monitor = NULL;
}
