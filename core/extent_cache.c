// SPDX-License-Identifier: GPL-2.0
/*
 * Read extent cache: per inode, a sorted array of non-overlapping
 * (fofs, blk, len) runs learned from node walks, plus the on-disk largest
 * extent.  A large sequential read then maps many blocks per lookup
 * instead of walking the node tree for each one.
 *
 * It keeps itself coherent: whoever remaps blocks (writes, truncation,
 * roll-forward, cleaning) calls f2fs_drop_extent_cache, which forgets
 * what may be stale here and in the inode's on-disk largest extent.
 */
#include <stdlib.h>
#include <string.h>

#include "f2fs.h"

#define EXTENT_TREE_MAX 8192	/* runs kept per inode */

void f2fs_extent_tree_init(struct f2fs_extent_tree *et, const struct f2fs_extent *largest)
{
	memset(et, 0, sizeof(*et));
	pthread_mutex_init(&et->lock, NULL);
	if (largest)
		et->largest = *largest;
}

void f2fs_extent_tree_destroy(struct f2fs_extent_tree *et)
{
	free(et->ext);
	et->ext = NULL;
	et->nr = et->cap = 0;
	pthread_mutex_destroy(&et->lock);
}

static bool in_extent(const struct f2fs_extent *e, uint32_t lblk)
{
	return e->len && lblk >= e->fofs && lblk - e->fofs < e->len;
}

/* index of the first run with fofs + len > lblk */
static uint32_t search(const struct f2fs_extent_tree *et, uint32_t lblk)
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
	bool hit = false;
	uint32_t i;

	pthread_mutex_lock(&et->lock);
	if (in_extent(&et->largest, lblk)) {
		*out = et->largest;
		hit = true;
	} else {
		i = search(et, lblk);
		if (i < et->nr && in_extent(&et->ext[i], lblk)) {
			*out = et->ext[i];
			hit = true;
		}
	}
	pthread_mutex_unlock(&et->lock);
	return hit;
}

void f2fs_extent_insert(struct f2fs_extent_tree *et, uint32_t fofs, uint32_t blk, uint32_t len)
{
	struct f2fs_extent n = { fofs, blk, len };
	uint32_t i, j;

	if (!len)
		return;
	pthread_mutex_lock(&et->lock);
	i = search(et, fofs);
	/* remapping drops the tree (f2fs_drop_extent_cache), so an overlapping run
	 * describes the same mapping: we already know this range, keep the old one */
	if (i < et->nr && et->ext[i].fofs < fofs + len)
		goto out;
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
			goto out;
		}
	}
	if (i < et->nr && et->ext[i].fofs == fofs + len && et->ext[i].blk == blk + len) {
		et->ext[i].fofs = fofs;
		et->ext[i].blk = blk;
		et->ext[i].len += len;
		goto out;
	}
	if (et->nr == EXTENT_TREE_MAX) {
		/* full: forget everything rather than track recency per run */
		et->nr = 0;
		i = 0;
	}
	if (et->nr == et->cap) {
		uint32_t cap = et->cap ? et->cap * 2 : 16;
		struct f2fs_extent *ne = realloc(et->ext, cap * sizeof(*ne));

		if (!ne)
			goto out;	/* caching is optional */
		et->ext = ne;
		et->cap = cap;
	}
	for (j = et->nr; j > i; j--)
		et->ext[j] = et->ext[j - 1];
	et->ext[i] = n;
	et->nr++;
out:
	pthread_mutex_unlock(&et->lock);
}

/*
 * Learn every mapped run of a direct node, from slot dn->ofs_in_node on
 * (file block lblk): a sequential read wants the following ones next.
 * Runs reaching outside the main area are left to the mapping to report.
 */
void f2fs_update_extent_cache(struct f2fs_sb *sb, const struct dnode_of_data *dn, uint32_t lblk)
{
	const uint8_t *addrs = dn->addrs;
	uint32_t ofs = dn->ofs_in_node, n;

	for (uint32_t i = ofs; i < dn->naddrs;) {
		uint32_t a = get_le32(addrs + 4 * i);

		if (a == COMPRESS_ADDR && f2fs_is_compressed(dn->inode)) {
			/* a compressed cluster's blocks are not its file blocks */
			i = (i | ((1u << dn->inode->log_cluster_size) - 1)) + 1;
			continue;
		}
		if (a == NULL_ADDR || a == NEW_ADDR || a == COMPRESS_ADDR) {
			i++;
			continue;
		}
		for (n = 1; i + n < dn->naddrs && get_le32(addrs + 4 * (i + n)) == a + n; n++)
			;
		if (f2fs_valid_main_blkaddr(sb, a) && (uint64_t)a + n <= f2fs_main_end_blkaddr(sb))
			f2fs_extent_insert(&dn->inode->et, lblk + (i - ofs), a, n);
		i += n;
	}
}

/*
 * Blocks [fofs, fofs + len) of inode are being remapped.  The on-disk
 * largest extent is a hint every reader trusts, so it goes if it touches
 * the range; the runs in memory go altogether (a tree rebuilt on demand
 * costs less than splitting runs on every write).
 */
void f2fs_drop_extent_cache(struct f2fs_inode *inode, uint64_t fofs, uint64_t len)
{
	uint32_t efofs = get_le32(inode->node + I_EXT), elen = get_le32(inode->node + I_EXT + 8);

	if (elen && fofs < (uint64_t)efofs + elen && fofs + len > efofs)
		memset(inode->node + I_EXT, 0, 12);
	pthread_mutex_lock(&inode->et.lock);
	inode->et.nr = 0;
	inode->et.largest.len = 0;
	pthread_mutex_unlock(&inode->et.lock);
}
