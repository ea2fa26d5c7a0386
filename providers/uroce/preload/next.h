/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The next definition of a function this library wraps (libc's, or another
 * preload's), looked up once with dlsym(RTLD_NEXT) and kept: no lock, and
 * nothing allocated after the first call, so a wrapper is safe in a forked
 * child.
 */
#ifndef UROCE_PRELOAD_NEXT_H
#define UROCE_PRELOAD_NEXT_H

#include <dlfcn.h>
#include <stdatomic.h>

static inline void *preload_next(void *_Atomic *slot, const char *name)
{
	void *fn = atomic_load_explicit(slot, memory_order_acquire);

	if (!fn) {
		fn = dlsym(RTLD_NEXT, name);
		atomic_store_explicit(slot, fn, memory_order_release);
	}
	return fn;
}

/* NEXT(int (*)(int), "close")(fd) calls the next close. */
#define NEXT(type, name) ({ static void *_Atomic slot_; (type)preload_next(&slot_, name); })

/* preload_cm.c's close() tells the netlink shim (nl_sock.c) of every close. */
void uroce_nl_forget(int fd);

#endif
