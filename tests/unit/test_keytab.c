// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* Unit test of the key table: random, unique, found, removed, rekeyed. */
#include <stdio.h>
#include <stdlib.h>

#include "engine/keytab.h"

int main(void)
{
	enum { N = 20000 };
	static uint32_t keys[N];
	static int objs[N];
	struct uroce_keytab t;
	int failures = 0, low_byte_same = 0;

	if (uroce_keytab_init(&t))
		return 1;
	for (int i = 0; i < N; i++) {
		keys[i] = uroce_keytab_insert(&t, &objs[i]);
		if (!keys[i])
			failures++;
		if (i && (keys[i] & 0xff) == (keys[i - 1] & 0xff))
			low_byte_same++;
	}
	for (int i = 0; i < N; i++)
		if (uroce_keytab_lookup(&t, keys[i]) != &objs[i])
			failures++;
	/* Keys are not sequential or predictable: neighbours rarely share a byte. */
	if (low_byte_same > N / 64)
		failures++, printf("FAIL: keys look predictable (%d)\n", low_byte_same);
	for (int i = 0; i < N; i += 2)
		if (uroce_keytab_remove(&t, keys[i]))
			failures++;
	for (int i = 0; i < N; i++)
		if (uroce_keytab_lookup(&t, keys[i]) != (i % 2 ? &objs[i] : NULL))
			failures++;
	if (uroce_keytab_remove(&t, keys[0]) != -2 /* -ENOENT */)
		failures++;
	if (uroce_keytab_lookup(&t, 0) || uroce_keytab_lookup(&t, 0xffffffffu))
		failures++;
	/* Rekeying (memory windows): the object moves, a taken key refuses. */
	pthread_rwlock_wrlock(&t.lock);
	if (uroce_keytab_rekey_locked(&t, keys[1], keys[3]) != -17 /* -EEXIST */ ||
	    uroce_keytab_rekey_locked(&t, keys[0], keys[0] ^ 1) != -2 /* gone: -ENOENT */ ||
	    uroce_keytab_put_locked(&t, 0, &objs[0]) != -17 ||
	    uroce_keytab_rekey_locked(&t, keys[1], keys[0]) != 0)
		failures++, printf("FAIL: rekey results\n");
	pthread_rwlock_unlock(&t.lock);
	if (uroce_keytab_lookup(&t, keys[0]) != &objs[1] || uroce_keytab_lookup(&t, keys[1]))
		failures++, printf("FAIL: rekeyed object not under its new key only\n");
	uroce_keytab_destroy(&t);
	printf("%d failed\n", failures);
	return failures ? 1 : 0;
}
