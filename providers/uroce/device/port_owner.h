/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Who holds a UDP port on an address of this network namespace: the
 * one-line reason uroce gives when RoCEv2's port 4791 is not its to bind
 * (the kernel's rdma_rxe holds *:4791 from the moment it is loaded).
 */
#ifndef UROCE_PORT_OWNER_H
#define UROCE_PORT_OWNER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum uroce_port_owner_kind {
	UROCE_OWNER_KERNEL,   /* a socket no process has open: rdma_rxe, vxlan */
	UROCE_OWNER_PROCESS,  /* a process this caller can see */
	UROCE_OWNER_UID,      /* a socket of a process this caller cannot see */
};

struct uroce_port_owner {
	enum uroce_port_owner_kind kind;
	long uid;
	pid_t pid;              /* UROCE_OWNER_PROCESS */
	char comm[32];          /* UROCE_OWNER_PROCESS: its /proc/PID/comm */
	bool uroce;             /* the process runs uroce's provider */
	bool wildcard;          /* bound to *:PORT, not to the address asked about */
};

/* Pass over uroce's processes of every uid, not only the caller's. */
#define UROCE_OWNER_SKIP_ALL_UROCE 1

/*
 * Look for a socket bound to UDP PORT on IP16 (IPv4-mapped or IPv6), or on
 * its family's wildcard, in /proc/net/udp[6].  The sockets of processes of
 * the caller's euid that run uroce's provider (a device's users, who
 * share the port with SO_REUSEPORT) are passed over, and with FLAGS
 * UROCE_OWNER_SKIP_ALL_UROCE those of any uid.
 * Returns 1 with *O filled, 0 if there is none, -errno if the tables
 * cannot be read.
 */
int uroce_port_owner(int family, const uint8_t *ip16, uint16_t port, int flags,
		     struct uroce_port_owner *o);

/* Say on stderr, in one line, that device DEV's address IP16 cannot have
 * PORT because *O holds it, e.g. "uroce: rxu0: 10.77.0.2 port 4791 is held
 * by the kernel (rdma_rxe) on all addresses; ..." */
void uroce_port_owner_say(const char *dev, const uint8_t *ip16, uint16_t port,
			  const struct uroce_port_owner *o);

#endif
