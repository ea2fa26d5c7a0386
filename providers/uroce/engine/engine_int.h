/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * Inside the protocol engine: what its files share, and nothing outside
 * engine/ includes (their door is engine.h).  One engine per (process,
 * device) owns the transport, the progress thread, the map from local
 * QPNs to QPs and the per-QP protocol state of the requester (req.c),
 * responder (resp*.c) and completer (comp.c).
 */
#ifndef UROCE_ENGINE_INT_H
#define UROCE_ENGINE_INT_H

#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/uio.h>

#include <uroce/roce_hdr.h>
#include <uroce/stats.h>

#include "device/device.h"
#include "engine/engine.h"
#include "trace/trace.h"
#include "transport/transport.h"
#include "wire/wire.h"

struct uroce_pcap;

/* Packets in flight per QP before the requester waits for an ACK: the
 * most the congestion window (cc.c) may grow to, whatever UROCE_WINDOW_KB
 * says (1 MiB of the smallest MTU, 256 bytes). */
#define UROCE_WINDOW_MAX 4096
/* Ask for an ACK at least every this many packets of a long message. */
#define UROCE_ACKREQ_EVERY 16
/* An RDMA READ WQE is issued as READ requests of at most this many packets. */
#define UROCE_READ_CHUNK_PKTS 64

struct uroce_engine {
	struct uroce_engine *next;   /* the process's list of engines */
	int refs;
	unsigned gen;                /* uroce_fork_gen when made (uroce_parents) */
	char devname[UROCE_NAME_MAX];
	char netdev[IF_NAMESIZE];
	char nsid[32];

	struct uroce_qpn_table *qpns;
	pthread_rwlock_t qps_lock;   /* readers: packets and timers; writer: create/destroy */
	struct uroce_qp **qps;       /* indexed by QPN (local QPs only) */
	struct uroce_qp **qp_list;   /* the same QPs, dense, for the timer scan */
	uint32_t n_qps;
	atomic_int armed;            /* QPs with a timer running */
	_Atomic uint64_t acks_sent_gen; /* receive bursts whose ACKs are on the wire */
	/* resp_ack.c: QPs whose ACK a receive burst held back, to leave with the
	 * QP's next requests, or at the next call, or after ack_hold_ns. */
	pthread_mutex_t held_lock;
	atomic_uint n_held;
	uint32_t held_qpn[64];
	_Atomic uint64_t held_since_ns; /* when the oldest of them was held */
	uint64_t ack_hold_ns;        /* UROCE_ACK_HOLD_US: the longest hold */
	bool progress_held;          /* the progress thread holds some of them */
	/* pkt.c: per IPv4 source (address and port, hashed), the ID of its
	 * last datagram and how far IDs moved between its last two (key 32
	 * bits, ID 16, step 16): the first guess for the next datagram's. */
	_Atomic uint64_t rx_id_guess[64];

	/* The device's transport (transport/transport.h): all the engine
	 * knows of the network. */
	struct uroce_xport *xport;
	int wake_fd;                 /* eventfd: work for the progress thread */
	int tick_fd;                 /* timerfd: when the timers are due (uroce_engine_tick_by) */
	_Atomic uint64_t tick_at_ns; /* when the timers want a look; UINT64_MAX: never.  Never
	                              * after the earliest timer of an armed QP */
	_Atomic uint64_t fd_at_ns;   /* what tick_fd is set to: tick_at_ns, or the watchdog's */
	atomic_bool watchdog;        /* a polling application keeps the time, and tick_fd
	                              * is its watchdog (poll.c, uroce_poll_beat) */
	pthread_mutex_t tick_lock;   /* orders the setters of tick_fd */
	int epfd;
	pthread_mutex_t rx_lock;     /* one thread drains the sockets at a time: order kept */
	pthread_t thread;
	atomic_bool stop;
	_Atomic uint64_t loop_ns;    /* when the progress thread last looped (diag.c) */
	uint64_t busy_poll_ns;       /* poll.c: keep polling this long after activity */
	uint64_t slice_ns;           /* poll.c: the progress thread's scheduler slice */
	/* poll.c: who watches the transport.  Application polls of the wire
	 * (counted by uroce_engine_poll); the rest is the progress thread's. */
	_Atomic uint64_t app_polls;
	_Atomic uint64_t app_contended; /* of them, found the receive path taken */
	uint64_t contended_seen;     /* app_contended when the progress thread last looked */
	enum uroce_watch { UROCE_WATCH_PROGRESS, UROCE_WATCH_DEFERRED } watch;
	uint64_t poll_defer_ns;      /* UROCE_DEFER_US: how long a deferral lasts before a look */
	uint64_t polls_seen;         /* app_polls at the last look */
	uint64_t app_cpu_ns;         /* CPU time of the application's threads at the last look */
	uint64_t app_cpu_at_ns;      /* when that was */
	bool app_idle;               /* they used little CPU of late: busy polling may run */
	uint32_t app_idle_looks;     /* looks in a row that found them idle */
	uint32_t wasted_wakes;       /* in a row: woken for packets an application took */
	uint64_t defer_check_ns;     /* deferred: the next look */
	uint64_t look_gap_ns;        /* deferred: from one look to the next (poll.c) */
	unsigned int looks_found;    /* deferred: looks in a row that found packets waiting */
	/* An application armed a CQ to sleep on its channel (req_notify_cq):
	 * counted, and while deferred, a request to watch again. */
	_Atomic uint64_t app_arms;
	uint64_t arms_seen;          /* app_arms at the last wake-up */
	_Atomic bool rewatch_asked;

	/* Counters (enum uroce_stat): the process's published shared-memory
	 * record for this device when there is one, else private memory. */
	struct uroce_stats_shm *stats;
	bool stats_shared;

	struct uroce_gsi *gsi;       /* QP1 (cm/gsi.c) */

	/* UD multicast (mcast_groups.c): the groups this process's QPs on the device
	 * joined, each with its socket; NULL until the first attach. */
	pthread_mutex_t mcast_lock;
	struct uroce_mcast_grp *mcast;
};

struct uroce_mcast_grp {
	bool joined;                 /* the transport receives the group (ops->mcast_join) */
	union ibv_gid mgid;
	uint32_t qpns[UROCE_MAX_MCAST_QP_ATTACH];
	int n_qps;
};


/* The counter of a NAK with CODE (enum roce_nak_code) sent or received:
 * BASE is UROCE_STAT_NAKS_TX_SEQ or UROCE_STAT_NAKS_RX_SEQ; the five codes'
 * counters follow in code order, unknown codes count as the last. */
static inline enum uroce_stat uroce_nak_stat(enum uroce_stat base, uint8_t code)
{
	_Static_assert(UROCE_STAT_NAKS_TX_INV_RD - UROCE_STAT_NAKS_TX_SEQ == ROCE_NAK_INVALID_RD_REQ &&
		       UROCE_STAT_NAKS_RX_INV_RD - UROCE_STAT_NAKS_RX_SEQ == ROCE_NAK_INVALID_RD_REQ,
		       "NAK counters follow the NAK codes");
	return base + (code < ROCE_NAK_INVALID_RD_REQ ? code : ROCE_NAK_INVALID_RD_REQ);
}

/* Count N events of kind E on ENG. */
static inline void uroce_count(struct uroce_engine *eng, enum uroce_stat e, uint64_t n)
{
	uroce_stat_add(eng->stats->counters, e, n);
}

/* Per-QP protocol state, hung on qp->engine. */
struct uroce_qp_eng {
	struct uroce_engine *eng;
	struct uroce_qp *qp;
	bool armed;                  /* counted in eng->armed */
	uint32_t mtu;                /* path MTU in bytes */

	/* requester */
	uint32_t sq_psn;             /* PSN of the next new packet */
	uint32_t sq_next;            /* index of the WQE being transmitted */
	uint64_t cur_off;            /* bytes of sq_next already packetised */
	uint32_t cur_psn;            /* PSN of the next packet of sq_next */
	uint32_t una_psn;            /* oldest PSN not yet acknowledged */
	uint32_t since_ackreq;
	uint32_t rd_atomic;          /* READ/atomic WQEs started, not completed */
	uint8_t retry_left, rnr_left;
	uint64_t deadline_ns;        /* retransmit timer, 0 = off */
	uint64_t rnr_until_ns;       /* RNR wait, 0 = none */
	uint64_t probe_ns;           /* tail-loss probe, 0 = off */
	uint8_t probes;              /* sent since the last forward progress */
	bool probe_ackreq;           /* the next packet is a probe: AckReq it */
	uint64_t srtt_ns;            /* smoothed ACK round trip, 0 = unknown */
	uint32_t rtt_psn;            /* the AckReq packet being timed */
	uint64_t rtt_sent_ns;        /* when it left, 0 = none being timed */
	bool draining;               /* SQD */
	bool drained_sent;           /* SQ_DRAINED reported */
	bool comm_est_sent;          /* COMM_EST reported */
	uint16_t conn_port;          /* peer source port the receive socket is connected to */
	uint8_t reconnects;          /* times the peer's port had to be learnt again */
	bool rd_rewound;             /* a READ/atomic was resent from rd_rewind_psn already */
	uint32_t rd_rewind_psn;
	uint32_t xrc_srqn;           /* XRC receive QP: the SRQ of the message in progress */
	uint32_t rd_ahead_psn;       /* the highest response PSN seen since */
	/* READ responses placed ahead of a gap in the head READ (the one whose
	 * first PSN is rd_kept_first): bit i is PSN expected + 1 + i. */
	uint64_t rd_kept;
	uint32_t rd_kept_first;
	/* congestion window (cc.c); 0 = not started */
	uint32_t cwnd, ssthresh;     /* in 1/256 packets */
	uint32_t win;                /* the window of this progress pass, packets */
	uint32_t cc_una;             /* una_psn when the window last grew */
	uint32_t cc_recover_psn;     /* no new decrease before una passes it */
	/* Go-back-N under a window smaller than what was in flight: PSNs
	 * before resent_end left before the rewind, so responses up to there
	 * are genuine although cur_psn is below them (comp.c). */
	uint32_t resent_end;
	bool resending;

	/* responder */
	uint32_t epsn;               /* expected PSN */
	uint32_t msn;
	bool nak_sent;               /* PSN sequence NAK outstanding (IBTA 9.7.5.1.4) */
	bool ack_due;                /* a coalesced ACK waits for the end of the receive burst */
	uint8_t hold_misses;         /* held ACKs in a row no post took along (resp_ack.c) */
	uint8_t hold_tries;          /* ACKs the progress thread did not hold since (resp_ack.c) */
	uint64_t ack_gen;            /* the burst that queued the last ACK (resp_ack.c) */
	uint32_t ack_psn;
	uint32_t ack_msn;
	uint32_t recv_wqe_valid;     /* a receive WQE is taken for the current SEND */
	struct uroce_recv_wqe *rwqe; /* a copy of it */
	uint8_t rwqe_buf[sizeof(struct uroce_recv_wqe) + UROCE_MAX_SGE * sizeof(struct uroce_sge)];
	uint64_t recv_off;           /* bytes of the current SEND placed */
	uint8_t *write_ptr;          /* current RDMA WRITE: next byte */
	uint64_t write_left;
	uint64_t write_len;          /* whole length from the RETH */
	bool uc_drop;                /* UC: discard the rest of a broken message */
	bool read_dup;               /* answering a duplicate READ: MSN stays */
	/* RDMA READ / atomic replay (IBTA 9.7.5.1.1: duplicates re-executed/replayed) */
	struct uroce_atomic_res {
		uint32_t psn;
		bool valid;
		uint64_t orig;
	} atomic_res[UROCE_MAX_RD_ATOM];
	uint32_t atomic_next;
};

/* The engine of QP, which has one (after uroce_engine_qp_create). */
static inline struct uroce_engine *uroce_eng_of(const struct uroce_qp *qp)
{
	return qp->engine->eng;
}

/* A READ or atomic: it takes one of the QP's max_rd_atomic slots and its
 * response, not an ACK, completes it. */
static inline bool uroce_is_rd_atomic(enum ibv_wr_opcode op)
{
	return op == IBV_WR_RDMA_READ || op == IBV_WR_ATOMIC_CMP_AND_SWP ||
	       op == IBV_WR_ATOMIC_FETCH_AND_ADD;
}

/* Send-queue operations that put nothing on the wire (mw.c). */
static inline bool uroce_is_local_op(enum ibv_wr_opcode op)
{
	return op == IBV_WR_BIND_MW || op == IBV_WR_LOCAL_INV;
}

/* The QP's path MTU in bytes (set when it enters RTR). */
static inline uint32_t uroce_qp_mtu(const struct uroce_qp_eng *qe)
{
	return qe->mtu ? qe->mtu : 1024;
}

/* PSNs a message of LEN bytes takes: one per path MTU, at least one (a READ
 * request reserves as many for its responses, IBTA 9.7.5.1.5). */
static inline uint32_t uroce_npkts(const struct uroce_qp_eng *qe, uint64_t len)
{
	return len ? (uint32_t)((len + uroce_qp_mtu(qe) - 1) / uroce_qp_mtu(qe)) : 1;
}

/* ---- what each file offers the others ------------------------------------ */

/* engine.c: the engine of CTX's device (a reference). */
struct uroce_engine *uroce_engine_get(struct uroce_context *ctx);

/* The progress thread's epoll set: the data of each fd (engine.c adds
 * them, progress.c waits on them). */
#define WAKE_IDX 1
#define XPORT_IDX 2
#define TICK_IDX 3
/* Packets taken from the transport per call, and calls per wake-up. */
#define RX_BURST 64
#define RX_ROUNDS 64

/* Who ran a receive burst, and so which of its ACKs may wait (resp_ack.c). */
enum uroce_burst_by {
	UROCE_BURST_PROGRESS,        /* the progress thread */
	UROCE_BURST_APP,             /* an application thread's CQ poll */
};

/* recv.c: local QP number QPN, its lock held, or NULL (none); everything
 * the transport has, a burst at a time, dispatched (rx_lock held): the
 * packets taken. */
struct uroce_qp *uroce_engine_qp_locked(struct uroce_engine *eng, uint32_t qpn);
unsigned int uroce_engine_rx_bursts(struct uroce_engine *eng, enum uroce_burst_by by);
/* recv.c: at exit (rx_lock held, eng->stop set): what the transport holds
 * that belongs to another process goes on to it; this process's own is
 * dropped, and none of its objects is touched.  The packets taken. */
unsigned int uroce_engine_rx_pass_on(struct uroce_engine *eng);

/* progress.c: the progress thread (ARG: its engine); wake it: it has work
 * that no packet will announce. */
void *uroce_progress_thread(void *arg);
void uroce_engine_wake(struct uroce_engine *eng);

/* tick.c: the timer tick.  The longest the progress thread takes to look
 * at a stalled transmit queue or an application's held ACKs; a look
 * within it (an application's held ACKs, resp_ack.c); one by AT_NS at the
 * latest; keep it running for QE while it has timers (qp->lock held); run
 * the timers that are due (the progress thread, or an application's poll
 * that keeps the time, poll.c). */
#define UROCE_TICK_NS 1000000ull
void uroce_engine_start_tick(struct uroce_engine *eng);
void uroce_engine_tick_by(struct uroce_engine *eng, uint64_t at_ns);
void uroce_engine_arm(struct uroce_qp_eng *qe, bool on);
void uroce_engine_run_timers(struct uroce_engine *eng, enum uroce_burst_by by);
/* Set tick_fd for AT_NS, whoever keeps the time (tick_lock held). */
void uroce_engine_tick_set_fd(struct uroce_engine *eng, uint64_t at_ns);

/* cqe.c: complete a send WQE into the send CQ (honouring signaling)
 * (qp->lock held). */
void uroce_complete_send(struct uroce_qp *qp, struct uroce_send_wqe *w,
			 enum ibv_wc_status status);
/* Flush both queues of a QP in the error state (qp->lock held). */
void uroce_qp_flush(struct uroce_qp *qp);
/* Move QP to the error state and flush its queues (qp->lock held), telling
 * the owner with asynchronous event EV (QP_FATAL, QP_REQ_ERR, QP_ACCESS_ERR:
 * a responder's errors, which no completion of the owner's reports), or
 * with none when EV < 0.  Either way QP_LAST_WQE_REACHED for a QP with an
 * SRQ.  uroce_qp_to_error: after a completion error, which the failing
 * WQE's CQE reports (EV -1). */
void uroce_qp_to_error_ev(struct uroce_qp *qp, int ev);
void uroce_qp_to_error(struct uroce_qp *qp);
/* SQD: report SQ_DRAINED once nothing is outstanding. */
void uroce_check_drained(struct uroce_qp *qp);

/* pkt.c: CLOCK_MONOTONIC in ns; inside this thread's transmit batch, the
 * time it was first asked in the batch.  (The rest of pkt.c: pkt.h.) */
uint64_t uroce_now_ns(void);

/* mcast_groups.c: a packet for QP 0xFFFFFF (IBTA 9.8.1: multicast) to
 * the group RX->dst_ip: delivered to every QP of ENG attached to it; the
 * groups left when the engine closes. */
void uroce_mcast_rx(struct uroce_engine *eng, struct uroce_rx *rx, const struct roce_pkt *pkt);
void uroce_mcast_close(struct uroce_engine *eng);

/* diag.c: UROCE_STATS=1 at exit: every QP with work outstanding. */
void uroce_engine_dump_qps(struct uroce_engine *eng);

/* poll.c: the progress thread's polling policy (UROCE_BUSY_POLL_US,
 * UROCE_PROGRESS_SLICE_US).  Read the knobs into ENG; tune the calling
 * (progress) thread; and, after a pass that took GOT packets, whether to
 * poll again at once rather than sleep (*UNTIL_NS: end of the window). */
void uroce_poll_conf(struct uroce_engine *eng);
void uroce_poll_thread_start(struct uroce_engine *eng);
bool uroce_poll_keep_busy(struct uroce_engine *eng, unsigned int got, uint64_t *until_ns);
/* An application thread found the sockets being drained by another. */
void uroce_poll_contended(struct uroce_engine *eng);
/* The progress thread, draining: has an application's poll found the
 * receive path taken since it last asked? */
bool uroce_poll_app_waits(struct uroce_engine *eng);
/* An application thread polls the wire (uroce_engine_poll). */
void uroce_poll_app_polled(struct uroce_engine *eng);
/* And, while the progress thread defers to it, keeps the timers' time in
 * its place (the tick its watchdog). */
void uroce_poll_beat(struct uroce_engine *eng);
/* The progress thread, woken: if the watchdog's time came, the
 * applications stopped polling: it keeps the time again and looks now. */
void uroce_poll_watchdog_check(struct uroce_engine *eng);
/* The progress thread's watch of the transport: deferred to polling
 * applications or not; after a wake-up by the transport that found GOT
 * packets, whether to defer now (the caller leaves the fd); while
 * deferred, whether a look is due, and after one that found GOT packets,
 * whether to watch again (the caller watches the fd again). */
bool uroce_poll_deferred(const struct uroce_engine *eng);
bool uroce_poll_after_wake(struct uroce_engine *eng, unsigned int got);
uint64_t uroce_poll_look_in_ns(const struct uroce_engine *eng);
bool uroce_poll_looks_within(const struct uroce_engine *eng, uint64_t ns);
bool uroce_poll_rewatch(struct uroce_engine *eng, unsigned int got);
/* An application thread arms a CQ and will sleep (uroce_engine_poll_done);
 * and, in the progress thread, whether one asked it to watch again. */
void uroce_poll_app_sleeps(struct uroce_engine *eng);
bool uroce_poll_take_rewatch(struct uroce_engine *eng);

/* req.c */
void uroce_req_progress(struct uroce_qp *qp);
void uroce_req_reset(struct uroce_qp *qp);
void uroce_req_timer(struct uroce_qp *qp, uint64_t now);
/* (Re)start the retransmit timer if packets are outstanding, else stop it. */
void uroce_req_restart_timer(struct uroce_qp *qp);
void uroce_req_acked(struct uroce_qp *qp, uint32_t psn);
/* Rewind the send queue to resend from PSN (go-back-N). */
void uroce_req_rewind(struct uroce_qp *qp, uint32_t psn);

/* cc.c: congestion control (AIMD on loss signals).  The RC requester's
 * window in packets; una_psn advanced (grow); a loss was signalled, SEVERE
 * for an ACK timeout (shrink). */
uint32_t uroce_cc_window(struct uroce_qp_eng *qe);
void uroce_cc_progress(struct uroce_qp_eng *qe);
void uroce_cc_loss(struct uroce_qp_eng *qe, bool severe);
bool uroce_cc_post_waits(const struct uroce_qp *qp);
bool uroce_cc_burst_waits(const struct uroce_qp_eng *qe, uint32_t unacked);

/* comp.c: ACK, NAK, READ response and ATOMIC ACK packets */
void uroce_comp_rx(struct uroce_qp *qp, const struct roce_pkt *pkt);

/* resp.c: request packets; a responder error of class "the QP goes to
 * error" (IBTA 9.9.3.1.2): the NAK NAK_CODE for PSN (RC), the receive
 * WQE in progress completed with LOCAL, the QP to error with the event
 * the code calls for. */
void uroce_resp_rx(struct uroce_qp *qp, const struct roce_pkt *pkt,
		   const struct uroce_rx *rx);
void uroce_resp_fatal(struct uroce_qp *qp, uint32_t psn, uint8_t nak_code,
		      enum ibv_wc_status local, const struct roce_pkt *pkt);
/* resp_read.c: answer a READ request (its responses carry its PSNs,
 * IBTA 9.7.5.1.5) and execute an atomic; a duplicate request (PSN before
 * the expected one, 9.7.5.1.1). */
void uroce_resp_read(struct uroce_qp *qp, const struct roce_pkt *pkt);
void uroce_resp_atomic(struct uroce_qp *qp, const struct roce_pkt *pkt);
void uroce_resp_duplicate(struct uroce_qp *qp, const struct roce_pkt *pkt);
/* resp_ack.c: a response of KIND for PSN with an AETH of SYNDROME (and
 * PAYLOAD, N pieces; ORIG: an ATOMIC ACK's result), after the ACK the QP
 * has due; an ACK of PSN (coalesced within a receive burst); a NAK of
 * CODE (enum roce_nak_code); an RNR NAK, after which later packets are
 * dropped until PSN comes again. */
void uroce_resp_send_aeth(struct uroce_qp *qp, enum roce_kind kind, uint32_t psn,
			  uint8_t syndrome, const struct iovec *payload, int n,
			  bool first, bool last, uint64_t orig);
void uroce_resp_ack(struct uroce_qp *qp, uint32_t psn);
void uroce_resp_nak(struct uroce_qp *qp, uint32_t psn, uint8_t code);
void uroce_resp_rnr_nak(struct uroce_qp *qp, uint32_t psn);
/* Send QP's coalesced ACK if one is due (qp->lock held). */
void uroce_resp_flush_ack(struct uroce_qp *qp);
/* Before QP's new requests: the ACK it owes, or one another thread has
 * queued but not yet sent (qp->lock held). */
void uroce_resp_ack_before_requests(struct uroce_qp *qp);
/* A receive burst starts: ACKs wait for its end (uroce_resp_flush_acks),
 * one per QP for the highest PSN acknowledged. */
void uroce_resp_acks_begin(struct uroce_engine *eng);
/* The burst ends: its ACKs leave now, or wait for the QP's next post
 * (resp_ack.c). */
void uroce_resp_flush_acks(struct uroce_engine *eng, enum uroce_burst_by by);
/* Which held ACKs leave now (uroce_resp_flush_held). */
enum uroce_held_flush {
	UROCE_HELD_ALL,              /* every one (a thread about to sleep, teardown) */
	UROCE_HELD_POLL,             /* an application polls again: all but those still worth keeping */
	UROCE_HELD_EXPIRED,          /* those held for ack_hold_ns */
};
void uroce_resp_flush_held(struct uroce_engine *eng, enum uroce_held_flush which);
/* How long until the oldest held ACK must leave: 0 now, UINT64_MAX none. */
uint64_t uroce_resp_held_wait_ns(struct uroce_engine *eng);

/* trace_hooks.c: the engine's trace hooks (UROCE_TRACE, trace/trace.h).
 * The requester starts W (its PSNs are known from now on); the engine
 * moves QP to the error state (async event EV); a protocol decision about
 * PSN, ARG the decision's number (retries left, RNR wait in microseconds,
 * the expected PSN) or -1. */
void uroce_trace_wqe_start(struct uroce_qp *qp, const struct uroce_send_wqe *w);
void uroce_trace_to_error(struct uroce_qp *qp, int ev);
void uroce_trace_why(struct uroce_qp *qp, enum uroce_why why, uint32_t psn, int64_t arg);

/* 24-bit PSN arithmetic (IBTA 9.7.2): a - b as a signed distance. */
static inline int32_t psn_diff(uint32_t a, uint32_t b)
{
	return (int32_t)((a - b) << 8) >> 8;
}

static inline uint32_t psn_add(uint32_t a, uint32_t n)
{
	return (a + n) & 0xffffff;
}

#endif
