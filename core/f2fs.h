/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Internal interfaces of the f2fs core: the per-mount context and the
 * functions each mechanism file exports to the others.  Nothing here is
 * visible to fuse/; that goes through api.h.  A file calls only files on
 * its own floor or below (docs/design.md, "core/, floor by floor").
 */
#ifndef F2FS_INTERNAL_H
#define F2FS_INTERNAL_H

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "api.h"
#include "format.h"
#include "fsverity.h"

#ifndef EUCLEAN
#define EUCLEAN 117	/* "Structure needs cleaning", as the kernel's EFSCORRUPTED */
#endif
#ifndef ENOKEY
#define ENOKEY 126
#endif
#ifndef EKEYREJECTED
#define EKEYREJECTED 129
#endif
#define EFSCORRUPTED EUCLEAN

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define F2FS_MIN(a, b) ((a) < (b) ? (a) : (b))
#define F2FS_MAX(a, b) ((a) > (b) ? (a) : (b))

#if defined(__GNUC__)
#define F2FS_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define F2FS_PRINTF(a, b)
#endif

/* ======================= device layer (dev.c) ======================= */

struct f2fs_dev;

/*
 * Inline-crypto model: a bio may carry a crypt context.  Reads are
 * decrypted at completion and writes encrypted into bounce buffers at
 * submission, one 4 KiB data unit at a time with DUN = dun + i.
 * The ops are supplied by crypto/ so that core/ needs no crypto library.
 */
struct f2fs_crypt_ops {
	int (*decrypt)(const void *key, uint64_t dun, void *buf, size_t nr_units);
	int (*encrypt)(const void *key, uint64_t dun, const void *in, void *out,
		       size_t nr_units);
};

struct f2fs_crypt_ctx {
	const struct f2fs_crypt_ops *ops;
	const void *key;	/* opaque prepared key, owned by crypto/ */
	uint64_t dun;		/* DUN of the bio's first block */
};

enum f2fs_bio_op { F2FS_BIO_READ, F2FS_BIO_WRITE };

/*
 * A bio: nr_blocks physically contiguous blocks starting at blkaddr,
 * gathered from / scattered into iov (each element a multiple of 4 KiB).
 */
struct f2fs_bio {
	enum f2fs_bio_op op;
	uint32_t blkaddr;
	uint32_t nr_blocks;
	const struct iovec *iov;
	int iovcnt;
	const struct f2fs_crypt_ctx *crypt;	/* NULL: no encryption */
	/* a regular file's contents: a failure concerns that file alone (the
	 * caller reports it); any other failed bio counts in the device's
	 * metadata errors (f2fs_dev_meta_errors) */
	bool file_data;
	/* a write durable once done, as the kernel's REQ_FUA: on the device
	 * before anything written after it, nothing said of what came before */
	bool fua;
};

int f2fs_dev_open(const char *path, bool readonly, bool direct, struct f2fs_dev **out);
int f2fs_dev_reopen_rw(struct f2fs_dev *dev, const char *path);
void f2fs_dev_set_readonly(struct f2fs_dev *dev);

/*
 * A backend: whole-block transfers at byte offsets the generic layer has
 * already checked against the size and the read-only state.
 */
struct f2fs_dev_ops {
	/* all `total` bytes of iov at off, or an error (never a short transfer) */
	int (*rw)(struct f2fs_dev *dev, bool write, const struct iovec *iov, int iovcnt,
		  uint64_t off, size_t total);
	int (*flush)(struct f2fs_dev *dev);
	int (*discard)(struct f2fs_dev *dev, uint64_t off, uint64_t len);
	void (*release)(struct f2fs_dev *dev);
	/* optional: a write durable when it returns (a FUA write), without
	 * flushing what came before; NULL: the write, then a flush */
	int (*write_fua)(struct f2fs_dev *dev, const struct iovec *iov, int iovcnt, uint64_t off,
			 size_t total);
	/* transfers are memory copies: several in flight gain nothing, so
	 * f2fs_submit_bios runs them one after the other in the caller */
	bool in_memory;
};

/* A device over a caller's backend; priv is the backend's, handed back by f2fs_dev_priv. */
int f2fs_dev_open_ops(const struct f2fs_dev_ops *ops, void *priv, uint64_t size, bool readonly,
		      struct f2fs_dev **out);
void *f2fs_dev_priv(const struct f2fs_dev *dev);
/*
 * Hold writes in memory (reads see them) until f2fs_dev_release_writes
 * writes them out (commit) or drops them: roll-forward recovery changes
 * nothing on the device unless it succeeds.  Flushes and discards are
 * skipped meanwhile.
 */
void f2fs_dev_hold_writes(struct f2fs_dev *dev);
int f2fs_dev_release_writes(struct f2fs_dev *dev, bool commit);
/* Backends: an image file or block device, or a memory buffer (read-only or writable). */
int f2fs_dev_open_mem(const void *buf, size_t len, struct f2fs_dev **out);
int f2fs_dev_open_mem_rw(void *buf, size_t len, struct f2fs_dev **out);
void f2fs_dev_close(struct f2fs_dev *dev);
uint64_t f2fs_dev_nr_blocks(const struct f2fs_dev *dev);
bool f2fs_dev_is_blkdev(const struct f2fs_dev *dev);
int f2fs_submit_bio(struct f2fs_dev *dev, const struct f2fs_bio *bio);
/* Independent bios, up to depth (<= F2FS_MAX_BIO_DEPTH) in flight; errs[i] per bio. */
#define F2FS_MAX_BIO_DEPTH 32
void f2fs_submit_bios(struct f2fs_dev *dev, const struct f2fs_bio *bios, int *errs, size_t n,
		      unsigned int depth);
/* Convenience: read nr contiguous blocks into one buffer. */
int f2fs_dev_read(struct f2fs_dev *dev, uint32_t blkaddr, void *buf, uint32_t nr);
int f2fs_dev_flush(struct f2fs_dev *dev);
/* Failed bios other than file data, and failed flushes, since the device opened. */
unsigned int f2fs_dev_meta_errors(const struct f2fs_dev *dev);
int f2fs_dev_discard(struct f2fs_dev *dev, uint32_t blkaddr, uint32_t nr);
/* From now on every write is refused (-EIO): a shut-down mount. */
void f2fs_dev_stop_writes(struct f2fs_dev *dev);
void f2fs_dev_get_stats(struct f2fs_dev *dev, struct f2fs_io_stats *st);
/*
 * A plug gathers bios and submits neighbours as one request when
 * f2fs_bio_mergeable allows (contiguous, and no crypt context or the same
 * key with consecutive DUNs).  Queued buffers stay in use until the flush
 * (or the seal).
 */
#define F2FS_PLUG_MAX_IOV 1024
#define F2FS_PLUG_MAX_BLOCKS 1024	/* 4 MiB: bounds an encrypted request's bounce buffer */
struct f2fs_plug {
	struct f2fs_dev *dev;
	struct f2fs_bio bio;		/* what is queued (iov = iov below) */
	struct f2fs_crypt_ctx crypt;	/* of the first queued block */
	bool has_crypt;
	uint64_t merged;		/* bios absorbed into an earlier one */
	void *sealed;			/* f2fs_plug_seal's bounce buffer, if any */
	size_t sealed_blocks;
	struct iovec iov[F2FS_PLUG_MAX_IOV];
};
bool f2fs_bio_mergeable(const struct f2fs_bio *a, const struct f2fs_bio *b);
void f2fs_plug_init(struct f2fs_plug *plug, struct f2fs_dev *dev);
int f2fs_plug_add(struct f2fs_plug *plug, const struct f2fs_bio *bio);
int f2fs_plug_flush(struct f2fs_plug *plug);
/*
 * Build the queued request now: encrypt it into a bounce buffer of the
 * plug's own, so that the flush is the device write alone.  A bio added
 * after the seal goes in a request of its own.
 */
int f2fs_plug_seal(struct f2fs_plug *plug);

/* Block-aligned allocation (usable with O_DIRECT); free with free(). */
void *f2fs_alloc_blocks(size_t nr);

/*
 * Single 4 KiB blocks for inode and dirty node buffers, carved from
 * 2 MiB slabs (the kernel's kmem_cache for its node pages): one
 * allocation per 511 blocks instead of a posix_memalign (and, in a
 * thread's malloc arena, a heap-growing mprotect) per block, and one
 * huge page per slab where the OS backs it so.  A slab
 * whose blocks are all free goes back to the system, except one spare
 * (or as many as f2fs_block_pool_keep allows).
 */
struct f2fs_slab;
struct f2fs_block_pool {
	pthread_mutex_t lock;
	struct f2fs_slab *partial;	/* slabs with a free block */
	struct f2fs_slab *spare;	/* wholly free slabs kept, through ->next */
	uint64_t slabs, blocks;		/* slabs held, blocks handed out */
	uint64_t nspare, keep;		/* spares held, and kept beyond the first */
	struct f2fs_slab_cache *source;	/* where slabs come from and go back to, or NULL */
};
void f2fs_block_pool_init(struct f2fs_block_pool *pool);
void f2fs_block_pool_destroy(struct f2fs_block_pool *pool);
/* Keep up to keep_blocks of free blocks (in whole slabs) for reuse, not just one slab. */
void f2fs_block_pool_keep(struct f2fs_block_pool *pool, uint64_t keep_blocks);
/* Give every free slab but one back to the system. */
void f2fs_block_pool_trim(struct f2fs_block_pool *pool);
void *f2fs_block_get(struct f2fs_block_pool *pool);
void f2fs_block_put(struct f2fs_block_pool *pool, void *blk);

/* platform.c: the only file with OS-specific calls */
int f2fs_plat_open_device(const char *path, bool readonly, bool direct, int *fd,
			  uint64_t *size_bytes, bool *is_blkdev);
int f2fs_plat_reopen_rw(int fd, const char *path, bool direct);
bool f2fs_plat_write_protected(const char *path);
void f2fs_plat_share_claim(int fd);
uint64_t f2fs_plat_makedev(uint32_t major, uint32_t minor);
int f2fs_plat_discard(int fd, bool is_blkdev, uint64_t off, uint64_t len);
/* pwritev that returns once the data is durable (Linux: RWF_DSYNC, which an
 * O_DIRECT block device turns into a FUA write) */
ssize_t f2fs_plat_pwritev_dsync(int fd, const struct iovec *iov, int iovcnt, off_t off);
/* Zeroed anonymous memory, page-aligned (2 MiB-aligned and huge-page backed if it can be). */
void *f2fs_plat_map_anon(size_t bytes);
void f2fs_plat_unmap_anon(void *p, size_t bytes);

/* ======================= dirty file data (pagecache.c) ======================= */

struct f2fs_page {
	uint64_t index;		/* file block */
	uint8_t *data;		/* 4 KiB, plaintext */
};
/* An inode's dirty pages (under its lock), linked in the mount's list (pc->lock). */
struct f2fs_inode_pages {
	struct f2fs_page *v;	/* sorted by index */
	uint32_t nr, cap;
	uint32_t ino;
	uint64_t dirtied_ms;	/* when its first page was dirtied (monotonic) */
	struct f2fs_inode_pages *prev, *next;
};
struct f2fs_pagecache {
	pthread_mutex_t lock;
	struct f2fs_block_pool pool;		/* the pages' 4 KiB buffers */
	struct f2fs_inode_pages *head, *tail;	/* oldest dirty first */
	uint64_t nr_dirty, limit;		/* pages */
	uint64_t nr_inodes;
	uint64_t dirtied, written, dropped;	/* pages, ever */
	uint64_t wb_inodes, wb_sync, wb_background;	/* inode writebacks, by trigger */
};
struct f2fs_pagecache *f2fs_pc_create(uint64_t dirty_bytes, struct f2fs_slab_cache *slabs);
void f2fs_pc_destroy(struct f2fs_pagecache *pc);
uint64_t f2fs_pc_now_ms(void);
uint8_t *f2fs_pc_find(const struct f2fs_inode_pages *ip, uint64_t index);
/* The page of index (created zero-filled, *created, the inode listed when it was clean). */
uint8_t *f2fs_pc_get(struct f2fs_pagecache *pc, struct f2fs_inode_pages **ipp, uint32_t ino,
		     uint64_t index, bool *created);
/* Take an inode's pages out of the list (to write or drop them); *ipp becomes NULL. */
struct f2fs_inode_pages *f2fs_pc_detach(struct f2fs_pagecache *pc,
					struct f2fs_inode_pages **ipp);
void f2fs_pc_free(struct f2fs_pagecache *pc, struct f2fs_inode_pages *ip, bool written);
/* Drop the pages of indexes [from, to), never written (truncation, punching); true if
 * none is left, and then *ipp is detached and freed. */
bool f2fs_pc_drop_range(struct f2fs_pagecache *pc, struct f2fs_inode_pages **ipp,
			uint64_t from, uint64_t to);
/* The oldest dirty inode, if it is expire_ms old or the cache is past half its limit. */
bool f2fs_pc_oldest(struct f2fs_pagecache *pc, uint64_t expire_ms, uint32_t *ino);
bool f2fs_pc_over_limit(struct f2fs_pagecache *pc);
/* Put pages f2fs_pc_detach took back at the head of the list (they could not be written). */
void f2fs_pc_relist(struct f2fs_pagecache *pc, struct f2fs_inode_pages *ip);
bool f2fs_pc_has_dirty(struct f2fs_pagecache *pc);
/* Nothing dirty: the free memory the pool kept goes back to the system. */
void f2fs_pc_trim(struct f2fs_pagecache *pc);
/* Copy the dirty pages inside [off, off + len) over buf (a read of that range). */
void f2fs_pc_overlay(const struct f2fs_inode_pages *ip, uint8_t *buf, size_t len, uint64_t off);
/* Up to *n dirty inodes, oldest first. */
void f2fs_pc_inodes(struct f2fs_pagecache *pc, uint32_t *inos, uint32_t *n);

/* ======================= block cache (cache.c) ======================= */

/* Bounded LRU cache of 4 KiB node and meta blocks keyed by block address. */
struct f2fs_cache;
struct f2fs_cache *f2fs_cache_create(size_t bytes, struct f2fs_slab_cache *slabs);
void f2fs_cache_destroy(struct f2fs_cache *c);
bool f2fs_cache_lookup(struct f2fs_cache *c, uint32_t blkaddr, void *buf);
/* Copy len bytes at off of a cached block (a NAT entry, not its block). */
bool f2fs_cache_read(struct f2fs_cache *c, uint32_t blkaddr, size_t off, size_t len, void *buf);
void f2fs_cache_insert(struct f2fs_cache *c, uint32_t blkaddr, const void *buf);
void f2fs_cache_invalidate(struct f2fs_cache *c, uint32_t blkaddr);
void f2fs_cache_stats(struct f2fs_cache *c, uint64_t *hits, uint64_t *misses);
void f2fs_cache_drop_all(struct f2fs_cache *c);
bool f2fs_cache_contains(struct f2fs_cache *c, uint32_t blkaddr);
/* Read-ahead into the cache (node and NAT blocks): what it did, added up. */
struct f2fs_ra_result {
	uint64_t blocks, requests, rejected;
};
typedef bool (*f2fs_ra_keep_fn)(void *arg, uint32_t i, const uint8_t *blk);
/* For blocks with no footer to check (NAT, dentry blocks): checked on use. */
bool f2fs_ra_keep_all(void *arg, uint32_t i, const uint8_t *blk);
void f2fs_cache_readahead(struct f2fs_cache *c, struct f2fs_dev *dev, const uint32_t *addrs,
			  uint32_t n, unsigned int depth, f2fs_ra_keep_fn keep, void *arg,
			  struct f2fs_ra_result *res);

/* ======================= extent cache (extent_cache.c) ======================= */

struct f2fs_extent {
	uint32_t fofs;		/* first logical block */
	uint32_t blk;		/* first physical block */
	uint32_t len;		/* number of blocks */
};

/* Per-inode read extent tree: sorted, non-overlapping; all trees share one budget. */
struct f2fs_extent_mgr;
struct f2fs_extent_tree {
	pthread_mutex_t lock;
	struct f2fs_extent *ext;
	uint32_t nr, cap;
	struct f2fs_extent largest;	/* i_ext, or the longest run learned since */
	struct f2fs_extent_mgr *mgr;	/* NULL: unbounded (tests) */
	/* under the manager's lock */
	struct f2fs_extent_tree *lru_prev, *lru_next;
	bool on_lru;
	size_t charged;			/* bytes counted against the budget */
};

int f2fs_extent_mgr_create(struct f2fs_sb *sb, size_t max_bytes);
void f2fs_extent_mgr_destroy(struct f2fs_sb *sb);
uint64_t f2fs_extent_evictions(struct f2fs_sb *sb);
void f2fs_extent_tree_init(struct f2fs_sb *sb, struct f2fs_extent_tree *et,
			   const struct f2fs_extent *largest);
void f2fs_extent_tree_destroy(struct f2fs_extent_tree *et);
void f2fs_extent_tree_forget(struct f2fs_extent_tree *et);
bool f2fs_extent_lookup(struct f2fs_extent_tree *et, uint32_t lblk, struct f2fs_extent *out);
void f2fs_extent_insert(struct f2fs_extent_tree *et, uint32_t fofs, uint32_t blk, uint32_t len);
/* Learn the mapped runs of a direct node from its slot ofs_in_node (file block lblk) on. */
struct dnode_of_data;
void f2fs_update_extent_cache(struct f2fs_sb *sb, const struct dnode_of_data *dn, uint32_t lblk);
/* Learn runs[0..n) (ascending, disjoint) in one go; they replace runs they overlap. */
void f2fs_extent_insert_runs(struct f2fs_extent_tree *et, const struct f2fs_extent *runs,
			     uint32_t n);
/* Blocks [fofs, fofs + len) are remapped: cut them out of the runs, and of i_ext. */
struct f2fs_inode;
void f2fs_drop_extent_cache(struct f2fs_inode *inode, uint64_t fofs, uint64_t len);
/* The same, for the runs of one tree alone. */
void f2fs_drop_extent_cache_runs(struct f2fs_extent_tree *et, uint64_t fofs, uint64_t len);
/* File block fofs now lives at blk (a cleaning move). */
void f2fs_extent_cache_move(struct f2fs_inode *inode, uint32_t fofs, uint32_t blk);

/* ======================= in-memory inode (inode.c) ======================= */

/* dcache.c: a directory's name index (see there) */
struct f2fs_dcache;
#define F2FS_DEFAULT_DCACHE_SIZE ((size_t)64 << 20)
struct f2fs_dcache_budget {
	_Atomic size_t used;
	size_t limit;
};
struct f2fs_dcache_entry {
	uint32_t ino;
	uint8_t file_type;
	uint64_t lblk;		/* UINT64_MAX: the inline area */
	uint32_t bit;
};
struct f2fs_dcache *f2fs_dcache_new(struct f2fs_dcache_budget *budget, uint32_t expect);
void f2fs_dcache_free(struct f2fs_dcache *dc);
int f2fs_dcache_add(struct f2fs_dcache *dc, uint32_t hash, const uint8_t *name, uint16_t len,
		    uint32_t ino, uint8_t file_type, uint64_t lblk, uint32_t bit);
bool f2fs_dcache_find(const struct f2fs_dcache *dc, uint32_t hash, const uint8_t *name,
		      size_t len, struct f2fs_dcache_entry *out);
int f2fs_dcache_remove(struct f2fs_dcache *dc, uint32_t hash, const uint8_t *name, size_t len);
void f2fs_dcache_repoint(struct f2fs_dcache *dc, uint32_t hash, const uint8_t *name, size_t len,
			 uint32_t ino, uint8_t file_type);
uint32_t f2fs_dcache_inos(const struct f2fs_dcache *dc, uint32_t *out, uint32_t max);
bool f2fs_dcache_charge(struct f2fs_dcache *dc);
size_t f2fs_dcache_bytes(const struct f2fs_dcache *dc);

struct f2fs_inode {
	uint32_t ino;
	int refcount;			/* protected by sb->icache_lock */
	bool unhashed;			/* freed: out of the cache, gone at the last iput */
	uint32_t open_count;		/* open handles (protected by lock) */
	struct f2fs_inode *hnext;	/* icache hash chain */
	struct f2fs_inode *lru_prev, *lru_next;
	pthread_rwlock_t lock;

	uint8_t *node;			/* the raw inode block (4 KiB) */

	/* decoded and sanity-checked fields */
	uint16_t mode;
	uint8_t advise;
	uint8_t inline_flags;
	uint32_t uid, gid, links;
	uint64_t size, blocks;
	uint32_t flags;
	uint32_t xattr_nid;
	uint32_t pino;
	uint32_t current_depth;
	uint8_t dir_level;
	uint32_t generation;
	uint16_t extra_isize;		/* bytes; 0 without extra_attr */
	uint16_t inline_xattr_addrs;	/* 4-byte words of inline xattr space */
	uint32_t addrs_per_inode;	/* usable i_addr slots */
	uint8_t compress_algorithm;
	uint8_t log_cluster_size;
	uint16_t compress_flag;
	uint64_t compr_blocks;
	uint32_t projid;		/* i_projid; 0 (F2FS_DEF_PROJID) where it does not fit */
	bool compress_now;		/* F2FS_IOC_COMPRESS_FILE under compress_mode=user */
	/* the change holding lock (write) may pass quota limits: its caller has
	 * CAP_SYS_RESOURCE (F2FS_PRIV_QUOTA); cleared by f2fs_end_op */
	bool dq_priv;

	struct f2fs_extent_tree et;
	/* dirty pages (-o writeback), under lock; a dirty inode holds a reference */
	struct f2fs_inode_pages *pages;
	/* the last cluster read, while the file is open (compress.c) */
	struct f2fs_cluster_cache *_Atomic ccache;
	/*
	 * Directories: the name index (dir.c builds it under the read lock,
	 * drops it under the write lock) and the lookups since it was last
	 * dropped; dcache_off: building failed, do not retry until dropped.
	 */
	struct f2fs_dcache *_Atomic dcache;
	_Atomic uint32_t dcache_lookups;
	_Atomic bool dcache_off;
	_Atomic bool dcache_ra;		/* its entries' inodes were read ahead */

	/* fs-verity (verity.c): set once at the first read or open, then fixed */
	struct f2fs_verity_info *_Atomic verity;

	/*
	 * An atomic write (F2FS_IOC_START_ATOMIC_WRITE, ioctl.c): new blocks go
	 * to the COW inode at the same file index, reads look there first, and
	 * the inode block keeps original_size until the commit moves the COW
	 * inode's blocks in.  Below atomic_keep the file's own blocks show where
	 * the COW inode has none; from there on only the COW inode's do
	 * (ATOMIC_REPLACE: 0; a truncate lowers it).  Under the inode's lock.
	 */
	struct f2fs_inode *cow;		/* referenced; NULL: no atomic write */
	uint64_t original_size;
	uint64_t atomic_keep;
	uint32_t write_count;		/* open handles that may write (under lock) */
	bool cow_file;			/* this is an atomic write's COW inode */
	uint32_t atomic_owner;		/* the process that started it (0: unknown) */

	/* encryption (crypt.c), under sb->crypt_lock */
	struct fscrypt_inode_info *ci;
	int ci_err;			/* cached failure, valid while ci_gen matches */
	uint64_t ci_gen;
};

enum { F2FS_TIME_ATIME, F2FS_TIME_MTIME, F2FS_TIME_CTIME, F2FS_TIME_CRTIME };
void f2fs_inode_set_time(struct f2fs_inode *inode, int which, const struct f2fs_timespec *ts);
void f2fs_now(struct f2fs_timespec *ts);
int f2fs_mark_inode_dirty(struct f2fs_sb *sb, struct f2fs_inode *inode);
int f2fs_new_inode(struct f2fs_sb *sb, struct f2fs_inode *dir, uint32_t mode, uint32_t uid,
		   uint32_t gid, struct f2fs_inode **out);
/* platform.c: bytes from the OS's CSPRNG (generation numbers, nonces) */
void f2fs_random_bytes(void *buf, size_t len);

int f2fs_iget(struct f2fs_sb *sb, uint32_t ino, struct f2fs_inode **out);
/* An inode number from a request: one that no longer names an inode is -ESTALE. */
int f2fs_iget_req(struct f2fs_sb *sb, uint32_t ino, struct f2fs_inode **out);
void f2fs_iput(struct f2fs_sb *sb, struct f2fs_inode *inode);
/* One more reference to an inode the caller holds. */
void f2fs_ihold(struct f2fs_sb *sb, struct f2fs_inode *inode);
/* Is ino in the inode cache (a hint: it may go at once)? */
bool f2fs_icache_has(struct f2fs_sb *sb, uint32_t ino);
void f2fs_icache_destroy(struct f2fs_sb *sb);
/* Every cached inode forgets its read extent runs (f2fs_drop_caches). */
void f2fs_icache_drop_extents(struct f2fs_sb *sb);
void f2fs_unhash_inode(struct f2fs_sb *sb, struct f2fs_inode *inode);
/* Drop the inode's derived encryption info (crypt.c sets it up). */
void f2fs_put_crypt_info(struct f2fs_inode *inode);
void f2fs_fill_stat(struct f2fs_sb *sb, const struct f2fs_inode *inode, struct f2fs_stat *st);
/* Free the blocks, nodes and nid of an inode with no links (write lock held). */
int f2fs_evict_inode(struct f2fs_sb *sb, struct f2fs_inode *inode);
/* The orphan list: unlinked inodes still open, freed at the next mount if not before. */
int f2fs_add_orphan(struct f2fs_sb *sb, uint32_t ino);
void f2fs_remove_orphan(struct f2fs_sb *sb, uint32_t ino);
bool f2fs_is_orphan(struct f2fs_sb *sb, uint32_t ino);
int f2fs_recover_orphans(struct f2fs_sb *sb);

/* i_addr word index of the first data address (after extra attrs) */
static inline uint32_t f2fs_addr_start(const struct f2fs_inode *inode)
{
	return inode->extra_isize / 4;
}
static inline uint32_t f2fs_i_addr(const struct f2fs_inode *inode, uint32_t idx)
{
	return get_le32(inode->node + I_ADDR + 4 * (f2fs_addr_start(inode) + idx));
}
static inline uint32_t f2fs_i_nid(const struct f2fs_inode *inode, int i)
{
	return get_le32(inode->node + I_NID + 4 * i);
}
static inline bool f2fs_is_encrypted(const struct f2fs_inode *inode)
{
	return inode->advise & FADVISE_ENCRYPT_BIT;
}
/* f2fs_compressed_file: on a directory the flag only passes on to new files */
static inline bool f2fs_is_compressed(const struct f2fs_inode *inode)
{
	return (inode->mode & S_IFMT) == S_IFREG && (inode->flags & F2FS_COMPR_FL);
}
/* ADDRS_PER_BLOCK: a compressed file's direct nodes hold whole clusters */
static inline uint32_t f2fs_addrs_per_block(const struct f2fs_inode *inode)
{
	uint32_t n = DEF_ADDRS_PER_BLOCK;

	if (f2fs_is_compressed(inode))
		n &= ~((1u << inode->log_cluster_size) - 1);
	return n;
}

/* ======================= inline data and dentries (inline.c) ======================= */

/*
 * Where the inline areas lie in the inode block, as the kernel's f2fs.h
 * helpers.  extra_isize and inline_xattr_addrs are range-checked when the
 * inode is loaded; the clamps only keep a bad value from ever producing
 * an offset outside the 4 KiB block.
 */
static inline uint32_t f2fs_extra_words(const struct f2fs_inode *inode)
{
	return F2FS_MIN((uint32_t)inode->extra_isize / 4, (uint32_t)DEF_ADDRS_PER_INODE);
}
static inline uint32_t f2fs_inline_xattr_words(const struct f2fs_inode *inode)
{
	return F2FS_MIN((uint32_t)inode->inline_xattr_addrs, (uint32_t)DEF_ADDRS_PER_INODE);
}
/* Inline data area: starts one reserved word after the extra attrs. */
static inline uint8_t *f2fs_inline_data_addr(const struct f2fs_inode *inode)
{
	return inode->node + I_ADDR + 4 * (f2fs_extra_words(inode) + DEF_INLINE_RESERVED_SIZE);
}
/*
 * MAX_INLINE_DATA: the i_addr words left after the extra attributes, the
 * inline xattr area and one reserved word.  The xattr words count even
 * when the inode has no F2FS_INLINE_XATTR flag: the kernel sizes the
 * layout from i_inline_xattr_size alone.
 */
static inline size_t f2fs_max_inline_data(const struct f2fs_inode *inode)
{
	uint32_t used = f2fs_extra_words(inode) + f2fs_inline_xattr_words(inode) +
			DEF_INLINE_RESERVED_SIZE;

	if (used >= DEF_ADDRS_PER_INODE)
		return 0;
	return 4 * (size_t)(DEF_ADDRS_PER_INODE - used);
}
/* Inline xattr area: the last inline_xattr_addrs words of i_addr. */
static inline uint8_t *f2fs_inline_xattr_addr(const struct f2fs_inode *inode)
{
	return inode->node + I_ADDR + 4 * (DEF_ADDRS_PER_INODE - f2fs_inline_xattr_words(inode));
}
/*
 * As the kernel's inline_xattr_size(): the area holds xattrs only when
 * F2FS_INLINE_XATTR is set.  Without the flag the space may be reserved
 * (e.g. inline-dentry directories) but must not be read as xattrs.
 */
static inline size_t f2fs_inline_xattr_size(const struct f2fs_inode *inode)
{
	if (!(inode->inline_flags & F2FS_INLINE_XATTR))
		return 0;
	return 4 * (size_t)f2fs_inline_xattr_words(inode);
}

ssize_t f2fs_read_inline_data(struct f2fs_inode *inode, void *buf, size_t len, uint64_t off);
/* The write side (caller holds the inode's write lock; len + off fit the area). */
void f2fs_write_inline_data(struct f2fs_inode *inode, const void *buf, size_t len, uint64_t off);
void f2fs_truncate_inline_inode(struct f2fs_inode *inode, uint64_t size);
int f2fs_convert_inline_inode(struct f2fs_sb *sb, struct f2fs_inode *inode);
/* Roll-forward of an fsync()ed inode block: 1 if its data was inline. */
int f2fs_recover_inline_data(struct f2fs_sb *sb, struct f2fs_inode *inode, const uint8_t *page);

/* A view of a dentry area: a dentry block or an inode's inline dentries. */
struct f2fs_dentry_ptr {
	uint32_t max;			/* number of slots */
	const uint8_t *bitmap;
	const uint8_t *dentry;		/* max * SIZE_OF_DIR_ENTRY bytes */
	const uint8_t *filename;	/* max * F2FS_SLOT_LEN bytes */
};
void f2fs_make_dentry_ptr_block(struct f2fs_dentry_ptr *d, const uint8_t *blk);
void f2fs_make_dentry_ptr_inline(struct f2fs_dentry_ptr *d, const struct f2fs_inode *inode);

/* ======================= directories (dir.c, hash.c) ======================= */

uint32_t f2fs_dentry_hash(const uint8_t *name, size_t len);
/*
 * utf8.c: the kernel's utf8_casefold (NFD + full case folding, Unicode
 * 12.1.0).  Returns the folded length (< outlen) or -EINVAL for a name that
 * is not UTF-8 or whose folding does not fit.  match_folded: 1 if s folds
 * to cf, 0 if not, -EINVAL if s is not UTF-8 (utf8_strncasecmp_folded).
 */
int f2fs_utf8_casefold(const uint8_t *s, size_t len, uint8_t *out, size_t outlen);
int f2fs_utf8_match_folded(const uint8_t *cf, size_t cflen, const uint8_t *s, size_t len);
void f2fs_dir_ra_inodes(struct f2fs_sb *sb, struct f2fs_inode *dir);
int f2fs_dir_lookup(struct f2fs_sb *sb, struct f2fs_inode *dir, const char *name, size_t len,
		    uint32_t *ino, unsigned int *file_type);
int f2fs_dir_iterate(struct f2fs_sb *sb, struct f2fs_inode *dir, uint64_t off,
		     f2fs_filldir_t fill, void *ctx);
/* The write side (callers hold the directory's write lock). */
int f2fs_add_link(struct f2fs_sb *sb, struct f2fs_inode *dir, const char *name, size_t len,
		  struct f2fs_inode *inode, bool new_inode);
int f2fs_delete_entry(struct f2fs_sb *sb, struct f2fs_inode *dir, const char *name, size_t len,
		      struct f2fs_inode *inode);
int f2fs_set_link(struct f2fs_sb *sb, struct f2fs_inode *dir, const char *name, size_t len,
		  struct f2fs_inode *inode);
int f2fs_make_empty_dir(struct f2fs_sb *sb, struct f2fs_inode *inode, struct f2fs_inode *parent);
/* 1 if dir holds only "." and "..", 0 if not, <0 on error */
int f2fs_empty_dir(struct f2fs_sb *sb, struct f2fs_inode *dir);
uint8_t f2fs_file_type(uint32_t mode);
int f2fs_set_dotdot(struct f2fs_sb *sb, struct f2fs_inode *dir, struct f2fs_inode *parent);
/* Names in their on-disk form (ciphertext in encrypted directories). */
int f2fs_add_link_disk(struct f2fs_sb *sb, struct f2fs_inode *dir, const uint8_t *name,
		       size_t len, struct f2fs_inode *inode);
int f2fs_dir_lookup_disk(struct f2fs_sb *sb, struct f2fs_inode *dir, const uint8_t *name,
			 size_t len, uint32_t *ino);
int f2fs_delete_entry_disk(struct f2fs_sb *sb, struct f2fs_inode *dir, const uint8_t *name,
			   size_t len, struct f2fs_inode *inode);

/* ======================= xattrs and POSIX ACLs (xattr.c, acl.c) ======================= */

ssize_t f2fs_xattr_get(struct f2fs_sb *sb, struct f2fs_inode *inode, const char *name,
		       void *buf, size_t size);
ssize_t f2fs_xattr_list(struct f2fs_sb *sb, struct f2fs_inode *inode, char *buf, size_t size);
#define F2FS_XATTR_CREATE	0x1	/* XATTR_CREATE */
#define F2FS_XATTR_REPLACE	0x2	/* XATTR_REPLACE */
/* value NULL removes; caller holds the inode's write lock */
int f2fs_xattr_set(struct f2fs_sb *sb, struct f2fs_inode *inode, const char *name,
		   const void *value, size_t size, int flags);
int f2fs_xattr_set_raw(struct f2fs_sb *sb, struct f2fs_inode *inode, int index, const char *name,
		       const void *value, size_t size, int flags);
/* POSIX ACLs (acl.c): the system.posix_acl_* xattrs in the VFS's format, */
ssize_t f2fs_acl_get_xattr(struct f2fs_sb *sb, struct f2fs_inode *inode, int index, void *buf,
			   size_t size);
int f2fs_acl_set_xattr(struct f2fs_sb *sb, struct f2fs_inode *inode, int index, const void *value,
		       size_t size, int flags, bool kill_sgid);
/* and their upkeep: chmod rewrites the access ACL; new inodes inherit default ACLs. */
int f2fs_acl_chmod(struct f2fs_sb *sb, struct f2fs_inode *inode);
int f2fs_acl_inherit(struct f2fs_sb *sb, struct f2fs_inode *dir, struct f2fs_inode *inode);
bool f2fs_has_default_acl(struct f2fs_sb *sb, struct f2fs_inode *dir);
/* Raw access by index, for the encryption context (index 9, name "c"). */
ssize_t f2fs_xattr_get_raw(struct f2fs_sb *sb, struct f2fs_inode *inode, int index,
			   const char *name, size_t name_len, void *buf, size_t size);

/* ======================= NAT and node blocks (nat.c, node.c) ======================= */

struct f2fs_node_info {
	uint32_t nid;
	uint32_t ino;
	uint32_t blkaddr;
	uint8_t version;
};

int f2fs_get_node_info(struct f2fs_sb *sb, uint32_t nid, struct f2fs_node_info *ni);
/* Read ahead, in one batch (depth requests in flight), the NAT blocks of nids[0..n). */
void f2fs_ra_nat_blocks(struct f2fs_sb *sb, const uint32_t *nids, uint32_t n, unsigned int depth);
/* node.c: read the inode blocks of inos ahead, in batches (a listing's entries) */
void f2fs_ra_inode_blocks(struct f2fs_sb *sb, const uint32_t *inos, uint32_t n);
/* Node read-ahead as configured: 0 (off) or blocks per batch, and requests in flight. */
uint32_t f2fs_node_ra_blocks(const struct f2fs_sb *sb);
unsigned int f2fs_node_ra_depth(const struct f2fs_sb *sb);

/*
 * The writable NAT (nat.c): changed entries are kept in memory until a
 * checkpoint writes them to the NAT journal or to the shadow NAT blocks.
 * Nids whose nodes were removed become allocatable again only after that
 * checkpoint, as in the kernel, so the last checkpoint's tree stays intact.
 */
struct f2fs_nat_cache_entry {
	uint32_t nid, ino, blkaddr;
	uint8_t version;
	bool dirty;
	struct f2fs_nat_cache_entry *hnext;
};

struct f2fs_nm_info {
	pthread_mutex_t lock;
	struct f2fs_nat_cache_entry **hash;
	uint32_t hash_size;		/* power of two */
	uint32_t nr_entries, nr_dirty;
	uint8_t *free_nids;		/* bitmap, 1 = allocatable (scanned blocks only) */
	uint32_t nr_free_nids;
	uint32_t next_free_nid;		/* allocation hint */
	uint8_t *scanned;		/* NAT blocks whose nids the map holds */
	uint32_t nat_blocks, nr_unscanned, next_scan;
	uint8_t *scan_buf;
	uint32_t valid_node_count, valid_inode_count;
};

int f2fs_build_node_manager(struct f2fs_sb *sb);
void f2fs_destroy_node_manager(struct f2fs_sb *sb);
int f2fs_alloc_nid(struct f2fs_sb *sb, uint32_t *nid);
/* Add the nids of the NAT blocks from nid's on (a batch) to the free map. */
int f2fs_build_free_nids(struct f2fs_sb *sb, uint32_t nid);
/* Give back a nid that was allocated but never used for a node. */
void f2fs_alloc_nid_failed(struct f2fs_sb *sb, uint32_t nid);
/* Record that node nid (of inode ino) now lives at blkaddr (NULL_ADDR: removed). */
void f2fs_set_node_addr(struct f2fs_sb *sb, uint32_t nid, uint32_t ino, uint32_t blkaddr);
int f2fs_flush_nat_entries(struct f2fs_sb *sb, uint8_t *new_nat_bitmap, uint32_t *next_free_nid);
/*
 * Read node block nid into buf (its dirty copy, the block cache or the
 * device) and check its footer: node nid of inode ino at node offset ofs
 * (F2FS_NODE_OFS_ANY: any offset).  -EUCLEAN, reported, if it is not.
 */
#define F2FS_NODE_OFS_ANY UINT32_MAX
int f2fs_get_node(struct f2fs_sb *sb, uint32_t nid, uint32_t ino, uint32_t ofs, uint8_t *buf);
int f2fs_check_node_footer(struct f2fs_sb *sb, const uint8_t *blk, uint32_t nid, uint32_t ino,
			   uint32_t ofs);
/* Dirty nodes (node.c), kept by nid until a checkpoint or fsync writes them. */
struct f2fs_node_table;
int f2fs_build_node_table(struct f2fs_sb *sb);
void f2fs_destroy_node_table(struct f2fs_sb *sb);
int f2fs_set_node_dirty(struct f2fs_sb *sb, uint32_t nid, const uint8_t *buf);
uint32_t f2fs_nr_dirty_nodes(struct f2fs_sb *sb);
/* A new node of inode ino at node offset ofs (0: the inode itself, nid = ino). */
int f2fs_new_node(struct f2fs_sb *sb, uint32_t ino, uint32_t ofs, bool cold, uint32_t *nid,
		  uint8_t *blk);
int f2fs_remove_node(struct f2fs_sb *sb, uint32_t nid, uint32_t ino, bool is_inode);
int f2fs_write_dirty_nodes(struct f2fs_sb *sb);
/* fsync: ino's dirty dnodes to the warm node log, then a device flush; concurrent
 * callers commit as one group.  Caller holds ino's write lock and cp_rwsem shared.
 * atomic: an atomic write's commit (its marked block goes after a flush). */
int f2fs_fsync_node_pages(struct f2fs_sb *sb, uint32_t ino, bool dent_mark, bool atomic);
bool f2fs_nat_checkpointed(struct f2fs_sb *sb, uint32_t nid);
int f2fs_claim_nid(struct f2fs_sb *sb, uint32_t nid);
void f2fs_fill_node_footer(uint8_t *blk, uint32_t nid, uint32_t ino, uint32_t ofs, bool cold);
bool f2fs_is_dnode(const uint8_t *blk);
uint64_t f2fs_node_footer_cp_ver(const struct f2fs_sb *sb);
/* i_inode_checksum of a raw inode block; update only where the inode has one */
uint32_t f2fs_inode_checksum(const struct f2fs_sb *sb, const uint8_t *node);
void f2fs_inode_update_checksum(const struct f2fs_sb *sb, uint8_t *node);

/*
 * The node tree (node.c).  f2fs_get_dnode_of_data is the one walk from an
 * inode down to the direct node that maps a file block.
 */
enum f2fs_dnode_mode {
	LOOKUP_NODE,		/* a missing node: -ENOENT, dn->hole_blocks set */
	LOOKUP_NODE_RA,		/* as LOOKUP_NODE; the precache will read the
				 * direct node's neighbours ahead with it */
	ALLOC_NODE,		/* missing nodes are created (writable mount,
				 * the inode's write lock held) */
};

struct dnode_of_data {
	struct f2fs_inode *inode;
	uint32_t nid;		/* the direct node; the ino for the inode's own slots */
	bool is_inode;
	uint8_t *addrs;		/* its first address slot: in inode->node, or node[] */
	uint32_t naddrs;	/* how many slots it has */
	uint32_t ofs_in_node;	/* the slot of the block asked for */
	uint8_t version;	/* nid's NAT version, for summaries (ALLOC_NODE) */
	uint64_t hole_blocks;	/* -ENOENT: blocks from the one asked for to the
				 * end of the missing subtree */
	_Alignas(F2FS_BLKSIZE) uint8_t node[F2FS_BLKSIZE];	/* a direct node's copy */
};

int f2fs_get_dnode_of_data(struct f2fs_sb *sb, struct f2fs_inode *inode, uint32_t lblk,
			   enum f2fs_dnode_mode mode, struct dnode_of_data *dn);
/*
 * Every direct node of an inode below file block end, and the inode's own
 * slots, in file order, read a batch at a time (f2fs_walk_dnodes).
 */
typedef int (*f2fs_dnode_fn)(void *arg, uint64_t lblk, const uint8_t *addrs, uint32_t naddrs);
int f2fs_walk_dnodes(struct f2fs_sb *sb, struct f2fs_inode *inode, uint64_t end,
		     f2fs_dnode_fn fn, void *arg);
/* Queue a changed direct node for writing (nothing for the inode's own slots). */
int f2fs_put_dnode(struct f2fs_sb *sb, struct dnode_of_data *dn);
/* Free count data blocks (real or reserved) from dn's slot ofs_in_node on. */
void f2fs_truncate_data_blocks_range(struct f2fs_sb *sb, struct dnode_of_data *dn, uint32_t count);
/* Free every data block and node of inode from file block `from` on. */
int f2fs_truncate_inode_blocks(struct f2fs_sb *sb, struct f2fs_inode *inode, uint64_t from);
uint64_t f2fs_max_file_blocks(const struct f2fs_inode *inode);
/* The first file block a direct node at node offset ofs maps. */
uint64_t f2fs_start_bidx_of_node(const struct f2fs_inode *inode, uint32_t ofs);

/*
 * The first slot in [i, n) of an address array that is not NULL_ADDR, or
 * n.  A small file's inode has ~900 slots, nearly all of them empty:
 * truncation and the extent cache's learning skip them 64 bytes at a time.
 */
static inline uint32_t f2fs_next_used_slot(const uint8_t *addrs, uint32_t i, uint32_t n)
{
	for (; i + 16 <= n; i += 16) {
		const uint8_t *p = addrs + 4 * i;
		uint64_t a, b, c, d, e, f, g, h;

		memcpy(&a, p, 8), memcpy(&b, p + 8, 8), memcpy(&c, p + 16, 8), memcpy(&d, p + 24, 8);
		memcpy(&e, p + 32, 8), memcpy(&f, p + 40, 8), memcpy(&g, p + 48, 8);
		memcpy(&h, p + 56, 8);
		if (a | b | c | d | e | f | g | h)
			break;
	}
	for (; i < n; i++)
		if (get_le32(addrs + 4 * i) != NULL_ADDR)
			return i;
	return n;
}

static inline uint32_t f2fs_node_nid(const uint8_t *blk) { return get_le32(blk + NF_NID); }
static inline uint32_t f2fs_node_ino(const uint8_t *blk) { return get_le32(blk + NF_INO); }
static inline uint32_t f2fs_node_flag(const uint8_t *blk) { return get_le32(blk + NF_FLAG); }
static inline uint32_t f2fs_node_ofs(const uint8_t *blk)
{
	return f2fs_node_flag(blk) >> OFFSET_BIT_SHIFT;
}
static inline uint64_t f2fs_node_cp_ver(const uint8_t *blk) { return get_le64(blk + NF_CP_VER); }
static inline uint32_t f2fs_node_next_blkaddr(const uint8_t *blk)
{
	return get_le32(blk + NF_NEXT_BLKADDR);
}

/* ======================= data: mapping, reads, writes, truncation (data.c) ======================= */

/*
 * Map logical block lblk of inode.  On return *pblk is the physical block
 * (NULL_ADDR for a hole, NEW_ADDR for reserved-but-unwritten) and *len the
 * number of following blocks mapped the same way (contiguous or all holes),
 * at most maxlen.
 */
int f2fs_map_blocks(struct f2fs_sb *sb, struct f2fs_inode *inode, uint32_t lblk,
		    uint32_t maxlen, uint32_t *pblk, uint32_t *len);
/* Put every mapped run of a regular file into its read extent cache (read lock held). */
int f2fs_precache_inode(struct f2fs_sb *sb, struct f2fs_inode *inode);
/* Read one data block: 1 if mapped, 0 if a hole (buf zeroed), <0 on error. */
/*
 * Dentry blocks lblk..lblk+n of a directory (at most F2FS_DIR_RA_BLOCKS)
 * read ahead into the cache in sorted, coalesced requests, for a listing
 * that is about to read them one by one; off with node_ra=0.
 */
#define F2FS_DIR_RA_BLOCKS 64
void f2fs_ra_dir_blocks(struct f2fs_sb *sb, struct f2fs_inode *dir, uint32_t lblk, uint32_t n);
int f2fs_read_data_block(struct f2fs_sb *sb, struct f2fs_inode *inode, uint32_t lblk,
			 uint8_t *buf);
ssize_t f2fs_file_read(struct f2fs_sb *sb, struct f2fs_inode *inode, void *buf, size_t len,
		       uint64_t off);
/* The mapped blocks of a plain (not inline, not compressed) file, past
 * i_size too (the verity metadata); holes read as zeros. */
ssize_t f2fs_read_range(struct f2fs_sb *sb, struct f2fs_inode *inode,
			const struct fscrypt_inode_info *ci, void *buf, size_t len, uint64_t off);
/* Read bytes from skip bytes into the physically contiguous blocks from pblk,
 * which hold file blocks lblk on (decrypted when ci is set). */
int f2fs_read_mapped(struct f2fs_sb *sb, const struct fscrypt_inode_info *ci, uint32_t pblk,
		     uint64_t lblk, uint32_t skip, size_t bytes, uint8_t *dst);
/* The n address slots of file blocks [start, start + n), which one direct node
 * holds (a compressed file's cluster); missing nodes read as NULL_ADDR. */
int f2fs_get_cluster_addrs(struct f2fs_sb *sb, struct f2fs_inode *inode, uint32_t start,
			   uint32_t *addrs, uint32_t n);
/* The write path (caller holds the inode's write lock and the checkpoint read lock). */
ssize_t f2fs_file_write(struct f2fs_sb *sb, struct f2fs_inode *inode, const void *buf,
			size_t len, uint64_t off);
int f2fs_write_data_block(struct f2fs_sb *sb, struct f2fs_inode *inode, uint32_t lblk,
			  const uint8_t *buf);
/*
 * Whether a write of nblocks to inode takes sb->writepages (-o serialize_io):
 * F2FS_SER_NONE, F2FS_SER_FULL (allocation and building the requests,
 * encryption included, under it; the device writes after) or
 * F2FS_SER_ALLOC (allocation only).
 */
enum { F2FS_SER_NONE, F2FS_SER_FULL, F2FS_SER_ALLOC };
int f2fs_should_serialize_io(struct f2fs_sb *sb, const struct f2fs_inode *inode,
			     uint64_t nblocks);
/*
 * Write whole blocks first .. first + n - 1 from pages[] (writeback): ser
 * as f2fs_should_serialize_io says; lock says who holds writepages.
 */
enum {
	F2FS_WP_TAKE,		/* take it if ser says so */
	F2FS_WP_HELD,		/* the caller holds it, and keeps it */
	F2FS_WP_HELD_RELEASE,	/* the caller holds it; released before the device writes */
};
int f2fs_write_pages(struct f2fs_sb *sb, struct f2fs_inode *inode, uint8_t *const *pages,
		     uint64_t first, uint32_t n, int ser, int lock);
/* writeback.c: the page cache's write(2) and writeback (caller: inode write lock, cp_rwsem) */
bool f2fs_may_cache_write(struct f2fs_sb *sb, const struct f2fs_inode *inode);
ssize_t f2fs_cached_write(struct f2fs_sb *sb, struct f2fs_inode *inode, const uint8_t *buf,
			  size_t len, uint64_t off);
int f2fs_writeback_inode(struct f2fs_sb *sb, struct f2fs_inode *inode, bool background);
/* truncate_pagecache: before a truncation to size, what lies past it goes unwritten */
void f2fs_truncate_pages(struct f2fs_sb *sb, struct f2fs_inode *inode, uint64_t size);
/* truncate_pagecache_range: before [off, end) is punched or zeroed, the pages inside
 * it go unwritten and those it cuts read zeros there */
void f2fs_punch_pages(struct f2fs_sb *sb, struct f2fs_inode *inode, uint64_t off, uint64_t end);
/* file.c: write back one file's dirty pages, taking the locks a change takes */
int f2fs_writeback_file(struct f2fs_sb *sb, uint32_t ino);
/* write(2) through the page cache when -o writeback allows it (file.c f2fs_write) */
ssize_t f2fs_file_write_cached(struct f2fs_sb *sb, struct f2fs_inode *inode, const void *buf,
			       size_t len, uint64_t off);
/* The current contents of file block lblk (zeros for a hole), to merge a partial write into. */
struct fscrypt_inode_info;
int f2fs_read_for_merge(struct f2fs_sb *sb, struct f2fs_inode *inode,
			const struct fscrypt_inode_info *ci, uint32_t lblk, uint8_t *buf);
/* Write [off, off + len) out of place; *written (may be NULL) says how much got there. */
int f2fs_write_blocks(struct f2fs_sb *sb, struct f2fs_inode *inode, const uint8_t *src,
		      size_t len, uint64_t off, size_t *written);
ssize_t f2fs_symlink_write(struct f2fs_sb *sb, struct f2fs_inode *inode, const void *buf,
			   size_t len);
int f2fs_truncate(struct f2fs_sb *sb, struct f2fs_inode *inode, uint64_t size);
/* Atomic writes: a truncate inside the write (size and blocks in the COW inode,
 * the file's own blocks untouched), and the commit's move of the COW inode's
 * blocks into the file (caller holds the inode's write lock and cp_rwsem). */
int f2fs_atomic_truncate(struct f2fs_sb *sb, struct f2fs_inode *inode, uint64_t size);
int f2fs_atomic_move_blocks(struct f2fs_sb *sb, struct f2fs_inode *inode);
int f2fs_truncate_hole(struct f2fs_sb *sb, struct f2fs_inode *inode, uint64_t start, uint64_t end);
int f2fs_reserve_blocks(struct f2fs_sb *sb, struct f2fs_inode *inode, uint64_t start, uint64_t end);
/* fallocate on a pinned file: real, zeroed blocks for the holes of [start, end), in whole
 * sections of their own; *last receives the end of what was allocated (past end). */
int f2fs_allocate_pinned_blocks(struct f2fs_sb *sb, struct f2fs_inode *inode, uint64_t start,
				uint64_t end, uint64_t *last);

/* ======================= compression (compress.c, lzorle.c) ======================= */

struct f2fs_dic;
struct f2fs_compress_pool;
struct f2fs_cluster_cache;
int f2fs_compress_init(struct f2fs_sb *sb);
void f2fs_compress_destroy(struct f2fs_sb *sb);
/* Parse and check i_compress_* of an inode with F2FS_COMPR_FL. */
int f2fs_compress_check_inode(struct f2fs_sb *sb, struct f2fs_inode *inode);
ssize_t f2fs_read_compressed(struct f2fs_sb *sb, struct f2fs_inode *inode,
			     const struct fscrypt_inode_info *ci, uint8_t *dst, size_t len,
			     uint64_t off);
/* Free the inode's decompressed cluster (no reader may be running). */
void f2fs_compress_drop_cache(struct f2fs_inode *inode);
/* One codec call the other way: src[0..rlen) into at most cap bytes at dst
 * (which must hold f2fs_compress_bound bytes); the length, or -E2BIG. */
ssize_t f2fs_compress(struct f2fs_dic *dic, unsigned int algorithm, unsigned int level,
		      const uint8_t *src, size_t rlen, uint8_t *dst, size_t cap);
size_t f2fs_compress_bound(unsigned int algorithm, size_t rlen);
/* The codec table's number for a name ("lz4", "lzo-rle"), or -EINVAL. */
int f2fs_compress_algorithm(const char *name);
bool f2fs_compress_level_valid(unsigned int algorithm, unsigned int level);
/* n whole clusters from cluster on (data[i] each: 2^log_cluster_size
 * blocks), the last with valid pages inside i_size, each compressed when
 * allowed and worth a block; *done: how many got their blocks. */
int f2fs_write_clusters(struct f2fs_sb *sb, struct f2fs_inode *inode,
			const struct fscrypt_inode_info *ci, uint32_t cluster, uint32_t n,
			const uint8_t *const *data, uint32_t valid, bool may_compress,
			uint32_t *done);
/* One of them. */
int f2fs_write_cluster(struct f2fs_sb *sb, struct f2fs_inode *inode,
		       const struct fscrypt_inode_info *ci, uint32_t cluster, const uint8_t *data,
		       uint32_t valid, bool may_compress);
/* write(2) to a compressed file: whole clusters from buf, partial ones read, patched, written. */
int f2fs_write_compressed(struct f2fs_sb *sb, struct f2fs_inode *inode,
			  const struct fscrypt_inode_info *ci, const uint8_t *src, size_t len,
			  uint64_t off, size_t *written);
/* Writeback of a compressed file's dirty pages (sorted): whole clusters, each written once. */
int f2fs_write_dirty_clusters(struct f2fs_sb *sb, struct f2fs_inode *inode,
			      const struct f2fs_page *v, uint32_t nr);
/* Cut a compressed file to size: 1 when done, 0 to truncate as any file. */
int f2fs_truncate_compressed(struct f2fs_sb *sb, struct f2fs_inode *inode, uint64_t size);
/* f2fs_may_compress: a regular file or directory without inline data or pin */
bool f2fs_may_compress(struct f2fs_sb *sb, const struct f2fs_inode *inode);
void f2fs_set_compress_context(struct f2fs_sb *sb, struct f2fs_inode *inode);
void f2fs_clear_compress_context(struct f2fs_inode *inode);
/* A new file or directory named name in dir: extensions, then inheritance. */
void f2fs_compress_new_inode(struct f2fs_sb *sb, const struct f2fs_inode *dir,
			     struct f2fs_inode *inode, const char *name, size_t len);
/* F2FS_IOC_RELEASE/RESERVE_COMPRESS_BLOCKS over the clusters inside i_size. */
int f2fs_change_compress_reservation(struct f2fs_sb *sb, struct f2fs_inode *inode, bool release,
				     uint64_t *changed);
/* F2FS_IOC_COMPRESS_FILE / DECOMPRESS_FILE: every cluster written again. */
int f2fs_recompress_file(struct f2fs_sb *sb, struct f2fs_inode *inode, bool compress);
/* One codec call: src[0..clen) to exactly rlen bytes; dic may be NULL. */
int f2fs_decompress(struct f2fs_dic *dic, unsigned int algorithm, const uint8_t *src,
		    size_t clen, uint8_t *dst, size_t rlen);
/* The kernel's lzo-rle (and plain LZO1X): 0 with *out_len set, or -EIO. */
int f2fs_lzorle_decompress(const uint8_t *in, size_t in_len, uint8_t *out, size_t *out_len);

/* ======================= segments, SIT, summaries (segment.c) ======================= */

struct f2fs_curseg {
	uint32_t segno;
	uint16_t blkoff;
	uint8_t alloc_type;
	uint8_t *sum;			/* the summary block with its journal */
};

/* In-memory SIT entry (seg_entry): current and checkpointed validity. */
struct f2fs_seg_entry {
	uint16_t valid_blocks;
	uint16_t ckpt_valid_blocks;	/* valid in the last checkpoint, or written
					 * since (as the kernel's: SSR reuses neither) */
	uint8_t type;			/* curseg type that wrote it */
	bool written;			/* allocated from since the last checkpoint */
	uint64_t mtime;
	uint8_t cur_valid_map[SIT_VBLOCK_MAP_SIZE];
	uint8_t ckpt_valid_map[SIT_VBLOCK_MAP_SIZE];	/* likewise */
};

/*
 * The writable segment manager, built on the first write.  Blocks are only
 * ever allocated in slots that hold nothing now and held nothing at the
 * last checkpoint (whole free segments, or free slots of dirty data
 * segments under SSR), so a crash before the next checkpoint commits can
 * never have overwritten anything the last checkpoint refers to.
 */
struct f2fs_sm_info {
	pthread_mutex_t lock;		/* everything below and sb->curseg */
	struct f2fs_seg_entry *sentries;
	uint8_t *dirty_sentries;	/* bitmap: SIT entries to flush */
	uint32_t nr_dirty_sentries;
	uint32_t free_segments;
	uint64_t valid_blocks;		/* the checkpoint's valid_block_count: written
					 * blocks plus NEW_ADDR reservations; kept by
					 * the data and node layers, not by the SIT */
	/*
	 * Blocks counted since the last checkpoint, frees not subtracted: a
	 * roll-forward replays fsync()ed blocks on top of the checkpoint, in
	 * which the blocks freed since still count, so it may need up to
	 * cp_valid_blocks + taken_since_cp of the user blocks.
	 */
	uint64_t cp_valid_blocks;
	uint64_t taken_since_cp;
	uint32_t gc_victim_sec;		/* being cleaned: SSR keeps out (or UINT32_MAX) */
	uint8_t *pinned_secmap;		/* sections holding blocks of pinned files (gc.c) */
	uint64_t mount_time;		/* for segment mtimes (seconds) */
	uint64_t elapsed_base;		/* checkpoint elapsed_time at mount */
	/*
	 * SSA blocks changed since they were last written (a retired log's
	 * summary, an owner changed outside the logs), as the kernel keeps
	 * them in the meta page cache: written at the next checkpoint as
	 * sorted runs, or when F2FS_SSA_DIRTY_MAX are held.
	 */
	struct f2fs_ssa_dirty {
		uint32_t segno;
		uint8_t *blk;
	} *ssa_dirty;
	uint32_t nr_ssa_dirty, cap_ssa_dirty;
};
#define F2FS_SSA_DIRTY_MAX	256	/* 1 MiB of SSA blocks: 512 MiB of main area */

int f2fs_build_segment_manager(struct f2fs_sb *sb);
void f2fs_destroy_segment_manager(struct f2fs_sb *sb);
int f2fs_build_sit(struct f2fs_sb *sb);
/* The SSA block of segno as it stands (the dirty copy, else the device's). */
int f2fs_read_ssa(struct f2fs_sb *sb, uint32_t segno, uint8_t *buf);
/* Write the dirty SSA blocks (before a checkpoint pack). */
int f2fs_flush_ssa(struct f2fs_sb *sb);
/* Allocate the next block of log `type` for a block whose summary entry is
 * sum (nid, version, ofs_in_node); returns its address in *blkaddr. */
int f2fs_allocate_block(struct f2fs_sb *sb, int type, uint32_t nid, uint8_t version,
			uint16_t ofs_in_node, uint32_t *blkaddr);
int f2fs_allocate_block_next(struct f2fs_sb *sb, int type, uint32_t nid, uint8_t version,
			     uint16_t ofs_in_node, uint32_t *blkaddr, uint32_t *next);
/*
 * Up to `want` blocks of log `type` as one run (addresses *blkaddr ..
 * *blkaddr + *got - 1, *got >= 1) for slots ofs_in_node, ofs_in_node + 1,
 * ... of node nid; a run ends early where the segment ends or, under SSR,
 * at a used slot: the caller asks again for the rest.
 */
int f2fs_allocate_run(struct f2fs_sb *sb, int type, uint32_t nid, uint8_t version,
		      uint16_t ofs_in_node, uint32_t want, uint32_t *blkaddr, uint32_t *got);
int f2fs_recover_block(struct f2fs_sb *sb, uint32_t blkaddr, uint32_t nid, uint8_t version,
		       uint16_t ofs);
/* The live data block at blkaddr now belongs to slot ofs of dnode nid (a commit
 * moving an atomic write's block): its summary entry says so. */
int f2fs_set_block_owner(struct f2fs_sb *sb, uint32_t blkaddr, uint32_t nid, uint8_t version,
			 uint16_t ofs);
int f2fs_allocate_new_segments(struct f2fs_sb *sb);
/* Move log type to the first segment of a wholly free section (-ENOSPC if none). */
int f2fs_new_section(struct f2fs_sb *sb, int type);
int f2fs_restore_node_summaries(struct f2fs_sb *sb);
/* The block at blkaddr no longer holds live data. */
void f2fs_invalidate_block(struct f2fs_sb *sb, uint32_t blkaddr);
uint32_t f2fs_free_segments(struct f2fs_sb *sb);
/* Blocks a user may still fill (user blocks minus used). */
uint64_t f2fs_free_user_blocks(struct f2fs_sb *sb);
/* valid_block_count: written data and node blocks and NEW_ADDR reservations */
void f2fs_add_valid_blocks(struct f2fs_sb *sb, int64_t n);
/* Count n more used blocks if they fit in user_block_count, else -ENOSPC. */
int f2fs_take_user_blocks(struct f2fs_sb *sb, uint32_t n);
/* Whether a roll-forward from the last checkpoint could need more blocks
 * than user_block_count (then an fsync must checkpoint instead). */
bool f2fs_rollforward_may_overflow(struct f2fs_sb *sb);
/* Checkpoint helpers: flush SIT changes, then adopt the new state. */
int f2fs_flush_sit_entries(struct f2fs_sb *sb, uint8_t *sit_bitmap);
void f2fs_sit_checkpoint_done(struct f2fs_sb *sb);
uint64_t f2fs_segment_mtime(struct f2fs_sb *sb);
uint32_t f2fs_sit_block_addr(const struct f2fs_sb *sb, uint32_t segno);
/* FITRIM: discard the runs of free segments in [start, end) at least minlen blocks long;
 * the blocks discarded.  Caller holds cp_rwsem exclusively, after a checkpoint. */
int f2fs_trim_free_segments(struct f2fs_sb *sb, uint32_t start, uint32_t end, uint64_t minlen,
			    uint64_t *trimmed);
/* Counts for the status report (ioctl.c), under sm->lock. */
void f2fs_segment_status(struct f2fs_sb *sb, struct f2fs_status *st);

/* ======================= checkpoint (checkpoint.c) ======================= */

int f2fs_get_valid_checkpoint(struct f2fs_sb *sb);
int f2fs_read_orphans(struct f2fs_sb *sb);
int f2fs_write_checkpoint(struct f2fs_sb *sb, bool umount);
/* (f2fs_sync_fs, in api.h: the dirty nodes, then a checkpoint) */
/* f2fs_test_bit: version and validity bitmaps are MSB-first within each byte */
static inline bool f2fs_test_bit(uint32_t nr, const uint8_t *map)
{
	return map[nr >> 3] & (0x80u >> (nr & 7));
}
/* test_bit_le: dentry bitmaps are LSB-first */
static inline bool f2fs_test_bit_le(uint32_t nr, const uint8_t *map)
{
	return map[nr >> 3] & (1u << (nr & 7));
}

/* ======================= atomic writes (ioctl.c) ======================= */

/* file.c: fsync must commit a checkpoint for inode (the kernel's need_do_checkpoint):
 * the roll-forward cannot express its state.  Caller holds the inode's lock. */
bool f2fs_need_do_checkpoint(struct f2fs_sb *sb, const struct f2fs_inode *inode);

/* Drop an atomic write: the COW inode goes, the size is the file's again.
 * Caller holds the inode's write lock and cp_rwsem shared. */
int f2fs_drop_atomic_write(struct f2fs_sb *sb, struct f2fs_inode *inode);
/* Unmount: every atomic write still open is dropped. */
void f2fs_drop_all_atomic_writes(struct f2fs_sb *sb);

/* ======================= cleaning (gc.c) ======================= */

enum f2fs_gc_policy { F2FS_GC_GREEDY, F2FS_GC_COST_BENEFIT };
int f2fs_gc_locked(struct f2fs_sb *sb, enum f2fs_gc_policy policy, uint32_t max_victims,
		   uint32_t *freed);
void f2fs_background_gc(struct f2fs_sb *sb);
/* Clean section sec alone (F2FS_IOC_GARBAGE_COLLECT_RANGE): -ENODATA if it holds
 * nothing valid, -EBUSY if a log writes into it.  Caller holds cp_rwsem exclusively. */
int f2fs_gc_section_locked(struct f2fs_sb *sb, uint32_t sec);
/* i_gc_failures, after which cleaning moves a pinned file anyway (the kernel's default) */
#define F2FS_GC_PIN_FILE_THRESHOLD 2048
/* Checkpoint, then clean, when free segments run low or dirty nodes pile up (no locks held). */
void f2fs_balance_fs(struct f2fs_sb *sb);
#define F2FS_MAX_DIRTY_NODES 16384	/* 64 MiB of dirty node blocks */

/* ======================= recovery (recovery.c) ======================= */

/* Scan the warm node log for fsync()ed dnodes newer than the checkpoint. */
int f2fs_find_fsync_dnodes(struct f2fs_sb *sb, uint32_t *count);
int f2fs_recover_fsync_data(struct f2fs_sb *sb);

/* ======================= the per-mount context ======================= */

#define F2FS_ICACHE_BUCKETS 8192	/* inode numbers are dense: one per bucket up to 8192 */

/* ======================= quota (dquot.c, quota_tree.c, quota.c) ======================= */

enum { F2FS_USRQUOTA, F2FS_GRPQUOTA, F2FS_PRJQUOTA };

/* One id's usage and limits, in the units of the kernel's struct mem_dqblk:
 * space and its limits in bytes, inodes in inodes, times in seconds. */
struct f2fs_dquot {
	uint32_t id;
	uint64_t bhardlimit, bsoftlimit, curspace;
	uint64_t ihardlimit, isoftlimit, curinodes;
	int64_t btime, itime;		/* grace deadlines once past a soft limit; 0 none */
};

/* One quota type: the ids with usage or limits, sorted by id. */
struct f2fs_quota_type {
	uint32_t ino;			/* the quota file's inode; 0 when this type is off */
	bool enforce;			/* limits on (-o usrquota/grpquota/prjquota/quota) */
	bool dirty;			/* changed since the file was last written */
	uint32_t bgrace, igrace, info_flags;	/* the v2 info block */
	struct f2fs_dquot *dq;
	size_t n, cap;
	uint8_t *image;			/* the file as last read or written */
	size_t image_len;
};

struct f2fs_quota {
	pthread_mutex_t lock;		/* a leaf lock: the tables only */
	bool on;			/* usage is tracked (quota_ino with its files read) */
	bool need_repair;		/* the files cannot be trusted: CP_QUOTA_NEED_FSCK_FLAG */
	struct f2fs_quota_type t[F2FS_MAX_QUOTAS];
};

/* dquot.c: charging as the kernel's dquot_* do.  Blocks are 4 KiB; quota
 * files themselves are never charged.  alloc_* return -EDQUOT past a hard
 * limit, or past a soft one whose grace ran out, when limits are on. */
int f2fs_dquot_alloc_block(struct f2fs_sb *sb, const struct f2fs_inode *inode, uint64_t n);
void f2fs_dquot_free_block(struct f2fs_sb *sb, const struct f2fs_inode *inode, uint64_t n);
int f2fs_dquot_alloc_inode(struct f2fs_sb *sb, const struct f2fs_inode *inode);
/* An inode goes: its last (i_blocks - 1) blocks and the inode itself. */
void f2fs_dquot_drop_inode(struct f2fs_sb *sb, const struct f2fs_inode *inode);
/* Move an inode's charges to new owners (ids[type]); force skips the limits
 * (recovery replays what was already allowed). */
int f2fs_dquot_transfer(struct f2fs_sb *sb, const struct f2fs_inode *inode,
			const uint32_t ids[F2FS_MAX_QUOTAS], bool force);
bool f2fs_is_quota_file(const struct f2fs_sb *sb, uint32_t ino);
void f2fs_dquot_init(struct f2fs_sb *sb);
void f2fs_dquot_destroy(struct f2fs_sb *sb);
/* The table entry for id, created (zeroed) if missing; NULL without memory.
 * Caller holds quota.lock. */
struct f2fs_dquot *f2fs_dquot_get(struct f2fs_quota_type *qt, uint32_t id);

/* quota_tree.c: the v2 (vfsv1) tree format of fs/quota/quota_tree.c */
int f2fs_qtree_parse(struct f2fs_sb *sb, int type, const uint8_t *buf, size_t len,
		     struct f2fs_quota_type *qt);
/* Build the file for qt's table: *out (malloc'd), *len a multiple of 1 KiB. */
int f2fs_qtree_build(int type, const struct f2fs_quota_type *qt, uint8_t **out, size_t *len);

/* quota.c: the quota files (read at mount, written by each checkpoint) */
int f2fs_quota_load(struct f2fs_sb *sb);
/* Write the changed quota files; the caller holds f2fs_lock_all. */
int f2fs_quota_sync(struct f2fs_sb *sb);
/* Turn the mount's limits on (after recovery). */
void f2fs_quota_enforce(struct f2fs_sb *sb);

struct f2fs_sb {
	struct f2fs_dev *dev;
	struct f2fs_cache *cache;
	struct f2fs_extent_mgr *extents;	/* the read extent caches' budget */
	struct f2fs_dcache_budget dcache_budget;	/* directories' name indexes */
	struct f2fs_mount_opts opts;

	/* superblock (the valid copy, raw) and derived geometry */
	uint8_t raw_sb[F2FS_SB_SIZE];
	int valid_sb_index;		/* 0 or 1 */
	uint32_t feature;
	bool casefold_strict;		/* casefold: names must be UTF-8 (EINVAL) */
	uint32_t log_blocks_per_seg, blocks_per_seg, segs_per_sec, secs_per_zone;
	uint64_t block_count;
	uint32_t segment_count, segment_count_main, section_count;
	uint32_t segment0_blkaddr, cp_blkaddr, sit_blkaddr, nat_blkaddr, ssa_blkaddr,
		 main_blkaddr;
	uint32_t segment_count_sit, segment_count_nat;
	uint32_t root_ino, node_ino, meta_ino;
	uint32_t cp_payload;
	uint32_t max_nid;		/* nids are < max_nid */
	uint8_t uuid[16];
	uint32_t chksum_seed;		/* crc32(~0, uuid) for inode checksums */

	/* checkpoint */
	uint8_t *ckpt;			/* the cp block of the valid pack, rewritten in
					 * place by each checkpoint: read its changing
					 * fields under cp_rwsem or the checkpoint's locks */
	/* its fields no checkpoint changes, for readers without those locks */
	uint64_t user_block_count;
	uint32_t rsvd_segments, ovp_segments;
	uint32_t cur_cp_pack;		/* 1 or 2 */
	uint64_t cp_ver;
	uint32_t ckpt_flags;
	const uint8_t *nat_bitmap, *sit_bitmap;
	uint32_t nat_bitmap_size, sit_bitmap_size;
	uint8_t *sit_bitmap_buf;	/* SIT bitmap copy when it lives in the payload */

	/* current segments with their summary blocks and journals */
	struct f2fs_curseg curseg[NR_CURSEG_TYPE];
	struct f2fs_sm_info *sm;	/* NULL until the first write */
	struct f2fs_nm_info *nm;	/* NULL until the first write */
	struct f2fs_node_table *dirty_nodes;	/* NULL on read-only mounts */

	/* orphans found in the checkpoint */
	uint32_t *orphans;
	uint32_t nr_orphans;

	/* roll-forward state */
	bool recovery_pending;
	uint32_t nr_fsync_dnodes;

	/* inode cache */
	pthread_mutex_t icache_lock;
	struct f2fs_inode *icache[F2FS_ICACHE_BUCKETS];
	struct f2fs_inode *lru_head, *lru_tail;	/* unreferenced inodes, MRU first */
	uint32_t nr_cached_inodes, nr_unused_inodes, max_unused_inodes;
	atomic_uint nr_atomic_writes;	/* inodes with a COW inode (ioctl.c) */
	/* inode blocks (inode->node) and dirty node blocks */
	struct f2fs_block_pool node_pool;
	/* a node walk's batch buffer (NIDS_PER_BLOCK blocks), kept between
	 * walks: 4 MiB mapped and faulted in afresh each time cost more than
	 * the walk's own CPU (f2fs_walk_dnodes) */
	_Atomic(uint8_t *) walk_buf;
	/* random i_generation values drawn 64 at a time (icache_lock) */
	uint32_t gen_pool[64];
	uint32_t gen_left;
	pthread_rwlock_t evict_lock;	/* inode loads shared, freeing an inode exclusive */

	atomic_bool need_fsck;		/* an inconsistency was seen */
	/* F2FS_IOC_SHUTDOWN stopped checkpoints (the kernel's f2fs_cp_error):
	 * changes fail with -EIO and nothing more reaches the device */
	atomic_bool cp_error;
	/* the device's metadata errors when the mount finished: a later one
	 * stops checkpoints (f2fs_cp_error) */
	unsigned int dev_errors_seen;

	/* writers take cp_rwsem shared; a checkpoint takes it exclusively */
	pthread_rwlock_t cp_rwsem;
	/* checkpoint merging (f2fs_sync_fs): tickets of the callers, the last
	 * ticket a finished checkpoint covers, and its result */
	pthread_mutex_t sync_lock;
	pthread_cond_t sync_cond;
	uint64_t sync_req, sync_done;
	int sync_err;
	bool sync_running;
	pthread_mutex_t rename_lock;	/* serialises cross-directory renames */
	/* the kernel's sbi->writepages: serialized writes allocate and write
	 * under it (data.c f2fs_should_serialize_io) */
	pthread_mutex_t writepages;
	struct f2fs_pagecache *pc;	/* -o writeback: dirty file data; else NULL */
	pthread_mutex_t orphan_lock;	/* orphans[] on a writable mount */
	uint32_t orphan_cap;
	uint64_t last_cp_time;		/* monotonic seconds, for the periodic checkpoint */

	/* what the cleaner and the checkpoints did (-o io_stats) */
	struct {
		atomic_uint_fast64_t checkpoints, gc_runs, gc_sections, gc_data_blocks,
			gc_node_blocks, ssr_segments;
		atomic_uint_fast64_t extent_hits, extent_misses, node_ra_blocks,
			node_ra_requests, node_ra_rejected, precache_nodes;
		atomic_uint_fast64_t fsync_requests, fsync_commits, fsync_node_blocks,
			sync_merged;
		atomic_uint_fast64_t compress_runs, clusters_compressed, clusters_raw;
	} stat;

	struct f2fs_compress_pool *cpool;	/* decompression contexts */

	struct f2fs_quota quota;	/* usage and limits of the quota files (dquot.c) */

	/* encryption: the keyring and a generation bumped by every key change */
	struct fscrypt_keyring *keyring;
	pthread_mutex_t crypt_lock;
	uint64_t key_gen;
};

#define f2fs_stat_add(sb, field, n) atomic_fetch_add(&(sb)->stat.field, (n))

/*
 * chattr's i and a (the VFS's IS_IMMUTABLE, IS_APPEND).  The kernel cannot
 * see these flags on a FUSE mount, so the core refuses what the VFS and
 * f2fs would refuse, with EPERM: nothing changes an immutable inode or adds
 * to or removes from an immutable directory; an append-only file only
 * grows by appends, an append-only directory only gains names.
 */
static inline bool f2fs_is_immutable(const struct f2fs_inode *inode)
{
	return inode->flags & F2FS_IMMUTABLE_FL;
}
static inline bool f2fs_is_append(const struct f2fs_inode *inode)
{
	return inode->flags & F2FS_APPEND_FL;
}
/* may_delete: the name may not go, nor the inode be renamed or linked */
static inline bool f2fs_is_pinned(const struct f2fs_inode *inode)
{
	return inode->flags & (F2FS_IMMUTABLE_FL | F2FS_APPEND_FL);
}

/* crypt.c */
struct fscrypt_inode_info;
int f2fs_crypt_init(struct f2fs_sb *sb);
void f2fs_crypt_destroy(struct f2fs_sb *sb);
int f2fs_get_crypt_info(struct f2fs_sb *sb, struct f2fs_inode *inode,
			const struct fscrypt_inode_info **out);
int f2fs_require_key(struct f2fs_sb *sb, struct f2fs_inode *inode);
void f2fs_crypt_ctx(const struct fscrypt_inode_info *ci, uint64_t lblk, struct f2fs_crypt_ctx *c);
uint32_t f2fs_crypt_limit_blocks(const struct fscrypt_inode_info *ci, uint64_t lblk, uint32_t nr);
/* A new inode in an encrypted directory inherits its policy with a fresh nonce. */
int f2fs_crypt_inherit(struct f2fs_sb *sb, struct f2fs_inode *dir, struct f2fs_inode *inode);
/* The on-disk (encrypted) form of a name in dir; returns its length. */
int f2fs_crypt_disk_name(struct f2fs_sb *sb, struct f2fs_inode *dir, const char *name, size_t len,
			 uint8_t *out, size_t outlen);
/* fscrypt_has_permitted_context: may inode live in dir? 0 or -EXDEV/-ENOKEY/... */
int f2fs_crypt_permitted(struct f2fs_sb *sb, struct f2fs_inode *dir, struct f2fs_inode *inode);
/* FS_IOC_SET_ENCRYPTION_POLICY's parts: the policy itself, then the directory's context */
int f2fs_crypt_check_policy(struct f2fs_sb *sb, uint32_t ino, const struct f2fs_policy *p);
int f2fs_crypt_set_policy(struct f2fs_sb *sb, struct f2fs_inode *dir, const struct f2fs_policy *p);
/* Encrypt a symlink target into disk (fscrypt_symlink_data); returns its size. */
int f2fs_crypt_symlink(struct f2fs_sb *sb, struct f2fs_inode *inode, const char *target,
		       size_t len, uint8_t *disk, size_t disklen);


/*
 * Changes and checkpoints (the kernel's f2fs_lock_op and f2fs_lock_all):
 * every change holds cp_rwsem shared while it runs, so a checkpoint or a
 * cleaning pass, which hold it alone, sees none half done.
 */
bool f2fs_note_dev_errors(struct f2fs_sb *sb);
/*
 * Checkpoints stopped: by a shutdown or a failed commit, or because a
 * metadata read or write failed on a writable mount.  A change that met
 * the error may be half made, in memory, with no way back; what the
 * device holds (the last checkpoint, fsync()ed nodes) stays consistent.
 */
static inline bool f2fs_cp_error(const struct f2fs_sb *sb)
{
	if (atomic_load((atomic_bool *)&sb->cp_error))
		return true;
	return !sb->opts.readonly && sb->sm && sb->dev &&
	       f2fs_dev_meta_errors(sb->dev) != sb->dev_errors_seen &&
	       f2fs_note_dev_errors((struct f2fs_sb *)sb);
}
static inline bool f2fs_writable(const struct f2fs_sb *sb)
{
	return !sb->opts.readonly && sb->sm && !f2fs_cp_error(sb);
}
/* Why a change may not happen: -EIO after a shutdown, else -EROFS (0: it may). */
static inline int f2fs_write_denied(const struct f2fs_sb *sb)
{
	if (f2fs_cp_error(sb))
		return -EIO;
	return f2fs_writable(sb) ? 0 : -EROFS;
}
/* Something above still refers to inode ino (f2fs_mount_opts.held). */
static inline bool f2fs_inode_held(const struct f2fs_sb *sb, uint32_t ino)
{
	return sb->opts.held && sb->opts.held(sb->opts.held_arg, ino);
}
static inline void f2fs_lock_op(struct f2fs_sb *sb)
{
	pthread_rwlock_rdlock(&sb->cp_rwsem);
}
static inline void f2fs_unlock_op(struct f2fs_sb *sb)
{
	pthread_rwlock_unlock(&sb->cp_rwsem);
}
static inline void f2fs_lock_all(struct f2fs_sb *sb)
{
	pthread_rwlock_wrlock(&sb->cp_rwsem);
}
static inline bool f2fs_trylock_all(struct f2fs_sb *sb)
{
	return pthread_rwlock_trywrlock(&sb->cp_rwsem) == 0;
}
static inline void f2fs_unlock_all(struct f2fs_sb *sb)
{
	pthread_rwlock_unlock(&sb->cp_rwsem);
}

/*
 * The prologue of a change through api.h (vfs.c): -EROFS unless the mount
 * is writable, then room for it (F2FS_OP_BALANCE, for changes that may
 * allocate), f2fs_lock_op, a reference to inode ino (a directory for
 * F2FS_OP_DIR, else -ENOTDIR) and its write lock.  F2FS_OP_QUOTA_PRIV sets
 * the inode's dq_priv for the change.  f2fs_end_op undoes it.
 */
#define F2FS_OP_BALANCE		0x1
#define F2FS_OP_DIR		0x2
#define F2FS_OP_QUOTA_PRIV	0x4
/* write(2) of whole blocks this large bypasses the page cache (f2fs_write_as) */
#define F2FS_STREAM_WRITE	(128u << 10)
#define F2FS_OP_KEEP_PAGES	0x8	/* write(2): the inode's dirty pages stay (else
					 * they are written back first) */
/* F2FS_OP_QUOTA_PRIV where the api's priv bits (F2FS_PRIV_*) ask for it */
static inline unsigned int f2fs_op_priv(unsigned int priv)
{
	return (priv & F2FS_PRIV_QUOTA) ? F2FS_OP_QUOTA_PRIV : 0;
}
int f2fs_begin_op(struct f2fs_sb *sb, uint32_t ino, unsigned int flags, struct f2fs_inode **out);
/* namei.c: write-lock two inodes (or one, a == b) in inode-number order, and unlock them */
void f2fs_lock_two(struct f2fs_inode *a, struct f2fs_inode *b);
void f2fs_unlock_two(struct f2fs_inode *a, struct f2fs_inode *b);
void f2fs_end_op(struct f2fs_sb *sb, struct f2fs_inode *inode);

static inline bool f2fs_cp_flag(const struct f2fs_sb *sb, uint32_t f)
{
	return sb->ckpt_flags & f;
}
static inline bool f2fs_has_feature(const struct f2fs_sb *sb, uint32_t f)
{
	return sb->feature & f;
}
/* __start_cp_addr: the first block of the valid checkpoint pack */
static inline uint32_t f2fs_cp_pack_start(const struct f2fs_sb *sb)
{
	return sb->cp_blkaddr + (sb->cur_cp_pack - 1) * sb->blocks_per_seg;
}
static inline uint32_t f2fs_seg_start_blkaddr(const struct f2fs_sb *sb, uint32_t segno)
{
	return sb->main_blkaddr + (segno << sb->log_blocks_per_seg);
}
static inline uint32_t f2fs_main_end_blkaddr(const struct f2fs_sb *sb)
{
	return sb->main_blkaddr + (sb->segment_count_main << sb->log_blocks_per_seg);
}
/* Is blkaddr inside the main area? (f2fs_is_valid_blkaddr for DATA/NODE) */
static inline bool f2fs_valid_main_blkaddr(const struct f2fs_sb *sb, uint32_t blkaddr)
{
	return blkaddr >= sb->main_blkaddr && blkaddr < f2fs_main_end_blkaddr(sb);
}

/* super.c: mount a device opened by the caller (tests: a writable memory device); the
 * mount owns it from here on, and closes it on failure and at unmount */
int f2fs_mount_dev(struct f2fs_dev *dev, const struct f2fs_mount_opts *opts, struct f2fs_sb **out);

/* ======================= messages (msg.c) ======================= */

void f2fs_msg(const struct f2fs_sb *sb, enum f2fs_log_level lvl, const char *fmt, ...)
	F2FS_PRINTF(3, 4);
#define f2fs_err(sb, ...)	f2fs_msg(sb, F2FS_LOG_ERR, __VA_ARGS__)
#define f2fs_warn(sb, ...)	f2fs_msg(sb, F2FS_LOG_WARN, __VA_ARGS__)
#define f2fs_info(sb, ...)	f2fs_msg(sb, F2FS_LOG_INFO, __VA_ARGS__)
#define f2fs_debug(sb, ...)	f2fs_msg(sb, F2FS_LOG_DEBUG, __VA_ARGS__)
/* Report an on-disk inconsistency: logs it, marks the fs as needing fsck,
 * and returns -EUCLEAN for the caller to propagate. */
int f2fs_corrupted(struct f2fs_sb *sb, const char *fmt, ...) F2FS_PRINTF(2, 3);
/*
 * A node, metadata or checkpoint write, or a cache flush, failed: commit no
 * checkpoint after it (the kernel's f2fs_stop_checkpoint).  A later one
 * would reference what the failure lost, and a device opened through the
 * page cache reports a lost write once, at the next flush, so a second
 * attempt would find the flush clean.  Returns err.
 */
int f2fs_stop_checkpoint(struct f2fs_sb *sb, int err, const char *what);

/* ======================= checksums (crc.c) ======================= */

uint32_t f2fs_crc32(uint32_t crc, const void *buf, size_t len);
/* f2fs_cal_crc32 seeded with F2FS_SUPER_MAGIC */
static inline uint32_t f2fs_chksum(const void *buf, size_t len)
{
	return f2fs_crc32(F2FS_SUPER_MAGIC, buf, len);
}

/* ======================= fs-verity (verity.c) ======================= */

#define F2FS_VERITY_MAX_LEVELS	8	/* FS_VERITY_MAX_LEVELS */
#define F2FS_VERITY_CACHE	16	/* verified Merkle tree blocks kept per file */

/*
 * A verity file's Merkle tree parameters (the kernel's merkle_tree_params
 * and fsverity_info) and the tree blocks verified so far.
 */
struct f2fs_verity_info {
	unsigned int alg, digest_size;
	unsigned int log_blocksize, block_size, log_arity;
	unsigned int num_levels;
	uint64_t level_start[F2FS_VERITY_MAX_LEVELS];	/* tree block of each level */
	uint64_t tree_pos;			/* byte offset: round_up(i_size, 64K) */
	uint64_t tree_blocks;
	uint8_t root_hash[FS_VERITY_MAX_DIGEST_SIZE];
	uint8_t file_digest[FS_VERITY_MAX_DIGEST_SIZE];	/* what FS_IOC_MEASURE_VERITY gives */
	struct fsverity_hash *hash;		/* salted */
	pthread_mutex_t lock;			/* the cache */
	uint64_t cache_idx[F2FS_VERITY_CACHE];	/* tree block held in each slot, or ~0 */
	uint64_t cache_used[F2FS_VERITY_CACHE];	/* last use, for replacement */
	uint64_t clock;
	uint8_t *cache;				/* F2FS_VERITY_CACHE blocks, or NULL */
};

static inline bool f2fs_is_verity(const struct f2fs_inode *inode)
{
	return inode->advise & FADVISE_VERITY_BIT;
}

/* Freed with the inode (inode.c); inline so that inode.c calls nothing above it. */
static inline void f2fs_verity_info_free(struct f2fs_verity_info *vi)
{
	if (!vi)
		return;
	fsverity_hash_free(vi->hash);
	pthread_mutex_destroy(&vi->lock);
	free(vi->cache);
	free(vi);
}

/* The inode's verity info, read from its descriptor the first time (read lock
 * held): -EINVAL for a descriptor the kernel would refuse too. */
int f2fs_verity_get_info(struct f2fs_sb *sb, struct f2fs_inode *inode,
			 struct f2fs_verity_info **out);
/* FS_IOC_READ_VERITY_METADATA of a verity file (read lock held). */
ssize_t f2fs_verity_metadata(struct f2fs_sb *sb, struct f2fs_inode *inode, uint64_t type,
			     uint64_t off, void *buf, size_t len);
/* FS_IOC_ENABLE_VERITY on a regular file whose write lock the caller holds. */
int f2fs_verity_enable_inode(struct f2fs_sb *sb, struct f2fs_inode *inode,
			     const struct f2fs_verity_enable *a);
/* f2fs_file_read of a verity file: len clamped to i_size; every block is
 * checked against the tree, -EIO (and a message) where one does not match. */
ssize_t f2fs_verity_read(struct f2fs_sb *sb, struct f2fs_inode *inode,
			 const struct fscrypt_inode_info *ci, void *buf, size_t len, uint64_t off);

#endif /* F2FS_INTERNAL_H */
