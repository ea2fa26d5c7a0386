/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The counter records' files: creating, attaching, folding and collecting
 * them (stats.c).  Their byte layout, which other uroce processes and
 * builds read too, is the binary interface in <uroce/stats.h>.
 */
#ifndef UROCE_DEVICE_STATS_H
#define UROCE_DEVICE_STATS_H

#include <stdbool.h>
#include <sys/types.h>

#include <uroce/stats.h>

/*
 * The records' files, shared by the provider and the uroce command
 * (stats.c).  Functions return 0 or -errno.
 */
/* The name of counter E ("tx_packets", ...). */
const char *uroce_stat_name(enum uroce_stat e);
/* The device's record directory: NSDIR/stats/DEV. */
int uroce_stats_dir(char *buf, size_t len, const char *nsdir, const char *dev);
/* Create it for the users of the device whose node has owner UID, group
 * GID and mode NODE_MODE: those who may write the node may add records
 * (sticky: none removes another's), those who may read it may read them
 * (docs/security.md); 0666 gives 01777, as /tmp. */
int uroce_stats_mkdir(const char *nsdir, const char *dev, uid_t uid, gid_t gid,
		      mode_t node_mode);
/* Sum the retired records and every process record of DIR into TOTAL,
 * consistently (under the directory's lock).  Records of dead processes
 * are folded into the retired record and removed where the caller may.
 * With EACH, it is called for every live process's record. */
int uroce_stats_collect(const char *dir, uint64_t total[UROCE_STAT_COUNT],
			void (*each)(const struct uroce_stats_shm *rec, void *arg),
			void *arg);
/* The provider's side: give device DEVNAME of this process its counters,
 * a record published for `uroce stat` (*SHARED) or else private memory;
 * 0 or -1.  Detach folds the record into the retired sums. */
int uroce_stats_attach(const char *devname, struct uroce_stats_shm **stats, bool *shared);
void uroce_stats_detach(const char *devname, struct uroce_stats_shm **stats, bool *shared);

#endif
