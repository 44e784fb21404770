"""A deterministic tree generator for building f2fs images with sload.f2fs.

generate(root, seed, profile) creates the same tree for the same arguments.
expected_manifest(root) walks it and turns the walk into what an f2fs image
built from it by sload.f2fs 1.15 must show through a mount.

What sload.f2fs 1.15 keeps, checked with dump.f2fs on its images:
  - file, directory and symlink mode bits, including setuid/setgid/sticky;
  - uid and gid, but truncated to 16 bits (so the tree uses ids < 65536);
  - mtime in whole seconds, truncated to 32 bits unsigned (so no negative
    times and nothing past 2106); nanoseconds are dropped; atime and ctime
    are set to the mtime;
  - hard links (one inode, nlink counted from the tree).
What it does not keep, and so is excluded from the comparison:
  - the root directory's mode, owner and mtime (sload makes its own root);
  - directory sizes (a layout detail of each filesystem);
  - directory link counts are not copied but computed, as f2fs does: 2 +
    the number of subdirectories (compared against that);
  - xattrs, device nodes, fifos and sockets (the tree has none).

A bug in sload.f2fs 1.15 kept out of the trees: on images with extra_attr
it stores symlinks of up to about 3690 bytes inline although the inline area
holds less (3464 bytes with a 24-byte extra area, 3452 with a 36-byte one,
next to 200 bytes of inline xattrs), so the target is cut to that size and
runs into the inline xattr area (fsck.f2fs does not notice). Profiles for
extra_attr images skip symlink lengths 3453-3699 (symlink_skip).
"""

import os
import random

INLINE_LIMITS = (3452, 3488)          # inline data limits with/without extra_attr


class Profile:
    def __init__(self, name, bigdir=3000, depth=40, random_files=200,
                 big_sizes=(1 << 20, 3 * (1 << 20) + 123), random_max=20000,
                 symlink_skip=None):
        self.name = name
        self.symlink_skip = symlink_skip
        self.bigdir = bigdir
        self.depth = depth
        self.random_files = random_files
        self.big_sizes = big_sizes
        self.random_max = random_max


PROFILES = {
    # about 14 MiB of data and metadata: fits the 256 MiB and larger images.
    "full": Profile("full"),
    # the same for extra_attr images, without the symlink lengths sload
    # gets wrong there (see the module docstring)
    "full-extra": Profile("full-extra", symlink_skip=(3453, 3700)),
    # fits a 64 MiB image: after overprovisioning only a few MiB are
    # usable, and sload.f2fs 1.15 aborts (assertion in
    # move_one_curseg_info) or leaves a broken image when it runs short;
    # about 350 bigdir entries already fail there.
    "small": Profile("small", bigdir=150, depth=40, random_files=30,
                     big_sizes=(1 << 20,), random_max=9000),
    "small-extra": Profile("small-extra", bigdir=150, depth=40, random_files=30,
                           big_sizes=(1 << 20,), random_max=9000, symlink_skip=(3453, 3700)),
}

SIZES = sorted({0, 1, 2, 7, 100, 511, 512, 1000,
                3451, 3452, 3453, 3487, 3488, 3489,
                4095, 4096, 4097, 8191, 8192, 8193,
                12287, 12288, 65535, 65536, 65537, 200000})

SYMLINK_LENGTHS = (1, 2, 59, 60, 61, 100, 255, 1000, 3451, 3452, 3453,
                   3463, 3464, 3465, 3487, 3488, 3489, 3700, 4000, 4094, 4095)

MTIME_SPECIAL = (0, 1, 2 ** 31 - 1, 2 ** 31, 4102444800, 2 ** 32 - 1)


def _data(rng, size):
    """Content of `size` bytes: a mix of random, text-like and zero runs, so
    that block boundaries land in varied data."""
    kind = rng.randrange(4)
    if size == 0:
        return b""
    if kind == 0:
        return rng.randbytes(size)
    if kind == 1:
        line = b"%08x the quick brown fox jumps over the lazy dog\n"
        out = bytearray()
        i = 0
        while len(out) < size:
            out += line % i
            i += 1
        return bytes(out[:size])
    if kind == 2:
        # zero blocks with some non-zero bytes sprinkled in
        b = bytearray(size)
        for _ in range(max(1, size // 4096)):
            b[rng.randrange(size)] = rng.randrange(1, 256)
        return bytes(b)
    # block-aligned pattern: each 4 KiB block starts with its own number
    out = bytearray(rng.randbytes(size))
    for off in range(0, size, 4096):
        tag = b"<block %d>" % (off // 4096)
        out[off:off + len(tag)] = tag[:max(0, size - off)]
    return bytes(out[:size])


def _write(path, data):
    with open(path, "wb") as f:
        f.write(data)


def _name(rng, n):
    alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.+,="
    return "".join(rng.choice(alphabet) for _ in range(n))


def generate(root, seed=1, profile="full"):
    """Create the tree under `root` (which must not exist or be empty)."""
    prof = PROFILES[profile] if isinstance(profile, str) else profile
    rng = random.Random(seed)
    root = os.fsencode(str(root))
    os.makedirs(root, exist_ok=True)
    os.chmod(root, 0o755)
    j = lambda *p: os.path.join(root, *[os.fsencode(x) for x in p])   # noqa: E731

    # sizes around every interesting boundary
    os.mkdir(j("sizes"))
    for s in SIZES:
        _write(j("sizes", "size-%d" % s), _data(rng, s))
    for s in prof.big_sizes:
        _write(j("sizes", "big-%d" % s), _data(rng, s))

    # many random small files in a few directories
    os.mkdir(j("random"))
    for d in range(4):
        os.mkdir(j("random", "d%d" % d))
    for i in range(prof.random_files):
        size = rng.choice((rng.randrange(0, 64), rng.randrange(0, prof.random_max),
                           rng.choice(INLINE_LIMITS) + rng.randrange(-2, 3)))
        _write(j("random", "d%d" % (i % 4), "f%04d-%s" % (i, _name(rng, rng.randrange(1, 40)))),
               _data(rng, size))

    # one large directory: multi-level hashed dentries
    os.mkdir(j("bigdir"))
    for i in range(prof.bigdir):
        nm = "e%05d-%s" % (i, _name(rng, rng.randrange(0, 60)))
        r = rng.random()
        if r < 0.05:
            os.mkdir(j("bigdir", nm))
        elif r < 0.10:
            os.symlink("target-%d" % i, j("bigdir", nm))
        else:
            _write(j("bigdir", nm), _data(rng, rng.choice((0, 0, 1, 17, 300))))

    # deep nesting
    parts = ["deep"]
    for lvl in range(prof.depth):
        parts.append("level-%02d" % lvl)
    os.makedirs(j(*parts))
    _write(j(*(parts + ["bottom.txt"])), b"at depth %d\n" % prof.depth)
    _write(j(*(parts[:prof.depth // 2] + ["middle.bin"])), _data(rng, 5000))

    # names: long, unicode, odd bytes
    os.mkdir(j("names"))
    odd = [
        "L" * 255,
        "\u65e5" * 85,                       # 255 bytes of 3-byte UTF-8
        "\U0001f600" * 63 + "abc",           # 4-byte UTF-8, 255 bytes in all
        "caf\u00e9", "\u00fcber", "\u0444\u0430\u0439\u043b", "\u6587\u4ef6.txt",
        "\u0627\u0644\u0645\u0644\u0641", "emoji-\U0001f4c1",
        "with space", " leading-space", "trailing-space ", "tab\there",
        "new\nline", "back\\slash", "semi;colon", "eq=ual", "star*", "q?uestion",
        "quote'\"", "-dash", ".hidden", "..dots", "...", "#hash", "%percent",
    ]
    for i, nm in enumerate(odd):
        _write(j("names", nm), b"name %d\n" % i)
    _write(os.path.join(j("names"), b"latin1-\xe9\xff"), b"not utf-8\n")
    os.mkdir(j("names", "d\u00efr-\u00fcnicode"))
    _write(j("names", "d\u00efr-\u00fcnicode", "inside"), b"x" * 3453)

    # symlinks, short to 4095 bytes, dangling and not
    os.mkdir(j("links"))
    for ln in SYMLINK_LENGTHS:
        if prof.symlink_skip and prof.symlink_skip[0] <= ln < prof.symlink_skip[1]:
            continue
        target = ("../sizes/size-4096/" + _name(rng, ln))[:ln]
        os.symlink(target, j("links", "len-%d" % ln))
    os.symlink("../sizes/size-100", j("links", "to-file"))
    os.symlink("../deep", j("links", "to-dir"))
    os.symlink("/absolute/nowhere", j("links", "dangling-abs"))
    os.symlink("\u65e5\u672c", j("links", "unicode-target"))

    # hard links
    os.mkdir(j("hard"))
    os.mkdir(j("hard", "other"))
    _write(j("hard", "three"), _data(rng, 7000))
    os.link(j("hard", "three"), j("hard", "three-b"))
    os.link(j("hard", "three"), j("hard", "other", "three-c"))
    _write(j("hard", "two"), b"two names\n")
    os.link(j("hard", "two"), j("hard", "other", "two-b"))
    os.link(j("sizes", "size-4097"), j("hard", "size-4097-link"))

    # modes and owners
    os.mkdir(j("perm"))
    file_modes = (0o000, 0o400, 0o644, 0o600, 0o755, 0o111, 0o4755, 0o2755,
                  0o6755, 0o1644, 0o7777, 0o4000, 0o2000, 0o1000)
    for m in file_modes:
        p = j("perm", "mode-%04o" % m)
        _write(p, b"mode %04o\n" % m)
        os.chmod(p, m)
    for m in (0o700, 0o1777, 0o2775, 0o555, 0o000):
        p = j("perm", "dir-%04o" % m)
        os.mkdir(p)
        _write(os.path.join(p, b"f"), b"in %04o\n" % m)
        os.chmod(p, m)
    for i in range(12):
        p = j("perm", "owner-%d" % i)
        _write(p, b"owner %d\n" % i)
        uid = (0, 1, 1000, 65534, 65535)[i] if i < 5 else rng.randrange(65536)
        gid = (0, 2, 1000, 65535, 100)[i] if i < 5 else rng.randrange(65536)
        os.chown(p, uid, gid)
    os.symlink("owner-0", j("perm", "link-owned"))
    os.chown(j("perm", "link-owned"), 4321, 1234, follow_symlinks=False)
    os.mkdir(j("perm", "dir-owned"))
    os.chown(j("perm", "dir-owned"), 777, 888)

    # timestamps, set last and bottom-up so children don't disturb parents
    _set_times(root, rng)
    os.utime(root, (1700000000, 1700000000))
    return root


def _set_times(root, rng):
    paths = []
    for dirpath, dirnames, filenames in os.walk(root):
        for n in dirnames + filenames:
            paths.append(os.path.join(dirpath, n))
    paths.sort(key=lambda p: -p.count(b"/"))
    for i, p in enumerate(paths):
        if i < len(MTIME_SPECIAL):
            t = MTIME_SPECIAL[i]
        else:
            t = rng.randrange(0, 2 ** 32)
        os.utime(p, (t, t), follow_symlinks=False)


def expected_manifest(walk_result):
    """Turn a walk of the source tree into the manifest an image built from
    it with sload.f2fs must show (see the module docstring)."""
    import manifest as M
    m = walk_result.manifest
    subdirs = {}
    for p, e in m.entries.items():
        if e["type"] == "d" and p != ".":
            parent = p.rpartition("/")[0] or "."
            subdirs[parent] = subdirs.get(parent, 0) + 1
    out = {}
    for p, e in m.entries.items():
        e = dict(e)
        if e["xattrs"] != "-":
            raise AssertionError("source tree has xattrs at %s: %s" % (p, e["xattrs"]))
        if e["type"] not in "fdl":
            raise AssertionError("source tree has a %s at %s" % (e["type"], p))
        if int(e["uid"]) > 0xFFFF or int(e["gid"]) > 0xFFFF:
            raise AssertionError("owner of %s does not fit 16 bits" % p)
        if e["type"] == "d":
            e["nlink"] = str(2 + subdirs.get(p, 0))
            e["size"] = M.WILDCARD
        if p == ".":
            for f in ("mode", "uid", "gid", "mtime"):
                e[f] = M.WILDCARD
        out[p] = e
    return M.Manifest(out)
