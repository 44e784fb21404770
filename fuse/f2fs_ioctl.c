// SPDX-License-Identifier: GPL-2.0
/*
 * The f2fs ioctls (<linux/f2fs.h>) f2fs_io and Android use, FITRIM and
 * the label ioctls, with the permission checks of the kernel's
 * f2fs_ioctl made with the caller's credentials; and f2fs-fusectl's
 * extents and status (fsctl_proto.h).  The work is the core's (ioctl.c).
 *
 * FUSE carries an ioctl by its number alone: _IOC_SIZE(cmd) bytes in for
 * _IOC_WRITE, out for _IOC_READ.  F2FS_IOC_SHUTDOWN is _IOR although the
 * kernel reads its argument, so its mode is read from the caller's memory
 * (caller.c).  The atomic write ioctls carry nothing.
 */
#include "f2fs_fuse.h"
#include "caller.h"
#include "fsctl_proto.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <linux/f2fs.h>
#include <linux/fs.h>

/* <linux/f2fs.h> of older kernels lacks it */
#ifndef F2FS_IOC_START_ATOMIC_REPLACE
#define F2FS_IOC_START_ATOMIC_REPLACE	_IO(F2FS_IOCTL_MAGIC, 25)
#endif

/* The ioctls here; the others go on to the flags and key handlers. */
static bool is_ours(unsigned int cmd)
{
	static const unsigned long cmds[] = {
		F2FS_IOC_SHUTDOWN, F2FS_IOC_WRITE_CHECKPOINT, F2FS_IOC_GARBAGE_COLLECT,
		F2FS_IOC_GARBAGE_COLLECT_RANGE, F2FS_IOC_DEFRAGMENT, F2FS_IOC_MOVE_RANGE,
		F2FS_IOC_GET_FEATURES, F2FS_IOC_SET_PIN_FILE, F2FS_IOC_GET_PIN_FILE,
		FS_IOC_GETFSLABEL, FS_IOC_SETFSLABEL, FITRIM,
		F2FS_IOC_FSCTL_STATUS, F2FS_IOC_FSCTL_EXTENTS,
		F2FS_IOC_START_ATOMIC_WRITE, F2FS_IOC_START_ATOMIC_REPLACE,
		F2FS_IOC_COMMIT_ATOMIC_WRITE, F2FS_IOC_ABORT_ATOMIC_WRITE,
	};

	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (cmd == (unsigned int)cmds[i])
			return true;
	return false;
}

/* The kernel's mnt_want_write_file and f2fs_readonly: a read-only mount changes nothing. */
static int want_write(struct f2fs_fuse *fs)
{
	if (f2fs_is_shut_down(fs->sb))
		return -EIO;
	return fs->readonly || atomic_load(&fs->vfs_readonly) ? -EROFS : 0;
}

static int shutdown_ioctl(struct f2fs_fuse *fs, struct f2fs_caller *who, void *arg)
{
	uint32_t mode;
	int err;

	if (!f2fs_caller_capable(who, F2FS_CAP_SYS_ADMIN))
		return -EPERM;
	err = f2fs_caller_read(who, (uint64_t)(uintptr_t)arg, &mode, sizeof(mode));
	if (err) {
		/* e.g. Yama's ptrace_scope for a daemon not run by root */
		f2fs_fuse_log(fs, F2FS_LOG_WARN, "shutdown: cannot read the caller's mode: %s",
			      strerror(-err));
		return err;
	}
	return f2fs_shutdown(fs->sb, mode);
}

/* F2FS_IOC_MOVE_RANGE: src open for reading and writing, dst (a descriptor of the
 * caller's) for writing, both on this mount. */
static int move_range_ioctl(struct f2fs_fuse *fs, struct f2fs_caller *who, fuse_ino_t ino,
			    struct fuse_file_info *fi, struct f2fs_move_range *mr)
{
	char majmin[F2FS_FUSE_MAJMIN_LEN], want[F2FS_FUSE_MAJMIN_LEN];
	bool ro;
	dev_t dev;
	uint64_t dst;
	uint64_t moved = 0;
	int oflags, err;

	/* the handle holds the open's flags (ops.c): libfuse passes an ioctl no fi->flags */
	if (!fi || (fi->fh & O_ACCMODE) != O_RDWR)
		return -EBADF;
	err = f2fs_caller_fd(who, (int)mr->dst_fd, &dev, &dst, &oflags);
	if (err)
		return err;
	if ((oflags & O_ACCMODE) == O_RDONLY)
		return -EBADF;
	/* this mount's device from mountinfo (a stat of the mount point would ask us) */
	err = f2fs_fuse_find_mount(fs->mountpoint, majmin, &ro);
	if (err)
		return err;
	snprintf(want, sizeof(want), "%u:%u", major(dev), minor(dev));
	if (strcmp(majmin, want) || dst == 0 || dst > UINT32_MAX)
		return -EXDEV;
	err = want_write(fs);
	if (err)
		return err;
	err = f2fs_move_range(fs->sb, f2fs_fuse_nid(fs, ino), f2fs_fuse_nid(fs, (fuse_ino_t)dst),
			      mr->pos_in, mr->pos_out, mr->len, &moved);
	if (!err)
		mr->len = moved;
	/* both files changed behind the kernel's caches: sizes, times and pages */
	f2fs_fuse_inval_attrs(fs, ino);
	f2fs_fuse_inval_attrs(fs, (fuse_ino_t)dst);
	f2fs_fuse_drop_cached_range(fs, ino, 0, 0);
	f2fs_fuse_drop_cached_range(fs, (fuse_ino_t)dst, 0, 0);
	return err;
}

/*
 * The atomic write ioctls' checks (f2fs_ioc_start_atomic_write and its
 * siblings): a handle open for writing (EBADF), the owner or CAP_FOWNER
 * (EACCES), a regular file not opened O_DIRECT for start (EINVAL).  What the
 * kernel cached of the file is dropped when the write's data goes away or
 * the size changes under it.
 */
static int atomic_ioctl(struct f2fs_fuse *fs, struct f2fs_caller *who, fuse_ino_t ino,
			struct fuse_file_info *fi, unsigned int cmd)
{
	uint32_t nid = f2fs_fuse_nid(fs, ino);
	struct f2fs_stat st;
	int err;

	/* the handle holds the open's flags (ops.c) */
	if (!fi || (fi->fh & O_ACCMODE) == O_RDONLY)
		return -EBADF;
	err = f2fs_getattr(fs->sb, nid, &st);
	if (err)
		return err;
	if (!f2fs_caller_owns(who, fs, &st))
		return -EACCES;
	if (cmd == (unsigned int)F2FS_IOC_START_ATOMIC_WRITE ||
	    cmd == (unsigned int)F2FS_IOC_START_ATOMIC_REPLACE) {
		if (!S_ISREG(st.mode) || (fi->fh & O_DIRECT))
			return -EINVAL;
	}
	err = want_write(fs);
	if (err)
		return err;
	switch (cmd) {
	case F2FS_IOC_START_ATOMIC_WRITE:
		return f2fs_start_atomic_write(fs->sb, nid, false, (uint32_t)f2fs_caller_tgid(who));
	case F2FS_IOC_START_ATOMIC_REPLACE:
		err = f2fs_start_atomic_write(fs->sb, nid, true, (uint32_t)f2fs_caller_tgid(who));
		break;
	case F2FS_IOC_COMMIT_ATOMIC_WRITE:
		return f2fs_commit_atomic_write(fs->sb, nid);
	default:
		err = f2fs_abort_atomic_write(fs->sb, nid);
		break;
	}
	/* the file reads as empty, or as before the start, from now on */
	f2fs_fuse_inval_attrs(fs, ino);
	f2fs_fuse_drop_cached_range(fs, ino, 0, 0);
	return err;
}

static void status_reply(fuse_req_t req, struct f2fs_fuse *fs, size_t out_bufsz)
{
	struct f2fs_fsctl_status o;
	struct f2fs_status st;
	struct f2fs_wb_stats wb;

	if (out_bufsz < sizeof(o)) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	f2fs_get_status(fs->sb, &st);
	memset(&o, 0, sizeof(o));
	o.flags = (st.writable ? F2FS_FSCTL_ST_WRITABLE : 0) |
		  (st.shut_down ? F2FS_FSCTL_ST_SHUTDOWN : 0) |
		  (st.need_fsck ? F2FS_FSCTL_ST_NEED_FSCK : 0);
	o.segment_count_main = st.segment_count_main;
	o.section_count = st.section_count;
	o.segs_per_sec = st.segs_per_sec;
	o.blocks_per_seg = st.blocks_per_seg;
	memcpy(o.meta_segs, st.meta_segs, sizeof(o.meta_segs));
	o.ovp_segs = st.ovp_segs;
	o.rsvd_segs = st.rsvd_segs;
	o.free_segs = st.free_segs;
	o.full_segs = st.full_segs;
	o.dirty_segs = st.dirty_segs;
	o.prefree_segs = st.prefree_segs;
	for (int t = 0; t < F2FS_FSCTL_NR_LOGS; t++) {
		o.log[t].segno = st.log[t].segno;
		o.log[t].blkoff = st.log[t].blkoff;
		o.log[t].ssr = st.log[t].ssr;
		o.log[t].full_segs = st.log[t].full_segs;
		o.log[t].dirty_segs = st.log[t].dirty_segs;
		o.log[t].valid_blocks = st.log[t].valid_blocks;
	}
	o.valid_blocks = st.valid_blocks;
	o.user_blocks = st.user_blocks;
	o.valid_nodes = st.valid_nodes;
	o.valid_inodes = st.valid_inodes;
	o.dirty_nodes = st.dirty_nodes;
	o.cached_inodes = st.cached_inodes;
	o.orphans = st.orphans;
	o.cp_ver = st.cp_ver;
	o.ckpt_flags = st.ckpt_flags;
	o.reads = st.io.reads;
	o.read_bytes = st.io.read_bytes;
	o.writes = st.io.writes;
	o.write_bytes = st.io.write_bytes;
	o.flushes = st.io.flushes;
	_Static_assert(F2FS_FSCTL_IO_BUCKETS == F2FS_IO_BUCKETS, "histogram buckets");
	memcpy(o.read_hist, st.io.read_hist, sizeof(o.read_hist));
	memcpy(o.write_hist, st.io.write_hist, sizeof(o.write_hist));
	o.cache_hits = st.io.cache_hits;
	o.cache_misses = st.io.cache_misses;
	o.checkpoints = st.io.checkpoints;
	o.gc_runs = st.io.gc_runs;
	o.gc_sections = st.io.gc_sections;
	o.gc_data_blocks = st.io.gc_data_blocks;
	o.gc_node_blocks = st.io.gc_node_blocks;
	o.ssr_segments = st.io.ssr_segments;
	f2fs_get_wb_stats(fs->sb, &wb);
	if (wb.enabled)
		o.flags |= F2FS_FSCTL_ST_WRITEBACK;
	o.wb_dirty_pages = wb.dirty_pages;
	o.wb_dirty_inodes = wb.dirty_inodes;
	o.wb_limit_pages = wb.limit_pages;
	o.wb_pages_dirtied = wb.pages_dirtied;
	o.wb_pages_written = wb.pages_written;
	o.wb_pages_dropped = wb.pages_dropped;
	o.wb_sync = wb.wb_sync;
	o.wb_background = wb.wb_background;
	fuse_reply_ioctl(req, 0, &o, sizeof(o));
}

static int extents(struct f2fs_fuse *fs, fuse_ino_t ino, struct f2fs_fsctl_extents *x)
{
	struct f2fs_extent_info ext[F2FS_FSCTL_EXTENTS_MAX];
	uint64_t from = x->start, nblocks = 0;
	uint32_t n = 0;
	int err = f2fs_get_extents(fs->sb, f2fs_fuse_nid(fs, ino), &from, &nblocks, ext,
				   F2FS_FSCTL_EXTENTS_MAX, &n);

	if (err)
		return err;
	memset(x, 0, sizeof(*x));
	x->start = from;
	x->file_blocks = nblocks;
	x->count = n;
	for (uint32_t i = 0; i < n; i++) {
		x->ext[i].lblk = ext[i].lblk;
		x->ext[i].pblk = ext[i].pblk;
		x->ext[i].len = ext[i].len;
		x->ext[i].flags = ext[i].flags;
	}
	return 0;
}

/*
 * One handler for every ioctl here: the in-argument is copied into u, the
 * answer goes back from it (out bytes) or as the ioctl's return value.
 */
bool f2fs_fuse_f2fs_ioctl(fuse_req_t req, fuse_ino_t ino, unsigned int cmd, void *arg,
			  struct fuse_file_info *fi, const void *in_buf, size_t in_bufsz,
			  size_t out_bufsz)
{
	struct f2fs_fuse *fs = fuse_req_userdata(req);
	uint32_t nid = f2fs_fuse_nid(fs, ino);
	union {
		uint32_t u32;
		struct f2fs_gc_range gc;
		struct f2fs_defragment defrag;
		struct f2fs_move_range mr;
		struct fstrim_range trim;
		char label[FSLABEL_MAX];
		struct f2fs_fsctl_extents ext;
	} u;
	size_t insz = _IOC_DIR(cmd) & _IOC_WRITE ? _IOC_SIZE(cmd) : 0;
	size_t outsz = _IOC_DIR(cmd) & _IOC_READ ? _IOC_SIZE(cmd) : 0;
	struct f2fs_caller who;
	int ret = 0;

	if (!is_ours(cmd))
		return false;
	if (in_bufsz < insz || out_bufsz < outsz || insz > sizeof(u) || outsz > sizeof(u)) {
		fuse_reply_err(req, EINVAL);
		return true;
	}
	if (cmd == (unsigned int)F2FS_IOC_FSCTL_STATUS) {
		status_reply(req, fs, out_bufsz);
		return true;
	}
	memset(&u, 0, sizeof(u));
	if (insz)
		memcpy(&u, in_buf, insz);	/* in_buf is NULL when nothing comes in */
	/* f2fs_ioctl: nothing after a shutdown (what it reports stays readable) */
	if (f2fs_is_shut_down(fs->sb) && cmd != (unsigned int)F2FS_IOC_FSCTL_EXTENTS) {
		fuse_reply_err(req, EIO);
		return true;
	}
	f2fs_caller_from_req(&who, req);
	switch (cmd) {
	case F2FS_IOC_SHUTDOWN:
		ret = shutdown_ioctl(fs, &who, arg);
		/* _IOR in name only: the caller's mode must come back as it was */
		outsz = 0;
		break;
	case F2FS_IOC_WRITE_CHECKPOINT:
		ret = !f2fs_caller_capable(&who, F2FS_CAP_SYS_ADMIN) ? -EPERM : want_write(fs);
		if (!ret)
			ret = f2fs_sync_data(fs->sb);
		if (!ret)
			ret = f2fs_sync_fs(fs->sb, false);
		break;
	case F2FS_IOC_GARBAGE_COLLECT:
		ret = !f2fs_caller_capable(&who, F2FS_CAP_SYS_ADMIN) ? -EPERM : want_write(fs);
		if (!ret)
			ret = f2fs_ioc_gc(fs->sb, u.u32 != 0);
		break;
	case F2FS_IOC_GARBAGE_COLLECT_RANGE:
		ret = !f2fs_caller_capable(&who, F2FS_CAP_SYS_ADMIN) ? -EPERM : want_write(fs);
		if (!ret)
			ret = f2fs_ioc_gc_range(fs->sb, u.gc.sync != 0, u.gc.start, u.gc.len);
		break;
	case F2FS_IOC_DEFRAGMENT:
		ret = !f2fs_caller_capable(&who, F2FS_CAP_SYS_ADMIN) ? -EPERM : want_write(fs);
		/* f2fs_ioc_defragment: whole blocks */
		if (!ret && ((u.defrag.start | u.defrag.len) & (4096 - 1)))
			ret = -EINVAL;
		if (!ret) {
			uint64_t len = u.defrag.len;

			ret = f2fs_defragment(fs->sb, nid, u.defrag.start, &len);
			u.defrag.len = len;
		}
		break;
	case F2FS_IOC_MOVE_RANGE:
		ret = move_range_ioctl(fs, &who, ino, fi, &u.mr);
		break;
	case F2FS_IOC_GET_FEATURES:
		u.u32 = f2fs_get_features(fs->sb);
		break;
	case F2FS_IOC_GET_PIN_FILE: {
		bool pinned;

		ret = f2fs_get_pin_file(fs->sb, nid, &pinned, &u.u32);
		break;
	}
	case F2FS_IOC_SET_PIN_FILE: {
		struct f2fs_stat st;

		/* inode_owner_or_capable, else EACCES */
		ret = f2fs_getattr(fs->sb, nid, &st);
		if (!ret && !f2fs_caller_owns(&who, fs, &st))
			ret = -EACCES;
		if (!ret)
			ret = want_write(fs);
		if (!ret)
			ret = f2fs_set_pin_file(fs->sb, nid, u.u32 != 0);
		if (ret >= 0)
			f2fs_fuse_inval_attrs(fs, ino);	/* lsattr's C */
		break;
	}
	case FS_IOC_GETFSLABEL:
		ret = f2fs_get_label(fs->sb, u.label, sizeof(u.label));
		break;
	case FS_IOC_SETFSLABEL:
		ret = !f2fs_caller_capable(&who, F2FS_CAP_SYS_ADMIN) ? -EPERM : want_write(fs);
		if (!ret)
			ret = f2fs_set_label(fs->sb, u.label, strnlen(u.label, sizeof(u.label)));
		break;
	case FITRIM: {
		uint64_t trimmed = 0;

		ret = !f2fs_caller_capable(&who, F2FS_CAP_SYS_ADMIN) ? -EPERM : want_write(fs);
		if (!ret)
			ret = f2fs_trim_fs(fs->sb, u.trim.start, u.trim.len, u.trim.minlen, &trimmed);
		u.trim.len = trimmed;
		break;
	}
	case F2FS_IOC_FSCTL_EXTENTS:
		ret = extents(fs, ino, &u.ext);
		break;
	case F2FS_IOC_START_ATOMIC_WRITE:
	case F2FS_IOC_START_ATOMIC_REPLACE:
	case F2FS_IOC_COMMIT_ATOMIC_WRITE:
	case F2FS_IOC_ABORT_ATOMIC_WRITE:
		ret = atomic_ioctl(fs, &who, ino, fi, cmd);
		break;
	}
	f2fs_caller_done(&who);
	if (ret < 0)
		f2fs_fuse_reply_err(req, ret);
	else
		fuse_reply_ioctl(req, ret, outsz ? &u : NULL, outsz);
	return true;
}
