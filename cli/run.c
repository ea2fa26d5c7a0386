// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * uroce run: start an unmodified program so that libibverbs finds this
 * network namespace's uroce devices: a fresh sysfs-like tree (the GIDs
 * follow the interface's addresses) behind SYSFS_PATH, and our provider
 * in RDMAV_DRIVERS.  uroce env: print the same settings as shell export
 * lines, for a whole shell or CI job (eval "$(uroce env)").
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "cli.h"
#include "provider_version.h"
#include "device/device.h"
#include "knob/knob.h"

/* Is this uroce binary the one in the build tree (not installed)? */
static int from_build_tree(void)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n <= 0)
		return 0;
	exe[n] = 0;
	return !strncmp(exe, UROCE_BUILD_ROOT "/", strlen(UROCE_BUILD_ROOT) + 1);
}

/* The provider that belongs to this uroce binary: build tree or installed. */
static const char *provider_prefix(void)
{
	const char *env = uroce_knob_str(UROCE_KNOB_PROVIDER);

	if (env)
		return env;
	return from_build_tree() ? UROCE_PROVIDER_BUILD : UROCE_PROVIDER_INSTALLED;
}

/* Is VALUE already an element of LIST (separated by SEP)? */
static int in_list(const char *list, const char *value, char sep)
{
	size_t n = strlen(value);

	for (const char *p = list; p && *p; p = strchr(p, sep), p = p ? p + 1 : NULL)
		if (!strncmp(p, value, n) && (p[n] == sep || p[n] == 0))
			return 1;
	return 0;
}

/* Prepend VALUE to the SEP-separated list in environment variable NAME
 * (once: a second `eval "$(uroce env)"` changes nothing). */
static void env_prepend(const char *name, const char *value, char sep)
{
	const char *old = getenv(name); /* not a knob: the list we extend */
	char buf[4 * PATH_MAX];

	if (old && in_list(old, value, sep))
		return;
	if (old && *old)
		snprintf(buf, sizeof(buf), "%s%c%s", value, sep, old);
	else
		snprintf(buf, sizeof(buf), "%s", value);
	setenv(name, buf, 1);
}

/* The registry's tree if we may refresh it, else a private copy of it. */
static int pick_sysroot(const char *nsdir, char *buf, size_t len)
{
	const char *base = uroce_knob_str(UROCE_KNOB_XDG_RUNTIME_DIR);
	char dir[PATH_MAX];
	int ret;

	if (snprintf(buf, len, "%s/sys", nsdir) >= (int)len)
		return -ENAMETOOLONG;
	if (access(buf, W_OK) == 0)
		return 0;
	if (access(base, W_OK))
		base = "/tmp";
	snprintf(dir, sizeof(dir), "%s/uroce-%u", base, (unsigned int)getuid());
	if ((ret = uroce_mkdirs(dir, 0700)))
		return ret;
	chmod(dir, 0700);
	if (snprintf(buf, len, "%s/%s/sys", dir, strrchr(nsdir, '/') + 1) >= (int)len)
		return -ENAMETOOLONG;
	return uroce_mkdirs(buf, 0700);
}

/* The variables uroce run sets, in this order. */
static const char *const env_names[] = { "SYSFS_PATH", "RDMAV_DRIVERS", "LD_PRELOAD" };

/* Sync this namespace's device tree and set the variables in our environment. */
static int prepare_env(void)
{
	struct uroce_dev_rec *recs;
	char nsdir[PATH_MAX], sysroot[PATH_MAX];
	int n, ret;

	if ((ret = uroce_ns_dir(nsdir, sizeof(nsdir))))
		return fail("cannot name this network namespace: %s", strerror(-ret));
	if ((ret = uroce_reg_load_all(nsdir, &recs, &n)))
		return fail("cannot read the device registry %s: %s", nsdir, strerror(-ret));
	if (n == 0)
		return fail("no uroce devices in this network namespace "
			    "(add one as root: uroce link add NAME netdev IFACE)");
	if ((ret = pick_sysroot(nsdir, sysroot, sizeof(sysroot))) ||
	    (ret = uroce_tree_sync(sysroot, recs, n))) {
		free(recs);
		return fail("cannot write the device tree %s: %s", sysroot, strerror(-ret));
	}
	free(recs);

	setenv("SYSFS_PATH", sysroot, 1);
	env_prepend("RDMAV_DRIVERS", provider_prefix(), ':');
	/* Completion channels need our ibv_create_comp_channel (preload/preload.c);
	 * libibverbs finds the devices over RDMA netlink, which the preload
	 * answers, merged with the kernel's where it has RDMA (docs/netlink.md). */
	env_prepend("LD_PRELOAD", from_build_tree() ? UROCE_PRELOAD_BUILD : UROCE_PRELOAD_INSTALLED, ' ');
	return 0;
}

int cmd_run(int argc, char **argv)
{
	if (argc > 0 && !strcmp(argv[0], "--"))
		argc--, argv++;
	if (argc == 0)
		return fail("usage: uroce run [--] CMD [ARGS...]");
	if (prepare_env())
		return 1;
	execvp(argv[0], argv);
	return fail("cannot run \"%s\": %s", argv[0], strerror(errno)) + 126;
}

/* VALUE in single quotes for a POSIX shell. */
static void put_quoted(const char *value)
{
	putchar('\'');
	for (const char *p = value; *p; p++)
		if (*p == '\'')
			fputs("'\\''", stdout);
		else
			putchar(*p);
	putchar('\'');
}

int cmd_env(int argc, char **argv)
{
	if (argc > 0)
		return fail("usage: eval \"$(uroce env)\"");
	if (prepare_env())
		return 1;
	for (size_t i = 0; i < sizeof(env_names) / sizeof(env_names[0]); i++) {
		printf("export %s=", env_names[i]);
		put_quoted(getenv(env_names[i])); /* not a knob: what we just set */
		putchar('\n');
	}
	return 0;
}
