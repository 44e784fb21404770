// SPDX-License-Identifier: GPL-2.0
/*
 * Device I/O: bios of 4 KiB blocks with vectored I/O, optional O_DIRECT,
 * the inline-crypto hook and request-size statistics, over one of three
 * backends behind struct f2fs_dev_ops (as erofs-utils' erofs_vfops): an
 * image file, a block device, or a memory buffer (read-only, or writable
 * for tests that drive the write path without a file); callers may bring
 * their own (f2fs_dev_open_ops: the fuzzers' copy-on-write overlay, the
 * crash tests' write log).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "f2fs.h"

#define DEV_MAX_IOV 1024	/* stay well under IOV_MAX */

/* Bounce buffers come from a stash: see struct f2fs_buf_stash. */
#define BOUNCE_MIN_BLOCKS 256	/* one FUSE write of 1 MiB */
#define BOUNCE_HUGE_BLOCKS 512	/* -o direct: one 2 MiB huge page */

struct held_block {
	uint32_t blkaddr;
	uint8_t data[F2FS_BLKSIZE];
};

struct f2fs_dev {
	const struct f2fs_dev_ops *ops;
	int fd;			/* file and block device backends */
	uint8_t *mem;		/* memory backend (written only when !readonly) */
	void *priv;		/* a backend supplied by the caller (f2fs_dev_open_ops) */
	uint64_t size;		/* bytes */
	bool readonly, direct;
	atomic_bool stopped;	/* shut down: writes fail with -EIO */
	atomic_uint meta_errors;	/* see f2fs_dev_meta_errors */

	struct f2fs_buf_stash bounce;

	/* writes held back in memory (f2fs_dev_hold_writes), newest copy of each block */
	bool holding;
	struct held_block *held;
	uint32_t nr_held, cap_held;

	atomic_uint_fast64_t reads, read_bytes, writes, write_bytes, flushes;
	atomic_uint_fast64_t read_hist[F2FS_IO_BUCKETS], write_hist[F2FS_IO_BUCKETS];
	atomic_uint_fast64_t read_hist_bytes[F2FS_IO_BUCKETS], write_hist_bytes[F2FS_IO_BUCKETS];
};

static const char *const bucket_names[F2FS_IO_BUCKETS] = {
	"4K", "8K", "16K", "32K", "64K", "128K", "256K", "<512K", ">=512K",
};

const char *f2fs_io_bucket_name(int bucket)
{
	return bucket >= 0 && bucket < F2FS_IO_BUCKETS ? bucket_names[bucket] : "?";
}

/* 4K, 8K, ..., 256K are "up to"; then (256K, 512K) and >= 512K. */
static int io_bucket(uint64_t bytes)
{
	if (bytes >= 512 * 1024)
		return F2FS_IO_BUCKETS - 1;
	for (int b = 0; b < F2FS_IO_BUCKETS - 2; b++)
		if (bytes <= (4096ull << b))
			return b;
	return F2FS_IO_BUCKETS - 2;
}

void *f2fs_alloc_blocks(size_t nr)
{
	void *p = NULL;

	if (nr == 0)
		nr = 1;
	if (posix_memalign(&p, F2FS_BLKSIZE, nr * F2FS_BLKSIZE))
		return NULL;
	return p;
}

/*
 * 2 MiB, so that the platform can back a slab with one huge page: a pool
 * filling up (the inodes of a cold walk, a burst of dirty pages) takes a
 * fault per slab instead of one per block.
 */
#define SLAB_BLOCKS	512
#define SLAB_BYTES	((size_t)SLAB_BLOCKS * F2FS_BLKSIZE)

/* ---- the buffer stash ---- */

static void *source_buf_take(struct f2fs_slab_cache *c);
static bool source_buf_give(struct f2fs_slab_cache *c, void *buf);

int f2fs_stash_init(struct f2fs_buf_stash *s, uint32_t min_blocks, uint32_t max_blocks)
{
	memset(s, 0, sizeof(*s));
	s->min_blocks = min_blocks;
	s->max_blocks = max_blocks;
	return pthread_mutex_init(&s->lock, NULL) ? -ENOMEM : 0;
}

static void stash_free(const struct f2fs_buf_stash *s, void *buf, size_t blocks)
{
	if (s->source && blocks == SLAB_BLOCKS && source_buf_give(s->source, buf))
		return;
	if (s->huge || s->source)
		f2fs_plat_unmap_anon(buf, blocks * F2FS_BLKSIZE);
	else
		free(buf);
}

void f2fs_stash_destroy(struct f2fs_buf_stash *s)
{
	while (s->nr) {
		s->nr--;
		stash_free(s, s->slot[s->nr].buf, s->slot[s->nr].blocks);
	}
	pthread_mutex_destroy(&s->lock);
}

void *f2fs_stash_get(struct f2fs_buf_stash *s, size_t nr, size_t *got)
{
	void *buf = NULL;

	pthread_mutex_lock(&s->lock);
	for (unsigned int i = 0; i < s->nr; i++) {
		if (s->slot[i].blocks >= nr) {
			buf = s->slot[i].buf;
			*got = s->slot[i].blocks;
			s->slot[i] = s->slot[--s->nr];
			break;
		}
	}
	pthread_mutex_unlock(&s->lock);
	if (buf)
		return buf;
	*got = nr > s->min_blocks ? nr : s->min_blocks;
	if (s->source && *got == SLAB_BLOCKS && (buf = source_buf_take(s->source)))
		return buf;
	buf = s->huge || s->source ? f2fs_plat_map_anon(*got * F2FS_BLKSIZE)
				   : f2fs_alloc_blocks(*got);
	if (!buf)
		*got = 0;
	return buf;
}

void f2fs_stash_put(struct f2fs_buf_stash *s, void *buf, size_t blocks)
{
	unsigned int small = 0;

	if (!buf)
		return;
	if (s->max_blocks && blocks > s->max_blocks) {
		stash_free(s, buf, blocks);
		return;
	}
	pthread_mutex_lock(&s->lock);
	if (s->nr < F2FS_STASH_SLOTS) {
		s->slot[s->nr].buf = buf;
		s->slot[s->nr++].blocks = blocks;
		buf = NULL;
	} else {
		for (unsigned int i = 1; i < s->nr; i++)
			if (s->slot[i].blocks < s->slot[small].blocks)
				small = i;
		if (s->slot[small].blocks < blocks) {
			void *old = s->slot[small].buf;
			size_t old_blocks = s->slot[small].blocks;

			s->slot[small].buf = buf;
			s->slot[small].blocks = blocks;
			buf = old;
			blocks = old_blocks;
		}
	}
	pthread_mutex_unlock(&s->lock);
	if (buf)
		stash_free(s, buf, blocks);
}

/* ---- the block pool: 4 KiB blocks from 2 MiB slabs ---- */

/*
 * Under AddressSanitizer a free block is poisoned, so that a use after
 * f2fs_block_put is reported as it would be after free().
 */
#if defined(__SANITIZE_ADDRESS__)
#define F2FS_POOL_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define F2FS_POOL_ASAN 1
#endif
#endif
#ifdef F2FS_POOL_ASAN
#include <sanitizer/asan_interface.h>
#define pool_poison(p, n)	ASAN_POISON_MEMORY_REGION(p, n)
#define pool_unpoison(p, n)	ASAN_UNPOISON_MEMORY_REGION(p, n)
#else
#define pool_poison(p, n)	((void)(p), (void)(n))
#define pool_unpoison(p, n)	((void)(p), (void)(n))
#endif

#define SLAB_WORDS	(SLAB_BLOCKS / 64)
#define SLAB_ALL_FREE	(SLAB_BLOCKS - 1)	/* block 0 holds the header */

/* At the start of its slab, which is SLAB_BYTES-aligned: a block finds it by masking. */
struct f2fs_slab {
	uint64_t free[SLAB_WORDS];	/* bit i: block i is free */
	uint32_t nfree;
	struct f2fs_slab *prev, *next;	/* in the pool's partial list */
};

static struct f2fs_slab *slab_of(const void *blk)
{
	return (struct f2fs_slab *)((uintptr_t)blk & ~(uintptr_t)(SLAB_BYTES - 1));
}

struct f2fs_slab_cache {
	pthread_mutex_t lock;
	struct f2fs_slab *list;		/* through ->next */
	unsigned int nr, max;
	void *bufs[4];			/* stash buffers of a slab's size, any contents */
	unsigned int nr_bufs;
};

static void *source_buf_take(struct f2fs_slab_cache *c)
{
	void *buf = NULL;

	pthread_mutex_lock(&c->lock);
	if (c->nr_bufs)
		buf = c->bufs[--c->nr_bufs];
	pthread_mutex_unlock(&c->lock);
	return buf;
}

/* Only the slab-sized mappings of a stash with a source come back here. */
static bool source_buf_give(struct f2fs_slab_cache *c, void *buf)
{
	bool kept = false;

	pthread_mutex_lock(&c->lock);
	if (c->nr_bufs < sizeof(c->bufs) / sizeof(c->bufs[0])) {
		c->bufs[c->nr_bufs++] = buf;
		kept = true;
	}
	pthread_mutex_unlock(&c->lock);
	return kept;
}

struct f2fs_slab_cache *f2fs_slab_cache_new(unsigned int max_slabs)
{
	struct f2fs_slab_cache *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	pthread_mutex_init(&c->lock, NULL);
	c->max = max_slabs;
	return c;
}

void f2fs_slab_cache_free(struct f2fs_slab_cache *c)
{
	if (!c)
		return;
	while (c->list) {
		struct f2fs_slab *s = c->list;

		c->list = s->next;
		pool_unpoison(s, SLAB_BYTES);
		f2fs_plat_unmap_anon(s, SLAB_BYTES);
	}
	while (c->nr_bufs)
		f2fs_plat_unmap_anon(c->bufs[--c->nr_bufs], SLAB_BYTES);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

/* A slab no pool holds any more: to the pool's source while it has room. */
static void slab_release(struct f2fs_block_pool *pool, struct f2fs_slab *s)
{
	struct f2fs_slab_cache *c = pool->source;

	if (c) {
		pthread_mutex_lock(&c->lock);
		if (c->nr < c->max) {
			pool_unpoison(s, F2FS_BLKSIZE);
			s->next = c->list;
			c->list = s;
			c->nr++;
			s = NULL;
		}
		pthread_mutex_unlock(&c->lock);
		if (!s)
			return;
	}
	pool_unpoison(s, SLAB_BYTES);
	f2fs_plat_unmap_anon(s, SLAB_BYTES);
}

/* A slab for a pool: the source's if it has one, else a new mapping. */
static void *slab_acquire(struct f2fs_block_pool *pool)
{
	struct f2fs_slab_cache *c = pool->source;
	struct f2fs_slab *s = NULL;

	if (c) {
		pthread_mutex_lock(&c->lock);
		s = c->list;
		if (s) {
			c->list = s->next;
			c->nr--;
		}
		pthread_mutex_unlock(&c->lock);
		if (s)
			return s;
	}
	return f2fs_plat_map_anon(SLAB_BYTES);	/* SLAB_BYTES-aligned */
}

static void slab_link(struct f2fs_block_pool *pool, struct f2fs_slab *s)
{
	s->prev = NULL;
	s->next = pool->partial;
	if (pool->partial)
		pool->partial->prev = s;
	pool->partial = s;
}

static void slab_unlink(struct f2fs_block_pool *pool, struct f2fs_slab *s)
{
	if (s->prev)
		s->prev->next = s->next;
	else
		pool->partial = s->next;
	if (s->next)
		s->next->prev = s->prev;
	s->prev = s->next = NULL;
}

void f2fs_block_pool_init(struct f2fs_block_pool *pool)
{
	memset(pool, 0, sizeof(*pool));
	pthread_mutex_init(&pool->lock, NULL);
}

/*
 * A pool that is emptied and filled again in bursts (the page cache's, at
 * each writeback) keeps its slabs: one given back to the system and taken
 * again costs a page fault and a zeroed page for each of its blocks.
 */
void f2fs_block_pool_keep(struct f2fs_block_pool *pool, uint64_t keep_blocks)
{
	pthread_mutex_lock(&pool->lock);
	pool->keep = keep_blocks / SLAB_BLOCKS;
	pthread_mutex_unlock(&pool->lock);
}

/* The spares past the first, taken off the pool under its lock. */
static struct f2fs_slab *take_spares(struct f2fs_block_pool *pool, uint64_t keep)
{
	struct f2fs_slab *s = pool->spare, *rest;

	for (uint64_t i = 1; s && i < keep; i++)
		s = s->next;
	if (!s)
		return NULL;
	rest = s->next;
	s->next = NULL;
	for (struct f2fs_slab *t = rest; t; t = t->next) {
		pool->nspare--;
		pool->slabs--;
	}
	return rest;
}

static void free_slabs(struct f2fs_block_pool *pool, struct f2fs_slab *s)
{
	while (s) {
		struct f2fs_slab *next = s->next;

		slab_release(pool, s);
		s = next;
	}
}

void f2fs_block_pool_trim(struct f2fs_block_pool *pool)
{
	struct f2fs_slab *gone;

	pthread_mutex_lock(&pool->lock);
	gone = take_spares(pool, 1);
	pthread_mutex_unlock(&pool->lock);
	free_slabs(pool, gone);
}

/* Every block must have been put back. */
void f2fs_block_pool_destroy(struct f2fs_block_pool *pool)
{
	while (pool->partial) {
		struct f2fs_slab *s = pool->partial;

		slab_unlink(pool, s);
		slab_release(pool, s);
	}
	free_slabs(pool, pool->spare);
	pool->spare = NULL;
	pool->nspare = 0;
	pool->slabs = 0;
	pthread_mutex_destroy(&pool->lock);
}

void *f2fs_block_get(struct f2fs_block_pool *pool)
{
	struct f2fs_slab *s;
	unsigned int i, w;

	pthread_mutex_lock(&pool->lock);
	s = pool->partial;
	if (!s && pool->spare) {
		s = pool->spare;
		pool->spare = s->next;
		pool->nspare--;
		slab_link(pool, s);
	}
	if (!s) {
		void *mem;

		pthread_mutex_unlock(&pool->lock);
		mem = slab_acquire(pool);
		if (!mem)
			return NULL;
		s = mem;
		memset(s->free, 0xff, sizeof(s->free));
		s->free[0] &= ~(uint64_t)1;
		s->nfree = SLAB_ALL_FREE;
		pool_poison((uint8_t *)s + F2FS_BLKSIZE, SLAB_BYTES - F2FS_BLKSIZE);
		pthread_mutex_lock(&pool->lock);
		pool->slabs++;
		slab_link(pool, s);
	}
	for (w = 0; !s->free[w]; w++)
		;
	i = w * 64 + (unsigned int)__builtin_ctzll(s->free[w]);
	s->free[w] &= ~((uint64_t)1 << (i % 64));
	if (!--s->nfree)
		slab_unlink(pool, s);	/* full */
	pool->blocks++;
	pthread_mutex_unlock(&pool->lock);
	pool_unpoison((uint8_t *)s + (size_t)i * F2FS_BLKSIZE, F2FS_BLKSIZE);
	return (uint8_t *)s + (size_t)i * F2FS_BLKSIZE;
}

void f2fs_block_put(struct f2fs_block_pool *pool, void *blk)
{
	struct f2fs_slab *s, *gone = NULL;
	unsigned int i;

	if (!blk)
		return;
	s = slab_of(blk);
	i = (unsigned int)(((uintptr_t)blk - (uintptr_t)s) / F2FS_BLKSIZE);
	/*
	 * A pool fed from a slab cache hands its slabs on to another mount:
	 * zeroed as they came from the system, so that a mount never sees
	 * what an earlier one left (a fuzzer's inputs stay reproducible).
	 * Only the blocks used are written, not the slab's 2 MiB.
	 */
	if (pool->source)
		memset(blk, 0, F2FS_BLKSIZE);
	pool_poison(blk, F2FS_BLKSIZE);
	pthread_mutex_lock(&pool->lock);
	if (!s->nfree)
		slab_link(pool, s);	/* was full */
	s->free[i / 64] |= (uint64_t)1 << (i % 64);
	pool->blocks--;
	if (++s->nfree == SLAB_ALL_FREE) {
		slab_unlink(pool, s);
		if (pool->nspare > pool->keep) {
			gone = s;
			pool->slabs--;
		} else {
			s->next = pool->spare;
			pool->spare = s;
			pool->nspare++;
		}
	}
	pthread_mutex_unlock(&pool->lock);
	if (gone)
		slab_release(pool, gone);
}

static struct f2fs_dev *dev_alloc(const struct f2fs_dev_ops *ops)
{
	struct f2fs_dev *dev = calloc(1, sizeof(*dev));

	if (!dev)
		return NULL;
	dev->ops = ops;
	dev->fd = -1;
	if (f2fs_stash_init(&dev->bounce, BOUNCE_MIN_BLOCKS, 0)) {
		free(dev);
		return NULL;
	}
	return dev;
}

static bool iov_aligned(const struct iovec *iov, int n)
{
	for (int i = 0; i < n; i++)
		if (((uintptr_t)iov[i].iov_base | iov[i].iov_len) & (F2FS_BLKSIZE - 1))
			return false;
	return true;
}

/* Scatter a flat buffer into iov / gather iov into a flat buffer. */
static void iov_scatter(const struct iovec *iov, int n, const uint8_t *src)
{
	for (int i = 0; i < n; i++) {
		memcpy(iov[i].iov_base, src, iov[i].iov_len);
		src += iov[i].iov_len;
	}
}

static void iov_gather(const struct iovec *iov, int n, uint8_t *dst)
{
	for (int i = 0; i < n; i++) {
		memcpy(dst, iov[i].iov_base, iov[i].iov_len);
		dst += iov[i].iov_len;
	}
}

/* Full-length preadv/pwritev, retrying short transfers and EINTR. */
static int fd_transfer(struct f2fs_dev *dev, bool write, bool dsync, const struct iovec *iov_in,
		       int iovcnt, uint64_t off, size_t total)
{
	struct iovec local[DEV_MAX_IOV];
	struct iovec *iov = local;
	size_t done = 0;

	if (iovcnt > DEV_MAX_IOV)
		return -EINVAL;
	memcpy(local, iov_in, sizeof(*iov) * (size_t)iovcnt);
	while (done < total) {
		off_t at = (off_t)(off + done);
		ssize_t r = !write ? preadv(dev->fd, iov, iovcnt, at) :
			    dsync ? f2fs_plat_pwritev_dsync(dev->fd, iov, iovcnt, at) :
			    pwritev(dev->fd, iov, iovcnt, at);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (r == 0)
			return -EIO;	/* past the end of the device */
		done += (size_t)r;
		while (iovcnt && (size_t)r >= iov->iov_len) {
			r -= (ssize_t)iov->iov_len;
			iov++;
			iovcnt--;
		}
		if (iovcnt && r) {
			iov->iov_base = (uint8_t *)iov->iov_base + r;
			iov->iov_len -= (size_t)r;
		}
	}
	return 0;
}

static int fd_rw(struct f2fs_dev *dev, bool write, const struct iovec *iov, int iovcnt,
		 uint64_t off, size_t total)
{
	return fd_transfer(dev, write, false, iov, iovcnt, off, total);
}

static int fd_write_fua(struct f2fs_dev *dev, const struct iovec *iov, int iovcnt, uint64_t off,
			size_t total)
{
	return fd_transfer(dev, true, true, iov, iovcnt, off, total);
}

/* ---- the file and block device backends ---- */

static int fd_flush(struct f2fs_dev *dev)
{
	return fsync(dev->fd) < 0 ? -errno : 0;
}

/* an image file gives discarded blocks back as a punched hole */
static int file_discard(struct f2fs_dev *dev, uint64_t off, uint64_t len)
{
	return f2fs_plat_discard(dev->fd, false, off, len);
}

static int blkdev_discard(struct f2fs_dev *dev, uint64_t off, uint64_t len)
{
	return f2fs_plat_discard(dev->fd, true, off, len);
}

static void fd_release(struct f2fs_dev *dev)
{
	if (dev->fd >= 0)
		close(dev->fd);
}

static const struct f2fs_dev_ops file_ops = {
	.rw = fd_rw, .flush = fd_flush, .discard = file_discard, .release = fd_release,
	.write_fua = fd_write_fua,
};
static const struct f2fs_dev_ops blkdev_ops = {
	.rw = fd_rw, .flush = fd_flush, .discard = blkdev_discard, .release = fd_release,
	.write_fua = fd_write_fua,
};

/* ---- the memory backend: the buffer is the caller's and outlives the device ---- */

static int mem_rw(struct f2fs_dev *dev, bool write, const struct iovec *iov, int iovcnt,
		  uint64_t off, size_t total)
{
	if (write)
		iov_gather(iov, iovcnt, dev->mem + off);
	else
		iov_scatter(iov, iovcnt, dev->mem + off);
	return 0;
}

static int mem_flush(struct f2fs_dev *dev)
{
	return 0;
}

/* nothing to give back; the blocks keep their bytes, as on a device without discard */
static int mem_discard(struct f2fs_dev *dev, uint64_t off, uint64_t len)
{
	return 0;
}

static void mem_release(struct f2fs_dev *dev)
{
}

static const struct f2fs_dev_ops mem_ops = {
	.rw = mem_rw, .flush = mem_flush, .discard = mem_discard, .release = mem_release,
	.in_memory = true,
};

/*
 * The host reports a failed write back of its page cache to the next
 * fsync, through a descriptor opened after the failure too: a previous
 * user's lost writes (a mount that met a failing device and exited) would
 * fail this mount's first checkpoint.  Nothing of this mount is written
 * yet, so the error is not ours: take it now and let it go.
 */
static void forget_old_errors(struct f2fs_dev *dev)
{
	(void)dev->ops->flush(dev);
}

int f2fs_dev_open(const char *path, bool readonly, bool direct, struct f2fs_dev **out)
{
	struct f2fs_dev *dev = dev_alloc(&file_ops);
	bool is_blkdev;
	int err;

	if (!dev)
		return -ENOMEM;
	err = f2fs_plat_open_device(path, readonly, direct, &dev->fd, &dev->size, &is_blkdev);
	if (err) {
		f2fs_dev_close(dev);
		return err;
	}
	if (is_blkdev)
		dev->ops = &blkdev_ops;
	dev->readonly = readonly;
	dev->direct = direct;
	/*
	 * A direct write goes from the bounce buffer's own pages, and a
	 * request holds at most so many segments (128 on a UFS host or a
	 * loop device): 4 KiB pages scattered in memory split a 1 MiB write
	 * in two, where one huge page is one segment per 64 KiB or more, and
	 * how many requests a write took depended on how memory happened to
	 * be laid out.  2 MiB each, one huge page where the OS backs it so.
	 */
	if (direct) {
		dev->bounce.huge = true;
		dev->bounce.min_blocks = BOUNCE_HUGE_BLOCKS;
	}
	if (!readonly)
		forget_old_errors(dev);
	*out = dev;
	return 0;
}

/*
 * A read-only file or block device made writable (remount rw), or, after a
 * failed remount, read-only again: the descriptor stays writable (the flag
 * alone refuses writes, as for any read-only device), and an image file's
 * lock is shared with readers again.
 */
int f2fs_dev_reopen_rw(struct f2fs_dev *dev, const char *path)
{
	int err;

	if (!dev->readonly)
		return 0;
	if (dev->ops != &file_ops && dev->ops != &blkdev_ops)
		return -EROFS;
	err = f2fs_plat_reopen_rw(dev->fd, path, dev->direct);
	if (!err) {
		dev->readonly = false;
		forget_old_errors(dev);
	}
	return err;
}

bool f2fs_write_protected(const char *path)
{
	return f2fs_plat_write_protected(path);
}

void f2fs_dev_set_readonly(struct f2fs_dev *dev)
{
	dev->readonly = true;
	if (dev->ops == &file_ops)
		f2fs_plat_share_claim(dev->fd);
}

static int open_mem(void *buf, size_t len, bool readonly, struct f2fs_dev **out)
{
	struct f2fs_dev *dev = dev_alloc(&mem_ops);

	if (!dev)
		return -ENOMEM;
	dev->mem = buf;
	dev->size = len;
	dev->readonly = readonly;
	*out = dev;
	return 0;
}

int f2fs_dev_open_mem(const void *buf, size_t len, struct f2fs_dev **out)
{
	/* never written: readonly refuses writes before any backend sees them */
	return open_mem((void *)buf, len, true, out);
}

int f2fs_dev_open_mem_rw(void *buf, size_t len, struct f2fs_dev **out)
{
	return open_mem(buf, len, false, out);
}

int f2fs_dev_open_ops(const struct f2fs_dev_ops *ops, void *priv, uint64_t size, bool readonly,
		      struct f2fs_dev **out)
{
	struct f2fs_dev *dev;

	if (!ops || !ops->rw || !ops->flush || !ops->discard || !ops->release)
		return -EINVAL;
	dev = dev_alloc(ops);
	if (!dev)
		return -ENOMEM;
	dev->priv = priv;
	dev->size = size - size % F2FS_BLKSIZE;
	dev->readonly = readonly;
	if (!readonly)
		forget_old_errors(dev);
	*out = dev;
	return 0;
}

void *f2fs_dev_priv(const struct f2fs_dev *dev)
{
	return dev->priv;
}

void f2fs_dev_close(struct f2fs_dev *dev)
{
	if (!dev)
		return;
	dev->ops->release(dev);
	free(dev->held);
	f2fs_stash_destroy(&dev->bounce);
	free(dev);
}

uint64_t f2fs_dev_nr_blocks(const struct f2fs_dev *dev)
{
	return dev->size / F2FS_BLKSIZE;
}

bool f2fs_dev_is_blkdev(const struct f2fs_dev *dev)
{
	return dev->ops == &blkdev_ops;
}

static struct held_block *find_held(struct f2fs_dev *dev, uint32_t blkaddr)
{
	for (uint32_t i = 0; i < dev->nr_held; i++)
		if (dev->held[i].blkaddr == blkaddr)
			return &dev->held[i];
	return NULL;
}

/*
 * The backend's transfer, or, while writes are held, a write kept in
 * memory and a read that sees the held blocks over the device's.
 */
static int dev_rw(struct f2fs_dev *dev, bool write, const struct iovec *iov, int iovcnt,
		  uint64_t off, size_t total)
{
	uint32_t b = (uint32_t)(off / F2FS_BLKSIZE);
	int err = 0;

	if (!dev->holding)
		return dev->ops->rw(dev, write, iov, iovcnt, off, total);
	if (!write)
		err = dev->ops->rw(dev, false, iov, iovcnt, off, total);
	for (int i = 0; !err && i < iovcnt; i++) {
		for (size_t k = 0; k < iov[i].iov_len; k += F2FS_BLKSIZE, b++) {
			uint8_t *p = (uint8_t *)iov[i].iov_base + k;
			struct held_block *h = find_held(dev, b);

			if (!write) {
				if (h)
					memcpy(p, h->data, F2FS_BLKSIZE);
				continue;
			}
			if (!h) {
				if (dev->nr_held == dev->cap_held) {
					uint32_t nc = dev->cap_held ? dev->cap_held * 2 : 64;
					struct held_block *nh = realloc(dev->held, sizeof(*nh) * nc);

					if (!nh)
						return -ENOMEM;
					dev->held = nh;
					dev->cap_held = nc;
				}
				h = &dev->held[dev->nr_held++];
				h->blkaddr = b;
			}
			memcpy(h->data, p, F2FS_BLKSIZE);
		}
	}
	return err;
}

void f2fs_dev_hold_writes(struct f2fs_dev *dev)
{
	dev->holding = true;
}

int f2fs_dev_release_writes(struct f2fs_dev *dev, bool commit)
{
	int err = 0;

	dev->holding = false;
	for (uint32_t i = 0; commit && !err && i < dev->nr_held; i++) {
		struct iovec iov = { .iov_base = dev->held[i].data, .iov_len = F2FS_BLKSIZE };
		struct f2fs_bio bio = { .op = F2FS_BIO_WRITE, .blkaddr = dev->held[i].blkaddr,
					.nr_blocks = 1, .iov = &iov, .iovcnt = 1 };

		/* as any write: the held copies are not aligned for O_DIRECT */
		err = f2fs_submit_bio(dev, &bio);
	}
	free(dev->held);
	dev->held = NULL;
	dev->nr_held = dev->cap_held = 0;
	return err;
}

static int do_crypt(const struct f2fs_crypt_ctx *c, bool enc, const struct iovec *iov,
		    int iovcnt, uint8_t *bounce)
{
	uint64_t dun = c->dun;
	int err;

	for (int i = 0; i < iovcnt; i++) {
		size_t units = iov[i].iov_len / F2FS_BLKSIZE;

		if (enc) {
			err = c->ops->encrypt(c->key, dun, iov[i].iov_base, bounce, units);
			bounce += iov[i].iov_len;
		} else {
			err = c->ops->decrypt(c->key, dun, iov[i].iov_base, units);
		}
		if (err)
			return err;
		dun += units;
	}
	return 0;
}

/* A write; a FUA one through the backend's own, else followed by a flush. */
static int dev_write(struct f2fs_dev *dev, bool fua, const struct iovec *iov, int iovcnt,
		     uint64_t off, size_t total)
{
	int err;

	if (fua && !dev->holding && dev->ops->write_fua)
		return dev->ops->write_fua(dev, iov, iovcnt, off, total);
	err = dev_rw(dev, true, iov, iovcnt, off, total);
	if (!err && fua && !dev->holding) {
		atomic_fetch_add(&dev->flushes, 1);
		err = dev->ops->flush(dev);
	}
	return err;
}

int f2fs_submit_bio(struct f2fs_dev *dev, const struct f2fs_bio *bio)
{
	bool write = bio->op == F2FS_BIO_WRITE;
	uint64_t off = (uint64_t)bio->blkaddr * F2FS_BLKSIZE;
	size_t total = 0;
	struct iovec biov;
	int err = 0;

	for (int i = 0; i < bio->iovcnt; i++) {
		if (bio->iov[i].iov_len % F2FS_BLKSIZE)
			return -EINVAL;
		total += bio->iov[i].iov_len;
	}
	if (total != (size_t)bio->nr_blocks * F2FS_BLKSIZE || bio->iovcnt <= 0)
		return -EINVAL;
	if (off > dev->size || total > dev->size - off)
		return -EIO;
	if (write && dev->readonly)
		return -EROFS;
	if (write && atomic_load(&dev->stopped))
		return -EIO;

	/* Encrypted writes and unaligned direct I/O go through a bounce buffer. */
	if ((write && bio->crypt) || (dev->direct && !iov_aligned(bio->iov, bio->iovcnt))) {
		size_t bounce_blocks;
		uint8_t *bounce = f2fs_stash_get(&dev->bounce, bio->nr_blocks, &bounce_blocks);

		if (!bounce)
			return -ENOMEM;
		biov.iov_base = bounce;
		biov.iov_len = total;
		if (write) {
			if (bio->crypt)
				err = do_crypt(bio->crypt, true, bio->iov, bio->iovcnt, bounce);
			else
				iov_gather(bio->iov, bio->iovcnt, bounce);
			if (!err)
				err = dev_write(dev, bio->fua, &biov, 1, off, total);
		} else {
			err = dev_rw(dev, false, &biov, 1, off, total);
			if (!err)
				iov_scatter(bio->iov, bio->iovcnt, bounce);
		}
		f2fs_stash_put(&dev->bounce, bounce, bounce_blocks);
	} else if (write) {
		err = dev_write(dev, bio->fua, bio->iov, bio->iovcnt, off, total);
	} else {
		err = dev_rw(dev, false, bio->iov, bio->iovcnt, off, total);
	}
	if (err) {
		if (!bio->file_data && err != -ENOMEM)
			atomic_fetch_add(&dev->meta_errors, 1);
		return err;
	}
	if (!write && bio->crypt) {
		err = do_crypt(bio->crypt, false, bio->iov, bio->iovcnt, NULL);
		if (err)
			return err;
	}
	if (write) {
		atomic_fetch_add(&dev->writes, 1);
		atomic_fetch_add(&dev->write_bytes, total);
		atomic_fetch_add(&dev->write_hist[io_bucket(total)], 1);
		atomic_fetch_add(&dev->write_hist_bytes[io_bucket(total)], total);
	} else {
		atomic_fetch_add(&dev->reads, 1);
		atomic_fetch_add(&dev->read_bytes, total);
		atomic_fetch_add(&dev->read_hist[io_bucket(total)], 1);
		atomic_fetch_add(&dev->read_hist_bytes[io_bucket(total)], total);
	}
	return 0;
}

/*
 * Several independent bios with up to depth of them in flight: the calling
 * thread and depth - 1 helpers take the next bio until none is left.  A
 * device with queue depth (NVMe, virtio, an image on either) serves them
 * in parallel.  The caller waits only for bios a helper has taken, never
 * for a helper to start: on a busy machine a new thread may not run for
 * many milliseconds, and by then the caller has done the work itself.
 * Helpers that start late find nothing left and drop their reference.
 * errs[i] receives bio i's result.
 */
struct bio_batch {
	struct f2fs_dev *dev;
	const struct f2fs_bio *bios;
	int *errs;
	size_t n;
	atomic_size_t next;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	size_t done;		/* bios finished, under lock */
	int refs;		/* the caller and each helper, under lock */
};

static void bio_batch_put(struct bio_batch *b)
{
	bool last;

	pthread_mutex_lock(&b->lock);
	last = --b->refs == 0;
	pthread_mutex_unlock(&b->lock);
	if (last) {
		pthread_mutex_destroy(&b->lock);
		pthread_cond_destroy(&b->cond);
		free(b);
	}
}

static void bio_batch_run(struct bio_batch *b)
{
	size_t i;

	while ((i = atomic_fetch_add(&b->next, 1)) < b->n) {
		int err = f2fs_submit_bio(b->dev, &b->bios[i]);

		pthread_mutex_lock(&b->lock);
		b->errs[i] = err;
		if (++b->done == b->n)
			pthread_cond_broadcast(&b->cond);
		pthread_mutex_unlock(&b->lock);
	}
}

static void *bio_batch_worker(void *arg)
{
	bio_batch_run(arg);
	bio_batch_put(arg);
	return NULL;
}

void f2fs_submit_bios(struct f2fs_dev *dev, const struct f2fs_bio *bios, int *errs, size_t n,
		      unsigned int depth)
{
	struct bio_batch *b = NULL;
	pthread_attr_t attr;
	unsigned int nt = 0;

	if (depth > 1 && n > 1 && !dev->ops->in_memory)
		b = calloc(1, sizeof(*b));
	if (!b) {
		for (size_t i = 0; i < n; i++)
			errs[i] = f2fs_submit_bio(dev, &bios[i]);
		return;
	}
	*b = (struct bio_batch){ .dev = dev, .bios = bios, .errs = errs, .n = n, .refs = 1 };
	atomic_init(&b->next, 0);
	pthread_mutex_init(&b->lock, NULL);
	pthread_cond_init(&b->cond, NULL);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	pthread_attr_setstacksize(&attr, 256 << 10);
	if (depth > F2FS_MAX_BIO_DEPTH)
		depth = F2FS_MAX_BIO_DEPTH;
	/* threads only pay off with a request for each */
	while (nt + 1 < depth && nt + 1 < n) {
		pthread_t tid;

		pthread_mutex_lock(&b->lock);
		b->refs++;
		pthread_mutex_unlock(&b->lock);
		if (pthread_create(&tid, &attr, bio_batch_worker, b)) {
			pthread_mutex_lock(&b->lock);
			b->refs--;	/* fewer in flight, still correct */
			pthread_mutex_unlock(&b->lock);
			break;
		}
		nt++;
	}
	pthread_attr_destroy(&attr);
	bio_batch_run(b);
	pthread_mutex_lock(&b->lock);
	while (b->done < b->n)
		pthread_cond_wait(&b->cond, &b->lock);
	pthread_mutex_unlock(&b->lock);
	bio_batch_put(b);
}

int f2fs_dev_read(struct f2fs_dev *dev, uint32_t blkaddr, void *buf, uint32_t nr)
{
	struct iovec iov = { .iov_base = buf, .iov_len = (size_t)nr * F2FS_BLKSIZE };
	struct f2fs_bio bio = {
		.op = F2FS_BIO_READ, .blkaddr = blkaddr, .nr_blocks = nr,
		.iov = &iov, .iovcnt = 1,
	};

	return f2fs_submit_bio(dev, &bio);
}

void f2fs_dev_stop_writes(struct f2fs_dev *dev)
{
	atomic_store(&dev->stopped, true);
}

int f2fs_dev_flush(struct f2fs_dev *dev)
{
	int err;

	if (dev->readonly || dev->holding || atomic_load(&dev->stopped))
		return 0;
	atomic_fetch_add(&dev->flushes, 1);
	err = dev->ops->flush(dev);
	if (err)
		atomic_fetch_add(&dev->meta_errors, 1);
	return err;
}

unsigned int f2fs_dev_meta_errors(const struct f2fs_dev *dev)
{
	return atomic_load((atomic_uint *)&dev->meta_errors);
}

void f2fs_dev_get_stats(struct f2fs_dev *dev, struct f2fs_io_stats *st)
{
	st->reads = atomic_load(&dev->reads);
	st->read_bytes = atomic_load(&dev->read_bytes);
	st->writes = atomic_load(&dev->writes);
	st->write_bytes = atomic_load(&dev->write_bytes);
	st->flushes = atomic_load(&dev->flushes);
	for (int i = 0; i < F2FS_IO_BUCKETS; i++) {
		st->read_hist[i] = atomic_load(&dev->read_hist[i]);
		st->write_hist[i] = atomic_load(&dev->write_hist[i]);
		st->read_hist_bytes[i] = atomic_load(&dev->read_hist_bytes[i]);
		st->write_hist_bytes[i] = atomic_load(&dev->write_hist_bytes[i]);
	}
}

/* Discard blocks: BLKDISCARD on a device, a punched hole in an image file. */
int f2fs_dev_discard(struct f2fs_dev *dev, uint32_t blkaddr, uint32_t nr)
{
	if (dev->readonly || dev->holding || !nr)
		return 0;
	return dev->ops->discard(dev, (uint64_t)blkaddr * F2FS_BLKSIZE, (uint64_t)nr * F2FS_BLKSIZE);
}

/* ---- plugging: merging neighbouring bios into one device request ---- */

/*
 * blk-crypto's rule (bio_crypt_ctx_mergeable): b may follow a in one
 * request when it starts where a ends and either neither carries a crypt
 * context or both use the same key with b's DUN following a's last.  Also
 * the same kind (file data or not), and a FUA write stays alone.
 */
bool f2fs_bio_mergeable(const struct f2fs_bio *a, const struct f2fs_bio *b)
{
	if (a->op != b->op || (uint64_t)a->blkaddr + a->nr_blocks != b->blkaddr ||
	    a->file_data != b->file_data || a->fua || b->fua)
		return false;
	if (!a->crypt || !b->crypt)
		return !a->crypt && !b->crypt;
	return a->crypt->ops == b->crypt->ops && a->crypt->key == b->crypt->key &&
	       a->crypt->dun + a->nr_blocks == b->crypt->dun;
}

void f2fs_plug_init(struct f2fs_plug *plug, struct f2fs_dev *dev)
{
	memset(plug, 0, sizeof(*plug));
	plug->dev = dev;
}

int f2fs_plug_flush(struct f2fs_plug *plug)
{
	int err;

	if (!plug->bio.nr_blocks)
		return 0;
	plug->bio.iov = plug->iov;
	plug->bio.crypt = plug->has_crypt ? &plug->crypt : NULL;
	err = f2fs_submit_bio(plug->dev, &plug->bio);
	plug->bio.nr_blocks = 0;
	plug->bio.iovcnt = 0;
	if (plug->sealed) {
		f2fs_stash_put(&plug->dev->bounce, plug->sealed, plug->sealed_blocks);
		plug->sealed = NULL;
		plug->has_crypt = false;
	}
	return err;
}

int f2fs_plug_seal(struct f2fs_plug *plug)
{
	size_t total = (size_t)plug->bio.nr_blocks * F2FS_BLKSIZE, got;
	uint8_t *bounce;
	int err;

	if (!plug->bio.nr_blocks || !plug->has_crypt || plug->sealed)
		return 0;
	bounce = f2fs_stash_get(&plug->dev->bounce, plug->bio.nr_blocks, &got);
	if (!bounce)
		return -ENOMEM;
	err = do_crypt(&plug->crypt, true, plug->iov, plug->bio.iovcnt, bounce);
	if (err) {
		f2fs_stash_put(&plug->dev->bounce, bounce, got);
		return err;
	}
	plug->sealed = bounce;
	plug->sealed_blocks = got;
	plug->iov[0] = (struct iovec){ bounce, total };
	plug->bio.iovcnt = 1;
	/* the request now carries ciphertext: nothing more to encrypt */
	plug->has_crypt = false;
	return 0;
}

/* Queue a bio; its buffers must stay valid until the plug is flushed. */
int f2fs_plug_add(struct f2fs_plug *plug, const struct f2fs_bio *bio)
{
	int err = 0;

	if (bio->iovcnt > F2FS_PLUG_MAX_IOV)
		return f2fs_submit_bio(plug->dev, bio);
	if (plug->bio.nr_blocks && (plug->sealed ||
	    (plug->bio.iovcnt + bio->iovcnt > F2FS_PLUG_MAX_IOV ||
	     plug->bio.nr_blocks + bio->nr_blocks > F2FS_PLUG_MAX_BLOCKS ||
	     !f2fs_bio_mergeable(&plug->bio, bio)))) {
		err = f2fs_plug_flush(plug);
		if (err)
			return err;
	}
	if (!plug->bio.nr_blocks) {
		plug->bio.op = bio->op;
		plug->bio.blkaddr = bio->blkaddr;
		plug->bio.file_data = bio->file_data;
		plug->bio.fua = bio->fua;	/* alone in the plug: never merged */
		plug->has_crypt = bio->crypt != NULL;
		if (bio->crypt)
			plug->crypt = *bio->crypt;
	} else {
		plug->merged++;
	}
	for (int i = 0; i < bio->iovcnt; i++) {
		struct iovec *last = plug->bio.iovcnt ? &plug->iov[plug->bio.iovcnt - 1] : NULL;

		/* blocks that follow each other in memory too stay one iovec, so a
		 * run from one buffer is one segment however long */
		if (last && (uint8_t *)last->iov_base + last->iov_len == bio->iov[i].iov_base)
			last->iov_len += bio->iov[i].iov_len;
		else
			plug->iov[plug->bio.iovcnt++] = bio->iov[i];
	}
	plug->bio.nr_blocks += bio->nr_blocks;
	/* the plug's copy of the context must name the first block's DUN */
	plug->bio.crypt = plug->has_crypt ? &plug->crypt : NULL;
	return 0;
}
