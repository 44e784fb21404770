// SPDX-License-Identifier: GPL-2.0
/*
 * Encrypted + casefolded directories against the kernel: a directory the
 * Linux 6.1 f2fs driver made (tests/unit/fscrypt_casefold_vectors.h, from
 * gen_fscrypt_casefold_vectors.py).  Each dentry name decrypts to one of the
 * created names, re-encrypts to the same ciphertext, and its on-disk
 * hash_code is the low 32 bits of fscrypt_fname_siphash() of the casefolded
 * name (HKDF context 5 dirhash key, SipHash-2-4): what core/ must compute
 * to look such names up.
 */
#include "check.h"
#include "fscrypt.h"
#include "fscrypt_casefold_vectors.h"

static const char master_hex[] =
	"28de2cbb3a6351356cc92f383303d8716188f5702ad8e70068ca9f470c7b7c3b"
	"797aab616f72d1ef3f6e5f204ea9b03cb4606d8fad9b3ba54c9cc0f7c83262f4";

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
	const size_t nn = sizeof(cf_plain) / sizeof(cf_plain[0]);
	uint8_t master[64], id[16], uuid[16], raw[40];
	struct fscrypt_keyring *kr;
	struct fscrypt_context ctx;
	struct fscrypt_inode_info *dir = NULL;
	int seen[16] = { 0 };
	char why[200];

	unhex(master_hex, master, sizeof(master));
	unhex(cf_uuid_hex, uuid, sizeof(uuid));
	if (fscrypt_keyring_new(&kr))
		return 1;
	CHECK(fscrypt_keyring_add_v2(kr, master, sizeof(master), id) == 0, "add");
	CHECK(fscrypt_context_parse(raw, unhex(cf_dir_ctx, raw, sizeof(raw)), &ctx) == 0, "ctx");
	CHECK(fscrypt_inode_info_new(kr, &ctx, FSCRYPT_FT_DIR, cf_dir_ino, uuid, &dir, why,
				     sizeof(why)) == 0, "dir info: %s", why);
	for (size_t i = 0; dir && i < sizeof(cf_dentries) / sizeof(cf_dentries[0]); i++) {
		uint8_t ct[256], back[256];
		char pt[256];
		size_t cl = unhex(cf_dentries[i].ct, ct, sizeof(ct));
		int pl = fscrypt_fname_decrypt(dir, ct, cl, pt, sizeof(pt)), hit = -1, bl;
		uint64_t h = 0;

		CHECK(pl > 0, "decrypt %zu", i);
		for (size_t j = 0; pl > 0 && j < nn; j++)
			if (strlen(cf_plain[j]) == (size_t)pl && !memcmp(cf_plain[j], pt, (size_t)pl))
				hit = (int)j;
		CHECK(hit >= 0, "dentry %zu decrypts to an unknown name", i);
		if (hit < 0)
			continue;
		seen[hit]++;
		bl = fscrypt_fname_encrypt(dir, pt, (size_t)pl, back, sizeof(back));
		CHECK(bl == (int)cl && !memcmp(back, ct, cl), "re-encrypt %s", cf_plain[hit]);
		CHECK(fscrypt_fname_siphash(dir, cf_folded[hit], strlen(cf_folded[hit]), &h) == 0,
		      "siphash");
		CHECK((uint32_t)h == cf_dentries[i].hash,
		      "%s: dirhash 0x%08x, kernel hash_code 0x%08x", cf_plain[hit], (uint32_t)h,
		      cf_dentries[i].hash);
	}
	for (size_t j = 0; j < nn; j++)
		CHECK(seen[j] == 1, "%s seen %d times", cf_plain[j], seen[j]);
	fscrypt_inode_info_free(dir);
	fscrypt_keyring_free(kr);
	return check_done("test_fscrypt_casefold");
}
