/* SPDX-License-Identifier: GPL-2.0 */
/*
 * HCTR2 (Crowley, Huckleberry, Biggers, "Length-preserving encryption with
 * HCTR2", IACR ePrint 2021/1441) with AES-256 and a 32-byte tweak, as the
 * kernel's hctr2(aes) that fscrypt mode 10 (AES-256-HCTR2 filenames) uses.
 * Internal to crypto/; exported for the unit tests.
 */
#ifndef F2FS_CRYPTO_HCTR2_H
#define F2FS_CRYPTO_HCTR2_H

#include <stddef.h>
#include <stdint.h>

/* POLYVAL (RFC 8452): acc = (acc + X_i) * H * x^-128 per 16-byte block */
void fscrypt_polyval_mul(uint8_t acc[16], const uint8_t h[16]);
void fscrypt_polyval(const uint8_t h[16], const uint8_t *x, size_t nblocks, uint8_t out[16]);

struct fscrypt_hctr2_key {
	uint8_t aes_key[32];
	uint8_t hbar[16];	/* POLYVAL key E_K(0) */
	uint8_t L[16];		/* E_K(1) */
};

int fscrypt_hctr2_setkey(struct fscrypt_hctr2_key *k, const uint8_t key[32]);
/* Encrypt or decrypt buf (len >= 16) in place; tweak is 32 bytes. */
int fscrypt_hctr2_crypt(const struct fscrypt_hctr2_key *k, const uint8_t tweak[32],
			uint8_t *buf, size_t len, int enc);

#endif
