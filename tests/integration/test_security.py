"""What another local user can do to a mount made by root with allow_other,
and what f2fs-fuse and f2fs-fusectl refuse.  The other user is uid 65534
(setpriv --reuid 65534 --regid 65534 --clear-groups); docs/security.md has
the threat model these tests hold the code to.
"""

import ctypes
import errno
import fcntl
import os
import shutil
import socket
import stat
import struct
import subprocess
import time

import pytest

import fsutil
from test_keys import (KEY_ID, Ctl, a_plain_file, fusectl, key_bytes,  # noqa: F401
                       key_file, new_image, public_dir)

NOBODY = 65534
PY = "/usr/bin/python3"         # one every user can run
SETPRIV = ["setpriv", "--reuid=%d" % NOBODY, "--regid=%d" % NOBODY, "--clear-groups"]

pytestmark = pytest.mark.skipif(
    os.geteuid() != 0 or shutil.which("setpriv") is None or not os.access(PY, os.X_OK),
    reason="needs root, setpriv and %s" % PY)


def _ioc(direction, typ, nr, size):
    return (direction << 30) | (size << 16) | (typ << 8) | nr


FS_IOC_GETFLAGS = _ioc(2, ord("f"), 1, 8)
FS_IOC_SETFLAGS = _ioc(1, ord("f"), 2, 8)
FS_IOC32_SETFLAGS = _ioc(1, ord("f"), 2, 4)
FS_IOC_FSGETXATTR = _ioc(2, ord("X"), 31, 28)
FS_IOC_FSSETXATTR = _ioc(1, ord("X"), 32, 28)
FS_IMMUTABLE_FL, FS_APPEND_FL, FS_NODUMP_FL = 0x10, 0x20, 0x40
FS_XFLAG_IMMUTABLE, FS_XFLAG_APPEND = 0x8, 0x10
FS_XFLAG_DAX = 0x8000

F2FS_IOC_ADD_KEY = _ioc(3, 0xF2, 1, 96)
F2FS_IOC_REMOVE_KEY = _ioc(3, 0xF2, 2, 32)
UAPI_REMOVE_KEY = _ioc(3, ord("f"), 24, 64)
UAPI_REMOVE_KEY_ALL_USERS = _ioc(3, ord("f"), 25, 64)

MSG_MAGIC = 0x46324b43
MSG_SIZE = 24 + 128


def as_nobody(code, *args, timeout=120, check=True):
    """Run Python code as uid 65534; returns the CompletedProcess (text)."""
    r = subprocess.run(SETPRIV + [PY, "-c", code] + [str(a) for a in args],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       timeout=timeout)
    if check and r.returncode != 0:
        raise AssertionError("as uid %d: exit %d\n%s%s" % (NOBODY, r.returncode, r.stdout,
                                                           r.stderr))
    return r


@pytest.fixture
def shared_dir(public_dir):
    """A directory every user can reach and write (tmp_path is private to root)."""
    os.chmod(public_dir, 0o777)
    return public_dir


@pytest.fixture
def root_mount(f2fs_fuse, shared_dir):
    """root_mount(options) -> context manager: a fresh encrypt-capable image,
    mounted by root with allow_other in a directory everyone can reach."""
    def _mount(options=("rw",), name="mnt"):
        img = os.path.join(shared_dir, name + ".img")
        new_image(img)
        os.chmod(img, 0o644)
        return fsutil.mounted(f2fs_fuse, img, os.path.join(shared_dir, name),
                              options=tuple(options) + ("allow_other",))
    return _mount


def flags_of(path):
    """The flags chattr sets (not inline data and the like)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        flags = struct.unpack("i", fcntl.ioctl(fd, FS_IOC_GETFLAGS, b"\0" * 8)[:4])[0]
    finally:
        os.close(fd)
    return flags & (FS_IMMUTABLE_FL | FS_APPEND_FL | FS_NODUMP_FL)


# ---------------------------------------------------------------- chattr

SETFLAGS_AS = r"""
import errno, fcntl, os, struct, sys
cmd, path, val = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
fd = os.open(path, os.O_RDONLY)
if cmd == %d:
    arg = struct.pack("IIIII8x", val, 0, 0, 0, 0)
else:
    arg = struct.pack("i", val) + (b"" if cmd == %d else b"\0" * 4)
try:
    fcntl.ioctl(fd, cmd, arg)
    print("ok")
except OSError as e:
    print(errno.errorcode[e.errno])
""" % (FS_IOC_FSSETXATTR, FS_IOC32_SETFLAGS)


def test_inode_flags_need_owner_and_capability(root_mount):
    """FS_IOC32_SETFLAGS from a 64-bit process reaches the daemon without the
    VFS's checks: the daemon makes them (owner or CAP_FOWNER, and
    CAP_LINUX_IMMUTABLE for immutable and append-only), from the caller's
    own capabilities, for every number that sets flags."""
    with root_mount() as m:
        rootfile = os.path.join(m.path, "rootfile")
        appendfile = os.path.join(m.path, "appendfile")
        theirs = os.path.join(m.path, "theirs")
        for p in (rootfile, appendfile, theirs):
            with open(p, "w") as f:
                f.write("x\n")
            os.chmod(p, 0o644)
        os.chown(theirs, NOBODY, NOBODY)
        fd = os.open(appendfile, os.O_RDONLY)
        fcntl.ioctl(fd, FS_IOC_SETFLAGS, struct.pack("q", FS_APPEND_FL))
        os.close(fd)

        def nobody(cmd, path, val):
            return as_nobody(SETFLAGS_AS, cmd, path, val).stdout.strip()

        for cmd in (FS_IOC32_SETFLAGS, FS_IOC_SETFLAGS):
            assert nobody(cmd, rootfile, FS_IMMUTABLE_FL) == "EPERM"
            assert nobody(cmd, m.path, FS_IMMUTABLE_FL) == "EPERM"
            assert nobody(cmd, appendfile, 0) == "EPERM"
            # their own file: ordinary flags yes, immutable no
            assert nobody(cmd, theirs, FS_NODUMP_FL) == "ok"
            assert nobody(cmd, theirs, FS_IMMUTABLE_FL) == "EPERM"
        assert nobody(FS_IOC_FSSETXATTR, rootfile, FS_XFLAG_IMMUTABLE) == "EPERM"
        assert nobody(FS_IOC_FSSETXATTR, theirs, FS_XFLAG_APPEND) == "EPERM"
        assert flags_of(rootfile) == 0
        assert flags_of(m.path) & FS_IMMUTABLE_FL == 0
        assert flags_of(appendfile) == FS_APPEND_FL
        assert flags_of(theirs) == FS_NODUMP_FL
        with open(appendfile, "a") as f:
            f.write("root may still append\n")
        os.mkdir(os.path.join(m.path, "root-may-mkdir"))

        # root without CAP_LINUX_IMMUTABLE: refused too (the capability counts, not uid 0)
        def root_without_cap(cmd, path, val):
            r = subprocess.run(["setpriv", "--bounding-set=-linux_immutable",
                                "--inh-caps=-linux_immutable", PY, "-c", SETFLAGS_AS,
                                str(cmd), path, str(val)], stdout=subprocess.PIPE, text=True,
                               timeout=60)
            return r.stdout.strip()
        assert root_without_cap(FS_IOC32_SETFLAGS, appendfile, 0) == "EPERM"
        assert root_without_cap(FS_IOC32_SETFLAGS, rootfile, FS_NODUMP_FL) == "ok"
        # and root with it, by each number
        assert nobody(FS_IOC32_SETFLAGS, rootfile, 0) == "EPERM"
        fd = os.open(rootfile, os.O_RDONLY)
        try:
            fcntl.ioctl(fd, FS_IOC32_SETFLAGS, struct.pack("i", FS_IMMUTABLE_FL))
            assert flags_of(rootfile) == FS_IMMUTABLE_FL
            fcntl.ioctl(fd, FS_IOC_FSSETXATTR, struct.pack("IIIII8x", FS_XFLAG_APPEND, 0, 0, 0,
                                                           0))
            assert flags_of(rootfile) == FS_APPEND_FL
            xa = fcntl.ioctl(fd, FS_IOC_FSGETXATTR, b"\0" * 28)
            assert struct.unpack_from("I", xa)[0] == FS_XFLAG_APPEND
            with pytest.raises(OSError) as ei:
                fcntl.ioctl(fd, FS_IOC_FSSETXATTR, struct.pack("IIIII8x", 0, 0, 0, 7, 0))
            assert ei.value.errno == errno.EOPNOTSUPP      # no project ids
            before = flags_of(rootfile)
            with pytest.raises(OSError) as ei:
                fcntl.ioctl(fd, FS_IOC_FSSETXATTR, struct.pack("IIIII8x",
                                                               FS_XFLAG_IMMUTABLE | FS_XFLAG_DAX,
                                                               0, 0, 0, 0))
            assert ei.value.errno == errno.EOPNOTSUPP      # DAX is refused, not dropped
            assert flags_of(rootfile) == before           # and nothing else applied
            fcntl.ioctl(fd, FS_IOC_SETFLAGS, struct.pack("q", 0))
        finally:
            os.close(fd)
        os.unlink(rootfile)
    fsutil.fsck_check(m.image)


def test_inode_flags_on_a_read_only_remount(root_mount):
    """The VFS's read-only check (mnt_want_write_file) is skipped for the
    compat number too: the daemon refuses flag changes itself."""
    from test_remount import remount
    with root_mount() as m:
        path = os.path.join(m.path, "f")
        with open(path, "w") as f:
            f.write("x\n")
        r = remount(m.binary, m.image, m.path, "ro,remount")
        assert r.returncode == 0, r.stderr
        fd = os.open(path, os.O_RDONLY)
        try:
            for cmd, arg in ((FS_IOC32_SETFLAGS, struct.pack("i", FS_NODUMP_FL)),
                             (FS_IOC_SETFLAGS, struct.pack("q", FS_NODUMP_FL))):
                with pytest.raises(OSError) as ei:
                    fcntl.ioctl(fd, cmd, arg)
                assert ei.value.errno == errno.EROFS
        finally:
            os.close(fd)
        assert flags_of(path) == 0
        r = remount(m.binary, m.image, m.path, "rw,remount")
        assert r.returncode == 0, r.stderr
    fsutil.fsck_check(m.image)


# ---------------------------------------------------------------- policies on the socket

SOCKET_PROBE = r"""
import errno, os, socket, struct, sys
sock, what = sys.argv[1], sys.argv[2:]
def ask(version, op, field, fd_keep=None):
    s = socket.socket(socket.AF_UNIX)
    s.connect(sock)
    s.sendall(struct.pack("<IIIiQ", 0x46324b43, version, op, 0, field) + bytes(128))
    r = b""
    while len(r) < 152:
        c = s.recv(152 - len(r))
        if not c:
            break
        r += c
    s.close()
    if len(r) < 152:
        return "closed"
    err = struct.unpack_from("<i", r, 12)[0]
    return errno.errorcode.get(err, str(err)) if err else "ok:" + r[24:48].hex()
out = []
for w in what:
    kind, arg = w.split("=", 1)
    if kind == "ino2":            # the version 2 message: a bare inode number
        out.append(ask(2, 4, int(arg)))
    elif kind == "ino3":          # version 3 with the number where the fd goes
        out.append(ask(3, 4, int(arg) & 0x7fffffff))
    elif kind == "open":          # version 3 with a descriptor we hold
        fd = os.open(arg, os.O_RDONLY)
        out.append(ask(3, 4, fd))
        os.close(fd)
    elif kind == "opath":
        fd = os.open(arg, os.O_PATH)
        out.append(ask(3, 4, fd))
        os.close(fd)
print(" ".join(out))
"""


def test_socket_policy_requests_name_only_open_files(root_mount, fusectl, key_file,
                                                      shared_dir):
    """A policy request names its file by a descriptor the client holds open;
    inode numbers of the client's choosing reach nothing (no key identifier of
    files it cannot open, no inode marked corrupt, no flood in the log)."""
    sock = os.path.join(shared_dir, "ctl.sock")
    ctl = Ctl(fusectl)
    with root_mount(options=("rw", "keyctl_socket=" + sock)) as m:
        ctl.out("add_key", m.path, input=key_bytes(key_file))
        private = os.path.join(m.path, "private")
        os.mkdir(private, 0o700)
        secret = os.path.join(private, "secret")
        os.mkdir(secret)
        ctl.out("set_policy", KEY_ID, secret)
        pub = os.path.join(m.path, "pub")
        os.mkdir(pub, 0o755)
        with open(os.path.join(pub, "file"), "w") as f:
            f.write("public\n")
        secret_ino = os.stat(secret).st_ino
        pubfile = os.path.join(pub, "file")
        # what each request may get: never a policy
        want = {"ino2=%d" % secret_ino: {"EPROTO"}, "ino3=%d" % secret_ino: {"EBADF", "EXDEV"}}
        for n in (0, 1, 2, 100000, 0xfffffff0, 1 << 40):
            want["ino2=%d" % n] = {"EPROTO"}      # the old message, by inode number
        for n in (0, 1, 2, 100000):
            # no descriptor of the client's, or one of another file system
            want["ino3=%d" % n] = {"EBADF", "EXDEV"}
        want["open=/etc/passwd"] = {"EXDEV"}
        want["open=" + pubfile] = {"ENODATA"}     # a file it may open: not encrypted
        want["opath=" + pubfile] = {"EBADF"}      # O_PATH opens no file
        probes = sorted(want)
        for _ in range(5):
            got = as_nobody(SOCKET_PROBE, sock, *probes).stdout.split()
            assert len(got) == len(probes), got
            for p, g in zip(probes, got):
                assert g in want[p], (p, g)
        # root's own descriptor of the encrypted directory gets its policy
        fd = os.open(secret, os.O_RDONLY)
        try:
            s = socket.socket(socket.AF_UNIX)
            s.connect(sock)
            s.sendall(struct.pack("<IIIiiI", MSG_MAGIC, 3, 4, 0, fd, 0) + bytes(128))
            r = b""
            while len(r) < MSG_SIZE:
                r += s.recv(MSG_SIZE - len(r))
            s.close()
        finally:
            os.close(fd)
        assert struct.unpack_from("<i", r, 12)[0] == 0
        assert r[24 + 8:24 + 24].hex() == KEY_ID
        assert len(m.stderr().splitlines()) < 20, m.stderr()
    fsutil.fsck_check(m.image)
    # nothing told the image it needs fsck: it mounts read-write again
    with fsutil.mounted(m.binary, m.image, m.path + "2", options=("rw",)) as m2:
        os.mkdir(os.path.join(m2.path, "still-writable"))
    fsutil.fsck_check(m.image)


# ---------------------------------------------------------------- key memory


def _daemon_pids(mountpoint):
    pids = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/cmdline" % d, "rb") as f:
                argv = f.read().split(b"\0")
        except OSError:
            continue
        if os.fsencode(mountpoint) in argv and any(a.endswith(b"f2fs-fuse") for a in argv):
            pids.append(int(d))
    return pids


def _status_field(pid, name):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(name + ":"):
                return line.split(":", 1)[1].strip()
    return None


def _sanitized(binary):
    with open(binary, "rb") as f:
        return b"__asan_init" in f.read()


def test_key_file_memory_locked_after_daemonizing(f2fs_fuse, fixture_image, key_file,
                                                  tmp_path):
    """fork() in fuse_daemonize drops memory locks: the daemon locks the key
    memory again, so a key given with -o key_file= is not swapped out."""
    mnt = str(tmp_path / "mnt")
    os.mkdir(mnt)
    r = fsutil.run([f2fs_fuse, "-o", "ro,keyctl_socket=none,key_file=" + key_file,
                    fixture_image("crypt"), mnt], timeout=60)
    assert r.returncode == 0, r.stdout
    try:
        assert fsutil.is_fuse_mount(mnt)
        pids = _daemon_pids(mnt)
        assert len(pids) == 1, pids
        locked = _status_field(pids[0], "VmLck")
        # AddressSanitizer's mlock() does nothing
        if not _sanitized(f2fs_fuse):
            assert locked and int(locked.split()[0]) > 0, locked
        with open("/proc/%d/limits" % pids[0]) as f:
            core = [line for line in f if line.startswith("Max core file size")]
        assert core and core[0].split()[4:6] == ["0", "0"], core
    finally:
        fsutil.run(["fusermount3", "-u", mnt], timeout=30)
    deadline = time.monotonic() + 30
    while _daemon_pids(mnt) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _daemon_pids(mnt)


def test_no_raw_key_in_daemon_memory(root_mount, key_file):
    """A key added at run time leaves no copy of its raw bytes anywhere in
    the daemon (a v2 key is kept as its HKDF pseudorandom key only)."""
    raw = key_bytes(key_file)
    with root_mount(options=("ro",)) as m:
        fd = os.open(m.path, os.O_RDONLY)
        try:
            arg = bytearray(struct.pack("<II16sII64s", 2, 0, b"", len(raw), 0, raw))
            fcntl.ioctl(fd, F2FS_IOC_ADD_KEY, arg)
            assert arg[8:24].hex() == KEY_ID
        finally:
            os.close(fd)
        found = []
        with open("/proc/%d/maps" % m.proc.pid) as maps, \
                open("/proc/%d/mem" % m.proc.pid, "rb", 0) as mem:
            for line in maps:
                rng, perms = line.split()[:2]
                if "r" not in perms:
                    continue
                lo, hi = (int(x, 16) for x in rng.split("-"))
                if hi - lo > 1 << 30:
                    continue        # sanitizer shadow
                try:
                    mem.seek(lo)
                    data = mem.read(hi - lo)
                except (OSError, OverflowError, ValueError):
                    continue
                if raw[:32] in data or raw[32:] in data:
                    found.append(line.strip())
        assert found == []


# ---------------------------------------------------------------- key quota

QUOTA_AS = r"""
import errno, fcntl, os, struct, sys
ADD, REMOVE = %d, %d
fd = os.open(sys.argv[1], os.O_RDONLY)
n, ids = 0, []
while n < 1000:
    raw = os.urandom(32)
    arg = bytearray(struct.pack("<II16sII64s", 2, 0, b"", 32, 0, raw))
    try:
        fcntl.ioctl(fd, ADD, arg)
    except OSError as e:
        print(n, errno.errorcode[e.errno])
        break
    ids.append(bytes(arg[8:24]))
    n += 1
# the same key again costs nothing; dropping one claim makes room for one more
fcntl.ioctl(fd, REMOVE, bytearray(struct.pack("<II16sII", 2, 0, ids[0], 0, 0)))
fcntl.ioctl(fd, ADD, bytearray(struct.pack("<II16sII64s", 2, 0, b"", 32, 0, os.urandom(32))))
try:
    fcntl.ioctl(fd, ADD, bytearray(struct.pack("<II16sII64s", 2, 0, b"", 32, 0, os.urandom(32))))
    print("over")
except OSError as e:
    print(errno.errorcode[e.errno])
""" % (F2FS_IOC_ADD_KEY, F2FS_IOC_REMOVE_KEY)


def _keys_sysctl(name, default):
    try:
        with open("/proc/sys/kernel/keys/" + name) as f:
            return int(f.read())
    except OSError:
        return default


def test_key_quota_per_user(root_mount, fusectl, key_file):
    """Keys are charged to the user adding them as the kernel's key quota
    does (maxkeys/maxbytes; a claim costs its description and 64 bytes)."""
    cost = 32 + len(".uid.") + len(str(NOBODY)) + 1 + 64
    want = min(_keys_sysctl("maxkeys", 200), _keys_sysctl("maxbytes", 20000) // cost)
    with root_mount(options=("ro",)) as m:
        start = time.monotonic()
        out = as_nobody(QUOTA_AS, m.path, timeout=300).stdout.split()
        assert out == [str(want), "EDQUOT", "EDQUOT"], out
        assert time.monotonic() - start < 60
        # root has a quota of its own
        assert Ctl(fusectl).out("add_key", m.path, input=key_bytes(key_file)) == KEY_ID + "\n"


# ---------------------------------------------------------------- whom f2fs-fusectl trusts

MS_NOSUID, MS_NODEV, MNT_DETACH = 2, 4, 2


def _foreign_mount(f2fs_fuse, image, target):
    """A FUSE mount served by an f2fs-fuse daemon running as uid 65534, with
    user_id=65534, reachable by everyone: what a user with user_allow_other
    gets from fusermount3.  Returns the daemon's Popen."""
    libc = ctypes.CDLL(None, use_errno=True)
    os.makedirs(target, exist_ok=True)
    fd = os.open("/dev/fuse", os.O_RDWR)
    opts = "fd=%d,rootmode=40000,user_id=%d,group_id=%d,allow_other" % (fd, NOBODY, NOBODY)
    if libc.mount(b"foreign", os.fsencode(target), b"fuse.f2fs-fuse", MS_NOSUID | MS_NODEV,
                  opts.encode()) != 0:
        e = ctypes.get_errno()
        os.close(fd)
        raise OSError(e, os.strerror(e))
    proc = subprocess.Popen(SETPRIV + [f2fs_fuse, "-f", "-o", "ro,keyctl_socket=none", image,
                                       "/dev/fd/%d" % fd], pass_fds=(fd,),
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    os.close(fd)
    os.stat(target)     # waits for the daemon's INIT
    return proc


def _drop_foreign_mount(target, proc):
    libc = ctypes.CDLL(None, use_errno=True)
    libc.umount2(os.fsencode(target), MNT_DETACH)
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()


def test_fusectl_sends_keys_only_to_trusted_daemons(f2fs_fuse, root_mount, fusectl, key_file,
                                                    shared_dir):
    """A symlink on root's mount to another user's FUSE file system must not
    get root's key to that user's daemon: the mount's owner (user_id=) must
    be root, the caller or --trust-uid, and the daemon must answer as
    f2fs-fuse."""
    raw = key_bytes(key_file)
    ctl = Ctl(fusectl)
    foreign_img = os.path.join(shared_dir, "foreign.img")
    new_image(foreign_img)
    os.chmod(foreign_img, 0o644)
    foreign = os.path.join(shared_dir, "foreign")
    with root_mount(options=("rw",)) as m:
        pub = os.path.join(m.path, "pub")
        os.mkdir(pub)
        os.chmod(pub, 0o777)
        proc = _foreign_mount(f2fs_fuse, foreign_img, foreign)
        try:
            as_nobody("import os, sys; os.symlink(sys.argv[1], sys.argv[2])", foreign,
                      os.path.join(pub, "looks-like-ours"))
            msg = ctl.fails("add_key", os.path.join(pub, "looks-like-ours"), input=raw)
            assert "served by uid %d" % NOBODY in msg, msg
            assert ctl.out("key_status", KEY_ID, foreign) == "Absent\n"
            # named on purpose, it is allowed
            assert Ctl(fusectl).run("--trust-uid=%d" % NOBODY, "add_key", foreign,
                                    input=raw).stdout.decode() == KEY_ID + "\n"
            assert ctl.out("key_status", KEY_ID, foreign).startswith("Present")
            # our own mount is fine
            assert ctl.out("add_key", m.path, input=raw) == KEY_ID + "\n"
        finally:
            _drop_foreign_mount(foreign, proc)


SQUATTER = r"""
import os, socket, sys
s = socket.socket(socket.AF_UNIX)
s.bind(sys.argv[1]); os.chmod(sys.argv[1], 0o777); s.listen(4)
open(sys.argv[2], "w").close()
s.settimeout(float(sys.argv[3]))
got = 0
try:
    while True:
        c, _ = s.accept()
        c.settimeout(2)
        try:
            while True:
                d = c.recv(4096)
                if not d:
                    break
                got += len(d)
        except OSError:
            pass
except OSError:
    pass
print(got)
"""


def _start_squatter(path, ready, seconds):
    proc = subprocess.Popen(SETPRIV + [PY, "-c", SQUATTER, path, ready, str(seconds)],
                            stdout=subprocess.PIPE, text=True)
    for _ in range(200):
        if os.path.exists(ready):
            return proc
        time.sleep(0.05)
    proc.kill()
    raise AssertionError("the listener did not start")


def test_socket_path_peer_is_checked(root_mount, fusectl, key_file, shared_dir):
    """--socket=PATH sends nothing to a listener run by an untrusted user."""
    sq = os.path.join(shared_dir, "squat.sock")
    proc = _start_squatter(sq, os.path.join(shared_dir, "ready"), 3)
    try:
        with root_mount(options=("ro",)) as m:
            msg = Ctl(fusectl, socket_path=sq).fails("add_key", m.path,
                                                     input=key_bytes(key_file))
            assert "served by uid %d" % NOBODY in msg, msg
        out = proc.communicate(timeout=30)[0]
    finally:
        proc.kill()
    assert out.strip() == "0", out


def _start_expecting_failure(f2fs_fuse, img, mnt, sock):
    """Run the daemon in the foreground; it must exit by itself, unmounted."""
    proc = subprocess.Popen([f2fs_fuse, "-f", "-o", "ro,keyctl_socket=" + sock, img, mnt],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        out = proc.communicate(timeout=20)[0]
    except subprocess.TimeoutExpired:
        fsutil.run(["fusermount3", "-u", "-z", mnt], timeout=30)
        proc.kill()
        out = proc.communicate()[0]
        raise AssertionError("the daemon started without its socket:\n" + out)
    assert proc.returncode != 0 and not fsutil.is_fuse_mount(mnt), out
    return out


def test_daemon_refuses_to_start_without_the_socket_asked_for(f2fs_fuse, shared_dir):
    img = os.path.join(shared_dir, "rw.img")
    new_image(img)
    mnt = os.path.join(shared_dir, "mnt")
    os.mkdir(mnt)
    # a directory that is not there
    bad = os.path.join(shared_dir, "no-such-dir", "ctl.sock")
    out = _start_expecting_failure(f2fs_fuse, img, mnt, bad)
    assert "keyctl_socket=" + bad in out, out
    # somebody else listening there already
    sq = os.path.join(shared_dir, "squat.sock")
    proc = _start_squatter(sq, os.path.join(shared_dir, "ready"), 10)
    try:
        out = _start_expecting_failure(f2fs_fuse, img, mnt, sq)
        assert "another process listens there" in out, out
    finally:
        proc.kill()


# ---------------------------------------------------------------- slow clients

TRICKLE = r"""
import socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
start = time.monotonic()
try:
    for _ in range(int(sys.argv[2])):
        s.send(b"F")
        time.sleep(float(sys.argv[3]))
    s.settimeout(30)
    print("open" if s.recv(1) else "closed", round(time.monotonic() - start, 1))
except OSError:
    print("closed", round(time.monotonic() - start, 1))
"""

IDLE = r"""
import socket, sys, time
conns = []
for _ in range(int(sys.argv[2])):
    s = socket.socket(socket.AF_UNIX)
    s.connect(sys.argv[1])
    conns.append(s)
print("connected", flush=True)
time.sleep(float(sys.argv[3]))
"""


def test_slow_clients_do_not_stall_the_socket(root_mount, fusectl, shared_dir):
    """Connections are served side by side, each request has one deadline,
    and one user's idle connections do not lock others out."""
    sock = os.path.join(shared_dir, "ctl.sock")
    ctl = Ctl(fusectl, socket_path=sock)
    with root_mount(options=("ro", "keyctl_socket=" + sock)) as m:
        trickler = subprocess.Popen(SETPRIV + [PY, "-c", TRICKLE, sock, "12", "1"],
                                    stdout=subprocess.PIPE, text=True)
        idler = subprocess.Popen(SETPRIV + [PY, "-c", IDLE, sock, "40", "12"],
                                 stdout=subprocess.PIPE, text=True)
        try:
            assert idler.stdout.readline().strip() == "connected"
            for _ in range(4):
                start = time.monotonic()
                assert ctl.out("key_status", KEY_ID, m.path) == "Absent\n"
                assert time.monotonic() - start < 2.5
                time.sleep(0.5)
            out = trickler.communicate(timeout=60)[0].split()
        finally:
            trickler.kill()
            idler.kill()
        # one byte a second never completes a request: cut off at the deadline
        assert out[0] == "closed" and float(out[1]) < 8, out


# ---------------------------------------------------------------- set_policy


@pytest.mark.parametrize("transport", ("ioctl", "socket"))
def test_set_policy_needs_a_key_the_caller_added(root_mount, fusectl, key_file, transport):
    """As fscrypt_verify_key_added: a v2 policy needs the caller's own claim
    on its key, not only the key's presence (ENOKEY)."""
    raw = key_bytes(key_file)
    with root_mount() as m:
        root_ctl = Ctl(fusectl, transport)
        user_ctl = Ctl(fusectl, transport, user=NOBODY)
        root_ctl.out("add_key", m.path, input=raw)
        theirs = os.path.join(m.path, "theirs")
        os.mkdir(theirs)
        os.chown(theirs, NOBODY, NOBODY)
        assert "not present" in user_ctl.fails("set_policy", KEY_ID, theirs)
        user_ctl.out("add_key", m.path, input=raw)
        user_ctl.out("set_policy", KEY_ID, theirs)
        # the policy a directory already has needs no claim (root's keeps the key)
        user_ctl.out("remove_key", KEY_ID, m.path)
        user_ctl.out("set_policy", KEY_ID, theirs)
        # CAP_FOWNER needs none either (the user's claim keeps the key)
        user_ctl.out("add_key", m.path, input=raw)
        root_ctl.out("remove_key", KEY_ID, m.path)
        assert root_ctl.out("key_status", KEY_ID, m.path) == "Present (user_count=1)\n"
        other = os.path.join(m.path, "other")
        os.mkdir(other)
        root_ctl.out("set_policy", KEY_ID, other)
    fsutil.fsck_check(m.image)


# ---------------------------------------------------------------- what was already sound

REMOVE_AS = r"""
import errno, fcntl, os, struct, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
kid = bytes.fromhex(sys.argv[2])
out = []
for cmd in (%d, %d):
    arg = bytearray(struct.pack("II32s", 2, 0, kid) + bytes(64 - 40))
    try:
        fcntl.ioctl(fd, cmd, arg)
        out.append("ok")
    except OSError as e:
        out.append(errno.errorcode[e.errno])
print(" ".join(out))
""" % (UAPI_REMOVE_KEY, UAPI_REMOVE_KEY_ALL_USERS)


def test_others_keys_cannot_be_removed(root_mount, fusectl, key_file):
    raw = key_bytes(key_file)
    with root_mount(options=("ro",)) as m:
        Ctl(fusectl).out("add_key", m.path, input=raw)
        for transport in ("ioctl", "socket"):
            user = Ctl(fusectl, transport, user=NOBODY)
            assert "Permission denied" in user.fails("remove_key", KEY_ID, m.path)
            assert "Permission denied" in user.fails("remove_key", "--all-users", KEY_ID,
                                                     m.path)
        assert as_nobody(REMOVE_AS, m.path, KEY_ID).stdout.split() == ["EACCES", "EACCES"]
        assert Ctl(fusectl).out("key_status", KEY_ID, m.path) == \
            "Present (user_count=1, added_by_self)\n"


MMAP_AFTER_REMOVAL = r"""
import mmap, os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
m = mmap.mmap(fd, 0, prot=mmap.PROT_READ)
print(m[0], flush=True)          # read while the key is there
sys.stdin.readline()             # the key is removed meanwhile
print(m[0], flush=True)          # must not come from the page cache
"""


def test_mapped_file_faults_after_key_removal(mount, fixture_image, fixtures_dir, fusectl,
                                              key_file):
    """After remove_key a mapping of an encrypted file gets SIGBUS, as in the
    kernel, not the plaintext still in the page cache."""
    rel, _ = a_plain_file(fixtures_dir)
    with mount(fixture_image("crypt"), options=("ro", "key_file=" + key_file)) as m:
        proc = subprocess.Popen([PY, "-c", MMAP_AFTER_REMOVAL, os.path.join(m.path, rel)],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        try:
            assert proc.stdout.readline().strip().isdigit()
            Ctl(fusectl).out("remove_key", KEY_ID, m.path)
            proc.stdin.write("\n")
            proc.stdin.flush()
            assert proc.wait(timeout=60) == -7, proc.stdout.read()     # SIGBUS
        finally:
            proc.kill()


def _mount_options(path):
    with open("/proc/self/mountinfo") as f:
        for line in f:
            cols = line.split()
            if fsutil._unoctal(cols[4]) == os.path.realpath(path):
                return set(cols[5].split(","))
    return set()


@pytest.mark.parametrize("allow_other", (False, True))
def test_mount_and_socket_defaults(f2fs_fuse, shared_dir, allow_other):
    """The mount is nosuid,nodev; the socket is 0600 unless allow_other."""
    img = os.path.join(shared_dir, "rw.img")
    new_image(img)
    sock = os.path.join(shared_dir, "ctl.sock")
    opts = ("ro", "keyctl_socket=" + sock) + (("allow_other",) if allow_other else ())
    with fsutil.mounted(f2fs_fuse, img, os.path.join(shared_dir, "mnt"), options=opts) as m:
        assert {"nosuid", "nodev"} <= _mount_options(m.path)
        assert stat.S_IMODE(os.stat(sock).st_mode) == (0o666 if allow_other else 0o600)
