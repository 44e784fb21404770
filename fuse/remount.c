// SPDX-License-Identifier: GPL-2.0
/*
 * mount -o remount: mount(8) passes it to mount.fuse3, which starts
 * "f2fs-fuse SOURCE MOUNTPOINT -o ...,remount,...".  That process must not
 * mount a second daemon: it changes the running mount instead.  The
 * kernel's FUSE lets root change the read-only state of the superblock and
 * the per-mount flags on remount (fuse_reconfigure accepts nothing else),
 * and it does not tell the daemon.  So this process makes the mount(2)
 * call itself and then says so to the daemon with an ioctl on the root;
 * the daemon reads the new state from /proc/self/mountinfo, and commits a
 * checkpoint when the mount has become read-only, so the image is
 * consistent on disk for as long as it stays so.
 */
#include "f2fs_fuse.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/mount.h>
#include <sys/statvfs.h>
#include <sys/vfs.h>
#endif

#define PROG "f2fs-fuse"

#ifndef FUSE_SUPER_MAGIC
#define FUSE_SUPER_MAGIC 0x65735546
#endif
#ifndef MS_LAZYTIME
#define MS_LAZYTIME (1 << 25)
#endif

/* ------------------------------------------------------------ daemon side */

static void reply_state(fuse_req_t req, struct f2fs_fuse *fs, int err)
{
	uint32_t state = 0;

	if (err) {
		f2fs_fuse_reply_err(req, err);
		return;
	}
	if (fs->readonly)
		state |= F2FS_FUSE_STATE_IMAGE_RO;
	if (atomic_load(&fs->vfs_readonly))
		state |= F2FS_FUSE_STATE_MOUNT_RO;
	fuse_reply_ioctl(req, 0, &state, sizeof(state));
}

/*
 * F2FS_FUSE_IOC_REMOUNT.  Anybody may send it: it only makes the daemon
 * look at what the kernel already enforces, and a checkpoint is what any
 * directory fsync() commits too.
 */
static void remount_ioctl(fuse_req_t req, struct f2fs_fuse *fs, size_t out_bufsz)
{
	char dev[F2FS_FUSE_MAJMIN_LEN];
	bool ro;
	int err = 0;

	if (out_bufsz < sizeof(uint32_t)) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	/*
	 * Not found (our mount point was lazily unmounted, or the mount is in
	 * another namespace): keep what we knew, but commit what is pending,
	 * as the mount may have become read-only.
	 */
	if (!fs->mountpoint || f2fs_fuse_find_mount(fs->mountpoint, dev, &ro) != 0) {
		if (!fs->readonly) {
			err = f2fs_sync_data(fs->sb);
			if (!err)
				err = f2fs_sync_fs(fs->sb, false);
		}
		reply_state(req, fs, err);
		return;
	}
	if (ro && !atomic_exchange(&fs->vfs_readonly, true)) {
		/* what is pending goes to the image now, not at the next periodic checkpoint */
		if (!fs->readonly) {
			err = f2fs_sync_data(fs->sb);
			if (!err)
				err = f2fs_sync_fs(fs->sb, false);
		}
		f2fs_fuse_log(fs, F2FS_LOG_INFO, "remounted read-only%s%s",
			      err ? "; checkpoint failed: " : "", err ? strerror(-err) : "");
	} else if (!ro && atomic_exchange(&fs->vfs_readonly, false)) {
		f2fs_fuse_log(fs, F2FS_LOG_INFO, "remounted read-write");
	}
	reply_state(req, fs, err);
}

/*
 * F2FS_FUSE_IOC_REOPEN_RW, from the remount helper before it makes a
 * read-only (-o ro) mount read-write: the image is opened for writing and
 * the core does what a read-write mount does at its start (orphans freed,
 * quota loaded); then the maintenance thread starts.  The kernel's mount is
 * still read-only meanwhile, so nothing writes beside it.  Only root or
 * the daemon's owner may ask: it opens the image for writing.
 */
static void reopen_rw_ioctl(fuse_req_t req, struct f2fs_fuse *fs, size_t out_bufsz)
{
	uid_t uid = fuse_req_ctx(req)->uid;
	int err = 0;

	if (out_bufsz < sizeof(uint32_t)) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	if (uid != 0 && uid != geteuid()) {
		fuse_reply_err(req, EPERM);
		return;
	}
	if (atomic_exchange(&fs->reopening, true)) {
		fuse_reply_err(req, EBUSY);
		return;
	}
	if (atomic_load(&fs->readonly)) {
		err = f2fs_remount_rw(fs->sb, fs->image_path);
		if (!err) {
			/* the kernel's mount stays read-only until the helper's mount(2):
			 * ioctls that change things wait for its notice (remount_ioctl) */
			atomic_store(&fs->vfs_readonly, true);
			atomic_store(&fs->readonly, false);
			f2fs_fuse_start_maintenance(fs);
		}
	}
	atomic_store(&fs->reopening, false);
	reply_state(req, fs, err);
}

bool f2fs_fuse_remount_ioctl(fuse_req_t req, unsigned int cmd, size_t out_bufsz)
{
	if (cmd == (unsigned int)F2FS_FUSE_IOC_REMOUNT)
		remount_ioctl(req, fuse_req_userdata(req), out_bufsz);
	else if (cmd == (unsigned int)F2FS_FUSE_IOC_REOPEN_RW)
		reopen_rw_ioctl(req, fuse_req_userdata(req), out_bufsz);
	else
		return false;
	return true;
}

/* ------------------------------------------------------------ helper side */

/* The option list of argv[*i] if it is "-o LIST" (then *i moves past LIST) or "-oLIST". */
static const char *opt_list(int argc, char *argv[], int *i)
{
	const char *a = argv[*i];

	if (strcmp(a, "-o") == 0 && *i + 1 < argc)
		return argv[++*i];
	if (strncmp(a, "-o", 2) == 0)
		return a + 2;
	return NULL;
}

bool f2fs_fuse_is_remount(int argc, char *argv[])
{
	size_t n = strlen("remount");

	for (int i = 1; i < argc; i++) {
		const char *o = opt_list(argc, argv, &i);

		for (const char *p = o; p && (p = strstr(p, "remount")); p += n)
			if ((p == o || p[-1] == ',') && (p[n] == ',' || p[n] == '\0'))
				return true;
	}
	return false;
}

#if defined(__linux__)
/* Flags a remount may set or clear (MS_*), with their statvfs ST_* twins. */
static const struct {
	const char *set, *clear;
	unsigned long ms, st;
} mflags[] = {
	{ "nosuid", "suid", MS_NOSUID, ST_NOSUID },
	{ "nodev", "dev", MS_NODEV, ST_NODEV },
	{ "noexec", "exec", MS_NOEXEC, ST_NOEXEC },
	{ "sync", "async", MS_SYNCHRONOUS, ST_SYNCHRONOUS },
	{ "noatime", "atime", MS_NOATIME, ST_NOATIME },
	{ "nodiratime", "diratime", MS_NODIRATIME, ST_NODIRATIME },
	{ "relatime", "norelatime", MS_RELATIME, ST_RELATIME },
	{ "strictatime", NULL, MS_STRICTATIME, 0 },
	{ "lazytime", "nolazytime", MS_LAZYTIME, 0 },
};

/*
 * Options that mount(8) repeats from /proc/self/mountinfo or fstab but
 * that are not the mount's to change: the FUSE connection's, and the ones
 * mount(8) itself interprets.
 */
static bool quietly_kept(const char *o)
{
	static const char *const names[] = {
		"remount", "default_permissions", "allow_other", "allow_root", "auto_unmount",
		"defaults", "auto", "noauto", "user", "nouser", "users", "owner", "group",
		"_netdev", "nofail", "silent", "loud", "mand", "nomand", "iversion", "noiversion",
	};
	static const char *const prefixes[] = {
		"user_id=", "group_id=", "fsname=", "subtype=", "max_read=", "blksize=",
		"comment=", "x-",
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(o, names[i]) == 0)
			return true;
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (strncmp(o, prefixes[i], strlen(prefixes[i])) == 0)
			return true;
	return false;
}

/* One -o option: the read-only state, a per-mount flag, or a note that it stays. */
static void remount_opt(const char *o, bool *ro, unsigned long *flags)
{
	if (strcmp(o, "ro") == 0) {
		*ro = true;
		return;
	}
	if (strcmp(o, "rw") == 0) {
		*ro = false;
		return;
	}
	for (size_t i = 0; i < sizeof(mflags) / sizeof(mflags[0]); i++) {
		if (strcmp(o, mflags[i].set) == 0) {
			/* the atime modes exclude each other */
			if (mflags[i].ms & (MS_NOATIME | MS_RELATIME | MS_STRICTATIME))
				*flags &= ~(unsigned long)(MS_NOATIME | MS_RELATIME | MS_STRICTATIME);
			*flags |= mflags[i].ms;
			return;
		}
		if (mflags[i].clear && strcmp(o, mflags[i].clear) == 0) {
			*flags &= ~mflags[i].ms;
			return;
		}
	}
	if (!quietly_kept(o))
		fprintf(stderr, PROG ": remount: option %s stays as mounted; it takes an unmount "
			"and a new mount to change\n", o);
}

static int query_daemon(int fd, uint32_t *state)
{
	return ioctl(fd, F2FS_FUSE_IOC_REMOUNT, state) == 0 ? 0 : -errno;
}

static int fail(const char *mountpoint, int err)
{
	if (err == EPERM || err == EACCES)
		fprintf(stderr, PROG ": remount: %s: %s: only root may remount; a user's mount "
			"changes by unmounting it (fusermount3 -u) and mounting it again\n",
			mountpoint, strerror(err));
	else
		fprintf(stderr, PROG ": remount: %s: %s\n", mountpoint, strerror(err));
	return 1;
}

int f2fs_fuse_remount(int argc, char *argv[])
{
	const char *mountpoint = NULL;
	unsigned long flags = 0;
	struct statvfs sv;
	struct statfs sf;
	uint32_t state;
	int nonopts = 0, fd, err;
	bool ro = false;
	char *opts = NULL;

	for (int i = 1; i < argc; i++)
		if (!opt_list(argc, argv, &i) && argv[i][0] != '-' && ++nonopts == 2)
			mountpoint = argv[i];	/* the first one, the source, is the daemon's */
	if (!mountpoint) {
		fprintf(stderr, "usage: " PROG " -o remount[,ro|rw,...] SOURCE MOUNTPOINT\n");
		return 1;
	}
	if (statfs(mountpoint, &sf) != 0 || statvfs(mountpoint, &sv) != 0)
		return fail(mountpoint, errno);
	if (sf.f_type != FUSE_SUPER_MAGIC) {
		fprintf(stderr, PROG ": remount: %s is not a FUSE mount\n", mountpoint);
		return 1;
	}
	/* Start from the mount's flags: an option not given keeps its state. */
	ro = (sv.f_flag & ST_RDONLY) != 0;
	for (size_t i = 0; i < sizeof(mflags) / sizeof(mflags[0]); i++)
		if (sv.f_flag & mflags[i].st)
			flags |= mflags[i].ms;
	for (int i = 1; i < argc; i++) {
		const char *a = opt_list(argc, argv, &i);
		char *save = NULL;

		if (!a)
			continue;
		free(opts);
		opts = strdup(a);
		if (!opts) {
			fprintf(stderr, PROG ": out of memory\n");
			return 1;
		}
		for (char *o = strtok_r(opts, ",", &save); o; o = strtok_r(NULL, ",", &save))
			remount_opt(o, &ro, &flags);
	}
	free(opts);

	fd = open(mountpoint, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return fail(mountpoint, errno);
	err = query_daemon(fd, &state);
	if (err) {
		close(fd);
		if (err == -ENOTTY || err == -ENOSYS) {
			fprintf(stderr, PROG ": remount: %s: not mounted by this version of "
				"f2fs-fuse\n", mountpoint);
			return 1;
		}
		return fail(mountpoint, -err);
	}
	/* -o ro opened the image read-only: the daemon opens it for writing first */
	if (!ro && (state & F2FS_FUSE_STATE_IMAGE_RO) &&
	    ioctl(fd, F2FS_FUSE_IOC_REOPEN_RW, &state) != 0) {
		err = errno;
		close(fd);
		fprintf(stderr, PROG ": remount: %s: the image cannot be made writable: %s%s\n",
			mountpoint, strerror(err), err == EPERM || err == EACCES ? "" :
			" (the daemon's log says why)");
		return 1;
	}
	if (mount(NULL, mountpoint, NULL, MS_REMOUNT | flags | (ro ? MS_RDONLY : 0), NULL) != 0) {
		err = errno;
		close(fd);
		if (err == EBUSY && ro) {
			fprintf(stderr, PROG ": remount: %s: files are open for writing; close "
				"them first\n", mountpoint);
			return 1;
		}
		return fail(mountpoint, err);
	}
	err = query_daemon(fd, &state);
	close(fd);
	if (err) {
		fprintf(stderr, PROG ": remount: %s is %s, but the daemon %s: %s\n", mountpoint,
			ro ? "read-only" : "read-write",
			ro ? "could not commit a checkpoint" : "did not answer", strerror(-err));
		return 1;
	}
	return 0;
}
#else
int f2fs_fuse_remount(int argc, char *argv[])
{
	fprintf(stderr, PROG ": remount: not supported on this system; unmount and mount "
		"again with the options you want\n");
	return 1;
}
#endif
