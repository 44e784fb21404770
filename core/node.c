// SPDX-License-Identifier: GPL-2.0
/*
 * Node blocks: reading a node by nid through the NAT and the block cache,
 * checking that its footer agrees with what pointed to it, and (on a
 * writable mount) the table of dirty nodes that the next checkpoint or
 * fsync writes out of place.
 */
#include <stdlib.h>
#include <string.h>

#include "f2fs.h"

#define DIRTY_NODE_BUCKETS 4096

struct f2fs_dirty_node {
	uint32_t nid;
	struct f2fs_dirty_node *hnext;
	uint8_t *data;
};

struct f2fs_node_table {
	pthread_mutex_t lock;
	struct f2fs_dirty_node *hash[DIRTY_NODE_BUCKETS];
	uint32_t nr_dirty;
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

int f2fs_get_node(struct f2fs_sb *sb, uint32_t nid, uint8_t *buf)
{
	struct f2fs_node_info ni;
	int err;

	if (dirty_lookup(sb, nid, buf))
		return 0;
	err = f2fs_get_node_info(sb, nid, &ni);
	if (err)
		return err;
	if (ni.blkaddr == NULL_ADDR)
		return f2fs_corrupted(sb, "node %u: referenced but free in the NAT", nid);
	if (!f2fs_valid_main_blkaddr(sb, ni.blkaddr))
		return f2fs_corrupted(sb, "node %u: NAT block address 0x%x is outside the main area",
				      nid, ni.blkaddr);
	if (!f2fs_cache_lookup(sb->cache, ni.blkaddr, buf)) {
		err = f2fs_dev_read(sb->dev, ni.blkaddr, buf, 1);
		if (err)
			return err;
		if (f2fs_node_nid(buf) != nid || f2fs_node_ino(buf) != ni.ino)
			return f2fs_corrupted(sb, "node %u at 0x%x: footer says nid %u ino %u, NAT "
					      "says ino %u", nid, ni.blkaddr, f2fs_node_nid(buf),
					      f2fs_node_ino(buf), ni.ino);
		f2fs_cache_insert(sb->cache, ni.blkaddr, buf);
	}
	return 0;
}

/* ======================= dirty nodes ======================= */

int f2fs_build_node_table(struct f2fs_sb *sb)
{
	struct f2fs_node_table *t = calloc(1, sizeof(*t));

	if (!t)
		return -ENOMEM;
	pthread_mutex_init(&t->lock, NULL);
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

			free(d->data);
			free(d);
			d = n;
		}
	}
	pthread_mutex_destroy(&t->lock);
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
			d->data = f2fs_alloc_blocks(1);
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
	pthread_mutex_lock(&sb->sm->lock);
	sb->sm->valid_blocks--;
	pthread_mutex_unlock(&sb->sm->lock);
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
		free(d->data);
		free(d);
	}
	pthread_mutex_unlock(&t->lock);
	if (ni.blkaddr != NEW_ADDR && ni.blkaddr != NULL_ADDR) {
		f2fs_invalidate_block(sb, ni.blkaddr);
		f2fs_cache_invalidate(sb->cache, ni.blkaddr);
	}
	f2fs_set_node_addr(sb, nid, ino, NULL_ADDR);
	pthread_mutex_lock(&sb->nm->lock);
	sb->nm->valid_node_count--;
	if (is_inode)
		sb->nm->valid_inode_count--;
	pthread_mutex_unlock(&sb->nm->lock);
	pthread_mutex_lock(&sb->sm->lock);
	sb->sm->valid_blocks--;
	pthread_mutex_unlock(&sb->sm->lock);
	return 0;
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

/*
 * Write every dirty node out of place (the caller excludes writers).
 * Nodes of one log are allocated back to back, so each log's nodes go out
 * in a few large vectored writes.
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
	for (int b = 0; b < DIRTY_NODE_BUCKETS; b++)
		for (struct f2fs_dirty_node *d = t->hash[b]; d; d = d->hnext)
			list[nr++] = d;
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
			if (ni.blkaddr != NEW_ADDR && ni.blkaddr != NULL_ADDR) {
				f2fs_invalidate_block(sb, ni.blkaddr);
				f2fs_cache_invalidate(sb->cache, ni.blkaddr);
			}
			f2fs_set_node_addr(sb, d->nid, f2fs_node_ino(d->data), addr);
		}
		if (!err)
			err = batch_flush(sb, wb);
	}
	if (!err) {
		for (uint32_t i = 0; i < nr; i++) {
			free(list[i]->data);
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
 * The fsync fast path (f2fs_fsync_node_pages): write the dirty direct
 * nodes of one inode, and the inode, to the warm node log with the fsync
 * mark (and the dentry mark on the inode when its dentry is not in the
 * last checkpoint), so that roll-forward recovery can replay them.
 * Caller holds the inode's write lock and cp_rwsem shared.
 */
int f2fs_fsync_node_pages(struct f2fs_sb *sb, uint32_t ino, bool dent_mark)
{
	struct f2fs_node_table *t = sb->dirty_nodes;
	struct f2fs_dirty_node **list = NULL, **pp;
	uint64_t cp_ver = f2fs_node_footer_cp_ver(sb);
	struct write_batch *wb = malloc(sizeof(*wb));
	uint32_t nr = 0, cap = 0;
	int err = 0;

	if (!wb)
		return -ENOMEM;
	wb->n = 0;
	pthread_mutex_lock(&t->lock);
	for (int b = 0; b < DIRTY_NODE_BUCKETS; b++) {
		for (struct f2fs_dirty_node *d = t->hash[b]; d; d = d->hnext) {
			if (f2fs_node_ino(d->data) != ino || !f2fs_is_dnode(d->data))
				continue;
			if (nr == cap) {
				struct f2fs_dirty_node **nl;

				cap = cap ? cap * 2 : 16;
				nl = realloc(list, cap * sizeof(*list));
				if (!nl) {
					err = -ENOMEM;
					goto out;
				}
				list = nl;
			}
			list[nr++] = d;
		}
	}
	for (uint32_t i = 0; i < nr && !err; i++) {
		struct f2fs_dirty_node *d = list[i];
		struct f2fs_node_info ni;
		uint32_t addr, next, flag;

		err = f2fs_get_node_info(sb, d->nid, &ni);
		if (err)
			break;
		err = f2fs_allocate_block_next(sb, CURSEG_WARM_NODE, d->nid, 0, 0, &addr, &next);
		if (err)
			break;
		flag = f2fs_node_flag(d->data) | (1u << FSYNC_BIT_SHIFT);
		flag &= ~(1u << DENT_BIT_SHIFT);
		if (dent_mark && d->nid == ino)
			flag |= 1u << DENT_BIT_SHIFT;
		put_le32(d->data + NF_FLAG, flag);
		put_le64(d->data + NF_CP_VER, cp_ver);
		put_le32(d->data + NF_NEXT_BLKADDR, next);
		if (d->nid == ino)
			f2fs_inode_update_checksum(sb, d->data);
		if (wb->n && (wb->start + wb->n != addr || wb->n == ARRAY_SIZE(wb->iov)))
			err = batch_flush(sb, wb);
		if (!wb->n)
			wb->start = addr;
		wb->iov[wb->n++] = (struct iovec){ d->data, F2FS_BLKSIZE };
		if (ni.blkaddr != NEW_ADDR && ni.blkaddr != NULL_ADDR) {
			f2fs_invalidate_block(sb, ni.blkaddr);
			f2fs_cache_invalidate(sb->cache, ni.blkaddr);
		}
		f2fs_set_node_addr(sb, d->nid, ino, addr);
	}
	if (!err)
		err = batch_flush(sb, wb);
	if (!err) {
		/* written: they are clean now */
		for (uint32_t i = 0; i < nr; i++) {
			pp = dirty_slot(t, list[i]->nid);
			*pp = list[i]->hnext;
			t->nr_dirty--;
			free(list[i]->data);
			free(list[i]);
		}
	}
out:
	pthread_mutex_unlock(&t->lock);
	free(list);
	free(wb);
	return err;
}
