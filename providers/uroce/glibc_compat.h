/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Force-included into every file (meson: -include).  glibc 2.38+ maps
 * strtol/sscanf to __isoc23_* (GLIBC_2.38) under _GNU_SOURCE; we never parse
 * "0b" numbers, so keep the classic symbols.  A provider built on Debian 13
 * or sid then still loads under an older glibc far enough for its ABI guard
 * to say, in its own words, that the libibverbs there is another layout.
 */
#include <features.h>
#undef __GLIBC_USE_C23_STRTOL
#define __GLIBC_USE_C23_STRTOL 0
#undef __GLIBC_USE_C2X_STRTOL
#define __GLIBC_USE_C2X_STRTOL 0
