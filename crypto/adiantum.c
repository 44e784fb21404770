// SPDX-License-Identifier: GPL-2.0
/*
 * Adiantum (XChaCha12 + NHPoly1305 + AES-256), for fscrypt mode 9.
 *
 * OpenSSL has neither XChaCha12 nor NH, so the stream cipher and the hash
 * are here; the one AES-256 block per message goes through a callback.
 * Layout and key derivation follow the kernel's crypto/adiantum.c so that
 * ciphertext is interchangeable with Linux:
 *
 *   K_E || K_T || K_L || K_N = XChaCha12(K_S, nonce = 1 || 0^191)
 *   H(T, L)  = Poly1305_{K_T}(le128(8 * |L|) || T) + Poly1305_{K_L}(NH(L))
 *   enc:  P_M = P_R + H(T, P_L); C_M = AES(K_E, P_M);
 *         C_L = P_L ^ XChaCha12(K_S, nonce = C_M || 1 || 0^63);
 *         C_R = C_M - H(T, C_L)            (all sums mod 2^128)
 */
#include "adiantum.h"

#include <errno.h>
#include <string.h>

static inline uint32_t get_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static inline void put_le32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
}

static inline uint64_t get_le64(const uint8_t *p)
{
	return (uint64_t)get_le32(p) | (uint64_t)get_le32(p + 4) << 32;
}

static inline void put_le64(uint8_t *p, uint64_t v)
{
	put_le32(p, (uint32_t)v);
	put_le32(p + 4, (uint32_t)(v >> 32));
}

static void wipe(void *p, size_t n)
{
	volatile uint8_t *v = p;

	while (n--)
		*v++ = 0;
}

/* ---------------------------------------------------------------- ChaCha */

#define ROTL32(v, n) (((v) << (n)) | ((v) >> (32 - (n))))
#define QR(a, b, c, d)                                   \
	do {                                             \
		a += b; d ^= a; d = ROTL32(d, 16);       \
		c += d; b ^= c; b = ROTL32(b, 12);       \
		a += b; d ^= a; d = ROTL32(d, 8);        \
		c += d; b ^= c; b = ROTL32(b, 7);        \
	} while (0)

static void chacha_permute(uint32_t x[16], int rounds)
{
	for (int i = 0; i < rounds; i += 2) {
		QR(x[0], x[4], x[8], x[12]);
		QR(x[1], x[5], x[9], x[13]);
		QR(x[2], x[6], x[10], x[14]);
		QR(x[3], x[7], x[11], x[15]);
		QR(x[0], x[5], x[10], x[15]);
		QR(x[1], x[6], x[11], x[12]);
		QR(x[2], x[7], x[8], x[13]);
		QR(x[3], x[4], x[9], x[14]);
	}
}

void fscrypt_chacha_block(const uint32_t in[16], uint8_t out[64], int rounds)
{
	uint32_t x[16];

	memcpy(x, in, sizeof(x));
	chacha_permute(x, rounds);
	for (int i = 0; i < 16; i++)
		put_le32(out + 4 * i, x[i] + in[i]);
	wipe(x, sizeof(x));
}

static void chacha_init(uint32_t st[16], const uint8_t key[32])
{
	st[0] = 0x61707865;	/* "expand 32-byte k" */
	st[1] = 0x3320646e;
	st[2] = 0x79622d32;
	st[3] = 0x6b206574;
	for (int i = 0; i < 8; i++)
		st[4 + i] = get_le32(key + 4 * i);
}

void fscrypt_hchacha(const uint8_t key[32], const uint8_t nonce[16], int rounds,
		     uint8_t subkey[32])
{
	uint32_t x[16];

	chacha_init(x, key);
	for (int i = 0; i < 4; i++)
		x[12 + i] = get_le32(nonce + 4 * i);
	chacha_permute(x, rounds);
	for (int i = 0; i < 4; i++) {
		put_le32(subkey + 4 * i, x[i]);
		put_le32(subkey + 16 + 4 * i, x[12 + i]);
	}
	wipe(x, sizeof(x));
}

void fscrypt_xchacha_xor(const uint8_t key[32], const uint8_t nonce[24], int rounds,
			 uint64_t offset, uint8_t *buf, size_t len)
{
	uint8_t subkey[32], ks[64];
	uint32_t st[16];
	uint64_t ctr = offset / 64;
	size_t skip = (size_t)(offset % 64);

	fscrypt_hchacha(key, nonce, rounds, subkey);
	chacha_init(st, subkey);
	/* 64-bit block counter in words 12-13, last 8 nonce bytes in 14-15 */
	st[14] = get_le32(nonce + 16);
	st[15] = get_le32(nonce + 20);
	while (len) {
		size_t n = 64 - skip;

		if (n > len)
			n = len;
		st[12] = (uint32_t)ctr;
		st[13] = (uint32_t)(ctr >> 32);
		fscrypt_chacha_block(st, ks, rounds);
		for (size_t i = 0; i < n; i++)
			buf[i] ^= ks[skip + i];
		buf += n;
		len -= n;
		skip = 0;
		ctr++;
	}
	wipe(subkey, sizeof(subkey));
	wipe(ks, sizeof(ks));
	wipe(st, sizeof(st));
}

/* -------------------------------------------------------------- Poly1305 */

/* 26-bit limbs; h < 2^130 + small between blocks. */
void fscrypt_poly1305_init(struct fscrypt_poly1305 *st, const uint8_t r[16])
{
	/* clamp r as the Poly1305 specification requires */
	st->r[0] = get_le32(r + 0) & 0x3ffffff;
	st->r[1] = (get_le32(r + 3) >> 2) & 0x3ffff03;
	st->r[2] = (get_le32(r + 6) >> 4) & 0x3ffc0ff;
	st->r[3] = (get_le32(r + 9) >> 6) & 0x3f03fff;
	st->r[4] = (get_le32(r + 12) >> 8) & 0x00fffff;
	memset(st->h, 0, sizeof(st->h));
	st->buflen = 0;
}

static void poly1305_block(struct fscrypt_poly1305 *st, const uint8_t m[16], uint32_t hibit)
{
	const uint32_t r0 = st->r[0], r1 = st->r[1], r2 = st->r[2], r3 = st->r[3],
		       r4 = st->r[4];
	const uint32_t s1 = r1 * 5, s2 = r2 * 5, s3 = r3 * 5, s4 = r4 * 5;
	uint32_t h0 = st->h[0], h1 = st->h[1], h2 = st->h[2], h3 = st->h[3], h4 = st->h[4];
	uint64_t d0, d1, d2, d3, d4;
	uint32_t c;

	h0 += get_le32(m + 0) & 0x3ffffff;
	h1 += (get_le32(m + 3) >> 2) & 0x3ffffff;
	h2 += (get_le32(m + 6) >> 4) & 0x3ffffff;
	h3 += (get_le32(m + 9) >> 6) & 0x3ffffff;
	h4 += (get_le32(m + 12) >> 8) | hibit;

	d0 = (uint64_t)h0 * r0 + (uint64_t)h1 * s4 + (uint64_t)h2 * s3 +
	     (uint64_t)h3 * s2 + (uint64_t)h4 * s1;
	d1 = (uint64_t)h0 * r1 + (uint64_t)h1 * r0 + (uint64_t)h2 * s4 +
	     (uint64_t)h3 * s3 + (uint64_t)h4 * s2;
	d2 = (uint64_t)h0 * r2 + (uint64_t)h1 * r1 + (uint64_t)h2 * r0 +
	     (uint64_t)h3 * s4 + (uint64_t)h4 * s3;
	d3 = (uint64_t)h0 * r3 + (uint64_t)h1 * r2 + (uint64_t)h2 * r1 +
	     (uint64_t)h3 * r0 + (uint64_t)h4 * s4;
	d4 = (uint64_t)h0 * r4 + (uint64_t)h1 * r3 + (uint64_t)h2 * r2 +
	     (uint64_t)h3 * r1 + (uint64_t)h4 * r0;

	c = (uint32_t)(d0 >> 26); h0 = (uint32_t)d0 & 0x3ffffff;
	d1 += c; c = (uint32_t)(d1 >> 26); h1 = (uint32_t)d1 & 0x3ffffff;
	d2 += c; c = (uint32_t)(d2 >> 26); h2 = (uint32_t)d2 & 0x3ffffff;
	d3 += c; c = (uint32_t)(d3 >> 26); h3 = (uint32_t)d3 & 0x3ffffff;
	d4 += c; c = (uint32_t)(d4 >> 26); h4 = (uint32_t)d4 & 0x3ffffff;
	h0 += c * 5; c = h0 >> 26; h0 &= 0x3ffffff;
	h1 += c;

	st->h[0] = h0; st->h[1] = h1; st->h[2] = h2; st->h[3] = h3; st->h[4] = h4;
}

void fscrypt_poly1305_update(struct fscrypt_poly1305 *st, const uint8_t *m, size_t len)
{
	if (st->buflen) {
		size_t n = 16 - st->buflen;

		if (n > len)
			n = len;
		memcpy(st->buf + st->buflen, m, n);
		st->buflen += n;
		m += n;
		len -= n;
		if (st->buflen < 16)
			return;
		poly1305_block(st, st->buf, 1u << 24);
		st->buflen = 0;
	}
	for (; len >= 16; m += 16, len -= 16)
		poly1305_block(st, m, 1u << 24);
	if (len) {
		memcpy(st->buf, m, len);
		st->buflen = len;
	}
}

void fscrypt_poly1305_final(struct fscrypt_poly1305 *st, const uint8_t *s, uint8_t out[16])
{
	uint32_t h0, h1, h2, h3, h4, g0, g1, g2, g3, g4, c, mask;
	uint64_t f;

	if (st->buflen) {
		/* partial block: append 1, pad with zeros, no 2^128 bit */
		st->buf[st->buflen] = 1;
		memset(st->buf + st->buflen + 1, 0, 15 - st->buflen);
		poly1305_block(st, st->buf, 0);
		st->buflen = 0;
	}
	h0 = st->h[0]; h1 = st->h[1]; h2 = st->h[2]; h3 = st->h[3]; h4 = st->h[4];

	c = h1 >> 26; h1 &= 0x3ffffff;
	h2 += c; c = h2 >> 26; h2 &= 0x3ffffff;
	h3 += c; c = h3 >> 26; h3 &= 0x3ffffff;
	h4 += c; c = h4 >> 26; h4 &= 0x3ffffff;
	h0 += c * 5; c = h0 >> 26; h0 &= 0x3ffffff;
	h1 += c;

	/* g = h + 5 - 2^130; take g when it does not borrow, i.e. h >= p */
	g0 = h0 + 5; c = g0 >> 26; g0 &= 0x3ffffff;
	g1 = h1 + c; c = g1 >> 26; g1 &= 0x3ffffff;
	g2 = h2 + c; c = g2 >> 26; g2 &= 0x3ffffff;
	g3 = h3 + c; c = g3 >> 26; g3 &= 0x3ffffff;
	g4 = h4 + c - (1u << 26);

	mask = (g4 >> 31) - 1;	/* all ones when g4 did not go negative */
	g0 &= mask; g1 &= mask; g2 &= mask; g3 &= mask; g4 &= mask;
	mask = ~mask;
	h0 = (h0 & mask) | g0;
	h1 = (h1 & mask) | g1;
	h2 = (h2 & mask) | g2;
	h3 = (h3 & mask) | g3;
	h4 = (h4 & mask) | g4;

	/* to 4 x 32 bits, i.e. h mod 2^128 */
	h0 = h0 | (h1 << 26);
	h1 = (h1 >> 6) | (h2 << 20);
	h2 = (h2 >> 12) | (h3 << 14);
	h3 = (h3 >> 18) | (h4 << 8);

	if (s) {
		f = (uint64_t)h0 + get_le32(s + 0); h0 = (uint32_t)f;
		f = (uint64_t)h1 + get_le32(s + 4) + (f >> 32); h1 = (uint32_t)f;
		f = (uint64_t)h2 + get_le32(s + 8) + (f >> 32); h2 = (uint32_t)f;
		f = (uint64_t)h3 + get_le32(s + 12) + (f >> 32); h3 = (uint32_t)f;
	}
	put_le32(out + 0, h0);
	put_le32(out + 4, h1);
	put_le32(out + 8, h2);
	put_le32(out + 12, h3);
	wipe(st, sizeof(*st));
}

/* -------------------------------------------------------------------- NH */

void fscrypt_nh(const uint32_t *key, const uint8_t *m, size_t len,
		uint8_t out[32])
{
	uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;

	/* 4 passes, stride 2: pass i uses key words offset by 4 * i */
	for (; len >= 16; len -= 16, m += 16, key += 4) {
		uint32_t m0 = get_le32(m), m1 = get_le32(m + 4), m2 = get_le32(m + 8),
			 m3 = get_le32(m + 12);

		s0 += (uint64_t)(uint32_t)(m0 + key[0]) * (uint32_t)(m2 + key[2]);
		s1 += (uint64_t)(uint32_t)(m0 + key[4]) * (uint32_t)(m2 + key[6]);
		s2 += (uint64_t)(uint32_t)(m0 + key[8]) * (uint32_t)(m2 + key[10]);
		s3 += (uint64_t)(uint32_t)(m0 + key[12]) * (uint32_t)(m2 + key[14]);
		s0 += (uint64_t)(uint32_t)(m1 + key[1]) * (uint32_t)(m3 + key[3]);
		s1 += (uint64_t)(uint32_t)(m1 + key[5]) * (uint32_t)(m3 + key[7]);
		s2 += (uint64_t)(uint32_t)(m1 + key[9]) * (uint32_t)(m3 + key[11]);
		s3 += (uint64_t)(uint32_t)(m1 + key[13]) * (uint32_t)(m3 + key[15]);
	}
	put_le64(out, s0);
	put_le64(out + 8, s1);
	put_le64(out + 16, s2);
	put_le64(out + 24, s3);
}

static void nhpoly1305_words(const uint8_t r[16], const uint32_t *nh_key, const uint8_t *m,
			     size_t len, uint8_t out[16])
{
	struct fscrypt_poly1305 st;
	uint8_t nh[32], tail[16];

	fscrypt_poly1305_init(&st, r);
	while (len >= 16) {
		size_t n = len < NH_MESSAGE_BYTES ? len & ~(size_t)15 : NH_MESSAGE_BYTES;

		fscrypt_nh(nh_key, m, n, nh);
		m += n;
		len -= n;
		if (len && len < 16 && n < NH_MESSAGE_BYTES) {
			/* the zero-padded tail unit belongs to the same NH message */
			uint8_t nh2[32];

			memset(tail, 0, sizeof(tail));
			memcpy(tail, m, len);
			fscrypt_nh(nh_key + n / 4, tail, 16, nh2);
			for (int i = 0; i < 4; i++)
				put_le64(nh + 8 * i, get_le64(nh + 8 * i) + get_le64(nh2 + 8 * i));
			len = 0;
		}
		/* NH outputs are whole 16-byte blocks: no partial-block padding */
		fscrypt_poly1305_update(&st, nh, sizeof(nh));
	}
	if (len) {
		memset(tail, 0, sizeof(tail));
		memcpy(tail, m, len);
		fscrypt_nh(nh_key, tail, 16, nh);
		fscrypt_poly1305_update(&st, nh, sizeof(nh));
	}
	fscrypt_poly1305_final(&st, NULL, out);
	wipe(nh, sizeof(nh));
	wipe(tail, sizeof(tail));
}

void fscrypt_nhpoly1305(const uint8_t key[NHPOLY1305_KEY_SIZE], const uint8_t *m,
			size_t len, uint8_t out[16])
{
	uint32_t nh_key[NH_KEY_BYTES / 4];

	for (size_t i = 0; i < NH_KEY_BYTES / 4; i++)
		nh_key[i] = get_le32(key + 16 + 4 * i);
	nhpoly1305_words(key, nh_key, m, len, out);
	wipe(nh_key, sizeof(nh_key));
}

/* -------------------------------------------------------------- Adiantum */

void fscrypt_adiantum_setkey(struct fscrypt_adiantum_key *k, const uint8_t key[32])
{
	uint8_t nonce[24] = { 1 };
	uint8_t derived[32 + 16 + 16 + NH_KEY_BYTES];

	memcpy(k->stream_key, key, 32);
	memset(derived, 0, sizeof(derived));
	fscrypt_xchacha_xor(key, nonce, 12, 0, derived, sizeof(derived));
	memcpy(k->aes_key, derived, 32);
	memcpy(k->header_poly_key, derived + 32, 16);
	memcpy(k->msg_poly_key, derived + 48, 16);
	for (size_t i = 0; i < NH_KEY_BYTES / 4; i++)
		k->nh_key[i] = get_le32(derived + 64 + 4 * i);
	wipe(derived, sizeof(derived));
}

/* H(T, L) of section 6.4, as a little-endian 128-bit number in out */
static void adiantum_hash(const struct fscrypt_adiantum_key *k, const uint8_t *tweak,
			  size_t tweaklen, const uint8_t *l, size_t llen, uint8_t out[16])
{
	struct fscrypt_poly1305 st;
	uint8_t header[16] = { 0 }, ht[16], hl[16];
	uint64_t lo, hi;

	put_le64(header, (uint64_t)llen * 8);
	fscrypt_poly1305_init(&st, k->header_poly_key);
	fscrypt_poly1305_update(&st, header, sizeof(header));
	fscrypt_poly1305_update(&st, tweak, tweaklen);
	fscrypt_poly1305_final(&st, NULL, ht);
	nhpoly1305_words(k->msg_poly_key, k->nh_key, l, llen, hl);
	lo = get_le64(ht) + get_le64(hl);
	hi = get_le64(ht + 8) + get_le64(hl + 8) + (lo < get_le64(ht));
	put_le64(out, lo);
	put_le64(out + 8, hi);
}

static void le128_addsub(uint8_t r[16], const uint8_t h[16], int add)
{
	uint64_t a0 = get_le64(r), a1 = get_le64(r + 8), b0 = get_le64(h), b1 = get_le64(h + 8);
	uint64_t lo;

	if (add) {
		lo = a0 + b0;
		a1 = a1 + b1 + (lo < a0);
	} else {
		lo = a0 - b0;
		a1 = a1 - b1 - (a0 < b0);
	}
	put_le64(r, lo);
	put_le64(r + 8, a1);
}

int fscrypt_adiantum_crypt(const struct fscrypt_adiantum_key *k, fscrypt_aes256_block_fn aes,
			   const uint8_t *tweak, size_t tweaklen, uint8_t *buf, size_t len,
			   int enc)
{
	uint8_t h[16], rbuf[16], nonce[24] = { 0 };
	size_t bulk;
	int err = 0;

	if (len < 16)
		return -EINVAL;
	bulk = len - 16;

	/* first hash step: P_M = P_R + H(T, P_L), or C_M = C_R + H(T, C_L) */
	adiantum_hash(k, tweak, tweaklen, buf, bulk, h);
	memcpy(rbuf, buf + bulk, 16);
	le128_addsub(rbuf, h, 1);
	if (enc && aes(k->aes_key, rbuf, 1)) {
		err = -EIO;
		goto out;
	}
	/* rbuf is now C_M either way */
	memcpy(nonce, rbuf, 16);
	nonce[16] = 1;
	fscrypt_xchacha_xor(k->stream_key, nonce, 12, 0, buf, bulk);
	if (!enc && aes(k->aes_key, rbuf, 0)) {
		err = -EIO;
		goto out;
	}
	/* second hash step over the new left part */
	adiantum_hash(k, tweak, tweaklen, buf, bulk, h);
	le128_addsub(rbuf, h, 0);
	memcpy(buf + bulk, rbuf, 16);
out:
	wipe(h, sizeof(h));
	wipe(rbuf, sizeof(rbuf));
	wipe(nonce, sizeof(nonce));
	return err;
}
