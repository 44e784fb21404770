// SPDX-License-Identifier: GPL-2.0
/*
 * The read extent cache: runs are kept sorted and merged with neighbours
 * that continue them logically and physically, a run overlapping a known
 * one is not taken, the longest run becomes the largest extent; a budget
 * shared by all trees evicts the least recently used tree, and halves a
 * tree alone over it; f2fs_update_extent_cache learns the mapped runs of a
 * direct node and nothing else; f2fs_drop_extent_cache cuts exactly the
 * range out of the runs (splitting one) and clears the on-disk largest
 * extent where it touches the range.  On a writable memory mount: a read
 * fills the cache, a write cuts the blocks written out of it, and the next
 * read learns the new mapping.
 */
#include "rwimage.h"

static bool hit(struct f2fs_extent_tree *et, uint32_t lblk, uint32_t blk, uint32_t len)
{
	struct f2fs_extent e;

	if (!f2fs_extent_lookup(et, lblk, &e))
		return false;
	return e.blk + (lblk - e.fofs) == blk && e.len - (lblk - e.fofs) == len;
}

static struct f2fs_sb nosb;	/* no budget: sb->extents is NULL */

static void tree(void)
{
	struct f2fs_extent_tree et;
	struct f2fs_extent largest = { 1000, 50000, 10 };

	f2fs_extent_tree_init(&nosb, &et, NULL);
	CHECK(!hit(&et, 0, 0, 0), "empty");
	f2fs_extent_insert(&et, 10, 500, 5);
	CHECK(hit(&et, 10, 500, 5) && hit(&et, 14, 504, 1) && !hit(&et, 15, 0, 0) &&
	      !hit(&et, 9, 0, 0), "one run [10, 15)");
	f2fs_extent_insert(&et, 15, 505, 3);
	CHECK(et.nr == 1 && hit(&et, 10, 500, 8), "a continuing run merges");
	f2fs_extent_insert(&et, 5, 495, 5);
	CHECK(et.nr == 1 && hit(&et, 5, 495, 13), "a run just before merges too");
	f2fs_extent_insert(&et, 18, 900, 2);
	CHECK(et.nr == 2 && hit(&et, 18, 900, 2) && hit(&et, 17, 507, 1),
	      "logically next but elsewhere on disk: a run of its own");
	f2fs_extent_insert(&et, 30, 700, 4);
	f2fs_extent_insert(&et, 20, 902, 10);
	CHECK(et.nr == 3 && hit(&et, 18, 900, 12) && hit(&et, 30, 700, 4),
	      "a run filling the gap joins its predecessor only (%u runs)", et.nr);
	f2fs_extent_insert(&et, 8, 12345, 4);
	CHECK(hit(&et, 8, 498, 10), "an overlapping run is not taken");
	CHECK(et.largest.fofs == 5 && et.largest.len == 13, "the longest run is the largest");
	for (uint32_t i = 0; i < 20000; i++)
		f2fs_extent_insert(&et, 100000 + 2 * i, 200000 + 3 * i, 1);
	CHECK(et.nr == 20003 && hit(&et, 100000, 200000, 1) && hit(&et, 5, 495, 13),
	      "without a budget nothing is forgotten (%u runs)", et.nr);
	/* cuts: inside one run (a split), across runs, at the edges */
	f2fs_drop_extent_cache_runs(&et, 7, 2);
	CHECK(hit(&et, 5, 495, 2) && !hit(&et, 7, 0, 0) && !hit(&et, 8, 0, 0) &&
	      hit(&et, 9, 499, 9), "a cut inside a run splits it");
	f2fs_drop_extent_cache_runs(&et, 16, 16);
	CHECK(hit(&et, 15, 505, 1) && !hit(&et, 16, 0, 0) && !hit(&et, 31, 0, 0) &&
	      hit(&et, 32, 702, 2) && et.largest.len == 0,
	      "a cut across runs trims both ends and takes the largest extent");
	f2fs_extent_tree_destroy(&et);

	f2fs_extent_tree_init(&nosb, &et, &largest);
	CHECK(hit(&et, 1003, 50003, 7), "the largest extent answers first");
	f2fs_extent_tree_destroy(&et);
}

/* Two trees under a budget of 128 runs' worth of arrays (arrays grow by doubling). */
static void budget(void)
{
	struct f2fs_extent_tree a, b;
	size_t max = 128 * sizeof(struct f2fs_extent);

	if (f2fs_extent_mgr_create(&nosb, max))
		return;
	f2fs_extent_tree_init(&nosb, &a, NULL);
	f2fs_extent_tree_init(&nosb, &b, NULL);
	for (uint32_t i = 0; i < 30; i++)
		f2fs_extent_insert(&a, 2 * i, 1000 + 3 * i, 1);
	for (uint32_t i = 0; i < 16; i++)
		f2fs_extent_insert(&b, 2 * i, 5000 + 3 * i, 1);
	CHECK(a.nr == 30 && b.nr == 16, "both fit (%u, %u)", a.nr, b.nr);
	CHECK(hit(&a, 0, 1000, 1), "a is the most recently used now");
	for (uint32_t i = 16; i < 40; i++)
		f2fs_extent_insert(&b, 2 * i, 5000 + 3 * i, 1);
	CHECK(b.nr == 40 && a.nr == 30, "b grows within the budget (%u)", b.nr);
	for (uint32_t i = 40; i < 70; i++)
		f2fs_extent_insert(&b, 2 * i, 5000 + 3 * i, 1);
	CHECK(a.nr == 0 && !hit(&a, 0, 0, 0) && b.nr == 70,
	      "over the budget, the least recently used goes");
	for (uint32_t i = 70; i < 130; i++)
		f2fs_extent_insert(&b, 2 * i, 5000 + 3 * i, 1);
	CHECK(b.nr > 0 && b.nr < 130 && hit(&b, 2 * 129, 5000 + 3 * 129, 1) &&
	      !hit(&b, 0, 0, 0), "a tree alone over it keeps its upper part (%u runs)", b.nr);
	CHECK(f2fs_extent_evictions(&nosb) >= 2, "evictions counted");
	f2fs_extent_tree_destroy(&a);
	f2fs_extent_tree_destroy(&b);
	f2fs_extent_mgr_destroy(&nosb);
}

/* f2fs_update_extent_cache and f2fs_drop_extent_cache on an inode of our own making. */
static void learn_and_drop(struct f2fs_sb *sb)
{
	struct f2fs_inode inode = { .ino = 99 };
	struct dnode_of_data dn = { .inode = &inode, .naddrs = 12, .ofs_in_node = 1 };
	uint32_t m = sb->main_blkaddr, end = f2fs_main_end_blkaddr(sb);
	const uint32_t slots[12] = {
		m + 40, m + 50, m + 51, NULL_ADDR, NEW_ADDR, m + 60, m + 61, m + 62,
		COMPRESS_ADDR, end - 1, m + 3, m + 2,
	};

	inode.node = f2fs_alloc_blocks(1);
	if (!inode.node)
		return;
	memset(inode.node, 0, F2FS_BLKSIZE);
	f2fs_extent_tree_init(sb, &inode.et, NULL);
	dn.addrs = dn.node;
	for (int i = 0; i < 12; i++)
		put_le32(dn.addrs + 4 * i, slots[i]);
	f2fs_update_extent_cache(sb, &dn, 200);	/* slot 1 is file block 200 */
	CHECK(!hit(&inode.et, 199, 0, 0), "slots before ofs_in_node are not learned");
	CHECK(hit(&inode.et, 200, m + 50, 2), "a run of two");
	CHECK(!hit(&inode.et, 202, 0, 0) && !hit(&inode.et, 203, 0, 0), "holes and NEW_ADDR are not runs");
	CHECK(hit(&inode.et, 204, m + 60, 3), "a run of three");
	CHECK(!hit(&inode.et, 207, 0, 0), "a compressed cluster is not a run");
	CHECK(hit(&inode.et, 208, end - 1, 1), "the main area's last block");
	CHECK(hit(&inode.et, 209, m + 3, 1) && hit(&inode.et, 210, m + 2, 1),
	      "going backwards on disk: two runs");

	/* the on-disk largest extent goes only when the range touches it */
	put_le32(inode.node + I_EXT, 500);
	put_le32(inode.node + I_EXT + 4, m + 100);
	put_le32(inode.node + I_EXT + 8, 20);
	f2fs_drop_extent_cache(&inode, 520, 5);
	CHECK(get_le32(inode.node + I_EXT + 8) == 20, "a range after it keeps i_ext");
	CHECK(hit(&inode.et, 200, m + 50, 2) && hit(&inode.et, 204, m + 60, 3),
	      "the runs outside the range stay");
	f2fs_drop_extent_cache(&inode, 490, 10);
	CHECK(get_le32(inode.node + I_EXT + 8) == 20, "a range before it keeps i_ext");
	f2fs_drop_extent_cache(&inode, 519, 1);
	CHECK(get_le32(inode.node + I_EXT) == 0 && get_le32(inode.node + I_EXT + 4) == 0 &&
	      get_le32(inode.node + I_EXT + 8) == 0, "a range touching it clears i_ext");
	f2fs_extent_tree_destroy(&inode.et);
	free(inode.node);
}

#define NB 64

static void coherence(struct rwimage *im)
{
	uint8_t *data = f2fs_alloc_blocks(NB), *back = f2fs_alloc_blocks(NB);
	uint32_t ino = rw_create(im, "runs"), first, pblk, n;
	struct f2fs_inode *inode;

	if (!ino || !data || !back || f2fs_iget(im->sb, ino, &inode))
		goto out;
	for (int i = 0; i < NB; i++)
		rw_pattern(data + (size_t)i * F2FS_BLKSIZE, (uint32_t)i);
	CHECK(f2fs_write(im->sb, ino, data, NB * F2FS_BLKSIZE, 0) == NB * F2FS_BLKSIZE, "write");
	CHECK(!hit(&inode->et, 10, 0, 0), "writing does not fill the cache");
	CHECK(f2fs_map_blocks(im->sb, inode, 0, NB, &first, &n) == 0 && n == NB,
	      "one contiguous run of %d (got %u)", NB, n);
	CHECK(hit(&inode->et, 10, first + 10, NB - 10), "the walk taught the cache the run");

	/* a rewrite moves block 10: the cache must not keep the old address */
	CHECK(f2fs_write(im->sb, ino, data, F2FS_BLKSIZE, 10 * F2FS_BLKSIZE) == F2FS_BLKSIZE,
	      "rewrite block 10");
	CHECK(!hit(&inode->et, 10, 0, 0) && hit(&inode->et, 3, first + 3, 7) &&
	      hit(&inode->et, 11, first + 11, NB - 11),
	      "the write cut block 10 out of the run, the rest stays");
	CHECK(f2fs_map_blocks(im->sb, inode, 10, 1, &pblk, &n) == 0 && pblk != first + 10,
	      "block 10 lives elsewhere now (0x%x)", pblk);
	CHECK(hit(&inode->et, 10, pblk, 1), "the cache learns its new home");
	CHECK(f2fs_map_blocks(im->sb, inode, 0, NB, &first, &n) == 0 && n == 10,
	      "mapping block 0: a run up to block 10 (%u)", n);
	CHECK(f2fs_read(im->sb, ino, back, NB * F2FS_BLKSIZE, 0) == NB * F2FS_BLKSIZE, "read");
	memcpy(data + 10 * F2FS_BLKSIZE, data, F2FS_BLKSIZE);
	CHECK(!memcmp(back, data, NB * F2FS_BLKSIZE), "through the cache, the file's contents");

	/* truncation too */
	{
		struct f2fs_setattr sa = { .valid = F2FS_SET_SIZE, .size = 20 * F2FS_BLKSIZE };
		struct f2fs_stat st;

		CHECK(f2fs_setattr(im->sb, ino, &sa, &st) == 0, "truncate");
	}
	CHECK(!hit(&inode->et, 30, 0, 0) && !hit(&inode->et, 20, 0, 0) &&
	      hit(&inode->et, 19, first + 19, 1),
	      "truncation cut everything from block 20 on, and only that");
	CHECK(f2fs_map_blocks(im->sb, inode, 30, 1, &pblk, &n) == 0 && pblk == NULL_ADDR,
	      "block 30 is a hole");
	f2fs_iput(im->sb, inode);
out:
	free(data);
	free(back);
}

int main(void)
{
	struct rwimage im;

	tree();
	budget();
	if (!rw_image(&im, NULL, 64))
		return check_done("test_extent_cache");
	learn_and_drop(im.sb);
	coherence(&im);
	CHECK(rw_nr_errors == 0, "no error reported: %s", rw_last_error);
	rw_done(&im);
	return check_done("test_extent_cache");
}
