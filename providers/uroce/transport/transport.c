// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* The transports a device's `transport` attribute can name. */
#include <string.h>
#include <netinet/in.h>

#include "transport/transport.h"

extern const struct uroce_xport_ops uroce_udp_ops;
extern const struct uroce_xport_ops uroce_xdp_ops;
/* The in-process bus of the engine's unit tests (transport/loop/loop.h):
 * only programs linked with loop.c have it; in the provider it is NULL,
 * and hidden: resolved when linking, never by the dynamic loader. */
extern const struct uroce_xport_ops uroce_loop_ops __attribute__((weak, visibility("hidden")));

static const struct uroce_xport_ops *const transports[] = {
	&uroce_udp_ops,
#if UROCE_HAVE_XDP
	&uroce_xdp_ops,   /* AF_XDP over the udp transport (docs/xdp.md) */
#endif
	&uroce_loop_ops,  /* unit tests only (docs/testing.md) */
};

const struct uroce_xport_ops *uroce_xport_lookup(const char *name)
{
	for (size_t i = 0; i < sizeof(transports) / sizeof(transports[0]); i++)
		if (transports[i] && !strcmp(transports[i]->name, name))
			return transports[i];
	return NULL;
}

socklen_t uroce_xport_sockaddr(int family, const uint8_t *ip16, uint16_t port,
			     int ifindex, struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (family == AF_INET) {
		struct sockaddr_in *s = (struct sockaddr_in *)ss;

		s->sin_family = AF_INET;
		s->sin_port = htons(port);
		memcpy(&s->sin_addr, ip16 + 12, 4);
		return sizeof(*s);
	}
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;

	s6->sin6_family = AF_INET6;
	s6->sin6_port = htons(port);
	memcpy(&s6->sin6_addr, ip16, 16);
	if (IN6_IS_ADDR_LINKLOCAL(&s6->sin6_addr))
		s6->sin6_scope_id = ifindex;
	return sizeof(*s6);
}
