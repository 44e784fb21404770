// SPDX-License-Identifier: GPL-2.0
/*
 * Superblock and checkpoint parsing through f2fs_mount_mem.
 *
 * An 80 MiB image is made at run time with mkfs.f2fs (extra_attr,
 * inode_checksum, inode_crtime, sb_checksum) and
 * loaded by sload.f2fs with a small tree whose contents this test generates,
 * so every expected value comes from the tree or from the image's own
 * superblock/checkpoint fields.  The test then mounts the pristine image and
 * checks what it sees, and mounts copies with one field corrupted and
 * checks the mount is refused with the errno the kernel would return
 * (-EINVAL for a superblock or for "no valid checkpoint pack", -EUCLEAN for
 * a checkpoint that fails f2fs_sanity_check_ckpt) and a message naming the
 * structure, or is accepted when a valid backup exists.
 * Skips (with a printed reason) when mkfs.f2fs/sload.f2fs are missing.
 *
 * flexible_inline_xattr is left out on purpose: sload.f2fs 1.15 writes the
 * block addresses of files larger than 867 blocks as if the inode had no
 * inline xattr area, then sets i_inline_xattr_size to 50, so block 867 on
 * reads from the wrong place (checked with tests/corrupt/f2fsimg.py).
 */
#include <sys/stat.h>

#include "f2fs.h"
#include "check.h"

#define IMG_MB 80
#define BIG_SIZE (5u * 1024 * 1024 + 123)	/* > 923 blocks: needs a direct node */
#define DIR_ENTRIES 300

static uint8_t *pristine;
static size_t img_len;
static uint8_t *work;

/* ---- log capture ---- */
static char logbuf[8192];
static size_t loglen;

static void log_capture(void *arg, enum f2fs_log_level lvl, const char *msg)
{
	size_t n = strlen(msg);

	if (loglen + n + 2 < sizeof(logbuf)) {
		memcpy(logbuf + loglen, msg, n);
		loglen += n;
		logbuf[loglen++] = '\n';
		logbuf[loglen] = 0;
	}
}

static int mount_buf(const uint8_t *buf, struct f2fs_sb **sb)
{
	struct f2fs_mount_opts o = { .readonly = true, .log = log_capture,
				     .log_level = F2FS_LOG_DEBUG };

	loglen = 0;
	logbuf[0] = 0;
	*sb = NULL;
	return f2fs_mount_mem(buf, img_len, &o, sb);
}

static uint8_t big_byte(uint64_t i)
{
	return (uint8_t)(i * 131 + i / 4096 + 7);
}

/* ---- building the tree ---- */
static int write_file(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");

	if (!f)
		return -1;
	if (len && fwrite(data, 1, len, f) != len) {
		fclose(f);
		return -1;
	}
	return fclose(f);
}

static int make_tree(char *dir)
{
	char p[512];
	uint8_t *big;

	if (!mkdtemp(dir))
		return -1;
	snprintf(p, sizeof(p), "%s/hello", dir);
	if (write_file(p, "hello world\n", 12))
		return -1;
	snprintf(p, sizeof(p), "%s/empty", dir);
	if (write_file(p, "", 0))
		return -1;
	big = malloc(BIG_SIZE);
	if (!big)
		return -1;
	for (uint64_t i = 0; i < BIG_SIZE; i++)
		big[i] = big_byte(i);
	snprintf(p, sizeof(p), "%s/big", dir);
	int rc = write_file(p, big, BIG_SIZE);
	free(big);
	if (rc)
		return -1;
	snprintf(p, sizeof(p), "%s/link", dir);
	if (symlink("hello", p))
		return -1;
	snprintf(p, sizeof(p), "%s/d", dir);
	if (mkdir(p, 0755))
		return -1;
	for (int i = 0; i < DIR_ENTRIES; i++) {
		snprintf(p, sizeof(p), "%s/d/f%03d", dir, i);
		if (write_file(p, "x", 1))
			return -1;
	}
	return 0;
}

/* ---- on-image helpers (superblock copy 0 or 1, checkpoint packs) ---- */
static uint8_t *sbp(uint8_t *img, int copy)
{
	return img + (size_t)copy * F2FS_BLKSIZE + F2FS_SUPER_OFFSET;
}

static void fix_sb_crc(uint8_t *img, int copy)
{
	uint8_t *s = sbp(img, copy);

	put_le32(s + SB_CRC, f2fs_chksum(s, SB_CRC));
}

static uint32_t cp_pack_blk(const uint8_t *img, int pack)
{
	const uint8_t *s = img + F2FS_SUPER_OFFSET;

	return get_le32(s + SB_CP_BLKADDR) + ((uint32_t)pack << get_le32(s + SB_LOG_BLOCKS_PER_SEG));
}

static uint8_t *blk(uint8_t *img, uint32_t b)
{
	return img + (size_t)b * F2FS_BLKSIZE;
}

static bool cp_block_valid(uint8_t *img, uint32_t b)
{
	uint8_t *c = blk(img, b);
	uint32_t cso = get_le32(c + CP_CHECKSUM_OFFSET);

	return cso >= CP_MIN_CHKSUM_OFFSET && cso <= CP_CHKSUM_OFFSET_DEFAULT &&
	       f2fs_chksum(c, cso) == get_le32(c + cso);
}

/* A pack is valid when its first and last blocks pass CRC with the same version. */
static bool pack_valid(uint8_t *img, int pack)
{
	uint32_t b = cp_pack_blk(img, pack);
	uint32_t total;

	if (!cp_block_valid(img, b))
		return false;
	total = get_le32(blk(img, b) + CP_PACK_TOTAL_BLOCK_COUNT);
	if (!total || total > 512 || !cp_block_valid(img, b + total - 1))
		return false;
	return get_le64(blk(img, b)) == get_le64(blk(img, b + total - 1));
}

static void fix_cp_crc(uint8_t *img, uint32_t b)
{
	uint8_t *c = blk(img, b);
	uint32_t cso = get_le32(c + CP_CHECKSUM_OFFSET);

	put_le32(c + cso, f2fs_chksum(c, cso));
}

/* the pack the mount should use: valid with the higher version */
static int current_pack(uint8_t *img)
{
	bool v0 = pack_valid(img, 0), v1 = pack_valid(img, 1);

	if (v0 && v1)
		return get_le64(blk(img, cp_pack_blk(img, 1))) >
		       get_le64(blk(img, cp_pack_blk(img, 0)));
	return v1 ? 1 : 0;
}

/* ---- walking the mounted tree ---- */
struct dirlist {
	int n;
	char names[DIR_ENTRIES + 16][16];
	uint32_t inos[DIR_ENTRIES + 16];
	int overflow;
};

static int collect(void *ctx, const char *name, size_t len, uint32_t ino, unsigned int ft,
		   uint64_t next_off)
{
	struct dirlist *d = ctx;

	if (d->n >= (int)ARRAY_SIZE(d->names)) {
		d->overflow++;
		return 0;
	}
	snprintf(d->names[d->n], sizeof(d->names[0]), "%.*s", (int)F2FS_MIN(len, 15), name);
	d->inos[d->n++] = ino;
	return 0;
}

static int find_name(const struct dirlist *d, const char *name)
{
	for (int i = 0; i < d->n; i++)
		if (!strcmp(d->names[i], name))
			return i;
	return -1;
}

static void check_pristine(const uint8_t *img)
{
	struct f2fs_sb *sb;
	struct f2fs_stat st;
	struct f2fs_statfs sf;
	static struct dirlist dl;
	int err = mount_buf(img, &sb);

	CHECK(err == 0, "pristine image does not mount: %d\n%s", err, logbuf);
	if (err)
		return;
	uint32_t root = f2fs_root_ino(sb);
	const uint8_t *s = img + F2FS_SUPER_OFFSET;

	CHECK_EQ_U64(root, get_le32(s + SB_ROOT_INO), "root ino");
	err = f2fs_getattr(sb, root, &st);
	CHECK(err == 0, "getattr(root) = %d", err);
	CHECK(S_ISDIR(st.mode), "root mode %o is not a directory", st.mode);
	/* ".", "..", and the one subdirectory "d" */
	CHECK(st.nlink == 3, "root nlink %u, want 3", st.nlink);
	CHECK_EQ_U64(st.ino, root, "getattr(root).ino");

	/* statfs, compared with the superblock and the current checkpoint */
	uint8_t *copy = malloc(img_len);
	memcpy(copy, img, img_len);
	const uint8_t *cp = blk(copy, cp_pack_blk(copy, current_pack(copy)));
	err = f2fs_statfs(sb, &sf);
	CHECK(err == 0, "statfs = %d", err);
	CHECK_EQ_U64(sf.bsize, 4096, "statfs bsize");
	/* the kernel's f2fs_statfs: f_blocks = block_count - segment0_blkaddr */
	CHECK_EQ_U64(sf.blocks, get_le64(s + SB_BLOCK_COUNT) - get_le32(s + SB_SEGMENT0_BLKADDR),
		     "statfs blocks");
	CHECK_EQ_U64(sf.bfree, get_le64(cp + CP_USER_BLOCK_COUNT) - get_le64(cp + CP_VALID_BLOCK_COUNT),
		     "statfs bfree (user_block_count - valid_block_count)");
	CHECK(sf.bavail <= sf.bfree && sf.bfree <= sf.blocks, "bavail %" PRIu64 " bfree %" PRIu64
	      " blocks %" PRIu64, sf.bavail, sf.bfree, sf.blocks);
	CHECK(sf.ffree <= sf.files && sf.files > 0, "ffree %" PRIu64 " files %" PRIu64, sf.ffree,
	      sf.files);
	CHECK(sf.files - sf.ffree >= get_le32(cp + CP_VALID_INODE_COUNT),
	      "used inodes %" PRIu64 " < valid_inode_count %u", sf.files - sf.ffree,
	      get_le32(cp + CP_VALID_INODE_COUNT));
	CHECK_EQ_U64(sf.namemax, 255, "statfs namemax");
	CHECK(!memcmp(sf.uuid, s + SB_UUID, 16), "statfs uuid differs from the superblock");
	free(copy);

	/* the root directory */
	memset(&dl, 0, sizeof(dl));
	err = f2fs_readdir(sb, root, 0, collect, &dl);
	CHECK(err == 0, "readdir(root) = %d", err);
	static const char *const want[] = { ".", "..", "hello", "empty", "big", "link", "d" };
	for (size_t i = 0; i < ARRAY_SIZE(want); i++)
		CHECK(find_name(&dl, want[i]) >= 0, "root has no entry \"%s\"", want[i]);
	CHECK(dl.n == (int)ARRAY_SIZE(want), "root has %d entries, want %zu", dl.n, ARRAY_SIZE(want));
	int dot = find_name(&dl, "."), dotdot = find_name(&dl, "..");
	if (dot >= 0)
		CHECK_EQ_U64(dl.inos[dot], root, "ino of .");
	if (dotdot >= 0)
		CHECK_EQ_U64(dl.inos[dotdot], root, "ino of .. in the root");

	/* hello */
	char buf[64];
	err = f2fs_lookup(sb, root, "hello", 5, &st);
	CHECK(err == 0, "lookup(hello) = %d", err);
	if (!err) {
		CHECK(S_ISREG(st.mode), "hello mode %o", st.mode);
		CHECK_EQ_U64(st.size, 12, "hello size");
		CHECK_EQ_U64(st.nlink, 1, "hello nlink");
		ssize_t n = f2fs_read(sb, st.ino, buf, sizeof(buf), 0);
		CHECK(n == 12 && !memcmp(buf, "hello world\n", 12), "read(hello) = %zd", n);
		n = f2fs_read(sb, st.ino, buf, sizeof(buf), 12);
		CHECK(n == 0, "read(hello) at EOF = %zd", n);
		n = f2fs_read(sb, st.ino, buf, 5, 6);
		CHECK(n == 5 && !memcmp(buf, "world", 5), "read(hello, 5, 6) = %zd", n);
	}
	err = f2fs_lookup(sb, root, "empty", 5, &st);
	CHECK(err == 0 && S_ISREG(st.mode) && st.size == 0, "lookup(empty) = %d", err);
	if (!err)
		CHECK(f2fs_read(sb, st.ino, buf, sizeof(buf), 0) == 0, "read(empty) != 0");
	err = f2fs_lookup(sb, root, "nonexistent", 11, &st);
	CHECK(err == -ENOENT, "lookup(nonexistent) = %d, want -ENOENT", err);

	/* big: direct node range */
	err = f2fs_lookup(sb, root, "big", 3, &st);
	CHECK(err == 0, "lookup(big) = %d", err);
	if (!err) {
		CHECK_EQ_U64(st.size, BIG_SIZE, "big size");
		uint8_t *b = malloc(65536);
		uint64_t off = 0, bad = UINT64_MAX;
		while (off < BIG_SIZE + 65536) {
			ssize_t n = f2fs_read(sb, st.ino, b, 65536, off);
			if (n < 0) {
				CHECK(0, "read(big, off %" PRIu64 ") = %zd", off, n);
				break;
			}
			if (n == 0)
				break;
			for (ssize_t i = 0; i < n && bad == UINT64_MAX; i++)
				if (b[i] != big_byte(off + (uint64_t)i))
					bad = off + (uint64_t)i;
			off += (uint64_t)n;
		}
		CHECK_EQ_U64(off, BIG_SIZE, "bytes read from big");
		CHECK(bad == UINT64_MAX, "big differs at byte %" PRIu64, bad);
		free(b);
	}

	/* link */
	err = f2fs_lookup(sb, root, "link", 4, &st);
	CHECK(err == 0 && S_ISLNK(st.mode), "lookup(link) = %d mode %o", err, st.mode);
	if (!err) {
		memset(buf, 0, sizeof(buf));
		ssize_t n = f2fs_readlink(sb, st.ino, buf, sizeof(buf));
		CHECK(n == 5 && !memcmp(buf, "hello", 5), "readlink(link) = %zd \"%.*s\"", n,
		      (int)F2FS_MAX(n, 0), buf);
		CHECK_EQ_U64(st.size, 5, "link size");
	}

	/* d: 300 entries in dentry blocks */
	err = f2fs_lookup(sb, root, "d", 1, &st);
	CHECK(err == 0 && S_ISDIR(st.mode), "lookup(d) = %d", err);
	if (!err) {
		uint32_t d = st.ino;

		CHECK_EQ_U64(st.nlink, 2, "d nlink");
		memset(&dl, 0, sizeof(dl));
		err = f2fs_readdir(sb, d, 0, collect, &dl);
		CHECK(err == 0, "readdir(d) = %d", err);
		CHECK(dl.n == DIR_ENTRIES + 2 && !dl.overflow, "d has %d entries, want %d", dl.n,
		      DIR_ENTRIES + 2);
		dotdot = find_name(&dl, "..");
		CHECK(dotdot >= 0 && dl.inos[dotdot] == root, "d/.. is not the root");
		int missing = 0;
		for (int i = 0; i < DIR_ENTRIES; i++) {
			char nm[16];
			snprintf(nm, sizeof(nm), "f%03d", i);
			if (find_name(&dl, nm) < 0)
				missing++;
			if (f2fs_lookup(sb, d, nm, 4, &st) != 0 || st.size != 1)
				missing++;
		}
		CHECK(missing == 0, "%d lookups/readdir entries of d/fNNN missing", missing);
		/* resuming readdir from an entry's next_off continues after it */
		struct dirlist dl2;
		memset(&dl2, 0, sizeof(dl2));
		CHECK(f2fs_readdir(sb, d, 0, collect, &dl2) == 0 && dl2.n == dl.n,
		      "second readdir differs");
	}
	f2fs_umount(sb);
}

/* ---- corruption cases ---- */
enum expect { OK, REFUSED };

static void expect_mount(const char *what, enum expect e, int want_err, const char *keyword)
{
	struct f2fs_sb *sb;
	int err = mount_buf(work, &sb);

	if (e == OK) {
		CHECK(err == 0, "%s: mount failed with %d, expected success\n%s", what, err, logbuf);
		if (!err) {
			struct f2fs_stat st;
			int e2 = f2fs_getattr(sb, f2fs_root_ino(sb), &st);
			CHECK(e2 == 0 && S_ISDIR(st.mode), "%s: root getattr %d", what, e2);
			e2 = f2fs_lookup(sb, f2fs_root_ino(sb), "hello", 5, &st);
			CHECK(e2 == 0 && st.size == 12, "%s: lookup(hello) %d", what, e2);
		}
	} else {
		CHECK(err == -want_err, "%s: mount returned %d, expected %d\n%s", what, err,
		      -want_err, logbuf);
		CHECK(err != 0 || sb == NULL, "%s: sb set on failure", what);
		if (err && keyword)
			CHECK(strcasestr(logbuf, keyword) != NULL,
			      "%s: no message mentioning \"%s\" in:\n%s", what, keyword, logbuf);
	}
	if (!err)
		f2fs_umount(sb);
}

static void reset(void)
{
	memcpy(work, pristine, img_len);
}

static void sb_cases(void)
{
	/* magic */
	reset();
	put_le32(sbp(work, 0) + SB_MAGIC, 0x12345678);
	expect_mount("bad magic in the first superblock", OK, 0, NULL);
	put_le32(sbp(work, 1) + SB_MAGIC, 0x12345678);
	expect_mount("bad magic in both superblocks", REFUSED, EINVAL, "superblock");

	/* checksum (sb_checksum is set in this image) */
	CHECK(get_le32(sbp(pristine, 0) + SB_FEATURE) & F2FS_FEATURE_SB_CHKSUM,
	      "test image lacks sb_checksum");
	reset();
	sbp(work, 0)[SB_VOLUME_NAME] ^= 0x55;
	expect_mount("bad checksum in the first superblock", OK, 0, NULL);
	sbp(work, 1)[SB_VOLUME_NAME] ^= 0x55;
	expect_mount("bad checksum in both superblocks", REFUSED, EINVAL, "superblock");
	reset();
	put_le32(sbp(work, 0) + SB_CRC, get_le32(sbp(work, 0) + SB_CRC) ^ 1);
	put_le32(sbp(work, 1) + SB_CRC, get_le32(sbp(work, 1) + SB_CRC) ^ 0x80000000u);
	expect_mount("stored sb crc altered in both copies", REFUSED, EINVAL, "superblock");

	/* field checks, with the checksum recomputed so the field check is what fails */
	static const struct {
		const char *what;
		int off;
		uint32_t val;	/* absolute, or delta when rel */
		bool rel;
	} fields[] = {
		{ "log_blocksize 13", SB_LOG_BLOCKSIZE, 13, false },
		{ "log_blocksize 0", SB_LOG_BLOCKSIZE, 0, false },
		{ "log_blocks_per_seg 10", SB_LOG_BLOCKS_PER_SEG, 10, false },
		{ "segment_count_main + 1000", SB_SEGMENT_COUNT_MAIN, 1000, true },
		{ "segment_count_main 0", SB_SEGMENT_COUNT_MAIN, 0, false },
		{ "segment_count 5", SB_SEGMENT_COUNT, 5, false },
		{ "segment_count huge", SB_SEGMENT_COUNT, 0x7fffffff, false },
		{ "segment_count_nat 0", SB_SEGMENT_COUNT_NAT, 0, false },
		{ "segment_count_nat odd", SB_SEGMENT_COUNT_NAT, 1, true },
		{ "segment_count_sit + 2", SB_SEGMENT_COUNT_SIT, 2, true },
		{ "segment_count_ckpt 1", SB_SEGMENT_COUNT_CKPT, 1, false },
		{ "nat_blkaddr + 512", SB_NAT_BLKADDR, 512, true },
		{ "main_blkaddr - 512", SB_MAIN_BLKADDR, (uint32_t)-512, true },
		{ "section_count + 1", SB_SECTION_COUNT, 1, true },
		{ "segs_per_sec 0", SB_SEGS_PER_SEC, 0, false },
		{ "root_ino 0", SB_ROOT_INO, 0, false },
		{ "cp_payload huge", SB_CP_PAYLOAD, 100000, false },
		{ "extension_count 65", SB_EXTENSION_COUNT, 65, false },
	};
	for (size_t i = 0; i < ARRAY_SIZE(fields); i++) {
		char what[128];

		for (int copies = 1; copies <= 2; copies++) {
			reset();
			for (int c = 0; c < copies; c++) {
				uint8_t *f = sbp(work, c) + fields[i].off;
				put_le32(f, fields[i].rel ? get_le32(f) + fields[i].val : fields[i].val);
				fix_sb_crc(work, c);
			}
			snprintf(what, sizeof(what), "superblock %s (%s)", fields[i].what,
				 copies == 1 ? "first copy" : "both copies");
			if (copies == 1)
				expect_mount(what, OK, 0, NULL);
			else
				expect_mount(what, REFUSED, EINVAL, "superblock");
		}
	}

	/* a device shorter than the filesystem */
	{
		struct f2fs_sb *sb;
		struct f2fs_mount_opts o = { .readonly = true, .log = log_capture };
		size_t saved = img_len;

		reset();
		loglen = 0;
		int err = f2fs_mount_mem(work, 8u << 20, &o, &sb);
		CHECK(err == -EINVAL, "image truncated to 8 MiB: mount = %d, want -EINVAL\n%s", err,
		      logbuf);
		if (!err)
			f2fs_umount(sb);
		err = f2fs_mount_mem(work, 3000, &o, &sb);
		CHECK(err < 0, "3000-byte image: mount = %d", err);
		if (!err)
			f2fs_umount(sb);
		err = f2fs_mount_mem(work, 0, &o, &sb);
		CHECK(err < 0, "empty image: mount = %d", err);
		if (!err)
			f2fs_umount(sb);
		img_len = saved;
	}
}

static void cp_cases(void)
{
	reset();
	bool v0 = pack_valid(work, 0), v1 = pack_valid(work, 1);
	int cur = current_pack(work);

	CHECK(v0 || v1, "pristine image has no valid checkpoint pack");
	printf("checkpoint packs valid: %d %d, current %d\n", v0, v1, cur + 1);

	/* both packs: bad CRC */
	for (int p = 0; p < 2; p++)
		blk(work, cp_pack_blk(work, p))[CP_ELAPSED_TIME] ^= 0xff;
	expect_mount("bad CRC in both checkpoint packs", REFUSED, EINVAL, "checkpoint");

	/* the last block of the current pack (the cp copy) bad */
	reset();
	{
		uint32_t b = cp_pack_blk(work, cur);
		uint32_t total = get_le32(blk(work, b) + CP_PACK_TOTAL_BLOCK_COUNT);
		blk(work, b + total - 1)[CP_ELAPSED_TIME] ^= 0xff;
		if (v0 && v1)
			expect_mount("bad CRC in the last block of the current pack", OK, 0, NULL);
		blk(work, cp_pack_blk(work, !cur))[CP_ELAPSED_TIME] ^= 0xff;
		expect_mount("current pack's copy and other pack bad", REFUSED, EINVAL, "checkpoint");
	}

	/* only the current pack bad: falls back to the older one */
	if (v0 && v1) {
		reset();
		blk(work, cp_pack_blk(work, cur))[CP_ELAPSED_TIME] ^= 0xff;
		expect_mount("bad CRC in the current checkpoint pack", OK, 0, NULL);
	} else {
		SKIP("only one valid checkpoint pack; fallback case not tested");
	}

	/* per-field corruptions of every valid pack, CRCs recomputed */
	static const struct {
		const char *what;
		int off;
		uint32_t val;
		bool rel;
		int want;	/* errno */
	} fields[] = {
		/* validate_checkpoint rejects the pack: no valid pack -> EINVAL */
		{ "cp_pack_total_block_count huge", CP_PACK_TOTAL_BLOCK_COUNT, 0x7fffffff, false, EINVAL },
		{ "cp_pack_total_block_count 0", CP_PACK_TOTAL_BLOCK_COUNT, 0, false, EINVAL },
		{ "checksum_offset 4093", CP_CHECKSUM_OFFSET, 4093, false, EINVAL },
		/* f2fs_sanity_check_ckpt: EFSCORRUPTED */
		{ "nat_ver_bitmap_bytesize + 8", CP_NAT_VER_BITMAP_BYTESIZE, 8, true, EUCLEAN },
		{ "nat_ver_bitmap_bytesize 0", CP_NAT_VER_BITMAP_BYTESIZE, 0, false, EUCLEAN },
		{ "sit_ver_bitmap_bytesize + 8", CP_SIT_VER_BITMAP_BYTESIZE, 8, true, EUCLEAN },
		{ "cur_data_segno[0] huge", CP_CUR_DATA_SEGNO, 0xffff0000u, false, EUCLEAN },
		{ "cur_node_segno[0] huge", CP_CUR_NODE_SEGNO, 0x00ffffffu, false, EUCLEAN },
		{ "cur_node_segno[1] = cur_node_segno[0]", CP_CUR_NODE_SEGNO + 4, 0, false, EUCLEAN },
		{ "cp_pack_start_sum huge", CP_PACK_START_SUM, 0x10000, false, EUCLEAN },
		{ "user_block_count huge", CP_USER_BLOCK_COUNT, 0xfffffff0u, false, EUCLEAN },
		{ "valid_block_count > user_block_count", CP_VALID_BLOCK_COUNT, 0xfffffff0u, false,
		  EUCLEAN },
	};
	for (size_t i = 0; i < ARRAY_SIZE(fields); i++) {
		char what[128];

		reset();
		for (int p = 0; p < 2; p++) {
			if (!pack_valid(pristine, p))
				continue;
			uint32_t b = cp_pack_blk(work, p);
			uint32_t total = get_le32(blk(work, b) + CP_PACK_TOTAL_BLOCK_COUNT);
			/* the same change in the pack's first and last block */
			uint32_t copies[2] = { b, b + total - 1 };
			for (int k = 0; k < 2; k++) {
				uint8_t *c = blk(work, copies[k]);
				uint8_t *f = c + fields[i].off;
				uint32_t v = fields[i].val;

				if (fields[i].off == CP_CUR_NODE_SEGNO + 4 && !fields[i].rel)
					v = get_le32(c + CP_CUR_NODE_SEGNO);
				v = fields[i].rel ? get_le32(f) + v : v;
				if (fields[i].off == CP_CHECKSUM_OFFSET) {
					put_le32(f, v);	/* leave the CRC where it was */
					continue;
				}
				if (fields[i].off == CP_USER_BLOCK_COUNT ||
				    fields[i].off == CP_VALID_BLOCK_COUNT)
					put_le64(f, v);
				else
					put_le32(f, v);
				fix_cp_crc(work, copies[k]);
			}
		}
		snprintf(what, sizeof(what), "checkpoint %s (all valid packs)", fields[i].what);
		expect_mount(what, REFUSED, fields[i].want, "checkpoint");
	}
}

int main(void)
{
	char tree[] = "/tmp/f2fs-unit-tree-XXXXXX";

	if (make_tree(tree)) {
		SKIP("cannot build the source tree in %s", tree);
		return check_done("test_parse");
	}
	pristine = make_image("extra_attr,inode_checksum,inode_crtime,sb_checksum", IMG_MB, tree,
			      &img_len);
	run_quiet("rm -rf '%s'", tree);
	if (!pristine)
		return check_done("test_parse");
	work = malloc(img_len);
	if (!work)
		return 1;

	check_pristine(pristine);
	sb_cases();
	cp_cases();

	/* the default feature set, no tree: root and statfs only */
	size_t len2 = 0;
	uint8_t *plain = make_image(NULL, 64, NULL, &len2);
	if (plain) {
		struct f2fs_sb *sb;
		struct f2fs_stat st;
		size_t saved = img_len;

		img_len = len2;
		int err = mount_buf(plain, &sb);
		CHECK(err == 0, "default mkfs image does not mount: %d\n%s", err, logbuf);
		if (!err) {
			CHECK(f2fs_getattr(sb, f2fs_root_ino(sb), &st) == 0 && S_ISDIR(st.mode) &&
			      st.nlink == 2, "default image root: mode %o nlink %u", st.mode, st.nlink);
			f2fs_umount(sb);
		}
		img_len = saved;
		free(plain);
	}
	free(work);
	free(pristine);
	return check_done("test_parse");
}
