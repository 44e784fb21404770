// SPDX-License-Identifier: GPL-2.0
/*
 * The f2fs ioctls' core (core/ioctl.c) on a writable memory image: a
 * shutdown without sync leaves the device exactly as it was and fails
 * every change with EIO, the next mount rolls forward what was fsync()ed;
 * the volume label's UTF-8 <-> UTF-16 in both superblock copies; pinning.
 */
#include "rwimage.h"

static void shutdown_nosync(struct rwimage *im)
{
	uint8_t *data = f2fs_alloc_blocks(2), *before = NULL;
	struct f2fs_cred cred = { .uid = 0, .gid = 0, .umask = 022 };
	struct f2fs_stat st;
	uint32_t synced = rw_create(im, "synced"), loose = rw_create(im, "loose");
	char buf[8];

	if (!data || !synced || !loose)
		goto out;
	rw_pattern(data, 1);
	rw_pattern(data + F2FS_BLKSIZE, 2);
	CHECK(f2fs_sync_fs(im->sb, false) == 0, "checkpoint the two names");
	CHECK(f2fs_write(im->sb, synced, data, 2 * F2FS_BLKSIZE, 0) == 2 * F2FS_BLKSIZE, "write");
	CHECK(f2fs_fsync(im->sb, synced, false) == 0, "fsync");
	CHECK(f2fs_write(im->sb, loose, data, F2FS_BLKSIZE, 0) == F2FS_BLKSIZE, "write unsynced");

	CHECK(f2fs_shutdown(im->sb, F2FS_SHUTDOWN_NOSYNC) == 0, "shutdown");
	before = malloc(im->len);
	if (!before)
		goto out;
	memcpy(before, im->buf, im->len);
	CHECK(f2fs_is_shut_down(im->sb), "shut down");
	CHECK(f2fs_write(im->sb, loose, data, 10, 0) == -EIO, "a write fails with EIO");
	CHECK(f2fs_mkdir(im->sb, f2fs_root_ino(im->sb), "d", 1, 0755, &cred, &st) == -EIO,
	      "so does mkdir");
	CHECK(f2fs_fsync(im->sb, synced, false) == -EIO, "and fsync");
	CHECK(f2fs_open(im->sb, synced, O_RDONLY) == -EIO, "and open");
	CHECK(f2fs_shutdown(im->sb, F2FS_SHUTDOWN_NOSYNC) == -EIO, "a second shutdown");
	CHECK(f2fs_set_label(im->sb, "x", 1) == -EIO, "the label stays");
	CHECK(f2fs_read(im->sb, synced, buf, sizeof(buf), 0) == (ssize_t)sizeof(buf),
	      "reads go on");
	CHECK(f2fs_umount(im->sb) == 0, "unmount");
	im->sb = NULL;
	CHECK(memcmp(before, im->buf, im->len) == 0, "nothing reached the device after the shutdown");

	CHECK(rw_mount(im) == 0, "mount again");
	if (!im->sb)
		goto out;
	{
		uint8_t back[2 * F2FS_BLKSIZE];

		CHECK(f2fs_read(im->sb, synced, back, sizeof(back), 0) == (ssize_t)sizeof(back) &&
		      memcmp(back, data, sizeof(back)) == 0, "the fsync()ed data came back");
		CHECK(f2fs_getattr(im->sb, loose, &st) == 0 && st.size == 0,
		      "the unsynced write did not (size %llu)", (unsigned long long)st.size);
	}
out:
	free(before);
	free(data);
}

static void label(struct rwimage *im)
{
	char got[256];
	/* two-, three- and four-byte UTF-8, the last a UTF-16 surrogate pair */
	static const char name[] = "d\xc3\xa9j\xc3\xa0-\xe2\x82\xac-\xf0\x9f\x98\x80";
	char huge[600];

	CHECK(f2fs_set_label(im->sb, name, strlen(name)) == 0, "set label");
	CHECK(f2fs_get_label(im->sb, got, sizeof(got)) == 0 && strcmp(got, name) == 0,
	      "label back: %s", got);
	CHECK(get_le16(im->sb->raw_sb + SB_VOLUME_NAME + 2 * 7) == 0xd83d &&
	      get_le16(im->sb->raw_sb + SB_VOLUME_NAME + 2 * 8) == 0xde00, "as a surrogate pair");
	CHECK(f2fs_set_label(im->sb, "\xc3(", 2) == -EINVAL, "malformed UTF-8 is refused");
	CHECK(f2fs_set_label(im->sb, "\xed\xa0\x80", 3) == -EINVAL, "so is an encoded surrogate");
	memset(huge, 'a', sizeof(huge));
	CHECK(f2fs_set_label(im->sb, huge, sizeof(huge)) == -EINVAL, "and more than 512 units");
	CHECK(rw_remount(im) == 0, "remount");
	if (!im->sb)
		return;
	CHECK(f2fs_get_label(im->sb, got, sizeof(got)) == 0 && strcmp(got, name) == 0,
	      "the label was written: %s", got);
	CHECK(memcmp(im->buf + F2FS_SUPER_OFFSET, im->buf + F2FS_BLKSIZE + F2FS_SUPER_OFFSET,
		     F2FS_SB_SIZE) == 0, "to both copies");
}

static void pinning(struct rwimage *im)
{
	uint32_t ino = rw_create(im, "pinned");
	uint32_t failures = 7;
	bool pinned = true;

	if (!ino)
		return;
	CHECK(f2fs_get_pin_file(im->sb, ino, &pinned, &failures) == 0 && !pinned && !failures,
	      "not pinned at first");
	CHECK(f2fs_set_pin_file(im->sb, ino, true) == 0, "pin");
	CHECK(f2fs_get_pin_file(im->sb, ino, &pinned, &failures) == 0 && pinned, "pinned");
	CHECK(f2fs_set_pin_file(im->sb, f2fs_root_ino(im->sb), true) == -EINVAL,
	      "a directory cannot be pinned");
	CHECK(rw_remount(im) == 0, "remount");
	if (!im->sb)
		return;
	CHECK(f2fs_get_pin_file(im->sb, ino, &pinned, &failures) == 0 && pinned,
	      "still pinned after a remount");
	CHECK(f2fs_set_pin_file(im->sb, ino, false) == 0, "unpin");
	CHECK(f2fs_get_pin_file(im->sb, ino, &pinned, &failures) == 0 && !pinned, "unpinned");
}

int main(void)
{
	struct rwimage im;

	if (!rw_image(&im, "extra_attr,inode_checksum,sb_checksum", 64))
		return check_done("test_ioctl");
	shutdown_nosync(&im);
	if (im.sb) {
		label(&im);
		pinning(&im);
	}
	rw_done(&im);
	return check_done("test_ioctl");
}
