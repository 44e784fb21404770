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
	/* A failure since a key went away hides the stale ci a holder still has. */
	if (inode->ci && !inode->ci_err && inode->ci_gen == sb->key_gen) {
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
	else if (err == -ENOKEY && why[0])	/* present but too short, as the kernel warns */
		f2fs_warn(sb, "inode %u: %s", inode->ino, why);
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

/* 0 if the inode is not encrypted or its key is present, else why not. */
int f2fs_require_key(struct f2fs_sb *sb, struct f2fs_inode *inode)
{
	const struct fscrypt_inode_info *ci;

	return f2fs_is_encrypted(inode) ? f2fs_get_crypt_info(sb, inode, &ci) : 0;
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

/* Inodes that had no key may now have one: let them try again. */
static void key_added(struct f2fs_sb *sb)
{
	pthread_mutex_lock(&sb->crypt_lock);
	sb->key_gen++;
	pthread_mutex_unlock(&sb->crypt_lock);
}

int f2fs_key_identifier(const void *raw, size_t len, uint8_t id[16])
{
	return fscrypt_key_identifier(raw, len, id);
}

void f2fs_wipe(void *p, size_t len)
{
	fscrypt_cleanse(p, len);
}

int f2fs_add_key(struct f2fs_sb *sb, const void *raw, size_t len, uint8_t id[16])
{
	int err = fscrypt_keyring_add_v2(sb->keyring, raw, len, id);

	if (!err)
		key_added(sb);
	return err;
}

int f2fs_add_key_v1(struct f2fs_sb *sb, const uint8_t desc[8], const void *raw, size_t len)
{
	int err = fscrypt_keyring_add_v1(sb->keyring, desc, raw, len);

	if (!err)
		key_added(sb);
	return err;
}

int f2fs_lock_key_memory(struct f2fs_sb *sb)
{
	return fscrypt_keyring_lock_memory(sb->keyring);
}

bool f2fs_key_present(struct f2fs_sb *sb, const uint8_t id[16])
{
	return fscrypt_keyring_lookup(sb->keyring, 2, id);
}

bool f2fs_key_present_v1(struct f2fs_sb *sb, const uint8_t desc[8])
{
	return fscrypt_keyring_lookup(sb->keyring, 1, desc);
}

/*
 * Remove a key: the derived keys of every cached inode go too (they are
 * re-derived, or refused, on next use), so no plaintext is reachable.
 */
static int remove_key(struct f2fs_sb *sb, int version, const uint8_t *spec)
{
	int err = fscrypt_keyring_remove(sb->keyring, version, spec);

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

int f2fs_remove_key(struct f2fs_sb *sb, const uint8_t id[16])
{
	return remove_key(sb, 2, id);
}

int f2fs_remove_key_v1(struct f2fs_sb *sb, const uint8_t desc[8])
{
	return remove_key(sb, 1, desc);
}

/* ---- new inodes and names ---- */

static int read_context(struct f2fs_sb *sb, struct f2fs_inode *inode, struct fscrypt_context *ctx)
{
	uint8_t raw[FSCRYPT_CONTEXT_MAX_SIZE];
	ssize_t n = f2fs_xattr_get_raw(sb, inode, FSCRYPT_XATTR_INDEX, FSCRYPT_XATTR_NAME, 1, raw,
				       sizeof(raw));

	if (n < 0)
		return n == -ENODATA ? f2fs_corrupted(sb, "inode %u: encrypted without a "
						      "context", inode->ino) : (int)n;
	if (fscrypt_context_parse(raw, (size_t)n, ctx))
		return f2fs_corrupted(sb, "inode %u: invalid encryption context", inode->ino);
	return 0;
}

int f2fs_crypt_inherit(struct f2fs_sb *sb, struct f2fs_inode *dir, struct f2fs_inode *inode)
{
	const struct fscrypt_inode_info *dci;
	struct fscrypt_context ctx;
	uint8_t raw[FSCRYPT_CONTEXT_MAX_SIZE];
	int n, err;

	if (!f2fs_is_encrypted(dir))
		return 0;
	/* fscrypt_prepare_new_inode: the directory's key must be present */
	err = f2fs_get_crypt_info(sb, dir, &dci);
	if (err)
		return err;
	inode->advise |= FADVISE_ENC_NAME_BIT;	/* i_name holds the encrypted name */
	if (!S_ISREG(inode->mode) && !S_ISDIR(inode->mode) && !S_ISLNK(inode->mode))
		return 0;			/* devices, fifos, sockets: names only */
	ctx = *fscrypt_inode_context(dci);
	f2fs_random_bytes(ctx.nonce, sizeof(ctx.nonce));
	n = fscrypt_context_serialize(&ctx, raw, sizeof(raw));
	if (n < 0)
		return n;
	err = f2fs_xattr_set_raw(sb, inode, FSCRYPT_XATTR_INDEX, FSCRYPT_XATTR_NAME, raw, (size_t)n,
				 F2FS_XATTR_CREATE);
	if (err)
		return err;
	inode->advise |= FADVISE_ENCRYPT_BIT;
	/* encrypted regular files are never inline (f2fs_may_inline_data) */
	if (S_ISREG(inode->mode))
		inode->inline_flags &= (uint8_t)~F2FS_INLINE_DATA;
	return 0;
}

int f2fs_crypt_disk_name(struct f2fs_sb *sb, struct f2fs_inode *dir, const char *name, size_t len,
			 uint8_t *out, size_t outlen)
{
	const struct fscrypt_inode_info *ci;
	int err = f2fs_get_crypt_info(sb, dir, &ci);

	if (err)
		return err;
	return fscrypt_fname_encrypt(ci, name, len, out, outlen);
}

int f2fs_crypt_permitted(struct f2fs_sb *sb, struct f2fs_inode *dir, struct f2fs_inode *inode)
{
	struct fscrypt_context a, b;
	const struct fscrypt_inode_info *ci;
	int err;

	if (!f2fs_is_encrypted(dir))
		return 0;
	err = f2fs_get_crypt_info(sb, dir, &ci);
	if (err)
		return err;
	/* special files carry no policy of their own: they may move anywhere */
	if (!S_ISREG(inode->mode) && !S_ISDIR(inode->mode) && !S_ISLNK(inode->mode))
		return 0;
	if (!f2fs_is_encrypted(inode))
		return -EXDEV;
	err = read_context(sb, dir, &a);
	if (!err)
		err = read_context(sb, inode, &b);
	if (err)
		return err;
	if (a.version != b.version || a.contents_mode != b.contents_mode ||
	    a.filenames_mode != b.filenames_mode || a.flags != b.flags ||
	    a.log2_data_unit_size != b.log2_data_unit_size ||
	    memcmp(a.key_spec, b.key_spec, sizeof(a.key_spec)))
		return -EXDEV;
	return 0;
}

int f2fs_crypt_symlink(struct f2fs_sb *sb, struct f2fs_inode *inode, const char *target,
		       size_t len, uint8_t *disk, size_t disklen)
{
	const struct fscrypt_inode_info *ci;
	int err = f2fs_get_crypt_info(sb, inode, &ci);

	if (err)
		return err;
	return fscrypt_symlink_encrypt(ci, target, len, disk, disklen);
}

/* ---- policies (FS_IOC_SET_ENCRYPTION_POLICY / GET) ---- */

static void policy_from_ctx(const struct fscrypt_context *c, struct f2fs_policy *p)
{
	memset(p, 0, sizeof(*p));
	p->version = c->version;
	p->contents_mode = c->contents_mode;
	p->filenames_mode = c->filenames_mode;
	p->flags = c->flags;
	p->log2_data_unit_size = c->log2_data_unit_size;
	memcpy(p->key_spec, c->key_spec, sizeof(p->key_spec));
}

int f2fs_get_policy(struct f2fs_sb *sb, uint32_t ino, struct f2fs_policy *p)
{
	struct f2fs_inode *inode;
	struct fscrypt_context ctx;
	int err = f2fs_iget_req(sb, ino, &inode);

	if (err)
		return err;
	pthread_rwlock_rdlock(&inode->lock);
	err = f2fs_is_encrypted(inode) ? read_context(sb, inode, &ctx) : -ENODATA;
	pthread_rwlock_unlock(&inode->lock);
	f2fs_iput(sb, inode);
	if (!err)
		policy_from_ctx(&ctx, p);
	return err;
}

/*
 * A present key too short for one of the policy's modes would leave every
 * file under it locked (the kernel refuses such keys when it sets a file
 * up): say so now rather than with ENOKEY on each file.  Checked by setting
 * up the keys a directory and a regular file under the policy would get.
 * A v1 key need not be present (the kernel sets v1 policies without it).
 */
static int check_key_size(struct f2fs_sb *sb, const struct fscrypt_context *ctx, uint32_t ino)
{
	static const enum fscrypt_file_type types[] = { FSCRYPT_FT_DIR, FSCRYPT_FT_REG };
	char why[160];

	if (!fscrypt_keyring_has_key(sb->keyring, ctx))
		return 0;
	for (size_t i = 0; i < ARRAY_SIZE(types); i++) {
		struct fscrypt_inode_info *ci = NULL;
		int err;

		why[0] = '\0';
		err = fscrypt_inode_info_new(sb->keyring, ctx, types[i], ino, sb->uuid, &ci, why,
					     sizeof(why));
		fscrypt_inode_info_free(ci);
		if (err == -ENOKEY && why[0]) {
			f2fs_err(sb, "set_policy: %s", why);
			return -EKEYREJECTED;
		}
		if (err && err != -ENOKEY)	/* -ENOKEY: removed meanwhile */
			return err;
	}
	return 0;
}

/* The context a policy gives a directory (a fresh nonce), checked as parsing would check it. */
static int policy_context(struct f2fs_sb *sb, const struct f2fs_policy *p,
			  struct fscrypt_context *ctx, uint8_t raw[FSCRYPT_CONTEXT_MAX_SIZE])
{
	int n;

	memset(ctx, 0, sizeof(*ctx));
	ctx->version = p->version;
	ctx->contents_mode = p->contents_mode;
	ctx->filenames_mode = p->filenames_mode;
	ctx->flags = p->flags;
	ctx->log2_data_unit_size = p->log2_data_unit_size;
	memcpy(ctx->key_spec, p->key_spec, sizeof(ctx->key_spec));
	f2fs_random_bytes(ctx->nonce, sizeof(ctx->nonce));
	n = fscrypt_context_serialize(ctx, raw, FSCRYPT_CONTEXT_MAX_SIZE);
	if (n < 0)
		return n;
	if (fscrypt_context_parse(raw, (size_t)n, ctx))
		return -EINVAL;
	return n;
}

/*
 * fscrypt_ioctl_set_policy, before the directory is looked at: the
 * filesystem can encrypt, this build has the modes, a v2 policy's key has
 * been added and is long enough.
 */
int f2fs_crypt_check_policy(struct f2fs_sb *sb, uint32_t ino, const struct f2fs_policy *p)
{
	struct fscrypt_context ctx;
	uint8_t raw[FSCRYPT_CONTEXT_MAX_SIZE];
	int n;

	if (!f2fs_has_feature(sb, F2FS_FEATURE_ENCRYPT)) {
		f2fs_err(sb, "set_policy: the filesystem lacks the \"encrypt\" feature");
		return -EOPNOTSUPP;
	}
	n = policy_context(sb, p, &ctx, raw);
	if (n < 0)
		return n;
	if (!fscrypt_mode_supported(ctx.contents_mode) || !fscrypt_mode_supported(ctx.filenames_mode)) {
		f2fs_err(sb, "set_policy: %s/%s is not supported by this build",
			 fscrypt_mode_name(ctx.contents_mode), fscrypt_mode_name(ctx.filenames_mode));
		return -EOPNOTSUPP;
	}
	if (ctx.version == 2 && !fscrypt_keyring_lookup(sb->keyring, 2, ctx.key_spec))
		return -ENOKEY;
	return check_key_size(sb, &ctx, ino);
}

/*
 * An empty directory (the caller's check, under its write lock) takes the
 * policy: a fresh nonce, the encrypt bit.  Setting the policy a directory
 * already has is not an error; another one is -EEXIST.
 */
int f2fs_crypt_set_policy(struct f2fs_sb *sb, struct f2fs_inode *dir, const struct f2fs_policy *p)
{
	struct fscrypt_context ctx;
	uint8_t raw[FSCRYPT_CONTEXT_MAX_SIZE];
	int n, err;

	if (f2fs_is_encrypted(dir)) {
		struct f2fs_policy have;

		err = read_context(sb, dir, &ctx);
		if (err)
			return err;
		policy_from_ctx(&ctx, &have);
		return memcmp(&have, p, sizeof(have)) ? -EEXIST : 0;
	}
	n = policy_context(sb, p, &ctx, raw);
	if (n < 0)
		return n;
	err = f2fs_xattr_set_raw(sb, dir, FSCRYPT_XATTR_INDEX, FSCRYPT_XATTR_NAME, raw, (size_t)n,
				 F2FS_XATTR_CREATE);
	if (err)
		return err;
	dir->advise |= FADVISE_ENCRYPT_BIT;
	dir->ci_err = 0;
	return f2fs_mark_inode_dirty(sb, dir);
}
