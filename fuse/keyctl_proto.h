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

#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>

#define F2FS_KEYCTL_ID_SIZE	16	/* v2 key identifier */
#define F2FS_KEYCTL_DESC_SIZE	8	/* v1 key descriptor */
#define F2FS_KEYCTL_MIN_KEY	16
#define F2FS_KEYCTL_MAX_KEY	64

/*
 * Which key, as the kernel's struct fscrypt_key_specifier names it (the
 * type numbers are its FSCRYPT_KEY_SPEC_TYPE_*): a v1 descriptor in u[0..7]
 * with u[8..15] zero, or a v2 identifier in u[].
 */
#define F2FS_KEYCTL_SPEC_DESCRIPTOR	1
#define F2FS_KEYCTL_SPEC_IDENTIFIER	2
struct f2fs_keyctl_key_spec {
	uint32_t type;
	uint32_t reserved;		/* 0 */
	uint8_t u[F2FS_KEYCTL_ID_SIZE];
};

/*
 * add: raw key in; for an identifier spec the identifier comes out in
 * spec.u, a descriptor spec names the v1 key going in.
 */
struct f2fs_keyctl_add {
	struct f2fs_keyctl_key_spec spec;
	uint32_t raw_size;		/* 16..64 */
	uint32_t reserved;		/* 0 */
	uint8_t raw[F2FS_KEYCTL_MAX_KEY];
};

/* remove: drop the caller's claim (or all claims) to a key */
#define F2FS_KEYCTL_REMOVE_ALL_USERS		0x1	/* flags: root only */
#define F2FS_KEYCTL_REMOVAL_OTHER_USERS		0x1	/* status_flags: key kept */
struct f2fs_keyctl_remove {
	struct f2fs_keyctl_key_spec spec;
	uint32_t flags;
	uint32_t status_flags;		/* out */
};

/* status, as FS_IOC_GET_ENCRYPTION_KEY_STATUS reports it */
#define F2FS_KEYCTL_STATUS_ABSENT	1
#define F2FS_KEYCTL_STATUS_PRESENT	2
#define F2FS_KEYCTL_STATUS_FLAG_ADDED_BY_SELF	0x1
struct f2fs_keyctl_status {
	struct f2fs_keyctl_key_spec spec;
	uint32_t status;		/* out */
	uint32_t status_flags;		/* out */
	uint32_t user_count;		/* out: users holding a claim (v1 keys: 0) */
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
 * hello: the daemon says what it is before f2fs-fusectl sends a key.  The
 * kernel vouches for the mount's owner (user_id= in /proc/self/mountinfo);
 * this tells an f2fs-fuse daemon from another FUSE file system.
 */
#define F2FS_KEYCTL_HELLO_MAGIC	0x6573756673663266ull	/* "f2fsfuse" in memory order */
struct f2fs_keyctl_hello {
	uint64_t magic;			/* out: F2FS_KEYCTL_HELLO_MAGIC */
	uint32_t version;		/* out: F2FS_KEYCTL_MSG_VERSION */
	uint32_t uid;			/* out: the daemon's effective uid */
	uint32_t pid;			/* out: the daemon's process id */
	uint32_t reserved;
};

/* The sizes are part of the ioctl numbers. */
_Static_assert(sizeof(struct f2fs_keyctl_hello) == 24, "f2fs_keyctl_hello");
_Static_assert(sizeof(struct f2fs_keyctl_add) == 96, "f2fs_keyctl_add");
_Static_assert(sizeof(struct f2fs_keyctl_remove) == 32, "f2fs_keyctl_remove");
_Static_assert(sizeof(struct f2fs_keyctl_status) == 40, "f2fs_keyctl_status");
_Static_assert(sizeof(struct f2fs_keyctl_policy) == 24, "f2fs_keyctl_policy");

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
#define F2FS_IOC_HELLO		_IOR(F2FS_KEYCTL_MAGIC, 6, struct f2fs_keyctl_hello)

/* ---- the socket transport ---- */

#define F2FS_KEYCTL_MSG_MAGIC	0x46324b43u	/* "F2KC" */
/*
 * 2: key specifiers (v1 keys) in the key structs;
 * 3: policy operations name the file by a descriptor the client holds open
 */
#define F2FS_KEYCTL_MSG_VERSION	3

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
 * fields filled in.  fd names the file of a policy operation: the number
 * of a descriptor the client has open on it (not O_PATH) while it waits
 * for the reply.  The daemon looks the descriptor up in the client's
 * /proc/PID/fdinfo, so only files the client could open can be named,
 * as with the ioctls.
 */
struct f2fs_keyctl_msg {
	uint32_t magic;
	uint32_t version;
	uint32_t op;			/* enum f2fs_keyctl_op */
	int32_t error;			/* reply: 0 or a positive errno */
	int32_t fd;
	uint32_t reserved;		/* 0 */
	union {
		struct f2fs_keyctl_add add;
		struct f2fs_keyctl_remove remove;
		struct f2fs_keyctl_status status;
		struct f2fs_keyctl_policy policy;
		uint8_t pad[128];
	} u;
};

/* ---- spelling, shared by the tool and the daemon ---- */

static inline int f2fs_keyctl_hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* n bytes from the 2n hex digits at s (slen must be 2n); false otherwise. */
static inline bool f2fs_keyctl_unhex(const char *s, size_t slen, uint8_t *out, size_t n)
{
	if (slen != 2 * n)
		return false;
	for (size_t i = 0; i < n; i++) {
		int hi = f2fs_keyctl_hexval(s[2 * i]), lo = f2fs_keyctl_hexval(s[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return false;
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	return true;
}

/*
 * A key as the command line names it: 16 hex digits are a v1 descriptor,
 * 32 a v2 identifier (as fscryptctl shows them).  false for anything else.
 */
static inline bool f2fs_keyctl_parse_spec(const char *s, struct f2fs_keyctl_key_spec *spec)
{
	size_t len = strlen(s);

	memset(spec, 0, sizeof(*spec));
	if (f2fs_keyctl_unhex(s, len, spec->u, F2FS_KEYCTL_DESC_SIZE)) {
		spec->type = F2FS_KEYCTL_SPEC_DESCRIPTOR;
		return true;
	}
	if (f2fs_keyctl_unhex(s, len, spec->u, F2FS_KEYCTL_ID_SIZE)) {
		spec->type = F2FS_KEYCTL_SPEC_IDENTIFIER;
		return true;
	}
	memset(spec, 0, sizeof(*spec));
	return false;
}

/*
 * The value of -o v1_key_file=DESCRIPTOR:PATH: the descriptor (16 hex
 * digits) into desc, and the path (which may hold more colons) returned;
 * NULL if the value has no such form or the path is empty.
 */
static inline const char *f2fs_keyctl_split_v1_key_file(const char *arg,
							 uint8_t desc[F2FS_KEYCTL_DESC_SIZE])
{
	const char *colon = strchr(arg, ':');

	if (!colon || !colon[1] ||
	    !f2fs_keyctl_unhex(arg, (size_t)(colon - arg), desc, F2FS_KEYCTL_DESC_SIZE))
		return NULL;
	return colon + 1;
}

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

/* CLOCK_MONOTONIC in milliseconds, for f2fs_keyctl_io's deadlines. */
static inline int64_t f2fs_keyctl_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/*
 * All of buf, in (wr false) or out, over a stream socket: by the deadline
 * (f2fs_keyctl_now_ms() ms), or with no limit when deadline < 0.  A peer
 * gone mid-message is -ECONNRESET, never a SIGPIPE.
 */
static inline int f2fs_keyctl_io(int fd, void *buf, size_t len, bool wr, int64_t deadline)
{
	uint8_t *p = buf;

	while (len) {
		struct pollfd pf = { .fd = fd, .events = wr ? POLLOUT : POLLIN };
		int64_t left = deadline < 0 ? -1 : deadline - f2fs_keyctl_now_ms();
		ssize_t n;
		int r;

		if (deadline >= 0 && left <= 0)
			return -ETIMEDOUT;
		r = poll(&pf, 1, (int)left);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r ? -errno : -ETIMEDOUT;
		n = wr ? send(fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT) : recv(fd, p, len, MSG_DONTWAIT);
		if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK))
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -ECONNRESET;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

#endif /* F2FS_KEYCTL_PROTO_H */
