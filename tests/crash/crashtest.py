#!/usr/bin/python3
"""Crash-consistency test for f2fs-fuse.

Random mode (the default): many iterations of
  mount read-write; a child process runs a mixed workload and appends to a
  log on tmpfs each durable state that an fsync()/fdatasync() acknowledged;
  SIGKILL the daemon after a random delay, lazy-unmount, kill the child;
  fsck.f2fs --dry-run on the crashed image (recorded only);
  mount read-write (roll-forward recovery), unmount, fsck.f2fs must be clean;
  mount read-only and check every acknowledged fsync that nothing later
  touched: the file has exactly the content it had when fsync returned.
The image carries over from one iteration to the next and is made anew
every --fresh-every iterations, alternating mkfs feature sets.

Checks are counted in two classes: "posix" (the file's name was on disk at
the last checkpoint, or its folder was fsync()ed after the name appeared)
and "f2fs" (a name created since then, which f2fs's fsync also recovers).

--ace runs instead a deterministic suite of short operation sequences (at
most --ace-len operations from creat, write, link, rename, truncate,
falloc) each followed by fsync or fdatasync, with the daemon killed as
soon as the fsync returns.

--mount-options adds f2fs-fuse options to every mount (with
--features extra_attr,compression and compress_extension=*, every file
the workload makes is compressed).

Environment: F2FS_FUSE, the binary (default build/f2fs-fuse of this tree).
"""

import argparse
import collections
import errno
import fcntl
import itertools
import json
import os
import random
import shutil
import signal
import stat
import struct
import subprocess
import sys
import tempfile
import time
import zlib

# F2FS_IOC_SHUTDOWN (_IOR('X', 125, __u32)) and F2FS_GOING_DOWN_NOSYNC
SHUTDOWN = (2 << 30) | (4 << 16) | (ord("X") << 8) | 125
SHUTDOWN_NOSYNC = 2

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "tests", "integration"))
sys.path.insert(0, os.path.join(REPO, "tests", "fsx"))

import fsutil  # noqa: E402
import fsx  # noqa: E402

DIRS = ["d0", "d1", "d2"]
ATOMIC_START = 0xF501        # _IO(0xf5, 1): F2FS_IOC_START_ATOMIC_WRITE
ATOMIC_COMMIT = 0xF502
ATOMIC_ABORT = 0xF505
ATOMIC_REPLACE = 0xF519      # _IO(0xf5, 25)
ACKS = ("fsync", "fdatasync", "atomic")
NAMES = ["f%d" % i for i in range(10)]
MAX_FILE = 256 << 10


FS_IOC_GETFLAGS = 0x80086601     # _IOR('f', 1, long)
FS_COMPR_FL = 0x00000004


def is_compressed(fd):
    flags = struct.unpack("l", fcntl.ioctl(fd, FS_IOC_GETFLAGS, b"\0" * 8))[0]
    return bool(flags & FS_COMPR_FL)


def crc(b):
    return "%08x" % zlib.crc32(b)


# ---------------------------------------------------------------- the workload (child)

class Workload:
    """Runs on the mount until killed; logs intents and acknowledgements."""

    def __init__(self, mnt, logpath, seed, max_ops=0, prefix=""):
        self.mnt = mnt
        self.max_ops = max_ops
        # --jobs: each workload owns the names with its prefix, nothing else
        self.prefix = prefix
        self.names = [prefix + n for n in NAMES]
        self.rng = random.Random(seed)
        self.logfd = os.open(logpath, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        self.ino = {}          # path -> inode id
        self.data = {}         # inode id -> bytearray
        self.next_id = 0
        self.held = []         # fds of unlinked files kept open
        self.held_inos = set()  # and their inodes (other links may remain)

    def ev(self, **kw):
        kw["t"] = time.monotonic()
        os.write(self.logfd, (json.dumps(kw) + "\n").encode())

    def P(self, rel):
        return os.path.join(self.mnt, rel)

    def load(self):
        by_st = {}
        for d in DIRS:
            for n in sorted(os.listdir(self.P(d))):
                if n not in self.names:
                    continue
                rel = d + "/" + n
                st = os.lstat(self.P(rel))
                if not stat.S_ISREG(st.st_mode):
                    continue
                if st.st_ino not in by_st:
                    with open(self.P(rel), "rb") as f:
                        b = bytearray(f.read())
                    by_st[st.st_ino] = self.new_id(b)
                self.ino[rel] = by_st[st.st_ino]

    def new_id(self, b):
        self.next_id += 1
        self.data[self.next_id] = b
        return self.next_id

    def paths_of(self, i):
        return sorted(p for p, j in self.ino.items() if j == i)

    def rand_path(self):
        return self.rng.choice(DIRS) + "/" + self.rng.choice(self.names)

    def rand_file(self):
        if not self.ino:
            return None
        return self.rng.choice(sorted(self.ino))

    def run(self):
        self.load()
        self.ev(start=sorted(self.ino))
        ops = [("creat", 5), ("write", 10), ("truncate", 3), ("falloc", 2), ("rename", 3),
               ("unlink", 2), ("link", 1), ("fsync", 8), ("fdatasync", 4), ("dirfsync", 2),
               ("write_fsync", 6), ("unlink_open", 1), ("sync", 1), ("atomic", 3)]
        skip = set(os.environ.get("CRASHTEST_EXCLUDE", "").split(","))
        names = [n for n, w in ops for _ in range(w) if n not in skip]
        count = 0
        while True:
            if self.max_ops and count >= self.max_ops:
                self.ev(done=count)
                time.sleep(3600)
            count += 1
            k = self.rng.choice(names)
            try:
                getattr(self, "op_" + k)()
            except OSError as e:
                self.ev(err=k, errno=e.errno, msg=str(e))
                return

    # each op logs its intent (what it may change) before it starts
    def op_creat(self):
        p = self.rand_path()
        if p in self.ino:
            return
        b = self.rng.randbytes(self.rng.choice([0, 100, 3000, 5000, 20000, 70000]))
        i = self.new_id(bytearray())
        self.ev(op="creat", paths=[p], inos=[i])
        fd = os.open(self.P(p), os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o644)
        self.ino[p] = i
        try:
            if b:
                os.write(fd, b)
                self.data[i][:] = b
            if self.rng.random() < 0.3:
                self.fsync_fd(fd, p, i, False)
        finally:
            os.close(fd)

    def _write(self, p, fd):
        i = self.ino[p]
        d = self.data[i]
        off = self.rng.randrange(0, len(d) + 5000)
        n = self.rng.choice([1, 10, 500, 4096, 5000, 30000])
        if off + n > MAX_FILE:
            off = 0
        b = self.rng.randbytes(n)
        self.ev(op="write", paths=[], inos=[i])
        os.pwrite(fd, b, off)
        if off > len(d):
            d.extend(bytes(off - len(d)))
        d[off:off + n] = b

    def op_write(self):
        p = self.rand_file()
        if p is None:
            return
        fd = os.open(self.P(p), os.O_WRONLY)
        try:
            self._write(p, fd)
        finally:
            os.close(fd)

    def op_write_fsync(self):
        p = self.rand_file()
        if p is None:
            return
        fd = os.open(self.P(p), os.O_WRONLY)
        try:
            for _ in range(self.rng.randrange(1, 4)):
                self._write(p, fd)
            self.fsync_fd(fd, p, self.ino[p], self.rng.random() < 0.3)
        finally:
            os.close(fd)

    def op_truncate(self):
        p = self.rand_file()
        if p is None:
            return
        i = self.ino[p]
        d = self.data[i]
        n = self.rng.choice([0, 1, 3000, 4096, 5000, len(d) // 2, len(d) + 7000])
        n = min(n, MAX_FILE)
        self.ev(op="truncate", paths=[], inos=[i])
        os.truncate(self.P(p), n)
        if n < len(d):
            del d[n:]
        else:
            d.extend(bytes(n - len(d)))

    def op_falloc(self):
        p = self.rand_file()
        if p is None:
            return
        i = self.ino[p]
        d = self.data[i]
        mode = self.rng.choice([fsx.FALLOC_FL_KEEP_SIZE,
                                fsx.FALLOC_FL_PUNCH_HOLE | fsx.FALLOC_FL_KEEP_SIZE,
                                fsx.FALLOC_FL_ZERO_RANGE, 0])
        off = self.rng.randrange(0, len(d) + 4096)
        n = self.rng.choice([1, 100, 4096, 10000])
        if off + n > MAX_FILE:
            return
        self.ev(op="falloc", paths=[], inos=[i])
        fd = os.open(self.P(p), os.O_WRONLY)
        try:
            fsx.fallocate(fd, mode, off, n)
        except OSError as e:
            # punching and zeroing a compressed file are refused, as by the
            # kernel's f2fs_fallocate: nothing changed
            if (e.errno == errno.EOPNOTSUPP and mode & (fsx.FALLOC_FL_PUNCH_HOLE |
                                                        fsx.FALLOC_FL_ZERO_RANGE)
                    and is_compressed(fd)):
                return
            raise
        finally:
            os.close(fd)
        end = off + n
        if mode & (fsx.FALLOC_FL_PUNCH_HOLE | fsx.FALLOC_FL_ZERO_RANGE):
            z = min(end, len(d)) - off
            if z > 0:
                d[off:off + z] = bytes(z)
        if not mode & fsx.FALLOC_FL_KEEP_SIZE and end > len(d):
            d.extend(bytes(end - len(d)))

    def op_rename(self):
        a = self.rand_file()
        b = self.rand_path()
        if a is None or a == b:
            return
        i = self.ino[a]
        if self.ino.get(b) == i:     # two links of one inode: rename does nothing
            self.ev(op="rename", paths=[a, b], inos=[i])
            os.rename(self.P(a), self.P(b))
            return
        inos = [i] + ([self.ino[b]] if b in self.ino else [])
        self.ev(op="rename", paths=[a, b], inos=inos)
        os.rename(self.P(a), self.P(b))
        del self.ino[a]
        self.ino[b] = i

    def op_unlink(self):
        p = self.rand_file()
        if p is None:
            return
        self.ev(op="unlink", paths=[p], inos=[self.ino[p]])
        os.unlink(self.P(p))
        del self.ino[p]

    def op_link(self):
        a = self.rand_file()
        b = self.rand_path()
        if a is None or b in self.ino:
            return
        self.ev(op="link", paths=[b], inos=[self.ino[a]])
        os.link(self.P(a), self.P(b))
        self.ino[b] = self.ino[a]

    def op_unlink_open(self):
        p = self.rand_file()
        if p is None or len(self.held) > 8:
            return
        i = self.ino[p]
        self.ev(op="unlink_open", paths=[p], inos=[i])
        fd = os.open(self.P(p), os.O_RDWR)
        self.held.append(fd)
        self.held_inos.add(i)
        os.unlink(self.P(p))
        del self.ino[p]
        b = self.rng.randbytes(5000)
        os.pwrite(fd, b, 0)          # other hard links of the inode see this too
        d = self.data[i]
        if len(d) < len(b):
            d.extend(bytes(len(b) - len(d)))
        d[:len(b)] = b
        os.fsync(fd)

    def fsync_fd(self, fd, p, i, datasync):
        (os.fdatasync if datasync else os.fsync)(fd)
        d = self.data[i]
        self.ev(ack="fdatasync" if datasync else "fsync", path=p, ino=i, size=len(d),
                crc=crc(bytes(d)))

    def op_fsync(self, datasync=False):
        p = self.rand_file()
        if p is None:
            return
        fd = os.open(self.P(p), os.O_RDONLY)
        try:
            self.fsync_fd(fd, p, self.ino[p], datasync)
        finally:
            os.close(fd)

    def op_fdatasync(self):
        self.op_fsync(True)

    def op_dirfsync(self):
        d = self.rng.choice(DIRS)
        fd = os.open(self.P(d), os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(fd)
            self.ev(ack="dirfsync", path=d)
        finally:
            os.close(fd)

    def op_atomic(self):
        """An atomic write: the file is fsync()ed, then START (or REPLACE),
        writes and truncates, and COMMIT, ABORT or a close without either.
        After a crash it holds what the fsync() acknowledged or, once the
        commit began, all of the write; an abort or a close leaves it as it
        was.  The writes log no intent: they must not reach the disk."""
        p = self.rand_file()
        if p is None:
            return
        i = self.ino[p]
        fd = os.open(self.P(p), os.O_RDWR)
        try:
            self.fsync_fd(fd, p, i, False)
            replace = self.rng.random() < 0.25
            new = bytearray() if replace else bytearray(self.data[i])
            fcntl.ioctl(fd, ATOMIC_REPLACE if replace else ATOMIC_START)
            for _ in range(self.rng.randrange(1, 6)):
                if self.rng.random() < 0.15:
                    n = min(self.rng.choice([0, 3000, len(new) // 2, len(new) + 3000]), MAX_FILE)
                    os.ftruncate(fd, n)
                    if n < len(new):
                        del new[n:]
                    else:
                        new.extend(bytes(n - len(new)))
                    continue
                off = self.rng.randrange(0, len(new) + 5000)
                n = self.rng.choice([1, 500, 4096, 5000, 30000])
                if off + n > MAX_FILE:
                    off = 0
                b = self.rng.randbytes(n)
                os.pwrite(fd, b, off)
                if off > len(new):
                    new.extend(bytes(off - len(new)))
                new[off:off + n] = b
            end = self.rng.random()
            if end < 0.7:
                h = crc(bytes(new))
                self.ev(atomic="commit", path=p, ino=i, size=len(new), crc=h)
                fcntl.ioctl(fd, ATOMIC_COMMIT)
                self.data[i][:] = new
                self.ev(ack="atomic", path=p, ino=i, size=len(new), crc=h)
            elif end < 0.85 or i in self.held_inos:
                # a close drops the write only when no other handle may write
                # (the kernel's release); a held one would keep it going
                fcntl.ioctl(fd, ATOMIC_ABORT)
        finally:
            os.close(fd)

    def op_sync(self):
        self.ev(op="sync", paths=[], inos=[])
        os.sync()     # not counted: syncfs may not reach the daemon


def read_log(path):
    out = []
    try:
        with open(path, "rb") as f:
            for line in f:
                try:
                    out.append(json.loads(line))
                except ValueError:
                    pass        # a line cut by the kill
    except FileNotFoundError:
        pass
    return out


def expectations(events):
    """The acknowledged fsyncs and atomic commits that nothing later
    touched: a list of (path, size, crc, class, index, alternatives), where
    alternatives are the (size, crc) of an atomic write whose commit began
    after the acknowledgement (it may have landed, but only as a whole)."""
    out = []
    for idx, e in enumerate(events):
        if e.get("ack") not in ACKS:
            continue
        p, i = e["path"], e["ino"]
        later = False
        alts = []
        for f in events[idx + 1:]:
            if "op" in f and (p in f["paths"] or i in f["inos"]):
                later = True
                break
            if f.get("ack") in ACKS and f["ino"] == i:
                later = True        # a later fsync of the same file is checked instead
                break
            if f.get("atomic") == "commit" and f["ino"] == i:
                alts.append((f["size"], f["crc"]))
        if later:
            continue
        made = None          # the last event before that gave p its name
        for j in range(idx, -1, -1):
            f = events[j]
            if f.get("op") in ("creat", "link") and p in f["paths"]:
                made = j
                break
            if f.get("op") == "rename" and f["paths"][1] == p:
                made = j
                break
        cls = "posix"
        if made is not None:
            d = os.path.dirname(p)
            if not any(f.get("ack") == "dirfsync" and f["path"] == d
                       for f in events[made + 1:]):
                cls = "f2fs"
        out.append((p, e["size"], e["crc"], cls, idx, alts))
    return out


# ---------------------------------------------------------------- the parent

class Runner:
    def __init__(self, a, binary, work):
        self.a = a
        self.binary = binary
        self.work = work
        self.image = os.path.join(work, "crash.img")
        self.mnt = os.path.join(work, "mnt")
        self.nmount = 0
        self.stats = collections.Counter()
        self.failures = []        # (class, message)
        self.features = None
        self.force_fresh = False

    def mount(self, options=()):
        self.nmount += 1
        more = [o for o in self.a.mount_options.split(",") if o]
        m = fsutil.Mount(self.binary, self.image, self.mnt, options=more + list(options),
                         log=os.path.join(self.work, "daemon.%d.log" % self.nmount))
        m.start()
        return m

    def clean_unmount(self, m, what):
        m.unmount()
        out = m.stderr()
        rep = fsutil.sanitizer_report(out)
        if rep or m.returncode != 0:
            raise fsx.Failure("%s: daemon exited %s%s\n%s"
                              % (what, m.returncode, (", " + rep) if rep else "", out[-3000:]))

    def crash(self, m, children=()):
        """SIGKILL the daemon and lazily unmount its dead mount; a sanitizer
        report it printed before is a failure.  With --fault shutdown the
        fault is F2FS_IOC_SHUTDOWN without sync instead: the workload
        (children) is stopped and the daemon must unmount cleanly, having
        written nothing after the shutdown."""
        if self.a.fault == "shutdown":
            fd = os.open(self.mnt, os.O_RDONLY | os.O_DIRECTORY)
            try:
                fcntl.ioctl(fd, SHUTDOWN, struct.pack("I", SHUTDOWN_NOSYNC))
            finally:
                os.close(fd)
            for child in children:
                child.kill()
                child.wait()
            self.clean_unmount(m, "unmount after the shutdown")
            return
        m._kill()
        if fsutil.is_fuse_mount(self.mnt):
            fsutil.run(["fusermount3", "-u", "-z", self.mnt], timeout=30)
        rep = fsutil.sanitizer_report(m.stderr())
        if rep:
            raise fsx.Failure("the daemon reported before the kill: %s\n%s"
                              % (rep, m.stderr()[-3000:]))

    def fresh_image(self, n):
        feats = self.a.features
        if feats is None:
            feats = fsx.EXTRA_FEATURES if n % 2 else ""
        self.features = feats
        fsx.make_image(self.image, fsx.parse_size(self.a.image_size), feats or None)
        m = self.mount()
        try:
            for d in DIRS:
                os.mkdir(os.path.join(self.mnt, d))
            rng = random.Random(self.a.seed * 1000 + n)
            for k in range(6):
                p = os.path.join(self.mnt, rng.choice(DIRS), rng.choice(NAMES))
                with open(p, "wb") as f:
                    f.write(rng.randbytes(rng.choice([10, 3000, 9000, 40000])))
            if self.a.ballast:
                self.add_ballast(rng)
        finally:
            self.clean_unmount(m, "setting up the image")
        self.check_fsck("fresh image")

    def add_ballast(self, rng):
        """--ballast F: fill F of the free space with 512 KiB files, then
        remove every third, so the workload runs with few free segments and
        many half-used ones: slack space recycling and cleaning at work
        while the daemon is killed."""
        st = os.statvfs(self.mnt)
        n = int(st.f_bavail * st.f_frsize * self.a.ballast) // (512 << 10)
        top = os.path.join(self.mnt, "ballast")
        os.mkdir(top)
        for k in range(n):
            with open(os.path.join(top, "b%05d" % k), "wb") as f:
                f.write(rng.randbytes(512 << 10))
        for k in range(0, n, 3):
            os.unlink(os.path.join(top, "b%05d" % k))

    def check_fsck(self, what):
        probs, out = fsx.fsck(self.image)
        if probs:
            raise fsx.Failure("fsck.f2fs %s: %s\n%s" % (what, "; ".join(probs[:8]), out[-3000:]))
        return out

    def recover_and_fsck(self, what):
        """Mount read-write (roll-forward), unmount cleanly, fsck must be clean."""
        probs, out = fsx.fsck(self.image)
        self.stats["crashed images fsck found something"] += bool(probs)
        with open(os.path.join(self.work, "fsck-crashed.log"), "a") as f:
            f.write("== %s: %s\n%s\n" % (what, "; ".join(probs[:8]) or "clean", out[-2000:]))
        try:
            m = self.mount()
        except fsutil.MountError as e:
            raise fsx.Failure("%s: recovery mount failed: %s" % (what, e))
        self.clean_unmount(m, "%s: recovery mount" % what)
        self.check_fsck("%s: after recovery and a clean unmount" % what)

    def read_tree(self):
        """Every regular file of the read-only mount: path -> bytes (reads must succeed)."""
        out = {}
        for dp, dirs, files in os.walk(self.mnt):
            dirs.sort()
            for n in sorted(files):
                p = os.path.join(dp, n)
                if os.path.isfile(p) and not os.path.islink(p):
                    with open(p, "rb") as f:
                        out[os.path.relpath(p, self.mnt)] = f.read()
                        # what --mount-options made of them (compression) shows
                        self.stats["compressed files read"] += is_compressed(f.fileno())
        return out

    def verify(self, exp, what):
        m = self.mount(("ro",))
        try:
            try:
                tree = self.read_tree()
            except OSError as e:
                raise fsx.Failure("%s: reading the recovered tree: %r" % (what, e))
        finally:
            self.clean_unmount(m, "%s: read-only mount" % what)
        for x in exp:
            p, size, h, cls, idx = x[:5]
            alts = x[5] if len(x) > 5 else ()     # the ACE suite's have none
            self.stats["checks " + cls] += 1
            got = tree.get(p)
            if got is None:
                msg = "%s: %s was fsync()ed (event %d, %d bytes) and is missing" % (
                    what, p, idx, size)
            elif (len(got), crc(got)) in alts:
                continue
            elif len(got) != size or crc(got) != h:
                msg = "%s: %s was fsync()ed (event %d) with %d bytes crc %s; has %d bytes crc %s" % (
                    what, p, idx, size, h, len(got), crc(got))
            else:
                continue
            self.failures.append((cls, msg))
            print("crashtest: FAIL [%s] %s" % (cls, msg), flush=True)

    def iteration(self, n):
        a = self.a
        what = "iteration %d" % n
        if n % a.fresh_every == 0 or self.force_fresh or not os.path.exists(self.image):
            self.force_fresh = False
            self.fresh_image(n // a.fresh_every + n)
        # one workload, or --jobs of them on disjoint names (j0-f3, j1-f3, ...)
        prefixes = [""] if a.jobs <= 1 else ["j%d-" % j for j in range(a.jobs)]
        logpaths = [os.path.join(a.logdir, "crash-log.%d%s" % (n, "." + pf[:-1] if pf else ""))
                    for pf in prefixes]
        for lp in logpaths:
            if os.path.exists(lp):
                os.unlink(lp)
        rng = random.Random(a.seed * 7919 + n)
        delay = rng.uniform(0.05, 3.0)
        m = self.mount()
        children = []
        for pf, lp in zip(prefixes, logpaths):
            args = [sys.executable, os.path.abspath(__file__), "--child", self.mnt, lp,
                    str(rng.randrange(1 << 30)), str(a.child_ops)] + ([pf] if pf else [])
            children.append(subprocess.Popen(args, stdin=subprocess.DEVNULL,
                                             stdout=subprocess.DEVNULL,
                                             stderr=open(os.path.join(self.work, "child.err"),
                                                         "ab")))
        if a.child_ops:          # a fixed operation count, then the kill (reproductions)
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline and not all(
                    any("done" in e or "err" in e for e in read_log(lp)) for lp in logpaths):
                time.sleep(0.05)
            time.sleep(0.2)
        else:
            time.sleep(delay)
        t_kill = time.monotonic()
        self.crash(m, children)
        for child in children:
            try:
                child.kill()
            except ProcessLookupError:
                pass
            child.wait()
        exp = []
        for lp in logpaths:
            events = read_log(lp)
            for e in events:
                if "err" in e and e["t"] < t_kill - 0.005:
                    raise fsx.Failure("%s: the workload's %s failed before the crash: %s"
                                      % (what, e["err"], e["msg"]))
            exp += expectations(events)
            self.stats["acknowledged fsyncs"] += sum(1 for e in events
                                                     if e.get("ack") in ("fsync", "fdatasync"))
            self.stats["atomic commits"] += sum(1 for e in events if e.get("ack") == "atomic")
            self.stats["operations"] += sum(1 for e in events if "op" in e)
        self.recover_and_fsck(what)
        self.verify(exp, what)
        if a.verbose:
            print("crashtest: %s: killed after %.2f s, %d checked"
                  % (what, delay, len(exp)), flush=True)

    def run_random(self):
        a = self.a
        t0 = time.monotonic()
        done = 0
        for n in range(a.iterations):
            if time.monotonic() - t0 > a.time_limit:
                print("crashtest: time limit reached after %d iterations" % n)
                break
            try:
                self.iteration(n)
            except (fsx.Failure, fsutil.MountError) as e:
                self.failures.append(("hard", str(e)))
                print("crashtest: FAIL [hard] %s" % str(e)[:3000], flush=True)
                self.force_fresh = True
                if a.stop_on_failure:
                    break
            done += 1
        print("crashtest: random: %d iterations in %.1f s; %s" % (
            done, time.monotonic() - t0,
            ", ".join("%s %d" % kv for kv in sorted(self.stats.items()))))

    # ------------------------------------------------ the ACE-style suite
    def ace_template(self, feats):
        tmpl = os.path.join(self.work, "ace-template-%s.img" % ("extra" if feats else "default"))
        if os.path.exists(tmpl):
            return tmpl
        self.features = feats
        fsx.make_image(self.image, fsx.parse_size(self.a.image_size), feats or None)
        m = self.mount()
        try:
            os.mkdir(os.path.join(self.mnt, "D"))
            for p, n in ACE_FILES.items():
                with open(os.path.join(self.mnt, p), "wb") as f:
                    f.write(ace_bytes(p, n))
        finally:
            self.clean_unmount(m, "ACE template")
        self.check_fsck("ACE template")
        shutil.copyfile(self.image, tmpl)
        return tmpl

    def ace_case(self, seq, sync, tmpl):
        name = "%s+%s" % ("+".join(seq), sync)
        fsutil.run(["cp", "--sparse=always", tmpl, self.image], check=True)
        model = {p: bytearray(ace_bytes(p, n)) for p, n in ACE_FILES.items()}
        st = {"cur": "A", "made": set(), "gone": {}, "alias": {}}
        m = self.mount()
        try:
            for k, op in enumerate(seq):
                ACE_OPS[op](self.mnt, st, model, k)
            fd = os.open(os.path.join(self.mnt, st["cur"]), os.O_RDONLY)
            (os.fdatasync if sync == "fdatasync" else os.fsync)(fd)
        except OSError as e:
            self.crash(m)
            raise fsx.Failure("ACE %s: operation failed on the live mount: %r" % (name, e))
        if self.a.fault == "shutdown":
            os.close(fd)        # a clean unmount follows the shutdown
        self.crash(m)
        try:
            os.close(fd)
        except OSError:
            pass
        self.recover_and_fsck("ACE " + name)
        cur = st["cur"]
        want = model[cur]
        exp = [(cur, len(want), crc(bytes(want)), "f2fs" if cur in st["made"] else "posix", 0)]
        # every other name of the fsync()ed inode that the sequence made
        for p in sorted(st["made"]):
            if p != cur and st.get("alias", {}).get(p) == st.get("alias", {}).get(cur):
                exp.append((p, len(want), crc(bytes(want)), "f2fs", 0))
        before = len(self.failures)
        self.verify(exp, "ACE " + name)
        # a rename is atomic: the old name is gone once the new one is there
        m = self.mount(("ro",))
        try:
            mine = st["alias"].get(cur, cur)
            for p, whose in sorted(st["gone"].items()):
                if whose != mine or cur not in st["made"]:
                    continue
                if os.path.exists(os.path.join(self.mnt, p)):
                    msg = "ACE %s: %s was renamed away before the fsync and is back" % (name, p)
                    self.failures.append(("f2fs", msg))
                    print("crashtest: FAIL [f2fs] %s" % msg, flush=True)
        finally:
            self.clean_unmount(m, "ACE %s: read-only mount" % name)
        self.stats["ace cases"] += 1
        return len(self.failures) == before

    def run_ace(self):
        a = self.a
        t0 = time.monotonic()
        syncs = ["fsync", "fdatasync"]
        cases = []
        for n in range(1, a.ace_len + 1):
            for seq in itertools.product(sorted(ACE_OPS), repeat=n):
                for sync in syncs:
                    if a.ace_quick and sync == "fdatasync" and n > 1:
                        continue
                    cases.append((seq, sync))
        feats_list = ["", fsx.EXTRA_FEATURES] if a.features is None else [a.features]
        bad = 0
        for ci, (seq, sync) in enumerate(cases):
            if time.monotonic() - t0 > a.time_limit:
                print("crashtest: ACE: time limit reached after %d cases" % ci)
                break
            feats = feats_list[ci % len(feats_list)]
            tmpl = self.ace_template(feats)
            try:
                ok = self.ace_case(seq, sync, tmpl)
            except (fsx.Failure, fsutil.MountError) as e:
                self.failures.append(("hard", str(e)))
                print("crashtest: FAIL [hard] ACE %s+%s: %s" % ("+".join(seq), sync, str(e)[:3000]),
                      flush=True)
                ok = False
            if not ok:
                bad += 1
        print("crashtest: ACE: %d cases in %.1f s, %d failed" % (
            self.stats["ace cases"], time.monotonic() - t0, bad))


# ---------------------------------------------------------------- the ACE operations

ACE_FILES = {"A": 3000, "B": 9000, "D/C": 200}


def ace_bytes(p, n, salt=0):
    return random.Random("%s/%d/%d" % (p, n, salt)).randbytes(n)


def _ace_creat(mnt, st, model, k):
    p = "N%d" % k
    os.close(os.open(os.path.join(mnt, p), os.O_CREAT | os.O_WRONLY, 0o644))
    model[p] = bytearray()
    st["made"].add(p)
    st.setdefault("alias", {})[p] = p
    st["cur"] = p


def _ace_write(mnt, st, model, k):
    p = st["cur"]
    d = model[p]
    # alternate: append across the inline limit, overwrite in the middle
    if k % 2 == 0:
        off, b = len(d), ace_bytes(p, 5000, k)
    else:
        off, b = max(0, len(d) // 2 - 100), ace_bytes(p, 300, k)
    fd = os.open(os.path.join(mnt, p), os.O_WRONLY)
    try:
        os.pwrite(fd, b, off)
    finally:
        os.close(fd)
    if off > len(d):
        d.extend(bytes(off - len(d)))
    d[off:off + len(b)] = b
    _share(st, model, p)


def _share(st, model, p):
    """Hard links see the same bytes."""
    al = st.get("alias", {})
    for q, root in al.items():
        if q != p and root == al.get(p, p):
            model[q] = model[p]


def _ace_link(mnt, st, model, k):
    p = st["cur"]
    q = "D/L%d" % k
    os.link(os.path.join(mnt, p), os.path.join(mnt, q))
    al = st.setdefault("alias", {})
    al.setdefault(p, p)
    al[q] = al[p]
    model[q] = model[p]
    st["made"].add(q)


def _ace_rename(mnt, st, model, k):
    p = st["cur"]
    q = "D/R%d" % k if k % 2 == 0 else "B"          # to a new name, or over B
    if q == p:
        q = "D/R%d" % k
    os.rename(os.path.join(mnt, p), os.path.join(mnt, q))
    model[q] = model.pop(p)
    al = st.setdefault("alias", {})
    al[q] = al.pop(p, p)
    st["made"].discard(p)
    st["made"].add(q)
    st["gone"][p] = al[q]          # the old name, and whose it was
    st["gone"].pop(q, None)
    st["cur"] = q


def _ace_truncate(mnt, st, model, k):
    p = st["cur"]
    d = model[p]
    n = [100, 20000, 0][k % 3]
    os.truncate(os.path.join(mnt, p), n)
    if n < len(d):
        del d[n:]
    else:
        d.extend(bytes(n - len(d)))


def _ace_falloc(mnt, st, model, k):
    p = st["cur"]
    d = model[p]
    fd = os.open(os.path.join(mnt, p), os.O_WRONLY)
    try:
        if k % 3 == 0:                    # allocate past the end, size kept
            fsx.fallocate(fd, fsx.FALLOC_FL_KEEP_SIZE, len(d), 16384)
        elif k % 3 == 1:                  # grow
            fsx.fallocate(fd, 0, 0, len(d) + 10000)
            d.extend(bytes(10000))
        else:                             # punch a hole
            fsx.fallocate(fd, fsx.FALLOC_FL_PUNCH_HOLE | fsx.FALLOC_FL_KEEP_SIZE, 0, 4096)
            z = min(4096, len(d))
            d[:z] = bytes(z)
    finally:
        os.close(fd)


ACE_OPS = {"creat": _ace_creat, "write": _ace_write, "link": _ace_link,
           "rename": _ace_rename, "truncate": _ace_truncate, "falloc": _ace_falloc}


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--child"]:
        Workload(argv[1], argv[2], int(argv[3]), int(argv[4]), *argv[5:6]).run()
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--iterations", type=int, default=50)
    ap.add_argument("--time-limit", type=float, default=3600,
                    help="seconds for each part (random iterations, ACE suite)")
    ap.add_argument("--image-size", default="128M")
    ap.add_argument("--features", default=None,
                    help="mkfs.f2fs -O list for every image ('' for the defaults); by "
                    "default fresh images alternate the defaults and %s" % fsx.EXTRA_FEATURES)
    ap.add_argument("--mount-options", default="",
                    help="more f2fs-fuse -o options for every mount, e.g. "
                    "compress_algorithm=lz4,compress_extension=* with --features "
                    "extra_attr,compression: the workload's files are compressed")
    ap.add_argument("--fresh-every", type=int, default=10)
    ap.add_argument("--jobs", type=int, default=1,
                    help="workloads running at once, each on its own file names "
                    "(concurrent fsyncs: group commits)")
    ap.add_argument("--ballast", type=float, default=0.0,
                    help="fill this fraction of a fresh image's free space first, "
                         "a third of it then freed again (default 0)")
    ap.add_argument("--ace", action="store_true", help="also run the ACE-style suite")
    ap.add_argument("--ace-only", action="store_true", help="only the ACE-style suite")
    ap.add_argument("--ace-len", type=int, default=2, help="longest sequence (1-3)")
    ap.add_argument("--ace-quick", action="store_true",
                    help="fdatasync only after single operations")
    ap.add_argument("--child-ops", type=int, default=0,
                    help="the workload stops after this many operations and the daemon is "
                    "killed then (deterministic reproductions)")
    ap.add_argument("--exclude", default="",
                    help="comma list of workload operations not to run (creat, write, "
                    "truncate, falloc, rename, unlink, link, fsync, fdatasync, dirfsync, "
                    "write_fsync, unlink_open, sync, atomic)")
    ap.add_argument("--fault", choices=("kill", "shutdown"), default="kill",
                    help="how the crash comes: SIGKILL of the daemon, or "
                         "F2FS_IOC_SHUTDOWN without sync and a clean unmount")
    ap.add_argument("--stop-on-failure", action="store_true")
    ap.add_argument("--workdir", default=None)
    ap.add_argument("--allow-f2fs-failures", action="store_true",
                    help="exit 0 when only f2fs-class (new name) checks fail")
    ap.add_argument("-v", "--verbose", action="store_true")
    a = ap.parse_args(argv)
    if a.seed is None:
        a.seed = random.SystemRandom().randrange(1 << 32)
    if a.features == "extra":
        a.features = fsx.EXTRA_FEATURES
    print("crashtest: seed %d" % a.seed, flush=True)
    binary = os.environ.get("F2FS_FUSE") or fsx.DEFAULT_BINARY
    work = a.workdir or tempfile.mkdtemp(prefix="crashtest.", dir="/var/tmp")
    os.makedirs(work, exist_ok=True)
    os.environ["CRASHTEST_EXCLUDE"] = a.exclude
    a.logdir = tempfile.mkdtemp(prefix="crashtest-log.", dir="/dev/shm")
    r = Runner(a, binary, work)
    hard = None
    try:
        if not a.ace_only:
            r.run_random()
        if a.ace or a.ace_only:
            r.run_ace()
    except fsx.Failure as e:
        hard = str(e)
    except fsutil.MountError as e:
        hard = "mount: %s" % e
    finally:
        if fsutil.is_fuse_mount(r.mnt):
            fsutil.run(["fusermount3", "-u", "-z", r.mnt], timeout=30)
        fsutil.kill_all_daemons()
    by = collections.Counter(c for c, _ in r.failures)
    print("crashtest: seed %d: checks %s; failures: hard %d, posix %d, f2fs %d%s"
          % (a.seed, ", ".join("%s %d" % (k[7:], v) for k, v in sorted(r.stats.items())
                               if k.startswith("checks ")),
             by["hard"], by["posix"], by["f2fs"], "; features of the last image: %r" % r.features))
    if hard:
        print("crashtest: FAILED (seed %d): %s" % (a.seed, hard))
    bad = hard or by["hard"] or by["posix"] or (by["f2fs"] and not a.allow_f2fs_failures)
    if bad:
        logs = os.path.join(work, "workload-logs")
        shutil.rmtree(logs, ignore_errors=True)
        shutil.move(a.logdir, logs)
        print("crashtest: scratch folder kept: %s (workload logs in %s)" % (work, logs))
        return 1
    shutil.rmtree(work, ignore_errors=True)
    shutil.rmtree(a.logdir, ignore_errors=True)
    return 0


def _on_term(signum, frame):
    raise SystemExit(128 + signum)      # unwinds, so daemons and mounts are cleaned up


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, _on_term)
    sys.exit(main())
