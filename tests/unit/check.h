/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Minimal assertion and fixture helpers for the C unit tests.
 *
 * CHECK* macros record a failure with file:line and keep going, so one run
 * reports every broken expectation; a test's main() ends with
 * `return check_done("name");`, which prints a summary and returns nonzero
 * when anything failed.  SKIP() prints a reason for a part that cannot run.
 */
#ifndef F2FS_TEST_CHECK_H
#define F2FS_TEST_CHECK_H

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static int check_failures;
static int check_count;

#define CHECK(cond, ...)                                                        \
	do {                                                                    \
		check_count++;                                                  \
		if (!(cond)) {                                                  \
			check_failures++;                                       \
			fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, \
				#cond);                                         \
			fprintf(stderr, __VA_ARGS__);                           \
			fputc('\n', stderr);                                    \
		}                                                               \
	} while (0)

#define CHECK_EQ_U64(got, want, what)                                            \
	do {                                                                     \
		uint64_t g_ = (uint64_t)(got), w_ = (uint64_t)(want);            \
		CHECK(g_ == w_, "%s: got %" PRIu64 " (0x%" PRIx64 "), want %"    \
		      PRIu64 " (0x%" PRIx64 ")", (what), g_, g_, w_, w_);          \
	} while (0)

#define SKIP(...)                                                               \
	do {                                                                    \
		printf("SKIP: ");                                               \
		printf(__VA_ARGS__);                                            \
		putchar('\n');                                                  \
	} while (0)

static inline int check_done(const char *name)
{
	if (check_failures) {
		fprintf(stderr, "%s: %d of %d checks FAILED\n", name, check_failures,
			check_count);
		return 1;
	}
	printf("%s: all %d checks passed\n", name, check_count);
	return 0;
}

/* Path of an f2fs-tools program, or NULL.  Looks in PATH and the sbin dirs. */
static inline const char *find_tool(const char *name, char *out, size_t outlen)
{
	static const char *const dirs[] = { "/usr/sbin", "/sbin", "/usr/local/sbin",
					    "/usr/bin", "/bin", NULL };
	const char *path = getenv("PATH");
	char buf[4096];

	if (path && strlen(path) < sizeof(buf)) {
		char *save = NULL, *d;

		strcpy(buf, path);
		for (d = strtok_r(buf, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
			snprintf(out, outlen, "%s/%s", d, name);
			if (access(out, X_OK) == 0)
				return out;
		}
	}
	for (int i = 0; dirs[i]; i++) {
		snprintf(out, outlen, "%s/%s", dirs[i], name);
		if (access(out, X_OK) == 0)
			return out;
	}
	return NULL;
}

/* Run a shell command quietly; returns its exit status or -1. */
static inline int run_quiet(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline int run_quiet(const char *fmt, ...)
{
	char cmd[8192];
	va_list ap;
	int st;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	st = system(cmd);
	if (st == -1 || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

/* Read a whole file into a malloc'd buffer. */
static inline uint8_t *slurp(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY);
	struct stat st;
	uint8_t *buf;
	size_t got = 0;

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) < 0 || st.st_size <= 0) {
		close(fd);
		return NULL;
	}
	buf = malloc((size_t)st.st_size);
	while (buf && got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);

		if (n <= 0) {
			free(buf);
			buf = NULL;
			break;
		}
		got += (size_t)n;
	}
	close(fd);
	if (buf)
		*len = got;
	return buf;
}

/*
 * Make a temporary f2fs image with mkfs.f2fs (and, if tree is non-NULL,
 * load that directory with sload.f2fs), and return it in memory.  NULL with
 * a printed reason when the tools are missing or fail.  `mb` is the size in
 * MiB (mkfs.f2fs 1.15 needs at least 52; sload wants some more room).
 */
static inline uint8_t *make_image(const char *features, unsigned mb, const char *tree,
				  size_t *len)
{
	char mkfs[512], sload[512], fsck[512];
	char path[] = "/tmp/f2fs-unit-XXXXXX";
	uint8_t *buf = NULL;
	int fd, rc;

	if (!find_tool("mkfs.f2fs", mkfs, sizeof(mkfs))) {
		SKIP("mkfs.f2fs not found");
		return NULL;
	}
	fd = mkstemp(path);
	if (fd < 0) {
		SKIP("mkstemp: %s", strerror(errno));
		return NULL;
	}
	if (ftruncate(fd, (off_t)mb << 20) < 0) {
		SKIP("ftruncate: %s", strerror(errno));
		goto out;
	}
	close(fd);
	fd = -1;
	rc = run_quiet("'%s' -q -f %s%s '%s' >/dev/null 2>&1", mkfs,
		       features && *features ? "-O " : "", features ? features : "", path);
	if (rc != 0) {
		SKIP("mkfs.f2fs -O '%s' failed (%d)", features ? features : "", rc);
		goto out;
	}
	if (tree) {
		if (!find_tool("sload.f2fs", sload, sizeof(sload)) ||
		    !find_tool("fsck.f2fs", fsck, sizeof(fsck))) {
			SKIP("sload.f2fs or fsck.f2fs not found");
			goto out;
		}
		/* sload.f2fs's exit status is unreliable across versions: trust fsck */
		run_quiet("'%s' -f '%s' '%s' >/dev/null 2>&1", sload, tree, path);
		rc = run_quiet("'%s' '%s' >/dev/null 2>&1", fsck, path);
		if (rc != 0) {
			SKIP("fsck.f2fs after sload.f2fs failed (%d)", rc);
			goto out;
		}
	}
	buf = slurp(path, len);
	if (!buf)
		SKIP("could not read back %s", path);
out:
	if (fd >= 0)
		close(fd);
	unlink(path);
	return buf;
}

#endif /* F2FS_TEST_CHECK_H */
