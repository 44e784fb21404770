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
#include <time.h>

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
	bool probe;		/* the next non-directory goes without attributes */
	uint32_t plain;		/* entries sent without attributes ("." and ".." aside) */
	int err;
};

/*
 * readdirplus=adaptive.  A listing with attributes makes the kernel
 * instantiate an inode for every entry, and the inodes must be read first:
 * about ten times the cost of the names alone (find, ls, shell globs),
 * while a stat walk (ls -l, du, find | xargs stat, tar) saves a LOOKUP
 * round trip per entry with them.  The two look alike when the listing
 * comes, so the answer comes from what follows: entries sent without
 * attributes that are then looked up (a stat walk) turn attributes on for
 * the listings of the next RDPLUS_HOLD_MS, and each later lookup of such
 * an entry extends that.  Once half of that time is gone, a listing with
 * attributes sends one non-directory without them (a probe): a stat walk
 * looks it up and so keeps attributes on; a walk of names alone lets them
 * lapse.  Lookups of directories do not count: a walk of names descends
 * into them by name.
 */
#define RDPLUS_HOLD_MS 1000
/* How long a listing's entries sent without attributes are watched. */
#define RDPLUS_WATCH_MS 2000
/* Lookups of one directory's entries that make a stat walk (all, if fewer). */
#define RDPLUS_LOOKUPS 4

static int64_t now_ms(void)
{
	return f2fs_fuse_mono_us() / 1000;
}

static struct f2fs_fuse_rdplus_dir *rdplus_slot(struct f2fs_fuse_rdplus *r, uint32_t nid)
{
	return &r->dir[(uint32_t)(nid * 2654435761u) % F2FS_FUSE_RDPLUS_DIRS];
}

/* A listing of nid sent `plain` entries without attributes: watch them. */
static void rdplus_listed(struct f2fs_fuse *fs, uint32_t nid, uint32_t plain, int64_t now)
{
	struct f2fs_fuse_rdplus *r = &fs->rdplus;
	struct f2fs_fuse_rdplus_dir *s;

	if (!plain)
		return;
	pthread_mutex_lock(&r->lock);
	s = rdplus_slot(r, nid);
	if (s->nid != nid || now - s->ms > RDPLUS_WATCH_MS)
		*s = (struct f2fs_fuse_rdplus_dir){ .nid = nid };
	s->plain += plain;
	s->ms = now;
	pthread_mutex_unlock(&r->lock);
	atomic_store(&r->last_plain_ms, now);
}

void f2fs_fuse_rdplus_lookup(struct f2fs_fuse *fs, fuse_ino_t parent, const struct f2fs_stat *st)
{
	struct f2fs_fuse_rdplus *r = &fs->rdplus;
	struct f2fs_fuse_rdplus_dir *s;
	uint32_t nid = f2fs_fuse_nid(fs, parent);
	int64_t now;

	if (fs->readdirplus != F2FS_FUSE_RDPLUS_ADAPTIVE || S_ISDIR(st->mode))
		return;
	now = now_ms();
	if (now - atomic_load(&r->last_plain_ms) > RDPLUS_WATCH_MS)
		return;	/* nothing listed without attributes lately */
	pthread_mutex_lock(&r->lock);
	s = rdplus_slot(r, nid);
	if (s->nid == nid && now - s->ms <= RDPLUS_WATCH_MS &&
	    ++s->looked >= (s->plain < RDPLUS_LOOKUPS ? s->plain : RDPLUS_LOOKUPS))
		atomic_store(&r->plus_until_ms, now + RDPLUS_HOLD_MS);
	pthread_mutex_unlock(&r->lock);
}

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

static bool dot_or_dotdot(const char *name, size_t len)
{
	return (len == 1 && name[0] == '.') || (len == 2 && name[0] == '.' && name[1] == '.');
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
 * go with node id 0, which the kernel takes as a plain entry, and so do
 * the entries readdirplus=adaptive sends as names alone.
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
	if (st && d->probe && file_type != F2FS_FT_DIR) {
		d->probe = false;
		st = NULL;
	}
	if (st) {
		f2fs_fuse_fill_entry(d->fs, st, &e);
		if (d->casefolded)
			e.entry_timeout = 0;
	} else {
		memset(&e, 0, sizeof(e));
		e.attr.st_ino = ino;
		e.attr.st_mode = ftype_mode(file_type);
		if (!dot_or_dotdot(name, len))
			d->plain++;
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
	bool attrs = true;
	int64_t now = 0;
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
	if (plus && fs->readdirplus == F2FS_FUSE_RDPLUS_ADAPTIVE) {
		int64_t until = atomic_load(&fs->rdplus.plus_until_ms);

		now = now_ms();
		attrs = now < until;
		/* a probe when half the time is gone: a stat walk renews it in time */
		d.probe = attrs && until - now <= RDPLUS_HOLD_MS / 2;
	}
	if (plus) {
		/* No more entries than could fit: each is one inode read ahead. */
		uint32_t max = (uint32_t)(size / fuse_add_direntry_plus(req, NULL, 0, "", NULL, 0)) + 1;

		/*
		 * Names alone still give subdirectories their attributes: a
		 * walk of names descends into them, which would otherwise be a
		 * LOOKUP of each.
		 */
		d.casefolded = f2fs_dir_casefolded(fs->sb, nid);
		err = f2fs_readdir_plus(fs->sb, nid, (uint64_t)off, max, !attrs, fill_dir_plus, &d);
	} else {
		err = f2fs_readdir(fs->sb, nid, (uint64_t)off, fill_dir, &d);
	}
	if (plus && fs->readdirplus == F2FS_FUSE_RDPLUS_ADAPTIVE)
		rdplus_listed(fs, nid, d.plain, now);
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
