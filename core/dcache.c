// SPDX-License-Identifier: GPL-2.0
/*
 * Name index of one directory: the daemon's stand-in for the kernel's
 * dcache.  Without it every LOOKUP (and every create, which must first
 * find that the name is absent) reads and scans a bucket's dentry blocks
 * at every hash level; `find | xargs stat` over 500-entry directories
 * spent two thirds of its daemon time there.
 *
 * The index holds every entry a lookup could reach (dir.c builds it),
 * keyed by the dentry's hash and on-disk name.  Readers share it under the
 * directory's read lock; dir.c adds, removes and repoints entries in it
 * under the write lock as it changes the dentry blocks, so creating in a
 * large directory does not rebuild it.  It lives in the in-memory inode and
 * goes with it.  All indexes of a mount
 * share one byte budget so that a tree of huge directories cannot take the
 * daemon's memory.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "f2fs.h"

struct dcache_slot {
	uint32_t hash;
	uint32_t ino;
	uint32_t name_off;	/* into names */
	uint32_t bit;		/* first dentry slot, for messages */
	uint64_t lblk;		/* dentry block, or UINT64_MAX inline */
	uint16_t len;		/* 0: empty slot */
	uint8_t file_type;
};

struct f2fs_dcache {
	struct dcache_slot *slot;
	uint32_t mask;		/* table size - 1 */
	uint32_t count;
	uint8_t *names;
	size_t names_len, names_cap;
	size_t bytes;		/* what the index takes */
	struct f2fs_dcache_budget *budget;
	bool charged;		/* bytes are counted in budget */
	bool dups;		/* a (hash, name) seen twice: removal must rebuild */
};

/* Growth after the index was charged is charged as it happens. */
static void grew(struct f2fs_dcache *dc, size_t delta)
{
	dc->bytes += delta;
	if (dc->charged)
		atomic_fetch_add(&dc->budget->used, delta);
}

static size_t table_bytes(uint32_t nslots)
{
	return (size_t)nslots * sizeof(struct dcache_slot);
}

struct f2fs_dcache *f2fs_dcache_new(struct f2fs_dcache_budget *budget, uint32_t expect)
{
	struct f2fs_dcache *dc = calloc(1, sizeof(*dc));
	uint32_t n = 16;

	if (!dc)
		return NULL;
	/*
	 * at most half full: probes stay short.  expect comes from the
	 * directory's i_size, which an image may set to anything: never a
	 * first table larger than the whole budget (it grows with the names
	 * really added, and the index is given up past the budget anyway)
	 */
	while (n < 2 * (uint64_t)expect && n < (1u << 30) && table_bytes(2 * n) <= budget->limit)
		n <<= 1;
	dc->slot = calloc(n, sizeof(*dc->slot));
	if (!dc->slot) {
		free(dc);
		return NULL;
	}
	dc->mask = n - 1;
	dc->budget = budget;
	dc->bytes = sizeof(*dc) + table_bytes(n);
	return dc;
}

void f2fs_dcache_free(struct f2fs_dcache *dc)
{
	if (!dc)
		return;
	if (dc->charged)
		atomic_fetch_sub(&dc->budget->used, dc->bytes);
	free(dc->slot);
	free(dc->names);
	free(dc);
}

static int grow_table(struct f2fs_dcache *dc)
{
	uint32_t n = (dc->mask + 1) * 2;
	struct dcache_slot *old = dc->slot, *s = calloc(n, sizeof(*s));

	if (!s || n == 0) {
		free(s);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i <= dc->mask; i++) {
		uint32_t j;

		if (!old[i].len)
			continue;
		for (j = old[i].hash & (n - 1); s[j].len; j = (j + 1) & (n - 1))
			;
		s[j] = old[i];
	}
	grew(dc, table_bytes(n) - table_bytes(dc->mask + 1));
	dc->slot = s;
	dc->mask = n - 1;
	free(old);
	return 0;
}

/* The first entry of a (hash, name) stays: it is the one a scan finds first. */
int f2fs_dcache_add(struct f2fs_dcache *dc, uint32_t hash, const uint8_t *name, uint16_t len,
		    uint32_t ino, uint8_t file_type, uint64_t lblk, uint32_t bit)
{
	uint32_t i;

	if (!len)
		return -EINVAL;
	if (2 * (uint64_t)(dc->count + 1) > (uint64_t)dc->mask + 1) {
		int err = grow_table(dc);

		if (err)
			return err;
	}
	for (i = hash & dc->mask; dc->slot[i].len; i = (i + 1) & dc->mask) {
		const struct dcache_slot *s = &dc->slot[i];

		if (s->hash == hash && s->len == len && !memcmp(dc->names + s->name_off, name, len)) {
			dc->dups = true;
			return 0;
		}
	}
	if (dc->names_len + len > dc->names_cap) {
		size_t cap = dc->names_cap ? dc->names_cap * 2 : 4096;
		uint8_t *p;

		while (cap < dc->names_len + len)
			cap *= 2;
		if (cap > UINT32_MAX)
			return -ENOMEM;
		p = realloc(dc->names, cap);
		if (!p)
			return -ENOMEM;
		grew(dc, cap - dc->names_cap);
		dc->names = p;
		dc->names_cap = cap;
	}
	memcpy(dc->names + dc->names_len, name, len);
	dc->slot[i] = (struct dcache_slot){
		.hash = hash, .ino = ino, .name_off = (uint32_t)dc->names_len, .bit = bit,
		.lblk = lblk, .len = len, .file_type = file_type,
	};
	dc->names_len += len;
	dc->count++;
	return 0;
}

static int64_t find_slot(const struct f2fs_dcache *dc, uint32_t hash, const uint8_t *name,
			 size_t len)
{
	for (uint32_t i = hash & dc->mask; dc->slot[i].len; i = (i + 1) & dc->mask) {
		const struct dcache_slot *s = &dc->slot[i];

		if (s->hash == hash && s->len == len && !memcmp(dc->names + s->name_off, name, len))
			return i;
	}
	return -1;
}

bool f2fs_dcache_find(const struct f2fs_dcache *dc, uint32_t hash, const uint8_t *name,
		      size_t len, struct f2fs_dcache_entry *out)
{
	int64_t i = find_slot(dc, hash, name, len);

	if (i < 0)
		return false;
	out->ino = dc->slot[i].ino;
	out->file_type = dc->slot[i].file_type;
	out->lblk = dc->slot[i].lblk;
	out->bit = dc->slot[i].bit;
	return true;
}

/*
 * Forget an entry (its name bytes stay in the arena until the index goes).
 * -ESTALE if the index cannot say what is left: the name was there twice.
 */
int f2fs_dcache_remove(struct f2fs_dcache *dc, uint32_t hash, const uint8_t *name, size_t len)
{
	int64_t found = find_slot(dc, hash, name, len);
	uint32_t i, j;

	if (dc->dups)
		return -ESTALE;
	if (found < 0)
		return 0;
	/* backward-shift deletion keeps every probe chain unbroken */
	i = (uint32_t)found;
	for (j = (i + 1) & dc->mask; dc->slot[j].len; j = (j + 1) & dc->mask) {
		uint32_t home = dc->slot[j].hash & dc->mask;

		/* slot j may move to i if its home is not in (i, j] cyclically */
		if (((j - home) & dc->mask) >= ((j - i) & dc->mask)) {
			dc->slot[i] = dc->slot[j];
			i = j;
		}
	}
	dc->slot[i].len = 0;
	dc->count--;
	return 0;
}

/* rename over an existing name: the entry now names another inode */
void f2fs_dcache_repoint(struct f2fs_dcache *dc, uint32_t hash, const uint8_t *name, size_t len,
			 uint32_t ino, uint8_t file_type)
{
	int64_t i = find_slot(dc, hash, name, len);

	if (i >= 0) {
		dc->slot[i].ino = ino;
		dc->slot[i].file_type = file_type;
	}
}

/* Up to max inode numbers the index names, "." and ".." left out. */
uint32_t f2fs_dcache_inos(const struct f2fs_dcache *dc, uint32_t *out, uint32_t max)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i <= dc->mask && n < max; i++) {
		const struct dcache_slot *s = &dc->slot[i];
		const uint8_t *nm = dc->names + s->name_off;

		if (!s->len || (nm[0] == '.' && (s->len == 1 || (s->len == 2 && nm[1] == '.'))))
			continue;
		out[n++] = s->ino;
	}
	return n;
}

/* Charge a finished index to the budget; false (and nothing charged) if it does not fit. */
bool f2fs_dcache_charge(struct f2fs_dcache *dc)
{
	struct f2fs_dcache_budget *b = dc->budget;
	size_t used;

	if (!b)
		return true;
	used = atomic_fetch_add(&b->used, dc->bytes);
	if (used + dc->bytes > b->limit) {
		atomic_fetch_sub(&b->used, dc->bytes);
		return false;
	}
	dc->charged = true;
	return true;
}

size_t f2fs_dcache_bytes(const struct f2fs_dcache *dc)
{
	return dc->bytes;
}
