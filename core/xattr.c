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
 * The system.posix_acl_* names are handed to acl.c, which converts
 * between f2fs's compact ACL format and the VFS's.
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

/* zero bytes past `end`: the walk's terminator test reads 4 at any position */
#define XBUF_PAD 8

/*
 * Set up the buffer.  Returns 0, or -ENODATA when the inode has no xattr
 * storage at all.  Only the inline part and the padding are filled in: the
 * node part is written whole by xbuf_need before anything reads it, and
 * zeroing a block for every lookup cost more than the lookup (a
 * security.capability query before each write, the default ACL at each
 * create).
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

	xb->base = malloc(xb->end + XBUF_PAD);
	if (!xb->base)
		return -ENOMEM;
	memcpy(xb->base, f2fs_inline_xattr_addr(inode), xb->inline_size);
	memset(xb->base + xb->end, 0, XBUF_PAD);
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
			return f2fs_acl_get_xattr(sb, inode, index, buf, size);
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

		err = f2fs_dquot_alloc_block(sb, inode, 1);
		if (err)
			goto out;
		err = f2fs_new_node(sb, inode->ino, XATTR_NODE_OFFSET, true, &nid, node);
		if (err) {
			f2fs_dquot_free_block(sb, inode, 1);
			goto out;
		}
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
		    index == F2FS_XATTR_INDEX_POSIX_ACL_DEFAULT)
			return f2fs_acl_set_xattr(sb, inode, index, value, size, flags, kill_sgid);
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
