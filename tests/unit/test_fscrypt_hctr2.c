// SPDX-License-Identifier: GPL-2.0
/*
 * HCTR2 parts (crypto/hctr2.c):
 *  - POLYVAL against RFC 8452 Appendix A (H, X_1, X_2 -> f7a3b47b...)
 *  - HCTR2 decrypt(encrypt(x)) == x for lengths 16..300 and 4096, and one
 *    changed ciphertext bit changing the whole decryption (wide block)
 * HCTR2 ciphertext for fscrypt names is checked against xfstests'
 * fscrypt-crypt-util in test_fscrypt_oracle.
 */
#include "check.h"
#include "hctr2.h"

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

int main(void)
{
	static uint8_t m[4096], c[4096], ct[4096];
	uint8_t h[16], x[32], out[16], want[16], key[32], tw[32];
	struct fscrypt_hctr2_key k;

	unhex("25629347589242761d31f826ba4b757b", h, 16);
	unhex("4f4f95668c83dfb6401762bb2d01a262d1a24ddd2721d006bbe45f20d3c9f362", x, 32);
	unhex("f7a3b47b846119fae5b7866cf5e5b77e", want, 16);
	fscrypt_polyval(h, x, 2, out);
	CHECK(!memcmp(out, want, 16), "POLYVAL RFC 8452 Appendix A");

	for (int i = 0; i < 32; i++)
		key[i] = (uint8_t)(i * 5 + 1), tw[i] = (uint8_t)(255 - i);
	CHECK(fscrypt_hctr2_setkey(&k, key) == 0, "setkey");
	for (size_t len = 16; len <= 4096; len = len < 300 ? len + 1 : 4096) {
		for (size_t i = 0; i < len; i++)
			m[i] = (uint8_t)(i * 3 + len);
		memcpy(c, m, len);
		CHECK(fscrypt_hctr2_crypt(&k, tw, c, len, 1) == 0, "enc");
		memcpy(ct, c, len);
		CHECK(fscrypt_hctr2_crypt(&k, tw, c, len, 0) == 0, "dec");
		if (memcmp(c, m, len)) {
			CHECK(0, "HCTR2 round trip at %zu", len);
			break;
		}
		/* the last ciphertext bit reaches the first plaintext block */
		memcpy(c, ct, len);
		c[len - 1] ^= 0x80;
		fscrypt_hctr2_crypt(&k, tw, c, len, 0);
		if (!memcmp(c, m, 16)) {
			CHECK(0, "HCTR2 is not wide-block at %zu", len);
			break;
		}
		if (len == 4096)
			break;
	}
	CHECK(fscrypt_hctr2_crypt(&k, tw, m, 15, 1) == -EINVAL, "len 15");
	return check_done("test_fscrypt_hctr2");
}
