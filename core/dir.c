// SPDX-License-Identifier: GPL-2.0
/*
 * Directory lookup and iteration.
 *
 * A directory is either an inline-dentry inode (the dentry area lives in
 * the inode block) or a multi-level hash table of dentry blocks: level n
 * has dir_buckets(n) buckets of bucket_blocks(n) blocks each, laid out
 * level after level.  Lookup hashes the name and probes one bucket per
 * level; readdir ignores the levels and walks every block in logical
 * order, as the kernel's f2fs_readdir does, so directory offsets match.
 *
 * Every dentry is validated before use (name length, name slots within
 * the area, inode number, file type): a hostile image yields -EUCLEAN,
 * never an out-of-bounds read.  All loops are bounded by the area size,
 * the hash depth or the directory's block count.
 *
 * Encrypted directories: on-disk names are ciphertext and their hashes are
 * computed over it, so neither lookup of a plaintext name nor a readdir
 * that would hand out raw ciphertext is meaningful yet; both return
 * -ENOKEY until the filename crypto is wired in.
 *
 * Callers hold the directory inode's lock; nothing here is cached.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "f2fs.h"

/* Sentinel block index naming the inline dentry area in messages. */
#define INLINE_AREA UINT64_MAX

/* A dentry decoded and validated by next_dentry(). */
struct dentry_info {
	uint32_t bit;		/* first slot */
	uint32_t next;		/* slot after its name slots */
	uint32_t hash;
	uint32_t ino;
	uint16_t name_len;
	uint8_t file_type;
	const uint8_t *name;
};

static uint32_t dir_buckets(uint32_t level, uint32_t dir_level)
{
	if (level + dir_level < MAX_DIR_HASH_DEPTH / 2)
		return 1u << (level + dir_level);
	return MAX_DIR_BUCKETS;
}

static uint32_t bucket_blocks(uint32_t level)
{
	return level < MAX_DIR_HASH_DEPTH / 2 ? 2 : 4;
}

/* First block of bucket idx at level: all earlier levels come first. */
static uint64_t dir_block_index(uint32_t level, uint32_t dir_level, uint32_t idx)
{
	uint64_t bidx = 0;

	for (uint32_t i = 0; i < level; i++)
		bidx += (uint64_t)dir_buckets(i, dir_level) * bucket_blocks(i);
	return bidx + (uint64_t)idx * bucket_blocks(level);
}

/* Blocks covered by i_size, capped at what the inode can address. */
static uint64_t dir_blocks(const struct f2fs_inode *dir)
{
	uint64_t n = dir->size / F2FS_BLKSIZE + (dir->size % F2FS_BLKSIZE != 0);

	return F2FS_MIN(n, f2fs_max_file_blocks(dir));
}

static int bad_dentry(struct f2fs_sb *sb, const struct f2fs_inode *dir, uint64_t blk,
		      uint32_t bit, const char *what, uint32_t val)
{
	if (blk == INLINE_AREA)
		return f2fs_corrupted(sb, "directory %u, inline dentry slot %u: %s %u",
				      dir->ino, bit, what, val);
	return f2fs_corrupted(sb, "directory %u, block %llu, dentry slot %u: %s %u",
			      dir->ino, (unsigned long long)blk, bit, what, val);
}

/*
 * Find the next used dentry at or after *pos in area d and validate it.
 * Returns 1 with *de filled and *pos moved past its name slots, 0 at the
 * end of the area, or -EUCLEAN.
 */
static int next_dentry(struct f2fs_sb *sb, const struct f2fs_inode *dir,
		       const struct f2fs_dentry_ptr *d, uint64_t blk, uint32_t *pos,
		       struct dentry_info *de)
{
	uint32_t bit = *pos;

	while (bit < d->max) {
		const uint8_t *raw;
		uint32_t slots;

		if (!f2fs_test_bit_le(bit, d->bitmap)) {
			bit++;
			continue;
		}
		raw = d->dentry + (size_t)bit * SIZE_OF_DIR_ENTRY;
		de->name_len = get_le16(raw + DE_NAME_LEN);
		if (de->name_len == 0) {
			/*
			 * The kernel skips these with a warning rather than
			 * failing the directory; do the same so that every
			 * image it can list, we can list.
			 */
			f2fs_warn(sb, "directory %u: dentry slot %u has name_len 0, run fsck",
				  dir->ino, bit);
			atomic_store(&sb->need_fsck, true);
			bit++;
			continue;
		}
		if (de->name_len > F2FS_NAME_LEN)
			return bad_dentry(sb, dir, blk, bit, "name_len", de->name_len);
		slots = GET_DENTRY_SLOTS(de->name_len);
		if (slots > d->max - bit)
			return bad_dentry(sb, dir, blk, bit, "name runs past the area, name_len",
					  de->name_len);
		de->ino = get_le32(raw + DE_INO);
		if (de->ino == 0 || de->ino >= sb->max_nid || de->ino == sb->node_ino ||
		    de->ino == sb->meta_ino)
			return bad_dentry(sb, dir, blk, bit, "ino", de->ino);
		de->file_type = raw[DE_FILE_TYPE];
		if (de->file_type >= F2FS_FT_MAX)
			return bad_dentry(sb, dir, blk, bit, "file_type", de->file_type);
		de->hash = get_le32(raw + DE_HASH);
		de->name = d->filename + (size_t)bit * F2FS_SLOT_LEN;
		de->bit = bit;
		de->next = bit + slots;
		*pos = de->next;
		return 1;
	}
	*pos = d->max;
	return 0;
}

/* Search one dentry area for (hash, name).  1 found, 0 not, <0 error. */
static int find_in_area(struct f2fs_sb *sb, const struct f2fs_inode *dir,
			const struct f2fs_dentry_ptr *d, uint64_t blk, uint32_t hash,
			const char *name, size_t len, struct dentry_info *out)
{
	uint32_t pos = 0;
	int ret;

	while ((ret = next_dentry(sb, dir, d, blk, &pos, out)) == 1) {
		/* hash first, as the kernel does: it is the cheap filter */
		if (out->hash == hash && out->name_len == len &&
		    memcmp(out->name, name, len) == 0)
			return 1;
	}
	return ret;
}

static int check_dir(const struct f2fs_inode *dir)
{
	if (!S_ISDIR(dir->mode))
		return -ENOTDIR;
	if (f2fs_is_encrypted(dir))
		return -ENOKEY;
	/* casefolded names hash over the folded form, not supported here */
	if (dir->flags & F2FS_CASEFOLD_FL)
		return -EOPNOTSUPP;
	return 0;
}

int f2fs_dir_lookup(struct f2fs_sb *sb, struct f2fs_inode *dir, const char *name, size_t len,
		    uint32_t *ino, unsigned int *file_type)
{
	struct f2fs_dentry_ptr d;
	struct dentry_info de;
	uint32_t hash, max_depth;
	uint64_t max_blocks;
	uint8_t *blk;
	int ret;

	ret = check_dir(dir);
	if (ret)
		return ret;
	if (len == 0)
		return -ENOENT;
	if (len > F2FS_NAME_LEN)
		return -ENAMETOOLONG;

	hash = f2fs_dentry_hash((const uint8_t *)name, len);

	if (dir->inline_flags & F2FS_INLINE_DENTRY) {
		f2fs_make_dentry_ptr_inline(&d, dir);
		ret = find_in_area(sb, dir, &d, INLINE_AREA, hash, name, len, &de);
		goto out;
	}

	if (dir_blocks(dir) == 0)
		return -ENOENT;

	max_depth = dir->current_depth;
	if (max_depth > MAX_DIR_HASH_DEPTH) {
		f2fs_warn(sb, "directory %u: current_depth %u clamped to %u", dir->ino,
			  max_depth, MAX_DIR_HASH_DEPTH);
		max_depth = MAX_DIR_HASH_DEPTH;
	}
	max_blocks = f2fs_max_file_blocks(dir);

	blk = f2fs_alloc_blocks(1);
	if (!blk)
		return -ENOMEM;

	ret = 0;
	/* levels 0 .. current_depth - 1, as the kernel's __f2fs_find_entry */
	for (uint32_t level = 0; level < max_depth && ret == 0; level++) {
		uint32_t nbucket = dir_buckets(level, dir->dir_level);
		uint32_t nblock = bucket_blocks(level);
		uint64_t bidx = dir_block_index(level, dir->dir_level, hash % nbucket);

		for (uint32_t i = 0; i < nblock && ret == 0; i++) {
			uint64_t lblk = bidx + i;
			int rd;

			/* beyond the addressable range there can be no block */
			if (lblk >= max_blocks || lblk > UINT32_MAX)
				break;
			rd = f2fs_read_data_block(sb, dir, (uint32_t)lblk, blk);
			if (rd < 0) {
				ret = rd;
				break;
			}
			if (rd == 0)
				continue;	/* hole: an empty dentry block */
			f2fs_make_dentry_ptr_block(&d, blk);
			ret = find_in_area(sb, dir, &d, lblk, hash, name, len, &de);
		}
	}
	free(blk);
out:
	if (ret < 0)
		return ret;
	if (ret == 0)
		return -ENOENT;
	*ino = de.ino;
	*file_type = de.file_type;
	return 0;
}

/*
 * Emit the entries of one area from slot `start`; positions are
 * base + slot.  Returns 1 if fill asked to stop, 0 at the end, <0 error.
 */
static int emit_area(struct f2fs_sb *sb, const struct f2fs_inode *dir,
		     const struct f2fs_dentry_ptr *d, uint64_t blk, uint64_t base,
		     uint32_t start, f2fs_filldir_t fill, void *ctx)
{
	struct dentry_info de;
	uint32_t pos = start;
	int ret;

	while ((ret = next_dentry(sb, dir, d, blk, &pos, &de)) == 1) {
		if (fill(ctx, (const char *)de.name, de.name_len, de.ino, de.file_type,
			 base + de.next))
			return 1;
	}
	return ret;
}

/*
 * Offsets follow the kernel: block n slot s is n * NR_DENTRY_IN_BLOCK + s;
 * an inline directory uses the slot alone and ends at its slot count.
 * file_type is passed as the on-disk F2FS_FT_* value.
 */
int f2fs_dir_iterate(struct f2fs_sb *sb, struct f2fs_inode *dir, uint64_t off,
		     f2fs_filldir_t fill, void *ctx)
{
	struct f2fs_dentry_ptr d;
	uint64_t n, nblocks;
	uint32_t start;
	uint8_t *blk;
	int ret;

	ret = check_dir(dir);
	if (ret)
		return ret;

	if (dir->inline_flags & F2FS_INLINE_DENTRY) {
		f2fs_make_dentry_ptr_inline(&d, dir);
		if (off >= d.max)
			return 0;
		ret = emit_area(sb, dir, &d, INLINE_AREA, 0, (uint32_t)off, fill, ctx);
		return ret < 0 ? ret : 0;
	}

	nblocks = dir_blocks(dir);
	n = off / NR_DENTRY_IN_BLOCK;
	start = (uint32_t)(off % NR_DENTRY_IN_BLOCK);
	if (n >= nblocks)
		return 0;

	blk = f2fs_alloc_blocks(1);
	if (!blk)
		return -ENOMEM;

	ret = 0;
	while (n < nblocks && ret == 0) {
		uint32_t pblk = NULL_ADDR, run = 0;
		uint32_t want = (uint32_t)F2FS_MIN(nblocks - n, (uint64_t)UINT32_MAX);

		/* map first so that long holes are skipped in one step */
		ret = f2fs_map_blocks(sb, dir, (uint32_t)n, want, &pblk, &run);
		if (ret < 0)
			break;
		ret = 0;
		if (run == 0)
			run = 1;
		if (pblk == NULL_ADDR || pblk == NEW_ADDR) {
			n += run;
			start = 0;
			continue;
		}
		for (uint32_t i = 0; i < run && n < nblocks && ret == 0; i++, n++) {
			int rd = f2fs_read_data_block(sb, dir, (uint32_t)n, blk);

			if (rd < 0) {
				ret = rd;
				break;
			}
			if (rd > 0) {
				f2fs_make_dentry_ptr_block(&d, blk);
				ret = emit_area(sb, dir, &d, n, n * NR_DENTRY_IN_BLOCK, start,
						fill, ctx);
			}
			start = 0;
		}
	}
	free(blk);
	return ret < 0 ? ret : 0;
}
