// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* Device records of a network namespace, the uverbs character nodes, file helpers. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "device/registry.h"
#include "knob/knob.h"

#ifndef SO_NETNS_COOKIE
#define SO_NETNS_COOKIE 71
#endif

static const char *const transport_names[] = {
	[UROCE_TRANSPORT_UDP] = "udp",
	[UROCE_TRANSPORT_XDP] = "xdp",
};

const char *uroce_transport_name(enum uroce_transport t)
{
	return (unsigned int)t < 2 ? transport_names[t] : "?";
}

int uroce_transport_parse(const char *s, enum uroce_transport *t)
{
	for (unsigned int i = 0; i < 2; i++)
		if (!strcmp(s, transport_names[i])) {
			*t = i;
			return 0;
		}
	return -EINVAL;
}

int uroce_name_valid(const char *name)
{
	size_t len = strlen(name);

	if (len == 0 || len >= UROCE_NAME_MAX || name[0] == '.' || name[0] == '-')
		return 0;
	for (const char *p = name; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || *p == '_' || *p == '.' || *p == '-'))
			return 0;
	return 1;
}

static const char *rundir(void)
{
	return uroce_knob_str(UROCE_KNOB_RUNDIR);
}

int uroce_ns_dir(char *buf, size_t len)
{
	uint64_t cookie = 0;
	socklen_t sl = sizeof(cookie);
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	int ret = -1;

	if (fd >= 0) {
		ret = getsockopt(fd, SOL_SOCKET, SO_NETNS_COOKIE, &cookie, &sl);
		close(fd);
	}
	if (ret) {
		/* Older kernels: the namespace inode (may be reused after it dies). */
		struct stat st;

		if (stat("/proc/self/ns/net", &st))
			return -errno;
		snprintf(buf, len, "%s/ns-i%llu", rundir(), (unsigned long long)st.st_ino);
		return 0;
	}
	snprintf(buf, len, "%s/ns-%llu", rundir(), (unsigned long long)cookie);
	return 0;
}

int uroce_mkdirs(const char *path, mode_t mode)
{
	char tmp[PATH_MAX];

	if (snprintf(tmp, sizeof(tmp), "%s", path) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	for (char *p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(tmp, mode) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(tmp, mode) && errno != EEXIST)
		return -errno;
	return 0;
}

int uroce_rmtree(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	int ret = 0;

	if (!d) {
		if (errno == ENOENT)
			return 0;
		if (errno == ENOTDIR)
			return unlink(path) ? -errno : 0;
		return -errno;
	}
	while ((e = readdir(d))) {
		char sub[PATH_MAX];

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(sub, sizeof(sub), "%s/%s", path, e->d_name);
		if (e->d_type == DT_DIR)
			ret = uroce_rmtree(sub) ?: ret;
		else if (unlink(sub))
			ret = -errno;
	}
	closedir(d);
	if (rmdir(path) && errno != ENOENT)
		ret = -errno;
	return ret;
}

/* Whether PATH is a regular file that holds exactly TEXT[LEN].  Not through
 * a symlink, and never waiting on a FIFO: anything else is replaced, as
 * before this check. */
static bool file_holds(const char *path, const char *text, size_t len)
{
	char buf[512];
	struct stat st;
	int fd;
	ssize_t n;

	if (len >= sizeof(buf))
		return false;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return false;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return false;
	}
	n = read(fd, buf, len + 1);     /* one more: a longer file differs */
	close(fd);
	return n == (ssize_t)len && !memcmp(buf, text, len);
}

int uroce_write_file(const char *path, const char *text)
{
	char tmp[PATH_MAX];
	size_t len = strlen(text);
	int fd;

	/* Every context open refreshes its port's files (tree.c), and
	 * almost all hold what they held: rewriting them (a new inode and a
	 * rename each) made ibv_devinfo take 32-38 ms instead of 5-8
	 * (docs/design.md, "Refreshing the GID table"). */
	if (file_holds(path, text, len))
		return 0;
	if (snprintf(tmp, sizeof(tmp), "%s.%d.tmp", path, (int)getpid()) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	if (write(fd, text, len) != (ssize_t)len) {
		int err = errno ? -errno : -EIO;

		close(fd);
		unlink(tmp);
		return err;
	}
	close(fd);
	if (rename(tmp, path)) {
		int err = -errno;

		unlink(tmp);
		return err;
	}
	return 0;
}

int uroce_read_file(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n < 0)
		return -errno;
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		n--;
	buf[n] = 0;
	return (int)n;
}

/* --- records: NSDIR/devices/NAME holds "key value" lines ---------------- */

/* Copy VAL into a field of LEN bytes; -EINVAL if it does not fit. */
static int copy_field(char *field, size_t len, const char *val)
{
	size_t n = strlen(val);

	if (n >= len)
		return -EINVAL;
	memcpy(field, val, n + 1);
	return 0;
}

static int parse_record(const char *text, struct uroce_dev_rec *rec)
{
	char key[32], val[128];
	const char *p = text;
	int got = 0;

	rec->transport = UROCE_TRANSPORT_UDP;
	rec->uverbs = -1;
	while (*p) {
		int used = 0;

		if (sscanf(p, "%31s %127s%n", key, val, &used) != 2)
			break;
		p += used;
		while (*p == '\n' || *p == ' ')
			p++;
		if (!strcmp(key, "name"))
			got |= copy_field(rec->name, sizeof(rec->name), val) ? 0 : 1;
		else if (!strcmp(key, "netdev"))
			got |= copy_field(rec->netdev, sizeof(rec->netdev), val) ? 0 : 2;
		else if (!strcmp(key, "transport"))
			uroce_transport_parse(val, &rec->transport);
		else if (!strcmp(key, "uverbs"))
			got |= 4, rec->uverbs = atoi(val);
		else if (!strcmp(key, "default_roce_tos"))
			rec->default_roce_tos = (uint8_t)strtoul(val, NULL, 0);
	}
	return got == 7 ? 0 : -EINVAL;
}

int uroce_reg_find(const char *nsdir, const char *name, struct uroce_dev_rec *rec)
{
	char path[PATH_MAX], text[512];
	int ret;

	if (!uroce_name_valid(name))
		return -EINVAL;
	snprintf(path, sizeof(path), "%s/devices/%s", nsdir, name);
	ret = uroce_read_file(path, text, sizeof(text));
	if (ret < 0)
		return ret;
	memset(rec, 0, sizeof(*rec));
	return parse_record(text, rec);
}

static int rec_cmp(const void *a, const void *b)
{
	return ((const struct uroce_dev_rec *)a)->uverbs -
	       ((const struct uroce_dev_rec *)b)->uverbs;
}

int uroce_reg_load_all(const char *nsdir, struct uroce_dev_rec **recs, int *n)
{
	char path[PATH_MAX];
	struct uroce_dev_rec *v = NULL;
	struct dirent *e;
	int cnt = 0, cap = 0;
	DIR *d;

	*recs = NULL;
	*n = 0;
	snprintf(path, sizeof(path), "%s/devices", nsdir);
	d = opendir(path);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.' || strstr(e->d_name, ".tmp"))
			continue;
		if (cnt == cap) {
			void *nv = realloc(v, (cap = cap ? 2 * cap : 8) * sizeof(*v));

			if (!nv) {
				free(v);
				closedir(d);
				return -ENOMEM;
			}
			v = nv;
		}
		if (uroce_reg_find(nsdir, e->d_name, &v[cnt]) == 0)
			cnt++;
	}
	closedir(d);
	if (cnt)  /* qsort's base may not be NULL, even for no elements */
		qsort(v, cnt, sizeof(*v), rec_cmp);
	*recs = v;
	*n = cnt;
	return 0;
}

int uroce_reg_save(const char *nsdir, const struct uroce_dev_rec *rec)
{
	char path[PATH_MAX], text[512];
	int ret;

	snprintf(path, sizeof(path), "%s/devices", nsdir);
	ret = uroce_mkdirs(path, 0755);
	if (ret)
		return ret;
	snprintf(path, sizeof(path), "%s/devices/%s", nsdir, rec->name);
	snprintf(text, sizeof(text), "name %s\nnetdev %s\ntransport %s\nuverbs %d\n"
		 "default_roce_tos %u\n", rec->name, rec->netdev,
		 uroce_transport_name(rec->transport), rec->uverbs, rec->default_roce_tos);
	return uroce_write_file(path, text);
}

int uroce_reg_remove(const char *nsdir, const char *name)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/devices/%s", nsdir, name);
	return unlink(path) ? -errno : 0;
}

void uroce_qpn_file(char *buf, size_t len, const char *nsid, const char *netdev, uid_t uid)
{
	snprintf(buf, len, "/dev/shm/uroce-%s-%s.u%u.qpn3", nsid, netdev, (unsigned int)uid);
}

/* Remove every /dev/shm file whose name starts with PREFIX. */
static void shm_files_remove(const char *prefix)
{
	struct dirent *e;
	DIR *d = opendir("/dev/shm");
	size_t len = strlen(prefix);

	if (!d)
		return;
	while ((e = readdir(d)))
		if (!strncmp(e->d_name, prefix, len))
			unlinkat(dirfd(d), e->d_name, 0);
	closedir(d);
}

void uroce_gsi_members_file(char *buf, size_t len, const char *nsid, const char *netdev, uid_t uid)
{
	snprintf(buf, len, "/dev/shm/uroce-%s-%s.u%u.gsi1", nsid, netdev, (unsigned int)uid);
}

void uroce_cm_ports_file(char *buf, size_t len, const char *nsid, uid_t uid)
{
	snprintf(buf, len, "/dev/shm/uroce-%s.u%u.cmport1", nsid, (unsigned int)uid);
}

/* Every user's QPN and QP1 member tables of NETDEV (.u<UID>.qpn3,
 * .u<UID>.gsi1) and an older build's (.qpn2). */
void uroce_qpn_files_remove(const char *nsid, const char *netdev)
{
	char prefix[128];

	snprintf(prefix, sizeof(prefix), "uroce-%s-%s.", nsid, netdev);
	shm_files_remove(prefix);
}

void uroce_cm_ports_files_remove(const char *nsid)
{
	char prefix[128];

	snprintf(prefix, sizeof(prefix), "uroce-%s.", nsid);
	shm_files_remove(prefix);
}

/* --- /dev/infiniband/uverbsN ------------------------------------------- */

/*
 * mknod() of a character device is refused in a user namespace (rootless
 * containers).  libibverbs only needs open() on the node to give a file
 * whose st_rdev is the `dev` it read: a symbolic link to the null device
 * does, so that is the fallback.
 */
static int cdev_make(const char *path, uid_t uid, gid_t gid, mode_t mode,
		     enum uroce_cdev_kind *kind)
{
	if (*kind == UROCE_CDEV_NODE) {
		if (mknod(path, S_IFCHR | 0600, makedev(UROCE_CDEV_MAJOR, UROCE_CDEV_MINOR)) == 0) {
			/* Owner and group first, then the mode (not narrowed by
			 * the umask): never wider than asked, even for a moment. */
			if (chown(path, uid, gid) || chmod(path, mode & 0666)) {
				int err = -errno;

				unlink(path);
				return err;
			}
			return 0;
		}
		if (errno != EPERM)
			return -errno;
		*kind = UROCE_CDEV_SYMLINK;
	}
	return symlink(UROCE_CDEV_TARGET, path) ? -errno : 0;
}

int uroce_cdev_create(uid_t uid, gid_t gid, mode_t mode, enum uroce_cdev_kind *kind)
{
	struct stat st;
	int ret = uroce_mkdirs(UROCE_CDEV_DIR, 0755);

	if (ret)
		return ret;
	/* The link is only good if its target is the null device itself. */
	if (stat(UROCE_CDEV_TARGET, &st) || !S_ISCHR(st.st_mode) ||
	    major(st.st_rdev) != UROCE_CDEV_MAJOR || minor(st.st_rdev) != UROCE_CDEV_MINOR)
		return -ENODEV;
	*kind = UROCE_CDEV_NODE;
	for (int n = UROCE_CDEV_FIRST; n <= UROCE_CDEV_LAST; n++) {
		char path[64];

		snprintf(path, sizeof(path), UROCE_CDEV_DIR "/uverbs%d", n);
		ret = cdev_make(path, uid, gid, mode, kind);
		if (ret != -EEXIST)
			return ret ? ret : n;
	}
	return -ENOSPC;
}

int uroce_cdev_remove(int n)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), UROCE_CDEV_DIR "/uverbs%d", n);
	if (stat(path, &st))
		return errno == ENOENT ? 0 : -errno;
	/* Never remove a node that is not ours (a real RDMA device's uverbs). */
	if (!S_ISCHR(st.st_mode) || major(st.st_rdev) != UROCE_CDEV_MAJOR ||
	    minor(st.st_rdev) != UROCE_CDEV_MINOR)
		return -EPERM;
	return unlink(path) ? -errno : 0;
}

/* Start time of PID in clock ticks since boot (field 22 of /proc/PID/stat);
 * 0 if unreadable. */
uint64_t uroce_proc_starttime(pid_t pid)
{
	char path[64], buf[1024], *p;
	unsigned long long st = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	p = fgets(buf, sizeof(buf), f);
	fclose(f);
	if (!p || !(p = strrchr(buf, ')'))) /* the command name may hold spaces */
		return 0;
	p += 2; /* field 3 */
	for (int field = 3; field < 22 && p; field++) {
		p = strchr(p, ' ');
		if (p)
			p++;
	}
	if (p)
		sscanf(p, "%llu", &st);
	return st;
}

bool uroce_proc_alive(pid_t pid, uint64_t starttime)
{
	uint64_t now;

	if (pid <= 0 || (kill(pid, 0) && errno == ESRCH))
		return false;
	now = uroce_proc_starttime(pid);
	/* /proc hidden (hidepid) but kill() says it exists: believe it. */
	return now == 0 || now == starttime;
}
