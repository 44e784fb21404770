# Encryption benchmarks, sourced by tests/bench/run.sh.
#
#   C1 AES-256-XTS contents encryption of crypto/ alone (cryptobench.c on
#      4 KiB units, 256 per call) vs `openssl speed -evp aes-256-xts`
#   C2 sequential write and read through the mount, in an encrypted directory
#      (f2fs-fusectl set_policy, default AES-256-XTS / AES-256-CTS) vs an
#      unencrypted one on the same image

CTL=$(dirname "$BIN")/f2fs-fusectl
LIBCORE=$(dirname "$BIN")/libf2fscore.a
[ -x "$CTL" ] || die "$CTL not found (run make)"
[ -r "$LIBCORE" ] || die "$LIBCORE not found (run make)"
command -v openssl >/dev/null 2>&1 || die "openssl not found"
if [ "$QUICK" = 1 ]; then ENC_MB=256; else ENC_MB=1024; fi
CB_SECS=1            # whole seconds (openssl speed); short passes, many pairs
C1_RUNS=${BENCH_C1_RUNS:-$(( RUNS > 7 ? RUNS : 7 ))}
C2_RUNS=${BENCH_C2_RUNS:-$(( RUNS > 5 ? RUNS : 5 ))}   # the disk's noise needs more pairs
CB_UNITS=256
OSSL_BYTES=16384

# Built as the Makefile builds the unit tests.
CB=$WORK/cryptobench
cc -std=c11 -D_GNU_SOURCE -D_FILE_OFFSET_BITS=64 -O2 -g -Wall -Wextra -Werror -Wshadow \
    -Wno-unused-parameter -Wstrict-prototypes -Wmissing-prototypes -Wformat=2 -pthread \
    -I"$ROOT/core" -I"$ROOT/crypto" -o "$CB" "$HERE/cryptobench.c" "$LIBCORE" \
    $(pkg-config --libs libcrypto 2>/dev/null || echo -lcrypto) -lpthread ||
    die "building $HERE/cryptobench.c failed"

info crypto_units "$CB_UNITS"
info ossl_bytes "$OSSL_BYTES"
info enc_size "$( [ "$ENC_MB" -ge 1024 ] && echo "$((ENC_MB / 1024)) GiB" || echo "$ENC_MB MiB")"
info openssl "$(first_line openssl version)"
info cmd "# C1: cc -std=c11 -O2 ... -Icore -Icrypto tests/bench/cryptobench.c build/libf2fscore.a -lcrypto -lpthread"
info cmd "cryptobench $CB_SECS $CB_UNITS     # fscrypt_encrypt_units / fscrypt_decrypt_units, $CB_UNITS x 4 KiB units per call, $CB_SECS s each"
info cmd "cryptobench $CB_SECS 4       # informational: 16 KiB buffer, as openssl speed's"
info cmd "openssl speed -evp aes-256-xts -seconds $CB_SECS -bytes $OSSL_BYTES   # and -bytes 4096 (informational)"

# ossl_speed BYTES: openssl speed's MB/s (10^6 bytes) for one block size.
ossl_speed() {
    local out
    out=$(openssl speed -evp aes-256-xts -seconds "$CB_SECS" -bytes "$1" 2>/dev/null) ||
        die "openssl speed failed"
    "${UTIL[@]}" ossl-speed <<<"$out"
}
# ossl_result NAME BYTES: the same into results, or stop (not an empty value).
ossl_result() {
    local v
    v=$(ossl_speed "$2")
    [ -n "$v" ] || die "no figure from openssl speed -bytes $2"
    result "$1" "$v"
}

# Both sides are timed in user CPU seconds (openssl speed's default divisor;
# cryptobench does the same), in short alternating passes: the machine's
# noise moves both members of a pair alike, so each pair's ratio is
# reported too.
log "C1 AES-256-XTS: $C1_RUNS x (crypto layer, openssl speed)"
for r in $(seq "$C1_RUNS"); do
    lib=""
    while read -r k v; do
        case $k in encrypt|decrypt|evp_update|evp_iv_per_unit) result "xts_lib_$k" "$v" ;; esac
        [ "$k" = encrypt ] && lib=$v
    done < <("$CB" "$CB_SECS" "$CB_UNITS")
    ossl=$(ossl_speed "$OSSL_BYTES")
    [ -n "$ossl" ] && [ -n "$lib" ] || die "no C1 figure (crypto layer '$lib', openssl '$ossl')"
    result xts_ossl "$ossl"
    result xts_pair_ratio "$(python3 -c "print('%.4f' % ($lib / $ossl))")"
    if [ "$r" -le "$RUNS" ]; then
        # The same with 4 units per call: a 16 KiB buffer, as openssl speed's.
        while read -r k v; do
            case $k in encrypt|evp_update|evp_iv_per_unit) result "xts_lib16k_$k" "$v" ;; esac
        done < <("$CB" "$CB_SECS" 4)
        ossl_result xts_ossl4k 4096
    fi
done

# C2: one image, two directories.  Per run: fresh image, key, policy; write
# A then B (order alternates between runs), fresh mount, read A then B.
info cmd "# C2: fresh image (mkfs.f2fs -O encrypt); f2fs-fusectl add_key MNT < KEY; mkdir MNT/enc MNT/plain; f2fs-fusectl set_policy ID MNT/enc"
head -c 64 /dev/urandom >"$WORK/bench.key"
add_key() {
    local id
    id=$("$CTL" add_key "$MNT_A" <"$WORK/bench.key") || die "f2fs-fusectl add_key failed"
    echo "$id"
}
ENC_W=(--name=wseq --rw=write --bs=1M --ioengine=psync --direct=0 --end_fsync=1 --numjobs=1
       --fallocate=none --size="${ENC_MB}M")
ENC_R=(--name=wseq --rw=read --bs=1M --ioengine=psync --direct=0 --numjobs=1
       --size="${ENC_MB}M" --invalidate=1)
info cmd "fio --directory=MNT/{enc,plain} ${ENC_W[*]}"
info cmd "# fresh mount, key added again, caches dropped: fio --directory=MNT/{enc,plain} ${ENC_R[*]}"
log "C2 encrypted vs plain directory, ${ENC_MB} MiB write + read: $C2_RUNS x"
for r in $(seq "$C2_RUNS"); do
    wsetup f2fs
    id=$(add_key)
    mkdir "$MNT_A/enc" "$MNT_A/plain"
    "$CTL" set_policy "$id" "$MNT_A/enc" >/dev/null || die "f2fs-fusectl set_policy failed"
    if [ $((r % 2)) = 1 ]; then order=(plain enc); else order=(enc plain); fi
    for d in "${order[@]}"; do
        W_DIR=$MNT_A/$d wfio "encw_$d" write.bw_bytes "${ENC_W[@]}"
    done
    wremount
    add_key >/dev/null
    for d in "${order[@]}"; do
        W_DIR=$MNT_A/$d wfio "encr_$d" read.bw_bytes "${ENC_R[@]}"
    done
    pol=$("$CTL" get_policy "$MNT_A/enc" 2>&1 | tail -n +2 | tr -s '\n\t' '  ' || true)
    wdone
done
info diag "encrypted directory's policy: ${pol:-unknown}"
