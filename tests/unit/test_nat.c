// SPDX-License-Identifier: GPL-2.0
/*
 * NAT updates on a writable memory mount: nids come from the free map and
 * go back to it; a changed entry is seen at once through the NAT cache; a
 * node removed after having a block bumps its version; a checkpoint puts
 * a few entries into the NAT journal and many into the shadow copies of
 * their NAT blocks (flipping their bitmap bits), where a new mount finds
 * them; a freed nid becomes allocatable only after that checkpoint.
 */
#include "rwimage.h"

static bool nid_is_free(struct f2fs_sb *sb, uint32_t nid)
{
	return sb->nm->free_nids[nid >> 3] & (1u << (nid & 7));
}

static uint16_t nat_journal_count(struct f2fs_sb *sb)
{
	return get_le16(sb->curseg[CURSEG_HOT_DATA].sum + SUM_JOURNAL_OFFSET);
}

static bool in_nat_journal(struct f2fs_sb *sb, uint32_t nid)
{
	const uint8_t *j = sb->curseg[CURSEG_HOT_DATA].sum + SUM_JOURNAL_OFFSET;

	for (uint16_t i = 0; i < get_le16(j); i++)
		if (get_le32(j + 2 + i * NAT_JOURNAL_ENTRY_SIZE) == nid)
			return true;
	return false;
}

static struct f2fs_node_info info(struct f2fs_sb *sb, uint32_t nid)
{
	struct f2fs_node_info ni = { 0 };
	int err = f2fs_get_node_info(sb, nid, &ni);

	CHECK(err == 0, "node info of %u: %d", nid, err);
	return ni;
}

/*
 * The free map a mount builds: every nid whose NAT entry (block or journal)
 * has no address, and the count agrees with the bits.  Most NAT blocks of a
 * fresh image are zeros and are taken whole.
 */
static void free_map(struct f2fs_sb *sb)
{
	uint32_t bits = 0, wrong = 0;

	CHECK_EQ_U64(sb->nm->nr_unscanned, sb->nm->nat_blocks,
		     "a mount reads no NAT block for the free nid map");
	for (uint32_t nid = 0; nid < sb->max_nid; nid += NAT_ENTRY_PER_BLOCK)
		CHECK(f2fs_build_free_nids(sb, nid) == 0, "scan from nid %u", nid);
	CHECK_EQ_U64(sb->nm->nr_unscanned, 0, "every NAT block scanned");

	for (uint32_t nid = 0; nid < sb->max_nid; nid++) {
		bool is_free = nid_is_free(sb, nid);
		struct f2fs_node_info ni = { 0 };
		bool want = nid >= sb->root_ino && f2fs_get_node_info(sb, nid, &ni) == 0 &&
			    ni.blkaddr == NULL_ADDR;

		bits += is_free;
		wrong += is_free != want;
	}
	CHECK_EQ_U64(wrong, 0, "nids whose free bit disagrees with the NAT");
	CHECK_EQ_U64(bits, sb->nm->nr_free_nids, "free nids counted");
	CHECK(!nid_is_free(sb, sb->root_ino) && nid_is_free(sb, sb->max_nid - 1),
	      "the root is taken, the last nid free");
}

/* Entries changed by hand, on a copy that is thrown away. */
static void cache_updates(const struct rwimage *im)
{
	struct rwimage c;
	struct f2fs_node_info ni;
	uint32_t nid, other, nfree;

	if (!rw_copy(im, &c))
		return;
	CHECK(f2fs_alloc_nid(c.sb, &nid) == 0, "alloc nid");
	CHECK(c.sb->nm->nr_unscanned > 0 && c.sb->nm->nr_unscanned < c.sb->nm->nat_blocks,
	      "the first allocation scanned a batch of NAT blocks, not all %u",
	      c.sb->nm->nat_blocks);
	nfree = c.sb->nm->nr_free_nids + 1;
	CHECK(!nid_is_free(c.sb, nid), "nid %u taken", nid);
	CHECK_EQ_U64(info(c.sb, nid).blkaddr, NULL_ADDR, "a free nid has no block");
	CHECK(f2fs_alloc_nid(c.sb, &other) == 0 && other != nid, "a second nid differs");
	f2fs_alloc_nid_failed(c.sb, other);
	CHECK(nid_is_free(c.sb, other) && c.sb->nm->nr_free_nids == nfree - 1,
	      "an unused nid goes back at once");

	f2fs_set_node_addr(c.sb, nid, 77, NEW_ADDR);
	ni = info(c.sb, nid);
	CHECK(ni.blkaddr == NEW_ADDR && ni.ino == 77 && ni.version == 0,
	      "a new node: NEW_ADDR, ino 77, version 0 (got 0x%x, %u, %u)", ni.blkaddr, ni.ino,
	      ni.version);
	f2fs_set_node_addr(c.sb, nid, 77, NULL_ADDR);
	CHECK_EQ_U64(info(c.sb, nid).version, 0, "removed before it had a block: same version");
	f2fs_set_node_addr(c.sb, nid, 77, c.sb->main_blkaddr + 5);
	CHECK_EQ_U64(info(c.sb, nid).blkaddr, c.sb->main_blkaddr + 5, "moved");
	f2fs_set_node_addr(c.sb, nid, 77, NULL_ADDR);
	CHECK_EQ_U64(info(c.sb, nid).version, 1,
		     "removed after it had a block: the version moves on, stale summaries fail");
	CHECK(!nid_is_free(c.sb, nid), "a removed nid stays taken until the checkpoint");
	rw_free(&c);
}

/*
 * A NAT block scanned after its nids changed in memory: a nid given a node
 * and one whose node was removed since the checkpoint are not free, however
 * the block on disk reads; the checkpoint frees the removed one.
 */
static void late_scan(const struct rwimage *im)
{
	struct rwimage c;
	uint32_t taken, removed, last;

	if (!rw_copy(im, &c))
		return;
	last = c.sb->nm->nat_blocks - 1;
	taken = F2FS_MAX(last * NAT_ENTRY_PER_BLOCK, c.sb->root_ino) + 3;
	removed = taken + 1;
	CHECK(taken + 2 < c.sb->max_nid && !(c.sb->nm->scanned[last >> 3] & (1u << (last & 7))),
	      "the last NAT block (nids from %u) is not scanned yet", taken);
	f2fs_set_node_addr(c.sb, taken, taken, NEW_ADDR);
	f2fs_set_node_addr(c.sb, removed, removed, NEW_ADDR);
	f2fs_set_node_addr(c.sb, removed, removed, NULL_ADDR);
	CHECK(f2fs_build_free_nids(c.sb, taken) == 0, "scan the last block");
	CHECK(!nid_is_free(c.sb, taken) && !nid_is_free(c.sb, removed) &&
	      nid_is_free(c.sb, removed + 1), "the changed nids are taken, their neighbour free");
	f2fs_set_node_addr(c.sb, taken, taken, NULL_ADDR);
	CHECK(f2fs_sync_fs(c.sb, false) == 0, "checkpoint");
	CHECK(nid_is_free(c.sb, taken) && nid_is_free(c.sb, removed), "free after the checkpoint");
	f2fs_umount(c.sb);
	c.sb = NULL;
	CHECK(rw_fsck_clean(&c), "fsck.f2fs after the late scan");
	rw_free(&c);
}

/*
 * Allocation alone, batch after batch of NAT blocks, hands out every free
 * nid once and then says ENOSPC.
 */
static void exhaust_nids(const struct rwimage *im)
{
	struct rwimage c;
	uint8_t *seen;
	uint32_t want = 0, got = 0, twice = 0, taken = 0, nid;
	int err;

	if (!rw_copy(im, &c))
		return;
	seen = calloc(c.sb->max_nid / 8 + 1, 1);
	for (nid = c.sb->root_ino; seen && nid < c.sb->max_nid; nid++) {
		struct f2fs_node_info ni = { 0 };

		want += f2fs_get_node_info(c.sb, nid, &ni) == 0 && ni.blkaddr == NULL_ADDR;
	}
	while (seen && (err = f2fs_alloc_nid(c.sb, &nid)) == 0) {
		struct f2fs_node_info ni = { 0 };

		twice += (seen[nid >> 3] >> (nid & 7)) & 1;
		seen[nid >> 3] |= (uint8_t)(1u << (nid & 7));
		taken += f2fs_get_node_info(c.sb, nid, &ni) != 0 || ni.blkaddr != NULL_ADDR;
		if (++got > c.sb->max_nid)
			break;
	}
	CHECK(seen && err == -ENOSPC, "allocation ends with ENOSPC: %d", err);
	CHECK(got == want && !twice && !taken,
	      "%u nids handed out for %u free ones (%u twice, %u in use)", got, want, twice, taken);
	CHECK_EQ_U64(c.sb->nm->nr_unscanned, 0, "every NAT block scanned on the way");
	free(seen);
	f2fs_umount(c.sb);
	c.sb = NULL;
	CHECK(rw_fsck_clean(&c), "fsck.f2fs after every nid was handed out");
	rw_free(&c);
}

/*
 * The checkpoint's next_free_nid says where free nids begin; the next mount
 * scans from there, as the kernel's build_free_nids does, and not from NAT
 * block 0, whose nids an image with many inodes has taken.
 */
static void scan_from_checkpoint(const struct rwimage *im)
{
	struct rwimage c;
	uint32_t nid = 0, cp_next, first;
	const uint32_t past = 66 * NAT_ENTRY_PER_BLOCK;	/* beyond the first scan batch */
	const struct f2fs_cred cred = { .umask = 022 };
	struct f2fs_stat st;

	if (!rw_copy(im, &c))
		return;
	/* nids handed out and never used: free on disk, taken for this mount */
	while (nid < past && f2fs_alloc_nid(c.sb, &nid) == 0)
		;
	CHECK(nid >= past, "nids up to %u handed out", past);
	CHECK(f2fs_mknod(c.sb, f2fs_root_ino(c.sb), "late", 4, S_IFREG | 0644, 0, 0, &cred,
			 &st) == 0 && st.ino > past, "a file after them: inode %u", st.ino);
	CHECK(rw_remount(&c) == 0, "mount again");
	cp_next = get_le32(c.sb->ckpt + CP_NEXT_FREE_NID);
	CHECK(cp_next > past, "the checkpoint's next free nid %u is past %u", cp_next, past);
	CHECK(f2fs_alloc_nid(c.sb, &first) == 0 && first >= cp_next,
	      "the first allocation gives %u, from the checkpoint's %u on", first, cp_next);
	CHECK(!(c.sb->nm->scanned[0] & 1) &&
	      c.sb->nm->scanned[(cp_next / NAT_ENTRY_PER_BLOCK) >> 3] &
	      (1u << ((cp_next / NAT_ENTRY_PER_BLOCK) & 7)),
	      "the scan started at the checkpoint's NAT block, not at block 0");
	/* the nids below are found when the scan wraps round */
	while (f2fs_alloc_nid(c.sb, &nid) == 0 && nid >= cp_next)
		;
	CHECK(nid < cp_next && nid >= c.sb->root_ino, "the scan wrapped round to nid %u", nid);
	f2fs_umount(c.sb);
	c.sb = NULL;
	CHECK(rw_fsck_clean(&c), "fsck.f2fs after the scan from the checkpoint");
	rw_free(&c);
}

/*
 * Roll-forward claims an inode's own nid: only that nid's NAT block is
 * scanned, and the NAT cache still overrides it, whether the scan looks up
 * each nid or (a small cache) passes over the cache once.
 */
static void claim_scans_one_block(const struct rwimage *im)
{
	struct rwimage c;
	uint32_t mid, lo, taken, before;

	if (!rw_copy(im, &c))
		return;
	mid = c.sb->nm->nat_blocks / 2;	/* a batch from it would hold many blocks */
	lo = mid * NAT_ENTRY_PER_BLOCK;
	taken = lo + 7;
	f2fs_set_node_addr(c.sb, taken, taken, NEW_ADDR);
	before = c.sb->nm->nr_unscanned;
	CHECK(f2fs_claim_nid(c.sb, lo + 5) == 0, "claim a free nid of a NAT block in the middle");
	CHECK_EQ_U64(c.sb->nm->nr_unscanned, before - 1, "one NAT block scanned for it");
	CHECK(f2fs_claim_nid(c.sb, taken) == -EEXIST, "a nid the cache gave a node is taken");
	CHECK(f2fs_claim_nid(c.sb, lo + 5) == -EEXIST, "a claimed nid cannot be claimed again");
	CHECK(nid_is_free(c.sb, lo + 6), "its neighbour is free");

	/* more cache entries than the block has nids: the per-nid lookups */
	for (uint32_t nid = lo - NAT_ENTRY_PER_BLOCK - 20; nid < lo; nid++)
		f2fs_set_node_addr(c.sb, nid, nid, NEW_ADDR);
	taken = lo - 2 * NAT_ENTRY_PER_BLOCK - 30;
	f2fs_set_node_addr(c.sb, taken, taken, NEW_ADDR);
	CHECK(c.sb->nm->nr_entries > NAT_ENTRY_PER_BLOCK, "%u cache entries",
	      c.sb->nm->nr_entries);
	CHECK(f2fs_claim_nid(c.sb, taken) == -EEXIST && f2fs_claim_nid(c.sb, taken + 1) == 0,
	      "with a large cache, its entry still takes the nid");
	CHECK(f2fs_claim_nid(c.sb, lo - 1) == -EEXIST, "and those of the block next to it");
	rw_free(&c);
}

#define MANY ((int)NAT_JOURNAL_ENTRIES + 40)

static void checkpointed_entries(struct rwimage *im)
{
	uint32_t ino[MANY], few[2], addr[MANY];
	uint8_t *bitmap = malloc(im->sb->nat_bitmap_size);
	char name[32];
	bool flipped = false;

	if (!bitmap)
		return;
	/* a few: they fit the journal */
	CHECK(f2fs_sync_fs(im->sb, false) == 0, "checkpoint");
	memcpy(bitmap, im->sb->nat_bitmap, im->sb->nat_bitmap_size);
	for (int i = 0; i < 2; i++) {
		snprintf(name, sizeof(name), "few-%d", i);
		few[i] = rw_create(im, name);
	}
	CHECK(f2fs_sync_fs(im->sb, false) == 0, "checkpoint");
	for (int i = 0; i < 2; i++)
		CHECK(in_nat_journal(im->sb, few[i]), "inode %u's entry is in the journal", few[i]);
	CHECK(!memcmp(bitmap, im->sb->nat_bitmap, im->sb->nat_bitmap_size),
	      "no NAT block written for a few entries");

	/* more than the journal holds: the NAT blocks' other copies, bitmap bits flipped */
	for (int i = 0; i < MANY; i++) {
		snprintf(name, sizeof(name), "many-%d", i);
		ino[i] = rw_create(im, name);
	}
	CHECK(f2fs_sync_fs(im->sb, false) == 0, "checkpoint");
	CHECK_EQ_U64(nat_journal_count(im->sb), 0, "the journal went into the NAT blocks");
	for (uint32_t b = 0; b < im->sb->nat_bitmap_size; b++)
		flipped |= bitmap[b] != im->sb->nat_bitmap[b];
	CHECK(flipped, "the touched NAT blocks moved to their other copies");
	for (int i = 0; i < MANY; i++) {
		struct f2fs_node_info ni = info(im->sb, ino[i]);

		addr[i] = ni.blkaddr;
		CHECK(ni.ino == ino[i] && f2fs_valid_main_blkaddr(im->sb, ni.blkaddr),
		      "inode %u: ino %u at 0x%x", ino[i], ni.ino, ni.blkaddr);
	}

	/* a new mount reads them from the blocks */
	CHECK(rw_remount(im) == 0, "remount");
	if (!im->sb)
		goto out;
	for (int i = 0; i < MANY; i++) {
		struct f2fs_node_info ni = info(im->sb, ino[i]);

		CHECK(ni.ino == ino[i] && ni.blkaddr == addr[i], "inode %u after remount: 0x%x, want 0x%x",
		      ino[i], ni.blkaddr, addr[i]);
	}
	CHECK(f2fs_nat_checkpointed(im->sb, ino[0]), "the NAT on disk has it");
	CHECK(f2fs_build_free_nids(im->sb, ino[0]) == 0 && !nid_is_free(im->sb, ino[0]),
	      "scanned, its nid is taken");

	/* unlinked: its nid comes back only with the next checkpoint */
	CHECK(f2fs_unlink(im->sb, f2fs_root_ino(im->sb), "many-0", 6) == 0, "unlink");
	CHECK_EQ_U64(info(im->sb, ino[0]).blkaddr, NULL_ADDR, "its node is gone");
	CHECK(!nid_is_free(im->sb, ino[0]), "its nid is not reused before the checkpoint");
	CHECK(f2fs_sync_fs(im->sb, false) == 0, "checkpoint");
	CHECK(nid_is_free(im->sb, ino[0]), "and is after it");
	CHECK(!f2fs_nat_checkpointed(im->sb, ino[0]), "the NAT on disk says free");
out:
	free(bitmap);
}

/*
 * i_pino is only a hint, and a hostile image may hold any number there: fsync
 * asks the NAT whether that parent was checkpointed.  Out of range, it was not
 * (the fsync checkpoints), and the lookup stays inside the NAT bitmap (the rw
 * fuzz target found the read past it).
 */
static void stale_parent_hint(struct rwimage *im)
{
	uint32_t ino = rw_create(im, "stale-pino"), bad[] = { im->sb->max_nid, 0xfffffff0u, 1 };
	struct f2fs_inode *inode;
	uint8_t blk[F2FS_BLKSIZE];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK(!f2fs_nat_checkpointed(im->sb, bad[i]), "nid %u is not a checkpointed node", bad[i]);
	if (!ino || f2fs_begin_op(im->sb, ino, 0, &inode))
		return;
	inode->pino = 0xfffffff0u;
	CHECK(f2fs_mark_inode_dirty(im->sb, inode) == 0, "dirty the inode");
	CHECK(f2fs_need_do_checkpoint(im->sb, inode), "a bad parent hint takes a checkpoint");
	f2fs_end_op(im->sb, inode);
	rw_pattern(blk, ino);
	CHECK(f2fs_write(im->sb, ino, blk, sizeof(blk), 0) == (ssize_t)sizeof(blk), "write");
	CHECK(f2fs_fsync(im->sb, ino, false) == 0, "fsync with a bad parent hint");
	/* put the hint back so that fsck.f2fs judges the rest */
	if (f2fs_begin_op(im->sb, ino, 0, &inode))
		return;
	inode->pino = f2fs_root_ino(im->sb);
	CHECK(f2fs_mark_inode_dirty(im->sb, inode) == 0, "dirty the inode");
	f2fs_end_op(im->sb, inode);
}

int main(void)
{
	struct rwimage im;

	if (!rw_image(&im, NULL, 64))
		return check_done("test_nat");
	free_map(im.sb);
	cache_updates(&im);
	late_scan(&im);
	exhaust_nids(&im);
	scan_from_checkpoint(&im);
	claim_scans_one_block(&im);
	checkpointed_entries(&im);
	stale_parent_hint(&im);
	CHECK(rw_nr_errors == 0, "no error reported: %s", rw_last_error);
	rw_done(&im);
	return check_done("test_nat");
}
