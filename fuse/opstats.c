// SPDX-License-Identifier: GPL-2.0
/*
 * FUSE requests by kind: how many the kernel sent and how long the daemon
 * spent on them, so that round trips can be counted rather than guessed.
 * Relaxed atomics: the counters are read only for reporting, and one
 * shared cache line per request costs little next to a round trip.
 */
#include "f2fs_fuse.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static const char *const op_names[F2FS_OP_COUNT] = {
	[F2FS_OP_LOOKUP] = "LOOKUP",
	[F2FS_OP_FORGET] = "FORGET",
	[F2FS_OP_BATCH_FORGET] = "BATCH_FORGET",
	[F2FS_OP_GETATTR] = "GETATTR",
	[F2FS_OP_SETATTR] = "SETATTR",
	[F2FS_OP_READLINK] = "READLINK",
	[F2FS_OP_MKNOD] = "MKNOD",
	[F2FS_OP_MKDIR] = "MKDIR",
	[F2FS_OP_UNLINK] = "UNLINK",
	[F2FS_OP_RMDIR] = "RMDIR",
	[F2FS_OP_SYMLINK] = "SYMLINK",
	[F2FS_OP_RENAME] = "RENAME",
	[F2FS_OP_LINK] = "LINK",
	[F2FS_OP_OPEN] = "OPEN",
	[F2FS_OP_READ] = "READ",
	[F2FS_OP_WRITE] = "WRITE",
	[F2FS_OP_STATFS] = "STATFS",
	[F2FS_OP_RELEASE] = "RELEASE",
	[F2FS_OP_FSYNC] = "FSYNC",
	[F2FS_OP_SETXATTR] = "SETXATTR",
	[F2FS_OP_GETXATTR] = "GETXATTR",
	[F2FS_OP_LISTXATTR] = "LISTXATTR",
	[F2FS_OP_REMOVEXATTR] = "REMOVEXATTR",
	[F2FS_OP_FLUSH] = "FLUSH",
	[F2FS_OP_OPENDIR] = "OPENDIR",
	[F2FS_OP_READDIR] = "READDIR",
	[F2FS_OP_READDIRPLUS] = "READDIRPLUS",
	[F2FS_OP_RELEASEDIR] = "RELEASEDIR",
	[F2FS_OP_FSYNCDIR] = "FSYNCDIR",
	[F2FS_OP_CREATE] = "CREATE",
	[F2FS_OP_IOCTL] = "IOCTL",
	[F2FS_OP_FALLOCATE] = "FALLOCATE",
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Counted on arrival: a caller whose reply came has its request counted. */
struct f2fs_fuse_optimer f2fs_fuse_op_begin(struct f2fs_fuse *fs, enum f2fs_fuse_op op)
{
	atomic_fetch_add_explicit(&fs->opstats[op].count, 1, memory_order_relaxed);
	return (struct f2fs_fuse_optimer){ .fs = fs, .op = op, .t0 = now_ns() };
}

void f2fs_fuse_op_end(struct f2fs_fuse_optimer *t)
{
	atomic_fetch_add_explicit(&t->fs->opstats[t->op].ns, now_ns() - t->t0,
				  memory_order_relaxed);
}

void f2fs_fuse_print_op_stats(struct f2fs_fuse *fs)
{
	unsigned long long total = 0, total_ns = 0;

	f2fs_fuse_log(fs, F2FS_LOG_INFO, "FUSE requests (kind, count, daemon time ms, us each):");
	for (int i = 0; i < F2FS_OP_COUNT; i++) {
		unsigned long long n = atomic_load_explicit(&fs->opstats[i].count,
							    memory_order_relaxed);
		unsigned long long ns = atomic_load_explicit(&fs->opstats[i].ns,
							     memory_order_relaxed);

		if (!n)
			continue;
		total += n;
		total_ns += ns;
		f2fs_fuse_log(fs, F2FS_LOG_INFO, "  op %-12s %10llu %12.3f %10.2f", op_names[i],
			      n, ns / 1e6, ns / 1e3 / (double)n);
	}
	f2fs_fuse_log(fs, F2FS_LOG_INFO, "  op %-12s %10llu %12.3f", "total", total,
		      total_ns / 1e6);
}

/* SIGUSR1 prints the counts so far: a thread takes it with sigwait(). */
static void *sigusr1_main(void *arg)
{
	struct f2fs_fuse *fs = arg;
	sigset_t set;
	int sig;

	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	while (sigwait(&set, &sig) == 0 && !atomic_load(&fs->opstats_stop))
		f2fs_fuse_print_op_stats(fs);
	return NULL;
}

/*
 * Before the session loop starts its threads: they inherit the blocked
 * SIGUSR1, so only the sigwait() thread ever takes it.  That thread blocks
 * every signal, so SIGINT and SIGTERM still go to a thread of the session
 * loop, which they wake to end it.
 */
void f2fs_fuse_start_op_stats(struct f2fs_fuse *fs)
{
	sigset_t usr1, all, old;

	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	sigfillset(&all);
	atomic_init(&fs->opstats_stop, false);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	fs->opstats_running = pthread_create(&fs->opstats_thread, NULL, sigusr1_main, fs) == 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_sigmask(SIG_BLOCK, &usr1, NULL);
}

void f2fs_fuse_stop_op_stats(struct f2fs_fuse *fs)
{
	if (!fs->opstats_running)
		return;
	atomic_store(&fs->opstats_stop, true);
	pthread_kill(fs->opstats_thread, SIGUSR1);
	pthread_join(fs->opstats_thread, NULL);
	fs->opstats_running = false;
}
