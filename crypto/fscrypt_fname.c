// SPDX-License-Identifier: GPL-2.0
/*
 * Filename and symlink encryption, and no-key names (kernel
 * fs/crypto/fname.c, hooks.c; no-key format of Linux >= 5.10).
 */
#include "fscrypt_internal.h"

#include <errno.h>
#include <string.h>

#define MIN_MSG_LEN 16	/* names shorter than this are NUL-padded to it */

int fscrypt_fname_encrypted_size(const struct fscrypt_context *ctx, size_t len,
				 size_t max_len)
{
	size_t pad = (size_t)4 << (ctx->flags & FSCRYPT_F_PAD_MASK);
	size_t n;

	if (len > max_len)
		return -ENAMETOOLONG;
	n = len < MIN_MSG_LEN ? MIN_MSG_LEN : len;
	n = (n + pad - 1) / pad * pad;
	return (int)(n < max_len ? n : max_len);
}

static int encrypt_padded(const struct fscrypt_inode_info *ci, const void *name, size_t len,
			  size_t max_len, void *out, size_t outlen)
{
	uint8_t buf[FSCRYPT_DATA_UNIT_SIZE];
	int n, err;

	if (!len)
		return -EINVAL;
	n = fscrypt_fname_encrypted_size(&ci->ctx, len, max_len);
	if (n < 0)
		return n;
	if ((size_t)n > outlen)
		return -ERANGE;
	memset(buf, 0, (size_t)n);
	memcpy(buf, name, len);
	err = fscrypt_crypt_message(ci, buf, (size_t)n, 1);
	if (!err)
		memcpy(out, buf, (size_t)n);
	fscrypt_cleanse(buf, sizeof(buf));
	return err ? err : n;
}

int fscrypt_fname_encrypt(const struct fscrypt_inode_info *dir, const void *name, size_t len,
			  void *out, size_t outlen)
{
	if (dir->type != FSCRYPT_FT_DIR)
		return -ENOTDIR;
	return encrypt_padded(dir, name, len, FSCRYPT_NAME_MAX, out, outlen);
}

static int decrypt_msg(const struct fscrypt_inode_info *ci, const void *ct, size_t len,
		       void *out, size_t outlen)
{
	uint8_t buf[4096];
	int err;

	if (len < MIN_MSG_LEN)
		return -EUCLEAN;
	if (len > sizeof(buf))
		return -ENAMETOOLONG;
	if (outlen < len)
		return -ERANGE;
	memcpy(buf, ct, len);
	err = fscrypt_crypt_message(ci, buf, len, 0);
	if (!err) {
		/* the plaintext ends at the first NUL of the padding */
		len = strnlen((const char *)buf, len);
		memcpy(out, buf, len);
	}
	fscrypt_cleanse(buf, sizeof(buf));
	return err ? err : (int)len;
}

int fscrypt_fname_decrypt(const struct fscrypt_inode_info *dir, const void *ct, size_t len,
			  void *out, size_t outlen)
{
	if (dir->type != FSCRYPT_FT_DIR)
		return -ENOTDIR;
	if (len > FSCRYPT_NAME_MAX)
		return -ENAMETOOLONG;
	return decrypt_msg(dir, ct, len, out, outlen);
}

int fscrypt_fname_siphash(const struct fscrypt_inode_info *dir, const void *name, size_t len,
			  uint64_t *hash)
{
	if (!dir->has_dirhash_key)
		return -EOPNOTSUPP;
	return fscrypt_siphash24(dir->dirhash_key, name, len, hash);
}

/*
 * Symlinks (fs/crypto/hooks.c): le16 ciphertext length, the ciphertext of
 * the target padded like a filename, within the block size minus the
 * header and a NUL.
 */
#define SYMLINK_MAX_CT (FSCRYPT_DATA_UNIT_SIZE - 2 - 1)

int fscrypt_symlink_decrypt(const struct fscrypt_inode_info *lnk, const void *disk,
			    size_t disklen, char *out, size_t outlen)
{
	const uint8_t *d = disk;
	size_t clen;
	int n;

	if (lnk->type != FSCRYPT_FT_LNK)
		return -EINVAL;
	if (disklen < 2)
		return -EUCLEAN;
	clen = (size_t)d[0] | (size_t)d[1] << 8;
	/* the kernel's read side allows a whole block, its write side one less */
	if (clen == 0 || clen + 2 > disklen || clen + 2 > FSCRYPT_BLOCK_SIZE)
		return -EUCLEAN;
	n = decrypt_msg(lnk, d + 2, clen, out, outlen);
	/* an empty target is corruption (kernel fscrypt_get_symlink) */
	return n == 0 ? -EUCLEAN : n;
}

int fscrypt_symlink_encrypt(const struct fscrypt_inode_info *lnk, const char *target,
			    size_t len, void *disk, size_t disklen)
{
	uint8_t *d = disk;
	int n;

	if (lnk->type != FSCRYPT_FT_LNK || disklen < 2)
		return -EINVAL;
	n = encrypt_padded(lnk, target, len, SYMLINK_MAX_CT, d + 2, disklen - 2);
	if (n < 0)
		return n;
	d[0] = (uint8_t)n;
	d[1] = (uint8_t)(n >> 8);
	return n + 2;
}

/* ------------------------------------------------------------ no-key names */

static const char b64url[] =
	"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

static size_t b64url_encode(const uint8_t *src, size_t len, char *dst)
{
	uint32_t ac = 0;
	int bits = 0;
	char *p = dst;

	for (size_t i = 0; i < len; i++) {
		ac = ac << 8 | src[i];
		bits += 8;
		do {
			bits -= 6;
			*p++ = b64url[(ac >> bits) & 0x3f];
		} while (bits >= 6);
	}
	if (bits)
		*p++ = b64url[(ac << (6 - bits)) & 0x3f];
	return (size_t)(p - dst);
}

/* -1 for characters outside the alphabet or nonzero leftover bits */
static long b64url_decode(const char *src, size_t len, uint8_t *dst, size_t cap)
{
	uint32_t ac = 0;
	int bits = 0;
	size_t n = 0;

	for (size_t i = 0; i < len; i++) {
		const char *c = src[i] ? strchr(b64url, src[i]) : NULL;

		if (!c)
			return -1;
		ac = ac << 6 | (uint32_t)(c - b64url);
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			if (n == cap)
				return -1;
			dst[n++] = (uint8_t)(ac >> bits);
		}
	}
	if (ac & ((1u << bits) - 1))
		return -1;
	return (long)n;
}

static bool is_dot_dotdot(const uint8_t *n, size_t len)
{
	return (len == 1 && n[0] == '.') || (len == 2 && n[0] == '.' && n[1] == '.');
}

int fscrypt_nokey_name_encode(uint32_t hash, uint32_t minor_hash, const void *ct, size_t len,
			      char *out, size_t outlen)
{
	uint8_t raw[8 + FSCRYPT_NOKEY_BYTES + 32];
	const uint8_t *c = ct;
	size_t n;
	int err;

	if (is_dot_dotdot(c, len)) {
		if (outlen < len)
			return -ERANGE;
		memcpy(out, c, len);
		return (int)len;
	}
	if (len < MIN_MSG_LEN)
		return -EUCLEAN;
	if (outlen < FSCRYPT_NOKEY_NAME_MAX_ENCODED)
		return -ERANGE;
	/* struct fscrypt_nokey_name: dirhash words in CPU (little-endian) order */
	for (int i = 0; i < 4; i++) {
		raw[i] = (uint8_t)(hash >> (8 * i));
		raw[4 + i] = (uint8_t)(minor_hash >> (8 * i));
	}
	if (len <= FSCRYPT_NOKEY_BYTES) {
		memcpy(raw + 8, c, len);
		n = 8 + len;
	} else {
		memcpy(raw + 8, c, FSCRYPT_NOKEY_BYTES);
		err = fscrypt_sha256(c + FSCRYPT_NOKEY_BYTES, len - FSCRYPT_NOKEY_BYTES,
				     raw + 8 + FSCRYPT_NOKEY_BYTES);
		if (err)
			return err;
		n = sizeof(raw);
	}
	return (int)b64url_encode(raw, n, out);
}

int fscrypt_nokey_name_decode(const char *name, size_t len, struct fscrypt_nokey_name *out)
{
	uint8_t raw[8 + FSCRYPT_NOKEY_BYTES + 32];
	long n;

	if (len > FSCRYPT_NOKEY_NAME_MAX_ENCODED)
		return -ENOENT;
	n = b64url_decode(name, len, raw, sizeof(raw));
	/* at least one ciphertext byte; the digest form is exactly full size */
	if (n < 9 || (n > 8 + FSCRYPT_NOKEY_BYTES && n != (long)sizeof(raw)))
		return -ENOENT;
	memset(out, 0, sizeof(*out));
	out->hash = (uint32_t)raw[0] | (uint32_t)raw[1] << 8 | (uint32_t)raw[2] << 16 |
		    (uint32_t)raw[3] << 24;
	out->minor_hash = (uint32_t)raw[4] | (uint32_t)raw[5] << 8 | (uint32_t)raw[6] << 16 |
			  (uint32_t)raw[7] << 24;
	if (n == (long)sizeof(raw)) {
		out->full = false;
		out->len = FSCRYPT_NOKEY_BYTES;
		memcpy(out->bytes, raw + 8, FSCRYPT_NOKEY_BYTES);
		memcpy(out->sha256, raw + 8 + FSCRYPT_NOKEY_BYTES, 32);
	} else {
		out->full = true;
		out->len = (size_t)n - 8;
		memcpy(out->bytes, raw + 8, out->len);
	}
	return 0;
}

bool fscrypt_nokey_name_match(const struct fscrypt_nokey_name *nk, const void *de_name,
			      size_t de_len)
{
	uint8_t d[32];

	if (nk->full)
		return de_len == nk->len && !memcmp(de_name, nk->bytes, de_len);
	if (de_len <= FSCRYPT_NOKEY_BYTES || memcmp(de_name, nk->bytes, FSCRYPT_NOKEY_BYTES))
		return false;
	if (fscrypt_sha256((const uint8_t *)de_name + FSCRYPT_NOKEY_BYTES,
			   de_len - FSCRYPT_NOKEY_BYTES, d))
		return false;
	return !memcmp(d, nk->sha256, sizeof(d));
}
