// SPDX-License-Identifier: GPL-2.0
/*
 * Node address table: nid -> (ino, block address, version), looked up in
 * the NAT journal of the hot-data summary first, then in the valid copy
 * of the NAT block chosen by the checkpoint's version bitmap.
 */
#include <stdlib.h>
#include <string.h>

#include "f2fs.h"

/* current_nat_addr */
static uint32_t nat_block_addr(const struct f2fs_sb *sb, uint32_t nid)
{
	uint32_t block_off = nid / NAT_ENTRY_PER_BLOCK;
	uint32_t seg_off = block_off >> sb->log_blocks_per_seg;
	uint32_t addr = sb->nat_blkaddr + (seg_off << sb->log_blocks_per_seg << 1) +
			(block_off & (sb->blocks_per_seg - 1));

	if (f2fs_test_bit(block_off, sb->nat_bitmap))
		addr += sb->blocks_per_seg;
	return addr;
}

static void decode(struct f2fs_node_info *ni, uint32_t nid, const uint8_t *e)
{
	ni->nid = nid;
	ni->version = e[NAT_E_VERSION];
	ni->ino = get_le32(e + NAT_E_INO);
	ni->blkaddr = get_le32(e + NAT_E_BLOCK_ADDR);
}

static bool lookup_journal(struct f2fs_sb *sb, uint32_t nid, struct f2fs_node_info *ni)
{
	const uint8_t *j = sb->curseg[CURSEG_HOT_DATA].sum + SUM_JOURNAL_OFFSET;
	uint16_t n = get_le16(j);	/* bounded at mount */

	for (uint16_t i = 0; i < n; i++) {
		const uint8_t *e = j + 2 + i * NAT_JOURNAL_ENTRY_SIZE;

		if (get_le32(e) == nid) {
			decode(ni, nid, e + 4);
			return true;
		}
	}
	return false;
}

/* Read the on-disk (journal or block) entry without the cache. */
static int nat_lookup_disk(struct f2fs_sb *sb, uint32_t nid, struct f2fs_node_info *ni)
{
	uint8_t blk[F2FS_BLKSIZE];
	size_t off = (nid % NAT_ENTRY_PER_BLOCK) * NAT_ENTRY_SIZE;
	uint32_t addr;
	int err;

	/* a stale hint (i_pino) may name any number: the bitmap ends at max_nid */
	if (nid < sb->root_ino || nid >= sb->max_nid)
		return -EFSCORRUPTED;
	if (lookup_journal(sb, nid, ni))
		return 0;
	addr = nat_block_addr(sb, nid);
	/* a hit copies the one entry, not the block: every inode load asks */
	if (f2fs_cache_read(sb->cache, addr, off, NAT_ENTRY_SIZE, blk + off)) {
		decode(ni, nid, blk + off);
		return 0;
	}
	err = f2fs_dev_read(sb->dev, addr, blk, 1);
	if (err)
		return err;
	f2fs_cache_insert(sb->cache, addr, blk);
	decode(ni, nid, blk + off);
	return 0;
}

/* Read-ahead settings, shared by NAT, node and dentry block read-ahead. */
uint32_t f2fs_node_ra_blocks(const struct f2fs_sb *sb)
{
	if (sb->opts.no_node_ra)
		return 0;
	return sb->opts.node_ra ? sb->opts.node_ra : F2FS_DEFAULT_NODE_RA;
}

unsigned int f2fs_node_ra_depth(const struct f2fs_sb *sb)
{
	return sb->opts.node_ra_depth ? sb->opts.node_ra_depth : F2FS_DEFAULT_NODE_RA_DEPTH;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static bool nat_cache_lookup(struct f2fs_sb *sb, uint32_t nid, struct f2fs_node_info *ni);

void f2fs_ra_nat_blocks(struct f2fs_sb *sb, const uint32_t *nids, uint32_t n, unsigned int depth)
{
	struct f2fs_ra_result res = { 0 };
	struct f2fs_node_info ni;
	uint32_t *addrs = malloc(n * sizeof(*addrs)), m = 0;

	if (!addrs)
		return;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t nid = nids[i];

		if (nid < sb->root_ino || nid >= sb->max_nid)
			continue;	/* the lookup itself reports it */
		if ((sb->nm && nat_cache_lookup(sb, nid, &ni)) || lookup_journal(sb, nid, &ni))
			continue;
		addrs[m++] = nat_block_addr(sb, nid);
	}
	qsort(addrs, m, sizeof(*addrs), cmp_u32);
	f2fs_cache_readahead(sb->cache, sb->dev, addrs, m, depth, f2fs_ra_keep_all, NULL, &res);
	f2fs_stat_add(sb, node_ra_requests, res.requests);
	free(addrs);
}


int f2fs_get_node_info(struct f2fs_sb *sb, uint32_t nid, struct f2fs_node_info *ni)
{
	if (nid < sb->root_ino || nid >= sb->max_nid)
		return f2fs_corrupted(sb, "NAT: nid %u out of range [%u, %u)", nid, sb->root_ino,
				      sb->max_nid);
	if (sb->nm && nat_cache_lookup(sb, nid, ni))
		return 0;
	return nat_lookup_disk(sb, nid, ni);
}

/* ======================= the writable NAT ======================= */

static struct f2fs_nat_cache_entry *nat_cache_find(struct f2fs_nm_info *nm, uint32_t nid)
{
	struct f2fs_nat_cache_entry *e = nm->hash[(nid * 2654435761u) & (nm->hash_size - 1)];

	while (e && e->nid != nid)
		e = e->hnext;
	return e;
}

static int nat_cache_grow(struct f2fs_nm_info *nm)
{
	uint32_t nsize = nm->hash_size * 2;
	struct f2fs_nat_cache_entry **nh = calloc(nsize, sizeof(*nh));

	if (!nh)
		return -ENOMEM;
	for (uint32_t i = 0; i < nm->hash_size; i++) {
		struct f2fs_nat_cache_entry *e = nm->hash[i];

		while (e) {
			struct f2fs_nat_cache_entry *n = e->hnext;
			uint32_t b = (e->nid * 2654435761u) & (nsize - 1);

			e->hnext = nh[b];
			nh[b] = e;
			e = n;
		}
	}
	free(nm->hash);
	nm->hash = nh;
	nm->hash_size = nsize;
	return 0;
}

static bool nat_cache_lookup(struct f2fs_sb *sb, uint32_t nid, struct f2fs_node_info *ni)
{
	struct f2fs_nat_cache_entry *e;
	bool hit = false;

	pthread_mutex_lock(&sb->nm->lock);
	e = nat_cache_find(sb->nm, nid);
	if (e) {
		ni->nid = nid;
		ni->ino = e->ino;
		ni->blkaddr = e->blkaddr;
		ni->version = e->version;
		hit = true;
	}
	pthread_mutex_unlock(&sb->nm->lock);
	return hit;
}

static inline bool nid_free(const struct f2fs_nm_info *nm, uint32_t nid)
{
	return nm->free_nids[nid >> 3] & (1u << (nid & 7));
}

static inline void set_nid_free(struct f2fs_nm_info *nm, uint32_t nid, bool free_)
{
	if (free_ && !nid_free(nm, nid)) {
		nm->free_nids[nid >> 3] |= (uint8_t)(1u << (nid & 7));
		nm->nr_free_nids++;
	} else if (!free_ && nid_free(nm, nid)) {
		nm->free_nids[nid >> 3] &= (uint8_t)~(1u << (nid & 7));
		nm->nr_free_nids--;
	}
}

/* Mark nids [lo, hi) free: whole bytes at a time between the edges. */
static void set_nid_range_free(struct f2fs_nm_info *nm, uint32_t lo, uint32_t hi)
{
	for (; lo < hi && (lo & 7); lo++)
		set_nid_free(nm, lo, true);
	for (; hi - lo >= 8 && lo < hi; lo += 8) {
		nm->nr_free_nids += 8 - (uint32_t)__builtin_popcount(nm->free_nids[lo >> 3]);
		nm->free_nids[lo >> 3] = 0xff;
	}
	for (; lo < hi; lo++)
		set_nid_free(nm, lo, true);
}

/*
 * The free nid map is built as the kernel's build_free_nids builds its
 * list: a batch of NAT blocks at a time, when allocation runs out of known
 * free nids (or recovery claims a nid), not at mount.  A 512 GiB device has
 * 25,600 NAT blocks (100 MiB) that a writable mount would otherwise read
 * before its first write.  Only scanned blocks have bits; nr_free_nids
 * counts those.
 */
#define NAT_SCAN_BATCH 64	/* NAT blocks scanned at once (256 KiB) */

/*
 * NAT blocks first..first+n (block numbers of the table) into buf: the
 * valid copy of each, neighbours in one request, several in flight.
 */
static int read_nat_chunk(struct f2fs_sb *sb, uint32_t first, uint32_t n, uint8_t *buf)
{
	struct f2fs_bio bios[NAT_SCAN_BATCH];
	struct iovec iov[NAT_SCAN_BATCH];
	int errs[NAT_SCAN_BATCH];
	uint32_t nb = 0;

	if (!n || n > NAT_SCAN_BATCH)
		return -EINVAL;
	for (uint32_t k = 0; k < n;) {
		uint32_t addr = nat_block_addr(sb, (first + k) * NAT_ENTRY_PER_BLOCK), len = 1;

		while (k + len < n &&
		       nat_block_addr(sb, (first + k + len) * NAT_ENTRY_PER_BLOCK) == addr + len)
			len++;
		iov[nb] = (struct iovec){ buf + (size_t)k * F2FS_BLKSIZE, (size_t)len * F2FS_BLKSIZE };
		bios[nb] = (struct f2fs_bio){ .op = F2FS_BIO_READ, .blkaddr = addr, .nr_blocks = len,
					      .iov = &iov[nb], .iovcnt = 1 };
		nb++;
		k += len;
	}
	f2fs_submit_bios(sb->dev, bios, errs, nb, f2fs_node_ra_depth(sb));
	for (uint32_t r = 0; r < nb; r++)
		if (errs[r])
			return errs[r];
	return 0;
}

static inline bool nat_block_scanned(const struct f2fs_nm_info *nm, uint32_t b)
{
	return nm->scanned[b >> 3] & (1u << (b & 7));
}

/*
 * The free bits of NAT block b from its entries as read (blk), then the
 * journal's, then the NAT cache's, each overriding the last: a cached entry
 * is the nid's state since the mount (a dirty one is not free, a removed
 * node's nid included, until a checkpoint writes it).  Caller holds nm->lock.
 */
static void scan_nat_block(struct f2fs_sb *sb, uint32_t b, const uint8_t *blk)
{
	struct f2fs_nm_info *nm = sb->nm;
	const uint8_t *j = sb->curseg[CURSEG_HOT_DATA].sum + SUM_JOURNAL_OFFSET;
	uint32_t lo = F2FS_MAX(b * NAT_ENTRY_PER_BLOCK, sb->root_ino);
	uint32_t hi = F2FS_MIN((b + 1) * NAT_ENTRY_PER_BLOCK, sb->max_nid);

	nm->scanned[b >> 3] |= (uint8_t)(1u << (b & 7));
	nm->nr_unscanned--;
	if (lo >= hi)
		return;
	/* most of a NAT is never used and reads as zeros: its nids are free */
	if (blk[0] == 0 && !memcmp(blk, blk + 1, F2FS_BLKSIZE - 1)) {
		set_nid_range_free(nm, lo, hi);
	} else {
		for (uint32_t nid = lo; nid < hi; nid++) {
			const uint8_t *e = blk + (nid % NAT_ENTRY_PER_BLOCK) * NAT_ENTRY_SIZE;

			set_nid_free(nm, nid, get_le32(e + NAT_E_BLOCK_ADDR) == NULL_ADDR);
		}
	}
	for (uint16_t i = 0; i < get_le16(j); i++) {	/* bounded at mount */
		const uint8_t *e = j + 2 + i * NAT_JOURNAL_ENTRY_SIZE;
		uint32_t nid = get_le32(e);

		if (nid >= lo && nid < hi)
			set_nid_free(nm, nid, get_le32(e + 4 + NAT_E_BLOCK_ADDR) == NULL_ADDR);
	}
}

/*
 * The NAT cache's override (see scan_nat_block) for the nids of NAT blocks
 * [b, b + n): a lookup per nid, or one pass over the cache when it holds
 * fewer entries than the range has nids.  Caller holds nm->lock.
 */
static void scan_nat_cache(struct f2fs_sb *sb, uint32_t b, uint32_t n)
{
	struct f2fs_nm_info *nm = sb->nm;
	uint32_t lo = F2FS_MAX(b * NAT_ENTRY_PER_BLOCK, sb->root_ino);
	uint32_t hi = F2FS_MIN((b + n) * NAT_ENTRY_PER_BLOCK, sb->max_nid);

	if (!nm->nr_entries || lo >= hi)
		return;
	if (nm->nr_entries < hi - lo) {
		for (uint32_t i = 0; i < nm->hash_size; i++)
			for (const struct f2fs_nat_cache_entry *e = nm->hash[i]; e; e = e->hnext)
				if (e->nid >= lo && e->nid < hi)
					set_nid_free(nm, e->nid,
						     !e->dirty && e->blkaddr == NULL_ADDR);
		return;
	}
	for (uint32_t nid = lo; nid < hi; nid++) {
		const struct f2fs_nat_cache_entry *ce = nat_cache_find(nm, nid);

		if (ce)
			set_nid_free(nm, nid, !ce->dirty && ce->blkaddr == NULL_ADDR);
	}
}

/*
 * Scan the unscanned NAT blocks among the `count` (at most NAT_SCAN_BATCH)
 * that start at block first.
 */
static int scan_nat_batch(struct f2fs_sb *sb, uint32_t first, uint32_t count)
{
	struct f2fs_nm_info *nm = sb->nm;
	uint32_t end = F2FS_MIN(first + F2FS_MIN(count, NAT_SCAN_BATCH), nm->nat_blocks);
	int err = 0;

	for (uint32_t b = first; b < end && !err;) {
		uint32_t n = 0;

		if (nat_block_scanned(nm, b)) {
			b++;
			continue;
		}
		while (b + n < end && !nat_block_scanned(nm, b + n))
			n++;
		if (!nm->scan_buf)
			nm->scan_buf = f2fs_alloc_blocks(NAT_SCAN_BATCH);
		if (!nm->scan_buf)
			return -ENOMEM;
		err = read_nat_chunk(sb, b, n, nm->scan_buf);
		for (uint32_t k = 0; k < n && !err; k++)
			scan_nat_block(sb, b + k, nm->scan_buf + (size_t)k * F2FS_BLKSIZE);
		if (!err)
			scan_nat_cache(sb, b, n);
		b += n;
	}
	return err;
}

int f2fs_build_free_nids(struct f2fs_sb *sb, uint32_t nid)
{
	int err;

	if (nid >= sb->max_nid)
		return -EINVAL;
	pthread_mutex_lock(&sb->nm->lock);
	err = scan_nat_batch(sb, nid / NAT_ENTRY_PER_BLOCK, NAT_SCAN_BATCH);
	pthread_mutex_unlock(&sb->nm->lock);
	return err;
}

/* The writable NAT's state; the free nid map starts empty (see above). */
int f2fs_build_node_manager(struct f2fs_sb *sb)
{
	const uint8_t *j = sb->curseg[CURSEG_HOT_DATA].sum + SUM_JOURNAL_OFFSET;
	uint32_t nat_blocks = (sb->segment_count_nat / 2) << sb->log_blocks_per_seg;
	struct f2fs_nm_info *nm;
	uint32_t cp_next;

	if (sb->nm)
		return 0;
	for (uint16_t i = 0; i < get_le16(j); i++) {
		uint32_t nid = get_le32(j + 2 + i * NAT_JOURNAL_ENTRY_SIZE);

		if (nid < sb->root_ino || nid >= sb->max_nid)
			return f2fs_corrupted(sb, "NAT journal: nid %u out of range", nid);
	}
	nm = calloc(1, sizeof(*nm));
	if (!nm)
		return -ENOMEM;
	nm->hash_size = 1024;
	nm->hash = calloc(nm->hash_size, sizeof(*nm->hash));
	nm->free_nids = calloc(sb->max_nid / 8 + 1, 1);
	nm->nat_blocks = F2FS_MIN(nat_blocks, (sb->max_nid + NAT_ENTRY_PER_BLOCK - 1) /
						 NAT_ENTRY_PER_BLOCK);
	nm->scanned = calloc(nm->nat_blocks / 8 + 1, 1);
	if (!nm->hash || !nm->free_nids || !nm->scanned) {
		free(nm->hash);
		free(nm->free_nids);
		free(nm->scanned);
		free(nm);
		return -ENOMEM;
	}
	pthread_mutex_init(&nm->lock, NULL);
	nm->nr_unscanned = nm->nat_blocks;
	nm->valid_node_count = get_le32(sb->ckpt + CP_VALID_NODE_COUNT);
	nm->valid_inode_count = get_le32(sb->ckpt + CP_VALID_INODE_COUNT);
	nm->next_free_nid = sb->root_ino;
	/* scanning starts where the checkpoint says free nids begin, as the
	 * kernel's build_free_nids does, and wraps round to the nids below */
	cp_next = get_le32(sb->ckpt + CP_NEXT_FREE_NID);
	if (cp_next > sb->root_ino && cp_next < sb->max_nid) {
		nm->next_free_nid = cp_next;
		nm->next_scan = cp_next / NAT_ENTRY_PER_BLOCK;
	}
	sb->nm = nm;
	return 0;
}

void f2fs_destroy_node_manager(struct f2fs_sb *sb)
{
	struct f2fs_nm_info *nm = sb->nm;

	if (!nm)
		return;
	for (uint32_t i = 0; i < nm->hash_size; i++) {
		struct f2fs_nat_cache_entry *e = nm->hash[i];

		while (e) {
			struct f2fs_nat_cache_entry *n = e->hnext;

			free(e);
			e = n;
		}
	}
	pthread_mutex_destroy(&nm->lock);
	free(nm->hash);
	free(nm->free_nids);
	free(nm->scanned);
	free(nm->scan_buf);
	free(nm);
	sb->nm = NULL;
}

/* The first free nid in [from, max) of the map, or UINT32_MAX; empty words are skipped whole. */
static uint32_t next_free_bit(const struct f2fs_nm_info *nm, uint32_t from, uint32_t max)
{
	for (uint32_t nid = from; nid < max;) {
		uint64_t w;

		if (!(nid & 63) && nid + 64 <= max) {
			memcpy(&w, nm->free_nids + (nid >> 3), 8);
			if (!w) {
				nid += 64;
				continue;
			}
		}
		if (!(nid & 7) && !nm->free_nids[nid >> 3]) {
			nid += 8;
			continue;
		}
		if (nid_free(nm, nid))
			return nid;
		nid++;
	}
	return UINT32_MAX;
}

int f2fs_alloc_nid(struct f2fs_sb *sb, uint32_t *out)
{
	struct f2fs_nm_info *nm = sb->nm;
	uint32_t start, nid;
	int err = 0;

	pthread_mutex_lock(&nm->lock);
	/* no known free nid: scan on from where the last scan stopped */
	while (!nm->nr_free_nids && nm->nr_unscanned && !err) {
		uint32_t b = nm->next_scan < nm->nat_blocks ? nm->next_scan : 0;

		while (nat_block_scanned(nm, b))
			b = b + 1 < nm->nat_blocks ? b + 1 : 0;
		err = scan_nat_batch(sb, b, NAT_SCAN_BATCH);
		nm->next_scan = b + NAT_SCAN_BATCH;
	}
	if (err || !nm->nr_free_nids) {
		pthread_mutex_unlock(&nm->lock);
		return err ? err : -ENOSPC;
	}
	start = nm->next_free_nid < sb->max_nid ? nm->next_free_nid : sb->root_ino;
	nid = next_free_bit(nm, start, sb->max_nid);
	if (nid == UINT32_MAX)
		nid = next_free_bit(nm, sb->root_ino, start);
	set_nid_free(nm, nid, false);
	nm->next_free_nid = nid + 1;
	pthread_mutex_unlock(&nm->lock);
	*out = nid;
	return 0;
}

void f2fs_alloc_nid_failed(struct f2fs_sb *sb, uint32_t nid)
{
	pthread_mutex_lock(&sb->nm->lock);
	set_nid_free(sb->nm, nid, true);
	pthread_mutex_unlock(&sb->nm->lock);
}

void f2fs_set_node_addr(struct f2fs_sb *sb, uint32_t nid, uint32_t ino, uint32_t blkaddr)
{
	struct f2fs_nm_info *nm = sb->nm;
	struct f2fs_nat_cache_entry *e;
	struct f2fs_node_info ni = { .nid = nid, .ino = ino, .blkaddr = NULL_ADDR };

	pthread_mutex_lock(&nm->lock);
	e = nat_cache_find(nm, nid);
	if (!e) {
		/* first change since the checkpoint: start from the on-disk version */
		if (nat_lookup_disk(sb, nid, &ni))
			ni.version = 0;
		if (nm->nr_entries >= nm->hash_size * 2)
			nat_cache_grow(nm);
		e = calloc(1, sizeof(*e));
		if (!e) {
			pthread_mutex_unlock(&nm->lock);
			f2fs_err(sb, "out of memory recording NAT entry %u", nid);
			atomic_store(&sb->need_fsck, true);
			return;
		}
		e->nid = nid;
		e->version = ni.version;
		e->blkaddr = ni.blkaddr;
		e->hnext = nm->hash[(nid * 2654435761u) & (nm->hash_size - 1)];
		nm->hash[(nid * 2654435761u) & (nm->hash_size - 1)] = e;
		nm->nr_entries++;
	}
	/* a removed node bumps the version so stale summaries don't match (set_node_addr) */
	if (blkaddr == NULL_ADDR && e->blkaddr != NEW_ADDR && e->blkaddr != NULL_ADDR)
		e->version++;
	e->ino = ino;
	e->blkaddr = blkaddr;
	if (!e->dirty) {
		e->dirty = true;
		nm->nr_dirty++;
	}
	pthread_mutex_unlock(&nm->lock);
}

static void encode_nat(uint8_t *raw, const struct f2fs_nat_cache_entry *e)
{
	raw[NAT_E_VERSION] = e->version;
	put_le32(raw + NAT_E_INO, e->ino);
	put_le32(raw + NAT_E_BLOCK_ADDR, e->blkaddr);
}

/* Collect dirty entries sorted by nid so NAT blocks are written once each. */
static int cmp_entry(const void *a, const void *b)
{
	uint32_t x = (*(struct f2fs_nat_cache_entry *const *)a)->nid;
	uint32_t y = (*(struct f2fs_nat_cache_entry *const *)b)->nid;

	return x < y ? -1 : x > y;
}

/*
 * Checkpoint: write the dirty NAT entries (caller excludes all writers).
 * They go to the NAT journal when they fit; otherwise the journal is
 * emptied into the NAT blocks too, and each touched NAT block is written
 * to its shadow location, flipping its bit in the new checkpoint's bitmap.
 * Freed nids become allocatable afterwards.
 */
int f2fs_flush_nat_entries(struct f2fs_sb *sb, uint8_t *new_nat_bitmap, uint32_t *next_free)
{
	struct f2fs_nm_info *nm = sb->nm;
	uint8_t *j = sb->curseg[CURSEG_HOT_DATA].sum + SUM_JOURNAL_OFFSET;
	struct f2fs_nat_cache_entry **list = NULL;
	uint16_t n = get_le16(j);
	uint32_t nr = 0, need = 0;
	uint8_t *blk = NULL;
	int err = 0;

	pthread_mutex_lock(&nm->lock);
	if (nm->nr_dirty) {
		list = malloc(nm->nr_dirty * sizeof(*list));
		if (!list) {
			pthread_mutex_unlock(&nm->lock);
			return -ENOMEM;
		}
	}
	for (uint32_t i = 0; i < nm->hash_size; i++)
		for (struct f2fs_nat_cache_entry *e = nm->hash[i]; e; e = e->hnext)
			if (e->dirty)
				list[nr++] = e;
	if (nr)
		qsort(list, nr, sizeof(*list), cmp_entry);

	for (uint32_t i = 0; i < nr; i++) {
		bool in_j = false;

		for (uint16_t k = 0; k < n && !in_j; k++)
			in_j = get_le32(j + 2 + k * NAT_JOURNAL_ENTRY_SIZE) == list[i]->nid;
		need += !in_j;
	}
	if (n + need <= NAT_JOURNAL_ENTRIES) {
		for (uint32_t i = 0; i < nr; i++) {
			uint16_t k;

			for (k = 0; k < n; k++)
				if (get_le32(j + 2 + k * NAT_JOURNAL_ENTRY_SIZE) == list[i]->nid)
					break;
			if (k == n)
				put_le32(j + 2 + n++ * NAT_JOURNAL_ENTRY_SIZE, list[i]->nid);
			encode_nat(j + 2 + k * NAT_JOURNAL_ENTRY_SIZE + 4, list[i]);
		}
		put_le16(j, n);
	} else {
		uint32_t i = 0;

		blk = f2fs_alloc_blocks(1);
		if (!blk) {
			err = -ENOMEM;
			goto out;
		}
		/* every journal entry moves to its NAT block: those the cache
		 * holds clean must be written as well, or emptying the journal
		 * would lose them */
		for (uint16_t k = 0; k < n; k++) {
			const uint8_t *je = j + 2 + k * NAT_JOURNAL_ENTRY_SIZE;
			uint32_t nid = get_le32(je);
			struct f2fs_nat_cache_entry *ce = nat_cache_find(nm, nid);

			if (ce && !ce->dirty) {
				struct f2fs_nat_cache_entry **nl = realloc(list, (nr + 1) * sizeof(*list));

				if (!nl) {
					err = -ENOMEM;
					goto out;
				}
				list = nl;
				ce->dirty = true;
				nm->nr_dirty++;
				list[nr++] = ce;
			} else if (!ce) {
				struct f2fs_nat_cache_entry *e = calloc(1, sizeof(*e));
				struct f2fs_nat_cache_entry **nl;

				nl = realloc(list, (nr + 1) * sizeof(*list));
				if (!e || !nl) {
					free(e);
					if (nl)
						list = nl;
					err = -ENOMEM;
					goto out;
				}
				list = nl;
				e->nid = nid;
				e->version = je[4 + NAT_E_VERSION];
				e->ino = get_le32(je + 4 + NAT_E_INO);
				e->blkaddr = get_le32(je + 4 + NAT_E_BLOCK_ADDR);
				e->dirty = true;
				e->hnext = nm->hash[(nid * 2654435761u) & (nm->hash_size - 1)];
				nm->hash[(nid * 2654435761u) & (nm->hash_size - 1)] = e;
				nm->nr_entries++;
				nm->nr_dirty++;
				list[nr++] = e;
			}
		}
		if (nr)
			qsort(list, nr, sizeof(*list), cmp_entry);
		put_le16(j, 0);
		while (i < nr) {
			uint32_t b = list[i]->nid / NAT_ENTRY_PER_BLOCK;
			uint32_t old_addr = nat_block_addr(sb, b * NAT_ENTRY_PER_BLOCK);
			uint32_t new_addr = f2fs_test_bit(b, sb->nat_bitmap) ? old_addr - sb->blocks_per_seg
									     : old_addr + sb->blocks_per_seg;
			struct iovec iov = { blk, F2FS_BLKSIZE };
			struct f2fs_bio bio = {
				.op = F2FS_BIO_WRITE, .blkaddr = new_addr, .nr_blocks = 1,
				.iov = &iov, .iovcnt = 1,
			};

			err = f2fs_dev_read(sb->dev, old_addr, blk, 1);
			if (err)
				goto out;
			for (; i < nr && list[i]->nid / NAT_ENTRY_PER_BLOCK == b; i++)
				encode_nat(blk + (list[i]->nid % NAT_ENTRY_PER_BLOCK) * NAT_ENTRY_SIZE,
					   list[i]);
			err = f2fs_submit_bio(sb->dev, &bio);
			if (err)
				goto out;
			f2fs_cache_invalidate(sb->cache, old_addr);
			f2fs_cache_invalidate(sb->cache, new_addr);
			new_nat_bitmap[b >> 3] ^= (uint8_t)(0x80u >> (b & 7));
		}
	}
	/* entries are now on disk: freed nids may be reused, clean ones dropped */
	for (uint32_t i = 0; i < nr; i++) {
		list[i]->dirty = false;
		/* a block not scanned yet learns it from this entry when it is */
		if (list[i]->blkaddr == NULL_ADDR &&
		    nat_block_scanned(nm, list[i]->nid / NAT_ENTRY_PER_BLOCK))
			set_nid_free(nm, list[i]->nid, true);
	}
	nm->nr_dirty = 0;
	*next_free = next_free_bit(nm, sb->root_ino, sb->max_nid);
	if (*next_free == UINT32_MAX) {
		uint32_t b = 0;

		while (b < nm->nat_blocks && nat_block_scanned(nm, b))
			b++;
		*next_free = b < nm->nat_blocks ? F2FS_MAX(b * NAT_ENTRY_PER_BLOCK, sb->root_ino)
						 : sb->root_ino;
	}
out:
	pthread_mutex_unlock(&nm->lock);
	free(list);
	free(blk);
	return err;
}

/* Was nid in use at the last checkpoint? (is_checkpointed_node)  A number out
 * of range was not, so fsync of a file with a bad i_pino checkpoints. */
bool f2fs_nat_checkpointed(struct f2fs_sb *sb, uint32_t nid)
{
	struct f2fs_node_info ni;

	if (nat_lookup_disk(sb, nid, &ni))
		return false;
	return ni.blkaddr != NULL_ADDR;
}

/* Roll-forward recreates an inode under its own number: take that nid. */
int f2fs_claim_nid(struct f2fs_sb *sb, uint32_t nid)
{
	int err = 0;

	if (nid < sb->root_ino || nid >= sb->max_nid)
		return -EEXIST;
	pthread_mutex_lock(&sb->nm->lock);
	/* its own NAT block only: allocation scans the rest in batches */
	if (!nat_block_scanned(sb->nm, nid / NAT_ENTRY_PER_BLOCK))
		err = scan_nat_batch(sb, nid / NAT_ENTRY_PER_BLOCK, 1);
	if (!err && !nid_free(sb->nm, nid))
		err = -EEXIST;
	else if (!err)
		set_nid_free(sb->nm, nid, false);
	pthread_mutex_unlock(&sb->nm->lock);
	return err;
}
