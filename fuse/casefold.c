// SPDX-License-Identifier: GPL-2.0
/*
 * Casefolded directories and the kernel's FUSE dentry cache.
 *
 * The kernel caches FUSE names by their bytes: "FOO" and "foo" are two
 * dentries, and it would trust either for entry_timeout.  In a casefolded
 * directory one name reaches the entry of another spelling, so a create,
 * unlink or rename through one spelling changes what the others mean, and
 * nothing tells the kernel which spellings it holds.  So names in
 * casefolded directories are given with a zero entry timeout (each use asks
 * again; the native driver keeps no negative dentries there either), and
 * on a filesystem with the feature no absence is cached at all: a directory
 * may turn casefolded while empty, with absences of its old life cached.
 * Inode attributes keep their timeouts: a node id is one inode whatever
 * name reached it.
 */
#include "f2fs_fuse.h"

void f2fs_fuse_casefold_entry(struct f2fs_fuse *fs, fuse_ino_t parent,
			      struct fuse_entry_param *e)
{
	if (f2fs_dir_casefolded(fs->sb, f2fs_fuse_nid(fs, parent)))
		e->entry_timeout = 0;
}

bool f2fs_fuse_casefold_may_cache_absence(const struct f2fs_fuse *fs)
{
	return !f2fs_has_casefold(fs->sb);
}
