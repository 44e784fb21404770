// SPDX-License-Identifier: GPL-2.0
/*
 * The f2fs ioctls of the kernel's file.c (f2fs_ioctl) that f2fs_io and
 * Android use: shutdown, checkpoint, cleaning, pinned files, defragment,
 * move range, features, the volume label and FITRIM; and what a user
 * would otherwise read from FIEMAP and /sys/kernel/debug/f2fs/status.
 * Capabilities are checked by the caller (fuse/f2fs_ioctl.c) with the
 * credentials of the request.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "f2fs.h"

#define CHUNK_BLOCKS 256	/* data copied per read/write round: 1 MiB */

/* ---------------------------------------------------------------- shutdown */

/*
 * f2fs_ioc_shutdown.  Every mode but NEED_FSCK ends in f2fs_stop_checkpoint:
 * from then on no change, checkpoint or write reaches the device.  All
 * modes wait for the changes in flight (cp_rwsem), so a shutdown lands
 * between operations: a clean fault, whose state the next mount recovers.
 */
int f2fs_shutdown(struct f2fs_sb *sb, uint32_t mode)
{
	int err = 0;

	if (mode > F2FS_SHUTDOWN_NEED_FSCK)
		return -EINVAL;
	if (f2fs_cp_error(sb))
		return -EIO;
	if (!f2fs_writable(sb)) {
		/* a read-only mount has nothing to write: it only stops */
		if (mode != F2FS_SHUTDOWN_NEED_FSCK)
			atomic_store(&sb->cp_error, true);
		return 0;
	}
	if (mode == F2FS_SHUTDOWN_NEED_FSCK) {
		atomic_store(&sb->need_fsck, true);
		f2fs_sync_data(sb);
		return f2fs_sync_fs(sb, false);
	}
	/* a full sync writes the file data too; the other modes lose it, as
	 * the kernel's do with dirty pages */
	if (mode == F2FS_SHUTDOWN_FULLSYNC)
		f2fs_sync_data(sb);
	f2fs_lock_all(sb);
	if (mode == F2FS_SHUTDOWN_FULLSYNC || mode == F2FS_SHUTDOWN_METASYNC) {
		/*
		 * METASYNC is the kernel's "checkpoint only" (f2fs_sync_fs):
		 * names, inodes and sizes are committed, dirty file data is
		 * not, so a file written and not synced reads as zeros.
		 */
		err = f2fs_write_dirty_nodes(sb);
		if (!err)
			err = f2fs_write_checkpoint(sb, false);
	} else if (mode == F2FS_SHUTDOWN_METAFLUSH) {
		/* what is written is made durable; no new checkpoint */
		err = f2fs_dev_flush(sb->dev);
	}
	atomic_store(&sb->cp_error, true);
	f2fs_dev_stop_writes(sb->dev);
	f2fs_unlock_all(sb);
	f2fs_drop_data(sb);
	f2fs_warn(sb, "shut down (mode %u): changes fail with EIO until the next mount", mode);
	return err;
}

bool f2fs_is_shut_down(const struct f2fs_sb *sb)
{
	return f2fs_cp_error(sb);
}

/* ---------------------------------------------------------------- cleaning */

int f2fs_ioc_gc(struct f2fs_sb *sb, bool sync)
{
	uint32_t freed = 0;
	int err = f2fs_write_denied(sb);

	if (err)
		return err;
	if (sync)
		f2fs_lock_all(sb);
	else if (!f2fs_trylock_all(sb))
		return -EBUSY;
	err = f2fs_gc_locked(sb, F2FS_GC_GREEDY, 1, &freed);
	f2fs_unlock_all(sb);
	if (!err && !freed)
		err = -ENODATA;
	return err;
}

int f2fs_ioc_gc_range(struct f2fs_sb *sb, bool sync, uint64_t start, uint64_t len)
{
	uint64_t end = start + len;
	uint32_t blks_per_sec = sb->blocks_per_seg * sb->segs_per_sec;
	int err = f2fs_write_denied(sb);

	if (err)
		return err;
	if (end < start || start < sb->main_blkaddr || end >= sb->block_count ||
	    end > f2fs_main_end_blkaddr(sb))
		return -EINVAL;
	for (uint64_t b = start; b <= end && b < f2fs_main_end_blkaddr(sb); b += blks_per_sec) {
		uint32_t sec = (uint32_t)((b - sb->main_blkaddr) / blks_per_sec);

		if (sync)
			f2fs_lock_all(sb);
		else if (!f2fs_trylock_all(sb))
			return -EAGAIN;
		err = f2fs_gc_section_locked(sb, sec);
		f2fs_unlock_all(sb);
		/* a free section needs no cleaning; a log's own section cannot have it */
		if (err == -ENODATA || err == -EBUSY)
			err = 0;
		if (err)
			return err;
		/* from the section's start on, so the next round is the next section */
		b -= (b - sb->main_blkaddr) % blks_per_sec;
	}
	return 0;
}

/* ---------------------------------------------------------------- superblock */

uint32_t f2fs_get_features(const struct f2fs_sb *sb)
{
	/* f2fs_ioc_get_features: atomic writes need no feature on disk */
	return sb->feature | F2FS_FEATURE_ATOMIC_WRITE;
}

/* UTF-16LE volume_name to UTF-8; unpaired surrogates become U+FFFD. */
int f2fs_get_label(struct f2fs_sb *sb, char *buf, size_t size)
{
	const uint8_t *vn = sb->raw_sb + SB_VOLUME_NAME;
	size_t o = 0;

	if (size < 4)
		return -EINVAL;
	memset(buf, 0, size);
	for (size_t i = 0; i < MAX_VOLUME_NAME; i++) {
		uint32_t c = get_le16(vn + 2 * i);
		uint8_t u[4];
		size_t n;

		if (!c)
			break;
		if (c >= 0xd800 && c < 0xdc00 && i + 1 < MAX_VOLUME_NAME &&
		    get_le16(vn + 2 * i + 2) >= 0xdc00 && get_le16(vn + 2 * i + 2) < 0xe000) {
			c = 0x10000 + ((c - 0xd800) << 10) + (get_le16(vn + 2 * i + 2) - 0xdc00);
			i++;
		} else if (c >= 0xd800 && c < 0xe000) {
			c = 0xfffd;
		}
		if (c < 0x80) {
			u[0] = (uint8_t)c;
			n = 1;
		} else if (c < 0x800) {
			u[0] = (uint8_t)(0xc0 | c >> 6);
			u[1] = (uint8_t)(0x80 | (c & 0x3f));
			n = 2;
		} else if (c < 0x10000) {
			u[0] = (uint8_t)(0xe0 | c >> 12);
			u[1] = (uint8_t)(0x80 | ((c >> 6) & 0x3f));
			u[2] = (uint8_t)(0x80 | (c & 0x3f));
			n = 3;
		} else {
			u[0] = (uint8_t)(0xf0 | c >> 18);
			u[1] = (uint8_t)(0x80 | ((c >> 12) & 0x3f));
			u[2] = (uint8_t)(0x80 | ((c >> 6) & 0x3f));
			u[3] = (uint8_t)(0x80 | (c & 0x3f));
			n = 4;
		}
		if (o + n >= size)
			break;	/* FSLABEL_MAX: the rest does not fit, as the kernel cuts it */
		memcpy(buf + o, u, n);
		o += n;
	}
	return 0;
}

/* One UTF-8 sequence at s (len bytes left): the code point, or -1 if malformed. */
static int32_t utf8_next(const uint8_t *s, size_t len, size_t *used)
{
	uint32_t c = s[0];
	size_t n = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 :
		   (c & 0xf8) == 0xf0 ? 4 : 0;
	static const uint32_t min[5] = { 0, 0, 0x80, 0x800, 0x10000 };

	if (!n || n > len)
		return -1;
	if (n > 1)
		c &= 0x3fu >> (n - 1);
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return -1;
		c = c << 6 | (s[i] & 0x3f);
	}
	if (c < min[n] || c > 0x10ffff || (c >= 0xd800 && c < 0xe000))
		return -1;
	*used = n;
	return (int32_t)c;
}

/*
 * f2fs_ioc_setfslabel: the label as UTF-16LE in volume_name, then both
 * superblock copies rewritten (f2fs_commit_super), each with its
 * checksum where the feature asks for one.
 */
int f2fs_set_label(struct f2fs_sb *sb, const char *label, size_t len)
{
	uint8_t vn[MAX_VOLUME_NAME * 2];
	uint8_t *blk;
	size_t o = 0;
	int err = f2fs_write_denied(sb);

	if (err)
		return err;
	memset(vn, 0, sizeof(vn));
	for (size_t i = 0; i < len && label[i];) {
		size_t used = 0;
		int32_t c = utf8_next((const uint8_t *)label + i, len - i, &used);

		if (c < 0)
			return -EINVAL;
		if (o + (c >= 0x10000 ? 2 : 1) > MAX_VOLUME_NAME)
			return -EINVAL;
		if (c >= 0x10000) {
			put_le16(vn + 2 * o++, (uint16_t)(0xd800 + ((c - 0x10000) >> 10)));
			put_le16(vn + 2 * o++, (uint16_t)(0xdc00 + ((c - 0x10000) & 0x3ff)));
		} else {
			put_le16(vn + 2 * o++, (uint16_t)c);
		}
		i += used;
	}
	blk = f2fs_alloc_blocks(1);
	if (!blk)
		return -ENOMEM;
	f2fs_lock_all(sb);
	memcpy(sb->raw_sb + SB_VOLUME_NAME, vn, sizeof(vn));
	if (f2fs_has_feature(sb, F2FS_FEATURE_SB_CHKSUM))
		put_le32(sb->raw_sb + SB_CRC, f2fs_chksum(sb->raw_sb, SB_CRC));
	/* the backup first: a crash between the writes leaves a good copy either way */
	for (int copy = 1; copy >= 0 && !err; copy--) {
		struct iovec iov = { blk, F2FS_BLKSIZE };
		struct f2fs_bio bio = { .op = F2FS_BIO_WRITE, .blkaddr = (uint32_t)copy,
					.nr_blocks = 1, .iov = &iov, .iovcnt = 1 };

		err = f2fs_dev_read(sb->dev, (uint32_t)copy, blk, 1);
		if (err)
			break;
		memcpy(blk + F2FS_SUPER_OFFSET, sb->raw_sb, F2FS_SB_SIZE);
		err = f2fs_submit_bio(sb->dev, &bio);
		if (!err)
			err = f2fs_dev_flush(sb->dev);
	}
	f2fs_unlock_all(sb);
	free(blk);
	return err;
}

/*
 * FITRIM (f2fs_trim_fs): a checkpoint first, so that the segments emptied
 * since the last one are free, then the free segments in range are
 * discarded.  Blocks freed inside dirty segments are not.
 */
int f2fs_trim_fs(struct f2fs_sb *sb, uint64_t start, uint64_t len, uint64_t minlen,
		 uint64_t *trimmed)
{
	uint64_t sblk = start / F2FS_BLKSIZE, eblk, blocks = 0;
	uint32_t sseg, eseg;
	int err = f2fs_write_denied(sb);

	*trimmed = 0;
	if (err)
		return err;
	if (sblk >= sb->block_count || len < F2FS_BLKSIZE)
		return -EINVAL;
	if (atomic_load(&sb->need_fsck)) {
		f2fs_warn(sb, "FITRIM: the file system needs fsck first");
		return -EUCLEAN;
	}
	eblk = len / F2FS_BLKSIZE > sb->block_count - sblk ? sb->block_count : sblk + len / F2FS_BLKSIZE;
	if (eblk <= sb->main_blkaddr)
		return 0;
	sblk = F2FS_MAX(sblk, (uint64_t)sb->main_blkaddr);
	eblk = F2FS_MIN(eblk, (uint64_t)f2fs_main_end_blkaddr(sb));
	/* whole segments only: round the start up and the end down */
	sseg = (uint32_t)((sblk - sb->main_blkaddr + sb->blocks_per_seg - 1) >> sb->log_blocks_per_seg);
	eseg = (uint32_t)((eblk - sb->main_blkaddr) >> sb->log_blocks_per_seg);
	f2fs_lock_all(sb);
	err = f2fs_write_dirty_nodes(sb);
	if (!err)
		err = f2fs_write_checkpoint(sb, false);
	if (!err && sseg < eseg)
		err = f2fs_trim_free_segments(sb, sseg, eseg, minlen / F2FS_BLKSIZE, &blocks);
	f2fs_unlock_all(sb);
	*trimmed = blocks * F2FS_BLKSIZE;
	return err;
}

/* ---------------------------------------------------------------- pinned files */

int f2fs_get_pin_file(struct f2fs_sb *sb, uint32_t ino, bool *pinned, uint32_t *failures)
{
	struct f2fs_inode *inode;
	int err = f2fs_iget_req(sb, ino, &inode);

	if (err)
		return err;
	pthread_rwlock_rdlock(&inode->lock);
	*pinned = S_ISREG(inode->mode) && (inode->inline_flags & F2FS_PIN_FILE);
	*failures = *pinned ? get_le16(inode->node + I_CURRENT_DEPTH) : 0;
	pthread_rwlock_unlock(&inode->lock);
	f2fs_iput(sb, inode);
	return 0;
}

/*
 * f2fs_ioc_set_pin_file: a pinned file keeps its blocks where they are
 * (cleaning passes them by, see gc.c), so that a program may hand their
 * addresses to the device directly (Android's swap and OTA files).  Its
 * data leaves the inode first; a compressed file cannot be pinned.
 */
int f2fs_set_pin_file(struct f2fs_sb *sb, uint32_t ino, bool pin)
{
	struct f2fs_inode *inode;
	int err = f2fs_begin_op(sb, ino, 0, &inode);

	if (err)
		return err;
	/* an atomic write's blocks are about to move */
	if (!S_ISREG(inode->mode) || inode->cow) {
		err = -EINVAL;
		goto out;
	}
	if (!pin) {
		inode->inline_flags &= (uint8_t)~F2FS_PIN_FILE;
		put_le16(inode->node + I_CURRENT_DEPTH, 0);
	} else if (f2fs_is_compressed(inode)) {
		err = -EOPNOTSUPP;
	} else if (get_le16(inode->node + I_CURRENT_DEPTH) > F2FS_GC_PIN_FILE_THRESHOLD) {
		err = -EAGAIN;	/* f2fs_pin_file_control: cleaning gave up on it */
	} else {
		if (inode->inline_flags & F2FS_INLINE_DATA)
			err = f2fs_convert_inline_inode(sb, inode);
		if (!err)
			inode->inline_flags |= F2FS_PIN_FILE;
	}
	if (!err)
		err = f2fs_mark_inode_dirty(sb, inode);
	if (!err)
		err = pin ? get_le16(inode->node + I_CURRENT_DEPTH) : 0;
out:
	f2fs_end_op(sb, inode);
	return err;
}

/* ---------------------------------------------------------------- moving data */

/*
 * Rewrite blocks [lblk, lblk + n) of dst from src's blocks [from, from + n)
 * (dst may be src): holes stay holes, reserved blocks stay reserved, data
 * is read (decrypted) and written out of place, so it lands back to back
 * in the data log.  Both inodes are write-locked by the caller.
 */
static int copy_blocks(struct f2fs_sb *sb, struct f2fs_inode *src, uint64_t from,
		       struct f2fs_inode *dst, uint64_t lblk, uint64_t n, uint64_t *copied)
{
	uint8_t *buf = f2fs_alloc_blocks(CHUNK_BLOCKS);
	uint64_t done = 0;
	int err = 0;

	if (!buf)
		return -ENOMEM;
	while (!err && done < n) {
		uint32_t pblk, run;
		uint64_t want = F2FS_MIN(n - done, (uint64_t)CHUNK_BLOCKS);

		err = f2fs_map_blocks(sb, src, (uint32_t)(from + done), (uint32_t)want, &pblk, &run);
		if (err)
			break;
		if (!run)
			run = 1;
		if (pblk == NEW_ADDR) {
			err = f2fs_reserve_blocks(sb, dst, lblk + done, lblk + done + run);
		} else if (pblk != NULL_ADDR) {
			size_t bytes = (size_t)run * F2FS_BLKSIZE, written = 0;
			ssize_t r;

			/* f2fs_file_read stops at i_size: the rest of the block reads as zeros */
			memset(buf, 0, bytes);
			r = f2fs_file_read(sb, src, buf, bytes, (from + done) * F2FS_BLKSIZE);
			err = r < 0 ? (int)r : f2fs_write_blocks(sb, dst, buf, bytes,
								 (lblk + done) * F2FS_BLKSIZE, &written);
			if (!err && written != bytes)
				err = -ENOSPC;
			if (!err && copied)
				*copied += run;
		}
		done += run;
	}
	free(buf);
	return err;
}

static void touch_mtime(struct f2fs_inode *inode)
{
	struct f2fs_timespec now;

	f2fs_now(&now);
	f2fs_inode_set_time(inode, F2FS_TIME_MTIME, &now);
	f2fs_inode_set_time(inode, F2FS_TIME_CTIME, &now);
}

/* What moving data needs of a file: a regular file with data we may rewrite. */
static int check_movable(struct f2fs_sb *sb, struct f2fs_inode *inode)
{
	/* f2fs_defragment_range, f2fs_move_file_range: not during an atomic write */
	if (!S_ISREG(inode->mode) || inode->cow)
		return -EINVAL;
	/* verity: only handles opened for writing before it was enabled get here */
	if (f2fs_is_immutable(inode) || f2fs_is_append(inode) || f2fs_is_verity(inode))
		return -EPERM;
	if (f2fs_is_compressed(inode))
		return -EOPNOTSUPP;
	if (inode->inline_flags & F2FS_INLINE_DATA)
		return f2fs_convert_inline_inode(sb, inode);
	return 0;
}

/*
 * f2fs_defragment_range: if the mapped blocks of the range are not one
 * physical run, rewrite them all, so they come back contiguous from the
 * data log.  Nothing happens to a range already in one piece.
 */
int f2fs_defragment(struct f2fs_sb *sb, uint32_t ino, uint64_t start, uint64_t *len)
{
	struct f2fs_inode *inode;
	uint64_t sblk = start / F2FS_BLKSIZE, eblk, mapped = 0, moved = 0;
	uint32_t prev_end = NULL_ADDR;
	bool fragmented = false;
	int err;

	if (start + *len < start)
		return -EINVAL;
	err = f2fs_begin_op(sb, ino, F2FS_OP_BALANCE, &inode);
	if (err)
		return err;
	err = check_movable(sb, inode);
	if (!err && (inode->inline_flags & F2FS_PIN_FILE))
		err = -EINVAL;
	if (!err)
		err = f2fs_require_key(sb, inode);
	if (err)
		goto out;
	eblk = F2FS_MIN((start + *len + F2FS_BLKSIZE - 1) / F2FS_BLKSIZE,
			(inode->size + F2FS_BLKSIZE - 1) / F2FS_BLKSIZE);
	for (uint64_t b = sblk; b < eblk && !err;) {
		uint32_t pblk, run;

		err = f2fs_map_blocks(sb, inode, (uint32_t)b, (uint32_t)F2FS_MIN(eblk - b, 1u << 20),
				      &pblk, &run);
		if (err || !run)
			break;
		if (pblk != NULL_ADDR && pblk != NEW_ADDR) {
			if (prev_end != NULL_ADDR && pblk != prev_end)
				fragmented = true;
			prev_end = pblk + run;
			mapped += run;
		}
		b += run;
	}
	if (err || !fragmented)
		goto out;
	/* the kernel's has_not_enough_free_secs check: the rewrite needs free segments */
	if (mapped > (uint64_t)f2fs_free_segments(sb) * sb->blocks_per_seg) {
		err = -EAGAIN;
		goto out;
	}
	{
		uint64_t size = inode->size;

		err = copy_blocks(sb, inode, sblk, inode, sblk, eblk - sblk, &moved);
		inode->size = size;	/* a rewrite never changes the size */
	}
	if (!err)
		err = f2fs_mark_inode_dirty(sb, inode);
out:
	f2fs_end_op(sb, inode);
	*len = moved * F2FS_BLKSIZE;
	return err;
}

/*
 * f2fs_move_range, as a copy: the kernel swaps block pointers; here the
 * data is rewritten into dst and src's range punched, which shows the
 * same files afterwards (dst's range as src's was, holes included; a hole
 * where src had data).
 */
int f2fs_move_range(struct f2fs_sb *sb, uint32_t src_ino, uint32_t dst_ino, uint64_t pos_in,
		    uint64_t pos_out, uint64_t len, uint64_t *moved)
{
	struct f2fs_inode *src = NULL, *dst = NULL;
	uint64_t copied = 0, size;
	int err = f2fs_write_denied(sb);

	*moved = 0;
	if (err)
		return err;
	if ((pos_in | pos_out | len) % F2FS_BLKSIZE)
		return -EINVAL;
	f2fs_balance_fs(sb);
	f2fs_lock_op(sb);
	err = f2fs_iget_req(sb, src_ino, &src);
	if (!err)
		err = f2fs_iget_req(sb, dst_ino, &dst);
	if (err)
		goto unref;
	f2fs_lock_two(src, dst);
	if (src->unhashed || dst->unhashed) {
		err = -ESTALE;
		goto unlock;
	}
	/* both as the device holds them: the copy maps src's blocks */
	err = f2fs_writeback_inode(sb, src, false);
	if (!err && dst != src)
		err = f2fs_writeback_inode(sb, dst, false);
	if (err)
		goto unlock;
	if (f2fs_is_encrypted(src) || f2fs_is_encrypted(dst)) {
		err = -EOPNOTSUPP;
		goto unlock;
	}
	err = check_movable(sb, src);
	if (!err && dst != src)
		err = check_movable(sb, dst);
	if (err)
		goto unlock;
	if (!len) {
		if (pos_in > src->size) {
			err = -EINVAL;
			goto unlock;
		}
		len = (src->size - pos_in + F2FS_BLKSIZE - 1) / F2FS_BLKSIZE * F2FS_BLKSIZE;
	}
	if (pos_in + len < pos_in || pos_out + len < pos_out ||
	    pos_in + len > (src->size + F2FS_BLKSIZE - 1) / F2FS_BLKSIZE * F2FS_BLKSIZE ||
	    (dst == src && pos_in + len > pos_out && pos_out + len > pos_in) ||
	    (pos_out + len) / F2FS_BLKSIZE > f2fs_max_file_blocks(dst)) {
		err = -EINVAL;
		goto unlock;
	}
	size = dst->size;
	/* dst's range takes src's shape: punched first, then filled */
	err = f2fs_truncate_hole(sb, dst, pos_out / F2FS_BLKSIZE, (pos_out + len) / F2FS_BLKSIZE);
	if (!err)
		err = copy_blocks(sb, src, pos_in / F2FS_BLKSIZE, dst, pos_out / F2FS_BLKSIZE,
				  len / F2FS_BLKSIZE, &copied);
	if (!err)
		err = f2fs_truncate_hole(sb, src, pos_in / F2FS_BLKSIZE, (pos_in + len) / F2FS_BLKSIZE);
	dst->size = F2FS_MAX(size, F2FS_MIN(pos_out + len, pos_out + (src->size - pos_in)));
	touch_mtime(src);
	touch_mtime(dst);
	{
		int e1 = f2fs_mark_inode_dirty(sb, src);
		int e2 = dst != src ? f2fs_mark_inode_dirty(sb, dst) : 0;

		if (!err)
			err = e1 ? e1 : e2;
	}
	*moved = copied * F2FS_BLKSIZE;
unlock:
	f2fs_unlock_two(src, dst);
unref:
	if (dst)
		f2fs_iput(sb, dst);
	if (src)
		f2fs_iput(sb, src);
	f2fs_unlock_op(sb);
	return err;
}

/* ---------------------------------------------------------------- atomic writes */

/*
 * The kernel's atomic writes (f2fs_ioc_start_atomic_write, segment.c's
 * f2fs_commit_atomic_write and f2fs_abort_atomic_write), without a page
 * cache: START makes a COW inode, an unlinked inode on the orphan list
 * (a crash frees it), and from then on the file's writes put their blocks
 * into it at the same index (data.c), reads look there first, and the
 * size changes in memory only (inode.c writes original_size).  COMMIT
 * moves the COW inode's blocks into the file and, as the kernel, writes
 * the file's dnodes through the fsync path with only the last one marked,
 * so that the roll-forward replays all of them or none; what it cannot
 * express (freed nodes, hard links, ...) commits a checkpoint instead.
 */
static void put_cow(struct f2fs_sb *sb, struct f2fs_inode *inode)
{
	struct f2fs_inode *cow = inode->cow;
	int err;

	inode->cow = NULL;
	atomic_fetch_sub(&sb->nr_atomic_writes, 1);
	inode->atomic_keep = 0;
	pthread_rwlock_wrlock(&cow->lock);
	err = f2fs_evict_inode(sb, cow);
	pthread_rwlock_unlock(&cow->lock);
	/* still an orphan if that failed: the next mount frees it */
	if (err)
		f2fs_warn(sb, "atomic write of inode %u: freeing COW inode %u: %s", inode->ino,
			  cow->ino, strerror(-err));
	f2fs_iput(sb, cow);
}

int f2fs_drop_atomic_write(struct f2fs_sb *sb, struct f2fs_inode *inode)
{
	if (!inode->cow)
		return 0;
	inode->size = inode->original_size;
	put_cow(sb, inode);
	return f2fs_mark_inode_dirty(sb, inode);
}

int f2fs_start_atomic_write(struct f2fs_sb *sb, uint32_t ino, bool replace, uint32_t owner)
{
	struct f2fs_inode *inode, *cow = NULL;
	int err = f2fs_begin_op(sb, ino, F2FS_OP_BALANCE, &inode);

	if (err)
		return err;
	if (!S_ISREG(inode->mode)) {
		err = -EINVAL;
		goto out;
	}
	/* f2fs_disable_compressed_file: only while it has no blocks */
	if (f2fs_is_compressed(inode)) {
		if (inode->blocks > 1) {
			err = -EINVAL;
			goto out;
		}
		f2fs_clear_compress_context(inode);
		err = f2fs_mark_inode_dirty(sb, inode);
		if (err)
			goto out;
	}
	/* a second start leaves the write as it is, as the kernel's */
	if (inode->cow)
		goto out;
	err = f2fs_require_key(sb, inode);
	if (!err && (inode->inline_flags & F2FS_INLINE_DATA))
		err = f2fs_convert_inline_inode(sb, inode);
	if (!err)
		err = f2fs_new_inode(sb, NULL, S_IFREG, inode->uid, inode->gid, &cow);
	if (err)
		goto out;
	/* f2fs_get_tmpfile: no name, no links, on the orphan list */
	cow->cow_file = true;
	cow->links = 0;
	cow->inline_flags &= (uint8_t)~F2FS_INLINE_DATA;
	{
		uint32_t ids[F2FS_MAX_QUOTAS] = { inode->uid, inode->gid, inode->projid };

		err = f2fs_dquot_transfer(sb, cow, ids, true);
		cow->projid = inode->projid;
	}
	if (!err)
		err = f2fs_add_orphan(sb, cow->ino);
	if (!err)
		err = f2fs_mark_inode_dirty(sb, cow);
	if (err) {
		pthread_rwlock_wrlock(&cow->lock);
		f2fs_evict_inode(sb, cow);
		pthread_rwlock_unlock(&cow->lock);
		f2fs_iput(sb, cow);
		goto out;
	}
	inode->original_size = inode->size;
	inode->atomic_keep = replace ? 0 : UINT64_MAX;
	if (replace)
		inode->size = 0;
	cow->size = inode->size;
	inode->cow = cow;
	atomic_fetch_add(&sb->nr_atomic_writes, 1);
	inode->atomic_owner = owner;
	err = f2fs_mark_inode_dirty(sb, inode);
out:
	f2fs_end_op(sb, inode);
	return err;
}

int f2fs_commit_atomic_write(struct f2fs_sb *sb, uint32_t ino)
{
	struct f2fs_inode *inode;
	bool need_cp;
	int err = f2fs_begin_op(sb, ino, F2FS_OP_BALANCE, &inode);

	if (err)
		return err;
	if (!inode->cow) {
		/* f2fs_ioc_commit_atomic_write on a plain file: an fsync */
		f2fs_end_op(sb, inode);
		return f2fs_fsync(sb, ino, false);
	}
	/* nodes the commit frees (REPLACE, truncates) are beyond the roll-forward */
	need_cp = inode->atomic_keep != UINT64_MAX;
	err = f2fs_atomic_move_blocks(sb, inode);
	if (err) {
		/* as the kernel, a failed commit aborts */
		f2fs_err(sb, "atomic write of inode %u: commit failed: %s", ino, strerror(-err));
		f2fs_drop_atomic_write(sb, inode);
	} else {
		put_cow(sb, inode);
		err = f2fs_mark_inode_dirty(sb, inode);
	}
	need_cp = need_cp || f2fs_need_do_checkpoint(sb, inode);
	if (!err && !need_cp) {
		/* f2fs_do_sync_file(atomic): the file's dnodes, the last one marked,
		 * and the flush */
		err = f2fs_fsync_node_pages(sb, ino, !f2fs_nat_checkpointed(sb, ino), true);
	}
	f2fs_end_op(sb, inode);
	if (!err && need_cp)
		err = f2fs_sync_fs_data(sb);
	return err;
}

int f2fs_abort_atomic_write(struct f2fs_sb *sb, uint32_t ino)
{
	struct f2fs_inode *inode;
	int err = f2fs_begin_op(sb, ino, 0, &inode);

	if (err)
		return err;
	err = f2fs_drop_atomic_write(sb, inode);
	f2fs_end_op(sb, inode);
	return err;
}

void f2fs_drop_all_atomic_writes(struct f2fs_sb *sb)
{
	while (atomic_load(&sb->nr_atomic_writes)) {
		struct f2fs_inode *inode;
		uint32_t ino = 0;

		pthread_mutex_lock(&sb->icache_lock);
		for (int b = 0; b < F2FS_ICACHE_BUCKETS && !ino; b++)
			for (struct f2fs_inode *i = sb->icache[b]; i && !ino; i = i->hnext)
				if (i->cow)
					ino = i->ino;
		pthread_mutex_unlock(&sb->icache_lock);
		if (!ino || f2fs_iget(sb, ino, &inode))
			return;
		f2fs_lock_op(sb);
		pthread_rwlock_wrlock(&inode->lock);
		f2fs_drop_atomic_write(sb, inode);
		pthread_rwlock_unlock(&inode->lock);
		f2fs_unlock_op(sb);
		f2fs_iput(sb, inode);
	}
}

/* ---------------------------------------------------------------- reports */

/* The compressed cluster holding file block b: its stored blocks (the first run of them). */
static int cluster_extent(struct f2fs_sb *sb, struct f2fs_inode *inode, uint64_t b,
			  struct f2fs_extent_info *e, uint32_t *run)
{
	uint32_t csize = 1u << inode->log_cluster_size, start = (uint32_t)(b & ~(uint64_t)(csize - 1));
	uint32_t addrs[1u << 8];
	int err;

	*run = csize - (uint32_t)(b - start);
	memset(e, 0, sizeof(*e));
	if (csize > ARRAY_SIZE(addrs))
		return -EOPNOTSUPP;
	err = f2fs_get_cluster_addrs(sb, inode, start, addrs, csize);
	if (err)
		return err;
	for (uint32_t i = 1; i < csize; i++) {
		if (addrs[i] == NULL_ADDR || addrs[i] == NEW_ADDR)
			break;
		if (!e->len) {
			e->pblk = addrs[i];
		} else if (addrs[i] != e->pblk + e->len) {
			break;
		}
		e->len++;
	}
	e->lblk = start;
	e->flags = F2FS_EXTENT_ENCODED;
	return 0;
}

int f2fs_get_extents(struct f2fs_sb *sb, uint32_t ino, uint64_t *from, uint64_t *nblocks,
		     struct f2fs_extent_info *ext, uint32_t max, uint32_t *n)
{
	struct f2fs_inode *inode;
	uint32_t flags = 0, count = 0;
	uint64_t b = *from, end;
	int err = f2fs_iget_req(sb, ino, &inode);

	*n = 0;
	if (err)
		return err;
	/* FIEMAP_FLAG_SYNC, which filefrag sets: dirty data is written first */
	if (inode->pages && f2fs_writable(sb)) {
		f2fs_iput(sb, inode);
		err = f2fs_writeback_file(sb, ino);
		if (!err)
			err = f2fs_iget_req(sb, ino, &inode);
		if (err)
			return err;
	}
	pthread_rwlock_rdlock(&inode->lock);
	end = (inode->size + F2FS_BLKSIZE - 1) / F2FS_BLKSIZE;
	*nblocks = end;
	/* fallocate(KEEP_SIZE) may have put blocks past the end: FIEMAP shows them too */
	if (inode->advise & FADVISE_KEEP_SIZE_BIT)
		end = f2fs_max_file_blocks(inode);
	if (f2fs_is_encrypted(inode))
		flags |= F2FS_EXTENT_ENCRYPTED;
	if (f2fs_is_compressed(inode))
		flags |= F2FS_EXTENT_ENCODED;
	if (!S_ISREG(inode->mode) && !S_ISDIR(inode->mode) && !S_ISLNK(inode->mode)) {
		b = end;
	} else if (inode->inline_flags & (F2FS_INLINE_DATA | F2FS_INLINE_DENTRY)) {
		struct f2fs_node_info ni;

		/* the data is in the inode block: one extent, as FIEMAP_EXTENT_DATA_INLINE */
		if (b == 0 && max && !(err = f2fs_get_node_info(sb, inode->ino, &ni))) {
			ext[count++] = (struct f2fs_extent_info){ 0, ni.blkaddr, 1,
								  flags | F2FS_EXTENT_INLINE };
		}
		b = end;
	}
	while (!err && b < end && count < max) {
		uint32_t pblk, run;

		err = f2fs_map_blocks(sb, inode, (uint32_t)b,
				      (uint32_t)F2FS_MIN(end - b, (uint64_t)UINT32_MAX), &pblk, &run);
		if (err == -EOPNOTSUPP && f2fs_is_compressed(inode)) {
			/* a compressed cluster: its blocks, as FIEMAP_EXTENT_ENCODED */
			err = cluster_extent(sb, inode, b, &ext[count], &run);
			if (!err && ext[count].len)
				count++;
			b += run;
			continue;
		}
		if (err)
			break;
		if (!run)
			run = 1;
		if (pblk != NULL_ADDR) {
			struct f2fs_extent_info *prev = count ? &ext[count - 1] : NULL;
			uint32_t f = flags | (pblk == NEW_ADDR ? F2FS_EXTENT_UNWRITTEN : 0);
			uint64_t p = pblk == NEW_ADDR ? 0 : pblk;

			if (prev && prev->lblk + prev->len == b && prev->flags == f &&
			    (pblk == NEW_ADDR || prev->pblk + prev->len == p))
				prev->len += run;
			else
				ext[count++] = (struct f2fs_extent_info){ b, p, run, f };
		}
		b += run;
	}
	pthread_rwlock_unlock(&inode->lock);
	f2fs_iput(sb, inode);
	*from = b;
	*n = count;
	return err;
}

/* f2fs_ioc_measure_verity -> fsverity_ioctl_measure */
int f2fs_verity_measure(struct f2fs_sb *sb, uint32_t ino, struct f2fs_verity_digest *d)
{
	struct f2fs_verity_info *vi;
	struct f2fs_inode *inode;
	int err;

	if (!f2fs_has_feature(sb, F2FS_FEATURE_VERITY))
		return -EOPNOTSUPP;
	err = f2fs_iget_req(sb, ino, &inode);
	if (err)
		return err;
	pthread_rwlock_rdlock(&inode->lock);
	err = f2fs_is_verity(inode) ? f2fs_verity_get_info(sb, inode, &vi) : -ENODATA;
	if (!err) {
		d->algorithm = (uint16_t)vi->alg;
		d->size = (uint16_t)vi->digest_size;
		memcpy(d->digest, vi->file_digest, vi->digest_size);
	}
	pthread_rwlock_unlock(&inode->lock);
	f2fs_iput(sb, inode);
	return err;
}

/* f2fs_ioc_enable_verity -> fsverity_ioctl_enable */
int f2fs_enable_verity(struct f2fs_sb *sb, uint32_t ino, const struct f2fs_verity_enable *a)
{
	struct f2fs_inode *inode;
	int err;

	if (!f2fs_has_feature(sb, F2FS_FEATURE_VERITY)) {
		f2fs_warn(sb, "can't enable fs-verity on inode %u: the verity feature is not "
			  "enabled on this filesystem", ino);
		return -EOPNOTSUPP;
	}
	if (!a->block_size || (a->block_size & (a->block_size - 1)))
		return -EINVAL;
	if (a->salt_size > 32 || a->sig_size > 16384 - 256)
		return -EMSGSIZE;
	err = f2fs_begin_op(sb, ino, F2FS_OP_BALANCE | f2fs_op_priv(a->priv), &inode);
	if (err)
		return err;
	err = f2fs_verity_enable_inode(sb, inode, a);
	f2fs_end_op(sb, inode);
	return err;
}

/* fsverity_ioctl_read_metadata */
ssize_t f2fs_verity_read_metadata(struct f2fs_sb *sb, uint32_t ino, uint64_t type, uint64_t off,
				  void *buf, size_t len)
{
	struct f2fs_inode *inode;
	ssize_t n;
	int err;

	if (!f2fs_has_feature(sb, F2FS_FEATURE_VERITY))
		return -EOPNOTSUPP;
	err = f2fs_iget_req(sb, ino, &inode);
	if (err)
		return err;
	pthread_rwlock_rdlock(&inode->lock);
	n = f2fs_is_verity(inode) ? f2fs_verity_metadata(sb, inode, type, off, buf, len) : -ENODATA;
	pthread_rwlock_unlock(&inode->lock);
	f2fs_iput(sb, inode);
	return n;
}
