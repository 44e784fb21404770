// SPDX-License-Identifier: GPL-2.0
/*
 * The fs-verity ioctls (FS_IOC_ENABLE_VERITY, FS_IOC_MEASURE_VERITY,
 * FS_IOC_READ_VERITY_METADATA) with the checks fsverity_ioctl_enable makes
 * with the caller's credentials.  FUSE passes the first two as restricted
 * ioctls with their variable parts: the salt and signature follow the
 * enable argument in the request, and the measure reply has room for the
 * digest size the caller offered.  The third names its buffer by a pointer.
 */
#include "f2fs_fuse.h"
#include "caller.h"
#include "ops.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <linux/fsverity.h>

#define F2FS_CAP_DAC_OVERRIDE	1

/* file_permission(MAY_WRITE) by the mode bits as shown (ACLs aside). */
static bool may_write(fuse_req_t req, struct f2fs_fuse *fs, struct f2fs_caller *who,
		      const struct f2fs_stat *st)
{
	uint32_t uid = fs->force_uid ? fs->uid : st->uid;
	uint32_t gid = fs->force_gid ? fs->gid : st->gid;
	uint32_t mode = st->mode & ~fs->umask;
	struct f2fs_fuse_cred rc;
	bool in_group;

	if (f2fs_caller_capable(who, F2FS_CAP_DAC_OVERRIDE))
		return true;
	if (who->uid == uid)
		return mode & S_IWUSR;
	f2fs_fuse_get_cred(req, S_ISGID, &rc);
	in_group = f2fs_cred_in_group(&rc.cred, gid);
	f2fs_fuse_put_cred(&rc);
	return in_group ? (mode & S_IWGRP) : (mode & S_IWOTH);
}

static int enable(fuse_req_t req, struct f2fs_fuse *fs, uint32_t nid, struct fuse_file_info *fi,
		  const void *in_buf, size_t in_bufsz)
{
	struct fsverity_enable_arg arg;
	struct f2fs_verity_enable a = { 0 };
	struct f2fs_caller who;
	struct f2fs_stat st;
	const uint8_t *extra = (const uint8_t *)in_buf + sizeof(arg);
	int err;

	if (in_bufsz < sizeof(arg))
		return -EINVAL;
	memcpy(&arg, in_buf, sizeof(arg));
	if (arg.version != 1 || arg.__reserved1 ||
	    memcmp(arg.__reserved2, (const uint64_t[11]){ 0 }, sizeof(arg.__reserved2)))
		return -EINVAL;
	if (arg.salt_size > 32 || arg.sig_size > 16384 - 256)
		return -EMSGSIZE;
	/* the salt and then the signature, as the kernel appended them */
	if ((uint64_t)arg.salt_size + arg.sig_size != in_bufsz - sizeof(arg))
		return -EFAULT;
	if (fs->readonly || atomic_load(&fs->vfs_readonly))
		return -EROFS;
	err = f2fs_getattr(fs->sb, nid, &st);
	if (err)
		return err;
	f2fs_caller_from_req(&who, req);
	if (!may_write(req, fs, &who, &st))
		err = -EACCES;
	f2fs_caller_done(&who);
	if (err)
		return err;
	/* the handle holds the open's flags (ops.c): read-only, as the kernel
	 * wants it (its deny_write_access fails for the caller's own writable
	 * handle; other writers' handles write no more once it is done) */
	if (fi && (fi->fh & O_ACCMODE) == 3)
		return -EBADF;
	if (fi && (fi->fh & O_ACCMODE) != O_RDONLY)
		return -ETXTBSY;
	a.hash_algorithm = arg.hash_algorithm;
	a.block_size = arg.block_size;
	a.salt = extra;
	a.salt_size = arg.salt_size;
	a.sig = extra + arg.salt_size;
	a.sig_size = arg.sig_size;
	a.priv = f2fs_fuse_priv(req, fs);
	return f2fs_enable_verity(fs->sb, nid, &a);
}

/*
 * FS_IOC_READ_VERITY_METADATA: its buffer is a pointer in the argument,
 * which FUSE does not follow; the caller, blocked in the ioctl, gets the
 * bytes written into it (caller.c).  At most 1 MiB a call: the result is a
 * count, and fsverity-utils reads on until 0.
 */
#define METADATA_MAX	(1u << 20)

static void read_metadata(fuse_req_t req, struct f2fs_fuse *fs, uint32_t nid, const void *in_buf,
			  size_t in_bufsz)
{
	struct fsverity_read_metadata_arg arg;
	struct f2fs_caller who;
	ssize_t n;
	void *buf;

	if (in_bufsz < sizeof(arg)) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	memcpy(&arg, in_buf, sizeof(arg));
	if (arg.__reserved || arg.offset + arg.length < arg.offset) {
		fuse_reply_err(req, EINVAL);
		return;
	}
	if (arg.length > METADATA_MAX)
		arg.length = METADATA_MAX;
	buf = malloc(arg.length ? arg.length : 1);
	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	n = f2fs_verity_read_metadata(fs->sb, nid, arg.metadata_type, arg.offset, buf, arg.length);
	if (n > 0) {
		int err;

		f2fs_caller_from_req(&who, req);
		err = f2fs_caller_write(&who, arg.buf_ptr, buf, (size_t)n);
		f2fs_caller_done(&who);
		if (err)
			n = err;
	}
	free(buf);
	if (n < 0)
		f2fs_fuse_reply_err(req, (int)n);
	else
		fuse_reply_ioctl(req, (int)n, NULL, 0);
}

bool f2fs_fuse_verity_ioctl(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi,
			    unsigned int cmd, const void *in_buf, size_t in_bufsz, size_t out_bufsz)
{
	struct f2fs_fuse *fs = fuse_req_userdata(req);
	uint32_t nid = f2fs_fuse_nid(fs, ino);
	struct f2fs_verity_digest d;
	struct fsverity_digest hdr;
	uint8_t out[sizeof(hdr) + sizeof(d.digest)];
	int err;

	if (cmd == (unsigned int)FS_IOC_ENABLE_VERITY) {
		err = enable(req, fs, nid, fi, in_buf, in_bufsz);
		if (err) {
			f2fs_fuse_reply_err(req, err);
			return true;
		}
		f2fs_fuse_inval_attrs(fs, ino);		/* i_blocks grew */
		fuse_reply_ioctl(req, 0, NULL, 0);
		return true;
	}
	if (cmd == (unsigned int)FS_IOC_READ_VERITY_METADATA) {
		read_metadata(req, fs, nid, in_buf, in_bufsz);
		return true;
	}
	if (cmd != (unsigned int)FS_IOC_MEASURE_VERITY)
		return false;
	if (in_bufsz < sizeof(hdr)) {
		fuse_reply_err(req, EINVAL);
		return true;
	}
	memcpy(&hdr, in_buf, sizeof(hdr));
	err = f2fs_verity_measure(fs->sb, nid, &d);
	/* fsverity_ioctl_measure: room for the digest, or EOVERFLOW */
	if (!err && (hdr.digest_size < d.size || out_bufsz < sizeof(hdr) + d.size))
		err = -EOVERFLOW;
	if (err) {
		f2fs_fuse_reply_err(req, err);
		return true;
	}
	hdr.digest_algorithm = d.algorithm;
	hdr.digest_size = d.size;
	memcpy(out, &hdr, sizeof(hdr));
	memcpy(out + sizeof(hdr), d.digest, d.size);
	fuse_reply_ioctl(req, 0, out, sizeof(hdr) + d.size);
	return true;
}
