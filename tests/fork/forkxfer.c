// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * forkxfer: an RC ping-pong over the rdma CM, with completion events, in
 * which each side forks children while the messages flow (issue 48):
 *
 *   1  a child that exits at once
 *   2  a child that execs /bin/true
 *   3  a child that sleeps with everything inherited
 *   4  a child that closes every descriptor, then sleeps
 *   5  a child that uses the parent's QP, CQ and rdma CM id: each call
 *      must fail with EPERM, at once (an alarm reports a hang)
 *   6  system("exit 0") in the parent
 *
 * Every message is checked, the parent's connection, completion events
 * and CM events (the client's disconnect, seen by the server) must keep
 * working, and every child must end as said.  Exit 0 only then.
 *
 * With -D, the CM channel's fd is first moved through dups (move_channel)
 * and the fds it was on are closed: the connection must not notice.
 *
 *   forkxfer -s -p PORT [-n ROUNDS] [-D]    forkxfer -c ADDR -p PORT [-n ROUNDS] [-D]
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <rdma/rdma_cma.h>
#include <rdma/rdma_verbs.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MSG 4096
#define KINDS 6

static const char *side = "?";

static int die(const char *what)
{
	fprintf(stderr, "forkxfer %s: %s: %s\n", side, what, strerror(errno));
	exit(1);
}

static void fill(uint8_t *b, uint32_t round, int echo)
{
	for (int i = 0; i < MSG; i++)
		b[i] = (uint8_t)(round * 31 + i * 7 + echo);
}

static void nap(int ms)
{
	struct timespec t = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&t, &t) && errno == EINTR)
		;
}

/* Kind 5: the parent's objects answer EPERM, and nothing hangs. */
static int touch_parents(struct rdma_cm_id *id, struct ibv_mr *mr, uint8_t *buf)
{
	struct ibv_sge sge = { (uintptr_t)buf, MSG, mr->lkey };
	struct ibv_send_wr swr = { .sg_list = &sge, .num_sge = 1, .opcode = IBV_WR_SEND,
				   .send_flags = IBV_SEND_SIGNALED }, *bad;
	struct ibv_recv_wr rwr = { .sg_list = &sge, .num_sge = 1 }, *rbad;
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qi;
	struct ibv_wc wc;
	int bad_ones = 0, r;

	alarm(10);
	if ((r = ibv_post_send(id->qp, &swr, &bad)) != EPERM)
		bad_ones++, fprintf(stderr, "forkxfer %s child: ibv_post_send on the parent's QP: %d\n", side, r);
	if ((r = ibv_post_recv(id->qp, &rwr, &rbad)) != EPERM)
		bad_ones++, fprintf(stderr, "forkxfer %s child: ibv_post_recv: %d\n", side, r);
	if ((r = ibv_poll_cq(id->recv_cq, 1, &wc)) != -EPERM)
		bad_ones++, fprintf(stderr, "forkxfer %s child: ibv_poll_cq: %d\n", side, r);
	if ((r = ibv_req_notify_cq(id->recv_cq, 0)) != EPERM)
		bad_ones++, fprintf(stderr, "forkxfer %s child: ibv_req_notify_cq: %d\n", side, r);
	if ((r = ibv_query_qp(id->qp, &qa, IBV_QP_STATE, &qi)) != EPERM)
		bad_ones++, fprintf(stderr, "forkxfer %s child: ibv_query_qp: %d\n", side, r);
	qa.qp_state = IBV_QPS_ERR;
	if ((r = ibv_modify_qp(id->qp, &qa, IBV_QP_STATE)) != EPERM)
		bad_ones++, fprintf(stderr, "forkxfer %s child: ibv_modify_qp to ERR: %d\n", side, r);
	errno = 0;
	if (rdma_disconnect(id) != -1 || errno != EPERM)
		bad_ones++, fprintf(stderr, "forkxfer %s child: rdma_disconnect: errno %d\n", side, errno);
	if ((r = ibv_destroy_qp(id->qp)) != EPERM)
		bad_ones++, fprintf(stderr, "forkxfer %s child: ibv_destroy_qp: %d\n", side, r);
	return bad_ones;
}

/*
 * -D: ID's CM channel moves from its fd to dup(), to fcntl(F_DUPFD_CLOEXEC),
 * to dup2() onto the fd of another rdma_cm file and to dup3(), and the
 * fds it was on are closed, all but the last two.  As with the kernel's
 * rdma_cm, a dup is the same open file: commands and events follow it,
 * and the file dup2 replaced is released with its ids (its listener's
 * port is free again).  Returns the dup3 copy, for the end (-D's last
 * step: the channel goes on on it alone).
 */
static int move_channel(struct rdma_cm_id *id)
{
	struct rdma_event_channel *ch = id->channel, *other = rdma_create_event_channel();
	struct sockaddr_in sin = *(struct sockaddr_in *)rdma_get_local_addr(id);
	struct rdma_cm_id *lid, *again;
	int orig = ch->fd, a, b, c, d;
	struct stat st;

	sin.sin_port = 0;
	if (!other || rdma_create_id(other, &lid, NULL, RDMA_PS_TCP) ||
	    rdma_bind_addr(lid, (struct sockaddr *)&sin) || rdma_listen(lid, 1))
		die("-D: a listener on a second rdma_cm file");
	sin.sin_port = rdma_get_src_port(lid);
	a = dup(orig);
	b = fcntl(a, F_DUPFD_CLOEXEC, 64);
	c = dup2(b, other->fd);
	d = dup3(c, 200, O_CLOEXEC);
	if (a < 0 || b < 64 || c != other->fd || d != 200)
		die("-D: dup, fcntl F_DUPFD_CLOEXEC, dup2, dup3");
	if (close(orig) || close(a) || close(b))
		die("-D: close");
	ch->fd = c;
	if (fstat(d, &st) || !S_ISCHR(st.st_mode))
		die("-D: fstat of a dup is not the character device's");
	/* The other file's listener went with it: its port binds again. */
	if (rdma_create_id(ch, &again, NULL, RDMA_PS_TCP) ||
	    rdma_bind_addr(again, (struct sockaddr *)&sin) || rdma_destroy_id(again))
		die("-D: the port of the file dup2 replaced");
	printf("forkxfer %s: -D: CM channel moved from fd %d to %d and %d\n", side, orig, c, d);
	return d;
}

/* -D, the end: the channel's last fd but D is closed, and D alone goes
 * on; the server polls it for the client's disconnect. */
static void channel_on(struct rdma_cm_id *id, int d, int server)
{
	struct pollfd p = { .fd = d, .events = POLLIN };

	if (close(id->channel->fd))
		die("-D: close");
	id->channel->fd = d;
	if (server && poll(&p, 1, 30000) != 1)
		die("-D: poll of the last dup saw no event");
}

static pid_t spawn(int kind, struct rdma_cm_id *id, struct ibv_mr *mr, uint8_t *buf)
{
	pid_t pid;

	if (kind == 6)
		return system("exit 0") == 0 ? 0 : -1;
	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid)
		return pid;
	switch (kind) {
	case 1:
		_exit(0);
	case 2:
		execl("/bin/true", "true", (char *)NULL);
		_exit(127);
	case 3:
		nap(1500);
		_exit(0);
	case 4:
		close_range(0, ~0u, 0);
		nap(1000);
		_exit(0);
	default:
		_exit(touch_parents(id, mr, buf) ? 3 : 0);
	}
}

static int run(struct rdma_cm_id *id, int server, uint32_t rounds)
{
	static uint8_t rbuf[MSG], sbuf[MSG], want[MSG];
	struct ibv_mr *rmr = rdma_reg_msgs(id, rbuf, MSG), *smr = rdma_reg_msgs(id, sbuf, MSG);
	pid_t kids[KINDS + 1] = { 0 };
	int next = 1, bad = 0;
	struct ibv_wc wc;

	if (!rmr || !smr)
		die("rdma_reg_msgs");
	if (rdma_post_recv(id, NULL, rbuf, MSG, rmr))
		die("rdma_post_recv");
	if (server ? rdma_accept(id, NULL) : rdma_connect(id, NULL))
		die(server ? "rdma_accept" : "rdma_connect");
	for (uint32_t r = 1; r <= rounds; r++) {
		if (next <= KINDS && r == next * rounds / (KINDS + 1))
			kids[next] = spawn(next, id, rmr, rbuf), next++;
		if (!server) {
			fill(sbuf, r, 0);
			if (rdma_post_send(id, NULL, sbuf, MSG, smr, 0) || rdma_get_send_comp(id, &wc) <= 0 ||
			    wc.status)
				die("send");
		}
		if (rdma_get_recv_comp(id, &wc) <= 0 || wc.status || wc.byte_len != MSG)
			die("receive");
		fill(want, r, !server);
		if (memcmp(rbuf, want, MSG)) {
			fprintf(stderr, "forkxfer %s: message %u differs\n", side, r);
			return 1;
		}
		if (rdma_post_recv(id, NULL, rbuf, MSG, rmr))
			die("rdma_post_recv");
		if (server) {
			fill(sbuf, r, 1);
			if (rdma_post_send(id, NULL, sbuf, MSG, smr, 0) || rdma_get_send_comp(id, &wc) <= 0 ||
			    wc.status)
				die("echo");
		}
	}
	for (int k = 1; k <= KINDS; k++) {
		int st;

		if (kids[k] < 0) {
			fprintf(stderr, "forkxfer %s: child %d: system() failed\n", side, k);
			bad++;
		} else if (kids[k] > 0 && (waitpid(kids[k], &st, 0) != kids[k] || !WIFEXITED(st) ||
					   WEXITSTATUS(st))) {
			fprintf(stderr, "forkxfer %s: child %d ended with status %#x%s\n", side, k, st,
				WIFSIGNALED(st) && WTERMSIG(st) == SIGALRM ? " (it hung)" : "");
			bad++;
		}
	}
	printf("forkxfer %s: %u messages checked, %d forks (exit, exec, sleep, close-all, "
	       "parent's QP: EPERM, system) %s\n", side, rounds, KINDS, bad ? "FAILED" : "fine");
	return bad;
}

int main(int argc, char **argv)
{
	struct rdma_addrinfo hints = { .ai_port_space = RDMA_PS_TCP }, *ai;
	struct ibv_qp_init_attr qa = { .cap = { 2, 2, 1, 1, 0 }, .qp_type = IBV_QPT_RC,
				       .sq_sig_all = 1 };
	const char *addr = NULL, *port = NULL;
	struct rdma_cm_id *lid, *id;
	struct rdma_cm_event *ev;
	uint32_t rounds = 700;
	int opt, server = 0, dups = 0, last = -1, bad;

	while ((opt = getopt(argc, argv, "sc:p:n:D")) != -1) {
		switch (opt) {
		case 's': server = 1; break;
		case 'D': dups = 1; break;
		case 'c': addr = optarg; break;
		case 'p': port = optarg; break;
		case 'n': rounds = strtoul(optarg, NULL, 0); break;
		default: return 2;
		}
	}
	if (server == !!addr || !port)
		return 2;
	side = server ? "server" : "client";
	setvbuf(stdout, NULL, _IOLBF, 0);
	alarm(120);
	if (server)
		hints.ai_flags = RAI_PASSIVE;
	if (rdma_getaddrinfo(addr, port, &hints, &ai))
		die("rdma_getaddrinfo");
	if (server) {
		if (rdma_create_ep(&lid, ai, NULL, NULL) || rdma_listen(lid, 1))
			die("listen");
		printf("forkxfer server: listening\n");
		if (rdma_get_request(lid, &id))
			die("rdma_get_request");
	} else if (rdma_create_ep(&id, ai, NULL, NULL)) {
		die("rdma_create_ep");
	}
	if (rdma_create_qp(id, NULL, &qa))
		die("rdma_create_qp");
	if (dups)
		last = move_channel(id);
	bad = run(id, server, rounds);
	if (dups)
		channel_on(id, last, server);
	if (server) {
		/* the client's disconnect, on the parent's CM channel */
		if (rdma_get_cm_event(id->channel, &ev))
			die("rdma_get_cm_event");
		if (ev->event != RDMA_CM_EVENT_DISCONNECTED) {
			fprintf(stderr, "forkxfer server: %s instead of DISCONNECTED\n", rdma_event_str(ev->event));
			bad++;
		} else {
			printf("forkxfer server: DISCONNECTED\n");
		}
		rdma_ack_cm_event(ev);
	} else {
		rdma_disconnect(id);
	}
	return bad != 0;
}
