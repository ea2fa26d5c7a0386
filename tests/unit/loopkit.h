/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * loopkit: two (or more) engines in one process, joined by the loop
 * transport (transport/loop/loop.h), for unit tests of the protocol
 * engine that need no root (docs/testing.md).  It stands in for the verbs
 * layer: it makes the objects verbs would (context, PD, MR, CQ, QP), moves
 * QPs through their states with the engine's hooks as verbs/qp_modify.c
 * does, posts WQEs as verbs/post.c does, and takes the engine's upcalls
 * (completions, asynchronous events).  The checks verbs does on a work
 * request are not repeated: tests post only valid ones.
 */
#ifndef UROCE_TESTS_LOOPKIT_H
#define UROCE_TESTS_LOOPKIT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <infiniband/verbs.h>

#include "engine/engine.h"
#include "transport/loop/loop.h"
#include "wire/wire.h"

/* Fail the test at once: a message and exit status 1 (meson: failed). */
#define LK_CHECK(cond, ...) do {                                               \
	if (!(cond)) {                                                         \
		fprintf(stderr, "%s:%d: %s: ", __FILE__, __LINE__, #cond);     \
		fprintf(stderr, __VA_ARGS__);                                  \
		fputc('\n', stderr);                                           \
		exit(1);                                                       \
	}                                                                      \
} while (0)

/* How long a test waits for an event before it fails (never a fixed
 * sleep: each wait ends as soon as the event comes). */
#define LK_WAIT_MS 10000

/* One device on a loop port: its context, PD and engine. */
struct lk_node {
	char devname[32];
	char netdev[16];
	union ibv_gid gid;           /* ::ffff:127.0.0.N */
	struct uroce_context ctx;
	struct uroce_pd pd;
	struct uroce_engine *eng;
	int port;                    /* the loop port (struct uroce_loop_rec) */
};

/* A CQ: the engine pushes into the ring of struct uroce_cq (the upcall). */
struct lk_cq {
	struct uroce_cq cq;
	pthread_mutex_t mu;
	pthread_cond_t cv;
};

/* The attributes lk_connect sets (0 in a field: the default noted). */
struct lk_conn {
	uint32_t psn_a, psn_b;       /* each side's first send PSN */
	enum ibv_mtu mtu;            /* default IBV_MTU_1024 */
	uint8_t timeout;             /* local ACK timeout exponent: default 14 (67 ms) */
	uint8_t retry_cnt;           /* default 7 */
	uint8_t rnr_retry;           /* default 7 (infinite) */
	uint8_t min_rnr_timer;       /* default 1 (0.01 ms) */
	uint8_t rd_atomic;           /* max_rd_atomic both ways, default 16 */
};

/* Upcalls set, the bus empty; call once first. */
void lk_init(void);
/* Device NAME on loop port "lk<pid><NAME>" with address 127.0.0.N; and its
 * end (its /dev/shm QPN table removed). */
void lk_node_open(struct lk_node *n, const char *name, uint8_t ip_last);
void lk_node_close(struct lk_node *n);

/* Memory registered on N's PD (iova = address), with ACCESS. */
struct uroce_mr *lk_mr(struct lk_node *n, void *buf, size_t len, int access);
void lk_mr_free(struct lk_node *n, struct uroce_mr *mr);

struct lk_cq *lk_cq_new(unsigned int size);
void lk_cq_free(struct lk_cq *c);
/* Wait up to MS for a completion: 1 (in *WC) or 0 (none came). */
int lk_cq_wait(struct lk_cq *c, struct ibv_wc *wc, int ms);
/* A completion now, without waiting: 1 or 0. */
int lk_cq_poll(struct lk_cq *c, struct ibv_wc *wc);

/* A QP of N of TYPE (IBV_QPT_RC or IBV_QPT_UC) in Reset, with the
 * engine's state (QPN) made. */
struct uroce_qp *lk_qp_new(struct lk_node *n, enum ibv_qp_type type, struct lk_cq *scq,
			   struct lk_cq *rcq);
void lk_qp_free(struct uroce_qp *qp);
/* Move QP to ATTR->qp_state with the attributes in MASK, as ibv_modify_qp. */
void lk_modify(struct uroce_qp *qp, struct ibv_qp_attr *attr, int mask);
/* Connect A (of node NA) and B (of NB) through Init, RTR, RTS. */
void lk_connect(struct uroce_qp *a, struct lk_node *na, struct uroce_qp *b,
		struct lk_node *nb, const struct lk_conn *c);

/* Post one work request, as ibv_post_send / ibv_post_recv would. */
void lk_post_send(struct uroce_qp *qp, const struct ibv_send_wr *wr);
void lk_post_recv(struct uroce_qp *qp, const struct ibv_recv_wr *wr);

/* QP's state as ibv_query_qp reports it (under the QP's lock: the engine
 * may be moving it to the error state after the completion it pushed). */
enum ibv_qp_state lk_qp_state(struct uroce_qp *qp);
/* The last asynchronous event of QP (IBV_EVENT_* or -1). */
int lk_qp_event(const struct uroce_qp *qp);

/* A counter (enum uroce_stat) of N's engine. */
uint64_t lk_stat(const struct lk_node *n, enum uroce_stat s);

/* The bus's log, and how many of its records from port FROM (-1: any)
 * are of KIND (enum roce_kind, -1: any) with PSN (-1: any); AETH (-1:
 * any) is the exact syndrome of an ACK/NAK. */
struct lk_log {
	struct uroce_loop_rec *rec;
	size_t n;
};
void lk_log_get(struct lk_log *log);
void lk_log_put(struct lk_log *log);
size_t lk_log_count(const struct lk_log *log, int from, int kind, int64_t psn, int aeth);
/* Print the log on stderr (for a failing test). */
void lk_log_dump(const struct lk_log *log);

/* Fill BUF with a pattern seeded by SEED; whether BUF holds it. */
void lk_fill(void *buf, size_t len, unsigned int seed);
bool lk_holds(const void *buf, size_t len, unsigned int seed);

#endif
