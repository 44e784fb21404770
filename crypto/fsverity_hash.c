// SPDX-License-Identifier: GPL-2.0
/*
 * fs-verity's hashes on OpenSSL EVP.  The salted state is prepared once
 * per file (fsverity_prepare_hash_state) and copied for every block, so a
 * block costs its own bytes only.
 */
#include "fsverity.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

struct fsverity_hash {
	unsigned int alg;
	EVP_MD_CTX *salted;	/* NULL without a salt */
};

static const EVP_MD *md_of(unsigned int alg)
{
	switch (alg) {
	case FS_VERITY_HASH_ALG_SHA256:
		return EVP_sha256();
	case FS_VERITY_HASH_ALG_SHA512:
		return EVP_sha512();
	}
	return NULL;
}

unsigned int fsverity_digest_size(unsigned int alg)
{
	return alg == FS_VERITY_HASH_ALG_SHA256 ? 32 : alg == FS_VERITY_HASH_ALG_SHA512 ? 64 : 0;
}

const char *fsverity_hash_name(unsigned int alg)
{
	return alg == FS_VERITY_HASH_ALG_SHA256 ? "sha256" :
	       alg == FS_VERITY_HASH_ALG_SHA512 ? "sha512" : NULL;
}

int fsverity_hash_new(unsigned int alg, const uint8_t *salt, size_t salt_size,
		      struct fsverity_hash **out)
{
	const EVP_MD *md = md_of(alg);
	struct fsverity_hash *h;
	uint8_t padded[128];	/* the largest input block, SHA-512's */
	size_t bs;

	if (!md)
		return -EINVAL;
	bs = (size_t)EVP_MD_block_size(md);
	if (salt_size > 32 || bs > sizeof(padded))
		return -EINVAL;
	h = calloc(1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	h->alg = alg;
	if (salt_size) {
		memset(padded, 0, sizeof(padded));
		memcpy(padded, salt, salt_size);
		h->salted = EVP_MD_CTX_new();
		if (!h->salted || EVP_DigestInit_ex(h->salted, md, NULL) != 1 ||
		    EVP_DigestUpdate(h->salted, padded, bs) != 1) {
			fsverity_hash_free(h);
			return -ENOMEM;
		}
	}
	*out = h;
	return 0;
}

void fsverity_hash_free(struct fsverity_hash *h)
{
	if (!h)
		return;
	EVP_MD_CTX_free(h->salted);
	free(h);
}

int fsverity_hash_block(const struct fsverity_hash *h, const void *data, size_t len,
			uint8_t *out)
{
	EVP_MD_CTX *c;
	int ok;

	if (!h->salted)
		return fsverity_hash_buffer(h->alg, data, len, out);
	c = EVP_MD_CTX_new();
	if (!c)
		return -ENOMEM;
	ok = EVP_MD_CTX_copy_ex(c, h->salted) == 1 && EVP_DigestUpdate(c, data, len) == 1 &&
	     EVP_DigestFinal_ex(c, out, NULL) == 1;
	EVP_MD_CTX_free(c);
	return ok ? 0 : -EIO;
}

int fsverity_hash_buffer(unsigned int alg, const void *data, size_t len, uint8_t *out)
{
	const EVP_MD *md = md_of(alg);

	if (!md)
		return -EINVAL;
	return EVP_Digest(data, len, out, NULL, md, NULL) == 1 ? 0 : -EIO;
}
