// SPDX-License-Identifier: GPL-2.0
/*
 * Memory for key material: fixed-size slots carved from mmap'd arenas that
 * are mlock'ed (best effort: RLIMIT_MEMLOCK may be small) and excluded from
 * core dumps.  One mapping per key object would cost a VMA per cached
 * inode and run into vm.max_map_count; arenas of 64 KiB do not.
 *
 * A pool belongs to a keyring and is reference counted: the keyring holds
 * one reference and every live slot another, so inode infos may outlive
 * the keyring they came from.
 */
#include "fscrypt_internal.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define ARENA_SIZE	(64 * 1024)

struct slot {
	struct slot *next;
};

struct arena {
	struct arena *next;
};

struct fscrypt_pool {
	pthread_mutex_t lock;
	size_t refs;
	struct arena *arenas;
	struct slot *free;
};

struct fscrypt_pool *fscrypt_pool_new(void)
{
	struct fscrypt_pool *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	if (pthread_mutex_init(&p->lock, NULL)) {
		free(p);
		return NULL;
	}
	p->refs = 1;
	return p;
}

static void pool_destroy(struct fscrypt_pool *p)
{
	struct arena *a, *n;

	for (a = p->arenas; a; a = n) {
		n = a->next;
		fscrypt_cleanse(a, ARENA_SIZE);
		(void)munlock(a, ARENA_SIZE);
		munmap(a, ARENA_SIZE);
	}
	pthread_mutex_destroy(&p->lock);
	free(p);
}

/* Called with the lock held. */
static int pool_grow(struct fscrypt_pool *p)
{
	uint8_t *base = mmap(NULL, ARENA_SIZE, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct arena *a;

	if (base == MAP_FAILED)
		return -ENOMEM;
	(void)mlock(base, ARENA_SIZE);
#ifdef MADV_DONTDUMP
	(void)madvise(base, ARENA_SIZE, MADV_DONTDUMP);
#endif
	a = (struct arena *)(void *)base;
	a->next = p->arenas;
	p->arenas = a;
	/* slot 0 holds the arena header */
	for (size_t off = ARENA_SIZE - FSCRYPT_SLOT_SIZE; off >= FSCRYPT_SLOT_SIZE;
	     off -= FSCRYPT_SLOT_SIZE) {
		struct slot *s = (struct slot *)(void *)(base + off);

		s->next = p->free;
		p->free = s;
	}
	return 0;
}

void *fscrypt_pool_alloc(struct fscrypt_pool *p)
{
	struct slot *s = NULL;

	pthread_mutex_lock(&p->lock);
	if (p->free || pool_grow(p) == 0) {
		s = p->free;
		p->free = s->next;
		p->refs++;
	}
	pthread_mutex_unlock(&p->lock);
	if (s)
		memset(s, 0, FSCRYPT_SLOT_SIZE);
	return s;
}

static void pool_unref_locked_and_unlock(struct fscrypt_pool *p)
{
	bool last = --p->refs == 0;

	pthread_mutex_unlock(&p->lock);
	if (last)
		pool_destroy(p);
}

void fscrypt_pool_free(struct fscrypt_pool *p, void *ptr)
{
	struct slot *s = ptr;

	if (!ptr)
		return;
	fscrypt_cleanse(ptr, FSCRYPT_SLOT_SIZE);
	pthread_mutex_lock(&p->lock);
	s->next = p->free;
	p->free = s;
	pool_unref_locked_and_unlock(p);
}

int fscrypt_pool_lock(struct fscrypt_pool *p)
{
	int err = 0;

	pthread_mutex_lock(&p->lock);
	for (struct arena *a = p->arenas; a; a = a->next)
		if (mlock(a, ARENA_SIZE) && !err)
			err = -errno;
	pthread_mutex_unlock(&p->lock);
	return err;
}

void fscrypt_pool_put(struct fscrypt_pool *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	pool_unref_locked_and_unlock(p);
}
