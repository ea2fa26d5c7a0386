// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Unit test of the knobs (knob/knob.h): the parser's bools, integers in
 * range and sizes, the table's own defaults, and, in a child process, the
 * accessors: read once, a refused value said in exactly one stderr line
 * that names the variable, the value and what is allowed, then the default.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "knob/knob.h"

static int failures;

#define CHECK(cond, ...)                                                               \
	do {                                                                           \
		if (!(cond)) {                                                         \
			failures++;                                                    \
			printf("FAIL %s:%d: ", __FILE__, __LINE__);                    \
			printf(__VA_ARGS__);                                           \
			putchar('\n');                                                 \
		}                                                                      \
	} while (0)

static const struct uroce_knob_def *def(enum uroce_knob k)
{
	return &uroce_knob_defs[k];
}

/* TEXT as knob K: WANT (want_ok) or refused. */
static void parses(enum uroce_knob k, const char *text, int want_ok, uint64_t want)
{
	uint64_t v = 0xdead;
	int ret = uroce_knob_parse(def(k), text, &v);

	if (want_ok)
		CHECK(ret == 0 && v == want, "%s=%s: ret %d value %llu, want %llu", def(k)->name,
		      text, ret, (unsigned long long)v, (unsigned long long)want);
	else
		CHECK(ret != 0, "%s=%s: accepted as %llu", def(k)->name, text,
		      (unsigned long long)v);
}

static void test_parser(void)
{
	static const char *const on[] = { "1", "yes", "on", "true", "YES", "On", "TRUE" };
	static const char *const off[] = { "0", "no", "off", "false", "NO", "Off" };
	static const char *const junk[] = { "2", "-1", "y", "maybe", "1 ", " 0", "00", "onn" };

	for (size_t i = 0; i < sizeof(on) / sizeof(on[0]); i++)
		parses(UROCE_KNOB_DEBUG, on[i], 1, 1);
	for (size_t i = 0; i < sizeof(off) / sizeof(off[0]); i++)
		parses(UROCE_KNOB_CC, off[i], 1, 0);
	for (size_t i = 0; i < sizeof(junk) / sizeof(junk[0]); i++)
		parses(UROCE_KNOB_GSO, junk[i], 0, 0);

	/* UROCE_CM_DEBUG: 0..2 */
	parses(UROCE_KNOB_CM_DEBUG, "0", 1, 0);
	parses(UROCE_KNOB_CM_DEBUG, "2", 1, 2);
	parses(UROCE_KNOB_CM_DEBUG, "3", 0, 0);
	/* UROCE_WINDOW_KB: 1..4194304, decimal digits only */
	parses(UROCE_KNOB_WINDOW_KB, "1", 1, 1);
	parses(UROCE_KNOB_WINDOW_KB, "4194304", 1, 4194304);
	parses(UROCE_KNOB_WINDOW_KB, "0", 0, 0);
	parses(UROCE_KNOB_WINDOW_KB, "4194305", 0, 0);
	parses(UROCE_KNOB_WINDOW_KB, "-1", 0, 0);
	parses(UROCE_KNOB_WINDOW_KB, "+5", 0, 0);
	parses(UROCE_KNOB_WINDOW_KB, " 5", 0, 0);
	parses(UROCE_KNOB_WINDOW_KB, "5k", 0, 0);    /* a suffix is for sizes */
	parses(UROCE_KNOB_WINDOW_KB, "0x10", 0, 0);
	parses(UROCE_KNOB_WINDOW_KB, "abc", 0, 0);
	parses(UROCE_KNOB_WINDOW_KB, "99999999999999999999999", 0, 0);
	/* UROCE_PCAP_MAX: bytes, K/M/G, up to 1T */
	parses(UROCE_KNOB_PCAP_MAX, "0", 1, 0);
	parses(UROCE_KNOB_PCAP_MAX, "20K", 1, 20 << 10);
	parses(UROCE_KNOB_PCAP_MAX, "64m", 1, 64ull << 20);
	parses(UROCE_KNOB_PCAP_MAX, "1024G", 1, 1ull << 40);
	parses(UROCE_KNOB_PCAP_MAX, "1025G", 0, 0);
	parses(UROCE_KNOB_PCAP_MAX, "18014398509481984K", 0, 0);  /* wraps when shifted */
	parses(UROCE_KNOB_PCAP_MAX, "1T", 0, 0);
	parses(UROCE_KNOB_PCAP_MAX, "5MB", 0, 0);
	parses(UROCE_KNOB_PCAP_MAX, "M", 0, 0);
	/* a path takes anything */
	parses(UROCE_KNOB_PCAP, "/tmp/x-%p.pcap", 1, 0xdead);
}

/* The table itself: names unique and ours or documented, doc lines, and
 * every numeric default within its range and printed so it parses back. */
static void test_table(void)
{
	for (int k = 0; k < UROCE_KNOB_COUNT; k++) {
		const struct uroce_knob_def *d = def(k);
		char buf[96];
		uint64_t v;

		CHECK(d->name && d->doc && *d->doc, "knob %d: no name or doc", k);
		for (int j = 0; j < k; j++)
			CHECK(strcmp(d->name, def(j)->name), "%s twice", d->name);
		if (d->type == UROCE_KNOB_T_PATH)
			continue;
		CHECK(d->min <= d->def && d->def <= d->max, "%s: default outside its range", d->name);
		uroce_knob_default(d, buf, sizeof(buf));
		CHECK(uroce_knob_parse(d, buf, &v) == 0 && v == d->def,
		      "%s: default %s does not parse back", d->name, buf);
	}
}

static void *read_window(void *arg)
{
	(void)arg;
	return (void *)(uintptr_t)uroce_knob_num(UROCE_KNOB_WINDOW_KB);
}

/* In the child: refused and accepted values, read from two threads. */
static int child(void)
{
	pthread_t t[4];
	void *r;
	int bad = 0;

	setenv("UROCE_WINDOW_KB", "abc", 1);
	setenv("UROCE_CC", "off", 1);
	setenv("UROCE_PCAP_MAX", "20K", 1);
	setenv("UROCE_PCAP", "", 1);
	unsetenv("UROCE_RUNDIR");
	for (int i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, read_window, NULL);
	for (int i = 0; i < 4; i++) {
		pthread_join(t[i], &r);
		bad |= (uintptr_t)r != 1024;
	}
	setenv("UROCE_WINDOW_KB", "64", 1);         /* read once: not seen */
	bad |= uroce_knob_num(UROCE_KNOB_WINDOW_KB) != 1024;
	bad |= uroce_knob_on(UROCE_KNOB_CC);
	bad |= uroce_knob_num(UROCE_KNOB_PCAP_MAX) != 20 << 10;
	bad |= uroce_knob_str(UROCE_KNOB_PCAP) != NULL;          /* empty: unset */
	bad |= strcmp(uroce_knob_str(UROCE_KNOB_RUNDIR), "/run/uroce") != 0;
	bad |= !uroce_knob_on(UROCE_KNOB_GSO);                    /* default on */
	return bad;
}

static void test_accessors(void)
{
	char out[1024] = "";
	int fds[2], status, lines = 0;
	ssize_t n, got = 0;
	pid_t pid;

	if (pipe(fds)) {
		CHECK(0, "pipe");
		return;
	}
	pid = fork();
	if (pid == 0) {
		dup2(fds[1], 2);
		close(fds[0]);
		_exit(child());
	}
	close(fds[1]);
	while ((n = read(fds[0], out + got, sizeof(out) - 1 - got)) > 0)
		got += n;
	close(fds[0]);
	out[got] = 0;
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child: wrong values");
	for (char *p = out; *p; p++)
		lines += *p == '\n';
	CHECK(lines == 1, "%d lines on stderr, want 1:\n%s", lines, out);
	CHECK(strstr(out, "UROCE_WINDOW_KB=abc") && strstr(out, "from 1 to 4194304") &&
	      strstr(out, "default 1024"), "the line does not say what and why: %s", out);
	printf("refused: %s", out);
}

int main(void)
{
	test_parser();
	test_table();
	test_accessors();
	if (failures)
		printf("%d failures\n", failures);
	else
		printf("ok: %d knobs, parser and accessors\n", UROCE_KNOB_COUNT);
	return failures != 0;
}
