// SPDX-License-Identifier: GPL-2.0
/*
 * libfuse low-level operations: each one converts the request into a core
 * call and the result into a reply.  No filesystem logic lives here.
 */
#include "f2fs_fuse.h"
#include "keyctl.h"
#include "format.h"		/* F2FS_FT_*: the file_type f2fs_readdir passes */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <linux/capability.h>	/* CAP_FSETID */

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

/* 0, or a negative errno from the core. */
static void reply_status(fuse_req_t req, long err)
{
	if (err == 0)
		fuse_reply_err(req, 0);
	else
		f2fs_fuse_reply_err(req, err);
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
	/*
	 * The kernel made the root inode itself with generation 0, and an
	 * entry for a known node id with another generation marks that
	 * inode stale; file handles to the root carry 0 as well.
	 */
	e->generation = e->ino == FUSE_ROOT_ID ? 0 : st->generation;
	to_stat(fs, st, &e->attr);
	e->attr_timeout = F2FS_FUSE_TIMEOUT;
	e->entry_timeout = F2FS_FUSE_TIMEOUT;
	/* The kernel now holds ino: flushed from its caches when a key changes. */
	f2fs_keyctl_lookup(fs->keyctl, e->ino);
}

/*
 * The maintenance thread: f2fs_maintenance() about once a second, for the
 * periodic checkpoint.  It starts in init, after fuse_daemonize() has
 * forked, because a fork keeps only the calling thread.
 */
static void *upkeep_main(void *arg)
{
	struct f2fs_fuse *fs = arg;
	struct timespec until;

	pthread_mutex_lock(&fs->upkeep_lock);
	while (!fs->upkeep_stop) {
		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_sec += 1;
		while (!fs->upkeep_stop &&
		       pthread_cond_timedwait(&fs->upkeep_cond, &fs->upkeep_lock, &until) == 0)
			;
		if (fs->upkeep_stop)
			break;
		pthread_mutex_unlock(&fs->upkeep_lock);
		f2fs_maintenance(fs->sb);
		pthread_mutex_lock(&fs->upkeep_lock);
	}
	pthread_mutex_unlock(&fs->upkeep_lock);
	return NULL;
}

static void start_upkeep(struct f2fs_fuse *fs)
{
	sigset_t all, old;
	int err;

	/*
	 * The thread inherits a mask blocking every signal, so SIGINT and
	 * SIGTERM go to a thread of the session loop, which they wake.
	 */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&fs->upkeep, NULL, upkeep_main, fs);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		f2fs_fuse_log(fs, F2FS_LOG_WARN, "no maintenance thread (%s): checkpoints only "
			      "at fsync and unmount", strerror(err));
		return;
	}
	fs->upkeep_running = true;
}

void f2fs_fuse_stop_upkeep(struct f2fs_fuse *fs)
{
	if (!fs->upkeep_running)
		return;
	pthread_mutex_lock(&fs->upkeep_lock);
	fs->upkeep_stop = true;
	pthread_cond_signal(&fs->upkeep_cond);
	pthread_mutex_unlock(&fs->upkeep_lock);
	pthread_join(fs->upkeep, NULL);
	fs->upkeep_running = false;
}

static void op_init(void *userdata, struct fuse_conn_info *conn)
{
	struct f2fs_fuse *fs = userdata;
	/*
	 * EXPORT_SUPPORT: the kernel may look up "." and ".." for file
	 * handles (name_to_handle_at, NFS); a handle is the node id, which is
	 * the nid, and the inode's i_generation, so it outlives the kernel's
	 * caches and the mount itself.
	 */
	unsigned int want = FUSE_CAP_ASYNC_READ | FUSE_CAP_IOCTL_DIR |
			    FUSE_CAP_CACHE_SYMLINKS | FUSE_CAP_EXPORT_SUPPORT;

	/*
	 * No readdirplus: it loads every inode of a listing, one node block
	 * read each in name-hash order, also when only names are wanted
	 * (find, ls, globbing); READDIRPLUS_AUTO still sends it for the first
	 * batch of every directory.  A stat after a plain listing costs a
	 * LOOKUP round trip, but that loads the same inode, and a cold listing
	 * of names reads no inodes at all (docs/benchmarks-meta.md).
	 */
	conn->want &= ~(FUSE_CAP_READDIRPLUS | FUSE_CAP_READDIRPLUS_AUTO | FUSE_CAP_SPLICE_WRITE |
			FUSE_CAP_SPLICE_MOVE | FUSE_CAP_SPLICE_READ);
	/*
	 * libfuse asks for these by default.  Without them the kernel clears
	 * set-user/group-ID bits itself (a SETATTR of the mode on write,
	 * truncate and chown) and truncates an O_TRUNC open with a SETATTR of
	 * the size, which keeps that logic out of here.  No writeback cache:
	 * every write reaches the core when write(2) returns.
	 */
	conn->want &= ~(FUSE_CAP_HANDLE_KILLPRIV | FUSE_CAP_ATOMIC_O_TRUNC |
			FUSE_CAP_WRITEBACK_CACHE);
	/* With ACLs the umask comes with each create: it does not apply under a
	 * default ACL, which the core decides (posix_acl_create). */
	if (fs->posix_acl)
		want |= FUSE_CAP_POSIX_ACL | FUSE_CAP_DONT_MASK;
	/* Asking for anything the kernel lacks makes libfuse abort the mount. */
	conn->want |= want & conn->capable;
	fs->posix_acl = (conn->want & FUSE_CAP_POSIX_ACL) != 0;

	/* The kernel caps this at its own read-ahead window (see bdi.c). */
	conn->max_readahead = F2FS_FUSE_READAHEAD;
	if (fs->read_ahead_kb && fs->mountpoint) {
		int err = f2fs_fuse_set_readahead(fs->mountpoint, fs->read_ahead_kb);

		/* not being root is the usual reason; the kernel's window still works */
		if (err && fs->log_level >= F2FS_LOG_DEBUG)
			f2fs_fuse_log(fs, F2FS_LOG_DEBUG, "read-ahead %u KiB not set: %s",
				      fs->read_ahead_kb, strerror(-err));
	}
	/* libfuse lowers this to its buffer size (and sets max_pages to match). */
	conn->max_write = F2FS_FUSE_MAX_WRITE;

	if (!fs->readonly)
		start_upkeep(fs);
	/* The key control socket's thread, also only after the fork. */
	f2fs_keyctl_start(fs);
}

static void op_destroy(void *userdata)
{
	f2fs_fuse_stop_upkeep(userdata);
	f2fs_keyctl_stop(userdata);
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
 * The kernel looks up "." and ".." only to decode file handles: "." of a
 * node id it no longer holds (the handle's own), ".." of a directory to
 * reconnect it to the tree.  A handle that outlived its inode is ESTALE.
 */
static void lookup_handle(fuse_req_t req, fuse_ino_t ino, bool parent)
{
	struct f2fs_fuse *fs = req_fs(req);
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
	fill_entry_param(fs, &st, &e);
	fuse_reply_entry(req, &e);
}

static void op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	F2FS_FUSE_COUNT_OP(req, F2FS_OP_LOOKUP);
	struct f2fs_fuse *fs = req_fs(req);
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
		if (f2fs_keyctl_may_cache_absence(fs, parent))
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
	F2FS_FUSE_COUNT_OP(req, F2FS_OP_FORGET);
	/* The core caches inodes itself; keyctl counts lookups for invalidation. */
	f2fs_keyctl_forget(req_fs(req)->keyctl, ino, nlookup);
	fuse_reply_none(req);
}

static void op_forget_multi(fuse_req_t req, size_t count, struct fuse_forget_data *forgets)
{
	F2FS_FUSE_COUNT_OP(req, F2FS_OP_BATCH_FORGET);
	for (size_t i = 0; i < count; i++)
		f2fs_keyctl_forget(req_fs(req)->keyctl, forgets[i].ino, forgets[i].nlookup);
	fuse_reply_none(req);
}

static void op_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	F2FS_FUSE_COUNT_OP(req, F2FS_OP_GETATTR);
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
	F2FS_FUSE_COUNT_OP(req, F2FS_OP_READLINK);
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

/*
 * The kernel leaves access times to us but serves most reads from its
 * page cache, so a read that is due to update the access time (relatime:
 * the first after a change) must reach us: such an open drops the cached
 * pages (no keep_cache).
 */
static bool keep_cache(struct f2fs_fuse *fs, uint32_t nid, int oflags)
{
	return (oflags & O_ACCMODE) == O_WRONLY || atomic_load(&fs->vfs_readonly) ||
	       !f2fs_atime_due(fs->sb, nid);
}

/*
 * After a READ or READDIR, before the reply: the kernel asks for the new
 * atime after it.  Not while the mount is read-only (remount,ro), which
 * leaves the image as its checkpoint has it.
 */
static void touch_atime(struct f2fs_fuse *fs, fuse_ino_t ino)
{
	if (!atomic_load(&fs->vfs_readonly))
		f2fs_touch_atime(fs->sb, f2fs_fuse_nid(fs, ino));
}

/* We are the image's only writer, so cached pages otherwise stay valid across opens. */
static void set_open_flags(struct f2fs_fuse *fs, uint32_t nid, struct fuse_file_info *fi)
{
	fi->keep_cache = keep_cache(fs, nid, fi->flags);
	fi->direct_io = 0;
	/* Writes are not buffered here: close has nothing to flush. */
	fi->noflush = 1;
}

void f2fs_fuse_inval_attrs(struct f2fs_fuse *fs, fuse_ino_t ino)
{
	if (fs->se)
		fuse_lowlevel_notify_inval_inode(fs->se, ino, -1, 0);
}

static void op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	F2FS_FUSE_COUNT_OP(req, F2FS_OP_OPEN);
	struct f2fs_fuse *fs = req_fs(req);
	uint32_t nid = f2fs_fuse_nid(fs, ino);
	int err;

	/* The open count keeps an unlinked inode until release. */
	err = f2fs_open(fs->sb, nid, fi->flags);
	if (err) {
		f2fs_fuse_reply_err(req, err);
		return;
	}
	set_open_flags(fs, nid, fi);
	/* An interrupted open gets no release; drop the count now. */
	if (fuse_reply_open(req, fi) == -ENOENT)
		f2fs_release(fs->sb, nid);
}

static void op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	F2FS_FUSE_COUNT_OP(req, F2FS_OP_READ);
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
	if (n >= 0)
		touch_atime(fs, ino);
	if (n < 0)
		f2fs_fuse_reply_err(req, n);
	else
		fuse_reply_buf(req, buf, (size_t)n > size ? size : (size_t)n);
	free(buf);
}

static void op_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	F2FS_FUSE_COUNT_OP(req, F2FS_OP_RELEASE);
	struct f2fs_fuse *fs = req_fs(req);

	/* The kernel ignores the result; the last release of an unlinked file frees it. */
	reply_status(req, f2fs_release(fs->sb, f2fs_fuse_nid(fs, ino)));
}

static void op_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	F2FS_FUSE_COUNT_OP(req, F2FS_OP_FLUSH);
	fuse_reply_err(req, 0);
}

static void op_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	F2FS_FUSE_COUNT_OP(req, F2FS_OP_FSYNC);
	struct f2fs_fuse *fs = req_fs(req);

	reply_status(req, f2fs_fsync(fs->sb, f2fs_fuse_nid(fs, ino), datasync != 0));
}

static void op_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	F2FS_FUSE_COUNT_OP(req, F2FS_OP_OPENDIR);
	struct f2fs_fuse *fs = req_fs(req);
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
	fi->keep_cache = keep_cache(fs, nid, O_RDONLY);
	if (fuse_reply_open(req, fi) == -ENOENT)
		f2fs_release(fs->sb, nid);
}

struct dir_ctx {
	fuse_req_t req;
	struct f2fs_fuse *fs;
	char *buf;
	size_t size, used;
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

static int fill_dir(void *arg, const char *name, size_t len, uint32_t ino,
		    unsigned int file_type, uint64_t next_off)
{
	struct dir_ctx *d = arg;
	char nm[DIR_NAME_MAX + 1];
	struct stat st = { .st_ino = ino, .st_mode = ftype_mode(file_type) };
	size_t need, room = d->size - d->used;

	if (len > DIR_NAME_MAX) {
		d->err = -ENAMETOOLONG;
		return 1;
	}
	memcpy(nm, name, len);
	nm[len] = '\0';

	need = fuse_add_direntry(d->req, d->buf + d->used, room, nm, &st, (off_t)next_off);
	if (need > room)
		return 1;	/* full: this entry is resent from its offset next time */
	d->used += need;
	return 0;
}

static void op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi)
{
	F2FS_FUSE_COUNT_OP(req, F2FS_OP_READDIR);
	struct f2fs_fuse *fs = req_fs(req);
	struct dir_ctx d = { .req = req, .fs = fs, .size = size };
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
	if (!err)
		touch_atime(fs, ino);
	/* Entries already gathered go out; the error resurfaces on the next call. */
	if (err && d.used == 0)
		f2fs_fuse_reply_err(req, err);
	else
		fuse_reply_buf(req, d.buf, d.used);
	free(d.buf);
}

static void op_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	F2FS_FUSE_COUNT_OP(req, F2FS_OP_RELEASEDIR);
	struct f2fs_fuse *fs = req_fs(req);

	reply_status(req, f2fs_release(fs->sb, f2fs_fuse_nid(fs, ino)));
}

static void op_fsyncdir(fuse_req_t req, fuse_ino_t ino, int datasync,
			struct fuse_file_info *fi)
{
	F2FS_FUSE_COUNT_OP(req, F2FS_OP_FSYNCDIR);
	struct f2fs_fuse *fs = req_fs(req);

	/* A directory's fsync commits a checkpoint in the core. */
	reply_status(req, f2fs_fsync(fs->sb, f2fs_fuse_nid(fs, ino), datasync != 0));
}

static void op_statfs(fuse_req_t req, fuse_ino_t ino)
{
	F2FS_FUSE_COUNT_OP(req, F2FS_OP_STATFS);
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
	F2FS_FUSE_COUNT_OP(req, F2FS_OP_GETXATTR);
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
	F2FS_FUSE_COUNT_OP(req, F2FS_OP_LISTXATTR);
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

/* ---- changes: the core answers EROFS on a read-only mount ---- */

/*
 * The caller's identity for new inodes.  The supplementary groups only
 * matter for a set-group-ID mode, and reading them costs a trip to /proc,
 * so they are fetched only then.
 */
struct req_cred {
	struct f2fs_cred cred;
	gid_t *groups;
};

static void get_cred(fuse_req_t req, uint32_t mode, struct req_cred *rc)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);
	int n, m;

	memset(rc, 0, sizeof(*rc));
	rc->cred.uid = ctx->uid;
	rc->cred.gid = ctx->gid;
	rc->cred.umask = ctx->umask;	/* 0 unless FUSE_CAP_DONT_MASK is in effect */
	if (!(mode & S_ISGID))
		return;
	n = fuse_req_getgroups(req, 0, NULL);
	if (n <= 0)
		return;
	rc->groups = calloc((size_t)n, sizeof(gid_t));
	if (!rc->groups)
		return;
	m = fuse_req_getgroups(req, n, rc->groups);
	/* gid_t and the core's uint32_t are the same type on Linux. */
	rc->cred.groups = (const uint32_t *)rc->groups;
	rc->cred.ngroups = m < 0 ? 0 : (m < n ? m : n);
}

static void put_cred(struct req_cred *rc)
{
	free(rc->groups);
}

/*
 * CAP_FSETID in the caller's effective set, which keeps set-ID bits through
 * writes and ACL changes.  The kernel does not send capabilities; /proc has
 * them (as it has the groups for fuse_req_getgroups).  Without it, root
 * stands for the capability.
 */
static bool caller_has_fsetid(fuse_req_t req)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);
	unsigned long long eff;
	bool cap = ctx->uid == 0;
	char path[64], line[256];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%lu/task/%lu/status", (unsigned long)ctx->pid,
		 (unsigned long)ctx->pid);
	f = fopen(path, "re");
	if (!f)
		return cap;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &eff) == 1) {
			cap = (eff >> CAP_FSETID) & 1;
			break;
		}
	fclose(f);
	return cap;
}

/*
 * file_remove_privs for a write, truncate or fallocate.  The kernel sends a
 * SETATTR of the mode first, but by the rule it had before Linux 6.2 (FUSE
 * recomputes it): set-group-ID without group-exec is kept even when the
 * caller is outside the file's group.  *killed: the bits this cleared.
 */
static int remove_privs(fuse_req_t req, struct f2fs_fuse *fs, uint32_t nid, uint32_t *killed)
{
	struct f2fs_stat st;
	struct req_cred rc;
	int err;

	*killed = 0;
	/* pid 0: the kernel's own requests, which keep the bits */
	if (fuse_req_ctx(req)->pid == 0)
		return 0;
	/* errors are the operation's to report */
	if (f2fs_getattr(fs->sb, nid, &st) != 0 || !S_ISREG(st.mode) ||
	    !(st.mode & (S_ISUID | S_ISGID)) || caller_has_fsetid(req))
		return 0;
	get_cred(req, S_ISGID, &rc);
	err = f2fs_remove_privs(fs->sb, nid, &rc.cred, killed);
	put_cred(&rc);
	return err;
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

static void reply_new_entry(fuse_req_t req, const struct f2fs_fuse *fs, int err,
			    const struct f2fs_stat *st)
{
	struct fuse_entry_param e;
	struct f2fs_stat buf;

	if (err) {
		f2fs_fuse_reply_err(req, err);
		return;
	}
	fill_entry_param(fs, shown_stat(fs, st, &buf), &e);
	fuse_reply_entry(req, &e);
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
	struct f2fs_fuse *fs = req_fs(req);
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
		err = remove_privs(req, fs, f2fs_fuse_nid(fs, ino), &killed);
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
	struct f2fs_fuse *fs = req_fs(req);
	struct req_cred rc;
	struct f2fs_stat st;
	uint32_t maj = 0, min = 0;
	int err;

	if (name_too_long(req, name))
		return;
	if (S_ISCHR(mode) || S_ISBLK(mode)) {
		maj = major(rdev);
		min = minor(rdev);
	}
	get_cred(req, mode, &rc);
	err = f2fs_mknod(fs->sb, f2fs_fuse_nid(fs, parent), name, strlen(name), mode, maj, min,
			 &rc.cred, &st);
	put_cred(&rc);
	reply_new_entry(req, fs, err, &st);
}

static void op_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
	F2FS_FUSE_COUNT_OP(req, F2FS_OP_MKDIR);
	struct f2fs_fuse *fs = req_fs(req);
	struct req_cred rc;
	struct f2fs_stat st;
	int err;

	if (name_too_long(req, name))
		return;
	get_cred(req, mode, &rc);
	err = f2fs_mkdir(fs->sb, f2fs_fuse_nid(fs, parent), name, strlen(name), mode, &rc.cred,
			 &st);
	put_cred(&rc);
	reply_new_entry(req, fs, err, &st);
}

static void op_symlink(fuse_req_t req, const char *link, fuse_ino_t parent, const char *name)
{
	F2FS_FUSE_COUNT_OP(req, F2FS_OP_SYMLINK);
	struct f2fs_fuse *fs = req_fs(req);
	struct req_cred rc;
	struct f2fs_stat st;
	int err;

	if (name_too_long(req, name))
		return;
	get_cred(req, 0, &rc);
	err = f2fs_symlink(fs->sb, f2fs_fuse_nid(fs, parent), name, strlen(name), link, &rc.cred,
			   &st);
	put_cred(&rc);
	reply_new_entry(req, fs, err, &st);
}

static void op_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname)
{
	F2FS_FUSE_COUNT_OP(req, F2FS_OP_LINK);
	struct f2fs_fuse *fs = req_fs(req);
	struct f2fs_stat st;
	int err;

	if (name_too_long(req, newname))
		return;
	err = f2fs_link(fs->sb, f2fs_fuse_nid(fs, ino), f2fs_fuse_nid(fs, newparent), newname,
			strlen(newname), &st);
	reply_new_entry(req, fs, err, &st);
}

static void op_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	F2FS_FUSE_COUNT_OP(req, F2FS_OP_UNLINK);
	struct f2fs_fuse *fs = req_fs(req);

	if (name_too_long(req, name))
		return;
	reply_status(req, f2fs_unlink(fs->sb, f2fs_fuse_nid(fs, parent), name, strlen(name)));
}

static void op_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	F2FS_FUSE_COUNT_OP(req, F2FS_OP_RMDIR);
	struct f2fs_fuse *fs = req_fs(req);

	if (name_too_long(req, name))
		return;
	reply_status(req, f2fs_rmdir(fs->sb, f2fs_fuse_nid(fs, parent), name, strlen(name)));
}

static void op_rename(fuse_req_t req, fuse_ino_t parent, const char *name,
		      fuse_ino_t newparent, const char *newname, unsigned int flags)
{
	F2FS_FUSE_COUNT_OP(req, F2FS_OP_RENAME);
	struct f2fs_fuse *fs = req_fs(req);
	int err;

	if (name_too_long(req, name) || name_too_long(req, newname))
		return;
	/* flags are RENAME_NOREPLACE or RENAME_EXCHANGE, as the core takes them. */
	err = f2fs_rename(fs->sb, f2fs_fuse_nid(fs, parent), name, strlen(name),
			  f2fs_fuse_nid(fs, newparent), newname, strlen(newname), flags);
	reply_status(req, err);
}

/*
 * A write that came past the kernel's page cache: O_DIRECT, and sent by the
 * direct I/O path, which alone names a lock owner (a buffered write of an
 * O_DIRECT file, the kernel's fallback, holds the range's pages locked).
 */
static bool direct_write(const struct fuse_file_info *fi)
{
	return (fi->flags & O_DIRECT) && fi->lock_owner && !fi->writepage;
}

/*
 * Drop the kernel's cached pages of a range written with O_DIRECT.  Linux
 * does that itself after a synchronous direct write but not after an
 * asynchronous one (AIO, io_uring), so a buffered reader racing with it
 * keeps the old data.  Invalidation waits for locked pages, such as those
 * of a READ not yet served: it is skipped when no other thread would be
 * left to serve it (-s, or every other thread waiting too), where the
 * kernel's own behaviour stands.  The daemon's caches need nothing: every
 * read and write goes through the same core calls.
 */
static void drop_cached_range(struct f2fs_fuse *fs, fuse_ino_t ino, off_t off, size_t len)
{
	unsigned int waiting = atomic_fetch_add(&fs->inval_waiters, 1);

	if (fs->se && waiting + 1 < fs->max_threads)
		fuse_lowlevel_notify_inval_inode(fs->se, ino, off, (off_t)len);
	atomic_fetch_sub(&fs->inval_waiters, 1);
}

static void op_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size, off_t off,
		     struct fuse_file_info *fi)
{
	F2FS_FUSE_COUNT_OP(req, F2FS_OP_WRITE);
	struct f2fs_fuse *fs = req_fs(req);
	uint32_t killed = 0;
	ssize_t n;
	int err;

	if (off < 0) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	/* page writeback (mmap) is the kernel's, and keeps the bits as it does */
	err = fi->writepage ? 0 : remove_privs(req, fs, f2fs_fuse_nid(fs, ino), &killed);
	if (err) {
		f2fs_fuse_reply_err(req, err);
		return;
	}
	n = f2fs_write(fs->sb, f2fs_fuse_nid(fs, ino), buf, size, (uint64_t)off);
	if (killed)
		f2fs_fuse_inval_attrs(fs, ino);
	if (n > 0 && direct_write(fi))
		drop_cached_range(fs, ino, off, (size_t)n);
	if (n < 0)
		f2fs_fuse_reply_err(req, n);
	else
		fuse_reply_write(req, (size_t)n > size ? size : (size_t)n);
}

static void op_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
		      struct fuse_file_info *fi)
{
	F2FS_FUSE_COUNT_OP(req, F2FS_OP_CREATE);
	struct f2fs_fuse *fs = req_fs(req);
	struct fuse_entry_param e;
	struct req_cred rc;
	struct f2fs_stat st;
	int err;

	if (name_too_long(req, name))
		return;
	/*
	 * The kernel sends CREATE only for a name it knows to be absent, with
	 * the directory locked, so an existing name is EEXIST even without
	 * O_EXCL.
	 */
	get_cred(req, mode, &rc);
	err = f2fs_mknod(fs->sb, f2fs_fuse_nid(fs, parent), name, strlen(name),
			 S_IFREG | (mode & 07777), 0, 0, &rc.cred, &st);
	put_cred(&rc);
	if (!err)
		err = f2fs_open(fs->sb, st.ino, fi->flags);
	if (err) {
		f2fs_fuse_reply_err(req, err);
		return;
	}
	fill_entry_param(fs, &st, &e);
	set_open_flags(fs, st.ino, fi);
	/* An interrupted create leaves no file handle for release to drop. */
	if (fuse_reply_create(req, &e, fi) == -ENOENT)
		f2fs_release(fs->sb, st.ino);
}

/*
 * posix_acl_update_mode: an access ACL set by a caller outside the file's
 * group and without CAP_FSETID clears set-group-ID.  The kernel sends that
 * as a flag only with FUSE_SETXATTR_EXT, which libfuse 3.14 does not pass
 * on, so it is decided here.
 */
static bool acl_kills_sgid(fuse_req_t req, struct f2fs_fuse *fs, uint32_t nid, const char *name)
{
	struct f2fs_stat st;
	struct req_cred rc;
	bool outside;

	if (!fs->posix_acl || strcmp(name, "system.posix_acl_access") != 0 ||
	    f2fs_getattr(fs->sb, nid, &st) != 0 || !(st.mode & S_ISGID))
		return false;
	get_cred(req, S_ISGID, &rc);
	outside = !f2fs_cred_in_group(&rc.cred, st.gid);
	put_cred(&rc);
	return outside && !caller_has_fsetid(req);
}

static void op_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name, const char *value,
			size_t size, int flags)
{
	F2FS_FUSE_COUNT_OP(req, F2FS_OP_SETXATTR);
	struct f2fs_fuse *fs = req_fs(req);
	uint32_t nid = f2fs_fuse_nid(fs, ino);
	bool kill = acl_kills_sgid(req, fs, nid, name);
	int err;

	flags &= ~F2FS_XATTR_ACL_KILL_SGID;
	err = f2fs_setxattr(fs->sb, nid, name, value, size,
			    flags | (kill ? F2FS_XATTR_ACL_KILL_SGID : 0));
	if (!err && kill)
		f2fs_fuse_inval_attrs(fs, ino);
	reply_status(req, err);
}

static void op_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name)
{
	F2FS_FUSE_COUNT_OP(req, F2FS_OP_REMOVEXATTR);
	struct f2fs_fuse *fs = req_fs(req);

	reply_status(req, f2fs_removexattr(fs->sb, f2fs_fuse_nid(fs, ino), name));
}

static void op_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t offset, off_t length,
			 struct fuse_file_info *fi)
{
	F2FS_FUSE_COUNT_OP(req, F2FS_OP_FALLOCATE);
	struct f2fs_fuse *fs = req_fs(req);

	uint32_t killed;
	int err;

	if (offset < 0 || length <= 0) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	/* file_modified, before the change, as vfs_fallocate does */
	err = remove_privs(req, fs, f2fs_fuse_nid(fs, ino), &killed);
	if (!err)
		err = f2fs_fallocate(fs->sb, f2fs_fuse_nid(fs, ino), mode, (uint64_t)offset,
				     (uint64_t)length);
	if (killed)
		f2fs_fuse_inval_attrs(fs, ino);
	reply_status(req, err);
}

static void op_ioctl(fuse_req_t req, fuse_ino_t ino, unsigned int cmd, void *arg,
		     struct fuse_file_info *fi, unsigned flags, const void *in_buf, size_t in_bufsz,
		     size_t out_bufsz)
{
	F2FS_FUSE_COUNT_OP(req, F2FS_OP_IOCTL);
	f2fs_fuse_ioctl(req, ino, cmd, arg, fi, flags, in_buf, in_bufsz, out_bufsz);
}

const struct fuse_lowlevel_ops f2fs_fuse_ops = {
	.init = op_init,
	.destroy = op_destroy,
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
	.releasedir = op_releasedir,
	.fsyncdir = op_fsyncdir,
	.statfs = op_statfs,
	.getxattr = op_getxattr,
	.listxattr = op_listxattr,
	.ioctl = op_ioctl,

	.setattr = op_setattr,
	.mknod = op_mknod,
	.mkdir = op_mkdir,
	.unlink = op_unlink,
	.rmdir = op_rmdir,
	.symlink = op_symlink,
	.rename = op_rename,
	.link = op_link,
	.write = op_write,
	.create = op_create,
	.setxattr = op_setxattr,
	.removexattr = op_removexattr,
	.fallocate = op_fallocate,
};
