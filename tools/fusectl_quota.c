// SPDX-License-Identifier: GPL-2.0
/*
 * f2fs-fusectl quota: reports and limits through F2FS_IOC_QUOTACTL
 * (fuse/quotactl_proto.h), as repquota(8) and setquota(8) on the kernel's
 * mount; quotactl(2) cannot reach a FUSE filesystem.
 */
#include "fusectl.h"
#include "quotactl_proto.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

static const char *const quota_type_name[] = { "user", "group", "project" };

static int quotactl_on(const char *mnt, struct f2fs_quotactl *q)
{
	int fd = open(mnt, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC), err;

	if (fd < 0)
		return -errno;
	err = ioctl(fd, F2FS_IOC_QUOTACTL, q) ? -errno : 0;
	close(fd);
	return err;
}

static const char *quota_errmsg(int err)
{
	switch (err) {
	case ENOTTY:
	case ENOSYS:
		return "not an f2fs-fuse mount";
	case ESRCH:
		return "quota of this type is not kept on this filesystem";
	case EPERM:
		return "only root may do that";
	default:
		return strerror(err);
	}
}

static bool parse_u64(const char *s, uint64_t max, uint64_t *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	if (*s == '-' || !*s)
		return false;
	v = strtoull(s, &end, 10);
	if (errno || *end || v > max)
		return false;
	*out = v;
	return true;
}

static void show_grace(int64_t deadline, time_t now)
{
	if (!deadline)
		printf(" %8s", "-");
	else if (deadline <= now)
		printf(" %8s", "none");
	else
		printf(" %7llds", (long long)(deadline - now));
}

/* Print the first id from id on; returns it, or -errno.  exact: only id
 * itself (none: an empty line of zeros, as quota(1) shows). */
static long long quota_line(const char *mnt, uint32_t type, uint32_t id, time_t now, bool exact)
{
	struct f2fs_quotactl q = { .op = F2FS_QUOTACTL_GETNEXT, .type = type, .id = id };
	int err = quotactl_on(mnt, &q);

	if (exact && err == -ENOENT) {
		memset(&q, 0, sizeof(q));
		q.id = id;
	} else if (err) {
		return err;
	}
	printf("%-10u %12llu %10llu %10llu", q.id, (unsigned long long)(q.curspace / 1024),
	       (unsigned long long)(q.bsoftlimit / 1024), (unsigned long long)(q.bhardlimit / 1024));
	show_grace(q.btime, now);
	printf(" %10llu %10llu %10llu", (unsigned long long)q.curinodes,
	       (unsigned long long)q.isoftlimit, (unsigned long long)q.ihardlimit);
	show_grace(q.itime, now);
	putchar('\n');
	return exact ? 0 : (long long)q.id;
}

static int quota_report(const char *mnt, uint32_t type)
{
	struct f2fs_quotactl q = { .op = F2FS_QUOTACTL_GETINFO, .type = type };
	time_t now = time(NULL);
	int err = quotactl_on(mnt, &q);

	if (err)
		return fail("%s: %s", mnt, quota_errmsg(-err));
	printf("*** %s quota on %s: limits %s; grace %us (space), %us (inodes)%s\n",
	       quota_type_name[type], mnt,
	       (q.info_flags & F2FS_QUOTACTL_ENFORCED) ? "enforced" : "not enforced",
	       q.bgrace, q.igrace,
	       (q.info_flags & F2FS_QUOTACTL_NEED_REPAIR) ? "; needs fsck.f2fs" : "");
	printf("%-10s %12s %10s %10s %8s %10s %10s %10s %8s\n", "id", "KiB used", "soft", "hard",
	       "grace", "inodes", "soft", "hard", "grace");
	if (geteuid() != 0) {
		/* quota(1)'s view: one's own user or group only */
		if (type == 2)
			return fail("%s: only root may list project quotas", mnt);
		return quota_line(mnt, type, type == 0 ? getuid() : getgid(), now, true);
	}
	for (uint64_t id = 0; id <= UINT32_MAX; id++) {
		long long r = quota_line(mnt, type, (uint32_t)id, now, false);

		if (r == -ENOENT)
			break;
		if (r < 0)
			return fail("%s: %s", mnt, quota_errmsg((int)-r));
		id = (uint64_t)r;
	}
	return EXIT_SUCCESS;
}

int cmd_quota(int argc, char *argv[])
{
	static const struct option opts[] = {
		{ "set", no_argument, NULL, 's' },
		{ "grace", no_argument, NULL, 'G' },
		{ NULL, 0, NULL, 0 },
	};
	struct f2fs_quotactl q;
	uint32_t type = 0;
	int c, mode = 0, err;
	uint64_t v[5];

	while ((c = getopt_long(argc, argv, "ugp", opts, NULL)) != -1) {
		switch (c) {
		case 'u':
			type = 0;
			break;
		case 'g':
			type = 1;
			break;
		case 'p':
			type = 2;
			break;
		case 's':
		case 'G':
			mode = c;
			break;
		default:
			usage(stderr);
			return EXIT_FAILURE;
		}
	}
	argc -= optind;
	argv += optind;
	if (!mode) {
		if (argc != 1)
			return fail("quota: must specify a mountpoint");
		return quota_report(argv[0], type);
	}
	if (argc != (mode == 's' ? 6 : 3))
		return fail("quota: wrong number of arguments (see --help)");
	for (int i = 0; i < argc - 1; i++) {
		uint64_t max = mode == 'G' || (mode == 's' && i == 0) ? UINT32_MAX :
			       (mode == 's' && i < 3) ? UINT64_MAX / 1024 : UINT64_MAX;

		if (!parse_u64(argv[i], max, &v[i]))
			return fail("quota: invalid number: %s", argv[i]);
	}
	memset(&q, 0, sizeof(q));
	q.type = type;
	if (mode == 's') {
		q.op = F2FS_QUOTACTL_SETLIMITS;
		q.id = (uint32_t)v[0];
		q.bsoftlimit = v[1] * 1024;
		q.bhardlimit = v[2] * 1024;
		q.isoftlimit = v[3];
		q.ihardlimit = v[4];
	} else {
		q.op = F2FS_QUOTACTL_SETGRACE;
		q.bgrace = (uint32_t)v[0];
		q.igrace = (uint32_t)v[1];
	}
	err = quotactl_on(argv[argc - 1], &q);
	if (err)
		return fail("%s: %s", argv[argc - 1], quota_errmsg(-err));
	return EXIT_SUCCESS;
}
