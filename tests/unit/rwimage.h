/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A fresh mkfs.f2fs image mounted writable on a memory device, so that C
 * tests can drive the write path's mechanisms (segments, the NAT, node
 * trees, the extent cache) directly, and fsck.f2fs over the buffer once
 * the mount has written its last checkpoint.
 */
#ifndef F2FS_TEST_RWIMAGE_H
#define F2FS_TEST_RWIMAGE_H

#include <sys/stat.h>

#include "check.h"
#include "f2fs.h"

struct rwimage {
	uint8_t *buf;
	size_t len;
	struct f2fs_sb *sb;
};

/* Messages of the mounts, kept (not printed) so that tests can look at them. */
static int rw_nr_errors;
static char rw_last_error[512];

static inline void rw_log(void *arg, enum f2fs_log_level lvl, const char *msg)
{
	if (lvl != F2FS_LOG_ERR)
		return;
	rw_nr_errors++;
	snprintf(rw_last_error, sizeof(rw_last_error), "%s", msg);
}

/* Mount im->buf writable. */
static inline int rw_mount(struct rwimage *im)
{
	struct f2fs_mount_opts o = { .log_level = F2FS_LOG_ERR, .log = rw_log };
	struct f2fs_dev *dev;
	int err = f2fs_dev_open_mem_rw(im->buf, im->len, &dev);

	return err ? err : f2fs_mount_dev(dev, &o, &im->sb);
}

/* A new image of `mb` MiB, mounted; false (with a SKIP) without mkfs.f2fs. */
static inline bool rw_image(struct rwimage *im, const char *features, unsigned mb)
{
	int err;

	memset(im, 0, sizeof(*im));
	im->buf = make_image(features, mb, NULL, &im->len);
	if (!im->buf)
		return false;
	err = rw_mount(im);
	CHECK(err == 0, "writable mount of a fresh image: %d", err);
	return err == 0;
}

/* Unmount (the final checkpoint goes into the buffer) and mount again. */
static inline int rw_remount(struct rwimage *im)
{
	int err = f2fs_umount(im->sb);

	im->sb = NULL;
	return err ? err : rw_mount(im);
}

/* The same image in a second buffer, mounted: for changes never to be checked by fsck. */
static inline bool rw_copy(const struct rwimage *im, struct rwimage *copy)
{
	int err;

	copy->len = im->len;
	copy->sb = NULL;
	copy->buf = malloc(im->len);
	if (!copy->buf)
		return false;
	memcpy(copy->buf, im->buf, im->len);
	err = rw_mount(copy);
	CHECK(err == 0, "mount of a copy: %d", err);
	return err == 0;
}

static inline void rw_free(struct rwimage *im)
{
	if (im->sb)
		f2fs_umount(im->sb);
	free(im->buf);
	memset(im, 0, sizeof(*im));
}

/*
 * fsck.f2fs -f --dry-run over the buffer: clean means exit 0, a "Done"
 * line, and no "[Fail]", "[FIX]" or "[ASSERT]" line (tests/integration's
 * fsck_problems).  Returns true when clean; prints what it found if not.
 */
static inline bool rw_fsck_clean(const struct rwimage *im)
{
	char fsck[512], path[] = "/tmp/f2fs-unit-fsck-XXXXXX", cmd[1200], line[512];
	bool done = false, clean = true;
	int fd, st;
	FILE *p;

	if (!find_tool("fsck.f2fs", fsck, sizeof(fsck))) {
		SKIP("fsck.f2fs not found");
		return true;
	}
	fd = mkstemp(path);
	if (fd < 0 || write(fd, im->buf, im->len) != (ssize_t)im->len) {
		if (fd >= 0)
			close(fd);
		unlink(path);
		CHECK(0, "could not write the image out for fsck");
		return false;
	}
	close(fd);
	snprintf(cmd, sizeof(cmd), "'%s' -f --dry-run '%s' 2>&1", fsck, path);
	p = popen(cmd, "r");
	if (!p) {
		unlink(path);
		CHECK(0, "could not run fsck.f2fs");
		return false;
	}
	while (fgets(line, sizeof(line), p)) {
		if (!strncmp(line, "Done", 4))
			done = true;
		if (strstr(line, "[Fail]") || strstr(line, "[FIX]") || strstr(line, "[ASSERT]")) {
			fprintf(stderr, "fsck.f2fs: %s", line);
			clean = false;
		}
	}
	st = pclose(p);
	unlink(path);
	if (st != 0) {
		fprintf(stderr, "fsck.f2fs exit status %d\n", st);
		clean = false;
	}
	return clean && done;
}

/* Unmount (the final checkpoint goes into the buffer), fsck.f2fs the image, free it. */
static inline void rw_done(struct rwimage *im)
{
	if (im->sb) {
		CHECK(f2fs_umount(im->sb) == 0, "unmount");
		im->sb = NULL;
		CHECK(rw_fsck_clean(im), "fsck.f2fs finds nothing to fix");
	}
	rw_free(im);
}

/* A new regular file in the root directory; its ino, or 0. */
static inline uint32_t rw_create(struct rwimage *im, const char *name)
{
	struct f2fs_cred cred = { .uid = 0, .gid = 0, .umask = 022 };
	struct f2fs_stat st;
	int err = f2fs_mknod(im->sb, f2fs_root_ino(im->sb), name, strlen(name), S_IFREG | 0644, 0, 0,
			     &cred, &st);

	CHECK(err == 0, "create %s: %d", name, err);
	return err ? 0 : st.ino;
}

/* Fill a block with a pattern that names it. */
static inline void rw_pattern(uint8_t *blk, uint32_t seed)
{
	for (uint32_t i = 0; i < F2FS_BLKSIZE; i++)
		blk[i] = (uint8_t)(seed * 131 + i * 7 + i / 256);
}

#endif /* F2FS_TEST_RWIMAGE_H */
