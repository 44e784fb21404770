// SPDX-License-Identifier: GPL-2.0
/*
 * Keys and policies, with the subcommands and output of fscryptctl:
 * add_key, remove_key, key_status, get_policy, set_policy.
 */
#include "fusectl.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

/* Mode and flag numbers as in <linux/fscrypt.h> (also on macOS, without it). */
enum {
	MODE_AES_256_XTS = 1,
	MODE_AES_256_CTS = 4,
	MODE_AES_128_CBC = 5,
	MODE_AES_128_CTS = 6,
	MODE_SM4_XTS = 7,
	MODE_SM4_CTS = 8,
	MODE_ADIANTUM = 9,
	MODE_AES_256_HCTR2 = 10,
};
#define FLAG_PAD_MASK		0x03
#define FLAG_DIRECT_KEY		0x04
#define FLAG_IV_INO_LBLK_64	0x08
#define FLAG_IV_INO_LBLK_32	0x10

static const struct {
	uint8_t mode;
	const char *name;
	bool contents, filenames;	/* settable with --contents / --filenames */
	unsigned int keysize;		/* the least master key the kernel takes for it */
} modes[] = {
	{ MODE_AES_256_XTS, "AES-256-XTS", true, false, 64 },
	{ MODE_AES_256_CTS, "AES-256-CTS", false, true, 32 },
	{ MODE_AES_128_CBC, "AES-128-CBC", true, false, 16 },
	{ MODE_AES_128_CTS, "AES-128-CTS", false, true, 16 },
	{ MODE_SM4_XTS, "SM4-XTS", false, false, 32 },
	{ MODE_SM4_CTS, "SM4-CTS", false, false, 16 },
	{ MODE_ADIANTUM, "Adiantum", true, true, 32 },
	{ MODE_AES_256_HCTR2, "AES-256-HCTR2", false, true, 32 },
};

/* A key identifier or descriptor from the command line, with the error message. */
static bool parse_key(const char *s, struct f2fs_keyctl_key_spec *spec)
{
	if (f2fs_keyctl_parse_spec(s, spec))
		return true;
	fail("invalid key identifier: %s (32 hex digits, or 16 for a v1 key descriptor)", s);
	return false;
}

static void spec_hex(const struct f2fs_keyctl_key_spec *spec, char *out)
{
	to_hex(spec->u, spec->type == F2FS_KEYCTL_SPEC_DESCRIPTOR ? F2FS_KEYCTL_DESC_SIZE
								   : F2FS_KEYCTL_ID_SIZE, out);
}

/* A raw key from fd: 16..64 bytes, one more byte means too long. */
static int read_key(int fd, uint8_t *buf, size_t *len)
{
	size_t got = 0;

	while (got <= F2FS_KEYCTL_MAX_KEY) {
		ssize_t n = read(fd, buf + got, F2FS_KEYCTL_MAX_KEY + 1 - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return fail("reading the key: %s", strerror(errno));
		if (n == 0)
			break;
		got += (size_t)n;
	}
	if (got > F2FS_KEYCTL_MAX_KEY)
		return fail("key is too long (a raw key has at most %d bytes)",
			    F2FS_KEYCTL_MAX_KEY);
	if (got < F2FS_KEYCTL_MIN_KEY)
		return fail("key is too short (%zu bytes; a raw key has at least %d)", got,
			    F2FS_KEYCTL_MIN_KEY);
	*len = got;
	return 0;
}

int cmd_add_key(int argc, char *argv[])
{
	static const struct option opts[] = {
		{ "key-file", required_argument, NULL, 'k' },
		{ "descriptor", required_argument, NULL, 'd' },
		{ NULL, 0, NULL, 0 },
	};
	const char *key_file = NULL;
	struct f2fs_keyctl_add *a;
	struct f2fs_keyctl_key_spec spec = { .type = F2FS_KEYCTL_SPEC_IDENTIFIER };
	char hex[2 * F2FS_KEYCTL_ID_SIZE + 1];
	size_t len = 0;
	int ch, fd = STDIN_FILENO, rc = EXIT_SUCCESS;

	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (ch == 'k') {
			key_file = optarg;
		} else if (ch == 'd') {
			if (!f2fs_keyctl_parse_spec(optarg, &spec) ||
			    spec.type != F2FS_KEYCTL_SPEC_DESCRIPTOR)
				return fail("invalid key descriptor: %s (16 hex digits)", optarg);
		} else {
			usage(stderr);
			return EXIT_FAILURE;
		}
	}
	if (optind >= argc)
		return fail("must specify at least one mountpoint");
	/* No core dump while a key is in memory (copies on the stack included). */
	setrlimit(RLIMIT_CORE, &(struct rlimit){ 0, 0 });
	/* The key lives in a locked page that core dumps leave out. */
	a = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (a == MAP_FAILED)
		return fail("%s", strerror(errno));
	(void)mlock(a, 4096);
#ifdef MADV_DONTDUMP
	(void)madvise(a, 4096, MADV_DONTDUMP);
#endif
	if (key_file) {
		fd = open(key_file, O_RDONLY | O_NOCTTY);
		if (fd < 0) {
			rc = fail("%s: %s", key_file, strerror(errno));
			goto out;
		}
	} else if (isatty(STDIN_FILENO)) {
		fputs(PROG ": reading the raw key from the terminal; use a pipe or "
		      "--key-file\n", stderr);
	}
	memset(a, 0, sizeof(*a));
	rc = read_key(fd, a->raw, &len);
	if (key_file)
		close(fd);
	if (rc)
		goto out;
	for (int i = optind; i < argc; i++) {
		/* A fresh copy per mount, in the same locked page. */
		struct f2fs_keyctl_add *io = a + 1;
		int err;

		*io = *a;
		io->spec = spec;
		io->raw_size = (uint32_t)len;
		err = request(argv[i], false, F2FS_IOC_ADD_KEY, F2FS_KEYCTL_OP_ADD_KEY, io,
			      sizeof(*io));
		if (err == -EACCES && spec.type == F2FS_KEYCTL_SPEC_DESCRIPTOR) {
			rc = fail("adding key to %s: %s (only root or the user who mounted may add "
				  "v1 keys)", argv[i], strerror(EACCES));
		} else if (err == -EEXIST && spec.type == F2FS_KEYCTL_SPEC_DESCRIPTOR) {
			rc = fail("adding key to %s: a different key is present under this "
				  "descriptor (remove it first)", argv[i]);
		} else if (err) {
			rc = fail("adding key to %s: %s", argv[i], errmsg(-err));
		} else {
			spec_hex(&io->spec, hex);
			if (i == optind)
				puts(hex);
		}
		wipe(io, sizeof(*io));
	}
out:
	wipe(a, 4096);
	munmap(a, 4096);
	return rc;
}

int cmd_remove_key(int argc, char *argv[])
{
	static const struct option opts[] = {
		{ "all-users", no_argument, NULL, 'a' },
		{ NULL, 0, NULL, 0 },
	};
	struct f2fs_keyctl_remove r;
	int ch, err;

	memset(&r, 0, sizeof(r));
	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (ch != 'a') {
			usage(stderr);
			return EXIT_FAILURE;
		}
		r.flags |= F2FS_KEYCTL_REMOVE_ALL_USERS;
	}
	if (argc - optind != 2)
		return fail("must specify a key identifier and a mountpoint");
	if (!parse_key(argv[optind], &r.spec))
		return EXIT_FAILURE;
	err = request(argv[optind + 1], false, F2FS_IOC_REMOVE_KEY, F2FS_KEYCTL_OP_REMOVE_KEY,
		      &r, sizeof(r));
	if (err == -EACCES)
		return fail("removing key: %s (%s)", strerror(EACCES),
			    r.spec.type == F2FS_KEYCTL_SPEC_DESCRIPTOR ?
			    "only root or the user who mounted may remove v1 keys" :
			    "only root or a user who added the key may remove it");
	if (err)
		return fail("removing key: %s", errmsg(-err));
	if (r.status_flags & F2FS_KEYCTL_REMOVAL_OTHER_USERS)
		fprintf(stderr, PROG ": warning: other users still have this key added\n");
	return EXIT_SUCCESS;
}

int cmd_key_status(int argc, char *argv[])
{
	struct f2fs_keyctl_status s;
	int err;

	if (!no_extra_options(argc, argv))
		return EXIT_FAILURE;
	if (argc != 3)
		return fail("must specify a key identifier and a mountpoint");
	memset(&s, 0, sizeof(s));
	if (!parse_key(argv[1], &s.spec))
		return EXIT_FAILURE;
	err = request(argv[2], false, F2FS_IOC_KEY_STATUS, F2FS_KEYCTL_OP_KEY_STATUS, &s,
		      sizeof(s));
	if (err)
		return fail("getting key status: %s", errmsg(-err));
	/* as fscryptctl: no parentheses for a key without users (v1) */
	if (s.status == F2FS_KEYCTL_STATUS_PRESENT && !s.user_count && !s.status_flags)
		puts("Present");
	else if (s.status == F2FS_KEYCTL_STATUS_PRESENT)
		printf("Present (user_count=%u%s)\n", s.user_count,
		       (s.status_flags & F2FS_KEYCTL_STATUS_FLAG_ADDED_BY_SELF) ?
		       ", added_by_self" : "");
	else if (s.status == F2FS_KEYCTL_STATUS_ABSENT)
		puts("Absent");
	else
		printf("Unknown status (%u)\n", s.status);
	return EXIT_SUCCESS;
}

static const char *mode_name(uint8_t mode)
{
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		if (modes[i].mode == mode)
			return modes[i].name;
	return NULL;
}

static unsigned int mode_keysize(uint8_t mode)
{
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		if (modes[i].mode == mode)
			return modes[i].keysize;
	return 0;
}

static void show_mode(const char *what, uint8_t mode)
{
	const char *name = mode_name(mode);

	if (name)
		printf("\t%s encryption mode: %s\n", what, name);
	else
		printf("\t%s encryption mode: Unknown (%u)\n", what, mode);
}

static void show_flags(uint8_t flags)
{
	printf("\tFlags: PAD_%d", 4 << (flags & FLAG_PAD_MASK));
	if (flags & FLAG_DIRECT_KEY)
		printf(", DIRECT_KEY");
	if (flags & FLAG_IV_INO_LBLK_64)
		printf(", IV_INO_LBLK_64");
	if (flags & FLAG_IV_INO_LBLK_32)
		printf(", IV_INO_LBLK_32");
	flags &= (uint8_t)~(FLAG_PAD_MASK | FLAG_DIRECT_KEY | FLAG_IV_INO_LBLK_64 |
			    FLAG_IV_INO_LBLK_32);
	if (flags)
		printf(", Unknown (%02x)", flags);
	putchar('\n');
}

int cmd_get_policy(int argc, char *argv[])
{
	struct f2fs_keyctl_policy p;
	char hex[2 * F2FS_KEYCTL_ID_SIZE + 1];
	int err;

	if (!no_extra_options(argc, argv))
		return EXIT_FAILURE;
	if (argc != 2)
		return fail("must specify a single file or directory");
	memset(&p, 0, sizeof(p));
	err = request(argv[1], false, F2FS_IOC_GET_POLICY, F2FS_KEYCTL_OP_GET_POLICY, &p,
		      sizeof(p));
	if (err)
		return fail("getting policy for %s: %s", argv[1], errmsg(-err));
	printf("Encryption policy for %s:\n", argv[1]);
	printf("\tPolicy version: %u\n", p.version);
	if (p.version == 1) {
		to_hex(p.key_spec, 8, hex);
		printf("\tMaster key descriptor: %s\n", hex);
	} else {
		to_hex(p.key_spec, F2FS_KEYCTL_ID_SIZE, hex);
		printf("\tMaster key identifier: %s\n", hex);
	}
	show_mode("Contents", p.contents_mode);
	show_mode("Filenames", p.filenames_mode);
	show_flags(p.flags);
	if (p.log2_data_unit_size)
		printf("\tData unit size: %u\n", 1u << p.log2_data_unit_size);
	return EXIT_SUCCESS;
}

static int parse_mode(const char *s, bool contents, uint8_t *mode)
{
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		if (strcasecmp(s, modes[i].name) == 0 &&
		    (contents ? modes[i].contents : modes[i].filenames)) {
			*mode = modes[i].mode;
			return 0;
		}
	}
	return -1;
}

int cmd_set_policy(int argc, char *argv[])
{
	enum { OPT_CONTENTS = 1, OPT_FILENAMES, OPT_PADDING, OPT_DIRECT, OPT_LBLK64, OPT_LBLK32, OPT_DUS };
	static const struct option opts[] = {
		{ "contents", required_argument, NULL, OPT_CONTENTS },
		{ "filenames", required_argument, NULL, OPT_FILENAMES },
		{ "padding", required_argument, NULL, OPT_PADDING },
		{ "direct-key", no_argument, NULL, OPT_DIRECT },
		{ "iv-ino-lblk-64", no_argument, NULL, OPT_LBLK64 },
		{ "iv-ino-lblk-32", no_argument, NULL, OPT_LBLK32 },
		{ "data-unit-size", required_argument, NULL, OPT_DUS },
		{ NULL, 0, NULL, 0 },
	};
	/* fscryptctl's defaults */
	struct f2fs_keyctl_policy p = {
		.version = 2,
		.contents_mode = MODE_AES_256_XTS,
		.filenames_mode = MODE_AES_256_CTS,
		.flags = 3,	/* PAD_32 */
	};
	struct f2fs_keyctl_key_spec spec;
	int ch, err;
	char *end;
	unsigned long v;

	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (ch) {
		case OPT_CONTENTS:
			if (parse_mode(optarg, true, &p.contents_mode))
				return fail("invalid contents mode: %s (AES-256-XTS, AES-128-CBC "
					    "or Adiantum)", optarg);
			break;
		case OPT_FILENAMES:
			if (parse_mode(optarg, false, &p.filenames_mode))
				return fail("invalid filenames mode: %s (AES-256-CTS, "
					    "AES-128-CTS, AES-256-HCTR2 or Adiantum)", optarg);
			break;
		case OPT_PADDING:
			p.flags &= (uint8_t)~FLAG_PAD_MASK;
			if (strcmp(optarg, "4") == 0)
				p.flags |= 0;
			else if (strcmp(optarg, "8") == 0)
				p.flags |= 1;
			else if (strcmp(optarg, "16") == 0)
				p.flags |= 2;
			else if (strcmp(optarg, "32") == 0)
				p.flags |= 3;
			else
				return fail("invalid padding: %s (4, 8, 16 or 32)", optarg);
			break;
		case OPT_DIRECT:
			p.flags |= FLAG_DIRECT_KEY;
			break;
		case OPT_LBLK64:
			p.flags |= FLAG_IV_INO_LBLK_64;
			break;
		case OPT_LBLK32:
			p.flags |= FLAG_IV_INO_LBLK_32;
			break;
		case OPT_DUS:
			errno = 0;
			v = strtoul(optarg, &end, 10);
			if (errno || *end || v < 512 || v > 4096 || (v & (v - 1)))
				return fail("invalid data unit size: %s (512, 1024, 2048 or "
					    "4096)", optarg);
			p.log2_data_unit_size = (uint8_t)__builtin_ctzl(v);
			break;
		default:
			usage(stderr);
			return EXIT_FAILURE;
		}
	}
	if (argc - optind != 2)
		return fail("must specify a key identifier and a directory");
	if (!parse_key(argv[optind], &spec))
		return EXIT_FAILURE;
	memcpy(p.key_spec, spec.u, sizeof(p.key_spec));
	if (spec.type == F2FS_KEYCTL_SPEC_DESCRIPTOR) {
		/* the v1 context has room for neither */
		if (p.flags & (FLAG_IV_INO_LBLK_64 | FLAG_IV_INO_LBLK_32))
			return fail("v1 policies (a key descriptor) take no --iv-ino-lblk-64 or "
				    "--iv-ino-lblk-32; use a v2 key");
		if (p.log2_data_unit_size)
			return fail("v1 policies (a key descriptor) take no --data-unit-size; "
				    "use a v2 key");
		p.version = 1;
	}
	err = request(argv[optind + 1], true, F2FS_IOC_SET_POLICY, F2FS_KEYCTL_OP_SET_POLICY, &p,
		      sizeof(p));
	if (err == -EACCES)
		return fail("setting policy for %s: %s (only the directory's owner or root "
			    "may encrypt it)", argv[optind + 1], strerror(EACCES));
	if (err == -EINVAL)
		return fail("setting policy for %s: invalid policy (incompatible modes or "
			    "flags)", argv[optind + 1]);
#ifdef EKEYREJECTED
	if (err == -EKEYREJECTED)
		return fail("setting policy for %s: the key is too short for %s/%s (they need "
			    "a key of at least %u bytes)", argv[optind + 1],
			    mode_name(p.contents_mode), mode_name(p.filenames_mode),
			    mode_keysize(p.contents_mode) > mode_keysize(p.filenames_mode) ?
			    mode_keysize(p.contents_mode) : mode_keysize(p.filenames_mode));
#endif
	if (err)
		return fail("setting policy for %s: %s", argv[optind + 1], errmsg(-err));
	return EXIT_SUCCESS;
}
