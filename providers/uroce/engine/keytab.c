// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* Open-addressing hash table from random 32-bit keys to objects. */
#include <errno.h>
#include <stdlib.h>
#include <sys/random.h>

#include "engine/keytab.h"

#define EMPTY 0u
#define TOMB UINT32_MAX
/*
 * Keys we make are even (31 random bits).  UCX 1.13 (Debian 12's) frees
 * its implicit-ODP memory handle at exit by passing it where a
 * uct_md_mem_dereg_params_t belongs: the handle's lkey lands in the
 * params' field_mask, and with bit 0 (FIELD_MEMH) set UCX dereferences
 * the handle's flags word (1) as a pointer and crashes
 * (openucx/ucx#8735, #9392).  An even lkey makes that call a no-op.
 * Keys consumers choose (ibv_inc_rkey for windows) may be anything.
 */
#define KEY_ODD 1u

/* The high half of a 64-bit multiplicative hash: every key bit counts, so
 * keys with bit 0 always clear still spread over all the slots. */
static uint32_t slot_of(uint32_t key, uint32_t cap)
{
	return (uint32_t)((key * 0x9e3779b97f4a7c15ull) >> 32) & (cap - 1);
}

int uroce_keytab_init(struct uroce_keytab *t)
{
	t->cap = 64;
	t->used = 0;
	t->keys = calloc(t->cap, sizeof(*t->keys));
	t->objs = calloc(t->cap, sizeof(*t->objs));
	if (!t->keys || !t->objs) {
		free(t->keys);
		free(t->objs);
		return -ENOMEM;
	}
	pthread_rwlock_init(&t->lock, NULL);
	return 0;
}

void uroce_keytab_destroy(struct uroce_keytab *t)
{
	free(t->keys);
	free(t->objs);
	pthread_rwlock_destroy(&t->lock);
}

static void place(uint32_t *keys, void **objs, uint32_t cap, uint32_t key, void *obj)
{
	uint32_t i = slot_of(key, cap);

	while (keys[i] != EMPTY && keys[i] != TOMB)
		i = (i + 1) & (cap - 1);
	keys[i] = key;
	objs[i] = obj;
}

static long find(const struct uroce_keytab *t, uint32_t key)
{
	uint32_t i = slot_of(key, t->cap);

	for (uint32_t n = 0; n < t->cap && t->keys[i] != EMPTY; n++) {
		if (t->keys[i] == key)
			return i;
		i = (i + 1) & (t->cap - 1);
	}
	return -1;
}

/* Grow (or clean tombstones) so that at most half the slots are taken. */
static int make_room(struct uroce_keytab *t)
{
	uint32_t ncap = t->cap;
	uint32_t *nkeys;
	void **nobjs;

	if ((t->used + 1) * 2 <= t->cap)
		return 0;
	while ((t->used + 1) * 4 > ncap)
		ncap *= 2;
	nkeys = calloc(ncap, sizeof(*nkeys));
	nobjs = calloc(ncap, sizeof(*nobjs));
	if (!nkeys || !nobjs) {
		free(nkeys);
		free(nobjs);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < t->cap; i++)
		if (t->keys[i] != EMPTY && t->keys[i] != TOMB)
			place(nkeys, nobjs, ncap, t->keys[i], t->objs[i]);
	free(t->keys);
	free(t->objs);
	t->keys = nkeys;
	t->objs = nobjs;
	t->cap = ncap;
	return 0;
}

uint32_t uroce_keytab_insert(struct uroce_keytab *t, void *obj)
{
	uint32_t key = 0;

	pthread_rwlock_wrlock(&t->lock);
	if (make_room(t)) {
		pthread_rwlock_unlock(&t->lock);
		errno = ENOMEM;
		return 0;
	}
	do {
		if (getrandom(&key, sizeof(key), 0) != sizeof(key)) {
			pthread_rwlock_unlock(&t->lock);
			errno = EAGAIN;
			return 0;
		}
		key &= ~KEY_ODD;
	} while (key == EMPTY || key == TOMB || find(t, key) >= 0);
	place(t->keys, t->objs, t->cap, key, obj);
	t->used++;
	pthread_rwlock_unlock(&t->lock);
	return key;
}

void *uroce_keytab_lookup(struct uroce_keytab *t, uint32_t key)
{
	void *obj = NULL;
	long i;

	if (key == EMPTY || key == TOMB)
		return NULL;
	pthread_rwlock_rdlock(&t->lock);
	i = find(t, key);
	if (i >= 0)
		obj = t->objs[i];
	pthread_rwlock_unlock(&t->lock);
	return obj;
}

void *uroce_keytab_find(struct uroce_keytab *t, uint32_t key)
{
	long i;

	if (key == EMPTY || key == TOMB)
		return NULL;
	i = find(t, key);
	return i >= 0 ? t->objs[i] : NULL;
}

static int remove_locked(struct uroce_keytab *t, uint32_t key)
{
	long i;

	if (key == EMPTY || key == TOMB)
		return -ENOENT;
	i = find(t, key);
	if (i < 0)
		return -ENOENT;
	t->keys[i] = TOMB;
	t->objs[i] = NULL;
	t->used--;
	return 0;
}

int uroce_keytab_remove(struct uroce_keytab *t, uint32_t key)
{
	int ret;

	pthread_rwlock_wrlock(&t->lock);
	ret = remove_locked(t, key);
	pthread_rwlock_unlock(&t->lock);
	return ret;
}

int uroce_keytab_put_locked(struct uroce_keytab *t, uint32_t key, void *obj)
{
	if (key == EMPTY || key == TOMB || find(t, key) >= 0)
		return -EEXIST;
	if (make_room(t))
		return -ENOMEM;
	place(t->keys, t->objs, t->cap, key, obj);
	t->used++;
	return 0;
}

int uroce_keytab_rekey_locked(struct uroce_keytab *t, uint32_t old_key, uint32_t new_key)
{
	long i = find(t, old_key);
	int ret;

	if (old_key == new_key)
		return 0;
	if (old_key == EMPTY || old_key == TOMB || i < 0)
		return -ENOENT;
	ret = uroce_keytab_put_locked(t, new_key, t->objs[i]);
	if (!ret)
		remove_locked(t, old_key);
	return ret;
}
