// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * `rdma statistic show` for uroce's devices: RDMA_NLDEV_CMD_STAT_GET of
 * a port answers with the device's counters, summed over the processes
 * that used it as `uroce stat` sums them (device/stats.c, docs/stats.md),
 * as the kernel's hw counters (drivers/infiniband/core/nldev.c,
 * stat_get_doit_default_counter): one STAT_HWCOUNTER_ENTRY of name and
 * value each.  uroce binds no counters to QPs, so a dump (`rdma statistic
 * qp show`) lists none.
 */
#include <errno.h>
#include <limits.h>
#include <sys/types.h>
#include <uroce/stats.h>

#include "device/device.h"
#include "preload/nl.h"

int nl_stat_port(struct nl_out *o, const struct nl_req *r, const struct nl_dev *d)
{
	uint64_t total[UROCE_STAT_COUNT] = { 0 };
	char nsdir[PATH_MAX], dir[PATH_MAX];
	uint32_t port = 0;
	struct nlb b;
	size_t table;
	int ret;

	if (r->dump)
		return 0;
	if (nl_attr_u32(r->tb[RDMA_NLDEV_ATTR_PORT_INDEX], &port) || port != 1)
		return -EINVAL;
	if ((ret = uroce_ns_dir(nsdir, sizeof(nsdir))) ||
	    (ret = uroce_stats_dir(dir, sizeof(dir), nsdir, d->name)) ||
	    (ret = uroce_stats_collect(dir, total, NULL, NULL)))
		return ret;
	nl_out_start(o, &b, RDMA_NLDEV_CMD_STAT_GET, 0);
	nlb_u32(&b, RDMA_NLDEV_ATTR_DEV_INDEX, d->index);
	nlb_str(&b, RDMA_NLDEV_ATTR_DEV_NAME, d->name);
	nlb_u32(&b, RDMA_NLDEV_ATTR_PORT_INDEX, 1);
	table = nlb_nest(&b, RDMA_NLDEV_ATTR_STAT_HWCOUNTERS);
	for (int e = 0; e < UROCE_STAT_COUNT; e++) {
		size_t entry = nlb_nest(&b, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY);

		nlb_str(&b, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME, uroce_stat_name(e));
		nlb_u64(&b, RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_VALUE, total[e]);
		nlb_nest_end(&b, entry);
	}
	nlb_nest_end(&b, table);
	/* Every counter in one message, as the kernel sends them. */
	if (b.overflow)
		return -EMSGSIZE;
	return nl_out_add(o, &b);
}
