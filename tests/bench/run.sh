#!/usr/bin/env bash
# f2fs-fuse benchmarks, side by side with a peer on the same disk in one run.
#
# Reads (group "read"):
#   1. sequential read of a large file through the mount vs a raw fio read of
#      the same bytes in the image file (target: mount >= 80% of raw)
#   2. 4 KiB random reads through the mount vs fuse2fs on an ext4 image
#   3. metadata walk (find + stat) over many small files vs fuse2fs
#   4. the sequential read of 1. on fuse2fs
# Writes (group "write", tests/bench/writes.sh): sequential 1 MiB writes, the
# 8-job O_SYNC "seed" job with f2fs-fuse's device write sizes, 4 KiB random
# writes with fsync, create/stat/unlink of small files; peers fuse2fs and raw
# fio on the scratch disk.
# Encryption (group "crypto", tests/bench/crypto.sh): AES-256-XTS of the
# crypto layer vs openssl speed; encrypted vs plain directory through the mount.
# Writeback (group "writeback", tests/bench/writeback.sh, make bench-writeback;
# not in the default groups, needs root): the 8-job O_SYNC job on encrypted and
# plain files for each -o serialize_io mode, buffered and -o direct, with
# kernel ext4, fuse2fs and raw O_SYNC writes as peers; device write sizes;
# an IOPS-limited device; its own section of the doc.
#
# Usage: tests/bench/run.sh /abs/path/to/f2fs-fuse   (what `make bench` runs)
#
# Environment:
#   BENCH_DIR=DIR      scratch directory (default /var/tmp/f2fs-fuse-bench);
#                      images are kept there and reused by later runs
#   BENCH_QUICK=1      short smoke run (smaller files, fewer files, shorter
#                      time-based jobs); prints results but leaves the doc alone
#   BENCH_RUNS=N       runs per measurement (default 3; the median is reported)
#   BENCH_GROUPS=LIST  which groups to run (default "read write crypto"); a
#                      run of fewer groups never writes the doc (except
#                      "writeback", which writes only its own section)
#   BENCH_DOC=FILE     where the full run writes its results
#                      (default docs/benchmarks.md)
#   BENCH_REBUILD=1    rebuild the images even if cached ones exist
#   BENCH_REV=TEXT     what the binary was built from, for the report
#                      (default: git describe of this tree if BIN is in it)
#
# Results are ratios measured in the same run, never timed assertions: the
# script fails only if something could not be measured.
set -Eeuo pipefail

BIN=${1:?usage: tests/bench/run.sh /abs/path/to/f2fs-fuse}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
# Debian's python3 (its matplotlib draws the pictures), not another one on PATH
PY=${PYTHON:-/usr/bin/python3}
UTIL=("$PY" "$HERE/benchutil.py")
BENCH_DIR=${BENCH_DIR:-/var/tmp/f2fs-fuse-bench}
QUICK=${BENCH_QUICK:-0}
RUNS=${BENCH_RUNS:-3}
DOC=${BENCH_DOC:-$ROOT/docs/benchmarks.md}
GROUPS_RUN=${BENCH_GROUPS:-read write crypto}
want() { [[ " $GROUPS_RUN " == *" $1 "* ]]; }

if [ "$QUICK" = 1 ]; then
    BIG_MB=256 NFILES=5000 RR_TIME=5
else
    BIG_MB=1024 NFILES=20000 RR_TIME=20
fi
RR_JOBS=4
TUNED_RA_KB=1024
LAYOUT=v1        # bump when the trees or image parameters change

log() { printf 'bench: %s\n' "$*" >&2; }
die() { log "error: $*"; exit 1; }

[ -x "$BIN" ] || die "$BIN is not an executable (run make first)"
"$ROOT/tests/install-deps.sh" python3-matplotlib || die "python3-matplotlib could not be installed"
for tool in fio mkfs.f2fs sload.f2fs fsck.f2fs mkfs.ext4 e2fsck fuse2fs fusermount3 \
            find xargs stat python3 cc openssl; do
    command -v "$tool" >/dev/null 2>&1 || die "$tool not found (run tests/install-deps.sh)"
done

mkdir -p "$BENCH_DIR/images" "$BENCH_DIR/mnt-a" "$BENCH_DIR/mnt-b"
BENCH_DIR=$(cd "$BENCH_DIR" && pwd -P)
IMGDIR=$BENCH_DIR/images
MNT_A=$BENCH_DIR/mnt-a           # f2fs-fuse
MNT_B=$BENCH_DIR/mnt-b           # fuse2fs
WORK=$BENCH_DIR/run
rm -rf "$WORK"
mkdir -p "$WORK"
RESULTS=$WORK/results            # "name value" per run
INFO=$WORK/info                  # "key<TAB>value" for the report
: >"$RESULTS"
: >"$INFO"

info() { printf '%s\t%s\n' "$1" "$2" >>"$INFO"; }
result() { printf '%s %s\n' "$1" "$2" >>"$RESULTS"; }

# ---------------------------------------------------------------- mounts ----

# mountinfo escapes blanks in paths as octal; our paths are resolved ones.
mount_dev() {                    # MNT -> "major:minor" of the mount, or fail
    local _id _pid dev _root mp _rest
    while read -r _id _pid dev _root mp _rest; do
        [ "$mp" = "$1" ] && { echo "$dev"; return 0; }
    done </proc/self/mountinfo
    return 1
}
is_mounted() { mount_dev "$1" >/dev/null; }

declare -A DAEMON=()             # mount point -> daemon pid
WRAP=()                          # a command the f2fs-fuse daemon is started under
STRACE_PID=

unmount() {
    local mnt=$1 pid=${DAEMON[$1]:-} i
    if is_mounted "$mnt"; then
        fusermount3 -u "$mnt" 2>/dev/null || umount "$mnt" 2>/dev/null ||
            fusermount3 -u -z "$mnt" 2>/dev/null || umount -l "$mnt" 2>/dev/null || true
    fi
    if [ -n "$pid" ]; then
        # A read-write daemon writes its final checkpoint after the unmount.
        for i in $(seq 1200); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
        kill -0 "$pid" 2>/dev/null && kill "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null || true
        unset "DAEMON[$mnt]"
    fi
}

cleanup() {
    local rc=$?
    if [ -n "$STRACE_PID" ]; then kill "$STRACE_PID" 2>/dev/null || true; fi
    unmount "$MNT_A"
    unmount "$MNT_B"
    exit $rc
}
trap cleanup EXIT
trap 'log "failed: line $LINENO: $BASH_COMMAND"' ERR
trap 'exit 130' INT TERM

# mount_fs f2fs|ext4 IMAGE MNT: mount in the foreground mode in the background
# (options: $MOUNT_OPTS, default ro),
# so the daemon's pid is known and its messages land in $WORK/<kind>.log.
mount_fs() {
    local kind=$1 img=$2 mnt=$3 pid i
    unmount "$mnt"
    case $kind in
        f2fs) "${WRAP[@]}" "$BIN" -f -o "${MOUNT_OPTS:-ro}" "$img" "$mnt" >>"$WORK/f2fs-fuse.log" 2>&1 & ;;
        ext4) fuse2fs -f -o "${MOUNT_OPTS:-ro}" "$img" "$mnt" >>"$WORK/fuse2fs.log" 2>&1 & ;;
    esac
    pid=$!
    DAEMON[$mnt]=$pid
    for i in $(seq 200); do
        is_mounted "$mnt" && return 0
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.05
    done
    cat "$WORK"/*.log >&2 2>/dev/null || true
    die "mounting $img ($kind) at $mnt failed"
}

if [ -w /proc/sys/vm/drop_caches ]; then
    DROP=1
    info caches "dropped before every measurement (echo 3 > /proc/sys/vm/drop_caches)"
else
    DROP=0
    info caches "NOT dropped (not root): the image may be partly in the page cache, which flatters the first measurements"
    log "not root: cannot drop the page cache; results include page-cache effects"
fi
drop_caches() {
    sync
    if [ "$DROP" = 1 ]; then echo 3 >/proc/sys/vm/drop_caches; fi
}

now_ns() { date +%s%N; }

# cpu_snap: "busy iowait total" jiffies over all CPUs, from /proc/stat.
cpu_snap() {
    local _c user nice sys idle iow irq sirq steal _rest
    read -r _c user nice sys idle iow irq sirq steal _rest </proc/stat
    echo "$((user + nice + sys + irq + sirq)) $iow $((user + nice + sys + idle + iow + irq + sirq + steal))"
}
# cpu_use "SNAP0" "SNAP1": "busy% iowait%" of the whole machine in between.
cpu_use() {
    local b0 w0 t0 b1 w1 t1
    read -r b0 w0 t0 <<<"$1"
    read -r b1 w1 t1 <<<"$2"
    local dt=$((t1 - t0))
    [ "$dt" -gt 0 ] || dt=1
    echo "$((100 * (b1 - b0) / dt)) $((100 * (w1 - w0) / dt))"
}

# ---------------------------------------------------------------- images ----

fsck_f2fs_ok() {
    local out
    out=$(fsck.f2fs --dry-run -f "$1" 2>&1) || { echo "$out" >&2; return 1; }
    if [[ $out == *'[Fail]'* || $out == *'[FIX]'* ]]; then echo "$out" >&2; return 1; fi
}

# make_f2fs TREE IMAGE SIZE_MB: mkfs + sload, accepted only if fsck is clean.
make_f2fs() {
    local tree=$1 img=$2 size=$3
    rm -f "$img.tmp"
    truncate -s "${size}M" "$img.tmp"
    mkfs.f2fs -q -f -l bench "$img.tmp" >/dev/null
    # sload.f2fs 1.15 exits non-zero even on success: fsck decides.
    sload.f2fs -f "$tree" -P "$img.tmp" >"$WORK/sload.log" 2>&1 || true
    fsck_f2fs_ok "$img.tmp" || die "fsck.f2fs rejects the image sload.f2fs built from $tree"
    mv "$img.tmp" "$img"
}

make_ext4() {
    local tree=$1 img=$2 size=$3
    rm -f "$img.tmp"
    mkfs.ext4 -q -F -L bench -d "$tree" "$img.tmp" "${size}M" >/dev/null
    e2fsck -fn "$img.tmp" >"$WORK/e2fsck.log" 2>&1 ||
        { cat "$WORK/e2fsck.log" >&2; die "e2fsck rejects the image mkfs.ext4 built from $tree"; }
    mv "$img.tmp" "$img"
}

BIG_F2FS=$IMGDIR/big-$LAYOUT-$BIG_MB.f2fs
BIG_EXT4=$IMGDIR/big-$LAYOUT-$BIG_MB.ext4
BIG_OFF=$IMGDIR/big-$LAYOUT-$BIG_MB.offset
SMALL_F2FS=$IMGDIR/small-$LAYOUT-$NFILES.f2fs
SMALL_EXT4=$IMGDIR/small-$LAYOUT-$NFILES.ext4
if want read; then
    if [ "${BENCH_REBUILD:-0}" = 1 ]; then
        rm -f "$BIG_F2FS" "$BIG_EXT4" "$BIG_OFF" "$SMALL_F2FS" "$SMALL_EXT4"
    fi

    if [ ! -s "$BIG_F2FS" ] || [ ! -s "$BIG_EXT4" ] || [ ! -s "$BIG_OFF" ]; then
        log "building the ${BIG_MB} MiB file images"
        rm -rf "$BENCH_DIR/tree-big"
        mkdir -p "$BENCH_DIR/tree-big"
        head -c "${BIG_MB}M" /dev/urandom >"$BENCH_DIR/tree-big/big.bin"
        make_f2fs "$BENCH_DIR/tree-big" "$BIG_F2FS" $((BIG_MB * 5 / 4 + 256))
        make_ext4 "$BENCH_DIR/tree-big" "$BIG_EXT4" $((BIG_MB * 5 / 4 + 256))
        "${UTIL[@]}" locate "$BIG_F2FS" "$BENCH_DIR/tree-big/big.bin" >"$BIG_OFF"
        rm -rf "$BENCH_DIR/tree-big"
    fi
    if [ ! -s "$SMALL_F2FS" ] || [ ! -s "$SMALL_EXT4" ]; then
        log "building the $NFILES small file images"
        rm -rf "$BENCH_DIR/tree-small"
        mkdir -p "$BENCH_DIR/tree-small"
        "${UTIL[@]}" small-tree "$BENCH_DIR/tree-small" "$NFILES"
        make_f2fs "$BENCH_DIR/tree-small" "$SMALL_F2FS" 1024
        make_ext4 "$BENCH_DIR/tree-small" "$SMALL_EXT4" 1024
        rm -rf "$BENCH_DIR/tree-small"
    fi
    read -r RAW_OFF RAW_LEN <"$BIG_OFF"
    [ "$RAW_OFF" -ge 0 ] || die "could not find the file's data in $BIG_F2FS (remove it to rebuild)"
fi

# ----------------------------------------------------------- machine info ----

info date "$(date -u '+%Y-%m-%d %H:%M UTC')"
info quick "$QUICK"
info groups "$GROUPS_RUN"
info runs "$RUNS"
info big_size "$( [ "$BIG_MB" -ge 1024 ] && echo "$((BIG_MB / 1024)) GiB" || echo "$BIG_MB MiB")"
info nfiles "$NFILES"
info big_mb "$BIG_MB"
info rr_jobs "$RR_JOBS"
info rr_time "$RR_TIME"
info tuned_ra_kb "$TUNED_RA_KB"
info nproc "$(nproc)"
read -r l1 l5 l15 _ </proc/loadavg
info load "at the start $l1 / $l5 / $l15 (1 / 5 / 15 min)"
cpu=$(while IFS=: read -r k v; do
          case $k in "model name"*) echo "${v# }"; break ;; esac
      done </proc/cpuinfo)
info cpu "${cpu:-unknown}"
mem_kb=$(while read -r k v _; do [ "$k" = MemTotal: ] && { echo "$v"; break; }; done </proc/meminfo)
info mem "$((mem_kb / 1024 / 1024)) GiB"
info kernel "$(uname -srm)"
info fio "$(fio --version)"
# first_line CMD...: the first line of CMD's output (no pipe: no SIGPIPE).
first_line() { local out; out=$("$@" 2>&1 || true); echo "${out%%$'\n'*}"; }
f2fs_fuse=$(first_line "$BIN" -V)
if [ -n "${BENCH_REV:-}" ]; then
    f2fs_fuse+=", built from $BENCH_REV"
elif [[ $BIN == "$ROOT"/* ]] && rev=$(git -C "$ROOT" describe --always --dirty 2>/dev/null); then
    f2fs_fuse+=", built from $rev"
fi
info f2fs_fuse "$f2fs_fuse"
if command -v dpkg-query >/dev/null 2>&1; then
    info libfuse3 "$(dpkg-query -W -f='${Version}' libfuse3-3 2>/dev/null || echo unknown)"
fi
info fuse2fs "$(first_line fuse2fs -V)"
info f2fs_tools "$(first_line mkfs.f2fs -V)"
dfline=$(df -P "$BENCH_DIR" | tail -n 1)
read -r disk_dev _ <<<"$dfline"
disk="$disk_dev (scratch $BENCH_DIR)"
base=${disk_dev##*/}
if [ -e "/sys/class/block/$base" ]; then
    top=$(basename "$(readlink -f "/sys/class/block/$base/..")")
    [ -e "/sys/block/$top/queue" ] || top=$base
    if [ -r "/sys/block/$top/queue/rotational" ]; then
        disk+=", rotational=$(cat "/sys/block/$top/queue/rotational")"
        disk+=", read_ahead_kb=$(cat "/sys/block/$top/queue/read_ahead_kb")"
    fi
fi
info disk "$disk"
DISK_STAT=
if [ -n "${top:-}" ] && [ -r "/sys/block/$top/stat" ]; then DISK_STAT=/sys/block/$top/stat; fi

# ------------------------------------------------------------- commands ----

if want read; then
    SEQ_ARGS=(--rw=read --bs=1M --ioengine=psync --direct=0 --numjobs=1 --readonly
              --invalidate=1)
    RR_ARGS=(--rw=randread --bs=4k --ioengine=psync --direct=1 --numjobs="$RR_JOBS"
             --group_reporting --time_based --runtime="$RR_TIME" --readonly)

    info cmd "# images: one ${BIG_MB} MiB random file; $NFILES files of 0-12 KiB in 500-file directories"
    info cmd "mkfs.f2fs -q -f -l bench IMG.f2fs && sload.f2fs -f TREE -P IMG.f2fs && fsck.f2fs --dry-run -f IMG.f2fs"
    info cmd "mkfs.ext4 -q -F -L bench -d TREE IMG.ext4 SIZE && e2fsck -fn IMG.ext4"
    info cmd "$BIN -f -o ro IMG.f2fs MNT        # f2fs-fuse"
    info cmd "fuse2fs -f -o ro IMG.ext4 MNT     # fuse2fs"
    info cmd "# 1, 4: sequential read; raw reads the image region holding the file's data ($RAW_LEN bytes at $RAW_OFF)"
    info cmd "fio --name=seq --filename=IMG.f2fs ${SEQ_ARGS[*]} --offset=$RAW_OFF --size=$RAW_LEN"
    info cmd "fio --name=seq --filename=MNT/big.bin ${SEQ_ARGS[*]}"
    info cmd "# 2: random reads (the backing image is read into the page cache first, so this measures the daemons, not the disk)"
    info cmd "cat IMG > /dev/null; fio --name=rr --filename=MNT/big.bin ${RR_ARGS[*]}"
    info cmd "# 3: metadata walk on a fresh mount"
    info cmd "find MNT -type f -print0 | xargs -0 stat > /dev/null"
fi

# ----------------------------------------------------------- measurements ----

# seq_run NAME FILE [fio args]: one cold sequential read, MiB/s into results.
seq_run() {
    local name=$1 file=$2 out
    shift 2
    out=$WORK/$name.$RANDOM.json
    local c0 c1 busy iow d0= d1= r0 s0 r1 s1 _x
    [ -n "${SEQ_NODROP:-}" ] || drop_caches
    [ -z "$DISK_STAT" ] || d0=$(cat "$DISK_STAT")
    c0=$(cpu_snap)
    fio --name=seq --filename="$file" "${SEQ_ARGS[@]}" "$@" \
        --output-format=json --output="$out" >/dev/null
    c1=$(cpu_snap)
    [ -z "$DISK_STAT" ] || d1=$(cat "$DISK_STAT")
    result "$name" "$("${UTIL[@]}" fio "$out" read.bw_bytes)"
    if [ -n "$d0" ]; then
        # Fields 1 and 3: reads completed, sectors read.
        read -r r0 _x s0 _x <<<"$d0"
        read -r r1 _x s1 _x <<<"$d1"
        if [ "$r1" -gt "$r0" ]; then
            result "${name}_diskreq_kib" "$(( (s1 - s0) / 2 / (r1 - r0) ))"
        fi
        result "${name}_disk_mib" "$(( (s1 - s0) / 2048 ))"
    fi
    result "${name}_fiocpu" "$("${UTIL[@]}" fio-cpu "$out")"
    read -r busy iow <<<"$(cpu_use "$c0" "$c1")"
    result "${name}_busy" "$busy"
    result "${name}_iowait" "$iow"
}

# The FUSE bdi of a mount, for read_ahead_kb.
bdi_of() { echo "/sys/class/bdi/$(mount_dev "$1")"; }
fuse_conn_of() { local d; d=$(mount_dev "$1"); echo "/sys/fs/fuse/connections/${d#*:}"; }

# cpu_ms MNT: user+system CPU the mount's daemon has used so far, in ms.
cpu_ms() {
    local stat rest
    stat=$(cat "/proc/${DAEMON[$1]}/stat")
    rest=${stat##*) }            # fields from 3 on; utime and stime are 14 and 15
    set -- $rest
    echo $(( (${12} + ${13}) * 1000 / $(getconf CLK_TCK) ))
}

# seq_mounted NAME KIND IMAGE MNT [warm]: one sequential read on a fresh mount,
# plus the daemon's CPU time for it.
seq_mounted() {
    local name=$1 kind=$2 img=$3 mnt=$4 warm=${5:-}
    mount_fs "$kind" "$img" "$mnt"
    if [ "$warm" = warm ]; then
        drop_caches
        cat "$img" >/dev/null
        SEQ_NODROP=1 seq_run "$name" "$mnt/big.bin"
    else
        seq_run "$name" "$mnt/big.bin"
    fi
    result "${name}_cpu" "$(cpu_ms "$mnt")"
    unmount "$mnt"
}

if want read; then
    log "sequential reads: $RUNS x (raw, f2fs-fuse, fuse2fs)"
    for r in $(seq "$RUNS"); do
        seq_run seq_raw "$BIG_F2FS" --offset="$RAW_OFF" --size="$RAW_LEN"
        seq_mounted seq_f2fs f2fs "$BIG_F2FS" "$MNT_A"
        seq_mounted seq_fuse2fs ext4 "$BIG_EXT4" "$MNT_B"
    done

    # Informational: the same reads with the backing image already in the page
    # cache, which shows what the FUSE path itself can carry on this machine.
    log "sequential reads with a warm backing image: $RUNS x (f2fs-fuse, fuse2fs) (informational)"
    for r in $(seq "$RUNS"); do
        seq_mounted seq_f2fs_warm f2fs "$BIG_F2FS" "$MNT_A" warm
        seq_mounted seq_fuse2fs_warm ext4 "$BIG_EXT4" "$MNT_B" warm
    done
    info cmd "# informational: the sequential reads again after cat IMG > /dev/null (backing image in the page cache)"

    # Diagnostics for the sequential path (untimed): bdi and connection settings,
    # and the sizes of the READ requests the daemon answers.
    mount_fs f2fs "$BIG_F2FS" "$MNT_A"
    bdi=$(bdi_of "$MNT_A")
    conn=$(fuse_conn_of "$MNT_A")
    default_ra=$(cat "$bdi/read_ahead_kb" 2>/dev/null || echo '?')
    d="f2fs-fuse mount: FUSE bdi $(basename "$bdi") read_ahead_kb=$default_ra"
    if [ -r "$conn/max_background" ]; then
        d+=", max_background=$(cat "$conn/max_background")"
        d+=", congestion_threshold=$(cat "$conn/congestion_threshold")"
    else
        d+=" (fusectl not mounted: max_background unknown)"
    fi
    [ -r /proc/sys/fs/fuse/max_pages_limit ] && d+=", kernel max_pages_limit=$(cat /proc/sys/fs/fuse/max_pages_limit)"
    opts=$(while read -r _ _ _ _ mp o _; do if [ "$mp" = "$MNT_A" ]; then echo "$o"; fi; done </proc/self/mountinfo)
    d+=", mount options: $opts"
    info diag "$d"
    # trace_seq MNT LABEL: strace the daemon through a cold read of a quarter of
    # the file and report the READ reply and image read sizes.
    trace_seq() {
        local mnt=$1 label=$2 pid=${DAEMON[$1]} fd fusefd= line
        command -v strace >/dev/null 2>&1 || return 0
        for fd in /proc/"$pid"/fd/*; do
            [ "$(readlink "$fd")" = /dev/fuse ] && { fusefd=${fd##*/}; break; }
        done
        [ -n "$fusefd" ] || return 0
        drop_caches
        strace -f -qq -e trace=writev,write,pread64,preadv,preadv2 -o "$WORK/seq.strace" \
            -p "$pid" 2>/dev/null &
        STRACE_PID=$!
        sleep 1
        head -c "$((BIG_MB / 4))M" "$mnt/big.bin" >/dev/null
        kill "$STRACE_PID" 2>/dev/null || true
        wait "$STRACE_PID" 2>/dev/null || true
        STRACE_PID=
        while IFS= read -r line; do
            info diag "f2fs-fuse$label, strace of a cold sequential read of $((BIG_MB / 4)) MiB: $line"
        done < <("${UTIL[@]}" trace-sizes "$WORK/seq.strace" "$fusefd")
    }
    trace_seq "$MNT_A" ""
    if [ "$(id -u)" = 0 ]; then
        unmount "$MNT_A"
        mount_fs f2fs "$BIG_F2FS" "$MNT_A"
        echo "$TUNED_RA_KB" >"$(bdi_of "$MNT_A")/read_ahead_kb"
        trace_seq "$MNT_A" " with read_ahead_kb=$TUNED_RA_KB"
    fi
    unmount "$MNT_A"

    # Informational: the same read with the FUSE bdi's readahead raised (root only).
    if [ "$(id -u)" = 0 ]; then
        log "sequential reads with read_ahead_kb=$TUNED_RA_KB on the FUSE bdi (informational)"
        for r in $(seq "$RUNS"); do
            mount_fs f2fs "$BIG_F2FS" "$MNT_A"
            echo "$TUNED_RA_KB" >"$(bdi_of "$MNT_A")/read_ahead_kb"
            seq_run seq_f2fs_ra "$MNT_A/big.bin"
            result seq_f2fs_ra_cpu "$(cpu_ms "$MNT_A")"
            unmount "$MNT_A"
        done
        info cmd "# informational: echo $TUNED_RA_KB > /sys/class/bdi/<FUSE bdi of MNT>/read_ahead_kb before the f2fs-fuse read"
    fi

    # rr_run NAME MNT IMAGE: random reads on a fresh mount, IOPS into results.
    rr_run() {
        local name=$1 mnt=$2 img=$3 out pid tasks cpu0 ios
        out=$WORK/$name.$RANDOM.json
        drop_caches
        cat "$img" >/dev/null
        pid=${DAEMON[$mnt]}
        cpu0=$(cpu_ms "$mnt")
        fio --name=rr --filename="$mnt/big.bin" "${RR_ARGS[@]}" \
            --output-format=json --output="$out" >/dev/null &
        local fio_pid=$!
        sleep $((RR_TIME / 2 + 1))
        tasks=$(ls /proc/"$pid"/task 2>/dev/null | wc -l)
        wait "$fio_pid" || die "fio failed on $mnt (see $out)"
        result "$name" "$("${UTIL[@]}" fio "$out" read.iops)"
        result "${name}_threads" "$tasks"
        ios=$("${UTIL[@]}" fio "$out" read.total_ios)
        result "${name}_cpu_us" "$(( ($(cpu_ms "$mnt") - cpu0) * 1000 / (ios > 0 ? ios : 1) ))"
    }

    log "random reads: $RUNS x (f2fs-fuse, fuse2fs), ${RR_TIME} s each"
    for r in $(seq "$RUNS"); do
        mount_fs f2fs "$BIG_F2FS" "$MNT_A"
        rr_run rr_f2fs "$MNT_A" "$BIG_F2FS"
        unmount "$MNT_A"
        mount_fs ext4 "$BIG_EXT4" "$MNT_B"
        rr_run rr_fuse2fs "$MNT_B" "$BIG_EXT4"
        unmount "$MNT_B"
    done

    # meta_run NAME MNT: cold find + stat on a fresh mount, files/s into results.
    meta_run() {
        local name=$1 mnt=$2 t0 t1 n cpu0 cpu1
        drop_caches
        cpu0=$(cpu_ms "$mnt")
        t0=$(now_ns)
        find "$mnt" -type f -print0 | xargs -0 stat >/dev/null
        t1=$(now_ns)
        cpu1=$(cpu_ms "$mnt")
        n=$(find "$mnt" -type f | wc -l)
        [ "$n" = "$NFILES" ] || die "$mnt holds $n files, expected $NFILES"
        result "$name" "$(python3 -c "print($n / (($t1 - $t0) / 1e9))")"
        result "${name}_cpu_us" "$(( (cpu1 - cpu0) * 1000 / n ))"
    }

    log "metadata walks: $RUNS x (f2fs-fuse, fuse2fs) over $NFILES files"
    for r in $(seq "$RUNS"); do
        mount_fs f2fs "$SMALL_F2FS" "$MNT_A"
        meta_run meta_f2fs "$MNT_A"
        unmount "$MNT_A"
        mount_fs ext4 "$SMALL_EXT4" "$MNT_B"
        meta_run meta_fuse2fs "$MNT_B"
        unmount "$MNT_B"
    done
fi

. "$HERE/writes.sh"
if want crypto; then . "$HERE/crypto.sh"; fi
if want writeback; then . "$HERE/writeback.sh"; fi
rm -f "$WIMG_F2FS" "$WIMG_EXT4"            # made afresh by every write measurement


# ------------------------------------------------------------- report ----

threads() {                      # the largest thread count recorded under $1
    local k n max=
    while read -r k n; do
        if [ "$k" = "$1" ] && [ -z "$max" -o "${n%.*}" -gt "${max:-0}" ]; then max=${n%.*}; fi
    done <"$RESULTS"
    echo "${max:-?}"
}
if want read; then
    info diag "daemon threads seen during the random reads ($RR_JOBS fio jobs): f2fs-fuse $(threads rr_f2fs_threads), fuse2fs $(threads rr_fuse2fs_threads)"
fi

if [ -s "$WORK/f2fs-fuse.log" ]; then
    # Its most frequent messages, without the -o io_stats tables.
    while IFS= read -r line; do
        info diag "f2fs-fuse said: $line"
    done < <({ grep -v -E 'I/O statistics|: +(reads [0-9]|metadata cache|size +reads|[<>=]*[0-9]+K +[0-9])' \
                   "$WORK/f2fs-fuse.log" || true; } | sort | uniq -c | sort -rn | sed -n '1,5p')
fi

read -r l1 l5 l15 _ </proc/loadavg
info load "at the end $l1 / $l5 / $l15"

echo
if want read || want write || want crypto; then
    if [ "$QUICK" = 1 ] || [ "$GROUPS_RUN" != "read write crypto" ]; then
        "${UTIL[@]}" render "$RESULTS" "$INFO"
        log "quick or partial run: $DOC left unchanged"
    else
        "${UTIL[@]}" render "$RESULTS" "$INFO" "$DOC"
        log "results written to $DOC"
    fi
fi
if want writeback; then
    # Its own section of the doc, between its markers; a quick run prints.
    if [ "$QUICK" = 1 ]; then
        "${UTIL[@]}" render-writeback "$RESULTS" "$INFO"
        log "quick run: $DOC left unchanged"
    else
        "${UTIL[@]}" render-writeback "$RESULTS" "$INFO" "$DOC"
        log "writeback results written to $DOC"
    fi
fi
