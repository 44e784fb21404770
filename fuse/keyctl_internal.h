/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shared by the key control files: keyctl.c (keys, claims, quotas,
 * policies), keyinodes.c (inodes the kernel holds, cache invalidation),
 * keyioctl.c (the ioctls) and keysock.c (the control socket).
 */
#ifndef F2FS_FUSE_KEYCTL_INTERNAL_H
#define F2FS_FUSE_KEYCTL_INTERNAL_H

#include "caller.h"
#include "keyctl.h"
#include "keyctl_proto.h"


#define PROG "f2fs-fuse"

struct locked_key;
struct claim;
struct quota;
struct keysock;

/* The kernel's key quota (/proc/sys/kernel/keys), per user. */
struct key_limits {
	uint32_t maxkeys, maxbytes;		/* everyone but root */
	uint32_t root_maxkeys, root_maxbytes;
};

struct f2fs_keyctl {
	struct f2fs_fuse *fs;
	struct fuse_session *se;
	char *mountpoint;
	atomic_bool live;		/* FUSE_INIT done: the kernel may hold inodes */
	atomic_bool hardened;

	struct locked_key *pending;	/* key_file= keys until the mount */
	size_t npending;

	pthread_mutex_t change_lock;	/* one key change (with its invalidation) at a time */
	pthread_mutex_t lock;		/* claims and quotas */
	struct claim *claims;		/* sorted by key identifier */
	size_t nclaims, claims_cap;
	struct quota *quotas;		/* sorted by uid */
	size_t nquotas, quotas_cap;
	struct key_limits limits;

	/* the control socket: options, then the server (keysock.c) */
	bool no_socket;
	bool allow_other, allow_root;
	char *sock_path;		/* from -o keyctl_socket=, else the default */
	bool sock_asked;		/* -o keyctl_socket=PATH: no socket is an error */
	struct keysock *sock;
};

static inline void keyctl_wipe(void *p, size_t len)
{
	f2fs_wipe(p, len);
}

static inline bool keyctl_all_zero(const void *p, size_t len)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < len; i++)
		if (b[i])
			return false;
	return true;
}

/* keyctl.c: the operations, each -errno; the caller as the kernel's current_cred(). */
int keyctl_add_key(struct f2fs_keyctl *kc, struct f2fs_caller *who, struct f2fs_keyctl_add *a);
int keyctl_remove_key(struct f2fs_keyctl *kc, struct f2fs_caller *who,
		      struct f2fs_keyctl_remove *r);
int keyctl_key_status(struct f2fs_keyctl *kc, struct f2fs_caller *who,
		      struct f2fs_keyctl_status *s);
int keyctl_get_policy(struct f2fs_keyctl *kc, uint32_t nid, struct f2fs_keyctl_policy *out);
int keyctl_set_policy(struct f2fs_keyctl *kc, struct f2fs_caller *who, uint32_t nid,
		      const struct f2fs_keyctl_policy *in);

/*
 * keyclaims.c: the users holding a claim on each v2 key, and their key
 * quota.  Each takes kc->lock; key changes hold kc->change_lock around
 * checking and taking a claim.
 */
void keyctl_read_limits(struct f2fs_keyctl *kc);
/* 0 if uid holds a claim on id or may take one; -EDQUOT past its quota. */
int keyctl_claim_allowed(struct f2fs_keyctl *kc, const uint8_t *id, uid_t uid);
/* Take a claim (nothing if held), charged whatever the limits; -ENOMEM. */
int keyctl_claim(struct f2fs_keyctl *kc, const uint8_t *id, uid_t uid);
/* Does uid hold a claim on id; users: how many do. */
bool keyctl_claim_held(struct f2fs_keyctl *kc, const uint8_t *id, uid_t uid, uint32_t *users);
/* Drop uid's claim; left: how many remain.  -ENOENT if uid held none. */
int keyctl_unclaim(struct f2fs_keyctl *kc, const uint8_t *id, uid_t uid, size_t *left);
void keyctl_unclaim_all(struct f2fs_keyctl *kc, const uint8_t *id);
void keyctl_free_claims(struct f2fs_keyctl *kc);

/*
 * keyinodes.c: what the kernel may have cached under a key's present
 * state, gathered before a change (collect) and flushed after it
 * (send_inval, which also frees it).
 */
struct inval {
	fuse_ino_t *inos;
	size_t ninos;
	struct inval_name *names;
	size_t nnames, cap;
	fuse_ino_t cur_dir;
	bool nomem;
};
void keyctl_collect(struct f2fs_keyctl *kc, const struct f2fs_keyctl_key_spec *spec,
		    struct inval *iv);
void keyctl_send_inval(struct f2fs_keyctl *kc, struct inval *iv);

/*
 * keysock.c: bind before the fork (-1 after a message if a socket asked
 * for cannot be made), serve from init, stop (idempotent), free.
 */
int keysock_listen(struct f2fs_keyctl *kc);
void keysock_start(struct f2fs_keyctl *kc);
void keysock_stop(struct f2fs_keyctl *kc);
void keysock_free(struct f2fs_keyctl *kc);
/*
 * One request of the control socket, as it arrived (any bytes), carried
 * out as `who`: the reply is m with error and the out fields filled in,
 * and an added key's raw bytes wiped.  file() gives the inode of a policy
 * request's descriptor (the socket's: the peer's open file on this mount);
 * tests/fuzz/fuzz_keyctl.c drives it without a socket.
 */
typedef int (*keysock_file_fn)(void *arg, int32_t fd, uint32_t *nid);
void keysock_handle_msg(struct f2fs_keyctl *kc, struct f2fs_caller *who,
			struct f2fs_keyctl_msg *m, keysock_file_fn file, void *arg);

#endif /* F2FS_FUSE_KEYCTL_INTERNAL_H */
