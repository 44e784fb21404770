// SPDX-License-Identifier: GPL-2.0
/*
 * Open files: open, read, write, flush, release, fsync, fallocate.
 */
#include "ops.h"
#include "caller.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>

static void op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	F2FS_FUSE_COUNT_OP(req, F2FS_OP_OPEN);
	struct f2fs_fuse *fs = f2fs_fuse_req_fs(req);
	uint32_t nid = f2fs_fuse_nid(fs, ino);
	int err;

	/* The open count keeps an unlinked inode until release. */
	err = f2fs_open(fs->sb, nid, fi->flags);
	if (err) {
		f2fs_fuse_reply_err(req, err);
		return;
	}
	f2fs_fuse_set_open_flags(fs, nid, fi);
	f2fs_fuse_precache_on_open(fs, ino);
	/* An interrupted open gets no release; drop the count now. */
	if (fuse_reply_open(req, fi) == -ENOENT)
		f2fs_release_file(fs->sb, nid, fi->flags);
}

static void op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	F2FS_FUSE_COUNT_OP(req, F2FS_OP_READ);
	struct f2fs_fuse *fs = f2fs_fuse_req_fs(req);
	size_t blocks = (size + 4095) / 4096;	/* 4 KiB blocks */
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
	/* block-aligned, so that whole blocks read straight into it even with
	 * -o direct (an unaligned buffer takes a bounce copy) */
	buf = f2fs_stash_get(&fs->rbufs, blocks, &blocks);
	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	n = f2fs_read(fs->sb, f2fs_fuse_nid(fs, ino), buf, size, (uint64_t)off);
	if (n >= 0)
		f2fs_fuse_touch_atime(fs, ino);
	if (n < 0)
		f2fs_fuse_reply_err(req, n);
	else
		fuse_reply_buf(req, buf, (size_t)n > size ? size : (size_t)n);
	f2fs_stash_put(&fs->rbufs, buf, blocks);
}

static void op_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	F2FS_FUSE_COUNT_OP(req, F2FS_OP_RELEASE);
	struct f2fs_fuse *fs = f2fs_fuse_req_fs(req);

	/* The kernel ignores the result; the last release of an unlinked file frees it,
	 * the last writer's drops an atomic write (and what the kernel cached of it). */
	int err = f2fs_release_file(fs->sb, f2fs_fuse_nid(fs, ino), (int)fi->fh);

	if (err > 0) {
		f2fs_fuse_inval_attrs(fs, ino);
		f2fs_fuse_drop_cached_range(fs, ino, 0, 0);
		err = 0;
	}
	f2fs_fuse_reply_status(req, err);
}

static void op_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	F2FS_FUSE_COUNT_OP(req, F2FS_OP_FLUSH);
	struct f2fs_fuse *fs = f2fs_fuse_req_fs(req);

	uint32_t nid = f2fs_fuse_nid(fs, ino);

	/* nothing is buffered; a writer's close drops an atomic write it left open */
	if ((fi->fh & O_ACCMODE) != O_RDONLY && f2fs_in_atomic_write(fs->sb, nid)) {
		struct f2fs_caller who;
		bool exiting;
		pid_t tgid;

		f2fs_caller_from_req(&who, req);
		tgid = f2fs_caller_tgid(&who);
		exiting = f2fs_caller_exiting(&who);
		f2fs_caller_done(&who);
		if (tgid > 0 && f2fs_flush_file(fs->sb, nid, (uint32_t)tgid, exiting) > 0) {
			f2fs_fuse_inval_attrs(fs, ino);
			f2fs_fuse_drop_cached_range(fs, ino, 0, 0);
		}
	}
	fuse_reply_err(req, 0);
}

static void op_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	F2FS_FUSE_COUNT_OP(req, F2FS_OP_FSYNC);
	struct f2fs_fuse *fs = f2fs_fuse_req_fs(req);

	f2fs_fuse_reply_status(req, f2fs_fsync(fs->sb, f2fs_fuse_nid(fs, ino), datasync != 0));
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
void f2fs_fuse_drop_cached_range(struct f2fs_fuse *fs, fuse_ino_t ino, off_t off, size_t len)
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
	struct f2fs_fuse *fs = f2fs_fuse_req_fs(req);
	uint32_t killed = 0;
	ssize_t n;
	int err;

	if (off < 0) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	/* page writeback (mmap) is the kernel's, and keeps the bits as it does */
	err = fi->writepage ? 0 : f2fs_fuse_remove_privs(req, fs, f2fs_fuse_nid(fs, ino), &killed);
	if (err) {
		f2fs_fuse_reply_err(req, err);
		return;
	}
	/* the kernel passes O_SYNC/O_DSYNC (also RWF_*SYNC) and O_DIRECT per write */
	n = f2fs_write_as(fs->sb, f2fs_fuse_nid(fs, ino), buf, size, (uint64_t)off,
			  f2fs_fuse_priv(req, fs) |
			  (!fi->writepage && (fi->flags & (O_DIRECT | O_SYNC | O_DSYNC)) ?
			   F2FS_WRITE_THROUGH : 0));
	/*
	 * A direct write comes back short only when space (or quota) ran out
	 * part way.  The kernel's asynchronous direct I/O (AIO, io_uring)
	 * turns a short reply into EIO (fuse_get_res_by_io), so the rest is
	 * tried once more: either it fits now, or its error is the reply.
	 */
	if (n > 0 && (size_t)n < size && direct_write(fi)) {
		ssize_t more = f2fs_write_as(fs->sb, f2fs_fuse_nid(fs, ino), buf + n, size - (size_t)n,
					     (uint64_t)off + (uint64_t)n, f2fs_fuse_priv(req, fs) |
					     F2FS_WRITE_THROUGH);

		n = more < 0 ? more : n + more;
		if (n >= 0 && (size_t)n < size)
			n = -ENOSPC;
	}
	/*
	 * O_DSYNC/O_SYNC on a direct write: the kernel sends FSYNC after a
	 * synchronous one but nothing after an asynchronous one (AIO,
	 * io_uring), and the request does not say which it is, so the daemon
	 * commits the file's nodes itself; the data went through already.  A
	 * synchronous caller's FSYNC then finds nothing new.
	 */
	if (n > 0 && direct_write(fi) && (fi->flags & O_DSYNC)) {
		int serr = f2fs_fsync(fs->sb, f2fs_fuse_nid(fs, ino), (fi->flags & O_SYNC) != O_SYNC);

		if (serr)
			n = serr;
	}
	if (killed)
		f2fs_fuse_inval_attrs(fs, ino);
	if (n > 0 && direct_write(fi))
		f2fs_fuse_drop_cached_range(fs, ino, off, (size_t)n);
	if (n < 0)
		f2fs_fuse_reply_err(req, n);
	else
		fuse_reply_write(req, (size_t)n > size ? size : (size_t)n);
}

static void op_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t offset, off_t length,
			 struct fuse_file_info *fi)
{
	F2FS_FUSE_COUNT_OP(req, F2FS_OP_FALLOCATE);
	struct f2fs_fuse *fs = f2fs_fuse_req_fs(req);

	uint32_t killed;
	int err;

	if (offset < 0 || length <= 0) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	/* file_modified, before the change, as vfs_fallocate does */
	err = f2fs_fuse_remove_privs(req, fs, f2fs_fuse_nid(fs, ino), &killed);
	if (!err)
		err = f2fs_fallocate_as(fs->sb, f2fs_fuse_nid(fs, ino), mode, (uint64_t)offset,
					(uint64_t)length, f2fs_fuse_priv(req, fs));
	if (killed)
		f2fs_fuse_inval_attrs(fs, ino);
	f2fs_fuse_reply_status(req, err);
}

void f2fs_fuse_file_ops(struct fuse_lowlevel_ops *ops)
{
	ops->open = op_open;
	ops->read = op_read;
	ops->write = op_write;
	ops->flush = op_flush;
	ops->release = op_release;
	ops->fsync = op_fsync;
	ops->fallocate = op_fallocate;
}
