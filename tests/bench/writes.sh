# Write benchmarks, sourced by tests/bench/run.sh (uses its helpers: mount_fs,
# unmount, drop_caches, result, info, cpu_ms, cpu_snap, cpu_use, UTIL, WORK).
#
#   W1 sequential 1 MiB writes of one file, end_fsync: f2fs-fuse, fuse2fs, raw
#   W2 8 jobs x 1 MiB O_SYNC writes, time based: f2fs-fuse, fuse2fs, raw;
#      f2fs-fuse's device write sizes from -o io_stats
#   W3 4 KiB random writes, fsync after each: f2fs-fuse, fuse2fs, raw
#   W4 create + stat + unlink of many small files: f2fs-fuse, fuse2fs (raw: the
#      host file system, informational)
#
# Every measurement starts from a freshly made, empty image (raw: an empty
# directory on the scratch disk), so no run sees another's garbage.

if [ "$QUICK" = 1 ]; then
    WSEQ_MB=256 SEED_MB=16 SEED_TIME=5 RW_MB=64 RW_TIME=5 WNFILES=5000
else
    WSEQ_MB=1024 SEED_MB=64 SEED_TIME=10 RW_MB=256 RW_TIME=10 WNFILES=20000
fi
SEED_JOBS=8
WIMG_MB=$((WSEQ_MB * 2 + SEED_JOBS * SEED_MB * 2 + 1024))
RAWDIR=$BENCH_DIR/raw                      # raw peer: plain files on the scratch disk
WIMG_F2FS=$IMGDIR/write.f2fs
WIMG_EXT4=$IMGDIR/write.ext4

WSEQ_ARGS=(--rw=write --bs=1M --ioengine=psync --direct=0 --end_fsync=1 --numjobs=1
           --fallocate=none --size="${WSEQ_MB}M")
SEED_ARGS=(--rw=write --bs=1M --ioengine=psync --sync=1 --direct=0 --numjobs="$SEED_JOBS"
           --size="${SEED_MB}M" --runtime="$SEED_TIME" --time_based --group_reporting
           --fallocate=none)
RW_ARGS=(--rw=randwrite --bs=4k --ioengine=psync --direct=0 --fsync=1 --numjobs=1
         --size="${RW_MB}M" --runtime="$RW_TIME" --time_based --fallocate=none)

# fresh_image f2fs|ext4: an empty image for one write measurement.
fresh_image() {
    case $1 in
        f2fs) rm -f "$WIMG_F2FS"; truncate -s "${WIMG_MB}M" "$WIMG_F2FS"
              mkfs.f2fs -q -f -O encrypt -l bench "$WIMG_F2FS" >/dev/null ;;
        ext4) rm -f "$WIMG_EXT4"
              mkfs.ext4 -q -F -L bench "$WIMG_EXT4" "${WIMG_MB}M" >/dev/null ;;
    esac
}

# wsetup KIND [f2fs-fuse options]: fresh target; prints the directory to write in.
# KIND: f2fs, ext4 or raw.
wsetup() {
    local kind=$1 opts=${2:-rw}
    case $kind in
        f2fs) fresh_image f2fs; MOUNT_OPTS=$opts mount_fs f2fs "$WIMG_F2FS" "$MNT_A"; W_DIR=$MNT_A ;;
        ext4) fresh_image ext4; MOUNT_OPTS=rw mount_fs ext4 "$WIMG_EXT4" "$MNT_B"; W_DIR=$MNT_B ;;
        raw)  rm -rf "$RAWDIR"; mkdir -p "$RAWDIR"; W_DIR=$RAWDIR ;;
    esac
    W_KIND=$kind
}
wremount() {                     # same target, fresh mount (caches emptied)
    local opts=${1:-rw}
    case $W_KIND in
        f2fs) unmount "$MNT_A"; MOUNT_OPTS=$opts mount_fs f2fs "$WIMG_F2FS" "$MNT_A" ;;
        ext4) unmount "$MNT_B"; MOUNT_OPTS=rw mount_fs ext4 "$WIMG_EXT4" "$MNT_B" ;;
    esac
}
wdone() {
    case $W_KIND in
        f2fs) unmount "$MNT_A" ;;
        ext4) unmount "$MNT_B" ;;
        raw)  rm -rf "$RAWDIR" ;;
    esac
}
wmnt() { case $W_KIND in f2fs) echo "$MNT_A" ;; ext4) echo "$MNT_B" ;; esac; }

# wfio NAME FIELD [fio args]: one timed fio write job in $W_DIR; FIELD of its
# JSON into results as NAME, plus fio's and the daemon's CPU time.
wfio() {
    local name=$1 field=$2 out mnt c0 c1 busy iow cpu0=
    shift 2
    out=$WORK/$name.$RANDOM.json
    mnt=$(wmnt)
    drop_caches
    [ -z "$mnt" ] || cpu0=$(cpu_ms "$mnt")
    c0=$(cpu_snap)
    fio --directory="$W_DIR" "$@" --output-format=json --output="$out" >/dev/null ||
        die "fio failed in $W_DIR (see $out)"
    c1=$(cpu_snap)
    result "$name" "$("${UTIL[@]}" fio "$out" "$field")"
    result "${name}_fiocpu" "$("${UTIL[@]}" fio-cpu "$out")"
    [ -z "$mnt" ] || result "${name}_cpu" "$(( $(cpu_ms "$mnt") - cpu0 ))"
    read -r busy iow <<<"$(cpu_use "$c0" "$c1")"
    result "${name}_busy" "$busy"
    result "${name}_iowait" "$iow"
}

# io_hist NAME LOG: f2fs-fuse's -o io_stats write histogram from LOG.
io_hist() {
    local k v
    while read -r k v; do
        result "${1}_$k" "$v"
    done < <("${UTIL[@]}" io-stats "$2")
}

# The rows, each over the kinds in WKINDS ($RUNS x, interleaved).  The f2fs
# results are keyed f2fs$WTAG, so another binary's rows (BIN=... WTAG=@name)
# land beside the first's.
wkey() { if [ "$1" = f2fs ]; then echo "f2fs${WTAG:-}"; else echo "$1"; fi; }
w1_rows() {
    log "W1 sequential writes of ${WSEQ_MB} MiB: $RUNS x (f2fs-fuse, fuse2fs, raw)"
    for r in $(seq "$RUNS"); do
        for k in "${WKINDS[@]}"; do
            wsetup "$k"
            wfio "wseq_$(wkey "$k")" write.bw_bytes --name=wseq "${WSEQ_ARGS[@]}"
            wdone
        done
    done
}
w2_rows() {
    log "W2 ${SEED_JOBS} x O_SYNC 1 MiB writers, ${SEED_TIME} s: $RUNS x (f2fs-fuse, fuse2fs, raw)"
    for r in $(seq "$RUNS"); do
        for k in "${WKINDS[@]}"; do
            wsetup "$k"
            fio --directory="$W_DIR" --name=seed "${SEED_ARGS[@]}" --create_only=1 \
                --output="$WORK/seed-layout.log" >/dev/null || die "fio layout failed in $W_DIR"
            sync
            log_before=$(wc -l <"$WORK/f2fs-fuse.log" 2>/dev/null || echo 0)
            [ "$k" != f2fs ] || wremount rw,io_stats
            [ "$k" != ext4 ] || wremount
            wfio "seed_$(wkey "$k")" write.bw_bytes --name=seed "${SEED_ARGS[@]}"
            wdone
            if [ "$k" = f2fs ]; then
                tail -n +"$((log_before + 1))" "$WORK/f2fs-fuse.log" >"$WORK/seed-iostats.$r.log"
                io_hist "seed_$(wkey f2fs)" "$WORK/seed-iostats.$r.log"
            fi
        done
    done
}
w3_rows() {
    log "W3 4 KiB random writes + fsync, ${RW_TIME} s: $RUNS x (f2fs-fuse, fuse2fs, raw)"
    for r in $(seq "$RUNS"); do
        for k in "${WKINDS[@]}"; do
            wsetup "$k"
            fio --directory="$W_DIR" --name=rw "${RW_ARGS[@]}" --create_only=1 \
                --output="$WORK/rw-layout.log" >/dev/null || die "fio layout failed in $W_DIR"
            sync
            log_before=$(wc -l <"$WORK/f2fs-fuse.log" 2>/dev/null || echo 0)
            [ "$k" != f2fs ] || wremount rw,io_stats
            [ "$k" != ext4 ] || wremount
            wfio "rwr_$(wkey "$k")" write.iops --name=rw "${RW_ARGS[@]}"
            wdone
            if [ "$k" = f2fs ]; then
                tail -n +"$((log_before + 1))" "$WORK/f2fs-fuse.log" >"$WORK/rw-iostats.$r.log"
                io_hist "rwr_$(wkey f2fs)" "$WORK/rw-iostats.$r.log"
            fi
        done
    done
}
w4_rows() {
    log "W4 create/stat/unlink of $WNFILES files: $RUNS x (f2fs-fuse, fuse2fs, raw)"
    for r in $(seq "$RUNS"); do
        for k in "${WKINDS[@]}"; do
            wsetup "$k"
            mnt=$(wmnt)
            [ -z "$mnt" ] || cpu0=$(cpu_ms "$mnt")
            while read -r key val; do
                result "meta_${key}_$(wkey "$k")" "$val"
            done < <("${UTIL[@]}" meta-cycle "$W_DIR" "$WNFILES")
            [ -z "$mnt" ] || result "metaw_$(wkey "$k")_cpu_us" "$(( ($(cpu_ms "$mnt") - cpu0) * 1000 / (3 * WNFILES) ))"
            wdone
        done
    done
}

# What the W rows ran, for the report.
w_info() {
    info wseq_size "$( [ "$WSEQ_MB" -ge 1024 ] && echo "$((WSEQ_MB / 1024)) GiB" || echo "$WSEQ_MB MiB")"
    info wseq_mb "$WSEQ_MB"
    info seed_jobs "$SEED_JOBS"
    info seed_mb "$SEED_MB"
    info seed_time "$SEED_TIME"
    info rw_mb "$RW_MB"
    info rw_time "$RW_TIME"
    info wnfiles "$WNFILES"

    info cmd "# W: write rows; each measurement on a fresh empty image (mkfs.f2fs -f / mkfs.ext4 -F, ${WIMG_MB} MiB sparse file); raw = the same fio job in an empty directory of the scratch disk's own file system"
    info cmd "$BIN -f -o rw[,io_stats] IMG.f2fs MNT     # f2fs-fuse, read-write"
    info cmd "fuse2fs -f -o rw IMG.ext4 MNT            # fuse2fs, read-write"
    info cmd "# W1: fio --name=wseq --directory=DIR ${WSEQ_ARGS[*]}"
    info cmd "# W2: files laid out first (fio --create_only=1, then a fresh mount), then fio --name=seed --directory=DIR ${SEED_ARGS[*]}"
    info cmd "# W3: file laid out first (f2fs-fuse: then a fresh mount with -o io_stats), then fio --name=rw --directory=DIR ${RW_ARGS[*]}"
    info cmd "# W4: benchutil.py meta-cycle DIR $WNFILES  (create 1 KiB files in 500-file directories, stat each, unlink each; one pass, timed)"
}

if want write; then
    w_info
    WKINDS=(f2fs ext4 raw)
    w1_rows
    w2_rows
    w3_rows
    w4_rows

    # Diagnostics (untimed): the daemons' system calls during short versions
    # of the W1 and W3 jobs (strace -c -f; the time of the blocking read of
    # /dev/fuse is idle waiting).
    # strace_job KIND layout|nolayout LABEL [fio args]
    strace_job() {
        local kind=$1 layout=$2 label=$3 who line mnt
        shift 3
        case $kind in f2fs) who=f2fs-fuse ;; ext4) who=fuse2fs ;; esac
        wsetup "$kind"
        mnt=$(wmnt)
        if [ "$layout" = layout ]; then
            fio --directory="$W_DIR" "$@" --create_only=1 --output="$WORK/strace-layout.log" \
                >/dev/null || true
        fi
        strace -c -f -qq -o "$WORK/job.strace" -p "${DAEMON[$mnt]}" 2>/dev/null &
        STRACE_PID=$!
        sleep 1
        fio --directory="$W_DIR" "$@" --output="$WORK/strace-fio.log" >/dev/null || true
        kill -INT "$STRACE_PID" 2>/dev/null || true
        wait "$STRACE_PID" 2>/dev/null || true
        STRACE_PID=
        wdone
        while IFS= read -r line; do
            info diag "$who daemon, strace -c -f during $label: $line"
        done < <("${UTIL[@]}" strace-summary "$WORK/job.strace")
    }
    if command -v strace >/dev/null 2>&1; then
        for k in f2fs ext4; do
            strace_job "$k" nolayout "a $((WSEQ_MB / 4)) MiB sequential write (W1 job)" \
                --name=wseq "${WSEQ_ARGS[@]}" --size="$((WSEQ_MB / 4))M"
            strace_job "$k" layout "3 s of 4 KiB random writes + fsync (W3 job)" \
                --name=rw "${RW_ARGS[@]}" --runtime=3
        done
    fi
fi
