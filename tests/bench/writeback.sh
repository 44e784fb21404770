# Writeback benchmark (make bench-writeback), sourced by tests/bench/run.sh
# after writes.sh (uses run.sh's mount_fs, unmount, result, info, and
# writes.sh's wsetup, wfio, wdone, io_hist and W rows).
#
#   B1 the seed job: 8 fio jobs x 1 MiB buffered O_SYNC writes, one file each,
#      time based, on encrypted (v2 policy, AES-256-XTS) and plain files, for
#      each -o serialize_io mode the binary knows, image opened buffered and
#      -o direct; f2fs-fuse's device writes by size (count and bytes) from
#      -o io_stats.  Peers on the same job: kernel ext4 on a loop device,
#      fuse2fs, and fio's own O_SYNC writes to a raw image file (the limit).
#   B2 the same job with 8 writers of 512 KiB, of 2 MiB, and one writer of
#      1 MiB (encrypted, -o direct, each mode)
#   B3 the encrypted seed job on an IOPS-limited device: the daemon in a blkio
#      cgroup with a write IOPS limit on the disk holding the image, -o direct
#   B4 the W1, W3 and W4 rows of writes.sh, for every binary
#
# Binaries: $BIN, plus BENCH_VARIANTS="NAME=/abs/path ..." measured in the
# same rounds (a change and its baseline under the same load).  An option a
# binary does not know (serialize_io=, tried on a scratch mount) gives "n/a"
# rows for it; such a binary is measured once per row with its defaults.
#
# Environment (besides run.sh's):
#   BENCH_VARIANTS="NAME=PATH ..."  more f2fs-fuse binaries
#   BENCH_WB_NAME=NAME              the first binary's name (default f2fs-fuse)
#   BENCH_WB_WROWS=0|1              the W rows (default 1; 0 in QUICK)
#   BENCH_WB_IOPS=N                 write IOPS limit for B3 (default 250: below
#                                   the 500-4,000 device writes/s the seed job
#                                   has issued here unthrottled, so the limit
#                                   binds; B3's table shows the rate it got)
#   BENCH_WB_ROUNDS=N               rounds of B1-B3 (default 1; 1 in QUICK)
#   BENCH_WB_PARTS="B1 B2 B3"       which of B1-B3 to run (default all; a
#                                   part left out has empty tables: for
#                                   comparisons, with BENCH_DOC elsewhere)
#   BENCH_WB_MODES="never auto ..." serialize_io modes to try in B1
#                                   (default "never auto alloc always"; B2 and
#                                   B3 leave "always" out)

if [ "$QUICK" = 1 ]; then
    WB_TIME=3 WB_SIZE_MB=512 WB_ROUNDS=${BENCH_WB_ROUNDS:-1}
else
    WB_TIME=10 WB_SIZE_MB=2048 WB_ROUNDS=${BENCH_WB_ROUNDS:-1}
fi
WB_JOBS=8
WB_PARTS=" ${BENCH_WB_PARTS:-B1 B2 B3} "
WB_IOPS=${BENCH_WB_IOPS:-250}
WB_MODES=(${BENCH_WB_MODES:-never auto alloc always})
WB_MODES1=("${WB_MODES[@]}")
WB_MODES23=()
for m in "${WB_MODES[@]}"; do [ "$m" = always ] || WB_MODES23+=("$m"); done
# Room for every job's file written once (time based: a job that reaches
# its size starts over, which f2fs turns into cleaning work).
WB_IMG_MB=$((WB_JOBS * WB_SIZE_MB * 5 / 4 + 1024))
WB_RAW=$IMGDIR/wb-raw.img
WB_KEY=$WORK/wb.key
WB_CG=
WB_CG_HOW=
WB_DEV=

# fio's job as the seed patch ran it; BS and JOBS vary in B2.
wb_args() {                      # wb_args BS JOBS
    WB_ARGS=(--name=wb_osync --rw=write --bs="$1" --ioengine=psync --direct=0 --sync=1
             --numjobs="$2" --thread=1 --nrfiles=1 --filename_format='wb_osync.$jobnum'
             --size="${WB_SIZE_MB}M" --time_based=1 --runtime="$WB_TIME" --group_reporting
             --fallocate=none)
}

# ------------------------------------------------------------ binaries ----

WB_FIRST=${BENCH_WB_NAME:-f2fs-fuse}
declare -A WB_BIN=([$WB_FIRST]=$BIN)
WB_NAMES=("$WB_FIRST")
for v in ${BENCH_VARIANTS:-}; do
    n=${v%%=*} p=${v#*=}
    [ "$n" != "$v" ] && [ -x "$p" ] || die "variant $v: want NAME=/abs/path/to/f2fs-fuse"
    [ -x "$(dirname "$p")/f2fs-fusectl" ] || die "variant $v: no f2fs-fusectl beside it"
    WB_BIN[$n]=$p
    WB_NAMES+=("$n")
done

# wb_knows BIN OPT: does BIN mount with -o OPT?  (A scratch image; an unknown
# option makes the daemon exit before mounting.)
wb_knows() {
    local bin=$1 opt=$2 img=$IMGDIR/probe.f2fs mnt=$MNT_A ok=1 pid i
    rm -f "$img"; truncate -s 256M "$img"
    mkfs.f2fs -q -f -O encrypt "$img" >/dev/null
    unmount "$mnt"
    "$bin" -f -o "rw,$opt" "$img" "$mnt" >"$WORK/probe.log" 2>&1 &
    pid=$!
    for i in $(seq 100); do
        is_mounted "$mnt" && { ok=0; break; }
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.05
    done
    if is_mounted "$mnt"; then fusermount3 -u "$mnt" || umount -l "$mnt"; fi
    for i in $(seq 200); do kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
    rm -f "$img"
    return $ok
}

# WB_MODESOF[name]: the modes to run ("default" = no serialize_io option).
declare -A WB_MODESOF=()
# wb_rev NAME: what a binary was built from (BENCH_REV for the first, else
# the git tree it sits in).
wb_rev() {
    local d
    if [ "$1" = "$WB_FIRST" ] && [ -n "${BENCH_REV:-}" ]; then echo ", built from $BENCH_REV"; return; fi
    d=$(dirname "${WB_BIN[$1]}")/..
    if d=$(git -C "$d" describe --always --dirty 2>/dev/null); then echo ", built from $d"; fi
}
for n in "${WB_NAMES[@]}"; do
    if wb_knows "${WB_BIN[$n]}" serialize_io=auto; then
        WB_MODESOF[$n]="${WB_MODES[*]}"
        info wb_binary "$n: ${WB_BIN[$n]} ($(first_line "${WB_BIN[$n]}" -V)$(wb_rev "$n")); serialize_io modes: ${WB_MODES[*]}"
    else
        WB_MODESOF[$n]=default
        info wb_binary "$n: ${WB_BIN[$n]} ($(first_line "${WB_BIN[$n]}" -V)$(wb_rev "$n")); no -o serialize_io (its rows for the modes are n/a; measured with its defaults)"
    fi
    for o in min_seq_blocks=32 dirty_bytes=67108864; do
        wb_knows "${WB_BIN[$n]}" "$o" && info wb_knows "$n: -o ${o%%=*}" || info wb_lacks "$n: -o ${o%%=*}"
    done
done

# --------------------------------------------------------- the cgroup ----

# B3's device: the image on a loop device with direct I/O, which the daemon
# opens (-o direct), so that each of the daemon's writes and flushes is one
# request the limit counts.  On the image file itself the limit would count
# the host file system's requests instead (its extents and journal: about
# two per MiB whatever the daemon sends).
#
# A blkio group (cgroup v1), or cgroup v2's io controller where v1's blkio
# is not mounted; the limit is set per run on that run's loop device
# (wb_cg_limit).  Sets WB_CG (the cgroup.procs file).
wb_cgroup_setup() {
    local v2
    [ "$(id -u)" = 0 ] || { WB_CG_HOW="not root"; return 1; }
    command -v losetup >/dev/null || { WB_CG_HOW="no losetup"; return 1; }
    if [ -w /sys/fs/cgroup/blkio/cgroup.procs ]; then
        mkdir -p /sys/fs/cgroup/blkio/f2fs-fuse-bench
        WB_CG=/sys/fs/cgroup/blkio/f2fs-fuse-bench/cgroup.procs
        WB_CG_HOW="the image on a loop device (losetup --direct-io=on), cgroup v1 blkio, blkio.throttle.write_iops_device = \"<loop device> $WB_IOPS\""
        return 0
    fi
    for v2 in /sys/fs/cgroup /sys/fs/cgroup/unified; do
        if grep -qw io "$v2/cgroup.controllers" 2>/dev/null; then
            grep -qw io "$v2/cgroup.subtree_control" || echo +io >"$v2/cgroup.subtree_control"
            mkdir -p "$v2/f2fs-fuse-bench"
            WB_CG=$v2/f2fs-fuse-bench/cgroup.procs
            WB_CG_HOW="the image on a loop device (losetup --direct-io=on), cgroup v2, io.max = \"<loop device> wiops=$WB_IOPS\""
            return 0
        fi
    done
    WB_CG_HOW="neither cgroup v1 blkio nor cgroup v2 io is available"
    return 1
}
# wb_cg_limit LOOPDEV: the limit on that device; WB_DEV its MAJ:MIN.
wb_cg_limit() {
    local d=${WB_CG%/*}
    WB_DEV=$(lsblk -ndo MAJ:MIN "$1" | tr -d ' ')
    [ -n "$WB_DEV" ] || die "no MAJ:MIN for $1"
    if [ -w "$d/blkio.throttle.write_iops_device" ]; then
        echo "$WB_DEV $WB_IOPS" >"$d/blkio.throttle.write_iops_device"
    else
        echo "$WB_DEV wiops=$WB_IOPS" >"$d/io.max"
    fi
}
# Write requests the group issued to the disk so far (v1 io_serviced, v2 io.stat).
wb_cg_writes() {
    local d=${WB_CG%/*} dev=${WB_DEV:-x}
    if [ -r "$d/blkio.throttle.io_serviced" ]; then
        awk -v d="$dev" '$1 == d && $2 == "Write" { n = $3 } END { print n + 0 }' \
            "$d/blkio.throttle.io_serviced"
    elif [ -r "$d/io.stat" ]; then
        awk -v d="$dev" '$1 == d { for (i = 2; i <= NF; i++) if ($i ~ /^wios=/) { sub(/wios=/, "", $i); n = $i } }
                         END { print n + 0 }' "$d/io.stat"
    else
        echo 0
    fi
}
wb_cgroup_done() {
    [ -n "$WB_CG" ] || return 0
    rmdir "$(dirname "$WB_CG")" 2>/dev/null || true
    WB_CG=
}

# ------------------------------------------------------------ one run ----

# wb_f2fs TAG NAME FS MODE IO [cg]: one fio job (WB_ARGS) on a fresh image
# mounted by binary NAME; FS enc|plain, MODE a serialize_io mode or default,
# IO buf|direct; "cg" runs the daemon in the IOPS-limited cgroup.  Results
# under wb_TAG_NAME_FS_MODE_IO.
wb_f2fs() {
    local tag=$1 name=$2 fs=$3 mode=$4 io=$5 cg=${6:-} key opts bin ctl id dir before cg0 loop
    key=wb_${tag}_${name}_${fs}_${mode}_${io}
    bin=${WB_BIN[$name]}
    ctl=$(dirname "$bin")/f2fs-fusectl
    opts=rw,io_stats
    [ "$io" = buf ] || opts+=,direct
    [ "$mode" = default ] || opts+=,serialize_io=$mode
    before=$(wc -l <"$WORK/f2fs-fuse.log" 2>/dev/null || echo 0)
    if [ -n "$cg" ]; then
        WRAP=(sh -c 'echo $$ >"$0" && exec "$@"' "$WB_CG")
    else
        WRAP=()
    fi
    if [ -n "$cg" ]; then
        WIMG_MB=$WB_IMG_MB fresh_image f2fs
        loop=$(losetup --direct-io=on -f --show "$WIMG_F2FS") || die "losetup failed"
        echo "$loop" >"$WORK/wb.loop"
        wb_cg_limit "$loop"
        BIN=$bin MOUNT_OPTS=$opts mount_fs f2fs "$loop" "$MNT_A"
        W_DIR=$MNT_A W_KIND=f2fs
    else
        BIN=$bin WIMG_MB=$WB_IMG_MB wsetup f2fs "$opts"
    fi
    WRAP=()
    echo "${DAEMON[$MNT_A]}" >"$WORK/wb.daemon"
    dir=$MNT_A/t
    mkdir "$dir"
    if [ "$fs" = enc ]; then
        id=$("$ctl" add_key "$MNT_A" <"$WB_KEY") || die "f2fs-fusectl add_key failed"
        "$ctl" set_policy "$id" "$dir" >/dev/null || die "f2fs-fusectl set_policy failed"
    fi
    if [ -n "$cg" ]; then
        # Proof that the limit applied: the daemon's cgroup, and the writes
        # the group saw on the disk.
        grep -E 'blkio|io' "/proc/${DAEMON[$MNT_A]}/cgroup" | head -n 1 >"$WORK/$key.cgroup" || true
        cg0=$(wb_cg_writes)
    fi
    W_DIR=$dir wfio "$key" write.bw_bytes "${WB_ARGS[@]}"
    if [ -n "$cg" ]; then result "${key}_cgwrites" "$(( $(wb_cg_writes) - cg0 ))"; fi
    wdone
    if [ -n "$cg" ]; then
        losetup -d "$loop"
        rm -f "$WORK/wb.loop"
    fi
    tail -n +"$((before + 1))" "$WORK/f2fs-fuse.log" >"$WORK/$key.iostats.log"
    io_hist "$key" "$WORK/$key.iostats.log"
}

# wb_peer TAG KIND: the same job on kext4 (kernel ext4, loop device), fuse2fs
# or rawimg (fio's own O_SYNC writes, one region per job, to a raw image file).
wb_peer() {
    local tag=$1 kind=$2 key=wb_${1}_${2} loop
    case $kind in
        kext4)
            rm -f "$WIMG_EXT4"
            mkfs.ext4 -q -F -L bench "$WIMG_EXT4" "${WB_IMG_MB}M" >/dev/null
            loop=$(losetup -f --show "$WIMG_EXT4")
            echo "$loop" >"$WORK/wb.loop"
            mount -t ext4 "$loop" "$MNT_B"
            W_KIND=raw W_DIR=$MNT_B wfio "$key" write.bw_bytes "${WB_ARGS[@]}"
            umount "$MNT_B"
            losetup -d "$loop"
            rm -f "$WIMG_EXT4" "$WORK/wb.loop" ;;
        fuse2fs)
            WIMG_MB=$WB_IMG_MB wsetup ext4
            wfio "$key" write.bw_bytes "${WB_ARGS[@]}"
            wdone ;;
        rawimg)
            rm -f "$WB_RAW"
            truncate -s "$((WB_JOBS * WB_SIZE_MB))M" "$WB_RAW"
            local raw=("${WB_ARGS[@]}")
            raw=("${raw[@]/--filename_format=*/--filename=$(basename "$WB_RAW")}")
            W_KIND=raw W_DIR=$(dirname "$WB_RAW") wfio "$key" write.bw_bytes "${raw[@]}" \
                --offset_increment="${WB_SIZE_MB}M"
            rm -f "$WB_RAW" ;;
    esac
}
wb_cleanup() {
    local d
    for d in "$MNT_A" "$MNT_B"; do
        if is_mounted "$d"; then fusermount3 -u "$d" 2>/dev/null || umount -l "$d" || true; fi
    done
    if [ -s "$WORK/wb.loop" ]; then losetup -d "$(cat "$WORK/wb.loop")" 2>/dev/null || true; fi
    wb_cgroup_done
    rm -f "$WB_RAW"
}

# wb_try CMD...: one measurement in a subshell, so that a binary that fails
# or hangs costs its row, not the run: past WB_LIMIT seconds its daemon is
# killed (fio then fails on the dead mount); a failure is noted and its
# mounts cleared.
WB_LIMIT=$((WB_TIME * 6 + 180))
wb_try() {
    local pid t=0 d
    rm -f "$WORK/wb.daemon"
    ( "$@" ) &
    pid=$!
    while kill -0 "$pid" 2>/dev/null; do
        sleep 1
        t=$((t + 1))
        if [ "$t" = "$WB_LIMIT" ] && [ -s "$WORK/wb.daemon" ]; then
            d=$(cat "$WORK/wb.daemon")
            log "$* still running after ${WB_LIMIT} s: killing daemon $d"
            kill -KILL "$d" 2>/dev/null || true
        fi
    done
    if ! wait "$pid"; then
        log "failed: $* (the row reads n/a)"
        info wb_failed "$*$([ "$t" -lt "$WB_LIMIT" ] || echo " (killed after ${WB_LIMIT} s)")"
        for d in "$MNT_A" "$MNT_B"; do
            if is_mounted "$d"; then fusermount3 -u "$d" 2>/dev/null || umount -l "$d" || true; fi
        done
        if [ -s "$WORK/wb.loop" ]; then losetup -d "$(cat "$WORK/wb.loop")" 2>/dev/null || true; fi
    fi
    rm -f "$WORK/wb.daemon" "$WORK/wb.loop"
}

# wb_modes TAG FS IO [cg]: every binary in every mode it knows, modes in the
# outer loop so that the binaries' runs of one mode are back to back.
wb_modes() {
    local tag=$1 fs=$2 io=$3 cg=${4:-} m n
    for m in default "${WB_MODES[@]}"; do
        for n in "${WB_NAMES[@]}"; do
            [[ " ${WB_MODESOF[$n]} " == *" $m "* ]] || continue
            wb_try wb_f2fs "$tag" "$n" "$fs" "$m" "$io" "$cg"
        done
    done
}

# ---------------------------------------------------------------- runs ----

head -c 64 /dev/urandom >"$WB_KEY"
: >>"$WORK/f2fs-fuse.log"
info wb_time "$WB_TIME"
info wb_jobs "$WB_JOBS"
info wb_size_mb "$WB_SIZE_MB"
info wb_iops "$WB_IOPS"
info wb_rounds "$WB_ROUNDS"
info wb_modes "${WB_MODES[*]}"
wb_args 1M "$WB_JOBS"
info cmd "# B: each measurement on a fresh image (mkfs.f2fs -f -O encrypt / mkfs.ext4 -F, ${WB_IMG_MB} MiB sparse file) in $IMGDIR"
info cmd "$BIN -f -o rw,io_stats[,direct][,serialize_io=MODE] IMG.f2fs MNT; mkdir MNT/t"
info cmd "# encrypted: f2fs-fusectl add_key MNT < KEY (64 random bytes); f2fs-fusectl set_policy ID MNT/t   (v2, AES-256-XTS / AES-256-CTS)"
info cmd "# B1: fio --directory=MNT/t ${WB_ARGS[*]}"
info cmd "# B1 peers: losetup + mount -t ext4 (kernel ext4); fuse2fs -f -o rw IMG.ext4 MNT; raw: fio --filename=RAW.img --offset_increment=${WB_SIZE_MB}M (same job, one region per job of a sparse file on the same disk)"
info cmd "# B2: the same with --bs=512k, --bs=2M, and --numjobs=1 (encrypted, -o direct)"

trap 'wb_cleanup; cleanup' EXIT
if [ "$(id -u)" = 0 ] && wb_cgroup_setup; then :; fi
info wb_cgroup "${WB_CG_HOW}"
info cmd "# B3: the B1 job, encrypted, -o direct, the daemon started in a cgroup: ${WB_CG_HOW}"

for round in $(seq "$WB_ROUNDS"); do
    # B1, -o direct first, then buffered with the peers beside the
    # encrypted runs (the comparison users make).
    for io in direct buf; do
        [[ "$WB_PARTS" == *" B1 "* ]] || break
        log "B1 round $round/$WB_ROUNDS: ${WB_JOBS} x 1 MiB O_SYNC, ${WB_TIME} s, image $io"
        wb_args 1M "$WB_JOBS"
        if [ "$io" = buf ]; then wb_try wb_peer seed kext4; fi
        wb_modes seed enc "$io"
        if [ "$io" = buf ]; then wb_try wb_peer seed fuse2fs; fi
        wb_modes seed plain "$io"
        if [ "$io" = buf ]; then wb_try wb_peer seed rawimg; fi
    done
    [[ "$WB_PARTS" != *" B2 "* ]] ||
        log "B2 round $round/$WB_ROUNDS: 8 x 512 KiB, 8 x 2 MiB, 1 x 1 MiB (encrypted, direct)"
    WB_MODES=("${WB_MODES23[@]}")
    if [[ "$WB_PARTS" == *" B2 "* ]]; then
        wb_args 512k "$WB_JOBS"; wb_modes w512k enc direct
        wb_args 2M "$WB_JOBS";   wb_modes w2m enc direct
        wb_args 1M 1;            wb_modes seq1 enc direct
    fi
    if [ -n "$WB_CG" ] && [[ "$WB_PARTS" == *" B3 "* ]]; then
        log "B3 round $round/$WB_ROUNDS: the seed job, encrypted, direct, ${WB_IOPS} write IOPS"
        wb_args 1M "$WB_JOBS"; wb_modes iops enc direct cg
    fi
    WB_MODES=("${WB_MODES1[@]}")
done
wb_cgroup_done

# The W rows take a minute or more; a smoke run leaves them out
# (BENCH_WB_WROWS=1 keeps them).
if [ "${BENCH_WB_WROWS:-$((1 - QUICK))}" = 1 ]; then
    w_info
    info cmd "# B4: the W1, W3, W4 rows above for every binary, once each"
    for n in "${WB_NAMES[@]}"; do
        tag=
        [ "$n" = "$WB_FIRST" ] || tag=@$n
        if [ "$n" = "$WB_FIRST" ]; then WKINDS=(f2fs ext4 raw); else WKINDS=(f2fs); fi
        for row in w1_rows w3_rows w4_rows; do
            BIN=${WB_BIN[$n]} WTAG=$tag RUNS=1 wb_try "$row"
        done
    done
fi
trap cleanup EXIT
