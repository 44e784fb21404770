// SPDX-License-Identifier: GPL-2.0
/*
 * The block cache (core/cache.c): whole-block lookups and the partial
 * reads NAT lookups use (f2fs_cache_read), eviction at the bound, and
 * invalidation.
 */
#include "f2fs.h"
#include "check.h"

static void fill(uint8_t *b, uint32_t addr)
{
	for (uint32_t i = 0; i < F2FS_BLKSIZE; i++)
		b[i] = (uint8_t)(addr * 131u + i * 7u);
}

int main(void)
{
	/* 16 shards of 4 blocks: the smallest cache there is */
	struct f2fs_cache *c = f2fs_cache_create(1, NULL);
	uint8_t blk[F2FS_BLKSIZE], want[F2FS_BLKSIZE], part[64];

	CHECK(c != NULL, "cache");
	if (!c)
		return check_done("test_cache");
	for (uint32_t a = 100; a < 104; a++) {
		fill(blk, a);
		f2fs_cache_insert(c, a, blk);
	}
	for (uint32_t a = 100; a < 104; a++) {
		fill(want, a);
		CHECK(f2fs_cache_lookup(c, a, blk), "block %u cached", a);
		CHECK(memcmp(blk, want, F2FS_BLKSIZE) == 0, "block %u as inserted", a);
		/* a NAT entry's worth at the start, the middle and the very end */
		CHECK(f2fs_cache_read(c, a, 0, 9, part) && memcmp(part, want, 9) == 0,
		      "block %u: bytes 0..9", a);
		CHECK(f2fs_cache_read(c, a, 1000, 9, part) && memcmp(part, want + 1000, 9) == 0,
		      "block %u: bytes 1000..1009", a);
		CHECK(f2fs_cache_read(c, a, F2FS_BLKSIZE - 9, 9, part) &&
		      memcmp(part, want + F2FS_BLKSIZE - 9, 9) == 0, "block %u: the last 9 bytes", a);
		CHECK(f2fs_cache_read(c, a, F2FS_BLKSIZE, 0, part), "block %u: an empty read at the end", a);
		/* ranges past the block are refused, not read */
		CHECK(!f2fs_cache_read(c, a, F2FS_BLKSIZE - 8, 9, part), "block %u: past the end", a);
		CHECK(!f2fs_cache_read(c, a, F2FS_BLKSIZE + 1, 0, part), "block %u: offset past", a);
	}
	CHECK(!f2fs_cache_read(c, 99, 0, 9, part), "an uncached block misses");
	f2fs_cache_invalidate(c, 101);
	CHECK(!f2fs_cache_read(c, 101, 0, 9, part), "an invalidated block misses");
	CHECK(f2fs_cache_read(c, 102, 0, 9, part), "its neighbour stays");
	/* one shard holds 4: the fifth block of a shard evicts its least recent */
	for (uint32_t k = 0; k < 5; k++) {
		fill(blk, 16 * k);
		f2fs_cache_insert(c, 16 * k, blk);
	}
	CHECK(!f2fs_cache_contains(c, 0), "the least recent block of the shard went");
	CHECK(f2fs_cache_contains(c, 64), "the newest block stayed");
	f2fs_cache_destroy(c);
	return check_done("test_cache");
}
