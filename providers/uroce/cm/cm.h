/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The CM's door: what the rest of the provider and liburoce-preload.so
 * see of the rdma CM (docs/cm.md).  Callers outside cm/ include this
 * header only; conn.h, conn_int.h, gsi.h and ucma.h are the CM's own.
 *
 * - The bridge to liburoce-preload.so (which sees librdmacm's
 *   open/fstat/write/close on /dev/infiniband/rdma_cm) and the UCMA layer
 *   in the provider module.  The provider exports nothing: when it
 *   loads, it looks up uroce_preload_set_ucma() in the preloaded library
 *   and hands it the table below.  Without the provider (no uroce
 *   device), the path passes through to the real open (ENOENT on a
 *   machine without kernel RDMA).
 * - QP 1 as the engine sees it: the functions verbs/provider.c puts in
 *   the engine's table of upcalls (engine/upcalls.h).
 */
#ifndef UROCE_CM_H
#define UROCE_CM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/socket.h>

/* ---- liburoce-preload.so (preload/preload_cm.c) ------------------------- */

#define UROCE_RDMA_CM_PATH "/dev/infiniband/rdma_cm"
/* The misc device's numbers on Linux (10, dynamic minor); fstat reports them. */
#define UROCE_RDMA_CM_MAJOR 10
#define UROCE_RDMA_CM_MINOR 58

struct uroce_ucma_ops {
	/* A new rdma_cm file: a pollable fd (O_NONBLOCK/O_CLOEXEC from
	 * FLAGS), or -1 with errno. */
	int (*open)(int flags);
	/* One UCMA command (struct rdma_ucm_cmd_hdr + body) written to FD:
	 * LEN on success, -1 with errno as the kernel's ucma_write. */
	ssize_t (*write)(int fd, const void *buf, size_t len);
	/* The file is closed: tear its ids down (ucma_close).  The caller
	 * closes the fd itself afterwards. */
	void (*close)(int fd);
	/* NEWFD now refers to the same open file as OLDFD (dup, dup2, dup3,
	 * fcntl F_DUPFD): commands on either run on that file, which lives
	 * until its last fd is closed.  If NEWFD was an rdma_cm fd, the
	 * caller has called close(NEWFD) first.  0, or -1 with errno. */
	int (*dup)(int oldfd, int newfd);
	/* The mux beside the kernel's rdma_cm (docs/cm.md, "Beside the
	 * kernel's rdma CM").  mux: from now on ids we number ourselves are
	 * UROCE_UCMA_OWN_BASE and up, clear of the kernel's.  write_as: a
	 * CREATE_ID whose id is ID, the kernel's number for it.  detach: as
	 * close, and a GET_EVENT blocked on the file returns -1 with errno
	 * EREMCHG, to be written again to the fd, now the kernel's file.
	 * route: does an id bound to SRC (or, SRC the wildcard or NULL,
	 * resolving DST) belong to a uroce device: 1, or to the kernel: 0,
	 * or neither (AF_IB): -1. */
	void (*mux)(void);
	ssize_t (*write_as)(int fd, const void *buf, size_t len, uint32_t id);
	void (*detach)(int fd);
	int (*route)(const struct sockaddr *src, const struct sockaddr *dst);
};
#define UROCE_UCMA_OWN_BASE 0x40000000u

/* In liburoce-preload.so; the provider calls it from its constructor. */
typedef void (*uroce_preload_set_ucma_fn)(const struct uroce_ucma_ops *ops);

/* ---- QP 1, for the engine (gsi.c) ----------------------------------------- */

/* A device's engine opens and closes; a packet to QP 1 that passed the
 * wire checks; the forwarding port of the process of this device that
 * MAD (LEN bytes, to address DGID of this device) is for, ours if no
 * other process owns it. */
struct roce_pkt;
struct uroce_engine;
struct uroce_rx;
int uroce_gsi_attach(struct uroce_engine *eng);
void uroce_gsi_detach(struct uroce_engine *eng);
void uroce_gsi_rx(struct uroce_engine *eng, const struct uroce_rx *rx, const struct roce_pkt *pkt);
uint16_t uroce_gsi_local_port(struct uroce_engine *eng, const void *mad, size_t len,
			      const uint8_t dgid[16]);

#endif
