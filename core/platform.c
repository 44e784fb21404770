// SPDX-License-Identifier: GPL-2.0
/*
 * The only place with operating-system specific calls: opening a device
 * with direct I/O and an exclusive claim, finding the size of a block
 * device, and memory the OS may back with huge pages.
 */
#include <errno.h>
#include <fcntl.h>
#include <sys/file.h>		/* flock */
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#if defined(__linux__)
#include <sys/sysmacros.h>
#endif
#include <time.h>
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

/* A block device set read-only (blockdev --setro, losetup -r). */
static bool blkdev_readonly(int fd)
{
#if defined(__linux__)
	int ro = 0;

	return ioctl(fd, BLKROGET, &ro) == 0 && ro;
#else
	(void)fd;
	return false;
#endif
}

/*
 * How long a busy image or device may take to come free.  umount(2) of a
 * FUSE mount does not wait for its daemon, which still writes the final
 * checkpoint: a mount right after an unmount waits for that instead of
 * failing (or, without the claim, reading a half-written checkpoint).
 */
#define CLAIM_WAIT_MS 10000
#define CLAIM_POLL_MS 20

static bool claim_wait(unsigned int *waited_ms)
{
	struct timespec ts = { 0, CLAIM_POLL_MS * 1000000L };

	if (*waited_ms >= CLAIM_WAIT_MS)
		return false;
	nanosleep(&ts, NULL);
	*waited_ms += CLAIM_POLL_MS;
	return true;
}

/*
 * One writer or any number of readers per image file, across processes: a
 * second daemon writing the same image corrupts it, and a reader beside a
 * writer sees torn state.  The lock belongs to the open file description,
 * so it survives the daemon's fork and goes when the last descriptor does.
 * A file system without locks (ENOLCK, EOPNOTSUPP, ...) leaves it unlocked.
 */
static int lock_image(int fd, bool readonly)
{
	unsigned int waited = 0;

	while (flock(fd, (readonly ? LOCK_SH : LOCK_EX) | LOCK_NB) != 0) {
		if (errno != EWOULDBLOCK && errno != EINTR)
			return 0;
		if (!claim_wait(&waited))
			return -EBUSY;
	}
	return 0;
}

int f2fs_plat_open_device(const char *path, bool readonly, bool direct, int *fdp,
			  uint64_t *size_bytes, bool *is_blkdev)
{
	int flags = (readonly ? O_RDONLY : O_RDWR) | O_CLOEXEC;
	unsigned int waited = 0;
	struct stat st;
	int fd, err;

#if defined(O_DIRECT)
	if (direct)
		flags |= O_DIRECT;
#endif
#if defined(__linux__)
	/*
	 * A block device is claimed as the kernel claims a device it mounts:
	 * EBUSY while it is mounted or held by another exclusive opener, read-only
	 * or not (a flock there would also race with udev's probing locks).
	 */
	if (stat(path, &st) == 0 && S_ISBLK(st.st_mode))
		flags |= O_EXCL;
#endif
	while ((fd = open(path, flags)) < 0 && (flags & O_EXCL) && errno == EBUSY &&
	       claim_wait(&waited))
		;
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
		/* writes would fail one by one with EPERM: say so now */
		if (!readonly && S_ISBLK(st.st_mode) && blkdev_readonly(fd)) {
			close(fd);
			return -EROFS;
		}
		err = blkdev_size(fd, size_bytes);
		if (err) {
			close(fd);
			return err;
		}
		*is_blkdev = true;
	} else if (S_ISREG(st.st_mode)) {
		err = lock_image(fd, readonly);
		if (err) {
			close(fd);
			return err;
		}
		*size_bytes = (uint64_t)st.st_size;
		*is_blkdev = false;
	} else {
		close(fd);
		return -EINVAL;
	}
	*fdp = fd;
	return 0;
}

/*
 * Whether path can only be read: a block device set read-only (BLKROGET;
 * Linux still opens it read-write and fails each write with EPERM), or a
 * file on a read-only filesystem or without write permission.  mount(8)
 * mounts such a device read-only ("write-protected"), as the kernel
 * refuses it read-write; f2fs-fuse does the same.
 */
bool f2fs_plat_write_protected(const char *path)
{
	struct stat st;
	int fd;

	if (stat(path, &st) != 0)
		return false;	/* the open reports it */
	if (S_ISBLK(st.st_mode)) {
		bool r;

		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return false;
		r = blkdev_readonly(fd);
		close(fd);
		return r;
	}
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd >= 0) {
		close(fd);
		return false;
	}
	return errno == EROFS || errno == EACCES || errno == EPERM;
}

/*
 * A read-only mount made writable (remount rw): the image or device is
 * opened again read-write and put in fd's place (dup2), so the number the
 * device layer holds stays valid and reads in flight finish on the old
 * description.  The claim becomes a writer's: an image file's lock turns
 * exclusive (-EBUSY while another read-only mount shares the image), a
 * block device is opened exclusively again (our own read-only claim has
 * to go first; if the device is taken in between, fd is left writable
 * but unclaimed, and the caller keeps refusing writes).
 */
int f2fs_plat_reopen_rw(int fd, const char *path, bool direct)
{
	int flags = O_RDWR | O_CLOEXEC;
	struct stat old, st;
	int nfd, err;

#if defined(O_DIRECT)
	if (direct)
		flags |= O_DIRECT;
#endif
	if (fstat(fd, &old) < 0)
		return -errno;
	nfd = open(path, flags);
	if (nfd < 0)
		return -errno;
	/* the path may name another file by now */
	if (fstat(nfd, &st) < 0 || (st.st_mode & S_IFMT) != (old.st_mode & S_IFMT) ||
	    (S_ISBLK(st.st_mode) ? st.st_rdev != old.st_rdev :
	     st.st_dev != old.st_dev || st.st_ino != old.st_ino)) {
		close(nfd);
		return -ESTALE;
	}
#if defined(__APPLE__)
	if (direct && fcntl(nfd, F_NOCACHE, 1) < 0) {
		err = -errno;
		close(nfd);
		return err;
	}
#endif
	if (S_ISBLK(st.st_mode) && blkdev_readonly(nfd)) {
		close(nfd);
		return -EROFS;
	}
	if (S_ISREG(st.st_mode)) {
		/* our shared lock belongs to the other description: it would block ours */
		flock(fd, LOCK_UN);
		if (flock(nfd, LOCK_EX | LOCK_NB) != 0 && (errno == EWOULDBLOCK || errno == EINTR)) {
			flock(fd, LOCK_SH | LOCK_NB);
			close(nfd);
			return -EBUSY;
		}
	}
	err = dup2(nfd, fd) < 0 ? -errno : 0;
	close(nfd);
	if (err) {
		if (S_ISREG(st.st_mode))
			flock(fd, LOCK_SH | LOCK_NB);
		return err;
	}
#if defined(__linux__)
	if (S_ISBLK(st.st_mode)) {
		nfd = open(path, flags | O_EXCL);
		if (nfd < 0)
			return -errno;
		err = dup2(nfd, fd) < 0 ? -errno : 0;
		close(nfd);
	}
#endif
	return err;
}

/* A remount read-write that failed after the reopen: readers may share the image again. */
void f2fs_plat_share_claim(int fd)
{
	struct stat st;

	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
		flock(fd, LOCK_SH | LOCK_NB);	/* converts our exclusive lock */
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

ssize_t f2fs_plat_pwritev_dsync(int fd, const struct iovec *iov, int iovcnt, off_t off)
{
	ssize_t r;

#if defined(__linux__) && defined(RWF_DSYNC)
	r = pwritev2(fd, iov, iovcnt, off, RWF_DSYNC);
	if (r >= 0 || (errno != EOPNOTSUPP && errno != ENOSYS))
		return r;
#endif
	/* no per-write sync here: the write, then the whole cache */
	r = pwritev(fd, iov, iovcnt, off);
	if (r >= 0 && fsync(fd) < 0)
		return -1;
	return r;
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

/*
 * Anonymous memory for a long-lived cache.  On Linux a region of 2 MiB or
 * more is aligned to 2 MiB and marked for transparent huge pages: a cache
 * filling up takes one fault per 2 MiB instead of one per 4 KiB page,
 * which under virtualization is most of what a cold walk costs.
 */
#define HUGE_BYTES ((size_t)2 << 20)

void *f2fs_plat_map_anon(size_t bytes)
{
	size_t len = bytes;
	uint8_t *p, *a;

	if (bytes >= HUGE_BYTES)
		len += HUGE_BYTES;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	if (bytes < HUGE_BYTES)
		return p;
	a = (uint8_t *)(((uintptr_t)p + HUGE_BYTES - 1) & ~(uintptr_t)(HUGE_BYTES - 1));
	if (a > p)
		munmap(p, (size_t)(a - p));
	if (p + len > a + bytes)
		munmap(a + bytes, (size_t)(p + len - (a + bytes)));
#if defined(__linux__) && defined(MADV_HUGEPAGE)
	(void)madvise(a, bytes, MADV_HUGEPAGE);	/* advice: without it, small pages */
#endif
	return a;
}

void f2fs_plat_unmap_anon(void *p, size_t bytes)
{
	if (p)
		munmap(p, bytes);
}
