// SPDX-License-Identifier: GPL-2.0
/*
 * f2fs-fusectl: fscrypt keys and policies on an f2fs-fuse mount, with the
 * subcommands and output of fscryptctl.
 *
 *   f2fs-fusectl add_key [--key-file=FILE] [--descriptor=DESC] MOUNTPOINT...
 *   f2fs-fusectl remove_key [--all-users] KEY MOUNTPOINT
 *   f2fs-fusectl key_status KEY MOUNTPOINT
 *   f2fs-fusectl get_policy PATH
 *   f2fs-fusectl set_policy [OPTIONS] KEY DIRECTORY
 *   f2fs-fusectl extents FILE...
 *   f2fs-fusectl status [-i SECONDS] [-c COUNT] MOUNTPOINT
 *
 * KEY is a v2 key identifier (32 hex digits) or a v1 key descriptor (16).
 *
 * Requests go as F2FS_IOC_* ioctls (fuse/keyctl_proto.h) and, where the
 * mount has no ioctls (FUSE-T) or --socket is given, over the mount's
 * control socket (fusectl_request.c); each area's commands have a file
 * (fusectl_keys.c: keys and policies; fusectl_reports.c: extents and status).  A key goes only to an f2fs-fuse daemon run by root,
 * the caller or the user named with --trust-uid (docs/security.md).
 * Only libc.
 */
#include "fusectl.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

struct fusectl_opts fusectl;

void wipe(void *p, size_t len)
{
#if defined(__GLIBC__) || defined(__FreeBSD__)
	explicit_bzero(p, len);
#else
	volatile uint8_t *v = p;

	while (len--)
		*v++ = 0;
#endif
}

void usage(FILE *out)
{
	fputs("usage: " PROG " [--socket[=PATH]] COMMAND [ARGS]\n"
	      "\n"
	      "Commands:\n"
	      "  " PROG " add_key [--key-file=FILE] [--descriptor=DESCRIPTOR] MOUNTPOINT...\n"
	      "      Add a raw key (16 to 64 bytes, read from standard input or FILE) to the\n"
	      "      mount(s) and print its key identifier; with --descriptor (16 hex\n"
	      "      digits), add it as a v1 policy key under that descriptor (root or the\n"
	      "      user who mounted only).\n"
	      "  " PROG " remove_key [--all-users] KEY MOUNTPOINT\n"
	      "      Remove your claim to a key (--all-users: every claim; root only).\n"
	      "  " PROG " key_status KEY MOUNTPOINT\n"
	      "      Print whether the key is present.\n"
	      "  " PROG " get_policy PATH\n"
	      "      Print the encryption policy of a file or directory.\n"
	      "  " PROG " set_policy [OPTION...] KEY DIRECTORY\n"
	      "      Encrypt an empty directory with the key: a v2 policy for a key\n"
	      "      identifier, a v1 policy for a key descriptor.  Options:\n"
	      "        --contents=AES-256-XTS|AES-128-CBC|Adiantum      (default AES-256-XTS)\n"
	      "        --filenames=AES-256-CTS|AES-128-CTS|AES-256-HCTR2|Adiantum\n"
	      "                                                         (default AES-256-CTS)\n"
	      "        --padding=4|8|16|32                              (default 32)\n"
	      "        --direct-key  --iv-ino-lblk-64  --iv-ino-lblk-32\n"
	      "        --data-unit-size=512|1024|2048|4096              (default: the block)\n"
	      "      (v1 policies take neither --iv-ino-lblk-* nor --data-unit-size)\n"
	      "  " PROG " precache [-t] FILE...\n"
	      "      Map each file into the mount's extent cache (F2FS_IOC_PRECACHE_EXTENTS);\n"
	      "      -t prints how long each took.\n"
	      "  " PROG " drop_caches MOUNTPOINT\n"
	      "      Make the daemon forget its clean node and metadata blocks and extent\n"
	      "      runs, for cold measurements (the mount's owner or root).\n"
	      "\n"
	      "  " PROG " quota [-u|-g|-p] MOUNTPOINT\n"
	      "      Report the usage and limits of every user (-u, the default), group\n"
	      "      (-g) or project (-p) with any, as repquota(8); space in KiB.\n"
	      "  " PROG " quota [-u|-g|-p] --set ID BSOFT BHARD ISOFT IHARD MOUNTPOINT\n"
	      "      Set an id's limits, as setquota(8): space in KiB, inodes; 0 is none.\n"
	      "  " PROG " quota [-u|-g|-p] --grace BLOCK_SECONDS INODE_SECONDS MOUNTPOINT\n"
	      "      Set the grace periods of soft limits.\n"
	      "  " PROG " verity enable [--hash-alg=sha256|sha512] [--block-size=N]\n"
	      "                       [--salt=HEX] FILE...\n"
	      "      Build the file's Merkle tree and make it a read-only verity file\n"
	      "      (FS_IOC_ENABLE_VERITY; defaults: sha256, 4096-byte blocks, no salt).\n"
	      "  " PROG " verity measure FILE...\n"
	      "      Print a verity file's digest as `fsverity measure` does.\n"
	      "  " PROG " extents FILE...\n"
	      "      Print the file's physical extents, as filefrag -v does (FIEMAP does\n"
	      "      not cross FUSE).\n"
	      "  " PROG " status [-i SECONDS] [-c COUNT] MOUNTPOINT\n"
	      "      Print the mount's state as /sys/kernel/debug/f2fs/status does: segments\n"
	      "      by log and state, utilization, checkpoints, cleaning, caches, dirty\n"
	      "      data (-o writeback), device I/O by request size; -i repeats it every\n"
	      "      SECONDS (COUNT times).\n"
	      "\n"
	      "KEY is a key identifier (32 hex digits) or a v1 key descriptor (16).\n"
	      "\n"
	      "Options for every command:\n"
	      "  --socket         talk to the mount's control socket, not through ioctls\n"
	      "  --socket=PATH    ... at PATH (as given to -o keyctl_socket=)\n"
	      "  --trust-uid=UID  also talk to a daemon run by UID (default: only root's\n"
	      "                   and your own)\n"
	      "  -h, --help       this help\n"
	      "  -v, --version    the version\n", out);
}

int fail(const char *fmt, ...)
{
	va_list ap;

	fputs(PROG ": error: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return EXIT_FAILURE;
}

const char *errmsg(int err)
{
	switch (err) {
	case ENOTTY:
	case ENOSYS:
		return "not an f2fs-fuse mount (or one without key support)";
#ifdef ENOKEY
	case ENOKEY:
		return "key not present (add it first)";
#endif
	case EEXIST:
		return "the directory already has a different encryption policy";
	case ENOTEMPTY:
		return "the directory is not empty";
	case ENODATA:
		return "file or directory not encrypted";
	case ERR_UNTRUSTED: {
		static char msg[160];

		snprintf(msg, sizeof(msg), "it is served by uid %lu, neither root "
			 "nor you (add --trust-uid=%lu if that is intended)", fusectl.untrusted_uid,
			 fusectl.untrusted_uid);
		return msg;
	}
	case ERR_NOT_F2FS_FUSE:
		return "not an f2fs-fuse mount (the daemon does not answer as f2fs-fuse)";
	case EXDEV:
		return "the file is not on the mount the control socket serves";
	default:
		return strerror(err);
	}
}

void to_hex(const uint8_t *b, size_t n, char *out)
{
	static const char hex[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		out[2 * i] = hex[b[i] >> 4];
		out[2 * i + 1] = hex[b[i] & 15];
	}
	out[2 * n] = '\0';
}

bool no_extra_options(int argc, char *argv[])
{
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			break;
		if (argv[i][0] == '-' && argv[i][1]) {
			fail("unrecognized option '%s'", argv[i]);
			return false;
		}
	}
	return true;
}

int main(int argc, char *argv[])
{
	static const struct {
		const char *name;
		int (*fn)(int, char **);
	} cmds[] = {
		{ "add_key", cmd_add_key },
		{ "remove_key", cmd_remove_key },
		{ "key_status", cmd_key_status },
		{ "get_policy", cmd_get_policy },
		{ "set_policy", cmd_set_policy },
		{ "quota", cmd_quota },
		{ "extents", cmd_extents },
		{ "status", cmd_status },
		{ "precache", cmd_precache },
		{ "drop_caches", cmd_drop_caches },
		{ "verity", cmd_verity },
	};
	int i, j;

	/* Global options: anywhere; taken out before the command sees argv. */
	for (i = j = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0) {
			while (i < argc)
				argv[j++] = argv[i++];
			break;
		}
		if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
			usage(stdout);
			return EXIT_SUCCESS;
		}
		if (strcmp(argv[i], "-v") == 0 || strcmp(argv[i], "--version") == 0) {
			puts(PROG " " F2FS_FUSE_VERSION);
			return EXIT_SUCCESS;
		}
		if (strcmp(argv[i], "--socket") == 0) {
			fusectl.force_socket = true;
		} else if (strncmp(argv[i], "--socket=", 9) == 0) {
			fusectl.force_socket = true;
			fusectl.socket_path = argv[i] + 9;
		} else if (strncmp(argv[i], "--trust-uid=", 12) == 0) {
			char *end;

			errno = 0;
			fusectl.trust_uid = (uid_t)strtoul(argv[i] + 12, &end, 10);
			if (errno || end == argv[i] + 12 || *end)
				return fail("invalid --trust-uid: %s (a numeric uid)", argv[i] + 12);
			fusectl.have_trust_uid = true;
		} else {
			argv[j++] = argv[i];
		}
	}
	argc = j;
	argv[argc] = NULL;
	if (argc < 2) {
		fail("no command specified");
		usage(stderr);
		return EXIT_FAILURE;
	}
	for (size_t k = 0; k < sizeof(cmds) / sizeof(cmds[0]); k++) {
		if (strcmp(argv[1], cmds[k].name) == 0) {
			/* The command parses its own options from argv[1]. */
			optind = 1;
			return cmds[k].fn(argc - 1, argv + 1);
		}
	}
	fail("invalid command: %s", argv[1]);
	usage(stderr);
	return EXIT_FAILURE;
}
