"""fs-verity through the mount: FS_IOC_ENABLE_VERITY builds the Merkle
tree as the kernel lays it out for f2fs (after EOF at the next 64 KiB,
descriptor after the tree, its place in xattr index 11), and
FS_IOC_MEASURE_VERITY gives the digest that fsverity-utils' `fsverity
digest` computes from the plain contents; reads check every block (a byte
flipped in the image is EIO); verity files take no writes.  fsck.f2fs
after every test that writes.  The kernel's side is tests/kernel."""

import errno
import fcntl
import hashlib
import os
import shutil
import struct
import subprocess

import pytest

import fsutil
from test_ioctl import extents, image_blocks, BLK  # noqa: F401
from test_keys import fusectl  # noqa: F401
from test_write import MiB, blob, rwimage, write_file  # noqa: F401

NO_PERIODIC = "checkpoint_interval=3600"
FEATURES = "extra_attr,verity"
FS_IOC_GETFLAGS = 0x80086601
FS_VERITY_FL = 0x00100000
FS_IOC_MEASURE_VERITY = 0xC0046686

# (name, size): empty, one block, one tree level, two, three levels
SIZES = [("empty", 0), ("tiny", 100), ("block", 4096), ("small", 5000),
         ("half", 512 * 1024), ("two", 3 * MiB + 123), ("three", 65 * MiB + 7)]


def need_fsverity():
    if not shutil.which("fsverity"):
        pytest.skip("fsverity (fsverity-utils) not installed: tests/install-deps.sh")


def fsverity(*args, check=True):
    r = subprocess.run(["fsverity"] + [str(a) for a in args], capture_output=True, text=True,
                       timeout=300)
    if check:
        assert r.returncode == 0, (args, r.stdout, r.stderr)
    return r


def digest_of(out):
    return out.split()[0]


def getflags(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        buf = bytearray(8)
        fcntl.ioctl(fd, FS_IOC_GETFLAGS, buf, True)
        return struct.unpack_from("<I", buf)[0]
    finally:
        os.close(fd)


def errno_of(fn):
    try:
        fn()
    except OSError as e:
        return e.errno
    return 0


@pytest.fixture
def vimg(rwimage):
    need_fsverity()
    return rwimage(features=FEATURES, options=("rw", NO_PERIODIC))


def test_enable_measure_remount(vimg, tmp_path):
    """fsverity enable on files of every tree depth; fsverity measure ==
    fsverity digest of the same bytes in a plain file, before and after a
    remount; contents unchanged; FS_VERITY_FL; fsck clean."""
    p = vimg.mount()
    want = {}
    for name, size in SIZES:
        data = blob(size, size)
        write_file(os.path.join(p, name), data)
        plain = tmp_path / ("plain-" + name)
        plain.write_bytes(data)
        want[name] = (digest_of(fsverity("digest", plain).stdout), data)
        fsverity("enable", os.path.join(p, name))
    for name, (dig, data) in want.items():
        f = os.path.join(p, name)
        assert digest_of(fsverity("measure", f).stdout) == dig, name
        assert getflags(f) & FS_VERITY_FL
        with open(f, "rb") as fh:
            assert fh.read() == data, name
        assert os.path.getsize(f) == len(data)
    # fsverity enable again: EEXIST; a file without verity: ENODATA
    r = fsverity("enable", os.path.join(p, "two"), check=False)
    assert r.returncode != 0 and "File exists" in r.stderr, r.stderr
    write_file(os.path.join(p, "plainfile"), b"x" * 10)
    r = fsverity("measure", os.path.join(p, "plainfile"), check=False)
    assert r.returncode != 0 and "verity" in r.stderr.lower(), r.stderr
    vimg.unmount()
    fsutil.fsck_check(vimg.image)
    p = vimg.mount(ro=True)
    for name, (dig, data) in want.items():
        f = os.path.join(p, name)
        assert digest_of(fsverity("measure", f).stdout) == dig, name
        with open(f, "rb") as fh:
            assert fh.read() == data, name
    vimg.unmount()


@pytest.mark.parametrize("params", [("--hash-alg=sha512",), ("--block-size=1024",),
                                    ("--salt=00112233445566778899",),
                                    ("--hash-alg=sha512", "--block-size=2048",
                                     "--salt=" + "ab" * 32)])
def test_enable_parameters(vimg, tmp_path, fusectl, params):  # noqa: F811
    """Other hashes, block sizes and salts give fsverity digest's digest,
    through fsverity enable and f2fs-fusectl verity enable alike; reads of
    the file check out with its own block size."""
    p = vimg.mount()
    data = blob(700 * 1024 + 5, 7)
    plain = tmp_path / "plain"
    plain.write_bytes(data)
    dig = digest_of(fsverity("digest", plain, *params).stdout)
    write_file(os.path.join(p, "a"), data)
    write_file(os.path.join(p, "b"), data)
    fsverity("enable", os.path.join(p, "a"), *params)
    r = subprocess.run([fusectl, "verity", "enable"] + list(params) + [os.path.join(p, "b")],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    for f in ("a", "b"):
        assert digest_of(fsverity("measure", os.path.join(p, f)).stdout) == dig
        r = subprocess.run([fusectl, "verity", "measure", os.path.join(p, f)],
                           capture_output=True, text=True, timeout=60)
        assert r.returncode == 0 and r.stdout.split()[0] == dig, r.stdout + r.stderr
        with open(os.path.join(p, f), "rb") as fh:
            fh.seek(123457)
            assert fh.read(5000) == data[123457:128457]
    vimg.unmount()
    fsutil.fsck_check(vimg.image)


def test_writes_refused(vimg):
    """A verity file opens only for reading, keeps its size, and a handle
    opened for writing before it was enabled writes no more (EPERM)."""
    p = vimg.mount()
    f = os.path.join(p, "f")
    write_file(f, blob(20000, 1))
    write_file(os.path.join(p, "other"), blob(8192, 2))
    early = os.open(f, os.O_RDWR)
    fsverity("enable", f)
    assert errno_of(lambda: os.open(f, os.O_WRONLY)) == errno.EPERM
    assert errno_of(lambda: os.open(f, os.O_RDWR)) == errno.EPERM
    assert errno_of(lambda: os.truncate(f, 10)) == errno.EPERM
    assert errno_of(lambda: os.pwrite(early, b"x", 0)) == errno.EPERM
    assert errno_of(lambda: os.posix_fallocate(early, 0, 1 << 20)) == errno.EPERM
    other = os.open(os.path.join(p, "other"), os.O_RDWR)
    arg = struct.pack("<I4xQQQ", other, 0, 0, 4096)            # F2FS_IOC_MOVE_RANGE
    assert errno_of(lambda: fcntl.ioctl(early, 0xC020F509, arg)) == errno.EPERM
    arg = struct.pack("<I4xQQQ", early, 0, 0, 4096)
    assert errno_of(lambda: fcntl.ioctl(other, 0xC020F509, arg)) == errno.EPERM
    os.close(other)
    os.close(early)
    with open(f, "rb") as fh:
        assert fh.read() == blob(20000, 1)
    # a directory; a handle of the caller's own open for writing (ETXTBSY)
    assert "Is a directory" in fsverity("enable", p, check=False).stderr
    g = os.path.join(p, "g")
    write_file(g, b"g" * 100)
    fd = os.open(g, os.O_RDWR)
    try:
        arg = struct.pack("<IIIIQIIQ88x", 1, 1, 4096, 0, 0, 0, 0, 0)
        assert errno_of(lambda: fcntl.ioctl(fd, 0x40806685, arg)) == errno.ETXTBSY
    finally:
        os.close(fd)
    vimg.unmount()
    fsutil.fsck_check(vimg.image)


def test_without_feature(rwimage):  # noqa: F811
    need_fsverity()
    img = rwimage(features="extra_attr", options=("rw", NO_PERIODIC))
    p = img.mount()
    write_file(os.path.join(p, "f"), b"abc")
    r = fsverity("enable", os.path.join(p, "f"), check=False)
    assert r.returncode != 0 and "not supported" in r.stderr, r.stderr
    img.unmount()
    fsutil.fsck_check(img.image)


def flip(image, pblk, off):
    with open(image, "r+b") as f:
        f.seek(pblk * BLK + off)
        b = f.read(1)
        f.seek(pblk * BLK + off)
        f.write(bytes([b[0] ^ 0x40]))


def test_flipped_byte_is_eio(vimg, fusectl):  # noqa: F811
    """A byte flipped in a data block, then in a Merkle tree block: reads of
    that block fail with EIO and say which inode and block; the other
    blocks read right; the digest still measures."""
    p = vimg.mount()
    f = os.path.join(p, "f")
    data = blob(3 * MiB, 3)
    write_file(f, data)
    fsverity("enable", f)
    dig = digest_of(fsverity("measure", f).stdout)
    ext = extents(fusectl, f)
    ino = os.stat(f).st_ino
    vimg.unmount()
    fsutil.fsck_check(vimg.image)       # before the damage, which is data only
    # file block 100, and the first block of the tree's level over the data
    # (the hashes of data blocks 0..127; extents stop at EOF, so found by content)
    blocks = {}
    for lblk, pblk, n, _ in ext:
        for i in range(n):
            blocks[lblk + i] = pblk + i
    leaves = b"".join(hashlib.sha256(data[i * BLK:(i + 1) * BLK]).digest() for i in range(128))
    with open(vimg.image, "rb") as fh:
        at = fh.read().find(leaves)
    assert at > 0 and at % BLK == 0 and 100 in blocks
    tree0 = at // BLK
    flip(vimg.image, blocks[100], 17)
    p = vimg.mount(ro=True)
    f = os.path.join(p, "f")
    with open(f, "rb") as fh:
        fh.seek(99 * BLK)
        assert fh.read(BLK) == data[99 * BLK:100 * BLK]
        fh.seek(100 * BLK)
        assert errno_of(lambda: fh.read(BLK)) == errno.EIO
        fh.seek(101 * BLK)
        assert fh.read(BLK) == data[101 * BLK:102 * BLK]
    assert digest_of(fsverity("measure", f).stdout) == dig
    m = vimg.unmount(check=False)
    assert "inode %d: data block 100" % ino in m.stderr(), m.stderr()[-2000:]
    flip(vimg.image, blocks[100], 17)               # the data is right again
    flip(vimg.image, tree0, 5)                      # the hash of data block 0
    p = vimg.mount(ro=True)
    f = os.path.join(p, "f")
    with open(f, "rb") as fh:
        assert errno_of(lambda: fh.read(BLK)) == errno.EIO
        fh.seek(128 * BLK)
        assert fh.read(BLK) == data[128 * BLK:129 * BLK]
    vimg.unmount(check=False)


def test_measure_ioctl_short_buffer(vimg):
    """FS_IOC_MEASURE_VERITY with room for fewer bytes than the digest:
    EOVERFLOW, as the kernel answers."""
    p = vimg.mount()
    f = os.path.join(p, "f")
    write_file(f, b"hello")
    fsverity("enable", f)
    fd = os.open(f, os.O_RDONLY)
    try:
        buf = bytearray(struct.pack("<HH", 0, 16) + bytes(16))
        assert errno_of(lambda: fcntl.ioctl(fd, FS_IOC_MEASURE_VERITY, buf, True)) == \
            errno.EOVERFLOW
        buf = bytearray(struct.pack("<HH", 0, 32) + bytes(32))
        fcntl.ioctl(fd, FS_IOC_MEASURE_VERITY, buf, True)
        assert struct.unpack_from("<HH", buf) == (1, 32)
    finally:
        os.close(fd)
    vimg.unmount()
    fsutil.fsck_check(vimg.image)


def test_encrypted_verity(rwimage, tmp_path, fusectl):  # noqa: F811
    """A verity file in an encrypted directory: its tree and descriptor are
    encrypted with the file's key, as the kernel's page cache writes them;
    the digest is fsverity digest's of the plain contents; after a remount
    with the key it reads and measures the same, and a flipped byte in its
    ciphertext is EIO."""
    need_fsverity()
    key = tmp_path / "key"
    key.write_bytes(bytes(range(64)))
    img = rwimage(features=FEATURES + ",encrypt", options=("rw", NO_PERIODIC,
                                                            "key_file=%s" % key))
    p = img.mount()
    r = subprocess.run([fusectl, "add_key", "--key-file=%s" % key, p], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    kid = r.stdout.strip()
    d = os.path.join(p, "enc")
    os.mkdir(d)
    r = subprocess.run([fusectl, "set_policy", kid, d], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    data = blob(2 * MiB + 99, 9)
    plain = tmp_path / "plain"
    plain.write_bytes(data)
    dig = digest_of(fsverity("digest", plain).stdout)
    f = os.path.join(d, "f")
    write_file(f, data)
    fsverity("enable", f)
    assert digest_of(fsverity("measure", f).stdout) == dig
    ext = extents(fusectl, f)
    img.unmount()
    fsutil.fsck_check(img.image)
    with open(img.image, "rb") as fh:
        raw = fh.read()
    leaves = b"".join(hashlib.sha256(data[i * BLK:(i + 1) * BLK]).digest() for i in range(128))
    assert raw.find(leaves) < 0, "the Merkle tree is on disk in the clear"
    p = img.mount(ro=True)
    f = os.path.join(p, "enc", "f")
    assert digest_of(fsverity("measure", f).stdout) == dig
    with open(f, "rb") as fh:
        assert fh.read() == data
    img.unmount()
    pblk = next(pb + 5 - lb for lb, pb, n, _ in ext if lb <= 5 < lb + n)
    flip(img.image, pblk, 1000)
    p = img.mount(ro=True)
    with open(os.path.join(p, "enc", "f"), "rb") as fh:
        fh.seek(5 * BLK)
        assert errno_of(lambda: fh.read(BLK)) == errno.EIO
    img.unmount(check=False)


def test_fsync_crash_and_unlink(vimg, tmp_path):
    """Enabled and fsync()ed, then the daemon killed: roll-forward brings
    back the verity file (tree, descriptor, xattr, flag) with its digest;
    unlinking verity files frees their trees too (fsck.f2fs clean)."""
    p = vimg.mount()
    data = blob(1 * MiB + 17, 4)
    plain = tmp_path / "plain"
    plain.write_bytes(data)
    dig = digest_of(fsverity("digest", plain).stdout)
    os.sync()                                   # a checkpoint before the file
    f = os.path.join(p, "f")
    write_file(f, data)
    fsverity("enable", f)
    fd = os.open(f, os.O_RDONLY)
    os.fsync(fd)
    os.close(fd)
    vimg.crash()
    p = vimg.mount()
    f = os.path.join(p, "f")
    assert digest_of(fsverity("measure", f).stdout) == dig
    with open(f, "rb") as fh:
        assert fh.read() == data
    write_file(os.path.join(p, "g"), data)
    fsverity("enable", os.path.join(p, "g"))
    vimg.unmount()
    fsutil.fsck_check(vimg.image)
    p = vimg.mount()
    os.unlink(os.path.join(p, "f"))
    os.unlink(os.path.join(p, "g"))
    vimg.unmount()
    out = fsutil.fsck_check(vimg.image)
    assert out


def test_dump_metadata(vimg):
    """fsverity dump_metadata (FS_IOC_READ_VERITY_METADATA, whose buffer the
    daemon writes into the caller): the descriptor hashes to the measured
    digest and holds the root hash, the tree's first block hashes to the
    root hash, its level over the data holds the data blocks' hashes; no
    signature is ENODATA."""
    p = vimg.mount()
    f = os.path.join(p, "f")
    data = blob(3 * MiB + 5, 6)
    write_file(f, data)
    fsverity("enable", f)
    dig = digest_of(fsverity("measure", f).stdout)
    desc = subprocess.run(["fsverity", "dump_metadata", "descriptor", f], capture_output=True,
                          timeout=60)
    assert desc.returncode == 0, desc.stderr
    assert len(desc.stdout) == 256
    assert "sha256:" + hashlib.sha256(desc.stdout).hexdigest() == dig
    root = desc.stdout[16:48]
    tree = subprocess.run(["fsverity", "dump_metadata", "merkle_tree", f], capture_output=True,
                          timeout=60)
    assert tree.returncode == 0, tree.stderr
    nblocks = (len(data) + BLK - 1) // BLK
    assert len(tree.stdout) == BLK * (1 + (nblocks + 127) // 128)    # root + level 0
    assert hashlib.sha256(tree.stdout[:BLK]).digest() == root
    padded = data + bytes(-len(data) % BLK)
    leaves = b"".join(hashlib.sha256(padded[i * BLK:(i + 1) * BLK]).digest()
                      for i in range(nblocks))
    assert tree.stdout[BLK:BLK + len(leaves)] == leaves
    sig = subprocess.run(["fsverity", "dump_metadata", "signature", f], capture_output=True,
                         timeout=60)
    assert sig.returncode != 0 and b"No data available" in sig.stderr, sig.stderr
    vimg.unmount()
    fsutil.fsck_check(vimg.image)


@pytest.mark.parametrize("log", [2, 5])
def test_compressed_verity(rwimage, tmp_path, log):  # noqa: F811
    """Verity on compressed files (chattr +c, clusters of 4 and 32 blocks):
    the tree and descriptor go through the file's clusters past EOF, the
    digest is fsverity digest's, reads check out after a remount, and
    fsck.f2fs is clean (the kernel reads them: tests/kernel)."""
    need_fsverity()
    img = rwimage(features=FEATURES + ",compression",
                  options=("rw", NO_PERIODIC, "compress_log_size=%d" % log))
    p = img.mount()
    d = os.path.join(p, "c")
    os.mkdir(d)
    fd = os.open(d, os.O_RDONLY)
    try:
        fcntl.ioctl(fd, 0x40086602, struct.pack("<i", 0x4))     # FS_IOC_SETFLAGS +c
    finally:
        os.close(fd)
    want = {}
    for size in (5000, 200000, 3 * MiB + 9):
        data = (b"compressible verity text %d\n" % size) * (size // 20 + 1)
        data = data[:size]
        plain = tmp_path / ("plain%d" % size)
        plain.write_bytes(data)
        f = os.path.join(d, "f%d" % size)
        write_file(f, data)
        fsverity("enable", f)
        want[f] = (digest_of(fsverity("digest", plain).stdout), data)
        assert digest_of(fsverity("measure", f).stdout) == want[f][0]
        assert os.path.getsize(f) == size
    img.unmount()
    fsutil.fsck_check(img.image)
    p = img.mount(ro=True)
    for f, (dig, data) in want.items():
        f = f.replace(os.path.dirname(os.path.dirname(f)), p)
        assert digest_of(fsverity("measure", f).stdout) == dig
        with open(f, "rb") as fh:
            assert fh.read() == data
    img.unmount()


@pytest.mark.parametrize("field", ["version", "data_size", "log_blocksize", "hash_algorithm",
                                   "reserved", "salt_size", "sig_size"])
def test_bad_descriptor(vimg, tmp_path, field):
    """A descriptor the kernel would refuse (validate_fsverity_descriptor,
    fsverity_init_merkle_tree_params) makes the file fail to open and
    measure with EINVAL, as there, and nothing else on the mount."""
    p = vimg.mount()
    f = os.path.join(p, "f")
    write_file(f, blob(300000, 8))
    fsverity("enable", f)
    write_file(os.path.join(p, "other"), b"still here")
    desc = subprocess.run(["fsverity", "dump_metadata", "descriptor", f], capture_output=True,
                          timeout=60).stdout
    assert len(desc) == 256
    vimg.unmount()
    fsutil.fsck_check(vimg.image)
    with open(vimg.image, "r+b") as fh:
        raw = fh.read()
        at = raw.find(desc[:112])                   # up to the salt: unique enough
        assert at > 0 and raw.find(desc[:112], at + 1) < 0
        off, val = {"version": (0, b"\x02"), "data_size": (8, struct.pack("<Q", 300001)),
                    "log_blocksize": (2, b"\x09"), "hash_algorithm": (1, b"\x07"),
                    "reserved": (200, b"\x01"), "salt_size": (3, b"\x21"),
                    "sig_size": (4, struct.pack("<I", 1))}[field]
        fh.seek(at + off)
        fh.write(val)
    p = vimg.mount(ro=True)
    f = os.path.join(p, "f")
    assert errno_of(lambda: open(f, "rb").close()) == errno.EINVAL
    r = fsverity("measure", f, check=False)
    assert r.returncode != 0
    with open(os.path.join(p, "other"), "rb") as fh:
        assert fh.read() == b"still here"
    vimg.unmount(check=False)
