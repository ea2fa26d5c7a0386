/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * A small set of QPNs that an application thread's call left work for,
 * taken whole by a later call (resp.c: ACKs held back; engine.c: posts
 * that wait for the ACK clock).  QPNs, not pointers: a QP destroyed
 * meanwhile is simply not found when the set is taken.
 */
#ifndef UROCE_QPN_SET_H
#define UROCE_QPN_SET_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define UROCE_QPN_SET_MAX 64

struct uroce_qpn_set {
	pthread_mutex_t lock;
	atomic_uint n;
	uint32_t qpn[UROCE_QPN_SET_MAX];
};

static inline void uroce_qpn_set_init(struct uroce_qpn_set *s)
{
	pthread_mutex_init(&s->lock, NULL);
	atomic_init(&s->n, 0);
}

/* Add QPN; false: the set is full (the caller does the work another way). */
static inline bool uroce_qpn_set_add(struct uroce_qpn_set *s, uint32_t qpn)
{
	unsigned int n;
	bool room;

	pthread_mutex_lock(&s->lock);
	n = atomic_load_explicit(&s->n, memory_order_relaxed);
	room = n < UROCE_QPN_SET_MAX;
	if (room) {
		s->qpn[n] = qpn;
		atomic_store_explicit(&s->n, n + 1, memory_order_release);
	}
	pthread_mutex_unlock(&s->lock);
	return room;
}

/* Take every QPN into OUT (room for UROCE_QPN_SET_MAX); how many.  An
 * empty set costs one load. */
static inline unsigned int uroce_qpn_set_take(struct uroce_qpn_set *s, uint32_t *out)
{
	unsigned int n;

	if (!atomic_load_explicit(&s->n, memory_order_acquire))
		return 0;
	pthread_mutex_lock(&s->lock);
	n = atomic_load_explicit(&s->n, memory_order_relaxed);
	memcpy(out, s->qpn, n * sizeof(*out));
	atomic_store_explicit(&s->n, 0, memory_order_relaxed);
	pthread_mutex_unlock(&s->lock);
	return n;
}

#endif
