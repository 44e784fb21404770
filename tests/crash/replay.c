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
 *    may lose any of them), and in some of these states the kept writes
 *    land in a random order (a block written twice in the epoch may keep
 *    its older contents),
 *
 * and each state is mounted read-write (roll-forward recovery runs),
 * checked against what fsync()/sync had acknowledged before the state's
 * last flush, unmounted, and given to fsck.f2fs -f --dry-run, which must
 * find nothing to fix.  A state rebuilt from the same writes as one
 * already checked is counted but not checked again.
 *
 * The workloads: a mixed one (fsync, a new directory, appends, rename and
 * directory fsync, fdatasync, truncation, unlink and sync, atomic writes,
 * changes never acknowledged); atomic writes (commit, replace, abort, close
 * without commit, an inline file, two files); renames (over a file,
 * RENAME_EXCHANGE, a directory into another, fsync of the old parent);
 * directory fsync (nested new directories, unlinks, a directory of many
 * blocks); and the ACE-style sequences: every sequence of up to -l
 * operations from creat, write, link, rename, truncate, falloc on a
 * checkpointed image with files A, B, D/C, ended by fsync or fdatasync of
 * the file worked on, alternating two sets of mkfs features.
 *
 *   replay [-s SEED] [-r STATES_PER_EPOCH] [-l ACE_LEN] [-w WORKLOAD] [-n] [-p] [-v]
 *
 * -n: no fsck; -w: only workloads whose name starts with WORKLOAD; -p: a
 * state that needs an fsync's data to land before its nodes fails (see
 * check_state); -R: mount the crash states with norecovery (the checks
 * must then fail).  Prints
 * the number of states checked; exits nonzero on any failure.
 */
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../unit/rwimage.h"
#include "testdev.h"

#define MAX_FILE	(64 << 10)
#define MAX_PATHS	48
#define MAX_INODES	48
#define MAX_VERS	2048
#define NAME_LEN	40

/*
 * The model: what each path names (a model inode, or nothing) and what
 * each inode holds, as the live mount shows it.  Every change notes a
 * version of the paths it touched; fsync/sync notes acknowledged ones.  A
 * crash state must show, for every path, its last version acknowledged
 * before the state's last flush or any version after that one.
 */
struct minode {
	bool dir;
	bool atomic;		/* an atomic write is open: `durable` is what may be on disk */
	uint32_t len, durable_len;
	uint8_t *data, *durable;
};

struct mpath {
	char name[NAME_LEN];
	int id;			/* model inode, -1: absent */
	int last_id;		/* the inode it named last: may still show it after a crash */
	int gone_id;		/* renamed away from that inode: its fsync makes the name go */
	int moved_from;		/* moved here with its directory: may still be there */
};

struct version {
	size_t pos;		/* write log records before it */
	int path;
	bool acked, present, dir;
	uint32_t len;
	uint8_t *data;
	int alt;		/* or this path shows it (moved_from at the time) */
};

static struct minode inodes[MAX_INODES];
static struct mpath paths[MAX_PATHS];
static struct version vers[MAX_VERS];
static int ninodes, npaths, nvers;
static struct wlog wlog;
static const struct f2fs_cred cred = { .umask = 022 };
static bool verbose;

static void model_reset(void)
{
	for (int i = 0; i < ninodes; i++) {
		free(inodes[i].data);
		free(inodes[i].durable);
	}
	for (int i = 0; i < nvers; i++)
		free(vers[i].data);
	memset(inodes, 0, sizeof(inodes));
	ninodes = npaths = nvers = 0;
}

static int new_inode(bool dir)
{
	struct minode *m;

	if (ninodes == MAX_INODES)
		return -1;
	m = &inodes[ninodes];
	m->dir = dir;
	m->data = calloc(1, MAX_FILE);
	m->durable = calloc(1, MAX_FILE);
	return ninodes++;
}

static void push_version(int p, bool acked, bool present, bool dir, uint32_t len,
			 const uint8_t *data, size_t pos)
{
	struct version *v;

	if (nvers == MAX_VERS) {
		CHECK(0, "more than %d versions: raise MAX_VERS", MAX_VERS);
		return;
	}
	v = &vers[nvers++];
	*v = (struct version){ pos, p, acked, present, dir, len, NULL, -1 };
	if (present && !dir && len) {
		v->data = malloc(len);
		if (v->data)
			memcpy(v->data, data, len);
	}
}

/* The path's index; a path seen for the first time was absent before the workload. */
static int pidx(const char *name)
{
	for (int i = 0; i < npaths; i++)
		if (!strcmp(paths[i].name, name))
			return i;
	if (npaths == MAX_PATHS) {
		CHECK(0, "more than %d paths", MAX_PATHS);
		return 0;
	}
	snprintf(paths[npaths].name, NAME_LEN, "%s", name);
	paths[npaths].id = paths[npaths].last_id = paths[npaths].gone_id = -1;
	paths[npaths].moved_from = -1;
	push_version(npaths, true, false, false, 0, NULL, 0);
	return npaths++;
}

/* A version of path p as the model has it now (acked: as much as may be on disk). */
static void snap(int p, bool acked)
{
	int id = paths[p].id;
	const struct minode *m = id >= 0 ? &inodes[id] : NULL;

	if (!m)
		push_version(p, acked, false, false, 0, NULL, wlog.nr);
	else if (m->atomic)
		push_version(p, acked, true, m->dir, m->durable_len, m->durable, wlog.nr);
	else
		push_version(p, acked, true, m->dir, m->len, m->data, wlog.nr);
	if (nvers && vers[nvers - 1].path == p && m)
		vers[nvers - 1].alt = paths[p].moved_from;
}

/*
 * A change to inode id (or to path p's name): unacknowledged versions of
 * its names, and of the names it had, which a crash may leave to it (an
 * fsync()ed file whose directory's rename did not reach the disk).
 */
static void note(int id, int p)
{
	for (int i = 0; i < npaths; i++) {
		if (i == p || (id >= 0 && paths[i].id == id)) {
			snap(i, false);
		} else if (id >= 0 && paths[i].id < 0 && paths[i].last_id == id) {
			const struct minode *m = &inodes[id];

			if (!m->atomic)
				push_version(i, false, true, m->dir, m->len, m->data, wlog.nr);
		}
	}
}

/* Acknowledged: every name of the inodes in `ids`, and the names they were renamed from. */
static void ack_ids(const bool *ids)
{
	for (int i = 0; i < npaths; i++) {
		int id = paths[i].id >= 0 ? paths[i].id : paths[i].gone_id;

		if (id >= 0 && ids[id])
			snap(i, true);
	}
}

static void ack_all(void)
{
	for (int i = 0; i < npaths; i++) {
		paths[i].moved_from = -1;	/* the directory's rename is in the checkpoint */
		snap(i, true);
	}
}

/* Look path up from the root: its stat (0) or -ENOENT; *parent its directory (0: none). */
static int resolve(struct f2fs_sb *sb, const char *path, uint32_t *parent, const char **base,
		   struct f2fs_stat *st)
{
	uint32_t dir = f2fs_root_ino(sb);
	const char *s = path, *slash;
	int err;

	while ((slash = strchr(s, '/'))) {
		err = f2fs_lookup(sb, dir, s, (size_t)(slash - s), st);
		if (err || !S_ISDIR(st->mode)) {
			*parent = 0;
			return err ? err : -ENOTDIR;
		}
		dir = st->ino;
		s = slash + 1;
	}
	*parent = dir;
	if (base)
		*base = s;
	return f2fs_lookup(sb, dir, s, strlen(s), st);
}

static uint32_t ino_of(struct f2fs_sb *sb, const char *path)
{
	struct f2fs_stat st;
	uint32_t dir;

	return resolve(sb, path, &dir, NULL, &st) ? 0 : st.ino;
}

/* ---- operations on the live mount and the model alike ---- */

static void gen(uint8_t *buf, size_t len, uint32_t salt, uint64_t off)
{
	for (size_t i = 0; i < len; i++) {
		uint32_t x = (uint32_t)(off + i) * 2654435761u ^ salt * 40503u;

		buf[i] = (uint8_t)(x >> 13 ^ x);
	}
}

static int m_make(struct f2fs_sb *sb, const char *path, bool dir)
{
	struct f2fs_stat st;
	const char *base;
	uint32_t parent;
	int p = pidx(path), id, err;

	resolve(sb, path, &parent, &base, &st);
	err = !parent ? -ENOENT : dir ? f2fs_mkdir(sb, parent, base, strlen(base), 0755, &cred, &st) :
		f2fs_mknod(sb, parent, base, strlen(base), S_IFREG | 0644, 0, 0, &cred, &st);
	CHECK(err == 0, "create %s: %d", path, err);
	if (err)
		return -1;
	id = new_inode(dir);
	paths[p].id = paths[p].last_id = id;
	paths[p].gone_id = -1;
	note(id, p);
	return id;
}

static void m_write(struct f2fs_sb *sb, const char *path, uint32_t off, uint32_t n, uint32_t salt)
{
	static uint8_t buf[MAX_FILE];
	int id = paths[pidx(path)].id;
	struct minode *m;
	ssize_t w;

	if (id < 0 || off + n > MAX_FILE)
		return;
	m = &inodes[id];
	gen(buf, n, salt, off);
	w = f2fs_write(sb, ino_of(sb, path), buf, n, off);
	CHECK(w == (ssize_t)n, "write %s: %zd", path, w);
	if (off > m->len)
		memset(m->data + m->len, 0, off - m->len);
	memcpy(m->data + off, buf, n);
	if (off + n > m->len)
		m->len = off + n;
	if (!m->atomic)
		note(id, -1);
}

static void set_len(struct minode *m, uint32_t size)
{
	if (size > m->len)
		memset(m->data + m->len, 0, size - m->len);
	m->len = size;
}

static void m_truncate(struct f2fs_sb *sb, const char *path, uint32_t size)
{
	struct f2fs_setattr sa = { .valid = F2FS_SET_SIZE, .size = size };
	int id = paths[pidx(path)].id, err;
	struct f2fs_stat st;

	if (id < 0 || size > MAX_FILE)
		return;
	err = f2fs_setattr(sb, ino_of(sb, path), &sa, &st);
	CHECK(err == 0, "truncate %s: %d", path, err);
	set_len(&inodes[id], size);
	if (!inodes[id].atomic)
		note(id, -1);
}

static void m_fallocate(struct f2fs_sb *sb, const char *path, int mode, uint32_t off, uint32_t n)
{
	int id = paths[pidx(path)].id, err;
	struct minode *m;

	if (id < 0 || off + n > MAX_FILE)
		return;
	m = &inodes[id];
	err = f2fs_fallocate(sb, ino_of(sb, path), mode, off, n);
	CHECK(err == 0, "fallocate %s mode %d: %d", path, mode, err);
	if (mode & FALLOC_FL_PUNCH_HOLE) {
		if (off < m->len)
			memset(m->data + off, 0, (off + n < m->len ? off + n : m->len) - off);
	} else if (!(mode & FALLOC_FL_KEEP_SIZE) && off + n > m->len) {
		set_len(m, off + n);
	}
	note(id, -1);
}

static void m_link(struct f2fs_sb *sb, const char *from, const char *to)
{
	int p = pidx(from), q = pidx(to), err;
	struct f2fs_stat st;
	const char *base;
	uint32_t parent;

	resolve(sb, to, &parent, &base, &st);
	err = f2fs_link(sb, ino_of(sb, from), parent, base, strlen(base), &st);
	CHECK(err == 0, "link %s %s: %d", from, to, err);
	paths[q].id = paths[q].last_id = paths[p].id;
	paths[q].gone_id = -1;
	note(paths[p].id, -1);
}

static void m_unlink(struct f2fs_sb *sb, const char *path)
{
	int p = pidx(path), id = paths[p].id, err;
	struct f2fs_stat st;
	const char *base;
	uint32_t parent;

	resolve(sb, path, &parent, &base, &st);
	err = (id >= 0 && inodes[id].dir ? f2fs_rmdir : f2fs_unlink)(sb, parent, base, strlen(base));
	CHECK(err == 0, "unlink %s: %d", path, err);
	paths[p].id = -1;
	note(id, p);
}

/* Path q (and the paths below it, for a directory) now names what p named. */
static void move_name(int p, int q)
{
	size_t plen = strlen(paths[p].name);
	char child[NAME_LEN + 8];

	paths[q].id = paths[q].last_id = paths[p].id;
	paths[q].gone_id = -1;
	paths[p].gone_id = paths[p].id;
	paths[p].id = -1;
	for (int i = 0; i < npaths; i++) {
		if (strncmp(paths[i].name, paths[p].name, plen) || paths[i].name[plen] != '/' ||
		    paths[i].id < 0)
			continue;
		snprintf(child, sizeof(child), "%s%s", paths[q].name, paths[i].name + plen);
		int c = pidx(child);

		/* moved with its directory: the file's own fsync does not move it */
		paths[c].id = paths[c].last_id = paths[i].id;
		paths[c].gone_id = paths[i].gone_id = -1;
		paths[c].moved_from = i;
		paths[i].id = -1;
		snap(i, false);
		snap(c, false);
	}
}

static void m_rename(struct f2fs_sb *sb, const char *from, const char *to, unsigned int flags)
{
	int p = pidx(from), q = pidx(to), err;
	const char *ob, *nb;
	uint32_t od, nd;
	struct f2fs_stat st;

	resolve(sb, from, &od, &ob, &st);
	resolve(sb, to, &nd, &nb, &st);
	err = f2fs_rename(sb, od, ob, strlen(ob), nd, nb, strlen(nb), flags, NULL);
	CHECK(err == 0, "rename %s %s: %d", from, to, err);
	if (flags & RENAME_EXCHANGE) {
		int t = paths[p].id;

		paths[p].id = paths[p].last_id = paths[q].id;
		paths[q].id = paths[q].last_id = t;
		paths[p].gone_id = paths[q].gone_id = -1;
	} else {
		move_name(p, q);
	}
	snap(p, false);
	snap(q, false);
}

/* fsync of a file acknowledges its names; of a directory (a checkpoint), all below it too. */
static void m_fsync(struct f2fs_sb *sb, const char *path, bool datasync)
{
	bool ids[MAX_INODES] = { false };
	size_t plen = strlen(path);
	int p, id, err;

	if (!*path) {		/* the root: everything is below it */
		err = f2fs_fsync(sb, f2fs_root_ino(sb), datasync);
		CHECK(err == 0, "fsync /: %d", err);
		ack_all();
		return;
	}
	p = pidx(path);
	id = paths[p].id;
	err = f2fs_fsync(sb, ino_of(sb, path), datasync);
	CHECK(err == 0, "fsync %s: %d", path, err);
	if (id >= 0)
		ids[id] = true;
	if (id >= 0 && inodes[id].dir) {
		for (int i = 0; i < npaths; i++) {
			if (strncmp(paths[i].name, path, plen) || paths[i].name[plen] != '/')
				continue;
			if (paths[i].id >= 0)
				ids[paths[i].id] = true;
			paths[i].moved_from = -1;
			snap(i, true);	/* names gone from it too */
		}
	}
	ack_ids(ids);
}

static void m_sync(struct f2fs_sb *sb)
{
	int err = f2fs_sync_fs(sb, false);

	CHECK(err == 0, "sync: %d", err);
	ack_all();
}

static void m_atomic_start(struct f2fs_sb *sb, const char *path, bool replace)
{
	int id = paths[pidx(path)].id, err;
	struct minode *m = &inodes[id];

	CHECK(f2fs_open(sb, ino_of(sb, path), O_RDWR) == 0, "open %s", path);
	err = f2fs_start_atomic_write(sb, ino_of(sb, path), replace, 1);
	CHECK(err == 0, "start atomic write %s: %d", path, err);
	memcpy(m->durable, m->data, m->len);
	m->durable_len = m->len;
	m->atomic = true;
	if (replace)
		m->len = 0;
}

/* commit: all of it is acknowledged (as an fsync); abort: back to what it was. */
static void m_atomic_end(struct f2fs_sb *sb, const char *path, bool commit)
{
	int id = paths[pidx(path)].id, err;
	struct minode *m = &inodes[id];
	bool ids[MAX_INODES] = { false };

	err = commit ? f2fs_commit_atomic_write(sb, ino_of(sb, path)) :
		f2fs_abort_atomic_write(sb, ino_of(sb, path));
	CHECK(err == 0, "%s atomic write %s: %d", commit ? "commit" : "abort", path, err);
	f2fs_release_file(sb, ino_of(sb, path), O_RDWR);
	m->atomic = false;
	if (!commit) {
		memcpy(m->data, m->durable, m->durable_len);
		m->len = m->durable_len;
	}
	ids[id] = true;
	if (commit)
		ack_ids(ids);
	else
		note(id, -1);
}

/* close(2) of the only writable handle: the open atomic write is dropped. */
static void m_atomic_close(struct f2fs_sb *sb, const char *path)
{
	uint32_t ino = ino_of(sb, path);
	int id = paths[pidx(path)].id, err;
	struct minode *m = &inodes[id];

	err = f2fs_release_file(sb, ino, O_RDWR);
	CHECK(err >= 0 && !f2fs_in_atomic_write(sb, ino), "close of %s aborts its atomic write: %d",
	      path, err);
	m->atomic = false;
	memcpy(m->data, m->durable, m->durable_len);
	m->len = m->durable_len;
	note(id, -1);
}

/* ---- workloads ---- */

struct workload {
	const char *name;
	void (*setup)(struct f2fs_sb *sb, int arg);	/* before recording; ends in a checkpoint */
	void (*run)(struct f2fs_sb *sb, int arg);
	int arg;
	int features;					/* base image: 0 default, 1 extra */
};

static void mixed(struct f2fs_sb *sb, int arg)
{
	m_make(sb, "a", false);
	m_write(sb, "a", 0, 8192, 1);
	m_fsync(sb, "a", false);
	m_make(sb, "d", true);
	m_make(sb, "d/b", false);
	m_write(sb, "d/b", 0, 100, 2);
	m_fsync(sb, "d/b", false);
	m_write(sb, "a", 8192, 4096, 1);
	m_fsync(sb, "a", false);
	m_rename(sb, "a", "d/a2", 0);
	m_fsync(sb, "d", false);
	m_make(sb, "c", false);
	m_write(sb, "c", 0, 20000, 3);
	m_fsync(sb, "c", true);
	m_truncate(sb, "c", 5000);
	m_fsync(sb, "c", false);
	m_write(sb, "c", 0, 30000, 4);		/* rewritten in place */
	m_fsync(sb, "c", false);
	m_unlink(sb, "d/b");
	m_sync(sb);
	/* all of an atomic write or none of it, across a checkpoint inside it */
	m_make(sb, "g", false);
	m_write(sb, "g", 0, 16384, 6);
	m_fsync(sb, "g", false);
	m_atomic_start(sb, "g", false);
	m_write(sb, "g", 0, 8192, 7);
	m_sync(sb);
	m_write(sb, "g", 8192, 16384, 7);
	m_atomic_end(sb, "g", true);
	m_atomic_start(sb, "g", true);
	m_write(sb, "g", 4096, 100, 8);
	m_sync(sb);
	m_atomic_end(sb, "g", false);
	m_sync(sb);
	m_make(sb, "e", false);			/* never acknowledged */
	m_write(sb, "e", 0, 4096, 5);
}

/* Files A (3,000 bytes: inline), B (9,000), D/C (200), checkpointed. */
static void ace_setup(struct f2fs_sb *sb, int arg)
{
	m_make(sb, "D", true);
	m_make(sb, "A", false);
	m_write(sb, "A", 0, 3000, 11);
	m_make(sb, "B", false);
	m_write(sb, "B", 0, 9000, 12);
	m_make(sb, "D/C", false);
	m_write(sb, "D/C", 0, 200, 13);
	m_sync(sb);
}

static void atomic_setup(struct f2fs_sb *sb, int arg)
{
	ace_setup(sb, arg);
	m_make(sb, "F", false);
	m_write(sb, "F", 0, 40000, 14);
	m_sync(sb);
}

static void atomic_run(struct f2fs_sb *sb, int arg)
{
	switch (arg) {
	case 0:		/* commit through the fsync path, no checkpoint inside */
		m_atomic_start(sb, "F", false);
		m_write(sb, "F", 4096, 12288, 20);
		m_write(sb, "F", 36000, 8000, 21);
		m_atomic_end(sb, "F", true);
		m_write(sb, "F", 0, 100, 22);
		m_fsync(sb, "F", false);
		break;
	case 1:		/* replace, shorter than before */
		m_atomic_start(sb, "F", true);
		m_write(sb, "F", 0, 10000, 23);
		m_truncate(sb, "F", 6000);
		m_atomic_end(sb, "F", true);
		break;
	case 2:		/* aborted, then a close that drops a second one */
		m_atomic_start(sb, "F", false);
		m_write(sb, "F", 0, 20000, 24);
		m_atomic_end(sb, "F", false);
		m_fsync(sb, "F", false);
		m_atomic_start(sb, "F", false);
		m_write(sb, "F", 8000, 8000, 25);
		m_fsync(sb, "B", false);	/* another file's fsync meanwhile */
		m_atomic_close(sb, "F");
		m_sync(sb);
		break;
	case 3:		/* an inline file grows to blocks inside the write */
		m_atomic_start(sb, "A", false);
		m_write(sb, "A", 2000, 9000, 26);
		m_atomic_end(sb, "A", true);
		break;
	case 4:		/* two files, one after the other, and a new file's */
		m_atomic_start(sb, "A", false);
		m_atomic_start(sb, "B", false);
		m_write(sb, "A", 0, 100, 27);
		m_write(sb, "B", 0, 20000, 28);
		m_atomic_end(sb, "B", true);
		m_write(sb, "A", 5000, 100, 29);
		m_atomic_end(sb, "A", true);
		m_make(sb, "D/N", false);
		m_fsync(sb, "D/N", false);
		m_atomic_start(sb, "D/N", false);
		m_write(sb, "D/N", 0, 5000, 30);
		m_atomic_end(sb, "D/N", true);
		break;
	}
}

static void rename_run(struct f2fs_sb *sb, int arg)
{
	switch (arg) {
	case 0:		/* over a file, then fsync of the new name */
		m_write(sb, "A", 0, 5000, 40);
		m_rename(sb, "A", "B", 0);
		m_fsync(sb, "B", false);
		m_rename(sb, "B", "D/B", 0);
		m_fsync(sb, "D/B", true);
		break;
	case 1:		/* exchange across directories, then fsync of both directories */
		m_rename(sb, "A", "D/C", RENAME_EXCHANGE);
		m_fsync(sb, "D", false);
		m_write(sb, "A", 0, 1000, 41);
		m_fsync(sb, "A", false);
		break;
	case 2:		/* a directory into another, then the moved file's fsync */
		m_make(sb, "E", true);
		m_make(sb, "E/x", false);
		m_write(sb, "E/x", 0, 12000, 42);
		m_fsync(sb, "E/x", false);
		m_rename(sb, "E", "D/E", 0);
		m_write(sb, "D/E/x", 12000, 100, 43);
		m_fsync(sb, "D/E/x", false);
		m_fsync(sb, "D", false);
		break;
	case 3:		/* out of D, fsync of the old parent only; then a new file renamed over */
		m_rename(sb, "D/C", "C2", 0);
		m_fsync(sb, "D", false);
		m_make(sb, "T", false);
		m_write(sb, "T", 0, 7000, 44);
		m_fsync(sb, "T", false);
		m_rename(sb, "T", "A", 0);
		m_fsync(sb, "A", false);
		break;
	}
}

static void dirsync_run(struct f2fs_sb *sb, int arg)
{
	char name[NAME_LEN];

	switch (arg) {
	case 0:		/* nested new directories, fsync of the innermost */
		m_make(sb, "P", true);
		m_make(sb, "P/Q", true);
		m_make(sb, "P/Q/f", false);
		m_write(sb, "P/Q/f", 0, 6000, 50);
		m_fsync(sb, "P/Q", false);
		m_make(sb, "P/Q/g", false);
		m_write(sb, "P/Q/g", 0, 100, 51);
		m_fsync(sb, "P/Q/g", false);
		break;
	case 1:		/* unlinks, and a directory removed, made durable by fsync of the parent */
		m_unlink(sb, "D/C");
		m_fsync(sb, "D", false);
		m_make(sb, "D/S", true);
		m_fsync(sb, "D", false);
		m_unlink(sb, "D/S");
		m_unlink(sb, "A");
		m_fsync(sb, "", false);
		break;
	case 2:		/* a directory of several blocks, one name fsync()ed, then the directory */
		for (int i = 0; i < 40; i++) {
			snprintf(name, sizeof(name), "D/long-name-for-a-block-%02d", i);
			m_make(sb, name, false);
		}
		m_write(sb, "D/long-name-for-a-block-39", 0, 5000, 52);
		m_fsync(sb, "D/long-name-for-a-block-39", false);
		m_unlink(sb, "D/long-name-for-a-block-00");
		m_fsync(sb, "D", false);
		break;
	}
}

/* The ACE operations, as crashtest.py's; seq is base-6 digits, k the step. */
static char ace_cur[NAME_LEN];

static void ace_op(struct f2fs_sb *sb, int op, int k)
{
	char q[NAME_LEN];
	int id = paths[pidx(ace_cur)].id;
	uint32_t len = id >= 0 ? inodes[id].len : 0;

	switch (op) {
	case 0:		/* creat */
		snprintf(ace_cur, sizeof(ace_cur), "N%d", k);
		m_make(sb, ace_cur, false);
		break;
	case 1:		/* write: append across the inline limit, or overwrite the middle */
		if (k % 2 == 0)
			m_write(sb, ace_cur, len, 5000, 100 + k);
		else
			m_write(sb, ace_cur, len / 2 > 100 ? len / 2 - 100 : 0, 300, 100 + k);
		break;
	case 2:		/* link */
		snprintf(q, sizeof(q), "D/L%d", k);
		m_link(sb, ace_cur, q);
		break;
	case 3:		/* rename: to a new name, or over B */
		if (k % 2 == 0 || !strcmp(ace_cur, "B"))
			snprintf(q, sizeof(q), "D/R%d", k);
		else
			snprintf(q, sizeof(q), "B");
		m_rename(sb, ace_cur, q, 0);
		snprintf(ace_cur, sizeof(ace_cur), "%s", q);
		break;
	case 4:		/* truncate */
		m_truncate(sb, ace_cur, (uint32_t[]){ 100, 20000, 0 }[k % 3]);
		break;
	case 5:		/* falloc: past the end keeping the size, grow, punch a hole */
		if (k % 3 == 0)
			m_fallocate(sb, ace_cur, FALLOC_FL_KEEP_SIZE, len, 16384);
		else if (k % 3 == 1)
			m_fallocate(sb, ace_cur, 0, 0, len + 10000);
		else
			m_fallocate(sb, ace_cur, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, 4096);
		break;
	}
}

/* arg: sequence length * 10000 + base-6 sequence * 2 + fdatasync */
static void ace_run(struct f2fs_sb *sb, int arg)
{
	int n = arg / 10000, seq = arg % 10000 / 2, ops[8];

	snprintf(ace_cur, sizeof(ace_cur), "A");
	for (int i = n - 1; i >= 0; i--) {
		ops[i] = seq % 6;
		seq /= 6;
	}
	for (int k = 0; k < n; k++)
		ace_op(sb, ops[k], k);
	m_fsync(sb, ace_cur, arg % 2);
}

static const char *const ace_names[] = { "creat", "write", "link", "rename", "truncate", "falloc" };

/* ---- crash states ---- */

struct readdir_ctx {
	char names[64][NAME_LEN];
	int n;
};

static int collect(void *ctx, const char *name, size_t len, uint32_t ino, unsigned int type,
		   uint64_t next_off)
{
	struct readdir_ctx *c = ctx;

	if ((len == 1 && name[0] == '.') || (len == 2 && name[0] == '.' && name[1] == '.'))
		return 0;
	if (c->n < 64)
		snprintf(c->names[c->n++], NAME_LEN, "%.*s", (int)(len < NAME_LEN ? len : NAME_LEN - 1),
			 name);
	return 0;
}

/* Every name in a directory must be one the workload made or found. */
static bool dir_names_known(struct f2fs_sb *sb, const char *dirpath, uint32_t dir, char *why,
			    size_t whylen)
{
	static struct readdir_ctx c;
	char full[NAME_LEN * 2];

	c.n = 0;
	if (f2fs_readdir(sb, dir, 0, collect, &c) < 0) {
		snprintf(why, whylen, "readdir of /%s fails", dirpath);
		return false;
	}
	for (int i = 0; i < c.n; i++) {
		bool known = false;

		snprintf(full, sizeof(full), "%s%s%s", dirpath, *dirpath ? "/" : "", c.names[i]);
		for (int k = 0; k < npaths && !known; k++)
			known = !strcmp(paths[k].name, full);
		if (!known && strcmp(full, "lost+found")) {
			snprintf(why, whylen, "/%s: a name no workload step made", full);
			return false;
		}
	}
	return true;
}

/* Does path p show version v? */
static bool shows(struct f2fs_sb *sb, int p, const struct version *v)
{
	static uint8_t got[MAX_FILE];
	struct f2fs_stat st;
	uint32_t parent;
	int err = resolve(sb, paths[p].name, &parent, NULL, &st);

	if (!v->present)
		return err == -ENOENT || err == -ENOTDIR;
	if (err || v->dir != !!S_ISDIR(st.mode))
		return false;
	if (v->dir)
		return true;
	return st.size == v->len &&
	       f2fs_read(sb, st.ino, got, v->len, 0) == (ssize_t)v->len &&
	       (!v->len || !memcmp(got, v->data, v->len));
}

/* Does every path show one of the values allowed at a state whose last flush is `flushed`? */
static bool state_ok(struct f2fs_sb *sb, size_t flushed, char *why, size_t whylen)
{
	if (!dir_names_known(sb, "", f2fs_root_ino(sb), why, whylen))
		return false;
	for (int p = 0; p < npaths; p++) {
		struct f2fs_stat st;
		uint32_t parent;
		int last = -1, err;
		bool matched = false;

		for (int i = 0; i < nvers; i++)
			if (vers[i].path == p && vers[i].acked && vers[i].pos <= flushed)
				last = i;
		if (last < 0)
			continue;
		err = resolve(sb, paths[p].name, &parent, NULL, &st);
		if (!err && S_ISDIR(st.mode) && !dir_names_known(sb, paths[p].name, st.ino, why, whylen))
			return false;
		/* the acknowledged version, or any later one (not yet acknowledged, may have landed) */
		for (int i = last; i < nvers && !matched; i++)
			matched = vers[i].path == p &&
				  (shows(sb, p, &vers[i]) ||
				   (vers[i].alt >= 0 && (err == -ENOENT || err == -ENOTDIR) &&
				    shows(sb, vers[i].alt, &vers[i])));
		if (!matched) {
			snprintf(why, whylen, "/%.40s: want %s%u bytes (acknowledged at record %zu), "
				 "lookup %d size %llu", paths[p].name,
				 vers[last].present ? "" : "absent, or ", vers[last].len, vers[last].pos,
				 err, err ? 0ull : (unsigned long long)st.size);
			return false;
		}
	}
	return true;
}

static uint64_t rnd_state, rnd_seed = 88172645463325252ull;

static uint64_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

static bool run_fsck = true;
static int nstates, nfailed, nflush_states, nsubset_states, nreorder_states, ndup, nstale;
static uint64_t seen[8192];
static int nseen;

/* Has a state rebuilt from the same writes been checked already (for this workload)? */
static bool seen_before(uint64_t h)
{
	for (int i = 0; i < nseen; i++)
		if (seen[i] == h)
			return true;
	if (nseen < (int)(sizeof(seen) / sizeof(seen[0])))
		seen[nseen++] = h;
	return false;
}

/* Is the write of record r a data block (0: metadata area or a node segment)? */
static uint8_t *rec_is_data;
static uint8_t segtype[1 << 16];
static uint32_t main_blkaddr, log_blocks_per_seg, nsegs;

/* The log each main-area segment was last written from, as the workload left them. */
static void seg_types(struct f2fs_sb *sb)
{
	main_blkaddr = sb->main_blkaddr;
	log_blocks_per_seg = sb->log_blocks_per_seg;
	nsegs = 0;
	if (!sb->sm)
		return;
	nsegs = sb->segment_count_main < sizeof(segtype) ? sb->segment_count_main : sizeof(segtype);
	for (uint32_t i = 0; i < nsegs; i++)
		segtype[i] = sb->sm->sentries[i].type;
}

/*
 * The image: base, every write of records [0, upto), then the epoch's
 * writes in [upto, end) that `keep` allows, in record order or (`order`)
 * in that order of epoch indexes.  data_first: every data write of the
 * epoch before its last kept write lands too, first, in record order (as
 * if the cache had been flushed between an fsync's data and its nodes).
 */
static uint8_t *build(const uint8_t *base, size_t len, size_t upto, size_t end,
		      const uint8_t *keep, const size_t *order, bool data_first)
{
	uint8_t *buf = malloc(len);
	size_t last_kept = upto;

	if (!buf)
		return NULL;
	memcpy(buf, base, len);
	for (size_t r = 0; r < upto; r++) {
		const struct wlog_rec *w = &wlog.rec[r];

		if (w->kind == WLOG_WRITE)
			memcpy(buf + (size_t)w->blkaddr * F2FS_BLKSIZE, wlog_block(&wlog, w),
			       F2FS_BLKSIZE);
	}
	for (size_t r = upto; keep && r < end; r++)
		if (keep[r - upto])
			last_kept = r;
	for (size_t r = upto; data_first && r < last_kept; r++) {
		const struct wlog_rec *w = &wlog.rec[r];

		if (w->kind == WLOG_WRITE && rec_is_data[r])
			memcpy(buf + (size_t)w->blkaddr * F2FS_BLKSIZE, wlog_block(&wlog, w),
			       F2FS_BLKSIZE);
	}
	for (size_t i = 0; keep && i < end - upto; i++) {
		const struct wlog_rec *w = &wlog.rec[upto + (order ? order[i] : i)];

		if (w->kind == WLOG_WRITE && keep[w - wlog.rec - upto] &&
		    !(data_first && rec_is_data[w - wlog.rec]))
			memcpy(buf + (size_t)w->blkaddr * F2FS_BLKSIZE, wlog_block(&wlog, w),
			       F2FS_BLKSIZE);
	}
	return buf;
}

/* -R: mount the states with norecovery, which must fail (the checks' own test) */
static bool no_rollforward;

/* Mount, check, unmount and fsck a state; false with the reason in why. */
static bool verify(uint8_t *buf, size_t len, size_t flushed, char *why, size_t whylen)
{
	struct f2fs_mount_opts o = { .log_level = F2FS_LOG_ERR, .log = rw_log,
				     .norecovery = no_rollforward };
	struct rwimage im = { .buf = buf, .len = len };
	struct f2fs_dev *dev;
	int err = f2fs_dev_open_mem_rw(buf, len, &dev);

	if (!err)
		err = f2fs_mount_dev(dev, &o, &im.sb);

	*why = 0;
	if (err) {
		snprintf(why, whylen, "does not mount: %d (%.200s)", err, rw_last_error);
		im.sb = NULL;
	} else if (state_ok(im.sb, flushed, why, whylen)) {
		err = f2fs_umount(im.sb);
		im.sb = NULL;
		if (err)
			snprintf(why, whylen, "unmount failed: %d", err);
		else if (run_fsck && !rw_fsck_clean(&im))
			snprintf(why, whylen, "fsck.f2fs finds something to fix");
	}
	if (im.sb)
		f2fs_umount(im.sb);
	return !*why;
}

/*
 * Check one crash state.  A state that fails only because a data block of
 * the epoch was lost (or landed late) while a node mapping it landed is
 * counted apart: the fsync path issues no cache flush between its data
 * and its nodes (the kernel's f2fs_do_sync_file neither), so a volatile
 * cache can show such a node over the blocks' old contents.  -p fails
 * these too.
 */
static bool strict_order;

static void check_state(const char *wname, const uint8_t *base, size_t len, size_t upto,
			size_t end, const uint8_t *keep, const size_t *order, size_t flushed,
			const char *what)
{
	uint64_t h = (1469598103934665603ull ^ upto) * 1099511628211ull;
	size_t winners = 0;
	char why[512], why2[512];
	uint8_t *buf;

	/* which record lands last on each block of the epoch names the state */
	for (size_t i = 0; i < end - upto; i++) {
		size_t r = upto + (order ? order[i] : i), later = 0;

		if (wlog.rec[r].kind != WLOG_WRITE || !(keep && keep[r - upto]))
			continue;
		for (size_t j = i + 1; j < end - upto && !later; j++) {
			size_t s2 = upto + (order ? order[j] : j);

			later = wlog.rec[s2].kind == WLOG_WRITE && keep[s2 - upto] &&
				wlog.rec[s2].blkaddr == wlog.rec[r].blkaddr;
		}
		if (!later) {
			h = (h ^ r) * 1099511628211ull;
			winners++;
		}
	}
	/* nothing of the epoch kept: the state at its start */
	h = (h ^ (winners ? end : 0)) * 1099511628211ull;
	if (seen_before(h)) {
		ndup++;
		return;
	}
	buf = build(base, len, upto, end, keep, order, false);
	if (!buf)
		return;
	nstates++;
	if (!keep)
		nflush_states++;
	else if (order)
		nreorder_states++;
	else
		nsubset_states++;
	if (verify(buf, len, flushed, why, sizeof(why))) {
		free(buf);
		return;
	}
	free(buf);
	if (keep && !strict_order) {
		buf = build(base, len, upto, end, keep, order, true);
		if (buf && verify(buf, len, flushed, why2, sizeof(why2))) {
			nstale++;
			if (verbose)
				printf("  %s: state %s: data lost under a node that landed: %s\n", wname,
				       what, why);
			free(buf);
			return;
		}
		free(buf);
	}
	nfailed++;
	CHECK(0, "%s: crash state %s (records 0..%zu%s): %s", wname, what, upto,
	      keep ? (order ? " and some of the epoch after, reordered" :
		      " and some of the epoch after") : "", why);
}

/* Run one workload from `base` (a copy is set up, checkpointed, then recorded) and check its states. */
static void replay(const struct workload *w, const uint8_t *base, size_t len, int per_epoch)
{
	struct f2fs_mount_opts o = { .log_level = F2FS_LOG_ERR, .log = rw_log };
	struct rwimage im = { .len = len };
	struct f2fs_dev *dev;
	uint8_t *start;
	size_t last_flush = 0, nflush = 0;
	int before = nstates, failed = nfailed;

	model_reset();
	nseen = 0;
	/* each workload's states from the seed and its name alone: -w reproduces them */
	rnd_state = rnd_seed;
	for (const char *c = w->name; *c; c++)
		rnd_state = (rnd_state ^ (uint8_t)*c) * 1099511628211ull;
	rnd_state |= 1;
	memset(&wlog, 0, sizeof(wlog));
	im.buf = malloc(len);
	start = malloc(len);
	if (!im.buf || !start)
		return;
	memcpy(im.buf, base, len);
	CHECK(wlog_open_dev(&wlog, im.buf, len, &dev) == 0, "log device");
	CHECK(f2fs_mount_dev(dev, &o, &im.sb) == 0, "mount for %s", w->name);
	if (!im.sb)
		goto out;
	if (w->setup)
		w->setup(im.sb, w->arg);
	/* what the setup made is the starting point, acknowledged before the first record */
	for (int i = 0; i < nvers; i++)
		free(vers[i].data);
	nvers = 0;
	for (int p = 0; p < npaths; p++)
		snap(p, true);
	memcpy(start, im.buf, len);
	wlog.recording = true;
	w->run(im.sb, w->arg);
	seg_types(im.sb);
	f2fs_umount(im.sb);
	im.sb = NULL;
	wlog.recording = false;
	free(rec_is_data);
	rec_is_data = calloc(wlog.nr + 1, 1);
	for (size_t r = 0; rec_is_data && r < wlog.nr; r++) {
		uint32_t b = wlog.rec[r].blkaddr;

		rec_is_data[r] = wlog.rec[r].kind == WLOG_WRITE && b >= main_blkaddr &&
				 (b - main_blkaddr) >> log_blocks_per_seg < nsegs &&
				 segtype[(b - main_blkaddr) >> log_blocks_per_seg] <= CURSEG_COLD_DATA;
	}

	/* every flush, and random points (with random losses, some reordered) inside each epoch */
	for (size_t r = 0; r <= wlog.nr; r++) {
		bool is_flush = r < wlog.nr && wlog.rec[r].kind == WLOG_FLUSH;
		char what[64];

		if (r < wlog.nr && !is_flush)
			continue;
		/* the epoch (last_flush, r): writes in flight when the crash came */
		for (int k = 0; k < per_epoch && r > last_flush + 1; k++) {
			size_t n = r - last_flush, cut = last_flush + 1 + rnd() % n, m = cut - last_flush;
			uint8_t *keep = malloc(m);
			size_t *order = (k & 1) ? malloc(m * sizeof(*order)) : NULL;

			if (!keep)
				break;
			for (size_t i = 0; i < m; i++)
				keep[i] = (rnd() & 1) != 0;
			for (size_t i = 0; order && i < m; i++) {
				size_t j = rnd() % (i + 1);

				order[i] = order[j];
				order[j] = i;
			}
			snprintf(what, sizeof(what), "in epoch %zu, cut at %zu", nflush, cut);
			check_state(w->name, start, len, last_flush, cut, keep, order, last_flush, what);
			free(order);
			free(keep);
		}
		if (r == wlog.nr)
			break;
		snprintf(what, sizeof(what), "at flush %zu", nflush);
		check_state(w->name, start, len, r + 1, r + 1, NULL, NULL, r + 1, what);
		last_flush = r + 1;
		nflush++;
	}
	if (verbose || nfailed > failed)
		printf("  %-32s %4zu writes %3zu flushes %4d states%s\n", w->name, wlog.nr_data, nflush,
		       nstates - before, nfailed > failed ? "  FAILED" : "");
out:
	wlog_free(&wlog);
	free(start);
	free(im.buf);
}

int main(int argc, char **argv)
{
	static struct workload wl[1200];
	static char names[1200][64];
	const char *only = NULL;
	int per_epoch = 3, ace_len = 2, opt, nw = 0, nmatched = 0;
	size_t len[2];
	uint8_t *base[2];

	while ((opt = getopt(argc, argv, "s:r:l:w:npRv")) != -1) {
		if (opt == 's')
			rnd_seed = strtoull(optarg, NULL, 0);
		else if (opt == 'r')
			per_epoch = atoi(optarg);
		else if (opt == 'l')
			ace_len = atoi(optarg) < 1 ? 1 : atoi(optarg) > 4 ? 4 : atoi(optarg);
		else if (opt == 'w')
			only = optarg;
		else if (opt == 'n')
			run_fsck = false;
		else if (opt == 'v')
			verbose = true;
		else if (opt == 'p')
			strict_order = true;
		else if (opt == 'R')
			no_rollforward = true;
	}
	base[0] = make_image(NULL, 64, NULL, &len[0]);
	base[1] = make_image("extra_attr,inode_checksum,flexible_inline_xattr,inode_crtime,"
			     "sb_checksum", 64, NULL, &len[1]);
	if (!base[0] || !base[1])
		return check_done("crash replay");

	wl[nw++] = (struct workload){ "mixed", NULL, mixed, 0, 0 };
	for (int i = 0; i < 5; i++) {
		snprintf(names[nw], sizeof(names[nw]), "atomic-%d", i);
		wl[nw] = (struct workload){ names[nw], atomic_setup, atomic_run, i, i & 1 };
		nw++;
	}
	for (int i = 0; i < 4; i++) {
		snprintf(names[nw], sizeof(names[nw]), "rename-%d", i);
		wl[nw] = (struct workload){ names[nw], ace_setup, rename_run, i, i & 1 };
		nw++;
	}
	for (int i = 0; i < 3; i++) {
		snprintf(names[nw], sizeof(names[nw]), "dirsync-%d", i);
		wl[nw] = (struct workload){ names[nw], ace_setup, dirsync_run, i, i & 1 };
		nw++;
	}
	for (int n = 1, ncase = 0; n <= ace_len; n++) {
		int total = 1;

		for (int i = 0; i < n; i++)
			total *= 6;
		for (int seq = 0; seq < total; seq++) {
			for (int sync = 0; sync < 2 && nw < 1200; sync++, ncase++) {
				char *s = names[nw];
				int digit[8];
				size_t off = (size_t)snprintf(s, 64, "ace");

				for (int i = n - 1, q = seq; i >= 0; i--, q /= 6)
					digit[i] = q % 6;
				for (int j = 0; j < n; j++)
					off += (size_t)snprintf(s + off, 64 - off, "%s%s", j ? "+" : "-",
								ace_names[digit[j]]);
				snprintf(s + off, 64 - off, "+%s", sync ? "fdatasync" : "fsync");
				wl[nw++] = (struct workload){ s, ace_setup, ace_run,
							      n * 10000 + seq * 2 + sync, ncase & 1 };
			}
		}
	}

	for (int i = 0; i < nw; i++) {
		if (only && strncmp(wl[i].name, only, strlen(only)))
			continue;
		nmatched++;
		replay(&wl[i], base[wl[i].features], len[wl[i].features], per_epoch);
	}
	printf("crash replay: %d workloads; %d crash states checked (%d at flushes, %d with writes "
	       "of the epoch lost, %d of them also reordered), %d duplicates skipped; %d failed, "
	       "%d more with data lost under a node that landed%s\n",
	       nmatched, nstates, nflush_states, nsubset_states + nreorder_states, nreorder_states,
	       ndup, nfailed, nstale, strict_order ? " (failed, -p)" : " (not failures)");
	model_reset();
	free(base[0]);
	free(base[1]);
	return check_done("crash replay");
}
