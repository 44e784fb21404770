// SPDX-License-Identifier: GPL-2.0
/*
 * Node address table: nid -> (ino, block address, version), looked up in
 * the NAT journal of the hot-data summary first, then in the valid copy
 * of the NAT block chosen by the checkpoint's version bitmap.
 */
#include <stdlib.h>

#include "f2fs.h"

/* current_nat_addr */
static uint32_t nat_block_addr(const struct f2fs_sb *sb, uint32_t nid)
{
	uint32_t block_off = nid / NAT_ENTRY_PER_BLOCK;
	uint32_t seg_off = block_off >> sb->log_blocks_per_seg;
	uint32_t addr = sb->nat_blkaddr + (seg_off << sb->log_blocks_per_seg << 1) +
			(block_off & (sb->blocks_per_seg - 1));

	if (f2fs_test_bit(block_off, sb->nat_bitmap))
		addr += sb->blocks_per_seg;
	return addr;
}

static void decode(struct f2fs_node_info *ni, uint32_t nid, const uint8_t *e)
{
	ni->nid = nid;
	ni->version = e[NAT_E_VERSION];
	ni->ino = get_le32(e + NAT_E_INO);
	ni->blkaddr = get_le32(e + NAT_E_BLOCK_ADDR);
}

static bool lookup_journal(struct f2fs_sb *sb, uint32_t nid, struct f2fs_node_info *ni)
{
	const uint8_t *j = sb->curseg[CURSEG_HOT_DATA].sum + SUM_JOURNAL_OFFSET;
	uint16_t n = get_le16(j);	/* bounded at mount */

	for (uint16_t i = 0; i < n; i++) {
		const uint8_t *e = j + 2 + i * NAT_JOURNAL_ENTRY_SIZE;

		if (get_le32(e) == nid) {
			decode(ni, nid, e + 4);
			return true;
		}
	}
	return false;
}

int f2fs_get_node_info(struct f2fs_sb *sb, uint32_t nid, struct f2fs_node_info *ni)
{
	uint8_t blk[F2FS_BLKSIZE];
	uint32_t addr;
	int err;

	if (nid < sb->root_ino || nid >= sb->max_nid)
		return f2fs_corrupted(sb, "NAT: nid %u out of range [%u, %u)", nid, sb->root_ino,
				      sb->max_nid);
	if (lookup_journal(sb, nid, ni))
		return 0;
	addr = nat_block_addr(sb, nid);
	if (!f2fs_cache_lookup(sb->cache, addr, blk)) {
		err = f2fs_dev_read(sb->dev, addr, blk, 1);
		if (err)
			return err;
		f2fs_cache_insert(sb->cache, addr, blk);
	}
	decode(ni, nid, blk + (nid % NAT_ENTRY_PER_BLOCK) * NAT_ENTRY_SIZE);
	return 0;
}
