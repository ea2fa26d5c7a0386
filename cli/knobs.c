// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * uroce knobs: print the knob table (knob/knob.h), every environment
 * variable uroce reads, with its type, default, what it allows and its doc
 * line, and the value this environment gives it.  --names prints the names
 * alone, one a line: what the man_page test checks uroce(8) against.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "knob/knob.h"

/* "= VALUE" when the environment sets knob K and the table takes it. */
static void print_value(enum uroce_knob k)
{
	const struct uroce_knob_def *d = &uroce_knob_defs[k];
	uint64_t v;
	char buf[64];

	if (d->type == UROCE_KNOB_T_PATH) {
		const char *s = uroce_knob_str(k);

		if (s && (!d->def_str || strcmp(s, d->def_str)))
			printf("    in this environment: %s\n", s);
		return;
	}
	v = uroce_knob_num(k); /* a refused value is said on stderr here */
	if (v != d->def) {
		struct uroce_knob_def now = *d;

		now.def = v;
		printf("    in this environment: %s\n", uroce_knob_default(&now, buf, sizeof(buf)));
	}
}

int cmd_knobs(int argc, char **argv)
{
	int names = argc == 1 && !strcmp(argv[0], "--names");
	char allowed[96], dflt[64];

	if (argc > 1 || (argc == 1 && !names))
		return fail("usage: uroce knobs [--names]");
	for (int k = 0; k < UROCE_KNOB_COUNT; k++) {
		const struct uroce_knob_def *d = &uroce_knob_defs[k];

		if (names) {
			puts(d->name);
			continue;
		}
		printf("%s (%s, default %s): %s\n    %s\n", d->name, uroce_knob_type_name(d->type),
		       uroce_knob_default(d, dflt, sizeof(dflt)),
		       uroce_knob_allowed(d, allowed, sizeof(allowed)), d->doc);
		print_value(k);
	}
	return 0;
}
