// SPDX-License-Identifier: GPL-2.0
/*
 * f2fs_dentry_hash (core/hash.c) against hash codes stored on disk by other
 * writers.  The tables were produced by tests/unit/gen_hash_vectors.py, which
 * reads every dentry (name, hash_code) with the independent python parser in
 * tests/corrupt/f2fsimg.py:
 *   kernel_vectors: gen_hash_vectors.py plain.img 2, where plain.img is
 *     /work/shared/fixtures/plain.img.zst decompressed: dentries written by
 *     the Linux 6.1 f2fs driver (two names per length, plus every name with
 *     non-ASCII, control, space or backslash bytes).
 *   sload_vectors: gen_hash_vectors.py on a 64 MiB mkfs.f2fs 1.15 image
 *     loaded by sload.f2fs 1.15 (f2fs-tools' own hash) with names of every
 *     length 1..40, 47-49, 63-65, 100, 128, 200, 254, 255 (letters chosen as
 *     'a' + (i*7+len) % 26), "\303\251t\303\251" and "high\377\200\376".
 * Plus properties: "." and ".." hash to 0, the hash depends on every byte,
 * and bit 31 is an ordinary hash bit.  About that last one: the kernel's
 * F2FS_HASH_COL_BIT is ((0x1ULL) << 63) (include/linux/f2fs_fs.h, and the same
 * in f2fs-tools), so TEA_hash_name's `buf[0] & ~F2FS_HASH_COL_BIT` leaves a
 * 32-bit hash untouched.  43 of the 94 on-disk codes below have bit 31 set;
 * an implementation that masks it with 0x80000000 computes the wrong bucket
 * for about half of all names in multi-level directories.
 */
#include "f2fs.h"
#include "check.h"

struct hv {
	const char *name;
	size_t len;
	uint32_t hash;
};

static const struct hv kernel_vectors[] = {
	{ ".", 1, 0x00000000 },
	{ "a", 1, 0x6d0ea4c1 },
	{ "..", 2, 0x00000000 },
	{ "1m", 2, 0x006f096c },
	{ "...", 3, 0xd96dc3e1 },
	{ "16m", 3, 0x8c8c4aab },
	{ "deep", 4, 0x70df4b0e },
	{ "dind", 4, 0xcd6bc4e9 },
	{ "empty", 5, 0x8319b763 },
	{ "holes", 5, 0x1da0a094 },
	{ "bigdev", 6, 0x6cf41652 },
	{ "bigdir", 6, 0x76544546 },
	{ ".hidden", 7, 0x395fc5b0 },
	{ "1m-rand", 7, 0x6b534f0b },
	{ "4m-plus1", 8, 0xd8d7a589 },
	{ "acl-file", 8, 0xaeda9cdd },
	{ "tab\011here", 8, 0x1a601fda },
	{ "3m5-mixed", 9, 0xbba8133c },
	{ "8m-minus1", 9, 0xc8b60313 },
	{ "back\134slash", 10, 0xf5a9893f },
	{ "compr-zstd", 10, 0x86974ce0 },
	{ "with space", 10, 0xce14548a },
	{ "compr-lz4hc", 11, 0x913ec7be },
	{ "empty-value", 11, 0xe5883623 },
	{ "abs-dangling", 12, 0x925ac75f },
	{ "compr-lzorle", 12, 0x5b3c98ca },
	{ "-leading-dash", 13, 0x6cd5bb1d },
	{ "atime-differs", 13, 0x72feb0f6 },
	{ "h\303\251llo w\303\266rld", 13, 0x9b58bd52 },
	{ "emoji-\360\237\230\200-\360\237\216\211", 15, 0x36fda739 },
	{ "partial-cluster", 15, 0x5041917e },
	{ "falloc-then-write", 17, 0xb6eb7bee },
	{ "t1700000000.123456789", 21, 0x320c66d8 },
	{ "\346\227\245\346\234\254\350\252\236\343\201\256\343\203\225\343\202\241\343\202\244\343\203\253\345\220\215", 27, 0x4b63c07a },
	{ "entry-00000-LLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLL", 162, 0xeb2a229d },
	{ "entry-00097-LLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLLL", 162, 0x106b3a63 },
	{ "dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd", 254, 0x9b324891 },
	{ "nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn", 255, 0x04156e7c },
	{ "\346\227\245\346\227\245\346\227\245\346\227\245\346\227\245\346\227\245\346\227\245\346\227\245\346\227\245\346\227\245\346\227\245\346\227\245\346\227\245\346\227\245\346\227\245\346\227\245\346\227\245\346\227\245\346\227\245\346\227\245\346\227\245\346\227\245\346\227\245\346\227\245\346\227\245\346\227\245\346\227\245\346\227\245\346\227\245\346\227\245\346\227\245\346\227\245\346\227\245\346\227\245\346\227\245\346\227\245\346\227\245\346\227\245\346\227\245\346\227\245\346\227\245\346\227\245\346\227\245\346\227\245\346\227\245\346\227\245\346\227\245\346\227\245\346\227\245\346\227\245\346\227\245\346\227\245\346\227\245\346\227\245\346\227\245\346\227\245\346\227\245\346\227\245\346\227\245\346\227\245\346\227\245\346\227\245\346\227\245\346\227\245\346\227\245\346\227\245\346\227\245\346\227\245\346\227\245\346\227\245\346\227\245\346\227\245\346\227\245\346\227\245\346\227\245\346\227\245\346\227\245\346\227\245\346\227\245\346\227\245\346\227\245\346\227\245\346\227\245\346\227\245\346\227\245", 255, 0x77849723 },
};

static const struct hv sload_vectors[] = {
	{ ".", 1, 0x00000000 },
	{ "b", 1, 0xe9fb8bd0 },
	{ "..", 2, 0x00000000 },
	{ "cj", 2, 0x0af9c29f },
	{ "dkr", 3, 0xe787fd0a },
	{ "elsz", 4, 0xcaa00167 },
	{ "fmtah", 5, 0x4ffa7504 },
	{ "\303\251t\303\251", 5, 0x2ed2fead },
	{ "gnubip", 6, 0xa5b06868 },
	{ "high\377\200\376", 7, 0x367629ca },
	{ "hovcjqx", 7, 0x748b2de8 },
	{ "ipwdkryf", 8, 0x087c141c },
	{ "jqxelszgn", 9, 0xe04c9b7c },
	{ "kryfmtahov", 10, 0xcbc172cc },
	{ "lszgnubipwd", 11, 0x0c5c0a8e },
	{ "mtahovcjqxel", 12, 0xb638874b },
	{ "nubipwdkryfmt", 13, 0x7764db07 },
	{ "ovcjqxelszgnub", 14, 0x3e0bb3ac },
	{ "pwdkryfmtahovcj", 15, 0xc64067fb },
	{ "qxelszgnubipwdkr", 16, 0x747077f3 },
	{ "ryfmtahovcjqxelsz", 17, 0x0f3104b9 },
	{ "szgnubipwdkryfmtah", 18, 0x60a2cf39 },
	{ "tahovcjqxelszgnubip", 19, 0xeeaaca32 },
	{ "ubipwdkryfmtahovcjqx", 20, 0x4c68f3f3 },
	{ "vcjqxelszgnubipwdkryf", 21, 0x9bf1feb6 },
	{ "wdkryfmtahovcjqxelszgn", 22, 0x014c983f },
	{ "xelszgnubipwdkryfmtahov", 23, 0x76cde330 },
	{ "yfmtahovcjqxelszgnubipwd", 24, 0x4c6d9209 },
	{ "zgnubipwdkryfmtahovcjqxel", 25, 0x3d492f62 },
	{ "ahovcjqxelszgnubipwdkryfmt", 26, 0x0abef23a },
	{ "bipwdkryfmtahovcjqxelszgnub", 27, 0xd626da74 },
	{ "cjqxelszgnubipwdkryfmtahovcj", 28, 0xc25c089f },
	{ "dkryfmtahovcjqxelszgnubipwdkr", 29, 0x2a8587ac },
	{ "elszgnubipwdkryfmtahovcjqxelsz", 30, 0x30aea7e8 },
	{ "fmtahovcjqxelszgnubipwdkryfmtah", 31, 0xcece4bd3 },
	{ "gnubipwdkryfmtahovcjqxelszgnubip", 32, 0x627389e0 },
	{ "hovcjqxelszgnubipwdkryfmtahovcjqx", 33, 0xd0daeea0 },
	{ "ipwdkryfmtahovcjqxelszgnubipwdkryf", 34, 0x8d2b2cd6 },
	{ "jqxelszgnubipwdkryfmtahovcjqxelszgn", 35, 0xa81eafc7 },
	{ "kryfmtahovcjqxelszgnubipwdkryfmtahov", 36, 0xfd9b31b1 },
	{ "lszgnubipwdkryfmtahovcjqxelszgnubipwd", 37, 0xea8825a0 },
	{ "mtahovcjqxelszgnubipwdkryfmtahovcjqxel", 38, 0xb079ab3d },
	{ "nubipwdkryfmtahovcjqxelszgnubipwdkryfmt", 39, 0x1c385c04 },
	{ "ovcjqxelszgnubipwdkryfmtahovcjqxelszgnub", 40, 0x850771ac },
	{ "vcjqxelszgnubipwdkryfmtahovcjqxelszgnubipwdkryf", 47, 0x57869393 },
	{ "wdkryfmtahovcjqxelszgnubipwdkryfmtahovcjqxelszgn", 48, 0xec703cf1 },
	{ "xelszgnubipwdkryfmtahovcjqxelszgnubipwdkryfmtahov", 49, 0x5f9a1efb },
	{ "lszgnubipwdkryfmtahovcjqxelszgnubipwdkryfmtahovcjqxelszgnubipwd", 63, 0xa6554c80 },
	{ "mtahovcjqxelszgnubipwdkryfmtahovcjqxelszgnubipwdkryfmtahovcjqxel", 64, 0xc52598c6 },
	{ "nubipwdkryfmtahovcjqxelszgnubipwdkryfmtahovcjqxelszgnubipwdkryfmt", 65, 0xf8dd7ac8 },
	{ "wdkryfmtahovcjqxelszgnubipwdkryfmtahovcjqxelszgnubipwdkryfmtahovcjqxelszgnubipwdkryfmtahovcjqxelszgn", 100, 0x213de6fd },
	{ "yfmtahovcjqxelszgnubipwdkryfmtahovcjqxelszgnubipwdkryfmtahovcjqxelszgnubipwdkryfmtahovcjqxelszgnubipwdkryfmtahovcjqxelszgnubipwd", 128, 0x554c8f9c },
	{ "szgnubipwdkryfmtahovcjqxelszgnubipwdkryfmtahovcjqxelszgnubipwdkryfmtahovcjqxelszgnubipwdkryfmtahovcjqxelszgnubipwdkryfmtahovcjqxelszgnubipwdkryfmtahovcjqxelszgnubipwdkryfmtahovcjqxelszgnubipwdkryfmtah", 200, 0x55f135ee },
	{ "ubipwdkryfmtahovcjqxelszgnubipwdkryfmtahovcjqxelszgnubipwdkryfmtahovcjqxelszgnubipwdkryfmtahovcjqxelszgnubipwdkryfmtahovcjqxelszgnubipwdkryfmtahovcjqxelszgnubipwdkryfmtahovcjqxelszgnubipwdkryfmtahovcjqxelszgnubipwdkryfmtahovcjqxelszgnubipwdkryfmtahovcjqx", 254, 0xcfdd72ec },
	{ "vcjqxelszgnubipwdkryfmtahovcjqxelszgnubipwdkryfmtahovcjqxelszgnubipwdkryfmtahovcjqxelszgnubipwdkryfmtahovcjqxelszgnubipwdkryfmtahovcjqxelszgnubipwdkryfmtahovcjqxelszgnubipwdkryfmtahovcjqxelszgnubipwdkryfmtahovcjqxelszgnubipwdkryfmtahovcjqxelszgnubipwdkryf", 255, 0x035c001f },
};

static int check_table(const struct hv *v, size_t n, const char *what)
{
	int bad = 0;

	for (size_t i = 0; i < n; i++) {
		CHECK(strlen(v[i].name) == v[i].len, "%s[%zu]: table length %zu", what, i,
		      v[i].len);
		uint32_t got = f2fs_dentry_hash((const uint8_t *)v[i].name, v[i].len);

		CHECK(got == v[i].hash, "%s: hash of %zu-byte name \"%.40s\" = %#010x, on disk %#010x",
		      what, v[i].len, v[i].name, got, v[i].hash);
		bad += got != v[i].hash;
	}
	return bad;
}

static uint64_t rng_state = 0x2545f4914f6cdd1dull;
static uint32_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (uint32_t)(rng_state >> 11);
}

static void test_properties(void)
{
	uint8_t name[F2FS_NAME_LEN];
	int top = 0, same = 0;
	const int iters = 20000;

	CHECK(f2fs_dentry_hash((const uint8_t *)".", 1) == 0, "hash(\".\") != 0");
	CHECK(f2fs_dentry_hash((const uint8_t *)"..", 2) == 0, "hash(\"..\") != 0");
	for (int iter = 0; iter < iters; iter++) {
		size_t len = 1 + rnd() % F2FS_NAME_LEN;

		for (size_t i = 0; i < len; i++)
			name[i] = (uint8_t)(1 + rnd() % 255);
		uint32_t h = f2fs_dentry_hash(name, len);

		if (h & 0x80000000u)
			top++;
		/* flip one byte: the hash must change (TEA mixes every byte) */
		size_t pos = rnd() % len;
		name[pos] ^= (uint8_t)(1 + rnd() % 255);
		if (f2fs_dentry_hash(name, len) == h)
			same++;
		/* the same input gives the same answer */
		CHECK(f2fs_dentry_hash(name, len) == f2fs_dentry_hash(name, len),
		      "hash not deterministic");
	}
	/* bit 31 is set for about half of the names, as on disk */
	CHECK(top > iters * 4 / 10 && top < iters * 6 / 10,
	      "bit 31 set in %d of %d random names (the kernel keeps it)", top, iters);
	/* 20000 random 31-bit values: a handful of coincidences would be odd */
	CHECK(same <= 2, "%d one-byte changes left the hash unchanged", same);
}

int main(void)
{
	int bad = check_table(kernel_vectors, ARRAY_SIZE(kernel_vectors), "kernel");
	bad += check_table(sload_vectors, ARRAY_SIZE(sload_vectors), "sload");

	printf("%zu kernel and %zu sload hash codes compared, %d mismatches\n",
	       ARRAY_SIZE(kernel_vectors), ARRAY_SIZE(sload_vectors), bad);
	test_properties();
	return check_done("test_hash");
}
