/* SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause */
/*
 * RDMA netlink answered in the process (docs/netlink.md): what the files
 * of preload/nl_*.c share.
 *   nl_sock.c    the socket calls on an emulated NETLINK_RDMA socket
 *   nl_msg.c     building answers, packed into datagrams to the socket
 *   nl_devs.c    uroce's devices, read from the tree SYSFS_PATH names
 *   nl_answer.c  the command table: what each request is answered with
 *   nl_kernel.c  the kernel's part of an answer, where it has RDMA
 *   nl_stat.c    `rdma statistic`: the devices' counters
 *   nl_res.c     `rdma resource`: the objects of the devices' processes
 *
 * An emulated socket is an AF_UNIX datagram socket connected to itself:
 * an answer is written to it when the request is sent, so the program's
 * recvmsg (with MSG_PEEK, MSG_TRUNC, poll, O_NONBLOCK) is the kernel's own.
 */
#ifndef UROCE_PRELOAD_NL_H
#define UROCE_PRELOAD_NL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/netlink.h>
#include <rdma/rdma_netlink.h>
#include <net/if.h>

/* uroce's netlink device index: 0x40000000 + N for /dev/infiniband/uverbsN,
 * far above the kernel's (which counts from 0). */
#define NL_DEV_INDEX_BASE 0x40000000u
/* One datagram: what libmnl's receive buffer (a page) holds. */
#define NL_DGRAM 4096
/* The most one answer may queue on its socket; the socket's send buffer is
 * raised above it, so writing an answer never blocks (docs/netlink.md). */
#define NL_ANSWER_BUDGET (256 * 1024)
#define NL_SNDBUF (1024 * 1024)

/* The real send(2), past our own wrapper. */
ssize_t nl_real_send(int fd, const void *buf, size_t len, int flags);

/* A message being built in a fixed buffer; OVERFLOW once it did not fit. */
/* Both buffers hold netlink headers in place: aligned as netlink(7) asks. */
struct nlb {
	uint8_t buf[NL_DGRAM] __attribute__((aligned(NLMSG_ALIGNTO)));
	size_t len;
	int overflow;
};

void nlb_start(struct nlb *b, uint16_t type, uint16_t flags, uint32_t seq, uint32_t pid);
void nlb_put(struct nlb *b, uint16_t type, const void *data, size_t len);
void nlb_u8(struct nlb *b, uint16_t type, uint8_t v);
void nlb_u32(struct nlb *b, uint16_t type, uint32_t v);
void nlb_u64(struct nlb *b, uint16_t type, uint64_t v);
void nlb_str(struct nlb *b, uint16_t type, const char *s);
/* A nested attribute: start returns its offset, end sets its length. */
size_t nlb_nest(struct nlb *b, uint16_t type);
void nlb_nest_end(struct nlb *b, size_t at);
/* Forget what was put after offset AT (an entry that did not fit). */
void nlb_cut(struct nlb *b, size_t at);

/* An answer: messages packed into datagrams sent to the emulated socket. */
struct nl_out {
	int fd;
	uint32_t pid, seq;     /* of the request: every answer carries them */
	size_t queued;         /* bytes written so far */
	int full;              /* the budget ran out: later entries are left out */
	uint16_t multi;        /* NLM_F_MULTI in a dump's messages, else 0 */
	uint8_t dgram[NL_DGRAM] __attribute__((aligned(NLMSG_ALIGNTO)));
	size_t dlen;
};

void nl_out_init(struct nl_out *o, int fd, const struct nlmsghdr *req, uint32_t pid);
/* Start a message of this answer (NLDEV command CMD, flags added). */
void nl_out_start(struct nl_out *o, struct nlb *b, int cmd, uint16_t flags);
/* Queue message B (or raw message M of LEN bytes); 0 or -ENOBUFS. */
int nl_out_add(struct nl_out *o, const struct nlb *b);
int nl_out_raw(struct nl_out *o, const void *m, size_t len);
/* End a dump (NLMSG_DONE) or answer with an error or ack (NLMSG_ERROR). */
void nl_out_done(struct nl_out *o);
void nl_out_error(struct nl_out *o, const struct nlmsghdr *req, int err);
void nl_out_flush(struct nl_out *o);

/* A request: its header and attributes by type. */
struct nl_req {
	const struct nlmsghdr *h;
	int cmd;                          /* RDMA_NLDEV_CMD_* */
	int dump;
	const struct nlattr *tb[RDMA_NLDEV_ATTR_MAX];
};

int nl_req_parse(struct nl_req *r, const struct nlmsghdr *h);
int nl_attr_u32(const struct nlattr *a, uint32_t *v);
/* A string attribute's text, NUL-terminated, or NULL. */
const char *nl_attr_str(const struct nlattr *a);

/* One uroce device, as the tree under SYSFS_PATH describes it. */
struct nl_dev {
	char name[64];
	char netdev[IF_NAMESIZE];
	int uverbs;                 /* N of /dev/infiniband/uverbsN */
	uint32_t index;             /* NL_DEV_INDEX_BASE + uverbs */
	uint32_t abi;               /* the uverbs node's abi_version */
	uint64_t node_guid;         /* host order, as the kernel sends it */
	char fw[64];
	uint8_t port_state, phys_state;
	uint32_t ifindex;           /* 0 if the netdev is gone */
};

#define NL_MAX_DEVS 64
/* uroce's devices ($SYSFS_PATH is our tree), in uverbs order; count. */
int nl_devs_load(struct nl_dev *devs, int max);
/* True if this process's SYSFS_PATH is a uroce tree. */
int nl_devs_present(void);

/* Answer the request at H on emulated socket FD (bound to port PID);
 * KERNEL: whether the kernel has RDMA netlink, to merge its answer. */
void nl_answer(int fd, uint32_t pid, int kernel, const struct nlmsghdr *h);

/* The kernel's answer to REQ, on a socket of its own, into O: its
 * messages without the end (NLMSG_DONE of a dump, the ack); returns how
 * it ended: 0, or the kernel's (or our: no answer) negative errno. */
int nl_kernel_ask(const struct nlmsghdr *req, struct nl_out *o);
/* True if the kernel answers NETLINK_RDMA (the module loads on demand). */
int nl_kernel_has_rdma(void);


/* One device's counters for RDMA_NLDEV_CMD_STAT_GET (nl_stat.c). */
int nl_stat_port(struct nl_out *o, const struct nl_req *r, const struct nl_dev *d);

/* `rdma resource` of one device (nl_res.c): the summary (RES_GET), and
 * the objects of RES_{QP,CQ,MR,PD}_GET. */
int nl_res_summary(struct nl_out *o, const struct nl_req *r, const struct nl_dev *d);
int nl_res_list(struct nl_out *o, const struct nl_req *r, const struct nl_dev *d);

#endif
