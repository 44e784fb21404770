/* SPDX-License-Identifier: GPL-2.0 */
/*
 * f2fs-fusectl's shared pieces: reaching a mount's daemon (request.c), the
 * messages, and the commands, one file per area (keys.c: keys and
 * policies; quota.c: quota reports and limits).  Only libc.
 */
#ifndef F2FS_FUSECTL_H
#define F2FS_FUSECTL_H

#include "keyctl_proto.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#define PROG "f2fs-fusectl"
#ifndef F2FS_FUSE_VERSION
#define F2FS_FUSE_VERSION "unknown"
#endif

/* Not errnos: a daemon of an untrusted user (untrusted_uid says who); no f2fs-fuse. */
#define ERR_UNTRUSTED 100000
#define ERR_NOT_F2FS_FUSE 100001

/* How to reach the daemon, and whom to trust with a key (the global options). */
struct fusectl_opts {
	bool force_socket;
	const char *socket_path;
	bool have_trust_uid;
	uid_t trust_uid;
	unsigned long untrusted_uid;	/* the daemon's uid, for ERR_UNTRUSTED */
};
extern struct fusectl_opts fusectl;

void wipe(void *p, size_t len);
void usage(FILE *out);
/* Print "f2fs-fusectl: error: ..."; returns EXIT_FAILURE. */
int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
const char *errmsg(int err);
void to_hex(const uint8_t *b, size_t n, char *out);
/* A command that takes no options was given one: false, after saying so. */
bool no_extra_options(int argc, char *argv[]);
/*
 * Send request op (arg, argsz in and out) for path (a file of the mount or
 * the mount point; dir: open it as a directory) as ioctl cmd, or over the
 * control socket.  0 or a negative errno (or -ERR_*).
 */
int request(const char *path, bool dir, unsigned long cmd, uint32_t op, void *arg,
	    size_t argsz);
/* A fixed-size ioctl that carries no secret (the reports) on fd, if it may be FUSE. */
int request_fd(int fd, unsigned long cmd, void *arg);

int cmd_add_key(int argc, char *argv[]);
int cmd_remove_key(int argc, char *argv[]);
int cmd_key_status(int argc, char *argv[]);
int cmd_get_policy(int argc, char *argv[]);
int cmd_set_policy(int argc, char *argv[]);
int cmd_quota(int argc, char *argv[]);
/* fusectl_reports.c */
int cmd_extents(int argc, char *argv[]);
int cmd_status(int argc, char *argv[]);
/* Could fd be on a FUSE mount? (false: surely not; our ioctl numbers stay away) */
bool maybe_fuse(int fd);
/* Extent precache and cache drops (fusectl_cache.c). */
int cmd_precache(int argc, char *argv[]);
int cmd_drop_caches(int argc, char *argv[]);
/* fs-verity enable and measure (fusectl_verity.c). */
int cmd_verity(int argc, char *argv[]);

#endif
