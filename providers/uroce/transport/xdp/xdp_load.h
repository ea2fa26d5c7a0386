/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The XDP program of an interface (uroce_xdp.bpf.c): set up once per
 * interface by the first user, found by the next ones, removed by the last
 * one to leave, or by `uroce link del` (docs/xdp.md, "Lifecycle").
 */
#ifndef UROCE_XDP_LOAD_H
#define UROCE_XDP_LOAD_H

#include <stddef.h>
#include <stdint.h>

#include "transport/xdp/xdp_maps.h"

struct uroce_xdp_prog {
	int ifindex;
	int lock_fd;          /* the interface's users' file, locked as a user */
	int link_fd;          /* the bpf_link running the program (-1: attached otherwise) */
	int mode;             /* enum xdp_attach_mode it runs in */
	uint32_t prog_id;
	int xsks_fd, qpns_fd, addrs_fd, stats_fd;
};

/*
 * Attach the program to IFNAME in namespace NSID (native mode where the
 * driver has it, else generic) or find the one attached, and open its maps.
 * 0, or -errno with a one-line reason in ERR (the missing capability or
 * kernel feature).
 */
int uroce_xdp_prog_get(const char *nsid, const char *ifname, struct uroce_xdp_prog *p,
		       char *err, size_t errlen);
/* Stop using it; the last user of the interface detaches the program. */
void uroce_xdp_prog_put(const char *nsid, const char *ifname, struct uroce_xdp_prog *p);
/* Detach uroce's program from IFNAME whoever uses it (`uroce link del`):
 * 1 removed, 0 none was there, -errno. */
int uroce_xdp_prog_remove(const char *ifname);
/*
 * Claim the interface's queue for this user's AF_XDP socket: 0, or -EBUSY
 * while a live user holds it.  Closing the program (uroce_xdp_prog_put)
 * or the process's death lets the claim go.
 */
int uroce_xdp_queue_claim(struct uroce_xdp_prog *p);
void uroce_xdp_queue_unclaim(struct uroce_xdp_prog *p);
/* The program's counter STAT summed over the CPUs. */
uint64_t uroce_xdp_prog_stat(const struct uroce_xdp_prog *p, enum uroce_xdp_stat stat);

#endif
