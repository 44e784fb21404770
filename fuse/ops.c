// SPDX-License-Identifier: GPL-2.0
/*
 * libfuse low-level operations: each one converts the request into a core
 * call and the result into a reply.  No filesystem logic lives here.
 */
#include "f2fs_fuse.h"
#include "format.h"		/* F2FS_FT_*: the file_type f2fs_readdir passes */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>

#ifndef EUCLEAN
#define EUCLEAN 117
#endif

static struct f2fs_fuse *req_fs(fuse_req_t req)
{
	return fuse_req_userdata(req);
}

void f2fs_fuse_reply_err(fuse_req_t req, long err)
{
	/* A non-negative "error" would be a core bug; never reply success for it. */
	fuse_reply_err(req, err < 0 ? (int)-err : EIO);
}

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

static void fill_entry_param(const struct f2fs_fuse *fs, const struct f2fs_stat *st,
			     struct fuse_entry_param *e)
{
	memset(e, 0, sizeof(*e));
	e->ino = f2fs_fuse_ino(fs, st->ino);
	e->generation = st->generation;
	to_stat(fs, st, &e->attr);
	e->attr_timeout = F2FS_FUSE_TIMEOUT;
	e->entry_timeout = F2FS_FUSE_TIMEOUT;
}

static void op_init(void *userdata, struct fuse_conn_info *conn)
{
	struct f2fs_fuse *fs = userdata;
	unsigned int want = FUSE_CAP_ASYNC_READ | FUSE_CAP_READDIRPLUS | FUSE_CAP_IOCTL_DIR |
			    FUSE_CAP_CACHE_SYMLINKS;

	/* Directory listings almost always precede stat()s: always use readdirplus. */
	conn->want &= ~(FUSE_CAP_READDIRPLUS_AUTO | FUSE_CAP_SPLICE_WRITE |
			FUSE_CAP_SPLICE_MOVE | FUSE_CAP_SPLICE_READ);
	if (fs->posix_acl)
		want |= FUSE_CAP_POSIX_ACL;
	/* Asking for anything the kernel lacks makes libfuse abort the mount. */
	conn->want |= want & conn->capable;
	fs->posix_acl = (conn->want & FUSE_CAP_POSIX_ACL) != 0;

	/* The kernel caps this at its own read-ahead window. */
	conn->max_readahead = F2FS_FUSE_READAHEAD;
}

static void op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct f2fs_fuse *fs = req_fs(req);
	struct fuse_entry_param e;
	struct f2fs_stat st;
	int err;

	err = f2fs_lookup(fs->sb, f2fs_fuse_nid(fs, parent), name, strlen(name), &st);
	if (err == -ENOENT) {
		/*
		 * Reply with ino 0 rather than ENOENT so the kernel keeps the
		 * negative dentry for entry_timeout: nobody else can create the
		 * name behind our back.
		 */
		memset(&e, 0, sizeof(e));
		e.entry_timeout = F2FS_FUSE_TIMEOUT;
		fuse_reply_entry(req, &e);
		return;
	}
	if (err) {
		f2fs_fuse_reply_err(req, err);
		return;
	}
	fill_entry_param(fs, &st, &e);
	fuse_reply_entry(req, &e);
}

static void op_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	/* The core caches inodes itself; there is no per-lookup state. */
	fuse_reply_none(req);
}

static void op_forget_multi(fuse_req_t req, size_t count, struct fuse_forget_data *forgets)
{
	fuse_reply_none(req);
}

static void op_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct f2fs_fuse *fs = req_fs(req);
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
	struct f2fs_fuse *fs = req_fs(req);
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

static void op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	/* Only read-only mounts exist so far. */
	if ((fi->flags & O_ACCMODE) != O_RDONLY || (fi->flags & O_TRUNC)) {
		fuse_reply_err(req, EROFS);
		return;
	}
	/* We are the image's only writer, so cached pages stay valid across opens. */
	fi->keep_cache = 1;
	fi->direct_io = 0;
	fi->noflush = 1;
	fuse_reply_open(req, fi);
}

static void op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	struct f2fs_fuse *fs = req_fs(req);
	ssize_t n;
	char *buf;

	if (off < 0) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	if (size == 0) {
		fuse_reply_buf(req, NULL, 0);
		return;
	}
	buf = malloc(size);
	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	n = f2fs_read(fs->sb, f2fs_fuse_nid(fs, ino), buf, size, (uint64_t)off);
	if (n < 0)
		f2fs_fuse_reply_err(req, n);
	else
		fuse_reply_buf(req, buf, (size_t)n > size ? size : (size_t)n);
	free(buf);
}

static void op_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	fuse_reply_err(req, 0);
}

static void op_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	fuse_reply_err(req, 0);
}

static void op_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	/* Nothing is ever dirty on a read-only mount. */
	fuse_reply_err(req, 0);
}

static void op_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	/* Listings cannot change under us: let the kernel cache them. */
	fi->cache_readdir = 1;
	fi->keep_cache = 1;
	fuse_reply_open(req, fi);
}

struct dir_ctx {
	fuse_req_t req;
	struct f2fs_fuse *fs;
	char *buf;
	size_t size, used;
	bool plus;
	int err;
};

/* Longest name we pass on; f2fs names are at most 255 bytes. */
#define DIR_NAME_MAX 1023

/* st_mode file type for an on-disk dentry type; 0 (unknown) otherwise. */
static mode_t ftype_mode(unsigned int file_type)
{
	switch (file_type) {
	case F2FS_FT_REG_FILE: return S_IFREG;
	case F2FS_FT_DIR: return S_IFDIR;
	case F2FS_FT_CHRDEV: return S_IFCHR;
	case F2FS_FT_BLKDEV: return S_IFBLK;
	case F2FS_FT_FIFO: return S_IFIFO;
	case F2FS_FT_SOCK: return S_IFSOCK;
	case F2FS_FT_SYMLINK: return S_IFLNK;
	default: return 0;
	}
}

static bool is_dot_or_dotdot(const char *name, size_t len)
{
	return (len == 1 && name[0] == '.') || (len == 2 && name[0] == '.' && name[1] == '.');
}

static int fill_dir(void *arg, const char *name, size_t len, uint32_t ino,
		    unsigned int file_type, uint64_t next_off)
{
	struct dir_ctx *d = arg;
	char nm[DIR_NAME_MAX + 1];
	size_t need, room = d->size - d->used;

	if (len > DIR_NAME_MAX) {
		d->err = -ENAMETOOLONG;
		return 1;
	}
	memcpy(nm, name, len);
	nm[len] = '\0';

	if (!d->plus) {
		struct stat st = { .st_ino = ino, .st_mode = ftype_mode(file_type) };

		need = fuse_add_direntry(d->req, d->buf + d->used, room, nm, &st,
					 (off_t)next_off);
	} else {
		struct fuse_entry_param e;
		struct f2fs_stat fst;

		/*
		 * Every entry with a nonzero ino counts as a lookup.  "." and
		 * ".." are never linked by the kernel, so they go with ino 0;
		 * so does an entry whose inode cannot be read, which leaves the
		 * error to the lookup that follows instead of failing the listing.
		 */
		if (is_dot_or_dotdot(name, len) || f2fs_getattr(d->fs->sb, ino, &fst) != 0) {
			memset(&e, 0, sizeof(e));
			e.attr.st_ino = ino;
			e.attr.st_mode = ftype_mode(file_type);
		} else {
			fill_entry_param(d->fs, &fst, &e);
		}
		need = fuse_add_direntry_plus(d->req, d->buf + d->used, room, nm, &e,
					      (off_t)next_off);
	}
	if (need > room)
		return 1;	/* full: this entry is resent from its offset next time */
	d->used += need;
	return 0;
}

static void do_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, bool plus)
{
	struct f2fs_fuse *fs = req_fs(req);
	struct dir_ctx d = { .req = req, .fs = fs, .size = size, .plus = plus };
	int err;

	if (off < 0) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	d.buf = malloc(size ? size : 1);
	if (!d.buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	err = f2fs_readdir(fs->sb, f2fs_fuse_nid(fs, ino), (uint64_t)off, fill_dir, &d);
	if (!err)
		err = d.err;
	/* Entries already gathered go out; the error resurfaces on the next call. */
	if (err && d.used == 0)
		f2fs_fuse_reply_err(req, err);
	else
		fuse_reply_buf(req, d.buf, d.used);
	free(d.buf);
}

static void op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi)
{
	do_readdir(req, ino, size, off, false);
}

static void op_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
			   struct fuse_file_info *fi)
{
	do_readdir(req, ino, size, off, true);
}

static void op_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	fuse_reply_err(req, 0);
}

static void op_fsyncdir(fuse_req_t req, fuse_ino_t ino, int datasync,
			struct fuse_file_info *fi)
{
	fuse_reply_err(req, 0);
}

static void op_statfs(fuse_req_t req, fuse_ino_t ino)
{
	struct f2fs_fuse *fs = req_fs(req);
	struct f2fs_statfs sf;
	struct statvfs sv;
	int err;

	err = f2fs_statfs(fs->sb, &sf);
	if (err) {
		f2fs_fuse_reply_err(req, err);
		return;
	}
	memset(&sv, 0, sizeof(sv));
	sv.f_bsize = sf.bsize;
	sv.f_frsize = sf.bsize;
	sv.f_blocks = sf.blocks;
	sv.f_bfree = sf.bfree;
	sv.f_bavail = sf.bavail;
	sv.f_files = sf.files;
	sv.f_ffree = sf.ffree;
	sv.f_favail = sf.ffree;
	sv.f_namemax = sf.namemax;
	fuse_reply_statfs(req, &sv);
}

/* Shared by getxattr and listxattr: size 0 asks for the length only. */
static void reply_xattr_result(fuse_req_t req, ssize_t n, const char *buf, size_t size)
{
	if (n < 0)
		f2fs_fuse_reply_err(req, n);
	else if (size == 0)
		fuse_reply_xattr(req, (size_t)n);
	else if ((size_t)n > size)
		fuse_reply_err(req, ERANGE);
	else
		fuse_reply_buf(req, buf, (size_t)n);
}

static void op_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
{
	struct f2fs_fuse *fs = req_fs(req);
	char *buf = NULL;
	ssize_t n;

	if (size) {
		buf = malloc(size);
		if (!buf) {
			fuse_reply_err(req, ENOMEM);
			return;
		}
	}
	n = f2fs_getxattr(fs->sb, f2fs_fuse_nid(fs, ino), name, buf, size);
	reply_xattr_result(req, n, buf, size);
	free(buf);
}

static void op_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
	struct f2fs_fuse *fs = req_fs(req);
	char *buf = NULL;
	ssize_t n;

	if (size) {
		buf = malloc(size);
		if (!buf) {
			fuse_reply_err(req, ENOMEM);
			return;
		}
	}
	n = f2fs_listxattr(fs->sb, f2fs_fuse_nid(fs, ino), buf, size);
	reply_xattr_result(req, n, buf, size);
	free(buf);
}

/* ---- every modifying operation: the mount is read-only ---- */

static void op_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
		       struct fuse_file_info *fi)
{
	fuse_reply_err(req, EROFS);
}

static void op_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
		     dev_t rdev)
{
	fuse_reply_err(req, EROFS);
}

static void op_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
	fuse_reply_err(req, EROFS);
}

/* unlink, rmdir and removexattr share this signature. */
static void op_erofs_name(fuse_req_t req, fuse_ino_t ino, const char *name)
{
	fuse_reply_err(req, EROFS);
}

static void op_symlink(fuse_req_t req, const char *link, fuse_ino_t parent, const char *name)
{
	fuse_reply_err(req, EROFS);
}

static void op_rename(fuse_req_t req, fuse_ino_t parent, const char *name,
		      fuse_ino_t newparent, const char *newname, unsigned int flags)
{
	fuse_reply_err(req, EROFS);
}

static void op_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname)
{
	fuse_reply_err(req, EROFS);
}

static void op_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size, off_t off,
		     struct fuse_file_info *fi)
{
	fuse_reply_err(req, EROFS);
}

static void op_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
		      struct fuse_file_info *fi)
{
	fuse_reply_err(req, EROFS);
}

static void op_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name, const char *value,
			size_t size, int flags)
{
	fuse_reply_err(req, EROFS);
}

static void op_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t offset, off_t length,
			 struct fuse_file_info *fi)
{
	fuse_reply_err(req, EROFS);
}

static void op_copy_file_range(fuse_req_t req, fuse_ino_t ino_in, off_t off_in,
			       struct fuse_file_info *fi_in, fuse_ino_t ino_out, off_t off_out,
			       struct fuse_file_info *fi_out, size_t len, int flags)
{
	fuse_reply_err(req, EROFS);
}

const struct fuse_lowlevel_ops f2fs_fuse_ops = {
	.init = op_init,
	.lookup = op_lookup,
	.forget = op_forget,
	.forget_multi = op_forget_multi,
	.getattr = op_getattr,
	.readlink = op_readlink,
	.open = op_open,
	.read = op_read,
	.flush = op_flush,
	.release = op_release,
	.fsync = op_fsync,
	.opendir = op_opendir,
	.readdir = op_readdir,
	.readdirplus = op_readdirplus,
	.releasedir = op_releasedir,
	.fsyncdir = op_fsyncdir,
	.statfs = op_statfs,
	.getxattr = op_getxattr,
	.listxattr = op_listxattr,
	.ioctl = f2fs_fuse_ioctl,

	.setattr = op_setattr,
	.mknod = op_mknod,
	.mkdir = op_mkdir,
	.unlink = op_erofs_name,
	.rmdir = op_erofs_name,
	.symlink = op_symlink,
	.rename = op_rename,
	.link = op_link,
	.write = op_write,
	.create = op_create,
	.setxattr = op_setxattr,
	.removexattr = op_erofs_name,
	.fallocate = op_fallocate,
	.copy_file_range = op_copy_file_range,
};
