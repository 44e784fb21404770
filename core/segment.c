// SPDX-License-Identifier: GPL-2.0
/*
 * Segment manager: the six current segments with their summary blocks
 * (which carry the NAT and SIT journals), SIT addressing and block address
 * validation.
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "f2fs.h"

/* current_sit_addr: the SIT is shadow-paged like the NAT. */
uint32_t f2fs_sit_block_addr(const struct f2fs_sb *sb, uint32_t segno)
{
	uint32_t blk_off = segno / SIT_ENTRY_PER_BLOCK;
	uint32_t addr = sb->sit_blkaddr + blk_off;

	if (blk_off < sb->sit_bitmap_size * 8 && f2fs_test_bit(blk_off, sb->sit_bitmap))
		addr += (sb->segment_count_sit / 2) << sb->log_blocks_per_seg;
	return addr;
}

static uint32_t cur_segno(const struct f2fs_sb *sb, int type)
{
	return type < NR_CURSEG_DATA_TYPE
		       ? get_le32(sb->ckpt + CP_CUR_DATA_SEGNO + 4 * type)
		       : get_le32(sb->ckpt + CP_CUR_NODE_SEGNO + 4 * (type - NR_CURSEG_DATA_TYPE));
}

static uint16_t cur_blkoff(const struct f2fs_sb *sb, int type)
{
	return type < NR_CURSEG_DATA_TYPE
		       ? get_le16(sb->ckpt + CP_CUR_DATA_BLKOFF + 2 * type)
		       : get_le16(sb->ckpt + CP_CUR_NODE_BLKOFF + 2 * (type - NR_CURSEG_DATA_TYPE));
}

/* sum_blk_addr: summaries counted back from the end of the pack. */
static uint32_t sum_blk_addr(const struct f2fs_sb *sb, int base, int type)
{
	return f2fs_cp_pack_start(sb) + get_le32(sb->ckpt + CP_PACK_TOTAL_BLOCK_COUNT) -
	       (uint32_t)(base + 1) + (uint32_t)type;
}

static int read_compacted_summaries(struct f2fs_sb *sb)
{
	uint32_t blk = f2fs_cp_pack_start(sb) + get_le32(sb->ckpt + CP_PACK_START_SUM);
	uint32_t end = f2fs_cp_pack_start(sb) + get_le32(sb->ckpt + CP_PACK_TOTAL_BLOCK_COUNT);
	uint8_t *page = f2fs_alloc_blocks(1);
	uint32_t offset;
	int err;

	if (!page)
		return -ENOMEM;
	err = f2fs_dev_read(sb->dev, blk++, page, 1);
	if (err)
		goto out;
	memcpy(sb->curseg[CURSEG_HOT_DATA].sum + SUM_JOURNAL_OFFSET, page, SUM_JOURNAL_SIZE);
	memcpy(sb->curseg[CURSEG_COLD_DATA].sum + SUM_JOURNAL_OFFSET, page + SUM_JOURNAL_SIZE,
	       SUM_JOURNAL_SIZE);
	offset = 2 * SUM_JOURNAL_SIZE;
	for (int t = CURSEG_HOT_DATA; t <= CURSEG_COLD_DATA; t++) {
		struct f2fs_curseg *cs = &sb->curseg[t];
		uint32_t n = cs->alloc_type ? sb->blocks_per_seg : cs->blkoff; /* SSR: all */

		for (uint32_t j = 0; j < n; j++) {
			memcpy(cs->sum + j * SUMMARY_SIZE, page + offset, SUMMARY_SIZE);
			offset += SUMMARY_SIZE;
			if (offset + SUMMARY_SIZE <= F2FS_BLKSIZE - SUM_FOOTER_SIZE)
				continue;
			if (blk >= end) {
				err = f2fs_corrupted(sb, "checkpoint: compact summaries run past the pack");
				goto out;
			}
			err = f2fs_dev_read(sb->dev, blk++, page, 1);
			if (err)
				goto out;
			offset = 0;
		}
	}
out:
	free(page);
	return err;
}

static int read_normal_summary(struct f2fs_sb *sb, int type)
{
	struct f2fs_curseg *cs = &sb->curseg[type];
	bool umount = f2fs_cp_flag(sb, CP_UMOUNT_FLAG);
	uint32_t addr;

	if (type < NR_CURSEG_DATA_TYPE)
		addr = umount ? sum_blk_addr(sb, NR_CURSEG_TYPE, type)
			      : sum_blk_addr(sb, NR_CURSEG_DATA_TYPE, type);
	else if (umount)
		addr = sum_blk_addr(sb, NR_CURSEG_NODE_TYPE, type - CURSEG_HOT_NODE);
	else
		addr = sb->ssa_blkaddr + cs->segno;	/* node summaries live in the SSA */
	return f2fs_dev_read(sb->dev, addr, cs->sum, 1);
}

int f2fs_build_segment_manager(struct f2fs_sb *sb)
{
	int err = 0;

	for (int t = 0; t < NR_CURSEG_TYPE; t++) {
		struct f2fs_curseg *cs = &sb->curseg[t];

		cs->segno = cur_segno(sb, t);
		cs->blkoff = cur_blkoff(sb, t);
		cs->alloc_type = sb->ckpt[CP_ALLOC_TYPE + t];
		cs->sum = f2fs_alloc_blocks(1);
		if (!cs->sum)
			return -ENOMEM;
		memset(cs->sum, 0, F2FS_BLKSIZE);
	}
	if (f2fs_cp_flag(sb, CP_COMPACT_SUM_FLAG)) {
		err = read_compacted_summaries(sb);
		for (int t = CURSEG_HOT_NODE; !err && t < NR_CURSEG_TYPE; t++)
			err = read_normal_summary(sb, t);
	} else {
		for (int t = 0; !err && t < NR_CURSEG_TYPE; t++)
			err = read_normal_summary(sb, t);
	}
	if (err)
		return err;
	if (get_le16(sb->curseg[CURSEG_HOT_DATA].sum + SUM_JOURNAL_OFFSET) > NAT_JOURNAL_ENTRIES)
		return f2fs_corrupted(sb, "checkpoint: NAT journal claims %u entries (max %d)",
				      get_le16(sb->curseg[CURSEG_HOT_DATA].sum + SUM_JOURNAL_OFFSET),
				      NAT_JOURNAL_ENTRIES);
	if (get_le16(sb->curseg[CURSEG_COLD_DATA].sum + SUM_JOURNAL_OFFSET) > SIT_JOURNAL_ENTRIES)
		return f2fs_corrupted(sb, "checkpoint: SIT journal claims %u entries (max %d)",
				      get_le16(sb->curseg[CURSEG_COLD_DATA].sum + SUM_JOURNAL_OFFSET),
				      SIT_JOURNAL_ENTRIES);
	return 0;
}

void f2fs_destroy_segment_manager(struct f2fs_sb *sb)
{
	for (int t = 0; t < NR_CURSEG_TYPE; t++) {
		free(sb->curseg[t].sum);
		sb->curseg[t].sum = NULL;
	}
	if (sb->sm) {
		for (uint32_t i = 0; i < sb->sm->nr_ssa_dirty; i++)
			free(sb->sm->ssa_dirty[i].blk);
		free(sb->sm->ssa_dirty);
		pthread_mutex_destroy(&sb->sm->lock);
		free(sb->sm->sentries);
		free(sb->sm->dirty_sentries);
		free(sb->sm->pinned_secmap);
		free(sb->sm);
		sb->sm = NULL;
	}
}

/* ======================= the writable segment manager ======================= */

static inline void f2fs_set_bit(uint32_t nr, uint8_t *map)
{
	map[nr >> 3] |= (uint8_t)(0x80u >> (nr & 7));
}

static inline void f2fs_clear_bit(uint32_t nr, uint8_t *map)
{
	map[nr >> 3] &= (uint8_t)~(0x80u >> (nr & 7));
}

static uint32_t popcount_map(const uint8_t *map)
{
	uint32_t n = 0;

	for (int i = 0; i < SIT_VBLOCK_MAP_SIZE; i++)
		n += (uint32_t)__builtin_popcount(map[i]);
	return n;
}

static bool is_curseg(const struct f2fs_sb *sb, uint32_t segno)
{
	for (int t = 0; t < NR_CURSEG_TYPE; t++)
		if (sb->curseg[t].segno == segno)
			return true;
	return false;
}

/*
 * Free: nothing valid now, nothing valid at the checkpoint, and not written
 * since it.  A segment filled and emptied within one checkpoint interval
 * stays "prefree" until the next checkpoint: roll-forward may still replay
 * an fsync()ed dnode that points into it.
 */
static bool seg_is_free(const struct f2fs_sb *sb, uint32_t segno)
{
	const struct f2fs_seg_entry *se = &sb->sm->sentries[segno];

	return !se->valid_blocks && !se->ckpt_valid_blocks && !se->written && !is_curseg(sb, segno);
}

uint64_t f2fs_segment_mtime(struct f2fs_sb *sb)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return sb->sm->elapsed_base + ((uint64_t)ts.tv_sec - sb->sm->mount_time);
}

static void decode_sit_entry(struct f2fs_seg_entry *se, const uint8_t *raw)
{
	uint16_t v = get_le16(raw + SIT_E_VBLOCKS);

	se->valid_blocks = v & SIT_VBLOCKS_MASK;
	se->type = (uint8_t)(v >> SIT_VBLOCKS_SHIFT);
	memcpy(se->cur_valid_map, raw + SIT_E_VALID_MAP, SIT_VBLOCK_MAP_SIZE);
	se->mtime = get_le64(raw + SIT_E_MTIME);
}

static void encode_sit_entry(const struct f2fs_seg_entry *se, uint8_t *raw)
{
	put_le16(raw + SIT_E_VBLOCKS,
		 (uint16_t)(((unsigned)se->type << SIT_VBLOCKS_SHIFT) | se->valid_blocks));
	memcpy(raw + SIT_E_VALID_MAP, se->cur_valid_map, SIT_VBLOCK_MAP_SIZE);
	put_le64(raw + SIT_E_MTIME, se->mtime);
}

/* build_sit_entries: SIT blocks, then the SIT journal on top, all checked. */
int f2fs_build_sit(struct f2fs_sb *sb)
{
	uint32_t nsegs = sb->segment_count_main;
	uint32_t nblocks = (nsegs + SIT_ENTRY_PER_BLOCK - 1) / SIT_ENTRY_PER_BLOCK;
	const uint8_t *j = sb->curseg[CURSEG_COLD_DATA].sum + SUM_JOURNAL_OFFSET;
	struct f2fs_sm_info *sm;
	uint64_t total = 0, nodes = 0;
	struct timespec ts;
	uint8_t *blk;
	int err = 0;

	if (sb->sm)
		return 0;
	sm = calloc(1, sizeof(*sm));
	blk = f2fs_alloc_blocks(1);
	if (!sm || !blk)
		goto nomem;
	sm->sentries = calloc(nsegs, sizeof(*sm->sentries));
	sm->dirty_sentries = calloc((nsegs + 7) / 8, 1);
	if (!sm->sentries || !sm->dirty_sentries)
		goto nomem;
	pthread_mutex_init(&sm->lock, NULL);

	for (uint32_t b = 0; b < nblocks; b++) {
		err = f2fs_dev_read(sb->dev, f2fs_sit_block_addr(sb, b * SIT_ENTRY_PER_BLOCK), blk, 1);
		if (err)
			goto fail;
		for (uint32_t i = 0; i < SIT_ENTRY_PER_BLOCK; i++) {
			uint32_t segno = b * SIT_ENTRY_PER_BLOCK + i;

			if (segno >= nsegs)
				break;
			decode_sit_entry(&sm->sentries[segno], blk + i * SIT_ENTRY_SIZE);
		}
	}
	for (uint16_t i = 0; i < get_le16(j); i++) {
		const uint8_t *e = j + 2 + i * SIT_JOURNAL_ENTRY_SIZE;
		uint32_t segno = get_le32(e);

		if (segno >= nsegs) {
			err = f2fs_corrupted(sb, "SIT journal: segment %u out of range", segno);
			goto fail;
		}
		decode_sit_entry(&sm->sentries[segno], e + 4);
	}
	for (uint32_t s = 0; s < nsegs; s++) {
		struct f2fs_seg_entry *se = &sm->sentries[s];

		if (se->valid_blocks > sb->blocks_per_seg ||
		    popcount_map(se->cur_valid_map) != se->valid_blocks) {
			err = f2fs_corrupted(sb, "SIT: segment %u claims %u valid blocks, its bitmap "
					     "has %u", s, se->valid_blocks,
					     popcount_map(se->cur_valid_map));
			goto fail;
		}
		if (se->valid_blocks && se->type >= NR_CURSEG_TYPE) {
			err = f2fs_corrupted(sb, "SIT: segment %u has bad type %u", s, se->type);
			goto fail;
		}
		se->ckpt_valid_blocks = se->valid_blocks;
		memcpy(se->ckpt_valid_map, se->cur_valid_map, SIT_VBLOCK_MAP_SIZE);
		total += se->valid_blocks;
		if (se->type >= CURSEG_HOT_NODE)
			nodes += se->valid_blocks;
	}
	/* the checkpoint also counts blocks reserved by fallocate and compressed
	 * clusters (NEW_ADDR), which have no SIT bit: it can only be larger */
	if (total > get_le64(sb->ckpt + CP_VALID_BLOCK_COUNT)) {
		err = f2fs_corrupted(sb, "SIT: %llu valid blocks, more than the checkpoint's %llu",
				     (unsigned long long)total,
				     (unsigned long long)get_le64(sb->ckpt + CP_VALID_BLOCK_COUNT));
		goto fail;
	}
	if (nodes != get_le32(sb->ckpt + CP_VALID_NODE_COUNT)) {
		err = f2fs_corrupted(sb, "SIT: %llu valid node blocks, the checkpoint says %u",
				     (unsigned long long)nodes, get_le32(sb->ckpt + CP_VALID_NODE_COUNT));
		goto fail;
	}
	/* the current segments must be free past their write pointers (LFS) */
	for (int t = 0; t < NR_CURSEG_TYPE; t++) {
		struct f2fs_curseg *cs = &sb->curseg[t];
		struct f2fs_seg_entry *se = &sm->sentries[cs->segno];

		for (uint32_t off = cs->blkoff; !cs->alloc_type && off < sb->blocks_per_seg; off++) {
			if (f2fs_test_bit(off, se->cur_valid_map)) {
				err = f2fs_corrupted(sb, "SIT: current segment %u has valid block %u past "
						     "its write pointer %u", cs->segno, off, cs->blkoff);
				goto fail;
			}
		}
	}
	sm->valid_blocks = get_le64(sb->ckpt + CP_VALID_BLOCK_COUNT);
	sm->cp_valid_blocks = sm->valid_blocks;
	sb->sm = sm;
	for (uint32_t s = 0; s < nsegs; s++)
		if (seg_is_free(sb, s))
			sm->free_segments++;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	sm->mount_time = (uint64_t)ts.tv_sec;
	sm->gc_victim_sec = UINT32_MAX;
	sm->elapsed_base = get_le64(sb->ckpt + CP_ELAPSED_TIME);
	free(blk);
	return 0;
nomem:
	err = -ENOMEM;
fail:
	sb->sm = NULL;
	if (sm) {
		free(sm->sentries);
		free(sm->dirty_sentries);
		free(sm);
	}
	free(blk);
	return err;
}

static void mark_sit_dirty(struct f2fs_sm_info *sm, uint32_t segno)
{
	if (!(sm->dirty_sentries[segno >> 3] & (1u << (segno & 7)))) {
		sm->dirty_sentries[segno >> 3] |= (uint8_t)(1u << (segno & 7));
		sm->nr_dirty_sentries++;
	}
}

/*
 * get_new_segment: the next free segment of the current section, else the
 * first segment of the next wholly free section (sections are the unit of
 * cleaning, so a log never starts in a half-used one).
 */
static int get_new_segment(struct f2fs_sb *sb, uint32_t cur, uint32_t *out)
{
	uint32_t spsec = sb->segs_per_sec, nsecs = sb->segment_count_main / spsec;
	uint32_t cursec = cur / spsec;

	if ((cur + 1) % spsec && cur + 1 < sb->segment_count_main && seg_is_free(sb, cur + 1)) {
		*out = cur + 1;
		return 0;
	}
	for (uint32_t i = 1; i <= nsecs; i++) {
		uint32_t sec = (cursec + i) % nsecs, s;

		for (s = 0; s < spsec && seg_is_free(sb, sec * spsec + s); s++)
			;
		if (s == spsec) {
			*out = sec * spsec;
			return 0;
		}
	}
	return -ENOSPC;
}

/*
 * Slack space recycling (SSR), for the data logs: when free segments run
 * short, a log continues in the dirty data segment with the most slots
 * that neither the current state nor the last checkpoint uses (the kernel's
 * get_ssr_segment), instead of waiting for cleaning to free a whole one.
 * A slot still valid in the last checkpoint is never reused, so a crash
 * before the next checkpoint loses nothing that checkpoint refers to.
 * Node logs stay LFS: roll-forward follows the chain of fsync()ed node
 * blocks through next-block pointers, and a recycled slot could hold an
 * old node block that looks like a link of that chain.
 */
static bool ssr_slot_free(const struct f2fs_seg_entry *se, uint32_t off)
{
	return !f2fs_test_bit(off, se->cur_valid_map) && !f2fs_test_bit(off, se->ckpt_valid_map);
}

static uint32_t ssr_next_slot(const struct f2fs_sb *sb, const struct f2fs_seg_entry *se,
			      uint32_t from)
{
	while (from < sb->blocks_per_seg && !ssr_slot_free(se, from))
		from++;
	return from;
}

static uint32_t ssr_free_slots(const struct f2fs_sb *sb, const struct f2fs_seg_entry *se)
{
	uint32_t used = 0;

	for (uint32_t i = 0; i < SIT_VBLOCK_MAP_SIZE; i++)
		used += (uint32_t)__builtin_popcount(se->cur_valid_map[i] | se->ckpt_valid_map[i]);
	return used < sb->blocks_per_seg ? sb->blocks_per_seg - used : 0;
}

/* f2fs_need_SSR: free segments down to twice the reserved ones. */
static bool need_ssr(const struct f2fs_sb *sb)
{
	return sb->sm->free_segments <= 2 * sb->rsvd_segments;
}

/* A dirty data segment for log `type`: its own temperature first, then the others. */
static bool get_ssr_segment(struct f2fs_sb *sb, int type, uint32_t *out)
{
	for (int pass = 0; pass < 2; pass++) {
		uint32_t best = UINT32_MAX, best_free = 0;

		for (uint32_t s = 0; s < sb->segment_count_main; s++) {
			const struct f2fs_seg_entry *se = &sb->sm->sentries[s];
			uint32_t n;

			if (seg_is_free(sb, s) || is_curseg(sb, s) ||
			    s / sb->segs_per_sec == sb->sm->gc_victim_sec ||
			    se->type > CURSEG_COLD_DATA || (pass == 0) != (se->type == type))
				continue;
			n = ssr_free_slots(sb, se);
			if (n > best_free) {
				best_free = n;
				best = s;
			}
		}
		if (best != UINT32_MAX) {
			*out = best;
			return true;
		}
	}
	return false;
}

/* ---- dirty SSA blocks (sm->lock) ---- */

static struct f2fs_ssa_dirty *ssa_dirty_find(struct f2fs_sm_info *sm, uint32_t segno)
{
	for (uint32_t i = 0; i < sm->nr_ssa_dirty; i++)
		if (sm->ssa_dirty[i].segno == segno)
			return &sm->ssa_dirty[i];
	return NULL;
}

static int cmp_ssa_dirty(const void *a, const void *b)
{
	uint32_t x = ((const struct f2fs_ssa_dirty *)a)->segno;
	uint32_t y = ((const struct f2fs_ssa_dirty *)b)->segno;

	return x < y ? -1 : x > y;
}

/*
 * Write every dirty SSA block, consecutive segments' blocks in one request
 * (segments are mostly taken in order, so a checkpoint's SSA blocks are a
 * few runs, where writing each when its log left it cost a 4 KiB write per
 * segment).  A block whose write failed stays dirty.
 */
static int ssa_flush_locked(struct f2fs_sb *sb)
{
	struct f2fs_sm_info *sm = sb->sm;
	struct f2fs_ssa_dirty *d = sm->ssa_dirty;
	struct iovec iov[64];
	uint32_t i = 0, kept = 0;
	int err = 0;

	if (!sm->nr_ssa_dirty)
		return 0;	/* d may be NULL, which qsort must not get */
	qsort(d, sm->nr_ssa_dirty, sizeof(*d), cmp_ssa_dirty);
	while (i < sm->nr_ssa_dirty) {
		uint32_t n = 0;
		struct f2fs_bio bio = { .op = F2FS_BIO_WRITE, .blkaddr = sb->ssa_blkaddr + d[i].segno };
		int e;

		while (i + n < sm->nr_ssa_dirty && n < ARRAY_SIZE(iov) &&
		       d[i + n].segno == d[i].segno + n) {
			iov[n] = (struct iovec){ d[i + n].blk, F2FS_BLKSIZE };
			n++;
		}
		bio.nr_blocks = n;
		bio.iov = iov;
		bio.iovcnt = (int)n;
		e = f2fs_submit_bio(sb->dev, &bio);
		for (uint32_t k = i; k < i + n; k++) {
			if (e)
				d[kept++] = d[k];
			else
				free(d[k].blk);
		}
		if (!err)
			err = e;
		i += n;
	}
	sm->nr_ssa_dirty = kept;
	return err;
}

/* Make blk the SSA block of segno, to be written with the next flush. */
static int ssa_put_locked(struct f2fs_sb *sb, uint32_t segno, const uint8_t *blk)
{
	struct f2fs_sm_info *sm = sb->sm;
	struct f2fs_ssa_dirty *d = ssa_dirty_find(sm, segno);

	if (!d && sm->nr_ssa_dirty >= F2FS_SSA_DIRTY_MAX) {
		int err = ssa_flush_locked(sb);

		if (err)
			return err;
	}
	if (!d) {
		uint8_t *copy;

		if (sm->nr_ssa_dirty == sm->cap_ssa_dirty) {
			uint32_t cap = sm->cap_ssa_dirty ? sm->cap_ssa_dirty * 2 : 16;
			struct f2fs_ssa_dirty *v = realloc(sm->ssa_dirty, cap * sizeof(*v));

			if (!v)
				return -ENOMEM;
			sm->ssa_dirty = v;
			sm->cap_ssa_dirty = cap;
		}
		copy = f2fs_alloc_blocks(1);
		if (!copy)
			return -ENOMEM;
		d = &sm->ssa_dirty[sm->nr_ssa_dirty++];
		*d = (struct f2fs_ssa_dirty){ segno, copy };
	}
	memcpy(d->blk, blk, F2FS_BLKSIZE);
	return 0;
}

static int ssa_read_locked(struct f2fs_sb *sb, uint32_t segno, uint8_t *buf)
{
	const struct f2fs_ssa_dirty *d = ssa_dirty_find(sb->sm, segno);

	if (d) {
		memcpy(buf, d->blk, F2FS_BLKSIZE);
		return 0;
	}
	return f2fs_dev_read(sb->dev, sb->ssa_blkaddr + segno, buf, 1);
}

int f2fs_read_ssa(struct f2fs_sb *sb, uint32_t segno, uint8_t *buf)
{
	int err;

	pthread_mutex_lock(&sb->sm->lock);
	err = ssa_read_locked(sb, segno, buf);
	pthread_mutex_unlock(&sb->sm->lock);
	return err;
}

int f2fs_flush_ssa(struct f2fs_sb *sb)
{
	int err;

	pthread_mutex_lock(&sb->sm->lock);
	err = ssa_flush_locked(sb);
	pthread_mutex_unlock(&sb->sm->lock);
	return err;
}

/* The current segment's summary goes to the SSA when the log leaves it
 * (write_sum_page: into the meta cache, on the device by the checkpoint). */
static int retire_curseg(struct f2fs_sb *sb, struct f2fs_curseg *cs)
{
	return ssa_put_locked(sb, cs->segno, cs->sum);
}

/* change_curseg(SSR): continue log `type` in segno, with the summary it has. */
static int ssr_curseg(struct f2fs_sb *sb, int type, uint32_t segno)
{
	struct f2fs_curseg *cs = &sb->curseg[type];
	struct f2fs_seg_entry *se = &sb->sm->sentries[segno];
	uint8_t *sum = f2fs_alloc_blocks(1);
	int err;

	if (!sum)
		return -ENOMEM;
	err = ssa_read_locked(sb, segno, sum);
	if (!err && sum[SUM_FOOTER_OFFSET] != SUM_TYPE_DATA)
		err = f2fs_corrupted(sb, "SSA of data segment %u has footer type %u", segno,
				     sum[SUM_FOOTER_OFFSET]);
	if (!err)
		err = retire_curseg(sb, cs);
	if (!err) {
		cs->segno = segno;
		cs->blkoff = (uint16_t)ssr_next_slot(sb, se, 0);
		cs->alloc_type = 1;	/* SSR */
		/* the entries change, the log's journal stays */
		memcpy(cs->sum, sum, SUM_ENTRIES_SIZE);
		cs->sum[SUM_FOOTER_OFFSET] = SUM_TYPE_DATA;
		se->type = (uint8_t)type;
		mark_sit_dirty(sb->sm, segno);
		f2fs_stat_add(sb, ssr_segments, 1);
	}
	free(sum);
	return err;
}

/* new_curseg: retire the current segment and move the log to a free one (or SSR). */
static int new_curseg(struct f2fs_sb *sb, int type)
{
	struct f2fs_curseg *cs = &sb->curseg[type];
	bool data = type <= CURSEG_COLD_DATA;
	uint32_t segno;
	int err;

	if (data && need_ssr(sb) && get_ssr_segment(sb, type, &segno))
		return ssr_curseg(sb, type, segno);
	err = get_new_segment(sb, cs->segno, &segno);
	if (err == -ENOSPC && data && get_ssr_segment(sb, type, &segno))
		return ssr_curseg(sb, type, segno);
	if (err)
		return err;
	err = retire_curseg(sb, cs);
	if (err)
		return err;
	cs->segno = segno;
	cs->blkoff = 0;
	cs->alloc_type = 0;	/* LFS */
	memset(cs->sum, 0, SUM_ENTRIES_SIZE);
	cs->sum[SUM_FOOTER_OFFSET] = type >= CURSEG_HOT_NODE ? SUM_TYPE_NODE : SUM_TYPE_DATA;
	sb->sm->free_segments--;
	/* __set_sit_entry_type: the SIT names the log a segment belongs to */
	sb->sm->sentries[segno].type = (uint8_t)type;
	mark_sit_dirty(sb->sm, segno);
	return 0;
}

/*
 * f2fs_allocate_pinning_section: log `type` continues at the start of a
 * wholly free section (never SSR), so that what it writes next lies in
 * sections of its own, as a pinned file's fallocate needs.
 */
int f2fs_new_section(struct f2fs_sb *sb, int type)
{
	struct f2fs_curseg *cs = &sb->curseg[type];
	uint32_t spsec = sb->segs_per_sec, nsecs = sb->segment_count_main / spsec;
	uint32_t cursec = cs->segno / spsec, segno = UINT32_MAX;
	int err = 0;

	pthread_mutex_lock(&sb->sm->lock);
	/* already at the start of a section nothing was written to */
	if (!cs->alloc_type && !cs->blkoff && cs->segno % spsec == 0 &&
	    !sb->sm->sentries[cs->segno].valid_blocks && !sb->sm->sentries[cs->segno].written) {
		pthread_mutex_unlock(&sb->sm->lock);
		return 0;
	}
	for (uint32_t i = 1; i <= nsecs && segno == UINT32_MAX; i++) {
		uint32_t sec = (cursec + i) % nsecs, n;

		for (n = 0; n < spsec && seg_is_free(sb, sec * spsec + n); n++)
			;
		if (n == spsec)
			segno = sec * spsec;
	}
	if (segno == UINT32_MAX)
		err = -ENOSPC;
	if (!err)
		err = retire_curseg(sb, cs);
	if (!err) {
		uint32_t left = cs->segno;

		cs->segno = segno;
		cs->blkoff = 0;
		cs->alloc_type = 0;
		memset(cs->sum, 0, SUM_ENTRIES_SIZE);
		cs->sum[SUM_FOOTER_OFFSET] = type >= CURSEG_HOT_NODE ? SUM_TYPE_NODE : SUM_TYPE_DATA;
		sb->sm->free_segments--;
		sb->sm->sentries[segno].type = (uint8_t)type;
		mark_sit_dirty(sb->sm, segno);
		/* a segment the log left untouched is free again */
		if (seg_is_free(sb, left))
			sb->sm->free_segments++;
	}
	pthread_mutex_unlock(&sb->sm->lock);
	return err;
}

/*
 * Take up to `want` consecutive slots of log `type` for slots ofs_in_node,
 * ofs_in_node + 1, ... of node nid: one run from the write pointer to the
 * segment's end or (SSR) the next used slot.  sm->lock held.
 */
static int allocate_run_locked(struct f2fs_sb *sb, int type, uint32_t nid, uint8_t version,
			       uint16_t ofs_in_node, uint32_t want, uint32_t *blkaddr,
			       uint32_t *got, uint32_t *next)
{
	struct f2fs_sm_info *sm = sb->sm;
	struct f2fs_curseg *cs = &sb->curseg[type];
	struct f2fs_seg_entry *se;
	uint64_t mtime;
	uint32_t n = 0;
	int err;

	/* an SSR log (ours, or the kernel's from the checkpoint) skips used slots */
	if (cs->alloc_type)
		cs->blkoff = (uint16_t)ssr_next_slot(sb, &sm->sentries[cs->segno], cs->blkoff);
	if (cs->blkoff >= sb->blocks_per_seg || (cs->alloc_type && type > CURSEG_COLD_DATA)) {
		err = new_curseg(sb, type);
		if (err)
			return err;
	}
	*blkaddr = f2fs_seg_start_blkaddr(sb, cs->segno) + cs->blkoff;
	se = &sm->sentries[cs->segno];
	mtime = f2fs_segment_mtime(sb);
	while (n < want && cs->blkoff < sb->blocks_per_seg &&
	       (!cs->alloc_type || ssr_slot_free(se, cs->blkoff))) {
		uint8_t *sum = cs->sum + (size_t)cs->blkoff * SUMMARY_SIZE;

		put_le32(sum, nid);
		sum[4] = version;
		put_le16(sum + 5, (uint16_t)(ofs_in_node + n));
		se->mtime = se->mtime ? (se->mtime * se->valid_blocks + mtime) /
					(se->valid_blocks + 1u) : mtime;
		f2fs_set_bit(cs->blkoff, se->cur_valid_map);
		se->valid_blocks++;
		/* update_sit_entry: a slot written since the checkpoint is not
		 * reusable until the next one either (an fsync()ed dnode may
		 * point at it) */
		if (!f2fs_test_bit(cs->blkoff, se->ckpt_valid_map)) {
			f2fs_set_bit(cs->blkoff, se->ckpt_valid_map);
			se->ckpt_valid_blocks++;
		}
		cs->blkoff++;
		n++;
	}
	if (!n)		/* a log always stands on a free slot; callers loop on *got */
		return f2fs_corrupted(sb, "log %d stands on used slot %u of segment %u", type,
				      cs->blkoff, cs->segno);
	se->written = true;
	se->type = (uint8_t)type;
	mark_sit_dirty(sm, cs->segno);
	if (cs->alloc_type)
		cs->blkoff = (uint16_t)ssr_next_slot(sb, se, cs->blkoff);
	/* like the kernel, never leave a full current segment: a checkpoint
	 * must not record a write pointer at the end of a segment */
	if (cs->blkoff >= sb->blocks_per_seg && new_curseg(sb, type))
		f2fs_warn(sb, "no free segment left for log %d", type);
	/* NEXT_FREE_BLKADDR, for the node chain roll-forward follows */
	if (next)
		*next = f2fs_seg_start_blkaddr(sb, cs->segno) + cs->blkoff;
	*got = n;
	return 0;
}

int f2fs_allocate_run(struct f2fs_sb *sb, int type, uint32_t nid, uint8_t version,
		      uint16_t ofs_in_node, uint32_t want, uint32_t *blkaddr, uint32_t *got)
{
	int err;

	if (!want)
		return -EINVAL;
	pthread_mutex_lock(&sb->sm->lock);
	err = allocate_run_locked(sb, type, nid, version, ofs_in_node, want, blkaddr, got, NULL);
	pthread_mutex_unlock(&sb->sm->lock);
	return err;
}

int f2fs_allocate_block(struct f2fs_sb *sb, int type, uint32_t nid, uint8_t version,
			uint16_t ofs_in_node, uint32_t *blkaddr)
{
	return f2fs_allocate_block_next(sb, type, nid, version, ofs_in_node, blkaddr, NULL);
}

int f2fs_allocate_block_next(struct f2fs_sb *sb, int type, uint32_t nid, uint8_t version,
			     uint16_t ofs_in_node, uint32_t *blkaddr, uint32_t *next)
{
	uint32_t got;
	int err;

	pthread_mutex_lock(&sb->sm->lock);
	err = allocate_run_locked(sb, type, nid, version, ofs_in_node, 1, blkaddr, &got, next);
	pthread_mutex_unlock(&sb->sm->lock);
	return err;
}

void f2fs_invalidate_block(struct f2fs_sb *sb, uint32_t blkaddr)
{
	struct f2fs_sm_info *sm = sb->sm;
	uint32_t segno, off;
	struct f2fs_seg_entry *se;

	if (blkaddr == NULL_ADDR || blkaddr == NEW_ADDR || blkaddr == COMPRESS_ADDR)
		return;
	if (!f2fs_valid_main_blkaddr(sb, blkaddr)) {
		f2fs_corrupted(sb, "invalidating block 0x%x outside the main area", blkaddr);
		return;
	}
	segno = (blkaddr - sb->main_blkaddr) >> sb->log_blocks_per_seg;
	off = (blkaddr - sb->main_blkaddr) & (sb->blocks_per_seg - 1);
	pthread_mutex_lock(&sm->lock);
	se = &sm->sentries[segno];
	if (!f2fs_test_bit(off, se->cur_valid_map)) {
		pthread_mutex_unlock(&sm->lock);
		f2fs_cache_invalidate(sb->cache, blkaddr);
		f2fs_corrupted(sb, "SIT: block 0x%x freed twice", blkaddr);
		return;
	}
	f2fs_clear_bit(off, se->cur_valid_map);
	se->valid_blocks--;
	mark_sit_dirty(sm, segno);
	pthread_mutex_unlock(&sm->lock);
	/* a dead block must never be served from the cache once reused: the
	 * one place that drops it (callers need not) */
	f2fs_cache_invalidate(sb->cache, blkaddr);
}

uint32_t f2fs_free_segments(struct f2fs_sb *sb)
{
	uint32_t n;

	pthread_mutex_lock(&sb->sm->lock);
	n = sb->sm->free_segments;
	pthread_mutex_unlock(&sb->sm->lock);
	return n;
}

/*
 * Write dirty SIT entries (caller holds the checkpoint exclusively): into
 * the SIT journal when they fit, else every journal entry and dirty entry
 * goes to the shadow copy of its SIT block, flipping that block's bit in
 * the new checkpoint's bitmap.
 */
int f2fs_flush_sit_entries(struct f2fs_sb *sb, uint8_t *new_sit_bitmap)
{
	struct f2fs_sm_info *sm = sb->sm;
	uint8_t *j = sb->curseg[CURSEG_COLD_DATA].sum + SUM_JOURNAL_OFFSET;
	uint32_t nsegs = sb->segment_count_main;
	uint16_t n = get_le16(j);
	uint32_t need = 0;
	uint8_t *blk = NULL;
	int err = 0;

	/* dirty entries not already in the journal */
	for (uint32_t s = 0; s < nsegs; s++) {
		bool in_j = false;

		if (!(sm->dirty_sentries[s >> 3] & (1u << (s & 7))))
			continue;
		for (uint16_t i = 0; i < n && !in_j; i++)
			in_j = get_le32(j + 2 + i * SIT_JOURNAL_ENTRY_SIZE) == s;
		need += !in_j;
	}
	if (n + need <= SIT_JOURNAL_ENTRIES) {
		for (uint32_t s = 0; s < nsegs; s++) {
			uint16_t i;

			if (!(sm->dirty_sentries[s >> 3] & (1u << (s & 7))))
				continue;
			for (i = 0; i < n; i++)
				if (get_le32(j + 2 + i * SIT_JOURNAL_ENTRY_SIZE) == s)
					break;
			if (i == n)
				put_le32(j + 2 + n++ * SIT_JOURNAL_ENTRY_SIZE, s);
			encode_sit_entry(&sm->sentries[s], j + 2 + i * SIT_JOURNAL_ENTRY_SIZE + 4);
		}
		put_le16(j, n);
		goto done;
	}

	/* journal full: everything goes to the SIT blocks */
	for (uint16_t i = 0; i < n; i++)
		mark_sit_dirty(sm, get_le32(j + 2 + i * SIT_JOURNAL_ENTRY_SIZE));
	put_le16(j, 0);
	blk = f2fs_alloc_blocks(1);
	if (!blk)
		return -ENOMEM;
	for (uint32_t b = 0; b * SIT_ENTRY_PER_BLOCK < nsegs; b++) {
		uint32_t first = b * SIT_ENTRY_PER_BLOCK, last = F2FS_MIN(first + SIT_ENTRY_PER_BLOCK, nsegs);
		uint32_t old_addr, new_addr, half = (sb->segment_count_sit / 2) << sb->log_blocks_per_seg;
		bool any = false;

		for (uint32_t s = first; s < last && !any; s++)
			any = sm->dirty_sentries[s >> 3] & (1u << (s & 7));
		if (!any)
			continue;
		old_addr = f2fs_sit_block_addr(sb, first);
		err = f2fs_dev_read(sb->dev, old_addr, blk, 1);
		if (err)
			break;
		for (uint32_t s = first; s < last; s++)
			encode_sit_entry(&sm->sentries[s], blk + (s - first) * SIT_ENTRY_SIZE);
		new_addr = f2fs_test_bit(b, sb->sit_bitmap) ? old_addr - half : old_addr + half;
		{
			struct iovec iov = { blk, F2FS_BLKSIZE };
			struct f2fs_bio bio = {
				.op = F2FS_BIO_WRITE, .blkaddr = new_addr, .nr_blocks = 1,
				.iov = &iov, .iovcnt = 1,
			};
			err = f2fs_submit_bio(sb->dev, &bio);
			if (err)
				break;
		}
		new_sit_bitmap[b >> 3] ^= (uint8_t)(0x80u >> (b & 7));
	}
	free(blk);
done:
	if (!err) {
		memset(sm->dirty_sentries, 0, (nsegs + 7) / 8);
		sm->nr_dirty_sentries = 0;
	}
	return err;
}

/* After a checkpoint commits: what is valid now is what the checkpoint holds. */
void f2fs_sit_checkpoint_done(struct f2fs_sb *sb)
{
	struct f2fs_sm_info *sm = sb->sm;
	uint32_t run_start = 0, run_len = 0;

	pthread_mutex_lock(&sm->lock);
	sm->cp_valid_blocks = sm->valid_blocks;
	sm->taken_since_cp = 0;
	sm->free_segments = 0;
	for (uint32_t s = 0; s < sb->segment_count_main; s++) {
		struct f2fs_seg_entry *se = &sm->sentries[s];
		/* prefree until now: it held data at the last checkpoint or since */
		bool freed = !se->valid_blocks && (se->ckpt_valid_blocks || se->written);

		se->ckpt_valid_blocks = se->valid_blocks;
		memcpy(se->ckpt_valid_map, se->cur_valid_map, SIT_VBLOCK_MAP_SIZE);
		se->written = false;
		if (seg_is_free(sb, s))
			sm->free_segments++;
		/* -o discard: tell the device, one call per run of freed segments */
		if (sb->opts.discard && freed && seg_is_free(sb, s) && run_len &&
		    run_start + run_len == s) {
			run_len++;
			continue;
		}
		if (run_len)
			f2fs_dev_discard(sb->dev, f2fs_seg_start_blkaddr(sb, run_start),
					 run_len << sb->log_blocks_per_seg);
		run_len = 0;
		if (sb->opts.discard && freed && seg_is_free(sb, s)) {
			run_start = s;
			run_len = 1;
		}
	}
	if (run_len)
		f2fs_dev_discard(sb->dev, f2fs_seg_start_blkaddr(sb, run_start),
				 run_len << sb->log_blocks_per_seg);
	pthread_mutex_unlock(&sm->lock);
}

/* valid_block_count: every written data and node block and every NEW_ADDR reservation */
void f2fs_add_valid_blocks(struct f2fs_sb *sb, int64_t n)
{
	pthread_mutex_lock(&sb->sm->lock);
	sb->sm->valid_blocks = (uint64_t)((int64_t)sb->sm->valid_blocks + n);
	if (n > 0)
		sb->sm->taken_since_cp += (uint64_t)n;
	pthread_mutex_unlock(&sb->sm->lock);
}

/*
 * Blocks users may still take (inc_valid_block_count): the checkpoint's
 * user blocks less what is used.  Nodes are counted when created, so a
 * checkpoint rewriting them needs no more; the overprovisioned segments
 * outside user_block_count are what cleaning works with.
 */
uint64_t f2fs_free_user_blocks(struct f2fs_sb *sb)
{
	uint64_t user = sb->user_block_count, used;

	pthread_mutex_lock(&sb->sm->lock);
	used = sb->sm->valid_blocks;
	pthread_mutex_unlock(&sb->sm->lock);
	return user > used ? user - used : 0;
}

/*
 * inc_valid_block_count / inc_valid_node_count: take n blocks of the user
 * space, all or none.  Testing f2fs_free_user_blocks and counting later
 * lets two writers both take the last block, and a checkpoint whose
 * valid_block_count exceeds user_block_count is one the kernel (and the
 * next mount) refuses.
 */
int f2fs_take_user_blocks(struct f2fs_sb *sb, uint32_t n)
{
	uint64_t user = sb->user_block_count;
	int err = 0;

	pthread_mutex_lock(&sb->sm->lock);
	if (sb->sm->valid_blocks + n > user) {
		err = -ENOSPC;
	} else {
		sb->sm->valid_blocks += n;
		sb->sm->taken_since_cp += n;
	}
	pthread_mutex_unlock(&sb->sm->lock);
	return err;
}

bool f2fs_rollforward_may_overflow(struct f2fs_sb *sb)
{
	uint64_t user = sb->user_block_count;
	bool over;

	pthread_mutex_lock(&sb->sm->lock);
	over = sb->sm->cp_valid_blocks + sb->sm->taken_since_cp > user;
	pthread_mutex_unlock(&sb->sm->lock);
	return over;
}

/*
 * Record that block off of segment segno is slot ofs of dnode nid: in the
 * summary of the log writing that segment, else in its SSA block.  Under
 * sm->lock, so that SSR cannot load the SSA block between the read and
 * the write here.
 */
static int set_summary_locked(struct f2fs_sb *sb, uint32_t segno, uint32_t off, uint32_t nid,
			      uint8_t version, uint16_t ofs)
{
	struct f2fs_seg_entry *se = &sb->sm->sentries[segno];
	uint8_t *sum = NULL, *blk;
	int err;

	for (int t = 0; t < NR_CURSEG_TYPE; t++) {
		if (sb->curseg[t].segno == segno) {
			sum = sb->curseg[t].sum;
			break;
		}
	}
	if (sum) {
		put_le32(sum + off * SUMMARY_SIZE, nid);
		sum[off * SUMMARY_SIZE + 4] = version;
		put_le16(sum + off * SUMMARY_SIZE + 5, ofs);
		return 0;
	}
	blk = f2fs_alloc_blocks(1);
	if (!blk)
		return -ENOMEM;
	err = ssa_read_locked(sb, segno, blk);
	if (!err) {
		if (blk[SUM_FOOTER_OFFSET] != SUM_TYPE_DATA && se->valid_blocks == 1)
			blk[SUM_FOOTER_OFFSET] = SUM_TYPE_DATA;
		put_le32(blk + off * SUMMARY_SIZE, nid);
		blk[off * SUMMARY_SIZE + 4] = version;
		put_le16(blk + off * SUMMARY_SIZE + 5, ofs);
		err = ssa_put_locked(sb, segno, blk);
	}
	free(blk);
	return err;
}

/* Roll-forward: block `blkaddr`, written after the checkpoint, is live again
 * as slot ofs of dnode nid.  Mark it valid and record its summary. */
int f2fs_recover_block(struct f2fs_sb *sb, uint32_t blkaddr, uint32_t nid, uint8_t version,
		       uint16_t ofs)
{
	struct f2fs_sm_info *sm = sb->sm;
	uint32_t segno = (blkaddr - sb->main_blkaddr) >> sb->log_blocks_per_seg;
	uint32_t off = (blkaddr - sb->main_blkaddr) & (sb->blocks_per_seg - 1);
	struct f2fs_seg_entry *se;
	int err;

	pthread_mutex_lock(&sm->lock);
	se = &sm->sentries[segno];
	if (f2fs_test_bit(off, se->cur_valid_map)) {
		pthread_mutex_unlock(&sm->lock);
		return f2fs_corrupted(sb, "recovery: block 0x%x is already in use", blkaddr);
	}
	if (seg_is_free(sb, segno))
		sm->free_segments--;
	f2fs_set_bit(off, se->cur_valid_map);
	se->valid_blocks++;
	se->written = true;
	if (!f2fs_test_bit(off, se->ckpt_valid_map)) {
		f2fs_set_bit(off, se->ckpt_valid_map);
		se->ckpt_valid_blocks++;
	}
	if (!se->type || se->type >= NR_CURSEG_TYPE || se->valid_blocks == 1)
		se->type = CURSEG_WARM_DATA;
	mark_sit_dirty(sm, segno);
	err = set_summary_locked(sb, segno, off, nid, version, ofs);
	pthread_mutex_unlock(&sm->lock);
	return err;
}

int f2fs_set_block_owner(struct f2fs_sb *sb, uint32_t blkaddr, uint32_t nid, uint8_t version,
			 uint16_t ofs)
{
	uint32_t segno, off;
	int err;

	if (!f2fs_valid_main_blkaddr(sb, blkaddr))
		return f2fs_corrupted(sb, "block 0x%x outside the main area changes owner", blkaddr);
	segno = (blkaddr - sb->main_blkaddr) >> sb->log_blocks_per_seg;
	off = (blkaddr - sb->main_blkaddr) & (sb->blocks_per_seg - 1);
	pthread_mutex_lock(&sb->sm->lock);
	err = set_summary_locked(sb, segno, off, nid, version, ofs);
	pthread_mutex_unlock(&sb->sm->lock);
	return err;
}

/* After roll-forward every log moves to a fresh segment: recovered blocks may
 * lie beyond a log's checkpointed write pointer (f2fs_allocate_new_segments). */
int f2fs_allocate_new_segments(struct f2fs_sb *sb)
{
	int err = 0;

	pthread_mutex_lock(&sb->sm->lock);
	for (int t = 0; t < NR_CURSEG_TYPE && !err; t++)
		err = new_curseg(sb, t);
	pthread_mutex_unlock(&sb->sm->lock);
	return err;
}

/*
 * restore_node_summary: after a checkpoint without node summaries (not an
 * unmount), the summaries of the current node segments are rebuilt from
 * the footers of the node blocks in them, as the kernel does.  Only the
 * blocks the SIT marks valid are read (in runs): the entries of the others
 * are never consulted, and a segment is 2 MiB a mount need not read.
 */
#define RESTORE_RUN 64u	/* blocks read at once */

int f2fs_restore_node_summaries(struct f2fs_sb *sb)
{
	uint8_t *buf;
	int err = 0;

	if (f2fs_cp_flag(sb, CP_UMOUNT_FLAG))
		return 0;
	buf = f2fs_alloc_blocks(RESTORE_RUN);
	if (!buf)
		return -ENOMEM;
	for (int t = CURSEG_HOT_NODE; t < NR_CURSEG_TYPE && !err; t++) {
		struct f2fs_curseg *cs = &sb->curseg[t];
		const uint8_t *map = sb->sm->sentries[cs->segno].cur_valid_map;
		uint32_t start = f2fs_seg_start_blkaddr(sb, cs->segno);

		memset(cs->sum, 0, SUM_ENTRIES_SIZE);
		for (uint32_t i = 0, n; i < sb->blocks_per_seg && !err; i += n) {
			if (!f2fs_test_bit(i, map)) {
				n = 1;
				continue;
			}
			for (n = 1; n < RESTORE_RUN && i + n < sb->blocks_per_seg &&
				    f2fs_test_bit(i + n, map); n++)
				;
			err = f2fs_dev_read(sb->dev, start + i, buf, n);
			for (uint32_t k = 0; k < n && !err; k++)
				put_le32(cs->sum + (i + k) * SUMMARY_SIZE,
					 f2fs_node_nid(buf + (size_t)k * F2FS_BLKSIZE));
		}
		cs->sum[SUM_FOOTER_OFFSET] = SUM_TYPE_NODE;
	}
	free(buf);
	return err;
}

/*
 * FITRIM (f2fs_trim_fs): after the checkpoint the caller has written,
 * every segment free now and at that checkpoint may be discarded.  Runs of
 * them are discarded in one call each; runs shorter than minlen blocks
 * are left alone, as fstrim asks.
 */
int f2fs_trim_free_segments(struct f2fs_sb *sb, uint32_t start, uint32_t end, uint64_t minlen,
			    uint64_t *trimmed)
{
	uint32_t run = 0;
	int err = 0;

	*trimmed = 0;
	end = F2FS_MIN(end, sb->segment_count_main);
	pthread_mutex_lock(&sb->sm->lock);
	for (uint32_t s = start; s <= end && !err; s++) {
		if (s < end && seg_is_free(sb, s)) {
			run++;
			continue;
		}
		if (run && (uint64_t)run * sb->blocks_per_seg >= minlen) {
			err = f2fs_dev_discard(sb->dev, f2fs_seg_start_blkaddr(sb, s - run),
					       run * sb->blocks_per_seg);
			if (!err)
				*trimmed += (uint64_t)run * sb->blocks_per_seg;
		}
		run = 0;
	}
	pthread_mutex_unlock(&sb->sm->lock);
	return err;
}

/* The segment counts of /sys/kernel/debug/f2fs/status, by log and by state. */
void f2fs_segment_status(struct f2fs_sb *sb, struct f2fs_status *st)
{
	uint32_t full = sb->blocks_per_seg;

	pthread_mutex_lock(&sb->sm->lock);
	for (int t = 0; t < NR_CURSEG_TYPE; t++) {
		st->log[t].segno = sb->curseg[t].segno;
		st->log[t].blkoff = sb->curseg[t].blkoff;
		st->log[t].ssr = sb->curseg[t].alloc_type;
	}
	for (uint32_t s = 0; s < sb->segment_count_main; s++) {
		const struct f2fs_seg_entry *se = &sb->sm->sentries[s];
		int t = se->type < NR_CURSEG_TYPE ? se->type : -1;

		if (seg_is_free(sb, s)) {
			st->free_segs++;
			continue;
		}
		if (!se->valid_blocks && !is_curseg(sb, s)) {
			st->prefree_segs++;
			continue;
		}
		if (se->valid_blocks >= full)
			st->full_segs++;
		else if (!is_curseg(sb, s))
			st->dirty_segs++;
		if (t >= 0) {
			st->log[t].valid_blocks += se->valid_blocks;
			if (se->valid_blocks >= full)
				st->log[t].full_segs++;
			else if (!is_curseg(sb, s))
				st->log[t].dirty_segs++;
		}
	}
	st->valid_blocks = sb->sm->valid_blocks;
	pthread_mutex_unlock(&sb->sm->lock);
}
