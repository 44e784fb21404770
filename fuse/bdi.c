// SPDX-License-Identifier: GPL-2.0
/*
 * This mount as the kernel lists it (Linux).  The read-ahead window: the
 * kernel sizes read requests by its backing-device read-ahead, 128 KiB by
 * default, however large a max_readahead the daemon offers; sequential
 * reads then cost a round trip per 128 KiB.  Root may raise the window
 * through sysfs for this mount's bdi alone.  And the read-only state of
 * its superblock, which a remount changes without telling the daemon.
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

int f2fs_fuse_find_mount(const char *mountpoint, char majmin[F2FS_FUSE_MAJMIN_LEN],
			 bool *sb_readonly)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char *line = NULL;
	size_t cap = 0;
	int err = -ENOENT;

	if (!f)
		return -errno;
	while (getline(&line, &cap, f) > 0) {
		char *sep = strstr(line, " - ");
		char *save = NULL, *col[5] = { NULL }, *fstype, *super;

		if (!sep)
			continue;
		*sep = '\0';
		/* id parent major:minor root MOUNTPOINT options ... - FSTYPE SOURCE SUPER_OPTIONS */
		col[0] = strtok_r(line, " ", &save);
		for (int i = 1; i < 5 && col[i - 1]; i++)
			col[i] = strtok_r(NULL, " ", &save);
		if (!col[4])
			continue;
		unescape(col[4]);
		save = NULL;
		fstype = strtok_r(sep + 3, " ", &save);
		super = strtok_r(NULL, " ", &save) ? strtok_r(NULL, " \n", &save) : NULL;
		if (strcmp(col[4], mountpoint) != 0 || !fstype || !super ||
		    (strcmp(fstype, "fuse") != 0 && strncmp(fstype, "fuse.", 5) != 0))
			continue;
		/* the last one listed is the top of the stack: ours */
		snprintf(majmin, F2FS_FUSE_MAJMIN_LEN, "%s", col[2]);
		*sb_readonly = strncmp(super, "ro", 2) == 0 && (super[2] == ',' || !super[2]);
		err = 0;
	}
	free(line);
	fclose(f);
	return err;
}

int f2fs_fuse_set_readahead(const char *mountpoint, unsigned int kb)
{
	char dev[F2FS_FUSE_MAJMIN_LEN], path[128];
	bool ro;
	int err = f2fs_fuse_find_mount(mountpoint, dev, &ro);
	FILE *f;

	if (err)
		return err;
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
int f2fs_fuse_find_mount(const char *mountpoint, char majmin[F2FS_FUSE_MAJMIN_LEN],
			 bool *sb_readonly)
{
	return -EOPNOTSUPP;
}

int f2fs_fuse_set_readahead(const char *mountpoint, unsigned int kb)
{
	return -EOPNOTSUPP;
}
#endif
