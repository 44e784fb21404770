// SPDX-License-Identifier: GPL-2.0
/*
 * f2fs_crc32 / f2fs_chksum (core/crc.c).
 *
 * 1. Known answers.  f2fs's CRC is the reflected 0xEDB88320 CRC with no pre-
 *    or post-inversion.  Python's zlib.crc32(d, v) inverts v on entry and the
 *    result on exit, so the f2fs value is
 *        crc_f2fs(seed, d) = ~zlib.crc32(d, ~seed & 0xffffffff) & 0xffffffff
 *    and every expected value below was printed by that expression
 *    (Python 3.11, zlib), e.g. for "123456789" with seed 0xffffffff it gives
 *    0x340bc6d9 == ~0xcbf43926, the standard CRC-32 check value.
 * 2. A bit-at-a-time reference written here, over random buffers, lengths
 *    and alignments (the core uses slicing-by-8 with a byte tail).
 * 3. Real on-disk checksums: the superblock and both checkpoint packs of a
 *    fresh mkfs.f2fs -O sb_checksum image, and of the kernel-written fixture
 *    plain.img.zst when it is available.
 */
#include "f2fs.h"
#include "check.h"

struct kat {
	const char *data;
	size_t len;
	uint32_t seed;
	uint32_t want;
};

static const struct kat kats[] = {
	/* ~zlib.crc32(b'', ~0xF2F52010 & 0xffffffff) & 0xffffffff */
	{ "", 0, F2FS_SUPER_MAGIC, 0xf2f52010u },
	/* ~zlib.crc32(b'a', ~0xF2F52010 & 0xffffffff) & 0xffffffff */
	{ "a", 1, F2FS_SUPER_MAGIC, 0x27f0b48au },
	/* ~zlib.crc32(b'abc', ~0xF2F52010 & 0xffffffff) & 0xffffffff */
	{ "abc", 3, F2FS_SUPER_MAGIC, 0x8e101963u },
	/* ~zlib.crc32(b'123456789', ~0xF2F52010 & 0xffffffff) & 0xffffffff */
	{ "123456789", 9, F2FS_SUPER_MAGIC, 0x1657a0c3u },
	/* ~zlib.crc32(b'The quick brown fox jumps over the lazy dog', ~0xF2F52010 & 0xffffffff) & 0xffffffff */
	{ "The quick brown fox jumps over the lazy dog", 43, F2FS_SUPER_MAGIC, 0xc2863f4du },
	/* ~zlib.crc32(b'\xff' * 13, ~0xF2F52010 & 0xffffffff) & 0xffffffff */
	{ "\377\377\377\377\377\377\377\377\377\377\377\377\377", 13, F2FS_SUPER_MAGIC,
	  0xbdb95febu },
	/* ~zlib.crc32(b'a', 0) & 0xffffffff  (seed 0xffffffff) */
	{ "a", 1, 0xffffffffu, 0x174841bcu },
	/* ~zlib.crc32(b'123456789', 0) & 0xffffffff */
	{ "123456789", 9, 0xffffffffu, 0x340bc6d9u },
	/* ~zlib.crc32(b'abc', 0xffffffff) & 0xffffffff  (seed 0) */
	{ "abc", 3, 0, 0xca6598d0u },
	/* ~zlib.crc32(b'123456789', 0xffffffff) & 0xffffffff */
	{ "123456789", 9, 0, 0x2dfd2d88u },
};

/* The definition, one bit at a time. */
static uint32_t crc_ref(uint32_t crc, const uint8_t *p, size_t len)
{
	while (len--) {
		crc ^= *p++;
		for (int k = 0; k < 8; k++)
			crc = (crc >> 1) ^ ((crc & 1) ? 0xEDB88320u : 0);
	}
	return crc;
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint32_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (uint32_t)(rng_state >> 11);
}

static void test_kats(void)
{
	for (size_t i = 0; i < ARRAY_SIZE(kats); i++) {
		uint32_t got = f2fs_crc32(kats[i].seed, kats[i].data, kats[i].len);

		CHECK(got == kats[i].want, "crc32(seed %#x, \"%s\") = %#x, want %#x",
		      kats[i].seed, kats[i].data, got, kats[i].want);
		if (kats[i].seed == F2FS_SUPER_MAGIC) {
			got = f2fs_chksum(kats[i].data, kats[i].len);
			CHECK(got == kats[i].want, "chksum(\"%s\") = %#x, want %#x",
			      kats[i].data, got, kats[i].want);
		}
	}

	static uint8_t big[4096];
	/* ~zlib.crc32(bytes(4096), ~0xF2F52010 & 0xffffffff) & 0xffffffff */
	CHECK_EQ_U64(f2fs_chksum(big, sizeof(big)), 0xa6ae8badu, "chksum(4096 zero bytes)");
	/* ~zlib.crc32(bytes(4096), 0xffffffff) & 0xffffffff: the CRC of zeros stays 0 */
	CHECK_EQ_U64(f2fs_crc32(0, big, sizeof(big)), 0, "crc32(0, zeros)");

	uint8_t seq[1000];
	for (int i = 0; i < 1000; i++)
		seq[i] = (uint8_t)i;
	/* ~zlib.crc32(bytes(i & 0xff for i in range(1000)), ~0xF2F52010 & 0xffffffff) & 0xffffffff */
	CHECK_EQ_U64(f2fs_chksum(seq, sizeof(seq)), 0xfa8dd3ccu, "chksum(0..255 x 1000)");
	/* ~zlib.crc32(bytes(range(256)), ~0xF2F52010 & 0xffffffff) & 0xffffffff */
	CHECK_EQ_U64(f2fs_chksum(seq, 256), 0xf5dfcb50u, "chksum(bytes(range(256)))");
}

static void test_against_reference(void)
{
	static uint8_t buf[8192 + 16];
	int bad = 0;

	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)rnd();
	for (int iter = 0; iter < 3000 && bad < 5; iter++) {
		size_t align = rnd() % 16;
		size_t len = iter < 64 ? (size_t)iter : rnd() % 8193;
		uint32_t seed = (iter & 1) ? rnd() : F2FS_SUPER_MAGIC;
		uint32_t want = crc_ref(seed, buf + align, len);
		uint32_t got = f2fs_crc32(seed, buf + align, len);

		CHECK(got == want, "random buffer align %zu len %zu seed %#x: %#x != ref %#x",
		      align, len, seed, got, want);
		if (got != want)
			bad++;
		/* chaining: crc(crc(s, a), b) == crc(s, a || b) */
		size_t cut = len ? rnd() % (len + 1) : 0;
		uint32_t two = f2fs_crc32(f2fs_crc32(seed, buf + align, cut), buf + align + cut,
					  len - cut);
		CHECK(two == want, "split at %zu of %zu: %#x != %#x", cut, len, two, want);
	}
}

/*
 * Check the checksums stored in an image: the superblock CRC (only meaningful
 * with the sb_checksum feature) and the CRC of the first block of each
 * checkpoint pack that carries a plausible checksum_offset.  Returns the
 * number of checkpoint blocks verified.
 */
static int check_image_crcs(const uint8_t *img, size_t len, const char *what, bool want_sb)
{
	const uint8_t *sb = img + F2FS_SUPER_OFFSET;
	int verified = 0;

	if (len < 2 * F2FS_BLKSIZE || get_le32(sb + SB_MAGIC) != F2FS_SUPER_MAGIC) {
		CHECK(0, "%s: not an f2fs image", what);
		return 0;
	}
	if (want_sb) {
		CHECK(get_le32(sb + SB_FEATURE) & F2FS_FEATURE_SB_CHKSUM,
		      "%s: sb_checksum feature not set", what);
		CHECK_EQ_U64(f2fs_chksum(sb, SB_CRC), get_le32(sb + SB_CRC), what);
		/* the backup copy in block 1 carries the same checksum */
		CHECK_EQ_U64(f2fs_chksum(img + F2FS_BLKSIZE + F2FS_SUPER_OFFSET, SB_CRC),
			     get_le32(img + F2FS_BLKSIZE + F2FS_SUPER_OFFSET + SB_CRC), what);
		/* and a one-bit change is detected */
		uint8_t copy[F2FS_SB_SIZE];
		memcpy(copy, sb, sizeof(copy));
		copy[SB_LOG_BLOCKSIZE] ^= 1;
		CHECK(f2fs_chksum(copy, SB_CRC) != get_le32(sb + SB_CRC),
		      "%s: flipped bit not detected", what);
	}

	uint32_t cp = get_le32(sb + SB_CP_BLKADDR);
	uint32_t bps = 1u << get_le32(sb + SB_LOG_BLOCKS_PER_SEG);
	for (int pack = 0; pack < 2; pack++) {
		uint64_t blk = cp + (uint64_t)pack * bps;

		if ((blk + 1) * F2FS_BLKSIZE > len)
			break;
		const uint8_t *c = img + blk * F2FS_BLKSIZE;
		uint32_t cso = get_le32(c + CP_CHECKSUM_OFFSET);

		if (cso < CP_MIN_CHKSUM_OFFSET || cso > CP_CHKSUM_OFFSET_DEFAULT)
			continue;	/* an unwritten pack */
		uint32_t got = f2fs_chksum(c, cso);

		CHECK(got == get_le32(c + cso), "%s: checkpoint pack %d crc %#x, stored %#x",
		      what, pack + 1, got, get_le32(c + cso));
		verified++;
	}
	CHECK(verified >= 1, "%s: no checkpoint block verified", what);
	return verified;
}

static void test_mkfs_image(void)
{
	size_t len = 0;
	uint8_t *img = make_image("sb_checksum", 64, NULL, &len);

	if (!img)
		return;
	printf("mkfs.f2fs -O sb_checksum image: %d checkpoint blocks verified\n",
	       check_image_crcs(img, len, "mkfs image", true));
	free(img);

	img = make_image(NULL, 64, NULL, &len);
	if (!img)
		return;
	check_image_crcs(img, len, "mkfs default image", false);
	free(img);
}

static void test_kernel_fixture(void)
{
	const char *dir = getenv("F2FS_FIXTURES");
	char path[1024], zstd[512], cmd[2048];
	size_t want = 6u << 20, got = 0;

	snprintf(path, sizeof(path), "%s/plain.img.zst", dir ? dir : "/work/shared/fixtures");
	if (access(path, R_OK) != 0) {
		SKIP("kernel fixture %s not found", path);
		return;
	}
	if (!find_tool("zstd", zstd, sizeof(zstd))) {
		SKIP("zstd not found for %s", path);
		return;
	}
	/* the superblocks and both checkpoint packs are within the first 6 MiB */
	snprintf(cmd, sizeof(cmd), "'%s' -q -dc '%s' | head -c %zu", zstd, path, want);
	FILE *f = popen(cmd, "r");
	uint8_t *img = malloc(want);

	if (!f || !img) {
		SKIP("cannot run %s", cmd);
		free(img);
		if (f)
			pclose(f);
		return;
	}
	while (got < want) {
		size_t n = fread(img + got, 1, want - got, f);
		if (n == 0)
			break;
		got += n;
	}
	pclose(f);
	if (got < want) {
		SKIP("short read of %s (%zu bytes)", path, got);
	} else {
		int n = check_image_crcs(img, got, "kernel fixture plain.img", true);
		printf("kernel fixture: superblock and %d checkpoint blocks verified\n", n);
	}
	free(img);
}

int main(void)
{
	test_kats();
	test_against_reference();
	test_mkfs_image();
	test_kernel_fixture();
	return check_done("test_crc");
}
