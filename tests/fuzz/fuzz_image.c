// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for the image parser: f2fs_mount_mem + a full read-only
 * walk of whatever mounts.
 *
 * Design.  A valid f2fs image is at least ~52 MiB (mkfs.f2fs 1.15), far too
 * big for libFuzzer to mutate usefully.  So the fuzz input is not an image
 * but a compact patch list applied to one of a few fixed seed images held in
 * memory (made by run.sh with mkfs.f2fs + sload.f2fs and named by
 * F2FS_FUZZ_SEEDS, a colon-separated list of image files):
 *
 *   byte 0      bits 0-5: which seed (mod the number of seeds)
 *               bit 7:    after patching, recompute the superblock CRCs, the
 *                         CRC of every patched checkpoint block and the
 *                         inode checksum of every patched inode, so that
 *                         mutations get past the checksums to the checks
 *                         behind them
 *   then records until the input ends:
 *     u8  op     bits 0-2: 0 write bytes, 1 xor bytes, 2 write a "magic"
 *                          le32 (0, 1, ~0, 0x7fffffff, a main/NAT/SIT/CP
 *                          address, the block count, max nid...) chosen by
 *                          the first data byte, 3 copy another block over
 *                          this one, 4 zero the block, 5 add the first data
 *                          byte to a le32, 6/7 as 0
 *                bit 6: the block selector indexes every non-zero block of
 *                       the seed (data included) instead of the "hot" list
 *                       (metadata area blocks and node blocks)
 *                bit 7: the block selector is a raw block number
 *     u16 block selector (le), u16 offset in the block (le, mod 4096)
 *     u8  n, then n data bytes (clipped at the end of the input)
 *
 * Patches go to a working copy of the seed; after each run the touched
 * blocks are restored from the pristine copy, so a run costs a few block
 * copies rather than a 64 MiB memcpy.  The empty patch list mounts the
 * pristine seed, which must succeed (it is checked: a seed that stops
 * mounting is a bug too).  Inputs are small; run.sh passes -max_len=1024.
 *
 * On a successful mount every directory is walked from the root with
 * f2fs_readdir (depth <= 64, <= 20000 entries, each directory once); every
 * entry gets f2fs_lookup + f2fs_getattr, files are read in full (<= 16 MiB
 * in all), symlinks read with f2fs_readlink, xattrs listed and each one
 * fetched; then f2fs_statfs, a few f2fs_getattr on raw nids, f2fs_umount.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "f2fs.h"

#define MAX_SEEDS	16
#define MAX_TOUCHED	4096
#define MAX_DEPTH	64
#define MAX_ENTRIES	20000
#define MAX_READ_BYTES	(16u << 20)
#define MAX_DIR_SEEN	4096

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct seed {
	uint8_t *pristine, *work;
	size_t len;
	uint32_t nblocks;
	uint32_t *hot, nhot;		/* metadata-area and node blocks */
	uint32_t *any, nany;		/* every non-zero block */
	uint32_t magic[16];
};

static struct seed seeds[MAX_SEEDS];
static int nseeds;
static uint32_t touched[MAX_TOUCHED];
static int ntouched;

static void quiet_log(void *arg, enum f2fs_log_level lvl, const char *msg)
{
	(void)arg;
	(void)lvl;
	(void)msg;
}

static uint8_t *load_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) || (n = ftell(f)) <= 0 || fseek(f, 0, SEEK_SET)) {
		fclose(f);
		return NULL;
	}
	buf = malloc((size_t)n);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	*len = (size_t)n;
	return buf;
}

static bool block_is_zero(const uint8_t *b)
{
	static const uint8_t zero[F2FS_BLKSIZE];

	return memcmp(b, zero, sizeof(zero)) == 0;
}

static void add_seed(const char *path)
{
	struct seed *s = &seeds[nseeds];
	const uint8_t *sb;
	uint32_t main_blk, nat_segs;

	s->pristine = load_file(path, &s->len);
	if (!s->pristine || s->len < 4 * F2FS_BLKSIZE) {
		fprintf(stderr, "fuzz_image: cannot load seed %s\n", path);
		exit(1);
	}
	s->len -= s->len % F2FS_BLKSIZE;
	s->nblocks = (uint32_t)(s->len / F2FS_BLKSIZE);
	s->work = malloc(s->len);
	s->hot = malloc(sizeof(uint32_t) * s->nblocks);
	s->any = malloc(sizeof(uint32_t) * s->nblocks);
	if (!s->work || !s->hot || !s->any)
		exit(1);
	memcpy(s->work, s->pristine, s->len);
	sb = s->pristine + F2FS_SUPER_OFFSET;
	main_blk = get_le32(sb + SB_MAIN_BLKADDR);
	nat_segs = get_le32(sb + SB_SEGMENT_COUNT_NAT);
	for (uint32_t b = 0; b < s->nblocks; b++) {
		const uint8_t *p = s->pristine + (size_t)b * F2FS_BLKSIZE;

		if (block_is_zero(p))
			continue;
		s->any[s->nany++] = b;
		/* metadata, or a node block: footer nid and ino plausible */
		if (b < main_blk || (get_le32(p + NF_NID) && get_le32(p + NF_INO) &&
				     get_le32(p + NF_INO) < (nat_segs << 17)))
			s->hot[s->nhot++] = b;
	}
	if (!s->nhot)
		s->hot[s->nhot++] = 0;
	if (!s->nany)
		s->any[s->nany++] = 0;
	uint32_t m[] = { 0, 1, 0xffffffffu, 0x7fffffffu, 0x80000000u, 3,
			 main_blk, main_blk - 1, get_le32(sb + SB_NAT_BLKADDR),
			 get_le32(sb + SB_SIT_BLKADDR), get_le32(sb + SB_CP_BLKADDR),
			 get_le32(sb + SB_SSA_BLKADDR), (uint32_t)get_le64(sb + SB_BLOCK_COUNT),
			 (uint32_t)get_le64(sb + SB_BLOCK_COUNT) - 1, (nat_segs / 2) * 512 * 455,
			 4096 };
	memcpy(s->magic, m, sizeof(m));
	nseeds++;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *env = getenv("F2FS_FUZZ_SEEDS");
	char *list, *save = NULL;

	(void)argc;
	(void)argv;
	if (!env || !*env) {
		fprintf(stderr, "fuzz_image: set F2FS_FUZZ_SEEDS to a colon-separated list of "
				"seed images (tests/fuzz/run.sh makes them)\n");
		exit(1);
	}
	list = strdup(env);
	for (char *p = strtok_r(list, ":", &save); p && nseeds < MAX_SEEDS;
	     p = strtok_r(NULL, ":", &save))
		add_seed(p);
	free(list);
	return 0;
}

/* ---- checksum fix-ups (the same definitions the kernel uses) ---- */

static void touch(uint32_t b)
{
	for (int i = 0; i < ntouched; i++)
		if (touched[i] == b)
			return;
	if (ntouched < MAX_TOUCHED)
		touched[ntouched++] = b;
}

static void fix_checksums(struct seed *s)
{
	uint8_t *img = s->work;
	const uint8_t *sb = img + F2FS_SUPER_OFFSET;
	uint32_t cp = get_le32(sb + SB_CP_BLKADDR);
	uint8_t uuid[16];

	for (int c = 0; c < 2; c++) {
		uint8_t *raw = img + (size_t)c * F2FS_BLKSIZE + F2FS_SUPER_OFFSET;

		put_le32(raw + SB_CRC, f2fs_chksum(raw, SB_CRC));
	}
	memcpy(uuid, sb + SB_UUID, 16);
	uint32_t seed = f2fs_crc32(0xffffffffu, uuid, 16);

	for (int i = 0; i < ntouched; i++) {
		uint32_t b = touched[i];
		uint8_t *p = img + (size_t)b * F2FS_BLKSIZE;

		if (b >= s->nblocks)
			continue;
		if (b >= cp && b < cp + 1024) {
			uint32_t cso = get_le32(p + CP_CHECKSUM_OFFSET);

			if (cso >= CP_MIN_CHKSUM_OFFSET && cso <= CP_CHKSUM_OFFSET_DEFAULT)
				put_le32(p + cso, f2fs_chksum(p, cso));
			continue;
		}
		/* an inode: footer nid == ino, extra attrs large enough to hold the checksum */
		if (get_le32(p + NF_NID) && get_le32(p + NF_NID) == get_le32(p + NF_INO) &&
		    (p[I_INLINE] & F2FS_EXTRA_ATTR) &&
		    get_le16(p + I_EXTRA_ISIZE) >= I_INODE_CHECKSUM + 4 - I_EXTRA_ISIZE) {
			uint8_t zero[4] = { 0 };
			uint32_t c = f2fs_crc32(seed, p + NF_INO, 4);

			c = f2fs_crc32(c, p + I_GENERATION, 4);
			c = f2fs_crc32(c, p, I_INODE_CHECKSUM);
			c = f2fs_crc32(c, zero, 4);
			c = f2fs_crc32(c, p + I_INODE_CHECKSUM + 4,
				       F2FS_BLKSIZE - I_INODE_CHECKSUM - 4);
			put_le32(p + I_INODE_CHECKSUM, c);
		}
	}
	touch(0);
}

static void apply(struct seed *s, const uint8_t *d, size_t n)
{
	size_t i = 0;

	while (i + 6 <= n) {
		uint8_t op = d[i];
		uint32_t sel = get_le16(d + i + 1);
		uint32_t off = get_le16(d + i + 3) % F2FS_BLKSIZE;
		size_t len = d[i + 5];
		const uint8_t *arg = d + i + 6;
		uint32_t b;
		uint8_t *p;

		i += 6;
		if (len > n - i)
			len = n - i;
		i += len;
		if (op & 0x80)
			b = sel % s->nblocks;
		else if (op & 0x40)
			b = s->any[sel % s->nany];
		else
			b = s->hot[sel % s->nhot];
		if (ntouched >= MAX_TOUCHED)
			break;
		touch(b);
		p = s->work + (size_t)b * F2FS_BLKSIZE;
		switch (op & 7) {
		case 1:
			for (size_t k = 0; k < len && off + k < F2FS_BLKSIZE; k++)
				p[off + k] ^= arg[k];
			break;
		case 2:
			if (off <= F2FS_BLKSIZE - 4)
				put_le32(p + off, s->magic[(len ? arg[0] : 0) % 16]);
			break;
		case 3: {
			uint32_t from = s->hot[(len >= 2 ? get_le16(arg) : 0) % s->nhot];

			memmove(p, s->work + (size_t)from * F2FS_BLKSIZE, F2FS_BLKSIZE);
			break;
		}
		case 4:
			memset(p, 0, F2FS_BLKSIZE);
			break;
		case 5:
			if (off <= F2FS_BLKSIZE - 4)
				put_le32(p + off, get_le32(p + off) + (uint32_t)(int8_t)(len ? arg[0] : 1));
			break;
		default:
			for (size_t k = 0; k < len && off + k < F2FS_BLKSIZE; k++)
				p[off + k] = arg[k];
			break;
		}
	}
}

static void restore(struct seed *s)
{
	for (int i = 0; i < ntouched; i++) {
		size_t o = (size_t)touched[i] * F2FS_BLKSIZE;

		if (touched[i] < s->nblocks)
			memcpy(s->work + o, s->pristine + o, F2FS_BLKSIZE);
	}
	ntouched = 0;
}

/* ---- the walk ---- */

struct walk {
	struct f2fs_sb *sb;
	uint32_t entries;
	uint64_t bytes;
	uint32_t seen[MAX_DIR_SEEN];
	uint32_t nseen;
	uint8_t buf[65536];
};

struct names {
	char *buf;
	size_t len, cap;
	uint32_t count;
};

static int collect(void *ctx, const char *name, size_t len, uint32_t ino, unsigned int ft,
		   uint64_t next_off)
{
	struct names *n = ctx;

	(void)ino;
	(void)ft;
	(void)next_off;
	if (len > F2FS_NAME_LEN * 4 || n->count >= MAX_ENTRIES)
		return 1;
	if (n->len + len + 2 > n->cap) {
		size_t cap = n->cap ? n->cap * 2 : 4096;
		char *nb;

		while (cap < n->len + len + 2)
			cap *= 2;
		nb = realloc(n->buf, cap);
		if (!nb)
			return 1;
		n->buf = nb;
		n->cap = cap;
	}
	n->buf[n->len++] = (char)(len & 0xff);
	n->buf[n->len++] = (char)(len >> 8);
	memcpy(n->buf + n->len, name, len);
	n->len += len;
	n->count++;
	return 0;
}

static void visit_xattrs(struct walk *w, uint32_t ino)
{
	char list[4096];
	ssize_t n = f2fs_listxattr(w->sb, ino, NULL, 0);

	if (n <= 0)
		return;
	n = f2fs_listxattr(w->sb, ino, list, sizeof(list));
	if (n <= 0 || (size_t)n > sizeof(list))
		return;
	for (ssize_t i = 0; i < n;) {
		size_t l = strnlen(list + i, (size_t)(n - i));

		if (i + (ssize_t)l >= n)
			break;
		ssize_t need = f2fs_getxattr(w->sb, ino, list + i, NULL, 0);
		if (need > 0)
			f2fs_getxattr(w->sb, ino, list + i, w->buf,
				      (size_t)F2FS_MIN(need, (ssize_t)sizeof(w->buf)));
		i += (ssize_t)l + 1;
	}
}

static void visit_dir(struct walk *w, uint32_t dir, int depth)
{
	struct names n = { 0 };

	if (depth > MAX_DEPTH || w->entries >= MAX_ENTRIES)
		return;
	for (uint32_t i = 0; i < w->nseen; i++)
		if (w->seen[i] == dir)
			return;
	if (w->nseen < MAX_DIR_SEEN)
		w->seen[w->nseen++] = dir;
	f2fs_readdir(w->sb, dir, 0, collect, &n);
	for (size_t p = 0; p < n.len && w->entries < MAX_ENTRIES;) {
		size_t len = (uint8_t)n.buf[p] | ((size_t)(uint8_t)n.buf[p + 1] << 8);
		const char *name = n.buf + p + 2;
		struct f2fs_stat st;

		p += 2 + len;
		w->entries++;
		if ((len == 1 && name[0] == '.') || (len == 2 && name[0] == '.' && name[1] == '.'))
			continue;
		if (f2fs_lookup(w->sb, dir, name, len, &st))
			continue;
		f2fs_getattr(w->sb, st.ino, &st);
		visit_xattrs(w, st.ino);
		if (S_ISDIR(st.mode)) {
			visit_dir(w, st.ino, depth + 1);
		} else if (S_ISREG(st.mode)) {
			uint64_t off = 0;

			while (w->bytes < MAX_READ_BYTES) {
				ssize_t r = f2fs_read(w->sb, st.ino, w->buf, sizeof(w->buf), off);

				if (r <= 0)
					break;
				off += (uint64_t)r;
				w->bytes += (uint64_t)r;
			}
		} else if (S_ISLNK(st.mode)) {
			f2fs_readlink(w->sb, st.ino, (char *)w->buf, sizeof(w->buf));
		}
	}
	free(n.buf);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct walk w;
	struct f2fs_mount_opts opts = { .readonly = true, .log = quiet_log,
					.log_level = F2FS_LOG_DEBUG, .cache_size = 1u << 20 };
	struct f2fs_statfs sf;
	struct seed *s;
	struct f2fs_sb *sb = NULL;
	int err;

	if (!nseeds)
		return 0;
	s = &seeds[size ? data[0] % 64 % nseeds : 0];
	if (size > 1)
		apply(s, data + 1, size - 1);
	if (size && (data[0] & 0x80))
		fix_checksums(s);

	err = f2fs_mount_mem(s->work, s->len, &opts, &sb);
	if (size <= 1 && err) {
		fprintf(stderr, "fuzz_image: pristine seed %d does not mount: %d\n",
			(int)(s - seeds), err);
		abort();
	}
	if (!err) {
		memset(&w, 0, sizeof(w));
		w.sb = sb;
		struct f2fs_stat st;

		if (f2fs_getattr(sb, f2fs_root_ino(sb), &st) == 0)
			visit_xattrs(&w, f2fs_root_ino(sb));
		visit_dir(&w, f2fs_root_ino(sb), 0);
		f2fs_statfs(sb, &sf);
		for (uint32_t nid = 0; nid < 16; nid++)
			f2fs_getattr(sb, nid, &st);
		f2fs_getattr(sb, 0xffffffffu, &st);
		f2fs_umount(sb);
	}
	restore(s);
	return 0;
}
