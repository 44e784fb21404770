"""Requests that name what no longer exists, or positions never handed out.

A program may hold an open file or directory that is then unlinked or
renamed over, sit in a directory another removes, seek a directory to any
offset, or race lookups against unlinks.  None of that is damage to the
image: each gets the kernel's answer (the open inode stays usable; a stale
number is ESTALE), and the image is never marked as needing fsck, so the
next read-write mount is not refused."""

import ctypes
import ctypes.util
import errno
import multiprocessing
import os
import random
import socket
import stat
import struct
import time

import fsutil
from test_handles import drop_caches
from test_write import MiB, blob, read_file, rwimage, write_file  # noqa: F401

ESTALE_OK = (0, errno.ESTALE)


def fsck_flag_clear(img, m):
    """After unmount: no inconsistency reported, fsck clean, the checkpoint
    does not ask for fsck, and a read-write mount is accepted."""
    out = m.stderr()
    assert "inconsistency" not in out and "referenced but free" not in out, out
    r = fsutil.run(["fsck.f2fs", "-f", "--dry-run", img.image])
    assert not fsutil.fsck_problems(r.stdout, r.returncode), r.stdout
    state = [line for line in r.stdout.splitlines() if "checkpoint state" in line]
    assert state and "fsck" not in state[0], state
    img.mount()
    img.unmount()


def errno_of_call(fn):
    try:
        fn()
    except OSError as e:
        return e.errno
    return 0


# ---------------------------------------------------------------- open handles

def test_rename_over_open_directory_and_file(rwimage):
    """rename() over an open directory or file: the handle still works and
    shows no links, as on the kernel (the directory's listing is gone)."""
    img = rwimage(size=64 * MiB)
    p = img.mount()
    os.mkdir(os.path.join(p, "d1"))
    os.mkdir(os.path.join(p, "d2"))
    write_file(os.path.join(p, "f1"), b"one")
    write_file(os.path.join(p, "f2"), b"two")
    dfd = os.open(os.path.join(p, "d2"), os.O_RDONLY | os.O_DIRECTORY)
    ffd = os.open(os.path.join(p, "f2"), os.O_RDWR)
    try:
        os.rename(os.path.join(p, "d1"), os.path.join(p, "d2"))
        os.rename(os.path.join(p, "f1"), os.path.join(p, "f2"))
        time.sleep(1.2)     # past the attribute timeout: fstat asks the daemon
        assert os.fstat(dfd).st_nlink == 0
        assert stat.S_ISDIR(os.fstat(dfd).st_mode)
        st = os.fstat(ffd)
        assert st.st_nlink == 0 and st.st_size == 3
        assert os.pread(ffd, 10, 0) == b"two"
        assert os.pwrite(ffd, b"still here", 0) == 10
        os.fsync(ffd)
        os.ftruncate(ffd, 5)
        assert os.pread(ffd, 10, 0) == b"still"
        os.fchmod(ffd, 0o600)
        os.setxattr(ffd, "user.x", b"y")
        assert os.getxattr(ffd, "user.x") == b"y"
        assert sorted(os.listdir(p)) == ["d2", "f2"]
        assert read_file(os.path.join(p, "f2")) == b"one"
    finally:
        os.close(dfd)
        os.close(ffd)
    m = img.unmount()
    fsck_flag_clear(img, m)


def test_removed_cwd_and_path_handles(rwimage):
    """A directory removed while a process sits in it, a file unlinked
    behind an O_PATH descriptor: neither is open for FUSE, so the inode is
    freed at once (the space is back when unlink returns); what the kernel
    then asks about it is stale, not corrupt."""
    img = rwimage(size=64 * MiB)
    p = img.mount()
    os.makedirs(os.path.join(p, "a", "b"))
    write_file(os.path.join(p, "a", "f"), b"x")
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            os.close(r)
            os.chdir(os.path.join(p, "a", "b"))
            os.write(w, b"in")
            time.sleep(1.5)
            for fn in (lambda: os.stat("."), lambda: os.listdir("."),
                       lambda: os.close(os.open(".", os.O_RDONLY))):
                e = errno_of_call(fn)
                if e not in (0, errno.ENOENT, errno.ESTALE):
                    code = e
            os.chdir("..")
            os.chdir(p)
        except BaseException:
            code = 99
        os._exit(code)
    os.close(w)
    assert os.read(r, 2) == b"in"
    os.close(r)
    os.rmdir(os.path.join(p, "a", "b"))
    fd = os.open(os.path.join(p, "a", "f"), os.O_PATH)
    os.unlink(os.path.join(p, "a", "f"))
    time.sleep(1.2)
    e = errno_of_call(lambda: os.fstat(fd))
    os.close(fd)
    _, status = os.waitpid(pid, 0)
    assert e in ESTALE_OK, os.strerror(e)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, \
        os.strerror(os.WEXITSTATUS(status))
    assert os.listdir(os.path.join(p, "a")) == []
    m = img.unmount()
    fsck_flag_clear(img, m)


def test_unlinked_file_outlives_close_behind_o_path(rwimage):
    """Opened, unlinked, closed, while an O_PATH descriptor still refers to
    it: the kernel holds the inode, so it stays (an orphan) and fstat shows
    it with no links, as on the kernel's f2fs; once the kernel forgets it,
    it is freed while still mounted, and fsck finds nothing."""
    img = rwimage(size=64 * MiB)
    p = img.mount()
    f = os.path.join(p, "f")
    write_file(f, b"y" * 5000)
    free_before = os.statvfs(p).f_ffree
    fd = os.open(f, os.O_RDONLY)
    pfd = os.open(f, os.O_PATH)
    os.unlink(f)
    os.close(fd)                 # the last RELEASE: the O_PATH keeps it
    time.sleep(0.5)
    drop_caches()
    st = os.fstat(pfd)
    assert st.st_nlink == 0 and st.st_size == 5000, st
    assert os.statvfs(p).f_ffree == free_before
    os.close(pfd)
    deadline = time.monotonic() + 10
    while os.statvfs(p).f_ffree < free_before + 1 and time.monotonic() < deadline:
        drop_caches()
        time.sleep(0.2)
    assert os.statvfs(p).f_ffree > free_before
    m = img.unmount()
    fsck_flag_clear(img, m)


# ---------------------------------------------------------------- directory offsets

LIBC = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
LIBC.opendir.restype = ctypes.c_void_p
LIBC.opendir.argtypes = [ctypes.c_char_p]
LIBC.readdir.restype = ctypes.c_void_p
LIBC.readdir.argtypes = [ctypes.c_void_p]
LIBC.telldir.restype = ctypes.c_long
LIBC.telldir.argtypes = [ctypes.c_void_p]
LIBC.seekdir.argtypes = [ctypes.c_void_p, ctypes.c_long]
LIBC.closedir.argtypes = [ctypes.c_void_p]
DIRENT_NAME = 19    # glibc struct dirent on 64-bit Linux: ino, off, reclen, type, name


def next_name(dirp):
    """(name, 0), (None, 0) at the end, or (None, errno)."""
    ctypes.set_errno(0)
    ent = LIBC.readdir(dirp)
    if not ent:
        return None, ctypes.get_errno()
    return ctypes.string_at(ent + DIRENT_NAME).decode(), 0


def seek_everywhere(path, names):
    """telldir/seekdir as generic/676 does it: every recorded position gives
    its entry back; every other position gives some real entry or the end."""
    dirp = LIBC.opendir(os.fsencode(path))
    assert dirp
    try:
        seen = []
        while True:
            pos = LIBC.telldir(dirp)
            name, err = next_name(dirp)
            assert err == 0, os.strerror(err)
            if name is None:
                break
            seen.append((pos, name))
        assert sorted(n for _, n in seen) == sorted(names + [".", ".."])
        for pos, name in random.Random(1).sample(seen, min(len(seen), 300)):
            LIBC.seekdir(dirp, pos)
            assert next_name(dirp) == (name, 0)
        top = max(pos for pos, _ in seen) + 3
        for pos in range(0, top, max(1, top // 1500)):
            LIBC.seekdir(dirp, pos)
            name, err = next_name(dirp)
            assert err == 0, (pos, os.strerror(err))
            assert name is None or name in names or name in (".", ".."), (pos, name)
    finally:
        LIBC.closedir(dirp)


def test_directory_seek_to_any_offset(rwimage):
    img = rwimage(size=64 * MiB)
    p = img.mount()
    rng = random.Random(676)
    big, small = os.path.join(p, "big"), os.path.join(p, "small")
    os.mkdir(big)
    os.mkdir(small)
    names = set()
    while len(names) < 600:
        names.add("".join(rng.choice("abcdefghijklmnopqrstuvwxyz")
                          for _ in range(rng.randrange(8, 70))))
    for n in names:
        write_file(os.path.join(big, n), b"")
    # some deleted in between: their slots keep stale dentry fields
    for n in sorted(names)[::7]:
        os.unlink(os.path.join(big, n))
    for n in ("s1", "a-much-longer-name-of-several-slots", "s3"):
        write_file(os.path.join(small, n), b"")
    seek_everywhere(big, sorted(os.listdir(big)))
    seek_everywhere(small, sorted(os.listdir(small)))
    m = img.unmount()
    fsck_flag_clear(img, m)


# ---------------------------------------------------------------- races

NAMES = 60


def stress_worker(top, seed, seconds, q):
    """dirstress-like: random namespace changes and lookups on shared names;
    any errno outside what such races explain is reported."""
    rng = random.Random(seed)
    allowed = {errno.ENOENT, errno.EEXIST, errno.ENOTDIR, errno.EISDIR, errno.ENOTEMPTY,
               errno.ELOOP, errno.ESTALE, errno.EINVAL, errno.ENXIO}
    bad = []
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        a = os.path.join(top, "n%d" % rng.randrange(NAMES))
        b = os.path.join(top, "n%d" % rng.randrange(NAMES))
        op = rng.randrange(10)
        try:
            if op == 0:
                # (O_NONBLOCK: the name may be a FIFO by now)
                os.close(os.open(a, os.O_CREAT | os.O_WRONLY | os.O_TRUNC | os.O_NONBLOCK, 0o644))
            elif op == 1:
                os.mkdir(a)
            elif op == 2:
                os.symlink("n0", a)
            elif op == 3:
                os.mknod(a, stat.S_IFIFO | 0o644)
            elif op == 4:
                os.rename(a, b)
            elif op == 5:
                os.unlink(a)
            elif op == 6:
                os.rmdir(a)
            elif op == 7:
                os.lstat(a)
                os.stat(b)
            elif op == 8:
                for n in os.listdir(top):
                    try:
                        os.lstat(os.path.join(top, n))
                    except OSError as e:
                        if e.errno not in allowed:
                            raise
            else:
                os.chdir(a)
                os.stat(".")
                os.chdir(top)
        except OSError as e:
            if e.errno not in allowed:
                bad.append("%s: %s" % (op, e))
    q.put(bad)


def test_namespace_races(rwimage):
    """Processes creating, renaming, removing and looking up the same names
    (and sitting in directories others remove), as generic/011 does."""
    img = rwimage(size=128 * MiB)
    p = img.mount()
    top = os.path.join(p, "stress")
    os.mkdir(top)
    ctx = multiprocessing.get_context("fork")
    q = ctx.Queue()
    procs = [ctx.Process(target=stress_worker, args=(top, i, 8, q)) for i in range(6)]
    for pr in procs:
        pr.start()
    bad = []
    for _ in procs:
        bad += q.get(timeout=120)
    for pr in procs:
        pr.join(timeout=60)
    assert bad == [], bad[:20]
    fsutil.run(["rm", "-rf", top], check=True)
    assert os.listdir(p) == []
    m = img.unmount()
    fsck_flag_clear(img, m)


# ---------------------------------------------------------------- control socket

MSG = struct.Struct("<IIIiiI128s")   # struct f2fs_keyctl_msg
MSG_MAGIC, MSG_VERSION, OP_GET_POLICY = 0x46324B43, 3, 4


def get_policy_errno(sock_path, fd):
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(10)
        s.connect(sock_path)
        s.sendall(MSG.pack(MSG_MAGIC, MSG_VERSION, OP_GET_POLICY, 0, fd, 0, b""))
        buf = b""
        while len(buf) < MSG.size:
            chunk = s.recv(MSG.size - len(buf))
            assert chunk
            buf += chunk
    return MSG.unpack(buf)[3]


def test_control_socket_requests(rwimage, tmp_path):
    """A policy request names a file the client holds open: files of the
    mount answer, descriptors that are closed or of another file system are
    refused, an unlinked-but-open file still answers, and no request marks
    the image as needing fsck."""
    sock = str(tmp_path / "ctl.sock")
    img = rwimage(size=64 * MiB, options=["keyctl_socket=" + sock])
    p = img.mount()
    write_file(os.path.join(p, "big"), blob(6 * MiB, 1))   # direct and indirect nodes
    os.mkdir(os.path.join(p, "dir"))
    gone = os.path.join(p, "gone")
    write_file(gone, b"")
    fds = [os.open(os.path.join(p, n), os.O_RDONLY) for n in ("big", "dir", "gone")]
    fds.append(os.open(p, os.O_RDONLY))
    other = os.open(str(tmp_path), os.O_RDONLY)
    os.unlink(gone)
    try:
        for fd in fds:
            e = get_policy_errno(sock, fd)
            assert e == errno.ENODATA, (fd, os.strerror(e))    # not encrypted
        assert get_policy_errno(sock, other) == errno.EXDEV
        closed = max(fds + [other]) + 50
        for fd in (-1, closed, 1 << 30):
            assert get_policy_errno(sock, fd) == errno.EBADF, fd
    finally:
        for fd in fds + [other]:
            os.close(fd)
    m = img.unmount()
    fsck_flag_clear(img, m)
