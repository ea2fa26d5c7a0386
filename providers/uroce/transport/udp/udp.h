/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The udp transport's own state, shared by its files and included by
 * nothing outside transport/udp/: udp.c (open, close, the ops table),
 * udp_sock.c (making sockets), udp_sport.c (sending sockets by source
 * port), udp_tx.c (send: GSO and sendmmsg), udp_txconn.c (connected send
 * sockets and their IPv4 IDs), udp_rx.c (receive: recvmmsg and GRO),
 * udp_fwd.c (forwarding between a device's processes), udp_steer.c (a
 * QP's connected receive socket), udp_mcast.c (multicast groups).
 */
#ifndef UROCE_UDP_H
#define UROCE_UDP_H

#include <net/if.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>

#include "device/device.h"
#include "transport/transport.h"

#ifndef IPV6_FLOWINFO
#define IPV6_FLOWINFO 11   /* linux/in6.h: receive the flow label as a cmsg */
#endif

#define UDP_MAX_CONN 65536          /* QPNs that can be steered (the QPN table's size) */
#define UDP_FWD_IDX UROCE_GID_TBL_LEN   /* epoll data of the forwarding socket */
#define UDP_CONN_BASE 64                /* epoll data of QPN q's socket: BASE + q */
#define UDP_BURST 64                /* caps.max_burst */
#define UDP_MAX_MCAST 256           /* multicast groups (the device's max_mcast_grp) */
#define UDP_MCAST_BASE (UDP_CONN_BASE + UDP_MAX_CONN)  /* epoll data of group slot g: BASE + g */
/* What a packet's IP header said where the socket cannot tell: the values
 * every uroce and rxe sender writes unless told otherwise. */
#define UDP_DEFAULT_TTL 64

/* What a forwarded packet carries ahead of it (the forwarding socket). */
struct udp_fwd_hdr {
	uint8_t family;
	uint8_t tos;
	uint16_t src_port;
	uint16_t dst_port;
	uint16_t ttl;                /* FWD_TTL | TTL (| FWD_DIRECT); 0 from builds before it */
	uint8_t src_ip[16];
	uint8_t dst_ip[16];
};
#define UDP_FWD_TTL 0x100
/* Sent to its owner by a process of the same device (send_local), not
 * passed on: received as if from the wire, forwarded at most once. */
#define UDP_FWD_DIRECT 0x200

struct udp_sock {
	int fd;
	int family;
	uint8_t ip[16];
	uint16_t port;               /* tx sockets: the source port */
	int next;                    /* tx sockets: 1 + the next of the same port, 0: none */
	bool exclusive;              /* tx sockets: a QP's port in place of its held one */
};

struct udp_rxstate;
struct udp_txconn;

struct udp_xport {
	struct uroce_xport x;        /* first: what the engine sees */
	char devname[64];
	char netdev[IF_NAMESIZE];
	int ifindex;
	uint64_t *counters;
	bool gso, gro;               /* UROCE_GSO / UROCE_GRO, and what the kernel allows */
	bool conn_ip_fields;         /* connected sockets read TOS/TTL too (a packet trace) */
	bool told_port_taken;        /* udp_claim_port said so on stderr */

	struct udp_sock rx_addr[UROCE_GID_TBL_LEN];  /* bound ADDR:4791 */
	int n_rx;
	pthread_mutex_t conn_lock;   /* steer/unsteer against recv */
	struct udp_sock *conns;      /* per QPN, connected to the peer */
	int fwd_fd;                  /* packets other processes pass on to us */
	/* Multicast groups (under conn_lock): bound GROUP:4791, joined on
	 * the netdev; fd 0: a free slot. */
	struct udp_sock mcast[UDP_MAX_MCAST];

	pthread_mutex_t tx_lock;
	struct udp_sock *tx;         /* bound (source address, source port): grows */
	int n_tx, cap_tx;
	int *tx_by_port;             /* 65536: 1 + the first tx socket of each port, 0: none */

	struct udp_rxstate *rx;      /* udp_rx.c */
	struct udp_txconn *txconn;   /* udp_txconn.c: NULL when off */
	int txconn_sink;             /* where its probes go; -1: none */
	uint16_t txconn_sink_port;
};

static inline struct udp_xport *to_udp(struct uroce_xport *x)
{
	return (struct udp_xport *)x;
}

/* udp.c: watch FD in the transport's epoll set as IDX (UDP_*_IDX/BASE). */
int udp_epoll_add(struct udp_xport *u, int fd, uint64_t idx);

/* udp_sock.c */
/* What a receiving socket is asked for. */
enum rx_opts {
	RX_GRO = 1u << 0,        /* it takes coalesced datagrams */
	/* It reads the IP fields a UDP socket does not otherwise show (the
	 * receive path rebuilds the IP header for UD GRH areas).  Each is a
	 * control message per datagram: on lo they cost a ping-pong 0.26 us
	 * one way (docs/performance.md), so sockets whose packets never
	 * reach a UD QP go without. */
	RX_IP_FIELDS = 1u << 1,
};

/* A receiving socket of FAMILY with REUSE (SO_REUSEPORT, SO_REUSEADDR or
 * 0: none), not bound yet; one bound to (IP16, PORT) with SO_REUSEPORT.
 * OPTS: enum rx_opts.  Its fd or -errno. */
int udp_rx_socket(int family, int reuse, unsigned int opts);
int udp_rx_bound_socket(int family, const uint8_t *ip16, uint16_t port, int ifindex,
			unsigned int opts);
/* What a sending socket is set to (DF). */
void udp_tx_options(int fd, int family);
/* A new sending socket bound and set as those are; its fd or -errno. */
int udp_bound_socket(int family, const uint8_t *ip, uint16_t port, int ifindex);
/* Bind FD to a port of 32768..49151 of IP16 that no other socket holds or
 * can join (SEED: where to start looking); 0 or -errno.  The port FD is
 * bound to, or 0. */
int udp_bind_exclusive(int fd, int family, const uint8_t *ip16, int ifindex, uint32_t seed);
uint16_t udp_bound_port(int fd);
/* A socket of this process alone on port *PORT, 32768..49151 of every
 * IPv4 address, out of the QPs' source ports; its fd or -errno. */
int udp_sink_socket(uint16_t *port);

/* udp_sport.c: the socket packets from (FAMILY, IP, PORT) leave through,
 * made on first use; ops->claim_port. */
int udp_tx_socket(struct udp_xport *u, int family, const uint8_t *ip, uint16_t port);
int udp_claim_port(struct uroce_xport *x, int family, const uint8_t *ip, uint16_t want);

/* udp_fwd.c: the forwarding socket on IP16 (its fd or -errno);
 * ops->forward and ops->send_local. */
int udp_fwd_socket(int family, const uint8_t *ip16, int ifindex);
int udp_forward(struct uroce_xport *x, uint16_t port, const struct uroce_rx *rx);
int udp_send_local(struct uroce_xport *x, uint16_t port, const struct uroce_txpkt *pkt);

/* udp_steer.c: ops->steer and ops->unsteer. */
int udp_steer(struct uroce_xport *x, uint32_t qpn, int family, const uint8_t *local,
	      const uint8_t *peer, uint16_t port);
void udp_unsteer(struct uroce_xport *x, uint32_t qpn);

/* udp_mcast.c: ops->mcast_join and ops->mcast_leave. */
int udp_mcast_join(struct uroce_xport *x, int family, const uint8_t *group);
void udp_mcast_leave(struct uroce_xport *x, const uint8_t *group);

/* udp_txconn.c: a path's own socket, connected (IPv4 unicast) */
int udp_txconn_init(struct udp_xport *u);
void udp_txconn_fini(struct udp_xport *u);
/* P's connected socket, locked, with its next IPv4 ID known; NULL: send
 * unconnected.  Every datagram sent through it takes one ID. */
struct udp_txconn *udp_txconn_lock(struct udp_xport *u, const struct uroce_path *p);
int udp_txconn_fd(const struct udp_txconn *c);
uint16_t udp_txconn_next_id(const struct udp_txconn *c);
/* DATAGRAMS left; FAILED: a send failed, which may have taken an ID. */
void udp_txconn_unlock(struct udp_txconn *c, unsigned int datagrams, bool failed);

/* udp_tx.c */
int udp_send(struct uroce_xport *x, const struct uroce_txpkt *pkts, unsigned int n);

/* udp_rx.c */
int udp_rx_init(struct udp_xport *u);
void udp_rx_fini(struct udp_xport *u);
int udp_recv(struct uroce_xport *x, struct uroce_rx *pkts, unsigned int max, unsigned int flags);

#endif
