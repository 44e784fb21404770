// SPDX-License-Identifier: GPL-2.0
/*
 * Garbage collection: when free sections run low, pick victim sections
 * (greedy for foreground cleaning, cost-benefit for background) and move
 * their valid blocks to the cold logs, so that the next checkpoint turns
 * the victims into free sections.
 *
 * GC runs with sb->cp_rwsem held exclusively, so no namespace or write
 * operation is in flight; it takes each owner inode's lock while moving
 * its data so readers never see a block move under them.  Encrypted data
 * moves as ciphertext: the device layer reads and writes it raw.
 */
#include <stdlib.h>
#include <string.h>

#include "f2fs.h"

static uint32_t sec_valid(const struct f2fs_sb *sb, uint32_t sec)
{
	uint32_t v = 0;

	for (uint32_t s = 0; s < sb->segs_per_sec; s++)
		v += sb->sm->sentries[sec * sb->segs_per_sec + s].valid_blocks;
	return v;
}

static bool sec_has_curseg(const struct f2fs_sb *sb, uint32_t sec)
{
	for (int t = 0; t < NR_CURSEG_TYPE; t++)
		if (sb->curseg[t].segno / sb->segs_per_sec == sec)
			return true;
	return false;
}

/* get_cb_cost: lower is a better victim (old, mostly invalid sections). */
static uint64_t cb_cost(const struct f2fs_sb *sb, uint32_t sec, uint64_t min_mtime,
			uint64_t max_mtime)
{
	uint64_t mtime = 0, u, age;
	uint32_t usable = sb->segs_per_sec << sb->log_blocks_per_seg;

	for (uint32_t s = 0; s < sb->segs_per_sec; s++)
		mtime += sb->sm->sentries[sec * sb->segs_per_sec + s].mtime;
	mtime /= sb->segs_per_sec;
	u = (uint64_t)sec_valid(sb, sec) * 100 / usable;
	age = max_mtime > min_mtime ? 100 - 100 * (mtime - min_mtime) / (max_mtime - min_mtime) : 0;
	return UINT32_MAX - (100 * (100 - u) * age) / (100 + u);
}

/* Victim selection under sm->lock. Returns the section or UINT32_MAX. */
static uint32_t select_victim(struct f2fs_sb *sb, enum f2fs_gc_policy policy)
{
	uint32_t nsecs = sb->segment_count_main / sb->segs_per_sec, best = UINT32_MAX;
	uint32_t full = sb->segs_per_sec << sb->log_blocks_per_seg;
	uint64_t best_cost = UINT64_MAX, min_mtime = UINT64_MAX, max_mtime = 0;

	if (policy == F2FS_GC_COST_BENEFIT) {
		for (uint32_t s = 0; s < sb->segment_count_main; s++) {
			uint64_t m = sb->sm->sentries[s].mtime;

			min_mtime = F2FS_MIN(min_mtime, m);
			max_mtime = F2FS_MAX(max_mtime, m);
		}
	}
	for (uint32_t sec = 0; sec < nsecs; sec++) {
		uint32_t v = sec_valid(sb, sec);
		uint64_t cost;

		/* empty sections need only a checkpoint; full ones free nothing */
		if (!v || v >= full || sec_has_curseg(sb, sec))
			continue;
		cost = policy == F2FS_GC_GREEDY ? v : cb_cost(sb, sec, min_mtime, max_mtime);
		if (cost < best_cost) {
			best_cost = cost;
			best = sec;
		}
	}
	return best;
}

/* Is the node block at blkaddr (nid per its summary) still the live copy? */
static int move_node_block(struct f2fs_sb *sb, uint32_t nid, uint32_t blkaddr)
{
	struct f2fs_node_info ni;
	uint8_t *blk;
	int err = f2fs_get_node_info(sb, nid, &ni);

	if (err || ni.blkaddr != blkaddr)
		return err;	/* stale: a newer copy exists */
	blk = f2fs_alloc_blocks(1);
	if (!blk)
		return -ENOMEM;
	/* re-dirtying it makes the checkpoint write it elsewhere and free this copy */
	err = f2fs_get_node(sb, nid, blk);
	if (!err)
		err = f2fs_set_node_dirty(sb, nid, blk);
	free(blk);
	return err;
}

/* Move the data block at blkaddr owned (per its summary) by dnode nid slot ofs. */
static int move_data_block(struct f2fs_sb *sb, uint32_t nid, uint8_t version, uint16_t ofs,
			   uint32_t blkaddr)
{
	struct f2fs_node_info ni;
	struct f2fs_inode *inode;
	uint8_t *node = NULL, *data = NULL;
	uint32_t ino, addr_off, newaddr;
	int err = f2fs_get_node_info(sb, nid, &ni);

	if (err)
		return err;
	if (ni.version != version || ni.blkaddr == NULL_ADDR)
		return 0;	/* the dnode was freed since: the block is dead */
	node = f2fs_alloc_blocks(1);
	data = f2fs_alloc_blocks(1);
	if (!node || !data) {
		err = -ENOMEM;
		goto out_free;
	}
	err = f2fs_get_node(sb, nid, node);
	if (err)
		goto out_free;
	ino = f2fs_node_ino(node);
	err = f2fs_iget(sb, ino, &inode);
	if (err)
		goto out_free;
	pthread_rwlock_wrlock(&inode->lock);
	/* the inode's own block is authoritative while it is cached */
	if (nid == ino) {
		memcpy(node, inode->node, F2FS_BLKSIZE);
		addr_off = I_ADDR + 4 * (f2fs_addr_start(inode) + ofs);
	} else {
		err = f2fs_get_node(sb, nid, node);
		addr_off = 4u * ofs;
	}
	if (err || addr_off + 4 > NODE_FOOTER_OFFSET || get_le32(node + addr_off) != blkaddr)
		goto out_unlock;	/* remapped since: not ours to move */
	err = f2fs_dev_read(sb->dev, blkaddr, data, 1);
	if (err)
		goto out_unlock;
	err = f2fs_allocate_block(sb, CURSEG_COLD_DATA, nid, version, ofs, &newaddr);
	if (err)
		goto out_unlock;
	{
		struct iovec iov = { data, F2FS_BLKSIZE };
		struct f2fs_bio bio = { .op = F2FS_BIO_WRITE, .blkaddr = newaddr, .nr_blocks = 1,
					.iov = &iov, .iovcnt = 1 };

		err = f2fs_submit_bio(sb->dev, &bio);
	}
	if (err) {
		f2fs_invalidate_block(sb, newaddr);
		goto out_unlock;
	}
	f2fs_invalidate_block(sb, blkaddr);
	f2fs_cache_invalidate(sb->cache, blkaddr);
	if (nid == ino) {
		put_le32(inode->node + addr_off, newaddr);
		err = f2fs_mark_inode_dirty(sb, inode);
	} else {
		put_le32(node + addr_off, newaddr);
		err = f2fs_set_node_dirty(sb, nid, node);
	}
	f2fs_inode_drop_largest_extent(inode, 0, UINT32_MAX);
	if (!err && nid != ino)
		err = f2fs_mark_inode_dirty(sb, inode);	/* i_ext may have changed */
out_unlock:
	pthread_rwlock_unlock(&inode->lock);
	f2fs_iput(sb, inode);
out_free:
	free(node);
	free(data);
	return err;
}

/* Move every valid block out of one segment. */
static int gc_segment(struct f2fs_sb *sb, uint32_t segno)
{
	uint8_t *sum = f2fs_alloc_blocks(1);
	uint8_t map[SIT_VBLOCK_MAP_SIZE];
	uint32_t start = f2fs_seg_start_blkaddr(sb, segno);
	int err;

	if (!sum)
		return -ENOMEM;
	err = f2fs_dev_read(sb->dev, sb->ssa_blkaddr + segno, sum, 1);
	if (err)
		goto out;
	pthread_mutex_lock(&sb->sm->lock);
	memcpy(map, sb->sm->sentries[segno].cur_valid_map, sizeof(map));
	pthread_mutex_unlock(&sb->sm->lock);
	for (uint32_t off = 0; off < sb->blocks_per_seg && !err; off++) {
		const uint8_t *e = sum + off * SUMMARY_SIZE;

		if (!f2fs_test_bit(off, map))
			continue;
		if (sum[SUM_FOOTER_OFFSET] == SUM_TYPE_NODE)
			err = move_node_block(sb, get_le32(e), start + off);
		else
			err = move_data_block(sb, get_le32(e), e[4], get_le16(e + 5), start + off);
	}
out:
	free(sum);
	return err;
}

/*
 * f2fs_gc: clean up to `max_victims` sections, then checkpoint so they
 * become free.  Caller holds cp_rwsem exclusively.
 */
int f2fs_gc_locked(struct f2fs_sb *sb, enum f2fs_gc_policy policy, uint32_t max_victims,
		   uint32_t *freed)
{
	uint32_t n = 0;
	int err = 0;

	while (n < max_victims) {
		uint32_t sec;

		pthread_mutex_lock(&sb->sm->lock);
		sec = select_victim(sb, policy);
		pthread_mutex_unlock(&sb->sm->lock);
		if (sec == UINT32_MAX)
			break;
		for (uint32_t s = 0; s < sb->segs_per_sec && !err; s++)
			err = gc_segment(sb, sec * sb->segs_per_sec + s);
		if (err)
			break;
		n++;
	}
	if (n)
		f2fs_debug(sb, "gc: cleaned %u section(s)", n);
	if (!err)
		err = f2fs_write_dirty_nodes(sb);
	if (!err)
		err = f2fs_write_checkpoint(sb, false);
	if (freed)
		*freed = n;
	return err;
}

/*
 * Background cleaning (the kernel's gc thread, simplified): on a periodic
 * upkeep call, when fewer than a fifth of the sections are free, clean one
 * cost-benefit victim so foreground writes find free sections waiting.
 */
void f2fs_background_gc(struct f2fs_sb *sb)
{
	uint32_t free_segs, nsegs = sb->segment_count_main;

	if (sb->opts.readonly || !sb->sm)
		return;
	pthread_mutex_lock(&sb->sm->lock);
	free_segs = sb->sm->free_segments;
	pthread_mutex_unlock(&sb->sm->lock);
	if (free_segs * 5 >= nsegs)
		return;
	/* never wait behind busy writers: the upkeep thread must stay cheap */
	if (pthread_rwlock_trywrlock(&sb->cp_rwsem))
		return;
	f2fs_gc_locked(sb, F2FS_GC_COST_BENEFIT, 1, NULL);
	pthread_rwlock_unlock(&sb->cp_rwsem);
}
