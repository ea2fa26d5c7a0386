/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The device registry: which uroce devices exist in a network namespace,
 * and the sysfs-like tree libibverbs reads to find them.
 *
 *   $UROCE_RUNDIR (default /run/uroce)/ns-<netns cookie>/
 *       devices/<NAME>       one record per device (key=value lines)
 *       sys/                 the tree SYSFS_PATH points at (see tree.c)
 *   /dev/infiniband/uverbsN  the character node libibverbs opens
 *
 * Devices belong to the network namespace they were created in, as the
 * netdev does; the namespace is named by its netns cookie, which the
 * kernel never reuses.
 */
#ifndef UROCE_REGISTRY_H
#define UROCE_REGISTRY_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <net/if.h>

#include "device/netdev.h"

#define UROCE_NAME_MAX 64
#define UROCE_CDEV_DIR "/dev/infiniband"
/* The node libibverbs opens is a stand-in: the null device's numbers.  The
 * provider replaces the fd at open (see provider.c), nothing is sent to it. */
#define UROCE_CDEV_MAJOR 1
#define UROCE_CDEV_MINOR 3
/* uroce's nodes are uverbs1024 and up: the kernel's ib_uverbs names its
 * uverbs0..uverbs1023 (IB_UVERBS_MAX_DEVICES), so the two never meet. */
#define UROCE_CDEV_FIRST 1024
#define UROCE_CDEV_LAST 2047

enum uroce_transport {
	UROCE_TRANSPORT_UDP,
	UROCE_TRANSPORT_XDP,
};

struct uroce_dev_rec {
	char name[UROCE_NAME_MAX];
	char netdev[IF_NAMESIZE];
	enum uroce_transport transport;
	int uverbs;          /* N of /dev/infiniband/uverbsN */
	/* The IP TOS (DSCP and ECN) the in-process RDMA CM gives a connection
	 * whose program set none (rdma_set_option RDMA_OPTION_ID_TOS): the
	 * kernel's configfs default_roce_tos of a port.  0 by default. */
	uint8_t default_roce_tos;
};

const char *uroce_transport_name(enum uroce_transport t);
int uroce_transport_parse(const char *s, enum uroce_transport *t);

/* True if NAME is a usable device name (as for the kernel: [A-Za-z0-9_.-], <64). */
int uroce_name_valid(const char *name);

/* $UROCE_RUNDIR/ns-<cookie> of the caller's network namespace. */
int uroce_ns_dir(char *buf, size_t len);

int uroce_reg_load_all(const char *nsdir, struct uroce_dev_rec **recs, int *n);
int uroce_reg_find(const char *nsdir, const char *name, struct uroce_dev_rec *rec);
int uroce_reg_save(const char *nsdir, const struct uroce_dev_rec *rec);
int uroce_reg_remove(const char *nsdir, const char *name);

/* The shared QPN table of user UID's processes using the devices on NETDEV
 * in namespace NSID (qpn.c); removing every user's. */
void uroce_qpn_file(char *buf, size_t len, const char *nsid, const char *netdev, uid_t uid);
void uroce_qpn_files_remove(const char *nsid, const char *netdev);
/* QP1's member table of NETDEV and the namespace's rdma_cm port table (cm/),
 * per user as the QPN table; removing every user's port tables. */
void uroce_gsi_members_file(char *buf, size_t len, const char *nsid, const char *netdev, uid_t uid);
void uroce_cm_ports_file(char *buf, size_t len, const char *nsid, uid_t uid);
void uroce_cm_ports_files_remove(const char *nsid);

#define UROCE_CDEV_TARGET "/dev/null"

/* What /dev/infiniband/uverbsN is: a device node, or (where mknod is not
 * permitted, e.g. a user namespace) a symbolic link to UROCE_CDEV_TARGET. */
enum uroce_cdev_kind {
	UROCE_CDEV_NODE,
	UROCE_CDEV_SYMLINK,
};

/* Create the lowest free /dev/infiniband/uverbsN (N >= UROCE_CDEV_FIRST) with owner UID, group GID
 * and MODE (who may use the device, as for a real uverbs node: see
 * docs/security.md); where mknod is refused, a symbolic link (*KIND says
 * which it made).  Returns N or -errno. */
int uroce_cdev_create(uid_t uid, gid_t gid, mode_t mode, enum uroce_cdev_kind *kind);
int uroce_cdev_remove(int n);

/*
 * The sysfs-like tree (tree.c).  uroce_tree_sync() makes the tree under
 * SYSROOT describe exactly RECS (stale devices removed), reading each
 * netdev afresh; uroce_tree_refresh_port() rewrites one device's port
 * (GIDs, state, MTU) keeping GIDs that still exist at their index.
 */
int uroce_tree_sync(const char *sysroot, const struct uroce_dev_rec *recs, int n);
int uroce_tree_refresh_port(const char *ibdev_path, const struct uroce_netdev *nd);

/* mkdir -p with MODE; 0 or -errno. */
int uroce_mkdirs(const char *path, mode_t mode);
/* rm -rf; 0 or -errno. */
int uroce_rmtree(const char *path);
/* Write TEXT to PATH atomically (temp file + rename); 0 or -errno. */
int uroce_write_file(const char *path, const char *text);
/* Read up to LEN-1 bytes of PATH, strip a trailing newline; length or -errno. */
int uroce_read_file(const char *path, char *buf, size_t len);

/* Start time of PID in clock ticks since boot (field 22 of /proc/PID/stat),
 * which tells a PID's reuse apart; 0 if unreadable. */
uint64_t uroce_proc_starttime(pid_t pid);
/* Is the process PID that started at STARTTIME still running (not gone,
 * its number not reused)? */
bool uroce_proc_alive(pid_t pid, uint64_t starttime);

#endif
