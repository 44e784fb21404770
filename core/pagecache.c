// SPDX-License-Identifier: GPL-2.0
/*
 * The page cache of file data written but not yet written back (-o
 * writeback): 4 KiB pages keyed by (inode, block index), per inode in an
 * array sorted by index (writes mostly append), and the mount's list of
 * inodes with dirty pages, oldest first, which the flusher walks.  Only
 * dirty pages are kept: the kernel's own page cache holds what was read.
 * Memory is bounded by the dirty page count (-o dirty_bytes=); what is
 * over it is written back by the writer itself (writeback.c).
 *
 * An inode's pages change under its write lock and are read under its
 * read lock; the list and the counts are pc->lock's.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "f2fs.h"

struct f2fs_pagecache *f2fs_pc_create(uint64_t dirty_bytes, struct f2fs_slab_cache *slabs)
{
	struct f2fs_pagecache *pc = calloc(1, sizeof(*pc));

	if (!pc)
		return NULL;
	pthread_mutex_init(&pc->lock, NULL);
	f2fs_block_pool_init(&pc->pool);
	pc->pool.source = slabs;
	pc->limit = dirty_bytes / F2FS_BLKSIZE;
	if (pc->limit < 256)
		pc->limit = 256;	/* one FUSE write always fits */
	/* the pages written back are the next ones dirtied: no page faults while
	 * a writer streams through the cache (f2fs_pc_trim gives them back) */
	f2fs_block_pool_keep(&pc->pool, pc->limit);
	return pc;
}

void f2fs_pc_destroy(struct f2fs_pagecache *pc)
{
	if (!pc)
		return;
	f2fs_block_pool_destroy(&pc->pool);
	pthread_mutex_destroy(&pc->lock);
	free(pc);
}

uint64_t f2fs_pc_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* The slot of index in ip's array: where it is, or where it would go. */
static uint32_t slot(const struct f2fs_inode_pages *ip, uint64_t index)
{
	uint32_t lo = 0, hi = ip->nr;

	/* appends first: the common case costs one comparison */
	if (ip->nr && ip->v[ip->nr - 1].index < index)
		return ip->nr;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (ip->v[mid].index < index)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

uint8_t *f2fs_pc_find(const struct f2fs_inode_pages *ip, uint64_t index)
{
	uint32_t s;

	if (!ip)
		return NULL;
	s = slot(ip, index);
	return s < ip->nr && ip->v[s].index == index ? ip->v[s].data : NULL;
}

static void list_del(struct f2fs_pagecache *pc, struct f2fs_inode_pages *ip)
{
	if (ip->prev)
		ip->prev->next = ip->next;
	else
		pc->head = ip->next;
	if (ip->next)
		ip->next->prev = ip->prev;
	else
		pc->tail = ip->prev;
	ip->prev = ip->next = NULL;
}

uint8_t *f2fs_pc_get(struct f2fs_pagecache *pc, struct f2fs_inode_pages **ipp, uint32_t ino,
		     uint64_t index, bool *created)
{
	struct f2fs_inode_pages *ip = *ipp;
	uint8_t *data;
	uint32_t s;

	*created = false;
	if (!ip) {
		ip = calloc(1, sizeof(*ip));
		if (!ip)
			return NULL;
		ip->ino = ino;
	}
	s = slot(ip, index);
	if (s < ip->nr && ip->v[s].index == index)
		return ip->v[s].data;
	if (ip->nr == ip->cap) {
		uint32_t cap = ip->cap ? ip->cap * 2 : 64;
		struct f2fs_page *v = realloc(ip->v, sizeof(*v) * cap);

		if (!v)
			goto nomem;
		ip->v = v;
		ip->cap = cap;
	}
	data = f2fs_block_get(&pc->pool);
	if (!data)
		goto nomem;
	memmove(ip->v + s + 1, ip->v + s, sizeof(*ip->v) * (ip->nr - s));
	ip->v[s] = (struct f2fs_page){ index, data };
	ip->nr++;
	*created = true;
	pthread_mutex_lock(&pc->lock);
	pc->nr_dirty++;
	pc->dirtied++;
	if (!*ipp) {
		/* a newly dirty inode goes to the end: the list stays oldest first */
		ip->dirtied_ms = f2fs_pc_now_ms();
		ip->prev = pc->tail;
		if (pc->tail)
			pc->tail->next = ip;
		else
			pc->head = ip;
		pc->tail = ip;
		pc->nr_inodes++;
	}
	pthread_mutex_unlock(&pc->lock);
	*ipp = ip;
	return data;
nomem:
	if (!*ipp) {
		free(ip->v);
		free(ip);
	}
	return NULL;
}

struct f2fs_inode_pages *f2fs_pc_detach(struct f2fs_pagecache *pc,
					struct f2fs_inode_pages **ipp)
{
	struct f2fs_inode_pages *ip = *ipp;

	if (!ip)
		return NULL;
	pthread_mutex_lock(&pc->lock);
	list_del(pc, ip);
	pc->nr_inodes--;
	pthread_mutex_unlock(&pc->lock);
	*ipp = NULL;
	return ip;
}

void f2fs_pc_free(struct f2fs_pagecache *pc, struct f2fs_inode_pages *ip, bool written)
{
	if (!ip)
		return;
	for (uint32_t i = 0; i < ip->nr; i++)
		f2fs_block_put(&pc->pool, ip->v[i].data);
	pthread_mutex_lock(&pc->lock);
	pc->nr_dirty -= ip->nr;
	if (written)
		pc->written += ip->nr;
	else
		pc->dropped += ip->nr;
	pthread_mutex_unlock(&pc->lock);
	free(ip->v);
	free(ip);
}

bool f2fs_pc_drop_range(struct f2fs_pagecache *pc, struct f2fs_inode_pages **ipp,
			uint64_t from, uint64_t to)
{
	struct f2fs_inode_pages *ip = *ipp;
	uint32_t s, e;

	if (!ip || from >= to)
		return false;
	s = slot(ip, from);
	for (e = s; e < ip->nr && ip->v[e].index < to; e++)
		f2fs_block_put(&pc->pool, ip->v[e].data);
	memmove(ip->v + s, ip->v + e, sizeof(*ip->v) * (ip->nr - e));
	ip->nr -= e - s;
	pthread_mutex_lock(&pc->lock);
	pc->nr_dirty -= e - s;
	pc->dropped += e - s;
	pthread_mutex_unlock(&pc->lock);
	if (ip->nr)
		return false;
	f2fs_pc_free(pc, f2fs_pc_detach(pc, ipp), false);
	return true;
}

bool f2fs_pc_oldest(struct f2fs_pagecache *pc, uint64_t expire_ms, uint32_t *ino)
{
	bool due = false;

	pthread_mutex_lock(&pc->lock);
	if (pc->head && (pc->nr_dirty > pc->limit / 2 ||
			 f2fs_pc_now_ms() - pc->head->dirtied_ms >= expire_ms)) {
		*ino = pc->head->ino;
		due = true;
	}
	pthread_mutex_unlock(&pc->lock);
	return due;
}

bool f2fs_pc_over_limit(struct f2fs_pagecache *pc)
{
	bool over;

	pthread_mutex_lock(&pc->lock);
	over = pc->nr_dirty > pc->limit;
	pthread_mutex_unlock(&pc->lock);
	return over;
}

void f2fs_pc_inodes(struct f2fs_pagecache *pc, uint32_t *inos, uint32_t *n)
{
	uint32_t i = 0;

	pthread_mutex_lock(&pc->lock);
	for (struct f2fs_inode_pages *ip = pc->head; ip && i < *n; ip = ip->next)
		inos[i++] = ip->ino;
	pthread_mutex_unlock(&pc->lock);
	*n = i;
}

void f2fs_pc_relist(struct f2fs_pagecache *pc, struct f2fs_inode_pages *ip)
{
	pthread_mutex_lock(&pc->lock);
	ip->prev = NULL;
	ip->next = pc->head;
	if (pc->head)
		pc->head->prev = ip;
	else
		pc->tail = ip;
	pc->head = ip;
	pc->nr_inodes++;
	pthread_mutex_unlock(&pc->lock);
}

void f2fs_pc_trim(struct f2fs_pagecache *pc)
{
	if (pc && !f2fs_pc_has_dirty(pc))
		f2fs_block_pool_trim(&pc->pool);
}

bool f2fs_pc_has_dirty(struct f2fs_pagecache *pc)
{
	bool any;

	if (!pc)
		return false;
	pthread_mutex_lock(&pc->lock);
	any = pc->nr_dirty > 0;
	pthread_mutex_unlock(&pc->lock);
	return any;
}

void f2fs_pc_overlay(const struct f2fs_inode_pages *ip, uint8_t *buf, size_t len, uint64_t off)
{
	uint64_t end = off + len;

	if (!ip || !len)
		return;
	for (uint32_t s = slot(ip, off / F2FS_BLKSIZE); s < ip->nr; s++) {
		uint64_t b0 = ip->v[s].index * F2FS_BLKSIZE, o0, o1;

		if (b0 >= end)
			break;
		o0 = F2FS_MAX(off, b0);
		o1 = F2FS_MIN(end, b0 + F2FS_BLKSIZE);
		memcpy(buf + (o0 - off), ip->v[s].data + (o0 - b0), (size_t)(o1 - o0));
	}
}
