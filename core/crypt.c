// SPDX-License-Identifier: GPL-2.0
/*
 * fscrypt glue: the mount's keyring, the per-inode encryption info derived
 * from the context xattr (index 9, name "c"), and the crypt context a bio
 * carries so the device layer decrypts and encrypts like inline-crypto
 * hardware.  The cryptography itself is in crypto/.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "f2fs.h"
#include "fscrypt.h"

static const struct f2fs_crypt_ops fscrypt_ops = {
	.decrypt = fscrypt_decrypt_units,
	.encrypt = fscrypt_encrypt_units,
};

int f2fs_crypt_init(struct f2fs_sb *sb)
{
	pthread_mutex_init(&sb->crypt_lock, NULL);
	return fscrypt_keyring_new(&sb->keyring);
}

void f2fs_crypt_destroy(struct f2fs_sb *sb)
{
	if (sb->keyring)
		fscrypt_keyring_free(sb->keyring);
	sb->keyring = NULL;
	pthread_mutex_destroy(&sb->crypt_lock);
}

static enum fscrypt_file_type crypt_type(uint32_t mode)
{
	if (S_ISDIR(mode))
		return FSCRYPT_FT_DIR;
	if (S_ISLNK(mode))
		return FSCRYPT_FT_LNK;
	return FSCRYPT_FT_REG;
}

/*
 * The inode's encryption info, derived once while its key is present.
 * -ENOKEY without the key, -EOPNOTSUPP for a mode this build lacks,
 * -EUCLEAN for a missing or invalid context.
 */
int f2fs_get_crypt_info(struct f2fs_sb *sb, struct f2fs_inode *inode,
			const struct fscrypt_inode_info **out)
{
	struct fscrypt_context ctx;
	struct fscrypt_inode_info *ci = NULL;
	uint8_t raw[FSCRYPT_CONTEXT_MAX_SIZE];
	char why[160] = "";
	ssize_t n;
	int err;

	if (!f2fs_is_encrypted(inode))
		return -EINVAL;
	pthread_mutex_lock(&sb->crypt_lock);
	if (inode->ci && inode->ci_gen == sb->key_gen) {
		*out = inode->ci;
		pthread_mutex_unlock(&sb->crypt_lock);
		return 0;
	}
	if (inode->ci_err && inode->ci_gen == sb->key_gen) {
		err = inode->ci_err;	/* nothing changed since the last try */
		goto out;
	}
	n = f2fs_xattr_get_raw(sb, inode, FSCRYPT_XATTR_INDEX, FSCRYPT_XATTR_NAME, 1, raw,
			       sizeof(raw));
	if (n < 0) {
		err = n == -ENODATA || n == -ERANGE
			      ? f2fs_corrupted(sb, "inode %u: encrypted but its context is %s",
					       inode->ino, n == -ENODATA ? "missing" : "too large")
			      : (int)n;
		goto cache;
	}
	err = fscrypt_context_parse(raw, (size_t)n, &ctx);
	if (err) {
		err = f2fs_corrupted(sb, "inode %u: invalid encryption context", inode->ino);
		goto cache;
	}
	err = fscrypt_inode_info_new(sb->keyring, &ctx, crypt_type(inode->mode), inode->ino,
				     sb->uuid, &ci, why, sizeof(why));
	if (err == -EOPNOTSUPP)
		f2fs_warn(sb, "inode %u: %s", inode->ino, why[0] ? why : "unsupported encryption");
	if (!err) {
		if (inode->ci)
			fscrypt_inode_info_free(inode->ci);
		inode->ci = ci;
		*out = ci;
	}
cache:
	inode->ci_err = err;
	inode->ci_gen = sb->key_gen;
out:
	pthread_mutex_unlock(&sb->crypt_lock);
	return err;
}

void f2fs_put_crypt_info(struct f2fs_inode *inode)
{
	if (inode->ci)
		fscrypt_inode_info_free(inode->ci);
	inode->ci = NULL;
}

/* The crypt context of a bio for blocks from lblk of an encrypted file. */
void f2fs_crypt_ctx(const struct fscrypt_inode_info *ci, uint64_t lblk, struct f2fs_crypt_ctx *c)
{
	c->ops = &fscrypt_ops;
	c->key = fscrypt_contents_key(ci);
	c->dun = fscrypt_dun(ci, lblk);
}

uint32_t f2fs_crypt_limit_blocks(const struct fscrypt_inode_info *ci, uint64_t lblk, uint32_t nr)
{
	return (uint32_t)fscrypt_limit_io_blocks(ci, lblk, nr);
}

/* ---- keys ---- */

int f2fs_add_key(struct f2fs_sb *sb, const void *raw, size_t len, uint8_t id[16])
{
	int err = fscrypt_keyring_add_v2(sb->keyring, raw, len, id);

	if (!err) {
		pthread_mutex_lock(&sb->crypt_lock);
		sb->key_gen++;		/* inodes that had no key may now have one */
		pthread_mutex_unlock(&sb->crypt_lock);
	}
	return err;
}

bool f2fs_key_present(struct f2fs_sb *sb, const uint8_t id[16])
{
	return fscrypt_keyring_lookup(sb->keyring, 2, id);
}

/*
 * Remove a key: the derived keys of every cached inode go too (they are
 * re-derived, or refused, on next use), so no plaintext is reachable.
 */
int f2fs_remove_key(struct f2fs_sb *sb, const uint8_t id[16])
{
	int err = fscrypt_keyring_remove(sb->keyring, 2, id);

	if (err)
		return err;
	pthread_mutex_lock(&sb->icache_lock);
	pthread_mutex_lock(&sb->crypt_lock);
	sb->key_gen++;
	for (int b = 0; b < F2FS_ICACHE_BUCKETS; b++)
		for (struct f2fs_inode *i = sb->icache[b]; i; i = i->hnext)
			if (i->ci && i->refcount == 0)
				f2fs_put_crypt_info(i);
	pthread_mutex_unlock(&sb->crypt_lock);
	pthread_mutex_unlock(&sb->icache_lock);
	/* referenced inodes keep theirs until their holder is done: ci_gen
	 * no longer matches, so nobody picks them up again */
	f2fs_cache_drop_all(sb->cache);
	return 0;
}
