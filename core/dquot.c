// SPDX-License-Identifier: GPL-2.0
/*
 * Quota usage and limits in memory, charged as the kernel's fs/quota/dquot.c
 * charges them for f2fs: every block an inode gains or loses (data, node,
 * xattr node, NEW_ADDR reservations) is 4 KiB of space for its user, group
 * and project; every inode is one inode.  What fsck.f2fs recomputes is the
 * same sum: (i_blocks - 1) blocks and one inode per inode, so the tables
 * stay equal to it as long as every change to i_blocks comes through here.
 * The quota files (quota.c) are written from these tables at checkpoints.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "f2fs.h"

void f2fs_dquot_init(struct f2fs_sb *sb)
{
	pthread_mutex_init(&sb->quota.lock, NULL);
}

void f2fs_dquot_destroy(struct f2fs_sb *sb)
{
	for (int t = 0; t < F2FS_MAX_QUOTAS; t++) {
		free(sb->quota.t[t].dq);
		free(sb->quota.t[t].image);
		sb->quota.t[t].dq = NULL;
		sb->quota.t[t].image = NULL;
	}
	pthread_mutex_destroy(&sb->quota.lock);
}

bool f2fs_is_quota_file(const struct f2fs_sb *sb, uint32_t ino)
{
	for (int t = 0; t < F2FS_MAX_QUOTAS; t++)
		if (sb->quota.t[t].ino && sb->quota.t[t].ino == ino)
			return true;
	return false;
}

static void inode_ids(const struct f2fs_inode *inode, uint32_t ids[F2FS_MAX_QUOTAS])
{
	ids[F2FS_USRQUOTA] = inode->uid;
	ids[F2FS_GRPQUOTA] = inode->gid;
	ids[F2FS_PRJQUOTA] = inode->projid;
}

struct f2fs_dquot *f2fs_dquot_get(struct f2fs_quota_type *qt, uint32_t id)
{
	size_t lo = 0, hi = qt->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (qt->dq[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < qt->n && qt->dq[lo].id == id)
		return &qt->dq[lo];
	if (qt->n == qt->cap) {
		size_t cap = qt->cap ? qt->cap * 2 : 16;
		struct f2fs_dquot *dq = realloc(qt->dq, cap * sizeof(*dq));

		if (!dq)
			return NULL;
		qt->dq = dq;
		qt->cap = cap;
	}
	memmove(&qt->dq[lo + 1], &qt->dq[lo], (qt->n - lo) * sizeof(*qt->dq));
	qt->n++;
	memset(&qt->dq[lo], 0, sizeof(qt->dq[lo]));
	qt->dq[lo].id = id;
	return &qt->dq[lo];
}

static int64_t now_sec(void)
{
	return (int64_t)time(NULL);
}

/*
 * check_bdq and check_idq: may usage cur take n more against these limits?
 * Passing the soft limit the first time starts its grace period (*deadline).
 * priv is ignore_hardlimit (CAP_SYS_RESOURCE): the hard limit and an expired
 * grace period do not refuse, but the grace period still starts.
 */
static int check_limit(const struct f2fs_quota_type *qt, uint64_t cur, uint64_t n, uint64_t hard,
		       uint64_t soft, int64_t *deadline, uint32_t grace, bool priv)
{
	uint64_t total = cur + n;

	if (!qt->enforce)
		return 0;
	if (hard && total > hard && !priv)
		return -EDQUOT;
	if (soft && total > soft) {
		if (*deadline && now_sec() >= *deadline && !priv)
			return -EDQUOT;
		if (!*deadline)
			*deadline = now_sec() + grace;
	}
	return 0;
}

static int check_space(struct f2fs_quota_type *qt, struct f2fs_dquot *dq, uint64_t space,
		       bool priv)
{
	return check_limit(qt, dq->curspace, space, dq->bhardlimit, dq->bsoftlimit, &dq->btime,
			   qt->bgrace, priv);
}

static int check_inodes(struct f2fs_quota_type *qt, struct f2fs_dquot *dq, uint64_t n, bool priv)
{
	return check_limit(qt, dq->curinodes, n, dq->ihardlimit, dq->isoftlimit, &dq->itime,
			   qt->igrace, priv);
}

/* dquot_decr_space / dquot_decr_inodes: below the soft limit, no grace runs */
static void sub_usage(uint64_t *cur, uint64_t n, uint64_t soft, int64_t *deadline)
{
	*cur = *cur > n ? *cur - n : 0;
	if (*cur <= soft)
		*deadline = 0;
}

static void sub_space(struct f2fs_dquot *dq, uint64_t space)
{
	sub_usage(&dq->curspace, space, dq->bsoftlimit, &dq->btime);
}

static void sub_inodes(struct f2fs_dquot *dq, uint64_t n)
{
	sub_usage(&dq->curinodes, n, dq->isoftlimit, &dq->itime);
}

static bool charged(const struct f2fs_sb *sb, const struct f2fs_inode *inode)
{
	return sb->quota.on && !f2fs_is_quota_file(sb, inode->ino);
}

/*
 * Charge space bytes and n inodes to the ids, all types or none: the limits
 * of every type are checked before anything changes.  Without memory for a
 * new id the usage cannot be kept: the files then need fsck.
 */
static int charge(struct f2fs_sb *sb, const uint32_t ids[F2FS_MAX_QUOTAS], uint64_t space,
		  uint64_t n, bool priv)
{
	struct f2fs_dquot *dq[F2FS_MAX_QUOTAS] = { NULL };
	int err = 0;

	pthread_mutex_lock(&sb->quota.lock);
	for (int t = 0; t < F2FS_MAX_QUOTAS; t++) {
		struct f2fs_quota_type *qt = &sb->quota.t[t];

		if (!qt->ino)
			continue;
		dq[t] = f2fs_dquot_get(qt, ids[t]);
		if (!dq[t]) {
			sb->quota.need_repair = true;
			continue;
		}
		if (!err && space)
			err = check_space(qt, dq[t], space, priv);
		if (!err && n)
			err = check_inodes(qt, dq[t], n, priv);
	}
	for (int t = 0; !err && t < F2FS_MAX_QUOTAS; t++) {
		if (!dq[t])
			continue;
		dq[t]->curspace += space;
		dq[t]->curinodes += n;
		sb->quota.t[t].dirty = true;
	}
	pthread_mutex_unlock(&sb->quota.lock);
	return err;
}

static void uncharge(struct f2fs_sb *sb, const uint32_t ids[F2FS_MAX_QUOTAS], uint64_t space,
		     uint64_t n)
{
	pthread_mutex_lock(&sb->quota.lock);
	for (int t = 0; t < F2FS_MAX_QUOTAS; t++) {
		struct f2fs_quota_type *qt = &sb->quota.t[t];
		struct f2fs_dquot *dq;

		if (!qt->ino)
			continue;
		dq = f2fs_dquot_get(qt, ids[t]);
		if (!dq) {
			sb->quota.need_repair = true;
			continue;
		}
		if (dq->curspace < space || dq->curinodes < n) {
			/* more freed than was charged: the file was wrong before */
			f2fs_warn(sb, "quota: id %u of type %d frees more than it was charged",
				  ids[t], t);
			sb->quota.need_repair = true;
		}
		sub_space(dq, space);
		sub_inodes(dq, n);
		qt->dirty = true;
	}
	pthread_mutex_unlock(&sb->quota.lock);
}

int f2fs_dquot_alloc_block(struct f2fs_sb *sb, const struct f2fs_inode *inode, uint64_t n)
{
	uint32_t ids[F2FS_MAX_QUOTAS];

	if (!charged(sb, inode) || !n)
		return 0;
	inode_ids(inode, ids);
	return charge(sb, ids, n * F2FS_BLKSIZE, 0, inode->dq_priv);
}

void f2fs_dquot_free_block(struct f2fs_sb *sb, const struct f2fs_inode *inode, uint64_t n)
{
	uint32_t ids[F2FS_MAX_QUOTAS];

	if (!charged(sb, inode) || !n)
		return;
	inode_ids(inode, ids);
	uncharge(sb, ids, n * F2FS_BLKSIZE, 0);
}

int f2fs_dquot_alloc_inode(struct f2fs_sb *sb, const struct f2fs_inode *inode)
{
	uint32_t ids[F2FS_MAX_QUOTAS];

	if (!charged(sb, inode))
		return 0;
	inode_ids(inode, ids);
	return charge(sb, ids, 0, 1, inode->dq_priv);
}

void f2fs_dquot_drop_inode(struct f2fs_sb *sb, const struct f2fs_inode *inode)
{
	uint32_t ids[F2FS_MAX_QUOTAS];

	if (!charged(sb, inode))
		return;
	inode_ids(inode, ids);
	uncharge(sb, ids, inode->blocks > 1 ? (inode->blocks - 1) * F2FS_BLKSIZE : 0, 1);
}

/* __dquot_transfer: the new owners are checked and charged first, then the
 * old ones are relieved; ids that do not change are left alone.  force:
 * no limit refuses (recovery); else inode->dq_priv decides as for a charge. */
int f2fs_dquot_transfer(struct f2fs_sb *sb, const struct f2fs_inode *inode,
			const uint32_t ids[F2FS_MAX_QUOTAS], bool force)
{
	uint32_t old[F2FS_MAX_QUOTAS];
	uint64_t space;
	struct f2fs_dquot *to[F2FS_MAX_QUOTAS] = { NULL }, *from[F2FS_MAX_QUOTAS] = { NULL };
	int err = 0;

	if (!charged(sb, inode))
		return 0;
	inode_ids(inode, old);
	space = inode->blocks > 1 ? (inode->blocks - 1) * F2FS_BLKSIZE : 0;
	pthread_mutex_lock(&sb->quota.lock);
	for (int t = 0; t < F2FS_MAX_QUOTAS; t++) {
		struct f2fs_quota_type *qt = &sb->quota.t[t];

		if (!qt->ino || old[t] == ids[t])
			continue;
		to[t] = f2fs_dquot_get(qt, ids[t]);
		if (!to[t]) {
			err = -ENOMEM;
			break;
		}
		if (!force && !err)
			err = check_space(qt, to[t], space, inode->dq_priv);
		if (!force && !err)
			err = check_inodes(qt, to[t], 1, inode->dq_priv);
		if (err)
			break;
	}
	/* the old entries are looked up after every insertion that could move them */
	for (int t = 0; !err && t < F2FS_MAX_QUOTAS; t++) {
		if (!to[t])
			continue;
		from[t] = f2fs_dquot_get(&sb->quota.t[t], old[t]);
		to[t] = f2fs_dquot_get(&sb->quota.t[t], ids[t]);
		if (!from[t] || !to[t]) {
			err = -ENOMEM;
			break;
		}
	}
	for (int t = 0; !err && t < F2FS_MAX_QUOTAS; t++) {
		if (!to[t])
			continue;
		to[t]->curspace += space;
		to[t]->curinodes += 1;
		sub_space(from[t], space);
		sub_inodes(from[t], 1);
		sb->quota.t[t].dirty = true;
	}
	pthread_mutex_unlock(&sb->quota.lock);
	return err;
}
