/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The inodes the kernel holds: node ids counted from entry replies and
 * FORGETs as the kernel counts them (inodes.c).  The core keeps an unlinked
 * inode, as an orphan, while the kernel still holds it; key changes flush
 * what the kernel cached of the held inodes that use the key.
 */
#ifndef F2FS_FUSE_INODES_H
#define F2FS_FUSE_INODES_H

#include "f2fs_fuse.h"

int f2fs_fuse_inodes_init(struct f2fs_fuse_inodes *t);
void f2fs_fuse_inodes_destroy(struct f2fs_fuse_inodes *t);
/* An entry reply is about to name ino. */
void f2fs_fuse_inodes_lookup(struct f2fs_fuse_inodes *t, fuse_ino_t ino);
/* The kernel forgot nlookup of ino's lookups; true if it holds it no more. */
bool f2fs_fuse_inodes_forget(struct f2fs_fuse_inodes *t, fuse_ino_t ino, uint64_t nlookup);
bool f2fs_fuse_inodes_held(struct f2fs_fuse_inodes *t, fuse_ino_t ino);
/* The root and every held node id, copied out (malloc'd; NULL if out of memory). */
fuse_ino_t *f2fs_fuse_inodes_list(struct f2fs_fuse_inodes *t, size_t *n);

#endif
