// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* Interface facts through libnl-3 (rtnetlink): link state, MTU, MAC, addresses. */
#include <errno.h>
#include <string.h>
#include <arpa/inet.h>
#include <netlink/netlink.h>
#include <netlink/route/link.h>
#include <netlink/route/addr.h>
#include <infiniband/verbs.h>

#include "netdev.h"

/* RoCEv2 per-packet overhead beyond the IB payload, worst case: IPv6 (40) +
 * UDP (8) + BTH (12) + the largest extension (AtomicETH 28) + ICRC (4). */
#define ROCEV2_MAX_OVERHEAD (40 + 8 + 12 + 28 + 4)

struct addr_walk {
	struct uroce_netdev *nd;
	int family;
};

static void add_address(struct nl_object *obj, void *arg)
{
	struct addr_walk *w = arg;
	struct rtnl_addr *a = (struct rtnl_addr *)obj;
	struct nl_addr *local = rtnl_addr_get_local(a);
	uint8_t *gid;

	if (rtnl_addr_get_ifindex(a) != w->nd->ifindex ||
	    rtnl_addr_get_family(a) != w->family || !local ||
	    w->nd->n_addrs >= UROCE_GID_TBL_LEN)
		return;
	gid = w->nd->addrs[w->nd->n_addrs];
	memset(gid, 0, 16);
	if (w->family == AF_INET && nl_addr_get_len(local) == 4) {
		gid[10] = gid[11] = 0xff;
		memcpy(gid + 12, nl_addr_get_binary_addr(local), 4);
	} else if (w->family == AF_INET6 && nl_addr_get_len(local) == 16) {
		memcpy(gid, nl_addr_get_binary_addr(local), 16);
	} else {
		return;
	}
	w->nd->n_addrs++;
}

int uroce_netdev_query(const char *name, struct uroce_netdev *nd)
{
	struct nl_sock *sk;
	struct rtnl_link *link = NULL;
	struct nl_cache *addrs = NULL;
	struct nl_addr *ll;
	unsigned int flags;
	int ret;

	memset(nd, 0, sizeof(*nd));
	if (!name || !*name || strlen(name) >= IF_NAMESIZE)
		return -ENODEV;
	sk = nl_socket_alloc();
	if (!sk)
		return -ENOMEM;
	if (nl_connect(sk, NETLINK_ROUTE)) {
		ret = -EIO;
		goto out;
	}
	ret = rtnl_link_get_kernel(sk, 0, name, &link);
	if (ret < 0) {
		ret = (ret == -NLE_OBJ_NOTFOUND || ret == -NLE_NODEV) ? -ENODEV : -EIO;
		goto out;
	}
	snprintf(nd->name, sizeof(nd->name), "%s", rtnl_link_get_name(link));
	nd->ifindex = rtnl_link_get_ifindex(link);
	nd->mtu = rtnl_link_get_mtu(link);
	flags = rtnl_link_get_flags(link);
	nd->admin_up = flags & IFF_UP;
	nd->carrier = flags & IFF_RUNNING;
	ll = rtnl_link_get_addr(link);
	if (ll && nl_addr_get_len(ll) == 6)
		memcpy(nd->mac, nl_addr_get_binary_addr(ll), 6);

	if (rtnl_addr_alloc_cache(sk, &addrs) < 0) {
		ret = -EIO;
		goto out;
	}
	/* IPv4 first, as the kernel lists them; then IPv6. */
	struct addr_walk w4 = { nd, AF_INET }, w6 = { nd, AF_INET6 };
	nl_cache_foreach(addrs, add_address, &w4);
	nl_cache_foreach(addrs, add_address, &w6);
	ret = 0;
out:
	if (addrs)
		nl_cache_free(addrs);
	if (link)
		rtnl_link_put(link);
	nl_socket_free(sk);
	return ret;
}

int uroce_netdev_ib_mtu(unsigned int netdev_mtu)
{
	static const struct { unsigned int bytes; int mtu; } ib_mtus[] = {
		{ 4096, IBV_MTU_4096 }, { 2048, IBV_MTU_2048 },
		{ 1024, IBV_MTU_1024 }, { 512, IBV_MTU_512 },
		{ 256, IBV_MTU_256 },
	};

	for (size_t i = 0; i < sizeof(ib_mtus) / sizeof(ib_mtus[0]); i++)
		if (netdev_mtu >= ib_mtus[i].bytes + ROCEV2_MAX_OVERHEAD)
			return ib_mtus[i].mtu;
	return IBV_MTU_256; /* below 352 bytes nothing fits; report the minimum */
}

uint64_t uroce_netdev_guid(const struct uroce_netdev *nd)
{
	const uint8_t *m = nd->mac;
	uint8_t g[8] = { m[0] ^ 0x02, m[1], m[2], 0xff, 0xfe, m[3], m[4], m[5] };
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		v = v << 8 | g[i];
	return v;
}
