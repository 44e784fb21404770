"""Extent precache through a real mount: F2FS_IOC_PRECACHE_EXTENTS and
f2fs-fusectl precache / drop_caches, node read-ahead on and off, and the
extent cache staying right through overwrites, truncation, holes,
fallocate, cleaning and a crash with roll-forward recovery."""

import fcntl
import os
import random
import re
import struct
import subprocess

import pytest

from test_ioctl import GC_RANGE
from test_keys import fusectl  # noqa: F401
from test_write import MiB, blob, rwimage, sha  # noqa: F401

F2FS_IOC_PRECACHE_EXTENTS = 0xF50F          # _IO(0xf5, 15)
FALLOC_FL_KEEP_SIZE = 0x01
FALLOC_FL_PUNCH_HOLE = 0x02

FILE = 48 * MiB         # direct nodes below the first indirect node (past ~11.6 MiB)


def precache_ioctl(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        fcntl.ioctl(fd, F2FS_IOC_PRECACHE_EXTENTS)
    finally:
        os.close(fd)


def ctl(fusectl, *args):
    r = subprocess.run([fusectl] + list(args), capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return r.stdout


def io_stats(stderr):
    """The precache and read-ahead counters from -o io_stats output."""
    m = re.search(r"extent cache: (\d+) hits, (\d+) misses, (\d+) evictions; precache: (\d+) "
                  r"direct nodes; node read-ahead: (\d+) blocks in (\d+) requests, (\d+) refused",
                  stderr)
    assert m, stderr
    keys = ("hits", "misses", "evictions", "precache_nodes", "ra_blocks", "ra_requests",
            "ra_refused")
    return dict(zip(keys, map(int, m.groups())))


class Model:
    """The file's expected bytes, changed alongside the file."""

    def __init__(self, path, data):
        self.path = path
        self.data = bytearray(data)

    def pwrite(self, off, b):
        fd = os.open(self.path, os.O_WRONLY)
        try:
            assert os.pwrite(fd, b, off) == len(b)
        finally:
            os.close(fd)
        end = off + len(b)
        if end > len(self.data):
            self.data.extend(bytes(end - len(self.data)))
        self.data[off:end] = b

    def check(self):
        with open(self.path, "rb") as f:
            got = f.read()
        assert len(got) == len(self.data)
        assert sha(got) == sha(bytes(self.data))


def fragment(path, seed=1):
    """A copy with ranges overwritten (1 MiB of every 4 MiB past 8 MiB, as the kernel's
    measurement overwrote 100 MiB ranges), then random single blocks."""
    m = Model(path, blob(FILE, seed))
    with open(path, "wb") as f:
        f.write(m.data)
        f.flush()
        os.fsync(f.fileno())
    rng = random.Random(seed)
    for off in range(8 * MiB, FILE, 4 * MiB):
        m.pwrite(off, rng.randbytes(MiB))
    for _ in range(200):
        m.pwrite(rng.randrange(FILE // 4096) * 4096, rng.randbytes(4096))
    return m


def test_precache_and_read_ahead(rwimage, fusectl):
    img = rwimage(size=256 * MiB, options=["rw", "io_stats", "direct"])
    m = fragment(os.path.join(img.mount(), "big"))
    img.unmount()                                # a checkpoint: no node is dirty
    p = img.mount()
    m.path = os.path.join(p, "big")
    ctl(fusectl, "drop_caches", p)
    precache_ioctl(m.path)                       # the kernel's ioctl, as f2fs_io would send it
    out = ctl(fusectl, "precache", "-t", m.path)  # and the tool, on a warm cache
    assert re.match(r".*/big: \d+\.\d+ ms$", out.strip()), out
    m.check()
    ctl(fusectl, "drop_caches", p)
    m.check()                                    # cold, without a precache
    st = io_stats(img.unmount().stderr())
    assert st["precache_nodes"] >= 2 * 10, st
    assert st["ra_blocks"] >= 10 and st["ra_requests"] * 2 <= st["ra_blocks"], st
    assert st["ra_refused"] == 0, st

    # the same bytes with read-ahead off, and nothing read ahead
    m.path = os.path.join(img.mount(options=["rw", "io_stats", "node_ra=0"]), "big")
    precache_ioctl(m.path)
    m.check()
    st = io_stats(img.unmount().stderr())
    assert st["ra_blocks"] == 0 and st["precache_nodes"] >= 10, st

    # at open, with -o precache_extents: reads then map from the cache
    m.path = os.path.join(img.mount(options=["rw", "io_stats", "precache_extents=4"]), "big")
    m.check()
    st = io_stats(img.unmount().stderr())
    assert st["precache_nodes"] >= 10 and st["misses"] <= 2, st

    img.mount(options=["rw"])
    img.finish()


def test_precache_stays_coherent(rwimage, fusectl):
    """Precache, then change the file every way there is; after each change the file
    reads as the model, warm and after a cache drop."""
    img = rwimage(size=256 * MiB, options=["rw", "extent_cache_size=64K"])
    p = img.mount()
    m = fragment(os.path.join(p, "big"), seed=2)
    rng = random.Random(7)

    def again():
        m.check()
        precache_ioctl(m.path)
        m.check()
        ctl(fusectl, "drop_caches", p)
        m.check()

    precache_ioctl(m.path)
    m.pwrite(3 * MiB + 4096, rng.randbytes(3 * 4096))      # inside a precached run
    again()
    os.truncate(m.path, 30 * MiB + 1234)
    del m.data[30 * MiB + 1234:]
    again()
    fd = os.open(m.path, os.O_RDWR)
    try:
        os.posix_fallocate(fd, 40 * MiB, MiB)               # grows the file
        m.data.extend(bytes(41 * MiB - len(m.data)))
        fcntl_fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 20 * MiB + 8192, MiB)
        m.data[20 * MiB + 8192:21 * MiB + 8192] = bytes(MiB)
        fcntl_fallocate(fd, FALLOC_FL_KEEP_SIZE, 41 * MiB, MiB)
    finally:
        os.close(fd)
    again()
    m.pwrite(20 * MiB + 4096, rng.randbytes(16384))         # into the punched hole
    again()
    img.finish()


def fcntl_fallocate(fd, mode, off, length):
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    libc.fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_long, ctypes.c_long]
    if libc.fallocate(fd, mode, off, length) != 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))


def test_precache_through_cleaning(rwimage, fusectl):
    """A small image churned until cleaning moves the precached file's blocks."""
    img = rwimage(size=128 * MiB, options=["rw", "io_stats"])
    p = img.mount()
    m = Model(os.path.join(p, "keep"), blob(24 * MiB, 3))
    with open(m.path, "wb") as f:
        f.write(m.data)
    rng = random.Random(3)
    # ten files rewritten over and over: the log wraps and cleaning moves "keep"
    churn = os.path.join(p, "churn")
    for rnd in range(6):
        precache_ioctl(m.path)
        for i in range(30):
            with open(churn + str(i % 10), "wb") as f:
                f.write(rng.randbytes(3 * MiB))
                f.flush()
                os.fsync(f.fileno())    # on the device before the next round cuts it
        m.pwrite(rng.randrange(24 * MiB // 4096) * 4096, rng.randbytes(4096))
        m.check()
    # whether the churn alone cleans depends on how the log reused segments
    # (SSR); cleaning every section surely moves "keep" once
    with open(img.image, "rb") as f:
        sb = f.read(2048)[1024:]
    main, seg_main = struct.unpack_from("<I", sb, 92)[0], struct.unpack_from("<I", sb, 68)[0]
    fd = os.open(p, os.O_RDONLY)
    try:
        fcntl.ioctl(fd, GC_RANGE, struct.pack("IxxxxQQ", 1, main, seg_main * 512 - 1))
    finally:
        os.close(fd)
    m.check()
    st = img.unmount().stderr()
    moved = re.search(r"cleaning: (\d+) runs, \d+ sections, (\d+) data", st)
    assert moved and int(moved.group(2)) > 0, st
    m.path = os.path.join(img.mount(options=["rw"]), "keep")
    precache_ioctl(m.path)
    m.check()
    img.finish()


def test_precache_then_crash(rwimage):
    """fsync()ed changes to a precached file come back by roll-forward after SIGKILL."""
    img = rwimage(size=256 * MiB, options=["rw"])
    p = img.mount()
    m = fragment(os.path.join(p, "big"), seed=4)
    fd = os.open(m.path, os.O_WRONLY)
    try:
        os.fsync(fd)
        precache_ioctl(m.path)
        b = blob(2 * MiB, 44)
        os.pwrite(fd, b, 5 * MiB)
        m.data[5 * MiB:7 * MiB] = b
        os.fsync(fd)
    finally:
        os.close(fd)
    img.crash()
    m.path = os.path.join(img.mount(), "big")
    precache_ioctl(m.path)
    m.check()
    img.finish()


def test_precache_bad_options(rwimage):
    img = rwimage(size=64 * MiB)
    for opt in ("node_ra=1019", "node_ra=x", "node_ra_depth=0", "node_ra_depth=33",
                "extent_cache_size=0", "precache_extents=-1"):
        with pytest.raises(AssertionError):
            img.mount(options=["rw", opt])
        img.m = None


def test_mount_scans_the_nat_lazily(rwimage):
    """A read-write mount does not read the NAT for free nids up front (a
    64 GiB image has about 30,000 NAT blocks): the first allocations scan
    one batch of blocks. A second mount after writes (the NAT's two copies
    then mixed) still finds every inode and hands out nids nobody holds."""
    img = rwimage(size=64 << 30, options=["rw", "io_stats"])
    p = img.mount()
    for i in range(50):
        with open(os.path.join(p, "f%d" % i), "wb") as f:
            f.write(b"x" * 4096)
    st = img.unmount().stderr()
    m = re.search(r":\s+reads (\d+) \((\d+) bytes\)", st)
    assert m, st
    reads, nbytes = int(m.group(1)), int(m.group(2))
    assert nbytes < 2000 * 4096, st            # not the whole NAT
    assert reads < 2000, st                    # (the SIT: about 600 blocks)
    p = img.mount(options=["rw"])
    assert sorted(os.listdir(p)) == sorted("f%d" % i for i in range(50))
    for i in range(50, 100):
        with open(os.path.join(p, "f%d" % i), "wb") as f:
            f.write(b"y" * 4096)
    inos = {os.stat(os.path.join(p, "f%d" % i)).st_ino for i in range(100)}
    assert len(inos) == 100
    img.finish()
