// SPDX-License-Identifier: GPL-2.0
/*
 * Superblock: reading and checking both copies, feature policy, the mount
 * and unmount sequence, statfs.
 */
#include <stdlib.h>
#include <string.h>

#include "f2fs.h"

const char *f2fs_version_string(void)
{
#ifdef F2FS_FUSE_VERSION
	return F2FS_FUSE_VERSION;
#else
	return "unknown";
#endif
}

/* ---- features ---- */

static const struct {
	uint32_t bit;
	const char *name;
	bool supported;		/* by this read path */
} feature_table[] = {
	{ F2FS_FEATURE_ENCRYPT, "encrypt", true },
	{ F2FS_FEATURE_BLKZONED, "blkzoned", false },
	{ F2FS_FEATURE_ATOMIC_WRITE, "atomic_write", true },
	{ F2FS_FEATURE_EXTRA_ATTR, "extra_attr", true },
	{ F2FS_FEATURE_PRJQUOTA, "project_quota", true },
	{ F2FS_FEATURE_INODE_CHKSUM, "inode_checksum", true },
	{ F2FS_FEATURE_FLEXIBLE_INLINE_XATTR, "flexible_inline_xattr", true },
	{ F2FS_FEATURE_QUOTA_INO, "quota_ino", true },
	{ F2FS_FEATURE_INODE_CRTIME, "inode_crtime", true },
	{ F2FS_FEATURE_LOST_FOUND, "lost_found", true },
	{ F2FS_FEATURE_VERITY, "verity", true },
	{ F2FS_FEATURE_SB_CHKSUM, "sb_checksum", true },
	{ F2FS_FEATURE_CASEFOLD, "casefold", true },
	{ F2FS_FEATURE_COMPRESSION, "compression", true },
	{ F2FS_FEATURE_RO, "ro", true },
	{ F2FS_FEATURE_DEVICE_ALIAS, "device_alias", false },
	{ F2FS_FEATURE_PACKED_SSA, "packed_ssa", true },
};

/*
 * f2fs_setup_casefold: the encoding casefolded directories use.  The kernel
 * knows one, UTF-8 of Unicode 12.1.0; it refuses a mount that names
 * another.  The strict flag makes names that are not UTF-8 an error.
 */
static int check_encoding(struct f2fs_sb *sb)
{
	uint16_t enc = get_le16(sb->raw_sb + SB_S_ENCODING);
	uint16_t flags = get_le16(sb->raw_sb + SB_S_ENCODING_FLAGS);

	if (!f2fs_has_feature(sb, F2FS_FEATURE_CASEFOLD))
		return 0;
	if (enc != F2FS_ENC_UTF8_12_1) {
		f2fs_err(sb, "superblock: encoding %u is unknown (only utf8-12.1.0 is)", enc);
		return -EINVAL;
	}
	sb->casefold_strict = flags & F2FS_ENC_STRICT_MODE_FL;
	f2fs_info(sb, "casefolded directories: utf8-12.1.0, flags 0x%x", flags);
	return 0;
}

static int check_features(struct f2fs_sb *sb)
{
	uint32_t known = 0;

	for (size_t i = 0; i < ARRAY_SIZE(feature_table); i++) {
		known |= feature_table[i].bit;
		if ((sb->feature & feature_table[i].bit) && !feature_table[i].supported) {
			f2fs_err(sb, "superblock: feature \"%s\" is not supported",
				 feature_table[i].name);
			return -EOPNOTSUPP;
		}
	}
	if (sb->feature & ~known) {
		f2fs_err(sb, "superblock: unknown incompatible feature bits 0x%x",
			 sb->feature & ~known);
		return -EOPNOTSUPP;
	}
	return check_encoding(sb);
}

/* ---- superblock ---- */

static int sb_invalid(struct f2fs_sb *sb, int idx, const char *what)
{
	f2fs_warn(sb, "superblock %d: %s", idx, what);
	return -EINVAL;
}

/* The kernel's sanity_check_raw_super, for one copy. */
static int check_raw_super(struct f2fs_sb *sb, const uint8_t *raw, int idx, uint64_t dev_blocks)
{
	uint32_t log_sectorsize = get_le32(raw + SB_LOG_SECTORSIZE);
	uint32_t log_spb = get_le32(raw + SB_LOG_SECTORS_PER_BLOCK);
	uint32_t segs_per_sec = get_le32(raw + SB_SEGS_PER_SEC);
	uint32_t secs_per_zone = get_le32(raw + SB_SECS_PER_ZONE);
	uint32_t seg_count = get_le32(raw + SB_SEGMENT_COUNT);
	uint32_t seg_main = get_le32(raw + SB_SEGMENT_COUNT_MAIN);
	uint32_t sec_count = get_le32(raw + SB_SECTION_COUNT);
	uint32_t seg0 = get_le32(raw + SB_SEGMENT0_BLKADDR);
	uint32_t cp = get_le32(raw + SB_CP_BLKADDR), sit = get_le32(raw + SB_SIT_BLKADDR);
	uint32_t nat = get_le32(raw + SB_NAT_BLKADDR), ssa = get_le32(raw + SB_SSA_BLKADDR);
	uint32_t main_blk = get_le32(raw + SB_MAIN_BLKADDR);
	uint32_t n_ckpt = get_le32(raw + SB_SEGMENT_COUNT_CKPT);
	uint32_t n_sit = get_le32(raw + SB_SEGMENT_COUNT_SIT);
	uint32_t n_nat = get_le32(raw + SB_SEGMENT_COUNT_NAT);
	uint32_t n_ssa = get_le32(raw + SB_SEGMENT_COUNT_SSA);
	uint64_t block_count = get_le64(raw + SB_BLOCK_COUNT);
	uint64_t end;

	if (get_le32(raw + SB_MAGIC) != F2FS_SUPER_MAGIC)
		return sb_invalid(sb, idx, "bad magic");
	if (get_le32(raw + SB_FEATURE) & F2FS_FEATURE_SB_CHKSUM) {
		uint32_t off = get_le32(raw + SB_CHECKSUM_OFFSET);

		if (off != SB_CRC)
			return sb_invalid(sb, idx, "bad checksum offset");
		if (f2fs_chksum(raw, off) != get_le32(raw + off))
			return sb_invalid(sb, idx, "checksum mismatch");
	}
	if (get_le32(raw + SB_LOG_BLOCKSIZE) != F2FS_BLKSIZE_BITS)
		return sb_invalid(sb, idx, "block size is not 4096 bytes (unsupported)");
	if (get_le32(raw + SB_LOG_BLOCKS_PER_SEG) != 9)
		return sb_invalid(sb, idx, "segment size is not 512 blocks");
	if (log_sectorsize < 9 || log_sectorsize > F2FS_BLKSIZE_BITS ||
	    log_spb + log_sectorsize != F2FS_BLKSIZE_BITS)
		return sb_invalid(sb, idx, "bad sector size");
	if (!segs_per_sec || segs_per_sec > seg_count || !secs_per_zone ||
	    secs_per_zone > sec_count)
		return sb_invalid(sb, idx, "bad section or zone size");
	if (seg_count < F2FS_MIN_SEGMENTS || seg_count > F2FS_MAX_SEGMENT)
		return sb_invalid(sb, idx, "bad segment count");
	if (!seg_main || seg_main > seg_count || seg_main % segs_per_sec ||
	    sec_count != seg_main / segs_per_sec)
		return sb_invalid(sb, idx, "bad main area segment or section count");
	if (n_ckpt < 2 || !n_sit || n_sit % 2 || !n_nat || n_nat % 2 || !n_ssa ||
	    (uint64_t)n_ckpt + n_sit + n_nat + n_ssa + seg_main > seg_count)
		return sb_invalid(sb, idx, "bad metadata area segment counts");
	/* areas must follow each other: CP | SIT | NAT | SSA | MAIN */
	if (cp != seg0 || sit != cp + (n_ckpt << 9) || nat != sit + (n_sit << 9) ||
	    ssa != nat + (n_nat << 9) || main_blk != ssa + (n_ssa << 9))
		return sb_invalid(sb, idx, "metadata area boundaries are inconsistent");
	end = (uint64_t)seg0 + ((uint64_t)seg_count << 9);
	if ((uint64_t)main_blk + ((uint64_t)seg_main << 9) > end)
		return sb_invalid(sb, idx, "main area ends past the last segment");
	if (seg_count > (block_count >> 9) || block_count > ((uint64_t)1 << 32))
		return sb_invalid(sb, idx, "segment count exceeds the block count");
	if (dev_blocks < (uint64_t)main_blk + ((uint64_t)seg_main << 9))
		return sb_invalid(sb, idx, "the device is smaller than the filesystem");
	if (get_le32(raw + SB_ROOT_INO) != 3 || get_le32(raw + SB_NODE_INO) != 1 ||
	    get_le32(raw + SB_META_INO) != 2)
		return sb_invalid(sb, idx, "bad reserved inode numbers");
	if (get_le32(raw + SB_CP_PAYLOAD) > (1u << 9) - 16)
		return sb_invalid(sb, idx, "checkpoint payload too large");
	if (get_le32(raw + SB_EXTENSION_COUNT) > F2FS_MAX_EXTENSION ||
	    raw[SB_HOT_EXT_COUNT] > F2FS_MAX_EXTENSION ||
	    get_le32(raw + SB_EXTENSION_COUNT) + raw[SB_HOT_EXT_COUNT] > F2FS_MAX_EXTENSION)
		return sb_invalid(sb, idx, "bad extension count");
	return 0;
}

static int read_super(struct f2fs_sb *sb)
{
	uint8_t *blk = f2fs_alloc_blocks(2);
	uint64_t dev_blocks = f2fs_dev_nr_blocks(sb->dev);
	int err, idx;

	if (!blk)
		return -ENOMEM;
	if (dev_blocks < 2) {
		free(blk);
		f2fs_err(sb, "superblock: device too small (under two 4 KiB blocks)");
		return -EINVAL;
	}
	err = f2fs_dev_read(sb->dev, 0, blk, 2);
	if (err) {
		free(blk);
		f2fs_err(sb, "superblock: read failed: %s", strerror(-err));
		return err;
	}
	/* Like the kernel: the first valid copy wins. */
	for (idx = 0; idx < 2; idx++) {
		const uint8_t *raw = blk + idx * F2FS_BLKSIZE + F2FS_SUPER_OFFSET;

		if (check_raw_super(sb, raw, idx, dev_blocks) == 0) {
			memcpy(sb->raw_sb, raw, F2FS_SB_SIZE);
			break;
		}
	}
	free(blk);
	if (idx == 2) {
		f2fs_err(sb, "superblock: no valid superblock found (not an f2fs image?)");
		return -EINVAL;
	}
	if (idx == 1)
		f2fs_warn(sb, "superblock: first copy is invalid, using the second");
	sb->valid_sb_index = idx;
	return 0;
}

static int init_geometry(struct f2fs_sb *sb)
{
	const uint8_t *raw = sb->raw_sb;

	sb->feature = get_le32(raw + SB_FEATURE);
	sb->log_blocks_per_seg = get_le32(raw + SB_LOG_BLOCKS_PER_SEG);
	sb->blocks_per_seg = 1u << sb->log_blocks_per_seg;
	sb->segs_per_sec = get_le32(raw + SB_SEGS_PER_SEC);
	sb->secs_per_zone = get_le32(raw + SB_SECS_PER_ZONE);
	sb->block_count = get_le64(raw + SB_BLOCK_COUNT);
	sb->segment_count = get_le32(raw + SB_SEGMENT_COUNT);
	sb->segment_count_main = get_le32(raw + SB_SEGMENT_COUNT_MAIN);
	sb->section_count = get_le32(raw + SB_SECTION_COUNT);
	sb->segment_count_sit = get_le32(raw + SB_SEGMENT_COUNT_SIT);
	sb->segment_count_nat = get_le32(raw + SB_SEGMENT_COUNT_NAT);
	sb->segment0_blkaddr = get_le32(raw + SB_SEGMENT0_BLKADDR);
	sb->cp_blkaddr = get_le32(raw + SB_CP_BLKADDR);
	sb->sit_blkaddr = get_le32(raw + SB_SIT_BLKADDR);
	sb->nat_blkaddr = get_le32(raw + SB_NAT_BLKADDR);
	sb->ssa_blkaddr = get_le32(raw + SB_SSA_BLKADDR);
	sb->main_blkaddr = get_le32(raw + SB_MAIN_BLKADDR);
	sb->root_ino = get_le32(raw + SB_ROOT_INO);
	sb->node_ino = get_le32(raw + SB_NODE_INO);
	sb->meta_ino = get_le32(raw + SB_META_INO);
	sb->cp_payload = get_le32(raw + SB_CP_PAYLOAD);
	memcpy(sb->uuid, raw + SB_UUID, 16);
	sb->chksum_seed = f2fs_crc32(0xFFFFFFFFu, sb->uuid, 16);
	sb->max_nid = NAT_ENTRY_PER_BLOCK * ((sb->segment_count_nat / 2) << sb->log_blocks_per_seg);

	for (int i = 0; i < MAX_DEVICES; i++) {
		if (raw[SB_DEVS + i * F2FS_DEVICE_SIZE]) {
			f2fs_err(sb, "superblock: multi-device filesystems are not supported");
			return -EOPNOTSUPP;
		}
	}
	return check_features(sb);
}

static struct f2fs_sb *sb_alloc(const struct f2fs_mount_opts *opts)
{
	struct f2fs_sb *sb = calloc(1, sizeof(*sb));

	if (!sb)
		return NULL;
	if (opts)
		sb->opts = *opts;
	else
		sb->opts.log_level = F2FS_LOG_INFO;
	pthread_mutex_init(&sb->icache_lock, NULL);
	f2fs_block_pool_init(&sb->node_pool);
	sb->node_pool.source = sb->opts.slabs;
	pthread_rwlock_init(&sb->evict_lock, NULL);
	pthread_rwlock_init(&sb->cp_rwsem, NULL);
	pthread_mutex_init(&sb->rename_lock, NULL);
	pthread_mutex_init(&sb->writepages, NULL);
	pthread_mutex_init(&sb->orphan_lock, NULL);
	pthread_mutex_init(&sb->sync_lock, NULL);
	pthread_cond_init(&sb->sync_cond, NULL);
	f2fs_dquot_init(sb);
	sb->max_unused_inodes = 4096;
	if (f2fs_crypt_init(sb)) {
		free(sb);
		return NULL;
	}
	if (f2fs_compress_init(sb)) {
		f2fs_crypt_destroy(sb);
		free(sb);
		return NULL;
	}
	return sb;
}

static int fill_super(struct f2fs_sb *sb)
{
	size_t csize = sb->opts.cache_size ? sb->opts.cache_size : F2FS_DEFAULT_CACHE_SIZE;
	int err;

	sb->cache = f2fs_cache_create(csize, sb->opts.slabs);
	if (!sb->cache)
		return -ENOMEM;
	if (sb->opts.writeback) {
		sb->pc = f2fs_pc_create(sb->opts.dirty_bytes ? sb->opts.dirty_bytes
							     : F2FS_DEFAULT_DIRTY_BYTES,
					sb->opts.slabs);
		if (!sb->pc)
			return -ENOMEM;
	}
	err = f2fs_extent_mgr_create(sb, sb->opts.extent_cache_size);
	if (err)
		return err;
	sb->dcache_budget.limit = sb->opts.no_dcache ? 0 :
				  sb->opts.dcache_size ? sb->opts.dcache_size : F2FS_DEFAULT_DCACHE_SIZE;
	err = read_super(sb);
	if (err)
		return err;
	err = init_geometry(sb);
	if (err)
		return err;
	err = f2fs_get_valid_checkpoint(sb);
	if (err)
		return err;
	err = f2fs_build_segment_manager(sb);
	if (err)
		return err;
	err = f2fs_read_orphans(sb);
	if (err)
		return err;
	if (f2fs_cp_flag(sb, CP_FSCK_FLAG))
		f2fs_warn(sb, "checkpoint: the filesystem is marked as needing fsck");
	if (f2fs_cp_flag(sb, CP_ERROR_FLAG))
		f2fs_warn(sb, "checkpoint: the filesystem recorded an error; run fsck.f2fs");

	/* Roll-forward: this version only detects fsync()ed data; it cannot replay it yet. */
	if (!sb->opts.norecovery) {
		uint32_t n = 0;

		err = f2fs_find_fsync_dnodes(sb, &n);
		if (err)
			return err;
		if (n) {
			sb->recovery_pending = true;
			sb->nr_fsync_dnodes = n;
			if (sb->opts.readonly)
				f2fs_warn(sb, "roll-forward recovery is pending: %u fsync()ed node "
					  "block(s) after the last checkpoint are not shown; the mount "
					  "shows the checkpointed state", n);
			else
				f2fs_info(sb, "roll-forward recovery: %u fsync()ed node block(s) after "
					  "the last checkpoint", n);
		}
	}
	if (sb->nr_orphans)
		f2fs_info(sb, "%u orphan inode(s) are left for a read-write mount to free",
			  sb->nr_orphans);

	/* the root must be a directory */
	{
		struct f2fs_inode *root;

		err = f2fs_iget(sb, sb->root_ino, &root);
		if (err) {
			f2fs_err(sb, "root inode %u cannot be read", sb->root_ino);
			return err;
		}
		if ((root->mode & 0170000) != 0040000)
			err = f2fs_corrupted(sb, "root inode %u is not a directory", sb->root_ino);
		f2fs_iput(sb, root);
	}
	return err;
}

static void sb_free(struct f2fs_sb *sb)
{
	/* pages left after a failed writeback or a shutdown */
	f2fs_drop_data(sb);
	f2fs_icache_destroy(sb);
	f2fs_pc_destroy(sb->pc);
	f2fs_extent_mgr_destroy(sb);
	f2fs_destroy_node_table(sb);
	f2fs_destroy_node_manager(sb);
	f2fs_destroy_segment_manager(sb);
	free(sb->ckpt);
	free(sb->sit_bitmap_buf);
	free(sb->orphans);
	if (sb->cache)
		f2fs_cache_destroy(sb->cache);
	f2fs_dev_close(sb->dev);
	f2fs_crypt_destroy(sb);
	f2fs_compress_destroy(sb);
	pthread_mutex_destroy(&sb->icache_lock);
	pthread_rwlock_destroy(&sb->evict_lock);
	pthread_rwlock_destroy(&sb->cp_rwsem);
	pthread_mutex_destroy(&sb->rename_lock);
	pthread_mutex_destroy(&sb->writepages);
	pthread_mutex_destroy(&sb->orphan_lock);
	pthread_mutex_destroy(&sb->sync_lock);
	pthread_cond_destroy(&sb->sync_cond);
	f2fs_dquot_destroy(sb);
	f2fs_block_pool_destroy(&sb->node_pool);
	free(atomic_load(&sb->walk_buf));
	free(sb);
}

/* Why this filesystem may not be written (0: it may). */
static int write_refused(struct f2fs_sb *sb)
{
	if (f2fs_has_feature(sb, F2FS_FEATURE_RO)) {
		f2fs_err(sb, "the filesystem has the \"ro\" feature: mount it read-only");
		return -EROFS;
	}
	if (sb->recovery_pending && sb->opts.norecovery) {
		f2fs_err(sb, "norecovery needs a read-only mount: fsync()ed data would be lost");
		return -EINVAL;
	}
	if (f2fs_cp_flag(sb, CP_FSCK_FLAG | CP_ERROR_FLAG)) {
		f2fs_err(sb, "the filesystem needs fsck.f2fs before it can be written");
		return -EROFS;
	}
	return 0;
}

/* A writable mount builds the SIT and the free nid map up front. */
static int build_write_state(struct f2fs_sb *sb)
{
	int err = f2fs_build_sit(sb);

	if (!err)
		err = f2fs_restore_node_summaries(sb);
	if (!err)
		err = f2fs_build_node_manager(sb);
	if (!err && !sb->dirty_nodes)
		err = f2fs_build_node_table(sb);
	/* quota first: freeing orphans and replaying fsync()ed data change usage */
	if (!err)
		err = f2fs_quota_load(sb);
	return err;
}

static int recover_and_enforce(struct f2fs_sb *sb)
{
	int err = f2fs_recover_orphans(sb);

	if (!err && sb->recovery_pending)
		err = f2fs_recover_fsync_data(sb);
	if (!err)
		f2fs_quota_enforce(sb);
	return err;
}

static int enable_write(struct f2fs_sb *sb)
{
	int err = write_refused(sb);

	if (!err)
		err = build_write_state(sb);
	if (!err)
		err = recover_and_enforce(sb);
	return err;
}

/*
 * mount -o remount,rw of a read-only mount: the image opened again for
 * writing, then what a read-write mount does at mount time (the SIT, the
 * free nids, quota, the orphans freed).  The kernel's mount is still
 * read-only while this runs, so nothing else writes.  Roll-forward recovery
 * pending is refused: a read-only mount shows the checkpointed state, and
 * replaying fsync()ed data under it would change files the kernel has
 * cached; unmounting and mounting read-write replays it.
 */
int f2fs_remount_rw(struct f2fs_sb *sb, const char *path)
{
	int err;

	if (!sb->opts.readonly)
		return 0;
	if (f2fs_cp_error(sb))
		return -EIO;
	if (sb->recovery_pending) {
		f2fs_err(sb, "remount read-write: roll-forward recovery is pending (%u fsync()ed "
			 "node blocks); unmount and mount read-write to replay them",
			 sb->nr_fsync_dnodes);
		return -EBUSY;
	}
	err = write_refused(sb);
	if (err)
		return err;
	err = f2fs_dev_reopen_rw(sb->dev, path);
	if (err) {
		f2fs_err(sb, "remount read-write: cannot open %s for writing: %s", path,
			 err == -EBUSY ? "another read-only mount shares it" : strerror(-err));
		return err;
	}
	sb->dev_errors_seen = f2fs_dev_meta_errors(sb->dev);
	err = build_write_state(sb);
	if (!err) {
		/* as a change does: no checkpoint (an fsync's) in the middle */
		f2fs_lock_op(sb);
		sb->opts.readonly = false;
		err = recover_and_enforce(sb);
		f2fs_unlock_op(sb);
	}
	if (err) {
		/* nothing was committed: the image is as it was */
		sb->opts.readonly = true;
		f2fs_dev_set_readonly(sb->dev);
		f2fs_err(sb, "remount read-write failed: %s", strerror(-err));
		return err;
	}
	f2fs_info(sb, "image reopened read-write");
	return 0;
}

static int mount_common(struct f2fs_sb *sb, struct f2fs_sb **out)
{
	int err = fill_super(sb);

	/* errors reading the image that the mount got past (an unreadable
	 * checkpoint pack); from here on a failed metadata read or write
	 * stops checkpoints, the roll-forward's included */
	sb->dev_errors_seen = f2fs_dev_meta_errors(sb->dev);
	if (!err && !sb->opts.readonly)
		err = enable_write(sb);

	if (err) {
		sb_free(sb);
		return err;
	}
	*out = sb;
	return 0;
}

int f2fs_mount(const char *path, const struct f2fs_mount_opts *opts, struct f2fs_sb **out)
{
	struct f2fs_sb *sb = sb_alloc(opts);
	int err;

	if (!sb)
		return -ENOMEM;
	err = f2fs_dev_open(path, sb->opts.readonly, sb->opts.direct, &sb->dev);
	if (err == -EBUSY) {
		/* the platform's claim on the image or device (f2fs_plat_open_device) */
		f2fs_err(sb, "cannot open %s: in use by another mount or program (%s)", path,
			 sb->opts.readonly ? "a read-only mount shares an image file only with "
			 "read-only mounts, and a block device with nothing" :
			 "a read-write mount needs it to itself");
		sb_free(sb);
		return err;
	}
	if (err) {
		f2fs_err(sb, "cannot open %s: %s", path, strerror(-err));
		sb_free(sb);
		return err;
	}
	return mount_common(sb, out);
}

int f2fs_mount_mem(const void *buf, size_t len, const struct f2fs_mount_opts *opts,
		   struct f2fs_sb **out)
{
	struct f2fs_sb *sb = sb_alloc(opts);
	int err;

	if (!sb)
		return -ENOMEM;
	sb->opts.readonly = true;
	err = f2fs_dev_open_mem(buf, len, &sb->dev);
	if (err) {
		sb_free(sb);
		return err;
	}
	return mount_common(sb, out);
}

int f2fs_mount_dev(struct f2fs_dev *dev, const struct f2fs_mount_opts *opts, struct f2fs_sb **out)
{
	struct f2fs_sb *sb = sb_alloc(opts);

	if (!sb) {
		f2fs_dev_close(dev);
		return -ENOMEM;
	}
	sb->dev = dev;
	return mount_common(sb, out);
}

int f2fs_umount(struct f2fs_sb *sb)
{
	int err = 0;

	if (!sb)
		return 0;
	if (f2fs_writable(sb)) {
		/* the dirty pages first: the last checkpoint holds them */
		err = f2fs_sync_data(sb);
		if (err)
			f2fs_err(sb, "writing back file data at unmount: %s", strerror(-err));
		/* atomic writes never committed leave their files as they were */
		f2fs_drop_all_atomic_writes(sb);
		if (atomic_load(&sb->need_fsck))
			f2fs_warn(sb, "an inconsistency was found: the last checkpoint asks for fsck");
		/*
		 * Unlinked inodes still open or held when the session ended:
		 * nothing can reach them any more, so free them now rather
		 * than leave them to the next mount's orphan recovery.
		 */
		else if (sb->nr_orphans)
			err = f2fs_recover_orphans(sb);
		if (err)
			f2fs_err(sb, "freeing orphan inodes at unmount: %s", strerror(-err));
		err = f2fs_sync_fs(sb, true);
		if (err)
			f2fs_err(sb, "final checkpoint failed: %s", strerror(-err));
	}
	sb_free(sb);
	return err;
}

uint32_t f2fs_root_ino(const struct f2fs_sb *sb)
{
	return sb->root_ino;
}

bool f2fs_recovery_pending(const struct f2fs_sb *sb)
{
	return sb->recovery_pending;
}

/* As the kernel's f2fs_statfs, with no reserved blocks configured. */
int f2fs_statfs(struct f2fs_sb *sb, struct f2fs_statfs *st)
{
	uint64_t user_blocks = sb->user_block_count, valid_blocks, valid_nodes;

	if (sb->sm && sb->nm) {
		/* a writable mount: the live counts (a checkpoint may be rewriting
		 * sb->ckpt meanwhile, and statfs takes none of its locks) */
		pthread_mutex_lock(&sb->sm->lock);
		valid_blocks = sb->sm->valid_blocks;
		pthread_mutex_unlock(&sb->sm->lock);
		pthread_mutex_lock(&sb->nm->lock);
		valid_nodes = sb->nm->valid_node_count;
		pthread_mutex_unlock(&sb->nm->lock);
	} else {
		/* read-only: no checkpoint is written, the last one's counts hold */
		valid_blocks = get_le64(sb->ckpt + CP_VALID_BLOCK_COUNT);
		valid_nodes = get_le32(sb->ckpt + CP_VALID_NODE_COUNT);
	}
	uint64_t total_nodes = (uint64_t)sb->max_nid;
	uint64_t avail_nodes = total_nodes > 3 ? total_nodes - 3 : 0;

	memset(st, 0, sizeof(*st));
	st->bsize = F2FS_BLKSIZE;
	st->blocks = sb->block_count - sb->segment0_blkaddr;
	st->bfree = user_blocks > valid_blocks ? user_blocks - valid_blocks : 0;
	st->bavail = st->bfree;
	if (avail_nodes > user_blocks) {
		st->files = user_blocks;
		st->ffree = st->bfree;
	} else {
		st->files = avail_nodes;
		st->ffree = F2FS_MIN(avail_nodes > valid_nodes ? avail_nodes - valid_nodes : 0,
				     st->bfree);
	}
	st->namemax = F2FS_NAME_LEN;
	memcpy(st->uuid, sb->uuid, 16);
	return 0;
}

void f2fs_get_io_stats(struct f2fs_sb *sb, struct f2fs_io_stats *st)
{
	memset(st, 0, sizeof(*st));
	f2fs_dev_get_stats(sb->dev, st);
	f2fs_cache_stats(sb->cache, &st->cache_hits, &st->cache_misses);
	st->checkpoints = atomic_load(&sb->stat.checkpoints);
	st->gc_runs = atomic_load(&sb->stat.gc_runs);
	st->gc_sections = atomic_load(&sb->stat.gc_sections);
	st->gc_data_blocks = atomic_load(&sb->stat.gc_data_blocks);
	st->gc_node_blocks = atomic_load(&sb->stat.gc_node_blocks);
	st->ssr_segments = atomic_load(&sb->stat.ssr_segments);
	st->extent_hits = atomic_load(&sb->stat.extent_hits);
	st->extent_misses = atomic_load(&sb->stat.extent_misses);
	st->extent_evictions = f2fs_extent_evictions(sb);
	st->node_ra_blocks = atomic_load(&sb->stat.node_ra_blocks);
	st->node_ra_requests = atomic_load(&sb->stat.node_ra_requests);
	st->node_ra_rejected = atomic_load(&sb->stat.node_ra_rejected);
	st->precache_nodes = atomic_load(&sb->stat.precache_nodes);
	st->fsync_requests = atomic_load(&sb->stat.fsync_requests);
	st->fsync_commits = atomic_load(&sb->stat.fsync_commits);
	st->fsync_node_blocks = atomic_load(&sb->stat.fsync_node_blocks);
	st->sync_merged = atomic_load(&sb->stat.sync_merged);
	st->compress_runs = atomic_load(&sb->stat.compress_runs);
	st->clusters_compressed = atomic_load(&sb->stat.clusters_compressed);
	st->clusters_raw = atomic_load(&sb->stat.clusters_raw);
}

void f2fs_drop_caches(struct f2fs_sb *sb)
{
	f2fs_icache_drop_extents(sb);
	f2fs_cache_drop_all(sb->cache);
}

/* f2fs-fusectl status: /sys/kernel/debug/f2fs/status, from the live state. */
int f2fs_get_status(struct f2fs_sb *sb, struct f2fs_status *st)
{
	memset(st, 0, sizeof(*st));
	st->segment_count_main = sb->segment_count_main;
	st->section_count = sb->section_count;
	st->segs_per_sec = sb->segs_per_sec;
	st->blocks_per_seg = sb->blocks_per_seg;
	st->meta_segs[0] = 1;	/* both superblock copies are in segment 0 */
	st->meta_segs[1] = get_le32(sb->raw_sb + SB_SEGMENT_COUNT_CKPT);
	st->meta_segs[2] = sb->segment_count_sit;
	st->meta_segs[3] = sb->segment_count_nat;
	st->meta_segs[4] = get_le32(sb->raw_sb + SB_SEGMENT_COUNT_SSA);
	st->ovp_segs = sb->ovp_segments;
	st->rsvd_segs = sb->rsvd_segments;
	st->user_blocks = sb->user_block_count;
	st->cp_ver = sb->cp_ver;
	st->ckpt_flags = sb->ckpt_flags;
	st->writable = f2fs_writable(sb);
	st->shut_down = f2fs_cp_error(sb);
	st->need_fsck = atomic_load(&sb->need_fsck);
	if (sb->sm && sb->nm) {
		f2fs_segment_status(sb, st);
		pthread_mutex_lock(&sb->nm->lock);
		st->valid_nodes = sb->nm->valid_node_count;
		st->valid_inodes = sb->nm->valid_inode_count;
		pthread_mutex_unlock(&sb->nm->lock);
		st->dirty_nodes = f2fs_nr_dirty_nodes(sb);
	} else {
		/* read-only: the checkpoint's word */
		st->valid_blocks = get_le64(sb->ckpt + CP_VALID_BLOCK_COUNT);
		st->valid_nodes = get_le32(sb->ckpt + CP_VALID_NODE_COUNT);
		st->valid_inodes = get_le32(sb->ckpt + CP_VALID_INODE_COUNT);
		st->free_segs = get_le32(sb->ckpt + CP_FREE_SEGMENT_COUNT);
		for (int t = 0; t < NR_CURSEG_TYPE; t++) {
			st->log[t].segno = sb->curseg[t].segno;
			st->log[t].blkoff = sb->curseg[t].blkoff;
		}
	}
	pthread_mutex_lock(&sb->icache_lock);
	st->cached_inodes = sb->nr_cached_inodes;
	pthread_mutex_unlock(&sb->icache_lock);
	st->orphans = sb->nr_orphans;
	f2fs_get_io_stats(sb, &st->io);
	return 0;
}
