// SPDX-License-Identifier: GPL-2.0
/*
 * The limit of an extent precache: read exactly the node blocks of one
 * file (its direct and indirect nodes, not the inode) straight from the
 * image, sorted by address, neighbours coalesced into one preadv each,
 * O_DIRECT, one request after the other.  No NAT lookups, no footer
 * checks, no FUSE: what the device alone costs.
 *
 *   nodelimit IMAGE INO [REPS]
 *
 * prints "nodes N requests R ms T1 T2 ..." (one time per repetition).
 * The block list comes from the core's own walk of the read-only mounted
 * image, before the clock starts.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "f2fs.h"

#define MAX_RUN 256

static uint32_t *addrs;
static uint32_t nr, cap;

static int add(uint32_t a)
{
	if (nr == cap) {
		uint32_t *n = realloc(addrs, (cap = cap ? 2 * cap : 1024) * sizeof(*n));

		if (!n)
			return -ENOMEM;
		addrs = n;
	}
	addrs[nr++] = a;
	return 0;
}

/* Node nid (node offset ofs) and, for an indirect node of this height, its subtree. */
static int walk(struct f2fs_sb *sb, uint32_t ino, uint32_t nid, uint32_t ofs, int height)
{
	uint8_t *blk = f2fs_alloc_blocks(1);
	struct f2fs_node_info ni;
	int err;

	if (!blk)
		return -ENOMEM;
	err = f2fs_get_node_info(sb, nid, &ni);
	if (!err)
		err = add(ni.blkaddr);
	if (!err && height > 0)
		err = f2fs_get_node(sb, nid, ino, ofs, blk);
	for (uint32_t i = 0; !err && height > 0 && i < NIDS_PER_BLOCK; i++) {
		uint32_t child = get_le32(blk + 4 * i);
		uint32_t step = height == 2 ? NIDS_PER_BLOCK + 1 : 1;

		if (child)
			err = walk(sb, ino, child, ofs + 1 + i * step, height - 1);
	}
	free(blk);
	return err;
}

static int cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char *argv[])
{
	static const int heights[5] = { 0, 0, 1, 1, 2 };
	const uint32_t nofs[5] = { 1, 2, 3, 4 + NIDS_PER_BLOCK, 5 + 2 * NIDS_PER_BLOCK };
	struct f2fs_mount_opts o = { .readonly = true, .log_level = F2FS_LOG_ERR };
	int reps = argc > 3 ? atoi(argv[3]) : 5, fd, err = 0;
	struct f2fs_inode *inode;
	struct f2fs_sb *sb;
	uint32_t ino, runs = 0;
	uint8_t *buf;

	if (argc < 3) {
		fprintf(stderr, "usage: nodelimit IMAGE INO [REPS]\n");
		return 2;
	}
	ino = (uint32_t)strtoul(argv[2], NULL, 0);
	err = f2fs_mount(argv[1], &o, &sb);
	if (err || (err = f2fs_iget(sb, ino, &inode))) {
		fprintf(stderr, "nodelimit: %s: %s\n", argv[1], strerror(-err));
		return 1;
	}
	for (int k = 0; !err && k < 5; k++)
		if (f2fs_i_nid(inode, k))
			err = walk(sb, ino, f2fs_i_nid(inode, k), nofs[k], heights[k]);
	f2fs_iput(sb, inode);
	f2fs_umount(sb);
	if (err) {
		fprintf(stderr, "nodelimit: walking inode %u: %s\n", ino, strerror(-err));
		return 1;
	}
	qsort(addrs, nr, sizeof(*addrs), cmp);
	fd = open(argv[1], O_RDONLY | O_DIRECT);
	buf = f2fs_alloc_blocks(MAX_RUN);
	if (fd < 0 || !buf) {
		perror("nodelimit: open");
		return 1;
	}
	for (uint32_t i = 0; i < nr; runs++) {
		uint32_t n = 1;

		while (i + n < nr && n < MAX_RUN && addrs[i + n] == addrs[i] + n)
			n++;
		i += n;
	}
	printf("nodes %u requests %u ms", nr, runs);
	for (int r = 0; r < reps; r++) {
		struct timespec t0, t1;

		clock_gettime(CLOCK_MONOTONIC, &t0);
		for (uint32_t i = 0; i < nr;) {
			uint32_t n = 1;

			while (i + n < nr && n < MAX_RUN && addrs[i + n] == addrs[i] + n)
				n++;
			if (pread(fd, buf, (size_t)n * F2FS_BLKSIZE, (off_t)addrs[i] * F2FS_BLKSIZE) !=
			    (ssize_t)n * F2FS_BLKSIZE) {
				perror("nodelimit: pread");
				return 1;
			}
			i += n;
		}
		clock_gettime(CLOCK_MONOTONIC, &t1);
		printf(" %.3f", (double)(t1.tv_sec - t0.tv_sec) * 1e3 +
		       (double)(t1.tv_nsec - t0.tv_nsec) / 1e6);
	}
	printf("\n");
	close(fd);
	free(buf);
	free(addrs);
	return 0;
}
