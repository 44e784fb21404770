// SPDX-License-Identifier: GPL-2.0
/*
 * Test-only device backends: the fuzzers' copy-on-write overlay and the
 * crash tests' write log (testdev.h).
 */
#include <stdlib.h>
#include <string.h>

#include "testdev.h"

/* ---- copy-on-write overlay ---- */

struct ovl {
	const uint8_t *base;
	uint32_t nblocks;
	/* open addressing, block + 1 as the key (0: empty), a power of two in size */
	uint32_t *key, *val;
	uint32_t cap;
	uint32_t *used;		/* slots in use, for a reset that costs what was used */
	uint32_t nused;
	uint8_t **pool;		/* private blocks, kept across resets */
	uint32_t npool, cap_pool;
	uint64_t written, flushes;
	uint32_t lowest_write;
};

static uint32_t slot_of(const struct ovl *o, uint32_t b)
{
	uint32_t h = (b + 1) * 2654435761u;

	for (uint32_t i = h & (o->cap - 1);; i = (i + 1) & (o->cap - 1))
		if (o->key[i] == b + 1 || !o->key[i])
			return i;
}

static bool ovl_grow(struct ovl *o)
{
	uint32_t ncap = o->cap ? o->cap * 2 : 1024;
	uint32_t *okey = o->key, *oval = o->val, ocap = o->cap;
	uint32_t *nused = realloc(o->used, sizeof(uint32_t) * ncap);

	if (!nused)
		return false;
	o->used = nused;
	o->key = calloc(ncap, sizeof(uint32_t));
	o->val = calloc(ncap, sizeof(uint32_t));
	if (!o->key || !o->val) {
		free(o->key);
		free(o->val);
		o->key = okey;
		o->val = oval;
		return false;
	}
	o->cap = ncap;
	o->nused = 0;
	for (uint32_t i = 0; i < ocap; i++) {
		if (!okey[i])
			continue;
		uint32_t s = slot_of(o, okey[i] - 1);

		o->key[s] = okey[i];
		o->val[s] = oval[i];
		o->used[o->nused++] = s;
	}
	free(okey);
	free(oval);
	return true;
}

struct ovl *ovl_new(const uint8_t *base, size_t len)
{
	struct ovl *o = calloc(1, sizeof(*o));

	if (!o)
		return NULL;
	o->base = base;
	o->nblocks = (uint32_t)(len / F2FS_BLKSIZE);
	o->lowest_write = UINT32_MAX;
	if (!ovl_grow(o)) {
		free(o);
		return NULL;
	}
	return o;
}

void ovl_free(struct ovl *o)
{
	if (!o)
		return;
	for (uint32_t i = 0; i < o->npool; i++)
		free(o->pool[i]);
	free(o->pool);
	free(o->key);
	free(o->val);
	free(o->used);
	free(o);
}

uint32_t ovl_nr_blocks(const struct ovl *o)
{
	return o->nblocks;
}

const uint8_t *ovl_peek(const struct ovl *o, uint32_t b)
{
	uint32_t s = slot_of(o, b);

	if (o->key[s])
		return o->pool[o->val[s]];
	return o->base + (size_t)b * F2FS_BLKSIZE;
}

uint8_t *ovl_block(struct ovl *o, uint32_t b)
{
	uint32_t s;

	if (b >= o->nblocks)
		return NULL;
	s = slot_of(o, b);
	if (o->key[s])
		return o->pool[o->val[s]];
	/* keep the table at most half full */
	if ((o->nused + 1) * 2 > o->cap) {
		if (!ovl_grow(o))
			return NULL;
		s = slot_of(o, b);
	}
	if (o->nused == o->npool) {
		if (o->npool == o->cap_pool) {
			uint32_t nc = o->cap_pool ? o->cap_pool * 2 : 256;
			uint8_t **np = realloc(o->pool, sizeof(*np) * nc);

			if (!np)
				return NULL;
			o->pool = np;
			o->cap_pool = nc;
		}
		o->pool[o->npool] = malloc(F2FS_BLKSIZE);
		if (!o->pool[o->npool])
			return NULL;
		o->npool++;
	}
	o->key[s] = b + 1;
	o->val[s] = o->nused;
	o->used[o->nused++] = s;
	memcpy(o->pool[o->val[s]], o->base + (size_t)b * F2FS_BLKSIZE, F2FS_BLKSIZE);
	return o->pool[o->val[s]];
}

void ovl_reset_counters(struct ovl *o)
{
	o->written = 0;
	o->flushes = 0;
	o->lowest_write = UINT32_MAX;
}

void ovl_reset(struct ovl *o)
{
	for (uint32_t i = 0; i < o->nused; i++)
		o->key[o->used[i]] = 0;
	o->nused = 0;
	ovl_reset_counters(o);
}

uint64_t ovl_written_blocks(const struct ovl *o)
{
	return o->written;
}

uint64_t ovl_flushes(const struct ovl *o)
{
	return o->flushes;
}

uint32_t ovl_lowest_write(const struct ovl *o)
{
	return o->lowest_write;
}

uint32_t ovl_nr_private(const struct ovl *o)
{
	return o->nused;
}

const uint8_t *ovl_private(const struct ovl *o, uint32_t i, uint32_t *blkaddr)
{
	uint32_t s = o->used[i];

	*blkaddr = o->key[s] - 1;
	return o->pool[o->val[s]];
}

static int ovl_rw(struct f2fs_dev *dev, bool write, const struct iovec *iov, int iovcnt,
		  uint64_t off, size_t total)
{
	struct ovl *o = f2fs_dev_priv(dev);
	uint32_t b = (uint32_t)(off / F2FS_BLKSIZE);

	if (write) {
		o->written += total / F2FS_BLKSIZE;
		if (b < o->lowest_write)
			o->lowest_write = b;
	}
	for (int i = 0; i < iovcnt; i++) {
		uint8_t *p = iov[i].iov_base;

		for (size_t k = 0; k < iov[i].iov_len; k += F2FS_BLKSIZE, b++) {
			if (write) {
				uint8_t *dst = ovl_block(o, b);

				if (!dst)
					return -ENOMEM;
				memcpy(dst, p + k, F2FS_BLKSIZE);
			} else {
				memcpy(p + k, ovl_peek(o, b), F2FS_BLKSIZE);
			}
		}
	}
	return 0;
}

static int ovl_flush(struct f2fs_dev *dev)
{
	struct ovl *o = f2fs_dev_priv(dev);

	o->flushes++;
	return 0;
}

static int ovl_discard(struct f2fs_dev *dev, uint64_t off, uint64_t len)
{
	return 0;
}

static void ovl_release(struct f2fs_dev *dev)
{
}

static const struct f2fs_dev_ops ovl_ops = {
	.rw = ovl_rw, .flush = ovl_flush, .discard = ovl_discard, .release = ovl_release,
	.in_memory = true,
};

int ovl_open_dev(struct ovl *o, bool readonly, struct f2fs_dev **out)
{
	return f2fs_dev_open_ops(&ovl_ops, o, (uint64_t)o->nblocks * F2FS_BLKSIZE, readonly, out);
}

/* ---- write log ---- */

static bool wlog_append(struct wlog *log, enum wlog_kind kind, uint32_t blkaddr,
			const uint8_t *block)
{
	if (log->nr == log->cap) {
		size_t nc = log->cap ? log->cap * 2 : 1024;
		struct wlog_rec *nr = realloc(log->rec, sizeof(*nr) * nc);

		if (!nr)
			return false;
		log->rec = nr;
		log->cap = nc;
	}
	if (block && log->nr_data == log->cap_data) {
		size_t nc = log->cap_data ? log->cap_data * 2 : 1024;
		uint8_t *nd = realloc(log->data, nc * F2FS_BLKSIZE);

		if (!nd)
			return false;
		log->data = nd;
		log->cap_data = nc;
	}
	log->rec[log->nr].kind = kind;
	log->rec[log->nr].blkaddr = blkaddr;
	log->rec[log->nr].data = (uint32_t)log->nr_data;
	if (block)
		memcpy(log->data + log->nr_data++ * F2FS_BLKSIZE, block, F2FS_BLKSIZE);
	log->nr++;
	return true;
}

static int wlog_rw(struct f2fs_dev *dev, bool write, const struct iovec *iov, int iovcnt,
		   uint64_t off, size_t total)
{
	struct wlog *log = f2fs_dev_priv(dev);
	uint8_t *p = log->mem + off;

	for (int i = 0; i < iovcnt; i++) {
		if (write) {
			memcpy(p, iov[i].iov_base, iov[i].iov_len);
			for (size_t k = 0; log->recording && k < iov[i].iov_len; k += F2FS_BLKSIZE)
				if (!wlog_append(log, WLOG_WRITE,
						 (uint32_t)((size_t)(p - log->mem + k) / F2FS_BLKSIZE),
						 p + k))
					return -ENOMEM;
		} else {
			memcpy(iov[i].iov_base, p, iov[i].iov_len);
		}
		p += iov[i].iov_len;
	}
	return 0;
}

static int wlog_flush(struct f2fs_dev *dev)
{
	struct wlog *log = f2fs_dev_priv(dev);

	if (log->recording && !wlog_append(log, WLOG_FLUSH, 0, NULL))
		return -ENOMEM;
	return 0;
}

static const struct f2fs_dev_ops wlog_ops = {
	.rw = wlog_rw, .flush = wlog_flush, .discard = ovl_discard, .release = ovl_release,
	.in_memory = true,
};

int wlog_open_dev(struct wlog *log, uint8_t *mem, size_t len, struct f2fs_dev **out)
{
	log->mem = mem;
	log->len = len;
	return f2fs_dev_open_ops(&wlog_ops, log, len, false, out);
}

void wlog_free(struct wlog *log)
{
	free(log->rec);
	free(log->data);
	memset(log, 0, sizeof(*log));
}

const uint8_t *wlog_block(const struct wlog *log, const struct wlog_rec *r)
{
	return log->data + (size_t)r->data * F2FS_BLKSIZE;
}
