#!/usr/bin/env bash
# Install the Debian/Ubuntu packages needed to build f2fs-fuse and run its tests,
# or, given package names, those instead (for tools only some targets need).
# Fast when everything is present (one dpkg-query); non-interactive; safe in CI.
set -euo pipefail

PKGS=(build-essential pkg-config libfuse3-dev fuse3 libssl-dev liblz4-dev libzstd-dev
      liblzo2-dev libisal-dev f2fs-tools python3-pytest zstd e2fsprogs fuse2fs fio clang attr acl
      unicode-data fsverity)
[ $# -eq 0 ] || PKGS=("$@")

missing=()
for p in "${PKGS[@]}"; do
    st=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
    [ "$st" = installed ] || missing+=("$p")
done

if [ ${#missing[@]} -gt 0 ]; then
    echo "install-deps: missing packages: ${missing[*]}"
    if ! command -v apt-get >/dev/null 2>&1; then
        echo "install-deps: apt-get not found; install these by hand: ${missing[*]}" >&2
        exit 1
    fi
    if [ "$(id -u)" -eq 0 ]; then
        SUDO=()
    elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
        SUDO=(sudo -n)
    elif command -v sudo >/dev/null 2>&1 && [ -t 0 ]; then
        SUDO=(sudo)
    else
        echo "install-deps: not root and no usable sudo; as root run:" >&2
        echo "  apt-get install -y ${missing[*]}" >&2
        exit 1
    fi
    export DEBIAN_FRONTEND=noninteractive
    APT=("${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get -y -q
         -o DPkg::Lock::Timeout=300
         -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold)
    if ! "${APT[@]}" install --no-install-recommends "${missing[@]}" </dev/null; then
        echo "install-deps: install failed; refreshing package lists and retrying"
        "${APT[@]}" update </dev/null
        "${APT[@]}" install --no-install-recommends "${missing[@]}" </dev/null
    fi
fi

# FUSE needs /dev/fuse.
if [ ! -c /dev/fuse ]; then
    if command -v modprobe >/dev/null 2>&1; then
        if [ "$(id -u)" -eq 0 ]; then
            modprobe fuse 2>/dev/null || true
        elif command -v sudo >/dev/null 2>&1; then
            sudo -n modprobe fuse 2>/dev/null || true
        fi
    fi
fi
if [ ! -c /dev/fuse ]; then
    echo "install-deps: /dev/fuse is missing: load the fuse kernel module (modprobe fuse)" >&2
    echo "  or, in a container, pass the device through (e.g. --device /dev/fuse --cap-add SYS_ADMIN)." >&2
    echo "  Building works without it; mounting (make demo, make test) does not." >&2
    exit 1
fi
