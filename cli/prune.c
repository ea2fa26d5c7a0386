// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Pruning what dead network namespaces left behind: their registries
 * ($UROCE_RUNDIR/ns-<cookie>), the /dev/infiniband nodes of those
 * registries' devices, and their /dev/shm files (docs/design.md, "Dead
 * namespaces").  Only what is proven dead goes:
 *
 *   A namespace is alive while something can still be in it: a task
 *   (/proc/PID/task/TID/ns/net), a bind mount in any mount namespace of
 *   any task (an nsfs line of /proc/PID/mountinfo: `ip netns add` keeps a
 *   namespace alive with no process in it), or an open namespace fd
 *   (/proc/PID/fd/N -> net:[INO]).  Each live namespace is entered
 *   (setns) to read its cookie, which the kernel never reuses.  A
 *   registry or file named after a cookie that no live namespace has is
 *   dead.  The scan runs twice and a cookie must be missing from both, so
 *   that a reference moving (a task mounting its namespace and exiting)
 *   while the scan runs is not missed.
 *
 * Anything that stops the proof (not root, an unreadable /proc entry, a
 * namespace that cannot be entered) prunes nothing.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "cli.h"
#include "device/device.h"
#include "knob/knob.h"

#ifndef SO_NETNS_COOKIE
#define SO_NETNS_COOKIE 71
#endif

struct idset {
	uint64_t *v;
	size_t n, cap;
};

static int idset_has(const struct idset *s, uint64_t id)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i] == id)
			return 1;
	return 0;
}

static int idset_add(struct idset *s, uint64_t id)
{
	if (idset_has(s, id))
		return 0;
	if (s->n == s->cap) {
		size_t cap = s->cap ? 2 * s->cap : 64;
		uint64_t *v = realloc(s->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n++] = id;
	return 0;
}

/* What one scan found: live namespaces by inode and by cookie. */
struct scan {
	struct idset inos, cookies;
	struct idset prints;        /* fingerprints of the namespaces entered */
	struct idset opaque;        /* ... and of threads we may not inspect */
	int self_fd;        /* our own namespace, to come back to */
	int err;            /* the proof failed: prune nothing */
};

/* The proof failed at PATH (errno ERR): say where with UROCE_DEBUG. */
static void no_proof(struct scan *sc, const char *path, int err)
{
	sc->err = err;
	if (uroce_knob_on(UROCE_KNOB_DEBUG))
		fprintf(stderr, "uroce: prune: %s: %s\n", path, strerror(err));
}

/* The cookie of the namespace this thread is in; 0 if it cannot be read. */
static uint64_t current_cookie(void)
{
	uint64_t cookie = 0;
	socklen_t sl = sizeof(cookie);
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0 || getsockopt(fd, SOL_SOCKET, SO_NETNS_COOKIE, &cookie, &sl))
		cookie = 0;
	if (fd >= 0)
		close(fd);
	return cookie;
}

/*
 * A namespace's fingerprint, read through a /proc net directory (which
 * needs no ptrace access): the hashed address of its kernel rtnetlink
 * socket (the "Eth 0, Pid 0" line of net/netlink), one per namespace for
 * its whole life.  0 if unreadable.
 */
static uint64_t fingerprint(const char *netdir)
{
	char path[PATH_MAX], line[256];
	unsigned long long sk;
	unsigned int eth, pid;
	uint64_t fp = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/netlink", netdir);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (!fp && fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx %u %u", &sk, &eth, &pid) == 3 && eth == 0 && pid == 0)
			fp = sk;
	fclose(f);
	return fp;
}

/* Note the network namespace at PATH (a /proc ns link, an fd, a mount). */
static void note_ns(struct scan *sc, const char *path)
{
	struct stat st;
	uint64_t cookie;
	int fd;

	if (sc->err)
		return;
	if (stat(path, &st)) {
		if (errno != ENOENT && errno != ESRCH)
			no_proof(sc, path, errno); /* gone: fine; unreadable: no proof */
		return;
	}
	if (idset_has(&sc->inos, st.st_ino))
		return;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		if (errno != ENOENT && errno != ESRCH)
			no_proof(sc, path, errno);
		return;
	}
	if (setns(fd, CLONE_NEWNET)) {
		no_proof(sc, path, errno);
		close(fd);
		return;
	}
	close(fd);
	cookie = current_cookie();
	if (idset_add(&sc->prints, fingerprint("/proc/self/net")))
		sc->err = ENOMEM;
	if (setns(sc->self_fd, CLONE_NEWNET)) {
		/* Cannot come back: stop here, whatever happens next. */
		fprintf(stderr, "uroce: cannot return to our network namespace: %s\n", strerror(errno));
		exit(1);
	}
	if (!cookie)
		sc->err = EOPNOTSUPP;
	else if (idset_add(&sc->inos, st.st_ino) || idset_add(&sc->cookies, cookie))
		sc->err = ENOMEM;
}

/* "\040" in a mountinfo path is a space (and so on for \011, \012, \134). */
static void unescape(char *s)
{
	char *d = s;

	for (; *s; s++, d++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*d = (char)((s[1] - '0') << 6 | (s[2] - '0') << 3 | (s[3] - '0'));
			s += 3;
		} else {
			*d = *s;
		}
	}
	*d = 0;
}

/* Bind mounts of network namespaces seen by PID's mount namespace. */
static void scan_mounts(struct scan *sc, const char *pid, struct idset *mntns)
{
	char path[2 * PATH_MAX], line[4096];
	struct stat st;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%s/ns/mnt", pid);
	if (stat(path, &st) || idset_has(mntns, st.st_ino))
		return; /* gone, or a mount namespace already read */
	if (idset_add(mntns, st.st_ino)) {
		sc->err = ENOMEM;
		return;
	}
	snprintf(path, sizeof(path), "/proc/%s/mountinfo", pid);
	f = fopen(path, "re");
	if (!f) {
		if (errno != ENOENT && errno != ESRCH)
			no_proof(sc, path, errno);
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		char root[256], point[PATH_MAX], fstype[64], *sep;

		/* ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [TAGS...] - FSTYPE ... */
		sep = strstr(line, " - ");
		if (!sep || sscanf(sep + 3, "%63s", fstype) != 1 || strcmp(fstype, "nsfs"))
			continue;
		if (sscanf(line, "%*s %*s %*s %255s %4095s", root, point) != 2 ||
		    strncmp(root, "net:[", 5))
			continue;
		unescape(point);
		snprintf(path, sizeof(path), "/proc/%s/root%s", pid, point);
		note_ns(sc, path);
	}
	fclose(f);
}

/* Each entry of /proc/PID/SUB ("fd", "task"): what the link at
 * /proc/PID/SUB/ENTRY/LEAF (LEAF "" for the entry itself) names, if it is a
 * network namespace, is noted.  A link root may not read (a
 * ptrace-protected process) is left to OPAQUE, which is told its entry's
 * directory; without OPAQUE the process's remaining entries are skipped. */
static void scan_links(struct scan *sc, const char *pid, const char *sub, const char *leaf,
		       void (*opaque)(struct scan *sc, const char *entry))
{
	char dir[300], path[PATH_MAX + 300], target[64];
	struct dirent *e;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%s/%s", pid, sub);
	d = opendir(dir);
	if (!d) {
		if (errno != ENOENT && errno != ESRCH)
			no_proof(sc, dir, errno);
		return;
	}
	while ((e = readdir(d)) && !sc->err) {
		ssize_t n;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s%s", dir, e->d_name, leaf);
		n = readlink(path, target, sizeof(target) - 1);
		if (n < 0 && errno == EACCES) {
			if (!opaque)
				break; /* its fds: see docs/design.md */
			snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
			opaque(sc, path);
			continue;
		}
		if (n <= 0)
			continue;
		target[n] = 0;
		if (!strncmp(target, "net:[", 5))
			note_ns(sc, path);
	}
	closedir(d);
}

/* A thread root may not inspect (ptrace-protected): its namespace, known
 * by its fingerprint, must be one we entered (checked after the scan). */
static void opaque_thread(struct scan *sc, const char *taskdir)
{
	char path[PATH_MAX + 8];
	uint64_t fp;

	snprintf(path, sizeof(path), "%s/net", taskdir);
	fp = fingerprint(path);
	if (!fp)
		no_proof(sc, path, EACCES);
	else if (idset_add(&sc->opaque, fp))
		sc->err = ENOMEM;
}

/* One pass over every process: tasks, then mounts, then fds. */
static void scan_once(struct scan *sc)
{
	struct idset mntns = { 0 };
	struct dirent *e;
	DIR *d = opendir("/proc");

	if (!d) {
		sc->err = errno;
		return;
	}
	while ((e = readdir(d)) && !sc->err) {
		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		/* Every thread's namespace (threads may be in different ones). */
		scan_links(sc, e->d_name, "task", "/ns/net", opaque_thread);
		scan_mounts(sc, e->d_name, &mntns);
		scan_links(sc, e->d_name, "fd", "", NULL);
	}
	closedir(d);
	free(mntns.v);
	for (size_t i = 0; i < sc->opaque.n && !sc->err; i++)
		if (!idset_has(&sc->prints, sc->opaque.v[i]))
			no_proof(sc, "a thread's namespace that cannot be entered", EACCES);
}

/* Is the namespace of registry/file id NSID ("ns-<cookie>" or
 * "ns-i<inode>") proven dead? */
static int ns_dead(const struct scan *sc, const char *nsid)
{
	char *end;
	uint64_t id;

	if (strncmp(nsid, "ns-", 3))
		return 0;
	if (nsid[3] == 'i') {
		id = strtoull(nsid + 4, &end, 10);
		return end != nsid + 4 && *end == 0 && !idset_has(&sc->inos, id);
	}
	id = strtoull(nsid + 3, &end, 10);
	return end != nsid + 3 && *end == 0 && id && !idset_has(&sc->cookies, id);
}

/* /dev/shm/uroce-<nsid>[-.]*: the shared tables of namespace NSID ("ns-..."),
 * whichever registry made its devices.  NAME's namespace id, or "". */
static void shm_nsid(const char *name, char *nsid, size_t len)
{
	const char *dash;

	nsid[0] = 0;
	/* uroce-<nsid>-<netdev>.* (QPN, QP1 tables), uroce-<nsid>.* (CM ports) */
	if (strncmp(name, "uroce-ns-", 9) || !(dash = strpbrk(name + 9, "-.")) ||
	    (size_t)(dash - name - 6) >= len)
		return;
	memcpy(nsid, name + 6, dash - name - 6);
	nsid[dash - name - 6] = 0;
}

/* Remove registry NAME of RUNDIR: claim it by renaming (two pruners never
 * both clean one), remove its devices' nodes, then the tree.  With DRY,
 * only print what would go. */
static void prune_registry(const char *rundir, const char *name, int dry)
{
	char dir[PATH_MAX], claimed[PATH_MAX + 32];
	struct uroce_dev_rec *recs;
	int n;

	snprintf(dir, sizeof(dir), "%s/%s", rundir, name);
	snprintf(claimed, sizeof(claimed), "%s/.dead-%s.%d", rundir, name, (int)getpid());
	if (dry)
		printf("registry %s\n", dir);
	else if (rename(dir, claimed))
		return;
	if (uroce_reg_load_all(dry ? dir : claimed, &recs, &n) == 0) {
		for (int i = 0; i < n; i++)
			if (dry)
				printf("node %s/uverbs%d\n", UROCE_CDEV_DIR, recs[i].uverbs);
			else
				uroce_cdev_remove(recs[i].uverbs);
		free(recs);
	}
	if (!dry)
		uroce_rmtree(claimed);
}

int uroce_prune_dead(int dry)
{
	struct scan sc[2] = { { .self_fd = -1 }, { .self_fd = -1 } };
	const char *rundir = uroce_knob_str(UROCE_KNOB_RUNDIR);
	int pruned = 0, lockfd, err = 0;
	char path[PATH_MAX];
	struct dirent *e;
	DIR *d;

	if (geteuid() != 0)
		return -EPERM; /* cannot read every task's namespaces: no proof */
	/* One pruner at a time per registry root. */
	snprintf(path, sizeof(path), "%s/.prune.lock", rundir);
	if ((err = uroce_mkdirs(rundir, 0755)))
		return err;
	lockfd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (lockfd < 0)
		return -errno;
	flock(lockfd, LOCK_EX);
	for (int i = 0; i < 2; i++) {
		sc[i].self_fd = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
		if (sc[i].self_fd < 0)
			sc[i].err = errno;
		else
			scan_once(&sc[i]);
		if (sc[i].self_fd >= 0)
			close(sc[i].self_fd);
		err = err ?: -sc[i].err;
	}
	if (err || !sc[0].cookies.n || !sc[1].cookies.n) {
		err = err ?: -EOPNOTSUPP;
		goto out;
	}
	d = opendir(rundir);
	if (d) {
		while ((e = readdir(d)))
			if (ns_dead(&sc[0], e->d_name) && ns_dead(&sc[1], e->d_name)) {
				prune_registry(rundir, e->d_name, dry);
				pruned++;
			}
		closedir(d);
	}
	d = opendir("/dev/shm");
	if (d) {
		while ((e = readdir(d))) {
			char nsid[64];

			shm_nsid(e->d_name, nsid, sizeof(nsid));
			if (!nsid[0] || !ns_dead(&sc[0], nsid) || !ns_dead(&sc[1], nsid))
				continue;
			if (dry)
				printf("shm /dev/shm/%s\n", e->d_name);
			else if (unlinkat(dirfd(d), e->d_name, 0))
				continue;
			pruned++;
		}
		closedir(d);
	}
out:
	for (int i = 0; i < 2; i++) {
		free(sc[i].inos.v);
		free(sc[i].cookies.v);
		free(sc[i].prints.v);
		free(sc[i].opaque.v);
	}
	close(lockfd);
	return err ?: pruned;
}
