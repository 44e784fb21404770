// SPDX-License-Identifier: GPL-2.0
/*
 * ioctl: the inode flags of chattr/lsattr, project ids, and the generation query.
 */
#include "f2fs_fuse.h"
#include "caller.h"
#include "keyctl.h"

#include <errno.h>
#include <string.h>
#include <linux/fs.h>

/*
 * Both get ioctls carry an int however the caller's long is sized (the
 * kernel drivers write an int), so the native and the 32-bit compat
 * encodings are answered alike and exactly sizeof(int) bytes go back.
 * With FUSE_USE_VERSION >= 35 libfuse passes cmd as unsigned int, so the
 * encodings with the sign bit set compare as they are.
 */
static bool cmd_is(unsigned int cmd, unsigned long native, unsigned long compat)
{
	return cmd == (unsigned int)native || cmd == (unsigned int)compat;
}

/* The flags FS_IOC_FSGETXATTR and FS_IOC_FSSETXATTR carry as xflags (FS_COMMON_FL). */
static const struct { uint32_t fl, xfl; } xflag_map[] = {
	{ FS_IMMUTABLE_FL, FS_XFLAG_IMMUTABLE }, { FS_APPEND_FL, FS_XFLAG_APPEND },
	{ FS_SYNC_FL, FS_XFLAG_SYNC }, { FS_NOATIME_FL, FS_XFLAG_NOATIME },
	{ FS_NODUMP_FL, FS_XFLAG_NODUMP }, { FS_PROJINHERIT_FL, FS_XFLAG_PROJINHERIT },
};
#define NXFLAGS (sizeof(xflag_map) / sizeof(xflag_map[0]))

/*
 * FS_IOC_FSGETXATTR: the kernel's fileattr code asks this way first when
 * chattr sets flags (vfs_fileattr_set); the common flags as xflags.
 */
static void reply_fsxattr(fuse_req_t req, const struct f2fs_stat *st, size_t out_bufsz)
{
	struct fsxattr fa;

	if (out_bufsz < sizeof(fa)) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	memset(&fa, 0, sizeof(fa));
	for (size_t i = 0; i < NXFLAGS; i++)
		if (st->flags & xflag_map[i].fl)
			fa.fsx_xflags |= xflag_map[i].xfl;
	fa.fsx_projid = st->projid;
	fuse_reply_ioctl(req, 0, &fa, sizeof(fa));
}

/*
 * FS_IOC_SETFLAGS (either encoding) and FS_IOC_FSSETXATTR, with the
 * checks of the kernel's vfs_fileattr_set: the owner or CAP_FOWNER, and
 * CAP_LINUX_IMMUTABLE to change immutable or append-only.  The VFS makes
 * them before it forwards the native numbers, but FS_IOC32_SETFLAGS from
 * a 64-bit process reaches the daemon unchecked, so every number is
 * checked here, with the credentials of the request.  Flag changes are
 * serialized so that the flags checked are the flags replaced.
 */
static int set_flags(fuse_req_t req, fuse_ino_t ino, unsigned int cmd, const void *in_buf,
		     size_t in_bufsz)
{
	struct f2fs_fuse *fs = fuse_req_userdata(req);
	uint32_t nid = f2fs_fuse_nid(fs, ino);
	struct f2fs_caller who;
	struct f2fs_stat st;
	uint32_t next, projid = 0;
	bool setxattr = cmd == (unsigned int)FS_IOC_FSSETXATTR;
	int err;

	if (setxattr ? in_bufsz < sizeof(struct fsxattr)
						    : in_bufsz < sizeof(int))
		return -EINVAL;
	/* mnt_want_write_file: the VFS skips it for the compat number too */
	if (fs->readonly || atomic_load(&fs->vfs_readonly))
		return -EROFS;
	f2fs_caller_from_req(&who, req);
	pthread_mutex_lock(&fs->flags_lock);
	err = f2fs_getattr(fs->sb, nid, &st);
	if (err)
		goto out;
	if (cmd == (unsigned int)FS_IOC_FSSETXATTR) {
		struct fsxattr fa;

		memcpy(&fa, in_buf, sizeof(fa));
		/*
		 * The VFS turns FS_XFLAG_DAX into FS_DAX_FL, which f2fs does
		 * not take (F2FS_GETTABLE_FS_FL): refused, not dropped.
		 */
		if (fa.fsx_xflags & FS_XFLAG_DAX) {
			err = -EOPNOTSUPP;
			goto out;
		}
		/* only the common flags travel this way; the others stay */
		next = st.flags;
		for (size_t i = 0; i < NXFLAGS; i++) {
			next &= ~xflag_map[i].fl;
			if (fa.fsx_xflags & xflag_map[i].xfl)
				next |= xflag_map[i].fl;
		}
		projid = fa.fsx_projid;
	} else {
		int val;

		memcpy(&val, in_buf, sizeof(val));
		next = (uint32_t)val;
	}
	if (!f2fs_caller_owns(&who, fs, &st))
		err = -EPERM;
	else if (((next ^ st.flags) & (FS_APPEND_FL | FS_IMMUTABLE_FL)) &&
		 !f2fs_caller_capable(&who, F2FS_CAP_LINUX_IMMUTABLE))
		err = -EPERM;
	else
		err = f2fs_set_flags(fs->sb, nid, next);
	/* f2fs_fileattr_set: the flags, then the project (f2fs_ioc_setproject) */
	if (!err && setxattr)
		err = f2fs_set_projid(fs->sb, nid, projid,
				      f2fs_caller_capable(&who, F2FS_CAP_SYS_RESOURCE) ?
				      F2FS_PRIV_QUOTA : 0);
out:
	pthread_mutex_unlock(&fs->flags_lock);
	f2fs_caller_done(&who);
	return err;
}

void f2fs_fuse_ioctl(fuse_req_t req, fuse_ino_t ino, unsigned int cmd, void *arg,
		     struct fuse_file_info *fi, unsigned flags, const void *in_buf,
		     size_t in_bufsz, size_t out_bufsz)
{
	struct f2fs_fuse *fs = fuse_req_userdata(req);
	bool getflags = cmd_is(cmd, FS_IOC_GETFLAGS, FS_IOC32_GETFLAGS);
	bool getversion = cmd_is(cmd, FS_IOC_GETVERSION, FS_IOC32_GETVERSION);
	bool getxattr = cmd == (unsigned int)FS_IOC_FSGETXATTR;
	struct f2fs_stat st;
	int val, err;

	/* remount's notice to the daemon (remount.c) */
	if (f2fs_fuse_remount_ioctl(req, cmd, out_bufsz))
		return;
	/* quota reports and limits (quotactl_proto.h) */
	if (f2fs_fuse_quotactl_ioctl(req, cmd, in_buf, in_bufsz, out_bufsz))
		return;
	/* extent precache and cache drops (precache.c) */
	if (f2fs_fuse_cache_ioctl(req, ino, cmd))
		return;
	/* the f2fs ioctls, FITRIM, labels; f2fs-fusectl's extents and status */
	if (f2fs_fuse_f2fs_ioctl(req, ino, cmd, arg, fi, in_buf, in_bufsz, out_bufsz))
		return;
	/* fscrypt keys and policies (keyctl_proto.h) */
	if (f2fs_keyctl_ioctl(req, ino, cmd, in_buf, in_bufsz, out_bufsz))
		return;
	if (f2fs_fuse_compress_ioctl(req, ino, cmd, out_bufsz))
		return;
	if (f2fs_fuse_verity_ioctl(req, ino, fi, cmd, in_buf, in_bufsz, out_bufsz))
		return;
	if (cmd_is(cmd, FS_IOC_SETFLAGS, FS_IOC32_SETFLAGS) ||
	    cmd == (unsigned int)FS_IOC_FSSETXATTR) {
		err = set_flags(req, ino, cmd, in_buf, in_bufsz);
		if (err) {
			f2fs_fuse_reply_err(req, err);
			return;
		}
		/* The kernel keeps its cached ctime through an ioctl: drop it. */
		f2fs_fuse_inval_attrs(fs, ino);
		fuse_reply_ioctl(req, 0, NULL, 0);
		return;
	}
	if (cmd_is(cmd, FS_IOC_SETVERSION, FS_IOC32_SETVERSION)) {
		/* generations stay as they are */
		fuse_reply_err(req, fs->readonly ? EROFS : EOPNOTSUPP);
		return;
	}
	if (!getflags && !getversion && !getxattr) {
		fuse_reply_err(req, ENOTTY);
		return;
	}
	err = f2fs_getattr(fs->sb, f2fs_fuse_nid(fs, ino), &st);
	if (err) {
		f2fs_fuse_reply_err(req, err);
		return;
	}
	if (getxattr) {
		reply_fsxattr(req, &st, out_bufsz);
		return;
	}
	if (out_bufsz < sizeof(val)) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	val = getflags ? (int)st.flags : (int)st.generation;
	fuse_reply_ioctl(req, 0, &val, sizeof(val));
}
