/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * CM MADs (IBTA vol. 1 ch. 12.6) decoded and encoded: one table of field
 * descriptors per attribute drives both directions (cm_mad.c).  A decoded
 * message is a struct cm_msg with one named member per field; a message
 * uses the members of its attribute and leaves the others zero.  No
 * libibverbs: used by the provider's CM, the tests and the fuzzer.
 */
#ifndef UROCE_WIRE_CM_MAD_H
#define UROCE_WIRE_CM_MAD_H

#include <stdbool.h>
#include <stdint.h>

#include <uroce/ib_cm.h>
#include <uroce/roce_hdr.h>

/* GSI MADs travel as UD SEND_ONLY (IBTA 13.4.6.2). */
#define CM_GSI_OPCODE (ROCE_TR_UD | ROCE_SEND_ONLY)

/* A path of a REQ (primary; the alternate is kept as raw bytes). */
struct cm_path {
	uint16_t local_lid, remote_lid;     /* 0xFFFF on RoCE */
	uint8_t local_gid[16], remote_gid[16];
	uint32_t flow_label;                /* 20 bits */
	uint8_t packet_rate;                /* 6 bits */
	uint8_t traffic_class;
	uint8_t hop_limit;
	uint8_t sl;                         /* 4 bits */
	uint8_t subnet_local;               /* 1 bit */
	uint8_t local_ack_timeout;          /* 5 bits: 4.096 us * 2^t */
};

#define CM_ALT_PATH_SIZE 44

struct cm_msg {
	/* MAD header */
	uint16_t attr_id;                   /* enum cm_attr_id */
	uint8_t method;                     /* 0 on build means CM_METHOD_SEND */
	uint8_t class_version;              /* 0 on build means CM_CLASS_VERSION */
	uint16_t status;
	uint64_t tid;
	uint32_t attr_mod;                  /* REQ/REP: ECE vendor value */

	/* every connection message: REQ/REP/REJ/MRA/RTU/DREQ/DREP */
	uint32_t local_comm_id;
	uint32_t remote_comm_id;            /* the receiver's local comm ID (not in REQ) */

	/* REQ, SIDR_REQ, SIDR_REP */
	uint64_t service_id;
	/* REQ, REP */
	uint64_t local_ca_guid;
	uint32_t local_qkey;                /* REQ/REP: Q_Key field; SIDR_REP: the Q_Key */
	uint32_t local_qpn;                 /* REQ/REP: sender's QPN; SIDR_REP: the QPN */
	uint32_t local_eecn, remote_eecn;   /* RD only: 0 */
	uint32_t starting_psn;              /* 24 bits */
	uint8_t responder_resources;
	uint8_t initiator_depth;
	uint8_t end_to_end_flow_control;    /* 1 bit */
	uint8_t rnr_retry_count;            /* 3 bits */
	uint8_t srq;                        /* 1 bit */
	/* REQ only */
	uint8_t remote_cm_response_timeout; /* 5 bits: 4.096 us * 2^t */
	uint8_t transport_type;             /* 2 bits, enum cm_transport_type */
	uint8_t local_cm_response_timeout;  /* 5 bits */
	uint8_t retry_count;                /* 3 bits */
	uint16_t pkey;                      /* REQ, SIDR_REQ */
	uint8_t path_mtu;                   /* 4 bits, enum ibv_mtu numbering */
	uint8_t rdc_exists;                 /* 1 bit */
	uint8_t max_cm_retries;             /* 4 bits */
	uint8_t extended_transport_type;    /* 3 bits */
	struct cm_path primary;
	uint8_t alternate[CM_ALT_PATH_SIZE];/* REQ bytes 96..139, unused on RoCE */
	/* REP only */
	uint8_t target_ack_delay;           /* 5 bits */
	uint8_t failover_accepted;          /* 2 bits */

	/* REJ */
	uint8_t msg_rejected;               /* 2 bits, enum cm_msg_response */
	uint8_t ari_length;                 /* 7 bits, <= CM_REJ_ARI_MAX */
	uint16_t reason;                    /* enum cm_rej_reason */
	uint8_t ari[CM_REJ_ARI_MAX];
	/* MRA */
	uint8_t msg_mraed;                  /* 2 bits, enum cm_msg_response */
	uint8_t service_timeout;            /* 5 bits */
	/* DREQ */
	uint32_t remote_qpn;                /* 24 bits: the receiver's QPN */

	/* SIDR_REQ, SIDR_REP (service_id, pkey, local_qpn, local_qkey above) */
	uint32_t request_id;
	uint8_t sidr_status;                /* enum cm_sidr_status */
	uint8_t sidr_info_length;           /* <= CM_SIDR_INFO_MAX */
	uint8_t sidr_info[CM_SIDR_INFO_MAX];

	/* private data: the whole room of the attribute on parse (the wire
	 * has no length); on build, up to the room, the rest zero */
	uint16_t private_data_len;
	uint8_t private_data[CM_PRIVATE_DATA_MAX];
};

/* Why a MAD was not accepted.  Each has a counter in the engine
 * (UROCE_STAT_DROP_CM_SHORT...), in this order. */
enum cm_mad_reason {
	CM_MAD_OK = 0,
	CM_MAD_E_LENGTH,          /* not exactly CM_MAD_SIZE bytes */
	CM_MAD_E_VERSION,         /* base version != 1 or class version != 2 */
	CM_MAD_E_CLASS,           /* management class is not CM */
	CM_MAD_E_METHOD,          /* not Send */
	CM_MAD_E_ATTR,            /* attribute uroce does not handle (LAP, APR, ...) */
	CM_MAD_E_FIELD,           /* a field out of range (ARI length, private data, width) */
	CM_MAD_REASON_COUNT,
};
const char *cm_mad_reason_name(int reason);

/* Decode BUF[LEN] (a MAD: the payload of a UD SEND to QP1) into M (zeroed
 * first).  Returns CM_MAD_OK or the reason it was refused; never reads
 * beyond LEN. */
int cm_mad_parse(const uint8_t *buf, uint32_t len, struct cm_msg *m);

/* Encode M into BUF (CM_MAD_SIZE bytes, fully written).  Returns CM_MAD_OK,
 * CM_MAD_E_ATTR for an unknown attribute, or CM_MAD_E_FIELD if a value
 * does not fit its field or the private data its room. */
int cm_mad_build(const struct cm_msg *m, uint8_t buf[CM_MAD_SIZE]);

/* The name of attribute ATTR_ID ("REQ", ...), "unknown" if none. */
const char *cm_attr_name(uint16_t attr_id);
/* The private-data room of attribute ATTR_ID; 0 if unknown. */
uint16_t cm_private_data_size(uint16_t attr_id);

/* The CMA header at the start of a REQ's / SIDR_REQ's private data, with
 * IP addresses as 16-byte IPv4-mapped (::ffff:a.b.c.d) or IPv6 addresses
 * and ports in host order. */
struct cm_cma_addrs {
	int family;               /* AF_INET or AF_INET6 */
	uint8_t src[16], dst[16];
	uint16_t src_port;
};
/* Write the 36-byte header for A into BUF. */
void cm_cma_hdr_pack(uint8_t buf[CM_CMA_HDR_SIZE], const struct cm_cma_addrs *a);
/* Read it: 0, or -1 if the version or IP version is not one cma.c accepts. */
int cm_cma_hdr_unpack(const uint8_t buf[CM_CMA_HDR_SIZE], struct cm_cma_addrs *a);

/* The remote comm ID a message is addressed to (the receiver's local comm
 * ID), or SIDR_REP's request ID; 0 for REQ and SIDR_REQ, routed by service ID. */
uint32_t cm_msg_dest_id(const struct cm_msg *m);

#endif
