/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * What the verbs files give the engine (its table of upcalls,
 * engine/upcalls.h, filled in provider.c) and use among themselves.
 */
#ifndef UROCE_VERBS_H
#define UROCE_VERBS_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include <infiniband/verbs.h>

#include "device/device.h"
#include "engine/engine.h"

/* cq.c: append a completion; -ENOSPC on overrun (the CQ goes to error).
 * SOLICITED: a receive completion of a message with the SE bit. */
int uroce_cq_push_ex(struct uroce_cq *cq, const struct ibv_wc *wc, bool solicited);
/* events.c: queue asynchronous event TYPE about O, whose ibv object is at
 * ELEMENT. */
void uroce_evobj_async_event(struct uroce_context *ctx, struct uroce_evobj *o,
			     enum ibv_event_type type, void *element);
/* qp.c: an asynchronous event about QP (IBTA 11.6.3), counted so that the
 * QP outlives it until the application acknowledges it. */
void uroce_qp_async_event(struct uroce_qp *qp, enum ibv_event_type type);
/* mw.c: binds and invalidations, executed in send-queue order by the
 * requester; a SEND with Invalidate's, by the responder (0 or -EINVAL). */
enum ibv_wc_status uroce_mw_local_op(struct uroce_qp *qp, struct uroce_send_wqe *w);
int uroce_mw_remote_invalidate(struct uroce_qp *qp, uint32_t rkey);
/* xrc.c: XRC receive QP: make the XRC SRQ named SRQN the target of the
 * request being handled (qp->srq, rcq, pd); the SRQ must be of the QP's
 * XRC domain.  Called with qp->lock held; the SRQ stays valid until
 * uroce_xrc_release.  False if no such SRQ is the QP's to use. */
bool uroce_xrc_resolve(struct uroce_qp *qp, uint32_t srqn);
void uroce_xrc_release(struct uroce_qp *qp);

/* ---- the ibv ops and what verbs files share (moved from the engine's
 * headers, which keep the objects) ------------------------------------------ */

/* query.c */
int uroce_query_device_ex(struct ibv_context *context,
			  const struct ibv_query_device_ex_input *input,
			  struct ibv_device_attr_ex *attr, size_t attr_size);
int uroce_query_port(struct ibv_context *context, uint8_t port_num,
		     struct ibv_port_attr *attr);

/* restrack.c: the context's table for `rdma resource` (device/res.h).
 * Track gives OBJ (of KIND) an entry, *SLOT, and returns its id there;
 * update rewrites it; untrack removes it (a slot of 0: counted only). */
uint32_t uroce_track(struct uroce_context *ctx, enum uroce_res_kind kind, const void *obj,
		     unsigned int *slot);
void uroce_track_update(struct uroce_context *ctx, enum uroce_res_kind kind, const void *obj,
			unsigned int slot);
void uroce_untrack(struct uroce_context *ctx, enum uroce_res_kind kind, unsigned int *slot);

/* pd.c */
struct ibv_pd *uroce_alloc_pd(struct ibv_context *context);
int uroce_dealloc_pd(struct ibv_pd *pd);
struct ibv_td *uroce_alloc_td(struct ibv_context *context, struct ibv_td_init_attr *attr);
int uroce_dealloc_td(struct ibv_td *td);
struct ibv_pd *uroce_alloc_parent_domain(struct ibv_context *context,
					 struct ibv_parent_domain_init_attr *attr);
bool uroce_is_parent_domain(struct ibv_pd *pd);
/* A zeroed buffer of SIZE for an object made with PD (NULL: none): from a
 * parent domain's allocator when it has one (*CUSTOM set), else calloc;
 * NULL with errno.  uroce_buf_free gives it back the same way. */
void *uroce_buf_alloc(struct ibv_pd *pd, size_t size, uint64_t type, bool *custom);
void uroce_buf_free(struct ibv_pd *pd, void *buf, uint64_t type, bool custom);

/* mr.c */
struct ibv_mr *uroce_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
			    uint64_t hca_va, int access);
int uroce_dereg_mr(struct verbs_mr *vmr);
int uroce_rereg_mr(struct verbs_mr *vmr, int flags, struct ibv_pd *pd,
		   void *addr, size_t length, int access);
int uroce_advise_mr(struct ibv_pd *pd, enum ibv_advise_mr_advice advice,
		    uint32_t flags, struct ibv_sge *sg_list, uint32_t num_sge);

/* mw.c */
struct ibv_mw *uroce_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type);
int uroce_dealloc_mw(struct ibv_mw *mw);
int uroce_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw, struct ibv_mw_bind *mw_bind);

/* cq.c */
struct ibv_cq *uroce_create_cq(struct ibv_context *context, int cqe,
			       struct ibv_comp_channel *channel, int comp_vector);
int uroce_destroy_cq(struct ibv_cq *cq);
int uroce_poll_cq(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc);
int uroce_resize_cq(struct ibv_cq *cq, int cqe);
struct uroce_cq *uroce_cq_alloc(struct ibv_context *context, int cqe,
				struct ibv_comp_channel *channel, int comp_vector,
				struct ibv_pd *parent);
/* Take the oldest completion into *E; 0, or -ENOENT when empty, -EIO after
 * an overrun (serves the wire first when the CQ is empty). */
int uroce_cq_take(struct uroce_cq *cq, struct uroce_cqe *e);

/* cq_ex.c */
struct ibv_cq_ex *uroce_create_cq_ex(struct ibv_context *context,
				     struct ibv_cq_init_attr_ex *attr);
int uroce_query_rt_values(struct ibv_context *context, struct ibv_values_ex *values);
uint64_t uroce_clock_ns(clockid_t clk);
#define UROCE_HCA_CORE_CLOCK_KHZ 1000000 /* the "HCA clock" counts nanoseconds */

/* ---- verbs entry points (qp.c, srq.c, ah.c, post.c, wr.c) ---------------- */

struct ibv_qp *uroce_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr);
struct ibv_qp *uroce_create_qp_ex(struct ibv_context *context,
				  struct ibv_qp_init_attr_ex *attr);
int uroce_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask);
int uroce_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr, int attr_mask,
		   struct ibv_qp_init_attr *init_attr);
int uroce_destroy_qp(struct ibv_qp *qp);
/* The QP's completions still queued go: at Reset (qp_modify.c) and at
 * destroy (qp.c). */
void uroce_qp_clean_cqs(struct uroce_qp *qp);
int uroce_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr,
		    struct ibv_send_wr **bad_wr);
int uroce_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr,
		    struct ibv_recv_wr **bad_wr);
void uroce_qp_init_wr_ops(struct uroce_qp *qp);

struct ibv_srq *uroce_create_srq(struct ibv_pd *pd, struct ibv_srq_init_attr *attr);
int uroce_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr, int mask);
int uroce_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr);
int uroce_destroy_srq(struct ibv_srq *srq);
int uroce_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr,
			struct ibv_recv_wr **bad_wr);

/* xrc.c: XRC domains, XRC SRQs and their numbers */
struct ibv_xrcd *uroce_open_xrcd(struct ibv_context *context, struct ibv_xrcd_init_attr *attr);
int uroce_close_xrcd(struct ibv_xrcd *xrcd);
struct uroce_xrcd_dom *uroce_xrcd_dom(struct ibv_xrcd *xrcd);
void uroce_xrcd_hold(struct uroce_xrcd_dom *d, int n);
struct ibv_srq *uroce_create_srq_ex(struct ibv_context *context,
				    struct ibv_srq_init_attr_ex *attr);
int uroce_get_srq_num(struct ibv_srq *srq, uint32_t *srq_num);
/* Give SRQ a number; take it back.  0 or an errno. */
int uroce_srqn_alloc(struct uroce_srq *srq);
void uroce_srqn_free(struct uroce_srq *srq);

/* mcast.c */
int uroce_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid);
int uroce_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid, uint16_t lid);

struct ibv_ah *uroce_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr);
int uroce_destroy_ah(struct ibv_ah *ah);
/* Fill AV from an ibv_ah_attr (RoCE: GRH required); 0 or an errno. */
int uroce_av_from_attr(struct uroce_context *ctx, const struct ibv_ah_attr *attr,
		       struct uroce_av *av);

/* post.c helpers shared by post_send and the ibv_wr_* API (wr.c) */
int uroce_send_op_allowed(enum ibv_qp_type type, enum ibv_wr_opcode op);
int uroce_sq_state_ok(const struct uroce_qp *qp);
struct uroce_send_wqe *uroce_wqe_new(struct uroce_qp *qp, uint64_t wr_id,
				     enum ibv_wr_opcode op, unsigned int flags);
int uroce_wqe_set_sges(struct uroce_qp *qp, struct uroce_send_wqe *w,
		       const struct ibv_sge *sg, int num);
int uroce_wqe_set_ud(struct uroce_qp *qp, struct uroce_send_wqe *w, struct ibv_ah *ah,
		     uint32_t remote_qpn, uint32_t remote_qkey);
int uroce_wqe_check(struct uroce_qp *qp, struct uroce_send_wqe *w);
int uroce_fill_recv(struct uroce_ring *r, uint32_t max_sge, const struct ibv_recv_wr *wr);

/* ---- completion queue (cq.c) ---------------------------------------------- */
/* mw.c */
int uroce_wqe_set_bind(struct uroce_qp *qp, struct uroce_send_wqe *w, struct ibv_mw *mw,
		       uint32_t rkey, const struct ibv_mw_bind_info *info);

/* Drop the completions of QP number QPN still queued on CQ (NULL: none). */
void uroce_cq_clean(struct uroce_cq *cq, uint32_t qpn);

/* Attach a completion channel made by liburoce-preload.so; 0 or errno. */
int uroce_cq_channel_attach(struct uroce_cq *cq, struct ibv_comp_channel *ch);
void uroce_cq_channel_detach(struct uroce_cq *cq);
/* A completion went into CQ (cq->lock held): fire the channel if armed for it. */
void uroce_cq_notify(struct uroce_cq *cq, bool solicited, bool error);
void uroce_cq_events_hold(bool on);

int uroce_req_notify_cq(struct ibv_cq *cq, int solicited_only);
void uroce_cq_event(struct ibv_cq *cq);

/* Queue an asynchronous event; ELEMENT is the QP/CQ/SRQ pointer or port. */
void uroce_async_event(struct uroce_context *ctx, enum ibv_event_type type, uint64_t element);

/* O belongs to MEM; libibverbs counts acknowledgements into ACKED0 (and
 * ACKED1, or NULL) under MUTEX. */
void uroce_evobj_init(struct uroce_evobj *o, void *mem, pthread_mutex_t *mutex,
		      const uint32_t *acked0, const uint32_t *acked1);

/* O's object is destroyed: free its memory now if every event about it
 * has been acknowledged, else with CTX (uroce_evobj_zombies_free). */
void uroce_evobj_release(struct uroce_context *ctx, struct uroce_evobj *o);
void uroce_evobj_zombies_free(struct uroce_context *ctx);
void uroce_async_event_done(struct ibv_context *context, struct ibv_async_event *event);

/* The per-context watcher of the netdev (port state, addresses) and of
 * the device's registry record (deleted: DEVICE_FATAL). */
int uroce_monitor_start(struct uroce_context *ctx);
void uroce_monitor_stop(struct uroce_context *ctx);

/* provider.c: the engine's upcalls, these functions and the CM's. */
extern const struct uroce_upcalls uroce_verbs_upcalls;

#endif
