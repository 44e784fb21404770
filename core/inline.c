// SPDX-License-Identifier: GPL-2.0
/*
 * Inline data, inline dentries and the inline xattr area: views into the
 * raw inode block.  All offsets follow the kernel's f2fs.h helpers
 * (inline_data_addr, MAX_INLINE_DATA, inline_xattr_addr,
 * make_dentry_ptr_inline), so that the layouts match what it writes.
 *
 * The fields used here (extra_isize, inline_xattr_addrs) are range-checked
 * when the inode is loaded; the F2FS_MIN clamps below only keep a bad value
 * from ever producing an offset outside the 4 KiB block.
 */
#include <limits.h>
#include <string.h>

#include "f2fs.h"

/* Words of i_addr taken by extra attributes, clamped to i_addr. */
static uint32_t extra_words(const struct f2fs_inode *inode)
{
	return F2FS_MIN((uint32_t)inode->extra_isize / 4, (uint32_t)DEF_ADDRS_PER_INODE);
}

/* Words of i_addr reserved for inline xattrs, clamped to i_addr. */
static uint32_t xattr_words(const struct f2fs_inode *inode)
{
	return F2FS_MIN((uint32_t)inode->inline_xattr_addrs, (uint32_t)DEF_ADDRS_PER_INODE);
}

uint8_t *f2fs_inline_data_addr(const struct f2fs_inode *inode)
{
	return inode->node + I_ADDR + 4 * (extra_words(inode) + DEF_INLINE_RESERVED_SIZE);
}

/*
 * MAX_INLINE_DATA: the i_addr words left after the extra attributes, the
 * inline xattr area and one reserved word.  The xattr words count even
 * when the inode has no F2FS_INLINE_XATTR flag: the kernel sizes the
 * layout from i_inline_xattr_size alone.
 */
size_t f2fs_max_inline_data(const struct f2fs_inode *inode)
{
	uint32_t used = extra_words(inode) + xattr_words(inode) + DEF_INLINE_RESERVED_SIZE;

	if (used >= DEF_ADDRS_PER_INODE)
		return 0;
	return 4 * (size_t)(DEF_ADDRS_PER_INODE - used);
}

uint8_t *f2fs_inline_xattr_addr(const struct f2fs_inode *inode)
{
	return inode->node + I_ADDR + 4 * (DEF_ADDRS_PER_INODE - xattr_words(inode));
}

/*
 * As the kernel's inline_xattr_size(): the area holds xattrs only when
 * F2FS_INLINE_XATTR is set.  Without the flag the space may be reserved
 * (e.g. inline-dentry directories) but must not be read as xattrs.
 */
size_t f2fs_inline_xattr_size(const struct f2fs_inode *inode)
{
	if (!(inode->inline_flags & F2FS_INLINE_XATTR))
		return 0;
	return 4 * (size_t)xattr_words(inode);
}

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
