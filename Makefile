# f2fs-fuse: a userspace f2fs driver on libfuse3.
#
#   make            build build/f2fs-fuse
#   make demo       install packages, build, tour a demo image (keys, big file,
#                   I/O statistics) and leave it mounted at ./mnt
#   make test       install packages, build, run unit and integration tests
#   make asan       the whole suite under AddressSanitizer + UBSan
#   make test-fuzz-corpus  every fuzz corpus input through the targets built
#                   without libFuzzer (part of make test-unit)
#   make fuzz       libFuzzer targets (clang): FUZZ_TARGET=image (default), rw,
#                   recovery, fscrypt, keyctl; FUZZ_SECONDS (docs/fuzzing.md)
#   make crash-replay  every recorded write and flush of a workload replayed as
#                   crash states, each mounted, checked and fsck'ed
#   make bench      benchmarks (results go to docs/benchmarks.md)
#   make bench-meta small-file metadata benchmark (docs/benchmarks-meta.md)
#   make bench-writeback  the 8-job O_SYNC writeback benchmark, peers, an
#                   IOPS-limited device (docs/benchmarks.md; QUICK=1: smoke)
#   make bench-precache  extent precache, node read-ahead on/off (docs/benchmarks.md)
#   make bench-compress  compressed files per algorithm vs plain, 1 GiB (docs/benchmarks.md)
#   make fstests    fstests' quick group against the mount, needs root
#                   (FSTESTS_ARGS="-g auto"; results: docs/conformance.md)
#   make fstests-guest  the same in a qemu guest whose kernel has device-mapper
#   make fsstress   fstests' fsstress with several processes, six mount setups
#   make test-fresh make demo and make test-unit as the first commands on a
#                   pristine Debian root (debootstrap, chroot; needs root)
#   make install    PREFIX=/usr/local

VERSION    := 0.1.0
PREFIX     ?= /usr/local
BUILD      ?= build
CC         ?= cc
PKG_CONFIG ?= pkg-config
PYTHON     ?= /usr/bin/python3

# Expanded when a recipe runs, not when the Makefile is read: `make demo` and
# `make test` install the packages first and only then build (in a second
# make), so pkg-config must not be asked before libfuse3-dev is there.
FUSE_CFLAGS   = $(call pkg,--cflags,fuse3)
FUSE_LIBS     = $(call pkg,--libs,fuse3)
CRYPTO_CFLAGS = $(call pkg,--cflags,libcrypto)
CRYPTO_LIBS   = $(call pkg,--libs,libcrypto)
# core's libraries: the codecs of compressed files (compress.c), ISA-L's CRC (crc.c)
CORE_PKGS   = liblz4 libzstd lzo2 libisal
CORE_CFLAGS = $(call pkg,--cflags,$(CORE_PKGS))
CORE_LIBS   = $(call pkg,--libs,$(CORE_PKGS))
pkg = $(or $(shell $(PKG_CONFIG) $(1) $(2) 2>/dev/null),$(if $(shell $(PKG_CONFIG) --exists $(2) 2>/dev/null && echo y),,\
        $(error $(2) development files not found by $(PKG_CONFIG): run `make deps` (tests/install-deps.sh) first)))

WARN     := -Wall -Wextra -Werror -Wshadow -Wno-unused-parameter -Wstrict-prototypes \
            -Wmissing-prototypes -Wformat=2
OPT      ?= -O2 -g
CFLAGS   ?=
CFLAGS   += -std=c11 -D_GNU_SOURCE -D_FILE_OFFSET_BITS=64 $(OPT) $(WARN) -pthread \
            -DF2FS_FUSE_VERSION='"$(VERSION)"'
LDFLAGS  += -pthread
SAN      ?=
CFLAGS   += $(SAN)
LDFLAGS  += $(SAN)
# header dependencies: the compiler lists them next to each object (.d files);
# a changed Makefile rebuilds everything (flags, and objects that predate .d files)
DEPFLAGS  = -MMD -MP -MF $@.d -MT $@

CORE_SRC   := $(sort $(wildcard core/*.c))
CRYPTO_SRC := $(sort $(wildcard crypto/*.c))
FUSE_SRC   := $(sort $(wildcard fuse/*.c))
UNIT_SRC   := $(sort $(wildcard tests/unit/*.c))
TOOL_SRC   := $(sort $(wildcard tools/*.c))

CORE_OBJ   := $(CORE_SRC:%.c=$(BUILD)/%.o)
CRYPTO_OBJ := $(CRYPTO_SRC:%.c=$(BUILD)/%.o)
FUSE_OBJ   := $(FUSE_SRC:%.c=$(BUILD)/%.o)
UNIT_BIN   := $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/unit/%)
TOOL_OBJ   := $(TOOL_SRC:%.c=$(BUILD)/%.o)

LIBCORE    := $(BUILD)/libf2fscore.a

.PHONY: all clean deps demo test test-fresh test-unit test-integration test-kernel test-side-by-side fsx crashtest \
        asan fuzz bench install umount-demo check-layers crash-replay test-fuzz-corpus

all: $(BUILD)/f2fs-fuse $(BUILD)/f2fs-fusectl

$(BUILD)/core/%.o: core/%.c Makefile
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(DEPFLAGS) $(CORE_CFLAGS) -Icore -Icrypto -c -o $@ $<

# the casefolding table, from the Unicode Character Database (unicode-data)
UCD_DIR ?= /usr/share/unicode
$(BUILD)/core/utf8data.h: core/mkutf8data.py
	@mkdir -p $(dir $@)
	$(PYTHON) core/mkutf8data.py $(UCD_DIR) $@.tmp && mv $@.tmp $@

$(BUILD)/core/utf8.o: $(BUILD)/core/utf8data.h
$(BUILD)/core/utf8.o: CFLAGS += -I$(BUILD)/core

$(BUILD)/crypto/%.o: crypto/%.c Makefile
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(DEPFLAGS) $(CRYPTO_CFLAGS) -Icore -Icrypto -c -o $@ $<

$(BUILD)/fuse/%.o: fuse/%.c Makefile
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(DEPFLAGS) $(FUSE_CFLAGS) -Icore -Icrypto -Ifuse -c -o $@ $<

$(LIBCORE): $(CORE_OBJ) $(CRYPTO_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@
	ar rcs $@ $^

$(BUILD)/f2fs-fuse: $(FUSE_OBJ) $(LIBCORE)
	$(CC) $(LDFLAGS) -o $@ $(FUSE_OBJ) $(LIBCORE) $(FUSE_LIBS) $(CRYPTO_LIBS) $(CORE_LIBS)

# the mount's keys, policies and requests from the command line; libc only
$(BUILD)/tools/%.o: tools/%.c Makefile
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(DEPFLAGS) -Ifuse -Itools -c -o $@ $<

$(BUILD)/f2fs-fusectl: $(TOOL_OBJ)
	$(CC) $(LDFLAGS) -o $@ $(TOOL_OBJ)

$(BUILD)/tests/unit/%: tests/unit/%.c $(LIBCORE) Makefile
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(DEPFLAGS) $(CORE_CFLAGS) -Icore -Icrypto -o $@ $< $(LIBCORE) $(LDFLAGS) \
	    $(CRYPTO_LIBS) $(CORE_LIBS)

# crash states rebuilt from a log of writes and flushes (tests/crash/replay.c)
$(BUILD)/tests/crash/replay: tests/crash/replay.c tests/lib/testdev.c $(LIBCORE) Makefile
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(DEPFLAGS) $(CORE_CFLAGS) -Icore -Icrypto -Itests/lib -o $@ \
	    tests/crash/replay.c tests/lib/testdev.c $(LIBCORE) $(LDFLAGS) $(CRYPTO_LIBS) $(CORE_LIBS)

# the precache benchmark's limit: the node blocks alone, straight from the image
$(BUILD)/tests/bench/nodelimit: tests/bench/nodelimit.c $(LIBCORE) Makefile
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(DEPFLAGS) $(CORE_CFLAGS) -Icore -Icrypto -o $@ $< $(LIBCORE) $(LDFLAGS) \
	    $(CRYPTO_LIBS) $(CORE_LIBS)

# the fuzz targets without libFuzzer (tests/fuzz/standalone.c): `make
# test-fuzz-corpus` runs every input of tests/fuzz/corpus through them, so
# each crash the fuzzers found stays a test
FUZZ_TARGETS := image rw recovery fscrypt keyctl
FUZZ_REPLAY  := $(FUZZ_TARGETS:%=$(BUILD)/tests/fuzz/replay_%)
FUZZ_COMMON  := tests/fuzz/fuzz_common.c tests/lib/testdev.c
FUZZ_KEYCTL  := tests/lib/testdev.c fuse/keysock.c fuse/keyctl.c fuse/keyclaims.c \
                fuse/keyinodes.c fuse/caller.c fuse/log.c fuse/inodes.c
fuzz_srcs = $(if $(filter fscrypt,$(1)),,$(if $(filter keyctl,$(1)),$(FUZZ_KEYCTL),$(FUZZ_COMMON)))

$(BUILD)/tests/fuzz/replay_%: tests/fuzz/fuzz_%.c tests/fuzz/standalone.c $(FUZZ_COMMON) \
		$(FUZZ_KEYCTL) $(LIBCORE) Makefile
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Wno-missing-prototypes $(DEPFLAGS) $(CORE_CFLAGS) \
	    $(if $(filter keyctl,$*),$(FUSE_CFLAGS)) -Icore -Icrypto -Itests/lib -Ifuse -o $@ \
	    tests/fuzz/fuzz_$*.c tests/fuzz/standalone.c $(call fuzz_srcs,$*) $(LIBCORE) $(LDFLAGS) \
	    $(if $(filter keyctl,$*),$(FUSE_LIBS)) $(CRYPTO_LIBS) $(CORE_LIBS)

-include $(addsuffix .d,$(CORE_OBJ) $(CRYPTO_OBJ) $(FUSE_OBJ) $(UNIT_BIN) $(TOOL_OBJ) \
	$(BUILD)/tests/crash/replay $(BUILD)/tests/bench/nodelimit $(FUZZ_REPLAY))

# ---- packages ----
deps:
	@tests/install-deps.sh

# ---- demo: build, then a tour of a fresh image, left mounted at ./mnt ----
demo: deps
	@$(MAKE) --no-print-directory all
	@tests/demo.sh $(BUILD)/f2fs-fuse

umount-demo:
	fusermount3 -u mnt

# ---- tests ----
test: deps
	@$(MAKE) --no-print-directory all $(UNIT_BIN)
	@$(MAKE) --no-print-directory test-unit
	@$(MAKE) --no-print-directory test-side-by-side

# The integration and kernel suites at once: the guest (qemu's TCG, one
# vCPU) keeps one core busy and the mounts under test mostly the other, so
# together they take about as long as the kernel suite alone.  The kernel
# suite's output comes after the integration suite's; either failing fails.
test-side-by-side: all
	@log=$(BUILD)/test-kernel.log; \
	$(MAKE) --no-print-directory test-kernel > $$log 2>&1 & kpid=$$!; \
	$(MAKE) --no-print-directory test-integration; irc=$$?; \
	wait $$kpid; krc=$$?; \
	echo "== tests/kernel (run beside the integration tests; log: $$log)"; cat $$log; \
	test $$irc = 0 && test $$krc = 0

# the README's first commands on a fresh machine (tests/fresh/README.md)
test-fresh:
	tests/fresh/run.sh

test-unit: $(UNIT_BIN)
	@set -e; for t in $(UNIT_BIN); do echo "== $$t"; $$t; done
	$(PYTHON) tests/unit/check_utf8.py $(BUILD)/tests/unit/test_utf8 $(UCD_DIR)
	@$(MAKE) --no-print-directory test-fuzz-corpus

# every fuzz corpus input, on the seed images tests/fuzz/run.sh makes
test-fuzz-corpus: $(FUZZ_REPLAY)
	@set -e; seeds=$$(FUZZ_SEEDS_ONLY=1 FUZZ_OUT=$(BUILD)/fuzz-seeds tests/fuzz/run.sh | tail -n 1); \
	for t in $(FUZZ_TARGETS); do echo "== fuzz corpus: $$t"; \
	    F2FS_FUZZ_SEEDS=$$seeds $(BUILD)/tests/fuzz/replay_$$t tests/fuzz/corpus/$$t/*; done

# no core/ file calls one on a higher floor (docs/design.md)
check-layers: $(CORE_OBJ)
	$(PYTHON) tests/layers.py $(BUILD)

test-integration: all
	F2FS_FUSE=$(abspath $(BUILD)/f2fs-fuse) $(PYTHON) -m pytest -q -ra $(if $(filter tests/integration/%,$(PYTEST_ARGS)),,tests/integration) $(PYTEST_ARGS)

# the kernel's f2fs under qemu reads what f2fs-fuse reads and the other way
# round (tests/kernel/README.md); `test` runs it beside test-integration
test-kernel: all
	tests/kernel/setup.sh && F2FS_FUSE=$(abspath $(BUILD)/f2fs-fuse) $(PYTHON) -m pytest -q -ra tests/kernel $(PYTEST_ARGS)

# ---- randomized long runs (short versions run in make test) ----
FSX_ARGS   ?= --ops 20000
CRASH_ARGS ?= --iterations 50 --ace --ace-len 3
# the same random kills on nearly full images (slack space recycling, cleaning)
CRASH_FULL_ARGS ?= --iterations 50 --fresh-every 5 --ballast 0.92 --image-size 96M
fsx: all
	F2FS_FUSE=$(abspath $(BUILD)/f2fs-fuse) $(PYTHON) tests/fsx/fsx.py $(FSX_ARGS)

CRASH_REPLAY_ARGS ?=
crash-replay: $(BUILD)/tests/crash/replay
	$(BUILD)/tests/crash/replay $(CRASH_REPLAY_ARGS)

crashtest: all crash-replay
	F2FS_FUSE=$(abspath $(BUILD)/f2fs-fuse) $(PYTHON) tests/crash/crashtest.py $(CRASH_ARGS)
	F2FS_FUSE=$(abspath $(BUILD)/f2fs-fuse) $(PYTHON) tests/crash/crashtest.py $(CRASH_FULL_ARGS)

asan:
	@$(MAKE) --no-print-directory deps
	$(MAKE) BUILD=build-asan CC=clang OPT="-O1 -g -fno-omit-frame-pointer" \
	    SAN="-fsanitize=address,undefined -fno-sanitize-recover=undefined" \
	    test-unit test-integration \
	    ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
	    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

fuzz:
	@tests/fuzz/run.sh

# fstests is built outside the tree (see tests/fstests/run.sh); not in make test
.PHONY: fstests
fstests: all
	F2FS_FUSE=$(abspath $(BUILD)/f2fs-fuse) tests/fstests/run.sh $(FSTESTS_ARGS)

# the same inside a qemu guest with device-mapper (dm-flakey, dm-error, log-writes)
.PHONY: fstests-guest
fstests-guest: all
	FSTESTS_GUEST=1 F2FS_FUSE=$(abspath $(BUILD)/f2fs-fuse) tests/fstests/run.sh $(FSTESTS_ARGS)

# fstests' fsstress, several processes, on mounts in six configurations;
# the daemon must say nothing and fsck.f2fs find nothing (tests/fstests/stress.sh)
.PHONY: fsstress
fsstress: all
	FSTESTS_STRESS=1 F2FS_FUSE=$(abspath $(BUILD)/f2fs-fuse) tests/fstests/run.sh

bench: deps
	@$(MAKE) --no-print-directory all
	@tests/bench/run.sh $(abspath $(BUILD)/f2fs-fuse)

# the 8-job O_SYNC writeback benchmark with its peers (root; QUICK=1 for a
# short smoke; F2FS_FUSE=PATH another binary, BENCH_VARIANTS="NAME=PATH ..."
# more binaries in the same run)
.PHONY: bench-writeback
bench-writeback: deps
	@$(MAKE) --no-print-directory all
	@BENCH_GROUPS=writeback BENCH_QUICK=$(QUICK) \
		tests/bench/run.sh $(abspath $(or $(F2FS_FUSE),$(BUILD)/f2fs-fuse))
# extent precache with and without node read-ahead, cold (not part of test)
.PHONY: bench-precache
bench-precache: deps
	@$(MAKE) --no-print-directory all $(BUILD)/tests/bench/nodelimit
	@tests/bench/precache.py --build $(abspath $(BUILD)) $(BENCH_PRECACHE_ARGS)

# compressed files: 1 GiB written and read cold per algorithm against plain,
# CPU time per GiB, blocks saved (root; not part of test)
.PHONY: bench-compress
bench-compress: deps
	@$(MAKE) --no-print-directory all
	@tests/install-deps.sh python3-matplotlib
	@$(PYTHON) tests/bench/compress.py --build $(abspath $(BUILD)) --md docs/benchmarks.md \
		--png docs/bench-compress.png $(BENCH_COMPRESS_ARGS)

# small files side by side with kernel ext4 and fuse2fs (root; not part of test)
.PHONY: bench-meta
bench-meta: deps
	@$(MAKE) --no-print-directory all
	@tests/bench/meta.sh $(abspath $(BUILD)/f2fs-fuse)

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/share/man/man8
	install -m 0755 $(BUILD)/f2fs-fuse $(DESTDIR)$(PREFIX)/bin/f2fs-fuse
	install -m 0644 docs/f2fs-fuse.8 $(DESTDIR)$(PREFIX)/share/man/man8/f2fs-fuse.8
	install -m 0755 $(BUILD)/f2fs-fusectl $(DESTDIR)$(PREFIX)/bin/f2fs-fusectl
	install -m 0644 docs/f2fs-fusectl.8 $(DESTDIR)$(PREFIX)/share/man/man8/f2fs-fusectl.8

clean:
	rm -rf $(BUILD) build-asan build-fuzz
