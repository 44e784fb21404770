// SPDX-License-Identifier: GPL-2.0
/*
 * The quota file format f2fs keeps in its quota inodes: the kernel's v2
 * format, revision 1 (fs/quota/quota_v2.c, fs/quota/quota_tree.c).  The
 * file is a sequence of 1 KiB blocks: block 0 holds the magic and the info
 * (grace times, block count, free lists); block 1 is the root of a radix
 * tree of depth 4 over the 32-bit id, 8 bits a level, whose leaves point
 * to data blocks of 72-byte dquot entries.
 *
 * Parsing walks every tree reference within the file and keeps every entry
 * it finds; building lays a fresh tree out for the whole table, in id
 * order, with the one partly filled data block on the free-entry list, as
 * the kernel would have it.  Both sides treat the file as untrusted input.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "f2fs.h"

#define QT_BLKSIZE		1024
#define QT_TREEOFF		1	/* the root block */
#define QT_TREEDEPTH		4
#define QT_REFS			(QT_BLKSIZE / 4)
#define QT_DATA_HDR		16	/* next_free, prev_free, entries, pads */
#define QT_ENTRY_SIZE		72	/* struct v2r1_disk_dqblk */
#define QT_ENTRIES		((QT_BLKSIZE - QT_DATA_HDR) / QT_ENTRY_SIZE)
#define V2_VERSION_R1		1
#define V2_INFO_OFF		8	/* after magic and version */

/* A quota file that lies is for fsck.f2fs to rebuild (CP_QUOTA_NEED_FSCK_FLAG,
 * quota.c); the rest of the filesystem is not suspect, so no need_fsck. */
#define quota_bad(sb, ...) (f2fs_err(sb, __VA_ARGS__), -EUCLEAN)

/* magic numbers of user, group and project files (quota_v2.c) */
static const uint32_t v2_magic[F2FS_MAX_QUOTAS] = { 0xd9c01f11, 0xd9c01927, 0xd9c03f14 };

/* entry fields (struct v2r1_disk_dqblk) */
enum {
	QE_ID = 0, QE_IHARD = 8, QE_ISOFT = 16, QE_CURINODES = 24, QE_BHARD = 32, QE_BSOFT = 40,
	QE_CURSPACE = 48, QE_BTIME = 56, QE_ITIME = 64,
};
/* info fields (struct v2_disk_dqinfo) */
enum { QI_BGRACE = 0, QI_IGRACE = 4, QI_FLAGS = 8, QI_BLOCKS = 12, QI_FREE_BLK = 16, QI_FREE_ENTRY = 20 };

static bool entry_unused(const uint8_t *e)
{
	for (int i = 0; i < QT_ENTRY_SIZE; i++)
		if (e[i])
			return false;
	return true;
}

/* v2r1_disk2memdqb: id 0 with nothing in it is stored with itime 1 */
static bool entry_is_escaped_zero(const uint8_t *e)
{
	uint8_t z[QT_ENTRY_SIZE] = { 0 };

	put_le64(z + QE_ITIME, 1);
	return memcmp(z, e, QT_ENTRY_SIZE) == 0;
}

struct walk {
	struct f2fs_sb *sb;
	const uint8_t *buf;
	uint32_t nblocks;
	uint8_t *seen;		/* data blocks already read */
	struct f2fs_quota_type *qt;
	int type;
};

static int read_data_block(struct walk *w, uint32_t blk)
{
	const uint8_t *b = w->buf + (size_t)blk * QT_BLKSIZE;

	if (w->seen[blk / 8] & (1u << (blk % 8)))
		return 0;
	w->seen[blk / 8] |= (uint8_t)(1u << (blk % 8));
	for (int i = 0; i < QT_ENTRIES; i++) {
		const uint8_t *e = b + QT_DATA_HDR + i * QT_ENTRY_SIZE;
		struct f2fs_dquot *dq;

		if (entry_unused(e))
			continue;
		dq = f2fs_dquot_get(w->qt, get_le32(e + QE_ID));
		if (!dq)
			return -ENOMEM;
		if (entry_is_escaped_zero(e))
			continue;
		/* v2_qbtos: limits are stored in 1 KiB quota blocks */
		dq->bhardlimit = get_le64(e + QE_BHARD) << 10;
		dq->bsoftlimit = get_le64(e + QE_BSOFT) << 10;
		dq->curspace = get_le64(e + QE_CURSPACE);
		dq->ihardlimit = get_le64(e + QE_IHARD);
		dq->isoftlimit = get_le64(e + QE_ISOFT);
		dq->curinodes = get_le64(e + QE_CURINODES);
		dq->btime = (int64_t)get_le64(e + QE_BTIME);
		dq->itime = (int64_t)get_le64(e + QE_ITIME);
	}
	return 0;
}

static int walk_tree(struct walk *w, uint32_t blk, int depth)
{
	const uint8_t *b = w->buf + (size_t)blk * QT_BLKSIZE;

	for (int i = 0; i < QT_REFS; i++) {
		uint32_t ref = get_le32(b + 4 * i);
		int err;

		if (!ref)
			continue;
		/* do_check_range: a reference stays inside the file and off the header */
		if (ref <= QT_TREEOFF || ref >= w->nblocks)
			return quota_bad(w->sb, "quota file %d: block %u refers to block %u "
					      "of %u", w->type, blk, ref, w->nblocks);
		if (depth == QT_TREEDEPTH - 1)
			err = read_data_block(w, ref);
		else
			err = walk_tree(w, ref, depth + 1);
		if (err)
			return err;
	}
	return 0;
}

int f2fs_qtree_parse(struct f2fs_sb *sb, int type, const uint8_t *buf, size_t len,
		     struct f2fs_quota_type *qt)
{
	struct walk w = { .sb = sb, .buf = buf, .qt = qt, .type = type };
	uint32_t blocks;
	int err;

	if (len < 2 * QT_BLKSIZE)
		return quota_bad(sb, "quota file %d: %zu bytes, too short for a tree",
				      type, len);
	if (get_le32(buf) != v2_magic[type] || get_le32(buf + 4) != V2_VERSION_R1)
		return quota_bad(sb, "quota file %d: not a v2 revision 1 file (magic 0x%x, "
				      "version %u)", type, get_le32(buf), get_le32(buf + 4));
	qt->bgrace = get_le32(buf + V2_INFO_OFF + QI_BGRACE);
	qt->igrace = get_le32(buf + V2_INFO_OFF + QI_IGRACE);
	qt->info_flags = get_le32(buf + V2_INFO_OFF + QI_FLAGS);
	blocks = get_le32(buf + V2_INFO_OFF + QI_BLOCKS);
	if (blocks < 2 || blocks > len / QT_BLKSIZE)
		return quota_bad(sb, "quota file %d: %u blocks in a file of %zu bytes",
				      type, blocks, len);
	w.nblocks = blocks;
	w.seen = calloc(blocks / 8 + 1, 1);
	if (!w.seen)
		return -ENOMEM;
	/* the root is depth 0; recursion is bounded by QT_TREEDEPTH */
	err = walk_tree(&w, QT_TREEOFF, 0);
	free(w.seen);
	return err;
}

/* ------------------------------------------------------------ build */

struct image {
	uint8_t *buf;
	uint32_t nblocks, cap;
};

static int new_block(struct image *im, uint32_t *blk)
{
	if (im->nblocks == im->cap) {
		uint32_t cap = im->cap * 2;
		uint8_t *b = realloc(im->buf, (size_t)cap * QT_BLKSIZE);

		if (!b)
			return -ENOMEM;
		memset(b + (size_t)im->cap * QT_BLKSIZE, 0, (size_t)(cap - im->cap) * QT_BLKSIZE);
		im->buf = b;
		im->cap = cap;
	}
	*blk = im->nblocks++;
	return 0;
}

/* An entry worth keeping: some usage or some limit (qtree_release_dquot
 * deletes the others). */
static bool dquot_live(const struct f2fs_dquot *dq)
{
	return dq->curspace || dq->curinodes || dq->bhardlimit || dq->bsoftlimit ||
	       dq->ihardlimit || dq->isoftlimit;
}

static void put_entry(uint8_t *e, const struct f2fs_dquot *dq)
{
	put_le32(e + QE_ID, dq->id);
	put_le64(e + QE_IHARD, dq->ihardlimit);
	put_le64(e + QE_ISOFT, dq->isoftlimit);
	put_le64(e + QE_CURINODES, dq->curinodes);
	/* v2_stoqb rounds limits up to whole quota blocks */
	put_le64(e + QE_BHARD, (dq->bhardlimit + 1023) >> 10);
	put_le64(e + QE_BSOFT, (dq->bsoftlimit + 1023) >> 10);
	put_le64(e + QE_CURSPACE, dq->curspace);
	put_le64(e + QE_BTIME, (uint64_t)dq->btime);
	put_le64(e + QE_ITIME, (uint64_t)dq->itime);
	if (entry_unused(e))
		put_le64(e + QE_ITIME, 1);
}

int f2fs_qtree_build(int type, const struct f2fs_quota_type *qt, uint8_t **out, size_t *len)
{
	struct image im = { .cap = 8 };
	uint32_t data_blk = 0, in_blk = QT_ENTRIES, blk;
	int err = 0;

	im.buf = calloc(im.cap, QT_BLKSIZE);
	if (!im.buf)
		return -ENOMEM;
	im.nblocks = 2;		/* header and info, then the root */
	for (size_t i = 0; !err && i < qt->n; i++) {
		const struct f2fs_dquot *dq = &qt->dq[i];
		uint32_t node = QT_TREEOFF;

		if (!dquot_live(dq))
			continue;
		if (in_blk == QT_ENTRIES) {
			err = new_block(&im, &data_blk);
			in_blk = 0;
			if (err)
				break;
		}
		/* the path from the root: one byte of the id per level */
		for (int depth = 0; !err && depth < QT_TREEDEPTH; depth++) {
			uint8_t *ref = im.buf + (size_t)node * QT_BLKSIZE +
				       4 * ((dq->id >> (8 * (QT_TREEDEPTH - 1 - depth))) & 0xff);

			if (depth == QT_TREEDEPTH - 1) {
				put_le32(ref, data_blk);
			} else if (get_le32(ref)) {
				node = get_le32(ref);
			} else {
				err = new_block(&im, &blk);
				if (!err) {
					/* im.buf may have moved */
					put_le32(im.buf + (size_t)node * QT_BLKSIZE + 4 *
						 ((dq->id >> (8 * (QT_TREEDEPTH - 1 - depth))) & 0xff),
						 blk);
					node = blk;
				}
			}
		}
		if (err)
			break;
		{
			uint8_t *d = im.buf + (size_t)data_blk * QT_BLKSIZE;

			put_entry(d + QT_DATA_HDR + in_blk * QT_ENTRY_SIZE, dq);
			in_blk++;
			put_le16(d + 8, (uint16_t)in_blk);
		}
	}
	if (err) {
		free(im.buf);
		return err;
	}
	put_le32(im.buf, v2_magic[type]);
	put_le32(im.buf + 4, V2_VERSION_R1);
	put_le32(im.buf + V2_INFO_OFF + QI_BGRACE, qt->bgrace);
	put_le32(im.buf + V2_INFO_OFF + QI_IGRACE, qt->igrace);
	put_le32(im.buf + V2_INFO_OFF + QI_FLAGS, qt->info_flags);
	put_le32(im.buf + V2_INFO_OFF + QI_BLOCKS, im.nblocks);
	put_le32(im.buf + V2_INFO_OFF + QI_FREE_BLK, 0);
	/* a data block with room left is on the free-entry list (its own
	 * next/prev links are zero: it is the only one) */
	put_le32(im.buf + V2_INFO_OFF + QI_FREE_ENTRY,
		 data_blk && in_blk < QT_ENTRIES ? data_blk : 0);
	*out = im.buf;
	*len = (size_t)im.nblocks * QT_BLKSIZE;
	return 0;
}
