// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Refuse to register under a libibverbs whose private ABI layout is not
 * the one this provider was compiled for.
 *
 * Two rdma-core releases with the same PABI number can lay verbs_qp and
 * verbs_context_ops out differently (39, 44 and 45 under PABI 34: ibv_qp_ex
 * grew; 61 and 62 under PABI 59: verbs_context_ops grew), and the
 * dynamic linker cannot see that, so a copied or stale .so would load and
 * then misbehave.  rdma-core installs libibverbs as
 * libibverbs.so.1.<n>.<major>.<minor> (its CMake VERSION), with
 * libibverbs.so.1 a link to it; the file the process actually loaded
 * therefore names the release.
 */
#include <limits.h>
#include <link.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "verbs/abi_guard.h"
#include <uroce/provider_abi.h>

struct loaded {
	char path[PATH_MAX];
};

static int find_ibverbs(struct dl_phdr_info *info, size_t size, void *data)
{
	struct loaded *l = data;
	const char *base = strrchr(info->dlpi_name, '/');

	base = base ? base + 1 : info->dlpi_name;
	if (strncmp(base, "libibverbs.so", strlen("libibverbs.so")))
		return 0;
	snprintf(l->path, sizeof(l->path), "%s", info->dlpi_name);
	return 1;
}

/* Read a decimal number at *s; advances *s.  -1 if there is none. */
static long take_number(const char **s)
{
	long v = 0;

	if (**s < '0' || **s > '9')
		return -1;
	while (**s >= '0' && **s <= '9' && v < 100000)
		v = v * 10 + (*(*s)++ - '0');
	return v;
}

int uroce_abi_parse_soname(const char *file, unsigned int *major, unsigned int *minor)
{
	const char *base = strrchr(file, '/');
	const char *s;
	long n;

	base = base ? base + 1 : file;
	if (strncmp(base, "libibverbs.so.1.", strlen("libibverbs.so.1.")))
		return -1;
	s = base + strlen("libibverbs.so.1.");
	if (take_number(&s) < 0 || *s++ != '.')      /* 1.<n>: the library's minor */
		return -1;
	if ((n = take_number(&s)) < 0)               /* the rdma-core major */
		return -1;
	*major = n;
	*minor = 0;
	if (*s == '.' && (s++, (n = take_number(&s)) >= 0))
		*minor = n;
	return 0;
}

bool uroce_abi_guard_ok(void)
{
	struct loaded l = { .path = "" };
	char real[PATH_MAX];
	unsigned int major, minor;

	dl_iterate_phdr(find_ibverbs, &l);
	if (!l.path[0] || !realpath(l.path, real) ||
	    uroce_abi_parse_soname(real, &major, &minor)) {
		fprintf(stderr, "uroce: not registering: cannot tell which rdma-core release "
			"libibverbs (%s) is; this uroce was built for rdma-core %s "
			"(provider ABI %d)\n", l.path[0] ? l.path : "not found",
			UROCE_RDMA_CORE_RELEASE, PABI_VERSION);
		return false;
	}
	if (major >= PABI_FIRST && major <= PABI_LAST)
		return true;
	fprintf(stderr, "uroce: not registering: built for rdma-core %s (provider ABI %d, "
		"layout of rdma-core %d-%d) but this process's libibverbs is rdma-core "
		"%u.%u (%s); rebuild uroce against it\n", UROCE_RDMA_CORE_RELEASE,
		PABI_VERSION, PABI_FIRST, PABI_LAST, major, minor, real);
	return false;
}
