"""Changes through a read-write mount.

Every test ends the same way (RWImage.finish): the tree is walked on the
writable mount, the daemon unmounts cleanly (its final checkpoint),
fsck.f2fs finds nothing to fix, and a read-only remount shows the same tree
(every manifest field plus inode numbers, block counts and nanosecond
times) and what the test expected.  Images come from mkfs.f2fs with its
default features or with the extra inode attributes (FEATURES).

The other test_write_*.py files import the helpers from here.
"""

import ctypes
import ctypes.util
import errno
import hashlib
import os
import random
import re
import signal
import socket
import stat
import subprocess
import threading
import time

import pytest

import fsutil
import manifest as M

FEATURES = {
    "default": None,
    "extra": "extra_attr,inode_checksum,flexible_inline_xattr,inode_crtime,sb_checksum",
}
# Largest inline file: 4 * (923 addresses - 50 for inline xattrs - 1 reserved
# - the extra attribute area, 9 addresses here).
INLINE_MAX = {"default": 3488, "extra": 3452}

MiB = 1 << 20
LONG = "n" * 256
LONGEST = "n" * 255


def _umask():
    old = os.umask(0)
    os.umask(old)
    return old


UMASK = _umask()


def cmode(mode=0o666):
    """Mode text of a file created with `mode` under the test's umask."""
    return "%04o" % (mode & ~UMASK)


def blob(n, seed):
    return random.Random(seed).randbytes(n)


def sha(b):
    return hashlib.sha256(b).hexdigest()


def errno_of(fn, *args, **kw):
    """The errno fn(*args) fails with, or 0."""
    try:
        fn(*args, **kw)
    except OSError as e:
        return e.errno
    return 0


def write_file(path, data, mode=0o666, sync=False):
    """sync: fsync() too, so the data has its blocks on the device (the
    page cache allocates them only at writeback)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view[:MiB]):]
        if sync:
            os.fsync(fd)
    finally:
        os.close(fd)


def read_file(path):
    with open(path, "rb") as f:
        return f.read()


# ---------------------------------------------------------------- libc

LIBC = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
AT_FDCWD = -100
RENAME_NOREPLACE = 1
RENAME_EXCHANGE = 2
RENAME_WHITEOUT = 4
FALLOC_FL_KEEP_SIZE = 0x01
FALLOC_FL_PUNCH_HOLE = 0x02
FALLOC_FL_ZERO_RANGE = 0x10
UTIME_NOW = (1 << 30) - 1
UTIME_OMIT = (1 << 30) - 2

LIBC.renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p,
                           ctypes.c_uint]
LIBC.fallocate64.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int64, ctypes.c_int64]
LIBC.getxattr.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_void_p, ctypes.c_size_t]
LIBC.getxattr.restype = ctypes.c_ssize_t
LIBC.listxattr.argtypes = [ctypes.c_char_p, ctypes.c_void_p, ctypes.c_size_t]
LIBC.listxattr.restype = ctypes.c_ssize_t


class Timespec(ctypes.Structure):
    _fields_ = [("tv_sec", ctypes.c_long), ("tv_nsec", ctypes.c_long)]


LIBC.utimensat.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.POINTER(Timespec),
                           ctypes.c_int]


def _check(rc, what):
    if rc < 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e), what)
    return rc


def renameat2(old, new, flags):
    _check(LIBC.renameat2(AT_FDCWD, os.fsencode(old), AT_FDCWD, os.fsencode(new), flags), old)


def fallocate(fd, mode, off, length):
    _check(LIBC.fallocate64(fd, mode, off, length), "fallocate")


def utimensat(path, atime, mtime):
    """atime/mtime: (sec, nsec); nsec may be UTIME_NOW or UTIME_OMIT."""
    ts = (Timespec * 2)(Timespec(*atime), Timespec(*mtime))
    _check(LIBC.utimensat(AT_FDCWD, os.fsencode(path), ts, 0), path)


def getxattr_raw(path, name, size):
    buf = ctypes.create_string_buffer(max(size, 1))
    n = _check(LIBC.getxattr(os.fsencode(path), os.fsencode(name), buf if size else None, size),
               path)
    return buf.raw[:n] if size else n


def listxattr_raw(path, size):
    buf = ctypes.create_string_buffer(max(size, 1))
    n = _check(LIBC.listxattr(os.fsencode(path), buf if size else None, size), path)
    return buf.raw[:n] if size else n


# ---------------------------------------------------------------- images

def stat_table(top):
    """{relative path: what lstat shows} for every entry under top."""
    res = {}
    for dirpath, dirnames, filenames in os.walk(top):
        for n in [None] + dirnames + filenames:
            p = dirpath if n is None else os.path.join(dirpath, n)
            st = os.lstat(p)
            res[os.path.relpath(p, top)] = (
                st.st_ino, st.st_mode, st.st_nlink, st.st_uid, st.st_gid, st.st_size,
                st.st_blocks, st.st_rdev, st.st_atime_ns, st.st_mtime_ns, st.st_ctime_ns)
    return res


def fsck_inode_count(out):
    m = re.search(r"valid_inode_count matched with CP\s+\[Ok\.\.\]\s+\[0x([0-9a-f]+)\]", out)
    return int(m.group(1), 16) if m else None


def expect(entries, partial=True):
    """{path: {field: value}} -> an expected Manifest; unnamed fields match anything."""
    full = {}
    for p, fields in entries.items():
        e = {f: M.WILDCARD for f in M.FIELDS}
        e.update(fields)
        full["." if p == "." else M.escape(p)] = e
    return M.Manifest(full, partial=partial)


class RWImage:
    """A fresh image (mkfs.f2fs, or sload.f2fs of `tree`), or a copy of
    `source`, mounted read-write with f2fs-fuse."""

    def __init__(self, binary, tmp_path, features=None, size=256 * MiB, options=(),
                 tree=None, source=None, name="rw"):
        self.binary = binary
        self.dir = tmp_path
        self.image = str(tmp_path / (name + ".img"))
        self.options = list(options)
        self.m = None
        self.n = 0
        self.name = name
        if source:
            fsutil.run(["cp", "--sparse=always", source, self.image], check=True)
        elif tree:
            fsutil.make_image(self.image, tree, size, features)
        else:
            with open(self.image, "wb") as f:
                f.truncate(size)
            cmd = ["mkfs.f2fs", "-f"] + (["-O", features] if features else []) + [self.image]
            fsutil.run(cmd, check=True)

    @property
    def path(self):
        return self.m.path

    def mount(self, options=None, ro=False):
        assert self.m is None
        self.n += 1
        opts = list(self.options if options is None else options)
        if ro:
            opts = ["ro"] + [o for o in opts if o != "rw"]
        mnt = self.dir / ("%s-mnt%d" % (self.name, self.n))
        self.m = fsutil.Mount(self.binary, self.image, mnt, opts).start()
        return self.m.path

    def unmount(self, check=True):
        m, self.m = self.m, None
        m.unmount()
        if check:
            m.check_exit()
        return m

    def crash(self):
        """SIGKILL the daemon: nothing after the last checkpoint or fsync survives."""
        m, self.m = self.m, None
        m._kill()
        return m

    def close(self):
        if self.m is not None:
            self.m._kill()
            self.m = None

    def finish(self, expected=None, content_filter=None, check_inodes=True):
        """Walk, unmount, fsck, remount read-only, walk again, compare.
        Returns the read-only manifest."""
        assert self.m is not None
        before = M.walk(self.m.path, content_filter=content_filter)
        assert before.errors == [], before.errors
        stats_before = stat_table(self.m.path)
        self.unmount()
        out = fsutil.fsck_check(self.image)
        self.mount(ro=True)
        try:
            after = M.walk(self.m.path, content_filter=content_filter)
            stats_after = stat_table(self.m.path)
        finally:
            self.unmount()
        assert after.errors == [], after.errors
        diffs = M.compare(before.manifest, after.manifest)
        assert diffs == [], "read-write mount vs read-only remount: " + M.report(diffs)
        changed = sorted(p for p in set(stats_before) | set(stats_after)
                         if stats_before.get(p) != stats_after.get(p))
        assert changed == [], "lstat differs after remount: %s" % [
            (p, stats_before.get(p), stats_after.get(p)) for p in changed[:10]]
        if expected is not None:
            diffs = M.compare(expected, after.manifest)
            assert diffs == [], M.report(diffs)
        if check_inodes:
            inodes = {s[0] for s in stats_after.values()}
            assert fsck_inode_count(out) == len(inodes), \
                "fsck counts %s inodes, the tree has %d" % (fsck_inode_count(out), len(inodes))
        return after.manifest


@pytest.fixture
def rwimage(f2fs_fuse, tmp_path):
    made = []

    def make(**kw):
        img = RWImage(f2fs_fuse, tmp_path, **kw)
        made.append(img)
        return img

    yield make
    for img in made:
        img.close()


both_features = pytest.mark.parametrize("fset", sorted(FEATURES))


# ---------------------------------------------------------------- files

@both_features
def test_file_sizes(rwimage, fset):
    """Sizes around the inline limit and block boundaries, multi-MiB files
    reaching the indirect nodes, small-chunk writes, growth out of inline
    data, and a sparse file with data in the double-indirect range."""
    img = rwimage(features=FEATURES[fset])
    p = img.mount()
    lim = INLINE_MAX[fset]
    exp = {}
    sizes = [0, 1, 100, lim - 1, lim, lim + 1, 4095, 4096, 4097, 8191, 8192, 8193,
             65536 + 7, MiB + 1, 13 * MiB + 4097]
    for i, n in enumerate(sizes):
        b = blob(n, i)
        write_file(os.path.join(p, "size-%d" % n), b)
        exp["size-%d" % n] = {"type": "f", "size": str(n), "content": sha(b), "nlink": "1",
                              "mode": cmode()}
    for n in sizes:
        assert sha(read_file(os.path.join(p, "size-%d" % n))) == exp["size-%d" % n]["content"]

    # 1000-byte writes: every request is unaligned
    b = blob(3 * MiB + 123, 100)
    with open(os.path.join(p, "chunks"), "wb", buffering=0) as f:
        for off in range(0, len(b), 1000):
            f.write(b[off:off + 1000])
    exp["chunks"] = {"size": str(len(b)), "content": sha(b)}

    # inline data, then past the limit, then blocks
    grow = bytearray(blob(lim, 101))
    with open(os.path.join(p, "grow"), "wb", buffering=0) as f:
        f.write(grow)
        f.write(b"+")
        f.write(blob(10000, 102))
    grow += b"+" + blob(10000, 102)
    exp["grow"] = {"size": str(len(grow)), "content": sha(bytes(grow))}

    # overwrite inside existing data, inline and not
    for name, n in (("over-inline", 1000), ("over-blocks", 3 * 4096 + 5)):
        b = bytearray(blob(n, 103))
        write_file(os.path.join(p, name), b)
        with open(os.path.join(p, name), "r+b", buffering=0) as f:
            f.seek(n // 3)
            f.write(b"X" * 700)
        b[n // 3:n // 3 + 700] = b"X" * 700
        exp[name] = {"size": str(len(b)), "content": sha(bytes(b))}

    # holes: extents at 0, 5 MiB (direct nodes), 40 MiB (indirect)
    holes = bytearray(40 * MiB + 10)
    fd = os.open(os.path.join(p, "holes"), os.O_RDWR | os.O_CREAT, 0o644)
    for off, n, seed in ((0, 100, 104), (5 * MiB - 10, 8200, 105), (40 * MiB, 10, 106)):
        d = blob(n, seed)
        os.pwrite(fd, d, off)
        holes[off:off + n] = d
    os.close(fd)
    exp["holes"] = {"size": str(len(holes)), "content": sha(bytes(holes))}
    st = os.stat(os.path.join(p, "holes"))
    assert st.st_blocks * 512 <= 8 * 4096 * 2, st

    # 9 GiB offset: the double-indirect range (not read whole)
    far = 9 << 30
    fd = os.open(os.path.join(p, "far"), os.O_RDWR | os.O_CREAT, 0o644)
    os.pwrite(fd, b"far-data", far)
    os.pwrite(fd, b"near", 4096)
    os.close(fd)
    exp["far"] = {"size": str(far + 8), "content": M.WILDCARD}

    man = img.finish(expect(exp), content_filter=lambda t: t != "far")
    assert man["size-0"]["content"] == sha(b"")
    p = img.mount(ro=True)
    try:
        fd = os.open(os.path.join(p, "far"), os.O_RDONLY)
        assert os.pread(fd, 8, far) == b"far-data"
        assert os.pread(fd, 8, 4096) == b"near\0\0\0\0"
        assert os.pread(fd, 4096, far - 4096) == bytes(4096)
        assert os.pread(fd, 4096, 4 << 30) == bytes(4096)
        assert os.pread(fd, 10, far + 8) == b""
        os.close(fd)
    finally:
        img.unmount()


def test_open_flags(rwimage):
    """O_CREAT|O_EXCL, O_TRUNC (inline and block files), O_APPEND after
    another descriptor extended the file, opening a directory for writing."""
    img = rwimage()
    p = img.mount()
    j = lambda *a: os.path.join(p, *a)   # noqa: E731

    fd = os.open(j("excl"), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    os.write(fd, b"first")
    os.close(fd)
    assert errno_of(os.open, j("excl"), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600) == \
        errno.EEXIST
    os.symlink("dangling-target", j("dangling"))
    assert errno_of(os.open, j("dangling"), os.O_WRONLY | os.O_CREAT | os.O_EXCL) == errno.EEXIST
    assert not os.path.lexists(j("dangling-target"))
    # O_CREAT without O_EXCL on an existing file opens it
    fd = os.open(j("excl"), os.O_RDWR | os.O_CREAT, 0o644)
    assert os.read(fd, 100) == b"first"
    os.close(fd)

    for name, n in (("trunc-inline", 500), ("trunc-blocks", 5 * MiB)):
        write_file(j(name), blob(n, 1))
        fd = os.open(j(name), os.O_WRONLY | os.O_TRUNC)
        assert os.fstat(fd).st_size == 0
        os.write(fd, b"new")
        os.close(fd)
        assert read_file(j(name)) == b"new"

    write_file(j("append"), b"abc")
    fa = os.open(j("append"), os.O_WRONLY | os.O_APPEND)
    fb = os.open(j("append"), os.O_WRONLY)
    os.write(fa, b"def")
    os.pwrite(fb, b"X", 100)
    os.write(fa, b"tail")
    os.close(fb)
    os.close(fa)
    appended = b"abcdef" + bytes(94) + b"X" + b"tail"
    assert read_file(j("append")) == appended
    with open(j("append"), "ab") as f:
        f.write(b"!" * 5000)
    appended += b"!" * 5000

    os.mkdir(j("dir"))
    assert errno_of(os.open, j("dir"), os.O_WRONLY) == errno.EISDIR
    # mode 0 does not stop root
    fd = os.open(j("mode0"), os.O_RDWR | os.O_CREAT, 0)
    os.write(fd, b"zero")
    os.close(fd)

    img.finish(expect({
        "excl": {"content": sha(b"first"), "mode": "0600"},
        "trunc-inline": {"content": sha(b"new"), "size": "3"},
        "trunc-blocks": {"content": sha(b"new"), "size": "3"},
        "append": {"content": sha(appended)},
        "dangling": {"type": "l", "content": "dangling-target"},
        "dangling-target": {"type": "!"},
        "mode0": {"mode": "0000", "content": sha(b"zero")},
    }))


def test_mknod(rwimage):
    """Every node type; device numbers on both sides of the old 8:8 encoding
    and the largest the kernel allows."""
    img = rwimage()
    p = img.mount()
    devs = {"c-1-3": (stat.S_IFCHR, 1, 3), "b-8-1": (stat.S_IFBLK, 8, 1),
            "c-255-255": (stat.S_IFCHR, 255, 255), "c-256-0": (stat.S_IFCHR, 256, 0),
            "b-0-256": (stat.S_IFBLK, 0, 256), "c-max": (stat.S_IFCHR, 4095, 1048575),
            "b-max": (stat.S_IFBLK, 4095, 1048575)}
    exp = {}
    for name, (t, ma, mi) in devs.items():
        os.mknod(os.path.join(p, name), t | 0o640, os.makedev(ma, mi))
        st = os.lstat(os.path.join(p, name))
        assert (os.major(st.st_rdev), os.minor(st.st_rdev)) == (ma, mi), name
        exp[name] = {"type": "c" if t == stat.S_IFCHR else "b", "content": "%d:%d" % (ma, mi),
                     "mode": "%04o" % (0o640 & ~UMASK), "size": "0"}
    os.mkfifo(os.path.join(p, "fifo"), 0o644)
    os.mknod(os.path.join(p, "sock"), stat.S_IFSOCK | 0o644)
    os.mknod(os.path.join(p, "reg"), stat.S_IFREG | 0o644)
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.bind(os.path.join(p, "bound"))
    finally:
        s.close()
    exp.update({"fifo": {"type": "p"}, "sock": {"type": "s"}, "bound": {"type": "s"},
                "reg": {"type": "f", "size": "0", "content": sha(b"")}})
    assert errno_of(os.mknod, os.path.join(p, "fifo"), stat.S_IFIFO | 0o644) == errno.EEXIST
    img.finish(expect(exp))


def test_mkdir_rmdir(rwimage):
    """Link counts of parents, ENOTEMPTY, ENOTDIR, EISDIR, EEXIST, set-group-ID
    inheritance, and a directory that outgrows its inline dentries."""
    img = rwimage()
    p = img.mount()
    j = lambda *a: os.path.join(p, *a)   # noqa: E731
    os.makedirs(j("a", "b", "c"))
    assert os.stat(j("a")).st_nlink == 3
    assert os.stat(j("a", "b")).st_nlink == 3
    assert os.stat(j("a", "b", "c")).st_nlink == 2
    assert os.stat(p).st_nlink == 3
    assert errno_of(os.rmdir, j("a")) == errno.ENOTEMPTY
    assert errno_of(os.mkdir, j("a")) == errno.EEXIST
    os.rmdir(j("a", "b", "c"))
    assert os.stat(j("a", "b")).st_nlink == 2
    write_file(j("a", "file"), b"x")
    assert errno_of(os.rmdir, j("a", "file")) == errno.ENOTDIR
    assert errno_of(os.unlink, j("a", "b")) == errno.EISDIR
    assert errno_of(os.rmdir, j("a", "b", ".")) == errno.EINVAL
    assert errno_of(os.rmdir, j("missing")) == errno.ENOENT

    os.mkdir(j("sgid"))
    os.chown(j("sgid"), 0, 4242)
    os.chmod(j("sgid"), 0o2775)
    os.mkdir(j("sgid", "sub"), 0o755)
    write_file(j("sgid", "f"), b"")
    st = os.stat(j("sgid", "sub"))
    assert st.st_gid == 4242 and st.st_mode & stat.S_ISGID
    assert os.stat(j("sgid", "f")).st_gid == 4242
    os.mkdir(j("sticky"), 0o1777)
    os.chmod(j("sticky"), 0o1777)

    os.mkdir(j("many"))
    for i in range(300):
        os.mkdir(j("many", "d%03d" % i))
    assert os.stat(j("many")).st_nlink == 302
    for i in range(0, 300, 2):
        os.rmdir(j("many", "d%03d" % i))
    assert os.stat(j("many")).st_nlink == 152
    assert sorted(os.listdir(j("many"))) == ["d%03d" % i for i in range(1, 300, 2)]
    os.mkdir(j("gone"))
    os.rmdir(j("gone"))

    exp = {".": {"nlink": "6"}, "a": {"nlink": "3"}, "a/b": {"nlink": "2"},
           "a/b/c": {"type": "!"}, "sgid": {"mode": "2775", "gid": "4242", "nlink": "3"},
           "sgid/sub": {"gid": "4242", "mode": "%04o" % (0o2000 | (0o755 & ~UMASK))},
           "sgid/f": {"gid": "4242"}, "sticky": {"mode": "1777"},
           "many": {"nlink": "152"}, "gone": {"type": "!"}}
    img.finish(expect(exp))


def test_symlinks(rwimage):
    """Targets from 1 byte to the 4095-byte maximum, inline and in a block."""
    img = rwimage(features=FEATURES["extra"])
    p = img.mount()
    exp = {}
    for n in (1, 59, 60, 255, 1000, 3451, 3452, 3453, 4000, 4095):
        target = ("t%d/" % n + "x" * n)[:n]
        os.symlink(target, os.path.join(p, "l%d" % n))
        assert os.readlink(os.path.join(p, "l%d" % n)) == target
        assert os.lstat(os.path.join(p, "l%d" % n)).st_size == n
        exp["l%d" % n] = {"type": "l", "content": M.escape(target), "size": str(n),
                          "mode": "0777"}
    assert errno_of(os.symlink, "y" * 4096, os.path.join(p, "too-long")) == errno.ENAMETOOLONG
    assert errno_of(os.symlink, "x", os.path.join(p, "l1")) == errno.EEXIST
    write_file(os.path.join(p, "target"), b"through the link")
    os.symlink("target", os.path.join(p, "to-target"))
    assert read_file(os.path.join(p, "to-target")) == b"through the link"
    exp["too-long"] = {"type": "!"}
    img.finish(expect(exp))


def test_hard_links(rwimage):
    img = rwimage()
    p = img.mount()
    j = lambda *a: os.path.join(p, *a)   # noqa: E731
    write_file(j("a"), b"shared data")
    os.mkdir(j("d"))
    os.link(j("a"), j("b"))
    os.link(j("a"), j("d", "c"))
    assert os.stat(j("a")).st_nlink == 3
    assert os.stat(j("a")).st_ino == os.stat(j("d", "c")).st_ino
    os.unlink(j("a"))
    assert os.stat(j("b")).st_nlink == 2
    with open(j("d", "c"), "ab") as f:
        f.write(b" and more")
    assert read_file(j("b")) == b"shared data and more"
    assert errno_of(os.link, j("d"), j("dlink")) == errno.EPERM
    assert errno_of(os.link, j("b"), j("d", "c")) == errno.EEXIST
    assert errno_of(os.link, j("missing"), j("x")) == errno.ENOENT
    os.symlink("b", j("sym"))
    os.link(j("sym"), j("sym2"), follow_symlinks=False)
    assert os.lstat(j("sym")).st_nlink == 2
    # many links to one inode
    write_file(j("multi"), b"m")
    for i in range(20):
        os.link(j("multi"), j("d", "m%02d" % i))
    for i in range(0, 20, 2):
        os.unlink(j("d", "m%02d" % i))
    data = sha(b"shared data and more")
    exp = {"a": {"type": "!"}, "b": {"nlink": "2", "content": data},
           "d/c": {"nlink": "2", "content": data}, "sym": {"type": "l", "nlink": "2"},
           "sym2": {"type": "l", "nlink": "2", "content": "b"}, "multi": {"nlink": "11"},
           "d/m01": {"nlink": "11"}, "d/m00": {"type": "!"}}
    img.finish(expect(exp))


def test_unlink_open_file(rwimage):
    """An unlinked file stays readable and writable through its descriptor
    (also across a checkpoint) and is freed on close."""
    img = rwimage()
    p = img.mount()
    j = lambda *a: os.path.join(p, *a)   # noqa: E731
    data = blob(3 * MiB + 5, 1)
    write_file(j("victim"), data)
    write_file(j("small"), b"inline victim")
    free0 = os.statvfs(p).f_bfree
    fd = os.open(j("victim"), os.O_RDWR)
    fd2 = os.open(j("small"), os.O_RDONLY)
    os.unlink(j("victim"))
    os.unlink(j("small"))
    assert not os.path.exists(j("victim"))
    assert os.fstat(fd).st_nlink == 0
    assert os.pread(fd, 100, MiB) == data[MiB:MiB + 100]
    os.pwrite(fd, b"still writable", 10)
    assert os.pread(fd, 14, 10) == b"still writable"
    # a directory fsync commits a checkpoint with the orphans in it
    dfd = os.open(p, os.O_RDONLY)
    os.fsync(dfd)
    os.close(dfd)
    assert os.read(fd2, 100) == b"inline victim"
    write_file(j("victim"), b"a new file under the old name")
    os.close(fd)
    os.close(fd2)
    # the 3 MiB are free again once the release reaches the daemon: the
    # kernel sends RELEASE after close() has returned, so allow it a moment
    deadline = time.monotonic() + 10
    while os.statvfs(p).f_bfree < free0 + 700 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert os.statvfs(p).f_bfree >= free0 + 700, (free0, os.statvfs(p).f_bfree)
    img.finish(expect({"victim": {"content": sha(b"a new file under the old name"),
                                  "nlink": "1"}, "small": {"type": "!"}}))


def test_rename(rwimage):
    """Plain, replacing, RENAME_NOREPLACE, RENAME_EXCHANGE, directories
    across parents ('..' and link counts), and the errors."""
    img = rwimage()
    p = img.mount()
    j = lambda *a: os.path.join(p, *a)   # noqa: E731
    for d in ("d1", "d2", "d1/sub", "d1/sub/deep", "full", "empty"):
        os.mkdir(j(d))
    write_file(j("full", "x"), b"x")
    write_file(j("f1"), b"one")
    write_file(j("f2"), b"two")
    write_file(j("d1", "sub", "inner"), b"inner")

    os.rename(j("f1"), j("g1"))
    os.rename(j("g1"), j("f2"))            # replaces f2; its inode goes
    assert read_file(j("f2")) == b"one"
    write_file(j("f3"), b"three")
    assert errno_of(renameat2, j("f3"), j("f2"), RENAME_NOREPLACE) == errno.EEXIST
    renameat2(j("f3"), j("f4"), RENAME_NOREPLACE)
    assert errno_of(renameat2, j("f4"), j("nothing"), RENAME_EXCHANGE) == errno.ENOENT

    # directory to another parent
    root_ino = os.stat(p).st_ino
    os.rename(j("d1", "sub"), j("d2", "moved"))
    assert os.stat(j("d2", "moved", "..")).st_ino == os.stat(j("d2")).st_ino
    assert os.stat(j("d1")).st_nlink == 2
    assert os.stat(j("d2")).st_nlink == 3
    assert read_file(j("d2", "moved", "inner")) == b"inner"

    # exchange a file in the root with a directory in d2
    renameat2(j("f4"), j("d2", "moved"), RENAME_EXCHANGE)
    assert stat.S_ISDIR(os.stat(j("f4")).st_mode)
    assert read_file(j("d2", "moved")) == b"three"
    assert os.stat(j("f4", "..")).st_ino == root_ino
    assert os.stat(j("f4", "deep", "..")).st_ino == os.stat(j("f4")).st_ino
    assert os.stat(j("d2")).st_nlink == 2
    # exchange two directories with different parents
    renameat2(j("f4", "deep"), j("d2", "moved"), RENAME_EXCHANGE)
    assert stat.S_ISDIR(os.stat(j("d2", "moved")).st_mode)
    assert os.stat(j("d2", "moved", "..")).st_ino == os.stat(j("d2")).st_ino
    assert read_file(j("f4", "deep")) == b"three"
    assert os.stat(j("f4")).st_nlink == 2
    assert os.stat(j("d2")).st_nlink == 3

    assert errno_of(os.rename, j("empty"), j("full")) == errno.ENOTEMPTY
    assert errno_of(os.rename, j("d2"), j("d2", "moved", "into-self")) == errno.EINVAL
    assert errno_of(os.rename, j("f2"), j("empty")) == errno.EISDIR
    assert errno_of(os.rename, j("empty"), j("f2")) == errno.ENOTDIR
    assert errno_of(os.rename, j("missing"), j("x")) == errno.ENOENT
    os.rename(j("f2"), j("f2"))             # to itself: nothing happens
    assert os.stat(p).st_nlink == 2 + len([n for n in os.listdir(p)
                                           if stat.S_ISDIR(os.lstat(j(n)).st_mode)])

    # a name that moves through many directories and back
    for i in range(30):
        os.mkdir(j("hop%d" % i))
    cur = j("f2")
    for i in range(30):
        nxt = j("hop%d" % i, "f2")
        os.rename(cur, nxt)
        cur = nxt
    os.rename(cur, j("f2"))
    exp = {"f1": {"type": "!"}, "g1": {"type": "!"}, "f3": {"type": "!"},
           "f2": {"content": sha(b"one"), "nlink": "1"},
           "f4": {"type": "d", "nlink": "2"}, "f4/deep": {"type": "f", "content": sha(b"three")},
           "d2/moved": {"type": "d", "nlink": "2"},
           "d1": {"type": "d", "nlink": "2"}, "f4/inner": {"content": sha(b"inner")}}
    img.finish(expect(exp))


def test_rename_whiteout(rwimage):
    """RENAME_WHITEOUT (overlayfs' rename in its upper layer): the old name
    becomes a character device 0:0 with no permission bits, owned by the
    caller, the inode moves as in a plain rename; with a directory the old
    parent loses its '..' link. Persistent and fsck-clean."""
    img = rwimage()
    p = img.mount()
    j = lambda *a: os.path.join(p, *a)   # noqa: E731
    for d in ("d1", "d2", "d1/sub"):
        os.mkdir(j(d))
    write_file(j("a"), b"moved data")
    write_file(j("victim"), b"replaced")
    write_file(j("d1", "f"), b"in d1")
    ino = os.stat(j("a")).st_ino

    renameat2(j("a"), j("b"), RENAME_WHITEOUT)
    st = os.lstat(j("a"))
    assert stat.S_ISCHR(st.st_mode) and st.st_rdev == 0, oct(st.st_mode)
    assert stat.S_IMODE(st.st_mode) == 0 and st.st_nlink == 1
    assert (st.st_uid, st.st_gid) == (os.getuid(), os.getgid())
    assert st.st_ino != ino and os.stat(j("b")).st_ino == ino
    assert read_file(j("b")) == b"moved data"
    # over an existing name, and across directories
    renameat2(j("d1", "f"), j("victim"), RENAME_WHITEOUT)
    assert read_file(j("victim")) == b"in d1"
    assert stat.S_ISCHR(os.lstat(j("d1", "f")).st_mode)
    # a directory: d1 loses the link of sub's '..'
    renameat2(j("d1", "sub"), j("d2", "sub"), RENAME_WHITEOUT)
    assert os.stat(j("d1")).st_nlink == 2 and os.stat(j("d2")).st_nlink == 3
    assert stat.S_ISCHR(os.lstat(j("d1", "sub")).st_mode)
    assert os.stat(j("d2", "sub", "..")).st_ino == os.stat(j("d2")).st_ino
    # the flags that cannot go together, and a whiteout that must not be left
    assert errno_of(renameat2, j("b"), j("victim"),
                    RENAME_WHITEOUT | RENAME_EXCHANGE) == errno.EINVAL
    assert errno_of(renameat2, j("b"), j("victim"),
                    RENAME_WHITEOUT | RENAME_NOREPLACE) == errno.EEXIST
    assert read_file(j("b")) == b"moved data"
    assert errno_of(renameat2, j("missing"), j("x"), RENAME_WHITEOUT) == errno.ENOENT
    assert not os.path.lexists(j("missing"))
    img.finish(expect({"a": {"type": "c", "mode": "0000", "nlink": "1"},
                       "b": {"type": "f", "content": sha(b"moved data")},
                       "victim": {"type": "f", "content": sha(b"in d1")},
                       "d1": {"type": "d", "nlink": "2"}, "d1/f": {"type": "c"},
                       "d1/sub": {"type": "c"}, "d2/sub": {"type": "d", "nlink": "2"}}))


def test_rename_directory_over_empty_directory(rwimage):
    """The moved directory's '..' takes the place of the victim's: the new
    parent keeps its link count, the old one loses one."""
    img = rwimage()
    p = img.mount()
    j = lambda *a: os.path.join(p, *a)   # noqa: E731
    for d in ("a", "b", "x", "x/in", "y", "y/sub", "z"):
        os.mkdir(j(d))
    write_file(j("x", "in", "data"), b"moved along")
    os.rename(j("a"), j("b"))               # same parent
    assert os.stat(p).st_nlink == 6         # b, x, y, z
    os.rename(j("x", "in"), j("y", "sub"))  # across parents
    assert os.stat(j("x")).st_nlink == 2
    assert os.stat(j("y")).st_nlink == 3
    assert os.stat(j("y", "sub", "..")).st_ino == os.stat(j("y")).st_ino
    os.rename(j("y", "sub"), j("z"))        # up into the root, over z
    assert os.stat(p).st_nlink == 6
    assert os.stat(j("y")).st_nlink == 2
    img.finish(expect({".": {"nlink": "6"}, "a": {"type": "!"}, "b": {"nlink": "2"},
                       "x": {"nlink": "2"}, "y": {"nlink": "2"}, "z": {"nlink": "2"},
                       "z/data": {"content": sha(b"moved along")}}, partial=False))


def test_name_too_long(rwimage):
    """256-byte names fail with ENAMETOOLONG in every operation; 255 work."""
    img = rwimage()
    p = img.mount()
    j = lambda *a: os.path.join(p, *a)   # noqa: E731
    write_file(j("file"), b"f")
    os.mkdir(j("dir"))
    for what, fn in (
            ("lookup", lambda n: os.stat(j(n))),
            ("create", lambda n: os.open(j(n), os.O_WRONLY | os.O_CREAT, 0o644)),
            ("mknod", lambda n: os.mknod(j(n), stat.S_IFIFO | 0o644)),
            ("mkdir", lambda n: os.mkdir(j(n))),
            ("symlink", lambda n: os.symlink("file", j(n))),
            ("link", lambda n: os.link(j("file"), j(n))),
            ("rename-to", lambda n: os.rename(j("file"), j(n))),
            ("rename-from", lambda n: os.rename(j(n), j("x"))),
            ("unlink", lambda n: os.unlink(j(n))),
            ("rmdir", lambda n: os.rmdir(j(n))),
            ("in-subdir", lambda n: os.mkdir(j("dir", n)))):
        assert errno_of(fn, LONG) == errno.ENAMETOOLONG, what
    write_file(j(LONGEST), b"255")
    os.mkdir(j("dir", LONGEST))
    os.symlink("file", j("dir", LONGEST[:-1] + "s"))
    os.link(j("file"), j("dir", LONGEST[:-1] + "h"))
    os.rename(j(LONGEST), j(LONGEST[:-1] + "r"))
    assert os.listdir(p).count(LONG) == 0
    exp = {LONGEST[:-1] + "r": {"content": sha(b"255")}, LONGEST: {"type": "!"},
           "dir/" + LONGEST: {"type": "d"}, "dir/" + LONGEST[:-1] + "s": {"type": "l"},
           "file": {"nlink": "2"}, "x": {"type": "!"}}
    img.finish(expect(exp))


def test_truncate(rwimage):
    img = rwimage(features=FEATURES["extra"])
    p = img.mount()
    j = lambda *a: os.path.join(p, *a)   # noqa: E731
    exp = {}
    data = blob(5 * MiB + 100, 1)
    write_file(j("shrink"), data)
    os.truncate(j("shrink"), 2 * MiB + 1000)
    os.truncate(j("shrink"), 2 * MiB + 5000)   # the tail comes back as zeros
    want = data[:2 * MiB + 1000] + bytes(4000)
    assert read_file(j("shrink")) == want
    exp["shrink"] = {"size": str(len(want)), "content": sha(want)}

    write_file(j("grow"), b"small")
    os.truncate(j("grow"), 3452)
    os.truncate(j("grow"), 20 * MiB)
    with open(j("grow"), "r+b") as f:
        f.seek(10 * MiB)
        f.write(b"middle")
    want = b"small" + bytes(10 * MiB - 5) + b"middle" + bytes(10 * MiB - 6)
    assert read_file(j("grow")) == want
    exp["grow"] = {"size": str(20 * MiB), "content": sha(want)}

    write_file(j("zero"), blob(100000, 2))
    fd = os.open(j("zero"), os.O_RDWR)
    os.ftruncate(fd, 0)
    assert os.fstat(fd).st_blocks == 0 or os.fstat(fd).st_blocks <= 8
    os.write(fd, b"again")
    os.close(fd)
    exp["zero"] = {"size": "5", "content": sha(b"again")}

    write_file(j("inline"), blob(3000, 3))
    os.truncate(j("inline"), 1000)
    want = blob(3000, 3)[:1000]
    exp["inline"] = {"size": "1000", "content": sha(want)}
    os.truncate(j("inline"), 1000)       # same size: no change

    write_file(j("mid-block"), blob(3 * 4096, 4))
    os.truncate(j("mid-block"), 4096 + 17)
    os.truncate(j("mid-block"), 3 * 4096)
    want = blob(3 * 4096, 4)[:4096 + 17] + bytes(2 * 4096 - 17)
    exp["mid-block"] = {"size": str(3 * 4096), "content": sha(want)}
    assert errno_of(os.truncate, j(), 0) == errno.EISDIR
    assert errno_of(os.truncate, j("grow"), -1) == errno.EINVAL
    img.finish(expect(exp))


def test_fallocate(rwimage):
    """posix_fallocate, KEEP_SIZE, PUNCH_HOLE and ZERO_RANGE."""
    img = rwimage()
    p = img.mount()
    j = lambda *a: os.path.join(p, *a)   # noqa: E731
    exp = {}

    fd = os.open(j("alloc"), os.O_RDWR | os.O_CREAT, 0o644)
    os.posix_fallocate(fd, 0, 3 * MiB)
    st = os.fstat(fd)
    assert st.st_size == 3 * MiB and st.st_blocks * 512 >= 3 * MiB
    os.pwrite(fd, b"data", MiB)
    os.close(fd)
    want = bytes(MiB) + b"data" + bytes(2 * MiB - 4)
    exp["alloc"] = {"size": str(3 * MiB), "content": sha(want)}

    fd = os.open(j("keep"), os.O_RDWR | os.O_CREAT, 0o644)
    os.write(fd, b"k" * 5000)
    fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, 2 * MiB)
    st = os.fstat(fd)
    assert st.st_size == 5000 and st.st_blocks * 512 >= 2 * MiB
    os.close(fd)
    exp["keep"] = {"size": "5000", "content": sha(b"k" * 5000)}

    data = bytearray(blob(4 * MiB, 1))
    write_file(j("punch"), data)
    fd = os.open(j("punch"), os.O_RDWR)
    blocks0 = os.fstat(fd).st_blocks
    fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, MiB + 100, 2 * MiB)
    data[MiB + 100:3 * MiB + 100] = bytes(2 * MiB)
    st = os.fstat(fd)
    assert st.st_size == 4 * MiB
    assert st.st_blocks < blocks0 - (2 * MiB - 8192) // 512, (blocks0, st.st_blocks)
    assert os.pread(fd, 200, MiB) == bytes(data[MiB:MiB + 200])
    assert errno_of(fallocate, fd, FALLOC_FL_PUNCH_HOLE, 0, 4096) == errno.EOPNOTSUPP
    os.close(fd)
    exp["punch"] = {"size": str(4 * MiB), "content": sha(bytes(data))}

    data = bytearray(blob(2 * MiB, 2))
    write_file(j("zero"), data)
    fd = os.open(j("zero"), os.O_RDWR)
    fallocate(fd, FALLOC_FL_ZERO_RANGE, 5000, 100000)
    data[5000:105000] = bytes(100000)
    fallocate(fd, FALLOC_FL_ZERO_RANGE, 2 * MiB - 10, 1000)   # grows the file
    data[2 * MiB - 10:] = bytes(1000)
    fallocate(fd, FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE, 2 * MiB + 990 - 5, 10000)
    data[-5:] = bytes(5)
    assert os.fstat(fd).st_size == len(data)
    os.close(fd)
    assert read_file(j("zero")) == bytes(data)
    exp["zero"] = {"size": str(len(data)), "content": sha(bytes(data))}

    write_file(j("inline"), b"i" * 100)
    fd = os.open(j("inline"), os.O_RDWR)
    fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 10, 20)
    os.close(fd)
    exp["inline"] = {"size": "100", "content": sha(b"i" * 10 + bytes(20) + b"i" * 70)}
    img.finish(expect(exp))


def test_attributes(rwimage):
    """chmod, chown (large IDs) and utimens with nanoseconds, UTIME_NOW and
    UTIME_OMIT; ctime follows every change."""
    img = rwimage(features=FEATURES["extra"])
    p = img.mount()
    j = lambda *a: os.path.join(p, *a)   # noqa: E731
    write_file(j("f"), b"attrs")
    os.mkdir(j("d"))
    os.symlink("f", j("l"))
    os.chmod(j("f"), 0o7777)
    assert stat.S_IMODE(os.stat(j("f")).st_mode) == 0o7777
    os.chmod(j("d"), 0o1750)
    os.chown(j("f"), 123456789, 987654321)
    st = os.stat(j("f"))
    assert (st.st_uid, st.st_gid) == (123456789, 987654321)
    # chown clears set-user/group-ID (for root too)
    assert stat.S_IMODE(st.st_mode) == 0o1777, oct(st.st_mode)
    os.chmod(j("f"), 0o6755)
    os.lchown(j("l"), 5, 6)
    os.chown(j("d"), 4294967294, 4294967294)

    c0 = os.stat(j("f")).st_ctime_ns
    os.utime(j("f"), ns=(1_234_567_890_123_456_789, 987_654_321_987_654_321))
    st = os.stat(j("f"))
    assert (st.st_atime_ns, st.st_mtime_ns) == (1_234_567_890_123_456_789,
                                                 987_654_321_987_654_321)
    assert st.st_ctime_ns >= c0
    os.utime(j("d"), ns=(-1_500_000_000, -2_999_999_999))
    st = os.stat(j("d"))
    assert (st.st_atime_ns, st.st_mtime_ns) == (-1_500_000_000, -2_999_999_999)
    os.utime(j("l"), ns=(2 ** 31 * 10 ** 9 + 1, 4102444800 * 10 ** 9 + 999_999_999),
             follow_symlinks=False)

    write_file(j("now"), b"")
    os.utime(j("now"), ns=(10 ** 9, 2 * 10 ** 9))
    t0 = time.time_ns()
    os.utime(j("now"))                     # both UTIME_NOW
    st = os.stat(j("now"))
    assert t0 - 10 ** 9 <= st.st_mtime_ns <= time.time_ns() + 10 ** 9
    assert st.st_atime_ns == st.st_mtime_ns

    write_file(j("omit"), b"")
    utimensat(j("omit"), (111, 222), (333, 444))
    utimensat(j("omit"), (0, UTIME_OMIT), (555, 666))
    st = os.stat(j("omit"))
    assert (st.st_atime_ns, st.st_mtime_ns) == (111 * 10 ** 9 + 222, 555 * 10 ** 9 + 666)
    t0 = time.time_ns()
    utimensat(j("omit"), (0, UTIME_NOW), (0, UTIME_OMIT))
    st = os.stat(j("omit"))
    assert st.st_mtime_ns == 555 * 10 ** 9 + 666
    assert st.st_atime_ns >= t0 - 10 ** 9

    # an ordinary write updates mtime and ctime
    write_file(j("w"), b"1")
    os.utime(j("w"), ns=(0, 0))
    with open(j("w"), "ab") as f:
        f.write(b"2")
    st = os.stat(j("w"))
    assert st.st_mtime_ns > 10 ** 18 and st.st_ctime_ns > 10 ** 18

    img.finish(expect({
        "f": {"mode": "6755", "uid": "123456789", "gid": "987654321", "mtime": "987654321"},
        "d": {"mode": "1750", "uid": "4294967294", "gid": "4294967294", "mtime": "-3"},
        "l": {"uid": "5", "gid": "6", "mtime": "4102444800"},
        "omit": {"mtime": "555"}}))


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to switch users")
def test_other_users(f2fs_fuse, tmp_path):
    """Through allow_other, the kernel clears set-user/group-ID bits when
    another user writes or truncates, keeps them for root, and enforces
    sticky directories; new files belong to their creator."""
    import tempfile
    import shutil
    top = tempfile.mkdtemp(prefix="f2fs-fuse-rw-", dir="/tmp")
    os.chmod(top, 0o755)
    img = RWImage(f2fs_fuse, tmp_path, options=("allow_other",))
    try:
        _other_user_probes(img, os.path.join(top, "mnt"))
    finally:
        img.close()
        shutil.rmtree(top, ignore_errors=True)


def _as_user(uid, gid, code):
    def demote():
        os.setgroups([])
        os.setgid(gid)
        os.setuid(uid)
    r = subprocess.run(["/usr/bin/python3", "-c", code], preexec_fn=demote, timeout=60,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr
    return r.stdout


def _other_user_probes(img, mnt):
    img.n += 1
    img.m = fsutil.Mount(img.binary, img.image, mnt, img.options).start()
    p = img.m.path
    j = lambda *a: os.path.join(p, *a)   # noqa: E731
    for name, mode in (("suid", 0o4755), ("sgid", 0o2755), ("sgid-noexec", 0o2644),
                       ("both", 0o6777), ("trunc", 0o6777), ("root-writes", 0o6777)):
        write_file(j(name), b"#!/bin/sh\n")
        os.chown(j(name), 1000, 1000)
        os.chmod(j(name), mode)
    os.mkdir(j("sticky"))
    os.chmod(j("sticky"), 0o1777)
    os.mkdir(j("sgid-dir"))
    os.chown(j("sgid-dir"), 0, 3000)
    os.chmod(j("sgid-dir"), 0o2777)
    code = (
        "import os\n"
        "p = %r\n"
        "for n in ('suid', 'sgid', 'sgid-noexec', 'both'):\n"
        "    with open(os.path.join(p, n), 'ab') as f: f.write(b'echo\\n')\n"
        "os.truncate(os.path.join(p, 'trunc'), 3)\n"
        "with open(os.path.join(p, 'sticky', 'mine'), 'w') as f: f.write('1000')\n"
        "with open(os.path.join(p, 'sgid-dir', 'new'), 'w') as f: f.write('x')\n"
        "os.mkdir(os.path.join(p, 'sgid-dir', 'newdir'))\n"
    ) % p
    _as_user(1000, 1000, code)
    with open(j("root-writes"), "ab") as f:
        f.write(b"root\n")
    code = (
        "import os\n"
        "p = %r\n"
        "try:\n"
        "    os.unlink(os.path.join(p, 'sticky', 'mine'))\n"
        "    print('unlinked')\n"
        "except OSError as e:\n"
        "    print(e.errno)\n"
        "try:\n"
        "    os.chmod(os.path.join(p, 'suid'), 0o777)\n"
        "    print('chmod')\n"
        "except OSError as e:\n"
        "    print(e.errno)\n"
    ) % p
    assert _as_user(1001, 1001, code).split() == [str(errno.EPERM), str(errno.EPERM)]
    modes = {n: stat.S_IMODE(os.stat(j(n)).st_mode)
             for n in ("suid", "sgid", "sgid-noexec", "both", "trunc", "root-writes")}
    assert modes == {"suid": 0o755, "sgid": 0o755, "sgid-noexec": 0o2644, "both": 0o777,
                     "trunc": 0o777, "root-writes": 0o6777}, {k: oct(v) for k, v in modes.items()}
    st = os.stat(j("sticky", "mine"))
    assert (st.st_uid, st.st_gid) == (1000, 1000)
    assert os.stat(j("sgid-dir", "new")).st_gid == 3000
    st = os.stat(j("sgid-dir", "newdir"))
    assert st.st_gid == 3000 and st.st_mode & stat.S_ISGID
    img.finish(expect({"suid": {"mode": "0755"}, "trunc": {"size": "3", "mode": "0777"},
                       "sticky/mine": {"uid": "1000", "content": sha(b"1000")},
                       "sgid-dir/newdir": {"gid": "3000", "uid": "1000"}}))


@both_features
def test_xattrs(rwimage, fset):
    """set/get/list/remove, XATTR_CREATE and XATTR_REPLACE, ERANGE, empty
    and 3000-byte values, namespaces, directories and symlinks, filling
    the xattr space and reusing it."""
    img = rwimage(features=FEATURES[fset])
    p = img.mount()
    j = lambda *a: os.path.join(p, *a)   # noqa: E731
    write_file(j("f"), b"xattrs")
    os.mkdir(j("d"))
    os.symlink("f", j("l"))
    f = j("f")
    os.setxattr(f, "user.a", b"alpha")
    os.setxattr(f, "user.empty", b"")
    os.setxattr(f, "trusted.t", b"trusted value")
    os.setxattr(f, "security.s", b"sec")
    assert os.getxattr(f, "user.a") == b"alpha"
    assert os.getxattr(f, "user.empty") == b""
    assert sorted(os.listxattr(f)) == ["security.s", "trusted.t", "user.a", "user.empty"]
    assert errno_of(os.setxattr, f, "user.a", b"x", os.XATTR_CREATE) == errno.EEXIST
    assert errno_of(os.setxattr, f, "user.none", b"x", os.XATTR_REPLACE) == errno.ENODATA
    assert errno_of(os.getxattr, f, "user.none") == errno.ENODATA
    assert errno_of(os.removexattr, f, "user.none") == errno.ENODATA
    os.setxattr(f, "user.a", b"replaced, longer than before", os.XATTR_REPLACE)
    os.setxattr(f, "user.new", b"created", os.XATTR_CREATE)
    assert getxattr_raw(f, "user.a", 0) == len(b"replaced, longer than before")
    assert errno_of(getxattr_raw, f, "user.a", 3) == errno.ERANGE
    total = listxattr_raw(f, 0)
    assert errno_of(listxattr_raw, f, total - 1) == errno.ERANGE
    assert len(listxattr_raw(f, total)) == total
    os.removexattr(f, "user.new")
    assert "user.new" not in os.listxattr(f)

    big = blob(3000, 1)
    os.setxattr(j("d"), "user.big", big)
    assert os.getxattr(j("d"), "user.big") == big
    os.setxattr(j("l"), "trusted.on-link", b"link", follow_symlinks=False)
    assert errno_of(os.setxattr, j("l"), "user.x", b"x", follow_symlinks=False) == errno.EPERM
    assert errno_of(os.setxattr, f, "user." + "n" * 251, b"x") == errno.ERANGE
    # larger than the kernel allows, and than f2fs has room for
    assert errno_of(os.setxattr, f, "user.huge", bytes(70000)) == errno.E2BIG
    too_big = errno_of(os.setxattr, f, "user.huge", bytes(10000))
    assert too_big in (errno.E2BIG, errno.ENOSPC), too_big

    # fill one inode's xattr space with small entries, then reuse it
    write_file(j("many"), b"")
    names = []
    err = 0
    for i in range(1000):
        err = errno_of(os.setxattr, j("many"), "user.attr-%03d" % i, b"v" * 16)
        if err:
            break
        names.append("user.attr-%03d" % i)
    assert err in (errno.ENOSPC, errno.E2BIG), err
    assert len(names) >= 50, len(names)
    assert sorted(os.listxattr(j("many"))) == names
    for n in names[::2]:
        os.removexattr(j("many"), n)
    for i in range(len(names[::2])):
        os.setxattr(j("many"), "user.redo-%03d" % i, b"w" * 16)
    kept = sorted(names[1::2] + ["user.redo-%03d" % i for i in range(len(names[::2]))])
    assert sorted(os.listxattr(j("many"))) == kept
    # a value that fills most of the space and is then shrunk
    write_file(j("resize"), b"")
    os.setxattr(j("resize"), "user.v", blob(3000, 2))
    os.setxattr(j("resize"), "user.v", b"tiny")
    os.setxattr(j("resize"), "user.w", blob(2900, 3))

    def xfield(pairs):
        return M.format_xattrs([(n.encode(), v) for n, v in pairs])

    man = img.finish(expect({
        "f": {"xattrs": xfield([("user.a", b"replaced, longer than before"),
                                ("user.empty", b""), ("trusted.t", b"trusted value"),
                                ("security.s", b"sec")]), "content": sha(b"xattrs")},
        "d": {"xattrs": xfield([("user.big", big)])},
        "l": {"xattrs": xfield([("trusted.on-link", b"link")])},
        "resize": {"xattrs": xfield([("user.v", b"tiny"), ("user.w", blob(2900, 3))])},
    }))
    assert man["many"]["xattrs"].count(";") == len(kept) - 1


@both_features
def test_big_directory(rwimage, fset):
    """3000 entries: from inline dentries to a multi-level hashed directory;
    every third deleted, new names into the holes, all found again."""
    img = rwimage(features=FEATURES[fset])
    p = img.mount()
    d = os.path.join(p, "big")
    os.mkdir(d)
    names = ["%05d-%s" % (i, "x" * (i % 90)) for i in range(3000)]
    for n in names:
        os.close(os.open(os.path.join(d, n), os.O_WRONLY | os.O_CREAT, 0o644))
    assert sorted(os.listdir(d)) == sorted(names)
    for n in names[::3]:
        os.unlink(os.path.join(d, n))
    left = set(names) - set(names[::3])
    assert set(os.listdir(d)) == left
    extra = ["new-%04d" % i for i in range(500)]
    for n in extra:
        os.mkdir(os.path.join(d, n))
    left |= set(extra)
    assert set(os.listdir(d)) == left
    for n in names[1:200:3]:
        assert os.path.isfile(os.path.join(d, n))
    exp = {"big": {"nlink": str(2 + len(extra))}}
    exp.update({"big/" + n: {"type": "!"} for n in names[::3]})
    man = img.finish(expect(exp))
    assert {k[4:] for k in man.entries if k.startswith("big/")} == {M.escape(n) for n in left}
    # lookups of names that are not there, on the cold read-only mount
    p = img.mount(ro=True)
    try:
        for n in names[::300]:
            assert not os.path.exists(os.path.join(p, "big", n))
        for n in sorted(left)[::97]:
            assert os.path.exists(os.path.join(p, "big", n))
    finally:
        img.unmount()


def test_fsync_calls(rwimage):
    """fsync, fdatasync and a directory fsync succeed, with either fsync mode."""
    for opts in ((), ("fsync_checkpoint",)):
        img = rwimage(options=opts, name="fs%d" % len(opts))
        p = img.mount()
        fd = os.open(os.path.join(p, "f"), os.O_RDWR | os.O_CREAT, 0o644)
        os.write(fd, b"synced")
        os.fsync(fd)
        os.write(fd, b" twice")
        os.fdatasync(fd)
        os.close(fd)
        os.mkdir(os.path.join(p, "d"))
        dfd = os.open(os.path.join(p, "d"), os.O_RDONLY)
        os.fsync(dfd)
        os.close(dfd)
        os.sync()
        img.finish(expect({"f": {"content": sha(b"synced twice")}, "d": {"type": "d"}}))


def test_fastboot_fsync_checkpoints(rwimage):
    """-o fastboot (the kernel's name for fsync_checkpoint): an fsync()ed
    file survives SIGKILL in the checkpoint itself, so a read-only mount
    (which replays nothing) shows it; without the option it awaits
    roll-forward and the read-only mount does not."""
    no_periodic = "checkpoint_interval=3600"
    for opts, seen in (((no_periodic, "fastboot"), True), ((no_periodic,), False)):
        img = rwimage(options=opts, name="fb%d" % len(opts))
        p = img.mount()
        write_file(os.path.join(p, "f"), b"fast", sync=True)
        img.crash()
        p = img.mount(ro=True)
        try:
            assert os.path.exists(os.path.join(p, "f")) == seen, opts
        finally:
            img.unmount()
        img.mount()     # read-write: rolls forward what the checkpoint lacks
        img.finish(expect({"f": {"content": sha(b"fast")}}))


def test_parallel_writers(rwimage):
    """Threads creating, writing, renaming and deleting in one directory and
    their own, at once."""
    img = rwimage()
    p = img.mount()
    os.mkdir(os.path.join(p, "shared"))
    errors = []
    want = {}
    lock = threading.Lock()

    def worker(t):
        try:
            own = os.path.join(p, "t%d" % t)
            os.mkdir(own)
            for i in range(40):
                b = blob(1000 * i + t, t * 1000 + i)
                name = os.path.join(p, "shared", "t%d-%02d" % (t, i))
                write_file(name, b)
                if i % 3 == 0:
                    dst = os.path.join(own, "moved-%02d" % i)
                    os.rename(name, dst)
                    name = dst
                if i % 5 == 0:
                    os.unlink(name)
                    continue
                with lock:
                    want[os.path.relpath(name, p)] = sha(b)
        except Exception as e:   # noqa: BLE001
            errors.append((t, e))

    threads = [threading.Thread(target=worker, args=(t,)) for t in range(6)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert errors == []
    man = img.finish(expect({k: {"content": v} for k, v in want.items()}))
    files = {k for k, e in man.entries.items() if e["type"] == "f"}
    assert files == set(want)


def test_parallel_writers_same_file(rwimage):
    """One file changed at once through pwrite from several threads (each
    owning interleaved, unaligned stripes, so neighbours share blocks), a
    shared writable mapping (its write-back arrives as asynchronous WRITEs),
    a thread growing and shrinking the tail, fsync and fdatasync in a loop,
    and readers.  The result is what the writes say, byte for byte."""
    import mmap
    img = rwimage()
    p = img.mount()
    path = os.path.join(p, "shared")
    size, stripe, writers = 3 * MiB, 3001, 4
    model = bytearray(blob(size, 7))
    write_file(path, bytes(model))
    tail = os.path.join(p, "tail")
    errors = []

    def guard(fn):
        def run(*a):
            try:
                fn(*a)
            except Exception as e:   # noqa: BLE001
                errors.append(e)
        return run

    # region [0, 2 MiB) is written by pwrite, stripe k by thread k % writers;
    # [2 MiB, 3 MiB) through the mapping only
    plans = {t: [] for t in range(writers)}
    rng = random.Random(11)
    for k in range(2 * MiB // stripe):
        lo, hi = k * stripe, min((k + 1) * stripe, 2 * MiB)
        for _ in range(2):
            a = rng.randrange(lo, hi)
            b = rng.randrange(a, hi) + 1
            data = rng.randbytes(b - a)
            plans[k % writers].append((a, data))
    # one thread goes through its stripes in random order; stripes are
    # disjoint between threads, so each thread's own order sets the result
    rng.shuffle(plans[0])
    for t in range(writers):
        for a, data in plans[t]:
            model[a:a + len(data)] = data
    maps = []
    for _ in range(200):
        a = rng.randrange(2 * MiB, size - 64)
        data = rng.randbytes(rng.randrange(1, 64))
        maps.append((a, data))
        model[a:a + len(data)] = data

    @guard
    def writer(t):
        fd = os.open(path, os.O_WRONLY)
        try:
            for a, data in plans[t]:
                assert os.pwrite(fd, data, a) == len(data)
        finally:
            os.close(fd)

    @guard
    def mapper():
        fd = os.open(path, os.O_RDWR)
        try:
            with mmap.mmap(fd, size - 2 * MiB, offset=2 * MiB) as mm:
                for i, (a, data) in enumerate(maps):
                    mm[a - 2 * MiB:a - 2 * MiB + len(data)] = data
                    if i % 50 == 49:
                        mm.flush()
        finally:
            os.close(fd)

    done = threading.Event()

    @guard
    def syncer():
        fd = os.open(path, os.O_RDONLY)
        try:
            while not done.is_set():
                os.fsync(fd)
                os.fdatasync(fd)
        finally:
            os.close(fd)

    @guard
    def reader():
        fd = os.open(path, os.O_RDONLY)
        r = random.Random(5)
        try:
            while not done.is_set():
                off = r.randrange(0, size)
                got = os.pread(fd, 65536, off)
                assert len(got) == min(65536, size - off)
        finally:
            os.close(fd)

    @guard
    def tailer():
        r = random.Random(9)
        fd = os.open(tail, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            for _ in range(60):
                n = r.randrange(0, 300000)
                os.ftruncate(fd, n)
                os.pwrite(fd, b"x" * 5000, r.randrange(0, 300000))
        finally:
            os.close(fd)

    background = [threading.Thread(target=f) for f in (syncer, reader, reader)]
    work = [threading.Thread(target=writer, args=(t,)) for t in range(writers)]
    work += [threading.Thread(target=mapper), threading.Thread(target=tailer)]
    for th in background + work:
        th.start()
    for th in work:
        th.join()
    done.set()
    for th in background:
        th.join()
    assert errors == []
    assert read_file(path) == bytes(model)
    img.finish(expect({"shared": {"content": sha(bytes(model)), "size": str(size)}}))


def lsattr(path):
    out = subprocess.run(["lsattr", "-d", path], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, check=True).stdout
    return out.split()[0]


def chattr(*args):
    return subprocess.run(["chattr"] + list(args), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True).returncode


@pytest.mark.skipif(os.geteuid() != 0, reason="chattr +i/+a needs CAP_LINUX_IMMUTABLE")
def test_chattr_immutable_and_append(rwimage):
    """chattr/lsattr (FS_IOC_SETFLAGS, and FS_IOC_FSGETXATTR which the
    kernel asks first): +i refuses every change to the file and every
    name change in a directory, +a allows only appends and new names, with
    EPERM as on the kernel's f2fs; the flags survive a remount and fsck."""
    img = rwimage()
    p = img.mount()
    j = lambda *a: os.path.join(p, *a)   # noqa: E731
    write_file(j("i"), b"frozen")
    write_file(j("a"), b"log\n")
    write_file(j("other"), b"x")
    os.mkdir(j("di"))
    write_file(j("di", "in"), b"in")
    os.mkdir(j("da"))
    write_file(j("da", "in"), b"in")
    assert chattr("+i", j("i"), j("di")) == 0
    assert chattr("+a", j("a"), j("da")) == 0
    assert chattr("+d", "+A", j("other")) == 0
    assert "i" in lsattr(j("i")) and "a" in lsattr(j("a"))
    assert "d" in lsattr(j("other")) and "A" in lsattr(j("other"))

    def eperm(fn, *a):
        assert errno_of(fn, *a) == errno.EPERM, (fn, a)

    for path in (j("i"), j("a")):
        eperm(os.open, path, os.O_WRONLY)
        eperm(os.truncate, path, 0)
        eperm(os.chmod, path, 0o600)
        eperm(os.utime, path, (1, 1))
        eperm(os.setxattr, path, "user.x", b"1")
        eperm(os.link, path, path + "-link")
        eperm(os.rename, path, path + "-moved")
        eperm(os.unlink, path)
    eperm(os.open, j("i"), os.O_WRONLY | os.O_APPEND)
    eperm(os.utime, j("i"), None)
    eperm(fallocate_appending, j("a"), FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE)
    fd = os.open(j("a"), os.O_WRONLY | os.O_APPEND)
    os.write(fd, b"appended\n")
    os.close(fd)
    os.utime(j("a"), None)          # "now" needs only write access
    # directories: +i takes no new names and loses none; +a only gains
    eperm(os.open, j("di", "new"), os.O_WRONLY | os.O_CREAT, 0o644)
    eperm(os.mkdir, j("di", "sub"))
    eperm(os.unlink, j("di", "in"))
    eperm(os.rename, j("di", "in"), j("moved"))
    eperm(os.rename, j("other"), j("di", "other"))
    write_file(j("da", "new"), b"new")
    eperm(os.unlink, j("da", "in"))
    eperm(os.rename, j("da", "in"), j("da", "renamed"))
    # a handle opened before +i cannot write either
    fd = os.open(j("other"), os.O_WRONLY)
    assert chattr("+i", j("other")) == 0
    eperm(os.write, fd, b"late")
    os.close(fd)
    assert chattr("-i", j("other")) == 0
    # what this driver does not change: compression
    assert chattr("+c", j("other")) != 0
    img.unmount()
    fsutil.fsck_check(img.image)
    p = img.mount()
    assert "i" in lsattr(j("i")) and "a" in lsattr(j("da"))
    flags = lsattr(j("other"))
    assert "d" in flags and "A" in flags and "i" not in flags
    assert read_file(j("a")) == b"log\nappended\n"
    assert chattr("-i", j("i"), j("di")) == 0 and chattr("-a", j("a"), j("da")) == 0
    os.unlink(j("di", "in"))
    write_file(j("i"), b"thawed")
    img.finish(expect({"i": {"content": sha(b"thawed")}, "di": {"type": "d"},
                       "da/new": {"content": sha(b"new")}}))


@pytest.mark.skipif(os.geteuid() != 0, reason="chattr needs root here")
def test_chattr_sync_and_dirsync_survive_crash(rwimage):
    """chattr +S: every write is durable as it returns (as fsync); +D: every
    change to a directory's names is.  Both survive SIGKILL of the daemon
    with no fsync of their own; the same changes without the flags are lost."""
    img = rwimage()
    p = img.mount()
    j = lambda *a: os.path.join(p, *a)   # noqa: E731
    for n in ("s", "plain"):
        write_file(j(n), b"")
    os.mkdir(j("dsync"))
    os.mkdir(j("dplain"))
    for d in ("dsync", "dplain"):
        write_file(j(d, "old"), b"")
    assert chattr("+S", j("s")) == 0
    assert chattr("+D", j("dsync")) == 0
    dfd = os.open(p, os.O_RDONLY)
    os.fsync(dfd)                   # a directory's fsync is a checkpoint
    os.close(dfd)
    # in this order: +D's checkpoints would take along what came before them
    for d in ("dsync", "dplain"):
        write_file(j(d, "new"), b"")
        os.unlink(j(d, "old"))
    for n in ("s", "plain"):
        fd = os.open(j(n), os.O_WRONLY)
        os.write(fd, b"written " + n.encode())
        os.close(fd)
    img.crash()
    p = img.mount()
    assert read_file(j("s")) == b"written s"
    assert read_file(j("plain")) == b""
    assert sorted(os.listdir(j("dsync"))) == ["new"]
    assert sorted(os.listdir(j("dplain"))) == ["old"]
    assert "S" in lsattr(j("s")) and "D" in lsattr(j("dsync"))
    img.finish(expect({"s": {"content": sha(b"written s")}, "dsync/new": {"type": "f"}}))


def fallocate_appending(path, mode):
    fd = os.open(path, os.O_WRONLY | os.O_APPEND)
    try:
        if LIBC.fallocate64(fd, mode, 0, 4096) != 0:
            e = ctypes.get_errno()
            raise OSError(e, os.strerror(e))
    finally:
        os.close(fd)


def test_read_only_mount_refuses_changes(rwimage):
    """-o ro: every change fails with EROFS and the image stays as it was."""
    img = rwimage()
    p = img.mount()
    write_file(os.path.join(p, "f"), b"before")
    img.unmount()
    before = sha(read_file(img.image))
    p = img.mount(ro=True)
    j = lambda *a: os.path.join(p, *a)   # noqa: E731
    for fn in (lambda: os.open(j("f"), os.O_WRONLY),
               lambda: os.open(j("new"), os.O_WRONLY | os.O_CREAT, 0o644),
               lambda: os.mkdir(j("d")), lambda: os.unlink(j("f")),
               lambda: os.rename(j("f"), j("g")), lambda: os.chmod(j("f"), 0o600),
               lambda: os.truncate(j("f"), 0), lambda: os.setxattr(j("f"), "user.x", b"1"),
               lambda: os.symlink("f", j("l")), lambda: os.link(j("f"), j("h"))):
        assert errno_of(fn) == errno.EROFS
    img.unmount()
    assert sha(read_file(img.image)) == before
    img.mount()
    img.finish(expect({"f": {"content": sha(b"before")}}))


def test_signal_unmounts_cleanly(rwimage):
    """SIGTERM and SIGINT unmount with the final checkpoint, as fusermount -u."""
    for sig in (signal.SIGTERM, signal.SIGINT):
        img = rwimage(name="sig%d" % sig)
        p = img.mount()
        write_file(os.path.join(p, "f"), b"kept")
        os.mkdir(os.path.join(p, "d"))
        m = img.m
        m.proc.send_signal(sig)
        m.proc.wait(timeout=30)
        assert m.proc.returncode == 0, m.stderr()
        deadline = time.monotonic() + 10
        while fsutil.is_fuse_mount(m.path) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not fsutil.is_fuse_mount(m.path)
        img.m = None
        m._close_log()
        fsutil.fsck_check(img.image)
        img.mount(ro=True)
        assert read_file(os.path.join(img.path, "f")) == b"kept"
        img.unmount()


def test_mmap_and_copy_file_range(rwimage):
    """Shared writable mappings are written back (at msync and munmap), and
    copy_file_range works through the kernel's fallback."""
    import mmap
    img = rwimage()
    p = img.mount()
    j = lambda *a: os.path.join(p, *a)   # noqa: E731
    write_file(j("mapped"), bytes(3 * 4096 + 100))
    fd = os.open(j("mapped"), os.O_RDWR)
    mm = mmap.mmap(fd, 3 * 4096 + 100)
    mm[10:15] = b"hello"
    mm.flush()
    mm[3 * 4096 + 90:3 * 4096 + 100] = b"0123456789"
    mm.close()
    os.close(fd)
    want = bytearray(3 * 4096 + 100)
    want[10:15] = b"hello"
    want[-10:] = b"0123456789"
    src = blob(3 * MiB + 7, 1)
    write_file(j("src"), src)
    fi = os.open(j("src"), os.O_RDONLY)
    fo = os.open(j("dst"), os.O_WRONLY | os.O_CREAT, 0o644)
    done = 0
    while done < len(src):
        n = os.copy_file_range(fi, fo, len(src) - done)
        assert n > 0
        done += n
    os.close(fi)
    os.close(fo)
    img.finish(expect({"mapped": {"content": sha(bytes(want))},
                       "dst": {"content": sha(src), "size": str(len(src))}}))
