// SPDX-License-Identifier: GPL-2.0
/*
 * Inline data and inline dentries: reading and writing data kept in the
 * inode block, moving it out to block 0 when it outgrows the inline area
 * (f2fs_convert_inline_inode), its roll-forward, and the dentry view of an
 * inline directory.  The areas themselves are located by the f2fs.h
 * helpers (inline_data_addr, MAX_INLINE_DATA, inline_xattr_addr), as in
 * the kernel, so that the layouts match what it writes.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "f2fs.h"

/*
 * Read from an inline-data inode.  Bytes past the inline area but inside
 * i_size read as zeros, as the kernel serves any page beyond index 0 of
 * an inline inode as a zero page.
 */
ssize_t f2fs_read_inline_data(struct f2fs_inode *inode, void *buf, size_t len, uint64_t off)
{
	size_t max = f2fs_max_inline_data(inode);
	const uint8_t *src = f2fs_inline_data_addr(inode);
	uint8_t *dst = buf;
	size_t n, from_inline = 0;

	if (off >= inode->size || len == 0)
		return 0;
	n = (size_t)F2FS_MIN((uint64_t)len, inode->size - off);
	if (n > SSIZE_MAX)
		n = SSIZE_MAX;

	if (off < max) {
		from_inline = F2FS_MIN(n, max - (size_t)off);
		memcpy(dst, src + off, from_inline);
	}
	memset(dst + from_inline, 0, n - from_inline);
	return (ssize_t)n;
}

void f2fs_write_inline_data(struct f2fs_inode *inode, const void *buf, size_t len, uint64_t off)
{
	memcpy(f2fs_inline_data_addr(inode) + off, buf, len);
	inode->inline_flags |= F2FS_DATA_EXIST;
}

/* f2fs_truncate_inline_inode: bytes from `size` on read as zeros again. */
void f2fs_truncate_inline_inode(struct f2fs_inode *inode, uint64_t size)
{
	size_t max = f2fs_max_inline_data(inode);

	if (size < inode->size)
		memset(f2fs_inline_data_addr(inode) + size, 0,
		       (size_t)F2FS_MIN(inode->size, (uint64_t)max) - (size_t)size);
}

/* No longer inline: the reserved word (block 0's slot) and the area are zeroed. */
static void clear_inline_data(struct f2fs_inode *inode)
{
	memset(inode->node + I_ADDR + 4 * f2fs_addr_start(inode), 0,
	       4 * DEF_INLINE_RESERVED_SIZE + f2fs_max_inline_data(inode));
	inode->inline_flags &= (uint8_t)~(F2FS_INLINE_DATA | F2FS_DATA_EXIST);
}

/*
 * f2fs_convert_inline_inode: move inline data into block 0.  The inline
 * area overlaps i_addr, so it is cleared before any address is stored,
 * and put back if the block cannot be written (out of space), so that a
 * failed conversion leaves the inline data as it was.
 */
int f2fs_convert_inline_inode(struct f2fs_sb *sb, struct f2fs_inode *inode)
{
	size_t max = f2fs_max_inline_data(inode);
	size_t n = (size_t)F2FS_MIN(inode->size, (uint64_t)max);
	size_t area_len = 4 * DEF_INLINE_RESERVED_SIZE + max;
	uint8_t *area = inode->node + I_ADDR + 4 * f2fs_addr_start(inode);
	uint8_t *copy, *saved;
	uint8_t flags = inode->inline_flags;
	int err = 0;

	/* nothing to move (the first write of a new file): only the flag goes */
	if (!n) {
		clear_inline_data(inode);
		return 0;
	}
	copy = f2fs_alloc_blocks(2);
	if (!copy)
		return -ENOMEM;
	saved = copy + F2FS_BLKSIZE;
	memset(copy, 0, F2FS_BLKSIZE);
	memcpy(copy, f2fs_inline_data_addr(inode), n);
	memcpy(saved, area, area_len);
	clear_inline_data(inode);
	err = f2fs_write_blocks(sb, inode, copy, n, 0, NULL);
	if (err) {
		struct dnode_of_data dn;

		/* mapped, then the write failed: block 0 goes again */
		if (!f2fs_get_dnode_of_data(sb, inode, 0, LOOKUP_NODE, &dn))
			f2fs_truncate_data_blocks_range(sb, &dn, 1);
		memcpy(area, saved, area_len);
		inode->inline_flags = flags;
	}
	free(copy);
	return err;
}

static void copy_inline_data(struct f2fs_inode *inode, const uint8_t *page)
{
	memcpy(f2fs_inline_data_addr(inode), page + (f2fs_inline_data_addr(inode) - inode->node),
	       f2fs_max_inline_data(inode));
}

/*
 * f2fs_recover_inline_data: roll-forward of an fsync()ed inode block.
 * 1 when its data was inline (now taken), 0 when its blocks are to be
 * replayed (an inline area converted since the checkpoint is dropped).
 */
int f2fs_recover_inline_data(struct f2fs_sb *sb, struct f2fs_inode *inode, const uint8_t *page)
{
	if ((page[I_INLINE] & F2FS_INLINE_DATA) && (inode->inline_flags & F2FS_INLINE_DATA)) {
		copy_inline_data(inode, page);
		return 1;
	}
	if (page[I_INLINE] & F2FS_INLINE_DATA) {
		/* inline in the fsync()ed copy only: drop the blocks, take its data */
		int err = f2fs_truncate_inode_blocks(sb, inode, 0);

		if (err)
			return err;
		inode->inline_flags |= F2FS_INLINE_DATA;
		copy_inline_data(inode, page);
		return 1;
	}
	if (inode->inline_flags & F2FS_INLINE_DATA)
		clear_inline_data(inode);	/* converted after the checkpoint */
	return 0;
}

void f2fs_make_dentry_ptr_block(struct f2fs_dentry_ptr *d, const uint8_t *blk)
{
	d->max = NR_DENTRY_IN_BLOCK;
	d->bitmap = blk;
	d->dentry = blk + DENTRY_BLOCK_DENTRIES;
	d->filename = blk + DENTRY_BLOCK_FILENAMES;
}

/*
 * Inline dentry area: bitmap, reserved bytes, dentries, name slots.  The
 * entry count is the most that fit with one bitmap bit each; whatever is
 * left over becomes the reserved gap between the bitmap and the dentries.
 */
void f2fs_make_dentry_ptr_inline(struct f2fs_dentry_ptr *d, const struct f2fs_inode *inode)
{
	size_t max_inline = f2fs_max_inline_data(inode);
	size_t nr = max_inline * 8 / ((SIZE_OF_DIR_ENTRY + F2FS_SLOT_LEN) * 8 + 1);
	size_t bitmap_size = (nr + 7) / 8;
	size_t reserved = max_inline - ((SIZE_OF_DIR_ENTRY + F2FS_SLOT_LEN) * nr + bitmap_size);
	const uint8_t *base = f2fs_inline_data_addr(inode);

	d->max = (uint32_t)nr;
	d->bitmap = base;
	d->dentry = base + bitmap_size + reserved;
	d->filename = d->dentry + SIZE_OF_DIR_ENTRY * nr;
}
