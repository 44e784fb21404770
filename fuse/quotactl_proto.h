/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Quota reports and limits of an f2fs-fuse mount: quotactl(2) cannot reach a
 * FUSE filesystem, so f2fs-fusectl quota asks the daemon with this ioctl on
 * any file of the mount (the kernel forwards fixed-size _IOWR ioctls).
 * Shared by the daemon (fuse/quotactl.c) and f2fs-fusectl; host byte order.
 */
#ifndef F2FS_QUOTACTL_PROTO_H
#define F2FS_QUOTACTL_PROTO_H

#include <stdint.h>
#include <sys/ioctl.h>

#define F2FS_QUOTACTL_GETNEXT	1	/* the first id from id on (Q_GETNEXTQUOTA) */
#define F2FS_QUOTACTL_SETLIMITS	2	/* id's limits (Q_SETQUOTA); root only */
#define F2FS_QUOTACTL_GETINFO	3	/* grace times and state (Q_GETINFO) */
#define F2FS_QUOTACTL_SETGRACE	4	/* grace times (Q_SETINFO); root only */

#define F2FS_QUOTACTL_ENFORCED		0x1	/* info_flags: limits are checked */
#define F2FS_QUOTACTL_NEED_REPAIR	0x2	/* the files wait for fsck.f2fs */

struct f2fs_quotactl {
	uint32_t op;
	uint32_t type;			/* 0 user, 1 group, 2 project */
	uint32_t id;			/* GETNEXT: in the first id to look at, out the one found */
	uint32_t info_flags;		/* out (GETINFO) */
	uint64_t curspace, bsoftlimit, bhardlimit;	/* bytes */
	uint64_t curinodes, isoftlimit, ihardlimit;
	int64_t btime, itime;		/* grace deadlines, seconds since the epoch; 0 none */
	uint32_t bgrace, igrace;	/* seconds (GETINFO, SETGRACE) */
	uint64_t reserved[2];		/* 0 */
};

#define F2FS_IOC_QUOTACTL	_IOWR(0xF2, 0x50, struct f2fs_quotactl)

#endif
