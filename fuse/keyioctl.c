// SPDX-License-Identifier: GPL-2.0
/*
 * The key and policy ioctls: our F2FS_IOC_* (fuse/keyctl_proto.h) and the
 * kernel's fixed-size fscrypt ones, decoded and checked for size; the
 * operations themselves are in keyctl.c.
 */
#include "keyctl_internal.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#ifndef _IOC_TYPE			/* macOS: IOCGROUP, the same bits */
#define _IOC_TYPE(nr) (((nr) >> 8) & 0xff)
#endif

static void reply_ioctl(fuse_req_t req, int err, const void *out, size_t len)
{
	if (err)
		fuse_reply_err(req, -err);
	else
		fuse_reply_ioctl(req, 0, out, len);
}

/*
 * Of the kernel's fscrypt ioctls, key removal and key status have fixed
 * sizes, so FUSE passes them: fscryptctl's remove_key and key_status work
 * on a mount too.  The layouts of <linux/fscrypt.h>, spelled out here
 * because its names clash with crypto/fscrypt.h.
 */
struct uapi_key_spec {
	uint32_t type;			/* 1: descriptor, 2: identifier */
	uint32_t reserved;
	uint8_t u[32];
};
struct uapi_remove_key_arg {
	struct uapi_key_spec key_spec;
	uint32_t removal_status_flags;
	uint32_t reserved[5];
};
struct uapi_key_status_arg {
	struct uapi_key_spec key_spec;
	uint32_t reserved[6];
	uint32_t status, status_flags, user_count;
	uint32_t out_reserved[13];
};
_Static_assert(sizeof(struct uapi_remove_key_arg) == 64, "fscrypt_remove_key_arg");
_Static_assert(sizeof(struct uapi_key_status_arg) == 128, "fscrypt_get_key_status_arg");
#define UAPI_REMOVAL_OTHER_USERS	0x2
#define UAPI_IOC_REMOVE_KEY		_IOWR('f', 24, struct uapi_remove_key_arg)
#define UAPI_IOC_REMOVE_KEY_ALL_USERS	_IOWR('f', 25, struct uapi_remove_key_arg)
#define UAPI_IOC_GET_KEY_STATUS		_IOWR('f', 26, struct uapi_key_status_arg)

/*
 * The kernel's key specifier as ours (the type numbers are the same), or
 * false where the kernel says EINVAL; it ignores the union's bytes after
 * the descriptor or identifier, so they are not copied.
 */
static bool uapi_spec(const struct uapi_key_spec *in, struct f2fs_keyctl_key_spec *out)
{
	memset(out, 0, sizeof(*out));
	if (in->reserved)
		return false;
	if (in->type == F2FS_KEYCTL_SPEC_DESCRIPTOR)
		memcpy(out->u, in->u, F2FS_KEYCTL_DESC_SIZE);
	else if (in->type == F2FS_KEYCTL_SPEC_IDENTIFIER)
		memcpy(out->u, in->u, F2FS_KEYCTL_ID_SIZE);
	else
		return false;
	out->type = in->type;
	return true;
}

static bool uapi_ioctl(fuse_req_t req, struct f2fs_keyctl *kc, struct f2fs_caller *who,
		       unsigned int cmd, const void *in_buf, size_t in_bufsz, size_t out_bufsz)
{
	int err;

	if (cmd == (unsigned int)UAPI_IOC_REMOVE_KEY ||
	    cmd == (unsigned int)UAPI_IOC_REMOVE_KEY_ALL_USERS) {
		struct uapi_remove_key_arg a;
		struct f2fs_keyctl_remove r = { 0 };

		if (in_bufsz < sizeof(a) || out_bufsz < sizeof(a)) {
			fuse_reply_err(req, EINVAL);
			return true;
		}
		memcpy(&a, in_buf, sizeof(a));
		if (!uapi_spec(&a.key_spec, &r.spec) || !keyctl_all_zero(a.reserved, sizeof(a.reserved))) {
			fuse_reply_err(req, EINVAL);
			return true;
		}
		if (cmd == (unsigned int)UAPI_IOC_REMOVE_KEY_ALL_USERS)
			r.flags = F2FS_KEYCTL_REMOVE_ALL_USERS;
		err = keyctl_remove_key(kc, who, &r);
		a.removal_status_flags = (r.status_flags & F2FS_KEYCTL_REMOVAL_OTHER_USERS) ?
					 UAPI_REMOVAL_OTHER_USERS : 0;
		reply_ioctl(req, err, &a, sizeof(a));
		return true;
	}
	if (cmd == (unsigned int)UAPI_IOC_GET_KEY_STATUS) {
		struct uapi_key_status_arg a;
		struct f2fs_keyctl_status st = { 0 };

		if (in_bufsz < sizeof(a) || out_bufsz < sizeof(a)) {
			fuse_reply_err(req, EINVAL);
			return true;
		}
		memcpy(&a, in_buf, sizeof(a));
		if (!uapi_spec(&a.key_spec, &st.spec) || !keyctl_all_zero(a.reserved, sizeof(a.reserved))) {
			fuse_reply_err(req, EINVAL);
			return true;
		}
		err = keyctl_key_status(kc, who, &st);
		/* Our status numbers and flags are the kernel's. */
		a.status = st.status;
		a.status_flags = st.status_flags;
		a.user_count = st.user_count;
		memset(a.out_reserved, 0, sizeof(a.out_reserved));
		reply_ioctl(req, err, &a, sizeof(a));
		return true;
	}
	return false;
}

/* Who we are, for f2fs-fusectl before it sends a key. */
static void hello(fuse_req_t req, size_t out_bufsz)
{
	struct f2fs_keyctl_hello h = {
		.magic = F2FS_KEYCTL_HELLO_MAGIC,
		.version = F2FS_KEYCTL_MSG_VERSION,
		.uid = (uint32_t)geteuid(),
		.pid = (uint32_t)getpid(),
	};

	reply_ioctl(req, out_bufsz < sizeof(h) ? -EINVAL : 0, &h, sizeof(h));
}

/* Our own numbers, all but hello; the caller checked the magic. */
static void f2fs_ioctl(fuse_req_t req, struct f2fs_keyctl *kc, struct f2fs_caller *who,
		       uint32_t nid, unsigned int cmd, const void *in_buf, size_t in_bufsz,
		       size_t out_bufsz)
{
	int err;

	if (cmd == (unsigned int)F2FS_IOC_ADD_KEY) {
		struct f2fs_keyctl_add a;

		if (in_bufsz < sizeof(a) || out_bufsz < sizeof(a)) {
			fuse_reply_err(req, EINVAL);
			return;
		}
		memcpy(&a, in_buf, sizeof(a));
		/* The request buffer is libfuse's own; leave no copy of the key in it. */
		keyctl_wipe((void *)in_buf, in_bufsz);
		err = keyctl_add_key(kc, who, &a);
		reply_ioctl(req, err, &a, sizeof(a));
		keyctl_wipe(&a, sizeof(a));
	} else if (cmd == (unsigned int)F2FS_IOC_REMOVE_KEY) {
		struct f2fs_keyctl_remove r;

		if (in_bufsz < sizeof(r) || out_bufsz < sizeof(r)) {
			fuse_reply_err(req, EINVAL);
			return;
		}
		memcpy(&r, in_buf, sizeof(r));
		err = keyctl_remove_key(kc, who, &r);
		reply_ioctl(req, err, &r, sizeof(r));
	} else if (cmd == (unsigned int)F2FS_IOC_KEY_STATUS) {
		struct f2fs_keyctl_status s;

		if (in_bufsz < sizeof(s) || out_bufsz < sizeof(s)) {
			fuse_reply_err(req, EINVAL);
			return;
		}
		memcpy(&s, in_buf, sizeof(s));
		err = keyctl_key_status(kc, who, &s);
		reply_ioctl(req, err, &s, sizeof(s));
	} else if (cmd == (unsigned int)F2FS_IOC_GET_POLICY) {
		struct f2fs_keyctl_policy p;

		if (out_bufsz < sizeof(p)) {
			fuse_reply_err(req, EINVAL);
			return;
		}
		err = keyctl_get_policy(kc, nid, &p);
		reply_ioctl(req, err, &p, sizeof(p));
	} else if (cmd == (unsigned int)F2FS_IOC_SET_POLICY) {
		struct f2fs_keyctl_policy p;

		if (in_bufsz < sizeof(p)) {
			fuse_reply_err(req, EINVAL);
			return;
		}
		memcpy(&p, in_buf, sizeof(p));
		err = keyctl_set_policy(kc, who, nid, &p);
		reply_ioctl(req, err, NULL, 0);
	} else {
		fuse_reply_err(req, ENOTTY);
	}
}

bool f2fs_keyctl_ioctl(fuse_req_t req, fuse_ino_t ino, unsigned int cmd, const void *in_buf,
		       size_t in_bufsz, size_t out_bufsz)
{
	struct f2fs_fuse *fs = fuse_req_userdata(req);
	struct f2fs_keyctl *kc = fs->keyctl;
	struct f2fs_caller who;
	bool done = true;

	if (_IOC_TYPE(cmd) != 'f' && _IOC_TYPE(cmd) != F2FS_KEYCTL_MAGIC)
		return false;
	if (_IOC_TYPE(cmd) == F2FS_KEYCTL_MAGIC && (!kc || cmd == (unsigned int)F2FS_IOC_HELLO)) {
		if (kc)
			hello(req, out_bufsz);
		else
			fuse_reply_err(req, ENOTTY);
		return true;
	}
	if (!kc)
		return false;
	f2fs_caller_from_req(&who, req);
	if (_IOC_TYPE(cmd) == 'f')
		done = uapi_ioctl(req, kc, &who, cmd, in_buf, in_bufsz, out_bufsz);
	else
		f2fs_ioctl(req, kc, &who, f2fs_fuse_nid(fs, ino), cmd, in_buf, in_bufsz, out_bufsz);
	f2fs_caller_done(&who);
	return done;
}
