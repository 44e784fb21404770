// SPDX-License-Identifier: GPL-2.0
/*
 * fsync group commit and roll-forward on a writable memory mount.  Four
 * threads write a block in the inode and one in a direct node of their
 * own files (two in the last checkpoint, two created since) and fsync
 * them at once.  The warm node chain must hold each inode's direct node
 * before its inode block, only the inode block with the fsync mark, and
 * the dentry mark on the new files' inode blocks.  A copy of the device
 * taken then (a crash) must come back with every file; a copy whose last
 * written node is lost (a group write torn by a power cut) must come back
 * without that inode's changes, its direct node not replayed, and the
 * others whole.  fsck.f2fs finds nothing to fix in either.
 */
#include <pthread.h>

#include "rwimage.h"

#define NFILES 4

struct writer {
	struct f2fs_sb *sb;
	uint32_t ino;
	int err;
};

static uint32_t warm_node_next(struct f2fs_sb *sb)
{
	const struct f2fs_curseg *cs = &sb->curseg[CURSEG_WARM_NODE];

	return f2fs_seg_start_blkaddr(sb, cs->segno) + cs->blkoff;
}

static uint64_t lblk_of(const struct f2fs_sb *sb, int which)
{
	(void)sb;
	return which ? 1200 : 3;	/* past the inode's slots: a direct node */
}

static void *fsync_thread(void *arg)
{
	struct writer *w = arg;

	w->err = f2fs_fsync(w->sb, w->ino, false);
	return NULL;
}

static bool file_has(struct f2fs_sb *sb, uint32_t ino, int i)
{
	uint8_t *got = f2fs_alloc_blocks(1), *want = f2fs_alloc_blocks(1);
	bool ok = got && want;

	for (int j = 0; ok && j < 2; j++) {
		uint64_t lblk = lblk_of(sb, j);

		rw_pattern(want, (uint32_t)(i * 10000 + lblk));
		ok = f2fs_read(sb, ino, got, F2FS_BLKSIZE, lblk * F2FS_BLKSIZE) == F2FS_BLKSIZE &&
		     memcmp(got, want, F2FS_BLKSIZE) == 0;
	}
	free(got);
	free(want);
	return ok;
}

int main(void)
{
	struct rwimage im, copy, torn;
	struct writer w[NFILES];
	pthread_t th[NFILES];
	uint32_t ino[NFILES], start, end, last_ino = 0;
	uint8_t *blk = f2fs_alloc_blocks(1);
	uint32_t seen_inode[NFILES] = { 0 }, seen_dnode[NFILES] = { 0 };
	char name[16];

	if (!blk || !rw_image(&im, NULL, 64))
		return check_done("test_recovery");
	for (int i = 0; i < NFILES; i++) {
		if (i == NFILES / 2)
			CHECK(rw_remount(&im) == 0, "remount: the first files are checkpointed");
		snprintf(name, sizeof(name), "f%d", i);
		ino[i] = rw_create(&im, name);
	}
	start = warm_node_next(im.sb);
	for (int i = 0; i < NFILES; i++) {
		for (int j = 0; j < 2; j++) {
			uint64_t lblk = lblk_of(im.sb, j);

			rw_pattern(blk, (uint32_t)(i * 10000 + lblk));
			CHECK(f2fs_write(im.sb, ino[i], blk, F2FS_BLKSIZE, lblk * F2FS_BLKSIZE) ==
			      F2FS_BLKSIZE, "write f%d block %llu", i, (unsigned long long)lblk);
		}
	}
	for (int i = 0; i < NFILES; i++) {
		w[i] = (struct writer){ .sb = im.sb, .ino = ino[i] };
		CHECK(pthread_create(&th[i], NULL, fsync_thread, &w[i]) == 0, "thread");
	}
	for (int i = 0; i < NFILES; i++) {
		pthread_join(th[i], NULL);
		CHECK(w[i].err == 0, "fsync f%d: %d", i, w[i].err);
	}
	end = warm_node_next(im.sb);
	CHECK_EQ_U64(end - start, 2 * NFILES, "node blocks the fsyncs wrote");

	/* the chain: per inode its direct node, then its marked inode block */
	for (uint32_t a = start; a < end && a - start < 64; a++) {
		const uint8_t *n = im.buf + (size_t)a * F2FS_BLKSIZE;
		uint32_t nino = f2fs_node_ino(n), flag = f2fs_node_flag(n);
		bool is_inode = f2fs_node_nid(n) == nino;
		int i = -1;

		for (int k = 0; k < NFILES; k++)
			if (ino[k] == nino)
				i = k;
		CHECK(i >= 0, "node at 0x%x belongs to a file fsynced (inode %u)", a, nino);
		if (i < 0)
			continue;
		CHECK(a + 1 == end || f2fs_node_next_blkaddr(n) == a + 1,
		      "node at 0x%x chains to the next", a);
		if (is_inode) {
			CHECK(seen_dnode[i] == a - 1, "f%d: its direct node just before its inode", i);
			CHECK(flag & (1u << FSYNC_BIT_SHIFT), "f%d: the inode block has the fsync mark", i);
			CHECK(!(flag & (1u << DENT_BIT_SHIFT)) == (i < NFILES / 2),
			      "f%d: dentry mark only on the files made since the checkpoint", i);
			seen_inode[i] = a;
			last_ino = nino;
		} else {
			CHECK(!(flag & (1u << FSYNC_BIT_SHIFT)), "f%d: its direct node is not marked", i);
			seen_dnode[i] = a;
		}
	}
	for (int i = 0; i < NFILES; i++)
		CHECK(seen_inode[i] && seen_dnode[i], "f%d: both nodes in the chain", i);

	/* a crash now: every file comes back */
	if (rw_copy(&im, &copy)) {
		for (int i = 0; i < NFILES; i++)
			CHECK(file_has(copy.sb, ino[i], i), "after recovery f%d holds its blocks", i);
		rw_done(&copy);
	}

	/* the last node written never reached the device: its inode is not replayed */
	memset(&torn, 0, sizeof(torn));
	torn.len = im.len;
	torn.buf = malloc(im.len);
	if (torn.buf && last_ino) {
		struct f2fs_stat st;

		memcpy(torn.buf, im.buf, im.len);
		memset(torn.buf + (size_t)(end - 1) * F2FS_BLKSIZE, 0, F2FS_BLKSIZE);
		CHECK(rw_mount(&torn) == 0, "mount of the torn copy");
		for (int i = 0; torn.sb && i < NFILES; i++) {
			if (ino[i] != last_ino) {
				CHECK(file_has(torn.sb, ino[i], i), "torn: f%d holds its blocks", i);
				continue;
			}
			snprintf(name, sizeof(name), "f%d", i);
			if (i < NFILES / 2) {
				CHECK(f2fs_getattr(torn.sb, ino[i], &st) == 0 && st.size == 0 &&
				      st.blocks == 0, "torn: f%d as checkpointed, empty", i);
			} else {
				CHECK(f2fs_lookup(torn.sb, f2fs_root_ino(torn.sb), name, strlen(name),
						  &st) == -ENOENT, "torn: f%d, never checkpointed, is gone", i);
			}
		}
		rw_done(&torn);
	} else {
		free(torn.buf);
	}
	CHECK(rw_nr_errors == 0, "no error reported: %s", rw_last_error);
	rw_done(&im);
	free(blk);
	return check_done("test_recovery");
}
