/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * QP1, the general services interface, shared by every process on a
 * device: CM MADs in and out as UD SEND_ONLY packets to QP 1 with Q_Key
 * 0x80010000 (IBTA 13.4.6), and the host-wide tables that make a MAD
 * reach the process it belongs to:
 *   - the port table (per network namespace): which process has bound or
 *     listens on (port space, IP, port), as the kernel's cma_get_port;
 *   - the GSI member table (per netdev, next to the QPN table): which
 *     processes have a GSI on the device, and their forwarding port.  A
 *     local communication ID carries its owner's member slot.
 * A REQ/SIDR_REQ goes to the listener's process (by service ID + IP),
 * every other message to the owner of its remote comm ID.  A REQ nobody
 * listens for is answered REJ 8 (invalid service ID), a SIDR_REQ with
 * SIDR_REP "unsupported", as Linux does; a DREQ for a dead process's
 * connection with a DREP.
 *
 * Threads: the callback runs on the engine's progress thread (or an
 * application thread busy-polling the device), one message at a time per
 * device.  It may call uroce_gsi_send and the port/comm-ID calls, but not
 * uroce_gsi_put.
 */
#ifndef UROCE_CM_GSI_H
#define UROCE_CM_GSI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cm/cm.h"
#include "wire/wire.h"

struct uroce_gsi;   /* one per (process, device): the device's engine */

/* Where a MAD came from and arrived at (16-byte GIDs: IPv4-mapped or IPv6). */
struct uroce_gsi_peer {
	int family;                 /* AF_INET or AF_INET6 */
	uint8_t remote_gid[16];     /* the sender's IP: replies go there, port 4791 */
	uint8_t local_gid[16];      /* our IP it was sent to */
	uint16_t remote_port;       /* its UDP source port */
};

typedef void (*uroce_gsi_rx_fn)(void *arg, struct uroce_gsi *gsi,
				const struct uroce_gsi_peer *from, const struct cm_msg *m);

/*
 * The GSI of uroce device DEVNAME of this network namespace, starting its
 * engine if no ibv_context of the process has (librdmacm opens devices
 * lazily; a wildcard listener must hear REQs on every device).  FN(ARG)
 * receives every CM MAD routed to this process on the device (the last
 * registration wins; NULL keeps the current one).  Refcounted.  NULL with
 * errno (ENODEV: no such device).  (The engine's side of QP 1, its
 * upcalls, is in cm.h.)
 */
struct uroce_gsi *uroce_gsi_get(const char *devname, uroce_gsi_rx_fn fn, void *arg);
void uroce_gsi_put(struct uroce_gsi *gsi);
const char *uroce_gsi_devname(const struct uroce_gsi *gsi);
const char *uroce_gsi_netdev(const struct uroce_gsi *gsi);

/* Send M as a UD SEND_ONLY from QP 1 at LOCAL_GID (one of the device's
 * addresses; UDP source port CM_GSI_UDP_SPORT) to REMOTE_GID:4791, QP 1,
 * Q_Key 0x80010000, with the next PSN of this sender.  0 or -errno
 * (-EINVAL: M does not encode; -EADDRNOTAVAIL: LOCAL_GID not ours). */
int uroce_gsi_send(struct uroce_gsi *gsi, const struct cm_msg *m,
		   const uint8_t local_gid[16], const uint8_t remote_gid[16]);

/*
 * Local communication IDs (and SIDR request IDs) that route back to this
 * process on GSI's device: bits 31..22 are the process's member slot
 * (never 0), bits 21..0 a counter from a random start.  Never 0.  IDs are
 * not reserved individually: after 4M allocations the counter wraps, so the
 * caller skips an ID it still uses.  0 with errno if the device's member
 * table is full.
 */
uint32_t uroce_gsi_comm_id_alloc(struct uroce_gsi *gsi);
#define UROCE_GSI_COMM_ID_SLOT_SHIFT 22

/*
 * The port table, host-wide per network namespace (Linux: per netns and
 * port space, cma_get_port / cma_check_port).  IPs are 16 bytes:
 * IPv4-mapped or IPv6; all-zero or ::ffff:0.0.0.0 is the wildcard.
 * Entries of dead processes are reclaimed.  Functions return 0 or -errno.
 *
 * bind: *PORT 0 picks a free ephemeral port (returned).  Another binding
 *   of (PS, PORT) conflicts unless both have REUSEADDR: -EADDRNOTAVAIL if
 *   either side is the wildcard, -EADDRINUSE if the IPs are equal.
 * listen: the binding becomes a listener; -EADDRINUSE if another listener
 *   (or, without reuse, any binding) covers the same (PS, IP, PORT).
 * release: the binding is gone (close, destroy_id).
 * lookup_listener: the pid listening for (PS, PORT) at IP (exact, else
 *   wildcard), 0 if none.
 */
int uroce_gsi_port_bind(uint16_t ps, const uint8_t ip[16], uint16_t *port, bool reuseaddr,
			uint32_t *handle);
int uroce_gsi_port_listen(uint32_t handle);
int uroce_gsi_port_release(uint32_t handle);
int uroce_gsi_port_lookup_listener(uint16_t ps, const uint8_t ip[16], uint16_t port);

/*
 * Connections that must not outlive the process silently.  The kernel
 * sends a DREQ for every established connection when a process's rdma_cm
 * file is closed, also when it is killed (ucma_close).  A process cannot
 * do that after SIGKILL, so its established connections are published
 * here, with their DREQ built in advance, and a small reaper process
 * (forked at the first publish, holding nothing of the application) waits
 * for the process to end and sends those DREQs.  Publish when a
 * connection becomes ESTABLISHED; unpublish when it leaves that state or
 * is destroyed.  0 / -errno (-ENOSPC: more than 1024 at once; the
 * connection works, it is just not reaped).
 */
struct uroce_gsi_conn_info {
	uint32_t local_comm_id;
	uint32_t remote_comm_id;
	uint32_t remote_qpn;
	uint8_t local_gid[16];      /* the device's address of the connection */
	uint8_t remote_gid[16];
};
/* A forked child: the locks of QP 1, the port table and the reaper are
 * free again (some thread of the parent may have held one at the fork);
 * the child starts its own reaper at its first publish. */
void uroce_gsi_fork_child(void);
void uroce_gsi_reaper_fork_child(void);
void uroce_cm_ports_fork_child(void);

int uroce_gsi_conn_publish(struct uroce_gsi *gsi, const struct uroce_gsi_conn_info *c,
			   uint32_t *handle);
void uroce_gsi_conn_unpublish(struct uroce_gsi *gsi, uint32_t handle);

#endif
