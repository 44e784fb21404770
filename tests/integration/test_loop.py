"""The request loop (fuse/loop.c, -o busy_poll=US).

One caller at a time is served by the thread that polls the device; callers
running at once are served by several threads, as by libfuse's loop; and
busy_poll=0 gives libfuse's own loops back.  Every mount here ends with
fsck.f2fs."""

import os
import subprocess
import time

import pytest

import fsutil
from test_write import MiB, read_file, rwimage, write_file  # noqa: F401


def threads_of(pid):
    return len(os.listdir("/proc/%d/task" % pid))


def lone_caller(p, tag, n=300):
    """create, stat, read and unlink n small files, one call at a time"""
    d = os.path.join(p, "lone-" + tag)
    os.mkdir(d)
    for i in range(n):
        write_file(os.path.join(d, "f%d" % i), b"%s-%d" % (tag.encode(), i) * 50)
    for i in range(n):
        assert os.lstat(os.path.join(d, "f%d" % i)).st_size == len(b"%s-%d" % (tag.encode(), i)) * 50
        assert read_file(os.path.join(d, "f%d" % i)) == b"%s-%d" % (tag.encode(), i) * 50
    for i in range(0, n, 2):
        os.unlink(os.path.join(d, "f%d" % i))
    assert len(os.listdir(d)) == n // 2


WORKER = r"""
import os, sys
d, k, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
os.makedirs(d, exist_ok=True)
for r in range(3):
    for i in range(n):
        f = os.path.join(d, "w%d-%d" % (k, i))
        with open(f, "wb") as fh:
            fh.write(bytes([k]) * (4096 + i))
        os.stat(f)
        with open(f, "rb") as fh:
            assert fh.read() == bytes([k]) * (4096 + i), f
    for i in range(0, n, 3):
        os.unlink(os.path.join(d, "w%d-%d" % (k, i)))
        with open(os.path.join(d, "w%d-%d" % (k, i)), "wb") as fh:
            fh.write(b"again")
"""


def concurrent_callers(p, procs=8, n=120):
    d = os.path.join(p, "together")
    ps = [subprocess.Popen(["/usr/bin/python3", "-c", WORKER, d, str(k), str(n)])
          for k in range(procs)]
    for pr in ps:
        assert pr.wait(timeout=600) == 0
    for k in range(procs):
        for i in range(n):
            got = read_file(os.path.join(d, "w%d-%d" % (k, i)))
            assert got == (b"again" if i % 3 == 0 else bytes([k]) * (4096 + i))


@pytest.mark.parametrize("opts", [[], ["busy_poll=0"], ["busy_poll=1000"]],
                         ids=["default", "libfuse-loop", "busy_poll-1000"])
def test_lone_then_concurrent_then_lone_callers(rwimage, opts):
    """A lone caller, eight at once, then a lone caller again: every answer
    right, and callers running at once are served by more than one thread
    (the polling loop's threads grow past those the lone caller needed)."""
    img = rwimage(size=256 * MiB, options=opts)
    p = img.mount()
    pid = img.m.proc.pid
    lone_caller(p, "a")
    before = threads_of(pid)
    concurrent_callers(p)
    grown = threads_of(pid)
    if "busy_poll=0" not in opts:
        # libfuse's loop may have started its threads for the lone caller already
        assert grown >= before + 2, (before, grown)
    lone_caller(p, "b")
    m = img.unmount()
    fsutil.fsck_check(img.image)
    assert "error" not in m.stderr().lower(), m.stderr()


@pytest.mark.parametrize("value", ["1001", "-1", "fast", ""])
def test_bad_busy_poll_value_is_refused(rwimage, tmp_path, value):
    img = rwimage(size=64 * MiB)
    mnt = tmp_path / "bad-mnt"
    mnt.mkdir()
    r = fsutil.run([img.binary, "-f", "-o", "busy_poll=" + value, img.image, str(mnt)])
    assert r.returncode != 0
    assert "busy_poll" in r.stdout, r.stdout
    assert not fsutil.is_fuse_mount(mnt)


def test_signal_ends_a_polling_and_a_sleeping_loop(rwimage):
    """SIGTERM unmounts cleanly while the reading thread polls (right after
    a request) and while it sleeps (idle), as with libfuse's loop."""
    img = rwimage(size=64 * MiB)
    for idle in (0.0, 0.5):
        p = img.mount()
        write_file(os.path.join(p, "f%s" % idle), b"data")
        fd = os.open(p, os.O_RDONLY)
        os.fsync(fd)
        os.close(fd)
        time.sleep(idle)
        img.m.proc.send_signal(15)
        img.m.proc.wait(timeout=60)
        m = img.m
        img.m = None
        assert m.proc.returncode == 0, m.stderr()
        assert not fsutil.is_fuse_mount(p)
        fsutil.fsck_check(img.image)
    p = img.mount(ro=True)
    assert read_file(os.path.join(p, "f0.0")) == b"data"
    assert read_file(os.path.join(p, "f0.5")) == b"data"
    img.unmount()
