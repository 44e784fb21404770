// SPDX-License-Identifier: GPL-2.0
/*
 * F2FS_IOC_QUOTACTL: what quotactl(2) would do on the kernel's mount, with
 * its permission rules: anyone may read the usage of their own user or of
 * a group they are in, CAP_SYS_ADMIN reads any and sets limits.  Changed
 * limits are committed with a checkpoint before the answer, as the
 * kernel's journalled quota writes them at once.
 */
#include "f2fs_fuse.h"
#include "caller.h"
#include "quotactl_proto.h"

#include <errno.h>
#include <string.h>

/* check_quotactl_permission for Q_GETQUOTA: one's own user, a group one is in */
static bool may_read(struct f2fs_caller *who, fuse_req_t req, uint32_t type, uint32_t id)
{
	gid_t groups[64];
	int n;

	if (type == 0)
		return who->uid == id;
	if (type != 1)
		return false;
	if (who->gid == id)
		return true;
	n = fuse_req_getgroups(req, 64, groups);
	for (int i = 0; i < n && i < 64; i++)
		if (groups[i] == id)
			return true;
	return false;
}

static int handle(fuse_req_t req, struct f2fs_fuse *fs, struct f2fs_caller *who,
		  struct f2fs_quotactl *q)
{
	struct f2fs_quota_usage u;
	struct f2fs_quota_state st;
	int err;

	switch (q->op) {
	case F2FS_QUOTACTL_GETNEXT:
	{
		/* Q_GETNEXTQUOTA is the administrator's; others get their own id
		 * (Q_GETQUOTA): asked for it, answered with it or -ENOENT */
		bool admin = f2fs_caller_capable(who, F2FS_CAP_SYS_ADMIN);

		if (!admin && !may_read(who, req, q->type, q->id))
			return -EPERM;
		err = f2fs_quota_get_next(fs->sb, (int)q->type, q->id, &u);
		if (err)
			return err;
		if (!admin && u.id != q->id)
			return -ENOENT;
	}
		q->id = u.id;
		q->curspace = u.curspace;
		q->bsoftlimit = u.bsoftlimit;
		q->bhardlimit = u.bhardlimit;
		q->curinodes = u.curinodes;
		q->isoftlimit = u.isoftlimit;
		q->ihardlimit = u.ihardlimit;
		q->btime = u.btime;
		q->itime = u.itime;
		return 0;
	case F2FS_QUOTACTL_GETINFO:
		err = f2fs_quota_info(fs->sb, (int)q->type, &st);
		if (err)
			return err;
		q->bgrace = st.bgrace;
		q->igrace = st.igrace;
		q->info_flags = (st.enforced ? F2FS_QUOTACTL_ENFORCED : 0) |
				(st.need_repair ? F2FS_QUOTACTL_NEED_REPAIR : 0);
		return 0;
	case F2FS_QUOTACTL_SETLIMITS:
	case F2FS_QUOTACTL_SETGRACE:
		if (!f2fs_caller_capable(who, F2FS_CAP_SYS_ADMIN))
			return -EPERM;
		if (fs->readonly || atomic_load(&fs->vfs_readonly))
			return -EROFS;
		if (q->op == F2FS_QUOTACTL_SETLIMITS)
			err = f2fs_quota_set_limits(fs->sb, (int)q->type, q->id, q->bsoftlimit,
						    q->bhardlimit, q->isoftlimit, q->ihardlimit);
		else
			err = f2fs_quota_set_grace(fs->sb, (int)q->type, q->bgrace, q->igrace);
		if (!err)
			err = f2fs_sync_fs(fs->sb, false);
		return err;
	default:
		return -EINVAL;
	}
}

bool f2fs_fuse_quotactl_ioctl(fuse_req_t req, unsigned int cmd, const void *in_buf,
			      size_t in_bufsz, size_t out_bufsz)
{
	struct f2fs_fuse *fs = fuse_req_userdata(req);
	struct f2fs_caller who;
	struct f2fs_quotactl q;
	int err;

	if (cmd != (unsigned int)F2FS_IOC_QUOTACTL)
		return false;
	if (in_bufsz < sizeof(q) || out_bufsz < sizeof(q)) {
		fuse_reply_err(req, EINVAL);
		return true;
	}
	memcpy(&q, in_buf, sizeof(q));
	if (q.reserved[0] || q.reserved[1]) {
		fuse_reply_err(req, EINVAL);
		return true;
	}
	f2fs_caller_from_req(&who, req);
	err = handle(req, fs, &who, &q);
	f2fs_caller_done(&who);
	if (err)
		f2fs_fuse_reply_err(req, err);
	else
		fuse_reply_ioctl(req, 0, &q, sizeof(q));
	return true;
}
