// SPDX-License-Identifier: GPL-2.0
/*
 * UTF-8 case folding of casefolded directories, as the kernel's fs/unicode
 * computes it (utf8_casefold with the "nfdicf" table of Unicode 12.1.0):
 * canonical decomposition (NFD), full case folding (CaseFolding.txt status
 * C and F), Default_Ignorable_Code_Point removed, marks put in canonical
 * order.  The table is generated at build time by core/mkutf8data.py from
 * the Unicode Character Database that Debian's unicode-data package ships.
 *
 * What counts as invalid follows the kernel's trie walk: a sequence that is
 * not the shortest encoding of a code point up to U+10FFFF, a surrogate, a
 * truncated sequence, or a continuation byte as the very first byte.  A
 * stray continuation byte later in the name is passed through, as the
 * kernel's utf8byte() does (see utf8_emit_ordered); a NUL byte ends the
 * name.
 */
#include <string.h>

#include "f2fs.h"

struct utf8_entry {
	uint32_t cp;
	uint8_t ccc;		/* canonical combining class */
	uint8_t len;		/* code points in the folding; 0xff: folds to itself */
	uint16_t off;		/* into utf8_pool */
};

struct utf8_range {
	uint32_t first, last;
};

#include "utf8data.h"

#define UTF8_SELF 0xff

/* Hangul syllables decompose by arithmetic (Unicode 3.12). */
#define HANGUL_SBASE 0xAC00u
#define HANGUL_LBASE 0x1100u
#define HANGUL_VBASE 0x1161u
#define HANGUL_TBASE 0x11A7u
#define HANGUL_TCOUNT 28u
#define HANGUL_NCOUNT (21u * HANGUL_TCOUNT)
#define HANGUL_SCOUNT (19u * HANGUL_NCOUNT)

/*
 * Items of a folded name.  A boundary (an ignorable code point, which folds
 * to nothing) emits no bytes but, as in the kernel, ends a run of marks.
 * A raw item is a stray continuation byte, copied through.
 */
enum { ITEM_CP, ITEM_BOUNDARY, ITEM_RAW };

struct utf8_item {
	uint32_t cp;
	uint8_t ccc;
	uint8_t kind;
};

/* Enough for any folding that fits F2FS_NAME_LEN bytes; longer ones fail. */
#define UTF8_MAX_ITEMS 1024

static const struct utf8_entry *utf8_find(uint32_t cp)
{
	size_t lo = 0, hi = ARRAY_SIZE(utf8_table);

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (utf8_table[mid].cp == cp)
			return &utf8_table[mid];
		if (utf8_table[mid].cp < cp)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static bool is_ignorable(uint32_t cp)
{
	for (size_t i = 0; i < ARRAY_SIZE(utf8_ignorable); i++) {
		if (cp < utf8_ignorable[i].first)
			return false;
		if (cp <= utf8_ignorable[i].last)
			return true;
	}
	return false;
}

static uint8_t utf8_ccc(uint32_t cp)
{
	const struct utf8_entry *e = utf8_find(cp);

	return e ? e->ccc : 0;
}

/*
 * Decode one code point at s (n bytes left, n > 0, s[0] not a continuation
 * byte).  Returns its length, or 0 if the sequence is invalid.
 */
static size_t utf8_decode(const uint8_t *s, size_t n, uint32_t *cp)
{
	static const uint32_t min[5] = { 0, 0, 0x80, 0x800, 0x10000 };
	size_t len;
	uint32_t c;

	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	if (s[0] >= 0xF8 || s[0] < 0xC0)
		return 0;
	len = s[0] >= 0xF0 ? 4 : s[0] >= 0xE0 ? 3 : 2;
	if (n < len)
		return 0;
	c = s[0] & (0x7Fu >> len);
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xC0) != 0x80)
			return 0;
		c = (c << 6) | (s[i] & 0x3F);
	}
	if (c < min[len] || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF))
		return 0;
	*cp = c;
	return len;
}

static size_t utf8_encode(uint32_t c, uint8_t *out)
{
	if (c < 0x80) {
		out[0] = (uint8_t)c;
		return 1;
	}
	if (c < 0x800) {
		out[0] = (uint8_t)(0xC0 | (c >> 6));
		out[1] = (uint8_t)(0x80 | (c & 0x3F));
		return 2;
	}
	if (c < 0x10000) {
		out[0] = (uint8_t)(0xE0 | (c >> 12));
		out[1] = (uint8_t)(0x80 | ((c >> 6) & 0x3F));
		out[2] = (uint8_t)(0x80 | (c & 0x3F));
		return 3;
	}
	out[0] = (uint8_t)(0xF0 | (c >> 18));
	out[1] = (uint8_t)(0x80 | ((c >> 12) & 0x3F));
	out[2] = (uint8_t)(0x80 | ((c >> 6) & 0x3F));
	out[3] = (uint8_t)(0x80 | (c & 0x3F));
	return 4;
}

static int push(struct utf8_item *items, size_t *n, uint32_t cp, uint8_t ccc, uint8_t kind)
{
	if (*n >= UTF8_MAX_ITEMS)
		return -ENAMETOOLONG;
	items[*n].cp = cp;
	items[*n].ccc = ccc;
	items[*n].kind = kind;
	(*n)++;
	return 0;
}

/* Decompose and fold s into items.  0, -EINVAL or -ENAMETOOLONG. */
static int utf8_fold_items(const uint8_t *s, size_t len, struct utf8_item *items, size_t *n)
{
	size_t i = 0;
	int err = 0;

	*n = 0;
	if (len > 0 && (s[0] & 0xC0) == 0x80)
		return -EINVAL;
	while (i < len && s[i] && !err) {
		const struct utf8_entry *e;
		uint32_t cp;
		size_t cl;

		if ((s[i] & 0xC0) == 0x80) {
			err = push(items, n, s[i++], 0, ITEM_RAW);
			continue;
		}
		cl = utf8_decode(s + i, len - i, &cp);
		if (!cl)
			return -EINVAL;
		i += cl;
		if (is_ignorable(cp)) {
			err = push(items, n, 0, 0, ITEM_BOUNDARY);
		} else if (cp >= HANGUL_SBASE && cp < HANGUL_SBASE + HANGUL_SCOUNT) {
			uint32_t si = cp - HANGUL_SBASE;

			err = push(items, n, HANGUL_LBASE + si / HANGUL_NCOUNT, 0, ITEM_CP);
			if (!err)
				err = push(items, n, HANGUL_VBASE + si % HANGUL_NCOUNT / HANGUL_TCOUNT,
					   0, ITEM_CP);
			if (!err && si % HANGUL_TCOUNT)
				err = push(items, n, HANGUL_TBASE + si % HANGUL_TCOUNT, 0, ITEM_CP);
		} else if ((e = utf8_find(cp)) && e->len != UTF8_SELF) {
			if (e->len == 0)
				err = push(items, n, 0, 0, ITEM_BOUNDARY);
			for (uint8_t k = 0; k < e->len && !err; k++) {
				uint32_t m = utf8_pool[e->off + k];

				err = push(items, n, m, utf8_ccc(m), ITEM_CP);
			}
		} else {
			err = push(items, n, cp, e ? e->ccc : 0, ITEM_CP);
		}
	}
	return err;
}

/* Append one item's bytes; -EINVAL once out would leave no room for a NUL. */
static int emit(const struct utf8_item *it, uint8_t *out, size_t outlen, size_t *o)
{
	uint8_t buf[4];
	size_t bl;

	if (it->kind == ITEM_RAW) {
		buf[0] = (uint8_t)it->cp;
		bl = 1;
	} else {
		bl = utf8_encode(it->cp, buf);
	}
	if (*o + bl >= outlen)
		return -EINVAL;
	memcpy(out + *o, buf, bl);
	*o += bl;
	return 0;
}

/*
 * Canonical ordering, by the passes the kernel's utf8byte() makes: a run
 * of marks (class > 0) up to the next starter, ignorable or the end is
 * walked once to find its lowest class, then once per class, each pass
 * emitting the marks of that class in order.  For UTF-8 this is a stable
 * sort by class.  A stray continuation byte is emitted wherever a walk
 * meets it, so inside a run once per pass, as the kernel does: such a
 * name must hash as the kernel hashes it.
 */
static int utf8_emit_ordered(const struct utf8_item *items, size_t n, uint8_t *out,
			     size_t outlen)
{
	size_t i = 0, o = 0;
	int err = 0;

	while (i < n && !err) {
		size_t start, end;
		int cur = -1;

		if (items[i].kind != ITEM_CP || items[i].ccc == 0) {
			if (items[i].kind != ITEM_BOUNDARY)
				err = emit(&items[i], out, outlen, &o);
			i++;
			continue;
		}
		start = i;
		for (end = start; end < n; end++)
			if (items[end].kind == ITEM_BOUNDARY ||
			    (items[end].kind == ITEM_CP && items[end].ccc == 0))
				break;
		/* pass "-1" only finds the lowest class; each pass finds the next */
		for (;;) {
			int following = 256;

			for (size_t k = start; k < end && !err; k++) {
				int c = items[k].ccc;

				if (items[k].kind == ITEM_RAW || c == cur)
					err = emit(&items[k], out, outlen, &o);
				else if (c > cur && c < following)
					following = c;
			}
			if (err || following == 256)
				break;
			cur = following;
		}
		i = end;
	}
	return err ? err : (int)o;
}

int f2fs_utf8_casefold(const uint8_t *s, size_t len, uint8_t *out, size_t outlen)
{
	struct utf8_item items[UTF8_MAX_ITEMS];
	size_t n;
	int err = utf8_fold_items(s, len, items, &n);

	if (err == -ENAMETOOLONG)
		return -EINVAL;		/* cannot fit outlen, as the kernel's answer */
	if (err)
		return err;
	return utf8_emit_ordered(items, n, out, outlen);
}

int f2fs_utf8_match_folded(const uint8_t *cf, size_t cflen, const uint8_t *s, size_t len)
{
	uint8_t folded[4 * UTF8_MAX_ITEMS + 1];
	int n = f2fs_utf8_casefold(s, len, folded, sizeof(folded));

	if (n < 0)
		return n;
	return (size_t)n == cflen && memcmp(folded, cf, cflen) == 0;
}
