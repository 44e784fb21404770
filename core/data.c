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
		    size_t bytes, uint8_t *dst)
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
		.iov = iov, .iovcnt = iovcnt,
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

ssize_t f2fs_file_read(struct f2fs_sb *sb, struct f2fs_inode *inode, void *buf, size_t len,
		       uint64_t off)
{
	uint8_t *dst = buf;
	size_t done = 0;

	if (off >= inode->size || !len)
		return 0;
	len = (size_t)F2FS_MIN((uint64_t)len, inode->size - off);
	if (inode->inline_flags & F2FS_INLINE_DATA)
		return f2fs_read_inline_data(inode, buf, len, off);
	if (f2fs_is_encrypted(inode))
		return -ENOKEY;
	if (f2fs_is_compressed(inode))
		return -EOPNOTSUPP;

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
			return done ? (ssize_t)done : err;
		bytes = (size_t)F2FS_MIN((uint64_t)n * F2FS_BLKSIZE - skip, (uint64_t)(len - done));
		if (is_hole(pblk)) {
			memset(dst + done, 0, bytes);
		} else {
			n = (uint32_t)((skip + bytes + F2FS_BLKSIZE - 1) / F2FS_BLKSIZE);
			err = read_run(sb, pblk, n, skip, bytes, dst + done);
			if (err)
				return done ? (ssize_t)done : err;
		}
		done += bytes;
	}
	return (ssize_t)done;
}
