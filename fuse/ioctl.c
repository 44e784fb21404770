// SPDX-License-Identifier: GPL-2.0
/*
 * ioctl: the inode flag and generation queries of chattr/lsattr.
 */
#include "f2fs_fuse.h"
#include "keyctl.h"

#include <errno.h>
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

void f2fs_fuse_ioctl(fuse_req_t req, fuse_ino_t ino, unsigned int cmd, void *arg,
		     struct fuse_file_info *fi, unsigned flags, const void *in_buf,
		     size_t in_bufsz, size_t out_bufsz)
{
	struct f2fs_fuse *fs = fuse_req_userdata(req);
	bool getflags = cmd_is(cmd, FS_IOC_GETFLAGS, FS_IOC32_GETFLAGS);
	bool getversion = cmd_is(cmd, FS_IOC_GETVERSION, FS_IOC32_GETVERSION);
	struct f2fs_stat st;
	int val, err;

	/* fscrypt keys and policies (keyctl_proto.h) */
	if (f2fs_keyctl_ioctl(req, ino, cmd, in_buf, in_bufsz, out_bufsz))
		return;
	if (cmd_is(cmd, FS_IOC_SETFLAGS, FS_IOC32_SETFLAGS) ||
	    cmd_is(cmd, FS_IOC_SETVERSION, FS_IOC32_SETVERSION) ||
	    cmd == (unsigned int)FS_IOC_FSSETXATTR) {
		/* The core has no way to change these yet. */
		fuse_reply_err(req, fs->readonly ? EROFS : EOPNOTSUPP);
		return;
	}
	if (!getflags && !getversion) {
		fuse_reply_err(req, ENOTTY);
		return;
	}
	if (out_bufsz < sizeof(val)) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	err = f2fs_getattr(fs->sb, f2fs_fuse_nid(fs, ino), &st);
	if (err) {
		f2fs_fuse_reply_err(req, err);
		return;
	}
	val = getflags ? (int)st.flags : (int)st.generation;
	fuse_reply_ioctl(req, 0, &val, sizeof(val));
}
