"""fs-verity both ways with the kernel (see test_kernel.py for the guest).
f2fs-fuse enables verity on files of every tree depth, with SHA-256 and
SHA-512 and a salt (4 KiB Merkle blocks: the guest's 6.1 kernel has no
smaller ones), and on compressed files; the kernel must measure the
same digests, read the same bytes and show FS_VERITY_FL, with a clean log.
The kernel then enables verity on files of its own, compressed ones too;
f2fs-fuse must measure its digests and read its bytes, and a byte flipped in one of the kernel's
data blocks must read as EIO through f2fs-fuse, the rest as before."""

import hashlib
import os
import random
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "guest"))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "integration"))

import ktest_guest  # noqa: E402

from test_kernel import (EXTRA, MiB, G, assert_guest_ok, fsutil,  # noqa: E402
                         guest, mkfs, f2fs_fuse)  # noqa: F401

FS_VERITY_FL = 0x00100000
BLK = 4096
SIZES = (0, 100, 4096, 5000, 512 * 1024, 3 * MiB + 123, 65 * MiB + 7)
# (name suffix, alg, block size, salt hex); Merkle blocks smaller than the
# page need Linux 6.3, and the guest runs Debian's 6.1
PARAMS = [("", 1, 4096, ""), ("-sha512", 2, 4096, ""),
          ("-salt", 1, 4096, "00112233445566778899aabbccddeeff")]

GUEST = """set -e
. lib/ktest.sh
kmount
python3 -m ktest_guest verity-measure {fuse_files} >$KTEST_OUT/fuse-files.txt
mkdir $MNT/kernel
for s in {sizes}; do
  head -c $s /dev/urandom >$MNT/kernel/k$s
done
python3 -m ktest_guest verity-enable {kernel_plain}
python3 -m ktest_guest verity-enable --alg 2 --salt 0a0b0c {kernel_salted}
mkdir $MNT/kcomp
python3 -m ktest_guest chattr $MNT/kcomp +4
for s in 5000 100000 3145733; do
  yes "a compressible line of the kernel's verity file" | head -c $s >$MNT/kcomp/c$s
done
python3 -m ktest_guest verity-enable $MNT/kcomp/c5000 $MNT/kcomp/c100000 $MNT/kcomp/c3145733 \
  2>$KTEST_OUT/kcomp-enable.err || true
kumount
kmount
python3 -m ktest_guest verity-measure {kernel_files} >$KTEST_OUT/kernel-files.txt
python3 -m ktest_guest verity-measure $MNT/kcomp/c5000 $MNT/kcomp/c100000 $MNT/kcomp/c3145733 \
  >$KTEST_OUT/kcomp-files.txt 2>>$KTEST_OUT/kcomp-enable.err || true
python3 -m ktest_guest cblocks $MNT >$KTEST_OUT/cblocks.txt
kumount
"""


def measured(txt):
    out = {}
    for line in txt.split("\n"):
        if line:
            name, digest, content, flags = line.split("\t")
            out[name] = (digest, content, int(flags, 16))
    return out


def fuse_measure(path):
    fl = ktest_guest.get_flags(path)
    with open(path, "rb") as f:
        content = hashlib.sha256(f.read()).hexdigest()
    return ktest_guest.verity_measure(path), content, fl


def test_verity_both_ways(guest, f2fs_fuse, tmp_path):
    image = mkfs(tmp_path / "verity.img", 512 * MiB, EXTRA + ",verity,compression")
    rng = random.Random(11)
    fuse = {}
    with fsutil.mounted(f2fs_fuse, image, tmp_path / "mnt-rw", ("rw",)) as m:
        os.mkdir(os.path.join(m.path, "fuse"))
        for suffix, alg, bs, salt in PARAMS:
            for size in SIZES:
                if suffix and size > 4 * MiB:
                    continue
                name = "f%d%s" % (size, suffix)
                p = os.path.join(m.path, "fuse", name)
                with open(p, "wb") as f:
                    f.write(rng.randbytes(size))
                ktest_guest.verity_enable(p, alg, bs, bytes.fromhex(salt))
                fuse["fuse/" + name] = fuse_measure(p)
                assert fuse["fuse/" + name][2] & FS_VERITY_FL
        # compressed files: the tree goes through their clusters
        os.mkdir(os.path.join(m.path, "fcomp"))
        ktest_guest.set_flags(os.path.join(m.path, "fcomp"), 0x4)
        for size in (5000, 200000, 3 * MiB + 9):
            p = os.path.join(m.path, "fcomp", "c%d" % size)
            with open(p, "wb") as f:
                f.write(((b"compressible %d\n" % size) * size)[:size])
            ktest_guest.verity_enable(p)
            fuse["fcomp/c%d" % size] = fuse_measure(p)
    fsutil.fsck_check(image)

    kernel_sizes = (0, 100, 5000, 3 * MiB + 5, 70 * MiB)
    salted = [3 * MiB + 5]
    r = G.run(GUEST.format(
        fuse_files=" ".join("$MNT/" + n for n in sorted(fuse)),
        sizes=" ".join(str(s) for s in kernel_sizes),
        kernel_plain=" ".join("$MNT/kernel/k%d" % s for s in kernel_sizes if s not in salted),
        kernel_salted=" ".join("$MNT/kernel/k%d" % s for s in salted),
        kernel_files=" ".join("$MNT/kernel/k%d" % s for s in kernel_sizes)), [image])
    assert_guest_ok(r, "the kernel measuring and reading f2fs-fuse's verity files")
    k = measured(r.text("fuse-files.txt"))
    assert sorted(k) == sorted(os.path.basename(n) for n in fuse)
    for name, (digest, content, flags) in fuse.items():
        got = k[os.path.basename(name)]
        assert got[:2] == (digest, content), (name, got, fuse[name])
        assert got[2] & FS_VERITY_FL, name
    fsutil.fsck_check(image)

    kfiles = measured(r.text("kernel-files.txt"))
    assert len(kfiles) == len(kernel_sizes)
    # the kernel's compressed verity files (Android's APKs are such files)
    assert not r.text("kcomp-enable.err").strip(), r.text("kcomp-enable.err")
    kcomp = measured(r.text("kcomp-files.txt"))
    assert len(kcomp) == 3 and all(v[2] & FS_VERITY_FL for v in kcomp.values()), kcomp
    cblocks = dict(line.rsplit("\t", 1) for line in r.text("cblocks.txt").split("\n") if line)
    assert int(cblocks.get("kcomp/c3145733", 0)) > 0, cblocks      # compressed by the kernel
    with fsutil.mounted(f2fs_fuse, image, tmp_path / "mnt-ro", ("ro",)) as m:
        for name, want in kfiles.items():
            assert fuse_measure(os.path.join(m.path, "kernel", name)) == want, name
        for name, want in kcomp.items():
            assert fuse_measure(os.path.join(m.path, "kcomp", name)) == want, name
        assert kfiles["k%d" % salted[0]][0].startswith("sha512:")
        # where block 10 of the kernel's 3 MiB file lies
        from test_ioctl import extents
        ctl = os.path.join(os.path.dirname(f2fs_fuse), "f2fs-fusectl")
        target = os.path.join(m.path, "kernel", "k%d" % (70 * MiB))
        ext = extents(ctl, target)
        with open(target, "rb") as f:
            f.seek(10 * BLK)
            block10 = f.read(BLK)
    pblk = next(p + 10 - lb for lb, p, n, _ in ext if lb <= 10 < lb + n)
    with open(image, "r+b") as f:
        f.seek(pblk * BLK + 99)
        b = f.read(1)
        f.seek(pblk * BLK + 99)
        f.write(bytes([b[0] ^ 1]))
    m = fsutil.Mount(f2fs_fuse, image, tmp_path / "mnt-bad", ("ro",)).start()
    try:
        with open(os.path.join(m.path, "kernel", "k%d" % (70 * MiB)), "rb") as f:
            f.seek(9 * BLK)
            assert len(f.read(BLK)) == BLK
            f.seek(10 * BLK)
            try:
                f.read(BLK)
                raise AssertionError("a flipped byte in the kernel's verity file read back")
            except OSError as e:
                assert e.errno == 5, e
            f.seek(11 * BLK)
            assert len(f.read(BLK)) == BLK
        assert block10 is not None
    finally:
        m.unmount()
    assert "data block 10 does not match" in m.stderr(), m.stderr()[-2000:]
