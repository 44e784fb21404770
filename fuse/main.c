// SPDX-License-Identifier: GPL-2.0
/*
 * f2fs-fuse: mount, serve and unmount.
 *
 *   f2fs-fuse [options] IMAGE_OR_DEVICE MOUNTPOINT
 *
 * Our own -o options are consumed first (options.c); everything else is
 * left for fuse_parse_cmdline() (-f, -d, -s, -h, -V, threading) and then
 * for fuse_session_new() (allow_other, max_read=, kernel mount flags, ...).
 */
#include "f2fs_fuse.h"
#include "keyctl.h"
#include "options.h"
#include "inodes.h"
#include "loop.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>
#include <syslog.h>
#include <time.h>

/* The core keeps an unlinked inode while the kernel holds it (inodes.c). */
static bool kernel_holds(void *arg, uint32_t nid)
{
	struct f2fs_fuse *fs = arg;

	return f2fs_fuse_inodes_held(&fs->inodes, f2fs_fuse_ino(fs, nid));
}

static int run(int argc, char *argv[])
{
	struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
	struct fuse_cmdline_opts fopts = { 0 };
	struct f2fs_mount_opts mopts = { 0 };
	struct fuse_session *se = NULL;
	struct fuse_lowlevel_ops ops;
	struct fuse_loop_config *lcfg;
	struct f2fs_fuse fs = { 0 };
	/* the page cache is on unless -o nowriteback */
	struct f2fs_fuse_cli c = { .fs = &fs, .mopts = &mopts, .writeback = true };
	char *fsname = NULL;
	int rc = 1, err;

	atomic_init(&fs.use_syslog, false);
	atomic_init(&fs.vfs_readonly, false);
	pthread_mutex_init(&fs.flags_lock, NULL);
	pthread_mutex_init(&fs.log_lock, NULL);
	pthread_mutex_init(&fs.rdplus.lock, NULL);
	/* 128 KiB: FUSE's usual largest READ */
	if (f2fs_stash_init(&fs.rbufs, 32, 0)) {
		fprintf(stderr, PROG ": out of memory\n");
		return 1;
	}
	if (f2fs_fuse_maintenance_init(&fs)) {
		fprintf(stderr, PROG ": out of memory\n");
		return 1;
	}
	fs.log_level = F2FS_LOG_INFO;
	if (f2fs_fuse_inodes_init(&fs.inodes) || f2fs_keyctl_new(&fs)) {
		fprintf(stderr, PROG ": out of memory\n");
		return 1;
	}

	if (f2fs_fuse_parse_opts(&args, &c) == -1)
		goto out;
	/*
	 * Added before fuse_parse_cmdline(): given fsname=, it adds no
	 * subtype of its own (after a "--", where it would be a stray argument).
	 */
	if (c.image) {
		/* An absolute source, as mount(8) shows it. */
		fsname = realpath(c.image, NULL);
		if (f2fs_fuse_add_mount_opts(&args, &c, fsname ? fsname : c.image)) {
			fprintf(stderr, PROG ": out of memory\n");
			goto out;
		}
	}
	if (fuse_parse_cmdline(&args, &fopts) == -1)
		goto out;
	if (fopts.show_help) {
		f2fs_fuse_help();
		rc = 0;
		goto out;
	}
	if (fopts.show_version) {
		f2fs_fuse_version();
		rc = 0;
		goto out;
	}
	if (!c.image || !fopts.mountpoint) {
		f2fs_fuse_usage(stderr);
		fprintf(stderr, "Try '" PROG " --help' for more information.\n");
		goto out;
	}
	/* as mount(8) does for the kernel, which refuses such a device read-write */
	if (!c.ro && f2fs_write_protected(c.image)) {
		fprintf(stderr, PROG ": %s: write-protected, mounting read-only\n", c.image);
		c.ro = true;
		if (fuse_opt_add_arg(&args, "-oro") == -1) {
			fprintf(stderr, PROG ": out of memory\n");
			goto out;
		}
	}
	fs.image = c.image;
	/* the daemon leaves the working directory: a relative path would not do */
	fs.image_path = fsname ? fsname : c.image;
	atomic_init(&fs.readonly, c.ro);
	atomic_init(&fs.reopening, false);
	if (fopts.debug)
		fs.log_level = F2FS_LOG_DEBUG;
	fs.background = !fopts.foreground;
	if (fs.background)
		openlog(PROG, LOG_PID, LOG_DAEMON);

	/* Before opening the image, so option errors come first. */
	f2fs_fuse_get_ops(&ops);
	se = fuse_session_new(&args, &ops, sizeof(ops), &fs);
	if (!se)
		goto out;

	/*
	 * The image is opened before fuse_daemonize() so that errors reach
	 * the terminal (and before it changes to "/").  The fork there keeps
	 * only this thread: f2fs_mount must not start threads.
	 */
	mopts.readonly = c.ro;
	mopts.direct = c.direct;
	mopts.discard = c.discard;
	mopts.norecovery = c.norecovery;
	mopts.fsync_checkpoint = c.fsync_checkpoint;
	mopts.checkpoint_interval = c.checkpoint_interval;
	mopts.atime = c.atime;
	mopts.nodiratime = c.nodiratime;
	mopts.quota_limits = c.quota_limits;
	mopts.cache_size = c.cache_size;
	mopts.node_ra = c.node_ra;
	mopts.no_node_ra = c.no_node_ra;
	mopts.node_ra_depth = c.node_ra_depth;
	mopts.compress_threads = c.compress_threads;
	mopts.extent_cache_size = c.extent_cache_size;
	mopts.serialize_io = c.serialize_io;
	mopts.min_seq_blocks = c.min_seq_blocks;
	mopts.writeback = c.writeback;
	mopts.dirty_bytes = c.dirty_bytes;
	mopts.dcache_size = c.dcache_size;
	mopts.no_dcache = c.no_dcache;
	mopts.log = f2fs_fuse_log_msg;
	mopts.log_arg = &fs;
	mopts.log_level = fs.log_level;
	mopts.held = kernel_holds;
	mopts.held_arg = &fs;
	err = f2fs_mount(c.image, &mopts, &fs.sb);
	if (err) {
		fprintf(stderr, PROG ": %s: %s\n", c.image, strerror(-err));
		goto out;
	}
	fs.root_ino = f2fs_root_ino(fs.sb);
	/* resolved now: daemonizing moves to "/" */
	fs.mountpoint = realpath(fopts.mountpoint, NULL);
	fs.read_ahead_kb = c.have_read_ahead ? c.read_ahead_kb : geteuid() == 0 ? 1024 : 0;
	/*
	 * The kernel enforces the on-disk ACLs unless uid=, gid= or umask=
	 * change what is shown: the ACLs would then contradict the modes.
	 * With FUSE_CAP_POSIX_ACL the core applies default ACLs to new inodes
	 * and keeps the access ACL in step with chmod.
	 */
	fs.posix_acl = !fs.force_uid && !fs.force_gid && !fs.umask;
	/* A writable mount has replayed it by now. */
	if (f2fs_recovery_pending(fs.sb))
		fprintf(stderr, PROG ": %s: warning: data fsync()ed after the last checkpoint "
			"needs roll-forward recovery; this mount shows the last checkpoint\n",
			c.image);

	fs.se = se;
	fs.max_threads = fopts.singlethread ? 1 : fopts.max_threads;
	atomic_init(&fs.inval_waiters, 0);

	/* key_file= keys go in before the kernel can ask for anything. */
	if (f2fs_keyctl_mount(&fs, se, fopts.mountpoint))
		goto out_umount;
	if (f2fs_keyctl_listen(&fs))
		goto out_umount;
	if (fuse_set_signal_handlers(se) == -1)
		goto out_umount;
	if (fuse_session_mount(se, fopts.mountpoint) == -1)
		goto out_signals;
	if (fuse_daemonize(fopts.foreground) == -1)
		goto out_unmount;
	if (!fopts.foreground)
		atomic_store(&fs.use_syslog, true);
	f2fs_keyctl_daemonized(&fs);
	/* after the fork, which keeps only this thread */
	f2fs_fuse_start_op_stats(&fs);

	/*
	 * Busy polling unless told otherwise: on one CPU a spinning thread
	 * would take the CPU from the caller it waits for, and clone_fd is
	 * libfuse's loops' own.
	 */
	if (!c.have_busy_poll)
		c.busy_poll = sysconf(_SC_NPROCESSORS_ONLN) >= 2 && !fopts.clone_fd ?
			      F2FS_FUSE_BUSY_POLL_US : 0;
	err = -EOPNOTSUPP;
	if (c.busy_poll)
		/* UINT_MAX is fuse_parse_cmdline's "not given": no limit, as libfuse's */
		err = f2fs_fuse_busy_loop(se, c.busy_poll, fs.max_threads, fopts.max_idle_threads);
	if (err != -EOPNOTSUPP) {
		/* served */
	} else if (fopts.singlethread) {
		err = fuse_session_loop(se);
	} else {
		lcfg = fuse_loop_cfg_create();
		if (!lcfg) {
			err = -ENOMEM;
		} else {
			fuse_loop_cfg_set_clone_fd(lcfg, (unsigned int)fopts.clone_fd);
			/* UINT_MAX is fuse_parse_cmdline's "not given"; libfuse rejects it. */
			if (fopts.max_idle_threads != UINT_MAX)
				fuse_loop_cfg_set_idle_threads(lcfg, fopts.max_idle_threads);
			fuse_loop_cfg_set_max_threads(lcfg, fopts.max_threads);
			err = fuse_session_loop_mt(se, lcfg);
			fuse_loop_cfg_destroy(lcfg);
		}
	}
	/* A signal number means SIGINT/SIGTERM/SIGHUP asked for a clean unmount. */
	rc = err < 0 ? 1 : 0;
	if (err < 0)
		f2fs_fuse_log_msg(&fs, F2FS_LOG_ERR, strerror(-err));

out_unmount:
	fuse_session_unmount(se);
out_signals:
	fuse_remove_signal_handlers(se);
out_umount:
	/* Normally stopped already by the destroy callback. */
	f2fs_fuse_stop_maintenance(&fs);
	f2fs_keyctl_stop(&fs);
	f2fs_fuse_stop_op_stats(&fs);
	if (c.io_stats) {
		/* the dirty data unmount writes back belongs in the counts (its errors
		 * are f2fs_umount's to report, which tries again) */
		if (fs.sb)
			f2fs_sync_data(fs.sb);
		f2fs_fuse_print_io_stats(&fs);
		f2fs_fuse_print_op_stats(&fs);
	}
	/* A writable mount commits its last checkpoint here; that can fail. */
	err = f2fs_umount(fs.sb);
	if (err < 0) {
		f2fs_fuse_log(&fs, F2FS_LOG_ERR, "unmount: final checkpoint failed: %s",
			      strerror(-err));
		rc = 1;
	}
out:
	if (se)
		fuse_session_destroy(se);
	free(fsname);
	free(fopts.mountpoint);
	free(fs.mountpoint);
	fuse_opt_free_args(&args);
	if (fs.background)
		closelog();
	f2fs_keyctl_free(&fs);
	f2fs_fuse_inodes_destroy(&fs.inodes);
	f2fs_fuse_maintenance_destroy(&fs);
	pthread_mutex_destroy(&fs.flags_lock);
	pthread_mutex_destroy(&fs.log_lock);
	pthread_mutex_destroy(&fs.rdplus.lock);
	f2fs_stash_destroy(&fs.rbufs);
	return rc;
}

int main(int argc, char *argv[])
{
	/* mount -o remount reaches us through mount.fuse3: change the running mount */
	if (f2fs_fuse_is_remount(argc, argv))
		return f2fs_fuse_remount(argc, argv);
	return run(argc, argv);
}
