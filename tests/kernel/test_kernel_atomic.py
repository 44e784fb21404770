"""Atomic writes between f2fs-fuse and the kernel, both ways.

f2fs-fuse commits atomic writes (a file over several direct nodes, a
REPLACE) and aborts one; the kernel reads exactly the committed and the
untouched data.  The kernel commits and aborts atomic writes of its own
(F2FS_IOC_START_ATOMIC_WRITE from Python in the guest); f2fs-fuse reads
them.  Then a power cut: the kernel commits one atomic write (its commit
is an fsync whose last direct node alone carries the fsync mark) and
leaves another open, and the guest stops without syncing; f2fs-fuse's
roll-forward must bring back all of the committed write (every direct
node before the mark) and none of the open one; fsck.f2fs after each
step, and the kernel reads f2fs-fuse's recovered image."""

import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "integration"))

import fsutil  # noqa: E402
import run_guest as G  # noqa: E402
from test_kernel import assert_guest_ok, f2fs_fuse, guest  # noqa: E402,F401

MiB = 1 << 20
BLK = 4096
BIG = 3000 * BLK          # the inode's slots and two direct nodes

# Run by the guest's python3 and imported here: the data and the ioctls.
ATOMIC_PY = r'''
import fcntl, hashlib, os, sys, time

START, COMMIT, ABORT, REPLACE = 0xF501, 0xF502, 0xF505, 0xF519


def pat(n, seed):
    b = bytes((i * 7 + seed * 13) & 255 for i in range(256))
    return (b * (n // 256 + 1))[:n]


def pieces(n):
    """The write's pieces: unaligned, out of order, over the whole file."""
    cuts = sorted({0, n, n // 3 + 5, n // 2 - 1000, (2 * n) // 3 + 77})
    runs = [(a, b) for a, b in zip(cuts, cuts[1:]) if b > a]
    return runs[1::2] + runs[0::2]


def atomic(path, n, seed, end, replace=False, hold=None):
    data = pat(n, seed)
    fd = os.open(path, os.O_RDWR)
    fcntl.ioctl(fd, REPLACE if replace else START)
    for a, b in pieces(n):
        os.pwrite(fd, data[a:b], a)
    if hold:
        open(hold, "w").close()
        time.sleep(3600)
    fcntl.ioctl(fd, COMMIT if end == "commit" else ABORT)
    os.close(fd)


def sha(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "sha":
        for p in sys.argv[2:]:
            print("%s\t%s" % (os.path.basename(p), sha(p)))
    elif cmd in ("commit", "abort"):
        atomic(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), cmd)
    elif cmd == "hold":
        atomic(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), "commit", hold=sys.argv[5])
'''

A = {}
exec(compile(ATOMIC_PY, "atomic_guest.py", "exec"), A)

# name: (old size, old seed) of the files the kernel works on
KFILES = {"k1": (BIG, 7), "k2": (60000, 9), "k3": (BIG - 20000, 11), "k4": (40000, 13)}

GUEST_READ_AND_WRITE = """set -e
. lib/ktest.sh
kmount
python3 atomic_guest.py sha $MNT/fa $MNT/fr $MNT/fab >$KTEST_OUT/fuse.txt
python3 atomic_guest.py commit $MNT/k1 %d 8
python3 atomic_guest.py abort $MNT/k2 70000 10
kumount
kmount
python3 atomic_guest.py sha $MNT/k1 $MNT/k2 >$KTEST_OUT/kernel.txt
kumount
""" % (BIG + 5000)

GUEST_POWER_CUT = """set -e
. lib/ktest.sh
kmount
python3 atomic_guest.py commit $MNT/k3 %d 12
python3 atomic_guest.py hold $MNT/k4 50000 14 /tmp/ready &
while [ ! -e /tmp/ready ]; do sleep 1; done
kcrash
""" % (BIG + 3000)

GUEST_READ = """set -e
. lib/ktest.sh
kmount
python3 atomic_guest.py sha $MNT/k3 $MNT/k4 >$KTEST_OUT/recovered.txt
kumount
"""


def shas(text):
    return dict(ln.split("\t") for ln in text.splitlines() if ln)


def digest(n, seed):
    import hashlib
    return hashlib.sha256(A["pat"](n, seed)).hexdigest()


def put(path, n, seed):
    with open(path, "wb") as f:
        f.write(A["pat"](n, seed))


def read(path):
    with open(path, "rb") as f:
        return f.read()


def test_atomic_writes_both_ways(guest, f2fs_fuse, tmp_path):
    image = str(tmp_path / "atomic.img")
    with open(image, "wb") as f:
        f.truncate(256 * MiB)
    fsutil.run(["mkfs.f2fs", "-f", image], check=True)
    mnt = tmp_path / "mnt"
    files = {"atomic_guest.py": ATOMIC_PY}

    # f2fs-fuse commits and aborts; the kernel reads
    m = fsutil.Mount(f2fs_fuse, image, mnt, ["checkpoint_interval=3600"]).start()
    try:
        p = m.path
        put(os.path.join(p, "fa"), BIG, 1)
        put(os.path.join(p, "fr"), 50000, 3)
        put(os.path.join(p, "fab"), 70000, 5)
        for name, (n, seed) in KFILES.items():
            put(os.path.join(p, name), n, seed)
        A["atomic"](os.path.join(p, "fa"), BIG + 1000, 2, "commit")
        A["atomic"](os.path.join(p, "fr"), 20000, 4, "commit", replace=True)
        A["atomic"](os.path.join(p, "fab"), 90000, 6, "abort")
        assert read(os.path.join(p, "fa")) == A["pat"](BIG + 1000, 2)
    finally:
        m.unmount()
    m.check_exit()
    fsutil.fsck_check(image)
    r = G.run(GUEST_READ_AND_WRITE, [image], files=files)
    assert_guest_ok(r, "the kernel reads f2fs-fuse's atomic writes and makes its own")
    assert shas(r.text("fuse.txt")) == {"fa": digest(BIG + 1000, 2), "fr": digest(20000, 4),
                                        "fab": digest(70000, 5)}
    assert shas(r.text("kernel.txt")) == {"k1": digest(BIG + 5000, 8), "k2": digest(60000, 9)}

    # the kernel's, read by f2fs-fuse
    fsutil.fsck_check(image)
    m = fsutil.Mount(f2fs_fuse, image, mnt, ["ro"]).start()
    try:
        assert read(os.path.join(m.path, "k1")) == A["pat"](BIG + 5000, 8)
        assert read(os.path.join(m.path, "k2")) == A["pat"](60000, 9)
    finally:
        m.unmount()
    m.check_exit()

    # a power cut after the kernel's commit and inside another atomic write
    r = G.run(GUEST_POWER_CUT, [image], files=files)
    assert_guest_ok(r, "the kernel commits and stops without syncing")
    m = fsutil.Mount(f2fs_fuse, image, mnt, []).start()     # roll-forward
    try:
        got3 = read(os.path.join(m.path, "k3"))
        got4 = read(os.path.join(m.path, "k4"))
    finally:
        m.unmount()
    m.check_exit()
    assert got3 == A["pat"](BIG + 3000, 12), "the kernel's committed atomic write, replayed"
    assert got4 == A["pat"](40000, 13), "the open atomic write left nothing"
    fsutil.fsck_check(image)
    r = G.run(GUEST_READ, [image], files=files)
    assert_guest_ok(r, "the kernel reads f2fs-fuse's recovery")
    assert shas(r.text("recovered.txt")) == {"k3": digest(BIG + 3000, 12),
                                             "k4": digest(40000, 13)}


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))
