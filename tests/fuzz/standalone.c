// SPDX-License-Identifier: GPL-2.0
/*
 * A main() for the fuzz targets without libFuzzer: runs each file named on
 * the command line through LLVMFuzzerTestOneInput, F2FS_FUZZ_REPEAT times
 * (default 1), and prints the inputs per second.  For replaying artifacts
 * with a plain build, and for profiling a target (perf record).
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include <stdint.h>
#include <stddef.h>

/* optional in libFuzzer, so weak here: a target may go without it */
__attribute__((weak)) int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int main(int argc, char **argv)
{
	const char *rep = getenv("F2FS_FUZZ_REPEAT");
	long repeat = rep ? atol(rep) : 1;
	struct timespec t0, t1, c0, c1;
	unsigned long runs = 0;

	if (LLVMFuzzerInitialize)
		LLVMFuzzerInitialize(&argc, &argv);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
	for (int i = 1; i < argc; i++) {
		static uint8_t buf[1 << 20];
		FILE *f = fopen(argv[i], "rb");
		size_t n;

		if (!f) {
			perror(argv[i]);
			return 1;
		}
		n = fread(buf, 1, sizeof(buf), f);
		fclose(f);
		for (long r = 0; r < repeat; r++, runs++)
			LLVMFuzzerTestOneInput(buf, n);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
	double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	double c = (double)(c1.tv_sec - c0.tv_sec) + (double)(c1.tv_nsec - c0.tv_nsec) / 1e9;

	/* CPU time: on a shared machine the wall clock says more about the neighbours */
	fprintf(stderr, "%lu runs in %.2f s (%.2f s CPU): %.0f inputs/s, %.0f per CPU second\n",
		runs, s, c, s > 0 ? (double)runs / s : 0.0, c > 0 ? (double)runs / c : 0.0);
	return 0;
}
