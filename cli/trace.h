/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * `uroce trace`: the records of UROCE_TRACE files (packets and events),
 * merged and tied together, for the text and diagram views.
 */
#ifndef UROCE_CLI_TRACE_H
#define UROCE_CLI_TRACE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "wire/wire.h"

/* One record of a trace file: a packet or an event. */
struct tr_rec {
	uint64_t ts;                 /* ns, CLOCK_REALTIME of the writing host */
	int file;                    /* index of the file (one process) */
	uint32_t seq;                /* position in its file */
	bool is_pkt;
	/* a packet */
	bool out;                    /* sent by this process */
	int parse;                   /* ROCE_OK or why it does not parse */
	struct roce_pkt pkt;         /* payload pointer cleared */
	uint32_t frame_len;
	struct {                     /* a CM MAD (a UD SEND to QP 1) */
		bool ok;
		uint16_t attr;
		uint32_t local_id, remote_id, qpn, psn;
	} mad;
	/* an event: "\nKEY=VALUE" lines of the journal entry, UROCE_ stripped */
	char *fields;
	char ev[16];
	/* tied together */
	uint32_t qpn, peer;          /* local and remote QP (0: unknown) */
	int pair;                    /* index in struct tr_set.pairs, -1: none */
	int side;                    /* 0 or 1 within the pair */
	int match;                   /* tx <-> rx of the same packet, -1: none */
	int cause;                   /* a CQE: the packet that completed it, -1 */
	int resend;                  /* a sent packet: how many times sent before */
	bool lost;                   /* sent, the peer traced, never received */
	bool shown;                  /* selected by the filters */
};

struct tr_side {
	int file;
	uint32_t qpn;
};

struct tr_pair {
	struct tr_side s[2];
	char type[4];                /* RC, UC, UD, CM */
};

struct tr_file {
	const char *path;
	char comm[64];
	int pid;
};

struct tr_set {
	struct tr_file *files;
	int n_files;
	struct tr_rec *recs;
	uint32_t n, cap;
	struct tr_pair *pairs;
	int n_pairs;
	uint64_t t0;                 /* the earliest record */
};

/* trace_read.c: append the records of PATH (a pcapng of UROCE_TRACE) to
 * SET; 0, or -1 after a message. */
int tr_read(struct tr_set *set, const char *path);
/* The value of event field KEY ("WR", "PSN", ...) into BUF, or NULL. */
const char *tr_field(const struct tr_rec *r, const char *key, char *buf, size_t n);
/* Field KEY as a number (decimal or 0x hex); DFLT if absent. */
uint64_t tr_num(const struct tr_rec *r, const char *key, uint64_t dflt);

/* trace_model.c: sort, find each record's QP and QP pair, match packets
 * sent with packets received, find what completed each CQE. */
void tr_model(struct tr_set *set);

/* trace_text.c / trace_svg.c: the views of the records marked shown. */
struct tr_view {
	int max_rows;                /* per pair, 0: all */
	bool explain;                /* protocol explanations (default on) */
};
void tr_text(const struct tr_set *set, const struct tr_view *v, FILE *out);
void tr_svg(const struct tr_set *set, const struct tr_view *v, FILE *out);

/* trace_text.c: "QP 17 (comm, pid N)" for SIDE of pair P; record R as one
 * line of text (without time and side). */
void tr_side_name(const struct tr_set *set, const struct tr_pair *p, int side, char *buf, size_t n);
int tr_line(const struct tr_set *set, const struct tr_rec *r, char *buf, size_t n);

/* trace_rules.c: words for what a record shows. */
/* One line describing a packet (opcode, PSN, length, AckReq, AETH). */
int tr_pkt_line(const struct tr_rec *r, char *buf, size_t n);
/* One line describing an event, without its explanation. */
int tr_ev_line(const struct tr_rec *r, char *buf, size_t n);
/* The protocol rule behind a record, or NULL: "IBTA 9.7.5.1.4 ..." and
 * the words of it. */
const char *tr_rule(const struct tr_rec *r, const char **section, const char **words);

#endif
