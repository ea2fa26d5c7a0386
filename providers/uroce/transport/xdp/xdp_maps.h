/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * What the XDP program (uroce_xdp.bpf.c) and the processes that fill its
 * maps (xdp_load.c) agree on: map sizes, key layouts, counters.
 */
#ifndef UROCE_XDP_MAPS_H
#define UROCE_XDP_MAPS_H

#define UROCE_XDP_ROCE_PORT 4791     /* IBTA A17.2 */
#define UROCE_XDP_MAX_QUEUES 64
#define UROCE_XDP_MAX_QPNS 65536     /* UROCE_MAX_QP */
#define UROCE_XDP_MAX_ADDRS 16       /* UROCE_GID_TBL_LEN */
#define UROCE_XDP_PROG_NAME "uroce_xdp"
/* uroce_qpns maps a QPN to the longest frame its owner's AF_XDP socket
 * takes (one 4 KiB UMEM frame less the kernel's 256 bytes of headroom;
 * with multi-buffer, two); longer frames go through the kernel and the udp
 * transport. */

/* An address in GID form: IPv4 as ::ffff:a.b.c.d. */
struct uroce_xdp_addr {
	unsigned char b[16];
};

enum uroce_xdp_stat {
	UROCE_XDP_REDIRECTED,     /* to the AF_XDP socket of its queue */
	UROCE_XDP_PASS_QP1,
	UROCE_XDP_PASS_UNOWNED,   /* no AF_XDP socket owns the QPN */
	UROCE_XDP_PASS_NOT_OURS,  /* not one of the device's addresses */
	UROCE_XDP_PASS_BIG,       /* longer than the owner's socket takes */
	UROCE_XDP_PASS_NO_SOCKET, /* its queue has no socket (the owner left, or a queue
				   * beyond those it opened) */
	UROCE_XDP_NSTATS
};

#endif
