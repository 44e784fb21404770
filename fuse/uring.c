// SPDX-License-Identifier: GPL-2.0
/*
 * FUSE over io_uring (-o uring; Linux 6.14 and later, with the fuse
 * module's enable_uring parameter on).
 *
 * A request through /dev/fuse costs two sleeps and two wake-ups, usually
 * on different CPUs.  Through io_uring the kernel queues a request on the
 * queue of the CPU its caller runs on, in a buffer the daemon registered,
 * and completes the daemon's fetch command there: with the serving thread
 * pinned to that CPU the wake-up stays on it.
 *
 * libfuse 3.14 does not speak this protocol, so this file does, under the
 * same low-level operations: the session's device I/O is ours (custom I/O),
 * INIT is answered with the io_uring flag added, and then every CPU's queue
 * gets threads of its own, each with its own ring and one registered entry
 * (so a request goes to a thread that is waiting for one; a thread never
 * holds a request it cannot start).  A request is rebuilt as libfuse
 * expects it, handed to fuse_session_process_buf(), and libfuse's reply,
 * which comes back through our writev, goes into the entry and is
 * committed with the fetch of the next.  INIT, FORGETs, INTERRUPTs and the
 * requests before the rings are ready still come through /dev/fuse, served
 * by the calling thread with libfuse's loop.
 *
 * A handler may wait for a request only another thread can serve (page
 * cache invalidation waits for pages a READ holds locked): a watcher adds a
 * thread to a queue whose threads have all been busy for WATCH_MS.
 */
#include "uring.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#ifndef F2FS_FUSE_URING

int f2fs_fuse_uring_usable(const char **why)
{
	*why = "this build has no io_uring support (liburing)";
	return -EOPNOTSUPP;
}

int f2fs_fuse_uring_loop(struct f2fs_fuse *fs, struct fuse_session *se)
{
	return -EOPNOTSUPP;
}

void f2fs_fuse_uring_free(struct f2fs_fuse *fs)
{
}

#else

#include <liburing.h>
#include <linux/fuse.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/sysinfo.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

/* The kernel's FUSE-over-io_uring ABI (include/uapi/linux/fuse.h, 7.42). */
#define URING_IN_OUT_HEADER_SZ 128
#define URING_OP_IN_OUT_SZ 128
struct uring_ent_in_out {
	uint64_t flags;
	uint64_t commit_id;	/* the kernel's; given back with the reply */
	uint32_t payload_sz;	/* bytes in the payload buffer */
	uint32_t padding;
	uint64_t reserved;
};
struct uring_req_header {
	char in_out[URING_IN_OUT_HEADER_SZ];	/* fuse_in_header / fuse_out_header */
	char op_in[URING_OP_IN_OUT_SZ];		/* the opcode's own header */
	struct uring_ent_in_out ent;
};
struct uring_cmd_req {			/* the SQE's command area */
	uint64_t flags;
	uint64_t commit_id;
	uint16_t qid;
	uint8_t padding[6];
};
enum { URING_CMD_REGISTER = 1, URING_CMD_COMMIT_AND_FETCH = 2 };
#define INIT_EXT (1u << 30)			/* FUSE_INIT_EXT: flags2 is read */
#define INIT2_OVER_IO_URING (1u << (41 - 32))	/* FUSE_OVER_IO_URING in flags2 */
/* fuse_init_out: where flags, max_write, max_pages and flags2 are */
#define INIT_OUT_FLAGS 12
#define INIT_OUT_MAX_WRITE 20
#define INIT_OUT_MAX_PAGES 32
#define INIT_OUT_FLAGS2 36
#define INIT_OUT_MIN 40

/* Threads a queue starts with, and at most. */
#define THREADS_PER_QUEUE 2
#define MAX_PER_QUEUE 16
/* A queue whose threads have all been busy this long gets another. */
#define WATCH_MS 20
/* How often an idle thread looks whether the loop has ended. */
#define STOP_CHECK_MS 200
/* Room before the payload for the request's headers (rebuilt contiguous). */
#define REQ_ROOM 4096

struct f2fs_fuse_uring;

struct ring_thread {
	struct f2fs_fuse_uring *pool;
	unsigned int qid;
	pthread_t tid;
	struct io_uring ring;
	struct uring_req_header hdr;	/* registered: the kernel writes it */
	char *mem;			/* REQ_ROOM bytes, then the payload */
	char *payload;			/* registered */
	struct iovec iov[2];
	uint64_t commit_id;
	/* the request being served (0: none), for replies from elsewhere */
	_Atomic uint64_t unique;
	/* when the request started (us), 0 while waiting for one, -1 once ended */
	atomic_llong busy_since;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool replied;
};

struct f2fs_fuse_uring {
	struct f2fs_fuse *fs;
	struct fuse_session *se;
	int fd;				/* /dev/fuse */
	unsigned int nr_queues;		/* the kernel's: one per possible CPU */
	size_t payload_size;
	_Atomic uint64_t init_unique;	/* INIT's, while its reply is due */
	atomic_bool offered;		/* INIT offered io_uring */
	atomic_bool stop;
	atomic_bool failed;		/* a ring could not be set up: add none */
	pthread_mutex_t lock;		/* adding threads */
	struct ring_thread **threads;	/* nr_queues * MAX_PER_QUEUE */
	atomic_uint nthreads;
	unsigned int *per_queue;
	pthread_t watcher;
	bool watching;
};

static int64_t now_us(void)
{
	return (int64_t)f2fs_fuse_mono_us();
}

int f2fs_fuse_uring_usable(const char **why)
{
	struct io_uring_params params = { .flags = IORING_SETUP_SQE128 };
	struct io_uring ring;
	char v = 0;
	FILE *f = fopen("/sys/module/fuse/parameters/enable_uring", "r");
	int err;

	if (!f) {
		*why = "the kernel's fuse module has no io_uring support (Linux 6.14 or later)";
		return -EOPNOTSUPP;
	}
	if (fread(&v, 1, 1, f) != 1)
		v = 0;
	fclose(f);
	if (v != 'Y' && v != '1') {
		*why = "the fuse module's enable_uring parameter is off "
		       "(/sys/module/fuse/parameters/enable_uring)";
		return -EOPNOTSUPP;
	}
	err = io_uring_queue_init_params(2, &ring, &params);
	if (err) {
		*why = "io_uring rings cannot be made here (kernel.io_uring_disabled?)";
		return err;
	}
	io_uring_queue_exit(&ring);
	return 0;
}

/* The kernel's queue count: its possible CPUs (e.g. "0-1" or "0,2-5"). */
static unsigned int possible_cpus(void)
{
	FILE *f = fopen("/sys/devices/system/cpu/possible", "r");
	unsigned int a, b, last = 0;
	bool any = false;
	char sep;

	if (f) {
		while (fscanf(f, "%u", &a) == 1) {
			b = a;
			if (fscanf(f, "%c", &sep) == 1 && sep == '-') {
				if (fscanf(f, "%u", &b) != 1)
					break;
				if (fscanf(f, "%c", &sep) != 1)
					sep = '\n';
			}
			if (b >= last) {
				last = b;
				any = true;
			}
			if (sep != ',')
				break;
		}
		fclose(f);
	}
	if (!any) {
		int n = get_nprocs_conf();

		return n > 0 ? (unsigned int)n : 1;
	}
	return last + 1;
}

/*
 * Queue a command for the kernel's entry, submitted with the next wait;
 * false if the ring has no room (it always has: one entry, one command).
 */
static bool queue_cmd(struct ring_thread *t, uint32_t cmd, uint64_t commit_id)
{
	struct uring_cmd_req req = { .commit_id = commit_id, .qid = (uint16_t)t->qid };
	struct io_uring_sqe *sqe = io_uring_get_sqe(&t->ring);

	if (!sqe)
		return false;
	memset(sqe, 0, 2 * sizeof(*sqe));	/* 128-byte entries */
	sqe->opcode = IORING_OP_URING_CMD;
	sqe->fd = t->pool->fd;
	sqe->cmd_op = cmd;
	io_uring_sqe_set_data(sqe, t);
	memcpy(sqe->cmd, &req, sizeof(req));
	if (cmd == URING_CMD_REGISTER) {
		sqe->addr = (uint64_t)(uintptr_t)t->iov;
		sqe->len = 2;
	}
	return true;
}

/*
 * The reply into the entry: the out header in the header area, what
 * follows it in the payload buffer.  A reply that cannot fit (none should:
 * the kernel sized the buffer) goes as EIO.
 */
static void fill_reply(struct ring_thread *t, uint64_t unique, int32_t error,
		       const struct iovec *iov, int count)
{
	struct fuse_out_header out = { .unique = unique, .error = error };
	size_t len = 0;

	for (int i = 0; i < count; i++) {
		if (iov[i].iov_len > t->pool->payload_size - len) {
			out.error = -EIO;
			len = 0;
			break;
		}
		memmove(t->payload + len, iov[i].iov_base, iov[i].iov_len);
		len += iov[i].iov_len;
	}
	out.len = (uint32_t)(sizeof(out) + len);
	memcpy(t->hdr.in_out, &out, sizeof(out));
	t->hdr.ent.payload_sz = (uint32_t)len;
}

static void set_replied(struct ring_thread *t)
{
	pthread_mutex_lock(&t->lock);
	t->replied = true;
	pthread_cond_signal(&t->cond);
	pthread_mutex_unlock(&t->lock);
}

/*
 * Requests the kernel expects no reply to.  Through the ring the entry
 * must still be committed, with an empty reply: the kernel sends a forced
 * FORGET (one for an inode a LOOKUP reply named but the kernel rejected)
 * as an ordinary request, and libfuse's fuse_reply_none() writes nothing.
 */
static bool no_reply(uint32_t opcode)
{
	return opcode == FUSE_FORGET || opcode == FUSE_BATCH_FORGET || opcode == FUSE_NOTIFY_REPLY;
}

/* One request from the entry: rebuilt as libfuse reads it, served, answered. */
static void serve(struct ring_thread *t)
{
	struct f2fs_fuse_uring *p = t->pool;
	struct fuse_in_header in;
	uint32_t psz = t->hdr.ent.payload_sz;
	size_t op;
	char *start;

	memcpy(&in, t->hdr.in_out, sizeof(in));
	t->commit_id = t->hdr.ent.commit_id;
	pthread_mutex_lock(&t->lock);
	t->replied = false;
	pthread_mutex_unlock(&t->lock);
	if (psz > p->payload_size || in.len < sizeof(in) + (size_t)psz ||
	    in.len - sizeof(in) - psz > URING_OP_IN_OUT_SZ) {
		f2fs_fuse_log(p->fs, F2FS_LOG_ERR,
			      "io_uring: malformed request (opcode %u, length %u, payload %u)",
			      in.opcode, in.len, psz);
		fill_reply(t, in.unique, -EIO, NULL, 0);
		return;
	}
	op = in.len - sizeof(in) - psz;
	start = t->payload - op - sizeof(in);
	memcpy(start, &in, sizeof(in));
	memcpy(start + sizeof(in), t->hdr.op_in, op);

	atomic_store(&t->unique, in.unique);
	fuse_session_process_buf(p->se, &(struct fuse_buf){ .mem = start, .size = in.len });
	pthread_mutex_lock(&t->lock);
	if (!t->replied && no_reply(in.opcode)) {
		fill_reply(t, in.unique, 0, NULL, 0);
		t->replied = true;
	}
	/* a handler that answers from another thread (none does today) */
	while (!t->replied)
		pthread_cond_wait(&t->cond, &t->lock);
	pthread_mutex_unlock(&t->lock);
	atomic_store(&t->unique, 0);
}

static void *ring_main(void *arg)
{
	struct ring_thread *t = arg;
	struct f2fs_fuse_uring *p = t->pool;
	struct io_uring_params params = { .flags = IORING_SETUP_SQE128 };
	bool served = false;
	cpu_set_t cpus;
	int err;

	/* The queue is its CPU's: serving there keeps the wake-up on it. */
	CPU_ZERO(&cpus);
	CPU_SET(t->qid, &cpus);
	(void)pthread_setaffinity_np(pthread_self(), sizeof(cpus), &cpus);

	err = io_uring_queue_init_params(4, &t->ring, &params);
	if (err) {
		f2fs_fuse_log(p->fs, F2FS_LOG_WARN, "io_uring: queue %u: no ring: %s",
			      t->qid, strerror(-err));
		atomic_store(&p->failed, true);
		atomic_store(&t->busy_since, -1);
		return NULL;
	}
	queue_cmd(t, URING_CMD_REGISTER, 0);
	for (;;) {
		struct __kernel_timespec ts = { .tv_nsec = STOP_CHECK_MS * 1000000L };
		struct io_uring_cqe *cqe = NULL;
		int res;

		atomic_store(&t->busy_since, 0);
		/* one system call: the reply (or the registration) and the next request */
		err = io_uring_submit_and_wait_timeout(&t->ring, &cqe, 1, &ts, NULL);
		if (atomic_load(&p->stop))
			break;
		/* liburing 2.3 may return the submission alone, without a completion */
		if (err == -ETIME || err == -EINTR || (err >= 0 && !cqe))
			continue;
		if (err < 0) {
			f2fs_fuse_log(p->fs, F2FS_LOG_ERR, "io_uring: queue %u: %s", t->qid,
				      strerror(-err));
			break;
		}
		res = cqe->res;
		io_uring_cqe_seen(&t->ring, cqe);
		if (res < 0) {
			/* the connection's end cancels the fetch; anything else is refusal */
			if (res == -ENOTCONN || res == -ECANCELED || res == -ENODEV)
				break;
			if (!served)
				f2fs_fuse_log(p->fs, F2FS_LOG_WARN,
					      "io_uring: queue %u: the kernel refused the ring (%s); "
					      "requests go through /dev/fuse", t->qid, strerror(-res));
			else	/* e.g. enable_uring turned off under the mount */
				f2fs_fuse_log(p->fs, F2FS_LOG_ERR,
					      "io_uring: queue %u: the kernel refused a reply (%s); its "
					      "caller waits until the mount is aborted", t->qid,
					      strerror(-res));
			atomic_store(&p->failed, true);
			break;
		}
		atomic_store(&t->busy_since, now_us());
		serve(t);
		served = true;
		atomic_fetch_add_explicit(&p->fs->uring_requests, 1, memory_order_relaxed);
		if (!queue_cmd(t, URING_CMD_COMMIT_AND_FETCH, t->commit_id)) {
			f2fs_fuse_log(p->fs, F2FS_LOG_ERR, "io_uring: queue %u: a reply could not "
				      "be committed", t->qid);
			break;
		}
	}
	atomic_store(&t->busy_since, -1);
	io_uring_queue_exit(&t->ring);
	return NULL;
}

/* Start a thread on queue qid; false if none could be. */
static bool add_thread(struct f2fs_fuse_uring *p, unsigned int qid)
{
	struct ring_thread *t;
	sigset_t all, old;
	bool ok = false;

	pthread_mutex_lock(&p->lock);
	if (p->per_queue[qid] >= MAX_PER_QUEUE || atomic_load(&p->stop))
		goto out;
	t = calloc(1, sizeof(*t));
	if (!t)
		goto out;
	t->mem = aligned_alloc(4096, REQ_ROOM + p->payload_size);
	if (!t->mem) {
		free(t);
		goto out;
	}
	t->pool = p;
	t->qid = qid;
	t->payload = t->mem + REQ_ROOM;
	t->iov[0] = (struct iovec){ .iov_base = &t->hdr, .iov_len = sizeof(t->hdr) };
	t->iov[1] = (struct iovec){ .iov_base = t->payload, .iov_len = p->payload_size };
	pthread_mutex_init(&t->lock, NULL);
	pthread_cond_init(&t->cond, NULL);
	atomic_init(&t->unique, 0);
	atomic_init(&t->busy_since, 0);
	/* signals stay with the thread of libfuse's loop, which they end */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	ok = pthread_create(&t->tid, NULL, ring_main, t) == 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!ok) {
		free(t->mem);
		free(t);
		goto out;
	}
	p->threads[atomic_load(&p->nthreads)] = t;
	atomic_fetch_add(&p->nthreads, 1);	/* after the slot: readers scan up to it */
	p->per_queue[qid]++;
	atomic_fetch_add(&p->fs->uring_threads, 1);
out:
	pthread_mutex_unlock(&p->lock);
	return ok;
}

/* Add a thread to each queue whose threads have all been busy for WATCH_MS. */
static void *watch_main(void *arg)
{
	struct f2fs_fuse_uring *p = arg;
	struct timespec tick = { .tv_nsec = WATCH_MS * 1000000L };

	while (!atomic_load(&p->stop) && !atomic_load(&p->failed)) {
		unsigned int n = atomic_load(&p->nthreads);
		int64_t now = now_us();

		nanosleep(&tick, NULL);
		for (unsigned int q = 0; q < p->nr_queues; q++) {
			bool stuck = true;

			for (unsigned int i = 0; i < n && stuck; i++) {
				long long since = atomic_load(&p->threads[i]->busy_since);

				if (p->threads[i]->qid == q && since >= 0 &&
				    (since == 0 || now - since < WATCH_MS * 1000))
					stuck = false;
			}
			if (stuck)
				add_thread(p, q);
		}
	}
	return NULL;
}

static void start_rings(struct f2fs_fuse_uring *p)
{
	sigset_t all, old;

	for (unsigned int q = 0; q < p->nr_queues; q++) {
		for (int i = 0; i < THREADS_PER_QUEUE; i++) {
			if (!add_thread(p, q)) {
				f2fs_fuse_log(p->fs, F2FS_LOG_WARN,
					      "io_uring: no thread for queue %u; requests go "
					      "through /dev/fuse", q);
				atomic_store(&p->failed, true);
				return;
			}
		}
	}
	atomic_store(&p->fs->uring_queues, p->nr_queues);
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	p->watching = pthread_create(&p->watcher, NULL, watch_main, p) == 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

static struct ring_thread *find_thread(struct f2fs_fuse_uring *p, uint64_t unique)
{
	unsigned int n = atomic_load(&p->nthreads);

	for (unsigned int i = 0; i < n; i++)
		if (atomic_load(&p->threads[i]->unique) == unique)
			return p->threads[i];
	return NULL;
}

/*
 * The INIT reply: ask for io_uring if the kernel offered it (libfuse 3.14
 * does not know the flag) and size the payload buffers as the kernel
 * checks them: the largest WRITE or the largest reply, at least 8 KiB.
 */
static bool init_reply(struct f2fs_fuse_uring *p, struct iovec *iov, int count, int32_t error)
{
	long page = sysconf(_SC_PAGESIZE);
	uint32_t flags, flags2, max_write;
	uint16_t max_pages;
	size_t size;
	char *o;

	if (error || count < 2 || iov[1].iov_len < INIT_OUT_MIN || !atomic_load(&p->offered))
		return false;
	o = iov[1].iov_base;
	memcpy(&flags, o + INIT_OUT_FLAGS, 4);
	memcpy(&flags2, o + INIT_OUT_FLAGS2, 4);
	memcpy(&max_write, o + INIT_OUT_MAX_WRITE, 4);
	memcpy(&max_pages, o + INIT_OUT_MAX_PAGES, 2);
	flags |= INIT_EXT;
	flags2 |= INIT2_OVER_IO_URING;
	memcpy(o + INIT_OUT_FLAGS, &flags, 4);
	memcpy(o + INIT_OUT_FLAGS2, &flags2, 4);
	size = (size_t)(max_pages ? max_pages : 32) * (size_t)(page > 0 ? page : 4096);
	if (size < max_write)
		size = max_write;
	if (size < 8192)
		size = 8192;
	p->payload_size = size;
	return true;
}

/* Replies: to the entry of their request, or (the rest) to /dev/fuse. */
static ssize_t dev_writev(int fd, struct iovec *iov, int count, void *userdata)
{
	struct f2fs_fuse *fs = userdata;
	struct f2fs_fuse_uring *p = fs->uring;
	struct fuse_out_header out = { 0 };
	bool rings = false;
	ssize_t n;

	if (count >= 1 && iov[0].iov_len >= sizeof(out))
		memcpy(&out, iov[0].iov_base, sizeof(out));
	if (out.unique) {
		struct ring_thread *t = find_thread(p, out.unique);

		if (t) {
			fill_reply(t, out.unique, out.error, iov + 1, count - 1);
			set_replied(t);
			return (ssize_t)out.len;
		}
		if (out.unique == atomic_load(&p->init_unique)) {
			atomic_store(&p->init_unique, 0);
			rings = init_reply(p, iov, count, out.error);
		}
	}
	n = writev(fd, iov, count);
	if (rings && n >= 0)
		start_rings(p);
	return n;
}

/*
 * What still comes through /dev/fuse.  INTERRUPTs are dropped, as by the
 * polling loop (loop.c: handlers never look for them, and libfuse would
 * keep them); INIT is noted for its reply.
 */
static ssize_t dev_read(int fd, void *buf, size_t len, void *userdata)
{
	struct f2fs_fuse *fs = userdata;
	struct f2fs_fuse_uring *p = fs->uring;

	for (;;) {
		ssize_t n = read(fd, buf, len);
		struct fuse_in_header in;

		if (n < (ssize_t)sizeof(in))
			return n;
		memcpy(&in, buf, sizeof(in));
		if (in.opcode == FUSE_INTERRUPT)
			continue;
		if (in.opcode == FUSE_INIT) {
			uint32_t flags = 0, flags2 = 0;
			const char *arg = (const char *)buf + sizeof(in);

			if ((size_t)n >= sizeof(in) + 20) {
				memcpy(&flags, arg + 12, 4);
				memcpy(&flags2, arg + 16, 4);
			}
			atomic_store(&p->offered, (flags & INIT_EXT) && (flags2 & INIT2_OVER_IO_URING));
			atomic_store(&p->init_unique, in.unique);
			if (!atomic_load(&p->offered))
				f2fs_fuse_log(fs, F2FS_LOG_WARN, "io_uring: the kernel did not offer it "
					      "at INIT; requests go through /dev/fuse");
		}
		return n;
	}
}

int f2fs_fuse_uring_loop(struct f2fs_fuse *fs, struct fuse_session *se)
{
	const struct fuse_custom_io io = { .writev = dev_writev, .read = dev_read };
	struct f2fs_fuse_uring *p = calloc(1, sizeof(*p));
	int err;

	if (!p)
		return -ENOMEM;
	p->fs = fs;
	p->se = se;
	p->fd = fuse_session_fd(se);
	p->nr_queues = possible_cpus();
	p->threads = calloc((size_t)p->nr_queues * MAX_PER_QUEUE, sizeof(*p->threads));
	p->per_queue = calloc(p->nr_queues, sizeof(*p->per_queue));
	pthread_mutex_init(&p->lock, NULL);
	fs->uring = p;
	err = p->threads && p->per_queue ? fuse_session_custom_io(se, &io, p->fd) : -ENOMEM;
	if (!err)
		err = fuse_session_loop(se);

	/* the threads end within STOP_CHECK_MS, a request being served first */
	atomic_store(&p->stop, true);
	if (p->watching)
		pthread_join(p->watcher, NULL);
	for (unsigned int i = 0; i < atomic_load(&p->nthreads); i++)
		pthread_join(p->threads[i]->tid, NULL);
	return err;
}

/*
 * After fuse_session_destroy(): until then a notification from another
 * thread may still come through dev_writev and look at the threads.
 */
void f2fs_fuse_uring_free(struct f2fs_fuse *fs)
{
	struct f2fs_fuse_uring *p = fs->uring;

	if (!p)
		return;
	for (unsigned int i = 0; i < atomic_load(&p->nthreads); i++) {
		struct ring_thread *t = p->threads[i];

		pthread_mutex_destroy(&t->lock);
		pthread_cond_destroy(&t->cond);
		free(t->mem);
		free(t);
	}
	pthread_mutex_destroy(&p->lock);
	free(p->threads);
	free(p->per_queue);
	free(p);
	fs->uring = NULL;
}

#endif /* F2FS_FUSE_URING */
