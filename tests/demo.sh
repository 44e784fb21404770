#!/usr/bin/env bash
# A tour of f2fs-fuse on a fresh image, leaving it mounted read-write at ./mnt:
#   1. mkfs.f2fs -O encrypt and sload.f2fs make demo.img with a few files;
#   2. a first mount adds a key (demo.key), encrypts mnt/private and writes
#      files there and a 32 MiB file beside it; fsck.f2fs checks the result,
#      and the image holds no plaintext of the encrypted files;
#   3. a second mount shows mnt/private without the key and with it, and reads
#      the big file back in large requests (the read extent cache);
#   both print their device I/O statistics (-o io_stats) when unmounted;
#   4. the last mount, with the key, stays at ./mnt.
# Usage: tests/demo.sh PATH/TO/f2fs-fuse (f2fs-fusectl is taken from beside it).
# Run again at will: an existing mount at ./mnt is unmounted and the image,
# the key and the mount are made afresh.
set -euo pipefail

BIN=${1:?usage: tests/demo.sh PATH/TO/f2fs-fuse}
CTL=$(dirname "$BIN")/f2fs-fusectl
IMG=demo.img
KEY=demo.key
MNT=mnt
BIG_MIB=32

for b in "$BIN" "$CTL"; do
    [ -x "$b" ] || { echo "demo: $b is not an executable (run make first)" >&2; exit 1; }
done
for tool in mkfs.f2fs sload.f2fs fsck.f2fs fusermount3 sha256sum; do
    command -v "$tool" >/dev/null 2>&1 || { echo "demo: $tool not found (run tests/install-deps.sh)" >&2; exit 1; }
done

is_mounted() {
    # by path, without touching the mount point (a dead daemon's mount
    # point fails every access with ENOTCONN)
    local abs
    abs="$(pwd -P)/$1"
    awk -v m="$abs" '{ gsub(/\\040/, " ", $5); if ($5 == m) found = 1 } END { exit !found }' /proc/self/mountinfo
}

unmount() {
    fusermount3 -u "$MNT" 2>/dev/null || fusermount3 -u -z "$MNT"
    for _ in $(seq 50); do is_mounted "$MNT" || return 0; sleep 0.1; done
}

if is_mounted "$MNT"; then
    echo "demo: unmounting the previous mount at ./$MNT"
    unmount
fi
mkdir -p "$MNT"

TREE=$(mktemp -d)
tour_pid=
cleanup() {
    # a tour mount left by a failure goes; the final mount is meant to stay
    if [ -n "$tour_pid" ]; then
        is_mounted "$MNT" && unmount
        wait "$tour_pid" 2>/dev/null || true
    fi
    rm -rf "$TREE"
}
trap cleanup EXIT

# ---- 1. the image ----
mkdir -p "$TREE/docs" "$TREE/data/nested/deeper"
cat > "$TREE/README.txt" <<'TXT'
This is a demo f2fs image, created by mkfs.f2fs and filled by sload.f2fs,
mounted read-write through f2fs-fuse. private/ is encrypted (fscrypt);
its key is demo.key beside the image.
TXT
echo "hello, f2fs" > "$TREE/hello.txt"
printf 'line %d of a small text file\n' $(seq 1 200) > "$TREE/docs/notes.txt"
seq 1 300000 > "$TREE/data/numbers.txt"                  # about 2 MiB: multi-block file
head -c 3000 /dev/zero | tr '\0' 'i' > "$TREE/data/inline-sized.txt"
echo "at the bottom" > "$TREE/data/nested/deeper/leaf.txt"
ln -s docs/notes.txt "$TREE/notes-link"
ln "$TREE/hello.txt" "$TREE/hello-hardlink.txt"
chmod 0600 "$TREE/docs/notes.txt"

fsck_ok() {
    local out
    if ! out=$(fsck.f2fs --dry-run -f "$IMG" 2>&1) || grep -qE '\[Fail\]|\[FIX\]' <<<"$out"; then
        echo "$out" >&2
        echo "demo: fsck.f2fs finds errors in $IMG $1" >&2
        exit 1
    fi
}

rm -f "$IMG"
truncate -s 256M "$IMG"
mkfs.f2fs -q -f -O encrypt -l demo "$IMG" >/dev/null
# sload.f2fs 1.15 may exit non-zero even when it succeeded: judge by fsck.
sload.f2fs -f "$TREE" -P "$IMG" >/dev/null 2>&1 || true
fsck_ok "as built by sload.f2fs"
echo "demo: made $IMG (256 MiB; mkfs.f2fs -O encrypt, sample files by sload.f2fs)"

# ---- a mount in the foreground that prints its I/O statistics at unmount ----
tour_mount() {
    "$BIN" -f -o io_stats "$@" "$IMG" "$MNT" 2>"$TREE/daemon.log" &
    tour_pid=$!
    for _ in $(seq 100); do is_mounted "$MNT" && return 0; sleep 0.1; done
    cat "$TREE/daemon.log" >&2
    echo "demo: $BIN did not mount $IMG at ./$MNT" >&2
    exit 1
}

tour_unmount() {
    local rc=0
    unmount
    wait "$tour_pid" || rc=$?
    tour_pid=
    if [ "$rc" -ne 0 ]; then
        cat "$TREE/daemon.log" >&2
        echo "demo: f2fs-fuse exited with status $rc" >&2
        exit 1
    fi
    # the statistics without the "f2fs-fuse: IMAGE: " prefix and the sizes never used
    echo "   I/O statistics of this mount (-o io_stats; before its final checkpoint):"
    sed -n 's/^[^:]*: [^:]*:  *//p' "$TREE/daemon.log" \
        | awk '(NF == 3 || NF == 5) && $2 == "0" && $3 == "0" { next } /^I\/O statistics/ { next } { print "     " $0 }'
}

# ---- 2. writing: a key, an encrypted directory, a big file ----
echo
echo "== writing through f2fs-fuse"
tour_mount
head -c 64 /dev/urandom > "$KEY"
chmod 0600 "$KEY"
id=$("$CTL" add_key "$MNT" < "$KEY")
mkdir "$MNT/private"
"$CTL" set_policy "$id" "$MNT/private"
SECRET="meet at noon by the old oak"
echo "$SECRET" > "$MNT/private/diary.txt"
mkdir "$MNT/private/plans"
seq 1 5000 | sed 's/^/step /' > "$MNT/private/plans/steps.txt"
echo "   f2fs-fusectl add_key: key $id (from $KEY, 64 random bytes)"
echo "   f2fs-fusectl set_policy: $MNT/private is encrypted:"
"$CTL" get_policy "$MNT/private" | sed -n 's/^\t/     /p'
echo "   wrote $MNT/private/diary.txt and $MNT/private/plans/steps.txt"

head -c "${BIG_MIB}M" /dev/urandom > "$TREE/big"
big_sum=$(sha256sum < "$TREE/big" | cut -d' ' -f1)
dd if="$TREE/big" of="$MNT/big.bin" bs=1M status=none
rm -f "$TREE/big"
echo "   wrote $MNT/big.bin: $BIG_MIB MiB in 1 MiB write()s (sha256 ${big_sum:0:16}...)"
tour_unmount

fsck_ok "after the writes"
echo "   fsck.f2fs -f: no errors"
on_image() {
    # how often TEXT is on the image; squeezing the zeros first makes grep fast
    tr -s '\000' < "$IMG" | LC_ALL=C grep -caF -- "$1" || true
}
if [ "$(on_image "hello, f2fs")" -gt 0 ] && [ "$(on_image "$SECRET")" -eq 0 ]; then
    echo "   on the image: hello.txt's text is there in plain; diary.txt's is not (encrypted)"
else
    echo "demo: $IMG should hold hello.txt's text and not diary.txt's" >&2
    exit 1
fi

# ---- 3. reading: without the key, with it, and the big file back ----
echo
echo "== reading it back (a new mount)"
tour_mount
echo "   without the key, names are encoded and contents locked:"
for f in "$MNT"/private/*; do
    if [ -d "$f" ]; then
        echo "     $f/"
    elif err=$(cat "$f" 2>&1 >/dev/null); then
        echo "demo: $f is readable without its key" >&2
        exit 1
    else
        echo "     $f: cat: ${err##*: }"
    fi
done
"$CTL" add_key "$MNT" < "$KEY" >/dev/null
echo "   with the key (f2fs-fusectl add_key $MNT < $KEY):"
(cd "$MNT" && find private | sort | sed 's/^/     /')
echo "     private/diary.txt: $(cat "$MNT/private/diary.txt")"

t0=$(date +%s%N)
got_sum=$(sha256sum < "$MNT/big.bin" | cut -d' ' -f1)
ms=$(( ($(date +%s%N) - t0) / 1000000 ))
if [ "$got_sum" != "$big_sum" ]; then
    echo "demo: $MNT/big.bin reads back differently (sha256 $got_sum, wrote $big_sum)" >&2
    exit 1
fi
echo "   read $MNT/big.bin back in ${ms} ms: sha256 matches. Its blocks were written"
echo "   contiguously, so each of FUSE's reads (up to 1 MiB) finds one run in the read"
echo "   extent cache and goes to the device as one request (the large rows below):"
tour_unmount

# ---- 4. the mount that stays ----
"$BIN" -o "key_file=$(pwd -P)/$KEY" "$IMG" "$MNT"
for _ in $(seq 100); do is_mounted "$MNT" && break; sleep 0.1; done
if ! is_mounted "$MNT"; then
    echo "demo: $BIN did not mount $IMG at ./$MNT" >&2
    exit 1
fi

echo
echo "== $IMG is mounted read-write at ./$MNT, with the key of private/ (-o key_file=$KEY)"
echo
ls -la "$MNT"
echo
echo "--- files:"
(cd "$MNT" && find . | sort)
echo
echo "--- $MNT/hello.txt:"
cat "$MNT/hello.txt"
echo
echo "Lock private/ again:  $CTL remove_key $id $MNT"
echo "Unmount with:         fusermount3 -u $MNT    (or: make umount-demo)"
