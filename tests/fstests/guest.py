"""Run fstests against f2fs-fuse inside a qemu guest booted from Debian's
kernel, for the tests this machine's kernel cannot host: device-mapper
targets (dm-flakey, dm-error, dm-log-writes, dm-snapshot, dm-thin) on real
block devices.

The guest's root is this machine's own root, read-only over virtio-9p, with a
tmpfs overlay on top, so it runs the same fstests build, f2fs-fuse binary and
tools as `make fstests` does on the host, and loads device-mapper modules from
/lib/modules of the guest's kernel.  TEST, SCRATCH and LOGWRITES are virtio
disks backed by sparse image files; results come back through a second,
writable 9p share.

    python3 guest.py WORK SRC BIN [check arguments]

WORK is run.sh's folder (images and results go to WORK/guest), SRC the built
fstests tree, BIN the f2fs-fuse binary.  Needs qemu-system-x86_64, a kernel
(/boot/vmlinuz-* with its modules) and busybox-static: tests/kernel/setup.sh
installs them.  FSTESTS_GUEST_FSTYP=f2fs runs the same tests on the guest
kernel's own f2fs instead, as the reference for a failure (in WORK/guest-f2fs).
Environment: FSTESTS_MOUNT_EXTRA (f2fs-fuse options for every mount, such
as `direct`), FSTESTS_GUEST_DIR (default WORK/guest), FSTESTS_GUEST_TIMEOUT (seconds, default 14400),
FSTESTS_GUEST_MEM (MiB, default 4096), FSTESTS_GUEST_SMP (default 2),
FSTESTS_IMAGE_SIZE (default 2G), KERNEL_TEST_KVM=1 to use KVM.
"""

import os
import shlex
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "kernel"))

import guestimage  # noqa: E402

# What the initramfs needs to reach the root share; everything else (fuse,
# dm-*, loop) the guest loads with modprobe from the shared /lib/modules.
BOOT_MODULES = ["virtio_ring", "virtio", "virtio_pci_modern_dev", "virtio_pci_legacy_dev",
                "virtio_pci", "virtio_blk", "9pnet_virtio", "9p", "overlay"]

INIT = r"""#!/bin/sh
# initramfs init: the host's root (read-only 9p) under a tmpfs overlay
export PATH=/bin:/sbin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
for m in $(cat /modules.order); do
	insmod /lib/modules/$m.ko 2>/tmp.err || grep -q 'File exists' /tmp.err || cat /tmp.err
done
fail() { echo "FSTESTS-GUEST-ERROR: $*"; echo o > /proc/sysrq-trigger; sleep 60; }
p9=trans=virtio,version=9p2000.L,msize=524288
mkdir -p /lower /rw /newroot
mount -t 9p -o $p9,ro,cache=loose hostroot /lower || fail "9p root"
mount -t tmpfs -o size=60% tmpfs /rw || fail "tmpfs"
mkdir -p /rw/upper /rw/work
mount -t overlay overlay -o lowerdir=/lower,upperdir=/rw/upper,workdir=/rw/work,redirect_dir=off,index=off,xino=off /newroot \
	|| fail "overlay"
mkdir -p /newroot/fstests-out
mount -t 9p -o $p9 out /newroot/fstests-out || fail "9p out"
mount --move /dev /newroot/dev
umount /proc /sys
exec switch_root /newroot /bin/bash /fstests-out/guest-run.sh
"""

# Runs in the guest as its init, from the host's root (bash and all).
GUEST_RUN = r"""#!/bin/bash
# fstests inside the guest: what run.sh does on the host, on virtio disks
set -u
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root LC_ALL=C.UTF-8
. /fstests-out/env
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mkdir -p /dev/pts /dev/shm /dev/mapper
mount -t devpts devpts /dev/pts
mount -t tmpfs tmpfs /dev/shm
mount -t tmpfs tmpfs /run
mount -t tmpfs tmpfs /tmp
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
ln -sf /proc/self/fd /dev/fd
ln -sf /proc/self/fd/0 /dev/stdin; ln -sf /proc/self/fd/1 /dev/stdout; ln -sf /proc/self/fd/2 /dev/stderr
hostname fstests-guest
ip link set lo up 2>/dev/null || true
echo 127.0.0.1 localhost fstests-guest > /etc/hosts
# udev makes /dev/mapper's nodes, which fstests waits for
/lib/systemd/systemd-udevd --daemon
udevadm trigger --action=add >/dev/null 2>&1; udevadm settle
# the daemon's messages (it logs to syslog once in the background)
busybox syslogd -O /fstests-out/syslog
modprobe fuse
modprobe loop
for t in flakey log-writes snapshot thin-pool delay; do modprobe dm-$t; done
# a root shell on the second serial port, for looking into a stuck test
# (socat - UNIX-CONNECT:WORK/guest/shell.sock)
(while :; do setsid bash -i </dev/ttyS1 >/dev/ttyS1 2>&1; sleep 1; done) &
echo "FSTESTS-GUEST-UP $(cat /proc/uptime)"
# fstests' users
groupadd -f fsgqa; groupadd -f fsgqa2
for u in fsgqa fsgqa2 123456-fsgqa; do
	id "$u" >/dev/null 2>&1 || useradd -m -g fsgqa "$u"
done
printf '#!/bin/sh\nexec %q -o suid,dev "$@"\n' "$F2FS_FUSE_BIN" > /usr/sbin/mount.fuse.f2fs-fuse
chmod 755 /usr/sbin/mount.fuse.f2fs-fuse
mkdir -p /mnt/test /mnt/scratch
mkfs.f2fs -f -q /dev/vda >/dev/null
if [ "$FSTESTS_FSTYP" = f2fs ]; then
	# the reference: the guest kernel's own f2fs on the same disks
	modprobe f2fs
	cat > "$FSTESTS_SRC/local.config" <<CFG
export FSTYP=f2fs
export TEST_DEV=/dev/vda
export TEST_DIR=/mnt/test
export SCRATCH_DEV=/dev/vdb
export SCRATCH_MNT=/mnt/scratch
export LOGWRITES_DEV=/dev/vdc
export RESULT_BASE=/fstests-out/results
CFG
else
	cat > "$FSTESTS_SRC/local.config" <<CFG
export FSTYP=fuse
export FUSE_SUBTYP=.f2fs-fuse
export TEST_DEV=/dev/vda
export TEST_DIR=/mnt/test
export SCRATCH_DEV=/dev/vdb
export SCRATCH_MNT=/mnt/scratch
export LOGWRITES_DEV=/dev/vdc
export MOUNT_OPTIONS="-o allow_other${FSTESTS_MOUNT_EXTRA:+,$FSTESTS_MOUNT_EXTRA}"
export TEST_FS_MOUNT_OPTS="-o allow_other${FSTESTS_MOUNT_EXTRA:+,$FSTESTS_MOUNT_EXTRA}"
export FUSE_MKFS_PROG="mkfs.f2fs -f"
export FUSE_FSCK_PROG=$FSTESTS_HERE/fsck-image
export RESULT_BASE=/fstests-out/results
CFG
fi
cd "$FSTESTS_SRC"
eval "set -- $FSTESTS_CHECK_ARGS"
rc=0
./check "$@" > >(tee /fstests-out/check.out) 2>&1 </dev/null || rc=$?
sleep 1
for m in /mnt/test /mnt/scratch; do ! mountpoint -q $m || umount $m; done
if [ "$FSTESTS_FSTYP" = f2fs ]; then
	: # fstests checked the kernel's images itself
elif "$FSTESTS_HERE/fsck-image" /dev/vda > /fstests-out/fsck-test.out 2>&1; then
	echo "fstests: TEST disk fsck clean" | tee -a /fstests-out/check.out
else
	echo "fstests: TEST disk fsck found problems, see fsck-test.out" | tee -a /fstests-out/check.out
	rc=1
fi
dmesg > /fstests-out/dmesg
echo $rc > /fstests-out/rc
sync
echo "FSTESTS-GUEST-DONE rc=$rc"
echo o > /proc/sysrq-trigger
sleep 30
"""


def build_initramfs(kver):
    c = guestimage.Cpio()
    for d in ("bin", "sbin", "proc", "sys", "dev", "lib/modules"):
        c.mkdir(d)
    c.node("dev/console", guestimage.stat.S_IFCHR, 0o600, 5, 1)
    c.copy(guestimage.BUSYBOX, "bin/busybox", 0o755)
    for a in ("sh", "mount", "umount", "mkdir", "insmod", "cat", "grep", "switch_root",
              "sleep", "echo"):
        c.symlink("bin/" + a, "busybox")
    c.file("init", INIT.encode(), 0o755)
    names = []
    for name, rel in guestimage.resolve_modules(kver, BOOT_MODULES):
        c.file("lib/modules/%s.ko" % name, guestimage.module_bytes(kver, rel))
        names.append(name)
    c.file("modules.order", ("\n".join(names) + "\n").encode())
    return c.finish()


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    work, src, binary = (os.path.abspath(a) for a in argv[:3])
    args = argv[3:] or ["-g", "quick"]
    qemu = shutil.which("qemu-system-x86_64")
    if not qemu or not os.access(guestimage.BUSYBOX, os.X_OK):
        print("fstests guest: qemu-system-x86_64 or busybox missing "
              "(tests/kernel/setup.sh installs them)", file=sys.stderr)
        return 1
    kver, vmlinuz = guestimage.pick_kernel()
    fstyp = os.environ.get("FSTESTS_GUEST_FSTYP", "fuse")
    if fstyp not in ("fuse", "f2fs"):
        print("fstests guest: FSTESTS_GUEST_FSTYP is fuse or f2fs", file=sys.stderr)
        return 2
    gdir = os.environ.get("FSTESTS_GUEST_DIR") or os.path.join(
        work, "guest" if fstyp == "fuse" else "guest-" + fstyp)
    out = os.path.join(gdir, "out")
    shutil.rmtree(out, ignore_errors=True)
    os.makedirs(out)
    initrd = os.path.join(gdir, "initramfs.cpio")
    with open(initrd, "wb") as f:
        f.write(build_initramfs(kver))
    size = os.environ.get("FSTESTS_IMAGE_SIZE", "2G")
    disks = []
    for name in ("test", "scratch", "logwrites"):
        p = os.path.join(gdir, name + ".img")
        if os.path.exists(p):
            os.unlink(p)
        subprocess.run(["truncate", "-s", size, p], check=True)
        disks.append(p)
    with open(os.path.join(out, "guest-run.sh"), "w") as f:
        f.write(GUEST_RUN)
    if fstyp == "fuse" and not os.environ.get("FSTESTS_NO_EXCLUDE") and "-E" not in args:
        args = ["-E", os.path.join(HERE, "exclude")] + args
    # a copy, so that a rebuild during the run does not change the binary under test
    run_bin = os.path.join(gdir, "f2fs-fuse")
    shutil.copy2(binary, run_bin)
    env = {"FSTESTS_SRC": src, "FSTESTS_HERE": HERE, "F2FS_FUSE_BIN": run_bin,
           "FSTESTS_FSTYP": fstyp, "FSTESTS_MOUNT_EXTRA": os.environ.get("FSTESTS_MOUNT_EXTRA", ""),
           "FSTESTS_CHECK_ARGS": " ".join(shlex.quote(a) for a in args)}
    with open(os.path.join(out, "env"), "w") as f:
        f.write("".join("%s=%s\n" % (k, shlex.quote(v)) for k, v in env.items()))

    console = os.path.join(gdir, "console.log")
    mem = os.environ.get("FSTESTS_GUEST_MEM", "4096")
    smp = os.environ.get("FSTESTS_GUEST_SMP", "2")
    cmd = [qemu, "-nodefaults", "-no-reboot", "-display", "none", "-monitor", "none",
           "-serial", "file:" + console,
           "-serial", "unix:%s,server=on,wait=off" % os.path.join(gdir, "shell.sock"),
           "-m", mem, "-smp", smp,
           "-kernel", vmlinuz, "-initrd", initrd,
           "-append", "console=ttyS0 loglevel=4 panic=-1 rdinit=/init "
                      "tsc=reliable no_timer_check mitigations=off",
           "-virtfs", "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,"
                      "multidevs=remap",
           "-virtfs", "local,path=%s,mount_tag=out,security_model=none,multidevs=remap" % out]
    if os.environ.get("KERNEL_TEST_KVM", "0") in ("1", "kvm"):
        cmd += ["-accel", "kvm", "-cpu", os.environ.get("KERNEL_TEST_KVM_CPU", "max")]
    else:
        cmd += ["-accel", "tcg,thread=multi", "-cpu", "max"]
    for p in disks:
        cmd += ["-drive", "file=%s,if=virtio,format=raw,cache=unsafe" % p]
    timeout = float(os.environ.get("FSTESTS_GUEST_TIMEOUT", "14400"))
    print("fstests guest: kernel %s, %s MiB, %s CPUs, disks %s" % (kver, mem, smp, size),
          flush=True)
    t0 = time.monotonic()
    with open(os.path.join(gdir, "qemu.log"), "wb") as qlog:
        p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=qlog,
                             stderr=subprocess.STDOUT, start_new_session=True)
        shown = 0
        check_out = os.path.join(out, "check.out")
        while p.poll() is None:
            try:
                time.sleep(2)
            except KeyboardInterrupt:
                p.kill()
                raise
            # check's own output is the progress report
            if os.path.exists(check_out):
                with open(check_out, "rb") as f:
                    f.seek(shown)
                    data = f.read()
                shown += len(data)
                sys.stdout.write(data.decode(errors="replace"))
                sys.stdout.flush()
            if time.monotonic() - t0 > timeout:
                print("fstests guest: timed out after %d s" % timeout, flush=True)
                p.kill()
                p.wait()
                break
    if os.path.exists(os.path.join(out, "check.out")):
        with open(os.path.join(out, "check.out"), "rb") as f:
            f.seek(shown)
            sys.stdout.write(f.read().decode(errors="replace"))
    try:
        with open(os.path.join(out, "rc")) as f:
            rc = int(f.read().strip())
    except (OSError, ValueError):
        with open(console, "rb") as f:
            tail = f.read()[-4000:].decode(errors="replace")
        print("fstests guest: no result; the console's end:\n" + tail)
        rc = 1
    print("fstests guest: rc=%d in %.0f s; results in %s/results, console %s"
          % (rc, time.monotonic() - t0, out, console))
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
