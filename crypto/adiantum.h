/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Adiantum and its parts (XChaCha, Poly1305, NH, NHPoly1305), in portable C.
 *
 * Specification: Crowley and Biggers, "Adiantum: length-preserving
 * encryption for entry-level processors", IACR ToSC 2018(4), section 6.4;
 * the construction and its key derivation are those of the Linux kernel's
 * adiantum(xchacha12,aes), which fscrypt mode 9 uses with a 32-byte tweak.
 * Internal to crypto/; exported only so the unit tests can check each part
 * against published vectors.  The single AES-256 block operation is done
 * through OpenSSL by the caller-supplied block function.
 */
#ifndef F2FS_CRYPTO_ADIANTUM_H
#define F2FS_CRYPTO_ADIANTUM_H

#include <stddef.h>
#include <stdint.h>

#define ADIANTUM_KEY_SIZE	32
#define NH_KEY_BYTES		1072	/* 268 words: 1024-byte message + 3 strides */
#define NH_MESSAGE_BYTES	1024
#define NHPOLY1305_KEY_SIZE	(16 + NH_KEY_BYTES)

/* ChaCha/XChaCha keystream.  offset is a byte position in the stream. */
void fscrypt_chacha_block(const uint32_t in[16], uint8_t out[64], int rounds);
void fscrypt_hchacha(const uint8_t key[32], const uint8_t nonce[16], int rounds,
		     uint8_t subkey[32]);
/*
 * XOR len bytes of the XChaCha keystream starting at byte `offset` into buf.
 * iv = 24-byte nonce; the 64-bit block counter starts at offset / 64.
 */
void fscrypt_xchacha_xor(const uint8_t key[32], const uint8_t nonce[24], int rounds,
			 uint64_t offset, uint8_t *buf, size_t len);

/* Poly1305 evaluation without the final "+ s" (kernel poly1305_core_*). */
struct fscrypt_poly1305 {
	uint32_t r[5], h[5];
	uint8_t buf[16];
	size_t buflen;
};
void fscrypt_poly1305_init(struct fscrypt_poly1305 *st, const uint8_t r[16]);
void fscrypt_poly1305_update(struct fscrypt_poly1305 *st, const uint8_t *m, size_t len);
/* Pads a trailing partial block the Poly1305 way; adds s if non-NULL. */
void fscrypt_poly1305_final(struct fscrypt_poly1305 *st, const uint8_t *s, uint8_t out[16]);

/* NH over len bytes (a multiple of 16, at most 1024): four 64-bit sums. */
void fscrypt_nh(const uint32_t *key, const uint8_t *m, size_t len,
		uint8_t out[32]);
/* NHPoly1305 (kernel crypto/nhpoly1305.c) with a 1088-byte key. */
void fscrypt_nhpoly1305(const uint8_t key[NHPOLY1305_KEY_SIZE], const uint8_t *m,
			size_t len, uint8_t out[16]);

/* Expanded Adiantum key. */
struct fscrypt_adiantum_key {
	uint8_t stream_key[32];		/* K_S */
	uint8_t aes_key[32];		/* K_E */
	uint8_t header_poly_key[16];	/* K_T */
	uint8_t msg_poly_key[16];	/* K_L */
	uint32_t nh_key[NH_KEY_BYTES / 4];	/* K_N */
};

/* One AES-256 block operation with key K_E, in place; nonzero on failure. */
typedef int (*fscrypt_aes256_block_fn)(const uint8_t key[32], uint8_t block[16], int enc);

void fscrypt_adiantum_setkey(struct fscrypt_adiantum_key *k, const uint8_t key[32]);
/*
 * Encrypt or decrypt buf (len >= 16) in place with the given tweak (any
 * length; fscrypt uses 32).  Returns 0, -EINVAL for len < 16, or -EIO if
 * the block function fails.
 */
int fscrypt_adiantum_crypt(const struct fscrypt_adiantum_key *k, fscrypt_aes256_block_fn aes,
			   const uint8_t *tweak, size_t tweaklen, uint8_t *buf, size_t len,
			   int enc);

#endif
