#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Build and run the libFuzzer image-parser target (tests/fuzz/fuzz_image.c).
#
#   FUZZ_SECONDS  run time (default 60)
#   FUZZ_OUT      work folder (default build-fuzz): the binary, seeds/ (seed
#                 images and the trees they were loaded from), corpus/ (grown by
#                 libFuzzer; kept between runs), artifacts/ (crashes)
#   FUZZ_JOBS     parallel fuzzing processes (default 1; uses -fork)
#   FUZZ_ARGS     extra libFuzzer arguments
#   CLANG         compiler (default clang)
#
# To reproduce an artifact:
#   F2FS_FUZZ_SEEDS=$(cat build-fuzz/seeds/list) build-fuzz/fuzz_image build-fuzz/artifacts/crash-...
# The seed images are made deterministically (fixed UUID and timestamps), so
# an artifact also reproduces on seeds rebuilt by another run of this script
# with the same mkfs.f2fs/sload.f2fs.
set -eu

cd "$(dirname "$0")/../.."
OUT=${FUZZ_OUT:-build-fuzz}
SECONDS_TO_RUN=${FUZZ_SECONDS:-60}
JOBS=${FUZZ_JOBS:-1}
CLANG=${CLANG:-clang}
PATH=$PATH:/usr/sbin:/sbin
export PATH

command -v "$CLANG" >/dev/null || { echo "run.sh: $CLANG not found" >&2; exit 1; }
for t in mkfs.f2fs sload.f2fs fsck.f2fs; do
	command -v $t >/dev/null || { echo "run.sh: $t not found (f2fs-tools)" >&2; exit 1; }
done
mkdir -p "$OUT/seeds" "$OUT/corpus" "$OUT/artifacts" "$OUT/inputs"

# ---- build: the core compiled directly with the sanitizers ----
CFLAGS="-std=c11 -D_GNU_SOURCE -D_FILE_OFFSET_BITS=64 -g -O1 -fno-omit-frame-pointer \
	-fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	-Wall -Wextra -Werror -Wno-unused-parameter -pthread -DF2FS_FUSE_VERSION=\"fuzz\""
LIBS="-pthread"
SRCS="$(ls core/*.c)"
# the core may call into crypto/ (fscrypt); link it when present
if ls crypto/*.c >/dev/null 2>&1; then
	SRCS="$SRCS $(ls crypto/*.c)"
	LIBS="$LIBS $(pkg-config --libs libcrypto 2>/dev/null || echo -lcrypto)"
	CFLAGS="$CFLAGS -Icrypto $(pkg-config --cflags libcrypto 2>/dev/null || true)"
fi
# the codecs of compressed files (core/compress.c)
LIBS="$LIBS $(pkg-config --libs liblz4 libzstd lzo2)"
CFLAGS="$CFLAGS $(pkg-config --cflags liblz4 libzstd lzo2)"
echo "run.sh: building $OUT/fuzz_image"
# shellcheck disable=SC2086
$CLANG $CFLAGS -Icore -o "$OUT/fuzz_image" tests/fuzz/fuzz_image.c $SRCS $LIBS

# ---- seed images ----
# mkfs.f2fs 1.15 needs >= 52 MiB; 64 MiB leaves sload room for the small trees,
# 80 MiB for the ones with a 4 MiB file (sload needs free segments per log).
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
	while [ $i -lt 20 ]; do printf '%d\n' $i > "$1/dir/file-$i"; i=$((i + 1)); done
	i=0
	while [ $i -lt 300 ]; do : > "$1/many/entry-with-a-longer-name-$i"; i=$((i + 1)); done
	printf 'deep\n' > "$1/a/b/c/d/leaf"
	if [ "$2" = 1 ]; then	# > 867 blocks: needs a direct node
		head -c 4194304 /dev/zero | tr '\0' 'z' > "$1/big4m"
	fi
}
make_seed() {	# make_seed NAME BIG FEATURES
	img="$OUT/seeds/$1.img"
	[ -s "$img" ] && return 0
	make_tree "$OUT/seeds/tree-$1" "$2"
	rm -f "$img"
	if [ "$2" = 1 ]; then truncate -s 80M "$img"; else truncate -s 64M "$img"; fi
	if [ -n "$3" ]; then
		mkfs.f2fs -q -f -U $UUID -T $STAMP -O "$3" "$img" >/dev/null
	else
		mkfs.f2fs -q -f -U $UUID -T $STAMP "$img" >/dev/null
	fi
	# sload.f2fs 1.15 may exit nonzero after a good load: fsck.f2fs decides
	sload.f2fs -f "$OUT/seeds/tree-$1" -T $STAMP "$img" >/dev/null 2>&1 || true
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

# ---- initial inputs: each seed untouched, with and without checksum fix-ups,
# plus one small patch per seed to get libFuzzer going ----
for s in 0 1 2 3; do
	printf "\\$(printf %03o $s)" > "$OUT/inputs/seed$s"
	printf "\\$(printf %03o $((s | 128)))" > "$OUT/inputs/seed$s-fix"
	# op 1 (xor) on hot block 1 at offset 16, one byte 0x01; then the same with fix-ups
	printf "\\$(printf %03o $s)\\001\\001\\000\\020\\000\\001\\001" > "$OUT/inputs/seed$s-xor"
	printf "\\$(printf %03o $((s | 128)))\\002\\002\\000\\000\\000\\001\\002" > "$OUT/inputs/seed$s-magic"
done

echo "run.sh: fuzzing for $SECONDS_TO_RUN s ($JOBS job(s)); seeds: $LIST"
F2FS_FUZZ_SEEDS=$LIST
export F2FS_FUZZ_SEEDS
FORK=""
[ "$JOBS" -gt 1 ] && FORK="-fork=$JOBS -ignore_crashes=0"
# shellcheck disable=SC2086
"$OUT/fuzz_image" -max_total_time="$SECONDS_TO_RUN" -max_len=1024 -timeout=30 \
	-rss_limit_mb=4096 -print_final_stats=1 -artifact_prefix="$OUT/artifacts/" \
	$FORK ${FUZZ_ARGS:-} "$OUT/corpus" "$OUT/inputs"
