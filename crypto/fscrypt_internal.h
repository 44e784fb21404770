/* SPDX-License-Identifier: GPL-2.0 */
/* Private to crypto/: shared between the fscrypt_*.c files. */
#ifndef F2FS_CRYPTO_FSCRYPT_INTERNAL_H
#define F2FS_CRYPTO_FSCRYPT_INTERNAL_H

#include "adiantum.h"
#include "fscrypt.h"
#include "hctr2.h"

/* HKDF application contexts (kernel fs/crypto/fscrypt_private.h) */
enum {
	HKDF_CTX_KEY_IDENTIFIER = 1,	/* info = empty */
	HKDF_CTX_PER_FILE_ENC_KEY = 2,	/* info = nonce */
	HKDF_CTX_DIRECT_KEY = 3,	/* info = mode */
	HKDF_CTX_IV_INO_LBLK_64_KEY = 4,	/* info = mode || fs uuid */
	HKDF_CTX_DIRHASH_KEY = 5,	/* info = nonce */
	HKDF_CTX_IV_INO_LBLK_32_KEY = 6,	/* info = mode || fs uuid */
	HKDF_CTX_INODE_HASH_KEY = 7,	/* info = empty */
};

#define FSCRYPT_PRK_LEN 64	/* HKDF-SHA512 pseudorandom key */

/* A key ready for one mode, plus the IV material a DUN does not carry. */
struct fscrypt_prepared_key {
	uint8_t mode;
	uint8_t keysize;
	uint8_t du_bits;		/* log2 of the data unit size, 9..12 */
	bool ino_in_dun;		/* IV_INO_LBLK_64: ino in DUN bits 32..63 */
	bool direct;			/* IV = le64 DUN || nonce */
	uint8_t nonce[FSCRYPT_NONCE_LEN];
	uint8_t raw[64];		/* XTS, CBC, CTS keys */
	uint8_t essiv[32];		/* SHA-256(raw) for CBC-ESSIV */
	struct fscrypt_adiantum_key adiantum;
	struct fscrypt_hctr2_key hctr2;
};

struct fscrypt_inode_info {
	struct fscrypt_context ctx;
	enum fscrypt_file_type type;
	uint32_t ino;
	uint32_t hashed_ino;		/* IV_INO_LBLK_32 only */
	bool has_dirhash_key;
	uint8_t dirhash_key[16];	/* SipHash key, v2 directories */
	struct fscrypt_prepared_key key;
	struct fscrypt_pool *pool;	/* the slot's owner */
};

/* fscrypt_mem.c: locked, non-dumpable slots for key objects */
#define FSCRYPT_SLOT_SIZE 2048
_Static_assert(sizeof(struct fscrypt_inode_info) <= FSCRYPT_SLOT_SIZE, "slot size");
struct fscrypt_pool;
struct fscrypt_pool *fscrypt_pool_new(void);
/* A zeroed slot, or NULL; each live slot holds a reference on the pool. */
void *fscrypt_pool_alloc(struct fscrypt_pool *p);
/* Wipe and release a slot. */
void fscrypt_pool_free(struct fscrypt_pool *p, void *slot);
/* Drop the creator's reference; the pool goes with its last slot. */
void fscrypt_pool_put(struct fscrypt_pool *p);
/* mlock every arena again (see fscrypt_keyring_lock_memory); 0 or the first -errno. */
int fscrypt_pool_lock(struct fscrypt_pool *p);

/* fscrypt_ossl.c: OpenSSL plumbing, each returns 0 or -errno */
int fscrypt_hkdf_extract(const uint8_t *ikm, size_t len, uint8_t prk[FSCRYPT_PRK_LEN]);
int fscrypt_hkdf_expand(const uint8_t prk[FSCRYPT_PRK_LEN], uint8_t context,
			const uint8_t *info, size_t infolen, uint8_t *okm, size_t okmlen);
int fscrypt_siphash24(const uint8_t key[16], const void *msg, size_t len, uint64_t *out);
int fscrypt_sha256(const void *msg, size_t len, uint8_t out[32]);
int fscrypt_aes_ecb(const uint8_t *key, size_t keylen, const uint8_t *in, uint8_t *out,
		    size_t len, int enc);
int fscrypt_aes256_block(const uint8_t key[32], uint8_t block[16], int enc);
/* name: "AES-256-XTS", "AES-128-CBC", "AES-256-CBC-CTS", "AES-128-CBC-CTS" */
int fscrypt_evp_crypt(const char *name, const uint8_t *key, const uint8_t *iv,
		      const uint8_t *in, uint8_t *out, size_t len, int enc);
int fscrypt_evp_crypt_units(const char *name, const uint8_t *key,
			    void (*iv_fn)(const void *arg, size_t i, uint8_t iv[32]),
			    const void *arg, const uint8_t *in, uint8_t *out, size_t unit,
			    size_t nr, int enc);

/* fscrypt_keyring.c */
struct fscrypt_pool *fscrypt_keyring_pool(struct fscrypt_keyring *kr);
int fscrypt_keyring_derive(struct fscrypt_keyring *kr, const struct fscrypt_context *ctx,
			   enum fscrypt_file_type type, const uint8_t fs_uuid[16],
			   struct fscrypt_inode_info *ci, char *why, size_t whylen);

/* fscrypt_policy.c */
unsigned int fscrypt_mode_keysize(uint8_t mode);

/* fscrypt_contents.c: build the IV of one unit / of a filename */
void fscrypt_make_iv(const struct fscrypt_prepared_key *k, uint64_t dun, uint8_t iv[32]);
int fscrypt_prepare_key(struct fscrypt_prepared_key *k, uint8_t mode, const uint8_t *raw,
			bool direct, const uint8_t nonce[FSCRYPT_NONCE_LEN]);
/* Length-preserving crypt of a filename-sized message with IV for DUN 0 */
int fscrypt_crypt_message(const struct fscrypt_inode_info *ci, uint8_t *buf, size_t len,
			  int enc);

#endif
