/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * uroce's per-device counters: the list (one place names them all, for
 * the engine and for `uroce stat`) and the shared-memory layout through
 * which a process publishes its counters to `uroce stat`.
 */
#ifndef UROCE_STATS_H
#define UROCE_STATS_H

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>

/* X(ENUM_SUFFIX, "name") -- names in the spirit of rxe's hw_counters. */
#define UROCE_STAT_LIST(X)                                                     \
	X(TX_PACKETS, "tx_packets")                                            \
	X(TX_BYTES, "tx_bytes")                                                \
	X(RX_PACKETS, "rx_packets")                                            \
	X(RX_BYTES, "rx_bytes")                                                \
	X(RETRANSMITS, "retransmissions")      /* go-back-N restarts */                                \
	X(TAIL_PROBES, "tail_loss_probes")                                     \
	X(ACK_TIMEOUTS, "ack_timeouts")                                        \
	X(RETRY_EXCEEDED, "retry_exceeded")                                    \
	X(RNR_RETRY_EXCEEDED, "rnr_retry_exceeded")                            \
	X(RNR_NAKS_RX, "rnr_naks_received")                                    \
	X(NAKS_RX_SEQ, "naks_received_psn_sequence")                           \
	X(NAKS_RX_INV_REQ, "naks_received_invalid_request")                    \
	X(NAKS_RX_ACCESS, "naks_received_remote_access")                       \
	X(NAKS_RX_OP, "naks_received_remote_operation")                        \
	X(NAKS_RX_INV_RD, "naks_received_invalid_rd_request")                  \
	X(RNR_NAKS_TX, "rnr_naks_sent")                                        \
	X(NAKS_TX_SEQ, "naks_sent_psn_sequence")                               \
	X(NAKS_TX_INV_REQ, "naks_sent_invalid_request")                        \
	X(NAKS_TX_ACCESS, "naks_sent_remote_access")                           \
	X(NAKS_TX_OP, "naks_sent_remote_operation")                            \
	X(NAKS_TX_INV_RD, "naks_sent_invalid_rd_request")                      \
	X(DUPLICATES, "duplicate_requests")                                    \
	X(OUT_OF_SEQUENCE, "out_of_sequence")                                  \
	X(FORWARDED_OUT, "forwarded_out")                                      \
	X(FORWARDED_IN, "forwarded_in")                                        \
	/* drops: the wire module's reasons first, in enum roce_reason order */ \
	X(DROP_TRUNCATED, "drop_truncated")                                    \
	X(DROP_LENGTH, "drop_bad_length")                                      \
	X(DROP_ETHERTYPE, "drop_bad_ethertype")                                \
	X(DROP_IP, "drop_bad_ip_header")                                       \
	X(DROP_PORT, "drop_bad_udp_port")                                      \
	X(DROP_TVER, "drop_bad_tver")                                          \
	X(DROP_OPCODE, "drop_bad_opcode")                                      \
	X(DROP_PAD, "drop_bad_pad")                                            \
	X(DROP_PAYLOAD, "drop_bad_payload")                                    \
	X(DROP_ICRC, "drop_bad_icrc")                                          \
	X(DROP_NO_QP, "drop_unknown_qp")                                       \
	X(DROP_QP_STATE, "drop_qp_state")                                      \
	X(DROP_QP_TYPE, "drop_opcode_for_other_qp_type")                       \
	X(DROP_PKEY, "drop_bad_pkey")                                          \
	X(DROP_QKEY, "drop_bad_qkey")                                          \
	X(DROP_NO_RECV, "drop_ud_no_receive")                                  \
	X(DROP_UC_PARTIAL, "drop_uc_partial_message")                          \
	X(DROP_STALE, "drop_stale_response")                                   \
	X(DROP_BAD_DUPLICATE, "drop_invalid_duplicate")                        \
	X(DROP_OTHER, "drop_other")                                            \
	/* QP1 (cm/gsi.c): CM MADs; the drops follow enum cm_mad_reason */     \
	X(CM_MADS_RX, "cm_mads_received")                                      \
	X(CM_MADS_TX, "cm_mads_sent")                                          \
	X(DROP_CM_LENGTH, "drop_cm_bad_length")                                \
	X(DROP_CM_VERSION, "drop_cm_bad_version")                              \
	X(DROP_CM_CLASS, "drop_cm_not_cm_class")                               \
	X(DROP_CM_METHOD, "drop_cm_bad_method")                                \
	X(DROP_CM_ATTR, "drop_cm_unsupported_attribute")                       \
	X(DROP_CM_FIELD, "drop_cm_bad_field")                                  \
	X(DROP_CM_NOT_UD_SEND, "drop_cm_not_ud_send")                          \
	X(DROP_CM_NO_OWNER, "drop_cm_no_owner")                                \
	X(CM_REJ_NO_LISTENER, "cm_rej_no_listener_sent")                       \
	/* engine/cc.c: congestion control */                                  \
	X(CC_DECREASES, "cc_window_decreases")                                 \
	/* transport/xdp: frames lost between the NIC queue and the engine */ \
	X(XDP_RX_DROPPED, "xdp_rx_dropped")                                    \
	X(XDP_RX_RING_FULL, "xdp_rx_ring_full")                                \
	X(XDP_FILL_RING_EMPTY, "xdp_fill_ring_empty")                          \
	X(XDP_TX_INVALID, "xdp_tx_invalid")                                    \
	X(XDP_TX_NO_FRAME, "xdp_tx_no_frame")                                  \
	/* engine/pkt.c: packets a transport's send refused (the peer's       \
	 * retransmission or ours recovers them) */                            \
	X(TX_NOT_SENT, "tx_packets_not_sent")                                  \
	/* transport/udp: datagrams longer than the receive buffer (cut) */    \
	X(RX_TRUNCATED, "rx_datagrams_truncated")                              \
	/* engine/recv.c: a connection's packets came from a port not         \
	 * predicted, its socket was connected again (queued datagrams are    \
	 * lost) */                                                            \
	X(CONN_RESTEERS, "conn_resteers")                                      \
	/* engine/poll.c: the progress thread left the wire to polling        \
	 * applications for a while (woken in vain too often) */             \
	X(PROGRESS_DEFERRALS, "progress_deferrals")                            \
	/* transport/udp: a connected QP's source port was held by another    \
	 * program; it sends from another (udp_claim_port) */                  \
	X(SPORT_TAKEN, "sport_taken")                                          \
	/* transport/xdp: packets that went as frames through its AF_XDP       \
	 * sockets (the rest of an xdp device's go through the udp transport   \
	 * beneath it: to this host, without a socket on the queue, too long) */ \
	X(XDP_RX_FRAMES, "xdp_rx_packets")                                     \
	X(XDP_TX_FRAMES, "xdp_tx_packets")                                     \
	/* engine/progress.c: packets the progress thread took from the       \
	 * transport (the rest: application threads in ibv_poll_cq and        \
	 * posts) */                                                           \
	X(PROGRESS_RX, "progress_rx_packets")

enum uroce_stat {
#define UROCE_STAT_ENUM(e, name) UROCE_STAT_##e,
	UROCE_STAT_LIST(UROCE_STAT_ENUM)
#undef UROCE_STAT_ENUM
	UROCE_STAT_COUNT
};

/* A process's published counters for one device: a file of this layout,
 * $UROCE_RUNDIR/ns-<cookie>/stats/<DEV>/<PID>[.<N>], mapped shared by its
 * writer (see docs/stats.md).  Counters are written with relaxed atomic
 * adds and read without locks.  The device's "retired.<UID>" files in the
 * same directory have the same layout (pid 0): the sum over the processes
 * that have gone, one file per user that folded them (no user writes
 * another's), updated under flock(LOCK_EX) on the directory.  Readers index counters
 * by position: bump UROCE_STATS_VERSION when UROCE_STAT_LIST changes
 * other than by appending. */
/* Add N to counter E of COUNTERS (UROCE_STAT_COUNT entries, shared by the
 * threads of a process). */
static inline void uroce_stat_add(uint64_t *counters, enum uroce_stat e, uint64_t n)
{
	__atomic_fetch_add(&counters[e], n, __ATOMIC_RELAXED);
}

#define UROCE_STATS_MAGIC 0x75726f63u /* "uroc" */
#define UROCE_STATS_VERSION 1
#define UROCE_STATS_RETIRED "retired" /* ".<uid>" follows; older builds wrote "retired" */
struct uroce_stats_shm {
	uint32_t magic;
	uint32_t version;
	uint32_t ncounters;       /* UROCE_STAT_COUNT of the writer */
	int32_t pid;
	uint64_t starttime;       /* of PID, from /proc/PID/stat: tells reuse of a PID */
	char device[64];
	uint64_t counters[UROCE_STAT_COUNT];
};

#endif
