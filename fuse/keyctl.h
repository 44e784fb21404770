/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fscrypt keys and policies of a mount: key_file= at mount time, the
 * F2FS_IOC_* ioctls and the control socket (fuse/keyctl_proto.h), the
 * per-user claims on keys and their quota, and flushing the kernel's
 * caches when a key comes or goes.  docs/keys.md has the design,
 * docs/security.md who may do what.
 */
#ifndef F2FS_FUSE_KEYCTL_H
#define F2FS_FUSE_KEYCTL_H

#include "f2fs_fuse.h"

/* Allocate fs->keyctl; before option parsing.  -ENOMEM. */
int f2fs_keyctl_new(struct f2fs_fuse *fs);
/* Wipe and free everything; stops the socket thread if it still runs. */
void f2fs_keyctl_free(struct f2fs_fuse *fs);

/* -o key_file=PATH: read the key now, into locked memory (a message on error). */
int f2fs_keyctl_opt_key_file(struct f2fs_fuse *fs, const char *path);
/* -o v1_key_file=DESCRIPTOR:PATH: the same for a v1 key (16 hex digits of descriptor). */
int f2fs_keyctl_opt_v1_key_file(struct f2fs_fuse *fs, const char *arg);
/* -o keyctl_socket=PATH, or "none" for no socket. */
int f2fs_keyctl_opt_socket(struct f2fs_fuse *fs, const char *path);
/* allow_other / allow_root: who may use the socket besides the mounting user. */
void f2fs_keyctl_opt_allow_other(struct f2fs_fuse *fs, bool root_only);

/*
 * After f2fs_mount and before fuse_session_mount: add the key_file keys
 * (wiping them) and remember the session and the (absolute) mount point.
 */
int f2fs_keyctl_mount(struct f2fs_fuse *fs, struct fuse_session *se, const char *mountpoint);
/*
 * After f2fs_keyctl_mount, before fuse_daemonize: bind the control
 * socket, so that errors reach the terminal.  -1 (after a message) if
 * -o keyctl_socket=PATH was given and the socket cannot be made there; a
 * default socket that cannot be made is only warned about.
 */
int f2fs_keyctl_listen(struct f2fs_fuse *fs);
/* Right after fuse_daemonize: lock the key memory again (fork dropped the locks). */
void f2fs_keyctl_daemonized(struct f2fs_fuse *fs);

/* From the init callback (after fuse_daemonize forked): serve the socket. */
void f2fs_keyctl_start(struct f2fs_fuse *fs);
/* From destroy: stop serving and remove the socket (again on exit; idempotent). */
void f2fs_keyctl_stop(struct f2fs_fuse *fs);

/* May a negative lookup in dir be cached?  Not in an encrypted directory. */
bool f2fs_keyctl_may_cache_absence(struct f2fs_fuse *fs, fuse_ino_t dir);

/* The F2FS_IOC_* ioctls; false if cmd is none of them (nothing replied). */
bool f2fs_keyctl_ioctl(fuse_req_t req, fuse_ino_t ino, unsigned int cmd, const void *in_buf,
		       size_t in_bufsz, size_t out_bufsz);

#endif /* F2FS_FUSE_KEYCTL_H */
