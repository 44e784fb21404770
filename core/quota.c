// SPDX-License-Identifier: GPL-2.0
/*
 * The quota files of a quota_ino filesystem (the kernel's f2fs_quota_read,
 * f2fs_quota_write, f2fs_quota_sync, f2fs_ioc_setproject is file.c's): the superblock's
 * qf_ino[] name a regular file per type (user, group, project) holding a v2
 * quota tree.  A writable mount reads them once, dquot.c keeps the usage
 * from then on, and every checkpoint writes the changed ones back through
 * the ordinary write path, out of place, before its node blocks go out: a
 * checkpoint's quota files always count what that checkpoint holds, and
 * roll-forward recovery charges what it replays on top.  A file that
 * cannot be read or written leaves CP_QUOTA_NEED_FSCK_FLAG for fsck.f2fs,
 * as the kernel's SBI_QUOTA_NEED_REPAIR does.  Also the report and the
 * limits that f2fs-fusectl quota shows and sets (quotactl cannot cross FUSE).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "f2fs.h"

#define QUOTA_FILE_MAX	(64u << 20)	/* far above any real tree; bounds the read */

static const char *const type_name[F2FS_MAX_QUOTAS] = { "user", "group", "project" };

static int read_file(struct f2fs_sb *sb, int type, uint32_t ino, uint8_t **out, size_t *len)
{
	struct f2fs_inode *inode;
	uint8_t *buf = NULL;
	ssize_t r;
	int err = f2fs_iget(sb, ino, &inode);

	if (err)
		return err;
	if (!S_ISREG(inode->mode) || inode->size > QUOTA_FILE_MAX ||
	    (inode->inline_flags & F2FS_INLINE_DATA) || f2fs_is_encrypted(inode)) {
		f2fs_err(sb, "%s quota file (inode %u) is not a plain regular file of at most "
			 "%u bytes", type_name[type], ino, QUOTA_FILE_MAX);
		err = -EUCLEAN;
		goto out;
	}
	buf = malloc(inode->size ? inode->size : 1);
	if (!buf) {
		err = -ENOMEM;
		goto out;
	}
	r = f2fs_file_read(sb, inode, buf, inode->size, 0);
	if (r < 0)
		err = (int)r;
	else if ((uint64_t)r != inode->size)
		err = -EIO;
	if (!err) {
		*out = buf;
		*len = inode->size;
		buf = NULL;
	}
out:
	free(buf);
	f2fs_iput(sb, inode);
	return err;
}

/*
 * At mount, before orphans are freed and fsync()ed data replayed: both
 * change usage.  A file that does not parse turns quota off for this mount
 * and leaves the repair to fsck (f2fs_enable_quotas does the same).
 */
int f2fs_quota_load(struct f2fs_sb *sb)
{
	struct f2fs_quota *q = &sb->quota;
	int err = 0;

	/* loaded already (a remount read-write that failed after it, tried again) */
	if (!f2fs_has_feature(sb, F2FS_FEATURE_QUOTA_INO) || q->on)
		return 0;
	if (f2fs_cp_flag(sb, CP_QUOTA_NEED_FSCK_FLAG)) {
		f2fs_warn(sb, "quota: the checkpoint asks for fsck of the quota files; they are "
			  "left as they are until fsck.f2fs repairs them");
		q->need_repair = true;
	}
	for (int t = 0; t < F2FS_MAX_QUOTAS; t++) {
		uint32_t ino = get_le32(sb->raw_sb + SB_QF_INO + 4 * t);
		struct f2fs_quota_type *qt = &q->t[t];

		if (!ino)
			continue;
		if (ino >= sb->max_nid) {
			err = f2fs_corrupted(sb, "superblock: %s quota inode %u out of range",
					     type_name[t], ino);
			break;
		}
		qt->ino = ino;
		err = read_file(sb, t, ino, &qt->image, &qt->image_len);
		if (!err)
			err = f2fs_qtree_parse(sb, t, qt->image, qt->image_len, qt);
		if (err)
			break;
	}
	if (err == -ENOMEM)
		return err;
	if (err) {
		f2fs_err(sb, "quota: the quota files cannot be read (%s): usage is not tracked "
			 "on this mount; run fsck.f2fs", strerror(-err));
		for (int t = 0; t < F2FS_MAX_QUOTAS; t++)
			sb->quota.t[t].ino = 0;
		q->need_repair = true;
		return 0;
	}
	q->on = true;
	return 0;
}

/* Limits count from the end of recovery on: what it replays was allowed once. */
void f2fs_quota_enforce(struct f2fs_sb *sb)
{
	for (int t = 0; t < F2FS_MAX_QUOTAS; t++)
		sb->quota.t[t].enforce = sb->quota.t[t].ino && (sb->opts.quota_limits & (1u << t));
}

/* Write qt's file out of place where it changed; the quota inode is under
 * f2fs_lock_all with the rest of the filesystem, so nothing else holds it. */
static int write_file(struct f2fs_sb *sb, struct f2fs_quota_type *qt, uint8_t *img, size_t len)
{
	struct f2fs_inode *inode;
	int err = f2fs_iget(sb, qt->ino, &inode);

	if (err)
		return err;
	pthread_rwlock_wrlock(&inode->lock);
	for (size_t off = 0; !err && off < len; off += F2FS_BLKSIZE) {
		size_t n = F2FS_MIN((size_t)F2FS_BLKSIZE, len - off);

		if (off + n <= qt->image_len && !memcmp(img + off, qt->image + off, n))
			continue;
		err = f2fs_write_blocks(sb, inode, img + off, n, off, NULL);
	}
	if (!err && len < inode->size)
		err = f2fs_truncate(sb, inode, len);
	if (!err && len != inode->size) {
		inode->size = len;
		err = f2fs_mark_inode_dirty(sb, inode);
	}
	if (!err) {
		struct f2fs_timespec now;

		f2fs_now(&now);
		f2fs_inode_set_time(inode, F2FS_TIME_MTIME, &now);
		f2fs_inode_set_time(inode, F2FS_TIME_CTIME, &now);
		err = f2fs_mark_inode_dirty(sb, inode);
	}
	pthread_rwlock_unlock(&inode->lock);
	f2fs_iput(sb, inode);
	return err;
}

int f2fs_quota_sync(struct f2fs_sb *sb)
{
	struct f2fs_quota *q = &sb->quota;

	if (!q->on || q->need_repair)
		return 0;
	for (int t = 0; t < F2FS_MAX_QUOTAS; t++) {
		struct f2fs_quota_type *qt = &q->t[t];
		uint8_t *img;
		size_t len;
		int err;

		if (!qt->ino || !qt->dirty)
			continue;
		pthread_mutex_lock(&q->lock);
		err = f2fs_qtree_build(t, qt, &img, &len);
		pthread_mutex_unlock(&q->lock);
		if (!err && (len != qt->image_len || memcmp(img, qt->image, len)))
			err = write_file(sb, qt, img, len);
		if (err) {
			free(img);
			/* the kernel's f2fs_quota_sync failing: the checkpoint goes on */
			f2fs_err(sb, "quota: writing the %s quota file failed: %s; fsck.f2fs will "
				 "have to repair it", type_name[t], strerror(-err));
			q->need_repair = true;
			return 0;
		}
		free(qt->image);
		qt->image = img;
		qt->image_len = len;
		qt->dirty = false;
	}
	return 0;
}

/* ======================= reports and limits ======================= */

static int check_type(struct f2fs_sb *sb, int type)
{
	if (type < 0 || type >= F2FS_MAX_QUOTAS)
		return -EINVAL;
	if (!sb->quota.on || !sb->quota.t[type].ino)
		return -ESRCH;	/* what quotactl says of a type that is off */
	return 0;
}

static void to_usage(const struct f2fs_dquot *dq, struct f2fs_quota_usage *u)
{
	u->id = dq->id;
	u->curspace = dq->curspace;
	u->bsoftlimit = dq->bsoftlimit;
	u->bhardlimit = dq->bhardlimit;
	u->curinodes = dq->curinodes;
	u->isoftlimit = dq->isoftlimit;
	u->ihardlimit = dq->ihardlimit;
	u->btime = dq->btime;
	u->itime = dq->itime;
}

int f2fs_quota_get_next(struct f2fs_sb *sb, int type, uint32_t id, struct f2fs_quota_usage *u)
{
	struct f2fs_quota_type *qt;
	int err = check_type(sb, type);

	if (err)
		return err;
	qt = &sb->quota.t[type];
	err = -ENOENT;
	pthread_mutex_lock(&sb->quota.lock);
	for (size_t i = 0; i < qt->n; i++) {
		const struct f2fs_dquot *dq = &qt->dq[i];

		/* Q_GETNEXTQUOTA: ids without usage or limits are not there */
		if (dq->id < id || !(dq->curspace || dq->curinodes || dq->bhardlimit ||
				     dq->bsoftlimit || dq->ihardlimit || dq->isoftlimit))
			continue;
		to_usage(dq, u);
		err = 0;
		break;
	}
	pthread_mutex_unlock(&sb->quota.lock);
	return err;
}

int f2fs_quota_info(struct f2fs_sb *sb, int type, struct f2fs_quota_state *st)
{
	int err = check_type(sb, type);

	if (err)
		return err;
	st->bgrace = sb->quota.t[type].bgrace;
	st->igrace = sb->quota.t[type].igrace;
	st->enforced = sb->quota.t[type].enforce;
	st->need_repair = sb->quota.need_repair;
	return 0;
}

/* dquot_set_dqblk: new limits; a grace period starts or ends with them */
int f2fs_quota_set_limits(struct f2fs_sb *sb, int type, uint32_t id, uint64_t bsoft,
			  uint64_t bhard, uint64_t isoft, uint64_t ihard)
{
	struct f2fs_quota_type *qt;
	struct f2fs_dquot *dq;
	int64_t now = (int64_t)time(NULL);
	int err = check_type(sb, type);

	if (err)
		return err;
	if (!f2fs_writable(sb))
		return -EROFS;
	qt = &sb->quota.t[type];
	pthread_mutex_lock(&sb->quota.lock);
	dq = f2fs_dquot_get(qt, id);
	if (!dq) {
		pthread_mutex_unlock(&sb->quota.lock);
		return -ENOMEM;
	}
	dq->bsoftlimit = bsoft;
	dq->bhardlimit = bhard;
	dq->isoftlimit = isoft;
	dq->ihardlimit = ihard;
	if (!bsoft || dq->curspace <= bsoft)
		dq->btime = 0;
	else if (!dq->btime)
		dq->btime = now + qt->bgrace;
	if (!isoft || dq->curinodes <= isoft)
		dq->itime = 0;
	else if (!dq->itime)
		dq->itime = now + qt->igrace;
	qt->dirty = true;
	pthread_mutex_unlock(&sb->quota.lock);
	return 0;
}

int f2fs_quota_set_grace(struct f2fs_sb *sb, int type, uint32_t bgrace, uint32_t igrace)
{
	int err = check_type(sb, type);

	if (err)
		return err;
	if (!f2fs_writable(sb))
		return -EROFS;
	pthread_mutex_lock(&sb->quota.lock);
	sb->quota.t[type].bgrace = bgrace;
	sb->quota.t[type].igrace = igrace;
	sb->quota.t[type].dirty = true;
	pthread_mutex_unlock(&sb->quota.lock);
	return 0;
}

void f2fs_quota_statfs_project(struct f2fs_sb *sb, uint32_t ino, struct f2fs_statfs *st)
{
	struct f2fs_quota_type *qt = &sb->quota.t[F2FS_PRJQUOTA];
	struct f2fs_inode *inode;
	bool inherit;
	uint32_t projid;

	if (!sb->quota.on || !qt->ino || !qt->enforce || f2fs_iget_req(sb, ino, &inode))
		return;
	pthread_rwlock_rdlock(&inode->lock);
	inherit = inode->flags & F2FS_PROJINHERIT_FL;
	projid = inode->projid;
	pthread_rwlock_unlock(&inode->lock);
	f2fs_iput(sb, inode);
	if (!inherit)
		return;
	pthread_mutex_lock(&sb->quota.lock);
	for (size_t i = 0; i < qt->n; i++) {
		const struct f2fs_dquot *dq = &qt->dq[i];
		uint64_t limit, used;

		if (dq->id != projid)
			continue;
		/* min_not_zero of the soft and hard limits, in blocks */
		limit = dq->bsoftlimit && dq->bhardlimit ? F2FS_MIN(dq->bsoftlimit, dq->bhardlimit) :
			dq->bsoftlimit | dq->bhardlimit;
		limit /= st->bsize;
		if (limit && st->blocks > limit) {
			used = dq->curspace / st->bsize;
			st->blocks = limit;
			st->bfree = st->bavail = limit > used ? limit - used : 0;
		}
		limit = dq->isoftlimit && dq->ihardlimit ? F2FS_MIN(dq->isoftlimit, dq->ihardlimit) :
			dq->isoftlimit | dq->ihardlimit;
		if (limit && st->files > limit) {
			st->files = limit;
			st->ffree = limit > dq->curinodes ? limit - dq->curinodes : 0;
		}
		break;
	}
	pthread_mutex_unlock(&sb->quota.lock);
}

bool f2fs_quota_enforced(const struct f2fs_sb *sb)
{
	for (int t = 0; t < F2FS_MAX_QUOTAS; t++)
		if (sb->quota.t[t].enforce)
			return true;
	return false;
}
