// SPDX-License-Identifier: GPL-2.0
/*
 * Extent precache: F2FS_IOC_PRECACHE_EXTENTS, -o precache_extents at open,
 * and the cache drop that cold measurements need.
 */
#include "f2fs_fuse.h"
#include "cachectl.h"
#include "caller.h"

#include <errno.h>
#include <unistd.h>

/*
 * Dropping caches costs only time, but another user's reads would pay it:
 * the mount's owner (the daemon's user) or CAP_SYS_ADMIN, as for the
 * kernel's drop_caches.
 */
static int drop_caches(fuse_req_t req)
{
	struct f2fs_fuse *fs = fuse_req_userdata(req);
	struct f2fs_caller who;
	bool may;

	f2fs_caller_from_req(&who, req);
	may = who.uid == geteuid() || f2fs_caller_capable(&who, F2FS_CAP_SYS_ADMIN);
	f2fs_caller_done(&who);
	if (!may)
		return -EPERM;
	f2fs_drop_caches(fs->sb);
	return 0;
}

bool f2fs_fuse_cache_ioctl(fuse_req_t req, fuse_ino_t ino, unsigned int cmd)
{
	struct f2fs_fuse *fs = fuse_req_userdata(req);
	int err;

	if (cmd == (unsigned int)F2FS_IOC_PRECACHE_EXTENTS)
		err = f2fs_precache_extents(fs->sb, f2fs_fuse_nid(fs, ino));
	else if (cmd == (unsigned int)F2FS_FUSE_IOC_DROP_CACHES)
		err = drop_caches(req);
	else
		return false;
	if (err)
		f2fs_fuse_reply_err(req, err);
	else
		fuse_reply_ioctl(req, 0, NULL, 0);
	return true;
}

/*
 * -o precache_extents[=N]: a regular file with more than N direct nodes is
 * precached when it is opened, as the kernel's f2fs precaches at open for
 * files it expects to be read whole.  Advice: failures are left to the
 * reads that follow.
 */
void f2fs_fuse_precache_on_open(struct f2fs_fuse *fs, fuse_ino_t ino)
{
	uint32_t nid = f2fs_fuse_nid(fs, ino);
	uint64_t nodes;

	if (!fs->precache_open)
		return;
	if (f2fs_node_blocks_estimate(fs->sb, nid, &nodes) == 0 && nodes > fs->precache_min_nodes)
		f2fs_precache_extents(fs->sb, nid);
}
