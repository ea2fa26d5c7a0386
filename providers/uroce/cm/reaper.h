/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The records the CM shares with its reaper (cm/gsi_reaper.c publishes,
 * the uroce-reaper program, cm/reaper_main.c, sends): one page-aligned
 * memfd holding a header and CONN_RECS records, each an established
 * connection's DREQ as a finished UDP payload with both socket addresses,
 * so that the reaper needs nothing but socket(), bind() and sendto().
 * The two are built from one tree: the layout is checked by size and
 * magic, not versioned.
 */
#ifndef UROCE_CM_REAPER_H
#define UROCE_CM_REAPER_H

#include <stdint.h>
#include <sys/socket.h>

#define REAPER_MAGIC 0x75726570u          /* "urep" */
#define REAPER_RECS 1024
/* BTH, DETH, MAD (256), ICRC */
#define REAPER_PKT_LEN (12 + 8 + 256 + 4)
#define REAPER_SENDS 3                    /* each DREQ is sent this many times */
#define REAPER_GAP_MS 100                 /* apart */
/* The descriptors the program is started with. */
#define REAPER_FD_PIPE 3                  /* read end; EOF = the process ended */
#define REAPER_FD_RECS 4                  /* the memfd of struct reaper_map */

enum { REAPER_REC_FREE, REAPER_REC_FILLING, REAPER_REC_LIVE };

struct reaper_rec {
	_Atomic uint32_t state;           /* the reaper reads only LIVE ones */
	uint32_t from_len, to_len;
	uint8_t family;
	struct sockaddr_storage from, to;
	uint8_t pkt[REAPER_PKT_LEN];
};

struct reaper_map {
	uint32_t magic;
	uint32_t nrecs;
	uint32_t rec_size;
	struct reaper_rec recs[REAPER_RECS];
};

#endif
