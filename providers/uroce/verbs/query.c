// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/* query_device(_ex) and query_port: what the device is and can do. */
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "provider_version.h"
#include "device/device.h"
#include "engine/engine.h"
#include "verbs/verbs.h"

/*
 * Capability flags list only what works end to end: RNR NAKs are
 * generated, port events are reported, the CQ can be armed again before
 * its events are acknowledged; memory windows of type 1 and 2B (mw.c);
 * XRC (xrc.c).
 * No SRQ resize, no APM.
 */
static const unsigned int uroce_cap_flags =
	IBV_DEVICE_SYS_IMAGE_GUID | IBV_DEVICE_PORT_ACTIVE_EVENT |
	IBV_DEVICE_RC_RNR_NAK_GEN | IBV_DEVICE_N_NOTIFY_CQ |
	IBV_DEVICE_MEM_WINDOW | IBV_DEVICE_MEM_WINDOW_TYPE_2B | IBV_DEVICE_XRC;

/* IB_UVERBS_DEVICE_ATOMIC_WRITE of the kernel's uapi (Linux 6.2,
 * ib_user_verbs.h); rdma-core 44's headers predate it, the value is fixed
 * by the ABI.  pyverbs and perftest read it from device_cap_flags_ex. */
#define UROCE_DEVICE_ATOMIC_WRITE (1ULL << 40)

static void fill_device_attr(struct uroce_context *ctx, struct ibv_device_attr_ex *a)
{
	struct ibv_device_attr *o = &a->orig_attr;

	memset(a, 0, sizeof(*a));
	snprintf(o->fw_ver, sizeof(o->fw_ver), "%s", UROCE_VERSION);
	o->node_guid = htobe64(ctx->node_guid);
	o->sys_image_guid = o->node_guid;
	o->max_mr_size = UROCE_MAX_MR_SIZE;
	o->page_size_cap = 0xfffff000; /* any power of two from 4 KiB */
	o->vendor_id = UROCE_VENDOR_ID;
	o->vendor_part_id = 0;
	o->hw_ver = 0;
	/* QPs of every process on the address share the QPN table (qpn.h). */
	o->max_qp = UROCE_QPN_MAX_LIVE;
	o->max_qp_wr = UROCE_MAX_QP_WR;
	o->device_cap_flags = uroce_cap_flags;
	o->max_sge = UROCE_MAX_SGE;
	o->max_sge_rd = UROCE_MAX_SGE;
	o->max_cq = UROCE_MAX_CQ;
	o->max_cqe = UROCE_MAX_CQE;
	o->max_mr = UROCE_MAX_MR;
	o->max_pd = UROCE_MAX_PD;
	/* Responder resources (IBTA 9.4.5 o9-20): each QP replays the results
	 * of its last UROCE_MAX_RD_ATOM atomics (resp_read.c) and re-executes
	 * duplicate READs, so it honours that many outstanding per QP. */
	o->max_qp_rd_atom = UROCE_MAX_RD_ATOM;
	o->max_ee_rd_atom = 0;
	o->max_res_rd_atom = UROCE_MAX_RD_ATOM * UROCE_MAX_QP;
	o->max_qp_init_rd_atom = UROCE_MAX_RD_ATOM;
	o->max_ee_init_rd_atom = 0;
	o->atomic_cap = IBV_ATOMIC_HCA; /* atomic among this device's accesses and local CPUs */
	o->max_ee = 0;
	o->max_rdd = 0;
	o->max_mw = UROCE_MAX_MR; /* windows share the MRs' key table */
	o->max_raw_ipv6_qp = 0;
	o->max_raw_ethy_qp = 0;
	/* UD multicast over IP multicast (engine/mcast_groups.c): per device and process. */
	o->max_mcast_grp = UROCE_MAX_MCAST_GRP;
	o->max_mcast_qp_attach = UROCE_MAX_MCAST_QP_ATTACH;
	o->max_total_mcast_qp_attach = UROCE_MAX_MCAST_GRP * UROCE_MAX_MCAST_QP_ATTACH;
	o->max_ah = UROCE_MAX_AH;
	o->max_fmr = 0;
	o->max_map_per_fmr = 0;
	o->max_srq = UROCE_MAX_SRQ;
	o->max_srq_wr = UROCE_MAX_SRQ_WR;
	o->max_srq_sge = UROCE_MAX_SGE;
	o->max_pkeys = 1;
	o->local_ca_ack_delay = 15;
	o->phys_port_cnt = 1;

	/* ATOMIC WRITE (IBTA 1.5, RC): resp.c; posting one needs rdma-core 44's
	 * verbs.h, so a build for 36-43 does not offer it. */
	a->device_cap_flags_ex = uroce_cap_flags PABI_SINCE_44(| UROCE_DEVICE_ATOMIC_WRITE);
	/* Completion timestamps count nanoseconds of one 64-bit clock (cq_ex.c). */
	a->completion_timestamp_mask = UINT64_MAX;
	a->hca_core_clock = UROCE_HCA_CORE_CLOCK_KHZ;
	/* ODP is native (mr.c): every operation of every QP type we have
	 * may use an ODP MR, and implicit ODP covers the address space. */
	a->odp_caps.general_caps = IBV_ODP_SUPPORT | IBV_ODP_SUPPORT_IMPLICIT;
	a->odp_caps.per_transport_caps.rc_odp_caps =
		IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV | IBV_ODP_SUPPORT_WRITE |
		IBV_ODP_SUPPORT_READ | IBV_ODP_SUPPORT_ATOMIC | IBV_ODP_SUPPORT_SRQ_RECV;
	a->odp_caps.per_transport_caps.uc_odp_caps =
		IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV | IBV_ODP_SUPPORT_WRITE |
		IBV_ODP_SUPPORT_SRQ_RECV;
	a->odp_caps.per_transport_caps.ud_odp_caps =
		IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV | IBV_ODP_SUPPORT_SRQ_RECV;
	a->xrc_odp_caps = IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_WRITE | IBV_ODP_SUPPORT_READ |
			  IBV_ODP_SUPPORT_ATOMIC | IBV_ODP_SUPPORT_SRQ_RECV;
	a->phys_port_cnt_ex = 1;
}

int uroce_query_device_ex(struct ibv_context *context,
			  const struct ibv_query_device_ex_input *input,
			  struct ibv_device_attr_ex *attr, size_t attr_size)
{
	struct ibv_device_attr_ex full;

	if (input && input->comp_mask)
		return EINVAL;
	if (attr_size < sizeof(attr->orig_attr))
		return EINVAL;
	fill_device_attr(to_uctx(context), &full);
	/* The caller's structure may be older (smaller) than ours. */
	memcpy(attr, &full, attr_size < sizeof(full) ? attr_size : sizeof(full));
	return 0;
}

int uroce_query_port(struct ibv_context *context, uint8_t port_num,
		     struct ibv_port_attr *attr)
{
	struct uroce_device *dev = to_udev(context->device);
	struct uroce_netdev nd;
	int up = 0;

	if (port_num != 1)
		return EINVAL;
	memset(attr, 0, sizeof(*attr));
	if (uroce_netdev_query(dev->netdev, &nd) == 0)
		up = nd.admin_up && nd.carrier;
	else
		nd.mtu = 1500;
	attr->state = up ? IBV_PORT_ACTIVE : IBV_PORT_DOWN;
	attr->phys_state = up ? 5 /* LinkUp */ : 3 /* Disabled */;
	attr->max_mtu = IBV_MTU_4096;
	attr->active_mtu = uroce_netdev_ib_mtu(nd.mtu);
	attr->gid_tbl_len = UROCE_GID_TBL_LEN;
	attr->port_cap_flags = IBV_PORT_CM_SUP | IBV_PORT_IP_BASED_GIDS;
	attr->max_msg_sz = UROCE_MAX_MSG_SZ;
	attr->bad_pkey_cntr = 0;
	attr->qkey_viol_cntr = 0;
	attr->pkey_tbl_len = 1;
	attr->lid = 0;
	attr->sm_lid = 0;
	attr->lmc = 0;
	attr->max_vl_num = 1;
	attr->sm_sl = 0;
	attr->subnet_timeout = 0;
	attr->init_type_reply = 0;
	attr->active_width = 2; /* 4X */
	attr->active_speed = 32; /* EDR: 4X EDR reads as 100 Gb/s, a software link's order */
	attr->link_layer = IBV_LINK_LAYER_ETHERNET;
	attr->flags = 0;
	return 0;
}
