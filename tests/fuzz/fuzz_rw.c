// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: mount a mutated image read-write, make a fixed mix of
 * changes, commit a checkpoint, unmount.
 *
 * The input is a patch list over a seed (fuzz_common.h).  The mount's own
 * writes go to the seed's copy-on-write overlay, which counts them, so the
 * target can hold the driver to what it must never do whatever the image
 * says:
 *
 *  - crash, hang or trip a sanitizer (libFuzzer's own checks);
 *  - write anything when it refused the mount: an image judged
 *    inconsistent at mount time is left exactly as it was;
 *  - write to blocks 0 and 1, the two superblock copies;
 *  - fail to mount again what it wrote, when it saw nothing wrong: a
 *    mount that found no inconsistency (need_fsck clear) and unmounted
 *    cleanly must leave an image that mounts read-only.
 *
 * The pristine seeds must mount read-write and pass all of this too.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>

#include "fuzz_common.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const struct fuzz_walk_limits rw_walk = {
	.max_depth = 8, .max_entries = 500, .max_dirs = 64, .max_lookups_per_dir = 16,
	.max_read_bytes = 64 << 10, .max_file_bytes = 16 << 10,
};

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_load_seeds("fuzz_rw");
	return 0;
}

/* The fixed mix: every kind of change, on new and on existing files. */
static void changes(struct f2fs_sb *sb)
{
	static uint8_t buf[3 * F2FS_BLKSIZE + 100];
	const struct f2fs_cred cred = { .uid = 0, .gid = 0, .umask = 022 };
	uint32_t root = f2fs_root_ino(sb);
	struct f2fs_stat st, dst, old, tmp;
	struct f2fs_setattr sa = { .valid = F2FS_SET_SIZE };

	memset(buf, 'w', sizeof(buf));
	if (f2fs_mknod(sb, root, "fz-new", 6, S_IFREG | 0644, 0, 0, &cred, &st) == 0) {
		bool opened = f2fs_open(sb, st.ino, O_RDWR) == 0;

		f2fs_write(sb, st.ino, buf, 100, 0);		/* inline */
		f2fs_write(sb, st.ino, buf, sizeof(buf), 8192);	/* converted, blocks */
		f2fs_setxattr(sb, st.ino, "user.fz", buf, 64, 0);
		f2fs_fsync(sb, st.ino, false);
		if (opened)	/* FUSE releases only what it opened */
			f2fs_release(sb, st.ino);
	}
	if (f2fs_mkdir(sb, root, "fz-dir", 6, 0755, &cred, &dst) == 0) {
		for (int i = 0; i < 4; i++) {
			char name[16];
			int n = snprintf(name, sizeof(name), "f%d", i);

			f2fs_mknod(sb, dst.ino, name, (size_t)n, S_IFREG | 0644, 0, 0, &cred, &tmp);
		}
		f2fs_symlink(sb, dst.ino, "ln", 2, "../hello", &cred, &tmp);
		f2fs_rename(sb, dst.ino, "f0", 2, root, "fz-moved", 8, 0, NULL);
		f2fs_unlink(sb, dst.ino, "f1", 2);
	}
	/* existing files: whatever the seed (and the mutation) left there */
	if (f2fs_lookup(sb, root, "blocks40k", 9, &old) == 0 && S_ISREG(old.mode)) {
		bool opened = f2fs_open(sb, old.ino, O_RDWR) == 0;

		f2fs_write(sb, old.ino, buf, sizeof(buf), 20000);
		sa.size = 5000;
		f2fs_setattr(sb, old.ino, &sa, &tmp);
		f2fs_fallocate(sb, old.ino, 0, 0, 3 * F2FS_BLKSIZE);
		f2fs_fsync(sb, old.ino, true);
		if (opened)
			f2fs_release(sb, old.ino);
	}
	if (f2fs_lookup(sb, root, "hello", 5, &old) == 0)
		f2fs_link(sb, old.ino, root, "fz-link", 7, &tmp);
	f2fs_unlink(sb, root, "inline3000", 10);
	f2fs_rename(sb, root, "dir", 3, root, "fz-dir2", 7, 0, NULL);
	f2fs_rmdir(sb, root, "empty-dir", 9);
	f2fs_sync_fs(sb, false);
	/* changes after the checkpoint, left for the unmount's */
	f2fs_unlink(sb, root, "big4m", 5);
	f2fs_unlink(sb, root, "fz-link", 7);
}

static void body(struct f2fs_sb *sb, bool writable, bool pristine)
{
	if (writable)
		changes(sb);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_seed *s = fuzz_prepare(data, size);

	if (s)
		fuzz_rw_cycle("fuzz_rw", s, data, size, &rw_walk, body);
	return 0;
}
