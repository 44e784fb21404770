// SPDX-License-Identifier: GPL-2.0
/*
 * Small-file metadata phases for tests/bench/meta.sh, timed in one process
 * so that no fork or exec per file hides the filesystem's cost.
 *
 *   metabench PHASE ROOT NDIRS NFILES
 *
 * The tree is ROOT/dNNN/fNNNNNN: NFILES files of 4 KiB spread over NDIRS
 * directories.  PHASE is create, stat, read, readdir (names only), lsl
 * (names, then lstat of each, as ls -l), sync (syncfs, then fsync of ROOT:
 * what makes the tree durable on every filesystem measured) or delete.
 * Prints the seconds.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define FILE_SIZE 4096

static void die(const char *what, const char *path)
{
	fprintf(stderr, "metabench: %s %s: %s\n", what, path, strerror(errno));
	exit(1);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void dir_path(char *buf, size_t len, const char *root, long d)
{
	snprintf(buf, len, "%s/d%03ld", root, d);
}

static void file_path(char *buf, size_t len, const char *root, long ndirs, long f)
{
	snprintf(buf, len, "%s/d%03ld/f%06ld", root, f % ndirs, f);
}

/* Entries other than "." and ".." in one directory; lsl stats each. */
static long list_dir(const char *path, int do_stat)
{
	DIR *dir = opendir(path);
	struct dirent *de;
	struct stat st;
	long n = 0;

	if (!dir)
		die("opendir", path);
	while ((errno = 0, de = readdir(dir))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (do_stat && fstatat(dirfd(dir), de->d_name, &st, AT_SYMLINK_NOFOLLOW))
			die("lstat", de->d_name);
		n++;
	}
	if (errno)
		die("readdir", path);
	closedir(dir);
	return n;
}

int main(int argc, char *argv[])
{
	static char buf[65536];
	char path[4096];
	const char *phase, *root;
	long ndirs, nfiles, n = 0;
	struct stat st;
	double t0;

	if (argc != 5 || (ndirs = atol(argv[3])) <= 0 || (nfiles = atol(argv[4])) <= 0) {
		fprintf(stderr, "usage: metabench create|sync|stat|read|readdir|lsl|delete ROOT NDIRS NFILES\n");
		return 2;
	}
	phase = argv[1];
	root = argv[2];
	memset(buf, 0x5a, sizeof(buf));
	t0 = now();
	if (!strcmp(phase, "create")) {
		for (long d = 0; d < ndirs; d++) {
			dir_path(path, sizeof(path), root, d);
			if (mkdir(path, 0755))
				die("mkdir", path);
		}
		for (long f = 0; f < nfiles; f++) {
			int fd;

			file_path(path, sizeof(path), root, ndirs, f);
			fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
			if (fd < 0)
				die("create", path);
			if (write(fd, buf, FILE_SIZE) != FILE_SIZE)
				die("write", path);
			if (close(fd))
				die("close", path);
		}
	} else if (!strcmp(phase, "stat")) {
		for (long f = 0; f < nfiles; f++) {
			file_path(path, sizeof(path), root, ndirs, f);
			if (lstat(path, &st))
				die("lstat", path);
			if (st.st_size != FILE_SIZE) {
				fprintf(stderr, "metabench: %s: size %lld\n", path, (long long)st.st_size);
				return 1;
			}
		}
	} else if (!strcmp(phase, "read")) {
		for (long f = 0; f < nfiles; f++) {
			ssize_t r, total = 0;
			int fd;

			file_path(path, sizeof(path), root, ndirs, f);
			fd = open(path, O_RDONLY);
			if (fd < 0)
				die("open", path);
			/* until end of file, as cat does */
			while ((r = read(fd, buf, sizeof(buf))) > 0)
				total += r;
			if (r < 0)
				die("read", path);
			close(fd);
			if (total != FILE_SIZE) {
				fprintf(stderr, "metabench: %s: read %zd bytes\n", path, total);
				return 1;
			}
		}
	} else if (!strcmp(phase, "readdir") || !strcmp(phase, "lsl")) {
		int do_stat = !strcmp(phase, "lsl");

		list_dir(root, do_stat);
		for (long d = 0; d < ndirs; d++) {
			dir_path(path, sizeof(path), root, d);
			n += list_dir(path, do_stat);
		}
		if (n != nfiles) {
			fprintf(stderr, "metabench: %ld entries, expected %ld\n", n, nfiles);
			return 1;
		}
	} else if (!strcmp(phase, "sync")) {
		int fd = open(root, O_RDONLY | O_DIRECTORY);

		if (fd < 0)
			die("open", root);
		if (syncfs(fd) || fsync(fd))
			die("sync", root);
		close(fd);
	} else if (!strcmp(phase, "delete")) {
		for (long f = 0; f < nfiles; f++) {
			file_path(path, sizeof(path), root, ndirs, f);
			if (unlink(path))
				die("unlink", path);
		}
		for (long d = 0; d < ndirs; d++) {
			dir_path(path, sizeof(path), root, d);
			if (rmdir(path))
				die("rmdir", path);
		}
	} else {
		fprintf(stderr, "metabench: unknown phase %s\n", phase);
		return 2;
	}
	printf("%.6f\n", now() - t0);
	return 0;
}
