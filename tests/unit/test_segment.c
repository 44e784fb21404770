// SPDX-License-Identifier: GPL-2.0
/*
 * Segment allocation on a writable memory mount: a log hands out the slots
 * after its write pointer back to back and records each block's summary;
 * the SIT counts it valid now and as held since the checkpoint, so a freed
 * slot is not handed out again before the next checkpoint; a full segment
 * moves the log to a free one; a run of slots stops at a segment's end.
 * File writes take their blocks from the warm data log, the counts survive
 * a checkpoint, and fsck.f2fs finds nothing.
 */
#include "rwimage.h"

#define NR 8

static struct f2fs_seg_entry *seg(struct f2fs_sb *sb, uint32_t segno)
{
	return &sb->sm->sentries[segno];
}

static void log_allocation(struct rwimage *im)
{
	struct f2fs_sb *sb = im->sb;
	struct f2fs_curseg *cs = &sb->curseg[CURSEG_WARM_DATA];
	uint32_t segno = cs->segno, off = cs->blkoff, start = f2fs_seg_start_blkaddr(sb, segno);
	uint32_t valid = seg(sb, segno)->valid_blocks, free_segs = f2fs_free_segments(sb);
	uint32_t addr[NR], last, moved = 0, *all;
	uint64_t counted = sb->sm->valid_blocks;
	size_t nall = 0;

	for (uint32_t i = 0; i < NR; i++) {
		int err = f2fs_allocate_block(sb, CURSEG_WARM_DATA, 1000 + i, (uint8_t)i, (uint16_t)i,
					      &addr[i]);
		const uint8_t *sum = cs->sum + (size_t)(off + i) * SUMMARY_SIZE;

		CHECK(err == 0, "allocate %u: %d", i, err);
		CHECK_EQ_U64(addr[i], start + off + i, "the log hands out its next slot");
		CHECK(f2fs_test_bit(off + i, seg(sb, segno)->cur_valid_map), "slot %u valid", off + i);
		CHECK(f2fs_test_bit(off + i, seg(sb, segno)->ckpt_valid_map),
		      "slot %u held until the next checkpoint", off + i);
		CHECK(get_le32(sum) == 1000 + i && sum[4] == i && get_le16(sum + 5) == i,
		      "summary of slot %u: nid %u version %u ofs %u", off + i, get_le32(sum), sum[4],
		      get_le16(sum + 5));
	}
	CHECK_EQ_U64(seg(sb, segno)->valid_blocks, valid + NR, "SIT valid blocks");
	CHECK_EQ_U64(cs->blkoff, off + NR, "write pointer");
	CHECK_EQ_U64(sb->sm->valid_blocks, counted,
		     "valid_block_count is the data and node layers' to keep");

	/* freed before the checkpoint: valid no more, but not reused either */
	for (uint32_t i = 0; i < NR; i++)
		f2fs_invalidate_block(sb, addr[i]);
	CHECK_EQ_U64(seg(sb, segno)->valid_blocks, valid, "SIT valid blocks after freeing");
	CHECK(!f2fs_test_bit(off, seg(sb, segno)->cur_valid_map), "freed slot invalid");
	CHECK(f2fs_test_bit(off, seg(sb, segno)->ckpt_valid_map), "freed slot still held");
	CHECK(!atomic_load(&sb->need_fsck), "nothing looked inconsistent");

	/* fill the segment: the log moves on to a segment that was free */
	all = calloc(sb->blocks_per_seg + 1, sizeof(*all));
	CHECK(all != NULL, "memory");
	if (!all)
		return;
	while (cs->segno == segno && nall <= sb->blocks_per_seg) {
		int err = f2fs_allocate_block(sb, CURSEG_WARM_DATA, 1000, 0, 0, &last);

		CHECK(err == 0, "allocate to the end of the segment: %d", err);
		if (err)
			break;
		all[nall++] = last;
	}
	CHECK(cs->segno != segno, "a full segment is replaced at once");
	CHECK_EQ_U64(last, start + sb->blocks_per_seg - 1, "the last slot went out last");
	CHECK_EQ_U64(nall, sb->blocks_per_seg - off - NR, "every slot after the freed ones");
	CHECK_EQ_U64(cs->blkoff, 0, "the new segment starts at its first slot");
	CHECK_EQ_U64(seg(sb, cs->segno)->valid_blocks, 0, "the new segment was empty");
	CHECK_EQ_U64(seg(sb, cs->segno)->type, CURSEG_WARM_DATA, "and belongs to the log");
	CHECK_EQ_U64(f2fs_free_segments(sb), free_segs - 1, "one free segment taken");
	for (size_t i = 0; i < nall; i++) {
		f2fs_invalidate_block(sb, all[i]);
		moved++;
	}
	CHECK_EQ_U64(seg(sb, segno)->valid_blocks, valid, "the old segment holds what it held");
	CHECK_EQ_U64(moved, nall, "freed every block");
	free(all);
}

/*
 * f2fs_allocate_run: consecutive slots with consecutive summary offsets,
 * ending where the segment ends (the log moves on at once), the rest
 * asked for again.
 */
static void run_allocation(const struct rwimage *im)
{
	struct rwimage c;
	struct f2fs_curseg *cs;
	uint32_t a, got, segno, off, left, valid;

	if (!rw_copy(im, &c))
		return;
	cs = &c.sb->curseg[CURSEG_WARM_DATA];
	segno = cs->segno;
	off = cs->blkoff;
	valid = c.sb->sm->sentries[segno].valid_blocks;
	CHECK(f2fs_allocate_run(c.sb, CURSEG_WARM_DATA, 77, 3, 10, NR, &a, &got) == 0, "run");
	CHECK_EQ_U64(got, NR, "a run inside the segment is whole");
	CHECK_EQ_U64(a, f2fs_seg_start_blkaddr(c.sb, segno) + off, "from the write pointer");
	for (uint32_t i = 0; i < NR; i++) {
		const uint8_t *sum = cs->sum + (size_t)(off + i) * SUMMARY_SIZE;

		CHECK(get_le32(sum) == 77 && sum[4] == 3 && get_le16(sum + 5) == 10 + i,
		      "summary of slot %u: nid %u version %u ofs %u", off + i, get_le32(sum), sum[4],
		      get_le16(sum + 5));
		CHECK(f2fs_test_bit(off + i, c.sb->sm->sentries[segno].cur_valid_map),
		      "slot %u valid", off + i);
	}
	CHECK_EQ_U64(c.sb->sm->sentries[segno].valid_blocks, valid + NR, "SIT counts the run");
	left = c.sb->blocks_per_seg - off - NR;
	CHECK(f2fs_allocate_run(c.sb, CURSEG_WARM_DATA, 78, 0, 0, left + 5, &a, &got) == 0,
	      "a run past the segment's end");
	CHECK_EQ_U64(got, left, "ends with the segment");
	CHECK(cs->segno != segno && cs->blkoff == 0, "and the log moved on");
	CHECK(f2fs_allocate_run(c.sb, CURSEG_WARM_DATA, 78, 0, (uint16_t)left, 5, &a, &got) == 0 &&
	      got == 5, "the rest from the next segment");
	CHECK(f2fs_allocate_run(c.sb, CURSEG_WARM_DATA, 78, 0, 0, 0, &a, &got) == -EINVAL,
	      "an empty run is refused");
	CHECK(!atomic_load(&c.sb->need_fsck), "nothing looked inconsistent");
	rw_free(&c);
}

/* A block freed twice is reported, not counted twice. */
static void double_free(const struct rwimage *im)
{
	struct rwimage c;
	uint32_t a, segno;
	uint16_t valid;

	if (!rw_copy(im, &c))
		return;
	CHECK(f2fs_allocate_block(c.sb, CURSEG_HOT_DATA, 5, 0, 0, &a) == 0, "allocate");
	segno = (a - c.sb->main_blkaddr) >> c.sb->log_blocks_per_seg;
	f2fs_invalidate_block(c.sb, a);
	valid = c.sb->sm->sentries[segno].valid_blocks;
	CHECK(!atomic_load(&c.sb->need_fsck), "one free is fine");
	rw_nr_errors = 0;
	f2fs_invalidate_block(c.sb, a);
	CHECK(atomic_load(&c.sb->need_fsck), "a second free marks the filesystem for fsck");
	CHECK(rw_nr_errors == 1 && strstr(rw_last_error, "freed twice"), "and says so: %s",
	      rw_last_error);
	CHECK_EQ_U64(c.sb->sm->sentries[segno].valid_blocks, valid, "and changes no count");
	rw_free(&c);
}

static void file_blocks(struct rwimage *im)
{
	uint8_t *data = f2fs_alloc_blocks(3);
	struct f2fs_curseg *cs = &im->sb->curseg[CURSEG_WARM_DATA];
	uint32_t ino = rw_create(im, "three-blocks"), start, pblk, n, segno;
	uint64_t counted, user_free;
	ssize_t w;

	if (!ino || !data)
		goto out;
	for (int i = 0; i < 3; i++)
		rw_pattern(data + i * F2FS_BLKSIZE, (uint32_t)i);
	start = f2fs_seg_start_blkaddr(im->sb, cs->segno) + cs->blkoff;
	counted = im->sb->sm->valid_blocks;
	user_free = f2fs_free_user_blocks(im->sb);
	w = f2fs_write(im->sb, ino, data, 3 * F2FS_BLKSIZE, 0);
	CHECK(w == 3 * F2FS_BLKSIZE, "write: %zd", w);
	CHECK_EQ_U64(im->sb->sm->valid_blocks, counted + 3, "three data blocks counted");
	CHECK_EQ_U64(f2fs_free_user_blocks(im->sb), user_free - 3, "and taken from the users'");
	{
		struct f2fs_inode *inode;

		CHECK(f2fs_iget(im->sb, ino, &inode) == 0, "iget");
		CHECK(f2fs_map_blocks(im->sb, inode, 0, 3, &pblk, &n) == 0, "map");
		f2fs_iput(im->sb, inode);
	}
	CHECK(pblk == start && n == 3, "the file's blocks are the log's next three (%u+%u, want %u)",
	      pblk, n, start);
	counted = im->sb->sm->valid_blocks;
	CHECK(rw_remount(im) == 0, "remount");
	if (!im->sb)
		goto out;
	CHECK_EQ_U64(im->sb->sm->valid_blocks, counted, "the checkpoint kept valid_block_count");
	segno = (pblk - im->sb->main_blkaddr) >> im->sb->log_blocks_per_seg;
	for (uint32_t i = 0; i < 3; i++)
		CHECK(f2fs_test_bit((pblk + i - im->sb->main_blkaddr) & (im->sb->blocks_per_seg - 1),
				    im->sb->sm->sentries[segno].cur_valid_map),
		      "the SIT kept block %u valid", pblk + i);
out:
	free(data);
}

/*
 * A mount after a checkpoint that was not an unmount (a crash) has no node
 * summaries in the pack: they come back from the footers of the node blocks
 * the SIT marks valid in each current node segment, the same entries the
 * mount that wrote them kept.
 */
static void restored_node_summaries(struct rwimage *im)
{
	struct rwimage c;
	char name[32];

	for (int i = 0; i < 20; i++) {
		snprintf(name, sizeof(name), "node-sum-%d", i);
		rw_create(im, name);
	}
	CHECK(f2fs_sync_fs(im->sb, false) == 0, "checkpoint, not an unmount");
	if (!rw_copy(im, &c))
		return;
	CHECK(!f2fs_cp_flag(c.sb, CP_UMOUNT_FLAG), "the copy's checkpoint is not an unmount's");
	for (int t = CURSEG_HOT_NODE; t < NR_CURSEG_TYPE; t++) {
		const struct f2fs_curseg *was = &im->sb->curseg[t], *now = &c.sb->curseg[t];
		const uint8_t *map = seg(c.sb, now->segno)->cur_valid_map;
		uint32_t valid = 0, wrong = 0;

		CHECK(now->segno == was->segno, "log %d: the same segment", t);
		for (uint32_t b = 0; b < c.sb->blocks_per_seg; b++) {
			uint32_t nid = get_le32(now->sum + b * SUMMARY_SIZE);

			if (!f2fs_test_bit(b, map)) {
				wrong += nid != 0;
				continue;
			}
			valid++;
			wrong += nid != get_le32(was->sum + b * SUMMARY_SIZE);
		}
		CHECK(wrong == 0, "log %d: %u restored summaries differ (%u valid blocks)", t, wrong, valid);
		if (t == CURSEG_WARM_NODE)
			CHECK(valid >= 20, "log %d: the new inodes are there (%u)", t, valid);
	}
	f2fs_umount(c.sb);
	c.sb = NULL;
	CHECK(rw_fsck_clean(&c), "fsck.f2fs after the mount that restored them");
	rw_free(&c);
}

int main(void)
{
	struct rwimage im;

	if (!rw_image(&im, NULL, 64))
		return check_done("test_segment");
	log_allocation(&im);
	CHECK(rw_nr_errors == 0, "no error reported: %s", rw_last_error);
	double_free(&im);
	run_allocation(&im);
	file_blocks(&im);
	restored_node_summaries(&im);
	rw_done(&im);
	return check_done("test_segment");
}
