// SPDX-License-Identifier: GPL-2.0
/*
 * f2fs-fuse's command line: its own -o options (what they set, their
 * checks), the mount options it adds, --help and --version.
 */
#include "options.h"
#include "keyctl.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
	KEY_RO,
	KEY_RW,
	KEY_UID,
	KEY_GID,
	KEY_UMASK,
	KEY_FSNAME,
	KEY_SUBTYPE,
	KEY_DIRECT,
	KEY_DISCARD,
	KEY_CACHE_SIZE,
	KEY_NORECOVERY,
	KEY_CHECKPOINT_INTERVAL,
	KEY_READ_AHEAD,
	KEY_FSYNC_CHECKPOINT,
	KEY_IO_STATS,
	KEY_KEY_FILE,
	KEY_V1_KEY_FILE,
	KEY_KEYCTL_SOCKET,
	KEY_ALLOW_OTHER,
	KEY_ALLOW_ROOT,
	KEY_NOATIME,
	KEY_ATIME,
	KEY_RELATIME,
	KEY_STRICTATIME,
	KEY_NODIRATIME,
	KEY_DIRATIME,
	KEY_USRQUOTA,
	KEY_GRPQUOTA,
	KEY_PRJQUOTA,
	KEY_NOQUOTA,
	KEY_NODE_RA,
	KEY_NODE_RA_DEPTH,
	KEY_BUSY_POLL,
	KEY_COMPRESS_THREADS,
	KEY_EXTENT_CACHE_SIZE,
	KEY_DCACHE_SIZE,
	KEY_READDIRPLUS,
	KEY_PRECACHE,
	KEY_PRECACHE_N,
	KEY_SERIALIZE_IO,
	KEY_MIN_SEQ_BLOCKS,
	KEY_WRITEBACK,
	KEY_NOWRITEBACK,
	KEY_DIRTY_BYTES,
	KEY_DIRTY_EXPIRE,
};

static const struct fuse_opt cli_opts[] = {
	FUSE_OPT_KEY("ro", KEY_RO),
	FUSE_OPT_KEY("rw", KEY_RW),
	FUSE_OPT_KEY("uid=", KEY_UID),
	FUSE_OPT_KEY("gid=", KEY_GID),
	FUSE_OPT_KEY("umask=", KEY_UMASK),
	FUSE_OPT_KEY("fsname=", KEY_FSNAME),
	FUSE_OPT_KEY("subtype=", KEY_SUBTYPE),
	FUSE_OPT_KEY("direct", KEY_DIRECT),
	FUSE_OPT_KEY("discard", KEY_DISCARD),
	FUSE_OPT_KEY("cache_size=", KEY_CACHE_SIZE),
	FUSE_OPT_KEY("norecovery", KEY_NORECOVERY),
	FUSE_OPT_KEY("checkpoint_interval=", KEY_CHECKPOINT_INTERVAL),
	FUSE_OPT_KEY("read_ahead_kb=", KEY_READ_AHEAD),
	FUSE_OPT_KEY("fsync_checkpoint", KEY_FSYNC_CHECKPOINT),
	/* the kernel's name for it: fsync checkpoints (CP_FASTBOOT_MODE) */
	FUSE_OPT_KEY("fastboot", KEY_FSYNC_CHECKPOINT),
	FUSE_OPT_KEY("io_stats", KEY_IO_STATS),
	FUSE_OPT_KEY("node_ra=", KEY_NODE_RA),
	FUSE_OPT_KEY("node_ra_depth=", KEY_NODE_RA_DEPTH),
	FUSE_OPT_KEY("busy_poll=", KEY_BUSY_POLL),
	FUSE_OPT_KEY("compress_threads=", KEY_COMPRESS_THREADS),
	FUSE_OPT_KEY("extent_cache_size=", KEY_EXTENT_CACHE_SIZE),
	FUSE_OPT_KEY("dcache_size=", KEY_DCACHE_SIZE),
	FUSE_OPT_KEY("precache_extents", KEY_PRECACHE),
	FUSE_OPT_KEY("precache_extents=", KEY_PRECACHE_N),
	FUSE_OPT_KEY("serialize_io=", KEY_SERIALIZE_IO),
	FUSE_OPT_KEY("readdirplus=", KEY_READDIRPLUS),
	FUSE_OPT_KEY("min_seq_blocks=", KEY_MIN_SEQ_BLOCKS),
	FUSE_OPT_KEY("writeback", KEY_WRITEBACK),
	FUSE_OPT_KEY("nowriteback", KEY_NOWRITEBACK),
	FUSE_OPT_KEY("dirty_bytes=", KEY_DIRTY_BYTES),
	FUSE_OPT_KEY("dirty_expire_ms=", KEY_DIRTY_EXPIRE),
	FUSE_OPT_KEY("key_file=", KEY_KEY_FILE),
	FUSE_OPT_KEY("v1_key_file=", KEY_V1_KEY_FILE),
	FUSE_OPT_KEY("keyctl_socket=", KEY_KEYCTL_SOCKET),
	/* Noted for the key socket's access rule, then passed on to libfuse. */
	FUSE_OPT_KEY("allow_other", KEY_ALLOW_OTHER),
	FUSE_OPT_KEY("allow_root", KEY_ALLOW_ROOT),
	/*
	 * Options mount(8) and fstab may hand a helper that mean nothing to
	 * FUSE; libfuse would reject them as unknown.
	 */
	FUSE_OPT_KEY("defaults", FUSE_OPT_KEY_DISCARD),
	FUSE_OPT_KEY("auto", FUSE_OPT_KEY_DISCARD),
	FUSE_OPT_KEY("noauto", FUSE_OPT_KEY_DISCARD),
	FUSE_OPT_KEY("user", FUSE_OPT_KEY_DISCARD),
	FUSE_OPT_KEY("nouser", FUSE_OPT_KEY_DISCARD),
	FUSE_OPT_KEY("users", FUSE_OPT_KEY_DISCARD),
	FUSE_OPT_KEY("owner", FUSE_OPT_KEY_DISCARD),
	FUSE_OPT_KEY("group", FUSE_OPT_KEY_DISCARD),
	FUSE_OPT_KEY("_netdev", FUSE_OPT_KEY_DISCARD),
	FUSE_OPT_KEY("nofail", FUSE_OPT_KEY_DISCARD),
	FUSE_OPT_KEY("comment=", FUSE_OPT_KEY_DISCARD),
	FUSE_OPT_KEY("silent", FUSE_OPT_KEY_DISCARD),
	FUSE_OPT_KEY("loud", FUSE_OPT_KEY_DISCARD),
	FUSE_OPT_KEY("mand", FUSE_OPT_KEY_DISCARD),
	FUSE_OPT_KEY("nomand", FUSE_OPT_KEY_DISCARD),
	/*
	 * Access times: the kernel leaves them to FUSE servers, so the
	 * daemon applies these; the last one given counts, as for mount(8).
	 */
	FUSE_OPT_KEY("noatime", KEY_NOATIME),
	FUSE_OPT_KEY("atime", KEY_ATIME),
	FUSE_OPT_KEY("relatime", KEY_RELATIME),
	FUSE_OPT_KEY("nostrictatime", KEY_RELATIME),
	FUSE_OPT_KEY("strictatime", KEY_STRICTATIME),
	FUSE_OPT_KEY("norelatime", KEY_STRICTATIME),
	FUSE_OPT_KEY("nodiratime", KEY_NODIRATIME),
	FUSE_OPT_KEY("diratime", KEY_DIRATIME),
	/* f2fs's quota options: "quota" is usrquota there */
	FUSE_OPT_KEY("quota", KEY_USRQUOTA),
	FUSE_OPT_KEY("usrquota", KEY_USRQUOTA),
	FUSE_OPT_KEY("grpquota", KEY_GRPQUOTA),
	FUSE_OPT_KEY("prjquota", KEY_PRJQUOTA),
	FUSE_OPT_KEY("noquota", KEY_NOQUOTA),
	/* Generic kernel flags libfuse does not know and that change nothing here. */
	FUSE_OPT_KEY("lazytime", FUSE_OPT_KEY_DISCARD),
	FUSE_OPT_KEY("nolazytime", FUSE_OPT_KEY_DISCARD),
	FUSE_OPT_KEY("iversion", FUSE_OPT_KEY_DISCARD),
	FUSE_OPT_KEY("noiversion", FUSE_OPT_KEY_DISCARD),
	FUSE_OPT_END
};

static const char *opt_value(const char *arg)
{
	const char *eq = strchr(arg, '=');

	return eq ? eq + 1 : "";
}

static int parse_ulong(const char *s, int base, unsigned long max, unsigned long *out)
{
	char *end;
	unsigned long v;

	if (!*s || *s == '-' || *s == '+')
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, base);
	if (errno || *end || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

/* Bytes with an optional K, M or G (binary) suffix. */
static int parse_size(const char *s, size_t *out)
{
	unsigned long long v;
	unsigned int shift = 0;
	char *end;

	if (!*s || *s == '-' || *s == '+')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno || end == s)
		return -EINVAL;
	switch (*end) {
	case 'k': case 'K': shift = 10; end++; break;
	case 'm': case 'M': shift = 20; end++; break;
	case 'g': case 'G': shift = 30; end++; break;
	default: break;
	}
	if (*end || v > (unsigned long long)SIZE_MAX >> shift)
		return -EINVAL;
	*out = (size_t)(v << shift);
	return 0;
}

static int bad_value(const char *arg)
{
	fprintf(stderr, PROG ": invalid option value: %s\n", arg);
	return -1;
}

static int cli_proc(void *data, const char *arg, int key, struct fuse_args *outargs)
{
	struct f2fs_fuse_cli *c = data;
	struct f2fs_fuse *fs = c->fs;
	unsigned long v;

	switch (key) {
	case FUSE_OPT_KEY_NONOPT:
		/* The image is ours; the mount point is left for fuse_parse_cmdline. */
		if (c->nonopts++ == 0) {
			c->image = arg;
			return 0;
		}
		return 1;
	case FUSE_OPT_KEY_OPT:
		/* x-* options are for userspace tools such as systemd. */
		if (strncmp(arg, "x-", 2) == 0)
			return 0;
		if (c->mopts) {
			char why[160];
			int r = f2fs_parse_compress_option(c->mopts, arg, why, sizeof(why));

			if (r < 0) {
				fprintf(stderr, PROG ": %s\n", why);
				return -1;
			}
			if (r > 0)
				return 0;
		}
		return 1;
	case KEY_RO:
		c->ro = true;
		return 1;	/* also a kernel mount flag */
	case KEY_RW:
		c->ro = false;
		return 1;
	case KEY_UID:
		if (parse_ulong(opt_value(arg), 10, UINT32_MAX - 1, &v))
			return bad_value(arg);
		fs->force_uid = true;
		fs->uid = (uid_t)v;
		return 0;
	case KEY_GID:
		if (parse_ulong(opt_value(arg), 10, UINT32_MAX - 1, &v))
			return bad_value(arg);
		fs->force_gid = true;
		fs->gid = (gid_t)v;
		return 0;
	case KEY_UMASK:
		if (parse_ulong(opt_value(arg), 8, 07777, &v))
			return bad_value(arg);
		fs->umask = (mode_t)v;
		return 0;
	case KEY_FSNAME:
		c->have_fsname = true;
		return 1;
	case KEY_SUBTYPE:
		c->have_subtype = true;
		return 1;
	case KEY_DIRECT:
		c->direct = true;
		return 0;
	case KEY_DISCARD:
		c->discard = true;
		return 0;
	case KEY_CACHE_SIZE:
		if (parse_size(opt_value(arg), &c->cache_size))
			return bad_value(arg);
		return 0;
	case KEY_NORECOVERY:
		c->norecovery = true;
		return 0;
	case KEY_CHECKPOINT_INTERVAL:
		/* 0 would mean the core's default; a day is plenty. */
		if (parse_ulong(opt_value(arg), 10, 86400, &v) || v == 0)
			return bad_value(arg);
		c->checkpoint_interval = (unsigned int)v;
		return 0;
	case KEY_READ_AHEAD:
		/* the kernel's max_pages limit (256 pages) caps a request anyway */
		if (parse_ulong(opt_value(arg), 10, 1024, &v))
			return bad_value(arg);
		c->read_ahead_kb = (unsigned int)v;
		c->have_read_ahead = true;
		return 0;
	case KEY_FSYNC_CHECKPOINT:
		c->fsync_checkpoint = true;
		return 0;
	case KEY_IO_STATS:
		c->io_stats = true;
		return 0;
	case KEY_NODE_RA:
		/* at most the children of one indirect node */
		if (parse_ulong(opt_value(arg), 10, 1018, &v))
			return bad_value(arg);
		c->node_ra = (uint32_t)v;
		c->no_node_ra = v == 0;
		return 0;
	case KEY_NODE_RA_DEPTH:
		if (parse_ulong(opt_value(arg), 10, 32, &v) || v == 0)
			return bad_value(arg);
		c->node_ra_depth = (uint32_t)v;
		return 0;
	case KEY_BUSY_POLL:
		if (parse_ulong(opt_value(arg), 10, 1000, &v))
			return bad_value(arg);
		c->busy_poll = (uint32_t)v;
		c->have_busy_poll = true;
		return 0;
	case KEY_COMPRESS_THREADS:
		if (parse_ulong(opt_value(arg), 10, 4, &v) || v == 0)
			return bad_value(arg);
		c->compress_threads = (uint32_t)v;
		return 0;
	case KEY_EXTENT_CACHE_SIZE:
		if (parse_size(opt_value(arg), &c->extent_cache_size) || !c->extent_cache_size)
			return bad_value(arg);
		return 0;
	case KEY_DCACHE_SIZE:
		if (parse_size(opt_value(arg), &c->dcache_size))
			return bad_value(arg);
		c->no_dcache = c->dcache_size == 0;
		return 0;
	case KEY_PRECACHE:
		fs->precache_open = true;
		fs->precache_min_nodes = F2FS_FUSE_PRECACHE_MIN_NODES;
		return 0;
	case KEY_PRECACHE_N:
		if (parse_ulong(opt_value(arg), 10, UINT32_MAX, &v))
			return bad_value(arg);
		fs->precache_open = true;
		fs->precache_min_nodes = v;
		return 0;
	case KEY_READDIRPLUS: {
		static const char *const modes[] = {
			[F2FS_FUSE_RDPLUS_ADAPTIVE] = "adaptive", [F2FS_FUSE_RDPLUS_ALWAYS] = "always",
			[F2FS_FUSE_RDPLUS_AUTO] = "auto", [F2FS_FUSE_RDPLUS_NEVER] = "never",
		};
		const char *m = opt_value(arg);

		for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
			if (!strcmp(m, modes[i])) {
				fs->readdirplus = i;
				return 0;
			}
		}
		return bad_value(arg);
	}
	case KEY_SERIALIZE_IO: {
		static const char *const modes[] = {
			[F2FS_SERIALIZE_AUTO] = "auto", [F2FS_SERIALIZE_NEVER] = "never",
			[F2FS_SERIALIZE_ALWAYS] = "always", [F2FS_SERIALIZE_ALLOC] = "alloc",
		};
		const char *m = opt_value(arg);

		for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
			if (!strcmp(m, modes[i])) {
				c->serialize_io = (enum f2fs_serialize_io)i;
				return 0;
			}
		}
		return bad_value(arg);
	}
	case KEY_MIN_SEQ_BLOCKS:
		if (parse_ulong(opt_value(arg), 10, UINT32_MAX, &v) || v == 0)
			return bad_value(arg);
		c->min_seq_blocks = (uint32_t)v;
		return 0;
	case KEY_WRITEBACK:
	case KEY_NOWRITEBACK:
		c->writeback = key == KEY_WRITEBACK;
		return 0;
	case KEY_DIRTY_BYTES:
		if (parse_size(opt_value(arg), &c->dirty_bytes) || c->dirty_bytes < (1u << 20))
			return bad_value(arg);
		return 0;
	case KEY_DIRTY_EXPIRE:
		if (parse_ulong(opt_value(arg), 10, 3600000, &v) || v < 10)
			return bad_value(arg);
		fs->dirty_expire_ms = (unsigned int)v;
		return 0;
	case KEY_KEY_FILE:
		return f2fs_keyctl_opt_key_file(fs, opt_value(arg)) ? -1 : 0;
	case KEY_V1_KEY_FILE:
		return f2fs_keyctl_opt_v1_key_file(fs, opt_value(arg)) ? -1 : 0;
	case KEY_KEYCTL_SOCKET:
		return f2fs_keyctl_opt_socket(fs, opt_value(arg)) ? -1 : 0;
	case KEY_ALLOW_OTHER:
	case KEY_ALLOW_ROOT:
		f2fs_keyctl_opt_allow_other(fs, key == KEY_ALLOW_ROOT);
		return 1;
	case KEY_NOATIME:
		c->atime = F2FS_ATIME_NONE;
		return 1;	/* also a kernel mount flag, shown in /proc/mounts */
	case KEY_ATIME:
		c->atime = F2FS_ATIME_RELATIME;
		return 1;
	case KEY_RELATIME:
		c->atime = F2FS_ATIME_RELATIME;
		return 0;
	case KEY_STRICTATIME:
		c->atime = F2FS_ATIME_STRICT;
		return 0;
	case KEY_NODIRATIME:
	case KEY_DIRATIME:
		c->nodiratime = key == KEY_NODIRATIME;
		return 0;
	case KEY_USRQUOTA:
	case KEY_GRPQUOTA:
	case KEY_PRJQUOTA:
		c->quota_limits |= 1u << (key - KEY_USRQUOTA);
		return 0;
	case KEY_NOQUOTA:
		c->quota_limits = 0;
		return 0;
	default:
		return 1;
	}
}

void f2fs_fuse_usage(FILE *out)
{
	fprintf(out, "usage: " PROG " [options] IMAGE_OR_DEVICE MOUNTPOINT\n");
}

void f2fs_fuse_help(void)
{
	f2fs_fuse_usage(stdout);
	printf("\nMount an f2fs image file or block device through FUSE.\n\n"
	       "f2fs-fuse options:\n"
	       "    -o ro                  mount read-only\n"
	       "    -o rw                  mount read-write (the default; read-only, with a\n"
	       "                           warning, if the image or device is write-protected)\n"
	       "    -o uid=N               show every file as owned by user N\n"
	       "    -o gid=N               show every file as owned by group N\n"
	       "    -o umask=M             clear the octal permission bits M in every mode\n"
	       "    -o fsname=NAME         source shown in /proc/mounts (default: the image path)\n"
	       "    -o direct              open the image or device with O_DIRECT\n"
	       "    -o discard             discard segments freed by a checkpoint (punch\n"
	       "                           them out of an image file)\n"
	       "    -o cache_size=N[K|M|G] bytes of metadata cache (default: %u MiB)\n"
	       "    -o norecovery          do not roll forward data fsync()ed after the last\n"
	       "                           checkpoint (read-only mounts only)\n"
	       "    -o checkpoint_interval=N  seconds between periodic checkpoints while\n"
	       "                           changes are pending (default: 60)\n"
	       "    -o read_ahead_kb=N     this mount's read-ahead window, up to 1024 KiB\n"
	       "                           (default: 1024 when run as root; 0 leaves the\n"
	       "                           kernel's 128)\n"
	       "    -o fsync_checkpoint    every fsync() commits a checkpoint instead of\n"
	       "                           logging the file for roll-forward recovery\n"
	       "                           (fastboot: the kernel's name for it)\n"
	       "    -o relatime            a read updates the access time if it is not newer\n"
	       "                           than the last change, or a day old (the default)\n"
	       "    -o strictatime         every read updates the access time\n"
	       "    -o noatime             reads leave access times alone\n"
	       "    -o nodiratime          listing a directory leaves its access time alone\n"
	       "    -o usrquota, grpquota, prjquota  enforce that type's quota limits (quota_ino\n"
	       "                           filesystems; usage is always kept); -o quota is\n"
	       "                           usrquota, -o noquota none\n"
	       "    -o node_ra=N           read up to N node blocks ahead, in one batch, when\n"
	       "                           a walk reaches an indirect node cold (default:\n"
	       "                           1018, the whole node; 0: one read per node)\n"
	       "    -o node_ra_depth=N     read-ahead requests in flight, 1 to 32 (default: 8)\n"
	       "    -o busy_poll=US        the thread reading requests polls for US (0 to\n"
	       "                           1000) microseconds before it sleeps (default: 20\n"
	       "                           on two or more CPUs; 0: libfuse's own loops)\n"
	       "    -o compress_threads=N  threads that compress a write's clusters and\n"
	       "                           decompress a read's, 1 to 4 (default: one per CPU)\n"
	       "    -o extent_cache_size=N[K|M|G]  bytes of read extent runs kept for all\n"
	       "                           files (default: 16 MiB)\n"
	       "    -o dcache_size=N[K|M|G]  bytes of name indexes of often looked-up\n"
	       "                           directories (default: 64 MiB; 0: none, every\n"
	       "                           lookup scans the dentry blocks)\n"
	       "    -o readdirplus=MODE    list directories with each entry's attributes:\n"
	       "                           always (default: a stat after a listing costs\n"
	       "                           no round trip), adaptive (while listed entries\n"
	       "                           are being looked up, names alone otherwise),\n"
	       "                           auto (the kernel decides per directory) or\n"
	       "                           never (names only)\n"
	       "    -o precache_extents[=N]  map a regular file into the extent cache when\n"
	       "                           it is opened, if it has more than N direct nodes\n"
	       "                           (default N: 16, a 64 MiB file)\n"
	       "    -o serialize_io=MODE   whose writes allocate and write under one lock,\n"
	       "                           each keeping its blocks one run: auto (the\n"
	       "                           default: encrypted and compressed files, writes\n"
	       "                           of min_seq_blocks or more), always, never, or\n"
	       "                           alloc (auto's, with only the allocation locked)\n"
	       "    -o min_seq_blocks=N    auto serializes writes of N blocks or more\n"
	       "                           (default: the blocks of a section, 512)\n"
	       "    -o writeback           write(2) goes to a page cache of dirty data in the\n"
	       "                           daemon (blocks reserved at once, allocated at\n"
	       "                           writeback: fsync, the dirty limit, the expire,\n"
	       "                           checkpoints, unmount) (default); nowriteback:\n"
	       "                           each write(2) allocated and written at once\n"
	       "    -o dirty_bytes=N[K|M|G]  bound on dirty data (default: 64 MiB)\n"
	       "    -o dirty_expire_ms=N   dirty data older than N ms is written back\n"
	       "                           (default: 1000)\n"
	       "    -o io_stats            print the image I/O counts by request size,\n"
	       "                           checkpoints, cleaning and SSR counts, and the\n"
	       "                           FUSE requests by kind, at unmount (SIGUSR1\n"
	       "                           prints the requests so far at any time)\n"
	       "    -o key_file=PATH       add the raw fscrypt key (16 to 64 bytes) in PATH;\n"
	       "                           may be repeated\n"
	       "    -o v1_key_file=DESCRIPTOR:PATH  the same for a v1 policy key, named by\n"
	       "                           its 16-hex-digit descriptor; may be repeated\n"
	       "    -o keyctl_socket=PATH  where f2fs-fusectl finds this mount without ioctls\n"
	       "                           (default: see f2fs-fusectl(8)); \"none\": no socket\n"
	       "    -o default_permissions always on: the kernel checks permissions\n"
	       "    -o remount[,ro|rw]     change the running mount at MOUNTPOINT (what\n"
	       "                           mount -o remount runs; root only)\n"
	       "\nGeneral options:\n",
	       F2FS_DEFAULT_CACHE_SIZE >> 20);
	fuse_cmdline_help();
	printf("\nFUSE options:\n");
	fuse_lowlevel_help();
}

void f2fs_fuse_version(void)
{
	printf(PROG " " F2FS_FUSE_VERSION "\n");
	printf("FUSE library version %s\n", fuse_pkgversion());
	/* The next line comes partly from a fusermount3 child process. */
	fflush(stdout);
	fuse_lowlevel_version();
}

/* fsname, subtype and default_permissions, put in front of the user's -o. */
int f2fs_fuse_add_mount_opts(struct fuse_args *args, const struct f2fs_fuse_cli *c, const char *fsname)
{
	char *opts = NULL;
	int err = 0;

	/*
	 * We implement no access checks of our own, so the kernel must make
	 * them; otherwise allow_other would expose every file to everyone.
	 */
	err |= fuse_opt_add_opt(&opts, "default_permissions");
	if (!c->have_subtype)
		err |= fuse_opt_add_opt(&opts, "subtype=" PROG);
	if (!c->have_fsname) {
		char *fsopt = NULL;

		/* Commas and backslashes in the path must be escaped. */
		err |= fuse_opt_add_opt_escaped(&fsopt, fsname);
		if (!err) {
			size_t n = strlen(fsopt) + sizeof("fsname=");
			char *s = malloc(n);

			if (s) {
				snprintf(s, n, "fsname=%s", fsopt);
				err |= fuse_opt_add_opt(&opts, s);
				free(s);
			} else {
				err = -1;
			}
		}
		free(fsopt);
	}
	if (!err)
		err |= fuse_opt_insert_arg(args, 1, "-o");
	if (!err)
		err |= fuse_opt_insert_arg(args, 2, opts);
	free(opts);
	return err ? -1 : 0;
}

/* Our -o options into c and fs; the rest stays in args for libfuse. */
int f2fs_fuse_parse_opts(struct fuse_args *args, struct f2fs_fuse_cli *c)
{
	return fuse_opt_parse(args, c, cli_opts, cli_proc);
}
