#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Build and run the libFuzzer targets (docs/fuzzing.md):
#
#   image     mount a mutated image read-only, walk it (tests/fuzz/fuzz_image.c)
#   rw        mount a mutated image read-write, a fixed mix of changes,
#             checkpoint, unmount (fuzz_rw.c)
#   recovery  roll-forward over mutated chains of fsync()ed nodes (fuzz_recovery.c)
#   fscrypt   the encryption context and policy parsers (fuzz_fscrypt.c)
#   keyctl    the key control socket's request handler and the key and
#             policy operations behind it, on a mount (fuzz_keyctl.c)
#
#   FUZZ_TARGET   one of the above (default image)
#   FUZZ_SECONDS  run time (default 60)
#   FUZZ_OUT      work folder (default build-fuzz): the binaries, seeds/ (seed
#                 images and the trees they were loaded from), corpus-TARGET/
#                 (grown by libFuzzer; kept between runs), artifacts/ (crashes)
#   FUZZ_JOBS     parallel fuzzing processes (default 1; uses -fork)
#   FUZZ_ARGS     extra libFuzzer arguments
#   FUZZ_BUILD_ONLY=1  build the binaries and seeds, print the seed list, stop
#   FUZZ_SEEDS_ONLY=1  make the seeds alone, print the seed list, stop (for
#                 `make test-fuzz-corpus`, which replays the corpora through
#                 builds of the targets without libFuzzer)
#   CLANG         compiler (default clang)
#
# The starting inputs are in tests/fuzz/corpus/TARGET (small patch lists).
# To reproduce an artifact:
#   F2FS_FUZZ_SEEDS=$(cat build-fuzz/seeds/list) build-fuzz/fuzz_image build-fuzz/artifacts/crash-...
# The seed images are made deterministically (fixed UUID and timestamps), so
# an artifact also reproduces on seeds rebuilt by another run of this script
# with the same mkfs.f2fs/sload.f2fs.
set -eu

cd "$(dirname "$0")/../.."
OUT=${FUZZ_OUT:-build-fuzz}
TARGET=${FUZZ_TARGET:-image}
SECONDS_TO_RUN=${FUZZ_SECONDS:-60}
JOBS=${FUZZ_JOBS:-1}
CLANG=${CLANG:-clang}
PATH=$PATH:/usr/sbin:/sbin
export PATH

SEEDS_ONLY=${FUZZ_SEEDS_ONLY:-}
[ -n "$SEEDS_ONLY" ] || command -v "$CLANG" >/dev/null ||
	{ echo "run.sh: $CLANG not found" >&2; exit 1; }
for t in mkfs.f2fs sload.f2fs fsck.f2fs; do
	command -v $t >/dev/null || { echo "run.sh: $t not found (f2fs-tools)" >&2; exit 1; }
done
case $TARGET in image|rw|recovery|fscrypt|keyctl) ;; *)
	echo "run.sh: FUZZ_TARGET is image, rw, recovery, fscrypt or keyctl" >&2; exit 1;;
esac
mkdir -p "$OUT/seeds" "$OUT/corpus-$TARGET" "$OUT/artifacts"

build_target() {
	# ---- build: the core and crypto/ once, instrumented for coverage and the
	# sanitizers (the project's Makefile, its own build folder), then each target ----
	SAN="-fsanitize=address,undefined -fno-sanitize-recover=undefined"
	IGNORE="-fsanitize-coverage-ignorelist=$(pwd)/tests/fuzz/coverage-ignore.txt"
	# the Makefile rebuilds on source changes, not on flag changes: a new set of
	# flags starts from a clean object folder
	FLAGS_STAMP="$CLANG $SAN $IGNORE $(cat tests/fuzz/coverage-ignore.txt)"
	if [ "$(cat "$OUT/obj/flags" 2>/dev/null)" != "$FLAGS_STAMP" ]; then
		rm -rf "$OUT/obj"
		mkdir -p "$OUT/obj"
		printf '%s' "$FLAGS_STAMP" > "$OUT/obj/flags"
	fi
	make --no-print-directory -s BUILD="$OUT/obj" CC="$CLANG" \
		OPT="-O1 -g -fno-omit-frame-pointer" SAN="$SAN -fsanitize=fuzzer-no-link $IGNORE" \
		"$OUT/obj/libf2fscore.a"
	LIBS="-pthread $(pkg-config --libs libcrypto liblz4 libzstd lzo2 libisal)"
	CFLAGS="-std=c11 -D_GNU_SOURCE -D_FILE_OFFSET_BITS=64 -g -O1 -fno-omit-frame-pointer \
		-Wall -Wextra -Werror -Wno-unused-parameter -pthread -Icore -Icrypto -Itests/lib -Ifuse \
		$(pkg-config --cflags libcrypto liblz4 libzstd lzo2 libisal)"
	bin="$OUT/fuzz_$TARGET"
	common="tests/fuzz/fuzz_common.c tests/lib/testdev.c"
	[ "$TARGET" = fscrypt ] && common=""
	if [ "$TARGET" = keyctl ]; then
		# the fuse/ files of the key control, built here with the target's flags
		common="tests/lib/testdev.c fuse/keysock.c fuse/keyctl.c fuse/keyclaims.c fuse/keyinodes.c
			fuse/caller.c fuse/log.c fuse/inodes.c"
		CFLAGS="$CFLAGS $(pkg-config --cflags fuse3)"
		LIBS="$LIBS $(pkg-config --libs fuse3)"
	fi
	# shellcheck disable=SC2086
	$CLANG $CFLAGS $SAN $IGNORE -fsanitize=fuzzer -o "$bin" "tests/fuzz/fuzz_$TARGET.c" $common \
		"$OUT/obj/libf2fscore.a" $LIBS
}
[ -n "$SEEDS_ONLY" ] || build_target

# ---- seed images: mkfs.f2fs's smallest (52 MiB) for the empty one, the
# smallest sload.f2fs fills (64 MiB; 72 MiB with a 4 MiB file); sparse ----
UUID=0f2f5fcc-1d2e-4b3c-8a9d-7e6f5a4b3c2d
STAMP=1700000000
make_tree() {	# make_tree DIR BIG(0|1|e)
	rm -rf "$1"
	mkdir -p "$1"
	[ "$2" = e ] && return 0
	mkdir -p "$1/dir" "$1/many" "$1/a/b/c/d"
	printf 'hello world\n' > "$1/hello"
	: > "$1/empty"
	head -c 3000 /dev/zero | tr '\0' 'x' > "$1/inline3000"
	head -c 40000 /dev/zero | tr '\0' 'y' > "$1/blocks40k"
	ln -s hello "$1/link"
	ln -s "$(head -c 300 /dev/zero | tr '\0' 'l')" "$1/longlink"
	i=0
	while [ $i -lt 8 ]; do printf '%d\n' $i > "$1/dir/file-$i"; i=$((i + 1)); done
	i=0
	while [ $i -lt 64 ]; do : > "$1/many/entry-with-a-longer-name-$i"; i=$((i + 1)); done
	printf 'deep\n' > "$1/a/b/c/d/leaf"
	if [ "$2" = 1 ]; then	# > 923 blocks: needs a direct node
		head -c 4194304 /dev/zero | tr '\0' 'z' > "$1/big4m"
	fi
}
make_seed() {	# make_seed NAME BIG FEATURES
	img="$OUT/seeds/$1.img"
	[ -s "$img" ] && return 0
	make_tree "$OUT/seeds/tree-$1" "$2"
	rm -f "$img"
	case $2 in 1) truncate -s 72M "$img";; e) truncate -s 52M "$img";; *) truncate -s 64M "$img";; esac
	if [ -n "$3" ]; then
		mkfs.f2fs -q -f -U $UUID -T $STAMP -O "$3" "$img" >/dev/null
	else
		mkfs.f2fs -q -f -U $UUID -T $STAMP "$img" >/dev/null
	fi
	# sload.f2fs 1.15 may exit nonzero after a good load: fsck.f2fs decides
	[ "$2" = e ] || sload.f2fs -f "$OUT/seeds/tree-$1" -T $STAMP "$img" >/dev/null 2>&1 || true
	if ! fsck.f2fs "$img" >/dev/null 2>&1; then
		echo "run.sh: fsck.f2fs rejects seed $img" >&2
		rm -f "$img"
		exit 1
	fi
}
# flexible_inline_xattr only with small files: sload.f2fs 1.15 misplaces the
# blocks of larger files when it is on
make_seed default 1 ""
make_seed extra 0 extra_attr,inode_checksum,flexible_inline_xattr,inode_crtime,sb_checksum
make_seed chksum 1 extra_attr,inode_checksum,inode_crtime,sb_checksum
make_seed empty e extra_attr,inode_checksum,flexible_inline_xattr,inode_crtime,sb_checksum,lost_found
# compressed files: the corrupt corpus's base C (lz4 clusters made by hand)
if [ ! -s "$OUT/seeds/corpus/base-C.img" ]; then
	python3 tests/corrupt/make_corpus.py "$OUT/seeds/corpus" --bases-only >/dev/null
fi
LIST="$OUT/seeds/default.img:$OUT/seeds/extra.img:$OUT/seeds/chksum.img:$OUT/seeds/empty.img"
LIST="$LIST:$OUT/seeds/corpus/base-C.img"
echo "$LIST" > "$OUT/seeds/list"
F2FS_FUZZ_SEEDS=$LIST
export F2FS_FUZZ_SEEDS
if [ -n "${FUZZ_BUILD_ONLY:-}" ] || [ -n "$SEEDS_ONLY" ]; then
	echo "$LIST"
	exit 0
fi

echo "run.sh: fuzzing $TARGET for $SECONDS_TO_RUN s ($JOBS job(s)); seeds: $LIST"
# a small quarantine: each input allocates and frees about a megabyte, and
# ASan's default 256 MiB quarantine keeps the process faulting in fresh pages
ASAN_OPTIONS=${ASAN_OPTIONS:-quarantine_size_mb=16:malloc_context_size=8}
export ASAN_OPTIONS
FORK=""
[ "$JOBS" -gt 1 ] && FORK="-fork=$JOBS -ignore_crashes=0"
# shellcheck disable=SC2086
"$bin" -max_total_time="$SECONDS_TO_RUN" -max_len=1024 -timeout=10 \
	-rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$OUT/artifacts/" \
	$FORK ${FUZZ_ARGS:-} "$OUT/corpus-$TARGET" "tests/fuzz/corpus/$TARGET"
