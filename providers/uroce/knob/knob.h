/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The knobs: every environment variable uroce reads, in one table (name,
 * type, default, range, one line of doc), with one parser behind typed
 * accessors.  As rxe_param.h is for the kernel's rxe, this is the one place
 * a default lives.  The lowest layer (docs/design.md): any folder, and the
 * uroce command, may include it; it includes nothing of the project.
 *
 * Each knob is read once per process, when first asked for.  Unset or
 * empty: its default.  A value the type refuses: one line on stderr naming
 * the variable, the value and what is allowed, then the default.
 * `uroce knobs` prints the table; uroce(8) documents every entry (the
 * man_page test checks it against that output).
 */
#ifndef UROCE_KNOB_H
#define UROCE_KNOB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * X(id, variable, type, default, min, max, doc).  Types:
 *   BOOL  0/1, no/yes, off/on, false/true (any case);
 *   UINT  a decimal integer in [min, max];
 *   SIZE  bytes, with an optional K, M or G suffix, in [min, max];
 *   PATH  any string; its default is a string, or NULL for none.
 */
#define UROCE_KNOBS(X)                                                                    \
	/* what the provider reports and records (engine, trace, device, cm) */             \
	X(DEBUG, "UROCE_DEBUG", BOOL, 0, 0, 1,                                              \
	  "say on stderr why packets drop, NAKs come, counters stay unpublished")           \
	X(STATS, "UROCE_STATS", BOOL, 0, 0, 1,                                              \
	  "print the process's non-zero counters (and stuck QPs) when a device closes")     \
	X(CM_DEBUG, "UROCE_CM_DEBUG", UINT, 0, 0, 2,                                        \
	  "rdma CM on stderr: 1 ids that listen, 2 every command, event and state")         \
	X(PCAP, "UROCE_PCAP", PATH, NULL, 0, 0,                                             \
	  "pcap file of every RoCEv2 packet sent and received (%p: the process ID)")        \
	X(PCAP_MAX, "UROCE_PCAP_MAX", SIZE, 256ull << 20, 0, 1ull << 40,                    \
	  "size limit of the UROCE_PCAP file; later packets are counted, not written")      \
	X(TRACE, "UROCE_TRACE", PATH, NULL, 0, 0,                                           \
	  "pcapng trace of packets and verbs events, for `uroce trace` (%p: the PID)")      \
	X(TRACE_MAX, "UROCE_TRACE_MAX", SIZE, 256ull << 20, 0, 1ull << 40,                  \
	  "size limit of the UROCE_TRACE file")                                             \
	/* the progress thread (engine/poll.c); the kernel clamps a slice to 100 ms */      \
	X(PROGRESS_SLICE_US, "UROCE_PROGRESS_SLICE_US", UINT, 100, 0, 100000,               \
	  "scheduler slice of the progress thread, us (0: the kernel's default)")           \
	X(BUSY_POLL_US, "UROCE_BUSY_POLL_US", UINT, 0, 0, 1000000,                          \
	  "us the progress thread polls on after packets while the app sleeps (0: off)")    \
	X(DEFER_US, "UROCE_DEFER_US", UINT, 200, 0, 1000000,                                \
	  "us between looks while the application polls for itself (0: never defer)")       \
	X(ACK_HOLD_US, "UROCE_ACK_HOLD_US", UINT, 50, 0, 1000000,                           \
	  "longest an RC ACK waits to leave with the QP's next post, us (0: never)")        \
	/* congestion control and sending (engine/cc.c) */                                  \
	X(CC, "UROCE_CC", BOOL, 1, 0, 1,                                                    \
	  "congestion control of RC QPs (off: each may fill its whole window)")             \
	X(WINDOW_KB, "UROCE_WINDOW_KB", UINT, 1024, 1, 1u << 22,                            \
	  "most an RC QP may have unacknowledged, KiB (never fewer than 64 packets)")       \
	X(INFLIGHT_KB, "UROCE_INFLIGHT_KB", UINT, 16384, 1, 1u << 24,                       \
	  "KiB the busy RC QPs of a process share on one device")                           \
	X(BURST_KB, "UROCE_BURST_KB", UINT, 32, 0, 1u << 22,                                \
	  "room, KiB, an RC QP in flight waits for before it sends again (0: none)")        \
	X(ACK_CLOCK, "UROCE_ACK_CLOCK", BOOL, 1, 0, 1,                                      \
	  "work posted to a busy RC QP leaves with its next response (off: at once)")       \
	/* the udp transport (transport/udp/) */                                            \
	X(GSO, "UROCE_GSO", BOOL, 1, 0, 1,                                                  \
	  "send runs of equal packets as one UDP_SEGMENT datagram")                         \
	X(GRO, "UROCE_GRO", BOOL, 1, 0, 1,                                                  \
	  "receive with UDP_GRO")                                                           \
	X(TX_CONNECT, "UROCE_TX_CONNECT", BOOL, 1, 0, 1,                                    \
	  "a connected socket per IPv4 unicast path (off: the shared one)")                 \
	/* the xdp transport (transport/xdp/); 64: UROCE_XDP_MAX_QUEUES */                  \
	X(XDP_SG, "UROCE_XDP_SG", BOOL, 1, 0, 1,                                            \
	  "bind AF_XDP sockets with multi-buffer frames where the kernel has them")         \
	X(XDP_QUEUES, "UROCE_XDP_QUEUES", UINT, 0, 0, 64,                                   \
	  "most receive queues that get an AF_XDP socket (0: all)")                         \
	X(XDP_RX_FRAMES, "UROCE_XDP_RX_FRAMES", UINT, 8192, 1, 1u << 24,                    \
	  "4 KiB UMEM frames a process lends the kernel to receive into")                   \
	/* the registry (device/) and the uroce command (cli/) */                           \
	X(RUNDIR, "UROCE_RUNDIR", PATH, "/run/uroce", 0, 0,                                 \
	  "directory of the device registry, one subdirectory per network namespace")       \
	X(PROVIDER, "UROCE_PROVIDER", PATH, NULL, 0, 0,                                     \
	  "path prefix of the provider `uroce run` and `uroce env` name")                   \
	/* others' variables uroce reads too */                                             \
	X(SYSFS_PATH, "SYSFS_PATH", PATH, NULL, 0, 0,                                       \
	  "libibverbs' device tree (set by `uroce run`; else the namespace's own)")         \
	X(LIBXDP_BPFFS, "LIBXDP_BPFFS", PATH, "/sys/fs/bpf", 0, 0,                          \
	  "libxdp's bpffs; without one uroce attaches the XDP program alone")               \
	X(XDG_RUNTIME_DIR, "XDG_RUNTIME_DIR", PATH, "/tmp", 0, 0,                           \
	  "where `uroce run` keeps a user's private copy of the device tree")

enum uroce_knob {
#define UROCE_KNOB_ID(id, ...) UROCE_KNOB_##id,
	UROCE_KNOBS(UROCE_KNOB_ID)
#undef UROCE_KNOB_ID
	UROCE_KNOB_COUNT
};

enum uroce_knob_type { UROCE_KNOB_T_BOOL, UROCE_KNOB_T_UINT, UROCE_KNOB_T_SIZE, UROCE_KNOB_T_PATH };

struct uroce_knob_def {
	const char *name;
	enum uroce_knob_type type;
	uint64_t def, min, max;      /* BOOL, UINT, SIZE */
	const char *def_str;         /* PATH: NULL when there is none */
	const char *doc;
};

extern const struct uroce_knob_def uroce_knob_defs[UROCE_KNOB_COUNT];

/* Each knob's value once read (knob.c).  The accessors below take it
 * without a call once it has been: the engine reads some per packet. */
struct uroce_knob_val {
	int done;                    /* read (release-stored after num and str) */
	uint64_t num;
	const char *str;
};
extern struct uroce_knob_val uroce_knob_vals[UROCE_KNOB_COUNT];
/* Read knob K from the environment (the first time), and its value. */
const struct uroce_knob_val *uroce_knob_read(enum uroce_knob k);

static inline const struct uroce_knob_val *uroce_knob_get(enum uroce_knob k)
{
	const struct uroce_knob_val *v = &uroce_knob_vals[k];

	/* Acquire: pairs with knob_read's release, so num and str are whole. */
	if (__builtin_expect(__atomic_load_n(&v->done, __ATOMIC_ACQUIRE), 1))
		return v;
	return uroce_knob_read(k);
}

/* The typed accessors: the knob's value, read once per process. */
static inline bool uroce_knob_on(enum uroce_knob k)          /* BOOL */
{
	return uroce_knob_get(k)->num != 0;
}

static inline uint64_t uroce_knob_num(enum uroce_knob k)     /* UINT, SIZE */
{
	return uroce_knob_get(k)->num;
}

static inline const char *uroce_knob_str(enum uroce_knob k)  /* PATH: NULL if unset and no default */
{
	return uroce_knob_get(k)->str;
}

/* The parser proper: TEXT (non-empty) as knob D's value into *NUM; 0, or
 * -EINVAL. */
int uroce_knob_parse(const struct uroce_knob_def *d, const char *text, uint64_t *num);
/* What D allows ("an integer from 1 to 4194304"), and its default, as text. */
const char *uroce_knob_allowed(const struct uroce_knob_def *d, char *buf, size_t len);
const char *uroce_knob_default(const struct uroce_knob_def *d, char *buf, size_t len);
const char *uroce_knob_type_name(enum uroce_knob_type t);

#endif
