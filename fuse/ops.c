// SPDX-License-Identifier: GPL-2.0
/*
 * The session's operations (init, destroy, statfs, forget, ioctl) and the
 * helpers the other operation files share
 * (ops.h).  No filesystem logic lives here.
 */
#include "ops.h"
#include "caller.h"
#include "keyctl.h"
#include "inodes.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <time.h>
#include <linux/capability.h>	/* CAP_FSETID */

void f2fs_fuse_reply_err(fuse_req_t req, long err)
{
	/* A non-negative "error" would be a core bug; never reply success for it. */
	fuse_reply_err(req, err < 0 ? (int)-err : EIO);
}

/* 0, or a negative errno from the core. */
void f2fs_fuse_reply_status(fuse_req_t req, long err)
{
	if (err == 0)
		fuse_reply_err(req, 0);
	else
		f2fs_fuse_reply_err(req, err);
}

/*
 * The kernel leaves access times to us but serves most reads from its
 * page cache, so a read that is due to update the access time (relatime:
 * the first after a change) must reach us: such an open drops the cached
 * pages (no keep_cache).
 */
bool f2fs_fuse_keep_cache(struct f2fs_fuse *fs, uint32_t nid, int oflags)
{
	return (oflags & O_ACCMODE) == O_WRONLY || atomic_load(&fs->vfs_readonly) ||
	       !f2fs_atime_due(fs->sb, nid);
}

/*
 * After a READ or READDIR, before the reply: the kernel asks for the new
 * atime after it.  Not while the mount is read-only (remount,ro), which
 * leaves the image as its checkpoint has it.
 */
void f2fs_fuse_touch_atime(struct f2fs_fuse *fs, fuse_ino_t ino)
{
	if (!atomic_load(&fs->vfs_readonly))
		f2fs_touch_atime(fs->sb, f2fs_fuse_nid(fs, ino));
}

/* We are the image's only writer, so cached pages otherwise stay valid across opens. */
void f2fs_fuse_set_open_flags(struct f2fs_fuse *fs, uint32_t nid, struct fuse_file_info *fi)
{
	fi->keep_cache = f2fs_fuse_keep_cache(fs, nid, fi->flags);
	fi->direct_io = 0;
	/* Writes are not buffered here: close has nothing to flush, but for an
	 * atomic write left open by a writer (file.c op_flush). */
	fi->noflush = (fi->flags & O_ACCMODE) == O_RDONLY;
	/* the open's flags: ioctls get only the handle (F2FS_IOC_MOVE_RANGE needs the mode) */
	fi->fh = (uint64_t)(unsigned int)fi->flags;
}

void f2fs_fuse_inval_attrs(struct f2fs_fuse *fs, fuse_ino_t ino)
{
	if (fs->se)
		fuse_lowlevel_notify_inval_inode(fs->se, ino, -1, 0);
}

void f2fs_fuse_get_cred(fuse_req_t req, uint32_t mode, struct f2fs_fuse_cred *rc)
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

void f2fs_fuse_put_cred(struct f2fs_fuse_cred *rc)
{
	free(rc->groups);
}

/*
 * CAP_FSETID in the caller's effective set, which keeps set-ID bits through
 * writes and ACL changes.  The kernel does not send capabilities; /proc has
 * them (caller.c).
 */
bool f2fs_fuse_has_fsetid(fuse_req_t req)
{
	struct f2fs_caller c;
	bool cap;

	f2fs_caller_from_req(&c, req);
	cap = f2fs_caller_capable(&c, CAP_FSETID);
	f2fs_caller_done(&c);
	return cap;
}

/*
 * F2FS_PRIV_QUOTA for a caller with CAP_SYS_RESOURCE, which may pass quota
 * limits.  Asked only where limits are checked: it costs a read of /proc.
 */
unsigned int f2fs_fuse_priv(fuse_req_t req, struct f2fs_fuse *fs)
{
	struct f2fs_caller c;
	bool cap;

	if (!f2fs_quota_enforced(fs->sb))
		return 0;
	f2fs_caller_from_req(&c, req);
	cap = f2fs_caller_capable(&c, CAP_SYS_RESOURCE);
	f2fs_caller_done(&c);
	return cap ? F2FS_PRIV_QUOTA : 0;
}

/*
 * file_remove_privs for a write, truncate or fallocate.  The kernel sends a
 * SETATTR of the mode first, but by the rule it had before Linux 6.2 (FUSE
 * recomputes it): set-group-ID without group-exec is kept even when the
 * caller is outside the file's group.  *killed: the bits this cleared.
 */
int f2fs_fuse_remove_privs(fuse_req_t req, struct f2fs_fuse *fs, uint32_t nid, uint32_t *killed)
{
	struct f2fs_stat st;
	struct f2fs_fuse_cred rc;
	int err;

	*killed = 0;
	/* pid 0: the kernel's own requests, which keep the bits */
	if (fuse_req_ctx(req)->pid == 0)
		return 0;
	/* errors are the operation's to report */
	if (f2fs_getattr(fs->sb, nid, &st) != 0 || !S_ISREG(st.mode) ||
	    !(st.mode & (S_ISUID | S_ISGID)) || f2fs_fuse_has_fsetid(req))
		return 0;
	f2fs_fuse_get_cred(req, S_ISGID, &rc);
	err = f2fs_remove_privs(fs->sb, nid, &rc.cred, killed);
	f2fs_fuse_put_cred(&rc);
	return err;
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
	 * Readdirplus unless =never: after a listing with attributes a stat
	 * of every entry (ls -l, du, find | xargs stat, tar, rsync) costs no
	 * LOOKUP round trip, while a listing of names alone pays for reading
	 * every inode and for the kernel instantiating it.  =always (the
	 * default) sends the attributes every time, =adaptive only while
	 * listed entries are being looked up (readdir.c); =auto leaves it to
	 * the kernel (plus for a directory's first batch and after lookups in
	 * it).
	 */
	conn->want &= ~(FUSE_CAP_READDIRPLUS | FUSE_CAP_READDIRPLUS_AUTO | FUSE_CAP_SPLICE_WRITE |
			FUSE_CAP_SPLICE_MOVE | FUSE_CAP_SPLICE_READ);
	if (fs->readdirplus != F2FS_FUSE_RDPLUS_NEVER)
		want |= FUSE_CAP_READDIRPLUS;
	if (fs->readdirplus == F2FS_FUSE_RDPLUS_AUTO)
		want |= FUSE_CAP_READDIRPLUS_AUTO;
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
		f2fs_fuse_start_maintenance(fs);
	/* The key control socket's thread, also only after the fork. */
	f2fs_keyctl_start(fs);
}

static void op_destroy(void *userdata)
{
	f2fs_fuse_stop_maintenance(userdata);
	f2fs_keyctl_stop(userdata);
}


/*
 * The kernel dropped its inode: an unlinked one (an orphan) that nobody
 * has open is freed now, as the kernel's f2fs frees it in iput.  If that
 * fails it stays an orphan, which the next mount frees.
 */
static void forget_one(struct f2fs_fuse *fs, fuse_ino_t ino, uint64_t nlookup)
{
	int err;

	if (!f2fs_fuse_inodes_forget(&fs->inodes, ino, nlookup) || fs->readonly)
		return;
	err = f2fs_forget(fs->sb, f2fs_fuse_nid(fs, ino));
	if (err)
		f2fs_fuse_log(fs, F2FS_LOG_WARN, "unlinked inode %lu not freed: %s",
			      (unsigned long)ino, strerror(-err));
}

static void op_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	F2FS_FUSE_COUNT_OP(req, F2FS_OP_FORGET);
	forget_one(f2fs_fuse_req_fs(req), ino, nlookup);
	fuse_reply_none(req);
}

static void op_forget_multi(fuse_req_t req, size_t count, struct fuse_forget_data *forgets)
{
	F2FS_FUSE_COUNT_OP(req, F2FS_OP_BATCH_FORGET);
	for (size_t i = 0; i < count; i++)
		forget_one(f2fs_fuse_req_fs(req), forgets[i].ino, forgets[i].nlookup);
	fuse_reply_none(req);
}

static void op_statfs(fuse_req_t req, fuse_ino_t ino)
{
	F2FS_FUSE_COUNT_OP(req, F2FS_OP_STATFS);
	struct f2fs_fuse *fs = f2fs_fuse_req_fs(req);
	struct f2fs_statfs sf;
	struct statvfs sv;
	int err;

	err = f2fs_statfs(fs->sb, &sf);
	/* a project-inherit directory shows its project's limits (f2fs_statfs_project) */
	if (!err)
		f2fs_quota_statfs_project(fs->sb, f2fs_fuse_nid(fs, ino), &sf);
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

static void op_ioctl(fuse_req_t req, fuse_ino_t ino, unsigned int cmd, void *arg,
		     struct fuse_file_info *fi, unsigned flags, const void *in_buf, size_t in_bufsz,
		     size_t out_bufsz)
{
	F2FS_FUSE_COUNT_OP(req, F2FS_OP_IOCTL);
	f2fs_fuse_ioctl(req, ino, cmd, arg, fi, flags, in_buf, in_bufsz, out_bufsz);
}

/* The whole table, each operation file adding its own. */
void f2fs_fuse_get_ops(struct fuse_lowlevel_ops *ops)
{
	memset(ops, 0, sizeof(*ops));
	ops->init = op_init;
	ops->destroy = op_destroy;
	ops->forget = op_forget;
	ops->forget_multi = op_forget_multi;
	ops->statfs = op_statfs;
	ops->ioctl = op_ioctl;
	f2fs_fuse_dir_ops(ops);
	f2fs_fuse_readdir_ops(ops);
	f2fs_fuse_file_ops(ops);
	f2fs_fuse_xattr_ops(ops);
}
