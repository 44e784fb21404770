// SPDX-License-Identifier: GPL-2.0
/*
 * Inodes: loading an inode block, checking it as the kernel's
 * sanity_check_inode does, the inode cache, attributes, new inodes, and
 * the end of an inode's life: eviction and the orphan list.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "f2fs.h"
#include "fscrypt.h"

/* kernel: MIN/MAX_INLINE_XATTR_SIZE, in 4-byte words */
#define MIN_INLINE_XATTR_WORDS	((XATTR_HDR_SIZE + XATTR_ENTRY_HDR_SIZE) / 4)
#define MAX_INLINE_XATTR_WORDS	(DEF_ADDRS_PER_INODE - F2FS_TOTAL_EXTRA_ATTR_SIZE / 4 - \
				 DEF_INLINE_RESERVED_SIZE - 40 / 4)

/* Does a field ending at byte `end` of the inode fit in extra_isize? (F2FS_FITS_IN_INODE) */
static bool fits_in_inode(const struct f2fs_inode *inode, uint32_t end)
{
	return end <= I_ADDR + (uint32_t)inode->extra_isize;
}

static int decode_inode(struct f2fs_sb *sb, struct f2fs_inode *inode)
{
	const uint8_t *n = inode->node;
	uint32_t ino = inode->ino;
	uint32_t fmt;

	inode->mode = get_le16(n + I_MODE);
	inode->advise = n[I_ADVISE];
	inode->inline_flags = n[I_INLINE];
	inode->uid = get_le32(n + I_UID);
	inode->gid = get_le32(n + I_GID);
	inode->links = get_le32(n + I_LINKS);
	inode->size = get_le64(n + I_SIZE);
	inode->blocks = get_le64(n + I_BLOCKS);
	inode->generation = get_le32(n + I_GENERATION);
	inode->current_depth = get_le32(n + I_CURRENT_DEPTH);
	inode->xattr_nid = get_le32(n + I_XATTR_NID);
	inode->flags = get_le32(n + I_FLAGS);
	inode->pino = get_le32(n + I_PINO);
	inode->dir_level = n[I_DIR_LEVEL];

	fmt = inode->mode & S_IFMT;
	if (fmt != S_IFREG && fmt != S_IFDIR && fmt != S_IFLNK && fmt != S_IFCHR &&
	    fmt != S_IFBLK && fmt != S_IFIFO && fmt != S_IFSOCK)
		return f2fs_corrupted(sb, "inode %u: bad file type in mode 0%o", ino, inode->mode);

	if (inode->inline_flags & F2FS_EXTRA_ATTR) {
		if (!f2fs_has_feature(sb, F2FS_FEATURE_EXTRA_ATTR))
			return f2fs_corrupted(sb, "inode %u: extra_attr set but the feature is off", ino);
		inode->extra_isize = get_le16(n + I_EXTRA_ISIZE);
		if (inode->extra_isize < 4 || inode->extra_isize > F2FS_TOTAL_EXTRA_ATTR_SIZE ||
		    inode->extra_isize % 4)
			return f2fs_corrupted(sb, "inode %u: bad i_extra_isize %u", ino,
					      inode->extra_isize);
	} else {
		inode->extra_isize = 0;
	}

	if (f2fs_has_feature(sb, F2FS_FEATURE_FLEXIBLE_INLINE_XATTR)) {
		if (!(inode->inline_flags & F2FS_EXTRA_ATTR))
			return f2fs_corrupted(sb, "inode %u: flexible inline xattr needs extra_attr", ino);
		inode->inline_xattr_addrs = get_le16(n + I_INLINE_XATTR_SIZE);
		if ((inode->inline_flags & F2FS_INLINE_XATTR) &&
		    (inode->inline_xattr_addrs < MIN_INLINE_XATTR_WORDS ||
		     inode->inline_xattr_addrs > MAX_INLINE_XATTR_WORDS))
			return f2fs_corrupted(sb, "inode %u: bad i_inline_xattr_size %u", ino,
					      inode->inline_xattr_addrs);
		if (inode->inline_xattr_addrs > MAX_INLINE_XATTR_WORDS)
			return f2fs_corrupted(sb, "inode %u: i_inline_xattr_size %u too large", ino,
					      inode->inline_xattr_addrs);
	} else if (inode->inline_flags & (F2FS_INLINE_XATTR | F2FS_INLINE_DENTRY)) {
		inode->inline_xattr_addrs = DEFAULT_INLINE_XATTR_ADDRS;
	} else {
		inode->inline_xattr_addrs = 0;
	}
	inode->addrs_per_inode = DEF_ADDRS_PER_INODE - inode->extra_isize / 4 -
				 inode->inline_xattr_addrs;
	/* f2fs_iget: F2FS_DEF_PROJID where the field is not there */
	inode->projid = 0;
	if (f2fs_has_feature(sb, F2FS_FEATURE_PRJQUOTA) && fits_in_inode(inode, I_PROJID + 4))
		inode->projid = get_le32(n + I_PROJID);

	if (f2fs_has_feature(sb, F2FS_FEATURE_INODE_CHKSUM) && inode->extra_isize &&
	    fits_in_inode(inode, I_INODE_CHECKSUM + 4)) {
		uint32_t want = get_le32(n + I_INODE_CHECKSUM);
		uint32_t got = f2fs_inode_checksum(sb, n);

		if (want != got)
			return f2fs_corrupted(sb, "inode %u: checksum mismatch (stored 0x%08x, "
					      "computed 0x%08x)", ino, want, got);
	}

	if (inode->xattr_nid && (inode->xattr_nid < sb->root_ino || inode->xattr_nid >= sb->max_nid))
		return f2fs_corrupted(sb, "inode %u: xattr nid %u out of range", ino, inode->xattr_nid);

	if (inode->flags & F2FS_COMPR_FL) {
		int err = f2fs_compress_check_inode(sb, inode);

		if (err)
			return err;
	}

	if ((inode->inline_flags & F2FS_INLINE_DATA) && fmt != S_IFREG && fmt != S_IFLNK)
		return f2fs_corrupted(sb, "inode %u: inline data on a non-file", ino);
	if ((inode->inline_flags & F2FS_INLINE_DENTRY) && fmt != S_IFDIR)
		return f2fs_corrupted(sb, "inode %u: inline dentries on a non-directory", ino);
	if ((inode->inline_flags & F2FS_INLINE_DATA) && inode->size > f2fs_max_inline_data(inode))
		return f2fs_corrupted(sb, "inode %u: inline file of %llu bytes exceeds the inline "
				      "area", ino, (unsigned long long)inode->size);
	if (fmt == S_IFDIR && inode->current_depth > MAX_DIR_HASH_DEPTH)
		return f2fs_corrupted(sb, "inode %u: directory depth %u too large", ino,
				      inode->current_depth);
	if ((fmt == S_IFREG || fmt == S_IFDIR || fmt == S_IFLNK) &&
	    !(inode->inline_flags & (F2FS_INLINE_DATA | F2FS_INLINE_DENTRY)) &&
	    inode->size > f2fs_max_file_blocks(inode) * F2FS_BLKSIZE)
		return f2fs_corrupted(sb, "inode %u: i_size %llu beyond the largest file", ino,
				      (unsigned long long)inode->size);
	if (inode->blocks == 0)
		return f2fs_corrupted(sb, "inode %u: i_blocks is zero", ino);

	/* the largest extent is a hint: drop it if it points outside the main area */
	{
		struct f2fs_extent largest = {
			.fofs = get_le32(n + I_EXT), .blk = get_le32(n + I_EXT + 4),
			.len = get_le32(n + I_EXT + 8),
		};
		if (largest.len &&
		    (!f2fs_valid_main_blkaddr(sb, largest.blk) ||
		     (uint64_t)largest.blk + largest.len > f2fs_main_end_blkaddr(sb) ||
		     (uint64_t)largest.fofs + largest.len > f2fs_max_file_blocks(inode))) {
			f2fs_warn(sb, "inode %u: ignoring invalid largest extent (%u, 0x%x, %u)", ino,
				  largest.fofs, largest.blk, largest.len);
			largest.len = 0;
		}
		f2fs_extent_tree_init(sb, &inode->et, largest.len ? &largest : NULL);
	}
	return 0;
}

/*
 * A request names an inode by number (a FUSE nodeid, a handle), and that
 * inode may have been freed since: its nid is free in the NAT, or already
 * a node of another inode.  That is a stale number, not a corrupt image
 * (f2fs_nfs_get_inode answers -ESTALE); checked before the node is read,
 * which would call it corruption.
 */
static int check_request_ino(struct f2fs_sb *sb, uint32_t ino)
{
	struct f2fs_node_info ni;
	int err;

	if (ino < sb->root_ino || ino >= sb->max_nid || ino == sb->node_ino || ino == sb->meta_ino)
		return -ESTALE;
	err = f2fs_get_node_info(sb, ino, &ni);
	if (err)
		return err;
	if (ni.blkaddr == NULL_ADDR || ni.ino != ino)
		return -ESTALE;
	return 0;
}

static int load_inode(struct f2fs_sb *sb, uint32_t ino, bool request, struct f2fs_inode **out)
{
	struct f2fs_inode *inode;
	int err = request ? check_request_ino(sb, ino) : 0;

	if (err)
		return err;
	inode = calloc(1, sizeof(*inode));
	if (!inode)
		return -ENOMEM;
	inode->node = f2fs_block_get(&sb->node_pool);
	if (!inode->node) {
		free(inode);
		return -ENOMEM;
	}
	inode->ino = ino;
	err = f2fs_get_node(sb, ino, ino, 0, inode->node);
	if (!err)
		err = decode_inode(sb, inode);
	if (err) {
		f2fs_block_put(&sb->node_pool, inode->node);
		free(inode);
		return err;
	}
	pthread_rwlock_init(&inode->lock, NULL);
	*out = inode;
	return 0;
}

void f2fs_put_crypt_info(struct f2fs_inode *inode)
{
	fscrypt_inode_info_free(inode->ci);
	inode->ci = NULL;
}

static void free_inode(struct f2fs_sb *sb, struct f2fs_inode *inode)
{
	f2fs_put_crypt_info(inode);
	f2fs_compress_drop_cache(inode);
	f2fs_verity_info_free(inode->verity);
	f2fs_extent_tree_destroy(&inode->et);
	f2fs_dcache_free(inode->dcache);
	pthread_rwlock_destroy(&inode->lock);
	f2fs_block_put(&sb->node_pool, inode->node);
	free(inode);
}

/* ---- inode cache: hash by ino, LRU of unreferenced inodes ---- */

static void lru_del(struct f2fs_sb *sb, struct f2fs_inode *inode)
{
	if (inode->lru_prev)
		inode->lru_prev->lru_next = inode->lru_next;
	else
		sb->lru_head = inode->lru_next;
	if (inode->lru_next)
		inode->lru_next->lru_prev = inode->lru_prev;
	else
		sb->lru_tail = inode->lru_prev;
	inode->lru_prev = inode->lru_next = NULL;
	sb->nr_unused_inodes--;
}

static void hash_del(struct f2fs_sb *sb, struct f2fs_inode *inode)
{
	struct f2fs_inode **pp = &sb->icache[inode->ino % F2FS_ICACHE_BUCKETS];

	while (*pp != inode)
		pp = &(*pp)->hnext;
	*pp = inode->hnext;
	sb->nr_cached_inodes--;
}

static struct f2fs_inode *icache_find(struct f2fs_sb *sb, uint32_t ino)
{
	struct f2fs_inode *i = sb->icache[ino % F2FS_ICACHE_BUCKETS];

	while (i && i->ino != ino)
		i = i->hnext;
	return i;
}

bool f2fs_icache_has(struct f2fs_sb *sb, uint32_t ino)
{
	bool has;

	pthread_mutex_lock(&sb->icache_lock);
	has = icache_find(sb, ino) != NULL;
	pthread_mutex_unlock(&sb->icache_lock);
	return has;
}

static int iget(struct f2fs_sb *sb, uint32_t ino, bool request, struct f2fs_inode **out)
{
	struct f2fs_inode *inode, *other;
	int err;

	pthread_mutex_lock(&sb->icache_lock);
	inode = icache_find(sb, ino);
	if (inode) {
		if (inode->refcount++ == 0)
			lru_del(sb, inode);
		pthread_mutex_unlock(&sb->icache_lock);
		*out = inode;
		return 0;
	}
	pthread_mutex_unlock(&sb->icache_lock);

	/*
	 * Load without the icache lock; another thread may race us to it.  An
	 * inode being freed meanwhile must not come back from what was read
	 * before: evict_lock keeps the freeing (NAT entry and unhash) out
	 * until this copy is either in the cache or dropped.
	 */
	pthread_rwlock_rdlock(&sb->evict_lock);
	err = load_inode(sb, ino, request, &inode);
	if (err) {
		pthread_rwlock_unlock(&sb->evict_lock);
		return err;
	}
	pthread_mutex_lock(&sb->icache_lock);
	other = icache_find(sb, ino);
	if (other) {
		if (other->refcount++ == 0)
			lru_del(sb, other);
		pthread_mutex_unlock(&sb->icache_lock);
		pthread_rwlock_unlock(&sb->evict_lock);
		free_inode(sb, inode);
		*out = other;
		return 0;
	}
	inode->refcount = 1;
	inode->hnext = sb->icache[ino % F2FS_ICACHE_BUCKETS];
	sb->icache[ino % F2FS_ICACHE_BUCKETS] = inode;
	sb->nr_cached_inodes++;
	pthread_mutex_unlock(&sb->icache_lock);
	pthread_rwlock_unlock(&sb->evict_lock);
	*out = inode;
	return 0;
}

int f2fs_iget(struct f2fs_sb *sb, uint32_t ino, struct f2fs_inode **out)
{
	return iget(sb, ino, false, out);
}

int f2fs_iget_req(struct f2fs_sb *sb, uint32_t ino, struct f2fs_inode **out)
{
	return iget(sb, ino, true, out);
}

void f2fs_ihold(struct f2fs_sb *sb, struct f2fs_inode *inode)
{
	pthread_mutex_lock(&sb->icache_lock);
	inode->refcount++;
	pthread_mutex_unlock(&sb->icache_lock);
}

void f2fs_iput(struct f2fs_sb *sb, struct f2fs_inode *inode)
{
	struct f2fs_inode *victim = NULL;

	if (!inode)
		return;
	pthread_mutex_lock(&sb->icache_lock);
	if (--inode->refcount == 0 && inode->unhashed) {
		/* a freed inode: nobody can find it any more */
		pthread_mutex_unlock(&sb->icache_lock);
		free_inode(sb, inode);
		return;
	}
	if (inode->refcount == 0) {
		inode->lru_prev = NULL;
		inode->lru_next = sb->lru_head;
		if (sb->lru_head)
			sb->lru_head->lru_prev = inode;
		sb->lru_head = inode;
		if (!sb->lru_tail)
			sb->lru_tail = inode;
		sb->nr_unused_inodes++;
		if (sb->nr_unused_inodes > sb->max_unused_inodes) {
			victim = sb->lru_tail;
			lru_del(sb, victim);
			hash_del(sb, victim);
		}
	}
	pthread_mutex_unlock(&sb->icache_lock);
	if (victim)
		free_inode(sb, victim);
}

void f2fs_icache_destroy(struct f2fs_sb *sb)
{
	uint32_t left = sb->nr_cached_inodes;	/* the buckets after the last are empty */

	for (int b = 0; b < F2FS_ICACHE_BUCKETS && left; b++) {
		struct f2fs_inode *i = sb->icache[b];

		while (i) {
			struct f2fs_inode *n = i->hnext;

			free_inode(sb, i);
			left--;
			i = n;
		}
		sb->icache[b] = NULL;
	}
	sb->lru_head = sb->lru_tail = NULL;
	sb->nr_cached_inodes = sb->nr_unused_inodes = 0;
}

void f2fs_icache_drop_extents(struct f2fs_sb *sb)
{
	pthread_mutex_lock(&sb->icache_lock);
	for (int b = 0; b < F2FS_ICACHE_BUCKETS; b++)
		for (struct f2fs_inode *i = sb->icache[b]; i; i = i->hnext)
			f2fs_extent_tree_forget(&i->et);
	pthread_mutex_unlock(&sb->icache_lock);
}

/* ---- attributes ---- */


static uint64_t decode_rdev(const struct f2fs_inode *inode)
{
	uint32_t old = f2fs_i_addr(inode, 0);
	uint32_t dev = f2fs_i_addr(inode, 1);
	uint64_t major, minor;

	if (old) {		/* old_decode_dev */
		major = (old >> 8) & 0xff;
		minor = old & 0xff;
	} else {		/* new_decode_dev */
		major = (dev & 0xfff00) >> 8;
		minor = (dev & 0xff) | ((dev >> 12) & 0xfff00);
	}
	return f2fs_plat_makedev((uint32_t)major, (uint32_t)minor);
}

void f2fs_fill_stat(struct f2fs_sb *sb, const struct f2fs_inode *inode, struct f2fs_stat *st)
{
	const uint8_t *n = inode->node;
	uint32_t fmt = inode->mode & S_IFMT;
	uint32_t flags = inode->flags;

	memset(st, 0, sizeof(*st));
	st->ino = inode->ino;
	st->mode = inode->mode;
	st->nlink = inode->links;
	st->uid = inode->uid;
	st->gid = inode->gid;
	st->size = inode->size;
	/* on disk i_blocks counts the inode block itself; the kernel hides it */
	st->blocks = (inode->blocks - 1) * (F2FS_BLKSIZE / 512);
	st->blksize = F2FS_BLKSIZE;
	st->atime.sec = (int64_t)get_le64(n + I_ATIME);
	st->atime.nsec = get_le32(n + I_ATIME_NSEC);
	st->mtime.sec = (int64_t)get_le64(n + I_MTIME);
	st->mtime.nsec = get_le32(n + I_MTIME_NSEC);
	st->ctime.sec = (int64_t)get_le64(n + I_CTIME);
	st->ctime.nsec = get_le32(n + I_CTIME_NSEC);
	if (f2fs_has_feature(sb, F2FS_FEATURE_INODE_CRTIME) && fits_in_inode(inode, I_CRTIME_NSEC + 4)) {
		st->has_crtime = true;
		st->crtime.sec = (int64_t)get_le64(n + I_CRTIME);
		st->crtime.nsec = get_le32(n + I_CRTIME_NSEC);
	}
	if (fmt == S_IFCHR || fmt == S_IFBLK)
		st->rdev = decode_rdev(inode);
	if (f2fs_is_encrypted(inode))
		flags |= FS_ENCRYPT_FL;
	if (inode->advise & FADVISE_VERITY_BIT)
		flags |= FS_VERITY_FL;
	if (inode->inline_flags & (F2FS_INLINE_DATA | F2FS_INLINE_DENTRY))
		flags |= FS_INLINE_DATA_FL;
	if (inode->inline_flags & F2FS_PIN_FILE)
		flags |= FS_NOCOW_FL;
	st->flags = flags & F2FS_GETTABLE_FS_FL;
	st->generation = inode->generation;
	st->projid = inode->projid;
}

/* ======================= writing inodes ======================= */

/* Flags a new inode inherits from its directory (F2FS_FL_INHERITED). */
#define FL_INHERITED (F2FS_SYNC_FL | F2FS_NODUMP_FL | F2FS_NOATIME_FL | F2FS_DIRSYNC_FL | \
		      F2FS_PROJINHERIT_FL | F2FS_CASEFOLD_FL | F2FS_COMPR_FL | F2FS_NOCOMP_FL)

void f2fs_inode_set_time(struct f2fs_inode *inode, int which, const struct f2fs_timespec *ts)
{
	static const uint32_t sec_off[] = { I_ATIME, I_MTIME, I_CTIME, I_CRTIME };
	static const uint32_t nsec_off[] = { I_ATIME_NSEC, I_MTIME_NSEC, I_CTIME_NSEC, I_CRTIME_NSEC };

	if (which == F2FS_TIME_CRTIME && !fits_in_inode(inode, I_CRTIME_NSEC + 4))
		return;
	put_le64(inode->node + sec_off[which], (uint64_t)ts->sec);
	put_le32(inode->node + nsec_off[which], ts->nsec);
}

void f2fs_now(struct f2fs_timespec *ts)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	ts->sec = t.tv_sec;
	ts->nsec = (uint32_t)t.tv_nsec;
}

/*
 * f2fs_update_inode: write the in-memory fields back into the inode block,
 * refresh its checksum, and queue the block for the next node write.
 * Caller holds the inode's write lock.
 */
int f2fs_mark_inode_dirty(struct f2fs_sb *sb, struct f2fs_inode *inode)
{
	uint8_t *n = inode->node;

	put_le16(n + I_MODE, inode->mode);
	n[I_ADVISE] = inode->advise;
	n[I_INLINE] = inode->inline_flags;
	put_le32(n + I_UID, inode->uid);
	put_le32(n + I_GID, inode->gid);
	put_le32(n + I_LINKS, inode->links);
	/* an atomic write's size reaches the disk only with its commit (as the
	 * kernel's f2fs_update_inode leaves i_size while FI_ATOMIC_FILE) */
	put_le64(n + I_SIZE, inode->cow ? inode->original_size : inode->size);
	put_le64(n + I_BLOCKS, inode->blocks);
	put_le32(n + I_GENERATION, inode->generation);
	if ((inode->mode & S_IFMT) == S_IFDIR)
		put_le32(n + I_CURRENT_DEPTH, inode->current_depth);
	put_le32(n + I_XATTR_NID, inode->xattr_nid);
	put_le32(n + I_FLAGS, inode->flags);
	put_le32(n + I_PINO, inode->pino);
	n[I_DIR_LEVEL] = inode->dir_level;
	if (inode->extra_isize) {
		put_le16(n + I_EXTRA_ISIZE, inode->extra_isize);
		if (f2fs_has_feature(sb, F2FS_FEATURE_FLEXIBLE_INLINE_XATTR))
			put_le16(n + I_INLINE_XATTR_SIZE, inode->inline_xattr_addrs);
		if (f2fs_has_feature(sb, F2FS_FEATURE_PRJQUOTA) && fits_in_inode(inode, I_PROJID + 4))
			put_le32(n + I_PROJID, inode->projid);
	}
	/* f2fs_update_inode: the compression attributes, zero for a plain file */
	if (f2fs_has_feature(sb, F2FS_FEATURE_COMPRESSION) && fits_in_inode(inode, I_COMPRESS_FLAG + 2) &&
	    ((inode->flags & F2FS_COMPR_FL) || n[I_LOG_CLUSTER_SIZE])) {
		bool c = inode->flags & F2FS_COMPR_FL;

		put_le64(n + I_COMPR_BLOCKS, c ? inode->compr_blocks : 0);
		n[I_COMPRESS_ALGORITHM] = c ? inode->compress_algorithm : 0;
		n[I_LOG_CLUSTER_SIZE] = c ? inode->log_cluster_size : 0;
		put_le16(n + I_COMPRESS_FLAG, c ? inode->compress_flag : 0);
	}
	if (f2fs_has_feature(sb, F2FS_FEATURE_INODE_CHKSUM) && inode->extra_isize &&
	    fits_in_inode(inode, I_INODE_CHECKSUM + 4))
		put_le32(n + I_INODE_CHECKSUM, f2fs_inode_checksum(sb, n));
	return f2fs_set_node_dirty(sb, inode->ino, n);
}

/*
 * A random i_generation (the kernel's get_random_u32, itself batched):
 * one getrandom(2) per 64 new inodes instead of one per create.
 */
static uint32_t new_generation(struct f2fs_sb *sb)
{
	uint32_t g;

	pthread_mutex_lock(&sb->icache_lock);
	if (!sb->gen_left) {
		f2fs_random_bytes(sb->gen_pool, sizeof(sb->gen_pool));
		sb->gen_left = ARRAY_SIZE(sb->gen_pool);
	}
	g = sb->gen_pool[--sb->gen_left];
	sb->gen_pool[sb->gen_left] = 0;	/* a value is handed out once */
	pthread_mutex_unlock(&sb->icache_lock);
	return g;
}

/*
 * f2fs_new_inode: allocate an inode for a new entry in dir, initialised
 * as the kernel's f2fs_new_inode with the default mount options
 * (inline_xattr, inline_data, inline_dentry, extra_attr when available).
 * Returns it referenced and dirty.
 */
int f2fs_new_inode(struct f2fs_sb *sb, struct f2fs_inode *dir, uint32_t mode, uint32_t uid,
		   uint32_t gid, struct f2fs_inode **out)
{
	struct f2fs_inode *inode = calloc(1, sizeof(*inode));
	struct f2fs_timespec now;
	uint32_t ino, fmt = mode & S_IFMT;
	int err;

	if (!inode)
		return -ENOMEM;
	inode->node = f2fs_block_get(&sb->node_pool);
	if (!inode->node) {
		free(inode);
		return -ENOMEM;
	}
	inode->mode = (uint16_t)mode;
	inode->uid = uid;
	inode->gid = gid;
	/* f2fs_new_inode: a project-inherit directory passes its project on */
	if (dir && (dir->flags & F2FS_PROJINHERIT_FL) &&
	    f2fs_has_feature(sb, F2FS_FEATURE_PRJQUOTA))
		inode->projid = dir->projid;
	/* dquot_alloc_inode before anything is allocated (its ino is not yet a
	 * quota file's, so it is charged), with the privilege of the change
	 * creating it; its creator clears dq_priv before linking it */
	inode->dq_priv = dir && dir->dq_priv;
	err = f2fs_dquot_alloc_inode(sb, inode);
	if (err)
		goto fail_quota;
	err = f2fs_alloc_nid(sb, &ino);
	if (err)
		goto fail;
	err = f2fs_new_node(sb, ino, 0, fmt != S_IFDIR, &ino, inode->node);
	if (err) {
		f2fs_alloc_nid_failed(sb, ino);
		goto fail;
	}
	inode->ino = ino;
	inode->links = fmt == S_IFDIR ? 2 : 1;
	inode->blocks = 1;
	inode->pino = dir ? dir->ino : ino;
	inode->flags = dir ? dir->flags & FL_INHERITED : 0;
	/* f2fs_mask_flags: F2FS_REG_FLMASK keeps the directory-only flags,
	 * project inheritance included, off everything else */
	if (fmt != S_IFDIR)
		inode->flags &= ~(F2FS_DIRSYNC_FL | F2FS_CASEFOLD_FL | F2FS_PROJINHERIT_FL);
	if (fmt != S_IFREG && fmt != S_IFDIR)
		inode->flags &= F2FS_NODUMP_FL | F2FS_NOATIME_FL;
	inode->generation = new_generation(sb);
	if (f2fs_has_feature(sb, F2FS_FEATURE_EXTRA_ATTR)) {
		inode->inline_flags |= F2FS_EXTRA_ATTR;
		inode->extra_isize = F2FS_TOTAL_EXTRA_ATTR_SIZE;
	}
	inode->inline_flags |= F2FS_INLINE_XATTR;
	if (fmt == S_IFREG || fmt == S_IFLNK)
		inode->inline_flags |= F2FS_INLINE_DATA;
	else if (fmt == S_IFDIR)
		inode->inline_flags |= F2FS_INLINE_DENTRY;
	if (f2fs_has_feature(sb, F2FS_FEATURE_FLEXIBLE_INLINE_XATTR) || inode->inline_flags &
	    (F2FS_INLINE_XATTR | F2FS_INLINE_DENTRY))
		inode->inline_xattr_addrs = DEFAULT_INLINE_XATTR_ADDRS;
	inode->addrs_per_inode = DEF_ADDRS_PER_INODE - inode->extra_isize / 4 -
				 inode->inline_xattr_addrs;
	/* compression is chosen by f2fs_compress_new_inode, with the name */
	inode->flags &= ~(F2FS_COMPR_FL | F2FS_NOCOMP_FL);
	f2fs_extent_tree_init(sb, &inode->et, NULL);
	pthread_rwlock_init(&inode->lock, NULL);
	f2fs_now(&now);
	for (int t = 0; t < 4; t++)
		f2fs_inode_set_time(inode, t, &now);
	err = f2fs_mark_inode_dirty(sb, inode);
	if (err) {
		f2fs_extent_tree_destroy(&inode->et);
		pthread_rwlock_destroy(&inode->lock);
		goto fail;
	}

	inode->refcount = 1;
	pthread_mutex_lock(&sb->icache_lock);
	inode->hnext = sb->icache[ino % F2FS_ICACHE_BUCKETS];
	sb->icache[ino % F2FS_ICACHE_BUCKETS] = inode;
	sb->nr_cached_inodes++;
	pthread_mutex_unlock(&sb->icache_lock);
	*out = inode;
	return 0;
fail:
	inode->blocks = 1;
	f2fs_dquot_drop_inode(sb, inode);
fail_quota:
	f2fs_block_put(&sb->node_pool, inode->node);
	free(inode);
	return err;
}

/* Take a freed inode out of the cache so its nid can be reused at once. */
void f2fs_unhash_inode(struct f2fs_sb *sb, struct f2fs_inode *inode)
{
	pthread_mutex_lock(&sb->icache_lock);
	if (!inode->unhashed) {
		hash_del(sb, inode);
		inode->unhashed = true;
	}
	pthread_mutex_unlock(&sb->icache_lock);
}

/* ======================= orphans and eviction ======================= */

int f2fs_add_orphan(struct f2fs_sb *sb, uint32_t ino)
{
	int err = 0;

	pthread_mutex_lock(&sb->orphan_lock);
	if (sb->nr_orphans == sb->orphan_cap) {
		uint32_t cap = sb->orphan_cap ? sb->orphan_cap * 2 : 64;
		uint32_t *n = realloc(sb->orphans, cap * sizeof(*n));

		if (!n) {
			err = -ENOMEM;
			goto out;
		}
		sb->orphans = n;
		sb->orphan_cap = cap;
	}
	sb->orphans[sb->nr_orphans++] = ino;
out:
	pthread_mutex_unlock(&sb->orphan_lock);
	return err;
}

bool f2fs_is_orphan(struct f2fs_sb *sb, uint32_t ino)
{
	bool found = false;

	pthread_mutex_lock(&sb->orphan_lock);
	for (uint32_t i = 0; i < sb->nr_orphans && !found; i++)
		found = sb->orphans[i] == ino;
	pthread_mutex_unlock(&sb->orphan_lock);
	return found;
}

void f2fs_remove_orphan(struct f2fs_sb *sb, uint32_t ino)
{
	pthread_mutex_lock(&sb->orphan_lock);
	for (uint32_t i = 0; i < sb->nr_orphans; i++) {
		if (sb->orphans[i] == ino) {
			sb->orphans[i] = sb->orphans[--sb->nr_orphans];
			break;
		}
	}
	pthread_mutex_unlock(&sb->orphan_lock);
}

/*
 * f2fs_evict_inode for an inode with no links left: free its blocks, its
 * nodes, its xattr node and the inode itself.  The caller holds the
 * inode's write lock and a reference.
 */
int f2fs_evict_inode(struct f2fs_sb *sb, struct f2fs_inode *inode)
{
	int err = 0;

	/* dirty pages of a file going away are never written (their
	 * reservations go with the blocks below), and let go of the inode */
	if (inode->pages) {
		f2fs_pc_free(sb->pc, f2fs_pc_detach(sb->pc, &inode->pages), false);
		f2fs_iput(sb, inode);
	}

	/* devices keep their number in i_addr; inline inodes keep data there */
	if ((S_ISREG(inode->mode) || S_ISDIR(inode->mode) || S_ISLNK(inode->mode)) &&
	    !(inode->inline_flags & (F2FS_INLINE_DATA | F2FS_INLINE_DENTRY)))
		err = f2fs_truncate_inode_blocks(sb, inode, 0);

	if (!err && inode->xattr_nid) {
		err = f2fs_remove_node(sb, inode->xattr_nid, inode->ino, false);
		if (!err)
			inode->xattr_nid = 0;
	}
	if (!err) {
		/* no load of this inode may read the NAT before and cache it after */
		pthread_rwlock_wrlock(&sb->evict_lock);
		err = f2fs_remove_node(sb, inode->ino, inode->ino, true);
		if (!err)
			f2fs_unhash_inode(sb, inode);
		pthread_rwlock_unlock(&sb->evict_lock);
	}
	if (!err) {
		/* what truncation left: the xattr node and the inode (dquot_free_inode) */
		f2fs_dquot_drop_inode(sb, inode);
		f2fs_remove_orphan(sb, inode->ino);
	}
	return err;
}

/* A writable mount frees the orphans the last checkpoint left (as the kernel's
 * f2fs_recover_orphan_inodes); the next checkpoint then drops them. */
int f2fs_recover_orphans(struct f2fs_sb *sb)
{
	while (sb->nr_orphans) {
		uint32_t ino = sb->orphans[sb->nr_orphans - 1];
		struct f2fs_inode *inode;
		int err = f2fs_iget(sb, ino, &inode);

		if (err) {
			f2fs_err(sb, "orphan inode %u cannot be read: %s", ino, strerror(-err));
			return err;
		}
		if (inode->links) {
			f2fs_warn(sb, "orphan inode %u still has %u links; keeping it", ino,
				  inode->links);
			f2fs_remove_orphan(sb, ino);
		} else {
			err = f2fs_evict_inode(sb, inode);
		}
		f2fs_iput(sb, inode);
		if (err)
			return err;
		f2fs_info(sb, "freed orphan inode %u", ino);
	}
	return 0;
}
