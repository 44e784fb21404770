// SPDX-License-Identifier: GPL-2.0
/*
 * Segment manager: the six current segments with their summary blocks
 * (which carry the NAT and SIT journals), SIT addressing and block address
 * validation.
 */
#include <stdlib.h>
#include <string.h>

#include "f2fs.h"

bool f2fs_valid_main_blkaddr(const struct f2fs_sb *sb, uint32_t blkaddr)
{
	return blkaddr >= sb->main_blkaddr && blkaddr < f2fs_main_end_blkaddr(sb);
}

/* current_sit_addr: the SIT is shadow-paged like the NAT. */
uint32_t f2fs_sit_block_addr(const struct f2fs_sb *sb, uint32_t segno)
{
	uint32_t blk_off = segno / SIT_ENTRY_PER_BLOCK;
	uint32_t addr = sb->sit_blkaddr + blk_off;

	if (blk_off < sb->sit_bitmap_size * 8 && f2fs_test_bit(blk_off, sb->sit_bitmap))
		addr += (sb->segment_count_sit / 2) << sb->log_blocks_per_seg;
	return addr;
}

static uint32_t cur_segno(const struct f2fs_sb *sb, int type)
{
	return type < NR_CURSEG_DATA_TYPE
		       ? get_le32(sb->ckpt + CP_CUR_DATA_SEGNO + 4 * type)
		       : get_le32(sb->ckpt + CP_CUR_NODE_SEGNO + 4 * (type - NR_CURSEG_DATA_TYPE));
}

static uint16_t cur_blkoff(const struct f2fs_sb *sb, int type)
{
	return type < NR_CURSEG_DATA_TYPE
		       ? get_le16(sb->ckpt + CP_CUR_DATA_BLKOFF + 2 * type)
		       : get_le16(sb->ckpt + CP_CUR_NODE_BLKOFF + 2 * (type - NR_CURSEG_DATA_TYPE));
}

/* sum_blk_addr: summaries counted back from the end of the pack. */
static uint32_t sum_blk_addr(const struct f2fs_sb *sb, int base, int type)
{
	return f2fs_cp_pack_start(sb) + get_le32(sb->ckpt + CP_PACK_TOTAL_BLOCK_COUNT) -
	       (uint32_t)(base + 1) + (uint32_t)type;
}

static int read_compacted_summaries(struct f2fs_sb *sb)
{
	uint32_t blk = f2fs_cp_pack_start(sb) + get_le32(sb->ckpt + CP_PACK_START_SUM);
	uint32_t end = f2fs_cp_pack_start(sb) + get_le32(sb->ckpt + CP_PACK_TOTAL_BLOCK_COUNT);
	uint8_t *page = f2fs_alloc_blocks(1);
	uint32_t offset;
	int err;

	if (!page)
		return -ENOMEM;
	err = f2fs_dev_read(sb->dev, blk++, page, 1);
	if (err)
		goto out;
	memcpy(sb->curseg[CURSEG_HOT_DATA].sum + SUM_JOURNAL_OFFSET, page, SUM_JOURNAL_SIZE);
	memcpy(sb->curseg[CURSEG_COLD_DATA].sum + SUM_JOURNAL_OFFSET, page + SUM_JOURNAL_SIZE,
	       SUM_JOURNAL_SIZE);
	offset = 2 * SUM_JOURNAL_SIZE;
	for (int t = CURSEG_HOT_DATA; t <= CURSEG_COLD_DATA; t++) {
		struct f2fs_curseg *cs = &sb->curseg[t];
		uint32_t n = cs->alloc_type ? sb->blocks_per_seg : cs->blkoff; /* SSR: all */

		for (uint32_t j = 0; j < n; j++) {
			memcpy(cs->sum + j * SUMMARY_SIZE, page + offset, SUMMARY_SIZE);
			offset += SUMMARY_SIZE;
			if (offset + SUMMARY_SIZE <= F2FS_BLKSIZE - SUM_FOOTER_SIZE)
				continue;
			if (blk >= end) {
				err = f2fs_corrupted(sb, "checkpoint: compact summaries run past the pack");
				goto out;
			}
			err = f2fs_dev_read(sb->dev, blk++, page, 1);
			if (err)
				goto out;
			offset = 0;
		}
	}
out:
	free(page);
	return err;
}

static int read_normal_summary(struct f2fs_sb *sb, int type)
{
	struct f2fs_curseg *cs = &sb->curseg[type];
	bool umount = f2fs_cp_flag(sb, CP_UMOUNT_FLAG);
	uint32_t addr;

	if (type < NR_CURSEG_DATA_TYPE)
		addr = umount ? sum_blk_addr(sb, NR_CURSEG_TYPE, type)
			      : sum_blk_addr(sb, NR_CURSEG_DATA_TYPE, type);
	else if (umount)
		addr = sum_blk_addr(sb, NR_CURSEG_NODE_TYPE, type - CURSEG_HOT_NODE);
	else
		addr = sb->ssa_blkaddr + cs->segno;	/* node summaries live in the SSA */
	return f2fs_dev_read(sb->dev, addr, cs->sum, 1);
}

int f2fs_build_segment_manager(struct f2fs_sb *sb)
{
	int err = 0;

	for (int t = 0; t < NR_CURSEG_TYPE; t++) {
		struct f2fs_curseg *cs = &sb->curseg[t];

		cs->segno = cur_segno(sb, t);
		cs->blkoff = cur_blkoff(sb, t);
		cs->alloc_type = sb->ckpt[CP_ALLOC_TYPE + t];
		cs->sum = f2fs_alloc_blocks(1);
		if (!cs->sum)
			return -ENOMEM;
		memset(cs->sum, 0, F2FS_BLKSIZE);
	}
	if (f2fs_cp_flag(sb, CP_COMPACT_SUM_FLAG)) {
		err = read_compacted_summaries(sb);
		for (int t = CURSEG_HOT_NODE; !err && t < NR_CURSEG_TYPE; t++)
			err = read_normal_summary(sb, t);
	} else {
		for (int t = 0; !err && t < NR_CURSEG_TYPE; t++)
			err = read_normal_summary(sb, t);
	}
	if (err)
		return err;
	if (get_le16(sb->curseg[CURSEG_HOT_DATA].sum + SUM_JOURNAL_OFFSET) > NAT_JOURNAL_ENTRIES)
		return f2fs_corrupted(sb, "checkpoint: NAT journal claims %u entries (max %d)",
				      get_le16(sb->curseg[CURSEG_HOT_DATA].sum + SUM_JOURNAL_OFFSET),
				      NAT_JOURNAL_ENTRIES);
	if (get_le16(sb->curseg[CURSEG_COLD_DATA].sum + SUM_JOURNAL_OFFSET) > SIT_JOURNAL_ENTRIES)
		return f2fs_corrupted(sb, "checkpoint: SIT journal claims %u entries (max %d)",
				      get_le16(sb->curseg[CURSEG_COLD_DATA].sum + SUM_JOURNAL_OFFSET),
				      SIT_JOURNAL_ENTRIES);
	return 0;
}

void f2fs_destroy_segment_manager(struct f2fs_sb *sb)
{
	for (int t = 0; t < NR_CURSEG_TYPE; t++) {
		free(sb->curseg[t].sum);
		sb->curseg[t].sum = NULL;
	}
}
