// SPDX-License-Identifier: GPL-2.0
/*
 * ioctl: the inode flags of chattr/lsattr and the generation query.
 */
#include "f2fs_fuse.h"
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

/*
 * FS_IOC_FSGETXATTR: the kernel's fileattr code asks this way first when
 * chattr sets flags (vfs_fileattr_set); the common flags as xflags.
 */
static void reply_fsxattr(fuse_req_t req, const struct f2fs_stat *st, size_t out_bufsz)
{
	static const struct { uint32_t fl, xfl; } map[] = {
		{ FS_IMMUTABLE_FL, FS_XFLAG_IMMUTABLE }, { FS_APPEND_FL, FS_XFLAG_APPEND },
		{ FS_SYNC_FL, FS_XFLAG_SYNC }, { FS_NOATIME_FL, FS_XFLAG_NOATIME },
		{ FS_NODUMP_FL, FS_XFLAG_NODUMP }, { FS_PROJINHERIT_FL, FS_XFLAG_PROJINHERIT },
	};
	struct fsxattr fa;

	if (out_bufsz < sizeof(fa)) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	memset(&fa, 0, sizeof(fa));
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (st->flags & map[i].fl)
			fa.fsx_xflags |= map[i].xfl;
	/* project ids are not read: 0, as on a file system without them */
	fuse_reply_ioctl(req, 0, &fa, sizeof(fa));
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
	/* fscrypt keys and policies (keyctl_proto.h) */
	if (f2fs_keyctl_ioctl(req, ino, cmd, in_buf, in_bufsz, out_bufsz))
		return;
	if (cmd_is(cmd, FS_IOC_SETFLAGS, FS_IOC32_SETFLAGS)) {
		/*
		 * The kernel's fileattr code has checked ownership and
		 * CAP_LINUX_IMMUTABLE and sends the flags as an int.
		 */
		if (in_bufsz < sizeof(val)) {
			fuse_reply_err(req, EINVAL);
			return;
		}
		memcpy(&val, in_buf, sizeof(val));
		err = f2fs_set_flags(fs->sb, f2fs_fuse_nid(fs, ino), (uint32_t)val);
		if (err) {
			f2fs_fuse_reply_err(req, err);
			return;
		}
		/* The kernel keeps its cached ctime through an ioctl: drop it. */
		f2fs_fuse_inval_attrs(fs, ino);
		fuse_reply_ioctl(req, 0, NULL, 0);
		return;
	}
	if (cmd_is(cmd, FS_IOC_SETVERSION, FS_IOC32_SETVERSION) ||
	    cmd == (unsigned int)FS_IOC_FSSETXATTR) {
		/* generations and project ids stay as they are */
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
