/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The low-level operations, split as the kernel's fs/fuse splits them:
 * ops.c (session: init, destroy, the maintenance thread, statfs, forget,
 * ioctl; helpers the others share), dir.c (names and attributes),
 * readdir.c (directory streams), file.c (open files: I/O, fsync,
 * fallocate), xattr.c (extended attributes).  Each file adds its
 * operations to the table (f2fs_fuse_*_ops); none holds filesystem logic.
 */
#ifndef F2FS_FUSE_OPS_H
#define F2FS_FUSE_OPS_H

#include "f2fs_fuse.h"

static inline struct f2fs_fuse *f2fs_fuse_req_fs(fuse_req_t req)
{
	return fuse_req_userdata(req);
}

/* 0, or a negative errno from the core. */
void f2fs_fuse_reply_status(fuse_req_t req, long err);

/*
 * The caller's identity for new inodes.  The supplementary groups only
 * matter for a set-group-ID mode, and reading them costs a trip to /proc,
 * so they are fetched only then.
 */
struct f2fs_fuse_cred {
	struct f2fs_cred cred;
	gid_t *groups;
};
void f2fs_fuse_get_cred(fuse_req_t req, uint32_t mode, struct f2fs_fuse_cred *rc);
void f2fs_fuse_put_cred(struct f2fs_fuse_cred *rc);
bool f2fs_fuse_has_fsetid(fuse_req_t req);
/* F2FS_PRIV_QUOTA if the caller has CAP_SYS_RESOURCE and any limits are checked */
unsigned int f2fs_fuse_priv(fuse_req_t req, struct f2fs_fuse *fs);
int f2fs_fuse_remove_privs(fuse_req_t req, struct f2fs_fuse *fs, uint32_t nid,
			   uint32_t *killed);

bool f2fs_fuse_keep_cache(struct f2fs_fuse *fs, uint32_t nid, int oflags);
void f2fs_fuse_touch_atime(struct f2fs_fuse *fs, fuse_ino_t ino);
/* An entry reply for st; the kernel then holds the inode (a lookup counted). */
void f2fs_fuse_fill_entry(struct f2fs_fuse *fs, const struct f2fs_stat *st,
			  struct fuse_entry_param *e);
/* readdirplus=adaptive (readdir.c): a LOOKUP in parent found st. */
void f2fs_fuse_rdplus_lookup(struct f2fs_fuse *fs, fuse_ino_t parent, const struct f2fs_stat *st);
void f2fs_fuse_set_open_flags(struct f2fs_fuse *fs, uint32_t nid, struct fuse_file_info *fi);

void f2fs_fuse_dir_ops(struct fuse_lowlevel_ops *ops);
void f2fs_fuse_readdir_ops(struct fuse_lowlevel_ops *ops);
void f2fs_fuse_file_ops(struct fuse_lowlevel_ops *ops);
void f2fs_fuse_xattr_ops(struct fuse_lowlevel_ops *ops);

#endif
