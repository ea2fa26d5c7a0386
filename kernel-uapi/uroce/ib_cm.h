/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * The IB connection manager's numbers as they appear on the wire (IBTA
 * vol. 1 ch. 12.6, 13.4) and as the Linux kernel's rdma_cm uses them
 * (include/rdma/ib_cm.h, drivers/infiniband/core/cma.c): the MAD common
 * header, CM attribute IDs, reject reasons, SIDR statuses, the CMA
 * private-data header that carries the IP addresses, Q_Keys, service IDs
 * and the private-data room of each message.  No code: shared by the wire
 * codec (providers/uroce/wire/cm_mad.c), the CM and the tests.
 */
#ifndef UROCE_IB_CM_H
#define UROCE_IB_CM_H

#include <stdint.h>

/* ---- MAD framing (IBTA 13.4.2-13.4.3) ------------------------------------ */

#define CM_MAD_SIZE 256           /* every GSI MAD is exactly 256 bytes */
#define CM_MAD_HDR_SIZE 24        /* the common MAD header */
#define CM_DATA_SIZE (CM_MAD_SIZE - CM_MAD_HDR_SIZE) /* 232: CM message body */

/* The MAD common header, network order (IBTA 13.4.3, figure 145). */
struct cm_mad_hdr {
	uint8_t base_version;     /* 1 */
	uint8_t mgmt_class;       /* 0x07: communication management */
	uint8_t class_version;    /* 2 (Linux's IB_CM_CLASS_VERSION) */
	uint8_t method;           /* 0x03: Send (CM messages) */
	uint16_t status;
	uint16_t class_specific;
	uint64_t tid;             /* transaction ID; Linux: agent hi_tid << 32 | local comm ID */
	uint16_t attr_id;         /* CM_ATTR_* */
	uint16_t resv;
	uint32_t attr_mod;        /* REQ/REP: the ECE vendor value (Linux) */
} __attribute__((packed));

#define CM_MAD_BASE_VERSION 1
#define CM_MGMT_CLASS 0x07
#define CM_CLASS_VERSION 2
#define CM_METHOD_GET 0x01
#define CM_METHOD_SET 0x02
#define CM_METHOD_SEND 0x03
#define CM_METHOD_GET_RESP 0x81

/* Attribute IDs (IBTA table 110; Linux CM_*_ATTR_ID). */
enum cm_attr_id {
	CM_ATTR_CLASS_PORT_INFO = 0x0001,
	CM_ATTR_REQ = 0x0010,
	CM_ATTR_MRA = 0x0011,
	CM_ATTR_REJ = 0x0012,
	CM_ATTR_REP = 0x0013,
	CM_ATTR_RTU = 0x0014,
	CM_ATTR_DREQ = 0x0015,
	CM_ATTR_DREP = 0x0016,
	CM_ATTR_SIDR_REQ = 0x0017,
	CM_ATTR_SIDR_REP = 0x0018,
	CM_ATTR_LAP = 0x0019,
	CM_ATTR_APR = 0x001A,
};

/* QP1: the general services interface (IBTA 13.4.6). */
#define CM_GSI_QPN 1
#define CM_GSI_QKEY 0x80010000u   /* IB_QP1_QKEY, the well-known GSI Q_Key */
#define CM_GSI_PKEY 0xffff
/* rxe's UDP source port for QP1: 0xC000 + hash_32(1, 14) (rxe_net.c). */
#define CM_GSI_UDP_SPORT 55410
/* The Q_Key of UD QPs made by rdma_cm (RDMA_UDP_QKEY, cma.c). */
#define CM_RDMA_UDP_QKEY 0x01234567u

/* ---- message fields ---------------------------------------------------- */

/* REQ/REP transport service type (IBTA 12.6.5, 2 bits). */
enum cm_transport_type {
	CM_TRANSPORT_RC = 0,
	CM_TRANSPORT_UC = 1,
	CM_TRANSPORT_RD = 2,
	CM_TRANSPORT_XRC = 3,     /* with extended transport type 1 (XRC) */
};

/* REJ "message rejected" and MRA "message MRAed" (IBTA 12.6.6, 12.6.7). */
enum cm_msg_response {
	CM_MSG_RESPONSE_REQ = 0,
	CM_MSG_RESPONSE_REP = 1,
	CM_MSG_RESPONSE_OTHER = 2,  /* REJ: other; MRA: LAP */
};

/* Reject reasons (IBTA table 112, 12.6.7.2); Linux enum ib_cm_rej_reason,
 * which skips 34. */
#define CM_REJ_REASON_LIST(X)                                   \
	X(NO_QP, 1)                                             \
	X(NO_EEC, 2)                                            \
	X(NO_RESOURCES, 3)                                      \
	X(TIMEOUT, 4)                                           \
	X(UNSUPPORTED, 5)                                       \
	X(INVALID_COMM_ID, 6)                                   \
	X(INVALID_COMM_INSTANCE, 7)                             \
	X(INVALID_SERVICE_ID, 8)  /* nobody listens: Linux cm_match_req */ \
	X(INVALID_TRANSPORT_TYPE, 9)                            \
	X(STALE_CONN, 10)                                       \
	X(RDC_NOT_EXIST, 11)                                    \
	X(INVALID_GID, 12)                                      \
	X(INVALID_LID, 13)                                      \
	X(INVALID_SL, 14)                                       \
	X(INVALID_TRAFFIC_CLASS, 15)                            \
	X(INVALID_HOP_LIMIT, 16)                                \
	X(INVALID_PACKET_RATE, 17)                              \
	X(INVALID_ALT_GID, 18)                                  \
	X(INVALID_ALT_LID, 19)                                  \
	X(INVALID_ALT_SL, 20)                                   \
	X(INVALID_ALT_TRAFFIC_CLASS, 21)                        \
	X(INVALID_ALT_HOP_LIMIT, 22)                            \
	X(INVALID_ALT_PACKET_RATE, 23)                          \
	X(PORT_CM_REDIRECT, 24)                                 \
	X(PORT_REDIRECT, 25)                                    \
	X(INVALID_MTU, 26)                                      \
	X(INSUFFICIENT_RESP_RESOURCES, 27)                      \
	X(CONSUMER_DEFINED, 28)   /* rdma_reject(); Linux ucma turns 0 into 28 */ \
	X(INVALID_RNR_RETRY, 29)                                \
	X(DUPLICATE_LOCAL_COMM_ID, 30)                          \
	X(INVALID_CLASS_VERSION, 31)                            \
	X(INVALID_FLOW_LABEL, 32)                               \
	X(INVALID_ALT_FLOW_LABEL, 33)                           \
	X(VENDOR_OPTION_NOT_SUPPORTED, 35) /* rdma_reject_ece() */

enum cm_rej_reason {
#define CM_REJ_ENUM(n, v) CM_REJ_##n = v,
	CM_REJ_REASON_LIST(CM_REJ_ENUM)
#undef CM_REJ_ENUM
};

/* The longest "additional reject information" (IBTA 12.6.7). */
#define CM_REJ_ARI_MAX 72

/* SIDR_REP status (IBTA 12.11.2, table 116; Linux enum ib_cm_sidr_status). */
enum cm_sidr_status {
	CM_SIDR_SUCCESS = 0,
	CM_SIDR_UNSUPPORTED = 1,  /* no listener for the service ID */
	CM_SIDR_REJECT = 2,
	CM_SIDR_NO_QP = 3,
	CM_SIDR_REDIRECT = 4,
	CM_SIDR_UNSUPPORTED_VERSION = 5,
};
#define CM_SIDR_INFO_MAX 72

/* Private data room of each message (IBTA 12.6; Linux IB_CM_*_PRIVATE_DATA_SIZE). */
#define CM_REQ_PRIVATE_DATA_SIZE 92
#define CM_MRA_PRIVATE_DATA_SIZE 222
#define CM_REJ_PRIVATE_DATA_SIZE 148
#define CM_REP_PRIVATE_DATA_SIZE 196
#define CM_RTU_PRIVATE_DATA_SIZE 224
#define CM_DREQ_PRIVATE_DATA_SIZE 220
#define CM_DREP_PRIVATE_DATA_SIZE 224
#define CM_SIDR_REQ_PRIVATE_DATA_SIZE 216
#define CM_SIDR_REP_PRIVATE_DATA_SIZE 136
#define CM_PRIVATE_DATA_MAX 224

/* ---- rdma_cm over IB CM (Linux drivers/infiniband/core/cma.c) ----------- */

/* Port spaces (enum rdma_ucm_port_space). */
#define CM_RDMA_PS_IPOIB 0x0002
#define CM_RDMA_PS_IB 0x013F
#define CM_RDMA_PS_TCP 0x0106
#define CM_RDMA_PS_UDP 0x0111

/* Service ID of an IP port: ps << 16 | port (rdma_get_service_id). */
static inline uint64_t cm_service_id(uint16_t ps, uint16_t port)
{
	return (uint64_t)ps << 16 | port;
}
#define CM_SERVICE_ID_IP_MASK 0xFFFFFFFFFFFF0000ull /* RDMA_IB_IP_PS_MASK */
static inline uint16_t cm_service_id_ps(uint64_t sid) { return (uint16_t)(sid >> 16); }
static inline uint16_t cm_service_id_port(uint64_t sid) { return (uint16_t)sid; }
/* Whether SID is one of rdma_cm's IP port spaces (0x0000000001XX0000 / IPoIB). */
static inline int cm_service_id_is_ip(uint64_t sid)
{
	uint64_t ps = sid & CM_SERVICE_ID_IP_MASK;

	return ps == cm_service_id(CM_RDMA_PS_TCP, 0) || ps == cm_service_id(CM_RDMA_PS_UDP, 0) ||
	       ps == cm_service_id(CM_RDMA_PS_IPOIB, 0) || ps == cm_service_id(CM_RDMA_PS_IB, 0);
}

/*
 * The CMA header: the first 36 bytes of the private data of a REQ or a
 * SIDR_REQ for an IP port space (struct cma_hdr).  The caller's private
 * data follows it, so a REQ carries at most 92 - 36 = 56 bytes of it and
 * a SIDR_REQ 216 - 36 = 180.  IPv4 addresses are in the last 4 bytes of
 * each 16 (the first 12 are zero, not ::ffff: mapped).
 */
struct cm_cma_hdr {
	uint8_t cma_version;      /* CM_CMA_VERSION; others are rejected (cma.c) */
	uint8_t ip_version;       /* IP version in bits 7:4: 0x40 or 0x60 */
	uint16_t port;            /* the active side's source port, network order */
	uint8_t src_addr[16];
	uint8_t dst_addr[16];
} __attribute__((packed));

#define CM_CMA_VERSION 0x00
#define CM_CMA_HDR_SIZE 36
#define CM_REQ_USER_PRIVATE_DATA_MAX (CM_REQ_PRIVATE_DATA_SIZE - CM_CMA_HDR_SIZE)       /* 56 */
#define CM_SIDR_REQ_USER_PRIVATE_DATA_MAX (CM_SIDR_REQ_PRIVATE_DATA_SIZE - CM_CMA_HDR_SIZE) /* 180 */

/* The LIDs of a RoCE REQ path: permissive (cm.c, cm_format_req, hop limit > 1). */
#define CM_PERMISSIVE_LID 0xFFFF

#endif
