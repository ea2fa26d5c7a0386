// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* uroce: manage uroce devices and run programs that use them. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "provider_version.h"

int fail(const char *fmt, ...)
{
	va_list ap;

	fputs("uroce: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 1;
}

static void usage(FILE *f)
{
	fputs("Usage: uroce link add NAME netdev IFACE [transport udp|xdp] [tos TOS]\n"
	      "       uroce link set NAME tos TOS\n"
	      "       uroce link del NAME\n"
	      "       uroce link [show [NAME]]\n"
	      "       uroce stat [-a] [-p] [-j] [NAME]\n"
	      "       uroce run [--] CMD [ARGS...]\n"
	      "       uroce trace [--qp QPN] [--wr WR_ID [--nth N]] [--from S] [--to S] [--svg] FILE...\n"
	      "       eval \"$(uroce env)\"\n"
	      "       uroce knobs [--names]\n"
	      "       uroce version\n"
	      "\n"
	      "A uroce device is a software RoCEv2 RNIC bound to a network interface.\n"
	      "Adding and deleting devices needs root; running programs does not.\n",
	      f);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "link"))
		return cmd_link(argc - 2, argv + 2);
	if (!strcmp(argv[1], "stat") || !strcmp(argv[1], "statistic"))
		return cmd_stat(argc - 2, argv + 2);
	if (!strcmp(argv[1], "trace"))
		return cmd_trace(argc - 2, argv + 2);
	if (!strcmp(argv[1], "run"))
		return cmd_run(argc - 2, argv + 2);
	if (!strcmp(argv[1], "env"))
		return cmd_env(argc - 2, argv + 2);
	if (!strcmp(argv[1], "knobs"))
		return cmd_knobs(argc - 2, argv + 2);
	if (!strcmp(argv[1], "version") || !strcmp(argv[1], "--version")) {
		printf("uroce %s\n", UROCE_VERSION);
		return 0;
	}
	if (!strcmp(argv[1], "help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(stdout);
		return 0;
	}
	usage(stderr);
	return fail("unknown command \"%s\"", argv[1]) + 1;
}
