/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/* The TCP side channel two test processes exchange QP numbers, GIDs and
 * keys over, as the ibv_*_pingpong tools do. */
#ifndef UROCE_TEST_SIDECHANNEL_H
#define UROCE_TEST_SIDECHANNEL_H

#include <stddef.h>

/* HOST NULL: listen on PORT and accept one peer; else connect to HOST:PORT
 * (retrying for 10 s while the server starts).  The socket, or -1. */
int side_open(const char *host, const char *port);
/* Send N bytes of OUT and receive N bytes into IN; 0, or -1 if the peer
 * is gone. */
int side_xfer(int sock, const void *out, void *in, size_t n);

#endif
