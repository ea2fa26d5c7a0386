/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The device layer's door: the state the processes of a device share,
 * below the transport.  Callers outside device/ include this header only.
 *   registry.h  the devices of a network namespace, their records, nodes
 *               and the sysfs-like tree libibverbs reads (registry.c,
 *               tree.c)
 *   netdev.h    what uroce needs of the interface a device is bound to
 *               (netdev.c)
 *   qpn.h       the device-wide QPN table in shared memory (qpn.c)
 *   port_owner.h who holds a UDP port uroce needs (port_owner.c)
 *   stats.h     the counters' record files (stats.c); their shared-memory
 *               layout, which the uroce command reads too, is the binary
 *               interface <uroce/stats.h>
 *   res.h       the objects each process holds, for `rdma resource` (res.c)
 */
#ifndef UROCE_DEVICE_H
#define UROCE_DEVICE_H

#include "device/netdev.h"
#include "device/port_owner.h"
#include "device/qpn.h"
#include "device/registry.h"
#include "device/res.h"
#include "device/stats.h"

#endif
