/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Key and policy control of an f2fs-fuse mount: the wire format shared by
 * the daemon (fuse/keyctl.c) and f2fs-fusectl.  docs/keys.md describes it.
 *
 * Linux FUSE forwards only "restricted" ioctls: the kernel copies exactly
 * _IOC_SIZE(cmd) bytes in (_IOC_WRITE) and out (_IOC_READ).  Adding a key
 * and reading a v2 policy use variable-size structs in fscrypt's own ioctls,
 * and FS_IOC_{GET,SET}_ENCRYPTION_POLICY have their direction bits the wrong
 * way round for that, so they cannot pass; these fixed-size ones take their
 * place.  (The daemon also serves the kernel's fixed-size
 * FS_IOC_REMOVE_ENCRYPTION_KEY{,_ALL_USERS} and FS_IOC_GET_ENCRYPTION_KEY_STATUS.)
 *
 * Without ioctls (FUSE-T), the same structs travel over a Unix socket,
 * wrapped in struct f2fs_keyctl_msg.
 *
 * All fields are in host byte order: both ends run on one machine.
 */
#ifndef F2FS_KEYCTL_PROTO_H
#define F2FS_KEYCTL_PROTO_H

#include <stdint.h>
#include <sys/ioctl.h>

#define F2FS_KEYCTL_ID_SIZE	16	/* v2 key identifier */
#define F2FS_KEYCTL_MIN_KEY	16
#define F2FS_KEYCTL_MAX_KEY	64

/* add: raw key in, identifier out */
struct f2fs_keyctl_add {
	uint32_t raw_size;		/* 16..64 */
	uint32_t reserved;		/* 0 */
	uint8_t raw[F2FS_KEYCTL_MAX_KEY];
	uint8_t identifier[F2FS_KEYCTL_ID_SIZE];	/* out */
};

/* remove: drop the caller's claim (or all claims) to a key */
#define F2FS_KEYCTL_REMOVE_ALL_USERS		0x1	/* flags: root only */
#define F2FS_KEYCTL_REMOVAL_OTHER_USERS		0x1	/* status_flags: key kept */
struct f2fs_keyctl_remove {
	uint8_t identifier[F2FS_KEYCTL_ID_SIZE];
	uint32_t flags;
	uint32_t status_flags;		/* out */
};

/* status, as FS_IOC_GET_ENCRYPTION_KEY_STATUS reports it */
#define F2FS_KEYCTL_STATUS_ABSENT	1
#define F2FS_KEYCTL_STATUS_PRESENT	2
#define F2FS_KEYCTL_STATUS_FLAG_ADDED_BY_SELF	0x1
struct f2fs_keyctl_status {
	uint8_t identifier[F2FS_KEYCTL_ID_SIZE];
	uint32_t status;		/* out */
	uint32_t status_flags;		/* out */
	uint32_t user_count;		/* out: users holding a claim */
	uint32_t reserved;
};

/* a policy as in an fscrypt context; version is 1 or 2 */
struct f2fs_keyctl_policy {
	uint8_t version;
	uint8_t contents_mode;
	uint8_t filenames_mode;
	uint8_t flags;			/* FSCRYPT_POLICY_FLAG* */
	uint8_t log2_data_unit_size;	/* 0: the block size */
	uint8_t reserved[3];
	uint8_t key_spec[F2FS_KEYCTL_ID_SIZE];	/* v1: 8-byte descriptor */
};

/*
 * Key ioctls work on any file or directory of the mount; the policy
 * ioctls on the file (get) or directory (set) they are issued on.
 * 0xF2 is not a magic the kernel's fs ioctls use.
 */
#define F2FS_KEYCTL_MAGIC	0xF2
#define F2FS_IOC_ADD_KEY	_IOWR(F2FS_KEYCTL_MAGIC, 1, struct f2fs_keyctl_add)
#define F2FS_IOC_REMOVE_KEY	_IOWR(F2FS_KEYCTL_MAGIC, 2, struct f2fs_keyctl_remove)
#define F2FS_IOC_KEY_STATUS	_IOWR(F2FS_KEYCTL_MAGIC, 3, struct f2fs_keyctl_status)
#define F2FS_IOC_GET_POLICY	_IOR(F2FS_KEYCTL_MAGIC, 4, struct f2fs_keyctl_policy)
#define F2FS_IOC_SET_POLICY	_IOW(F2FS_KEYCTL_MAGIC, 5, struct f2fs_keyctl_policy)

/* ---- the socket transport ---- */

#define F2FS_KEYCTL_MSG_MAGIC	0x46324b43u	/* "F2KC" */
#define F2FS_KEYCTL_MSG_VERSION	1

enum f2fs_keyctl_op {
	F2FS_KEYCTL_OP_ADD_KEY = 1,
	F2FS_KEYCTL_OP_REMOVE_KEY = 2,
	F2FS_KEYCTL_OP_KEY_STATUS = 3,
	F2FS_KEYCTL_OP_GET_POLICY = 4,
	F2FS_KEYCTL_OP_SET_POLICY = 5,
};

/*
 * One request and one reply of exactly this size on a SOCK_STREAM
 * connection; the reply repeats the request with error and the out
 * fields filled in.  ino names the file of a policy operation: its
 * st_ino as stat(2) shows it on the mount.
 */
struct f2fs_keyctl_msg {
	uint32_t magic;
	uint32_t version;
	uint32_t op;			/* enum f2fs_keyctl_op */
	int32_t error;			/* reply: 0 or a positive errno */
	uint64_t ino;
	union {
		struct f2fs_keyctl_add add;
		struct f2fs_keyctl_remove remove;
		struct f2fs_keyctl_status status;
		struct f2fs_keyctl_policy policy;
		uint8_t pad[128];
	} u;
};

/*
 * Where the daemon listens unless -o keyctl_socket=PATH says otherwise:
 *   DIR/f2fs-fuse/HASH.sock
 * DIR is /run for a daemon run by root, else $XDG_RUNTIME_DIR, else
 * /tmp/f2fs-fuse-UID (made 0700).  HASH is the FNV-1a 64-bit hash of the
 * mount point's absolute, symlink-free path, as 16 hex digits.
 */
#define F2FS_KEYCTL_RUN_DIR	"/run/f2fs-fuse"

static inline uint64_t f2fs_keyctl_path_hash(const char *path)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (const unsigned char *p = (const unsigned char *)path; *p; p++) {
		h ^= *p;
		h *= 0x100000001b3ull;
	}
	return h;
}

#endif /* F2FS_KEYCTL_PROTO_H */
