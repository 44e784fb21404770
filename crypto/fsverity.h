/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The hashes of fs-verity (the kernel's fs/verity/hash_algs.c): SHA-256
 * and SHA-512, salted as fs-verity salts them (the salt zero-padded to the
 * hash's input block size and hashed first).  Plain C, so core/ may
 * include it; OpenSSL stays in crypto/.  0 or a negative errno.
 */
#ifndef F2FS_CRYPTO_FSVERITY_H
#define F2FS_CRYPTO_FSVERITY_H

#include <stddef.h>
#include <stdint.h>

/* Algorithm numbers as in include/uapi/linux/fsverity.h */
#define FS_VERITY_HASH_ALG_SHA256	1
#define FS_VERITY_HASH_ALG_SHA512	2
#define FS_VERITY_MAX_DIGEST_SIZE	64

/* The digest size of an algorithm, 0 for one that fs-verity does not know. */
unsigned int fsverity_digest_size(unsigned int alg);
/* Its name as fsverity-utils prints it ("sha256"), or NULL. */
const char *fsverity_hash_name(unsigned int alg);

/* A hash with its salt hashed in already; immutable, shared by threads. */
struct fsverity_hash;
int fsverity_hash_new(unsigned int alg, const uint8_t *salt, size_t salt_size,
		      struct fsverity_hash **out);
void fsverity_hash_free(struct fsverity_hash *h);
/* The salted hash of one block (data or Merkle tree). */
int fsverity_hash_block(const struct fsverity_hash *h, const void *data, size_t len,
			uint8_t *out);
/* The unsalted hash of a buffer (the descriptor, for the file digest). */
int fsverity_hash_buffer(unsigned int alg, const void *data, size_t len, uint8_t *out);

#endif /* F2FS_CRYPTO_FSVERITY_H */
