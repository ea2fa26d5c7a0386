// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * uroce stat [-a] [-p] [-j] [DEV]: the counters of a device (every device
 * of this network namespace without DEV), summed over every process that
 * uses or used it -- in the spirit of `rdma statistic` (docs/stats.md).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uroce/stats.h>

#include "cli.h"
#include "device/device.h"

struct opts {
	bool all, procs, json;
};

/* The live processes' records of one device, for -p. */
struct procs {
	struct uroce_stats_shm *recs;
	int n, cap;
};

static void keep_proc(const struct uroce_stats_shm *rec, void *arg)
{
	struct procs *p = arg;

	if (p->n == p->cap) {
		int cap = p->cap ? 2 * p->cap : 8;
		struct uroce_stats_shm *r = realloc(p->recs, cap * sizeof(*r));

		if (!r)
			return;
		p->recs = r;
		p->cap = cap;
	}
	p->recs[p->n++] = *rec;
}

static int by_pid(const void *a, const void *b)
{
	const struct uroce_stats_shm *x = a, *y = b;

	return (x->pid > y->pid) - (x->pid < y->pid);
}

static void comm_of(int pid, char *buf, size_t len)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	buf[0] = 0;
	f = fopen(path, "re");
	if (f) {
		if (fgets(buf, len, f))
			buf[strcspn(buf, "\n")] = 0;
		fclose(f);
	}
}

/* A JSON string of S (names are [A-Za-z0-9_.-]; comm may be anything). */
static void json_str(const char *s)
{
	putchar('"');
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			printf("\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			printf("\\u%04x", *s);
		else
			putchar(*s);
	}
	putchar('"');
}

static void print_counters(const uint64_t *c, const struct opts *o, const char *indent)
{
	bool first = true;

	if (o->json)
		putchar('{');
	for (int i = 0; i < UROCE_STAT_COUNT; i++) {
		if (!c[i] && !o->all)
			continue;
		if (o->json)
			printf("%s\"%s\":%llu", first ? "" : ",", uroce_stat_name(i),
			       (unsigned long long)c[i]);
		else
			printf("%s%s %llu\n", indent, uroce_stat_name(i), (unsigned long long)c[i]);
		first = false;
	}
	if (o->json)
		putchar('}');
}

static int show_dev(const char *nsdir, const char *dev, const struct opts *o, bool first)
{
	uint64_t total[UROCE_STAT_COUNT];
	struct procs procs = { 0 };
	char dir[PATH_MAX], comm[64];
	int ret;

	if ((ret = uroce_stats_dir(dir, sizeof(dir), nsdir, dev)))
		return fail("%s: %s", dev, strerror(-ret));
	ret = uroce_stats_collect(dir, total, o->procs ? keep_proc : NULL, &procs);
	if (ret == -ENOENT) /* nothing ever published */
		memset(total, 0, sizeof(total));
	else if (ret)
		return fail("cannot read %s: %s", dir, strerror(-ret));
	qsort(procs.recs, procs.n, sizeof(*procs.recs), by_pid);

	if (o->json) {
		printf("%s{\"ifname\":", first ? "" : ",");
		json_str(dev);
		printf(",\"port\":1,\"counters\":");
		print_counters(total, o, "");
		if (o->procs) {
			printf(",\"processes\":[");
			for (int i = 0; i < procs.n; i++) {
				comm_of(procs.recs[i].pid, comm, sizeof(comm));
				printf("%s{\"pid\":%d,\"comm\":", i ? "," : "", (int)procs.recs[i].pid);
				json_str(comm);
				printf(",\"counters\":");
				print_counters(procs.recs[i].counters, o, "");
				putchar('}');
			}
			putchar(']');
		}
		putchar('}');
	} else {
		printf("link %s/1\n", dev);
		print_counters(total, o, "    ");
		for (int i = 0; i < procs.n; i++) {
			comm_of(procs.recs[i].pid, comm, sizeof(comm));
			printf("  process %d %s\n", (int)procs.recs[i].pid, comm);
			print_counters(procs.recs[i].counters, o, "    ");
		}
	}
	free(procs.recs);
	return 0;
}

static void usage_stat(FILE *f)
{
	fputs("Usage: uroce stat [-a] [-p] [-j] [DEV]\n"
	      "  Counters of DEV (default: every device of this network namespace),\n"
	      "  summed over all processes that use or used it.\n"
	      "  -a  all counters, also those at zero\n"
	      "  -p  also each running process's own counters\n"
	      "  -j  JSON\n",
	      f);
}

int cmd_stat(int argc, char **argv)
{
	struct uroce_dev_rec *recs;
	struct opts o = { 0 };
	const char *dev = NULL;
	char nsdir[PATH_MAX];
	int n, ret, shown = 0, rc = 0;

	for (int i = 0; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			usage_stat(stdout);
			return 0;
		}
		if (a[0] == '-' && a[1] && a[1] != '-') {
			for (const char *c = a + 1; *c; c++) {
				if (*c == 'a')
					o.all = true;
				else if (*c == 'p')
					o.procs = true;
				else if (*c == 'j')
					o.json = true;
				else {
					usage_stat(stderr);
					return fail("unknown option \"-%c\"", *c);
				}
			}
		} else if (!strcmp(a, "show") && i == 0) {
			continue; /* `uroce stat show DEV`, as rdma statistic */
		} else if (!dev && a[0] != '-') {
			dev = a;
		} else {
			usage_stat(stderr);
			return fail("unexpected argument \"%s\"", a);
		}
	}
	if ((ret = uroce_ns_dir(nsdir, sizeof(nsdir))))
		return fail("cannot name this network namespace: %s", strerror(-ret));
	if ((ret = uroce_reg_load_all(nsdir, &recs, &n)))
		return fail("cannot read %s: %s", nsdir, strerror(-ret));
	for (int i = 0; i < n && dev && !shown; i++)
		shown = !strcmp(recs[i].name, dev);
	if (dev && !shown) {
		free(recs);
		return fail("no device \"%s\" in this network namespace", dev);
	}
	shown = 0;
	if (o.json)
		putchar('[');
	for (int i = 0; i < n; i++) {
		if (dev && strcmp(recs[i].name, dev))
			continue;
		rc |= show_dev(nsdir, recs[i].name, &o, shown == 0);
		shown++;
	}
	free(recs);
	if (o.json)
		puts("]");
	return rc;
}
