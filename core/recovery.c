// SPDX-License-Identifier: GPL-2.0
/*
 * Roll-forward recovery.  After the last checkpoint, fsync() writes dnodes
 * to the warm node log chained by next_blkaddr; a dnode belongs to the
 * current checkpoint when its footer carries the checkpoint's version
 * (is_recoverable_dnode).  This read-only version finds them so that a
 * mount can say recovery is pending; replaying them needs a writer.
 */
#include <stdlib.h>

#include "f2fs.h"

static bool is_recoverable_dnode(const struct f2fs_sb *sb, const uint8_t *node)
{
	uint64_t cp_ver = sb->cp_ver;
	uint64_t node_ver = f2fs_node_cp_ver(node);

	/* fsck.f2fs may leave the crc half unset */
	if (f2fs_cp_flag(sb, CP_NOCRC_RECOVERY_FLAG))
		return (uint32_t)cp_ver == (uint32_t)node_ver;
	if (f2fs_cp_flag(sb, CP_CRC_RECOVERY_FLAG)) {
		uint32_t crc = get_le32(sb->ckpt + get_le32(sb->ckpt + CP_CHECKSUM_OFFSET));

		cp_ver |= (uint64_t)crc << 32;
	}
	return cp_ver == node_ver;
}

int f2fs_find_fsync_dnodes(struct f2fs_sb *sb, uint32_t *count)
{
	const struct f2fs_curseg *cs = &sb->curseg[CURSEG_WARM_NODE];
	uint32_t blkaddr = f2fs_seg_start_blkaddr(sb, cs->segno) + cs->blkoff;
	uint64_t limit = (uint64_t)sb->segment_count_main << sb->log_blocks_per_seg;
	uint8_t *blk = f2fs_alloc_blocks(1);
	uint32_t n = 0;
	int err = 0;

	if (!blk)
		return -ENOMEM;
	/* the chain may loop on a hostile image: never walk more than the main area */
	for (uint64_t steps = 0; steps < limit && f2fs_valid_main_blkaddr(sb, blkaddr); steps++) {
		err = f2fs_dev_read(sb->dev, blkaddr, blk, 1);
		if (err)
			break;
		if (!is_recoverable_dnode(sb, blk))
			break;
		if (f2fs_node_flag(blk) & (1u << FSYNC_BIT_SHIFT))
			n++;
		blkaddr = f2fs_node_next_blkaddr(blk);
	}
	free(blk);
	*count = n;
	return err;
}
