// SPDX-License-Identifier: GPL-2.0
/*
 * Checkpoint packs: choosing the newest valid pack, locating the NAT and
 * SIT version bitmaps, reading orphan inode blocks, and writing a new
 * pack (f2fs_write_checkpoint, and f2fs_sync_fs which writes the dirty
 * nodes first).
 */
#include <stdlib.h>
#include <string.h>

#include "f2fs.h"

/* CRC over the cp block, stored at checksum_offset (f2fs_checkpoint_chksum). */
static bool cp_crc_ok(const uint8_t *cp)
{
	uint32_t off = get_le32(cp + CP_CHECKSUM_OFFSET);
	uint32_t crc;

	if (off < CP_MIN_CHKSUM_OFFSET || off > CP_CHKSUM_OFFSET_DEFAULT || off % 4)
		return false;
	crc = f2fs_chksum(cp, off);
	if (off < CP_CHKSUM_OFFSET_DEFAULT)
		crc = f2fs_crc32(crc, cp + off + 4, F2FS_BLKSIZE - off - 4);
	return crc == get_le32(cp + off);
}

/*
 * A pack is valid when its first and last cp blocks both pass CRC and
 * carry the same version (validate_checkpoint).  Returns the version via
 * *ver, or a negative errno.
 */
static int validate_pack(struct f2fs_sb *sb, uint32_t start, uint8_t *cp1, uint64_t *ver)
{
	uint8_t *cp2 = f2fs_alloc_blocks(1);
	uint32_t total;
	int err;

	if (!cp2)
		return -ENOMEM;
	err = f2fs_dev_read(sb->dev, start, cp1, 1);
	if (err)
		goto out;
	err = -EINVAL;
	if (!cp_crc_ok(cp1))
		goto out;
	total = get_le32(cp1 + CP_PACK_TOTAL_BLOCK_COUNT);
	if (total < 2 || total > sb->blocks_per_seg)
		goto out;
	err = f2fs_dev_read(sb->dev, start + total - 1, cp2, 1);
	if (err)
		goto out;
	err = -EINVAL;
	if (!cp_crc_ok(cp2) || get_le64(cp1 + CP_CHECKPOINT_VER) != get_le64(cp2 + CP_CHECKPOINT_VER))
		goto out;
	*ver = get_le64(cp1 + CP_CHECKPOINT_VER);
	err = 0;
out:
	free(cp2);
	return err;
}

/* The kernel's f2fs_sanity_check_ckpt, as far as the read path relies on it. */
static int check_ckpt(struct f2fs_sb *sb)
{
	const uint8_t *cp = sb->ckpt;
	uint32_t sit_size = get_le32(cp + CP_SIT_VER_BITMAP_BYTESIZE);
	uint32_t nat_size = get_le32(cp + CP_NAT_VER_BITMAP_BYTESIZE);
	uint32_t want_sit = ((sb->segment_count_sit / 2) << sb->log_blocks_per_seg) / 8;
	uint32_t want_nat = ((sb->segment_count_nat / 2) << sb->log_blocks_per_seg) / 8;
	uint32_t start_sum = get_le32(cp + CP_PACK_START_SUM);
	uint32_t total = get_le32(cp + CP_PACK_TOTAL_BLOCK_COUNT);
	uint32_t crc_off = get_le32(cp + CP_CHECKSUM_OFFSET);

	if (sit_size != want_sit || nat_size != want_nat)
		return f2fs_corrupted(sb, "checkpoint: wrong NAT/SIT bitmap size (%u/%u, expected %u/%u)",
				      nat_size, sit_size, want_nat, want_sit);
	if (get_le64(cp + CP_USER_BLOCK_COUNT) > sb->block_count ||
	    get_le64(cp + CP_VALID_BLOCK_COUNT) > get_le64(cp + CP_USER_BLOCK_COUNT))
		return f2fs_corrupted(sb, "checkpoint: block counts are inconsistent");
	if (start_sum < 1 + sb->cp_payload || start_sum >= total)
		return f2fs_corrupted(sb, "checkpoint: bad summary start %u", start_sum);
	for (int i = 0; i < NR_CURSEG_NODE_TYPE; i++) {
		uint32_t nseg = get_le32(cp + CP_CUR_NODE_SEGNO + 4 * i);
		uint32_t dseg = get_le32(cp + CP_CUR_DATA_SEGNO + 4 * i);

		if (nseg >= sb->segment_count_main || dseg >= sb->segment_count_main ||
		    get_le16(cp + CP_CUR_NODE_BLKOFF + 2 * i) > sb->blocks_per_seg ||
		    get_le16(cp + CP_CUR_DATA_BLKOFF + 2 * i) > sb->blocks_per_seg)
			return f2fs_corrupted(sb, "checkpoint: current segment %d out of range", i);
		for (int j = 0; j < i; j++) {
			if (nseg == get_le32(cp + CP_CUR_NODE_SEGNO + 4 * j) ||
			    dseg == get_le32(cp + CP_CUR_DATA_SEGNO + 4 * j))
				return f2fs_corrupted(sb, "checkpoint: two current segments share "
						      "segment %u", nseg);
		}
		for (int j = 0; j < NR_CURSEG_DATA_TYPE; j++)
			if (nseg == get_le32(cp + CP_CUR_DATA_SEGNO + 4 * j))
				return f2fs_corrupted(sb, "checkpoint: node and data logs share "
						      "segment %u", nseg);
	}

	/* Locate the version bitmaps (__bitmap_ptr). */
	if (f2fs_cp_flag(sb, CP_LARGE_NAT_BITMAP_FLAG)) {
		if (crc_off != CP_MIN_CHKSUM_OFFSET ||
		    CP_SIT_NAT_VERSION_BITMAP + 4 + (uint64_t)nat_size + sit_size > F2FS_BLKSIZE)
			return f2fs_corrupted(sb, "checkpoint: large NAT bitmap does not fit");
		sb->nat_bitmap = cp + CP_SIT_NAT_VERSION_BITMAP + 4;
		sb->sit_bitmap = sb->nat_bitmap + nat_size;
	} else if (sb->cp_payload) {
		if (CP_SIT_NAT_VERSION_BITMAP + (uint64_t)nat_size > crc_off ||
		    sit_size > (uint64_t)sb->cp_payload * F2FS_BLKSIZE)
			return f2fs_corrupted(sb, "checkpoint: bitmaps do not fit the payload");
		sb->nat_bitmap = cp + CP_SIT_NAT_VERSION_BITMAP;
		sb->sit_bitmap = cp + F2FS_BLKSIZE;
	} else {
		if (CP_SIT_NAT_VERSION_BITMAP + (uint64_t)nat_size + sit_size > crc_off)
			return f2fs_corrupted(sb, "checkpoint: bitmaps overlap the checksum");
		sb->sit_bitmap = cp + CP_SIT_NAT_VERSION_BITMAP;
		sb->nat_bitmap = sb->sit_bitmap + sit_size;
	}
	sb->nat_bitmap_size = nat_size;
	sb->sit_bitmap_size = sit_size;
	return 0;
}

int f2fs_get_valid_checkpoint(struct f2fs_sb *sb)
{
	uint8_t *cp[2];
	uint64_t ver[2] = { 0, 0 };
	int ok[2], pick, err;

	cp[0] = f2fs_alloc_blocks(1);
	cp[1] = f2fs_alloc_blocks(1);
	if (!cp[0] || !cp[1]) {
		free(cp[0]);
		free(cp[1]);
		return -ENOMEM;
	}
	ok[0] = validate_pack(sb, sb->cp_blkaddr, cp[0], &ver[0]) == 0;
	ok[1] = validate_pack(sb, sb->cp_blkaddr + sb->blocks_per_seg, cp[1], &ver[1]) == 0;
	if (!ok[0] && !ok[1]) {
		free(cp[0]);
		free(cp[1]);
		f2fs_err(sb, "checkpoint: neither checkpoint pack is valid (bad CRC or version)");
		return -EINVAL;
	}
	/* newer version wins; versions compare as the kernel's ver_after */
	if (ok[0] && ok[1])
		pick = (int64_t)(ver[1] - ver[0]) > 0 ? 1 : 0;
	else
		pick = ok[0] ? 0 : 1;
	/* what a crash during a checkpoint leaves: not worth a warning */
	if (!(ok[0] && ok[1]))
		f2fs_info(sb, "checkpoint: pack %d is invalid, using pack %d", 2 - pick, pick + 1);

	sb->cur_cp_pack = (uint32_t)pick + 1;
	sb->cp_ver = ver[pick];
	/* keep the cp block and its payload (SIT bitmap overflow) together */
	sb->ckpt = f2fs_alloc_blocks(1 + sb->cp_payload);
	if (!sb->ckpt) {
		free(cp[0]);
		free(cp[1]);
		return -ENOMEM;
	}
	memcpy(sb->ckpt, cp[pick], F2FS_BLKSIZE);
	free(cp[0]);
	free(cp[1]);
	if (sb->cp_payload) {
		err = f2fs_dev_read(sb->dev, sb->cp_blkaddr + (uint32_t)pick * sb->blocks_per_seg + 1,
				    sb->ckpt + F2FS_BLKSIZE, sb->cp_payload);
		if (err)
			return err;
	}
	sb->ckpt_flags = get_le32(sb->ckpt + CP_CKPT_FLAGS);
	sb->user_block_count = get_le64(sb->ckpt + CP_USER_BLOCK_COUNT);
	sb->rsvd_segments = get_le32(sb->ckpt + CP_RSVD_SEGMENT_COUNT);
	sb->ovp_segments = get_le32(sb->ckpt + CP_OVERPROV_SEGMENT_COUNT);
	return check_ckpt(sb);
}

int f2fs_read_orphans(struct f2fs_sb *sb)
{
	uint32_t start, nblocks, total = 0;
	uint8_t *blk;
	int err = 0;

	if (!f2fs_cp_flag(sb, CP_ORPHAN_PRESENT_FLAG))
		return 0;
	start = f2fs_cp_pack_start(sb) + 1 + sb->cp_payload;
	nblocks = get_le32(sb->ckpt + CP_PACK_START_SUM) - 1 - sb->cp_payload;
	blk = f2fs_alloc_blocks(1);
	if (!blk)
		return -ENOMEM;
	sb->orphan_cap = nblocks * F2FS_ORPHANS_PER_BLOCK + 1;
	sb->orphans = calloc(sb->orphan_cap, sizeof(uint32_t));
	if (!sb->orphans) {
		free(blk);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < nblocks; i++) {
		uint32_t n;

		err = f2fs_dev_read(sb->dev, start + i, blk, 1);
		if (err)
			break;
		n = get_le32(blk + ORPHAN_ENTRY_COUNT);
		if (n > F2FS_ORPHANS_PER_BLOCK) {
			err = f2fs_corrupted(sb, "checkpoint: orphan block %u claims %u entries", i, n);
			break;
		}
		for (uint32_t j = 0; j < n; j++) {
			uint32_t ino = get_le32(blk + 4 * j);

			if (ino < 3 || ino >= sb->max_nid) {
				err = f2fs_corrupted(sb, "checkpoint: orphan inode %u out of range", ino);
				goto out;
			}
			sb->orphans[total++] = ino;
		}
	}
out:
	sb->nr_orphans = total;
	free(blk);
	return err;
}

/* ======================= writing a checkpoint ======================= */

/* The pack's last block, durable when this returns: the commit. */
static int write_commit_block(struct f2fs_sb *sb, uint32_t blkaddr, const void *buf)
{
	struct iovec iov = { (void *)buf, F2FS_BLKSIZE };
	struct f2fs_bio bio = {
		.op = F2FS_BIO_WRITE, .blkaddr = blkaddr, .nr_blocks = 1, .iov = &iov, .iovcnt = 1,
		.fua = true,
	};

	return f2fs_submit_bio(sb->dev, &bio);
}

static void cp_set_crc(uint8_t *cp)
{
	uint32_t off = get_le32(cp + CP_CHECKSUM_OFFSET);
	uint32_t crc = f2fs_chksum(cp, off);

	if (off < CP_CHKSUM_OFFSET_DEFAULT) {
		put_le32(cp + off, 0);
		crc = f2fs_crc32(crc, cp + off + 4, F2FS_BLKSIZE - off - 4);
	}
	put_le32(cp + off, crc);
}

/*
 * do_checkpoint: with every data and node block already written, flush
 * the NAT and SIT changes and write a new pack into the other checkpoint
 * slot.  The pack's last block is written only after the rest is stable,
 * so a crash leaves either the old checkpoint or the new one.
 */
int f2fs_write_checkpoint(struct f2fs_sb *sb, bool umount)
{
	uint32_t payload = sb->cp_payload;
	uint32_t orphan_blocks = (sb->nr_orphans + F2FS_ORPHANS_PER_BLOCK - 1) / F2FS_ORPHANS_PER_BLOCK;
	uint32_t data_sums = NR_CURSEG_DATA_TYPE, node_sums = umount ? NR_CURSEG_NODE_TYPE : 0;
	uint32_t total = 2 + payload + orphan_blocks + data_sums + node_sums;
	uint32_t new_pack = sb->cur_cp_pack == 1 ? 2 : 1;
	uint32_t start = sb->cp_blkaddr + (new_pack - 1) * sb->blocks_per_seg;
	uint8_t *cp, *pack = NULL;
	uint32_t flags, next_free_nid = sb->root_ino, free_segs = 0, blkaddr, b;
	int err;

	if (total > sb->blocks_per_seg)
		return -ENOSPC;
	f2fs_stat_add(sb, checkpoints, 1);
	cp = f2fs_alloc_blocks(1 + payload);
	if (!cp) {
		err = -ENOMEM;
		goto out;
	}
	memcpy(cp, sb->ckpt, (size_t)(1 + payload) * F2FS_BLKSIZE);

	/* the bitmaps keep their place: flip bits in the copy */
	err = f2fs_flush_nat_entries(sb, cp + (sb->nat_bitmap - sb->ckpt), &next_free_nid);
	if (err)
		goto out;
	err = f2fs_flush_sit_entries(sb, cp + (sb->sit_bitmap - sb->ckpt));
	if (!err)
		err = f2fs_flush_ssa(sb);
	if (err)
		goto out;

	pthread_mutex_lock(&sb->sm->lock);
	for (uint32_t s = 0; s < sb->segment_count_main; s++) {
		bool cur = false;

		for (int t = 0; t < NR_CURSEG_TYPE; t++)
			cur |= sb->curseg[t].segno == s;
		free_segs += !cur && !sb->sm->sentries[s].valid_blocks;
	}
	put_le64(cp + CP_CHECKPOINT_VER, sb->cp_ver + 1);
	put_le64(cp + CP_VALID_BLOCK_COUNT, sb->sm->valid_blocks);
	put_le32(cp + CP_FREE_SEGMENT_COUNT, free_segs);
	for (int t = 0; t < NR_CURSEG_TYPE; t++) {
		const struct f2fs_curseg *cs = &sb->curseg[t];

		if (t < NR_CURSEG_DATA_TYPE) {
			put_le32(cp + CP_CUR_DATA_SEGNO + 4 * t, cs->segno);
			put_le16(cp + CP_CUR_DATA_BLKOFF + 2 * t, cs->blkoff);
		} else {
			put_le32(cp + CP_CUR_NODE_SEGNO + 4 * (t - NR_CURSEG_DATA_TYPE), cs->segno);
			put_le16(cp + CP_CUR_NODE_BLKOFF + 2 * (t - NR_CURSEG_DATA_TYPE), cs->blkoff);
		}
		cp[CP_ALLOC_TYPE + t] = cs->alloc_type;
	}
	put_le64(cp + CP_ELAPSED_TIME, f2fs_segment_mtime(sb));
	pthread_mutex_unlock(&sb->sm->lock);

	put_le32(cp + CP_VALID_NODE_COUNT, sb->nm->valid_node_count);
	put_le32(cp + CP_VALID_INODE_COUNT, sb->nm->valid_inode_count);
	put_le32(cp + CP_NEXT_FREE_NID, next_free_nid);
	put_le32(cp + CP_PACK_TOTAL_BLOCK_COUNT, total);
	put_le32(cp + CP_PACK_START_SUM, 1 + payload + orphan_blocks);

	flags = sb->ckpt_flags;
	/* we keep no NAT bits and write full summaries; recovery checks the crc */
	flags &= ~(CP_NAT_BITS_FLAG | CP_COMPACT_SUM_FLAG | CP_UMOUNT_FLAG | CP_ORPHAN_PRESENT_FLAG |
		   CP_NOCRC_RECOVERY_FLAG | CP_TRIMMED_FLAG);
	flags |= CP_CRC_RECOVERY_FLAG;
	if (umount)
		flags |= CP_UMOUNT_FLAG;
	if (orphan_blocks)
		flags |= CP_ORPHAN_PRESENT_FLAG;
	if (atomic_load(&sb->need_fsck))
		flags |= CP_FSCK_FLAG;
	/* update_ckpt_flags: quota files that fell behind wait for fsck */
	if (sb->quota.need_repair)
		flags |= CP_QUOTA_NEED_FSCK_FLAG;
	else
		flags &= ~CP_QUOTA_NEED_FSCK_FLAG;
	put_le32(cp + CP_CKPT_FLAGS, flags);
	cp_set_crc(cp);

	/*
	 * cp block, payload, orphans, data summaries, node summaries as one
	 * request (the kernel's meta pages merge into one bio), then the cp
	 * block again once they are stable
	 */
	pack = f2fs_alloc_blocks(total - 1);
	if (!pack) {
		err = -ENOMEM;
		goto out;
	}
	memset(pack, 0, (size_t)(total - 1) * F2FS_BLKSIZE);
	memcpy(pack, cp, (size_t)(1 + payload) * F2FS_BLKSIZE);
	b = 1 + payload;
	for (uint32_t o = 0; o < orphan_blocks; o++, b++) {
		uint8_t *ob = pack + (size_t)b * F2FS_BLKSIZE;
		uint32_t first = o * F2FS_ORPHANS_PER_BLOCK;
		uint32_t n = F2FS_MIN(sb->nr_orphans - first, (uint32_t)F2FS_ORPHANS_PER_BLOCK);

		for (uint32_t i = 0; i < n; i++)
			put_le32(ob + 4 * i, sb->orphans[first + i]);
		put_le16(ob + ORPHAN_BLK_ADDR, (uint16_t)(o + 1));
		put_le16(ob + ORPHAN_BLK_COUNT, (uint16_t)orphan_blocks);
		put_le32(ob + ORPHAN_ENTRY_COUNT, n);
	}
	for (int t = 0; t < NR_CURSEG_DATA_TYPE; t++, b++)
		memcpy(pack + (size_t)b * F2FS_BLKSIZE, sb->curseg[t].sum, F2FS_BLKSIZE);
	for (int t = CURSEG_HOT_NODE; umount && t < NR_CURSEG_TYPE; t++, b++)
		memcpy(pack + (size_t)b * F2FS_BLKSIZE, sb->curseg[t].sum, F2FS_BLKSIZE);
	{
		struct iovec iov = { pack, (size_t)b * F2FS_BLKSIZE };
		struct f2fs_bio bio = {
			.op = F2FS_BIO_WRITE, .blkaddr = start, .nr_blocks = b, .iov = &iov,
			.iovcnt = 1,
		};

		err = f2fs_submit_bio(sb->dev, &bio);
	}
	blkaddr = start + b;
	/* everything before the commit block is durable first (the kernel's
	 * PREFLUSH), then the commit block itself (its FUA: with -o direct on a
	 * block device one FUA write, else the write and a flush) */
	if (!err)
		err = f2fs_dev_flush(sb->dev);
	if (!err)
		err = write_commit_block(sb, blkaddr, cp);
	if (err) {
		f2fs_err(sb, "checkpoint: writing pack %u failed: %s", new_pack, strerror(-err));
		goto out;
	}

	/*
	 * The new pack is the truth now.  Copied over the old one, not swapped
	 * for it: sb->nat_bitmap and sb->sit_bitmap point into it, and a NAT
	 * lookup of an uncached nid reads the bitmap without this checkpoint's
	 * locks.  Whichever bit it sees names a valid copy: the new NAT blocks
	 * are on the device, and the old ones stay as they were until a later
	 * checkpoint.
	 */
	memcpy(sb->ckpt, cp, (size_t)(1 + payload) * F2FS_BLKSIZE);
	sb->cur_cp_pack = new_pack;
	sb->cp_ver++;
	sb->ckpt_flags = flags;
	f2fs_sit_checkpoint_done(sb);
out:
	free(cp);
	free(pack);
	return err;
}

static int sync_fs_locked(struct f2fs_sb *sb, bool umount)
{
	int err;

	f2fs_lock_all(sb);
	/* checkpoints stopped while this waited (a failed fsync, a device error) */
	if (f2fs_cp_error(sb)) {
		f2fs_unlock_all(sb);
		return -EIO;
	}
	/* block_operations: the quota files first, their nodes go with the rest */
	err = f2fs_quota_sync(sb);
	if (!err)
		err = f2fs_write_dirty_nodes(sb);
	if (!err)
		err = f2fs_write_checkpoint(sb, umount);
	if (err)
		f2fs_stop_checkpoint(sb, err, "checkpoint");
	f2fs_unlock_all(sb);
	return err;
}

/*
 * sync, syncfs, unmount, the periodic checkpoint and fsyncs that need a
 * checkpoint: write every dirty node, then a pack.  Concurrent callers
 * share checkpoints, as the kernel's checkpoint_merge does: each takes a
 * ticket; the first finding no checkpoint running leads one that covers
 * every ticket taken so far (it takes cp_rwsem exclusively after all their
 * changes, so it holds them), and callers that came while it ran wait for
 * the next.  Unmount writes its own.
 */
int f2fs_sync_fs(struct f2fs_sb *sb, bool umount)
{
	uint64_t ticket;
	int err;

	if (!f2fs_writable(sb))
		return 0;
	if (umount)
		return sync_fs_locked(sb, true);
	pthread_mutex_lock(&sb->sync_lock);
	ticket = ++sb->sync_req;
	while (sb->sync_done < ticket) {
		uint64_t cover;

		if (sb->sync_running) {
			pthread_cond_wait(&sb->sync_cond, &sb->sync_lock);
			continue;
		}
		cover = sb->sync_req;
		sb->sync_running = true;
		pthread_mutex_unlock(&sb->sync_lock);
		err = sync_fs_locked(sb, false);
		pthread_mutex_lock(&sb->sync_lock);
		f2fs_stat_add(sb, sync_merged, cover - sb->sync_done - 1);
		sb->sync_running = false;
		sb->sync_done = cover;
		sb->sync_err = err;
		pthread_cond_broadcast(&sb->sync_cond);
	}
	err = sb->sync_err;
	pthread_mutex_unlock(&sb->sync_lock);
	return err;
}
