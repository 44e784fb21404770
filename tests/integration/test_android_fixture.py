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

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
FUSECTL = os.environ.get("F2FS_FUSECTL") or (
    os.path.join(os.path.dirname(os.environ["F2FS_FUSE"]), "f2fs-fusectl")
    if os.environ.get("F2FS_FUSE") else os.path.join(REPO, "build", "f2fs-fusectl"))

FS_IOC_GETFLAGS = 0x80086601
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
    sums = {}
    with open(KERNEL_SUMS, encoding="utf-8") as f:
        for line in f:
            digest, path = line.split()
            sums[M.canonical(path)] = digest
    return sums


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
    out = {}
    for line in r.stdout.splitlines():
        f = line.split()
        if f and f[0].isdigit():
            out[int(f[0])] = (int(f[1]), int(f[5]), int(f[2]), int(f[3]), int(f[6]), int(f[7]))
    return out


def expected_report(q):
    return {t: {i: (v[0] // 1024,) + v[1:] for i, v in q[t].items()} for t in TYPES}


def test_android_quota_report(mount, image, fixtures_dir, key_opt):
    """f2fs-fusectl quota reports the kernel's usage and limits.  Read-write
    (on a copy), as the kernel enables quota only on writable mounts."""
    want = expected_report(read_quota(fixtures_dir))
    with mount(image, options=("rw", NO_PERIODIC, key_opt) + QUOTA_OPTS) as m:
        got = {t: {i: v for i, v in quota_report(m.path, t).items() if any(v)} for t in TYPES}
    want = {t: {i: v for i, v in want[t].items() if any(v)} for t in TYPES}
    assert got == want
    fsutil.fsck_check(image)
