// SPDX-License-Identifier: GPL-2.0
/*
 * Per-inode keys and file contents encryption (kernel fs/crypto/crypto.c,
 * fscrypt_generate_iv / fscrypt_crypt_data_unit).
 *
 * IV of data unit `index` (little-endian, the mode's IV size, zero-filled):
 *   le64 index                          default, IV_INO_LBLK_64/32 with the
 *                                       index already mapped by fscrypt_dun
 *   le64 index || nonce[16]             DIRECT_KEY
 * Adiantum takes a 32-byte IV, so its tweak is le64 || nonce || 8 zeros.
 */
#include "fscrypt_internal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static void put_le64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

int fscrypt_prepare_key(struct fscrypt_prepared_key *k, uint8_t mode, const uint8_t *raw,
			bool direct, const uint8_t nonce[FSCRYPT_NONCE_LEN])
{
	unsigned int ks = fscrypt_mode_keysize(mode);

	if (!fscrypt_mode_supported(mode) || !ks)
		return -EOPNOTSUPP;
	memset(k, 0, sizeof(*k));
	k->mode = mode;
	k->du_bits = 12;
	k->keysize = (uint8_t)ks;
	k->direct = direct;
	if (direct)
		memcpy(k->nonce, nonce, FSCRYPT_NONCE_LEN);
	memcpy(k->raw, raw, ks);
	if (mode == FSCRYPT_M_AES_128_CBC)
		return fscrypt_sha256(k->raw, ks, k->essiv);
	if (mode == FSCRYPT_M_ADIANTUM)
		fscrypt_adiantum_setkey(&k->adiantum, k->raw);
	if (mode == FSCRYPT_M_AES_256_HCTR2)
		return fscrypt_hctr2_setkey(&k->hctr2, k->raw);
	return 0;
}

void fscrypt_make_iv(const struct fscrypt_prepared_key *k, uint64_t dun, uint8_t iv[32])
{
	memset(iv, 0, 32);
	put_le64(iv, dun);
	if (k->direct)
		memcpy(iv + 8, k->nonce, FSCRYPT_NONCE_LEN);
}

int fscrypt_inode_info_new(struct fscrypt_keyring *kr, const struct fscrypt_context *ctx,
			   enum fscrypt_file_type type, uint32_t ino,
			   const uint8_t fs_uuid[16], struct fscrypt_inode_info **out,
			   char *why, size_t whylen)
{
	static const uint8_t zero_uuid[16];
	struct fscrypt_inode_info *ci;
	struct fscrypt_pool *pool;
	int err;

	if (why && whylen)
		why[0] = '\0';
	if (!kr || !ctx || !out || (ctx->version != 1 && ctx->version != 2))
		return -EINVAL;
	pool = fscrypt_keyring_pool(kr);
	ci = fscrypt_pool_alloc(pool);
	if (!ci)
		return -ENOMEM;
	ci->pool = pool;
	ci->ctx = *ctx;
	ci->type = type;
	ci->ino = ino;
	err = fscrypt_keyring_derive(kr, ctx, type, fs_uuid ? fs_uuid : zero_uuid, ci, why,
				     whylen);
	if (err) {
		fscrypt_pool_free(pool, ci);
		return err;
	}
	if (ctx->version == 2 && ctx->log2_data_unit_size)
		ci->key.du_bits = ctx->log2_data_unit_size;
	ci->key.ino_in_dun = (ctx->flags & FSCRYPT_F_IV_INO_LBLK_64) != 0;
	*out = ci;
	return 0;
}

void fscrypt_inode_info_free(struct fscrypt_inode_info *ci)
{
	if (ci)
		fscrypt_pool_free(ci->pool, ci);
}

const struct fscrypt_context *fscrypt_inode_context(const struct fscrypt_inode_info *ci)
{
	return &ci->ctx;
}

uint64_t fscrypt_dun(const struct fscrypt_inode_info *ci, uint64_t lblk)
{
	if (ci->ctx.flags & FSCRYPT_F_IV_INO_LBLK_64)
		return (uint64_t)ci->ino << 32 | (uint32_t)lblk;
	if (ci->ctx.flags & FSCRYPT_F_IV_INO_LBLK_32)
		return (uint32_t)(ci->hashed_ino + (uint32_t)lblk);
	return lblk;
}

/*
 * Index of data unit j of the block with DUN bdun, for data units smaller
 * than the block: the kernel numbers units (lblk << (12 - du_bits)) + j and
 * only then adds the inode number (IV_INO_LBLK_64; IV_INO_LBLK_32 allows
 * whole-block units only).
 */
static uint64_t unit_index(const struct fscrypt_prepared_key *k, uint64_t bdun, unsigned j)
{
	const unsigned s = 12u - k->du_bits;

	if (!s)
		return bdun;
	if (k->ino_in_dun)
		return (bdun & 0xffffffff00000000ULL) | (uint32_t)(((uint32_t)bdun << s) + j);
	return (bdun << s) + j;
}

uint64_t fscrypt_limit_io_blocks(const struct fscrypt_inode_info *ci, uint64_t lblk,
				 uint64_t nr)
{
	uint64_t left;

	if (!(ci->ctx.flags & FSCRYPT_F_IV_INO_LBLK_32))
		return nr;
	/* units up to and including DUN 0xffffffff, then it wraps to 0 */
	left = (uint64_t)UINT32_MAX + 1 - fscrypt_dun(ci, lblk);
	return nr < left ? nr : left;
}

const void *fscrypt_contents_key(const struct fscrypt_inode_info *ci)
{
	return ci && ci->type == FSCRYPT_FT_REG ? &ci->key : NULL;
}

static int crypt_unit(const struct fscrypt_prepared_key *k, uint64_t dun, const uint8_t *in,
		      uint8_t *out, int enc)
{
	const size_t du = (size_t)1 << k->du_bits;
	uint8_t iv[32];
	int err;

	fscrypt_make_iv(k, dun, iv);
	switch (k->mode) {
	case FSCRYPT_M_AES_256_XTS:
		err = fscrypt_evp_crypt("AES-256-XTS", k->raw, iv, in, out,
					du, enc);
		break;
	case FSCRYPT_M_AES_128_CBC:
		/* ESSIV: the IV is encrypted with AES-256 keyed by SHA-256(key) */
		err = fscrypt_aes_ecb(k->essiv, 32, iv, iv, 16, 1);
		if (!err)
			err = fscrypt_evp_crypt("AES-128-CBC", k->raw, iv, in, out,
						du, enc);
		break;
	case FSCRYPT_M_ADIANTUM:
		if (in != out)
			memcpy(out, in, du);
		err = fscrypt_adiantum_crypt(&k->adiantum, fscrypt_aes256_block, iv, 32, out,
					     du, enc);
		break;
	default:
		err = -EOPNOTSUPP;
	}
	fscrypt_cleanse(iv, sizeof(iv));
	return err;
}

struct iv_arg {
	const struct fscrypt_prepared_key *k;
	uint64_t dun;
};

static void xts_iv(const void *arg, size_t i, uint8_t iv[32])
{
	const struct iv_arg *a = arg;
	const size_t upb = FSCRYPT_BLOCK_SIZE >> a->k->du_bits;

	fscrypt_make_iv(a->k, unit_index(a->k, a->dun + i / upb, (unsigned)(i % upb)), iv);
}

/*
 * nr blocks of 4096 bytes, block i with DUN dun + i; each holds
 * 4096 >> du_bits data units (see unit_index).
 */
static int crypt_units(const struct fscrypt_prepared_key *k, uint64_t dun, const uint8_t *in,
		       uint8_t *out, size_t nr, int enc)
{
	const size_t du = (size_t)1 << k->du_bits;
	size_t units;
	int err;

	if (!k || nr > SIZE_MAX / FSCRYPT_BLOCK_SIZE)
		return -EINVAL;
	units = nr * (FSCRYPT_BLOCK_SIZE / du);
	if (k->mode == FSCRYPT_M_AES_256_XTS) {
		struct iv_arg a = { k, dun };

		return fscrypt_evp_crypt_units("AES-256-XTS", k->raw, xts_iv, &a, in, out, du,
					       units, enc);
	}
	for (size_t i = 0; i < units; i++) {
		size_t upb = FSCRYPT_BLOCK_SIZE / du;

		err = crypt_unit(k, unit_index(k, dun + i / upb, (unsigned)(i % upb)), in + i * du,
				 out + i * du, enc);
		if (err)
			return err;
	}
	return 0;
}

int fscrypt_decrypt_units(const void *key, uint64_t dun, void *buf, size_t nr_units)
{
	return crypt_units(key, dun, buf, buf, nr_units, 0);
}

int fscrypt_encrypt_units(const void *key, uint64_t dun, const void *in, void *out,
			  size_t nr_units)
{
	return crypt_units(key, dun, in, out, nr_units, 1);
}

static int crypt_blocks(const struct fscrypt_inode_info *ci, uint64_t lblk, const uint8_t *in,
			uint8_t *out, size_t nr, int enc)
{
	const void *key = fscrypt_contents_key(ci);
	int err;

	if (!key)
		return -EINVAL;
	while (nr) {
		size_t n = (size_t)fscrypt_limit_io_blocks(ci, lblk, nr);
		uint64_t dun = fscrypt_dun(ci, lblk);

		if (enc)
			err = fscrypt_encrypt_units(key, dun, in, out, n);
		else {
			if (in != out)
				memcpy(out, in, n * FSCRYPT_BLOCK_SIZE);
			err = fscrypt_decrypt_units(key, dun, out, n);
		}
		if (err)
			return err;
		lblk += n;
		nr -= n;
		in += n * FSCRYPT_BLOCK_SIZE;
		out += n * FSCRYPT_BLOCK_SIZE;
	}
	return 0;
}

int fscrypt_decrypt_blocks(const struct fscrypt_inode_info *ci, uint64_t lblk, void *buf,
			   size_t nr)
{
	return crypt_blocks(ci, lblk, buf, buf, nr, 0);
}

int fscrypt_encrypt_blocks(const struct fscrypt_inode_info *ci, uint64_t lblk,
			   const void *in, void *out, size_t nr)
{
	return crypt_blocks(ci, lblk, in, out, nr, 1);
}

int fscrypt_crypt_message(const struct fscrypt_inode_info *ci, uint8_t *buf, size_t len,
			  int enc)
{
	const struct fscrypt_prepared_key *k = &ci->key;
	uint8_t iv[32];
	int err;

	if (ci->type == FSCRYPT_FT_REG)
		return -EINVAL;
	/* filenames use the IV of data unit 0 of the directory / symlink */
	fscrypt_make_iv(k, fscrypt_dun(ci, 0), iv);
	switch (k->mode) {
	case FSCRYPT_M_AES_256_CTS:
		err = fscrypt_evp_crypt("AES-256-CBC-CTS", k->raw, iv, buf, buf, len, enc);
		break;
	case FSCRYPT_M_AES_128_CTS:
		err = fscrypt_evp_crypt("AES-128-CBC-CTS", k->raw, iv, buf, buf, len, enc);
		break;
	case FSCRYPT_M_ADIANTUM:
		err = fscrypt_adiantum_crypt(&k->adiantum, fscrypt_aes256_block, iv, 32, buf, len,
					     enc);
		break;
	case FSCRYPT_M_AES_256_HCTR2:
		err = fscrypt_hctr2_crypt(&k->hctr2, iv, buf, len, enc);
		break;
	default:
		err = -EOPNOTSUPP;
	}
	fscrypt_cleanse(iv, sizeof(iv));
	return err;
}
