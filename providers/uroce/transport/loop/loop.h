/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The loop transport: an in-process wire between the engines of one
 * process, for the engine's unit tests (docs/testing.md).  Every open
 * loop transport is a port on one bus; a packet sent to a GID goes to the
 * port that has that address (uroce_loop_set_addr).  Rules drop,
 * duplicate or hold back (reorder) the packets they match, and a log
 * records every packet with what was done to it, so a test can check the
 * PSNs, NAKs and resends an engine put on the wire.
 *
 * The provider does not link it: a device record cannot name it, and
 * uroce_xport_lookup("loop") finds it only in a program linked with it
 * (transport.c's weak reference).
 */
#ifndef UROCE_TRANSPORT_LOOP_H
#define UROCE_TRANSPORT_LOOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "transport/transport.h"

extern const struct uroce_xport_ops uroce_loop_ops;

/* What a rule does to the packets it matches. */
enum uroce_loop_act {
	UROCE_LOOP_PASS,             /* nothing: the rule only counts them */
	UROCE_LOOP_DROP,             /* lost on the wire */
	UROCE_LOOP_DUP,              /* delivered twice: the copy back to back, or `after` later */
	UROCE_LOOP_HOLD,             /* delivered after `after` (at least 1) later packets */
};

/* A field of a rule that matches any value. */
#define UROCE_LOOP_ANY (-1)

/*
 * A rule: the packets it matches, and which of them it acts on.  Fields
 * are UROCE_LOOP_ANY or the value to match.  The first rule that matches
 * a packet and acts on it decides; a packet no rule acts on passes.
 */
struct uroce_loop_rule {
	const char *from;            /* netdev of the sending port; NULL: any */
	int kind;                    /* enum roce_kind (wire/wire.h) */
	int opcode;                  /* BTH opcode */
	int64_t psn;
	int aeth;                    /* AETH type: syndrome & ROCE_AETH_TYPE_MASK */
	unsigned int nth;            /* act from the nth match on (1: the first; 0 as 1) */
	unsigned int count;          /* on this many matches; 0: on every one from nth */
	enum uroce_loop_act act;
	/* HOLD, DUP: packets to the same port that overtake it (or its copy)
	 * first; UINT_MAX: until uroce_loop_release. */
	unsigned int after;
};

/* One packet the bus saw, in order of sending. */
struct uroce_loop_rec {
	int from, to;                /* port numbers (uroce_loop_port), -1: no such address */
	uint8_t opcode;
	int kind;                    /* enum roce_kind, -1: did not parse */
	uint32_t psn;
	uint32_t dqpn;
	uint8_t syndrome;            /* AETH packets */
	bool ackreq;
	uint32_t len;
	enum uroce_loop_act act;     /* what a rule did (PASS: none) */
};

/* A rule matching every packet: start from this and set some fields. */
struct uroce_loop_rule uroce_loop_match_any(void);

/* Give NETDEV's port (open now or later) address GID (IPv4-mapped or
 * IPv6); 0 or -ENOSPC (too many ports). */
int uroce_loop_set_addr(const char *netdev, const uint8_t *gid);
/* The port number of NETDEV (as struct uroce_loop_rec names it), or -1. */
int uroce_loop_port(const char *netdev);
/* The counters (enum uroce_stat) the engine on NETDEV's port opened it
 * with, or NULL while it is closed. */
const uint64_t *uroce_loop_counters(const char *netdev);

/* Add a rule; its number, or -ENOSPC. */
int uroce_loop_rule_add(const struct uroce_loop_rule *r);
/* Packets rule ID acted on so far. */
unsigned int uroce_loop_rule_hits(int id);
/* Deliver every held packet now. */
void uroce_loop_release(void);
/* Forget every rule and the log; deliver what is held. */
void uroce_loop_reset(void);

/* Copy up to MAX records of the log, oldest first, into OUT; how many the
 * log holds (it keeps the first UROCE_LOOP_LOG_MAX). */
#define UROCE_LOOP_LOG_MAX 65536
size_t uroce_loop_log(struct uroce_loop_rec *out, size_t max);

#endif
