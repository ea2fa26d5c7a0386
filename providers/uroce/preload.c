// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * liburoce-preload.so, which `uroce run` preloads: completion channels for
 * uroce devices.
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
#include <unistd.h>

#include <uroce/provider_abi.h>

#define EXPORT __attribute__((visibility("default")))

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

static void *real(const char *name)
{
	return dlsym(RTLD_NEXT, name);
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
	int (*next)(struct ibv_comp_channel *) = real("ibv_destroy_comp_channel");
	struct keep **pp, *k = NULL;
	int ret;

	if (!next)
		return ENOSYS;
	ret = next(channel); /* EBUSY while CQs use it; else closes and frees */
	if (ret)
		return ret;
	pthread_mutex_lock(&lock);
	for (pp = &kept; *pp; pp = &(*pp)->next)
		if ((*pp)->channel == channel) {
			k = *pp;
			*pp = k->next;
			break;
		}
	pthread_mutex_unlock(&lock);
	if (k) {
		close(k->write_fd);
		free(k);
	}
	return 0;
}
