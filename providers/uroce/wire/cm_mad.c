// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * The CM MAD codec.  Each attribute is a table of fields (IBTA vol. 1
 * 12.6.5-12.6.11, 12.11; the same offsets as Linux's ibta_vol1_c12.h):
 * where a field starts in the CM data (the MAD after its 24-byte header),
 * counted in bits from the most significant bit of that byte, its width,
 * and the struct cm_msg member it fills.  One loop reads and one writes
 * every table.  Private data is the attribute's trailing room.
 */
#include <errno.h>
#include <stddef.h>
#include <string.h>
#include <sys/socket.h>

#include "wire/bytes.h"
#include "wire/cm_mad.h"

enum field_kind {
	F_INT,                    /* big-endian bit field, 1..64 bits */
	F_BYTES,                  /* WIDTH/8 bytes copied as they are */
};

struct cm_field {
	const char *name;
	uint16_t bit;             /* byte offset * 8 + bit from the MSB */
	uint16_t width;           /* in bits */
	uint8_t kind;             /* enum field_kind */
	uint8_t size;             /* member size in bytes */
	uint16_t member;          /* offsetof(struct cm_msg, ...) */
};

/* FIELD(name, byte, bit from MSB, width in bits, member) */
#define INT(nm, byte, b, w, mem) { nm, (byte) * 8 + (b), w, F_INT, M_SIZE(mem), offsetof(struct cm_msg, mem) }
#define BYTES(nm, byte, n, mem) { nm, (byte) * 8, (n) * 8, F_BYTES, 0, offsetof(struct cm_msg, mem) }
#define M_SIZE(mem) sizeof(((struct cm_msg *)0)->mem)
#define COMM_IDS INT("local_comm_id", 0, 0, 32, local_comm_id), \
		 INT("remote_comm_id", 4, 0, 32, remote_comm_id)
#define END { NULL, 0, 0, 0, 0, 0 }

/* REQ, IBTA 12.6.5 (figure 150). */
static const struct cm_field req_fields[] = {
	INT("local_comm_id", 0, 0, 32, local_comm_id),
	INT("service_id", 8, 0, 64, service_id),
	INT("local_ca_guid", 16, 0, 64, local_ca_guid),
	INT("local_qkey", 28, 0, 32, local_qkey),
	INT("local_qpn", 32, 0, 24, local_qpn),
	INT("responder_resources", 35, 0, 8, responder_resources),
	INT("local_eecn", 36, 0, 24, local_eecn),
	INT("initiator_depth", 39, 0, 8, initiator_depth),
	INT("remote_eecn", 40, 0, 24, remote_eecn),
	INT("remote_cm_response_timeout", 43, 0, 5, remote_cm_response_timeout),
	INT("transport_type", 43, 5, 2, transport_type),
	INT("end_to_end_flow_control", 43, 7, 1, end_to_end_flow_control),
	INT("starting_psn", 44, 0, 24, starting_psn),
	INT("local_cm_response_timeout", 47, 0, 5, local_cm_response_timeout),
	INT("retry_count", 47, 5, 3, retry_count),
	INT("pkey", 48, 0, 16, pkey),
	INT("path_mtu", 50, 0, 4, path_mtu),
	INT("rdc_exists", 50, 4, 1, rdc_exists),
	INT("rnr_retry_count", 50, 5, 3, rnr_retry_count),
	INT("max_cm_retries", 51, 0, 4, max_cm_retries),
	INT("srq", 51, 4, 1, srq),
	INT("extended_transport_type", 51, 5, 3, extended_transport_type),
	INT("primary_local_lid", 52, 0, 16, primary.local_lid),
	INT("primary_remote_lid", 54, 0, 16, primary.remote_lid),
	BYTES("primary_local_gid", 56, 16, primary.local_gid),
	BYTES("primary_remote_gid", 72, 16, primary.remote_gid),
	INT("primary_flow_label", 88, 0, 20, primary.flow_label),
	INT("primary_packet_rate", 91, 2, 6, primary.packet_rate),
	INT("primary_traffic_class", 92, 0, 8, primary.traffic_class),
	INT("primary_hop_limit", 93, 0, 8, primary.hop_limit),
	INT("primary_sl", 94, 0, 4, primary.sl),
	INT("primary_subnet_local", 94, 4, 1, primary.subnet_local),
	INT("primary_local_ack_timeout", 95, 0, 5, primary.local_ack_timeout),
	BYTES("alternate_path", 96, CM_ALT_PATH_SIZE, alternate),
	END
};

/* MRA, 12.6.6 */
static const struct cm_field mra_fields[] = {
	COMM_IDS,
	INT("msg_mraed", 8, 0, 2, msg_mraed),
	INT("service_timeout", 9, 0, 5, service_timeout),
	END
};

/* REJ, 12.6.7 */
static const struct cm_field rej_fields[] = {
	COMM_IDS,
	INT("msg_rejected", 8, 0, 2, msg_rejected),
	INT("ari_length", 9, 0, 7, ari_length),
	INT("reason", 10, 0, 16, reason),
	BYTES("ari", 12, CM_REJ_ARI_MAX, ari),
	END
};

/* REP, 12.6.8 */
static const struct cm_field rep_fields[] = {
	COMM_IDS,
	INT("local_qkey", 8, 0, 32, local_qkey),
	INT("local_qpn", 12, 0, 24, local_qpn),
	INT("local_eecn", 16, 0, 24, local_eecn),
	INT("starting_psn", 20, 0, 24, starting_psn),
	INT("responder_resources", 24, 0, 8, responder_resources),
	INT("initiator_depth", 25, 0, 8, initiator_depth),
	INT("target_ack_delay", 26, 0, 5, target_ack_delay),
	INT("failover_accepted", 26, 5, 2, failover_accepted),
	INT("end_to_end_flow_control", 26, 7, 1, end_to_end_flow_control),
	INT("rnr_retry_count", 27, 0, 3, rnr_retry_count),
	INT("srq", 27, 3, 1, srq),
	INT("local_ca_guid", 28, 0, 64, local_ca_guid),
	END
};

/* RTU 12.6.9, DREP 12.6.11 */
static const struct cm_field ids_fields[] = {
	COMM_IDS,
	END
};

/* DREQ, 12.6.10 */
static const struct cm_field dreq_fields[] = {
	COMM_IDS,
	INT("remote_qpn", 8, 0, 24, remote_qpn),
	END
};

/* SIDR_REQ, 12.11.1 */
static const struct cm_field sidr_req_fields[] = {
	INT("request_id", 0, 0, 32, request_id),
	INT("pkey", 4, 0, 16, pkey),
	INT("service_id", 8, 0, 64, service_id),
	END
};

/* SIDR_REP, 12.11.2 */
static const struct cm_field sidr_rep_fields[] = {
	INT("request_id", 0, 0, 32, request_id),
	INT("status", 4, 0, 8, sidr_status),
	INT("additional_info_length", 5, 0, 8, sidr_info_length),
	INT("qpn", 8, 0, 24, local_qpn),
	INT("service_id", 12, 0, 64, service_id),
	INT("qkey", 20, 0, 32, local_qkey),
	BYTES("additional_info", 24, CM_SIDR_INFO_MAX, sidr_info),
	END
};

struct cm_attr {
	uint16_t id;
	const char *name;
	const struct cm_field *fields;
	uint8_t pd_offset;        /* private data: from here to the end of the CM data */
};

static const struct cm_attr attrs[] = {
	{ CM_ATTR_REQ, "REQ", req_fields, 140 },
	{ CM_ATTR_MRA, "MRA", mra_fields, 10 },
	{ CM_ATTR_REJ, "REJ", rej_fields, 84 },
	{ CM_ATTR_REP, "REP", rep_fields, 36 },
	{ CM_ATTR_RTU, "RTU", ids_fields, 8 },
	{ CM_ATTR_DREQ, "DREQ", dreq_fields, 12 },
	{ CM_ATTR_DREP, "DREP", ids_fields, 8 },
	{ CM_ATTR_SIDR_REQ, "SIDR_REQ", sidr_req_fields, 16 },
	{ CM_ATTR_SIDR_REP, "SIDR_REP", sidr_rep_fields, 96 },
};

/* The rooms the table gives agree with the numbers of ib_cm.h. */
_Static_assert(CM_DATA_SIZE - 140 == CM_REQ_PRIVATE_DATA_SIZE &&
	       CM_DATA_SIZE - 10 == CM_MRA_PRIVATE_DATA_SIZE &&
	       CM_DATA_SIZE - 84 == CM_REJ_PRIVATE_DATA_SIZE &&
	       CM_DATA_SIZE - 36 == CM_REP_PRIVATE_DATA_SIZE &&
	       CM_DATA_SIZE - 8 == CM_RTU_PRIVATE_DATA_SIZE &&
	       CM_DATA_SIZE - 12 == CM_DREQ_PRIVATE_DATA_SIZE &&
	       CM_DATA_SIZE - 16 == CM_SIDR_REQ_PRIVATE_DATA_SIZE &&
	       CM_DATA_SIZE - 96 == CM_SIDR_REP_PRIVATE_DATA_SIZE,
	       "private data rooms");

static const char *const reason_names[CM_MAD_REASON_COUNT] = {
	[CM_MAD_OK] = "ok",
	[CM_MAD_E_LENGTH] = "bad_length",
	[CM_MAD_E_VERSION] = "bad_version",
	[CM_MAD_E_CLASS] = "not_cm_class",
	[CM_MAD_E_METHOD] = "bad_method",
	[CM_MAD_E_ATTR] = "unsupported_attribute",
	[CM_MAD_E_FIELD] = "bad_field",
};

const char *cm_mad_reason_name(int reason)
{
	return reason >= 0 && reason < CM_MAD_REASON_COUNT ? reason_names[reason] : "unknown";
}

static const struct cm_attr *find_attr(uint16_t id)
{
	for (size_t i = 0; i < sizeof(attrs) / sizeof(attrs[0]); i++)
		if (attrs[i].id == id)
			return &attrs[i];
	return NULL;
}

const char *cm_attr_name(uint16_t attr_id)
{
	const struct cm_attr *a = find_attr(attr_id);

	return a ? a->name : "unknown";
}

uint16_t cm_private_data_size(uint16_t attr_id)
{
	const struct cm_attr *a = find_attr(attr_id);

	return a ? CM_DATA_SIZE - a->pd_offset : 0;
}

/* ---- the generic field loop ------------------------------------------------ */

static uint64_t get_bits(const uint8_t *d, unsigned int bit, unsigned int width)
{
	uint64_t v = 0;

	for (unsigned int i = 0; i < width; i++, bit++)
		v = v << 1 | ((d[bit / 8] >> (7 - bit % 8)) & 1);
	return v;
}

static void put_bits(uint8_t *d, unsigned int bit, unsigned int width, uint64_t v)
{
	for (unsigned int i = width; i-- > 0; bit++) {
		uint8_t mask = 1u << (7 - bit % 8);

		d[bit / 8] = (v >> i) & 1 ? d[bit / 8] | mask : d[bit / 8] & ~mask;
	}
}

static uint64_t member_get(const struct cm_msg *m, const struct cm_field *f)
{
	const uint8_t *p = (const uint8_t *)m + f->member;
	uint8_t v8;
	uint16_t v16;
	uint32_t v32;
	uint64_t v64;

	switch (f->size) {
	case 1: memcpy(&v8, p, 1); return v8;
	case 2: memcpy(&v16, p, 2); return v16;
	case 4: memcpy(&v32, p, 4); return v32;
	default: memcpy(&v64, p, 8); return v64;
	}
}

static void member_set(struct cm_msg *m, const struct cm_field *f, uint64_t v)
{
	uint8_t *p = (uint8_t *)m + f->member;
	uint8_t v8 = v;
	uint16_t v16 = v;
	uint32_t v32 = v;

	switch (f->size) {
	case 1: memcpy(p, &v8, 1); break;
	case 2: memcpy(p, &v16, 2); break;
	case 4: memcpy(p, &v32, 4); break;
	default: memcpy(p, &v, 8); break;
	}
}

int cm_mad_parse(const uint8_t *buf, uint32_t len, struct cm_msg *m)
{
	const struct cm_attr *a;
	const uint8_t *d = buf + CM_MAD_HDR_SIZE;

	memset(m, 0, sizeof(*m));
	/* GSI MADs are exactly 256 bytes (IBTA 13.4.2). */
	if (len != CM_MAD_SIZE)
		return CM_MAD_E_LENGTH;
	if (buf[1] != CM_MGMT_CLASS)
		return CM_MAD_E_CLASS;
	if (buf[0] != CM_MAD_BASE_VERSION || buf[2] != CM_CLASS_VERSION)
		return CM_MAD_E_VERSION;
	m->method = buf[3];
	m->class_version = buf[2];
	m->status = get16(buf + 4);
	m->tid = get64(buf + 8);
	m->attr_id = get16(buf + 16);
	m->attr_mod = get32(buf + 20);
	if (m->method != CM_METHOD_SEND)
		return CM_MAD_E_METHOD;
	a = find_attr(m->attr_id);
	if (!a)
		return CM_MAD_E_ATTR;
	for (const struct cm_field *f = a->fields; f->name; f++) {
		if (f->kind == F_BYTES)
			memcpy((uint8_t *)m + f->member, d + f->bit / 8, f->width / 8);
		else
			member_set(m, f, get_bits(d, f->bit, f->width));
	}
	m->private_data_len = CM_DATA_SIZE - a->pd_offset;
	memcpy(m->private_data, d + a->pd_offset, m->private_data_len);
	/* Lengths that index into fixed rooms (IBTA 12.6.7, 12.11.2). */
	if (m->ari_length > CM_REJ_ARI_MAX || m->sidr_info_length > CM_SIDR_INFO_MAX)
		return CM_MAD_E_FIELD;
	return CM_MAD_OK;
}

int cm_mad_build(const struct cm_msg *m, uint8_t buf[CM_MAD_SIZE])
{
	const struct cm_attr *a = find_attr(m->attr_id);
	uint8_t *d = buf + CM_MAD_HDR_SIZE;

	memset(buf, 0, CM_MAD_SIZE);
	if (!a)
		return CM_MAD_E_ATTR;
	if (m->private_data_len > CM_DATA_SIZE - a->pd_offset ||
	    m->ari_length > CM_REJ_ARI_MAX || m->sidr_info_length > CM_SIDR_INFO_MAX)
		return CM_MAD_E_FIELD;
	buf[0] = CM_MAD_BASE_VERSION;
	buf[1] = CM_MGMT_CLASS;
	buf[2] = m->class_version ? m->class_version : CM_CLASS_VERSION;
	buf[3] = m->method ? m->method : CM_METHOD_SEND;
	put16(buf + 4, m->status);
	put64(buf + 8, m->tid);
	put16(buf + 16, m->attr_id);
	put32(buf + 20, m->attr_mod);
	for (const struct cm_field *f = a->fields; f->name; f++) {
		uint64_t v;

		if (f->kind == F_BYTES) {
			memcpy(d + f->bit / 8, (const uint8_t *)m + f->member, f->width / 8);
			continue;
		}
		v = member_get(m, f);
		if (f->width < 64 && v >> f->width) {
			memset(buf, 0, CM_MAD_SIZE);
			return CM_MAD_E_FIELD;
		}
		put_bits(d, f->bit, f->width, v);
	}
	memcpy(d + a->pd_offset, m->private_data, m->private_data_len);
	return CM_MAD_OK;
}

uint32_t cm_msg_dest_id(const struct cm_msg *m)
{
	switch (m->attr_id) {
	case CM_ATTR_MRA:
	case CM_ATTR_REJ:
	case CM_ATTR_REP:
	case CM_ATTR_RTU:
	case CM_ATTR_DREQ:
	case CM_ATTR_DREP:
		return m->remote_comm_id;
	case CM_ATTR_SIDR_REP:
		return m->request_id;
	default:
		return 0;
	}
}

/* ---- the CMA header (Linux cma.c struct cma_hdr) ----------------------------- */

static const uint8_t v4_mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };

void cm_cma_hdr_pack(uint8_t buf[CM_CMA_HDR_SIZE], const struct cm_cma_addrs *a)
{
	memset(buf, 0, CM_CMA_HDR_SIZE);
	buf[0] = CM_CMA_VERSION;
	buf[1] = (a->family == AF_INET6 ? 6 : 4) << 4;
	put16(buf + 2, a->src_port);
	if (a->family == AF_INET6) {
		memcpy(buf + 4, a->src, 16);
		memcpy(buf + 20, a->dst, 16);
	} else {
		/* IPv4 in the last 4 bytes of each address, the rest zero. */
		memcpy(buf + 16, a->src + 12, 4);
		memcpy(buf + 32, a->dst + 12, 4);
	}
}

int cm_cma_hdr_unpack(const uint8_t buf[CM_CMA_HDR_SIZE], struct cm_cma_addrs *a)
{
	memset(a, 0, sizeof(*a));
	if (buf[0] != CM_CMA_VERSION)
		return -1;
	a->src_port = get16(buf + 2);
	switch (buf[1] >> 4) {
	case 4:
		a->family = AF_INET;
		memcpy(a->src, v4_mapped, 12);
		memcpy(a->dst, v4_mapped, 12);
		memcpy(a->src + 12, buf + 16, 4);
		memcpy(a->dst + 12, buf + 32, 4);
		return 0;
	case 6:
		a->family = AF_INET6;
		memcpy(a->src, buf + 4, 16);
		memcpy(a->dst, buf + 20, 16);
		return 0;
	default:
		return -1;
	}
}
