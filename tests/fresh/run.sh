#!/usr/bin/env bash
# Run the README's first commands on a pristine Debian machine: a debootstrap
# root (minbase + git, make, ca-certificates), cached as a tarball and unpacked
# afresh for every run, with /dev, /proc and /sys bound in and the committed
# project cloned into /root/f2fs-fuse.  The commands run there as root, in
# order, with no stdin and a clean environment; the first failure fails the run.
#
#   tests/fresh/run.sh [COMMAND...]     default: "make demo" "make test-unit"
#
# FRESH_REF     commit to test (default HEAD; uncommitted changes are not seen)
# FRESH_CACHE   where the root tarball and downloaded .debs are kept
#               (default /var/tmp/f2fs-fuse-fresh)
# FRESH_SUITE   Debian suite (default bookworm)
# FRESH_MIRROR  Debian mirror (default: the host's, else deb.debian.org)
# FRESH_KEEP=1  leave the unpacked root behind (unmounted) for a look
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
SUITE=${FRESH_SUITE:-bookworm}
CACHE=${FRESH_CACHE:-/var/tmp/f2fs-fuse-fresh}
INCLUDE=git,make,ca-certificates
[ $# -gt 0 ] || set -- "make demo" "make test-unit"

say() { echo "test-fresh: $*"; }
die() { echo "test-fresh: $*" >&2; exit 1; }

if [ "$(id -u)" -ne 0 ]; then
    # debootstrap, chroot and mount need root
    command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null \
        || die "needs root (debootstrap, chroot, mount); run as root or with sudo"
    exec sudo -n --preserve-env=FRESH_REF,FRESH_CACHE,FRESH_SUITE,FRESH_MIRROR,FRESH_KEEP "$0" "$@"
fi

sha=$(git -C "$repo" rev-parse --verify "${FRESH_REF:-HEAD}^{commit}") \
    || die "${FRESH_REF:-HEAD} is not a commit of $repo"
gitdir=$(cd "$repo" && cd "$(git rev-parse --git-common-dir)" && pwd)

host_mirror() {
    # the first plain Debian archive the host's apt uses (one-line or deb822 form)
    cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources \
        2>/dev/null | grep -v '^[[:space:]]*#' | grep -oE 'https?://[^[:space:]]+/debian/?([[:space:]]|$)' \
        | head -n1 | tr -d '[:space:]' || true
}
MIRROR=${FRESH_MIRROR:-$(host_mirror)}
MIRROR=${MIRROR:-http://deb.debian.org/debian}

# ---- mounts under a root: list, and take down deepest first ----
mounts_under() {
    awk -v r="$1/" '{ gsub(/\\040/, " ", $5); if (index($5 "/", r) == 1) print $5 }' \
        /proc/self/mountinfo | sort -r
}

procs_in() {
    # processes whose root directory is inside $1: started by this script's chroot
    find /proc -mindepth 2 -maxdepth 2 -name root \( -lname "$1" -o -lname "$1/*" \) 2>/dev/null \
        | cut -d/ -f3 || true    # find complains of processes that exit meanwhile
}

teardown() (
    # a subshell without -e: one step failing must not skip the others
    set +e
    root=$1
    [ -d "$root" ] || exit 0
    # FUSE mounts first (the demo's ./mnt): their daemons then exit by themselves
    for m in $(mounts_under "$root"); do
        if awk -v m="$m" '{ gsub(/\\040/, " ", $5) } $5 == m { for (i = 7; $i != "-"; i++); print $(i + 1) }' \
            /proc/self/mountinfo | grep -q '^fuse'; then
            umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
        fi
    done
    for _ in $(seq 20); do
        pids=$(procs_in "$root")
        [ -n "$pids" ] || break
        sleep 0.1
    done
    if [ -n "$pids" ]; then
        say "stopping leftover processes in the root: $(echo $pids)"
        kill -TERM $pids 2>/dev/null || true
        sleep 1
        pids=$(procs_in "$root")
        [ -z "$pids" ] || kill -KILL $pids 2>/dev/null || true
    fi
    for m in $(mounts_under "$root"); do
        umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
    done
    if [ -n "$(mounts_under "$root")" ]; then
        echo "test-fresh: still mounted under $root, not deleting it:" >&2
        mounts_under "$root" >&2
        exit 1
    fi
    if [ "${FRESH_KEEP:-0}" = 1 ]; then
        say "kept $root"
    else
        # one file system only: never follow anything still bound into it
        rm -rf --one-file-system "$root"
    fi
)

mkdir -p "$CACHE/debs/partial"
# one run at a time per cache (from any worktree): so a root found here is
# never another run's, and the tarball is built once
exec 9>"$CACHE/lock"
flock -n 9 || { say "waiting for another run to finish"; flock 9; }
# a run killed before its trap ran may have left its root behind
for old in "$CACHE"/run.*; do
    [ -d "$old" ] || continue
    say "cleaning up an earlier run's $old"
    teardown "$old" || die "cannot clean up $old"
done

# ---- the pristine root, built once ----
tarball="$CACHE/$SUITE-minbase-${INCLUDE//,/-}.tar.zst"
if [ ! -s "$tarball" ]; then
    command -v debootstrap >/dev/null 2>&1 && command -v zstd >/dev/null 2>&1 \
        || "$repo/tests/install-deps.sh" debootstrap zstd
    say "debootstrap $SUITE (minbase + $INCLUDE) from $MIRROR"
    build="$CACHE/build.$$"
    rm -rf --one-file-system "$build"
    trap 'teardown "$build"' EXIT
    t0=$(date +%s)
    debootstrap --variant=minbase --include="$INCLUDE" "$SUITE" "$build" "$MIRROR" </dev/null \
        >"$CACHE/debootstrap.log" 2>&1 || { tail -n 30 "$CACHE/debootstrap.log" >&2; die "debootstrap failed"; }
    # a machine as installed: no downloaded .debs kept
    rm -f "$build"/var/cache/apt/archives/*.deb
    tar -C "$build" --numeric-owner --xattrs -I 'zstd -q -T0 -3' -cf "$tarball.tmp" .
    mv "$tarball.tmp" "$tarball"
    teardown "$build"
    trap - EXIT
    say "pristine root cached in $tarball ($(( $(date +%s) - t0 ))s)"
fi

# ---- a copy of it for this run ----
root=$(mktemp -d "$CACHE/run.XXXXXX")
trap 'teardown "$root"' EXIT
trap 'exit 130' INT TERM HUP
chmod 0755 "$root"
tar -C "$root" --numeric-owner --xattrs -I zstd -xf "$tarball"
# (removed first: a symlink there would point into the host's /etc or /run)
rm -f "$root/etc/resolv.conf" "$root/etc/apt/sources.list"
cp /etc/resolv.conf "$root/etc/resolv.conf"
echo "deb $MIRROR $SUITE main" >"$root/etc/apt/sources.list"
# as Debian's container images do: dpkg skips its fsyncs (a throw-away root)
echo force-unsafe-io >"$root/etc/dpkg/dpkg.cfg.d/unsafe-io"

# A private subtree: what is mounted below the root (devpts, the demo's FUSE
# mount) must not propagate to the host's /dev or anywhere else, and the
# host's mounts must not appear under the root.
mount --bind "$root" "$root"
mount --make-private "$root"
mount --bind /dev "$root/dev"            # /dev/fuse, /dev/null, /dev/urandom, ...
mount --make-private "$root/dev"
mount -t devpts -o newinstance,ptmxmode=0666,mode=0620 devpts "$root/dev/pts"
mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs "$root/dev/shm"
mount -t proc proc "$root/proc"
mount -t sysfs sysfs "$root/sys"
# the .debs apt downloads are kept between runs; what is installed is not
mount --bind "$CACHE/debs" "$root/var/cache/apt/archives"

git clone -q --no-hardlinks --no-checkout "$gitdir" "$root/root/f2fs-fuse"
git -C "$root/root/f2fs-fuse" checkout -q --detach "$sha"
say "testing $(git -C "$repo" log -1 --format='%h %s' "$sha")"

# the commands, one after the other, as a new user would type them
script='set -e; cd /root/f2fs-fuse
for cmd in "$@"; do
    echo; echo "test-fresh: # $cmd"
    t0=$(date +%s)
    if ! eval "$cmd"; then echo "test-fresh: FAILED: $cmd" >&2; exit 1; fi
    echo "test-fresh: ok: $cmd ($(( $(date +%s) - t0 ))s)"
done'
t0=$(date +%s)
rc=0
# in the background so that a signal to this script is acted on at once
# (the EXIT trap then stops what runs in the root)
chroot "$root" /usr/bin/env -i HOME=/root USER=root LOGNAME=root SHELL=/bin/bash TERM=dumb \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    /bin/bash -c "$script" fresh "$@" </dev/null 9>&- &
wait $! || rc=$?
echo
if [ "$rc" -eq 0 ]; then
    say "PASS on a fresh $SUITE root in $(( $(date +%s) - t0 ))s: $*"
else
    say "FAIL (exit $rc) on a fresh $SUITE root: $*"
fi
exit "$rc"
