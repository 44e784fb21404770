// SPDX-License-Identifier: GPL-2.0
/*
 * Garbage collection: when free sections run low (f2fs_balance_fs, before
 * every allocating operation, and the background pass), pick victim
 * sections (greedy for foreground cleaning, cost-benefit for background)
 * and move their valid blocks to the cold logs, so that the next
 * checkpoint turns the victims into free sections.
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

static bool sec_pinned(const struct f2fs_sb *sb, uint32_t sec)
{
	const uint8_t *map = sb->sm->pinned_secmap;

	return map && (map[sec >> 3] & (1u << (sec & 7)));
}

/* Under sm->lock: the section holds blocks of a pinned file; victim selection passes it by. */
static void mark_sec_pinned(struct f2fs_sb *sb, uint32_t sec)
{
	uint32_t nsecs = sb->segment_count_main / sb->segs_per_sec;

	if (!sb->sm->pinned_secmap)
		sb->sm->pinned_secmap = calloc((nsecs + 7) / 8, 1);
	if (sb->sm->pinned_secmap)
		sb->sm->pinned_secmap[sec >> 3] |= (uint8_t)(1u << (sec & 7));
}

/* f2fs_unpin_all_sections: forget them (a pinned file may be gone or unpinned since). */
static bool unpin_all_sections(struct f2fs_sb *sb)
{
	uint32_t nsecs = sb->segment_count_main / sb->segs_per_sec;
	bool any = false;

	if (!sb->sm->pinned_secmap)
		return false;
	for (uint32_t i = 0; i < (nsecs + 7) / 8; i++)
		any |= sb->sm->pinned_secmap[i] != 0;
	memset(sb->sm->pinned_secmap, 0, (nsecs + 7) / 8);
	return any;
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
		if (!v || v >= full || sec_has_curseg(sb, sec) || sec_pinned(sb, sec))
			continue;
		cost = policy == F2FS_GC_GREEDY ? v : cb_cost(sb, sec, min_mtime, max_mtime);
		if (cost < best_cost) {
			best_cost = cost;
			best = sec;
		}
	}
	return best;
}

/*
 * A node block of the victim (nid per its summary, its bytes in buf as read
 * with the segment): if it is still the live copy, re-dirty it so the
 * checkpoint writes it elsewhere and frees this one.
 */
static int move_node_block(struct f2fs_sb *sb, uint32_t nid, uint32_t blkaddr,
			   const uint8_t *buf)
{
	struct f2fs_node_info ni;
	uint8_t *blk;
	int err = f2fs_get_node_info(sb, nid, &ni);

	if (err || ni.blkaddr != blkaddr)
		return err;	/* stale: a newer copy exists */
	err = f2fs_check_node_footer(sb, buf, nid, ni.ino, F2FS_NODE_OFS_ANY);
	if (err)
		return err;
	/* spare f2fs_get_node a second read of what the segment read brought */
	f2fs_cache_insert(sb->cache, blkaddr, buf);
	blk = f2fs_alloc_blocks(1);
	if (!blk)
		return -ENOMEM;
	err = f2fs_get_node(sb, nid, ni.ino, F2FS_NODE_OFS_ANY, blk);	/* the dirty copy, if any */
	if (!err)
		err = f2fs_set_node_dirty(sb, nid, blk);
	if (!err)
		f2fs_stat_add(sb, gc_node_blocks, 1);
	free(blk);
	return err;
}

/* A data block on its way out of the victim: who points at it, and where to. */
struct gc_move {
	struct f2fs_inode *inode;	/* referenced until the move is done */
	uint32_t nid;			/* the dnode (or inode) holding the pointer */
	uint32_t addr_off;		/* byte offset of the pointer in that node */
	uint32_t old, new;
	uint16_t off;			/* offset in the segment */
};

/*
 * f2fs_pin_file_control: a pinned file's block cannot move; count the
 * failure in i_gc_failures.  Past the threshold the file is unpinned, so
 * that a pinned file cannot keep the cleaner from space forever.  True
 * if the block must stay.
 */
static bool pin_file_control(struct f2fs_sb *sb, struct f2fs_inode *inode)
{
	uint32_t failures;
	bool stay = true;

	pthread_rwlock_wrlock(&inode->lock);
	failures = get_le16(inode->node + I_CURRENT_DEPTH) + 1u;
	if (failures > F2FS_GC_PIN_FILE_THRESHOLD) {
		f2fs_warn(sb, "unpinning inode %u: %u blocks could not be cleaned", inode->ino,
			  failures - 1);
		inode->inline_flags &= (uint8_t)~F2FS_PIN_FILE;
		failures = 0;
		stay = false;
	}
	put_le16(inode->node + I_CURRENT_DEPTH, (uint16_t)failures);
	f2fs_mark_inode_dirty(sb, inode);
	pthread_rwlock_unlock(&inode->lock);
	return stay;
}

/*
 * Is the data block at blkaddr still what slot ofs of dnode nid points at?
 * If so, take a reference on its inode and fill *mv.  Returns 1 for a move,
 * 0 for a dead block.
 */
static int gc_check_data_block(struct f2fs_sb *sb, uint32_t nid, uint8_t version, uint16_t ofs,
			       uint32_t blkaddr, uint8_t *node, struct gc_move *mv)
{
	struct f2fs_node_info ni;
	struct f2fs_inode *inode;
	uint32_t ino, addr_off;
	int err = f2fs_get_node_info(sb, nid, &ni);

	if (err)
		return err;
	if (ni.version != version || ni.blkaddr == NULL_ADDR)
		return 0;	/* the dnode was freed since: the block is dead */
	err = f2fs_get_node(sb, nid, ni.ino, F2FS_NODE_OFS_ANY, node);
	if (err)
		return err;
	ino = ni.ino;
	err = f2fs_iget(sb, ino, &inode);
	if (err)
		return err;
	pthread_rwlock_rdlock(&inode->lock);
	/* the inode's own block is authoritative while it is cached */
	if (nid == ino) {
		memcpy(node, inode->node, F2FS_BLKSIZE);
		addr_off = I_ADDR + 4 * (f2fs_addr_start(inode) + ofs);
	} else {
		addr_off = 4u * ofs;
	}
	pthread_rwlock_unlock(&inode->lock);
	if (addr_off + 4 > NODE_FOOTER_OFFSET || get_le32(node + addr_off) != blkaddr) {
		f2fs_iput(sb, inode);
		return 0;	/* remapped since: not ours to move */
	}
	if ((inode->inline_flags & F2FS_PIN_FILE) && pin_file_control(sb, inode)) {
		pthread_mutex_lock(&sb->sm->lock);
		mark_sec_pinned(sb, ((blkaddr - sb->main_blkaddr) >> sb->log_blocks_per_seg) /
				    sb->segs_per_sec);
		pthread_mutex_unlock(&sb->sm->lock);
		f2fs_iput(sb, inode);
		return 0;	/* a pinned file's blocks stay where they are */
	}
	mv->inode = inode;
	mv->nid = nid;
	mv->addr_off = addr_off;
	mv->old = blkaddr;
	return 1;
}

/* The file block a moved pointer maps: its slot, from its direct node's first block. */
static uint32_t gc_file_block(const struct f2fs_inode *inode, const struct gc_move *mv,
			      const uint8_t *node)
{
	if (mv->nid == inode->ino)
		return (mv->addr_off - I_ADDR) / 4 - f2fs_addr_start(inode);
	return (uint32_t)(f2fs_start_bidx_of_node(inode, f2fs_node_ofs(node)) + mv->addr_off / 4);
}

/* Point the owner at the block's new home and let the old one go. */
static int gc_commit_move(struct f2fs_sb *sb, const struct gc_move *mv, uint8_t *node)
{
	struct f2fs_inode *inode = mv->inode;
	bool in_inode = mv->nid == inode->ino;
	int err = 0;

	pthread_rwlock_wrlock(&inode->lock);
	if (in_inode) {
		put_le32(inode->node + mv->addr_off, mv->new);
	} else {
		err = f2fs_get_node(sb, mv->nid, inode->ino, F2FS_NODE_OFS_ANY, node);
		if (!err) {
			put_le32(node + mv->addr_off, mv->new);
			err = f2fs_set_node_dirty(sb, mv->nid, node);
		}
		if (err)
			f2fs_invalidate_block(sb, mv->new);	/* nobody points at it */
	}
	if (!err) {
		f2fs_invalidate_block(sb, mv->old);
		f2fs_extent_cache_move(inode, gc_file_block(inode, mv, node), mv->new);
		err = f2fs_mark_inode_dirty(sb, inode);	/* i_addr or i_ext changed */
	}
	pthread_rwlock_unlock(&inode->lock);
	return err;
}

/*
 * Move the valid data blocks of one segment (their bytes in seg) to the
 * cold data log.  Three passes, so that no reader ever follows a pointer to
 * a block not yet written: find the live blocks and their new addresses,
 * write them all (consecutive addresses merge into large writes; encrypted
 * blocks move as the ciphertext they are), then switch the pointers.
 * Writers are shut out by cp_rwsem, so nothing changes between the passes.
 */
static int gc_data_segment(struct f2fs_sb *sb, uint32_t start, const uint8_t *sum,
			   const uint8_t *map, uint8_t *seg)
{
	struct gc_move *moves = calloc(sb->blocks_per_seg, sizeof(*moves));
	uint8_t *node = f2fs_alloc_blocks(1);
	struct f2fs_plug *plug = malloc(sizeof(*plug));
	uint32_t n = 0, i;
	int err = 0;

	if (!moves || !node || !plug) {
		err = -ENOMEM;
		goto out;
	}
	for (uint32_t off = 0; off < sb->blocks_per_seg && !err; off++) {
		const uint8_t *e = sum + off * SUMMARY_SIZE;
		int r;

		if (!f2fs_test_bit(off, map))
			continue;
		r = gc_check_data_block(sb, get_le32(e), e[4], get_le16(e + 5), start + off, node,
					&moves[n]);
		if (r < 0) {
			err = r;
			break;
		}
		if (!r)
			continue;
		moves[n].off = (uint16_t)off;
		err = f2fs_allocate_block(sb, CURSEG_COLD_DATA, moves[n].nid, e[4], get_le16(e + 5),
					  &moves[n].new);
		if (err) {
			f2fs_iput(sb, moves[n].inode);
			break;
		}
		n++;
	}
	f2fs_plug_init(plug, sb->dev);
	for (i = 0; i < n && !err; i++) {
		struct iovec iov = { seg + (size_t)moves[i].off * F2FS_BLKSIZE, F2FS_BLKSIZE };
		struct f2fs_bio bio = { .op = F2FS_BIO_WRITE, .blkaddr = moves[i].new,
					.nr_blocks = 1, .iov = &iov, .iovcnt = 1 };

		err = f2fs_plug_add(plug, &bio);
	}
	if (!err)
		err = f2fs_plug_flush(plug);
	for (i = 0; i < n; i++) {
		if (!err) {
			err = gc_commit_move(sb, &moves[i], node);
			if (!err)
				f2fs_stat_add(sb, gc_data_blocks, 1);
		} else {
			/* not written (or not pointed at): the new block stays unused */
			f2fs_invalidate_block(sb, moves[i].new);
		}
		f2fs_iput(sb, moves[i].inode);
	}
out:
	free(plug);
	free(node);
	free(moves);
	return err;
}

#define GC_READ_GAP 16	/* dead blocks read through rather than split a read */

/* Move every valid block out of one segment. */
static int gc_segment(struct f2fs_sb *sb, uint32_t segno)
{
	uint8_t *sum = f2fs_alloc_blocks(1), *seg = f2fs_alloc_blocks(sb->blocks_per_seg);
	uint8_t map[SIT_VBLOCK_MAP_SIZE];
	uint32_t start = f2fs_seg_start_blkaddr(sb, segno), first = UINT32_MAX, last = 0;
	int err;

	if (!sum || !seg) {
		err = -ENOMEM;
		goto out;
	}
	err = f2fs_read_ssa(sb, segno, sum);
	if (err)
		goto out;
	pthread_mutex_lock(&sb->sm->lock);
	memcpy(map, sb->sm->sentries[segno].cur_valid_map, sizeof(map));
	pthread_mutex_unlock(&sb->sm->lock);
	for (uint32_t off = 0; off < sb->blocks_per_seg; off++) {
		if (f2fs_test_bit(off, map)) {
			first = F2FS_MIN(first, off);
			last = off;
		}
	}
	if (first == UINT32_MAX)
		goto out;
	/*
	 * Read the live blocks raw (ciphertext stays ciphertext), one request
	 * per run; runs closer than GC_READ_GAP blocks are read as one, since a
	 * few dead blocks cost less than another request.
	 */
	for (uint32_t a = first; a <= last && !err;) {
		uint32_t b = a, gap = 0;

		for (uint32_t off = a + 1; off <= last && gap <= GC_READ_GAP; off++) {
			if (f2fs_test_bit(off, map)) {
				b = off;
				gap = 0;
			} else {
				gap++;
			}
		}
		err = f2fs_dev_read(sb->dev, start + a, seg + (size_t)a * F2FS_BLKSIZE, b - a + 1);
		for (a = b + 1; a <= last && !f2fs_test_bit(a, map); a++)
			;
	}
	if (err)
		goto out;
	if (sum[SUM_FOOTER_OFFSET] == SUM_TYPE_NODE) {
		for (uint32_t off = first; off <= last && !err; off++)
			if (f2fs_test_bit(off, map))
				err = move_node_block(sb, get_le32(sum + off * SUMMARY_SIZE), start + off,
						      seg + (size_t)off * F2FS_BLKSIZE);
	} else {
		err = gc_data_segment(sb, start, sum, map, seg);
	}
out:
	free(seg);
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
		/* only pinned sections left: look at them again (their files may be unpinned) */
		if (sec == UINT32_MAX && policy == F2FS_GC_GREEDY && unpin_all_sections(sb) && !n)
			sec = select_victim(sb, policy);
		pthread_mutex_unlock(&sb->sm->lock);
		if (sec == UINT32_MAX)
			break;
		pthread_mutex_lock(&sb->sm->lock);
		sb->sm->gc_victim_sec = sec;	/* no SSR refills while it empties */
		pthread_mutex_unlock(&sb->sm->lock);
		for (uint32_t s = 0; s < sb->segs_per_sec && !err; s++)
			err = gc_segment(sb, sec * sb->segs_per_sec + s);
		pthread_mutex_lock(&sb->sm->lock);
		sb->sm->gc_victim_sec = UINT32_MAX;
		pthread_mutex_unlock(&sb->sm->lock);
		if (err)
			break;
		n++;
	}
	if (n)
		f2fs_debug(sb, "gc: cleaned %u section(s)", n);
	f2fs_stat_add(sb, gc_runs, 1);
	f2fs_stat_add(sb, gc_sections, n);
	if (!err)
		err = f2fs_write_dirty_nodes(sb);
	if (!err)
		err = f2fs_write_checkpoint(sb, false);
	if (freed)
		*freed = n;
	return err;
}

int f2fs_gc_section_locked(struct f2fs_sb *sb, uint32_t sec)
{
	uint32_t nsecs = sb->segment_count_main / sb->segs_per_sec;
	int err = 0;

	if (sec >= nsecs)
		return -EINVAL;
	pthread_mutex_lock(&sb->sm->lock);
	if (!sec_valid(sb, sec))
		err = -ENODATA;
	else if (sec_has_curseg(sb, sec))
		err = -EBUSY;
	else
		sb->sm->gc_victim_sec = sec;
	pthread_mutex_unlock(&sb->sm->lock);
	if (err)
		return err;
	for (uint32_t s = 0; s < sb->segs_per_sec && !err; s++)
		err = gc_segment(sb, sec * sb->segs_per_sec + s);
	pthread_mutex_lock(&sb->sm->lock);
	sb->sm->gc_victim_sec = UINT32_MAX;
	pthread_mutex_unlock(&sb->sm->lock);
	f2fs_stat_add(sb, gc_runs, 1);
	if (!err)
		f2fs_stat_add(sb, gc_sections, 1);
	if (!err)
		err = f2fs_write_dirty_nodes(sb);
	if (!err)
		err = f2fs_write_checkpoint(sb, false);
	return err;
}

/*
 * f2fs_balance_fs: before an operation that allocates, make room.  A
 * checkpoint comes first: it turns segments emptied since the last one
 * (prefree) into free ones, and bounds the memory dirty nodes hold.  If
 * that is not enough, foreground cleaning moves live blocks out of the
 * emptiest sections.
 */
void f2fs_balance_fs(struct f2fs_sb *sb)
{
	uint32_t free_segs, prefree = 0, low;
	bool need;

	if (!f2fs_writable(sb))
		return;
	/*
	 * has_not_enough_free_secs: the reserved segments (mkfs sized them for
	 * cleaning, the six logs included) plus room for the dirty nodes the
	 * next checkpoint writes.  More than that would keep free what user
	 * data may legitimately fill, and cleaning could never catch up.
	 */
	low = sb->rsvd_segments + 1 +
	      (f2fs_nr_dirty_nodes(sb) + sb->blocks_per_seg - 1) / sb->blocks_per_seg;
	pthread_mutex_lock(&sb->sm->lock);
	free_segs = sb->sm->free_segments;
	if (free_segs < low) {
		for (uint32_t s = 0; s < sb->segment_count_main; s++) {
			const struct f2fs_seg_entry *se = &sb->sm->sentries[s];

			prefree += !se->valid_blocks && se->ckpt_valid_blocks;
		}
	}
	pthread_mutex_unlock(&sb->sm->lock);
	need = (free_segs < low && prefree) || f2fs_nr_dirty_nodes(sb) > F2FS_MAX_DIRTY_NODES;
	if (need)
		f2fs_sync_fs(sb, false);
	if (free_segs >= low && !need)
		return;
	/* still short: foreground cleaning, a few sections at a time */
	f2fs_lock_all(sb);
	for (int round = 0; round < 8; round++) {
		uint32_t freed = 0;

		pthread_mutex_lock(&sb->sm->lock);
		free_segs = sb->sm->free_segments;
		pthread_mutex_unlock(&sb->sm->lock);
		if (free_segs >= low + sb->segs_per_sec)
			break;
		if (f2fs_gc_locked(sb, F2FS_GC_GREEDY, 4, &freed) || !freed)
			break;
	}
	f2fs_unlock_all(sb);
}

/*
 * Background cleaning (the kernel's gc thread, simplified): on a periodic
 * maintenance call, when fewer than a fifth of the sections are free, clean one
 * cost-benefit victim so foreground writes find free sections waiting.
 */
void f2fs_background_gc(struct f2fs_sb *sb)
{
	uint32_t free_segs, nsegs = sb->segment_count_main;

	if (!f2fs_writable(sb))
		return;
	pthread_mutex_lock(&sb->sm->lock);
	free_segs = sb->sm->free_segments;
	pthread_mutex_unlock(&sb->sm->lock);
	if (free_segs * 5 >= nsegs)
		return;
	/* never wait behind busy writers: the maintenance thread must stay cheap */
	if (!f2fs_trylock_all(sb))
		return;
	f2fs_gc_locked(sb, F2FS_GC_COST_BENEFIT, 1, NULL);
	f2fs_unlock_all(sb);
}
