// SPDX-License-Identifier: GPL-2.0
/*
 * File operations on a writable mount: open/release (which decide when
 * an unlinked inode is freed), write, setattr, fallocate and fsync.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "f2fs.h"

#ifndef FALLOC_FL_KEEP_SIZE
#define FALLOC_FL_KEEP_SIZE	0x01
#endif
#ifndef FALLOC_FL_PUNCH_HOLE
#define FALLOC_FL_PUNCH_HOLE	0x02
#endif
#ifndef FALLOC_FL_ZERO_RANGE
#define FALLOC_FL_ZERO_RANGE	0x10
#endif

int f2fs_open(struct f2fs_sb *sb, uint32_t ino, int oflags)
{
	bool for_write = (oflags & O_ACCMODE) != O_RDONLY;
	struct f2fs_inode *inode;
	int err;

	/* f2fs_file_open: nothing opens on a shut-down mount */
	if (f2fs_cp_error(sb))
		return -EIO;
	if (for_write && !f2fs_writable(sb))
		return -EROFS;
	err = f2fs_iget_req(sb, ino, &inode);
	if (err)
		return err;
	if (for_write && S_ISDIR(inode->mode)) {
		f2fs_iput(sb, inode);
		return -EISDIR;
	}
	/* may_open: no writing an immutable file, only appending to an append-only one */
	if ((f2fs_is_immutable(inode) && (for_write || (oflags & O_TRUNC))) ||
	    (f2fs_is_append(inode) && ((for_write && !(oflags & O_APPEND)) || (oflags & O_TRUNC)))) {
		f2fs_iput(sb, inode);
		return -EPERM;
	}
	/* fscrypt_file_open: a regular file opens only with its key */
	if (S_ISREG(inode->mode) && (err = f2fs_require_key(sb, inode))) {
		f2fs_iput(sb, inode);
		return err;
	}
	/* fsverity_file_open: read-only, and only with a descriptor that holds */
	if (S_ISREG(inode->mode) && f2fs_is_verity(inode)) {
		struct f2fs_verity_info *vi;

		err = for_write || (oflags & O_TRUNC) ? -EPERM : 0;
		if (!err) {
			pthread_rwlock_rdlock(&inode->lock);
			err = f2fs_verity_get_info(sb, inode, &vi);
			pthread_rwlock_unlock(&inode->lock);
		}
		if (err) {
			f2fs_iput(sb, inode);
			return err;
		}
	}
	pthread_rwlock_wrlock(&inode->lock);
	/*
	 * Freed since the iget above: an unlink of its last name frees an
	 * inode nobody has open (drop_inode) even while the kernel, about to
	 * send this OPEN, still holds it.  Opened anyway, it would keep this
	 * reference for a RELEASE that can no longer find it by number.
	 */
	if (inode->unhashed) {
		pthread_rwlock_unlock(&inode->lock);
		f2fs_iput(sb, inode);
		return -ESTALE;
	}
	inode->open_count++;
	if (for_write)
		inode->write_count++;
	pthread_rwlock_unlock(&inode->lock);
	/* the reference is kept until f2fs_release */
	return 0;
}

/* An orphan nobody has open and nothing above refers to is freed. */
static bool unused_orphan(struct f2fs_sb *sb, struct f2fs_inode *inode)
{
	return !inode->open_count && !inode->links && !inode->unhashed && f2fs_writable(sb) &&
	       !inode->cow_file && !f2fs_inode_held(sb, inode->ino);
}

/* Free inode if unused_orphan; the caller holds a reference and no locks. */
static int evict_unused(struct f2fs_sb *sb, struct f2fs_inode *inode)
{
	bool evict;
	int err = 0;

	pthread_rwlock_rdlock(&inode->lock);
	evict = unused_orphan(sb, inode);
	pthread_rwlock_unlock(&inode->lock);
	if (!evict)
		return 0;
	/* the inode is held already, and may no longer be found by number */
	f2fs_balance_fs(sb);
	f2fs_lock_op(sb);
	pthread_rwlock_wrlock(&inode->lock);
	if (unused_orphan(sb, inode)) {
		/* an atomic write nobody can finish any more goes first */
		err = f2fs_drop_atomic_write(sb, inode);
		if (!err)
			err = f2fs_evict_inode(sb, inode);
	}
	pthread_rwlock_unlock(&inode->lock);
	f2fs_unlock_op(sb);
	return err;
}

/*
 * f2fs_release_file: the last handle that may write takes an atomic write
 * still open with it (as the kernel's, which aborts it then).  1 when it
 * did, for the caller to drop what it cached of the file.
 */
int f2fs_release_file(struct f2fs_sb *sb, uint32_t ino, int oflags)
{
	struct f2fs_inode *inode;
	bool writer = (oflags & O_ACCMODE) != O_RDONLY, abort_atomic;
	int err = f2fs_iget_req(sb, ino, &inode), aborted = 0;

	if (err)
		return err;
	pthread_rwlock_wrlock(&inode->lock);
	/* a release with no open to match holds no reference to give back */
	if (!inode->open_count) {
		pthread_rwlock_unlock(&inode->lock);
		f2fs_iput(sb, inode);
		return -EBADF;
	}
	inode->open_count--;
	if (writer && inode->write_count)
		inode->write_count--;
	if (!inode->open_count)
		f2fs_compress_drop_cache(inode);
	abort_atomic = writer && !inode->write_count && inode->cow;
	pthread_rwlock_unlock(&inode->lock);
	if (abort_atomic && f2fs_writable(sb)) {
		f2fs_lock_op(sb);
		pthread_rwlock_wrlock(&inode->lock);
		if (!inode->write_count && inode->cow) {
			err = f2fs_drop_atomic_write(sb, inode);
			aborted = 1;
		}
		pthread_rwlock_unlock(&inode->lock);
		f2fs_unlock_op(sb);
	}
	{
		int eerr = evict_unused(sb, inode);

		if (!err)
			err = eerr;
	}
	f2fs_iput(sb, inode);	/* this call's */
	f2fs_iput(sb, inode);	/* the open's */
	return err ? err : aborted;
}

bool f2fs_in_atomic_write(struct f2fs_sb *sb, uint32_t ino)
{
	struct f2fs_inode *inode;
	bool atomic;

	if (f2fs_iget_req(sb, ino, &inode))
		return false;
	pthread_rwlock_rdlock(&inode->lock);
	atomic = inode->cow != NULL;
	pthread_rwlock_unlock(&inode->lock);
	f2fs_iput(sb, inode);
	return atomic;
}

/*
 * The kernel's f2fs_file_flush aborts for the starting task as it exits
 * (a crashed transaction must not stay visible until every other writer
 * closes); its release aborts at the last writer's close, which FUSE
 * reports only after close(2) returned, so the starter's close of the
 * last writable handle aborts here already.
 */
static bool flush_aborts(const struct f2fs_inode *inode, uint32_t owner, bool exiting)
{
	return inode->cow && owner && inode->atomic_owner == owner &&
	       (exiting || inode->write_count == 1);
}

int f2fs_flush_file(struct f2fs_sb *sb, uint32_t ino, uint32_t owner, bool exiting)
{
	struct f2fs_inode *inode;
	bool due;
	int err = f2fs_iget_req(sb, ino, &inode), aborted = 0;

	if (err)
		return err;
	pthread_rwlock_rdlock(&inode->lock);
	due = flush_aborts(inode, owner, exiting);
	pthread_rwlock_unlock(&inode->lock);
	if (due && f2fs_writable(sb)) {
		f2fs_lock_op(sb);
		pthread_rwlock_wrlock(&inode->lock);
		if (flush_aborts(inode, owner, exiting)) {
			err = f2fs_drop_atomic_write(sb, inode);
			aborted = 1;
		}
		pthread_rwlock_unlock(&inode->lock);
		f2fs_unlock_op(sb);
	}
	f2fs_iput(sb, inode);
	return err ? err : aborted;
}

int f2fs_release(struct f2fs_sb *sb, uint32_t ino)
{
	int err = f2fs_release_file(sb, ino, O_RDONLY);

	return err < 0 ? err : 0;
}

int f2fs_forget(struct f2fs_sb *sb, uint32_t ino)
{
	struct f2fs_inode *inode;
	int err;

	/* only an orphan can be due: no inode read for every forgotten one */
	if (!f2fs_writable(sb) || !f2fs_is_orphan(sb, ino))
		return 0;
	err = f2fs_iget_req(sb, ino, &inode);
	if (err)
		return err == -ESTALE ? 0 : err;	/* freed already */
	err = evict_unused(sb, inode);
	f2fs_iput(sb, inode);
	return err;
}

ssize_t f2fs_write(struct f2fs_sb *sb, uint32_t ino, const void *buf, size_t len, uint64_t off)
{
	return f2fs_write_as(sb, ino, buf, len, off, 0);
}

ssize_t f2fs_write_as(struct f2fs_sb *sb, uint32_t ino, const void *buf, size_t len,
		      uint64_t off, unsigned int priv)
{
	/*
	 * A write of 128 KiB or more of whole blocks is a run already: the
	 * cache would only copy it again and write it back later from memory
	 * gone cold, which on a buffered image cost a sequential writer 1.3-3x
	 * the daemon's CPU (measured with 128 KiB and 1 MiB writes).  It goes
	 * through; the cache is for the small and unaligned writes it merges.
	 */
	bool through = (priv & F2FS_WRITE_THROUGH) ||
		       (len >= F2FS_STREAM_WRITE && !(off % F2FS_BLKSIZE) && !(len % F2FS_BLKSIZE));
	struct f2fs_inode *inode;
	bool sync;
	ssize_t r;
	int err;

	/* through: the dirty pages are written back first, so the write lands over them */
	err = f2fs_begin_op(sb, ino, F2FS_OP_BALANCE | (through ? 0 : F2FS_OP_KEEP_PAGES) |
			    f2fs_op_priv(priv), &inode);
	if (err)
		return err;
	/* f2fs_file_write_iter: not even through a handle opened before chattr +i */
	if (!S_ISREG(inode->mode))
		r = S_ISDIR(inode->mode) ? -EISDIR : -EINVAL;
	else if (f2fs_is_immutable(inode) || f2fs_is_verity(inode))
		r = -EPERM;	/* verity: a handle opened for writing before it was enabled */
	else if (through)
		r = f2fs_file_write(sb, inode, buf, len, off);
	else
		r = f2fs_file_write_cached(sb, inode, buf, len, off);
	/* balance_dirty_pages: past the limit, the writer writes its own file back */
	if (r > 0 && inode->pages && f2fs_pc_over_limit(sb->pc)) {
		err = f2fs_writeback_inode(sb, inode, false);
		if (err)
			r = err;
	}
	sync = inode->flags & F2FS_SYNC_FL;
	f2fs_end_op(sb, inode);
	/* chattr +S (IS_SYNC): generic_write_sync makes every write durable */
	if (r > 0 && sync) {
		err = f2fs_fsync(sb, ino, false);
		if (err)
			return err;
	}
	return r;
}

int f2fs_setattr(struct f2fs_sb *sb, uint32_t ino, const struct f2fs_setattr *sa,
		 struct f2fs_stat *st)
{
	struct f2fs_inode *inode;
	struct f2fs_timespec now;
	int err;

	/* dirty pages stay: only a size change needs them (below) */
	err = f2fs_begin_op(sb, ino, F2FS_OP_BALANCE | F2FS_OP_KEEP_PAGES | f2fs_op_priv(sa->priv),
			    &inode);
	if (err)
		return err;
	f2fs_now(&now);
	/* f2fs_setattr and the VFS: an append-only inode keeps its size, owner,
	 * mode and given times; an immutable one everything */
	if (f2fs_is_immutable(inode) ||
	    (f2fs_is_append(inode) && (sa->valid & (F2FS_SET_MODE | F2FS_SET_UID | F2FS_SET_GID |
						   F2FS_SET_SIZE | F2FS_SET_TIMES_GIVEN)))) {
		err = -EPERM;
		goto out;
	}
	if (sa->valid & F2FS_SET_SIZE) {
		if (S_ISDIR(inode->mode)) {
			err = -EISDIR;
			goto out;
		}
		if (!S_ISREG(inode->mode)) {
			err = -EINVAL;
			goto out;
		}
		/* fsverity_prepare_setattr */
		if (f2fs_is_verity(inode)) {
			err = -EPERM;
			goto out;
		}
		/* fscrypt_prepare_setattr: resizing needs the key */
		err = f2fs_require_key(sb, inode);
		if (err)
			goto out;
		/* F2FS_COMPRESS_RELEASED: the file's blocks are read-only */
		if (f2fs_is_compressed(inode) && (inode->inline_flags & F2FS_COMPRESS_RELEASED) &&
		    sa->size != inode->size) {
			err = -EPERM;
			goto out;
		}
		/* the cache follows a cut (a file that may not be cached, as after
		 * chattr, writes its pages first); an extension leaves it alone */
		if (inode->pages && sa->size < inode->size) {
			if (f2fs_may_cache_write(sb, inode))
				f2fs_truncate_pages(sb, inode, sa->size);
			else
				err = f2fs_writeback_inode(sb, inode, false);
			if (err)
				goto out;
		}
		if (inode->cow)
			err = f2fs_atomic_truncate(sb, inode, sa->size);
		else if (sa->size != inode->size)
			err = f2fs_truncate(sb, inode, sa->size);
		if (err)
			goto out;
		/* f2fs_setattr: a size change, even to the same size, is a modification */
		f2fs_inode_set_time(inode, F2FS_TIME_MTIME, &now);
	}
	if (sa->valid & F2FS_SET_MODE) {
		inode->mode = (uint16_t)((inode->mode & S_IFMT) | (sa->mode & 07777));
		err = f2fs_acl_chmod(sb, inode);
		if (err)
			goto out;
	}
	if (sa->valid & (F2FS_SET_UID | F2FS_SET_GID)) {
		/* dquot_transfer before the owner changes: -EDQUOT leaves it as it was */
		uint32_t ids[F2FS_MAX_QUOTAS] = {
			(sa->valid & F2FS_SET_UID) ? sa->uid : inode->uid,
			(sa->valid & F2FS_SET_GID) ? sa->gid : inode->gid, inode->projid };

		err = f2fs_dquot_transfer(sb, inode, ids, false);
		if (err)
			goto out;
		inode->uid = ids[F2FS_USRQUOTA];
		inode->gid = ids[F2FS_GRPQUOTA];
	}
	if (sa->valid & F2FS_SET_ATIME)
		f2fs_inode_set_time(inode, F2FS_TIME_ATIME, &sa->atime);
	if (sa->valid & F2FS_SET_MTIME)
		f2fs_inode_set_time(inode, F2FS_TIME_MTIME, &sa->mtime);
	f2fs_inode_set_time(inode, F2FS_TIME_CTIME,
			    (sa->valid & F2FS_SET_CTIME) ? &sa->ctime : &now);
	err = f2fs_mark_inode_dirty(sb, inode);
	if (!err)
		f2fs_fill_stat(sb, inode, st);
out:
	f2fs_end_op(sb, inode);
	return err;
}

int f2fs_remove_privs(struct f2fs_sb *sb, uint32_t ino, const struct f2fs_cred *cred,
		      uint32_t *killed)
{
	struct f2fs_inode *inode;
	struct f2fs_timespec now;
	uint32_t kill = 0;
	int err;

	if (killed)
		*killed = 0;
	/* a mode change: the dirty pages stay */
	err = f2fs_begin_op(sb, ino, F2FS_OP_KEEP_PAGES, &inode);
	if (err)
		return err;
	if (S_ISREG(inode->mode)) {
		if (inode->mode & S_ISUID)
			kill |= S_ISUID;
		/* without group-exec it is mandatory locking, kept for the group's members */
		if ((inode->mode & S_ISGID) &&
		    ((inode->mode & S_IXGRP) || !f2fs_cred_in_group(cred, inode->gid)))
			kill |= S_ISGID;
	}
	if (kill && (f2fs_is_immutable(inode) || f2fs_is_append(inode))) {
		/* notify_change refuses a mode change to either */
		err = -EPERM;
	} else if (kill) {
		/* only the set-ID bits go, which no ACL entry mirrors */
		inode->mode &= (uint16_t)~kill;
		f2fs_now(&now);
		f2fs_inode_set_time(inode, F2FS_TIME_CTIME, &now);
		err = f2fs_mark_inode_dirty(sb, inode);
		if (!err && killed)
			*killed = kill;
	}
	f2fs_end_op(sb, inode);
	return err;
}

static int cmp_time(const uint8_t *node, uint32_t sec_a, uint32_t nsec_a, uint32_t sec_b,
		    uint32_t nsec_b)
{
	int64_t a = (int64_t)get_le64(node + sec_a), b = (int64_t)get_le64(node + sec_b);
	uint32_t na = get_le32(node + nsec_a), nb = get_le32(node + nsec_b);

	if (a != b)
		return a < b ? -1 : 1;
	return na < nb ? -1 : na > nb;
}

/* atime_needs_update with relatime_need_update; under the inode's lock */
static bool atime_needs_update(struct f2fs_sb *sb, const struct f2fs_inode *inode,
			       const struct f2fs_timespec *now)
{
	const uint8_t *n = inode->node;
	int64_t atime = (int64_t)get_le64(n + I_ATIME);

	if (!f2fs_writable(sb) || sb->opts.atime == F2FS_ATIME_NONE || (inode->flags & F2FS_NOATIME_FL))
		return false;
	if (!S_ISREG(inode->mode) && !S_ISDIR(inode->mode))
		return false;
	if (S_ISDIR(inode->mode) && sb->opts.nodiratime)
		return false;
	if (atime == now->sec && get_le32(n + I_ATIME_NSEC) == now->nsec)
		return false;
	if (sb->opts.atime == F2FS_ATIME_STRICT)
		return true;
	/* relatime: the first read after a change, then once a day */
	return cmp_time(n, I_MTIME, I_MTIME_NSEC, I_ATIME, I_ATIME_NSEC) >= 0 ||
	       cmp_time(n, I_CTIME, I_CTIME_NSEC, I_ATIME, I_ATIME_NSEC) >= 0 ||
	       now->sec - atime >= 24 * 60 * 60;
}

bool f2fs_atime_due(struct f2fs_sb *sb, uint32_t ino)
{
	struct f2fs_inode *inode;
	struct f2fs_timespec now;
	bool due;

	if (!f2fs_writable(sb) || f2fs_iget_req(sb, ino, &inode))
		return false;
	f2fs_now(&now);
	pthread_rwlock_rdlock(&inode->lock);
	due = atime_needs_update(sb, inode, &now);
	pthread_rwlock_unlock(&inode->lock);
	f2fs_iput(sb, inode);
	return due;
}

int f2fs_touch_atime(struct f2fs_sb *sb, uint32_t ino)
{
	struct f2fs_inode *inode;
	struct f2fs_timespec now;
	bool due;
	int err;

	if (!f2fs_writable(sb) || sb->opts.atime == F2FS_ATIME_NONE)
		return 0;
	err = f2fs_iget_req(sb, ino, &inode);
	if (err)
		return err;
	/* most reads change nothing: decide under the shared lock first */
	f2fs_now(&now);
	pthread_rwlock_rdlock(&inode->lock);
	due = atime_needs_update(sb, inode, &now);
	pthread_rwlock_unlock(&inode->lock);
	if (due) {
		/* the inode is held already: f2fs_begin_op's locks only */
		f2fs_lock_op(sb);
		pthread_rwlock_wrlock(&inode->lock);
		/* an unlinked inode freed meanwhile has nothing left to date */
		if (!inode->unhashed && atime_needs_update(sb, inode, &now)) {
			f2fs_inode_set_time(inode, F2FS_TIME_ATIME, &now);
			err = f2fs_mark_inode_dirty(sb, inode);
		}
		pthread_rwlock_unlock(&inode->lock);
		f2fs_unlock_op(sb);
	}
	f2fs_iput(sb, inode);
	return err;
}

/* The inode goes dirty whatever happened; the first error is the one told. */
static int mark_dirty_keep_err(struct f2fs_sb *sb, struct f2fs_inode *inode, int err)
{
	int derr = f2fs_mark_inode_dirty(sb, inode);

	return err ? err : derr;
}

/* f2fs_expand_inode_data: reserve (NEW_ADDR) every hole in [start, end). */
static int reserve_range(struct f2fs_sb *sb, struct f2fs_inode *inode, uint64_t start, uint64_t end)
{
	uint64_t need = 0;

	for (uint64_t b = start; b < end;) {
		uint32_t pblk, n;
		int err = f2fs_map_blocks(sb, inode, (uint32_t)b,
					  (uint32_t)F2FS_MIN(end - b, (uint64_t)UINT32_MAX), &pblk, &n);

		if (err)
			return err;
		if (pblk == NULL_ADDR)
			need += n;
		b += n;
	}
	if (need > f2fs_free_user_blocks(sb))
		return -ENOSPC;
	return f2fs_reserve_blocks(sb, inode, start, end);
}

/* Zero [off, off+len) inside the file (partial blocks by rewrite). */
static int zero_range(struct f2fs_sb *sb, struct f2fs_inode *inode, uint64_t off, uint64_t len)
{
	static const uint8_t zeros[F2FS_BLKSIZE];
	uint64_t end = off + len;

	while (off < end) {
		uint64_t bend = F2FS_MIN((off / F2FS_BLKSIZE + 1) * F2FS_BLKSIZE, end);
		uint32_t pblk, n;
		int err;

		if (off % F2FS_BLKSIZE == 0 && bend - off == F2FS_BLKSIZE) {
			/* whole blocks: punch them */
			uint64_t last = end / F2FS_BLKSIZE;

			err = f2fs_truncate_hole(sb, inode, off / F2FS_BLKSIZE, last);
			if (err)
				return err;
			off = last * F2FS_BLKSIZE;
			continue;
		}
		err = f2fs_map_blocks(sb, inode, (uint32_t)(off / F2FS_BLKSIZE), 1, &pblk, &n);
		if (err)
			return err;
		/* a dirty page of the block has its zeros already (f2fs_punch_pages)
		 * and overwrites the whole block when it is written back */
		if (pblk != NULL_ADDR && pblk != NEW_ADDR &&
		    !f2fs_pc_find(inode->pages, off / F2FS_BLKSIZE)) {
			ssize_t r = f2fs_file_write(sb, inode, zeros, (size_t)(bend - off), off);

			if (r < 0)
				return (int)r;
			if ((uint64_t)r != bend - off)
				return -ENOSPC;
		}
		off = bend;
	}
	return 0;
}

int f2fs_fallocate(struct f2fs_sb *sb, uint32_t ino, int mode, uint64_t off, uint64_t len)
{
	return f2fs_fallocate_as(sb, ino, mode, off, len, 0);
}

int f2fs_fallocate_as(struct f2fs_sb *sb, uint32_t ino, int mode, uint64_t off, uint64_t len,
		      unsigned int priv)
{
	struct f2fs_inode *inode;
	struct f2fs_timespec now;
	uint64_t end = off + len;
	int err;

	if (!f2fs_writable(sb))
		return f2fs_write_denied(sb);
	if (!len || end < off)
		return -EINVAL;
	if (mode & ~(FALLOC_FL_KEEP_SIZE | FALLOC_FL_PUNCH_HOLE | FALLOC_FL_ZERO_RANGE))
		return -EOPNOTSUPP;
	if ((mode & FALLOC_FL_PUNCH_HOLE) && !(mode & FALLOC_FL_KEEP_SIZE))
		return -EOPNOTSUPP;
	/* punching and zeroing keep the dirty pages: those inside the range go
	 * unwritten (f2fs_punch_pages below); other modes see the file as on disk */
	err = f2fs_begin_op(sb, ino, F2FS_OP_BALANCE | f2fs_op_priv(priv) |
			    (mode & (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_ZERO_RANGE) ?
			     F2FS_OP_KEEP_PAGES : 0), &inode);
	if (err)
		return err;
	if (!S_ISREG(inode->mode)) {
		err = S_ISDIR(inode->mode) ? -EISDIR : -ENODEV;
		goto out;
	}
	/* a file that may not be cached any more (as after chattr) writes its pages first */
	if (inode->pages && !f2fs_may_cache_write(sb, inode)) {
		err = f2fs_writeback_inode(sb, inode, false);
		if (err)
			goto out;
	}
	/*
	 * An atomic write's blocks are all in its COW inode until the commit:
	 * reserving or punching the file's own would change it outside the
	 * write, so that is refused, as moving its blocks is (pin, defragment).
	 */
	if (inode->cow) {
		err = -EINVAL;
		goto out;
	}
	/* vfs_fallocate: only plain allocation on an append-only file; verity
	 * files have no handle open for writing */
	if (f2fs_is_immutable(inode) || f2fs_is_verity(inode) ||
	    (f2fs_is_append(inode) && (mode & ~FALLOC_FL_KEEP_SIZE))) {
		err = -EPERM;
		goto out;
	}
	err = f2fs_require_key(sb, inode);
	if (err)
		goto out;
	/* f2fs_fallocate: a compressed file takes only plain allocation (of
	 * raw reserved blocks), and none while its blocks are released */
	if (f2fs_is_compressed(inode) && (mode & (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_ZERO_RANGE))) {
		err = -EOPNOTSUPP;
		goto out;
	}
	if (f2fs_is_compressed(inode) && (inode->inline_flags & F2FS_COMPRESS_RELEASED)) {
		err = -EPERM;
		goto out;
	}
	if (end > f2fs_max_file_blocks(inode) * F2FS_BLKSIZE) {
		err = -EFBIG;
		goto out;
	}
	if (inode->inline_flags & F2FS_INLINE_DATA) {
		err = f2fs_convert_inline_inode(sb, inode);
		if (err)
			goto out;
	}
	if (mode & (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_ZERO_RANGE))
		f2fs_punch_pages(sb, inode, off, end);
	if (mode & FALLOC_FL_PUNCH_HOLE) {
		if (off < inode->size)
			err = zero_range(sb, inode, off, F2FS_MIN(end, inode->size) - off);
	} else if (mode & FALLOC_FL_ZERO_RANGE) {
		uint64_t old_size = inode->size;

		/* zero what lies inside the file; past its end, reserved blocks read as zeros */
		if (off < old_size)
			err = zero_range(sb, inode, off, F2FS_MIN(end, old_size) - off);
		if (!err)
			err = reserve_range(sb, inode, off / F2FS_BLKSIZE,
					    (end + F2FS_BLKSIZE - 1) / F2FS_BLKSIZE);
		inode->size = old_size;
		if (end > old_size) {
			if ((mode & FALLOC_FL_KEEP_SIZE) || err)
				inode->advise |= FADVISE_KEEP_SIZE_BIT;
			else
				inode->size = end;
		}
	} else if (inode->inline_flags & F2FS_PIN_FILE) {
		uint64_t old_size = inode->size, last;

		err = f2fs_allocate_pinned_blocks(sb, inode, off / F2FS_BLKSIZE,
						  (end + F2FS_BLKSIZE - 1) / F2FS_BLKSIZE, &last);
		inode->size = (!err && !(mode & FALLOC_FL_KEEP_SIZE) && end > old_size) ? end : old_size;
		/* whole sections: blocks past the end stay allocated, as with KEEP_SIZE */
		if (last * F2FS_BLKSIZE > inode->size)
			inode->advise |= FADVISE_KEEP_SIZE_BIT;
	} else {
		uint64_t old_size = inode->size;

		err = reserve_range(sb, inode, off / F2FS_BLKSIZE,
				    (end + F2FS_BLKSIZE - 1) / F2FS_BLKSIZE);
		inode->size = (!err && !(mode & FALLOC_FL_KEEP_SIZE) && end > old_size) ? end : old_size;
		/* out of space part way, what was reserved past the end stays */
		if ((mode & FALLOC_FL_KEEP_SIZE) || (err && end > old_size))
			inode->advise |= FADVISE_KEEP_SIZE_BIT;
	}
	if (!err) {
		f2fs_now(&now);
		f2fs_inode_set_time(inode, F2FS_TIME_MTIME, &now);
		f2fs_inode_set_time(inode, F2FS_TIME_CTIME, &now);
	}
	/* also after a failure part way: blocks and nodes may be in the inode now */
	err = mark_dirty_keep_err(sb, inode, err);
out:
	f2fs_end_op(sb, inode);
	return err;
}

/*
 * fsync (f2fs_do_sync_file): data is already on the device (writes are not
 * buffered), so write the inode's direct nodes with the fsync mark and
 * issue one cache flush for both, as the kernel does (it waits for the data
 * and node writes, then calls f2fs_issue_flush once); concurrent fsyncs
 * commit as a group (node.c) with one flush between them; roll-forward recovery
 * replays the marked nodes after a crash.  Cases the roll-forward cannot
 * express take a full checkpoint, as the kernel's need_do_checkpoint
 * decides, and so does one whose replay could hold more blocks than the
 * checkpoint gives users (space freed since it was reused), and so do
 * compressed files (CP_COMPRESSED), whose clusters and i_compr_blocks a
 * checkpoint commits as one.
 */
bool f2fs_need_do_checkpoint(struct f2fs_sb *sb, const struct f2fs_inode *inode)
{
	return !S_ISREG(inode->mode) || inode->links != 1 ||
	       (inode->advise & FADVISE_LOST_PINO_BIT) ||
	       !f2fs_nat_checkpointed(sb, inode->pino) || sb->opts.fsync_checkpoint ||
	       f2fs_rollforward_may_overflow(sb) || f2fs_is_compressed(inode);
}

int f2fs_fsync(struct f2fs_sb *sb, uint32_t ino, bool datasync)
{
	struct f2fs_inode *inode;
	bool need_cp;
	int err;

	if (!f2fs_writable(sb))
		return f2fs_cp_error(sb) ? -EIO : 0;
	err = f2fs_begin_op(sb, ino, 0, &inode);
	if (err)
		return err;
	need_cp = f2fs_need_do_checkpoint(sb, inode);
	/* the nodes and one flush, shared with the fsyncs running alongside */
	if (!need_cp)
		err = f2fs_fsync_node_pages(sb, ino, !f2fs_nat_checkpointed(sb, ino), false);
	f2fs_end_op(sb, inode);
	if (need_cp)
		err = f2fs_sync_fs_data(sb);
	return err;
}

/*
 * A checkpoint an operation asks for (fsync, DIRSYNC, an atomic commit)
 * commits every dirty inode's size, so the data the page cache holds goes
 * first: a FUSE daemon never hears sync(2) or syncfs(2), whose data
 * therefore waits in it, and a crash after the checkpoint would leave
 * those files holes where the data was (the kernel's fsync checkpoint
 * writes no file data; its sync(2) has written it).
 */
int f2fs_sync_fs_data(struct f2fs_sb *sb)
{
	int err = f2fs_sync_data(sb);

	return err ? err : f2fs_sync_fs(sb, false);
}

/* setxattr and removexattr (value NULL): under the checkpoint and inode locks. */
static int change_xattr(struct f2fs_sb *sb, uint32_t ino, const char *name, const void *value,
			size_t size, int flags)
{
	struct f2fs_inode *inode;
	struct f2fs_timespec now;
	unsigned int op = value ? F2FS_OP_BALANCE : 0;
	int err;

	if (flags & F2FS_XATTR_PRIV_QUOTA)
		op |= F2FS_OP_QUOTA_PRIV;
	flags &= ~F2FS_XATTR_PRIV_QUOTA;
	err = f2fs_begin_op(sb, ino, op, &inode);
	if (err)
		return err;
	/* xattr_permission */
	err = f2fs_is_pinned(inode) ? -EPERM : f2fs_xattr_set(sb, inode, name, value, size, flags);
	if (!err) {
		f2fs_now(&now);
		f2fs_inode_set_time(inode, F2FS_TIME_CTIME, &now);
		err = f2fs_mark_inode_dirty(sb, inode);
	}
	f2fs_end_op(sb, inode);
	return err;
}

int f2fs_setxattr(struct f2fs_sb *sb, uint32_t ino, const char *name, const void *value,
		  size_t size, int flags)
{
	if (!value && size)
		return -EINVAL;
	/* an empty value is a value: pass a non-NULL pointer for it */
	return change_xattr(sb, ino, name, value ? value : "", size, flags);
}

int f2fs_removexattr(struct f2fs_sb *sb, uint32_t ino, const char *name)
{
	return change_xattr(sb, ino, name, NULL, 0, F2FS_XATTR_REPLACE);
}

/* FS_IOC_SET_ENCRYPTION_POLICY: on an empty directory, or its own policy again */
int f2fs_set_policy(struct f2fs_sb *sb, uint32_t ino, const struct f2fs_policy *p)
{
	struct f2fs_inode *inode;
	int err;

	if (!f2fs_writable(sb))
		return f2fs_write_denied(sb);
	err = f2fs_crypt_check_policy(sb, ino, p);
	if (err)
		return err;
	err = f2fs_begin_op(sb, ino, 0, &inode);
	if (err)
		return err;
	if (!S_ISDIR(inode->mode))
		err = -ENOTDIR;
	else if (!inode->links)
		err = -ENOENT;	/* IS_DEADDIR: removed while open */
	else if (!f2fs_is_encrypted(inode) && (err = f2fs_empty_dir(sb, inode)) <= 0)
		err = err ? err : -ENOTEMPTY;
	else
		err = f2fs_crypt_set_policy(sb, inode, p);
	f2fs_end_op(sb, inode);
	return err;
}

/* Periodic checkpoint: as the kernel's checkpoint thread with cp_interval. */
void f2fs_maintenance(struct f2fs_sb *sb)
{
	struct timespec ts;
	unsigned int interval = sb->opts.checkpoint_interval ? sb->opts.checkpoint_interval : 60;
	bool dirty;

	if (!f2fs_writable(sb))
		return;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	if (!sb->last_cp_time)
		sb->last_cp_time = (uint64_t)ts.tv_sec;
	if ((uint64_t)ts.tv_sec - sb->last_cp_time < interval)
		return;
	/* the checkpoint holds what was written before it */
	f2fs_sync_data(sb);
	pthread_mutex_lock(&sb->sm->lock);
	dirty = sb->sm->nr_dirty_sentries > 0;
	pthread_mutex_unlock(&sb->sm->lock);
	dirty = dirty || f2fs_nr_dirty_nodes(sb) > 0;
	if (dirty && f2fs_sync_fs(sb, false) == 0)
		sb->last_cp_time = (uint64_t)ts.tv_sec;
	else if (!dirty)
		sb->last_cp_time = (uint64_t)ts.tv_sec;
	f2fs_background_gc(sb);
}

/*
 * f2fs_setflags_common on F2FS_CASEFOLD_FL: directories only (the kernel's
 * f2fs_mask_flags), with the feature, and only while empty: the names
 * already there were hashed the other way.
 */
static int casefold_change(struct f2fs_sb *sb, struct f2fs_inode *inode)
{
	int empty;

	if (!S_ISDIR(inode->mode) || !f2fs_has_feature(sb, F2FS_FEATURE_CASEFOLD))
		return -EOPNOTSUPP;
	empty = f2fs_empty_dir(sb, inode);
	if (empty < 0)
		return empty;
	return empty ? 0 : -ENOTEMPTY;
}

/*
 * f2fs_setflags_common for F2FS_COMPR_FL and F2FS_NOCOMP_FL: not both;
 * compression is switched on for a directory or a file without blocks
 * (its empty inline area given up), and off likewise.
 */
static int change_compression(struct f2fs_sb *sb, struct f2fs_inode *inode, uint32_t next)
{
	bool on = next & F2FS_COMPR_FL;
	int err;

	if ((next & F2FS_COMPR_FL) && (next & F2FS_NOCOMP_FL))
		return -EINVAL;
	if (!((next ^ inode->flags) & F2FS_COMPR_FL))
		return 0;
	/* an atomic write's blocks are written raw into its COW inode */
	if (inode->cow)
		return -EINVAL;
	if (!f2fs_has_feature(sb, F2FS_FEATURE_COMPRESSION))
		return -EOPNOTSUPP;
	/* F2FS_HAS_BLOCKS: i_blocks beyond the inode block itself */
	if (S_ISREG(inode->mode) && inode->blocks > 1)
		return -EINVAL;
	if (!on) {
		f2fs_clear_compress_context(inode);
		return 0;
	}
	if (inode->inline_flags & F2FS_INLINE_DATA) {
		err = f2fs_convert_inline_inode(sb, inode);
		if (err)
			return err;
		if (S_ISREG(inode->mode) && inode->blocks > 1)
			return -EINVAL;
	}
	if (!f2fs_may_compress(sb, inode))
		return -EINVAL;
	f2fs_set_compress_context(sb, inode);
	return 0;
}

int f2fs_set_flags(struct f2fs_sb *sb, uint32_t ino, uint32_t fsflags)
{
	struct f2fs_inode *inode;
	struct f2fs_timespec now;
	uint32_t next, old;
	int err;

	if (!f2fs_writable(sb))
		return f2fs_write_denied(sb);
	/* f2fs_fileattr_set: bits it would not even report are refused, the
	 * reported but unsettable ones (encrypt, inline data, ...) ignored */
	if (fsflags & ~F2FS_GETTABLE_FS_FL)
		return -EOPNOTSUPP;
	err = f2fs_begin_op(sb, ino, 0, &inode);
	if (err)
		return err;
	next = (inode->flags & ~F2FS_SETTABLE_FS_FL) | (fsflags & F2FS_SETTABLE_FS_FL);
	/* f2fs_mask_flags: only directories pass their project on */
	if (!S_ISDIR(inode->mode))
		next &= ~F2FS_PROJINHERIT_FL;
	if ((next ^ inode->flags) & F2FS_CASEFOLD_FL) {
		err = casefold_change(sb, inode);
		if (err)
			goto out;
	}
	old = inode->flags;
	err = change_compression(sb, inode, next);
	if (err)
		goto out;
	if (next != old) {
		inode->flags = next;
		f2fs_now(&now);
		f2fs_inode_set_time(inode, F2FS_TIME_CTIME, &now);
		err = f2fs_mark_inode_dirty(sb, inode);
	}
out:
	f2fs_end_op(sb, inode);
	return err;
}

/* f2fs_ioc_setproject */
int f2fs_set_projid(struct f2fs_sb *sb, uint32_t ino, uint32_t projid, unsigned int priv)
{
	struct f2fs_inode *inode;
	int err;

	if (!f2fs_has_feature(sb, F2FS_FEATURE_PRJQUOTA))
		return projid ? -EOPNOTSUPP : 0;
	if (!f2fs_writable(sb))
		return -EROFS;
	err = f2fs_begin_op(sb, ino, f2fs_op_priv(priv), &inode);
	if (err)
		return err;
	/* the kernel's order: no extra attributes, the same id, a quota file,
	 * an i_projid that does not fit in the extra attributes */
	if (!(inode->inline_flags & F2FS_EXTRA_ATTR)) {
		err = -EOPNOTSUPP;
		goto out;
	}
	if (inode->projid == projid)
		goto out;
	if (f2fs_is_quota_file(sb, inode->ino)) {
		err = -EPERM;
		goto out;
	}
	if (I_PROJID + 4 > I_ADDR + (uint32_t)inode->extra_isize) {
		err = -EOVERFLOW;
		goto out;
	}
	{
		uint32_t ids[F2FS_MAX_QUOTAS] = { inode->uid, inode->gid, projid };
		struct f2fs_timespec now;

		err = f2fs_dquot_transfer(sb, inode, ids, false);
		if (err)
			goto out;
		inode->projid = projid;
		f2fs_now(&now);
		f2fs_inode_set_time(inode, F2FS_TIME_CTIME, &now);
		err = f2fs_mark_inode_dirty(sb, inode);
	}
out:
	f2fs_end_op(sb, inode);
	return err;
}

/* f2fs_ioc_{get,release,reserve}_compress_blocks, f2fs_ioc_{de,}compress_file */
int f2fs_compress_ioctl(struct f2fs_sb *sb, uint32_t ino, enum f2fs_compress_ioc op,
			uint64_t *blocks)
{
	struct f2fs_inode *inode;
	struct f2fs_timespec now;
	bool released;
	int err;

	*blocks = 0;
	if (!f2fs_has_feature(sb, F2FS_FEATURE_COMPRESSION))
		return -EOPNOTSUPP;
	if (op == F2FS_CIOC_GET_BLOCKS) {
		err = f2fs_iget_req(sb, ino, &inode);
		if (err)
			return err;
		pthread_rwlock_rdlock(&inode->lock);
		if (f2fs_is_compressed(inode))
			*blocks = inode->compr_blocks;
		else
			err = -EINVAL;
		pthread_rwlock_unlock(&inode->lock);
		f2fs_iput(sb, inode);
		return err;
	}
	if (!f2fs_writable(sb))
		return -EROFS;
	/* the file's clusters change only at the user's request in that mode */
	if ((op == F2FS_CIOC_COMPRESS || op == F2FS_CIOC_DECOMPRESS) && !sb->opts.compress_mode_user)
		return -EOPNOTSUPP;
	err = f2fs_begin_op(sb, ino, F2FS_OP_BALANCE, &inode);
	if (err)
		return err;
	released = inode->inline_flags & F2FS_COMPRESS_RELEASED;
	if (!f2fs_is_compressed(inode)) {
		err = -EINVAL;
		goto out;
	}
	switch (op) {
	case F2FS_CIOC_RELEASE:
		if (released) {
			err = -EINVAL;
			break;
		}
		inode->inline_flags |= F2FS_COMPRESS_RELEASED;
		if (inode->compr_blocks)
			err = f2fs_change_compress_reservation(sb, inode, true, blocks);
		break;
	case F2FS_CIOC_RESERVE:
		/* nothing released, nothing to take back */
		if (inode->compr_blocks)
			goto out;
		if (!released) {
			err = -EINVAL;
			break;
		}
		err = f2fs_change_compress_reservation(sb, inode, false, blocks);
		if (!err)
			inode->inline_flags &= ~F2FS_COMPRESS_RELEASED;
		break;
	default:
		if (released) {
			err = -EINVAL;
			break;
		}
		inode->compress_now = op == F2FS_CIOC_COMPRESS;
		err = f2fs_recompress_file(sb, inode, op == F2FS_CIOC_COMPRESS);
		inode->compress_now = false;
		break;
	}
	f2fs_now(&now);
	f2fs_inode_set_time(inode, F2FS_TIME_CTIME, &now);
	/* also after a failure part way: slots changed are in the inode */
	err = mark_dirty_keep_err(sb, inode, err);
out:
	f2fs_end_op(sb, inode);
	return err;
}

/* ---- writeback of every dirty inode (-o writeback) ---- */

/* Write one inode's dirty pages back, as a change would (f2fs_begin_op). */
static int writeback_ino(struct f2fs_sb *sb, uint32_t ino, bool background)
{
	struct f2fs_inode *inode;
	int err;

	if (!f2fs_writable(sb))
		return 0;
	f2fs_balance_fs(sb);
	f2fs_lock_op(sb);
	/* ino was listed before: the inode may have been freed since, which
	 * is -ESTALE from a request's load, not an inconsistency */
	err = f2fs_iget_req(sb, ino, &inode);
	if (err) {
		f2fs_unlock_op(sb);
		return err == -ENOENT || err == -ESTALE ? 0 : err;
	}
	pthread_rwlock_wrlock(&inode->lock);
	if (!inode->unhashed && !f2fs_cp_error(sb))
		err = f2fs_writeback_inode(sb, inode, background);
	pthread_rwlock_unlock(&inode->lock);
	f2fs_unlock_op(sb);
	f2fs_iput(sb, inode);
	return err;
}

int f2fs_writeback_file(struct f2fs_sb *sb, uint32_t ino)
{
	return writeback_ino(sb, ino, false);
}

int f2fs_sync_data(struct f2fs_sb *sb)
{
	uint32_t *inos, n;
	int err = 0;

	if (!sb->pc || !f2fs_pc_has_dirty(sb->pc))
		return 0;
	/* the inodes dirty now; what is dirtied meanwhile waits for the next pass */
	pthread_mutex_lock(&sb->pc->lock);
	n = (uint32_t)sb->pc->nr_inodes;
	pthread_mutex_unlock(&sb->pc->lock);
	inos = malloc(sizeof(*inos) * (n ? n : 1));
	if (!inos)
		return -ENOMEM;
	f2fs_pc_inodes(sb->pc, inos, &n);
	for (uint32_t i = 0; i < n; i++) {
		int e = writeback_ino(sb, inos[i], false);

		if (!err)
			err = e;
	}
	free(inos);
	return err;
}

unsigned int f2fs_writeback_background(struct f2fs_sb *sb, unsigned int expire_ms)
{
	unsigned int done = 0;
	uint32_t ino;

	if (!sb->pc)
		return 0;
	/* a bounded pass: the flusher comes back soon */
	while (done < 64 && f2fs_writable(sb) && f2fs_pc_oldest(sb->pc, expire_ms, &ino)) {
		if (writeback_ino(sb, ino, true))
			break;
		done++;
	}
	/* idle: what the cache kept of its memory goes back */
	if (!done)
		f2fs_pc_trim(sb->pc);
	return done;
}

/* A shut-down mount writes nothing more: dirty pages are dropped. */
void f2fs_drop_data(struct f2fs_sb *sb)
{
	uint32_t ino, n = 1;

	while (sb->pc && (f2fs_pc_inodes(sb->pc, &ino, &n), n)) {
		struct f2fs_inode *inode;

		if (f2fs_iget(sb, ino, &inode))
			break;
		pthread_rwlock_wrlock(&inode->lock);
		if (inode->pages) {
			f2fs_pc_free(sb->pc, f2fs_pc_detach(sb->pc, &inode->pages), false);
			f2fs_iput(sb, inode);
		}
		pthread_rwlock_unlock(&inode->lock);
		f2fs_iput(sb, inode);
		n = 1;
	}
}

void f2fs_get_wb_stats(struct f2fs_sb *sb, struct f2fs_wb_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (!sb->pc)
		return;
	pthread_mutex_lock(&sb->pc->lock);
	st->enabled = true;
	st->dirty_pages = sb->pc->nr_dirty;
	st->dirty_inodes = sb->pc->nr_inodes;
	st->limit_pages = sb->pc->limit;
	st->pages_dirtied = sb->pc->dirtied;
	st->pages_written = sb->pc->written;
	st->pages_dropped = sb->pc->dropped;
	st->wb_sync = sb->pc->wb_sync;
	st->wb_background = sb->pc->wb_background;
	pthread_mutex_unlock(&sb->pc->lock);
}
