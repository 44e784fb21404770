// SPDX-License-Identifier: GPL-2.0
/*
 * f2fs-fusectl's reports: a file's physical extents (filefrag -v; FIEMAP
 * does not cross FUSE) and the mount's live status, as the kernel's
 * /sys/kernel/debug/f2fs/status shows it.  Both are fixed-size ioctls
 * (fuse/fsctl_proto.h).
 */
#include "fsctl_proto.h"
#include "fusectl.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char *report_err(int err)
{
	return err == ENOTTY || err == ENOSYS ? "not an f2fs-fuse mount (or one without reports)"
					      : strerror(err);
}

/* filefrag -v's table: extents merged as FIEMAP gives them, in file order. */
static int extents_of(const char *path)
{
	struct f2fs_fsctl_extents x;
	struct stat st;
	unsigned long n = 0;
	uint64_t expected = 0;
	bool header = false;
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	int err;

	if (fd < 0)
		return fail("%s: %s", path, strerror(errno));
	if (fstat(fd, &st)) {
		err = errno;
		close(fd);
		return fail("%s: %s", path, strerror(err));
	}
	memset(&x, 0, sizeof(x));
	for (;;) {
		uint64_t start = x.start;

		err = request_fd(fd, F2FS_IOC_FSCTL_EXTENTS, &x);
		if (err)
			break;
		if (!header) {
			printf("File size of %s is %lld (%llu block%s of 4096 bytes)\n", path,
			       (long long)st.st_size, (unsigned long long)x.file_blocks,
			       x.file_blocks == 1 ? "" : "s");
			printf(" ext:     logical_offset:        physical_offset: length:   "
			       "expected: flags:\n");
			header = true;
		}
		for (uint32_t i = 0; i < x.count && i < F2FS_FSCTL_EXTENTS_MAX; i++) {
			const struct f2fs_fsctl_extent *e = &x.ext[i];
			char flags[96] = "", exp[24] = "";
			bool last = i + 1 == x.count && x.start >= x.file_blocks;

			if (n && expected && e->pblk != expected && e->pblk)
				snprintf(exp, sizeof(exp), "%llu", (unsigned long long)expected);
			snprintf(flags, sizeof(flags), "%s%s%s%s%s",
				 e->flags & F2FS_FSCTL_EXT_UNWRITTEN ? "unwritten," : "",
				 e->flags & F2FS_FSCTL_EXT_INLINE ? "not_aligned,inline_data," : "",
				 e->flags & F2FS_FSCTL_EXT_ENCODED ? "encoded," : "",
				 e->flags & F2FS_FSCTL_EXT_ENCRYPTED ? "encrypted," : "",
				 last ? "last,eof," : "");
			if (*flags)
				flags[strlen(flags) - 1] = '\0';
			printf("%4lu: %10llu..%10llu: %10llu..%10llu: %6llu: %10s %s\n", n,
			       (unsigned long long)e->lblk, (unsigned long long)(e->lblk + e->len - 1),
			       (unsigned long long)e->pblk,
			       (unsigned long long)(e->pblk + (e->pblk ? e->len - 1 : 0)),
			       (unsigned long long)e->len, exp, flags);
			expected = e->pblk ? e->pblk + e->len : 0;
			n++;
		}
		if (!x.count || x.start <= start)
			break;
	}
	close(fd);
	if (err)
		return fail("%s: %s", path, report_err(-err));
	printf("%s: %lu extent%s found\n", path, n, n == 1 ? "" : "s");
	return EXIT_SUCCESS;
}

int cmd_extents(int argc, char *argv[])
{
	int ret = EXIT_SUCCESS;

	if (!no_extra_options(argc, argv))
		return EXIT_FAILURE;
	if (argc < 2)
		return fail("extents: which file?");
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--") && extents_of(argv[i]) != EXIT_SUCCESS)
			ret = EXIT_FAILURE;
	return ret;
}

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

static void print_status(const char *mnt, const struct f2fs_fsctl_status *s)
{
	/* the kernel's order: data logs cold to hot, then dnode, file dnode, indirect */
	static const struct { int log; const char *name; } logs[] = {
		{ 2, "COLD   data" }, { 1, "WARM   data" }, { 0, "HOT    data" },
		{ 3, "Dir   dnode" }, { 4, "File  dnode" }, { 5, "Indir nodes" },
	};
	static const char *const buckets[F2FS_FSCTL_IO_BUCKETS] = {
		"4K", "8K", "16K", "32K", "64K", "128K", "256K", "<512K", ">=512K",
	};
	uint64_t node = s->valid_nodes, data = s->valid_blocks > node ? s->valid_blocks - node : 0;
	uint32_t spsec = s->segs_per_sec ? s->segs_per_sec : 1;

	printf("=====[ partition info(%s). #0, %s, CP: %s]=====\n", mnt,
	       s->flags & F2FS_FSCTL_ST_WRITABLE ? "RW" :
	       s->flags & F2FS_FSCTL_ST_SHUTDOWN ? "RO (shut down)" : "RO",
	       s->flags & F2FS_FSCTL_ST_SHUTDOWN ? "Error" :
	       s->flags & F2FS_FSCTL_ST_NEED_FSCK ? "Need fsck" : "Good");
	printf("[SB: %u] [CP: %u] [SIT: %u] [NAT: %u] [SSA: %u] [MAIN: %u(OverProv:%u Resv:%u)]\n\n",
	       s->meta_segs[0], s->meta_segs[1], s->meta_segs[2], s->meta_segs[3], s->meta_segs[4],
	       s->segment_count_main, s->ovp_segs, s->rsvd_segs);
	printf("Checkpoint version: %llu (flags 0x%llx)\n", (unsigned long long)s->cp_ver,
	       (unsigned long long)s->ckpt_flags);
	printf("Utilization: %.0f%% (%llu valid blocks)\n", pct(s->valid_blocks, s->user_blocks),
	       (unsigned long long)s->valid_blocks);
	printf("  - Node: %llu (Inode: %llu, Other: %llu)\n", (unsigned long long)node,
	       (unsigned long long)s->valid_inodes,
	       (unsigned long long)(node > s->valid_inodes ? node - s->valid_inodes : 0));
	printf("  - Data: %llu\n", (unsigned long long)data);
	printf("  - Orphan Inode: %llu\n", (unsigned long long)s->orphans);
	printf("  - Cached inodes: %llu\n", (unsigned long long)s->cached_inodes);
	printf("\nMain area: %u segs, %u secs %u zones\n", s->segment_count_main, s->section_count,
	       s->section_count);
	printf("    TYPE            segno    secno   zoneno  dirty_seg   full_seg  valid_blk\n");
	for (size_t i = 0; i < sizeof(logs) / sizeof(logs[0]); i++) {
		const __typeof__(s->log[0]) *l = &s->log[logs[i].log];

		printf("  - %s: %8u %8u %8u %10u %10u %10llu%s\n", logs[i].name, l->segno,
		       l->segno / spsec, l->segno / spsec, l->dirty_segs, l->full_segs,
		       (unsigned long long)l->valid_blocks, l->ssr ? " (SSR)" : "");
	}
	printf("\n  - Valid: %u\n  - Dirty: %u\n  - Prefree: %u\n  - Free: %u (%u)\n\n",
	       s->full_segs, s->dirty_segs, s->prefree_segs, s->free_segs, s->free_segs / spsec);
	printf("CP calls: %llu\n", (unsigned long long)s->checkpoints);
	printf("GC calls: %llu\n", (unsigned long long)s->gc_runs);
	printf("  - sections cleaned: %llu\n", (unsigned long long)s->gc_sections);
	printf("Try to move %llu blocks\n",
	       (unsigned long long)(s->gc_data_blocks + s->gc_node_blocks));
	printf("  - data blocks : %llu\n", (unsigned long long)s->gc_data_blocks);
	printf("  - node blocks : %llu\n", (unsigned long long)s->gc_node_blocks);
	printf("SSR: %llu segments\n\n", (unsigned long long)s->ssr_segments);
	printf("Block cache (node/meta): hit %llu, miss %llu (%.1f%% hits)\n",
	       (unsigned long long)s->cache_hits, (unsigned long long)s->cache_misses,
	       pct(s->cache_hits, s->cache_hits + s->cache_misses));
	printf("Dirty nodes: %llu (%llu KiB)\n\n", (unsigned long long)s->dirty_nodes,
	       (unsigned long long)s->dirty_nodes * 4);
	if (s->flags & F2FS_FSCTL_ST_WRITEBACK) {
		printf("Dirty data: %llu pages (%llu KiB) in %llu inodes, limit %llu pages\n",
		       (unsigned long long)s->wb_dirty_pages,
		       (unsigned long long)s->wb_dirty_pages * 4,
		       (unsigned long long)s->wb_dirty_inodes,
		       (unsigned long long)s->wb_limit_pages);
		printf("  - pages dirtied %llu, written back %llu, dropped %llu\n",
		       (unsigned long long)s->wb_pages_dirtied,
		       (unsigned long long)s->wb_pages_written,
		       (unsigned long long)s->wb_pages_dropped);
		printf("  - inode writebacks: %llu by changes and fsync, %llu by the flusher\n\n",
		       (unsigned long long)s->wb_sync, (unsigned long long)s->wb_background);
	} else {
		printf("Dirty data: none (writeback off)\n\n");
	}
	printf("Device I/O: %llu reads (%llu MiB), %llu writes (%llu MiB), %llu flushes\n",
	       (unsigned long long)s->reads, (unsigned long long)(s->read_bytes >> 20),
	       (unsigned long long)s->writes, (unsigned long long)(s->write_bytes >> 20),
	       (unsigned long long)s->flushes);
	printf("  %-8s %12s %12s\n", "size", "reads", "writes");
	for (int b = 0; b < F2FS_FSCTL_IO_BUCKETS; b++)
		printf("  %-8s %12llu %12llu\n", buckets[b], (unsigned long long)s->read_hist[b],
		       (unsigned long long)s->write_hist[b]);
}

int cmd_status(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "interval", required_argument, NULL, 'i' },
		{ "count", required_argument, NULL, 'c' },
		{ NULL, 0, NULL, 0 },
	};
	unsigned long interval = 0, count = 0;
	struct f2fs_fsctl_status st;
	char *end;
	int c, fd, err;

	while ((c = getopt_long(argc, argv, "i:c:", longopts, NULL)) != -1) {
		switch (c) {
		case 'i':
			interval = strtoul(optarg, &end, 10);
			if (*end || !interval)
				return fail("invalid interval: %s (whole seconds, at least 1)", optarg);
			break;
		case 'c':
			count = strtoul(optarg, &end, 10);
			if (*end || !count)
				return fail("invalid count: %s", optarg);
			break;
		default:
			return EXIT_FAILURE;
		}
	}
	if (optind + 1 != argc)
		return fail("status: which mount point?");
	fd = open(argv[optind], O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return fail("%s: %s", argv[optind], strerror(errno));
	for (unsigned long i = 0;; i++) {
		memset(&st, 0, sizeof(st));
		err = request_fd(fd, F2FS_IOC_FSCTL_STATUS, &st);
		if (err)
			break;
		if (interval) {
			time_t now = time(NULL);
			char when[64];

			strftime(when, sizeof(when), "%F %T", localtime(&now));
			printf("%s%s, every %lus\n", i ? "\n" : "", when, interval);
		}
		print_status(argv[optind], &st);
		fflush(stdout);
		if (!interval || (count && i + 1 >= count))
			break;
		sleep((unsigned int)interval);
	}
	close(fd);
	if (err)
		return fail("%s: %s", argv[optind], report_err(-err));
	return EXIT_SUCCESS;
}
