// SPDX-License-Identifier: GPL-2.0
/*
 * OpenSSL (libcrypto 3 EVP) plumbing for fscrypt: algorithm fetches done
 * once, HKDF-SHA512, SipHash-2-4, SHA-256, AES-ECB/XTS/CBC/CBC-CTS.
 *
 * EVP contexts are not shareable between threads, so each call makes its
 * own from the fetched (immutable, shareable) algorithm objects.
 */
#include "fscrypt_internal.h"

#include <errno.h>
#include <pthread.h>
#include <string.h>

#include <openssl/core_dispatch.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/params.h>
#include <openssl/provider.h>

/*
 * The provider's own entry points for AES-256-XTS, looked up once through
 * OSSL_PROVIDER_query_operation.  Per-data-unit IVs mean one cipher init
 * per 4 KiB; through EVP_CipherInit_ex2 each of those re-queries the IV
 * length by OSSL_PARAM name lookup, which costs OpenSSL 3.0 about a third
 * of the AES work itself.  Calling the same provider implementation that
 * EVP dispatches to skips only that bookkeeping.
 */
struct direct_cipher {
	void *provctx;
	OSSL_FUNC_cipher_newctx_fn *newctx;
	OSSL_FUNC_cipher_freectx_fn *freectx;
	OSSL_FUNC_cipher_encrypt_init_fn *einit;
	OSSL_FUNC_cipher_decrypt_init_fn *dinit;
	OSSL_FUNC_cipher_cipher_fn *cipher;
	bool ok;
};

static struct {
	EVP_KDF *hkdf;
	EVP_MAC *siphash;
	EVP_MD *sha256;
	EVP_CIPHER *aes256_xts, *aes128_cbc, *aes256_cts, *aes128_cts, *aes256_ecb,
		*aes128_ecb;
	struct direct_cipher xts;
	bool ok;
} alg;

static pthread_once_t alg_once = PTHREAD_ONCE_INIT;

/* Does the ':'-separated name list hold name (case-insensitively)? */
static bool names_hold(const char *list, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = list; p && *p;) {
		const char *end = strchr(p, ':');
		size_t len = end ? (size_t)(end - p) : strlen(p);

		if (len == n && !strncasecmp(p, name, n))
			return true;
		p = end ? end + 1 : NULL;
	}
	return false;
}

static void direct_lookup(const EVP_CIPHER *ci, const char *name, struct direct_cipher *d)
{
	const OSSL_PROVIDER *prov = EVP_CIPHER_get0_provider(ci);
	const OSSL_ALGORITHM *algs;
	int no_cache = 0;

	memset(d, 0, sizeof(*d));
	if (!prov)
		return;
	algs = OSSL_PROVIDER_query_operation(prov, OSSL_OP_CIPHER, &no_cache);
	for (const OSSL_ALGORITHM *a = algs; a && a->algorithm_names; a++) {
		if (!names_hold(a->algorithm_names, name))
			continue;
		for (const OSSL_DISPATCH *f = a->implementation; f->function_id; f++) {
			switch (f->function_id) {
			case OSSL_FUNC_CIPHER_NEWCTX:
				d->newctx = OSSL_FUNC_cipher_newctx(f);
				break;
			case OSSL_FUNC_CIPHER_FREECTX:
				d->freectx = OSSL_FUNC_cipher_freectx(f);
				break;
			case OSSL_FUNC_CIPHER_ENCRYPT_INIT:
				d->einit = OSSL_FUNC_cipher_encrypt_init(f);
				break;
			case OSSL_FUNC_CIPHER_DECRYPT_INIT:
				d->dinit = OSSL_FUNC_cipher_decrypt_init(f);
				break;
			case OSSL_FUNC_CIPHER_CIPHER:
				d->cipher = OSSL_FUNC_cipher_cipher(f);
				break;
			}
		}
		break;
	}
	if (algs)
		OSSL_PROVIDER_unquery_operation(prov, OSSL_OP_CIPHER, algs);
	d->provctx = OSSL_PROVIDER_get0_provider_ctx(prov);
	d->ok = d->provctx && d->newctx && d->freectx && d->einit && d->dinit && d->cipher;
}

static void alg_fetch(void)
{
	alg.hkdf = EVP_KDF_fetch(NULL, "HKDF", NULL);
	alg.siphash = EVP_MAC_fetch(NULL, "SIPHASH", NULL);
	alg.sha256 = EVP_MD_fetch(NULL, "SHA256", NULL);
	alg.aes256_xts = EVP_CIPHER_fetch(NULL, "AES-256-XTS", NULL);
	alg.aes128_cbc = EVP_CIPHER_fetch(NULL, "AES-128-CBC", NULL);
	alg.aes256_cts = EVP_CIPHER_fetch(NULL, "AES-256-CBC-CTS", NULL);
	alg.aes128_cts = EVP_CIPHER_fetch(NULL, "AES-128-CBC-CTS", NULL);
	alg.aes256_ecb = EVP_CIPHER_fetch(NULL, "AES-256-ECB", NULL);
	alg.aes128_ecb = EVP_CIPHER_fetch(NULL, "AES-128-ECB", NULL);
	alg.ok = alg.hkdf && alg.siphash && alg.sha256 && alg.aes256_xts && alg.aes128_cbc &&
		 alg.aes256_cts && alg.aes128_cts && alg.aes256_ecb && alg.aes128_ecb;
	if (alg.aes256_xts)
		direct_lookup(alg.aes256_xts, "AES-256-XTS", &alg.xts);
}

static int alg_init(void)
{
	if (pthread_once(&alg_once, alg_fetch) != 0 || !alg.ok)
		return -ENOPKG;
	return 0;
}

void fscrypt_cleanse(void *p, size_t len)
{
	OPENSSL_cleanse(p, len);
}

static int hkdf(int mode, const uint8_t *key, size_t keylen, const uint8_t *salt,
		size_t saltlen, const uint8_t *info, size_t infolen, uint8_t *out, size_t outlen)
{
	OSSL_PARAM params[6], *p = params;
	EVP_KDF_CTX *kctx;
	int err;

	err = alg_init();
	if (err)
		return err;
	kctx = EVP_KDF_CTX_new(alg.hkdf);
	if (!kctx)
		return -ENOMEM;
	*p++ = OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, (char *)"SHA512", 0);
	*p++ = OSSL_PARAM_construct_int(OSSL_KDF_PARAM_MODE, &mode);
	*p++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, (void *)key, keylen);
	if (salt)
		*p++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SALT, (void *)salt,
							 saltlen);
	if (info)
		*p++ = OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO, (void *)info,
							 infolen);
	*p = OSSL_PARAM_construct_end();
	err = EVP_KDF_derive(kctx, out, outlen, params) == 1 ? 0 : -EIO;
	EVP_KDF_CTX_free(kctx);
	return err;
}

int fscrypt_hkdf_extract(const uint8_t *ikm, size_t len, uint8_t prk[FSCRYPT_PRK_LEN])
{
	/* the kernel's salt: HashLen zero bytes (same as none, per RFC 5869) */
	static const uint8_t salt[FSCRYPT_PRK_LEN];

	return hkdf(EVP_KDF_HKDF_MODE_EXTRACT_ONLY, ikm, len, salt, sizeof(salt), NULL, 0, prk,
		    FSCRYPT_PRK_LEN);
}

int fscrypt_hkdf_expand(const uint8_t prk[FSCRYPT_PRK_LEN], uint8_t context,
			const uint8_t *info, size_t infolen, uint8_t *okm, size_t okmlen)
{
	/* info = "fscrypt\0" || context || info (kernel fscrypt_hkdf_expand) */
	uint8_t full[9 + 32];
	int err;

	if (infolen > sizeof(full) - 9)
		return -EINVAL;
	memcpy(full, "fscrypt\0", 8);
	full[8] = context;
	if (infolen)
		memcpy(full + 9, info, infolen);
	err = hkdf(EVP_KDF_HKDF_MODE_EXPAND_ONLY, prk, FSCRYPT_PRK_LEN, NULL, 0, full,
		   9 + infolen, okm, okmlen);
	OPENSSL_cleanse(full, sizeof(full));
	return err;
}

int fscrypt_siphash24(const uint8_t key[16], const void *msg, size_t len, uint64_t *out)
{
	OSSL_PARAM params[2];
	unsigned int size = 8;
	uint8_t h[8];
	size_t hl = 0;
	EVP_MAC_CTX *m;
	int err;

	err = alg_init();
	if (err)
		return err;
	m = EVP_MAC_CTX_new(alg.siphash);
	if (!m)
		return -ENOMEM;
	params[0] = OSSL_PARAM_construct_uint(OSSL_MAC_PARAM_SIZE, &size);
	params[1] = OSSL_PARAM_construct_end();
	/* size first: it selects the 64-bit output variant */
	err = EVP_MAC_CTX_set_params(m, params) == 1 &&
	      EVP_MAC_init(m, key, 16, params) == 1 &&
	      EVP_MAC_update(m, msg, len) == 1 && EVP_MAC_final(m, h, &hl, sizeof(h)) == 1 &&
	      hl == 8 ? 0 : -EIO;
	EVP_MAC_CTX_free(m);
	if (!err) {
		*out = 0;
		for (int i = 7; i >= 0; i--)
			*out = *out << 8 | h[i];
	}
	return err;
}

int fscrypt_sha256(const void *msg, size_t len, uint8_t out[32])
{
	unsigned int ol = 0;
	int err = alg_init();

	if (err)
		return err;
	return EVP_Digest(msg, len, out, &ol, alg.sha256, NULL) == 1 && ol == 32 ? 0 : -EIO;
}

static EVP_CIPHER *cipher_by_name(const char *name)
{
	if (!strcmp(name, "AES-256-XTS"))
		return alg.aes256_xts;
	if (!strcmp(name, "AES-128-CBC"))
		return alg.aes128_cbc;
	if (!strcmp(name, "AES-256-CBC-CTS"))
		return alg.aes256_cts;
	if (!strcmp(name, "AES-128-CBC-CTS"))
		return alg.aes128_cts;
	if (!strcmp(name, "AES-256-ECB"))
		return alg.aes256_ecb;
	if (!strcmp(name, "AES-128-ECB"))
		return alg.aes128_ecb;
	return NULL;
}

/* One EVP operation over a whole message (CTS needs it in one update). */
int fscrypt_evp_crypt(const char *name, const uint8_t *key, const uint8_t *iv,
		      const uint8_t *in, uint8_t *out, size_t len, int enc)
{
	OSSL_PARAM params[2], *pp = NULL;
	EVP_CIPHER_CTX *c;
	EVP_CIPHER *ci;
	int outl = 0, fl = 0, err;

	err = alg_init();
	if (err)
		return err;
	ci = cipher_by_name(name);
	if (!ci || len > (size_t)INT32_MAX)
		return -EINVAL;
	if (strstr(name, "CTS")) {
		/* the kernel's cts(cbc(aes)) is CS3: last two blocks always swapped */
		params[0] = OSSL_PARAM_construct_utf8_string(OSSL_CIPHER_PARAM_CTS_MODE,
							     (char *)"CS3", 0);
		params[1] = OSSL_PARAM_construct_end();
		pp = params;
	}
	c = EVP_CIPHER_CTX_new();
	if (!c)
		return -ENOMEM;
	err = -EIO;
	if (EVP_CipherInit_ex2(c, ci, key, iv, enc, pp) != 1)
		goto out;
	EVP_CIPHER_CTX_set_padding(c, 0);
	if (EVP_CipherUpdate(c, out, &outl, in, (int)len) != 1)
		goto out;
	if (EVP_CipherFinal_ex(c, out + outl, &fl) != 1 || (size_t)(outl + fl) != len)
		goto out;
	err = 0;
out:
	EVP_CIPHER_CTX_free(c);
	return err;
}

/* fscrypt_evp_crypt_units through the provider's AES-256-XTS functions (alg.xts). */
static int direct_crypt_units(const struct direct_cipher *d, const uint8_t *key,
			      size_t keylen, size_t ivlen,
			      void (*iv_fn)(const void *arg, size_t i, uint8_t iv[32]),
			      const void *arg, const uint8_t *in, uint8_t *out, size_t unit,
			      size_t nr, int enc)
{
	OSSL_FUNC_cipher_encrypt_init_fn *init = enc ? d->einit : d->dinit;
	void *c = d->newctx(d->provctx);
	uint8_t iv[32];
	size_t outl;
	int err = -EIO;

	if (!c)
		return -ENOMEM;
	if (init(c, key, keylen, NULL, 0, NULL) != 1)
		goto out;
	for (size_t i = 0; i < nr; i++) {
		iv_fn(arg, i, iv);
		outl = 0;
		if (init(c, NULL, 0, iv, ivlen, NULL) != 1 ||
		    d->cipher(c, out + i * unit, &outl, unit, in + i * unit, unit) != 1 ||
		    outl != unit)
			goto out;
	}
	err = 0;
out:
	OPENSSL_cleanse(iv, sizeof(iv));
	d->freectx(c);	/* the provider cleanses its key schedule */
	return err;
}

/*
 * Many units under one key with per-unit IVs: one EVP context and one key
 * schedule per call rather than per unit (XTS key setup is not cheap).
 */
int fscrypt_evp_crypt_units(const char *name, const uint8_t *key,
			    void (*iv_fn)(const void *arg, size_t i, uint8_t iv[32]),
			    const void *arg, const uint8_t *in, uint8_t *out, size_t unit,
			    size_t nr, int enc)
{
	EVP_CIPHER_CTX *c;
	EVP_CIPHER *ci;
	uint8_t iv[32];
	int outl, fl, err;

	err = alg_init();
	if (err)
		return err;
	ci = cipher_by_name(name);
	if (!ci || unit > (size_t)INT32_MAX)
		return -EINVAL;
	if (ci == alg.aes256_xts && alg.xts.ok)
		return direct_crypt_units(&alg.xts, key, 64, 16, iv_fn, arg, in, out, unit, nr,
					  enc);
	c = EVP_CIPHER_CTX_new();
	if (!c)
		return -ENOMEM;
	err = -EIO;
	if (EVP_CipherInit_ex2(c, ci, key, NULL, enc, NULL) != 1)
		goto out;
	EVP_CIPHER_CTX_set_padding(c, 0);
	for (size_t i = 0; i < nr; i++) {
		iv_fn(arg, i, iv);
		outl = fl = 0;
		if (EVP_CipherInit_ex2(c, NULL, NULL, iv, enc, NULL) != 1 ||
		    EVP_CipherUpdate(c, out + i * unit, &outl, in + i * unit, (int)unit) != 1 ||
		    EVP_CipherFinal_ex(c, out + i * unit + outl, &fl) != 1 ||
		    (size_t)(outl + fl) != unit)
			goto out;
	}
	err = 0;
out:
	OPENSSL_cleanse(iv, sizeof(iv));
	EVP_CIPHER_CTX_free(c);
	return err;
}

int fscrypt_aes_ecb(const uint8_t *key, size_t keylen, const uint8_t *in, uint8_t *out,
		    size_t len, int enc)
{
	if (len % 16)
		return -EINVAL;
	return fscrypt_evp_crypt(keylen == 32 ? "AES-256-ECB" : "AES-128-ECB", key, NULL, in,
				 out, len, enc);
}

int fscrypt_aes256_block(const uint8_t key[32], uint8_t block[16], int enc)
{
	return fscrypt_evp_crypt("AES-256-ECB", key, NULL, block, block, 16, enc);
}
