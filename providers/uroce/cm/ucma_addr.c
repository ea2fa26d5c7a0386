// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Addresses to uroce devices, for BIND_IP, RESOLVE_IP and QUERY_ROUTE: an
 * IP belongs to the device whose netdev holds it (the registry of this
 * network namespace), and its GID index is the one libibverbs reads from
 * the device's tree.  A route toward a peer is the kernel's own choice of
 * source address (a connected UDP socket), so routes through another
 * interface of the namespace work as for the kernel's rdma_resolve_ip.
 */
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "device/device.h"
#include "knob/knob.h"
#include "cm/ucma.h"

static const uint8_t v4_mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

/* The kernel's cma_zero_addr: the wildcard only. */
bool ucma_addr_zero(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return ((const struct sockaddr_in *)sa)->sin_addr.s_addr == htonl(INADDR_ANY);
	if (sa->sa_family == AF_INET6)
		return IN6_IS_ADDR_UNSPECIFIED(&((const struct sockaddr_in6 *)sa)->sin6_addr);
	return true;
}

/* The kernel's cma_any_addr: the wildcard, and loopback too (cma_zero_addr
 * || cma_loopback_addr): an id bound to 127.0.0.1 takes no device and
 * listens on all of them. */
bool ucma_addr_any(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return ucma_addr_zero(sa) ||
		       (ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr) >> 24) == 127;
	if (sa->sa_family == AF_INET6)
		return ucma_addr_zero(sa) ||
		       IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *)sa)->sin6_addr);
	return true;
}

/* A multicast address (the kernel's rdma_is_multicast_addr, for IP). */
bool ucma_addr_multicast(const struct sockaddr *sa)
{
	if (sa->sa_family == AF_INET)
		return IN_MULTICAST(ntohl(((const struct sockaddr_in *)sa)->sin_addr.s_addr));
	if (sa->sa_family == AF_INET6)
		return IN6_IS_ADDR_MULTICAST(&((const struct sockaddr_in6 *)sa)->sin6_addr);
	return false;
}

uint16_t ucma_addr_port(const struct sockaddr *sa)
{
	/* sin_port and sin6_port sit at the same offset */
	return ntohs(((const struct sockaddr_in *)sa)->sin_port);
}

void ucma_addr_set_port(struct sockaddr *sa, uint16_t port)
{
	((struct sockaddr_in *)sa)->sin_port = htons(port);
}

socklen_t ucma_addr_len(const struct sockaddr *sa)
{
	return sa->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) :
	       sa->sa_family == AF_INET ? sizeof(struct sockaddr_in) : 0;
}

void ucma_addr_to_gid(const struct sockaddr *sa, uint8_t gid[16])
{
	memset(gid, 0, 16);
	if (sa->sa_family == AF_INET) {
		memcpy(gid, v4_mapped, 12);
		memcpy(gid + 12, &((const struct sockaddr_in *)sa)->sin_addr, 4);
	} else if (sa->sa_family == AF_INET6) {
		memcpy(gid, &((const struct sockaddr_in6 *)sa)->sin6_addr, 16);
	}
}

void ucma_gid_to_addr(const uint8_t gid[16], uint16_t port, struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (!memcmp(gid, v4_mapped, 12)) {
		struct sockaddr_in *sin = (struct sockaddr_in *)ss;

		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
		memcpy(&sin->sin_addr, gid + 12, 4);
	} else {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(port);
		memcpy(&sin6->sin6_addr, gid, 16);
	}
}

/* The tree libibverbs reads: $SYSFS_PATH, or our namespace's own. */
static void tree_root(const char *nsdir, char *buf, size_t len)
{
	const char *env = uroce_knob_str(UROCE_KNOB_SYSFS_PATH);

	if (env)
		snprintf(buf, len, "%s", env);
	else
		snprintf(buf, len, "%s/sys", nsdir);
}

/* Index of GID in DEV's table as the tree shows it; -1 if absent. */
static int gid_index(const char *root, const char *dev, const uint8_t gid[16])
{
	char path[PATH_MAX + 128], text[64];

	for (int i = 0; i < UROCE_GID_TBL_LEN; i++) {
		uint8_t g[16];
		unsigned int v;
		int j;

		snprintf(path, sizeof(path), "%s/class/infiniband/%s/ports/1/gids/%d", root, dev, i);
		if (uroce_read_file(path, text, sizeof(text)) < 39)
			continue;
		for (j = 0; j < 8; j++) {
			if (sscanf(text + 5 * j, "%4x", &v) != 1)
				break;
			g[2 * j] = v >> 8;
			g[2 * j + 1] = v & 0xff;
		}
		if (j == 8 && !memcmp(g, gid, 16))
			return i;
	}
	return -1;
}

static void fill_dev(struct ucma_dev *dev, const struct uroce_dev_rec *rec,
		     const struct uroce_netdev *nd)
{
	memset(dev, 0, sizeof(*dev));
	snprintf(dev->name, sizeof(dev->name), "%s", rec->name);
	snprintf(dev->netdev, sizeof(dev->netdev), "%s", rec->netdev);
	dev->node_guid_be = htobe64(uroce_netdev_guid(nd));
	dev->ib_mtu = uroce_netdev_ib_mtu(nd->mtu);
	dev->default_tos = rec->default_roce_tos;
	dev->gid_index = -1;
}

/*
 * Walk this namespace's devices; for each, CB(DEV, ND, ARG) decides (1 =
 * stop).  Returns what the last call returned, or -ENODEV for none.
 */
static int for_each_dev(int (*cb)(struct ucma_dev *, const struct uroce_netdev *, const char *, void *),
			void *arg)
{
	char nsdir[PATH_MAX], root[PATH_MAX + 8];
	struct uroce_dev_rec *recs = NULL;
	int n = 0, ret = -ENODEV;

	if (uroce_ns_dir(nsdir, sizeof(nsdir)) || uroce_reg_load_all(nsdir, &recs, &n))
		return -ENODEV;
	tree_root(nsdir, root, sizeof(root));
	for (int i = 0; i < n; i++) {
		struct uroce_netdev nd;
		struct ucma_dev dev;

		if (uroce_netdev_query(recs[i].netdev, &nd))
			continue;
		fill_dev(&dev, &recs[i], &nd);
		ret = cb(&dev, &nd, root, arg);
		if (ret == 1)
			break;
	}
	free(recs);
	return ret;
}

struct by_addr {
	uint8_t gid[16];
	struct ucma_dev *out;
};

static int match_addr(struct ucma_dev *dev, const struct uroce_netdev *nd, const char *root,
		      void *arg)
{
	struct by_addr *b = arg;

	for (int a = 0; a < nd->n_addrs; a++) {
		if (memcmp(nd->addrs[a], b->gid, 16))
			continue;
		memcpy(dev->gid, b->gid, 16);
		dev->gid_index = gid_index(root, dev->name, b->gid);
		if (dev->gid_index < 0)
			continue; /* the tree has not caught up with the address */
		*b->out = *dev;
		return 1;
	}
	return -ENODEV;
}

int ucma_dev_by_addr(const struct sockaddr *sa, struct ucma_dev *dev)
{
	struct by_addr b = { .out = dev };

	if (sa->sa_family != AF_INET && sa->sa_family != AF_INET6)
		return -EAFNOSUPPORT;
	ucma_addr_to_gid(sa, b.gid);
	return for_each_dev(match_addr, &b) == 1 ? 0 : -ENODEV;
}

struct all_devs {
	struct ucma_dev *devs;
	int max, n;
};

static int add_dev(struct ucma_dev *dev, const struct uroce_netdev *nd, const char *root, void *arg)
{
	struct all_devs *a = arg;

	if (a->n < a->max)
		a->devs[a->n++] = *dev;
	return 0;
}

int ucma_dev_all(struct ucma_dev *devs, int max)
{
	struct all_devs a = { .devs = devs, .max = max };

	for_each_dev(add_dev, &a);
	return a.n;
}

int ucma_route_src(const struct sockaddr *dst, const struct sockaddr *from,
		   struct sockaddr_storage *src)
{
	socklen_t len = sizeof(*src);
	int fd = socket(dst->sa_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	struct sockaddr_storage b;
	int ret = 0;

	if (fd < 0)
		return -errno;
	if (from) {
		memcpy(&b, from, ucma_addr_len(from));
		ucma_addr_set_port((struct sockaddr *)&b, 0);
		if (bind(fd, (struct sockaddr *)&b, ucma_addr_len(from)))
			ret = -errno;
	}
	/* connect() on a UDP socket runs the route lookup and fixes the
	 * source address, without sending anything. */
	if (!ret && (connect(fd, dst, ucma_addr_len(dst)) ||
		     getsockname(fd, (struct sockaddr *)src, &len)))
		ret = -errno;
	close(fd);
	if (!ret)
		ucma_addr_set_port((struct sockaddr *)src, 0);
	return ret;
}

int ucma_dev_by_addr_gid(const uint8_t gid[16], struct ucma_dev *dev)
{
	struct sockaddr_storage ss;

	ucma_gid_to_addr(gid, 0, &ss);
	return ucma_dev_by_addr((struct sockaddr *)&ss, dev);
}

/* The mux: whose is an id bound to SRC, or resolving DST (from SRC)?  A
 * specific source is uroce's if a uroce device holds it; a destination
 * is uroce's if the source the kernel's routing picks toward it is; an
 * id bound to the wildcard with nothing to resolve is uroce's wherever
 * uroce has a device.  AF_IB is neither's to say. */
int ucma_route(const struct sockaddr *src, const struct sockaddr *dst)
{
	struct sockaddr_storage ss;
	struct ucma_dev dev;
	bool given = src && src->sa_family != AF_UNSPEC;

	if ((given && src->sa_family != AF_INET && src->sa_family != AF_INET6) ||
	    (dst && dst->sa_family != AF_INET && dst->sa_family != AF_INET6))
		return -1;
	if (given && !ucma_addr_zero(src))
		return ucma_dev_by_addr(src, &dev) == 0;
	if (dst)
		return !ucma_route_src(dst, NULL, &ss) &&
		       ucma_dev_by_addr((const struct sockaddr *)&ss, &dev) == 0;
	return ucma_dev_all(&dev, 1) > 0;
}
