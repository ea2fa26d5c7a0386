/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The objects each process holds on a device, for `rdma resource show`
 * (docs/netlink.md): what the kernel's resource tracker (restrack) keeps
 * for a kernel device, kept by uroce's verbs in shared memory.  Each
 * context a process opens publishes one table file in the device's record
 * directory, NSDIR/stats/DEV/res.PID (res.PID.N for a second one), mapped
 * shared: its verbs add, change and remove entries as they create, modify
 * and destroy PDs, CQs, QPs and MRs, and any process that may read the
 * directory reads them.  One writer per file (the context's process,
 * under its own lock); readers take each entry under its sequence count.
 * A table whose process died is skipped and removed by the reader who may.
 */
#ifndef UROCE_DEVICE_RES_H
#define UROCE_DEVICE_RES_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum uroce_res_kind {
	UROCE_RES_FREE,
	UROCE_RES_PD,
	UROCE_RES_CQ,
	UROCE_RES_QP,
	UROCE_RES_MR,
	UROCE_RES_KINDS,
};

/* One object.  Numbers are the kernel's where it has them: QP type and
 * state are enum ibv_qp_type / ibv_qp_state. */
struct uroce_res_entry {
	uint32_t seq;           /* odd while its writer changes it */
	uint8_t kind;           /* enum uroce_res_kind; FREE: an empty slot */
	uint8_t qp_type;
	uint8_t qp_state;
	uint8_t path_mig_state;
	uint32_t id;            /* PDN, CQN, QPN, MRN */
	uint32_t pdn;           /* the PD of a QP or MR (0: none) */
	uint32_t rqpn, sq_psn, rq_psn;  /* a QP's, as modify_qp last set them */
	uint32_t cqe;           /* a CQ's capacity */
	uint32_t lkey, rkey;    /* an MR's */
	uint64_t length;        /* an MR's */
	uint32_t scqn, rcqn;    /* a QP's CQs (0: none): a CQ's users */
	uint8_t port;           /* a QP's port (1) */
	uint8_t pad[7];
};

#define UROCE_RES_MAGIC 0x75726573u /* "ures" */
#define UROCE_RES_VERSION 1
#define UROCE_RES_SLOTS 4096        /* objects listed per context; the rest are counted only */
#define UROCE_RES_PREFIX "res."

struct uroce_res_shm {
	uint32_t magic;
	uint32_t version;
	int32_t pid;
	uint32_t nslots;
	uint64_t starttime;             /* of PID: tells a reused PID */
	uint32_t count[UROCE_RES_KINDS]; /* live objects of each kind, listed or not */
	uint32_t used;                  /* slots [0, used) have been used */
	struct uroce_res_entry slot[];
};

/* The writer's side: one context's table.  Open gives NULL where the
 * table cannot be published (the objects then go unlisted: the verbs work
 * the same).  Add takes E (its kind and fields; an id of 0 is given the
 * next of its kind) and returns its slot + 1, 0 if unlisted, and E->id;
 * set rewrites slot SLOT; del frees it.  A forked child's calls change
 * nothing: the table is its parent's. */
struct uroce_res;
struct uroce_res *uroce_res_open(const char *devname);
void uroce_res_close(struct uroce_res *r);
unsigned int uroce_res_add(struct uroce_res *r, struct uroce_res_entry *e);
void uroce_res_set(struct uroce_res *r, unsigned int slot, const struct uroce_res_entry *e);
void uroce_res_del(struct uroce_res *r, unsigned int slot, enum uroce_res_kind kind);

/* The readers' side: every live process's objects on device DEV of the
 * namespace directory NSDIR, into a malloc'd array (*OUT, *N; free it),
 * in table then slot order; COUNT gets the objects of each kind, listed
 * or not.  Tables of dead processes are removed where we may.  0 or
 * -errno (no record directory: 0 objects). */
struct uroce_res_obj {
	pid_t pid;
	unsigned int table;     /* which table: ids are unique within one */
	struct uroce_res_entry e;
};
int uroce_res_snapshot(const char *nsdir, const char *dev, struct uroce_res_obj **out,
		       size_t *n, uint64_t count[UROCE_RES_KINDS]);

#endif
