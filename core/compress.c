// SPDX-License-Identifier: GPL-2.0
/*
 * Compressed files (the read side of fs/f2fs/compress.c).
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
 * A reader decompresses whole clusters: straight into the caller's buffer
 * when the read covers the cluster, otherwise into a scratch buffer whose
 * cluster stays cached in the inode (until its last close) for the reads
 * that follow it through the same cluster.  Nothing writes compressed files
 * yet; whatever comes to change their clusters must drop that cache.
 *
 * Every layout and header field is checked before use.  A cluster that is
 * damaged (impossible slot layout, clen beyond its blocks, checksum
 * mismatch, decompressor failure or wrong length) reads as EIO, never as
 * other bytes; unlike the kernel, which only logs a checksum mismatch,
 * that includes the checksum.
 */
#include <stdlib.h>
#include <string.h>

#include <lz4.h>
#include <lzo1x.h>
#include <zstd.h>

#include "f2fs.h"

#define MAX_CLUSTER_BLOCKS	(1u << MAX_COMPRESS_LOG_SIZE)
#define LZ4HC_MIN_LEVEL		3	/* LZ4HC_CLEVEL_MIN */
#define LZ4HC_MAX_LEVEL		12	/* LZ4HC_CLEVEL_MAX */
#define MAX_IDLE_DICS		4

/* A decompression context with its buffers (the kernel's decompress_io_ctx). */
struct f2fs_dic {
	struct f2fs_dic *next;		/* in the pool */
	uint8_t *cbuf;			/* the compressed blocks, as read */
	uint8_t *rbuf;			/* a decompressed cluster */
	uint32_t cbuf_blocks, rbuf_blocks;
	ZSTD_DCtx *zstd;
};

struct f2fs_compress_pool {
	pthread_mutex_t lock;
	struct f2fs_dic *idle;
	unsigned int nr_idle;
};

/* The last cluster an inode's readers decompressed. */
struct f2fs_cluster_cache {
	pthread_mutex_t lock;
	bool valid;
	uint32_t cluster;
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
};

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

static const struct f2fs_compress_ops compress_ops[COMPRESS_MAX] = {
	[COMPRESS_LZO] = { "lzo", lzo_decompress, no_level },
	[COMPRESS_LZ4] = { "lz4", lz4_decompress, lz4_level_valid },
	[COMPRESS_ZSTD] = { "zstd", zstd_decompress, zstd_level_valid },
	[COMPRESS_LZORLE] = { "lzo-rle", lzorle_decompress, no_level },
};

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

int f2fs_compress_init(struct f2fs_sb *sb)
{
	struct f2fs_compress_pool *pool = calloc(1, sizeof(*pool));

	if (!pool)
		return -ENOMEM;
	/* liblzo2's ABI check; it fails only against a mismatched library */
	if (lzo_init() != LZO_E_OK) {
		free(pool);
		return -EIO;
	}
	pthread_mutex_init(&pool->lock, NULL);
	sb->cpool = pool;
	return 0;
}

static void free_dic(struct f2fs_dic *dic)
{
	if (!dic)
		return;
	ZSTD_freeDCtx(dic->zstd);
	free(dic->cbuf);
	free(dic->rbuf);
	free(dic);
}

void f2fs_compress_destroy(struct f2fs_sb *sb)
{
	struct f2fs_compress_pool *pool = sb->cpool;

	if (!pool)
		return;
	while (pool->idle) {
		struct f2fs_dic *d = pool->idle;

		pool->idle = d->next;
		free_dic(d);
	}
	pthread_mutex_destroy(&pool->lock);
	free(pool);
	sb->cpool = NULL;
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

/* Copy [in, in + n) of the cached cluster, if it is the one asked for. */
static bool cache_read(struct f2fs_inode *inode, uint32_t cluster, size_t in, size_t n,
		       uint8_t *dst)
{
	struct f2fs_cluster_cache *cc = atomic_load(&inode->ccache);
	bool hit;

	if (!cc)
		return false;
	pthread_mutex_lock(&cc->lock);
	hit = cc->valid && cc->cluster == cluster;
	if (hit)
		memcpy(dst, cc->buf + in, n);
	pthread_mutex_unlock(&cc->lock);
	return hit;
}

/* Keep dic's freshly decompressed cluster: the buffers change hands. */
static void cache_keep(struct f2fs_inode *inode, uint32_t cluster, struct f2fs_dic *dic)
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
 * Decompress the cluster starting at file block start, whose slots are
 * addrs (addrs[0] == COMPRESS_ADDR), into out (the whole cluster).
 */
static int decompress_cluster(struct f2fs_sb *sb, struct f2fs_inode *inode,
			      const struct fscrypt_inode_info *ci, uint32_t start,
			      const uint32_t *addrs, struct f2fs_dic *dic, uint8_t *out)
{
	const uint32_t cs = 1u << inode->log_cluster_size;
	uint32_t nr = 0, clen, i;
	bool ended = false;
	int err;

	/* f2fs_sanity_check_cluster: data blocks, then only reservations or holes */
	for (i = 1; i < cs; i++) {
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
	if (!nr)
		return bad_cluster(sb, inode, start, "no compressed blocks");
	err = reserve_blocks(&dic->cbuf, &dic->cbuf_blocks, nr);
	if (err)
		return err;
	for (i = 0; i < nr;) {
		uint32_t run = 1;

		while (i + run < nr && addrs[1 + i + run] == addrs[1 + i] + run)
			run++;
		err = f2fs_read_mapped(sb, ci, addrs[1 + i], start + 1 + i, 0,
				       (size_t)run * F2FS_BLKSIZE, dic->cbuf + (size_t)i * F2FS_BLKSIZE);
		if (err)
			return err;
		i += run;
	}
	clen = get_le32(dic->cbuf + COMPRESS_DATA_CLEN);
	if (clen > (size_t)nr * F2FS_BLKSIZE - COMPRESS_DATA_HDR)
		return bad_cluster(sb, inode, start, "compressed length beyond its blocks");
	if ((inode->compress_flag & COMPRESS_CHKSUM) &&
	    f2fs_chksum(dic->cbuf + COMPRESS_DATA_HDR, clen) !=
	    get_le32(dic->cbuf + COMPRESS_DATA_CHKSUM))
		return bad_cluster(sb, inode, start, "checksum mismatch");
	err = f2fs_decompress(dic, inode->compress_algorithm, dic->cbuf + COMPRESS_DATA_HDR, clen,
			      out, (size_t)cs * F2FS_BLKSIZE);
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
 * f2fs_file_read for a compressed file: len bytes at off, all inside
 * i_size.  ci is the key when the file is encrypted.
 */
ssize_t f2fs_read_compressed(struct f2fs_sb *sb, struct f2fs_inode *inode,
			     const struct fscrypt_inode_info *ci, uint8_t *dst, size_t len,
			     uint64_t off)
{
	const uint32_t log = inode->log_cluster_size, cs = 1u << log;
	const size_t cbytes = (size_t)cs * F2FS_BLKSIZE;
	uint32_t addrs[MAX_CLUSTER_BLOCKS];
	struct f2fs_dic *dic = NULL;
	size_t done = 0;
	int err = 0;

	while (done < len) {
		uint64_t pos = off + done;
		uint32_t cluster = (uint32_t)(pos / cbytes), start = cluster << log;
		size_t in = (size_t)(pos % cbytes), n = F2FS_MIN(cbytes - in, len - done);

		if (cache_read(inode, cluster, in, n, dst + done)) {
			done += n;
			continue;
		}
		err = f2fs_get_cluster_addrs(sb, inode, start, addrs, cs);
		if (err)
			break;
		if (addrs[0] != COMPRESS_ADDR) {
			err = read_raw(sb, inode, ci, start, addrs, in, n, dst + done);
		} else if (!dic && !(dic = get_dic(sb))) {
			err = -ENOMEM;
		} else if (n == cbytes) {
			err = decompress_cluster(sb, inode, ci, start, addrs, dic, dst + done);
		} else {
			err = reserve_blocks(&dic->rbuf, &dic->rbuf_blocks, cs);
			if (!err)
				err = decompress_cluster(sb, inode, ci, start, addrs, dic, dic->rbuf);
			if (!err) {
				memcpy(dst + done, dic->rbuf + in, n);
				cache_keep(inode, cluster, dic);
			}
		}
		if (err)
			break;
		done += n;
	}
	put_dic(sb, dic);
	/* never a short read: FUSE takes one for the end of the file */
	return err ? err : (ssize_t)done;
}
