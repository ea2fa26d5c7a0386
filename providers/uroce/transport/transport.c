// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* The transports a device's `transport` attribute can name. */
#include <string.h>

#include "transport.h"

extern const struct uroce_xport_ops uroce_udp_ops;
extern const struct uroce_xport_ops uroce_xdp_ops;

static const struct uroce_xport_ops *const transports[] = {
	&uroce_udp_ops,
	&uroce_xdp_ops,   /* AF_XDP over the udp transport (docs/xdp.md) */
};

const struct uroce_xport_ops *uroce_xport_lookup(const char *name)
{
	for (size_t i = 0; i < sizeof(transports) / sizeof(transports[0]); i++)
		if (!strcmp(transports[i]->name, name))
			return transports[i];
	return NULL;
}
