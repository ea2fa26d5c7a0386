// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * `rdma resource show` for uroce's devices: the PDs, CQs, QPs and MRs the
 * device's processes hold, read from their tables in shared memory
 * (device/res.h), answered as the kernel's resource tracker answers
 * (drivers/infiniband/core/nldev.c: fill_res_info, res_get_common_dumpit
 * and _doit, fill_res_{qp,cq,mr,pd}_entry).
 *   RES_GET          the summary: pd, cq, qp, mr, each a count;
 *   RES_*_GET dump   the device handle, then a table of entries, as many
 *                    messages as the entries need;
 *   RES_*_GET of one (its LQPN, CQN, MRN or PDN given): its fields at the
 *                    top level of one message, the first process's.
 * The keys of an MR (and a PD's) are shown to root only, as the kernel
 * shows them to CAP_NET_ADMIN.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "device/device.h"
#include "preload/nl.h"

struct res_set {
	struct uroce_res_obj *obj;
	size_t n;
	uint64_t count[UROCE_RES_KINDS];
	bool admin;
};

/* What one resource command lists. */
struct res_kind {
	int cmd;
	enum uroce_res_kind kind;
	uint16_t table, entry;      /* RDMA_NLDEV_ATTR_RES_{QP,..}[_ENTRY] */
	uint16_t id;                /* the attribute naming one object */
	void (*put)(struct nlb *b, const struct res_set *s, const struct uroce_res_obj *o);
};

/* How many objects of S's table T name OBJECT ID as their PD or CQ. */
static uint64_t users(const struct res_set *s, unsigned int t, enum uroce_res_kind kind, uint32_t id)
{
	uint64_t n = 0;

	for (size_t i = 0; i < s->n; i++) {
		const struct uroce_res_entry *e = &s->obj[i].e;

		if (s->obj[i].table != t)
			continue;
		if (kind == UROCE_RES_PD && (e->kind == UROCE_RES_QP || e->kind == UROCE_RES_MR))
			n += e->pdn == id;
		if (kind == UROCE_RES_CQ && e->kind == UROCE_RES_QP)
			n += (e->scqn == id) + (e->rcqn == id && e->rcqn != e->scqn);
	}
	return n;
}

static void put_qp(struct nlb *b, const struct res_set *s, const struct uroce_res_obj *o)
{
	const struct uroce_res_entry *e = &o->e;
	bool connected = e->qp_type == IBV_QPT_RC || e->qp_type == IBV_QPT_UC;

	(void)s;
	if (e->port)
		nlb_u32(b, RDMA_NLDEV_ATTR_PORT_INDEX, e->port);
	nlb_u32(b, RDMA_NLDEV_ATTR_RES_LQPN, e->id);
	if (e->pdn)
		nlb_u32(b, RDMA_NLDEV_ATTR_RES_PDN, e->pdn);
	nlb_u32(b, RDMA_NLDEV_ATTR_RES_PID, o->pid);
	if (connected) {
		nlb_u32(b, RDMA_NLDEV_ATTR_RES_RQPN, e->rqpn);
		nlb_u32(b, RDMA_NLDEV_ATTR_RES_RQ_PSN, e->rq_psn);
	}
	nlb_u32(b, RDMA_NLDEV_ATTR_RES_SQ_PSN, e->sq_psn);
	if (connected || e->qp_type == IBV_QPT_XRC_SEND || e->qp_type == IBV_QPT_XRC_RECV)
		nlb_u8(b, RDMA_NLDEV_ATTR_RES_PATH_MIG_STATE, e->path_mig_state);
	nlb_u8(b, RDMA_NLDEV_ATTR_RES_TYPE, e->qp_type);
	nlb_u8(b, RDMA_NLDEV_ATTR_RES_STATE, e->qp_state);
}

static void put_cq(struct nlb *b, const struct res_set *s, const struct uroce_res_obj *o)
{
	nlb_u32(b, RDMA_NLDEV_ATTR_RES_CQE, o->e.cqe);
	nlb_u64(b, RDMA_NLDEV_ATTR_RES_USECNT, users(s, o->table, UROCE_RES_CQ, o->e.id));
	nlb_u8(b, RDMA_NLDEV_ATTR_DEV_DIM, 0);
	nlb_u32(b, RDMA_NLDEV_ATTR_RES_CQN, o->e.id);
	nlb_u32(b, RDMA_NLDEV_ATTR_RES_PID, o->pid);
}

static void put_mr(struct nlb *b, const struct res_set *s, const struct uroce_res_obj *o)
{
	if (s->admin) {
		nlb_u32(b, RDMA_NLDEV_ATTR_RES_RKEY, o->e.rkey);
		nlb_u32(b, RDMA_NLDEV_ATTR_RES_LKEY, o->e.lkey);
	}
	nlb_u64(b, RDMA_NLDEV_ATTR_RES_MRLEN, o->e.length);
	nlb_u32(b, RDMA_NLDEV_ATTR_RES_MRN, o->e.id);
	nlb_u32(b, RDMA_NLDEV_ATTR_RES_PDN, o->e.pdn);
	nlb_u32(b, RDMA_NLDEV_ATTR_RES_PID, o->pid);
}

/* A uroce PD has no local DMA key nor a global R_Key: neither is sent. */
static void put_pd(struct nlb *b, const struct res_set *s, const struct uroce_res_obj *o)
{
	nlb_u64(b, RDMA_NLDEV_ATTR_RES_USECNT, users(s, o->table, UROCE_RES_PD, o->e.id));
	nlb_u32(b, RDMA_NLDEV_ATTR_RES_PDN, o->e.id);
	nlb_u32(b, RDMA_NLDEV_ATTR_RES_PID, o->pid);
}

static const struct res_kind kinds[] = {
	{ RDMA_NLDEV_CMD_RES_QP_GET, UROCE_RES_QP, RDMA_NLDEV_ATTR_RES_QP,
	  RDMA_NLDEV_ATTR_RES_QP_ENTRY, RDMA_NLDEV_ATTR_RES_LQPN, put_qp },
	{ RDMA_NLDEV_CMD_RES_CQ_GET, UROCE_RES_CQ, RDMA_NLDEV_ATTR_RES_CQ,
	  RDMA_NLDEV_ATTR_RES_CQ_ENTRY, RDMA_NLDEV_ATTR_RES_CQN, put_cq },
	{ RDMA_NLDEV_CMD_RES_MR_GET, UROCE_RES_MR, RDMA_NLDEV_ATTR_RES_MR,
	  RDMA_NLDEV_ATTR_RES_MR_ENTRY, RDMA_NLDEV_ATTR_RES_MRN, put_mr },
	{ RDMA_NLDEV_CMD_RES_PD_GET, UROCE_RES_PD, RDMA_NLDEV_ATTR_RES_PD,
	  RDMA_NLDEV_ATTR_RES_PD_ENTRY, RDMA_NLDEV_ATTR_RES_PDN, put_pd },
};

static int load(struct res_set *s, const struct nl_dev *d)
{
	char nsdir[PATH_MAX];
	int ret = uroce_ns_dir(nsdir, sizeof(nsdir));

	s->admin = geteuid() == 0;
	s->obj = NULL;
	s->n = 0;
	return ret ? ret : uroce_res_snapshot(nsdir, d->name, &s->obj, &s->n, s->count);
}

static void head(struct nl_out *o, struct nlb *b, int cmd, const struct nl_dev *d)
{
	nl_out_start(o, b, cmd, 0);
	nlb_u32(b, RDMA_NLDEV_ATTR_DEV_INDEX, d->index);
	nlb_str(b, RDMA_NLDEV_ATTR_DEV_NAME, d->name);
}

int nl_res_summary(struct nl_out *o, const struct nl_req *r, const struct nl_dev *d)
{
	static const struct { const char *name; enum uroce_res_kind kind; } rows[] = {
		{ "pd", UROCE_RES_PD }, { "cq", UROCE_RES_CQ },
		{ "qp", UROCE_RES_QP }, { "mr", UROCE_RES_MR },
	};
	struct res_set s;
	struct nlb b;
	size_t table;
	int ret = load(&s, d);

	(void)r;
	if (ret)
		return ret;
	head(o, &b, RDMA_NLDEV_CMD_RES_GET, d);
	table = nlb_nest(&b, RDMA_NLDEV_ATTR_RES_SUMMARY);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		size_t entry = nlb_nest(&b, RDMA_NLDEV_ATTR_RES_SUMMARY_ENTRY);

		nlb_str(&b, RDMA_NLDEV_ATTR_RES_SUMMARY_ENTRY_NAME, rows[i].name);
		nlb_u64(&b, RDMA_NLDEV_ATTR_RES_SUMMARY_ENTRY_CURR, s.count[rows[i].kind]);
		nlb_nest_end(&b, entry);
	}
	nlb_nest_end(&b, table);
	free(s.obj);
	return nl_out_add(o, &b);
}

/* Does O pass the request's filters: its port, its id? */
static bool wanted(const struct nl_req *r, const struct res_kind *k, const struct uroce_res_obj *o)
{
	uint32_t v;

	if (o->e.kind != k->kind)
		return false;
	if (!nl_attr_u32(r->tb[RDMA_NLDEV_ATTR_PORT_INDEX], &v) && v &&
	    k->kind == UROCE_RES_QP && o->e.port != v)
		return false;
	return r->dump || (!nl_attr_u32(r->tb[k->id], &v) && o->e.id == v);
}

/* One object: its fields in the message's top level. */
static int one(struct nl_out *o, const struct nl_req *r, const struct nl_dev *d,
	       const struct res_kind *k, const struct res_set *s)
{
	struct nlb b;

	for (size_t i = 0; i < s->n; i++)
		if (wanted(r, k, &s->obj[i])) {
			head(o, &b, k->cmd, d);
			k->put(&b, s, &s->obj[i]);
			return b.overflow ? -EMSGSIZE : nl_out_add(o, &b);
		}
	return -ENOENT;
}

/* A dump: tables of entries, a new message where one is full. */
static int dump(struct nl_out *o, const struct nl_req *r, const struct nl_dev *d,
		const struct res_kind *k, const struct res_set *s)
{
	struct nlb b;
	size_t table = 0;
	bool open = false;
	int ret = 0;

	for (size_t i = 0; i < s->n && !ret; i++) {
		size_t at, entry;

		if (!wanted(r, k, &s->obj[i]))
			continue;
		for (int tries = 0; tries < 2; tries++) {
			if (!open) {
				head(o, &b, k->cmd, d);
				table = nlb_nest(&b, k->table);
				open = true;
			}
			at = b.len;
			entry = nlb_nest(&b, k->entry);
			k->put(&b, s, &s->obj[i]);
			nlb_nest_end(&b, entry);
			if (!b.overflow)
				break;
			/* full: send what it holds and start the next */
			nlb_cut(&b, at);
			nlb_nest_end(&b, table);
			ret = nl_out_add(o, &b);
			open = false;
			if (ret)
				break;
		}
	}
	if (open && !ret) {
		nlb_nest_end(&b, table);
		ret = nl_out_add(o, &b);
	}
	return ret;
}

int nl_res_list(struct nl_out *o, const struct nl_req *r, const struct nl_dev *d)
{
	const struct res_kind *k = NULL;
	struct res_set s;
	int ret;

	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (kinds[i].cmd == r->cmd)
			k = &kinds[i];
	if (!k)
		return -EOPNOTSUPP;
	if (!r->dump && !r->tb[k->id])
		return -EINVAL;
	if ((ret = load(&s, d)))
		return ret;
	ret = r->dump ? dump(o, r, d, k, &s) : one(o, r, d, k, &s);
	free(s.obj);
	return ret;
}
