// SPDX-License-Identifier: GPL-2.0
/*
 * Messages: the core's log routing (stderr, or syslog once daemonized),
 * rate limited, and the -o io_stats report.
 */
#include "f2fs_fuse.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>
#include <time.h>

#define PROG "f2fs-fuse"

/*
 * Warnings and errors at most RATELIMIT_BURST per RATELIMIT_MS, as the
 * kernel's printk_ratelimit: requests provoke them (a corrupt inode read
 * again and again, by any user of an allow_other mount), and the log is
 * shared.  Returns how many were dropped in the interval just ended
 * (said first), or -1 to drop this one.  -d lifts the limit.
 */
#define RATELIMIT_MS	5000
#define RATELIMIT_BURST	10

static long ratelimit(struct f2fs_fuse *fs, enum f2fs_log_level lvl)
{
	int64_t now;
	long missed = 0;

	if (lvl > F2FS_LOG_WARN || fs->log_level >= F2FS_LOG_DEBUG)
		return 0;
	now = f2fs_fuse_mono_us() / 1000;
	pthread_mutex_lock(&fs->log_lock);
	if (!fs->log_begin_ms || now - fs->log_begin_ms >= RATELIMIT_MS) {
		missed = fs->log_missed;
		fs->log_begin_ms = now;
		fs->log_printed = fs->log_missed = 0;
	}
	if (fs->log_printed < RATELIMIT_BURST) {
		fs->log_printed++;
	} else {
		fs->log_missed++;
		missed = -1;
	}
	pthread_mutex_unlock(&fs->log_lock);
	return missed;
}

void f2fs_fuse_log_msg(void *arg, enum f2fs_log_level lvl, const char *msg)
{
	struct f2fs_fuse *fs = arg;
	size_t len = strlen(msg);
	long missed = ratelimit(fs, lvl);
	int prio;

	if (missed < 0)
		return;
	if (missed > 0) {
		char note[64];

		snprintf(note, sizeof(note), "%ld messages suppressed", missed);
		f2fs_fuse_log_msg(fs, F2FS_LOG_WARN, note);
	}
	while (len && msg[len - 1] == '\n')
		len--;
	if (!atomic_load(&fs->use_syslog) && !(fs->background && lvl >= F2FS_LOG_INFO)) {
		fprintf(stderr, PROG ": %s: %s%.*s\n", fs->image,
			lvl == F2FS_LOG_WARN ? "warning: " : "", (int)len, msg);
		return;
	}
	switch (lvl) {
	case F2FS_LOG_ERR: prio = LOG_ERR; break;
	case F2FS_LOG_WARN: prio = LOG_WARNING; break;
	case F2FS_LOG_INFO: prio = LOG_INFO; break;
	default: prio = LOG_DEBUG; break;
	}
	syslog(prio, "%s: %.*s", fs->image, (int)len, msg);
}

void f2fs_fuse_log(struct f2fs_fuse *fs, enum f2fs_log_level lvl, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	f2fs_fuse_log_msg(fs, lvl, msg);
}

void f2fs_fuse_print_io_stats(struct f2fs_fuse *fs)
{
	struct f2fs_io_stats st;

	f2fs_get_io_stats(fs->sb, &st);
	f2fs_fuse_log(fs, F2FS_LOG_INFO, "I/O statistics (before the final checkpoint):");
	f2fs_fuse_log(fs, F2FS_LOG_INFO, "  reads %llu (%llu bytes), writes %llu (%llu bytes), "
		      "flushes %llu", (unsigned long long)st.reads,
		      (unsigned long long)st.read_bytes, (unsigned long long)st.writes,
		      (unsigned long long)st.write_bytes, (unsigned long long)st.flushes);
	f2fs_fuse_log(fs, F2FS_LOG_INFO, "  metadata cache: %llu hits, %llu misses",
		      (unsigned long long)st.cache_hits, (unsigned long long)st.cache_misses);
	f2fs_fuse_log(fs, F2FS_LOG_INFO, "  extent cache: %llu hits, %llu misses, %llu evictions; "
		      "precache: %llu direct nodes; node read-ahead: %llu blocks in %llu "
		      "requests, %llu refused", (unsigned long long)st.extent_hits,
		      (unsigned long long)st.extent_misses, (unsigned long long)st.extent_evictions,
		      (unsigned long long)st.precache_nodes, (unsigned long long)st.node_ra_blocks,
		      (unsigned long long)st.node_ra_requests, (unsigned long long)st.node_ra_rejected);
	f2fs_fuse_log(fs, F2FS_LOG_INFO, "  checkpoints %llu; cleaning: %llu runs, %llu sections, "
		      "%llu data and %llu node blocks moved; SSR: %llu segments reused",
		      (unsigned long long)st.checkpoints, (unsigned long long)st.gc_runs,
		      (unsigned long long)st.gc_sections, (unsigned long long)st.gc_data_blocks,
		      (unsigned long long)st.gc_node_blocks, (unsigned long long)st.ssr_segments);
	{
		struct f2fs_wb_stats wb;

		f2fs_get_wb_stats(fs->sb, &wb);
		if (wb.enabled)
			f2fs_fuse_log(fs, F2FS_LOG_INFO, "  writeback: %llu pages dirtied, %llu "
				      "written back, %llu dropped, %llu dirty now (limit %llu); "
				      "inode writebacks: %llu by changes and fsync, %llu by the "
				      "flusher", (unsigned long long)wb.pages_dirtied,
				      (unsigned long long)wb.pages_written,
				      (unsigned long long)wb.pages_dropped,
				      (unsigned long long)wb.dirty_pages,
				      (unsigned long long)wb.limit_pages,
				      (unsigned long long)wb.wb_sync,
				      (unsigned long long)wb.wb_background);
	}
	f2fs_fuse_log(fs, F2FS_LOG_INFO, "  fsync: %llu node commits for %llu requests, %llu node "
		      "blocks; %llu checkpoint requests merged into another",
		      (unsigned long long)st.fsync_commits, (unsigned long long)st.fsync_requests,
		      (unsigned long long)st.fsync_node_blocks, (unsigned long long)st.sync_merged);
	f2fs_fuse_log(fs, F2FS_LOG_INFO, "  compression: %llu clusters through the codec; "
		      "clusters written: %llu compressed, %llu raw",
		      (unsigned long long)st.compress_runs,
		      (unsigned long long)st.clusters_compressed,
		      (unsigned long long)st.clusters_raw);
	f2fs_fuse_log(fs, F2FS_LOG_INFO, "  %-8s %12s %12s %15s %15s", "size", "reads", "writes",
		      "read bytes", "write bytes");
	for (int b = 0; b < F2FS_IO_BUCKETS; b++)
		f2fs_fuse_log(fs, F2FS_LOG_INFO, "  %-8s %12llu %12llu %15llu %15llu",
			      f2fs_io_bucket_name(b),
			      (unsigned long long)st.read_hist[b],
			      (unsigned long long)st.write_hist[b],
			      (unsigned long long)st.read_hist_bytes[b],
			      (unsigned long long)st.write_hist_bytes[b]);
}
