// SPDX-License-Identifier: GPL-2.0
/*
 * A directory's name index (core/dcache.c).
 *
 * 1. Its first table is sized from the directory's i_size, which an image
 *    may set to anything: a claimed 2^31 names must not allocate more than
 *    the mount's budget (the image fuzzer found an 8 GiB calloc from a
 *    mutated i_size; tests/fuzz/corpus/image/regress-dir-size-dcache-table,
 *    tests/corrupt dir_size_huge).
 * 2. A table started small grows with the names added: 20,000 names are
 *    all found, with their inode numbers.
 */
#include <stdint.h>

#include "f2fs.h"
#include "check.h"

int main(void)
{
	struct f2fs_dcache_budget budget = { .limit = (size_t)1 << 20 };
	struct f2fs_dcache *dc = f2fs_dcache_new(&budget, UINT32_MAX / 2);
	struct f2fs_dcache_entry e;
	char name[32];
	bool all = true;

	CHECK(dc != NULL, "an index for a directory claiming 2^31 names");
	if (dc)
		CHECK(f2fs_dcache_bytes(dc) <= budget.limit + 4096,
		      "its first table is %zu bytes, the budget %zu", f2fs_dcache_bytes(dc),
		      budget.limit);
	f2fs_dcache_free(dc);

	dc = f2fs_dcache_new(&budget, 1);
	CHECK(dc != NULL, "a small index");
	if (!dc)
		return check_done("dcache");
	for (uint32_t i = 0; i < 20000; i++) {
		int len = snprintf(name, sizeof(name), "name-%u", i);

		CHECK(f2fs_dcache_add(dc, i * 2654435761u, (const uint8_t *)name, (uint16_t)len,
				      1000 + i, 1, i / 100, i % 100) == 0, "add %s", name);
	}
	for (uint32_t i = 0; i < 20000; i++) {
		int len = snprintf(name, sizeof(name), "name-%u", i);

		all &= f2fs_dcache_find(dc, i * 2654435761u, (const uint8_t *)name, (size_t)len, &e) &&
		       e.ino == 1000 + i;
	}
	CHECK(all, "every name added is found with its inode");
	f2fs_dcache_free(dc);
	return check_done("dcache");
}
