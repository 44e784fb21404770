// SPDX-License-Identifier: GPL-2.0
/*
 * Extended attributes: get, list, set, remove; ACLs that clear
 * set-group-ID.
 */
#include "ops.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

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

/* getxattr (name) or listxattr (NULL): the same buffer and reply rules. */
static void query_xattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
{
	struct f2fs_fuse *fs = f2fs_fuse_req_fs(req);
	uint32_t nid = f2fs_fuse_nid(fs, ino);
	char *buf = NULL;
	ssize_t n;

	if (size) {
		buf = malloc(size);
		if (!buf) {
			fuse_reply_err(req, ENOMEM);
			return;
		}
	}
	n = name ? f2fs_getxattr(fs->sb, nid, name, buf, size)
		 : f2fs_listxattr(fs->sb, nid, buf, size);
	reply_xattr_result(req, n, buf, size);
	free(buf);
}

static void op_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
{
	F2FS_FUSE_COUNT_OP(req, F2FS_OP_GETXATTR);
	query_xattr(req, ino, name, size);
}

static void op_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
	F2FS_FUSE_COUNT_OP(req, F2FS_OP_LISTXATTR);
	query_xattr(req, ino, NULL, size);
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
	struct f2fs_fuse_cred rc;
	bool outside;

	if (!fs->posix_acl || strcmp(name, "system.posix_acl_access") != 0 ||
	    f2fs_getattr(fs->sb, nid, &st) != 0 || !(st.mode & S_ISGID))
		return false;
	f2fs_fuse_get_cred(req, S_ISGID, &rc);
	outside = !f2fs_cred_in_group(&rc.cred, st.gid);
	f2fs_fuse_put_cred(&rc);
	return outside && !f2fs_fuse_has_fsetid(req);
}

static void op_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name, const char *value,
			size_t size, int flags)
{
	F2FS_FUSE_COUNT_OP(req, F2FS_OP_SETXATTR);
	struct f2fs_fuse *fs = f2fs_fuse_req_fs(req);
	uint32_t nid = f2fs_fuse_nid(fs, ino);
	bool kill = acl_kills_sgid(req, fs, nid, name);
	int err;

	flags &= ~(F2FS_XATTR_ACL_KILL_SGID | F2FS_XATTR_PRIV_QUOTA);
	if (f2fs_fuse_priv(req, fs))
		flags |= F2FS_XATTR_PRIV_QUOTA;
	err = f2fs_setxattr(fs->sb, nid, name, value, size,
			    flags | (kill ? F2FS_XATTR_ACL_KILL_SGID : 0));
	if (!err && kill)
		f2fs_fuse_inval_attrs(fs, ino);
	f2fs_fuse_reply_status(req, err);
}

static void op_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name)
{
	F2FS_FUSE_COUNT_OP(req, F2FS_OP_REMOVEXATTR);
	struct f2fs_fuse *fs = f2fs_fuse_req_fs(req);

	f2fs_fuse_reply_status(req, f2fs_removexattr(fs->sb, f2fs_fuse_nid(fs, ino), name));
}

void f2fs_fuse_xattr_ops(struct fuse_lowlevel_ops *ops)
{
	ops->getxattr = op_getxattr;
	ops->listxattr = op_listxattr;
	ops->setxattr = op_setxattr;
	ops->removexattr = op_removexattr;
}
