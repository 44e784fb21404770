/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Test-only device backends (struct f2fs_dev_ops):
 *
 * - the copy-on-write overlay: a shared read-only base image (a seed, often
 *   mmap()ed from a sparse file) under a small set of private blocks.  The
 *   fuzzers patch an input into the overlay, mount it, and reset it: nothing
 *   the size of an image is copied per input.  Writes of the mount land in
 *   the overlay too and are counted, so a harness can assert that a mount
 *   that failed wrote nothing.
 *
 * - the write log: a memory image that also records every write and flush
 *   in order, so that a crash test can rebuild the device as it was at any
 *   point of a workload (every flush, any write in between, and with the
 *   writes of the last flush epoch dropped or reordered).
 */
#ifndef F2FS_TEST_TESTDEV_H
#define F2FS_TEST_TESTDEV_H

#include <stddef.h>
#include <stdint.h>

#include "f2fs.h"

/* ---- copy-on-write overlay ---- */

struct ovl;

/* An overlay over base (len bytes, not copied, must outlive the overlay). */
struct ovl *ovl_new(const uint8_t *base, size_t len);
void ovl_free(struct ovl *o);
/* A device on the overlay; closing it leaves the overlay and its blocks alone. */
int ovl_open_dev(struct ovl *o, bool readonly, struct f2fs_dev **out);
/* The overlay's private copy of block b (made from the base on first use); NULL if out of range. */
uint8_t *ovl_block(struct ovl *o, uint32_t b);
/* The current contents of block b, private or base (never NULL for b in range). */
const uint8_t *ovl_peek(const struct ovl *o, uint32_t b);
/* Forget every private block and the counters: the overlay is the base again. */
void ovl_reset(struct ovl *o);
/* Zero the write and flush counters only (after a harness's own patches). */
void ovl_reset_counters(struct ovl *o);
uint32_t ovl_nr_blocks(const struct ovl *o);
/* Device writes (blocks), flushes and discards since the last reset; patches are not counted. */
uint64_t ovl_written_blocks(const struct ovl *o);
uint64_t ovl_flushes(const struct ovl *o);
/* The lowest block a device write reached since the last reset (UINT32_MAX: none). */
uint32_t ovl_lowest_write(const struct ovl *o);
/* Private blocks in use, for a harness that bounds memory. */
uint32_t ovl_nr_private(const struct ovl *o);
/* The i-th private block (i < ovl_nr_private): its number, and its bytes. */
const uint8_t *ovl_private(const struct ovl *o, uint32_t i, uint32_t *blkaddr);

/* ---- write log ---- */

enum wlog_kind { WLOG_WRITE, WLOG_FLUSH };

struct wlog_rec {
	enum wlog_kind kind;
	uint32_t blkaddr;	/* WLOG_WRITE: one block per record */
	uint32_t data;		/* index of the block's bytes in the log's data store */
};

struct wlog {
	uint8_t *mem;		/* the live image the mount reads and writes */
	size_t len;
	struct wlog_rec *rec;
	size_t nr, cap;
	uint8_t *data;		/* written blocks, 4 KiB each, in record order */
	size_t nr_data, cap_data;
	bool recording;
};

/* A device on mem (len bytes, written in place) that logs while log->recording. */
int wlog_open_dev(struct wlog *log, uint8_t *mem, size_t len, struct f2fs_dev **out);
void wlog_free(struct wlog *log);
const uint8_t *wlog_block(const struct wlog *log, const struct wlog_rec *r);

#endif
