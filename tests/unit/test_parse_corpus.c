// SPDX-License-Identifier: GPL-2.0
/*
 * The corrupted-image corpus (tests/corrupt/make_corpus.py) through the C
 * API, in process: fast, and under `make asan` every corruption runs with
 * AddressSanitizer and UBSan watching the parser.
 *
 * make_corpus.py writes the base images and corpus.txt (format in its
 * write_text_manifest()).  For each variant the base is copied in memory,
 * the patch applied, and f2fs_mount_mem must fail ("refused") or succeed
 * ("ok") after which each check is run through f2fs_lookup/f2fs_getattr/
 * f2fs_read/f2fs_readdir/f2fs_readlink/f2fs_listxattr/f2fs_getxattr, and a
 * bounded walk of the whole tree must terminate.  Expected values come from
 * the python parser (contents as crc32 = f2fs_crc32(~0, data), which
 * test_crc checks against zlib-derived values).  The image buffer must be
 * unchanged after the mount (it is const, but the check is cheap).
 *
 * Skips with a reason when python3, mkfs.f2fs or sload.f2fs are missing.
 * F2FS_CORRUPT_ONLY=name1,name2 restricts the run.
 */
#include <sys/stat.h>

#include "f2fs.h"
#include "check.h"

static char logbuf[16384];
static size_t loglen;

static void log_capture(void *arg, enum f2fs_log_level lvl, const char *msg)
{
	size_t n = strlen(msg);

	if (loglen + n + 2 < sizeof(logbuf)) {
		memcpy(logbuf + loglen, msg, n);
		loglen += n;
		logbuf[loglen++] = '\n';
		logbuf[loglen] = 0;
	}
}

struct base {
	char key;
	uint8_t *buf;		/* pristine */
	uint8_t *work;		/* patched per variant, restored after */
	size_t len;
};

static struct base bases[4];
static int nbases;

static struct base *find_base(char key)
{
	for (int i = 0; i < nbases; i++)
		if (bases[i].key == key)
			return &bases[i];
	return NULL;
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

static size_t unhex(const char *h, uint8_t *out, size_t max)
{
	size_t n = 0;

	if (!strcmp(h, "-"))
		return 0;
	while (h[0] && h[1] && n < max) {
		int a = hexval(h[0]), b = hexval(h[1]);
		if (a < 0 || b < 0)
			break;
		out[n++] = (uint8_t)(a << 4 | b);
		h += 2;
	}
	return n;
}

/* ---- resolving paths and running checks ---- */

static int resolve(struct f2fs_sb *sb, const char *path, struct f2fs_stat *st)
{
	uint32_t ino = f2fs_root_ino(sb);
	char buf[1024];
	char *save = NULL;
	int err = f2fs_getattr(sb, ino, st);

	if (err || !strcmp(path, "."))
		return err;
	snprintf(buf, sizeof(buf), "%s", path);
	for (char *c = strtok_r(buf, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
		err = f2fs_lookup(sb, ino, c, strlen(c), st);
		if (err)
			return err;
		ino = st->ino;
	}
	return 0;
}

struct counter {
	int n;
};

static int count_entry(void *ctx, const char *name, size_t len, uint32_t ino, unsigned int ft,
		       uint64_t next_off)
{
	struct counter *c = ctx;

	if (!((len == 1 && name[0] == '.') || (len == 2 && name[0] == '.' && name[1] == '.')))
		c->n++;
	return c->n > 100000;
}

/* Run one check; returns 0 or -errno, and fills the observed value. */
static int do_check(struct f2fs_sb *sb, const char *op, const char *path, char **extra,
		    int nextra, char *got, size_t gotlen)
{
	static uint8_t buf[1 << 16];
	struct f2fs_stat st;
	int err = resolve(sb, path, &st);

	got[0] = 0;
	if (err)
		return err;
	if (!strcmp(op, "stat"))
		return 0;
	if (!strcmp(op, "precache"))
		return f2fs_precache_extents(sb, st.ino);
	if (!strcmp(op, "read")) {
		uint32_t crc = 0xffffffffu;
		uint64_t off = 0;

		for (;;) {
			ssize_t n = f2fs_read(sb, st.ino, buf, sizeof(buf), off);
			if (n < 0)
				return (int)n;
			if (n == 0)
				break;
			crc = f2fs_crc32(crc, buf, (size_t)n);
			off += (uint64_t)n;
			if (off > (64u << 20))
				return -EFBIG;
		}
		snprintf(got, gotlen, "%08x", crc);
		if (off != st.size)
			snprintf(got, gotlen, "%08x (read %" PRIu64 " of %" PRIu64 " bytes)", crc, off,
				 st.size);
		return 0;
	}
	if (!strcmp(op, "read_head")) {
		size_t want = nextra > 0 ? (size_t)strtoul(extra[0], NULL, 10) : 4096;
		uint8_t prefix[4096];
		size_t plen = nextra > 1 ? unhex(extra[1], prefix, sizeof(prefix)) : 0;
		size_t done = 0;

		if (want > sizeof(buf))
			want = sizeof(buf);
		while (done < want) {
			ssize_t n = f2fs_read(sb, st.ino, buf + done, want - done, done);
			if (n < 0)
				return (int)n;
			if (n == 0)
				break;
			done += (size_t)n;
		}
		bool good = true;
		for (size_t i = 0; i < done; i++)
			if (buf[i] != (i < plen ? prefix[i] : 0))
				good = false;
		snprintf(got, gotlen, "%s", good ? "match" : "garbage");
		return 0;
	}
	if (!strcmp(op, "list")) {
		struct counter c = { 0 };

		err = f2fs_readdir(sb, st.ino, 0, count_entry, &c);
		if (err)
			return err;
		snprintf(got, gotlen, "%d", c.n);
		return 0;
	}
	if (!strcmp(op, "readlink")) {
		ssize_t n = f2fs_readlink(sb, st.ino, (char *)buf, sizeof(buf) - 1);
		if (n < 0)
			return (int)n;
		buf[n] = 0;
		snprintf(got, gotlen, "%.*s", (int)F2FS_MIN((size_t)n, gotlen - 1), (char *)buf);
		return 0;
	}
	if (!strcmp(op, "listxattr")) {
		ssize_t n = f2fs_listxattr(sb, st.ino, (char *)buf, sizeof(buf));
		int names = 0;
		if (n < 0)
			return (int)n;
		for (ssize_t i = 0; i < n; i++)
			names += buf[i] == 0;
		snprintf(got, gotlen, "%d", names);
		return 0;
	}
	if (!strcmp(op, "getxattr")) {
		ssize_t n = f2fs_getxattr(sb, st.ino, nextra > 0 ? extra[0] : "", buf, sizeof(buf));
		size_t o = 0;
		if (n < 0)
			return (int)n;
		for (ssize_t i = 0; i < n && o + 3 < gotlen; i++)
			o += (size_t)snprintf(got + o, gotlen - o, "%02x", buf[i]);
		if (n == 0)
			snprintf(got, gotlen, "-");
		return 0;
	}
	return -ENOSYS;
}

static bool errno_in(int e, const char *list)
{
	char buf[128];
	char *save = NULL;

	snprintf(buf, sizeof(buf), "%s", list);
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save))
		if (atoi(t) == e)
			return true;
	return false;
}

/* What a successful result must look like; NULL when anything goes. */
static const char *expected_value(const char *op, char **extra, int nextra)
{
	if (!strcmp(op, "read_head"))
		return "match";
	if (nextra < 1 || !strcmp(extra[0], "-"))
		return NULL;
	if (!strcmp(op, "getxattr"))
		return nextra > 1 ? extra[1] : NULL;
	return extra[0];
}

/* ---- a bounded walk: must terminate and not crash ---- */

struct walker {
	struct f2fs_sb *sb;
	int entries;
	uint32_t names_ino[512];
	char names[512][256];
	int n;
};

static int collect(void *ctx, const char *name, size_t len, uint32_t ino, unsigned int ft,
		   uint64_t next_off)
{
	struct walker *w = ctx;

	if (w->n >= 512 || len > 255)
		return 1;
	memcpy(w->names[w->n], name, len);
	w->names[w->n][len] = 0;
	w->names_ino[w->n++] = ino;
	return 0;
}

static void walk(struct f2fs_sb *sb, uint32_t dir, int depth, int *budget)
{
	static uint8_t buf[65536];
	struct walker *w;

	if (depth > 16 || *budget <= 0)
		return;
	w = calloc(1, sizeof(*w));
	if (!w)
		return;
	w->sb = sb;
	f2fs_readdir(sb, dir, 0, collect, w);
	for (int i = 0; i < w->n && *budget > 0; i++) {
		struct f2fs_stat st;
		const char *nm = w->names[i];

		(*budget)--;
		if (!strcmp(nm, ".") || !strcmp(nm, ".."))
			continue;
		if (f2fs_lookup(sb, dir, nm, strlen(nm), &st))
			continue;
		f2fs_listxattr(sb, st.ino, (char *)buf, sizeof(buf));
		if (S_ISDIR(st.mode) && st.ino != dir) {
			walk(sb, st.ino, depth + 1, budget);
		} else if (S_ISREG(st.mode)) {
			for (uint64_t off = 0; off < (32u << 20);) {
				ssize_t n = f2fs_read(sb, st.ino, buf, sizeof(buf), off);
				if (n <= 0)
					break;
				off += (uint64_t)n;
			}
		} else if (S_ISLNK(st.mode)) {
			f2fs_readlink(sb, st.ino, (char *)buf, sizeof(buf));
		}
	}
	free(w);
}

/* ---- the corpus ---- */

struct variant {
	char name[128];
	char base;
	bool refused;
	uint8_t *img;
	size_t len;
};

static int run_variant(struct variant *v, FILE *f, int *nchecked)
{
	struct f2fs_mount_opts o = { .readonly = true, .log = log_capture,
				     .log_level = F2FS_LOG_DEBUG };
	struct f2fs_sb *sb = NULL;
	char line[12000];
	int err;

	loglen = 0;
	logbuf[0] = 0;
	err = f2fs_mount_mem(v->img, v->len, &o, &sb);
	if (v->refused) {
		CHECK(err < 0, "%s: corrupted image mounted (expected refusal)", v->name);
		CHECK(err != 0 || loglen > 0, "%s: refusal without a message", v->name);
	} else {
		CHECK(err == 0, "%s: mount failed with %d (expected success)\n%s", v->name, err,
		      logbuf);
	}
	/* the checks (read even when not mounted, to keep the file position) */
	while (fgets(line, sizeof(line), f)) {
		char *tok[16];
		int nt = 0;
		char *save = NULL;

		line[strcspn(line, "\n")] = 0;
		for (char *t = strtok_r(line, " ", &save); t && nt < 16; t = strtok_r(NULL, " ", &save))
			tok[nt++] = t;
		if (nt >= 1 && !strcmp(tok[0], "end"))
			break;
		if (nt < 5 || strcmp(tok[0], "check") || !sb)
			continue;
		const char *op = tok[1], *result = tok[2], *path = tok[3], *errnos = tok[4];
		char got[8192];
		int r = do_check(sb, op, path, tok + 5, nt - 5, got, sizeof(got));
		const char *want = expected_value(op, tok + 5, nt - 5);

		(*nchecked)++;
		if (!strcmp(result, "error")) {
			CHECK(r < 0 && errno_in(-r, errnos),
			      "%s: %s(%s) = %d%s%s, expected an error in [%s]", v->name, op, path, r,
			      r ? "" : " value ", r ? "" : got, errnos);
		} else if (r < 0) {
			CHECK(!strcmp(result, "any") && errno_in(-r, errnos),
			      "%s: %s(%s) failed with %d, expected success%s%s", v->name, op, path, r,
			      !strcmp(result, "any") ? " or an error in " : "",
			      !strcmp(result, "any") ? errnos : "");
		} else if (want) {
			CHECK(!strcmp(got, want), "%s: %s(%s) returned %s, expected %s", v->name, op,
			      path, got, want);
		}
	}
	if (sb) {
		int budget = 5000;
		struct f2fs_statfs sf;

		walk(sb, f2fs_root_ino(sb), 0, &budget);
		f2fs_statfs(sb, &sf);
		f2fs_umount(sb);
	}
	return 0;
}

static bool wanted(const char *only, const char *name)
{
	char buf[4096];
	char *save = NULL;

	if (!only || !*only)
		return true;
	snprintf(buf, sizeof(buf), "%s", only);
	for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save))
		if (!strcmp(t, name))
			return true;
	return false;
}

int main(void)
{
	const char *src = getenv("F2FS_SRCDIR");
	const char *py = getenv("PYTHON");
	const char *only = getenv("F2FS_CORRUPT_ONLY");
	char gen[1024], dir[] = "/tmp/f2fs-corrupt-XXXXXX", path[1200], tool[512];
	char line[12000];
	int nvariants = 0, nchecked = 0;

	snprintf(gen, sizeof(gen), "%s/tests/corrupt/make_corpus.py", src ? src : ".");
	if (access(gen, R_OK)) {
		SKIP("%s not found (run from the source tree or set F2FS_SRCDIR)", gen);
		return check_done("test_parse_corpus");
	}
	if (!find_tool("mkfs.f2fs", tool, sizeof(tool)) || !find_tool("sload.f2fs", tool, sizeof(tool))) {
		SKIP("mkfs.f2fs/sload.f2fs not found");
		return check_done("test_parse_corpus");
	}
	if (!py)
		py = "python3";
	if (!mkdtemp(dir)) {
		SKIP("mkdtemp failed");
		return check_done("test_parse_corpus");
	}
	int rc = run_quiet("PATH=\"$PATH:/usr/sbin:/sbin\" '%s' '%s' '%s' >'%s/gen.log' 2>&1", py, gen,
			   dir, dir);
	if (rc != 0) {
		snprintf(path, sizeof(path), "%s/gen.log", dir);
		size_t n = 0;
		uint8_t *log = slurp(path, &n);
		if (rc == 127 || !log) {
			SKIP("could not run %s (%d)", gen, rc);
		} else {
			CHECK(0, "make_corpus.py failed (%d):\n%.*s", rc, (int)n, (char *)log);
		}
		free(log);
		run_quiet("rm -rf '%s'", dir);
		return check_done("test_parse_corpus");
	}
	for (char k = 'A'; k <= 'C'; k++) {
		snprintf(path, sizeof(path), "%s/base-%c.img", dir, k);
		bases[nbases].key = k;
		bases[nbases].buf = slurp(path, &bases[nbases].len);
		CHECK(bases[nbases].buf != NULL, "cannot read %s", path);
		if (bases[nbases].buf) {
			bases[nbases].work = malloc(bases[nbases].len);
			if (!bases[nbases].work)
				return 1;
			memcpy(bases[nbases].work, bases[nbases].buf, bases[nbases].len);
			nbases++;
		}
	}
	snprintf(path, sizeof(path), "%s/corpus.txt", dir);
	FILE *f = fopen(path, "r");
	CHECK(f != NULL, "cannot open %s", path);
	static unsigned long patched[256];
	while (f && fgets(line, sizeof(line), f)) {
		struct variant v = { 0 };
		char base[8], how[16];
		int npatched = 0;

		if (sscanf(line, "variant %127s %7s %15s", v.name, base, how) != 3)
			continue;
		v.base = base[0];
		v.refused = !strcmp(how, "refused");
		struct base *b = find_base(v.base);
		if (!b) {
			CHECK(0, "%s: unknown base %c", v.name, v.base);
			continue;
		}
		v.img = b->work;
		v.len = b->len;
		/* patches come first; remember the blocks to restore them afterwards */
		long pos = ftell(f);
		while (fgets(line, sizeof(line), f) && !strncmp(line, "patch ", 6)) {
			char *sp = strchr(line + 6, ' ');
			unsigned long blk = strtoul(line + 6, NULL, 10);

			pos = ftell(f);
			if (!sp || (blk + 1) * F2FS_BLKSIZE > v.len || npatched >= 256)
				continue;
			patched[npatched++] = blk;
			unhex(sp + 1, v.img + blk * F2FS_BLKSIZE, F2FS_BLKSIZE);
		}
		fseek(f, pos, SEEK_SET);
		if (wanted(only, v.name)) {
			nvariants++;
			run_variant(&v, f, &nchecked);
		} else {
			while (fgets(line, sizeof(line), f) && strncmp(line, "end", 3))
				;
		}
		for (int i = 0; i < npatched; i++)
			memcpy(v.img + patched[i] * F2FS_BLKSIZE, b->buf + patched[i] * F2FS_BLKSIZE,
			       F2FS_BLKSIZE);
		/* with the patch undone the buffer must equal the base: nothing wrote to it */
		CHECK(memcmp(v.img, b->buf, v.len) == 0, "%s: the image buffer changed", v.name);
	}
	if (f)
		fclose(f);
	printf("%d corrupted images mounted in memory, %d access checks\n", nvariants, nchecked);
	CHECK(nvariants >= (only ? 1 : 40), "only %d variants in the corpus", nvariants);
	for (int i = 0; i < nbases; i++) {
		free(bases[i].buf);
		free(bases[i].work);
	}
	run_quiet("rm -rf '%s'", dir);
	return check_done("test_parse_corpus");
}
