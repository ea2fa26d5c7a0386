// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * rdma_join_multicast through stock librdmacm, checked against what the
 * kernel's rdma CM gives on a RoCE v2 port (cma_iboe_join_multicast,
 * cma_make_mc_event, ucma_process_join / ucma_leave_multicast):
 *   - MULTICAST_JOIN for the join's context: QPN 0xFFFFFF, Q_Key
 *     0x01234567 (the QP's), a global AH to ::ffff:GROUP from the id's
 *     GID, hop limit 64, no LID, SL 0, port 1;
 *   - a full member's QP is attached by librdmacm: the group is in
 *     /proc/net/igmp until rdma_leave_multicast, a send-only one is not;
 *   - a leave with its event still queued takes the event with it;
 *   - two groups on one id, their events in order, then rdma_destroy_id
 *     with both joined (returns: events_reported is counted right);
 *   - EINVAL: a unicast address, a TCP-port-space id, an id on no device;
 *   - LEAVE_MCAST written raw: ENOENT for a handle never given, ENOSPC
 *     for a response too short (ucma_leave_multicast).
 * Usage: mcast_join LOCAL_IPV4 GROUP_IPV4 GROUP2_IPV4 UNICAST_IPV4, under
 * `uroce run` in a namespace of its own.  Exit 0 if every check holds.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <rdma/rdma_cma.h>

#define WAIT_MS 10000

static int failures;

#define CHECK(cond, ...)                                       \
	do {                                                   \
		if (!(cond)) {                                 \
			fprintf(stderr, "FAIL: " __VA_ARGS__); \
			fputc('\n', stderr);                   \
			failures++;                            \
		}                                              \
	} while (0)

static struct rdma_event_channel *ch;

static struct sockaddr_in ip4(const char *s)
{
	struct sockaddr_in a = { .sin_family = AF_INET };

	if (inet_pton(AF_INET, s, &a.sin_addr) != 1) {
		fprintf(stderr, "bad address %s\n", s);
		exit(2);
	}
	return a;
}

/* The next event of the channel, bounded; NULL if none came. */
static struct rdma_cm_event *next_event(void)
{
	struct pollfd p = { .fd = ch->fd, .events = POLLIN };
	struct rdma_cm_event *ev;

	if (poll(&p, 1, WAIT_MS) != 1 || rdma_get_cm_event(ch, &ev)) {
		fprintf(stderr, "FAIL: no event within %d ms\n", WAIT_MS);
		exit(1);
	}
	return ev;
}

static void expect_event(enum rdma_cm_event_type type, struct rdma_cm_event **out)
{
	struct rdma_cm_event *ev = next_event();

	if (ev->event != type || ev->status) {
		fprintf(stderr, "FAIL: event %s status %d, wanted %s\n", rdma_event_str(ev->event),
			ev->status, rdma_event_str(type));
		exit(1);
	}
	if (out)
		*out = ev;
	else
		rdma_ack_cm_event(ev);
}

/* An id of port space PS bound to LOCAL and resolved toward GROUP. */
static struct rdma_cm_id *resolved_id(enum rdma_port_space ps, struct sockaddr_in *local,
				      struct sockaddr_in *group)
{
	struct rdma_cm_id *id;

	if (rdma_create_id(ch, &id, NULL, ps) || rdma_bind_addr(id, (struct sockaddr *)local) ||
	    rdma_resolve_addr(id, NULL, (struct sockaddr *)group, 2000)) {
		perror("create/bind/resolve");
		exit(1);
	}
	expect_event(RDMA_CM_EVENT_ADDR_RESOLVED, NULL);
	return id;
}

/* Is GROUP a membership of some interface (/proc/net/igmp)? */
static int in_igmp(const struct sockaddr_in *group)
{
	char line[256], hex[16];
	int found = 0;
	FILE *f = fopen("/proc/net/igmp", "r");

	snprintf(hex, sizeof(hex), "%08X", group->sin_addr.s_addr);
	while (f && fgets(line, sizeof(line), f))
		found |= line[0] == '\t' && strstr(line, hex) != NULL;
	if (f)
		fclose(f);
	return found;
}

/* LEAVE_MCAST written raw (rdma/rdma_user_cm.h, ABI 4: command 17, a
 * destroy_id body, a destroy_id_resp of 4 bytes); errno, or 0. */
static int raw_leave(uint32_t handle, uint16_t out)
{
	struct {
		uint32_t cmd;
		uint16_t in, out;
		uint64_t response;
		uint32_t id, reserved;
	} c = { 17, 16, out, 0, handle, 0 };
	uint32_t events_reported;

	c.response = (uintptr_t)&events_reported;
	return write(ch->fd, &c, sizeof(c)) == (ssize_t)sizeof(c) ? 0 : errno;
}

static void check_join_event(struct rdma_cm_event *ev, struct rdma_cm_id *id, void *context,
			     const struct sockaddr_in *local, const struct sockaddr_in *group)
{
	const struct rdma_ud_param *ud = &ev->param.ud;
	const struct ibv_ah_attr *ah = &ud->ah_attr;
	uint8_t mgid[16] = { [10] = 0xff, [11] = 0xff };
	uint8_t sgid[16] = { [10] = 0xff, [11] = 0xff };
	union ibv_gid gid;

	memcpy(mgid + 12, &group->sin_addr, 4);
	memcpy(sgid + 12, &local->sin_addr, 4);
	CHECK(ev->id == id, "join event for another id");
	CHECK(ud->private_data == context, "join event's context %p, wanted %p", ud->private_data,
	      context);
	CHECK(ud->qp_num == 0xFFFFFF, "qp_num %#x", ud->qp_num);
	CHECK(ud->qkey == RDMA_UDP_QKEY, "qkey %#x", ud->qkey);
	CHECK(ah->is_global == 1, "is_global %u", ah->is_global);
	CHECK(!memcmp(ah->grh.dgid.raw, mgid, 16), "dgid is not ::ffff:group");
	CHECK(ah->grh.hop_limit == 64, "hop_limit %u", ah->grh.hop_limit);
	CHECK(ah->grh.flow_label == 0 && ah->grh.traffic_class == 0, "flow label / tclass");
	CHECK(ah->dlid == 0 && ah->sl == 0 && ah->port_num == 1, "dlid %u sl %u port %u", ah->dlid,
	      ah->sl, ah->port_num);
	CHECK(!ibv_query_gid(id->verbs, 1, ah->grh.sgid_index, &gid) && !memcmp(gid.raw, sgid, 16),
	      "sgid_index %u is not the GID of the bound address", ah->grh.sgid_index);
}

int main(int argc, char **argv)
{
	struct sockaddr_in local, group, group2, unicast;
	struct ibv_qp_init_attr qpa = { .qp_type = IBV_QPT_UD,
					.cap = { .max_send_wr = 1, .max_recv_wr = 1,
						 .max_send_sge = 1, .max_recv_sge = 1 } };
	struct rdma_cm_join_mc_attr_ex sendonly = {
		.comp_mask = RDMA_CM_JOIN_MC_ATTR_ADDRESS | RDMA_CM_JOIN_MC_ATTR_JOIN_FLAGS,
		.join_flags = RDMA_MC_JOIN_FLAG_SENDONLY_FULLMEMBER,
	};
	struct ibv_qp_attr attr;
	struct ibv_qp_init_attr init;
	struct rdma_cm_event *ev;
	struct rdma_cm_id *id, *id2;
	struct pollfd p;
	int ctx_a, ctx_b;

	if (argc != 5) {
		fprintf(stderr, "usage: %s LOCAL GROUP GROUP2 UNICAST\n", argv[0]);
		return 2;
	}
	local = ip4(argv[1]);
	group = ip4(argv[2]);
	group2 = ip4(argv[3]);
	unicast = ip4(argv[4]);
	ch = rdma_create_event_channel();
	if (!ch) {
		perror("rdma_create_event_channel");
		return 1;
	}

	/* A full member with a QP: the event, the attach, the leave. */
	id = resolved_id(RDMA_PS_UDP, &local, &group);
	if (rdma_create_qp(id, NULL, &qpa)) {
		perror("rdma_create_qp");
		return 1;
	}
	CHECK(!rdma_join_multicast(id, (struct sockaddr *)&group, &ctx_a), "join: %s",
	      strerror(errno));
	expect_event(RDMA_CM_EVENT_MULTICAST_JOIN, &ev);
	check_join_event(ev, id, &ctx_a, &local, &group);
	CHECK(!ibv_query_qp(id->qp, &attr, IBV_QP_QKEY, &init) && attr.qkey == ev->param.ud.qkey,
	      "the QP's Q_Key %#x is not the event's", attr.qkey);
	rdma_ack_cm_event(ev);
	CHECK(in_igmp(&group), "full member: %s is not in /proc/net/igmp", argv[2]);
	CHECK(!rdma_leave_multicast(id, (struct sockaddr *)&group), "leave: %s", strerror(errno));
	CHECK(!in_igmp(&group), "after the leave: %s still in /proc/net/igmp", argv[2]);
	printf("ok: full member: MULTICAST_JOIN as the kernel's, QP attached, left\n");

	/* A send-only member: the event, no attach. */
	sendonly.addr = (struct sockaddr *)&group;
	CHECK(!rdma_join_multicast_ex(id, &sendonly, &ctx_b), "send-only join: %s",
	      strerror(errno));
	expect_event(RDMA_CM_EVENT_MULTICAST_JOIN, &ev);
	check_join_event(ev, id, &ctx_b, &local, &group);
	rdma_ack_cm_event(ev);
	CHECK(!in_igmp(&group), "send-only member: %s in /proc/net/igmp", argv[2]);
	CHECK(!rdma_leave_multicast(id, (struct sockaddr *)&group), "leave: %s", strerror(errno));
	printf("ok: send-only member: MULTICAST_JOIN, no attach\n");

	/* A leave before the event was taken: the event goes with the group
	 * (else rdma_leave_multicast would wait for an ack forever). */
	CHECK(!rdma_join_multicast(id, (struct sockaddr *)&group, &ctx_a), "join: %s",
	      strerror(errno));
	CHECK(!rdma_leave_multicast(id, (struct sockaddr *)&group), "leave: %s", strerror(errno));
	p = (struct pollfd){ .fd = ch->fd, .events = POLLIN };
	CHECK(poll(&p, 1, 0) == 0, "an event is left after the leave");
	printf("ok: leave with the event queued: no event left\n");

	/* Errors: a unicast group; a join on no device; on a TCP id. */
	errno = 0;
	CHECK(rdma_join_multicast(id, (struct sockaddr *)&unicast, NULL) && errno == EINVAL,
	      "join of a unicast address: errno %d, wanted EINVAL", errno);
	CHECK(!rdma_create_id(ch, &id2, NULL, RDMA_PS_UDP), "create_id");
	errno = 0;
	CHECK(rdma_join_multicast(id2, (struct sockaddr *)&group, NULL) && errno == EINVAL,
	      "join on an id with no device: errno %d, wanted EINVAL", errno);
	rdma_destroy_id(id2);
	id2 = resolved_id(RDMA_PS_TCP, &local, &group);
	errno = 0;
	CHECK(rdma_join_multicast(id2, (struct sockaddr *)&group, NULL) && errno == EINVAL,
	      "join on a TCP id: errno %d, wanted EINVAL", errno);
	rdma_destroy_id(id2);
	printf("ok: EINVAL for a unicast address, an id on no device, a TCP id\n");
	CHECK(raw_leave(0x7ffffff0, 4) == ENOENT, "LEAVE_MCAST of an unknown handle: not ENOENT");
	CHECK(raw_leave(0x7ffffff0, 2) == ENOSPC, "LEAVE_MCAST with 2 response bytes: not ENOSPC");
	printf("ok: LEAVE_MCAST: ENOENT for an unknown handle, ENOSPC for a short response\n");

	/* Two groups on an id with no QP, in order; destroyed with both. */
	id2 = resolved_id(RDMA_PS_UDP, &local, &group);
	CHECK(!rdma_join_multicast(id2, (struct sockaddr *)&group, &ctx_a), "join 1");
	CHECK(!rdma_join_multicast(id2, (struct sockaddr *)&group2, &ctx_b), "join 2");
	expect_event(RDMA_CM_EVENT_MULTICAST_JOIN, &ev);
	check_join_event(ev, id2, &ctx_a, &local, &group);
	rdma_ack_cm_event(ev);
	expect_event(RDMA_CM_EVENT_MULTICAST_JOIN, &ev);
	check_join_event(ev, id2, &ctx_b, &local, &group2);
	rdma_ack_cm_event(ev);
	CHECK(!rdma_destroy_id(id2), "destroy_id with two groups: %s", strerror(errno));
	printf("ok: two groups in order, destroy_id with both joined\n");

	rdma_destroy_qp(id);
	rdma_destroy_id(id);
	rdma_destroy_event_channel(ch);
	return failures ? 1 : 0;
}
