// SPDX-License-Identifier: GPL-2.0
/*
 * The key spellings shared by f2fs-fusectl and the daemon
 * (fuse/keyctl_proto.h): hex key specifiers (16 digits a v1 descriptor,
 * 32 a v2 identifier) and the DESCRIPTOR:PATH value of -o v1_key_file=.
 */
#include "check.h"
#include "../../fuse/keyctl_proto.h"

static const uint8_t desc_bytes[8] = { 0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef };

static void test_spec(void)
{
	struct f2fs_keyctl_key_spec spec;
	static const uint8_t zero8[8];

	CHECK(f2fs_keyctl_parse_spec("0123456789abcdef", &spec), "descriptor");
	CHECK(spec.type == F2FS_KEYCTL_SPEC_DESCRIPTOR, "descriptor type %u", spec.type);
	CHECK(!memcmp(spec.u, desc_bytes, 8) && !memcmp(spec.u + 8, zero8, 8),
	      "descriptor bytes, the rest zero");
	CHECK(f2fs_keyctl_parse_spec("0123456789ABCDEF", &spec) &&
	      !memcmp(spec.u, desc_bytes, 8), "upper case");

	CHECK(f2fs_keyctl_parse_spec("eeec05e6ebadb5814c861095d859e167", &spec), "identifier");
	CHECK(spec.type == F2FS_KEYCTL_SPEC_IDENTIFIER, "identifier type %u", spec.type);
	CHECK(spec.u[0] == 0xee && spec.u[15] == 0x67 && spec.reserved == 0, "identifier bytes");

	static const char *const bad[] = {
		"", "0", "0123456789abcde", "0123456789abcdef0", "0123456789abcdeg",
		"eeec05e6ebadb5814c861095d859e16", "eeec05e6ebadb5814c861095d859e1670",
		"eeec05e6ebadb5814c861095d859e16z", " 123456789abcdef", "0x23456789abcdef",
		"0123456789abcdef0123456789abcdef0123456789abcdef",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(&spec, 0xaa, sizeof(spec));
		CHECK(!f2fs_keyctl_parse_spec(bad[i], &spec), "refused: \"%s\"", bad[i]);
		CHECK(spec.type == 0, "nothing left behind for \"%s\"", bad[i]);
	}
}

static void test_v1_key_file(void)
{
	uint8_t desc[8];
	const char *path;

	path = f2fs_keyctl_split_v1_key_file("0123456789abcdef:/etc/keys/a.key", desc);
	CHECK(path && !strcmp(path, "/etc/keys/a.key"), "path %s", path ? path : "(null)");
	CHECK(!memcmp(desc, desc_bytes, 8), "descriptor");
	/* a path may hold colons; only the first one ends the descriptor */
	path = f2fs_keyctl_split_v1_key_file("0123456789abcdef:dir:with:colons", desc);
	CHECK(path && !strcmp(path, "dir:with:colons"), "colons in the path");

	static const char *const bad[] = {
		"",
		"0123456789abcdef",			/* no path */
		"0123456789abcdef:",			/* empty path */
		":/k",					/* no descriptor */
		"0123456789abcde:/k",			/* 15 digits */
		"0123456789abcdef0:/k",			/* 17 digits */
		"0123456789abcdeg:/k",			/* not hex */
		"eeec05e6ebadb5814c861095d859e167:/k",	/* an identifier */
		"/etc/keys/a.key",			/* a plain key_file= value */
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK(!f2fs_keyctl_split_v1_key_file(bad[i], desc), "refused: \"%s\"", bad[i]);
}

int main(void)
{
	test_spec();
	test_v1_key_file();
	return check_done("test_keyctl_parse");
}
