/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Ethernet/IP/UDP framing of RoCEv2 packets for the xdp transport, and the
 * L2 facts it needs: the next hop's MAC (routing and neighbour tables,
 * through libnl-3).
 */
#ifndef UROCE_XDP_FRAME_H
#define UROCE_XDP_FRAME_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

#include "transport/transport.h"

#define UROCE_ETH_HLEN 14
#define UROCE_IP4_HLEN 20
#define UROCE_IP6_HLEN 40
#define UROCE_UDP_HLEN 8

/* Headers before the UDP payload for FAMILY. */
static inline uint32_t uroce_frame_hlen(int family)
{
	return UROCE_ETH_HLEN + (family == 2 /* AF_INET */ ? UROCE_IP4_HLEN : UROCE_IP6_HLEN) +
	       UROCE_UDP_HLEN;
}

/*
 * Write the Ethernet, IP and UDP headers of a PAYLOAD_LEN-byte RoCEv2 packet
 * on PATH into the first of the NFRAMES pieces of a frame (uroce_frame_hlen
 * bytes); the payload follows them, through the pieces (a multi-buffer
 * frame's buffers).  IPv4: DF set and ID 0, the values the engine's ICRC
 * covers (transport.h), header checksum; UDP checksum 0 (allowed for IPv4,
 * A17.3.3).  IPv6: UDP checksum computed over the payload (the kernel of a
 * udp peer drops a zero one), so the payload must already be in place.
 */
void uroce_frame_build(const struct iovec *frame, unsigned int nframes, const uint8_t src_mac[6],
		       const uint8_t dst_mac[6], const struct uroce_path *path,
		       uint32_t payload_len);

/*
 * Parse a received frame: a RoCEv2 packet to UDP port 4791 over IPv4 (no
 * options, unfragmented) or IPv6 fills RX (its buf points into FRAME).
 * ROCE_OK, or the reason (enum roce_reason) it is not one; the caller
 * counts and drops it.
 */
int uroce_frame_parse(uint8_t *frame, uint32_t len, struct uroce_rx *rx);

/* The route and neighbour look-ups of one transport (xdp_nl.c). */
struct uroce_xdp_nl;

struct uroce_xdp_nl *uroce_xdp_nl_open(int ifindex);
void uroce_xdp_nl_close(struct uroce_xdp_nl *nl);

/*
 * Where a packet to DST (a GID of FAMILY) leaves: *LOCAL when the routing
 * table says the address is this host's own (the packet must then go
 * through the kernel), else the MAC of the next hop on the interface.  A
 * missing neighbour entry is resolved by the kernel (a datagram to the
 * destination makes it ask), waiting at most WAIT_MS.  Results are cached
 * for a second.  0, -EHOSTUNREACH (no route, or not through this
 * interface), -ETIMEDOUT (no answer).
 */
int uroce_xdp_nl_resolve(struct uroce_xdp_nl *nl, int family, const uint8_t *dst,
			 int wait_ms, uint8_t mac[6], bool *local);

#endif
