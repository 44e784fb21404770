// SPDX-License-Identifier: GPL-2.0
/*
 * HCTR2 with AES-256 (kernel crypto/hctr2.c, crypto/xctr.c, POLYVAL of
 * RFC 8452), for fscrypt's AES-256-HCTR2 filenames.  OpenSSL has no POLYVAL
 * or XCTR, so they are here; AES itself goes through EVP.
 *
 *   hbar = E_K(0), L = E_K(1)
 *   H(T, X) = POLYVAL_hbar(le64(2 * 8 * |T| + 2 + (|P| % 16 != 0)) || 0^64
 *                          || T || X || pad), pad = 1 0* to a block if needed
 *   enc: MM = M ^ H(T, N); UU = E_K(MM); S = MM ^ UU ^ L;
 *        V = N ^ XCTR_K(S); U = UU ^ H(T, V)      (M = first 16 bytes)
 *   XCTR block i (from 1) = E_K(S ^ le(i))
 */
#include "hctr2.h"
#include "fscrypt_internal.h"

#include <errno.h>
#include <string.h>

static uint64_t ld64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static void st64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/*
 * acc = (acc) * h * x^-128 in GF(2^128) mod x^128 + x^127 + x^126 + x^121 + 1,
 * elements little-endian (bit i of the 128-bit integer = coefficient of x^i):
 * r = sum over bits a_i of a_i * h * x^(i - 128), by Horner from bit 0 with a
 * division by x per step.
 */
void fscrypt_polyval_mul(uint8_t acc[16], const uint8_t h[16])
{
	const uint64_t hlo = ld64(h), hhi = ld64(h + 8);
	uint64_t alo = ld64(acc), ahi = ld64(acc + 8), rlo = 0, rhi = 0;

	for (int i = 0; i < 128; i++) {
		uint64_t bit = i < 64 ? (alo >> i) & 1 : (ahi >> (i - 64)) & 1;
		uint64_t m = (uint64_t)0 - bit, odd;

		rlo ^= hlo & m;
		rhi ^= hhi & m;
		/* divide by x: (r + P) / x when the constant term is set */
		odd = (uint64_t)0 - (rlo & 1);
		rlo = (rlo >> 1) | (rhi << 63);
		rhi = (rhi >> 1) ^ (0xe100000000000000ULL & odd);
	}
	st64(acc, rlo);
	st64(acc + 8, rhi);
}

void fscrypt_polyval(const uint8_t h[16], const uint8_t *x, size_t nblocks, uint8_t out[16])
{
	memset(out, 0, 16);
	for (size_t b = 0; b < nblocks; b++) {
		for (int i = 0; i < 16; i++)
			out[i] ^= x[16 * b + i];
		fscrypt_polyval_mul(out, h);
	}
}

int fscrypt_hctr2_setkey(struct fscrypt_hctr2_key *k, const uint8_t key[32])
{
	uint8_t blocks[32] = { 0 };
	int err;

	memcpy(k->aes_key, key, 32);
	blocks[16] = 1;
	err = fscrypt_aes_ecb(key, 32, blocks, blocks, 32, 1);
	if (!err) {
		memcpy(k->hbar, blocks, 16);
		memcpy(k->L, blocks + 16, 16);
	}
	fscrypt_cleanse(blocks, sizeof(blocks));
	return err;
}

static void absorb(uint8_t acc[16], const uint8_t h[16], const uint8_t blk[16])
{
	for (int i = 0; i < 16; i++)
		acc[i] ^= blk[i];
	fscrypt_polyval_mul(acc, h);
}

/* H(T, X): X is the bulk (len bytes); has_rem is about the whole message */
static void hctr2_hash(const struct fscrypt_hctr2_key *k, const uint8_t tweak[32],
		       const uint8_t *x, size_t len, int has_rem, uint8_t out[16])
{
	uint8_t blk[16] = { 0 };
	size_t full = len / 16, rem = len % 16;

	memset(out, 0, 16);
	st64(blk, (uint64_t)32 * 8 * 2 + 2 + (has_rem ? 1 : 0));
	absorb(out, k->hbar, blk);
	absorb(out, k->hbar, tweak);
	absorb(out, k->hbar, tweak + 16);
	for (size_t b = 0; b < full; b++)
		absorb(out, k->hbar, x + 16 * b);
	if (rem) {
		memset(blk, 0, sizeof(blk));
		memcpy(blk, x + 16 * full, rem);
		blk[rem] = 1;
		absorb(out, k->hbar, blk);
	}
}

/* buf ^= XCTR_K(S) over len bytes */
static int xctr(const struct fscrypt_hctr2_key *k, const uint8_t s[16], uint8_t *buf, size_t len)
{
	uint8_t ks[16 * 64];
	int err = 0;

	for (size_t done = 0, ctr = 1; done < len && !err;) {
		size_t n = len - done < sizeof(ks) ? len - done : sizeof(ks);
		size_t nb = (n + 15) / 16;

		for (size_t b = 0; b < nb; b++, ctr++) {
			memcpy(ks + 16 * b, s, 16);
			for (int i = 0; i < 8; i++)
				ks[16 * b + i] ^= (uint8_t)((uint64_t)ctr >> (8 * i));
		}
		err = fscrypt_aes_ecb(k->aes_key, 32, ks, ks, nb * 16, 1);
		for (size_t i = 0; !err && i < n; i++)
			buf[done + i] ^= ks[i];
		done += n;
	}
	fscrypt_cleanse(ks, sizeof(ks));
	return err;
}

int fscrypt_hctr2_crypt(const struct fscrypt_hctr2_key *k, const uint8_t tweak[32],
			uint8_t *buf, size_t len, int enc)
{
	uint8_t h[16], mm[16], uu[16], s[16];
	const int has_rem = len % 16 != 0;
	int err;

	if (len < 16)
		return -EINVAL;
	/* MM = M ^ H(T, N), or UU = U ^ H(T, V) */
	hctr2_hash(k, tweak, buf + 16, len - 16, has_rem, h);
	for (int i = 0; i < 16; i++)
		mm[i] = buf[i] ^ h[i];
	memcpy(uu, mm, 16);
	err = fscrypt_aes_ecb(k->aes_key, 32, mm, uu, 16, enc);
	if (err)
		goto out;
	/* S = MM ^ UU ^ L, symmetric in the two */
	for (int i = 0; i < 16; i++)
		s[i] = mm[i] ^ uu[i] ^ k->L[i];
	err = xctr(k, s, buf + 16, len - 16);
	if (err)
		goto out;
	hctr2_hash(k, tweak, buf + 16, len - 16, has_rem, h);
	for (int i = 0; i < 16; i++)
		buf[i] = uu[i] ^ h[i];
out:
	fscrypt_cleanse(h, sizeof(h));
	fscrypt_cleanse(mm, sizeof(mm));
	fscrypt_cleanse(uu, sizeof(uu));
	fscrypt_cleanse(s, sizeof(s));
	return err;
}
