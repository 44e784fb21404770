"""Compatibility with the Linux kernel's f2fs driver, both directions, with
the distribution kernel booted under qemu (see run_guest.py, setup.sh).

kernel -> f2fs-fuse (test_kernel_written_*): mkfs.f2fs, the kernel writes a
    tree (every file type and layout it can make: inline and multi-block
    files, sparse and fallocated files, big and holey directories, odd
    names, symlinks of every length class, hard links, devices, fifos,
    sockets, modes, owners, mtimes from negative to 2100, xattrs in all
    namespaces, POSIX ACLs, compressed files), unmounts, mounts again and
    takes its manifest; then fsck.f2fs must find the image clean and
    f2fs-fuse must show exactly the kernel's manifest, directory sizes
    included (both read the same on-disk i_size).

writer -> kernel -> f2fs-fuse (test_writer_image_*): the template the
    write-path tests follow.  An image written by a producer (for now
    mkfs.f2fs + sload.f2fs; the write path will put f2fs-fuse in its place)
    is checked with fsck.f2fs, read by f2fs-fuse, then mounted by the
    kernel, whose manifest must equal f2fs-fuse's and the producer's
    expected manifest, with a clean kernel log; the kernel then writes more
    (appends, overwrites, truncates, renames, links, removals, xattr and
    attribute changes), and the image goes back to fsck.f2fs and f2fs-fuse,
    which must show the kernel's new manifest.

Files larger than 64 MiB (the 8 GiB sparse file) are not hashed in the
guest; their data extents and samples of their holes are compared by range
digests instead.  Skips only when qemu, a kernel or busybox cannot be had.
"""

import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(REPO, "tests", "integration"))
sys.path.insert(0, HERE)

import fsutil  # noqa: E402
import manifest as M  # noqa: E402
import run_guest as G  # noqa: E402
import treegen  # noqa: E402

MiB = 1 << 20
EXTRA = "extra_attr,inode_checksum,flexible_inline_xattr,inode_crtime,sb_checksum"

# name: (image size, mkfs -O features, mount options, guest command that fills the tree)
KERNEL_CONFIGS = {
    "default": (512 * MiB, None, "", "populate $MNT --seed 11"),
    "extra-features": (512 * MiB, EXTRA, "", "populate $MNT --seed 12"),
    "compression": (512 * MiB, EXTRA + ",compression", "", "populate-compressed $MNT --seed 13"),
    # other layouts the kernel makes on request: no inline data or dentries,
    # a smaller inline xattr area, two logs, LFS allocation
    "mount-options": (512 * MiB, EXTRA,
                      "noinline_data,noinline_dentry,inline_xattr_size=60,active_logs=2,mode=lfs",
                      "populate $MNT --seed 14"),
}

# name: (producer, image size, mkfs -O features, treegen profile or populate seed)
WRITER_CONFIGS = {
    "sload-default": ("sload", 256 * MiB, None, "full"),
    "sload-extra-features": ("sload", 256 * MiB, EXTRA, "full-extra"),
    "f2fs-fuse-default": ("f2fs-fuse", 512 * MiB, None, 41),
    "f2fs-fuse-extra-features": ("f2fs-fuse", 512 * MiB, EXTRA, 42),
}


# ---------------------------------------------------------------- fixtures

@pytest.fixture(scope="session")
def guest():
    try:
        return G.guest_info()
    except G.GuestUnavailable as e:
        print("\nkernel tests skipped: %s" % e)
        pytest.skip("no guest: %s" % e)


@pytest.fixture(scope="session")
def f2fs_fuse():
    path = os.environ.get("F2FS_FUSE") or os.path.join(REPO, "build", "f2fs-fuse")
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        pytest.fail("f2fs-fuse binary not found at %s (run make, or set F2FS_FUSE)" % path)
    if not os.path.exists("/dev/fuse"):
        pytest.fail("/dev/fuse is missing: load the fuse module (modprobe fuse)")
    return path


# ---------------------------------------------------------------- helpers

def mkfs(image, size, features=None):
    image = str(image)
    if os.path.exists(image):
        os.unlink(image)
    with open(image, "wb") as f:
        f.truncate(size)
    cmd = ["mkfs.f2fs", "-f"]
    if features:
        cmd += ["-O", features]
    fsutil.run(cmd + [image], check=True)
    return image


def assert_guest_ok(r, what):
    if not r.ok:
        raise AssertionError("%s failed in the guest\n%s" % (what, r.summary()))
    bad = G.dmesg_f2fs_errors(r.dmesg)
    assert r.dmesg, "no kernel log came back from the guest\n" + r.summary()
    assert not bad, "%s: the kernel log shows problems:\n  %s" % (what, "\n  ".join(bad))


def kernel_manifest(r, name):
    assert name in r.files, "guest left no %s\n%s" % (name, r.summary())
    m = M.parse_text(r.text(name), name)
    assert len(m) > 0
    return m, r.text(name + ".ranges") if name + ".ranges" in r.files else ""


# Files larger than this are not hashed whole on the host either (the guest
# does not, see guest/ktest_guest.py): their range digests are compared.
HASH_LIMIT = 64 * MiB


def walk(root):
    """manifest.walk of `root`, with `*` as content of files over HASH_LIMIT."""
    def want(ptxt):
        path = root if ptxt == "." else os.path.join(os.fsencode(root), M.unescape(ptxt))
        return os.lstat(path).st_size <= HASH_LIMIT
    return M.walk(str(root), content_filter=want)


def fuse_view(f2fs_fuse, image, mnt, ranges="", options=("ro",)):
    """Mount `image` read-only with f2fs-fuse; (manifest, range differences)."""
    with fsutil.mounted(f2fs_fuse, image, mnt, options) as m:
        w = walk(m.path)
        assert w.errors == [], "f2fs-fuse could not list: %s" % w.errors[:10]
        rdiffs = G.range_mismatches(ranges, m.path)
    return w.manifest, rdiffs


def assert_same(expected, actual, what, **kw):
    """No differences between two manifests; a `*` on either side matches
    (guest manifests have `*` for content too large to hash there)."""
    exp = M.Manifest({p: dict(e) for p, e in expected.entries.items()}, expected.partial)
    act = actual.entries if isinstance(actual, M.Manifest) else actual
    for p, e in exp.entries.items():
        for f in M.FIELDS:
            if p in act and act[p][f] == M.WILDCARD:
                e[f] = M.WILDCARD
    diffs = M.compare(exp, actual, **kw)
    assert not diffs, "%s: %s" % (what, M.report(diffs))


GUEST_FILL = """set -e
. lib/ktest.sh
kmount "{opts}"
python3 -m ktest_guest {fill}
python3 -m ktest_guest fsinfo $MNT
kumount
kmount "{opts}"
kmanifest kernel.tsv
python3 -m ktest_guest compressed $MNT >$KTEST_OUT/compressed.txt
kumount
"""

# ---------------------------------------------------------------- kernel -> f2fs-fuse

@pytest.mark.parametrize("config", sorted(KERNEL_CONFIGS))
def test_kernel_written_tree_read_by_f2fs_fuse(guest, f2fs_fuse, tmp_path, config):
    size, features, opts, fill = KERNEL_CONFIGS[config]
    image = mkfs(tmp_path / (config + ".img"), size, features)

    r = G.run(GUEST_FILL.format(opts=opts, fill=fill), [image])
    assert_guest_ok(r, "filling the image through the kernel")
    kman, ranges = kernel_manifest(r, "kernel.tsv")
    assert len(kman) > 40, "the kernel's tree is too small: %d entries" % len(kman)

    compressed = r.text("compressed.txt").split("\n") if "compressed.txt" in r.files else []
    compressed = [M.canonical(p) for p in compressed if p]
    if "compression" in config:
        assert len(compressed) >= 40, "the kernel compressed too few files: %s" % compressed

    fsutil.fsck_check(image)
    fman, rdiffs = fuse_view(f2fs_fuse, image, tmp_path / "mnt", ranges)
    # compressed files included: every algorithm's clusters decompress to the
    # kernel's bytes
    assert_same(kman, fman, "f2fs-fuse vs the kernel on a kernel-written image")
    assert not rdiffs, "large sparse files differ:\n  " + "\n  ".join(rdiffs)
    unread = [p for p in compressed if fman[p]["content"].startswith("ERR:")]
    assert not unread, "compressed files not read:\n  " + "\n  ".join(unread)


# ---------------------------------------------------------------- writer -> kernel -> f2fs-fuse

def produce_image(tmp_path, name, size, features, profile):
    """Stand-in producer: mkfs.f2fs + sload.f2fs of a generated tree (sload
    1.15's limits are described in treegen.py).  Returns the image and the
    manifest the tree promises."""
    src = tmp_path / "src"
    treegen.generate(src, seed=20240601, profile=profile)
    w = M.walk(str(src))
    assert w.errors == []
    image = fsutil.make_image(tmp_path / (name + ".img"), src, size, features)
    return image, treegen.expected_manifest(w)


def produce_image_f2fs_fuse(f2fs_fuse, tmp_path, name, size, features, seed):
    """The write path as producer: mkfs.f2fs, mount read-write with
    f2fs-fuse, write the reference tree (guest/ktest_guest.py's populate,
    plain python that writes through any mount) and a round of changes on
    it, take the manifest the mount shows, unmount.  The same steps on a
    local folder give an independent account of what was written: every
    field but mtime must agree with it (`more` stamps some times with the
    clock), directory sizes aside.  Returns (image, the mount's manifest,
    the local folder)."""
    sys.path.insert(0, os.path.join(HERE, "guest"))
    import ktest_guest
    src = tmp_path / "src"
    os.mkdir(src)
    ktest_guest.populate(str(src), seed=seed)
    ktest_guest.more(str(src), seed=seed + 1000)
    local = walk(src)
    assert local.errors == []
    image = mkfs(tmp_path / (name + ".img"), size, features)
    with fsutil.mounted(f2fs_fuse, image, tmp_path / "mnt-rw", ("rw",)) as m:
        ktest_guest.populate(m.path, seed=seed)
        ktest_guest.more(m.path, seed=seed + 1000)
        w = walk(m.path)
        assert w.errors == [], "f2fs-fuse could not list its own tree: %s" % w.errors[:10]
    expect = local.manifest
    for f in M.FIELDS:
        expect.entries["."][f] = M.WILDCARD
    assert_same(expect, w.manifest, "f2fs-fuse's tree vs the same steps on a local folder",
                ignore_dir_size=True, ignore=("mtime",))
    return image, w.manifest, str(src)


GUEST_ROUNDTRIP = """set -e
. lib/ktest.sh
kmount
kmanifest before.tsv
python3 -m ktest_guest more $MNT --seed 21 >$KTEST_OUT/more.log
kumount
kmount
kmanifest after.tsv
kumount
"""


@pytest.mark.parametrize("config", sorted(WRITER_CONFIGS))
def test_writer_image_kernel_roundtrip(guest, f2fs_fuse, tmp_path, config):
    """An image written by f2fs-fuse (or, as a reference, by sload.f2fs)
    mounted by the kernel, written by the kernel, read back by f2fs-fuse."""
    producer, size, features, arg = WRITER_CONFIGS[config]
    local = None
    if producer == "sload":
        image, promised = produce_image(tmp_path, config, size, features, arg)
    else:
        image, promised, local = produce_image_f2fs_fuse(f2fs_fuse, tmp_path, config, size,
                                                         features, arg)

    # 1. the producer's image is clean and f2fs-fuse reads back what it promised
    fsutil.fsck_check(image)
    fman1, _ = fuse_view(f2fs_fuse, image, tmp_path / "mnt1")
    assert_same(promised, fman1, "f2fs-fuse vs the producer's manifest")

    # 2. the kernel mounts it and sees the same; then writes more
    r = G.run(GUEST_ROUNDTRIP, [image])
    assert_guest_ok(r, "kernel mount, manifest and writes")
    before, before_ranges = kernel_manifest(r, "before.tsv")
    assert_same(promised, before, "the kernel vs the producer's manifest")
    assert_same(before, fman1, "f2fs-fuse vs the kernel on the producer's image")
    if local:
        rdiffs = G.range_mismatches(before_ranges, local)
        assert not rdiffs, "large sparse files differ from the source:\n  " + "\n  ".join(rdiffs)

    # 3. back to the host: fsck, and f2fs-fuse reads what the kernel wrote
    fsutil.fsck_check(image)
    after, ranges = kernel_manifest(r, "after.tsv")
    assert after.entries != before.entries, "the kernel's writes changed nothing"
    # (`more` leaves files too large to hash alone: the ranges taken before
    # its changes still hold)
    fman2, rdiffs = fuse_view(f2fs_fuse, image, tmp_path / "mnt2", ranges + before_ranges)
    assert_same(after, fman2, "f2fs-fuse vs the kernel after the kernel's writes")
    assert not rdiffs, "large sparse files differ:\n  " + "\n  ".join(rdiffs)


# ---------------------------------------------------------------- kernel crash -> f2fs-fuse

GUEST_CRASH = """set -e
. lib/ktest.sh
kmount
python3 -m ktest_guest fsync-round $MNT --seed 31 >$KTEST_OUT/guaranteed.tsv
kcrash
"""

GUEST_RECOVER = """set -e
. lib/ktest.sh
kmount ro,norecovery "$KTEST_DISK0"
kmanifest checkpoint.tsv
kumount
kmount "" "$KTEST_DISK1"
kmanifest recovered.tsv
kumount
"""


def copy_image(src, dst):
    fsutil.run(["cp", "--sparse=always", str(src), str(dst)], check=True)
    return str(dst)


def test_kernel_crash_image_recovery(guest, f2fs_fuse, tmp_path):
    """fsync()ed changes after the last checkpoint, then a power cut in the
    guest.  Read-only, f2fs-fuse must show the last checkpoint exactly as the
    kernel does with norecovery; the kernel's roll-forward recovery and
    f2fs-fuse's (on a read-write mount) must both bring back what fsync
    promised and agree with each other; each recovered image must be clean
    for fsck.f2fs and read the same by the other driver."""
    image, _ = produce_image(tmp_path, "crash", 256 * MiB, EXTRA, "full-extra")

    r = G.run(GUEST_CRASH, [image])
    assert_guest_ok(r, "fsync round and power cut")
    assert "KTEST-CRASH" in r.console
    guaranteed = M.parse_text(r.text("guaranteed.tsv"), "guaranteed.tsv")
    assert guaranteed.partial and len(guaranteed) >= 15
    by_kernel = copy_image(image, tmp_path / "kernel-recovers.img")
    by_fuse = copy_image(image, tmp_path / "fuse-recovers.img")

    # read-only: the checkpointed state, the same as the kernel's norecovery view
    fman_ro, _ = fuse_view(f2fs_fuse, image, tmp_path / "mnt-ro")
    assert M.compare(guaranteed, fman_ro), "nothing was left for roll-forward recovery"
    r2 = G.run(GUEST_RECOVER, [image, by_kernel])
    assert_guest_ok(r2, "kernel norecovery and recovery mounts")
    at_cp, _ = kernel_manifest(r2, "checkpoint.tsv")
    assert_same(at_cp, fman_ro, "f2fs-fuse read-only vs the kernel's norecovery view")

    # the kernel's recovery, read back by f2fs-fuse
    recovered, ranges = kernel_manifest(r2, "recovered.tsv")
    assert_same(guaranteed, recovered, "the kernel's recovery vs what fsync promised")
    fsutil.fsck_check(by_kernel)
    fman, rdiffs = fuse_view(f2fs_fuse, by_kernel, tmp_path / "mnt-k", ranges)
    assert_same(recovered, fman, "f2fs-fuse vs the kernel after the kernel's recovery")
    assert not rdiffs, "large files differ:\n  " + "\n  ".join(rdiffs)

    # f2fs-fuse's recovery on a read-write mount, read back by the kernel
    with fsutil.mounted(f2fs_fuse, by_fuse, tmp_path / "mnt-rw", ("rw",)) as m:
        w = walk(m.path)
        assert w.errors == []
    fuse_recovered = w.manifest
    assert_same(guaranteed, fuse_recovered, "f2fs-fuse's recovery vs what fsync promised")
    # both replayed the same log: only times stamped by recovery may differ
    assert_same(recovered, fuse_recovered, "f2fs-fuse's recovery vs the kernel's",
                ignore=("mtime",))
    fsutil.fsck_check(by_fuse)
    text, r3 = G.kernel_mount_and_manifest(by_fuse)
    assert_guest_ok(r3, "kernel mount of the image f2fs-fuse recovered")
    assert_same(M.parse_text(text), fuse_recovered,
                "the kernel vs f2fs-fuse on the image f2fs-fuse recovered")


# ---------------------------------------------------------------- f2fs-fuse crash -> kernel

def test_group_fsync_crash_kernel_recovery(guest, f2fs_fuse, tmp_path):
    """Eight threads write and fsync their own files through f2fs-fuse at
    once (group commits: several inodes' nodes in one write, only each
    inode's last node with the fsync mark), then the daemon is killed.  The
    kernel's roll-forward recovery and f2fs-fuse's must both bring back
    every file as its last fsync left it; each recovered image must be
    clean and read the same by the other driver."""
    import random
    import threading

    from test_write import expect, sha

    image = mkfs(tmp_path / "group.img", 512 * MiB, EXTRA)
    with fsutil.mounted(f2fs_fuse, image, tmp_path / "mnt0", ("rw",)) as m:
        os.mkdir(os.path.join(m.path, "d"))
        for i in range(0, 8, 2):                 # half the files in the checkpoint
            with open(os.path.join(m.path, "d", "f%d" % i), "wb") as f:
                f.write(b"checkpointed")
    final = {}
    m = fsutil.Mount(f2fs_fuse, image, tmp_path / "mnt1", ["rw", "checkpoint_interval=3600"])
    m.start()
    try:
        def writer(i):
            rng = random.Random(i)
            data = bytearray()
            with open(os.path.join(m.path, "d", "f%d" % i), "r+b" if i % 2 == 0 else "w+b") as f:
                f.truncate(0)
                for k in range(40):
                    off = rng.choice([len(data), rng.randrange(len(data) + 1)])
                    b = rng.randbytes(rng.choice([4096, 100000, 1 << 20]))
                    f.seek(off)
                    f.write(b)
                    f.flush()
                    data[off:off + len(b)] = b
                    (os.fdatasync if k % 3 == 0 else os.fsync)(f.fileno())
            final["d/f%d" % i] = bytes(data)
        ts = [threading.Thread(target=writer, args=(i,)) for i in range(8)]
        for t in ts:
            t.start()
        for t in ts:
            t.join(timeout=300)
            assert not t.is_alive()
        assert len(final) == 8
    finally:
        m._kill()                                # no checkpoint after the fsyncs
    promised = expect({p: {"type": "f", "content": sha(b), "size": str(len(b))}
                       for p, b in final.items()})
    by_kernel = copy_image(image, tmp_path / "kernel-recovers.img")
    by_fuse = copy_image(image, tmp_path / "fuse-recovers.img")

    # the kernel's recovery, read back by f2fs-fuse
    text, r = G.kernel_mount_and_manifest(by_kernel)
    assert_guest_ok(r, "kernel recovery of f2fs-fuse's group fsyncs")
    recovered = M.parse_text(text)
    assert_same(promised, recovered, "the kernel's recovery vs what fsync promised")
    fsutil.fsck_check(by_kernel)
    fman, _ = fuse_view(f2fs_fuse, by_kernel, tmp_path / "mnt-k")
    assert_same(recovered, fman, "f2fs-fuse vs the kernel after the kernel's recovery")

    # f2fs-fuse's recovery, read back by the kernel
    with fsutil.mounted(f2fs_fuse, by_fuse, tmp_path / "mnt-rw", ("rw",)) as m2:
        w = walk(m2.path)
        assert w.errors == []
    assert_same(promised, w.manifest, "f2fs-fuse's recovery vs what fsync promised")
    assert_same(recovered, w.manifest, "f2fs-fuse's recovery vs the kernel's", ignore=("mtime",))
    fsutil.fsck_check(by_fuse)
    text, r3 = G.kernel_mount_and_manifest(by_fuse)
    assert_guest_ok(r3, "kernel mount of the image f2fs-fuse recovered")
    assert_same(M.parse_text(text), w.manifest,
                "the kernel vs f2fs-fuse on the image f2fs-fuse recovered")


# ---------------------------------------------------------------- nearly full images

GUEST_CHURN = """set -e
. lib/ktest.sh
kmount
kmanifest before.tsv
python3 -m ktest_guest churn $MNT --seed 71 --mib 24 >$KTEST_OUT/churn.log
kumount
kmount
kmanifest after.tsv
kumount
"""


def ssr_logs(image):
    """Which logs the image's current checkpoint leaves in SSR mode
    (alloc_type[] of struct f2fs_checkpoint, at byte 176)."""
    sys.path.insert(0, os.path.join(REPO, "tests", "corrupt"))
    import f2fsimg
    with open(image, "rb") as f:
        img = f2fsimg.Image(f.read())
    return [t for t in range(6) if img.buf[img.cp_off + 176 + t] == 1]


def io_stat(stderr, name):
    import re
    m = re.search(r"(\d+) " + name, stderr)
    assert m, stderr
    return int(m.group(1))


def test_nearly_full_image_kernel_roundtrip(guest, f2fs_fuse, tmp_path):
    """An image f2fs-fuse filled to 95% and churned (its data logs in SSR,
    cleaning having moved blocks) is mounted by the kernel, which must see
    the same tree with a clean log and go on writing from the checkpoint's
    SSR logs and half-used segments; then f2fs-fuse reads the kernel's
    result, churns it further from the kernel's logs, and the kernel reads
    that back.  fsck.f2fs between every step."""
    sys.path.insert(0, os.path.join(HERE, "guest"))
    import ktest_guest
    image = mkfs(tmp_path / "full.img", 128 * MiB)
    # written through: the page cache would merge the churn's overwrites,
    # and the logs may leave SSR before the unmount's checkpoint, which is
    # the state the kernel is to continue from (the second churn below
    # goes through the page cache)
    with fsutil.mounted(f2fs_fuse, image, tmp_path / "mnt1",
                        ("rw", "io_stats", "nowriteback")) as m:
        ktest_guest.fill_and_churn(m.path, seed=70, churn_mib=200)
        w = walk(m.path)
        assert w.errors == []
    stderr = m.stderr()
    assert io_stat(stderr, "segments reused") > 0, stderr
    assert io_stat(stderr, "data and") > 0, stderr
    # cleaning can free enough segments before the unmount's checkpoint for
    # every log to be back in LFS (it depends on how the churn's blocks were
    # laid out): short churns on a nearly full image end with one in SSR
    for r in range(8):
        if ssr_logs(image):
            break
        with fsutil.mounted(f2fs_fuse, image, tmp_path / "mnt1",
                            ("rw", "nowriteback")) as m:
            ktest_guest.fill_and_churn(m.path, seed=100 + r, churn_mib=16, fill=0)
            w = walk(m.path)
            assert w.errors == []
    assert ssr_logs(image), "the last checkpoint has no log in SSR mode"
    fsutil.fsck_check(image)
    mine = w.manifest

    r = G.run(GUEST_CHURN, [image])
    assert_guest_ok(r, "kernel mount and churn of a nearly full image")
    before, _ = kernel_manifest(r, "before.tsv")
    assert_same(mine, before, "the kernel vs f2fs-fuse on the nearly full image")
    after, _ = kernel_manifest(r, "after.tsv")
    assert after.entries != before.entries
    fsutil.fsck_check(image)
    fman, _ = fuse_view(f2fs_fuse, image, tmp_path / "mnt2")
    assert_same(after, fman, "f2fs-fuse vs the kernel after the kernel's churn")

    with fsutil.mounted(f2fs_fuse, image, tmp_path / "mnt3", ("rw",)) as m:
        ktest_guest.fill_and_churn(m.path, seed=72, churn_mib=64, fill=0)
        w = walk(m.path)
        assert w.errors == []
    fsutil.fsck_check(image)
    text, r2 = G.kernel_mount_and_manifest(image)
    assert_guest_ok(r2, "kernel mount after f2fs-fuse churned the kernel's image")
    assert_same(M.parse_text(text), w.manifest, "the kernel vs f2fs-fuse after the second churn")


# ---------------------------------------------------------------- inode flags

IMMUTABLE, APPEND, NODUMP, NOATIME, SYNC = 0x10, 0x20, 0x40, 0x80, 0x8
SHOWN_FLAGS = IMMUTABLE | APPEND | NODUMP | NOATIME | SYNC
FLAG_FILES = {"i": IMMUTABLE, "a": APPEND, "d": NODUMP | NOATIME, "s": SYNC, "k": 0}

GUEST_FLAGS = """set -e
. lib/ktest.sh
kmount
cd $MNT/fl
python3 -m ktest_guest flags i a d s k >$KTEST_OUT/flags.txt
python3 -m ktest_guest try-writes i a k >$KTEST_OUT/writes.txt
python3 -m ktest_guest chattr k +10
python3 -m ktest_guest chattr i -10
cd /
kumount
"""


def parse_flags(text):
    return {n: int(v, 16) & SHOWN_FLAGS for n, v in (ln.split("\t") for ln in text.splitlines())}


def test_inode_flags_both_ways(guest, f2fs_fuse, tmp_path):
    """chattr flags set through f2fs-fuse (immutable, append-only, nodump,
    noatime, sync) are what the kernel reads and enforces; flags the kernel
    sets and clears are what f2fs-fuse then reads and enforces."""
    sys.path.insert(0, os.path.join(HERE, "guest"))
    import ktest_guest as K
    image = mkfs(tmp_path / "flags.img", 128 * MiB)
    with fsutil.mounted(f2fs_fuse, image, tmp_path / "mnt1", ("rw",)) as m:
        top = os.path.join(m.path, "fl")
        os.mkdir(top)
        for name, bits in FLAG_FILES.items():
            K.write_file(os.path.join(top, name), b"base\n")
            if bits:
                K.set_flags(os.path.join(top, name), bits)
        mine = {n: K.get_flags(os.path.join(top, n)) & SHOWN_FLAGS for n in FLAG_FILES}
        assert mine == FLAG_FILES
        assert K.try_writes(os.path.join(top, "i")) == ["write EPERM", "append EPERM"]
    fsutil.fsck_check(image)

    r = G.run(GUEST_FLAGS, [image])
    assert_guest_ok(r, "kernel reads and changes inode flags")
    assert parse_flags(r.text("flags.txt")) == FLAG_FILES
    writes = dict(ln.split("\t") for ln in r.text("writes.txt").splitlines())
    assert writes == {"i": "write EPERM, append EPERM", "a": "write EPERM, append ok",
                      "k": "write ok, append ok"}, writes
    fsutil.fsck_check(image)

    with fsutil.mounted(f2fs_fuse, image, tmp_path / "mnt2", ("rw",)) as m:
        top = os.path.join(m.path, "fl")
        got = {n: K.get_flags(os.path.join(top, n)) & SHOWN_FLAGS for n in FLAG_FILES}
        assert got == dict(FLAG_FILES, i=0, k=IMMUTABLE)
        assert K.try_writes(os.path.join(top, "k")) == ["write EPERM", "append EPERM"]
        assert K.try_writes(os.path.join(top, "i")) == ["write ok", "append ok"]
        with open(os.path.join(top, "a"), "rb") as f:
            assert f.read() == b"base\n+"      # the kernel's append
    fsutil.fsck_check(image)


# ---------------------------------------------------------------- the harness itself

def test_dmesg_filter():
    clean = """[    8.73] F2FS-fs (vda): Found nat_bits in checkpoint
[    8.76] F2FS-fs (vda): Mounted with checkpoint version = 441a3ab3
[    1.57] acpi PNP0A03:00: fail to add MMCONFIG information, can't access extended PCI configuration space under this bridge.
"""
    assert G.dmesg_f2fs_errors(clean) == []
    for bad in ("[ 1.0] F2FS-fs (vda): inconsistent node block, nid:5, node_footer[nid:5,ino:5,ofs:0,cpver:1,blkaddr:9]",
                "[ 1.0] F2FS-fs (vda): Magic Mismatch, valid(0xf2f52010) - read(0x0)",
                "[ 1.0] F2FS-fs (vda): Need to recover fsck",
                "[ 1.0] F2FS-fs (vda): invalid crc value",
                "[ 1.0] WARNING: CPU: 0 PID: 1 at fs/f2fs/node.c:1234 f2fs_foo+0x1/0x2",
                "[ 1.0] Call Trace:",
                "[ 1.0] F2FS-fs (vda): sanity_check_inode: inode (ino=4) has corrupted i_extra_isize"):
        assert G.dmesg_f2fs_errors(clean + bad + "\n") == [bad], bad


def test_guest_reports_failure(guest):
    r = G.run("echo out; echo err >&2; exit 3")
    assert r.rc == 3 and not r.ok
    assert r.stdout == "out\n" and "err" in r.stderr
    assert "Linux version" in r.dmesg
