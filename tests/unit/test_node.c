// SPDX-License-Identifier: GPL-2.0
/*
 * Node walks on a writable memory mount: one block is written in each part
 * of a file's node tree (the inode's own slots, both direct nodes, the
 * direct nodes under both indirect nodes and under the double-indirect
 * node), and f2fs_get_dnode_of_data must find each through nodes whose
 * footers carry the right inode and node offset, agree with
 * f2fs_start_bidx_of_node and f2fs_map_blocks, report missing subtrees as
 * holes of the right length, and create exactly the nodes a write needs.
 * The checked read refuses a node of another inode or offset; truncation
 * gives every node back; fsck.f2fs finds nothing to fix.
 */
#include "rwimage.h"

struct spot {
	const char *what;
	uint64_t lblk;
	uint32_t nofs;		/* node offset of the direct node (0: the inode) */
};

static int write_block(struct rwimage *im, uint32_t ino, uint64_t lblk)
{
	uint8_t *b = f2fs_alloc_blocks(1);
	ssize_t w;

	if (!b)
		return -ENOMEM;
	rw_pattern(b, (uint32_t)lblk);
	w = f2fs_write(im->sb, ino, b, F2FS_BLKSIZE, lblk * F2FS_BLKSIZE);
	free(b);
	return w == F2FS_BLKSIZE ? 0 : w < 0 ? (int)w : -EIO;
}

static void check_spot(struct rwimage *im, struct f2fs_inode *inode, const struct spot *s)
{
	struct dnode_of_data dn;
	uint32_t pblk, n, a;
	int err = f2fs_get_dnode_of_data(im->sb, inode, (uint32_t)s->lblk, LOOKUP_NODE, &dn);
	uint8_t *back = f2fs_alloc_blocks(1), *want = f2fs_alloc_blocks(1);

	CHECK(err == 0, "%s: walk to block %llu: %d", s->what, (unsigned long long)s->lblk, err);
	if (err || !back || !want)
		goto out;
	a = get_le32(dn.addrs + 4 * dn.ofs_in_node);
	if (s->nofs == 0) {
		CHECK(dn.is_inode && dn.nid == inode->ino, "%s: in the inode itself", s->what);
		CHECK_EQ_U64(dn.ofs_in_node, s->lblk, "slot in the inode");
	} else {
		CHECK(!dn.is_inode, "%s: in a direct node", s->what);
		CHECK(f2fs_node_ino(dn.node) == inode->ino && f2fs_node_nid(dn.node) == dn.nid,
		      "%s: footer names node %u of inode %u", s->what, f2fs_node_nid(dn.node),
		      f2fs_node_ino(dn.node));
		CHECK_EQ_U64(f2fs_node_ofs(dn.node), s->nofs, s->what);
		CHECK_EQ_U64(f2fs_start_bidx_of_node(inode, s->nofs) + dn.ofs_in_node, s->lblk,
			     "start_bidx_of_node + slot");
		CHECK(f2fs_is_dnode(dn.node), "%s: a direct node", s->what);
	}
	CHECK(f2fs_valid_main_blkaddr(im->sb, a), "%s: the slot holds 0x%x", s->what, a);
	CHECK(f2fs_map_blocks(im->sb, inode, (uint32_t)s->lblk, 1, &pblk, &n) == 0 && pblk == a,
	      "%s: f2fs_map_blocks agrees (0x%x)", s->what, pblk);
	rw_pattern(want, (uint32_t)s->lblk);
	CHECK(f2fs_read(im->sb, inode->ino, back, F2FS_BLKSIZE, s->lblk * F2FS_BLKSIZE) ==
		      F2FS_BLKSIZE && !memcmp(back, want, F2FS_BLKSIZE),
	      "%s: the block reads back", s->what);
out:
	free(back);
	free(want);
}

/* A lookup below a missing node: -ENOENT and the blocks to the end of its subtree. */
static void check_hole(struct rwimage *im, struct f2fs_inode *inode, uint64_t lblk,
		       uint64_t want, const char *what)
{
	struct dnode_of_data dn;
	uint32_t pblk, n;
	int err = f2fs_get_dnode_of_data(im->sb, inode, (uint32_t)lblk, LOOKUP_NODE, &dn);

	CHECK(err == -ENOENT, "%s: lookup of block %llu: %d", what, (unsigned long long)lblk, err);
	if (err == -ENOENT)
		CHECK_EQ_U64(dn.hole_blocks, want, what);
	CHECK(f2fs_map_blocks(im->sb, inode, (uint32_t)lblk, UINT32_MAX, &pblk, &n) == 0 &&
	      pblk == NULL_ADDR && n == F2FS_MIN(want, (uint64_t)UINT32_MAX),
	      "%s: f2fs_map_blocks maps a hole of %u", what, n);
}

static void walks(struct rwimage *im)
{
	uint32_t ino = rw_create(im, "tree"), nodes0, api, apb;
	const uint64_t N = NIDS_PER_BLOCK;
	struct f2fs_inode *inode;
	uint64_t blocks, dind;

	if (!ino || f2fs_iget(im->sb, ino, &inode))
		return;
	CHECK(write_block(im, ino, 1) == 0, "a block past the inline area");
	CHECK(!(inode->inline_flags & F2FS_INLINE_DATA), "no longer inline");
	api = inode->addrs_per_inode;
	apb = f2fs_addrs_per_block(inode);
	dind = api + 2 * (uint64_t)apb + 2 * (uint64_t)apb * N;
	{
		const struct spot spots[] = {
			{ "inode", 1, 0 },
			{ "direct node 1", api + 7, 1 },
			{ "direct node 2", api + apb + 3, 2 },
			{ "indirect 1, child 0", api + 2 * (uint64_t)apb + 2, 4 },
			{ "indirect 1, child 5", api + 7 * (uint64_t)apb, 4 + 5 },
			{ "indirect 2, child 0", api + 2 * (uint64_t)apb + N * apb, 5 + N },
			{ "double indirect, 0/0", dind + 9, 7 + 2 * N },
			{ "double indirect, 1/1", dind + (N + 1) * apb, 7 + 2 * N + (N + 1) + 1 },
		};

		/* before the double-indirect node exists, its whole subtree is one hole */
		check_hole(im, inode, dind + 3, N * N * apb - 3, "no double-indirect node");
		nodes0 = im->sb->nm->valid_node_count;
		blocks = inode->blocks;
		for (size_t i = 1; i < ARRAY_SIZE(spots); i++)
			CHECK(write_block(im, ino, spots[i].lblk) == 0, "write %s", spots[i].what);
		/* 2 direct, 2 indirect + 3 under them, double indirect + 2 + 2 */
		CHECK_EQ_U64(im->sb->nm->valid_node_count - nodes0, 2 + 2 + 3 + 1 + 4,
			     "nodes created on the way");
		CHECK_EQ_U64(inode->blocks - blocks, 12 + 7, "i_blocks: the nodes and data blocks");
		for (size_t i = 0; i < ARRAY_SIZE(spots); i++)
			check_spot(im, inode, &spots[i]);
		check_hole(im, inode, api + 2 * (uint64_t)apb + N * apb + apb + 5, apb - 5,
			   "a missing direct node under indirect 2");
		check_hole(im, inode, dind + 2 * (N * apb), N * apb,
			   "a missing indirect node under the double indirect");
	}
	/* the same walks after a checkpoint: the nodes come from the device now */
	f2fs_iput(im->sb, inode);
	CHECK(rw_remount(im) == 0, "remount");
	if (!im->sb || f2fs_iget(im->sb, ino, &inode))
		return;
	check_spot(im, inode, &(struct spot){ "after remount: indirect 2", api + 2 * (uint64_t)apb +
					       N * apb, 5 + N });
	check_spot(im, inode, &(struct spot){ "after remount: double indirect",
					       dind + (N + 1) * apb, 7 + 2 * N + (N + 1) + 1 });

	/* truncation takes back every node past the new end */
	nodes0 = im->sb->nm->valid_node_count;
	{
		struct f2fs_setattr sa = { .valid = F2FS_SET_SIZE,
					   .size = (api + 2 * (uint64_t)apb + 3) * F2FS_BLKSIZE };
		struct f2fs_stat st;

		CHECK(f2fs_setattr(im->sb, ino, &sa, &st) == 0, "truncate into indirect 1");
	}
	CHECK_EQ_U64(nodes0 - im->sb->nm->valid_node_count, 1 + 2 + 5,
		     "indirect 1's child 5, indirect 2 and its child, the double-indirect tree");
	check_spot(im, inode, &(struct spot){ "kept: indirect 1, child 0",
					       api + 2 * (uint64_t)apb + 2, 4 });
	check_hole(im, inode, api + 2 * (uint64_t)apb + N * apb, N * apb, "indirect 2 gone");
	{
		struct f2fs_setattr sa = { .valid = F2FS_SET_SIZE, .size = 0 };
		struct f2fs_stat st;

		CHECK(f2fs_setattr(im->sb, ino, &sa, &st) == 0, "truncate to 0");
	}
	CHECK_EQ_U64(inode->blocks, 1, "only the inode block is left");
	CHECK(!f2fs_i_nid(inode, 0) && !f2fs_i_nid(inode, 2) && !f2fs_i_nid(inode, 4),
	      "no node pointers left");
	f2fs_iput(im->sb, inode);
}

/* Nodes of another inode or offset are refused, on a copy that is thrown away. */
static void checked_reads(const struct rwimage *im)
{
	struct rwimage c;
	struct f2fs_inode *inode;
	uint8_t *blk = f2fs_alloc_blocks(1);
	uint32_t ino, nid;

	if (!blk || !rw_copy(im, &c))
		goto out;
	ino = rw_create(&c, "checked");
	if (!ino || f2fs_iget(c.sb, ino, &inode))
		goto out;
	nid = inode->addrs_per_inode;	/* the first block of direct node 1 */
	f2fs_iput(c.sb, inode);
	if (write_block(&c, ino, nid) || f2fs_iget(c.sb, ino, &inode))
		goto out;
	nid = f2fs_i_nid(inode, 0);
	f2fs_iput(c.sb, inode);
	CHECK(nid != 0, "direct node 1 exists");
	CHECK(f2fs_get_node(c.sb, nid, ino, 1, blk) == 0, "the right inode and offset: read");
	CHECK(f2fs_get_node(c.sb, nid, ino, F2FS_NODE_OFS_ANY, blk) == 0, "any offset: read");
	CHECK(!atomic_load(&c.sb->need_fsck) && rw_nr_errors == 0, "nothing reported so far");
	CHECK(f2fs_get_node(c.sb, nid, ino + 1, 1, blk) == -EUCLEAN, "another inode: refused");
	CHECK(f2fs_get_node(c.sb, nid, ino, 2, blk) == -EUCLEAN, "another offset: refused");
	CHECK(atomic_load(&c.sb->need_fsck) && rw_nr_errors == 2 &&
	      strstr(rw_last_error, "expected inode"), "reported: %s", rw_last_error);
	/* a direct node whose footer lies is refused by the walk too */
	CHECK(f2fs_get_node(c.sb, nid, ino, 1, blk) == 0, "read it");
	put_le32(blk + NF_FLAG, (7u << OFFSET_BIT_SHIFT) | (f2fs_node_flag(blk) & 7));
	CHECK(f2fs_set_node_dirty(c.sb, nid, blk) == 0, "a lying footer");
	if (!f2fs_iget(c.sb, ino, &inode)) {
		struct dnode_of_data dn;
		uint32_t pblk, n;

		f2fs_drop_extent_cache(inode, 0, UINT32_MAX);
		CHECK(f2fs_get_dnode_of_data(c.sb, inode, inode->addrs_per_inode, LOOKUP_NODE, &dn) ==
			      -EUCLEAN, "the walk refuses node offset 7 where 1 belongs");
		CHECK(f2fs_map_blocks(c.sb, inode, inode->addrs_per_inode, 1, &pblk, &n) == -EUCLEAN,
		      "and so does the mapping");
		f2fs_iput(c.sb, inode);
	}
out:
	rw_free(&c);
	free(blk);
}

int main(void)
{
	struct rwimage im;

	if (!rw_image(&im, NULL, 64))
		return check_done("test_node");
	walks(&im);
	CHECK(rw_nr_errors == 0, "no error reported: %s", rw_last_error);
	if (im.sb)
		checked_reads(&im);
	rw_done(&im);
	return check_done("test_node");
}
