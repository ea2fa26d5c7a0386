// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Interface facts: link state, MTU, MAC, addresses.
 *
 * Read with libc's getifaddrs(3) (rtnetlink dumps inside glibc) and one
 * SIOCGIFMTU ioctl, not with libnl-route objects: those are freed through
 * per-family operations that libnl-route's destructors unregister when the
 * process exits, and a thread of ours still freeing a link object then
 * (the GSI thread answering a late CM MAD) trips libnl's BUG() in
 * do_foreach_af and aborts a program that had finished its work
 * (docs/design.md, "Interface facts").
 */
#include <errno.h>
#include <stdio.h>
#include <ifaddrs.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/if_packet.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <infiniband/verbs.h>

#include "device/netdev.h"

/* RoCEv2 per-packet overhead beyond the IB payload, worst case: IPv6 (40) +
 * UDP (8) + BTH (12) + the largest extension (AtomicETH 28) + ICRC (4). */
#define ROCEV2_MAX_OVERHEAD (40 + 8 + 12 + 28 + 4)

/* Append the address of IFA to ND's GIDs if it is of FAMILY. */
static void add_address(struct uroce_netdev *nd, const struct ifaddrs *ifa, int family)
{
	uint8_t *gid;

	if (!ifa->ifa_addr || ifa->ifa_addr->sa_family != family ||
	    nd->n_addrs >= UROCE_GID_TBL_LEN)
		return;
	gid = nd->addrs[nd->n_addrs++];
	memset(gid, 0, 16);
	if (family == AF_INET) {
		/* an IPv4 address as a GID: IPv4-mapped ::ffff:a.b.c.d (RFC 4291 2.5.5.2) */
		gid[10] = gid[11] = 0xff;
		memcpy(gid + 12, &((const struct sockaddr_in *)ifa->ifa_addr)->sin_addr, 4);
	} else {
		memcpy(gid, &((const struct sockaddr_in6 *)ifa->ifa_addr)->sin6_addr, 16);
	}
}

static int read_mtu(const char *name, unsigned int *mtu)
{
	struct ifreq ifr = { 0 };
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), ret = 0;

	if (fd < 0)
		return -errno;
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	if (ioctl(fd, SIOCGIFMTU, &ifr) < 0)
		ret = errno == ENODEV ? -ENODEV : -EIO;
	else
		*mtu = (unsigned int)ifr.ifr_mtu;
	close(fd);
	return ret;
}

int uroce_netdev_query(const char *name, struct uroce_netdev *nd)
{
	struct ifaddrs *all, *ifa;
	bool found = false;

	memset(nd, 0, sizeof(*nd));
	if (!name || !*name || strlen(name) >= IF_NAMESIZE)
		return -ENODEV;
	if (getifaddrs(&all) < 0)
		return -EIO;
	/* The link itself: its AF_PACKET entry (flags, index, MAC). */
	for (ifa = all; ifa; ifa = ifa->ifa_next) {
		const struct sockaddr_ll *ll = (const struct sockaddr_ll *)ifa->ifa_addr;

		if (strcmp(ifa->ifa_name, name) || !ll || ll->sll_family != AF_PACKET)
			continue;
		found = true;
		snprintf(nd->name, sizeof(nd->name), "%s", ifa->ifa_name);
		nd->ifindex = ll->sll_ifindex;
		nd->admin_up = ifa->ifa_flags & IFF_UP;
		nd->carrier = ifa->ifa_flags & IFF_RUNNING;
		if (ll->sll_halen == 6)
			memcpy(nd->mac, ll->sll_addr, 6);
		break;
	}
	/* IPv4 first, as the kernel lists them; then IPv6. */
	for (int f = 0; found && f < 2; f++)
		for (ifa = all; ifa; ifa = ifa->ifa_next)
			if (!strcmp(ifa->ifa_name, name))
				add_address(nd, ifa, f ? AF_INET6 : AF_INET);
	freeifaddrs(all);
	return found ? read_mtu(name, &nd->mtu) : -ENODEV;
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
