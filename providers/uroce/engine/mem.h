/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Access to registered memory with the checks an RNIC makes on every
 * access (IBTA 10.6.3): the key names an MR of the QP's PD, the MR grants
 * the access, the range lies inside it.  Callers hold the MR table's read
 * lock (uroce_mem_lock) for as long as they use the pointers, so that
 * dereg_mr waits until the access is over.
 */
#ifndef UROCE_MEM_H
#define UROCE_MEM_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

#include "engine/engine.h"

void uroce_mem_lock(struct uroce_qp *qp);
void uroce_mem_unlock(struct uroce_qp *qp);

/* Pointer to LEN bytes at VA under RKEY with ACCESS (IBV_ACCESS_REMOTE_*);
 * NULL if any check fails. */
uint8_t *uroce_mem_remote(struct uroce_qp *qp, uint32_t rkey, uint64_t va,
			  uint64_t len, int access);

/* The bytes [OFF, OFF+LEN) of a local SGE list as iovecs (at most MAX);
 * WRITE asks for IBV_ACCESS_LOCAL_WRITE.  Returns the iovec count, or
 * -EACCES for a bad lkey/range (local protection error), -E2BIG when the
 * list is shorter than OFF+LEN. */
int uroce_mem_local(struct uroce_qp *qp, const struct uroce_sge *sge, uint32_t nsge,
		    uint64_t off, uint64_t len, int write, struct iovec *iov, int max);

/* Copy LEN bytes of DATA into a local SGE list at OFF; 0, -EACCES, -E2BIG. */
int uroce_mem_scatter(struct uroce_qp *qp, const struct uroce_sge *sge, uint32_t nsge,
		      uint64_t off, const void *data, uint64_t len);

#endif
