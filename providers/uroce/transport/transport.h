/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The transport interface: all the engine knows of the network beneath it.
 *
 * A transport moves RoCEv2 packets, each the UDP payload from the BTH to
 * the ICRC, between the addresses of a device's netdev and its peers.  One
 * is opened per (process, device) by the engine, chosen by the device's
 * `transport` attribute (uroce_xport_lookup).  The rules each call keeps
 * (who owns buffers, partial sends, errors, threads) are in docs/transport.md.
 *
 * Layers: verbs -> engine -> transport -> wire.  This header includes
 * nothing of the layers above it.
 */
#ifndef UROCE_TRANSPORT_H
#define UROCE_TRANSPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

/* The RoCEv2 UDP destination port (IBTA A17.2). */
#define UROCE_XPORT_ROCE_PORT 4791
/* Largest packet (BTH..ICRC) a transport carries: a 4096-byte MTU payload
 * and the longest header set (BTH+RETH+ImmDt... 56 bytes) with pad and ICRC. */
#define UROCE_XPORT_MAX_PKT 4200
/* iovec entries one packet may be gathered from (headers, SGEs, pad+ICRC). */
#define UROCE_XPORT_MAX_IOV 40

/* Where a packet goes: the IP and UDP fields of one RoCEv2 packet. */
struct uroce_path {
	int family;                 /* AF_INET (IPv4-mapped GIDs) or AF_INET6 */
	uint8_t src[16];            /* source GID: one of the device's addresses */
	uint8_t dst[16];            /* destination GID */
	uint16_t sport;             /* UDP source port (A17.3.1 entropy) */
	uint16_t dport;             /* UDP destination port: UROCE_XPORT_ROCE_PORT */
	uint8_t tclass;             /* IPv4 TOS / IPv6 traffic class */
	uint8_t hop_limit;          /* IPv4 TTL / IPv6 hop limit; 0: the default */
	uint32_t flow_label;        /* IPv6 */
};

/* Do packets on A and B leave with the same addresses, ports and IP fields?
 * (Then a GSO datagram may carry both.) */
static inline bool uroce_path_same(const struct uroce_path *a, const struct uroce_path *b)
{
	return a == b ||
	       (a->family == b->family && a->sport == b->sport && a->dport == b->dport &&
		a->tclass == b->tclass && a->hop_limit == b->hop_limit &&
		a->flow_label == b->flow_label && !memcmp(a->src, b->src, 16) &&
		!memcmp(a->dst, b->dst, 16));
}

/*
 * One packet to send: the UDP payload, BTH .. ICRC, gathered from IOV; the
 * last iovec holds at least the 4 ICRC bytes.  The ICRC is computed for
 * IPv4 ID 0 with DF (wire/icrc.c); a transport that writes another ID (a
 * GSO segment's) corrects the ICRC for it, in place: those 4 bytes are the
 * engine's until the send returns, never an application's memory.
 */
struct uroce_txpkt {
	const struct uroce_path *path;
	const struct iovec *iov;
	uint32_t iovcnt;            /* at most UROCE_XPORT_MAX_IOV */
	uint32_t len;               /* sum of the iov lengths */
};

/* One packet received: the UDP payload (BTH...ICRC) and its addresses. */
struct uroce_rx {
	uint8_t *buf;
	uint32_t len;
	int family;
	uint8_t src_ip[16];          /* IPv4 in the last 4 bytes */
	uint8_t dst_ip[16];
	uint16_t src_port;
	uint16_t dst_port;
	/* The IP header fields a UD receive's GRH area shows (IBTA A17.4.5.2):
	 * IPv4 TOS / IPv6 traffic class, TTL / hop limit, IPv6 flow label.
	 * Steered connections' packets may carry 0, the default TTL and 0
	 * (uroce_xport_conf.rx_ip_fields_always). */
	uint8_t tos;
	uint8_t ttl;
	uint32_t flow;
	/* The IPv4 ID and DF bit the ICRC covers.  ip_id_exact: read from the
	 * header (a frame transport).  Otherwise ip_id is the likeliest value
	 * (a coalesced datagram's segment index), tried first with DF before
	 * the check solves for the bits (wire/icrc.c). */
	uint16_t ip_id;
	bool ip_id_exact;
	bool df;
	bool forwarded;              /* came from another process: never forward again */
	/* A frame transport: the frame's Ethernet addresses (UROCE_PCAP
	 * records them; a socket transport has none and the record's are
	 * made up). */
	bool has_macs;
	uint8_t smac[6], dmac[6];
};

/* How recv is called. */
enum uroce_rx_flags {
	/* An application's poll of an empty CQ, made again and again while
	 * it waits (a busy-polling program): a transport may look only where
	 * looking is cheap on most such calls, as long as each place is
	 * looked at within a few calls.  Without it (the progress thread,
	 * woken because the fd is readable), it looks everywhere. */
	UROCE_RX_SPINNING = 1u << 0,
};

/* What a transport can do; fixed from open to close. */
struct uroce_xport_caps {
	uint32_t max_burst;         /* packets one send or recv call takes at most */
	uint32_t max_payload;       /* largest packet (BTH..ICRC) the netdev's MTU lets through */
	bool tx_segmentation;       /* runs of equal-size packets to one path leave as one (GSO;
				     * __atomic: off once a path refuses it) */
	bool rx_coalescing;         /* the kernel hands over runs of packets as one (GRO) */
	bool frames;                /* carries whole Ethernet frames (writes L2..L4 itself) */
};

/* Open-time facts and the counters (enum uroce_stat) the transport adds to. */
struct uroce_xport_conf {
	const char *devname;        /* for messages */
	const char *netdev;         /* the device's netdev: its addresses are served */
	uint64_t *counters;         /* UROCE_STAT_COUNT entries, updated atomically */
	/* Every packet's IP fields (struct uroce_rx: tos, ttl, flow) are
	 * wanted, as a packet trace records them.  Otherwise only those a UD
	 * receive's GRH area shows: a transport may leave them at their
	 * defaults for the packets of a steered connection (RC/UC), whose
	 * completions have no GRH. */
	bool rx_ip_fields_always;
};

/*
 * An open transport.  Every implementation starts its own state with this
 * head; the engine reads the head and calls the ops, nothing else.
 */
struct uroce_xport {
	const struct uroce_xport_ops *ops;
	struct uroce_xport_caps caps;
	int fd;                     /* readable (level) while recv has packets */
	uint32_t tx_left;           /* packets a stalled queue kept (__atomic): call tx_flush */
	uint16_t fwd_port;          /* token other processes forward to us with (0: none) */
};

struct uroce_xport_ops {
	const char *name;           /* as the `transport` device attribute says it */
	/* Serve CONF->netdev's addresses; *OUT on success.  0 or -errno
	 * (EADDRINUSE: another user's processes hold the addresses). */
	int (*open)(const struct uroce_xport_conf *conf, struct uroce_xport **out);
	void (*close)(struct uroce_xport *x);
	/* Send PKTS[0..N) in order (N <= caps.max_burst).  Returns how many
	 * leading packets were handed to the network (N on success), or -errno
	 * when none was.  Buffers are the caller's and free again on return. */
	int (*send)(struct uroce_xport *x, const struct uroce_txpkt *pkts, unsigned int n);
	/* Take up to MAX waiting packets into PKTS; never blocks.  Returns the
	 * count (0: none) or -errno.  The bytes stay valid until the next recv
	 * or close; recv is called by one thread at a time.  FLAGS:
	 * UROCE_RX_SPINNING or 0 (enum uroce_rx_flags). */
	int (*recv)(struct uroce_xport *x, struct uroce_rx *pkts, unsigned int max,
		    unsigned int flags);

	/* Optional (NULL: not needed by this transport). */
	/* While tx_left > 0: try once more to hand what send left queued to
	 * the kernel, without waiting; updates tx_left.  A transport that
	 * keeps packets after send returns (AF_XDP's TX ring in copy mode,
	 * which only a system call drains) needs someone to call it: the
	 * last packets of a UC message would otherwise never leave. */
	void (*tx_flush)(struct uroce_xport *x);
	/* Pass RX to the process of this device whose fwd_port is PORT. */
	int (*forward)(struct uroce_xport *x, uint16_t port, const struct uroce_rx *rx);
	/* Deliver the packets of connection QPN, sent from (PEER, PEER_PORT)
	 * to (LOCAL, 4791), to this process directly (both GIDs of FAMILY).
	 * Safe against a concurrent recv.  0 or -errno. */
	int (*steer)(struct uroce_xport *x, uint32_t qpn, int family, const uint8_t *local,
		     const uint8_t *peer, uint16_t peer_port);
	void (*unsteer)(struct uroce_xport *x, uint32_t qpn);
	/* A QP will send from (FAMILY, LOCAL, WANT): get ready for it.
	 * Returns the port it must send from instead when WANT is held by
	 * another program (the ICRC covers the port), else WANT; -errno.
	 * Absent: any port can be sent from. */
	int (*claim_port)(struct uroce_xport *x, int family, const uint8_t *local, uint16_t want);
	/* PKT is for a process of this device: pass it to the one whose
	 * fwd_port is PORT directly (never through sockets other processes
	 * share, where one may read it and exit before passing it on); it is
	 * received there as from the wire.  -EADDRNOTAVAIL when PKT's
	 * destination is not an address this transport serves (then it takes
	 * the wire, send); 0 or -errno. */
	int (*send_local)(struct uroce_xport *x, uint16_t port, const struct uroce_txpkt *pkt);
	/* Receive the packets sent to the IP multicast GROUP (16 bytes,
	 * IPv4-mapped or IPv6, of FAMILY) on the netdev, every process of the
	 * host its own copy (IBTA A17.4: an MGID is an IP multicast address);
	 * they come out of recv with dst_ip GROUP.  Safe against a concurrent
	 * recv.  0 or -errno (-ENOSPC: no room for another group). */
	int (*mcast_join)(struct uroce_xport *x, int family, const uint8_t *group);
	void (*mcast_leave)(struct uroce_xport *x, const uint8_t *group);
	/* The Ethernet addresses a frame to PATH leaves with (a frame
	 * transport; for UROCE_PCAP's records), without waiting for a
	 * neighbour resolution.  0, or -errno where no frame of this
	 * transport would carry it (another host not yet resolved, this
	 * host: the udp transport beneath). */
	int (*macs)(struct uroce_xport *x, const struct uroce_path *path, uint8_t *smac,
		    uint8_t *dmac);
	/* Add to the device's counters what the kernel counted for this
	 * transport and it has not read yet (AF_XDP's socket statistics, read
	 * every 10 ms while receiving).  Called at the exit of a program that
	 * did not close its device: the counts a failed run is read for. */
	void (*sync_counters)(struct uroce_xport *x);
	/* Before close: take no new datagram from the sockets other processes
	 * share, so that the kernel gives the next ones to those processes;
	 * what is queued already can still be received. */
	void (*retire)(struct uroce_xport *x);
};

/* Packets the transport still holds after a stalled send: call tx_flush. */
static inline bool uroce_xport_tx_left(const struct uroce_xport *x)
{
	return x->ops->tx_flush && __atomic_load_n(&x->tx_left, __ATOMIC_ACQUIRE);
}

/* IP16 (IPv4-mapped or IPv6) and PORT as a socket address of FAMILY in
 * *SS; the scope of a link-local IPv6 address is IFINDEX.  Its length.
 * Pure (async-signal-safe): the CM's reaper uses it after fork. */
socklen_t uroce_xport_sockaddr(int family, const uint8_t *ip16, uint16_t port, int ifindex,
			       struct sockaddr_storage *ss);

/* The transport a device's `transport` attribute names ("udp"; "xdp" once
 * it exists), or NULL. */
const struct uroce_xport_ops *uroce_xport_lookup(const char *name);

/* The RoCEv2 UDP source port of QP QPN (A17.3.1: entropy for the path,
 * one port per QP; RoCEv2 source ports are 0xC000-0xFFFF).  The low 14
 * bits of the QPN: the device's QPN table keeps them unique among the
 * live QPs of an address (device/qpn.h), so no two connections leave one
 * address from one port.  Both ends of a uroce connection compute the
 * other's, so a connection is steered from its first packet. */
static inline uint16_t uroce_xport_sport(uint32_t qpn)
{
	return (uint16_t)(0xC000 | (qpn & 0x3fff));
}

#endif
