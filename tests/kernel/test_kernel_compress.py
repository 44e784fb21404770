"""Compressed files both ways with the kernel (see test_kernel.py for the
guest).  f2fs-fuse writes compressed files with each algorithm, several
cluster sizes, with and without compress_chksum, with holes, rewrites,
truncations into compressed clusters and a released file; fsck.f2fs must
find the image clean, and the kernel must read the same bytes and report the
same F2FS_IOC_GET_COMPRESS_BLOCKS counts.  The kernel then writes its own
compressed files (and releases one, and takes back what f2fs-fuse released),
and f2fs-fuse must read them and report the kernel's counts.  Each test runs
with f2fs-fuse writing at write(2) and through its page cache (-o writeback:
whole dirty clusters compressed at writeback)."""

import fcntl
import os
import random
import struct
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "guest"))

import ktest_guest  # noqa: E402

from test_kernel import (EXTRA, MiB, G, M, assert_guest_ok, assert_same, fsutil,  # noqa: E402
                         fuse_view, guest, kernel_manifest, mkfs, f2fs_fuse)  # noqa: F401

FS_COMPR_FL = 0x4
FS_IOC_SETFLAGS = 0x40086602
F2FS_IOC_GET_COMPRESS_BLOCKS = 0x8008f511
F2FS_IOC_RELEASE_COMPRESS_BLOCKS = 0x8008f512

# (mount options, directory name): each directory takes the options its
# files were created under (set_compress_context uses the mount's)
CONFIGS = [
    ("compress_algorithm=lz4,compress_log_size=2", "lz4-2"),
    ("compress_algorithm=lz4:9,compress_log_size=3,compress_chksum", "lz4hc-3-chksum"),
    ("compress_algorithm=zstd,compress_log_size=4,compress_chksum", "zstd-4-chksum"),
    ("compress_algorithm=zstd:9,compress_log_size=2", "zstd9-2"),
    ("compress_algorithm=lzo,compress_log_size=3", "lzo-3"),
    ("compress_algorithm=lzo-rle,compress_log_size=2,compress_chksum", "lzorle-2-chksum"),
    ("compress_algorithm=lz4,compress_log_size=8,compress_extension=txt", "lz4-8"),
]


def text(rng, n):
    out = bytearray()
    while len(out) < n:
        if rng.random() < 0.01:
            out += rng.randbytes(rng.randrange(1, 500))
        else:
            out += b"cluster %d of compressed text, line %d\n" % (rng.randrange(50), len(out))
    return bytes(out[:n])


ioctl_u64 = ktest_guest.compress_ioctl

# f2fs-fuse's write paths: at write(2), and through the page cache
WRITE_MODES = pytest.mark.parametrize("wmode", [("nowriteback",), ("writeback",)],
                                      ids=["direct", "writeback"])


def fsync_path(path):
    """Write the file's dirty pages back (i_compr_blocks counts what is written)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def pwrite(path, off, data, create=False):
    fd = os.open(path, os.O_WRONLY | (os.O_CREAT if create else 0), 0o644)
    try:
        assert os.pwrite(fd, data, off) == len(data)
    finally:
        os.close(fd)


def fill_dir(d, log, rng):
    """The files of one configuration: sizes around the cluster, holes,
    rewrites, truncations; returns the path of the one to release."""
    cb = 4096 << log
    os.mkdir(d)
    fd = os.open(d, os.O_RDONLY)
    try:
        fcntl.ioctl(fd, FS_IOC_SETFLAGS, struct.pack("<i", FS_COMPR_FL))
    finally:
        os.close(fd)
    for size in (0, 100, 4096, cb - 1, cb, cb + 1, 5 * cb + 777, MiB + 5):
        pwrite(os.path.join(d, "s%d" % size), 0, text(rng, size), create=True)
    pwrite(os.path.join(d, "random"), 0, rng.randbytes(3 * cb + 10), create=True)
    # holes: whole clusters and parts of one
    pwrite(os.path.join(d, "sparse"), 7 * cb + 100, text(rng, 2 * cb), create=True)
    pwrite(os.path.join(d, "sparse"), 2 * cb - 10, text(rng, 20))
    # a rewritten file: patches inside compressed clusters, across clusters
    p = os.path.join(d, "rewritten")
    pwrite(p, 0, text(rng, 6 * cb), create=True)
    pwrite(p, cb // 2, rng.randbytes(100))
    pwrite(p, 2 * cb - 50, text(rng, cb + 100))
    pwrite(p, 5 * cb, b"\0" * cb)
    # truncations: into a compressed cluster, up again, to a cluster edge
    p = os.path.join(d, "truncated")
    pwrite(p, 0, text(rng, 8 * cb), create=True)
    os.truncate(p, 5 * cb + cb // 2 + 3)
    os.truncate(p, 7 * cb)
    os.truncate(p, 3 * cb)
    pwrite(p, 3 * cb + 5, text(rng, 10))
    p = os.path.join(d, "released")
    pwrite(p, 0, text(rng, 4 * cb + 33), create=True)
    pwrite(os.path.join(d, "to-release-by-kernel"), 0, text(rng, 4 * cb), create=True)
    return os.path.join(d, "released")


def cblocks_of(root, paths):
    out = {}
    for p in paths:
        out[p] = ioctl_u64(os.path.join(os.fsencode(root), M.unescape(p)),
                           F2FS_IOC_GET_COMPRESS_BLOCKS)
    return out


def parse_cblocks(txt):
    out = {}
    for line in txt.split("\n"):
        if line:
            p, n = line.rsplit("\t", 1)
            out[M.canonical(p)] = int(n)
    return out


GUEST = """set -e
. lib/ktest.sh
kmount
kmanifest before.tsv
python3 -m ktest_guest cblocks $MNT >$KTEST_OUT/cblocks-before.txt
python3 -m ktest_guest reserve {reserve} >$KTEST_OUT/reserved.txt
python3 -m ktest_guest try-writes {reserve} >$KTEST_OUT/writes.txt
python3 -m ktest_guest release {release} >$KTEST_OUT/released.txt
mkdir $MNT/kernel
python3 -m ktest_guest populate-compressed $MNT/kernel --seed 17 >$KTEST_OUT/populate.log
kumount
kmount
python3 -m ktest_guest release $MNT/kernel/compr-zstd-3/rewritten >>$KTEST_OUT/released.txt
kumount
kmount
kmanifest after.tsv
python3 -m ktest_guest cblocks $MNT >$KTEST_OUT/cblocks-after.txt
kumount
"""


@WRITE_MODES
def test_compressed_both_ways(guest, f2fs_fuse, tmp_path, wmode):
    image = mkfs(tmp_path / "compress.img", 512 * MiB, EXTRA + ",compression")
    rng = random.Random(5)
    released = []
    for opts, name in CONFIGS:
        log = int(opts.split("compress_log_size=")[1].split(",")[0])
        with fsutil.mounted(f2fs_fuse, image, tmp_path / ("mnt-" + name),
                            ("rw", opts) + wmode) as m:
            rel = fill_dir(os.path.join(m.path, name), log, rng)
            if "compress_extension" in opts:
                pwrite(os.path.join(m.path, "by-extension.txt"), 0, text(rng, MiB), create=True)
            fsync_path(rel)
            assert ioctl_u64(rel, F2FS_IOC_GET_COMPRESS_BLOCKS) > 0
            assert ioctl_u64(rel, F2FS_IOC_RELEASE_COMPRESS_BLOCKS) > 0
            released.append(os.path.relpath(rel, m.path))
    fsutil.fsck_check(image)

    # f2fs-fuse's own view and counts
    with fsutil.mounted(f2fs_fuse, image, tmp_path / "mnt-ro", ("ro",)) as m:
        w = M.walk(m.path)
        assert w.errors == [], w.errors[:10]
        fman = w.manifest
        compressed = sorted(ktest_guest.compressed_paths(m.path))
        assert len(compressed) >= len(CONFIGS) * 12, compressed
        fcb = cblocks_of(m.path, compressed)
    assert sum(1 for n in fcb.values() if n) >= len(CONFIGS) * 6, fcb

    r = G.run(GUEST.format(reserve="$MNT/" + released[0],
                           release=" ".join("$MNT/%s/to-release-by-kernel" % n
                                            for _, n in CONFIGS)), [image])
    assert_guest_ok(r, "the kernel reading and writing f2fs-fuse's compressed files")
    before, _ = kernel_manifest(r, "before.tsv")
    assert_same(before, fman, "f2fs-fuse vs the kernel on f2fs-fuse's compressed files")
    kcb = parse_cblocks(r.text("cblocks-before.txt"))
    assert kcb == fcb, "GET_COMPRESS_BLOCKS: the kernel %s, f2fs-fuse %s" % (
        {p: n for p, n in kcb.items() if fcb.get(p) != n},
        {p: n for p, n in fcb.items() if kcb.get(p) != n})
    assert "write ok" in r.text("writes.txt"), r.text("writes.txt")
    for line in r.text("released.txt").split("\n"):
        if line:
            assert int(line.rsplit("\t", 1)[1]) > 0, r.text("released.txt")

    fsutil.fsck_check(image)
    after, _ = kernel_manifest(r, "after.tsv")
    fman2, _ = fuse_view(f2fs_fuse, image, tmp_path / "mnt-after")
    assert_same(after, fman2, "f2fs-fuse vs the kernel after the kernel's compressed writes")
    kcb2 = parse_cblocks(r.text("cblocks-after.txt"))
    with fsutil.mounted(f2fs_fuse, image, tmp_path / "mnt-after2", ("ro",)) as m:
        fcb2 = cblocks_of(m.path, sorted(kcb2))
    assert kcb2 == fcb2
    kernel_files = [p for p in kcb2 if p.startswith("kernel/")]
    assert len(kernel_files) >= 40 and sum(1 for p in kernel_files if kcb2[p]) >= 8

    # f2fs-fuse writes into the kernel's compressed files and its released one
    with fsutil.mounted(f2fs_fuse, image, tmp_path / "mnt-rw2", ("rw",) + wmode) as m:
        p = os.path.join(m.path, "kernel/compr-lz4-2/c3145733")
        pwrite(p, 4096 * 3 + 7, b"f2fs-fuse was here" * 500)
        os.truncate(os.path.join(m.path, "kernel/compr-lzo-rle-4/c9437184"), 100000)
        with pytest.raises(OSError):
            pwrite(os.path.join(m.path, "kernel/compr-zstd-3/rewritten"), 0, b"x")
        w = M.walk(m.path)
        assert w.errors == []
        rw_man = w.manifest
    fsutil.fsck_check(image)
    fman3, _ = fuse_view(f2fs_fuse, image, tmp_path / "mnt-after3")
    assert_same(rw_man, fman3, "f2fs-fuse after writing into the kernel's compressed files")


# ---------------------------------------------------------------- encrypted

KEY_V2 = bytes(range(64))
ENC_KINDS = ("v2-default", "v2-iv64", "v2-iv32", "v2-adiantum")

GUEST_ENC = """set -e
. lib/ktest.sh
kmount
python3 -m ktest_guest add-key $MNT v2.key >$KTEST_OUT/v2.id
kmanifest before.tsv
python3 -m ktest_guest cblocks $MNT >$KTEST_OUT/cblocks-before.txt
v2=$(cat $KTEST_OUT/v2.id)
mkdir $MNT/kernel-enc
python3 -m ktest_guest set-policy $MNT/kernel-enc v2-default $v2
python3 -m ktest_guest populate-compressed $MNT/kernel-enc --seed 23 >$KTEST_OUT/populate.log
kumount
kmount
python3 -m ktest_guest add-key $MNT v2.key >/dev/null
kmanifest after.tsv
python3 -m ktest_guest cblocks $MNT >$KTEST_OUT/cblocks-after.txt
kumount
"""


@WRITE_MODES
def test_encrypted_compressed_both_ways(guest, f2fs_fuse, tmp_path, wmode):
    """Compressed files in encrypted directories of four policy kinds (the
    compressed blocks encrypted as the file blocks of their slots, whatever
    the IV scheme); the kernel reads them with the key and writes its own."""
    from test_kernel_crypt import ctl, fusectl_policy_args
    fusectl_path = os.path.join(os.path.dirname(f2fs_fuse), "f2fs-fusectl")
    image = mkfs(tmp_path / "enc.img", 512 * MiB, EXTRA + ",compression,encrypt")
    key = tmp_path / "v2.key"
    key.write_bytes(KEY_V2)
    rng = random.Random(7)
    opts = ("rw", "key_file=%s" % key, "compress_algorithm=zstd", "compress_log_size=2",
            "compress_chksum") + wmode
    with fsutil.mounted(f2fs_fuse, image, tmp_path / "mnt-rw", opts) as m:
        key_id = ctl(fusectl_path, "add_key", "--key-file=%s" % key, m.path).strip()
        for kind in ENC_KINDS:
            d = os.path.join(m.path, "enc-" + kind)
            os.mkdir(d)
            ctl(fusectl_path, "set_policy", *fusectl_policy_args(kind), key_id, d)
            fill_dir(os.path.join(d, "z"), 2, rng)
        w = M.walk(m.path)
        assert w.errors == [], w.errors[:10]
        written = w.manifest
        compressed = sorted(ktest_guest.compressed_paths(m.path))
        for c in compressed:
            fsync_path(os.path.join(os.fsencode(m.path), M.unescape(c)))
        fcb = cblocks_of(m.path, compressed)
    assert sum(1 for n in fcb.values() if n) >= len(ENC_KINDS) * 6, fcb
    fsutil.fsck_check(image)

    r = G.run(GUEST_ENC, [image], files={"v2.key": KEY_V2})
    assert_guest_ok(r, "the kernel with f2fs-fuse's encrypted compressed files")
    assert r.text("v2.id").strip() == key_id
    before, _ = kernel_manifest(r, "before.tsv")
    assert_same(written, before, "the kernel vs f2fs-fuse's encrypted compressed files")
    assert parse_cblocks(r.text("cblocks-before.txt")) == fcb

    fsutil.fsck_check(image)
    after, _ = kernel_manifest(r, "after.tsv")
    kcb = parse_cblocks(r.text("cblocks-after.txt"))
    assert sum(1 for p, n in kcb.items() if p.startswith("kernel-enc/") and n) >= 8, kcb
    with fsutil.mounted(f2fs_fuse, image, tmp_path / "mnt-ro",
                        ("ro", "key_file=%s" % key)) as m:
        w = M.walk(m.path)
        assert w.errors == [], w.errors[:10]
        assert_same(after, w.manifest, "f2fs-fuse vs the kernel's encrypted compressed files")
        assert cblocks_of(m.path, sorted(kcb)) == kcb


# ---------------------------------------------------------------- power cut

GUEST_CRASH = """set -e
. lib/ktest.sh
kmount
python3 -m ktest_guest compress-fsync $MNT/z
kcrash
"""

GUEST_RECOVER = """set -e
. lib/ktest.sh
kmount
kmanifest recovered.tsv
python3 -m ktest_guest cblocks $MNT >$KTEST_OUT/cblocks.txt
kumount
"""


def test_compressed_fsync_power_cut(guest, f2fs_fuse, tmp_path):
    """The kernel fsync()s changes to compressed files and loses power.
    Its fsync of a compressed file commits a checkpoint (need_do_checkpoint's
    CP_COMPRESSED), as f2fs-fuse's does, so there is nothing to roll forward;
    what the kernel shows after its mount and what f2fs-fuse shows after a
    read-write mount must agree, with the same counts, and both images must
    be clean."""
    image = mkfs(tmp_path / "crash.img", 256 * MiB, EXTRA + ",compression")
    r = G.run(GUEST_CRASH, [image])
    assert_guest_ok(r, "compressed files fsync()ed, then a power cut")
    by_kernel = str(tmp_path / "kernel.img")
    fsutil.run(["cp", "--sparse=always", image, by_kernel], check=True)
    r = G.run(GUEST_RECOVER, [by_kernel])
    assert_guest_ok(r, "the kernel's roll-forward of compressed files")
    kman, _ = kernel_manifest(r, "recovered.tsv")
    kcb = parse_cblocks(r.text("cblocks.txt"))
    assert any(p.startswith("z/") for p in kman.entries)
    fsutil.fsck_check(by_kernel)
    with fsutil.mounted(f2fs_fuse, image, tmp_path / "mnt-rw", ("rw",)) as m:
        w = M.walk(m.path)
        assert w.errors == []
        assert cblocks_of(m.path, sorted(kcb)) == kcb
    assert_same(kman, w.manifest, "f2fs-fuse's roll-forward vs the kernel's",
                ignore=("mtime",))
    fsutil.fsck_check(image)
