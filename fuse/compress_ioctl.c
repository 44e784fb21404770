// SPDX-License-Identifier: GPL-2.0
/*
 * The f2fs compression ioctls, with the kernel's numbers (f2fs_io
 * get_cblocks, release_cblocks, reserve_cblocks, compress, decompress).
 * FUSE forwards them as restricted ioctls: the u64 the first three
 * return travels in the reply.
 */
#include "f2fs_fuse.h"

#include <errno.h>
#include <linux/ioctl.h>

#define F2FS_IOCTL_MAGIC		0xf5
#define F2FS_IOC_GET_COMPRESS_BLOCKS	_IOR(F2FS_IOCTL_MAGIC, 17, uint64_t)
#define F2FS_IOC_RELEASE_COMPRESS_BLOCKS _IOR(F2FS_IOCTL_MAGIC, 18, uint64_t)
#define F2FS_IOC_RESERVE_COMPRESS_BLOCKS _IOR(F2FS_IOCTL_MAGIC, 19, uint64_t)
#define F2FS_IOC_DECOMPRESS_FILE	_IO(F2FS_IOCTL_MAGIC, 23)
#define F2FS_IOC_COMPRESS_FILE		_IO(F2FS_IOCTL_MAGIC, 24)

bool f2fs_fuse_compress_ioctl(fuse_req_t req, fuse_ino_t ino, unsigned int cmd, size_t out_bufsz)
{
	struct f2fs_fuse *fs = fuse_req_userdata(req);
	enum f2fs_compress_ioc op;
	uint64_t blocks;
	int err;

	switch (cmd) {
	case (unsigned int)F2FS_IOC_GET_COMPRESS_BLOCKS: op = F2FS_CIOC_GET_BLOCKS; break;
	case (unsigned int)F2FS_IOC_RELEASE_COMPRESS_BLOCKS: op = F2FS_CIOC_RELEASE; break;
	case (unsigned int)F2FS_IOC_RESERVE_COMPRESS_BLOCKS: op = F2FS_CIOC_RESERVE; break;
	case (unsigned int)F2FS_IOC_COMPRESS_FILE: op = F2FS_CIOC_COMPRESS; break;
	case (unsigned int)F2FS_IOC_DECOMPRESS_FILE: op = F2FS_CIOC_DECOMPRESS; break;
	default:
		return false;
	}
	if (op <= F2FS_CIOC_RESERVE && out_bufsz < sizeof(blocks)) {
		fuse_reply_err(req, EINVAL);
		return true;
	}
	if (op != F2FS_CIOC_GET_BLOCKS && fs->readonly) {
		fuse_reply_err(req, EROFS);
		return true;
	}
	err = f2fs_compress_ioctl(fs->sb, f2fs_fuse_nid(fs, ino), op, &blocks);
	if (err) {
		f2fs_fuse_reply_err(req, err);
		return true;
	}
	if (op != F2FS_CIOC_GET_BLOCKS)
		f2fs_fuse_inval_attrs(fs, ino);	/* i_blocks and ctime moved */
	if (op <= F2FS_CIOC_RESERVE)
		fuse_reply_ioctl(req, 0, &blocks, sizeof(blocks));
	else
		fuse_reply_ioctl(req, 0, NULL, 0);
	return true;
}
