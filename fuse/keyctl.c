// SPDX-License-Identifier: GPL-2.0
/*
 * Keys and policies from userspace: -o key_file=, the F2FS_IOC_* ioctls
 * and the control socket.  The core does the cryptography; this file
 * decides who may do what, keeps raw keys out of swap and core dumps, and
 * makes the kernel drop what it cached under the old state of a key.
 */
#include "keyctl.h"
#include "keyctl_proto.h"
#include "fscrypt.h"		/* fscrypt_key_identifier, before adding a key */

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <openssl/crypto.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#define PROG "f2fs-fuse"

#ifndef _IOC_TYPE			/* macOS: IOCGROUP, the same bits */
#define _IOC_TYPE(nr) (((nr) >> 8) & 0xff)
#endif
#ifndef MSG_NOSIGNAL			/* macOS: SO_NOSIGPIPE on the socket instead */
#define MSG_NOSIGNAL 0
#endif

/* A raw key from key_file= or v1_key_file=, in its own locked, never-dumped page. */
struct locked_key {
	uint8_t *page;
	size_t len;
	char *path;
	int version;			/* 1: v1_key_file=, under desc */
	uint8_t desc[F2FS_KEYCTL_DESC_SIZE];
};

/* Users who added a v2 key: each may remove their own claim (v1 keys have none). */
struct claim {
	uint8_t id[F2FS_KEYCTL_ID_SIZE];
	uid_t *uids;
	size_t n;
};

struct known_ino {
	fuse_ino_t ino;
	uint64_t nlookup;
	struct known_ino *next;
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
	pthread_mutex_t lock;		/* claims and the inode table */
	struct claim *claims;
	size_t nclaims;
	struct known_ino **buckets;
	size_t nbuckets, ninos;

	/* socket */
	bool no_socket;
	bool allow_other, allow_root;
	char *sock_path;		/* from -o keyctl_socket=, else the default */
	bool sock_bound;
	int listen_fd;
	int stop_pipe[2];
	pthread_t thread;
	bool thread_running;
};

static void wipe(void *p, size_t len)
{
	OPENSSL_cleanse(p, len);
}

static bool all_zero(const void *p, size_t len)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < len; i++)
		if (b[i])
			return false;
	return true;
}

/* ------------------------------------------------------------ hygiene */

/* Once a key is in memory: no core dumps, no ptrace by the same user. */
static void harden(struct f2fs_keyctl *kc)
{
	struct rlimit rl = { 0, 0 };

	if (atomic_exchange(&kc->hardened, true))
		return;
	if (setrlimit(RLIMIT_CORE, &rl))
		f2fs_fuse_log(kc->fs, F2FS_LOG_WARN, "cannot disable core dumps: %s",
			      strerror(errno));
#ifdef __linux__
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0))
		f2fs_fuse_log(kc->fs, F2FS_LOG_WARN, "cannot clear the dumpable flag: %s",
			      strerror(errno));
#endif
}

static uint8_t *locked_page(void)
{
	long pg = sysconf(_SC_PAGESIZE);
	void *p = mmap(NULL, (size_t)pg, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);

	if (p == MAP_FAILED)
		return NULL;
	/* Best effort: an unprivileged RLIMIT_MEMLOCK may be tiny. */
	(void)mlock(p, (size_t)pg);
#ifdef MADV_DONTDUMP
	(void)madvise(p, (size_t)pg, MADV_DONTDUMP);
#endif
	return p;
}

static void free_locked_page(uint8_t *p)
{
	long pg = sysconf(_SC_PAGESIZE);

	if (!p)
		return;
	wipe(p, (size_t)pg);
	munlock(p, (size_t)pg);
	munmap(p, (size_t)pg);
}

/* ------------------------------------------------------------ setup */

int f2fs_keyctl_new(struct f2fs_fuse *fs)
{
	struct f2fs_keyctl *kc = calloc(1, sizeof(*kc));

	if (!kc)
		return -ENOMEM;
	kc->fs = fs;
	atomic_init(&kc->live, false);
	atomic_init(&kc->hardened, false);
	kc->listen_fd = -1;
	kc->stop_pipe[0] = kc->stop_pipe[1] = -1;
	kc->nbuckets = 256;
	kc->buckets = calloc(kc->nbuckets, sizeof(*kc->buckets));
	if (!kc->buckets) {
		free(kc);
		return -ENOMEM;
	}
	pthread_mutex_init(&kc->lock, NULL);
	pthread_mutex_init(&kc->change_lock, NULL);
	fs->keyctl = kc;
	return 0;
}

void f2fs_keyctl_free(struct f2fs_fuse *fs)
{
	struct f2fs_keyctl *kc = fs->keyctl;

	if (!kc)
		return;
	f2fs_keyctl_stop(fs);
	for (size_t i = 0; i < kc->npending; i++) {
		free_locked_page(kc->pending[i].page);
		free(kc->pending[i].path);
	}
	free(kc->pending);
	for (size_t i = 0; i < kc->nclaims; i++)
		free(kc->claims[i].uids);
	free(kc->claims);
	for (size_t b = 0; b < kc->nbuckets; b++) {
		for (struct known_ino *k = kc->buckets[b], *next; k; k = next) {
			next = k->next;
			free(k);
		}
	}
	free(kc->buckets);
	free(kc->sock_path);
	free(kc->mountpoint);
	pthread_mutex_destroy(&kc->lock);
	pthread_mutex_destroy(&kc->change_lock);
	free(kc);
	fs->keyctl = NULL;
}

/* opt names the option in messages: "key_file" or "v1_key_file". */
static int read_key_file(struct f2fs_fuse *fs, const char *opt, const char *path, int version,
			 const uint8_t *desc)
{
	struct f2fs_keyctl *kc = fs->keyctl;
	struct locked_key *arr, *lk;
	struct stat st;
	ssize_t n;
	size_t got = 0;
	int fd, err = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		fprintf(stderr, PROG ": %s %s: %s\n", opt, path, strerror(errno));
		return -1;
	}
	err = fstat(fd, &st) ? errno : S_ISDIR(st.st_mode) ? EISDIR : 0;
	if (err) {
		fprintf(stderr, PROG ": %s %s: %s\n", opt, path, strerror(err));
		close(fd);
		return -1;
	}
	arr = realloc(kc->pending, (kc->npending + 1) * sizeof(*arr));
	if (!arr) {
		close(fd);
		fprintf(stderr, PROG ": out of memory\n");
		return -1;
	}
	kc->pending = arr;
	lk = &arr[kc->npending];
	memset(lk, 0, sizeof(*lk));
	lk->page = locked_page();
	lk->path = strdup(path);
	if (!lk->page || !lk->path) {
		free_locked_page(lk->page);
		free(lk->path);
		close(fd);
		fprintf(stderr, PROG ": out of memory\n");
		return -1;
	}
	/* One byte more than the largest key tells "too long" from "just right". */
	while (got <= F2FS_KEYCTL_MAX_KEY) {
		n = read(fd, lk->page + got, F2FS_KEYCTL_MAX_KEY + 1 - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = errno;
			break;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	if (err) {
		fprintf(stderr, PROG ": %s %s: %s\n", opt, path, strerror(err));
	} else if (got < F2FS_KEYCTL_MIN_KEY || got > F2FS_KEYCTL_MAX_KEY) {
		fprintf(stderr, PROG ": %s %s: %s; a raw key has %d to %d bytes\n", opt, path,
			got > F2FS_KEYCTL_MAX_KEY ? "too long" : "too short",
			F2FS_KEYCTL_MIN_KEY, F2FS_KEYCTL_MAX_KEY);
		err = EINVAL;
	}
	if (err) {
		free_locked_page(lk->page);
		free(lk->path);
		return -1;
	}
	lk->len = got;
	lk->version = version;
	if (desc)
		memcpy(lk->desc, desc, sizeof(lk->desc));
	kc->npending++;
	harden(kc);
	return 0;
}

int f2fs_keyctl_opt_key_file(struct f2fs_fuse *fs, const char *path)
{
	return read_key_file(fs, "key_file", path, 2, NULL);
}

int f2fs_keyctl_opt_v1_key_file(struct f2fs_fuse *fs, const char *arg)
{
	uint8_t desc[F2FS_KEYCTL_DESC_SIZE];
	const char *path = f2fs_keyctl_split_v1_key_file(arg, desc);

	if (!path) {
		fprintf(stderr, PROG ": v1_key_file=%s: expected DESCRIPTOR:PATH, the descriptor "
			"being %d hex digits\n", arg, 2 * F2FS_KEYCTL_DESC_SIZE);
		return -1;
	}
	return read_key_file(fs, "v1_key_file", path, 1, desc);
}

int f2fs_keyctl_opt_socket(struct f2fs_fuse *fs, const char *path)
{
	struct f2fs_keyctl *kc = fs->keyctl;

	free(kc->sock_path);
	kc->sock_path = NULL;
	kc->no_socket = strcmp(path, "none") == 0;
	if (kc->no_socket)
		return 0;
	if (*path != '/' || strlen(path) >= sizeof(((struct sockaddr_un *)0)->sun_path)) {
		fprintf(stderr, PROG ": keyctl_socket=%s: need an absolute path of at most %zu "
			"bytes\n", path, sizeof(((struct sockaddr_un *)0)->sun_path) - 1);
		return -1;
	}
	kc->sock_path = strdup(path);
	return kc->sock_path ? 0 : -1;
}

void f2fs_keyctl_opt_allow_other(struct f2fs_fuse *fs, bool root_only)
{
	if (root_only)
		fs->keyctl->allow_root = true;
	else
		fs->keyctl->allow_other = true;
}

/* ------------------------------------------------------------ claims */

static struct claim *find_claim(struct f2fs_keyctl *kc, const uint8_t id[16])
{
	for (size_t i = 0; i < kc->nclaims; i++)
		if (!memcmp(kc->claims[i].id, id, F2FS_KEYCTL_ID_SIZE))
			return &kc->claims[i];
	return NULL;
}

static bool claim_has(const struct claim *c, uid_t uid)
{
	for (size_t i = 0; c && i < c->n; i++)
		if (c->uids[i] == uid)
			return true;
	return false;
}

static int add_claim(struct f2fs_keyctl *kc, const uint8_t id[16], uid_t uid)
{
	struct claim *c;
	uid_t *u;
	int err = 0;

	pthread_mutex_lock(&kc->lock);
	c = find_claim(kc, id);
	if (!c) {
		c = realloc(kc->claims, (kc->nclaims + 1) * sizeof(*c));
		if (!c) {
			err = -ENOMEM;
			goto out;
		}
		kc->claims = c;
		c = &c[kc->nclaims++];
		memset(c, 0, sizeof(*c));
		memcpy(c->id, id, F2FS_KEYCTL_ID_SIZE);
	}
	if (claim_has(c, uid))
		goto out;
	u = realloc(c->uids, (c->n + 1) * sizeof(*u));
	if (!u) {
		err = -ENOMEM;
		goto out;
	}
	c->uids = u;
	c->uids[c->n++] = uid;
out:
	pthread_mutex_unlock(&kc->lock);
	return err;
}

static void drop_claims(struct f2fs_keyctl *kc, const uint8_t id[16])
{
	struct claim *c;

	pthread_mutex_lock(&kc->lock);
	c = find_claim(kc, id);
	if (c) {
		free(c->uids);
		*c = kc->claims[--kc->nclaims];
	}
	pthread_mutex_unlock(&kc->lock);
}

/* ------------------------------------------------------------ known inodes */

static size_t ino_bucket(const struct f2fs_keyctl *kc, fuse_ino_t ino)
{
	return (size_t)((ino * 0x9e3779b97f4a7c15ull) >> 32) & (kc->nbuckets - 1);
}

static void grow_table(struct f2fs_keyctl *kc)
{
	size_t nb = kc->nbuckets * 2, old = kc->nbuckets;
	struct known_ino **nbk = calloc(nb, sizeof(*nbk)), **obk = kc->buckets;

	if (!nbk)
		return;		/* longer chains, still correct */
	kc->buckets = nbk;
	kc->nbuckets = nb;
	for (size_t b = 0; b < old; b++) {
		for (struct known_ino *k = obk[b], *next; k; k = next) {
			size_t h = ino_bucket(kc, k->ino);

			next = k->next;
			k->next = nbk[h];
			nbk[h] = k;
		}
	}
	free(obk);
}

/*
 * Counted from every entry reply, so entries prepared for a READDIRPLUS
 * buffer they did not fit in count too: an inode may stay listed after
 * the kernel forgot it, which costs one useless notification, never a
 * missed one.
 */
void f2fs_keyctl_lookup(struct f2fs_keyctl *kc, fuse_ino_t ino)
{
	struct known_ino *k;
	size_t h;

	if (!kc || ino == 0 || ino == FUSE_ROOT_ID)
		return;
	pthread_mutex_lock(&kc->lock);
	h = ino_bucket(kc, ino);
	for (k = kc->buckets[h]; k; k = k->next) {
		if (k->ino == ino) {
			k->nlookup++;
			goto out;
		}
	}
	k = malloc(sizeof(*k));
	if (k) {
		k->ino = ino;
		k->nlookup = 1;
		k->next = kc->buckets[h];
		kc->buckets[h] = k;
		if (++kc->ninos > kc->nbuckets * 2)
			grow_table(kc);
	}
out:
	pthread_mutex_unlock(&kc->lock);
}

void f2fs_keyctl_forget(struct f2fs_keyctl *kc, fuse_ino_t ino, uint64_t nlookup)
{
	struct known_ino **pp, *k;

	if (!kc || ino == FUSE_ROOT_ID)
		return;
	pthread_mutex_lock(&kc->lock);
	for (pp = &kc->buckets[ino_bucket(kc, ino)]; (k = *pp); pp = &k->next) {
		if (k->ino != ino)
			continue;
		if (k->nlookup > nlookup) {
			k->nlookup -= nlookup;
		} else {
			*pp = k->next;
			free(k);
			kc->ninos--;
		}
		break;
	}
	pthread_mutex_unlock(&kc->lock);
}

/* The root and every inode in the table, copied out. */
static fuse_ino_t *known_inos(struct f2fs_keyctl *kc, size_t *n)
{
	fuse_ino_t *arr;
	size_t i = 0;

	pthread_mutex_lock(&kc->lock);
	arr = malloc((kc->ninos + 1) * sizeof(*arr));
	if (arr) {
		arr[i++] = FUSE_ROOT_ID;
		for (size_t b = 0; b < kc->nbuckets; b++)
			for (struct known_ino *k = kc->buckets[b]; k; k = k->next)
				arr[i++] = k->ino;
	}
	pthread_mutex_unlock(&kc->lock);
	*n = i;
	return arr;
}

/* ------------------------------------------------------------ invalidation */

/*
 * What the kernel may have cached under a key's present state: the
 * inodes using the key (attributes, pages, cached listings) and the names
 * in those of them that are directories (plaintext names while the key is
 * there, no-key names while it is not).  Gathered before the change, sent
 * after it.
 */
struct inval {
	fuse_ino_t *inos;
	size_t ninos;
	struct inval_name {
		fuse_ino_t dir;
		char *name;
		size_t len;
	} *names;
	size_t nnames, cap;
	fuse_ino_t cur_dir;
	bool nomem;
};

static bool is_dot(const char *name, size_t len)
{
	return (len == 1 && name[0] == '.') || (len == 2 && name[0] == '.' && name[1] == '.');
}

static int collect_name(void *arg, const char *name, size_t len, uint32_t ino,
			unsigned int file_type, uint64_t next_off)
{
	struct inval *iv = arg;
	struct inval_name *nn;

	if (is_dot(name, len))
		return 0;
	if (iv->nnames == iv->cap) {
		size_t cap = iv->cap ? iv->cap * 2 : 64;

		nn = realloc(iv->names, cap * sizeof(*nn));
		if (!nn) {
			iv->nomem = true;
			return 1;
		}
		iv->names = nn;
		iv->cap = cap;
	}
	nn = &iv->names[iv->nnames];
	nn->name = malloc(len + 1);
	if (!nn->name) {
		iv->nomem = true;
		return 1;
	}
	memcpy(nn->name, name, len);
	nn->name[len] = '\0';
	nn->len = len;
	nn->dir = iv->cur_dir;
	iv->nnames++;
	return 0;
}

/* Does a policy use the key spec names? */
static bool policy_uses(const struct f2fs_policy *p, const struct f2fs_keyctl_key_spec *spec)
{
	if (spec->type == F2FS_KEYCTL_SPEC_DESCRIPTOR)
		return p->version == 1 && !memcmp(p->key_spec, spec->u, F2FS_KEYCTL_DESC_SIZE);
	return p->version == 2 && !memcmp(p->key_spec, spec->u, F2FS_KEYCTL_ID_SIZE);
}

static void collect(struct f2fs_keyctl *kc, const struct f2fs_keyctl_key_spec *spec,
		    struct inval *iv)
{
	struct f2fs_fuse *fs = kc->fs;
	fuse_ino_t *all;
	size_t n;

	memset(iv, 0, sizeof(*iv));
	if (!atomic_load(&kc->live) || !kc->se)
		return;
	all = known_inos(kc, &n);
	if (!all) {
		iv->nomem = true;
		return;
	}
	for (size_t i = 0; i < n; i++) {
		uint32_t nid = f2fs_fuse_nid(fs, all[i]);
		struct f2fs_policy p;
		struct f2fs_stat st;

		if (f2fs_get_policy(fs->sb, nid, &p) != 0 || !policy_uses(&p, spec))
			continue;
		all[iv->ninos++] = all[i];	/* in place: i >= ninos */
		if (f2fs_getattr(fs->sb, nid, &st) == 0 && S_ISDIR(st.mode)) {
			iv->cur_dir = all[i];
			f2fs_readdir(fs->sb, nid, 0, collect_name, iv);
		}
	}
	iv->inos = all;
}

static void send_inval(struct f2fs_keyctl *kc, struct inval *iv)
{
	if (iv->nomem)
		f2fs_fuse_log(kc->fs, F2FS_LOG_WARN, "out of memory: the kernel may show stale "
			      "names or contents of files under a changed key until remount");
	/* Names first: a dropped dentry takes its inode's cached state with it. */
	for (size_t i = 0; i < iv->nnames; i++) {
		fuse_lowlevel_notify_inval_entry(kc->se, iv->names[i].dir, iv->names[i].name,
						 iv->names[i].len);
		free(iv->names[i].name);
	}
	/* Then what is left: attributes, page cache, cached listings (off 0, len 0: all). */
	for (size_t i = 0; i < iv->ninos; i++)
		fuse_lowlevel_notify_inval_inode(kc->se, iv->inos[i], 0, 0);
	free(iv->names);
	free(iv->inos);
}

/* ------------------------------------------------------------ lookups */

/*
 * A name absent from an encrypted directory may appear when its key comes
 * or goes (plaintext and no-key names), and nothing then tells the kernel
 * to drop the negative dentry; so those are not cached.
 */
bool f2fs_keyctl_may_cache_absence(struct f2fs_fuse *fs, fuse_ino_t dir)
{
	struct f2fs_stat st;

	if (f2fs_getattr(fs->sb, f2fs_fuse_nid(fs, dir), &st))
		return false;
	return !(st.flags & 0x00000800);	/* FS_ENCRYPT_FL */
}

/* ------------------------------------------------------------ operations */

/*
 * A key spec as it arrived: a known type, reserved bytes zero (for a
 * descriptor, the bytes after it too).
 */
static bool valid_spec(const struct f2fs_keyctl_key_spec *spec)
{
	if (spec->reserved)
		return false;
	if (spec->type == F2FS_KEYCTL_SPEC_DESCRIPTOR)
		return all_zero(spec->u + F2FS_KEYCTL_DESC_SIZE,
				sizeof(spec->u) - F2FS_KEYCTL_DESC_SIZE);
	return spec->type == F2FS_KEYCTL_SPEC_IDENTIFIER;
}

/*
 * Who may add and remove v1 keys.  The kernel asks for CAP_SYS_ADMIN:
 * a descriptor proves nothing about the key, and a v1 key serves every
 * user of the file system, so anyone else could plant a wrong key or lock
 * other users out.  Here the mount's administrators are root and the user
 * running the daemon (who owns the image and the mount anyway).
 */
static bool may_manage_v1(uid_t uid)
{
	return uid == 0 || uid == geteuid();
}

static bool spec_present(struct f2fs_keyctl *kc, const struct f2fs_keyctl_key_spec *spec)
{
	if (spec->type == F2FS_KEYCTL_SPEC_DESCRIPTOR)
		return f2fs_key_present_v1(kc->fs->sb, spec->u);
	return f2fs_key_present(kc->fs->sb, spec->u);
}

static int do_add_key(struct f2fs_keyctl *kc, uid_t uid, struct f2fs_keyctl_add *a)
{
	struct f2fs_fuse *fs = kc->fs;
	struct f2fs_keyctl_key_spec spec = a->spec;
	struct inval iv;
	bool v1 = spec.type == F2FS_KEYCTL_SPEC_DESCRIPTOR;
	bool present;
	int err;

	if (!valid_spec(&spec) || a->raw_size < F2FS_KEYCTL_MIN_KEY ||
	    a->raw_size > F2FS_KEYCTL_MAX_KEY || a->reserved) {
		err = -EINVAL;
		goto wipe;
	}
	if (v1 && !may_manage_v1(uid)) {
		err = -EACCES;
		goto wipe;
	}
	harden(kc);
	pthread_mutex_lock(&kc->change_lock);
	if (!v1) {
		err = fscrypt_key_identifier(a->raw, a->raw_size, spec.u);
		if (err)
			goto out;
	}
	present = spec_present(kc, &spec);
	if (!present)
		collect(kc, &spec, &iv);
	if (v1) {
		err = f2fs_add_key_v1(fs->sb, spec.u, a->raw, a->raw_size);
	} else {
		err = f2fs_add_key(fs->sb, a->raw, a->raw_size, a->spec.u);
		if (!err)
			err = add_claim(kc, a->spec.u, uid);
	}
	if (!present)
		send_inval(kc, &iv);
out:
	pthread_mutex_unlock(&kc->change_lock);
wipe:
	wipe(a->raw, sizeof(a->raw));
	return err;
}

static int do_remove_key(struct f2fs_keyctl *kc, uid_t uid, struct f2fs_keyctl_remove *r)
{
	struct f2fs_fuse *fs = kc->fs;
	const struct f2fs_keyctl_key_spec *spec = &r->spec;
	bool all = (r->flags & F2FS_KEYCTL_REMOVE_ALL_USERS) != 0;
	bool v1 = spec->type == F2FS_KEYCTL_SPEC_DESCRIPTOR;
	bool others = false;
	struct inval iv;
	struct claim *c;
	int err = 0;

	if (!valid_spec(spec) || (r->flags & ~F2FS_KEYCTL_REMOVE_ALL_USERS))
		return -EINVAL;
	/* v1 keys have no claims: whoever may add them removes them, all users or not */
	if (v1 ? !may_manage_v1(uid) : all && uid != 0)
		return -EACCES;
	r->status_flags = 0;
	pthread_mutex_lock(&kc->change_lock);
	if (!spec_present(kc, spec)) {
		err = -ENOKEY;
		goto out;
	}
	if (!v1) {
		pthread_mutex_lock(&kc->lock);
		c = find_claim(kc, spec->u);
		if (claim_has(c, uid) && !all) {
			/* Drop this user's claim; the key goes with the last one. */
			for (size_t i = 0; i < c->n; i++) {
				if (c->uids[i] == uid) {
					c->uids[i] = c->uids[--c->n];
					break;
				}
			}
			others = c->n > 0;
		} else if (uid != 0) {
			err = -EACCES;		/* someone else's key */
		}
		pthread_mutex_unlock(&kc->lock);
		if (err)
			goto out;
		if (others) {
			r->status_flags |= F2FS_KEYCTL_REMOVAL_OTHER_USERS;
			goto out;
		}
	}
	collect(kc, spec, &iv);
	if (v1) {
		err = f2fs_remove_key_v1(fs->sb, spec->u);
	} else {
		err = f2fs_remove_key(fs->sb, spec->u);
		if (!err)
			drop_claims(kc, spec->u);
	}
	send_inval(kc, &iv);
out:
	pthread_mutex_unlock(&kc->change_lock);
	return err;
}

static int do_key_status(struct f2fs_keyctl *kc, uid_t uid, struct f2fs_keyctl_status *s)
{
	struct claim *c;

	if (!valid_spec(&s->spec))
		return -EINVAL;
	s->status = F2FS_KEYCTL_STATUS_ABSENT;
	s->status_flags = 0;
	s->user_count = 0;
	if (!spec_present(kc, &s->spec))
		return 0;
	s->status = F2FS_KEYCTL_STATUS_PRESENT;
	if (s->spec.type == F2FS_KEYCTL_SPEC_DESCRIPTOR)
		return 0;		/* no users, as in the kernel */
	pthread_mutex_lock(&kc->lock);
	c = find_claim(kc, s->spec.u);
	if (c) {
		s->user_count = (uint32_t)c->n;
		if (claim_has(c, uid))
			s->status_flags |= F2FS_KEYCTL_STATUS_FLAG_ADDED_BY_SELF;
	}
	pthread_mutex_unlock(&kc->lock);
	return 0;
}

static int do_get_policy(struct f2fs_keyctl *kc, uint32_t nid, struct f2fs_keyctl_policy *out)
{
	struct f2fs_policy p;
	int err = f2fs_get_policy(kc->fs->sb, nid, &p);

	if (err)
		return err;
	memset(out, 0, sizeof(*out));
	out->version = p.version;
	out->contents_mode = p.contents_mode;
	out->filenames_mode = p.filenames_mode;
	out->flags = p.flags;
	out->log2_data_unit_size = p.log2_data_unit_size;
	memcpy(out->key_spec, p.key_spec, sizeof(out->key_spec));
	return 0;
}

/* As the kernel: only the directory's owner (or root) may encrypt it. */
static int do_set_policy(struct f2fs_keyctl *kc, uid_t uid, uint32_t nid,
			 const struct f2fs_keyctl_policy *in)
{
	struct f2fs_fuse *fs = kc->fs;
	struct f2fs_policy p;
	struct f2fs_stat st;
	int err;

	if (in->reserved[0] || in->reserved[1] || in->reserved[2])
		return -EINVAL;
	/* a v1 context holds an 8-byte descriptor: no more may come in */
	if (in->version == 1 && !all_zero(in->key_spec + F2FS_KEYCTL_DESC_SIZE,
					  sizeof(in->key_spec) - F2FS_KEYCTL_DESC_SIZE))
		return -EINVAL;
	err = f2fs_getattr(fs->sb, nid, &st);
	if (err)
		return err;
	if (uid != 0 && uid != (fs->force_uid ? fs->uid : st.uid))
		return -EACCES;
	if (!S_ISDIR(st.mode))
		return -ENOTDIR;
	/* the kernel checks a read-only mount for every change but this one */
	if (atomic_load(&fs->vfs_readonly))
		return -EROFS;
	memset(&p, 0, sizeof(p));
	p.version = in->version;
	p.contents_mode = in->contents_mode;
	p.filenames_mode = in->filenames_mode;
	p.flags = in->flags;
	p.log2_data_unit_size = in->log2_data_unit_size;
	memcpy(p.key_spec, in->key_spec, sizeof(p.key_spec));
	return f2fs_set_policy(fs->sb, nid, &p);
}

/* ------------------------------------------------------------ mount */

int f2fs_keyctl_mount(struct f2fs_fuse *fs, struct fuse_session *se, const char *mountpoint)
{
	struct f2fs_keyctl *kc = fs->keyctl;
	uint8_t id[F2FS_KEYCTL_ID_SIZE];
	int rc = 0;

	kc->se = se;
	kc->mountpoint = strdup(mountpoint);
	if (!kc->mountpoint) {
		fprintf(stderr, PROG ": out of memory\n");
		return -1;
	}
	for (size_t i = 0; i < kc->npending; i++) {
		struct locked_key *lk = &kc->pending[i];
		bool v1 = lk->version == 1;
		int err = rc ? 0 : v1 ? f2fs_add_key_v1(fs->sb, lk->desc, lk->page, lk->len)
				      : f2fs_add_key(fs->sb, lk->page, lk->len, id);

		if (err) {
			fprintf(stderr, PROG ": %s %s: %s\n", v1 ? "v1_key_file" : "key_file",
				lk->path, err == -EEXIST && v1 ? "another key was given for the "
				"same descriptor" : strerror(-err));
			rc = -1;
		} else if (!rc && !v1 && add_claim(kc, id, getuid())) {
			rc = -1;
		}
		free_locked_page(lk->page);
		free(lk->path);
	}
	free(kc->pending);
	kc->pending = NULL;
	kc->npending = 0;
	return rc;
}

/* ------------------------------------------------------------ ioctl */

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

static bool uapi_ioctl(fuse_req_t req, struct f2fs_keyctl *kc, unsigned int cmd,
		       const void *in_buf, size_t in_bufsz, size_t out_bufsz)
{
	uid_t uid = fuse_req_ctx(req)->uid;
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
		if (!uapi_spec(&a.key_spec, &r.spec) || !all_zero(a.reserved, sizeof(a.reserved))) {
			fuse_reply_err(req, EINVAL);
			return true;
		}
		if (cmd == (unsigned int)UAPI_IOC_REMOVE_KEY_ALL_USERS)
			r.flags = F2FS_KEYCTL_REMOVE_ALL_USERS;
		err = do_remove_key(kc, uid, &r);
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
		if (!uapi_spec(&a.key_spec, &st.spec) || !all_zero(a.reserved, sizeof(a.reserved))) {
			fuse_reply_err(req, EINVAL);
			return true;
		}
		err = do_key_status(kc, uid, &st);
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

bool f2fs_keyctl_ioctl(fuse_req_t req, fuse_ino_t ino, unsigned int cmd, const void *in_buf,
		       size_t in_bufsz, size_t out_bufsz)
{
	struct f2fs_fuse *fs = fuse_req_userdata(req);
	struct f2fs_keyctl *kc = fs->keyctl;
	uid_t uid = fuse_req_ctx(req)->uid;
	uint32_t nid = f2fs_fuse_nid(fs, ino);
	int err;

	if (kc && _IOC_TYPE(cmd) == 'f' && uapi_ioctl(req, kc, cmd, in_buf, in_bufsz, out_bufsz))
		return true;
	if (_IOC_TYPE(cmd) != F2FS_KEYCTL_MAGIC)
		return false;
	if (!kc) {
		fuse_reply_err(req, ENOTTY);
		return true;
	}
	if (cmd == (unsigned int)F2FS_IOC_ADD_KEY) {
		struct f2fs_keyctl_add a;

		if (in_bufsz < sizeof(a) || out_bufsz < sizeof(a)) {
			fuse_reply_err(req, EINVAL);
			return true;
		}
		memcpy(&a, in_buf, sizeof(a));
		/* The request buffer is libfuse's own; leave no copy of the key in it. */
		wipe((void *)in_buf, in_bufsz);
		err = do_add_key(kc, uid, &a);
		reply_ioctl(req, err, &a, sizeof(a));
		wipe(&a, sizeof(a));
	} else if (cmd == (unsigned int)F2FS_IOC_REMOVE_KEY) {
		struct f2fs_keyctl_remove r;

		if (in_bufsz < sizeof(r) || out_bufsz < sizeof(r)) {
			fuse_reply_err(req, EINVAL);
			return true;
		}
		memcpy(&r, in_buf, sizeof(r));
		err = do_remove_key(kc, uid, &r);
		reply_ioctl(req, err, &r, sizeof(r));
	} else if (cmd == (unsigned int)F2FS_IOC_KEY_STATUS) {
		struct f2fs_keyctl_status s;

		if (in_bufsz < sizeof(s) || out_bufsz < sizeof(s)) {
			fuse_reply_err(req, EINVAL);
			return true;
		}
		memcpy(&s, in_buf, sizeof(s));
		err = do_key_status(kc, uid, &s);
		reply_ioctl(req, err, &s, sizeof(s));
	} else if (cmd == (unsigned int)F2FS_IOC_GET_POLICY) {
		struct f2fs_keyctl_policy p;

		if (out_bufsz < sizeof(p)) {
			fuse_reply_err(req, EINVAL);
			return true;
		}
		err = do_get_policy(kc, nid, &p);
		reply_ioctl(req, err, &p, sizeof(p));
	} else if (cmd == (unsigned int)F2FS_IOC_SET_POLICY) {
		struct f2fs_keyctl_policy p;

		if (in_bufsz < sizeof(p)) {
			fuse_reply_err(req, EINVAL);
			return true;
		}
		memcpy(&p, in_buf, sizeof(p));
		err = do_set_policy(kc, uid, nid, &p);
		reply_ioctl(req, err, NULL, 0);
	} else {
		fuse_reply_err(req, ENOTTY);
	}
	return true;
}

/* ------------------------------------------------------------ socket */

static int peer_uid(int fd, uid_t *uid)
{
#ifdef SO_PEERCRED
	struct ucred cr;
	socklen_t len = sizeof(cr);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len) || len != sizeof(cr))
		return -errno;
	*uid = cr.uid;
	return 0;
#else
	gid_t gid;

	if (getpeereid(fd, uid, &gid))
		return -errno;
	return 0;
#endif
}

/* Who may talk to the socket: what the kernel lets reach the mount. */
static bool peer_allowed(const struct f2fs_keyctl *kc, uid_t uid)
{
	return kc->allow_other || uid == 0 || uid == geteuid();
}

static int io_full(int fd, void *buf, size_t len, bool wr)
{
	uint8_t *p = buf;

	while (len) {
		ssize_t n = wr ? send(fd, p, len, MSG_NOSIGNAL) : recv(fd, p, len, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -ECONNRESET;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

static void serve_one(struct f2fs_keyctl *kc, int fd)
{
	struct timeval tv = { .tv_sec = 5 };
	struct f2fs_keyctl_msg m;
	uid_t uid = (uid_t)-1;
	int err;

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
#ifdef SO_NOSIGPIPE
	setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &(int){ 1 }, sizeof(int));
#endif
	if (peer_uid(fd, &uid))
		return;
	if (io_full(fd, &m, sizeof(m), false))
		goto out;
	if (m.magic != F2FS_KEYCTL_MSG_MAGIC || m.version != F2FS_KEYCTL_MSG_VERSION) {
		err = -EPROTO;
	} else if (!peer_allowed(kc, uid)) {
		err = -EACCES;
	} else if (m.ino > UINT32_MAX) {
		err = -EINVAL;
	} else {
		switch (m.op) {
		case F2FS_KEYCTL_OP_ADD_KEY:
			err = do_add_key(kc, uid, &m.u.add);
			break;
		case F2FS_KEYCTL_OP_REMOVE_KEY:
			err = do_remove_key(kc, uid, &m.u.remove);
			break;
		case F2FS_KEYCTL_OP_KEY_STATUS:
			err = do_key_status(kc, uid, &m.u.status);
			break;
		case F2FS_KEYCTL_OP_GET_POLICY:
			err = do_get_policy(kc, (uint32_t)m.ino, &m.u.policy);
			break;
		case F2FS_KEYCTL_OP_SET_POLICY:
			err = do_set_policy(kc, uid, (uint32_t)m.ino, &m.u.policy);
			break;
		default:
			err = -EOPNOTSUPP;
			break;
		}
	}
	if (m.op == F2FS_KEYCTL_OP_ADD_KEY)
		wipe(m.u.add.raw, sizeof(m.u.add.raw));
	m.error = -err;
	io_full(fd, &m, sizeof(m), true);
out:
	wipe(&m, sizeof(m));
}

static void *sock_main(void *arg)
{
	struct f2fs_keyctl *kc = arg;
	struct pollfd pf[2] = {
		{ .fd = kc->listen_fd, .events = POLLIN },
		{ .fd = kc->stop_pipe[0], .events = POLLIN },
	};

	for (;;) {
		int fd;

		if (poll(pf, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (pf[1].revents)
			break;
		if (!(pf[0].revents & POLLIN))
			continue;
		fd = accept(kc->listen_fd, NULL, NULL);
		if (fd < 0)
			continue;
		fcntl(fd, F_SETFD, FD_CLOEXEC);
		serve_one(kc, fd);
		close(fd);
	}
	return NULL;
}

/* mkdir -p of one level, then insist it is ours and private enough. */
static int make_sock_dir(const char *dir, mode_t mode)
{
	struct stat st;

	if (mkdir(dir, mode) && errno != EEXIST)
		return -errno;
	if (lstat(dir, &st))
		return -errno;
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & 022))
		return -EPERM;
	return 0;
}

static int default_sock_path(struct f2fs_keyctl *kc, char *out, size_t len)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	char dir[sizeof(((struct sockaddr_un *)0)->sun_path)];
	uint64_t h = f2fs_keyctl_path_hash(kc->mountpoint);
	int err, n;

	if (geteuid() == 0) {
		n = snprintf(dir, sizeof(dir), "%s", F2FS_KEYCTL_RUN_DIR);
		err = make_sock_dir(dir, 0755);
	} else if (xdg && *xdg == '/') {
		n = snprintf(dir, sizeof(dir), "%s/f2fs-fuse", xdg);
		err = (size_t)n < sizeof(dir) ? make_sock_dir(dir, 0700) : -ENAMETOOLONG;
	} else {
		n = snprintf(dir, sizeof(dir), "/tmp/f2fs-fuse-%lu", (unsigned long)geteuid());
		err = make_sock_dir(dir, 0700);
	}
	if (err)
		return err;
	n = snprintf(out, len, "%s/%016llx.sock", dir, (unsigned long long)h);
	return n > 0 && (size_t)n < len ? 0 : -ENAMETOOLONG;
}

void f2fs_keyctl_start(struct f2fs_fuse *fs)
{
	struct f2fs_keyctl *kc = fs->keyctl;
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	sigset_t all, old;
	struct stat st;
	int fd = -1, err;

	if (!kc)
		return;
	atomic_store(&kc->live, true);
	if (kc->no_socket || !kc->mountpoint)
		return;
	if (kc->sock_path) {
		snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", kc->sock_path);
	} else {
		err = default_sock_path(kc, sa.sun_path, sizeof(sa.sun_path));
		if (err) {
			f2fs_fuse_log(fs, F2FS_LOG_WARN, "no key control socket: %s",
				      strerror(-err));
			return;
		}
		kc->sock_path = strdup(sa.sun_path);
		if (!kc->sock_path)
			return;
	}
	fd = socket(AF_UNIX, SOCK_STREAM, 0);
	if (fd < 0)
		goto fail;
	fcntl(fd, F_SETFD, FD_CLOEXEC);
	/* A socket left by a daemon that died is replaced; a live one is not. */
	if (lstat(sa.sun_path, &st) == 0 && S_ISSOCK(st.st_mode)) {
		int probe = socket(AF_UNIX, SOCK_STREAM, 0);

		if (probe >= 0 && connect(probe, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
			close(probe);
			errno = EADDRINUSE;
			goto fail;
		}
		if (probe >= 0)
			close(probe);
		unlink(sa.sun_path);
	}
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)))
		goto fail;
	kc->sock_bound = true;
	/* Access is decided per request by the peer's uid. */
	if (chmod(sa.sun_path, kc->allow_other ? 0666 : 0600) || listen(fd, 8))
		goto fail;
	if (pipe(kc->stop_pipe))
		goto fail;
	kc->listen_fd = fd;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&kc->thread, NULL, sock_main, kc);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		errno = err;
		kc->listen_fd = -1;
		goto fail;
	}
	kc->thread_running = true;
	return;
fail:
	f2fs_fuse_log(fs, F2FS_LOG_WARN, "no key control socket at %s: %s", sa.sun_path,
		      strerror(errno));
	if (fd >= 0)
		close(fd);
	if (kc->sock_bound)
		unlink(sa.sun_path);
	kc->sock_bound = false;
	for (int i = 0; i < 2; i++) {
		if (kc->stop_pipe[i] >= 0)
			close(kc->stop_pipe[i]);
		kc->stop_pipe[i] = -1;
	}
}

void f2fs_keyctl_stop(struct f2fs_fuse *fs)
{
	struct f2fs_keyctl *kc = fs->keyctl;

	if (!kc)
		return;
	atomic_store(&kc->live, false);
	if (kc->thread_running) {
		(void)!write(kc->stop_pipe[1], "x", 1);
		pthread_join(kc->thread, NULL);
		kc->thread_running = false;
		close(kc->listen_fd);
		kc->listen_fd = -1;
		for (int i = 0; i < 2; i++) {
			close(kc->stop_pipe[i]);
			kc->stop_pipe[i] = -1;
		}
	}
	if (kc->sock_bound && kc->sock_path) {
		unlink(kc->sock_path);
		kc->sock_bound = false;
	}
}
