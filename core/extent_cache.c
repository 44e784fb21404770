// SPDX-License-Identifier: GPL-2.0
/*
 * Read extent cache: per inode, a sorted array of non-overlapping
 * (fofs, blk, len) runs learned from node walks, plus the largest extent
 * (i_ext on disk, or a longer run found since).  A large sequential read
 * then maps many blocks per lookup instead of walking the node tree for
 * each one.
 *
 * Memory: all trees of a mount share one budget (-o extent_cache_size=).
 * Trees that hold runs sit on an LRU list; past the budget the least
 * recently used tree loses its runs, and a tree alone over the budget
 * loses its lower half, never the whole cache at once.
 *
 * It keeps itself coherent: whoever remaps blocks calls
 * f2fs_drop_extent_cache for exactly the range remapped (writes, holes,
 * truncation), or f2fs_extent_cache_move for one block (cleaning); both
 * cut the range out of the runs and leave the rest in place.
 *
 * Locks: a tree's lock and the manager's lock are never held together,
 * except that the manager's lock may take a tree's (eviction).
 */
#include <stdlib.h>
#include <string.h>

#include "f2fs.h"

struct f2fs_extent_mgr {
	pthread_mutex_t lock;
	struct f2fs_extent_tree *head, *tail;	/* trees with runs, most recent first */
	size_t bytes, max_bytes;
	atomic_uint_fast64_t evictions;
};

int f2fs_extent_mgr_create(struct f2fs_sb *sb, size_t max_bytes)
{
	struct f2fs_extent_mgr *m = calloc(1, sizeof(*m));

	if (!m)
		return -ENOMEM;
	pthread_mutex_init(&m->lock, NULL);
	m->max_bytes = max_bytes ? max_bytes : F2FS_DEFAULT_EXTENT_CACHE_SIZE;
	sb->extents = m;
	return 0;
}

/* After every tree is destroyed. */
void f2fs_extent_mgr_destroy(struct f2fs_sb *sb)
{
	if (!sb->extents)
		return;
	pthread_mutex_destroy(&sb->extents->lock);
	free(sb->extents);
	sb->extents = NULL;
}

uint64_t f2fs_extent_evictions(struct f2fs_sb *sb)
{
	return sb->extents ? atomic_load(&sb->extents->evictions) : 0;
}

void f2fs_extent_tree_init(struct f2fs_sb *sb, struct f2fs_extent_tree *et,
			   const struct f2fs_extent *largest)
{
	memset(et, 0, sizeof(*et));
	pthread_mutex_init(&et->lock, NULL);
	et->mgr = sb->extents;
	if (largest)
		et->largest = *largest;
}

/* ---- the manager's LRU (its lock held) ---- */

static void lru_unlink(struct f2fs_extent_mgr *m, struct f2fs_extent_tree *et)
{
	if (!et->on_lru)
		return;
	if (et->lru_prev)
		et->lru_prev->lru_next = et->lru_next;
	else
		m->head = et->lru_next;
	if (et->lru_next)
		et->lru_next->lru_prev = et->lru_prev;
	else
		m->tail = et->lru_prev;
	et->lru_prev = et->lru_next = NULL;
	et->on_lru = false;
}

static void lru_push(struct f2fs_extent_mgr *m, struct f2fs_extent_tree *et)
{
	lru_unlink(m, et);
	et->lru_next = m->head;
	if (m->head)
		m->head->lru_prev = et;
	m->head = et;
	if (!m->tail)
		m->tail = et;
	et->on_lru = true;
}

static size_t tree_bytes(const struct f2fs_extent_tree *et)
{
	return (size_t)et->cap * sizeof(*et->ext);
}

/* Charge what a tree's array costs now (its lock held by the caller, or not needed). */
static void recharge(struct f2fs_extent_mgr *m, struct f2fs_extent_tree *et, size_t now)
{
	m->bytes = m->bytes - et->charged + now;
	et->charged = now;
}

/* Keep the lower half of a tree's runs from its array: file offsets read later stay. */
static void shrink_half(struct f2fs_extent_tree *et)
{
	uint32_t keep = et->nr / 2;
	struct f2fs_extent *ne;

	memmove(et->ext, et->ext + (et->nr - keep), keep * sizeof(*et->ext));
	et->nr = keep;
	ne = keep ? realloc(et->ext, keep * sizeof(*ne)) : NULL;
	if (!ne) {
		free(et->ext);
		et->ext = NULL;
		et->cap = 0;
	} else if (ne) {
		et->ext = ne;
		et->cap = keep;
	}
}

/* The tree et was used (and changed to now bytes): to the front, and evict past the budget. */
static void touch(struct f2fs_extent_tree *et, bool changed)
{
	struct f2fs_extent_mgr *m = et->mgr;
	size_t now;

	if (!m)
		return;
	pthread_mutex_lock(&et->lock);
	now = tree_bytes(et);
	pthread_mutex_unlock(&et->lock);
	pthread_mutex_lock(&m->lock);
	if (changed)
		recharge(m, et, now);
	if (!now)
		lru_unlink(m, et);
	else if (m->head != et)
		lru_push(m, et);
	while (m->bytes > m->max_bytes && m->tail) {
		struct f2fs_extent_tree *v = m->tail;

		pthread_mutex_lock(&v->lock);
		if (v == m->head && v->nr > 1) {
			shrink_half(v);		/* alone over the budget: part of it */
		} else {
			free(v->ext);
			v->ext = NULL;
			v->nr = v->cap = 0;
		}
		now = tree_bytes(v);
		pthread_mutex_unlock(&v->lock);
		recharge(m, v, now);
		if (!now)
			lru_unlink(m, v);
		atomic_fetch_add(&m->evictions, 1);
	}
	pthread_mutex_unlock(&m->lock);
}

void f2fs_extent_tree_destroy(struct f2fs_extent_tree *et)
{
	if (et->mgr) {
		pthread_mutex_lock(&et->mgr->lock);
		recharge(et->mgr, et, 0);
		lru_unlink(et->mgr, et);
		pthread_mutex_unlock(&et->mgr->lock);
	}
	free(et->ext);
	et->ext = NULL;
	et->nr = et->cap = 0;
	pthread_mutex_destroy(&et->lock);
}

/* Forget the runs (drop_caches); the largest extent is the inode's and stays. */
void f2fs_extent_tree_forget(struct f2fs_extent_tree *et)
{
	pthread_mutex_lock(&et->lock);
	free(et->ext);
	et->ext = NULL;
	et->nr = et->cap = 0;
	pthread_mutex_unlock(&et->lock);
	touch(et, true);
}

static bool in_extent(const struct f2fs_extent *e, uint32_t lblk)
{
	return e->len && lblk >= e->fofs && lblk - e->fofs < e->len;
}

/* index of the first run with fofs + len > lblk */
static uint32_t search(const struct f2fs_extent_tree *et, uint64_t lblk)
{
	uint32_t lo = 0, hi = et->nr;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if ((uint64_t)et->ext[mid].fofs + et->ext[mid].len <= lblk)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

bool f2fs_extent_lookup(struct f2fs_extent_tree *et, uint32_t lblk, struct f2fs_extent *out)
{
	bool hit = false, runs = false;
	uint32_t i;

	pthread_mutex_lock(&et->lock);
	if (in_extent(&et->largest, lblk)) {
		*out = et->largest;
		hit = true;
	} else {
		i = search(et, lblk);
		if (i < et->nr && in_extent(&et->ext[i], lblk)) {
			*out = et->ext[i];
			hit = runs = true;
		}
	}
	pthread_mutex_unlock(&et->lock);
	if (runs)
		touch(et, false);
	return hit;
}

/* Room for one more run at index i (tree locked); false if memory is short. */
static bool make_room(struct f2fs_extent_tree *et, uint32_t i)
{
	if (et->nr == et->cap) {
		uint32_t cap = et->cap ? et->cap * 2 : 16;
		struct f2fs_extent *ne = realloc(et->ext, cap * sizeof(*ne));

		if (!ne)
			return false;
		et->ext = ne;
		et->cap = cap;
	}
	memmove(&et->ext[i + 1], &et->ext[i], (et->nr - i) * sizeof(*et->ext));
	et->nr++;
	return true;
}

/* The kernel's __try_update_largest_extent: remember the longest run seen. */
static void try_largest(struct f2fs_extent_tree *et, const struct f2fs_extent *e)
{
	if (e->len > et->largest.len)
		et->largest = *e;
}

/* Learn one run (tree locked).  Runs in the tree are current: a remap cuts its
 * range out first, so an overlapping run describes the same blocks. */
static void insert_locked(struct f2fs_extent_tree *et, uint32_t fofs, uint32_t blk, uint32_t len)
{
	uint32_t i = search(et, fofs);

	if (i < et->nr && et->ext[i].fofs < (uint64_t)fofs + len)
		return;
	/* merge with the neighbours when logically and physically adjacent */
	if (i > 0) {
		struct f2fs_extent *p = &et->ext[i - 1];

		if (p->fofs + p->len == fofs && p->blk + p->len == blk) {
			p->len += len;
			if (i < et->nr && et->ext[i].fofs == p->fofs + p->len &&
			    et->ext[i].blk == p->blk + p->len) {
				p->len += et->ext[i].len;
				memmove(&et->ext[i], &et->ext[i + 1],
					(et->nr - i - 1) * sizeof(*et->ext));
				et->nr--;
			}
			try_largest(et, p);
			return;
		}
	}
	if (i < et->nr && et->ext[i].fofs == fofs + len && et->ext[i].blk == blk + len) {
		et->ext[i].fofs = fofs;
		et->ext[i].blk = blk;
		et->ext[i].len += len;
		try_largest(et, &et->ext[i]);
		return;
	}
	if (!make_room(et, i))
		return;		/* caching is optional */
	et->ext[i] = (struct f2fs_extent){ fofs, blk, len };
	try_largest(et, &et->ext[i]);
}

void f2fs_extent_insert(struct f2fs_extent_tree *et, uint32_t fofs, uint32_t blk, uint32_t len)
{
	if (!len)
		return;
	pthread_mutex_lock(&et->lock);
	insert_locked(et, fofs, blk, len);
	pthread_mutex_unlock(&et->lock);
	touch(et, true);
}

/* Cut [start, end) out of the runs (tree locked). */
static void remove_runs(struct f2fs_extent_tree *et, uint64_t start, uint64_t end)
{
	uint32_t i = search(et, start), j;

	if (!et->nr)
		return;
	if (i < et->nr && et->ext[i].fofs < start) {
		struct f2fs_extent e = et->ext[i];
		uint64_t eend = (uint64_t)e.fofs + e.len;

		et->ext[i].len = (uint32_t)(start - e.fofs);
		if (eend > end) {
			/* a hole punched in the middle of one run: it splits */
			if (make_room(et, i + 1))
				et->ext[i + 1] = (struct f2fs_extent){
					(uint32_t)end, e.blk + (uint32_t)(end - e.fofs),
					(uint32_t)(eend - end) };
			return;
		}
		i++;
	}
	for (j = i; j < et->nr && (uint64_t)et->ext[j].fofs + et->ext[j].len <= end; j++)
		;
	if (j < et->nr && et->ext[j].fofs < end) {
		uint32_t d = (uint32_t)(end - et->ext[j].fofs);

		et->ext[j].fofs += d;
		et->ext[j].blk += d;
		et->ext[j].len -= d;
	}
	memmove(&et->ext[i], &et->ext[j], (et->nr - j) * sizeof(*et->ext));
	et->nr -= j - i;
}

/* Cut [start, end) out of the runs and the largest extent (tree locked). */
static void remove_range(struct f2fs_extent_tree *et, uint64_t start, uint64_t end)
{
	if (et->largest.len && start < (uint64_t)et->largest.fofs + et->largest.len &&
	    end > et->largest.fofs)
		et->largest.len = 0;
	remove_runs(et, start, end);
}

/*
 * A whole walk's runs (the precache): one lock and one charge for all of
 * them.  Runs known already that overlap a new one are pieces of it (a
 * remap cuts its range out first, so both describe the current mapping):
 * they give way to it, where insert_locked would keep the pieces.
 */
void f2fs_extent_insert_runs(struct f2fs_extent_tree *et, const struct f2fs_extent *runs,
			     uint32_t n)
{
	if (!n)
		return;
	pthread_mutex_lock(&et->lock);
	for (uint32_t k = 0; k < n; k++) {
		const struct f2fs_extent *e = &runs[k];

		if (!e->len)
			continue;
		remove_runs(et, e->fofs, (uint64_t)e->fofs + e->len);
		insert_locked(et, e->fofs, e->blk, e->len);
	}
	pthread_mutex_unlock(&et->lock);
	touch(et, true);
}

/*
 * Learn every mapped run of a direct node, from slot dn->ofs_in_node on
 * (file block lblk): a sequential read wants the following ones next.
 * Runs reaching outside the main area are left to the mapping to report.
 */
void f2fs_update_extent_cache(struct f2fs_sb *sb, const struct dnode_of_data *dn, uint32_t lblk)
{
	struct f2fs_extent_tree *et = &dn->inode->et;
	const uint8_t *addrs = dn->addrs;
	uint32_t ofs = dn->ofs_in_node, n;

	pthread_mutex_lock(&et->lock);
	for (uint32_t i = ofs; i < dn->naddrs;) {
		uint32_t a = get_le32(addrs + 4 * i);

		if (a == COMPRESS_ADDR && f2fs_is_compressed(dn->inode)) {
			/* a compressed cluster's blocks are not its file blocks */
			i = (i | ((1u << dn->inode->log_cluster_size) - 1)) + 1;
			continue;
		}
		if (a == NULL_ADDR) {
			i = f2fs_next_used_slot(addrs, i + 1, dn->naddrs);
			continue;
		}
		if (a == NEW_ADDR || a == COMPRESS_ADDR) {
			i++;
			continue;
		}
		for (n = 1; i + n < dn->naddrs && get_le32(addrs + 4 * (i + n)) == a + n; n++)
			;
		if (f2fs_valid_main_blkaddr(sb, a) && (uint64_t)a + n <= f2fs_main_end_blkaddr(sb))
			insert_locked(et, lblk + (i - ofs), a, n);
		i += n;
	}
	pthread_mutex_unlock(&et->lock);
	touch(et, true);
}

/*
 * Blocks [fofs, fofs + len) of inode are being remapped: cut them out of
 * the runs, and out of the on-disk largest extent, a hint every reader
 * trusts, if it touches the range.  The rest stays cached.
 */
void f2fs_drop_extent_cache(struct f2fs_inode *inode, uint64_t fofs, uint64_t len)
{
	uint32_t efofs = get_le32(inode->node + I_EXT), elen = get_le32(inode->node + I_EXT + 8);

	if (!len)
		return;
	if (elen && fofs < (uint64_t)efofs + elen && fofs + len > efofs)
		memset(inode->node + I_EXT, 0, 12);
	f2fs_drop_extent_cache_runs(&inode->et, fofs, len);
}

void f2fs_drop_extent_cache_runs(struct f2fs_extent_tree *et, uint64_t fofs, uint64_t len)
{
	if (!len)
		return;
	pthread_mutex_lock(&et->lock);
	remove_range(et, fofs, fofs + len);
	pthread_mutex_unlock(&et->lock);
	touch(et, true);
}

/* File block fofs moved to blk (cleaning): the runs learn it in place. */
void f2fs_extent_cache_move(struct f2fs_inode *inode, uint32_t fofs, uint32_t blk)
{
	f2fs_drop_extent_cache(inode, fofs, 1);
	/* a compressed cluster's blocks do not map file blocks one to one */
	if (!f2fs_is_compressed(inode))
		f2fs_extent_insert(&inode->et, fofs, blk, 1);
}
