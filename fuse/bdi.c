// SPDX-License-Identifier: GPL-2.0
/*
 * The read-ahead window of a FUSE mount (Linux).  The kernel sizes read
 * requests by its backing-device read-ahead, 128 KiB by default, however
 * large a max_readahead the daemon offers; sequential reads then cost a
 * round trip per 128 KiB.  Root may raise the window through sysfs for
 * this mount's bdi alone.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "f2fs_fuse.h"

#if defined(__linux__)
/* mountinfo escapes space, tab, newline and backslash as \ooo */
static void unescape(char *s)
{
	char *d = s;

	while (*s) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '7' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			*d++ = (char)(((s[1] - '0') << 6) | ((s[2] - '0') << 3) | (s[3] - '0'));
			s += 4;
		} else {
			*d++ = *s++;
		}
	}
	*d = 0;
}

int f2fs_fuse_set_readahead(const char *mountpoint, unsigned int kb)
{
	char line[4096], dev[64] = "", path[128];
	FILE *f = fopen("/proc/self/mountinfo", "re");
	int err = 0;

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		char majmin[64], mnt[PATH_MAX_LEN];

		if (sscanf(line, "%*s %*s %63s %*s %4095s", majmin, mnt) != 2)
			continue;
		unescape(mnt);
		if (!strcmp(mnt, mountpoint))
			snprintf(dev, sizeof(dev), "%s", majmin);	/* the last one is ours */
	}
	fclose(f);
	if (!dev[0])
		return -ENOENT;
	snprintf(path, sizeof(path), "/sys/class/bdi/%s/read_ahead_kb", dev);
	f = fopen(path, "we");
	if (!f)
		return -errno;
	if (fprintf(f, "%u\n", kb) < 0)
		err = -EIO;
	if (fclose(f) && !err)
		err = -errno;
	return err;
}
#else
int f2fs_fuse_set_readahead(const char *mountpoint, unsigned int kb)
{
	return -EOPNOTSUPP;
}
#endif
