// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Where an engine's counters live.  (Private memory for now; the shared
 * record that `uroce stat` reads is described in kernel-uapi/uroce/stats.h.)
 */
#include <stdlib.h>

#include "engine.h"

int uroce_stats_attach(struct uroce_engine *eng)
{
	eng->stats = calloc(1, sizeof(*eng->stats));
	return eng->stats ? 0 : -1;
}

void uroce_stats_detach(struct uroce_engine *eng)
{
	free(eng->stats);
	eng->stats = NULL;
}
