/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What f2fs-fusectl asks an f2fs-fuse mount beside keys: a file's physical
 * extents (FIEMAP's answer, which cannot cross FUSE: its size depends on
 * the file) and the live status of /sys/kernel/debug/f2fs/status.  Both
 * are fixed-size ioctls on the key ioctls' magic (keyctl_proto.h), so
 * FUSE carries them; extents come a page of them at a time.
 *
 * All fields are in host byte order: both ends run on one machine.
 */
#ifndef F2FS_FSCTL_PROTO_H
#define F2FS_FSCTL_PROTO_H

#include <stdint.h>
#include <sys/ioctl.h>

#include "keyctl_proto.h"

#define F2FS_FSCTL_EXTENTS_MAX	64

#define F2FS_FSCTL_EXT_UNWRITTEN	0x1	/* fallocated, reads as zeros */
#define F2FS_FSCTL_EXT_INLINE		0x2	/* in the inode block */
#define F2FS_FSCTL_EXT_ENCODED		0x4	/* compressed */
#define F2FS_FSCTL_EXT_ENCRYPTED	0x8

struct f2fs_fsctl_extent {
	uint64_t lblk;			/* file block */
	uint64_t pblk;			/* device block (4 KiB) */
	uint64_t len;			/* blocks */
	uint32_t flags;			/* F2FS_FSCTL_EXT_* */
	uint32_t reserved;
};

struct f2fs_fsctl_extents {
	uint64_t start;			/* in: first file block; out: where to go on */
	uint64_t file_blocks;		/* out: i_size in blocks */
	uint32_t count;			/* out: extents filled in; 0: no more */
	uint32_t reserved;
	struct f2fs_fsctl_extent ext[F2FS_FSCTL_EXTENTS_MAX];
};

#define F2FS_FSCTL_ST_WRITABLE	0x1
#define F2FS_FSCTL_ST_SHUTDOWN	0x2
#define F2FS_FSCTL_ST_NEED_FSCK	0x4
#define F2FS_FSCTL_ST_WRITEBACK	0x8	/* the page cache is on: the wb_* fields count */
#define F2FS_FSCTL_NR_LOGS	6	/* hot/warm/cold data, hot/warm/cold node */
#define F2FS_FSCTL_IO_BUCKETS	9	/* 4K .. 256K, <512K, >=512K */

struct f2fs_fsctl_status {
	uint32_t flags;			/* F2FS_FSCTL_ST_* */
	uint32_t segment_count_main, section_count, segs_per_sec, blocks_per_seg;
	uint32_t meta_segs[5];		/* SB, CP, SIT, NAT, SSA */
	uint32_t ovp_segs, rsvd_segs;
	uint32_t free_segs, full_segs, dirty_segs, prefree_segs;
	struct {
		uint32_t segno, blkoff, ssr, full_segs, dirty_segs, reserved;
		uint64_t valid_blocks;
	} log[F2FS_FSCTL_NR_LOGS];
	uint64_t valid_blocks, user_blocks, valid_nodes, valid_inodes;
	uint64_t dirty_nodes, cached_inodes, orphans, cp_ver, ckpt_flags;
	uint64_t reads, read_bytes, writes, write_bytes, flushes;
	uint64_t read_hist[F2FS_FSCTL_IO_BUCKETS], write_hist[F2FS_FSCTL_IO_BUCKETS];
	uint64_t cache_hits, cache_misses;
	uint64_t checkpoints, gc_runs, gc_sections, gc_data_blocks, gc_node_blocks, ssr_segments;
	/* the page cache (pages of 4 KiB): now, and ever since mount */
	uint64_t wb_dirty_pages, wb_dirty_inodes, wb_limit_pages;
	uint64_t wb_pages_dirtied, wb_pages_written, wb_pages_dropped;
	uint64_t wb_sync, wb_background;	/* inode writebacks: by a change or fsync, by the flusher */
};

_Static_assert(sizeof(struct f2fs_fsctl_extents) == 24 + 32 * F2FS_FSCTL_EXTENTS_MAX,
	       "f2fs_fsctl_extents");
_Static_assert(sizeof(struct f2fs_fsctl_status) == 640, "f2fs_fsctl_status");

#define F2FS_IOC_FSCTL_STATUS	_IOR(F2FS_KEYCTL_MAGIC, 7, struct f2fs_fsctl_status)
#define F2FS_IOC_FSCTL_EXTENTS	_IOWR(F2FS_KEYCTL_MAGIC, 8, struct f2fs_fsctl_extents)

#endif /* F2FS_FSCTL_PROTO_H */
