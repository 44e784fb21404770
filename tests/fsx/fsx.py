#!/usr/bin/python3
"""fsx: a randomized model-based tester for f2fs-fuse.

Every operation runs twice: on a shadow directory on tmpfs (the model) and
on an f2fs image mounted read-write through the real binary.  The results
(return values and errno) must agree, and after each step the entries the
step touched must look the same on both sides: type, permission bits, size,
link count, contents, symlink targets, directory listings, extended
attributes.  Now and then the image is unmounted, checked with fsck.f2fs and
mounted again, and the whole tree is compared.

    fsx.py [--seed N] [--ops N] [--image-size 256M] [--features LIST]

The seed is printed first; the same seed (with the same --ops and the same
options) replays the same run.  --no-mount runs against a plain folder
instead of a mount, to check the tester itself.

Environment: F2FS_FUSE, the binary (default build/f2fs-fuse of this tree).
"""

import argparse
import collections
import ctypes
import errno
import hashlib
import json
import os
import random
import shutil
import signal
import stat
import sys
import tempfile
import time
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "tests", "integration"))

import fsutil  # noqa: E402

DEFAULT_BINARY = os.path.join(REPO, "build", "f2fs-fuse")
EXTRA_FEATURES = "extra_attr,inode_checksum,flexible_inline_xattr,inode_crtime,sb_checksum"

# ---------------------------------------------------------------- libc

FALLOC_FL_KEEP_SIZE = 0x01
FALLOC_FL_PUNCH_HOLE = 0x02
FALLOC_FL_ZERO_RANGE = 0x10
RENAME_NOREPLACE = 1
RENAME_EXCHANGE = 2
AT_FDCWD = -100

_libc = ctypes.CDLL(None, use_errno=True)
_libc.fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int64, ctypes.c_int64]
_libc.fallocate.restype = ctypes.c_int
try:
    _renameat2 = _libc.renameat2
    _renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p,
                           ctypes.c_uint]
    _renameat2.restype = ctypes.c_int
except AttributeError:            # glibc before 2.28: the raw system call (x86-64)
    _syscall = _libc.syscall
    _syscall.restype = ctypes.c_long

    def _renameat2(a, b, c, d, e):
        return _syscall(ctypes.c_long(316), ctypes.c_int(a), ctypes.c_char_p(b),
                        ctypes.c_int(c), ctypes.c_char_p(d), ctypes.c_uint(e))


def _raise_errno():
    e = ctypes.get_errno()
    raise OSError(e, os.strerror(e))


def fallocate(fd, mode, off, length):
    if _libc.fallocate(fd, mode, off, length) != 0:
        _raise_errno()


def renameat2(src, dst, flags):
    if _renameat2(AT_FDCWD, os.fsencode(src), AT_FDCWD, os.fsencode(dst), flags) != 0:
        _raise_errno()


def parse_size(s):
    s = str(s).strip().upper()
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(s[-1:], 1)
    return int(s[:-1] if s[-1:] in "KMG" else s) * mult


def make_image(path, size, features=None):
    """A sparse image of `size` bytes with a fresh f2fs on it."""
    if os.path.exists(path):
        os.unlink(path)
    with open(path, "wb") as f:
        f.truncate(size)
    cmd = ["mkfs.f2fs", "-f"]
    if features:
        cmd += ["-O", features]
    fsutil.run(cmd + [path], check=True)


def fsck(image):
    """fsck.f2fs -f --dry-run: (list of problems, output)."""
    r = fsutil.run(["fsck.f2fs", "-f", "--dry-run", image])
    return fsutil.fsck_problems(r.stdout, r.returncode), r.stdout


class Failure(Exception):
    pass


# ---------------------------------------------------------------- the target

class Target:
    """The f2fs image mounted through the binary, or a plain folder (--no-mount)."""

    def __init__(self, binary, image, mnt, no_mount=False, options=()):
        self.binary, self.image, self.mnt = binary, image, mnt
        self.no_mount = no_mount
        self.options = list(options)   # on every mount (e.g. compression)
        self.m = None
        self.mounts = 0

    def mount(self, options=()):
        if self.no_mount:
            os.makedirs(self.mnt, exist_ok=True)
            return
        self.m = fsutil.Mount(self.binary, self.image, self.mnt,
                              options=self.options + list(options),
                              log="%s.stderr.%d" % (self.mnt.rstrip("/"), self.mounts))
        self.mounts += 1
        try:
            self.m.start()
        except fsutil.MountError as e:
            self.m = None
            raise Failure("mount failed: %s" % e)

    def unmount(self):
        """Unmount, check the daemon's exit, and (for a mount) run fsck."""
        if self.no_mount or self.m is None:
            return
        m, self.m = self.m, None
        try:
            m.unmount()
            m.check_exit()
        except fsutil.MountError as e:
            raise Failure("unmount: %s" % e)
        probs, out = fsck(self.image)
        if probs:
            raise Failure("fsck.f2fs after unmount: %s\n%s" % ("; ".join(probs[:10]),
                                                                out[-4000:]))

    def kill(self):
        if self.m is not None:
            self.m._kill()
            self.m = None


# ---------------------------------------------------------------- the model

NAMES = ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j",
         "L" * 100, "long_" + "x" * 150, "n" * 255, "M" * 60 + "_2", "sp ace", "t.txt"]
XNAMES = ["user.a", "user.b", "user.cc", "user." + "k" * 40, "user.e"]
MAX_ENTRIES = 300
MAX_DIRS = 10
MAX_SLOTS = 6
INLINE = 3488
NAMESPACE_OPS = ("creat", "rename", "link", "unlink", "mkdir", "rmdir", "symlink", "mkmany",
                 "rmmany")      # the inline data limit of a default inode, roughly


def short(p):
    """A path with long components abbreviated, for the operation log."""
    parts = []
    for c in p.split("/"):
        parts.append(c if len(c) <= 12 else "%s..%d" % (c[:4], len(c)))
    return "/".join(parts) or "."


class Fsx:
    def __init__(self, args, shadow, target):
        self.args = args
        self.rng = random.Random(args.seed)
        self.shadow = shadow
        self.target = target
        self.slots = []          # open files: dict(path, s, t)
        self.log = collections.deque(maxlen=20)
        self.step = 0
        self.counts = collections.Counter()
        self._ents = None
        self.exclude = set(x for x in (args.exclude or "").split(",") if x)

    # -------------------------------------------------- helpers
    def sp(self, rel):
        return os.path.join(self.shadow, rel) if rel else self.shadow

    def tp(self, rel):
        return os.path.join(self.target.mnt, rel) if rel else self.target.mnt

    def entries(self):
        """(relpath, kind) for everything in the shadow tree, sorted; kind f/d/l/o."""
        if self._ents is None:
            self._ents = self._walk()
        return self._ents

    def _walk(self):
        out = []
        stack = [""]
        while stack:
            d = stack.pop()
            try:
                names = sorted(os.listdir(self.sp(d)))
            except OSError:
                continue
            for n in names:
                rel = os.path.join(d, n) if d else n
                st = os.lstat(self.sp(rel))
                if stat.S_ISDIR(st.st_mode):
                    out.append((rel, "d"))
                    stack.append(rel)
                elif stat.S_ISREG(st.st_mode):
                    out.append((rel, "f"))
                elif stat.S_ISLNK(st.st_mode):
                    out.append((rel, "l"))
                else:
                    out.append((rel, "o"))
        out.sort()
        return out

    def pick(self, ents, kinds, prefer=0.85):
        """A random entry of one of `kinds` (mostly), else any entry or root."""
        r = self.rng
        cand = [e for e in ents if e[1] in kinds]
        if cand and r.random() < prefer:
            return r.choice(cand)[0]
        if ents and r.random() < 0.8:
            return r.choice(ents)[0]
        return r.choice(NAMES)     # most likely absent

    def pick_dir(self, ents):
        dirs = [""] + [e[0] for e in ents if e[1] == "d"]
        return self.rng.choice(dirs)

    def new_path(self, ents):
        d = self.pick_dir(ents)
        r = self.rng
        n = r.choice(NAMES[:10]) if r.random() < 0.7 else r.choice(NAMES)
        p = os.path.join(d, n) if d else n
        return p if len(p) < 1000 else n

    def offset(self, size):
        r = self.rng
        c = r.random()
        if c < 0.25:
            return r.randrange(0, INLINE + 200)
        if c < 0.45:         # near a block boundary or the inline limit
            b = r.choice([INLINE, 4096, 8192, 4096 * 923, 4096 * (923 + 1018)])
            if r.random() < 0.5:
                b = 4096 * r.randrange(1, 64)
            return max(0, b + r.randrange(-64, 64))
        if c < 0.75:
            return r.randrange(0, max(1, size + 8192))
        if c < 0.985:
            return r.randrange(0, 1 << 20)
        return r.randrange(0, 12 << 20)     # past the inode's direct pointers

    def length(self):
        r = self.rng
        c = r.random()
        if c < 0.4:
            return r.randrange(1, 600)
        if c < 0.7:
            return r.randrange(1, 5000)
        if c < 0.95:
            return r.randrange(1, 70000)
        return r.randrange(1, 300000)

    def new_size(self, size):
        r = self.rng
        c = r.random()
        if c < 0.3:
            return r.randrange(0, max(1, size + 1))
        if c < 0.5:
            return r.choice([0, INLINE - 1, INLINE, INLINE + 1, 4095, 4096, 4097, 8192])
        if c < 0.98:
            return r.randrange(0, 1 << 20)
        return r.randrange(0, 12 << 20)

    # -------------------------------------------------- generating operations
    def gen(self):
        r = self.rng
        ents = self.entries()
        nfiles = sum(1 for e in ents if e[1] == "f")
        ndirs = sum(1 for e in ents if e[1] == "d")
        full = len(ents) >= MAX_ENTRIES
        ops = [
            ("creat", 6 if not full else 0), ("write", 20), ("read", 8), ("truncate", 6),
            ("falloc", 6), ("rename", 6), ("link", 3 if not full else 0), ("unlink", 4),
            ("mkdir", 3 if ndirs < MAX_DIRS and not full else 0), ("rmdir", 2),
            ("symlink", 2 if not full else 0), ("setxattr", 4), ("getxattr", 2),
            ("removexattr", 2), ("fsync", 4), ("open", 3), ("close", 2), ("chmod", 1),
            ("mkmany", 1 if len(ents) < MAX_ENTRIES - 120 else 0), ("rmmany", 1),
            ("stat", 2),
        ]
        if nfiles < 3 and not full:
            ops[0] = ("creat", 30)
        ops = [(n, 0 if n in self.exclude else w) for n, w in ops]
        tot = sum(w for _, w in ops)
        x = r.randrange(tot)
        for name, w in ops:
            if x < w:
                break
            x -= w
        return getattr(self, "gen_" + name)(ents)

    def fileref(self, ents):
        """An open slot (about half of the time when there are some) or a path."""
        if self.slots and self.rng.random() < 0.5:
            return ("slot", self.rng.randrange(len(self.slots)))
        return ("path", self.pick(ents, "f"))

    def cur_size(self, ref):
        try:
            if ref[0] == "slot":
                return os.fstat(self.slots[ref[1]]["s"]).st_size
            return os.stat(self.sp(ref[1])).st_size
        except (OSError, IndexError):
            return 0

    def gen_creat(self, ents):
        r = self.rng
        return ("creat", self.new_path(ents), r.choice([0o644, 0o600, 0o755]),
                r.random() < 0.3, r.random() < 0.3)

    def gen_write(self, ents):
        ref = self.fileref(ents)
        return ("write", ref, self.offset(self.cur_size(ref)), self.length(),
                self.rng.randrange(1 << 30))

    def gen_read(self, ents):
        ref = self.fileref(ents)
        size = self.cur_size(ref)
        return ("read", ref, self.rng.randrange(0, size + 100), self.length())

    def gen_truncate(self, ents):
        ref = self.fileref(ents)
        return ("truncate", ref, self.new_size(self.cur_size(ref)))

    def gen_falloc(self, ents):
        r = self.rng
        ref = self.fileref(ents)
        modes = [0, FALLOC_FL_KEEP_SIZE, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                 FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, FALLOC_FL_ZERO_RANGE,
                 FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE]
        if "zero-keep" in self.exclude:
            modes.remove(FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE)
        mode = r.choice(modes)
        size = self.cur_size(ref)
        if r.random() < 0.6 and size:
            off = r.randrange(0, size)
        else:
            off = self.offset(size)
        return ("falloc", ref, mode, off, self.length())

    def gen_rename(self, ents):
        r = self.rng
        src = self.pick(ents, "fdl")
        c = r.random()
        if c < 0.5:
            dst = self.new_path(ents)
            flags = 0 if r.random() < 0.8 else RENAME_NOREPLACE
        else:
            dst = self.pick(ents, "fdl")
            flags = r.choice([0, 0, RENAME_EXCHANGE, RENAME_EXCHANGE, RENAME_NOREPLACE])
        return ("rename", src, dst, flags)

    def gen_link(self, ents):
        return ("link", self.pick(ents, "f"), self.new_path(ents))

    def gen_unlink(self, ents):
        return ("unlink", self.pick(ents, "fl"))

    def gen_mkdir(self, ents):
        return ("mkdir", self.new_path(ents), self.rng.choice([0o755, 0o700]))

    def gen_rmdir(self, ents):
        return ("rmdir", self.pick(ents, "d"))

    def gen_symlink(self, ents):
        r = self.rng
        c = r.random()
        if c < 0.5 and ents:
            tgt = os.path.basename(r.choice(ents)[0])
        elif c < 0.8:
            tgt = r.choice(NAMES[:10]) + "/" + r.choice(NAMES[:10])
        else:
            tgt = "t" * r.randrange(1, 4000)
        return ("symlink", tgt, self.new_path(ents))

    def gen_setxattr(self, ents):
        r = self.rng
        p = self.pick(ents, "fd")
        n = r.randrange(0, 500) if r.random() < 0.9 else r.randrange(0, 5)
        flags = r.choice([0, 0, 0, os.XATTR_CREATE, os.XATTR_REPLACE])
        return ("setxattr", p, r.choice(XNAMES), n, r.randrange(1 << 30), flags)

    def gen_getxattr(self, ents):
        return ("getxattr", self.pick(ents, "fd"), self.rng.choice(XNAMES))

    def gen_removexattr(self, ents):
        return ("removexattr", self.pick(ents, "fd"), self.rng.choice(XNAMES))

    def gen_fsync(self, ents):
        return ("fsync", self.fileref(ents), self.rng.random() < 0.4)

    def gen_open(self, ents):
        if len(self.slots) >= MAX_SLOTS:
            return self.gen_close(ents)
        return ("open", self.pick(ents, "f"), self.rng.random() < 0.2)

    def gen_close(self, ents):
        if not self.slots:
            return ("stat", self.pick(ents, "fdl"))
        return ("close", self.rng.randrange(len(self.slots)))

    def gen_chmod(self, ents):
        return ("chmod", self.pick(ents, "fd"), self.rng.choice([0o600, 0o644, 0o755, 0o700,
                                                                 0o4755, 0o1777]))

    def gen_mkmany(self, ents):
        return ("mkmany", self.pick_dir(ents), self.rng.randrange(20, 120))

    def gen_rmmany(self, ents):
        return ("rmmany", self.pick_dir(ents), self.rng.random())

    def gen_stat(self, ents):
        return ("stat", self.pick(ents, "fdl"))

    # -------------------------------------------------- running operations
    # --compressible: most writes are text a codec shrinks (compressed
    # clusters), the rest random (raw clusters)
    compressible = False

    @classmethod
    def data(cls, seed, n):
        rng = random.Random(seed)
        if not cls.compressible or rng.random() < 0.25:
            return rng.randbytes(n)
        line = b"fsx %d compressible line " % rng.randrange(1000)
        return (line * (n // len(line) + 1))[:n]

    def run_side(self, op, side):
        """Run `op` on one side ('s' shadow or 't' target): ('ok', value) or ('err', errno)."""
        P = self.sp if side == "s" else self.tp
        try:
            return ("ok", self._run(op, side, P))
        except OSError as e:
            return ("err", errno.errorcode.get(e.errno, e.errno))

    def _withfd(self, ref, side, P, flags, fn):
        if ref[0] == "slot":
            return fn(self.slots[ref[1]][side])
        fd = os.open(P(ref[1]), flags)
        try:
            return fn(fd)
        finally:
            os.close(fd)

    def _run(self, op, side, P):
        k = op[0]
        if k == "creat":
            _, p, mode, excl, keep = op
            fl = os.O_CREAT | os.O_RDWR | (os.O_EXCL if excl else 0)
            fd = os.open(P(p), fl, mode)
            if keep:
                if side == "s":
                    self._pending = {"path": p, "s": fd}
                else:
                    self._pending["t"] = fd
            else:
                os.close(fd)
            return None
        if k == "write":
            _, ref, off, n, seed = op
            buf = self.data(seed, n)
            return self._withfd(ref, side, P, os.O_WRONLY, lambda fd: os.pwrite(fd, buf, off))
        if k == "read":
            _, ref, off, n = op
            b = self._withfd(ref, side, P, os.O_RDONLY, lambda fd: os.pread(fd, n, off))
            return (len(b), hashlib.sha1(b).hexdigest())
        if k == "truncate":
            _, ref, size = op
            if ref[0] == "slot":
                os.ftruncate(self.slots[ref[1]][side], size)
            else:
                os.truncate(P(ref[1]), size)
            return None
        if k == "falloc":
            _, ref, mode, off, n = op
            return self._withfd(ref, side, P, os.O_WRONLY,
                                lambda fd: self._falloc(fd, side, mode, off, n))
        if k == "rename":
            _, a, b, flags = op
            if flags:
                renameat2(P(a), P(b), flags)
            else:
                os.rename(P(a), P(b))
            return None
        if k == "link":
            os.link(P(op[1]), P(op[2]), follow_symlinks=False)
            return None
        if k == "unlink":
            os.unlink(P(op[1]))
            return None
        if k == "mkdir":
            os.mkdir(P(op[1]), op[2])
            return None
        if k == "rmdir":
            os.rmdir(P(op[1]))
            return None
        if k == "symlink":
            os.symlink(op[1], P(op[2]))
            return None
        if k == "setxattr":
            _, p, name, n, seed, flags = op
            os.setxattr(P(p), name, self.data(seed, n), flags, follow_symlinks=False)
            return None
        if k == "getxattr":
            v = os.getxattr(P(op[1]), op[2], follow_symlinks=False)
            return hashlib.sha1(v).hexdigest()
        if k == "removexattr":
            os.removexattr(P(op[1]), op[2], follow_symlinks=False)
            return None
        if k == "fsync":
            _, ref, datasync = op
            fn = os.fdatasync if datasync else os.fsync
            return self._withfd(ref, side, P, os.O_RDONLY, fn)
        if k == "open":
            _, p, trunc = op
            fd = os.open(P(p), os.O_RDWR | (os.O_TRUNC if trunc else 0))
            if side == "s":
                self._pending = {"path": p, "s": fd}
            else:
                self._pending["t"] = fd
            return None
        if k == "close":
            os.close(self.slots[op[1]][side])
            return None
        if k == "chmod":
            os.chmod(P(op[1]), op[2])
            return None
        if k == "mkmany":
            _, d, n = op
            made = 0
            for i in range(n):
                q = os.path.join(P(d), "m%03d" % i)
                try:
                    os.close(os.open(q, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644))
                    made += 1
                except FileExistsError:
                    pass
            return made
        if k == "rmmany":
            _, d, frac = op
            names = sorted(n for n in os.listdir(P(d)) if n.startswith("m"))
            gone = 0
            for n in names[:int(len(names) * frac) + 1]:
                try:
                    os.unlink(os.path.join(P(d), n))
                    gone += 1
                except OSError as e:
                    gone += 1000 * e.errno
            return gone
        if k == "stat":
            st = os.lstat(P(op[1]))
            return (stat.S_IFMT(st.st_mode), st.st_nlink,
                    st.st_size if not stat.S_ISDIR(st.st_mode) else 0)
        raise ValueError(k)

    def _falloc(self, fd, side, mode, off, n):
        if (side == "s" or self.target.no_mount) and mode & FALLOC_FL_ZERO_RANGE:
            # tmpfs has no zero-range: a hole, then an allocation over it
            fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off, n)
            fallocate(fd, mode & FALLOC_FL_KEEP_SIZE, off, n)
        else:
            fallocate(fd, mode, off, n)

    # -------------------------------------------------- comparing
    def describe(self, root, rel):
        """What must agree between the sides for one path."""
        p = os.path.join(root, rel) if rel else root
        try:
            st = os.lstat(p)
        except OSError as e:
            return ("absent", errno.errorcode.get(e.errno, e.errno))
        m = st.st_mode
        d = {"type": stat.S_IFMT(m), "perm": stat.S_IMODE(m), "nlink": st.st_nlink}
        if stat.S_ISREG(m):
            d["size"] = st.st_size
            d["data"] = self.file_digest(p)
        elif stat.S_ISLNK(m):
            d["size"] = st.st_size
            d["target"] = os.readlink(p)
        elif stat.S_ISDIR(m):
            d["list"] = sorted(os.listdir(p))
        if stat.S_ISREG(m) or stat.S_ISDIR(m):
            d["xattr"] = self.xattrs(p)
        return d

    @staticmethod
    def file_digest(p, fd=None):
        h = 0
        own = fd is None
        if own:
            fd = os.open(p, os.O_RDONLY)
        try:
            off = 0
            while True:
                b = os.pread(fd, 1 << 20, off)
                if not b:
                    break
                h = zlib.crc32(b, h)
                off += len(b)
            return (off, "%08x" % h)
        finally:
            if own:
                os.close(fd)

    @staticmethod
    def xattrs(p):
        out = {}
        for n in sorted(os.listxattr(p, follow_symlinks=False)):
            if not n.startswith("user."):
                continue
            out[n] = hashlib.sha1(os.getxattr(p, n, follow_symlinks=False)).hexdigest()
        return out

    def compare_paths(self, rels, what):
        for rel in sorted(set(rels)):
            a = self.describe(self.shadow, rel)
            try:
                b = self.describe(self.target.mnt, rel)
            except OSError as e:
                b = ("error reading", errno.errorcode.get(e.errno, e.errno))
            if a != b:
                self.fail("%s: %s differs\n  model:  %s\n  target: %s"
                          % (what, short(rel), self.brief(a), self.brief(b)))

    @staticmethod
    def brief(d):
        if isinstance(d, dict) and "list" in d:
            d = dict(d)
            d["list"] = [short(x) for x in d["list"]]
        return d

    def compare_slots(self):
        for i, sl in enumerate(self.slots):
            a = os.fstat(sl["s"])
            try:
                b = os.fstat(sl["t"])
                bt = (b.st_size, b.st_nlink, self.file_digest(None, sl["t"]))
            except OSError as e:
                bt = ("error", errno.errorcode.get(e.errno, e.errno))
            at = (a.st_size, a.st_nlink, self.file_digest(None, sl["s"]))
            if at != bt:
                self.fail("open file %d (opened as %s) differs\n  model:  %s\n  target: %s"
                          % (i, short(sl["path"]), at, bt))

    def compare_tree(self, what):
        sents = self.entries()
        tents = []
        stack = [""]
        while stack:
            d = stack.pop()
            for n in sorted(os.listdir(self.tp(d))):
                rel = os.path.join(d, n) if d else n
                st = os.lstat(self.tp(rel))
                tents.append(rel)
                if stat.S_ISDIR(st.st_mode):
                    stack.append(rel)
        sset = set(e[0] for e in sents)
        tset = set(tents)
        if sset != tset:
            self.fail("%s: trees differ: only in model %s, only in target %s"
                      % (what, sorted(map(short, sset - tset))[:20],
                         sorted(map(short, tset - sset))[:20]))
        self.compare_paths([""] + sorted(sset), what)
        # hard links: paths that share an inode in the model share one in the target
        groups_s, groups_t = collections.defaultdict(set), collections.defaultdict(set)
        for rel, kind in sents:
            if kind == "f":
                groups_s[os.lstat(self.sp(rel)).st_ino].add(rel)
                groups_t[os.lstat(self.tp(rel)).st_ino].add(rel)
        gs = sorted(sorted(g) for g in groups_s.values())
        gt = sorted(sorted(g) for g in groups_t.values())
        if gs != gt:
            self.fail("%s: hard link groups differ\n  model:  %s\n  target: %s"
                      % (what, gs, gt))

    # -------------------------------------------------- the run
    def describe_op(self, op):
        parts = []
        for x in op:
            if isinstance(x, str) and len(x) > 12:
                parts.append(repr(short(x)))
            elif isinstance(x, tuple):
                parts.append("%s:%s" % (x[0], short(x[1]) if isinstance(x[1], str) else x[1]))
            elif isinstance(x, int) and op[0] in ("chmod", "creat", "mkdir") and x > 7:
                parts.append(oct(x))
            else:
                parts.append(repr(x))
        return " ".join(parts)

    def fail(self, msg):
        raise Failure(msg)

    def touched(self, op):
        """Paths whose state an operation may change, with their parents."""
        k = op[0]
        if k in ("rename", "link"):
            paths = [op[1], op[2]]
        elif k == "symlink":
            paths = [op[2]]
        elif k in ("write", "read", "truncate", "falloc", "fsync"):
            ref = op[1]
            paths = [ref[1]] if ref[0] == "path" else [self.slots[ref[1]]["path"]]
        elif k == "close":
            paths = []
        else:
            paths = [op[1]]
        out = set()
        for p in paths:
            out.add(p)
            out.add(os.path.dirname(p))
        return out

    def do_op(self, op):
        self._pending = None
        rs = self.run_side(op, "s")
        rt = self.run_side(op, "t")
        k = op[0]
        if k in ("creat", "open"):
            if self._pending is not None:
                if rs[0] == "ok" and rt[0] == "ok":
                    self.slots.append(self._pending)
                else:
                    for side in ("s", "t"):
                        if side in self._pending:
                            os.close(self._pending[side])
        if k == "close" and (rs[0] == "ok" or rt[0] == "ok"):
            del self.slots[op[1]]
        if rs != rt:
            self.fail("result differs: model %s, target %s" % (rs, rt))
        self.counts[k + ("" if rs[0] == "ok" else ":" + str(rs[1]))] += 1
        if k in NAMESPACE_OPS:
            self._ents = None
        rels = self.touched(op)
        self.compare_paths(rels, "after %s" % k)
        if self.slots and (k in ("write", "truncate", "falloc", "fsync", "unlink", "rename",
                                 "open", "creat", "link") or self.step % 10 == 0):
            self.compare_slots()

    def remount(self, why):
        self.close_slots()
        self.counts["remount"] += 1
        self.target.unmount()
        self.target.mount()
        self.compare_tree("after remount (%s)" % why)

    def run(self, script=None, quiet=False):
        """Generate and run args.ops operations, or run the list `script`.
        Returns None when all went well, else the failure message."""
        a = self.args
        every = max(1, a.remount_every)
        t0 = time.monotonic()
        self.history = []
        n = a.ops if script is None else len(script)
        try:
            for self.step in range(1, n + 1):
                if script is None:
                    if self.rng.random() < 1.0 / every:
                        op = ("remount",)
                    else:
                        op = self.gen()
                else:
                    op = script[self.step - 1]
                    if not self.valid(op):
                        continue
                self.history.append(op)
                self.log.append("%d: %s" % (self.step, self.describe_op(op)))
                if a.verbose:
                    print(self.log[-1], flush=True)
                if op[0] == "remount":
                    self.remount("step %d" % self.step)
                    continue
                self.do_op(op)
                if self.step % a.full_check_every == 0:
                    self.compare_tree("full check at step %d" % self.step)
            self.log.append("end: remount")
            self.remount("end")
            self.close_slots()
            self.target.unmount()
        except Failure as e:
            msg = str(e)
        except OSError as e:
            msg = "unexpected error: %r" % e
        else:
            if not quiet:
                print("fsx: seed %d: %d operations, %d remounts, %.1f s: OK"
                      % (a.seed, n, self.counts["remount"], time.monotonic() - t0))
                if a.verbose:
                    for k, v in sorted(self.counts.items()):
                        print("  %-24s %d" % (k, v))
            return None
        if not quiet:
            self.report(msg)
        return msg

    def valid(self, op):
        """Whether a listed operation can run now (its open-file slot exists)."""
        if op[0] == "close":
            return op[1] < len(self.slots)
        for x in op[1:]:
            if isinstance(x, tuple) and x[0] == "slot" and x[1] >= len(self.slots):
                return False
        return True

    def close_slots(self):
        for sl in self.slots:
            os.close(sl["s"])
            os.close(sl["t"])
        self.slots = []

    def report(self, msg):
        a = self.args
        print("fsx: FAILED at step %d (seed %d, --ops %d%s%s)"
              % (self.step, a.seed, a.ops,
                 (", --features " + a.features) if a.features else "",
                 (", --exclude " + a.exclude) if a.exclude else ""))
        print(msg)
        print("last operations:")
        for line in self.log:
            print("  " + line)
        if self.target.m is not None:
            err = self.target.m.stderr()
            if err.strip():
                print("daemon output (last 3000 chars):\n" + err[-3000:])


def to_json(ops):
    return json.dumps([[list(x) if isinstance(x, tuple) else x for x in op] for op in ops],
                      indent=0)


def from_json(text):
    return [tuple(tuple(x) if isinstance(x, list) else x for x in op) for op in json.loads(text)]


def session(a, binary, script=None, quiet=False):
    """One run on a fresh image and shadow: (failure message or None, history)."""
    work = a.workdir or tempfile.mkdtemp(prefix="fsx.", dir="/var/tmp")
    os.makedirs(work, exist_ok=True)
    shadow_base = tempfile.mkdtemp(prefix="fsx-shadow.", dir="/dev/shm")
    shadow = os.path.join(shadow_base, "root")
    os.mkdir(shadow)
    image = os.path.join(work, "fsx.img")
    mnt = os.path.join(work, "mnt")
    if a.no_mount:          # a second tmpfs folder: checks the tester itself
        mnt = os.path.join(shadow_base, "target")
    target = Target(binary, image, mnt, no_mount=a.no_mount,
                    options=[o for o in a.mount_options.split(",") if o])
    msg, hist = "not started", []
    try:
        os.umask(0o022)
        if not a.no_mount:
            make_image(image, parse_size(a.image_size), a.features)
        try:
            target.mount()
        except Failure as e:
            return str(e), []
        os.chmod(shadow, stat.S_IMODE(os.lstat(mnt).st_mode))
        f = Fsx(a, shadow, target)
        msg = f.run(script, quiet)
        hist = f.history
    finally:
        target.kill()
        shutil.rmtree(shadow_base, ignore_errors=True)
        if msg is None and not a.keep and not a.workdir:
            shutil.rmtree(work, ignore_errors=True)
        elif msg is not None:
            if not quiet:
                with open(os.path.join(work, "ops.json"), "w") as fh:
                    fh.write(to_json(hist))
                print("fsx: scratch folder kept: %s (operations in ops.json)" % work)
            elif not a.workdir:
                shutil.rmtree(work, ignore_errors=True)
    return msg, hist


def kind_of(msg):
    """What a failure is, for keeping the same failure while minimizing."""
    first = msg.splitlines()[0] if msg else ""
    for pre in ("fsck.f2fs", "unmount", "mount failed", "result differs", "unexpected error"):
        if pre in first:
            return pre
    return first.split(":")[0]


def minimize(a, binary, ops, msg):
    """Delta debugging over the operation list: the shortest list found
    that still fails the same way."""
    want = kind_of(msg)
    tries = [0]

    def fails(cand):
        tries[0] += 1
        m, _ = session(a, binary, cand, quiet=True)
        ok = m is not None and kind_of(m) == want
        print("fsx: minimize: try %d: %d operations: %s"
              % (tries[0], len(cand), "fails" if ok else "passes"), flush=True)
        return ok

    n = 2
    while len(ops) >= 2:
        chunk = max(1, len(ops) // n)
        reduced = False
        for i in range(0, len(ops), chunk):
            cand = ops[:i] + ops[i + chunk:]
            if cand and fails(cand):
                ops = cand
                n = max(n - 1, 2)
                reduced = True
                break
        if not reduced:
            if chunk == 1:
                break
            n = min(len(ops), n * 2)
    return ops


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--ops", type=int, default=10000)
    ap.add_argument("--image-size", default="256M")
    ap.add_argument("--features", default=None,
                    help="mkfs.f2fs -O list; 'extra' for %s" % EXTRA_FEATURES)
    ap.add_argument("--remount-every", type=int, default=400,
                    help="mean number of operations between remounts")
    ap.add_argument("--full-check-every", type=int, default=100)
    ap.add_argument("--workdir", default=None, help="scratch folder (default: a new one)")
    ap.add_argument("--keep", action="store_true", help="keep the scratch folder")
    ap.add_argument("--no-mount", action="store_true",
                    help="run against a plain folder instead of an f2fs mount")
    ap.add_argument("--mount-options", default="",
                    help="comma list of f2fs-fuse options for every mount, e.g. "
                    "compress_extension=* to compress every new file")
    ap.add_argument("--compressible", action="store_true",
                    help="write mostly compressible data (for compressed files)")
    ap.add_argument("--exclude", default="",
                    help="comma list of operation kinds not to generate (creat, write, "
                    "falloc, rename, ...), or zero-keep (no zero-range with keep-size)")
    ap.add_argument("--replay", metavar="OPS_JSON",
                    help="run the operations listed in this file (as saved on a failure)")
    ap.add_argument("--minimize", action="store_true",
                    help="on a failure, look for a shorter operation list that fails too")
    ap.add_argument("-v", "--verbose", action="store_true")
    a = ap.parse_args(argv)
    if a.seed is None:
        a.seed = random.SystemRandom().randrange(1 << 32)
    if a.features == "extra":
        a.features = EXTRA_FEATURES
    print("fsx: seed %d" % a.seed, flush=True)
    Fsx.compressible = a.compressible
    binary = os.environ.get("F2FS_FUSE") or DEFAULT_BINARY
    script = None
    if a.replay:
        with open(a.replay) as fh:
            script = from_json(fh.read())
    msg, hist = session(a, binary, script)
    if msg is None:
        return 0
    if a.minimize and hist:
        v = a.verbose
        a.verbose = False
        small = minimize(a, binary, hist, msg)
        a.verbose = v
        path = os.path.join("/var/tmp", "fsx-min-%d.json" % a.seed)
        with open(path, "w") as fh:
            fh.write(to_json(small))
        print("fsx: minimal operation list (%d operations, in %s):" % (len(small), path))
        for i, op in enumerate(small, 1):
            print("  %d: %r" % (i, op))
        print("fsx: replay with: fsx.py --replay %s%s" % (
            path, (" --features " + a.features) if a.features else ""))
    return 1


def _on_term(signum, frame):
    raise SystemExit(128 + signum)      # unwinds, so daemons and mounts are cleaned up


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, _on_term)
    sys.exit(main())
