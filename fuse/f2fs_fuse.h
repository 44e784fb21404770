/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared state of the FUSE front end: one struct per mount, reached from
 * every request through fuse_req_userdata().
 */
#ifndef F2FS_FUSE_H
#define F2FS_FUSE_H

#define FUSE_USE_VERSION 314	/* FUSE_MAKE_VERSION(3, 14) */
#include <fuse_lowlevel.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>

#include "api.h"

struct f2fs_keyctl;

/*
 * readdirplus=adaptive (readdir.c): listings go out with attributes while
 * the entries of recent listings are being looked up (a stat walk), and
 * names alone otherwise.  Directories listed with entries sent without
 * attributes are remembered for a while, with how many of them went out
 * so and how many lookups of non-directories they have had since.
 */
#define F2FS_FUSE_RDPLUS_DIRS 256
struct f2fs_fuse_rdplus {
	pthread_mutex_t lock;
	_Atomic int64_t plus_until_ms;	/* attributes in listings until then */
	_Atomic int64_t last_plain_ms;	/* the latest listing of entries without them */
	struct f2fs_fuse_rdplus_dir {
		uint32_t nid, plain, looked;
		int64_t ms;
	} dir[F2FS_FUSE_RDPLUS_DIRS];
};

/* FUSE requests we count (opstats.c), named after the kernel's opcodes. */
enum f2fs_fuse_op {
	F2FS_OP_LOOKUP, F2FS_OP_FORGET, F2FS_OP_BATCH_FORGET, F2FS_OP_GETATTR,
	F2FS_OP_SETATTR, F2FS_OP_READLINK, F2FS_OP_MKNOD, F2FS_OP_MKDIR, F2FS_OP_UNLINK,
	F2FS_OP_RMDIR, F2FS_OP_SYMLINK, F2FS_OP_RENAME, F2FS_OP_LINK, F2FS_OP_OPEN,
	F2FS_OP_READ, F2FS_OP_WRITE, F2FS_OP_STATFS, F2FS_OP_RELEASE, F2FS_OP_FSYNC,
	F2FS_OP_SETXATTR, F2FS_OP_GETXATTR, F2FS_OP_LISTXATTR, F2FS_OP_REMOVEXATTR,
	F2FS_OP_FLUSH, F2FS_OP_OPENDIR, F2FS_OP_READDIR, F2FS_OP_READDIRPLUS, F2FS_OP_RELEASEDIR,
	F2FS_OP_FSYNCDIR, F2FS_OP_CREATE, F2FS_OP_IOCTL, F2FS_OP_FALLOCATE,
	F2FS_OP_COUNT
};

struct f2fs_fuse_opstat {
	atomic_uint_least64_t count;
	atomic_uint_least64_t ns;	/* in the handler, reply included */
};

/*
 * Entry and attribute cache lifetime in seconds.  Nothing but this daemon
 * writes the image while it is mounted, and every reply to a change
 * carries fresh attributes (the kernel updates its own dentries on
 * create, rename and unlink), so the kernel may keep everything for long.
 */
#define F2FS_FUSE_TIMEOUT 3600.0

/* Read-ahead we ask the kernel for (it may allow less). */
#define F2FS_FUSE_READAHEAD (1u << 20)

/* Largest WRITE request: 1 MiB writes (fio, dd bs=1M) arrive whole. */
#define F2FS_FUSE_MAX_WRITE (1u << 20)

/* Longest name f2fs stores; the kernel's FUSE layer does not check it. */
#define F2FS_FUSE_NAME_MAX 255

/* The node ids the kernel holds, with their lookup counts (inodes.c). */
struct f2fs_fuse_inodes {
	pthread_mutex_t lock;
	struct f2fs_known_ino **buckets;
	size_t nbuckets, ninos;
};

struct f2fs_fuse {
	struct f2fs_sb *sb;
	uint32_t root_ino;		/* f2fs nid of "/" (FUSE_ROOT_ID) */

	/* Presentation overrides from -o uid=, gid=, umask= */
	bool force_uid, force_gid;
	uid_t uid;
	gid_t gid;
	mode_t umask;

	/* Whether the kernel may enforce POSIX ACLs (see init). */
	bool posix_acl;
	/* -o ro: the image is opened read-only (until a remount makes it writable) */
	atomic_bool readonly;
	atomic_bool reopening;		/* a remount is making it writable */
	/*
	 * The kernel's mount is read-only (remount,ro; see remount.c): it
	 * refuses changes itself, except those that come as ioctls.
	 */
	atomic_bool vfs_readonly;

	/*
	 * For notifications to the kernel.  A handler that waits for one
	 * (page cache invalidation waits for locked pages, which a READ
	 * request may hold) needs another thread free to serve that request:
	 * at most max_threads - 1 handlers wait at once.
	 */
	struct fuse_session *se;
	unsigned int max_threads;	/* 1 with -s */
	atomic_uint inval_waiters;

	/* The flusher (-o writeback, writeback.c): started and stopped with maintenance. */
	pthread_t wb_thread;
	bool wb_running;
	unsigned int dirty_expire_ms;	/* 0: F2FS_DEFAULT_DIRTY_EXPIRE_MS */

	/* The f2fs_maintenance() thread, started in init, stopped in destroy. */
	pthread_t maint_thread;
	bool maint_running;
	bool maint_stop;
	pthread_mutex_t maint_lock;
	pthread_cond_t maint_cond;	/* CLOCK_MONOTONIC */

	/*
	 * Core log routing; use_syslog flips once we are daemonized.  A
	 * background daemon sends informational messages (recovery, orphans
	 * freed) to syslog from the start, as the kernel sends them to its
	 * log: the terminal that ran mount(8) sees only warnings and errors.
	 */
	atomic_bool use_syslog;
	bool background;
	int log_level;
	const char *image;
	const char *image_path;		/* absolute, to open it again for writing */
	/* Warnings and errors per interval (log.c). */
	pthread_mutex_t log_lock;
	int64_t log_begin_ms;
	unsigned int log_printed, log_missed;

	/* Serializes inode flag changes with their permission checks (ioctl.c). */
	pthread_mutex_t flags_lock;

	/* What the kernel holds: unlinked inodes live until it forgets them. */
	struct f2fs_fuse_inodes inodes;

	/* Keys, policies and the control socket (keyctl.c). */
	struct f2fs_keyctl *keyctl;

	/* Absolute mount point and the read-ahead window to set (bdi.c), KiB. */
	char *mountpoint;
	unsigned int read_ahead_kb;

	/* -o readdirplus=: which listing the kernel is asked for (ops.c init) */
	enum {
		F2FS_FUSE_RDPLUS_ALWAYS, F2FS_FUSE_RDPLUS_ADAPTIVE, F2FS_FUSE_RDPLUS_AUTO,
		F2FS_FUSE_RDPLUS_NEVER
	} readdirplus;
	/* readdirplus=adaptive: whether listings are being stat()ed (readdir.c) */
	struct f2fs_fuse_rdplus rdplus;

	/* -o precache_extents[=N] (precache.c) */
	bool precache_open;
	uint64_t precache_min_nodes;

	/* READ reply buffers kept between requests (file.c) */
	struct f2fs_buf_stash rbufs;

	/* Requests by kind (opstats.c); SIGUSR1 and -o io_stats print them. */
	struct f2fs_fuse_opstat opstats[F2FS_OP_COUNT];
	pthread_t opstats_thread;
	bool opstats_running;
	atomic_bool opstats_stop;
};

#define PATH_MAX_LEN 4096
/* Set this mount's bdi read-ahead (Linux sysfs; needs root). */
int f2fs_fuse_set_readahead(const char *mountpoint, unsigned int kb);
/*
 * The topmost FUSE mount at `mountpoint` in /proc/self/mountinfo: its
 * device ("major:minor") and whether its superblock is read-only.
 * -ENOENT if there is none (in this mount namespace).
 */
#define F2FS_FUSE_MAJMIN_LEN 32
int f2fs_fuse_find_mount(const char *mountpoint, char majmin[F2FS_FUSE_MAJMIN_LEN],
			 bool *sb_readonly);

/* The low-level operations (ops.c and the files ops.h names). */
void f2fs_fuse_get_ops(struct fuse_lowlevel_ops *ops);

/*
 * mount -o remount (remount.c).  f2fs-fuse started with "remount" among
 * its options changes the running mount and exits; the ioctl tells the
 * daemon, which answers with F2FS_FUSE_STATE_* bits.
 */
#define F2FS_FUSE_IOC_REMOUNT		_IOR(0xF2, 0x40, uint32_t)
/* Before a read-only (-o ro) mount becomes read-write: the image opened for writing. */
#define F2FS_FUSE_IOC_REOPEN_RW		_IOR(0xF2, 0x41, uint32_t)
#define F2FS_FUSE_STATE_IMAGE_RO	1u	/* mounted with -o ro */
#define F2FS_FUSE_STATE_MOUNT_RO	2u	/* the kernel's mount is read-only now */
bool f2fs_fuse_is_remount(int argc, char *argv[]);
int f2fs_fuse_remount(int argc, char *argv[]);
/* True if the ioctl was answered here. */
bool f2fs_fuse_remount_ioctl(fuse_req_t req, unsigned int cmd, size_t out_bufsz);
/* FS_IOC_ENABLE_VERITY, FS_IOC_MEASURE_VERITY (verity.c): true when cmd was one. */
bool f2fs_fuse_verity_ioctl(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi,
			    unsigned int cmd, const void *in_buf, size_t in_bufsz, size_t out_bufsz);
/* The f2fs compression ioctls (compress_ioctl.c): true when cmd was one. */
bool f2fs_fuse_compress_ioctl(fuse_req_t req, fuse_ino_t ino, unsigned int cmd, size_t out_bufsz);

/* The maintenance thread (maintenance.c): its lock and clock, then start and stop. */
int f2fs_fuse_maintenance_init(struct f2fs_fuse *fs);
void f2fs_fuse_maintenance_destroy(struct f2fs_fuse *fs);
void f2fs_fuse_start_maintenance(struct f2fs_fuse *fs);
void f2fs_fuse_stop_maintenance(struct f2fs_fuse *fs);
/* The flusher thread (writeback.c), under the maintenance lock and stop flag. */
void f2fs_fuse_start_flusher(struct f2fs_fuse *fs);
void f2fs_fuse_stop_flusher(struct f2fs_fuse *fs);

/* F2FS_IOC_QUOTACTL (quotactl.c, quotactl_proto.h); true if it was answered here. */
bool f2fs_fuse_quotactl_ioctl(fuse_req_t req, unsigned int cmd, const void *in_buf,
			      size_t in_bufsz, size_t out_bufsz);

/* One request: counted when its handler starts, timed until it returns. */
struct f2fs_fuse_optimer {
	struct f2fs_fuse *fs;
	enum f2fs_fuse_op op;
	uint64_t t0;
};
struct f2fs_fuse_optimer f2fs_fuse_op_begin(struct f2fs_fuse *fs, enum f2fs_fuse_op op);
void f2fs_fuse_op_end(struct f2fs_fuse_optimer *t);
/*
 * First line of a handler: counts the request and times it until return
 * (clang calls a variable only its cleanup reads unused).
 */
#define F2FS_FUSE_COUNT_OP(req, op)							\
	struct f2fs_fuse_optimer optimer_						\
		__attribute__((cleanup(f2fs_fuse_op_end), unused)) =			\
		f2fs_fuse_op_begin(fuse_req_userdata(req), (op))
void f2fs_fuse_print_op_stats(struct f2fs_fuse *fs);
/* The SIGUSR1 thread that prints the counts; before the session loop. */
void f2fs_fuse_start_op_stats(struct f2fs_fuse *fs);
void f2fs_fuse_stop_op_stats(struct f2fs_fuse *fs);

/* FUSE inode numbers <-> f2fs nids; only the root differs. */
/* Microseconds on the monotonic clock: timeouts and rates, never dates. */
static inline int64_t f2fs_fuse_mono_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static inline uint32_t f2fs_fuse_nid(const struct f2fs_fuse *fs, fuse_ino_t ino)
{
	/* never a node id we gave out: 0, which the core calls stale */
	if (ino > UINT32_MAX)
		return 0;
	return ino == FUSE_ROOT_ID ? fs->root_ino : (uint32_t)ino;
}

static inline fuse_ino_t f2fs_fuse_ino(const struct f2fs_fuse *fs, uint32_t nid)
{
	return nid == fs->root_ino ? FUSE_ROOT_ID : (fuse_ino_t)nid;
}

/* A message through the core's log routing (stderr, or syslog once daemonized). */
void f2fs_fuse_log(struct f2fs_fuse *fs, enum f2fs_log_level lvl, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The same for a finished line: the core's log callback (arg is the f2fs_fuse). */
void f2fs_fuse_log_msg(void *arg, enum f2fs_log_level lvl, const char *msg);
/* -o io_stats: what the mount read from and wrote to the image, by request size. */
void f2fs_fuse_print_io_stats(struct f2fs_fuse *fs);

/* F2FS_IOC_PRECACHE_EXTENTS and the cache drop (precache.c): true if answered. */
bool f2fs_fuse_cache_ioctl(fuse_req_t req, fuse_ino_t ino, unsigned int cmd);
/* -o precache_extents: precache a large regular file being opened. */
void f2fs_fuse_precache_on_open(struct f2fs_fuse *fs, fuse_ino_t ino);
#define F2FS_FUSE_PRECACHE_MIN_NODES 16	/* 64 MiB of file */

/* Drop the kernel's cached attributes of ino: the next stat or permission check asks again. */
void f2fs_fuse_inval_attrs(struct f2fs_fuse *fs, fuse_ino_t ino);
/* Drop the kernel's cached pages of a range (len 0: to the end) where a thread is left to
 * serve the reads that waits on (file.c). */
void f2fs_fuse_drop_cached_range(struct f2fs_fuse *fs, fuse_ino_t ino, off_t off, size_t len);

/* casefold.c: names in casefolded directories are not cached by spelling */
void f2fs_fuse_casefold_entry(struct f2fs_fuse *fs, fuse_ino_t parent,
			      struct fuse_entry_param *e);
bool f2fs_fuse_casefold_may_cache_absence(const struct f2fs_fuse *fs);

/* Reply with a negative errno from the core (anything >= 0 becomes EIO). */
void f2fs_fuse_reply_err(fuse_req_t req, long err);

/* f2fs_ioctl.c: true if cmd was one of its ioctls (answered) */
bool f2fs_fuse_f2fs_ioctl(fuse_req_t req, fuse_ino_t ino, unsigned int cmd, void *arg,
			  struct fuse_file_info *fi, const void *in_buf, size_t in_bufsz,
			  size_t out_bufsz);
void f2fs_fuse_ioctl(fuse_req_t req, fuse_ino_t ino, unsigned int cmd, void *arg,
		     struct fuse_file_info *fi, unsigned flags, const void *in_buf,
		     size_t in_bufsz, size_t out_bufsz);

#endif /* F2FS_FUSE_H */
