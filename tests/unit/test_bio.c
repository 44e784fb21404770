// SPDX-License-Identifier: GPL-2.0
/*
 * The device layer's merge rule and plug: neighbouring bios become one
 * device request only when they are physically contiguous and either both
 * carry no crypt context or both use the same key with consecutive DUNs
 * (blk-crypto's rule); merged encrypted requests still encrypt each block
 * with its own DUN.  Runs against a temporary image file, and against the
 * memory backend, read-only and writable.
 */
#include "check.h"

#include "f2fs.h"

/* A toy cipher: XOR every byte with the low byte of (key tag + DUN). */
static int toy_crypt(const void *key, uint64_t dun, const void *in, void *out, size_t nr)
{
	const uint8_t *s = in;
	uint8_t *d = out;
	uint8_t tag = *(const uint8_t *)key;

	for (size_t u = 0; u < nr; u++)
		for (size_t i = 0; i < F2FS_BLKSIZE; i++)
			d[u * F2FS_BLKSIZE + i] = s[u * F2FS_BLKSIZE + i] ^ (uint8_t)(tag + dun + u);
	return 0;
}

static int toy_decrypt(const void *key, uint64_t dun, void *buf, size_t nr)
{
	return toy_crypt(key, dun, buf, buf, nr);
}

static int toy_encrypt(const void *key, uint64_t dun, const void *in, void *out, size_t nr)
{
	return toy_crypt(key, dun, in, out, nr);
}

static const struct f2fs_crypt_ops toy_ops = { .decrypt = toy_decrypt, .encrypt = toy_encrypt };

static struct f2fs_bio one(uint32_t blk, struct iovec *iov, const struct f2fs_crypt_ctx *c)
{
	return (struct f2fs_bio){ .op = F2FS_BIO_WRITE, .blkaddr = blk, .nr_blocks = 1,
				  .iov = iov, .iovcnt = 1, .crypt = c };
}

static void rule_tests(void)
{
	static uint8_t buf[F2FS_BLKSIZE];
	struct iovec iov = { buf, F2FS_BLKSIZE };
	uint8_t k1 = 1, k2 = 2;
	struct f2fs_crypt_ctx a = { &toy_ops, &k1, 10 }, b = { &toy_ops, &k1, 11 },
			      c = { &toy_ops, &k2, 11 }, gap = { &toy_ops, &k1, 12 };
	struct f2fs_bio x = one(100, &iov, NULL), y = one(101, &iov, NULL), z = one(102, &iov, NULL);

	CHECK(f2fs_bio_mergeable(&x, &y), "contiguous plain bios merge");
	CHECK(!f2fs_bio_mergeable(&x, &z), "a gap does not merge");
	y.fua = true;
	CHECK(!f2fs_bio_mergeable(&x, &y) && !f2fs_bio_mergeable(&y, &x),
	      "a FUA write stays alone");
	y.fua = false;
	y.file_data = true;
	CHECK(!f2fs_bio_mergeable(&x, &y), "file data does not merge with metadata");
	y.file_data = false;
	y.op = F2FS_BIO_READ;
	CHECK(!f2fs_bio_mergeable(&x, &y), "a read does not merge into a write");
	y = one(101, &iov, &b);
	CHECK(!f2fs_bio_mergeable(&x, &y), "plain then encrypted does not merge");
	x = one(100, &iov, &a);
	y = one(101, &iov, NULL);
	CHECK(!f2fs_bio_mergeable(&x, &y), "encrypted then plain does not merge");
	y = one(101, &iov, &b);
	CHECK(f2fs_bio_mergeable(&x, &y), "same key, next DUN merges");
	y = one(101, &iov, &c);
	CHECK(!f2fs_bio_mergeable(&x, &y), "another key does not merge");
	y = one(101, &iov, &gap);
	CHECK(!f2fs_bio_mergeable(&x, &y), "a DUN gap does not merge");
	/* IV_INO_LBLK_32 wraps: DUN 0 after 0xffffffff must not merge */
	a.dun = 0xffffffffu;
	b.dun = 0;
	y = one(101, &iov, &b);
	CHECK(!f2fs_bio_mergeable(&x, &y), "a DUN wrap does not merge");
}

static void plug_tests(void)
{
	char path[] = "/tmp/f2fs-test-bio-XXXXXX";
	int fd = mkstemp(path);
	enum { N = 64 };
	uint8_t *data = f2fs_alloc_blocks(N), *back = f2fs_alloc_blocks(N);
	struct f2fs_io_stats before, after;
	struct f2fs_dev *dev;
	struct f2fs_plug plug;
	uint8_t k1 = 7, k2 = 9;
	int err;

	if (fd < 0 || !data || !back || ftruncate(fd, (off_t)1024 * F2FS_BLKSIZE)) {
		SKIP("no temporary image file");
		return;
	}
	close(fd);
	for (size_t i = 0; i < (size_t)N * F2FS_BLKSIZE; i++)
		data[i] = (uint8_t)(i * 31 + i / 4096);
	err = f2fs_dev_open(path, false, false, &dev);
	CHECK(err == 0, "open %s: %d", path, err);
	if (err)
		goto out;

	/* 64 contiguous plain blocks: one request */
	f2fs_plug_init(&plug, dev);
	f2fs_dev_get_stats(dev, &before);
	for (int i = 0; i < N; i++) {
		struct iovec iov = { data + (size_t)i * F2FS_BLKSIZE, F2FS_BLKSIZE };
		struct f2fs_bio bio = one(100 + (uint32_t)i, &iov, NULL);

		CHECK(f2fs_plug_add(&plug, &bio) == 0, "plug add %d", i);
	}
	CHECK(f2fs_plug_flush(&plug) == 0, "flush");
	f2fs_dev_get_stats(dev, &after);
	CHECK_EQ_U64(after.writes - before.writes, 1, "requests for 64 contiguous blocks");
	CHECK_EQ_U64(after.write_bytes - before.write_bytes, (uint64_t)N * F2FS_BLKSIZE, "bytes");
	CHECK_EQ_U64(plug.merged, N - 1, "bios merged");
	CHECK(f2fs_dev_read(dev, 100, back, N) == 0 && !memcmp(back, data, (size_t)N * F2FS_BLKSIZE),
	      "plain data round trip");

	/* encrypted: same key and consecutive DUNs merge; a key change splits */
	f2fs_plug_init(&plug, dev);
	f2fs_dev_get_stats(dev, &before);
	for (int i = 0; i < N; i++) {
		struct iovec iov = { data + (size_t)i * F2FS_BLKSIZE, F2FS_BLKSIZE };
		struct f2fs_crypt_ctx c = { &toy_ops, i < N / 2 ? &k1 : &k2, 1000 + (uint64_t)i };
		struct f2fs_bio bio = one(300 + (uint32_t)i, &iov, &c);

		CHECK(f2fs_plug_add(&plug, &bio) == 0, "plug add %d", i);
	}
	CHECK(f2fs_plug_flush(&plug) == 0, "flush");
	f2fs_dev_get_stats(dev, &after);
	CHECK_EQ_U64(after.writes - before.writes, 2, "requests for two keys");
	/* every block was encrypted with its own DUN, the plaintext left alone */
	CHECK(f2fs_dev_read(dev, 300, back, N) == 0, "read back ciphertext");
	for (int i = 0; i < N; i++) {
		uint8_t tag = i < N / 2 ? k1 : k2;
		uint8_t want = data[(size_t)i * F2FS_BLKSIZE + 5] ^ (uint8_t)(tag + 1000 + i);

		CHECK(back[(size_t)i * F2FS_BLKSIZE + 5] == want, "block %d ciphertext", i);
	}
	CHECK(data[5] == (uint8_t)(5 * 31), "the caller's plaintext is untouched");
	{
		struct iovec iov = { back, (size_t)N / 2 * F2FS_BLKSIZE };
		struct f2fs_crypt_ctx c = { &toy_ops, &k1, 1000 };
		struct f2fs_bio rd = { .op = F2FS_BIO_READ, .blkaddr = 300, .nr_blocks = N / 2,
				       .iov = &iov, .iovcnt = 1, .crypt = &c };

		CHECK(f2fs_submit_bio(dev, &rd) == 0 &&
		      !memcmp(back, data, (size_t)N / 2 * F2FS_BLKSIZE),
		      "a read with the crypt context decrypts per DUN");
	}

	/*
	 * Sealed: encrypted at the seal, so a plaintext changed afterwards is
	 * not what is written, and a bio added after the seal (even one that
	 * would have merged) goes as a request of its own, encrypted too.
	 */
	f2fs_plug_init(&plug, dev);
	f2fs_dev_get_stats(dev, &before);
	for (int i = 0; i < 3; i++) {
		struct iovec iov = { data + (size_t)i * F2FS_BLKSIZE, F2FS_BLKSIZE };
		struct f2fs_crypt_ctx c = { &toy_ops, &k1, 2000 + (uint64_t)i };
		struct f2fs_bio bio = one(500 + (uint32_t)i, &iov, &c);

		CHECK(f2fs_plug_add(&plug, &bio) == 0, "plug add %d", i);
		if (i == 1) {
			CHECK(f2fs_plug_seal(&plug) == 0, "seal");
			f2fs_dev_get_stats(dev, &after);
			CHECK_EQ_U64(after.writes - before.writes, 0, "the seal writes nothing");
			data[5] ^= 0xff;	/* after the seal: not written */
		}
	}
	CHECK(f2fs_plug_flush(&plug) == 0, "flush");
	data[5] ^= 0xff;
	f2fs_dev_get_stats(dev, &after);
	CHECK_EQ_U64(after.writes - before.writes, 2, "requests: the sealed one and the next");
	CHECK(f2fs_dev_read(dev, 500, back, 3) == 0, "read back sealed ciphertext");
	for (int i = 0; i < 3; i++)
		CHECK(back[(size_t)i * F2FS_BLKSIZE + 5] ==
		      (uint8_t)(data[(size_t)i * F2FS_BLKSIZE + 5] ^ (uint8_t)(k1 + 2000 + i)),
		      "sealed block %d ciphertext, per DUN", i);
	f2fs_dev_close(dev);
out:
	unlink(path);
	free(data);
	free(back);
}

/* The memory backend: the same bios land in the caller's buffer. */
static void mem_tests(void)
{
	enum { NB = 16 };
	uint8_t *img = f2fs_alloc_blocks(NB), *data = f2fs_alloc_blocks(2), *back = f2fs_alloc_blocks(2);
	struct iovec iov = { data, 2 * F2FS_BLKSIZE };
	struct f2fs_bio w = { .op = F2FS_BIO_WRITE, .blkaddr = 3, .nr_blocks = 2, .iov = &iov,
			      .iovcnt = 1 };
	struct f2fs_io_stats st;
	struct f2fs_dev *dev;
	uint8_t k = 5;

	if (!img || !data || !back)
		goto out;
	memset(img, 0xee, (size_t)NB * F2FS_BLKSIZE);
	for (size_t i = 0; i < 2 * F2FS_BLKSIZE; i++)
		data[i] = (uint8_t)(i * 13);

	CHECK(f2fs_dev_open_mem(img, (size_t)NB * F2FS_BLKSIZE, &dev) == 0, "open read-only");
	CHECK(f2fs_dev_nr_blocks(dev) == NB && !f2fs_dev_is_blkdev(dev), "geometry");
	CHECK(f2fs_submit_bio(dev, &w) == -EROFS, "a read-only memory device refuses writes");
	CHECK(img[3 * F2FS_BLKSIZE] == 0xee, "and leaves the buffer alone");
	f2fs_dev_close(dev);

	CHECK(f2fs_dev_open_mem_rw(img, (size_t)NB * F2FS_BLKSIZE, &dev) == 0, "open writable");
	CHECK(f2fs_submit_bio(dev, &w) == 0, "write two blocks");
	CHECK(!memcmp(img + 3 * F2FS_BLKSIZE, data, 2 * F2FS_BLKSIZE) &&
	      img[5 * F2FS_BLKSIZE] == 0xee && img[3 * F2FS_BLKSIZE - 1] == 0xee,
	      "they land in the buffer, nothing around them");
	CHECK(f2fs_dev_read(dev, 3, back, 2) == 0 && !memcmp(back, data, 2 * F2FS_BLKSIZE),
	      "and read back");
	w.blkaddr = NB - 1;
	CHECK(f2fs_submit_bio(dev, &w) == -EIO, "a write past the end: -EIO");
	CHECK(f2fs_dev_flush(dev) == 0 && f2fs_dev_discard(dev, 0, 2) == 0, "flush, discard");
	{
		struct f2fs_crypt_ctx c = { &toy_ops, &k, 40 };
		struct f2fs_bio e = { .op = F2FS_BIO_WRITE, .blkaddr = 8, .nr_blocks = 2, .iov = &iov,
				      .iovcnt = 1, .crypt = &c };
		struct iovec biov = { back, 2 * F2FS_BLKSIZE };
		struct f2fs_bio r = { .op = F2FS_BIO_READ, .blkaddr = 8, .nr_blocks = 2, .iov = &biov,
				      .iovcnt = 1, .crypt = &c };

		CHECK(f2fs_submit_bio(dev, &e) == 0, "an encrypted write");
		CHECK(img[8 * F2FS_BLKSIZE + 1] == (uint8_t)(data[1] ^ (uint8_t)(k + 40)) &&
		      img[9 * F2FS_BLKSIZE + 1] == (uint8_t)(data[F2FS_BLKSIZE + 1] ^ (uint8_t)(k + 41)),
		      "ciphertext in the buffer, per DUN");
		CHECK(data[1] == 13, "the caller's plaintext is untouched");
		CHECK(f2fs_submit_bio(dev, &r) == 0 && !memcmp(back, data, 2 * F2FS_BLKSIZE),
		      "a read with the context decrypts");
	}
	f2fs_dev_get_stats(dev, &st);
	CHECK_EQ_U64(st.writes, 2, "requests counted");
	f2fs_dev_close(dev);
out:
	free(img);
	free(data);
	free(back);
}

/* Held writes: read back, then written out on commit or dropped. */
static void hold_tests(void)
{
	enum { NB = 8 };
	uint8_t *img = f2fs_alloc_blocks(NB), *blk = f2fs_alloc_blocks(2);
	struct iovec iov = { blk, 2 * F2FS_BLKSIZE };
	struct f2fs_bio w = { .op = F2FS_BIO_WRITE, .blkaddr = 2, .nr_blocks = 2, .iov = &iov,
			      .iovcnt = 1 };
	struct f2fs_dev *dev;

	if (!img || !blk || f2fs_dev_open_mem_rw(img, (size_t)NB * F2FS_BLKSIZE, &dev))
		goto out;
	memset(img, 0xee, (size_t)NB * F2FS_BLKSIZE);
	for (int commit = 0; commit < 2; commit++) {
		f2fs_dev_hold_writes(dev);
		memset(blk, 0x11 + commit, 2 * F2FS_BLKSIZE);
		CHECK(f2fs_submit_bio(dev, &w) == 0, "a held write");
		CHECK(img[2 * F2FS_BLKSIZE] == 0xee && img[3 * F2FS_BLKSIZE] == 0xee,
		      "does not reach the device");
		memset(blk, 0, 2 * F2FS_BLKSIZE);
		CHECK(f2fs_dev_read(dev, 1, blk, 2) == 0 && blk[0] == 0xee &&
		      blk[F2FS_BLKSIZE] == 0x11 + commit, "reads see held blocks over the device's");
		CHECK(f2fs_dev_release_writes(dev, commit) == 0, "release");
		CHECK(img[2 * F2FS_BLKSIZE] == (commit ? 0x12 : 0xee) &&
		      img[3 * F2FS_BLKSIZE + 7] == (commit ? 0x12 : 0xee),
		      commit ? "committed writes reach the device" : "dropped writes never do");
	}
	f2fs_dev_close(dev);
out:
	free(img);
	free(blk);
}

int main(void)
{
	rule_tests();
	plug_tests();
	mem_tests();
	hold_tests();
	return check_done("test_bio");
}
