// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * The ABI guard reads the rdma-core release from libibverbs' file name, and
 * accepts the libibverbs this test (built like the provider) runs with.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "verbs/abi_guard.h"

static const struct {
	const char *file;
	int ret;
	unsigned int major, minor;
} cases[] = {
	{ "libibverbs.so.1.14.44.0", 0, 44, 0 },
	{ "/usr/lib/x86_64-linux-gnu/libibverbs.so.1.14.56.1", 0, 56, 1 },
	{ "/usr/lib64/libibverbs.so.1.18.65.0", 0, 65, 0 },
	{ "libibverbs.so.1.15.59", 0, 59, 0 },
	{ "/lib/libibverbs.so.1", -1, 0, 0 },      /* the link itself, unresolved */
	{ "libibverbs.so.1.14", -1, 0, 0 },
	{ "libibverbs.so.1.14.x.0", -1, 0, 0 },
	{ "libmlx5.so.1.24.44.0", -1, 0, 0 },
	{ "", -1, 0, 0 },
};

int main(void)
{
	int failures = 0;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		unsigned int major = 0, minor = 0;
		int ret = uroce_abi_parse_soname(cases[i].file, &major, &minor);
		int ok = ret == cases[i].ret &&
			 (ret || (major == cases[i].major && minor == cases[i].minor));

		printf("%s \"%s\" -> %d (%u.%u)\n", ok ? "ok:" : "FAIL:", cases[i].file, ret, major, minor);
		failures += !ok;
	}
	/* As when libibverbs loads the provider: libibverbs is in the process. */
	if (!dlopen("libibverbs.so.1", RTLD_NOW | RTLD_GLOBAL)) {
		printf("FAIL: %s\n", dlerror());
		return 1;
	}
	if (!uroce_abi_guard_ok()) {
		printf("FAIL: the guard refuses this process's own libibverbs\n");
		failures++;
	} else {
		printf("ok: the guard accepts this process's libibverbs (rdma-core %s)\n",
		       UROCE_RDMA_CORE_RELEASE);
	}
	printf("%d failed\n", failures);
	return failures ? 1 : 0;
}
