// SPDX-License-Identifier: GPL-2.0
/*
 * Bounded LRU cache of node and meta blocks, keyed by block address.
 *
 * Lookups copy the block out, so callers never hold a reference into the
 * cache and eviction needs no reference counting.  A 4 KiB memcpy is far
 * cheaper than the FUSE round trip that triggered it.  The cache is split
 * into shards by address so parallel readers rarely share a lock.  The
 * blocks themselves come from a block pool (2 MiB slabs, huge pages where
 * the OS gives them) that keeps its slabs up to the cache's size: a cold
 * walk filling the cache faults in a page per 2 MiB, not one per block.
 */
#include <stdlib.h>
#include <string.h>

#include "f2fs.h"

#define CACHE_SHARDS 16
#define RA_CHUNK 512	/* blocks read ahead into one buffer (2 MiB), kept for the next */

struct cache_entry {
	uint32_t blkaddr;
	struct cache_entry *hnext;
	struct cache_entry *prev, *next;	/* LRU, most recent at head */
	uint8_t *data;				/* a block of the pool */
};

struct cache_shard {
	pthread_mutex_t lock;
	struct cache_entry **hash;
	uint32_t hash_size;			/* power of two, 1 << hash_bits */
	uint32_t hash_bits;
	struct cache_entry *head, *tail;
	uint32_t nr, max;
	uint64_t hits, misses;
};

struct f2fs_cache {
	struct cache_shard shard[CACHE_SHARDS];
	struct f2fs_block_pool pool;		/* the entries' blocks */
	struct f2fs_buf_stash ra_bufs;		/* read-ahead buffers, RA_CHUNK blocks */
};

/*
 * Fibonacci hashing, from the product's high bits: every address of a
 * shard has the same low bits (the shard is blkaddr % CACHE_SHARDS), and
 * the low bits of the product depend only on those, so masking them would
 * leave all but 1/CACHE_SHARDS of the buckets empty.
 */
static inline uint32_t hash_blk(const struct cache_shard *s, uint32_t blkaddr)
{
	return (blkaddr * 2654435761u) >> (32 - s->hash_bits);
}

static struct cache_shard *shard_of(struct f2fs_cache *c, uint32_t blkaddr)
{
	return &c->shard[blkaddr % CACHE_SHARDS];
}

/* An entry and its block back to where they came from. */
static void entry_free(struct f2fs_cache *c, struct cache_entry *e)
{
	f2fs_block_put(&c->pool, e->data);
	free(e);
}

struct f2fs_cache *f2fs_cache_create(size_t bytes, struct f2fs_slab_cache *slabs)
{
	struct f2fs_cache *c = calloc(1, sizeof(*c));
	uint32_t per_shard;

	if (!c)
		return NULL;
	if (f2fs_stash_init(&c->ra_bufs, RA_CHUNK, RA_CHUNK)) {
		free(c);
		return NULL;
	}
	per_shard = (uint32_t)(bytes / F2FS_BLKSIZE / CACHE_SHARDS);
	if (per_shard < 4)
		per_shard = 4;
	f2fs_block_pool_init(&c->pool);
	c->pool.source = slabs;
	c->ra_bufs.source = slabs;
	f2fs_block_pool_keep(&c->pool, (uint64_t)per_shard * CACHE_SHARDS);
	for (int i = 0; i < CACHE_SHARDS; i++) {
		struct cache_shard *s = &c->shard[i];
		uint32_t hs = 16, bits = 4;

		while (hs < per_shard && hs < (1u << 20)) {
			hs <<= 1;
			bits++;
		}
		pthread_mutex_init(&s->lock, NULL);
		s->max = per_shard;
		s->hash_size = hs;
		s->hash_bits = bits;
		s->hash = calloc(hs, sizeof(*s->hash));
		if (!s->hash) {
			f2fs_cache_destroy(c);
			return NULL;
		}
	}
	return c;
}

void f2fs_cache_destroy(struct f2fs_cache *c)
{
	if (!c)
		return;
	for (int i = 0; i < CACHE_SHARDS; i++) {
		struct cache_shard *s = &c->shard[i];
		struct cache_entry *e = s->head;

		while (e) {
			struct cache_entry *n = e->next;

			entry_free(c, e);
			e = n;
		}
		free(s->hash);
		pthread_mutex_destroy(&s->lock);
	}
	f2fs_block_pool_destroy(&c->pool);
	f2fs_stash_destroy(&c->ra_bufs);
	free(c);
}

static void lru_unlink(struct cache_shard *s, struct cache_entry *e)
{
	if (e->prev)
		e->prev->next = e->next;
	else
		s->head = e->next;
	if (e->next)
		e->next->prev = e->prev;
	else
		s->tail = e->prev;
	e->prev = e->next = NULL;
}

static void lru_push_head(struct cache_shard *s, struct cache_entry *e)
{
	e->prev = NULL;
	e->next = s->head;
	if (s->head)
		s->head->prev = e;
	s->head = e;
	if (!s->tail)
		s->tail = e;
}

static struct cache_entry **find_slot(struct cache_shard *s, uint32_t blkaddr)
{
	struct cache_entry **pp = &s->hash[hash_blk(s, blkaddr)];

	while (*pp && (*pp)->blkaddr != blkaddr)
		pp = &(*pp)->hnext;
	return pp;
}

bool f2fs_cache_lookup(struct f2fs_cache *c, uint32_t blkaddr, void *buf)
{
	return f2fs_cache_read(c, blkaddr, 0, F2FS_BLKSIZE, buf);
}

bool f2fs_cache_read(struct f2fs_cache *c, uint32_t blkaddr, size_t off, size_t len, void *buf)
{
	struct cache_shard *s = shard_of(c, blkaddr);
	struct cache_entry *e;

	if (off > F2FS_BLKSIZE || len > F2FS_BLKSIZE - off)
		return false;
	pthread_mutex_lock(&s->lock);
	e = *find_slot(s, blkaddr);
	if (e) {
		memcpy(buf, e->data + off, len);
		lru_unlink(s, e);
		lru_push_head(s, e);
		s->hits++;
	} else {
		s->misses++;
	}
	pthread_mutex_unlock(&s->lock);
	return e != NULL;
}

static void remove_entry(struct cache_shard *s, struct cache_entry *e)
{
	struct cache_entry **pp = find_slot(s, e->blkaddr);

	*pp = e->hnext;
	lru_unlink(s, e);
	s->nr--;
}

void f2fs_cache_insert(struct f2fs_cache *c, uint32_t blkaddr, const void *buf)
{
	struct cache_shard *s = shard_of(c, blkaddr);
	struct cache_entry **pp, *e;

	pthread_mutex_lock(&s->lock);
	pp = find_slot(s, blkaddr);
	e = *pp;
	if (e) {
		lru_unlink(s, e);
	} else {
		if (s->nr >= s->max && s->tail) {
			e = s->tail;
			remove_entry(s, e);	/* reuse the LRU victim's memory */
			pp = find_slot(s, blkaddr);
		} else {
			e = malloc(sizeof(*e));
			if (e && !(e->data = f2fs_block_get(&c->pool))) {
				free(e);
				e = NULL;
			}
			if (!e) {
				pthread_mutex_unlock(&s->lock);
				return;		/* caching is optional */
			}
		}
		e->blkaddr = blkaddr;
		e->hnext = NULL;
		*pp = e;
		s->nr++;
	}
	memcpy(e->data, buf, F2FS_BLKSIZE);
	lru_push_head(s, e);
	pthread_mutex_unlock(&s->lock);
}

/* Whether blkaddr is cached, without counting a hit or miss or touching the LRU. */
bool f2fs_cache_contains(struct f2fs_cache *c, uint32_t blkaddr)
{
	struct cache_shard *s = shard_of(c, blkaddr);
	bool found;

	pthread_mutex_lock(&s->lock);
	found = *find_slot(s, blkaddr) != NULL;
	pthread_mutex_unlock(&s->lock);
	return found;
}

bool f2fs_ra_keep_all(void *arg, uint32_t i, const uint8_t *blk)
{
	(void)arg, (void)i, (void)blk;
	return true;
}

#define RA_MAX_RUN 256	/* blocks per read-ahead request (1 MiB) */

/*
 * Read ahead blocks addrs[0..n) (ascending) that are not cached yet:
 * neighbours in one request each, up to depth requests in flight.  A block
 * goes into the cache only if keep(arg, i, block) accepts it (its footer
 * names what pointed to it); a block refused or unread is simply not
 * cached, and the reader that needs it reads it itself and reports what
 * is wrong.  Read-ahead is advice: it fails silently.
 */
/* Read ahead blocks idx[0..m) of addrs into buf, then into the cache. */
static void readahead_chunk(struct f2fs_cache *c, struct f2fs_dev *dev, const uint32_t *addrs,
			    const uint32_t *idx, uint32_t m, uint8_t *buf, unsigned int depth,
			    f2fs_ra_keep_fn keep, void *arg, struct f2fs_ra_result *res)
{
	struct f2fs_bio *bios = calloc(m, sizeof(*bios));
	struct iovec *iov = calloc(m, sizeof(*iov));
	uint32_t *first = calloc(m, sizeof(*first)), nb = 0;
	int *errs = calloc(m, sizeof(*errs));

	if (!bios || !iov || !first || !errs)
		goto out;
	for (uint32_t k = 0; k < m;) {
		uint32_t len = 1;

		while (k + len < m && len < RA_MAX_RUN && addrs[idx[k + len]] == addrs[idx[k]] + len)
			len++;
		iov[nb] = (struct iovec){ buf + (size_t)k * F2FS_BLKSIZE, (size_t)len * F2FS_BLKSIZE };
		bios[nb] = (struct f2fs_bio){ .op = F2FS_BIO_READ, .blkaddr = addrs[idx[k]],
					      .nr_blocks = len, .iov = &iov[nb], .iovcnt = 1 };
		first[nb++] = k;
		k += len;
	}
	f2fs_submit_bios(dev, bios, errs, nb, depth);
	for (uint32_t r = 0; r < nb; r++) {
		if (errs[r])
			continue;
		res->requests++;
		for (uint32_t j = 0; j < bios[r].nr_blocks; j++) {
			uint32_t k = first[r] + j;
			const uint8_t *blk = buf + (size_t)k * F2FS_BLKSIZE;

			res->blocks++;
			if (keep(arg, idx[k], blk))
				f2fs_cache_insert(c, addrs[idx[k]], blk);
			else
				res->rejected++;
		}
	}
out:
	free(bios);
	free(iov);
	free(first);
	free(errs);
}

void f2fs_cache_readahead(struct f2fs_cache *c, struct f2fs_dev *dev, const uint32_t *addrs,
			  uint32_t n, unsigned int depth, f2fs_ra_keep_fn keep, void *arg,
			  struct f2fs_ra_result *res)
{
	uint32_t *idx, m = 0;
	size_t blocks;
	uint8_t *buf;

	if (!n)
		return;
	idx = malloc(n * sizeof(*idx));
	if (!idx)
		return;
	for (uint32_t i = 0; i < n; i++)
		if ((i == 0 || addrs[i] != addrs[i - 1]) && !f2fs_cache_contains(c, addrs[i]))
			idx[m++] = i;
	buf = m ? f2fs_stash_get(&c->ra_bufs, F2FS_MIN(m, (uint32_t)RA_CHUNK), &blocks) : NULL;
	/* a chunk at a time through one kept buffer: no fresh pages to fault in */
	for (uint32_t k = 0; buf && k < m; k += RA_CHUNK)
		readahead_chunk(c, dev, addrs, idx + k, F2FS_MIN(m - k, (uint32_t)RA_CHUNK), buf, depth,
				keep, arg, res);
	f2fs_stash_put(&c->ra_bufs, buf, blocks);
	free(idx);
}

void f2fs_cache_invalidate(struct f2fs_cache *c, uint32_t blkaddr)
{
	struct cache_shard *s = shard_of(c, blkaddr);
	struct cache_entry *e;

	pthread_mutex_lock(&s->lock);
	e = *find_slot(s, blkaddr);
	if (e) {
		remove_entry(s, e);
		entry_free(c, e);
	}
	pthread_mutex_unlock(&s->lock);
}

void f2fs_cache_stats(struct f2fs_cache *c, uint64_t *hits, uint64_t *misses)
{
	*hits = *misses = 0;
	for (int i = 0; i < CACHE_SHARDS; i++) {
		pthread_mutex_lock(&c->shard[i].lock);
		*hits += c->shard[i].hits;
		*misses += c->shard[i].misses;
		pthread_mutex_unlock(&c->shard[i].lock);
	}
}

void f2fs_cache_drop_all(struct f2fs_cache *c)
{
	for (int i = 0; i < CACHE_SHARDS; i++) {
		struct cache_shard *s = &c->shard[i];
		struct cache_entry *e;

		pthread_mutex_lock(&s->lock);
		e = s->head;
		while (e) {
			struct cache_entry *n = e->next;

			entry_free(c, e);
			e = n;
		}
		s->head = s->tail = NULL;
		s->nr = 0;
		memset(s->hash, 0, s->hash_size * sizeof(*s->hash));
		pthread_mutex_unlock(&s->lock);
	}
}
