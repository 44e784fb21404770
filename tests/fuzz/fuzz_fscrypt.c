// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the encryption parsers that take bytes from an image
 * or from a caller, each with a round trip where one exists.
 *
 *   byte 0 % 4   0  fscrypt_context_parse (an inode's encryption context
 *                   xattr): what parses serializes back to the same bytes
 *                1  fscrypt_nokey_name_decode (a name looked up without the
 *                   key): what decodes encodes to a name that decodes the
 *                   same, and matching it against the rest of the input is
 *                   safe
 *                2  f2fs_keyctl_parse_spec (a key named on the command line
 *                   or in a request): a parsed spec prints back as the input
 *                3  f2fs_keyctl_split_v1_key_file (-o key_file=DESC:PATH)
 *   the rest     the parser's input
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fscrypt.h"
#include "keyctl_proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fail(const char *what)
{
	fprintf(stderr, "fuzz_fscrypt: %s\n", what);
	abort();
}

static void context(const uint8_t *d, size_t n)
{
	struct fscrypt_context c, c2;
	uint8_t out[64];
	int len;

	if (fscrypt_context_parse(d, n, &c))
		return;
	len = fscrypt_context_serialize(&c, out, sizeof(out));
	if (len < 0 || (size_t)len != n || memcmp(out, d, n))
		fail("a parsed context does not serialize back to its bytes");
	if (fscrypt_context_parse(out, (size_t)len, &c2) || memcmp(&c, &c2, sizeof(c)))
		fail("a serialized context parses differently");
	fscrypt_mode_name(c.contents_mode);
	fscrypt_mode_name(c.filenames_mode);
}

static void nokey_name(const uint8_t *d, size_t n)
{
	struct fscrypt_nokey_name nk;
	char enc[FSCRYPT_NOKEY_NAME_MAX_ENCODED + 8];
	size_t split = n ? d[0] : 0;
	int len;

	d++, n = n ? n - 1 : 0;
	if (split > n)
		split = n;
	if (fscrypt_nokey_name_decode((const char *)d, split, &nk))
		return;
	fscrypt_nokey_name_match(&nk, d + split, n - split);
	/* real ciphertexts are at least 16 bytes; shorter ones never get encoded */
	if (!nk.full || nk.len < 16)
		return;
	/*
	 * A whole ciphertext encodes to a name that decodes to it again.  Not
	 * necessarily to the same name: like the kernel's, the decoder takes a
	 * last character of zero bits that the encoder never writes.
	 */
	len = fscrypt_nokey_name_encode(nk.hash, nk.minor_hash, nk.bytes, nk.len, enc, sizeof(enc));
	if (len < 0)
		return;
	struct fscrypt_nokey_name again;

	if (fscrypt_nokey_name_decode(enc, (size_t)len, &again) || again.hash != nk.hash ||
	    again.minor_hash != nk.minor_hash || !again.full || again.len != nk.len ||
	    memcmp(again.bytes, nk.bytes, nk.len))
		fail("an encoded no-key name decodes to another ciphertext");
	if (!fscrypt_nokey_name_match(&nk, nk.bytes, nk.len))
		fail("a no-key name does not match its own ciphertext");
}

static void key_spec(const uint8_t *d, size_t n)
{
	struct f2fs_keyctl_key_spec spec;
	char s[80], back[80];
	size_t k = 0, bytes;

	if (n >= sizeof(s))
		n = sizeof(s) - 1;
	memcpy(s, d, n);
	s[n] = 0;
	if (!f2fs_keyctl_parse_spec(s, &spec))
		return;
	bytes = spec.type == F2FS_KEYCTL_SPEC_DESCRIPTOR ? F2FS_KEYCTL_DESC_SIZE : F2FS_KEYCTL_ID_SIZE;
	if (spec.type != F2FS_KEYCTL_SPEC_DESCRIPTOR && spec.type != F2FS_KEYCTL_SPEC_IDENTIFIER)
		fail("a parsed key spec has no known type");
	for (size_t i = 0; i < bytes; i++)
		k += (size_t)snprintf(back + k, sizeof(back) - k, "%02x", spec.u[i]);
	if (strlen(s) != k || strncasecmp(s, back, k))
		fail("a parsed key spec is not its input's hex digits");
}

static void v1_key_file(const uint8_t *d, size_t n)
{
	uint8_t desc[F2FS_KEYCTL_DESC_SIZE];
	char s[128];
	const char *path;

	if (n >= sizeof(s))
		n = sizeof(s) - 1;
	memcpy(s, d, n);
	s[n] = 0;
	path = f2fs_keyctl_split_v1_key_file(s, desc);
	if (path && (path <= s || path > s + strlen(s) || !*path || path[-1] != ':'))
		fail("the key file path is not the part after the descriptor");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!size)
		return 0;
	switch (data[0] % 4) {
	case 0:
		context(data + 1, size - 1);
		break;
	case 1:
		nokey_name(data + 1, size - 1);
		break;
	case 2:
		key_spec(data + 1, size - 1);
		break;
	default:
		v1_key_file(data + 1, size - 1);
		break;
	}
	return 0;
}
