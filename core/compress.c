// SPDX-License-Identifier: GPL-2.0
/*
 * Compressed files (fs/f2fs/compress.c): cluster layout, codecs, reading
 * and writing clusters, the compression policy and ioctls.
 *
 * A compressed regular file is cut into clusters of 2^log_cluster_size
 * blocks, each mapped by that many consecutive address slots of one direct
 * node (inode and direct node slot counts are rounded down to whole
 * clusters).  A cluster is either
 *  - raw: ordinary addresses and holes (NULL_ADDR, or NEW_ADDR for blocks
 *    reserved but never written), read as in any file; or
 *  - compressed: slot 0 holds COMPRESS_ADDR, slots 1..n the n blocks of
 *    compressed data, the rest NEW_ADDR (kept reserved for a rewrite) or,
 *    after F2FS_IOC_RELEASE_COMPRESS_BLOCKS gave the reservation back
 *    (F2FS_COMPRESS_RELEASED), NULL_ADDR.
 * The compressed data is a header (le32 clen, le32 chksum, le32 reserved[4])
 * and clen bytes that decompress to exactly the whole cluster.  With
 * COMPRESS_CHKSUM in i_compress_flag, chksum is f2fs_crc32 of those clen
 * bytes.  In an encrypted file each compressed block is encrypted on its
 * own as the file block of the slot that holds it: DUN = cluster start +
 * 1 + i for the i-th compressed block.
 *
 * The codecs sit behind one table, indexed by i_compress_algorithm: liblz4
 * (lz4 and lz4hc write the same format), libzstd, liblzo2, and lzorle.c for
 * the kernel's lzo-rle, which liblzo2 cannot read.
 *
 * A reader takes the clusters of one direct node at a time: one node
 * lookup, every block they need from the device in one plug (a sequential
 * writer's clusters lie one after the other, so a 1 MiB read of them is
 * one device read, not one per cluster), then each cluster decompressed
 * straight into the caller's buffer when the read covers it, otherwise
 * into a scratch buffer whose cluster stays cached in the inode (until its
 * last close) for the reads that follow it through the same cluster;
 * every cluster write drops it.
 *
 * A writer hands f2fs_write_cluster one whole cluster, as the kernel's
 * writeback does (f2fs_write_multi_pages): compressed when the policy
 * allows it, the cluster lies wholly inside i_size and the data saves at
 * least one block, raw otherwise.  write(2) gets there by read-modify-write
 * of each cluster it touches (f2fs_write_compressed), or with -o writeback
 * by dirtying pages, whose clusters writeback completes from the file and
 * writes whole (f2fs_write_dirty_clusters).  lzo-rle clusters are written as plain
 * LZO1X streams (bitstream version 0), which the kernel's decompressor
 * reads as lzo-rle: liblzo2 has no lzo-rle encoder.
 *
 * Every layout and header field is checked before use.  A cluster that is
 * damaged (impossible slot layout, clen beyond its blocks, checksum
 * mismatch, decompressor failure or wrong length) reads as EIO, never as
 * other bytes; unlike the kernel, which only logs a checksum mismatch,
 * that includes the checksum.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <lz4.h>
#include <lz4hc.h>
#include <lzo1x.h>
#include <zstd.h>
#include <zstd_errors.h>

#include "f2fs.h"

#define MAX_CLUSTER_BLOCKS	(1u << MAX_COMPRESS_LOG_SIZE)
#define LZ4HC_MIN_LEVEL		3	/* LZ4HC_CLEVEL_MIN */
#define LZ4HC_MAX_LEVEL		12	/* LZ4HC_CLEVEL_MAX */
#define MAX_IDLE_DICS		4
#define BATCH_SLOTS		1024	/* >= a direct node's address slots */
#define MAX_BATCH_CLUSTERS	256	/* >= a direct node's clusters */
#define MAX_HELPERS		3
#define MIN_SPLIT_CLUSTERS	8	/* fewer are not worth waking a helper */

struct read_seg;
struct read_clu;

/* A decompression context with its buffers (the kernel's decompress_io_ctx). */
struct f2fs_dic {
	struct f2fs_dic *next;		/* in the pool */
	uint8_t *cbuf;			/* the compressed blocks, as read */
	uint8_t *rbuf;			/* a decompressed cluster */
	uint32_t cbuf_blocks, rbuf_blocks;
	ZSTD_DCtx *zstd;
	/* the compressing side (the kernel's compress_ctx) */
	uint8_t *obuf[2];		/* header + a codec's worst case, per cluster of
					 * a batch; two: one compressing, one written */
	size_t obuf_bytes[2];
	void *wrkmem;			/* liblzo2's dictionary, lz4's state */
	size_t wrkmem_bytes;
	ZSTD_CCtx *zc;
	/* a read's batch (read_batch) */
	struct f2fs_plug *plug;
	struct read_seg *segs;
	struct read_clu *clus;
	struct dnode_of_data *dn;
};

/*
 * Work spread over the clusters of a batch (compressing a write's,
 * decompressing a read's): the posting thread and the pool's helpers each
 * take the next index until none is left.  fn's results go where arg says.
 */
struct cluster_job {
	int (*fn)(void *arg, struct f2fs_dic *dic, uint32_t i);
	void *arg;
	uint32_t n;
	atomic_uint next;
	atomic_int err;			/* the first failure */
	unsigned int active;		/* helpers inside, under the pool's lock */
	bool posted;			/* the helpers were given it */
};

struct f2fs_compress_pool {
	pthread_mutex_t lock;
	struct f2fs_dic *idle;
	unsigned int nr_idle;
	/* helper threads: one job posted at a time (compressed writes are serialized) */
	pthread_cond_t work, idle_helper;
	struct cluster_job *job;
	pthread_t helpers[MAX_HELPERS];
	unsigned int nr_helpers, want_helpers;
	bool started, stop;
};

/* The last cluster an inode's readers decompressed. */
struct f2fs_cluster_cache {
	pthread_mutex_t lock;
	bool valid;
	uint32_t cluster;
	/* its first compressed block: the copy stands for the cluster only while
	 * the node still names it (a truncation, punch or move changes it) */
	uint32_t caddr;
	uint8_t *buf;
	uint32_t blocks;		/* buf's size */
};

/* ======================= codecs ======================= */

struct f2fs_compress_ops {
	const char *name;
	/* src[0..clen) must decompress to exactly rlen bytes at dst: 0, or -EIO */
	int (*decompress)(struct f2fs_dic *dic, const uint8_t *src, size_t clen, uint8_t *dst,
			  size_t rlen);
	bool (*level_valid)(unsigned int level);
	/* src[0..rlen) into at most cap bytes at dst: the length, -E2BIG when
	 * it does not fit, another negative errno on failure */
	ssize_t (*compress)(struct f2fs_dic *dic, unsigned int level, const uint8_t *src,
			    size_t rlen, uint8_t *dst, size_t cap);
	/* the output buffer a cluster of rlen bytes needs */
	size_t (*bound)(size_t rlen);
};

static int need_wrkmem(struct f2fs_dic *dic, size_t bytes)
{
	void *w;

	if (dic->wrkmem_bytes >= bytes)
		return 0;
	w = malloc(bytes);
	if (!w)
		return -ENOMEM;
	free(dic->wrkmem);
	dic->wrkmem = w;
	dic->wrkmem_bytes = bytes;
	return 0;
}

static bool no_level(unsigned int level)
{
	return level == 0;
}

static int lzo_decompress(struct f2fs_dic *dic, const uint8_t *src, size_t clen, uint8_t *dst,
			  size_t rlen)
{
	lzo_uint out = rlen;
	int r = lzo1x_decompress_safe(src, clen, dst, &out, NULL);

	return r == LZO_E_OK && out == rlen ? 0 : -EIO;
}

/* lzo1x_worst_compress */
static size_t lzo_bound(size_t rlen)
{
	return rlen + rlen / 16 + 64 + 3 + 2;
}

/*
 * LZO1X-1, as the kernel's lzo1x_1_compress.  liblzo2 writes no bounds
 * check, so dst must hold lzo_bound(rlen) whatever cap says.
 */
static ssize_t lzo_compress(struct f2fs_dic *dic, unsigned int level, const uint8_t *src,
			    size_t rlen, uint8_t *dst, size_t cap)
{
	lzo_uint out = 0;
	int err = need_wrkmem(dic, LZO1X_1_MEM_COMPRESS);

	(void)level;
	if (err)
		return err;
	if (lzo1x_1_compress(src, rlen, dst, &out, dic->wrkmem) != LZO_E_OK)
		return -EIO;
	return out > cap ? -E2BIG : (ssize_t)out;
}

static size_t lz4_bound(size_t rlen)
{
	return (size_t)LZ4_compressBound((int)rlen);
}

/* LZ4_compress_default, or LZ4_compress_HC with a level (lz4_compress_pages) */
static ssize_t lz4_compress(struct f2fs_dic *dic, unsigned int level, const uint8_t *src,
			    size_t rlen, uint8_t *dst, size_t cap)
{
	int n, err;

	if (level) {
		err = need_wrkmem(dic, (size_t)LZ4_sizeofStateHC());
		if (err)
			return err;
		n = LZ4_compress_HC_extStateHC(dic->wrkmem, (const char *)src, (char *)dst,
					       (int)rlen, (int)cap, (int)level);
	} else {
		err = need_wrkmem(dic, (size_t)LZ4_sizeofState());
		if (err)
			return err;
		n = LZ4_compress_fast_extState(dic->wrkmem, (const char *)src, (char *)dst,
					       (int)rlen, (int)cap, 1);
	}
	return n > 0 ? n : -E2BIG;	/* 0: it did not fit */
}

static size_t zstd_bound(size_t rlen)
{
	return ZSTD_compressBound(rlen);
}

#define F2FS_ZSTD_DEFAULT_CLEVEL 1

/*
 * One zstd frame for the cluster.  Its window is no larger than the
 * cluster, which the kernel's reader requires (MAX_COMPRESS_WINDOW_SIZE):
 * with the source size given, zstd sizes the window down to it.
 */
static ssize_t zstd_compress(struct f2fs_dic *dic, unsigned int level, const uint8_t *src,
			     size_t rlen, uint8_t *dst, size_t cap)
{
	size_t r;

	if (!dic->zc) {
		dic->zc = ZSTD_createCCtx();
		if (!dic->zc)
			return -ENOMEM;
	}
	ZSTD_CCtx_reset(dic->zc, ZSTD_reset_session_and_parameters);
	r = ZSTD_CCtx_setParameter(dic->zc, ZSTD_c_compressionLevel,
				   level ? (int)level : F2FS_ZSTD_DEFAULT_CLEVEL);
	if (!ZSTD_isError(r))
		r = ZSTD_CCtx_setParameter(dic->zc, ZSTD_c_windowLog, __builtin_ctzl(rlen));
	if (ZSTD_isError(r))
		return -EINVAL;
	r = ZSTD_compress2(dic->zc, dst, cap, src, rlen);
	if (ZSTD_isError(r))
		return ZSTD_getErrorCode(r) == ZSTD_error_dstSize_tooSmall ? -E2BIG : -EIO;
	return (ssize_t)r;
}

static int lz4_decompress(struct f2fs_dic *dic, const uint8_t *src, size_t clen, uint8_t *dst,
			  size_t rlen)
{
	return LZ4_decompress_safe((const char *)src, (char *)dst, (int)clen, (int)rlen) ==
	       (int)rlen ? 0 : -EIO;
}

/* lz4 levels select lz4hc; the data reads the same */
static bool lz4_level_valid(unsigned int level)
{
	return !level || (level >= LZ4HC_MIN_LEVEL && level <= LZ4HC_MAX_LEVEL);
}

static int zstd_decompress(struct f2fs_dic *dic, const uint8_t *src, size_t clen, uint8_t *dst,
			   size_t rlen)
{
	ZSTD_inBuffer in = { src, clen, 0 };
	ZSTD_outBuffer out = { dst, rlen, 0 };
	size_t r;

	if (!dic->zstd) {
		dic->zstd = ZSTD_createDCtx();
		if (!dic->zstd)
			return -ENOMEM;
	}
	ZSTD_DCtx_reset(dic->zstd, ZSTD_reset_session_only);
	/* as the kernel's stream: a window no larger than the cluster
	 * (MAX_COMPRESS_WINDOW_SIZE), one call, exactly the cluster out */
	r = ZSTD_DCtx_setParameter(dic->zstd, ZSTD_d_windowLogMax, __builtin_ctzl(rlen));
	if (ZSTD_isError(r))
		return -EIO;
	r = ZSTD_decompressStream(dic->zstd, &out, &in);
	return !ZSTD_isError(r) && out.pos == rlen ? 0 : -EIO;
}

/* zstd levels run from ZSTD_minCLevel, below zero; the flag holds 0-255 */
static bool zstd_level_valid(unsigned int level)
{
	return (int)level <= ZSTD_maxCLevel();
}

static int lzorle_decompress(struct f2fs_dic *dic, const uint8_t *src, size_t clen,
			     uint8_t *dst, size_t rlen)
{
	size_t out = rlen;
	int r = f2fs_lzorle_decompress(src, clen, dst, &out);

	return !r && out == rlen ? 0 : -EIO;
}

/*
 * lzo-rle clusters are written as LZO1X streams without the lzo-rle
 * header, which both the kernel's lzo1x_decompress_safe and lzorle.c read
 * as bitstream version 0: liblzo2 has no lzo-rle encoder, and the zero-run
 * encoding only makes the stream smaller, never different in meaning.
 */
static const struct f2fs_compress_ops compress_ops[COMPRESS_MAX] = {
	[COMPRESS_LZO] = { "lzo", lzo_decompress, no_level, lzo_compress, lzo_bound },
	[COMPRESS_LZ4] = { "lz4", lz4_decompress, lz4_level_valid, lz4_compress, lz4_bound },
	[COMPRESS_ZSTD] = { "zstd", zstd_decompress, zstd_level_valid, zstd_compress, zstd_bound },
	[COMPRESS_LZORLE] = { "lzo-rle", lzorle_decompress, no_level, lzo_compress, lzo_bound },
};

ssize_t f2fs_compress(struct f2fs_dic *dic, unsigned int algorithm, unsigned int level,
		      const uint8_t *src, size_t rlen, uint8_t *dst, size_t cap)
{
	struct f2fs_dic tmp = { 0 };
	ssize_t r;

	if (algorithm >= COMPRESS_MAX)
		return -EINVAL;
	r = compress_ops[algorithm].compress(dic ? dic : &tmp, level, src, rlen, dst, cap);
	ZSTD_freeCCtx(tmp.zc);
	free(tmp.wrkmem);
	return r;
}

size_t f2fs_compress_bound(unsigned int algorithm, size_t rlen)
{
	return algorithm < COMPRESS_MAX ? compress_ops[algorithm].bound(rlen) : 0;
}

int f2fs_compress_algorithm(const char *name)
{
	for (int i = 0; i < COMPRESS_MAX; i++)
		if (!strcmp(name, compress_ops[i].name))
			return i;
	return -EINVAL;
}

bool f2fs_compress_level_valid(unsigned int algorithm, unsigned int level)
{
	return algorithm < COMPRESS_MAX && compress_ops[algorithm].level_valid(level);
}

int f2fs_decompress(struct f2fs_dic *dic, unsigned int algorithm, const uint8_t *src,
		    size_t clen, uint8_t *dst, size_t rlen)
{
	struct f2fs_dic tmp = { 0 };
	int err;

	if (algorithm >= COMPRESS_MAX)
		return -EIO;
	err = compress_ops[algorithm].decompress(dic ? dic : &tmp, src, clen, dst, rlen);
	ZSTD_freeDCtx(tmp.zstd);
	return err;
}

/* ======================= decompression contexts ======================= */


static void free_dic(struct f2fs_dic *dic)
{
	if (!dic)
		return;
	ZSTD_freeDCtx(dic->zstd);
	ZSTD_freeCCtx(dic->zc);
	free(dic->cbuf);
	free(dic->rbuf);
	free(dic->obuf[0]);
	free(dic->obuf[1]);
	free(dic->wrkmem);
	free(dic->plug);
	free(dic->segs);
	free(dic->clus);
	free(dic->dn);
	free(dic);
}

static struct f2fs_dic *get_dic(struct f2fs_sb *sb)
{
	struct f2fs_compress_pool *pool = sb->cpool;
	struct f2fs_dic *dic;

	pthread_mutex_lock(&pool->lock);
	dic = pool->idle;
	if (dic) {
		pool->idle = dic->next;
		pool->nr_idle--;
	}
	pthread_mutex_unlock(&pool->lock);
	return dic ? dic : calloc(1, sizeof(*dic));
}

static void put_dic(struct f2fs_sb *sb, struct f2fs_dic *dic)
{
	struct f2fs_compress_pool *pool = sb->cpool;

	if (!dic)
		return;
	pthread_mutex_lock(&pool->lock);
	if (pool->nr_idle < MAX_IDLE_DICS) {
		dic->next = pool->idle;
		pool->idle = dic;
		pool->nr_idle++;
		dic = NULL;
	}
	pthread_mutex_unlock(&pool->lock);
	free_dic(dic);
}

/* Take indexes of job until none is left. */
static void run_job(struct cluster_job *job, struct f2fs_dic *dic)
{
	uint32_t i;

	while ((i = atomic_fetch_add(&job->next, 1)) < job->n) {
		int err = dic ? job->fn(job->arg, dic, i) : -ENOMEM;
		int none = 0;

		if (err)
			atomic_compare_exchange_strong(&job->err, &none, err);
	}
}

static void *helper_main(void *arg)
{
	struct f2fs_compress_pool *pool = arg;
	struct f2fs_dic *dic = calloc(1, sizeof(*dic));

	pthread_mutex_lock(&pool->lock);
	while (!pool->stop) {
		struct cluster_job *job = pool->job;

		if (!job || atomic_load(&job->next) >= job->n) {
			pthread_cond_wait(&pool->work, &pool->lock);
			continue;
		}
		job->active++;
		pthread_mutex_unlock(&pool->lock);
		run_job(job, dic);
		pthread_mutex_lock(&pool->lock);
		if (!--job->active)
			pthread_cond_broadcast(&pool->idle_helper);
	}
	pthread_mutex_unlock(&pool->lock);
	free_dic(dic);
	return NULL;
}

/*
 * The helpers start with the first batch worth sharing, so a mount that
 * never meets a compressed file has none.  Caller holds the pool's lock.
 */
static void start_helpers(struct f2fs_compress_pool *pool)
{
	pthread_attr_t attr;

	pool->started = true;
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 256 << 10);
	while (pool->nr_helpers < pool->want_helpers &&
	       !pthread_create(&pool->helpers[pool->nr_helpers], &attr, helper_main, pool))
		pool->nr_helpers++;	/* one that cannot start: fewer helpers, still correct */
	pthread_attr_destroy(&attr);
}

/*
 * Hand fn over 0..n-1 to the idle helpers, which start at once; the poster
 * may do other work (a batch's device write) before finish_clusters.
 * Without helpers, or for a few clusters, or while another job is posted,
 * finish_clusters does it all on the poster's thread.
 */
static void post_clusters(struct f2fs_sb *sb, struct cluster_job *job,
			  int (*fn)(void *arg, struct f2fs_dic *dic, uint32_t i), void *arg, uint32_t n)
{
	struct f2fs_compress_pool *pool = sb->cpool;

	job->fn = fn;
	job->arg = arg;
	job->n = n;
	job->active = 0;
	job->posted = false;
	atomic_init(&job->next, 0);
	atomic_init(&job->err, 0);
	if (pool->want_helpers && n >= MIN_SPLIT_CLUSTERS) {
		pthread_mutex_lock(&pool->lock);
		if (!pool->started)
			start_helpers(pool);
		if (!pool->job && pool->nr_helpers) {
			pool->job = job;
			job->posted = true;
			pthread_cond_broadcast(&pool->work);
		}
		pthread_mutex_unlock(&pool->lock);
	}
}

/* Take the indices left (with dic), wait for the helpers still inside; the first error, or 0. */
static int finish_clusters(struct f2fs_sb *sb, struct f2fs_dic *dic, struct cluster_job *job)
{
	struct f2fs_compress_pool *pool = sb->cpool;

	run_job(job, dic);
	if (job->posted) {
		pthread_mutex_lock(&pool->lock);
		pool->job = NULL;
		while (job->active)
			pthread_cond_wait(&pool->idle_helper, &pool->lock);
		pthread_mutex_unlock(&pool->lock);
		job->posted = false;
	}
	return atomic_load(&job->err);
}

/* Run fn over 0..n-1 on this thread (with dic) and the idle helpers. */
static int run_clusters(struct f2fs_sb *sb, struct f2fs_dic *dic,
			int (*fn)(void *arg, struct f2fs_dic *dic, uint32_t i), void *arg, uint32_t n)
{
	struct cluster_job job;

	post_clusters(sb, &job, fn, arg, n);
	return finish_clusters(sb, dic, &job);
}

int f2fs_compress_init(struct f2fs_sb *sb)
{
	struct f2fs_compress_pool *pool = calloc(1, sizeof(*pool));
	long threads = sb->opts.compress_threads;

	if (!pool)
		return -ENOMEM;
	/* liblzo2's ABI check; it fails only against a mismatched library */
	if (lzo_init() != LZO_E_OK) {
		free(pool);
		return -EIO;
	}
	pthread_mutex_init(&pool->lock, NULL);
	pthread_cond_init(&pool->work, NULL);
	pthread_cond_init(&pool->idle_helper, NULL);
	/* the calling thread is one of them */
	if (!threads)
		threads = sysconf(_SC_NPROCESSORS_ONLN);
	pool->want_helpers = threads > 1 ? (unsigned int)F2FS_MIN(threads - 1, (long)MAX_HELPERS) : 0;
	sb->cpool = pool;
	return 0;
}

void f2fs_compress_destroy(struct f2fs_sb *sb)
{
	struct f2fs_compress_pool *pool = sb->cpool;

	if (!pool)
		return;
	pthread_mutex_lock(&pool->lock);
	pool->stop = true;
	pthread_cond_broadcast(&pool->work);
	pthread_mutex_unlock(&pool->lock);
	for (unsigned int i = 0; i < pool->nr_helpers; i++)
		pthread_join(pool->helpers[i], NULL);
	while (pool->idle) {
		struct f2fs_dic *d = pool->idle;

		pool->idle = d->next;
		free_dic(d);
	}
	pthread_cond_destroy(&pool->work);
	pthread_cond_destroy(&pool->idle_helper);
	pthread_mutex_destroy(&pool->lock);
	free(pool);
	sb->cpool = NULL;
}

static int reserve_blocks(uint8_t **buf, uint32_t *have, uint32_t want)
{
	uint8_t *b;

	if (*have >= want)
		return 0;
	b = f2fs_alloc_blocks(want);
	if (!b)
		return -ENOMEM;
	free(*buf);
	*buf = b;
	*have = want;
	return 0;
}

/* ======================= the inode's fields ======================= */

/*
 * sanity_check_compress_inode, for any inode with F2FS_COMPR_FL (on a
 * directory the flag and fields are what new files inherit).
 */
int f2fs_compress_check_inode(struct f2fs_sb *sb, struct f2fs_inode *inode)
{
	const uint8_t *n = inode->node;
	unsigned int level;

	if (!f2fs_has_feature(sb, F2FS_FEATURE_COMPRESSION) ||
	    I_COMPRESS_FLAG + 2 > I_ADDR + (uint32_t)inode->extra_isize)
		return f2fs_corrupted(sb, "inode %u: compressed without compression attrs",
				      inode->ino);
	inode->compr_blocks = get_le64(n + I_COMPR_BLOCKS);
	inode->compress_algorithm = n[I_COMPRESS_ALGORITHM];
	inode->log_cluster_size = n[I_LOG_CLUSTER_SIZE];
	inode->compress_flag = get_le16(n + I_COMPRESS_FLAG);
	level = inode->compress_flag >> COMPRESS_LEVEL_OFFSET;
	if (inode->compress_algorithm >= COMPRESS_MAX)
		return f2fs_corrupted(sb, "inode %u: unknown compression algorithm %u", inode->ino,
				      inode->compress_algorithm);
	/* i_blocks counts the inode block too */
	if (inode->compr_blocks && inode->compr_blocks >= inode->blocks)
		return f2fs_corrupted(sb, "inode %u: i_compr_blocks %llu beyond i_blocks %llu",
				      inode->ino, (unsigned long long)inode->compr_blocks,
				      (unsigned long long)inode->blocks);
	if (inode->log_cluster_size < MIN_COMPRESS_LOG_SIZE ||
	    inode->log_cluster_size > MAX_COMPRESS_LOG_SIZE)
		return f2fs_corrupted(sb, "inode %u: bad compress log_cluster_size %u", inode->ino,
				      inode->log_cluster_size);
	if (!compress_ops[inode->compress_algorithm].level_valid(level))
		return f2fs_corrupted(sb, "inode %u: bad %s compression level %u", inode->ino,
				      compress_ops[inode->compress_algorithm].name, level);
	if (!f2fs_is_compressed(inode))
		return 0;
	/* f2fs_sanity_check_inline_data: compressed files never hold inline data */
	if (inode->inline_flags & F2FS_INLINE_DATA)
		return f2fs_corrupted(sb, "inode %u: inline data in a compressed file", inode->ino);
	/* addresses are grouped by cluster (addrs_per_inode) */
	inode->addrs_per_inode &= ~((1u << inode->log_cluster_size) - 1);
	return 0;
}

/* ======================= the per-inode cluster cache ======================= */

static struct f2fs_cluster_cache *cluster_cache(struct f2fs_inode *inode)
{
	struct f2fs_cluster_cache *cc = atomic_load(&inode->ccache), *none = NULL;

	if (cc)
		return cc;
	cc = calloc(1, sizeof(*cc));
	if (!cc)
		return NULL;
	pthread_mutex_init(&cc->lock, NULL);
	/* readers share the inode lock: the first one in installs it */
	if (!atomic_compare_exchange_strong(&inode->ccache, &none, cc)) {
		pthread_mutex_destroy(&cc->lock);
		free(cc);
		return none;
	}
	return cc;
}

/* Copy [in, in + n) of the cached cluster, if it is the one at addrs (the cluster's slots). */
static bool cache_read(struct f2fs_inode *inode, uint32_t cluster, const uint32_t *addrs,
		       size_t in, size_t n, uint8_t *dst)
{
	struct f2fs_cluster_cache *cc = atomic_load(&inode->ccache);
	bool hit;

	if (!cc || addrs[0] != COMPRESS_ADDR)
		return false;
	pthread_mutex_lock(&cc->lock);
	hit = cc->valid && cc->cluster == cluster && cc->caddr == addrs[1];
	if (hit)
		memcpy(dst, cc->buf + in, n);
	pthread_mutex_unlock(&cc->lock);
	return hit;
}

/* Keep dic's freshly decompressed cluster: the buffers change hands. */
static void cache_keep(struct f2fs_inode *inode, uint32_t cluster, uint32_t caddr,
		       struct f2fs_dic *dic)
{
	struct f2fs_cluster_cache *cc = cluster_cache(inode);
	uint8_t *b;
	uint32_t blocks;

	if (!cc)
		return;		/* no memory for it: the next read decompresses again */
	pthread_mutex_lock(&cc->lock);
	b = cc->buf;
	blocks = cc->blocks;
	cc->buf = dic->rbuf;
	cc->blocks = dic->rbuf_blocks;
	cc->cluster = cluster;
	cc->caddr = caddr;
	cc->valid = true;
	dic->rbuf = b;
	dic->rbuf_blocks = blocks;
	pthread_mutex_unlock(&cc->lock);
}

/* With no reader left (last close, or the inode going away). */
void f2fs_compress_drop_cache(struct f2fs_inode *inode)
{
	struct f2fs_cluster_cache *cc = atomic_exchange(&inode->ccache, NULL);

	if (!cc)
		return;
	pthread_mutex_destroy(&cc->lock);
	free(cc->buf);
	free(cc);
}

/* ======================= reading clusters ======================= */

static bool is_hole(uint32_t a)
{
	return a == NULL_ADDR || a == NEW_ADDR;
}

static bool is_data_addr(uint32_t a)
{
	return !is_hole(a) && a != COMPRESS_ADDR;
}

static int bad_cluster(struct f2fs_sb *sb, struct f2fs_inode *inode, uint32_t start,
		       const char *why)
{
	f2fs_corrupted(sb, "inode %u: compressed cluster at block %u: %s", inode->ino, start, why);
	return -EIO;
}

/*
 * f2fs_sanity_check_cluster for a cluster whose slot 0 is COMPRESS_ADDR:
 * data blocks, then only reservations or holes.  The number of compressed
 * blocks, or -EIO.
 */
static int compressed_blocks(struct f2fs_sb *sb, struct f2fs_inode *inode, uint32_t start,
			     const uint32_t *addrs)
{
	const uint32_t cs = 1u << inode->log_cluster_size;
	uint32_t nr = 0;
	bool ended = false;

	for (uint32_t i = 1; i < cs; i++) {
		if (addrs[i] == COMPRESS_ADDR)
			return bad_cluster(sb, inode, start, "a second COMPRESS_ADDR");
		if (!is_data_addr(addrs[i])) {
			ended = true;
			continue;
		}
		if (ended)
			return bad_cluster(sb, inode, start, "a data block after a hole");
		if (!f2fs_valid_main_blkaddr(sb, addrs[i]))
			return bad_cluster(sb, inode, start, "a block outside the main area");
		nr++;
	}
	return nr ? (int)nr : bad_cluster(sb, inode, start, "no compressed blocks");
}

/* The cluster at file block start from its nr compressed blocks at cbuf into out. */
static int decompress_blocks(struct f2fs_sb *sb, struct f2fs_inode *inode, uint32_t start,
			     const uint8_t *cbuf, uint32_t nr, struct f2fs_dic *dic, uint8_t *out)
{
	const size_t rlen = (size_t)F2FS_BLKSIZE << inode->log_cluster_size;
	uint32_t clen = get_le32(cbuf + COMPRESS_DATA_CLEN);
	int err;

	if (clen > (size_t)nr * F2FS_BLKSIZE - COMPRESS_DATA_HDR)
		return bad_cluster(sb, inode, start, "compressed length beyond its blocks");
	if ((inode->compress_flag & COMPRESS_CHKSUM) &&
	    f2fs_chksum(cbuf + COMPRESS_DATA_HDR, clen) != get_le32(cbuf + COMPRESS_DATA_CHKSUM))
		return bad_cluster(sb, inode, start, "checksum mismatch");
	err = f2fs_decompress(dic, inode->compress_algorithm, cbuf + COMPRESS_DATA_HDR, clen, out,
			      rlen);
	if (err == -EIO)
		return bad_cluster(sb, inode, start, "the data does not decompress to a cluster");
	return err;
}

/* Bytes [in, in + n) of a raw cluster: its blocks as they are, holes as zeros. */
static int read_raw(struct f2fs_sb *sb, struct f2fs_inode *inode,
		    const struct fscrypt_inode_info *ci, uint32_t start, const uint32_t *addrs,
		    size_t in, size_t n, uint8_t *dst)
{
	const uint32_t last = (uint32_t)((in + n - 1) / F2FS_BLKSIZE);
	size_t done = 0;

	while (done < n) {
		uint32_t i = (uint32_t)((in + done) / F2FS_BLKSIZE);
		uint32_t skip = (uint32_t)((in + done) % F2FS_BLKSIZE), run = 1;
		uint32_t a = addrs[i];
		size_t bytes;
		int err;

		if (a == COMPRESS_ADDR)
			return bad_cluster(sb, inode, start, "COMPRESS_ADDR past the first slot");
		if (is_hole(a)) {
			while (i + run <= last && is_hole(addrs[i + run]))
				run++;
		} else {
			if (!f2fs_valid_main_blkaddr(sb, a))
				return bad_cluster(sb, inode, start, "a block outside the main area");
			while (i + run <= last && addrs[i + run] == a + run &&
			       f2fs_valid_main_blkaddr(sb, a + run))
				run++;
		}
		bytes = F2FS_MIN((size_t)run * F2FS_BLKSIZE - skip, n - done);
		if (is_data_addr(a)) {
			err = f2fs_read_mapped(sb, ci, a, start + i, skip, bytes, dst + done);
			if (err)
				return err;
		} else {
			memset(dst + done, 0, bytes);
		}
		done += bytes;
	}
	return 0;
}

/*
 * A read's batch: the clusters of one direct node that the read covers.
 * Every block they need from the device (the compressed blocks, and the
 * whole blocks of raw clusters) goes into one plug, so that blocks laid
 * out one after the other, as a sequential writer leaves them, become one
 * device read however many clusters they belong to; then each segment is
 * decrypted with its own DUNs and each compressed cluster decompressed,
 * straight into the caller's buffer when the read covers it.
 */
struct read_seg {
	uint8_t *buf;
	uint32_t lblk;			/* the first block's DUN */
	uint32_t nr;
};

struct read_clu {
	uint32_t start;			/* file block */
	uint32_t cofs;			/* its compressed blocks' place in cbuf, in blocks */
	uint32_t nr;			/* compressed blocks; 0: raw, read already */
	uint32_t cluster;
	uint32_t caddr;			/* its first compressed block */
	size_t in, n;			/* the bytes of it the read wants */
	uint8_t *dst;
};

/* The buffers one batch needs: at most a direct node's slots of everything. */
static int batch_buffers(struct f2fs_dic *dic)
{
	if (!dic->plug && !(dic->plug = malloc(sizeof(*dic->plug))))
		return -ENOMEM;
	if (!dic->segs && !(dic->segs = malloc(BATCH_SLOTS * sizeof(*dic->segs))))
		return -ENOMEM;
	if (!dic->clus && !(dic->clus = malloc(BATCH_SLOTS * sizeof(*dic->clus))))
		return -ENOMEM;
	if (!dic->dn && !(dic->dn = f2fs_alloc_blocks((sizeof(*dic->dn) + F2FS_BLKSIZE - 1) /
						      F2FS_BLKSIZE)))
		return -ENOMEM;
	return 0;
}

static int queue_read(struct f2fs_dic *dic, uint32_t *nseg, uint32_t pblk, uint32_t lblk,
		      uint32_t nr, uint8_t *buf)
{
	struct iovec iov = { buf, (size_t)nr * F2FS_BLKSIZE };
	struct f2fs_bio bio = { .op = F2FS_BIO_READ, .blkaddr = pblk, .nr_blocks = nr,
				.iov = &iov, .iovcnt = 1, .file_data = true };

	dic->segs[(*nseg)++] = (struct read_seg){ buf, lblk, nr };
	return f2fs_plug_add(dic->plug, &bio);
}

/* Queue runs of consecutive addresses of slots addrs[0..n), file blocks lblk.. */
static int queue_runs(struct f2fs_dic *dic, uint32_t *nseg, const uint32_t *addrs, uint32_t n,
		      uint32_t lblk, uint8_t *buf)
{
	for (uint32_t i = 0; i < n;) {
		uint32_t run = 1;
		int err;

		while (i + run < n && addrs[i + run] == addrs[i] + run)
			run++;
		err = queue_read(dic, nseg, addrs[i], lblk + i, run, buf + (size_t)i * F2FS_BLKSIZE);
		if (err)
			return err;
		i += run;
	}
	return 0;
}

/* fscrypt_decrypt_bio, segment by segment: each keeps its own DUNs. */
static int decrypt_segs(const struct fscrypt_inode_info *ci, const struct read_seg *segs,
			uint32_t nseg)
{
	for (uint32_t s = 0; s < nseg; s++) {
		uint64_t lblk = segs[s].lblk;
		uint8_t *buf = segs[s].buf;

		for (uint32_t left = segs[s].nr; left;) {
			uint32_t n = f2fs_crypt_limit_blocks(ci, lblk, left);
			struct f2fs_crypt_ctx cc;
			int err;

			f2fs_crypt_ctx(ci, lblk, &cc);
			err = cc.ops->decrypt(cc.key, cc.dun, buf, n);
			if (err)
				return err;
			buf += (size_t)n * F2FS_BLKSIZE;
			lblk += n;
			left -= n;
		}
	}
	return 0;
}

/* A read batch's compressed clusters, each into the caller's buffer if it wants it whole. */
struct decompress_batch {
	struct f2fs_sb *sb;
	struct f2fs_inode *inode;
	const struct read_clu *clus;
	const uint8_t *cbuf;
};

static int decompress_one(void *arg, struct f2fs_dic *dic, uint32_t i)
{
	const struct decompress_batch *db = arg;
	const struct read_clu *rc = &db->clus[i];

	if (rc->n != (size_t)F2FS_BLKSIZE << db->inode->log_cluster_size)
		return 0;	/* a part of it: the reader's, through the cluster cache */
	return decompress_blocks(db->sb, db->inode, rc->start,
				 db->cbuf + (size_t)rc->cofs * F2FS_BLKSIZE, rc->nr, dic, rc->dst);
}

/*
 * Read [pos, pos + len) (inside i_size, clusters from the one at pos on)
 * from the clusters of one direct node; *done says how many bytes.
 */
static int read_batch(struct f2fs_sb *sb, struct f2fs_inode *inode,
		      const struct fscrypt_inode_info *ci, struct f2fs_dic *dic, uint8_t *dst,
		      size_t len, uint64_t pos, size_t *done)
{
	const uint32_t log = inode->log_cluster_size, cs = 1u << log;
	const size_t cbytes = (size_t)cs * F2FS_BLKSIZE;
	const uint32_t first = (uint32_t)(pos / cbytes);
	struct dnode_of_data *dn = dic->dn;
	uint32_t nclu = 0, nseg = 0, cblocks = 0, want, c;
	size_t got = 0;
	int err, ferr;

	*done = 0;
	if ((uint64_t)(first + 1) << log > f2fs_max_file_blocks(inode)) {
		memset(dst, 0, len);
		*done = len;
		return 0;
	}
	err = f2fs_get_dnode_of_data(sb, inode, first << log, LOOKUP_NODE, dn);
	if (err == -ENOENT) {
		/* a missing node: holes to the end of its subtree */
		uint64_t hole = dn->hole_blocks * F2FS_BLKSIZE - (pos - ((uint64_t)first << log) *
								 F2FS_BLKSIZE);

		*done = (size_t)F2FS_MIN((uint64_t)len, hole);
		memset(dst, 0, *done);
		return 0;
	}
	if (err)
		return err;
	if (dn->ofs_in_node + cs > dn->naddrs || dn->naddrs > BATCH_SLOTS)
		return f2fs_corrupted(sb, "inode %u: cluster %u straddles a node", inode->ino, first);
	want = (uint32_t)((pos % cbytes + len + cbytes - 1) / cbytes);
	want = F2FS_MIN(want, (dn->naddrs - dn->ofs_in_node) >> log);
	f2fs_plug_init(dic->plug, sb->dev);
	/* plan: the compressed blocks' place in cbuf, raw clusters' blocks straight to dst */
	for (c = 0; c < want && !err; c++) {
		struct read_clu *rc = &dic->clus[nclu];
		uint32_t addrs[MAX_CLUSTER_BLOCKS];
		uint64_t cpos = pos + got;
		size_t in = (size_t)(cpos % cbytes), n = F2FS_MIN(cbytes - in, len - got);
		int nr;

		for (uint32_t i = 0; i < cs; i++)
			addrs[i] = get_le32(dn->addrs + 4 * (dn->ofs_in_node + (c << log) + i));
		*rc = (struct read_clu){ .start = (first + c) << log, .cluster = first + c,
					 .in = in, .n = n, .dst = dst + got };
		got += n;
		if (n < cbytes && cache_read(inode, rc->cluster, addrs, in, n, rc->dst))
			continue;
		if (addrs[0] != COMPRESS_ADDR) {
			/* whole blocks of a raw cluster join the batch, a partial one reads alone */
			bool whole = !(in % F2FS_BLKSIZE) && !(n % F2FS_BLKSIZE);
			uint32_t b0 = (uint32_t)(in / F2FS_BLKSIZE), nb = (uint32_t)(n / F2FS_BLKSIZE);

			for (uint32_t i = b0; whole && i < b0 + nb; i++)
				whole = is_hole(addrs[i]) || (is_data_addr(addrs[i]) &&
							     f2fs_valid_main_blkaddr(sb, addrs[i]));
			if (!whole) {
				err = read_raw(sb, inode, ci, rc->start, addrs, in, n, rc->dst);
				continue;
			}
			for (uint32_t i = b0; i < b0 + nb && !err;) {
				uint32_t run = 1;

				if (is_hole(addrs[i])) {
					while (i + run < b0 + nb && is_hole(addrs[i + run]))
						run++;
					memset(rc->dst + (size_t)(i - b0) * F2FS_BLKSIZE, 0,
					       (size_t)run * F2FS_BLKSIZE);
				} else {
					while (i + run < b0 + nb && addrs[i + run] == addrs[i] + run)
						run++;
					err = queue_read(dic, &nseg, addrs[i], rc->start + i, run,
							 rc->dst + (size_t)(i - b0) * F2FS_BLKSIZE);
				}
				i += run;
			}
			continue;
		}
		nr = compressed_blocks(sb, inode, rc->start, addrs);
		if (nr < 0) {
			err = nr;
			break;
		}
		rc->nr = (uint32_t)nr;
		rc->caddr = addrs[1];
		rc->cofs = cblocks;
		cblocks += rc->nr;
		nclu++;
	}
	/* the compressed blocks' buffer, now that its size is known */
	if (!err)
		err = reserve_blocks(&dic->cbuf, &dic->cbuf_blocks, F2FS_MAX(cblocks, 1u));
	for (uint32_t i = 0; i < nclu && !err; i++) {
		struct read_clu *rc = &dic->clus[i];
		uint32_t addrs[MAX_CLUSTER_BLOCKS];

		for (uint32_t k = 0; k < rc->nr; k++)
			addrs[k] = get_le32(dn->addrs + 4 * (dn->ofs_in_node + (rc->start - (first << log)) +
							    1 + k));
		err = queue_runs(dic, &nseg, addrs, rc->nr, rc->start + 1,
				 dic->cbuf + (size_t)rc->cofs * F2FS_BLKSIZE);
	}
	ferr = f2fs_plug_flush(dic->plug);
	if (!err)
		err = ferr;
	if (!err && ci)
		err = decrypt_segs(ci, dic->segs, nseg);
	/* the clusters the read covers whole, shared out among the threads */
	if (!err) {
		struct decompress_batch db = { sb, inode, dic->clus, dic->cbuf };

		err = run_clusters(sb, dic, decompress_one, &db, nclu);
	}
	for (uint32_t i = 0; i < nclu && !err; i++) {
		struct read_clu *rc = &dic->clus[i];
		const uint8_t *cb = dic->cbuf + (size_t)rc->cofs * F2FS_BLKSIZE;

		if (rc->n == cbytes)
			continue;
		err = reserve_blocks(&dic->rbuf, &dic->rbuf_blocks, cs);
		if (!err)
			err = decompress_blocks(sb, inode, rc->start, cb, rc->nr, dic, dic->rbuf);
		if (!err) {
			memcpy(rc->dst, dic->rbuf + rc->in, rc->n);
			cache_keep(inode, rc->cluster, rc->caddr, dic);
		}
	}
	if (!err)
		*done = got;
	return err;
}

/*
 * f2fs_file_read for a compressed file: len bytes at off, all inside
 * i_size.  ci is the key when the file is encrypted.
 */
ssize_t f2fs_read_compressed(struct f2fs_sb *sb, struct f2fs_inode *inode,
			     const struct fscrypt_inode_info *ci, uint8_t *dst, size_t len,
			     uint64_t off)
{
	struct f2fs_dic *dic = get_dic(sb);
	size_t done = 0;
	int err = dic ? batch_buffers(dic) : -ENOMEM;

	while (!err && done < len) {
		size_t n;

		err = read_batch(sb, inode, ci, dic, dst + done, len - done, off + done, &n);
		done += n;
	}
	put_dic(sb, dic);
	/* never a short read: FUSE takes one for the end of the file */
	return err ? err : (ssize_t)done;
}

/* ======================= writing clusters ======================= */

/*
 * f2fs_compress_pages: compress the cluster at src into h as the on-disk
 * header and data, zero-padded to whole blocks; h has room for
 * cluster_out_bytes.  Returns the number of blocks, or 0 when the cluster
 * does not save at least one block (the kernel's rule: clen may not exceed
 * cluster_size - 1 blocks less the header), and the cluster goes raw.
 */
static int compress_cluster(struct f2fs_inode *inode, struct f2fs_dic *dic, const uint8_t *src,
			    uint8_t *h)
{
	const struct f2fs_compress_ops *ops = &compress_ops[inode->compress_algorithm];
	const size_t rlen = (size_t)F2FS_BLKSIZE << inode->log_cluster_size;
	const size_t max_len = rlen - F2FS_BLKSIZE - COMPRESS_DATA_HDR;
	uint32_t nr;
	ssize_t clen;

	clen = ops->compress(dic, inode->compress_flag >> COMPRESS_LEVEL_OFFSET, src, rlen,
			     h + COMPRESS_DATA_HDR, max_len);
	if (clen == -E2BIG)
		return 0;
	if (clen < 0)
		return (int)clen;
	if ((size_t)clen > max_len)
		return 0;
	memset(h, 0, COMPRESS_DATA_HDR);
	put_le32(h + COMPRESS_DATA_CLEN, (uint32_t)clen);
	if (inode->compress_flag & COMPRESS_CHKSUM)
		put_le32(h + COMPRESS_DATA_CHKSUM, f2fs_chksum(h + COMPRESS_DATA_HDR, (size_t)clen));
	nr = (uint32_t)((COMPRESS_DATA_HDR + (size_t)clen + F2FS_BLKSIZE - 1) / F2FS_BLKSIZE);
	memset(h + COMPRESS_DATA_HDR + clen, 0,
	       (size_t)nr * F2FS_BLKSIZE - COMPRESS_DATA_HDR - (size_t)clen);
	return (int)nr;
}

/* What compress_cluster may write: the header and the codec's worst case, in whole blocks. */
static size_t cluster_out_bytes(const struct f2fs_inode *inode)
{
	const size_t rlen = (size_t)F2FS_BLKSIZE << inode->log_cluster_size;

	return (COMPRESS_DATA_HDR + compress_ops[inode->compress_algorithm].bound(rlen) +
		F2FS_BLKSIZE - 1) & ~(size_t)(F2FS_BLKSIZE - 1);
}

static bool is_valid_data(uint32_t a)
{
	return is_data_addr(a);
}

/* Queue block data for address addr, file block lblk (its DUN when encrypted). */
static int queue_block(struct f2fs_plug *plug, const struct fscrypt_inode_info *ci, uint32_t addr,
		       uint64_t lblk, const uint8_t *data)
{
	struct iovec one = { (void *)data, F2FS_BLKSIZE };
	struct f2fs_crypt_ctx cc;
	struct f2fs_bio bio = { .op = F2FS_BIO_WRITE, .blkaddr = addr, .nr_blocks = 1,
				.iov = &one, .iovcnt = 1, .file_data = true };

	if (ci) {
		f2fs_crypt_ctx(ci, lblk, &cc);
		bio.crypt = &cc;
	}
	return f2fs_plug_add(plug, &bio);
}

/*
 * One cluster of dn, at its slot ofs (f2fs_write_multi_pages): data holds
 * the whole cluster, of which the first valid pages lie inside i_size; nr
 * > 0: data is compressed, its nr blocks at cdata.  A compressed cluster
 * becomes COMPRESS_ADDR, its compressed blocks and NEW_ADDR for the rest
 * (the kernel keeps the whole cluster reserved for the next rewrite); a
 * raw one its valid pages.  Every block goes to a new place, queued on
 * plug; the old ones are invalidated.  i_blocks counts every slot that is
 * not NULL_ADDR, i_compr_blocks the blocks each compressed cluster saves.
 * Returns an error that left the cluster as it was (space, quota); a
 * request that failed once the blocks were taken goes to *ioerr.
 */
static int write_cluster_at(struct f2fs_sb *sb, struct f2fs_inode *inode,
			    const struct fscrypt_inode_info *ci, struct dnode_of_data *dn, uint32_t ofs,
			    uint32_t start, const uint8_t *data, uint32_t valid, uint32_t nr,
			    const uint8_t *cdata, struct f2fs_plug *plug, int *ioerr)
{
	const uint32_t cs = 1u << inode->log_cluster_size;
	const int type = CURSEG_COLD_DATA;
	uint32_t old[MAX_CLUSTER_BLOCKS], fresh[MAX_CLUSTER_BLOCKS];
	uint32_t nwrite, need = 0, old_nr = 0, got = 0, i;
	uint8_t *addrs = dn->addrs + 4 * ofs;
	const uint8_t *src;
	bool was_compressed;
	int err = 0;

	for (i = 0; i < cs; i++)
		old[i] = get_le32(addrs + 4 * i);
	was_compressed = old[0] == COMPRESS_ADDR;
	for (i = 1; was_compressed && i < cs; i++)
		old_nr += is_valid_data(old[i]);
	/* a compressed cluster fills every slot, a raw one its valid pages */
	nwrite = nr ? nr : valid;
	for (i = 0; i < (nr ? cs : valid); i++)
		need += old[i] == NULL_ADDR;
	/* inc_valid_block_count: the quota first, then the space */
	err = f2fs_dquot_alloc_block(sb, inode, need);
	if (!err) {
		err = f2fs_take_user_blocks(sb, need);
		if (err)
			f2fs_dquot_free_block(sb, inode, need);
	}
	if (err)
		return err;
	/* every new address first, so that a failure changes no slot; one run
	 * unless the segment ends (the slots written are consecutive) */
	for (got = 0; got < nwrite;) {
		uint16_t o = (uint16_t)(ofs + (nr ? 1 + got : got));
		uint32_t a, n;

		err = f2fs_allocate_run(sb, type, dn->nid, dn->version, o, nwrite - got, &a, &n);
		if (err)
			break;
		for (uint32_t j = 0; j < n; j++)
			fresh[got++] = a + j;
	}
	if (err) {
		while (got)
			f2fs_invalidate_block(sb, fresh[--got]);
		f2fs_add_valid_blocks(sb, -(int64_t)need);
		f2fs_dquot_free_block(sb, inode, need);
		return err;
	}
	src = nr ? cdata : data;
	for (i = 0; i < nwrite && !*ioerr; i++)
		*ioerr = queue_block(plug, ci, fresh[i], start + (nr ? 1 + i : i),
				     src + (size_t)i * F2FS_BLKSIZE);
	/* the slots change even if a request failed (*ioerr): its blocks are taken */
	for (i = 0; i < cs; i++) {
		uint32_t a = old[i], next;

		if (nr)
			next = !i ? COMPRESS_ADDR : i <= nr ? fresh[i - 1] : NEW_ADDR;
		else if (i < valid)
			next = fresh[i];
		else if (was_compressed)
			next = NULL_ADDR;	/* past i_size: the old layout's slots go */
		else
			continue;
		if (is_valid_data(a))
			f2fs_invalidate_block(sb, a);
		if (a == NULL_ADDR && next != NULL_ADDR)
			inode->blocks++;
		if (a != NULL_ADDR && next == NULL_ADDR) {
			f2fs_add_valid_blocks(sb, -1);
			f2fs_dquot_free_block(sb, inode, 1);
			inode->blocks--;
		}
		put_le32(addrs + 4 * i, next);
	}
	if (was_compressed)
		inode->compr_blocks -= cs - old_nr;
	if (nr)
		inode->compr_blocks += cs - nr;
	if (nr)
		f2fs_stat_add(sb, clusters_compressed, 1);
	else
		f2fs_stat_add(sb, clusters_raw, 1);
	return 0;
}

static int reserve_bytes(uint8_t **buf, size_t *have, size_t want)
{
	uint8_t *b;

	if (*have >= want)
		return 0;
	b = f2fs_alloc_blocks(want / F2FS_BLKSIZE);
	if (!b)
		return -ENOMEM;
	free(*buf);
	*buf = b;
	*have = want;
	return 0;
}

/* A batch's clusters to compress: the first full of them, each into its slot. */
struct compress_batch {
	struct f2fs_sb *sb;
	struct f2fs_inode *inode;
	const uint8_t *const *data;
	uint8_t *obuf;
	size_t out;			/* bytes per slot */
	uint32_t *nrs;			/* blocks each, 0: it goes raw */
	uint32_t full;
};

static int compress_one(void *arg, struct f2fs_dic *dic, uint32_t i)
{
	struct compress_batch *cb = arg;
	int nr = compress_cluster(cb->inode, dic, cb->data[i], cb->obuf + (size_t)i * cb->out);

	f2fs_stat_add(cb->sb, compress_runs, 1);

	if (nr < 0)
		return nr;
	cb->nrs[i] = (uint32_t)nr;
	return 0;
}

/* One direct node's share of a write: its clusters, compressed into slots of obuf. */
struct write_batch {
	uint32_t k;			/* clusters */
	uint32_t nrs[MAX_BATCH_CLUSTERS];	/* blocks each, 0: raw */
	struct compress_batch cb;
	struct cluster_job job;
};

/*
 * Look up (allocating) the direct node of the cluster done clusters past
 * `cluster`, and set the helpers compressing its share of the n - done
 * clusters left into *obuf.  On success dn is held and the job posted:
 * finish_clusters and f2fs_put_dnode follow.
 */
static int start_batch(struct f2fs_sb *sb, struct f2fs_inode *inode, struct dnode_of_data *dn,
		       uint32_t cluster, uint32_t n, uint32_t done, const uint8_t *const *data,
		       uint32_t valid, bool may_compress, uint8_t **obuf, size_t *obuf_bytes,
		       struct write_batch *b)
{
	const uint32_t log = inode->log_cluster_size, cs = 1u << log;
	const size_t out = cluster_out_bytes(inode);
	const uint32_t c0 = cluster + done, start = c0 << log;
	int err;

	if ((uint64_t)start + cs > f2fs_max_file_blocks(inode))
		return -EFBIG;
	err = f2fs_get_dnode_of_data(sb, inode, start, ALLOC_NODE, dn);
	if (err)
		return err;
	if (dn->ofs_in_node + cs > dn->naddrs) {
		f2fs_put_dnode(sb, dn);
		return f2fs_corrupted(sb, "inode %u: cluster %u straddles a node", inode->ino, c0);
	}
	b->k = F2FS_MIN(n - done, (dn->naddrs - dn->ofs_in_node) >> log);
	b->k = F2FS_MIN(b->k, (uint32_t)MAX_BATCH_CLUSTERS);
	err = reserve_bytes(obuf, obuf_bytes, (size_t)b->k * out);
	if (err) {
		f2fs_put_dnode(sb, dn);
		return err;
	}
	/* the last cluster of the write, when partial, goes raw */
	b->cb = (struct compress_batch){
		.sb = sb, .inode = inode, .data = data + done, .obuf = *obuf, .out = out,
		.nrs = b->nrs,
		.full = may_compress ? (done + b->k == n && valid < cs ? b->k - 1 : b->k) : 0,
	};
	memset(b->nrs, 0, b->k * sizeof(b->nrs[0]));
	post_clusters(sb, &b->job, compress_one, &b->cb, b->cb.full);
	return 0;
}

/*
 * Write n whole clusters from cluster on, data[i] the i-th (the kernel's
 * writeback of a run of dirty clusters), the last with valid pages inside
 * i_size, the others full.  The clusters of one direct node go together:
 * one node lookup, each compressed into one buffer, their blocks taken in
 * turn from the log and queued on one plug, so that a sequential write is
 * one device request per node, not one per cluster.  While a node's
 * request goes to the device, the helpers compress the next node's
 * clusters into the other buffer.  *done counts the clusters that got
 * their blocks (a short write: out of space part way).  The caller holds
 * the inode's write lock (and the writepages lock, which keeps the runs of
 * the clusters together) and marks the inode dirty.
 */
int f2fs_write_clusters(struct f2fs_sb *sb, struct f2fs_inode *inode,
			const struct fscrypt_inode_info *ci, uint32_t cluster, uint32_t n,
			const uint8_t *const *data, uint32_t valid, bool may_compress,
			uint32_t *done)
{
	const uint32_t log = inode->log_cluster_size, cs = 1u << log;
	const size_t out = cluster_out_bytes(inode);
	struct f2fs_dic *dic = get_dic(sb);
	struct write_batch *wb = malloc(2 * sizeof(*wb));
	struct dnode_of_data *dn;
	unsigned int cur = 0;
	bool have = false;
	int err = dic && wb ? batch_buffers(dic) : -ENOMEM;

	*done = 0;
	if (!err && (!valid || valid > cs))
		err = -EINVAL;
	if (err)
		goto out;
	dn = dic->dn;
	if (n) {
		err = start_batch(sb, inode, dn, cluster, n, 0, data, valid, may_compress,
				  &dic->obuf[0], &dic->obuf_bytes[0], &wb[0]);
		have = !err;
	}
	while (have) {
		struct write_batch *b = &wb[cur];
		const uint32_t base = *done, c0 = cluster + base;
		int ferr, ioerr = 0;

		err = finish_clusters(sb, dic, &b->job);
		f2fs_plug_init(dic->plug, sb->dev);
		for (uint32_t i = 0; i < b->k && !err && !ioerr; i++) {
			uint32_t v = base + i + 1 == n ? valid : cs;

			err = write_cluster_at(sb, inode, ci, dn, dn->ofs_in_node + (i << log),
					       (c0 + i) << log, data[base + i], v, b->nrs[i],
					       b->cb.obuf + (size_t)i * out, dic->plug, &ioerr);
			/* a failed request still took the cluster's blocks */
			if (!err)
				++*done;
		}
		if (!err)
			err = ioerr;
		ferr = f2fs_put_dnode(sb, dn);
		if (!err)
			err = ferr;
		have = false;
		if (!err && *done < n) {
			err = start_batch(sb, inode, dn, cluster, n, *done, data, valid, may_compress,
					  &dic->obuf[cur ^ 1], &dic->obuf_bytes[cur ^ 1], &wb[cur ^ 1]);
			have = !err;
		}
		/* the compressed blocks live in this batch's buffer: out before it is reused */
		ferr = f2fs_plug_flush(dic->plug);
		if (!err)
			err = ferr;
		cur ^= 1;
		if (err && have) {
			finish_clusters(sb, dic, &wb[cur].job);
			f2fs_put_dnode(sb, dn);
			have = false;
		}
	}
	f2fs_drop_extent_cache(inode, cluster << log, (n ? n : 1) << log);
	f2fs_compress_drop_cache(inode);
out:
	free(wb);
	put_dic(sb, dic);
	return err;
}

/* One whole cluster; see f2fs_write_clusters. */
int f2fs_write_cluster(struct f2fs_sb *sb, struct f2fs_inode *inode,
		       const struct fscrypt_inode_info *ci, uint32_t cluster, const uint8_t *data,
		       uint32_t valid, bool may_compress)
{
	uint32_t done;

	return f2fs_write_clusters(sb, inode, ci, cluster, 1, &data, valid, may_compress, &done);
}

/* f2fs_need_compress_data: a whole cluster is compressed at writeback */
static bool need_compress(struct f2fs_sb *sb, const struct f2fs_inode *inode)
{
	return !sb->opts.compress_mode_user || inode->compress_now;
}

/*
 * Bytes [in, in + n) of the cluster go in; the rest of it comes from the
 * file (inside old_size), zeros beyond.
 */
static int fill_cluster(struct f2fs_sb *sb, struct f2fs_inode *inode,
			const struct fscrypt_inode_info *ci, uint32_t cluster, uint64_t old_size,
			uint8_t *buf)
{
	const size_t cbytes = (size_t)F2FS_BLKSIZE << inode->log_cluster_size;
	uint64_t cstart = (uint64_t)cluster * cbytes;
	size_t have = old_size > cstart ? (size_t)F2FS_MIN((uint64_t)cbytes, old_size - cstart) : 0;

	if (have) {
		ssize_t r = f2fs_read_compressed(sb, inode, ci, buf, have, cstart);

		if (r < 0)
			return (int)r;
	}
	memset(buf + have, 0, cbytes - have);
	return 0;
}

/* Pages of cluster inside a file of size bytes. */
static uint32_t pages_inside(const struct f2fs_inode *inode, uint32_t cluster, uint64_t size)
{
	uint64_t first = (uint64_t)cluster << inode->log_cluster_size;
	uint64_t pages = (size + F2FS_BLKSIZE - 1) / F2FS_BLKSIZE;

	return pages <= first ? 0 :
	       (uint32_t)F2FS_MIN(pages - first, (uint64_t)1 << inode->log_cluster_size);
}

/*
 * write(2) to a compressed file: the clusters it covers whole are
 * compressed straight from the caller's buffer; a cluster it covers only
 * in part (its first and last) is read, patched and written whole, which
 * is what writeback of a dirty cluster does.  Up to MAX_BATCH_CLUSTERS
 * clusters go to f2fs_write_clusters at a time.  *written says how many
 * bytes got there; inode->size follows them.
 */
int f2fs_write_compressed(struct f2fs_sb *sb, struct f2fs_inode *inode,
			  const struct fscrypt_inode_info *ci, const uint8_t *src, size_t len,
			  uint64_t off, size_t *written)
{
	const size_t cbytes = (size_t)F2FS_BLKSIZE << inode->log_cluster_size;
	const uint64_t old_size = inode->size, end = off + len;
	uint64_t new_size = F2FS_MAX(old_size, end), pos = off;
	const uint8_t *data[MAX_BATCH_CLUSTERS];
	uint8_t *edge[2] = { NULL, NULL };
	int err = 0;

	if (inode->inline_flags & F2FS_COMPRESS_RELEASED)
		return -EPERM;
	while (pos < end && !err) {
		uint32_t first = (uint32_t)(pos / cbytes), n = 0, done = 0, valid;
		uint64_t upto = pos;

		/* the batch: whole clusters from src, the edges patched in a buffer each */
		while (n < MAX_BATCH_CLUSTERS && upto < end) {
			uint64_t cstart = (uint64_t)(first + n) * cbytes;
			size_t in = (size_t)(upto - cstart);
			size_t k = (size_t)F2FS_MIN((uint64_t)(cbytes - in), end - upto);

			if (k < cbytes) {
				uint8_t **b = &edge[upto == pos ? 0 : 1];

				if (!*b && !(*b = f2fs_alloc_blocks((uint32_t)(cbytes / F2FS_BLKSIZE)))) {
					err = -ENOMEM;
					break;
				}
				err = fill_cluster(sb, inode, ci, first + n, old_size, *b);
				if (err)
					break;
				memcpy(*b + in, src + (upto - off), k);
				data[n] = *b;
			} else {
				data[n] = src + (upto - off);
			}
			n++;
			upto += k;
		}
		if (!n)
			break;
		valid = pages_inside(inode, first + n - 1, new_size);
		err = f2fs_write_clusters(sb, inode, ci, first, n, data, valid,
					  need_compress(sb, inode), &done);
		if (done)
			pos = F2FS_MIN(end, (uint64_t)(first + done) * cbytes);
		if (pos > inode->size)
			inode->size = pos;
		if (!err && done < n)
			break;
	}
	free(edge[0]);
	free(edge[1]);
	*written = (size_t)(pos - off);
	return err;
}

/*
 * Writeback of a compressed file's dirty pages v[0..nr), sorted by index
 * (writeback.c): each cluster holding one is written once and whole, as
 * the kernel's writeback does after f2fs_prepare_compress_overwrite has
 * read the rest of the cluster: its clean pages come from the file (zeros
 * past i_size), and it is compressed when it lies wholly inside i_size.
 * Runs of consecutive dirty clusters go to f2fs_write_clusters together, so
 * an appender's clusters are one device request per direct node.  The
 * caller holds the inode's write lock, cp_rwsem shared and, when the
 * inode is serialized, the writepages lock, and marks the inode dirty.
 */
int f2fs_write_dirty_clusters(struct f2fs_sb *sb, struct f2fs_inode *inode,
			      const struct f2fs_page *v, uint32_t nr)
{
	const uint32_t log = inode->log_cluster_size;
	const size_t cbytes = (size_t)F2FS_BLKSIZE << log;
	/* 4 MiB of clusters a batch (a direct node's worth), no more than
	 * there are dirty pages (each dirty cluster holds one) */
	const uint32_t batch = F2FS_MIN(F2FS_MAX(1u, 1024u >> log), F2FS_MAX(nr, 1u));
	const struct fscrypt_inode_info *ci = NULL;
	const uint8_t **data = NULL;
	uint8_t *buf = NULL;
	uint32_t s = 0;
	int err = 0;

	/* the release ioctl writes the pages back first, and write(2) refuses */
	if (inode->inline_flags & F2FS_COMPRESS_RELEASED)
		return -EPERM;
	if (f2fs_is_encrypted(inode) && (err = f2fs_get_crypt_info(sb, inode, &ci)))
		return err;
	buf = f2fs_alloc_blocks(batch << log);
	data = malloc(sizeof(*data) * batch);
	if (!buf || !data) {
		err = -ENOMEM;
		goto out;
	}
	while (s < nr && !err) {
		const uint32_t first = (uint32_t)(v[s].index >> log);
		uint32_t n = 0, done = 0;

		while (s < nr && n < batch && v[s].index >> log == first + n) {
			const uint32_t c = first + n, inside = pages_inside(inode, c, inode->size);
			const uint64_t cstart = (uint64_t)c << log;
			uint8_t *cb = buf + (size_t)n * cbytes;
			uint32_t e = s, cover = 0;

			for (; e < nr && v[e].index >> log == c; e++)
				cover += v[e].index - cstart < inside;
			if (!inside) {
				/* past i_size (a truncation drops such pages): nothing to keep */
				s = e;
				break;
			}
			if (cover < inside) {
				err = fill_cluster(sb, inode, ci, c, inode->size, cb);
				if (err)
					break;
			} else {
				memset(cb + (size_t)inside * F2FS_BLKSIZE, 0,
				       cbytes - (size_t)inside * F2FS_BLKSIZE);
			}
			for (; s < e; s++)
				if (v[s].index - cstart < inside)
					memcpy(cb + (size_t)(v[s].index - cstart) * F2FS_BLKSIZE,
					       v[s].data, F2FS_BLKSIZE);
			data[n++] = cb;
		}
		if (err || !n)
			continue;
		/* only the last cluster of a run can reach past i_size */
		err = f2fs_write_clusters(sb, inode, ci, first, n, data,
					  pages_inside(inode, first + n - 1, inode->size),
					  need_compress(sb, inode), &done);
	}
out:
	free(data);
	free(buf);
	return err;
}

/*
 * Truncation of a compressed file to size (smaller than i_size), as
 * f2fs_truncate_blocks: a cut inside a compressed cluster frees the
 * clusters after it and writes that one again (f2fs_truncate_partial_cluster:
 * the whole cluster, zeros past the new size, compressed again when it
 * still compresses).  Returns 1 when done, 0 when the cut is at a cluster
 * boundary or inside a raw cluster, which truncate like any file's blocks.
 */
int f2fs_truncate_compressed(struct f2fs_sb *sb, struct f2fs_inode *inode, uint64_t size)
{
	const uint32_t log = inode->log_cluster_size, cs = 1u << log;
	const size_t cbytes = (size_t)F2FS_BLKSIZE << log;
	const uint32_t cluster = (uint32_t)(size / cbytes);
	const struct fscrypt_inode_info *ci = NULL;
	uint32_t addrs[MAX_CLUSTER_BLOCKS];
	uint8_t *buf;
	int err;

	if (!(size % cbytes))
		return 0;
	err = f2fs_get_cluster_addrs(sb, inode, cluster << log, addrs, cs);
	if (err || addrs[0] != COMPRESS_ADDR)
		return err;
	if (inode->inline_flags & F2FS_COMPRESS_RELEASED)
		return -EPERM;
	if (f2fs_is_encrypted(inode) && (err = f2fs_get_crypt_info(sb, inode, &ci)))
		return err;
	buf = f2fs_alloc_blocks(cs);
	if (!buf)
		return -ENOMEM;
	err = fill_cluster(sb, inode, ci, cluster, size, buf);
	if (!err)
		err = f2fs_truncate_inode_blocks(sb, inode, ((uint64_t)cluster + 1) << log);
	if (!err)
		err = f2fs_write_cluster(sb, inode, ci, cluster, buf, cs, need_compress(sb, inode));
	free(buf);
	return err ? err : 1;
}

/* ======================= policy ======================= */

/* addrs_per_inode without compression: what inode.c computed at load */
static uint32_t plain_addrs_per_inode(const struct f2fs_inode *inode)
{
	return DEF_ADDRS_PER_INODE - inode->extra_isize / 4 - inode->inline_xattr_addrs;
}

bool f2fs_may_compress(struct f2fs_sb *sb, const struct f2fs_inode *inode)
{
	return f2fs_has_feature(sb, F2FS_FEATURE_COMPRESSION) &&
	       I_COMPRESS_FLAG + 2 <= I_ADDR + (uint32_t)inode->extra_isize &&
	       (S_ISREG(inode->mode) || S_ISDIR(inode->mode)) &&
	       !(inode->inline_flags & F2FS_INLINE_DATA) && !(inode->inline_flags & F2FS_PIN_FILE);
}

/*
 * set_compress_context: the mount's algorithm, level, cluster size and
 * checksum choice.  A regular file gives up inline data (it has none: it
 * is new or empty) and its address slots round down to whole clusters.
 */
void f2fs_set_compress_context(struct f2fs_sb *sb, struct f2fs_inode *inode)
{
	const struct f2fs_mount_opts *o = &sb->opts;
	unsigned int alg = o->compress_algorithm_set ? o->compress_algorithm : COMPRESS_LZ4;

	inode->compress_algorithm = (uint8_t)alg;
	inode->log_cluster_size = (uint8_t)(o->compress_log_size ? o->compress_log_size :
					   MIN_COMPRESS_LOG_SIZE);
	inode->compress_flag = o->compress_chksum ? COMPRESS_CHKSUM : 0;
	if ((alg == COMPRESS_LZ4 || alg == COMPRESS_ZSTD) && o->compress_level)
		inode->compress_flag |= (uint16_t)(o->compress_level << COMPRESS_LEVEL_OFFSET);
	inode->flags |= F2FS_COMPR_FL;
	inode->flags &= ~F2FS_NOCOMP_FL;
	if (S_ISREG(inode->mode)) {
		inode->inline_flags &= ~F2FS_INLINE_DATA;
		inode->addrs_per_inode = plain_addrs_per_inode(inode) &
					 ~((1u << inode->log_cluster_size) - 1);
	}
}

/* f2fs_disable_compressed_file, for a file without blocks or a directory */
void f2fs_clear_compress_context(struct f2fs_inode *inode)
{
	inode->flags &= ~F2FS_COMPR_FL;
	inode->compress_algorithm = 0;
	inode->log_cluster_size = 0;
	inode->compress_flag = 0;
	inode->compr_blocks = 0;
	inode->addrs_per_inode = plain_addrs_per_inode(inode);
}

/* is_extension_exist: "*" matches all, else name ends in "." ext, any case */
static bool has_extension(const char *name, size_t len, const char *ext)
{
	size_t el = strlen(ext);

	if (el == 1 && ext[0] == '*')
		return true;
	if (len < el + 2 || name[len - el - 1] != '.')
		return false;
	return !strncasecmp(name + len - el, ext, el);
}

/*
 * set_compress_new_inode, for a new regular file or directory: a file
 * named with a nocompress_extension stays plain, one with a
 * compress_extension is compressed; otherwise both take the directory's
 * choice (F2FS_NOCOMP_FL or F2FS_COMPR_FL).
 */
static void choose_compression(struct f2fs_sb *sb, const struct f2fs_inode *dir,
			       struct f2fs_inode *inode, const char *name, size_t len)
{
	const struct f2fs_mount_opts *o = &sb->opts;

	if (!f2fs_has_feature(sb, F2FS_FEATURE_COMPRESSION) ||
	    I_COMPRESS_FLAG + 2 > I_ADDR + (uint32_t)inode->extra_isize)
		return;
	if (S_ISREG(inode->mode)) {
		for (unsigned int i = 0; i < o->nr_nocompress_ext; i++)
			if (has_extension(name, len, o->nocompress_ext[i]))
				return;
		for (unsigned int i = 0; i < o->nr_compress_ext; i++) {
			if (has_extension(name, len, o->compress_ext[i])) {
				f2fs_set_compress_context(sb, inode);
				return;
			}
		}
	} else if (!S_ISDIR(inode->mode)) {
		return;
	}
	if (dir->flags & F2FS_NOCOMP_FL)
		inode->flags |= F2FS_NOCOMP_FL;
	else if (dir->flags & F2FS_COMPR_FL)
		f2fs_set_compress_context(sb, inode);
}

void f2fs_compress_new_inode(struct f2fs_sb *sb, const struct f2fs_inode *dir,
			     struct f2fs_inode *inode, const char *name, size_t len)
{
	uint32_t flags = inode->flags;
	uint8_t inline_flags = inode->inline_flags;

	inode->flags &= ~(F2FS_COMPR_FL | F2FS_NOCOMP_FL);
	choose_compression(sb, dir, inode, name, len);
	/* the inode block has the flags the new inode was made with */
	if (inode->flags != flags || inode->inline_flags != inline_flags)
		f2fs_mark_inode_dirty(sb, inode);
}

static int bad_option(char *err, size_t errlen, const char *why, const char *opt)
{
	snprintf(err, errlen, "%s: %s", opt, why);
	return -EINVAL;
}

static int add_extension(char (*list)[F2FS_COMPRESS_EXT_LEN], unsigned int *nr, const char *ext,
			 const char *opt, char *err, size_t errlen)
{
	if (!*ext || strlen(ext) >= F2FS_COMPRESS_EXT_LEN)
		return bad_option(err, errlen, "an extension is 1 to 7 characters", opt);
	if (*nr >= F2FS_MAX_COMPRESS_EXT)
		return bad_option(err, errlen, "at most 16 extensions", opt);
	strcpy(list[(*nr)++], ext);
	return 0;
}

int f2fs_parse_compress_option(struct f2fs_mount_opts *o, const char *opt, char *err,
			       size_t errlen)
{
	const char *v = strchr(opt, '=');
	size_t klen = v ? (size_t)(v - opt) : strlen(opt);

#define KEY(k) (klen == sizeof(k) - 1 && !strncmp(opt, k, klen))
	if (v)
		v++;
	if (KEY("compress_chksum") && !v) {
		o->compress_chksum = true;
	} else if (KEY("compress_mode") && v) {
		if (strcmp(v, "fs") && strcmp(v, "user"))
			return bad_option(err, errlen, "compress_mode is fs or user", opt);
		o->compress_mode_user = !strcmp(v, "user");
	} else if (KEY("compress_log_size") && v) {
		char *end;
		unsigned long n = strtoul(v, &end, 10);

		if (*end || !*v || n < MIN_COMPRESS_LOG_SIZE || n > MAX_COMPRESS_LOG_SIZE)
			return bad_option(err, errlen, "compress_log_size is 2 to 8", opt);
		o->compress_log_size = (unsigned int)n;
	} else if (KEY("compress_algorithm") && v) {
		char name[16];
		const char *colon = strchr(v, ':');
		size_t nlen = colon ? (size_t)(colon - v) : strlen(v);
		unsigned long level = 0;
		int alg;

		if (nlen >= sizeof(name))
			return bad_option(err, errlen, "unknown compression algorithm", opt);
		memcpy(name, v, nlen);
		name[nlen] = 0;
		alg = f2fs_compress_algorithm(name);
		if (alg < 0)
			return bad_option(err, errlen, "unknown compression algorithm", opt);
		if (colon) {
			char *end;

			level = strtoul(colon + 1, &end, 10);
			/* f2fs_set_{lz4hc,zstd}_level: only lz4 and zstd take levels */
			if (*end || !colon[1] || (alg != COMPRESS_LZ4 && alg != COMPRESS_ZSTD) ||
			    !level || level > 255 || !compress_ops[alg].level_valid((unsigned int)level))
				return bad_option(err, errlen, "bad compression level", opt);
		}
		o->compress_algorithm = (unsigned int)alg;
		o->compress_algorithm_set = true;
		o->compress_level = (unsigned int)level;
	} else if (KEY("compress_extension") && v) {
		if (add_extension(o->compress_ext, &o->nr_compress_ext, v, opt, err, errlen))
			return -EINVAL;
	} else if (KEY("nocompress_extension") && v) {
		if (add_extension(o->nocompress_ext, &o->nr_nocompress_ext, v, opt, err, errlen))
			return -EINVAL;
	} else {
		return 0;
	}
#undef KEY
	return 1;
}

/* ======================= the compression ioctls ======================= */

/*
 * release_compress_blocks / reserve_compress_blocks over every cluster
 * inside i_size: releasing gives back each compressed cluster's head and
 * reserved slots (NEW_ADDR -> NULL_ADDR), reserving takes them again.
 * *changed counts the blocks, as the ioctls report them.
 */
int f2fs_change_compress_reservation(struct f2fs_sb *sb, struct f2fs_inode *inode, bool release,
				     uint64_t *changed)
{
	const uint32_t log = inode->log_cluster_size, cs = 1u << log;
	const uint64_t clusters = (inode->size + ((uint64_t)F2FS_BLKSIZE << log) - 1) >>
				  (F2FS_BLKSIZE_BITS + log);
	struct dnode_of_data *dn = f2fs_alloc_blocks((sizeof(*dn) + F2FS_BLKSIZE - 1) / F2FS_BLKSIZE);
	int err = 0;

	*changed = 0;
	if (!dn)
		return -ENOMEM;
	for (uint64_t c = 0; c < clusters && !err; c++) {
		uint32_t start = (uint32_t)(c << log), nr = 0, moved = 0, held = 0;
		uint8_t *a;

		err = f2fs_get_dnode_of_data(sb, inode, start, LOOKUP_NODE, dn);
		if (err == -ENOENT) {
			err = 0;
			continue;
		}
		if (err)
			break;
		if (dn->ofs_in_node + cs > dn->naddrs) {
			err = f2fs_corrupted(sb, "inode %u: cluster %u straddles a node", inode->ino,
					     (uint32_t)c);
			break;
		}
		a = dn->addrs + 4 * dn->ofs_in_node;
		if (get_le32(a) != COMPRESS_ADDR)
			continue;
		for (uint32_t i = 1; i < cs; i++) {
			nr += is_data_addr(get_le32(a + 4 * i));
			held += get_le32(a + 4 * i) == NULL_ADDR;
		}
		if (!release) {
			/* inc_valid_block_count charges the quota for the slots
			 * (and the head) it reserves again; -EDQUOT stops here */
			err = f2fs_dquot_alloc_block(sb, inode, held + 1);
			if (err)
				break;
			err = f2fs_take_user_blocks(sb, cs - nr);
			if (err) {
				f2fs_dquot_free_block(sb, inode, held + 1);
				break;
			}
		}
		for (uint32_t i = 1; i < cs; i++) {
			uint32_t x = get_le32(a + 4 * i);

			if (release && x == NEW_ADDR) {
				put_le32(a + 4 * i, NULL_ADDR);
				moved++;
			} else if (!release && !is_data_addr(x)) {
				put_le32(a + 4 * i, NEW_ADDR);
				moved += x == NULL_ADDR;
			}
		}
		/* the head counts as a block only while the cluster is reserved */
		moved++;
		if (release) {
			f2fs_add_valid_blocks(sb, -(int64_t)moved);
			f2fs_dquot_free_block(sb, inode, moved);
			inode->blocks -= moved;
			inode->compr_blocks -= F2FS_MIN(inode->compr_blocks, (uint64_t)(cs - nr));
		} else {
			/* what was taken beyond the slots that changed goes back */
			f2fs_add_valid_blocks(sb, -(int64_t)(cs - nr - moved));
			inode->blocks += moved;
			inode->compr_blocks += cs - nr;
		}
		*changed += moved;
		err = f2fs_put_dnode(sb, dn);
	}
	free(dn);
	f2fs_drop_extent_cache(inode, 0, UINT32_MAX);
	return err;
}

/*
 * F2FS_IOC_COMPRESS_FILE / F2FS_IOC_DECOMPRESS_FILE (compress_mode=user):
 * every cluster inside i_size written again, compressed where it fills
 * the cluster and saves a block, or raw.
 */
int f2fs_recompress_file(struct f2fs_sb *sb, struct f2fs_inode *inode, bool compress)
{
	const uint32_t log = inode->log_cluster_size;
	const uint64_t clusters = (inode->size + ((uint64_t)F2FS_BLKSIZE << log) - 1) >>
				  (F2FS_BLKSIZE_BITS + log);
	const struct fscrypt_inode_info *ci = NULL;
	uint32_t addrs[MAX_CLUSTER_BLOCKS];
	uint8_t *buf;
	int err = 0;

	if (f2fs_is_encrypted(inode) && (err = f2fs_get_crypt_info(sb, inode, &ci)))
		return err;
	buf = f2fs_alloc_blocks(1u << log);
	if (!buf)
		return -ENOMEM;
	for (uint64_t c = 0; c < clusters && !err; c++) {
		uint32_t valid = pages_inside(inode, (uint32_t)c, inode->size);
		bool holes = true;

		err = f2fs_get_cluster_addrs(sb, inode, (uint32_t)(c << log), addrs, 1u << log);
		if (err)
			break;
		for (uint32_t i = 0; i < (1u << log); i++)
			holes &= addrs[i] == NULL_ADDR;
		/* nothing to do for holes, or a cluster already as asked */
		if (holes || (addrs[0] == COMPRESS_ADDR) == compress)
			continue;
		err = fill_cluster(sb, inode, ci, (uint32_t)c, inode->size, buf);
		if (!err)
			err = f2fs_write_cluster(sb, inode, ci, (uint32_t)c, buf, valid, compress);
	}
	free(buf);
	return err;
}
