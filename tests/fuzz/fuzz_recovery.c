// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: roll-forward recovery over mutated chains of fsync()ed
 * nodes.
 *
 * At start-up every seed is mounted read-write and given a workload of
 * writes, each file fsync()ed (no checkpoint after them), and the device
 * is taken as it was then: a crash after the last fsync.  Those images
 * hold chains of direct nodes with fsync and dentry marks in the warm node
 * log, which the next writable mount replays.  The inputs are patch lists
 * over them (fuzz_common.h); the blocks the workload wrote are the ones
 * mutations aim at.  Each input is mounted read-write (recovery runs),
 * walked and unmounted, held to the read-write target's rules (fuzz_rw.c):
 * a refused mount writes nothing, superblocks are never written, and what
 * a mount that saw nothing wrong leaves mounts again.  Unmutated, the
 * fsync()ed data must be back after recovery.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FILE_A_LEN	(3 * F2FS_BLKSIZE + 700)

static const struct fuzz_walk_limits rec_walk = {
	.max_depth = 8, .max_entries = 500, .max_dirs = 64, .max_lookups_per_dir = 16,
	.max_read_bytes = 64 << 10, .max_file_bytes = 16 << 10,
};

static uint8_t pattern(uint64_t off)
{
	return (uint8_t)(off * 7 + 3);
}

static void fill(uint8_t *buf, size_t len, uint64_t off)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = pattern(off + i);
}

static void workload(struct f2fs_sb *sb)
{
	static uint8_t buf[FILE_A_LEN];
	const struct f2fs_cred cred = { .umask = 022 };
	uint32_t root = f2fs_root_ino(sb);
	struct f2fs_stat a, d, x, old;
	struct f2fs_setattr sa = { .valid = F2FS_SET_SIZE, .size = 4096 };

	/*
	 * A file in a directory newer than the checkpoint is fsync()ed by a
	 * checkpoint (its parent must be found); what follows it lives only
	 * in fsync()ed nodes.
	 */
	fill(buf, sizeof(buf), 0);
	if (f2fs_mkdir(sb, root, "fs-d", 4, 0755, &cred, &d) == 0 &&
	    f2fs_mknod(sb, d.ino, "x", 1, S_IFREG | 0644, 0, 0, &cred, &x) == 0) {
		bool opened = f2fs_open(sb, x.ino, O_RDWR) == 0;

		f2fs_write(sb, x.ino, "inline", 6, 0);
		f2fs_fsync(sb, x.ino, false);
		if (opened)	/* FUSE releases only what it opened */
			f2fs_release(sb, x.ino);
	}
	if (f2fs_mknod(sb, root, "fs-a", 4, S_IFREG | 0644, 0, 0, &cred, &a) == 0) {
		bool opened = f2fs_open(sb, a.ino, O_RDWR) == 0;

		f2fs_write(sb, a.ino, buf, 2 * F2FS_BLKSIZE, 0);
		f2fs_fsync(sb, a.ino, false);
		f2fs_write(sb, a.ino, buf + 2 * F2FS_BLKSIZE, sizeof(buf) - 2 * F2FS_BLKSIZE,
			   2 * F2FS_BLKSIZE);
		f2fs_setxattr(sb, a.ino, "user.rec", "value", 5, 0);
		f2fs_fsync(sb, a.ino, false);
		if (opened)
			f2fs_release(sb, a.ino);
	}
	if (f2fs_lookup(sb, root, "blocks40k", 9, &old) == 0) {
		bool opened = f2fs_open(sb, old.ino, O_RDWR) == 0;

		f2fs_setattr(sb, old.ino, &sa, &old);
		f2fs_write(sb, old.ino, buf, 100, 8192);
		f2fs_fsync(sb, old.ino, true);
		if (opened)
			f2fs_release(sb, old.ino);
	}
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_load_seeds("fuzz_recovery");
	fuzz_crash_seeds("fuzz_recovery", workload);
	return 0;
}

static void fail(const char *what)
{
	fprintf(stderr, "fuzz_recovery: %s\n", what);
	abort();
}

/* The unmutated crash states: recovery brings back what was fsync()ed. */
static void check_recovered(struct f2fs_sb *sb, bool writable, bool pristine)
{
	static uint8_t got[FILE_A_LEN], want[FILE_A_LEN];
	struct f2fs_stat a;

	if (!pristine)
		return;
	if (f2fs_lookup(sb, f2fs_root_ino(sb), "fs-a", 4, &a))
		fail("an fsync()ed file is not back after recovery");
	fill(want, sizeof(want), 0);
	if (a.size != FILE_A_LEN || f2fs_read(sb, a.ino, got, sizeof(got), 0) != FILE_A_LEN ||
	    memcmp(got, want, sizeof(got)))
		fail("an fsync()ed file's data is not back after recovery");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_seed *s = fuzz_prepare(data, size);

	if (s)
		fuzz_rw_cycle("fuzz_recovery", s, data, size, &rec_walk, check_recovered);
	return 0;
}
