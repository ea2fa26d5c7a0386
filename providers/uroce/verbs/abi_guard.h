/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#ifndef UROCE_ABI_GUARD_H
#define UROCE_ABI_GUARD_H

#include <stdbool.h>

/*
 * Is the libibverbs loaded in this process the rdma-core layout this
 * provider was built for?  If not, says so in one line on stderr.
 */
bool uroce_abi_guard_ok(void);

/* "…/libibverbs.so.1.14.56.1" -> 56, 1.  0, or -1 if FILE is not so named. */
int uroce_abi_parse_soname(const char *file, unsigned int *major, unsigned int *minor);

#endif
