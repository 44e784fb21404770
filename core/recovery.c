// SPDX-License-Identifier: GPL-2.0
/*
 * Roll-forward recovery.  After the last checkpoint, fsync() writes dnodes
 * to the warm node log chained by next_blkaddr; a dnode belongs to the
 * current checkpoint when its footer carries the checkpoint's version
 * (is_recoverable_dnode).  An inode's dnodes are replayed up to the last
 * one with the fsync mark, as the kernel's recover_data does: the nodes
 * after it belong to an fsync that did not complete.  A read-only mount only finds them, to say that
 * recovery is pending; a writable mount replays them.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "f2fs.h"

static bool is_recoverable_dnode(const struct f2fs_sb *sb, const uint8_t *node)
{
	uint64_t cp_ver = sb->cp_ver;
	uint64_t node_ver = f2fs_node_cp_ver(node);

	/* fsck.f2fs may leave the crc half unset */
	if (f2fs_cp_flag(sb, CP_NOCRC_RECOVERY_FLAG))
		return (uint32_t)cp_ver == (uint32_t)node_ver;
	if (f2fs_cp_flag(sb, CP_CRC_RECOVERY_FLAG)) {
		uint32_t crc = get_le32(sb->ckpt + get_le32(sb->ckpt + CP_CHECKSUM_OFFSET));

		cp_ver |= (uint64_t)crc << 32;
	}
	return cp_ver == node_ver;
}

int f2fs_find_fsync_dnodes(struct f2fs_sb *sb, uint32_t *count)
{
	const struct f2fs_curseg *cs = &sb->curseg[CURSEG_WARM_NODE];
	uint32_t blkaddr = f2fs_seg_start_blkaddr(sb, cs->segno) + cs->blkoff;
	uint64_t limit = (uint64_t)sb->segment_count_main << sb->log_blocks_per_seg;
	uint8_t *blk = f2fs_alloc_blocks(1);
	uint32_t n = 0;
	int err = 0;

	if (!blk)
		return -ENOMEM;
	/* the chain may loop on a hostile image: never walk more than the main area */
	for (uint64_t steps = 0; steps < limit && f2fs_valid_main_blkaddr(sb, blkaddr); steps++) {
		err = f2fs_dev_read(sb->dev, blkaddr, blk, 1);
		if (err)
			break;
		if (!is_recoverable_dnode(sb, blk))
			break;
		if (f2fs_node_flag(blk) & (1u << FSYNC_BIT_SHIFT))
			n++;
		blkaddr = f2fs_node_next_blkaddr(blk);
	}
	free(blk);
	*count = n;
	return err;
}

/* ======================= replay ======================= */

struct fsync_entry {
	uint32_t ino;
	struct f2fs_inode *inode;
	uint32_t blkaddr;	/* last fsync()ed dnode of this inode */
	uint32_t last_dentry;	/* last inode block with the dentry mark */
	bool done;
};

struct fsync_list {
	struct fsync_entry *e;
	uint32_t nr, cap;
};

static struct fsync_entry *find_entry(struct fsync_list *l, uint32_t ino)
{
	for (uint32_t i = 0; i < l->nr; i++)
		if (l->e[i].ino == ino)
			return &l->e[i];
	return NULL;
}

static bool is_fsync_dnode(const uint8_t *node)
{
	return f2fs_is_dnode(node) && (f2fs_node_flag(node) & (1u << FSYNC_BIT_SHIFT));
}

static bool is_dent_dnode(const uint8_t *node)
{
	return f2fs_node_flag(node) & (1u << DENT_BIT_SHIFT);
}

static bool is_inode_block(const uint8_t *node)
{
	return f2fs_node_ofs(node) == 0 && f2fs_node_nid(node) == f2fs_node_ino(node);
}

/*
 * f2fs_recover_inode_page: an inode created after the checkpoint comes
 * back from its fsync()ed block: its header only, with no blocks; the
 * data and dentry replay fill in the rest.
 */
static int recover_inode_page(struct f2fs_sb *sb, const uint8_t *page)
{
	uint32_t ino = f2fs_node_ino(page), nid;
	uint8_t *blk = f2fs_alloc_blocks(1);
	int err;

	if (!blk)
		return -ENOMEM;
	err = f2fs_claim_nid(sb, ino);
	if (!err)
		err = f2fs_new_node(sb, ino, 0, (get_le16(page + I_MODE) & S_IFMT) != S_IFDIR, &nid, blk);
	if (err) {
		free(blk);
		return err;
	}
	memcpy(blk, page, I_EXT);
	put_le64(blk + I_SIZE, 0);
	put_le64(blk + I_BLOCKS, 1);
	put_le32(blk + I_LINKS, 1);
	put_le32(blk + I_XATTR_NID, 0);
	blk[I_INLINE] = page[I_INLINE] & (F2FS_INLINE_XATTR | F2FS_EXTRA_ATTR);
	if (blk[I_INLINE] & F2FS_EXTRA_ATTR) {
		uint16_t extra = get_le16(page + I_EXTRA_ISIZE);

		if (extra > F2FS_TOTAL_EXTRA_ATTR_SIZE)
			extra = F2FS_TOTAL_EXTRA_ATTR_SIZE;
		memcpy(blk + I_EXTRA_ISIZE, page + I_EXTRA_ISIZE, extra);
		put_le64(blk + I_COMPR_BLOCKS, 0);
	}
	f2fs_inode_update_checksum(sb, blk);
	err = f2fs_set_node_dirty(sb, ino, blk);
	free(blk);
	return err;
}

/* find_fsync_dnodes: which inodes have fsync()ed dnodes, and where the last ones are. */
static int collect(struct f2fs_sb *sb, struct fsync_list *l)
{
	const struct f2fs_curseg *cs = &sb->curseg[CURSEG_WARM_NODE];
	uint32_t blkaddr = f2fs_seg_start_blkaddr(sb, cs->segno) + cs->blkoff;
	uint64_t limit = (uint64_t)sb->segment_count_main << sb->log_blocks_per_seg;
	uint8_t *page = f2fs_alloc_blocks(1);
	int err = 0;

	if (!page)
		return -ENOMEM;
	for (uint64_t steps = 0; steps < limit && f2fs_valid_main_blkaddr(sb, blkaddr); steps++) {
		struct fsync_entry *e;
		uint32_t ino, next;

		err = f2fs_dev_read(sb->dev, blkaddr, page, 1);
		if (err || !is_recoverable_dnode(sb, page))
			break;
		next = f2fs_node_next_blkaddr(page);
		if (!is_fsync_dnode(page))
			goto next;
		ino = f2fs_node_ino(page);
		e = find_entry(l, ino);
		if (!e) {
			struct f2fs_inode *inode;

			if (is_inode_block(page) && is_dent_dnode(page) &&
			    !f2fs_nat_checkpointed(sb, ino)) {
				err = recover_inode_page(sb, page);
				if (err)
					break;
				err = f2fs_iget(sb, ino, &inode);
				/* the inode is back: charged to its owners (dquot_alloc_inode;
				 * limits are not checked while recovering) */
				if (!err)
					f2fs_dquot_alloc_inode(sb, inode);
			} else {
				err = f2fs_iget(sb, ino, &inode);
			}
			if (err) {
				/* its inode is gone: nothing to replay for it */
				f2fs_warn(sb, "recovery: skipping dnodes of missing inode %u", ino);
				err = 0;
				goto next;
			}
			if (l->nr == l->cap) {
				struct fsync_entry *n;

				l->cap = l->cap ? l->cap * 2 : 16;
				n = realloc(l->e, l->cap * sizeof(*n));
				if (!n) {
					f2fs_iput(sb, inode);
					err = -ENOMEM;
					break;
				}
				l->e = n;
			}
			e = &l->e[l->nr++];
			memset(e, 0, sizeof(*e));
			e->ino = ino;
			e->inode = inode;
		}
		e->blkaddr = blkaddr;
		if (is_inode_block(page) && is_dent_dnode(page))
			e->last_dentry = blkaddr;
next:
		if (next == blkaddr) {
			err = f2fs_corrupted(sb, "recovery: node chain loops at 0x%x", blkaddr);
			break;
		}
		blkaddr = next;
	}
	free(page);
	return err;
}

/* recover_inode: the fsync()ed inode block's attributes win; a new owner
 * or project takes the inode's charges along (recover_quota_data). */
static int recover_inode(struct f2fs_sb *sb, struct f2fs_inode *inode, const uint8_t *page)
{
	uint8_t *n = inode->node;
	uint32_t ids[F2FS_MAX_QUOTAS] = { get_le32(page + I_UID), get_le32(page + I_GID),
					   inode->projid };
	int err;

	if (f2fs_has_feature(sb, F2FS_FEATURE_PRJQUOTA) && (page[I_INLINE] & F2FS_EXTRA_ATTR) &&
	    I_PROJID + 4 <= I_ADDR + (uint32_t)inode->extra_isize &&
	    I_PROJID + 4 <= I_ADDR + (uint32_t)get_le16(page + I_EXTRA_ISIZE))
		ids[F2FS_PRJQUOTA] = get_le32(page + I_PROJID);
	err = f2fs_dquot_transfer(sb, inode, ids, true);
	if (err)
		return err;
	inode->mode = get_le16(page + I_MODE);
	inode->uid = ids[F2FS_USRQUOTA];
	inode->gid = ids[F2FS_GRPQUOTA];
	inode->projid = ids[F2FS_PRJQUOTA];
	inode->size = get_le64(page + I_SIZE);
	inode->advise = page[I_ADVISE];
	inode->flags = get_le32(page + I_FLAGS);
	memcpy(n + I_ATIME, page + I_ATIME, 24);		/* a/c/mtime */
	memcpy(n + I_ATIME_NSEC, page + I_ATIME_NSEC, 12);	/* their nsec */
	if (page[I_INLINE] & F2FS_DATA_EXIST)
		inode->inline_flags |= F2FS_DATA_EXIST;
	else
		inode->inline_flags &= (uint8_t)~F2FS_DATA_EXIST;
	if (page[I_INLINE] & F2FS_PIN_FILE)
		inode->inline_flags |= F2FS_PIN_FILE;
	return 0;
}

/* recover_dentry: relink a new inode under its parent with its recorded name. */
static int recover_dentry(struct f2fs_sb *sb, struct f2fs_inode *inode, const uint8_t *page)
{
	uint32_t pino = get_le32(page + I_PINO), namelen = get_le32(page + I_NAMELEN), ino;
	const char *name = (const char *)page + I_NAME;
	struct f2fs_inode *dir;
	int err;

	if (!namelen || namelen > F2FS_NAME_LEN)
		return f2fs_corrupted(sb, "recovery: inode %u records a name of %u bytes",
				      inode->ino, namelen);
	err = f2fs_iget(sb, pino, &dir);
	if (err)
		return err;
	if (!S_ISDIR(dir->mode)) {
		f2fs_iput(sb, dir);
		return f2fs_corrupted(sb, "recovery: parent %u of inode %u is not a directory",
				      pino, inode->ino);
	}
	/* i_name is in on-disk form: ciphertext in an encrypted directory */
	err = f2fs_dir_lookup_disk(sb, dir, (const uint8_t *)name, namelen, &ino);
	if (!err && ino != inode->ino) {
		/* the name belongs to an older inode: it loses it */
		struct f2fs_inode *old;

		err = f2fs_iget(sb, ino, &old);
		if (!err) {
			err = f2fs_delete_entry_disk(sb, dir, (const uint8_t *)name, namelen, old);
			if (!err && old->links)
				old->links--;
			if (!err && !old->links)
				err = f2fs_evict_inode(sb, old);
			else if (!err)
				err = f2fs_mark_inode_dirty(sb, old);
			f2fs_iput(sb, old);
		}
		if (!err)
			err = -ENOENT;
	}
	if (err == -ENOENT)
		err = f2fs_add_link_disk(sb, dir, (const uint8_t *)name, namelen, inode);
	if (inode->advise & FADVISE_ENC_NAME_BIT)
		f2fs_info(sb, "recovery: inode %u, encrypted name, dir %u: %s", inode->ino, pino,
			  err ? strerror(-err) : "ok");
	else
		f2fs_info(sb, "recovery: inode %u, name %.*s, dir %u: %s", inode->ino, (int)namelen,
			  name, pino, err ? strerror(-err) : "ok");
	f2fs_iput(sb, dir);
	return err;
}

/* f2fs_recover_xattr_data: the fsync()ed xattr node replaces the inode's. */
static int recover_xattr_node(struct f2fs_sb *sb, struct f2fs_inode *inode, const uint8_t *page)
{
	uint32_t prev = inode->xattr_nid, nid = f2fs_node_nid(page);
	uint8_t *blk;
	int err = 0;

	if (nid < sb->root_ino || nid >= sb->max_nid)
		return f2fs_corrupted(sb, "recovery: xattr node %u of inode %u out of range", nid,
				      inode->ino);
	if (prev != nid) {
		if (prev) {
			err = f2fs_remove_node(sb, prev, inode->ino, false);
			if (err)
				return err;
			inode->blocks--;
			f2fs_dquot_free_block(sb, inode, 1);
		}
		err = f2fs_claim_nid(sb, nid);
		if (err)
			return err;
		f2fs_set_node_addr(sb, nid, inode->ino, NEW_ADDR);
		pthread_mutex_lock(&sb->nm->lock);
		sb->nm->valid_node_count++;
		pthread_mutex_unlock(&sb->nm->lock);
		f2fs_add_valid_blocks(sb, 1);
		inode->blocks++;
		f2fs_dquot_alloc_block(sb, inode, 1);
		inode->xattr_nid = nid;
	}
	blk = f2fs_alloc_blocks(1);
	if (!blk)
		return -ENOMEM;
	memcpy(blk, page, F2FS_BLKSIZE);
	f2fs_fill_node_footer(blk, nid, inode->ino, XATTR_NODE_OFFSET, true);
	err = f2fs_set_node_dirty(sb, nid, blk);
	free(blk);
	return err;
}

/* The blocks the compressed clusters among n slots save (i_compr_blocks' share). */
static uint64_t compr_saved(const struct f2fs_inode *inode, const uint8_t *addrs, uint32_t n)
{
	const uint32_t cs = 1u << inode->log_cluster_size;
	uint64_t saved = 0;

	if (!f2fs_is_compressed(inode))
		return 0;
	for (uint32_t c = 0; c + cs <= n; c += cs) {
		uint32_t nr = 0;

		if (get_le32(addrs + 4 * c) != COMPRESS_ADDR)
			continue;
		for (uint32_t i = 1; i < cs; i++) {
			uint32_t a = get_le32(addrs + 4 * (c + i));

			nr += a != NULL_ADDR && a != NEW_ADDR && a != COMPRESS_ADDR;
		}
		saved += cs - nr;
	}
	return saved;
}

/*
 * do_recover_data: make the live tree map what an fsync()ed dnode (or
 * inode block) maps: its blocks become valid again, the blocks they
 * replace are freed, holes it records are punched.
 */
static int do_recover_data(struct f2fs_sb *sb, struct f2fs_inode *inode, const uint8_t *page)
{
	uint32_t ofs = f2fs_node_ofs(page);
	const uint8_t *src_addrs;
	struct dnode_of_data dn;
	uint64_t start, compr_total = inode->compr_blocks, compr_before = 0;
	uint32_t count;
	int err;

	if (ofs == XATTR_NODE_OFFSET)
		return recover_xattr_node(sb, inode, page);
	if (ofs == 0) {
		err = f2fs_recover_inline_data(sb, inode, page);
		if (err < 0)
			return err;
		if (err)
			goto xattr;
		src_addrs = page + I_ADDR + 4 * f2fs_addr_start(inode);
		count = inode->addrs_per_inode;
	} else {
		src_addrs = page;
		count = f2fs_addrs_per_block(inode);
	}
	start = f2fs_start_bidx_of_node(inode, ofs);
	if (start >= f2fs_max_file_blocks(inode))
		return f2fs_corrupted(sb, "recovery: inode %u dnode offset %u out of range",
				      inode->ino, ofs);
	err = f2fs_get_dnode_of_data(sb, inode, (uint32_t)start, ALLOC_NODE, &dn);
	if (!err && (dn.ofs_in_node != 0 || (!dn.is_inode && f2fs_node_ofs(dn.node) != ofs)))
		err = f2fs_corrupted(sb, "recovery: inode %u: dnode offset %u does not match the "
				     "tree", inode->ino, ofs);
	if (!err)
		compr_before = compr_saved(inode, dn.addrs, F2FS_MIN(count, dn.naddrs));
	for (uint32_t i = 0; !err && i < count && i < dn.naddrs; i++) {
		uint32_t src = get_le32(dn.addrs + 4 * i);
		uint32_t dest = get_le32(src_addrs + 4 * i);

		if (src == dest)
			continue;
		/* neither the kernel (CP_COMPRESSED) nor this driver logs a
		 * compressed file for roll-forward, but an image from another
		 * writer may: its cluster heads replay like reserved blocks */
		if (dest == COMPRESS_ADDR && f2fs_is_compressed(inode) &&
		    !(i & ((1u << inode->log_cluster_size) - 1))) {
			/* a compressed cluster's head: counted like a reserved block */
			if (src == NULL_ADDR) {
				f2fs_add_valid_blocks(sb, 1);
				inode->blocks++;
			} else if (src != NEW_ADDR) {
				f2fs_invalidate_block(sb, src);
			}
			put_le32(dn.addrs + 4 * i, COMPRESS_ADDR);
			continue;
		}
		if (dest == NULL_ADDR || dest == NEW_ADDR) {
			dn.ofs_in_node = i;
			f2fs_truncate_data_blocks_range(sb, &dn, 1);
			if (dest == NEW_ADDR) {
				put_le32(dn.addrs + 4 * i, NEW_ADDR);
				f2fs_add_valid_blocks(sb, 1);
				inode->blocks++;
				f2fs_dquot_alloc_block(sb, inode, 1);
			}
			continue;
		}
		if (dest == COMPRESS_ADDR || !f2fs_valid_main_blkaddr(sb, dest)) {
			err = f2fs_corrupted(sb, "recovery: inode %u maps block %llu to invalid "
					     "address 0x%x", inode->ino,
					     (unsigned long long)(start + i), dest);
			break;
		}
		err = f2fs_recover_block(sb, dest, dn.nid, dn.version, (uint16_t)i);
		if (err)
			break;
		if (src == NULL_ADDR) {
			f2fs_add_valid_blocks(sb, 1);
			inode->blocks++;
			f2fs_dquot_alloc_block(sb, inode, 1);
		} else if (src != NEW_ADDR) {
			f2fs_invalidate_block(sb, src);
		}
		put_le32(dn.addrs + 4 * i, dest);
	}
	if (!err) {
		/* what the replayed clusters save now, in place of what they saved */
		inode->compr_blocks = compr_total - compr_before +
				      compr_saved(inode, dn.addrs, F2FS_MIN(count, dn.naddrs));
		err = f2fs_put_dnode(sb, &dn);
	}
	f2fs_drop_extent_cache(inode, 0, UINT32_MAX);
	if (err || ofs != 0)
		return err;
xattr:
	/* recover_inline_xattr */
	if (inode->inline_xattr_addrs && (page[I_INLINE] & F2FS_INLINE_XATTR))
		memcpy(f2fs_inline_xattr_addr(inode), page + (f2fs_inline_xattr_addr(inode) - inode->node),
		       f2fs_inline_xattr_size(inode));
	return 0;
}

/* recover_data: the second walk, replaying the fsync()ed inodes' dnodes in order. */
static int replay(struct f2fs_sb *sb, struct fsync_list *l, uint32_t *recovered)
{
	const struct f2fs_curseg *cs = &sb->curseg[CURSEG_WARM_NODE];
	uint32_t blkaddr = f2fs_seg_start_blkaddr(sb, cs->segno) + cs->blkoff;
	uint64_t limit = (uint64_t)sb->segment_count_main << sb->log_blocks_per_seg;
	uint8_t *page = f2fs_alloc_blocks(1);
	int err = 0;

	if (!page)
		return -ENOMEM;
	for (uint64_t steps = 0; steps < limit && f2fs_valid_main_blkaddr(sb, blkaddr); steps++) {
		struct fsync_entry *e;
		uint32_t next;

		err = f2fs_dev_read(sb->dev, blkaddr, page, 1);
		if (err || !is_recoverable_dnode(sb, page))
			break;
		next = f2fs_node_next_blkaddr(page);
		/* every dnode of an fsync()ed inode up to its last marked one, marked
		 * or not (a group commit marks only an inode's last node) */
		e = find_entry(l, f2fs_node_ino(page));
		if (!e || e->done || !f2fs_is_dnode(page))
			goto next;
		pthread_rwlock_wrlock(&e->inode->lock);
		if (is_inode_block(page))
			err = recover_inode(sb, e->inode, page);
		if (!err && e->last_dentry == blkaddr)
			err = recover_dentry(sb, e->inode, page);
		if (!err)
			err = do_recover_data(sb, e->inode, page);
		if (!err)
			err = f2fs_mark_inode_dirty(sb, e->inode);
		pthread_rwlock_unlock(&e->inode->lock);
		if (err)
			break;
		(*recovered)++;
		if (blkaddr == e->blkaddr)
			e->done = true;
next:
		if (next == blkaddr)
			break;
		blkaddr = next;
	}
	free(page);
	return err;
}

/*
 * f2fs_recover_fsync_data: replay fsync()ed dnodes after the last
 * checkpoint, then move every log to a fresh segment and checkpoint.
 */
int f2fs_recover_fsync_data(struct f2fs_sb *sb)
{
	struct fsync_list l = { 0 };
	uint32_t recovered = 0;
	int err = collect(sb, &l), rerr;

	/*
	 * Replay writes dentry and data blocks as it goes, at the logs'
	 * positions of the last checkpoint, and moving the logs on writes
	 * summary blocks; a node or summary found corrupt on the way must
	 * leave the device as it was (the kernel keeps all of it in the page
	 * cache, unwritten until the checkpoint, and drops it on failure).
	 * The checkpoint is the commit point: everything before it is held.
	 */
	f2fs_dev_hold_writes(sb->dev);
	if (!err)
		err = replay(sb, &l, &recovered);
	for (uint32_t i = 0; i < l.nr; i++)
		f2fs_iput(sb, l.e[i].inode);
	free(l.e);
	if (!err)
		err = f2fs_allocate_new_segments(sb);
	/* the checkpoint's quota files count what it replayed */
	if (!err)
		err = f2fs_quota_sync(sb);
	if (!err)
		err = f2fs_write_dirty_nodes(sb);
	rerr = f2fs_dev_release_writes(sb->dev, !err);
	if (!err)
		err = rerr;
	if (!err)
		err = f2fs_write_checkpoint(sb, false);
	if (err) {
		f2fs_err(sb, "roll-forward recovery failed: %s", strerror(-err));
		return err;
	}
	sb->recovery_pending = false;
	f2fs_info(sb, "roll-forward recovery: %u node block(s) of %u inode(s) replayed",
		  recovered, l.nr);
	return 0;
}
