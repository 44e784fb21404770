// SPDX-License-Identifier: GPL-2.0
/*
 * The core's public entry points (api.h) for reads: each takes an inode
 * reference for the duration of the call and dispatches to the mechanism
 * files; and the prologue every changing entry point (file.c, namei.c)
 * begins with.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "f2fs.h"
#include "fscrypt.h"

static ssize_t symlink_target(struct f2fs_sb *sb, struct f2fs_inode *inode, char *buf,
			      size_t size);

int f2fs_begin_op(struct f2fs_sb *sb, uint32_t ino, unsigned int flags, struct f2fs_inode **out)
{
	struct f2fs_inode *inode;
	int err;

	if (!f2fs_writable(sb))
		return f2fs_write_denied(sb);
	/* writing back dirty pages below allocates too */
	if ((flags & F2FS_OP_BALANCE) || f2fs_pc_has_dirty(sb->pc))
		f2fs_balance_fs(sb);
	f2fs_lock_op(sb);
	/* a shutdown may have come while this waited for cp_rwsem */
	if (f2fs_cp_error(sb)) {
		f2fs_unlock_op(sb);
		return -EIO;
	}
	err = f2fs_iget_req(sb, ino, &inode);
	if (!err && (flags & F2FS_OP_DIR) && !S_ISDIR(inode->mode)) {
		f2fs_iput(sb, inode);
		err = -ENOTDIR;
	}
	if (err) {
		f2fs_unlock_op(sb);
		return err;
	}
	pthread_rwlock_wrlock(&inode->lock);
	if (inode->unhashed) {
		/* freed since the caller found it: no change may rewrite a freed node */
		f2fs_end_op(sb, inode);
		return -ESTALE;
	}
	/* a change sees the file as the device holds it, unless it keeps the
	 * pages (write(2), attributes, truncation: f2fs_truncate_pages) */
	if (inode->pages && !(flags & F2FS_OP_KEEP_PAGES)) {
		err = f2fs_writeback_inode(sb, inode, false);
		if (err) {
			f2fs_end_op(sb, inode);
			return err;
		}
	}
	inode->dq_priv = flags & F2FS_OP_QUOTA_PRIV;
	*out = inode;
	return 0;
}

void f2fs_end_op(struct f2fs_sb *sb, struct f2fs_inode *inode)
{
	inode->dq_priv = false;
	pthread_rwlock_unlock(&inode->lock);
	f2fs_unlock_op(sb);
	f2fs_iput(sb, inode);
}

static void getattr_inode(struct f2fs_sb *sb, struct f2fs_inode *inode, struct f2fs_stat *st)
{
	f2fs_fill_stat(sb, inode, st);
	/* fscrypt_symlink_getattr: an encrypted symlink's size is its shown target's */
	if (S_ISLNK(inode->mode) && f2fs_is_encrypted(inode)) {
		ssize_t n = symlink_target(sb, inode, NULL, 0);

		if (n >= 0)
			st->size = (uint64_t)n;
	}
}

/* A referenced directory inode the caller names, or -ENOTDIR (-ESTALE if gone). */
static int iget_dir(struct f2fs_sb *sb, uint32_t ino, struct f2fs_inode **out)
{
	int err = f2fs_iget_req(sb, ino, out);

	if (err)
		return err;
	if (((*out)->mode & S_IFMT) != S_IFDIR) {
		f2fs_iput(sb, *out);
		return -ENOTDIR;
	}
	return 0;
}

/* request: ino comes from the caller, not from a dentry (f2fs_iget_req) */
static int getattr(struct f2fs_sb *sb, uint32_t ino, bool request, struct f2fs_stat *st)
{
	struct f2fs_inode *inode;
	int err = request ? f2fs_iget_req(sb, ino, &inode) : f2fs_iget(sb, ino, &inode);

	if (err)
		return err;
	getattr_inode(sb, inode, st);
	f2fs_iput(sb, inode);
	return 0;
}

int f2fs_getattr(struct f2fs_sb *sb, uint32_t ino, struct f2fs_stat *st)
{
	return getattr(sb, ino, true, st);
}

bool f2fs_has_casefold(const struct f2fs_sb *sb)
{
	return f2fs_has_feature(sb, F2FS_FEATURE_CASEFOLD);
}

bool f2fs_dir_casefolded(struct f2fs_sb *sb, uint32_t ino)
{
	struct f2fs_inode *d;
	bool cf;

	if (!f2fs_has_casefold(sb) || iget_dir(sb, ino, &d))
		return false;
	cf = d->flags & F2FS_CASEFOLD_FL;
	f2fs_iput(sb, d);
	return cf;
}

int f2fs_lookup(struct f2fs_sb *sb, uint32_t dir, const char *name, size_t len,
		struct f2fs_stat *st)
{
	struct f2fs_inode *d;
	unsigned int ftype;
	uint32_t ino;
	int err;

	if (len > F2FS_NAME_LEN)
		return -ENAMETOOLONG;
	if (!len)
		return -ENOENT;
	err = iget_dir(sb, dir, &d);
	if (err)
		return err;
	/*
	 * The directory stays locked until the inode is read: an unlink in
	 * between would free it, and the entry just read would then seem to
	 * name a free inode.
	 */
	pthread_rwlock_rdlock(&d->lock);
	err = f2fs_dir_lookup(sb, d, name, len, &ino, &ftype);
	if (!err && !f2fs_icache_has(sb, ino))
		f2fs_dir_ra_inodes(sb, d);
	if (!err)
		err = getattr(sb, ino, false, st);
	pthread_rwlock_unlock(&d->lock);
	f2fs_iput(sb, d);
	return err;
}

int f2fs_handle_getattr(struct f2fs_sb *sb, uint32_t ino, struct f2fs_stat *st)
{
	struct f2fs_inode *inode;
	/* a number out of range, a free NAT entry or a node of another inode: stale */
	int err = f2fs_iget_req(sb, ino, &inode);

	if (err)
		return err;
	/* unlinked: an orphan waiting for its last close, or left by a crash */
	if (inode->links == 0)
		err = -ESTALE;
	else
		getattr_inode(sb, inode, st);
	f2fs_iput(sb, inode);
	return err;
}

int f2fs_get_parent(struct f2fs_sb *sb, uint32_t dir, struct f2fs_stat *st)
{
	struct f2fs_inode *d;
	uint32_t ino;
	int err = iget_dir(sb, dir, &d);

	if (err)
		return err;
	/* ".." is stored in plain text and hashed as 0, also in encrypted directories */
	pthread_rwlock_rdlock(&d->lock);
	err = f2fs_dir_lookup_disk(sb, d, (const uint8_t *)"..", 2, &ino);
	pthread_rwlock_unlock(&d->lock);
	f2fs_iput(sb, d);
	if (err)
		return err;
	return f2fs_getattr(sb, ino, st);
}

int f2fs_readdir(struct f2fs_sb *sb, uint32_t dir, uint64_t off, f2fs_filldir_t fill, void *ctx)
{
	struct f2fs_inode *d;
	int err = iget_dir(sb, dir, &d);

	if (err)
		return err;
	pthread_rwlock_rdlock(&d->lock);
	err = f2fs_dir_iterate(sb, d, off, fill, ctx);
	pthread_rwlock_unlock(&d->lock);
	f2fs_iput(sb, d);
	return err;
}

/* A readdirplus batch gathered before its inodes are read. */
struct plus_entry {
	uint32_t ino;
	uint8_t type;
	uint16_t len;
	uint32_t name;		/* offset of the name in plus_batch.names */
	uint64_t next;
};

struct plus_batch {
	struct plus_entry *e;
	uint32_t n, max;
	char *names;
	size_t used, cap;
	int err;
};

static int plus_gather(void *arg, const char *name, size_t len, uint32_t ino,
		       unsigned int file_type, uint64_t next_off)
{
	struct plus_batch *b = arg;

	if (b->n == b->max)
		return 1;
	if (b->used + len > b->cap) {
		size_t cap = (b->cap + len) * 2;
		char *p = realloc(b->names, cap);

		if (!p) {
			b->err = -ENOMEM;
			return 1;
		}
		b->names = p;
		b->cap = cap;
	}
	memcpy(b->names + b->used, name, len);
	b->e[b->n++] = (struct plus_entry){ ino, (uint8_t)file_type, (uint16_t)len,
					    (uint32_t)b->used, next_off };
	b->used += len;
	return 0;
}

static bool dot_or_dotdot(const char *name, size_t len)
{
	return (len == 1 && name[0] == '.') || (len == 2 && name[0] == '.' && name[1] == '.');
}

/* Whether a readdirplus entry goes with its attributes. */
static bool plus_wanted(const struct plus_batch *b, const struct plus_entry *e, bool dirs_only)
{
	return !dot_or_dotdot(b->names + e->name, e->len) &&
	       (!dirs_only || e->type == F2FS_FT_DIR);
}

int f2fs_readdir_plus(struct f2fs_sb *sb, uint32_t dir, uint64_t off, uint32_t max,
		      bool dirs_only, f2fs_filldir_plus_t fill, void *ctx)
{
	struct plus_batch b = { .max = max ? max : 1 };
	struct f2fs_inode *d;
	uint32_t *inos;
	int err = iget_dir(sb, dir, &d);

	if (err)
		return err;
	b.e = malloc(b.max * sizeof(*b.e));
	inos = malloc(b.max * sizeof(*inos));
	if (!b.e || !inos) {
		err = -ENOMEM;
		goto out;
	}
	pthread_rwlock_rdlock(&d->lock);
	err = f2fs_dir_iterate(sb, d, off, plus_gather, &b);
	if (!err)
		err = b.err;
	/* Entries already gathered go out; the error resurfaces on the next call. */
	if (b.n)
		err = 0;
	if (!err) {
		uint32_t m = 0;

		for (uint32_t i = 0; i < b.n; i++)
			if (plus_wanted(&b, &b.e[i], dirs_only) && !f2fs_icache_has(sb, b.e[i].ino))
				inos[m++] = b.e[i].ino;
		f2fs_ra_inode_blocks(sb, inos, m);
	}
	for (uint32_t i = 0; !err && i < b.n; i++) {
		const struct plus_entry *e = &b.e[i];
		const char *name = b.names + e->name;
		struct f2fs_stat st;
		bool have = plus_wanted(&b, e, dirs_only) && getattr(sb, e->ino, false, &st) == 0;

		if (fill(ctx, name, e->len, e->ino, e->type, e->next, have ? &st : NULL))
			break;
	}
	pthread_rwlock_unlock(&d->lock);
out:
	free(inos);
	free(b.e);
	free(b.names);
	f2fs_iput(sb, d);
	return err;
}

ssize_t f2fs_read(struct f2fs_sb *sb, uint32_t ino, void *buf, size_t len, uint64_t off)
{
	struct f2fs_inode *inode;
	ssize_t r;
	int err = f2fs_iget_req(sb, ino, &inode);

	if (err)
		return err;
	switch (inode->mode & S_IFMT) {
	case S_IFREG:
		pthread_rwlock_rdlock(&inode->lock);
		r = f2fs_file_read(sb, inode, buf, len, off);
		pthread_rwlock_unlock(&inode->lock);
		break;
	case S_IFDIR:
		r = -EISDIR;
		break;
	default:
		r = -EINVAL;
		break;
	}
	f2fs_iput(sb, inode);
	return r;
}

int f2fs_precache_extents(struct f2fs_sb *sb, uint32_t ino)
{
	struct f2fs_inode *inode;
	int err = f2fs_iget_req(sb, ino, &inode);

	if (err)
		return err;
	pthread_rwlock_rdlock(&inode->lock);
	err = f2fs_precache_inode(sb, inode);
	pthread_rwlock_unlock(&inode->lock);
	f2fs_iput(sb, inode);
	return err;
}

int f2fs_node_blocks_estimate(struct f2fs_sb *sb, uint32_t ino, uint64_t *nodes)
{
	struct f2fs_inode *inode;
	uint64_t blocks;
	int err = f2fs_iget_req(sb, ino, &inode);

	if (err)
		return err;
	pthread_rwlock_rdlock(&inode->lock);
	blocks = (inode->size + F2FS_BLKSIZE - 1) / F2FS_BLKSIZE;
	*nodes = blocks > inode->addrs_per_inode ?
		 (blocks - inode->addrs_per_inode + f2fs_addrs_per_block(inode) - 1) /
		 f2fs_addrs_per_block(inode) : 0;
	pthread_rwlock_unlock(&inode->lock);
	f2fs_iput(sb, inode);
	return 0;
}

/*
 * The stored target: inline data or block 0, i_size bytes.  For an
 * encrypted symlink that is struct fscrypt_symlink_data, shown decrypted
 * with the key and as a no-key name without it, as the kernel does.
 */
static ssize_t symlink_target(struct f2fs_sb *sb, struct f2fs_inode *inode, char *buf,
			      size_t size)
{
	uint8_t *blk = f2fs_alloc_blocks(1);
	size_t n = (size_t)inode->size;
	ssize_t r;
	int err;

	if (!blk)
		return -ENOMEM;
	if (inode->size == 0 || inode->size >= F2FS_BLKSIZE) {
		r = f2fs_corrupted(sb, "symlink %u: bad target length %llu", inode->ino,
				   (unsigned long long)inode->size);
		goto out;
	}
	if (inode->inline_flags & F2FS_INLINE_DATA) {
		r = f2fs_read_inline_data(inode, blk, n, 0);
		if (r >= 0 && (size_t)r != n)
			r = f2fs_corrupted(sb, "symlink %u: short inline target", inode->ino);
	} else {
		err = f2fs_read_data_block(sb, inode, 0, blk);
		r = err < 0 ? err : err == 0 ? f2fs_corrupted(sb, "symlink %u: target block "
							       "missing", inode->ino) : (ssize_t)n;
	}
	if (r < 0)
		goto out;
	if (f2fs_is_encrypted(inode)) {
		const struct fscrypt_inode_info *ci;
		char tmp[F2FS_BLKSIZE];

		err = f2fs_get_crypt_info(sb, inode, &ci);
		if (err == -ENOKEY) {
			if (n < 2 || get_le16(blk) + 2u > n) {
				r = f2fs_corrupted(sb, "symlink %u: bad encrypted target", inode->ino);
				goto out;
			}
			r = fscrypt_nokey_name_encode(0, 0, blk + 2, get_le16(blk), tmp, sizeof(tmp));
		} else if (!err) {
			r = fscrypt_symlink_decrypt(ci, blk, n, tmp, sizeof(tmp));
		} else {
			r = err;
		}
		if (r < 0)
			goto out;
		memcpy(blk, tmp, (size_t)r);
		n = (size_t)r;
	}
	if (memchr(blk, 0, n)) {
		r = f2fs_corrupted(sb, "symlink %u: target contains a NUL byte", inode->ino);
		goto out;
	}
	r = (ssize_t)F2FS_MIN(n, size);
	if (buf)
		memcpy(buf, blk, (size_t)r);
	else
		r = (ssize_t)n;
out:
	free(blk);
	return r;
}

ssize_t f2fs_readlink(struct f2fs_sb *sb, uint32_t ino, char *buf, size_t size)
{
	struct f2fs_inode *inode;
	ssize_t r;
	int err = f2fs_iget_req(sb, ino, &inode);

	if (err)
		return err;
	if ((inode->mode & S_IFMT) != S_IFLNK)
		r = -EINVAL;
	else
		r = symlink_target(sb, inode, buf, size);
	f2fs_iput(sb, inode);
	return r;
}

ssize_t f2fs_getxattr(struct f2fs_sb *sb, uint32_t ino, const char *name, void *buf, size_t size)
{
	struct f2fs_inode *inode;
	ssize_t r;
	int err = f2fs_iget_req(sb, ino, &inode);

	if (err)
		return err;
	pthread_rwlock_rdlock(&inode->lock);
	r = f2fs_xattr_get(sb, inode, name, buf, size);
	pthread_rwlock_unlock(&inode->lock);
	f2fs_iput(sb, inode);
	return r;
}

ssize_t f2fs_listxattr(struct f2fs_sb *sb, uint32_t ino, char *buf, size_t size)
{
	struct f2fs_inode *inode;
	ssize_t r;
	int err = f2fs_iget_req(sb, ino, &inode);

	if (err)
		return err;
	pthread_rwlock_rdlock(&inode->lock);
	r = f2fs_xattr_list(sb, inode, buf, size);
	pthread_rwlock_unlock(&inode->lock);
	f2fs_iput(sb, inode);
	return r;
}
