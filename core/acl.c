// SPDX-License-Identifier: GPL-2.0
/*
 * POSIX ACLs (fs/f2fs/acl.c): kept as xattrs of index 2 (access) and 3
 * (default) in f2fs's compact format, converted to and from the VFS's
 * posix_acl_xattr format at getxattr/setxattr, as getxattr(2) returns it
 * on a kernel mount; and their upkeep: chmod rewrites the access ACL, a
 * new inode inherits its directory's default ACL.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "f2fs.h"

#define F2FS_ACL_VERSION	0x0001
#define POSIX_ACL_XATTR_VERSION	0x0002
#define ACL_HDR_SIZE		4	/* le32 a_version */
#define ACL_SHORT_SIZE		4	/* le16 tag, le16 perm */
#define ACL_LONG_SIZE		8	/* ... le32 id */
#define ACL_XATTR_ENTRY_SIZE	8	/* le16 tag, le16 perm, le32 id */
#define ACL_UNDEFINED_ID	0xFFFFFFFFu

#define ACL_USER_OBJ		0x01
#define ACL_USER		0x02
#define ACL_GROUP_OBJ		0x04
#define ACL_GROUP		0x08
#define ACL_MASK		0x10
#define ACL_OTHER		0x20

/*
 * Entry count implied by a value size (f2fs_acl_count): up to four short
 * entries, then long ones.  -1 if the size fits neither shape.
 */
static long f2fs_acl_count(size_t size)
{
	size -= ACL_HDR_SIZE;
	if (size < 4 * ACL_SHORT_SIZE) {
		if (size % ACL_SHORT_SIZE)
			return -1;
		return (long)(size / ACL_SHORT_SIZE);
	}
	size -= 4 * ACL_SHORT_SIZE;
	if (size % ACL_LONG_SIZE)
		return -1;
	return (long)(size / ACL_LONG_SIZE) + 4;
}

/*
 * Decode the on-disk ACL (as f2fs_acl_from_disk) and, when out is given,
 * write the posix_acl_xattr form.  Errors are -EINVAL as from the kernel.
 */
static int f2fs_acl_convert(const uint8_t *v, size_t vsize, long count, uint8_t *out)
{
	const uint8_t *p = v + ACL_HDR_SIZE, *end = v + vsize;

	if (out)
		put_le32(out, POSIX_ACL_XATTR_VERSION);
	for (long i = 0; i < count; i++) {
		uint16_t tag, perm;
		uint32_t id = ACL_UNDEFINED_ID;

		if ((size_t)(end - p) < ACL_SHORT_SIZE)
			return -EINVAL;
		tag = get_le16(p);
		perm = get_le16(p + 2);
		switch (tag) {
		case ACL_USER_OBJ:
		case ACL_GROUP_OBJ:
		case ACL_MASK:
		case ACL_OTHER:
			p += ACL_SHORT_SIZE;
			break;
		case ACL_USER:
		case ACL_GROUP:
			if ((size_t)(end - p) < ACL_LONG_SIZE)
				return -EINVAL;
			id = get_le32(p + 4);
			p += ACL_LONG_SIZE;
			break;
		default:
			return -EINVAL;
		}
		if (out) {
			uint8_t *o = out + ACL_HDR_SIZE + (size_t)i * ACL_XATTR_ENTRY_SIZE;

			put_le16(o, tag);
			put_le16(o + 2, perm);
			put_le32(o + 4, id);
		}
	}
	return p == end ? 0 : -EINVAL;
}

ssize_t f2fs_acl_get_xattr(struct f2fs_sb *sb, struct f2fs_inode *inode, int index, void *buf,
			   size_t size)
{
	uint8_t *v;
	ssize_t vsize, need;
	long count;
	int ret;

	/* the VFS offers no ACLs on symlinks */
	if (S_ISLNK(inode->mode))
		return -EOPNOTSUPP;

	vsize = f2fs_xattr_get_raw(sb, inode, index, "", 0, NULL, 0);
	if (vsize < 0)
		return vsize;
	if (vsize == 0)
		return -ENODATA;	/* the kernel treats an empty value as no ACL */
	v = malloc((size_t)vsize);
	if (!v)
		return -ENOMEM;
	ret = (int)f2fs_xattr_get_raw(sb, inode, index, "", 0, v, (size_t)vsize);
	if (ret < 0)
		goto out;

	if ((size_t)vsize < ACL_HDR_SIZE || get_le32(v) != F2FS_ACL_VERSION ||
	    (count = f2fs_acl_count((size_t)vsize)) < 0) {
		ret = -EINVAL;
		goto bad;
	}
	if (count == 0) {
		ret = -ENODATA;
		goto out;
	}
	/* validate fully before answering a size query, as the kernel does */
	ret = f2fs_acl_convert(v, (size_t)vsize, count, NULL);
	if (ret)
		goto bad;
	need = ACL_HDR_SIZE + count * ACL_XATTR_ENTRY_SIZE;
	if (!buf || !size) {
		ret = (int)need;
		goto out;
	}
	if ((size_t)need > size) {
		ret = -ERANGE;
		goto out;
	}
	f2fs_acl_convert(v, (size_t)vsize, count, buf);
	ret = (int)need;
	goto out;
bad:
	f2fs_warn(sb, "inode %u: malformed POSIX ACL (xattr index %d, %zd bytes)",
		  inode->ino, index, vsize);
out:
	free(v);
	return ret;
}

/* posix_acl_xattr (version 2, {tag, perm, id}) -> the f2fs on-disk ACL. */
static int acl_to_disk(const uint8_t *v, size_t size, uint8_t **out, size_t *outlen,
		       uint16_t *mode, bool access)
{
	size_t n, o = ACL_HDR_SIZE;
	uint8_t *d;
	int user_obj = -1, group_obj = -1, mask = -1, other = -1, named = 0;

	if (size < ACL_HDR_SIZE || get_le32(v) != POSIX_ACL_XATTR_VERSION ||
	    (size - ACL_HDR_SIZE) % ACL_XATTR_ENTRY_SIZE)
		return -EINVAL;
	n = (size - ACL_HDR_SIZE) / ACL_XATTR_ENTRY_SIZE;
	d = malloc(ACL_HDR_SIZE + n * ACL_LONG_SIZE);
	if (!d)
		return -ENOMEM;
	put_le32(d, F2FS_ACL_VERSION);
	for (size_t i = 0; i < n; i++) {
		const uint8_t *e = v + ACL_HDR_SIZE + i * ACL_XATTR_ENTRY_SIZE;
		uint16_t tag = get_le16(e), perm = get_le16(e + 2);

		if (perm & ~7u)
			goto bad;
		put_le16(d + o, tag);
		put_le16(d + o + 2, perm);
		switch (tag) {
		case ACL_USER_OBJ: user_obj = perm; o += ACL_SHORT_SIZE; break;
		case ACL_GROUP_OBJ: group_obj = perm; o += ACL_SHORT_SIZE; break;
		case ACL_MASK: mask = perm; o += ACL_SHORT_SIZE; break;
		case ACL_OTHER: other = perm; o += ACL_SHORT_SIZE; break;
		case ACL_USER: case ACL_GROUP:
			put_le32(d + o + 4, get_le32(e + 4));
			o += ACL_LONG_SIZE;
			named++;
			break;
		default:
			goto bad;
		}
	}
	if (n && (user_obj < 0 || group_obj < 0 || other < 0 || (named && mask < 0)))
		goto bad;
	if (access && n) {
		/* posix_acl_update_mode: the mode mirrors the ACL */
		*mode = (uint16_t)((*mode & ~0777u) | ((unsigned)user_obj << 6) |
				   ((unsigned)(mask >= 0 ? mask : group_obj) << 3) | (unsigned)other);
		if (!named && mask < 0) {
			/* equivalent to the mode: nothing to store */
			free(d);
			*out = NULL;
			*outlen = 0;
			return 0;
		}
	}
	*out = d;
	*outlen = o;
	return 0;
bad:
	free(d);
	return -EINVAL;
}

/*
 * setxattr/removexattr (value NULL) of system.posix_acl_access or _default;
 * kill_sgid: the access ACL's mode drops set-group-ID too (posix_acl_update_mode
 * for a caller outside the file's group).
 */
int f2fs_acl_set_xattr(struct f2fs_sb *sb, struct f2fs_inode *inode, int index, const void *value,
		       size_t size, int flags, bool kill_sgid)
{
	bool access = index == F2FS_XATTR_INDEX_POSIX_ACL_ACCESS;
	uint16_t mode = inode->mode;
	uint8_t *disk = NULL;
	size_t dlen = 0;
	int err;

	if (S_ISLNK(inode->mode) || (!access && !S_ISDIR(inode->mode)))
		return access ? -EOPNOTSUPP : -EACCES;
	if (value) {
		err = acl_to_disk(value, size, &disk, &dlen, &mode, access);
		if (err)
			return err;
		if (access && kill_sgid)
			mode &= (uint16_t)~S_ISGID;
	}
	if (value && disk) {
		err = f2fs_xattr_set_raw(sb, inode, index, "", disk, dlen, flags);
	} else {
		err = f2fs_xattr_set_raw(sb, inode, index, "", NULL, 0, 0);
		if (err == -ENODATA && value)
			err = 0;	/* nothing stored, nothing to remove */
	}
	free(disk);
	if (!err && mode != inode->mode) {
		inode->mode = mode;
		err = f2fs_mark_inode_dirty(sb, inode);
	}
	return err;
}

/* ---- upkeep (posix_acl_chmod, posix_acl_create) ---- */

/* Read an inode's ACL of `index` in f2fs's disk format; 0 bytes if none. */
static ssize_t get_disk_acl(struct f2fs_sb *sb, struct f2fs_inode *inode, int index,
			    uint8_t **out)
{
	ssize_t n = f2fs_xattr_get_raw(sb, inode, index, "", 0, NULL, 0);
	uint8_t *v;

	*out = NULL;
	if (n == -ENODATA)
		return 0;
	if (n <= 0)
		return n;
	v = malloc((size_t)n);
	if (!v)
		return -ENOMEM;
	n = f2fs_xattr_get_raw(sb, inode, index, "", 0, v, (size_t)n);
	if (n < 0 || (size_t)n < ACL_HDR_SIZE || get_le32(v) != F2FS_ACL_VERSION) {
		free(v);
		return n < 0 ? n : -EINVAL;
	}
	*out = v;
	return n;
}

/* Walk disk-format entries: calls fn(entry, tag) for each; -EINVAL if malformed. */
static int acl_walk(uint8_t *v, size_t n, void (*fn)(uint8_t *e, uint16_t tag, void *arg),
		    void *arg)
{
	size_t o = ACL_HDR_SIZE;

	while (o < n) {
		uint16_t tag;

		if (o + ACL_SHORT_SIZE > n)
			return -EINVAL;
		tag = get_le16(v + o);
		if ((tag == ACL_USER || tag == ACL_GROUP) && o + ACL_LONG_SIZE > n)
			return -EINVAL;
		fn(v + o, tag, arg);
		o += (tag == ACL_USER || tag == ACL_GROUP) ? ACL_LONG_SIZE : ACL_SHORT_SIZE;
	}
	return 0;
}

static void chmod_entry(uint8_t *e, uint16_t tag, void *arg)
{
	const uint32_t *mode = arg;

	switch (tag) {
	case ACL_USER_OBJ: put_le16(e + 2, (uint16_t)((*mode >> 6) & 7)); break;
	case ACL_MASK: put_le16(e + 2, (uint16_t)((*mode >> 3) & 7)); break;
	case ACL_OTHER: put_le16(e + 2, (uint16_t)(*mode & 7)); break;
	default: break;
	}
}

static void has_mask_entry(uint8_t *e, uint16_t tag, void *arg)
{
	if (tag == ACL_MASK)
		*(bool *)arg = true;
}

static void chmod_group_obj(uint8_t *e, uint16_t tag, void *arg)
{
	if (tag == ACL_GROUP_OBJ)
		put_le16(e + 2, (uint16_t)((*(const uint32_t *)arg >> 3) & 7));
}

/* posix_acl_chmod: a new mode rewrites the owner, mask (or group) and other entries. */
int f2fs_acl_chmod(struct f2fs_sb *sb, struct f2fs_inode *inode)
{
	uint32_t mode = inode->mode;
	bool has_mask = false;
	uint8_t *v;
	ssize_t n;
	int err;

	if (S_ISLNK(inode->mode))
		return 0;
	n = get_disk_acl(sb, inode, F2FS_XATTR_INDEX_POSIX_ACL_ACCESS, &v);
	if (n <= 0)
		return (int)n;
	err = acl_walk(v, (size_t)n, has_mask_entry, &has_mask);
	if (!err)
		err = acl_walk(v, (size_t)n, chmod_entry, &mode);
	if (!err && !has_mask)
		err = acl_walk(v, (size_t)n, chmod_group_obj, &mode);
	if (!err)
		err = f2fs_xattr_set_raw(sb, inode, F2FS_XATTR_INDEX_POSIX_ACL_ACCESS, "", v, (size_t)n, 0);
	free(v);
	return err;
}

struct masq {
	uint32_t mode;
	uint8_t *group_obj, *mask;
	bool extended;		/* named users or groups: not expressible as a mode */
};

static void masq_entry(uint8_t *e, uint16_t tag, void *arg)
{
	struct masq *m = arg;
	uint16_t perm = get_le16(e + 2);

	switch (tag) {
	case ACL_USER_OBJ:
		perm &= (m->mode >> 6) & 7;
		put_le16(e + 2, perm);
		m->mode = (m->mode & ~0700u) | ((uint32_t)perm << 6);
		break;
	case ACL_USER: case ACL_GROUP:
		m->extended = true;
		break;
	case ACL_GROUP_OBJ:
		m->group_obj = e;
		break;
	case ACL_OTHER:
		perm &= m->mode & 7;
		put_le16(e + 2, perm);
		m->mode = (m->mode & ~07u) | perm;
		break;
	case ACL_MASK:
		m->mask = e;
		m->extended = true;
		break;
	default:
		break;
	}
}

/*
 * posix_acl_create: a new inode in a directory with a default ACL gets it
 * as its access ACL, masked by the requested mode (which it also
 * narrows), and a new directory inherits the default ACL itself.
 */
int f2fs_acl_inherit(struct f2fs_sb *sb, struct f2fs_inode *dir, struct f2fs_inode *inode)
{
	uint8_t *v = NULL, *def = NULL;
	struct masq m = { .mode = inode->mode };
	ssize_t n;
	int err;

	if (S_ISLNK(inode->mode))
		return 0;
	n = get_disk_acl(sb, dir, F2FS_XATTR_INDEX_POSIX_ACL_DEFAULT, &v);
	if (n <= ACL_HDR_SIZE) {
		free(v);
		return n < 0 ? (int)n : 0;
	}
	if (S_ISDIR(inode->mode)) {
		def = malloc((size_t)n);
		if (!def) {
			free(v);
			return -ENOMEM;
		}
		memcpy(def, v, (size_t)n);
	}
	err = acl_walk(v, (size_t)n, masq_entry, &m);
	if (!err) {
		uint8_t *g = m.mask ? m.mask : m.group_obj;

		if (g) {
			uint16_t perm = get_le16(g + 2) & ((m.mode >> 3) & 7);

			put_le16(g + 2, perm);
			m.mode = (m.mode & ~070u) | ((uint32_t)perm << 3);
		}
		inode->mode = (uint16_t)m.mode;
		if (m.extended)
			err = f2fs_xattr_set_raw(sb, inode, F2FS_XATTR_INDEX_POSIX_ACL_ACCESS, "", v, (size_t)n, 0);
	}
	if (!err && def)
		err = f2fs_xattr_set_raw(sb, inode, F2FS_XATTR_INDEX_POSIX_ACL_DEFAULT, "", def, (size_t)n, 0);
	free(v);
	free(def);
	if (!err)
		err = f2fs_mark_inode_dirty(sb, inode);
	return err;
}

bool f2fs_has_default_acl(struct f2fs_sb *sb, struct f2fs_inode *dir)
{
	return f2fs_xattr_get_raw(sb, dir, F2FS_XATTR_INDEX_POSIX_ACL_DEFAULT, "", 0, NULL, 0) >
	       (ssize_t)ACL_HDR_SIZE;
}
