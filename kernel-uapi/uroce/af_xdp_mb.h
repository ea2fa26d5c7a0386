/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * AF_XDP multi-buffer (Linux 6.6): a packet longer than one UMEM frame
 * spans several descriptors.  Debian 12's kernel headers (linux-libc-dev
 * 6.1) predate it; the values are the kernel's (include/uapi/linux/if_xdp.h).
 */
#ifndef UROCE_AF_XDP_MB_H
#define UROCE_AF_XDP_MB_H

#include <linux/if_xdp.h>

#ifndef XDP_USE_SG
#define XDP_USE_SG (1 << 4)      /* bind flag: the socket takes and sends multi-buffer packets */
#endif
#ifndef XDP_PKT_CONTD
#define XDP_PKT_CONTD (1 << 0)   /* xdp_desc.options: the packet goes on in the next descriptor */
#endif

#endif
