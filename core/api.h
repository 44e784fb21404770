/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Public interface of the f2fs core, used by fuse/ and the tools.
 *
 * Every call returns 0 or a byte count on success and a negative errno on
 * failure.  Inode numbers are f2fs nids.  The core is thread-safe: any
 * number of threads may call into one mount at once.
 */
#ifndef F2FS_API_H
#define F2FS_API_H

#include <stdbool.h>
#include <stddef.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/types.h>

struct f2fs_sb;

enum f2fs_log_level { F2FS_LOG_ERR, F2FS_LOG_WARN, F2FS_LOG_INFO, F2FS_LOG_DEBUG };
typedef void (*f2fs_log_fn)(void *arg, enum f2fs_log_level lvl, const char *msg);

/* When reads update access times: the kernel's relatime (its default), strictatime, noatime */
enum f2fs_atime_mode { F2FS_ATIME_RELATIME, F2FS_ATIME_STRICT, F2FS_ATIME_NONE };

/* the kernel's COMPRESS_EXT_NUM and F2FS_EXTENSION_LEN */
#define F2FS_MAX_COMPRESS_EXT	16
#define F2FS_COMPRESS_EXT_LEN	8

enum f2fs_serialize_io {
	F2FS_SERIALIZE_AUTO,
	F2FS_SERIALIZE_NEVER,
	F2FS_SERIALIZE_ALWAYS,
	F2FS_SERIALIZE_ALLOC,
};

/*
 * Slabs kept between mounts of one process: a program that mounts over and
 * over (a fuzzer: a mount per input) hands one to every mount, so that its
 * block pools take slabs already faulted in instead of mapping, faulting
 * and zeroing 2 MiB for each pool of each mount.  The caller frees it
 * after the last unmount.
 */
struct f2fs_slab_cache;
struct f2fs_slab_cache *f2fs_slab_cache_new(unsigned int max_slabs);
void f2fs_slab_cache_free(struct f2fs_slab_cache *c);

struct f2fs_mount_opts {
	bool readonly;		/* never write to the device */
	bool direct;		/* O_DIRECT on the device */
	bool discard;		/* discard (or punch out of an image) freed segments */
	bool norecovery;	/* do not roll forward fsync()ed data */
	bool fsync_checkpoint;	/* every fsync commits a checkpoint (no roll-forward) */
	unsigned int checkpoint_interval;	/* seconds; 0 = the default, 60 */
	enum f2fs_atime_mode atime;
	bool nodiratime;	/* listing a directory leaves its atime alone */
	size_t cache_size;	/* bytes for the node/meta block cache; 0 = default */
	/* node read-ahead: children of an indirect node read in one batch when a
	 * walk reaches it cold; 0 = the default (F2FS_DEFAULT_NODE_RA) */
	uint32_t node_ra;
	bool no_node_ra;	/* node_ra=0: one synchronous read per node */
	uint32_t node_ra_depth;	/* device requests in flight; 0 = the default */
	/* threads that compress (decompress) a write's (read's) clusters: the
	 * caller and compress_threads - 1 helpers; 0 = one per CPU, up to 4 */
	uint32_t compress_threads;
	size_t extent_cache_size;	/* bytes of read extent runs, all inodes; 0 = default */
	/*
	 * Whose writes take the mount's writepages lock, so that each keeps its
	 * blocks one contiguous run (the kernel's __should_serialize_io):
	 * auto (compressed and encrypted files, and writes of min_seq_blocks
	 * or more), never, always, or alloc (auto's writes, with only the
	 * allocation under the lock: encryption and I/O run in parallel).
	 */
	enum f2fs_serialize_io serialize_io;
	uint32_t min_seq_blocks;	/* 0: the blocks of a section, the kernel's default */
	/* -o writeback: write(2) goes to a page cache of dirty data, written
	 * back later (pagecache.c, writeback.c) */
	bool writeback;
	size_t dirty_bytes;		/* bound on dirty data; 0: F2FS_DEFAULT_DIRTY_BYTES */
	size_t dcache_size;	/* bytes of directory name indexes; 0 = default */
	bool no_dcache;		/* dcache_size=0: every lookup scans */
	f2fs_log_fn log;	/* NULL: messages go to stderr */
	void *log_arg;
	int log_level;		/* highest level passed to log */
	/*
	 * Whether the caller still refers to inode ino (the FUSE kernel's
	 * lookups): an unlinked inode stays, as an orphan, while it does, as
	 * the kernel's f2fs keeps one while a dentry or file holds it; then
	 * f2fs_forget frees it.  NULL: only open handles keep inodes.
	 */
	bool (*held)(void *arg, uint32_t ino);
	void *held_arg;
	unsigned int quota_limits;	/* 1 << type: enforce that type's limits
					 * (usrquota or quota, grpquota, prjquota) */
	/* compression policy for new compressed files (the kernel's options) */
	unsigned int compress_algorithm;	/* COMPRESS_LZ4 unless set */
	bool compress_algorithm_set;
	unsigned int compress_level;		/* 0: the codec's default */
	unsigned int compress_log_size;		/* 0: the default, 2 */
	bool compress_chksum;
	bool compress_mode_user;		/* compress_mode=user */
	unsigned int nr_compress_ext, nr_nocompress_ext;
	char compress_ext[F2FS_MAX_COMPRESS_EXT][F2FS_COMPRESS_EXT_LEN];
	char nocompress_ext[F2FS_MAX_COMPRESS_EXT][F2FS_COMPRESS_EXT_LEN];
	struct f2fs_slab_cache *slabs;		/* NULL: slabs are mapped and unmapped */
};

/*
 * Parse one compression mount option ("compress_algorithm=zstd:3",
 * "compress_log_size=4", "compress_extension=txt", "nocompress_extension=",
 * "compress_chksum", "compress_mode=user") into opts: 1 when it was one,
 * 0 when it is not a compression option, -EINVAL with a message in err
 * (errlen bytes) for a bad value.
 */
int f2fs_parse_compress_option(struct f2fs_mount_opts *opts, const char *opt, char *err,
			       size_t errlen);

#define F2FS_DEFAULT_CACHE_SIZE (32u << 20)
#define F2FS_DEFAULT_DIRTY_BYTES (64u << 20)
#define F2FS_DEFAULT_DIRTY_EXPIRE_MS 1000
#define F2FS_DEFAULT_NODE_RA 1018	/* NIDS_PER_BLOCK: a whole indirect node */
#define F2FS_DEFAULT_NODE_RA_DEPTH 8
#define F2FS_DEFAULT_EXTENT_CACHE_SIZE (16u << 20)

/* A device or image that can only be read (a read-only block device, an
 * unwritable file): mount it read-only. */
bool f2fs_write_protected(const char *path);
/* Open an image file or block device. */
int f2fs_mount(const char *path, const struct f2fs_mount_opts *opts, struct f2fs_sb **out);
/* Open an image held in memory (tests, fuzzing); buf must outlive the mount. */
int f2fs_mount_mem(const void *buf, size_t len, const struct f2fs_mount_opts *opts,
		   struct f2fs_sb **out);
/* A read-only mount made writable, path the image it was opened from (remount rw). */
int f2fs_remount_rw(struct f2fs_sb *sb, const char *path);
/* Unmount; a writable mount writes its final checkpoint (the error, if any). */
int f2fs_umount(struct f2fs_sb *sb);
/* Write everything and commit a checkpoint (sync/syncfs). */
int f2fs_sync_fs(struct f2fs_sb *sb, bool umount);

uint32_t f2fs_root_ino(const struct f2fs_sb *sb);

/* Quota (quota_ino filesystems): types 0 user, 1 group, 2 project.  A type
 * that is off (no quota file, or files that could not be read) is -ESRCH. */
struct f2fs_quota_usage {
	uint32_t id;
	uint64_t curspace, bsoftlimit, bhardlimit;	/* bytes */
	uint64_t curinodes, isoftlimit, ihardlimit;
	int64_t btime, itime;		/* grace deadlines (seconds since the epoch), 0 none */
};
struct f2fs_quota_state {
	uint32_t bgrace, igrace;	/* seconds */
	bool enforced;			/* limits are checked on this mount */
	bool need_repair;		/* the files wait for fsck.f2fs (CP_QUOTA_NEED_FSCK_FLAG) */
};
/* The first id from id on with usage or limits (Q_GETNEXTQUOTA); -ENOENT past the last. */
int f2fs_quota_get_next(struct f2fs_sb *sb, int type, uint32_t id, struct f2fs_quota_usage *u);
int f2fs_quota_info(struct f2fs_sb *sb, int type, struct f2fs_quota_state *st);
/* setquota: limits in bytes and inodes, 0 for none; the next checkpoint writes them. */
int f2fs_quota_set_limits(struct f2fs_sb *sb, int type, uint32_t id, uint64_t bsoft,
			  uint64_t bhard, uint64_t isoft, uint64_t ihard);
int f2fs_quota_set_grace(struct f2fs_sb *sb, int type, uint32_t bgrace, uint32_t igrace);
/* Whether any type's limits are checked on this mount: only then does a
 * caller's F2FS_PRIV_QUOTA (below) make a difference. */
bool f2fs_quota_enforced(const struct f2fs_sb *sb);
/* FS_IOC_FSSETXATTR's fsx_projid (f2fs_ioc_setproject): -EOPNOTSUPP for a
 * non-zero id without project_quota or for an inode without extra
 * attributes, -EOVERFLOW where i_projid does not fit, -EDQUOT past the new
 * project's limits (priv: F2FS_PRIV_*). */
int f2fs_set_projid(struct f2fs_sb *sb, uint32_t ino, uint32_t projid, unsigned int priv);
/* True when fsync()ed data after the last checkpoint was found and not replayed. */
bool f2fs_recovery_pending(const struct f2fs_sb *sb);

struct f2fs_timespec {
	int64_t sec;
	uint32_t nsec;
};

struct f2fs_stat {
	uint32_t ino;
	uint32_t mode;		/* S_IFMT | permission bits */
	uint32_t nlink;
	uint32_t uid, gid;
	uint64_t rdev;		/* makedev(major, minor) for char/block devices */
	uint64_t size;
	uint64_t blocks;	/* 512-byte units */
	uint32_t blksize;
	struct f2fs_timespec atime, mtime, ctime, crtime;
	bool has_crtime;
	uint32_t flags;		/* FS_*_FL as shown by FS_IOC_GETFLAGS */
	uint32_t generation;
	uint32_t projid;	/* the project id (FS_IOC_FSGETXATTR fsx_projid) */
};

int f2fs_getattr(struct f2fs_sb *sb, uint32_t ino, struct f2fs_stat *st);
/*
 * Casefolding: whether the filesystem has the feature (any directory may
 * become casefolded while empty), and whether directory ino is casefolded
 * now (its names match other spellings).  A caller caching names by their
 * bytes must not cache them, nor their absence, where these say so.
 */
bool f2fs_has_casefold(const struct f2fs_sb *sb);
bool f2fs_dir_casefolded(struct f2fs_sb *sb, uint32_t ino);
int f2fs_lookup(struct f2fs_sb *sb, uint32_t dir, const char *name, size_t len,
		struct f2fs_stat *st);
/*
 * File handles (f2fs_nfs_get_inode, f2fs_get_parent): an inode named by
 * its number alone is -ESTALE unless that number is an inode in use now,
 * so a handle that outlived its file is stale, never corruption; the
 * caller compares the generation.  The parent comes from the directory's
 * own ".." entry.
 */
int f2fs_handle_getattr(struct f2fs_sb *sb, uint32_t ino, struct f2fs_stat *st);
int f2fs_get_parent(struct f2fs_sb *sb, uint32_t dir, struct f2fs_stat *st);

/*
 * Called once per entry; `next_off` is the offset to resume after this
 * entry.  Return non-zero to stop (e.g. the reply buffer is full).
 * Entries are given in on-disk order, "." and ".." included.
 */
typedef int (*f2fs_filldir_t)(void *ctx, const char *name, size_t len, uint32_t ino,
			      unsigned int file_type, uint64_t next_off);
int f2fs_readdir(struct f2fs_sb *sb, uint32_t dir, uint64_t off, f2fs_filldir_t fill,
		 void *ctx);

/*
 * Readdirplus: up to `max` entries from `off`, each with its inode's
 * attributes (`st`), or NULL for "." and ".." and for an entry whose inode
 * cannot be read (the lookup that follows reports it).  The batch's inodes
 * are read ahead together, and the directory stays locked until each is
 * read, so no entry is paired with an inode freed and reused meanwhile.
 * With dirs_only, only subdirectories come with attributes: the inodes of
 * the other entries are not read.
 */
typedef int (*f2fs_filldir_plus_t)(void *ctx, const char *name, size_t len, uint32_t ino,
				   unsigned int file_type, uint64_t next_off,
				   const struct f2fs_stat *st);
int f2fs_readdir_plus(struct f2fs_sb *sb, uint32_t dir, uint64_t off, uint32_t max,
		      bool dirs_only, f2fs_filldir_plus_t fill, void *ctx);

ssize_t f2fs_read(struct f2fs_sb *sb, uint32_t ino, void *buf, size_t len, uint64_t off);

/*
 * touch_atime: after a read of ino's data or listing, set its access time
 * to now if the mount's atime mode asks for it (never on a read-only mount
 * or for a chattr +A inode).  f2fs_atime_due() only says whether the next
 * read would.
 */
int f2fs_touch_atime(struct f2fs_sb *sb, uint32_t ino);
bool f2fs_atime_due(struct f2fs_sb *sb, uint32_t ino);

/* ---- changes (writable mounts; -EROFS otherwise) ---- */

/*
 * Privileges of the caller of a change, for the checks the kernel makes
 * with capable() on the calling task.  F2FS_PRIV_QUOTA: CAP_SYS_RESOURCE,
 * which passes quota hard limits and expired grace periods (dquot.c's
 * ignore_hardlimit); the grace period still starts.  The *_as calls and
 * the priv fields and flags below carry them; the plain calls have none.
 */
#define F2FS_PRIV_QUOTA		0x1

/* Who is asking: owner of new inodes, setgid inheritance. */
struct f2fs_cred {
	uint32_t uid, gid;
	uint32_t umask;			/* applied unless a default ACL governs the mode */
	const uint32_t *groups;		/* supplementary groups */
	int ngroups;
	unsigned int priv;		/* F2FS_PRIV_* */
};
bool f2fs_cred_in_group(const struct f2fs_cred *cred, uint32_t gid);

/*
 * file_remove_privs, before a write, truncate or fallocate by cred, whom the
 * caller has found to lack CAP_FSETID: a regular file loses set-user-ID, and
 * set-group-ID if it is group-executable or cred is not in its group
 * (setattr_should_drop_sgid).  *killed (if not NULL) receives the bits
 * cleared.  -EPERM for an immutable or append-only file that has bits to lose.
 */
int f2fs_remove_privs(struct f2fs_sb *sb, uint32_t ino, const struct f2fs_cred *cred,
		      uint32_t *killed);

/* mode holds the type: S_IFREG (or 0), S_IFCHR, S_IFBLK, S_IFIFO, S_IFSOCK */
int f2fs_mknod(struct f2fs_sb *sb, uint32_t dir, const char *name, size_t len, uint32_t mode,
	       uint32_t major, uint32_t minor, const struct f2fs_cred *cred, struct f2fs_stat *st);
int f2fs_mkdir(struct f2fs_sb *sb, uint32_t dir, const char *name, size_t len, uint32_t mode,
	       const struct f2fs_cred *cred, struct f2fs_stat *st);
int f2fs_symlink(struct f2fs_sb *sb, uint32_t dir, const char *name, size_t len,
		 const char *target, const struct f2fs_cred *cred, struct f2fs_stat *st);
int f2fs_link(struct f2fs_sb *sb, uint32_t ino, uint32_t dir, const char *name, size_t len,
	      struct f2fs_stat *st);
int f2fs_link_as(struct f2fs_sb *sb, uint32_t ino, uint32_t dir, const char *name, size_t len,
		 struct f2fs_stat *st, unsigned int priv);
int f2fs_unlink(struct f2fs_sb *sb, uint32_t dir, const char *name, size_t len);
int f2fs_rmdir(struct f2fs_sb *sb, uint32_t dir, const char *name, size_t len);
/*
 * Open handles keep an unlinked inode alive until the last release.
 * oflags: the open(2) flags (O_ACCMODE, O_APPEND, O_TRUNC are looked at).
 */
int f2fs_open(struct f2fs_sb *sb, uint32_t ino, int oflags);
int f2fs_release(struct f2fs_sb *sb, uint32_t ino);
/* The same with the handle's open(2) flags: the last handle that may write
 * aborts an atomic write left open; then 1 (drop what is cached of the file). */
int f2fs_release_file(struct f2fs_sb *sb, uint32_t ino, int oflags);
/*
 * A close(2) of a handle open for writing (FUSE's FLUSH, which close waits
 * for; the release comes later, asynchronously) by process `owner`: when
 * that process started the file's atomic write and the handle is the
 * file's only one that may write, the write is aborted now, so that the
 * program's next request finds the file as before (the kernel's release
 * runs before close returns).  A child that inherited the descriptor and
 * closes it leaves the write alone.  1 when it aborted.
 */
int f2fs_flush_file(struct f2fs_sb *sb, uint32_t ino, uint32_t owner, bool exiting);
/* Is an atomic write going on in ino? (cheap; for f2fs_flush_file's caller) */
bool f2fs_in_atomic_write(struct f2fs_sb *sb, uint32_t ino);
/* The caller no longer refers to ino (opts.held): free it if unlinked and closed. */
int f2fs_forget(struct f2fs_sb *sb, uint32_t ino);
ssize_t f2fs_write(struct f2fs_sb *sb, uint32_t ino, const void *buf, size_t len, uint64_t off);
/*
 * priv: F2FS_PRIV_* and F2FS_WRITE_THROUGH, for a write the caller wants
 * on the device when it returns (O_DIRECT; O_SYNC and O_DSYNC, whose fsync
 * follows): the file's dirty pages go first, then the write bypasses the
 * page cache, as the kernel's direct I/O does.
 */
#define F2FS_WRITE_THROUGH	0x100
ssize_t f2fs_write_as(struct f2fs_sb *sb, uint32_t ino, const void *buf, size_t len,
		      uint64_t off, unsigned int priv);

enum {
	F2FS_SET_MODE = 1 << 0,
	F2FS_SET_UID = 1 << 1,
	F2FS_SET_GID = 1 << 2,
	F2FS_SET_SIZE = 1 << 3,
	F2FS_SET_ATIME = 1 << 4,
	F2FS_SET_MTIME = 1 << 5,
	F2FS_SET_CTIME = 1 << 6,
	F2FS_SET_TIMES_GIVEN = 1 << 7,	/* a time other than "now" (ATTR_TIMES_SET) */
};
struct f2fs_setattr {
	unsigned int valid;	/* F2FS_SET_* */
	uint32_t mode, uid, gid;
	uint64_t size;
	struct f2fs_timespec atime, mtime, ctime;
	unsigned int priv;	/* F2FS_PRIV_* of the caller (chown into a full quota) */
};
int f2fs_setattr(struct f2fs_sb *sb, uint32_t ino, const struct f2fs_setattr *sa,
		 struct f2fs_stat *st);
/* mode: 0, FALLOC_FL_KEEP_SIZE, FALLOC_FL_PUNCH_HOLE|KEEP_SIZE, FALLOC_FL_ZERO_RANGE */
int f2fs_fallocate(struct f2fs_sb *sb, uint32_t ino, int mode, uint64_t off, uint64_t len);
int f2fs_fallocate_as(struct f2fs_sb *sb, uint32_t ino, int mode, uint64_t off, uint64_t len,
		      unsigned int priv);
int f2fs_fsync(struct f2fs_sb *sb, uint32_t ino, bool datasync);
/*
 * FS_IOC_SETFLAGS: set the settable FS_*_FL bits (sync, immutable, append,
 * nodump, noatime, dirsync, projinherit, casefold) to those in fsflags.  The
 * caller has checked ownership and CAP_LINUX_IMMUTABLE (fuse/ioctl.c).
 * -EOPNOTSUPP for unknown bits, compression changes, and casefold on a
 * non-directory or without the feature; -ENOTEMPTY for casefold on a
 * directory with entries.
 */
int f2fs_set_flags(struct f2fs_sb *sb, uint32_t ino, uint32_t fsflags);

/*
 * F2FS_IOC_PRECACHE_EXTENTS: map the whole file into the read extent cache
 * (reading its node blocks ahead); 0 for files without a node tree.
 */
int f2fs_precache_extents(struct f2fs_sb *sb, uint32_t ino);
/* How many direct nodes a file of its size has (for -o precache_extents). */
int f2fs_node_blocks_estimate(struct f2fs_sb *sb, uint32_t ino, uint64_t *nodes);
/*
 * Forget the clean node, NAT and meta blocks and every inode's read extent
 * runs, so that the next reads measure the device (dirty state stays).
 */
void f2fs_drop_caches(struct f2fs_sb *sb);

/*
 * flags: XATTR_CREATE, XATTR_REPLACE (0: either), F2FS_XATTR_ACL_KILL_SGID;
 * -ENODATA, -EEXIST, -E2BIG, -ENOSPC.  With F2FS_XATTR_ACL_KILL_SGID, an
 * access ACL also clears set-group-ID, as posix_acl_update_mode does when
 * the caller is neither in the file's group nor has CAP_FSETID.
 */
#define F2FS_XATTR_ACL_KILL_SGID 0x100
#define F2FS_XATTR_PRIV_QUOTA	0x200	/* the caller has F2FS_PRIV_QUOTA */
int f2fs_setxattr(struct f2fs_sb *sb, uint32_t ino, const char *name, const void *value,
		  size_t size, int flags);
int f2fs_removexattr(struct f2fs_sb *sb, uint32_t ino, const char *name);

/*
 * Periodic maintenance for a writable mount, to be called about once a second
 * from a thread of the caller's (the core starts none): commits a
 * checkpoint once opts.checkpoint_interval seconds have passed with
 * changes pending.
 */
void f2fs_maintenance(struct f2fs_sb *sb);

/*
 * flags: RENAME_NOREPLACE, RENAME_EXCHANGE, RENAME_WHITEOUT (cred owns the
 * whiteout; may be NULL without it); F2FS_RENAME_PRIV_QUOTA for F2FS_PRIV_QUOTA
 */
#define F2FS_RENAME_PRIV_QUOTA	0x80000000u
int f2fs_rename(struct f2fs_sb *sb, uint32_t olddir, const char *oldname, size_t oldlen,
		uint32_t newdir, const char *newname, size_t newlen, unsigned int flags,
		const struct f2fs_cred *cred);
ssize_t f2fs_readlink(struct f2fs_sb *sb, uint32_t ino, char *buf, size_t size);

/* Full names ("user.foo"); size 0 asks for the needed size. -ENODATA if absent. */
ssize_t f2fs_getxattr(struct f2fs_sb *sb, uint32_t ino, const char *name, void *buf,
		      size_t size);
ssize_t f2fs_listxattr(struct f2fs_sb *sb, uint32_t ino, char *buf, size_t size);

struct f2fs_statfs {
	uint64_t bsize;
	uint64_t blocks, bfree, bavail;
	uint64_t files, ffree;
	uint32_t namemax;
	uint8_t uuid[16];
};
int f2fs_statfs(struct f2fs_sb *sb, struct f2fs_statfs *st);
/* f2fs_statfs_project: for a project-inherit directory, with project limits
 * on, the filesystem's size and free space shrink to the project's limits. */
void f2fs_quota_statfs_project(struct f2fs_sb *sb, uint32_t ino, struct f2fs_statfs *st);

/*
 * I/O statistics by request size: 4K, 8K, 16K, ... 256K, (256K,512K), >=512K;
 * per bucket the number of requests and the bytes they carried (a few large
 * requests can move most of the bytes while small ones dominate the count).
 */
#define F2FS_IO_BUCKETS 9
struct f2fs_io_stats {
	uint64_t reads, read_bytes, writes, write_bytes, flushes;
	uint64_t read_hist[F2FS_IO_BUCKETS], write_hist[F2FS_IO_BUCKETS];
	uint64_t read_hist_bytes[F2FS_IO_BUCKETS], write_hist_bytes[F2FS_IO_BUCKETS];
	uint64_t cache_hits, cache_misses;
	uint64_t checkpoints, gc_runs, gc_sections, gc_data_blocks, gc_node_blocks;
	uint64_t ssr_segments;
	/* read extent cache lookups, and nodes read ahead (blocks, device requests) */
	uint64_t extent_hits, extent_misses, extent_evictions;
	uint64_t node_ra_blocks, node_ra_requests, node_ra_rejected;
	uint64_t precache_nodes;	/* direct nodes walked by extent precaches */
	/* fsyncs that wrote nodes for roll-forward, the group commits that served
	 * them (one node write and one flush each), and the node blocks written */
	uint64_t fsync_requests, fsync_commits, fsync_node_blocks;
	uint64_t sync_merged;	/* checkpoint requests a concurrent checkpoint served */
	/* compressed files: clusters given to the codec, and clusters written
	 * compressed and raw (each cluster write is one of the two) */
	uint64_t compress_runs, clusters_compressed, clusters_raw;
};
void f2fs_get_io_stats(struct f2fs_sb *sb, struct f2fs_io_stats *st);

/* -o writeback: the page cache's state and what writeback did (pages of 4 KiB) */
struct f2fs_wb_stats {
	bool enabled;
	uint64_t dirty_pages, dirty_inodes, limit_pages;
	uint64_t pages_dirtied, pages_written, pages_dropped;
	uint64_t wb_sync, wb_background;	/* inode writebacks: by a change or fsync, by the flusher */
};
void f2fs_get_wb_stats(struct f2fs_sb *sb, struct f2fs_wb_stats *st);
/* Write every dirty page back (before a checkpoint, key removal, a read-only remount). */
int f2fs_sync_data(struct f2fs_sb *sb);
/* f2fs_sync_data, then a checkpoint: what fsync, DIRSYNC and atomic commits use */
int f2fs_sync_fs_data(struct f2fs_sb *sb);
/* The flusher: inodes dirty for expire_ms or more, or past half the dirty limit;
 * returns how many it wrote back. */
unsigned int f2fs_writeback_background(struct f2fs_sb *sb, unsigned int expire_ms);
/* Drop every dirty page (a shut-down mount). */
void f2fs_drop_data(struct f2fs_sb *sb);
const char *f2fs_io_bucket_name(int bucket);

/* The v2 key identifier of a raw key (HKDF-SHA512, as the kernel derives it). */
int f2fs_key_identifier(const void *raw, size_t len, uint8_t id[16]);
/* Wipe a secret (a stored key, a request carrying one) so no copy is left. */
void f2fs_wipe(void *p, size_t len);
/* fscrypt v2 master keys (raw 16..64 bytes); id receives the key identifier. */
int f2fs_add_key(struct f2fs_sb *sb, const void *raw, size_t len, uint8_t id[16]);
/* Removing a key drops every key derived from it and the cached blocks. */
int f2fs_remove_key(struct f2fs_sb *sb, const uint8_t id[16]);
bool f2fs_key_present(struct f2fs_sb *sb, const uint8_t id[16]);
/*
 * Lock the key memory again after a fork(): memory locks are not
 * inherited.  0 or the first -errno (RLIMIT_MEMLOCK); keys work either way.
 */
int f2fs_lock_key_memory(struct f2fs_sb *sb);
/*
 * fscrypt v1 master keys (raw 16..64 bytes), named by the 8-byte descriptor
 * their policies carry.  The same key again is not an error; a different
 * one under a present descriptor is -EEXIST.  A key shorter than a mode's
 * key (64 bytes for AES-256-XTS) leaves files of that mode locked
 * (-ENOKEY, with a warning).  Removal works as for v2 keys.
 */
int f2fs_add_key_v1(struct f2fs_sb *sb, const uint8_t desc[8], const void *raw, size_t len);
int f2fs_remove_key_v1(struct f2fs_sb *sb, const uint8_t desc[8]);
bool f2fs_key_present_v1(struct f2fs_sb *sb, const uint8_t desc[8]);

/* An fscrypt policy as stored in a context (version 1 or 2, modes, flags). */
struct f2fs_policy {
	uint8_t version;		/* context version: 1 or 2 */
	uint8_t contents_mode, filenames_mode, flags, log2_data_unit_size;
	uint8_t key_spec[16];		/* v1: 8-byte descriptor; v2: identifier */
};
/* -ENODATA if not encrypted */
int f2fs_get_policy(struct f2fs_sb *sb, uint32_t ino, struct f2fs_policy *p);
/*
 * On an empty directory; -EEXIST if it has another policy, -ENOKEY without
 * its v2 key (a v1 policy may be set without its key), -EKEYREJECTED if
 * the key is present but too short for the policy's modes.
 */
int f2fs_set_policy(struct f2fs_sb *sb, uint32_t ino, const struct f2fs_policy *p);

/* ---- the f2fs ioctls (ioctl.c); the caller checks capabilities, as fuse/ does ---- */

/* F2FS_IOC_SHUTDOWN modes (F2FS_GOING_DOWN_*) */
#define F2FS_SHUTDOWN_FULLSYNC	0x0	/* write everything and checkpoint, then stop */
#define F2FS_SHUTDOWN_METASYNC	0x1	/* checkpoint without the dirty file data, then stop */
#define F2FS_SHUTDOWN_NOSYNC	0x2	/* stop now */
#define F2FS_SHUTDOWN_METAFLUSH	0x3	/* flush the device cache, then stop */
#define F2FS_SHUTDOWN_NEED_FSCK	0x4	/* checkpoint asking for fsck; keep going */
/*
 * After a shutdown every change fails with -EIO (opens for writing too),
 * reads go on, and unmounting writes nothing: the next mount finds the
 * last checkpoint and rolls forward what was fsync()ed, as after a crash.
 */
int f2fs_shutdown(struct f2fs_sb *sb, uint32_t mode);
bool f2fs_is_shut_down(const struct f2fs_sb *sb);
/* F2FS_IOC_GARBAGE_COLLECT: one victim section; sync waits for other cleaners,
 * else -EBUSY.  -ENODATA when there is nothing to clean. */
int f2fs_ioc_gc(struct f2fs_sb *sb, bool sync);
/* F2FS_IOC_GARBAGE_COLLECT_RANGE: every section touching blocks [start, start + len). */
int f2fs_ioc_gc_range(struct f2fs_sb *sb, bool sync, uint64_t start, uint64_t len);
/* F2FS_IOC_GET_FEATURES: the superblock's feature bits */
uint32_t f2fs_get_features(const struct f2fs_sb *sb);
/* FS_IOC_GETFSLABEL / SETFSLABEL: the volume name in UTF-8 (size >= 256) */
int f2fs_get_label(struct f2fs_sb *sb, char *buf, size_t size);
int f2fs_set_label(struct f2fs_sb *sb, const char *label, size_t len);
/* FITRIM: byte range and minimum length; *trimmed receives the bytes discarded */
int f2fs_trim_fs(struct f2fs_sb *sb, uint64_t start, uint64_t len, uint64_t minlen,
		 uint64_t *trimmed);
/* F2FS_IOC_GET_PIN_FILE: 0 if not pinned, else 1 + i_gc_failures in *failures. */
int f2fs_get_pin_file(struct f2fs_sb *sb, uint32_t ino, bool *pinned, uint32_t *failures);
/* F2FS_IOC_SET_PIN_FILE: returns i_gc_failures (>= 0) or -errno. */
int f2fs_set_pin_file(struct f2fs_sb *sb, uint32_t ino, bool pin);
/*
 * Atomic writes (F2FS_IOC_START_ATOMIC_WRITE / START_ATOMIC_REPLACE, COMMIT,
 * ABORT): between start and commit the file's writes, truncates and size
 * are seen by every reader but reach the disk only with the commit, which
 * makes them durable all at once (the fsync path with one mark, or a
 * checkpoint); abort, the last writable
 * handle's release, unmount or a crash drop them.  replace: the write
 * starts from an empty file; owner: the starting process (f2fs_flush_file).
 * Commit on a file with no atomic write is fsync.
 */
int f2fs_start_atomic_write(struct f2fs_sb *sb, uint32_t ino, bool replace, uint32_t owner);
int f2fs_commit_atomic_write(struct f2fs_sb *sb, uint32_t ino);
int f2fs_abort_atomic_write(struct f2fs_sb *sb, uint32_t ino);
/* F2FS_IOC_DEFRAGMENT: rewrite [*start, *start + *len) bytes contiguously if it is
 * fragmented; *len receives the bytes moved. */
int f2fs_defragment(struct f2fs_sb *sb, uint32_t ino, uint64_t start, uint64_t *len);
/* F2FS_IOC_MOVE_RANGE: the data of [pos_in, +len) of src goes to pos_out of dst and
 * src keeps a hole there; block-aligned; len 0 means to src's end.  *moved: bytes. */
int f2fs_move_range(struct f2fs_sb *sb, uint32_t src, uint32_t dst, uint64_t pos_in,
		    uint64_t pos_out, uint64_t len, uint64_t *moved);

/* A file's physical extents (f2fs-fusectl extents; FIEMAP does not cross FUSE). */
#define F2FS_EXTENT_UNWRITTEN	0x1	/* reserved by fallocate, reads as zeros */
#define F2FS_EXTENT_INLINE	0x2	/* in the inode block (pblk) */
#define F2FS_EXTENT_ENCODED	0x4	/* compressed clusters */
#define F2FS_EXTENT_ENCRYPTED	0x8
struct f2fs_extent_info {
	uint64_t lblk, pblk, len;	/* file block, device block, blocks */
	uint32_t flags;
};
/* Up to max extents from file block *from on; *from receives where to go on,
 * *nblocks the file's size in blocks.  *n == 0: no more. */
int f2fs_get_extents(struct f2fs_sb *sb, uint32_t ino, uint64_t *from, uint64_t *nblocks,
		     struct f2fs_extent_info *ext, uint32_t max, uint32_t *n);

/* What /sys/kernel/debug/f2fs/status shows, for f2fs-fusectl status. */
struct f2fs_status {
	uint32_t segment_count_main, section_count, segs_per_sec, blocks_per_seg;
	uint32_t meta_segs[5];		/* SB, CP, SIT, NAT, SSA */
	uint32_t ovp_segs, rsvd_segs;
	struct {
		uint32_t segno, blkoff, ssr, full_segs, dirty_segs;
		uint64_t valid_blocks;
	} log[6];			/* CURSEG_HOT_DATA .. CURSEG_COLD_NODE */
	uint32_t free_segs, full_segs, dirty_segs, prefree_segs;
	uint64_t valid_blocks, user_blocks, valid_nodes, valid_inodes;
	uint64_t dirty_nodes, cached_inodes, orphans, cp_ver;
	uint32_t ckpt_flags;
	bool writable, shut_down, need_fsck;
	struct f2fs_io_stats io;
};
int f2fs_get_status(struct f2fs_sb *sb, struct f2fs_status *st);

const char *f2fs_version_string(void);

/*
 * fs-verity (verity.c), as the kernel's FS_IOC_MEASURE_VERITY and
 * FS_IOC_ENABLE_VERITY answer: -EOPNOTSUPP without the verity feature.
 * Reads of a verity file check every block against its Merkle tree (-EIO
 * where one does not match); such a file opens only for reading and its
 * size does not change (-EPERM).
 */
struct f2fs_verity_digest {
	uint16_t algorithm;		/* FS_VERITY_HASH_ALG_SHA256 (1) or _SHA512 (2) */
	uint16_t size;			/* bytes of digest */
	uint8_t digest[64];
};
/* The file digest (fsverity measure); -ENODATA for a file without verity. */
int f2fs_verity_measure(struct f2fs_sb *sb, uint32_t ino, struct f2fs_verity_digest *d);
struct f2fs_verity_enable {
	uint32_t hash_algorithm;	/* FS_VERITY_HASH_ALG_* */
	uint32_t block_size;		/* 1024 .. 4096, a power of 2 */
	const uint8_t *salt;		/* at most 32 bytes */
	uint32_t salt_size;
	const uint8_t *sig;		/* a built-in signature, stored unchecked */
	uint32_t sig_size;
	unsigned int priv;		/* F2FS_PRIV_* (the tree's blocks are charged) */
};
/*
 * Build the Merkle tree of a regular file and make it a verity file
 * (fsverity_ioctl_enable with f2fs's operations); the caller has checked
 * write permission.  -EEXIST if it is one already, -EINVAL for bad
 * parameters, -EMSGSIZE for a salt or signature too long, -EPERM for an
 * append-only or immutable file.  Handles open for writing before it
 * write no more (-EPERM), as none can be opened after.
 */
int f2fs_enable_verity(struct f2fs_sb *sb, uint32_t ino, const struct f2fs_verity_enable *a);
/*
 * FS_IOC_READ_VERITY_METADATA: up to len bytes from off of the Merkle tree
 * (type 1), the descriptor without signature and with sig_size 0 (2), or
 * the signature (3); the byte count, 0 past the end.  -ENODATA for a file
 * without verity or a signature it does not have, -EINVAL for a type.
 */
ssize_t f2fs_verity_read_metadata(struct f2fs_sb *sb, uint32_t ino, uint64_t type, uint64_t off,
				  void *buf, size_t len);

/*
 * The compression ioctls (F2FS_IOC_GET/RELEASE/RESERVE_COMPRESS_BLOCKS,
 * F2FS_IOC_COMPRESS_FILE, F2FS_IOC_DECOMPRESS_FILE), as the kernel
 * answers them: -EOPNOTSUPP without the compression feature, -EINVAL for
 * a file that is not compressed.  *blocks: i_compr_blocks, or the blocks
 * released or reserved.
 */
enum f2fs_compress_ioc {
	F2FS_CIOC_GET_BLOCKS, F2FS_CIOC_RELEASE, F2FS_CIOC_RESERVE, F2FS_CIOC_COMPRESS,
	F2FS_CIOC_DECOMPRESS,
};
int f2fs_compress_ioctl(struct f2fs_sb *sb, uint32_t ino, enum f2fs_compress_ioc op,
			uint64_t *blocks);

/*
 * A few block-aligned buffers kept for reuse (bounce buffers, read-ahead
 * buffers, READ replies): a fresh buffer of 128 KiB or more is a new
 * mapping, and faulting in and zeroing its pages as the data arrives costs
 * more CPU than what is done with the data.  get hands out a kept buffer
 * of at least nr blocks or a new one of at least min_blocks (*got: its
 * size); put keeps it (unless larger than max_blocks, when that is not
 * 0), in place of the smallest kept one when all slots are taken, or
 * frees it.  huge: buffers are mappings of their own, 2 MiB-aligned and
 * huge-page backed where the OS can (f2fs_plat_map_anon), set before use.
 * source (set before use, with min_blocks and max_blocks of 512): buffers
 * are 2 MiB mappings taken from and given back to a process's slab cache,
 * so that mount after mount reuses them.
 */
#define F2FS_STASH_SLOTS 8
struct f2fs_buf_stash {
	pthread_mutex_t lock;
	uint32_t min_blocks, max_blocks;
	bool huge;
	struct f2fs_slab_cache *source;
	unsigned int nr;
	struct { void *buf; size_t blocks; } slot[F2FS_STASH_SLOTS];
};
int f2fs_stash_init(struct f2fs_buf_stash *s, uint32_t min_blocks, uint32_t max_blocks);
void f2fs_stash_destroy(struct f2fs_buf_stash *s);
void *f2fs_stash_get(struct f2fs_buf_stash *s, size_t nr, size_t *got);
void f2fs_stash_put(struct f2fs_buf_stash *s, void *buf, size_t blocks);

#endif /* F2FS_API_H */
