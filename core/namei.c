// SPDX-License-Identifier: GPL-2.0
/*
 * Namespace operations: create, mknod, mkdir, symlink, link, unlink,
 * rmdir and rename; an inode whose last name goes is freed at once, or
 * becomes an orphan until its last open handle closes (inode.c).
 *
 * Locking: every operation begins with f2fs_begin_op (cp_rwsem shared, the
 * directory's lock), then takes the child inodes; rename locks its two
 * directories in inode-number order, with rename_lock held across
 * directories.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "f2fs.h"

/*
 * The last link went away: free now, or, as an orphan, once the last open
 * handle is closed and the kernel has forgotten the inode (f2fs_release,
 * f2fs_forget).  Not waiting for the FORGET of a file nobody has open: the
 * kernel sends it only after unlink(2) returns, and its f2fs has the space
 * back by then (rm; df).
 */
static int drop_inode(struct f2fs_sb *sb, struct f2fs_inode *inode)
{
	if (inode->links)
		return f2fs_mark_inode_dirty(sb, inode);
	if (inode->open_count) {
		int err = f2fs_add_orphan(sb, inode->ino);

		return err ? err : f2fs_mark_inode_dirty(sb, inode);
	}
	return f2fs_evict_inode(sb, inode);
}

/* ---- helpers ---- */

static int get_dir(struct f2fs_sb *sb, uint32_t ino, struct f2fs_inode **out)
{
	int err = f2fs_iget_req(sb, ino, out);

	if (err)
		return err;
	if (!S_ISDIR((*out)->mode)) {
		f2fs_iput(sb, *out);
		return -ENOTDIR;
	}
	return 0;
}

static int check_name(const char *name, size_t len)
{
	if (!len)
		return -ENOENT;
	if (len > F2FS_NAME_LEN)
		return -ENAMETOOLONG;
	if (memchr(name, '/', len) || memchr(name, 0, len))
		return -EINVAL;
	if ((len == 1 && name[0] == '.') || (len == 2 && name[0] == '.' && name[1] == '.'))
		return -EEXIST;
	return 0;
}

/* 0 for a directory holding only "." and "..", else -ENOTEMPTY or the error */
static int must_be_empty(struct f2fs_sb *sb, struct f2fs_inode *dir)
{
	int r = f2fs_empty_dir(sb, dir);

	return r < 0 ? r : r ? 0 : -ENOTEMPTY;
}

/* inode_init_owner: setgid directories pass their group (and the bit to subdirectories). */
static void init_owner(const struct f2fs_inode *dir, uint32_t *mode, const struct f2fs_cred *cred,
		       uint32_t *uid, uint32_t *gid)
{
	*uid = cred->uid;
	*gid = cred->gid;
	if (dir->mode & S_ISGID) {
		*gid = dir->gid;
		if (S_ISDIR(*mode))
			*mode |= S_ISGID;
	} else if (S_ISREG(*mode) && (*mode & S_ISGID) && (*mode & S_IXGRP) && cred->uid != 0 &&
		   !f2fs_cred_in_group(cred, *gid)) {
		*mode &= ~(uint32_t)S_ISGID;
	}
}

bool f2fs_cred_in_group(const struct f2fs_cred *cred, uint32_t gid)
{
	if (cred->gid == gid)
		return true;
	for (int i = 0; i < cred->ngroups; i++)
		if (cred->groups[i] == gid)
			return true;
	return false;
}

/* Write the target of a new symlink as its data (inline when it fits). */
static int write_symlink(struct f2fs_sb *sb, struct f2fs_inode *inode, const char *target,
			 size_t len)
{
	uint8_t disk[F2FS_BLKSIZE];
	ssize_t r;

	if (f2fs_is_encrypted(inode)) {
		/* struct fscrypt_symlink_data, with the symlink's own key */
		int n = f2fs_crypt_symlink(sb, inode, target, len, disk, sizeof(disk));

		if (n < 0)
			return n;
		target = (const char *)disk;
		len = (size_t)n;
	}
	r = f2fs_symlink_write(sb, inode, target, len);
	if (r >= 0 && (size_t)r != len)
		r = -ENOSPC;	/* a symlink is all or nothing */
	return r < 0 ? (int)r : 0;
}

/* IS_DIRSYNC (chattr +D): a change to the directory's names is a checkpoint. */
static int dirsync(struct f2fs_sb *sb, int err, bool sync)
{
	if (!err && sync)
		err = f2fs_sync_fs_data(sb);
	return err;
}

/*
 * Create name in dir: a regular file, device, fifo, socket, directory or
 * symlink.  On success *st describes the new inode.
 */
static int do_create(struct f2fs_sb *sb, uint32_t dir_ino, const char *name, size_t len,
		     uint32_t mode, uint32_t major, uint32_t minor, const char *target,
		     const struct f2fs_cred *cred, struct f2fs_stat *st)
{
	struct f2fs_inode *dir, *inode = NULL;
	uint32_t ino, uid, gid;
	unsigned int ftype;
	bool dsync = false;
	int err = check_name(name, len);

	if (err)
		return err;
	if (!f2fs_writable(sb))
		return f2fs_write_denied(sb);
	if (target && (strlen(target) == 0 || strlen(target) >= F2FS_BLKSIZE))
		return strlen(target) ? -ENAMETOOLONG : -ENOENT;
	err = f2fs_begin_op(sb, dir_ino, F2FS_OP_BALANCE | F2FS_OP_DIR | f2fs_op_priv(cred->priv),
			    &dir);
	if (err)
		return err;
	dsync = dir->flags & F2FS_DIRSYNC_FL;
	if (!dir->links) {
		err = -ENOENT;	/* the directory was removed */
		goto out_dir;
	}
	err = f2fs_dir_lookup(sb, dir, name, len, &ino, &ftype);
	if (err != -ENOENT) {
		if (!err)
			err = -EEXIST;
		goto out_dir;
	}
	if (f2fs_is_immutable(dir)) {
		err = -EPERM;
		goto out_dir;
	}
	init_owner(dir, &mode, cred, &uid, &gid);
	/* posix_acl_create: a default ACL replaces the umask */
	if (!f2fs_has_default_acl(sb, dir) && !S_ISLNK(mode))
		mode &= ~(cred->umask & 0777);
	if (f2fs_is_encrypted(dir)) {
		/* names in it need its key: fail before allocating anything */
		const struct fscrypt_inode_info *dci;

		err = f2fs_get_crypt_info(sb, dir, &dci);
		if (err)
			goto out_dir;
	}
	err = f2fs_new_inode(sb, dir, mode, uid, gid, &inode);
	if (err)
		goto out_dir;
	f2fs_compress_new_inode(sb, dir, inode, name, len);
	err = f2fs_crypt_inherit(sb, dir, inode);
	if (!err)
		err = f2fs_acl_inherit(sb, dir, inode);
	if (err) {
		inode->links = 0;
		f2fs_evict_inode(sb, inode);
		goto out_inode;
	}
	if (S_ISCHR(mode) || S_ISBLK(mode)) {
		uint8_t *a = inode->node + I_ADDR + 4 * f2fs_addr_start(inode);

		if (major < 256 && minor < 256) {		/* old_encode_dev */
			put_le32(a, (major << 8) | minor);
		} else {					/* new_encode_dev */
			put_le32(a, 0);
			put_le32(a + 4, (minor & 0xff) | (major << 8) | ((minor & ~0xffu) << 12));
		}
	}
	if (S_ISDIR(mode))
		err = f2fs_make_empty_dir(sb, inode, dir);
	else if (target)
		err = write_symlink(sb, inode, target, strlen(target));
	/* once linked, others may lock it: its own privilege is theirs */
	inode->dq_priv = false;
	if (!err)
		err = f2fs_add_link(sb, dir, name, len, inode, true);
	if (err) {
		/* undo: the inode was never linked */
		inode->links = 0;
		f2fs_evict_inode(sb, inode);
		goto out_inode;
	}
	f2fs_fill_stat(sb, inode, st);
out_inode:
	f2fs_iput(sb, inode);
out_dir:
	f2fs_end_op(sb, dir);
	return dirsync(sb, err, dsync);
}

int f2fs_mknod(struct f2fs_sb *sb, uint32_t dir, const char *name, size_t len, uint32_t mode,
	       uint32_t major, uint32_t minor, const struct f2fs_cred *cred, struct f2fs_stat *st)
{
	switch (mode & S_IFMT) {
	case 0:
		mode |= S_IFREG;
		break;
	case S_IFREG: case S_IFCHR: case S_IFBLK: case S_IFIFO: case S_IFSOCK:
		break;
	default:
		return -EINVAL;
	}
	return do_create(sb, dir, name, len, mode, major, minor, NULL, cred, st);
}

int f2fs_mkdir(struct f2fs_sb *sb, uint32_t dir, const char *name, size_t len, uint32_t mode,
	       const struct f2fs_cred *cred, struct f2fs_stat *st)
{
	return do_create(sb, dir, name, len, S_IFDIR | (mode & 07777), 0, 0, NULL, cred, st);
}

int f2fs_symlink(struct f2fs_sb *sb, uint32_t dir, const char *name, size_t len,
		 const char *target, const struct f2fs_cred *cred, struct f2fs_stat *st)
{
	return do_create(sb, dir, name, len, S_IFLNK | 0777, 0, 0, target, cred, st);
}

static bool proj_fits(const struct f2fs_inode *dir, const struct f2fs_inode *inode)
{
	return !(dir->flags & F2FS_PROJINHERIT_FL) || dir->projid == inode->projid;
}

int f2fs_link(struct f2fs_sb *sb, uint32_t ino, uint32_t dir_ino, const char *name, size_t len,
	      struct f2fs_stat *st)
{
	return f2fs_link_as(sb, ino, dir_ino, name, len, st, 0);
}

int f2fs_link_as(struct f2fs_sb *sb, uint32_t ino, uint32_t dir_ino, const char *name, size_t len,
		 struct f2fs_stat *st, unsigned int priv)
{
	struct f2fs_inode *dir, *inode;
	struct f2fs_timespec now;
	unsigned int ftype;
	uint32_t other;
	bool dsync = false;
	int err = check_name(name, len);

	if (err)
		return err;
	err = f2fs_begin_op(sb, dir_ino, F2FS_OP_BALANCE | F2FS_OP_DIR | f2fs_op_priv(priv), &dir);
	if (err)
		return err;
	dsync = dir->flags & F2FS_DIRSYNC_FL;
	err = f2fs_iget_req(sb, ino, &inode);
	if (err)
		goto out_dir;
	if (S_ISDIR(inode->mode)) {
		err = -EPERM;
		goto out_inode_ref;
	}
	pthread_rwlock_wrlock(&inode->lock);
	if (!inode->links) {
		err = -ENOENT;
		goto out;
	}
	if (inode->links >= 0xffffffffu) {
		err = -EMLINK;
		goto out;
	}
	if (f2fs_is_pinned(inode) || f2fs_is_immutable(dir)) {
		err = -EPERM;	/* vfs_link, may_create */
		goto out;
	}
	err = f2fs_crypt_permitted(sb, dir, inode);
	if (err)
		goto out;
	/* f2fs_link: a project-inherit directory holds only its own project */
	if (!proj_fits(dir, inode)) {
		err = -EXDEV;
		goto out;
	}
	err = f2fs_dir_lookup(sb, dir, name, len, &other, &ftype);
	if (err != -ENOENT) {
		if (!err)
			err = -EEXIST;
		goto out;
	}
	inode->links++;
	f2fs_now(&now);
	f2fs_inode_set_time(inode, F2FS_TIME_CTIME, &now);
	err = f2fs_add_link(sb, dir, name, len, inode, false);
	if (err) {
		inode->links--;
		goto out;
	}
	/* several parents: roll-forward must not trust i_pino */
	inode->advise |= FADVISE_LOST_PINO_BIT;
	err = f2fs_mark_inode_dirty(sb, inode);
	if (!err)
		f2fs_fill_stat(sb, inode, st);
out:
	pthread_rwlock_unlock(&inode->lock);
out_inode_ref:
	f2fs_iput(sb, inode);
out_dir:
	f2fs_end_op(sb, dir);
	return dirsync(sb, err, dsync);
}

static int do_unlink(struct f2fs_sb *sb, uint32_t dir_ino, const char *name, size_t len, bool rmdir)
{
	struct f2fs_inode *dir, *inode;
	struct f2fs_timespec now;
	unsigned int ftype;
	bool dsync = false;
	uint32_t ino;
	int err;

	if (!len)
		return -ENOENT;
	if (len > F2FS_NAME_LEN)
		return -ENAMETOOLONG;
	if (len == 1 && name[0] == '.')
		return rmdir ? -EINVAL : -EISDIR;
	if (len == 2 && name[0] == '.' && name[1] == '.')
		return rmdir ? -ENOTEMPTY : -EISDIR;
	err = f2fs_begin_op(sb, dir_ino, F2FS_OP_BALANCE | F2FS_OP_DIR, &dir);
	if (err)
		return err;
	dsync = dir->flags & F2FS_DIRSYNC_FL;
	err = f2fs_dir_lookup(sb, dir, name, len, &ino, &ftype);
	if (err)
		goto out_dir;
	err = f2fs_iget(sb, ino, &inode);
	if (err)
		goto out_dir;
	pthread_rwlock_wrlock(&inode->lock);
	if (rmdir && !S_ISDIR(inode->mode)) {
		err = -ENOTDIR;
		goto out;
	}
	if (!rmdir && S_ISDIR(inode->mode)) {
		err = -EISDIR;
		goto out;
	}
	if (f2fs_is_pinned(dir) || f2fs_is_pinned(inode)) {
		err = -EPERM;	/* may_delete */
		goto out;
	}
	if (rmdir) {
		err = must_be_empty(sb, inode);
		if (err)
			goto out;
	}
	err = f2fs_delete_entry(sb, dir, name, len, inode);
	if (err)
		goto out;
	f2fs_now(&now);
	f2fs_inode_set_time(inode, F2FS_TIME_CTIME, &now);
	if (rmdir) {
		inode->links = 0;	/* its name and its "." */
		inode->size = 0;
	} else if (inode->links) {
		inode->links--;
	}
	err = drop_inode(sb, inode);
out:
	pthread_rwlock_unlock(&inode->lock);
	f2fs_iput(sb, inode);
out_dir:
	f2fs_end_op(sb, dir);
	return dirsync(sb, err, dsync);
}

int f2fs_unlink(struct f2fs_sb *sb, uint32_t dir, const char *name, size_t len)
{
	return do_unlink(sb, dir, name, len, false);
}

int f2fs_rmdir(struct f2fs_sb *sb, uint32_t dir, const char *name, size_t len)
{
	return do_unlink(sb, dir, name, len, true);
}

/* Is `ancestor` on the ".." chain of dir (or dir itself)? Bounded walk. */
static int is_ancestor(struct f2fs_sb *sb, uint32_t ancestor, uint32_t dir)
{
	uint32_t cur = dir;

	for (int depth = 0; depth < 4096; depth++) {
		struct f2fs_inode *d;
		uint32_t parent;
		int err;

		if (cur == ancestor)
			return 1;
		if (cur == sb->root_ino)
			return 0;
		err = f2fs_iget(sb, cur, &d);
		if (err)
			return err;
		/* ".." is stored in plain text, also in encrypted directories */
		err = f2fs_dir_lookup_disk(sb, d, (const uint8_t *)"..", 2, &parent);
		f2fs_iput(sb, d);
		if (err)
			return err;
		if (parent == cur)
			return 0;
		cur = parent;
	}
	return f2fs_corrupted(sb, "directory %u: \"..\" chain does not reach the root", dir);
}

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE (1 << 0)
#endif
#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif
#ifndef RENAME_WHITEOUT
#define RENAME_WHITEOUT (1 << 2)
#endif

void f2fs_lock_two(struct f2fs_inode *a, struct f2fs_inode *b)
{
	if (a == b) {
		pthread_rwlock_wrlock(&a->lock);
	} else if (a->ino < b->ino) {
		pthread_rwlock_wrlock(&a->lock);
		pthread_rwlock_wrlock(&b->lock);
	} else {
		pthread_rwlock_wrlock(&b->lock);
		pthread_rwlock_wrlock(&a->lock);
	}
}

void f2fs_unlock_two(struct f2fs_inode *a, struct f2fs_inode *b)
{
	pthread_rwlock_unlock(&a->lock);
	if (a != b)
		pthread_rwlock_unlock(&b->lock);
}

/*
 * f2fs_create_whiteout: the character device 0:0 that RENAME_WHITEOUT
 * leaves under the old name (overlayfs' mark of a deleted lower entry),
 * owned as a new entry of dir would be; not linked yet.
 */
static int create_whiteout(struct f2fs_sb *sb, struct f2fs_inode *dir,
			   const struct f2fs_cred *cred, struct f2fs_inode **out)
{
	uint32_t mode = S_IFCHR, uid, gid;
	struct f2fs_inode *wo;
	int err;

	init_owner(dir, &mode, cred, &uid, &gid);
	err = f2fs_new_inode(sb, dir, mode, uid, gid, &wo);
	if (err)
		return err;
	err = f2fs_crypt_inherit(sb, dir, wo);
	if (!err)
		err = f2fs_acl_inherit(sb, dir, wo);
	wo->dq_priv = false;
	if (err) {
		wo->links = 0;
		f2fs_evict_inode(sb, wo);
		f2fs_iput(sb, wo);
		return err;
	}
	*out = wo;
	return 0;
}

/* f2fs_rename and f2fs_cross_rename. */
int f2fs_rename(struct f2fs_sb *sb, uint32_t odir_ino, const char *oname, size_t olen,
		uint32_t ndir_ino, const char *nname, size_t nlen, unsigned int flags,
		const struct f2fs_cred *cred)
{
	struct f2fs_inode *odir = NULL, *ndir = NULL, *old = NULL, *victim = NULL, *wo = NULL;
	struct f2fs_timespec now;
	uint32_t oino, nino = 0;
	unsigned int ftype;
	bool cross, locked_dirs = false, dsync = false, wo_linked = false;
	bool priv = flags & F2FS_RENAME_PRIV_QUOTA;
	int err;

	flags &= ~F2FS_RENAME_PRIV_QUOTA;
	if (flags & ~(unsigned int)(RENAME_NOREPLACE | RENAME_EXCHANGE | RENAME_WHITEOUT))
		return -EINVAL;
	if ((flags & RENAME_EXCHANGE) && (flags & (RENAME_NOREPLACE | RENAME_WHITEOUT)))
		return -EINVAL;
	if ((flags & RENAME_WHITEOUT) && !cred)
		return -EINVAL;
	err = check_name(nname, nlen);
	if (!err && (olen == 0 || olen > F2FS_NAME_LEN))
		err = olen ? -ENAMETOOLONG : -ENOENT;
	if (err)
		return err == -EEXIST ? -EBUSY : err;
	if (!f2fs_writable(sb))
		return f2fs_write_denied(sb);
	cross = odir_ino != ndir_ino;
	/* two directories: f2fs_begin_op's steps, with both locked in inode order */
	f2fs_balance_fs(sb);
	f2fs_lock_op(sb);
	if (cross)
		pthread_mutex_lock(&sb->rename_lock);
	err = get_dir(sb, odir_ino, &odir);
	if (!err)
		err = get_dir(sb, ndir_ino, &ndir);
	if (err)
		goto out;
	f2fs_lock_two(odir, ndir);
	locked_dirs = true;
	/* the new name's dentry block is charged to ndir's owner */
	ndir->dq_priv = priv;
	err = f2fs_dir_lookup(sb, odir, oname, olen, &oino, &ftype);
	if (err)
		goto out;
	err = f2fs_dir_lookup(sb, ndir, nname, nlen, &nino, &ftype);
	if (err && err != -ENOENT)
		goto out;
	if (err == -ENOENT) {
		nino = 0;
		if (flags & RENAME_EXCHANGE)
			goto out;
	} else if (flags & RENAME_NOREPLACE) {
		err = -EEXIST;
		goto out;
	}
	err = 0;
	if (nino == oino)
		goto out;	/* two names of one inode: POSIX says do nothing */
	err = f2fs_iget(sb, oino, &old);
	if (!err && nino)
		err = f2fs_iget(sb, nino, &victim);
	if (err)
		goto out;
	/* a directory may not move below itself */
	if (cross && (S_ISDIR(old->mode) || (victim && S_ISDIR(victim->mode) &&
					       (flags & RENAME_EXCHANGE)))) {
		int r = is_ancestor(sb, oino, ndir_ino);

		if (r == 0 && victim && (flags & RENAME_EXCHANGE) && S_ISDIR(victim->mode))
			r = is_ancestor(sb, nino, odir_ino);
		if (r) {
			err = r < 0 ? r : -EINVAL;
			goto out;
		}
	}
	/* fscrypt_prepare_rename: an inode may only move into a directory of its policy */
	if (cross) {
		err = f2fs_crypt_permitted(sb, ndir, old);
		if (!err && victim && (flags & RENAME_EXCHANGE))
			err = f2fs_crypt_permitted(sb, odir, victim);
		if (err)
			goto out;
	}
	/* f2fs_rename, f2fs_cross_rename: nothing enters a project-inherit
	 * directory with another project (userspace copies instead) */
	if (!proj_fits(ndir, old) || (victim && (flags & RENAME_EXCHANGE) && !proj_fits(odir, victim))) {
		err = -EXDEV;
		goto out;
	}
	/* may_delete of both names that go (or are replaced), may_create of the new one */
	if (f2fs_is_pinned(odir) || f2fs_is_immutable(ndir) || f2fs_is_pinned(old) ||
	    (victim && (f2fs_is_pinned(ndir) || f2fs_is_pinned(victim)))) {
		err = -EPERM;
		goto out;
	}
	/* f2fs_create_whiteout: made before anything changes, dropped on failure */
	if (flags & RENAME_WHITEOUT) {
		err = create_whiteout(sb, odir, cred, &wo);
		if (err)
			goto out;
	}
	if (victim)
		f2fs_lock_two(old, victim);
	else
		pthread_rwlock_wrlock(&old->lock);
	f2fs_now(&now);

	if (flags & RENAME_EXCHANGE) {
		err = f2fs_set_link(sb, odir, oname, olen, victim);
		if (!err)
			err = f2fs_set_link(sb, ndir, nname, nlen, old);
		if (!err && cross) {
			if (S_ISDIR(old->mode))
				err = f2fs_set_dotdot(sb, old, ndir);
			if (!err && S_ISDIR(victim->mode))
				err = f2fs_set_dotdot(sb, victim, odir);
			if (S_ISDIR(old->mode) != S_ISDIR(victim->mode)) {
				struct f2fs_inode *gain = S_ISDIR(old->mode) ? ndir : odir;
				struct f2fs_inode *lose = S_ISDIR(old->mode) ? odir : ndir;

				gain->links++;
				lose->links--;
			}
		}
		old->pino = ndir->ino;
		victim->pino = odir->ino;
		f2fs_inode_set_time(old, F2FS_TIME_CTIME, &now);
		f2fs_inode_set_time(victim, F2FS_TIME_CTIME, &now);
		if (!err)
			err = f2fs_mark_inode_dirty(sb, old);
		if (!err)
			err = f2fs_mark_inode_dirty(sb, victim);
		if (!err)
			err = f2fs_mark_inode_dirty(sb, odir);
		if (!err && cross)
			err = f2fs_mark_inode_dirty(sb, ndir);
		goto out_unlock;
	}

	if (victim) {
		if (S_ISDIR(old->mode) && !S_ISDIR(victim->mode)) {
			err = -ENOTDIR;
			goto out_unlock;
		}
		if (!S_ISDIR(old->mode) && S_ISDIR(victim->mode)) {
			err = -EISDIR;
			goto out_unlock;
		}
		if (S_ISDIR(victim->mode)) {
			err = must_be_empty(sb, victim);
			if (err)
				goto out_unlock;
		}
		err = f2fs_set_link(sb, ndir, nname, nlen, old);
		if (err)
			goto out_unlock;
		f2fs_inode_set_time(victim, F2FS_TIME_CTIME, &now);
		if (S_ISDIR(victim->mode)) {
			/* the moved directory's ".." takes the place of the victim's */
			victim->links = 0;
			victim->size = 0;
		} else {
			victim->links--;
		}
		err = drop_inode(sb, victim);
		if (err)
			goto out_unlock;
	} else {
		err = f2fs_add_link(sb, ndir, nname, nlen, old, false);
		if (err)
			goto out_unlock;
		if (S_ISDIR(old->mode))
			ndir->links++;
	}
	if (wo) {
		/* the old name now leads to the whiteout */
		err = f2fs_set_link(sb, odir, oname, olen, wo);
		if (!err && S_ISDIR(old->mode) && odir->links > 2)
			odir->links--;
		if (!err)
			err = f2fs_mark_inode_dirty(sb, wo);
		if (!err)
			wo_linked = true;
	} else {
		err = f2fs_delete_entry(sb, odir, oname, olen, old);
	}
	if (err)
		goto out_unlock;
	if (S_ISDIR(old->mode) && cross)
		err = f2fs_set_dotdot(sb, old, ndir);
	if (S_ISDIR(old->mode))
		old->pino = ndir->ino;	/* fsck checks a directory's parent */
	else
		old->advise |= FADVISE_LOST_PINO_BIT;
	f2fs_inode_set_time(old, F2FS_TIME_CTIME, &now);
	if (!err)
		err = f2fs_mark_inode_dirty(sb, old);
	if (!err)
		err = f2fs_mark_inode_dirty(sb, ndir);
out_unlock:
	pthread_rwlock_unlock(&old->lock);
	if (victim && victim != old)
		pthread_rwlock_unlock(&victim->lock);
out:
	if (locked_dirs) {
		dsync = (odir->flags | ndir->flags) & F2FS_DIRSYNC_FL;
		ndir->dq_priv = false;
		f2fs_unlock_two(odir, ndir);
	}
	if (wo && !wo_linked) {
		wo->links = 0;
		f2fs_evict_inode(sb, wo);
	}
	f2fs_iput(sb, wo);
	f2fs_iput(sb, victim);
	f2fs_iput(sb, old);
	f2fs_iput(sb, ndir);
	f2fs_iput(sb, odir);
	if (cross)
		pthread_mutex_unlock(&sb->rename_lock);
	f2fs_unlock_op(sb);
	return dirsync(sb, err, dsync);
}
