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
#include <stdlib.h>
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

static void fail(const char *what, const uint8_t *data, size_t size)
{
	fprintf(stderr, "fuzz_rw: %s (input of %zu bytes, seed %d)\n", what, size,
		size ? data[0] % 64 % fuzz_nr_seeds() : 0);
	abort();
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
		f2fs_open(sb, st.ino, O_RDWR);
		f2fs_write(sb, st.ino, buf, 100, 0);		/* inline */
		f2fs_write(sb, st.ino, buf, sizeof(buf), 8192);	/* converted, blocks */
		f2fs_setxattr(sb, st.ino, "user.fz", buf, 64, 0);
		f2fs_fsync(sb, st.ino, false);
		f2fs_release(sb, st.ino);
	}
	if (f2fs_mkdir(sb, root, "fz-dir", 6, 0755, &cred, &dst) == 0) {
		for (int i = 0; i < 4; i++) {
			char name[16];
			int n = snprintf(name, sizeof(name), "f%d", i);

			f2fs_mknod(sb, dst.ino, name, (size_t)n, S_IFREG | 0644, 0, 0, &cred, &tmp);
		}
		f2fs_symlink(sb, dst.ino, "ln", 2, "../hello", &cred, &tmp);
		f2fs_rename(sb, dst.ino, "f0", 2, root, "fz-moved", 8, 0);
		f2fs_unlink(sb, dst.ino, "f1", 2);
	}
	/* existing files: whatever the seed (and the mutation) left there */
	if (f2fs_lookup(sb, root, "blocks40k", 9, &old) == 0 && S_ISREG(old.mode)) {
		f2fs_open(sb, old.ino, O_RDWR);
		f2fs_write(sb, old.ino, buf, sizeof(buf), 20000);
		sa.size = 5000;
		f2fs_setattr(sb, old.ino, &sa, &tmp);
		f2fs_fallocate(sb, old.ino, 0, 0, 3 * F2FS_BLKSIZE);
		f2fs_fsync(sb, old.ino, true);
		f2fs_release(sb, old.ino);
	}
	if (f2fs_lookup(sb, root, "hello", 5, &old) == 0)
		f2fs_link(sb, old.ino, root, "fz-link", 7, &tmp);
	f2fs_unlink(sb, root, "inline3000", 10);
	f2fs_rename(sb, root, "dir", 3, root, "fz-dir2", 7, 0);
	f2fs_rmdir(sb, root, "empty-dir", 9);
	f2fs_sync_fs(sb, false);
	/* changes after the checkpoint, left for the unmount's */
	f2fs_unlink(sb, root, "big4m", 5);
	f2fs_unlink(sb, root, "fz-link", 7);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct f2fs_mount_opts opts = { .log = fuzz_quiet_log, .log_level = F2FS_LOG_DEBUG,
					.cache_size = 1u << 20 };
	struct fuzz_seed *s = fuzz_prepare(data, size);
	struct f2fs_dev *dev;
	struct f2fs_sb *sb = NULL;
	bool clean;
	int err;

	if (!s || ovl_open_dev(s->ovl, false, &dev))
		return 0;
	err = f2fs_mount_dev(dev, &opts, &sb);
	if (err) {
		if (size <= 1)
			fail("a pristine seed does not mount read-write", data, size);
		if (ovl_written_blocks(s->ovl))
			fail("a refused mount wrote to the image", data, size);
		return 0;
	}
	fuzz_walk(sb, &rw_walk);
	changes(sb);
	clean = !atomic_load(&sb->need_fsck);
	err = f2fs_umount(sb);
	clean = clean && !err;
	if (ovl_lowest_write(s->ovl) < 2)
		fail("a superblock was written", data, size);
	if (size <= 1 && (err || !clean))
		fail("a pristine seed did not unmount cleanly", data, size);

	/* what a mount that saw nothing wrong wrote must mount again */
	opts.readonly = true;
	if (ovl_open_dev(s->ovl, true, &dev))
		return 0;
	sb = NULL;
	err = f2fs_mount_dev(dev, &opts, &sb);
	if (err && clean)
		fail("the image a clean mount left does not mount again", data, size);
	if (!err) {
		fuzz_walk(sb, &rw_walk);
		f2fs_umount(sb);
	}
	return 0;
}
