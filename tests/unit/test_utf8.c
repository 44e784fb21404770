// SPDX-License-Identifier: GPL-2.0
/*
 * f2fs_utf8_casefold (core/utf8.c) against the kernel's utf8_casefold:
 *   - the folded names the Linux 6.1 kernel hashed in a directory it made
 *     (tests/unit/fscrypt_casefold_vectors.h: their SipHash matches the
 *     on-disk hash codes, so these are the kernel's foldings);
 *   - the rules of fs/unicode/mkutf8data.c and utf8-norm.c, case by case:
 *     full folding (status F: ß -> ss), canonical but not compatibility
 *     decomposition, Hangul, ignorables removed and ending a run of marks,
 *     canonical order of marks, characters newer than 12.1.0 unchanged, and
 *     what is not UTF-8.
 * With --dump, prints "code point: folded bytes (hex)" for every code point
 * instead, for tests/unit/check_utf8.py to compare with Python's own
 * Unicode tables.
 */
#include "f2fs.h"
#include "check.h"
#include "fscrypt_casefold_vectors.h"

static void fold_is(const char *in, size_t inlen, const char *want, const char *what)
{
	uint8_t out[F2FS_NAME_LEN];
	int n = f2fs_utf8_casefold((const uint8_t *)in, inlen, out, sizeof(out));

	CHECK(n == (int)strlen(want) && memcmp(out, want, strlen(want)) == 0,
	      "%s: got %d bytes", what, n);
}

#define FOLD(in, want) fold_is(in, sizeof(in) - 1, want, in)

static void invalid(const char *in, size_t inlen, const char *what)
{
	uint8_t out[F2FS_NAME_LEN];

	CHECK_EQ_U64(f2fs_utf8_casefold((const uint8_t *)in, inlen, out, sizeof(out)),
		     (uint64_t)-EINVAL, what);
}

#define INVALID(in) invalid(in, sizeof(in) - 1, #in)

static int dump(void)
{
	for (uint32_t cp = 1; cp <= 0x10FFFF; cp++) {
		uint8_t in[4], out[F2FS_NAME_LEN];
		size_t il;
		int n;

		if (cp >= 0xD800 && cp <= 0xDFFF)
			continue;
		if (cp < 0x80) {
			in[0] = (uint8_t)cp;
			il = 1;
		} else if (cp < 0x800) {
			in[0] = (uint8_t)(0xC0 | cp >> 6);
			in[1] = (uint8_t)(0x80 | (cp & 0x3F));
			il = 2;
		} else if (cp < 0x10000) {
			in[0] = (uint8_t)(0xE0 | cp >> 12);
			in[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
			in[2] = (uint8_t)(0x80 | (cp & 0x3F));
			il = 3;
		} else {
			in[0] = (uint8_t)(0xF0 | cp >> 18);
			in[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3F));
			in[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
			in[3] = (uint8_t)(0x80 | (cp & 0x3F));
			il = 4;
		}
		n = f2fs_utf8_casefold(in, il, out, sizeof(out));
		printf("%x:", cp);
		for (int i = 0; i < n; i++)
			printf("%02x", out[i]);
		putchar('\n');
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "--dump") == 0)
		return dump();

	for (size_t i = 0; i < ARRAY_SIZE(cf_plain); i++)
		fold_is(cf_plain[i], strlen(cf_plain[i]), cf_folded[i], cf_plain[i]);

	FOLD("Hello.TXT", "hello.txt");
	FOLD("Stra\xc3\x9f" "e", "strasse");			/* ß: status F */
	FOLD("\xe1\xba\x9e", "ss");				/* ẞ U+1E9E */
	FOLD("\xe2\x84\xaa", "k");				/* Kelvin sign */
	FOLD("\xe2\x84\xab", "a\xcc\x8a");			/* Angstrom sign */
	FOLD("\xc3\x85", "a\xcc\x8a");				/* Å precomposed */
	FOLD("A\xcc\x8a", "a\xcc\x8a");				/* Å decomposed */
	FOLD("\xc4\xb0", "i\xcc\x87");				/* Turkish İ (F, not T) */
	FOLD("\xef\xac\x81", "fi");				/* ﬁ ligature: F */
	FOLD("\xce\xa3\xcf\x82", "\xcf\x83\xcf\x83");		/* Σς -> σσ */
	FOLD("\xd0\x96\xd0\xb4", "\xd0\xb6\xd0\xb4");		/* Жд */
	FOLD("\xef\xbc\xa1", "\xef\xbd\x81");			/* fullwidth A: no NFKD */
	FOLD("\xe2\x91\xa0", "\xe2\x91\xa0");			/* circled 1: compat kept */
	FOLD("\xe1\x83\x90", "\xe1\x83\x90");			/* Georgian: lower stays */
	FOLD("\xe1\xb2\x90", "\xe1\x83\x90");			/* Mtavruli (11.0) folds */
	FOLD("\xea\xb0\x80", "\xe1\x84\x80\xe1\x85\xa1");	/* 가 */
	FOLD("\xed\x95\x9c", "\xe1\x84\x92\xe1\x85\xa1\xe1\x86\xab");	/* 한 */
	FOLD("\xe4\xb8\xad\xe6\x96\x87", "\xe4\xb8\xad\xe6\x96\x87");	/* CJK */
	FOLD("\xf0\x9f\x98\x80", "\xf0\x9f\x98\x80");		/* emoji */
	FOLD("a\xe2\x80\x8b" "b", "ab");			/* ZWSP ignored */
	FOLD("\xc2\xad", "");					/* soft hyphen alone */
	/* marks in canonical order: cedilla (202) before acute (230) */
	FOLD("a\xcc\x81\xcc\xa7", "a\xcc\xa7\xcc\x81");
	FOLD("a\xcc\xa7\xcc\x81", "a\xcc\xa7\xcc\x81");
	/* a combining grapheme joiner (ignorable) ends the run: no reorder */
	FOLD("a\xcc\x81\xcd\x8f\xcc\xa7", "a\xcc\x81\xcc\xa7");
	/* ǅ (title case) -> ǆ; ώ (tonos) -> ω + acute */
	FOLD("\xc7\x85", "\xc7\x86");
	FOLD("\xce\x8f", "\xcf\x89\xcc\x81");
	/* newer than 12.1.0: U+A7C7 (13.0) and U+180F (14.0) stay as they are */
	FOLD("\xea\x9f\x87", "\xea\x9f\x87");
	FOLD("\xe1\xa0\x8f", "\xe1\xa0\x8f");
	/* a stray continuation byte after the first is copied... */
	FOLD("A\x80", "a\x80");
	FOLD("A\x80\xcc\x81", "a\x80\xcc\x81");
	/* ...once per pass of the kernel's mark ordering when inside a run:
	 * one pass finds the lowest class, one emits cedilla (202), one acute */
	FOLD("A\xcc\x81\x80\xcc\xa7", "a\x80\x80\xcc\xa7\xcc\x81\x80");
	FOLD("\xc3\xa9\x80", "e\x80\xcc\x81\x80");

	INVALID("\xff");
	INVALID("name\xff");
	INVALID("\x80" "abc");				/* continuation first */
	INVALID("\xc0\x80");				/* overlong NUL */
	INVALID("\xe0\x80\xaf");			/* overlong '/' */
	INVALID("\xed\xa0\x80");			/* surrogate */
	INVALID("\xf4\x90\x80\x80");			/* past U+10FFFF */
	INVALID("\xe4\xb8");				/* truncated */

	/* a folding must leave room for the kernel's NUL: 254 bytes at most */
	{
		char name[256];
		uint8_t out[F2FS_NAME_LEN];

		memset(name, 'A', sizeof(name));
		CHECK_EQ_U64(f2fs_utf8_casefold((uint8_t *)name, 254, out, sizeof(out)), 254,
			     "254 bytes");
		CHECK_EQ_U64(f2fs_utf8_casefold((uint8_t *)name, 255, out, sizeof(out)),
			     (uint64_t)-EINVAL, "255 bytes");
		/* 127 ß fold to 254 bytes; one more byte does not fit */
		for (int i = 0; i < 127; i++)
			memcpy(name + 2 * i, "\xc3\x9f", 2);
		name[254] = 'x';
		CHECK_EQ_U64(f2fs_utf8_casefold((uint8_t *)name, 254, out, sizeof(out)), 254,
			     "127 sharp s");
		CHECK_EQ_U64(f2fs_utf8_casefold((uint8_t *)name, 255, out, sizeof(out)),
			     (uint64_t)-EINVAL, "127 sharp s and x");
		/* ẞ (3 bytes) folds to 2: a 255-byte name can fold short enough */
		for (int i = 0; i < 85; i++)
			memcpy(name + 3 * i, "\xe1\xba\x9e", 3);
		CHECK_EQ_U64(f2fs_utf8_casefold((uint8_t *)name, 255, out, sizeof(out)), 170,
			     "85 capital sharp s");
	}

	CHECK(f2fs_utf8_match_folded((const uint8_t *)"strasse", 7,
				     (const uint8_t *)"STRASSE", 7) == 1, "match");
	CHECK(f2fs_utf8_match_folded((const uint8_t *)"strasse", 7,
				     (const uint8_t *)"Stra\xc3\x9f" "e", 7) == 1, "match sharp s");
	CHECK(f2fs_utf8_match_folded((const uint8_t *)"strasse", 7,
				     (const uint8_t *)"strass", 6) == 0, "no match");
	CHECK(f2fs_utf8_match_folded((const uint8_t *)"x", 1,
				     (const uint8_t *)"\xff", 1) == -EINVAL, "invalid entry");
	return check_done("test_utf8");
}
