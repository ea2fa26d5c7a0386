// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * The sysfs-like tree libibverbs reads when the kernel has no RDMA support
 * (its sysfs fallback, honouring $SYSFS_PATH):
 *
 *   class/infiniband_verbs/abi_version          uverbs ABI (6)
 *   class/infiniband_verbs/uverbsN/{ibdev,dev,abi_version}
 *   class/infiniband/NAME/{node_type,node_guid,sys_image_guid,fw_ver,...}
 *   class/infiniband/NAME/device/modalias       "uroce:NAME" (our match)
 *   class/infiniband/NAME/uroce/{netdev,transport}
 *   class/infiniband/NAME/ports/1/gids/I         GID table, RoCE v2 only
 *   class/infiniband/NAME/ports/1/gid_attrs/{types,ndevs}/I
 *   class/infiniband/NAME/ports/1/pkeys/0        0xffff (RoCE: default P_Key)
 *
 * libibverbs reads every GID index below gid_tbl_len, so unused entries
 * exist as all-zero GIDs (which it skips), as the kernel shows them.
 *
 * Where the kernel has RDMA devices too, libibverbs learns of them over
 * netlink (merged with ours: docs/netlink.md) and then reads their files
 * under SYSFS_PATH as well, so each kernel device and uverbs node is a
 * symbolic link here to its /sys entry.
 */
#include <dirent.h>
#include <stdarg.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "provider_version.h"
#include "device/registry.h"

static int put(const char *dir, const char *file, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int put(const char *dir, const char *file, const char *fmt, ...)
{
	char path[PATH_MAX], text[256];
	va_list ap;

	snprintf(path, sizeof(path), "%s/%s", dir, file);
	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	return uroce_write_file(path, text);
}

static void gid_to_text(const uint8_t *g, char *buf)
{
	for (int i = 0; i < 8; i++)
		sprintf(buf + 5 * i, "%02x%02x%s", g[2 * i], g[2 * i + 1], i < 7 ? ":" : "\n");
}

static int gid_from_text(const char *t, uint8_t *g)
{
	unsigned int v;

	for (int i = 0; i < 8; i++) {
		if (sscanf(t + 5 * i, "%4x", &v) != 1)
			return -EINVAL;
		g[2 * i] = v >> 8;
		g[2 * i + 1] = v & 0xff;
	}
	return 0;
}

static int gid_is_zero(const uint8_t *g)
{
	static const uint8_t zero[16];

	return !memcmp(g, zero, 16);
}

/*
 * Rewrite port 1 from ND.  A GID that is still an address of the netdev
 * keeps its index (programs cache indices); new addresses take the lowest
 * free slots, as the kernel's RoCE GID cache does.
 */
int uroce_tree_refresh_port(const char *ibdev_path, const struct uroce_netdev *nd)
{
	uint8_t slots[UROCE_GID_TBL_LEN][16] = { { 0 } };
	char port[PATH_MAX], dir[PATH_MAX + 32], file[PATH_MAX + 64], text[64];
	int placed[UROCE_GID_TBL_LEN] = { 0 };
	int ret;

	snprintf(port, sizeof(port), "%s/ports/1", ibdev_path);
	for (int i = 0; i < UROCE_GID_TBL_LEN; i++) {
		snprintf(file, sizeof(file), "%s/gids/%d", port, i);
		if (uroce_read_file(file, text, sizeof(text)) > 0)
			gid_from_text(text, slots[i]);
	}
	/* Keep the slots of addresses that still exist, clear the others. */
	for (int i = 0; i < UROCE_GID_TBL_LEN; i++) {
		int found = -1;

		for (int a = 0; a < nd->n_addrs && found < 0; a++)
			if (!placed[a] && !gid_is_zero(slots[i]) &&
			    !memcmp(slots[i], nd->addrs[a], 16))
				found = a;
		if (found >= 0)
			placed[found] = 1;
		else
			memset(slots[i], 0, 16);
	}
	for (int a = 0, i = 0; a < nd->n_addrs; a++) {
		if (placed[a])
			continue;
		while (i < UROCE_GID_TBL_LEN && !gid_is_zero(slots[i]))
			i++;
		if (i == UROCE_GID_TBL_LEN)
			break;
		memcpy(slots[i], nd->addrs[a], 16);
	}

	const char *subdirs[] = { "gids", "gid_attrs/types", "gid_attrs/ndevs", "pkeys" };
	for (size_t s = 0; s < sizeof(subdirs) / sizeof(subdirs[0]); s++) {
		snprintf(dir, sizeof(dir), "%s/%s", port, subdirs[s]);
		if ((ret = uroce_mkdirs(dir, 0755)))
			return ret;
	}
	for (int i = 0; i < UROCE_GID_TBL_LEN; i++) {
		char name[16];

		snprintf(name, sizeof(name), "%d", i);
		gid_to_text(slots[i], text);
		snprintf(dir, sizeof(dir), "%s/gids", port);
		if ((ret = put(dir, name, "%s", text)))
			return ret;
		snprintf(dir, sizeof(dir), "%s/gid_attrs/types", port);
		if ((ret = put(dir, name, "RoCE v2\n")))
			return ret;
		snprintf(dir, sizeof(dir), "%s/gid_attrs/ndevs", port);
		if ((ret = put(dir, name, "%s", gid_is_zero(slots[i]) ? "" : nd->name)))
			return ret;
	}
	snprintf(dir, sizeof(dir), "%s/pkeys", port);
	if ((ret = put(dir, "0", "0xffff\n")))
		return ret;

	int up = nd->admin_up && nd->carrier;
	if ((ret = put(port, "state", up ? "4: ACTIVE\n" : "1: DOWN\n")) ||
	    (ret = put(port, "phys_state", up ? "5: LinkUp\n" : "3: Disabled\n")) ||
	    (ret = put(port, "link_layer", "Ethernet\n")) ||
	    (ret = put(port, "lid", "0x0\n")) ||
	    (ret = put(port, "sm_lid", "0x0\n")) ||
	    (ret = put(port, "lid_mask_count", "0\n")))
		return ret;
	return 0;
}

static int write_device(const char *sysroot, const struct uroce_dev_rec *rec)
{
	char dir[PATH_MAX], sub[PATH_MAX + 16], guid[32];
	struct uroce_netdev nd;
	uint64_t g;
	int ret;

	/* A device whose netdev vanished stays listed, with its port down. */
	if (uroce_netdev_query(rec->netdev, &nd)) {
		memset(&nd, 0, sizeof(nd));
		snprintf(nd.name, sizeof(nd.name), "%s", rec->netdev);
	}
	g = uroce_netdev_guid(&nd);
	snprintf(guid, sizeof(guid), "%04x:%04x:%04x:%04x\n",
		 (unsigned int)(g >> 48) & 0xffff, (unsigned int)(g >> 32) & 0xffff,
		 (unsigned int)(g >> 16) & 0xffff, (unsigned int)g & 0xffff);

	snprintf(dir, sizeof(dir), "%s/class/infiniband_verbs/uverbs%d", sysroot, rec->uverbs);
	if ((ret = uroce_mkdirs(dir, 0755)) ||
	    (ret = put(dir, "ibdev", "%s\n", rec->name)) ||
	    (ret = put(dir, "abi_version", "%d\n", UROCE_DRIVER_ABI)) ||
	    (ret = put(dir, "dev", "%d:%d\n", UROCE_CDEV_MAJOR, UROCE_CDEV_MINOR)))
		return ret;

	snprintf(dir, sizeof(dir), "%s/class/infiniband/%s", sysroot, rec->name);
	snprintf(sub, sizeof(sub), "%s/device", dir);
	if ((ret = uroce_mkdirs(sub, 0755)) ||
	    (ret = put(sub, "modalias", "uroce:%s\n", rec->name)))
		return ret;
	snprintf(sub, sizeof(sub), "%s/uroce", dir);
	if ((ret = uroce_mkdirs(sub, 0755)) ||
	    (ret = put(sub, "netdev", "%s\n", rec->netdev)) ||
	    (ret = put(sub, "transport", "%s\n", uroce_transport_name(rec->transport))))
		return ret;
	if ((ret = put(dir, "node_type", "1: CA\n")) ||
	    (ret = put(dir, "node_guid", "%s", guid)) ||
	    (ret = put(dir, "sys_image_guid", "%s", guid)) ||
	    (ret = put(dir, "fw_ver", "%s\n", UROCE_VERSION)) ||
	    (ret = put(dir, "hca_type", "uroce\n")) ||
	    (ret = put(dir, "board_id", "uroce software RoCE (%s)\n", rec->netdev)) ||
	    (ret = put(dir, "node_desc", "uroce %s on %s\n", rec->name, rec->netdev)))
		return ret;
	return uroce_tree_refresh_port(dir, &nd);
}

static int listed(const struct uroce_dev_rec *recs, int n, const char *name, int uverbs)
{
	for (int i = 0; i < n; i++)
		if (name ? !strcmp(recs[i].name, name) : recs[i].uverbs == uverbs)
			return 1;
	return 0;
}

/* Remove entries of CLASS that no record lists. */
static void prune(const char *sysroot, const char *class,
		  const struct uroce_dev_rec *recs, int n)
{
	char dir[PATH_MAX], sub[PATH_MAX + 256];
	struct dirent *e;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/class/%s", sysroot, class);
	d = opendir(dir);
	if (!d)
		return;
	while ((e = readdir(d))) {
		int keep;

		if (e->d_name[0] == '.' || e->d_type != DT_DIR)
			continue;
		if (!strncmp(e->d_name, "uverbs", 6))
			keep = listed(recs, n, NULL, atoi(e->d_name + 6));
		else
			keep = listed(recs, n, e->d_name, 0);
		if (!keep) {
			snprintf(sub, sizeof(sub), "%s/%s", dir, e->d_name);
			uroce_rmtree(sub);
		}
	}
	closedir(d);
}

/* Link CLASS's entries of the real /sys into the tree, but for names that
 * are ours; links left from an earlier sync are made again. */
static int link_kernel(const char *sysroot, const char *class,
		       const struct uroce_dev_rec *recs, int n)
{
	char dir[PATH_MAX], sys[PATH_MAX], link[PATH_MAX + 256], target[PATH_MAX + 256];
	struct dirent *e;
	DIR *d;

	snprintf(dir, sizeof(dir), "%s/class/%s", sysroot, class);
	if ((d = opendir(dir))) {
		while ((e = readdir(d)))
			if (e->d_type == DT_LNK) {
				snprintf(link, sizeof(link), "%s/%s", dir, e->d_name);
				unlink(link);
			}
		closedir(d);
	}
	snprintf(sys, sizeof(sys), "/sys/class/%s", class);
	if (!(d = opendir(sys)))
		return 0;
	while ((e = readdir(d))) {
		int uverbs = !strncmp(e->d_name, "uverbs", 6);

		if (e->d_name[0] == '.' || e->d_type == DT_REG ||
		    listed(recs, n, uverbs ? NULL : e->d_name, uverbs ? atoi(e->d_name + 6) : 0))
			continue;
		snprintf(link, sizeof(link), "%s/%s", dir, e->d_name);
		snprintf(target, sizeof(target), "%s/%s", sys, e->d_name);
		if (symlink(target, link) && errno != EEXIST) {
			closedir(d);
			return -errno;
		}
	}
	closedir(d);
	return 0;
}

int uroce_tree_sync(const char *sysroot, const struct uroce_dev_rec *recs, int n)
{
	char dir[PATH_MAX];
	int ret;

	snprintf(dir, sizeof(dir), "%s/class/infiniband_verbs", sysroot);
	if ((ret = uroce_mkdirs(dir, 0755)) ||
	    (ret = put(dir, "abi_version", "6\n")))
		return ret;
	snprintf(dir, sizeof(dir), "%s/class/infiniband", sysroot);
	if ((ret = uroce_mkdirs(dir, 0755)))
		return ret;
	prune(sysroot, "infiniband_verbs", recs, n);
	prune(sysroot, "infiniband", recs, n);
	for (int i = 0; i < n; i++)
		if ((ret = write_device(sysroot, &recs[i])))
			return ret;
	if ((ret = link_kernel(sysroot, "infiniband", recs, n)))
		return ret;
	return link_kernel(sysroot, "infiniband_verbs", recs, n);
}
