#!/usr/bin/env bash
# Make a small f2fs image (demo.img) with a few sample files and mount it
# read-write at ./mnt with the f2fs-fuse binary given as the only argument.
# Run again at will: an existing mount at ./mnt is unmounted first.
set -euo pipefail

BIN=${1:?usage: tests/demo.sh PATH/TO/f2fs-fuse}
IMG=demo.img
MNT=mnt

if [ ! -x "$BIN" ]; then
    echo "demo: $BIN is not an executable (run make first)" >&2
    exit 1
fi
for tool in mkfs.f2fs sload.f2fs fsck.f2fs fusermount3; do
    command -v "$tool" >/dev/null 2>&1 || { echo "demo: $tool not found (run tests/install-deps.sh)" >&2; exit 1; }
done

is_mounted() {
    # by path, without touching the mount point (a dead daemon's mount
    # point fails every access with ENOTCONN)
    local abs
    abs="$(pwd -P)/$1"
    awk -v m="$abs" '{ gsub(/\\040/, " ", $5); if ($5 == m) found = 1 } END { exit !found }' /proc/self/mountinfo
}

if is_mounted "$MNT"; then
    echo "demo: unmounting the previous mount at ./$MNT"
    fusermount3 -u "$MNT" 2>/dev/null || fusermount3 -u -z "$MNT"
    for _ in $(seq 50); do is_mounted "$MNT" || break; sleep 0.1; done
fi
mkdir -p "$MNT"

TREE=$(mktemp -d)
trap 'rm -rf "$TREE"' EXIT

# A few sample files.
mkdir -p "$TREE/docs" "$TREE/data/nested/deeper"
cat > "$TREE/README.txt" <<'TXT'
This is a demo f2fs image, created by mkfs.f2fs and filled by sload.f2fs,
mounted read-write through f2fs-fuse.
TXT
echo "hello, f2fs" > "$TREE/hello.txt"
printf 'line %d of a small text file\n' $(seq 1 200) > "$TREE/docs/notes.txt"
seq 1 300000 > "$TREE/data/numbers.txt"                  # about 2 MiB: multi-block file
head -c 3000 /dev/zero | tr '\0' 'i' > "$TREE/data/inline-sized.txt"
echo "at the bottom" > "$TREE/data/nested/deeper/leaf.txt"
ln -s docs/notes.txt "$TREE/notes-link"
ln "$TREE/hello.txt" "$TREE/hello-hardlink.txt"
chmod 0600 "$TREE/docs/notes.txt"

rm -f "$IMG"
truncate -s 96M "$IMG"
mkfs.f2fs -q -f -l demo "$IMG" >/dev/null
# sload.f2fs 1.15 may exit non-zero even when it succeeded: judge by fsck.
sload.f2fs -f "$TREE" -P "$IMG" >/dev/null 2>&1 || true
if ! out=$(fsck.f2fs --dry-run -f "$IMG" 2>&1) || grep -qE '\[Fail\]|\[FIX\]' <<<"$out"; then
    echo "$out" >&2
    echo "demo: fsck.f2fs does not accept the image built by sload.f2fs" >&2
    exit 1
fi

# Mount read-write in the background (the daemon detaches once mounted).
"$BIN" "$IMG" "$MNT"
for _ in $(seq 100); do is_mounted "$MNT" && break; sleep 0.1; done
if ! is_mounted "$MNT"; then
    echo "demo: $BIN did not mount $IMG at ./$MNT" >&2
    exit 1
fi

echo "demo: $IMG is mounted read-write at ./$MNT"
echo
ls -la "$MNT"
echo
echo "--- files:"
(cd "$MNT" && find . | sort)
echo
echo "--- $MNT/hello.txt:"
cat "$MNT/hello.txt"
echo
echo "Unmount with:  fusermount3 -u $MNT    (or: make umount-demo)"
