// SPDX-License-Identifier: GPL-2.0
/*
 * The control socket: the key and policy operations for mounts without
 * ioctls (FUSE-T) and for f2fs-fusectl --socket.  The wire format is in
 * keyctl_proto.h, the operations in keyctl.c.
 *
 * The socket is bound before the daemon forks, so that one asked for with
 * -o keyctl_socket=PATH that cannot be made stops the mount with a message
 * on the terminal; it is served from init, after the fork.  Every
 * connection has its own thread and one deadline for its whole request,
 * so a slow client holds up nobody but itself; a user may have only a few
 * connections at a time and the server only so many in all, except root
 * and the daemon's own user, who are always let in.
 */
#include "keyctl_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#ifndef MSG_NOSIGNAL			/* macOS: SO_NOSIGPIPE on the socket instead */
#define MSG_NOSIGNAL 0
#endif

#define DEADLINE_MS		5000	/* for a whole request, and for the reply */
#define MAX_CONNS		64
#define MAX_CONNS_PER_USER	8

struct conn {
	struct keysock *ks;
	int fd;
	struct f2fs_caller who;
	struct conn *next;
};

struct keysock {
	struct f2fs_keyctl *kc;
	int listen_fd;
	int stop_pipe[2];
	bool bound;			/* the socket file is ours to remove */
	pthread_t thread;
	bool running;

	pthread_mutex_t lock;		/* the fields below */
	pthread_cond_t idle;		/* signalled when the last connection ends */
	struct conn *conns;
	size_t nconns;
	bool stopping;
	bool have_dev;
	dev_t dev;			/* the mount's, once a policy request asked */
};

/* ------------------------------------------------------------ requests */

/* Who may talk to the socket: what the kernel lets reach the mount. */
static bool peer_allowed(const struct f2fs_keyctl *kc, uid_t uid)
{
	return kc->allow_other || uid == 0 || uid == geteuid();
}

/* The mount's device: what a policy request's file must be on. */
static int mount_dev(struct keysock *ks, dev_t *dev)
{
	struct stat st;
	int err = 0;

	pthread_mutex_lock(&ks->lock);
	if (!ks->have_dev) {
		/* from this thread, not one serving FUSE requests: it asks us */
		if (stat(ks->kc->mountpoint, &st) == 0) {
			ks->dev = st.st_dev;
			ks->have_dev = true;
		} else {
			err = -errno;
		}
	}
	*dev = ks->dev;
	pthread_mutex_unlock(&ks->lock);
	return err;
}

/*
 * The inode of a policy request: the file the client has open as fd,
 * which must be on this mount.  So a request names only files its sender
 * could open, as the ioctls do, and never an inode number of its choosing.
 */
static int request_file(struct conn *c, int32_t fd, uint32_t *nid)
{
	dev_t dev, mine;
	uint64_t ino;
	int err = f2fs_caller_file(&c->who, fd, &dev, &ino);

	if (!err)
		err = mount_dev(c->ks, &mine);
	if (err)
		return err;
	if (dev != mine || ino == 0 || ino > UINT32_MAX)
		return -EXDEV;
	*nid = (uint32_t)ino;
	return 0;
}

void keysock_handle_msg(struct f2fs_keyctl *kc, struct f2fs_caller *who,
			struct f2fs_keyctl_msg *m, keysock_file_fn file, void *arg)
{
	uint32_t nid = 0;
	int err;

	if (m->magic != F2FS_KEYCTL_MSG_MAGIC || m->version != F2FS_KEYCTL_MSG_VERSION) {
		err = -EPROTO;
	} else if (!peer_allowed(kc, who->uid)) {
		err = -EACCES;
	} else if (m->reserved) {
		err = -EINVAL;
	} else {
		switch (m->op) {
		case F2FS_KEYCTL_OP_ADD_KEY:
			err = keyctl_add_key(kc, who, &m->u.add);
			break;
		case F2FS_KEYCTL_OP_REMOVE_KEY:
			err = keyctl_remove_key(kc, who, &m->u.remove);
			break;
		case F2FS_KEYCTL_OP_KEY_STATUS:
			err = keyctl_key_status(kc, who, &m->u.status);
			break;
		case F2FS_KEYCTL_OP_GET_POLICY:
			err = file(arg, m->fd, &nid);
			if (!err)
				err = keyctl_get_policy(kc, nid, &m->u.policy);
			break;
		case F2FS_KEYCTL_OP_SET_POLICY:
			err = file(arg, m->fd, &nid);
			if (!err)
				err = keyctl_set_policy(kc, who, nid, &m->u.policy);
			break;
		default:
			err = -EOPNOTSUPP;
			break;
		}
	}
	/* whatever the request was, its key bytes go no further (the reply included) */
	if (m->op == F2FS_KEYCTL_OP_ADD_KEY)
		keyctl_wipe(m->u.add.raw, sizeof(m->u.add.raw));
	m->error = -err;
}

static int conn_file(void *arg, int32_t fd, uint32_t *nid)
{
	return request_file(arg, fd, nid);
}

static void *serve(void *arg)
{
	struct conn *c = arg;
	struct keysock *ks = c->ks;
	struct f2fs_keyctl_msg m;
	struct conn **pp;

	if (f2fs_keyctl_io(c->fd, &m, sizeof(m), false, f2fs_keyctl_now_ms() + DEADLINE_MS) == 0) {
		keysock_handle_msg(ks->kc, &c->who, &m, conn_file, c);
		f2fs_keyctl_io(c->fd, &m, sizeof(m), true, f2fs_keyctl_now_ms() + DEADLINE_MS);
	}
	keyctl_wipe(&m, sizeof(m));
	pthread_mutex_lock(&ks->lock);
	for (pp = &ks->conns; *pp != c; pp = &(*pp)->next)
		;
	*pp = c->next;
	if (--ks->nconns == 0)
		pthread_cond_broadcast(&ks->idle);
	pthread_mutex_unlock(&ks->lock);
	/* ks may be gone from here on */
	close(c->fd);
	f2fs_caller_done(&c->who);
	free(c);
	return NULL;
}

/* Lock held: may this user open one more connection? */
static bool admit(const struct keysock *ks, uid_t uid)
{
	size_t mine = 0;

	for (const struct conn *c = ks->conns; c; c = c->next)
		mine += c->who.uid == uid;
	if (ks->stopping || mine >= MAX_CONNS_PER_USER)
		return false;
	return ks->nconns < MAX_CONNS || uid == 0 || uid == geteuid();
}

static void accept_one(struct keysock *ks)
{
	struct conn *c;
	pthread_t t;
	pthread_attr_t attr;
	int fd, err;

	fd = accept(ks->listen_fd, NULL, NULL);
	if (fd < 0)
		return;
	fcntl(fd, F_SETFD, FD_CLOEXEC);
#ifdef SO_NOSIGPIPE
	setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &(int){ 1 }, sizeof(int));
#endif
	c = calloc(1, sizeof(*c));
	if (!c || f2fs_caller_from_socket(&c->who, fd)) {
		free(c);
		close(fd);
		return;
	}
	c->ks = ks;
	c->fd = fd;
	pthread_mutex_lock(&ks->lock);
	if (!admit(ks, c->who.uid)) {
		pthread_mutex_unlock(&ks->lock);
		goto drop;
	}
	c->next = ks->conns;
	ks->conns = c;
	ks->nconns++;
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	/* the new thread inherits this one's mask: every signal blocked */
	err = pthread_create(&t, &attr, serve, c);
	pthread_attr_destroy(&attr);
	if (err) {
		ks->conns = c->next;
		ks->nconns--;
	}
	pthread_mutex_unlock(&ks->lock);
	if (!err)
		return;
drop:
	f2fs_caller_done(&c->who);
	free(c);
	close(fd);
}

static void *accept_main(void *arg)
{
	struct keysock *ks = arg;
	struct pollfd pf[2] = {
		{ .fd = ks->listen_fd, .events = POLLIN },
		{ .fd = ks->stop_pipe[0], .events = POLLIN },
	};

	for (;;) {
		if (poll(pf, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (pf[1].revents)
			break;
		if (pf[0].revents & POLLIN)
			accept_one(ks);
	}
	return NULL;
}

/* ------------------------------------------------------------ setup */

/* mkdir -p of one level, then insist it is ours and private enough. */
static int make_sock_dir(const char *dir, mode_t mode)
{
	struct stat st;

	if (mkdir(dir, mode) && errno != EEXIST)
		return -errno;
	if (lstat(dir, &st))
		return -errno;
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 022))
		return -EPERM;
	return 0;
}

static int default_sock_path(struct f2fs_keyctl *kc, char *out, size_t len)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	char dir[sizeof(((struct sockaddr_un *)0)->sun_path)];
	uint64_t h = f2fs_keyctl_path_hash(kc->mountpoint);
	int err, n;

	if (geteuid() == 0) {
		n = snprintf(dir, sizeof(dir), "%s", F2FS_KEYCTL_RUN_DIR);
		err = make_sock_dir(dir, 0755);
	} else if (xdg && *xdg == '/') {
		n = snprintf(dir, sizeof(dir), "%s/f2fs-fuse", xdg);
		err = (size_t)n < sizeof(dir) ? make_sock_dir(dir, 0700) : -ENAMETOOLONG;
	} else {
		n = snprintf(dir, sizeof(dir), "/tmp/f2fs-fuse-%lu", (unsigned long)geteuid());
		err = make_sock_dir(dir, 0700);
	}
	if (err)
		return err;
	n = snprintf(out, len, "%s/%016llx.sock", dir, (unsigned long long)h);
	return n > 0 && (size_t)n < len ? 0 : -ENAMETOOLONG;
}

/* Bind and listen at sa: 0 or -errno, with the socket in ks. */
static int bind_socket(struct keysock *ks, const struct sockaddr_un *sa)
{
	struct stat st;
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	if (fd < 0)
		return -errno;
	fcntl(fd, F_SETFD, FD_CLOEXEC);
	ks->listen_fd = fd;
	/* A socket left by a daemon that died is replaced; a live one is not. */
	if (lstat(sa->sun_path, &st) == 0 && S_ISSOCK(st.st_mode)) {
		int probe = socket(AF_UNIX, SOCK_STREAM, 0);
		bool live = probe >= 0 && connect(probe, (const struct sockaddr *)sa,
						  sizeof(*sa)) == 0;

		if (probe >= 0)
			close(probe);
		if (live)
			return -EADDRINUSE;
		unlink(sa->sun_path);
	}
	if (bind(fd, (const struct sockaddr *)sa, sizeof(*sa)))
		return -errno;
	ks->bound = true;
	/* Access is decided per request by the peer's uid. */
	if (chmod(sa->sun_path, ks->kc->allow_other ? 0666 : 0600) || listen(fd, 16))
		return -errno;
	return 0;
}

int keysock_listen(struct f2fs_keyctl *kc)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct keysock *ks;
	int err;

	if (kc->no_socket || !kc->mountpoint)
		return 0;
	ks = calloc(1, sizeof(*ks));
	if (!ks) {
		fprintf(stderr, PROG ": out of memory\n");
		return -1;
	}
	ks->kc = kc;
	ks->listen_fd = -1;
	ks->stop_pipe[0] = ks->stop_pipe[1] = -1;
	pthread_mutex_init(&ks->lock, NULL);
	pthread_cond_init(&ks->idle, NULL);
	kc->sock = ks;
	if (kc->sock_path) {
		snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", kc->sock_path);
		err = 0;
	} else {
		err = default_sock_path(kc, sa.sun_path, sizeof(sa.sun_path));
		kc->sock_path = err ? NULL : strdup(sa.sun_path);
		if (!err && !kc->sock_path)
			err = -ENOMEM;
	}
	if (!err)
		err = bind_socket(ks, &sa);
	if (!err)
		return 0;
	if (ks->bound)
		unlink(sa.sun_path);
	ks->bound = false;
	if (ks->listen_fd >= 0)
		close(ks->listen_fd);
	ks->listen_fd = -1;
	if (kc->sock_asked) {
		fprintf(stderr, PROG ": keyctl_socket=%s: %s\n", sa.sun_path,
			err == -EADDRINUSE ? "another process listens there" : strerror(-err));
		return -1;
	}
	f2fs_fuse_log(kc->fs, F2FS_LOG_WARN, "no key control socket%s%s: %s",
		      sa.sun_path[0] ? " at " : "", sa.sun_path,
		      err == -EADDRINUSE ? "another daemon serves this mount point" :
		      strerror(-err));
	return 0;
}

void keysock_start(struct f2fs_keyctl *kc)
{
	struct keysock *ks = kc->sock;
	sigset_t all, old;
	int err;

	if (!ks || ks->listen_fd < 0 || ks->running)
		return;
	if (pipe(ks->stop_pipe)) {
		err = errno;
		goto fail;
	}
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&ks->thread, NULL, accept_main, ks);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!err) {
		ks->running = true;
		return;
	}
fail:
	f2fs_fuse_log(kc->fs, F2FS_LOG_WARN, "key control socket not served: %s",
		      strerror(err));
}

void keysock_stop(struct f2fs_keyctl *kc)
{
	struct keysock *ks = kc->sock;

	if (!ks)
		return;
	pthread_mutex_lock(&ks->lock);
	ks->stopping = true;
	pthread_mutex_unlock(&ks->lock);
	if (ks->running) {
		(void)!write(ks->stop_pipe[1], "x", 1);
		pthread_join(ks->thread, NULL);
		ks->running = false;
	}
	/* Wake the connections still waiting for their client; let them finish. */
	pthread_mutex_lock(&ks->lock);
	for (struct conn *c = ks->conns; c; c = c->next)
		shutdown(c->fd, SHUT_RDWR);
	while (ks->nconns)
		pthread_cond_wait(&ks->idle, &ks->lock);
	pthread_mutex_unlock(&ks->lock);
	if (ks->listen_fd >= 0)
		close(ks->listen_fd);
	ks->listen_fd = -1;
	for (int i = 0; i < 2; i++) {
		if (ks->stop_pipe[i] >= 0)
			close(ks->stop_pipe[i]);
		ks->stop_pipe[i] = -1;
	}
	if (ks->bound && kc->sock_path)
		unlink(kc->sock_path);
	ks->bound = false;
}

void keysock_free(struct f2fs_keyctl *kc)
{
	struct keysock *ks = kc->sock;

	if (!ks)
		return;
	keysock_stop(kc);
	pthread_mutex_destroy(&ks->lock);
	pthread_cond_destroy(&ks->idle);
	free(ks);
	kc->sock = NULL;
}
