// SPDX-License-Identifier: GPL-2.0
/*
 * Adiantum and its parts (crypto/adiantum.c) against published vectors:
 *  - ChaCha20 block function: RFC 8439 section 2.3.2
 *  - HChaCha20: draft-irtf-cfrg-xchacha-03 section 2.2.1
 *  - XChaCha12 keystream, Poly1305, NH, NHPoly1305 and Adiantum
 *    (XChaCha12, AES-256; tweaks of 0, 17 and 32 bytes): the reference
 *    vectors of the Adiantum authors, github.com/google/adiantum
 *    test_vectors/ours (tests/unit/fscrypt_adiantum_vectors.h, selected by
 *    gen_adiantum_vectors.py)
 *  - Poly1305 also against OpenSSL's EVP_MAC "POLY1305" for lengths 0..300
 *  - Adiantum decrypt(encrypt(x)) == x for lengths 16..600 and 4096.
 * The fscrypt use of Adiantum (4096-byte units and names, 32-byte tweak)
 * is checked against the kernel's ciphertext in test_fscrypt.
 */
#include "check.h"
#include "adiantum.h"
#include "fscrypt_adiantum_vectors.h"

#include <stdbool.h>

#include <openssl/core_names.h>
#include <openssl/evp.h>

static size_t unhex(const char *h, uint8_t *out, size_t cap)
{
	size_t n = strlen(h) / 2;

	if (n > cap)
		n = cap;
	for (size_t i = 0; i < n; i++) {
		unsigned v;

		sscanf(h + 2 * i, "%2x", &v);
		out[i] = (uint8_t)v;
	}
	return n;
}

static bool eq_hex(const uint8_t *p, size_t len, const char *hex)
{
	uint8_t buf[8192];

	return strlen(hex) == 2 * len && len <= sizeof(buf) && unhex(hex, buf, sizeof(buf)) == len &&
	       !memcmp(p, buf, len);
}

static int aes256(const uint8_t key[32], uint8_t block[16], int enc)
{
	EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
	int l = 0, ok;

	ok = c && EVP_CipherInit_ex(c, EVP_aes_256_ecb(), NULL, key, NULL, enc) == 1 &&
	     EVP_CIPHER_CTX_set_padding(c, 0) == 1 &&
	     EVP_CipherUpdate(c, block, &l, block, 16) == 1 && l == 16;
	EVP_CIPHER_CTX_free(c);
	return ok ? 0 : -1;
}

static void test_chacha(void)
{
	/* RFC 8439 2.3.2: key 00..1f, counter 1, nonce 000000090000004a00000000 */
	uint32_t st[16] = { 0x61707865, 0x3320646e, 0x79622d32, 0x6b206574 };
	uint8_t key[32], out[64], nonce[16], sub[32];

	for (int i = 0; i < 32; i++)
		key[i] = (uint8_t)i;
	for (int i = 0; i < 8; i++)
		st[4 + i] = (uint32_t)key[4 * i] | (uint32_t)key[4 * i + 1] << 8 |
			    (uint32_t)key[4 * i + 2] << 16 | (uint32_t)key[4 * i + 3] << 24;
	st[12] = 1;
	st[13] = 0x09000000;
	st[14] = 0x4a000000;
	st[15] = 0;
	fscrypt_chacha_block(st, out, 20);
	CHECK(eq_hex(out, 64, "10f1e7e4d13b5915500fdd1fa32071c4c7d1f4c733c068030422aa9ac3d46c4e"
			      "d2826446079faa0914c2d705d98b02a2b5129cd1de164eb9cbd083e8a2503c4e"),
	      "RFC 8439 2.3.2 ChaCha20 block");
	/* draft-irtf-cfrg-xchacha 2.2.1 */
	unhex("000000090000004a0000000031415927", nonce, 16);
	fscrypt_hchacha(key, nonce, 20, sub);
	CHECK(eq_hex(sub, 32, "82413b4227b27bfed30e42508a877d73a0f9e4d58a74a853c12ec41326d3ecdc"),
	      "HChaCha20 test vector");

	for (size_t v = 0; v < sizeof(xchacha12_vecs) / sizeof(xchacha12_vecs[0]); v++) {
		const struct xchacha_vec *x = &xchacha12_vecs[v];
		uint8_t k[32], n[24], ks[64];

		unhex(x->key, k, 32);
		unhex(x->nonce, n, 24);
		for (int t = 0; t < x->n; t++) {
			memset(ks, 0, sizeof(ks));
			/* the reference's offset counts 64-byte blocks */
			fscrypt_xchacha_xor(k, n, 12, (uint64_t)x->t[t].offset * 64, ks, sizeof(ks));
			CHECK(eq_hex(ks, 64, x->t[t].stream), "XChaCha12 %s offset %u", x->desc,
			      x->t[t].offset);
		}
		/* a stream cut in pieces is the same stream */
		{
			uint8_t a[300] = { 0 }, b[300] = { 0 };

			fscrypt_xchacha_xor(k, n, 12, 5, a, sizeof(a));
			fscrypt_xchacha_xor(k, n, 12, 5, b, 77);
			fscrypt_xchacha_xor(k, n, 12, 5 + 77, b + 77, sizeof(b) - 77);
			CHECK(!memcmp(a, b, sizeof(a)), "XChaCha12 split");
		}
	}
}

static void ossl_poly1305(const uint8_t key[32], const uint8_t *m, size_t len, uint8_t out[16])
{
	EVP_MAC *mac = EVP_MAC_fetch(NULL, "POLY1305", NULL);
	EVP_MAC_CTX *c = mac ? EVP_MAC_CTX_new(mac) : NULL;
	size_t ol = 0;

	memset(out, 0, 16);
	if (c && EVP_MAC_init(c, key, 32, NULL) == 1 && EVP_MAC_update(c, m, len) == 1)
		EVP_MAC_final(c, out, &ol, 16);
	EVP_MAC_CTX_free(c);
	EVP_MAC_free(mac);
}

static void test_poly1305(void)
{
	for (size_t v = 0; v < sizeof(poly1305_vecs) / sizeof(poly1305_vecs[0]); v++) {
		const struct poly_vec *p = &poly1305_vecs[v];
		struct fscrypt_poly1305 st;
		uint8_t r[16], s[16], m[64], mac[16];
		size_t ml = unhex(p->msg, m, sizeof(m));

		unhex(p->r, r, 16);
		unhex(p->s, s, 16);
		fscrypt_poly1305_init(&st, r);
		fscrypt_poly1305_update(&st, m, ml);
		fscrypt_poly1305_final(&st, s, mac);
		CHECK(eq_hex(mac, 16, p->mac), "Poly1305 %s", p->desc);
	}
	/* against OpenSSL, with a stream cut at an odd place */
	for (size_t len = 0; len <= 300; len++) {
		uint8_t key[32], m[300], a[16], b[16];
		struct fscrypt_poly1305 st;

		for (size_t i = 0; i < 32; i++)
			key[i] = (uint8_t)(i * 37 + len);
		for (size_t i = 0; i < len; i++)
			m[i] = (uint8_t)(i * 11 + 3 * len);
		if (len == 100)
			memset(m, 0xff, len);	/* carries */
		ossl_poly1305(key, m, len, a);
		fscrypt_poly1305_init(&st, key);
		fscrypt_poly1305_update(&st, m, len / 3);
		fscrypt_poly1305_update(&st, m + len / 3, len - len / 3);
		fscrypt_poly1305_final(&st, key + 16, b);
		if (memcmp(a, b, 16)) {
			CHECK(0, "Poly1305 differs from OpenSSL at length %zu", len);
			break;
		}
	}
}

static void test_nh(void)
{
	for (size_t v = 0; v < sizeof(nh_vecs) / sizeof(nh_vecs[0]); v++) {
		const struct hash_vec *h = &nh_vecs[v];
		uint8_t kb[NH_KEY_BYTES], m[1024], out[32];
		uint32_t key[NH_KEY_BYTES / 4];
		size_t ml;

		unhex(h->key, kb, sizeof(kb));
		for (size_t i = 0; i < NH_KEY_BYTES / 4; i++)
			key[i] = (uint32_t)kb[4 * i] | (uint32_t)kb[4 * i + 1] << 8 |
				 (uint32_t)kb[4 * i + 2] << 16 | (uint32_t)kb[4 * i + 3] << 24;
		ml = unhex(h->msg, m, sizeof(m));
		fscrypt_nh(key, m, ml, out);
		CHECK(eq_hex(out, 32, h->hash), "NH %s", h->desc);
	}
	for (size_t v = 0; v < sizeof(nhpoly1305_vecs) / sizeof(nhpoly1305_vecs[0]); v++) {
		const struct hash_vec *h = &nhpoly1305_vecs[v];
		uint8_t key[NHPOLY1305_KEY_SIZE], m[4096], out[16];
		size_t ml;

		unhex(h->key, key, sizeof(key));
		ml = unhex(h->msg, m, sizeof(m));
		fscrypt_nhpoly1305(key, m, ml, out);
		CHECK(eq_hex(out, 16, h->hash), "NHPoly1305 %s", h->desc);
	}
}

static void test_adiantum(void)
{
	static struct fscrypt_adiantum_key k;

	for (size_t v = 0; v < sizeof(adiantum_vecs) / sizeof(adiantum_vecs[0]); v++) {
		const struct adiantum_vec *a = &adiantum_vecs[v];
		uint8_t key[32], tw[64], buf[4096];
		size_t tl = unhex(a->tweak, tw, sizeof(tw));
		size_t pl = unhex(a->pt, buf, sizeof(buf));

		unhex(a->key, key, 32);
		fscrypt_adiantum_setkey(&k, key);
		CHECK(fscrypt_adiantum_crypt(&k, aes256, tw, tl, buf, pl, 1) == 0, "enc");
		CHECK(eq_hex(buf, pl, a->ct), "Adiantum encrypt %s", a->desc);
		unhex(a->ct, buf, sizeof(buf));
		CHECK(fscrypt_adiantum_crypt(&k, aes256, tw, tl, buf, pl, 0) == 0, "dec");
		CHECK(eq_hex(buf, pl, a->pt), "Adiantum decrypt %s", a->desc);
	}
	{
		uint8_t key[32], tw[32], m[4096], c[4096];

		for (int i = 0; i < 32; i++)
			key[i] = (uint8_t)(200 - i), tw[i] = (uint8_t)(i * 3);
		fscrypt_adiantum_setkey(&k, key);
		for (size_t len = 16; len <= 4096; len = len < 600 ? len + 1 : 4096) {
			for (size_t i = 0; i < len; i++)
				m[i] = (uint8_t)(i ^ len);
			memcpy(c, m, len);
			fscrypt_adiantum_crypt(&k, aes256, tw, 32, c, len, 1);
			if (!memcmp(c, m, len < 32 ? len : 32))
				CHECK(0, "Adiantum did not change the data at %zu", len);
			fscrypt_adiantum_crypt(&k, aes256, tw, 32, c, len, 0);
			if (memcmp(c, m, len)) {
				CHECK(0, "Adiantum round trip at length %zu", len);
				break;
			}
			if (len == 4096)
				break;
		}
		CHECK(fscrypt_adiantum_crypt(&k, aes256, tw, 32, m, 15, 1) == -EINVAL, "len 15");
	}
}

int main(void)
{
	test_chacha();
	test_poly1305();
	test_nh();
	test_adiantum();
	return check_done("test_fscrypt_adiantum");
}
