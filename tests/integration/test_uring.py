"""FUSE over io_uring (fuse/uring.c, -o uring).

Requests come through one io_uring queue per CPU where the kernel offers it
(the fuse module's enable_uring parameter, Linux 6.14 or later); where it
does not, -o uring says why and the default loop serves.  Every mount here
ends with fsck.f2fs, and the daemon's io_stats must show that the requests
did come through the rings."""

import hashlib
import os
import re
import subprocess

import pytest

import fsutil
from test_loop import concurrent_callers, lone_caller, sigterm_unmounts
from test_write import MiB, read_file, rwimage, write_file  # noqa: F401

PARAM = "/sys/module/fuse/parameters/enable_uring"


def set_param(value):
    with open(PARAM, "w") as f:
        f.write(value)


@pytest.fixture
def enable_uring():
    """enable_uring set to Y for the test (it is read at each mount's INIT)
    and put back as it was after."""
    if not os.path.exists(PARAM):
        pytest.skip("this kernel's fuse module has no io_uring support (Linux 6.14+)")
    if os.geteuid() != 0:
        pytest.skip("setting the fuse module's enable_uring parameter needs root")
    with open(PARAM) as f:
        before = f.read().strip()
    set_param("Y")
    yield set_param
    set_param(before)


def ring_requests(stderr):
    m = re.search(r"through io_uring: (\d+) requests \((\d+) queues, (\d+) threads\)", stderr)
    assert m, "no io_uring line in the daemon's statistics:\n" + stderr
    return int(m.group(1)), int(m.group(2)), int(m.group(3))


def test_requests_come_through_the_rings(rwimage, enable_uring):
    """A lone caller, eight at once, large files and a listing, answered
    right, nearly all of it through the rings."""
    img = rwimage(size=256 * MiB, options=["uring", "io_stats"])
    p = img.mount()
    lone_caller(p, "a")
    concurrent_callers(p)
    big = os.urandom(3 * MiB + 5)
    write_file(os.path.join(p, "big"), big)
    os.mkdir(os.path.join(p, "x"))
    os.setxattr(os.path.join(p, "x"), "user.k", b"v" * 3000)
    assert os.getxattr(os.path.join(p, "x"), "user.k") == b"v" * 3000
    m = img.unmount()
    n, queues, threads = ring_requests(m.stderr())
    assert n > 5000, m.stderr()
    assert queues >= os.cpu_count()  # one per possible CPU
    assert threads >= 2 * queues
    assert "error" not in m.stderr().lower(), m.stderr()
    fsutil.fsck_check(img.image)
    p = img.mount()
    assert hashlib.sha256(read_file(os.path.join(p, "big"))).digest() == \
        hashlib.sha256(big).digest()
    assert len(os.listdir(os.path.join(p, "lone-a"))) == 150
    img.unmount()


DIRECT_WRITER = r"""
import mmap, os, sys
path, secs = sys.argv[1], float(sys.argv[2])
buf = mmap.mmap(-1, 65536)
fd = os.open(path, os.O_WRONLY | os.O_DIRECT)
import time
end = time.time() + secs
i = 0
while time.time() < end:
    buf[:] = bytes([i % 251]) * 65536
    os.pwrite(fd, buf, (i % 16) * 65536)
    i += 1
os.close(fd)
"""

BUFFERED_READER = r"""
import os, sys, time
path, secs = sys.argv[1], float(sys.argv[2])
end = time.time() + secs
while time.time() < end:
    with open(path, "rb") as f:
        assert len(f.read()) == 16 * 65536
    os.posix_fadvise(os.open(path, os.O_RDONLY), 0, 0, os.POSIX_FADV_DONTNEED)
"""


def test_a_handler_waiting_on_another_request(rwimage, enable_uring):
    """O_DIRECT writes drop the kernel's cached pages of their range, and
    that waits for pages a buffered READ holds locked: the READ must be
    served by another thread of the same CPU's queue while the WRITE's
    handler waits.  All on one CPU, so every request is on one queue."""
    img = rwimage(size=128 * MiB, options=["uring", "io_stats"])
    p = img.mount()
    f = os.path.join(p, "shared")
    write_file(f, b"\0" * (16 * 65536))
    cpu = sorted(os.sched_getaffinity(0))[0]
    procs = [subprocess.Popen(["taskset", "-c", str(cpu), "/usr/bin/python3", "-c", code, f, "4"])
             for code in (DIRECT_WRITER, BUFFERED_READER, BUFFERED_READER)]
    for pr in procs:
        assert pr.wait(timeout=120) == 0
    m = img.unmount()
    n, _, _ = ring_requests(m.stderr())
    assert n > 100, m.stderr()
    fsutil.fsck_check(img.image)


def test_signal_ends_the_ring_loop(rwimage, enable_uring):
    """SIGTERM unmounts cleanly right after requests and when idle (the
    ring threads look for the loop's end every 200 ms)."""
    sigterm_unmounts(rwimage(size=64 * MiB, options=["uring"]), (0.0, 0.6))


def test_without_the_kernels_offer_the_default_loop_serves(rwimage, enable_uring):
    """enable_uring off: -o uring says why, and the mount works as ever."""
    enable_uring("N")
    img = rwimage(size=64 * MiB, options=["uring", "io_stats"])
    p = img.mount()
    lone_caller(p, "n", n=50)
    m = img.unmount()
    err = m.stderr()
    assert "-o uring: the fuse module's enable_uring parameter is off" in err, err
    assert "through io_uring" not in err, err
    fsutil.fsck_check(img.image)
