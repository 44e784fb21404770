// SPDX-License-Identifier: GPL-2.0
/*
 * Open and release pair up: each release gives back the reference its open
 * took.  A release with no open to match (the FUSE layer never sends one,
 * but a caller of the core may) fails with EBADF and leaves the inode as it
 * was, where it used to drop a reference it did not own and free the inode
 * under its holders (the rw fuzz target: an open refused for an encrypted
 * inode without a context, then released).
 *
 * Writing back an inode named by number (its dirty pages listed earlier)
 * finds it gone when another thread freed it meanwhile: nothing to do, and
 * no inconsistency, where a load as if from a dentry took the free NAT
 * entry for corruption and the next checkpoint asked for fsck (fsstress
 * with four processes, fsyncs writing every file's pages back).
 */
#include <fcntl.h>

#include "rwimage.h"

static void release_pairs(struct rwimage *im)
{
	uint32_t ino = rw_create(im, "paired");
	struct f2fs_stat st;
	uint8_t blk[F2FS_BLKSIZE];

	if (!ino)
		return;
	CHECK_EQ_U64(f2fs_release(im->sb, ino), -EBADF, "a release without an open");
	CHECK(f2fs_getattr(im->sb, ino, &st) == 0 && st.ino == ino, "the inode is still there");
	CHECK(f2fs_open(im->sb, ino, O_RDWR) == 0, "open");
	rw_pattern(blk, ino);
	CHECK(f2fs_write(im->sb, ino, blk, sizeof(blk), 0) == (ssize_t)sizeof(blk), "write");
	CHECK(f2fs_release_file(im->sb, ino, O_RDWR) == 0, "release of that open");
	CHECK_EQ_U64(f2fs_release_file(im->sb, ino, O_RDWR), -EBADF, "a second release");
	for (int i = 0; i < 3; i++)
		CHECK(f2fs_open(im->sb, ino, O_RDONLY) == 0, "open %d", i);
	for (int i = 0; i < 3; i++)
		CHECK(f2fs_release(im->sb, ino) == 0, "release %d", i);
	CHECK_EQ_U64(f2fs_release(im->sb, ino), -EBADF, "one release more than opens");
	CHECK(f2fs_getattr(im->sb, ino, &st) == 0 && st.size == sizeof(blk),
	      "the file kept its data: size %llu", (unsigned long long)st.size);
}

static void writeback_freed(struct rwimage *im)
{
	uint32_t ino = rw_create(im, "freed");
	struct f2fs_status st;

	if (!ino)
		return;
	CHECK(f2fs_unlink(im->sb, f2fs_root_ino(im->sb), "freed", 5) == 0, "unlink");
	CHECK(f2fs_writeback_file(im->sb, ino) == 0, "write back of a freed inode");
	CHECK(f2fs_get_status(im->sb, &st) == 0 && !st.need_fsck, "no inconsistency: %s",
	      rw_last_error);
}

int main(void)
{
	struct rwimage im;

	if (!rw_image(&im, NULL, 64))
		return check_done("test_file");
	release_pairs(&im);
	writeback_freed(&im);
	CHECK(rw_nr_errors == 0, "no error reported: %s", rw_last_error);
	rw_done(&im);
	return check_done("test_file");
}
