// SPDX-License-Identifier: GPL-2.0
/*
 * Writeback (-o writeback): write(2) copies into the page cache
 * (pagecache.c) after reserving the blocks it may need, as the kernel's
 * f2fs_write_begin does with f2fs_reserve_block (a hole becomes NEW_ADDR,
 * charged to the quota and the user blocks there and then), so that
 * ENOSPC and EDQUOT come from write(2) and never from writeback.  The
 * physical blocks are allocated when an inode's pages are written back:
 * in one pass, under the writepages lock when the inode is serialized
 * (data.c f2fs_should_serialize_io; background writeback always is, as
 * the kernel's WB_SYNC_NONE), so that all its dirty pages land in one run.
 *
 * What writes an inode back: every change to it other than write(2)
 * (f2fs_begin_op: fsync, fallocate, ioctls, xattrs, so each of them sees
 * the file as on disk; a truncation instead drops the pages past the new
 * size, f2fs_truncate_pages, punching and zeroing those in their range,
 * f2fs_punch_pages, and other attribute changes leave them), a
 * write that must reach the device (F2FS_WRITE_THROUGH: O_SYNC, O_DSYNC,
 * O_DIRECT, which then bypasses the cache), the dirty limit (the writer
 * writes its own inode back), the flusher (fuse/writeback.c: the oldest
 * inode once it is older than the expire or the cache is past half its
 * limit), checkpoints, unmount, a full-sync shutdown and key removal
 * (file.c f2fs_sync_data); other shutdowns and eviction drop the pages.
 *
 * A compressed file's write(2) reserves every slot of the clusters it
 * touches that lies inside the new i_size, since writeback writes those
 * clusters whole (compressed, they keep every slot), and its writeback
 * hands the dirty clusters to compress.c, which reads the rest of each,
 * compresses it once and writes it (f2fs_write_dirty_clusters).  Pinned
 * and inline files, and compressed ones whose blocks are released, are
 * written as before, at write(2).
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "f2fs.h"

#define WB_RUN 1024	/* pages per f2fs_write_pages call (4 MiB) */

bool f2fs_may_cache_write(struct f2fs_sb *sb, const struct f2fs_inode *inode)
{
	return sb->pc && S_ISREG(inode->mode) && !inode->cow &&
	       !(inode->inline_flags & (F2FS_INLINE_DATA | F2FS_PIN_FILE | F2FS_COMPRESS_RELEASED));
}

/* The current contents of file block b, to be merged with a partial write. */
static int read_for_merge(struct f2fs_sb *sb, struct f2fs_inode *inode,
			  const struct fscrypt_inode_info *ci, uint64_t b, uint8_t *page)
{
	uint64_t pos = b * F2FS_BLKSIZE;
	size_t have;

	if (!f2fs_is_compressed(inode))
		return f2fs_read_for_merge(sb, inode, ci, (uint32_t)b, page);
	/* a compressed cluster's block has no address of its own */
	have = pos < inode->size ? (size_t)F2FS_MIN((uint64_t)F2FS_BLKSIZE, inode->size - pos) : 0;
	if (have) {
		ssize_t r = f2fs_read_compressed(sb, inode, ci, page, have, pos);

		if (r < 0)
			return (int)r;
	}
	memset(page + have, 0, F2FS_BLKSIZE - have);
	return 0;
}

/* Caller holds the inode's write lock and cp_rwsem shared. */
ssize_t f2fs_cached_write(struct f2fs_sb *sb, struct f2fs_inode *inode, const uint8_t *buf,
			  size_t len, uint64_t off)
{
	uint64_t end = off + len, first = off / F2FS_BLKSIZE, last = (end - 1) / F2FS_BLKSIZE;
	uint64_t rfirst = first, rend = last + 1;
	const struct fscrypt_inode_info *ci = NULL;
	bool was_clean = !inode->pages;
	int err;

	if (f2fs_is_encrypted(inode)) {
		err = f2fs_get_crypt_info(sb, inode, &ci);
		if (err)
			return err;
	}
	if (f2fs_is_compressed(inode)) {
		/* the clusters' slots inside the new i_size: writeback writes them all */
		uint64_t size = F2FS_MAX(inode->size, end);
		uint32_t log = inode->log_cluster_size;

		rfirst = first >> log << log;
		rend = F2FS_MIN(((last >> log) + 1) << log, (size + F2FS_BLKSIZE - 1) / F2FS_BLKSIZE);
	}
	/* delayed allocation: the space now, the address at writeback */
	err = f2fs_reserve_blocks(sb, inode, rfirst, rend);
	if (err)
		return err;
	for (uint64_t b = first; b <= last; b++) {
		uint64_t o0 = F2FS_MAX(off, b * F2FS_BLKSIZE);
		uint64_t o1 = F2FS_MIN(end, (b + 1) * F2FS_BLKSIZE);
		bool created;
		uint8_t *page = f2fs_pc_get(sb->pc, &inode->pages, inode->ino, b, &created);

		if (!page) {
			err = -ENOMEM;
			break;
		}
		if (created && o1 - o0 < F2FS_BLKSIZE) {
			err = read_for_merge(sb, inode, ci, b, page);
			if (err) {
				/* nothing of this write is in it yet: zeros are what a hole reads */
				memset(page, 0, F2FS_BLKSIZE);
				break;
			}
		}
		memcpy(page + (o0 - b * F2FS_BLKSIZE), buf + (o0 - off), (size_t)(o1 - o0));
	}
	/* a dirty inode stays in the inode cache until written back */
	if (was_clean && inode->pages)
		f2fs_ihold(sb, inode);
	return err;
}

/*
 * Before a truncation to size (caller holds the inode's write lock): the
 * pages wholly past it are dropped, not written, and the one it cuts keeps
 * zeros after it, so that a later extension reads zeros, as the kernel's
 * truncate_pagecache and truncate_setsize leave the page cache.  The
 * blocks reserved for the dropped pages go with the truncation's NEW_ADDR
 * slots.
 */
void f2fs_truncate_pages(struct f2fs_sb *sb, struct f2fs_inode *inode, uint64_t size)
{
	f2fs_punch_pages(sb, inode, size, UINT64_MAX);
}

/*
 * Before [off, end) is punched or zeroed (caller holds the inode's write
 * lock), as the kernel's truncate_pagecache_range: the pages wholly inside
 * are dropped, not written (their reserved blocks go with the NEW_ADDR
 * slots the punch frees), and a page the range cuts keeps zeros there.
 */
void f2fs_punch_pages(struct f2fs_sb *sb, struct f2fs_inode *inode, uint64_t off, uint64_t end)
{
	uint64_t first = (off + F2FS_BLKSIZE - 1) / F2FS_BLKSIZE;
	uint64_t last = end == UINT64_MAX ? UINT64_MAX : end / F2FS_BLKSIZE;
	uint8_t *page;

	if (!inode->pages || off >= end)
		return;
	/* the edges first: the pages they are in may go below */
	page = off % F2FS_BLKSIZE ? f2fs_pc_find(inode->pages, off / F2FS_BLKSIZE) : NULL;
	if (page) {
		uint64_t b0 = off / F2FS_BLKSIZE * F2FS_BLKSIZE;

		memset(page + (off - b0), 0, (size_t)(F2FS_MIN(end, b0 + F2FS_BLKSIZE) - off));
	}
	page = end != UINT64_MAX && end % F2FS_BLKSIZE && end / F2FS_BLKSIZE >= first ?
	       f2fs_pc_find(inode->pages, end / F2FS_BLKSIZE) : NULL;
	if (page)
		memset(page, 0, (size_t)(end % F2FS_BLKSIZE));
	if (first < last && f2fs_pc_drop_range(sb->pc, &inode->pages, first, last))
		/* the hold f2fs_cached_write took; the caller has its own reference */
		f2fs_iput(sb, inode);
}

/*
 * Write the inode's dirty pages back (caller holds its write lock and
 * cp_rwsem shared).  On failure the pages are dropped, as the kernel
 * clears a page whose write failed, and the error is returned.
 */
int f2fs_writeback_inode(struct f2fs_sb *sb, struct f2fs_inode *inode, bool background)
{
	struct f2fs_inode_pages *ip;
	uint8_t **ptrs;
	int ser, err = 0, derr;
	bool held;

	if (!inode->pages)
		return 0;
	ip = f2fs_pc_detach(sb->pc, &inode->pages);
	ptrs = malloc(sizeof(*ptrs) * ip->nr);
	if (!ptrs) {
		/* put them back: they are the only copy */
		inode->pages = ip;
		f2fs_pc_relist(sb->pc, ip);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < ip->nr; i++)
		ptrs[i] = ip->v[i].data;
	ser = f2fs_should_serialize_io(sb, inode, ip->nr);
	if (!ser && background && sb->opts.serialize_io != F2FS_SERIALIZE_NEVER)
		ser = sb->opts.serialize_io == F2FS_SERIALIZE_ALLOC ? F2FS_SER_ALLOC : F2FS_SER_FULL;
	/* a compressed file allocates cluster by cluster as it compresses: any
	 * serialization holds the lock throughout, as its write(2) does */
	if (f2fs_is_compressed(inode) && ser)
		ser = F2FS_SER_FULL;
	/*
	 * full: the whole pass under the lock, so every run of the inode is
	 * one; the last run's device write comes after the unlock, as the
	 * kernel submits under sbi->writepages and waits after it.
	 */
	if (ser == F2FS_SER_FULL)
		pthread_mutex_lock(&sb->writepages);
	if (f2fs_is_compressed(inode))
		err = f2fs_write_dirty_clusters(sb, inode, ip->v, ip->nr);
	held = ser == F2FS_SER_FULL;
	for (uint32_t s = 0, n; !err && !f2fs_is_compressed(inode) && s < ip->nr; s += n) {
		for (n = 1; s + n < ip->nr && n < WB_RUN &&
			    ip->v[s + n].index == ip->v[s].index + n; n++)
			;
		err = f2fs_write_pages(sb, inode, ptrs + s, ip->v[s].index, n, ser,
				       !held ? F2FS_WP_TAKE : s + n < ip->nr ? F2FS_WP_HELD :
				       F2FS_WP_HELD_RELEASE);
		if (held && s + n == ip->nr)
			held = false;	/* given back by the last run */
	}
	if (held)
		pthread_mutex_unlock(&sb->writepages);
	free(ptrs);
	pthread_mutex_lock(&sb->pc->lock);
	sb->pc->wb_inodes++;
	if (background)
		sb->pc->wb_background++;
	else
		sb->pc->wb_sync++;
	pthread_mutex_unlock(&sb->pc->lock);
	f2fs_pc_free(sb->pc, ip, !err);
	/* the block addresses in the inode (and its nodes) changed */
	derr = f2fs_mark_inode_dirty(sb, inode);
	/* the hold f2fs_cached_write took; the caller has its own reference */
	f2fs_iput(sb, inode);
	return err ? err : derr;
}
