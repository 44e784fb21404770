// SPDX-License-Identifier: GPL-2.0
/*
 * f2fs-fuse: command line, mount and unmount.
 *
 *   f2fs-fuse [options] IMAGE_OR_DEVICE MOUNTPOINT
 *
 * Our own -o options are consumed here; everything else is left for
 * fuse_parse_cmdline() (-f, -d, -s, -h, -V, threading) and then for
 * fuse_session_new() (allow_other, max_read=, kernel mount flags, ...).
 */
#include "f2fs_fuse.h"
#include "keyctl.h"

#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <string.h>
#include <syslog.h>
#include <time.h>

#define PROG "f2fs-fuse"

struct cli {
	struct f2fs_fuse *fs;
	const char *image;
	int nonopts;
	bool ro;		/* rw is the default, as for mount(8) */
	bool direct, discard, norecovery, fsync_checkpoint, io_stats;
	enum f2fs_atime_mode atime;	/* relatime unless told otherwise, as mount(8) */
	bool nodiratime;
	bool have_fsname, have_subtype;
	size_t cache_size;
	unsigned int checkpoint_interval;
	unsigned int read_ahead_kb;
	bool have_read_ahead;
};

enum {
	KEY_RO,
	KEY_RW,
	KEY_UID,
	KEY_GID,
	KEY_UMASK,
	KEY_FSNAME,
	KEY_SUBTYPE,
	KEY_DIRECT,
	KEY_DISCARD,
	KEY_CACHE_SIZE,
	KEY_NORECOVERY,
	KEY_CHECKPOINT_INTERVAL,
	KEY_READ_AHEAD,
	KEY_FSYNC_CHECKPOINT,
	KEY_IO_STATS,
	KEY_KEY_FILE,
	KEY_V1_KEY_FILE,
	KEY_KEYCTL_SOCKET,
	KEY_ALLOW_OTHER,
	KEY_ALLOW_ROOT,
	KEY_NOATIME,
	KEY_ATIME,
	KEY_RELATIME,
	KEY_STRICTATIME,
	KEY_NODIRATIME,
	KEY_DIRATIME,
};

static const struct fuse_opt cli_opts[] = {
	FUSE_OPT_KEY("ro", KEY_RO),
	FUSE_OPT_KEY("rw", KEY_RW),
	FUSE_OPT_KEY("uid=", KEY_UID),
	FUSE_OPT_KEY("gid=", KEY_GID),
	FUSE_OPT_KEY("umask=", KEY_UMASK),
	FUSE_OPT_KEY("fsname=", KEY_FSNAME),
	FUSE_OPT_KEY("subtype=", KEY_SUBTYPE),
	FUSE_OPT_KEY("direct", KEY_DIRECT),
	FUSE_OPT_KEY("discard", KEY_DISCARD),
	FUSE_OPT_KEY("cache_size=", KEY_CACHE_SIZE),
	FUSE_OPT_KEY("norecovery", KEY_NORECOVERY),
	FUSE_OPT_KEY("checkpoint_interval=", KEY_CHECKPOINT_INTERVAL),
	FUSE_OPT_KEY("read_ahead_kb=", KEY_READ_AHEAD),
	FUSE_OPT_KEY("fsync_checkpoint", KEY_FSYNC_CHECKPOINT),
	FUSE_OPT_KEY("io_stats", KEY_IO_STATS),
	FUSE_OPT_KEY("key_file=", KEY_KEY_FILE),
	FUSE_OPT_KEY("v1_key_file=", KEY_V1_KEY_FILE),
	FUSE_OPT_KEY("keyctl_socket=", KEY_KEYCTL_SOCKET),
	/* Noted for the key socket's access rule, then passed on to libfuse. */
	FUSE_OPT_KEY("allow_other", KEY_ALLOW_OTHER),
	FUSE_OPT_KEY("allow_root", KEY_ALLOW_ROOT),
	/*
	 * Options mount(8) and fstab may hand a helper that mean nothing to
	 * FUSE; libfuse would reject them as unknown.
	 */
	FUSE_OPT_KEY("defaults", FUSE_OPT_KEY_DISCARD),
	FUSE_OPT_KEY("auto", FUSE_OPT_KEY_DISCARD),
	FUSE_OPT_KEY("noauto", FUSE_OPT_KEY_DISCARD),
	FUSE_OPT_KEY("user", FUSE_OPT_KEY_DISCARD),
	FUSE_OPT_KEY("nouser", FUSE_OPT_KEY_DISCARD),
	FUSE_OPT_KEY("users", FUSE_OPT_KEY_DISCARD),
	FUSE_OPT_KEY("owner", FUSE_OPT_KEY_DISCARD),
	FUSE_OPT_KEY("group", FUSE_OPT_KEY_DISCARD),
	FUSE_OPT_KEY("_netdev", FUSE_OPT_KEY_DISCARD),
	FUSE_OPT_KEY("nofail", FUSE_OPT_KEY_DISCARD),
	FUSE_OPT_KEY("comment=", FUSE_OPT_KEY_DISCARD),
	FUSE_OPT_KEY("silent", FUSE_OPT_KEY_DISCARD),
	FUSE_OPT_KEY("loud", FUSE_OPT_KEY_DISCARD),
	FUSE_OPT_KEY("mand", FUSE_OPT_KEY_DISCARD),
	FUSE_OPT_KEY("nomand", FUSE_OPT_KEY_DISCARD),
	/*
	 * Access times: the kernel leaves them to FUSE servers, so the
	 * daemon applies these; the last one given counts, as for mount(8).
	 */
	FUSE_OPT_KEY("noatime", KEY_NOATIME),
	FUSE_OPT_KEY("atime", KEY_ATIME),
	FUSE_OPT_KEY("relatime", KEY_RELATIME),
	FUSE_OPT_KEY("nostrictatime", KEY_RELATIME),
	FUSE_OPT_KEY("strictatime", KEY_STRICTATIME),
	FUSE_OPT_KEY("norelatime", KEY_STRICTATIME),
	FUSE_OPT_KEY("nodiratime", KEY_NODIRATIME),
	FUSE_OPT_KEY("diratime", KEY_DIRATIME),
	/* Generic kernel flags libfuse does not know and that change nothing here. */
	FUSE_OPT_KEY("lazytime", FUSE_OPT_KEY_DISCARD),
	FUSE_OPT_KEY("nolazytime", FUSE_OPT_KEY_DISCARD),
	FUSE_OPT_KEY("iversion", FUSE_OPT_KEY_DISCARD),
	FUSE_OPT_KEY("noiversion", FUSE_OPT_KEY_DISCARD),
	FUSE_OPT_END
};

static const char *opt_value(const char *arg)
{
	const char *eq = strchr(arg, '=');

	return eq ? eq + 1 : "";
}

static int parse_ulong(const char *s, int base, unsigned long max, unsigned long *out)
{
	char *end;
	unsigned long v;

	if (!*s || *s == '-' || *s == '+')
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, base);
	if (errno || *end || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

/* Bytes with an optional K, M or G (binary) suffix. */
static int parse_size(const char *s, size_t *out)
{
	unsigned long long v;
	unsigned int shift = 0;
	char *end;

	if (!*s || *s == '-' || *s == '+')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -EINVAL;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	default: break;
	}
	if (*end || v > (unsigned long long)SIZE_MAX >> shift)
		return -EINVAL;
	*out = (size_t)(v << shift);
	return 0;
}

static int bad_value(const char *arg)
{
	fprintf(stderr, PROG ": invalid option value: %s\n", arg);
	return -1;
}

static int cli_proc(void *data, const char *arg, int key, struct fuse_args *outargs)
{
	struct cli *c = data;
	struct f2fs_fuse *fs = c->fs;
	unsigned long v;

	switch (key) {
	case FUSE_OPT_KEY_NONOPT:
		/* The image is ours; the mount point is left for fuse_parse_cmdline. */
		if (c->nonopts++ == 0) {
			c->image = arg;
			return 0;
		}
		return 1;
	case FUSE_OPT_KEY_OPT:
		/* x-* options are for userspace tools such as systemd. */
		if (strncmp(arg, "x-", 2) == 0)
			return 0;
		return 1;
	case KEY_RO:
		c->ro = true;
		return 1;	/* also a kernel mount flag */
	case KEY_RW:
		c->ro = false;
		return 1;
	case KEY_UID:
		if (parse_ulong(opt_value(arg), 10, UINT32_MAX - 1, &v))
			return bad_value(arg);
		fs->force_uid = true;
		fs->uid = (uid_t)v;
		return 0;
	case KEY_GID:
		if (parse_ulong(opt_value(arg), 10, UINT32_MAX - 1, &v))
			return bad_value(arg);
		fs->force_gid = true;
		fs->gid = (gid_t)v;
		return 0;
	case KEY_UMASK:
		if (parse_ulong(opt_value(arg), 8, 07777, &v))
			return bad_value(arg);
		fs->umask = (mode_t)v;
		return 0;
	case KEY_FSNAME:
		c->have_fsname = true;
		return 1;
	case KEY_SUBTYPE:
		c->have_subtype = true;
		return 1;
	case KEY_DIRECT:
		c->direct = true;
		return 0;
	case KEY_DISCARD:
		c->discard = true;
		return 0;
	case KEY_CACHE_SIZE:
		if (parse_size(opt_value(arg), &c->cache_size))
			return bad_value(arg);
		return 0;
	case KEY_NORECOVERY:
		c->norecovery = true;
		return 0;
	case KEY_CHECKPOINT_INTERVAL:
		/* 0 would mean the core's default; a day is plenty. */
		if (parse_ulong(opt_value(arg), 10, 86400, &v) || v == 0)
			return bad_value(arg);
		c->checkpoint_interval = (unsigned int)v;
		return 0;
	case KEY_READ_AHEAD:
		/* the kernel's max_pages limit (256 pages) caps a request anyway */
		if (parse_ulong(opt_value(arg), 10, 1024, &v))
			return bad_value(arg);
		c->read_ahead_kb = (unsigned int)v;
		c->have_read_ahead = true;
		return 0;
	case KEY_FSYNC_CHECKPOINT:
		c->fsync_checkpoint = true;
		return 0;
	case KEY_IO_STATS:
		c->io_stats = true;
		return 0;
	case KEY_KEY_FILE:
		return f2fs_keyctl_opt_key_file(fs, opt_value(arg)) ? -1 : 0;
	case KEY_V1_KEY_FILE:
		return f2fs_keyctl_opt_v1_key_file(fs, opt_value(arg)) ? -1 : 0;
	case KEY_KEYCTL_SOCKET:
		return f2fs_keyctl_opt_socket(fs, opt_value(arg)) ? -1 : 0;
	case KEY_ALLOW_OTHER:
	case KEY_ALLOW_ROOT:
		f2fs_keyctl_opt_allow_other(fs, key == KEY_ALLOW_ROOT);
		return 1;
	case KEY_NOATIME:
		c->atime = F2FS_ATIME_NONE;
		return 1;	/* also a kernel mount flag, shown in /proc/mounts */
	case KEY_ATIME:
		c->atime = F2FS_ATIME_RELATIME;
		return 1;
	case KEY_RELATIME:
		c->atime = F2FS_ATIME_RELATIME;
		return 0;
	case KEY_STRICTATIME:
		c->atime = F2FS_ATIME_STRICT;
		return 0;
	case KEY_NODIRATIME:
	case KEY_DIRATIME:
		c->nodiratime = key == KEY_NODIRATIME;
		return 0;
	default:
		return 1;
	}
}

static void usage(FILE *out)
{
	fprintf(out, "usage: " PROG " [options] IMAGE_OR_DEVICE MOUNTPOINT\n");
}

static void help(void)
{
	usage(stdout);
	printf("\nMount an f2fs image file or block device through FUSE.\n\n"
	       "f2fs-fuse options:\n"
	       "    -o ro                  mount read-only\n"
	       "    -o rw                  mount read-write (the default)\n"
	       "    -o uid=N               show every file as owned by user N\n"
	       "    -o gid=N               show every file as owned by group N\n"
	       "    -o umask=M             clear the octal permission bits M in every mode\n"
	       "    -o fsname=NAME         source shown in /proc/mounts (default: the image path)\n"
	       "    -o direct              open the image or device with O_DIRECT\n"
	       "    -o discard             discard segments freed by a checkpoint (punch\n"
	       "                           them out of an image file)\n"
	       "    -o cache_size=N[K|M|G] bytes of metadata cache (default: %u MiB)\n"
	       "    -o norecovery          do not roll forward data fsync()ed after the last\n"
	       "                           checkpoint (read-only mounts only)\n"
	       "    -o checkpoint_interval=N  seconds between periodic checkpoints while\n"
	       "                           changes are pending (default: 60)\n"
	       "    -o read_ahead_kb=N     this mount's read-ahead window, up to 1024 KiB\n"
	       "                           (default: 1024 when run as root; 0 leaves the\n"
	       "                           kernel's 128)\n"
	       "    -o fsync_checkpoint    every fsync() commits a checkpoint instead of\n"
	       "                           logging the file for roll-forward recovery\n"
	       "    -o relatime            a read updates the access time if it is not newer\n"
	       "                           than the last change, or a day old (the default)\n"
	       "    -o strictatime         every read updates the access time\n"
	       "    -o noatime             reads leave access times alone\n"
	       "    -o nodiratime          listing a directory leaves its access time alone\n"
	       "    -o io_stats            print the image I/O counts by request size,\n"
	       "                           checkpoints, cleaning and SSR counts, and the\n"
	       "                           FUSE requests by kind, at unmount (SIGUSR1\n"
	       "                           prints the requests so far at any time)\n"
	       "    -o key_file=PATH       add the raw fscrypt key (16 to 64 bytes) in PATH;\n"
	       "                           may be repeated\n"
	       "    -o v1_key_file=DESCRIPTOR:PATH  the same for a v1 policy key, named by\n"
	       "                           its 16-hex-digit descriptor; may be repeated\n"
	       "    -o keyctl_socket=PATH  where f2fs-fusectl finds this mount without ioctls\n"
	       "                           (default: see f2fs-fusectl(8)); \"none\": no socket\n"
	       "    -o default_permissions always on: the kernel checks permissions\n"
	       "    -o remount[,ro|rw]     change the running mount at MOUNTPOINT (what\n"
	       "                           mount -o remount runs; root only)\n"
	       "\nGeneral options:\n",
	       F2FS_DEFAULT_CACHE_SIZE >> 20);
	fuse_cmdline_help();
	printf("\nFUSE options:\n");
	fuse_lowlevel_help();
}

static void version(void)
{
	printf(PROG " " F2FS_FUSE_VERSION "\n");
	printf("FUSE library version %s\n", fuse_pkgversion());
	/* The next line comes partly from a fusermount3 child process. */
	fflush(stdout);
	fuse_lowlevel_version();
}

/* fsname, subtype and default_permissions, put in front of the user's -o. */
static int add_mount_opts(struct fuse_args *args, const struct cli *c, const char *fsname)
{
	char *opts = NULL;
	int err = 0;

	/*
	 * We implement no access checks of our own, so the kernel must make
	 * them; otherwise allow_other would expose every file to everyone.
	 */
	err |= fuse_opt_add_opt(&opts, "default_permissions");
	if (!c->have_subtype)
		err |= fuse_opt_add_opt(&opts, "subtype=" PROG);
	if (!c->have_fsname) {
		char *fsopt = NULL;

		/* Commas and backslashes in the path must be escaped. */
		err |= fuse_opt_add_opt_escaped(&fsopt, fsname);
		if (!err) {
			size_t n = strlen(fsopt) + sizeof("fsname=");
			char *s = malloc(n);

			if (s) {
				snprintf(s, n, "fsname=%s", fsopt);
				err |= fuse_opt_add_opt(&opts, s);
				free(s);
			} else {
				err = -1;
			}
		}
		free(fsopt);
	}
	if (!err)
		err |= fuse_opt_insert_arg(args, 1, "-o");
	if (!err)
		err |= fuse_opt_insert_arg(args, 2, opts);
	free(opts);
	return err ? -1 : 0;
}

/* The maintenance thread waits on a monotonic clock: wall-clock jumps do not matter. */
static int init_upkeep_sync(struct f2fs_fuse *fs)
{
	pthread_condattr_t ca;
	int err;

	if (pthread_condattr_init(&ca))
		return -1;
	err = pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	if (!err)
		err = pthread_cond_init(&fs->upkeep_cond, &ca);
	pthread_condattr_destroy(&ca);
	if (err)
		return -1;
	if (pthread_mutex_init(&fs->upkeep_lock, NULL)) {
		pthread_cond_destroy(&fs->upkeep_cond);
		return -1;
	}
	return 0;
}

static int run(int argc, char *argv[])
{
	struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
	struct fuse_cmdline_opts fopts = { 0 };
	struct f2fs_mount_opts mopts = { 0 };
	struct fuse_session *se = NULL;
	struct fuse_loop_config *lcfg;
	struct f2fs_fuse fs = { 0 };
	struct cli c = { .fs = &fs };
	char *fsname = NULL;
	int rc = 1, err;

	atomic_init(&fs.use_syslog, false);
	atomic_init(&fs.vfs_readonly, false);
	pthread_mutex_init(&fs.flags_lock, NULL);
	pthread_mutex_init(&fs.log_lock, NULL);
	if (init_upkeep_sync(&fs)) {
		fprintf(stderr, PROG ": out of memory\n");
		return 1;
	}
	fs.log_level = F2FS_LOG_INFO;
	if (f2fs_keyctl_new(&fs)) {
		fprintf(stderr, PROG ": out of memory\n");
		return 1;
	}

	if (fuse_opt_parse(&args, &c, cli_opts, cli_proc) == -1)
		goto out;
	/*
	 * Added before fuse_parse_cmdline(): given fsname=, it adds no
	 * subtype of its own (after a "--", where it would be a stray argument).
	 */
	if (c.image) {
		/* An absolute source, as mount(8) shows it. */
		fsname = realpath(c.image, NULL);
		if (add_mount_opts(&args, &c, fsname ? fsname : c.image)) {
			fprintf(stderr, PROG ": out of memory\n");
			goto out;
		}
	}
	if (fuse_parse_cmdline(&args, &fopts) == -1)
		goto out;
	if (fopts.show_help) {
		help();
		rc = 0;
		goto out;
	}
	if (fopts.show_version) {
		version();
		rc = 0;
		goto out;
	}
	if (!c.image || !fopts.mountpoint) {
		usage(stderr);
		fprintf(stderr, "Try '" PROG " --help' for more information.\n");
		goto out;
	}
	fs.image = c.image;
	fs.readonly = c.ro;
	if (fopts.debug)
		fs.log_level = F2FS_LOG_DEBUG;

	/* Before opening the image, so option errors come first. */
	se = fuse_session_new(&args, &f2fs_fuse_ops, sizeof(f2fs_fuse_ops), &fs);
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
	mopts.cache_size = c.cache_size;
	mopts.log = f2fs_fuse_log_msg;
	mopts.log_arg = &fs;
	mopts.log_level = fs.log_level;
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
	if (!fopts.foreground)
		openlog(PROG, LOG_PID, LOG_DAEMON);
	if (fuse_daemonize(fopts.foreground) == -1)
		goto out_unmount;
	if (!fopts.foreground)
		atomic_store(&fs.use_syslog, true);
	f2fs_keyctl_daemonized(&fs);
	/* after the fork, which keeps only this thread */
	f2fs_fuse_start_op_stats(&fs);

	if (fopts.singlethread) {
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
	f2fs_fuse_stop_upkeep(&fs);
	f2fs_keyctl_stop(&fs);
	f2fs_fuse_stop_op_stats(&fs);
	if (c.io_stats) {
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
	if (atomic_load(&fs.use_syslog))
		closelog();
	f2fs_keyctl_free(&fs);
	pthread_cond_destroy(&fs.upkeep_cond);
	pthread_mutex_destroy(&fs.upkeep_lock);
	pthread_mutex_destroy(&fs.flags_lock);
	pthread_mutex_destroy(&fs.log_lock);
	return rc;
}

int main(int argc, char *argv[])
{
	/* mount -o remount reaches us through mount.fuse3: change the running mount */
	if (f2fs_fuse_is_remount(argc, argv))
		return f2fs_fuse_remount(argc, argv);
	return run(argc, argv);
}
