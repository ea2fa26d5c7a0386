// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * reaper_start: what starting the CM's reaper costs the application, the
 * old way and the new (docs/fork.md), in a process of a given size:
 *
 *   fork   fork(), the child forks again and both exit; the parent waits
 *          for the first (the previous reaper's start, less its work)
 *   spawn  posix_spawn of uroce-reaper with no descriptors 3 and 4, which
 *          it finds missing at once and exits; the parent waits (exec and
 *          start of the real program, less the mmap)
 *
 *   reaper_start PATH_TO_UROCE_REAPER [RSS_MIB] [RUNS]
 *
 * The two alternate, RUNS times each; prints mean, p99 and p99.9 in us.
 */
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void report(const char *name, double *v, int n)
{
	double sum = 0;

	qsort(v, n, sizeof(*v), cmp);
	for (int i = 0; i < n; i++)
		sum += v[i];
	printf("%-6s mean %8.1f us  p99 %8.1f us  p99.9 %8.1f us  (%d runs)\n", name, sum / n,
	       v[(int)(n * 0.99)], v[(int)(n * 0.999)], n);
}

int main(int argc, char **argv)
{
	static char *const envp[] = { NULL };
	char *const args[] = { "uroce-reaper", NULL };
	size_t rss = (argc > 2 ? strtoul(argv[2], NULL, 0) : 256) << 20;
	int runs = argc > 3 ? atoi(argv[3]) : 1000;
	double *tf = calloc(runs, sizeof(double)), *ts = calloc(runs, sizeof(double));
	char *mem;

	if (argc < 2 || !tf || !ts)
		return 2;
	mem = mmap(NULL, rss, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		return 1;
	memset(mem, 1, rss);    /* resident: fork copies its page tables */
	for (int i = 0; i < runs; i++) {
		double t0 = now_us();
		pid_t pid = fork();

		if (pid == 0) {
			if (fork() == 0)
				_exit(0);
			_exit(0);
		}
		waitpid(pid, NULL, 0);
		tf[i] = now_us() - t0;
		t0 = now_us();
		if (posix_spawn(&pid, argv[1], NULL, NULL, args, envp))
			return 1;
		waitpid(pid, NULL, 0);
		ts[i] = now_us() - t0;
	}
	printf("reaper_start: a process of %zu MiB resident\n", rss >> 20);
	report("fork", tf, runs);
	report("spawn", ts, runs);
	return 0;
}
