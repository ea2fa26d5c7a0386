// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * liburoce-preload.so, which `uroce run` preloads: the verbs libibverbs
 * does itself through the kernel's uverbs fd, with no provider hook, done
 * for uroce devices: completion channels, and a clean refusal of
 * ibv_import_device (at the end of this file).
 *
 * libibverbs makes a completion channel by writing a command to the
 * kernel's uverbs fd; there is no provider hook.  We define
 * ibv_create_comp_channel / ibv_destroy_comp_channel ahead of libibverbs:
 * for a uroce context the channel's fd is the read end of a pipe, on which
 * the provider writes the 8-byte CQ handles that ibv_get_cq_event() reads
 * (struct ib_uverbs_comp_event_desc).  The write end we keep here only
 * holds the pipe open (a pipe without writers reads as end of file); the
 * provider opens its own through /proc/self/fd.  Any other provider's
 * context goes to the real functions.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <linux/kcmp.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <uroce/provider_abi.h>

#define EXPORT __attribute__((visibility("default")))

/* The provider looks for this symbol to tell whether channels will work. */
EXPORT const int uroce_preload_active = 1;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct keep {
	struct keep *next;
	struct ibv_comp_channel *channel;
	int write_fd;
} *kept;

static int is_uroce(struct ibv_context *context)
{
	const struct verbs_device *vdev = (const struct verbs_device *)context->device;

	return vdev->ops && vdev->ops->name && !strcmp(vdev->ops->name, "uroce");
}

/* NAME in HANDLE at libibverbs' current version.  ibv_open_device and
 * ibv_close_device (and others) also have an IBVERBS_1.0 compat symbol,
 * which takes the old struct ibv_device_1_0.  An unversioned dlsym gets
 * the default version from glibc 2.36 on, but the 1.0 one from older
 * glibc: Ubuntu 22.04's (2.35) ibv_devinfo crashed in verbs_open_device.
 * IBVERBS_1.1 first, then the name's only version. */
static void *ibverbs_sym(void *handle, const char *name)
{
	void *fn = dlvsym(handle, name, "IBVERBS_1.1");

	return fn ? fn : dlsym(handle, name);
}

/* libibverbs' own function: next in the global scope, or (when a program
 * such as Python loaded libibverbs with RTLD_LOCAL) from its handle. */
static void *real(const char *name)
{
	void *fn = ibverbs_sym(RTLD_NEXT, name);

	if (!fn) {
		void *lib = dlopen("libibverbs.so.1", RTLD_NOW | RTLD_NOLOAD);

		if (lib) {
			fn = ibverbs_sym(lib, name);
			dlclose(lib);
		}
	}
	return fn;
}

/* Take CHANNEL's kept write end off our list; -1 if it is not ours. */
static int unkeep(struct ibv_comp_channel *channel)
{
	struct keep **pp, *k = NULL;
	int fd = -1;

	pthread_mutex_lock(&lock);
	for (pp = &kept; *pp; pp = &(*pp)->next)
		if ((*pp)->channel == channel) {
			k = *pp;
			*pp = k->next;
			break;
		}
	pthread_mutex_unlock(&lock);
	if (k) {
		fd = k->write_fd;
		free(k);
	}
	return fd;
}

EXPORT struct ibv_comp_channel *ibv_create_comp_channel(struct ibv_context *context)
{
	struct ibv_comp_channel *(*next)(struct ibv_context *);
	struct ibv_comp_channel *ch;
	struct keep *k;
	int fds[2];

	if (!is_uroce(context)) {
		next = real("ibv_create_comp_channel");
		if (!next) {
			errno = ENOSYS;
			return NULL;
		}
		return next(context);
	}
	ch = calloc(1, sizeof(*ch));
	k = calloc(1, sizeof(*k));
	if (!ch || !k || pipe2(fds, O_CLOEXEC)) {
		free(ch);
		free(k);
		errno = errno ? errno : ENOMEM;
		return NULL;
	}
	ch->context = context;
	ch->fd = fds[0];
	ch->refcnt = 0;
	k->channel = ch;
	k->write_fd = fds[1];
	pthread_mutex_lock(&lock);
	k->next = kept;
	kept = k;
	pthread_mutex_unlock(&lock);
	return ch;
}

EXPORT int ibv_destroy_comp_channel(struct ibv_comp_channel *channel)
{
	int (*next)(struct ibv_comp_channel *);
	struct ibv_context *context = channel->context;
	int write_fd;

	if (!is_uroce(context)) {
		next = real("ibv_destroy_comp_channel");
		return next ? next(channel) : ENOSYS;
	}
	/* As libibverbs does: not while CQs use it (verbs_init_cq counts them). */
	pthread_mutex_lock(&context->mutex);
	if (channel->refcnt) {
		pthread_mutex_unlock(&context->mutex);
		return EBUSY;
	}
	write_fd = unkeep(channel);
	if (write_fd >= 0)
		close(write_fd);
	close(channel->fd);
	free(channel);
	pthread_mutex_unlock(&context->mutex);
	return 0;
}

/*
 * Importing a context by its command fd (ibv_import_device) shares kernel
 * objects between contexts; a uroce context has no kernel objects, and its
 * cmd_fd is an eventfd (see neuter_cmd_fd in provider.c), which libibverbs
 * would refuse with a misleading EINVAL.  We remember the cmd_fd of every
 * uroce context this process opens and refuse its import with EOPNOTSUPP,
 * the answer of a provider without import_context.  The fd to import is
 * usually a dup() of the context's: kcmp(2) tells whether two fds share
 * one open file.
 */
static int same_file(int a, int b)
{
	pid_t pid = getpid();

	return a == b || syscall(SYS_kcmp, pid, pid, KCMP_FILE, a, b) == 0;
}

static struct opened {
	struct opened *next;
	struct ibv_context *context;
} *opened;

EXPORT struct ibv_context *ibv_open_device(struct ibv_device *device)
{
	struct ibv_context *(*next)(struct ibv_device *) = real("ibv_open_device");
	struct ibv_context *ctx;
	struct opened *o;

	if (!next) {
		errno = ENOSYS;
		return NULL;
	}
	ctx = next(device);
	if (ctx && is_uroce(ctx) && (o = calloc(1, sizeof(*o)))) {
		o->context = ctx;
		pthread_mutex_lock(&lock);
		o->next = opened;
		opened = o;
		pthread_mutex_unlock(&lock);
	}
	return ctx;
}

EXPORT int ibv_close_device(struct ibv_context *context)
{
	int (*next)(struct ibv_context *) = real("ibv_close_device");
	struct opened **pp, *o = NULL;

	pthread_mutex_lock(&lock);
	for (pp = &opened; *pp; pp = &(*pp)->next)
		if ((*pp)->context == context) {
			o = *pp;
			*pp = o->next;
			break;
		}
	pthread_mutex_unlock(&lock);
	free(o);
	return next ? next(context) : ENOSYS;
}

EXPORT struct ibv_context *ibv_import_device(int cmd_fd)
{
	struct ibv_context *(*next)(int) = real("ibv_import_device");
	struct opened *o;
	int ours = 0;

	pthread_mutex_lock(&lock);
	for (o = opened; o; o = o->next)
		ours |= same_file(o->context->cmd_fd, cmd_fd);
	pthread_mutex_unlock(&lock);
	if (ours || !next) {
		errno = ours ? EOPNOTSUPP : ENOSYS;
		return NULL;
	}
	return next(cmd_fd);
}
