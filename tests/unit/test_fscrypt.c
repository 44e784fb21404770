// SPDX-License-Identifier: GPL-2.0
/*
 * fscrypt against the Linux kernel: known answers taken from the
 * kernel-written fixture crypt.img (tests/unit/fscrypt_fixture.h, made by
 * gen_fscrypt_vectors.py; see there for provenance):
 *
 *  - the master key's identifier is the one the kernel reported
 *    (fixture README / crypt.info: eeec05e6ebadb5814c861095d859e167)
 *  - every context of the fixture parses, validates and re-serializes
 *  - for each policy (default, IV_INO_LBLK_64, IV_INO_LBLK_32, padding 32,
 *    Adiantum + DIRECT_KEY), decrypting the directory's dentry names gives
 *    exactly the plaintext names of crypt.manifest.tsv, and encrypting them
 *    back gives the on-disk ciphertext (padding rules)
 *  - the no-key names equal the kernel's (crypt.nokey-manifest.tsv), and
 *    decode back to (hash, ciphertext or digest) that match the dentry
 *  - encrypted symlink targets decrypt to the manifest's target
 *  - file contents read from a decompressed copy of the image decrypt to
 *    data whose sha256 is the manifest's, and re-encrypt to the same blocks
 *    (skipped when the fixture or zstd is missing)
 * plus key handling errors, context validation and DUN helpers.
 */
#include "check.h"
#include "fscrypt.h"
#include "fscrypt_fixture.h"

#include <openssl/evp.h>
#include <pthread.h>

/* crypt.key: sha512("kvm-f2fs crypt fixture key v1"), 64 raw bytes */
static const char master_hex[] =
	"28de2cbb3a6351356cc92f383303d8716188f5702ad8e70068ca9f470c7b7c3b"
	"797aab616f72d1ef3f6e5f204ea9b03cb4606d8fad9b3ba54c9cc0f7c83262f4";
static const char kernel_id_hex[] = "eeec05e6ebadb5814c861095d859e167";

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

static void sha256_hex(const void *p, size_t len, char out[65])
{
	uint8_t d[32];
	unsigned int dl = 0;

	EVP_Digest(p, len, d, &dl, EVP_sha256(), NULL);
	for (int i = 0; i < 32; i++)
		snprintf(out + 2 * i, 3, "%02x", d[i]);
}

static uint8_t master[64], uuid[16];
static struct fscrypt_keyring *kr;

static int parse_hex_ctx(const char *hex, struct fscrypt_context *ctx)
{
	uint8_t raw[FSCRYPT_CONTEXT_MAX_SIZE];
	size_t n = unhex(hex, raw, sizeof(raw));

	return fscrypt_context_parse(raw, n, ctx);
}

static void test_identifier(void)
{
	uint8_t id[16], want[16], id2[16];

	unhex(kernel_id_hex, want, sizeof(want));
	CHECK(fscrypt_key_identifier(master, sizeof(master), id) == 0, "identifier");
	CHECK(!memcmp(id, want, 16), "HKDF-SHA512 identifier differs from the kernel's");
	CHECK(fscrypt_keyring_add_v2(kr, master, sizeof(master), id2) == 0, "add");
	CHECK(!memcmp(id2, want, 16), "keyring identifier");
	/* adding twice is fine */
	CHECK(fscrypt_keyring_add_v2(kr, master, sizeof(master), id2) == 0, "add again");
	CHECK(fscrypt_key_identifier(master, 15, id) == -EINVAL, "short key");
	CHECK(fscrypt_key_identifier(master, 65, id) == -EINVAL, "long key");
}

static void test_contexts(void)
{
	for (size_t d = 0; d < sizeof(fx_dirs) / sizeof(fx_dirs[0]); d++) {
		const struct fx_dir *fd = &fx_dirs[d];
		struct fscrypt_context c;
		uint8_t raw[40], back[40];

		unhex(fd->ctx, raw, sizeof(raw));
		CHECK(parse_hex_ctx(fd->ctx, &c) == 0, "%s: context parse", fd->path);
		CHECK(c.version == 2, "%s: version", fd->path);
		CHECK(fscrypt_keyring_has_key(kr, &c), "%s: key present", fd->path);
		CHECK(fscrypt_context_serialize(&c, back, sizeof(back)) == 40, "serialize");
		CHECK(!memcmp(raw, back, 40), "%s: serialize round trip", fd->path);
		CHECK(fscrypt_context_serialize(&c, back, 39) == -ERANGE, "serialize short");
		/* structural damage the kernel refuses */
		CHECK(fscrypt_context_parse(raw, 39, &c) == -EINVAL, "short v2");
		raw[5] = 1;
		CHECK(fscrypt_context_parse(raw, 40, &c) == -EINVAL, "reserved byte");
		raw[5] = 0;
		raw[4] = 8;
		CHECK(fscrypt_context_parse(raw, 40, &c) == -EINVAL, "du bits 8");
		raw[4] = 13;
		CHECK(fscrypt_context_parse(raw, 40, &c) == -EINVAL, "du bits 13");
		raw[4] = 0;
		raw[0] = 3;
		CHECK(fscrypt_context_parse(raw, 40, &c) == -EINVAL, "version 3");
	}
	{
		/* mode pairs and flags (fs/crypto/policy.c) */
		uint8_t raw[40];
		struct fscrypt_context c;

		unhex(fx_dirs[0].ctx, raw, sizeof(raw));
		raw[1] = 1, raw[2] = 9;
		CHECK(fscrypt_context_parse(raw, 40, &c) == -EINVAL, "XTS+Adiantum");
		raw[1] = 5, raw[2] = 6;
		CHECK(fscrypt_context_parse(raw, 40, &c) == 0, "CBC-ESSIV+AES-128-CTS");
		raw[1] = 1, raw[2] = 10;
		CHECK(fscrypt_context_parse(raw, 40, &c) == 0, "XTS+HCTR2 is a valid policy");
		raw[1] = 1, raw[2] = 4, raw[3] = 0x04;
		CHECK(fscrypt_context_parse(raw, 40, &c) == -EINVAL, "DIRECT_KEY with XTS");
		raw[1] = 9, raw[2] = 9, raw[3] = 0x08;
		CHECK(fscrypt_context_parse(raw, 40, &c) == -EINVAL, "LBLK_64 with Adiantum");
		raw[1] = 1, raw[2] = 4, raw[3] = 0x18;
		CHECK(fscrypt_context_parse(raw, 40, &c) == -EINVAL, "LBLK_64|LBLK_32");
		raw[3] = 0x20;
		CHECK(fscrypt_context_parse(raw, 40, &c) == -EINVAL, "unknown flag");
		raw[3] = 0x10, raw[4] = 9;
		CHECK(fscrypt_context_parse(raw, 40, &c) == -EINVAL, "LBLK_32 sub-block units");
		raw[3] = 0, raw[4] = 9;
		CHECK(fscrypt_context_parse(raw, 40, &c) == 0, "512-byte data units parse");
		/* v1 */
		uint8_t v1[28] = { 1, 1, 4, 3 };
		CHECK(fscrypt_context_parse(v1, 28, &c) == 0 && c.version == 1, "v1");
		CHECK(fscrypt_context_parse(v1, 40, &c) == -EINVAL, "v1 wrong size");
		v1[3] = 0x08;
		CHECK(fscrypt_context_parse(v1, 28, &c) == -EINVAL, "v1 LBLK_64");
		CHECK(strcmp(fscrypt_mode_name(9), "Adiantum") == 0, "mode name");
	}
}

static void test_names(const struct fx_dir *fd)
{
	struct fscrypt_context dctx;
	struct fscrypt_inode_info *dir = NULL;
	char why[200];
	int seen[64] = { 0 };
	int err;

	CHECK(parse_hex_ctx(fd->ctx, &dctx) == 0, "%s ctx", fd->path);
	err = fscrypt_inode_info_new(kr, &dctx, FSCRYPT_FT_DIR, fd->ino, uuid, &dir, why,
				     sizeof(why));
	CHECK(err == 0, "%s: dir info: %d %s", fd->path, err, why);
	if (err)
		return;
	for (int i = 0; i < fd->nnames; i++) {
		const struct fx_name *n = &fd->names[i];
		uint8_t ct[256], back[256];
		char pt[256], nk[FSCRYPT_NOKEY_NAME_MAX_ENCODED];
		size_t clen = unhex(n->ct, ct, sizeof(ct));
		int pl, bl, kl, hit = -1;
		struct fscrypt_nokey_name dec;

		pl = fscrypt_fname_decrypt(dir, ct, clen, pt, sizeof(pt));
		CHECK(pl > 0, "%s: decrypt name %d: %d", fd->path, i, pl);
		if (pl <= 0)
			continue;
		for (int j = 0; j < fd->nplain; j++)
			if (strlen(fd->plain[j]) == (size_t)pl && !memcmp(fd->plain[j], pt, (size_t)pl))
				hit = j;
		CHECK(hit >= 0, "%s: decrypted name %.*s not in the manifest", fd->path, pl, pt);
		if (hit >= 0)
			seen[hit]++;
		/* encrypting the plaintext again gives the kernel's padded ciphertext */
		bl = fscrypt_fname_encrypt(dir, pt, (size_t)pl, back, sizeof(back));
		CHECK(bl == (int)clen && !memcmp(back, ct, clen), "%s: re-encrypt %.*s (%d vs %zu)",
		      fd->path, pl, pt, bl, clen);
		CHECK(fscrypt_fname_encrypted_size(&dctx, (size_t)pl, 255) == (int)clen,
		      "%s: encrypted size of %d", fd->path, pl);
		/* the kernel's no-key name */
		kl = fscrypt_nokey_name_encode(n->hash, 0, ct, clen, nk, sizeof(nk));
		CHECK(kl == (int)strlen(n->nokey) && !memcmp(nk, n->nokey, (size_t)kl),
		      "%s: no-key name %.*s, kernel %s", fd->path, kl > 0 ? kl : 0, nk, n->nokey);
		CHECK(fscrypt_nokey_name_decode(n->nokey, strlen(n->nokey), &dec) == 0,
		      "%s: decode no-key name", fd->path);
		CHECK(dec.hash == n->hash && dec.minor_hash == 0, "%s: no-key hash", fd->path);
		CHECK(dec.full == (clen <= FSCRYPT_NOKEY_BYTES), "%s: no-key form", fd->path);
		CHECK(fscrypt_nokey_name_match(&dec, ct, clen), "%s: no-key match", fd->path);
		ct[clen - 1] ^= 1;
		CHECK(!fscrypt_nokey_name_match(&dec, ct, clen), "%s: no-key mismatch", fd->path);
	}
	for (int j = 0; j < fd->nplain; j++)
		CHECK(seen[j] == 1, "%s: manifest name %s decrypted %d times", fd->path,
		      fd->plain[j], seen[j]);
	/* padding: a name of every length round-trips, ciphertext length per policy */
	for (size_t len = 1; len <= 255; len++) {
		char name[256], out[256];
		uint8_t ct[256];
		int cl, pl;
		size_t pad = (size_t)4 << (dctx.flags & 3), want = len < 16 ? 16 : len;

		want = (want + pad - 1) / pad * pad;
		if (want > 255)
			want = 255;
		for (size_t k = 0; k < len; k++)
			name[k] = (char)('a' + (k * 7 + len) % 26);
		cl = fscrypt_fname_encrypt(dir, name, len, ct, sizeof(ct));
		pl = cl > 0 ? fscrypt_fname_decrypt(dir, ct, (size_t)cl, out, sizeof(out)) : cl;
		if (cl != (int)want || pl != (int)len || memcmp(name, out, len)) {
			CHECK(0, "%s: name of %zu bytes: ct %d (want %zu) pt %d", fd->path, len, cl,
			      want, pl);
			break;
		}
	}
	CHECK(fscrypt_fname_decrypt(dir, "short", 5, (char[16]){ 0 }, 16) == -EUCLEAN, "short ct");
	{
		uint64_t h1, h2;

		CHECK(fscrypt_fname_siphash(dir, "abc", 3, &h1) == 0 &&
		      fscrypt_fname_siphash(dir, "abd", 3, &h2) == 0 && h1 != h2, "dirhash");
	}
	fscrypt_inode_info_free(dir);

	/* the symlink: its own context, encrypted like a name */
	{
		struct fscrypt_context lctx;
		struct fscrypt_inode_info *lnk = NULL;
		uint8_t disk[4096], again[4096];
		char tgt[4096];
		size_t dl;
		int tl, el;

		disk[0] = (uint8_t)(strlen(fd->symlink.ct) / 2);
		disk[1] = 0;
		dl = 2 + unhex(fd->symlink.ct, disk + 2, sizeof(disk) - 2);
		CHECK(parse_hex_ctx(fd->symlink.ctx, &lctx) == 0, "symlink ctx");
		err = fscrypt_inode_info_new(kr, &lctx, FSCRYPT_FT_LNK, fd->symlink.ino, uuid, &lnk,
					     why, sizeof(why));
		CHECK(err == 0, "%s: symlink info %d", fd->path, err);
		if (!err) {
			tl = fscrypt_symlink_decrypt(lnk, disk, dl, tgt, sizeof(tgt));
			CHECK(tl == (int)strlen(fd->symlink.target) &&
			      !memcmp(tgt, fd->symlink.target, (size_t)tl),
			      "%s: symlink target %d", fd->path, tl);
			{
				uint8_t bad[4];

				memcpy(bad, disk, 2);
				CHECK(fscrypt_symlink_decrypt(lnk, bad, 2, tgt, sizeof(tgt)) == -EUCLEAN,
				      "truncated symlink");
				bad[0] = bad[1] = 0;
				CHECK(fscrypt_symlink_decrypt(lnk, bad, 4, tgt, sizeof(tgt)) == -EUCLEAN,
				      "zero-length symlink");
			}
			el = fscrypt_symlink_encrypt(lnk, fd->symlink.target,
						     strlen(fd->symlink.target), again, sizeof(again));
			CHECK(el == (int)dl && !memcmp(again, disk, dl), "%s: symlink re-encrypt",
			      fd->path);
			fscrypt_inode_info_free(lnk);
		}
	}
}

/* ---------------------------------------------------------------- contents */

static int img_fd = -1;
static char img_path[64];

static void open_fixture(void)
{
	const char *env = getenv("F2FS_CRYPT_IMG");
	const char *dir = getenv("F2FS_FIXTURES");
	char zst[512], zstd[256];
	int fd;

	/* F2FS_FIXTURES as for the other tests; F2FS_CRYPT_IMG: a decompressed copy */
	snprintf(zst, sizeof(zst), "%s/crypt.img.zst", dir ? dir : "/work/shared/fixtures");

	if (env) {
		img_fd = open(env, O_RDONLY);
		if (img_fd < 0)
			SKIP("F2FS_CRYPT_IMG=%s: %s", env, strerror(errno));
		return;
	}
	if (access(zst, R_OK) != 0 || !find_tool("zstd", zstd, sizeof(zstd))) {
		SKIP("fixture %s or zstd unavailable: contents tests skipped", zst);
		return;
	}
	strcpy(img_path, "/tmp/fscrypt-unit-XXXXXX");
	fd = mkstemp(img_path);
	if (fd < 0)
		return;
	close(fd);
	if (run_quiet("'%s' -q -d -f '%s' -o '%s' >/dev/null 2>&1", zstd, zst, img_path) != 0) {
		SKIP("zstd -d failed");
		unlink(img_path);
		return;
	}
	img_fd = open(img_path, O_RDONLY);
}

static void test_file(const struct fx_dir *fd, const struct fx_file *ff)
{
	struct fscrypt_context c;
	struct fscrypt_inode_info *ci = NULL;
	size_t nblk = (size_t)((ff->size + 4095) / 4096);
	uint8_t *ct = calloc(nblk, 4096), *pt = calloc(nblk, 4096), *re = calloc(nblk, 4096);
	char why[200], hex[65];
	int err;

	CHECK(parse_hex_ctx(ff->ctx, &c) == 0, "file ctx");
	err = fscrypt_inode_info_new(kr, &c, FSCRYPT_FT_REG, ff->ino, uuid, &ci, why, sizeof(why));
	CHECK(err == 0, "%s/%s: info %d %s", fd->path, ff->name, err, why);
	if (err || !ct || !pt || !re)
		goto out;
	for (int r = 0; r < ff->nruns; r++) {
		const struct fx_run *run = &ff->runs[r];
		ssize_t got = pread(img_fd, ct + (size_t)run->lblk * 4096, (size_t)run->len * 4096,
				    (off_t)run->blkaddr * 4096);

		CHECK(got == (ssize_t)run->len * 4096, "pread");
	}
	memcpy(pt, ct, nblk * 4096);
	CHECK(fscrypt_decrypt_blocks(ci, 0, pt, nblk) == 0, "decrypt");
	sha256_hex(pt, (size_t)ff->size, hex);
	CHECK(!strcmp(hex, ff->sha256), "%s/%s: contents sha256 %s, manifest %s", fd->path,
	      ff->name, hex, ff->sha256);
	/* past EOF the kernel encrypted zeros */
	for (size_t i = (size_t)ff->size; i < nblk * 4096; i++)
		if (pt[i]) {
			CHECK(0, "%s/%s: nonzero tail", fd->path, ff->name);
			break;
		}
	CHECK(fscrypt_encrypt_blocks(ci, 0, pt, re, nblk) == 0, "encrypt");
	CHECK(!memcmp(re, ct, nblk * 4096), "%s/%s: re-encryption differs", fd->path, ff->name);
	/* the device-layer shape: decrypt by DUN alone, unit by unit */
	memcpy(re, ct, nblk * 4096);
	for (size_t b = 0; b < nblk; b++)
		CHECK(fscrypt_decrypt_units(fscrypt_contents_key(ci), fscrypt_dun(ci, b),
					    re + b * 4096, 1) == 0, "units");
	CHECK(!memcmp(re, pt, nblk * 4096), "%s/%s: decrypt by DUN", fd->path, ff->name);
out:
	fscrypt_inode_info_free(ci);
	free(ct);
	free(pt);
	free(re);
}

static void test_contents(void)
{
	open_fixture();
	if (img_fd < 0)
		return;
	for (size_t d = 0; d < sizeof(fx_dirs) / sizeof(fx_dirs[0]); d++)
		for (int f = 0; f < fx_dirs[d].nfiles; f++)
			test_file(&fx_dirs[d], &fx_dirs[d].files[f]);
	close(img_fd);
	if (img_path[0])
		unlink(img_path);
}

/* ---------------------------------------------------------------- keys, DUNs */

static void test_keys_and_duns(void)
{
	struct fscrypt_context c;
	struct fscrypt_inode_info *ci = NULL;
	struct fscrypt_keyring *empty;
	char why[200];
	uint8_t id[16];

	CHECK(fscrypt_keyring_new(&empty) == 0, "keyring");
	CHECK(parse_hex_ctx(fx_dirs[0].files[0].ctx, &c) == 0, "ctx");
	CHECK(fscrypt_inode_info_new(empty, &c, FSCRYPT_FT_REG, 6, uuid, &ci, why, sizeof(why)) ==
	      -ENOKEY, "no key: ENOKEY");
	CHECK(!fscrypt_keyring_has_key(empty, &c), "has_key");
	CHECK(fscrypt_keyring_add_v2(empty, master, 32, id) == 0, "add 32-byte key");
	/* a 32-byte key with another identifier still does not match */
	CHECK(fscrypt_inode_info_new(empty, &c, FSCRYPT_FT_REG, 6, uuid, &ci, why, sizeof(why)) ==
	      -ENOKEY, "other key: ENOKEY");
	CHECK(fscrypt_keyring_remove(empty, 2, id) == 0, "remove");
	CHECK(fscrypt_keyring_remove(empty, 2, id) == -ENOKEY, "remove twice");
	CHECK(fscrypt_keyring_add_v2(empty, master, 64, id) == 0, "add");
	CHECK(fscrypt_inode_info_new(empty, &c, FSCRYPT_FT_REG, 6, uuid, &ci, why, sizeof(why)) == 0,
	      "with key");
	CHECK(fscrypt_keyring_remove(empty, 2, id) == 0, "remove");
	/* derived keys outlive the master key, as in the kernel until eviction */
	CHECK(ci && fscrypt_contents_key(ci) != NULL, "contents key");
	fscrypt_inode_info_free(ci);
	ci = NULL;
	CHECK(fscrypt_inode_info_new(empty, &c, FSCRYPT_FT_REG, 6, uuid, &ci, why, sizeof(why)) ==
	      -ENOKEY, "removed: ENOKEY");
	/* a v1 descriptor holds one key: the same again is fine, another is refused */
	{
		static const uint8_t desc[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };
		uint8_t other[64];

		memcpy(other, master, sizeof(other));
		other[63] ^= 1;
		CHECK(fscrypt_keyring_add_v1(empty, desc, master, 64) == 0, "add v1");
		CHECK(fscrypt_keyring_add_v1(empty, desc, master, 64) == 0, "add v1 again");
		CHECK(fscrypt_keyring_add_v1(empty, desc, other, 64) == -EEXIST, "other v1 key");
		CHECK(fscrypt_keyring_add_v1(empty, desc, master, 32) == -EEXIST, "shorter v1 key");
		CHECK(fscrypt_keyring_add_v1(empty, desc, master, 15) == -EINVAL, "15 bytes");
		CHECK(fscrypt_keyring_remove(empty, 1, desc) == 0, "remove v1");
		CHECK(fscrypt_keyring_add_v1(empty, desc, other, 64) == 0, "other after removal");
		CHECK(fscrypt_keyring_remove(empty, 1, desc) == 0, "remove v1");
	}
	/* many live infos (more than one key arena), and infos outliving the keyring */
	{
		enum { N = 3000 };
		static struct fscrypt_inode_info *many[N];
		uint8_t a[4096] = { 1 }, b[4096] = { 1 };
		int ok = 1;

		CHECK(fscrypt_keyring_add_v2(empty, master, 64, id) == 0, "add");
		for (int i = 0; i < N && ok; i++)
			ok = fscrypt_inode_info_new(empty, &c, FSCRYPT_FT_REG, (uint32_t)i + 1, uuid,
						    &many[i], NULL, 0) == 0;
		CHECK(ok, "%d inode infos", N);
		for (int i = 0; i < N; i += 2) {
			fscrypt_inode_info_free(many[i]);
			many[i] = NULL;
		}
		fscrypt_keyring_free(empty);
		empty = NULL;
		CHECK(fscrypt_decrypt_blocks(many[1], 0, a, 1) == 0, "decrypt after keyring free");
		CHECK(fscrypt_decrypt_blocks(many[N - 1], 0, b, 1) == 0 && !memcmp(a, b, sizeof(a)),
		      "same key, same result");
		for (int i = 1; i < N; i += 2)
			fscrypt_inode_info_free(many[i]);
	}
	fscrypt_keyring_free(empty);

	/* SM4: a valid v2 policy this build cannot run */
	{
		uint8_t raw[40];

		unhex(fx_dirs[0].ctx, raw, sizeof(raw));
		raw[1] = 7, raw[2] = 8;
		CHECK(fscrypt_context_parse(raw, 40, &c) == 0, "sm4 ctx");
		CHECK(fscrypt_inode_info_new(kr, &c, FSCRYPT_FT_DIR, 4, uuid, &ci, why,
					     sizeof(why)) == -EOPNOTSUPP, "SM4-CTS: EOPNOTSUPP");
		CHECK(strstr(why, "SM4-CTS-CBC") != NULL, "message: %s", why);
		CHECK(fscrypt_inode_info_new(kr, &c, FSCRYPT_FT_REG, 5, uuid, &ci, why,
					     sizeof(why)) == -EOPNOTSUPP, "SM4-XTS: EOPNOTSUPP");
		/* HCTR2 filenames with XTS contents */
		raw[1] = 1, raw[2] = 10;
		CHECK(fscrypt_context_parse(raw, 40, &c) == 0, "hctr2 ctx");
		CHECK(fscrypt_inode_info_new(kr, &c, FSCRYPT_FT_DIR, 4, uuid, &ci, why,
					     sizeof(why)) == 0, "HCTR2 directory");
		fscrypt_inode_info_free(ci);
		ci = NULL;
		raw[2] = 4, raw[4] = 9;
		CHECK(fscrypt_context_parse(raw, 40, &c) == 0, "du 512");
		CHECK(fscrypt_inode_info_new(kr, &c, FSCRYPT_FT_REG, 5, uuid, &ci, why,
					     sizeof(why)) == 0, "512-byte data units");
		/* DUNs count blocks; the key numbers the 8 units inside each */
		CHECK(ci && fscrypt_dun(ci, 3) == 3, "sub-block DUN");
		fscrypt_inode_info_free(ci);
		ci = NULL;
	}

	/* DUNs */
	for (size_t d = 0; d < 3; d++) {
		const struct fx_file *ff = &fx_dirs[d].files[0];

		CHECK(parse_hex_ctx(ff->ctx, &c) == 0, "ctx");
		CHECK(fscrypt_inode_info_new(kr, &c, FSCRYPT_FT_REG, ff->ino, uuid, &ci, why,
					     sizeof(why)) == 0, "info");
		if (!ci)
			continue;
		if (c.flags & FSCRYPT_F_IV_INO_LBLK_64) {
			CHECK_EQ_U64(fscrypt_dun(ci, 7), (uint64_t)ff->ino << 32 | 7, "LBLK_64 DUN");
			CHECK_EQ_U64(fscrypt_limit_io_blocks(ci, 0, 1000), 1000, "no limit");
		} else if (c.flags & FSCRYPT_F_IV_INO_LBLK_32) {
			uint32_t h = (uint32_t)fscrypt_dun(ci, 0);
			uint64_t to_wrap = (uint64_t)UINT32_MAX + 1 - h;

			CHECK_EQ_U64(fscrypt_dun(ci, 5), (uint32_t)(h + 5), "LBLK_32 DUN");
			CHECK_EQ_U64(fscrypt_dun(ci, to_wrap), 0, "LBLK_32 wraps to 0");
			CHECK_EQ_U64(fscrypt_limit_io_blocks(ci, 0, to_wrap + 5), to_wrap,
				     "stop at the wrap");
			CHECK_EQ_U64(fscrypt_limit_io_blocks(ci, to_wrap, 5), 5, "after the wrap");
			/* a request across the wrap still decrypts like unit by unit */
			{
				uint8_t a[3 * 4096], b[3 * 4096];
				uint64_t l = to_wrap - 1;

				for (size_t i = 0; i < sizeof(a); i++)
					a[i] = (uint8_t)(i * 131);
				memcpy(b, a, sizeof(a));
				CHECK(fscrypt_decrypt_blocks(ci, l, a, 3) == 0, "across wrap");
				for (int u = 0; u < 3; u++)
					fscrypt_decrypt_units(fscrypt_contents_key(ci),
							      fscrypt_dun(ci, l + (uint64_t)u),
							      b + u * 4096, 1);
				CHECK(!memcmp(a, b, sizeof(a)), "wrap split");
			}
		} else {
			CHECK_EQ_U64(fscrypt_dun(ci, 123456789), 123456789, "default DUN");
		}
		fscrypt_inode_info_free(ci);
		ci = NULL;
	}
}

/* ---------------------------------------------------------------- threads */

struct thr {
	const struct fscrypt_inode_info *ci;
	const uint8_t *ct, *want;
	int bad;
};

static void *thr_decrypt(void *arg)
{
	struct thr *t = arg;
	uint8_t *buf = malloc(8 * 4096);

	for (int r = 0; buf && r < 50; r++) {
		memcpy(buf, t->ct, 8 * 4096);
		if (fscrypt_decrypt_blocks(t->ci, (uint64_t)r, buf, 8) ||
		    memcmp(buf, t->want + (size_t)r * 8 * 4096, 8 * 4096))
			t->bad++;
	}
	free(buf);
	return NULL;
}

static void *thr_keys(void *arg)
{
	uint8_t k[32], id[16];

	(void)arg;
	for (int r = 0; r < 200; r++) {
		memset(k, r, sizeof(k));
		fscrypt_keyring_add_v2(kr, k, sizeof(k), id);
		fscrypt_keyring_remove(kr, 2, id);
	}
	return NULL;
}

/*
 * One inode info shared by several threads while others add and remove
 * keys: every thread must see the single-threaded result.
 */
static void test_threads(void)
{
	struct fscrypt_context c;
	struct fscrypt_inode_info *ci = NULL;
	struct thr t[4];
	pthread_t th[6];
	uint8_t *ct = malloc(8 * 4096), *want = malloc(50 * 8 * 4096);

	CHECK(parse_hex_ctx(fx_dirs[4].files[0].ctx, &c) == 0, "ctx");
	CHECK(fscrypt_inode_info_new(kr, &c, FSCRYPT_FT_REG, 9, uuid, &ci, NULL, 0) == 0, "info");
	if (!ci || !ct || !want)
		goto out;
	for (size_t i = 0; i < 8 * 4096; i++)
		ct[i] = (uint8_t)(i * 29 + i / 4096);
	/* want + r * 8 units = decryption of ct placed at lblk r */
	for (int r = 0; r < 50; r++) {
		uint8_t tmp[8 * 4096];

		memcpy(tmp, ct, sizeof(tmp));
		fscrypt_decrypt_blocks(ci, (uint64_t)r, tmp, 8);
		memcpy(want + (size_t)r * 8 * 4096, tmp, sizeof(tmp));
	}
	for (int i = 0; i < 4; i++) {
		t[i] = (struct thr){ ci, ct, want, 0 };
		pthread_create(&th[i], NULL, thr_decrypt, &t[i]);
	}
	pthread_create(&th[4], NULL, thr_keys, NULL);
	pthread_create(&th[5], NULL, thr_keys, NULL);
	for (int i = 0; i < 6; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < 4; i++)
		CHECK(t[i].bad == 0, "thread %d saw %d wrong decryptions", i, t[i].bad);
	CHECK(fscrypt_keyring_has_key(kr, &c), "fixture key survived");
out:
	fscrypt_inode_info_free(ci);
	free(ct);
	free(want);
}

/* ---------------------------------------------------------------- many keys */

/*
 * Thousands of v1 and v2 keys side by side: each is found under its own
 * version and spec only, removals in any order leave the rest findable,
 * and the key memory can be locked again (as after a fork).
 */
static void test_many_keys(void)
{
	enum { N = 2000 };
	static uint8_t ids[N][16];
	struct fscrypt_keyring *k;
	uint8_t raw[32], desc[16] = { 0 };
	bool ok = true;
	int err;

	CHECK(fscrypt_keyring_new(&k) == 0, "keyring");
	for (int i = 0; i < N && ok; i++) {
		memset(raw, 0, sizeof(raw));
		memcpy(raw, &i, sizeof(i));
		ok = fscrypt_keyring_add_v2(k, raw, sizeof(raw), ids[i]) == 0;
		/* a v1 key whose descriptor is the identifier's first half */
		ok = ok && fscrypt_keyring_add_v1(k, ids[i], raw, sizeof(raw)) == 0;
	}
	CHECK(ok, "add %d v2 and %d v1 keys", N, N);
	for (int i = 0; i < N && ok; i++)
		ok = fscrypt_keyring_lookup(k, 2, ids[i]) && fscrypt_keyring_lookup(k, 1, ids[i]);
	CHECK(ok, "every key found");
	/* the same 8 bytes as a v2 identifier (zero-padded) name no key */
	memcpy(desc, ids[0], 8);
	CHECK(!fscrypt_keyring_lookup(k, 2, desc), "v1 descriptor is no v2 identifier");
	for (int i = 0; i < N; i += 3)
		CHECK(fscrypt_keyring_remove(k, 2, ids[i]) == 0, "remove %d", i);
	for (int i = N - 1; i >= 0; i -= 2)
		CHECK(fscrypt_keyring_remove(k, 1, ids[i]) == 0, "remove v1 %d", i);
	for (int i = 0; i < N && ok; i++)
		ok = fscrypt_keyring_lookup(k, 2, ids[i]) == (i % 3 != 0) &&
		     fscrypt_keyring_lookup(k, 1, ids[i]) == (i % 2 == 0);
	CHECK(ok, "the rest still found, the removed ones not");
	CHECK(fscrypt_keyring_remove(k, 2, ids[0]) == -ENOKEY, "removed twice");
	err = fscrypt_keyring_lock_memory(k);
	CHECK(err == 0 || err == -ENOMEM || err == -EPERM || err == -EAGAIN, "lock again: %d", err);
	fscrypt_keyring_free(k);
}

int main(void)
{
	unhex(master_hex, master, sizeof(master));
	unhex(fx_uuid_hex, uuid, sizeof(uuid));
	if (fscrypt_keyring_new(&kr) != 0)
		return 1;
	test_identifier();
	test_contexts();
	for (size_t d = 0; d < sizeof(fx_dirs) / sizeof(fx_dirs[0]); d++)
		test_names(&fx_dirs[d]);
	test_contents();
	test_keys_and_duns();
	test_threads();
	test_many_keys();
	fscrypt_keyring_free(kr);
	return check_done("test_fscrypt");
}
