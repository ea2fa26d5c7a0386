// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * Netlink messages for the emulated NETLINK_RDMA socket: building the
 * answer's messages (header, attributes, nests, as netlink(7) lays them
 * out), packing them into datagrams as the kernel packs a dump into skbs,
 * and reading a request's attributes.  Not libnl's nl_msg: this library
 * is preloaded into every process `uroce run` starts, and a fixed buffer
 * per message needs neither libnl in each of them nor an allocation.
 */
#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include "preload/nl.h"

void nlb_start(struct nlb *b, uint16_t type, uint16_t flags, uint32_t seq, uint32_t pid)
{
	struct nlmsghdr *h = (struct nlmsghdr *)b->buf;

	memset(h, 0, NLMSG_HDRLEN);
	h->nlmsg_type = type;
	h->nlmsg_flags = flags;
	h->nlmsg_seq = seq;
	h->nlmsg_pid = pid;
	b->len = NLMSG_HDRLEN;
	b->overflow = 0;
}

void nlb_put(struct nlb *b, uint16_t type, const void *data, size_t len)
{
	struct nlattr *a = (struct nlattr *)(b->buf + b->len);
	size_t total = NLA_HDRLEN + NLA_ALIGN(len);

	if (b->overflow || b->len + total > sizeof(b->buf)) {
		b->overflow = 1;
		return;
	}
	a->nla_type = type;
	a->nla_len = NLA_HDRLEN + len;
	if (len)
		memcpy((uint8_t *)a + NLA_HDRLEN, data, len);
	memset((uint8_t *)a + NLA_HDRLEN + len, 0, NLA_ALIGN(len) - len);
	b->len += total;
}

void nlb_u8(struct nlb *b, uint16_t type, uint8_t v)
{
	nlb_put(b, type, &v, sizeof(v));
}

void nlb_u32(struct nlb *b, uint16_t type, uint32_t v)
{
	nlb_put(b, type, &v, sizeof(v));
}

void nlb_u64(struct nlb *b, uint16_t type, uint64_t v)
{
	nlb_put(b, type, &v, sizeof(v));
}

void nlb_str(struct nlb *b, uint16_t type, const char *s)
{
	nlb_put(b, type, s, strlen(s) + 1);
}

size_t nlb_nest(struct nlb *b, uint16_t type)
{
	size_t at = b->len;

	nlb_put(b, type | NLA_F_NESTED, NULL, 0);
	return at;
}

void nlb_nest_end(struct nlb *b, size_t at)
{
	if (!b->overflow)
		((struct nlattr *)(b->buf + at))->nla_len = b->len - at;
}

void nlb_cut(struct nlb *b, size_t at)
{
	b->len = at;
	b->overflow = 0;
}

void nl_out_init(struct nl_out *o, int fd, const struct nlmsghdr *req, uint32_t pid)
{
	o->fd = fd;
	o->pid = pid;
	o->seq = req->nlmsg_seq;
	o->queued = 0;
	o->full = 0;
	o->multi = 0;
	o->dlen = 0;
}

void nl_out_start(struct nl_out *o, struct nlb *b, int cmd, uint16_t flags)
{
	nlb_start(b, RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, cmd), flags | o->multi, o->seq, o->pid);
}

void nl_out_flush(struct nl_out *o)
{
	/* Never blocks: the budget stays below the socket's send buffer. */
	if (o->dlen)
		nl_real_send(o->fd, o->dgram, o->dlen, MSG_DONTWAIT);
	o->dlen = 0;
}

int nl_out_raw(struct nl_out *o, const void *m, size_t len)
{
	len = NLMSG_ALIGN(len);
	/* Room is kept for the NLMSG_DONE or NLMSG_ERROR that ends it. */
	if (o->full || len > sizeof(o->dgram) ||
	    o->queued + len + NL_DGRAM > NL_ANSWER_BUDGET) {
		o->full = 1;
		return -ENOBUFS;
	}
	if (o->dlen + len > sizeof(o->dgram))
		nl_out_flush(o);
	memcpy(o->dgram + o->dlen, m, len);
	((struct nlmsghdr *)(o->dgram + o->dlen))->nlmsg_pid = o->pid;
	o->dlen += len;
	o->queued += len;
	return 0;
}

int nl_out_add(struct nl_out *o, const struct nlb *b)
{
	((struct nlmsghdr *)b->buf)->nlmsg_len = b->len;
	return nl_out_raw(o, b->buf, b->len);
}

static void end_msg(struct nl_out *o, uint16_t type, uint16_t flags, const void *p, size_t len)
{
	struct nlb b;

	nlb_start(&b, type, flags, o->seq, o->pid);
	memcpy(b.buf + b.len, p, len);
	b.len += len;
	o->full = 0; /* its room was kept */
	nl_out_add(o, &b);
	nl_out_flush(o);
}

void nl_out_done(struct nl_out *o)
{
	int status = 0;

	end_msg(o, NLMSG_DONE, NLM_F_MULTI, &status, sizeof(status));
}

/* An ack (ERR 0) or error: struct nlmsgerr with the request's header only,
 * as the kernel answers a socket with NETLINK_CAP_ACK. */
void nl_out_error(struct nl_out *o, const struct nlmsghdr *req, int err)
{
	struct nlmsgerr e = { .error = err, .msg = *req };

	end_msg(o, NLMSG_ERROR, NLM_F_CAPPED, &e, sizeof(e));
}

int nl_req_parse(struct nl_req *r, const struct nlmsghdr *h)
{
	const struct nlattr *a;
	size_t left;

	memset(r, 0, sizeof(*r));
	r->h = h;
	if (h->nlmsg_len < NLMSG_HDRLEN)
		return -EINVAL;
	r->cmd = RDMA_NL_GET_OP(h->nlmsg_type);
	r->dump = (h->nlmsg_flags & NLM_F_DUMP) == NLM_F_DUMP;
	left = h->nlmsg_len - NLMSG_HDRLEN;
	a = (const struct nlattr *)((const uint8_t *)h + NLMSG_HDRLEN);
	while (left > 0) {
		int type = a->nla_type & NLA_TYPE_MASK;
		size_t step = NLA_ALIGN(a->nla_len);

		/* An attribute cut short, or running past the message: the
		 * kernel's nlmsg_parse refuses it too. */
		if (left < NLA_HDRLEN || a->nla_len < NLA_HDRLEN || a->nla_len > left)
			return -EINVAL;
		if (type < RDMA_NLDEV_ATTR_MAX)
			r->tb[type] = a;
		if (step >= left)
			break;
		left -= step;
		a = (const struct nlattr *)((const uint8_t *)a + step);
	}
	return 0;
}

int nl_attr_u32(const struct nlattr *a, uint32_t *v)
{
	if (!a || a->nla_len != NLA_HDRLEN + sizeof(*v))
		return -EINVAL;
	memcpy(v, (const uint8_t *)a + NLA_HDRLEN, sizeof(*v));
	return 0;
}

const char *nl_attr_str(const struct nlattr *a)
{
	const char *s;

	if (!a || a->nla_len <= NLA_HDRLEN)
		return NULL;
	s = (const char *)a + NLA_HDRLEN;
	return s[a->nla_len - NLA_HDRLEN - 1] == '\0' ? s : NULL;
}
