/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* Big-endian (network order) fields at any alignment, for the wire module. */
#ifndef UROCE_WIRE_BYTES_H
#define UROCE_WIRE_BYTES_H

#include <endian.h>
#include <stdint.h>
#include <string.h>

static inline void put16(uint8_t *p, uint16_t v) { v = htobe16(v); memcpy(p, &v, 2); }
static inline void put32(uint8_t *p, uint32_t v) { v = htobe32(v); memcpy(p, &v, 4); }
static inline void put64(uint8_t *p, uint64_t v) { v = htobe64(v); memcpy(p, &v, 8); }
static inline uint16_t get16(const uint8_t *p) { uint16_t v; memcpy(&v, p, 2); return be16toh(v); }
static inline uint32_t get32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return be32toh(v); }
static inline uint64_t get64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return be64toh(v); }

#endif
