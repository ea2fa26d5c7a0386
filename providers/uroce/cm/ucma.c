// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * UCMA files, ids and the event queue, and the write() entry point that
 * runs one command (the kernel's ucma_write, drivers/infiniband/core/ucma.c).
 * The provider hands these entry points to liburoce-preload.so when it loads.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "cm/ucma.h"
#include "cm/cm.h"
#include "cm/gsi.h"
#include "engine/engine.h"
#include "knob/knob.h"
#include "trace/trace.h"

pthread_mutex_t ucma_lock = PTHREAD_MUTEX_INITIALIZER;

static struct ucma_file *files;
/* Ids are unique in the process.  Beside the kernel's rdma_cm (the mux,
 * docs/cm.md) the kernel numbers the ids it may take over (kernel_ids,
 * below UROCE_UCMA_OWN_BASE), and ours are own_base and up. */
static struct ucma_slots ids, kernel_ids;
static uint32_t own_base;
static __thread uint32_t want_id;  /* + 1: the id ucma_ctx_new gives next */

/* Where FD stands in F's descriptors, or -1. */
static int file_fd_index(const struct ucma_file *f, int fd)
{
	for (unsigned i = 0; i < f->nfds; i++)
		if (f->fds[i] == fd)
			return (int)i;
	return -1;
}

struct ucma_file *ucma_file_find(int fd)
{
	for (struct ucma_file *f = files; f; f = f->next)
		if (file_fd_index(f, fd) >= 0)
			return f;
	return NULL;
}

/* FD is one more descriptor of F: 0, or -ENOMEM. */
static int file_fd_add(struct ucma_file *f, int fd)
{
	if (f->nfds == f->fds_cap) {
		unsigned cap = f->fds_cap ? 2 * f->fds_cap : 2;
		int *p = realloc(f->fds, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		f->fds = p;
		f->fds_cap = cap;
	}
	f->fds[f->nfds++] = fd;
	return 0;
}

/* ---- handles ------------------------------------------------------------- */

int ucma_slot_add(struct ucma_slots *t, void *obj, uint32_t *id)
{
	uint32_t i;

	for (i = 0; i < t->n && t->p[i]; i++)
		;
	if (i == t->n) {
		uint32_t n = t->n ? 2 * t->n : 64;
		void **p = realloc(t->p, n * sizeof(*p));

		if (!p)
			return -ENOMEM;
		memset(p + t->n, 0, (n - t->n) * sizeof(*p));
		t->p = p;
		t->n = n;
	}
	t->p[i] = obj;
	*id = i;
	return 0;
}

void *ucma_slot_get(const struct ucma_slots *t, uint32_t id)
{
	return id < t->n ? t->p[id] : NULL;
}

void ucma_slot_del(struct ucma_slots *t, uint32_t id)
{
	if (id < t->n)
		t->p[id] = NULL;
}

/* ---- ids ------------------------------------------------------------------ */

/* Put OBJ at index ID of T, growing it; 0 or -ENOMEM. */
static int slot_put(struct ucma_slots *t, void *obj, uint32_t id)
{
	if (id >= t->n) {
		uint32_t n = t->n ? t->n : 64;
		void **p;

		while (n <= id)
			n *= 2;
		p = realloc(t->p, n * sizeof(*p));
		if (!p)
			return -ENOMEM;
		memset(p + t->n, 0, (n - t->n) * sizeof(*p));
		t->p = p;
		t->n = n;
	}
	if (t->p[id])
		return -EEXIST;
	t->p[id] = obj;
	return 0;
}

struct ucma_ctx *ucma_ctx_new(struct ucma_file *f)
{
	struct ucma_ctx *ctx = calloc(1, sizeof(*ctx));
	int ret;

	if (!ctx)
		return NULL;
	if (want_id) {
		ctx->id = want_id - 1;
		ret = ctx->id < UROCE_UCMA_OWN_BASE ? slot_put(&kernel_ids, ctx, ctx->id) : -EINVAL;
	} else {
		ret = ucma_slot_add(&ids, ctx, &ctx->id);
		ctx->id += own_base;
	}
	if (ret) {
		free(ctx);
		return NULL;
	}
	ctx->file = f;
	return ctx;
}

struct ucma_ctx *ucma_ctx_find(uint32_t id)
{
	return id >= own_base ? ucma_slot_get(&ids, id - own_base) : ucma_slot_get(&kernel_ids, id);
}

static void ctx_forget(uint32_t id)
{
	if (id >= own_base)
		ucma_slot_del(&ids, id - own_base);
	else
		ucma_slot_del(&kernel_ids, id);
}

/* Take EV off F's queue (it is there); the eventfd count follows. */
static void event_unlink(struct ucma_file *f, struct ucma_event *ev)
{
	struct ucma_event **pp;
	eventfd_t v;

	for (pp = &f->head; *pp != ev; pp = &(*pp)->next)
		;
	*pp = ev->next;
	if (f->tail == &ev->next)
		f->tail = pp;
	if (eventfd_read(f->efd, &v) < 0)
		(void)0;
}

uint32_t ucma_ctx_free(struct ucma_ctx *ctx)
{
	struct ucma_file *f = ctx->file;
	struct ucma_event *ev, *next;
	uint32_t reported = ctx->events_reported;

	conn_destroy(ctx);
	/* A CONNECT_REQUEST id going before its event was taken: the event
	 * goes too (the listener is not charged for it). */
	for (ev = f->head; ev; ev = next) {
		next = ev->next;
		if (ev->conn_req == ctx) {
			event_unlink(f, ev);
			ev->ctx->backlog++;
			free(ev);
		}
	}
	/* Events not yet reported go; a listener's undelivered
	 * CONNECT_REQUEST ids go with them (ucma_cleanup_ctx_events). */
	for (ev = f->head; ev; ev = next) {
		next = ev->next;
		if (ev->ctx != ctx)
			continue;
		/* A poll() that this event woke finds nothing now, and a blocking
		 * GET_EVENT after it waits for the next event, as on the kernel;
		 * said here because programs that poll the channel beside an
		 * exit eventfd (rping since rdma-core 61) can hang so. */
		if (uroce_debug_cm)
			fprintf(stderr, "uroce cm: id %u destroyed with its event %u untaken\n", ctx->id,
				ev->resp.event);
		event_unlink(f, ev);
		if (ev->conn_req)
			ucma_ctx_free(ev->conn_req);
		free(ev);
	}
	ucma_mcast_free_all(ctx);
	ctx_forget(ctx->id);
	free(ctx);
	return reported;
}

void ucma_event_drop_mc(struct ucma_mcast *mc)
{
	struct ucma_file *f = mc->ctx->file;
	struct ucma_event *ev, *next;

	for (ev = f->head; ev; ev = next) {
		next = ev->next;
		if (ev->mc == mc) {
			event_unlink(f, ev);
			free(ev);
		}
	}
}

/* ---- events ---------------------------------------------------------------- */

struct ucma_event *ucma_event_queue(struct ucma_ctx *ctx, uint32_t event, int32_t status)
{
	struct ucma_file *f = ctx->file;
	struct ucma_event *ev;

	/* An id from a CONNECT_REQUEST reports nothing until the user takes
	 * it with ACCEPT (ucma_event_handler: "ctx->uid" check). */
	if (!ctx->uid && event != RDMA_CM_EVENT_CONNECT_REQUEST)
		return NULL;
	ev = calloc(1, sizeof(*ev));
	if (!ev)
		return NULL;
	ev->ctx = ctx;
	ev->resp.uid = ctx->uid;
	ev->resp.id = ctx->id;
	ev->resp.event = event;
	ev->resp.status = (uint32_t)status;
	ev->next = NULL;
	*f->tail = ev;
	f->tail = &ev->next;
	UROCE_TRACE(uroce_trace_cm_event(ctx->id, ctx->conn.local_qpn, event, status));
	if (eventfd_write(f->efd, 1) < 0)
		(void)0;
	if (uroce_debug_cm > 1)
		fprintf(stderr, "uroce cm[%d %.6f]: event %u status %d on id %u\n", (int)getpid(), uroce_cm_now_ns() / 1e9,
			event, status, ctx->id);
	return ev;
}

/* F stays valid while the caller counts as one of its users (ucma_write),
 * also if another thread closes the application's fd meanwhile: like a
 * kernel file held by a blocked read, the wait goes on (on our own
 * descriptor of the eventfd) and ends only with an event. */
int ucma_event_take(struct ucma_file *f, struct rdma_ucm_event_resp *out)
{
	for (;;) {
		struct pollfd pfd = { .fd = f->efd, .events = POLLIN };
		struct ucma_event *ev;

		pthread_mutex_lock(&ucma_lock);
		ev = f->head;
		if (ev) {
			event_unlink(f, ev);
			*out = ev->resp;
			ev->ctx->events_reported++;
			if (ev->mc)
				ev->mc->events_reported++;
			if (ev->resp.event == RDMA_CM_EVENT_CONNECT_REQUEST)
				ev->ctx->backlog++;
			if (ev->conn_req)
				ev->conn_req->conn.pending_req = false;
			pthread_mutex_unlock(&ucma_lock);
			free(ev);
			return 0;
		}
		pthread_mutex_unlock(&ucma_lock);
		if (f->moved)
			return -EREMCHG; /* the fd is the kernel's file now */
		/* O_NONBLOCK belongs to the open file description, which
		 * efd shares with the application's fd. */
		if (fcntl(f->efd, F_GETFL) & O_NONBLOCK)
			return -EAGAIN;
		/* A signal interrupts the wait, as wait_event_interruptible does. */
		if (poll(&pfd, 1, -1) < 0 && errno == EINTR)
			return -EINTR;
	}
}

/* ---- the file: open, write, close ---------------------------------------------- */

int uroce_debug_cm;

static int ucma_open(int flags)
{
	struct ucma_file *f = calloc(1, sizeof(*f));
	int fd;

	if (!f) {
		errno = ENOMEM;
		return -1;
	}
	uroce_debug_cm = uroce_knob_on(UROCE_KNOB_DEBUG) ? 2 :
			 (int)uroce_knob_num(UROCE_KNOB_CM_DEBUG);
	fd = eventfd(0, EFD_SEMAPHORE | (flags & O_NONBLOCK ? EFD_NONBLOCK : 0) |
			(flags & O_CLOEXEC ? EFD_CLOEXEC : 0));
	if (fd < 0) {
		free(f);
		return -1;
	}
	f->efd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (f->efd < 0 || file_fd_add(f, fd) || conn_start()) {
		int err = errno;

		if (f->efd >= 0)
			close(f->efd);
		close(fd);
		free(f->fds);
		free(f);
		errno = err ? err : ENOMEM;
		return -1;
	}
	f->tail = &f->head;
	pthread_mutex_lock(&ucma_lock);
	f->next = files;
	files = f;
	pthread_mutex_unlock(&ucma_lock);
	return fd;
}

/* The file's last user is gone: destroy its ids, as ucma_close does
 * (connections are left with a DREQ or REJ by conn_destroy).  Lock held. */
static void file_release(struct ucma_file *f)
{
	const struct ucma_slots *tables[] = { &ids, &kernel_ids };

	for (int t = 0; t < 2; t++)
		for (uint32_t i = 0; i < tables[t]->n; i++) {
			struct ucma_ctx *ctx = tables[t]->p[i];

			if (ctx && ctx->file == f)
				ucma_ctx_free(ctx);
		}
}

static void file_free(struct ucma_file *f)
{
	if (!f)
		return;
	close(f->efd);
	free(f->fds);
	free(f);
}

static ssize_t ucma_write(int fd, const void *buf, size_t len)
{
	union {
		uint8_t bytes[512];
		uint64_t align;
	} in;
	struct rdma_ucm_cmd_hdr hdr;
	const struct ucma_cmd *c;
	struct ucma_file *f;
	int ret;

	if (len < sizeof(hdr)) {
		errno = EINVAL;
		return -1;
	}
	memcpy(&hdr, buf, sizeof(hdr));
	if (hdr.in + sizeof(hdr) > len) {
		errno = EINVAL;
		return -1;
	}
	c = ucma_cmd_lookup(hdr.cmd);
	if (!c) {
		errno = ENOSYS;
		return -1;
	}
	/* A shorter command than ours reads as zeros beyond its end; a
	 * longer one (a newer librdmacm) keeps the fields we know. */
	memset(&in, 0, sizeof(in));
	memcpy(in.bytes, (const uint8_t *)buf + sizeof(hdr),
	       hdr.in < c->in_len ? hdr.in : c->in_len);
	if (c->out_len && hdr.out < c->out_len && hdr.cmd != RDMA_USER_CM_CMD_GET_EVENT) {
		errno = ENOSPC;
		return -1;
	}
	pthread_mutex_lock(&ucma_lock);
	f = ucma_file_find(fd);
	if (f)
		f->users++;
	pthread_mutex_unlock(&ucma_lock);
	if (!f) {
		errno = EBADF;
		return -1;
	}
	/* The application turns to the CM: what its polls held goes. */
	uroce_engine_flush_held_all();
	ret = c->fn(f, in.bytes, hdr.out);
	pthread_mutex_lock(&ucma_lock);
	if (--f->users || !f->closed)
		f = NULL;
	else
		file_release(f);
	pthread_mutex_unlock(&ucma_lock);
	file_free(f);
	conn_flush_puts();
	if (uroce_debug_cm > 1)
		fprintf(stderr, "uroce cm[%d %.6f]: %s -> %d\n", (int)getpid(), uroce_cm_now_ns() / 1e9, c->name, ret);
	if (ret < 0) {
		errno = -ret;
		return -1;
	}
	return (ssize_t)len;
}

/* NEWFD is a dup of OLDFD (dup, dup2, dup3, F_DUPFD): one more
 * descriptor of the same file, as the kernel's dup takes a reference on
 * the open file.  The caller has already let go of whatever NEWFD was
 * (ucma_close). */
static int ucma_dup(int oldfd, int newfd)
{
	struct ucma_file *f;
	int ret = -EBADF;

	pthread_mutex_lock(&ucma_lock);
	f = ucma_file_find(oldfd);
	if (f)
		ret = file_fd_add(f, newfd);
	pthread_mutex_unlock(&ucma_lock);
	if (ret) {
		errno = -ret;
		return -1;
	}
	return 0;
}

/* close() of one of the application's fds.  The file goes with its last
 * descriptor.  A command still running on it (a GET_EVENT blocked in
 * another thread) keeps it, as the kernel's file stays open while a
 * system call uses it: that command ends normally and the last user
 * releases the file.  The fd number is free at once.  MOVED: the mux
 * gives the file's (only) fd to the kernel's file; a blocked GET_EVENT
 * is woken to write again there. */
static void file_close(int fd, bool moved)
{
	struct ucma_file *f, **pp;
	int i = -1;

	pthread_mutex_lock(&ucma_lock);
	for (pp = &files; *pp && (i = file_fd_index(*pp, fd)) < 0; pp = &(*pp)->next)
		;
	f = *pp;
	if (f) {
		f->fds[i] = f->fds[--f->nfds];
		if (f->nfds) {
			f = NULL;
		} else {
			*pp = f->next;
			f->moved = moved;
			if (f->users) {
				f->closed = true;
				/* wake a blocked GET_EVENT: it sees MOVED */
				if (moved && eventfd_write(f->efd, 1) < 0)
					(void)0;
				f = NULL;
			} else {
				file_release(f);
			}
		}
	}
	pthread_mutex_unlock(&ucma_lock);
	file_free(f);
	conn_flush_puts();
}

static void ucma_close(int fd)
{
	file_close(fd, false);
}

/* The mux (docs/cm.md): the kernel's file takes FD over. */
static void ucma_detach(int fd)
{
	file_close(fd, true);
}

static void ucma_mux(void)
{
	pthread_mutex_lock(&ucma_lock);
	own_base = UROCE_UCMA_OWN_BASE;
	pthread_mutex_unlock(&ucma_lock);
}

static ssize_t ucma_write_as(int fd, const void *buf, size_t len, uint32_t id)
{
	ssize_t ret;

	want_id = id + 1;
	ret = ucma_write(fd, buf, len);
	want_id = 0;
	return ret;
}

static const struct uroce_ucma_ops ops = {
	.open = ucma_open,
	.write = ucma_write,
	.close = ucma_close,
	.dup = ucma_dup,
	.mux = ucma_mux,
	.write_as = ucma_write_as,
	.detach = ucma_detach,
	.route = ucma_route,
};

/* A forked child keeps nothing of its parent's CM (docs/fork.md).  The
 * parent's files, ids, connections and events are the parent's: the
 * preload refuses the child's writes on the inherited rdma_cm fds, and a
 * close() of one closes only the descriptor, so no DREQ, REJ or port
 * release ever leaves a child for the parent's connections.  Locks are
 * free again, whoever held them at the fork; the timer thread and QP 1
 * are started anew when the child opens a file of its own.  The memory
 * of the parent's state stays allocated, unreferenced.  Stores only
 * (async-signal-safe), in the child of any thread. */
static void ucma_fork_child(void)
{
	static const pthread_mutex_t unlocked = PTHREAD_MUTEX_INITIALIZER;

	files = NULL;
	memset(&ids, 0, sizeof(ids));
	memset(&kernel_ids, 0, sizeof(kernel_ids));
	ucma_lock = unlocked;
	ucma_mcast_fork_child();
	conn_fork_child();
	conn_timer_fork_child();
	uroce_gsi_fork_child();
	uroce_gsi_reaper_fork_child();
	uroce_cm_ports_fork_child();
}

/* Called from the provider's constructor: offer the rdma_cm device if
 * liburoce-preload.so is there to route librdmacm's calls to it. */
void uroce_ucma_register(void)
{
	pthread_atfork(NULL, NULL, ucma_fork_child);
	uroce_preload_set_ucma_fn set = (uroce_preload_set_ucma_fn)dlsym(RTLD_DEFAULT,
									 "uroce_preload_set_ucma");

	if (set)
		set(&ops);
}

/* Move CTX, with its queued events, to file TO (MIGRATE_ID). */
int ucma_ctx_migrate(struct ucma_ctx *ctx, struct ucma_file *to)
{
	struct ucma_file *from = ctx->file;
	struct ucma_event *ev, *next;

	for (ev = from->head; ev; ev = next) {
		next = ev->next;
		if (ev->ctx != ctx)
			continue;
		event_unlink(from, ev);
		ev->next = NULL;
		*to->tail = ev;
		to->tail = &ev->next;
		if (eventfd_write(to->efd, 1) < 0)
			(void)0;
		if (ev->conn_req)
			ev->conn_req->file = to;
	}
	ctx->file = to;
	return 0;
}

void ucma_for_each_ctx(void (*fn)(struct ucma_ctx *ctx, void *arg), void *arg)
{
	for (uint32_t i = 0; i < ids.n; i++)
		if (ids.p[i])
			fn(ids.p[i], arg);
	for (uint32_t i = 0; i < kernel_ids.n; i++)
		if (kernel_ids.p[i])
			fn(kernel_ids.p[i], arg);
}
