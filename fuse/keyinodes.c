// SPDX-License-Identifier: GPL-2.0
/*
 * Flushing what the kernel cached of the inodes it holds (inodes.c) that
 * use a key when the key comes or goes.  docs/keys.md has the design.
 */
#include "keyctl_internal.h"
#include "inodes.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct inval_name {
	fuse_ino_t dir;
	char *name;
	size_t len;
};

/* ------------------------------------------------------------ invalidation */

/*
 * What the kernel may have cached under a key's present state: the
 * inodes using the key (attributes, pages, cached listings) and the names
 * in those of them that are directories (plaintext names while the key is
 * there, no-key names while it is not).  Gathered before the change, sent
 * after it.
 */

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

void keyctl_collect(struct f2fs_keyctl *kc, const struct f2fs_keyctl_key_spec *spec,
		    struct inval *iv)
{
	struct f2fs_fuse *fs = kc->fs;
	fuse_ino_t *all;
	size_t n;

	memset(iv, 0, sizeof(*iv));
	if (!atomic_load(&kc->live) || !kc->se)
		return;
	all = f2fs_fuse_inodes_list(&fs->inodes, &n);
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

void keyctl_send_inval(struct f2fs_keyctl *kc, struct inval *iv)
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
