"""POSIX rules the kernel leaves to a FUSE server, checked as the kernel's
own file systems behave: direct and buffered I/O see the same data, one
mount per image, set-ID bits cleared by writes and ACLs of other users,
ctime after chattr, and access times (relatime, strictatime, noatime).

Rules about other users run the probes as nobody (setpriv) through an
allow_other mount under a world-searchable folder.
"""

import contextlib
import ctypes
import mmap
import os
import shutil
import stat
import subprocess
import tempfile
import time

import pytest

import fsutil
from test_write import (LIBC, FALLOC_FL_KEEP_SIZE, FALLOC_FL_PUNCH_HOLE,  # noqa: F401
                        FALLOC_FL_ZERO_RANGE, MiB, RWImage, expect, read_file, rwimage, sha,
                        write_file)

root_only = pytest.mark.skipif(os.geteuid() != 0, reason="needs root to switch users")

NOBODY = 65534


def run_as(uid, gid, code):
    """Run Python `code` as uid:gid with no supplementary groups; its stdout."""
    r = subprocess.run(["setpriv", "--reuid", str(uid), "--regid", str(gid), "--clear-groups",
                        "/usr/bin/python3", "-c", code], timeout=120, stdin=subprocess.DEVNULL,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert r.returncode == 0, r.stderr
    return r.stdout


@pytest.fixture
def open_rwimage(f2fs_fuse):
    """Like rwimage, in a folder every user can search (for allow_other probes)."""
    import pathlib
    top = tempfile.mkdtemp(prefix="f2fs-fuse-posix-", dir="/tmp")
    os.chmod(top, 0o755)
    made = []

    def make(**kw):
        img = RWImage(f2fs_fuse, pathlib.Path(top), **kw)
        made.append(img)
        return img

    yield make
    for img in made:
        img.close()
    shutil.rmtree(top, ignore_errors=True)


def mode_of(path):
    return stat.S_IMODE(os.stat(path).st_mode)


# ---------------------------------------------------------------- direct I/O

SYS_io_setup, SYS_io_destroy, SYS_io_getevents, SYS_io_submit = 206, 207, 208, 209
LIBC.syscall.restype = ctypes.c_long


class IOCB(ctypes.Structure):
    _fields_ = [("data", ctypes.c_uint64), ("key", ctypes.c_uint32),
                ("rw_flags", ctypes.c_int32), ("opcode", ctypes.c_uint16),
                ("reqprio", ctypes.c_int16), ("fildes", ctypes.c_uint32),
                ("buf", ctypes.c_uint64), ("nbytes", ctypes.c_uint64),
                ("offset", ctypes.c_int64), ("reserved2", ctypes.c_uint64),
                ("flags", ctypes.c_uint32), ("resfd", ctypes.c_uint32)]


class IOEvent(ctypes.Structure):
    _fields_ = [("data", ctypes.c_uint64), ("obj", ctypes.c_uint64),
                ("res", ctypes.c_int64), ("res2", ctypes.c_int64)]


IOCB_CMD_PWRITE = 1


def aio_pwrite(ctx, fd, buf, off):
    """One asynchronous write through io_submit, waited for with io_getevents."""
    cb = IOCB(opcode=IOCB_CMD_PWRITE, fildes=fd, nbytes=len(buf), offset=off,
              buf=ctypes.addressof(ctypes.c_char.from_buffer(buf)))
    cbs = (ctypes.POINTER(IOCB) * 1)(ctypes.pointer(cb))
    assert LIBC.syscall(SYS_io_submit, ctx, 1, cbs) == 1, os.strerror(ctypes.get_errno())
    ev = IOEvent()
    assert LIBC.syscall(SYS_io_getevents, ctx, 1, 1, ctypes.byref(ev), None) == 1
    return ev.res


@pytest.mark.skipif(os.uname().machine != "x86_64", reason="AIO syscall numbers are x86-64's")
def test_async_direct_write_then_buffered_read(rwimage):
    """An O_DIRECT write through AIO, then a buffered read of the range,
    with buffered readers racing all along: the read sees the new data
    (Linux drops cached pages only after a synchronous direct write)."""
    size = 640 * 1024
    img = rwimage()
    p = img.mount()
    f = os.path.join(p, "dio")
    pats = []
    for byte in (0x55, 0xAA):
        m = mmap.mmap(-1, size)          # page-aligned, as O_DIRECT wants
        m.write(bytes([byte]) * size)
        pats.append(m)
    fd = os.open(f, os.O_RDWR | os.O_CREAT | os.O_DIRECT, 0o644)
    os.ftruncate(fd, size)
    os.pwrite(fd, pats[0], 0)
    os.fsync(fd)
    os.close(fd)
    flag = os.path.join(str(img.dir), "readers-run")
    write_file(flag, b"")
    reader = ("import os\n"
              "while os.path.exists(%r):\n"
              "    fd = os.open(%r, os.O_RDONLY)\n"
              "    os.pread(fd, %d, 0)\n"
              "    os.close(fd)\n") % (flag, f, size)
    readers = [subprocess.Popen(["/usr/bin/python3", "-c", reader]) for _ in range(2)]
    ctx = ctypes.c_ulong(0)
    assert LIBC.syscall(SYS_io_setup, 1, ctypes.byref(ctx)) == 0
    stale = []
    try:
        deadline = time.monotonic() + 10
        for i in range(400):
            want = pats[(i + 1) % 2]
            fd = os.open(f, os.O_RDWR | os.O_DIRECT)
            try:
                assert aio_pwrite(ctx, fd, want, 0) == size
            finally:
                os.close(fd)
            if read_file(f) != bytes(want):
                stale.append(i)
                break
            if time.monotonic() > deadline:
                break
    finally:
        os.unlink(flag)
        for r in readers:
            r.wait(timeout=60)
        LIBC.syscall(SYS_io_destroy, ctx)
    assert not stale, "a buffered read after write %d returned the old data" % stale[0]
    # the same through a synchronous O_DIRECT write, and a direct read of a buffered one
    fd = os.open(f, os.O_RDWR | os.O_DIRECT)
    os.pwrite(fd, pats[0], 0)
    os.close(fd)
    assert read_file(f) == bytes(pats[0])
    with open(f, "r+b") as fh:
        fh.write(b"buffered")
    fd = os.open(f, os.O_RDONLY | os.O_DIRECT)
    got = mmap.mmap(-1, 4096)
    assert os.preadv(fd, [got], 0) == 4096
    os.close(fd)
    assert got[:9] == b"buffered" + bytes([0x55])
    want = b"buffered" + bytes(pats[0])[8:]
    img.finish(expect({"dio": {"content": sha(want)}}))


# ---------------------------------------------------------------- one mount per image

def try_mount(binary, image, mnt, options):
    """Start another daemon on `image` (see refused)."""
    os.makedirs(mnt, exist_ok=True)
    argv = [binary, "-f", "-o", ",".join(options), image, mnt]
    return subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)


def refused(proc, mnt):
    """Assert that the daemon started by try_mount gave up; its output."""
    deadline = time.monotonic() + 60
    while proc.poll() is None and not fsutil.is_fuse_mount(mnt) and time.monotonic() < deadline:
        time.sleep(0.05)
    mounted = fsutil.is_fuse_mount(mnt)
    if mounted:
        fsutil.run(["fusermount3", "-u", mnt])
    out = proc.communicate(timeout=60)[0]
    assert not mounted and proc.returncode != 0, "a second mount was allowed:\n" + out
    assert "in use by another mount or program" in out, out
    return out


@pytest.mark.slow
def test_one_writer_per_image(rwimage, f2fs_fuse):
    """A read-write mount has its image to itself: a second mount, read-write
    or read-only, is refused with a clear message; read-only mounts share.
    A mount started right after an unmount waits for the old daemon's final
    checkpoint instead of reading it half-written."""
    img = rwimage()
    p = img.mount()
    write_file(os.path.join(p, "first"), b"1")
    other = str(img.dir / "other")
    rw2 = try_mount(f2fs_fuse, img.image, other + "-rw", ["rw"])
    ro2 = try_mount(f2fs_fuse, img.image, other + "-ro", ["ro"])
    assert "read-write mount needs it to itself" in refused(rw2, other + "-rw")
    assert "shares an image file only with read-only mounts" in refused(ro2, other + "-ro")
    assert read_file(os.path.join(p, "first")) == b"1"

    # much to write at unmount, and a new mount at once
    for i in range(300):
        write_file(os.path.join(p, "f%03d" % i), b"x" * (i * 37))
    old = img.m
    fsutil.run(["fusermount3", "-u", old.path], check=True)
    img.m = None
    p = img.mount()
    old.unmount()
    old.check_exit()
    assert len(os.listdir(p)) == 301
    img.unmount()
    fsutil.fsck_check(img.image)

    # read-only mounts share the image; a writer is refused beside them
    p = img.mount(ro=True)
    with fsutil.mounted(f2fs_fuse, img.image, other + "-ro2", ["ro"]) as m2:
        assert sorted(os.listdir(m2.path)) == sorted(os.listdir(p))
        rw2 = try_mount(f2fs_fuse, img.image, other + "-rw2", ["rw"])
        refused(rw2, other + "-rw2")
    img.unmount()
    img.mount()
    img.finish(expect({"first": {"content": sha(b"1")}}))


@pytest.mark.slow
@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("losetup"),
                    reason="needs root and losetup for a loop device")
def test_block_device_claimed_exclusively(rwimage, f2fs_fuse):
    """A block device is opened with O_EXCL, as the kernel claims a device it
    mounts: no second mount of it, read-only or not."""
    img = rwimage()
    r = fsutil.run(["losetup", "-f", "--show", img.image])
    if r.returncode != 0:
        pytest.skip("no loop device: " + r.stdout.strip())
    dev = r.stdout.strip()
    try:
        with fsutil.mounted(f2fs_fuse, dev, str(img.dir / "dev-rw"), ["rw"]) as m:
            write_file(os.path.join(m.path, "on-device"), b"d")
            ro2 = try_mount(f2fs_fuse, dev, str(img.dir / "dev-ro"), ["ro"])
            assert "a block device with nothing" in refused(ro2, str(img.dir / "dev-ro"))
    finally:
        fsutil.run(["losetup", "-d", dev])
    fsutil.fsck_check(img.image)


# ---------------------------------------------------------------- set-ID bits

SETID_CASES = [
    # (chmod, after a change by nobody), as generic/683-685 expect (Linux >= 6.2)
    (0o6666, 0o666),     # set-group-ID without group-exec: nobody is not in group 0
    (0o6676, 0o676),
    (0o6766, 0o766),
    (0o6777, 0o777),
    (0o2676, 0o676),
    (0o2777, 0o777),
]

CHANGES = {
    "write": "os.pwrite(fd, b'Y' * 4096, 65536)",
    "truncate": "os.ftruncate(fd, 100000)",
    "falloc": "fallocate(fd, 0, 65536, 65536)",
    "fpunch": "fallocate(fd, %d, 65536, 65536)" % (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE),
    "fzero": "fallocate(fd, %d, 65536, 65536)" % FALLOC_FL_ZERO_RANGE,
}

PROBE = """
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.fallocate64.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int64, ctypes.c_int64]
def fallocate(fd, mode, off, length):
    if libc.fallocate64(fd, mode, off, length) != 0:
        raise OSError(ctypes.get_errno(), 'fallocate')
for path, change in %r:
    fd = os.open(path, os.O_RDWR)
    exec(change)
    os.close(fd)
"""


@root_only
def test_changes_by_other_users_clear_setid(open_rwimage):
    """A write, truncate, fallocate, hole punch or zeroing by a user without
    CAP_FSETID clears set-user-ID, and set-group-ID when the file is
    group-executable or the user is not in its group; root keeps both, and
    so does a member of the group for a file without group-exec."""
    img = open_rwimage(options=("allow_other",))
    p = img.mount()
    os.mkdir(os.path.join(p, "d"))
    os.chmod(os.path.join(p, "d"), 0o777)
    jobs, want = [], {}
    for verb, change in CHANGES.items():
        for before, after in SETID_CASES:
            name = "d/%s-%o" % (verb, before)
            path = os.path.join(p, name)
            write_file(path, b"X" * 196608)
            os.chmod(path, before)
            jobs.append((path, change))
            want[name] = after
        # a member of the file's group keeps set-group-ID on a non-executable file
        name = "d/%s-member" % verb
        path = os.path.join(p, name)
        write_file(path, b"X" * 196608)
        os.chown(path, 0, NOBODY)
        os.chmod(path, 0o2666)
        jobs.append((path, change))
        want[name] = 0o2666
    run_as(NOBODY, NOBODY, PROBE % jobs)
    # root (CAP_FSETID) keeps everything
    for verb, change in CHANGES.items():
        name = "d/%s-root" % verb
        path = os.path.join(p, name)
        write_file(path, b"X" * 196608)
        os.chmod(path, 0o6666)
        fd = os.open(path, os.O_RDWR)
        exec(change, {"os": os, "fd": fd, "fallocate": _fallocate})
        os.close(fd)
        want[name] = 0o6666
    got = {n: mode_of(os.path.join(p, n)) for n in want}
    assert got == want, {n: (oct(got[n]), oct(want[n])) for n in want if got[n] != want[n]}
    img.finish(expect({n: {"mode": "%04o" % m} for n, m in want.items()}))


def _fallocate(fd, mode, off, length):
    if LIBC.fallocate64(fd, mode, off, length) != 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))


@root_only
def test_setfacl_outside_group_clears_sgid(open_rwimage):
    """posix_acl_update_mode: an owner outside the file's group who sets an
    access ACL clears set-group-ID; inside the group it stays (files and
    directories alike), as does a chmod's by the same rule."""
    if not shutil.which("setfacl"):
        pytest.skip("setfacl is not installed")
    img = open_rwimage(options=("allow_other",))
    p = img.mount()
    want = {}
    for kind in ("file", "dir"):
        for who, gid in (("member", 100), ("outsider", 101)):
            name = "%s-%s" % (kind, who)
            path = os.path.join(p, name)
            if kind == "file":
                write_file(path, b"")
            else:
                os.mkdir(path)
            os.chown(path, 100, 100)
            os.chmod(path, 0o2755)
            r = subprocess.run(["setpriv", "--reuid", "100", "--regid", str(gid),
                                "--clear-groups", "setfacl", "-m", "u::rwx,g::rwx,o::rwx", path],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               timeout=60)
            assert r.returncode == 0, r.stdout
            want[name] = 0o2777 if who == "member" else 0o777
    got = {n: mode_of(os.path.join(p, n)) for n in want}
    assert got == want, {n: oct(m) for n, m in got.items()}
    img.finish(expect({n: {"mode": "%04o" % m} for n, m in want.items()}))


# ---------------------------------------------------------------- times

@pytest.mark.skipif(os.geteuid() != 0, reason="chattr needs root here")
def test_chattr_updates_ctime(rwimage):
    """chattr changes ctime, both as stat shows it at once and on disk."""
    img = rwimage()
    p = img.mount()
    write_file(os.path.join(p, "f"), b"")
    img.unmount()
    p = img.mount()
    f = os.path.join(p, "f")
    c1 = os.stat(f).st_ctime_ns
    time.sleep(0.01)
    for flag in ("+A", "-A"):
        assert subprocess.run(["chattr", flag, f]).returncode == 0
    c2 = os.stat(f).st_ctime_ns
    assert c2 > c1
    img.unmount()
    p = img.mount()
    assert os.stat(os.path.join(p, "f")).st_ctime_ns == c2
    img.finish()


def times(path):
    st = os.stat(path)
    return st.st_atime_ns, st.st_mtime_ns, st.st_ctime_ns


def changed(before, after):
    """Which of atime, mtime, ctime differ, as 'YNN'-style text."""
    return "".join("Y" if a != b else "N" for a, b in zip(before, after))


def cat(path):
    with open(path, "rb") as f:
        f.read()


@pytest.mark.skipif(os.geteuid() != 0, reason="chattr +A and remounting need root")
def test_access_times(rwimage, f2fs_fuse):
    """relatime by default (a read updates atime once after each change, a
    listing likewise a directory's), nodiratime, strictatime (every read),
    noatime and chattr +A (none); a read-only mount, also one remounted so,
    never writes one; atimes reach the disk."""
    from test_remount import FROM_MOUNT8, remount
    img = rwimage()
    p = img.mount()
    j = lambda *a: os.path.join(p, *a)   # noqa: E731
    os.mkdir(j("d"))
    write_file(j("d", "f"), b"aaa")     # written data is in the page cache
    t0 = times(j("d", "f"))
    time.sleep(0.01)
    cat(j("d", "f"))
    t1 = times(j("d", "f"))
    assert changed(t0, t1) == "YNN"
    cat(j("d", "f"))
    assert changed(t1, times(j("d", "f"))) == "NNN"
    d0 = times(j("d"))
    os.listdir(j("d"))
    d1 = times(j("d"))
    assert changed(d0, d1) == "YNN"
    os.listdir(j("d"))
    assert changed(d1, times(j("d"))) == "NNN"
    write_file(j("d", "f"), b"bbb")     # a change: due again
    t2 = times(j("d", "f"))
    time.sleep(0.01)
    cat(j("d", "f"))
    assert changed(t2, times(j("d", "f"))) == "YNN"
    write_file(j("noatime"), b"A")
    assert subprocess.run(["chattr", "+A", j("noatime")]).returncode == 0
    n0 = times(j("noatime"))
    cat(j("noatime"))
    assert changed(n0, times(j("noatime"))) == "NNN"
    write_file(j("d", "ro"), b"r")      # due for an update, but not while read-only
    assert remount(f2fs_fuse, img.image, p, "ro," + FROM_MOUNT8).returncode == 0
    r0 = times(j("d", "ro"))
    time.sleep(0.01)
    cat(j("d", "ro"))
    assert remount(f2fs_fuse, img.image, p, "rw," + FROM_MOUNT8).returncode == 0
    seen = times(j("d", "f"))
    img.unmount()

    p = img.mount(options=["strictatime", "nodiratime"])
    assert times(j("d", "f")) == seen, "atime did not reach the disk"
    assert times(j("d", "ro")) == r0, "a read while remounted read-only set the atime"
    s0 = times(j("d", "f"))
    for _ in range(2):
        time.sleep(0.01)
        cat(j("d", "f"))
        s1 = times(j("d", "f"))
        assert changed(s0, s1) == "YNN"
        s0 = s1
    d0 = times(j("d"))
    time.sleep(0.01)
    os.listdir(j("d"))
    assert changed(d0, times(j("d"))) == "NNN"
    img.unmount()

    p = img.mount(options=["noatime"])
    write_file(j("d", "g"), b"ccc")
    g0 = times(j("d", "g"))
    time.sleep(0.01)
    cat(j("d", "g"))
    os.listdir(j("d"))
    assert changed(g0, times(j("d", "g"))) == "NNN"
    img.unmount()

    p = img.mount(options=["strictatime"], ro=True)
    r0 = times(j("d", "g")), times(j("d"))
    time.sleep(0.01)
    cat(j("d", "g"))
    os.listdir(j("d"))
    assert (times(j("d", "g")), times(j("d"))) == r0
    img.unmount()
    img.mount()
    img.finish()
