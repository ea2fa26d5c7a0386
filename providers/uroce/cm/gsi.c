// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * QP1 of a device, shared by its processes (see gsi.h): receive CM MADs
 * (UD SEND_ONLY, DETH Q_Key 0x80010000, IBTA 13.4.6), route each to the
 * process it belongs to, answer what nobody owns as Linux does, and send
 * MADs from QP 1.  The engine calls uroce_gsi_rx for every packet to QP 1
 * that passed the wire checks (ICRC, P_Key); the member table lives next
 * to the QPN table (/dev/shm/uroce-<ns>-<netdev>.gsi1, same format).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/random.h>

#include "cm/gsi.h"
#include "device/device.h"
#include "engine/engine.h"
#include "transport/transport.h"
#include "wire/wire.h"

/* Member slots fit in the 10 bits a comm ID gives them. */
#define MEMBER_SLOTS (1u << (32 - UROCE_GSI_COMM_ID_SLOT_SHIFT))
#define ID_MASK ((1u << UROCE_GSI_COMM_ID_SLOT_SHIFT) - 1)

_Static_assert(UROCE_STAT_DROP_CM_FIELD - UROCE_STAT_DROP_CM_LENGTH ==
	       CM_MAD_E_FIELD - CM_MAD_E_LENGTH, "CM drop counters follow enum cm_mad_reason");

struct uroce_gsi {
	struct uroce_engine *eng;
	struct uroce_qpn_table *members;
	uint32_t slot;               /* ours in the member table */
	_Atomic uint32_t psn;        /* of the next MAD we send (per sender, as rxe) */
	_Atomic uint32_t next_id;    /* low bits of the next comm ID */
};

/* The process's CM: one receiver for every device. */
static pthread_mutex_t handler_lock = PTHREAD_MUTEX_INITIALIZER;

void uroce_gsi_fork_child(void)
{
	static const pthread_mutex_t unlocked = PTHREAD_MUTEX_INITIALIZER;

	handler_lock = unlocked;
}
static uroce_gsi_rx_fn handler;
static void *handler_arg;

/* ---- lifetime (the engine's) ----------------------------------------------- */

int uroce_gsi_attach(struct uroce_engine *eng)
{
	struct uroce_gsi *g = calloc(1, sizeof(*g));
	char path[256];
	uint32_t r = 0;

	if (!g)
		return -ENOMEM;
	uroce_gsi_members_file(path, sizeof(path), uroce_engine_nsid(eng), uroce_engine_netdev(eng),
			       geteuid());
	g->members = uroce_qpn_open_file(path, MEMBER_SLOTS);
	if (g->members)
		g->slot = uroce_qpn_alloc(g->members, uroce_engine_fwd_port(eng));
	if (!g->slot) {
		/* Not a member: this process still answers what reaches it,
		 * but cannot own connections on the device. */
		fprintf(stderr, "uroce: %s: no QP1 member slot (%s): no rdma_cm connections\n",
			uroce_engine_devname(eng), strerror(errno ? errno : ENOSPC));
	}
	if (getrandom(&r, sizeof(r), 0) != sizeof(r))
		r = (uint32_t)getpid() * 2654435761u;
	atomic_store(&g->next_id, r);
	g->eng = eng;
	uroce_engine_set_gsi(eng, g);
	return 0;
}

void uroce_gsi_detach(struct uroce_engine *eng)
{
	struct uroce_gsi *g = uroce_engine_gsi(eng);

	if (!g)
		return;
	if (g->slot)
		uroce_qpn_free(g->members, g->slot);
	uroce_qpn_close(g->members);
	free(g);
	uroce_engine_set_gsi(eng, NULL);
}

struct uroce_gsi *uroce_gsi_get(const char *devname, uroce_gsi_rx_fn fn, void *arg)
{
	struct uroce_dev_rec rec;
	struct uroce_engine *eng;
	char nsdir[PATH_MAX];

	if (uroce_ns_dir(nsdir, sizeof(nsdir)) || uroce_reg_find(nsdir, devname, &rec)) {
		errno = ENODEV;
		return NULL;
	}
	eng = uroce_engine_get_dev(rec.name, rec.netdev, uroce_transport_name(rec.transport));
	if (!eng)
		return NULL;
	if (fn) {
		pthread_mutex_lock(&handler_lock);
		handler = fn;
		handler_arg = arg;
		pthread_mutex_unlock(&handler_lock);
	}
	return uroce_engine_gsi(eng);
}

void uroce_gsi_put(struct uroce_gsi *gsi)
{
	if (gsi)
		uroce_engine_put(gsi->eng);
}

const char *uroce_gsi_devname(const struct uroce_gsi *gsi)
{
	return uroce_engine_devname(gsi->eng);
}

const char *uroce_gsi_netdev(const struct uroce_gsi *gsi)
{
	return uroce_engine_netdev(gsi->eng);
}

uint32_t uroce_gsi_comm_id_alloc(struct uroce_gsi *gsi)
{
	uint32_t low;

	if (!gsi->slot) {
		errno = ENOSPC;
		return 0;
	}
	low = atomic_fetch_add(&gsi->next_id, 1) & ID_MASK;
	return gsi->slot << UROCE_GSI_COMM_ID_SLOT_SHIFT | low;
}

/* ---- send ------------------------------------------------------------------ */

static bool our_address(struct uroce_engine *eng, const uint8_t *gid)
{
	return uroce_engine_has_addr(eng, gid);
}

int uroce_gsi_send(struct uroce_gsi *gsi, const struct cm_msg *m,
		   const uint8_t local_gid[16], const uint8_t remote_gid[16])
{
	struct uroce_engine *eng = gsi->eng;
	uint8_t mad[CM_MAD_SIZE];
	struct iovec iov = { mad, sizeof(mad) };
	struct uroce_av av = { 0 };
	struct roce_pkt p = {
		.opcode = CM_GSI_OPCODE,
		.pkey = CM_GSI_PKEY,
		.dqpn = CM_GSI_QPN,
		.ackreq = true,      /* as rxe sends its MADs */
		.qkey = CM_GSI_QKEY,
		.sqpn = CM_GSI_QPN,
	};
	int ret;

	if (cm_mad_build(m, mad) != CM_MAD_OK)
		return -EINVAL;
	if (!our_address(eng, local_gid))
		return -EADDRNOTAVAIL;
	memcpy(av.sgid.raw, local_gid, 16);
	memcpy(av.dgid.raw, remote_gid, 16);
	av.hop_limit = 64;
	av.family = roce_gid_family(local_gid);
	if (av.family != roce_gid_family(remote_gid))
		return -EAFNOSUPPORT;
	p.psn = atomic_fetch_add(&gsi->psn, 1) & ROCE_PSN_MASK;
	ret = uroce_pkt_send(eng, &av, CM_GSI_UDP_SPORT, &p, &iov, 1);
	/* rxe's port may be held by another user's process (SO_REUSEPORT
	 * groups are per user): any RoCEv2 source port will do. */
	if (ret == -EADDRINUSE || ret == -EACCES)
		ret = uroce_pkt_send(eng, &av, uroce_xport_sport(CM_GSI_QPN), &p, &iov, 1);
	if (ret == 0)
		uroce_engine_count(eng, UROCE_STAT_CM_MADS_TX, 1);
	else if (uroce_debug)
		fprintf(stderr, "uroce: %s: sending CM %s failed: %s\n", uroce_engine_devname(eng),
			cm_attr_name(m->attr_id), strerror(-ret));
	return ret;
}

/* ---- answers for what nobody owns (Linux cm.c) --------------------------------- */

/* REQ for a service nobody listens to: REJ "invalid service ID"
 * (cm_match_req -> cm_issue_rej); SIDR_REQ: SIDR_REP "unsupported"
 * (cm_sidr_req_handler); DREQ for a connection nobody has: DREP
 * (cm_dreq_handler -> cm_issue_drep).  Same TID as the message. */
static void answer_unowned(struct uroce_gsi *g, const struct uroce_rx *rx, const struct cm_msg *in)
{
	struct cm_msg out = { .tid = in->tid };

	switch (in->attr_id) {
	case CM_ATTR_REQ:
		out.attr_id = CM_ATTR_REJ;
		out.local_comm_id = in->remote_comm_id;
		out.remote_comm_id = in->local_comm_id;
		out.msg_rejected = CM_MSG_RESPONSE_REQ;
		out.reason = CM_REJ_INVALID_SERVICE_ID;
		uroce_engine_count(g->eng, UROCE_STAT_CM_REJ_NO_LISTENER, 1);
		break;
	case CM_ATTR_SIDR_REQ:
		out.attr_id = CM_ATTR_SIDR_REP;
		out.request_id = in->request_id;
		out.sidr_status = CM_SIDR_UNSUPPORTED;
		out.service_id = in->service_id;
		uroce_engine_count(g->eng, UROCE_STAT_CM_REJ_NO_LISTENER, 1);
		break;
	case CM_ATTR_DREQ:
		out.attr_id = CM_ATTR_DREP;
		out.local_comm_id = in->remote_comm_id;
		out.remote_comm_id = in->local_comm_id;
		break;
	default:
		uroce_engine_count(g->eng, UROCE_STAT_DROP_CM_NO_OWNER, 1);
		return;
	}
	if (uroce_debug)
		fprintf(stderr, "uroce: %s: CM %s owned by nobody: answering %s\n",
			uroce_engine_devname(g->eng), cm_attr_name(in->attr_id),
			cm_attr_name(out.attr_id));
	uroce_gsi_send(g, &out, rx->dst_ip, rx->src_ip);
}

/* ---- receive ------------------------------------------------------------------ */

static void deliver(struct uroce_gsi *g, const struct uroce_rx *rx, const struct cm_msg *m)
{
	struct uroce_gsi_peer from = { .family = rx->family, .remote_port = rx->src_port };
	uroce_gsi_rx_fn fn;
	void *arg;

	if (uroce_engine_stopping(g->eng)) {
		/* The engine is closing (uroce_engine_put drains its
		 * transport): the CM must not take a reference to it; a MAD
		 * of ours left now is lost as it would be a moment later. */
		uroce_engine_count(g->eng, UROCE_STAT_DROP_CM_NO_OWNER, 1);
		return;
	}
	pthread_mutex_lock(&handler_lock);
	fn = handler;
	arg = handler_arg;
	pthread_mutex_unlock(&handler_lock);
	if (!fn) {
		/* The table says this process owns it, but it runs no CM. */
		answer_unowned(g, rx, m);
		return;
	}
	memcpy(from.remote_gid, rx->src_ip, 16);
	memcpy(from.local_gid, rx->dst_ip, 16);
	fn(arg, g, &from, m);
}

/* Pass the packet to the process whose forwarding port is PORT. */
static bool forward_to(struct uroce_gsi *g, uint16_t port, const struct uroce_rx *rx)
{
	return !rx->forwarded && port && uroce_engine_forward(g->eng, port, rx) == 0;
}

/* REQ and SIDR_REQ: the process listening on the service ID at the
 * address the CMA header names (Linux cma_find_listener), else DST_IP
 * (where the packet goes); 0 if none. */
static pid_t listener_of(const struct cm_msg *m, const uint8_t *dst_ip)
{
	struct cm_cma_addrs a;
	const uint8_t *ip = dst_ip;

	if (!cm_service_id_is_ip(m->service_id))
		return 0;
	if (cm_cma_hdr_unpack(m->private_data, &a) == 0)
		ip = a.dst;
	return uroce_gsi_port_lookup_listener(cm_service_id_ps(m->service_id), ip,
					      cm_service_id_port(m->service_id));
}

static void route_by_service(struct uroce_gsi *g, const struct uroce_rx *rx, const struct cm_msg *m)
{
	pid_t pid = listener_of(m, rx->dst_ip);
	uint16_t port = 0;

	if (pid == getpid()) {
		deliver(g, rx, m);
		return;
	}
	if (pid && g->members && uroce_qpn_find(g->members, pid, &port) && forward_to(g, port, rx))
		return;
	if (pid && rx->forwarded) {
		/* passed to us, but the table names another: it changed */
		uroce_engine_count(g->eng, UROCE_STAT_DROP_CM_NO_OWNER, 1);
		return;
	}
	answer_unowned(g, rx, m);
}

/* Every other message: to the owner of its destination comm ID. */
static void route_by_comm_id(struct uroce_gsi *g, const struct uroce_rx *rx, const struct cm_msg *m)
{
	uint32_t slot = cm_msg_dest_id(m) >> UROCE_GSI_COMM_ID_SLOT_SHIFT;
	uint16_t port = 0;
	pid_t owner;

	if (slot && slot == g->slot) {
		deliver(g, rx, m);
		return;
	}
	if (rx->forwarded || !g->members) {
		uroce_engine_count(g->eng, UROCE_STAT_DROP_CM_NO_OWNER, 1);
		return;
	}
	owner = uroce_qpn_owner(g->members, slot, 0, &port);
	if (owner && owner != getpid() && forward_to(g, port, rx))
		return;
	/* The owner may be gone: ask again, freeing its slot if it died. */
	owner = uroce_qpn_owner(g->members, slot, 1, &port);
	if (owner && owner != getpid() && forward_to(g, port, rx))
		return;
	answer_unowned(g, rx, m);
}

uint16_t uroce_gsi_local_port(struct uroce_engine *eng, const void *mad, size_t len,
			      const uint8_t dgid[16])
{
	struct uroce_gsi *g = uroce_engine_gsi(eng);
	uint16_t port = 0;
	struct cm_msg m;
	uint32_t slot;
	pid_t pid;

	if (!g || !g->members || cm_mad_parse(mad, len, &m) != CM_MAD_OK)
		return uroce_engine_fwd_port(eng);
	if (m.attr_id == CM_ATTR_REQ || m.attr_id == CM_ATTR_SIDR_REQ) {
		pid = listener_of(&m, dgid);
		if (pid && pid != getpid() && uroce_qpn_find(g->members, pid, &port) && port)
			return port;
		return uroce_engine_fwd_port(eng);
	}
	slot = cm_msg_dest_id(&m) >> UROCE_GSI_COMM_ID_SLOT_SHIFT;
	if (slot && slot != g->slot && uroce_qpn_owner(g->members, slot, 1, &port) && port)
		return port;
	return uroce_engine_fwd_port(eng);
}

void uroce_gsi_rx(struct uroce_engine *eng, const struct uroce_rx *rx, const struct roce_pkt *pkt)
{
	struct uroce_gsi *g = uroce_engine_gsi(eng);
	struct cm_msg m;
	int r;

	/* QP1 takes only UD SENDs with the GSI Q_Key (IBTA 13.4.6.2;
	 * rxe check_keys). */
	if (pkt->opcode != CM_GSI_OPCODE) {
		uroce_engine_count(eng, UROCE_STAT_DROP_CM_NOT_UD_SEND, 1);
		return;
	}
	if (pkt->qkey != CM_GSI_QKEY) {
		uroce_engine_count(eng, UROCE_STAT_DROP_QKEY, 1);
		return;
	}
	r = cm_mad_parse(pkt->payload, pkt->paylen, &m);
	if (r != CM_MAD_OK) {
		uroce_engine_count(eng, UROCE_STAT_DROP_CM_LENGTH + (r - CM_MAD_E_LENGTH), 1);
		if (uroce_debug)
			fprintf(stderr, "uroce: %s: dropped a CM MAD from port %u: %s\n",
				uroce_engine_devname(eng), rx->src_port, cm_mad_reason_name(r));
		return;
	}
	uroce_engine_count(eng, UROCE_STAT_CM_MADS_RX, 1);
	if (!g)
		return;
	if (m.attr_id == CM_ATTR_REQ || m.attr_id == CM_ATTR_SIDR_REQ)
		route_by_service(g, rx, &m);
	else
		route_by_comm_id(g, rx, &m);
}
