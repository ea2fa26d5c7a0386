// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* uroce link add|del|show: the iproute2 "rdma link" conventions. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <grp.h>
#include <pwd.h>
#include <sys/file.h>
#include <sys/stat.h>

#include <uroce/stats.h>

#include "cli.h"
#include "device/device.h"
#include "transport/transport.h"
#include "transport/xdp/xdp_load.h"
#include "wire/wire.h"

/* Serialise registry changes of one namespace (concurrent link add/del). */
static int lock_ns(const char *nsdir)
{
	char path[PATH_MAX];
	int fd;

	if (uroce_mkdirs(nsdir, 0755))
		return -1;
	snprintf(path, sizeof(path), "%s/.lock", nsdir);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd >= 0)
		flock(fd, LOCK_EX);
	return fd;
}

static int sync_tree(const char *nsdir)
{
	struct uroce_dev_rec *recs;
	char sysroot[PATH_MAX];
	int n, ret;

	ret = uroce_reg_load_all(nsdir, &recs, &n);
	if (ret)
		return ret;
	snprintf(sysroot, sizeof(sysroot), "%s/sys", nsdir);
	ret = uroce_tree_sync(sysroot, recs, n);
	free(recs);
	return ret;
}

static int stats_dir_remove(const char *nsdir, const char *name)
{
	char dir[PATH_MAX];

	return uroce_stats_dir(dir, sizeof(dir), nsdir, name) ?: uroce_rmtree(dir);
}

static int need_root(const char *what)
{
	if (geteuid() == 0)
		return 0;
	return fail("%s needs root: it creates or removes %s/uverbsN and the "
		    "device registry (run it with sudo; using a device afterwards "
		    "needs no root)", what, UROCE_CDEV_DIR);
}

/* A user or group by name or number; 0 or -1. */
static int parse_id(const char *s, int group, unsigned int *id)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);

	if (*s && !*end && v < (unsigned int)-1) {
		*id = (unsigned int)v;
		return 0;
	}
	if (group) {
		struct group *g = getgrnam(s);

		return g ? (*id = g->gr_gid, 0) : -1;
	}
	struct passwd *pw = getpwnam(s);

	return pw ? (*id = pw->pw_uid, 0) : -1;
}

/* Who may use the device: owner, group and mode of its node (the
 * statement of docs/security.md), as for /dev/infiniband/uverbsN. */
struct node_access {
	unsigned int uid, gid;
	unsigned int mode;
};

/* A TOS byte (DSCP << 2 | ECN): 0-255, decimal or 0x hex. */
static int parse_tos(const char *s, uint8_t *tos)
{
	char *end;
	unsigned long v = strtoul(s, &end, 0);

	if (!*s || *end || v > 255)
		return fail("tos \"%s\": 0-255 (DSCP << 2 | ECN), decimal or 0x hex", s);
	*tos = (uint8_t)v;
	return 0;
}

/*
 * A device whose addresses' port 4791 another owner holds carries no
 * traffic: its first QP would fail (transport/udp/udp.c).  Say so now, in
 * one line, instead of making it.  uroce's own processes share the port
 * (SO_REUSEPORT) and do not count.
 */
static int roce_port_free(const char *name, const struct uroce_netdev *nd)
{
	for (int i = 0; i < nd->n_addrs; i++) {
		struct uroce_port_owner o;

		if (uroce_port_owner(roce_gid_family(nd->addrs[i]), nd->addrs[i],
				     UROCE_XPORT_ROCE_PORT, UROCE_OWNER_SKIP_ALL_UROCE, &o) <= 0)
			continue;
		uroce_port_owner_say(name, nd->addrs[i], UROCE_XPORT_ROCE_PORT, &o);
		return 1;
	}
	return 0;
}

static int link_add(int argc, char **argv)
{
	struct uroce_dev_rec rec = { .transport = UROCE_TRANSPORT_UDP };
	struct node_access acc = { 0, 0, 0666 };
	const char *name, *netdev = NULL;
	struct uroce_netdev nd;
	enum uroce_cdev_kind kind;
	char nsdir[PATH_MAX];
	int ret, lockfd;

	if (argc < 1)
		return fail("usage: uroce link add NAME netdev IFACE [transport udp|xdp] "
			    "[tos TOS] [owner USER] [group GROUP] [mode MODE]");
	name = argv[0];
	for (int i = 1; i < argc; i += 2) {
		if (i + 1 >= argc)
			return fail("\"%s\" needs a value", argv[i]);
		if (!strcmp(argv[i], "netdev"))
			netdev = argv[i + 1];
		else if (!strcmp(argv[i], "transport")) {
			if (uroce_transport_parse(argv[i + 1], &rec.transport))
				return fail("unknown transport \"%s\" (udp or xdp)", argv[i + 1]);
			if (!UROCE_HAVE_XDP && rec.transport == UROCE_TRANSPORT_XDP)
				return fail("this uroce was built without the xdp transport "
					    "(no libxdp 1.3+ at build time; docs/xdp.md)");
		} else if (!strcmp(argv[i], "tos")) {
			if (parse_tos(argv[i + 1], &rec.default_roce_tos))
				return 1;
		} else if (!strcmp(argv[i], "owner")) {
			if (parse_id(argv[i + 1], 0, &acc.uid))
				return fail("no user \"%s\"", argv[i + 1]);
		} else if (!strcmp(argv[i], "group")) {
			if (parse_id(argv[i + 1], 1, &acc.gid))
				return fail("no group \"%s\"", argv[i + 1]);
		} else if (!strcmp(argv[i], "mode")) {
			char *end;
			unsigned long m = strtoul(argv[i + 1], &end, 8);

			if (!argv[i + 1][0] || *end || (m & ~0666UL))
				return fail("mode \"%s\": octal, read/write bits only (e.g. 0660)",
					    argv[i + 1]);
			acc.mode = (unsigned int)m;
		} else if (!strcmp(argv[i], "type")) {
			if (strcmp(argv[i + 1], "uroce"))
				return fail("type \"%s\": uroce only makes uroce devices", argv[i + 1]);
		} else
			return fail("unknown argument \"%s\"", argv[i]);
	}
	if (!netdev)
		return fail("missing \"netdev IFACE\"");
	if (!uroce_name_valid(name))
		return fail("invalid device name \"%s\" (letters, digits, '_', '.', '-'; at most %d)",
			    name, UROCE_NAME_MAX - 1);
	if (need_root("link add"))
		return 1;
	ret = uroce_netdev_query(netdev, &nd);
	if (ret == -ENODEV)
		return fail("no network interface \"%s\" in this network namespace", netdev);
	if (ret)
		return fail("cannot read interface \"%s\": %s", netdev, strerror(-ret));
	if (roce_port_free(name, &nd))
		return 1;
	if ((ret = uroce_ns_dir(nsdir, sizeof(nsdir))))
		return fail("cannot name this network namespace: %s", strerror(-ret));
	lockfd = lock_ns(nsdir);
	if (lockfd < 0)
		return fail("cannot create %s: %s", nsdir, strerror(errno));
	if (uroce_reg_find(nsdir, name, &rec) == 0) {
		close(lockfd);
		return fail("device \"%s\" already exists", name);
	}
	snprintf(rec.name, sizeof(rec.name), "%s", name);
	snprintf(rec.netdev, sizeof(rec.netdev), "%s", nd.name);
	rec.uverbs = uroce_cdev_create(acc.uid, acc.gid, acc.mode, &kind);
	if (rec.uverbs < 0) {
		close(lockfd);
		return fail("cannot create %s/uverbsN: %s", UROCE_CDEV_DIR, strerror(-rec.uverbs));
	}
	if (kind == UROCE_CDEV_SYMLINK)
		fprintf(stderr, "uroce: %s: mknod is not permitted here (a user namespace?); "
			"%s/uverbs%d is a symbolic link to %s instead\n",
			name, UROCE_CDEV_DIR, rec.uverbs, UROCE_CDEV_TARGET);
	ret = uroce_reg_save(nsdir, &rec);
	if (!ret)
		ret = sync_tree(nsdir);
	/* A fresh device counts from zero; its users publish counters in its
	 * stats directory (docs/stats.md). */
	if (!ret && !stats_dir_remove(nsdir, name))
		ret = uroce_stats_mkdir(nsdir, name, acc.uid, acc.gid, acc.mode);
	if (ret) {
		uroce_reg_remove(nsdir, name);
		uroce_cdev_remove(rec.uverbs);
		sync_tree(nsdir);
		close(lockfd);
		return fail("cannot write the device registry in %s: %s", nsdir, strerror(-ret));
	}
	close(lockfd);
	return 0;
}

/* For command CMD (root only): device NAME's record in *REC, its namespace's
 * directory in NSDIR (PATH_MAX), and the namespace's lock, which the caller
 * closes; -1 once the failure has been said. */
static int find_locked(const char *cmd, const char *name, char *nsdir, struct uroce_dev_rec *rec)
{
	int ret, lockfd;

	if (need_root(cmd))
		return -1;
	if ((ret = uroce_ns_dir(nsdir, PATH_MAX))) {
		fail("cannot name this network namespace: %s", strerror(-ret));
		return -1;
	}
	lockfd = lock_ns(nsdir);
	if (lockfd < 0) {
		fail("cannot lock %s: %s", nsdir, strerror(errno));
		return -1;
	}
	if (uroce_reg_find(nsdir, name, rec)) {
		close(lockfd);
		fail("no device \"%s\" in this network namespace", name);
		return -1;
	}
	return lockfd;
}

static int link_del(int argc, char **argv)
{
	struct uroce_dev_rec rec;
	char nsdir[PATH_MAX];
	int ret, lockfd;

	if (argc != 1)
		return fail("usage: uroce link del NAME");
	lockfd = find_locked("link del", argv[0], nsdir, &rec);
	if (lockfd < 0)
		return 1;
	uroce_reg_remove(nsdir, rec.name);
	/* The last device on a netdev takes the netdev's QPN table with it
	 * (running programs keep their mapping until they close the device). */
	struct uroce_dev_rec *left;
	int n_left = -1, shared = 0;
	if (uroce_reg_load_all(nsdir, &left, &n_left) == 0) {
		for (int i = 0; i < n_left; i++)
			shared |= !strcmp(left[i].netdev, rec.netdev);
		free(left);
	}
	if (!shared) {  /* every user's QPN and QP1 member tables of the netdev */
		uroce_qpn_files_remove(strrchr(nsdir, '/') + 1, rec.netdev);
		/* ... and the xdp transport's program, if one was left (docs/xdp.md) */
#if UROCE_HAVE_XDP
		if (uroce_xdp_prog_remove(rec.netdev) < 0)
			fprintf(stderr, "uroce: %s: could not remove uroce's XDP program\n", rec.netdev);
#endif
	}
	/* ... and the last device of the namespace its rdma_cm port tables. */
	if (n_left == 0)
		uroce_cm_ports_files_remove(strrchr(nsdir, '/') + 1);
	stats_dir_remove(nsdir, rec.name);
	ret = uroce_cdev_remove(rec.uverbs);
	sync_tree(nsdir);
	close(lockfd);
	if (ret)
		return fail("device \"%s\" removed, but %s/uverbs%d: %s", rec.name,
			    UROCE_CDEV_DIR, rec.uverbs, strerror(-ret));
	return 0;
}

/* uroce link set NAME tos TOS: what the kernel's configfs default_roce_tos
 * of a port is; the CM reads it when it resolves a route. */
static int link_set(int argc, char **argv)
{
	struct uroce_dev_rec rec;
	char nsdir[PATH_MAX];
	uint8_t tos = 0;
	int ret, lockfd;

	if (argc != 3 || strcmp(argv[1], "tos"))
		return fail("usage: uroce link set NAME tos TOS");
	if (parse_tos(argv[2], &tos))
		return 1;
	lockfd = find_locked("link set", argv[0], nsdir, &rec);
	if (lockfd < 0)
		return 1;
	rec.default_roce_tos = tos;
	ret = uroce_reg_save(nsdir, &rec);
	close(lockfd);
	if (ret)
		return fail("cannot write the device registry in %s: %s", nsdir, strerror(-ret));
	return 0;
}

static void show_one(const struct uroce_dev_rec *rec)
{
	struct uroce_netdev nd;
	int known = uroce_netdev_query(rec->netdev, &nd) == 0;
	int up = known && nd.admin_up && nd.carrier;

	printf("link %s/1 state %s physical_state %s netdev %s transport %s uverbs uverbs%d",
	       rec->name, up ? "ACTIVE" : "DOWN", up ? "LINK_UP" : "DISABLED",
	       rec->netdev, uroce_transport_name(rec->transport), rec->uverbs);
	if (rec->default_roce_tos)
		printf(" tos 0x%02x", rec->default_roce_tos);
	if (!known)
		printf(" (netdev missing)");
	putchar('\n');
}

static int link_show(int argc, char **argv)
{
	struct uroce_dev_rec *recs;
	char nsdir[PATH_MAX];
	int n, ret, shown = 0;

	if ((ret = uroce_ns_dir(nsdir, sizeof(nsdir))))
		return fail("cannot name this network namespace: %s", strerror(-ret));
	if ((ret = uroce_reg_load_all(nsdir, &recs, &n)))
		return fail("cannot read %s: %s", nsdir, strerror(-ret));
	for (int i = 0; i < n; i++)
		if (argc == 0 || !strcmp(recs[i].name, argv[0])) {
			show_one(&recs[i]);
			shown++;
		}
	free(recs);
	if (argc > 0 && !shown)
		return fail("no device \"%s\" in this network namespace", argv[0]);
	return 0;
}

/* uroce link prune [-n]: what dead namespaces left (also done by every
 * other link command); -n lists it ("registry|node|shm PATH") instead. */
static int link_prune(int argc, char **argv)
{
	int dry = argc == 1 && !strcmp(argv[0], "-n"), ret;

	if (argc > 1 || (argc == 1 && !dry))
		return fail("usage: uroce link prune [-n]");
	if (need_root("link prune"))
		return 1;
	ret = uroce_prune_dead(dry);
	if (ret < 0)
		return fail("cannot prove which network namespaces are dead (%s): nothing pruned",
			    strerror(-ret));
	return 0;
}

int cmd_link(int argc, char **argv)
{
	/* What namespaces that died left behind goes first (root only): their
	 * uverbs numbers become free, and nothing stale piles up. */
	if (argc > 0 && !strcmp(argv[0], "prune"))
		return link_prune(argc - 1, argv + 1);
	if (geteuid() == 0)
		uroce_prune_dead(0);
	if (argc == 0 || !strcmp(argv[0], "show") || !strcmp(argv[0], "list"))
		return link_show(argc ? argc - 1 : 0, argv + 1);
	if (!strcmp(argv[0], "add"))
		return link_add(argc - 1, argv + 1);
	if (!strcmp(argv[0], "del") || !strcmp(argv[0], "delete"))
		return link_del(argc - 1, argv + 1);
	if (!strcmp(argv[0], "set"))
		return link_set(argc - 1, argv + 1);
	return fail("unknown link command \"%s\" (add, set, del, show, prune)", argv[0]);
}
