// SPDX-License-Identifier: GPL-2.0
/*
 * Names and attributes: lookup (and the "."/".." of file handles),
 * getattr, setattr, readlink, and the operations that add or remove names.
 */
#include "ops.h"
#include "keyctl.h"
#include "inodes.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <time.h>

static void to_stat(const struct f2fs_fuse *fs, const struct f2fs_stat *in, struct stat *out)
{
	memset(out, 0, sizeof(*out));
	/* st_ino is the real nid, also for the root, as the kernel driver shows it. */
	out->st_ino = in->ino;
	out->st_mode = in->mode & ~(fs->umask & 07777);
	out->st_nlink = in->nlink;
	out->st_uid = fs->force_uid ? fs->uid : in->uid;
	out->st_gid = fs->force_gid ? fs->gid : in->gid;
	out->st_rdev = (dev_t)in->rdev;
	out->st_size = (off_t)in->size;
	out->st_blocks = (blkcnt_t)in->blocks;
	out->st_blksize = 4096;
	out->st_atim.tv_sec = (time_t)in->atime.sec;
	out->st_atim.tv_nsec = in->atime.nsec;
	out->st_mtim.tv_sec = (time_t)in->mtime.sec;
	out->st_mtim.tv_nsec = in->mtime.nsec;
	out->st_ctim.tv_sec = (time_t)in->ctime.sec;
	out->st_ctim.tv_nsec = in->ctime.nsec;
}

void f2fs_fuse_fill_entry(struct f2fs_fuse *fs, const struct f2fs_stat *st,
			  struct fuse_entry_param *e)
{
	memset(e, 0, sizeof(*e));
	e->ino = f2fs_fuse_ino(fs, st->ino);
	/*
	 * The kernel made the root inode itself with generation 0, and an
	 * entry for a known node id with another generation marks that
	 * inode stale; file handles to the root carry 0 as well.
	 */
	e->generation = e->ino == FUSE_ROOT_ID ? 0 : st->generation;
	to_stat(fs, st, &e->attr);
	e->attr_timeout = F2FS_FUSE_TIMEOUT;
	e->entry_timeout = F2FS_FUSE_TIMEOUT;
	/* The kernel now holds ino: kept while unlinked, flushed when a key changes. */
	f2fs_fuse_inodes_lookup(&fs->inodes, e->ino);
}

/* The kernel passes names of any length; f2fs stores at most 255 bytes. */
static bool name_too_long(fuse_req_t req, const char *name)
{
	if (strnlen(name, F2FS_FUSE_NAME_MAX + 1) <= F2FS_FUSE_NAME_MAX)
		return false;
	fuse_reply_err(req, ENAMETOOLONG);
	return true;
}

/*
 * The attributes a change returns, as getattr shows them: the core's
 * create, link and setattr calls give an encrypted symlink's on-disk size
 * (its ciphertext), getattr the length of the target it shows.  Only
 * symlinks differ, so only they are asked again.
 */
static const struct f2fs_stat *shown_stat(const struct f2fs_fuse *fs, const struct f2fs_stat *st,
					  struct f2fs_stat *buf)
{
	if (S_ISLNK(st->mode) && f2fs_getattr(fs->sb, st->ino, buf) == 0)
		return buf;
	return st;
}

static void reply_new_entry(fuse_req_t req, struct f2fs_fuse *fs, fuse_ino_t parent, int err,
			    const struct f2fs_stat *st)
{
	struct fuse_entry_param e;
	struct f2fs_stat buf;

	if (err) {
		f2fs_fuse_reply_err(req, err);
		return;
	}
	f2fs_fuse_fill_entry(fs, shown_stat(fs, st, &buf), &e);
	f2fs_fuse_casefold_entry(fs, parent, &e);
	fuse_reply_entry(req, &e);
}

/*
 * The kernel looks up "." and ".." only to decode file handles: "." of a
 * node id it no longer holds (the handle's own), ".." of a directory to
 * reconnect it to the tree.  A handle that outlived its inode is ESTALE.
 */
static void lookup_handle(fuse_req_t req, fuse_ino_t ino, bool parent)
{
	struct f2fs_fuse *fs = f2fs_fuse_req_fs(req);
	uint32_t nid = f2fs_fuse_nid(fs, ino);
	struct fuse_entry_param e;
	struct f2fs_stat st;
	int err;

	/*
	 * Node ids are nids, and the root is FUSE_ROOT_ID only: anything else
	 * came from no reply of ours (the kernel would refuse an inode under
	 * another node id than the handle's anyway).
	 */
	if (ino != FUSE_ROOT_ID && (ino > UINT32_MAX || nid == fs->root_ino))
		err = -ESTALE;
	else if (parent)
		err = f2fs_get_parent(fs->sb, nid, &st);
	else
		err = f2fs_handle_getattr(fs->sb, nid, &st);
	if (err == -ENOENT)
		err = -ESTALE;
	if (err) {
		f2fs_fuse_reply_err(req, err);
		return;
	}
	f2fs_fuse_fill_entry(fs, &st, &e);
	fuse_reply_entry(req, &e);
}

static void op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	F2FS_FUSE_COUNT_OP(req, F2FS_OP_LOOKUP);
	struct f2fs_fuse *fs = f2fs_fuse_req_fs(req);
	struct fuse_entry_param e;
	struct f2fs_stat st;
	int err;

	if (name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0'))) {
		lookup_handle(req, parent, name[1] == '.');
		return;
	}
	/* Not a negative entry: the name can never exist. */
	if (name_too_long(req, name))
		return;
	err = f2fs_lookup(fs->sb, f2fs_fuse_nid(fs, parent), name, strlen(name), &st);
	if (err == -ENOENT) {
		/*
		 * Reply with ino 0 rather than ENOENT so the kernel keeps the
		 * negative dentry for entry_timeout: nobody else can create the
		 * name behind our back.
		 */
		memset(&e, 0, sizeof(e));
		/* ... except where adding or removing a key changes the names. */
		if (f2fs_keyctl_may_cache_absence(fs, parent) &&
		    f2fs_fuse_casefold_may_cache_absence(fs))
			e.entry_timeout = F2FS_FUSE_TIMEOUT;
		fuse_reply_entry(req, &e);
		return;
	}
	if (err) {
		f2fs_fuse_reply_err(req, err);
		return;
	}
	f2fs_fuse_rdplus_lookup(fs, parent, &st);
	f2fs_fuse_fill_entry(fs, &st, &e);
	f2fs_fuse_casefold_entry(fs, parent, &e);
	fuse_reply_entry(req, &e);
}

static void op_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	F2FS_FUSE_COUNT_OP(req, F2FS_OP_GETATTR);
	struct f2fs_fuse *fs = f2fs_fuse_req_fs(req);
	struct f2fs_stat st;
	struct stat stbuf;
	int err;

	err = f2fs_getattr(fs->sb, f2fs_fuse_nid(fs, ino), &st);
	if (err) {
		f2fs_fuse_reply_err(req, err);
		return;
	}
	to_stat(fs, &st, &stbuf);
	fuse_reply_attr(req, &stbuf, F2FS_FUSE_TIMEOUT);
}

static void op_readlink(fuse_req_t req, fuse_ino_t ino)
{
	F2FS_FUSE_COUNT_OP(req, F2FS_OP_READLINK);
	struct f2fs_fuse *fs = f2fs_fuse_req_fs(req);
	char buf[PATH_MAX + 1];
	ssize_t n;

	n = f2fs_readlink(fs->sb, f2fs_fuse_nid(fs, ino), buf, PATH_MAX);
	if (n < 0) {
		f2fs_fuse_reply_err(req, n);
		return;
	}
	if (n > PATH_MAX) {
		f2fs_fuse_reply_err(req, -ENAMETOOLONG);
		return;
	}
	buf[n] = '\0';
	fuse_reply_readlink(req, buf);
}


static void now_ts(struct f2fs_timespec *t)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	t->sec = ts.tv_sec;
	t->nsec = (uint32_t)ts.tv_nsec;
}

static void stat_ts(const struct timespec *in, struct f2fs_timespec *t)
{
	t->sec = in->tv_sec;
	t->nsec = (uint32_t)in->tv_nsec;
}

static void op_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
		       struct fuse_file_info *fi)
{
	F2FS_FUSE_COUNT_OP(req, F2FS_OP_SETATTR);
	struct f2fs_fuse *fs = f2fs_fuse_req_fs(req);
	struct f2fs_setattr sa = { 0 };
	struct f2fs_timespec now;
	struct f2fs_stat st, buf;
	struct stat out;
	bool use_now = false;
	int err;

	now_ts(&now);
	if (to_set & FUSE_SET_ATTR_MODE) {
		sa.valid |= F2FS_SET_MODE;
		sa.mode = attr->st_mode & 07777;
	}
	if (to_set & FUSE_SET_ATTR_UID) {
		sa.valid |= F2FS_SET_UID;
		sa.uid = attr->st_uid;
	}
	if (to_set & FUSE_SET_ATTR_GID) {
		sa.valid |= F2FS_SET_GID;
		sa.gid = attr->st_gid;
	}
	if (to_set & FUSE_SET_ATTR_SIZE) {
		uint32_t killed;

		if (attr->st_size < 0) {
			fuse_reply_err(req, EINVAL);
			return;
		}
		sa.valid |= F2FS_SET_SIZE;
		sa.size = (uint64_t)attr->st_size;
		/* do_truncate; a mode sent along must not bring the bits back */
		err = f2fs_fuse_remove_privs(req, fs, f2fs_fuse_nid(fs, ino), &killed);
		if (err) {
			f2fs_fuse_reply_err(req, err);
			return;
		}
		sa.mode &= ~killed;
	}
	/* utimensat's UTIME_NOW arrives as *_NOW; UTIME_OMIT as no bit at all. */
	if (to_set & (FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_ATIME_NOW)) {
		sa.valid |= F2FS_SET_ATIME;
		if (to_set & FUSE_SET_ATTR_ATIME_NOW) {
			sa.atime = now;
			use_now = true;
		} else {
			stat_ts(&attr->st_atim, &sa.atime);
			sa.valid |= F2FS_SET_TIMES_GIVEN;
		}
	}
	if (to_set & (FUSE_SET_ATTR_MTIME | FUSE_SET_ATTR_MTIME_NOW)) {
		sa.valid |= F2FS_SET_MTIME;
		if (to_set & FUSE_SET_ATTR_MTIME_NOW) {
			sa.mtime = now;
			use_now = true;
		} else {
			stat_ts(&attr->st_mtim, &sa.mtime);
			sa.valid |= F2FS_SET_TIMES_GIVEN;
		}
	}
	if (to_set & FUSE_SET_ATTR_CTIME) {
		sa.valid |= F2FS_SET_CTIME;
		stat_ts(&attr->st_ctim, &sa.ctime);
	} else if (use_now) {
		/* One clock reading for all three, as the kernel's utimes does. */
		sa.valid |= F2FS_SET_CTIME;
		sa.ctime = now;
	}
	/* a chown or chgrp moves the usage to the new owner's quota */
	if (sa.valid & (F2FS_SET_UID | F2FS_SET_GID))
		sa.priv = f2fs_fuse_priv(req, fs);
	err = f2fs_setattr(fs->sb, f2fs_fuse_nid(fs, ino), &sa, &st);
	if (err) {
		f2fs_fuse_reply_err(req, err);
		return;
	}
	to_stat(fs, shown_stat(fs, &st, &buf), &out);
	fuse_reply_attr(req, &out, F2FS_FUSE_TIMEOUT);
}

static void op_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
		     dev_t rdev)
{
	F2FS_FUSE_COUNT_OP(req, F2FS_OP_MKNOD);
	struct f2fs_fuse *fs = f2fs_fuse_req_fs(req);
	struct f2fs_fuse_cred rc;
	struct f2fs_stat st;
	uint32_t maj = 0, min = 0;
	int err;

	if (name_too_long(req, name))
		return;
	if (S_ISCHR(mode) || S_ISBLK(mode)) {
		maj = major(rdev);
		min = minor(rdev);
	}
	f2fs_fuse_get_cred(req, mode, &rc);
	rc.cred.priv = f2fs_fuse_priv(req, fs);
	err = f2fs_mknod(fs->sb, f2fs_fuse_nid(fs, parent), name, strlen(name), mode, maj, min,
			 &rc.cred, &st);
	f2fs_fuse_put_cred(&rc);
	reply_new_entry(req, fs, parent, err, &st);
}

static void op_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
	F2FS_FUSE_COUNT_OP(req, F2FS_OP_MKDIR);
	struct f2fs_fuse *fs = f2fs_fuse_req_fs(req);
	struct f2fs_fuse_cred rc;
	struct f2fs_stat st;
	int err;

	if (name_too_long(req, name))
		return;
	f2fs_fuse_get_cred(req, mode, &rc);
	rc.cred.priv = f2fs_fuse_priv(req, fs);
	err = f2fs_mkdir(fs->sb, f2fs_fuse_nid(fs, parent), name, strlen(name), mode, &rc.cred,
			 &st);
	f2fs_fuse_put_cred(&rc);
	reply_new_entry(req, fs, parent, err, &st);
}

static void op_symlink(fuse_req_t req, const char *link, fuse_ino_t parent, const char *name)
{
	F2FS_FUSE_COUNT_OP(req, F2FS_OP_SYMLINK);
	struct f2fs_fuse *fs = f2fs_fuse_req_fs(req);
	struct f2fs_fuse_cred rc;
	struct f2fs_stat st;
	int err;

	if (name_too_long(req, name))
		return;
	f2fs_fuse_get_cred(req, 0, &rc);
	rc.cred.priv = f2fs_fuse_priv(req, fs);
	err = f2fs_symlink(fs->sb, f2fs_fuse_nid(fs, parent), name, strlen(name), link, &rc.cred,
			   &st);
	f2fs_fuse_put_cred(&rc);
	reply_new_entry(req, fs, parent, err, &st);
}

static void op_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname)
{
	F2FS_FUSE_COUNT_OP(req, F2FS_OP_LINK);
	struct f2fs_fuse *fs = f2fs_fuse_req_fs(req);
	struct f2fs_stat st;
	int err;

	if (name_too_long(req, newname))
		return;
	err = f2fs_link_as(fs->sb, f2fs_fuse_nid(fs, ino), f2fs_fuse_nid(fs, newparent), newname,
			   strlen(newname), &st, f2fs_fuse_priv(req, fs));
	reply_new_entry(req, fs, newparent, err, &st);
}

static void op_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	F2FS_FUSE_COUNT_OP(req, F2FS_OP_UNLINK);
	struct f2fs_fuse *fs = f2fs_fuse_req_fs(req);

	if (name_too_long(req, name))
		return;
	f2fs_fuse_reply_status(req, f2fs_unlink(fs->sb, f2fs_fuse_nid(fs, parent), name, strlen(name)));
}

static void op_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	F2FS_FUSE_COUNT_OP(req, F2FS_OP_RMDIR);
	struct f2fs_fuse *fs = f2fs_fuse_req_fs(req);

	if (name_too_long(req, name))
		return;
	f2fs_fuse_reply_status(req, f2fs_rmdir(fs->sb, f2fs_fuse_nid(fs, parent), name, strlen(name)));
}

static void op_rename(fuse_req_t req, fuse_ino_t parent, const char *name,
		      fuse_ino_t newparent, const char *newname, unsigned int flags)
{
	F2FS_FUSE_COUNT_OP(req, F2FS_OP_RENAME);
	struct f2fs_fuse *fs = f2fs_fuse_req_fs(req);
	struct f2fs_fuse_cred rc;
	int err;

	if (name_too_long(req, name) || name_too_long(req, newname))
		return;
	/*
	 * flags are RENAME_NOREPLACE, RENAME_EXCHANGE or RENAME_WHITEOUT, as the
	 * core takes them (the kernel asked CAP_MKNOD for a whiteout); the
	 * caller owns a whiteout.
	 */
	flags &= ~F2FS_RENAME_PRIV_QUOTA;
	if (f2fs_fuse_priv(req, fs))
		flags |= F2FS_RENAME_PRIV_QUOTA;
	f2fs_fuse_get_cred(req, 0, &rc);
	err = f2fs_rename(fs->sb, f2fs_fuse_nid(fs, parent), name, strlen(name),
			  f2fs_fuse_nid(fs, newparent), newname, strlen(newname), flags, &rc.cred);
	f2fs_fuse_put_cred(&rc);
	f2fs_fuse_reply_status(req, err);
}


static void op_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
		      struct fuse_file_info *fi)
{
	F2FS_FUSE_COUNT_OP(req, F2FS_OP_CREATE);
	struct f2fs_fuse *fs = f2fs_fuse_req_fs(req);
	struct fuse_entry_param e;
	struct f2fs_fuse_cred rc;
	struct f2fs_stat st;
	int err;

	if (name_too_long(req, name))
		return;
	/*
	 * The kernel sends CREATE only for a name it knows to be absent, with
	 * the directory locked, so an existing name is EEXIST even without
	 * O_EXCL.
	 */
	f2fs_fuse_get_cred(req, mode, &rc);
	rc.cred.priv = f2fs_fuse_priv(req, fs);
	err = f2fs_mknod(fs->sb, f2fs_fuse_nid(fs, parent), name, strlen(name),
			 S_IFREG | (mode & 07777), 0, 0, &rc.cred, &st);
	f2fs_fuse_put_cred(&rc);
	if (!err)
		err = f2fs_open(fs->sb, st.ino, fi->flags);
	if (err) {
		f2fs_fuse_reply_err(req, err);
		return;
	}
	f2fs_fuse_fill_entry(fs, &st, &e);
	f2fs_fuse_casefold_entry(fs, parent, &e);
	f2fs_fuse_set_open_flags(fs, st.ino, fi);
	/* An interrupted create leaves no file handle for release to drop. */
	if (fuse_reply_create(req, &e, fi) == -ENOENT)
		f2fs_release_file(fs->sb, st.ino, fi->flags);
}

void f2fs_fuse_dir_ops(struct fuse_lowlevel_ops *ops)
{
	ops->lookup = op_lookup;
	ops->getattr = op_getattr;
	ops->setattr = op_setattr;
	ops->readlink = op_readlink;
	ops->mknod = op_mknod;
	ops->mkdir = op_mkdir;
	ops->symlink = op_symlink;
	ops->link = op_link;
	ops->unlink = op_unlink;
	ops->rmdir = op_rmdir;
	ops->rename = op_rename;
	ops->create = op_create;
}
