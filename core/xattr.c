// SPDX-License-Identifier: GPL-2.0
/*
 * Extended attributes.
 *
 * An inode's xattrs are one list stored in two pieces: the inline xattr
 * area at the end of i_addr (when F2FS_INLINE_XATTR is set) followed by
 * the first VALID_XATTR_BLOCK_SIZE bytes of the xattr node i_xattr_nid.
 * Like the kernel (read_all_xattrs), we concatenate the pieces into one
 * zero-padded buffer: a 24-byte header, then entries
 * {u8 index, u8 name_len, le16 value_size, name, value} padded to 4
 * bytes, ended by a zero word.  Entries may straddle the two pieces.
 *
 * Lookups read the xattr node only once the walk leaves the inline area,
 * so an inline xattr stays readable whatever state the node is in, as
 * with the kernel's lookup_all_xattrs.
 *
 * POSIX ACLs are stored in f2fs's compact format (fs/f2fs/acl.c) and are
 * converted to the VFS posix_acl_xattr format on the way out, which is
 * what getxattr(2) returns on a kernel mount.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "f2fs.h"

/* ---- the concatenated xattr buffer ---- */

struct xattr_buf {
	struct f2fs_sb *sb;
	const struct f2fs_inode *inode;
	uint8_t *base;		/* inline part, then node part, then zeros */
	size_t inline_size;
	size_t end;		/* bytes that may hold entries (XATTR_SIZE) */
	bool node_loaded;
};

struct xattr_entry {
	uint8_t index;
	uint8_t name_len;
	uint16_t value_size;
	const uint8_t *name;
	const uint8_t *value;
};

/* Bring in the xattr node part if bytes [0, upto) reach into it. */
static int xbuf_need(struct xattr_buf *xb, size_t upto)
{
	uint8_t *node;
	int ret;

	if (upto <= xb->inline_size || xb->node_loaded || !xb->inode->xattr_nid)
		return 0;

	node = f2fs_alloc_blocks(1);
	if (!node)
		return -ENOMEM;
	ret = f2fs_get_node(xb->sb, xb->inode->xattr_nid, xb->inode->ino, XATTR_NODE_OFFSET, node);
	if (ret < 0)
		goto out;
	memcpy(xb->base + xb->inline_size, node, VALID_XATTR_BLOCK_SIZE);
	xb->node_loaded = true;
	ret = 0;
out:
	free(node);
	return ret;
}

/*
 * Set up the buffer.  Returns 0, or -ENODATA when the inode has no xattr
 * storage at all.  The allocation leaves at least one zero word past
 * `end`, so the terminator test can always read 4 bytes at any position
 * the walk reaches.
 */
static int xbuf_init(struct xattr_buf *xb, struct f2fs_sb *sb, const struct f2fs_inode *inode)
{
	memset(xb, 0, sizeof(*xb));
	xb->sb = sb;
	xb->inode = inode;
	xb->inline_size = f2fs_inline_xattr_size(inode);
	xb->end = xb->inline_size + (inode->xattr_nid ? VALID_XATTR_BLOCK_SIZE : 0);
	if (xb->end == 0)
		return -ENODATA;

	xb->base = calloc(1, xb->inline_size + F2FS_BLKSIZE);
	if (!xb->base)
		return -ENOMEM;
	memcpy(xb->base, f2fs_inline_xattr_addr(inode), xb->inline_size);
	return 0;
}

static void xbuf_free(struct xattr_buf *xb)
{
	free(xb->base);
	xb->base = NULL;
}

/* A zero magic means no xattr was ever stored; anything else is damage. */
static int xbuf_check_header(struct xattr_buf *xb)
{
	uint32_t magic;
	int ret = xbuf_need(xb, 4);

	if (ret)
		return ret;
	magic = get_le32(xb->base);
	if (magic != 0 && magic != F2FS_XATTR_MAGIC)
		return f2fs_corrupted(xb->sb, "inode %u: bad xattr magic 0x%08x",
				      xb->inode->ino, magic);
	return 0;
}

/*
 * Decode the entry at *pos.  Returns 1 and advances *pos, 0 at the end
 * of the list, or <0 (-EUCLEAN for an entry running past the storage).
 */
static int xbuf_next(struct xattr_buf *xb, size_t *pos, struct xattr_entry *e)
{
	size_t p = *pos, size;
	int ret;

	ret = xbuf_need(xb, p + XATTR_ENTRY_HDR_SIZE);
	if (ret)
		return ret;
	if (get_le32(xb->base + p) == 0)
		return 0;
	if (p + XATTR_ENTRY_HDR_SIZE > xb->end)
		goto corrupt;

	e->index = xb->base[p];
	e->name_len = xb->base[p + 1];
	e->value_size = get_le16(xb->base + p + 2);
	size = XATTR_ALIGN((size_t)XATTR_ENTRY_HDR_SIZE + e->name_len + e->value_size);
	if (size > xb->end - p)
		goto corrupt;
	ret = xbuf_need(xb, p + size);
	if (ret)
		return ret;
	e->name = xb->base + p + XATTR_ENTRY_HDR_SIZE;
	e->value = e->name + e->name_len;
	*pos = p + size;
	return 1;

corrupt:
	return f2fs_corrupted(xb->sb, "inode %u: xattr entry at offset %zu runs past the %zu-byte xattr area",
			      xb->inode->ino, p, xb->end);
}

/* Find (index, name).  1 found, 0 absent, <0 error. */
static int xbuf_find(struct xattr_buf *xb, int index, const char *name, size_t len,
		     struct xattr_entry *e)
{
	size_t pos = XATTR_HDR_SIZE;
	int ret;

	ret = xbuf_check_header(xb);
	if (ret)
		return ret;
	while ((ret = xbuf_next(xb, &pos, e)) == 1) {
		if (e->index == index && e->name_len == len && memcmp(e->name, name, len) == 0)
			return 1;
	}
	return ret;
}

ssize_t f2fs_xattr_get_raw(struct f2fs_sb *sb, struct f2fs_inode *inode, int index,
			   const char *name, size_t name_len, void *buf, size_t size)
{
	struct xattr_buf xb;
	struct xattr_entry e;
	ssize_t ret;

	if (name_len > F2FS_NAME_LEN)
		return -ERANGE;
	ret = xbuf_init(&xb, sb, inode);
	if (ret)
		return ret;
	ret = xbuf_find(&xb, index, name, name_len, &e);
	if (ret == 0) {
		ret = -ENODATA;
	} else if (ret > 0) {
		if (buf && size) {
			if (e.value_size > size) {
				ret = -ERANGE;
				goto out;
			}
			memcpy(buf, e.value, e.value_size);
		}
		ret = e.value_size;
	}
out:
	xbuf_free(&xb);
	return ret;
}

/* ---- POSIX ACLs ---- */

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

static ssize_t get_acl_xattr(struct f2fs_sb *sb, struct f2fs_inode *inode, int index,
			     void *buf, size_t size)
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

/* ---- name mapping ---- */

/*
 * The kernel's f2fs xattr handlers, in its resolution order.  Prefix
 * handlers need a non-empty suffix; name handlers match exactly.
 * Index 7 (system.advise) is virtual: it reads i_advise.
 */
static const struct {
	const char *prefix;
	int index;
	bool exact;
} xattr_handlers[] = {
	{ "user.", F2FS_XATTR_INDEX_USER, false },
	{ "system.posix_acl_access", F2FS_XATTR_INDEX_POSIX_ACL_ACCESS, true },
	{ "system.posix_acl_default", F2FS_XATTR_INDEX_POSIX_ACL_DEFAULT, true },
	{ "trusted.", F2FS_XATTR_INDEX_TRUSTED, false },
	{ "security.", F2FS_XATTR_INDEX_SECURITY, false },
	{ "system.advise", F2FS_XATTR_INDEX_ADVISE, true },
};

/* Listed prefix for an on-disk index, or NULL for indexes kept hidden. */
static const char *list_prefix(uint8_t index)
{
	switch (index) {
	case F2FS_XATTR_INDEX_USER:
		return "user.";
	case F2FS_XATTR_INDEX_POSIX_ACL_ACCESS:
		return "system.posix_acl_access";
	case F2FS_XATTR_INDEX_POSIX_ACL_DEFAULT:
		return "system.posix_acl_default";
	case F2FS_XATTR_INDEX_TRUSTED:
		return "trusted.";
	case F2FS_XATTR_INDEX_SECURITY:
		return "security.";
	default:
		/* lustre, advise, encryption context, verity: not user-visible */
		return NULL;
	}
}

ssize_t f2fs_xattr_get(struct f2fs_sb *sb, struct f2fs_inode *inode, const char *name,
		       void *buf, size_t size)
{
	for (size_t i = 0; i < ARRAY_SIZE(xattr_handlers); i++) {
		size_t plen = strlen(xattr_handlers[i].prefix);
		const char *suffix;
		int index = xattr_handlers[i].index;

		if (strncmp(name, xattr_handlers[i].prefix, plen) != 0)
			continue;
		suffix = name + plen;
		if (xattr_handlers[i].exact) {
			if (*suffix)
				continue;
		} else if (!*suffix) {
			return -EINVAL;
		}

		if (index == F2FS_XATTR_INDEX_ADVISE) {
			if (buf && size)
				*(uint8_t *)buf = inode->advise;
			return 1;
		}
		if (index == F2FS_XATTR_INDEX_POSIX_ACL_ACCESS ||
		    index == F2FS_XATTR_INDEX_POSIX_ACL_DEFAULT)
			return get_acl_xattr(sb, inode, index, buf, size);
		return f2fs_xattr_get_raw(sb, inode, index, suffix, strlen(suffix), buf, size);
	}
	return -EOPNOTSUPP;
}

ssize_t f2fs_xattr_list(struct f2fs_sb *sb, struct f2fs_inode *inode, char *buf, size_t size)
{
	struct xattr_buf xb;
	struct xattr_entry e;
	size_t pos = XATTR_HDR_SIZE, total = 0;
	ssize_t ret;

	ret = xbuf_init(&xb, sb, inode);
	if (ret == -ENODATA)
		return 0;
	if (ret)
		return ret;
	/* listing reads both pieces up front, as the kernel does */
	ret = xbuf_need(&xb, xb.end);
	if (!ret)
		ret = xbuf_check_header(&xb);
	while (!ret && (ret = xbuf_next(&xb, &pos, &e)) == 1) {
		const char *prefix = list_prefix(e.index);
		size_t plen, n;

		ret = 0;
		if (!prefix)
			continue;
		plen = strlen(prefix);
		n = plen + e.name_len + 1;
		if (buf && size) {
			if (n > size - total) {
				ret = -ERANGE;
				break;
			}
			memcpy(buf + total, prefix, plen);
			memcpy(buf + total + plen, e.name, e.name_len);
			buf[total + plen + e.name_len] = '\0';
		}
		total += n;
	}
	xbuf_free(&xb);
	if (ret < 0)
		return ret;
	return (ssize_t)total;
}

/* ======================= setting and removing ======================= */

/* MIN_OFFSET / MAX_VALUE_LEN of the kernel's xattr.h */
static size_t min_offset(const struct f2fs_inode *inode)
{
	return XATTR_ALIGN(f2fs_inline_xattr_size(inode) + VALID_XATTR_BLOCK_SIZE);
}

/* Load the whole list (both pieces) into a zeroed buffer of min_offset()+4. */
static int load_all(struct f2fs_sb *sb, const struct f2fs_inode *inode, uint8_t **out)
{
	size_t inl = f2fs_inline_xattr_size(inode);
	uint8_t *buf = calloc(1, min_offset(inode) + F2FS_BLKSIZE);
	int err = 0;

	if (!buf)
		return -ENOMEM;
	if (inl)
		memcpy(buf, f2fs_inline_xattr_addr(inode), inl);
	if (inode->xattr_nid) {
		uint8_t *node = f2fs_alloc_blocks(1);

		if (!node) {
			free(buf);
			return -ENOMEM;
		}
		err = f2fs_get_node(sb, inode->xattr_nid, inode->ino, XATTR_NODE_OFFSET, node);
		if (!err)
			memcpy(buf + inl, node, VALID_XATTR_BLOCK_SIZE);
		free(node);
	}
	if (!err && get_le32(buf) != F2FS_XATTR_MAGIC) {
		if (get_le32(buf) != 0)
			err = f2fs_corrupted(sb, "inode %u: bad xattr magic 0x%08x", inode->ino,
					     get_le32(buf));
		memset(buf, 0, XATTR_HDR_SIZE);
		put_le32(buf, F2FS_XATTR_MAGIC);
		put_le32(buf + 4, 1);
	}
	if (err) {
		free(buf);
		return err;
	}
	*out = buf;
	return 0;
}

/*
 * write_all_xattrs: the inline part into the inode, the rest into the
 * node.  The node is made first: if that fails (out of space), the inline
 * part must not have changed, or the list would be cut off mid-entry.
 */
static int store_all(struct f2fs_sb *sb, struct f2fs_inode *inode, const uint8_t *buf, size_t used)
{
	size_t inl = f2fs_inline_xattr_size(inode);
	uint8_t *node;
	int err = 0;

	if (used <= inl && !inode->xattr_nid) {
		memcpy(f2fs_inline_xattr_addr(inode), buf, inl);
		return f2fs_mark_inode_dirty(sb, inode);
	}
	node = f2fs_alloc_blocks(1);
	if (!node)
		return -ENOMEM;
	if (!inode->xattr_nid) {
		uint32_t nid;

		err = f2fs_new_node(sb, inode->ino, XATTR_NODE_OFFSET, true, &nid, node);
		if (err)
			goto out;
		inode->xattr_nid = nid;
		inode->blocks++;
	} else {
		err = f2fs_get_node(sb, inode->xattr_nid, inode->ino, XATTR_NODE_OFFSET, node);
		if (err)
			goto out;
	}
	if (inl)
		memcpy(f2fs_inline_xattr_addr(inode), buf, inl);
	memcpy(node, buf + inl, VALID_XATTR_BLOCK_SIZE);
	err = f2fs_set_node_dirty(sb, inode->xattr_nid, node);
	if (!err)
		err = f2fs_mark_inode_dirty(sb, inode);
out:
	free(node);
	return err;
}

/* Entry positions: end of the used list and the entry (index, name), if any. */
static int scan_list(struct f2fs_sb *sb, const struct f2fs_inode *inode, const uint8_t *buf,
		     size_t limit, int index, const char *name, size_t len, size_t *here,
		     size_t *last)
{
	size_t pos = XATTR_HDR_SIZE;

	*here = SIZE_MAX;
	while (pos + 4 <= limit && get_le32(buf + pos)) {
		size_t sz = XATTR_ALIGN((size_t)XATTR_ENTRY_HDR_SIZE + buf[pos + 1] +
					get_le16(buf + pos + 2));

		if (sz > limit - pos)
			return f2fs_corrupted(sb, "inode %u: xattr entry at %zu runs past the area",
					      inode->ino, pos);
		if (buf[pos] == index && buf[pos + 1] == len && !memcmp(buf + pos + 4, name, len))
			*here = pos;
		pos += sz;
	}
	*last = pos;
	return 0;
}

/* __f2fs_setxattr: value NULL removes. */
static int set_raw(struct f2fs_sb *sb, struct f2fs_inode *inode, int index, const char *name,
		   const void *value, size_t size, int flags)
{
	size_t len = strlen(name), here = SIZE_MAX, last = 0, limit = min_offset(inode), newsize;
	uint8_t *buf;
	int err;

	if (len > F2FS_NAME_LEN)
		return -ERANGE;
	if (value && size > limit - XATTR_HDR_SIZE - XATTR_ENTRY_HDR_SIZE)
		return -E2BIG;
	err = load_all(sb, inode, &buf);
	if (err)
		return err;
	err = scan_list(sb, inode, buf, limit, index, name, len, &here, &last);
	if (err)
		goto out;
	if (here != SIZE_MAX) {
		if (flags & F2FS_XATTR_CREATE) {
			err = -EEXIST;
			goto out;
		}
	} else if (flags & F2FS_XATTR_REPLACE) {
		err = -ENODATA;
		goto out;
	} else if (!value) {
		err = -ENODATA;
		goto out;
	}
	newsize = XATTR_ALIGN(XATTR_ENTRY_HDR_SIZE + len + size);
	if (value) {
		size_t free_ = limit - last;

		if (here != SIZE_MAX)
			free_ += XATTR_ALIGN((size_t)XATTR_ENTRY_HDR_SIZE + buf[here + 1] +
					     get_le16(buf + here + 2));
		if (free_ < newsize + 4) {	/* room for the terminating word too */
			err = -E2BIG;
			goto out;
		}
	}
	if (here != SIZE_MAX) {
		size_t old = XATTR_ALIGN((size_t)XATTR_ENTRY_HDR_SIZE + buf[here + 1] +
					 get_le16(buf + here + 2));

		memmove(buf + here, buf + here + old, last - here - old);
		last -= old;
		memset(buf + last, 0, old);
	}
	if (value) {
		buf[last] = (uint8_t)index;
		buf[last + 1] = (uint8_t)len;
		put_le16(buf + last + 2, (uint16_t)size);
		memcpy(buf + last + 4, name, len);
		memcpy(buf + last + 4 + len, value, size);
		last += newsize;
		put_le32(buf + last, 0);
	}
	err = store_all(sb, inode, buf, last + 4);
out:
	free(buf);
	return err;
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

int f2fs_xattr_set(struct f2fs_sb *sb, struct f2fs_inode *inode, const char *name,
		   const void *value, size_t size, int flags)
{
	bool kill_sgid = flags & F2FS_XATTR_ACL_KILL_SGID;

	flags &= ~F2FS_XATTR_ACL_KILL_SGID;
	for (size_t i = 0; i < ARRAY_SIZE(xattr_handlers); i++) {
		size_t plen = strlen(xattr_handlers[i].prefix);
		const char *suffix;
		int index = xattr_handlers[i].index;

		if (strncmp(name, xattr_handlers[i].prefix, plen) != 0)
			continue;
		suffix = name + plen;
		if (xattr_handlers[i].exact) {
			if (*suffix)
				continue;
		} else if (!*suffix) {
			return -EINVAL;
		}
		if (index == F2FS_XATTR_INDEX_ADVISE)
			return -EOPNOTSUPP;
		if (index == F2FS_XATTR_INDEX_POSIX_ACL_ACCESS ||
		    index == F2FS_XATTR_INDEX_POSIX_ACL_DEFAULT) {
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
				err = set_raw(sb, inode, index, "", disk, dlen, flags);
			} else {
				err = set_raw(sb, inode, index, "", NULL, 0, 0);
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
		return set_raw(sb, inode, index, suffix, value, size, flags);
	}
	return -EOPNOTSUPP;
}

/* Raw access by index for the encryption context. */
int f2fs_xattr_set_raw(struct f2fs_sb *sb, struct f2fs_inode *inode, int index, const char *name,
		       const void *value, size_t size, int flags)
{
	return set_raw(sb, inode, index, name, value, size, flags);
}

/* ======================= ACL upkeep (posix_acl_chmod, posix_acl_create) ======================= */

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
		err = set_raw(sb, inode, F2FS_XATTR_INDEX_POSIX_ACL_ACCESS, "", v, (size_t)n, 0);
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
			err = set_raw(sb, inode, F2FS_XATTR_INDEX_POSIX_ACL_ACCESS, "", v, (size_t)n, 0);
	}
	if (!err && def)
		err = set_raw(sb, inode, F2FS_XATTR_INDEX_POSIX_ACL_DEFAULT, "", def, (size_t)n, 0);
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
