// SPDX-License-Identifier: GPL-2.0
/*
 * fscrypt settings the kernel fixture lacks, against the expected output of
 * xfstests' fscrypt-crypt-util (tests/unit/fscrypt_oracle_vectors.h, made
 * by gen_fscrypt_oracle_vectors.py; that program is what fstests uses to
 * verify the kernel's on-disk ciphertext):
 *  - v1 key derivation (AES-128-ECB keyed by the nonce) with AES-256-XTS,
 *    AES-128-CBC-ESSIV and AES-256/128-CTS
 *  - v1 DIRECT_KEY (the master key used directly, nonce in the IV) with
 *    Adiantum, and v2 Adiantum with a per-file key
 *  - v2 AES-128-CBC-ESSIV and AES-128-CTS (HKDF per-file keys)
 *  - AES-256-HCTR2 filenames (also with IV_INO_LBLK_64), and AES-256-CTS
 *    names under IV_INO_LBLK_32
 *  - data units of 512, 1024 and 2048 bytes (Linux 6.7+), also with
 *    IV_INO_LBLK_64 and DIRECT_KEY; IV_INO_LBLK_32 with another inode
 * each encrypted, compared, and decrypted back.  Also the key identifier
 * against fscrypt-crypt-util --dump-key-identifier, recorded below.
 */
#include "check.h"
#include "fscrypt.h"
#include "fscrypt_oracle_vectors.h"

#include <openssl/evp.h>

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

static struct fscrypt_keyring *kr;
static uint8_t master[64], id[16], desc[8], nonce[16], uuid[16];

static void make_ctx_du(struct fscrypt_context *c, uint8_t version, uint8_t cm, uint8_t fm,
			uint8_t flags, uint8_t du_bits)
{
	uint8_t raw[40];
	int n;

	memset(c, 0, sizeof(*c));
	c->version = version;
	c->contents_mode = cm;
	c->filenames_mode = fm;
	c->flags = flags;
	c->log2_data_unit_size = du_bits == 12 ? 0 : du_bits;
	memcpy(c->key_spec, version == 1 ? desc : id, version == 1 ? 8 : 16);
	memcpy(c->nonce, nonce, 16);
	/* through the on-disk form, so the parser sees these policies too */
	n = fscrypt_context_serialize(c, raw, sizeof(raw));
	CHECK(n == (version == 1 ? 28 : 40), "serialize");
	CHECK(fscrypt_context_parse(raw, (size_t)n, c) == 0, "parse");
}

static void make_ctx(struct fscrypt_context *c, uint8_t version, uint8_t cm, uint8_t fm,
		     uint8_t flags)
{
	make_ctx_du(c, version, cm, fm, flags, 12);
}

static void test_contents(void)
{
	for (size_t v = 0; v < sizeof(oracle_contents) / sizeof(oracle_contents[0]); v++) {
		const struct oracle_contents *o = &oracle_contents[v];
		struct fscrypt_context c;
		struct fscrypt_inode_info *ci = NULL;
		uint8_t *pt = malloc(o->units * 4096), *ct = malloc(o->units * 4096), d[32];
		char why[200], hex[65];
		unsigned int dl;
		int err;

		make_ctx_du(&c, o->version, o->cmode, o->fmode, o->flags, o->du_bits);
		err = fscrypt_inode_info_new(kr, &c, FSCRYPT_FT_REG, o->ino, uuid, &ci, why,
					     sizeof(why));
		CHECK(err == 0, "%s: info %d %s", o->desc, err, why);
		if (!err && pt && ct) {
			for (unsigned u = 0; u < o->units; u++)
				for (unsigned i = 0; i < 4096; i++)
					pt[u * 4096 + i] = (uint8_t)((i * 7 + u * 13 + 3) & 0xff);
			CHECK(fscrypt_encrypt_blocks(ci, o->lblk, pt, ct, o->units) == 0, "encrypt");
			EVP_Digest(ct, o->units * 4096, d, &dl, EVP_sha256(), NULL);
			for (int i = 0; i < 32; i++)
				snprintf(hex + 2 * i, 3, "%02x", d[i]);
			CHECK(!strcmp(hex, o->sha256), "%s: ciphertext differs from fscrypt-crypt-util",
			      o->desc);
			/* the device layer's way: one call per block, DUN + 1 each */
			for (unsigned b = 0; b < o->units; b++)
				CHECK(fscrypt_decrypt_units(fscrypt_contents_key(ci),
							    fscrypt_dun(ci, o->lblk) + b,
							    ct + (size_t)b * 4096, 1) == 0, "units");
			CHECK(!memcmp(ct, pt, o->units * 4096), "%s: round trip by DUN", o->desc);
			CHECK(fscrypt_encrypt_blocks(ci, o->lblk, pt, ct, o->units) == 0, "encrypt");
			CHECK(fscrypt_decrypt_blocks(ci, o->lblk, ct, o->units) == 0, "decrypt");
			CHECK(!memcmp(ct, pt, o->units * 4096), "%s: round trip", o->desc);
		}
		fscrypt_inode_info_free(ci);
		free(pt);
		free(ct);
	}
}

static void test_names(void)
{
	for (size_t v = 0; v < sizeof(oracle_names) / sizeof(oracle_names[0]); v++) {
		const struct oracle_name *o = &oracle_names[v];
		struct fscrypt_context c;
		struct fscrypt_inode_info *ci = NULL;
		uint8_t want[256], ct[256];
		char pt[256], why[200];
		size_t wl = unhex(o->ct, want, sizeof(want));
		int err, n;

		make_ctx(&c, o->version, o->cmode, o->fmode, o->flags);
		err = fscrypt_inode_info_new(kr, &c, FSCRYPT_FT_DIR, o->ino, uuid, &ci, why,
					     sizeof(why));
		CHECK(err == 0, "%s: info %d %s", o->desc, err, why);
		if (err)
			continue;
		n = fscrypt_fname_encrypt(ci, o->name, strlen(o->name), ct, sizeof(ct));
		CHECK(n == (int)wl && !memcmp(ct, want, wl), "%s: name ciphertext (%d)", o->desc, n);
		n = fscrypt_fname_decrypt(ci, want, wl, pt, sizeof(pt));
		CHECK(n == (int)strlen(o->name) && !memcmp(pt, o->name, (size_t)n), "%s: decrypt",
		      o->desc);
		fscrypt_inode_info_free(ci);
	}
}

int main(void)
{
	/* fscrypt-crypt-util --kdf=HKDF-SHA512 --dump-key-identifier <crypt.key> */
	static const char fcu_id[] = "eeec05e6ebadb5814c861095d859e167";
	uint8_t want[16];

	unhex(master_hex, master, sizeof(master));
	unhex(oracle_desc_hex, desc, sizeof(desc));
	unhex(oracle_nonce_hex, nonce, sizeof(nonce));
	unhex(oracle_uuid_hex, uuid, sizeof(uuid));
	unhex(fcu_id, want, sizeof(want));
	if (fscrypt_keyring_new(&kr))
		return 1;
	CHECK(fscrypt_keyring_add_v2(kr, master, sizeof(master), id) == 0, "add v2");
	CHECK(!memcmp(id, want, 16), "identifier");
	CHECK(fscrypt_keyring_add_v1(kr, desc, master, sizeof(master)) == 0, "add v1");
	CHECK(fscrypt_keyring_lookup(kr, 1, desc) && fscrypt_keyring_lookup(kr, 2, id) &&
	      !fscrypt_keyring_lookup(kr, 1, id), "lookup by descriptor and identifier");
	test_contents();
	test_names();
	/* a v1 key under another descriptor is not found */
	{
		struct fscrypt_context c;
		struct fscrypt_inode_info *ci = NULL;

		make_ctx(&c, 1, 1, 4, 0);
		c.key_spec[0] ^= 1;
		CHECK(fscrypt_inode_info_new(kr, &c, FSCRYPT_FT_REG, 1, NULL, &ci, NULL, 0) == -ENOKEY,
		      "v1 wrong descriptor");
		CHECK(fscrypt_keyring_remove(kr, 1, desc) == 0, "remove v1");
		make_ctx(&c, 1, 1, 4, 0);
		CHECK(fscrypt_inode_info_new(kr, &c, FSCRYPT_FT_REG, 1, NULL, &ci, NULL, 0) == -ENOKEY,
		      "v1 removed");
		/* a 16-byte v1 key is too short for AES-256-XTS */
		CHECK(fscrypt_keyring_add_v1(kr, desc, master, 16) == 0, "add short v1");
		CHECK(fscrypt_inode_info_new(kr, &c, FSCRYPT_FT_REG, 1, NULL, &ci, NULL, 0) == -ENOKEY,
		      "v1 short key");
		make_ctx(&c, 1, 5, 6, 0);
		CHECK(fscrypt_inode_info_new(kr, &c, FSCRYPT_FT_REG, 1, NULL, &ci, NULL, 0) == 0,
		      "16 bytes are enough for AES-128-CBC");
		fscrypt_inode_info_free(ci);
	}
	fscrypt_keyring_free(kr);
	return check_done("test_fscrypt_oracle");
}
