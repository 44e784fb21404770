// SPDX-License-Identifier: GPL-2.0
/*
 * Extent precache and node read-ahead on a writable memory mount.
 *
 * A 64 MiB file with a hole, made fragmented the way the kernel's
 * measurement made it (a copy, then ranges of it overwritten) plus random
 * single-block overwrites, so its direct nodes hang below an indirect node.
 * After a cold precache every cached run must be what a second, cold mount
 * without read-ahead maps block by block, and together the runs must cover
 * every mapped block; reads with read-ahead on and off return the same
 * bytes; read-ahead made far fewer device requests than blocks.  Then the
 * tree is damaged (a direct node's footer, an indirect node's pointer to a
 * sibling and to a nid out of range): read-ahead refuses the blocks, and the
 * precache and the reads of the damaged range fail with EUCLEAN while the
 * rest of the file still reads right.
 */
#include "rwimage.h"

#define FILE_BLOCKS (16384u)			/* 64 MiB */
#define HOLE_START (6144u)			/* [24 MiB, 32 MiB) is never written */
#define HOLE_END (8192u)
/* a direct node below the first indirect node, past the hole (slot 4 is missing) */
#define SLOT 6

static uint8_t *model;

static int mount_with(struct rwimage *im, bool ra)
{
	struct f2fs_mount_opts o = { .log_level = F2FS_LOG_ERR, .log = rw_log,
				     .no_node_ra = !ra };
	struct f2fs_dev *dev;
	int err = f2fs_dev_open_mem_rw(im->buf, im->len, &dev);

	return err ? err : f2fs_mount_dev(dev, &o, &im->sb);
}

static int remount_with(struct rwimage *im, bool ra)
{
	int err = f2fs_umount(im->sb);

	im->sb = NULL;
	return err ? err : mount_with(im, ra);
}

static bool write_model(struct rwimage *im, uint32_t ino, uint32_t blk, uint32_t n)
{
	size_t len = (size_t)n * F2FS_BLKSIZE;

	return f2fs_write(im->sb, ino, model + (size_t)blk * F2FS_BLKSIZE, len,
			  (uint64_t)blk * F2FS_BLKSIZE) == (ssize_t)len;
}

static uint32_t rnd_state = 12345;
static uint32_t rnd(void)
{
	rnd_state = rnd_state * 1103515245u + 12345u;
	return rnd_state >> 8;
}

static uint32_t make_file(struct rwimage *im)
{
	uint32_t ino = rw_create(im, "big");
	bool ok = true;

	for (uint32_t b = 0; b < FILE_BLOCKS; b++)
		rw_pattern(model + (size_t)b * F2FS_BLKSIZE, b);
	memset(model + (size_t)HOLE_START * F2FS_BLKSIZE, 0,
	       (size_t)(HOLE_END - HOLE_START) * F2FS_BLKSIZE);
	ok = ino && write_model(im, ino, 0, HOLE_START) &&
	     write_model(im, ino, HOLE_END, FILE_BLOCKS - HOLE_END);
	CHECK(ok && f2fs_sync_fs(im->sb, false) == 0, "write the copy");
	/* overwrite 1 MiB of every 4 MiB past the first 8 MiB, as the seed did with 100 MiB */
	for (uint32_t b = 2048; ok && b < FILE_BLOCKS; b += 1024) {
		if (b >= HOLE_START && b < HOLE_END)
			continue;
		for (uint32_t i = 0; i < 256; i++)
			rw_pattern(model + (size_t)(b + i) * F2FS_BLKSIZE, b + i + 7777);
		ok = write_model(im, ino, b, 256);
	}
	for (int k = 0; ok && k < 300; k++) {
		uint32_t b = rnd() % FILE_BLOCKS;

		if (b >= HOLE_START && b < HOLE_END)
			continue;
		rw_pattern(model + (size_t)b * F2FS_BLKSIZE, b ^ 0x5a5a5a);
		ok = write_model(im, ino, b, 1);
	}
	CHECK(ok && f2fs_sync_fs(im->sb, false) == 0, "overwrite ranges and single blocks");
	return ok ? ino : 0;
}

static bool read_matches(struct f2fs_sb *sb, uint32_t ino)
{
	size_t len = (size_t)FILE_BLOCKS * F2FS_BLKSIZE;
	uint8_t *back = malloc(len);
	bool same;

	if (!back)
		return false;
	same = f2fs_read(sb, ino, back, len, 0) == (ssize_t)len && !memcmp(back, model, len);
	free(back);
	return same;
}

/* The runs of inode ino's read extent tree, copied out. */
static struct f2fs_extent *copy_runs(struct f2fs_sb *sb, uint32_t ino, uint32_t *nr)
{
	struct f2fs_inode *inode;
	struct f2fs_extent *runs = NULL;

	*nr = 0;
	if (f2fs_iget(sb, ino, &inode))
		return NULL;
	pthread_mutex_lock(&inode->et.lock);
	runs = malloc((inode->et.nr + 1) * sizeof(*runs));
	if (runs) {
		memcpy(runs, inode->et.ext, inode->et.nr * sizeof(*runs));
		*nr = inode->et.nr;
	}
	pthread_mutex_unlock(&inode->et.lock);
	f2fs_iput(sb, inode);
	return runs;
}

/* File block b's address by walking the node tree (no extent cache): NULL_ADDR for holes. */
static uint32_t walk_addr(struct f2fs_sb *sb, struct f2fs_inode *inode, uint32_t b)
{
	struct dnode_of_data *dn = f2fs_alloc_blocks((sizeof(*dn) + F2FS_BLKSIZE - 1) / F2FS_BLKSIZE);
	uint32_t a = 0xFFFFFFFFu;
	int err;

	if (!dn)
		return a;
	err = f2fs_get_dnode_of_data(sb, inode, b, LOOKUP_NODE, dn);
	if (err == -ENOENT)
		a = NULL_ADDR;
	else if (!err)
		a = get_le32(dn->addrs + 4 * dn->ofs_in_node);
	free(dn);
	return a;
}

static void precache_and_compare(struct rwimage *im, uint32_t ino)
{
	struct f2fs_io_stats st;
	struct f2fs_extent *runs;
	struct f2fs_inode *inode;
	uint32_t nr, bad = 0, uncovered = 0, r = 0;

	CHECK(mount_with(im, true) == 0, "cold mount, read-ahead on");
	CHECK(f2fs_precache_extents(im->sb, ino) == 0, "precache");
	f2fs_get_io_stats(im->sb, &st);
	CHECK(st.precache_nodes >= 10, "precache walked the direct nodes (%llu)",
	      (unsigned long long)st.precache_nodes);
	CHECK(st.node_ra_blocks >= 8 && st.node_ra_requests * 2 <= st.node_ra_blocks,
	      "node read-ahead: %llu blocks in %llu requests",
	      (unsigned long long)st.node_ra_blocks, (unsigned long long)st.node_ra_requests);
	CHECK(st.node_ra_rejected == 0, "no block read ahead was refused (%llu)",
	      (unsigned long long)st.node_ra_rejected);
	runs = copy_runs(im->sb, ino, &nr);
	CHECK(runs && nr > 16, "fragmented: %u runs", nr);
	CHECK(read_matches(im->sb, ino), "read through the precached runs");
	f2fs_get_io_stats(im->sb, &st);
	/* holes are not runs: the 2048-block hole spans three direct nodes' ranges */
	CHECK(st.extent_misses <= 3, "every read of data mapped from the cache (%llu misses)",
	      (unsigned long long)st.extent_misses);

	CHECK(remount_with(im, false) == 0, "cold mount, read-ahead off");
	if (!runs || f2fs_iget(im->sb, ino, &inode))
		goto out;
	pthread_rwlock_rdlock(&inode->lock);
	for (uint32_t b = 0; b < FILE_BLOCKS; b++) {
		uint32_t a = walk_addr(im->sb, inode, b);

		while (r < nr && runs[r].fofs + runs[r].len <= b)
			r++;
		if (r < nr && runs[r].fofs <= b) {
			if (a != runs[r].blk + (b - runs[r].fofs))
				bad++;
		} else if (a != NULL_ADDR) {
			uncovered++;
		}
	}
	pthread_rwlock_unlock(&inode->lock);
	f2fs_iput(im->sb, inode);
	CHECK(bad == 0, "every cached block is where the tree says (%u differ)", bad);
	CHECK(uncovered == 0, "every mapped block is cached (%u missing)", uncovered);
	CHECK(read_matches(im->sb, ino), "read-ahead off: the same bytes");
	f2fs_get_io_stats(im->sb, &st);
	CHECK(st.node_ra_blocks == 0, "node_ra=0 reads nothing ahead");
out:
	free(runs);
}

/*
 * A cold sequential read without a precache: with read-ahead, the read
 * leaving one direct node for the next reads the following ones ahead
 * (one batch per indirect node), so it makes fewer device requests than
 * without, for the same bytes.
 */
static void sequential_read_ahead(struct rwimage *im, uint32_t ino)
{
	struct f2fs_io_stats off, on;

	CHECK(remount_with(im, false) == 0, "seq: cold mount, read-ahead off");
	CHECK(read_matches(im->sb, ino), "seq: read, read-ahead off");
	f2fs_get_io_stats(im->sb, &off);
	CHECK(remount_with(im, true) == 0, "seq: cold mount, read-ahead on");
	CHECK(read_matches(im->sb, ino), "seq: read, read-ahead on");
	f2fs_get_io_stats(im->sb, &on);
	CHECK(off.node_ra_blocks == 0 && on.node_ra_blocks >= 8,
	      "seq: the read read nodes ahead (%llu blocks)", (unsigned long long)on.node_ra_blocks);
	/* the 13 direct nodes past the first below the indirect node came in a few requests */
	CHECK(on.reads + 8 <= off.reads, "seq: %llu device reads with read-ahead, %llu without",
	      (unsigned long long)on.reads, (unsigned long long)off.reads);
	CHECK(on.node_ra_rejected == 0, "seq: nothing read ahead was refused");
}

/* Where node nid lives, through a mount. */
static uint32_t node_addr(struct f2fs_sb *sb, uint32_t nid)
{
	struct f2fs_node_info ni;

	return f2fs_get_node_info(sb, nid, &ni) ? 0 : ni.blkaddr;
}

/*
 * Damage the image (unmounted, in the buffer) with damage(), mount it with
 * read-ahead, and check that read-ahead refuses, the precache and the
 * reads of the direct node at ind_slot fail with EUCLEAN, and the blocks
 * before it still read right.
 */
static void hostile(struct rwimage *im, uint32_t ino, const char *what,
		    void (*damage)(struct rwimage *im, uint32_t ind_addr, uint32_t child_addr))
{
	struct rwimage c;
	struct f2fs_inode *inode;
	struct f2fs_io_stats st;
	uint32_t ind_nid, ind_addr, child_addr, first;
	uint8_t *blk = f2fs_alloc_blocks(1), *buf = f2fs_alloc_blocks(16);
	int err;

	if (!blk || !buf || !rw_copy(im, &c))
		goto out;
	if (f2fs_iget(c.sb, ino, &inode))
		goto out;
	ind_nid = f2fs_i_nid(inode, 2);		/* the first indirect node */
	f2fs_iput(c.sb, inode);
	ind_addr = node_addr(c.sb, ind_nid);
	CHECK(ind_nid && ind_addr, "%s: the file has an indirect node", what);
	if (!ind_addr || f2fs_dev_read(c.sb->dev, ind_addr, blk, 1))
		goto out;
	child_addr = node_addr(c.sb, get_le32(blk + 4 * SLOT));
	CHECK(child_addr, "%s: its child in slot %d", what, SLOT);
	f2fs_umount(c.sb);
	c.sb = NULL;
	damage(&c, ind_addr, child_addr);
	rw_nr_errors = 0;
	if (mount_with(&c, true))
		goto out;
	err = f2fs_precache_extents(c.sb, ino);
	CHECK(err == -EUCLEAN, "%s: precache fails with EUCLEAN (%d)", what, err);
	f2fs_drop_caches(c.sb);
	/* the direct node in SLOT below the indirect one (node offset 3) maps from here */
	first = 923 + 2 * 1018 + SLOT * 1018;
	if (f2fs_iget(c.sb, ino, &inode) == 0) {
		first = (uint32_t)f2fs_start_bidx_of_node(inode, 3 + 1 + SLOT);
		f2fs_iput(c.sb, inode);
	}
	err = (int)f2fs_read(c.sb, ino, buf, 16 * F2FS_BLKSIZE, (uint64_t)first * F2FS_BLKSIZE);
	CHECK(err == -EUCLEAN, "%s: reading its blocks fails with EUCLEAN (%d)", what, err);
	f2fs_get_io_stats(c.sb, &st);
	CHECK(st.node_ra_blocks > 0, "%s: the neighbours were read ahead", what);
	err = (int)f2fs_read(c.sb, ino, buf, 16 * F2FS_BLKSIZE, (uint64_t)(first - 512) *
			     F2FS_BLKSIZE);
	CHECK(err == 16 * F2FS_BLKSIZE &&
	      !memcmp(buf, model + (size_t)(first - 512) * F2FS_BLKSIZE, 16 * F2FS_BLKSIZE),
	      "%s: the direct node before it reads right", what);
	CHECK(rw_nr_errors > 0, "%s: reported", what);
out:
	rw_free(&c);
	free(blk);
	free(buf);
}

static void bad_footer(struct rwimage *im, uint32_t ind_addr, uint32_t child_addr)
{
	uint8_t *b = im->buf + (size_t)child_addr * F2FS_BLKSIZE;

	put_le32(b + NF_NID, get_le32(b + NF_NID) + 1);
}

static void sibling_pointer(struct rwimage *im, uint32_t ind_addr, uint32_t child_addr)
{
	uint8_t *b = im->buf + (size_t)ind_addr * F2FS_BLKSIZE;

	put_le32(b + 4 * SLOT, get_le32(b + 4 * (SLOT + 1)));	/* SLOT names the next one's node */
}

static void nid_out_of_range(struct rwimage *im, uint32_t ind_addr, uint32_t child_addr)
{
	uint8_t *b = im->buf + (size_t)ind_addr * F2FS_BLKSIZE;

	put_le32(b + 4 * SLOT, 0x7FFFFFF0u);
}

/*
 * A sparse file whose written ranges straddle every level of the tree:
 * the inode's slots into the first direct nodes, the last direct node of
 * the first indirect node into the second, and that into the double
 * indirect node, with a lone block two indirect nodes into it.  The
 * precache must cache exactly the written blocks, where the tree maps
 * them, as the runs a block-by-block merge of the tree makes (runs go on
 * across node boundaries), with read-ahead on and off.
 */
static void sparse_levels(void)
{
	struct rwimage im;
	struct f2fs_inode *inode;
	uint32_t ino, r0[4], n0[4] = { 3100, 2100, 2100, 1 }, total = 0;
	uint8_t *data = NULL;
	bool ok;

	if (!rw_image(&im, NULL, 256))
		return;
	ino = rw_create(&im, "sparse");
	if (!ino || f2fs_iget(im.sb, ino, &inode))
		goto out;
	r0[0] = 900;
	r0[1] = (uint32_t)f2fs_start_bidx_of_node(inode, 4 + NIDS_PER_BLOCK + 1) - 1000;
	r0[2] = (uint32_t)f2fs_start_bidx_of_node(inode, 5 + 2 * NIDS_PER_BLOCK + 2) - 1000;
	r0[3] = (uint32_t)f2fs_start_bidx_of_node(inode, 5 + 2 * NIDS_PER_BLOCK + 2 +
						  2 * (NIDS_PER_BLOCK + 1)) + 5;
	f2fs_iput(im.sb, inode);
	data = malloc((size_t)3100 * F2FS_BLKSIZE);
	ok = data != NULL;
	for (int k = 0; ok && k < 4; k++) {
		for (uint32_t i = 0; i < n0[k]; i++)
			rw_pattern(data + (size_t)i * F2FS_BLKSIZE, r0[k] + i);
		ok = f2fs_write(im.sb, ino, data, (size_t)n0[k] * F2FS_BLKSIZE,
				(uint64_t)r0[k] * F2FS_BLKSIZE) == (ssize_t)n0[k] * F2FS_BLKSIZE;
		total += n0[k];
	}
	CHECK(ok && f2fs_sync_fs(im.sb, false) == 0, "sparse: write ranges at every level");
	for (int ra = 1; ok && ra >= 0; ra--) {
		struct f2fs_extent *runs, want = { 0 };
		uint32_t nr, nwant = 0, covered = 0, bad = 0, r = 0;

		CHECK(remount_with(&im, ra) == 0, "sparse: cold mount, read-ahead %d", ra);
		CHECK(f2fs_precache_extents(im.sb, ino) == 0, "sparse: precache, read-ahead %d", ra);
		runs = copy_runs(im.sb, ino, &nr);
		if (!runs || f2fs_iget(im.sb, ino, &inode))
			break;
		pthread_rwlock_rdlock(&inode->lock);
		for (int k = 0; k < 4; k++) {
			/* one block either side of each range too: holes */
			for (uint32_t b = r0[k] - 1; b <= r0[k] + n0[k]; b++) {
				uint32_t a = walk_addr(im.sb, inode, b);

				if (a != NULL_ADDR && want.len && want.fofs + want.len == b &&
				    want.blk + want.len == a) {
					want.len++;
				} else if (a != NULL_ADDR) {
					nwant += want.len != 0;
					want = (struct f2fs_extent){ b, a, 1 };
				}
				while (r < nr && runs[r].fofs + runs[r].len <= b)
					r++;
				if (r < nr && runs[r].fofs <= b) {
					covered++;
					bad += a != runs[r].blk + (b - runs[r].fofs);
				} else {
					bad += a != NULL_ADDR;
				}
			}
		}
		nwant += want.len != 0;
		pthread_rwlock_unlock(&inode->lock);
		f2fs_iput(im.sb, inode);
		CHECK(bad == 0 && covered == total, "sparse, read-ahead %d: %u blocks cached of %u, "
		      "%u differ", ra, covered, total, bad);
		CHECK(nr == nwant, "sparse, read-ahead %d: %u runs, the tree's merge makes %u", ra, nr,
		      nwant);
		free(runs);
	}
out:
	free(data);
	rw_done(&im);
}

int main(void)
{
	struct rwimage im;
	uint32_t ino;

	model = malloc((size_t)FILE_BLOCKS * F2FS_BLKSIZE);
	if (!model || !rw_image(&im, NULL, 256))
		return check_done("test_precache");
	ino = make_file(&im);
	if (ino) {
		CHECK(f2fs_umount(im.sb) == 0, "unmount");
		im.sb = NULL;
		precache_and_compare(&im, ino);
		sequential_read_ahead(&im, ino);
		hostile(&im, ino, "a direct node's footer", bad_footer);
		hostile(&im, ino, "a pointer to a sibling", sibling_pointer);
		hostile(&im, ino, "a nid out of range", nid_out_of_range);
	}
	rw_done(&im);
	sparse_levels();
	free(model);
	return check_done("test_precache");
}
