// SPDX-License-Identifier: GPL-2.0
/*
 * The request loop with busy polling (-o busy_poll=US, the default).
 *
 * Small-file work through FUSE is a chain of round trips, and a round trip
 * costs two sleeps and two wake-ups: the caller's, and that of the daemon
 * thread waiting in read(2) on /dev/fuse.  On a virtual CPU the wake-ups
 * are most of a round trip (measured: 26 us per negative LOOKUP with
 * libfuse's loops, 17.5 us when the reading thread polls).  So the thread
 * that reads the device keeps reading it without sleeping for US
 * microseconds after each request before it sleeps, as the kernel's
 * network busy polling does, and serves what it reads itself: handing a
 * request to another thread would cost the very wake-up saved.
 *
 * One caller at a time: one thread holds the reader's role; the others
 * wait on a condition variable, not on the device, so a request wakes
 * nobody.  Requests nobody waits for (RELEASE, FORGET) queued behind a
 * caller's are served after it by the same thread.
 *
 * Callers running concurrently: as soon as two callers' requests are queued
 * at once, or the main thread sees the reader serve one request for a
 * whole tick (1 ms) while others wait, every idle thread waits on the
 * device (EPOLLEXCLUSIVE: one woken per request) and threads are added as
 * libfuse's multi-threaded loop adds them, busy polling off: a spinning
 * thread would take a CPU from the callers.  After CALM_US without two
 * callers at once, one reader again.  The tick also keeps the daemon live
 * when a handler blocks on something only another request can release
 * (the kernel's cache invalidations wait for READs).  The main thread
 * ticks only while the reader is awake, and once a second otherwise.
 */
#include "f2fs_fuse.h"
#include "loop.h"

#if defined(__linux__)

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/epoll.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct loop {
	struct fuse_session *se;
	int fd;			/* the device, non-blocking while the loop runs */
	int wake[2];		/* a byte here wakes every thread at exit */
	int watch[2];		/* a byte here wakes the main thread */
	unsigned int busy_us;
	unsigned int max_threads, max_idle;
	pthread_mutex_t lock;
	pthread_cond_t cond;	/* threads waiting for the reader's role */
	bool reader;		/* a thread holds the role (one caller at a time) */
	bool exiting;
	/* a caller's request read by a thread busy with another one */
	struct fuse_buf handoff;
	bool handoff_full;
	unsigned int threads, idle;
	int err;
	sem_t done;		/* posted when the last thread leaves */
	/* the reader's state, read by the main thread without the lock */
	atomic_uint gen;	/* bumped when the role is given up */
	atomic_ulong taken;	/* requests the reader took to serve itself */
	atomic_bool serving;	/* the reader is serving one */
	atomic_bool asleep;	/* the reader sleeps */
	atomic_bool watcher_asleep;
	/* callers running concurrently: every idle thread waits on the device */
	atomic_bool concurrent;
	atomic_uint waiting;	/* threads waiting on the device then */
	atomic_llong calm_from;	/* when to go back to one reader (us) */
};

/* The main thread's check of a reader serving a request for long. */
#define TICK_MS 1
/* Its check of the session's end otherwise: a signal that another thread
 * took ends the session without waking this one. */
#define IDLE_MS 1000
/* Concurrency seen this recently keeps every thread on the device and
 * busy polling off: a spinning thread would take a CPU from the callers. */
#define CALM_US 20000

static void poke(int fd)
{
	char c = 0;

	/* a full pipe holds a wake-up already */
	if (write(fd, &c, 1) < 0)
		return;
}

static void drain(int fd)
{
	char b[64];

	while (read(fd, b, sizeof(b)) > 0)
		;
}

/* Requests queued that nobody has read yet. */
static bool pending(const struct loop *l)
{
	struct pollfd pfd = { .fd = l->fd, .events = POLLIN };

	return poll(&pfd, 1, 0) > 0 && (pfd.revents & POLLIN);
}

/* A request's opcode (fuse_in_header's second word); 0 if unreadable. */
static uint32_t opcode_of(const struct fuse_buf *buf)
{
	uint32_t opcode = 0;

	if (buf->size >= 8 && !(buf->flags & FUSE_BUF_IS_FD))
		memcpy(&opcode, (const char *)buf->mem + 4, sizeof(opcode));
	return opcode;
}

/*
 * Requests nobody waits for: the kernel sends RELEASE after close(2) has
 * returned, and FORGETs as it drops inodes, so one of them queued behind
 * a caller's request is no sign of a second caller.
 */
static bool background(const struct fuse_buf *buf)
{
	switch (opcode_of(buf)) {
	case 2:		/* FUSE_FORGET */
	case 18:	/* FUSE_RELEASE */
	case 29:	/* FUSE_RELEASEDIR */
	case 42:	/* FUSE_BATCH_FORGET */
		return true;
	}
	return false;
}

/*
 * Another request is queued behind buf, the one just read: take it into
 * next.  Returns 0 if there was none, 1 if nobody waits for one of the two,
 * 2 if two callers wait (callers are running concurrently).
 */
static int take_next(struct loop *l, const struct fuse_buf *buf, struct fuse_buf *next)
{
	int res;

	if (!pending(l))
		return 0;
	res = fuse_session_receive_buf(l->se, next);
	if (res <= 0)
		return 0;	/* taken by another thread; the device's end shows at the next read */
	return background(buf) || background(next) ? 1 : 2;
}

/*
 * Serve one request.  INTERRUPTs are dropped: the kernel sends one only for
 * a request already read, and f2fs-fuse's handlers never ask whether they
 * were interrupted, while libfuse keeps an INTERRUPT whose request has been
 * answered in a list nothing empties (found by LeakSanitizer: with one
 * thread serving, the request is always answered by then).  The kernel
 * expects no reply to an INTERRUPT.
 */
static void serve(struct loop *l, struct fuse_buf *buf)
{
	if (opcode_of(buf) != 36)	/* FUSE_INTERRUPT */
		fuse_session_process_buf(l->se, buf);
}

/* Callers are running concurrently: remember it for CALM_US. */
static void seen_concurrent(struct loop *l)
{
	atomic_store(&l->calm_from, f2fs_fuse_mono_us() + CALM_US);
}

static void *worker(void *arg);

/* Start a thread with every signal blocked: they belong to the main thread. */
static int start_thread(struct loop *l)
{
	sigset_t all, old;
	pthread_attr_t attr;
	pthread_t t;
	int err;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	err = pthread_create(&t, &attr, worker, l);
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return -err;
}

/* Called locked: one more thread, if the limit allows. */
static void add_thread(struct loop *l)
{
	if (l->threads < l->max_threads && !start_thread(l))
		l->threads++;
}

/*
 * Called locked: the reader gives up its role and every idle thread waits
 * on the device, as in libfuse's multi-threaded loop, so that concurrent
 * requests are served concurrently.
 */
static void go_concurrent(struct loop *l)
{
	l->reader = false;
	atomic_fetch_add(&l->gen, 1);
	atomic_store(&l->concurrent, true);
	if (l->idle)
		pthread_cond_broadcast(&l->cond);
	else
		add_thread(l);
}

/* Called locked: the loop ends (unmount, a signal, an error). */
static void stop(struct loop *l, int err)
{
	if (err && !l->err)
		l->err = err;
	if (!l->exiting) {
		l->exiting = true;
		pthread_cond_broadcast(&l->cond);
		poke(l->wake[1]);	/* never drained: every later wait returns */
		poke(l->watch[1]);
	}
}

/* Sleep until the device has a request (one waiting thread is woken per
 * request: EPOLLEXCLUSIVE) or the loop ends. */
static void wait_device(struct loop *l, int epfd)
{
	struct epoll_event ev[2];

	if (epoll_wait(epfd, ev, 2, -1) < 0 && errno != EINTR)
		usleep(1000);	/* cannot happen with a valid epfd; do not spin */
}

/*
 * The reader's read: poll the device busy for *spin microseconds, then
 * sleep.  The budget adapts as spinlocks' do: a poll that gets a request
 * doubles it (up to busy_us), one that ends in sleep halves it (down to an
 * eighth), so a caller that works between its requests longer than the
 * poll (tar writing each file out) is not charged a full poll each time.
 */
static int receive(struct loop *l, struct fuse_buf *buf, int epfd, unsigned int *spin)
{
	int64_t until = 0;
	int res;

	for (;;) {
		res = fuse_session_receive_buf(l->se, buf);
		if (res != -EAGAIN) {
			if (until)
				*spin = *spin * 2 > l->busy_us ? l->busy_us : *spin * 2;
			return res;
		}
		if (*spin && !atomic_load(&l->concurrent)) {
			int64_t t = f2fs_fuse_mono_us();

			if (!until)
				until = t + *spin;
			if (t < until && t >= atomic_load(&l->calm_from))
				continue;
		}
		if (until)
			*spin = *spin / 2 < (l->busy_us + 7) / 8 ? (l->busy_us + 7) / 8 : *spin / 2;
		atomic_store(&l->asleep, true);
		wait_device(l, epfd);
		atomic_store(&l->asleep, false);
		if (atomic_load(&l->watcher_asleep))
			poke(l->watch[1]);
		if (l->exiting || atomic_load(&l->concurrent))
			return -EAGAIN;
		until = 0;
	}
}

/*
 * The reader's role: read and serve every request itself while callers
 * come one at a time.  Returns when the role is given up (callers got
 * concurrent, or the main thread saw it stuck) or the device is gone
 * (res <= 0 in *resp).
 */
static void serve_alone(struct loop *l, struct fuse_buf *buf, struct fuse_buf *next, int epfd,
			unsigned int gen, int *resp)
{
	unsigned int spin = l->busy_us;
	int res, more;

	for (;;) {
		res = receive(l, buf, epfd, &spin);
		if (res == -EINTR)
			continue;
		if (res == -EAGAIN)
			break;
		if (res <= 0 || fuse_session_exited(l->se)) {
			*resp = res;
			return;
		}
		more = l->max_threads > 1 ? take_next(l, buf, next) : 0;
		if (more == 2) {
			/* Two callers wait: serving the second only after the
			 * first could deadlock (a handler waiting for the kernel,
			 * the kernel for the other request), so another thread
			 * takes it. */
			bool handed = false;

			seen_concurrent(l);
			pthread_mutex_lock(&l->lock);
			if (atomic_load(&l->gen) == gen)
				go_concurrent(l);
			if (!l->handoff_full) {
				struct fuse_buf t = l->handoff;

				l->handoff = *next;
				*next = t;
				l->handoff_full = handed = true;
				if (l->idle)
					pthread_cond_signal(&l->cond);
				else
					add_thread(l);
			}
			pthread_mutex_unlock(&l->lock);
			serve(l, buf);
			if (!handed)
				serve(l, next);
			break;
		}
		/* one of the two nobody waits for: the caller's first */
		if (more && background(buf)) {
			struct fuse_buf t = *buf;

			*buf = *next;
			*next = t;
		}
		atomic_fetch_add(&l->taken, 1);
		atomic_store(&l->serving, true);
		serve(l, buf);
		if (more)
			serve(l, next);
		atomic_store(&l->serving, false);
		if (atomic_load(&l->gen) != gen)
			break;	/* the main thread gave the role up meanwhile */
	}
	*resp = 1;
}

/* With callers running concurrently: wait on the device, serve a request. */
static int serve_together(struct loop *l, struct fuse_buf *buf, int epfd)
{
	int res;

	atomic_fetch_add(&l->waiting, 1);
	res = fuse_session_receive_buf(l->se, buf);
	if (res == -EAGAIN) {
		wait_device(l, epfd);
		if (l->exiting) {
			atomic_fetch_sub(&l->waiting, 1);
			return 0;
		}
		res = fuse_session_receive_buf(l->se, buf);
	}
	if (atomic_fetch_sub(&l->waiting, 1) == 1 && res > 0) {
		/* nobody left waiting: one more thread, as libfuse's loop does */
		pthread_mutex_lock(&l->lock);
		add_thread(l);
		pthread_mutex_unlock(&l->lock);
	}
	if (res <= 0)
		return res == -EAGAIN || res == -EINTR ? 1 : res;
	/* taking the next request too would keep it from another thread */
	if (!background(buf) && pending(l))
		seen_concurrent(l);
	serve(l, buf);
	if (f2fs_fuse_mono_us() >= atomic_load(&l->calm_from) && atomic_load(&l->concurrent)) {
		/* calm again: one reader, the others off the device; a thread
		 * still waiting there serves one more request first */
		pthread_mutex_lock(&l->lock);
		atomic_store(&l->concurrent, false);
		pthread_mutex_unlock(&l->lock);
	}
	return 1;
}

static int thread_epoll(struct loop *l)
{
	struct epoll_event dev = { .events = EPOLLIN | EPOLLEXCLUSIVE };
	struct epoll_event wake = { .events = EPOLLIN };
	int epfd = epoll_create1(EPOLL_CLOEXEC);

	if (epfd < 0)
		return -errno;
	if (epoll_ctl(epfd, EPOLL_CTL_ADD, l->fd, &dev) < 0 ||
	    epoll_ctl(epfd, EPOLL_CTL_ADD, l->wake[0], &wake) < 0) {
		int err = -errno;

		close(epfd);
		return err;
	}
	return epfd;
}

static void *worker(void *arg)
{
	struct loop *l = arg;
	struct fuse_buf buf, next;
	int epfd = thread_epoll(l), res = 1;
	bool last;

	memset(&buf, 0, sizeof(buf));
	memset(&next, 0, sizeof(next));
	pthread_mutex_lock(&l->lock);
	if (epfd < 0) {
		stop(l, epfd);
		goto out;
	}
	while (!l->exiting && !fuse_session_exited(l->se)) {
		if (l->handoff_full) {
			struct fuse_buf t = l->handoff;

			l->handoff = buf;
			buf = t;
			l->handoff_full = false;
			pthread_mutex_unlock(&l->lock);
			serve(l, &buf);
			pthread_mutex_lock(&l->lock);
			continue;
		}
		if (atomic_load(&l->concurrent)) {
			pthread_mutex_unlock(&l->lock);
			res = serve_together(l, &buf, epfd);
			pthread_mutex_lock(&l->lock);
		} else if (l->reader) {
			if (l->idle >= l->max_idle && !l->handoff_full)
				goto out;
			l->idle++;
			pthread_cond_wait(&l->cond, &l->lock);
			l->idle--;
			continue;
		} else {
			unsigned int gen = atomic_load(&l->gen);

			l->reader = true;
			pthread_mutex_unlock(&l->lock);
			serve_alone(l, &buf, &next, epfd, gen, &res);
			pthread_mutex_lock(&l->lock);
			if (atomic_load(&l->gen) == gen) {
				l->reader = false;	/* device gone, or its state changed */
				atomic_fetch_add(&l->gen, 1);
			}
		}
		if (res <= 0) {
			stop(l, res);
			break;
		}
	}
out:
	last = !--l->threads;
	pthread_mutex_unlock(&l->lock);
	free(buf.mem);
	free(next.mem);
	if (epfd >= 0)
		close(epfd);
	/* the last touch of l: the main thread returns once it is posted */
	if (last)
		sem_post(&l->done);
	return NULL;
}

/*
 * The main thread: signals arrive here (SIGINT/SIGTERM/SIGHUP make libfuse
 * exit the session), and while requests come it checks every tick that the
 * reader is not stuck in one while others wait.
 */
static void watch(struct loop *l)
{
	struct pollfd pfd = { .fd = l->watch[0], .events = POLLIN };
	unsigned long taken = 0;
	unsigned int gen = 0, asleep_ticks = 0;
	bool was_serving = false;

	while (!fuse_session_exited(l->se)) {
		int timeout = TICK_MS;

		if (l->max_threads == 1) {
			timeout = IDLE_MS;	/* nobody to give the requests to */
		} else if (asleep_ticks >= 2 || atomic_load(&l->concurrent)) {
			/* Nothing to watch: sleep until the reader wakes.  Each
			 * side stores its flag, then reads the other's, so one
			 * of the two sees the other (the reader pokes, or this
			 * thread ticks on). */
			atomic_store(&l->watcher_asleep, true);
			if (atomic_load(&l->asleep) || atomic_load(&l->concurrent))
				timeout = IDLE_MS;
		}
		if (poll(&pfd, 1, timeout) > 0)
			drain(l->watch[0]);
		atomic_store(&l->watcher_asleep, false);
		pthread_mutex_lock(&l->lock);
		if (l->exiting) {
			pthread_mutex_unlock(&l->lock);
			return;
		}
		if (was_serving && atomic_load(&l->serving) && atomic_load(&l->taken) == taken &&
		    atomic_load(&l->gen) == gen && l->reader && pending(l))
			go_concurrent(l);
		taken = atomic_load(&l->taken);
		gen = atomic_load(&l->gen);
		was_serving = atomic_load(&l->serving);
		asleep_ticks = atomic_load(&l->asleep) ? asleep_ticks + 1 : 0;
		pthread_mutex_unlock(&l->lock);
	}
	pthread_mutex_lock(&l->lock);
	stop(l, 0);
	pthread_mutex_unlock(&l->lock);
}

int f2fs_fuse_busy_loop(struct fuse_session *se, unsigned int busy_us,
			unsigned int max_threads, unsigned int max_idle)
{
	struct loop l = {
		.se = se,
		.fd = fuse_session_fd(se),
		.wake = { -1, -1 },
		.watch = { -1, -1 },
		.busy_us = busy_us,
		.max_threads = max_threads ? max_threads : 1,
		.max_idle = max_idle ? max_idle : 1,
		.threads = 1,
	};
	int flags = fcntl(l.fd, F_GETFL), err = 0;

	if (flags < 0 || fcntl(l.fd, F_SETFL, flags | O_NONBLOCK) < 0)
		return -errno;
	if (pipe2(l.wake, O_NONBLOCK | O_CLOEXEC) < 0 || pipe2(l.watch, O_NONBLOCK | O_CLOEXEC) < 0) {
		err = -errno;
		goto out;
	}
	atomic_init(&l.gen, 0);
	atomic_init(&l.taken, 0);
	atomic_init(&l.serving, false);
	atomic_init(&l.asleep, false);
	atomic_init(&l.watcher_asleep, false);
	atomic_init(&l.concurrent, false);
	atomic_init(&l.waiting, 0);
	atomic_init(&l.calm_from, 0);
	pthread_mutex_init(&l.lock, NULL);
	pthread_cond_init(&l.cond, NULL);
	sem_init(&l.done, 0, 0);
	err = start_thread(&l);
	if (!err) {
		watch(&l);
		while (sem_wait(&l.done) < 0)
			;
		err = l.err;
	}
	/* a request left here unserved at exit gets no reply: the mount is gone */
	free(l.handoff.mem);
	sem_destroy(&l.done);
	pthread_cond_destroy(&l.cond);
	pthread_mutex_destroy(&l.lock);
out:
	fcntl(l.fd, F_SETFL, flags);
	for (int i = 0; i < 2; i++) {
		if (l.wake[i] >= 0)
			close(l.wake[i]);
		if (l.watch[i] >= 0)
			close(l.watch[i]);
	}
	return err;
}

#else	/* no epoll */

int f2fs_fuse_busy_loop(struct fuse_session *se, unsigned int busy_us,
			unsigned int max_threads, unsigned int max_idle)
{
	(void)se;
	(void)busy_us;
	(void)max_threads;
	(void)max_idle;
	return -EOPNOTSUPP;
}

#endif
