// SPDX-License-Identifier: GPL-2.0
/*
 * Data: mapping logical blocks through the inode's direct, indirect and
 * double-indirect node tree (with the read extent cache in front), and
 * the file read path that turns mapped runs into vectored device reads.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "f2fs.h"

#define MAX_READ_RUN 1024	/* blocks per device read */

static uint32_t addrs_per_block(const struct f2fs_inode *inode)
{
	uint32_t n = DEF_ADDRS_PER_BLOCK;

	if (f2fs_is_compressed(inode))
		n &= ~((1u << inode->log_cluster_size) - 1);
	return n;
}

uint64_t f2fs_max_file_blocks(const struct f2fs_inode *inode)
{
	uint64_t leaf = addrs_per_block(inode);
	uint64_t r = inode->addrs_per_inode + 2 * leaf;

	leaf *= NIDS_PER_BLOCK;
	r += 2 * leaf;
	leaf *= NIDS_PER_BLOCK;
	r += leaf;
	return F2FS_MIN(r, (uint64_t)0xFFFFFFFFu);
}

/*
 * get_node_path: offset[i] is the slot to follow at depth i, noffset[i]
 * the node offset (footer) expected of the node at depth i.  Returns the
 * depth of the direct node holding the address (0 = the inode itself).
 */
static int get_node_path(const struct f2fs_inode *inode, uint64_t block, uint32_t offset[4],
			 uint32_t noffset[4])
{
	const uint64_t direct_index = inode->addrs_per_inode;
	const uint64_t direct_blks = addrs_per_block(inode);
	const uint64_t dptrs = NIDS_PER_BLOCK;
	const uint64_t indirect_blks = direct_blks * dptrs;
	const uint64_t dindirect_blks = indirect_blks * dptrs;

	noffset[0] = 0;
	if (block < direct_index) {
		offset[0] = (uint32_t)block;
		return 0;
	}
	block -= direct_index;
	if (block < direct_blks) {
		offset[0] = NODE_DIR1_BLOCK;
		noffset[1] = 1;
		offset[1] = (uint32_t)block;
		return 1;
	}
	block -= direct_blks;
	if (block < direct_blks) {
		offset[0] = NODE_DIR2_BLOCK;
		noffset[1] = 2;
		offset[1] = (uint32_t)block;
		return 1;
	}
	block -= direct_blks;
	if (block < indirect_blks) {
		offset[0] = NODE_IND1_BLOCK;
		noffset[1] = 3;
		offset[1] = (uint32_t)(block / direct_blks);
		noffset[2] = 4 + offset[1];
		offset[2] = (uint32_t)(block % direct_blks);
		return 2;
	}
	block -= indirect_blks;
	if (block < indirect_blks) {
		offset[0] = NODE_IND2_BLOCK;
		noffset[1] = 4 + (uint32_t)dptrs;
		offset[1] = (uint32_t)(block / direct_blks);
		noffset[2] = 5 + (uint32_t)dptrs + offset[1];
		offset[2] = (uint32_t)(block % direct_blks);
		return 2;
	}
	block -= indirect_blks;
	if (block < dindirect_blks) {
		offset[0] = NODE_DIND_BLOCK;
		noffset[1] = 5 + (uint32_t)dptrs * 2;
		offset[1] = (uint32_t)(block / indirect_blks);
		noffset[2] = 6 + (uint32_t)dptrs * 2 + offset[1] * ((uint32_t)dptrs + 1);
		offset[2] = (uint32_t)((block / direct_blks) % dptrs);
		noffset[3] = 7 + (uint32_t)dptrs * 2 + offset[1] * ((uint32_t)dptrs + 1) + offset[2];
		offset[3] = (uint32_t)(block % direct_blks);
		return 3;
	}
	return -E2BIG;
}

/* Blocks in a subtree whose root sits `height` levels above the addresses. */
static uint64_t subtree_span(const struct f2fs_inode *inode, int height)
{
	uint64_t s = 1;

	for (int h = 0; h < height; h++)
		s *= h == 0 ? addrs_per_block(inode) : NIDS_PER_BLOCK;
	return s;
}

static bool is_hole(uint32_t a)
{
	return a == NULL_ADDR || a == NEW_ADDR;
}

int f2fs_map_blocks(struct f2fs_sb *sb, struct f2fs_inode *inode, uint32_t lblk,
		    uint32_t maxlen, uint32_t *pblk, uint32_t *len)
{
	uint32_t offset[4], noffset[4];
	struct f2fs_extent ext;
	uint8_t *blk = NULL;
	const uint8_t *addrs;
	uint32_t naddrs, ofs, a0, n, i;
	int level, err = 0;

	if (!maxlen)
		maxlen = 1;
	if (f2fs_extent_lookup(&inode->et, lblk, &ext)) {
		*pblk = ext.blk + (lblk - ext.fofs);
		*len = F2FS_MIN(ext.len - (lblk - ext.fofs), maxlen);
		return 0;
	}
	level = get_node_path(inode, lblk, offset, noffset);
	if (level < 0 || lblk >= f2fs_max_file_blocks(inode)) {
		*pblk = NULL_ADDR;
		*len = maxlen;
		return 0;
	}
	if (level == 0) {
		addrs = inode->node + I_ADDR + 4 * f2fs_addr_start(inode);
		naddrs = inode->addrs_per_inode;
	} else {
		uint32_t nid = f2fs_i_nid(inode, (int)(offset[0] - NODE_DIR1_BLOCK));

		blk = f2fs_alloc_blocks(1);
		if (!blk)
			return -ENOMEM;
		for (int k = 1; k <= level; k++) {
			if (nid == 0) {
				/* a missing node: everything below it is a hole */
				uint64_t idx = 0, span = subtree_span(inode, level - k + 1);

				for (int j = k; j <= level; j++)
					idx += offset[j] * subtree_span(inode, level - j);
				*pblk = NULL_ADDR;
				*len = (uint32_t)F2FS_MIN(span - idx, (uint64_t)maxlen);
				goto out;
			}
			err = f2fs_get_node(sb, nid, blk);
			if (err)
				goto out;
			if (f2fs_node_ino(blk) != inode->ino || f2fs_node_ofs(blk) != noffset[k]) {
				err = f2fs_corrupted(sb, "inode %u: node %u has ino %u offset %u, "
						     "expected offset %u", inode->ino, nid,
						     f2fs_node_ino(blk), f2fs_node_ofs(blk), noffset[k]);
				goto out;
			}
			if (k < level)
				nid = get_le32(blk + 4 * offset[k]);
		}
		addrs = blk;
		naddrs = addrs_per_block(inode);
	}

	ofs = offset[level];
	a0 = get_le32(addrs + 4 * ofs);
	if (a0 == COMPRESS_ADDR) {
		err = -EOPNOTSUPP;
		goto out;
	}
	/* cache every mapped run of this node: sequential reads come next */
	for (i = ofs; i < naddrs;) {
		uint32_t a = get_le32(addrs + 4 * i);

		if (is_hole(a) || a == COMPRESS_ADDR) {
			i++;
			continue;
		}
		for (n = 1; i + n < naddrs && get_le32(addrs + 4 * (i + n)) == a + n; n++)
			;
		if (f2fs_valid_main_blkaddr(sb, a) && (uint64_t)a + n <= f2fs_main_end_blkaddr(sb))
			f2fs_extent_insert(&inode->et, lblk + (i - ofs), a, n);
		i += n;
	}
	if (is_hole(a0)) {
		for (n = 1; ofs + n < naddrs && n < maxlen &&
			    get_le32(addrs + 4 * (ofs + n)) == a0; n++)
			;
	} else {
		for (n = 1; ofs + n < naddrs && n < maxlen &&
			    get_le32(addrs + 4 * (ofs + n)) == a0 + n; n++)
			;
		if (!f2fs_valid_main_blkaddr(sb, a0) || (uint64_t)a0 + n > f2fs_main_end_blkaddr(sb)) {
			err = f2fs_corrupted(sb, "inode %u: block %u maps to 0x%x, outside the main "
					     "area", inode->ino, lblk, a0);
			goto out;
		}
	}
	*pblk = a0;
	*len = n;
out:
	free(blk);
	return err;
}

int f2fs_get_cluster_addrs(struct f2fs_sb *sb, struct f2fs_inode *inode, uint32_t start,
			   uint32_t *addrs, uint32_t n)
{
	uint32_t offset[4], noffset[4], naddrs, nid;
	const uint8_t *slots;
	uint8_t *blk = NULL;
	int level = get_node_path(inode, start, offset, noffset), err = 0;

	for (uint32_t i = 0; i < n; i++)
		addrs[i] = NULL_ADDR;
	if (level < 0 || start >= f2fs_max_file_blocks(inode))
		return 0;
	if (level == 0) {
		slots = inode->node + I_ADDR + 4 * f2fs_addr_start(inode);
		naddrs = inode->addrs_per_inode;
	} else {
		blk = f2fs_alloc_blocks(1);
		if (!blk)
			return -ENOMEM;
		nid = f2fs_i_nid(inode, (int)(offset[0] - NODE_DIR1_BLOCK));
		for (int k = 1; k <= level; k++) {
			if (!nid)
				goto out;	/* a missing node: holes */
			err = f2fs_get_node(sb, nid, blk);
			if (err)
				goto out;
			if (f2fs_node_ino(blk) != inode->ino || f2fs_node_ofs(blk) != noffset[k]) {
				err = f2fs_corrupted(sb, "inode %u: node %u has ino %u offset %u, "
						     "expected offset %u", inode->ino, nid,
						     f2fs_node_ino(blk), f2fs_node_ofs(blk), noffset[k]);
				goto out;
			}
			if (k < level)
				nid = get_le32(blk + 4 * offset[k]);
		}
		slots = blk;
		naddrs = addrs_per_block(inode);
	}
	/* clusters never straddle nodes: the slot counts are rounded to them */
	if (offset[level] + n > naddrs) {
		err = -EINVAL;
		goto out;
	}
	for (uint32_t i = 0; i < n; i++)
		addrs[i] = get_le32(slots + 4 * (offset[level] + i));
out:
	free(blk);
	return err;
}

int f2fs_read_data_block(struct f2fs_sb *sb, struct f2fs_inode *inode, uint32_t lblk,
			 uint8_t *buf)
{
	bool cacheable = (inode->mode & S_IFMT) == S_IFDIR;
	uint32_t pblk, len;
	int err = f2fs_map_blocks(sb, inode, lblk, 1, &pblk, &len);

	if (err)
		return err;
	if (is_hole(pblk)) {
		memset(buf, 0, F2FS_BLKSIZE);
		return 0;
	}
	if (cacheable && f2fs_cache_lookup(sb->cache, pblk, buf))
		return 1;
	err = f2fs_dev_read(sb->dev, pblk, buf, 1);
	if (err)
		return err;
	if (cacheable)
		f2fs_cache_insert(sb->cache, pblk, buf);
	return 1;
}

/*
 * Read `bytes` starting `skip` bytes into physical block pblk into dst with
 * one vectored device read: partial first and last blocks go through
 * bounce blocks, whole blocks land directly in dst.
 */
static int read_run(struct f2fs_sb *sb, uint32_t pblk, uint32_t nblocks, uint32_t skip,
		    size_t bytes, uint8_t *dst, const struct f2fs_crypt_ctx *crypt)
{
	uint8_t *bounce = f2fs_alloc_blocks(2);
	struct iovec iov[3];
	int iovcnt = 0, err;
	uint8_t *head = NULL, *tail = NULL;
	size_t head_bytes = 0, mid_bytes, tail_bytes = 0;
	uint32_t mid_blocks = nblocks;

	if (!bounce)
		return -ENOMEM;
	if (skip || (nblocks == 1 && bytes < F2FS_BLKSIZE)) {
		head = bounce;
		head_bytes = F2FS_MIN(bytes, (size_t)(F2FS_BLKSIZE - skip));
		iov[iovcnt++] = (struct iovec){ head, F2FS_BLKSIZE };
		mid_blocks--;
	}
	if (mid_blocks && (skip + bytes) % F2FS_BLKSIZE) {
		tail = bounce + F2FS_BLKSIZE;
		tail_bytes = (skip + bytes) % F2FS_BLKSIZE;
		mid_blocks--;
	}
	mid_bytes = (size_t)mid_blocks * F2FS_BLKSIZE;
	if (mid_blocks)
		iov[iovcnt++] = (struct iovec){ dst + head_bytes, mid_bytes };
	if (tail)
		iov[iovcnt++] = (struct iovec){ tail, F2FS_BLKSIZE };

	struct f2fs_bio bio = {
		.op = F2FS_BIO_READ, .blkaddr = pblk, .nr_blocks = nblocks,
		.iov = iov, .iovcnt = iovcnt, .crypt = crypt,
	};
	err = f2fs_submit_bio(sb->dev, &bio);
	if (!err) {
		if (head)
			memcpy(dst, head + skip, head_bytes);
		if (tail)
			memcpy(dst + head_bytes + mid_bytes, tail, tail_bytes);
	}
	free(bounce);
	return err;
}

int f2fs_read_mapped(struct f2fs_sb *sb, const struct fscrypt_inode_info *ci, uint32_t pblk,
		     uint64_t lblk, uint32_t skip, size_t bytes, uint8_t *dst)
{
	while (bytes) {
		uint32_t n = (uint32_t)((skip + bytes + F2FS_BLKSIZE - 1) / F2FS_BLKSIZE);
		size_t chunk = bytes;
		struct f2fs_crypt_ctx cc;
		int err;

		if (ci) {
			/* one bio's DUNs must be consecutive (IV_INO_LBLK_32 wraps) */
			uint32_t lim = f2fs_crypt_limit_blocks(ci, lblk, n);

			if (lim < n) {
				n = lim;
				chunk = (size_t)n * F2FS_BLKSIZE - skip;
			}
			f2fs_crypt_ctx(ci, lblk, &cc);
		}
		err = read_run(sb, pblk, n, skip, chunk, dst, ci ? &cc : NULL);
		if (err)
			return err;
		pblk += n;
		lblk += n;
		dst += chunk;
		bytes -= chunk;
		skip = 0;
	}
	return 0;
}

ssize_t f2fs_file_read(struct f2fs_sb *sb, struct f2fs_inode *inode, void *buf, size_t len,
		       uint64_t off)
{
	const struct fscrypt_inode_info *ci = NULL;
	uint8_t *dst = buf;
	size_t done = 0;

	/* as fscrypt_file_open: no key, no contents, not even "empty" */
	if (f2fs_is_encrypted(inode)) {
		int err = f2fs_get_crypt_info(sb, inode, &ci);

		if (err)
			return err;
	}
	if (off >= inode->size || !len)
		return 0;
	len = (size_t)F2FS_MIN((uint64_t)len, inode->size - off);
	if (inode->inline_flags & F2FS_INLINE_DATA)
		return f2fs_read_inline_data(inode, buf, len, off);
	if (f2fs_is_compressed(inode))
		return f2fs_read_compressed(sb, inode, ci, buf, len, off);

	while (done < len) {
		uint64_t pos = off + done;
		uint32_t lblk = (uint32_t)(pos / F2FS_BLKSIZE);
		uint32_t skip = (uint32_t)(pos % F2FS_BLKSIZE);
		uint64_t want_blocks = (skip + (len - done) + F2FS_BLKSIZE - 1) / F2FS_BLKSIZE;
		uint32_t pblk, n;
		size_t bytes;
		int err;

		err = f2fs_map_blocks(sb, inode, lblk,
				      (uint32_t)F2FS_MIN(want_blocks, (uint64_t)MAX_READ_RUN),
				      &pblk, &n);
		if (err)
			return err;	/* never a short read: FUSE takes it for EOF */
		bytes = (size_t)F2FS_MIN((uint64_t)n * F2FS_BLKSIZE - skip, (uint64_t)(len - done));
		if (is_hole(pblk)) {
			memset(dst + done, 0, bytes);
		} else {
			err = f2fs_read_mapped(sb, ci, pblk, lblk, skip, bytes, dst + done);
			if (err)
				return err;
		}
		done += bytes;
	}
	return (ssize_t)done;
}

/* ======================= the write path ======================= */

/*
 * A direct node located for writing: the node block (the inode's own block
 * for the first addresses), where its addresses start, and the slot.
 */
struct dnode {
	uint32_t nid;		/* the node's nid (the ino for the inode itself) */
	bool is_inode;
	uint8_t *blk;		/* inode->node, or buf */
	uint8_t *addrs;
	uint32_t naddrs;
	uint32_t ofs;		/* slot of the requested block */
	uint8_t version;	/* NAT version, for summaries */
	uint8_t buf[F2FS_BLKSIZE] __attribute__((aligned(16)));
};

static bool dir_inode(const struct f2fs_inode *inode)
{
	return (inode->mode & S_IFMT) == S_IFDIR;
}

/* The node offset, ino and kind of every node on the path were checked by
 * the read side; here they are created where missing. */
static int get_dnode_for_write(struct f2fs_sb *sb, struct f2fs_inode *inode, uint32_t lblk,
			       struct dnode *dn)
{
	uint32_t offset[4], noffset[4];
	uint8_t parent[F2FS_BLKSIZE] __attribute__((aligned(16)));
	uint32_t parent_nid = inode->ino, nid;
	bool parent_is_inode = true;
	int level, err;

	level = get_node_path(inode, lblk, offset, noffset);
	if (level < 0)
		return -EFBIG;
	if (level == 0) {
		dn->nid = inode->ino;
		dn->is_inode = true;
		dn->blk = inode->node;
		dn->addrs = inode->node + I_ADDR + 4 * f2fs_addr_start(inode);
		dn->naddrs = inode->addrs_per_inode;
		dn->ofs = offset[0];
		{
			struct f2fs_node_info ni;

			err = f2fs_get_node_info(sb, inode->ino, &ni);
			if (err)
				return err;
			dn->version = ni.version;
		}
		return 0;
	}
	nid = f2fs_i_nid(inode, (int)(offset[0] - NODE_DIR1_BLOCK));
	for (int k = 1; k <= level; k++) {
		uint8_t *blk = k == level ? dn->buf : parent;
		uint8_t tmp[F2FS_BLKSIZE] __attribute__((aligned(16)));

		if (!nid) {
			err = f2fs_new_node(sb, inode->ino, noffset[k], !dir_inode(inode), &nid, tmp);
			if (err)
				return err;
			inode->blocks++;
			if (parent_is_inode) {
				put_le32(inode->node + I_NID + 4 * (offset[0] - NODE_DIR1_BLOCK), nid);
			} else {
				put_le32(parent + 4 * offset[k - 1], nid);
				err = f2fs_set_node_dirty(sb, parent_nid, parent);
				if (err)
					return err;
			}
		} else {
			err = f2fs_get_node(sb, nid, tmp);
			if (err)
				return err;
			if (f2fs_node_ino(tmp) != inode->ino || f2fs_node_ofs(tmp) != noffset[k])
				return f2fs_corrupted(sb, "inode %u: node %u has ino %u offset %u, "
						      "expected offset %u", inode->ino, nid,
						      f2fs_node_ino(tmp), f2fs_node_ofs(tmp),
						      noffset[k]);
		}
		memcpy(blk, tmp, F2FS_BLKSIZE);
		parent_nid = nid;
		parent_is_inode = false;
		if (k < level)
			nid = get_le32(blk + 4 * offset[k]);
	}
	{
		struct f2fs_node_info ni;

		err = f2fs_get_node_info(sb, parent_nid, &ni);
		if (err)
			return err;
		dn->version = ni.version;
	}
	dn->nid = parent_nid;
	dn->is_inode = false;
	dn->blk = dn->buf;
	dn->addrs = dn->buf;
	dn->naddrs = addrs_per_block(inode);
	dn->ofs = offset[level];
	return 0;
}

static int put_dnode(struct f2fs_sb *sb, struct f2fs_inode *inode, struct dnode *dn)
{
	if (dn->is_inode)
		return 0;	/* the inode block is written with the inode */
	return f2fs_set_node_dirty(sb, dn->nid, dn->blk);
}

static void count_blocks(struct f2fs_sb *sb, int64_t n)
{
	pthread_mutex_lock(&sb->sm->lock);
	sb->sm->valid_blocks = (uint64_t)((int64_t)sb->sm->valid_blocks + n);
	pthread_mutex_unlock(&sb->sm->lock);
}

/* Free the data block in slot i of dn (real or reserved). */
static void free_slot(struct f2fs_sb *sb, struct f2fs_inode *inode, uint8_t *addrs, uint32_t i)
{
	uint32_t a = get_le32(addrs + 4 * i);

	if (a == NULL_ADDR)
		return;
	if (a != NEW_ADDR && a != COMPRESS_ADDR)
		f2fs_invalidate_block(sb, a);
	/* a compressed cluster's head counts as a block, as its reserved slots
	 * do, until F2FS_IOC_RELEASE_COMPRESS_BLOCKS gave them back */
	if (a != COMPRESS_ADDR || !(inode->inline_flags & F2FS_COMPRESS_RELEASED)) {
		count_blocks(sb, -1);
		inode->blocks--;
	}
	put_le32(addrs + 4 * i, NULL_ADDR);
}

/*
 * Move inline data into block 0 (f2fs_convert_inline_inode): the inline
 * area overlaps i_addr, so it is cleared before any address is stored,
 * and put back if the block cannot be written (out of space), so that a
 * failed conversion leaves the inline data as it was.
 */
static int convert_inline(struct f2fs_sb *sb, struct f2fs_inode *inode);

static int write_blocks(struct f2fs_sb *sb, struct f2fs_inode *inode, const uint8_t *src,
			size_t len, uint64_t off, size_t *written);

int f2fs_convert_inline(struct f2fs_sb *sb, struct f2fs_inode *inode)
{
	return convert_inline(sb, inode);
}

static int convert_inline(struct f2fs_sb *sb, struct f2fs_inode *inode)
{
	size_t max = f2fs_max_inline_data(inode);
	size_t n = (size_t)F2FS_MIN(inode->size, (uint64_t)max);
	uint8_t *area = inode->node + I_ADDR + 4 * f2fs_addr_start(inode);
	uint8_t *copy = f2fs_alloc_blocks(2), *saved;
	uint8_t flags = inode->inline_flags;
	int err = 0;

	if (!copy)
		return -ENOMEM;
	saved = copy + F2FS_BLKSIZE;
	memset(copy, 0, F2FS_BLKSIZE);
	memcpy(copy, f2fs_inline_data_addr(inode), n);
	/* clear the reserved word and the whole inline area */
	memcpy(saved, area, 4 + max);
	memset(area, 0, 4 + max);
	inode->inline_flags &= (uint8_t)~(F2FS_INLINE_DATA | F2FS_DATA_EXIST);
	if (n)
		err = write_blocks(sb, inode, copy, n, 0, NULL);
	if (err) {
		free_slot(sb, inode, area, 0);	/* mapped, then the write failed */
		memcpy(area, saved, 4 + max);
		inode->inline_flags = flags;
	}
	free(copy);
	return err;
}

/*
 * Write [off, off+len) out of place: partial blocks are merged with their
 * old contents, new blocks come from the data log back to back, and each
 * contiguous run goes to the device as one vectored write.
 */
static int write_blocks(struct f2fs_sb *sb, struct f2fs_inode *inode, const uint8_t *src,
			size_t len, uint64_t off, size_t *written)
{
	int type = dir_inode(inode) ? CURSEG_HOT_DATA : CURSEG_WARM_DATA;
	struct dnode *dn = f2fs_alloc_blocks((sizeof(*dn) + F2FS_BLKSIZE - 1) / F2FS_BLKSIZE);
	uint8_t *bounce = f2fs_alloc_blocks(2);	/* only the first and last block can be partial */
	struct f2fs_plug *plug = malloc(sizeof(*plug));
	uint64_t end = off + len, pos = off;
	const struct fscrypt_inode_info *ci = NULL;
	uint32_t nb = 0;
	int err = 0, ferr;

	if (!dn || !bounce || !plug) {
		err = -ENOMEM;
		goto out;
	}
	f2fs_plug_init(plug, sb->dev);
	/* only regular files encrypt contents; dentry and symlink blocks go as they are */
	if (S_ISREG(inode->mode) && f2fs_is_encrypted(inode)) {
		err = f2fs_get_crypt_info(sb, inode, &ci);
		if (err)
			goto out;
	}
	while (!err && pos < end) {
		uint32_t lblk = (uint32_t)(pos / F2FS_BLKSIZE);

		if (pos / F2FS_BLKSIZE >= f2fs_max_file_blocks(inode)) {
			err = -EFBIG;
			break;
		}
		err = get_dnode_for_write(sb, inode, lblk, dn);
		if (err)
			break;
		for (uint32_t i = dn->ofs; i < dn->naddrs && pos < end; i++) {
			uint32_t skip = (uint32_t)(pos % F2FS_BLKSIZE);
			size_t n = (size_t)F2FS_MIN((uint64_t)(F2FS_BLKSIZE - skip), end - pos);
			uint32_t old = get_le32(dn->addrs + 4 * i), addr;
			const uint8_t *data = src + (pos - off);
			struct f2fs_crypt_ctx cc;
			struct iovec one;
			struct f2fs_bio bio;

			if (old == COMPRESS_ADDR) {
				err = -EOPNOTSUPP;
				break;
			}
			if (n < F2FS_BLKSIZE) {
				uint8_t *b = bounce + (size_t)(nb++ & 1) * F2FS_BLKSIZE;

				if (is_hole(old)) {
					memset(b, 0, F2FS_BLKSIZE);
				} else {
					struct iovec biov = { b, F2FS_BLKSIZE };
					struct f2fs_crypt_ctx rc;
					struct f2fs_bio rb = { .op = F2FS_BIO_READ, .blkaddr = old,
							       .nr_blocks = 1, .iov = &biov,
							       .iovcnt = 1 };

					if (ci) {
						f2fs_crypt_ctx(ci, pos / F2FS_BLKSIZE, &rc);
						rb.crypt = &rc;
					}
					err = f2fs_submit_bio(sb->dev, &rb);
					if (err)
						break;
				}
				memcpy(b + skip, data, n);
				data = b;
			}
			if (old == NULL_ADDR && (err = f2fs_take_user_blocks(sb, 1)))
				break;
			err = f2fs_allocate_block(sb, type, dn->nid, dn->version, (uint16_t)i, &addr);
			if (err) {
				if (old == NULL_ADDR)
					count_blocks(sb, -1);
				break;
			}
			/* one block per bio; the plug merges them under blk-crypto's rule */
			one = (struct iovec){ (void *)data, F2FS_BLKSIZE };
			bio = (struct f2fs_bio){ .op = F2FS_BIO_WRITE, .blkaddr = addr, .nr_blocks = 1,
						 .iov = &one, .iovcnt = 1 };
			if (ci) {
				f2fs_crypt_ctx(ci, pos / F2FS_BLKSIZE, &cc);
				bio.crypt = &cc;
			}
			err = f2fs_plug_add(plug, &bio);
			if (old == NULL_ADDR) {
				inode->blocks++;
			} else if (old != NEW_ADDR) {
				f2fs_invalidate_block(sb, old);
			}
			put_le32(dn->addrs + 4 * i, addr);
			if (dir_inode(inode))
				f2fs_cache_invalidate(sb->cache, old);
			pos += n;
			if (err)
				break;
		}
		{
			int perr = put_dnode(sb, inode, dn);

			if (!err)
				err = perr;
		}
	}
	/* blocks already mapped must reach the disk even if a later one failed */
	ferr = f2fs_plug_flush(plug);
	if (!err)
		err = ferr;
	f2fs_inode_drop_largest_extent(inode, off / F2FS_BLKSIZE,
				       (end + F2FS_BLKSIZE - 1) / F2FS_BLKSIZE - off / F2FS_BLKSIZE);
	if (written)
		*written = (size_t)(pos - off);
out:
	free(dn);
	free(bounce);
	free(plug);
	return err;
}

/* Write a whole data block of a directory (dentry blocks). */
int f2fs_write_data_block(struct f2fs_sb *sb, struct f2fs_inode *inode, uint32_t lblk,
			  const uint8_t *buf)
{
	int err = write_blocks(sb, inode, buf, F2FS_BLKSIZE, (uint64_t)lblk * F2FS_BLKSIZE, NULL);
	/* even on failure: a node made on the way is linked from the inode */
	int derr = f2fs_mark_inode_dirty(sb, inode);

	return err ? err : derr;
}

static ssize_t do_file_write(struct f2fs_sb *sb, struct f2fs_inode *inode, const void *buf,
			     size_t len, uint64_t off);

/* A new symlink's (possibly encrypted) target: raw bytes, inline when they fit. */
ssize_t f2fs_symlink_write(struct f2fs_sb *sb, struct f2fs_inode *inode, const void *buf,
			   size_t len)
{
	return do_file_write(sb, inode, buf, len, 0);
}

ssize_t f2fs_file_write(struct f2fs_sb *sb, struct f2fs_inode *inode, const void *buf,
			size_t len, uint64_t off)
{
	return do_file_write(sb, inode, buf, len, off);
}

static ssize_t do_file_write(struct f2fs_sb *sb, struct f2fs_inode *inode, const void *buf,
			     size_t len, uint64_t off)
{
	uint64_t end = off + len;
	struct f2fs_timespec now;
	int err;

	if (!len)
		return 0;
	if (end < off || end > f2fs_max_file_blocks(inode) * F2FS_BLKSIZE)
		return -EFBIG;
	if (f2fs_is_compressed(inode))
		return -EOPNOTSUPP;
	if (S_ISREG(inode->mode) && (err = f2fs_require_key(sb, inode)))
		return err;
	if (inode->inline_flags & F2FS_INLINE_DATA) {
		if (end <= f2fs_max_inline_data(inode)) {
			memcpy(f2fs_inline_data_addr(inode) + off, buf, len);
			inode->inline_flags |= F2FS_DATA_EXIST;
			goto done;
		}
		err = convert_inline(sb, inode);
		if (err)
			return err;
	}
	{
		size_t written = 0;

		err = write_blocks(sb, inode, buf, len, off, &written);
		if (err && !written) {
			/* nothing written, but a node made on the way is linked from the inode */
			f2fs_mark_inode_dirty(sb, inode);
			return err;
		}
		/* out of space part way: what reached the disk is a short write */
		if (err)
			end = off + written;
	}
done:
	if (end > inode->size)
		inode->size = end;
	f2fs_now(&now);
	f2fs_inode_set_time(inode, F2FS_TIME_MTIME, &now);
	f2fs_inode_set_time(inode, F2FS_TIME_CTIME, &now);
	err = f2fs_mark_inode_dirty(sb, inode);
	return err ? err : (ssize_t)(end - off);
}

/* ---- truncation ---- */

/*
 * Free everything at or after block `from` in the subtree rooted at node
 * nid (height 0: a direct node), whose first block is first.  *gone is set
 * when the node itself was removed.
 */
static int truncate_node(struct f2fs_sb *sb, struct f2fs_inode *inode, uint32_t nid, int height,
			 uint64_t first, uint64_t from, bool *gone)
{
	uint8_t *blk = f2fs_alloc_blocks(1);
	bool changed = false;
	int err;

	*gone = false;
	if (!blk)
		return -ENOMEM;
	err = f2fs_get_node(sb, nid, blk);
	if (err)
		goto out;
	if (f2fs_node_ino(blk) != inode->ino) {
		err = f2fs_corrupted(sb, "inode %u: node %u belongs to inode %u", inode->ino, nid,
				     f2fs_node_ino(blk));
		goto out;
	}
	if (height == 0) {
		uint32_t apb = addrs_per_block(inode);
		uint32_t start = from > first ? (uint32_t)(from - first) : 0;

		for (uint32_t i = start; i < apb; i++) {
			if (get_le32(blk + 4 * i) != NULL_ADDR) {
				free_slot(sb, inode, blk, i);
				changed = true;
			}
		}
	} else {
		uint64_t span = subtree_span(inode, height);

		for (uint32_t i = 0; i < NIDS_PER_BLOCK; i++) {
			uint64_t cfirst = first + i * span;
			uint32_t child = get_le32(blk + 4 * i);
			bool cgone;

			if (!child || cfirst + span <= from)
				continue;
			err = truncate_node(sb, inode, child, height - 1, cfirst, from, &cgone);
			if (err)
				goto out;
			if (cgone) {
				put_le32(blk + 4 * i, 0);
				changed = true;
			}
		}
	}
	if (from <= first) {
		err = f2fs_remove_node(sb, nid, inode->ino, false);
		if (!err) {
			inode->blocks--;
			*gone = true;
		}
	} else if (changed) {
		err = f2fs_set_node_dirty(sb, nid, blk);
	}
out:
	free(blk);
	return err;
}

/* truncate_inode_blocks: free every block at or after `from`. */
static int truncate_blocks(struct f2fs_sb *sb, struct f2fs_inode *inode, uint64_t from)
{
	uint64_t first = inode->addrs_per_inode;
	uint8_t *addrs = inode->node + I_ADDR + 4 * f2fs_addr_start(inode);
	static const int heights[5] = { 0, 0, 1, 1, 2 };
	int err = 0;

	for (uint64_t i = from; i < inode->addrs_per_inode; i++)
		free_slot(sb, inode, addrs, (uint32_t)i);
	for (int k = 0; k < 5; k++) {
		uint32_t nid = f2fs_i_nid(inode, k);
		uint64_t span = subtree_span(inode, heights[k] + 1);
		bool gone;

		if (nid && first + span > from) {
			err = truncate_node(sb, inode, nid, heights[k], first, from, &gone);
			if (err)
				break;
			if (gone)
				put_le32(inode->node + I_NID + 4 * k, 0);
		}
		first += span;
	}
	f2fs_inode_drop_largest_extent(inode, from, UINT32_MAX);
	return err;
}

int f2fs_truncate(struct f2fs_sb *sb, struct f2fs_inode *inode, uint64_t size)
{
	int err = 0;

	if (size > f2fs_max_file_blocks(inode) * F2FS_BLKSIZE)
		return -EFBIG;
	if (inode->inline_flags & F2FS_INLINE_DATA) {
		size_t max = f2fs_max_inline_data(inode);

		if (size <= max) {
			if (size < inode->size)
				memset(f2fs_inline_data_addr(inode) + size, 0,
				       (size_t)F2FS_MIN(inode->size, (uint64_t)max) - (size_t)size);
			goto done;
		}
		err = convert_inline(sb, inode);
		if (err)
			return err;
	}
	if (size < inode->size) {
		uint64_t from = (size + F2FS_BLKSIZE - 1) / F2FS_BLKSIZE;

		if (size % F2FS_BLKSIZE) {
			/* zero the tail of the last block so a later extension reads zeros */
			uint32_t pblk, n;

			err = f2fs_map_blocks(sb, inode, (uint32_t)(size / F2FS_BLKSIZE), 1, &pblk, &n);
			if (!err && !is_hole(pblk)) {
				static const uint8_t zeros[F2FS_BLKSIZE];

				err = write_blocks(sb, inode, zeros, F2FS_BLKSIZE - size % F2FS_BLKSIZE,
						   size, NULL);
			}
			if (err)
				return err;
		}
		err = truncate_blocks(sb, inode, from);
		if (err)
			return err;
	}
done:
	inode->size = size;
	return f2fs_mark_inode_dirty(sb, inode);
}

/* Free every block and node of an inode that is going away. */
int f2fs_truncate_all(struct f2fs_sb *sb, struct f2fs_inode *inode)
{
	/* devices keep their number in i_addr; inline inodes keep data there */
	if (!(S_ISREG(inode->mode) || S_ISDIR(inode->mode) || S_ISLNK(inode->mode)))
		return 0;
	if (inode->inline_flags & (F2FS_INLINE_DATA | F2FS_INLINE_DENTRY))
		return 0;
	return truncate_blocks(sb, inode, 0);
}

/* truncate_hole: free the data blocks (not the nodes) of [start, end). */
int f2fs_truncate_hole(struct f2fs_sb *sb, struct f2fs_inode *inode, uint64_t start, uint64_t end)
{
	struct dnode *dn = NULL;
	int err = 0;

	end = F2FS_MIN(end, f2fs_max_file_blocks(inode));
	while (start < end) {
		uint32_t pblk, n;

		err = f2fs_map_blocks(sb, inode, (uint32_t)start,
				      (uint32_t)F2FS_MIN(end - start, (uint64_t)UINT32_MAX), &pblk, &n);
		if (err)
			break;
		if (pblk == NULL_ADDR) {
			start += n;
			continue;
		}
		if (!dn) {
			dn = f2fs_alloc_blocks((sizeof(*dn) + F2FS_BLKSIZE - 1) / F2FS_BLKSIZE);
			if (!dn)
				return -ENOMEM;
		}
		err = get_dnode_for_write(sb, inode, (uint32_t)start, dn);
		if (err)
			break;
		for (uint32_t i = dn->ofs; i < dn->naddrs && start < end; i++, start++)
			free_slot(sb, inode, dn->addrs, i);
		err = put_dnode(sb, inode, dn);
		if (err)
			break;
		f2fs_inode_drop_largest_extent(inode, 0, UINT32_MAX);
	}
	free(dn);
	return err;
}

/* f2fs_reserve_block for [start, end): holes become NEW_ADDR, counted as used. */
int f2fs_reserve_blocks(struct f2fs_sb *sb, struct f2fs_inode *inode, uint64_t start, uint64_t end)
{
	struct dnode *dn = f2fs_alloc_blocks((sizeof(*dn) + F2FS_BLKSIZE - 1) / F2FS_BLKSIZE);
	int err = 0;

	if (!dn)
		return -ENOMEM;
	while (start < end) {
		err = get_dnode_for_write(sb, inode, (uint32_t)start, dn);
		if (err)
			break;
		for (uint32_t i = dn->ofs; i < dn->naddrs && start < end; i++, start++) {
			if (get_le32(dn->addrs + 4 * i) != NULL_ADDR)
				continue;
			err = f2fs_take_user_blocks(sb, 1);
			if (err)
				break;
			put_le32(dn->addrs + 4 * i, NEW_ADDR);
			inode->blocks++;
		}
		{
			/* what was reserved before running out stays mapped */
			int perr = put_dnode(sb, inode, dn);

			if (!err)
				err = perr;
		}
		if (err)
			break;
	}
	free(dn);
	return err;
}

/* start_bidx_of_node: the first file block a direct node at offset ofs maps. */
static uint64_t start_bidx_of_node(const struct f2fs_inode *inode, uint32_t ofs)
{
	uint32_t indirect_blks = 2 * NIDS_PER_BLOCK + 4;
	uint64_t bidx;

	if (ofs == 0)
		return 0;
	if (ofs <= 2) {
		bidx = ofs - 1;
	} else if (ofs <= indirect_blks) {
		uint32_t dec = (ofs - 4) / (NIDS_PER_BLOCK + 1);

		bidx = ofs - 2 - dec;
	} else {
		uint32_t dec = (ofs - indirect_blks - 3) / (NIDS_PER_BLOCK + 1);

		bidx = ofs - 5 - dec;
	}
	return bidx * addrs_per_block(inode) + inode->addrs_per_inode;
}

/*
 * do_recover_data: make the live tree map what an fsync()ed dnode (or
 * inode block) maps: its blocks become valid again, the blocks they
 * replace are freed, holes it records are punched.
 */
int f2fs_recover_dnode(struct f2fs_sb *sb, struct f2fs_inode *inode, const uint8_t *page)
{
	uint32_t ofs = f2fs_node_ofs(page);
	const uint8_t *src_addrs;
	struct dnode *dn;
	uint64_t start;
	uint32_t count;
	int err;

	if (ofs == XATTR_NODE_OFFSET)
		return f2fs_recover_xattr_node(sb, inode, page);
	if (ofs == 0) {
		/* inline data comes back as it was */
		if ((page[I_INLINE] & F2FS_INLINE_DATA) && (inode->inline_flags & F2FS_INLINE_DATA)) {
			memcpy(f2fs_inline_data_addr(inode),
			       page + (f2fs_inline_data_addr(inode) - inode->node),
			       f2fs_max_inline_data(inode));
			goto xattr;
		}
		if (page[I_INLINE] & F2FS_INLINE_DATA) {
			/* inline in the fsync()ed copy only: drop the blocks, take its data */
			err = truncate_blocks(sb, inode, 0);
			if (err)
				return err;
			inode->inline_flags |= F2FS_INLINE_DATA;
			memcpy(f2fs_inline_data_addr(inode),
			       page + (f2fs_inline_data_addr(inode) - inode->node),
			       f2fs_max_inline_data(inode));
			goto xattr;
		}
		if (inode->inline_flags & F2FS_INLINE_DATA) {
			/* converted after the checkpoint: the blocks below replace it */
			memset(inode->node + I_ADDR + 4 * f2fs_addr_start(inode), 0,
			       4 + f2fs_max_inline_data(inode));
			inode->inline_flags &= (uint8_t)~(F2FS_INLINE_DATA | F2FS_DATA_EXIST);
		}
		src_addrs = page + I_ADDR + 4 * f2fs_addr_start(inode);
		count = inode->addrs_per_inode;
	} else {
		src_addrs = page;
		count = addrs_per_block(inode);
	}
	start = start_bidx_of_node(inode, ofs);
	if (start >= f2fs_max_file_blocks(inode))
		return f2fs_corrupted(sb, "recovery: inode %u dnode offset %u out of range",
				      inode->ino, ofs);
	dn = f2fs_alloc_blocks((sizeof(*dn) + F2FS_BLKSIZE - 1) / F2FS_BLKSIZE);
	if (!dn)
		return -ENOMEM;
	err = get_dnode_for_write(sb, inode, (uint32_t)start, dn);
	if (!err && (dn->ofs != 0 || (!dn->is_inode && f2fs_node_ofs(dn->blk) != ofs)))
		err = f2fs_corrupted(sb, "recovery: inode %u: dnode offset %u does not match the "
				     "tree", inode->ino, ofs);
	for (uint32_t i = 0; !err && i < count && i < dn->naddrs; i++) {
		uint32_t src = get_le32(dn->addrs + 4 * i);
		uint32_t dest = get_le32(src_addrs + 4 * i);

		if (src == dest)
			continue;
		if (dest == NULL_ADDR) {
			free_slot(sb, inode, dn->addrs, i);
			continue;
		}
		if (dest == NEW_ADDR) {
			free_slot(sb, inode, dn->addrs, i);
			put_le32(dn->addrs + 4 * i, NEW_ADDR);
			count_blocks(sb, 1);
			inode->blocks++;
			continue;
		}
		if (dest == COMPRESS_ADDR || !f2fs_valid_main_blkaddr(sb, dest)) {
			err = f2fs_corrupted(sb, "recovery: inode %u maps block %llu to invalid "
					     "address 0x%x", inode->ino,
					     (unsigned long long)(start + i), dest);
			break;
		}
		err = f2fs_recover_block(sb, dest, dn->nid, dn->version, (uint16_t)i);
		if (err)
			break;
		if (src == NULL_ADDR) {
			count_blocks(sb, 1);
			inode->blocks++;
		} else if (src != NEW_ADDR) {
			f2fs_invalidate_block(sb, src);
		}
		put_le32(dn->addrs + 4 * i, dest);
	}
	if (!err)
		err = put_dnode(sb, inode, dn);
	f2fs_inode_drop_largest_extent(inode, 0, UINT32_MAX);
	free(dn);
	if (err || ofs != 0)
		return err;
xattr:
	/* recover_inline_xattr */
	if (inode->inline_xattr_addrs && (page[I_INLINE] & F2FS_INLINE_XATTR))
		memcpy(f2fs_inline_xattr_addr(inode), page + (f2fs_inline_xattr_addr(inode) - inode->node),
		       f2fs_inline_xattr_size(inode));
	return 0;
}
