/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The xdp transport's state, shared by its three files and included by
 * nothing outside transport/xdp/: xport_xdp.c (open, close, the kernel's
 * counters, the ops table), xdp_path.c (frames out and in), xdp_ctl.c
 * (steering in the XDP program's map, and what the udp transport beneath
 * does for it).
 */
#ifndef UROCE_XDP_XPORT_H
#define UROCE_XDP_XPORT_H

#include <net/if.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <linux/if_xdp.h>
#include <uroce/stats.h>

#include "transport/transport.h"
#include "transport/xdp/xdp_load.h"
#include "transport/xdp/xdp_sock.h"

#define MAX_BURST 64
/* Receive queues that get an AF_XDP socket: as many as the program's
 * XSKMAP has slots; frames on further queues of a larger NIC take the
 * kernel and the udp transport. */
#define MAX_QUEUES UROCE_XDP_MAX_QUEUES

struct xdp_xport {
	struct uroce_xport head;
	/* Beneath: QP1, UD, other processes, local peers.  NULL only where the
	 * program's transport table has no udp (the xdp_probe test tool). */
	struct uroce_xport *udp;
	char devname[64];
	char netdev[IF_NAMESIZE];
	char nsid[64];
	uint8_t mac[6];
	struct uroce_xdp_prog prog;
	bool have_prog;
	struct uroce_xsk *xsk;              /* queue 0's: sends too; NULL: another process has the queues */
	struct uroce_xsk *rxq[MAX_QUEUES];  /* each queue's socket, rxq[0] == xsk; NULL: none */
	unsigned int nrxq;                  /* queues tried (the interface's, at most MAX_QUEUES) */
	unsigned int rx_next;               /* the queue recv looks at first */
	unsigned int udp_skips;             /* spinning calls since the udp beneath was looked at */
	uint32_t rx_max_len;                /* the longest frame every socket takes */
	struct uroce_xdp_nl *nl;
	pthread_mutex_t tx_lock;
	bool kicking;                       /* a thread runs the unlocked kick (tx_lock) */
	bool kick_again;                    /* frames were queued meanwhile: it goes on (tx_lock) */
	uint64_t *counters;                 /* enum uroce_stat */
	struct xdp_statistics seen[MAX_QUEUES];   /* the sockets' counters already counted */
	uint64_t stats_ns;                  /* when they were read */
	bool accounting;                    /* a thread is adding them (account_xsk) */
	uint8_t steered[UROCE_XDP_MAX_QPNS / 8];   /* QPNs we entered in the map */
};

static inline struct xdp_xport *xx(struct uroce_xport *x)
{
	return (struct xdp_xport *)x;
}

static inline void count(struct xdp_xport *t, enum uroce_stat e, uint64_t n)
{
	if (t->counters && n)
		uroce_stat_add(t->counters, e, n);
}

/* xport_xdp.c: add what the kernel counted for the sockets since the last
 * look to the device's counters (at most every 10 ms unless FORCE). */
void xdp_account(struct xdp_xport *t, bool force);

/* xdp_path.c: ops->send, ops->tx_flush, ops->recv. */
int xdp_send(struct uroce_xport *x, const struct uroce_txpkt *pkts, unsigned int n);
void xdp_tx_flush(struct uroce_xport *x);
int xdp_recv(struct uroce_xport *x, struct uroce_rx *pkts, unsigned int max, unsigned int flags);

/* xdp_ctl.c: ops->forward, steer, unsteer, macs, claim_port, send_local,
 * mcast_join, mcast_leave. */
int xdp_forward(struct uroce_xport *x, uint16_t port, const struct uroce_rx *rx);
int xdp_steer(struct uroce_xport *x, uint32_t qpn, int family, const uint8_t *local,
	      const uint8_t *peer, uint16_t peer_port);
void xdp_unsteer(struct uroce_xport *x, uint32_t qpn);
int xdp_macs(struct uroce_xport *x, const struct uroce_path *path, uint8_t *smac,
	     uint8_t *dmac);
int xdp_claim_port(struct uroce_xport *x, int family, const uint8_t *local, uint16_t want);
int xdp_send_local(struct uroce_xport *x, uint16_t port, const struct uroce_txpkt *pkt);
int xdp_mcast_join(struct uroce_xport *x, int family, const uint8_t *group);
void xdp_mcast_leave(struct uroce_xport *x, const uint8_t *group);

#endif
