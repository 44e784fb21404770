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
 * Encrypted directories: on-disk names are ciphertext hashed as such;
 * lookups encrypt the name with the key, or take a no-key name apart.
 *
 * Casefolded directories (F2FS_CASEFOLD_FL, the casefold feature): names
 * are stored as given, hashed over their folding (utf8.c), and an entry
 * matches when it folds to the same bytes.  A name that is not UTF-8 is
 * an opaque byte string, or -EINVAL under the strict encoding flag.
 * Encrypted and casefolded: the hash is the SipHash of the folded
 * plaintext, which roll-forward cannot compute without the key, so it is
 * kept after the name in the inode's i_name, as the kernel does.
 *
 * Callers hold the directory inode's lock; nothing here is cached.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "f2fs.h"
#include "fscrypt.h"

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

/* The inode number and type an entry names must be possible. */
static int dentry_target_bad(struct f2fs_sb *sb, const struct f2fs_inode *dir, uint64_t blk,
			     uint32_t bit, const struct dentry_info *de)
{
	if (de->ino == 0 || de->ino >= sb->max_nid || de->ino == sb->node_ino ||
	    de->ino == sb->meta_ino)
		return bad_dentry(sb, dir, blk, bit, "ino", de->ino);
	if (de->file_type >= F2FS_FT_MAX)
		return bad_dentry(sb, dir, blk, bit, "file_type", de->file_type);
	return 0;
}

/*
 * The first set bit at or after bit in a little-endian bitmap, or max:
 * a byte at a time, since the free slots of a dentry area are runs.
 */
static uint32_t next_set_bit_le(const uint8_t *map, uint32_t bit, uint32_t max)
{
	while (bit < max) {
		unsigned int b = map[bit >> 3] >> (bit & 7);

		if (b)
			return F2FS_MIN(bit + (uint32_t)__builtin_ctz(b), max);
		bit = (bit | 7) + 1;
	}
	return max;
}

/*
 * Find the next used dentry at or after *pos in area d and validate it.
 * Returns 1 with *de filled and *pos moved past its name slots, 0 at the
 * end of the area, or -EUCLEAN.
 */
static int next_dentry(struct f2fs_sb *sb, const struct f2fs_inode *dir,
		       const struct f2fs_dentry_ptr *d, uint64_t blk, uint32_t *pos,
		       bool *warned, bool check_target, struct dentry_info *de)
{
	uint32_t bit = *pos;

	while ((bit = next_set_bit_le(d->bitmap, bit, d->max)) < d->max) {
		const uint8_t *raw;
		uint32_t slots;

		raw = d->dentry + (size_t)bit * SIZE_OF_DIR_ENTRY;
		de->name_len = get_le16(raw + DE_NAME_LEN);
		if (de->name_len == 0) {
			/*
			 * The kernel skips these with a warning rather than
			 * failing the directory; do the same so that every
			 * image it can list, we can list.  One message per
			 * area is enough.
			 */
			if (!*warned) {
				if (blk == INLINE_AREA)
					f2fs_warn(sb, "directory %u, inline dentry slot %u: name_len 0, "
						  "skipped; run fsck", dir->ino, bit);
				else
					f2fs_warn(sb, "directory %u, block %llu, dentry slot %u: name_len 0, "
						  "skipped; run fsck", dir->ino, (unsigned long long)blk, bit);
				*warned = true;
				atomic_store(&sb->need_fsck, true);
			}
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
		de->file_type = raw[DE_FILE_TYPE];
		if (check_target) {
			int bad = dentry_target_bad(sb, dir, blk, bit, de);

			if (bad)
				return bad;
		}
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

/*
 * Search one dentry area for (hash, name).  1 found, 0 not, <0 error.
 * Only the entry that matches has its inode number and type checked: as in
 * the kernel, a damaged sibling does not hide a good name.
 */
/*
 * What a lookup compares dentries with (the kernel's struct f2fs_filename):
 * a disk name, a parsed no-key name, or in a casefolded directory the
 * folded plaintext name.
 */
struct name_match {
	uint32_t hash;
	const uint8_t *name;	/* on-disk form */
	size_t len;
	const struct fscrypt_nokey_name *nk;
	const uint8_t *cf;	/* folded name; NULL: entries match byte for byte */
	size_t cf_len;
	const struct fscrypt_inode_info *ci;	/* decrypts entries to fold them */
	bool strict;
};

/* f2fs_match_ci_name: does the entry fold to m->cf? */
static bool ci_name_matches(const struct name_match *m, const struct dentry_info *de)
{
	uint8_t plain[F2FS_NAME_LEN + 1];
	const uint8_t *s = de->name;
	size_t n = de->name_len;
	int r;

	if (m->ci) {
		r = fscrypt_fname_decrypt(m->ci, de->name, de->name_len, plain, sizeof(plain));
		if (r < 0)
			return false;
		s = plain;
		n = (size_t)r;
	}
	r = f2fs_utf8_match_folded(m->cf, m->cf_len, s, n);
	/* an entry that is not UTF-8 is compared as bytes, unless strict */
	if (r < 0)
		return !m->strict && n == m->cf_len && memcmp(s, m->cf, n) == 0;
	return r == 1;
}

static bool name_matches(const struct name_match *m, const struct dentry_info *de)
{
	if (de->hash != m->hash)
		return false;
	if (m->nk)
		return fscrypt_nokey_name_match(m->nk, de->name, de->name_len);
	if (m->cf)
		return ci_name_matches(m, de);
	return de->name_len == m->len && memcmp(de->name, m->name, m->len) == 0;
}

static int find_in_area(struct f2fs_sb *sb, const struct f2fs_inode *dir,
			const struct f2fs_dentry_ptr *d, uint64_t blk,
			const struct name_match *m, struct dentry_info *out)
{
	uint32_t pos = 0;
	bool warned = false;
	int ret;

	for (;;) {
		/*
		 * Hash first, as the kernel does: it is the cheap filter.  An entry
		 * whose hash differs and whose name fits the area is stepped over
		 * without decoding it; anything else (a match, a damaged slot) takes
		 * next_dentry's full decode, which reports what is wrong.
		 */
		while ((pos = next_set_bit_le(d->bitmap, pos, d->max)) < d->max) {
			const uint8_t *raw = d->dentry + (size_t)pos * SIZE_OF_DIR_ENTRY;
			uint32_t len = get_le16(raw + DE_NAME_LEN), slots = GET_DENTRY_SLOTS(len);

			if (get_le32(raw + DE_HASH) == m->hash || !len || len > F2FS_NAME_LEN ||
			    slots > d->max - pos)
				break;
			pos += slots;
		}
		ret = next_dentry(sb, dir, d, blk, &pos, &warned, false, out);
		if (ret != 1)
			break;
		if (name_matches(m, out)) {
			int bad = dentry_target_bad(sb, dir, blk, out->bit, out);

			return bad ? bad : 1;
		}
	}
	return ret;
}

static bool is_dot(const uint8_t *name, size_t len)
{
	return (len == 1 && name[0] == '.') || (len == 2 && name[0] == '.' && name[1] == '.');
}

static bool casefolded(const struct f2fs_sb *sb, const struct f2fs_inode *dir)
{
	return (dir->flags & F2FS_CASEFOLD_FL) && f2fs_has_feature(sb, F2FS_FEATURE_CASEFOLD);
}

static int check_dir(const struct f2fs_sb *sb, const struct f2fs_inode *dir)
{
	if (!S_ISDIR(dir->mode))
		return -ENOTDIR;
	/* the flag without the feature: no encoding to fold with */
	if ((dir->flags & F2FS_CASEFOLD_FL) && !casefolded(sb, dir))
		return -EOPNOTSUPP;
	return 0;
}

/*
 * f2fs_init_casefolded_name: fold a plaintext name into cf (F2FS_NAME_LEN
 * bytes) for a casefolded directory.  A name that does not fold leaves
 * m->cf NULL (compared as bytes), or is -EINVAL under the strict flag.
 */
static int fold_name(const struct f2fs_sb *sb, const struct f2fs_inode *dir,
		     const uint8_t *name, size_t len, uint8_t *cf, struct name_match *m)
{
	int n;

	m->strict = sb->casefold_strict;
	if (!casefolded(sb, dir) || is_dot(name, len))
		return 0;
	n = f2fs_utf8_casefold(name, len, cf, F2FS_NAME_LEN);
	if (n < 0)
		return sb->casefold_strict ? -EINVAL : 0;
	m->cf = cf;
	m->cf_len = (size_t)n;
	return 0;
}

/*
 * f2fs_hash_filename: over the disk name, or in a casefolded directory over
 * the folded name (the plaintext if it does not fold), by SipHash with the
 * directory's key when it is also encrypted.
 */
static int hash_name(const struct f2fs_sb *sb, const struct f2fs_inode *dir,
		     const struct fscrypt_inode_info *ci, const uint8_t *plain, size_t plain_len,
		     struct name_match *m)
{
	const uint8_t *h = m->name;
	size_t hl = m->len;

	if (is_dot(plain, plain_len)) {
		m->hash = 0;
		return 0;
	}
	if (casefolded(sb, dir)) {
		h = m->cf ? m->cf : plain;
		hl = m->cf ? m->cf_len : plain_len;
		if (ci) {
			uint64_t sip;
			int err = fscrypt_fname_siphash(ci, h, hl, &sip);

			if (err)
				return err;
			m->hash = (uint32_t)sip;
			return 0;
		}
	}
	m->hash = f2fs_dentry_hash(h, hl);
	return 0;
}

/* Where an entry was found: its area (block or inline), slot and dentry. */
struct entry_loc {
	uint64_t lblk;		/* INLINE_AREA for the inline dentry area */
	struct dentry_info de;
	uint8_t *blk;		/* the dentry block, caller frees (NULL if inline) */
};

/* __f2fs_find_entry: probe one bucket per hash level. 0, -ENOENT or <0. */
static int search_entry(struct f2fs_sb *sb, struct f2fs_inode *dir, const struct name_match *m,
			struct entry_loc *loc);

static int setup_name(struct f2fs_sb *sb, struct f2fs_inode *dir, const char *name, size_t len,
		      bool nokey_ok, struct name_match *m, uint8_t ct[F2FS_NAME_LEN + 1],
		      uint8_t cf[F2FS_NAME_LEN], struct fscrypt_nokey_name *nk);

static int lookup_entry(struct f2fs_sb *sb, struct f2fs_inode *dir, const struct name_match *m,
			struct entry_loc *loc, bool need_blk);

/* need_blk: the caller changes the entry, so it needs its block (loc->blk). */
static int find_entry(struct f2fs_sb *sb, struct f2fs_inode *dir, const char *name, size_t len,
		      struct entry_loc *loc, bool need_blk)
{
	struct fscrypt_nokey_name nk;
	uint8_t ct[F2FS_NAME_LEN + 1], cf[F2FS_NAME_LEN];
	struct name_match m;
	int ret;

	loc->blk = NULL;
	ret = check_dir(sb, dir);
	if (ret)
		return ret;
	if (len == 0)
		return -ENOENT;
	if (len > F2FS_NAME_LEN)
		return -ENAMETOOLONG;

	/*
	 * Encrypted directories store ciphertext names hashed as such: with
	 * the key, encrypt the name; without it, the name must be a no-key
	 * name, which carries the hash and the ciphertext (or its digest).
	 */
	ret = setup_name(sb, dir, name, len, true, &m, ct, cf, &nk);
	if (ret)
		return ret;
	return lookup_entry(sb, dir, &m, loc, need_blk);
}

/* f2fs_setup_filename for a plaintext name; no-key names only if nokey_ok. */
static int setup_name(struct f2fs_sb *sb, struct f2fs_inode *dir, const char *name, size_t len,
		      bool nokey_ok, struct name_match *m, uint8_t ct[F2FS_NAME_LEN + 1],
		      uint8_t cf[F2FS_NAME_LEN], struct fscrypt_nokey_name *nk)
{
	const struct fscrypt_inode_info *ci = NULL;
	int ret;

	memset(m, 0, sizeof(*m));
	m->name = (const uint8_t *)name;
	m->len = len;
	if (f2fs_is_encrypted(dir)) {
		ret = f2fs_get_crypt_info(sb, dir, &ci);
		if (ret == -ENOKEY && nokey_ok) {
			/* the hash comes with the no-key name; nothing is folded */
			if (fscrypt_nokey_name_decode(name, len, nk))
				return -ENOENT;
			m->nk = nk;
			m->hash = nk->hash;
			return 0;
		}
		if (ret)
			return ret;
		ret = fscrypt_fname_encrypt(ci, name, len, ct, F2FS_NAME_LEN + 1);
		if (ret < 0)
			return ret;
		m->name = ct;
		m->len = (size_t)ret;
	}
	ret = fold_name(sb, dir, (const uint8_t *)name, len, cf, m);
	if (ret)
		return ret;
	if (m->cf)
		m->ci = ci;
	return hash_name(sb, dir, ci, (const uint8_t *)name, len, m);
}

/*
 * init_recovered_filename: the hash of a name in on-disk form (roll-forward's
 * i_name, or "..").  Encrypted + casefolded: the hash the name was created
 * with follows it in i_name (the caller's buffer holds F2FS_NAME_LEN bytes).
 */
static int disk_name_hash(struct f2fs_sb *sb, struct f2fs_inode *dir, const uint8_t *name,
			  size_t len, uint32_t *hash)
{
	struct name_match m = { .name = name, .len = len };
	uint8_t cf[F2FS_NAME_LEN];
	int err;

	if (is_dot(name, len) || !casefolded(sb, dir)) {
		*hash = f2fs_dentry_hash(name, len);
		return 0;
	}
	if (f2fs_is_encrypted(dir)) {
		if (len + 4 > F2FS_NAME_LEN)
			return -EINVAL;
		*hash = get_le32(name + len);
		return 0;
	}
	err = fold_name(sb, dir, name, len, cf, &m);
	if (!err)
		err = hash_name(sb, dir, NULL, name, len, &m);
	*hash = m.hash;
	return err;
}

/* The same, for a name already in its on-disk form; matched byte for byte. */
static int find_entry_disk(struct f2fs_sb *sb, struct f2fs_inode *dir, const uint8_t *name,
			   size_t len, struct entry_loc *loc, bool need_blk)
{
	struct name_match m = { .name = name, .len = len, .nk = NULL };
	int ret;

	loc->blk = NULL;
	ret = check_dir(sb, dir);
	if (ret)
		return ret;
	if (!len || len > F2FS_NAME_LEN)
		return -ENOENT;
	ret = disk_name_hash(sb, dir, name, len, &m.hash);
	if (ret)
		return ret;
	return lookup_entry(sb, dir, &m, loc, need_blk);
}

static int search_entry(struct f2fs_sb *sb, struct f2fs_inode *dir, const struct name_match *m,
			struct entry_loc *loc)
{
	struct f2fs_dentry_ptr d;
	uint32_t hash = m->hash, max_depth;
	uint64_t max_blocks;
	uint8_t *blk;
	int ret;


	if (dir->inline_flags & F2FS_INLINE_DENTRY) {
		f2fs_make_dentry_ptr_inline(&d, dir);
		ret = find_in_area(sb, dir, &d, INLINE_AREA, m, &loc->de);
		loc->lblk = INLINE_AREA;
		return ret < 0 ? ret : ret ? 0 : -ENOENT;
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
			ret = find_in_area(sb, dir, &d, lblk, m, &loc->de);
			loc->lblk = lblk;
		}
	}
	if (ret == 1) {
		loc->blk = blk;
		/* de.name points into blk, which the caller now owns */
		return 0;
	}
	free(blk);
	return ret < 0 ? ret : -ENOENT;
}

/* ---- the name index (dcache.c) ---- */

/* Lookups of a directory before it gets an index: one-off stats stay scans. */
#define DCACHE_AFTER_LOOKUPS 4

/* Level and bucket of a dentry block; false past the last level. */
static bool block_bucket(const struct f2fs_inode *dir, uint64_t lblk, uint32_t *level,
			 uint32_t *bucket)
{
	uint64_t start = 0;

	for (uint32_t l = 0; l < MAX_DIR_HASH_DEPTH; l++) {
		uint64_t n = (uint64_t)dir_buckets(l, dir->dir_level) * bucket_blocks(l);

		if (lblk < start + n) {
			*level = l;
			*bucket = (uint32_t)((lblk - start) / bucket_blocks(l));
			return true;
		}
		start += n;
	}
	return false;
}

static int index_area(struct f2fs_sb *sb, const struct f2fs_inode *dir, struct f2fs_dcache *dc,
		      const struct f2fs_dentry_ptr *d, uint64_t lblk, uint32_t nbucket,
		      uint32_t bucket)
{
	struct dentry_info de;
	uint32_t pos = 0;
	bool warned = false;
	int ret;

	while ((ret = next_dentry(sb, dir, d, lblk, &pos, &warned, false, &de)) == 1) {
		/* an entry outside its hash bucket is one no lookup reaches */
		if (nbucket && de.hash % nbucket != bucket)
			continue;
		ret = f2fs_dcache_add(dc, de.hash, de.name, de.name_len, de.ino, de.file_type,
				      lblk, de.bit);
		if (ret)
			return ret;
	}
	return ret;
}

/*
 * Every entry that search_entry() could find, in the order it would find
 * them: levels below current_depth, each block's entries in its hash
 * bucket.  NULL if the directory cannot be indexed (a damaged area, which
 * the scan then reports, or the mount's budget is spent).
 */
static struct f2fs_dcache *build_index(struct f2fs_sb *sb, struct f2fs_inode *dir)
{
	uint64_t nblocks = dir_blocks(dir), max_blocks = f2fs_max_file_blocks(dir);
	uint32_t max_depth = F2FS_MIN(dir->current_depth, (uint32_t)MAX_DIR_HASH_DEPTH);
	struct f2fs_dentry_ptr d;
	struct f2fs_dcache *dc;
	uint8_t *blk;
	int ret = 0;

	if (nblocks > UINT32_MAX / 16)
		return NULL;
	dc = f2fs_dcache_new(&sb->dcache_budget, (uint32_t)nblocks * 16);
	blk = f2fs_alloc_blocks(1);
	if (!dc || !blk)
		goto fail;
	for (uint64_t lblk = 0; lblk < nblocks && lblk < max_blocks && !ret; lblk++) {
		uint32_t level, bucket;
		int rd;

		if (!block_bucket(dir, lblk, &level, &bucket) || level >= max_depth)
			break;
		if (f2fs_dcache_bytes(dc) > sb->dcache_budget.limit)
			goto fail;
		rd = f2fs_read_data_block(sb, dir, (uint32_t)lblk, blk);
		if (rd < 0)
			goto fail;
		if (rd == 0)
			continue;
		f2fs_make_dentry_ptr_block(&d, blk);
		ret = index_area(sb, dir, dc, &d, lblk, dir_buckets(level, dir->dir_level), bucket);
	}
	if (ret < 0 || !f2fs_dcache_charge(dc))
		goto fail;
	free(blk);
	return dc;
fail:
	free(blk);
	f2fs_dcache_free(dc);
	return NULL;
}

/* Every change to a directory's entries drops its index (under its write lock). */
static void drop_index(struct f2fs_inode *dir)
{
	f2fs_dcache_free(atomic_exchange(&dir->dcache, NULL));
	atomic_store(&dir->dcache_lookups, 0);
	atomic_store(&dir->dcache_off, false);
	atomic_store(&dir->dcache_ra, false);
}

/* Inodes read ahead at once when a lookup in an indexed directory misses. */
#define DIR_RA_INODES 2048

struct ra_gather {
	uint32_t *inos, n;
};

static int ra_gather_ino(void *arg, const char *name, size_t len, uint32_t ino,
			 unsigned int file_type, uint64_t next_off)
{
	struct ra_gather *g = arg;

	(void)next_off;
	if (file_type == F2FS_FT_DIR && len <= 2 && name[0] == '.' && (len == 1 || name[1] == '.'))
		return 0;	/* "." and ".." */
	g->inos[g->n++] = ino;
	return g->n == DIR_RA_INODES;
}

/*
 * A lookup in dir found an inode that is not in memory: stat after a
 * listing of names alone (find | xargs stat, ls -l) is about to ask for its
 * siblings too, one LOOKUP and one synchronous inode read each.  Read the
 * inode blocks of its entries ahead in one batch (sorted, neighbours
 * merged), once until the directory changes: the entries come from the
 * index if it has one, else from its dentries (the listing just read them).
 */
void f2fs_dir_ra_inodes(struct f2fs_sb *sb, struct f2fs_inode *dir)
{
	struct f2fs_dcache *dc;
	struct ra_gather g = { 0 };

	if (!f2fs_node_ra_blocks(sb) || atomic_exchange(&dir->dcache_ra, true))
		return;
	g.inos = malloc(DIR_RA_INODES * sizeof(*g.inos));
	if (!g.inos)
		return;
	dc = atomic_load(&dir->dcache);
	if (dc)
		g.n = f2fs_dcache_inos(dc, g.inos, DIR_RA_INODES);
	else if (f2fs_dir_iterate(sb, dir, 0, ra_gather_ino, &g) < 0)
		g.n = 0;	/* advice only: the lookups report what is wrong */
	f2fs_ra_inode_blocks(sb, g.inos, g.n);
	free(g.inos);
}

/*
 * search_entry() for callers that only read the entry: answered from the
 * index where the name is compared byte for byte (not a no-key name, not
 * folded), built once a directory of dentry blocks is looked up often.
 */
static int lookup_entry(struct f2fs_sb *sb, struct f2fs_inode *dir, const struct name_match *m,
			struct entry_loc *loc, bool need_blk)
{
	struct f2fs_dcache *dc;
	struct f2fs_dcache_entry e;

	if (need_blk || m->nk || m->cf || (dir->inline_flags & F2FS_INLINE_DENTRY) ||
	    !sb->dcache_budget.limit)
		return search_entry(sb, dir, m, loc);
	dc = atomic_load(&dir->dcache);
	if (!dc) {
		struct f2fs_dcache *none = NULL;

		if (atomic_load(&dir->dcache_off) ||
		    atomic_fetch_add(&dir->dcache_lookups, 1) + 1 < DCACHE_AFTER_LOOKUPS)
			return search_entry(sb, dir, m, loc);
		dc = build_index(sb, dir);
		if (!dc) {
			atomic_store(&dir->dcache_off, true);
			return search_entry(sb, dir, m, loc);
		}
		/* readers build in parallel under the read lock: one index stays */
		if (!atomic_compare_exchange_strong(&dir->dcache, &none, dc)) {
			f2fs_dcache_free(dc);
			dc = none;
		}
	}
	loc->blk = NULL;
	if (!f2fs_dcache_find(dc, m->hash, m->name, m->len, &e))
		return -ENOENT;
	loc->lblk = e.lblk;
	memset(&loc->de, 0, sizeof(loc->de));
	loc->de.ino = e.ino;
	loc->de.file_type = e.file_type;
	loc->de.bit = e.bit;
	loc->de.hash = m->hash;
	loc->de.name_len = (uint16_t)m->len;
	/* as find_in_area: the entry that matches has its target checked */
	return dentry_target_bad(sb, dir, e.lblk, e.bit, &loc->de);
}

int f2fs_dir_lookup(struct f2fs_sb *sb, struct f2fs_inode *dir, const char *name, size_t len,
		    uint32_t *ino, unsigned int *file_type)
{
	struct entry_loc loc;
	int ret = find_entry(sb, dir, name, len, &loc, false);

	if (ret)
		return ret;
	*ino = loc.de.ino;
	*file_type = loc.de.file_type;
	free(loc.blk);
	return 0;
}

/*
 * Emit the entries of one area from slot `start`; positions are
 * base + slot.  Returns 1 if fill asked to stop, 0 at the end, <0 error.
 */
static int emit_area(struct f2fs_sb *sb, const struct f2fs_inode *dir,
		     const struct f2fs_dentry_ptr *d, uint64_t blk, uint64_t base,
		     uint32_t start, const struct fscrypt_inode_info *ci, f2fs_filldir_t fill,
		     void *ctx)
{
	char shown[FSCRYPT_NOKEY_NAME_MAX_ENCODED + F2FS_NAME_LEN + 1];
	struct dentry_info de;
	uint32_t pos = 0;
	bool warned = false;
	int ret;

	/*
	 * Walk from the first slot even when resuming: a position a program
	 * seeks to may lie inside an entry's name slots, whose dentry fields
	 * are zero or stale.  That is no damage; the listing resumes at the
	 * next entry that starts at or after it.
	 */
	while ((ret = next_dentry(sb, dir, d, blk, &pos, &warned, true, &de)) == 1) {
		const char *name = (const char *)de.name;
		size_t len = de.name_len;

		if (de.bit < start)
			continue;

		if (f2fs_is_encrypted(dir) && !is_dot(de.name, len)) {
			int n = ci ? fscrypt_fname_decrypt(ci, de.name, len, shown, sizeof(shown))
				   : fscrypt_nokey_name_encode(de.hash, 0, de.name, len, shown,
							       sizeof(shown));

			/* a damaged ciphertext may decrypt to no name or to a path */
			if (n <= 0 || memchr(shown, '/', (size_t)n) || memchr(shown, 0, (size_t)n)) {
				f2fs_warn(sb, "directory %u: entry at slot %u has an undecodable "
					  "encrypted name; skipped", dir->ino, de.bit);
				atomic_store(&sb->need_fsck, true);
				continue;
			}
			name = shown;
			len = (size_t)n;
		}
		if (fill(ctx, name, len, de.ino, de.file_type, base + de.next))
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
	const struct fscrypt_inode_info *ci = NULL;
	struct f2fs_dentry_ptr d;
	uint64_t n, nblocks;
	uint32_t start;
	uint8_t *blk;
	int ret;

	ret = check_dir(sb, dir);
	if (ret)
		return ret;
	if (f2fs_is_encrypted(dir)) {
		/* without the key, readdir shows no-key names */
		ret = f2fs_get_crypt_info(sb, dir, &ci);
		if (ret && ret != -ENOKEY)
			return ret;
		if (ret)
			ci = NULL;
	}

	if (dir->inline_flags & F2FS_INLINE_DENTRY) {
		f2fs_make_dentry_ptr_inline(&d, dir);
		if (off >= d.max)
			return 0;
		ret = emit_area(sb, dir, &d, INLINE_AREA, 0, (uint32_t)off, ci, fill, ctx);
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
	uint64_t ra_next = n;
	while (n < nblocks && ret == 0) {
		uint32_t pblk = NULL_ADDR, run = 0;

		/* a listing reads every block: ask for the next batch together */
		if (n >= ra_next) {
			uint64_t left = nblocks - n;

			f2fs_ra_dir_blocks(sb, dir, (uint32_t)n,
					   (uint32_t)F2FS_MIN(left, (uint64_t)F2FS_DIR_RA_BLOCKS));
			ra_next = n + F2FS_DIR_RA_BLOCKS;
		}
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
				ret = emit_area(sb, dir, &d, n, n * NR_DENTRY_IN_BLOCK, start, ci,
						fill, ctx);
			}
			start = 0;
		}
	}
	free(blk);
	return ret < 0 ? ret : 0;
}

/* ======================= the write side ======================= */

uint8_t f2fs_file_type(uint32_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG: return F2FS_FT_REG_FILE;
	case S_IFDIR: return F2FS_FT_DIR;
	case S_IFCHR: return F2FS_FT_CHRDEV;
	case S_IFBLK: return F2FS_FT_BLKDEV;
	case S_IFIFO: return F2FS_FT_FIFO;
	case S_IFSOCK: return F2FS_FT_SOCK;
	case S_IFLNK: return F2FS_FT_SYMLINK;
	default: return F2FS_FT_UNKNOWN;
	}
}

static inline void set_bit_le(uint32_t nr, uint8_t *map)
{
	map[nr >> 3] |= (uint8_t)(1u << (nr & 7));
}

static inline void clear_bit_le(uint32_t nr, uint8_t *map)
{
	map[nr >> 3] &= (uint8_t)~(1u << (nr & 7));
}

/* f2fs_room_for_filename: first run of `slots` free slots, or max. */
static uint32_t room_for_filename(const uint8_t *bitmap, uint32_t slots, uint32_t max)
{
	uint32_t start = 0;

	while (start + slots <= max) {
		uint32_t i;

		while (start < max && f2fs_test_bit_le(start, bitmap))
			start++;
		for (i = 0; i < slots && start + i < max; i++)
			if (f2fs_test_bit_le(start + i, bitmap))
				break;
		if (i == slots)
			return start;
		start += i + 1;
	}
	return max;
}

/* f2fs_update_dentry: fill slot bit_pos (and the name's continuation slots). */
static void update_dentry(const struct f2fs_dentry_ptr *d, uint32_t bit_pos, const char *name,
			  size_t len, uint32_t hash, uint32_t ino, uint8_t ftype)
{
	uint8_t *de = (uint8_t *)d->dentry + (size_t)bit_pos * SIZE_OF_DIR_ENTRY;
	uint32_t slots = GET_DENTRY_SLOTS((uint32_t)len);

	put_le32(de + DE_HASH, hash);
	put_le32(de + DE_INO, ino);
	put_le16(de + DE_NAME_LEN, (uint16_t)len);
	de[DE_FILE_TYPE] = ftype;
	memcpy((uint8_t *)d->filename + (size_t)bit_pos * F2FS_SLOT_LEN, name, len);
	for (uint32_t i = 0; i < slots; i++)
		set_bit_le(bit_pos + i, (uint8_t *)d->bitmap);
}

/*
 * The name an inode records for roll-forward recovery (init_dent_inode).
 * Encrypted + casefolded: the hash follows the name when it fits; when it
 * does not, fsync() must checkpoint instead (lost pino), as the kernel's.
 */
static void set_inode_name(const struct f2fs_sb *sb, const struct f2fs_inode *dir,
			   struct f2fs_inode *inode, const char *name, size_t len, uint32_t hash)
{
	put_le32(inode->node + I_NAMELEN, (uint32_t)len);
	memset(inode->node + I_NAME, 0, F2FS_NAME_LEN);
	memcpy(inode->node + I_NAME, name, len);
	if (f2fs_is_encrypted(dir) && casefolded(sb, dir)) {
		if (len + 4 <= F2FS_NAME_LEN)
			put_le32(inode->node + I_NAME + len, hash);
		else
			inode->advise |= FADVISE_LOST_PINO_BIT;
	}
}

/*
 * f2fs_move_inline_dirents: the inline slots move 1:1 into block 0.  If
 * block 0 cannot be written (out of space), the inline dentries are put
 * back: the directory must not lose its names to a failed create.
 */
static int convert_inline_dir(struct f2fs_sb *sb, struct f2fs_inode *dir)
{
	struct f2fs_dentry_ptr src, dst;
	uint8_t *area = dir->node + I_ADDR + 4 * f2fs_addr_start(dir);
	size_t area_len = 4 * DEF_INLINE_RESERVED_SIZE + f2fs_max_inline_data(dir);
	uint8_t *blk = f2fs_alloc_blocks(2), *saved;
	uint8_t flags = dir->inline_flags;
	uint32_t depth = dir->current_depth;
	uint64_t size = dir->size;
	int err;

	if (!blk)
		return -ENOMEM;
	saved = blk + F2FS_BLKSIZE;
	memset(blk, 0, F2FS_BLKSIZE);
	f2fs_make_dentry_ptr_inline(&src, dir);
	f2fs_make_dentry_ptr_block(&dst, blk);
	memcpy((uint8_t *)dst.bitmap, src.bitmap, (src.max + 7) / 8);
	memcpy((uint8_t *)dst.dentry, src.dentry, (size_t)src.max * SIZE_OF_DIR_ENTRY);
	memcpy((uint8_t *)dst.filename, src.filename, (size_t)src.max * F2FS_SLOT_LEN);
	/* the inline area (and the reserved word before it) becomes i_addr again */
	memcpy(saved, area, area_len);
	memset(area, 0, area_len);
	dir->inline_flags &= (uint8_t)~F2FS_INLINE_DENTRY;
	dir->current_depth = 1;
	if (dir->size < F2FS_BLKSIZE)
		dir->size = F2FS_BLKSIZE;
	err = f2fs_write_data_block(sb, dir, 0, blk);
	if (err) {
		/* a block mapped before the failure goes first (the area is i_addr now) */
		f2fs_truncate_hole(sb, dir, 0, 1);
		memcpy(area, saved, area_len);
		dir->inline_flags = flags;
		dir->current_depth = depth;
		dir->size = size;
		f2fs_mark_inode_dirty(sb, dir);	/* the failed write marked the cleared copy */
	}
	free(blk);
	return err;
}

static void touch_dir(struct f2fs_inode *dir)
{
	struct f2fs_timespec now;

	f2fs_now(&now);
	f2fs_inode_set_time(dir, F2FS_TIME_MTIME, &now);
	f2fs_inode_set_time(dir, F2FS_TIME_CTIME, &now);
}

/*
 * f2fs_add_dentry: into the inline area while it has room, else into the
 * first bucket block with room, level by level, growing the hash depth as
 * the kernel's f2fs_add_regular_entry does.
 */
static int add_entry(struct f2fs_sb *sb, struct f2fs_inode *dir, const char *name, size_t len,
		     uint32_t hash, struct f2fs_inode *inode, bool new_inode);

int f2fs_add_link(struct f2fs_sb *sb, struct f2fs_inode *dir, const char *name, size_t len,
		  struct f2fs_inode *inode, bool new_inode)
{
	uint8_t ct[F2FS_NAME_LEN + 1], cf[F2FS_NAME_LEN];
	struct name_match m;
	int err = check_dir(sb, dir);

	if (err)
		return err;
	if (!len || len > F2FS_NAME_LEN)
		return len ? -ENAMETOOLONG : -ENOENT;
	/* the disk name is the ciphertext in an encrypted directory */
	err = setup_name(sb, dir, name, len, false, &m, ct, cf, NULL);
	if (err)
		return err;
	return add_entry(sb, dir, (const char *)m.name, m.len, m.hash, inode, new_inode);
}

/* Roll-forward relinks with the name the inode recorded, already on-disk form. */
int f2fs_add_link_disk(struct f2fs_sb *sb, struct f2fs_inode *dir, const uint8_t *name,
		       size_t len, struct f2fs_inode *inode)
{
	uint32_t hash;
	int err = check_dir(sb, dir);

	if (!err)
		err = disk_name_hash(sb, dir, name, len, &hash);
	if (err)
		return err;
	return add_entry(sb, dir, (const char *)name, len, hash, inode, true);
}

int f2fs_dir_lookup_disk(struct f2fs_sb *sb, struct f2fs_inode *dir, const uint8_t *name,
			 size_t len, uint32_t *ino)
{
	struct entry_loc loc;
	int ret = find_entry_disk(sb, dir, name, len, &loc, false);

	if (ret)
		return ret;
	*ino = loc.de.ino;
	free(loc.blk);
	return 0;
}

int f2fs_delete_entry_disk(struct f2fs_sb *sb, struct f2fs_inode *dir, const uint8_t *name,
			   size_t len, struct f2fs_inode *inode);

static int add_entry(struct f2fs_sb *sb, struct f2fs_inode *dir, const char *name, size_t len,
		     uint32_t hash, struct f2fs_inode *inode, bool new_inode)
{
	uint32_t slots = GET_DENTRY_SLOTS((uint32_t)len);
	uint8_t ftype = f2fs_file_type(inode->mode);
	struct f2fs_dentry_ptr d;
	uint32_t level = 0, depth;
	uint8_t *blk = NULL;
	int err;

	err = check_dir(sb, dir);
	if (err)
		return err;
	if (!len || len > F2FS_NAME_LEN)
		return len ? -ENAMETOOLONG : -ENOENT;

	if (dir->inline_flags & F2FS_INLINE_DENTRY) {
		uint32_t bit;

		f2fs_make_dentry_ptr_inline(&d, dir);
		bit = room_for_filename(d.bitmap, slots, d.max);
		if (bit < d.max) {
			update_dentry(&d, bit, name, len, hash, inode->ino, ftype);
			goto added;
		}
		err = convert_inline_dir(sb, dir);
		if (err)
			return err;
	}

	blk = f2fs_alloc_blocks(1);
	if (!blk)
		return -ENOMEM;
	depth = dir->current_depth;
	for (;;) {
		uint32_t nbucket, nblock;
		uint64_t bidx;

		if (depth >= MAX_DIR_HASH_DEPTH && level >= depth) {
			err = -ENOSPC;
			goto out;
		}
		if (level == depth)
			depth++;
		nbucket = dir_buckets(level, dir->dir_level);
		nblock = bucket_blocks(level);
		bidx = dir_block_index(level, dir->dir_level, hash % nbucket);
		for (uint64_t b = bidx; b < bidx + nblock; b++) {
			uint32_t bit;
			int rd;

			if (b >= f2fs_max_file_blocks(dir)) {
				err = -ENOSPC;
				goto out;
			}
			rd = f2fs_read_data_block(sb, dir, (uint32_t)b, blk);
			if (rd < 0) {
				err = rd;
				goto out;
			}
			f2fs_make_dentry_ptr_block(&d, blk);
			bit = room_for_filename(d.bitmap, slots, NR_DENTRY_IN_BLOCK);
			if (bit >= NR_DENTRY_IN_BLOCK)
				continue;
			update_dentry(&d, bit, name, len, hash, inode->ino, ftype);
			{
				uint64_t old_size = dir->size;
				struct f2fs_dcache *dc = dir->dcache;
				uint32_t old_depth = dir->current_depth;

				if ((b + 1) * F2FS_BLKSIZE > dir->size)
					dir->size = (b + 1) * F2FS_BLKSIZE;
				dir->current_depth = depth;
				err = f2fs_write_data_block(sb, dir, (uint32_t)b, blk);
				if (err) {
					/* out of space: the directory stays as it was */
					dir->size = old_size;
					dir->current_depth = old_depth;
					f2fs_mark_inode_dirty(sb, dir);
					goto out;
				}
				/* a new name lands in its hash bucket: lookups reach it */
				if (dc && f2fs_dcache_add(dc, hash, (const uint8_t *)name,
							  (uint16_t)len, inode->ino, ftype, b, bit))
					drop_index(dir);
			}
			goto added;
		}
		level++;
	}
added:
	if (new_inode)
		set_inode_name(sb, dir, inode, name, len, hash);
	inode->pino = dir->ino;
	if (new_inode && S_ISDIR(inode->mode))
		dir->links++;
	touch_dir(dir);
	err = f2fs_mark_inode_dirty(sb, dir);
	if (!err)
		err = f2fs_mark_inode_dirty(sb, inode);
out:
	free(blk);
	return err;
}

static int write_entry_area(struct f2fs_sb *sb, struct f2fs_inode *dir, struct entry_loc *loc)
{
	if (loc->lblk == INLINE_AREA)
		return f2fs_mark_inode_dirty(sb, dir);
	return f2fs_write_data_block(sb, dir, (uint32_t)loc->lblk, loc->blk);
}

/* f2fs_delete_entry: clear the slots; an emptied dentry block is freed. */
static int delete_at(struct f2fs_sb *sb, struct f2fs_inode *dir, struct entry_loc *loc,
		     struct f2fs_inode *inode);

int f2fs_delete_entry(struct f2fs_sb *sb, struct f2fs_inode *dir, const char *name, size_t len,
		      struct f2fs_inode *inode)
{
	struct entry_loc loc;
	int err = find_entry(sb, dir, name, len, &loc, true);

	return err ? err : delete_at(sb, dir, &loc, inode);
}

int f2fs_delete_entry_disk(struct f2fs_sb *sb, struct f2fs_inode *dir, const uint8_t *name,
			   size_t len, struct f2fs_inode *inode)
{
	struct entry_loc loc;
	int err = find_entry_disk(sb, dir, name, len, &loc, true);

	return err ? err : delete_at(sb, dir, &loc, inode);
}

static int delete_at(struct f2fs_sb *sb, struct f2fs_inode *dir, struct entry_loc *lp,
		     struct f2fs_inode *inode)
{
	struct f2fs_dentry_ptr d;
	struct entry_loc loc = *lp;
	uint32_t slots;
	int err;

	if (loc.lblk == INLINE_AREA)
		f2fs_make_dentry_ptr_inline(&d, dir);
	else
		f2fs_make_dentry_ptr_block(&d, loc.blk);
	slots = GET_DENTRY_SLOTS(loc.de.name_len);
	for (uint32_t i = 0; i < slots; i++)
		clear_bit_le(loc.de.bit + i, (uint8_t *)d.bitmap);

	if (loc.lblk != INLINE_AREA &&
	    room_for_filename(d.bitmap, NR_DENTRY_IN_BLOCK, NR_DENTRY_IN_BLOCK) == 0) {
		/* nothing left in the block: punch it, as the kernel does */
		err = f2fs_truncate_hole(sb, dir, loc.lblk, loc.lblk + 1);
	} else {
		err = write_entry_area(sb, dir, &loc);
	}
	/* the index forgets the name; with a twin name in it, it is rebuilt */
	if (!err && dir->dcache &&
	    f2fs_dcache_remove(dir->dcache, loc.de.hash, loc.de.name, loc.de.name_len))
		drop_index(dir);
	free(loc.blk);
	if (err)
		return err;
	if (inode && S_ISDIR(inode->mode) && dir->links > 2)
		dir->links--;
	touch_dir(dir);
	return f2fs_mark_inode_dirty(sb, dir);
}

/* Point the entry found at `loc` to inode; frees loc->blk. */
static int set_link_at(struct f2fs_sb *sb, struct f2fs_inode *dir, struct entry_loc *loc,
		       struct f2fs_inode *inode)
{
	struct f2fs_dentry_ptr d;
	uint8_t *de;
	int err;

	if (loc->lblk == INLINE_AREA)
		f2fs_make_dentry_ptr_inline(&d, dir);
	else
		f2fs_make_dentry_ptr_block(&d, loc->blk);
	de = (uint8_t *)d.dentry + (size_t)loc->de.bit * SIZE_OF_DIR_ENTRY;
	put_le32(de + DE_INO, inode->ino);
	de[DE_FILE_TYPE] = f2fs_file_type(inode->mode);
	err = write_entry_area(sb, dir, loc);
	if (!err && dir->dcache)
		f2fs_dcache_repoint(dir->dcache, loc->de.hash, loc->de.name, loc->de.name_len,
				    inode->ino, de[DE_FILE_TYPE]);
	free(loc->blk);
	loc->blk = NULL;
	if (err)
		return err;
	touch_dir(dir);
	return f2fs_mark_inode_dirty(sb, dir);
}

/* f2fs_set_link: point an existing entry at another inode (rename over). */
int f2fs_set_link(struct f2fs_sb *sb, struct f2fs_inode *dir, const char *name, size_t len,
		  struct f2fs_inode *inode)
{
	struct entry_loc loc;
	int err = find_entry(sb, dir, name, len, &loc, true);

	if (err)
		return err;
	return set_link_at(sb, dir, &loc, inode);
}

/* f2fs_make_empty_dir: "." and ".." in the inline area or in block 0. */
int f2fs_make_empty_dir(struct f2fs_sb *sb, struct f2fs_inode *inode, struct f2fs_inode *parent)
{
	struct f2fs_dentry_ptr d;
	uint8_t *blk;
	int err;

	drop_index(inode);
	if (inode->inline_flags & F2FS_INLINE_DENTRY) {
		f2fs_make_dentry_ptr_inline(&d, inode);
		update_dentry(&d, 0, ".", 1, 0, inode->ino, F2FS_FT_DIR);
		update_dentry(&d, 1, "..", 2, 0, parent->ino, F2FS_FT_DIR);
		if (inode->size < f2fs_max_inline_data(inode))
			inode->size = f2fs_max_inline_data(inode);
		return f2fs_mark_inode_dirty(sb, inode);
	}
	blk = f2fs_alloc_blocks(1);
	if (!blk)
		return -ENOMEM;
	memset(blk, 0, F2FS_BLKSIZE);
	f2fs_make_dentry_ptr_block(&d, blk);
	update_dentry(&d, 0, ".", 1, 0, inode->ino, F2FS_FT_DIR);
	update_dentry(&d, 1, "..", 2, 0, parent->ino, F2FS_FT_DIR);
	inode->current_depth = 1;
	inode->size = F2FS_BLKSIZE;
	err = f2fs_write_data_block(sb, inode, 0, blk);
	free(blk);
	return err;
}

static int nonempty_cb(void *ctx, const char *name, size_t len, uint32_t ino,
		       unsigned int file_type, uint64_t next_off)
{
	bool *found = ctx;

	if ((len == 1 && name[0] == '.') || (len == 2 && name[0] == '.' && name[1] == '.'))
		return 0;
	*found = true;
	return 1;
}

int f2fs_empty_dir(struct f2fs_sb *sb, struct f2fs_inode *dir)
{
	bool found = false;
	int err = f2fs_dir_iterate(sb, dir, 0, nonempty_cb, &found);

	if (err)
		return err;
	return !found;
}

/* Repoint ".." of a directory moved to a new parent (f2fs_set_link on ".."). */
int f2fs_set_dotdot(struct f2fs_sb *sb, struct f2fs_inode *dir, struct f2fs_inode *parent)
{
	/* ".." is stored in plain text, also in encrypted directories */
	struct entry_loc loc;
	int err = find_entry_disk(sb, dir, (const uint8_t *)"..", 2, &loc, true);

	if (err)
		return err;
	return set_link_at(sb, dir, &loc, parent);
}
