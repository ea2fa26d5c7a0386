/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
#ifndef UROCE_CLI_H
#define UROCE_CLI_H

/* Print "uroce: MSG" to stderr; returns 1 (the exit status of a failed command). */
int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Remove the registries, device nodes and /dev/shm files of network
 * namespaces proven dead (prune.c); with DRY, print them instead
 * ("registry|node|shm PATH" lines).  Root only.  Returns how many
 * registries and files it removed, or -errno when nothing could be
 * proven (then nothing is removed). */
int uroce_prune_dead(int dry);

int cmd_link(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_env(int argc, char **argv);
int cmd_stat(int argc, char **argv);
int cmd_trace(int argc, char **argv);
int cmd_knobs(int argc, char **argv);

#endif
