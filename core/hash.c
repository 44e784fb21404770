// SPDX-License-Identifier: GPL-2.0
/*
 * Directory entry hash: the TEA-based hash f2fs inherited from ext3.
 *
 * The hash selects the bucket at every level of the multi-level hash
 * table and is stored in each dentry, so it must be bit-exact with the
 * kernel's (fs/f2fs/hash.c).  Name bytes are taken as unsigned.
 * Casefolded directories hash the casefolded name instead; they are
 * refused before reaching here.
 */
#include "f2fs.h"

#define TEA_DELTA 0x9E3779B9u

/* 16 rounds of TEA over two state words, keyed by the 16-byte chunk. */
static void tea_transform(uint32_t buf[4], const uint32_t in[4])
{
	uint32_t sum = 0;
	uint32_t b0 = buf[0], b1 = buf[1];
	uint32_t a = in[0], b = in[1], c = in[2], d = in[3];

	for (int n = 0; n < 16; n++) {
		sum += TEA_DELTA;
		b0 += ((b1 << 4) + a) ^ (b1 + sum) ^ ((b1 >> 5) + b);
		b1 += ((b0 << 4) + c) ^ (b0 + sum) ^ ((b0 >> 5) + d);
	}
	buf[0] += b0;
	buf[1] += b1;
}

/*
 * Pack up to 16 bytes of msg into four words, big-endian within each
 * word, with the unused tail filled from a pad derived from the whole
 * remaining length (not the chunk length), as the kernel does.
 */
static void str2hashbuf(const uint8_t *msg, size_t len, uint32_t out[4])
{
	uint32_t pad = (uint32_t)len | ((uint32_t)len << 8);
	uint32_t val;
	int num = 4;
	size_t i;

	pad |= pad << 16;
	val = pad;
	if (len > 16)
		len = 16;
	for (i = 0; i < len; i++) {
		if (i % 4 == 0)
			val = pad;
		val = msg[i] + (val << 8);
		if (i % 4 == 3) {
			*out++ = val;
			val = pad;
			num--;
		}
	}
	if (--num >= 0)
		*out++ = val;
	while (--num >= 0)
		*out++ = pad;
}

uint32_t f2fs_dentry_hash(const uint8_t *name, size_t len)
{
	uint32_t buf[4] = { 0x67452301u, 0xefcdab89u, 0x98badcfeu, 0x10325476u };
	uint32_t in[4];
	const uint8_t *p = name;

	if ((len == 1 && name[0] == '.') ||
	    (len == 2 && name[0] == '.' && name[1] == '.'))
		return 0;

	for (;;) {
		str2hashbuf(p, len, in);
		tea_transform(buf, in);
		if (len <= 16)
			break;
		p += 16;
		len -= 16;
	}
	/*
	 * The kernel masks with ~F2FS_HASH_COL_BIT, but that bit is bit 63
	 * (a 64-bit constant), so on this 32-bit value the mask is a no-op:
	 * all 32 bits are stored on disk.  Masking bit 31 would make about
	 * half of all lookups miss.
	 */
	return buf[0];
}
