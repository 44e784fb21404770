// SPDX-License-Identifier: GPL-2.0
/*
 * The codec table of core/compress.c and the lzo-rle decoder (core/lzorle.c).
 *
 * - Every algorithm decompresses what its Debian library compresses, for
 *   the cluster sizes f2fs uses, and refuses output of the wrong length,
 *   truncated input and garbage with -EIO (never a crash: run under asan);
 *   zstd, like the kernel, takes a frame longer than the cluster as far as
 *   the cluster goes.
 * - lzo-rle: hand-assembled streams with zero runs (the kernel's bitstream
 *   version 1) decode to the bytes the format defines; with version 0 the
 *   same bytes are an M4 match too far back and fail.  liblzo2's LZO1X-1
 *   output, with and without the 17/1 header, decodes to its input.
 * - Differential: mutated LZO1X streams decode to the same bytes through
 *   f2fs_lzorle_decompress and liblzo2's lzo1x_decompress_safe whenever both
 *   accept them, and are accepted by both or by neither.
 */
#include <lz4.h>
#include <lz4hc.h>
#include <lzo1x.h>
#include <zstd.h>

#include "f2fs.h"
#include "check.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint32_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return (uint32_t)rng_state;
}

/* Text with repeats, zero runs and random stretches: all codecs' paths. */
static void fill(uint8_t *p, size_t n, int kind)
{
	static const char words[] = "the quick brown fox jumps over the lazy dog f2fs logs ";
	size_t i = 0;

	while (i < n) {
		uint32_t r = rnd() % 10;
		size_t run = 1 + rnd() % 300;

		if (run > n - i)
			run = n - i;
		if (kind == 0 || (kind == 2 && r < 6)) {
			for (size_t k = 0; k < run; k++)
				p[i + k] = (uint8_t)words[(i + k) % (sizeof(words) - 1)];
		} else if (kind == 1 || r < 8) {
			memset(p + i, 0, run);
		} else {
			for (size_t k = 0; k < run; k++)
				p[i + k] = (uint8_t)rnd();
		}
		i += run;
	}
}

/* Compress src with the library behind algorithm alg (lzo-rle: LZO1X-1
 * with the version 1 header, a valid lzo-rle stream without zero runs). */
static size_t compress(unsigned int alg, int level, const uint8_t *src, size_t n, uint8_t *dst,
		       size_t cap)
{
	static uint8_t wrk[LZO1X_1_MEM_COMPRESS];
	lzo_uint out = cap;
	int r;

	switch (alg) {
	case COMPRESS_LZ4:
		r = level ? LZ4_compress_HC((const char *)src, (char *)dst, (int)n, (int)cap, level)
			  : LZ4_compress_default((const char *)src, (char *)dst, (int)n, (int)cap);
		return r > 0 ? (size_t)r : 0;
	case COMPRESS_ZSTD: {
		size_t z = ZSTD_compress(dst, cap, src, n, level ? level : 1);

		return ZSTD_isError(z) ? 0 : z;
	}
	case COMPRESS_LZO:
		r = lzo1x_1_compress(src, n, dst, &out, wrk);
		return r == LZO_E_OK ? out : 0;
	case COMPRESS_LZORLE:
		dst[0] = 17;
		dst[1] = 1;
		out = cap - 2;
		r = lzo1x_1_compress(src, n, dst + 2, &out, wrk);
		return r == LZO_E_OK ? out + 2 : 0;
	}
	return 0;
}

static void test_round_trips(void)
{
	static const int levels[COMPRESS_MAX][2] = {
		[COMPRESS_LZO] = { 0, 0 }, [COMPRESS_LZ4] = { 0, 9 },
		[COMPRESS_ZSTD] = { 1, 19 }, [COMPRESS_LZORLE] = { 0, 0 },
	};
	const size_t max = (size_t)F2FS_BLKSIZE << MAX_COMPRESS_LOG_SIZE;
	uint8_t *src = malloc(max), *c = malloc(2 * max), *out = malloc(max + 64);

	for (unsigned int alg = 0; alg < COMPRESS_MAX; alg++) {
		for (unsigned int log = MIN_COMPRESS_LOG_SIZE; log <= MAX_COMPRESS_LOG_SIZE; log += 2) {
			for (int kind = 0; kind < 3; kind++) {
				for (int l = 0; l < 2; l++) {
					size_t n = (size_t)F2FS_BLKSIZE << log;
					size_t clen;

					fill(src, n, kind);
					clen = compress(alg, levels[alg][l], src, n, c, 2 * max);
					CHECK(clen > 0, "alg %u log %u: library compression failed", alg,
					      log);
					if (!clen)
						continue;
					memset(out, 0xa5, n);
					CHECK(f2fs_decompress(NULL, alg, c, clen, out, n) == 0 &&
					      !memcmp(out, src, n), "alg %u level %d log %u kind %d: "
					      "round trip", alg, levels[alg][l], log, kind);
					/* a cluster of another size: the length is wrong (zstd
					 * stops where the buffer ends, as the kernel's one
					 * ZSTD_decompressStream call does) */
					CHECK(alg == COMPRESS_ZSTD ||
					      f2fs_decompress(NULL, alg, c, clen, out, n / 2) == -EIO,
					      "alg %u log %u: half-size output accepted", alg, log);
					CHECK(f2fs_decompress(NULL, alg, c, clen, out, n + F2FS_BLKSIZE) ==
					      -EIO, "alg %u log %u: short output accepted", alg, log);
					/* cut input */
					CHECK(f2fs_decompress(NULL, alg, c, clen / 2, out, n) == -EIO,
					      "alg %u log %u: truncated input accepted", alg, log);
				}
			}
		}
	}
	/* garbage: an error or (rarely) a lucky decode, never a crash */
	for (int i = 0; i < 2000; i++) {
		size_t clen = 1 + rnd() % 5000, n = (size_t)F2FS_BLKSIZE << 2;

		for (size_t k = 0; k < clen; k++)
			c[k] = (uint8_t)rnd();
		for (unsigned int alg = 0; alg < COMPRESS_MAX; alg++) {
			int r = f2fs_decompress(NULL, alg, c, clen, out, n);

			CHECK(r == 0 || r == -EIO, "alg %u: garbage gave %d", alg, r);
		}
	}
	CHECK(f2fs_decompress(NULL, COMPRESS_MAX, c, 10, out, 16384) == -EIO, "unknown algorithm");
	free(src);
	free(c);
	free(out);
}

static int rle(const uint8_t *in, size_t n, uint8_t *out, size_t cap, size_t *got)
{
	*got = cap;
	return f2fs_lzorle_decompress(in, n, out, got);
}

static void test_lzorle_zero_runs(void)
{
	/* header v1; literals "abcd" (first byte 17 + 4); a zero run of
	 * 4 + 0 + 8 * 12 = 100 (M4 0x18, word 0xfffc, byte 12); the end marker */
	static const uint8_t s1[] = { 17, 1, 21, 'a', 'b', 'c', 'd', 0x18, 0xfc, 0xff, 12,
				      0x11, 0, 0 };
	/* the same with one literal after the run (word 0xfffd) and a run of
	 * 4 + 7 + 8 * 0 = 11 (M4 0x1f) */
	static const uint8_t s2[] = { 17, 1, 21, 'a', 'b', 'c', 'd', 0x18, 0xfd, 0xff, 12, 'Z',
				      0x1f, 0xfc, 0xff, 0, 0x11, 0, 0 };
	uint8_t out[512], want[512];
	size_t got;

	memset(want, 0, sizeof(want));
	memcpy(want, "abcd", 4);
	CHECK(rle(s1, sizeof(s1), out, sizeof(out), &got) == 0 && got == 104 &&
	      !memcmp(out, want, got), "zero run: got %zu bytes", got);
	want[104] = 'Z';
	CHECK(rle(s2, sizeof(s2), out, sizeof(out), &got) == 0 && got == 116 &&
	      !memcmp(out, want, got), "zero run with a literal: got %zu bytes", got);
	/* the output buffer one byte short of the run */
	CHECK(rle(s1, sizeof(s1), out, 103, &got) == -EIO, "zero run past the output");
	/* version 0: the same bytes are an M4 match 48 KiB back */
	{
		uint8_t v0[sizeof(s1)];

		memcpy(v0, s1, sizeof(s1));
		v0[1] = 0;
		CHECK(rle(v0, sizeof(v0), out, sizeof(out), &got) == -EIO, "v0 zero run accepted");
	}
	/* cut anywhere: an error */
	for (size_t n = 0; n < sizeof(s2); n++)
		CHECK(rle(s2, n, out, sizeof(out), &got) == -EIO, "prefix of %zu bytes accepted", n);
	/* a byte after the end marker: an error (input not consumed) */
	{
		uint8_t extra[sizeof(s1) + 1];

		memcpy(extra, s1, sizeof(s1));
		extra[sizeof(s1)] = 0;
		CHECK(rle(extra, sizeof(extra), out, sizeof(out), &got) == -EIO,
		      "trailing byte accepted");
	}
	/* the empty stream (the end marker alone) */
	{
		static const uint8_t e[] = { 0x11, 0, 0 };

		CHECK(rle(e, sizeof(e), out, sizeof(out), &got) == 0 && got == 0, "empty stream");
	}
}

static void test_lzo_differential(void)
{
	static uint8_t wrk[LZO1X_1_MEM_COMPRESS];
	const size_t n = 64 * 1024;
	uint8_t *src = malloc(n), *c = malloc(2 * n), *a = malloc(n), *b = malloc(n);
	int both_ok = 0, both_bad = 0, differ = 0;

	for (int iter = 0; iter < 300; iter++) {
		lzo_uint clen = 2 * n, bl;
		size_t al;
		int ra, rb;

		fill(src, n, iter % 3);
		lzo1x_1_compress(src, n, c, &clen, wrk);
		al = n;
		CHECK(f2fs_lzorle_decompress(c, clen, a, &al) == 0 && al == n && !memcmp(a, src, n),
		      "v0 LZO1X-1 stream %d", iter);
		for (int m = 0; m < 30; m++) {
			uint8_t save;
			size_t pos = rnd() % clen;

			save = c[pos];
			c[pos] = (uint8_t)rnd();
			if (c[0] == 17)
				c[0] = 18;	/* the kernel reads 17 first as a version header */
			al = n;
			bl = n;
			ra = f2fs_lzorle_decompress(c, clen, a, &al);
			rb = lzo1x_decompress_safe(c, clen, b, &bl, NULL);
			if (!ra && rb == LZO_E_OK) {
				both_ok++;
				if (al != bl || memcmp(a, b, al))
					differ++;
			} else if (ra && rb != LZO_E_OK) {
				both_bad++;
			} else {
				differ++;
				fprintf(stderr, "iter %d pos %zu: ours %d, liblzo2 %d\n", iter, pos, ra,
					rb);
			}
			c[pos] = save;
		}
	}
	printf("lzo differential: %d both decoded, %d both refused, %d disagreed\n", both_ok,
	       both_bad, differ);
	CHECK(differ == 0, "%d mutated streams decoded differently", differ);
	CHECK(both_ok > 100 && both_bad > 100, "mutations too one-sided (%d/%d)", both_ok, both_bad);
	free(src);
	free(c);
	free(a);
	free(b);
}

/*
 * The compressing side (f2fs_compress): every algorithm and level the
 * mount options take, every cluster size, back through f2fs_decompress
 * (lzo-rle through lzorle.c); incompressible data does not fit the
 * kernel's limit (cluster_size - 1 blocks less the header) and says -E2BIG.
 */
static void test_compress_side(void)
{
	static const unsigned int cases[][2] = {
		{ COMPRESS_LZO, 0 }, { COMPRESS_LZ4, 0 }, { COMPRESS_LZ4, 3 }, { COMPRESS_LZ4, 12 },
		{ COMPRESS_ZSTD, 0 }, { COMPRESS_ZSTD, 1 }, { COMPRESS_ZSTD, 15 },
		{ COMPRESS_LZORLE, 0 },
	};
	const size_t max = (size_t)4096 << MAX_COMPRESS_LOG_SIZE;
	uint8_t *src = malloc(max), *back = malloc(max);
	uint8_t *dst = malloc(f2fs_compress_bound(COMPRESS_LZ4, max) + f2fs_compress_bound(COMPRESS_LZO, max));

	CHECK(src && back && dst, "out of memory");
	if (!src || !back || !dst)
		return;
	for (unsigned int log = MIN_COMPRESS_LOG_SIZE; log <= MAX_COMPRESS_LOG_SIZE; log++) {
		size_t rlen = (size_t)4096 << log, cap = rlen - 4096 - 24;

		for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
			unsigned int alg = cases[c][0], level = cases[c][1];
			ssize_t n;

			CHECK(f2fs_compress_level_valid(alg, level), "alg %u level %u", alg, level);
			fill(src, rlen, 0);
			n = f2fs_compress(NULL, alg, level, src, rlen, dst, cap);
			CHECK(n > 0 && (size_t)n <= cap, "alg %u level %u log %u: %zd", alg, level, log, n);
			if (n <= 0)
				continue;
			memset(back, 0xa5, rlen);
			CHECK(f2fs_decompress(NULL, alg, dst, (size_t)n, back, rlen) == 0, "alg %u log %u", alg, log);
			CHECK(memcmp(src, back, rlen) == 0, "alg %u log %u: other bytes", alg, log);
			for (size_t i = 0; i < rlen; i++)
				src[i] = (uint8_t)rnd();
			CHECK(f2fs_compress(NULL, alg, level, src, rlen, dst, cap) == -E2BIG,
			      "alg %u log %u: random data fits", alg, log);
		}
	}
	CHECK(f2fs_compress_algorithm("lzo-rle") == COMPRESS_LZORLE, "lzo-rle");
	CHECK(f2fs_compress_algorithm("gzip") == -EINVAL, "gzip");
	free(src);
	free(back);
	free(dst);
}

int main(void)
{
	if (lzo_init() != LZO_E_OK) {
		fprintf(stderr, "lzo_init failed\n");
		return 1;
	}
	test_round_trips();
	test_lzorle_zero_runs();
	test_lzo_differential();
	test_compress_side();
	return check_done("test_compress");
}
