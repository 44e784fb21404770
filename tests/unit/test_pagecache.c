// SPDX-License-Identifier: GPL-2.0
/*
 * The page cache of dirty data (pagecache.c) on its own: pages kept sorted
 * by index whatever order they come in, found again, laid over a read of
 * any range; inodes listed oldest first, due by age or past half the
 * limit; detaching and freeing keeps the counts.
 */
#include "check.h"
#include "f2fs.h"

static void fill(uint8_t *p, uint64_t index)
{
	memset(p, (int)(index % 250) + 1, F2FS_BLKSIZE);
}

int main(void)
{
	struct f2fs_pagecache *pc = f2fs_pc_create(1u << 20, NULL);
	struct f2fs_inode_pages *a = NULL, *b = NULL, *ip;
	static const uint64_t order[] = { 5, 1, 9, 2, 7, 3, 100, 0, 8 };
	uint8_t *buf = malloc(12 * F2FS_BLKSIZE);
	uint32_t inos[4], n = 4, ino;
	bool created;

	CHECK(pc && buf, "memory");
	if (!pc || !buf)
		return check_done("test_pagecache");
	CHECK_EQ_U64(pc->limit, 256, "a limit of 1 MiB is 256 pages");
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++) {
		uint8_t *p = f2fs_pc_get(pc, &a, 7, order[i], &created);

		CHECK(p && created, "page %llu", (unsigned long long)order[i]);
		if (p)
			fill(p, order[i]);
	}
	CHECK(f2fs_pc_get(pc, &a, 7, 5, &created) == f2fs_pc_find(a, 5) && !created,
	      "the same page again");
	CHECK(f2fs_pc_get(pc, &b, 8, 3, &created) && created, "a second inode");
	for (uint32_t i = 1; i < a->nr; i++)
		CHECK(a->v[i - 1].index < a->v[i].index, "sorted at %u", i);
	CHECK(!f2fs_pc_find(a, 4) && !f2fs_pc_find(a, 101) && f2fs_pc_find(a, 100),
	      "found exactly the pages there are");
	CHECK_EQ_U64(pc->nr_dirty, 10, "dirty pages counted once each");

	/* a read of blocks 2.5 .. 11: pages 3, 5, 7, 8, 9 (and 2's second half) over zeros */
	memset(buf, 0, 12 * F2FS_BLKSIZE);
	f2fs_pc_overlay(a, buf, 9 * F2FS_BLKSIZE - 100, 2 * F2FS_BLKSIZE + 100);
	CHECK(buf[0] == 3 && buf[F2FS_BLKSIZE - 101] == 3 && buf[F2FS_BLKSIZE - 100] == 4,
	      "partial first page, then the next");
	CHECK(buf[2 * F2FS_BLKSIZE - 100] == 0, "no page 4: the read's own bytes stay");
	CHECK(buf[8 * F2FS_BLKSIZE - 101] == 10, "block 9 is page 9's");
	CHECK(buf[9 * F2FS_BLKSIZE - 101] == 0, "no page 10");

	f2fs_pc_inodes(pc, inos, &n);
	CHECK(n == 2 && inos[0] == 7 && inos[1] == 8, "oldest first: %u %u (%u)", inos[0],
	      inos[1], n);
	CHECK(!f2fs_pc_oldest(pc, 60000, &ino), "nothing old, nothing over half the limit");
	CHECK(f2fs_pc_oldest(pc, 0, &ino) && ino == 7, "due by age: the oldest");
	CHECK(!f2fs_pc_over_limit(pc), "under the limit");

	ip = f2fs_pc_detach(pc, &a);
	CHECK(ip && !a && pc->nr_inodes == 1, "detached");
	f2fs_pc_relist(pc, ip);
	a = ip;
	n = 4;
	f2fs_pc_inodes(pc, inos, &n);
	CHECK(n == 2 && inos[0] == 7, "put back at the head");

	/* a punch of [3, 8): pages 3, 5, 7 go, the others keep their order */
	CHECK(!f2fs_pc_drop_range(pc, &a, 3, 8) && a && a->nr == 6, "punched: %u left",
	      a ? a->nr : 0);
	CHECK(!f2fs_pc_find(a, 3) && !f2fs_pc_find(a, 7) && f2fs_pc_find(a, 2)[0] == 3 &&
	      f2fs_pc_find(a, 8)[0] == 9, "the pages outside stay, with their data");
	CHECK(!f2fs_pc_drop_range(pc, &a, 50, 60) && !f2fs_pc_drop_range(pc, &a, 9, 9) &&
	      a->nr == 6, "a range with no page drops none");
	CHECK_EQ_U64(pc->nr_dirty, 7, "dirty pages after the punch");
	f2fs_pc_free(pc, f2fs_pc_detach(pc, &a), true);
	/* a truncation of everything frees the inode's pages */
	CHECK(f2fs_pc_drop_range(pc, &b, 0, UINT64_MAX) && !b, "all dropped, detached");
	CHECK(pc->nr_dirty == 0 && pc->nr_inodes == 0 && !pc->head && !pc->tail, "empty");
	CHECK(pc->written == 6 && pc->dropped == 4 && pc->dirtied == 10, "counts: %llu %llu %llu",
	      (unsigned long long)pc->written, (unsigned long long)pc->dropped,
	      (unsigned long long)pc->dirtied);
	CHECK(!f2fs_pc_has_dirty(pc), "nothing dirty");
	free(buf);
	f2fs_pc_destroy(pc);
	return check_done("test_pagecache");
}
