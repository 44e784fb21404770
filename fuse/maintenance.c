// SPDX-License-Identifier: GPL-2.0
/*
 * The maintenance thread: f2fs_maintenance() about once a second on a
 * writable mount (the periodic checkpoint, background cleaning).  It
 * starts in init, after fuse_daemonize() has forked, because a fork keeps
 * only the calling thread, and stops in destroy.
 */
#include "f2fs_fuse.h"

#include <signal.h>
#include <string.h>
#include <time.h>

/* The maintenance thread waits on a monotonic clock: wall-clock jumps do not matter. */
int f2fs_fuse_maintenance_init(struct f2fs_fuse *fs)
{
	pthread_condattr_t ca;
	int err;

	if (pthread_condattr_init(&ca))
		return -1;
	err = pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	if (!err)
		err = pthread_cond_init(&fs->maint_cond, &ca);
	pthread_condattr_destroy(&ca);
	if (err)
		return -1;
	if (pthread_mutex_init(&fs->maint_lock, NULL)) {
		pthread_cond_destroy(&fs->maint_cond);
		return -1;
	}
	return 0;
}

static void *maintenance_main(void *arg)
{
	struct f2fs_fuse *fs = arg;
	struct timespec until;

	pthread_mutex_lock(&fs->maint_lock);
	while (!fs->maint_stop) {
		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_sec += 1;
		while (!fs->maint_stop &&
		       pthread_cond_timedwait(&fs->maint_cond, &fs->maint_lock, &until) == 0)
			;
		if (fs->maint_stop)
			break;
		pthread_mutex_unlock(&fs->maint_lock);
		f2fs_maintenance(fs->sb);
		pthread_mutex_lock(&fs->maint_lock);
	}
	pthread_mutex_unlock(&fs->maint_lock);
	return NULL;
}

void f2fs_fuse_start_maintenance(struct f2fs_fuse *fs)
{
	sigset_t all, old;
	int err;

	/*
	 * The thread inherits a mask blocking every signal, so SIGINT and
	 * SIGTERM go to a thread of the session loop, which they wake.
	 */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&fs->maint_thread, NULL, maintenance_main, fs);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		f2fs_fuse_log(fs, F2FS_LOG_WARN, "no maintenance thread (%s): checkpoints only "
			      "at fsync and unmount", strerror(err));
		return;
	}
	fs->maint_running = true;
	f2fs_fuse_start_flusher(fs);
}

void f2fs_fuse_stop_maintenance(struct f2fs_fuse *fs)
{
	if (!fs->maint_running)
		return;
	pthread_mutex_lock(&fs->maint_lock);
	fs->maint_stop = true;
	pthread_cond_broadcast(&fs->maint_cond);	/* the flusher waits on it too */
	pthread_mutex_unlock(&fs->maint_lock);
	f2fs_fuse_stop_flusher(fs);
	pthread_join(fs->maint_thread, NULL);
	fs->maint_running = false;
}


void f2fs_fuse_maintenance_destroy(struct f2fs_fuse *fs)
{
	pthread_cond_destroy(&fs->maint_cond);
	pthread_mutex_destroy(&fs->maint_lock);
}
