// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Loading and finding the xdp transport's XDP program through libxdp.
 *
 * The program is attached once per interface.  Where a bpffs is mounted,
 * through libxdp, which puts it behind its dispatcher beside other
 * programs.  Without one libxdp could only attach it alone; we then attach
 * it alone through a bpf_link that every user holds, so the kernel removes
 * it when the last user closes or dies.  Native mode first (veth has it),
 * generic (SKB) mode where the driver has none (lo).
 *
 * Users: /dev/shm/uroce-<netns>-<netdev>.xdp carries two open-file-
 * description locks: byte 0 is held exclusively while a process sets the
 * program up or takes it down, byte 1 is held shared by every user.  The
 * kernel drops a crashed process's locks, so "the last user leaves" is a
 * non-blocking exclusive lock on byte 1 that succeeds.  Byte 2 is held
 * exclusively by the user whose AF_XDP socket has the queue, so a new user
 * can tell a live owner from one that has just gone.  A program behind
 * the dispatcher left by a crashed last user does no harm: with no socket
 * in its XSKMAP every frame goes on to the kernel, and the next user takes
 * it over.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <net/if.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <linux/if_link.h>
#include <linux/magic.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <xdp/libxdp.h>

#include "transport/xdp/xdp_load.h"
#include "knob/knob.h"
#include "transport/xdp/uroce_xdp_obj.h"   /* the compiled program, embedded (meson) */

static int quiet_libxdp(enum libxdp_print_level level, const char *fmt, va_list ap)
{
	if (uroce_knob_on(UROCE_KNOB_DEBUG))
		return vfprintf(stderr, fmt, ap);
	return 0;
}

static int quiet_libbpf(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return quiet_libxdp((enum libxdp_print_level)level, fmt, ap);
}

static void lock_path(const char *nsid, const char *ifname, char *buf, size_t len)
{
	snprintf(buf, len, "/dev/shm/uroce-%s-%s.xdp", nsid, ifname);
}

enum { LOCK_SETUP, LOCK_USERS, LOCK_QUEUE };

/* Lock byte WHICH of FD: F_RDLCK, F_WRLCK or F_UNLCK; WAIT or not. */
static int lock_byte(int fd, int which, short type, bool wait)
{
	struct flock fl = { .l_type = type, .l_whence = SEEK_SET, .l_start = which, .l_len = 1 };

	return fcntl(fd, wait ? F_OFD_SETLKW : F_OFD_SETLK, &fl) ? -errno : 0;
}

/*
 * Open the users' file at PATH with its set-up lock held.  The last user
 * unlinks it, so a file we locked may be gone from PATH by then: try again
 * until the one locked is the one at PATH.
 */
static int lock_users(const char *path, int *fd)
{
	for (int tries = 0; tries < 100; tries++) {
		struct stat a, b;
		int err;

		*fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
		if (*fd < 0)
			return -errno;
		err = lock_byte(*fd, LOCK_SETUP, F_WRLCK, true);
		if (err) {
			close(*fd);
			*fd = -1;
			return err;
		}
		if (fstat(*fd, &a) == 0 && stat(path, &b) == 0 && a.st_ino == b.st_ino &&
		    a.st_dev == b.st_dev)
			return 0;
		close(*fd);
		*fd = -1;
	}
	return -EAGAIN;
}

/* The program named uroce_xdp attached to IFINDEX, alone or behind the
 * dispatcher; NULL if none. */
static struct xdp_program *find_attached(int ifindex, enum xdp_attach_mode *mode)
{
	struct xdp_multiprog *mp = xdp_multiprog__get_from_ifindex(ifindex);
	struct xdp_program *p = NULL, *found = NULL;

	if (!mp || libxdp_get_error(mp))
		return NULL;
	*mode = xdp_multiprog__attach_mode(mp);
	if (xdp_multiprog__is_legacy(mp)) {
		p = xdp_multiprog__main_prog(mp);
		if (p && !strcmp(xdp_program__name(p), UROCE_XDP_PROG_NAME))
			found = p;
	} else {
		while ((p = xdp_multiprog__next_prog(p, mp)))
			if (!strcmp(xdp_program__name(p), UROCE_XDP_PROG_NAME))
				found = p;
	}
	if (found)
		found = xdp_program__from_id(xdp_program__id(found));
	xdp_multiprog__close(mp);
	return found && !libxdp_get_error(found) ? found : NULL;
}

/* Open the maps of the program PROG_FD by name. */
static int open_maps(int prog_fd, struct uroce_xdp_prog *p)
{
	uint32_t ids[16], n;
	struct bpf_prog_info info = {};
	uint32_t len = sizeof(info);
	struct { const char *name; int *fd; } want[] = {
		{ "uroce_xsks", &p->xsks_fd }, { "uroce_qpns", &p->qpns_fd },
		{ "uroce_addrs", &p->addrs_fd }, { "uroce_xdp_stats", &p->stats_fd },
	};

	info.nr_map_ids = 16;
	info.map_ids = (uintptr_t)ids;
	if (bpf_obj_get_info_by_fd(prog_fd, &info, &len))
		return -errno;
	p->prog_id = info.id;
	n = info.nr_map_ids < 16 ? info.nr_map_ids : 16;
	for (uint32_t i = 0; i < n; i++) {
		struct bpf_map_info mi = {};
		uint32_t mlen = sizeof(mi);
		int fd = bpf_map_get_fd_by_id(ids[i]);

		if (fd < 0)
			return -errno;
		if (bpf_obj_get_info_by_fd(fd, &mi, &mlen)) {
			close(fd);
			continue;
		}
		for (size_t k = 0; k < sizeof(want) / sizeof(want[0]); k++)
			if (!strcmp(mi.name, want[k].name) && *want[k].fd < 0) {
				*want[k].fd = fd;
				fd = -1;
			}
		if (fd >= 0)
			close(fd);
	}
	for (size_t k = 0; k < sizeof(want) / sizeof(want[0]); k++)
		if (*want[k].fd < 0)
			return -ENOENT;
	return 0;
}

/* A program of open_embedded: libxdp leaves the object it was made from
 * (the caller's) open. */
static void close_embedded(struct xdp_program *prog)
{
	struct bpf_object *obj = xdp_program__bpf_obj(prog);

	xdp_program__close(prog);
	bpf_object__close(obj);
}

/* The embedded program, as a multi-buffer one (FRAGS: section xdp.frags,
 * Linux 5.18) or, for a kernel that refuses those, a plain one. */
static struct xdp_program *open_embedded(bool frags)
{
	DECLARE_LIBBPF_OPTS(bpf_object_open_opts, oo, .object_name = "uroce_xdp");
	struct bpf_object *obj = bpf_object__open_mem(uroce_xdp_obj, sizeof(uroce_xdp_obj), &oo);
	struct xdp_program *prog;

	if (!obj || libbpf_get_error(obj))
		return NULL;
	prog = xdp_program__from_bpf_obj(obj, "xdp.frags");
	if (!prog || libxdp_get_error(prog)) {
		bpf_object__close(obj);
		return NULL;
	}
	if (!frags && xdp_program__set_xdp_frags_support(prog, false)) {
		close_embedded(prog);
		return NULL;
	}
	return prog;
}

/* A bpffs where libxdp can keep its dispatcher's state. */
static bool have_bpffs(void)
{
	const char *dir = uroce_knob_str(UROCE_KNOB_LIBXDP_BPFFS);
	struct statfs s;

	return statfs(dir, &s) == 0 && s.f_type == BPF_FS_MAGIC;
}

/* An fd of the XDP bpf_link that runs PROG_ID, -1 if none does (the
 * program was attached through netlink).  Program ids are global, so the
 * link found is the one of this namespace's interface. */
static int find_link(uint32_t prog_id)
{
	uint32_t id = 0;

	while (bpf_link_get_next_id(id, &id) == 0) {
		struct bpf_link_info info = {};
		uint32_t len = sizeof(info);
		int fd = bpf_link_get_fd_by_id(id);

		if (fd < 0)
			continue;
		if (bpf_obj_get_info_by_fd(fd, &info, &len) == 0 && info.type == BPF_LINK_TYPE_XDP &&
		    info.prog_id == prog_id)
			return fd;
		close(fd);
	}
	return -1;
}

/*
 * Attach PROG alone through a bpf_link (native mode, else generic) and
 * return the link's fd and the program's in *PROG_FD.  Every user holds an
 * fd of the link, so the kernel detaches the program when the last of them
 * closes it or dies.  -errno on failure.
 */
static int attach_link(struct xdp_program *prog, int ifindex, enum xdp_attach_mode *mode,
		       int *prog_fd)
{
	static const struct { uint32_t flags; enum xdp_attach_mode mode; } modes[] = {
		{ XDP_FLAGS_DRV_MODE, XDP_MODE_NATIVE }, { XDP_FLAGS_SKB_MODE, XDP_MODE_SKB },
	};
	struct bpf_object *obj = xdp_program__bpf_obj(prog);
	struct bpf_program *bp;
	int ret = bpf_object__load(obj), fd = -1;

	if (ret)
		return ret < 0 ? ret : -EINVAL;
	bp = bpf_object__find_program_by_name(obj, UROCE_XDP_PROG_NAME);
	if (!bp)
		return -ENOENT;
	*prog_fd = bpf_program__fd(bp);
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]) && fd < 0; i++) {
		DECLARE_LIBBPF_OPTS(bpf_link_create_opts, o, .flags = modes[i].flags);

		fd = bpf_link_create(*prog_fd, ifindex, BPF_XDP, &o);
		if (fd < 0 && (errno == EPERM || errno == EBUSY || errno == EEXIST))
			break;
		*mode = modes[i].mode;
	}
	return fd < 0 ? -errno : fd;
}

static int say(char *err, size_t len, int ret, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
	return ret;
}

/* Why attaching failed, in words a user can act on. */
static int attach_error(int ret, const char *ifname, char *err, size_t len)
{
	if (ret == -EPERM || ret == -EACCES)
		return say(err, len, ret, "%s: loading an XDP program needs CAP_BPF and "
			   "CAP_NET_ADMIN (run as root)", ifname);
	if (ret == -EOPNOTSUPP || ret == -EINVAL)
		return say(err, len, ret, "%s: the kernel or driver refused XDP (%s); "
			   "needs CONFIG_XDP_SOCKETS and BPF", ifname, strerror(-ret));
	if (ret == -EEXIST || ret == -EBUSY)
		return say(err, len, ret, "%s: another XDP program is attached and cannot be "
			   "shared (libxdp's dispatcher needs a bpffs at /sys/fs/bpf and kernel "
			   "support for freplace programs); remove it (xdp-loader unload) or use "
			   "transport udp", ifname);
	return say(err, len, ret, "%s: attaching the XDP program failed: %s", ifname,
		   strerror(-ret));
}

/*
 * Open the embedded program (FRAGS or not) and attach it to P's interface:
 * behind libxdp's dispatcher where a bpffs is mounted, so that other
 * programs can join it, else alone through a link.  Native mode first,
 * then generic.  0 with *PROG, *MODE, *PROG_FD (and P's link_fd), or
 * -errno (-ENOEXEC: the object did not open).
 */
static int attach_new(struct uroce_xdp_prog *p, bool frags, struct xdp_program **prog,
		      enum xdp_attach_mode *mode, int *prog_fd)
{
	int ret;

	*prog = open_embedded(frags);
	if (!*prog)
		return -ENOEXEC;
	if (have_bpffs()) {
		*mode = XDP_MODE_NATIVE;
		ret = xdp_program__attach(*prog, p->ifindex, *mode, 0);
		if (ret && ret != -EPERM) {
			*mode = XDP_MODE_SKB;
			ret = xdp_program__attach(*prog, p->ifindex, *mode, 0);
		}
		*prog_fd = xdp_program__fd(*prog);
	} else {
		/* libxdp would attach it alone anyway: through a link. */
		ret = p->link_fd = attach_link(*prog, p->ifindex, mode, prog_fd);
	}
	if (ret < 0) {
		close_embedded(*prog);
		*prog = NULL;
		return ret;
	}
	return 0;
}

int uroce_xdp_prog_get(const char *nsid, const char *ifname, struct uroce_xdp_prog *p,
		       char *err, size_t errlen)
{
	enum xdp_attach_mode mode = XDP_MODE_UNSPEC;
	struct xdp_program *prog;
	char path[128];
	int ret, prog_fd = -1;
	bool embedded;

	memset(p, 0, sizeof(*p));
	p->xsks_fd = p->qpns_fd = p->addrs_fd = p->stats_fd = p->lock_fd = p->link_fd = -1;
	libxdp_set_print(quiet_libxdp);
	libbpf_set_print(quiet_libbpf);
	p->ifindex = if_nametoindex(ifname);
	if (!p->ifindex)
		return say(err, errlen, -ENODEV, "%s: no such interface", ifname);
	lock_path(nsid, ifname, path, sizeof(path));
	ret = lock_users(path, &p->lock_fd);
	if (ret) {
		say(err, errlen, ret, "%s: %s", path, strerror(-ret));
		goto fail;
	}
	prog = find_attached(p->ifindex, &mode);
	embedded = !prog;
	if (prog) {
		prog_fd = xdp_program__fd(prog);
		p->link_fd = find_link(xdp_program__id(prog));
	} else {
		/* A kernel without multi-buffer programs refuses the first. */
		ret = attach_new(p, true, &prog, &mode, &prog_fd);
		if (ret < 0 && ret != -ENOEXEC && ret != -EPERM && ret != -EACCES &&
		    ret != -EBUSY && ret != -EEXIST)
			ret = attach_new(p, false, &prog, &mode, &prog_fd);
		if (ret == -ENOEXEC) {
			say(err, errlen, ret, "%s: cannot open uroce's XDP object", ifname);
			goto fail;
		}
		if (ret < 0) {
			attach_error(ret, ifname, err, errlen);
			goto fail;
		}
	}
	p->mode = mode;
	ret = open_maps(prog_fd, p);
	if (embedded)
		close_embedded(prog);
	else
		xdp_program__close(prog);
	if (ret) {
		say(err, errlen, ret, "%s: the XDP program's maps: %s%s", ifname, strerror(-ret),
		    ret == -EPERM ? " (needs CAP_SYS_ADMIN or CAP_BPF)" : "");
		goto fail;
	}
	lock_byte(p->lock_fd, LOCK_USERS, F_RDLCK, true);
	lock_byte(p->lock_fd, LOCK_SETUP, F_UNLCK, false);
	return 0;
fail:
	uroce_xdp_prog_put(nsid, ifname, p);
	return ret;
}

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

int uroce_xdp_prog_remove(const char *ifname)
{
	int ifindex = if_nametoindex(ifname), ret, link;
	enum xdp_attach_mode mode = XDP_MODE_UNSPEC;
	struct xdp_program *prog;

	if (!ifindex)
		return -ENODEV;
	libxdp_set_print(quiet_libxdp);
	libbpf_set_print(quiet_libbpf);
	prog = find_attached(ifindex, &mode);
	if (!prog)
		return 0;
	link = find_link(xdp_program__id(prog));
	if (link >= 0) {
		ret = bpf_link_detach(link) ? -errno : 0;
		close(link);
	} else {
		ret = xdp_program__detach(prog, ifindex, mode, 0);
	}
	xdp_program__close(prog);
	return ret ? ret : 1;
}

void uroce_xdp_prog_put(const char *nsid, const char *ifname, struct uroce_xdp_prog *p)
{
	close_fd(&p->xsks_fd);
	close_fd(&p->qpns_fd);
	close_fd(&p->addrs_fd);
	close_fd(&p->stats_fd);
	if (p->lock_fd < 0)
		return;
	/* The last user (no other shared lock left) takes the program and the
	 * users' file away. */
	lock_byte(p->lock_fd, LOCK_SETUP, F_WRLCK, true);
	if (lock_byte(p->lock_fd, LOCK_USERS, F_WRLCK, false) == 0) {
		char path[128];

		if (p->ifindex)
			uroce_xdp_prog_remove(ifname);
		lock_path(nsid, ifname, path, sizeof(path));
		unlink(path);
	}
	close_fd(&p->link_fd);
	close_fd(&p->lock_fd);
}

int uroce_xdp_queue_claim(struct uroce_xdp_prog *p)
{
	int err = lock_byte(p->lock_fd, LOCK_QUEUE, F_WRLCK, false);

	return err == -EAGAIN || err == -EACCES ? -EBUSY : err;
}

void uroce_xdp_queue_unclaim(struct uroce_xdp_prog *p)
{
	lock_byte(p->lock_fd, LOCK_QUEUE, F_UNLCK, false);
}

uint64_t uroce_xdp_prog_stat(const struct uroce_xdp_prog *p, enum uroce_xdp_stat stat)
{
	int ncpu = libbpf_num_possible_cpus();
	uint64_t sum = 0, *v;
	uint32_t key = stat;

	if (ncpu <= 0 || p->stats_fd < 0)
		return 0;
	v = calloc(ncpu, sizeof(*v));
	if (v && bpf_map_lookup_elem(p->stats_fd, &key, v) == 0)
		for (int i = 0; i < ncpu; i++)
			sum += v[i];
	free(v);
	return sum;
}
