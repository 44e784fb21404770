"""The kernel-written `android` fixture (a userdata-like image: quota,
project ids, casefolding, fs-verity, compression and fscrypt together)
through f2fs-fuse: read-only with and without the key against the kernel's
manifests, inode attributes, casefold lookups and quota reports as the
kernel gave them, then a read-write workload that fsck.f2fs finds clean and
whose quota usage moves exactly as the operations imply."""

import array
import fcntl
import os
import shutil
import struct
import subprocess

import pytest

import fsutil
import manifest as M
from test_quota import parse_report

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
FUSECTL = os.environ.get("F2FS_FUSECTL") or (
    os.path.join(os.path.dirname(os.environ["F2FS_FUSE"]), "f2fs-fusectl")
    if os.environ.get("F2FS_FUSE") else os.path.join(REPO, "build", "f2fs-fusectl"))

FS_IOC_GETFLAGS = 0x80086601
FS_IOC_SETFLAGS = 0x40086602
FS_CASEFOLD_FL = 0x40000000
FS_IOC_FSGETXATTR = 0x801C581F
FS_IOC_FSSETXATTR = 0x401C5820
FS_XFLAG_PROJINHERIT = 0x200
F2FS_IOC_GET_COMPRESS_BLOCKS = 0x8008F511
FS_IOC_MEASURE_VERITY = 0xC0046686

# The kernel's mount options (android.info mount1/remount), rw only.
QUOTA_OPTS = ("usrquota", "grpquota", "prjquota")
TYPES = ("user", "group", "project")
NO_PERIODIC = "checkpoint_interval=3600"


# What the Linux 6.1 kernel reads from the 8 compressed files whose digests
# in the manifests differ: sha256sum in a qemu guest (tests/kernel/run_guest.py)
# over a fresh read-only mount of android.img with the key.  As with
# plain_compressed.sha256, the manifests hold other digests for them; the
# kernel and f2fs-fuse agree on these bytes, and so do the fs-verity digests
# of the two that are also verity files (android.attrs.tsv).
KERNEL_SUMS = os.path.join(HERE, "android_compressed.sha256")


def kernel_sums():
    return M.read_sums(KERNEL_SUMS)


def with_kernel_sums(m):
    """The manifest with the kernel's reading of the compressed files; where
    the no-key manifest says ERR: (no key) it stays."""
    for p, digest in kernel_sums().items():
        if p in m.entries and not m.entries[p]["content"].startswith("ERR:"):
            m.entries[p]["content"] = digest
    return m


def _path(root, p):
    """Manifest path text -> bytes path under root."""
    return os.path.join(os.fsencode(root), M.unescape(p)) if p != "." else os.fsencode(root)


@pytest.fixture(scope="module")
def key_opt(fixtures_dir):
    return "key_file=" + os.path.join(fixtures_dir, "android.key")


@pytest.fixture
def image(fixture_image, tmp_path):
    """A private copy of the decompressed image (the session's copy is shared
    by the read-only tests; a writing test must not change it)."""
    src = fixture_image("android")
    dst = str(tmp_path / "android.img")
    shutil.copyfile(src, dst)
    return dst


# ---------------------------------------------------------------- 1: manifests

def test_android_manifest_with_key(mount, fixture_image, fixtures_dir, key_opt):
    """Every entry, field and byte as the kernel showed them with the key."""
    exp = with_kernel_sums(M.parse_file(os.path.join(fixtures_dir, "android.manifest.tsv")))
    assert len(exp) == 630
    with mount(fixture_image("android"), options=("ro", key_opt)) as m:
        w = M.walk(m.path)
    assert w.errors == [], w.errors
    diffs = M.compare(exp, w.manifest)
    assert diffs == [], M.report(diffs)


def test_android_manifest_without_key(mount, fixture_image, fixtures_dir):
    """Without the key: the kernel's no-key names, and ERR: where it could
    not read the contents."""
    exp = with_kernel_sums(M.parse_file(os.path.join(fixtures_dir, "android.nokey-manifest.tsv")))
    with mount(fixture_image("android")) as m:
        w = M.walk(m.path)
    diffs = M.compare(exp, w.manifest)
    assert diffs == [], M.report(diffs)


# ---------------------------------------------------------------- 2: attributes

def read_attrs(fixtures_dir):
    rows = {}
    with open(os.path.join(fixtures_dir, "android.attrs.tsv"), encoding="utf-8",
              errors="surrogateescape") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            path, typ, flags, letters, projid, cblocks, verity = line.split("\t")
            rows[M.canonical(path)] = dict(type=typ, flags=flags, letters=letters,
                                           projid=projid, compr_blocks=cblocks, verity=verity)
    return rows


def getflags(fd):
    buf = array.array("l", [0])
    fcntl.ioctl(fd, FS_IOC_GETFLAGS, buf, True)
    return buf[0] & 0xFFFFFFFF


def fsgetxattr(fd):
    buf = bytearray(28)
    fcntl.ioctl(fd, FS_IOC_FSGETXATTR, buf, True)
    xflags, _, _, projid = struct.unpack_from("<IIII", buf)
    return xflags, projid


def fssetxattr(path, xflags, projid):
    """FS_IOC_FSSETXATTR: the flags and project id (chattr +P / -p)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        buf = bytearray(28)
        fcntl.ioctl(fd, FS_IOC_FSGETXATTR, buf, True)
        struct.pack_into("<I", buf, 0, xflags)
        struct.pack_into("<I", buf, 12, projid)
        fcntl.ioctl(fd, FS_IOC_FSSETXATTR, bytes(buf))
    finally:
        os.close(fd)


def compress_blocks(fd):
    buf = bytearray(8)
    fcntl.ioctl(fd, F2FS_IOC_GET_COMPRESS_BLOCKS, buf, True)
    return struct.unpack("<Q", buf)[0]


def measure_verity(fd):
    buf = bytearray(4 + 64)
    struct.pack_into("<HH", buf, 0, 0, 64)
    fcntl.ioctl(fd, FS_IOC_MEASURE_VERITY, buf, True)
    alg, size = struct.unpack_from("<HH", buf)
    assert alg == 1, alg            # FS_VERITY_HASH_ALG_SHA256
    return "sha256:" + bytes(buf[4:4 + size]).hex()


def lsattr_letters(path):
    """lsattr -d's letters of one path (its own flag names), '-' for none."""
    r = subprocess.run(["lsattr", "-d", path], capture_output=True, timeout=60)
    assert r.returncode == 0, r.stderr
    return r.stdout.split(b" ", 1)[0].decode().replace("-", "")


def test_android_attrs(mount, fixture_image, fixtures_dir, key_opt):
    """FS_IOC_GETFLAGS, FS_IOC_FSGETXATTR's project id,
    F2FS_IOC_GET_COMPRESS_BLOCKS and FS_IOC_MEASURE_VERITY equal the
    kernel's for every entry of android.attrs.tsv that the kernel could open
    (files and directories)."""
    rows = read_attrs(fixtures_dir)
    assert len(rows) > 500
    bad = []
    checked = 0
    with mount(fixture_image("android"), options=("ro", key_opt)) as m:
        for p, want in sorted(rows.items()):
            if want["type"] not in "fd":
                continue
            fd = os.open(_path(m.path, p), os.O_RDONLY | os.O_NOFOLLOW)
            try:
                got = {"flags": "0x%08x" % getflags(fd)}
                got["projid"] = str(fsgetxattr(fd)[1])
                if want["compr_blocks"] != "-":
                    got["compr_blocks"] = str(compress_blocks(fd))
                if want["verity"] != "-":
                    got["verity"] = measure_verity(fd)
            finally:
                os.close(fd)
            checked += 1
            for k, v in got.items():
                if v != want[k]:
                    bad.append("%s: %s expected %s got %s" % (p, k, want[k], v))
    assert checked > 500
    assert bad == [], "\n".join(bad[:40])


def test_android_lsattr_letters(mount, fixture_image, fixtures_dir, key_opt):
    """lsattr (e2fsprogs) against the mount prints the kernel's letters (the
    fixture's extra N, inline data, is not one lsattr shows through FUSE's
    flags: it is in FS_IOC_GETFLAGS, compared above)."""
    if not shutil.which("lsattr"):
        pytest.skip("lsattr not installed")
    rows = read_attrs(fixtures_dir)
    bad = []
    with mount(fixture_image("android"), options=("ro", key_opt)) as m:
        for p, want in sorted(rows.items()):
            if want["type"] not in "fd":
                continue
            got = lsattr_letters(_path(m.path, p))
            exp = want["letters"].replace("-", "")
            if sorted(got) != sorted(exp):
                bad.append("%s: expected %r got %r" % (p, exp, got))
    assert bad == [], "\n".join(bad[:40])


def test_android_verity_digests_with_fusectl(mount, fixture_image, fixtures_dir, key_opt):
    """f2fs-fusectl verity measure agrees with the kernel's digests."""
    rows = {p: r for p, r in read_attrs(fixtures_dir).items() if r["verity"] != "-"}
    assert len(rows) == 9
    with mount(fixture_image("android"), options=("ro", key_opt)) as m:
        for p, want in sorted(rows.items()):
            r = subprocess.run([FUSECTL, "verity", "measure", _path(m.path, p)],
                               capture_output=True, text=True, timeout=60)
            assert r.returncode == 0, (p, r.stdout, r.stderr)
            assert r.stdout.split()[0] == want["verity"], p


# ---------------------------------------------------------------- 3: casefold lookups

def read_lookups(fixtures_dir):
    out = []
    with open(os.path.join(fixtures_dir, "android.casefold-lookups.tsv"), encoding="utf-8",
              errors="surrogateescape") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            look, res = line.split("\t")
            out.append((look, res))
    return out


def drop_caches():
    """Make the kernel forget every unused dentry and inode (FORGET to the daemon)."""
    os.sync()
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write("2\n")


def _lookup_results(root, lookups, drop):
    got = []
    for look, res in lookups:
        if drop:
            drop_caches()
        try:
            st = os.lstat(_path(root, look))
            r = ("ino", st.st_ino)
        except OSError as e:
            r = ("err", e.errno)
        if res == "ENOENT":
            want = ("err", 2)
        else:
            want = ("ino", os.lstat(_path(root, res)).st_ino)
        got.append((look, res, r, want))
    return got


@pytest.mark.parametrize("drop", [True, False], ids=["cold", "cached"])
def test_android_casefold_lookups(mount, fixture_image, fixtures_dir, key_opt, drop):
    """Each spelling the kernel looked up resolves to the same inode as the
    stored spelling, or to ENOENT, as the kernel's; cold (dentry cache
    dropped before each) and with the other spellings already cached."""
    lookups = read_lookups(fixtures_dir)
    assert len(lookups) == 115 and sum(r == "ENOENT" for _, r in lookups) == 20
    with mount(fixture_image("android"), options=("ro", key_opt)) as m:
        got = _lookup_results(m.path, lookups, drop)
        if not drop:
            # a second pass: every spelling now in the dcache, positive or negative
            got += _lookup_results(m.path, lookups, False)
    bad = ["%s -> %s: got %s want %s" % (lk, res, r, w) for lk, res, r, w in got if r != w]
    assert bad == [], "\n".join(bad[:40])


# ---------------------------------------------------------------- 4: quota

def read_quota(fixtures_dir):
    """{type: {id: (bytes, inodes, bsoft, bhard, isoft, ihard)}}"""
    out = {t: {} for t in TYPES}
    with open(os.path.join(fixtures_dir, "android.quota.txt"), encoding="utf-8") as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            c = line.split()
            kv = dict(x.split("=") for x in c[2:])
            out[c[0]][int(c[1])] = tuple(int(kv[k]) for k in
                                         ("space", "inodes", "bsoft", "bhard", "isoft", "ihard"))
    return out


def quota_report(mnt, qtype):
    """{id: (KiB used, inodes, bsoft, bhard, isoft, ihard)} from f2fs-fusectl quota."""
    r = subprocess.run([FUSECTL, "quota", "-" + qtype[0], mnt], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    return parse_report(r.stdout)


def expected_report(q):
    return {t: {i: (v[0] // 1024,) + v[1:] for i, v in q[t].items()} for t in TYPES}


def test_android_quota_report(mount, image, fixtures_dir, key_opt):
    """f2fs-fusectl quota reports the kernel's usage and limits.  Read-write
    (on a copy), as the kernel enables quota only on writable mounts."""
    want = expected_report(read_quota(fixtures_dir))
    with mount(image, options=("rw", NO_PERIODIC, key_opt) + QUOTA_OPTS) as m:
        got = {t: {i: v for i, v in quota_report(m.path, t).items() if any(v)} for t in TYPES}
        # statfs inside a project-inherit directory shows its project's block
        # limit and usage (f2fs_statfs_project): project 1003, 204800 KiB hard
        used = want["project"][1003][0] // 4
        for d in ("proj/media-image-1003", "media/0/Pictures"):
            st = os.statvfs(os.path.join(m.path, d))
            assert (st.f_frsize, st.f_blocks, st.f_bfree, st.f_bavail) == \
                (4096, 51200, 51200 - used, 51200 - used), d
    want = {t: {i: v for i, v in want[t].items() if any(v)} for t in TYPES}
    assert got == want
    fsutil.fsck_check(image)


# ---------------------------------------------------------------- 5: read-write

RW_OPTS = ("rw", NO_PERIODIC) + QUOTA_OPTS + (
    "compress_algorithm=zstd", "compress_log_size=3", "compress_chksum",
    "compress_extension=apk")


def _projid_of(p):
    fd = os.open(p, os.O_RDONLY | os.O_NOFOLLOW)
    try:
        return fsgetxattr(fd)
    finally:
        os.close(fd)


def usage_model(mnt, link_projid):
    """{type: {id: (bytes, inodes)}} of what the tree holds: each inode once,
    st_blocks and one inode for its user, group and project.  No ioctl
    reaches a symlink's or a special file's inode: link_projid(path) says."""
    use = {t: {} for t in TYPES}
    seen = set()
    for top, dirs, files in os.walk(mnt):
        for name in [None] + dirs + files:
            p = top if name is None else os.path.join(top, name)
            st = os.lstat(p)
            if st.st_ino in seen:
                continue
            seen.add(st.st_ino)
            prj = None
            if os.path.isdir(p) and not os.path.islink(p) or os.path.isfile(p) \
                    and not os.path.islink(p):
                try:
                    prj = _projid_of(p)[1]
                except OSError as e:
                    if e.errno != 126:
                        raise
                    # an encrypted file without the key cannot be opened:
                    # what it inherited (the fixture sets no other id there)
                    px, pp = _projid_of(os.path.dirname(p))
                    prj = pp if px & FS_XFLAG_PROJINHERIT else 0
            else:
                prj = link_projid(os.path.relpath(p, mnt))
            for t, qid in zip(TYPES, (st.st_uid, st.st_gid, prj)):
                b, n = use[t].get(qid, (0, 0))
                use[t][qid] = (b + st.st_blocks * 512, n + 1)
    return use


def quota_usage(mnt):
    """{type: {id: (bytes, inodes)}} from f2fs-fusectl quota (KiB * 1024)."""
    return {t: {i: (v[0] * 1024, v[1]) for i, v in quota_report(mnt, t).items()
                if v[0] or v[1]} for t in TYPES}


def delta(after, before):
    out = {t: {} for t in TYPES}
    for t in TYPES:
        for i in set(after[t]) | set(before[t]):
            a, b = after[t].get(i, (0, 0)), before[t].get(i, (0, 0))
            d = (a[0] - b[0], a[1] - b[1])
            if d != (0, 0):
                out[t][i] = d
    return out


def compressible(n, seed):
    line = ("android fixture %d: the quick brown fox jumps over the lazy dog\n" % seed).encode()
    return (line * (n // len(line) + 1))[:n]


def errno_of(fn):
    try:
        fn()
    except OSError as e:
        return e.errno
    return 0


def workload(mnt):
    """A mix over the fixture's special directories; returns the symlinks
    made ({relative path: project id they must have})."""
    j = lambda *a: os.path.join(mnt, *a)   # noqa: E731
    links = {}
    # casefolded directory: create, look up by other spellings, unlink by another
    with open(j("casefold", "New-Ωmega-File.txt"), "wb") as f:
        f.write(os.urandom(5000))
    assert os.stat(j("casefold", "NEW-ωMEGA-file.TXT")).st_ino == \
        os.stat(j("casefold", "New-Ωmega-File.txt")).st_ino
    os.unlink(j("casefold", "hello.txt"))                        # stored as Hello.TXT
    assert errno_of(lambda: os.stat(j("casefold", "Hello.TXT"))) == 2
    os.unlink(j("casefold", "STRASSE"))                           # Straße
    os.mkdir(j("casefold", "NewDir"))
    with open(j("casefold", "newdir", "Inner.BIN"), "wb") as f:
        f.write(os.urandom(9000))
    assert errno_of(lambda: os.mkdir(j("casefold", "NEWDIR"))) == 17
    assert errno_of(lambda: os.link(j("casefold", "Rename-Me"), j("casefold", "rename-me"))) == 17
    os.rename(j("casefold", "Rename-Me"), j("casefold", "RENAME-ME"))   # the kernel: a no-op
    # not valid UTF-8 (no strict mode here): stored, matched byte for byte only
    bad = os.path.join(os.fsencode(j("casefold")), b"New-\xfe-Bad")
    with open(bad, "wb") as f:
        f.write(b"z" * 10)
    assert os.lstat(bad).st_size == 10
    assert errno_of(lambda: os.lstat(os.path.join(os.fsencode(j("casefold")),
                                                  b"NEW-\xfe-BAD"))) == 2
    names = sorted(os.listdir(j("casefold", "many")))
    for n in names[:40]:
        os.unlink(j("casefold", "many", n.upper() if n.upper() != n else n.lower()
                    if n.lower() != n else n))
    for i in range(60):
        with open(j("casefold", "many", "Added-%03d.dat" % i), "wb") as f:
            f.write(os.urandom(100 + 97 * i))
    # chattr +F on a new, empty directory
    os.mkdir(j("newcf"))
    fd = os.open(j("newcf"), os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.ioctl(fd, FS_IOC_SETFLAGS, struct.pack("<l", getflags(fd) | FS_CASEFOLD_FL))
        assert getflags(fd) & FS_CASEFOLD_FL
    finally:
        os.close(fd)
    with open(j("newcf", "Mixed.Case"), "wb") as f:
        f.write(b"cf")
    assert os.lstat(j("newcf", "MIXED.case")).st_ino == os.lstat(j("newcf", "Mixed.Case")).st_ino
    # encrypted + casefolded media/0 (project 1000 inherited, Pictures 1003)
    rep = j("media", "0", "Download", "New Report.PDF")
    with open(rep, "wb") as f:
        f.write(os.urandom(20000))
    os.chown(rep, 10123, 1023)
    assert os.stat(j("media", "0", "download", "NEW REPORT.pdf")).st_ino == os.stat(rep).st_ino
    assert _projid_of(rep)[1] == 1000
    os.unlink(j("media", "0", "music", "SONG.mp3"))               # project 1001
    os.makedirs(j("media", "0", "Pictures", "Holiday"))
    with open(j("media", "0", "PICTURES", "holiday", "Beach.JPG"), "wb") as f:
        f.write(os.urandom(33000))
    assert _projid_of(j("media", "0", "Pictures", "Holiday", "Beach.JPG"))[1] == 1003
    os.symlink("Beach.JPG", j("media", "0", "Pictures", "Holiday", "Link"))
    links["media/0/Pictures/Holiday/Link"] = 1003
    for n in sorted(os.listdir(j("media", "0", "many")))[:30]:
        os.unlink(j("media", "0", "many", n))
    # renames there: within one project (DCIM and Pictures are both 1003), by
    # another spelling of the source; into another project is EXDEV; a
    # case-only rename keeps the stored name; a hard link by another
    # spelling of an existing name is EEXIST
    os.rename(j("media", "0", "dcim", "camera", "img_20240101_120000.JPG"),
              j("media", "0", "Pictures", "Moved IMG.jpg"))
    assert os.stat(j("media", "0", "PICTURES", "moved img.JPG")).st_size == 65536
    assert errno_of(lambda: os.rename(j("media", "0", "Pictures", "Screenshot.PNG"),
                                      j("media", "0", "Download", "Screenshot.PNG"))) == 18
    os.rename(j("media", "0", "Movies", "Clip.mp4"), j("media", "0", "Movies", "CLIP.MP4"))
    assert os.listdir(j("media", "0", "Movies")) == ["Clip.mp4"]
    os.link(j("media", "0", "Pictures", "Screenshot.PNG"), j("media", "0", "Pictures", "Shot2.png"))
    assert errno_of(lambda: os.link(j("media", "0", "Pictures", "Screenshot.PNG"),
                                    j("media", "0", "Pictures", "SHOT2.PNG"))) == 17
    assert os.stat(j("media", "0", "Pictures", "shot2.PNG")).st_nlink == 2
    # compressed .apk (by extension) and a file in a +c directory
    with open(j("app", "com.example.app-1", "new.apk"), "wb") as f:
        f.write(compressible(300000, 1))
    with open(j("app", "com.example.app.zstd-2", "new.dex"), "wb") as f:
        f.write(compressible(120000, 2))
    os.unlink(j("app", "com.example.app.zstd-2", "classes.dex"))
    # owners
    os.chown(j("owners", "app-10123"), 1000000, 1000000)
    os.chown(j("owners", "root"), 10123, 10123)
    os.chown(j("owners", "app-dir", "link"), 2000, 2000, follow_symlinks=False)
    # project-inherit creation; rename across projects is EXDEV as the kernel's
    os.mkdir(j("proj", "inherit-1000", "newdir"))
    with open(j("proj", "inherit-1000", "newdir", "f"), "wb") as f:
        f.write(os.urandom(8000))
    os.symlink("x" * 300, j("proj", "inherit-1000", "newlink"))
    links["proj/inherit-1000/newlink"] = 1000
    assert _projid_of(j("proj", "inherit-1000", "newdir")) == (FS_XFLAG_PROJINHERIT, 1000)
    assert _projid_of(j("proj", "inherit-1000", "newdir", "f"))[1] == 1000
    assert errno_of(lambda: os.rename(j("proj", "inherit-1000", "file"),
                                      j("proj", "media-image-1003", "file2"))) == 18
    # project ids set on existing inodes move their usage (chattr -p / +P)
    fssetxattr(j("owners", "shell"), 0, 1001)
    fssetxattr(j("owners", "app-dir"), FS_XFLAG_PROJINHERIT, 20123)
    assert _projid_of(j("owners", "app-dir", "b")) == (0, 0)    # children keep theirs
    with open(j("owners", "app-dir", "c"), "wb") as f:
        f.write(os.urandom(6000))
    assert _projid_of(j("owners", "app-dir", "c"))[1] == 20123
    with open(j("proj", "noinherit-5000", "new"), "wb") as f:
        f.write(os.urandom(3000))
    assert _projid_of(j("proj", "noinherit-5000", "new"))[1] == 0
    # IV_INO_LBLK_64 app data
    p = j("user", "0", "com.example.app", "files", "more.txt")
    with open(p, "wb") as f:
        f.write(os.urandom(50000))
    os.chown(p, 10123, 10123)
    os.unlink(j("user", "0", "com.example.app", "cache", "tmp.bin"))
    # the compressed code_cache in the IV_INO_LBLK_64 tree: a new file, and a
    # rewrite in the middle of the kernel's
    cc = j("user", "0", "com.example.app", "code_cache")
    with open(os.path.join(cc, "new.odex"), "wb") as f:
        f.write(compressible(90000, 7))
    fd = os.open(os.path.join(cc, "code.odex"), os.O_WRONLY)
    try:
        os.pwrite(fd, compressible(20000, 8), 70000)
    finally:
        os.close(fd)
    # fs-verity on a new file in the encrypted tree and in verity/
    for p in (j("user", "0", "com.example.app", "files", "verity.bin"),
              j("verity", "new-200k")):
        with open(p, "wb") as f:
            f.write(compressible(200000, 9))
        enable_verity(p)
    return links


FS_IOC_ENABLE_VERITY = 0x40806685
# `fsverity digest --hash-alg=sha256 --block-size=4096` of compressible(200000, 9)
VERITY_200K = "sha256:48713770383f88fda31abc1848a30d662644fcdad062723bb01eaa689aa93b6b"


def enable_verity(path):
    """FS_IOC_ENABLE_VERITY with SHA-256 and 4096-byte blocks, no salt."""
    arg = struct.pack("<IIIIQIIQ11Q", 1, 1, 4096, 0, 0, 0, 0, 0, *([0] * 11))
    fd = os.open(path, os.O_RDONLY)
    try:
        fcntl.ioctl(fd, FS_IOC_ENABLE_VERITY, arg)
    finally:
        os.close(fd)


# the kernel's first mount (lz4, clusters of 4) and its remount (zstd, 8):
# options and the blocks new.apk's full clusters save (each in one block)
MOUNT1_OPTS = ("rw", NO_PERIODIC) + QUOTA_OPTS + (
    "compress_algorithm=lz4", "compress_log_size=2", "compress_extension=apk")


@pytest.mark.parametrize("opts,apk_saved", [(RW_OPTS, 9 * 7), (MOUNT1_OPTS, 18 * 3)],
                         ids=["zstd-8", "lz4-4"])
def test_android_read_write(mount, image, fixtures_dir, key_opt, opts, apk_saved):
    """Mounted read-write with the key and the kernel's options: a mix of
    changes in the casefolded, encrypted + casefolded, compressed, project
    and owner directories; the quota usage moves exactly as the files do,
    fsck.f2fs finds nothing to fix, and the next mount sees it all."""
    fixed_links = {}

    def link_projid(rel):
        return fixed_links.get(rel, 0)

    with mount(image, options=opts + (key_opt,)) as m:
        q0 = quota_usage(m.path)
        want0 = {t: {i: v[:2] for i, v in read_quota(fixtures_dir)[t].items() if v[0] or v[1]}
                 for t in TYPES}
        assert q0 == want0
        u0 = usage_model(m.path, link_projid)
        fixed_links.update(workload(m.path))
        os.sync()
        u1 = usage_model(m.path, link_projid)
        q1 = quota_usage(m.path)
        assert delta(q1, q0) == delta(u1, u0)
        assert u0 == q0 and u1 == q1    # and in full: what fsck.f2fs counts
        apk = os.path.join(m.path, "app", "com.example.app-1", "new.apk")
        fd = os.open(apk, os.O_RDONLY)
        try:
            assert getflags(fd) & 0x4, "new.apk is not compressed"
        finally:
            os.close(fd)
        listed = os.listdir(os.path.join(m.path, "casefold"))
        assert "Rename-Me" in listed and "RENAME-ME" not in listed
    fsutil.fsck_check(image)
    with mount(image, options=opts + (key_opt,)) as m:
        assert quota_usage(m.path) == q1
        assert usage_model(m.path, link_projid) == u1
        # i_compr_blocks counts the blocks saved: each of new.apk's full
        # clusters goes into one block; its last, partial cluster stays raw
        for p, saved in ((("app", "com.example.app-1", "new.apk"), apk_saved),
                         (("app", "com.example.app.zstd-2", "new.dex"), None)):
            fd = os.open(os.path.join(m.path, *p), os.O_RDONLY)
            try:
                got = compress_blocks(fd)
                assert got == saved if saved else got > 0, (p, got)
            finally:
                os.close(fd)
        with open(os.path.join(m.path, "app", "com.example.app-1", "new.apk"), "rb") as f:
            assert f.read() == compressible(300000, 1)
        assert os.stat(os.path.join(m.path, "media", "0", "DOWNLOAD", "new report.PDF")).st_size \
            == 20000
        cc = os.path.join(m.path, "user", "0", "com.example.app", "code_cache")
        with open(os.path.join(cc, "new.odex"), "rb") as f:
            assert f.read() == compressible(90000, 7)
        for p in (os.path.join(m.path, "user", "0", "com.example.app", "files", "verity.bin"),
                  os.path.join(m.path, "verity", "new-200k")):
            fd = os.open(p, os.O_RDONLY)
            try:
                assert getflags(fd) & 0x00100000, p
                assert measure_verity(fd) == VERITY_200K, p
            finally:
                os.close(fd)
    fsutil.fsck_check(image)


F2FS_IOC_RELEASE_COMPRESS_BLOCKS = 0x8008F512
F2FS_IOC_RESERVE_COMPRESS_BLOCKS = 0x8008F513
F2FS_IOC_SET_PIN_FILE = 0x4004F50D


def test_android_compress_reservation_and_pinned_quota(mount, image, key_opt):
    """Releasing and reserving a compressed file's blocks and fallocate() on
    a pinned file move the quota with i_blocks, as the kernel's
    inc/dec_valid_block_count do."""
    with mount(image, options=RW_OPTS + (key_opt,)) as m:
        lp = lambda rel: 0   # noqa: E731
        apk = os.path.join(m.path, "owners", "app.apk")
        with open(apk, "wb") as f:
            f.write(compressible(200000, 3))
        os.chown(apk, 10123, 10123)
        os.sync()
        steps = []
        u0, q0 = usage_model(m.path, lp), quota_usage(m.path)
        fd = os.open(apk, os.O_RDONLY)
        try:
            buf = bytearray(8)
            fcntl.ioctl(fd, F2FS_IOC_RELEASE_COMPRESS_BLOCKS, buf, True)
            released = struct.unpack("<Q", buf)[0]
            assert released > 0
            u1, q1 = usage_model(m.path, lp), quota_usage(m.path)
            steps.append(("release", delta(q1, q0), delta(u1, u0)))
            assert delta(u1, u0)["user"] == {10123: (-released * 4096, 0)}
            fcntl.ioctl(fd, F2FS_IOC_RESERVE_COMPRESS_BLOCKS, buf, True)
            u2, q2 = usage_model(m.path, lp), quota_usage(m.path)
            steps.append(("reserve", delta(q2, q1), delta(u2, u1)))
        finally:
            os.close(fd)
        pinned = os.path.join(m.path, "owners", "pinned")
        fd = os.open(pinned, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            os.fchown(fd, 1000, 1000)
            fcntl.ioctl(fd, F2FS_IOC_SET_PIN_FILE, struct.pack("<I", 1))
            os.posix_fallocate(fd, 0, 2 << 20)
        finally:
            os.close(fd)
        os.sync()
        u3, q3 = usage_model(m.path, lp), quota_usage(m.path)
        steps.append(("pinned fallocate", delta(q3, q2), delta(u3, u2)))
        assert delta(u3, u2)["user"].get(1000, (0, 0))[0] >= 2 << 20
        bad = [s for s in steps if s[1] != s[2]]
        assert bad == [], bad
    fsutil.fsck_check(image)


def test_android_fixture_limits(f2fs_fuse, fixture_image, key_opt):
    """The limits the kernel set (android.quota.txt) hold on f2fs-fuse's
    mount: user 10123's 102400 KiB hard block limit and group 1000000's
    hard limit of 500 inodes (its soft limit of 100 only starts the grace
    period) give EDQUOT to the users themselves; fsck.f2fs is clean after."""
    import tempfile
    for t in ("setpriv",):
        if not shutil.which(t):
            pytest.skip("%s not installed" % t)
    # other users must reach the mount: not under tmp_path, which is root's alone
    d = tempfile.mkdtemp(prefix="f2fs-android-", dir="/tmp")
    try:
        os.chmod(d, 0o755)
        image = os.path.join(d, "android.img")
        shutil.copyfile(fixture_image("android"), image)
        mnt = os.path.join(d, "mnt")
        with fsutil.mounted(f2fs_fuse, image, mnt,
                            RW_OPTS + (key_opt, "allow_other")) as m:
            def as_user(uid, code):
                r = subprocess.run(["setpriv", "--reuid=%d" % uid, "--regid=%d" % uid,
                                    "--clear-groups", "/usr/bin/python3", "-c", code],
                                   capture_output=True, text=True, timeout=240)
                assert r.returncode == 0, r.stdout + r.stderr
                return r.stdout.split()

            big = os.path.join(m.path, "owners", "app-dir", "big")
            out = as_user(10123, "import os\n"
                          "fd = os.open(%r, os.O_WRONLY | os.O_CREAT, 0o644)\n"
                          "chunk = os.urandom(1 << 20)\n"
                          "try:\n"
                          "    for i in range(120):\n"
                          "        d = chunk\n"
                          "        while d: d = d[os.write(fd, d):]\n"
                          "    print('no-error')\n"
                          "except OSError as e:\n"
                          "    print(e.errno)\n" % big)
            assert out == ["122"], out                                  # EDQUOT
            rep = quota_report(m.path, "user")[10123]
            assert rep[0] <= 102400 and rep[0] > 102400 - 1024 and rep[3] == 102400, rep
            g = os.path.join(m.path, "owners", "g1000000")
            os.mkdir(g)
            os.chown(g, 1000000, 1000000)
            have = quota_report(m.path, "group")[1000000][1]
            assert have == 2
            out = as_user(1000000, "import os\n"
                          "n = 0\n"
                          "try:\n"
                          "    while n < 1000:\n"
                          "        open(os.path.join(%r, 'f%%d' %% n), 'w').close(); n += 1\n"
                          "    print(n, 0)\n"
                          "except OSError as e:\n"
                          "    print(n, e.errno)\n" % g)
            assert out == [str(500 - have), "122"], out
            rep = quota_report(m.path, "group")[1000000]
            assert rep[1] == 500 and rep[4:] == (100, 500), rep
            assert quota_usage(m.path) == usage_model(m.path, lambda rel: 0)
        fsutil.fsck_check(image)
    finally:
        shutil.rmtree(d, ignore_errors=True)


def test_android_crash_recovery_quota(f2fs_fuse, image, key_opt, tmp_path):
    """SIGKILL after fsync(): compressed .apk files (new and rewritten), files
    in the encrypted + casefolded and casefolded trees (rolled forward), a
    chown, and an orphan (unlinked while open, checkpointed); the next mount rolls them forward and its quota counts
    exactly what the files use; fsck.f2fs clean."""
    mnt = str(tmp_path / "mnt")
    opts = RW_OPTS + (key_opt,)
    m = fsutil.Mount(f2fs_fuse, image, mnt, opts).start()
    try:
        j = lambda *a: os.path.join(mnt, *a)   # noqa: E731
        fds = []

        def checkpoint(d):
            # fsync() of a directory is a checkpoint (CP_NON_REGULAR), as the
            # kernel's; sync(2) does not reach a FUSE daemon
            fd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
            os.fsync(fd)
            os.close(fd)

        with open(j("owners", "base.apk"), "wb") as f:
            f.write(compressible(150000, 4))
        victim = os.open(j("owners", "system"), os.O_RDONLY)   # an orphan
        os.unlink(j("owners", "system"))
        fds.append(victim)
        checkpoint(j("owners"))
        # fsync() of a compressed file is a checkpoint (CP_COMPRESSED); the
        # files after the last one roll forward from their fsync()ed nodes

        def put(path, data, uid=None):
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            os.write(fd, data)
            if uid is not None:
                os.fchown(fd, uid, uid)
            os.fsync(fd)
            fds.append(fd)

        put(j("owners", "crash.apk"), compressible(300000, 5), 10123)
        fd = os.open(j("owners", "base.apk"), os.O_WRONLY)
        os.pwrite(fd, compressible(40000, 6), 50000)        # rewrite compressed clusters
        os.fsync(fd)
        fds.append(fd)
        put(j("media", "0", "Download", "Crash File.bin"), os.urandom(30000))
        put(j("casefold", "After-Sync.txt"), os.urandom(12000), 1000)
    finally:
        m._kill()
    for fd in fds:
        try:
            os.close(fd)
        except OSError:
            pass
    with fsutil.mounted(f2fs_fuse, image, mnt, opts) as m:
        j = lambda *a: os.path.join(m.path, *a)   # noqa: E731
        with open(j("owners", "crash.apk"), "rb") as f:
            assert f.read() == compressible(300000, 5)
        want = bytearray(compressible(150000, 4))
        want[50000:90000] = compressible(40000, 6)
        with open(j("owners", "base.apk"), "rb") as f:
            assert f.read() == bytes(want)
        assert os.stat(j("media", "0", "download", "crash file.BIN")).st_size == 30000
        assert os.stat(j("casefold", "after-sync.TXT")).st_uid == 1000
        assert not os.path.exists(j("owners", "system"))
        assert quota_usage(m.path) == usage_model(m.path, lambda rel: 0)
    fsutil.fsck_check(image)


def test_android_read_write_without_key(mount, image, key_opt):
    """Read-write without the key, as the kernel allows: no-key names can be
    unlinked (also in the encrypted + casefolded tree), nothing can be
    created there (ENOKEY), and the quota follows; with the key the entries
    are gone and the rest reads; fsck.f2fs clean."""
    with mount(image, options=("rw", NO_PERIODIC) + QUOTA_OPTS) as m:
        lp = lambda rel: 0   # noqa: E731
        u0 = usage_model(m.path, lp)
        assert quota_usage(m.path) == u0
        def subdirs(d):
            return [os.path.join(d, n) for n in os.listdir(d)
                    if os.path.isdir(os.path.join(d, n))]

        # no-key names: media/0/many is the one with 200 entries, the app's
        # files/ the one of its directories with two files
        many, = [d for d in subdirs(os.path.join(m.path, "media", "0"))
                 if len(os.listdir(d)) == 200]
        names = sorted(os.listdir(many))
        for n in names[:25]:
            os.unlink(os.path.join(many, n))
        app, = [d for d in subdirs(os.path.join(m.path, "user", "0"))
                if len(os.listdir(d)) == 4]
        files, = [d for d in subdirs(app) if len(os.listdir(d)) == 2]
        gone = sorted(os.listdir(files))[0]
        os.unlink(os.path.join(files, gone))
        assert errno_of(lambda: open(os.path.join(many, "new"), "w")) == 126     # ENOKEY
        assert errno_of(lambda: os.mkdir(os.path.join(files, "d"))) == 126
        assert len(os.listdir(many)) == 175
        u1 = usage_model(m.path, lp)
        assert quota_usage(m.path) == u1 and u1["project"][1000][1] == u0["project"][1000][1] - 25
    fsutil.fsck_check(image)
    with mount(image, options=("ro", key_opt)) as m:
        assert len(os.listdir(os.path.join(m.path, "media", "0", "many"))) == 175
        left = os.listdir(os.path.join(m.path, "user", "0", "com.example.app", "files"))
        assert sorted(left) in (["notes.txt"], ["signed.bin"]), left
        with open(os.path.join(m.path, "media", "0", "Download", "Report.PDF"), "rb") as f:
            assert len(f.read()) == 20000


F2FS_IOC_WRITE_CHECKPOINT = 0xF507
F2FS_IOC_GARBAGE_COLLECT_RANGE = 0x4018F50B


def extents(path):
    """f2fs-fusectl extents PATH: its lines (block addresses included)."""
    r = subprocess.run([FUSECTL, "extents", path], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


def drop_all_caches():
    """Dentries, inodes and the page cache: reads go to the daemon again."""
    os.sync()
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write("3\n")


def gc_all(image, mnt):
    """Checkpoint, clean every segment of the main area, checkpoint."""
    with open(image, "rb") as f:
        f.seek(0x400 + 36)
        block_count = struct.unpack("<Q", f.read(8))[0]
        f.seek(0x400 + 92)
        main_blk = struct.unpack("<I", f.read(4))[0]
    fd = os.open(mnt, os.O_RDONLY)
    try:
        fcntl.ioctl(fd, F2FS_IOC_WRITE_CHECKPOINT)
        fcntl.ioctl(fd, F2FS_IOC_GARBAGE_COLLECT_RANGE,
                    struct.pack("<IxxxxQQ", 1, main_blk, block_count - main_blk - 1))
        fcntl.ioctl(fd, F2FS_IOC_WRITE_CHECKPOINT)
    finally:
        os.close(fd)


def test_android_gc_keeps_everything(mount, image, key_opt, fixtures_dir):
    """F2FS_IOC_GARBAGE_COLLECT_RANGE over the whole main area after the
    workload moves compressed clusters, encrypted blocks (IV_INO_LBLK_64
    too), verity files with their Merkle trees, casefolded dentry blocks and
    the quota files; everything reads the same, verity digests and quota
    usage are unchanged, fsck.f2fs is clean, and so is the next mount."""
    rows = {p: r for p, r in read_attrs(fixtures_dir).items() if r["verity"] != "-"}
    moved = ["verity/5m", "user/0/com.example.app/files/signed.bin",
             "media/0/Movies/Clip.mp4", "app/com.example.app-1/base.apk"]
    with mount(image, options=RW_OPTS + (key_opt,)) as m:
        links = workload(m.path)
        before = M.walk(m.path).manifest
        where = [extents(os.path.join(m.path, p)) for p in moved]
        q0 = quota_usage(m.path)
        gc_all(image, m.path)
        drop_all_caches()
        assert all(extents(os.path.join(m.path, p)) != w for p, w in zip(moved, where)), \
            "the cleaning moved nothing"
        diffs = M.compare(before, M.walk(m.path).manifest)
        assert diffs == [], M.report(diffs)
        assert quota_usage(m.path) == q0 == usage_model(m.path, lambda r: links.get(r, 0))
        for p, want in rows.items():
            fd = os.open(_path(m.path, p), os.O_RDONLY)
            try:
                assert measure_verity(fd) == want["verity"], p
            finally:
                os.close(fd)
    fsutil.fsck_check(image)
    with mount(image, options=("ro", key_opt)) as m:
        diffs = M.compare(before, M.walk(m.path).manifest)
        assert diffs == [], M.report(diffs)


@pytest.mark.parametrize("top", ["casefold", "media/0/Download"])
def test_android_casefold_dcache(mount, image, key_opt, top):
    """The kernel's FUSE dentry cache is case-sensitive: a negative entry for
    one spelling must not hide a name created under another, and a positive
    one must not outlive an unlink or rename through another spelling."""
    with mount(image, options=RW_OPTS + (key_opt,)) as m:
        d = os.path.join(m.path, top)
        spellings = ["Cached-Name.TXT", "cached-name.txt", "CACHED-NAME.TXT"]
        for s in spellings:                          # negative dentries
            assert errno_of(lambda: os.lstat(os.path.join(d, s))) == 2
        with open(os.path.join(d, "Cached-NAME.txt"), "wb") as f:
            f.write(b"x" * 100)
        ino = os.lstat(os.path.join(d, "Cached-NAME.txt")).st_ino
        for s in spellings:
            assert os.lstat(os.path.join(d, s)).st_ino == ino, s
        # positive dentries for every spelling, then gone through another one
        os.unlink(os.path.join(d, "cached-name.TXT"))
        for s in spellings + ["Cached-NAME.txt"]:
            assert errno_of(lambda: os.lstat(os.path.join(d, s))) == 2, s
        # a rename through another spelling: the old name's dentries go
        with open(os.path.join(d, "Moved.bin"), "wb") as f:
            f.write(b"y")
        for s in ("moved.bin", "MOVED.BIN", "Target.bin", "TARGET.BIN"):
            errno_of(lambda: os.lstat(os.path.join(d, s)))
        os.rename(os.path.join(d, "MOVED.bin"), os.path.join(d, "target.BIN"))
        for s in ("moved.bin", "MOVED.BIN", "Moved.bin"):
            assert errno_of(lambda: os.lstat(os.path.join(d, s))) == 2, s
        for s in ("Target.bin", "TARGET.BIN", "target.BIN"):
            assert os.lstat(os.path.join(d, s)).st_size == 1, s
        assert "target.BIN" in os.listdir(d)
    fsutil.fsck_check(image)


def test_android_compressed_truncate_quota(mount, image, key_opt):
    """Truncating compressed files (inside a compressed cluster, at a cluster
    boundary, to zero; the kernel's and new ones, one in the encrypted
    code_cache) and growing one with fallocate keep quota equal to what the
    files use; the bytes left are the old ones; fsck.f2fs clean."""
    with mount(image, options=RW_OPTS + (key_opt,)) as m:
        j = lambda *a: os.path.join(m.path, *a)   # noqa: E731
        lp = lambda rel: 0   # noqa: E731
        new = j("owners", "t.apk")
        data = compressible(300000, 11)
        with open(new, "wb") as f:
            f.write(data)
        os.chown(new, 10123, 1078)
        cases = [(new, 100000), (new, 8 * 4096 * 3), (new, 0),
                 (j("app", "com.example.app-1", "per-file-zstd.apk"), 54321),
                 (j("user", "0", "com.example.app", "code_cache", "code.odex"), 50001)]
        for path, size in cases:
            with open(path, "rb") as f:
                old = f.read()
            os.truncate(path, size)
            drop_all_caches()
            with open(path, "rb") as f:
                assert f.read() == old[:size], (path, size)
            assert quota_usage(m.path) == usage_model(m.path, lp), (path, size)
        with open(new, "wb") as f:
            f.write(data)
        fd = os.open(new, os.O_RDWR)
        try:
            os.posix_fallocate(fd, 0, 600000)
        finally:
            os.close(fd)
        with open(new, "rb") as f:
            assert f.read() == data + bytes(600000 - len(data))
        assert quota_usage(m.path) == usage_model(m.path, lp)
    fsutil.fsck_check(image)
