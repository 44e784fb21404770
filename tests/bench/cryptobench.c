/*
 * Contents encryption throughput of crypto/ alone (no file system, no FUSE):
 * AES-256-XTS (or another contents mode) on 4096-byte units, in batches, as
 * f2fs-fuse encrypts and decrypts file data.
 *
 *   cryptobench [SECONDS [UNITS_PER_CALL [MODE]]]
 *
 * Prints "encrypt MB/s" and "decrypt MB/s" lines (MB = 10^6 bytes, as
 * openssl speed reports), each one timed pass of SECONDS after a short
 * warm-up; run.sh repeats the program and takes medians.  For AES-256-XTS
 * it also times OpenSSL's EVP interface directly on the same buffer, to show
 * where the time goes: "evp_update" (one key, one IV, EVP_CipherUpdate per
 * 4 KiB unit: what `openssl speed` measures) and "evp_iv_per_unit" (a new
 * IV per unit, EVP_CipherInit_ex2 + Update + Final, as fscrypt needs).
 * Rates are bytes per user CPU second, as openssl speed's.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include <openssl/evp.h>

#include "fscrypt.h"

/*
 * User CPU seconds of this process: openssl speed divides by CPU user time
 * too (unless -elapsed), so both sides are timed alike, and time the
 * machine gives to other work does not count against either.
 */
static double now_s(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6;
}

static void fill(uint8_t *p, size_t n, uint32_t seed)
{
	for (size_t i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		p[i] = (uint8_t)(seed >> 16);
	}
}

/* Bytes per second of one pass lasting about secs. */
static double pass(const void *key, uint8_t *buf, size_t units, double secs, int enc)
{
	double t0 = now_s(), t;
	uint64_t dun = 0, bytes = 0;

	do {
		for (int i = 0; i < 16; i++) {
			int err = enc ? fscrypt_encrypt_units(key, dun, buf, buf, units)
				      : fscrypt_decrypt_units(key, dun, buf, units);
			if (err < 0) {
				fprintf(stderr, "cryptobench: %s failed: %s\n",
					enc ? "encrypt" : "decrypt", strerror(-err));
				exit(1);
			}
			dun += units;
			bytes += units * FSCRYPT_BLOCK_SIZE;
		}
		t = now_s() - t0;
	} while (t < secs);
	return bytes / t;
}

/* OpenSSL alone, AES-256-XTS encryption of units 4 KiB units in place. */
static double evp_pass(uint8_t *buf, size_t units, double secs, int iv_per_unit)
{
	EVP_CIPHER *ci = EVP_CIPHER_fetch(NULL, "AES-256-XTS", NULL);
	EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
	uint8_t key[64], iv[16] = { 0 };
	uint64_t bytes = 0, n = 0;
	double t0, t;
	int ol, fl;

	if (!ci || !c) {
		fprintf(stderr, "cryptobench: EVP setup failed\n");
		exit(1);
	}
	fill(key, sizeof(key), 5);
	if (EVP_CipherInit_ex2(c, ci, key, iv, 1, NULL) != 1)
		exit(1);
	t0 = now_s();
	do {
		for (size_t u = 0; u < units; u++) {
			uint8_t *p = buf + u * FSCRYPT_BLOCK_SIZE;

			if (iv_per_unit) {
				n++;
				memcpy(iv, &n, sizeof(n));
				if (EVP_CipherInit_ex2(c, NULL, NULL, iv, 1, NULL) != 1)
					exit(1);
			}
			if (EVP_CipherUpdate(c, p, &ol, p, FSCRYPT_BLOCK_SIZE) != 1)
				exit(1);
			if (iv_per_unit && EVP_CipherFinal_ex(c, p + ol, &fl) != 1)
				exit(1);
		}
		bytes += units * FSCRYPT_BLOCK_SIZE;
		t = now_s() - t0;
	} while (t < secs);
	EVP_CIPHER_CTX_free(c);
	EVP_CIPHER_free(ci);
	return bytes / t;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 2.0;
	size_t units = argc > 2 ? (size_t)atol(argv[2]) : 256;
	int mode = argc > 3 ? atoi(argv[3]) : FSCRYPT_M_AES_256_XTS;
	struct fscrypt_keyring *kr;
	struct fscrypt_inode_info *ci;
	struct fscrypt_context ctx;
	uint8_t raw[64], uuid[16], *buf;
	char why[160] = "";
	int err;

	if (secs <= 0 || units == 0) {
		fprintf(stderr, "usage: cryptobench [SECONDS [UNITS_PER_CALL [MODE]]]\n");
		return 2;
	}
	fill(raw, sizeof(raw), 1);
	fill(uuid, sizeof(uuid), 2);
	memset(&ctx, 0, sizeof(ctx));
	ctx.version = 2;
	ctx.contents_mode = (uint8_t)mode;
	ctx.filenames_mode = mode == FSCRYPT_M_ADIANTUM ? FSCRYPT_M_ADIANTUM : FSCRYPT_M_AES_256_CTS;
	ctx.flags = 2;			/* padding 32, the default */
	fill(ctx.nonce, sizeof(ctx.nonce), 3);

	if ((err = fscrypt_keyring_new(&kr)) < 0 ||
	    (err = fscrypt_keyring_add_v2(kr, raw, sizeof(raw), ctx.key_spec)) < 0 ||
	    (err = fscrypt_inode_info_new(kr, &ctx, FSCRYPT_FT_REG, 12345, uuid, &ci, why,
					  sizeof(why))) < 0) {
		fprintf(stderr, "cryptobench: key setup: %s%s%s\n", strerror(-err),
			why[0] ? ": " : "", why);
		return 1;
	}
	const void *key = fscrypt_contents_key(ci);
	if (!key) {
		fprintf(stderr, "cryptobench: no contents key\n");
		return 1;
	}
	buf = aligned_alloc(4096, units * FSCRYPT_BLOCK_SIZE);
	if (!buf) {
		fprintf(stderr, "cryptobench: out of memory\n");
		return 1;
	}
	fill(buf, units * FSCRYPT_BLOCK_SIZE, 4);

	printf("mode %s\nunit_bytes %d\nunits_per_call %zu\n", fscrypt_mode_name((uint8_t)mode),
	       FSCRYPT_BLOCK_SIZE, units);
	for (int enc = 1; enc >= 0; enc--) {
		pass(key, buf, units, 0.2, enc);	/* warm up */
		printf("%s %.1f\n", enc ? "encrypt" : "decrypt",
		       pass(key, buf, units, secs, enc) / 1e6);
	}
	if (mode == FSCRYPT_M_AES_256_XTS) {
		evp_pass(buf, units, 0.2, 0);
		printf("evp_update %.1f\n", evp_pass(buf, units, secs, 0) / 1e6);
		printf("evp_iv_per_unit %.1f\n", evp_pass(buf, units, secs, 1) / 1e6);
	}
	free(buf);
	fscrypt_inode_info_free(ci);
	fscrypt_keyring_free(kr);
	return 0;
}
