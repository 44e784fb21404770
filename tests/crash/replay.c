// SPDX-License-Identifier: GPL-2.0
/*
 * Deterministic crash replay, as dm-log-writes and CrashMonkey do it: a
 * workload runs on a mount whose device (tests/lib/testdev.c's write log)
 * records every block write and every flush.  Afterwards the device is
 * rebuilt as a crash could have left it
 *
 *  - at every flush (every write before it, none after),
 *  - at points between two flushes, with all the writes of the earlier
 *    epochs and a random subset of the current epoch's (a volatile cache
 *    may lose any of them, in any order),
 *
 * and each state is mounted read-write (roll-forward recovery runs),
 * checked against what fsync()/sync had acknowledged before the state's
 * last flush, unmounted, and given to fsck.f2fs -f --dry-run, which must
 * find nothing to fix.
 *
 *   replay [-s SEED] [-r RANDOM_STATES_PER_EPOCH] [-n] (-n: no fsck)
 *
 * Prints the number of states checked; exits nonzero on any failure.
 */
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../unit/rwimage.h"
#include "testdev.h"

#define MAX_EXPECT	64
#define MAX_FILE	(64 << 10)

/* One acknowledged fact: after record `pos`, path holds `len` bytes of pattern `seed` (or is absent). */
struct expect {
	size_t pos;
	const char *dir, *name;
	bool present;
	uint32_t len;
	uint8_t seed;
};

static struct expect expects[MAX_EXPECT];
static int nexpects;
static struct wlog wlog;
static const struct f2fs_cred cred = { .umask = 022 };

static void pattern(uint8_t *buf, size_t len, uint8_t seed)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = (uint8_t)(i * 31 + seed);
}

static void ack(const char *dir, const char *name, bool present, uint32_t len, uint8_t seed)
{
	if (nexpects < MAX_EXPECT)
		expects[nexpects++] = (struct expect){ wlog.nr, dir, name, present, len, seed };
}

static uint32_t lookup_dir(struct f2fs_sb *sb, const char *dir)
{
	struct f2fs_stat st;

	if (!dir)
		return f2fs_root_ino(sb);
	return f2fs_lookup(sb, f2fs_root_ino(sb), dir, strlen(dir), &st) ? 0 : st.ino;
}

static uint32_t create(struct f2fs_sb *sb, const char *dir, const char *name)
{
	struct f2fs_stat st;
	uint32_t d = lookup_dir(sb, dir);

	if (!d || f2fs_mknod(sb, d, name, strlen(name), S_IFREG | 0644, 0, 0, &cred, &st))
		return 0;
	return st.ino;
}

static void put(struct f2fs_sb *sb, uint32_t ino, uint32_t len, uint8_t seed)
{
	static uint8_t buf[MAX_FILE];

	pattern(buf, len, seed);
	f2fs_write(sb, ino, buf, len, 0);
}

/* Bytes [off, off + n) of a file holding pattern seed. */
static void put_range(struct f2fs_sb *sb, uint32_t ino, uint32_t off, uint32_t n, uint8_t seed)
{
	static uint8_t buf[MAX_FILE];

	pattern(buf, off + n, seed);
	f2fs_write(sb, ino, buf + off, n, off);
}

/*
 * ACE-style short sequences: writes and fsync, a new directory, appends,
 * a rename and a directory fsync, fdatasync, truncation, unlink and sync,
 * atomic writes (committed, and replaced then aborted, each across a
 * checkpoint inside it), and changes never acknowledged.
 */
static void workload(struct f2fs_sb *sb)
{
	struct f2fs_stat st;
	struct f2fs_setattr sa = { .valid = F2FS_SET_SIZE, .size = 5000 };
	uint32_t a, b, c, e, d, g;

	a = create(sb, NULL, "a");
	put(sb, a, 8192, 1);
	f2fs_fsync(sb, a, false);
	ack(NULL, "a", true, 8192, 1);

	f2fs_mkdir(sb, f2fs_root_ino(sb), "d", 1, 0755, &cred, &st);
	d = st.ino;
	b = create(sb, "d", "b");
	put(sb, b, 100, 2);
	f2fs_fsync(sb, b, false);
	ack("d", "b", true, 100, 2);

	put(sb, a, 12288, 1);
	f2fs_fsync(sb, a, false);
	ack(NULL, "a", true, 12288, 1);

	f2fs_rename(sb, f2fs_root_ino(sb), "a", 1, d, "a2", 2, 0);
	f2fs_fsync(sb, d, false);
	ack(NULL, "a", false, 0, 0);
	ack("d", "a2", true, 12288, 1);

	c = create(sb, NULL, "c");
	put(sb, c, 20000, 3);
	f2fs_fsync(sb, c, true);
	ack(NULL, "c", true, 20000, 3);

	f2fs_setattr(sb, c, &sa, &st);
	f2fs_fsync(sb, c, false);
	ack(NULL, "c", true, 5000, 3);

	put(sb, c, 30000, 4);		/* rewritten in place, then fsync()ed */
	f2fs_fsync(sb, c, false);
	ack(NULL, "c", true, 30000, 4);

	f2fs_unlink(sb, d, "b", 1);
	f2fs_sync_fs(sb, false);
	ack("d", "b", false, 0, 0);

	/* all of an atomic write or none of it: never pattern 7 over part of 6 */
	g = create(sb, NULL, "g");
	put(sb, g, 16384, 6);
	f2fs_fsync(sb, g, false);
	ack(NULL, "g", true, 16384, 6);
	CHECK(f2fs_start_atomic_write(sb, g, false, 1) == 0, "atomic write starts");
	put_range(sb, g, 0, 8192, 7);
	f2fs_sync_fs(sb, false);	/* the COW inode checkpointed, as an orphan */
	put_range(sb, g, 8192, 24576 - 8192, 7);
	CHECK(f2fs_commit_atomic_write(sb, g) == 0, "atomic write commits");
	ack(NULL, "g", true, 24576, 7);

	CHECK(f2fs_start_atomic_write(sb, g, true, 1) == 0, "atomic replace starts");
	put_range(sb, g, 4096, 100, 8);
	f2fs_sync_fs(sb, false);
	CHECK(f2fs_abort_atomic_write(sb, g) == 0, "atomic replace aborts");
	f2fs_sync_fs(sb, false);
	ack(NULL, "g", true, 24576, 7);

	e = create(sb, NULL, "e");	/* never acknowledged */
	put(sb, e, 4096, 5);
}

/* Is what path holds one of the values allowed at a state whose last flush is `flushed`? */
static bool state_ok(struct f2fs_sb *sb, size_t flushed, char *why, size_t whylen)
{
	static uint8_t got[MAX_FILE], want[MAX_FILE];

	for (int i = 0; i < nexpects; i++) {
		const struct expect *x = &expects[i];
		bool latest = x->pos <= flushed, matched = false;
		struct f2fs_stat st;
		uint32_t d;
		int err;

		/* check each path once, at its latest acknowledged fact */
		for (int k = i + 1; k < nexpects; k++)
			if (expects[k].pos <= flushed && !strcmp(expects[k].name, x->name) &&
			    (expects[k].dir == x->dir || (expects[k].dir && x->dir &&
							  !strcmp(expects[k].dir, x->dir))))
				latest = false;
		if (!latest)
			continue;
		d = lookup_dir(sb, x->dir);
		err = d ? f2fs_lookup(sb, d, x->name, strlen(x->name), &st) : -ENOENT;
		/* the acknowledged value, or any later one (not yet acknowledged, may have landed) */
		for (int k = i; k < nexpects && !matched; k++) {
			const struct expect *y = &expects[k];

			if (k != i && (strcmp(y->name, x->name) || (y->dir != x->dir &&
				       (!y->dir || !x->dir || strcmp(y->dir, x->dir)))))
				continue;
			if (!y->present) {
				matched = err == -ENOENT;
				continue;
			}
			if (err || st.size != y->len)
				continue;
			pattern(want, y->len, y->seed);
			matched = f2fs_read(sb, st.ino, got, y->len, 0) == (ssize_t)y->len &&
				  !memcmp(got, want, y->len);
		}
		if (!matched) {
			snprintf(why, whylen, "%s%s%s: want %s%u bytes (acknowledged at record %zu), "
				 "lookup %d size %llu", x->dir ? x->dir : "", x->dir ? "/" : "",
				 x->name, x->present ? "" : "absent, or ", x->len, x->pos, err,
				 err ? 0ull : (unsigned long long)st.size);
			return false;
		}
	}
	return true;
}

static uint64_t rnd_state = 88172645463325252ull;

static uint64_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

static int nstates, nfailed;
static bool run_fsck = true;

/*
 * Rebuild: base, every write of records [0, upto), and of records
 * [upto, end) those `keep` allows (a crash inside an epoch).
 */
static void check_state(const uint8_t *base, size_t len, size_t upto, size_t end,
			const uint8_t *keep, size_t flushed, const char *what)
{
	struct rwimage im = { .len = len };
	char why[512] = "";
	int err;

	im.buf = malloc(len);
	if (!im.buf)
		return;
	memcpy(im.buf, base, len);
	for (size_t r = 0; r < end; r++) {
		const struct wlog_rec *w = &wlog.rec[r];

		if (w->kind != WLOG_WRITE || (r >= upto && !(keep && keep[r - upto])))
			continue;
		memcpy(im.buf + (size_t)w->blkaddr * F2FS_BLKSIZE, wlog_block(&wlog, w), F2FS_BLKSIZE);
	}
	nstates++;
	err = rw_mount(&im);
	if (err) {
		snprintf(why, sizeof(why), "does not mount: %d", err);
	} else if (state_ok(im.sb, flushed, why, sizeof(why))) {
		err = f2fs_umount(im.sb);
		im.sb = NULL;
		if (err)
			snprintf(why, sizeof(why), "unmount failed: %d", err);
		else if (run_fsck && !rw_fsck_clean(&im))
			snprintf(why, sizeof(why), "fsck.f2fs finds something to fix");
	}
	if (*why) {
		nfailed++;
		CHECK(0, "crash state %s (records 0..%zu%s): %s", what, upto,
		      keep ? " and some of the epoch after" : "", why);
	}
	rw_done(&im);
}

int main(int argc, char **argv)
{
	struct rwimage im;
	struct f2fs_mount_opts o = { .log_level = F2FS_LOG_ERR, .log = rw_log };
	struct f2fs_dev *dev;
	uint8_t *base;
	int per_epoch = 4, opt;
	size_t last_flush = 0, nflush = 0;

	while ((opt = getopt(argc, argv, "s:r:n")) != -1) {
		if (opt == 's')
			rnd_state = strtoull(optarg, NULL, 0) | 1;
		else if (opt == 'r')
			per_epoch = atoi(optarg);
		else if (opt == 'n')
			run_fsck = false;
	}
	memset(&im, 0, sizeof(im));
	im.buf = make_image(NULL, 64, NULL, &im.len);
	if (!im.buf)
		return check_done("crash replay");
	base = malloc(im.len);
	if (!base)
		return 1;
	memcpy(base, im.buf, im.len);
	CHECK(wlog_open_dev(&wlog, im.buf, im.len, &dev) == 0, "log device");
	wlog.recording = true;
	CHECK(f2fs_mount_dev(dev, &o, &im.sb) == 0, "mount of a fresh image");
	if (!im.sb)
		return check_done("crash replay");
	workload(im.sb);
	f2fs_umount(im.sb);
	im.sb = NULL;
	wlog.recording = false;

	/* every flush, and random points (with random losses) inside each epoch */
	for (size_t r = 0; r <= wlog.nr; r++) {
		bool is_flush = r < wlog.nr && wlog.rec[r].kind == WLOG_FLUSH;
		char what[64];

		if (r < wlog.nr && !is_flush)
			continue;
		/* the epoch (last_flush, r): writes in flight when the crash came */
		for (int k = 0; k < per_epoch && r > last_flush + 1; k++) {
			size_t n = r - last_flush;
			size_t cut = last_flush + 1 + rnd() % n;
			uint8_t *keep = malloc(cut - last_flush);

			for (size_t i = 0; keep && i < cut - last_flush; i++)
				keep[i] = (rnd() & 1) != 0;
			snprintf(what, sizeof(what), "in epoch %zu, cut at %zu", nflush, cut);
			check_state(base, im.len, last_flush, cut, keep, last_flush, what);
			free(keep);
		}
		if (r == wlog.nr)
			break;
		snprintf(what, sizeof(what), "at flush %zu", nflush);
		check_state(base, im.len, r + 1, r + 1, NULL, r + 1, what);
		last_flush = r + 1;
		nflush++;
	}
	printf("crash replay: %zu writes, %zu flushes recorded; %d crash states checked, %d failed\n",
	       wlog.nr_data, nflush, nstates, nfailed);
	wlog_free(&wlog);
	free(base);
	free(im.buf);
	return check_done("crash replay");
}
