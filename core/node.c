// SPDX-License-Identifier: GPL-2.0
/*
 * Node blocks: reading a node by nid through the NAT and the block cache
 * and checking its footer against what pointed to it; the node tree of an
 * inode (the walk down to the direct node of a file block, and freeing
 * the tree from a block on); and, on a writable mount, the table of dirty
 * nodes that the next checkpoint or fsync writes out of place.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "f2fs.h"

#define DIRTY_NODE_BUCKETS 4096
/* the longest a group's leader waits for more fsyncs to join (jbd2's max_batch_time) */
#ifndef F2FS_FSYNC_BATCH_MAX_NS
#define F2FS_FSYNC_BATCH_MAX_NS 5000000u
#endif
#define FSYNC_RECENT 32

struct f2fs_dirty_node {
	uint32_t nid;
	struct f2fs_dirty_node *hnext;
	uint8_t *data;
};

struct f2fs_fsync_req;

struct f2fs_node_table {
	pthread_mutex_t lock;
	struct f2fs_dirty_node *hash[DIRTY_NODE_BUCKETS];
	uint32_t nr_dirty;
	/* fsync group commit: the queue of fsyncs waiting for the next group */
	pthread_mutex_t fsync_lock;
	pthread_cond_t fsync_cond;	/* a group is done */
	pthread_cond_t fsync_arrive;	/* a request queued while a leader gathers */
	struct f2fs_fsync_req *fsync_queue, **fsync_tail;
	uint32_t fsync_queued;
	bool fsync_busy;		/* a leader is gathering or writing a group */
	uint32_t fsync_hint;		/* fsyncs overlapping lately: are they concurrent? */
	uint64_t fsync_avg_ns;		/* average time of a group's write and flush */
	uint32_t fsync_recent[FSYNC_RECENT];	/* inodes of the last requests */
	uint32_t fsync_recent_pos;
};

static struct f2fs_dirty_node **dirty_slot(struct f2fs_node_table *t, uint32_t nid)
{
	struct f2fs_dirty_node **pp = &t->hash[nid % DIRTY_NODE_BUCKETS];

	while (*pp && (*pp)->nid != nid)
		pp = &(*pp)->hnext;
	return pp;
}

static bool dirty_lookup(struct f2fs_sb *sb, uint32_t nid, uint8_t *buf)
{
	struct f2fs_node_table *t = sb->dirty_nodes;
	struct f2fs_dirty_node *d;

	if (!t)
		return false;
	pthread_mutex_lock(&t->lock);
	d = *dirty_slot(t, nid);
	if (d)
		memcpy(buf, d->data, F2FS_BLKSIZE);
	pthread_mutex_unlock(&t->lock);
	return d != NULL;
}

int f2fs_check_node_footer(struct f2fs_sb *sb, const uint8_t *blk, uint32_t nid, uint32_t ino,
			   uint32_t ofs)
{
	if (f2fs_node_nid(blk) == nid && f2fs_node_ino(blk) == ino &&
	    (ofs == F2FS_NODE_OFS_ANY || f2fs_node_ofs(blk) == ofs))
		return 0;
	if (ofs == F2FS_NODE_OFS_ANY)
		return f2fs_corrupted(sb, "node %u: footer names nid %u of inode %u, expected inode %u",
				      nid, f2fs_node_nid(blk), f2fs_node_ino(blk), ino);
	return f2fs_corrupted(sb, "node %u: footer names nid %u of inode %u at offset %u, expected "
			      "inode %u offset %u", nid, f2fs_node_nid(blk), f2fs_node_ino(blk),
			      f2fs_node_ofs(blk), ino, ofs);
}

static void ra_list(struct f2fs_sb *sb, uint32_t ino, const uint32_t *nids, const uint32_t *ofs,
		    uint32_t n);

int f2fs_get_node(struct f2fs_sb *sb, uint32_t nid, uint32_t ino, uint32_t ofs, uint8_t *buf)
{
	struct f2fs_node_info ni;
	int err;

	if (dirty_lookup(sb, nid, buf))
		return f2fs_check_node_footer(sb, buf, nid, ino, ofs);
	err = f2fs_get_node_info(sb, nid, &ni);
	if (err)
		return err;
	if (ni.blkaddr == NULL_ADDR)
		return f2fs_corrupted(sb, "node %u: referenced but free in the NAT", nid);
	if (!f2fs_valid_main_blkaddr(sb, ni.blkaddr))
		return f2fs_corrupted(sb, "node %u: NAT block address 0x%x is outside the main area",
				      nid, ni.blkaddr);
	if (!f2fs_cache_lookup(sb->cache, ni.blkaddr, buf)) {
		/* an inode not in memory comes with its neighbours (ra_list) */
		if (nid == ino && ofs == 0 && f2fs_node_ra_blocks(sb)) {
			ra_list(sb, 0, &nid, NULL, 1);
			if (f2fs_cache_lookup(sb->cache, ni.blkaddr, buf))
				return f2fs_check_node_footer(sb, buf, nid, ino, ofs);
		}
		err = f2fs_dev_read(sb->dev, ni.blkaddr, buf, 1);
		if (err)
			return err;
		if (f2fs_node_nid(buf) != nid || f2fs_node_ino(buf) != ni.ino)
			return f2fs_corrupted(sb, "node %u at 0x%x: footer says nid %u ino %u, NAT "
					      "says ino %u", nid, ni.blkaddr, f2fs_node_nid(buf),
					      f2fs_node_ino(buf), ni.ino);
		f2fs_cache_insert(sb->cache, ni.blkaddr, buf);
	}
	return f2fs_check_node_footer(sb, buf, nid, ino, ofs);
}

/* ======================= node read-ahead ======================= */

static bool is_dirty_node(struct f2fs_sb *sb, uint32_t nid)
{
	struct f2fs_node_table *t = sb->dirty_nodes;
	bool d;

	if (!t)
		return false;
	pthread_mutex_lock(&t->lock);
	d = *dirty_slot(t, nid) != NULL;
	pthread_mutex_unlock(&t->lock);
	return d;
}

struct ra_node {
	uint32_t addr, nid, ofs, ino;
};

struct ra_ctx {
	struct f2fs_sb *sb;
	const struct ra_node *v;
	uint32_t passed_over;	/* window neighbours not kept: no sign of damage */
};

/*
 * A block read ahead is kept only if its footer names the node the parent
 * points to.  A neighbour that came with an inode's window (nid 0 here) is
 * kept only if it is an inode, the NAT names this address as its live copy
 * and no dirty copy of it exists: the cache gets no block an inode load
 * would not have read itself.  Windows are read under evict_lock, which
 * keeps an inode from being freed (and its block from being invalidated)
 * between that check and the insert.
 */
static bool ra_node_keep(void *arg, uint32_t i, const uint8_t *blk)
{
	struct ra_ctx *c = arg;
	const struct ra_node *r = &c->v[i];
	uint32_t nid = f2fs_node_nid(blk);
	struct f2fs_node_info ni;

	if (r->nid)
		return nid == r->nid && f2fs_node_ino(blk) == r->ino && f2fs_node_ofs(blk) == r->ofs;
	if (nid && nid < c->sb->max_nid && f2fs_node_ino(blk) == nid && !f2fs_node_ofs(blk) &&
	    !is_dirty_node(c->sb, nid) && !f2fs_get_node_info(c->sb, nid, &ni) &&
	    ni.blkaddr == r->addr && ni.ino == nid)
		return true;
	c->passed_over++;
	return false;
}

/* By address; of two entries for one address the wanted one (a nid) first. */
static int cmp_ra_node_wanted(const void *a, const void *b)
{
	const struct ra_node *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return (y->nid != 0) - (x->nid != 0);
}

/*
 * Inode blocks are read with their aligned window of INODE_RA_BLOCKS
 * around them (inside the segment: node segments hold node blocks only),
 * as ext4 reads inode table blocks ahead (inode_readahead_blks).  Inodes
 * made together lie side by side in the node log even when their files
 * went to different directories, so a cold walk over them (stat of every
 * file, ls -l, find, du) costs a request per window instead of one per
 * inode.  v has room for INODE_RA_BLOCKS entries per wanted one.
 */
#define INODE_RA_BLOCKS 16

/*
 * The wanted inodes v[0..m), sorted by address, with their windows: into w,
 * in address order, each address once except a wanted one's (a wanted entry
 * before a neighbour's, as the read-ahead keeps the first of equal
 * addresses), without sorting m * INODE_RA_BLOCKS entries.  w has room for
 * INODE_RA_BLOCKS entries per wanted one.
 */
static uint32_t widen_to_windows(struct f2fs_sb *sb, const struct ra_node *v, uint32_t m,
				 struct ra_node *w)
{
	uint32_t end = sb->main_blkaddr + (sb->segment_count_main << sb->log_blocks_per_seg);
	uint32_t n = 0, k = 0, done = 0;	/* addresses below done are out */

	for (uint32_t i = 0; i < m; i++) {
		uint32_t start = v[i].addr - ((v[i].addr - sb->main_blkaddr) & (INODE_RA_BLOCKS - 1));
		uint32_t stop = start + INODE_RA_BLOCKS;

		if (stop > end) {	/* no window: the inode alone */
			start = v[i].addr;
			stop = start + 1;
		}
		for (uint32_t a = start > done ? start : done; a < stop; a++) {
			bool wanted = false;

			while (k < m && v[k].addr <= a) {
				if (v[k].addr == a) {
					w[n++] = v[k];
					wanted = true;
				}
				k++;
			}
			if (!wanted)
				w[n++] = (struct ra_node){ a, 0, 0, 0 };
		}
		done = stop > done ? stop : done;
	}
	return n;
}

/* Read v[0..m), sorted by address, ahead into the block cache. */
static void ra_sorted(struct f2fs_sb *sb, const struct ra_node *v, uint32_t m)
{
	struct f2fs_ra_result res = { 0 };
	uint32_t *addrs = malloc((m ? m : 1) * sizeof(*addrs));
	struct ra_ctx ctx = { sb, v, 0 };

	if (!addrs)
		return;
	for (uint32_t i = 0; i < m; i++)
		addrs[i] = v[i].addr;
	f2fs_cache_readahead(sb->cache, sb->dev, addrs, m, f2fs_node_ra_depth(sb), ra_node_keep,
			     &ctx, &res);
	f2fs_stat_add(sb, node_ra_blocks, res.blocks);
	f2fs_stat_add(sb, node_ra_requests, res.requests);
	/* refused: blocks that were not what pointed to them */
	f2fs_stat_add(sb, node_ra_rejected, res.rejected - ctx.passed_over);
	free(addrs);
}

/*
 * Read ahead nodes nids[0..n): of inode ino at node offsets ofs[0..n), or
 * with ino 0 each an inode itself (offset 0).  Nids go through the NAT (its
 * blocks batched too); nodes dirty or cached already are skipped; the
 * addresses are sorted and neighbours coalesced into one request each,
 * several requests in flight.  Nodes written together lie side by side in
 * the node log, so a thousand of them usually come in a handful of requests.
 */
static void ra_list(struct f2fs_sb *sb, uint32_t ino, const uint32_t *nids, const uint32_t *ofs,
		    uint32_t n)
{
	struct f2fs_node_info ni;
	struct ra_node *v, *w = NULL;
	uint32_t m = 0;

	f2fs_ra_nat_blocks(sb, nids, n, f2fs_node_ra_depth(sb));
	v = malloc((size_t)n * sizeof(*v));
	if (!v)
		return;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t owner = ino ? ino : nids[i];

		if (is_dirty_node(sb, nids[i]) || f2fs_get_node_info(sb, nids[i], &ni) ||
		    ni.ino != owner || !f2fs_valid_main_blkaddr(sb, ni.blkaddr) ||
		    f2fs_cache_contains(sb->cache, ni.blkaddr))
			continue;
		v[m++] = (struct ra_node){ ni.blkaddr, nids[i], ofs ? ofs[i] : 0, owner };
	}
	/* the read-ahead keeps the first of equal addresses: the wanted one */
	qsort(v, m, sizeof(*v), cmp_ra_node_wanted);
	if (!ino && m)
		w = malloc((size_t)m * INODE_RA_BLOCKS * sizeof(*w));
	if (w)
		ra_sorted(sb, w, widen_to_windows(sb, v, m, w));
	else
		ra_sorted(sb, v, m);
	free(w);
	free(v);
}

/* A walk's next nodes, unless nids[0], the one it wants now, is in memory already. */
static void ra_nodes(struct f2fs_sb *sb, uint32_t ino, const uint32_t *nids, const uint32_t *ofs,
		     uint32_t n)
{
	struct f2fs_node_info ni;

	if (!n || is_dirty_node(sb, nids[0]) || f2fs_get_node_info(sb, nids[0], &ni) ||
	    !f2fs_valid_main_blkaddr(sb, ni.blkaddr) || f2fs_cache_contains(sb->cache, ni.blkaddr))
		return;	/* in memory already, or for the reader to report */
	ra_list(sb, ino, nids, ofs, n);
}

/*
 * The inode blocks of inos[0..n) (a directory's entries) not in memory: a
 * directory filled in one go has its inodes side by side in the node log,
 * so its entries come in a few requests instead of one read each.
 */
void f2fs_ra_inode_blocks(struct f2fs_sb *sb, const uint32_t *inos, uint32_t n)
{
	if (!n || !f2fs_node_ra_blocks(sb))
		return;
	/* as an inode load (f2fs_iget), which reads the windows under it too */
	pthread_rwlock_rdlock(&sb->evict_lock);
	ra_list(sb, 0, inos, NULL, n);
	pthread_rwlock_unlock(&sb->evict_lock);
}

/*
 * f2fs_ra_node_pages: the walk reached indirect node `parent` (node offset
 * pofs) and wants its child in slot `start`: that child and the next ones
 * (up to node_ra of them; slots without a node are holes).
 */
static void ra_node_children(struct f2fs_sb *sb, uint32_t ino, const uint8_t *parent,
			     uint32_t pofs, uint32_t start)
{
	uint32_t max = f2fs_node_ra_blocks(sb), nids[NIDS_PER_BLOCK], ofs[NIDS_PER_BLOCK], n = 0;

	if (!get_le32(parent + 4 * start))
		return;
	for (uint32_t i = start; i < NIDS_PER_BLOCK && n < max; i++) {
		uint32_t nid = get_le32(parent + 4 * i);

		if (nid) {
			nids[n] = nid;
			ofs[n++] = pofs + 1 + i;
		}
	}
	ra_nodes(sb, ino, nids, ofs, n);
}

/*
 * The same one level up: the walk leaves the inode for its node in slot
 * `start` of i_nid; the inode's other nodes (direct, indirect, double
 * indirect) were written with it and usually lie beside it.
 */
static void ra_inode_nodes(struct f2fs_sb *sb, const struct f2fs_inode *inode, uint32_t start)
{
	const uint32_t nofs[5] = { 1, 2, 3, 4 + NIDS_PER_BLOCK, 5 + 2 * NIDS_PER_BLOCK };
	uint32_t nids[5], ofs[5], n = 0;

	if (!f2fs_node_ra_blocks(sb) || !f2fs_i_nid(inode, (int)start))
		return;
	for (uint32_t k = start; k < 5; k++) {
		if (f2fs_i_nid(inode, (int)k)) {
			nids[n] = f2fs_i_nid(inode, (int)k);
			ofs[n++] = nofs[k];
		}
	}
	ra_nodes(sb, inode->ino, nids, ofs, n);
}

/* ======================= the node tree ======================= */

uint64_t f2fs_max_file_blocks(const struct f2fs_inode *inode)
{
	uint64_t leaf = f2fs_addrs_per_block(inode);
	uint64_t r = inode->addrs_per_inode + 2 * leaf;

	leaf *= NIDS_PER_BLOCK;
	r += 2 * leaf;
	leaf *= NIDS_PER_BLOCK;
	r += leaf;
	return F2FS_MIN(r, (uint64_t)0xFFFFFFFFu);
}

/*
 * get_node_path: offset[i] is the slot to follow at depth i, noffset[i]
 * the node offset (footer) expected of the node at depth i.  Returns the
 * depth of the direct node holding the address (0 = the inode itself).
 */
static int get_node_path(const struct f2fs_inode *inode, uint64_t block, uint32_t offset[4],
			 uint32_t noffset[4])
{
	const uint64_t direct_index = inode->addrs_per_inode;
	const uint64_t direct_blks = f2fs_addrs_per_block(inode);
	const uint64_t dptrs = NIDS_PER_BLOCK;
	const uint64_t indirect_blks = direct_blks * dptrs;
	const uint64_t dindirect_blks = indirect_blks * dptrs;

	noffset[0] = 0;
	if (block < direct_index) {
		offset[0] = (uint32_t)block;
		return 0;
	}
	block -= direct_index;
	if (block < direct_blks) {
		offset[0] = NODE_DIR1_BLOCK;
		noffset[1] = 1;
		offset[1] = (uint32_t)block;
		return 1;
	}
	block -= direct_blks;
	if (block < direct_blks) {
		offset[0] = NODE_DIR2_BLOCK;
		noffset[1] = 2;
		offset[1] = (uint32_t)block;
		return 1;
	}
	block -= direct_blks;
	if (block < indirect_blks) {
		offset[0] = NODE_IND1_BLOCK;
		noffset[1] = 3;
		offset[1] = (uint32_t)(block / direct_blks);
		noffset[2] = 4 + offset[1];
		offset[2] = (uint32_t)(block % direct_blks);
		return 2;
	}
	block -= indirect_blks;
	if (block < indirect_blks) {
		offset[0] = NODE_IND2_BLOCK;
		noffset[1] = 4 + (uint32_t)dptrs;
		offset[1] = (uint32_t)(block / direct_blks);
		noffset[2] = 5 + (uint32_t)dptrs + offset[1];
		offset[2] = (uint32_t)(block % direct_blks);
		return 2;
	}
	block -= indirect_blks;
	if (block < dindirect_blks) {
		offset[0] = NODE_DIND_BLOCK;
		noffset[1] = 5 + (uint32_t)dptrs * 2;
		offset[1] = (uint32_t)(block / indirect_blks);
		noffset[2] = 6 + (uint32_t)dptrs * 2 + offset[1] * ((uint32_t)dptrs + 1);
		offset[2] = (uint32_t)((block / direct_blks) % dptrs);
		noffset[3] = 7 + (uint32_t)dptrs * 2 + offset[1] * ((uint32_t)dptrs + 1) + offset[2];
		offset[3] = (uint32_t)(block % direct_blks);
		return 3;
	}
	return -E2BIG;
}

/* Blocks in a subtree whose root sits `height` levels above the addresses. */
static uint64_t subtree_span(const struct f2fs_inode *inode, int height)
{
	uint64_t s = 1;

	for (int h = 0; h < height; h++)
		s *= h == 0 ? f2fs_addrs_per_block(inode) : NIDS_PER_BLOCK;
	return s;
}

/* start_bidx_of_node: the first file block a direct node at offset ofs maps. */
uint64_t f2fs_start_bidx_of_node(const struct f2fs_inode *inode, uint32_t ofs)
{
	uint32_t indirect_blks = 2 * NIDS_PER_BLOCK + 4;
	uint64_t bidx;

	if (ofs == 0)
		return 0;
	if (ofs <= 2) {
		bidx = ofs - 1;
	} else if (ofs <= indirect_blks) {
		uint32_t dec = (ofs - 4) / (NIDS_PER_BLOCK + 1);

		bidx = ofs - 2 - dec;
	} else {
		uint32_t dec = (ofs - indirect_blks - 3) / (NIDS_PER_BLOCK + 1);

		bidx = ofs - 5 - dec;
	}
	return bidx * f2fs_addrs_per_block(inode) + inode->addrs_per_inode;
}

static int dnode_version(struct f2fs_sb *sb, struct dnode_of_data *dn)
{
	struct f2fs_node_info ni;
	int err = f2fs_get_node_info(sb, dn->nid, &ni);

	if (!err)
		dn->version = ni.version;
	return err;
}

/*
 * f2fs_get_dnode_of_data: walk inode -> (double) indirect -> direct node
 * to the slot of file block lblk, reading every node with its footer
 * checked against the path (inode and node offset).  The inode's own
 * slots are used in place; a direct node is copied into dn->node, and a
 * caller that changes it hands it back with f2fs_put_dnode.
 */
int f2fs_get_dnode_of_data(struct f2fs_sb *sb, struct f2fs_inode *inode, uint32_t lblk,
			   enum f2fs_dnode_mode mode, struct dnode_of_data *dn)
{
	uint8_t child[F2FS_BLKSIZE] __attribute__((aligned(16)));
	uint32_t offset[4], noffset[4], nid, parent = inode->ino;
	int level = get_node_path(inode, lblk, offset, noffset), err;

	dn->inode = inode;
	if (level < 0)
		return -EFBIG;
	if (level == 0) {
		dn->nid = inode->ino;
		dn->is_inode = true;
		dn->addrs = inode->node + I_ADDR + 4 * f2fs_addr_start(inode);
		dn->naddrs = inode->addrs_per_inode;
		dn->ofs_in_node = offset[0];
		return mode == ALLOC_NODE ? dnode_version(sb, dn) : 0;
	}
	nid = f2fs_i_nid(inode, (int)(offset[0] - NODE_DIR1_BLOCK));
	if (mode == LOOKUP_NODE_RA)
		ra_inode_nodes(sb, inode, offset[0] - NODE_DIR1_BLOCK);
	for (int k = 1; k <= level; k++) {
		if (nid) {
			err = f2fs_get_node(sb, nid, inode->ino, noffset[k], dn->node);
			if (err)
				return err;
		} else if (mode != ALLOC_NODE) {
			/* a missing node: everything below it is a hole */
			uint64_t idx = 0;

			for (int j = k; j <= level; j++)
				idx += offset[j] * subtree_span(inode, level - j);
			dn->hole_blocks = subtree_span(inode, level - k + 1) - idx;
			return -ENOENT;
		} else {
			/* inc_valid_node_count charges a node block to the inode's quota */
			err = f2fs_dquot_alloc_block(sb, inode, 1);
			if (err)
				return err;
			err = f2fs_new_node(sb, inode->ino, noffset[k], !S_ISDIR(inode->mode), &nid,
					    child);
			if (err) {
				f2fs_dquot_free_block(sb, inode, 1);
				return err;
			}
			inode->blocks++;
			if (k == 1) {
				put_le32(inode->node + I_NID + 4 * (offset[0] - NODE_DIR1_BLOCK), nid);
			} else {
				put_le32(dn->node + 4 * offset[k - 1], nid);
				err = f2fs_set_node_dirty(sb, parent, dn->node);
				if (err)
					return err;
			}
			memcpy(dn->node, child, F2FS_BLKSIZE);
		}
		parent = nid;
		if (k < level) {
			/* the parent of the direct node: its next children too */
			if (mode == LOOKUP_NODE_RA && k == level - 1)
				ra_node_children(sb, inode->ino, dn->node, noffset[k], offset[k]);
			nid = get_le32(dn->node + 4 * offset[k]);
		}
	}
	dn->nid = parent;
	dn->is_inode = false;
	dn->addrs = dn->node;
	dn->naddrs = f2fs_addrs_per_block(inode);
	dn->ofs_in_node = offset[level];
	return mode == ALLOC_NODE ? dnode_version(sb, dn) : 0;
}

/* ======================= walking every direct node ======================= */

#define WALK_MAX_RUN 256	/* blocks per device request (1 MiB) */

struct walk_read {
	uint32_t addr, slot;
};

static int cmp_walk_read(const void *a, const void *b)
{
	uint32_t x = ((const struct walk_read *)a)->addr, y = ((const struct walk_read *)b)->addr;

	return x < y ? -1 : x > y;
}

/*
 * One batch of a walk: nodes nids[0..n) of inode ino (node offsets
 * ofs[0..n)) into slots of buf, nid 0 being a hole (slot left alone).
 * Dirty and cached nodes are copied; the rest are read straight into their
 * slots, sorted by address and neighbours coalesced into one scattered
 * request each, several in flight.  They skip the block cache: a walk over
 * a whole file reads each node once, and caching thousands of them would
 * only push out what other readers use.  A block whose request failed or
 * whose footer is not the one expected is read again by f2fs_get_node,
 * which reports what is wrong.
 */
static int walk_fetch(struct f2fs_sb *sb, uint32_t ino, const uint32_t *nids, const uint32_t *ofs,
		      uint32_t n, uint8_t *buf)
{
	struct walk_read *rd = NULL;
	struct f2fs_bio *bios = NULL;
	struct iovec *iov = NULL;
	int *errs = NULL, err = 0;
	uint32_t m = 0, nb = 0, nreq = 0, nblk = 0;

	if (!f2fs_node_ra_blocks(sb)) {
		/* no read-ahead: one synchronous read per node, as without the walk */
		for (uint32_t i = 0; i < n && !err; i++)
			if (nids[i])
				err = f2fs_get_node(sb, nids[i], ino, ofs[i], buf + (size_t)i * F2FS_BLKSIZE);
		return err;
	}
	f2fs_ra_nat_blocks(sb, nids, n, f2fs_node_ra_depth(sb));
	rd = malloc(n * sizeof(*rd));
	if (!rd)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++) {
		uint8_t *blk = buf + (size_t)i * F2FS_BLKSIZE;
		struct f2fs_node_info ni;

		if (!nids[i])
			continue;
		if (dirty_lookup(sb, nids[i], blk)) {
			err = f2fs_check_node_footer(sb, blk, nids[i], ino, ofs[i]);
		} else if ((err = f2fs_get_node_info(sb, nids[i], &ni)) != 0) {
			break;
		} else if (ni.blkaddr == NULL_ADDR || !f2fs_valid_main_blkaddr(sb, ni.blkaddr)) {
			err = f2fs_get_node(sb, nids[i], ino, ofs[i], blk);	/* reports it */
		} else if (f2fs_cache_lookup(sb->cache, ni.blkaddr, blk)) {
			err = f2fs_check_node_footer(sb, blk, nids[i], ino, ofs[i]);
		} else {
			rd[m++] = (struct walk_read){ ni.blkaddr, i };
		}
		if (err)
			break;
	}
	if (err || !m)
		goto out;
	qsort(rd, m, sizeof(*rd), cmp_walk_read);
	bios = calloc(m, sizeof(*bios));
	iov = malloc(m * sizeof(*iov));
	errs = calloc(m, sizeof(*errs));
	if (!bios || !iov || !errs) {
		err = -ENOMEM;
		goto out;
	}
	for (uint32_t k = 0, v = 0; k < m;) {
		uint32_t len = 0, first = v;

		/* the same address twice (a corrupt NAT) is read once per slot; slots
		 * side by side in buf take one iovec (nodes written in file order) */
		do {
			uint8_t *p = buf + (size_t)rd[k + len].slot * F2FS_BLKSIZE;

			if (len && (uint8_t *)iov[v - 1].iov_base + iov[v - 1].iov_len == p)
				iov[v - 1].iov_len += F2FS_BLKSIZE;
			else
				iov[v++] = (struct iovec){ p, F2FS_BLKSIZE };
			len++;
		} while (k + len < m && len < WALK_MAX_RUN && rd[k + len].addr == rd[k].addr + len);
		bios[nb++] = (struct f2fs_bio){ .op = F2FS_BIO_READ, .blkaddr = rd[k].addr,
						.nr_blocks = len, .iov = &iov[first],
						.iovcnt = (int)(v - first) };
		k += len;
	}
	f2fs_submit_bios(sb->dev, bios, errs, nb, f2fs_node_ra_depth(sb));
	for (uint32_t r = 0, k = 0; r < nb && !err; r++) {
		nreq += !errs[r];
		for (uint32_t j = 0; j < bios[r].nr_blocks && !err; j++, k++) {
			uint32_t s = rd[k].slot;
			uint8_t *blk = buf + (size_t)s * F2FS_BLKSIZE;

			nblk += !errs[r];
			if (errs[r] || f2fs_node_nid(blk) != nids[s] || f2fs_node_ino(blk) != ino ||
			    f2fs_node_ofs(blk) != ofs[s])
				err = f2fs_get_node(sb, nids[s], ino, ofs[s], blk);
		}
	}
	f2fs_stat_add(sb, node_ra_blocks, nblk);
	f2fs_stat_add(sb, node_ra_requests, nreq);
out:
	free(rd);
	free(bios);
	free(iov);
	free(errs);
	return err;
}

struct dnode_walk {
	struct f2fs_sb *sb;
	struct f2fs_inode *inode;
	uint64_t end;			/* file blocks past it are not visited */
	f2fs_dnode_fn fn;
	void *arg;
	uint32_t batch;			/* nodes per fetch */
	uint8_t *buf[2];		/* a batch of children, per height above direct */
};

/*
 * The children of indirect node `parent` (node offset pofs, first file
 * block start, its children `height` levels above the data: 1 = direct
 * nodes, 2 = indirect ones), fetched a batch at a time.
 */
static int walk_children(struct dnode_walk *w, const uint8_t *parent, uint32_t pofs,
			 uint64_t start, int height)
{
	uint64_t span = subtree_span(w->inode, height);
	uint32_t nids[NIDS_PER_BLOCK], ofs[NIDS_PER_BLOCK], step = height == 1 ? 1 : NIDS_PER_BLOCK + 1;
	uint8_t *buf = w->buf[height - 1];
	int err = 0;

	for (uint32_t i0 = 0; i0 < NIDS_PER_BLOCK && start + i0 * span < w->end && !err;
	     i0 += w->batch) {
		uint32_t n = 0;

		while (i0 + n < NIDS_PER_BLOCK && n < w->batch && start + (i0 + n) * span < w->end) {
			nids[n] = get_le32(parent + 4 * (i0 + n));
			ofs[n] = pofs + 1 + (i0 + n) * step;
			n++;
		}
		err = walk_fetch(w->sb, w->inode->ino, nids, ofs, n, buf);
		for (uint32_t i = 0; i < n && !err; i++) {
			const uint8_t *blk = buf + (size_t)i * F2FS_BLKSIZE;
			uint64_t s = start + (i0 + i) * span;

			if (!nids[i])
				continue;
			if (height == 1)
				err = w->fn(w->arg, s, blk, f2fs_addrs_per_block(w->inode));
			else
				err = walk_children(w, blk, ofs[i], s, height - 1);
		}
	}
	return err;
}

/*
 * Visit every direct node of inode below file block end, and the inode's
 * own slots, in file order: fn(arg, first file block, slots, slot count).
 * Missing nodes are holes and not visited.  Unlike one
 * f2fs_get_dnode_of_data per direct node, each indirect node is read once
 * and its children a batch at a time (node_ra of them, sorted and
 * coalesced, several requests in flight: the kernel's f2fs_ra_node_pages),
 * decoded where they land.  The caller holds the inode's lock.
 */
int f2fs_walk_dnodes(struct f2fs_sb *sb, struct f2fs_inode *inode, uint64_t end,
		     f2fs_dnode_fn fn, void *arg)
{
	const uint32_t nofs[5] = { 1, 2, 3, 4 + NIDS_PER_BLOCK, 5 + 2 * NIDS_PER_BLOCK };
	const int height[5] = { 0, 0, 1, 1, 2 };
	struct dnode_walk w = { .sb = sb, .inode = inode, .end = end, .fn = fn, .arg = arg };
	uint64_t start[5];
	uint32_t nids[5];
	uint8_t *top = NULL, *pool = NULL;
	int err;

	if (!end)
		return 0;
	err = fn(arg, 0, inode->node + I_ADDR + 4 * f2fs_addr_start(inode), inode->addrs_per_inode);
	if (err)
		return err;
	start[0] = inode->addrs_per_inode;
	for (int k = 0; k < 5; k++) {
		if (k)
			start[k] = start[k - 1] + subtree_span(inode, height[k - 1] + 1);
		nids[k] = start[k] < end ? f2fs_i_nid(inode, k) : 0;
	}
	w.batch = f2fs_node_ra_blocks(sb) ? F2FS_MIN(f2fs_node_ra_blocks(sb), NIDS_PER_BLOCK) : 1;
	top = f2fs_alloc_blocks(5);
	for (int h = 0; h < 2 && top; h++) {
		uint64_t span = subtree_span(inode, h + 1);
		uint64_t kids = (end - F2FS_MIN(end, start[2 + h]) + span - 1) / span;

		kids = F2FS_MIN(kids, (uint64_t)w.batch);
		if (!kids)
			continue;	/* the file ends before nodes of this height */
		if (h == 0 && kids > 4) {
			/* a batch of direct nodes: the mount's buffer, unless in use */
			pool = atomic_exchange(&sb->walk_buf, NULL);
			w.buf[0] = pool ? pool : f2fs_alloc_blocks(NIDS_PER_BLOCK);
			pool = w.buf[0];
		} else {
			w.buf[h] = f2fs_alloc_blocks(kids);
		}
		if (!w.buf[h])
			err = -ENOMEM;
	}
	if (!top)
		err = -ENOMEM;
	if (!err)
		err = walk_fetch(sb, inode->ino, nids, nofs, 5, top);
	for (int k = 0; k < 5 && !err; k++) {
		const uint8_t *blk = top + (size_t)k * F2FS_BLKSIZE;

		if (!nids[k])
			continue;
		if (!height[k])
			err = fn(arg, start[k], blk, f2fs_addrs_per_block(inode));
		else
			err = walk_children(&w, blk, nofs[k], start[k], height[k]);
	}
	free(top);
	if (pool) {
		uint8_t *none = NULL;

		if (!atomic_compare_exchange_strong(&sb->walk_buf, &none, pool))
			free(pool);	/* another walk's buffer was kept meanwhile */
	} else {
		free(w.buf[0]);
	}
	free(w.buf[1]);
	return err;
}

int f2fs_put_dnode(struct f2fs_sb *sb, struct dnode_of_data *dn)
{
	if (dn->is_inode)
		return 0;	/* the inode block is written with the inode */
	return f2fs_set_node_dirty(sb, dn->nid, dn->node);
}

/*
 * Free the data block in slot i (real or reserved) of a node with naddrs
 * slots.  A compressed cluster's head goes first, with the rest of its
 * cluster after it: i_compr_blocks gives back what that cluster saved
 * (f2fs_truncate_data_blocks_range).
 */
static void free_slot(struct f2fs_sb *sb, struct f2fs_inode *inode, uint8_t *addrs, uint32_t i,
		      uint32_t naddrs)
{
	uint32_t a = get_le32(addrs + 4 * i);

	if (a == NULL_ADDR)
		return;
	if (a == COMPRESS_ADDR && f2fs_is_compressed(inode)) {
		uint32_t cs = 1u << inode->log_cluster_size, nr = 0;

		for (uint32_t k = i + 1; k < i + cs && k < naddrs; k++) {
			uint32_t b = get_le32(addrs + 4 * k);

			nr += b != NULL_ADDR && b != NEW_ADDR && b != COMPRESS_ADDR;
		}
		inode->compr_blocks -= F2FS_MIN(inode->compr_blocks, (uint64_t)(cs - nr));
	}
	if (a != NEW_ADDR && a != COMPRESS_ADDR)
		f2fs_invalidate_block(sb, a);
	/* a compressed cluster's head counts as a block, as its reserved slots
	 * do, until F2FS_IOC_RELEASE_COMPRESS_BLOCKS gave them back */
	if (a != COMPRESS_ADDR || !(inode->inline_flags & F2FS_COMPRESS_RELEASED)) {
		f2fs_add_valid_blocks(sb, -1);
		inode->blocks--;
		f2fs_dquot_free_block(sb, inode, 1);
	}
	put_le32(addrs + 4 * i, NULL_ADDR);
}

void f2fs_truncate_data_blocks_range(struct f2fs_sb *sb, struct dnode_of_data *dn, uint32_t count)
{
	for (uint32_t i = dn->ofs_in_node; i < dn->naddrs && count; i++, count--)
		free_slot(sb, dn->inode, dn->addrs, i, dn->naddrs);
}

/*
 * Free everything at or after block `from` in the subtree rooted at node
 * nid (node offset nofs; height 0: a direct node), whose first block is
 * first.  *gone is set when the node itself was removed.
 */
static int truncate_node(struct f2fs_sb *sb, struct f2fs_inode *inode, uint32_t nid, uint32_t nofs,
			 int height, uint64_t first, uint64_t from, bool *gone)
{
	uint8_t *blk = f2fs_alloc_blocks(1);
	bool changed = false;
	int err;

	*gone = false;
	if (!blk)
		return -ENOMEM;
	err = f2fs_get_node(sb, nid, inode->ino, nofs, blk);
	if (err)
		goto out;
	if (height == 0) {
		uint32_t apb = f2fs_addrs_per_block(inode);
		uint32_t start = from > first ? (uint32_t)(from - first) : 0;

		for (uint32_t i = start; (i = f2fs_next_used_slot(blk, i, apb)) < apb; i++) {
			free_slot(sb, inode, blk, i, apb);
			changed = true;
		}
	} else {
		uint64_t span = subtree_span(inode, height);
		/* a double-indirect node's children each have a subtree of nodes below */
		uint32_t step = height == 2 ? NIDS_PER_BLOCK + 1 : 1;

		for (uint32_t i = 0; i < NIDS_PER_BLOCK; i++) {
			uint64_t cfirst = first + i * span;
			uint32_t child = get_le32(blk + 4 * i);
			bool cgone;

			if (!child || cfirst + span <= from)
				continue;
			err = truncate_node(sb, inode, child, nofs + 1 + i * step, height - 1, cfirst,
					    from, &cgone);
			if (err)
				goto out;
			if (cgone) {
				put_le32(blk + 4 * i, 0);
				changed = true;
			}
		}
	}
	if (from <= first) {
		err = f2fs_remove_node(sb, nid, inode->ino, false);
		if (!err) {
			inode->blocks--;
			f2fs_dquot_free_block(sb, inode, 1);
			*gone = true;
		}
	} else if (changed) {
		err = f2fs_set_node_dirty(sb, nid, blk);
	}
out:
	free(blk);
	return err;
}

/* f2fs_truncate_inode_blocks: free every data block and node at or after block `from`. */
int f2fs_truncate_inode_blocks(struct f2fs_sb *sb, struct f2fs_inode *inode, uint64_t from)
{
	static const int heights[5] = { 0, 0, 1, 1, 2 };
	const uint32_t nofs[5] = { 1, 2, 3, 4 + NIDS_PER_BLOCK, 5 + 2 * NIDS_PER_BLOCK };
	uint64_t first = inode->addrs_per_inode;
	uint8_t *addrs = inode->node + I_ADDR + 4 * f2fs_addr_start(inode);
	int err = 0;

	for (uint32_t i = from < inode->addrs_per_inode ? (uint32_t)from : inode->addrs_per_inode;
	     (i = f2fs_next_used_slot(addrs, i, inode->addrs_per_inode)) < inode->addrs_per_inode; i++)
		free_slot(sb, inode, addrs, i, inode->addrs_per_inode);
	for (int k = 0; k < 5; k++) {
		uint32_t nid = f2fs_i_nid(inode, k);
		uint64_t span = subtree_span(inode, heights[k] + 1);
		bool gone;

		if (nid && first + span > from) {
			err = truncate_node(sb, inode, nid, nofs[k], heights[k], first, from, &gone);
			if (err)
				break;
			if (gone)
				put_le32(inode->node + I_NID + 4 * k, 0);
		}
		first += span;
	}
	f2fs_drop_extent_cache(inode, from, UINT32_MAX);
	return err;
}

/* ======================= dirty nodes ======================= */

int f2fs_build_node_table(struct f2fs_sb *sb)
{
	struct f2fs_node_table *t = calloc(1, sizeof(*t));

	if (!t)
		return -ENOMEM;
	pthread_mutex_init(&t->lock, NULL);
	pthread_mutex_init(&t->fsync_lock, NULL);
	pthread_cond_init(&t->fsync_cond, NULL);
	pthread_cond_init(&t->fsync_arrive, NULL);
	t->fsync_tail = &t->fsync_queue;
	sb->dirty_nodes = t;
	return 0;
}

void f2fs_destroy_node_table(struct f2fs_sb *sb)
{
	struct f2fs_node_table *t = sb->dirty_nodes;

	if (!t)
		return;
	if (t->nr_dirty)
		f2fs_warn(sb, "%u dirty node blocks dropped at unmount", t->nr_dirty);
	for (int b = 0; b < DIRTY_NODE_BUCKETS; b++) {
		struct f2fs_dirty_node *d = t->hash[b];

		while (d) {
			struct f2fs_dirty_node *n = d->hnext;

			f2fs_block_put(&sb->node_pool, d->data);
			free(d);
			d = n;
		}
	}
	pthread_mutex_destroy(&t->lock);
	pthread_mutex_destroy(&t->fsync_lock);
	pthread_cond_destroy(&t->fsync_cond);
	pthread_cond_destroy(&t->fsync_arrive);
	free(t);
	sb->dirty_nodes = NULL;
}

uint32_t f2fs_nr_dirty_nodes(struct f2fs_sb *sb)
{
	uint32_t n;

	pthread_mutex_lock(&sb->dirty_nodes->lock);
	n = sb->dirty_nodes->nr_dirty;
	pthread_mutex_unlock(&sb->dirty_nodes->lock);
	return n;
}

int f2fs_set_node_dirty(struct f2fs_sb *sb, uint32_t nid, const uint8_t *buf)
{
	struct f2fs_node_table *t = sb->dirty_nodes;
	struct f2fs_dirty_node **pp, *d;

	pthread_mutex_lock(&t->lock);
	pp = dirty_slot(t, nid);
	d = *pp;
	if (!d) {
		d = calloc(1, sizeof(*d));
		if (d)
			d->data = f2fs_block_get(&sb->node_pool);
		if (!d || !d->data) {
			if (d)
				free(d);
			pthread_mutex_unlock(&t->lock);
			return -ENOMEM;
		}
		d->nid = nid;
		*pp = d;
		t->nr_dirty++;
	}
	memcpy(d->data, buf, F2FS_BLKSIZE);
	pthread_mutex_unlock(&t->lock);
	return 0;
}

/* IS_DNODE: inodes, direct nodes and xattr nodes hold addresses, not nids. */
bool f2fs_is_dnode(const uint8_t *blk)
{
	uint32_t ofs = f2fs_node_ofs(blk);

	if (ofs == XATTR_NODE_OFFSET)
		return true;
	if (ofs == 3 || ofs == 4 + NIDS_PER_BLOCK || ofs == 5 + 2 * NIDS_PER_BLOCK)
		return false;
	if (ofs >= 6 + 2 * NIDS_PER_BLOCK) {
		ofs -= 6 + 2 * NIDS_PER_BLOCK;
		if (ofs % (NIDS_PER_BLOCK + 1) == 0)
			return false;
	}
	return true;
}

void f2fs_fill_node_footer(uint8_t *blk, uint32_t nid, uint32_t ino, uint32_t ofs, bool cold)
{
	put_le32(blk + NF_NID, nid);
	put_le32(blk + NF_INO, ino);
	put_le32(blk + NF_FLAG, (ofs << OFFSET_BIT_SHIFT) | (cold ? 1u << COLD_BIT_SHIFT : 0));
}

int f2fs_new_node(struct f2fs_sb *sb, uint32_t ino, uint32_t ofs, bool cold, uint32_t *nidp,
		  uint8_t *blk)
{
	uint32_t nid;
	int err;

	/* a node is a used block from its creation on (inc_valid_node_count) */
	err = f2fs_take_user_blocks(sb, 1);
	if (err)
		return err;
	if (ofs == 0) {
		nid = ino;	/* an inode's node is allocated with its ino */
	} else {
		err = f2fs_alloc_nid(sb, &nid);
		if (err)
			goto undo;
	}
	memset(blk, 0, F2FS_BLKSIZE);
	f2fs_fill_node_footer(blk, nid, ino, ofs, cold);
	f2fs_set_node_addr(sb, nid, ino, NEW_ADDR);
	err = f2fs_set_node_dirty(sb, nid, blk);
	if (err)
		goto undo;
	pthread_mutex_lock(&sb->nm->lock);
	sb->nm->valid_node_count++;
	if (ofs == 0)
		sb->nm->valid_inode_count++;
	pthread_mutex_unlock(&sb->nm->lock);
	*nidp = nid;
	return 0;
undo:
	f2fs_add_valid_blocks(sb, -1);
	return err;
}

/* Remove node nid: its block is dead and its nid free after the next checkpoint. */
int f2fs_remove_node(struct f2fs_sb *sb, uint32_t nid, uint32_t ino, bool is_inode)
{
	struct f2fs_node_table *t = sb->dirty_nodes;
	struct f2fs_dirty_node **pp, *d;
	struct f2fs_node_info ni;
	int err = f2fs_get_node_info(sb, nid, &ni);

	if (err)
		return err;
	pthread_mutex_lock(&t->lock);
	pp = dirty_slot(t, nid);
	d = *pp;
	if (d) {
		*pp = d->hnext;
		t->nr_dirty--;
		f2fs_block_put(&sb->node_pool, d->data);
		free(d);
	}
	pthread_mutex_unlock(&t->lock);
	f2fs_invalidate_block(sb, ni.blkaddr);
	f2fs_set_node_addr(sb, nid, ino, NULL_ADDR);
	pthread_mutex_lock(&sb->nm->lock);
	sb->nm->valid_node_count--;
	if (is_inode)
		sb->nm->valid_inode_count--;
	pthread_mutex_unlock(&sb->nm->lock);
	f2fs_add_valid_blocks(sb, -1);
	return 0;
}

/*
 * The inode checksum (f2fs_inode_chksum) covers the whole inode block,
 * footer included, so it is refreshed again where a write fills the
 * footer in.
 */
uint32_t f2fs_inode_checksum(const struct f2fs_sb *sb, const uint8_t *node)
{
	static const uint8_t zero[4];
	uint32_t crc;

	crc = f2fs_crc32(sb->chksum_seed, node + NF_INO, 4);
	crc = f2fs_crc32(crc, node + I_GENERATION, 4);
	crc = f2fs_crc32(crc, node, I_INODE_CHECKSUM);
	crc = f2fs_crc32(crc, zero, 4);
	return f2fs_crc32(crc, node + I_INODE_CHECKSUM + 4, F2FS_BLKSIZE - I_INODE_CHECKSUM - 4);
}

/* Refresh i_inode_checksum of a raw inode block, where the inode has one. */
void f2fs_inode_update_checksum(const struct f2fs_sb *sb, uint8_t *node)
{
	if (!f2fs_has_feature(sb, F2FS_FEATURE_INODE_CHKSUM) || !(node[I_INLINE] & F2FS_EXTRA_ATTR) ||
	    get_le16(node + I_EXTRA_ISIZE) < I_INODE_CHECKSUM + 4 - I_ADDR)
		return;
	put_le32(node + I_INODE_CHECKSUM, f2fs_inode_checksum(sb, node));
}

/* The node log a block goes to (__get_segment_type_6 for nodes). */
static int node_log(const uint8_t *blk)
{
	if (!f2fs_is_dnode(blk))
		return CURSEG_COLD_NODE;
	return (f2fs_node_flag(blk) & (1u << COLD_BIT_SHIFT)) ? CURSEG_WARM_NODE : CURSEG_HOT_NODE;
}

/* The version a node footer carries: the checkpoint's, with its CRC on top. */
uint64_t f2fs_node_footer_cp_ver(const struct f2fs_sb *sb)
{
	uint64_t v = sb->cp_ver;

	if (f2fs_cp_flag(sb, CP_CRC_RECOVERY_FLAG))
		v |= (uint64_t)get_le32(sb->ckpt + get_le32(sb->ckpt + CP_CHECKSUM_OFFSET)) << 32;
	return v;
}

struct write_batch {
	uint32_t start, n;
	struct iovec iov[256];
};

static int batch_flush(struct f2fs_sb *sb, struct write_batch *wb)
{
	struct f2fs_bio bio = {
		.op = F2FS_BIO_WRITE, .blkaddr = wb->start, .nr_blocks = wb->n,
		.iov = wb->iov, .iovcnt = (int)wb->n,
	};
	int err = 0;

	if (wb->n)
		err = f2fs_submit_bio(sb->dev, &bio);
	wb->n = 0;
	return err;
}

static int cmp_dirty_nid(const void *a, const void *b)
{
	uint32_t x = (*(struct f2fs_dirty_node *const *)a)->nid;
	uint32_t y = (*(struct f2fs_dirty_node *const *)b)->nid;

	return x < y ? -1 : x > y;
}

/*
 * Write every dirty node out of place (the caller excludes writers).
 * Nodes of one log are allocated back to back, so each log's nodes go out
 * in a few large vectored writes.  They go in nid order: nids are handed
 * out in creation order, so inodes made together, and later looked up
 * together (a stat or read of a tree in the order it was written), lie
 * side by side, and the image's page cache reads them ahead as one
 * sequential stream instead of a stride through hash buckets.
 */
int f2fs_write_dirty_nodes(struct f2fs_sb *sb)
{
	struct f2fs_node_table *t = sb->dirty_nodes;
	struct f2fs_dirty_node **list;
	struct write_batch *wb;
	uint64_t cp_ver = f2fs_node_footer_cp_ver(sb);
	uint32_t nr = 0;
	int err = 0;

	pthread_mutex_lock(&t->lock);
	if (!t->nr_dirty) {
		pthread_mutex_unlock(&t->lock);
		return 0;
	}
	list = malloc(t->nr_dirty * sizeof(*list));
	wb = malloc(sizeof(*wb));
	if (!list || !wb) {
		pthread_mutex_unlock(&t->lock);
		free(list);
		free(wb);
		return -ENOMEM;
	}
	for (int b = 0; b < DIRTY_NODE_BUCKETS && nr < t->nr_dirty; b++)
		for (struct f2fs_dirty_node *d = t->hash[b]; d; d = d->hnext)
			list[nr++] = d;
	qsort(list, nr, sizeof(*list), cmp_dirty_nid);
	wb->n = 0;
	for (int type = CURSEG_HOT_NODE; !err && type < NR_CURSEG_TYPE; type++) {
		for (uint32_t i = 0; !err && i < nr; i++) {
			struct f2fs_dirty_node *d = list[i];
			struct f2fs_node_info ni;
			uint32_t addr, next;

			if (node_log(d->data) != type)
				continue;
			err = f2fs_get_node_info(sb, d->nid, &ni);
			if (err)
				break;
			err = f2fs_allocate_block_next(sb, type, d->nid, 0, 0, &addr, &next);
			if (err)
				break;
			put_le64(d->data + NF_CP_VER, cp_ver);
			put_le32(d->data + NF_NEXT_BLKADDR, next);
			/* keep the fsync/dent marks for fsync writes only */
			put_le32(d->data + NF_FLAG, f2fs_node_flag(d->data) &
				 ~((1u << FSYNC_BIT_SHIFT) | (1u << DENT_BIT_SHIFT)));
			/* the inode checksum covers the footer just filled in */
			if (f2fs_node_ofs(d->data) == 0 && f2fs_node_ino(d->data) == d->nid)
				f2fs_inode_update_checksum(sb, d->data);
			if (wb->n && (wb->start + wb->n != addr || wb->n == ARRAY_SIZE(wb->iov)))
				err = batch_flush(sb, wb);
			if (!wb->n)
				wb->start = addr;
			wb->iov[wb->n++] = (struct iovec){ d->data, F2FS_BLKSIZE };
			f2fs_invalidate_block(sb, ni.blkaddr);
			f2fs_set_node_addr(sb, d->nid, f2fs_node_ino(d->data), addr);
		}
		if (!err)
			err = batch_flush(sb, wb);
	}
	if (!err) {
		for (uint32_t i = 0; i < nr; i++) {
			f2fs_block_put(&sb->node_pool, list[i]->data);
			free(list[i]);
		}
		memset(t->hash, 0, sizeof(t->hash));
		t->nr_dirty = 0;
	}
	pthread_mutex_unlock(&t->lock);
	free(list);
	free(wb);
	return err;
}

/*
 * The fsync fast path with group commit.  fsync (f2fs_fsync_node_pages)
 * writes the inode's dirty direct nodes, and the inode, to the warm node
 * log for roll-forward recovery, then flushes the device cache once for
 * them and for the data written before.  Concurrent fsyncs share that
 * work, as the kernel's do (their node pages merge into one bio in the
 * warm node log, flush_merge issues one flush for every waiter): each
 * queues a request; the first finding nobody writing becomes the leader,
 * takes the whole queue, writes the nodes of all its inodes back to back
 * (one device write where the log allows) and flushes once, then wakes
 * them.  Those that queued meanwhile form the next group: the flush in
 * flight may not cover their data.  Each caller holds its inode's write
 * lock and cp_rwsem shared while it waits, so its nodes stay as they were
 * and no checkpoint can start; the leader needs no lock of theirs.
 */
struct f2fs_fsync_req {
	uint32_t ino;
	bool dent_mark;
	bool atomic;		/* an atomic write's commit: a flush before its marked block */
	bool done;
	int err;
	struct f2fs_fsync_req *next;
};

static int cmp_fsync_node(const void *a, const void *b)
{
	const struct f2fs_dirty_node *x = *(struct f2fs_dirty_node *const *)a;
	const struct f2fs_dirty_node *y = *(struct f2fs_dirty_node *const *)b;
	uint32_t xi = f2fs_node_ino(x->data), yi = f2fs_node_ino(y->data);

	if (xi != yi)
		return xi < yi ? -1 : 1;
	/* the inode block last: it carries the fsync and dentry marks */
	if ((x->nid == xi) != (y->nid == yi))
		return x->nid == xi ? 1 : -1;
	return x->nid < y->nid ? -1 : x->nid > y->nid;
}

static const struct f2fs_fsync_req *batch_find(const struct f2fs_fsync_req *batch, uint32_t ino)
{
	for (; batch; batch = batch->next)
		if (batch->ino == ino)
			return batch;
	return NULL;
}

/*
 * Write the dirty dnodes of every inode in the batch.  Each inode's nodes
 * are consecutive in the log with its inode block last, and only its last
 * node carries the fsync mark (and the dentry mark if that is the inode
 * block): recovery replays an inode's dnodes up to its last marked one,
 * so a group write torn by a crash replays no inode half-way.
 */
static int write_fsync_batch(struct f2fs_sb *sb, const struct f2fs_fsync_req *batch,
			     uint32_t *written)
{
	struct f2fs_node_table *t = sb->dirty_nodes;
	struct f2fs_dirty_node **list = NULL;
	uint64_t cp_ver = f2fs_node_footer_cp_ver(sb);
	struct write_batch *wb = malloc(sizeof(*wb));
	uint32_t nr = 0, cap = 0, *nids = NULL, *addrs = NULL;
	uint8_t *io = NULL, *preflush = NULL;
	int err = 0;

	*written = 0;
	if (!wb)
		return -ENOMEM;
	wb->n = 0;
	pthread_mutex_lock(&t->lock);
	/* the buckets after the one holding the last dirty node are empty */
	for (uint32_t b = 0, seen = 0; b < DIRTY_NODE_BUCKETS && seen < t->nr_dirty && !err; b++) {
		for (struct f2fs_dirty_node *d = t->hash[b]; d; d = d->hnext) {
			seen++;
			if (!f2fs_is_dnode(d->data) || !batch_find(batch, f2fs_node_ino(d->data)))
				continue;
			if (nr == cap) {
				struct f2fs_dirty_node **nl;

				cap = cap ? cap * 2 : 16;
				nl = realloc(list, cap * sizeof(*list));
				if (!nl) {
					err = -ENOMEM;
					break;
				}
				list = nl;
			}
			list[nr++] = d;
		}
	}
	if (!err && nr) {
		qsort(list, nr, sizeof(*list), cmp_fsync_node);
		io = f2fs_alloc_blocks(nr);
		nids = malloc(nr * sizeof(*nids));
		addrs = malloc(nr * sizeof(*addrs));
		preflush = calloc(nr, 1);
		if (!io || !nids || !addrs || !preflush)
			err = -ENOMEM;
	}
	for (uint32_t i = 0; i < nr && !err; i++) {
		struct f2fs_dirty_node *d = list[i];
		uint32_t ino = f2fs_node_ino(d->data);
		bool last = i + 1 == nr || f2fs_node_ino(list[i + 1]->data) != ino;
		struct f2fs_node_info ni;
		uint32_t next, flag;

		preflush[i] = last && batch_find(batch, ino)->atomic;

		err = f2fs_get_node_info(sb, d->nid, &ni);
		if (err)
			break;
		err = f2fs_allocate_block_next(sb, CURSEG_WARM_NODE, d->nid, 0, 0, &addrs[i], &next);
		if (err)
			break;
		flag = f2fs_node_flag(d->data) & ~((1u << FSYNC_BIT_SHIFT) | (1u << DENT_BIT_SHIFT));
		if (last) {
			flag |= 1u << FSYNC_BIT_SHIFT;
			if (d->nid == ino && batch_find(batch, ino)->dent_mark)
				flag |= 1u << DENT_BIT_SHIFT;
		}
		put_le32(d->data + NF_FLAG, flag);
		put_le64(d->data + NF_CP_VER, cp_ver);
		put_le32(d->data + NF_NEXT_BLKADDR, next);
		if (d->nid == ino)
			f2fs_inode_update_checksum(sb, d->data);
		memcpy(io + (size_t)i * F2FS_BLKSIZE, d->data, F2FS_BLKSIZE);
		nids[i] = d->nid;
		f2fs_invalidate_block(sb, ni.blkaddr);
		f2fs_set_node_addr(sb, d->nid, ino, addrs[i]);
	}
	pthread_mutex_unlock(&t->lock);

	/* the writes go out from a copy, without the table lock: until they are
	 * done the nodes stay in the table, so readers and writers of other
	 * inodes go on and a node read finds the table's copy */
	for (uint32_t i = 0; i < nr && !err; i++) {
		if (wb->n && (wb->start + wb->n != addrs[i] || wb->n == ARRAY_SIZE(wb->iov) ||
			      preflush[i]))
			err = batch_flush(sb, wb);
		/*
		 * An atomic commit: everything before its marked block, the data
		 * too, is durable first (the kernel's REQ_PREFLUSH on it), so that
		 * recovery replays all of the commit or none.
		 */
		if (!err && preflush[i])
			err = f2fs_dev_flush(sb->dev);
		if (!wb->n)
			wb->start = addrs[i];
		wb->iov[wb->n++] = (struct iovec){ io + (size_t)i * F2FS_BLKSIZE, F2FS_BLKSIZE };
	}
	if (!err)
		err = batch_flush(sb, wb);
	if (!err && nr) {
		/* written: clean now unless changed meanwhile (never, while their
		 * owners wait, but a copy that differs stays dirty), and kept in
		 * the block cache (the file's next write needs them again) */
		pthread_mutex_lock(&t->lock);
		for (uint32_t i = 0; i < nr; i++) {
			struct f2fs_dirty_node **pp = dirty_slot(t, nids[i]), *d = *pp;
			const uint8_t *blk = io + (size_t)i * F2FS_BLKSIZE;

			f2fs_cache_insert(sb->cache, addrs[i], blk);
			if (!d || memcmp(d->data, blk, F2FS_BLKSIZE))
				continue;
			*pp = d->hnext;
			t->nr_dirty--;
			f2fs_block_put(&sb->node_pool, d->data);
			free(d);
		}
		pthread_mutex_unlock(&t->lock);
		*written = nr;
	}
	free(list);
	free(io);
	free(nids);
	free(addrs);
	free(preflush);
	free(wb);
	return err;
}

static uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* How many files the last FSYNC_RECENT requests fsynced. */
static uint32_t recent_files(const struct f2fs_node_table *t)
{
	uint32_t n = 0;

	for (uint32_t i = 0; i < FSYNC_RECENT; i++) {
		uint32_t j;

		if (!t->fsync_recent[i])
			continue;
		for (j = 0; j < i && t->fsync_recent[j] != t->fsync_recent[i]; j++)
			;
		n += j == i;
	}
	return n;
}

/*
 * Commit batching, as jbd2 does when several threads sync at once: when
 * fsyncs overlapped lately (a group held several, or more queued while it
 * was written: they come from several threads), the leader waits, up to
 * the average time a group takes to write and flush (at most
 * F2FS_FSYNC_BATCH_MAX_NS), until as many requests are queued as the files
 * recently fsynced.  A lone fsyncer, even of several files in turn, never
 * overlaps itself and never waits.
 */
static void gather(struct f2fs_node_table *t)
{
	uint64_t wait = t->fsync_avg_ns;
	uint32_t want;
	uint64_t end;
	struct timespec ts;

	if (wait > F2FS_FSYNC_BATCH_MAX_NS)
		wait = F2FS_FSYNC_BATCH_MAX_NS;
	if (t->fsync_hint < 2 || !wait)
		return;
	want = recent_files(t);
	if (t->fsync_queued >= want)
		return;
	end = now_ns(CLOCK_REALTIME) + wait;
	ts.tv_sec = (time_t)(end / 1000000000u);
	ts.tv_nsec = (long)(end % 1000000000u);
	while (t->fsync_queued < want)
		if (pthread_cond_timedwait(&t->fsync_arrive, &t->fsync_lock, &ts) == ETIMEDOUT)
			break;
}

int f2fs_fsync_node_pages(struct f2fs_sb *sb, uint32_t ino, bool dent_mark, bool atomic)
{
	struct f2fs_node_table *t = sb->dirty_nodes;
	struct f2fs_fsync_req req = { .ino = ino, .dent_mark = dent_mark, .atomic = atomic };

	f2fs_stat_add(sb, fsync_requests, 1);
	pthread_mutex_lock(&t->fsync_lock);
	*t->fsync_tail = &req;
	t->fsync_tail = &req.next;
	t->fsync_queued++;
	t->fsync_recent[t->fsync_recent_pos++ % FSYNC_RECENT] = ino;
	pthread_cond_signal(&t->fsync_arrive);
	while (!req.done) {
		struct f2fs_fsync_req *batch, *r, *next;
		uint32_t written, n;
		uint64_t start, took;
		int err;

		if (t->fsync_busy) {
			pthread_cond_wait(&t->fsync_cond, &t->fsync_lock);
			continue;
		}
		/* lead: the queue, this request included, is the group */
		t->fsync_busy = true;
		gather(t);
		batch = t->fsync_queue;
		n = t->fsync_queued;
		t->fsync_queue = NULL;
		t->fsync_tail = &t->fsync_queue;
		t->fsync_queued = 0;
		pthread_mutex_unlock(&t->fsync_lock);

		start = now_ns(CLOCK_MONOTONIC);
		written = 0;
		/* nothing is committed once checkpoints stopped: a change that
		 * met a device error may be half made in these nodes */
		err = f2fs_cp_error(sb) ? -EIO : write_fsync_batch(sb, batch, &written);
		if (!err)
			err = f2fs_dev_flush(sb->dev);
		/* the NAT already names the batch's node blocks */
		if (err)
			f2fs_stop_checkpoint(sb, err, "fsync node write");
		took = now_ns(CLOCK_MONOTONIC) - start;
		f2fs_stat_add(sb, fsync_commits, 1);
		f2fs_stat_add(sb, fsync_node_blocks, written);

		pthread_mutex_lock(&t->fsync_lock);
		for (r = batch; r; r = next) {
			next = r->next;	/* r is gone once done is seen */
			r->err = err;
			r->done = true;
		}
		/* the hint: how many fsyncs overlapped lately (this group and
		 * those that queued while it was written); it decays by one per
		 * group, so that a lone fsyncer soon stops gathering */
		n += t->fsync_queued;
		t->fsync_hint = n > t->fsync_hint ? n : t->fsync_hint - (t->fsync_hint > 0);
		t->fsync_avg_ns = t->fsync_avg_ns ? (t->fsync_avg_ns * 7 + took) / 8 : took;
		t->fsync_busy = false;
		pthread_cond_broadcast(&t->fsync_cond);
	}
	pthread_mutex_unlock(&t->fsync_lock);
	return req.err;
}
