/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The one bridge between liburoce-preload.so (which sees librdmacm's
 * open/fstat/write/close on /dev/infiniband/rdma_cm) and the UCMA layer in
 * the provider module.  The provider exports nothing: when it loads, it
 * looks up uroce_preload_set_ucma() in the preloaded library and hands it
 * this table.  Without the provider (no uroce device), the path passes
 * through to the real open (ENOENT on a machine without kernel RDMA).
 */
#ifndef UROCE_CM_UCMA_OPS_H
#define UROCE_CM_UCMA_OPS_H

#include <sys/types.h>

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
};

/* In liburoce-preload.so; the provider calls it from its constructor. */
typedef void (*uroce_preload_set_ucma_fn)(const struct uroce_ucma_ops *ops);

#endif
