/* SPDX-License-Identifier: GPL-2.0 */
/* FUSE over io_uring (uring.c): -o uring. */
#ifndef F2FS_FUSE_URING_H
#define F2FS_FUSE_URING_H

#include "f2fs_fuse.h"

/*
 * Whether requests can come through io_uring here: the build has liburing,
 * the fuse module offers it (its enable_uring parameter) and io_uring
 * rings with 128-byte entries can be made.  0, or a negative errno with
 * *why saying which is missing.
 */
int f2fs_fuse_uring_usable(const char **why);

/*
 * Serve se until unmount or a signal: requests through one io_uring queue
 * per CPU, each served by threads pinned to that CPU, and what the kernel
 * still sends through /dev/fuse (INIT, FORGET, INTERRUPT) by this thread.
 * After fuse_session_mount().  Returns 0 or a negative errno.
 */
int f2fs_fuse_uring_loop(struct f2fs_fuse *fs, struct fuse_session *se);
/* Once the session is destroyed (no more replies can come). */
void f2fs_fuse_uring_free(struct f2fs_fuse *fs);

#endif
