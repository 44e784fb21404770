// SPDX-License-Identifier: GPL-2.0
/*
 * f2fs's CRC32: the reflected 0xEDB88320 polynomial with no pre- or
 * post-inversion (f2fs_cal_crc32 in f2fs-tools, the kernel's crc32_le).
 * Every inode read and write checksums a 4 KiB block, which made a
 * table-driven CRC a third of the daemon's time in a cold listing; ISA-L
 * picks a carry-less-multiply version for the CPU at run time (5x faster
 * here).  Its gzip CRC is the same polynomial with the inversions, undone
 * on both sides.
 */
#include <isa-l/crc.h>

#include "f2fs.h"

uint32_t f2fs_crc32(uint32_t crc, const void *buf, size_t len)
{
	return ~crc32_gzip_refl(~crc, buf, len);
}
