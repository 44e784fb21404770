#!/usr/bin/env bash
# Small-file metadata benchmark: create, sync, stat, read, readdir, ls -l and
# delete of many 4 KiB files in 200 directories, side by side on kernel ext4
# (a loop device), fuse2fs and f2fs-fuse, interleaved runs, medians; the
# FUSE requests f2fs-fuse received in every phase (its SIGUSR1 counts).
#
# Usage: tests/bench/meta.sh /abs/path/to/f2fs-fuse [NAME=/abs/path/to/other-f2fs-fuse ...]
#        (make bench-meta)
# Further binaries are measured in the same runs, as variants of f2fs-fuse:
# a change and its baseline under the same machine load.
#
# Environment:
#   BENCH_DIR=DIR      scratch directory (default /var/tmp/f2fs-fuse-bench)
#   BENCH_QUICK=1      2,000 files and one run; prints, leaves the doc alone
#   BENCH_NFILES=N     files (default 20000)
#   BENCH_TREE=N       files of the Android-like tree (tests/bench/androidtree.py:
#                      deep app directories, mixed small sizes) walked with
#                      find -ls, du -s, tar c and rm -rf (default 100000, quick
#                      5000; 0 skips it)
#   BENCH_RUNS=N       runs per file system (default 3; medians reported)
#   BENCH_SYSTEMS=LIST subset of "ext4 fuse2fs f2fs" (f2fs includes the variants);
#                      a subset never writes the doc
#   BENCH_DOC=FILE     where a full run writes (default docs/benchmarks-meta.md;
#                      the part above its marker line is kept)
#
# Cold phases follow an unmount, sync and drop_caches and a fresh mount, on
# every file system alike; warm phases repeat the previous one at once.
# Needs root (loop device, drop_caches).  Results are ratios measured in the
# same run, never timed assertions.
set -Eeuo pipefail

BIN=${1:?usage: tests/bench/meta.sh /abs/path/to/f2fs-fuse [NAME=BIN ...]}
shift
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
PY=${PYTHON:-/usr/bin/python3}
UTIL=("$PY" "$HERE/metautil.py")
BENCH_DIR=${BENCH_DIR:-/var/tmp/f2fs-fuse-bench}
QUICK=${BENCH_QUICK:-0}
if [ "$QUICK" = 1 ]; then NFILES=${BENCH_NFILES:-2000} RUNS=${BENCH_RUNS:-1} TREE=${BENCH_TREE:-5000}
else NFILES=${BENCH_NFILES:-20000} RUNS=${BENCH_RUNS:-3} TREE=${BENCH_TREE:-100000}; fi
NDIRS=200
DOC=${BENCH_DOC:-$ROOT/docs/benchmarks-meta.md}
SYSTEMS=${BENCH_SYSTEMS:-ext4 fuse2fs f2fs}
IMG_MB=4096                      # the tree holds about 1.1 GiB

log() { printf 'bench-meta: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

[ "$(id -u)" = 0 ] || die "needs root (loop device, drop_caches)"
[ -x "$BIN" ] || die "$BIN is not an executable (run make first)"
for tool in mkfs.f2fs fsck.f2fs mkfs.ext4 fuse2fs fusermount3 losetup cc; do
    command -v "$tool" >/dev/null 2>&1 || die "$tool not found (run tests/install-deps.sh)"
done

# f2fs-fuse binaries: name -> path, in order
declare -A F2BIN=([f2fs-fuse]=$BIN)
F2NAMES=(f2fs-fuse)
for v in "$@"; do
    name=${v%%=*} path=${v#*=}
    [ "$name" != "$v" ] && [ -x "$path" ] || die "variant $v: want NAME=/path/to/f2fs-fuse"
    F2BIN[$name]=$path
    F2NAMES+=("$name")
done

mkdir -p "$BENCH_DIR"
BENCH_DIR=$(cd "$BENCH_DIR" && pwd -P)
WORK=$BENCH_DIR/meta
rm -rf "$WORK"
mkdir -p "$WORK/mnt"
MNT=$WORK/mnt
IMG=$WORK/img
RESULTS=$WORK/results            # "system phase seconds" per run
COUNTS=$WORK/counts              # "system phase KIND count ms" of the last run
CPU=$RESULTS.cpu                 # "system phase seconds": the daemon's CPU time per run
INFO=$WORK/info
: >"$RESULTS"; : >"$COUNTS"; : >"$INFO"; : >"$CPU"
info() { printf '%s\t%s\n' "$1" "$2" >>"$INFO"; }

MB=$WORK/metabench
cc -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra -Werror -o "$MB" "$HERE/metabench.c" ||
    die "building $HERE/metabench.c failed"

# ------------------------------------------------------------- mounts ----

is_mounted() { local _a _b _c _d mp _r; while read -r _a _b _c _d mp _r; do
    [ "$mp" = "$MNT" ] && return 0; done </proc/self/mountinfo; return 1; }
PID= LOOP= KIND= LOG=
umount_all() {
    local i
    if is_mounted; then
        case $KIND in
            ext4) umount "$MNT" ;;
            *) fusermount3 -u "$MNT" 2>/dev/null || umount -l "$MNT" ;;
        esac
    fi
    if [ -n "$PID" ]; then
        # a read-write daemon writes its last checkpoint after the unmount
        for i in $(seq 1200); do kill -0 "$PID" 2>/dev/null || break; sleep 0.05; done
        # A mount namespace made meanwhile (unshare -m) keeps a copy of the
        # mount, and the daemon then sees no unmount: SIGTERM ends it cleanly.
        if kill -0 "$PID" 2>/dev/null; then
            log "$KIND daemon still running after the unmount (a copy of the mount in another mount namespace?): SIGTERM"
            kill -TERM "$PID" 2>/dev/null || true
        fi
        wait "$PID" 2>/dev/null || true
        PID=
    fi
    if [ -n "$LOOP" ]; then losetup -d "$LOOP"; LOOP=; fi
}
cleanup() { local rc=$?; umount_all || true; exit $rc; }
trap cleanup EXIT
trap 'log "failed: line $LINENO: $BASH_COMMAND"' ERR
trap 'exit 130' INT TERM

# mount_sys SYSTEM: mount $IMG at $MNT
mount_sys() {
    local i
    KIND=$1
    case $KIND in
        ext4) LOOP=$(losetup -f --show "$IMG"); mount -t ext4 "$LOOP" "$MNT"; return 0 ;;
        fuse2fs) fuse2fs -f -o rw "$IMG" "$MNT" >>"$WORK/fuse2fs.log" 2>&1 & PID=$! ;;
        *) LOG=$WORK/$KIND.log; "${F2BIN[$KIND]}" -f "$IMG" "$MNT" >>"$LOG" 2>&1 & PID=$! ;;
    esac
    for i in $(seq 200); do
        is_mounted && return 0
        kill -0 "$PID" 2>/dev/null || break
        sleep 0.05
    done
    die "mounting $IMG ($KIND) failed"
}

cold_remount() {
    umount_all
    sync
    echo 3 >/proc/sys/vm/drop_caches
    mount_sys "$1"
}

# SIGUSR1: the daemon prints its request counts; wait for the new block.
NBLK=0
snap() {
    [ -n "$LOG" ] || return 0
    local want=$((NBLK + 1)) i
    kill -USR1 "$PID"
    for i in $(seq 400); do
        [ "$("${UTIL[@]}" blocks "$LOG")" -ge "$want" ] && { NBLK=$want; return 0; }
        sleep 0.025
    done
    die "$KIND printed no request counts"
}

# CPU seconds (user + system) the FUSE daemon has used so far; nothing for ext4
daemon_cpu() {
    [ -n "$PID" ] || return 0
    awk -v hz="$(getconf CLK_TCK)" '{ printf "%.3f\n", ($14 + $15) / hz }' "/proc/$PID/stat"
}

# cpu_result SYSTEM NAME BEFORE: the daemon's CPU seconds over a phase
cpu_result() {
    [ -n "$3" ] || return 0
    echo "$1 $2 $(awk -v a="$3" -v b="$(daemon_cpu)" 'BEGIN { printf "%.3f", b - a }')" >>"$CPU"
}

# phase SYSTEM NAME METABENCH_PHASE
phase() {
    local sys=$1 name=$2 t c
    snap
    c=$(daemon_cpu)
    t=$("$MB" "$3" "$MNT/t" "$NDIRS" "$NFILES") || die "$sys: $name failed"
    cpu_result "$sys" "$name" "$c"
    snap
    echo "$sys $name $t" >>"$RESULTS"
    if [ -n "$LOG" ] && [ "$LAST_RUN" = 1 ]; then
        "${UTIL[@]}" diff "$LOG" $((NBLK - 2)) $((NBLK - 1)) | sed "s/^/$sys $name /" >>"$COUNTS"
    fi
}

# tree_phase SYSTEM NAME COMMAND: a shell command over the tree, timed
tree_phase() {
    local sys=$1 name=$2 t0 t1 c
    snap
    c=$(daemon_cpu)
    t0=$(date +%s%N)
    bash -c "$3" >/dev/null || die "$sys: $name failed"
    t1=$(date +%s%N)
    cpu_result "$sys" "$name" "$c"
    snap
    echo "$sys $name $(( (t1 - t0) / 1000 ))e-6" >>"$RESULTS"
    if [ -n "$LOG" ] && [ "$LAST_RUN" = 1 ]; then
        "${UTIL[@]}" diff "$LOG" $((NBLK - 2)) $((NBLK - 1)) | sed "s/^/$sys $name /" >>"$COUNTS"
    fi
}

one_run() {
    local sys=$1
    rm -f "$IMG"
    truncate -s "${IMG_MB}M" "$IMG"
    case $sys in
        ext4|fuse2fs) mkfs.ext4 -q -F -L bench "$IMG" >/dev/null ;;
        *) mkfs.f2fs -q -f -l bench "$IMG" >/dev/null ;;
    esac
    LOG=
    NBLK=0
    [ -n "${F2BIN[$sys]:-}" ] && rm -f "$WORK/$sys.log"
    mount_sys "$sys"
    mkdir "$MNT/t"
    phase "$sys" create create
    phase "$sys" sync sync
    cold_remount "$sys"; NBLK=0; [ -z "$LOG" ] || : >"$LOG"
    phase "$sys" stat_cold stat
    phase "$sys" stat_warm stat
    cold_remount "$sys"; NBLK=0; [ -z "$LOG" ] || : >"$LOG"
    phase "$sys" read_cold read
    phase "$sys" read_warm read
    cold_remount "$sys"; NBLK=0; [ -z "$LOG" ] || : >"$LOG"
    phase "$sys" readdir_cold readdir
    cold_remount "$sys"; NBLK=0; [ -z "$LOG" ] || : >"$LOG"
    phase "$sys" lsl_cold lsl
    phase "$sys" lsl_warm lsl
    phase "$sys" delete delete
    if [ "$TREE" -gt 0 ]; then
        tree_phase "$sys" tree_create "$PY $HERE/androidtree.py $MNT/a $TREE; sync -f $MNT"
        cold_remount "$sys"; NBLK=0; [ -z "$LOG" ] || : >"$LOG"
        tree_phase "$sys" tree_find "find $MNT/a -ls"
        cold_remount "$sys"; NBLK=0; [ -z "$LOG" ] || : >"$LOG"
        tree_phase "$sys" tree_du "du -s $MNT/a"
        cold_remount "$sys"; NBLK=0; [ -z "$LOG" ] || : >"$LOG"
        tree_phase "$sys" tree_tar "tar cf - -C $MNT a | wc -c"
        cold_remount "$sys"; NBLK=0; [ -z "$LOG" ] || : >"$LOG"
        tree_phase "$sys" tree_rm "rm -rf $MNT/a && sync -f $MNT"
    fi
    umount_all
    if [ -n "${F2BIN[$sys]:-}" ]; then
        out=$(fsck.f2fs --dry-run -f "$IMG" 2>&1) || { echo "$out" >&2; die "fsck.f2fs failed after $sys"; }
        [[ $out != *'[Fail]'* && $out != *'[FIX]'* ]] || { echo "$out" >&2; die "fsck.f2fs complains after $sys"; }
    fi
}

order=()
for s in $SYSTEMS; do
    case $s in
        ext4|fuse2fs) order+=("$s") ;;
        f2fs) order+=("${F2NAMES[@]}") ;;
        *) die "unknown system $s" ;;
    esac
done

info date "$(date -u '+%Y-%m-%d %H:%M UTC')"
info nfiles "$NFILES"
info ndirs "$NDIRS"
info tree "$TREE"
info runs "$RUNS"
info systems "${order[*]}"
info kernel "$(uname -srm)"
info cpu "$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
info nproc "$(nproc)"
read -r l1 l5 l15 _ </proc/loadavg
info load "at the start $l1 / $l5 / $l15"
for n in "${F2NAMES[@]}"; do
    rev=
    [[ ${F2BIN[$n]} == "$ROOT"/* ]] && rev=$(git -C "$ROOT" describe --always --dirty 2>/dev/null || true)
    info binary "$n: ${F2BIN[$n]}${rev:+ (tree $rev)}"
done
fuse2fs_v=$(fuse2fs -V 2>&1 || true)
info fuse2fs "${fuse2fs_v%%$'\n'*}"
info disk "$(df -P "$BENCH_DIR" | tail -n1 | cut -d' ' -f1) (scratch $BENCH_DIR)"

for r in $(seq "$RUNS"); do
    LAST_RUN=$([ "$r" = "$RUNS" ] && echo 1 || echo 0)
    for sys in "${order[@]}"; do
        log "run $r/$RUNS: $sys, $NFILES files"
        one_run "$sys"
    done
done
rm -f "$IMG"
read -r l1 l5 l15 _ </proc/loadavg
info load "at the end $l1 / $l5 / $l15"

if [ "$QUICK" = 1 ] || [ "$SYSTEMS" != "ext4 fuse2fs f2fs" ]; then
    "${UTIL[@]}" render "$RESULTS" "$COUNTS" "$INFO"
    log "quick or partial run: $DOC left unchanged"
else
    "${UTIL[@]}" render "$RESULTS" "$COUNTS" "$INFO" "$DOC"
    log "results written to $DOC"
fi
