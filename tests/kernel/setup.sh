#!/bin/bash
# Prepare the kernel compatibility tests: install qemu, a Debian kernel and
# busybox when they are missing, then build (or reuse) the guest kernel and
# initramfs in $KERNEL_TEST_CACHE (default /var/tmp/f2fs-fuse-kernel).
# Safe to run again: installs and rebuilds only what is missing or changed.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
export KERNEL_TEST_CACHE=${KERNEL_TEST_CACHE:-/var/tmp/f2fs-fuse-kernel}
PYTHON=${PYTHON:-/usr/bin/python3}

need=()
command -v qemu-system-x86_64 >/dev/null || need+=(qemu-system-x86)
installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'ok installed'; }
installed busybox-static || need+=(busybox-static)
compgen -G '/lib/modules/*/modules.dep' >/dev/null && compgen -G '/boot/vmlinuz-*' >/dev/null \
	|| need+=(linux-image-amd64)
command -v zstd >/dev/null || need+=(zstd)
command -v fsck.f2fs >/dev/null || need+=(f2fs-tools)
command -v fusermount3 >/dev/null || need+=(fuse3)

if [ ${#need[@]} -gt 0 ]; then
	echo "kernel-test setup: installing ${need[*]}"
	if [ "$(id -u)" != 0 ]; then
		echo "kernel-test setup: not root, cannot install ${need[*]}" >&2
		exit 1
	fi
	export DEBIAN_FRONTEND=noninteractive
	stamp=/var/lib/apt/periodic/f2fs-fuse-kernel-update
	if [ ! -e "$stamp" ] || [ -n "$(find "$stamp" -mmin +720 2>/dev/null)" ]; then
		apt-get update -q || true
		mkdir -p "$(dirname "$stamp")" && touch "$stamp"
	fi
	apt-get install -y -q --no-install-recommends "${need[@]}"
fi

"$PYTHON" "$here/guestimage.py" build
