// SPDX-License-Identifier: GPL-2.0
/*
 * The flusher (-o writeback): a thread that calls the core's background
 * writeback (f2fs_writeback_background) a few times per expire period, so
 * dirty data reaches the image within about dirty_expire_ms of its write,
 * or sooner once half the dirty limit is used.  It shares the maintenance
 * thread's lock, condition and stop flag (maintenance.c), and starts and
 * stops with it.
 */
#include "f2fs_fuse.h"

#include <signal.h>
#include <string.h>
#include <time.h>

static void *flusher_main(void *arg)
{
	struct f2fs_fuse *fs = arg;
	unsigned int expire = fs->dirty_expire_ms ? fs->dirty_expire_ms
						  : F2FS_DEFAULT_DIRTY_EXPIRE_MS;
	/* a quarter of the expire, so data is written at most 1.25 expires late */
	long period_ns = (long)(expire < 400 ? 100 : expire / 4) * 1000000L;
	struct timespec until;

	pthread_mutex_lock(&fs->maint_lock);
	while (!fs->maint_stop) {
		clock_gettime(CLOCK_MONOTONIC, &until);
		until.tv_nsec += period_ns % 1000000000L;
		until.tv_sec += period_ns / 1000000000L + until.tv_nsec / 1000000000L;
		until.tv_nsec %= 1000000000L;
		while (!fs->maint_stop &&
		       pthread_cond_timedwait(&fs->maint_cond, &fs->maint_lock, &until) == 0)
			;
		if (fs->maint_stop)
			break;
		pthread_mutex_unlock(&fs->maint_lock);
		f2fs_writeback_background(fs->sb, expire);
		pthread_mutex_lock(&fs->maint_lock);
	}
	pthread_mutex_unlock(&fs->maint_lock);
	return NULL;
}

void f2fs_fuse_start_flusher(struct f2fs_fuse *fs)
{
	struct f2fs_wb_stats st;
	sigset_t all, old;
	int err;

	f2fs_get_wb_stats(fs->sb, &st);
	if (!st.enabled)
		return;
	/* signals go to the session loop's threads, as for maintenance */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&fs->wb_thread, NULL, flusher_main, fs);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		f2fs_fuse_log(fs, F2FS_LOG_WARN, "no flusher thread (%s): dirty data is written "
			      "back by fsync, the dirty limit, checkpoints and unmount",
			      strerror(err));
		return;
	}
	fs->wb_running = true;
}

/* Called by f2fs_fuse_stop_maintenance once maint_stop is set and broadcast. */
void f2fs_fuse_stop_flusher(struct f2fs_fuse *fs)
{
	if (!fs->wb_running)
		return;
	pthread_join(fs->wb_thread, NULL);
	fs->wb_running = false;
}
