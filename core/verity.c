// SPDX-License-Identifier: GPL-2.0
/*
 * fs-verity as the kernel's f2fs stores it (fs/f2fs/verity.c) and checks
 * it (fs/verity/): the Merkle tree lies past EOF from the first 64 KiB
 * boundary at or after i_size, root level first and the level over the
 * data last; the fsverity_descriptor follows the tree; the xattr
 * (F2FS_XATTR_INDEX_VERITY, "v") holds where the descriptor is, and
 * FADVISE_VERITY_BIT in i_advise marks the file.  Every block a read
 * returns is hashed and checked up the tree to a block verified before or
 * to the root hash; verified tree blocks are kept (a few per file) so a
 * sequential read checks each tree block once.  The hashes are crypto/'s
 * (fsverity.h, OpenSSL).  Built-in signatures are not checked: a
 * descriptor may carry one, and it is kept, as by a kernel built without
 * CONFIG_FS_VERITY_BUILTIN_SIGNATURES.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "f2fs.h"

#define VERITY_META_ALIGN	65536u	/* f2fs_verity_metadata_pos */
#define VERITY_DESC_SIZE	256u	/* struct fsverity_descriptor */
#define VERITY_MAX_DESC		16384u	/* FS_VERITY_MAX_DESCRIPTOR_SIZE */
#define VERITY_LOC_SIZE		16u	/* struct fsverity_descriptor_location */

/* struct fsverity_descriptor */
#define VD_VERSION	0
#define VD_HASH_ALG	1
#define VD_LOG_BLOCK	2
#define VD_SALT_SIZE	3
#define VD_SIG_SIZE	4
#define VD_DATA_SIZE	8
#define VD_ROOT_HASH	16
#define VD_SALT		80
#define VD_RESERVED	112
#define VD_RESERVED_LEN	144

/* Data or metadata, past EOF too: compressed files through their clusters. */
static ssize_t read_blocks(struct f2fs_sb *sb, struct f2fs_inode *inode,
			   const struct fscrypt_inode_info *ci, void *buf, size_t len, uint64_t off)
{
	if (off + len < off || off + len > f2fs_max_file_blocks(inode) * F2FS_BLKSIZE)
		return -EFBIG;
	if (f2fs_is_compressed(inode))
		return f2fs_read_compressed(sb, inode, ci, buf, len, off);
	return f2fs_read_range(sb, inode, ci, buf, len, off);
}

static uint64_t metadata_pos(const struct f2fs_inode *inode)
{
	return (inode->size + VERITY_META_ALIGN - 1) / VERITY_META_ALIGN * VERITY_META_ALIGN;
}

/*
 * fsverity_init_merkle_tree_params: check the algorithm and block size,
 * then lay out the levels (level num_levels - 1, one block, comes first).
 */
static int init_params(struct f2fs_sb *sb, struct f2fs_inode *inode, struct f2fs_verity_info *vi,
		       unsigned int alg, unsigned int log_blocksize, const uint8_t *salt,
		       size_t salt_size)
{
	uint64_t blocks, in_level[F2FS_VERITY_MAX_LEVELS], offset = 0;
	unsigned int log_digest = 0;
	int err;

	vi->alg = alg;
	vi->digest_size = fsverity_digest_size(alg);
	if (!vi->digest_size) {
		f2fs_warn(sb, "verity: inode %u: unknown hash algorithm %u", inode->ino, alg);
		return -EINVAL;
	}
	/* at least 1 KiB, at most the page and block size */
	if (log_blocksize < 10 || log_blocksize > F2FS_BLKSIZE_BITS ||
	    (1u << log_blocksize) < 2 * vi->digest_size) {
		f2fs_warn(sb, "verity: inode %u: unsupported log_blocksize %u", inode->ino,
			  log_blocksize);
		return -EINVAL;
	}
	vi->log_blocksize = log_blocksize;
	vi->block_size = 1u << log_blocksize;
	while ((1u << log_digest) < vi->digest_size)
		log_digest++;
	vi->log_arity = log_blocksize - log_digest;
	vi->num_levels = 0;
	blocks = (inode->size + vi->block_size - 1) >> log_blocksize;
	while (blocks > 1) {
		if (vi->num_levels >= F2FS_VERITY_MAX_LEVELS) {
			f2fs_err(sb, "verity: inode %u: too many levels in the Merkle tree",
				 inode->ino);
			return -EFBIG;
		}
		blocks = (blocks + (1u << vi->log_arity) - 1) >> vi->log_arity;
		in_level[vi->num_levels++] = blocks;
	}
	for (int level = (int)vi->num_levels - 1; level >= 0; level--) {
		vi->level_start[level] = offset;
		offset += in_level[level];
	}
	vi->tree_blocks = offset;
	vi->tree_pos = metadata_pos(inode);
	err = fsverity_hash_new(alg, salt, salt_size, &vi->hash);
	if (err)
		return err;
	pthread_mutex_init(&vi->lock, NULL);
	for (int i = 0; i < F2FS_VERITY_CACHE; i++)
		vi->cache_idx[i] = UINT64_MAX;
	return 0;
}

/* f2fs_get_verity_descriptor: the location in the xattr, checked. */
static int read_location(struct f2fs_sb *sb, struct f2fs_inode *inode, uint64_t *pos,
			 uint32_t *size)
{
	uint8_t loc[VERITY_LOC_SIZE];
	ssize_t n = f2fs_xattr_get_raw(sb, inode, F2FS_XATTR_INDEX_VERITY, "v", 1, loc, sizeof(loc));

	if (n < 0 && n != -ERANGE)
		return (int)n;
	if (n != (ssize_t)sizeof(loc) || get_le32(loc) != 1) {
		f2fs_warn(sb, "verity: inode %u: unknown verity xattr format", inode->ino);
		return -EINVAL;
	}
	*size = get_le32(loc + 4);
	*pos = get_le64(loc + 8);
	if (*pos + *size < *pos ||
	    *pos + *size > f2fs_max_file_blocks(inode) * F2FS_BLKSIZE ||
	    *pos < metadata_pos(inode)) {
		return f2fs_corrupted(sb, "verity: inode %u: invalid verity xattr (descriptor at %llu, "
				      "%u bytes)", inode->ino, (unsigned long long)*pos, *size);
	}
	if (*size < VERITY_DESC_SIZE || *size > VERITY_MAX_DESC) {
		f2fs_err(sb, "verity: inode %u: descriptor of %u bytes", inode->ino, *size);
		return *size > VERITY_MAX_DESC ? -EMSGSIZE : -EINVAL;
	}
	return 0;
}

/* validate_fsverity_descriptor */
static int check_descriptor(struct f2fs_sb *sb, struct f2fs_inode *inode, const uint8_t *d,
			    uint32_t size)
{
	const char *why = NULL;

	if (d[VD_VERSION] != 1)
		why = "unrecognized descriptor version";
	else if (memcmp(d + VD_RESERVED, (const uint8_t[VD_RESERVED_LEN]){ 0 }, VD_RESERVED_LEN))
		why = "reserved bits set in descriptor";
	else if (d[VD_SALT_SIZE] > 32)
		why = "invalid salt_size";
	else if (get_le64(d + VD_DATA_SIZE) != inode->size)
		why = "descriptor's data_size is not the inode's size";
	else if (get_le32(d + VD_SIG_SIZE) > size - VERITY_DESC_SIZE)
		why = "signature overflows verity descriptor";
	if (why) {
		f2fs_err(sb, "verity: inode %u: %s", inode->ino, why);
		return -EINVAL;
	}
	return 0;
}

static ssize_t read_meta(struct f2fs_sb *sb, struct f2fs_inode *inode, void *buf, size_t len,
			 uint64_t pos)
{
	const struct fscrypt_inode_info *ci = NULL;
	int err = f2fs_is_encrypted(inode) ? f2fs_get_crypt_info(sb, inode, &ci) : 0;

	return err ? err : read_blocks(sb, inode, ci, buf, len, pos);
}

static int load_info(struct f2fs_sb *sb, struct f2fs_inode *inode, struct f2fs_verity_info **out)
{
	struct f2fs_verity_info *vi;
	uint8_t *desc;
	uint64_t pos = 0;
	uint32_t size = 0;
	ssize_t n;
	int err;

	/* sanity_check_inode: a verity file's data is never inline */
	if (inode->inline_flags & F2FS_INLINE_DATA)
		return f2fs_corrupted(sb, "verity: inode %u has inline data", inode->ino);
	err = read_location(sb, inode, &pos, &size);
	if (err)
		return err;
	desc = malloc(size);
	vi = calloc(1, sizeof(*vi));
	if (!desc || !vi) {
		err = -ENOMEM;
		goto out;
	}
	n = read_meta(sb, inode, desc, size, pos);
	err = n < 0 ? (int)n : 0;
	if (!err)
		err = check_descriptor(sb, inode, desc, size);
	if (!err)
		err = init_params(sb, inode, vi, desc[VD_HASH_ALG], desc[VD_LOG_BLOCK],
				  desc + VD_SALT, desc[VD_SALT_SIZE]);
	if (err)
		goto out;
	memcpy(vi->root_hash, desc + VD_ROOT_HASH, vi->digest_size);
	/* compute_file_digest: the descriptor without signature, sig_size 0 */
	put_le32(desc + VD_SIG_SIZE, 0);
	err = fsverity_hash_buffer(vi->alg, desc, VERITY_DESC_SIZE, vi->file_digest);
	if (!err) {
		*out = vi;
		vi = NULL;
	}
out:
	if (vi && vi->hash)
		f2fs_verity_info_free(vi);
	else
		free(vi);
	free(desc);
	return err;
}

int f2fs_verity_get_info(struct f2fs_sb *sb, struct f2fs_inode *inode,
			 struct f2fs_verity_info **out)
{
	struct f2fs_verity_info *vi = atomic_load(&inode->verity), *none = NULL;
	int err;

	if (vi) {
		*out = vi;
		return 0;
	}
	err = load_info(sb, inode, &vi);
	if (err)
		return err;
	/* readers share the inode lock: the first to finish wins */
	if (!atomic_compare_exchange_strong(&inode->verity, &none, vi)) {
		f2fs_verity_info_free(vi);
		vi = none;
	}
	*out = vi;
	return 0;
}

/* fs/verity/read_metadata.c: the tree, the descriptor (sig_size 0, no
 * signature) or the signature, from off; the byte count. */
ssize_t f2fs_verity_metadata(struct f2fs_sb *sb, struct f2fs_inode *inode, uint64_t type,
			     uint64_t off, void *buf, size_t len)
{
	const struct fscrypt_inode_info *ci = NULL;
	struct f2fs_verity_info *vi;
	uint8_t *desc = NULL;
	uint64_t pos = 0, size;
	uint32_t dsize = 0, sig;
	ssize_t n;
	int err = f2fs_verity_get_info(sb, inode, &vi);

	if (err)
		return err;
	if (type == 1) {
		size = vi->tree_blocks * vi->block_size;
		if (off >= size)
			return 0;
		len = (size_t)F2FS_MIN((uint64_t)len, size - off);
		err = f2fs_is_encrypted(inode) ? f2fs_get_crypt_info(sb, inode, &ci) : 0;
		return err ? err : read_blocks(sb, inode, ci, buf, len, vi->tree_pos + off);
	}
	if (type != 2 && type != 3)
		return -EINVAL;
	err = read_location(sb, inode, &pos, &dsize);
	desc = err ? NULL : malloc(dsize);
	if (!err && !desc)
		err = -ENOMEM;
	n = err ? err : read_meta(sb, inode, desc, dsize, pos);
	if (n >= 0)
		n = check_descriptor(sb, inode, desc, dsize);
	if (n < 0) {
		free(desc);
		return n;
	}
	sig = get_le32(desc + VD_SIG_SIZE);
	if (type == 2) {
		put_le32(desc + VD_SIG_SIZE, 0);
		size = VERITY_DESC_SIZE;
		pos = 0;
	} else {
		size = sig;
		pos = VERITY_DESC_SIZE;
	}
	if (type == 3 && !sig)
		n = -ENODATA;
	else if (off >= size)
		n = 0;
	else {
		n = (ssize_t)F2FS_MIN((uint64_t)len, size - off);
		memcpy(buf, desc + pos + off, (size_t)n);
	}
	free(desc);
	return n;
}

/* ---- verification (fs/verity/verify.c) ---- */

/* Copy the hash at hoff of cached tree block idx; false if not cached. */
static bool cache_hash(struct f2fs_verity_info *vi, uint64_t idx, unsigned int hoff, uint8_t *out)
{
	bool hit = false;

	pthread_mutex_lock(&vi->lock);
	for (int i = 0; vi->cache && i < F2FS_VERITY_CACHE; i++) {
		if (vi->cache_idx[i] != idx)
			continue;
		memcpy(out, vi->cache + (size_t)i * vi->block_size + (size_t)hoff * vi->digest_size,
		       vi->digest_size);
		vi->cache_used[i] = ++vi->clock;
		hit = true;
		break;
	}
	pthread_mutex_unlock(&vi->lock);
	return hit;
}

/* Keep verified tree block idx, in place of the least recently used. */
static void cache_insert(struct f2fs_verity_info *vi, uint64_t idx, const uint8_t *block)
{
	int victim = 0;

	pthread_mutex_lock(&vi->lock);
	if (!vi->cache)
		vi->cache = malloc((size_t)F2FS_VERITY_CACHE * vi->block_size);
	for (int i = 0; vi->cache && i < F2FS_VERITY_CACHE; i++) {
		if (vi->cache_idx[i] == idx) {
			victim = -1;
			break;
		}
		if (vi->cache_used[i] < vi->cache_used[victim])
			victim = i;
	}
	if (vi->cache && victim >= 0) {
		memcpy(vi->cache + (size_t)victim * vi->block_size, block, vi->block_size);
		vi->cache_idx[victim] = idx;
		vi->cache_used[victim] = ++vi->clock;
	}
	pthread_mutex_unlock(&vi->lock);
}

/* level: the tree level whose stored hash differs, -1 for the root hash */
static int mismatch(struct f2fs_sb *sb, struct f2fs_inode *inode, uint64_t dblk, int level)
{
	if (level < 0)
		f2fs_err(sb, "verity: inode %u: data block %llu does not match its Merkle tree's "
			 "root hash: file corrupted", inode->ino, (unsigned long long)dblk);
	else
		f2fs_err(sb, "verity: inode %u: data block %llu does not match its Merkle tree "
			 "(level %d): file corrupted", inode->ino, (unsigned long long)dblk, level);
	return -EIO;
}

/*
 * Check data block dblk, whose hash is want: walk up from the level over
 * the data until a tree block verified before (the cache) or the root
 * hash vouches for the blocks read on the way, then keep those.
 */
static int verify_block(struct f2fs_sb *sb, struct f2fs_inode *inode,
			const struct fscrypt_inode_info *ci, struct f2fs_verity_info *vi,
			uint64_t dblk, uint8_t *want, uint8_t *path)
{
	unsigned int ds = vi->digest_size, bs = vi->block_size;
	uint64_t hblk[F2FS_VERITY_MAX_LEVELS], idx = dblk;
	unsigned int hoff[F2FS_VERITY_MAX_LEVELS];
	uint8_t have[FS_VERITY_MAX_DIGEST_SIZE];
	unsigned int level;
	int err;

	for (level = 0; level < vi->num_levels; level++) {
		hoff[level] = (unsigned int)(idx & ((1u << vi->log_arity) - 1));
		idx >>= vi->log_arity;
		hblk[level] = vi->level_start[level] + idx;
	}
	for (level = 0; level < vi->num_levels; level++) {
		uint8_t *blk = path + (size_t)level * bs;
		ssize_t n;

		if (cache_hash(vi, hblk[level], hoff[level], have)) {
			if (memcmp(have, want, ds))
				return mismatch(sb, inode, dblk, (int)level);
			break;
		}
		n = read_blocks(sb, inode, ci, blk, bs, vi->tree_pos + hblk[level] * bs);
		if (n < 0)
			return (int)n;
		if (memcmp(blk + (size_t)hoff[level] * ds, want, ds))
			return mismatch(sb, inode, dblk, (int)level);
		err = fsverity_hash_block(vi->hash, blk, bs, want);
		if (err)
			return err;
	}
	if (level == vi->num_levels && memcmp(want, vi->root_hash, ds))
		return mismatch(sb, inode, dblk, -1);
	while (level-- > 0)
		cache_insert(vi, hblk[level], path + (size_t)level * bs);
	return 0;
}

ssize_t f2fs_verity_read(struct f2fs_sb *sb, struct f2fs_inode *inode,
			 const struct fscrypt_inode_info *ci, void *buf, size_t len, uint64_t off)
{
	struct f2fs_verity_info *vi;
	uint64_t start, end, valid;
	uint8_t *data = NULL, *path = NULL;
	uint8_t want[FS_VERITY_MAX_DIGEST_SIZE];
	ssize_t n;
	int err = f2fs_verity_get_info(sb, inode, &vi);

	if (err)
		return err;
	/* whole Merkle tree blocks; past EOF the last one holds zeros */
	start = off & ~(uint64_t)(vi->block_size - 1);
	end = (off + len + vi->block_size - 1) & ~(uint64_t)(vi->block_size - 1);
	valid = F2FS_MIN(end, inode->size);
	if (start == off && end == off + len)
		data = buf;
	else
		data = malloc(end - start);
	path = malloc((size_t)(vi->num_levels ? vi->num_levels : 1) * vi->block_size);
	if (!data || !path) {
		err = -ENOMEM;
		goto out;
	}
	n = read_blocks(sb, inode, ci, data, valid - start, start);
	if (n < 0) {
		err = (int)n;
		goto out;
	}
	memset(data + (valid - start), 0, end - valid);
	for (uint64_t pos = start; pos < end && !err; pos += vi->block_size) {
		err = fsverity_hash_block(vi->hash, data + (pos - start), vi->block_size, want);
		if (!err)
			err = verify_block(sb, inode, ci, vi, pos >> vi->log_blocksize, want, path);
	}
	if (!err && data != buf)
		memcpy(buf, data + (off - start), len);
out:
	if (data != buf)
		free(data);
	free(path);
	return err ? err : (ssize_t)len;
}

/* ---- enabling (fs/verity/enable.c, f2fs_{begin,end}_enable_verity) ---- */

static uint64_t level_blocks(const struct f2fs_verity_info *vi, unsigned int level)
{
	return level ? vi->level_start[level - 1] - vi->level_start[level] :
		       vi->tree_blocks - vi->level_start[0];
}

/*
 * build_merkle_tree: the level over the data from the data (the last block
 * zero-padded), each level above from the one below, every block's unused
 * tail zero; tree holds the whole tree as it goes to disk.  An empty file
 * has no tree and a zero root hash; a one-block file's root hash is that
 * block's hash.
 */
#define BUILD_CHUNK	(256u << 10)

static int build_tree(struct f2fs_sb *sb, struct f2fs_inode *inode,
		      const struct fscrypt_inode_info *ci, struct f2fs_verity_info *vi,
		      uint8_t *tree, uint8_t *root)
{
	unsigned int bs = vi->block_size, ds = vi->digest_size;
	uint8_t *chunk, *out;
	int err = 0;

	memset(root, 0, FS_VERITY_MAX_DIGEST_SIZE);
	if (!inode->size)
		return 0;
	chunk = malloc(BUILD_CHUNK);
	if (!chunk)
		return -ENOMEM;
	/* one block: its hash is the root hash */
	out = vi->num_levels ? tree + vi->level_start[0] * bs : root;
	for (uint64_t pos = 0; pos < inode->size && !err; pos += BUILD_CHUNK) {
		uint64_t n = F2FS_MIN((uint64_t)BUILD_CHUNK, inode->size - pos);
		uint64_t padded = (n + bs - 1) & ~(uint64_t)(bs - 1);
		ssize_t r = read_blocks(sb, inode, ci, chunk, n, pos);

		if (r < 0) {
			err = (int)r;
			break;
		}
		memset(chunk + n, 0, padded - n);
		for (uint64_t b = 0; b < padded && !err; b += bs, out += ds)
			err = fsverity_hash_block(vi->hash, chunk + b, bs, out);
	}
	free(chunk);
	for (unsigned int level = 1; level < vi->num_levels && !err; level++) {
		const uint8_t *src = tree + vi->level_start[level - 1] * bs;

		out = tree + vi->level_start[level] * bs;
		for (uint64_t j = 0; j < level_blocks(vi, level - 1) && !err; j++)
			err = fsverity_hash_block(vi->hash, src + j * bs, bs, out + j * ds);
	}
	if (!err && vi->num_levels)
		err = fsverity_hash_block(vi->hash, tree + vi->level_start[vi->num_levels - 1] * bs,
					  bs, root);
	return err;
}

/*
 * pagecache_write of the tree and descriptor past EOF: a compressed file's
 * go through its clusters, as the kernel's writeback takes them, and
 * i_size stays where it was.
 */
static int write_meta(struct f2fs_sb *sb, struct f2fs_inode *inode,
		      const struct fscrypt_inode_info *ci, const uint8_t *buf, size_t len,
		      uint64_t pos)
{
	uint64_t size = inode->size;
	size_t written;
	int err;

	if (!f2fs_is_compressed(inode))
		return f2fs_write_blocks(sb, inode, buf, len, pos, NULL);
	err = f2fs_write_compressed(sb, inode, ci, buf, len, pos, &written);
	inode->size = size;
	return err;
}

/* What enabling wrote past EOF goes again (whole clusters of a compressed file). */
static void drop_meta(struct f2fs_sb *sb, struct f2fs_inode *inode)
{
	uint64_t from = (inode->size + F2FS_BLKSIZE - 1) / F2FS_BLKSIZE;

	if (f2fs_is_compressed(inode)) {
		uint64_t cs = 1u << inode->log_cluster_size;

		from = (from + cs - 1) / cs * cs;
	}
	f2fs_truncate_inode_blocks(sb, inode, from);
	f2fs_mark_inode_dirty(sb, inode);
}

static int enable_locked(struct f2fs_sb *sb, struct f2fs_inode *inode,
			 const struct f2fs_verity_enable *a, struct f2fs_verity_info *vi)
{
	const struct fscrypt_inode_info *ci = NULL;
	unsigned int log_blocksize = 0;
	uint64_t tree_size;
	size_t desc_size = VERITY_DESC_SIZE + a->sig_size;
	uint8_t *buf, *desc, loc[VERITY_LOC_SIZE];
	int err;

	if (S_ISDIR(inode->mode))
		return -EISDIR;
	if (!S_ISREG(inode->mode))
		return -EINVAL;
	if (f2fs_is_immutable(inode) || f2fs_is_append(inode))
		return -EPERM;
	if (f2fs_is_verity(inode))
		return -EEXIST;
	/* f2fs_begin_enable_verity: not during an atomic write */
	if (inode->cow || inode->cow_file)
		return -EOPNOTSUPP;
	if (f2fs_is_encrypted(inode) && (err = f2fs_get_crypt_info(sb, inode, &ci)))
		return err;
	while ((1u << log_blocksize) < a->block_size)
		log_blocksize++;
	err = init_params(sb, inode, vi, a->hash_algorithm, log_blocksize, a->salt, a->salt_size);
	if (err)
		return err;
	/* f2fs_begin_enable_verity: the tree goes into blocks, never inline */
	if (inode->inline_flags & F2FS_INLINE_DATA) {
		err = f2fs_convert_inline_inode(sb, inode);
		if (err)
			return err;
	}
	tree_size = vi->tree_blocks * vi->block_size;
	if (vi->tree_pos + tree_size + desc_size > f2fs_max_file_blocks(inode) * F2FS_BLKSIZE)
		return -EFBIG;
	buf = calloc(1, tree_size + desc_size);
	if (!buf)
		return -ENOMEM;
	desc = buf + tree_size;
	desc[VD_VERSION] = 1;
	desc[VD_HASH_ALG] = (uint8_t)a->hash_algorithm;
	desc[VD_LOG_BLOCK] = (uint8_t)log_blocksize;
	desc[VD_SALT_SIZE] = (uint8_t)a->salt_size;
	put_le32(desc + VD_SIG_SIZE, a->sig_size);
	put_le64(desc + VD_DATA_SIZE, inode->size);
	if (a->salt_size)
		memcpy(desc + VD_SALT, a->salt, a->salt_size);
	if (a->sig_size)
		memcpy(desc + VERITY_DESC_SIZE, a->sig, a->sig_size);
	err = build_tree(sb, inode, ci, vi, buf, desc + VD_ROOT_HASH);
	/* f2fs_end_enable_verity: the descriptor right after the tree */
	if (!err)
		err = write_meta(sb, inode, ci, buf, tree_size + desc_size, vi->tree_pos);
	if (!err) {
		put_le32(loc, 1);
		put_le32(loc + 4, (uint32_t)desc_size);
		put_le64(loc + 8, vi->tree_pos + tree_size);
		err = f2fs_xattr_set_raw(sb, inode, F2FS_XATTR_INDEX_VERITY, "v", loc, sizeof(loc),
					 F2FS_XATTR_CREATE);
	}
	if (!err) {
		memcpy(vi->root_hash, desc + VD_ROOT_HASH, vi->digest_size);
		put_le32(desc + VD_SIG_SIZE, 0);
		err = fsverity_hash_buffer(vi->alg, desc, VERITY_DESC_SIZE, vi->file_digest);
	}
	free(buf);
	if (err) {
		drop_meta(sb, inode);
		return err;
	}
	inode->advise |= FADVISE_VERITY_BIT;
	return f2fs_mark_inode_dirty(sb, inode);
}

int f2fs_verity_enable_inode(struct f2fs_sb *sb, struct f2fs_inode *inode,
			     const struct f2fs_verity_enable *a)
{
	struct f2fs_verity_info *vi = calloc(1, sizeof(*vi)), *none = NULL;
	int err;

	if (!vi)
		return -ENOMEM;
	err = enable_locked(sb, inode, a, vi);
	if (!err && atomic_compare_exchange_strong(&inode->verity, &none, vi))
		vi = NULL;
	if (vi && vi->hash)
		f2fs_verity_info_free(vi);
	else
		free(vi);
	return err;
}
