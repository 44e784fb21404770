// SPDX-License-Identifier: GPL-2.0
/*
 * Messages and corruption reports: the ground floor of the core.  Every
 * other file reports through here, so it calls nothing of theirs; it only
 * reads the mount's log options and sets the need-fsck flag.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "f2fs.h"

static void vmsg(const struct f2fs_sb *sb, enum f2fs_log_level lvl, const char *fmt, va_list ap)
	F2FS_PRINTF(3, 0);
static void vmsg(const struct f2fs_sb *sb, enum f2fs_log_level lvl, const char *fmt, va_list ap)
{
	static const char *const prefix[] = { "error", "warning", "info", "debug" };
	char buf[512];

	if (sb && (int)lvl > sb->opts.log_level)
		return;
	vsnprintf(buf, sizeof(buf), fmt, ap);
	if (sb && sb->opts.log)
		sb->opts.log(sb->opts.log_arg, lvl, buf);
	else
		fprintf(stderr, "f2fs-fuse: %s: %s\n", prefix[lvl], buf);
}

void f2fs_msg(const struct f2fs_sb *sb, enum f2fs_log_level lvl, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(sb, lvl, fmt, ap);
	va_end(ap);
}

int f2fs_corrupted(struct f2fs_sb *sb, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(sb, F2FS_LOG_ERR, fmt, ap);
	va_end(ap);
	if (sb)
		atomic_store(&sb->need_fsck, true);
	return -EUCLEAN;
}

bool f2fs_note_dev_errors(struct f2fs_sb *sb)
{
	f2fs_stop_checkpoint(sb, -EIO, "a metadata read or write");
	return true;
}

int f2fs_stop_checkpoint(struct f2fs_sb *sb, int err, const char *what)
{
	if (!atomic_exchange(&sb->cp_error, true))
		f2fs_msg(sb, F2FS_LOG_ERR,
			 "%s failed: %s; no checkpoint is written after it (the file system is "
			 "read-only until it is mounted again)", what, strerror(-err));
	return err;
}
