// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * uroce's devices as the netlink answers describe them, read from the
 * tree `uroce run` wrote and SYSFS_PATH names (device/tree.c): every
 * class/infiniband_verbs/uverbsN that is a directory of ours (the kernel's
 * devices appear there as symbolic links) and whose ibdev has a uroce/
 * folder.  The same files libibverbs reads, so both agree.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "preload/nl.h"

static const char *sysroot(void)
{
	/* libibverbs' variable (the SYSFS_PATH knob), read as it reads it:
	 * preload/ has no knob table. */
	const char *s = getenv("SYSFS_PATH"); /* not a knob: see above */

	return s && *s ? s : NULL;
}

/* Read DIR/FILE into BUF (no trailing newline); length or -1. */
static int read_text(const char *dir, const char *file, char *buf, size_t len)
{
	char path[PATH_MAX];
	ssize_t n;
	int fd;

	if (snprintf(path, sizeof(path), "%s/%s", dir, file) >= (int)sizeof(path))
		return -1;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -1;
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\0'))
		n--;
	buf[n] = '\0';
	return n;
}

int nl_devs_present(void)
{
	char path[PATH_MAX];
	const char *root = sysroot();

	if (!root)
		return 0;
	snprintf(path, sizeof(path), "%s/class/infiniband_verbs/abi_version", root);
	return access(path, R_OK) == 0;
}

/* "xxxx:xxxx:xxxx:xxxx" to the GUID's value in host order. */
static uint64_t guid_value(const char *t)
{
	unsigned int p[4];

	if (sscanf(t, "%4x:%4x:%4x:%4x", &p[0], &p[1], &p[2], &p[3]) != 4)
		return 0;
	return (uint64_t)p[0] << 48 | (uint64_t)p[1] << 32 | (uint64_t)p[2] << 16 | p[3];
}

static int load_one(const char *root, int n, struct nl_dev *d)
{
	char dir[PATH_MAX], ib[PATH_MAX + 128], text[128];
	struct stat st;

	memset(d, 0, sizeof(*d));
	snprintf(dir, sizeof(dir), "%s/class/infiniband_verbs/uverbs%d", root, n);
	if (lstat(dir, &st) || !S_ISDIR(st.st_mode) ||
	    read_text(dir, "ibdev", d->name, sizeof(d->name)) <= 0)
		return -1;
	d->uverbs = n;
	d->index = NL_DEV_INDEX_BASE + n;
	d->abi = read_text(dir, "abi_version", text, sizeof(text)) > 0 ? atoi(text) : 0;
	snprintf(ib, sizeof(ib), "%s/class/infiniband/%s", root, d->name);
	if (read_text(ib, "uroce/netdev", d->netdev, sizeof(d->netdev)) <= 0)
		return -1;
	if (read_text(ib, "node_guid", text, sizeof(text)) > 0)
		d->node_guid = guid_value(text);
	if (read_text(ib, "fw_ver", d->fw, sizeof(d->fw)) < 0)
		d->fw[0] = '\0';
	/* "4: ACTIVE", "5: LinkUp": the number is the IBTA value. */
	d->port_state = read_text(ib, "ports/1/state", text, sizeof(text)) > 0 ? atoi(text) : 1;
	d->phys_state = read_text(ib, "ports/1/phys_state", text, sizeof(text)) > 0 ? atoi(text) : 3;
	d->ifindex = if_nametoindex(d->netdev);
	return 0;
}

static int by_uverbs(const void *a, const void *b)
{
	return ((const struct nl_dev *)a)->uverbs - ((const struct nl_dev *)b)->uverbs;
}

int nl_devs_load(struct nl_dev *devs, int max)
{
	const char *root = sysroot();
	char dir[PATH_MAX];
	struct dirent *e;
	int n = 0;
	DIR *dp;

	if (!root)
		return 0;
	snprintf(dir, sizeof(dir), "%s/class/infiniband_verbs", root);
	dp = opendir(dir);
	if (!dp)
		return 0;
	while (n < max && (e = readdir(dp)))
		if (!strncmp(e->d_name, "uverbs", 6) && e->d_name[6] &&
		    !load_one(root, atoi(e->d_name + 6), &devs[n]))
			n++;
	closedir(dp);
	qsort(devs, n, sizeof(*devs), by_uverbs);
	return n;
}
