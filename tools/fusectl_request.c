// SPDX-License-Identifier: GPL-2.0
/*
 * Reaching a mount's daemon: F2FS_IOC_* ioctls on a file of the mount, or
 * its control socket where the mount has no ioctls (FUSE-T) or --socket is
 * given; only a daemon run by root, the caller or --trust-uid is trusted.
 */
#include "fusectl.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
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
#ifndef MSG_NOSIGNAL
#define MSG_NOSIGNAL 0
#endif

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
	    (fusectl.have_trust_uid && uid == (unsigned long)fusectl.trust_uid))
		return true;
	fusectl.untrusted_uid = uid;
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

	if (fusectl.socket_path) {
		if (strlen(fusectl.socket_path) >= sizeof(cand[0]))
			return -ENAMETOOLONG;
		strcpy(cand[ncand++], fusectl.socket_path);
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
bool maybe_fuse(int fd)
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
int request_fd(int fd, unsigned long cmd, void *arg)
{
	if (!maybe_fuse(fd))
		return -ENOTTY;
	return ioctl(fd, cmd, arg) ? -errno : 0;
}

int request(const char *path, bool dir, unsigned long cmd, uint32_t op, void *arg,
		   size_t argsz)
{
	int fd, err;

	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC | (dir ? O_DIRECTORY : 0));
	if (fd < 0)
		return -errno;
	if (!fusectl.force_socket && maybe_fuse(fd)) {
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
