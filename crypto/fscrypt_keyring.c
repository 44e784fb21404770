// SPDX-License-Identifier: GPL-2.0
/*
 * Master keys and per-inode key derivation (kernel fs/crypto/keyring.c,
 * keysetup.c, keysetup_v1.c).
 *
 * v2 keys are kept as their HKDF-SHA512 pseudorandom key only; v1 keys as
 * raw bytes, since their KDF is AES-128-ECB keyed by the file nonce.  Key
 * memory is locked and excluded from core dumps, and wiped on removal.
 * Removing a key does not reach into inode infos already derived from it:
 * as in the kernel, the caller evicts those.
 *
 * Keys are found through an array of pointers sorted by (version, spec):
 * every inode set up looks its key up, and a mount may hold many keys.
 */
#include "fscrypt_internal.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct mkey {
	int version;
	uint8_t spec[FSCRYPT_KEY_IDENTIFIER_LEN];	/* v1: descriptor + zeros */
	size_t rawlen;
	uint8_t raw[FSCRYPT_MAX_MASTER_KEY];		/* v1 only */
	uint8_t prk[FSCRYPT_PRK_LEN];			/* v2 only */
};
_Static_assert(sizeof(struct mkey) <= FSCRYPT_SLOT_SIZE, "slot size");

struct fscrypt_keyring {
	pthread_mutex_t lock;
	struct mkey **keys;		/* sorted: see cmp_key */
	size_t nkeys, cap;
	struct fscrypt_pool *pool;
};

struct fscrypt_pool *fscrypt_keyring_pool(struct fscrypt_keyring *kr)
{
	return kr->pool;
}

static void say(char *why, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void say(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;

	if (!why || !len)
		return;
	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
}

int fscrypt_keyring_new(struct fscrypt_keyring **out)
{
	struct fscrypt_keyring *kr = calloc(1, sizeof(*kr));

	if (!kr)
		return -ENOMEM;
	kr->pool = fscrypt_pool_new();
	if (!kr->pool || pthread_mutex_init(&kr->lock, NULL)) {
		fscrypt_pool_put(kr->pool);
		free(kr);
		return -ENOMEM;
	}
	*out = kr;
	return 0;
}

void fscrypt_keyring_free(struct fscrypt_keyring *kr)
{
	if (!kr)
		return;
	for (size_t i = 0; i < kr->nkeys; i++)
		fscrypt_pool_free(kr->pool, kr->keys[i]);
	free(kr->keys);
	pthread_mutex_destroy(&kr->lock);
	fscrypt_pool_put(kr->pool);
	free(kr);
}

static size_t spec_len(int version)
{
	return version == 1 ? FSCRYPT_KEY_DESCRIPTOR_LEN : FSCRYPT_KEY_IDENTIFIER_LEN;
}

/* Order of the index: by version, then by the spec's bytes. */
static int cmp_key(int version, const uint8_t *spec, const struct mkey *k)
{
	if (version != k->version)
		return version < k->version ? -1 : 1;
	return memcmp(spec, k->spec, spec_len(version));
}

/* Index of the first key not ordered before (version, spec); lock held. */
static size_t lower_bound(const struct fscrypt_keyring *kr, int version, const uint8_t *spec)
{
	size_t lo = 0, hi = kr->nkeys;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (cmp_key(version, spec, kr->keys[mid]) > 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static struct mkey *find(struct fscrypt_keyring *kr, int version, const uint8_t *spec)
{
	size_t i = lower_bound(kr, version, spec);

	if (i < kr->nkeys && cmp_key(version, spec, kr->keys[i]) == 0)
		return kr->keys[i];
	return NULL;
}

/* Put k (absent so far) into the index; lock held.  -ENOMEM. */
static int insert(struct fscrypt_keyring *kr, struct mkey *k)
{
	size_t i = lower_bound(kr, k->version, k->spec);

	if (kr->nkeys == kr->cap) {
		size_t cap = kr->cap ? kr->cap * 2 : 16;
		struct mkey **arr = realloc(kr->keys, cap * sizeof(*arr));

		if (!arr)
			return -ENOMEM;
		kr->keys = arr;
		kr->cap = cap;
	}
	memmove(&kr->keys[i + 1], &kr->keys[i], (kr->nkeys - i) * sizeof(*kr->keys));
	kr->keys[i] = k;
	kr->nkeys++;
	return 0;
}

/* Key bytes compared in time independent of where they differ. */
static bool same_bytes(const uint8_t *a, const uint8_t *b, size_t len)
{
	uint8_t d = 0;

	for (size_t i = 0; i < len; i++)
		d |= a[i] ^ b[i];
	return d == 0;
}

static struct mkey *mkey_alloc(struct fscrypt_keyring *kr)
{
	return fscrypt_pool_alloc(kr->pool);
}

int fscrypt_key_identifier(const void *raw, size_t len, uint8_t id[FSCRYPT_KEY_IDENTIFIER_LEN])
{
	uint8_t prk[FSCRYPT_PRK_LEN];
	int err;

	if (!raw || len < FSCRYPT_MIN_MASTER_KEY || len > FSCRYPT_MAX_MASTER_KEY)
		return -EINVAL;
	err = fscrypt_hkdf_extract(raw, len, prk);
	if (!err)
		err = fscrypt_hkdf_expand(prk, HKDF_CTX_KEY_IDENTIFIER, NULL, 0, id,
					  FSCRYPT_KEY_IDENTIFIER_LEN);
	fscrypt_cleanse(prk, sizeof(prk));
	return err;
}

int fscrypt_keyring_add_v2(struct fscrypt_keyring *kr, const void *raw, size_t len,
			   uint8_t id[FSCRYPT_KEY_IDENTIFIER_LEN])
{
	struct mkey *k;
	int err;

	if (!raw || len < FSCRYPT_MIN_MASTER_KEY || len > FSCRYPT_MAX_MASTER_KEY)
		return -EINVAL;
	k = mkey_alloc(kr);
	if (!k)
		return -ENOMEM;
	k->version = 2;
	k->rawlen = len;
	err = fscrypt_hkdf_extract(raw, len, k->prk);
	if (!err)
		err = fscrypt_hkdf_expand(k->prk, HKDF_CTX_KEY_IDENTIFIER, NULL, 0, k->spec,
					  FSCRYPT_KEY_IDENTIFIER_LEN);
	if (err) {
		fscrypt_pool_free(kr->pool, k);
		return err;
	}
	memcpy(id, k->spec, FSCRYPT_KEY_IDENTIFIER_LEN);
	pthread_mutex_lock(&kr->lock);
	/* same identifier means same key (up to an HKDF collision) */
	if (find(kr, 2, k->spec)) {
		pthread_mutex_unlock(&kr->lock);
		fscrypt_pool_free(kr->pool, k);
		return 0;
	}
	err = insert(kr, k);
	pthread_mutex_unlock(&kr->lock);
	if (err)
		fscrypt_pool_free(kr->pool, k);
	return err;
}

int fscrypt_keyring_add_v1(struct fscrypt_keyring *kr,
			   const uint8_t desc[FSCRYPT_KEY_DESCRIPTOR_LEN], const void *raw,
			   size_t len)
{
	struct mkey *k, *old;
	int err;

	if (!raw || len < FSCRYPT_MIN_MASTER_KEY || len > FSCRYPT_MAX_MASTER_KEY)
		return -EINVAL;
	k = mkey_alloc(kr);
	if (!k)
		return -ENOMEM;
	k->version = 1;
	k->rawlen = len;
	memcpy(k->raw, raw, len);
	memcpy(k->spec, desc, FSCRYPT_KEY_DESCRIPTOR_LEN);
	pthread_mutex_lock(&kr->lock);
	old = find(kr, 1, desc);
	if (old) {
		/*
		 * Nothing proves which key a descriptor names; replacing it would
		 * leave inodes set up from the old one next to inodes set up from
		 * the new.  The same key again is fine, another one is refused.
		 */
		err = old->rawlen == len && same_bytes(old->raw, raw, len) ? 0 : -EEXIST;
	} else {
		err = insert(kr, k);
		if (!err) {
			pthread_mutex_unlock(&kr->lock);
			return 0;
		}
	}
	pthread_mutex_unlock(&kr->lock);
	fscrypt_pool_free(kr->pool, k);
	return err;
}

int fscrypt_keyring_remove(struct fscrypt_keyring *kr, int version, const uint8_t *spec)
{
	struct mkey *k;
	size_t i;

	pthread_mutex_lock(&kr->lock);
	i = lower_bound(kr, version, spec);
	if (i == kr->nkeys || cmp_key(version, spec, kr->keys[i]) != 0) {
		pthread_mutex_unlock(&kr->lock);
		return -ENOKEY;
	}
	k = kr->keys[i];
	memmove(&kr->keys[i], &kr->keys[i + 1], (kr->nkeys - i - 1) * sizeof(*kr->keys));
	kr->nkeys--;
	pthread_mutex_unlock(&kr->lock);
	fscrypt_pool_free(kr->pool, k);
	return 0;
}

int fscrypt_keyring_lock_memory(struct fscrypt_keyring *kr)
{
	return fscrypt_pool_lock(kr->pool);
}

bool fscrypt_keyring_lookup(struct fscrypt_keyring *kr, int version, const uint8_t *spec)
{
	bool r;

	pthread_mutex_lock(&kr->lock);
	r = find(kr, version, spec) != NULL;
	pthread_mutex_unlock(&kr->lock);
	return r;
}

bool fscrypt_keyring_has_key(struct fscrypt_keyring *kr, const struct fscrypt_context *ctx)
{
	return fscrypt_keyring_lookup(kr, ctx->version, ctx->key_spec);
}

/* v2: derive the mode key (per-file, DIRECT_KEY or IV_INO_LBLK_*) */
static int derive_v2(const struct mkey *mk, const struct fscrypt_context *ctx, uint8_t mode,
		     enum fscrypt_file_type type, const uint8_t uuid[16],
		     struct fscrypt_inode_info *ci)
{
	unsigned int ks = fscrypt_mode_keysize(mode);
	uint8_t key[64], info[17];
	bool direct = false;
	int err;

	info[0] = mode;
	if (ctx->flags & FSCRYPT_F_DIRECT_KEY) {
		err = fscrypt_hkdf_expand(mk->prk, HKDF_CTX_DIRECT_KEY, info, 1, key, ks);
		direct = true;
	} else if (ctx->flags & FSCRYPT_F_IV_INO_LBLK_64) {
		memcpy(info + 1, uuid, 16);
		err = fscrypt_hkdf_expand(mk->prk, HKDF_CTX_IV_INO_LBLK_64_KEY, info, 17, key, ks);
	} else if (ctx->flags & FSCRYPT_F_IV_INO_LBLK_32) {
		uint8_t hk[16], le[8];

		memcpy(info + 1, uuid, 16);
		err = fscrypt_hkdf_expand(mk->prk, HKDF_CTX_IV_INO_LBLK_32_KEY, info, 17, key, ks);
		if (!err)
			err = fscrypt_hkdf_expand(mk->prk, HKDF_CTX_INODE_HASH_KEY, NULL, 0, hk,
						  sizeof(hk));
		if (!err) {
			uint64_t h = 0;

			/* siphash_1u64(ino): the u64 as 8 little-endian bytes */
			for (int i = 0; i < 8; i++)
				le[i] = (uint8_t)((uint64_t)ci->ino >> (8 * i));
			err = fscrypt_siphash24(hk, le, sizeof(le), &h);
			ci->hashed_ino = (uint32_t)h;
		}
		fscrypt_cleanse(hk, sizeof(hk));
	} else {
		err = fscrypt_hkdf_expand(mk->prk, HKDF_CTX_PER_FILE_ENC_KEY, ctx->nonce,
					  FSCRYPT_NONCE_LEN, key, ks);
	}
	if (!err)
		err = fscrypt_prepare_key(&ci->key, mode, key, direct, ctx->nonce);
	if (!err && type == FSCRYPT_FT_DIR) {
		/* the SipHash key of casefolded directories; cheap to always have */
		err = fscrypt_hkdf_expand(mk->prk, HKDF_CTX_DIRHASH_KEY, ctx->nonce,
					  FSCRYPT_NONCE_LEN, ci->dirhash_key,
					  sizeof(ci->dirhash_key));
		ci->has_dirhash_key = !err;
	}
	fscrypt_cleanse(key, sizeof(key));
	return err;
}

/* v1: AES-128-ECB of the master key, keyed by the nonce; or the raw key */
static int derive_v1(const struct mkey *mk, const struct fscrypt_context *ctx, uint8_t mode,
		     struct fscrypt_inode_info *ci)
{
	unsigned int ks = fscrypt_mode_keysize(mode);
	uint8_t key[64];
	int err;

	if (ctx->flags & FSCRYPT_F_DIRECT_KEY)
		return fscrypt_prepare_key(&ci->key, mode, mk->raw, true, ctx->nonce);
	err = fscrypt_aes_ecb(ctx->nonce, 16, mk->raw, key, ks, 1);
	if (!err)
		err = fscrypt_prepare_key(&ci->key, mode, key, false, ctx->nonce);
	fscrypt_cleanse(key, sizeof(key));
	return err;
}

int fscrypt_keyring_derive(struct fscrypt_keyring *kr, const struct fscrypt_context *ctx,
			   enum fscrypt_file_type type, const uint8_t fs_uuid[16],
			   struct fscrypt_inode_info *ci, char *why, size_t whylen)
{
	uint8_t mode = type == FSCRYPT_FT_REG ? ctx->contents_mode : ctx->filenames_mode;
	const struct mkey *mk;
	int err;

	if (!fscrypt_mode_supported(mode)) {
		say(why, whylen, "fscrypt: %s encryption (mode %u) is not supported by this build",
		    fscrypt_mode_name(mode), mode);
		return -EOPNOTSUPP;
	}
	pthread_mutex_lock(&kr->lock);
	mk = find(kr, ctx->version, ctx->key_spec);
	if (!mk) {
		err = -ENOKEY;
	} else if (mk->rawlen < fscrypt_mode_keysize(mode)) {
		/* the kernel refuses keys shorter than the mode's key */
		say(why, whylen, "fscrypt: master key too short for %s (%zu < %u bytes)",
		    fscrypt_mode_name(mode), mk->rawlen, fscrypt_mode_keysize(mode));
		err = -ENOKEY;
	} else if (ctx->version == 2) {
		err = derive_v2(mk, ctx, mode, type, fs_uuid, ci);
	} else {
		err = derive_v1(mk, ctx, mode, ci);
	}
	pthread_mutex_unlock(&kr->lock);
	return err;
}
