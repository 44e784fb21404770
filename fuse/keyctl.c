// SPDX-License-Identifier: GPL-2.0
/*
 * Keys and policies from userspace: -o key_file=, and the operations the
 * ioctls (keyioctl.c) and the control socket (keysock.c) ask for.  The
 * core does the cryptography; this file decides who may do what, as the
 * kernel's fscrypt does with the caller's credentials, keeps raw keys out
 * of swap and core dumps, and has the kernel drop what it cached under
 * the old state of a key (keyinodes.c).
 */
#include "keyctl_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

/* A raw key from key_file= or v1_key_file=, in its own locked, never-dumped page. */
struct locked_key {
	uint8_t *page;
	size_t len;
	char *path;
	int version;			/* 1: v1_key_file=, under desc */
	uint8_t desc[F2FS_KEYCTL_DESC_SIZE];
};

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
	keyctl_wipe(p, (size_t)pg);
	munlock(p, (size_t)pg);
	munmap(p, (size_t)pg);
}

void f2fs_keyctl_daemonized(struct f2fs_fuse *fs)
{
	struct f2fs_keyctl *kc = fs->keyctl;
	int err;

	/* fork() kept the key memory (with arenas for keys to come) but not its locks */
	if (!kc)
		return;
	err = f2fs_lock_key_memory(fs->sb);
	if (err)
		f2fs_fuse_log(fs, F2FS_LOG_WARN, "key memory is not locked, it may be swapped "
			      "out: %s (see RLIMIT_MEMLOCK)", strerror(-err));
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
	keyctl_read_limits(kc);
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
	keysock_free(kc);
	for (size_t i = 0; i < kc->npending; i++) {
		free_locked_page(kc->pending[i].page);
		free(kc->pending[i].path);
	}
	free(kc->pending);
	keyctl_free_claims(kc);
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
	kc->sock_asked = false;
	kc->no_socket = strcmp(path, "none") == 0;
	if (kc->no_socket)
		return 0;
	if (*path != '/' || strlen(path) >= sizeof(((struct sockaddr_un *)0)->sun_path)) {
		fprintf(stderr, PROG ": keyctl_socket=%s: need an absolute path of at most %zu "
			"bytes\n", path, sizeof(((struct sockaddr_un *)0)->sun_path) - 1);
		return -1;
	}
	kc->sock_path = strdup(path);
	kc->sock_asked = true;
	return kc->sock_path ? 0 : -1;
}

void f2fs_keyctl_opt_allow_other(struct f2fs_fuse *fs, bool root_only)
{
	if (root_only)
		fs->keyctl->allow_root = true;
	else
		fs->keyctl->allow_other = true;
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
		return keyctl_all_zero(spec->u + F2FS_KEYCTL_DESC_SIZE,
				       sizeof(spec->u) - F2FS_KEYCTL_DESC_SIZE);
	return spec->type == F2FS_KEYCTL_SPEC_IDENTIFIER;
}

/*
 * Who may add and remove v1 keys.  The kernel asks for CAP_SYS_ADMIN:
 * a descriptor proves nothing about the key, and a v1 key serves every
 * user of the file system, so anyone else could plant a wrong key or lock
 * other users out.  The user running the daemon owns the image and the
 * mount anyway, and counts as their administrator too.
 */
static bool may_manage_v1(struct f2fs_caller *who)
{
	return who->uid == geteuid() || f2fs_caller_capable(who, F2FS_CAP_SYS_ADMIN);
}

static bool spec_present(struct f2fs_keyctl *kc, const struct f2fs_keyctl_key_spec *spec)
{
	if (spec->type == F2FS_KEYCTL_SPEC_DESCRIPTOR)
		return f2fs_key_present_v1(kc->fs->sb, spec->u);
	return f2fs_key_present(kc->fs->sb, spec->u);
}

/*
 * FS_IOC_ADD_ENCRYPTION_KEY: anyone may add a v2 key, and takes a claim on
 * it charged to their key quota (-EDQUOT past it, as the kernel's key_alloc).
 */
int keyctl_add_key(struct f2fs_keyctl *kc, struct f2fs_caller *who, struct f2fs_keyctl_add *a)
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
	if (v1 && !may_manage_v1(who)) {
		err = -EACCES;
		goto wipe;
	}
	harden(kc);
	pthread_mutex_lock(&kc->change_lock);
	if (!v1) {
		err = f2fs_key_identifier(a->raw, a->raw_size, spec.u);
		if (!err)
			err = keyctl_claim_allowed(kc, spec.u, who->uid);
		if (err)
			goto out;
	}
	present = spec_present(kc, &spec);
	if (!present)
		keyctl_collect(kc, &spec, &iv);
	if (v1) {
		err = f2fs_add_key_v1(fs->sb, spec.u, a->raw, a->raw_size);
	} else {
		err = f2fs_add_key(fs->sb, a->raw, a->raw_size, a->spec.u);
		if (!err)
			err = keyctl_claim(kc, a->spec.u, who->uid);
		if (err && !present)
			f2fs_remove_key(fs->sb, spec.u);
	}
	if (!present)
		keyctl_send_inval(kc, &iv);
out:
	pthread_mutex_unlock(&kc->change_lock);
wipe:
	keyctl_wipe(a->raw, sizeof(a->raw));
	return err;
}

/*
 * FS_IOC_REMOVE_ENCRYPTION_KEY: a user drops their own claim, and the key
 * goes with the last one; removing every claim (or a key one holds no
 * claim on) takes CAP_SYS_ADMIN.
 */
int keyctl_remove_key(struct f2fs_keyctl *kc, struct f2fs_caller *who,
		      struct f2fs_keyctl_remove *r)
{
	struct f2fs_fuse *fs = kc->fs;
	const struct f2fs_keyctl_key_spec *spec = &r->spec;
	bool all = (r->flags & F2FS_KEYCTL_REMOVE_ALL_USERS) != 0;
	bool v1 = spec->type == F2FS_KEYCTL_SPEC_DESCRIPTOR;
	struct inval iv;
	size_t left;
	int err = 0;

	if (!valid_spec(spec) || (r->flags & ~F2FS_KEYCTL_REMOVE_ALL_USERS))
		return -EINVAL;
	/* v1 keys have no claims: whoever may add them removes them, all users or not */
	if (v1 ? !may_manage_v1(who) : all && !f2fs_caller_capable(who, F2FS_CAP_SYS_ADMIN))
		return -EACCES;
	r->status_flags = 0;
	pthread_mutex_lock(&kc->change_lock);
	if (!spec_present(kc, spec)) {
		err = -ENOKEY;
		goto out;
	}
	if (!v1 && !all) {
		if (keyctl_unclaim(kc, spec->u, who->uid, &left) == 0) {
			if (left) {
				r->status_flags |= F2FS_KEYCTL_REMOVAL_OTHER_USERS;
				goto out;
			}
		} else if (!f2fs_caller_capable(who, F2FS_CAP_SYS_ADMIN)) {
			err = -EACCES;		/* someone else's key */
			goto out;
		}
	}
	/* no plaintext page outlives its key: dirty data is written (encrypted) first */
	err = f2fs_sync_data(fs->sb);
	if (err)
		goto out;
	keyctl_collect(kc, spec, &iv);
	if (v1) {
		err = f2fs_remove_key_v1(fs->sb, spec->u);
	} else {
		err = f2fs_remove_key(fs->sb, spec->u);
		if (!err)
			keyctl_unclaim_all(kc, spec->u);
	}
	keyctl_send_inval(kc, &iv);
out:
	pthread_mutex_unlock(&kc->change_lock);
	return err;
}

int keyctl_key_status(struct f2fs_keyctl *kc, struct f2fs_caller *who,
		      struct f2fs_keyctl_status *s)
{
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
	if (keyctl_claim_held(kc, s->spec.u, who->uid, &s->user_count))
		s->status_flags |= F2FS_KEYCTL_STATUS_FLAG_ADDED_BY_SELF;
	return 0;
}

int keyctl_get_policy(struct f2fs_keyctl *kc, uint32_t nid, struct f2fs_keyctl_policy *out)
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

/*
 * FS_IOC_SET_ENCRYPTION_POLICY: the directory's owner or CAP_FOWNER
 * (-EACCES), on a writable mount; a v2 policy's key must have been added
 * by the caller (fscrypt_verify_key_added: -ENOKEY unless CAP_FOWNER), or
 * anyone holding the key could lock it onto their directories.  Setting
 * the policy a directory already has needs no key of one's own.
 */
int keyctl_set_policy(struct f2fs_keyctl *kc, struct f2fs_caller *who, uint32_t nid,
		      const struct f2fs_keyctl_policy *in)
{
	struct f2fs_fuse *fs = kc->fs;
	struct f2fs_policy p, cur;
	struct f2fs_stat st;
	int err;

	if (in->reserved[0] || in->reserved[1] || in->reserved[2])
		return -EINVAL;
	/* a v1 context holds an 8-byte descriptor: no more may come in */
	if (in->version == 1 && !keyctl_all_zero(in->key_spec + F2FS_KEYCTL_DESC_SIZE,
						 sizeof(in->key_spec) - F2FS_KEYCTL_DESC_SIZE))
		return -EINVAL;
	err = f2fs_getattr(fs->sb, nid, &st);
	if (err)
		return err;
	if (!f2fs_caller_owns(who, fs, &st))
		return -EACCES;
	/* the kernel's mount is checked for every change but this one */
	if (fs->readonly || atomic_load(&fs->vfs_readonly))
		return -EROFS;
	if (!S_ISDIR(st.mode))
		return -ENOTDIR;
	if (in->version == 2 && !keyctl_claim_held(kc, in->key_spec, who->uid, NULL) &&
	    !f2fs_caller_capable(who, F2FS_CAP_FOWNER) &&
	    f2fs_get_policy(fs->sb, nid, &cur) == -ENODATA)
		return -ENOKEY;
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
		} else if (!rc && !v1 && keyctl_claim(kc, id, getuid())) {
			/* the mounting user's, charged but never refused */
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

int f2fs_keyctl_listen(struct f2fs_fuse *fs)
{
	return fs->keyctl ? keysock_listen(fs->keyctl) : 0;
}

void f2fs_keyctl_start(struct f2fs_fuse *fs)
{
	struct f2fs_keyctl *kc = fs->keyctl;

	if (!kc)
		return;
	atomic_store(&kc->live, true);
	keysock_start(kc);
}

void f2fs_keyctl_stop(struct f2fs_fuse *fs)
{
	struct f2fs_keyctl *kc = fs->keyctl;

	if (!kc)
		return;
	atomic_store(&kc->live, false);
	keysock_stop(kc);
}
