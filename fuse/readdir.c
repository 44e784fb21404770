// SPDX-License-Identifier: GPL-2.0
/*
 * Directory streams: opendir, readdir and readdirplus (which one the
 * kernel sends: see init in ops.c), releasedir, fsyncdir.
 */
#include "ops.h"
#include "format.h"		/* F2FS_FT_*: the file_type f2fs_readdir passes */

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>

static void op_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	F2FS_FUSE_COUNT_OP(req, F2FS_OP_OPENDIR);
	struct f2fs_fuse *fs = f2fs_fuse_req_fs(req);
	uint32_t nid = f2fs_fuse_nid(fs, ino);
	int err;

	/* As for files: an open directory removed (or renamed over) stays until releasedir. */
	err = f2fs_open(fs->sb, nid, O_RDONLY | O_DIRECTORY);
	if (err) {
		f2fs_fuse_reply_err(req, err);
		return;
	}
	/* Listings cannot change under us: let the kernel cache them, unless
	 * the next listing is to update the access time (see keep_cache). */
	fi->cache_readdir = 1;
	fi->keep_cache = f2fs_fuse_keep_cache(fs, nid, O_RDONLY);
	if (fuse_reply_open(req, fi) == -ENOENT)
		f2fs_release(fs->sb, nid);
}

struct dir_ctx {
	fuse_req_t req;
	struct f2fs_fuse *fs;
	char *buf;
	size_t size, used;
	bool casefolded;	/* the directory's: its entries are revalidated */
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

/* The entry's name as a C string for libfuse; false (and d->err) if too long. */
static bool entry_name(struct dir_ctx *d, const char *name, size_t len, char nm[DIR_NAME_MAX + 1])
{
	if (len > DIR_NAME_MAX) {
		d->err = -ENAMETOOLONG;
		return false;
	}
	memcpy(nm, name, len);
	nm[len] = '\0';
	return true;
}

static int fill_dir(void *arg, const char *name, size_t len, uint32_t ino,
		    unsigned int file_type, uint64_t next_off)
{
	struct dir_ctx *d = arg;
	char nm[DIR_NAME_MAX + 1];
	struct stat st = { .st_ino = ino, .st_mode = ftype_mode(file_type) };
	size_t need, room = d->size - d->used;

	if (!entry_name(d, name, len, nm))
		return 1;

	need = fuse_add_direntry(d->req, d->buf + d->used, room, nm, &st, (off_t)next_off);
	if (need > room)
		return 1;	/* full: this entry is resent from its offset next time */
	d->used += need;
	return 0;
}

/*
 * With attributes: the kernel links each entry with a nonzero node id
 * into its dcache as if looked up, so a stat walk after a listing costs no
 * LOOKUP round trips.  "." and ".." and entries whose inode cannot be read
 * go with node id 0, which the kernel takes as a plain entry.
 */
static int fill_dir_plus(void *arg, const char *name, size_t len, uint32_t ino,
			 unsigned int file_type, uint64_t next_off, const struct f2fs_stat *st)
{
	struct dir_ctx *d = arg;
	char nm[DIR_NAME_MAX + 1];
	struct fuse_entry_param e;
	size_t need, room = d->size - d->used;

	if (!entry_name(d, name, len, nm))
		return 1;
	/* Sized first: an entry that does not fit must not count as a lookup. */
	need = fuse_add_direntry_plus(d->req, NULL, 0, nm, NULL, (off_t)next_off);
	if (need > room)
		return 1;
	if (st) {
		f2fs_fuse_fill_entry(d->fs, st, &e);
		if (d->casefolded)
			e.entry_timeout = 0;
	} else {
		memset(&e, 0, sizeof(e));
		e.attr.st_ino = ino;
		e.attr.st_mode = ftype_mode(file_type);
	}
	d->used += fuse_add_direntry_plus(d->req, d->buf + d->used, room, nm, &e, (off_t)next_off);
	return 0;
}

/*
 * READDIR and READDIRPLUS: entries from off into one reply of at most size
 * bytes.  Entries already gathered go out; an error after them resurfaces
 * on the next call.
 */
static void do_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, bool plus)
{
	struct f2fs_fuse *fs = f2fs_fuse_req_fs(req);
	struct dir_ctx d = { .req = req, .fs = fs, .size = size };
	uint32_t nid = f2fs_fuse_nid(fs, ino);
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
	if (plus) {
		/* No more entries than could fit: each is one inode read ahead. */
		uint32_t max = (uint32_t)(size / fuse_add_direntry_plus(req, NULL, 0, "", NULL, 0)) + 1;

		d.casefolded = f2fs_dir_casefolded(fs->sb, nid);
		err = f2fs_readdir_plus(fs->sb, nid, (uint64_t)off, max, fill_dir_plus, &d);
	} else {
		err = f2fs_readdir(fs->sb, nid, (uint64_t)off, fill_dir, &d);
	}
	if (!err)
		err = d.err;
	if (!err)
		f2fs_fuse_touch_atime(fs, ino);
	if (err && d.used == 0)
		f2fs_fuse_reply_err(req, err);
	else
		fuse_reply_buf(req, d.buf, d.used);
	free(d.buf);
}

static void op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi)
{
	F2FS_FUSE_COUNT_OP(req, F2FS_OP_READDIR);
	do_readdir(req, ino, size, off, false);
}

static void op_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
			   struct fuse_file_info *fi)
{
	F2FS_FUSE_COUNT_OP(req, F2FS_OP_READDIRPLUS);
	do_readdir(req, ino, size, off, true);
}

static void op_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	F2FS_FUSE_COUNT_OP(req, F2FS_OP_RELEASEDIR);
	struct f2fs_fuse *fs = f2fs_fuse_req_fs(req);

	f2fs_fuse_reply_status(req, f2fs_release(fs->sb, f2fs_fuse_nid(fs, ino)));
}

static void op_fsyncdir(fuse_req_t req, fuse_ino_t ino, int datasync,
			struct fuse_file_info *fi)
{
	F2FS_FUSE_COUNT_OP(req, F2FS_OP_FSYNCDIR);
	struct f2fs_fuse *fs = f2fs_fuse_req_fs(req);

	/* A directory's fsync commits a checkpoint in the core. */
	f2fs_fuse_reply_status(req, f2fs_fsync(fs->sb, f2fs_fuse_nid(fs, ino), datasync != 0));
}

void f2fs_fuse_readdir_ops(struct fuse_lowlevel_ops *ops)
{
	ops->opendir = op_opendir;
	ops->readdir = op_readdir;
	ops->readdirplus = op_readdirplus;
	ops->releasedir = op_releasedir;
	ops->fsyncdir = op_fsyncdir;
}
