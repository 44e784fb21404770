"""The kernel-written android fixture, written by f2fs-fuse and read by the
kernel again, then the other way round.

f2fs-fuse runs the read-write workload of test_android_fixture.py on a copy
(casefolded and encrypted + casefolded directories, compressed .apk files
and the encrypted compressed code_cache, fs-verity enabled on new files,
chown, project-inherit creation) and cleans every segment
(F2FS_IOC_GARBAGE_COLLECT_RANGE); fsck.f2fs is clean. The kernel mounts it
with the fixture's options: without the key it shows the no-key names and
errors f2fs-fuse shows; with it, its manifest equals what f2fs-fuse showed,
other spellings of f2fs-fuse's new names find the same inodes, the project
ids are the ones f2fs-fuse gave, it measures the verity digests f2fs-fuse
built, and its log is clean. The kernel
then writes more in the same directories; fsck.f2fs is clean again, and
f2fs-fuse finds the kernel's new names by other spellings, reads its
compressed file and reports quota usage equal to what the files use."""

import hashlib
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "integration"))

import fsutil  # noqa: E402
import manifest as M  # noqa: E402
import run_guest as G  # noqa: E402
import test_android_fixture as A  # noqa: E402
from conftest import FIXTURES  # noqa: E402
from test_kernel import assert_guest_ok, f2fs_fuse, guest, kernel_manifest  # noqa: E402,F401

# the kernel's mount options for the fixture (android.info mount1)
KOPTS = "usrquota,grpquota,prjquota,compress_algorithm=lz4,compress_log_size=2," \
        "compress_extension=apk"

# other spellings of the names f2fs-fuse made: LOOKUP, STORED
FUSE_NAMES = [
    ("casefold/new-ωmega-file.TXT", "casefold/New-Ωmega-File.txt"),
    ("casefold/NEWDIR/inner.bin", "casefold/NewDir/Inner.BIN"),
    ("casefold/MANY/added-007.DAT", "casefold/many/Added-007.dat"),
    ("media/0/DOWNLOAD/new report.pdf", "media/0/Download/New Report.PDF"),
    ("media/0/pictures/HOLIDAY/beach.jpg", "media/0/Pictures/Holiday/Beach.JPG"),
    ("newcf/mixed.CASE", "newcf/Mixed.Case"),
]
# and of the kernel's
KERNEL_NAMES = [
    ("casefold/KERNEL-ä.TXT", "casefold/Kernel-Ä.txt"),
    ("media/0/download/KERNEL-STRASSE.bin", "media/0/Download/kernel-straße.bin"),
]

# guest: "LOOKUP<TAB>same|differ|ENOENT" for each pair; project ids of paths
LOOKUPS = (
    "import os, sys\n"
    "mnt = sys.argv[1]\n"
    "pairs = [l.split('\\t') for l in open(sys.argv[2], encoding='utf-8').read().splitlines()]\n"
    "for look, stored in pairs:\n"
    "    try:\n"
    "        a = os.lstat(os.path.join(mnt, look)).st_ino\n"
    "    except FileNotFoundError:\n"
    "        print('%s\\tENOENT' % look); continue\n"
    "    b = os.lstat(os.path.join(mnt, stored)).st_ino\n"
    "    print('%s\\t%s' % (look, 'same' if a == b else 'differ'))\n"
)
PROJIDS = (
    "import fcntl, os, struct, sys\n"
    "for p in sys.argv[2:]:\n"
    "    fd = os.open(os.path.join(sys.argv[1], p), os.O_RDONLY)\n"
    "    b = bytearray(28)\n"
    "    fcntl.ioctl(fd, 0x801C581F, b, True)\n"
    "    os.close(fd)\n"
    "    x, _, _, prj = struct.unpack_from('<IIII', b)\n"
    "    print('%s\\t%d' % (p, prj))\n"
)
MEASURE = (
    "import fcntl, os, struct, sys\n"
    "for p in sys.argv[2:]:\n"
    "    fd = os.open(os.path.join(sys.argv[1], p), os.O_RDONLY)\n"
    "    b = bytearray(struct.pack('<HH', 0, 64) + bytes(64))\n"
    "    fcntl.ioctl(fd, 0xC0046686, b, True)\n"
    "    os.close(fd)\n"
    "    alg, n = struct.unpack_from('<HH', b)\n"
    "    print('%s\\tsha256:%s' % (p, bytes(b[4:4 + n]).hex()))\n"
)
VERITY_PATHS = ["user/0/com.example.app/files/verity.bin", "verity/new-200k"]
PROJ_PATHS = ["media/0/Download/New Report.PDF", "media/0/Pictures/Holiday",
              "media/0/Pictures/Holiday/Beach.JPG", "proj/inherit-1000/newdir",
              "proj/inherit-1000/newdir/f", "proj/noinherit-5000/new", "owners/shell",
              "owners/app-dir", "owners/app-dir/b", "owners/app-dir/c"]

GUEST = """set -e
kmanifest nokey.tsv
python3 -m ktest_guest add-key $MNT /ktest/run/android.key >$KTEST_OUT/keyid
kmanifest manifest.tsv
python3 /ktest/run/lookups.py $MNT /ktest/run/fuse-names.tsv >$KTEST_OUT/lookups.txt
python3 /ktest/run/projids.py $MNT "$@" >$KTEST_OUT/projids.txt
python3 /ktest/run/measure.py $MNT VERITY_PATHS >$KTEST_OUT/verity.txt
# the kernel writes in the same directories
echo kernel >"$MNT/casefold/Kernel-Ä.txt"
dd if=/dev/urandom of="$MNT/media/0/Download/kernel-straße.bin" bs=4k count=5 2>/dev/null
yes 'kernel apk line' | head -c 200000 >"$MNT/app/com.example.app-1/kernel.apk"
chown 10123:10123 "$MNT/app/com.example.app-1/kernel.apk"
rm "$MNT/casefold/NEW-ΩMEGA-FILE.txt"
rm "$MNT/media/0/download/NEW REPORT.pdf"
mkdir "$MNT/proj/inherit-1000/kdir"
echo k >"$MNT/proj/inherit-1000/kdir/k"
"""


@pytest.fixture(scope="module")
def fixtures_dir():
    if not os.path.isfile(os.path.join(FIXTURES, "android.img.zst")):
        pytest.skip("the android fixture is not in %s (set F2FS_FIXTURES)" % FIXTURES)
    return FIXTURES


def _pairs(pairs):
    return "".join("%s\t%s\n" % p for p in pairs).encode()


def test_android_fixture_both_ways(guest, f2fs_fuse, fixtures_dir, tmp_path):
    src = os.path.join(fixtures_dir, "android.img.zst")
    image = str(tmp_path / "android.img")
    fsutil.run(["zstd", "-d", "-q", "-f", src, "-o", image], check=True, timeout=300)
    key = os.path.join(fixtures_dir, "android.key")
    opts = A.RW_OPTS + ("key_file=" + key,)
    links = {}
    with fsutil.mounted(f2fs_fuse, image, tmp_path / "mnt", opts) as m:
        links.update(A.workload(m.path))
        A.gc_all(image, m.path)     # the kernel reads what the cleaning moved
        os.sync()
        mine = M.walk(m.path).manifest
        mine_proj = {p: A._projid_of(os.path.join(m.path, p))[1] for p in PROJ_PATHS}
    fsutil.fsck_check(image)
    with fsutil.mounted(f2fs_fuse, image, tmp_path / "nokey", ("ro",)) as m:
        mine_nokey = M.walk(m.path).manifest

    with open(key, "rb") as f:
        files = {"android.key": f.read(), "lookups.py": LOOKUPS, "projids.py": PROJIDS,
                 "fuse-names.tsv": _pairs(FUSE_NAMES)}
    script = GUEST.replace('"$@"', " ".join("'%s'" % p for p in PROJ_PATHS)) \
        .replace("VERITY_PATHS", " ".join(VERITY_PATHS))
    files["measure.py"] = MEASURE
    r = G.kernel_run(image, script, opts=KOPTS, files=files, check=False)
    assert_guest_ok(r, "the kernel reads and writes f2fs-fuse's android image")
    assert r.text("keyid").strip() == "3d143538d69f4f3e52b8bb21d99c8f62"
    kman, _ = kernel_manifest(r, "manifest.tsv")
    diffs = M.compare(kman, mine)
    assert diffs == [], "the kernel sees another tree than f2fs-fuse wrote:\n" + M.report(diffs)
    knokey, _ = kernel_manifest(r, "nokey.tsv")
    diffs = M.compare(knokey, mine_nokey)
    assert diffs == [], "no-key names or errors differ from the kernel's:\n" + M.report(diffs)
    assert r.text("lookups.txt").splitlines() == ["%s\tsame" % lk for lk, _ in FUSE_NAMES]
    kproj = dict(ln.split("\t") for ln in r.text("projids.txt").splitlines())
    assert {p: int(v) for p, v in kproj.items()} == mine_proj
    # fs-verity that f2fs-fuse enabled (one file encrypted): the kernel's digests
    assert r.text("verity.txt").splitlines() == ["%s\t%s" % (p, A.VERITY_200K)
                                                 for p in VERITY_PATHS]
    fsutil.fsck_check(image)

    with fsutil.mounted(f2fs_fuse, image, tmp_path / "mnt2", opts) as m:
        j = lambda p: os.path.join(m.path, p)   # noqa: E731
        for look, stored in KERNEL_NAMES:
            assert os.lstat(j(look)).st_ino == os.lstat(j(stored)).st_ino, look
        for gone in ("casefold/New-Ωmega-File.txt", "media/0/Download/New Report.PDF"):
            assert not os.path.lexists(j(gone)), gone
        apk = j("app/com.example.app-1/kernel.apk")
        with open(apk, "rb") as f:
            assert f.read() == (b"kernel apk line\n" * 12500)[:200000]
        fd = os.open(apk, os.O_RDONLY)
        try:
            assert A.getflags(fd) & 0x4 and A.compress_blocks(fd) > 0
        finally:
            os.close(fd)
        assert A._projid_of(j("proj/inherit-1000/kdir/k"))[1] == 1000
        # the kernel's quota files, as f2fs-fuse reads them, count what the files use
        assert A.quota_usage(m.path) == A.usage_model(m.path, lambda rel: links.get(rel, 0))
        with open(j("casefold/kernel-ä.TXT"), "w") as f:
            f.write("f2fs-fuse again\n")
    fsutil.fsck_check(image)


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))


GUEST_RECOVER = """set -e
python3 -m ktest_guest add-key $MNT /ktest/run/android.key >/dev/null
kmanifest manifest.tsv
python3 /ktest/run/lookups.py $MNT /ktest/run/names.tsv >$KTEST_OUT/lookups.txt
"""


def test_android_kernel_recovers_fuse_fsync(guest, f2fs_fuse, fixtures_dir, tmp_path):
    """f2fs-fuse fsync()s new files in the casefolded and encrypted +
    casefolded trees (one chowned) and is killed; the kernel's roll-forward
    recovery brings them back under their names, found by other spellings,
    with the same contents; its quota files then count what the files use
    (fsck.f2fs clean, and f2fs-fuse's report equals the files)."""
    src = os.path.join(fixtures_dir, "android.img.zst")
    image = str(tmp_path / "android.img")
    fsutil.run(["zstd", "-d", "-q", "-f", src, "-o", image], check=True, timeout=300)
    key = os.path.join(fixtures_dir, "android.key")
    opts = A.RW_OPTS + ("key_file=" + key,)
    m = fsutil.Mount(f2fs_fuse, image, str(tmp_path / "mnt"), opts).start()
    fds = []
    try:
        j = lambda p: os.path.join(m.path, p)   # noqa: E731
        made = {"casefold/Fsynced-Ä.txt": (os.urandom(9000), None),
                "media/0/Download/Fsynced Straße.bin": (os.urandom(30000), 10123)}
        for p, (data, uid) in made.items():
            fd = os.open(j(p), os.O_WRONLY | os.O_CREAT, 0o644)
            os.write(fd, data)
            if uid is not None:
                os.fchown(fd, uid, uid)
            os.fsync(fd)
            fds.append(fd)
    finally:
        m._kill()
        for fd in fds:
            try:
                os.close(fd)
            except OSError:
                pass
    # nothing checkpointed them: only the kernel's roll-forward can bring them back
    with fsutil.mounted(f2fs_fuse, image, tmp_path / "peek", ("ro",)) as m:
        assert "fsync()ed node block(s) after the last checkpoint" in m.stderr()
        assert not os.path.exists(os.path.join(m.path, "casefold", "Fsynced-Ä.txt"))
    names = [("casefold/FSYNCED-ä.TXT", "casefold/Fsynced-Ä.txt"),
             ("media/0/download/FSYNCED STRASSE.bin", "media/0/Download/Fsynced Straße.bin")]
    with open(key, "rb") as f:
        files = {"android.key": f.read(), "lookups.py": LOOKUPS, "names.tsv": _pairs(names)}
    r = G.kernel_run(image, GUEST_RECOVER, opts=KOPTS, files=files, check=False)
    assert_guest_ok(r, "the kernel recovers f2fs-fuse's fsync()ed files")
    assert r.text("lookups.txt").splitlines() == ["%s\tsame" % lk for lk, _ in names]
    kman, _ = kernel_manifest(r, "manifest.tsv")
    for p, (data, uid) in made.items():
        e = kman[M.canonical(p)]
        assert e["content"] == hashlib.sha256(data).hexdigest() and \
            int(e["uid"]) == (uid or 0), (p, e)
    fsutil.fsck_check(image)
    with fsutil.mounted(f2fs_fuse, image, tmp_path / "mnt2", opts) as m:
        assert A.quota_usage(m.path) == A.usage_model(m.path, lambda rel: 0)


KERNEL_FSYNC = (
    "import os, sys\n"
    "mnt = sys.argv[1]\n"
    "for p, n, uid in (('casefold/Kernel-Fsync-Ö.txt', 7000, 0),\n"
    "                  ('media/0/Download/Kernel Fsync Groß.bin', 40000, 10123)):\n"
    "    fd = os.open(os.path.join(mnt, p), os.O_WRONLY | os.O_CREAT, 0o644)\n"
    "    os.write(fd, bytes((i * 7 + n) % 251 for i in range(n)))\n"
    "    os.fchown(fd, uid, uid)\n"
    "    os.fsync(fd)\n"
)

GUEST_CRASH = """set -e
python3 -m ktest_guest add-key $MNT /ktest/run/android.key >/dev/null
sync
python3 /ktest/run/kfsync.py $MNT
kcrash
"""


def test_android_fuse_recovers_kernel_fsync(guest, f2fs_fuse, fixtures_dir, tmp_path):
    """The kernel fsync()s new files in the casefolded and encrypted +
    casefolded trees (one chowned) and loses power; f2fs-fuse's roll-forward
    brings them back under their names, found by other spellings, with the
    kernel's bytes, and its quota counts what the files use; fsck.f2fs clean."""
    src = os.path.join(fixtures_dir, "android.img.zst")
    image = str(tmp_path / "android.img")
    fsutil.run(["zstd", "-d", "-q", "-f", src, "-o", image], check=True, timeout=300)
    key = os.path.join(fixtures_dir, "android.key")
    with open(key, "rb") as f:
        files = {"android.key": f.read(), "kfsync.py": KERNEL_FSYNC}
    r = G.kernel_run(image, GUEST_CRASH, opts=KOPTS, files=files, check=False)
    assert r.rc == 0, r.summary()
    opts = A.RW_OPTS + ("key_file=" + key,)
    with fsutil.mounted(f2fs_fuse, image, tmp_path / "mnt", opts) as m:
        assert "fsync()ed node block(s) after the last checkpoint" in m.stderr()
        j = lambda p: os.path.join(m.path, p)   # noqa: E731
        for look, stored, n, uid in (
                ("casefold/KERNEL-FSYNC-ö.TXT", "casefold/Kernel-Fsync-Ö.txt", 7000, 0),
                ("media/0/download/KERNEL FSYNC GROSS.BIN",
                 "media/0/Download/Kernel Fsync Groß.bin", 40000, 10123)):
            st = os.lstat(j(look))
            assert st.st_ino == os.lstat(j(stored)).st_ino and st.st_uid == uid, look
            assert os.path.basename(stored) in os.listdir(os.path.dirname(j(stored)))
            with open(j(look), "rb") as f:
                assert f.read() == bytes((i * 7 + n) % 251 for i in range(n)), look
        assert A.quota_usage(m.path) == A.usage_model(m.path, lambda rel: 0)
    fsutil.fsck_check(image)


KERNEL_EDQUOT = (
    "import errno, os, sys\n"
    "mnt = sys.argv[1]\n"
    "d = os.path.join(mnt, 'owners', 'shell-dir')\n"
    "os.setgroups([]); os.setresgid(2000, 2000, 2000); os.setresuid(2000, 2000, 2000)\n"
    "fd = os.open(os.path.join(d, 'big'), os.O_WRONLY | os.O_CREAT, 0o644)\n"
    "try:\n"
    "    for i in range(64):\n"
    "        os.write(fd, bytes(16384)); os.fsync(fd)\n"
    "    print('no-error')\n"
    "except OSError as e:\n"
    "    print(errno.errorcode[e.errno])\n"
    "n = 0\n"
    "try:\n"
    "    while n < 50:\n"
    "        os.close(os.open(os.path.join(d, 'f%d' % n), os.O_WRONLY | os.O_CREAT)); n += 1\n"
    "    print(n, 'no-error')\n"
    "except OSError as e:\n"
    "    print(n, errno.errorcode[e.errno])\n"
)


def test_android_fuse_limits_kernel_enforces(guest, f2fs_fuse, fixtures_dir, tmp_path):
    """Limits set through f2fs-fusectl quota on the fixture (user 2000: 256
    KiB of blocks, 5 inodes) are written into the quota files the kernel
    loads: its own writes and creates by that user stop with EDQUOT there;
    fsck.f2fs clean, f2fs-fuse reads the kernel's usage."""
    src = os.path.join(fixtures_dir, "android.img.zst")
    image = str(tmp_path / "android.img")
    fsutil.run(["zstd", "-d", "-q", "-f", src, "-o", image], check=True, timeout=300)
    key = os.path.join(fixtures_dir, "android.key")
    opts = A.RW_OPTS + ("key_file=" + key,)
    with fsutil.mounted(f2fs_fuse, image, tmp_path / "mnt", opts) as m:
        d = os.path.join(m.path, "owners", "shell-dir")
        os.mkdir(d)
        os.chown(d, 2000, 2000)
        r = subprocess.run([A.FUSECTL, "quota", "-u", "--set", "2000", "0", "256", "0", "5",
                            m.path], capture_output=True, text=True, timeout=60)
        assert r.returncode == 0, r.stdout + r.stderr
        assert A.quota_report(m.path, "user")[2000][1:] == (2, 0, 256, 0, 5)
    fsutil.fsck_check(image)
    r = G.kernel_run(image, "python3 /ktest/run/edquot.py $MNT >$KTEST_OUT/edquot.txt",
                     opts=KOPTS, files={"edquot.py": KERNEL_EDQUOT}, check=False)
    assert_guest_ok(r, "the kernel enforces f2fs-fuse's limits")
    # user 2000 has owners/shell and shell-dir: 3 more inodes (big, f0, f1)
    assert r.text("edquot.txt").split() == ["EDQUOT", "2", "EDQUOT"], r.text("edquot.txt")
    fsutil.fsck_check(image)
    with fsutil.mounted(f2fs_fuse, image, tmp_path / "mnt2", opts) as m:
        rep = A.quota_report(m.path, "user")[2000]
        assert rep[1] == 5 and 200 <= rep[0] <= 256, rep
        assert A.quota_usage(m.path) == A.usage_model(m.path, lambda rel: 0)
