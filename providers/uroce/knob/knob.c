// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * The knobs' one parser and their accessors (knob/knob.h holds the table).
 *
 * A knob is read when first asked for and kept for the life of the
 * process, so a value never changes under a running QP and a refusal is
 * said once.  Asked lazily, not in a constructor: a process reports only
 * the knobs it uses (`uroce run` does not repeat what its program says),
 * and the provider's own constructors may ask in any order.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "knob/knob.h"

#define KNOB_DEF_BOOL(d) .def = (d)
#define KNOB_DEF_UINT(d) .def = (d)
#define KNOB_DEF_SIZE(d) .def = (d)
#define KNOB_DEF_PATH(d) .def_str = (d)

const struct uroce_knob_def uroce_knob_defs[UROCE_KNOB_COUNT] = {
#define KNOB_DEF(id, var, ty, dflt, lo, hi, words)                                      \
	[UROCE_KNOB_##id] = { .name = var, .type = UROCE_KNOB_T_##ty, KNOB_DEF_##ty(dflt),   \
			      .min = (lo), .max = (hi), .doc = words },
	UROCE_KNOBS(KNOB_DEF)
#undef KNOB_DEF
};

const char *uroce_knob_type_name(enum uroce_knob_type t)
{
	static const char *const names[] = {
		[UROCE_KNOB_T_BOOL] = "bool", [UROCE_KNOB_T_UINT] = "int",
		[UROCE_KNOB_T_SIZE] = "size", [UROCE_KNOB_T_PATH] = "path",
	};

	return t < sizeof(names) / sizeof(names[0]) ? names[t] : "?";
}

static const struct { const char *word; bool on; } bool_words[] = {
	{ "0", false }, { "1", true }, { "no", false }, { "yes", true },
	{ "off", false }, { "on", true }, { "false", false }, { "true", true },
};

/* A size with its largest exact suffix: 268435456 -> "256M". */
static void size_text(uint64_t v, char *buf, size_t len)
{
	static const char suffix[] = "KMG";
	int s = -1;

	while (s < 2 && v && !(v & 1023)) {
		v >>= 10;
		s++;
	}
	snprintf(buf, len, "%" PRIu64 "%s", v, s < 0 ? "" : (char[]){ suffix[s], 0 });
}

const char *uroce_knob_allowed(const struct uroce_knob_def *d, char *buf, size_t len)
{
	char lo[32], hi[32];

	switch (d->type) {
	case UROCE_KNOB_T_BOOL:
		snprintf(buf, len, "0 or 1 (no/yes, off/on, false/true)");
		break;
	case UROCE_KNOB_T_UINT:
		snprintf(buf, len, "an integer from %" PRIu64 " to %" PRIu64, d->min, d->max);
		break;
	case UROCE_KNOB_T_SIZE:
		size_text(d->min, lo, sizeof(lo));
		size_text(d->max, hi, sizeof(hi));
		snprintf(buf, len, "bytes from %s to %s, with an optional K, M or G", lo, hi);
		break;
	case UROCE_KNOB_T_PATH:
		snprintf(buf, len, "a path");
		break;
	}
	return buf;
}

const char *uroce_knob_default(const struct uroce_knob_def *d, char *buf, size_t len)
{
	switch (d->type) {
	case UROCE_KNOB_T_BOOL:
		snprintf(buf, len, "%s", d->def ? "1" : "0");
		break;
	case UROCE_KNOB_T_UINT:
		snprintf(buf, len, "%" PRIu64, d->def);
		break;
	case UROCE_KNOB_T_SIZE:
		size_text(d->def, buf, len);
		break;
	case UROCE_KNOB_T_PATH:
		snprintf(buf, len, "%s", d->def_str ? d->def_str : "(none)");
		break;
	}
	return buf;
}

/* Decimal digits only: no sign, no space, no 0x (strtoull takes all three). */
static int parse_digits(const char *text, uint64_t *v, const char **end)
{
	char *e;

	if (*text < '0' || *text > '9')
		return -EINVAL;
	errno = 0;
	*v = strtoull(text, &e, 10);
	*end = e;
	return errno ? -EINVAL : 0;
}

int uroce_knob_parse(const struct uroce_knob_def *d, const char *text, uint64_t *num)
{
	const char *end;
	uint64_t v;
	int shift = 0;

	switch (d->type) {
	case UROCE_KNOB_T_BOOL:
		for (size_t i = 0; i < sizeof(bool_words) / sizeof(bool_words[0]); i++)
			if (!strcasecmp(text, bool_words[i].word)) {
				*num = bool_words[i].on;
				return 0;
			}
		return -EINVAL;
	case UROCE_KNOB_T_UINT:
	case UROCE_KNOB_T_SIZE:
		if (parse_digits(text, &v, &end))
			return -EINVAL;
		if (d->type == UROCE_KNOB_T_SIZE && *end && strchr("KkMmGg", *end)) {
			shift = *end == 'K' || *end == 'k' ? 10 : *end == 'M' || *end == 'm' ? 20 : 30;
			end++;
		}
		if (*end || v > d->max >> shift || v << shift < d->min)
			return -EINVAL;
		*num = v << shift;
		return 0;
	case UROCE_KNOB_T_PATH:
		return 0;
	}
	return -EINVAL;
}

struct uroce_knob_val uroce_knob_vals[UROCE_KNOB_COUNT];
static pthread_mutex_t vals_lock = PTHREAD_MUTEX_INITIALIZER;

/* Read knob K from the environment, once; a refusal is said here. */
static void knob_read(enum uroce_knob k)
{
	const struct uroce_knob_def *d = &uroce_knob_defs[k];
	struct uroce_knob_val *v = &uroce_knob_vals[k];
	const char *text = getenv(d->name);
	char allowed[96], dflt[64];

	v->num = d->def;
	if (d->type == UROCE_KNOB_T_PATH) {
		/* A copy: a later setenv may drop the string getenv gave. */
		v->str = text && *text ? strdup(text) : NULL;
		if (!v->str)
			v->str = d->def_str; /* unset, or ENOMEM */
		return;
	}
	if (text && *text && uroce_knob_parse(d, text, &v->num)) {
		v->num = d->def;
		fprintf(stderr, "uroce: %s=%s refused: want %s; using the default %s\n", d->name, text,
			uroce_knob_allowed(d, allowed, sizeof(allowed)),
			uroce_knob_default(d, dflt, sizeof(dflt)));
	}
}

const struct uroce_knob_val *uroce_knob_read(enum uroce_knob k)
{
	struct uroce_knob_val *v = &uroce_knob_vals[k];

	pthread_mutex_lock(&vals_lock);
	if (!v->done) {
		knob_read(k);
		__atomic_store_n(&v->done, 1, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&vals_lock);
	return v;
}
