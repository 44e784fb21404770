/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fscrypt in userspace: keys, policies, contents and filename encryption,
 * interoperable with the Linux kernel's fs/crypto as used by f2fs.
 *
 * Plain C: no OpenSSL types leak out of this header, so core/ may include
 * it.  Every function returning int returns 0 (or a length) on success and
 * a negative errno on failure.  No function logs or exposes key bytes.
 *
 * Objects:
 *   struct fscrypt_keyring     master keys of one mount (thread-safe)
 *   struct fscrypt_context     a parsed on-disk context (xattr 9, "c")
 *   struct fscrypt_inode_info  the keys of one inode, derived from the
 *                              keyring, its context, ino and the fs uuid;
 *                              immutable after setup, so any number of
 *                              threads may use it at once
 *   contents key               opaque pointer from fscrypt_contents_key(),
 *                              usable as f2fs_crypt_ctx.key together with
 *                              fscrypt_crypt_ops (decrypt by DUN alone)
 *
 * Supported: AES-256-XTS, AES-128-CBC-ESSIV and Adiantum contents;
 * AES-256-CTS, AES-128-CTS, AES-256-HCTR2 and Adiantum filenames; v1 and
 * v2 policies;
 * DIRECT_KEY, IV_INO_LBLK_64, IV_INO_LBLK_32; data units of 512..4096
 * bytes (log2_data_unit_size, Linux 6.7+) in 4096-byte f2fs blocks.
 * Not supported (-EOPNOTSUPP): SM4 modes, hardware-wrapped keys.
 */
#ifndef F2FS_CRYPTO_FSCRYPT_H
#define F2FS_CRYPTO_FSCRYPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Mode numbers and flags as in include/uapi/linux/fscrypt.h */
enum {
	FSCRYPT_M_AES_256_XTS = 1,
	FSCRYPT_M_AES_256_CTS = 4,
	FSCRYPT_M_AES_128_CBC = 5,
	FSCRYPT_M_AES_128_CTS = 6,
	FSCRYPT_M_SM4_XTS = 7,
	FSCRYPT_M_SM4_CTS = 8,
	FSCRYPT_M_ADIANTUM = 9,
	FSCRYPT_M_AES_256_HCTR2 = 10,
};
enum {
	FSCRYPT_F_PAD_MASK = 0x03,	/* padding 4 << (flags & 3) */
	FSCRYPT_F_DIRECT_KEY = 0x04,
	FSCRYPT_F_IV_INO_LBLK_64 = 0x08,
	FSCRYPT_F_IV_INO_LBLK_32 = 0x10,
};

#define FSCRYPT_CONTEXT_V1_SIZE		28
#define FSCRYPT_CONTEXT_V2_SIZE		40
#define FSCRYPT_CONTEXT_MAX_SIZE	40
#define FSCRYPT_KEY_DESCRIPTOR_LEN	8
#define FSCRYPT_KEY_IDENTIFIER_LEN	16
#define FSCRYPT_NONCE_LEN		16
#define FSCRYPT_MAX_MASTER_KEY		64
#define FSCRYPT_MIN_MASTER_KEY		16
#define FSCRYPT_BLOCK_SIZE		4096	/* f2fs block */
#define FSCRYPT_DATA_UNIT_SIZE		4096	/* default data unit: the block */
#define FSCRYPT_NAME_MAX		255
/* Longest no-key name: base64url of 8 + 149 + 32 bytes, no padding. */
#define FSCRYPT_NOKEY_NAME_MAX_ENCODED	252
#define FSCRYPT_NOKEY_BYTES		149
/* The f2fs xattr holding the context. */
#define FSCRYPT_XATTR_INDEX		9
#define FSCRYPT_XATTR_NAME		"c"

/* ------------------------------------------------------------ context */

struct fscrypt_context {
	uint8_t version;		/* 1 or 2 (the on-disk context version) */
	uint8_t contents_mode;
	uint8_t filenames_mode;
	uint8_t flags;
	uint8_t log2_data_unit_size;	/* v2 only; 0 = the block size */
	/* v1: 8-byte descriptor (rest zero); v2: 16-byte identifier */
	uint8_t key_spec[FSCRYPT_KEY_IDENTIFIER_LEN];
	uint8_t nonce[FSCRYPT_NONCE_LEN];
};

/*
 * Parse and validate a raw context as the kernel does
 * (fscrypt_policy_from_context + fscrypt_supported_policy): size matching
 * the version, a valid mode pair, known flags, at most one of DIRECT_KEY /
 * IV_INO_LBLK_64 / IV_INO_LBLK_32, DIRECT_KEY only with equal modes that
 * take a 32-byte IV, IV_INO_LBLK_* only with AES-256-XTS contents, zero
 * reserved bytes, log2_data_unit_size 0 or 9..12.  -EINVAL if corrupt or
 * invalid.  Modes the kernel accepts but this build cannot run are accepted
 * here and refused by fscrypt_inode_info_new() with -EOPNOTSUPP.
 */
int fscrypt_context_parse(const void *buf, size_t len, struct fscrypt_context *out);
/* Serialize; returns the size written (28 or 40), -EINVAL or -ERANGE. */
int fscrypt_context_serialize(const struct fscrypt_context *ctx, void *buf, size_t len);
/* "AES-256-XTS", ...; "unknown" for others. */
const char *fscrypt_mode_name(uint8_t mode);
/* True if this build can encrypt/decrypt with this mode. */
bool fscrypt_mode_supported(uint8_t mode);

/* ------------------------------------------------------------ keyring */

struct fscrypt_keyring;

int fscrypt_keyring_new(struct fscrypt_keyring **out);
/* Wipes every key.  Inode infos set up from it stay usable. */
void fscrypt_keyring_free(struct fscrypt_keyring *kr);
/*
 * Add a v2 master key (16..64 raw bytes); its identifier (HKDF-SHA512,
 * context 1) is stored in id.  Adding the same key again is not an error.
 */
int fscrypt_keyring_add_v2(struct fscrypt_keyring *kr, const void *raw, size_t len,
			   uint8_t id[FSCRYPT_KEY_IDENTIFIER_LEN]);
/*
 * Add a v1 master key (16..64 raw bytes) under a user-chosen 8-byte
 * descriptor.  The same key again is not an error; another key under a
 * descriptor already present is -EEXIST (the kernel keeps the first one
 * silently).  Modes refuse keys shorter than their own key when a file is
 * set up (64 bytes for AES-256-XTS), not here: the key has no modes yet.
 */
int fscrypt_keyring_add_v1(struct fscrypt_keyring *kr,
			   const uint8_t desc[FSCRYPT_KEY_DESCRIPTOR_LEN], const void *raw,
			   size_t len);
/* Remove and wipe a key; -ENOKEY if absent.  spec is 8 (v1) or 16 (v2) bytes. */
int fscrypt_keyring_remove(struct fscrypt_keyring *kr, int version, const uint8_t *spec);
/* Is the key named by this context present? */
bool fscrypt_keyring_has_key(struct fscrypt_keyring *kr, const struct fscrypt_context *ctx);
/* Is a key with this descriptor (version 1, 8 bytes) or identifier (2, 16) present? */
bool fscrypt_keyring_lookup(struct fscrypt_keyring *kr, int version, const uint8_t *spec);
/*
 * Lock the keyring's key memory again.  Memory locks are not inherited
 * across fork(), so a process that forks after adding keys (daemonizing)
 * calls this in the child.  0, or the first mlock error (RLIMIT_MEMLOCK).
 */
int fscrypt_keyring_lock_memory(struct fscrypt_keyring *kr);
/* Identifier of a v2 master key, without a keyring. */
int fscrypt_key_identifier(const void *raw, size_t len, uint8_t id[FSCRYPT_KEY_IDENTIFIER_LEN]);
/* Wipe a secret so the compiler cannot drop the stores (OPENSSL_cleanse). */
void fscrypt_cleanse(void *p, size_t len);

/* ------------------------------------------------------------ inode */

enum fscrypt_file_type { FSCRYPT_FT_REG, FSCRYPT_FT_DIR, FSCRYPT_FT_LNK };

struct fscrypt_inode_info;

/*
 * Derive the keys of one inode: contents keys for regular files, filename
 * keys for directories and symlinks.  -ENOKEY if the master key is not in
 * the keyring (or too short for the mode), -EOPNOTSUPP if this build lacks
 * the mode (a sentence saying which goes to why, if non-NULL), -EINVAL for
 * an invalid context, -ENOMEM.
 */
int fscrypt_inode_info_new(struct fscrypt_keyring *kr, const struct fscrypt_context *ctx,
			   enum fscrypt_file_type type, uint32_t ino,
			   const uint8_t fs_uuid[16], struct fscrypt_inode_info **out,
			   char *why, size_t whylen);
void fscrypt_inode_info_free(struct fscrypt_inode_info *ci);
const struct fscrypt_context *fscrypt_inode_context(const struct fscrypt_inode_info *ci);

/* ------------------------------------------------------------ contents */

/*
 * DUN of logical block lblk: lblk (default, DIRECT_KEY), ino << 32 | lblk
 * (IV_INO_LBLK_64), or (u32)(hash(ino) + lblk) (IV_INO_LBLK_32).
 * Consecutive blocks have consecutive DUNs (IV_INO_LBLK_32 wraps, see
 * fscrypt_limit_io_blocks).  The nonce of a DIRECT_KEY file is part of its
 * contents key, so a DUN alone names the IV.  With data units smaller than
 * the block, the key maps a block's DUN to the kernel's unit indices.
 */
uint64_t fscrypt_dun(const struct fscrypt_inode_info *ci, uint64_t lblk);
/*
 * How many of the nr blocks from lblk one request may cover: IV_INO_LBLK_32
 * DUNs wrap at 2^32 and a request's DUNs must be consecutive
 * (kernel fscrypt_limit_io_blocks).  nr for other policies.
 */
uint64_t fscrypt_limit_io_blocks(const struct fscrypt_inode_info *ci, uint64_t lblk,
				 uint64_t nr);
/*
 * The prepared contents key of a regular file (NULL otherwise), valid as
 * long as ci.  For fscrypt_decrypt_units()/fscrypt_encrypt_units().
 */
const void *fscrypt_contents_key(const struct fscrypt_inode_info *ci);
/*
 * Crypt nr_units 4096-byte blocks, block i with DUN dun + i (dun from
 * fscrypt_dun(); for IV_INO_LBLK_32 a request must not pass DUN 2^32 - 1,
 * see fscrypt_limit_io_blocks).  Decrypt is in place; encrypt may be in
 * place (in == out).  Shapes match core's struct f2fs_crypt_ops.
 */
int fscrypt_decrypt_units(const void *key, uint64_t dun, void *buf, size_t nr_units);
int fscrypt_encrypt_units(const void *key, uint64_t dun, const void *in, void *out,
			  size_t nr_units);
/* Convenience: by logical block, splitting at DUN wrap points. */
int fscrypt_decrypt_blocks(const struct fscrypt_inode_info *ci, uint64_t lblk, void *buf,
			   size_t nr);
int fscrypt_encrypt_blocks(const struct fscrypt_inode_info *ci, uint64_t lblk,
			   const void *in, void *out, size_t nr);

/* ------------------------------------------------------------ filenames */

/*
 * Ciphertext length for a name of len bytes: NUL-padded to at least 16 and
 * to a multiple of 4 << (flags & 3), capped at max_len.  -ENAMETOOLONG if
 * len > max_len.
 */
int fscrypt_fname_encrypted_size(const struct fscrypt_context *ctx, size_t len,
				 size_t max_len);
/* Encrypt a name (dir's ci) into out; returns the ciphertext length. */
int fscrypt_fname_encrypt(const struct fscrypt_inode_info *dir, const void *name, size_t len,
			  void *out, size_t outlen);
/*
 * Decrypt a dentry name (16..255 bytes); returns the plaintext length
 * (trailing NULs stripped).  out needs len bytes.  -EUCLEAN if len < 16.
 * As in the kernel the result is not checked: on a corrupt image it can be
 * empty or contain '/'.
 */
int fscrypt_fname_decrypt(const struct fscrypt_inode_info *dir, const void *ct, size_t len,
			  void *out, size_t outlen);
/* SipHash-2-4 of a (casefolded) plaintext name with the dirhash key. */
int fscrypt_fname_siphash(const struct fscrypt_inode_info *dir, const void *name, size_t len,
			  uint64_t *hash);

/*
 * Symlink targets: disk holds struct fscrypt_symlink_data { le16 len;
 * ciphertext }, encrypted with the symlink inode's own key.  Decrypt
 * returns the target length (out needs the ciphertext length; -EUCLEAN for
 * a bad length or an empty target); encrypt returns the bytes written.
 */
int fscrypt_symlink_decrypt(const struct fscrypt_inode_info *lnk, const void *disk,
			    size_t disklen, char *out, size_t outlen);
int fscrypt_symlink_encrypt(const struct fscrypt_inode_info *lnk, const char *target,
			    size_t len, void *disk, size_t disklen);

/* ------------------------------------------------------------ no-key names */

/*
 * The name readdir shows without the key (kernel >= 5.10): base64url (no
 * padding) of { le32 dirhash[2]; up to 149 ciphertext bytes; sha256 of the
 * ciphertext bytes after the first 149, if any }.  For f2fs, hash is the
 * dentry's hash_code and minor_hash is 0.  "." and ".." are returned as
 * they are.  out needs FSCRYPT_NOKEY_NAME_MAX_ENCODED bytes; returns the
 * length (no NUL is written).
 */
int fscrypt_nokey_name_encode(uint32_t hash, uint32_t minor_hash, const void *ct, size_t len,
			      char *out, size_t outlen);

struct fscrypt_nokey_name {
	uint32_t hash, minor_hash;
	bool full;			/* bytes[] is the whole ciphertext */
	size_t len;			/* bytes used in bytes[] */
	uint8_t bytes[FSCRYPT_NOKEY_BYTES];
	uint8_t sha256[32];		/* valid when !full */
};

/* Parse a no-key name given by a lookup; -ENOENT if it cannot be one. */
int fscrypt_nokey_name_decode(const char *name, size_t len, struct fscrypt_nokey_name *out);
/* Does the dentry with ciphertext de_name match (kernel fscrypt_match_name)? */
bool fscrypt_nokey_name_match(const struct fscrypt_nokey_name *nk, const void *de_name,
			      size_t de_len);

#endif
