// SPDX-License-Identifier: GPL-2.0
/*
 * The only place with operating-system specific calls: opening a device
 * with direct I/O and finding the size of a block device.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#if defined(__linux__)
#include <sys/sysmacros.h>
#endif
#include <unistd.h>
#if defined(__linux__)
#include <sys/random.h>
#endif

#if defined(__linux__)
#include <linux/falloc.h>
#include <linux/fs.h>		/* BLKGETSIZE64 */
#elif defined(__APPLE__)
#include <sys/disk.h>		/* DKIOCGETBLOCKCOUNT, DKIOCGETBLOCKSIZE */
#endif

#include "f2fs.h"

static int blkdev_size(int fd, uint64_t *size)
{
#if defined(__linux__)
	if (ioctl(fd, BLKGETSIZE64, size) < 0)
		return -errno;
	return 0;
#elif defined(__APPLE__)
	uint64_t count;
	uint32_t bsize;

	if (ioctl(fd, DKIOCGETBLOCKCOUNT, &count) < 0 ||
	    ioctl(fd, DKIOCGETBLOCKSIZE, &bsize) < 0)
		return -errno;
	*size = count * bsize;
	return 0;
#else
	off_t end = lseek(fd, 0, SEEK_END);

	if (end < 0)
		return -errno;
	*size = (uint64_t)end;
	return 0;
#endif
}

int f2fs_plat_open_device(const char *path, bool readonly, bool direct, int *fdp,
			  uint64_t *size_bytes, bool *is_blkdev)
{
	int flags = (readonly ? O_RDONLY : O_RDWR) | O_CLOEXEC;
	struct stat st;
	int fd, err;

#if defined(O_DIRECT)
	if (direct)
		flags |= O_DIRECT;
#endif
	fd = open(path, flags);
	if (fd < 0)
		return -errno;
#if defined(__APPLE__)
	if (direct && fcntl(fd, F_NOCACHE, 1) < 0) {
		err = -errno;
		close(fd);
		return err;
	}
#endif
	if (fstat(fd, &st) < 0) {
		err = -errno;
		close(fd);
		return err;
	}
	if (S_ISBLK(st.st_mode) || S_ISCHR(st.st_mode)) {
		err = blkdev_size(fd, size_bytes);
		if (err) {
			close(fd);
			return err;
		}
		*is_blkdev = true;
	} else if (S_ISREG(st.st_mode)) {
		*size_bytes = (uint64_t)st.st_size;
		*is_blkdev = false;
	} else {
		close(fd);
		return -EINVAL;
	}
	*fdp = fd;
	return 0;
}

uint64_t f2fs_plat_makedev(uint32_t major, uint32_t minor)
{
	return (uint64_t)makedev(major, minor);
}

void f2fs_random_bytes(void *buf, size_t len)
{
	uint8_t *p = buf;

#if defined(__linux__)
	while (len) {
		ssize_t r = getrandom(p, len, 0);

		if (r < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		p += r;
		len -= (size_t)r;
	}
	if (!len)
		return;
#else
	arc4random_buf(p, len);
	return;
#endif
	/* getrandom failed (very old kernel): fall back to /dev/urandom */
	{
		int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);

		if (fd >= 0) {
			while (len) {
				ssize_t r = read(fd, p, len);

				if (r <= 0)
					break;
				p += r;
				len -= (size_t)r;
			}
			close(fd);
		}
	}
}

int f2fs_plat_discard(int fd, bool is_blkdev, uint64_t off, uint64_t len)
{
#if defined(__linux__)
	if (is_blkdev) {
		uint64_t range[2] = { off, len };

		return ioctl(fd, BLKDISCARD, range) < 0 ? -errno : 0;
	}
	return fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)off, (off_t)len) < 0
		       ? -errno : 0;
#else
	return -EOPNOTSUPP;
#endif
}
