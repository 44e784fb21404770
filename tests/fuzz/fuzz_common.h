/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the image fuzz targets share: seed images held once, read-only, with
 * a copy-on-write overlay each (tests/lib/testdev.h), the patch-list input
 * format that turns a few bytes into a mutated image, and the bounded walk.
 *
 * Input format (all targets that take an image):
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
 * A target may take a tail of its own after the patches (fuzz_split).
 */
#ifndef F2FS_FUZZ_COMMON_H
#define F2FS_FUZZ_COMMON_H

#include "f2fs.h"
#include "testdev.h"

struct fuzz_seed {
	const uint8_t *base;	/* mmap()ed seed file, private; changed only by fuzz_crash_seeds */
	size_t len;
	struct ovl *ovl;
	uint32_t *hot, nhot;	/* metadata-area and node blocks */
	uint32_t *any, nany;	/* every non-zero block */
	uint32_t magic[16];
};

/* Load the seeds named by F2FS_FUZZ_SEEDS (colon-separated); exits on failure. */
void fuzz_load_seeds(const char *target);
int fuzz_nr_seeds(void);
/*
 * Pick the seed named by data[0], patch data[1..size) into its overlay
 * (the overlay starts from the base: the previous input's blocks are gone).
 */
struct fuzz_seed *fuzz_prepare(const uint8_t *data, size_t size);
/*
 * Turn every seed into the state a crash leaves after workload (run on a
 * writable mount of the seed): the seed's base becomes the device as it
 * was when workload returned, before any unmount, and the blocks workload
 * wrote become the seed's "hot" blocks, the ones mutations aim at.
 */
void fuzz_crash_seeds(const char *target, void (*workload)(struct f2fs_sb *sb));
/* Messages of the mounts go nowhere (the walk provokes thousands). */
void fuzz_quiet_log(void *arg, enum f2fs_log_level lvl, const char *msg);
/*
 * The slabs every mount of this process shares (fuzz_load_seeds makes
 * them): a mount per input would otherwise map and zero 2 MiB per block
 * pool, a quarter of the read-write target's time.
 */
struct f2fs_slab_cache *fuzz_slabs(void);

/* Limits of one walk: keeps one input's cost bounded whatever the image claims. */
struct fuzz_walk_limits {
	uint32_t max_depth, max_entries, max_dirs;
	uint32_t max_lookups_per_dir;	/* names looked up (and visited) per directory */
	uint64_t max_read_bytes;	/* file contents read, over all files */
	uint32_t max_file_bytes;	/* per file */
};
extern const struct fuzz_walk_limits fuzz_walk_default;
/* Walk every directory, inode, xattr and symlink reachable from the root. */
void fuzz_walk(struct f2fs_sb *sb, const struct fuzz_walk_limits *lim);

/*
 * The read-write targets' cycle and rules, for the input (data, size) on
 * seed s: mount read-write, walk, body(sb, true), unmount; mount again
 * read-only, body(sb, false), walk, unmount.  Aborts, naming target, when
 * a refused mount wrote anything, a superblock block (0 or 1) was
 * written, a mount that saw nothing wrong (need_fsck clear, unmount
 * without error) left an image that does not mount again, or, for an
 * unpatched seed (size <= 1), the mount failed or was not clean.
 */
void fuzz_rw_cycle(const char *target, struct fuzz_seed *s, const uint8_t *data, size_t size,
		   const struct fuzz_walk_limits *lim,
		   void (*body)(struct f2fs_sb *sb, bool writable, bool pristine));

#endif
