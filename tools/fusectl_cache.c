// SPDX-License-Identifier: GPL-2.0
/*
 * f2fs-fusectl precache and drop_caches: one data-less ioctl each, which
 * the kernel's FUSE layer forwards as it is (no control socket needed).
 */
#include "fusectl.h"
#include "cachectl.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

/* One data-less ioctl on path; a negative errno. */
static int simple_ioctl(const char *path, unsigned long cmd)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC), err = 0;

	if (fd < 0)
		return -errno;
	if (!maybe_fuse(fd))
		err = -ERR_NOT_F2FS_FUSE;
	else if (ioctl(fd, cmd))
		err = -errno;
	close(fd);
	return err;
}

int cmd_precache(int argc, char *argv[])
{
	bool timed = false;
	int rc = EXIT_SUCCESS, c;

	while ((c = getopt(argc, argv, "t")) != -1) {
		if (c != 't')
			return EXIT_FAILURE;
		timed = true;
	}
	if (optind >= argc)
		return fail("precache: no file named");
	for (int i = optind; i < argc; i++) {
		struct timespec t0, t1;
		int err;

		clock_gettime(CLOCK_MONOTONIC, &t0);
		err = simple_ioctl(argv[i], F2FS_IOC_PRECACHE_EXTENTS);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		if (err)
			rc = fail("precaching %s: %s", argv[i], errmsg(-err));
		else if (timed)
			printf("%s: %.3f ms\n", argv[i], (double)(t1.tv_sec - t0.tv_sec) * 1e3 +
			       (double)(t1.tv_nsec - t0.tv_nsec) / 1e6);
	}
	return rc;
}

int cmd_drop_caches(int argc, char *argv[])
{
	int err;

	if (argc != 2 || !no_extra_options(argc, argv))
		return fail("usage: drop_caches MOUNTPOINT");
	err = simple_ioctl(argv[1], F2FS_FUSE_IOC_DROP_CACHES);
	if (err)
		return fail("dropping the caches of %s: %s", argv[1], errmsg(-err));
	return EXIT_SUCCESS;
}
