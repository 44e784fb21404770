// SPDX-License-Identifier: GPL-2.0
/*
 * Node blocks: reading a node by nid through the NAT and the block cache,
 * and checking that its footer agrees with what pointed to it.
 */
#include "f2fs.h"

int f2fs_get_node(struct f2fs_sb *sb, uint32_t nid, uint8_t *buf)
{
	struct f2fs_node_info ni;
	int err = f2fs_get_node_info(sb, nid, &ni);

	if (err)
		return err;
	if (ni.blkaddr == NULL_ADDR)
		return f2fs_corrupted(sb, "node %u: referenced but free in the NAT", nid);
	if (!f2fs_valid_main_blkaddr(sb, ni.blkaddr))
		return f2fs_corrupted(sb, "node %u: NAT block address 0x%x is outside the main area",
				      nid, ni.blkaddr);
	if (!f2fs_cache_lookup(sb->cache, ni.blkaddr, buf)) {
		err = f2fs_dev_read(sb->dev, ni.blkaddr, buf, 1);
		if (err)
			return err;
		if (f2fs_node_nid(buf) != nid || f2fs_node_ino(buf) != ni.ino)
			return f2fs_corrupted(sb, "node %u at 0x%x: footer says nid %u ino %u, NAT "
					      "says ino %u", nid, ni.blkaddr, f2fs_node_nid(buf),
					      f2fs_node_ino(buf), ni.ino);
		f2fs_cache_insert(sb->cache, ni.blkaddr, buf);
	}
	return 0;
}
