"""A full image at the edge: every kind of allocation (data blocks, inodes,
indirect nodes, xattr nodes, inline conversion, fallocate reservations,
cleaning) runs into ENOSPC with 0, 1 and 3 blocks left, and every time the
daemon unmounts cleanly, fsck.f2fs finds nothing to fix, the image mounts
read-write again (the checkpoint's valid_block_count never exceeds
user_block_count, which the kernel refuses), and what succeeded is there
while what failed changed nothing."""

import errno
import os
import random

import pytest

import fsutil
from test_write import (MiB, FALLOC_FL_KEEP_SIZE, blob, errno_of, fallocate, read_file,  # noqa: F401
                        rwimage, sha, write_file)

SIZE = 64 * MiB
LEAVE = (0, 1, 3)


def bavail(p):
    return os.statvfs(p).f_bavail


def squeeze(p, leave):
    """Grow `filler` until ENOSPC, then give back whole blocks from its end
    until exactly `leave` blocks are free."""
    path = os.path.join(p, "filler")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        while True:
            try:
                os.write(fd, blob(MiB, os.fstat(fd).st_size))
            except OSError as e:
                assert e.errno == errno.ENOSPC, e
                break
        size = os.fstat(fd).st_size // 4096 * 4096
        os.ftruncate(fd, size)
        while bavail(p) < leave:
            size -= 4096
            os.ftruncate(fd, size)
    finally:
        os.close(fd)
    assert bavail(p) >= leave
    return bavail(p)


def until_enospc(fn, limit=100000):
    """Call fn(i) for i = 0, 1, ... until it fails with ENOSPC; the count of successes."""
    for i in range(limit):
        err = errno_of(fn, i)
        if err:
            assert err == errno.ENOSPC, (i, os.strerror(err))
            return i
    raise AssertionError("no ENOSPC after %d calls" % limit)


# Each kind: prepare(p) before the squeeze, run(p, state) at the edge, then
# check(p, state) on the read-write remount; state is a dict.

def data_prepare(p, st):
    write_file(os.path.join(p, "data"), b"")


def data_run(p, st):
    fd = os.open(os.path.join(p, "data"), os.O_WRONLY)
    try:
        st["n"] = until_enospc(lambda i: os.write(fd, blob(4096, i)))
    finally:
        os.close(fd)


def data_check(p, st):
    want = b"".join(blob(4096, i) for i in range(st["n"]))
    assert read_file(os.path.join(p, "data")) == want


def inode_prepare(p, st):
    os.mkdir(os.path.join(p, "inodes"))


def inode_run(p, st):
    def make(i):
        if i % 3 == 2:
            os.mkdir(os.path.join(p, "inodes", "d%d" % i))
        else:
            os.close(os.open(os.path.join(p, "inodes", "f%d" % i), os.O_CREAT | os.O_WRONLY))
    st["n"] = until_enospc(make)


def inode_check(p, st):
    names = sorted(os.listdir(os.path.join(p, "inodes")))
    assert names == sorted(("d%d" if i % 3 == 2 else "f%d") % i for i in range(st["n"]))


SPARSE_OFFSETS = (1 << 30, 8 << 20, 3 << 30, 64 << 20)


def sparse_run(p, st):
    """Writes far into new files: each needs indirect nodes before its data block."""
    def write(i):
        path = os.path.join(p, "sparse%d" % i)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
        try:
            os.pwrite(fd, blob(4096, i), SPARSE_OFFSETS[i % len(SPARSE_OFFSETS)])
        finally:
            os.close(fd)
    st["n"] = until_enospc(write)


def sparse_check(p, st):
    for i in range(st["n"] + 1):
        path = os.path.join(p, "sparse%d" % i)
        off = SPARSE_OFFSETS[i % len(SPARSE_OFFSETS)]
        if i < st["n"]:
            assert os.path.getsize(path) == off + 4096
            with open(path, "rb") as f:
                f.seek(off)
                assert f.read() == blob(4096, i)
        elif os.path.exists(path):  # (unless its inode did not fit)
            assert os.path.getsize(path) == 0   # the write that failed left nothing


XSMALL = 8


def xattr_prepare(p, st):
    """Files with a small xattr, inline."""
    os.mkdir(os.path.join(p, "x"))
    for i in range(XSMALL):
        path = os.path.join(p, "x", "f%d" % i)
        write_file(path, b"")
        os.setxattr(path, "user.small", b"s%d" % i)


def xattr_run(p, st):
    """Values too big for the inline area: each needs an xattr node, and
    beyond the first files, a new inode too."""
    def setx(i):
        path = os.path.join(p, "x", "f%d" % i)
        if i >= XSMALL:
            write_file(path, b"")
        os.setxattr(path, "user.big", blob(3000, i))
    st["n"] = until_enospc(setx)


def xattr_check(p, st):
    for i in range(XSMALL):
        assert os.getxattr(os.path.join(p, "x", "f%d" % i), "user.small") == b"s%d" % i
    for i in range(st["n"]):
        assert os.getxattr(os.path.join(p, "x", "f%d" % i), "user.big") == blob(3000, i)
    path = os.path.join(p, "x", "f%d" % st["n"])
    assert errno_of(os.getxattr, path, "user.big") in (errno.ENODATA, errno.ENOENT)


def inline_prepare(p, st):
    """Inline files and inline directories, made while there is room."""
    os.mkdir(os.path.join(p, "in"))
    for i in range(20):
        write_file(os.path.join(p, "in", "f%d" % i), blob(100, i))
    for i in range(4):
        d = os.path.join(p, "in", "d%d" % i)
        os.mkdir(d)
        for j in range(60):
            write_file(os.path.join(d, "e%02d" % j), b"")


def inline_run(p, st):
    """Growing past the inline area needs a block: without one, nothing
    changes.  Files grow to one block (all or nothing); directories gain
    names until their inline dentries move to a block.  Which goes first
    alternates, so that each meets both the last free blocks and none."""
    def grow(i):
        fd = os.open(os.path.join(p, "in", "f%d" % i), os.O_WRONLY | os.O_APPEND)
        try:
            os.write(fd, blob(3500, 100 + i))
        finally:
            os.close(fd)

    def link(i):
        d = os.path.join(p, "in", "d%d" % (i % 4))
        os.link(os.path.join(p, "in", "f0"), os.path.join(d, "link%03d" % (i // 4)))
    if st["leave"] % 2:
        st["links"] = until_enospc(link)
        st["grown"] = until_enospc(grow, limit=20)
    else:
        st["grown"] = until_enospc(grow, limit=20)
        st["links"] = until_enospc(link)


def inline_check(p, st):
    for i in range(20):
        want = blob(100, i) + (blob(3500, 100 + i) if i < st["grown"] else b"")
        assert read_file(os.path.join(p, "in", "f%d" % i)) == want, i
    for i in range(4):
        names = set(os.listdir(os.path.join(p, "in", "d%d" % i)))
        want = {"e%02d" % j for j in range(60)}
        want |= {"link%03d" % (k // 4) for k in range(st["links"]) if k % 4 == i}
        assert names == want, i
    assert os.stat(os.path.join(p, "in", "f0")).st_nlink == 1 + st["links"]


def falloc_prepare(p, st):
    write_file(os.path.join(p, "falloc"), b"")


def falloc_run(p, st):
    fd = os.open(os.path.join(p, "falloc"), os.O_WRONLY)
    try:
        # more than is free: fails, and the size stays
        assert errno_of(fallocate, fd, 0, 0, 64 * MiB) == errno.ENOSPC
        assert os.fstat(fd).st_size == 0
        # then a block at a time, ever further (new direct nodes on the way)
        st["n"] = until_enospc(lambda i: fallocate(fd, 0, i * 1024 * 4096, 4096))
        assert errno_of(fallocate, fd, FALLOC_FL_KEEP_SIZE, 1 << 30, 4096) == errno.ENOSPC
        st["size"] = os.fstat(fd).st_size
    finally:
        os.close(fd)


def falloc_check(p, st):
    assert st["size"] == ((st["n"] - 1) * 1024 * 4096 + 4096 if st["n"] else 0)
    assert os.path.getsize(os.path.join(p, "falloc")) == st["size"]
    assert read_file(os.path.join(p, "falloc")) == bytes(st["size"])


def clean_run(p, st):
    """Overwrites take no new blocks: with nothing free they must still work,
    cleaning making the room.  (A full image this small cleans a section
    and checkpoints before nearly every write, so the amount is modest.)"""
    path = os.path.join(p, "filler")
    size = os.path.getsize(path)
    rng = random.Random(5)
    fd = os.open(path, os.O_RDWR)
    try:
        done = 0
        while done < SIZE // 8:
            n = rng.choice((4096, 16384, 65536))
            off = rng.randrange(0, (size - n) // 4096) * 4096
            assert os.pwrite(fd, blob(n, done), off) == n
            done += n
        os.lseek(fd, 0, os.SEEK_SET)
        st["sha"] = sha(read_file(path))
    finally:
        os.close(fd)


def clean_check(p, st):
    assert sha(read_file(os.path.join(p, "filler"))) == st["sha"]


KINDS = {
    "data": (data_prepare, data_run, data_check),
    "inode": (inode_prepare, inode_run, inode_check),
    "sparse": (None, sparse_run, sparse_check),
    "xattr": (xattr_prepare, xattr_run, xattr_check),
    "inline": (inline_prepare, inline_run, inline_check),
    "fallocate": (falloc_prepare, falloc_run, falloc_check),
    "cleaning": (None, clean_run, clean_check),
}


@pytest.mark.slow
@pytest.mark.parametrize("kind", sorted(KINDS))
def test_full_image_remounts(rwimage, kind):
    prepare, run, check = KINDS[kind]
    img = rwimage(size=SIZE)
    for leave in LEAVE:
        p = img.mount()
        st = {"leave": leave}
        if prepare:
            prepare(p, st)
        squeeze(p, leave)
        run(p, st)
        check(p, st)
        img.unmount()
        fsutil.fsck_check(img.image)
        # the kernel's mount check: the driver must accept its own image
        p = img.mount()
        check(p, st)
        assert bavail(p) <= leave
        # and it stays writable: make room, write, start over
        for name in os.listdir(p):
            fsutil.run(["rm", "-rf", os.path.join(p, name)], check=True)
        write_file(os.path.join(p, "after"), blob(MiB, leave))
        assert read_file(os.path.join(p, "after")) == blob(MiB, leave)
        os.unlink(os.path.join(p, "after"))
        img.unmount()
        fsutil.fsck_check(img.image)
