// SPDX-License-Identifier: GPL-2.0
/*
 * The v2 quota tree (quota_tree.c) and the quota files of a writable
 * memory mount (dquot.c, quota.c): trees built for many ids parse back to
 * the same table; files that lie are refused, not followed; a mount of a
 * quota_ino image counts new inodes and blocks; a quota file that cannot
 * be read leaves CP_QUOTA_NEED_FSCK_FLAG behind.
 */
#include "rwimage.h"

#include "api.h"

#define QBLK 1024

static void fill(struct f2fs_quota_type *qt, uint32_t id, uint64_t k)
{
	struct f2fs_dquot *dq = f2fs_dquot_get(qt, id);

	dq->curspace = k * 4096;
	dq->curinodes = k + 1;
	dq->bhardlimit = (k % 3) * 1024 * 1024;
	dq->bsoftlimit = (k % 5) * 4096;
	dq->ihardlimit = k % 7;
	dq->isoftlimit = k % 2;
	dq->btime = (int64_t)k * 11;
	dq->itime = (int64_t)k * 13;
}

static void round_trip(struct f2fs_sb *sb)
{
	/* ids that share tree levels and ids that do not; more than one data block */
	static const uint32_t ids[] = { 0, 1, 2, 255, 256, 257, 1000, 65535, 65536, 0x10000ff,
					0x7fffffff, 0xfffffffe, 0xffffffff };
	struct f2fs_quota_type a = { 0 }, b = { 0 };
	uint8_t *img;
	size_t len;
	int err;

	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++)
		fill(&a, ids[i], i + 1);
	for (uint32_t i = 0; i < 40; i++)
		fill(&a, 5000 + i, i + 20);
	f2fs_dquot_get(&a, 77);		/* nothing in it: not written */
	a.bgrace = 3600;
	a.igrace = 60;
	err = f2fs_qtree_build(F2FS_GRPQUOTA, &a, &img, &len);
	CHECK(err == 0, "build: %d", err);
	if (err)
		goto out;
	CHECK(len % QBLK == 0 && len >= 6 * QBLK, "file of %zu bytes", len);
	CHECK(get_le32(img) == 0xd9c01927 && get_le32(img + 4) == 1, "group magic, version 1");
	CHECK(get_le32(img + 8 + 12) == len / QBLK, "dqi_blocks is the file's");
	err = f2fs_qtree_parse(sb, F2FS_GRPQUOTA, img, len, &b);
	CHECK(err == 0, "parse: %d", err);
	CHECK(b.n == a.n - 1, "%zu entries back of %zu", b.n, a.n - 1);
	CHECK(b.bgrace == 3600 && b.igrace == 60, "grace times %u %u", b.bgrace, b.igrace);
	for (size_t i = 0, j = 0; i < a.n && j < b.n; i++) {
		if (a.dq[i].id == 77)
			continue;
		CHECK(memcmp(&a.dq[i], &b.dq[j], sizeof(a.dq[i])) == 0, "id %u comes back the same",
		      a.dq[i].id);
		j++;
	}
	/* the same table builds the same file */
	{
		uint8_t *again;
		size_t len2;

		CHECK(f2fs_qtree_build(F2FS_GRPQUOTA, &b, &again, &len2) == 0 && len2 == len &&
		      memcmp(again, img, len) == 0, "rebuilt file identical");
		free(again);
	}
	/* another type's magic is refused */
	{
		struct f2fs_quota_type c = { 0 };

		CHECK(f2fs_qtree_parse(sb, F2FS_USRQUOTA, img, len, &c) == -EUCLEAN,
		      "group file read as a user file");
		free(c.dq);
	}
	free(img);
out:
	free(a.dq);
	free(b.dq);
}

static void lies(struct f2fs_sb *sb)
{
	struct f2fs_quota_type a = { 0 };
	uint8_t *img, *bad;
	size_t len;

	fill(&a, 1000, 3);
	if (f2fs_qtree_build(F2FS_USRQUOTA, &a, &img, &len)) {
		CHECK(0, "build");
		free(a.dq);
		return;
	}
	bad = malloc(len);
	/* a tree reference past the file, to the header, to the root */
	static const uint32_t refs[] = { 100000, 0x7fffffff, 1 };
	for (size_t i = 0; i < sizeof(refs) / sizeof(refs[0]); i++) {
		struct f2fs_quota_type c = { 0 };

		memcpy(bad, img, len);
		put_le32(bad + QBLK, refs[i]);
		CHECK(f2fs_qtree_parse(sb, F2FS_USRQUOTA, bad, len, &c) == -EUCLEAN,
		      "root refers to block %u", refs[i]);
		free(c.dq);
	}
	/* more blocks claimed than the file has; a file cut short */
	{
		struct f2fs_quota_type c = { 0 };

		memcpy(bad, img, len);
		put_le32(bad + 8 + 12, (uint32_t)(len / QBLK + 1));
		CHECK(f2fs_qtree_parse(sb, F2FS_USRQUOTA, bad, len, &c) == -EUCLEAN, "dqi_blocks");
		CHECK(f2fs_qtree_parse(sb, F2FS_USRQUOTA, img, QBLK, &c) == -EUCLEAN, "short");
		free(c.dq);
	}
	free(bad);
	free(img);
	free(a.dq);
}

static const struct f2fs_dquot *usage(struct f2fs_sb *sb, int type, uint32_t id)
{
	struct f2fs_quota_type *qt = &sb->quota.t[type];

	for (size_t i = 0; i < qt->n; i++)
		if (qt->dq[i].id == id)
			return &qt->dq[i];
	return NULL;
}

/*
 * CAP_SYS_RESOURCE (F2FS_PRIV_QUOTA) passes hard limits, as the kernel's
 * ignore_hardlimit: creating, writing and chown past them; without it,
 * EDQUOT and nothing changes.
 */
static void privileged(struct f2fs_sb *sb)
{
	struct f2fs_cred cred = { .uid = 4321, .gid = 4321 };
	struct f2fs_cred root = { .uid = 0, .gid = 0 };
	struct f2fs_setattr sa = { .valid = F2FS_SET_UID, .uid = 4321 };
	static uint8_t data[16384];
	const struct f2fs_dquot *dq;
	struct f2fs_stat st, f, g;
	uint32_t dir = f2fs_root_ino(sb);
	ssize_t n;
	int err;

	sb->quota.t[F2FS_USRQUOTA].enforce = true;
	err = f2fs_quota_set_limits(sb, F2FS_USRQUOTA, 4321, 0, 8192, 0, 2);
	CHECK(err == 0, "limits: %d", err);
	CHECK(f2fs_mkdir(sb, dir, "p1", 2, 0755, &cred, &st) == 0, "mkdir 1 of 2");
	CHECK(f2fs_mknod(sb, dir, "p2", 2, S_IFREG | 0644, 0, 0, &cred, &f) == 0, "create 2 of 2");
	err = f2fs_mkdir(sb, dir, "p3", 2, 0755, &cred, &st);
	CHECK(err == -EDQUOT, "a third inode: %d", err);
	CHECK(f2fs_lookup(sb, dir, "p3", 2, &st) == -ENOENT, "and nothing was made");
	cred.priv = F2FS_PRIV_QUOTA;
	err = f2fs_mkdir(sb, dir, "p3", 2, 0755, &cred, &st);
	CHECK(err == 0, "a third inode with CAP_SYS_RESOURCE: %d", err);
	n = f2fs_write(sb, f.ino, data, sizeof(data), 0);
	CHECK(n == -EDQUOT || (n >= 0 && n <= 8192), "16 KiB past an 8 KiB limit: %zd", n);
	n = f2fs_write_as(sb, f.ino, data, sizeof(data), 0, F2FS_PRIV_QUOTA);
	CHECK(n == (ssize_t)sizeof(data), "the same with CAP_SYS_RESOURCE: %zd", n);
	CHECK(f2fs_mknod(sb, dir, "p4", 2, S_IFREG | 0644, 0, 0, &root, &g) == 0, "root's file");
	err = f2fs_setattr(sb, g.ino, &sa, &st);
	CHECK(err == -EDQUOT, "chown into the full user: %d", err);
	sa.priv = F2FS_PRIV_QUOTA;
	err = f2fs_setattr(sb, g.ino, &sa, &st);
	CHECK(err == 0 && st.uid == 4321, "and with CAP_SYS_RESOURCE: %d", err);
	dq = usage(sb, F2FS_USRQUOTA, 4321);
	CHECK(dq && dq->curinodes == 4 && dq->curspace >= sizeof(data),
	      "usage past the limits is counted: %llu inodes, %llu bytes",
	      dq ? (unsigned long long)dq->curinodes : 0, dq ? (unsigned long long)dq->curspace : 0);
	sb->quota.t[F2FS_USRQUOTA].enforce = false;
	for (int i = 1; i <= 4; i++) {
		char name[3] = { 'p', (char)('0' + i), 0 };

		err = i == 1 || i == 3 ? f2fs_rmdir(sb, dir, name, 2) : f2fs_unlink(sb, dir, name, 2);
		CHECK(err == 0, "remove %s: %d", name, err);
	}
	CHECK(f2fs_quota_set_limits(sb, F2FS_USRQUOTA, 4321, 0, 0, 0, 0) == 0, "limits off");
}

static void mounted(struct rwimage *im)
{
	struct f2fs_cred cred = { .uid = 1234, .gid = 99 };
	struct f2fs_stat st;
	const struct f2fs_dquot *dq;
	uint32_t qino, pblk, n;
	struct f2fs_inode *qi;
	int err;

	CHECK(im->sb->quota.on, "quota kept on a quota_ino image");
	err = f2fs_mkdir(im->sb, f2fs_root_ino(im->sb), "d", 1, 0755, &cred, &st);
	CHECK(err == 0, "mkdir: %d", err);
	dq = usage(im->sb, F2FS_USRQUOTA, 1234);
	CHECK(dq && dq->curinodes == 1 && dq->curspace == 0, "the new inline directory is counted");
	dq = usage(im->sb, F2FS_GRPQUOTA, 99);
	CHECK(dq && dq->curinodes == 1, "and its group");
	CHECK(f2fs_umount(im->sb) == 0, "unmount");
	im->sb = NULL;
	CHECK(rw_fsck_clean(im), "fsck.f2fs agrees with the quota files");
	CHECK(rw_mount(im) == 0, "mount again");
	if (!im->sb)
		return;
	dq = usage(im->sb, F2FS_USRQUOTA, 1234);
	CHECK(dq && dq->curinodes == 1, "the count is in the file after a remount");

	/* a quota file that does not parse: quota off, CP_QUOTA_NEED_FSCK_FLAG */
	qino = im->sb->quota.t[F2FS_USRQUOTA].ino;
	if (f2fs_iget(im->sb, qino, &qi)) {
		CHECK(0, "iget of the user quota file");
		return;
	}
	err = f2fs_map_blocks(im->sb, qi, 0, 1, &pblk, &n);
	f2fs_iput(im->sb, qi);
	CHECK(err == 0, "map");
	CHECK(f2fs_umount(im->sb) == 0, "unmount");
	im->sb = NULL;
	put_le32(im->buf + (size_t)pblk * F2FS_BLKSIZE, 0x12345678);
	rw_nr_errors = 0;
	CHECK(rw_mount(im) == 0, "a bad quota file does not stop the mount");
	if (!im->sb)
		return;
	CHECK(!im->sb->quota.on && im->sb->quota.need_repair, "quota off, repair needed");
	CHECK(rw_nr_errors > 0, "and said so");
	err = rw_remount(im);
	CHECK(err == 0, "remount: %d (%s)", err, rw_last_error);
	CHECK(im->sb && f2fs_cp_flag(im->sb, CP_QUOTA_NEED_FSCK_FLAG),
	      "the checkpoint asks fsck for the quota files");
	/* fsck rewrites the file; leave it out of the clean check */
	f2fs_umount(im->sb);
	im->sb = NULL;
}

int main(void)
{
	struct rwimage im;

	if (!rw_image(&im, "extra_attr,project_quota,quota", 64))
		return check_done("test_quota");
	round_trip(im.sb);
	lies(im.sb);
	/* a lying quota file is the quota's business, not a corrupt filesystem */
	CHECK(!atomic_load(&im.sb->need_fsck), "need_fsck stays clear");
	CHECK(rw_remount(&im) == 0, "remount");
	if (im.sb)
		privileged(im.sb);
	if (im.sb)
		mounted(&im);
	rw_free(&im);
	return check_done("test_quota");
}
