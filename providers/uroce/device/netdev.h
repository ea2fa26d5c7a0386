/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* What uroce needs to know of the network interface a device is bound to. */
#ifndef UROCE_NETDEV_H
#define UROCE_NETDEV_H

#include <net/if.h>
#include <stdbool.h>
#include <stdint.h>

/* RoCE v2 GIDs a port can hold (IBTA 17.8: one per IP address of the netdev). */
#define UROCE_GID_TBL_LEN 32

struct uroce_netdev {
	char name[IF_NAMESIZE];
	int ifindex;
	unsigned int mtu;
	bool admin_up;  /* IFF_UP */
	bool carrier;   /* IFF_RUNNING: lower layer up */
	uint8_t mac[6];
	int n_addrs;
	uint8_t addrs[UROCE_GID_TBL_LEN][16]; /* IPv4 mapped ::ffff:a.b.c.d, or IPv6 */
};

/*
 * Read interface NAME of the caller's network namespace (getifaddrs, SIOCGIFMTU).
 * Returns 0, -ENODEV if there is no such interface, or another -errno.
 */
int uroce_netdev_query(const char *name, struct uroce_netdev *nd);

/* The largest IBTA path MTU (256..4096, as enum ibv_mtu) that fits the netdev MTU. */
int uroce_netdev_ib_mtu(unsigned int netdev_mtu);

/* EUI-64 node GUID derived from the MAC (IBTA A17.3 / RFC 4291), host order. */
uint64_t uroce_netdev_guid(const struct uroce_netdev *nd);

#endif
