// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * The provider ABI as the installed libibverbs has it: the private
 * functions we call exist under IBVERBS_PRIVATE_<PABI>, and our provider
 * module exports nothing but registers itself when loaded.  (The layout
 * facts are _Static_asserts in provider_abi.h, checked at every build.)
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include <uroce/provider_abi.h>

int main(int argc, char **argv)
{
	static const char *const syms[] = {
		"verbs_register_driver_" PABI_STR(PABI_VERSION), "_verbs_init_and_alloc_context",
		"verbs_uninit_context", "verbs_set_ops", "verbs_init_cq",
	};
	int failures = 0;
	void *lib = dlopen("libibverbs.so.1", RTLD_NOW | RTLD_GLOBAL);

	if (!lib) {
		printf("FAIL: %s\n", dlerror());
		return 1;
	}
	for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++) {
		void *p = dlvsym(lib, syms[i], "IBVERBS_PRIVATE_" PABI_STR(PABI_VERSION));

		printf("%s %s@IBVERBS_PRIVATE_" PABI_STR(PABI_VERSION) "\n", p ? "ok:" : "FAIL:", syms[i]);
		failures += !p;
	}
	if (argc > 1) {
		void *prov = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);

		if (!prov) {
			printf("FAIL: load %s: %s\n", argv[1], dlerror());
			failures++;
		} else {
			/* The version script keeps the module's namespace empty. */
			int leaked = dlsym(prov, "uroce_reg_mr") || dlsym(prov, "uroce_alloc_pd");

			printf("%s provider exports no internal symbols\n", leaked ? "FAIL:" : "ok:");
			failures += leaked;
		}
	}
	printf("%d failed\n", failures);
	return failures ? 1 : 0;
}
