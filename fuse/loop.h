/* SPDX-License-Identifier: GPL-2.0 */
/* The request loop with busy polling (loop.c). */
#ifndef F2FS_FUSE_LOOP_H
#define F2FS_FUSE_LOOP_H

#include "f2fs_fuse.h"

/* -o busy_poll's default, microseconds */
#define F2FS_FUSE_BUSY_POLL_US 20

/*
 * Serve se until unmount or a signal with up to max_threads threads (at
 * most max_idle of them idle), the reading thread polling the device for
 * busy_us microseconds after each request before it sleeps.  Returns 0 or
 * a negative errno; -EOPNOTSUPP before serving anything where the loop is
 * not built (it needs epoll): libfuse's loops serve instead.
 */
int f2fs_fuse_busy_loop(struct fuse_session *se, unsigned int busy_us,
			unsigned int max_threads, unsigned int max_idle);

#endif
