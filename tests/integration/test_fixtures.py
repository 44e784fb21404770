"""Mount the kernel-written reference images and compare what f2fs-fuse
shows with what the kernel showed (the fixture manifests)."""

import errno
import hashlib
import mmap
import os
import random
import re
import shutil
import stat
import subprocess
import tempfile

import pytest

import fsutil
import manifest as M

HUGE = 64 << 20      # files above this are read in their own (slow) test

# What the Linux 6.1 kernel reads from the files of plain.compression.txt:
# sha256sum in a qemu guest (tests/kernel/run_guest.py) over a read-only
# mount of plain.img.  plain.manifest.tsv has other digests for the 15 files
# whose first cluster is compressed; the kernel and f2fs-fuse agree on
# these bytes, so these are what the driver must return.
KERNEL_SUMS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "plain_compressed.sha256")


def kernel_sums():
    return M.read_sums(KERNEL_SUMS)


@pytest.fixture(scope="module")
def plain_manifest(fixtures_dir):
    """plain.manifest.tsv with the kernel's reading of the compressed files."""
    m = M.parse_file(os.path.join(fixtures_dir, "plain.manifest.tsv"))
    for p, digest in kernel_sums().items():
        m.entries[p]["content"] = digest
    return m


@pytest.fixture(scope="module")
def compressed_paths(fixtures_dir):
    """Paths whose inode has the compression flag (0x00000004) set."""
    paths = set()
    with open(os.path.join(fixtures_dir, "plain.compression.txt"), encoding="utf-8") as f:
        for line in f:
            cols = line.split()
            if len(cols) >= 2 and int(cols[0], 16) & 0x4:
                paths.add(M.canonical(cols[-1]))
    assert paths, "no compressed files listed"
    return paths


def _huge(m):
    return {p for p, e in m.entries.items() if e["type"] == "f" and int(e["size"]) > HUGE}


# ---------------------------------------------------------------- plain

def test_plain_matches_manifest(mount, fixture_image, plain_manifest, compressed_paths):
    """Every entry, field and byte (except files above 64 MiB, read in
    test_plain_huge_files) as the kernel showed them, the compressed files
    included."""
    huge = _huge(plain_manifest)
    exp = M.Manifest({p: dict(e) for p, e in plain_manifest.entries.items()})
    assert compressed_paths <= set(exp.entries)
    for p in huge:
        exp.entries[p]["content"] = M.WILDCARD
    with mount(fixture_image("plain")) as m:
        w = M.walk(m.path, content_filter=lambda p: p not in huge)
    assert w.errors == [], w.errors
    diffs = M.compare(exp, w.manifest)
    assert diffs == [], M.report(diffs)


def test_plain_compressed_files(mount, fixture_image, fixtures_dir, plain_manifest,
                                compressed_paths):
    """The 31 compressed files (lz4, lz4hc, zstd with compress_chksum, lzo,
    lzo-rle; clusters of 4 to 16 blocks; raw clusters, holes, partial last
    clusters) read as the kernel reads them, through any mix of reads:
    whole, pread at odd offsets and lengths (partial clusters, the cached
    cluster), mmap, and several threads at once."""
    import threading

    sums = kernel_sums()
    assert compressed_paths <= set(sums)
    # the uncompressed neighbour agrees with the fixture's own manifest, as
    # do the files whose first cluster is raw
    raw = M.parse_file(os.path.join(fixtures_dir, "plain.manifest.tsv"))
    agree = {p for p in sums if raw[p]["content"] == sums[p]}
    assert "compr-ext/file.txt" in agree and len(agree) == 17, sorted(agree)
    rng = random.Random(77)
    with mount(fixture_image("plain")) as m:
        errors = []
        for p in sorted(compressed_paths):
            path = os.path.join(m.path, os.fsdecode(M.unescape(p)))
            with open(path, "rb") as f:
                data = f.read()
            assert hashlib.sha256(data).hexdigest() == sums[p], p
            assert len(data) == int(plain_manifest[p]["size"]), p
            fd = os.open(path, os.O_RDONLY)
            try:
                for _ in range(30):
                    off = rng.randrange(0, len(data) + 100)
                    ln = rng.choice((1, 100, 4095, 4096, 5000, 16384, 16385, 70000))
                    assert os.pread(fd, ln, off) == data[off:off + ln], (p, off, ln)
                with mmap.mmap(fd, 0, prot=mmap.PROT_READ) as mm:
                    assert mm[:] == data, p
            finally:
                os.close(fd)

            def reader(seed, path=path, data=data):
                r = random.Random(seed)
                try:
                    fd = os.open(path, os.O_RDONLY)
                    try:
                        for _ in range(40):
                            off = r.randrange(0, len(data))
                            ln = r.randrange(1, 40000)
                            if os.pread(fd, ln, off) != data[off:off + ln]:
                                errors.append((path, off, ln))
                    finally:
                        os.close(fd)
                except OSError as e:
                    errors.append((path, str(e)))

            threads = [threading.Thread(target=reader, args=(i,)) for i in range(4)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        assert errors == [], errors[:5]


@pytest.mark.slow
def test_plain_huge_files(mount, fixture_image, plain_manifest):
    """The 1 GiB all-hole file and the 8 GiB sparse file whose last extent
    sits in the double-indirect range, read completely."""
    huge = sorted(_huge(plain_manifest))
    assert "sparse/dind" in huge
    with mount(fixture_image("plain")) as m:
        for p in huge:
            path = os.path.join(m.path, os.fsdecode(M.unescape(p)))
            assert M.sha256_file(path, chunk=4 << 20) == plain_manifest[p]["content"], p


def test_plain_sparse_tail(mount, fixture_image, plain_manifest):
    """Reads at the extents of sparse/dind: 0, 1 MiB, 6 MiB, 100 MiB, 4 GiB, 8 GiB.
    Data there is not all zero; reads past EOF return nothing."""
    size = int(plain_manifest["sparse/dind"]["size"])
    with mount(fixture_image("plain")) as m:
        fd = os.open(os.path.join(m.path, "sparse/dind"), os.O_RDONLY)
        try:
            for off in (0, 1 << 20, 6 << 20, 100 << 20, 4 << 30, 8 << 30):
                b = os.pread(fd, 4096, off)
                assert len(b) == min(4096, size - off)
                assert any(b), "zeros at extent offset %d" % off
            assert os.pread(fd, 4096, size) == b""
            assert os.pread(fd, 4096, size + (1 << 30)) == b""
            tail = os.pread(fd, 100000, size - 77881)
            assert len(tail) == 77881
        finally:
            os.close(fd)


def test_plain_random_reads_match_sequential(mount, fixture_image, plain_manifest):
    """pread() at odd offsets and lengths returns the same bytes as one
    sequential read, whose hash the manifest checks."""
    rng = random.Random(1234)
    names = [p for p, e in plain_manifest.entries.items()
             if p.startswith(("medium/", "small/", "sparse/")) and e["type"] == "f"
             and 0 < int(e["size"]) <= 16 << 20]
    names = sorted(names)[:60]
    assert len(names) > 10
    with mount(fixture_image("plain")) as m:
        for p in names:
            path = os.path.join(m.path, p)
            with open(path, "rb") as f:
                data = f.read()
            assert hashlib.sha256(data).hexdigest() == plain_manifest[p]["content"], p
            fd = os.open(path, os.O_RDONLY)
            try:
                for _ in range(20):
                    off = rng.randrange(0, len(data) + 5000)
                    ln = rng.choice((1, 7, 511, 4096, 4097, 65536, 200000))
                    assert os.pread(fd, ln, off) == data[off:off + ln], (p, off, ln)
                with mmap.mmap(fd, 0, prot=mmap.PROT_READ) as mm:      # page-cache path
                    assert mm[:] == data, p
            finally:
                os.close(fd)


def test_plain_hard_links_share_inodes(mount, fixture_image, plain_manifest):
    with mount(fixture_image("plain")) as m:
        by_ino = {}
        for p, e in plain_manifest.entries.items():
            if e["type"] == "f" and int(e["nlink"]) > 1:
                st = os.lstat(os.path.join(m.path, os.fsdecode(M.unescape(p))))
                by_ino.setdefault(st.st_ino, []).append(p)
        assert by_ino
        for ino, paths in by_ino.items():
            n = int(plain_manifest[paths[0]]["nlink"])
            assert len(paths) == n, "inode %d: %s (nlink %d)" % (ino, paths, n)
        # and distinct files have distinct inode numbers
        inos = [os.lstat(os.path.join(m.path, "small", n)).st_ino
                for n in sorted(os.listdir(os.path.join(m.path, "small")))]
        assert len(set(inos)) == len(inos)


def test_plain_lookup_errors(mount, fixture_image):
    with mount(fixture_image("plain")) as m:
        for name in ("no-such-file", "small/no-such-file", "bigdir/entry-99999",
                     "holey-dir/" + "x" * 200):
            with pytest.raises(FileNotFoundError):
                os.lstat(os.path.join(m.path, name))
        with pytest.raises(NotADirectoryError):
            os.listdir(os.path.join(m.path, "small", sorted(os.listdir(
                os.path.join(m.path, "small")))[0]))
        with pytest.raises(OSError) as ei:
            os.lstat(os.path.join(m.path, "x" * 256))
        assert ei.value.errno in (errno.ENAMETOOLONG, errno.ENOENT)


def test_plain_is_read_only(mount, fixture_image):
    with mount(fixture_image("plain")) as m:
        p = m.path
        j = lambda *x: os.path.join(p, *x)   # noqa: E731
        attempts = [
            lambda: open(j("new-file"), "wb"),
            lambda: open(j("medium", "1m"), "r+b"),
            lambda: os.mkdir(j("new-dir")),
            lambda: os.unlink(j("empty", "e0")),
            lambda: os.rename(j("deep"), j("deep2")),
            lambda: os.chmod(j("deep"), 0o700),
            lambda: os.chown(j("empty", "e1"), 1, 1),
            lambda: os.utime(j("empty", "e1"), (1, 1)),
            lambda: os.symlink("x", j("new-link")),
            lambda: os.link(j("empty", "e1"), j("new-hardlink")),
            lambda: os.setxattr(j("deep"), "user.x", b"1"),
            lambda: os.truncate(j("medium", "1m"), 0),
        ]
        for i, fn in enumerate(attempts):
            with pytest.raises(OSError) as ei:
                fn()
            assert ei.value.errno == errno.EROFS, "attempt %d: %s" % (i, ei.value)
        st = os.statvfs(p)
        assert st.f_flag & os.ST_RDONLY


def test_plain_statfs(mount, fixture_image):
    with mount(fixture_image("plain")) as m:
        st = os.statvfs(m.path)
    assert st.f_bsize == 4096 or st.f_frsize == 4096
    total = st.f_blocks * st.f_frsize
    assert 0 < total <= 512 << 20
    assert 0 < st.f_bfree <= st.f_blocks
    assert st.f_bavail <= st.f_bfree
    assert st.f_namemax == 255
    # the kernel reported 323 MB free for this image; 0x4818 valid blocks used
    used = (st.f_blocks - st.f_bfree) * st.f_frsize
    assert used >= 0x4818 * 4096 * 0.9, (used, st)


def test_plain_no_recovery_warning(mount, fixture_image):
    """A cleanly unmounted image must not claim pending roll-forward recovery."""
    with mount(fixture_image("plain")) as m:
        os.listdir(m.path)
    assert not re.search(r"roll.?forward", m.stderr(), re.I), m.stderr()


# ---------------------------------------------------------------- crypt

ENC_DIRS = ("enc", "enc64", "enc32", "enc-pad32", "enc-adiantum")


def test_crypt_plain_dir_matches(mount, fixture_image, fixtures_dir):
    exp = M.parse_file(os.path.join(fixtures_dir, "crypt.manifest.tsv")).subtree("plain-dir")
    assert len(exp) >= 2
    with mount(fixture_image("crypt")) as m:
        assert set(ENC_DIRS) | {"plain-dir"} <= set(os.listdir(m.path))
        w = M.walk(os.path.join(m.path, "plain-dir"), prefix="plain-dir")
    assert w.errors == []
    diffs = M.compare(exp, w.manifest)
    assert diffs == [], M.report(diffs)


def test_crypt_encrypted_dirs_give_no_plaintext(mount, fixture_image, fixtures_dir):
    """Without the key: listing may fail, or show names that are not the
    plaintext names; reading a file must fail (ENOKEY expected); the daemon
    must survive it all."""
    full = M.parse_file(os.path.join(fixtures_dir, "crypt.manifest.tsv"))
    with mount(fixture_image("crypt")) as m:
        for d in ENC_DIRS:
            top = os.path.join(m.path, d)
            st = os.lstat(top)
            assert stat.S_ISDIR(st.st_mode)
            plain_names = {os.path.basename(os.fsdecode(M.unescape(p)))
                           for p in full.entries if p.startswith(d + "/") and p.count("/") == 1}
            assert plain_names
            try:
                names = os.listdir(top)
            except OSError:
                continue
            leaked = set(names) & plain_names
            assert not leaked, "%s: plaintext names without the key: %s" % (d, sorted(leaked)[:5])
            for n in names[:40]:
                p = os.path.join(top, n)
                try:
                    st = os.lstat(p)
                except OSError:
                    continue
                if stat.S_ISREG(st.st_mode) and st.st_size > 0:
                    with pytest.raises(OSError) as ei:
                        with open(p, "rb") as f:
                            f.read(4096)
                    assert ei.value.errno in (errno.ENOKEY, errno.EACCES, errno.EPERM,
                                              errno.EOPNOTSUPP), ei.value
        # Look up the kernel's no-key names directly: whatever lookup
        # does, no file contents may come back.
        nokey = M.parse_file(os.path.join(fixtures_dir, "crypt.nokey-manifest.tsv"))
        tried = 0
        for p, e in sorted(nokey.entries.items()):
            if e["type"] != "f" or not p.startswith(ENC_DIRS) or int(e["size"]) == 0:
                continue
            if tried >= 30:
                break
            tried += 1
            path = os.path.join(m.path, os.fsdecode(M.unescape(p)))
            try:
                with open(path, "rb") as f:
                    data = f.read(4096)
            except OSError:
                continue
            raise AssertionError("read %d bytes of %s without the key" % (len(data), p))
        assert tried > 0
        # the mount still works afterwards
        assert os.listdir(os.path.join(m.path, "plain-dir"))


# ---------------------------------------------------------------- recovery

# The state at the last checkpoint, before any roll-forward recovery: what a
# read-only mount that does not recover must show. Read off the image with
# dump.f2fs (which does not recover): valid inodes are 3-13 only; base/a is
# 65536 bytes and base/d/e 300000 bytes with mtime 1700000000; base/new1,
# base/new-inline and other/unsynced do not exist yet; orphan-victim has no
# name. Contents of a, c and e are not known here (in-place fsync writes may
# have touched their blocks), so they are '*'. The other entries are as in
# recovery.manifest.tsv (checked in the test).
RECOVERY_CHECKPOINT = """\
.	d	0755	0	0	*	4	1704067204	-	-
base	d	0755	0	0	*	3	1700000000	-	-
base/a	f	0644	0	0	65536	1	1700000000	*	-
base/b	f	0644	0	0	200	1	1700000000	2558711ba4144da4f5bcd29e8ae14ce70587f1dfae050a6c2972df2922ea8aba	-
base/c	f	0644	0	0	1048576	1	1700000000	*	-
base/d	d	0755	0	0	*	2	1700000000	-	-
base/d/e	f	0644	0	0	300000	1	1700000000	*	-
base/untouched	f	0644	0	0	5000	1	1700000000	a402dbb4a3391af1b4e94c82867278559af183f92d137594756b26a8c19826bb	-
other	d	0755	0	0	*	2	1700000000	-	-
other/f	f	0644	0	0	1000	1	1700000000	5d49719daf9f874175766d73e3d9f9cc89e92856b565a0e8f592d1312ec27a4c	-
"""
# fsync()ed or recovered only by roll-forward: not visible before it.
RECOVERY_ONLY = ("base/new1", "base/new-inline", "other/unsynced", "orphan-victim")


def test_recovery_expectation_agrees_with_fixture(fixtures_dir):
    """Entries the checkpointed state shares with the recovered one agree
    with recovery.manifest.tsv; the ones recovery changes differ."""
    rec = M.parse_file(os.path.join(fixtures_dir, "recovery.manifest.tsv"))
    cp = M.parse_text(RECOVERY_CHECKPOINT)
    for p in ("base/b", "base/untouched", "other/f", "base/d", "other"):
        d = M.compare(M.Manifest({p: cp[p]}), M.Manifest({p: rec[p]}), ignore_dir_size=True)
        assert d == [], d
    for p in ("base/a", "base/d/e"):
        assert cp[p]["size"] != rec[p]["size"]
    for p in RECOVERY_ONLY[:2]:
        assert p in rec and p not in cp


@pytest.mark.parametrize("options", [("ro",), ("ro", "norecovery")])
def test_recovery_shows_checkpoint(mount, fixture_image, options):
    exp = M.parse_text(RECOVERY_CHECKPOINT)
    with mount(fixture_image("recovery"), options=options) as m:
        w = M.walk(m.path)
        for p in RECOVERY_ONLY:
            assert not os.path.lexists(os.path.join(m.path, p)), p
    assert w.errors == []
    diffs = M.compare(exp, w.manifest, ignore_dir_size=True)
    assert diffs == [], M.report(diffs)


def test_recovery_warns_pending_roll_forward(mount, fixture_image):
    with mount(fixture_image("recovery")) as m:
        os.listdir(m.path)
        err = m.stderr()
    assert re.search(r"roll-?forward", err, re.I), "no roll-forward warning in:\n" + err


@pytest.mark.parametrize("options,extra", [
    (("ro", "cache_size=64K"), ()),
    (("ro", "direct"), ()),
    (("ro",), ("-s",)),
], ids=["tiny-cache", "direct", "single-thread"])
def test_plain_with_options(mount, fixture_image, plain_manifest, compressed_paths,
                            options, extra):
    """The same answers with a tiny metadata cache, O_DIRECT device reads and
    a single-threaded loop (a subset: everything but the big and sparse files)."""
    keep = lambda p: not p.startswith(("sparse/", "medium/"))   # noqa: E731
    exp = M.Manifest({p: dict(e) for p, e in plain_manifest.entries.items() if keep(p)},
                     partial=True)
    with mount(fixture_image("plain"), options=options, extra_args=extra) as m:
        w = M.walk(m.path, content_filter=keep)
    diffs = M.compare(exp, w.manifest)
    assert diffs == [], M.report(diffs)


def _dirent_api():
    import ctypes
    import ctypes.util

    class Dirent(ctypes.Structure):
        _fields_ = [("d_ino", ctypes.c_uint64), ("d_off", ctypes.c_int64),
                    ("d_reclen", ctypes.c_ushort), ("d_type", ctypes.c_ubyte),
                    ("d_name", ctypes.c_char * 256)]

    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    libc.opendir.restype = ctypes.c_void_p
    libc.opendir.argtypes = [ctypes.c_char_p]
    libc.readdir.restype = ctypes.POINTER(Dirent)
    libc.readdir.argtypes = [ctypes.c_void_p]
    libc.telldir.restype = ctypes.c_long
    libc.telldir.argtypes = [ctypes.c_void_p]
    libc.seekdir.argtypes = [ctypes.c_void_p, ctypes.c_long]
    libc.closedir.argtypes = [ctypes.c_void_p]
    return libc


DT = {stat.S_IFREG: 8, stat.S_IFDIR: 4, stat.S_IFLNK: 10, stat.S_IFCHR: 2,
      stat.S_IFBLK: 6, stat.S_IFIFO: 1, stat.S_IFSOCK: 12}


def test_plain_readdir_offsets_and_dirent_fields(mount, fixture_image):
    """telldir()/seekdir() positions stay valid (the dentry offsets the
    daemon hands out), "." and ".." are listed, and d_ino/d_type agree with
    lstat()."""
    libc = _dirent_api()
    rng = random.Random(5)
    with mount(fixture_image("plain")) as m:
        for d in ("bigdir", "holey-dir", "smalldir", "special", "."):
            path = os.path.join(m.path, d).encode()
            dp = libc.opendir(path)
            assert dp, d
            try:
                ents = []
                while True:
                    pos = libc.telldir(dp)
                    e = libc.readdir(dp)
                    if not e:
                        break
                    ents.append((pos, e.contents.d_name, e.contents.d_ino, e.contents.d_type))
                names = [x[1] for x in ents]
                assert len(names) == len(set(names)), "%s: duplicate entries" % d
                assert b"." in names and b".." in names
                assert sorted(n for n in names if n not in (b".", b"..")) == \
                    sorted(os.fsencode(n) for n in os.listdir(path))
                for _ in range(100):
                    pos, name = rng.choice(ents)[:2]
                    libc.seekdir(dp, pos)
                    e = libc.readdir(dp)
                    assert e and e.contents.d_name == name, (d, pos, name)
                for _, name, ino, dtype in ents[:400]:
                    if name in (b".", b".."):
                        continue
                    st = os.lstat(os.path.join(path, name))
                    assert ino == st.st_ino, (d, name)
                    assert dtype == DT[stat.S_IFMT(st.st_mode)], (d, name, dtype)
            finally:
                libc.closedir(dp)


@pytest.fixture
def loop_device(fixture_image):
    """loop_device(name) -> /dev/loopN attached read-only to a fixture copy."""
    attached = []

    def _attach(name):
        r = fsutil.run(["losetup", "--read-only", "--find", "--show", fixture_image(name)],
                       timeout=30)
        if r.returncode != 0:
            pytest.skip("no loop devices here: %s" % r.stdout.strip())
        dev = r.stdout.strip().splitlines()[-1]
        attached.append(dev)
        return dev

    yield _attach
    for dev in attached:
        fsutil.run(["losetup", "-d", dev], timeout=30)


@pytest.mark.parametrize("options", [("ro",), ("ro", "direct")], ids=["buffered", "direct"])
def test_plain_from_block_device(mount, loop_device, plain_manifest, compressed_paths, options):
    """The same image through a (read-only) loop block device."""
    dev = loop_device("plain")
    keep = lambda p: not p.startswith(("sparse/", "bigdir/"))   # noqa: E731
    exp = M.Manifest({p: dict(e) for p, e in plain_manifest.entries.items() if keep(p)},
                     partial=True)
    with mount(dev, options=options) as m:
        w = M.walk(m.path, content_filter=keep)
        assert fsutil.mount_fstype(m.path) == "fuse.f2fs-fuse"
    assert len(w.manifest) == len(plain_manifest)
    diffs = M.compare(exp, w.manifest)
    assert diffs == [], M.report(diffs)


def _as_user(uid, gid, code, timeout=60):
    """Run python `code` as uid:gid; returns its stdout lines."""
    def demote():
        os.setgroups([])
        os.setgid(gid)
        os.setuid(uid)
    r = subprocess.run(["/usr/bin/python3", "-c", code], preexec_fn=demote, timeout=timeout,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr
    return r.stdout.split()


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to switch users")
def test_plain_permissions_enforced(f2fs_fuse, fixture_image):
    """The kernel checks permissions (default_permissions): other users,
    through allow_other, get exactly what the modes, owners and POSIX ACLs
    allow."""
    # pytest's own folders are private to root: mount where others can reach
    top = tempfile.mkdtemp(prefix="f2fs-fuse-perm-", dir="/tmp")
    os.chmod(top, 0o755)
    try:
        _permission_probes(f2fs_fuse, fixture_image("plain"), os.path.join(top, "mnt"))
    finally:
        shutil.rmtree(top, ignore_errors=True)


def _permission_probes(f2fs_fuse, image, mnt):
    with fsutil.mounted(f2fs_fuse, image, mnt, options=("ro", "allow_other")) as m:
        probe = (
            "import os\n"
            "def t(f):\n"
            "    try:\n"
            "        f(); return 'ok'\n"
            "    except OSError as e:\n"
            "        return str(e.errno)\n"
            "p = %r\n"
            "r = lambda n: open(os.path.join(p, n), 'rb').read()\n"
            "for n in ('perm/mode-0644x', 'perm/mode-0444', 'perm/mode-0600', 'perm/mode-0000',\n"
            "          'perm/mode-0400', 'perm/owner-1000', 'perm/owner-nobody'):\n"
            "    print(n + '=' + t(lambda: r(n)))\n"
            "for n in ('xattr/acl-file', 'xattr/acl-dir/inherits'):\n"
            "    print(n + '=' + t(lambda: r(n)))\n"
            "print('ls-0700=' + t(lambda: os.listdir(os.path.join(p, 'perm/dir-0700'))))\n"
            "print('ls-1777=' + t(lambda: os.listdir(os.path.join(p, 'perm/dir-1777'))))\n"
        ) % m.path
        nobody = dict(x.split("=") for x in _as_user(65534, 65534, probe))
        user1000 = dict(x.split("=") for x in _as_user(1000, 1000, probe))
    EACCES = str(errno.EACCES)
    assert nobody == {
        "perm/mode-0644x": str(errno.ENOENT), "perm/mode-0444": "ok",
        "perm/mode-0600": EACCES, "perm/mode-0000": EACCES, "perm/mode-0400": EACCES,
        "perm/owner-1000": "ok", "perm/owner-nobody": "ok",
        "xattr/acl-file": EACCES, "xattr/acl-dir/inherits": EACCES,
        "ls-0700": EACCES, "ls-1777": "ok"}, nobody
    assert user1000["perm/mode-0600"] == EACCES and user1000["perm/owner-1000"] == "ok"
    # mode 0640 root:root, but the access ACL grants user 1000 read
    assert user1000["xattr/acl-file"] == "ok", user1000
    assert user1000["xattr/acl-dir/inherits"] == "ok", user1000


FS_IOC_GETFLAGS = 0x80086601


def test_plain_inode_flags_match_kernel(mount, fixture_image, fixtures_dir):
    """FS_IOC_GETFLAGS gives the flags the kernel reported for the files in
    the compressed directories (plain.compression.txt, first column)."""
    import array
    import fcntl
    want = {}
    with open(os.path.join(fixtures_dir, "plain.compression.txt"), encoding="utf-8") as f:
        for line in f:
            cols = line.split()
            if len(cols) >= 2 and cols[0].startswith("0x"):
                want[cols[-1]] = int(cols[0], 16)
    assert len(want) > 20
    got = {}
    with mount(fixture_image("plain")) as m:
        for p in want:
            fd = os.open(os.path.join(m.path, p), os.O_RDONLY | os.O_NOFOLLOW)
            try:
                buf = array.array("l", [0])
                fcntl.ioctl(fd, FS_IOC_GETFLAGS, buf, True)
                got[p] = buf[0] & 0xFFFFFFFF
            finally:
                os.close(fd)
    assert got == want


FS_IOC_GETVERSION = 0x80087601


def _dump_inode(image, ino):
    """Fields of inode `ino` as dump.f2fs (f2fs-tools, independent of us) reads them."""
    r = fsutil.run(["dump.f2fs", "-i", str(ino), image], timeout=60)
    fields = {}
    for line in r.stdout.splitlines():
        mt = re.match(r"^(i_\w+)\s+\[0x\s*([0-9a-fA-F]+)\s*:", line)
        if mt:
            fields[mt.group(1)] = int(mt.group(2), 16)
        mn = re.match(r"^i_name\s+\[(.*)\]$", line)
        if mn:
            fields["i_name"] = mn.group(1)
    return fields


def _signed64(v):
    return v - (1 << 64) if v >= 1 << 63 else v


def test_plain_inodes_match_dump_f2fs(mount, fixture_image, plain_manifest):
    """All three timestamps with nanoseconds, mode, owner, links, size and
    generation of a sample of inodes, against dump.f2fs reading the image."""
    import array
    import fcntl
    img = fixture_image("plain")
    sample = sorted(p for p, e in plain_manifest.entries.items()
                    if p.startswith(("times/", "perm/", "special/", "links/", "xattr/", "names/"))
                    or p in (".", "small", "deep"))
    sample += sorted(p for p in plain_manifest.entries if p.startswith("small/"))[:10]
    checked = 0
    with mount(img) as m:
        for p in sample:
            rel = "" if p == "." else os.fsdecode(M.unescape(p))
            path = os.path.join(m.path, rel)
            st = os.lstat(path)
            d = _dump_inode(img, st.st_ino)
            assert d.get("i_mode") == st.st_mode, (p, d.get("i_mode"), st.st_mode)
            if p != "." and "i_name" in d and not p.startswith(("names/", "links/")):
                assert d["i_name"] == os.path.basename(rel), (p, d["i_name"])
            for t in ("atime", "mtime", "ctime"):
                want = _signed64(d["i_" + t]) * 10 ** 9 + d["i_%s_nsec" % t]
                assert getattr(st, "st_%s_ns" % t) == want, (p, t)
            assert (st.st_uid, st.st_gid, st.st_nlink, st.st_size) == \
                (d["i_uid"], d["i_gid"], d["i_links"], d["i_size"]), p
            if stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode):
                fd = os.open(path, os.O_RDONLY)
                try:
                    buf = array.array("l", [0])
                    fcntl.ioctl(fd, FS_IOC_GETVERSION, buf, True)
                    assert buf[0] & 0xFFFFFFFF == d["i_generation"], p
                finally:
                    os.close(fd)
            checked += 1
    assert checked > 60


def test_plain_xattr_calls(mount, fixture_image, plain_manifest):
    """The getxattr/listxattr size protocol: size queries, ERANGE for short
    buffers, ENODATA for missing names, values as the kernel had them."""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    libc.lgetxattr.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_void_p, ctypes.c_size_t]
    libc.llistxattr.argtypes = [ctypes.c_char_p, ctypes.c_void_p, ctypes.c_size_t]
    libc.lgetxattr.restype = libc.llistxattr.restype = ctypes.c_ssize_t
    with mount(fixture_image("plain")) as m:
        big = os.path.join(m.path, "xattr/big").encode()
        many = os.path.join(m.path, "xattr/many").encode()
        assert libc.lgetxattr(big, b"user.big", None, 0) == 3000
        buf = ctypes.create_string_buffer(4096)
        assert libc.lgetxattr(big, b"user.big", buf, 10) == -1
        assert ctypes.get_errno() == errno.ERANGE
        n = libc.lgetxattr(big, b"user.big", buf, 4096)
        assert n == 3000
        assert "user.big=" + hashlib.sha256(buf.raw[:n]).hexdigest() == \
            plain_manifest["xattr/big"]["xattrs"]
        assert libc.lgetxattr(big, b"user.nonexistent", None, 0) == -1
        assert ctypes.get_errno() == errno.ENODATA
        need = libc.llistxattr(many, None, 0)
        names = os.listxattr(many, follow_symlinks=False)
        assert need == sum(len(x) + 1 for x in names) and len(names) == 30
        assert libc.llistxattr(many, buf, 10) == -1
        assert ctypes.get_errno() == errno.ERANGE
        empty = os.path.join(m.path, "xattr/empty-value")
        assert os.getxattr(empty, "user.empty", follow_symlinks=False) == b""
