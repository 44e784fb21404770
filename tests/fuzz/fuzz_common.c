// SPDX-License-Identifier: GPL-2.0
/*
 * Seeds, patches and the bounded walk shared by the image fuzz targets
 * (fuzz_common.h).
 */
#include <fcntl.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz_common.h"

#define MAX_SEEDS	16
#define MAX_TOUCHED	1024

static struct fuzz_seed seeds[MAX_SEEDS];
static int nseeds;
static uint32_t touched[MAX_TOUCHED];
static int ntouched;
static struct f2fs_slab_cache *slabs;

struct f2fs_slab_cache *fuzz_slabs(void)
{
	return slabs;
}

const struct fuzz_walk_limits fuzz_walk_default = {
	.max_depth = 16, .max_entries = 2000, .max_dirs = 256, .max_lookups_per_dir = 64,
	.max_read_bytes = 256 << 10, .max_file_bytes = 64 << 10,
};

/*
 * The driver's messages are dropped while fuzzing; F2FS_FUZZ_LOG=1 prints
 * them, to see why a reproduced input was refused or what it wrote.
 */
void fuzz_quiet_log(void *arg, enum f2fs_log_level lvl, const char *msg)
{
	static int show = -1;

	if (show < 0) {
		const char *env = getenv("F2FS_FUZZ_LOG");

		show = env && *env && *env != '0';
	}
	if (show)
		fprintf(stderr, "f2fs[%d]: %s\n", (int)lvl, msg);
}

static bool block_is_zero(const uint8_t *b)
{
	for (size_t i = 0; i < F2FS_BLKSIZE; i += 8)
		if (get_le64(b + i))
			return false;
	return true;
}

static const char *seed_path[MAX_SEEDS];

static void add_seed(const char *target, const char *path)
{
	struct fuzz_seed *s = &seeds[nseeds];
	struct stat st;
	const uint8_t *sb;
	uint32_t main_blk, nat_segs, nblocks;
	int fd = open(path, O_RDONLY);

	/* mmap: holes of a sparse seed cost no memory, and the seeds' pages are shared */
	if (fd < 0 || fstat(fd, &st) || st.st_size < 4 * F2FS_BLKSIZE) {
		fprintf(stderr, "%s: cannot open seed %s\n", target, path);
		exit(1);
	}
	seed_path[nseeds] = strdup(path);
	s->len = (size_t)st.st_size - (size_t)st.st_size % F2FS_BLKSIZE;
	/* writable and private: a crash seed changes its few blocks in place (fuzz_crash_seeds) */
	s->base = mmap(NULL, s->len, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	close(fd);
	if (s->base == MAP_FAILED) {
		fprintf(stderr, "%s: cannot map seed %s\n", target, path);
		exit(1);
	}
	nblocks = (uint32_t)(s->len / F2FS_BLKSIZE);
	s->ovl = ovl_new(s->base, s->len);
	s->hot = malloc(sizeof(uint32_t) * nblocks);
	s->any = malloc(sizeof(uint32_t) * nblocks);
	if (!s->ovl || !s->hot || !s->any)
		exit(1);
	sb = s->base + F2FS_SUPER_OFFSET;
	main_blk = get_le32(sb + SB_MAIN_BLKADDR);
	nat_segs = get_le32(sb + SB_SEGMENT_COUNT_NAT);
	for (uint32_t b = 0; b < nblocks; b++) {
		const uint8_t *p = s->base + (size_t)b * F2FS_BLKSIZE;

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

void fuzz_load_seeds(const char *target)
{
	const char *env = getenv("F2FS_FUZZ_SEEDS");
	char *list, *save = NULL;

	if (!env || !*env) {
		fprintf(stderr, "%s: set F2FS_FUZZ_SEEDS to a colon-separated list of "
				"seed images (tests/fuzz/run.sh makes them)\n", target);
		exit(1);
	}
	/*
	 * Each input mounts, allocates about a megabyte and frees it; with
	 * glibc's default trimming every input would give the heap back to the
	 * kernel and fault it in again, which costs more than the input.
	 */
	mallopt(M_TRIM_THRESHOLD, 256 << 20);
	mallopt(M_MMAP_THRESHOLD, 64 << 20);
	/* a mount's three pools and the pages of the walk's files */
	if (!slabs)
		slabs = f2fs_slab_cache_new(8);
	list = strdup(env);
	for (char *p = strtok_r(list, ":", &save); p && nseeds < MAX_SEEDS;
	     p = strtok_r(NULL, ":", &save))
		add_seed(target, p);
	free(list);
}

void fuzz_crash_seeds(const char *target, void (*workload)(struct f2fs_sb *sb))
{
	struct f2fs_mount_opts opts = { .log = fuzz_quiet_log, .log_level = F2FS_LOG_DEBUG,
					.slabs = slabs };

	for (int i = 0; i < nseeds; i++) {
		struct fuzz_seed *s = &seeds[i];
		struct f2fs_dev *dev;
		struct f2fs_sb *sb;
		uint32_t n, b;

		ovl_reset(s->ovl);
		if (ovl_open_dev(s->ovl, false, &dev) || f2fs_mount_dev(dev, &opts, &sb)) {
			fprintf(stderr, "%s: seed %s does not mount read-write\n", target,
				seed_path[i]);
			exit(1);
		}
		workload(sb);
		/* the crash: what the device holds now, before the unmount writes anything */
		n = ovl_nr_private(s->ovl);
		s->nhot = 0;
		for (uint32_t k = 0; k < n; k++) {
			const uint8_t *p = ovl_private(s->ovl, k, &b);

			memcpy((uint8_t *)s->base + (size_t)b * F2FS_BLKSIZE, p, F2FS_BLKSIZE);
			s->hot[s->nhot++] = b;
		}
		f2fs_umount(sb);
		ovl_reset(s->ovl);
		if (!s->nhot)
			s->hot[s->nhot++] = 0;
	}
}

int fuzz_nr_seeds(void)
{
	return nseeds;
}

/* ---- patches ---- */

static uint8_t *touch(struct fuzz_seed *s, uint32_t b)
{
	int i;

	for (i = 0; i < ntouched; i++)
		if (touched[i] == b)
			break;
	if (i == ntouched) {
		if (ntouched == MAX_TOUCHED)
			return NULL;
		touched[ntouched++] = b;
	}
	return ovl_block(s->ovl, b);
}

/* the superblocks, patched checkpoint blocks and inodes: the kernel's own checksums */
static void fix_checksums(struct fuzz_seed *s)
{
	uint8_t *blk0 = ovl_block(s->ovl, 0);
	const uint8_t *sb = blk0 + F2FS_SUPER_OFFSET;
	uint32_t cp = get_le32(sb + SB_CP_BLKADDR);
	uint32_t seed;

	/* the two superblock copies, at 1 KiB into blocks 0 and 1 */
	for (uint32_t b = 0; b < 2; b++) {
		uint8_t *raw = ovl_block(s->ovl, b) + F2FS_SUPER_OFFSET;

		put_le32(raw + SB_CRC, f2fs_chksum(raw, SB_CRC));
	}
	seed = f2fs_crc32(0xffffffffu, sb + SB_UUID, 16);
	for (int i = 0; i < ntouched; i++) {
		uint32_t b = touched[i];
		uint8_t *p = ovl_block(s->ovl, b);

		if (!p)
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
}

static void apply(struct fuzz_seed *s, const uint8_t *d, size_t n)
{
	uint32_t nblocks = ovl_nr_blocks(s->ovl);
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
			b = sel % nblocks;
		else if (op & 0x40)
			b = s->any[sel % s->nany];
		else
			b = s->hot[sel % s->nhot];
		p = touch(s, b);
		if (!p)
			break;
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

			if (from != b)
				memcpy(p, ovl_peek(s->ovl, from), F2FS_BLKSIZE);
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

struct fuzz_seed *fuzz_prepare(const uint8_t *data, size_t size)
{
	struct fuzz_seed *s;

	if (!nseeds)
		return NULL;
	s = &seeds[size ? data[0] % 64 % nseeds : 0];
	ovl_reset(s->ovl);
	ntouched = 0;
	if (size > 1)
		apply(s, data + 1, size - 1);
	if (size && (data[0] & 0x80))
		fix_checksums(s);
	/* the counters speak of the mount's writes, not of the patches */
	ovl_reset_counters(s->ovl);
	return s;
}

/* ---- the walk ---- */

struct walk {
	struct f2fs_sb *sb;
	const struct fuzz_walk_limits *lim;
	uint32_t entries;
	uint64_t bytes;
	uint32_t seen[4096];
	uint32_t nseen;
	uint8_t buf[16384];
};

struct names {
	char *buf;
	size_t len, cap;
	uint32_t count, max;
};

static int collect(void *ctx, const char *name, size_t len, uint32_t ino, unsigned int ft,
		   uint64_t next_off)
{
	struct names *n = ctx;

	if (len > F2FS_NAME_LEN * 4 || n->count >= n->max)
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

static void visit_file(struct walk *w, uint32_t ino)
{
	uint64_t off = 0;

	/* the batched walk of every direct node first: the reads then map from its runs */
	f2fs_precache_extents(w->sb, ino);
	while (w->bytes < w->lim->max_read_bytes && off < w->lim->max_file_bytes) {
		ssize_t r = f2fs_read(w->sb, ino, w->buf, sizeof(w->buf), off);

		if (r <= 0)
			break;
		off += (uint64_t)r;
		w->bytes += (uint64_t)r;
	}
	/* the tail of a large file goes through other nodes than its head */
	if (off >= w->lim->max_file_bytes)
		f2fs_read(w->sb, ino, w->buf, sizeof(w->buf), 4ull << 20);
}

static void visit_dir(struct walk *w, uint32_t dir, uint32_t depth)
{
	struct names n = { .max = w->lim->max_entries };

	if (depth > w->lim->max_depth || w->entries >= w->lim->max_entries ||
	    w->nseen >= w->lim->max_dirs || w->nseen >= 4096)
		return;
	for (uint32_t i = 0; i < w->nseen; i++)
		if (w->seen[i] == dir)
			return;
	w->seen[w->nseen++] = dir;
	f2fs_readdir(w->sb, dir, 0, collect, &n);
	/*
	 * Every name is listed, a spread of them looked up: a lookup costs a
	 * hash-bucket search, and a large directory's names all lead through
	 * the same code.
	 */
	uint32_t stride = n.count / w->lim->max_lookups_per_dir + 1;

	for (size_t p = 0, k = 0; p < n.len && w->entries < w->lim->max_entries; k++) {
		size_t len = (uint8_t)n.buf[p] | ((size_t)(uint8_t)n.buf[p + 1] << 8);
		const char *name = n.buf + p + 2;
		struct f2fs_stat st;

		p += 2 + len;
		w->entries++;
		if (k % stride)
			continue;
		if ((len == 1 && name[0] == '.') || (len == 2 && name[0] == '.' && name[1] == '.'))
			continue;
		if (f2fs_lookup(w->sb, dir, name, len, &st))
			continue;
		f2fs_getattr(w->sb, st.ino, &st);
		visit_xattrs(w, st.ino);
		if (S_ISDIR(st.mode))
			visit_dir(w, st.ino, depth + 1);
		else if (S_ISREG(st.mode))
			visit_file(w, st.ino);
		else if (S_ISLNK(st.mode))
			f2fs_readlink(w->sb, st.ino, (char *)w->buf, sizeof(w->buf));
	}
	free(n.buf);
}

void fuzz_walk(struct f2fs_sb *sb, const struct fuzz_walk_limits *lim)
{
	static struct walk w;
	struct f2fs_statfs sf;
	struct f2fs_stat st;

	memset(&w, 0, offsetof(struct walk, buf));
	w.sb = sb;
	w.lim = lim;
	if (f2fs_getattr(sb, f2fs_root_ino(sb), &st) == 0)
		visit_xattrs(&w, f2fs_root_ino(sb));
	visit_dir(&w, f2fs_root_ino(sb), 0);
	f2fs_statfs(sb, &sf);
	for (uint32_t nid = 0; nid < 16; nid++)
		f2fs_getattr(sb, nid, &st);
	f2fs_getattr(sb, 0xffffffffu, &st);
}

/* ---- the read-write cycle ---- */

static void rw_fail(const char *target, const char *what, const uint8_t *data, size_t size)
{
	fprintf(stderr, "%s: %s (input of %zu bytes, seed %d)\n", target, what, size,
		size ? data[0] % 64 % nseeds : 0);
	abort();
}

void fuzz_rw_cycle(const char *target, struct fuzz_seed *s, const uint8_t *data, size_t size,
		   const struct fuzz_walk_limits *lim,
		   void (*body)(struct f2fs_sb *sb, bool writable, bool pristine))
{
	struct f2fs_mount_opts opts = { .log = fuzz_quiet_log, .log_level = F2FS_LOG_DEBUG,
					.cache_size = 1u << 20, .slabs = slabs };
	bool pristine = size <= 1, clean;
	struct f2fs_dev *dev;
	struct f2fs_sb *sb = NULL;
	int err;

	if (ovl_open_dev(s->ovl, false, &dev))
		return;
	err = f2fs_mount_dev(dev, &opts, &sb);
	if (err) {
		if (pristine)
			rw_fail(target, "an unpatched seed does not mount read-write", data, size);
		if (ovl_written_blocks(s->ovl))
			rw_fail(target, "a refused mount wrote to the image", data, size);
		return;
	}
	fuzz_walk(sb, lim);
	body(sb, true, pristine);
	clean = !atomic_load(&sb->need_fsck);
	err = f2fs_umount(sb);
	clean = clean && !err;
	if (ovl_lowest_write(s->ovl) < 2)
		rw_fail(target, "a superblock was written", data, size);
	if (pristine && !clean)
		rw_fail(target, "an unpatched seed did not unmount cleanly", data, size);

	/* what a mount that saw nothing wrong wrote must mount again */
	opts.readonly = true;
	if (ovl_open_dev(s->ovl, true, &dev))
		return;
	sb = NULL;
	err = f2fs_mount_dev(dev, &opts, &sb);
	if (err && clean)
		rw_fail(target, "the image a clean mount left does not mount again", data, size);
	if (!err) {
		body(sb, false, pristine);
		fuzz_walk(sb, lim);
		f2fs_umount(sb);
	}
}
