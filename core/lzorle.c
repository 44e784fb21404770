// SPDX-License-Identifier: GPL-2.0
/*
 * lzo-rle decompression, for COMPRESS_LZORLE clusters.
 *
 * lzo-rle is the Linux kernel's own LZO variant (lib/lzo): an LZO1X stream
 * that begins with the byte 17 and a bitstream version; from version 1 on,
 * one M4 encoding means a run of zero bytes instead of a match:
 *
 *   an M4 opcode 0x18-0x1f (the one whose 16 KiB distance bit is set), a
 *   16-bit word whose upper 14 bits are all ones (a distance no version 1
 *   compressor uses for a match), one more byte B:
 *   run = 4 + (opcode & 7) + 8 * B zero bytes, then (word & 3) literals.
 *
 * liblzo2 has neither: it refuses the version header, and a stream with the
 * header stripped would have each zero run copied from 48 KiB back, wrong
 * bytes instead of an error.  So the LZO1X decoder is written out here, for
 * lzo-rle only (COMPRESS_LZO goes to liblzo2).  It accepts exactly what the
 * kernel's lzo1x_decompress_safe accepts, which is what f2fs reads those
 * clusters with: the header is only looked for in streams of 5 bytes or
 * more, a run of literals must leave 3 input bytes behind it (room for the
 * end marker), and the stream must end with the end marker, the last byte
 * of input.  Every input byte read and every output byte written is
 * checked against the buffers.
 */
#include <string.h>

#include "f2fs.h"

#define M2_MAX_OFFSET	0x0800	/* M1 matches after a literal run start past it */
#define M4_BASE		0x4000	/* M4 distances count from 16 KiB */
#define MIN_ZERO_RUN	4

struct lzo_stream {
	const uint8_t *ip, *ip_end;
	uint8_t *op, *op_end;
	const uint8_t *out;
};

static bool have_in(const struct lzo_stream *s, size_t n)
{
	return (size_t)(s->ip_end - s->ip) >= n;
}

static bool have_out(const struct lzo_stream *s, size_t n)
{
	return (size_t)(s->op_end - s->op) >= n;
}

/*
 * A length that did not fit its opcode: each zero byte adds 255, the first
 * nonzero byte adds itself, on top of base.
 */
static bool long_length(struct lzo_stream *s, size_t base, size_t *len)
{
	size_t zeros = 0;

	while (have_in(s, 1) && *s->ip == 0) {
		s->ip++;
		zeros++;
	}
	if (!have_in(s, 1))
		return false;
	*len = base + zeros * 255 + *s->ip++;
	return true;
}

/* Copy n literals; the stream must keep 3 bytes for what follows them. */
static bool copy_literals(struct lzo_stream *s, size_t n)
{
	if (n > SIZE_MAX - 3 || !have_in(s, n + 3) || !have_out(s, n))
		return false;
	memcpy(s->op, s->ip, n);
	s->op += n;
	s->ip += n;
	return true;
}

/* Copy len bytes from dist back; the byte loop repeats overlapping sources. */
static bool copy_match(struct lzo_stream *s, size_t dist, size_t len)
{
	const uint8_t *from;

	if (dist > (size_t)(s->op - s->out) || !have_out(s, len))
		return false;
	from = s->op - dist;
	while (len--)
		*s->op++ = *from++;
	return true;
}

int f2fs_lzorle_decompress(const uint8_t *in, size_t in_len, uint8_t *out, size_t *out_len)
{
	struct lzo_stream s = {
		.ip = in, .ip_end = in + in_len, .op = out, .op_end = out + *out_len, .out = out,
	};
	unsigned int version = 0;
	size_t state = 0;	/* literals after the last match (0-3), 4 after a run */
	size_t t, len, dist, lits;

	if (in_len < 3)
		goto bad;
	if (in_len >= 5 && in[0] == 17) {
		version = in[1];
		s.ip += 2;
	}
	if (*s.ip > 17) {
		/* the first opcode may be a bare literal count */
		t = *s.ip++ - 17u;
		if (t < 4) {
			lits = t;
			goto trailing;
		}
		if (!copy_literals(&s, t))
			goto bad;
		state = 4;
	}
	for (;;) {
		uint32_t w;

		if (!have_in(&s, 1))
			goto bad;
		t = *s.ip++;
		if (t < 16) {
			if (state == 0) {
				/* a literal run */
				len = t + 3;
				if (t == 0 && !long_length(&s, 18, &len))
					goto bad;
				if (!copy_literals(&s, len))
					goto bad;
				state = 4;
				continue;
			}
			/* M1: after a match's own literals two bytes close by,
			 * after a literal run three bytes 2-3 KiB back */
			if (!have_in(&s, 1))
				goto bad;
			dist = 1 + (t >> 2) + ((size_t)*s.ip++ << 2);
			len = 2;
			if (state == 4) {
				dist += M2_MAX_OFFSET;
				len = 3;
			}
			lits = t & 3;
		} else if (t >= 64) {
			/* M2: 3-8 bytes up to 2 KiB back */
			if (!have_in(&s, 1))
				goto bad;
			dist = 1 + ((t >> 2) & 7) + ((size_t)*s.ip++ << 3);
			len = (t >> 5) + 1;
			lits = t & 3;
		} else if (t >= 32) {
			/* M3: up to 16 KiB back */
			len = (t & 31) + 2;
			if (len == 2 && !long_length(&s, 33, &len))
				goto bad;
			if (!have_in(&s, 2))
				goto bad;
			w = get_le16(s.ip);
			s.ip += 2;
			dist = 1 + (w >> 2);
			lits = w & 3;
		} else {
			/* M4: 16-48 KiB back, the end marker, or an lzo-rle zero run */
			if (!have_in(&s, 2))
				goto bad;
			w = get_le16(s.ip);
			if (version && (t & 0xf8) == 0x18 && (w & 0xfffc) == 0xfffc) {
				if (!have_in(&s, 3))
					goto bad;
				len = MIN_ZERO_RUN + (t & 7) + ((size_t)s.ip[2] << 3);
				if (!have_out(&s, len))
					goto bad;
				memset(s.op, 0, len);
				s.op += len;
				s.ip += 3;
				lits = w & 3;
				goto trailing;
			}
			len = (t & 7) + 2;
			if (len == 2) {
				if (!long_length(&s, 9, &len) || !have_in(&s, 2))
					goto bad;
				w = get_le16(s.ip);
			}
			s.ip += 2;
			dist = ((t & 8) << 11) + (w >> 2);
			lits = w & 3;
			if (dist == 0)
				break;	/* the end marker */
			dist += M4_BASE;
		}
		if (!copy_match(&s, dist, len))
			goto bad;
trailing:
		/* the low bits of a match give the literals that follow it */
		state = lits;
		if (!copy_literals(&s, lits))
			goto bad;
	}
	/* the end marker is an M4 of length 3 at distance 0, and the last input */
	*out_len = (size_t)(s.op - out);
	return len == 3 && s.ip == s.ip_end ? 0 : -EIO;
bad:
	*out_len = (size_t)(s.op - out);
	return -EIO;
}
