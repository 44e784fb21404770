// SPDX-License-Identifier: GPL-2.0
/*
 * Callers' credentials: capabilities from /proc/PID/status, and the files
 * a socket peer has open from /proc/PID/fdinfo.
 *
 * A FUSE request's sender is blocked in the kernel, uninterruptibly once
 * the daemon has read the request, until it is answered: its thread can
 * neither exit (so its id is not reused) nor change its credentials
 * meanwhile, and what /proc shows is what it had when it asked.  A socket
 * peer may have gone since it connected; the process descriptor the kernel
 * gives with SO_PEERPIDFD (Linux 6.5) tells, and without it the uid /proc
 * shows must still be the one the peer connected with.
 */
#include "caller.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/sysmacros.h>
#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77
#endif
#endif
#ifdef __APPLE__
#include <libproc.h>
#include <sys/proc_info.h>
#endif

void f2fs_caller_from_req(struct f2fs_caller *c, fuse_req_t req)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);

	memset(c, 0, sizeof(*c));
	c->uid = ctx->uid;
	c->gid = ctx->gid;
	c->pid = ctx->pid;
	c->pidfd = -1;
}

int f2fs_caller_from_socket(struct f2fs_caller *c, int fd)
{
	memset(c, 0, sizeof(*c));
	c->pidfd = -1;
	c->from_socket = true;
#ifdef SO_PEERCRED
	{
		struct ucred cr;
		socklen_t len = sizeof(cr);
		int pfd;

		if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len))
			return -errno;
		if (len != sizeof(cr))
			return -EPROTO;
		c->uid = cr.uid;
		c->gid = cr.gid;
		c->pid = cr.pid;
#ifdef __linux__
		len = sizeof(pfd);
		if (getsockopt(fd, SOL_SOCKET, SO_PEERPIDFD, &pfd, &len) == 0 &&
		    len == sizeof(pfd) && pfd >= 0) {
			fcntl(pfd, F_SETFD, FD_CLOEXEC);
			c->pidfd = pfd;
		}
#endif
	}
#else
	if (getpeereid(fd, &c->uid, &c->gid))
		return -errno;
#ifdef LOCAL_PEERPID
	{
		pid_t pid;
		socklen_t len = sizeof(pid);

		if (getsockopt(fd, SOL_LOCAL, LOCAL_PEERPID, &pid, &len) == 0)
			c->pid = pid;
	}
#endif
#endif
	return 0;
}

void f2fs_caller_done(struct f2fs_caller *c)
{
	if (c->pidfd >= 0)
		close(c->pidfd);
	c->pidfd = -1;
}

bool f2fs_caller_owns(struct f2fs_caller *c, const struct f2fs_fuse *fs,
		      const struct f2fs_stat *st)
{
	return c->uid == (fs->force_uid ? fs->uid : st->uid) ||
	       f2fs_caller_capable(c, F2FS_CAP_FOWNER);
}

#ifdef __linux__

/* /proc/PID/NAME, NUL-terminated in buf (truncated to fit); -errno. */
static int read_proc(pid_t pid, const char *name, char *buf, size_t len)
{
	char path[64];
	size_t got = 0;
	ssize_t n = 0;
	int fd, err = 0;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (got + 1 < len && (n = read(fd, buf + got, len - 1 - got)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = -errno;
			break;
		}
		got += (size_t)n;
	}
	close(fd);
	buf[got] = '\0';
	return err;
}

/* The value after "\nKEY" in a /proc text, or NULL. */
static const char *field(const char *text, const char *key)
{
	size_t klen = strlen(key);

	for (const char *p = text; p; p = strchr(p, '\n')) {
		if (*p == '\n')
			p++;
		if (!strncmp(p, key, klen))
			return p + klen;
	}
	return NULL;
}

/* Has the peer gone (its pid may be someone else's now)? */
static bool peer_gone(const struct f2fs_caller *c)
{
	struct pollfd p = { .fd = c->pidfd, .events = POLLIN };

	return c->pidfd >= 0 && poll(&p, 1, 0) != 0;
}

/*
 * Capabilities count in the daemon's user namespace only: a process
 * holds all of them inside a namespace of its own, over nothing here.
 * Where the daemon may not follow the namespace link (it is not root and
 * the caller is another user), the namespaces' uid maps must be equal:
 * writing a map wider than one's own uid takes CAP_SETUID in the parent
 * namespace, so another namespace with the daemon's map was made by
 * someone as privileged as its members.
 */
static bool same_userns(pid_t pid)
{
	char path[64], mine[1024], theirs[1024];
	struct stat a, b;

	snprintf(path, sizeof(path), "/proc/%d/ns/user", (int)pid);
	if (stat(path, &a) == 0)
		return stat("/proc/self/ns/user", &b) == 0 && a.st_dev == b.st_dev &&
		       a.st_ino == b.st_ino;
	if (errno != EACCES && errno != EPERM)
		return false;
	return read_proc(pid, "uid_map", theirs, sizeof(theirs)) == 0 &&
	       read_proc(getpid(), "uid_map", mine, sizeof(mine)) == 0 &&
	       strcmp(mine, theirs) == 0;
}

/* The effective set, or none if anything does not add up. */
static uint64_t read_caps(const struct f2fs_caller *c)
{
	char buf[4096];
	unsigned long ids[4];
	const char *uid, *cap;
	char *end;
	uint64_t caps;

	if (c->pid <= 0 || read_proc(c->pid, "status", buf, sizeof(buf)))
		return 0;
	uid = field(buf, "Uid:");
	cap = field(buf, "CapEff:");
	if (!uid || !cap ||
	    sscanf(uid, "%lu %lu %lu %lu", &ids[0], &ids[1], &ids[2], &ids[3]) != 4)
		return 0;
	/* the request's uid is the fsuid, a socket peer's the euid it connected with */
	if (ids[c->from_socket ? 1 : 3] != (unsigned long)c->uid)
		return 0;
	errno = 0;
	caps = strtoull(cap, &end, 16);
	if (errno || end == cap || !same_userns(c->pid) || peer_gone(c))
		return 0;
	return caps;
}

bool f2fs_caller_capable(struct f2fs_caller *c, int cap)
{
	if (!c->caps_read) {
		c->caps = read_caps(c);
		c->caps_read = true;
	}
	return (c->caps >> cap) & 1;
}

/* The device of mount mnt_id as the peer's mount namespace lists it. */
static int mount_dev(pid_t pid, unsigned long long mnt_id, dev_t *dev)
{
	char path[64], *line = NULL;
	size_t cap = 0;
	int err = -EBADF;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/mountinfo", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (getline(&line, &cap, f) > 0) {
		unsigned long long id;
		unsigned int maj, min;

		if (sscanf(line, "%llu %*u %u:%u", &id, &maj, &min) == 3 && id == mnt_id) {
			*dev = makedev(maj, min);
			err = 0;
			break;
		}
	}
	free(line);
	fclose(f);
	return err;
}

int f2fs_caller_file(struct f2fs_caller *c, int fd, dev_t *dev, uint64_t *ino)
{
	int oflags;

	return f2fs_caller_fd(c, fd, dev, ino, &oflags);
}

/*
 * An ioctl whose argument the kernel does not pass to a FUSE server (its
 * direction bits say "read" where the driver reads it, as
 * F2FS_IOC_SHUTDOWN's): read it from the caller, who is blocked in the
 * ioctl until the reply.  The kernel lets the daemon do so only where it
 * could ptrace the caller.
 */
int f2fs_caller_read(struct f2fs_caller *c, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };
	ssize_t n;

	if (c->pid <= 0 || c->from_socket)
		return -EFAULT;
	n = process_vm_readv(c->pid, &local, 1, &remote, 1, 0);
	if (n < 0)
		return errno == ESRCH || errno == EFAULT ? -EFAULT : -errno;
	return (size_t)n == len ? 0 : -EFAULT;
}

/* The other way (FS_IOC_READ_VERITY_METADATA's buffer): the same rule applies. */
int f2fs_caller_write(struct f2fs_caller *c, uint64_t addr, const void *buf, size_t len)
{
	struct iovec local = { (void *)buf, len }, remote = { (void *)(uintptr_t)addr, len };
	ssize_t n;

	if (c->pid <= 0 || c->from_socket)
		return -EFAULT;
	n = process_vm_writev(c->pid, &local, 1, &remote, 1, 0);
	if (n < 0)
		return errno == ESRCH || errno == EFAULT ? -EFAULT : -errno;
	return (size_t)n == len ? 0 : -EFAULT;
}

int f2fs_caller_fd(struct f2fs_caller *c, int fd, dev_t *dev, uint64_t *ino, int *oflags)
{
	char name[32], buf[1024], *end;
	const char *fl, *mnt, *in;
	unsigned long long mnt_id, i;
	unsigned long flags;
	int err;

	if (c->pid <= 0 || fd < 0)
		return -EBADF;
	snprintf(name, sizeof(name), "fdinfo/%d", fd);
	err = read_proc(c->pid, name, buf, sizeof(buf));
	if (err)
		return err == -ENOENT ? -EBADF : err;
	fl = field(buf, "flags:");
	mnt = field(buf, "mnt_id:");
	in = field(buf, "ino:");
	if (!fl || !mnt || !in)
		return -EOPNOTSUPP;		/* before Linux 5.14: no ino */
	flags = strtoul(fl, &end, 8);
	mnt_id = strtoull(mnt, &end, 10);
	i = strtoull(in, &end, 10);
	if (flags & O_PATH)
		return -EBADF;
	*oflags = (int)flags;
	err = mount_dev(c->pid, mnt_id, dev);
	if (!err && peer_gone(c))
		err = -ESRCH;
	*ino = i;
	return err;
}

/* The caller's process (thread group) id: FUSE requests name the thread. */
pid_t f2fs_caller_tgid(struct f2fs_caller *c)
{
	char buf[1024];
	const char *v;

	if (c->pid <= 0 || read_proc(c->pid, "status", buf, sizeof(buf)))
		return 0;
	v = field(buf, "Tgid:");
	return v ? (pid_t)strtol(v, NULL, 10) : 0;
}

/* PF_EXITING in the task's flags (/proc/TID/stat, field 9): the task is in do_exit. */
#define F2FS_PF_EXITING 0x00000004u

bool f2fs_caller_exiting(struct f2fs_caller *c)
{
	char buf[1024], *p;
	unsigned long flags;

	if (c->pid <= 0 || read_proc(c->pid, "stat", buf, sizeof(buf)))
		return false;
	/* comm may hold anything, ")" too: the fields start after the last ")" */
	p = strrchr(buf, ')');
	if (!p)
		return false;
	for (int field = 3; field < 9; field++) {
		p = strchr(p + 1, ' ');
		if (!p)
			return false;
	}
	flags = strtoul(p + 1, NULL, 10);
	return (flags & F2FS_PF_EXITING) != 0;
}

#else /* !__linux__ */

pid_t f2fs_caller_tgid(struct f2fs_caller *c)
{
	return c->pid;
}

bool f2fs_caller_exiting(struct f2fs_caller *c)
{
	(void)c;
	return false;
}

int f2fs_caller_read(struct f2fs_caller *c, uint64_t addr, void *buf, size_t len)
{
	(void)c;
	(void)addr;
	(void)buf;
	(void)len;
	return -EFAULT;
}

int f2fs_caller_write(struct f2fs_caller *c, uint64_t addr, const void *buf, size_t len)
{
	(void)c;
	(void)addr;
	(void)buf;
	(void)len;
	return -EFAULT;
}

int f2fs_caller_fd(struct f2fs_caller *c, int fd, dev_t *dev, uint64_t *ino, int *oflags)
{
	*oflags = O_RDWR;	/* the access mode is not known here: the open said yes */
	return f2fs_caller_file(c, fd, dev, ino);
}

/* Without capabilities, root is the privileged user. */
bool f2fs_caller_capable(struct f2fs_caller *c, int cap)
{
	(void)cap;
	return c->uid == 0;
}

int f2fs_caller_file(struct f2fs_caller *c, int fd, dev_t *dev, uint64_t *ino)
{
#ifdef __APPLE__
	struct vnode_fdinfowithpath vi;
	int n;

	if (c->pid <= 0 || fd < 0)
		return -EBADF;
	n = proc_pidfdinfo(c->pid, fd, PROC_PIDFDVNODEPATHINFO, &vi, sizeof(vi));
	if (n < (int)sizeof(vi))
		return n < 0 && errno == EPERM ? -EACCES : -EBADF;
	*dev = (dev_t)vi.pvip.vip_vi.vi_stat.vst_dev;
	*ino = vi.pvip.vip_vi.vi_stat.vst_ino;
	return 0;
#else
	(void)c;
	(void)fd;
	(void)dev;
	(void)ino;
	return -EOPNOTSUPP;
#endif
}

#endif /* __linux__ */
