// SPDX-License-Identifier: GPL-2.0
/*
 * The core's public entry points (api.h): each takes an inode reference
 * for the duration of the call and dispatches to the mechanism files.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "f2fs.h"

int f2fs_getattr(struct f2fs_sb *sb, uint32_t ino, struct f2fs_stat *st)
{
	struct f2fs_inode *inode;
	int err = f2fs_iget(sb, ino, &inode);

	if (err)
		return err;
	f2fs_fill_stat(sb, inode, st);
	f2fs_iput(sb, inode);
	return 0;
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
	err = f2fs_iget(sb, dir, &d);
	if (err)
		return err;
	if ((d->mode & S_IFMT) != S_IFDIR) {
		f2fs_iput(sb, d);
		return -ENOTDIR;
	}
	pthread_rwlock_rdlock(&d->lock);
	err = f2fs_dir_lookup(sb, d, name, len, &ino, &ftype);
	pthread_rwlock_unlock(&d->lock);
	f2fs_iput(sb, d);
	if (err)
		return err;
	return f2fs_getattr(sb, ino, st);
}

int f2fs_readdir(struct f2fs_sb *sb, uint32_t dir, uint64_t off, f2fs_filldir_t fill, void *ctx)
{
	struct f2fs_inode *d;
	int err = f2fs_iget(sb, dir, &d);

	if (err)
		return err;
	if ((d->mode & S_IFMT) != S_IFDIR) {
		f2fs_iput(sb, d);
		return -ENOTDIR;
	}
	pthread_rwlock_rdlock(&d->lock);
	err = f2fs_dir_iterate(sb, d, off, fill, ctx);
	pthread_rwlock_unlock(&d->lock);
	f2fs_iput(sb, d);
	return err;
}

ssize_t f2fs_read(struct f2fs_sb *sb, uint32_t ino, void *buf, size_t len, uint64_t off)
{
	struct f2fs_inode *inode;
	ssize_t r;
	int err = f2fs_iget(sb, ino, &inode);

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

ssize_t f2fs_readlink(struct f2fs_sb *sb, uint32_t ino, char *buf, size_t size)
{
	struct f2fs_inode *inode;
	uint8_t *blk = NULL;
	ssize_t r;
	size_t n;
	int err = f2fs_iget(sb, ino, &inode);

	if (err)
		return err;
	if ((inode->mode & S_IFMT) != S_IFLNK) {
		r = -EINVAL;
		goto out;
	}
	if (f2fs_is_encrypted(inode)) {
		r = -ENOKEY;
		goto out;
	}
	if (inode->size == 0 || inode->size >= F2FS_BLKSIZE) {
		r = f2fs_corrupted(sb, "symlink %u: bad target length %llu", ino,
				   (unsigned long long)inode->size);
		goto out;
	}
	n = (size_t)inode->size;
	if (inode->inline_flags & F2FS_INLINE_DATA) {
		r = f2fs_read_inline_data(inode, buf, F2FS_MIN(n, size), 0);
	} else {
		blk = f2fs_alloc_blocks(1);
		if (!blk) {
			r = -ENOMEM;
			goto out;
		}
		err = f2fs_read_data_block(sb, inode, 0, blk);
		if (err < 0) {
			r = err;
			goto out;
		}
		if (err == 0) {
			r = f2fs_corrupted(sb, "symlink %u: target block missing", ino);
			goto out;
		}
		r = (ssize_t)F2FS_MIN(n, size);
		memcpy(buf, blk, (size_t)r);
	}
	if (r >= 0 && memchr(buf, 0, (size_t)r))
		r = f2fs_corrupted(sb, "symlink %u: target contains a NUL byte", ino);
out:
	free(blk);
	f2fs_iput(sb, inode);
	return r;
}

ssize_t f2fs_getxattr(struct f2fs_sb *sb, uint32_t ino, const char *name, void *buf, size_t size)
{
	struct f2fs_inode *inode;
	ssize_t r;
	int err = f2fs_iget(sb, ino, &inode);

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
	int err = f2fs_iget(sb, ino, &inode);

	if (err)
		return err;
	pthread_rwlock_rdlock(&inode->lock);
	r = f2fs_xattr_list(sb, inode, buf, size);
	pthread_rwlock_unlock(&inode->lock);
	f2fs_iput(sb, inode);
	return r;
}
