// SPDX-License-Identifier: GPL-2.0
/*
 * Data: mapping file blocks (the read extent cache first, else the node
 * tree walk of node.c), the read path that turns mapped runs into
 * vectored device reads, the write path that writes blocks out of place,
 * and truncation, hole punching and reservation.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "f2fs.h"

#define MAX_READ_RUN 1024	/* blocks per device read */

static bool is_hole(uint32_t a)
{
	return a == NULL_ADDR || a == NEW_ADDR;
}

/*
 * A miss at the first block of a direct node whose previous block is
 * cached: a reader going on from the previous node (which taught the cache
 * its runs to its end).  Its walk reads the next nodes ahead with this one
 * (LOOKUP_NODE_RA), so a cold sequential read pays one batch per indirect
 * node instead of one synchronous read per 4 MiB; a random read stays one
 * node.
 */
static bool sequential_miss(struct f2fs_inode *inode, uint32_t lblk)
{
	struct f2fs_extent prev;

	return lblk > 0 && lblk >= inode->addrs_per_inode &&
	       (lblk - inode->addrs_per_inode) % f2fs_addrs_per_block(inode) == 0 &&
	       f2fs_extent_lookup(&inode->et, lblk - 1, &prev);
}

int f2fs_map_blocks(struct f2fs_sb *sb, struct f2fs_inode *inode, uint32_t lblk,
		    uint32_t maxlen, uint32_t *pblk, uint32_t *len)
{
	struct dnode_of_data dn;
	struct f2fs_extent ext;
	const uint8_t *addrs;
	uint32_t naddrs, ofs, a0, n;
	int err;

	if (!maxlen)
		maxlen = 1;
	if (f2fs_extent_lookup(&inode->et, lblk, &ext)) {
		f2fs_stat_add(sb, extent_hits, 1);
		*pblk = ext.blk + (lblk - ext.fofs);
		*len = F2FS_MIN(ext.len - (lblk - ext.fofs), maxlen);
		return 0;
	}
	f2fs_stat_add(sb, extent_misses, 1);
	if (lblk >= f2fs_max_file_blocks(inode)) {
		*pblk = NULL_ADDR;
		*len = maxlen;
		return 0;
	}
	err = f2fs_get_dnode_of_data(sb, inode, lblk, sequential_miss(inode, lblk) ?
				     LOOKUP_NODE_RA : LOOKUP_NODE, &dn);
	if (err == -ENOENT) {
		*pblk = NULL_ADDR;
		*len = (uint32_t)F2FS_MIN(dn.hole_blocks, (uint64_t)maxlen);
		return 0;
	}
	if (err)
		return err;
	addrs = dn.addrs;
	naddrs = dn.naddrs;
	ofs = dn.ofs_in_node;
	a0 = get_le32(addrs + 4 * ofs);
	if (f2fs_is_compressed(inode)) {
		uint32_t cs = 1u << inode->log_cluster_size, head = ofs & ~(cs - 1);

		/* a compressed cluster maps as a whole, to no file block of its own */
		if (get_le32(addrs + 4 * head) == COMPRESS_ADDR) {
			*pblk = COMPRESS_ADDR;
			*len = F2FS_MIN(cs - (ofs - head), maxlen);
			return 0;
		}
	} else if (a0 == COMPRESS_ADDR) {
		return f2fs_corrupted(sb, "inode %u: COMPRESS_ADDR in a file not compressed",
				      inode->ino);
	}
	f2fs_update_extent_cache(sb, &dn, lblk);
	if (is_hole(a0)) {
		for (n = 1; ofs + n < naddrs && n < maxlen &&
			    get_le32(addrs + 4 * (ofs + n)) == a0; n++)
			;
	} else {
		for (n = 1; ofs + n < naddrs && n < maxlen &&
			    get_le32(addrs + 4 * (ofs + n)) == a0 + n; n++)
			;
		if (!f2fs_valid_main_blkaddr(sb, a0) || (uint64_t)a0 + n > f2fs_main_end_blkaddr(sb))
			return f2fs_corrupted(sb, "inode %u: block %u maps to 0x%x, outside the main "
					      "area", inode->ino, lblk, a0);
	}
	*pblk = a0;
	*len = n;
	return 0;
}

#define PRECACHE_RUNS 1024	/* runs handed to the extent tree at once */

struct precache {
	struct f2fs_sb *sb;
	struct f2fs_inode *inode;
	struct f2fs_extent run;		/* the run growing, across node boundaries too */
	struct f2fs_extent runs[PRECACHE_RUNS];
	uint32_t nr;
};

static void precache_end_run(struct precache *pc)
{
	if (!pc->run.len)
		return;
	pc->runs[pc->nr++] = pc->run;
	pc->run.len = 0;
	if (pc->nr == PRECACHE_RUNS) {
		f2fs_extent_insert_runs(&pc->inode->et, pc->runs, pc->nr);
		pc->nr = 0;
	}
}

/* How many slots from i on go on counting up from a: 16 at a time, which vectorizes. */
static uint32_t contiguous(const uint8_t *addrs, uint32_t i, uint32_t naddrs, uint32_t a)
{
	uint32_t n = 0;

	while (i + n + 16 <= naddrs) {
		uint32_t diff = 0;

		for (uint32_t k = 0; k < 16; k++)
			diff |= get_le32(addrs + 4 * (i + n + k)) ^ (a + n + k);
		if (diff)
			break;
		n += 16;
	}
	while (i + n < naddrs && get_le32(addrs + 4 * (i + n)) == a + n)
		n++;
	return n;
}

/* One direct node (or the inode's slots): its mapped runs, checked, onto the batch. */
static int precache_dnode(void *arg, uint64_t lblk, const uint8_t *addrs, uint32_t naddrs)
{
	struct precache *pc = arg;
	uint64_t main_end = f2fs_main_end_blkaddr(pc->sb);

	if (lblk >= pc->inode->addrs_per_inode)
		f2fs_stat_add(pc->sb, precache_nodes, 1);
	for (uint32_t i = 0, n; i < naddrs; i += n) {
		uint32_t a = get_le32(addrs + 4 * i);
		uint64_t fofs = lblk + i;

		if (is_hole(a) || a == COMPRESS_ADDR) {
			/* COMPRESS_ADDR in a file not compressed is the mapping's to report */
			precache_end_run(pc);
			n = 1;
			continue;
		}
		if (!f2fs_valid_main_blkaddr(pc->sb, a))
			return f2fs_corrupted(pc->sb, "inode %u: block %llu maps to 0x%x, outside the "
					      "main area", pc->inode->ino, (unsigned long long)fofs, a);
		/* a run stops at the main area's end: the slot after it is reported above */
		n = contiguous(addrs, i, naddrs, a);
		if ((uint64_t)a + n > main_end)
			n = (uint32_t)(main_end - a);
		if (pc->run.len && a == pc->run.blk + pc->run.len &&
		    fofs == (uint64_t)pc->run.fofs + pc->run.len && pc->run.len + n > pc->run.len) {
			pc->run.len += n;	/* a run going on from the previous node */
			continue;
		}
		precache_end_run(pc);
		pc->run = (struct f2fs_extent){ (uint32_t)fofs, a, n };
	}
	return 0;
}

/*
 * f2fs_precache_extents (F2FS_IOC_PRECACHE_EXTENTS): walk every direct node
 * of the file once and put its mapped runs into the read extent cache, so
 * later reads map without touching the node tree.  The walk reads nodes a
 * batch at a time, as the kernel's F2FS_GET_BLOCK_PRECACHE reads them
 * ahead (LOOKUP_NODE_RA), and decodes each where it lands: runs that go on
 * across node boundaries become one run, and the tree learns them in
 * batches.  Caller holds the inode's read lock.
 */
int f2fs_precache_inode(struct f2fs_sb *sb, struct f2fs_inode *inode)
{
	uint64_t end = (inode->size + F2FS_BLKSIZE - 1) / F2FS_BLKSIZE;
	struct precache *pc;
	int err;

	/* compressed clusters are mapped cluster by cluster, inline data not at all */
	if ((inode->mode & S_IFMT) != S_IFREG || f2fs_is_compressed(inode) ||
	    (inode->inline_flags & F2FS_INLINE_DATA))
		return 0;
	end = F2FS_MIN(end, f2fs_max_file_blocks(inode));
	pc = malloc(sizeof(*pc));
	if (!pc)
		return -ENOMEM;
	pc->sb = sb;
	pc->inode = inode;
	pc->run.len = 0;
	pc->nr = 0;
	err = f2fs_walk_dnodes(sb, inode, end, precache_dnode, pc);
	if (!err) {
		precache_end_run(pc);
		f2fs_extent_insert_runs(&inode->et, pc->runs, pc->nr);
	}
	free(pc);
	return err;
}

int f2fs_get_cluster_addrs(struct f2fs_sb *sb, struct f2fs_inode *inode, uint32_t start,
			   uint32_t *addrs, uint32_t n)
{
	struct dnode_of_data dn;
	int err;

	for (uint32_t i = 0; i < n; i++)
		addrs[i] = NULL_ADDR;
	if (start >= f2fs_max_file_blocks(inode))
		return 0;
	err = f2fs_get_dnode_of_data(sb, inode, start, LOOKUP_NODE, &dn);
	if (err == -ENOENT)
		return 0;	/* a missing node: holes */
	if (err)
		return err;
	/* clusters never straddle nodes: the slot counts are rounded to them */
	if (dn.ofs_in_node + n > dn.naddrs)
		return -EINVAL;
	for (uint32_t i = 0; i < n; i++)
		addrs[i] = get_le32(dn.addrs + 4 * (dn.ofs_in_node + i));
	return 0;
}

int f2fs_read_data_block(struct f2fs_sb *sb, struct f2fs_inode *inode, uint32_t lblk,
			 uint8_t *buf)
{
	bool cacheable = (inode->mode & S_IFMT) == S_IFDIR;
	uint32_t pblk, len;
	int err = f2fs_map_blocks(sb, inode, lblk, 1, &pblk, &len);

	if (err)
		return err;
	if (is_hole(pblk)) {
		memset(buf, 0, F2FS_BLKSIZE);
		return 0;
	}
	if (cacheable && f2fs_cache_lookup(sb->cache, pblk, buf))
		return 1;
	err = f2fs_dev_read(sb->dev, pblk, buf, 1);
	if (err)
		return err;
	if (cacheable)
		f2fs_cache_insert(sb->cache, pblk, buf);
	return 1;
}

static int cmp_blkaddr(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

void f2fs_ra_dir_blocks(struct f2fs_sb *sb, struct f2fs_inode *dir, uint32_t lblk, uint32_t n)
{
	struct f2fs_ra_result res = { 0 };
	uint32_t addrs[F2FS_DIR_RA_BLOCKS], m = 0;

	if ((dir->mode & S_IFMT) != S_IFDIR || !f2fs_node_ra_blocks(sb))
		return;
	n = F2FS_MIN(n, (uint32_t)F2FS_DIR_RA_BLOCKS);
	for (uint32_t i = 0; i < n;) {
		uint32_t pblk, run;

		if (f2fs_map_blocks(sb, dir, lblk + i, n - i, &pblk, &run) < 0)
			break;
		if (run == 0)
			run = 1;
		for (uint32_t k = 0; k < run && i + k < n; k++)
			if (!is_hole(pblk) && f2fs_valid_main_blkaddr(sb, pblk + k))
				addrs[m++] = pblk + k;
		i += run;
	}
	if (m < 2)
		return;		/* one block: the reader's own read is as good */
	qsort(addrs, m, sizeof(*addrs), cmp_blkaddr);
	f2fs_cache_readahead(sb->cache, sb->dev, addrs, m, f2fs_node_ra_depth(sb),
			     f2fs_ra_keep_all, NULL, &res);
	f2fs_stat_add(sb, node_ra_blocks, res.blocks);
	f2fs_stat_add(sb, node_ra_requests, res.requests);
}

/*
 * Read `bytes` starting `skip` bytes into physical block pblk into dst with
 * one vectored device read: partial first and last blocks go through
 * bounce blocks, whole blocks land directly in dst.
 */
static int read_run(struct f2fs_sb *sb, uint32_t pblk, uint32_t nblocks, uint32_t skip,
		    size_t bytes, uint8_t *dst, const struct f2fs_crypt_ctx *crypt)
{
	uint8_t *bounce = f2fs_alloc_blocks(2);
	struct iovec iov[3];
	int iovcnt = 0, err;
	uint8_t *head = NULL, *tail = NULL;
	size_t head_bytes = 0, mid_bytes, tail_bytes = 0;
	uint32_t mid_blocks = nblocks;

	if (!bounce)
		return -ENOMEM;
	if (skip || (nblocks == 1 && bytes < F2FS_BLKSIZE)) {
		head = bounce;
		head_bytes = F2FS_MIN(bytes, (size_t)(F2FS_BLKSIZE - skip));
		iov[iovcnt++] = (struct iovec){ head, F2FS_BLKSIZE };
		mid_blocks--;
	}
	if (mid_blocks && (skip + bytes) % F2FS_BLKSIZE) {
		tail = bounce + F2FS_BLKSIZE;
		tail_bytes = (skip + bytes) % F2FS_BLKSIZE;
		mid_blocks--;
	}
	mid_bytes = (size_t)mid_blocks * F2FS_BLKSIZE;
	if (mid_blocks)
		iov[iovcnt++] = (struct iovec){ dst + head_bytes, mid_bytes };
	if (tail)
		iov[iovcnt++] = (struct iovec){ tail, F2FS_BLKSIZE };

	struct f2fs_bio bio = {
		.op = F2FS_BIO_READ, .blkaddr = pblk, .nr_blocks = nblocks,
		.iov = iov, .iovcnt = iovcnt, .crypt = crypt, .file_data = true,
	};
	err = f2fs_submit_bio(sb->dev, &bio);
	if (!err) {
		if (head)
			memcpy(dst, head + skip, head_bytes);
		if (tail)
			memcpy(dst + head_bytes + mid_bytes, tail, tail_bytes);
	}
	free(bounce);
	return err;
}

int f2fs_read_mapped(struct f2fs_sb *sb, const struct fscrypt_inode_info *ci, uint32_t pblk,
		     uint64_t lblk, uint32_t skip, size_t bytes, uint8_t *dst)
{
	while (bytes) {
		uint32_t n = (uint32_t)((skip + bytes + F2FS_BLKSIZE - 1) / F2FS_BLKSIZE);
		size_t chunk = bytes;
		struct f2fs_crypt_ctx cc;
		int err;

		if (ci) {
			/* one bio's DUNs must be consecutive (IV_INO_LBLK_32 wraps) */
			uint32_t lim = f2fs_crypt_limit_blocks(ci, lblk, n);

			if (lim < n) {
				n = lim;
				chunk = (size_t)n * F2FS_BLKSIZE - skip;
			}
			f2fs_crypt_ctx(ci, lblk, &cc);
		}
		err = read_run(sb, pblk, n, skip, chunk, dst, ci ? &cc : NULL);
		if (err)
			return err;
		pblk += n;
		lblk += n;
		dst += chunk;
		bytes -= chunk;
		skip = 0;
	}
	return 0;
}

/*
 * An atomic write's view of a file block (the kernel reads it from the page
 * cache, which holds what was written): the COW inode's block, else the
 * file's own below atomic_keep, else a hole.  Same contract as
 * f2fs_map_blocks.
 */
static int map_atomic(struct f2fs_sb *sb, struct f2fs_inode *inode, uint32_t lblk,
		      uint32_t maxlen, uint32_t *pblk, uint32_t *len)
{
	int err = f2fs_map_blocks(sb, inode->cow, lblk, maxlen, pblk, len);

	if (err || !is_hole(*pblk) || lblk >= inode->atomic_keep)
		return err;
	maxlen = (uint32_t)F2FS_MIN((uint64_t)*len, inode->atomic_keep - lblk);
	return f2fs_map_blocks(sb, inode, lblk, maxlen, pblk, len);
}

static ssize_t file_read(struct f2fs_sb *sb, struct f2fs_inode *inode, void *buf, size_t len,
			 uint64_t off);

ssize_t f2fs_file_read(struct f2fs_sb *sb, struct f2fs_inode *inode, void *buf, size_t len,
		       uint64_t off)
{
	struct f2fs_inode *cow = inode->cow;
	ssize_t r;

	if (!cow)
		return file_read(sb, inode, buf, len, off);
	/* cleaning moves the COW inode's blocks under its own lock */
	pthread_rwlock_rdlock(&cow->lock);
	r = file_read(sb, inode, buf, len, off);
	pthread_rwlock_unlock(&cow->lock);
	return r;
}

static ssize_t file_read(struct f2fs_sb *sb, struct f2fs_inode *inode, void *buf, size_t len,
			 uint64_t off)
{
	const struct fscrypt_inode_info *ci = NULL;

	/* as fscrypt_file_open: no key, no contents, not even "empty" */
	if (f2fs_is_encrypted(inode)) {
		int err = f2fs_get_crypt_info(sb, inode, &ci);

		if (err)
			return err;
	}
	if (off >= inode->size || !len)
		return 0;
	len = (size_t)F2FS_MIN((uint64_t)len, inode->size - off);
	/* before the inline and compressed paths, which it refuses */
	if (f2fs_is_verity(inode))
		return f2fs_verity_read(sb, inode, ci, buf, len, off);
	if (inode->inline_flags & F2FS_INLINE_DATA)
		return f2fs_read_inline_data(inode, buf, len, off);
	if (f2fs_is_compressed(inode)) {
		ssize_t r = f2fs_read_compressed(sb, inode, ci, buf, len, off);

		/* what is written but not yet written back */
		if (r > 0)
			f2fs_pc_overlay(inode->pages, buf, (size_t)r, off);
		return r;
	}
	return f2fs_read_range(sb, inode, ci, buf, len, off);
}

ssize_t f2fs_read_range(struct f2fs_sb *sb, struct f2fs_inode *inode,
			const struct fscrypt_inode_info *ci, void *buf, size_t len, uint64_t off)
{
	uint8_t *dst = buf;
	size_t done = 0;

	if (off + len < off || off + len > f2fs_max_file_blocks(inode) * F2FS_BLKSIZE)
		return -EFBIG;
	while (done < len) {
		uint64_t pos = off + done;
		uint32_t lblk = (uint32_t)(pos / F2FS_BLKSIZE);
		uint32_t skip = (uint32_t)(pos % F2FS_BLKSIZE);
		uint64_t want_blocks = (skip + (len - done) + F2FS_BLKSIZE - 1) / F2FS_BLKSIZE;
		uint32_t pblk, n;
		size_t bytes;
		int err;

		want_blocks = F2FS_MIN(want_blocks, (uint64_t)MAX_READ_RUN);
		if (inode->cow)
			err = map_atomic(sb, inode, lblk, (uint32_t)want_blocks, &pblk, &n);
		else
			err = f2fs_map_blocks(sb, inode, lblk, (uint32_t)want_blocks, &pblk, &n);
		if (err)
			return err;	/* never a short read: FUSE takes it for EOF */
		bytes = (size_t)F2FS_MIN((uint64_t)n * F2FS_BLKSIZE - skip, (uint64_t)(len - done));
		if (is_hole(pblk)) {
			memset(dst + done, 0, bytes);
		} else {
			err = f2fs_read_mapped(sb, ci, pblk, lblk, skip, bytes, dst + done);
			if (err)
				return err;
		}
		done += bytes;
	}
	/* what is written but not yet written back (reserved blocks read as zeros above) */
	f2fs_pc_overlay(inode->pages, buf, done, off);
	return (ssize_t)done;
}

/* ======================= the write path ======================= */

static bool dir_inode(const struct f2fs_inode *inode)
{
	return (inode->mode & S_IFMT) == S_IFDIR;
}

/*
 * __should_serialize_io: a write that takes the writepages lock allocates
 * its blocks as runs while no other serialized write allocates, so each
 * keeps one contiguous run (one device request), as the kernel's
 * serialized writeback keeps an inode's pages together.  Compressed files
 * always; encrypted files, since with inline encryption the DUN follows
 * (inode, block) and blocks of two files never share a request (the seed
 * patch "f2fs: serialize writeback for inline-crypto inodes"); others from
 * min_seq_blocks on.  Every write reaches the device before it returns, as
 * WB_SYNC_ALL writeback does, so the kernel's WB_SYNC_NONE case has no
 * counterpart yet.  The quota files are written under f2fs_lock_all,
 * which no holder of the lock can be waiting for.
 */
int f2fs_should_serialize_io(struct f2fs_sb *sb, const struct f2fs_inode *inode,
			     uint64_t nblocks)
{
	uint32_t min_seq = sb->opts.min_seq_blocks ? sb->opts.min_seq_blocks
						   : sb->blocks_per_seg * sb->segs_per_sec;
	int held = sb->opts.serialize_io == F2FS_SERIALIZE_ALLOC ? F2FS_SER_ALLOC : F2FS_SER_FULL;

	if (!S_ISREG(inode->mode) || sb->opts.serialize_io == F2FS_SERIALIZE_NEVER)
		return F2FS_SER_NONE;
	if (sb->opts.serialize_io == F2FS_SERIALIZE_ALWAYS)
		return F2FS_SER_FULL;
	if (f2fs_is_compressed(inode) || f2fs_is_encrypted(inode) || nblocks >= min_seq)
		return held;
	return F2FS_SER_NONE;
}

/* The current contents of file block lblk (zeros for a hole), to be merged with a partial write. */
static int read_block_at(struct f2fs_sb *sb, const struct f2fs_inode *inode,
			 const struct fscrypt_inode_info *ci, uint32_t lblk, uint32_t pblk,
			 uint8_t *buf)
{
	struct iovec iov = { buf, F2FS_BLKSIZE };
	struct f2fs_crypt_ctx cc;
	struct f2fs_bio bio = { .op = F2FS_BIO_READ, .nr_blocks = 1, .iov = &iov, .iovcnt = 1,
				.file_data = S_ISREG(inode->mode) };

	if (pblk == COMPRESS_ADDR)
		return -EOPNOTSUPP;
	if (is_hole(pblk)) {
		memset(buf, 0, F2FS_BLKSIZE);
		return 0;
	}
	bio.blkaddr = pblk;
	if (ci) {
		f2fs_crypt_ctx(ci, lblk, &cc);
		bio.crypt = &cc;
	}
	return f2fs_submit_bio(sb->dev, &bio);
}

int f2fs_read_for_merge(struct f2fs_sb *sb, struct f2fs_inode *inode,
			const struct fscrypt_inode_info *ci, uint32_t lblk, uint8_t *buf)
{
	uint32_t pblk, n;
	int err = f2fs_map_blocks(sb, inode, lblk, 1, &pblk, &n);

	return err ? err : read_block_at(sb, inode, ci, lblk, pblk, buf);
}

/* Charge n new blocks (inc_valid_block_count: the quota first, then the space). */
static int charge_blocks(struct f2fs_sb *sb, struct f2fs_inode *inode, uint32_t n)
{
	int err;

	if (!n)
		return 0;
	err = f2fs_dquot_alloc_block(sb, inode, n);
	if (err)
		return err;
	err = f2fs_take_user_blocks(sb, n);
	if (err)
		f2fs_dquot_free_block(sb, inode, n);
	return err;
}

static void uncharge_blocks(struct f2fs_sb *sb, struct f2fs_inode *inode, uint32_t n)
{
	if (!n)
		return;
	f2fs_add_valid_blocks(sb, -(int64_t)n);
	f2fs_dquot_free_block(sb, inode, n);
}

/*
 * What a partial write of block lblk merges into: the block as it is now,
 * for an atomic write the COW inode's copy, else the file's own while the
 * block is one the commit keeps (atomic_keep).
 */
static int merge_source(struct f2fs_sb *sb, struct f2fs_inode *inode, struct f2fs_inode *tree,
			const struct fscrypt_inode_info *ci, uint32_t lblk, uint8_t *buf)
{
	uint32_t pblk, n;
	int err;

	if (tree == inode)
		return f2fs_read_for_merge(sb, inode, ci, lblk, buf);
	err = f2fs_map_blocks(sb, tree, lblk, 1, &pblk, &n);
	if (err)
		return err;
	if (is_hole(pblk) && lblk < inode->atomic_keep)
		return f2fs_read_for_merge(sb, inode, ci, lblk, buf);
	return read_block_at(sb, inode, ci, lblk, pblk, buf);
}

/*
 * Write [off, off+len) out of place: partial first and last blocks are
 * merged with their old contents first, then each direct node's share
 * takes its new blocks from the data log as runs (block by block under
 * serialize_io=never, interleaving with concurrent writers as the kernel's
 * per-page allocation does), and the plug turns each contiguous run into
 * one vectored device write.
 */
static int write_blocks(struct f2fs_sb *sb, struct f2fs_inode *inode, const uint8_t *src,
			uint8_t *const *pages, size_t len, uint64_t off, size_t *written, int ser,
			int lock)
{
	int type = dir_inode(inode) ? CURSEG_HOT_DATA : CURSEG_WARM_DATA;
	/*
	 * An atomic write's blocks go to its COW inode at the same index, as
	 * the kernel's prepare_atomic_write_begin: the file's own stay as they
	 * are until the commit.  The data is the file's (its key and DUNs).
	 */
	struct f2fs_inode *tree = S_ISREG(inode->mode) && inode->cow ? inode->cow : inode;
	bool pinned = S_ISREG(tree->mode) && (tree->inline_flags & F2FS_PIN_FILE);
	struct dnode_of_data *dn = f2fs_alloc_blocks((sizeof(*dn) + F2FS_BLKSIZE - 1) / F2FS_BLKSIZE);
	uint8_t *bounce = f2fs_alloc_blocks(2);	/* only the first and last block can be partial */
	struct f2fs_plug *plug = malloc(sizeof(*plug));
	uint64_t end = off + len, pos = off;
	uint64_t first = off / F2FS_BLKSIZE, last = len ? (end - 1) / F2FS_BLKSIZE : first;
	bool head_part = off % F2FS_BLKSIZE, tail_part = end % F2FS_BLKSIZE;
	const struct fscrypt_inode_info *ci = NULL;
	/* the caller's lock to give back, even on an early return */
	bool unlock = lock == F2FS_WP_HELD_RELEASE, take, runs;
	int err = 0, ferr;

	if (!dn || !bounce || !plug) {
		err = -ENOMEM;
		goto out;
	}
	if (!len)
		goto out;
	if (first >= f2fs_max_file_blocks(inode)) {
		err = -EFBIG;
		goto out;
	}
	if (last >= f2fs_max_file_blocks(inode)) {
		/* what fits is written, the rest is -EFBIG below */
		last = f2fs_max_file_blocks(inode) - 1;
		tail_part = false;
	}
	f2fs_plug_init(plug, sb->dev);
	/* only regular files encrypt contents; dentry and symlink blocks go as they are */
	if (S_ISREG(inode->mode) && f2fs_is_encrypted(inode)) {
		err = f2fs_get_crypt_info(sb, inode, &ci);
		if (err)
			goto out;
	}
	/* the partial edges first, so that a failed read allocates nothing */
	for (int e = 0; e < 2; e++) {
		uint64_t b = e ? last : first;
		uint8_t *buf = bounce + (size_t)e * F2FS_BLKSIZE;
		uint64_t o0 = F2FS_MAX(off, b * F2FS_BLKSIZE);
		uint64_t o1 = F2FS_MIN(end, (b + 1) * F2FS_BLKSIZE);

		if (!(e ? tail_part && (last != first || !head_part) : head_part))
			continue;
		err = merge_source(sb, inode, tree, ci, (uint32_t)b, buf);
		if (err)
			goto out;
		memcpy(buf + (o0 - b * F2FS_BLKSIZE), src + (o0 - off), (size_t)(o1 - o0));
	}
	if (ser < 0)
		ser = f2fs_should_serialize_io(sb, inode, last - first + 1);
	take = ser && lock == F2FS_WP_TAKE;
	unlock = unlock || take;
	/*
	 * Unserialized writes take runs too, except under never: the kernel's
	 * per-log write bio merges adjacent blocks of different plain inodes,
	 * which a per-thread plug cannot; a run reserved under the log's lock
	 * gives the same large requests.  never takes blocks one at a time, as
	 * the kernel's per-page allocation does, so that concurrent writers
	 * interleave as the seed measured.
	 */
	runs = ser || sb->opts.serialize_io != F2FS_SERIALIZE_NEVER;
	if (take)
		pthread_mutex_lock(&sb->writepages);
	while (!err && pos < end) {
		uint32_t lblk = (uint32_t)(pos / F2FS_BLKSIZE);

		if (pos / F2FS_BLKSIZE >= f2fs_max_file_blocks(inode)) {
			err = -EFBIG;
			break;
		}
		err = f2fs_get_dnode_of_data(sb, tree, lblk, ALLOC_NODE, dn);
		if (err)
			break;
		for (uint32_t i = dn->ofs_in_node; !err && i < dn->naddrs && pos < end;) {
			uint32_t old0 = get_le32(dn->addrs + 4 * i), addr, got = 1, want = 1;
			uint32_t charged = 0;
			bool inplace = pinned && !is_hole(old0);

			if (old0 == COMPRESS_ADDR) {
				err = -EOPNOTSUPP;
				break;
			}
			/*
			 * f2fs_should_update_inplace: a pinned file's blocks stay where
			 * they are (their addresses may have been handed out), so its data
			 * is overwritten in place.
			 */
			if (inplace) {
				addr = old0;
			} else {
				if (runs && !pinned)
					want = (uint32_t)F2FS_MIN((uint64_t)(dn->naddrs - i),
								  last - pos / F2FS_BLKSIZE + 1);
				for (uint32_t j = 0; j < want; j++) {
					uint32_t a = get_le32(dn->addrs + 4 * (i + j));

					if (a == COMPRESS_ADDR) {
						want = j;
						break;
					}
					charged += a == NULL_ADDR;
				}
				err = charge_blocks(sb, tree, charged);
				if (err && want > 1) {
					/* short of space: block by block, up to the last one that fits */
					want = 1;
					charged = old0 == NULL_ADDR;
					err = charge_blocks(sb, tree, charged);
				}
				if (err)
					break;
				err = f2fs_allocate_run(sb, type, dn->nid, dn->version, (uint16_t)i,
							want, &addr, &got);
				if (err) {
					uncharge_blocks(sb, tree, charged);
					break;
				}
				/* the run ended early: the rest is charged again next time */
				for (uint32_t j = got; j < want; j++)
					if (get_le32(dn->addrs + 4 * (i + j)) == NULL_ADDR)
						uncharge_blocks(sb, tree, 1);
			}
			for (uint32_t j = 0; j < got; j++, i++) {
				uint32_t old = get_le32(dn->addrs + 4 * i), a = inplace ? old : addr + j;
				uint64_t b = pos / F2FS_BLKSIZE;
				const uint8_t *data = pages ? pages[b - first] :
						      b == first && head_part ? bounce :
						      b == last && tail_part ? bounce + F2FS_BLKSIZE :
						      src + (b * F2FS_BLKSIZE - off);
				struct iovec one = { (void *)data, F2FS_BLKSIZE };
				struct f2fs_bio bio = { .op = F2FS_BIO_WRITE, .blkaddr = a,
							.nr_blocks = 1, .iov = &one, .iovcnt = 1,
							.file_data = S_ISREG(inode->mode) };
				struct f2fs_crypt_ctx cc;

				if (err) {
					/* a request before failed: give back what was not used */
					f2fs_invalidate_block(sb, a);
					if (old == NULL_ADDR)
						uncharge_blocks(sb, tree, 1);
					continue;
				}
				if (ci) {
					f2fs_crypt_ctx(ci, b, &cc);
					bio.crypt = &cc;
				}
				/* the plug merges blocks into requests under blk-crypto's rule */
				err = f2fs_plug_add(plug, &bio);
				if (a == old) {
					/* in place: nothing to account */
				} else if (old == NULL_ADDR) {
					tree->blocks++;
				} else if (old != NEW_ADDR) {
					f2fs_invalidate_block(sb, old);
				}
				put_le32(dn->addrs + 4 * i, a);
				pos = F2FS_MIN(end, (b + 1) * F2FS_BLKSIZE);
			}
		}
		{
			int perr = f2fs_put_dnode(sb, dn);

			if (!err)
				err = perr;
		}
	}
	/*
	 * full: the request is built under the lock, as the kernel's
	 * f2fs_write_cache_pages builds (and, with fscrypt's software
	 * encryption, encrypts) and submits its bios under sbi->writepages;
	 * the device's work is not under it there, so the write comes after
	 * the unlock here.  A seal that fails leaves the encryption to the
	 * flush.  alloc: the runs are taken, encryption needs no lock either.
	 */
	if (unlock && ser == F2FS_SER_FULL)
		(void)f2fs_plug_seal(plug);
	if (unlock)
		pthread_mutex_unlock(&sb->writepages);
	unlock = false;
	/* blocks already mapped must reach the disk even if a later one failed */
	ferr = f2fs_plug_flush(plug);
	if (!err)
		err = ferr;
	f2fs_drop_extent_cache(tree, off / F2FS_BLKSIZE,
			       (end + F2FS_BLKSIZE - 1) / F2FS_BLKSIZE - off / F2FS_BLKSIZE);
	if (tree != inode) {
		/* the COW inode's nodes and i_blocks changed: its block goes out with them */
		if (pos > tree->size)
			tree->size = pos;
		ferr = f2fs_mark_inode_dirty(sb, tree);
		if (!err)
			err = ferr;
	}
out:
	if (unlock)
		pthread_mutex_unlock(&sb->writepages);
	if (written)
		*written = (size_t)(pos - off);
	free(dn);
	free(bounce);
	free(plug);
	return err;
}

int f2fs_write_blocks(struct f2fs_sb *sb, struct f2fs_inode *inode, const uint8_t *src,
		      size_t len, uint64_t off, size_t *written)
{
	return write_blocks(sb, inode, src, NULL, len, off, written, -1, F2FS_WP_TAKE);
}

int f2fs_write_pages(struct f2fs_sb *sb, struct f2fs_inode *inode, uint8_t *const *pages,
		     uint64_t first, uint32_t n, int ser, int lock)
{
	return write_blocks(sb, inode, NULL, pages, (size_t)n * F2FS_BLKSIZE,
			    first * F2FS_BLKSIZE, NULL, ser, lock);
}

/* Write a whole data block of a directory (dentry blocks). */
int f2fs_write_data_block(struct f2fs_sb *sb, struct f2fs_inode *inode, uint32_t lblk,
			  const uint8_t *buf)
{
	int err = f2fs_write_blocks(sb, inode, buf, F2FS_BLKSIZE, (uint64_t)lblk * F2FS_BLKSIZE, NULL);
	/* even on failure: a node made on the way is linked from the inode */
	int derr = f2fs_mark_inode_dirty(sb, inode);

	return err ? err : derr;
}

static ssize_t do_file_write(struct f2fs_sb *sb, struct f2fs_inode *inode, const void *buf,
			     size_t len, uint64_t off, bool cached);

/* A new symlink's (possibly encrypted) target: raw bytes, inline when they fit. */
ssize_t f2fs_symlink_write(struct f2fs_sb *sb, struct f2fs_inode *inode, const void *buf,
			   size_t len)
{
	return do_file_write(sb, inode, buf, len, 0, false);
}

ssize_t f2fs_file_write(struct f2fs_sb *sb, struct f2fs_inode *inode, const void *buf,
			size_t len, uint64_t off)
{
	return do_file_write(sb, inode, buf, len, off, false);
}

ssize_t f2fs_file_write_cached(struct f2fs_sb *sb, struct f2fs_inode *inode, const void *buf,
			       size_t len, uint64_t off)
{
	return do_file_write(sb, inode, buf, len, off, true);
}

static ssize_t do_file_write(struct f2fs_sb *sb, struct f2fs_inode *inode, const void *buf,
			     size_t len, uint64_t off, bool cached)
{
	uint64_t end = off + len;
	struct f2fs_timespec now;
	int err;

	if (!len)
		return 0;
	if (end < off || end > f2fs_max_file_blocks(inode) * F2FS_BLKSIZE)
		return -EFBIG;
	if (S_ISREG(inode->mode) && (err = f2fs_require_key(sb, inode)))
		return err;
	if (inode->inline_flags & F2FS_INLINE_DATA) {
		if (end <= f2fs_max_inline_data(inode)) {
			f2fs_write_inline_data(inode, buf, len, off);
			goto done;
		}
		err = f2fs_convert_inline_inode(sb, inode);
		if (err)
			return err;
	}
	{
		size_t written = 0;

		if (cached && f2fs_may_cache_write(sb, inode) &&
		    !f2fs_cached_write(sb, inode, buf, len, off)) {
			written = len;
		} else if (f2fs_is_compressed(inode)) {
			const struct fscrypt_inode_info *ci = NULL;

			int ser = f2fs_should_serialize_io(sb, inode,
							   (len + F2FS_BLKSIZE - 1) / F2FS_BLKSIZE);

			/* short of space (or memory) for the cache: what is cached goes first */
			err = cached ? f2fs_writeback_inode(sb, inode, false) : 0;
			if (!err && f2fs_is_encrypted(inode))
				err = f2fs_get_crypt_info(sb, inode, &ci);
			/* clusters are written (and allocated) one by one: all under the lock */
			if (!err) {
				if (ser)
					pthread_mutex_lock(&sb->writepages);
				err = f2fs_write_compressed(sb, inode, ci, buf, len, off, &written);
				if (ser)
					pthread_mutex_unlock(&sb->writepages);
			}
		} else {
			/* short of space (or memory) for the cache: what is cached goes
			 * first, then the write as it comes, which may be short */
			err = cached ? f2fs_writeback_inode(sb, inode, false) : 0;
			if (!err)
				err = f2fs_write_blocks(sb, inode, buf, len, off, &written);
		}
		if (err && !written) {
			/* nothing written, but a node made on the way is linked from the inode */
			f2fs_mark_inode_dirty(sb, inode);
			return err;
		}
		/* out of space part way: what reached the disk is a short write */
		if (err)
			end = off + written;
	}
done:
	if (end > inode->size)
		inode->size = end;
	f2fs_now(&now);
	f2fs_inode_set_time(inode, F2FS_TIME_MTIME, &now);
	f2fs_inode_set_time(inode, F2FS_TIME_CTIME, &now);
	err = f2fs_mark_inode_dirty(sb, inode);
	return err ? err : (ssize_t)(end - off);
}

/* ---- truncation ---- */

int f2fs_truncate(struct f2fs_sb *sb, struct f2fs_inode *inode, uint64_t size)
{
	int err = 0;

	if (size > f2fs_max_file_blocks(inode) * F2FS_BLKSIZE)
		return -EFBIG;
	if (inode->inline_flags & F2FS_INLINE_DATA) {
		if (size <= f2fs_max_inline_data(inode)) {
			f2fs_truncate_inline_inode(inode, size);
			goto done;
		}
		err = f2fs_convert_inline_inode(sb, inode);
		if (err)
			return err;
	}
	if (f2fs_is_compressed(inode) && size < inode->size) {
		/* a compressed cluster is cut by writing it again (f2fs_truncate_blocks) */
		err = f2fs_truncate_compressed(sb, inode, size);
		if (err < 0)
			return err;
		if (err)
			goto done;
	}
	if (size < inode->size) {
		uint64_t from = (size + F2FS_BLKSIZE - 1) / F2FS_BLKSIZE;

		if (size % F2FS_BLKSIZE) {
			/* zero the tail of the last block so a later extension reads zeros */
			uint32_t pblk, n;

			err = f2fs_map_blocks(sb, inode, (uint32_t)(size / F2FS_BLKSIZE), 1, &pblk, &n);
			if (!err && !is_hole(pblk)) {
				static const uint8_t zeros[F2FS_BLKSIZE];

				err = f2fs_write_blocks(sb, inode, zeros, F2FS_BLKSIZE - size % F2FS_BLKSIZE,
						   size, NULL);
			}
			if (err)
				return err;
		}
		err = f2fs_truncate_inode_blocks(sb, inode, from);
		if (err)
			return err;
	}
done:
	inode->size = size;
	return f2fs_mark_inode_dirty(sb, inode);
}

/*
 * A truncate inside an atomic write changes nothing on disk until the
 * commit: the size is the inode's in memory, a cut last block gets its
 * zeroed copy in the COW inode, the COW inode's blocks past the end go,
 * and the file's own from there on stop showing (atomic_keep), so that
 * the commit frees them.  The kernel truncates the file itself, outside
 * the write; here the truncate is part of it.
 */
int f2fs_atomic_truncate(struct f2fs_sb *sb, struct f2fs_inode *inode, uint64_t size)
{
	static const uint8_t zeros[F2FS_BLKSIZE];
	struct f2fs_inode *cow = inode->cow;
	uint64_t from = (size + F2FS_BLKSIZE - 1) / F2FS_BLKSIZE;
	int err = 0;

	if (size > f2fs_max_file_blocks(inode) * F2FS_BLKSIZE)
		return -EFBIG;
	if (size < inode->size) {
		if (size % F2FS_BLKSIZE) {
			uint32_t pblk, n;

			err = map_atomic(sb, inode, (uint32_t)(size / F2FS_BLKSIZE), 1, &pblk, &n);
			if (!err && !is_hole(pblk))
				err = f2fs_write_blocks(sb, inode, zeros,
							F2FS_BLKSIZE - size % F2FS_BLKSIZE, size, NULL);
			if (err)
				return err;
		}
		err = f2fs_truncate_inode_blocks(sb, cow, from);
		cow->size = F2FS_MIN(cow->size, size);
		{
			int derr = f2fs_mark_inode_dirty(sb, cow);

			if (!err)
				err = derr;
		}
		if (err)
			return err;
		if (inode->atomic_keep > from)
			inode->atomic_keep = from;
	}
	inode->size = size;
	return f2fs_mark_inode_dirty(sb, inode);
}

/*
 * The commit of an atomic write (the kernel's __f2fs_commit_atomic_write):
 * every block of the COW inode takes the place of the file's block at its
 * index, whose old block is freed; from atomic_keep on, the file's blocks
 * that no COW block replaced are freed too (ATOMIC_REPLACE, truncates).
 * The file's direct nodes are made first, so that running out of space
 * changes nothing.  The blocks stay where they are; their summaries name
 * their new owner.  Quota: both inodes are charged to the same ids, so a
 * moved block is no change; a freed one is.
 */
int f2fs_atomic_move_blocks(struct f2fs_sb *sb, struct f2fs_inode *inode)
{
	struct f2fs_inode *cow = inode->cow;
	size_t dnsz = (sizeof(struct dnode_of_data) + F2FS_BLKSIZE - 1) / F2FS_BLKSIZE;
	struct dnode_of_data *cdn = f2fs_alloc_blocks(dnsz), *odn = f2fs_alloc_blocks(dnsz);
	uint64_t end = (inode->size + F2FS_BLKSIZE - 1) / F2FS_BLKSIZE, ostart = 0, oend = 0;
	uint32_t ids[F2FS_MAX_QUOTAS] = { inode->uid, inode->gid, inode->projid };
	int err = 0;

	if (!cdn || !odn) {
		err = -ENOMEM;
		goto out;
	}
	end = F2FS_MIN(end, f2fs_max_file_blocks(inode));
	/* a chown or project change during the write moved the file's charges only */
	err = f2fs_dquot_transfer(sb, cow, ids, true);
	if (err)
		goto out;
	cow->uid = inode->uid;
	cow->gid = inode->gid;
	cow->projid = inode->projid;
	/* 1: the file's direct nodes for every COW block */
	for (uint64_t b = 0; b < end && !err;) {
		uint32_t pblk, n;

		err = f2fs_map_blocks(sb, cow, (uint32_t)b, (uint32_t)F2FS_MIN(end - b, (uint64_t)UINT32_MAX),
				      &pblk, &n);
		if (err)
			break;
		if (!is_hole(pblk)) {
			err = f2fs_get_dnode_of_data(sb, inode, (uint32_t)b, ALLOC_NODE, odn);
			if (err)
				break;
			n = F2FS_MIN(n, odn->naddrs - odn->ofs_in_node);
			err = f2fs_put_dnode(sb, odn);
		}
		b += n ? n : 1;
	}
	/* 2: past atomic_keep, the file's blocks without a COW block go */
	for (uint64_t b = inode->atomic_keep; b < end && !err;) {
		uint32_t pblk, n;

		err = f2fs_map_blocks(sb, cow, (uint32_t)b, (uint32_t)F2FS_MIN(end - b, (uint64_t)UINT32_MAX),
				      &pblk, &n);
		if (!err && is_hole(pblk))
			err = f2fs_truncate_hole(sb, inode, b, b + n);
		b += n ? n : 1;
	}
	if (!err && inode->atomic_keep != UINT64_MAX)
		err = f2fs_truncate_inode_blocks(sb, inode, F2FS_MAX(inode->atomic_keep, end));
	/* 3: the pointers move */
	end = F2FS_MIN(end, f2fs_max_file_blocks(cow));
	for (uint64_t b = 0; b < end && !err;) {
		bool changed = false;

		err = f2fs_get_dnode_of_data(sb, cow, (uint32_t)b, LOOKUP_NODE, cdn);
		if (err == -ENOENT) {
			b += cdn->hole_blocks ? cdn->hole_blocks : 1;
			err = 0;
			continue;
		}
		if (err)
			break;
		for (uint32_t i = cdn->ofs_in_node; i < cdn->naddrs && b < end && !err; i++, b++) {
			uint32_t a = get_le32(cdn->addrs + 4 * i), old, slot;

			if (is_hole(a))
				continue;
			if (!f2fs_valid_main_blkaddr(sb, a)) {
				err = f2fs_corrupted(sb, "inode %u: COW block %llu maps to 0x%x",
						     inode->ino, (unsigned long long)b, a);
				break;
			}
			if (b < ostart || b >= oend) {
				if (oend)
					err = f2fs_put_dnode(sb, odn);
				if (!err)
					err = f2fs_get_dnode_of_data(sb, inode, (uint32_t)b, ALLOC_NODE,
								     odn);
				if (err) {
					oend = 0;
					break;
				}
				ostart = b - odn->ofs_in_node;
				oend = ostart + odn->naddrs;
			}
			slot = (uint32_t)(b - ostart);
			old = get_le32(odn->addrs + 4 * slot);
			err = f2fs_set_block_owner(sb, a, odn->nid, odn->version, (uint16_t)slot);
			if (err)
				break;
			put_le32(odn->addrs + 4 * slot, a);
			if (old == NULL_ADDR) {
				inode->blocks++;
			} else {
				f2fs_invalidate_block(sb, old);
				f2fs_add_valid_blocks(sb, -1);
				f2fs_dquot_free_block(sb, inode, 1);
			}
			put_le32(cdn->addrs + 4 * i, NULL_ADDR);
			cow->blocks--;
			changed = true;
		}
		if (changed) {
			int perr = f2fs_put_dnode(sb, cdn);

			if (!err)
				err = perr;
		}
	}
	if (oend) {
		int perr = f2fs_put_dnode(sb, odn);

		if (!err)
			err = perr;
	}
	f2fs_drop_extent_cache(inode, 0, UINT32_MAX);
	f2fs_drop_extent_cache(cow, 0, UINT32_MAX);
out:
	free(cdn);
	free(odn);
	return err;
}

/* truncate_hole: free the data blocks (not the nodes) of [start, end). */
int f2fs_truncate_hole(struct f2fs_sb *sb, struct f2fs_inode *inode, uint64_t start, uint64_t end)
{
	struct dnode_of_data dn;
	uint64_t start0 = start;
	int err = 0;

	end = F2FS_MIN(end, f2fs_max_file_blocks(inode));
	if (start >= end)
		return 0;
	while (start < end) {
		uint32_t pblk, n;

		err = f2fs_map_blocks(sb, inode, (uint32_t)start,
				      (uint32_t)F2FS_MIN(end - start, (uint64_t)UINT32_MAX), &pblk, &n);
		if (err)
			break;
		if (pblk == NULL_ADDR) {
			start += n;
			continue;
		}
		err = f2fs_get_dnode_of_data(sb, inode, (uint32_t)start, LOOKUP_NODE, &dn);
		if (err == -ENOENT) {
			start += dn.hole_blocks;
			err = 0;
			continue;
		}
		if (err)
			break;
		n = (uint32_t)F2FS_MIN((uint64_t)(dn.naddrs - dn.ofs_in_node), end - start);
		f2fs_truncate_data_blocks_range(sb, &dn, n);
		start += n;
		err = f2fs_put_dnode(sb, &dn);
		if (err)
			break;
	}
	f2fs_drop_extent_cache(inode, start0, end - start0);
	return err;
}

/* f2fs_reserve_block for [start, end): holes become NEW_ADDR, counted as used. */
int f2fs_reserve_blocks(struct f2fs_sb *sb, struct f2fs_inode *inode, uint64_t start, uint64_t end)
{
	struct dnode_of_data dn;
	int err = 0;

	while (start < end) {
		err = f2fs_get_dnode_of_data(sb, inode, (uint32_t)start, ALLOC_NODE, &dn);
		if (err)
			break;
		for (uint32_t i = dn.ofs_in_node; i < dn.naddrs && start < end; i++, start++) {
			if (get_le32(dn.addrs + 4 * i) != NULL_ADDR)
				continue;
			err = f2fs_dquot_alloc_block(sb, inode, 1);
			if (err)
				break;
			err = f2fs_take_user_blocks(sb, 1);
			if (err) {
				f2fs_dquot_free_block(sb, inode, 1);
				break;
			}
			put_le32(dn.addrs + 4 * i, NEW_ADDR);
			inode->blocks++;
		}
		{
			/* what was reserved before running out stays mapped */
			int perr = f2fs_put_dnode(sb, &dn);

			if (!err)
				err = perr;
		}
		if (err)
			break;
	}
	return err;
}

/*
 * expand_inode_data for a pinned file: Android hands the blocks of such a
 * file to the device directly (swap, OTA), so they are allocated for real
 * at fallocate time, in sections of their own from the cold data log, and
 * the request is rounded up to whole sections, as the kernel does.  They
 * are zeroed (encrypted zeros for an encrypted file): the kernel leaves
 * what the device held, which a later reader could see.
 */
int f2fs_allocate_pinned_blocks(struct f2fs_sb *sb, struct f2fs_inode *inode, uint64_t start,
				uint64_t end, uint64_t *last)
{
	static const uint8_t zeros[F2FS_BLKSIZE];
	uint32_t sec_blks = sb->blocks_per_seg * sb->segs_per_sec, in_sec = 0;
	const struct fscrypt_inode_info *ci = NULL;
	struct f2fs_plug *plug = malloc(sizeof(*plug));
	struct dnode_of_data *dn = f2fs_alloc_blocks((sizeof(*dn) + F2FS_BLKSIZE - 1) / F2FS_BLKSIZE);
	uint64_t need = 0, lblk = start;
	int err = 0, ferr;

	*last = start;
	if (!plug || !dn) {
		err = -ENOMEM;
		goto out;
	}
	for (uint64_t b = start; b < end;) {
		uint32_t pblk, n;

		err = f2fs_map_blocks(sb, inode, (uint32_t)b,
				      (uint32_t)F2FS_MIN(end - b, (uint64_t)UINT32_MAX), &pblk, &n);
		if (err)
			goto out;
		if (pblk == NULL_ADDR || pblk == NEW_ADDR)
			need += n;
		b += n ? n : 1;
	}
	if (!need)
		goto out;
	need = (need + sec_blks - 1) / sec_blks * sec_blks;
	if (need > f2fs_free_user_blocks(sb)) {
		err = -ENOSPC;
		goto out;
	}
	if (f2fs_is_encrypted(inode)) {
		err = f2fs_get_crypt_info(sb, inode, &ci);
		if (err)
			goto out;
	}
	f2fs_plug_init(plug, sb->dev);
	while (!err && need && lblk < f2fs_max_file_blocks(inode)) {
		err = f2fs_get_dnode_of_data(sb, inode, (uint32_t)lblk, ALLOC_NODE, dn);
		if (err)
			break;
		for (uint32_t i = dn->ofs_in_node; i < dn->naddrs && need; i++, lblk++) {
			uint32_t old = get_le32(dn->addrs + 4 * i), addr;
			struct iovec one = { (void *)zeros, F2FS_BLKSIZE };
			struct f2fs_bio bio = { .op = F2FS_BIO_WRITE, .nr_blocks = 1, .iov = &one,
						.iovcnt = 1, .file_data = true };
			struct f2fs_crypt_ctx cc;

			if (old != NULL_ADDR && old != NEW_ADDR)
				continue;
			if (!in_sec) {
				/* a new section: what was queued goes first, it is another run */
				err = f2fs_plug_flush(plug);
				if (!err)
					err = f2fs_new_section(sb, CURSEG_COLD_DATA);
				if (err)
					break;
				in_sec = sec_blks;
			}
			if (old == NULL_ADDR && (err = charge_blocks(sb, inode, 1)))
				break;
			err = f2fs_allocate_block(sb, CURSEG_COLD_DATA, dn->nid, dn->version,
						  (uint16_t)i, &addr);
			if (err) {
				if (old == NULL_ADDR)
					uncharge_blocks(sb, inode, 1);
				break;
			}
			if (old == NULL_ADDR)
				inode->blocks++;
			put_le32(dn->addrs + 4 * i, addr);
			bio.blkaddr = addr;
			if (ci) {
				/* encrypted zeros: one bio each, the device layer bounces them */
				f2fs_crypt_ctx(ci, lblk, &cc);
				bio.crypt = &cc;
				err = f2fs_submit_bio(sb->dev, &bio);
			} else {
				err = f2fs_plug_add(plug, &bio);
			}
			in_sec--;
			need--;
			if (err)
				break;
		}
		{
			int perr = f2fs_put_dnode(sb, dn);

			if (!err)
				err = perr;
		}
	}
	ferr = f2fs_plug_flush(plug);
	if (!err)
		err = ferr;
	f2fs_drop_extent_cache(inode, start, lblk - start);
	*last = lblk;
out:
	free(dn);
	free(plug);
	return err;
}

