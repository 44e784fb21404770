"""Atomic writes through the mount (F2FS_IOC_START_ATOMIC_WRITE,
START_ATOMIC_REPLACE, COMMIT_ATOMIC_WRITE, ABORT_ATOMIC_WRITE): Debian's
f2fs_io (atomic_commit, atomic_abort) and ioctls of our own.  Between start
and commit the writes are seen by readers but not by the disk: a crash, an
abort or the writer's close leaves the file as before; after the commit it
is all new.  fsck.f2fs after every test."""

import errno
import fcntl
import os
import re
import struct
import subprocess

import pytest

import fsutil
from test_ioctl import F2FS, GC_RANGE, GET_FEATURES, WRITE_CHECKPOINT, _ioc, f2fs_io, ioctl_err
from test_keys import fusectl  # noqa: F401
from test_write import MiB, blob, rwimage, sha  # noqa: F401

NO_PERIODIC = "checkpoint_interval=3600"
BLK = 4096
START = _ioc(0, F2FS, 1, 0)
COMMIT = _ioc(0, F2FS, 2, 0)
ABORT = _ioc(0, F2FS, 5, 0)
REPLACE = _ioc(0, F2FS, 25, 0)


def read_all(path):
    with open(path, "rb") as f:
        return f.read()


def fresh_read(fd, n, off=0):
    """Read through the daemon, not the kernel's cached pages."""
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    return os.pread(fd, n, off)


def put(path, data, sync=False):
    with open(path, "wb") as f:
        f.write(data)
        if sync:
            f.flush()
            os.fsync(f.fileno())


def checkpoint(mnt):
    fd = os.open(mnt, os.O_RDONLY)
    try:
        fcntl.ioctl(fd, WRITE_CHECKPOINT)
    finally:
        os.close(fd)


def test_f2fs_io_commit_and_abort(rwimage):
    """f2fs_io write ... atomic_commit replaces the data at once;
    atomic_abort leaves the file as it was; GET_FEATURES says atomic_write."""
    img = rwimage(options=(NO_PERIODIC,))
    p = img.mount()
    f = os.path.join(p, "db")
    old = blob(5 * BLK + 100, 1)
    put(f, old)
    fd = os.open(p, os.O_RDONLY)
    feat = int.from_bytes(fcntl.ioctl(fd, GET_FEATURES, bytes(4)), "little")
    os.close(fd)
    assert feat & 0x0004, hex(feat)
    # 3 chunks of 2 blocks from chunk 1 on: bytes 8 KiB..32 KiB, file grows to 32 KiB
    f2fs_io("write", 2, 1, 3, "inc_num", "atomic_commit", f)
    new = read_all(f)
    assert len(new) == 8 * BLK
    assert new[:2 * BLK] == old[:2 * BLK]
    assert new[2 * BLK:] != old[2 * BLK:2 * BLK + len(new)]
    assert new[2 * BLK:2 * BLK + 4] == (0).to_bytes(4, "little")
    assert new[4 * BLK:4 * BLK + 4] == (1).to_bytes(4, "little")
    r = f2fs_io("write", 1, 0, 4, "rand", "atomic_abort", f)
    assert "Written" in r.stdout
    assert read_all(f) == new
    img.unmount()
    fsutil.fsck_check(img.image)
    p = img.mount()
    assert read_all(os.path.join(p, "db")) == new
    img.finish()


def test_ioctls_in_progress_commit(rwimage):
    """Pieces written between start and commit read back through the same
    handle (and any other) at once, the size too; the disk keeps the old
    file until the commit, even across a checkpoint; a second start changes
    nothing; fallocate is refused meanwhile."""
    img = rwimage(options=(NO_PERIODIC,))
    p = img.mount()
    f = os.path.join(p, "db")
    old = blob(3 * BLK + 10, 2)
    put(f, old)
    fd = os.open(f, os.O_RDWR)
    fcntl.ioctl(fd, START)
    exp = bytearray(old)
    for off, n, seed in [(100, 50, 3), (BLK - 7, 20, 4), (5 * BLK + 3, BLK, 5), (0, 1, 6)]:
        d = blob(n, seed)
        os.pwrite(fd, d, off)
        if off + n > len(exp):
            exp.extend(bytes(off + n - len(exp)))
        exp[off:off + n] = d
        assert fresh_read(fd, len(exp) + 10) == bytes(exp)
    assert os.fstat(fd).st_size == len(exp)
    assert read_all(f) == bytes(exp)
    fcntl.ioctl(fd, START)           # again: nothing changes
    assert fresh_read(fd, len(exp)) == bytes(exp)
    # a child that inherits the descriptor and closes it leaves the write alone
    subprocess.run(["true"], pass_fds=(fd,), check=True)
    assert fresh_read(fd, len(exp)) == bytes(exp)
    with pytest.raises(OSError) as e:
        os.posix_fallocate(fd, 0, 10 * BLK)
    assert e.value.errno == errno.EINVAL
    checkpoint(p)
    fcntl.ioctl(fd, COMMIT)
    assert fresh_read(fd, len(exp) + 10) == bytes(exp)
    # after the commit the file is a plain one again
    os.posix_fallocate(fd, 0, 10 * BLK)
    os.close(fd)
    img.unmount()
    fsutil.fsck_check(img.image)
    p = img.mount()
    got = read_all(os.path.join(p, "db"))
    assert got[:len(exp)] == bytes(exp) and got[len(exp):] == bytes(len(got) - len(exp))
    img.finish()


def test_killed_writer_aborts_while_others_hold_the_file(rwimage):
    """A writer killed inside its atomic write drops it at once, as the
    kernel's f2fs_file_flush does for a task that exits, even while another
    process keeps the file open for writing: nobody can go on seeing, or
    commit, a dead transaction."""
    img = rwimage(options=(NO_PERIODIC,))
    p = img.mount()
    f = os.path.join(p, "db")
    old = blob(5 * BLK + 3, 11)
    put(f, old)
    keep = os.open(f, os.O_RDWR)         # the other writer
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            fd = os.open(f, os.O_RDWR)
            fcntl.ioctl(fd, START)
            os.pwrite(fd, blob(2 * BLK, 12), BLK)
            os.write(w, b"x")
            while True:
                os.pause()
        finally:
            os._exit(1)
    os.close(w)
    assert os.read(r, 1) == b"x"
    os.close(r)
    os.kill(pid, 9)
    os.waitpid(pid, 0)
    # had the dead write stayed, this commit through the other handle would
    # make it durable (a commit without an atomic write is an fsync)
    fcntl.ioctl(keep, COMMIT)
    assert fresh_read(keep, len(old) + 1) == old
    os.close(keep)
    img.unmount()
    fsutil.fsck_check(img.image)
    p = img.mount()
    assert read_all(os.path.join(p, "db")) == old
    img.finish()


@pytest.mark.parametrize("how", ["abort", "close"])
def test_abort_restores(rwimage, how):
    """Abort and the writer's close drop the write: content and size as
    before the start, a truncate inside the write included."""
    img = rwimage(options=(NO_PERIODIC,))
    p = img.mount()
    f = os.path.join(p, "db")
    old = blob(300 * BLK + 77, 7)        # past the inode's own slots
    put(f, old)
    fd = os.open(f, os.O_RDWR)
    fcntl.ioctl(fd, START)
    os.pwrite(fd, blob(2 * BLK, 8), 10 * BLK + 5)
    os.ftruncate(fd, 20 * BLK + 9)
    os.pwrite(fd, blob(100, 9), 30 * BLK)
    assert os.fstat(fd).st_size == 30 * BLK + 100
    got = fresh_read(fd, 40 * BLK)
    assert got[20 * BLK + 9:30 * BLK] == bytes(10 * BLK - 9)   # the truncate cut it
    if how == "abort":
        fcntl.ioctl(fd, ABORT)
        assert fresh_read(fd, len(old) + 1) == old
    os.close(fd)
    # the write is gone when close returns (the release comes later)
    fd = os.open(f, os.O_RDWR)
    assert fresh_read(fd, len(old) + 1) == old
    os.posix_fallocate(fd, 0, BLK)
    os.close(fd)
    assert os.stat(f).st_size == len(old)
    assert read_all(f) == old
    img.unmount()
    fsutil.fsck_check(img.image)
    p = img.mount()
    assert read_all(os.path.join(p, "db")) == old
    img.finish()


def test_truncate_inside_commit(rwimage):
    """A truncate inside the write is part of it: committed, the file is
    cut and grown again with zeros where its old data was."""
    img = rwimage(options=(NO_PERIODIC,))
    p = img.mount()
    f = os.path.join(p, "db")
    old = blob(40 * BLK, 10)
    put(f, old)
    fd = os.open(f, os.O_RDWR)
    fcntl.ioctl(fd, START)
    os.ftruncate(fd, 5 * BLK + 300)
    os.pwrite(fd, b"tail", 12 * BLK)
    exp = old[:5 * BLK + 300] + bytes(12 * BLK - (5 * BLK + 300)) + b"tail"
    assert fresh_read(fd, 50 * BLK) == exp
    fcntl.ioctl(fd, COMMIT)
    assert fresh_read(fd, 50 * BLK) == exp
    os.close(fd)
    img.unmount()
    fsutil.fsck_check(img.image)
    p = img.mount()
    assert read_all(os.path.join(p, "db")) == exp
    img.finish()


@pytest.mark.parametrize("end", ["commit", "abort"])
def test_replace(rwimage, end):
    """START_ATOMIC_REPLACE: the file reads as empty at once; committed, it
    is what was written (holes where nothing was), the old blocks freed."""
    img = rwimage(options=(NO_PERIODIC,))
    p = img.mount()
    f = os.path.join(p, "db")
    old = blob(600 * BLK, 11)
    put(f, old)
    free_before = os.statvfs(p).f_bfree
    fd = os.open(f, os.O_RDWR)
    fcntl.ioctl(fd, REPLACE)
    assert os.fstat(fd).st_size == 0
    assert fresh_read(fd, BLK) == b""
    os.pwrite(fd, blob(BLK, 12), 2 * BLK)
    os.pwrite(fd, blob(10, 13), 3 * BLK + 1)
    exp = bytes(2 * BLK) + blob(BLK, 12) + b"\0" + blob(10, 13)
    assert fresh_read(fd, 10 * BLK) == exp
    fcntl.ioctl(fd, COMMIT if end == "commit" else ABORT)
    os.close(fd)
    want = exp if end == "commit" else old
    assert read_all(f) == want
    if end == "commit":
        assert os.statvfs(p).f_bfree >= free_before + 590
    img.unmount()
    fsutil.fsck_check(img.image)
    p = img.mount()
    assert read_all(os.path.join(p, "db")) == want
    img.finish()


def test_checks(rwimage):
    """As the kernel's: a handle open for writing (EBADF), a regular file;
    commit without start is an fsync; abort without start does nothing."""
    img = rwimage(options=(NO_PERIODIC,))
    p = img.mount()
    f = os.path.join(p, "db")
    put(f, b"x" * 100)
    fd = os.open(f, os.O_RDONLY)
    for cmd in (START, REPLACE, COMMIT, ABORT):
        assert ioctl_err(fd, cmd, 0) == errno.EBADF
    os.close(fd)
    fd = os.open(f, os.O_WRONLY)
    fcntl.ioctl(fd, COMMIT)
    fcntl.ioctl(fd, ABORT)
    os.close(fd)
    assert read_all(f) == b"x" * 100
    img.unmount()
    fsutil.fsck_check(img.image)
    img.mount()
    img.finish()


@pytest.mark.parametrize("when", ["before-commit", "after-commit"])
def test_crash(rwimage, when):
    """SIGKILL the daemon inside the write (after a checkpoint that holds
    the COW inode as an orphan) or after the commit returned (its dnodes
    logged for roll-forward, only the last one marked): after the remount
    the file is all old or all new."""
    img = rwimage(options=(NO_PERIODIC,))
    p = img.mount()
    f = os.path.join(p, "db")
    old = blob(1100 * BLK + 5, 14)      # the inode's slots and a direct node
    put(f, old)
    checkpoint(p)
    fd = os.open(f, os.O_RDWR)
    fcntl.ioctl(fd, START)
    new = bytearray(old)
    for off in range(0, 1300 * BLK, 97 * BLK + 123):
        d = blob(3000, off)
        os.pwrite(fd, d, off)
        if off + len(d) > len(new):
            new.extend(bytes(off + len(d) - len(new)))
        new[off:off + len(d)] = d
    checkpoint(p)
    os.fsync(fd)                     # stores the old file: the commit is the durable point
    if when == "after-commit":
        fcntl.ioctl(fd, COMMIT)
    img.crash()
    try:
        os.close(fd)
    except OSError:
        pass        # the close's FLUSH finds no daemon
    p = img.mount()
    want = bytes(new) if when == "after-commit" else old
    assert read_all(os.path.join(p, "db")) == want
    img.unmount()
    fsutil.fsck_check(img.image)
    p = img.mount()
    assert read_all(os.path.join(p, "db")) == want
    img.finish()


def test_encrypted_and_compressed(rwimage, fixtures_dir, fusectl):  # noqa: F811
    """In an encrypted directory the COW blocks are the file's ciphertext
    (its key, its DUNs): a partial block starts from the decrypted old one
    and the committed blocks read back after a remount.  A compressed file
    with blocks refuses the start (EINVAL); an empty one gives up its
    compression, as the kernel's f2fs_disable_compressed_file."""
    key = "key_file=" + os.path.join(fixtures_dir, "crypt.key")
    img = rwimage(features="encrypt,extra_attr,compression",
                  options=(NO_PERIODIC, key, "compress_extension=cz"))
    p = img.mount()
    top = os.path.join(p, "crypt")
    os.mkdir(top)
    fsutil.run([fusectl, "set_policy", "eeec05e6ebadb5814c861095d859e167", top], check=True)
    f = os.path.join(top, "db")
    old = blob(20 * BLK + 333, 21)
    put(f, old)
    fd = os.open(f, os.O_RDWR)
    fcntl.ioctl(fd, START)
    exp = bytearray(old)
    for off, n, seed in [(5, 17, 22), (3 * BLK - 2, 9, 23), (20 * BLK + 300, 5000, 24)]:
        d = blob(n, seed)
        os.pwrite(fd, d, off)
        if off + n > len(exp):
            exp.extend(bytes(off + n - len(exp)))
        exp[off:off + n] = d
    assert fresh_read(fd, len(exp) + 1) == bytes(exp)
    fcntl.ioctl(fd, COMMIT)
    os.close(fd)

    full = os.path.join(p, "full.cz")
    put(full, blob(40000, 25))
    fd = os.open(full, os.O_RDWR)
    assert ioctl_err(fd, START, 0) == errno.EINVAL
    os.close(fd)
    empty = os.path.join(p, "empty.cz")
    put(empty, b"")
    fd = os.open(empty, os.O_RDWR)
    flags = int.from_bytes(fcntl.ioctl(fd, 0x80086601, bytes(8))[:4], "little")  # GETFLAGS
    assert flags & 0x4, hex(flags)                      # FS_COMPR_FL
    fcntl.ioctl(fd, START)
    flags = int.from_bytes(fcntl.ioctl(fd, 0x80086601, bytes(8))[:4], "little")
    assert not flags & 0x4, hex(flags)
    os.pwrite(fd, blob(3 * BLK, 26), 0)
    fcntl.ioctl(fd, COMMIT)
    os.close(fd)
    img.unmount()
    fsutil.fsck_check(img.image)
    p = img.mount()
    assert read_all(os.path.join(p, "crypt", "db")) == bytes(exp)
    assert read_all(os.path.join(p, "empty.cz")) == blob(3 * BLK, 26)
    img.finish()


def test_session_end_drops(rwimage):
    """The FUSE connection aborted while an atomic write is open (no close,
    no release reaches the daemon): unmounting drops the write, the daemon
    exits cleanly, and the file is as before."""
    img = rwimage(options=(NO_PERIODIC,))
    p = img.mount()
    f = os.path.join(p, "db")
    old = blob(10 * BLK + 1, 31)
    put(f, old)
    fd = os.open(f, os.O_RDWR)
    fcntl.ioctl(fd, START)
    os.pwrite(fd, blob(3 * BLK, 32), 2 * BLK + 7)
    conn = "/sys/fs/fuse/connections/%d" % os.minor(os.stat(p).st_dev)
    if not os.path.isdir(conn):
        fsutil.run(["mount", "-t", "fusectl", "none", "/sys/fs/fuse/connections"])
    if not os.path.isdir(conn):
        pytest.skip("no fusectl file system to abort the connection with")
    with open(conn + "/abort", "w") as a:
        a.write("1")
    try:
        os.close(fd)
    except OSError:
        pass
    img.unmount()
    fsutil.fsck_check(img.image)
    p = img.mount()
    assert read_all(os.path.join(p, "db")) == old
    img.finish()


def test_cleaning_moves_cow_blocks(rwimage, fusectl):  # noqa: F811
    """Cleaning every section moves the COW inode's blocks too (they are an
    orphan's, owned through its nodes): the write reads the same before and
    after, and commits what was written."""
    img = rwimage(options=(NO_PERIODIC,))
    p = img.mount()
    f = os.path.join(p, "db")
    old = blob(300 * BLK, 41)
    put(f, old)
    fd = os.open(f, os.O_RDWR)
    fcntl.ioctl(fd, START)
    exp = bytearray(old)
    for off in range(7, 300 * BLK, 3 * BLK + 11):
        d = blob(100, off)
        os.pwrite(fd, d, off)
        exp[off:off + 100] = d
    put(os.path.join(p, "filler"), blob(3 * MiB, 42), sync=True)   # the data log moves on
    os.unlink(os.path.join(p, "filler"))
    checkpoint(p)
    with open(img.image, "rb") as im:
        sb = im.read(2048)[1024:]
    main = struct.unpack_from("<I", sb, 92)[0]
    seg_main = struct.unpack_from("<I", sb, 68)[0]
    assert ioctl_err(fd, GC_RANGE, struct.pack("IxxxxQQ", 1, main, seg_main * 512 - 1)) == 0
    st = fsutil.run([fusectl, "status", p]).stdout
    moved = int(re.search(r"- data blocks : (\d+)", st).group(1))
    assert moved >= 100, st                     # the COW blocks among them
    assert fresh_read(fd, len(exp) + 1) == bytes(exp)
    fcntl.ioctl(fd, COMMIT)
    os.close(fd)
    img.unmount()
    fsutil.fsck_check(img.image)
    p = img.mount()
    assert read_all(os.path.join(p, "db")) == bytes(exp)
    img.finish()
