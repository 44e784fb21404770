/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Who sent a request, for the checks the kernel makes with current_cred():
 * owner or CAP_FOWNER, CAP_LINUX_IMMUTABLE, CAP_SYS_ADMIN.  A FUSE request
 * carries the caller's fsuid, fsgid and thread id; a socket peer's
 * credentials come from SO_PEERCRED (getpeereid() elsewhere).
 * docs/security.md says how capabilities are read and why that is safe.
 */
#ifndef F2FS_FUSE_CALLER_H
#define F2FS_FUSE_CALLER_H

#include "f2fs_fuse.h"

/* Capability numbers as in <linux/capability.h>. */
#define F2FS_CAP_FOWNER			3
#define F2FS_CAP_LINUX_IMMUTABLE	9
#define F2FS_CAP_SYS_ADMIN		21
#define F2FS_CAP_SYS_RESOURCE		24

struct f2fs_caller {
	uid_t uid;		/* fsuid (FUSE request) or euid at connect (socket) */
	gid_t gid;
	pid_t pid;		/* thread or process id; 0: not visible to the daemon */
	int pidfd;		/* socket peers where the kernel gives one: pins pid */
	bool from_socket;
	bool caps_read;
	uint64_t caps;		/* effective capabilities, once caps_read */
};

/* The sender of a FUSE request (blocked in the kernel until it is answered). */
void f2fs_caller_from_req(struct f2fs_caller *c, fuse_req_t req);
/* The process that connected a Unix socket; -errno. */
int f2fs_caller_from_socket(struct f2fs_caller *c, int fd);
void f2fs_caller_done(struct f2fs_caller *c);
/* The caller's process id (FUSE requests name the thread); 0 if unknown. */
pid_t f2fs_caller_tgid(struct f2fs_caller *c);
/* Is the caller's task exiting (its files closed by do_exit: a crash or SIGKILL)? */
bool f2fs_caller_exiting(struct f2fs_caller *c);

/* capable(cap): the caller's effective set, in the daemon's user namespace. */
bool f2fs_caller_capable(struct f2fs_caller *c, int cap);
/* inode_owner_or_capable(): the owner as shown (-o uid= counts), or CAP_FOWNER. */
bool f2fs_caller_owns(struct f2fs_caller *c, const struct f2fs_fuse *fs,
		      const struct f2fs_stat *st);

/*
 * The file a socket peer has open as its descriptor fd: the device and
 * inode number, as it was when the peer made the request.  -EBADF for a
 * descriptor that is not open or was opened with O_PATH (no file was
 * opened: the kernel's ioctls refuse those too), -EACCES where the daemon
 * may not look at the peer's descriptors, -EOPNOTSUPP without /proc.
 */
int f2fs_caller_file(struct f2fs_caller *c, int fd, dev_t *dev, uint64_t *ino);

/* ... and the open flags (O_ACCMODE, ...) of that descriptor. */
int f2fs_caller_fd(struct f2fs_caller *c, int fd, dev_t *dev, uint64_t *ino, int *oflags);

/* len bytes at the caller's address addr (an ioctl argument FUSE does not carry); -EFAULT. */
int f2fs_caller_read(struct f2fs_caller *c, uint64_t addr, void *buf, size_t len);
/* ... and len bytes to it (an ioctl's output buffer named by a pointer); -EFAULT. */
int f2fs_caller_write(struct f2fs_caller *c, uint64_t addr, const void *buf, size_t len);

#endif /* F2FS_FUSE_CALLER_H */
