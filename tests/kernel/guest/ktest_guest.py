"""Guest-side helpers, run by the guest's python3 as `python3 -m ktest_guest CMD`.

    manifest DIR [--no-content] [--no-xattrs]
        print DIR's manifest (the integration suite's manifest.py format)
    populate DIR [--seed N] [--big]
        build the reference tree in DIR through the mounted filesystem
    populate-compressed DIR [--seed N]
        compressed files, one +c directory per algorithm
    compressed DIR
        the files under DIR that have the compression flag
    cblocks DIR
        each of those with its F2FS_IOC_GET_COMPRESS_BLOCKS count, tab-separated
    release PATH...  /  reserve PATH...
        F2FS_IOC_RELEASE_COMPRESS_BLOCKS / RESERVE_COMPRESS_BLOCKS; prints the count
    fsync-round DIR [--seed N]
        changes made durable with fsync/fdatasync (and some that are not);
        prints the partial manifest of what fsync guarantees
    more DIR [--seed N]
        a second round of changes on a tree (any tree): appends, overwrites,
        truncates, new and removed entries, renames, hard links, xattr
        changes, chmod/chown/utime; works on what it finds
    fsinfo DIR
        statvfs of DIR as key=value lines
    add-key MNT KEYFILE [--descriptor HEX]
        add a raw fscrypt key to the filesystem at MNT (FS_IOC_ADD_ENCRYPTION_KEY);
        prints the key identifier the kernel computed (v2), or the descriptor (v1)
    set-policy DIR KIND KEY
        FS_IOC_SET_ENCRYPTION_POLICY on the empty DIR: KIND is a CRYPT_KINDS
        name, KEY the key identifier (v2) or descriptor (v1) in hex
    get-policy DIR...
        FS_IOC_GET_ENCRYPTION_POLICY_EX: one line per DIR, "DIR<TAB>KIND<TAB>KEY"
        (KIND is the CRYPT_KINDS name that matches, or the raw fields)
    crypt-tree DIR [--seed N] [--small]
        the tree written into each encrypted directory (crypt_tree)
    crypt-more DIR... [--seed N]
        a round of changes on trees made by crypt-tree (crypt_more)
    flags PATH...  /  chattr PATH (+|-)HEX  /  try-writes PATH...
        FS_IOC_GETFLAGS of each PATH; set or clear FS_*_FL bits; what a plain
        and an O_APPEND write of each PATH give (ok or the errno name)
    churn DIR [--seed N] [--mib N] [--fill-percent N]
        fill the filesystem nearly full, then overwrite small pieces at
        random (fill_and_churn): slack space recycling and cleaning

Only the standard library; the guest ships a minimal one (see guestimage.py).
Every step is deterministic for a given seed, so a failing tree can be made
again on the host side from the same numbers.
"""

import errno
import hashlib
import os
import random
import socket
import stat
import struct
import sys
import time

MiB = 1 << 20
GiB = 1 << 30

# Seconds since the epoch used for mtimes: 0, negative, the 32-bit edges, 2100.
MTIMES = (0, -1, -86400 * 365 * 30, 1, 2 ** 31 - 1, 2 ** 31, 4102444800, 1700000000)
OWNERS = ((0, 0), (1000, 1000), (65534, 65534), (65535, 1), (123456789, 987654321),
          (4294967294, 7))
MODES = (0o000, 0o644, 0o600, 0o755, 0o777, 0o4755, 0o2755, 0o1777, 0o7777, 0o6711,
         0o444, 0o111)
ODD_NAMES = ("with space", " lead", "trail ", "tab\there", "new\nline", "back\\slash",
             "ctl\x01\x7f", "semi;colon=eq", "ünïcødé-日本語-😀", "-dash", "...", "..x",
             "x" * 255, "é" * 127)

ACL_USER_OBJ, ACL_USER, ACL_GROUP_OBJ, ACL_GROUP, ACL_MASK, ACL_OTHER = (
    0x01, 0x02, 0x04, 0x08, 0x10, 0x20)
ACL_UNDEFINED = 0xFFFFFFFF


def posix_acl(entries):
    """The system.posix_acl_* xattr value (version 2) for [(tag, perm, id)]."""
    return struct.pack("<I", 2) + b"".join(struct.pack("<HHI", t, p, i) for t, p, i in entries)


def _data(rng, size):
    """`size` bytes mixing random runs, text-like runs and zero runs."""
    out = bytearray()
    while len(out) < size:
        n = min(size - len(out), rng.choice((1, 17, 512, 4096, 4096 * 3 + 5, 65536)))
        k = rng.randrange(3)
        if k == 0:
            out += rng.randbytes(n)
        elif k == 1:
            out += (b"line %d of the f2fs kernel test\n" % len(out)) * (n // 32 + 1)
        else:
            out += bytes(n)
    return bytes(out[:size])


def write_file(path, data, mode=0o644):
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    try:
        mv = memoryview(data)
        while mv:
            n = os.write(fd, mv[:MiB])
            mv = mv[n:]
    finally:
        os.close(fd)


def write_at(path, chunks, size=None, mode=0o644):
    """Write {offset: bytes} into a (sparse) file, then set its size."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, mode)
    try:
        for off, data in sorted(chunks.items()):
            os.pwrite(fd, data, off)
        if size is not None:
            os.ftruncate(fd, size)
    finally:
        os.close(fd)


class Tree:
    def __init__(self, root, seed):
        self.root = root
        self.rng = random.Random(seed)
        self.times = []           # (path, mtime_ns) applied at the end, deepest first
        self.count = 0
        self.t0 = self.t1 = time.monotonic()
        self.timing = os.environ.get("KTEST_TIMING")

    def section(self, name):
        """Note the time the previous section took (on stderr with KTEST_TIMING set)."""
        now = time.monotonic()
        if self.timing:
            print("populate: %-10s %6.2fs" % (name, now - self.t1), file=sys.stderr)
        self.t1 = now

    def p(self, *parts):
        return os.path.join(self.root, *parts)

    def mkdir(self, *parts, mode=0o755):
        path = self.p(*parts)
        os.mkdir(path, mode)
        os.chmod(path, mode)
        self.count += 1
        return path

    def file(self, *parts, size=0, data=None, mode=0o644):
        path = self.p(*parts)
        write_file(path, _data(self.rng, size) if data is None else data, mode)
        if mode != 0o644:
            os.chmod(path, mode)
        self.count += 1
        return path

    def stamp(self, path, sec, nsec=None):
        if nsec is None:
            nsec = self.rng.randrange(10 ** 9)
        self.times.append((path, sec * 10 ** 9 + nsec))

    def apply_times(self):
        # children before parents: creating a child changes the parent's mtime
        for path, ns in sorted(self.times, key=lambda t: -t[0].count("/")):
            os.utime(path, ns=(ns, ns), follow_symlinks=False)


def populate(root, seed=1, big=False):
    t = Tree(root, seed)
    rng = t.rng

    # regular files around the inline-data limits and block edges
    t.mkdir("sizes")
    sizes = sorted({0, 1, 2, 100, 511, 512, 3400, 3451, 3452, 3453, 3487, 3488, 3489,
                    4095, 4096, 4097, 8192, 8193, 12289, 65536, 65537, 200001})
    for s in sizes:
        t.file("sizes", "s%06d" % s, size=s)
    t.section("sizes")
    # large files: the inode's direct pointers end near 3.6 MiB, the two
    # direct nodes near 11.3 MiB, indirect nodes go on from there
    t.mkdir("large")
    for s in (MiB, 3 * MiB + 4097, 4 * MiB - 1, 12 * MiB + 333) + ((40 * MiB + 1,) if big else ()):
        t.file("large", "l%d" % s, size=s)

    t.section("large")
    # sparse files, fallocated ones, all-hole ones, grown and shrunk ones
    t.mkdir("sparse")
    blk = lambda n: _data(rng, n)  # noqa: E731
    write_at(t.p("sparse", "holes"), {0: blk(4096), MiB + 10: blk(5000),
                                      6 * MiB: blk(70000), 40 * MiB: blk(4096)},
             size=40 * MiB + 8192)
    write_at(t.p("sparse", "far"), {4 * GiB: blk(8192), 8 * GiB + 100 * MiB: blk(3000)},
             size=8 * GiB + 100 * MiB + 77881)
    write_at(t.p("sparse", "all-hole"), {}, size=10 * MiB + 3)
    write_at(t.p("sparse", "tail-hole"), {0: blk(9000)}, size=2 * MiB)
    write_at(t.p("sparse", "shrunk"), {0: blk(3 * MiB)}, size=MiB + 1234)
    write_at(t.p("sparse", "inline-grown"), {0: blk(100)})
    write_at(t.p("sparse", "inline-grown"), {100: blk(9000)})
    write_at(t.p("sparse", "overwritten"), {0: blk(300000)})
    write_at(t.p("sparse", "overwritten"), {4000: blk(10000), 200000: blk(50)})
    fd = os.open(t.p("sparse", "fallocated"), os.O_WRONLY | os.O_CREAT, 0o644)
    os.posix_fallocate(fd, 0, 2 * MiB)
    os.pwrite(fd, blk(5000), 4096 * 10)
    os.close(fd)
    fd = os.open(t.p("sparse", "fallocated-only"), os.O_WRONLY | os.O_CREAT, 0o644)
    os.posix_fallocate(fd, 0, 300000)
    os.close(fd)
    t.count += 9

    t.section("sparse")
    # directories: many entries (multi-level hash), holes from deletions,
    # inline dentry dirs, one that outgrew inline and shrank back, nesting
    t.mkdir("bigdir")
    for i in range(2000):
        t.file("bigdir", "entry-%05d-%s" % (i, "y" * (i % 40)))
    t.section("bigdir")
    t.mkdir("holey")
    for i in range(600):
        t.file("holey", "h%04d" % i, size=i % 7)
    for i in range(0, 600, 3):
        os.unlink(t.p("holey", "h%04d" % i))
    t.section("holey")
    t.mkdir("smalldir")
    for i in range(5):
        t.file("smalldir", "f%d" % i, size=10 * i)
    t.mkdir("shrunkdir")
    for i in range(300):
        t.file("shrunkdir", "tmp-%03d" % i)
    for i in range(300):
        if i % 50:
            os.unlink(t.p("shrunkdir", "tmp-%03d" % i))
    t.mkdir("emptydir")
    deep = ["deep"]
    t.mkdir("deep")
    for i in range(30):
        deep.append("d%02d" % i)
        t.mkdir(*deep)
    t.file(*(deep + ["bottom"]), size=33)

    t.section("dirs")
    # odd names
    t.mkdir("names")
    for n in ODD_NAMES:
        t.file("names", n, size=len(n.encode()))

    t.section("names")
    # symlinks (short ones inline in the inode, long ones in a data block)
    t.mkdir("links")
    for n in (1, 2, 59, 60, 61, 100, 255, 1000, 3000, 3451, 3452, 3453, 4000, 4095):
        target = ("t" * (n - 1) + "/")[:n] if n > 1 else "t"
        os.symlink(target, t.p("links", "sym%04d" % n))
        t.count += 1
    os.symlink("../sizes/s000100", t.p("links", "rel"))
    os.symlink("/absolute/dangling", t.p("links", "abs"))
    os.symlink("ünïcødé-日本語", t.p("links", "utf8"))
    # hard links, within and across directories
    t.mkdir("hard")
    a = t.file("hard", "a", size=5000)
    for n in ("a2", "a3"):
        os.link(a, t.p("hard", n))
    os.link(a, t.p("sizes", "hard-a4"))
    b = t.file("hard", "b", size=10)
    os.link(b, t.p("hard", "b2"))
    os.unlink(b)

    t.section("links")
    # special files
    t.mkdir("special")
    os.mkfifo(t.p("special", "fifo"), 0o640)
    for name, kind, dev in (("null", stat.S_IFCHR, (1, 3)), ("tty", stat.S_IFCHR, (5, 0)),
                            ("big-chr", stat.S_IFCHR, (4095, 1048575)),
                            ("sda", stat.S_IFBLK, (8, 0)), ("big-blk", stat.S_IFBLK, (300, 70000))):
        os.mknod(t.p("special", name), kind | 0o600, os.makedev(*dev))
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(t.p("special", "sock"))
    s.close()
    t.count += 7

    t.section("special")
    # modes and owners
    t.mkdir("modes")
    for m in MODES:
        t.file("modes", "f%04o" % m, size=3, mode=m)
        t.mkdir("modes", "d%04o" % m, mode=m)
    t.mkdir("owners")
    for uid, gid in OWNERS:
        f = t.file("owners", "u%d-g%d" % (uid, gid), size=1)
        os.chown(f, uid, gid)
        d = t.mkdir("owners", "dir-u%d" % uid)
        os.chown(d, uid, gid)
        ln = t.p("owners", "sym-u%d" % uid)
        os.symlink("target", ln)
        os.chown(ln, uid, gid, follow_symlinks=False)
    # chown clears setuid/setgid: set the modes again afterwards
    os.chmod(t.p("owners"), 0o2775)

    t.section("modes")
    # xattrs: user/trusted/security, empty and large values, many on one
    # file, on a directory and a symlink, POSIX ACLs
    t.mkdir("xattr")
    f = t.file("xattr", "one", size=10)
    os.setxattr(f, "user.one", b"1")
    f = t.file("xattr", "empty-value", size=0)
    os.setxattr(f, "user.empty", b"")
    f = t.file("xattr", "big-value", size=100)
    os.setxattr(f, "user.big", _data(rng, 3000))
    f = t.file("xattr", "many", size=4096)
    for i in range(30):
        os.setxattr(f, "user.attr-%02d" % i, ("value %d " % i).encode() * (i % 5 + 1))
    f = t.file("xattr", "namespaces", size=1)
    os.setxattr(f, "user.u", b"user")
    os.setxattr(f, "trusted.t", b"trusted")
    os.setxattr(f, "security.s", b"security")
    f = t.file("xattr", "inline-data-and-xattr", size=2000)
    os.setxattr(f, "user.small", b"x" * 40)
    d = t.mkdir("xattr", "dir")
    os.setxattr(d, "user.on-dir", b"dir value")
    os.setxattr(d, "trusted.dir", _data(rng, 500))
    ln = t.p("xattr", "symlink")
    os.symlink("one", ln)
    os.setxattr(ln, "trusted.on-symlink", b"sym", follow_symlinks=False)
    f = t.file("xattr", "odd-names", size=1)
    os.setxattr(f, "user.semi;colon=eq", b"odd")
    os.setxattr(f, "user.ünï", b"utf8")
    f = t.file("xattr", "acl", size=1, mode=0o640)
    os.setxattr(f, "system.posix_acl_access", posix_acl([
        (ACL_USER_OBJ, 6, ACL_UNDEFINED), (ACL_USER, 4, 1000), (ACL_USER, 7, 123456),
        (ACL_GROUP_OBJ, 4, ACL_UNDEFINED), (ACL_GROUP, 5, 50), (ACL_MASK, 7, ACL_UNDEFINED),
        (ACL_OTHER, 0, ACL_UNDEFINED)]))
    d = t.mkdir("xattr", "acl-dir", mode=0o750)
    acl = posix_acl([(ACL_USER_OBJ, 7, ACL_UNDEFINED), (ACL_USER, 5, 1001),
                     (ACL_GROUP_OBJ, 5, ACL_UNDEFINED), (ACL_MASK, 5, ACL_UNDEFINED),
                     (ACL_OTHER, 0, ACL_UNDEFINED)])
    os.setxattr(d, "system.posix_acl_default", acl)
    os.setxattr(d, "system.posix_acl_access", acl)
    t.file("xattr", "acl-dir", "inherits", size=5)

    t.section("xattrs")
    # a few random files of random sizes
    t.mkdir("random")
    for i in range(60):
        t.file("random", "r%03d" % i, size=rng.choice((0, 1, 100, 3000, 3500, 5000, 70000)))

    t.section("random")
    # mtimes: everything gets one, some get the special values
    # (in sorted order: the same seed gives the same times on any filesystem)
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for n in dirnames + sorted(filenames):
            path = os.path.join(dirpath, n)
            if rng.random() < 0.3:
                t.stamp(path, rng.choice(MTIMES))
            else:
                t.stamp(path, 1500000000 + rng.randrange(10 ** 8))
    t.stamp(root, 1600000000, 123456789)
    t.apply_times()
    t.section("times")
    return t.count


FS_IOC_GETFLAGS = 0x80086601
FS_IOC_SETFLAGS = 0x40086602
FS_COMPR_FL = 0x00000004
F2FS_IOC_SET_COMPRESS_OPTION = 0x4002f516     # _IOW(0xf5, 22, {u8 algorithm, u8 log})
COMPRESS_ALGOS = {"lzo": 0, "lz4": 1, "zstd": 2, "lzo-rle": 3}


def set_flags(path, add):
    import fcntl
    fd = os.open(path, os.O_RDONLY)
    try:
        buf = fcntl.ioctl(fd, FS_IOC_GETFLAGS, struct.pack("<q", 0))
        flags = struct.unpack("<q", buf)[0] | add
        fcntl.ioctl(fd, FS_IOC_SETFLAGS, struct.pack("<q", flags))
    finally:
        os.close(fd)


def get_flags(path):
    """FS_IOC_GETFLAGS of path (the kernel writes an int)."""
    import fcntl
    fd = os.open(path, os.O_RDONLY)
    try:
        return struct.unpack("<q", fcntl.ioctl(fd, FS_IOC_GETFLAGS, struct.pack("<q", 0)))[0]
    finally:
        os.close(fd)


def clear_flags(path, remove):
    import fcntl
    fd = os.open(path, os.O_RDONLY)
    try:
        flags = get_flags(path) & ~remove
        fcntl.ioctl(fd, FS_IOC_SETFLAGS, struct.pack("<q", flags))
    finally:
        os.close(fd)


def try_writes(path):
    """What each kind of write to path gives: 'ok' or the errno name."""
    out = []
    for what, flags in (("write", os.O_WRONLY), ("append", os.O_WRONLY | os.O_APPEND)):
        try:
            fd = os.open(path, flags)
            try:
                os.write(fd, b"+")
            finally:
                os.close(fd)
            out.append("%s ok" % what)
        except OSError as e:
            out.append("%s %s" % (what, errno.errorcode.get(e.errno, e.errno)))
    return out


def populate_compressed(root, seed=3):
    """Compressed files (needs mkfs -O extra_attr,compression): a +c directory
    per algorithm, files created in it get the flag; each file's algorithm and
    cluster size are set with F2FS_IOC_SET_COMPRESS_OPTION before writing."""
    import fcntl
    rng = random.Random(seed)
    n = 0
    for algo, log in (("lz4", 2), ("zstd", 3), ("lzo", 2), ("lzo-rle", 4), ("lz4", 4)):
        d = os.path.join(root, "compr-%s-%d" % (algo, log))
        os.mkdir(d)
        set_flags(d, FS_COMPR_FL)
        for size in (0, 100, 4096, 16384, 16385, 70000, 3 * MiB + 5, 9 * MiB):
            p = os.path.join(d, "c%d" % size)
            fd = os.open(p, os.O_WRONLY | os.O_CREAT, 0o644)
            try:
                fcntl.ioctl(fd, F2FS_IOC_SET_COMPRESS_OPTION,
                            struct.pack("BB", COMPRESS_ALGOS[algo], log))
                data = bytearray()
                while len(data) < size:      # compressible, with some random runs
                    if rng.random() < 0.2:
                        data += rng.randbytes(rng.randrange(1, 3000))
                    else:
                        data += b"compressible %s line %d\n" % (algo.encode(), len(data))
                os.write(fd, bytes(data[:size]))
            finally:
                os.close(fd)
            n += 1
        # a sparse compressed file and one overwritten after the fact
        p = os.path.join(d, "sparse")
        write_at(p, {5 * MiB: b"z" * 50000}, size=6 * MiB)
        p = os.path.join(d, "rewritten")
        write_at(p, {0: b"a" * 100000})
        os.sync()
        write_at(p, {30000: b"b" * 7000})
        n += 2
    # uncompressed neighbours: a plain directory, and a file whose flag was
    # cleared before it got data
    d = os.path.join(root, "plain-dir")
    os.mkdir(d)
    for size in (0, 3000, 70000):
        write_file(os.path.join(d, "p%d" % size), _data(rng, size))
        n += 1
    return n


def compressed_paths(root):
    """Relative paths (manifest escaping) of files with FS_COMPR_FL set."""
    import fcntl
    import manifest
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        for name in filenames:
            p = os.path.join(dirpath, name)
            if not stat.S_ISREG(os.lstat(p).st_mode):
                continue
            fd = os.open(p, os.O_RDONLY)
            try:
                flags = struct.unpack("<q", fcntl.ioctl(fd, FS_IOC_GETFLAGS,
                                                        struct.pack("<q", 0)))[0]
            finally:
                os.close(fd)
            if flags & FS_COMPR_FL:
                out.append(manifest.escape(os.path.relpath(p, root)))
    return sorted(out)


def more(root, seed=2):
    """Changes on an existing tree, whatever it holds.  Returns a log of what
    was done (one line per change)."""
    rng = random.Random(seed)
    log = []
    files, dirs, links = [], [], []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for n in sorted(dirnames):
            dirs.append(os.path.join(dirpath, n))
        for n in sorted(filenames):
            p = os.path.join(dirpath, n)
            st = os.lstat(p)
            if stat.S_ISREG(st.st_mode):
                files.append((p, st.st_size))
            elif stat.S_ISLNK(st.st_mode):
                links.append(p)
    rng.shuffle(files)
    regular = [f for f in files if f[1] < 64 * MiB]
    # appends crossing block and node boundaries
    for p, size in regular[:15]:
        n = rng.choice((1, 100, 4096, 5000, 70000, 2 * MiB))
        with open(p, "ab") as f:
            f.write(_data(rng, n))
        log.append("append %s +%d" % (p, n))
    # overwrites inside
    for p, size in regular[15:30]:
        if size == 0:
            continue
        off = rng.randrange(size)
        n = rng.choice((1, 10, 4096, 9000))
        write_at(p, {off: _data(rng, n)})
        log.append("overwrite %s @%d +%d" % (p, off, n))
    # truncates, shorter and longer
    for p, size in regular[30:40]:
        new = rng.choice((0, size // 2, size + 1, size + 3 * MiB))
        os.truncate(p, new)
        log.append("truncate %s %d" % (p, new))
    # removals
    for p, size in regular[40:55]:
        os.unlink(p)
        log.append("unlink %s" % p)
    # new things
    top = os.path.join(root, "more-%d" % seed)
    os.mkdir(top)
    for i, s in enumerate((0, 7, 3452, 3453, 4096, 100000, 2 * MiB + 5, 5 * MiB)):
        write_file(os.path.join(top, "new%d" % i), _data(rng, s))
    write_at(os.path.join(top, "sparse"), {3 * MiB: _data(rng, 5000)}, size=20 * MiB)
    sub = os.path.join(top, "many")
    os.mkdir(sub)
    for i in range(700):
        write_file(os.path.join(sub, "m%04d" % i), b"")
    for i in range(0, 700, 4):
        os.unlink(os.path.join(sub, "m%04d" % i))
    os.symlink("new1", os.path.join(top, "link-short"))
    os.symlink("L" * 2000, os.path.join(top, "link-long"))
    os.mkfifo(os.path.join(top, "fifo"))
    os.mknod(os.path.join(top, "chr"), stat.S_IFCHR | 0o644, os.makedev(10, 200))
    log.append("created %s" % top)
    # hard links to surviving files, renames within and across directories
    survivors = [p for p, _ in regular[55:]]
    for i, p in enumerate(survivors[:5]):
        os.link(p, os.path.join(top, "hl%d" % i))
        log.append("link %s" % p)
    for i, p in enumerate(survivors[5:10]):
        os.rename(p, os.path.join(top, "moved%d" % i))
        log.append("rename %s" % p)
    for p in survivors[10:13]:
        os.rename(p, os.path.join(os.path.dirname(p), "renamed-" + os.path.basename(p)))
    if len(survivors) > 15:
        os.rename(survivors[13], survivors[14])          # over an existing file
        log.append("rename over %s" % survivors[14])
    # xattrs: add, replace, remove
    for p in survivors[15:25]:
        try:
            os.setxattr(p, "user.more", _data(rng, rng.choice((0, 5, 300))))
            for name in os.listxattr(p):
                if name.startswith("user.") and name != "user.more" and rng.random() < 0.5:
                    os.removexattr(p, name)
            log.append("xattr %s" % p)
        except OSError as e:
            if e.errno not in (errno.ENOTSUP, errno.ENOSPC):
                raise
    # modes, owners, times
    for p in survivors[25:40]:
        os.chmod(p, rng.choice(MODES))
        uid, gid = rng.choice(OWNERS)
        os.chown(p, uid, gid)
        ns = rng.choice(MTIMES) * 10 ** 9 + rng.randrange(10 ** 9)
        os.utime(p, ns=(ns, ns))
        log.append("attrs %s" % p)
    # directory removal
    for d in sorted(dirs, key=lambda d: -d.count("/"))[:3]:
        for dirpath, dirnames, filenames in os.walk(d, topdown=False):
            for n in filenames:
                os.unlink(os.path.join(dirpath, n))
            for n in dirnames:
                q = os.path.join(dirpath, n)
                if os.path.islink(q):
                    os.unlink(q)
                else:
                    os.rmdir(q)
        os.rmdir(d)
        log.append("rmtree %s" % d)
    for p in links[:3]:
        os.unlink(p)
        os.symlink("relinked-" + str(rng.randrange(1000)), p)
        log.append("relink %s" % p)
    return log


# Files larger than this get `*` as content in guest manifests: hashing
# gigabytes of holes under an emulated CPU takes minutes.  Their data is
# checked by range digests instead (see ranges()).
HASH_LIMIT = 64 * MiB


def ranges(path, samples=3, sample_len=65536, limit=32 * MiB):
    """[(offset, length)] worth comparing in a large sparse file: every data
    extent SEEK_DATA/SEEK_HOLE report (cut at `limit` bytes each), and a few
    samples from each hole between them."""
    out = []
    fd = os.open(path, os.O_RDONLY)
    try:
        size = os.fstat(fd).st_size
        pos = 0
        data = []
        while pos < size:
            try:
                start = os.lseek(fd, pos, os.SEEK_DATA)
            except OSError as e:
                if e.errno == errno.ENXIO:
                    break
                raise
            end = os.lseek(fd, start, os.SEEK_HOLE)
            data.append((start, end))
            pos = end
    finally:
        os.close(fd)
    prev = 0
    for start, end in data + [(size, size)]:
        if start > prev:                      # a hole [prev, start)
            n = min(sample_len, start - prev)
            for off in sorted({prev, prev + (start - prev) // 2, start - n}):
                out.append((off, n))
        if end > start:
            out.append((start, min(end - start, limit)))
        prev = end
    return out


def range_digest(path, off, length):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        f.seek(off)
        left = length
        while left > 0:
            b = f.read(min(left, MiB))
            if not b:
                break
            h.update(b)
            left -= len(b)
    return h.hexdigest()


def fsync_round(root, seed=5):
    """Changes after the last checkpoint, each made durable with fsync or
    fdatasync, plus some that are not.  Returns the partial manifest
    text of what fsync guarantees (other fields `*`)."""
    import manifest
    rng = random.Random(seed)
    top = os.path.join(root, "fsynced")
    os.mkdir(top)
    fd = os.open(top, os.O_RDONLY)
    os.fsync(fd)
    os.close(fd)
    promised = []

    def durable(path, sync=os.fsync):
        fd = os.open(path, os.O_RDWR)
        try:
            sync(fd)
        finally:
            os.close(fd)
        promised.append(path)

    # a new file in a new directory: its fsync makes a checkpoint (the
    # parent was never checkpointed), so it comes first, and a sync
    # checkpoints the new directories before the changes that only
    # roll-forward recovery brings back
    sub = os.path.join(top, "newdir")
    os.mkdir(sub)
    p = os.path.join(sub, "inner")
    write_file(p, _data(rng, 12345))
    durable(p)
    os.sync()
    for i, size in enumerate((0, 100, 3452, 3453, 5000, 70000, 3 * MiB + 1)):
        p = os.path.join(top, "new%d" % i)
        write_file(p, _data(rng, size))
        durable(p)
    # existing, checkpointed files: append, overwrite, truncate
    existing = sorted(os.path.join(d, n) for d, _, fs in os.walk(root) for n in fs
                      if not d.startswith(top) and
                      stat.S_ISREG(os.lstat(os.path.join(d, n)).st_mode) and
                      0 < os.lstat(os.path.join(d, n)).st_size < 8 * MiB and
                      os.lstat(os.path.join(d, n)).st_nlink == 1)
    rng.shuffle(existing)
    for p in existing[:4]:
        with open(p, "ab") as f:
            f.write(_data(rng, rng.choice((10, 5000, 300000))))
        durable(p)
    for p in existing[4:8]:
        size = os.path.getsize(p)
        write_at(p, {rng.randrange(size): _data(rng, rng.choice((1, 4096, 10000)))})
        durable(p, os.fdatasync)
    for p in existing[8:11]:
        os.truncate(p, os.path.getsize(p) // 3)
        durable(p)
    # and changes nobody asked to keep
    write_file(os.path.join(top, "unsynced"), _data(rng, 9000))
    if len(existing) > 12:
        with open(existing[12], "ab") as f:
            f.write(b"unsynced tail")
    lines = ["# options: partial", "#path\t" + "\t".join(manifest.FIELDS)]
    for p in sorted(set(promised), key=lambda q: os.fsencode(q)):
        e = manifest.entry_of(p)
        e["nlink"] = e["mtime"] = e["xattrs"] = "*"
        rel = manifest.escape(os.path.relpath(p, root))
        lines.append("\t".join([rel] + [e[f] for f in manifest.FIELDS]))
    return "\n".join(lines) + "\n"


# ---------------------------------------------------------------- fscrypt

# linux/fscrypt.h
FSCRYPT_MODES = {"AES-256-XTS": 1, "AES-256-CTS": 4, "AES-128-CBC": 5, "AES-128-CTS": 6,
                 "Adiantum": 9}
FSCRYPT_MODE_NAMES = {v: k for k, v in FSCRYPT_MODES.items()}
FSCRYPT_PAD = {4: 0x0, 8: 0x1, 16: 0x2, 32: 0x3}
FSCRYPT_POLICY_FLAG_DIRECT_KEY = 0x4
FSCRYPT_POLICY_FLAG_IV_INO_LBLK_64 = 0x8
FSCRYPT_POLICY_FLAG_IV_INO_LBLK_32 = 0x10
FSCRYPT_KEY_SPEC_TYPE_DESCRIPTOR = 1
FSCRYPT_KEY_SPEC_TYPE_IDENTIFIER = 2
FSCRYPT_POLICY_V1 = 0
FSCRYPT_POLICY_V2 = 2

# The policy kinds the encryption tests put on directories:
# name: (policy version 1|2, contents mode, filenames mode, flags)
CRYPT_KINDS = {
    "v2-default": (2, "AES-256-XTS", "AES-256-CTS", FSCRYPT_PAD[32]),
    "v2-pad4": (2, "AES-256-XTS", "AES-256-CTS", FSCRYPT_PAD[4]),
    "v2-pad8": (2, "AES-256-XTS", "AES-256-CTS", FSCRYPT_PAD[8]),
    "v2-pad16": (2, "AES-256-XTS", "AES-256-CTS", FSCRYPT_PAD[16]),
    "v2-iv64": (2, "AES-256-XTS", "AES-256-CTS",
                FSCRYPT_PAD[32] | FSCRYPT_POLICY_FLAG_IV_INO_LBLK_64),
    "v2-iv32": (2, "AES-256-XTS", "AES-256-CTS",
                FSCRYPT_PAD[32] | FSCRYPT_POLICY_FLAG_IV_INO_LBLK_32),
    "v2-adiantum": (2, "Adiantum", "Adiantum", FSCRYPT_PAD[32] | FSCRYPT_POLICY_FLAG_DIRECT_KEY),
    "v2-aes128": (2, "AES-128-CBC", "AES-128-CTS", FSCRYPT_PAD[32]),
    "v1-default": (1, "AES-256-XTS", "AES-256-CTS", FSCRYPT_PAD[32]),
    "v1-adiantum": (1, "Adiantum", "Adiantum", FSCRYPT_PAD[32] | FSCRYPT_POLICY_FLAG_DIRECT_KEY),
}


def _ioc(direction, nr, size):
    """_IOC(dir, 'f', nr, size) with dir 1 = write, 2 = read (the kernel's view)."""
    return (direction << 30) | (size << 16) | (ord("f") << 8) | nr


FS_IOC_SET_ENCRYPTION_POLICY = _ioc(2, 19, 12)       # _IOR('f', 19, struct fscrypt_policy_v1)
FS_IOC_GET_ENCRYPTION_POLICY_EX = _ioc(3, 22, 9)     # _IOWR('f', 22, __u8[9])
FS_IOC_ADD_ENCRYPTION_KEY = _ioc(3, 23, 80)          # _IOWR('f', 23, struct fscrypt_add_key_arg)


def add_key(mnt, raw, descriptor=None):
    """FS_IOC_ADD_ENCRYPTION_KEY on the filesystem at `mnt`: a v2 key (the
    kernel fills in its identifier, returned as hex) or, with an 8-byte
    descriptor in hex, a v1 key in the filesystem's keyring (root only).
    struct fscrypt_add_key_arg: key_spec {u32 type, u32 reserved, u8 u[32]},
    u32 raw_size, u32 key_id, u32 reserved[8], u8 raw[]."""
    import fcntl
    if descriptor:
        spec = struct.pack("<II32s", FSCRYPT_KEY_SPEC_TYPE_DESCRIPTOR, 0,
                           bytes.fromhex(descriptor))
    else:
        spec = struct.pack("<II32s", FSCRYPT_KEY_SPEC_TYPE_IDENTIFIER, 0, b"")
    arg = bytearray(spec + struct.pack("<II32x", len(raw), 0) + raw)
    fd = os.open(mnt, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.ioctl(fd, FS_IOC_ADD_ENCRYPTION_KEY, arg)
    finally:
        os.close(fd)
    return descriptor if descriptor else bytes(arg[8:24]).hex()


def set_policy(path, kind, key):
    """FS_IOC_SET_ENCRYPTION_POLICY of the CRYPT_KINDS `kind` on the empty
    directory `path`; `key` is the identifier (v2) or descriptor (v1) in hex.
    struct fscrypt_policy_v1: u8 version (0), contents, filenames, flags,
    u8 descriptor[8]; struct fscrypt_policy_v2: u8 version (2), contents,
    filenames, flags, u8 reserved[4], u8 identifier[16]."""
    import fcntl
    version, contents, filenames, flags = CRYPT_KINDS[kind]
    modes = (FSCRYPT_MODES[contents], FSCRYPT_MODES[filenames], flags)
    if version == 1:
        arg = struct.pack("<BBBB8s", FSCRYPT_POLICY_V1, *modes, bytes.fromhex(key))
    else:
        arg = struct.pack("<BBBB4x16s", FSCRYPT_POLICY_V2, *modes, bytes.fromhex(key))
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.ioctl(fd, FS_IOC_SET_ENCRYPTION_POLICY, arg)
    finally:
        os.close(fd)


def get_policy(path):
    """(kind name or raw description, key hex) of `path`'s policy, from
    FS_IOC_GET_ENCRYPTION_POLICY_EX (u64 policy_size, then the policy)."""
    import fcntl
    arg = bytearray(struct.pack("<Q", 24) + bytes(24))
    fd = os.open(path, os.O_RDONLY)
    try:
        fcntl.ioctl(fd, FS_IOC_GET_ENCRYPTION_POLICY_EX, arg)
    finally:
        os.close(fd)
    size, = struct.unpack_from("<Q", arg, 0)
    version, contents, filenames, flags = arg[8:12]
    if version == FSCRYPT_POLICY_V1:
        fields, key = (1, contents, filenames, flags), bytes(arg[12:20]).hex()
    else:
        fields, key = (version, contents, filenames, flags), bytes(arg[16:32]).hex()
    for name, (v, c, f, fl) in CRYPT_KINDS.items():
        if (v, FSCRYPT_MODES[c], FSCRYPT_MODES[f], fl) == fields and \
                size == (12 if v == 1 else 24):
            return name, key
    return "version=%d contents=%d filenames=%d flags=%#x size=%d" % (fields + (size,)), key


# Names for encrypted directories: 1 to 3 bytes, around the padding
# multiples (4/8/16/32) and the no-key name limit (ciphertext up to 149
# bytes is shown whole, longer ones as a hash), up to 255 bytes, UTF-8.
CRYPT_NAMES = ("a", "Zq", "x.y", "é", "日", "n" * 15, "n" * 16, "n" * 17, "m" * 31, "m" * 32,
               "m" * 33, "p" * 100, "q" * 140, "q" * 148, "q" * 149, "q" * 150, "r" * 160,
               "ünïcødé-日本語-😀", "Ελληνικά ὀνόματα", "with space", "L" * 255,
               "ü" * 127, "-dash", "..x")


def crypt_tree(root, seed=1, small=False):
    """A small but varied tree for one encrypted directory: files of 0, 1,
    4095, 4096, 4097 bytes and 100 KiB, a sparse file of a few MiB with data
    at random offsets, files truncated down, a preallocated one, the
    CRYPT_NAMES, a directory big enough for several dentry blocks,
    directories nested three deep, symlinks short and long (their targets
    are encrypted too), hard links within and across directories, a fifo,
    xattrs on files, directories and a symlink, a few modes.  `small`: a
    lighter version (for trees the guest writes under emulation).  Returns
    the number of entries."""
    rng = random.Random(seed)
    n = 0

    def p(*parts):
        return os.path.join(root, *parts)

    for size in (0, 1, 4095, 4096, 4097, 100 * 1024):
        write_file(p("f%d" % size), _data(rng, size))
        n += 1
    # a sparse file: a few chunks at random offsets, some straddling blocks
    span = (1 if small else 3) * MiB
    chunks = {}
    for _ in range(3 if small else 8):
        chunks[rng.randrange(span)] = _data(rng, rng.choice((1, 100, 4096, 5000, 20000)))
    write_at(p("holes"), chunks, size=span + rng.randrange(4096))
    write_at(p("shrunk"), {0: _data(rng, 70000)}, size=12345)
    write_at(p("shrunk-block"), {0: _data(rng, 3 * 4096 + 7)}, size=4096)
    # preallocated blocks read as zeros, written ones decrypt
    fd = os.open(p("fallocated"), os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        os.posix_fallocate(fd, 0, 300000)
        os.pwrite(fd, _data(rng, 5000), 8192 + 100)
    finally:
        os.close(fd)
    n += 4
    for name in (CRYPT_NAMES[::3] if small else CRYPT_NAMES):
        write_file(p(name), _data(rng, rng.choice((0, 1, 33, 4096, 5000))))
        n += 1
    os.mkdir(p("many"))
    for i in range(40 if small else 150):
        write_file(p("many", "entry-%03d-%s" % (i, "v" * (i % 50))), b"%d\n" % i)
        n += 1
    for i in range(0, 40 if small else 150, 7):
        os.unlink(p("many", "entry-%03d-%s" % (i, "v" * (i % 50))))
    os.makedirs(p("d1", "d2", "d3"))
    for depth, d in enumerate((("d1",), ("d1", "d2"), ("d1", "d2", "d3"))):
        write_file(p(*d, "leaf%d" % depth), _data(rng, 100 * depth + 10))
        n += 2
    os.mkdir(p("d1", "empty"))
    for name, target in (("sym-1", "a"), ("sym-short", "f4096"), ("sym-dir", "d1/d2"),
                         ("sym-utf8", "ünïcødé-日本語-😀"), ("sym-abs", "/nowhere/at/all"),
                         ("sym-200", "t" * 199 + "/"), ("sym-long", ("long/" * 600)[:3000])):
        if small and name in ("sym-200", "sym-abs"):
            continue
        os.symlink(target, p(name))
        n += 1
    write_file(p("hl-a"), _data(rng, 5000))
    os.link(p("hl-a"), p("hl-b"))
    os.link(p("hl-a"), p("d1", "d2", "hl-c"))
    os.mkfifo(p("fifo"), 0o640)
    n += 4
    os.setxattr(p("f4097"), "user.one", b"1")
    os.setxattr(p("f1"), "user.big", _data(rng, 2000))
    os.setxattr(p("d1"), "user.on-dir", b"directory value")
    os.setxattr(p("f0"), "user.empty", b"")
    os.setxattr(p("sym-short"), "trusted.on-symlink", b"symlink value",
                follow_symlinks=False)
    os.chmod(p("f1"), 0o600)
    os.chmod(p("d1", "d2"), 0o700)
    os.chmod(p("f4095"), 0o4755)
    return n


def crypt_more(root, seed=2):
    """Changes on a tree crypt_tree made (what it finds of it): new files,
    appends, overwrites (one into preallocated blocks), more preallocation,
    truncates down and up, renames within the directory, into a
    subdirectory, over an existing file and of a directory, unlinks, a new
    subdirectory with files and symlinks, hard links, entries added to and
    removed from the big directory, xattrs set and removed.  Returns a log
    of what was done."""
    rng = random.Random(seed)
    log = []

    def p(*parts):
        return os.path.join(root, *parts)

    def have(*parts):
        return os.path.lexists(p(*parts))

    for i, size in enumerate((0, 1, 5000, 70000)):
        write_file(p("k-new-%d" % i), _data(rng, size))
    write_at(p("k-sparse"), {rng.randrange(MiB): _data(rng, 9000)}, size=MiB + 17)
    if have("fallocated"):
        fd = os.open(p("fallocated"), os.O_WRONLY)
        try:
            os.pwrite(fd, _data(rng, 3000), 200000)
            os.posix_fallocate(fd, 290000, 100000)
        finally:
            os.close(fd)
    log.append("new files")
    for name, n in (("f0", 100), ("f4095", 1), ("f102400", 5000), ("holes", 4096)):
        if have(name):
            with open(p(name), "ab") as f:
                f.write(_data(rng, n))
            log.append("append %s" % name)
    for name in ("f4097", "holes", "hl-a"):
        if have(name):
            size = os.path.getsize(p(name))
            off = rng.randrange(max(1, size))
            write_at(p(name), {off: _data(rng, rng.choice((10, 4096, 6000)))})
            log.append("overwrite %s @%d" % (name, off))
    for name, size in (("f4096", 1000), ("shrunk", 0), ("f1", 8192 + 5)):
        if have(name):
            os.truncate(p(name), size)
            log.append("truncate %s %d" % (name, size))
    renames = (("f0", "renamed-f0"), ("Zq", os.path.join("d1", "d2", "moved-Zq")),
               ("n" * 16, "m" * 33), ("sym-dir", os.path.join("d1", "sym-dir-moved")),
               ("d1/d2/d3", "d3-up"))
    for a, b in renames:
        if have(a):
            os.rename(p(a), p(b))
            log.append("rename %s %s" % (a, b))
    for name in ("a", "x.y", "sym-1", "hl-b", "q" * 150, "shrunk-block"):
        if have(name):
            os.unlink(p(name))
            log.append("unlink %s" % name)
    os.makedirs(p("k-sub", "k-sub2"))
    write_file(p("k-sub", "k-file"), _data(rng, 4097))
    write_file(p("k-sub", "k-sub2", "k-" + "w" * 200), _data(rng, 3))
    os.symlink("../k-new-2", p("k-sub", "k-link"))
    os.symlink("k" * 1500, p("k-sub", "k-long-link"))
    if have("f102400"):
        os.link(p("f102400"), p("k-sub", "k-hardlink"))
    log.append("new subdirectories")
    if have("many"):
        names = sorted(os.listdir(p("many")))
        for name in names[::5]:
            os.unlink(p("many", name))
        for i in range(20):
            write_file(p("many", "k-%02d-%s" % (i, "z" * (i * 7))), b"k%d" % i)
        log.append("many: -%d +20" % len(names[::5]))
    if have("f4097"):
        os.setxattr(p("f4097"), "user.one", b"replaced")
        os.setxattr(p("f4097"), "user.two", _data(rng, 300))
    if have("d1"):
        os.removexattr(p("d1"), "user.on-dir")
        os.chmod(p("d1"), 0o711)
    log.append("xattrs")
    return log


def cmd_manifest(args):
    """manifest DIR [--no-content] [--no-xattrs] [--ranges FILE]"""
    import manifest
    opts = [a for a in args if a.startswith("--no-")]
    top = args[0]
    big = []

    def want(ptxt):
        path = top if ptxt == "." else os.path.join(top, manifest.unescape(ptxt).decode(
            "utf-8", "surrogateescape"))
        if os.lstat(path).st_size > HASH_LIMIT:
            big.append((ptxt, path))
            return False
        return True

    w = manifest.walk(top, read_content="--no-content" not in opts,
                      xattrs="--no-xattrs" not in opts, content_filter=want)
    for p, err in w.errors:
        print("walk error: %s: %s" % (p, err), file=sys.stderr)
    sys.stdout.write(w.manifest.text())
    if "--ranges" in args:
        with open(args[args.index("--ranges") + 1], "w") as f:
            for ptxt, path in sorted(big):
                for off, n in ranges(path):
                    f.write("%s\t%d\t%d\t%s\n" % (ptxt, off, n, range_digest(path, off, n)))
    return 1 if w.errors else 0


def _opt(args, name, default):
    if name in args:
        return int(args[args.index(name) + 1])
    return default


def cmd_populate(args):
    n = populate(args[0], seed=_opt(args, "--seed", 1), big="--big" in args)
    print("populated %s: %d entries" % (args[0], n))
    return 0


def cmd_populate_compressed(args):
    n = populate_compressed(args[0], seed=_opt(args, "--seed", 3))
    print("populated %s: %d compressed files" % (args[0], n))
    return 0


def cmd_compressed(args):
    for p in compressed_paths(args[0]):
        print(p)
    return 0


F2FS_IOC_GET_COMPRESS_BLOCKS = 0x8008f511      # _IOR(0xf5, 17, u64)
F2FS_IOC_RELEASE_COMPRESS_BLOCKS = 0x8008f512  # _IOR(0xf5, 18, u64)
F2FS_IOC_RESERVE_COMPRESS_BLOCKS = 0x8008f513  # _IOR(0xf5, 19, u64)


def compress_ioctl(path, req):
    import fcntl
    fd = os.open(path, os.O_RDONLY)
    try:
        return struct.unpack("<Q", fcntl.ioctl(fd, req, b"\0" * 8))[0]
    finally:
        os.close(fd)


def cmd_cblocks(args):
    for p in compressed_paths(args[0]):
        import manifest
        path = os.path.join(os.fsencode(args[0]), manifest.unescape(p))
        print("%s\t%d" % (p, compress_ioctl(path, F2FS_IOC_GET_COMPRESS_BLOCKS)))
    return 0


def cmd_release(args, req=F2FS_IOC_RELEASE_COMPRESS_BLOCKS):
    for p in args:
        print("%s\t%d" % (p, compress_ioctl(p, req)))
    return 0


def cmd_compress_fsync(args):
    """compress-fsync DIR: compressed files made durable by a sync, then
    changed and fsync()ed (what roll-forward recovery must bring back)."""
    d = args[0]
    os.mkdir(d)
    set_flags(d, FS_COMPR_FL)
    line = b"roll-forward of a compressed cluster, line %d\n"
    for i in range(4):
        write_file(os.path.join(d, "f%d" % i), b"".join(line % k for k in range(3000 + i)))
    os.sync()
    for i in range(4):
        fd = os.open(os.path.join(d, "f%d" % i), os.O_WRONLY | (os.O_APPEND if i == 3 else 0))
        try:
            os.pwrite(fd, b"rewritten after the checkpoint " * 400, 5000 + 20000 * i)
            if i == 3:
                os.write(fd, b"appended " * 5000)
            os.fsync(fd)
        finally:
            os.close(fd)
    fd = os.open(os.path.join(d, "new"), os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        os.write(fd, b"a new compressed file " * 3000)
        os.fsync(fd)
    finally:
        os.close(fd)
    return 0


def cmd_reserve(args):
    return cmd_release(args, F2FS_IOC_RESERVE_COMPRESS_BLOCKS)


def cmd_fsync_round(args):
    sys.stdout.write(fsync_round(args[0], seed=_opt(args, "--seed", 5)))
    return 0


def cmd_more(args):
    for line in more(args[0], seed=_opt(args, "--seed", 2)):
        print(line)
    return 0


def cmd_fsinfo(args):
    st = os.statvfs(args[0])
    for k in ("f_bsize", "f_blocks", "f_bfree", "f_bavail", "f_files", "f_ffree", "f_namemax"):
        print("%s=%d" % (k, getattr(st, k)))
    return 0


def cmd_add_key(args):
    with open(args[1], "rb") as f:
        raw = f.read()
    desc = args[args.index("--descriptor") + 1] if "--descriptor" in args else None
    print(add_key(args[0], raw, desc))
    return 0


def cmd_set_policy(args):
    set_policy(args[0], args[1], args[2])
    return 0


def cmd_get_policy(args):
    for d in args:
        kind, key = get_policy(d)
        print("%s\t%s\t%s" % (d, kind, key))
    return 0


def cmd_crypt_tree(args):
    n = crypt_tree(args[0], seed=_opt(args, "--seed", 1), small="--small" in args)
    print("crypt-tree %s: %d entries" % (args[0], n))
    return 0


def fill_and_churn(root, seed=7, fill=0.95, churn_mib=200, fsz=2 * MiB):
    """Nearly fill the filesystem at `root`: files of `fsz` bytes in
    root/full up to `fill` of what statfs offers (files already there are
    kept and rewritten too), then overwrite 4-64 KiB pieces at random until
    `churn_mib` MiB went through, deleting and recreating a file now and
    then.  On a log-structured filesystem this leaves many half-used
    segments: the data logs recycle free slots (SSR) and cleaning runs.
    Returns the number of files."""
    rng = random.Random(seed)
    top = os.path.join(root, "full")
    os.makedirs(top, exist_ok=True)
    names = sorted(os.listdir(top))
    st = os.statvfs(root)
    for k in range(len(names), len(names) + int(st.f_bavail * st.f_frsize * fill) // fsz):
        write_file(os.path.join(top, "f%04d" % k), rng.randbytes(fsz))
    names = sorted(os.listdir(top))
    done = 0
    while done < churn_mib * MiB:
        p = os.path.join(top, rng.choice(names))
        if rng.random() < 0.02:
            os.unlink(p)
            write_file(p, rng.randbytes(fsz))
            done += fsz
            continue
        fd = os.open(p, os.O_WRONLY)
        try:
            for _ in range(8):
                off = rng.randrange(0, fsz // 4096) * 4096
                n = min(rng.choice((4096, 16384, 65536)), fsz - off)
                os.pwrite(fd, rng.randbytes(n), off)
                done += n
            if rng.random() < 0.1:
                os.fsync(fd)
        finally:
            os.close(fd)
    return len(names)


def cmd_churn(args):
    n = fill_and_churn(args[0], seed=_opt(args, "--seed", 7),
                       churn_mib=_opt(args, "--mib", 200),
                       fill=_opt(args, "--fill-percent", 95) / 100)
    print("churned %s: %d files" % (args[0], n))
    return 0


def cmd_flags(args):
    for p in args:
        print("%s\t0x%08x" % (os.path.basename(p), get_flags(p)))
    return 0


def cmd_chattr(args):
    """chattr PATH (+|-)HEX"""
    bits = int(args[1][1:], 16)
    if args[1][0] == "+":
        set_flags(args[0], bits)
    else:
        clear_flags(args[0], bits)
    return 0


def cmd_try_writes(args):
    for p in args:
        print("%s\t%s" % (os.path.basename(p), ", ".join(try_writes(p))))
    return 0


def cmd_crypt_more(args):
    seed = _opt(args, "--seed", 2)
    dirs = [a for i, a in enumerate(args) if not a.startswith("--") and
            (i == 0 or args[i - 1] != "--seed")]
    for i, d in enumerate(dirs):
        for line in crypt_more(d, seed=seed + i):
            print("%s: %s" % (d, line))
    return 0


FS_IOC_ENABLE_VERITY = 0x40806685     # _IOW('f', 133, struct fsverity_enable_arg)
FS_IOC_MEASURE_VERITY = 0xC0046686    # _IOWR('f', 134, struct fsverity_digest)


def verity_enable(path, alg=1, block_size=4096, salt=b""):
    """FS_IOC_ENABLE_VERITY as `fsverity enable` makes it."""
    import array      # built into Debian's python3, as fcntl is (no ctypes in the guest)
    import fcntl
    sbuf = array.array("B", salt or b"\0")     # kept alive across the ioctl
    arg = struct.pack("<IIIIQIIQ88x", 1, alg, block_size, len(salt),
                      sbuf.buffer_info()[0] if salt else 0, 0, 0, 0)
    fd = os.open(path, os.O_RDONLY)
    try:
        fcntl.ioctl(fd, FS_IOC_ENABLE_VERITY, arg)
    finally:
        os.close(fd)


def verity_measure(path):
    """'sha256:HEX' as `fsverity measure` prints it."""
    import fcntl
    buf = bytearray(struct.pack("<HH", 0, 64) + bytes(64))
    fd = os.open(path, os.O_RDONLY)
    try:
        fcntl.ioctl(fd, FS_IOC_MEASURE_VERITY, buf, True)
    finally:
        os.close(fd)
    alg, size = struct.unpack_from("<HH", buf)
    return "%s:%s" % ({1: "sha256", 2: "sha512"}.get(alg, "?"), bytes(buf[4:4 + size]).hex())


def cmd_verity_enable(args):
    """verity-enable [--alg N] [--bs N] [--salt HEX] PATH..."""
    alg, bs, salt, paths = 1, 4096, b"", []
    it = iter(args)
    for a in it:
        if a == "--alg":
            alg = int(next(it))
        elif a == "--bs":
            bs = int(next(it))
        elif a == "--salt":
            salt = bytes.fromhex(next(it))
        else:
            paths.append(a)
    for p in paths:
        verity_enable(p, alg, bs, salt)
    return 0


def cmd_verity_measure(args):
    """verity-measure PATH...: NAME<TAB>DIGEST<TAB>sha256 of the contents (or the errno)"""
    import hashlib
    for p in args:
        try:
            with open(p, "rb") as f:
                content = hashlib.sha256(f.read()).hexdigest()
        except OSError as e:
            content = "errno %d" % e.errno
        print("%s\t%s\t%s\t0x%08x" % (os.path.basename(p), verity_measure(p), content,
                                       get_flags(p)))
    return 0


def main(argv):
    cmds = {"manifest": cmd_manifest, "populate": cmd_populate, "more": cmd_more,
            "populate-compressed": cmd_populate_compressed, "compressed": cmd_compressed,
            "cblocks": cmd_cblocks, "release": cmd_release, "reserve": cmd_reserve,
            "compress-fsync": cmd_compress_fsync,
            "fsync-round": cmd_fsync_round,
            "fsinfo": cmd_fsinfo, "add-key": cmd_add_key, "set-policy": cmd_set_policy,
            "get-policy": cmd_get_policy, "crypt-tree": cmd_crypt_tree,
            "crypt-more": cmd_crypt_more, "churn": cmd_churn, "flags": cmd_flags,
            "chattr": cmd_chattr, "try-writes": cmd_try_writes,
            "verity-enable": cmd_verity_enable, "verity-measure": cmd_verity_measure}
    if not argv or argv[0] not in cmds:
        print(__doc__, file=sys.stderr)
        return 2
    return cmds[argv[0]](argv[1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
