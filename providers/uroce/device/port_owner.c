// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Who holds a UDP port (port_owner.h).  /proc/net/udp[6] gives each
 * socket's bound address, uid and inode; the process is the one with
 * "socket:[INODE]" among its /proc/PID/fd.  A socket that no process has
 * open is the kernel's own: rdma_rxe's is made by udp_sock_create() in
 * rxe_net.c (rxe_setup_udp_tunnel), bound to *:4791, with no file; a
 * vxlan or fou port is another.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/socket.h>

#include "device/port_owner.h"

#define PROVIDER_MAPPED "/liburoce-rdmav"

/* ADDR (4 or 16 bytes) as /proc/net/udp[6] prints it: each 32-bit word as
 * the host reads it, then ":PORT". */
static void proc_addr(const uint8_t *addr, int words, uint16_t port, char *out, size_t len)
{
	int n = 0;

	for (int i = 0; i < words; i++) {
		uint32_t w;

		memcpy(&w, addr + 4 * i, 4);
		n += snprintf(out + n, len - n, "%08X", w);
	}
	snprintf(out + n, len - n, ":%04X", port);
}

static bool rxe_loaded(void)
{
	return access("/sys/module/rdma_rxe", F_OK) == 0;
}

/* The pid that has socket inode INODE open, or 0 if none is visible. */
static pid_t inode_pid(unsigned long inode)
{
	char want[40], link[64], path[300];
	DIR *proc = opendir("/proc");
	struct dirent *p;
	pid_t found = 0;

	if (!proc)
		return 0;
	snprintf(want, sizeof(want), "socket:[%lu]", inode);
	while (!found && (p = readdir(proc))) {
		struct dirent *f;
		DIR *fds;

		if (p->d_name[0] < '1' || p->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/fd", p->d_name);
		fds = opendir(path);
		if (!fds)
			continue; /* gone, or another user's */
		while (!found && (f = readdir(fds))) {
			ssize_t n = readlinkat(dirfd(fds), f->d_name, link, sizeof(link) - 1);

			if (n > 0 && (link[n] = 0, !strcmp(link, want)))
				found = (pid_t)atoi(p->d_name);
		}
		closedir(fds);
	}
	closedir(proc);
	return found;
}

/* Process PID's name, and whether it has uroce's provider mapped. */
static void pid_facts(pid_t pid, struct uroce_port_owner *o)
{
	char path[64], line[512];
	FILE *f;

	snprintf(o->comm, sizeof(o->comm), "pid %d", (int)pid);
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	if ((f = fopen(path, "re"))) {
		if (fgets(o->comm, sizeof(o->comm), f))
			o->comm[strcspn(o->comm, "\n")] = 0;
		fclose(f);
	}
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	if ((f = fopen(path, "re"))) {
		while (!o->uroce && fgets(line, sizeof(line), f))
			o->uroce = strstr(line, PROVIDER_MAPPED) != NULL;
		fclose(f);
	}
}

/*
 * Fill *O for the socket of INODE and UID (WILDCARD: bound to *:PORT);
 * false if it is to be passed over.  A socket no process has open is the
 * kernel's (its sockets have inodes but no file); only root sees every
 * process's files, so to others a socket of uid 0 on *:PORT with rdma_rxe
 * loaded is rxe's, and any other unseen one is "processes of uid N".
 */
static bool owner_of(unsigned long inode, long uid, bool wildcard, int flags,
		     struct uroce_port_owner *o)
{
	o->uid = uid;
	o->wildcard = wildcard;
	o->pid = inode_pid(inode);
	if (o->pid) {
		o->kind = UROCE_OWNER_PROCESS;
		pid_facts(o->pid, o);
	} else if (!geteuid() || (!uid && wildcard && rxe_loaded()))
		o->kind = UROCE_OWNER_KERNEL;
	else
		o->kind = UROCE_OWNER_UID;
	return !o->uroce || (!(flags & UROCE_OWNER_SKIP_ALL_UROCE) && uid != (long)geteuid());
}

/* Search TABLE for a socket bound to one of the N addresses WANT (in
 * /proc's notation; the second is the wildcard). */
static int search(const char *table, char want[][48], int n, int flags, struct uroce_port_owner *o)
{
	char line[512], local[64];
	unsigned long uid, inode;
	FILE *f = fopen(table, "re");
	int found = 0;

	if (!f)
		return -errno;
	while (!found && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%*s %63s %*s %*s %*s %*s %*s %lu %*s %lu", local, &uid, &inode) != 3)
			continue;
		for (int i = 0; i < n && !found; i++)
			if (!strcmp(local, want[i]) && owner_of(inode, (long)uid, i == 1, flags, o))
				found = 1;
	}
	fclose(f);
	return found;
}

int uroce_port_owner(int family, const uint8_t *ip16, uint16_t port, int flags,
		     struct uroce_port_owner *o)
{
	static const uint8_t any[16];
	uint8_t mapped[16] = { [10] = 0xff, [11] = 0xff };
	char want[2][48];
	int ret;

	memset(o, 0, sizeof(*o));
	if (family == AF_INET) {
		/* *:PORT of IPv4, then a dual-stack [::]:PORT or [::ffff:IP]:PORT */
		proc_addr(ip16 + 12, 1, port, want[0], sizeof(want[0]));
		proc_addr(any, 1, port, want[1], sizeof(want[1]));
		ret = search("/proc/net/udp", want, 2, flags, o);
		if (ret == 0) {
			memcpy(mapped + 12, ip16 + 12, 4);
			proc_addr(mapped, 4, port, want[0], sizeof(want[0]));
			proc_addr(any, 4, port, want[1], sizeof(want[1]));
			ret = search("/proc/net/udp6", want, 2, flags, o);
		}
	} else {
		proc_addr(ip16, 4, port, want[0], sizeof(want[0]));
		proc_addr(any, 4, port, want[1], sizeof(want[1]));
		ret = search("/proc/net/udp6", want, 2, flags, o);
	}
	return ret;
}

void uroce_port_owner_say(const char *dev, const uint8_t *ip16, uint16_t port,
			  const struct uroce_port_owner *o)
{
	bool v4 = !memcmp(ip16, (const uint8_t[12]){ [10] = 0xff, [11] = 0xff }, 12);
	char addr[INET6_ADDRSTRLEN] = "?", who[96];

	inet_ntop(v4 ? AF_INET : AF_INET6, v4 ? ip16 + 12 : ip16, addr, sizeof(addr));
	switch (o->kind) {
	case UROCE_OWNER_KERNEL:
		snprintf(who, sizeof(who), "the kernel (%s)",
			 o->wildcard && rxe_loaded() ? "rdma_rxe" : "a socket no process has open");
		break;
	case UROCE_OWNER_PROCESS:
		snprintf(who, sizeof(who), "%s (pid %d, uid %ld)", o->comm, (int)o->pid, o->uid);
		break;
	case UROCE_OWNER_UID:
		snprintf(who, sizeof(who), "processes of uid %ld", o->uid);
		break;
	}
	fprintf(stderr, "uroce: %s: %s port %u is held by %s%s; uroce cannot share it "
		"(see uroce's docs/transport.md)\n", dev, addr, port, who,
		o->wildcard ? " on all addresses" : "");
}
