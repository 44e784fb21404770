// SPDX-License-Identifier: GPL-2.0
/*
 * Encryption contexts: parse, validate and serialize, with the rules of the
 * kernel's fs/crypto/policy.c (fscrypt_policy_from_context and
 * fscrypt_supported_v1/v2_policy).
 *
 * On disk (fs/crypto/fscrypt_private.h):
 *   v1 (28): version=1, contents, filenames, flags, descriptor[8], nonce[16]
 *   v2 (40): version=2, contents, filenames, flags, log2_data_unit_size,
 *            reserved[3], identifier[16], nonce[16]
 * Kernels before 6.7 call byte 4 reserved too; both must then be zero,
 * which is what 0 here means.
 */
#include "fscrypt_internal.h"

#include <errno.h>
#include <string.h>

unsigned int fscrypt_mode_keysize(uint8_t mode)
{
	switch (mode) {
	case FSCRYPT_M_AES_256_XTS:
		return 64;
	case FSCRYPT_M_AES_256_CTS:
	case FSCRYPT_M_ADIANTUM:
	case FSCRYPT_M_AES_256_HCTR2:
	case FSCRYPT_M_SM4_XTS:
		return 32;
	case FSCRYPT_M_AES_128_CBC:
	case FSCRYPT_M_AES_128_CTS:
	case FSCRYPT_M_SM4_CTS:
		return 16;
	}
	return 0;
}

/* IV size: 32 for the wide-block modes, whose IV can hold a nonce */
static unsigned int mode_ivsize(uint8_t mode)
{
	return mode == FSCRYPT_M_ADIANTUM || mode == FSCRYPT_M_AES_256_HCTR2 ? 32 : 16;
}

const char *fscrypt_mode_name(uint8_t mode)
{
	switch (mode) {
	case FSCRYPT_M_AES_256_XTS:
		return "AES-256-XTS";
	case FSCRYPT_M_AES_256_CTS:
		return "AES-256-CTS-CBC";
	case FSCRYPT_M_AES_128_CBC:
		return "AES-128-CBC-ESSIV";
	case FSCRYPT_M_AES_128_CTS:
		return "AES-128-CTS-CBC";
	case FSCRYPT_M_SM4_XTS:
		return "SM4-XTS";
	case FSCRYPT_M_SM4_CTS:
		return "SM4-CTS-CBC";
	case FSCRYPT_M_ADIANTUM:
		return "Adiantum";
	case FSCRYPT_M_AES_256_HCTR2:
		return "AES-256-HCTR2";
	}
	return "unknown";
}

bool fscrypt_mode_supported(uint8_t mode)
{
	switch (mode) {
	case FSCRYPT_M_AES_256_XTS:
	case FSCRYPT_M_AES_256_CTS:
	case FSCRYPT_M_AES_128_CBC:
	case FSCRYPT_M_AES_128_CTS:
	case FSCRYPT_M_ADIANTUM:
	case FSCRYPT_M_AES_256_HCTR2:
		return true;
	}
	return false;
}

static bool valid_modes_v1(uint8_t c, uint8_t f)
{
	return (c == FSCRYPT_M_AES_256_XTS && f == FSCRYPT_M_AES_256_CTS) ||
	       (c == FSCRYPT_M_AES_128_CBC && f == FSCRYPT_M_AES_128_CTS) ||
	       (c == FSCRYPT_M_ADIANTUM && f == FSCRYPT_M_ADIANTUM);
}

static bool valid_modes_v2(uint8_t c, uint8_t f)
{
	return valid_modes_v1(c, f) ||
	       (c == FSCRYPT_M_AES_256_XTS && f == FSCRYPT_M_AES_256_HCTR2) ||
	       (c == FSCRYPT_M_SM4_XTS && f == FSCRYPT_M_SM4_CTS);
}

static bool direct_key_ok(uint8_t c, uint8_t f)
{
	return c == f && mode_ivsize(c) >= 8 + FSCRYPT_NONCE_LEN;
}

int fscrypt_context_parse(const void *buf, size_t len, struct fscrypt_context *out)
{
	const uint8_t *b = buf;
	struct fscrypt_context c;
	int n = 0;

	if (!buf || len < 1)
		return -EINVAL;
	memset(&c, 0, sizeof(c));
	c.version = b[0];
	if (c.version == 1) {
		if (len != FSCRYPT_CONTEXT_V1_SIZE)
			return -EINVAL;
		c.contents_mode = b[1];
		c.filenames_mode = b[2];
		c.flags = b[3];
		memcpy(c.key_spec, b + 4, FSCRYPT_KEY_DESCRIPTOR_LEN);
		memcpy(c.nonce, b + 12, FSCRYPT_NONCE_LEN);
		if (!valid_modes_v1(c.contents_mode, c.filenames_mode))
			return -EINVAL;
		if (c.flags & ~(FSCRYPT_F_PAD_MASK | FSCRYPT_F_DIRECT_KEY))
			return -EINVAL;
	} else if (c.version == 2) {
		if (len != FSCRYPT_CONTEXT_V2_SIZE)
			return -EINVAL;
		c.contents_mode = b[1];
		c.filenames_mode = b[2];
		c.flags = b[3];
		c.log2_data_unit_size = b[4];
		if (b[5] | b[6] | b[7])
			return -EINVAL;
		memcpy(c.key_spec, b + 8, FSCRYPT_KEY_IDENTIFIER_LEN);
		memcpy(c.nonce, b + 24, FSCRYPT_NONCE_LEN);
		if (!valid_modes_v2(c.contents_mode, c.filenames_mode))
			return -EINVAL;
		if (c.flags & ~(FSCRYPT_F_PAD_MASK | FSCRYPT_F_DIRECT_KEY |
				FSCRYPT_F_IV_INO_LBLK_64 | FSCRYPT_F_IV_INO_LBLK_32))
			return -EINVAL;
		n += !!(c.flags & FSCRYPT_F_DIRECT_KEY);
		n += !!(c.flags & FSCRYPT_F_IV_INO_LBLK_64);
		n += !!(c.flags & FSCRYPT_F_IV_INO_LBLK_32);
		if (n > 1)
			return -EINVAL;
		/* f2fs blocks are 4096 bytes: data units of 512..4096 bytes */
		if (c.log2_data_unit_size &&
		    (c.log2_data_unit_size < 9 || c.log2_data_unit_size > 12))
			return -EINVAL;
		if (c.log2_data_unit_size && c.log2_data_unit_size != 12 &&
		    (c.flags & FSCRYPT_F_IV_INO_LBLK_32))
			return -EINVAL;
		if ((c.flags & (FSCRYPT_F_IV_INO_LBLK_64 | FSCRYPT_F_IV_INO_LBLK_32)) &&
		    c.contents_mode != FSCRYPT_M_AES_256_XTS)
			return -EINVAL;
	} else {
		return -EINVAL;
	}
	if ((c.flags & FSCRYPT_F_DIRECT_KEY) && !direct_key_ok(c.contents_mode, c.filenames_mode))
		return -EINVAL;
	*out = c;
	return 0;
}

int fscrypt_context_serialize(const struct fscrypt_context *c, void *buf, size_t len)
{
	uint8_t *b = buf;

	if (c->version == 1) {
		if (len < FSCRYPT_CONTEXT_V1_SIZE)
			return -ERANGE;
		b[0] = 1;
		b[1] = c->contents_mode;
		b[2] = c->filenames_mode;
		b[3] = c->flags;
		memcpy(b + 4, c->key_spec, FSCRYPT_KEY_DESCRIPTOR_LEN);
		memcpy(b + 12, c->nonce, FSCRYPT_NONCE_LEN);
		return FSCRYPT_CONTEXT_V1_SIZE;
	}
	if (c->version == 2) {
		if (len < FSCRYPT_CONTEXT_V2_SIZE)
			return -ERANGE;
		b[0] = 2;
		b[1] = c->contents_mode;
		b[2] = c->filenames_mode;
		b[3] = c->flags;
		b[4] = c->log2_data_unit_size;
		b[5] = b[6] = b[7] = 0;
		memcpy(b + 8, c->key_spec, FSCRYPT_KEY_IDENTIFIER_LEN);
		memcpy(b + 24, c->nonce, FSCRYPT_NONCE_LEN);
		return FSCRYPT_CONTEXT_V2_SIZE;
	}
	return -EINVAL;
}
