/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The UCMA layer: the kernel's rdma_cm character device (ABI 4,
 * rdma/rdma_user_cm.h) as librdmacm sees it, in the application's
 * process.  Files (one per opened rdma_cm fd) hold an event queue; ids
 * ("contexts" in the kernel's ucma.c) hold addresses, the device they are
 * bound to, options, and the IB CM connection (conn.h).
 *
 * One lock (ucma_lock) guards every file, id and connection of the
 * process: commands, the CM timer thread and received MADs all take it.
 * Nothing blocks while holding it.
 */
#ifndef UROCE_CM_UCMA_H
#define UROCE_CM_UCMA_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <rdma/rdma_user_cm.h>

#include "cm/conn.h"

/* The event numbers of the ABI (enum rdma_cm_event_type of librdmacm's
 * rdma_cma.h, which the kernel's rdma_cm.h mirrors).  Written here so the
 * provider builds without librdmacm's headers. */
enum {
	RDMA_CM_EVENT_ADDR_RESOLVED,
	RDMA_CM_EVENT_ADDR_ERROR,
	RDMA_CM_EVENT_ROUTE_RESOLVED,
	RDMA_CM_EVENT_ROUTE_ERROR,
	RDMA_CM_EVENT_CONNECT_REQUEST,
	RDMA_CM_EVENT_CONNECT_RESPONSE,
	RDMA_CM_EVENT_CONNECT_ERROR,
	RDMA_CM_EVENT_UNREACHABLE,
	RDMA_CM_EVENT_REJECTED,
	RDMA_CM_EVENT_ESTABLISHED,
	RDMA_CM_EVENT_DISCONNECTED,
	RDMA_CM_EVENT_DEVICE_REMOVAL,
	RDMA_CM_EVENT_MULTICAST_JOIN,
	RDMA_CM_EVENT_MULTICAST_ERROR,
	RDMA_CM_EVENT_ADDR_CHANGE,
	RDMA_CM_EVENT_TIMEWAIT_EXIT,
};

extern pthread_mutex_t ucma_lock;
/* UROCE_CM_DEBUG=1: a line when an id listens (tests wait for it);
 * UROCE_CM_DEBUG=2 or UROCE_DEBUG=1: commands, events, states too. */
extern int uroce_debug_cm;

/* A uroce device an address belongs to (ucma_addr.c). */
struct ucma_dev {
	char name[64];
	char netdev[16];
	uint64_t node_guid_be;       /* as ibv_get_device_guid() returns it */
	uint8_t gid[16];             /* the local address as a RoCE v2 GID */
	int gid_index;               /* its index in the device's GID table */
	int ib_mtu;                  /* enum ibv_mtu of the netdev */
	uint8_t default_tos;         /* the device's default_roce_tos (registry.h) */
};

/* RDMA CM level of an id (the kernel's enum rdma_cm_state, cma_priv.h). */
enum ucma_state {
	UCMA_IDLE,
	UCMA_ADDR_BOUND,
	UCMA_ADDR_RESOLVED,
	UCMA_ROUTE_RESOLVED,
	UCMA_LISTEN,
	UCMA_CONNECT,            /* CONNECT sent or a REQ received, until disconnect */
	UCMA_DISCONNECT,
};

struct ucma_event {
	struct ucma_event *next;
	struct ucma_ctx *ctx;        /* counts events_reported when taken */
	struct ucma_ctx *conn_req;   /* CONNECT_REQUEST: the new id */
	struct ucma_mcast *mc;       /* MULTICAST_JOIN: the group, which counts too */
	struct rdma_ucm_event_resp resp;
};

struct ucma_file {
	struct ucma_file *next;
	/* The application's descriptors of the file, as the kernel's open
	 * file has several: the one open gave (an eventfd whose count =
	 * queued events) and its dups.  The file lives until the last one
	 * is closed (ucma_close). */
	int *fds;
	unsigned nfds, fds_cap;
	int efd;                     /* our own descriptor of that eventfd (see ucma_close) */
	int users;                   /* commands running on the file (GET_EVENT may block) */
	bool closed;                 /* the application closed its last fd while users > 0 */
	bool moved;                  /* ...and the kernel's file took the fd over (the mux) */
	struct ucma_event *head, **tail;
};

struct ucma_ctx {
	uint32_t id;
	uint64_t uid;                /* 0 for a CONNECT_REQUEST id until ACCEPT */
	struct ucma_file *file;
	uint16_t ps;
	uint8_t qp_type;             /* IBV_QPT_RC or IBV_QPT_UD */
	enum ucma_state state;
	uint32_t events_reported;
	int backlog;                 /* listener: CONNECT_REQUESTs it may still queue */
	struct sockaddr_storage src, dst;
	bool have_dev;
	struct ucma_dev dev;
	bool port_held;              /* an entry in the shared port table */
	uint32_t port_handle;
	bool route;                  /* RESOLVE_ROUTE done */
	/* SET_OPTION */
	bool tos_set, reuseaddr, afonly;
	uint8_t tos;
	uint8_t ack_timeout;         /* 0: the default */
	struct ucma_mcast *mcs;      /* groups joined (ucma_mcast.c) */
	struct cm_conn conn;
};

/* The TOS of ID's connections (cma_resolve_iboe_route): the program's
 * (rdma_set_option RDMA_OPTION_ID_TOS), else the device's default. */
static inline uint8_t ucma_tos(const struct ucma_ctx *ctx)
{
	return ctx->tos_set ? ctx->tos : ctx->dev.default_tos;
}

/* A multicast group joined by an id (the kernel's struct ucma_multicast):
 * its own handle, the user's uid for its events, its own count of them. */
struct ucma_mcast {
	struct ucma_mcast *next;     /* the id's other groups */
	uint32_t id;
	uint64_t uid;
	struct ucma_ctx *ctx;
	uint32_t events_reported;
	struct sockaddr_storage addr;
};

/* A table of handles (ids, multicast groups): the lowest free slot. */
struct ucma_slots {
	void **p;
	uint32_t n;
};
int ucma_slot_add(struct ucma_slots *t, void *obj, uint32_t *id);
void *ucma_slot_get(const struct ucma_slots *t, uint32_t id);
void ucma_slot_del(struct ucma_slots *t, uint32_t id);

/* ucma.c */
struct ucma_ctx *ucma_ctx_new(struct ucma_file *f);
struct ucma_ctx *ucma_ctx_find(uint32_t id);
/* Free CTX: its queued events go, pending CONNECT_REQUEST ids with them;
 * returns events_reported. */
uint32_t ucma_ctx_free(struct ucma_ctx *ctx);
/* Queue EVENT (enum rdma_cm_event_type) with STATUS on CTX's file.
 * Returns the queued event for the caller to fill param/ece, or NULL. */
struct ucma_event *ucma_event_queue(struct ucma_ctx *ctx, uint32_t event, int32_t status);
/* Block (without the lock) until FILE has an event; 0 or -errno. */
int ucma_event_take(struct ucma_file *f, struct rdma_ucm_event_resp *out);
/* Drop MC's events not yet taken (LEAVE_MCAST: ucma_cleanup_mc_events). */
void ucma_event_drop_mc(struct ucma_mcast *mc);
/* The file FD is a descriptor of (lock held), or NULL. */
struct ucma_file *ucma_file_find(int fd);
uint64_t uroce_cm_now_ns(void);
int ucma_ctx_migrate(struct ucma_ctx *ctx, struct ucma_file *to);
void ucma_for_each_ctx(void (*fn)(struct ucma_ctx *ctx, void *arg), void *arg);

/* ucma_cmd.c: the command table, and its handlers (ucma lock not held). */
struct ucma_cmd {
	const char *name;
	int (*fn)(struct ucma_file *f, void *in, uint16_t out_len);
	uint16_t in_len;             /* bytes of the command after the header */
	uint16_t out_len;            /* bytes of the response, 0 if none */
};
const struct ucma_cmd *ucma_cmd_lookup(uint32_t cmd);
/* Write LEN bytes of RESP to the caller's response pointer. */
void ucma_respond(uint64_t response, const void *resp, size_t len);

/* ucma_mcast.c: multicast groups of UD ids (ucma lock held).  Join: an
 * id of a uroce device, a multicast ADDR; *ID gets the group's handle and
 * MULTICAST_JOIN is queued.  Leave: 0 and *REPORTED, or -errno. */
int ucma_mcast_join(struct ucma_ctx *ctx, uint64_t uid, const struct sockaddr *addr, uint32_t *id);
int ucma_mcast_leave(struct ucma_file *f, uint32_t id, uint32_t *reported);
void ucma_mcast_free_all(struct ucma_ctx *ctx);

/* ucma_addr.c: address to device */
/* The uroce device of this namespace holding address SA; -ENODEV if none. */
int ucma_dev_by_addr(const struct sockaddr *sa, struct ucma_dev *dev);
int ucma_dev_by_addr_gid(const uint8_t gid[16], struct ucma_dev *dev);
/* Every uroce device of this namespace (for wildcard listeners); count. */
int ucma_dev_all(struct ucma_dev *devs, int max);
/* The source address the kernel's routing picks toward DST (port 0); from
 * FROM if not NULL (a socket bound to it first). */
int ucma_route_src(const struct sockaddr *dst, const struct sockaddr *from,
		   struct sockaddr_storage *src);
/* The mux's question (struct uroce_ucma_ops.route). */
int ucma_route(const struct sockaddr *src, const struct sockaddr *dst);
bool ucma_addr_any(const struct sockaddr *sa);
bool ucma_addr_zero(const struct sockaddr *sa);
bool ucma_addr_multicast(const struct sockaddr *sa);
uint16_t ucma_addr_port(const struct sockaddr *sa);
void ucma_addr_set_port(struct sockaddr *sa, uint16_t port);
/* SA as a 16-byte GID (IPv4-mapped); to and from. */
void ucma_addr_to_gid(const struct sockaddr *sa, uint8_t gid[16]);
void ucma_gid_to_addr(const uint8_t gid[16], uint16_t port, struct sockaddr_storage *ss);
socklen_t ucma_addr_len(const struct sockaddr *sa);

/* A forked child: the multicast groups are the parent's (ucma_mcast.c). */
void ucma_mcast_fork_child(void);

#endif
