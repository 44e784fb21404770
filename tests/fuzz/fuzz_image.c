// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: mount a mutated image read-only and walk it.
 *
 * The input is a patch list over one of the seed images (fuzz_common.h),
 * applied to the seed's copy-on-write overlay, so an input costs the blocks
 * it touches and the blocks the mount reads, never a copy of the image.
 * The empty patch list mounts the pristine seed, which must succeed (a seed
 * that stops mounting is a bug too).  On a successful mount the bounded
 * walk (fuzz_walk) visits every directory, inode, xattr and symlink it can
 * reach within its limits.
 */
#include <stdio.h>
#include <stdlib.h>

#include "fuzz_common.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	fuzz_load_seeds("fuzz_image");
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct f2fs_mount_opts opts = { .readonly = true, .log = fuzz_quiet_log,
					.log_level = F2FS_LOG_DEBUG, .cache_size = 1u << 20,
					.slabs = fuzz_slabs() };
	struct fuzz_seed *s = fuzz_prepare(data, size);
	struct f2fs_dev *dev;
	struct f2fs_sb *sb = NULL;
	int err;

	if (!s || ovl_open_dev(s->ovl, true, &dev))
		return 0;
	err = f2fs_mount_dev(dev, &opts, &sb);
	if (size <= 1 && err) {
		fprintf(stderr, "fuzz_image: pristine seed %d does not mount: %d\n",
			(int)data[0], err);
		abort();
	}
	if (!err) {
		fuzz_walk(sb, &fuzz_walk_default);
		f2fs_umount(sb);
	}
	return 0;
}
