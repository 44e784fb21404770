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
 *
 * KEY is a v2 key identifier (32 hex digits) or a v1 key descriptor (16).
 *
 * Requests go as F2FS_IOC_* ioctls (fuse/keyctl_proto.h) and, where the
 * mount has no ioctls (FUSE-T) or --socket is given, over the mount's
 * control socket.  A key goes only to an f2fs-fuse daemon run by root,
 * the caller or the user named with --trust-uid (docs/security.md).
 * Only libc.
 */
#include "keyctl_proto.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/vfs.h>
#define FUSE_SUPER_MAGIC 0x65735546
#else
#include <sys/mount.h>
#include <sys/param.h>
#endif

#define PROG "f2fs-fusectl"
#ifndef MSG_NOSIGNAL
#define MSG_NOSIGNAL 0
#endif
#ifndef F2FS_FUSE_VERSION
#define F2FS_FUSE_VERSION "unknown"
#endif

/* Mode and flag numbers as in <linux/fscrypt.h> (also on macOS, without it). */
enum {
	MODE_AES_256_XTS = 1,
	MODE_AES_256_CTS = 4,
	MODE_AES_128_CBC = 5,
	MODE_AES_128_CTS = 6,
	MODE_SM4_XTS = 7,
	MODE_SM4_CTS = 8,
	MODE_ADIANTUM = 9,
	MODE_AES_256_HCTR2 = 10,
};
#define FLAG_PAD_MASK		0x03
#define FLAG_DIRECT_KEY		0x04
#define FLAG_IV_INO_LBLK_64	0x08
#define FLAG_IV_INO_LBLK_32	0x10

static const struct {
	uint8_t mode;
	const char *name;
	bool contents, filenames;	/* settable with --contents / --filenames */
	unsigned int keysize;		/* the least master key the kernel takes for it */
} modes[] = {
	{ MODE_AES_256_XTS, "AES-256-XTS", true, false, 64 },
	{ MODE_AES_256_CTS, "AES-256-CTS", false, true, 32 },
	{ MODE_AES_128_CBC, "AES-128-CBC", true, false, 16 },
	{ MODE_AES_128_CTS, "AES-128-CTS", false, true, 16 },
	{ MODE_SM4_XTS, "SM4-XTS", false, false, 32 },
	{ MODE_SM4_CTS, "SM4-CTS", false, false, 16 },
	{ MODE_ADIANTUM, "Adiantum", true, true, 32 },
	{ MODE_AES_256_HCTR2, "AES-256-HCTR2", false, true, 32 },
};

/* Not errnos: a daemon of an untrusted user (untrusted_uid says who); no f2fs-fuse. */
#define ERR_UNTRUSTED 100000
#define ERR_NOT_F2FS_FUSE 100001

/* Global: how to reach the daemon, and whom to trust with a key. */
static bool force_socket;
static const char *socket_path;
static bool have_trust_uid;
static uid_t trust_uid;
static unsigned long untrusted_uid;

static void wipe(void *p, size_t len)
{
#if defined(__GLIBC__) || defined(__FreeBSD__)
	explicit_bzero(p, len);
#else
	volatile uint8_t *v = p;

	while (len--)
		*v++ = 0;
#endif
}

static void usage(FILE *out)
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

static int fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int fail(const char *fmt, ...)
{
	va_list ap;

	fputs(PROG ": error: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return EXIT_FAILURE;
}

static const char *errmsg(int err)
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
			 "nor you (add --trust-uid=%lu if that is intended)", untrusted_uid,
			 untrusted_uid);
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

static void to_hex(const uint8_t *b, size_t n, char *out)
{
	static const char hex[] = "0123456789abcdef";

	for (size_t i = 0; i < n; i++) {
		out[2 * i] = hex[b[i] >> 4];
		out[2 * i + 1] = hex[b[i] & 15];
	}
	out[2 * n] = '\0';
}

/* A key identifier or descriptor from the command line, with the error message. */
static bool parse_key(const char *s, struct f2fs_keyctl_key_spec *spec)
{
	if (f2fs_keyctl_parse_spec(s, spec))
		return true;
	fail("invalid key identifier: %s (32 hex digits, or 16 for a v1 key descriptor)", s);
	return false;
}

static void spec_hex(const struct f2fs_keyctl_key_spec *spec, char *out)
{
	to_hex(spec->u, spec->type == F2FS_KEYCTL_SPEC_DESCRIPTOR ? F2FS_KEYCTL_DESC_SIZE
								   : F2FS_KEYCTL_ID_SIZE, out);
}

/* ------------------------------------------------------------ transports */

/*
 * The root of the mount holding path: the topmost directory above it
 * on the same device.
 */
static int mount_root(const char *path, char *out, size_t outlen)
{
	char buf[PATH_MAX], up[PATH_MAX + 4];
	struct stat st, pst;

	if (!realpath(path, buf) || stat(buf, &st))
		return -errno;
	if (!S_ISDIR(st.st_mode)) {
		char *slash = strrchr(buf, '/');

		if (slash == buf)
			slash[1] = '\0';
		else if (slash)
			*slash = '\0';
	}
	for (;;) {
		char *slash;

		if (strcmp(buf, "/") == 0)
			break;
		snprintf(up, sizeof(up), "%s/..", buf);
		if (stat(up, &pst))
			return -errno;
		if (pst.st_dev != st.st_dev)
			break;
		slash = strrchr(buf, '/');
		if (slash == buf)
			slash[1] = '\0';
		else
			*slash = '\0';
	}
	if (strlen(buf) >= outlen)
		return -ENAMETOOLONG;
	strcpy(out, buf);
	return 0;
}

/* Whom a key may go to: root, the caller, and the user named with --trust-uid. */
static bool trusted_uid(unsigned long uid)
{
	if (uid == 0 || uid == (unsigned long)getuid() || uid == (unsigned long)geteuid() ||
	    (have_trust_uid && uid == (unsigned long)trust_uid))
		return true;
	untrusted_uid = uid;
	return false;
}

/* Is the process serving a connected socket someone we trust? */
static bool trusted_peer(int fd)
{
	uid_t uid;
#ifdef SO_PEERCRED
	struct ucred cr;
	socklen_t len = sizeof(cr);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) || len != sizeof(cr))
		return false;
	uid = cr.uid;
#else
	gid_t gid;

	if (getpeereid(fd, &uid, &gid))
		return false;
#endif
	return trusted_uid(uid);
}

/* Try each place a daemon may have put its socket (keyctl_proto.h). */
static int connect_socket(const char *path)
{
	char root[PATH_MAX], cand[4][sizeof(((struct sockaddr_un *)0)->sun_path)];
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	int ncand = 0, err, last = ENOENT;
	unsigned long long h;

	if (socket_path) {
		if (strlen(socket_path) >= sizeof(cand[0]))
			return -ENAMETOOLONG;
		strcpy(cand[ncand++], socket_path);
	} else {
		err = mount_root(path, root, sizeof(root));
		if (err)
			return err;
		h = (unsigned long long)f2fs_keyctl_path_hash(root);
		snprintf(cand[ncand++], sizeof(cand[0]), F2FS_KEYCTL_RUN_DIR "/%016llx.sock", h);
		if (xdg && *xdg == '/' &&
		    (size_t)snprintf(cand[ncand], sizeof(cand[0]), "%s/f2fs-fuse/%016llx.sock",
				     xdg, h) < sizeof(cand[0]))
			ncand++;
		snprintf(cand[ncand++], sizeof(cand[0]), "/run/user/%lu/f2fs-fuse/%016llx.sock",
			 (unsigned long)getuid(), h);
		snprintf(cand[ncand++], sizeof(cand[0]), "/tmp/f2fs-fuse-%lu/%016llx.sock",
			 (unsigned long)getuid(), h);
	}
	for (int i = 0; i < ncand; i++) {
		struct sockaddr_un sa = { .sun_family = AF_UNIX };
		int fd = socket(AF_UNIX, SOCK_STREAM, 0);

		if (fd < 0)
			return -errno;
		strcpy(sa.sun_path, cand[i]);
		if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
			/*
			 * Only a daemon of root, of this user or of --trust-uid is
			 * told anything: in /tmp anybody could have made the
			 * directory first, and anybody may listen at a PATH in a
			 * directory they can write to.
			 */
			if (trusted_peer(fd))
				return fd;
			close(fd);
			last = ERR_UNTRUSTED;
			continue;
		}
		/* A socket that exists but refuses us says more than one that is missing. */
		if (errno != ENOENT || last == ENOENT)
			last = errno;
		close(fd);
	}
	return -(last == ENOENT || last == ECONNREFUSED ? ENOTTY : last);
}

/*
 * One request over the socket.  file: our descriptor of path, which the
 * daemon looks up in /proc to find the file of a policy operation; it
 * stays open until the reply is in.
 */
static int via_socket(const char *path, int file, uint32_t op, void *arg, size_t argsz)
{
	struct f2fs_keyctl_msg m;
	int fd, err;

	fd = connect_socket(path);
	if (fd < 0)
		return fd;
	memset(&m, 0, sizeof(m));
	m.magic = F2FS_KEYCTL_MSG_MAGIC;
	m.version = F2FS_KEYCTL_MSG_VERSION;
	m.op = op;
	m.fd = op == F2FS_KEYCTL_OP_GET_POLICY || op == F2FS_KEYCTL_OP_SET_POLICY ? file : -1;
	memcpy(&m.u, arg, argsz);
	err = f2fs_keyctl_io(fd, &m, sizeof(m), true, -1);
	if (!err)
		err = f2fs_keyctl_io(fd, &m, sizeof(m), false, -1);
	close(fd);
	if (!err && (m.magic != F2FS_KEYCTL_MSG_MAGIC || m.op != op))
		err = -EPROTO;
	if (!err && m.error)
		err = -m.error;
	if (!err)
		memcpy(arg, &m.u, argsz);
	wipe(&m, sizeof(m));
	return err;
}

/* Could this be a FUSE mount?  Keeps our ioctl numbers away from other drivers. */
static bool maybe_fuse(int fd)
{
#ifdef __linux__
	struct statfs sf;

	return fstatfs(fd, &sf) != 0 || sf.f_type == FUSE_SUPER_MAGIC;
#else
	return true;
#endif
}

#ifdef __linux__
/*
 * The owner (user_id=) and type of the mount holding fd, from this
 * process's /proc/self/mountinfo: a mount of another mount namespace
 * (reached through /proc/PID/root) is not found there.
 */
static int mount_owner(int fd, unsigned long *owner, char *fstype, size_t len)
{
	char path[64], *line = NULL;
	unsigned long long mnt_id = 0;
	size_t cap = 0;
	int err = -ENOENT;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", fd);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (getline(&line, &cap, f) > 0)
		if (sscanf(line, "mnt_id: %llu", &mnt_id) == 1)
			break;
	fclose(f);
	f = fopen("/proc/self/mountinfo", "re");
	if (!f) {
		free(line);
		return -errno;
	}
	while (getline(&line, &cap, f) > 0) {
		unsigned long long id;
		char *sep = strstr(line, " - "), *opt;
		char type[64];

		if (sscanf(line, "%llu", &id) != 1 || id != mnt_id || !sep)
			continue;
		/* "... - FSTYPE SOURCE SUPER_OPTIONS" */
		if (sscanf(sep + 3, "%63s", type) != 1)
			break;
		snprintf(fstype, len, "%s", type);
		for (opt = strstr(sep, "user_id="); opt; opt = strstr(opt + 1, "user_id=")) {
			if (opt[-1] == ',' || opt[-1] == ' ') {
				*owner = strtoul(opt + 8, NULL, 10);
				err = 0;
				break;
			}
		}
		break;
	}
	free(line);
	fclose(f);
	return err;
}
#endif

/*
 * Before a key goes out through an ioctl: the file must be on a FUSE mount
 * of a user we trust (the kernel reports the mount's user_id=), and the
 * daemon must answer as f2fs-fuse running as that user.  Any user may put
 * a symlink to a FUSE file system of their own where we look.
 */
static int check_daemon(int fd)
{
	struct f2fs_keyctl_hello h;
	unsigned long owner = 0;
#ifdef __linux__
	char fstype[64] = "";
	int err = mount_owner(fd, &owner, fstype, sizeof(fstype));

	if (err)
		return err == -ENOENT ? -ERR_NOT_F2FS_FUSE : err;
	if (strcmp(fstype, "fuse") && strncmp(fstype, "fuse.", 5))
		return -ERR_NOT_F2FS_FUSE;
#else
	struct statfs sf;

	if (fstatfs(fd, &sf))
		return -errno;
	owner = (unsigned long)sf.f_owner;
#endif
	if (!trusted_uid(owner))
		return -ERR_UNTRUSTED;
	memset(&h, 0, sizeof(h));
	if (ioctl(fd, F2FS_IOC_HELLO, &h))
		return errno == ENOTTY || errno == ENOSYS ? -ENOTTY : -ERR_NOT_F2FS_FUSE;
	if (h.magic != F2FS_KEYCTL_HELLO_MAGIC || h.version != F2FS_KEYCTL_MSG_VERSION)
		return -ERR_NOT_F2FS_FUSE;
	if (h.uid != owner)
		return -ERR_NOT_F2FS_FUSE;
	return 0;
}

/*
 * One request: the ioctl on path (a file of the mount), or the socket if
 * the mount takes no ioctls or --socket asks for it.  A negative errno.
 */
static int request(const char *path, bool dir, unsigned long cmd, uint32_t op, void *arg,
		   size_t argsz)
{
	int fd, err;

	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | (dir ? O_DIRECTORY : 0));
	if (fd < 0)
		return -errno;
	if (!force_socket && maybe_fuse(fd)) {
		err = cmd == F2FS_IOC_ADD_KEY ? check_daemon(fd) : 0;
		if (!err)
			err = ioctl(fd, cmd, arg) ? -errno : 0;
		if (err != -ENOTTY && err != -ENOSYS) {
			close(fd);
			return err;
		}
	}
	err = via_socket(path, fd, op, arg, argsz);
	close(fd);
	return err;
}

/* ------------------------------------------------------------ commands */

static bool no_extra_options(int argc, char *argv[])
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

/* A raw key from fd: 16..64 bytes, one more byte means too long. */
static int read_key(int fd, uint8_t *buf, size_t *len)
{
	size_t got = 0;

	while (got <= F2FS_KEYCTL_MAX_KEY) {
		ssize_t n = read(fd, buf + got, F2FS_KEYCTL_MAX_KEY + 1 - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return fail("reading the key: %s", strerror(errno));
		if (n == 0)
			break;
		got += (size_t)n;
	}
	if (got > F2FS_KEYCTL_MAX_KEY)
		return fail("key is too long (a raw key has at most %d bytes)",
			    F2FS_KEYCTL_MAX_KEY);
	if (got < F2FS_KEYCTL_MIN_KEY)
		return fail("key is too short (%zu bytes; a raw key has at least %d)", got,
			    F2FS_KEYCTL_MIN_KEY);
	*len = got;
	return 0;
}

static int cmd_add_key(int argc, char *argv[])
{
	static const struct option opts[] = {
		{ "key-file", required_argument, NULL, 'k' },
		{ "descriptor", required_argument, NULL, 'd' },
		{ NULL, 0, NULL, 0 },
	};
	const char *key_file = NULL;
	struct f2fs_keyctl_add *a;
	struct f2fs_keyctl_key_spec spec = { .type = F2FS_KEYCTL_SPEC_IDENTIFIER };
	char hex[2 * F2FS_KEYCTL_ID_SIZE + 1];
	size_t len = 0;
	int ch, fd = STDIN_FILENO, rc = EXIT_SUCCESS;

	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (ch == 'k') {
			key_file = optarg;
		} else if (ch == 'd') {
			if (!f2fs_keyctl_parse_spec(optarg, &spec) ||
			    spec.type != F2FS_KEYCTL_SPEC_DESCRIPTOR)
				return fail("invalid key descriptor: %s (16 hex digits)", optarg);
		} else {
			usage(stderr);
			return EXIT_FAILURE;
		}
	}
	if (optind >= argc)
		return fail("must specify at least one mountpoint");
	/* No core dump while a key is in memory (copies on the stack included). */
	setrlimit(RLIMIT_CORE, &(struct rlimit){ 0, 0 });
	/* The key lives in a locked page that core dumps leave out. */
	a = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (a == MAP_FAILED)
		return fail("%s", strerror(errno));
	(void)mlock(a, 4096);
#ifdef MADV_DONTDUMP
	(void)madvise(a, 4096, MADV_DONTDUMP);
#endif
	if (key_file) {
		fd = open(key_file, O_RDONLY | O_NOCTTY);
		if (fd < 0) {
			rc = fail("%s: %s", key_file, strerror(errno));
			goto out;
		}
	} else if (isatty(STDIN_FILENO)) {
		fputs(PROG ": reading the raw key from the terminal; use a pipe or "
		      "--key-file\n", stderr);
	}
	memset(a, 0, sizeof(*a));
	rc = read_key(fd, a->raw, &len);
	if (key_file)
		close(fd);
	if (rc)
		goto out;
	for (int i = optind; i < argc; i++) {
		/* A fresh copy per mount, in the same locked page. */
		struct f2fs_keyctl_add *io = a + 1;
		int err;

		*io = *a;
		io->spec = spec;
		io->raw_size = (uint32_t)len;
		err = request(argv[i], false, F2FS_IOC_ADD_KEY, F2FS_KEYCTL_OP_ADD_KEY, io,
			      sizeof(*io));
		if (err == -EACCES && spec.type == F2FS_KEYCTL_SPEC_DESCRIPTOR) {
			rc = fail("adding key to %s: %s (only root or the user who mounted may add "
				  "v1 keys)", argv[i], strerror(EACCES));
		} else if (err == -EEXIST && spec.type == F2FS_KEYCTL_SPEC_DESCRIPTOR) {
			rc = fail("adding key to %s: a different key is present under this "
				  "descriptor (remove it first)", argv[i]);
		} else if (err) {
			rc = fail("adding key to %s: %s", argv[i], errmsg(-err));
		} else {
			spec_hex(&io->spec, hex);
			if (i == optind)
				puts(hex);
		}
		wipe(io, sizeof(*io));
	}
out:
	wipe(a, 4096);
	munmap(a, 4096);
	return rc;
}

static int cmd_remove_key(int argc, char *argv[])
{
	static const struct option opts[] = {
		{ "all-users", no_argument, NULL, 'a' },
		{ NULL, 0, NULL, 0 },
	};
	struct f2fs_keyctl_remove r;
	int ch, err;

	memset(&r, 0, sizeof(r));
	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (ch != 'a') {
			usage(stderr);
			return EXIT_FAILURE;
		}
		r.flags |= F2FS_KEYCTL_REMOVE_ALL_USERS;
	}
	if (argc - optind != 2)
		return fail("must specify a key identifier and a mountpoint");
	if (!parse_key(argv[optind], &r.spec))
		return EXIT_FAILURE;
	err = request(argv[optind + 1], false, F2FS_IOC_REMOVE_KEY, F2FS_KEYCTL_OP_REMOVE_KEY,
		      &r, sizeof(r));
	if (err == -EACCES)
		return fail("removing key: %s (%s)", strerror(EACCES),
			    r.spec.type == F2FS_KEYCTL_SPEC_DESCRIPTOR ?
			    "only root or the user who mounted may remove v1 keys" :
			    "only root or a user who added the key may remove it");
	if (err)
		return fail("removing key: %s", errmsg(-err));
	if (r.status_flags & F2FS_KEYCTL_REMOVAL_OTHER_USERS)
		fprintf(stderr, PROG ": warning: other users still have this key added\n");
	return EXIT_SUCCESS;
}

static int cmd_key_status(int argc, char *argv[])
{
	struct f2fs_keyctl_status s;
	int err;

	if (!no_extra_options(argc, argv))
		return EXIT_FAILURE;
	if (argc != 3)
		return fail("must specify a key identifier and a mountpoint");
	memset(&s, 0, sizeof(s));
	if (!parse_key(argv[1], &s.spec))
		return EXIT_FAILURE;
	err = request(argv[2], false, F2FS_IOC_KEY_STATUS, F2FS_KEYCTL_OP_KEY_STATUS, &s,
		      sizeof(s));
	if (err)
		return fail("getting key status: %s", errmsg(-err));
	/* as fscryptctl: no parentheses for a key without users (v1) */
	if (s.status == F2FS_KEYCTL_STATUS_PRESENT && !s.user_count && !s.status_flags)
		puts("Present");
	else if (s.status == F2FS_KEYCTL_STATUS_PRESENT)
		printf("Present (user_count=%u%s)\n", s.user_count,
		       (s.status_flags & F2FS_KEYCTL_STATUS_FLAG_ADDED_BY_SELF) ?
		       ", added_by_self" : "");
	else if (s.status == F2FS_KEYCTL_STATUS_ABSENT)
		puts("Absent");
	else
		printf("Unknown status (%u)\n", s.status);
	return EXIT_SUCCESS;
}

static const char *mode_name(uint8_t mode)
{
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		if (modes[i].mode == mode)
			return modes[i].name;
	return NULL;
}

static unsigned int mode_keysize(uint8_t mode)
{
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		if (modes[i].mode == mode)
			return modes[i].keysize;
	return 0;
}

static void show_mode(const char *what, uint8_t mode)
{
	const char *name = mode_name(mode);

	if (name)
		printf("\t%s encryption mode: %s\n", what, name);
	else
		printf("\t%s encryption mode: Unknown (%u)\n", what, mode);
}

static void show_flags(uint8_t flags)
{
	printf("\tFlags: PAD_%d", 4 << (flags & FLAG_PAD_MASK));
	if (flags & FLAG_DIRECT_KEY)
		printf(", DIRECT_KEY");
	if (flags & FLAG_IV_INO_LBLK_64)
		printf(", IV_INO_LBLK_64");
	if (flags & FLAG_IV_INO_LBLK_32)
		printf(", IV_INO_LBLK_32");
	flags &= (uint8_t)~(FLAG_PAD_MASK | FLAG_DIRECT_KEY | FLAG_IV_INO_LBLK_64 |
			    FLAG_IV_INO_LBLK_32);
	if (flags)
		printf(", Unknown (%02x)", flags);
	putchar('\n');
}

static int cmd_get_policy(int argc, char *argv[])
{
	struct f2fs_keyctl_policy p;
	char hex[2 * F2FS_KEYCTL_ID_SIZE + 1];
	int err;

	if (!no_extra_options(argc, argv))
		return EXIT_FAILURE;
	if (argc != 2)
		return fail("must specify a single file or directory");
	memset(&p, 0, sizeof(p));
	err = request(argv[1], false, F2FS_IOC_GET_POLICY, F2FS_KEYCTL_OP_GET_POLICY, &p,
		      sizeof(p));
	if (err)
		return fail("getting policy for %s: %s", argv[1], errmsg(-err));
	printf("Encryption policy for %s:\n", argv[1]);
	printf("\tPolicy version: %u\n", p.version);
	if (p.version == 1) {
		to_hex(p.key_spec, 8, hex);
		printf("\tMaster key descriptor: %s\n", hex);
	} else {
		to_hex(p.key_spec, F2FS_KEYCTL_ID_SIZE, hex);
		printf("\tMaster key identifier: %s\n", hex);
	}
	show_mode("Contents", p.contents_mode);
	show_mode("Filenames", p.filenames_mode);
	show_flags(p.flags);
	if (p.log2_data_unit_size)
		printf("\tData unit size: %u\n", 1u << p.log2_data_unit_size);
	return EXIT_SUCCESS;
}

static int parse_mode(const char *s, bool contents, uint8_t *mode)
{
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		if (strcasecmp(s, modes[i].name) == 0 &&
		    (contents ? modes[i].contents : modes[i].filenames)) {
			*mode = modes[i].mode;
			return 0;
		}
	}
	return -1;
}

static int cmd_set_policy(int argc, char *argv[])
{
	enum { OPT_CONTENTS = 1, OPT_FILENAMES, OPT_PADDING, OPT_DIRECT, OPT_LBLK64, OPT_LBLK32, OPT_DUS };
	static const struct option opts[] = {
		{ "contents", required_argument, NULL, OPT_CONTENTS },
		{ "filenames", required_argument, NULL, OPT_FILENAMES },
		{ "padding", required_argument, NULL, OPT_PADDING },
		{ "direct-key", no_argument, NULL, OPT_DIRECT },
		{ "iv-ino-lblk-64", no_argument, NULL, OPT_LBLK64 },
		{ "iv-ino-lblk-32", no_argument, NULL, OPT_LBLK32 },
		{ "data-unit-size", required_argument, NULL, OPT_DUS },
		{ NULL, 0, NULL, 0 },
	};
	/* fscryptctl's defaults */
	struct f2fs_keyctl_policy p = {
		.version = 2,
		.contents_mode = MODE_AES_256_XTS,
		.filenames_mode = MODE_AES_256_CTS,
		.flags = 3,	/* PAD_32 */
	};
	struct f2fs_keyctl_key_spec spec;
	int ch, err;
	char *end;
	unsigned long v;

	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (ch) {
		case OPT_CONTENTS:
			if (parse_mode(optarg, true, &p.contents_mode))
				return fail("invalid contents mode: %s (AES-256-XTS, AES-128-CBC "
					    "or Adiantum)", optarg);
			break;
		case OPT_FILENAMES:
			if (parse_mode(optarg, false, &p.filenames_mode))
				return fail("invalid filenames mode: %s (AES-256-CTS, "
					    "AES-128-CTS, AES-256-HCTR2 or Adiantum)", optarg);
			break;
		case OPT_PADDING:
			p.flags &= (uint8_t)~FLAG_PAD_MASK;
			if (strcmp(optarg, "4") == 0)
				p.flags |= 0;
			else if (strcmp(optarg, "8") == 0)
				p.flags |= 1;
			else if (strcmp(optarg, "16") == 0)
				p.flags |= 2;
			else if (strcmp(optarg, "32") == 0)
				p.flags |= 3;
			else
				return fail("invalid padding: %s (4, 8, 16 or 32)", optarg);
			break;
		case OPT_DIRECT:
			p.flags |= FLAG_DIRECT_KEY;
			break;
		case OPT_LBLK64:
			p.flags |= FLAG_IV_INO_LBLK_64;
			break;
		case OPT_LBLK32:
			p.flags |= FLAG_IV_INO_LBLK_32;
			break;
		case OPT_DUS:
			errno = 0;
			v = strtoul(optarg, &end, 10);
			if (errno || *end || v < 512 || v > 4096 || (v & (v - 1)))
				return fail("invalid data unit size: %s (512, 1024, 2048 or "
					    "4096)", optarg);
			p.log2_data_unit_size = (uint8_t)__builtin_ctzl(v);
			break;
		default:
			usage(stderr);
			return EXIT_FAILURE;
		}
	}
	if (argc - optind != 2)
		return fail("must specify a key identifier and a directory");
	if (!parse_key(argv[optind], &spec))
		return EXIT_FAILURE;
	memcpy(p.key_spec, spec.u, sizeof(p.key_spec));
	if (spec.type == F2FS_KEYCTL_SPEC_DESCRIPTOR) {
		/* the v1 context has room for neither */
		if (p.flags & (FLAG_IV_INO_LBLK_64 | FLAG_IV_INO_LBLK_32))
			return fail("v1 policies (a key descriptor) take no --iv-ino-lblk-64 or "
				    "--iv-ino-lblk-32; use a v2 key");
		if (p.log2_data_unit_size)
			return fail("v1 policies (a key descriptor) take no --data-unit-size; "
				    "use a v2 key");
		p.version = 1;
	}
	err = request(argv[optind + 1], true, F2FS_IOC_SET_POLICY, F2FS_KEYCTL_OP_SET_POLICY, &p,
		      sizeof(p));
	if (err == -EACCES)
		return fail("setting policy for %s: %s (only the directory's owner or root "
			    "may encrypt it)", argv[optind + 1], strerror(EACCES));
	if (err == -EINVAL)
		return fail("setting policy for %s: invalid policy (incompatible modes or "
			    "flags)", argv[optind + 1]);
#ifdef EKEYREJECTED
	if (err == -EKEYREJECTED)
		return fail("setting policy for %s: the key is too short for %s/%s (they need "
			    "a key of at least %u bytes)", argv[optind + 1],
			    mode_name(p.contents_mode), mode_name(p.filenames_mode),
			    mode_keysize(p.contents_mode) > mode_keysize(p.filenames_mode) ?
			    mode_keysize(p.contents_mode) : mode_keysize(p.filenames_mode));
#endif
	if (err)
		return fail("setting policy for %s: %s", argv[optind + 1], errmsg(-err));
	return EXIT_SUCCESS;
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
			force_socket = true;
		} else if (strncmp(argv[i], "--socket=", 9) == 0) {
			force_socket = true;
			socket_path = argv[i] + 9;
		} else if (strncmp(argv[i], "--trust-uid=", 12) == 0) {
			char *end;

			errno = 0;
			trust_uid = (uid_t)strtoul(argv[i] + 12, &end, 10);
			if (errno || end == argv[i] + 12 || *end)
				return fail("invalid --trust-uid: %s (a numeric uid)", argv[i] + 12);
			have_trust_uid = true;
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
