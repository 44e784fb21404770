/* SPDX-License-Identifier: GPL-2.0 */
/* f2fs-fuse's command line (options.c). */
#ifndef F2FS_FUSE_OPTIONS_H
#define F2FS_FUSE_OPTIONS_H

#include "f2fs_fuse.h"

#include <stdio.h>

#define PROG "f2fs-fuse"

struct f2fs_fuse_cli {
	struct f2fs_fuse *fs;
	const char *image;
	int nonopts;
	bool ro;		/* rw is the default, as for mount(8) */
	bool direct, discard, norecovery, fsync_checkpoint, io_stats;
	enum f2fs_atime_mode atime;	/* relatime unless told otherwise, as mount(8) */
	bool nodiratime;
	unsigned int quota_limits;	/* 1 << type, as core/api.h */
	bool have_fsname, have_subtype;
	size_t cache_size;
	unsigned int checkpoint_interval;
	unsigned int read_ahead_kb;
	bool have_read_ahead;
	struct f2fs_mount_opts *mopts;	/* compression options go straight in */
	uint32_t node_ra, node_ra_depth;
	uint32_t compress_threads;
	uint32_t busy_poll;	/* microseconds; 0: libfuse's own loops */
	bool have_busy_poll;
	bool no_node_ra;
	size_t extent_cache_size;
	enum f2fs_serialize_io serialize_io;
	uint32_t min_seq_blocks;
	bool writeback;
	size_t dirty_bytes;
	size_t dcache_size;
	bool no_dcache;
};

int f2fs_fuse_parse_opts(struct fuse_args *args, struct f2fs_fuse_cli *c);
/* fsname, subtype and default_permissions, put in front of the user's -o. */
int f2fs_fuse_add_mount_opts(struct fuse_args *args, const struct f2fs_fuse_cli *c,
			     const char *fsname);
void f2fs_fuse_usage(FILE *out);
void f2fs_fuse_help(void);
void f2fs_fuse_version(void);

#endif
