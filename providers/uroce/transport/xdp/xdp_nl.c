// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Next hop and its MAC for the xdp transport, from the kernel's routing
 * and neighbour tables through libnl-3.  The kernel stays the one that
 * speaks ARP and neighbour discovery: when an entry is missing we send it
 * a datagram toward the destination (the discard port), which makes it
 * resolve the next hop, and read the table again until the entry is
 * valid or the wait is over.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <linux/neighbour.h>
#include <linux/rtnetlink.h>
#include <netlink/netlink.h>
#include <netlink/addr.h>
#include <netlink/msg.h>
#include <netlink/route/neighbour.h>

#include "transport/xdp/xdp_frame.h"

#define CACHE 64
#define CACHE_NS 1000000000ull
#define DISCARD_PORT 9
#define VALID_NUD (NUD_REACHABLE | NUD_STALE | NUD_DELAY | NUD_PROBE | NUD_PERMANENT | NUD_NOARP)

struct nl_entry {
	int family;
	uint8_t dst[16];
	uint8_t mac[6];
	bool local;
	uint64_t until_ns;
};

struct uroce_xdp_nl {
	pthread_mutex_t lock;
	int ifindex;
	struct nl_sock *sk;          /* route requests */
	struct nl_sock *nsk;         /* neighbour table dumps */
	struct nl_cache *neigh;
	struct nl_entry cache[CACHE];
	unsigned int next;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static const uint8_t *ip_bytes(int family, const uint8_t *gid)
{
	return family == AF_INET ? gid + 12 : gid;
}

static int ip_len(int family)
{
	return family == AF_INET ? 4 : 16;
}

struct uroce_xdp_nl *uroce_xdp_nl_open(int ifindex)
{
	struct uroce_xdp_nl *nl = calloc(1, sizeof(*nl));

	if (!nl)
		return NULL;
	pthread_mutex_init(&nl->lock, NULL);
	nl->ifindex = ifindex;
	nl->sk = nl_socket_alloc();
	nl->nsk = nl_socket_alloc();
	if (!nl->sk || !nl->nsk || nl_connect(nl->sk, NETLINK_ROUTE) ||
	    nl_connect(nl->nsk, NETLINK_ROUTE) || rtnl_neigh_alloc_cache(nl->nsk, &nl->neigh)) {
		uroce_xdp_nl_close(nl);
		return NULL;
	}
	/* One answer per route request, no ACK after it left for the next. */
	nl_socket_disable_auto_ack(nl->sk);
	return nl;
}

void uroce_xdp_nl_close(struct uroce_xdp_nl *nl)
{
	if (!nl)
		return;
	if (nl->neigh)
		nl_cache_free(nl->neigh);
	if (nl->sk)
		nl_socket_free(nl->sk);
	if (nl->nsk)
		nl_socket_free(nl->nsk);
	pthread_mutex_destroy(&nl->lock);
	free(nl);
}

struct route {
	int found;
	uint8_t type;
	int oif;
	bool has_gw;
	uint8_t gw[16];
};

static int route_cb(struct nl_msg *msg, void *arg)
{
	struct route *r = arg;
	struct nlmsghdr *h = nlmsg_hdr(msg);
	struct rtmsg *rtm = nlmsg_data(h);
	struct nlattr *tb[RTA_MAX + 1];

	if (h->nlmsg_type != RTM_NEWROUTE || nlmsg_parse(h, sizeof(*rtm), tb, RTA_MAX, NULL))
		return NL_SKIP;
	r->found = 1;
	r->type = rtm->rtm_type;
	if (tb[RTA_OIF])
		r->oif = (int)nla_get_u32(tb[RTA_OIF]);
	if (tb[RTA_GATEWAY] && nla_len(tb[RTA_GATEWAY]) <= 16) {
		r->has_gw = true;
		memcpy(r->gw, nla_data(tb[RTA_GATEWAY]), nla_len(tb[RTA_GATEWAY]));
	}
	return NL_OK;
}

/* RTM_GETROUTE for one destination (as `ip route get`). */
static int route_get(struct uroce_xdp_nl *nl, int family, const uint8_t *dst, struct route *r)
{
	struct rtmsg rtm = { .rtm_family = family, .rtm_dst_len = ip_len(family) * 8 };
	struct nl_msg *m = nlmsg_alloc_simple(RTM_GETROUTE, NLM_F_REQUEST);
	int ret;

	if (!m)
		return -ENOMEM;
	memset(r, 0, sizeof(*r));
	if (nlmsg_append(m, &rtm, sizeof(rtm), NLMSG_ALIGNTO) ||
	    nla_put(m, RTA_DST, ip_len(family), ip_bytes(family, dst))) {
		nlmsg_free(m);
		return -ENOMEM;
	}
	ret = nl_send_auto(nl->sk, m);
	nlmsg_free(m);
	if (ret < 0)
		return -EIO;
	nl_socket_modify_cb(nl->sk, NL_CB_VALID, NL_CB_CUSTOM, route_cb, r);
	ret = nl_recvmsgs_default(nl->sk);
	if (ret < 0 || !r->found)
		return -EHOSTUNREACH;
	return 0;
}

/* The neighbour table's MAC for HOP (raw IPv4/IPv6 bytes); 0 or -ENOENT. */
static int neigh_get(struct uroce_xdp_nl *nl, int family, const uint8_t *hop, uint8_t mac[6])
{
	struct nl_addr *a = nl_addr_build(family, hop, ip_len(family));
	struct rtnl_neigh *n;
	int ret = -ENOENT;

	if (!a)
		return -ENOMEM;
	if (nl_cache_refill(nl->nsk, nl->neigh) < 0)
		return -EIO;
	n = rtnl_neigh_get(nl->neigh, nl->ifindex, a);
	nl_addr_put(a);
	if (!n)
		return ret;
	if ((rtnl_neigh_get_state(n) & VALID_NUD) && rtnl_neigh_get_lladdr(n) &&
	    nl_addr_get_len(rtnl_neigh_get_lladdr(n)) == 6) {
		memcpy(mac, nl_addr_get_binary_addr(rtnl_neigh_get_lladdr(n)), 6);
		ret = 0;
	}
	rtnl_neigh_put(n);
	return ret;
}

/* A datagram to DST's discard port: the kernel resolves the next hop. */
static void provoke(int family, const uint8_t *dst, int ifindex)
{
	struct sockaddr_storage ss = { .ss_family = family };
	socklen_t sl;
	int fd = socket(family, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return;
	if (family == AF_INET) {
		struct sockaddr_in *s = (struct sockaddr_in *)&ss;

		s->sin_port = htons(DISCARD_PORT);
		memcpy(&s->sin_addr, dst + 12, 4);
		sl = sizeof(*s);
	} else {
		struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;

		s6->sin6_port = htons(DISCARD_PORT);
		memcpy(&s6->sin6_addr, dst, 16);
		if (IN6_IS_ADDR_LINKLOCAL(&s6->sin6_addr))
			s6->sin6_scope_id = ifindex;
		sl = sizeof(*s6);
	}
	sendto(fd, "", 0, MSG_DONTWAIT, (struct sockaddr *)&ss, sl);
	close(fd);
}

static int lookup(struct uroce_xdp_nl *nl, int family, const uint8_t *dst, int wait_ms,
		  uint8_t mac[6], bool *local)
{
	const uint8_t *hop = ip_bytes(family, dst);
	uint64_t deadline = now_ns() + (uint64_t)wait_ms * 1000000ull;
	struct route r;
	int ret = route_get(nl, family, dst, &r);

	if (ret)
		return ret;
	*local = r.type == RTN_LOCAL;
	if (*local)
		return 0;
	if (r.type != RTN_UNICAST || (r.oif && r.oif != nl->ifindex))
		return -EHOSTUNREACH;
	if (r.has_gw)
		hop = r.gw;
	for (bool asked = false;; asked = true) {
		if (neigh_get(nl, family, hop, mac) == 0)
			return 0;
		if (now_ns() >= deadline)
			return -ETIMEDOUT;
		if (!asked)
			provoke(family, dst, nl->ifindex);
		usleep(2000);
	}
}

int uroce_xdp_nl_resolve(struct uroce_xdp_nl *nl, int family, const uint8_t *dst,
			 int wait_ms, uint8_t mac[6], bool *local)
{
	uint64_t now = now_ns();
	struct nl_entry *e;
	int ret;

	pthread_mutex_lock(&nl->lock);
	for (int i = 0; i < CACHE; i++) {
		e = &nl->cache[i];
		if (e->until_ns > now && e->family == family && !memcmp(e->dst, dst, 16)) {
			memcpy(mac, e->mac, 6);
			*local = e->local;
			pthread_mutex_unlock(&nl->lock);
			return 0;
		}
	}
	ret = lookup(nl, family, dst, wait_ms, mac, local);
	if (ret == 0) {
		e = &nl->cache[nl->next++ % CACHE];
		e->family = family;
		memcpy(e->dst, dst, 16);
		memcpy(e->mac, mac, 6);
		e->local = *local;
		e->until_ns = now_ns() + CACHE_NS;
	}
	pthread_mutex_unlock(&nl->lock);
	return ret;
}
