// SPDX-License-Identifier: GPL-2.0
/*
 * f2fs-fusectl verity: FS_IOC_ENABLE_VERITY and FS_IOC_MEASURE_VERITY on a
 * file, as fsverity-utils' `fsverity enable` and `fsverity measure` make
 * them (SHA-256, 4096-byte blocks, no salt unless given).  The kernel's
 * FUSE passes both to the daemon with their variable parts.
 */
#include "fusectl.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <linux/fsverity.h>

static int parse_hex(const char *s, uint8_t *out, size_t max, size_t *len)
{
	size_t n = strlen(s);

	if (n % 2 || n / 2 > max)
		return -1;
	for (size_t i = 0; i < n / 2; i++) {
		unsigned int v;

		if (sscanf(s + 2 * i, "%2x", &v) != 1)
			return -1;
		out[i] = (uint8_t)v;
	}
	*len = n / 2;
	return 0;
}

static int measure(const char *path)
{
	/* struct fsverity_digest ends in a flexible array: room for the longest digest */
	union {
		struct fsverity_digest d;
		uint8_t buf[sizeof(struct fsverity_digest) + 64];
	} m = { .d.digest_size = 64 };
	char hex[129];
	int fd = open(path, O_RDONLY | O_NOCTTY | O_CLOEXEC), err = 0;

	if (fd < 0)
		return fail("%s: %s", path, strerror(errno));
	if (ioctl(fd, FS_IOC_MEASURE_VERITY, &m))
		err = errno;
	close(fd);
	if (err)
		return fail("measuring %s: %s", path, err == ENODATA ? "not a verity file" :
			    err == ENOTTY || err == EOPNOTSUPP ?
			    "verity is not supported there" : strerror(err));
	if (m.d.digest_size > 64)
		return fail("measuring %s: digest of %u bytes", path, m.d.digest_size);
	to_hex(m.d.digest, m.d.digest_size, hex);
	printf("%s:%s %s\n", m.d.digest_algorithm == FS_VERITY_HASH_ALG_SHA512 ? "sha512" :
	       m.d.digest_algorithm == FS_VERITY_HASH_ALG_SHA256 ? "sha256" : "unknown", hex, path);
	return EXIT_SUCCESS;
}

static int enable(int argc, char *argv[])
{
	static const struct option opts[] = {
		{ "hash-alg", required_argument, NULL, 'a' },
		{ "block-size", required_argument, NULL, 'b' },
		{ "salt", required_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 },
	};
	struct fsverity_enable_arg arg = { .version = 1, .hash_algorithm =
					   FS_VERITY_HASH_ALG_SHA256, .block_size = 4096 };
	uint8_t salt[32];
	size_t salt_len = 0;
	int c, rc = EXIT_SUCCESS;

	while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		char *end;

		switch (c) {
		case 'a':
			if (strcmp(optarg, "sha256") == 0)
				arg.hash_algorithm = FS_VERITY_HASH_ALG_SHA256;
			else if (strcmp(optarg, "sha512") == 0)
				arg.hash_algorithm = FS_VERITY_HASH_ALG_SHA512;
			else
				return fail("unknown hash algorithm: %s (sha256 or sha512)", optarg);
			break;
		case 'b':
			arg.block_size = (uint32_t)strtoul(optarg, &end, 10);
			if (*end || !arg.block_size)
				return fail("invalid block size: %s", optarg);
			break;
		case 's':
			if (parse_hex(optarg, salt, sizeof(salt), &salt_len))
				return fail("invalid salt: %s (at most 32 bytes in hex)", optarg);
			break;
		default:
			return EXIT_FAILURE;
		}
	}
	if (optind >= argc)
		return fail("verity enable: no file named");
	arg.salt_size = (uint32_t)salt_len;
	arg.salt_ptr = (uint64_t)(uintptr_t)salt;
	for (int i = optind; i < argc; i++) {
		int fd = open(argv[i], O_RDONLY | O_NOCTTY | O_CLOEXEC), err = 0;

		if (fd < 0) {
			rc = fail("%s: %s", argv[i], strerror(errno));
			continue;
		}
		if (ioctl(fd, FS_IOC_ENABLE_VERITY, &arg))
			err = errno;
		close(fd);
		if (err)
			rc = fail("enabling verity on %s: %s", argv[i],
				  err == EEXIST ? "it is a verity file already" :
				  err == ENOTTY || err == EOPNOTSUPP ?
				  "verity is not supported there" : strerror(err));
	}
	return rc;
}

int cmd_verity(int argc, char *argv[])
{
	int rc = EXIT_SUCCESS;

	if (argc < 2)
		return fail("verity: enable or measure?");
	if (strcmp(argv[1], "enable") == 0) {
		optind = 1;
		return enable(argc - 1, argv + 1);
	}
	if (strcmp(argv[1], "measure") != 0)
		return fail("verity: unknown subcommand %s (enable or measure)", argv[1]);
	if (argc < 3)
		return fail("verity measure: no file named");
	for (int i = 2; i < argc; i++)
		if (measure(argv[i]) != EXIT_SUCCESS)
			rc = EXIT_FAILURE;
	return rc;
}
