#!/usr/bin/env bash
# make fstests: run fstests (xfstests) against f2fs-fuse.
#
#   tests/fstests/run.sh [check arguments]     default: -g quick
#
# fstests is unpacked and built in $FSTESTS_DIR (default
# /var/tmp/f2fs-fuse-fstests), never inside the repository; its only change
# is fuse-image-hooks.patch, which lets FSTYP=fuse make a scratch filesystem
# with $FUSE_MKFS_PROG (mkfs.f2fs) and check an image with $FUSE_FSCK_PROG
# (fsck-image: fsck.f2fs -f --dry-run) after every test.
#
# mount(8) runs helpers with a fixed PATH from /sbin, so the mount helper
# mount.fuse.f2fs-fuse (which runs this tree's build/f2fs-fuse) is laid over
# /usr/sbin with a read-only overlay inside a private mount namespace: the
# machine is left as it was, and every mount dies with the namespace.
# Needs root, /dev/fuse, overlayfs and unshare(1).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
HERE=$ROOT/tests/fstests
BIN=${F2FS_FUSE:-$ROOT/build/f2fs-fuse}
TARBALL=${FSTESTS_TARBALL:-$ROOT/../shared/third_party/xfstests-63a2972.tar.gz}
WORK=${FSTESTS_DIR:-/var/tmp/f2fs-fuse-fstests}
SIZE=${FSTESTS_IMAGE_SIZE:-2G}
SRC=$WORK/xfstests

[ "$(id -u)" -eq 0 ] || { echo "fstests: needs root (mounts, mkfs, namespaces)" >&2; exit 1; }
[ -x "$BIN" ] || { echo "fstests: $BIN not built (make all)" >&2; exit 1; }

# fstests' Debian build and run dependencies (its README), plus f2fs-tools.
"$ROOT/tests/install-deps.sh" acl attr automake bc dump e2fsprogs fio gawk gcc \
    git indent libacl1-dev libaio-dev libcap-dev libgdbm-dev libgdbm-compat-dev \
    libtool libtool-bin liburing-dev make psmisc python3 quota sed uuid-dev \
    uuid-runtime xfsprogs xfslibs-dev sqlite3 f2fs-tools util-linux dbench

# Rebuilt only when the tarball or the patch differ from the last build.
stamp=$SRC/.f2fs-fuse-built
want=$(cat "$TARBALL" "$HERE/fuse-image-hooks.patch" 2>/dev/null | sha256sum)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    [ -f "$TARBALL" ] || { echo "fstests: $TARBALL not found (FSTESTS_TARBALL)" >&2; exit 1; }
    rm -rf "$SRC"; mkdir -p "$WORK"
    tar xzf "$TARBALL" -C "$WORK"
    patch -d "$SRC" -p1 -s < "$HERE/fuse-image-hooks.patch"
    make -C "$SRC" -j2 >"$WORK/build.log" 2>&1 || { tail -30 "$WORK/build.log"; exit 1; }
    echo "$want" > "$stamp"
fi

# FSTESTS_STRESS=1: fstests' fsstress on f2fs-fuse mounts (stress.sh).
if [ -n "${FSTESTS_STRESS:-}" ]; then
    exec "$HERE/stress.sh" "$SRC" "$BIN"
fi

# FSTESTS_GUEST=1: run inside a qemu guest booted from Debian's kernel, whose
# device-mapper targets (flakey, error, log-writes, thin) this machine's
# kernel may lack; see guest.py.
if [ -n "${FSTESTS_GUEST:-}" ]; then
    "$ROOT/tests/install-deps.sh" qemu-system-x86 busybox-static linux-image-amd64 \
        udev dmsetup lvm2
    [ $# -gt 0 ] || set -- -g quick
    exec "${PYTHON:-python3}" "$HERE/guest.py" "$WORK" "$SRC" "$BIN" "$@"
fi

# The mount helper mount(8) finds for -t fuse.f2fs-fuse.  libfuse mounts
# nosuid,nodev unless told otherwise, and mount(8) drops `suid` and `dev`
# (the defaults) before running a helper; the kernel's f2fs honours set-id
# bits and device nodes, so the helper asks for them (options given later
# on the command line still win).
mkdir -p "$WORK/sbin" "$WORK/test" "$WORK/scratch"
printf '#!/bin/sh\nexec %q -o suid,dev "$@"\n' "$BIN" > "$WORK/sbin/mount.fuse.f2fs-fuse"
chmod 755 "$WORK/sbin/mount.fuse.f2fs-fuse"

# Fresh sparse images; TEST is made once per run, SCRATCH by each test.
for img in test scratch; do
    rm -f "$WORK/$img.img"; truncate -s "$SIZE" "$WORK/$img.img"
done
mkfs.f2fs -f -q "$WORK/test.img" >/dev/null

# FSTESTS_LOOP=1: TEST and SCRATCH are loop devices over the images, so
# f2fs-fuse runs on block devices (claimed with O_EXCL, BLKGETSIZE64,
# BLKDISCARD) and the tests that need a block device or a local one run.
TEST_DEV=$WORK/test.img SCRATCH_DEV=$WORK/scratch.img
loops=()
detach_loops() { for l in "${loops[@]}"; do losetup -d "$l" 2>/dev/null || true; done; }
if [ -n "${FSTESTS_LOOP:-}" ]; then
    trap detach_loops EXIT
    for img in test scratch; do
        l=$(losetup -f --show "$WORK/$img.img") || { echo "fstests: no loop device" >&2; exit 1; }
        loops+=("$l")
    done
    TEST_DEV=${loops[0]} SCRATCH_DEV=${loops[1]}
fi

export TEST_DIR=$WORK/test SCRATCH_MNT=$WORK/scratch
cat > "$SRC/local.config" <<CFG
export FSTYP=fuse
export FUSE_SUBTYP=.f2fs-fuse
export TEST_DEV=$TEST_DEV
export TEST_DIR=$WORK/test
export SCRATCH_DEV=$SCRATCH_DEV
export SCRATCH_MNT=$WORK/scratch
export MOUNT_OPTIONS="-o allow_other"
export TEST_FS_MOUNT_OPTS="-o allow_other"
export FUSE_MKFS_PROG="mkfs.f2fs -f"
export FUSE_FSCK_PROG=$HERE/fsck-image
CFG

# fstests' users (fsgqa, fsgqa2, 123456-fsgqa; groups fsgqa, fsgqa2) exist only in
# the namespace below: copies of the account files with them added are
# bound over the originals there, so the machine gets no new users.
mkdir -p "$WORK/etc" "$WORK/home"
accounts=()
for f in passwd group shadow gshadow; do
    [ -f "/etc/$f" ] || continue
    cp "/etc/$f" "$WORK/etc/$f"
    accounts+=("$f")
done
free_id() {    # the first id from $1 up that neither passwd nor group uses
    local id=$1
    while cut -d: -f3 /etc/passwd /etc/group | grep -qx "$id"; do id=$((id + 1)); done
    echo "$id"
}
group_id() {   # group_id NAME FIRST: NAME's id, the group added (from FIRST up) if new
    if grep -q "^$1:" /etc/group; then
        getent group "$1" | cut -d: -f3
        return
    fi
    local id
    id=$(free_id "$2")
    echo "$1:x:$id:" >> "$WORK/etc/group"
    [ ! -f "$WORK/etc/gshadow" ] || echo "$1:!::" >> "$WORK/etc/gshadow"
    echo "$id"
}
gid=$(group_id fsgqa 64000)
# a second group, as generic/597 and 598 want (no member; fsgqa2 is in fsgqa)
group_id fsgqa2 $((gid + 100)) >/dev/null
uid=$((gid + 1))
for u in fsgqa fsgqa2 123456-fsgqa; do
    grep -q "^$u:" /etc/passwd && continue
    uid=$(free_id "$uid")
    mkdir -p "$WORK/home/$u"; chown "$uid:$gid" "$WORK/home/$u"
    echo "$u:x:$uid:$gid::$WORK/home/$u:/bin/bash" >> "$WORK/etc/passwd"
    [ ! -f "$WORK/etc/shadow" ] || echo "$u:*:19000:0:99999:7:::" >> "$WORK/etc/shadow"
    uid=$((uid + 1))
done

[ $# -gt 0 ] || set -- -g quick
exclude=()
[ -n "${FSTESTS_NO_EXCLUDE:-}" ] || exclude=(-E "$HERE/exclude")

# shellcheck disable=SC2016
unshare -m --propagation private bash -c '
    set -e
    # The namespace starts with a copy of every mount, FUSE mounts of other
    # work on this machine too; a copy would keep their daemons from seeing
    # their unmount. Dropping the copies here touches only this namespace.
    # (types fuse, fuseblk and fuse.SUBTYPE, as f2fs-fuse mounts show)
    findmnt -rn -o TARGET,FSTYPE | awk "\$2 ~ /^fuse(blk)?(\\.|\$)/ { print \$1 }" |
    sort -r | while read -r m; do
        umount -l "$(printf "%b" "$m")" 2>/dev/null || true
    done
    mount -t overlay overlay -o "lowerdir=$1/sbin:/usr/sbin" /usr/sbin
    for f in $3; do mount --bind "$1/etc/$f" "/etc/$f"; done
    cd "$2"; shift 3
    rc=0; ./check "$@" || rc=$?
    # a daemon would keep this namespace, and its mount, alive
    for m in "$TEST_DIR" "$SCRATCH_MNT"; do
        ! mountpoint -q "$m" || umount "$m"
    done
    exit $rc
' fstests "$WORK" "$SRC" "${accounts[*]}" "${exclude[@]}" "$@" 2>&1 | tee "$WORK/check.out"
rc=${PIPESTATUS[0]}

# The images must be clean at the end too (the check also runs per test).
"$HERE/fsck-image" "$TEST_DEV" > "$WORK/fsck-test.out" && echo "fstests: TEST image fsck clean" \
    || { echo "fstests: TEST image fsck found problems, see $WORK/fsck-test.out"; rc=1; }
echo "fstests: results in $SRC/results, output in $WORK/check.out"
exit "$rc"
