// SPDX-License-Identifier: GPL-2.0
/*
 * The block pool (core/dev.c): 4 KiB blocks carved from 2 MiB slabs for
 * inode and dirty node buffers.
 *
 * 1. Blocks are 4 KiB aligned, distinct and wholly writable; 511 fit in a
 *    slab (its first block is the header), the 512th takes a second slab;
 *    the free map spans several words (a block past the first 64 of a slab
 *    is found and given back).
 * 2. Emptied slabs go back to the system, all but one spare.
 * 3. A random sequence of gets and puts against a model: every live block
 *    keeps the pattern written into it, nothing is handed out twice, and
 *    the slabs held never exceed what the live blocks need by more than
 *    the fragmentation a put order can leave.
 * 4. Four threads getting and putting at once.
 * 5. The buffer stash (dev.c): buffers are block-aligned and as large as
 *    asked, at least its minimum; one put back is handed out again for a
 *    request it fits; one larger than the maximum is not kept; with every
 *    slot taken, a larger buffer replaces the smallest kept one.
 * 6. A slab cache shared by pools (mount after mount, as the fuzzers do):
 *    the slabs a destroyed pool held serve the next pool, zeroed as from
 *    the system, and the cache keeps no more than its maximum.
 */
#include <pthread.h>
#include <stdint.h>

#include "f2fs.h"
#include "check.h"

static void fill(uint8_t *b, uint32_t id)
{
	for (size_t i = 0; i < F2FS_BLKSIZE; i += 4)
		memcpy(b + i, &id, 4);
}

static bool holds(const uint8_t *b, uint32_t id)
{
	for (size_t i = 0; i < F2FS_BLKSIZE; i += 4)
		if (memcmp(b + i, &id, 4))
			return false;
	return true;
}

static void test_slabs(void)
{
	struct f2fs_block_pool pool;
	static uint8_t *b[1100];

	f2fs_block_pool_init(&pool);
	for (uint32_t i = 0; i < 1100; i++) {
		b[i] = f2fs_block_get(&pool);
		CHECK(b[i] != NULL, "block %u", i);
		if (!b[i])
			return;
		CHECK(((uintptr_t)b[i] & (F2FS_BLKSIZE - 1)) == 0, "block %u at %p is not aligned",
		      i, (void *)b[i]);
		fill(b[i], i);
		if (i == 510)
			CHECK_EQ_U64(pool.slabs, 1, "slabs after 511 blocks");
		if (i == 511)
			CHECK_EQ_U64(pool.slabs, 2, "slabs after 512 blocks");
	}
	CHECK_EQ_U64(pool.slabs, 3, "slabs after 1100 blocks");
	CHECK_EQ_U64(pool.blocks, 1100, "blocks handed out");
	for (uint32_t i = 0; i < 1100; i++)
		CHECK(holds(b[i], i), "block %u was overwritten", i);
	/* a block deep in a slab goes back and is the next handed out */
	f2fs_block_put(&pool, b[300]);
	CHECK(f2fs_block_get(&pool) == b[300], "the free block past the first word is reused");
	for (uint32_t i = 0; i < 1100; i++)
		f2fs_block_put(&pool, b[i]);
	CHECK_EQ_U64(pool.blocks, 0, "blocks after putting all back");
	CHECK_EQ_U64(pool.slabs, 1, "slabs after putting all back (the spare)");
	/* the spare serves the next get */
	b[0] = f2fs_block_get(&pool);
	CHECK(b[0] != NULL, "get from the spare");
	CHECK_EQ_U64(pool.slabs, 1, "slabs after reusing the spare");
	f2fs_block_put(&pool, b[0]);
	f2fs_block_put(&pool, NULL);	/* a no-op, as free(NULL) */
	f2fs_block_pool_destroy(&pool);
}

static void test_slab_cache(void)
{
	struct f2fs_slab_cache *c = f2fs_slab_cache_new(2);
	struct f2fs_block_pool pool;
	static uint8_t *b[1100];
	uintptr_t slab0[3] = { 0 };
	bool zero = true;

	CHECK(c != NULL, "slab cache");
	if (!c)
		return;
	for (int round = 0; round < 2; round++) {
		f2fs_block_pool_init(&pool);
		pool.source = c;
		for (uint32_t i = 0; i < 1100; i++) {
			b[i] = f2fs_block_get(&pool);
			CHECK(b[i] != NULL, "round %d block %u", round, i);
			if (!b[i])
				return;
			for (size_t j = 0; round && j < F2FS_BLKSIZE; j++)
				zero = zero && !b[i][j];
			fill(b[i], i + 1);
		}
		CHECK_EQ_U64(pool.slabs, 3, "slabs after 1100 blocks");
		if (round) {
			/* two of the three went to the cache (its maximum), the last was unmapped */
			int again = 0;

			for (int k = 0; k < 3; k++)
				for (int m = 0; m < 3; m++)
					again += (uintptr_t)b[k * 511] >> 21 == slab0[m];
			CHECK(again >= 2, "slabs of the first pool serve the second: %d", again);
		}
		for (int k = 0; k < 3; k++)
			slab0[k] = (uintptr_t)b[k * 511] >> 21;
		for (uint32_t i = 0; i < 1100; i++)
			f2fs_block_put(&pool, b[i]);
		f2fs_block_pool_destroy(&pool);
	}
	CHECK(zero, "blocks from the cache read as zeros, as fresh ones do");
	f2fs_slab_cache_free(c);
}

/*
 * Read-ahead stashes with a slab cache for source (the block cache's, mount
 * after mount): the 2 MiB buffer one stash gave back is the next one's.
 */
static void test_stash_source(void)
{
	struct f2fs_slab_cache *c = f2fs_slab_cache_new(2);
	struct f2fs_buf_stash st;
	uint8_t *first = NULL, *b;
	size_t got;

	CHECK(c != NULL, "slab cache");
	if (!c)
		return;
	for (int round = 0; round < 2; round++) {
		CHECK(f2fs_stash_init(&st, 512, 512) == 0, "stash init");
		st.source = c;
		b = f2fs_stash_get(&st, 100, &got);
		CHECK(b && got == 512 && !((uintptr_t)b % F2FS_BLKSIZE), "a 2 MiB buffer (%zu)", got);
		if (!b)
			break;
		if (round)
			CHECK(b == first && b[4096 * 511] == 0x5a,
			      "the second stash has the first one's buffer, as it was left");
		memset(b, 0x5a, got * F2FS_BLKSIZE);
		first = b;
		f2fs_stash_put(&st, b, got);
		f2fs_stash_destroy(&st);
	}
	f2fs_slab_cache_free(c);
}

#define MODEL_MAX 2000

static void test_model(void)
{
	struct f2fs_block_pool pool;
	uint8_t *live[MODEL_MAX];
	uint32_t id[MODEL_MAX], n = 0, next_id = 1, seed = 12345, max_live = 0;

	f2fs_block_pool_init(&pool);
	for (int op = 0; op < 200000; op++) {
		seed = seed * 1103515245u + 12345u;
		/* phases that grow, then shrink, the live set */
		bool grow = ((op / 20000) % 2 == 0) ? (seed >> 16) % 4 != 0 : (seed >> 16) % 4 == 0;

		if ((grow && n < MODEL_MAX) || n == 0) {
			uint8_t *b = f2fs_block_get(&pool);

			CHECK(b != NULL, "get at op %d", op);
			if (!b)
				break;
			fill(b, next_id);
			live[n] = b;
			id[n++] = next_id++;
			if (n > max_live)
				max_live = n;
		} else {
			uint32_t k = (seed >> 8) % n;

			CHECK(holds(live[k], id[k]), "block of id %u changed while live", id[k]);
			f2fs_block_put(&pool, live[k]);
			live[k] = live[--n];
			id[k] = id[n];
		}
		CHECK(pool.blocks == n, "op %d: pool counts %llu blocks, model %u", op,
		      (unsigned long long)pool.blocks, n);
		/* every slab holds a live block, but for the one spare */
		CHECK(pool.slabs <= (uint64_t)n + 1, "op %d: %llu slabs for %u blocks", op,
		      (unsigned long long)pool.slabs, n);
	}
	/* no block handed out twice: the live ones are distinct */
	for (uint32_t i = 0; i < n; i++)
		CHECK(holds(live[i], id[i]), "live block %u", i);
	while (n)
		f2fs_block_put(&pool, live[--n]);
	CHECK_EQ_U64(pool.slabs, 1, "slabs after the model run");
	CHECK(max_live > 1000, "the model reached %u live blocks", max_live);
	f2fs_block_pool_destroy(&pool);
}

struct worker {
	struct f2fs_block_pool *pool;
	uint32_t tag;
	int bad;
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	uint8_t *held[64];
	uint32_t seed = w->tag;

	for (int round = 0; round < 2000; round++) {
		int n = 1 + (int)((seed = seed * 1103515245u + 12345u) >> 16) % 64;

		for (int i = 0; i < n; i++) {
			held[i] = f2fs_block_get(w->pool);
			if (!held[i]) {
				w->bad++;
				n = i;
				break;
			}
			fill(held[i], w->tag * 100000u + (uint32_t)i);
		}
		for (int i = 0; i < n; i++) {
			if (!holds(held[i], w->tag * 100000u + (uint32_t)i))
				w->bad++;
			f2fs_block_put(w->pool, held[i]);
		}
	}
	return NULL;
}

static void test_threads(void)
{
	struct f2fs_block_pool pool;
	struct worker w[4];
	pthread_t t[4];

	f2fs_block_pool_init(&pool);
	for (uint32_t i = 0; i < 4; i++) {
		w[i] = (struct worker){ &pool, i + 1, 0 };
		CHECK(pthread_create(&t[i], NULL, worker_main, &w[i]) == 0, "thread %u", i);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(t[i], NULL);
		CHECK(w[i].bad == 0, "thread %d saw %d blocks changed or refused", i, w[i].bad);
	}
	CHECK_EQ_U64(pool.blocks, 0, "blocks after the threads");
	CHECK_EQ_U64(pool.slabs, 1, "slabs after the threads");
	f2fs_block_pool_destroy(&pool);
}

static void test_stash(void)
{
	struct f2fs_buf_stash st;
	void *kept[F2FS_STASH_SLOTS];
	size_t got, got2;
	uint8_t *a, *b;

	CHECK(f2fs_stash_init(&st, 4, 64) == 0, "stash init");
	a = f2fs_stash_get(&st, 1, &got);
	CHECK(a && got == 4 && !((uintptr_t)a % F2FS_BLKSIZE), "a new buffer: min size, aligned");
	memset(a, 0x5a, got * F2FS_BLKSIZE);
	f2fs_stash_put(&st, a, got);
	b = f2fs_stash_get(&st, 3, &got2);
	CHECK(b == (uint8_t *)a && got2 == 4, "the kept buffer is handed out again");
	f2fs_stash_put(&st, b, got2);
	b = f2fs_stash_get(&st, 5, &got2);
	CHECK(b && b != (uint8_t *)a && got2 == 5, "a larger request gets a new buffer");
	f2fs_stash_put(&st, b, got2);
	CHECK(st.nr == 2, "both kept: %u", st.nr);
	b = f2fs_stash_get(&st, 65, &got2);
	CHECK(b && got2 == 65, "beyond the maximum");
	f2fs_stash_put(&st, b, got2);
	CHECK(st.nr == 2, "a buffer beyond the maximum is not kept");
	f2fs_stash_destroy(&st);

	CHECK(f2fs_stash_init(&st, 1, 0) == 0, "stash init");
	for (int i = 0; i < F2FS_STASH_SLOTS; i++)
		kept[i] = f2fs_stash_get(&st, (size_t)i + 2, &got);
	for (int i = 0; i < F2FS_STASH_SLOTS; i++)
		f2fs_stash_put(&st, kept[i], (size_t)i + 2);
	b = f2fs_stash_get(&st, 20, &got2);
	f2fs_stash_put(&st, b, got2);
	CHECK(st.nr == F2FS_STASH_SLOTS, "slots stay full");
	got = SIZE_MAX;
	for (unsigned int i = 0; i < st.nr; i++)
		got = st.slot[i].blocks < got ? st.slot[i].blocks : got;
	CHECK(got == 3, "the smallest (2 blocks) made room for the 20-block one: smallest now %zu",
	      got);
	f2fs_stash_destroy(&st);
}

int main(void)
{
	test_stash();
	test_stash_source();
	test_slabs();
	test_model();
	test_threads();
	test_slab_cache();
	return check_done("test_pool");
}
