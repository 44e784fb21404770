/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Extent precache and cache control: the ioctl numbers the daemon
 * (fuse/precache.c) answers and f2fs-fusectl sends.  Neither carries data,
 * so the kernel's FUSE layer forwards them as they are.
 */
#ifndef F2FS_CACHECTL_H
#define F2FS_CACHECTL_H

#include <sys/ioctl.h>

/* The kernel's own number (include/uapi/linux/f2fs.h), so programs written
 * for the kernel's f2fs work unchanged. */
#ifndef F2FS_IOC_PRECACHE_EXTENTS
#define F2FS_IOC_PRECACHE_EXTENTS	_IO(0xf5, 15)
#endif

/* Forget the daemon's clean node, NAT and meta blocks and read extent runs:
 * the next reads measure the device.  On any file or directory of the mount;
 * the mount's owner or CAP_SYS_ADMIN. */
#define F2FS_FUSE_IOC_DROP_CACHES	_IO(0xF2, 0x41)

#endif /* F2FS_CACHECTL_H */
