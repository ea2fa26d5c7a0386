/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Unpredictable 32-bit keys (L_Key/R_Key) mapped to objects.  Keys come
 * from getrandom(), so a peer cannot guess a valid R_Key from another
 * (IBTA 10.6.3: keys are the only protection of remote access); bit 0 of
 * a key we make is always clear, for UCX 1.13's sake (keytab.c).
 */
#ifndef UROCE_KEYTAB_H
#define UROCE_KEYTAB_H

#include <pthread.h>
#include <stdint.h>

struct uroce_keytab {
	pthread_rwlock_t lock;
	uint32_t cap;     /* power of two */
	uint32_t used;
	uint32_t *keys;   /* 0 = empty, UINT32_MAX = deleted */
	void **objs;
};

int uroce_keytab_init(struct uroce_keytab *t);
void uroce_keytab_destroy(struct uroce_keytab *t);
/* Store OBJ under a new random key; returns the key, or 0 with errno set. */
uint32_t uroce_keytab_insert(struct uroce_keytab *t, void *obj);
void *uroce_keytab_lookup(struct uroce_keytab *t, uint32_t key);
/* Lookup with t->lock already held (read or write) by the caller. */
void *uroce_keytab_find(struct uroce_keytab *t, uint32_t key);
int uroce_keytab_remove(struct uroce_keytab *t, uint32_t key);
/* With t->lock held for writing: store OBJ under the given KEY (0, or
 * -EEXIST if the key is taken, -ENOMEM); move an object to a new key. */
int uroce_keytab_put_locked(struct uroce_keytab *t, uint32_t key, void *obj);
int uroce_keytab_rekey_locked(struct uroce_keytab *t, uint32_t old_key, uint32_t new_key);

#endif
