// SPDX-License-Identifier: GPL-2.0
/*
 * A device that starts failing in the middle of a workload, as a disk under
 * a dm-error table does (fstests' generic/475): from some request on, reads
 * say EIO and writes are lost.  Through the host's page cache a lost write
 * succeeds and the next flush says EIO once; opened O_DIRECT, the write
 * itself says EIO.  Whatever the workload meets, a device error is not
 * corruption: the mount must not mark the filesystem as needing fsck, and
 * the medium must mount writable again (rolling fsync()ed files forward)
 * with fsck.f2fs finding nothing to fix.
 */
#include <limits.h>

#include "rwimage.h"

/* A write the host holds in its page cache, not yet on the medium. */
struct pending {
	uint64_t off;
	size_t len;
	uint8_t *data;
};

struct faulty {
	uint8_t *medium;		/* what survives */
	uint8_t *cache;			/* what reads see before the failure */
	size_t len;
	unsigned long ops, fail_at;	/* requests so far; the first that fails */
	unsigned long heal_at;		/* the first that works again (the table reloaded) */
	bool direct;			/* writes say EIO themselves */
	bool failed;
	bool error_pending;		/* the next flush says EIO */
	struct pending *pend;		/* writes since the last flush */
	size_t npend, cap;
	uint32_t rnd;			/* which of them reach the medium at the failure */
	uint64_t bad_block;		/* a block no read gets (0: none) */
};

/*
 * The failure: of the writes since the last flush, the host wrote back
 * some (in no order it promised) and loses the rest.
 */
static void fail_now(struct faulty *f)
{
	for (size_t i = 0; i < f->npend; i++) {
		f->rnd = f->rnd * 1664525u + 1013904223u;
		if (f->rnd >> 31)
			memcpy(f->medium + f->pend[i].off, f->pend[i].data, f->pend[i].len);
		else
			f->error_pending = true;	/* a write back that failed */
		free(f->pend[i].data);
	}
	f->npend = 0;
	f->failed = true;
	memcpy(f->cache, f->medium, f->len);	/* the lost pages are gone from the cache too */
}

static void settle(struct faulty *f)
{
	for (size_t i = 0; i < f->npend; i++) {
		memcpy(f->medium + f->pend[i].off, f->pend[i].data, f->pend[i].len);
		free(f->pend[i].data);
	}
	f->npend = 0;
}

static bool trace;	/* F2FS_EIO_TRACE: print every request */

static bool failing(struct faulty *f)
{
	++f->ops;
	if (!f->failed && f->ops == f->fail_at)
		fail_now(f);
	else if (f->failed && f->ops >= f->heal_at)
		f->failed = false;	/* the error, if not yet reported, still is at a flush */
	return f->failed;
}

static int faulty_rw(struct f2fs_dev *dev, bool write, const struct iovec *iov, int iovcnt,
		     uint64_t off, size_t total)
{
	struct faulty *f = f2fs_dev_priv(dev);
	struct pending *p;

	if (off > f->len || total > f->len - off)
		return -EIO;
	if (!write && f->bad_block && f->bad_block * F2FS_BLKSIZE >= off &&
	    f->bad_block * F2FS_BLKSIZE < off + total)
		return -EIO;
	if (trace)
		fprintf(stderr, "request %lu: %s of %zu blocks at %lu%s\n", f->ops + 1,
			write ? "write" : "read", total / F2FS_BLKSIZE,
			(unsigned long)(off / F2FS_BLKSIZE), f->failed ? " (failing)" : "");
	if (failing(f)) {
		if (!write || f->direct)
			return -EIO;
		f->error_pending = true;
		return 0;
	}
	if (write) {
		if (f->npend == f->cap) {
			size_t cap = f->cap ? 2 * f->cap : 64;
			struct pending *n = realloc(f->pend, cap * sizeof(*n));

			if (!n)
				return -ENOMEM;
			f->pend = n;
			f->cap = cap;
		}
		p = &f->pend[f->npend];
		p->data = malloc(total);
		if (!p->data)
			return -ENOMEM;
		p->off = off;
		p->len = total;
		f->npend++;
	}
	for (int i = 0, done = 0; i < iovcnt; off += iov[i].iov_len, done += iov[i].iov_len, i++) {
		if (write) {
			memcpy(f->cache + off, iov[i].iov_base, iov[i].iov_len);
			memcpy(p->data + done, iov[i].iov_base, iov[i].iov_len);
		} else {
			memcpy(iov[i].iov_base, f->cache + off, iov[i].iov_len);
		}
	}
	return 0;
}

static int faulty_flush(struct f2fs_dev *dev)
{
	struct faulty *f = f2fs_dev_priv(dev);

	if (trace)
		fprintf(stderr, "request %lu: flush%s\n", f->ops + 1, f->failed ? " (failing)" : "");
	if (failing(f) && f->direct)
		return -EIO;
	settle(f);
	if (!f->error_pending)
		return 0;
	f->error_pending = false;
	return -EIO;
}

static int faulty_discard(struct f2fs_dev *dev, uint64_t off, uint64_t len)
{
	return 0;
}

static void faulty_release(struct f2fs_dev *dev)
{
}

static const struct f2fs_dev_ops faulty_ops = {
	.rw = faulty_rw, .flush = faulty_flush, .discard = faulty_discard,
	.release = faulty_release, .in_memory = true,
};

static uint32_t rnd_state;

static uint32_t rnd(uint32_t n)
{
	rnd_state = rnd_state * 1103515245u + 12345u;
	return (rnd_state >> 8) % n;
}

#define NFILES 12
#define STEPS 1500
#define POINTS 12

/* A mix of namespace, data, xattr, fsync and checkpoint operations; errors are expected. */
static void workload(struct f2fs_sb *sb, unsigned int steps)
{
	static uint8_t buf[8 * F2FS_BLKSIZE];
	const struct f2fs_cred cred = { .umask = 022 };
	uint32_t root = f2fs_root_ino(sb), dirs[2] = { root, root };
	struct f2fs_stat st;
	char name[32];

	if (f2fs_mkdir(sb, root, "d", 1, 0755, &cred, &st) == 0)
		dirs[1] = st.ino;
	for (unsigned int i = 0; i < steps; i++) {
		uint32_t dir = dirs[rnd(2)], n = rnd(NFILES);
		uint32_t ino = 0;

		snprintf(name, sizeof(name), "f%u", n);
		if (f2fs_lookup(sb, dir, name, strlen(name), &st) == 0)
			ino = st.ino;
		switch (rnd(10)) {
		case 0:
		case 1:
			if (!ino)
				f2fs_mknod(sb, dir, name, strlen(name), S_IFREG | 0644, 0, 0, &cred,
					   &st);
			break;
		case 2:
		case 3:
			if (ino) {
				uint32_t blocks = 1 + rnd(8);

				rw_pattern(buf, i);
				f2fs_write(sb, ino, buf, blocks * F2FS_BLKSIZE,
					   (uint64_t)rnd(64) * F2FS_BLKSIZE);
			}
			break;
		case 4:
			if (ino)
				f2fs_fsync(sb, ino, rnd(2));
			break;
		case 5:
			if (ino) {
				char to[32];

				snprintf(to, sizeof(to), "f%u", rnd(NFILES));
				f2fs_rename(sb, dir, name, strlen(name), dirs[rnd(2)], to,
					    strlen(to), 0, &cred);
			}
			break;
		case 6:
			if (ino)
				f2fs_unlink(sb, dir, name, strlen(name));
			break;
		case 7:
			if (ino) {
				const struct f2fs_setattr sa = {
					.valid = F2FS_SET_SIZE,
					.size = (uint64_t)rnd(48) * 1000,
				};

				f2fs_setattr(sb, ino, &sa, &st);
			}
			break;
		case 8:
			if (ino)
				f2fs_setxattr(sb, ino, "user.x", name, strlen(name), 0);
			break;
		case 9:
			if (rnd(4) == 0)
				f2fs_sync_fs(sb, false);
			else
				f2fs_fsync(sb, dir, false);
			break;
		}
	}
}

static unsigned int runs;

static int create(struct f2fs_sb *sb, const char *name)
{
	const struct f2fs_cred cred = { .umask = 022 };
	struct f2fs_stat st;

	return f2fs_mknod(sb, f2fs_root_ino(sb), name, strlen(name), S_IFREG | 0644, 0, 0, &cred,
			  &st);
}

/* The workload of `seed` over a device that fails from request fail_at on; the requests made. */
static unsigned long one(const struct rwimage *im, uint32_t seed, unsigned long fail_at,
			 unsigned long heal_at, bool direct, bool writeback)
{
	struct faulty f = {
		.len = im->len, .fail_at = fail_at, .heal_at = heal_at, .direct = direct,
		.rnd = seed * 7919 + fail_at,
	};
	struct f2fs_mount_opts o = {
		.log_level = F2FS_LOG_ERR, .log = rw_log,
		.cache_size = 64 << 10, .no_dcache = true, .writeback = writeback,
	};
	struct rwimage back = { .len = im->len };
	struct f2fs_status status = { 0 };
	struct f2fs_dev *dev;
	struct f2fs_sb *sb = NULL;
	int err;

	f.medium = malloc(im->len);
	f.cache = malloc(im->len);
	if (!f.medium || !f.cache) {
		free(f.medium);
		free(f.cache);
		return 0;
	}
	memcpy(f.medium, im->buf, im->len);
	memcpy(f.cache, im->buf, im->len);
	err = f2fs_dev_open_ops(&faulty_ops, &f, f.len, false, &dev);
	if (!err)
		err = f2fs_mount_dev(dev, &o, &sb);
	if (err) {
		/* the device failed under the mount itself: fine, if it said so */
		CHECK(fail_at < 64, "mount before the failure: %d (%s)", err, rw_last_error);
		goto medium;
	}
	rnd_state = seed;
	rw_last_error[0] = 0;
	workload(sb, STEPS);
	f2fs_get_status(sb, &status);
	CHECK(!status.need_fsck, "seed %u, failure at request %lu (%s%s): a device error was "
	      "taken for corruption: %s", seed, fail_at, direct ? "direct" : "cached",
	      writeback ? ", writeback" : "", rw_last_error);
	f2fs_umount(sb);
medium:
	settle(&f);	/* no failure came: what was written stays */
	runs++;
	/*
	 * The device works again; a lost write the last mount never flushed
	 * after is still to be reported, to whoever flushes first.
	 */
	f.failed = false;
	f.fail_at = f.heal_at = ULONG_MAX;
	memcpy(f.cache, f.medium, f.len);
	err = f2fs_dev_open_ops(&faulty_ops, &f, f.len, false, &dev);
	if (!err)
		err = f2fs_mount_dev(dev, &o, &sb);
	CHECK(err == 0, "seed %u, failure at %lu: the medium mounts writable: %d (%s)", seed,
	      fail_at, err, rw_last_error);
	if (!err) {
		CHECK(create(sb, "new") == 0 && f2fs_sync_fs(sb, false) == 0,
		      "seed %u, failure at %lu: the medium takes a change: %s", seed, fail_at,
		      rw_last_error);
		f2fs_umount(sb);
		settle(&f);
		back.buf = f.medium;
		CHECK(rw_fsck_clean(&back), "seed %u, failure at %lu to %lu (%s%s): fsck.f2fs",
		      seed, fail_at, heal_at, direct ? "direct" : "cached",
		      writeback ? ", writeback" : "");
	}
	free(f.pend);
	free(f.cache);
	free(f.medium);
	return f.ops;
}

/*
 * A checkpoint pack that cannot be read is an error the mount gets past (it
 * uses the other pack), not one that stops the mount's checkpoints.
 */
static void unreadable_pack(const struct rwimage *im)
{
	struct faulty f = { .len = im->len, .fail_at = ULONG_MAX, .heal_at = ULONG_MAX };
	struct f2fs_mount_opts o = { .log_level = F2FS_LOG_ERR, .log = rw_log };
	const uint8_t *raw = im->buf + F2FS_SUPER_OFFSET;
	uint32_t cp = raw[SB_CP_BLKADDR] | raw[SB_CP_BLKADDR + 1] << 8 |
		      raw[SB_CP_BLKADDR + 2] << 16 | (uint32_t)raw[SB_CP_BLKADDR + 3] << 24;
	uint32_t log_blocks = raw[SB_LOG_BLOCKS_PER_SEG];
	struct f2fs_dev *dev;
	struct f2fs_sb *sb = NULL;
	int err;

	f.medium = malloc(im->len);
	f.cache = malloc(im->len);
	if (!f.medium || !f.cache)
		goto out;
	memcpy(f.medium, im->buf, im->len);
	memcpy(f.cache, im->buf, im->len);
	for (int pack = 0; pack < 2; pack++) {
		f.bad_block = cp + ((uint64_t)pack << log_blocks);
		err = f2fs_dev_open_ops(&faulty_ops, &f, f.len, false, &dev);
		if (!err)
			err = f2fs_mount_dev(dev, &o, &sb);
		CHECK(err == 0, "mount with pack %d unreadable: %d (%s)", pack + 1, err,
		      rw_last_error);
		if (err)
			continue;
		CHECK(create(sb, pack ? "p2" : "p1") == 0 && f2fs_sync_fs(sb, false) == 0,
		      "pack %d unreadable: the mount takes a change and a checkpoint (%s)",
		      pack + 1, rw_last_error);
		f2fs_umount(sb);
		settle(&f);
	}
	{
		const struct rwimage back = { .buf = f.medium, .len = f.len };

		CHECK(rw_fsck_clean(&back), "fsck.f2fs after the mounts with a pack unreadable");
	}
out:
	free(f.pend);
	free(f.cache);
	free(f.medium);
}

int main(void)
{
	struct rwimage im;
	unsigned long seeds = 6;

	if (!rw_image(&im, NULL, 64))
		return check_done("test_eio");
	f2fs_umount(im.sb);
	im.sb = NULL;
	/* F2FS_EIO_SEEDS=n for a longer search */
	if (getenv("F2FS_EIO_SEEDS"))
		seeds = strtoul(getenv("F2FS_EIO_SEEDS"), NULL, 0);
	trace = getenv("F2FS_EIO_TRACE");
	unreadable_pack(&im);
	if (getenv("F2FS_EIO_ONE")) {	/* seed,fail,heal: one case */
		unsigned long s, a, h;

		if (sscanf(getenv("F2FS_EIO_ONE"), "%lu,%lu,%lu", &s, &a, &h) == 3)
			one(&im, s, a, h, s & 1, s % 3 == 0);
		seeds = 0;
	}
	for (uint32_t seed = 1; seed <= seeds && check_failures < 3; seed++) {
		bool direct = seed & 1, writeback = seed % 3 == 0;
		/* the requests of the whole workload, then failures spread over them */
		unsigned long total = one(&im, seed, ULONG_MAX, ULONG_MAX, direct, writeback);

		for (unsigned int k = 1; k <= POINTS && check_failures < 3; k++) {
			unsigned long at = 1 + total * k / (POINTS + 1);

			/* a failure that lasts, and one that passes after a few requests */
			one(&im, seed, at, ULONG_MAX, direct, writeback);
			one(&im, seed, at, at + 1 + k % 4, direct, writeback);
		}
	}
	printf("test_eio: %u device failures checked\n", runs);
	rw_nr_errors = 0;
	rw_free(&im);
	return check_done("test_eio");
}
