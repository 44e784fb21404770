"""Writing compressed files on a read-write mount: every algorithm, several
cluster sizes, with and without compress_chksum; rewrites, holes and
truncations against a model of the file; chattr +c and inheritance; the
compression ioctls through Debian's f2fs_io; compression inside an
encrypted directory.  fsck.f2fs checks each image (cluster layout, i_blocks,
i_compr_blocks) and a read-only remount must read the same bytes."""

import errno
import fcntl
import mmap
import os
import random
import shutil
import struct
import subprocess

import pytest

import fsutil
import manifest as M

from test_keys import KEY_ID, fusectl  # noqa: F401
from test_write import MiB, RWImage, expect, sha, write_file  # noqa: F401

FEATURES = "extra_attr,inode_checksum,compression"
F2FS_IOC_GET_COMPRESS_BLOCKS = 0x8008f511
F2FS_IOC_RELEASE_COMPRESS_BLOCKS = 0x8008f512
F2FS_IOC_RESERVE_COMPRESS_BLOCKS = 0x8008f513
F2FS_IOC_DECOMPRESS_FILE = 0xf517
F2FS_IOC_COMPRESS_FILE = 0xf518
FS_IOC_GETFLAGS = 0x80086601
FS_IOC_SETFLAGS = 0x40086602
FS_COMPR_FL = 0x4
FS_NOCOMP_FL = 0x400

WORDS = ("the f2fs cluster compressed block segment node inode checkpoint write read "
         "kernel fuse zstd lz4 lzo data hole truncate page").split()


def text(n, seed):
    """n bytes of compressible text (a few times smaller under any codec)."""
    rng = random.Random(seed)
    out = []
    size = 0
    while size < n:
        w = rng.choice(WORDS) + (" " if rng.random() < 0.9 else "\n")
        out.append(w)
        size += len(w)
    return "".join(out).encode()[:n]


@pytest.fixture(params=["direct", "writeback"])
def rwimage(request, f2fs_fuse, tmp_path):
    """test_write's images, each test run twice: write(2) straight to the
    clusters, and through the page cache (-o writeback), whole dirty
    clusters compressed at writeback."""
    extra = ["writeback" if request.param == "writeback" else "nowriteback"]
    made = []

    def make(**kw):
        kw["options"] = list(kw.get("options", ())) + extra
        img = RWImage(f2fs_fuse, tmp_path, **kw)
        made.append(img)
        return img

    yield make
    for img in made:
        img.close()


def cblocks(path, req=F2FS_IOC_GET_COMPRESS_BLOCKS):
    """The ioctl's count, after an fsync: i_compr_blocks changes only when
    clusters are written, which with -o writeback is at writeback."""
    fd = os.open(path, os.O_RDONLY)
    try:
        if req == F2FS_IOC_GET_COMPRESS_BLOCKS:
            os.fsync(fd)
        return struct.unpack("<Q", fcntl.ioctl(fd, req, b"\0" * 8))[0]
    finally:
        os.close(fd)


def getflags(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        return struct.unpack("<i", fcntl.ioctl(fd, FS_IOC_GETFLAGS, b"\0" * 4))[0]
    finally:
        os.close(fd)


def setflags(path, flags):
    fd = os.open(path, os.O_RDONLY)
    try:
        fcntl.ioctl(fd, FS_IOC_SETFLAGS, struct.pack("<i", flags))
    finally:
        os.close(fd)


def content_of(files):
    return {p: {"content": sha(bytes(b)), "size": str(len(b))} for p, b in files.items()}


ALGOS = ["lzo", "lz4", "lz4:9", "zstd", "zstd:7", "lzo-rle"]


@pytest.mark.parametrize("algo", ALGOS)
@pytest.mark.parametrize("log,chksum", [(2, False), (4, True), (8, False)])
def test_compressed_files_by_algorithm(rwimage, algo, log, chksum):
    """A compressible file saves blocks, an incompressible one none; both
    read back, and fsck.f2fs agrees with the layout and the counts."""
    opts = ["compress_algorithm=" + algo, "compress_log_size=%d" % log,
            "compress_extension=txt"] + (["compress_chksum"] if chksum else [])
    img = rwimage(features=FEATURES, options=opts)
    p = img.mount()
    cbytes = 4096 << log
    files = {
        "a.txt": text(5 * cbytes + 1234, 1),       # a partial last cluster stays raw
        "b.txt": os.urandom(3 * cbytes),           # incompressible: raw clusters
        "c.txt": text(2 * cbytes, 2),
        "plain": text(2 * cbytes, 3),              # no extension: not compressed
    }
    for name, data in files.items():
        write_file(os.path.join(p, name), data)
    assert getflags(os.path.join(p, "a.txt")) & FS_COMPR_FL
    assert not getflags(os.path.join(p, "plain")) & FS_COMPR_FL
    saved = cblocks(os.path.join(p, "a.txt"))
    assert 0 < saved <= 5 * ((1 << log) - 1), saved
    assert cblocks(os.path.join(p, "b.txt")) == 0
    assert cblocks(os.path.join(p, "c.txt")) > 0
    with pytest.raises(OSError) as e:
        cblocks(os.path.join(p, "plain"))
    assert e.value.errno == errno.EINVAL
    # a compressed cluster keeps its whole cluster reserved: i_blocks as if raw
    st = os.stat(os.path.join(p, "c.txt"))
    assert st.st_blocks * 512 == 2 * cbytes
    img.finish(expect(content_of(files)))
    p = img.mount(ro=True)
    try:
        assert cblocks(os.path.join(p, "a.txt")) == saved
    finally:
        img.unmount()


@pytest.mark.parametrize("algo,log", [("lz4", 2), ("zstd", 4), ("lzo-rle", 3)])
def test_rewrites_holes_truncations(rwimage, algo, log):
    """Random writes (some in holes, some past the end), truncations down
    into clusters and up again, against a model; remounts in between."""
    img = rwimage(features=FEATURES, options=["compress_algorithm=" + algo,
                                              "compress_log_size=%d" % log,
                                              "compress_chksum"])
    p = img.mount()
    os.mkdir(os.path.join(p, "z"))
    setflags(os.path.join(p, "z"), FS_COMPR_FL)
    rng = random.Random(log)
    cbytes = 4096 << log
    models = {}
    for i in range(3):
        name = "z/f%d" % i
        models[name] = bytearray(text(rng.randrange(1, 12) * cbytes + rng.randrange(4096), i))
        write_file(os.path.join(p, name), models[name])
    for step in range(120):
        name = rng.choice(sorted(models))
        b = models[name]
        path = os.path.join(p, name)
        op = rng.random()
        if op < 0.6:
            off = rng.randrange(0, len(b) + 3 * cbytes)
            n = rng.choice((1, 100, 4096, cbytes, 3 * cbytes + 17))
            d = text(n, step) if rng.random() < 0.8 else os.urandom(n)
            fd = os.open(path, os.O_WRONLY)
            try:
                assert os.pwrite(fd, d, off) == n
            finally:
                os.close(fd)
            if off > len(b):
                b.extend(bytes(off - len(b)))
            b[off:off + n] = d
        elif op < 0.85:
            size = rng.randrange(0, len(b) + 1)
            os.truncate(path, size)
            del b[size:]
        else:
            size = len(b) + rng.randrange(0, 4 * cbytes)
            os.truncate(path, size)
            b.extend(bytes(size - len(b)))
        if step % 40 == 39:
            with open(path, "rb") as f:
                assert f.read() == bytes(b), (name, step)
            img.unmount()
            fsutil.fsck_check(img.image)
            p = img.mount()
    for name, b in models.items():
        with open(os.path.join(p, name), "rb") as f:
            assert f.read() == bytes(b), name
        assert getflags(os.path.join(p, name)) & FS_COMPR_FL
    img.finish(expect(content_of(models)))


def test_truncation_forgets_decompressed_cluster(rwimage):
    """A read of part of a compressed cluster keeps the cluster decompressed
    for the next partial read.  Truncating the file to nothing and extending
    it again must read zeros, not that kept cluster (O_DIRECT, so that each
    read reaches the daemon at its own size)."""
    img = rwimage(features=FEATURES, options=["compress_extension=*", "compress_log_size=2"])
    p = img.mount()
    path = os.path.join(p, "f")
    data = text(4 * 16384, 1)
    fd = os.open(path, os.O_CREAT | os.O_RDWR, 0o644)
    dfd = os.open(path, os.O_RDONLY | os.O_DIRECT)
    buf = mmap.mmap(-1, 4096)
    try:
        os.write(fd, data)
        os.fsync(fd)
        assert os.preadv(dfd, [buf], 0) == 4096 and buf[:] == data[:4096]
        os.ftruncate(fd, 0)
        os.ftruncate(fd, 4097)
        assert os.preadv(dfd, [buf], 0) == 4096
        assert buf[:] == bytes(4096), "stale cluster after truncation"
        # the same after a cut inside the file, at a cluster boundary
        os.pwrite(fd, data, 0)
        os.fsync(fd)
        assert os.preadv(dfd, [buf], 16384) == 4096 and buf[:] == data[16384:20480]
        os.ftruncate(fd, 16384)
        os.ftruncate(fd, 32768)
        assert os.preadv(dfd, [buf], 16384) == 4096 and buf[:] == bytes(4096)
    finally:
        os.close(dfd)
        os.close(fd)
    img.finish(expect(content_of({"f": data[:16384] + bytes(16384)})))


def test_flags_and_inheritance(rwimage):
    """chattr +c on an empty file or a directory (inherited by what is
    created in it), not on a file with data; nocompress_extension wins."""
    img = rwimage(features=FEATURES, options=["nocompress_extension=jpg"])
    p = img.mount()
    d = os.path.join(p, "d")
    os.mkdir(d)
    setflags(d, FS_COMPR_FL)
    assert getflags(d) & FS_COMPR_FL
    os.mkdir(os.path.join(d, "sub"))
    assert getflags(os.path.join(d, "sub")) & FS_COMPR_FL
    write_file(os.path.join(d, "sub", "x"), text(64 * 1024, 1))
    assert getflags(os.path.join(d, "sub", "x")) & FS_COMPR_FL
    assert cblocks(os.path.join(d, "sub", "x")) > 0
    write_file(os.path.join(d, "pic.jpg"), text(64 * 1024, 2))
    assert not getflags(os.path.join(d, "pic.jpg")) & FS_COMPR_FL
    # an empty file (inline data or not) takes the flag; one with data does not
    e = os.path.join(p, "empty")
    write_file(e, b"")
    setflags(e, FS_COMPR_FL)
    write_file(e, text(100 * 1024, 3))
    assert cblocks(e) > 0
    f = os.path.join(p, "full")
    write_file(f, text(100 * 1024, 4))
    with pytest.raises(OSError) as err:
        setflags(f, FS_COMPR_FL)
    assert err.value.errno == errno.EINVAL
    with pytest.raises(OSError) as err:
        setflags(e, 0)      # it has blocks now
    assert err.value.errno == errno.EINVAL
    with pytest.raises(OSError) as err:
        setflags(d, FS_COMPR_FL | FS_NOCOMP_FL)
    assert err.value.errno == errno.EINVAL
    # punching a compressed file is refused as the kernel refuses it
    fd = os.open(e, os.O_WRONLY)
    try:
        with pytest.raises(OSError) as err:
            fcntl_fallocate(fd, 3, 0, 4096)
        assert err.value.errno == errno.EOPNOTSUPP
        fcntl_fallocate(fd, 0, 0, 300 * 1024)   # plain allocation is fine
    finally:
        os.close(fd)
    setflags(d, 0)
    write_file(os.path.join(d, "after"), text(64 * 1024, 5))
    assert not getflags(os.path.join(d, "after")) & FS_COMPR_FL
    img.finish()


def fcntl_fallocate(fd, mode, off, length):
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    libc.fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int64, ctypes.c_int64]
    if libc.fallocate(fd, mode, off, length):
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))


def f2fs_io(*args):
    exe = shutil.which("f2fs_io")
    if not exe:
        pytest.skip("f2fs_io is not installed")
    r = subprocess.run([exe] + list(args), capture_output=True, text=True, timeout=60)
    return r


def test_release_reserve_with_f2fs_io(rwimage):
    img = rwimage(features=FEATURES, options=["compress_extension=*",
                                              "compress_log_size=3"])
    p = img.mount()
    f = os.path.join(p, "f")
    data = text(40 * 32 * 1024 + 5000, 9)
    write_file(f, data, sync=True)      # the count changes at writeback
    r = f2fs_io("get_cblocks", f)
    assert r.returncode == 0, r.stderr
    saved = int(r.stdout.split()[-1])
    assert saved == cblocks(f) > 0
    blocks = os.stat(f).st_blocks
    free0 = os.statvfs(p).f_bfree
    r = f2fs_io("release_cblocks", f)
    assert r.returncode == 0, r.stderr
    assert int(r.stdout.split()[-1]) == saved
    assert cblocks(f) == 0
    assert os.stat(f).st_blocks == blocks - saved * 8
    assert os.statvfs(p).f_bfree == free0 + saved
    with open(f, "rb") as fh:
        assert fh.read() == data
    with pytest.raises(OSError) as e:
        with open(f, "r+b") as fh:
            fh.write(b"x")
    assert e.value.errno == errno.EPERM
    with pytest.raises(OSError) as e:
        cblocks(f, F2FS_IOC_RELEASE_COMPRESS_BLOCKS)
    assert e.value.errno == errno.EINVAL
    img.unmount()
    fsutil.fsck_check(img.image)
    p = img.mount()
    f = os.path.join(p, "f")
    with open(f, "rb") as fh:
        assert fh.read() == data
    r = f2fs_io("reserve_cblocks", f)
    assert r.returncode == 0, r.stderr
    assert int(r.stdout.split()[-1]) == saved
    assert cblocks(f) == saved and os.stat(f).st_blocks == blocks
    with open(f, "r+b") as fh:
        fh.write(b"again")
    img.finish(expect({"f": {"content": sha(b"again" + data[5:])}}))


def test_compress_mode_user(rwimage):
    """compress_mode=user: writes go raw until F2FS_IOC_COMPRESS_FILE, and
    F2FS_IOC_DECOMPRESS_FILE makes every cluster raw again."""
    img = rwimage(features=FEATURES, options=["compress_mode=user", "compress_extension=c"])
    p = img.mount()
    f = os.path.join(p, "x.c")
    data = text(MiB, 3)
    write_file(f, data)
    assert cblocks(f) == 0
    fd = os.open(f, os.O_RDWR)
    try:
        fcntl.ioctl(fd, F2FS_IOC_COMPRESS_FILE)
        assert cblocks(f) > 0
        fcntl.ioctl(fd, F2FS_IOC_DECOMPRESS_FILE)
        assert cblocks(f) == 0
        fcntl.ioctl(fd, F2FS_IOC_COMPRESS_FILE)
    finally:
        os.close(fd)
    assert cblocks(f) > 0
    img.finish(expect({"x.c": {"content": sha(data)}}))


def test_compress_mode_fs_refuses_file_ioctls(rwimage):
    img = rwimage(features=FEATURES, options=["compress_extension=c"])
    p = img.mount()
    f = os.path.join(p, "x.c")
    write_file(f, text(MiB, 3))
    fd = os.open(f, os.O_RDWR)
    try:
        with pytest.raises(OSError) as e:
            fcntl.ioctl(fd, F2FS_IOC_COMPRESS_FILE)
        assert e.value.errno == errno.EOPNOTSUPP
    finally:
        os.close(fd)
    img.finish()


@pytest.mark.parametrize("opt", ["compress_algorithm=gzip", "compress_algorithm=lzo:3",
                                 "compress_algorithm=zstd:99", "compress_log_size=9",
                                 "compress_log_size=1", "compress_mode=auto",
                                 "compress_extension=waytoolong", "compress_threads=0",
                                 "compress_threads=5"])
def test_bad_compression_options(f2fs_fuse, tmp_path, opt):
    img = tmp_path / "x.img"
    with open(img, "wb") as f:
        f.truncate(64 * MiB)
    fsutil.run(["mkfs.f2fs", "-f", "-O", FEATURES, str(img)], check=True)
    mnt = tmp_path / "m"
    mnt.mkdir()
    r = subprocess.run([f2fs_fuse, str(img), str(mnt), "-o", opt], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode != 0
    assert opt.split("=")[0] in r.stderr, r.stderr
    assert not fsutil.is_fuse_mount(str(mnt))


def test_encrypted_compressed(rwimage, fusectl, fixtures_dir):
    """Compressed files in an encrypted directory: each compressed block is
    encrypted as the file block of its slot; what reads back is the text."""
    key = os.path.join(fixtures_dir, "crypt.key")
    img = rwimage(features=FEATURES + ",encrypt",
                  options=["key_file=" + key, "compress_extension=txt", "compress_log_size=2"])
    p = img.mount()
    top = os.path.join(p, "e")
    os.mkdir(top)
    subprocess.run([fusectl, "set_policy", KEY_ID, top], check=True, timeout=60)
    files = {"e/a.txt": bytearray(text(300 * 1024 + 77, 1)),
             "e/b.txt": bytearray(text(64 * 1024, 2))}
    for name, b in files.items():
        write_file(os.path.join(p, name), b)
    fd = os.open(os.path.join(p, "e/a.txt"), os.O_WRONLY)
    try:
        os.pwrite(fd, b"patched", 20000)
    finally:
        os.close(fd)
    files["e/a.txt"][20000:20007] = b"patched"
    os.truncate(os.path.join(p, "e/b.txt"), 10000)
    del files["e/b.txt"][10000:]
    assert cblocks(os.path.join(p, "e/a.txt")) > 0
    before = M.walk(p)
    assert before.errors == []
    diffs = M.compare(expect(content_of(files)), before.manifest)
    assert not diffs, M.report(diffs)
    img.unmount()
    fsutil.fsck_check(img.image)
    img.mount(options=["ro", "key_file=" + key])
    try:
        after = M.walk(img.path)
        assert after.errors == []
        diffs = M.compare(expect(content_of(files)), after.manifest)
        assert not diffs, M.report(diffs)
    finally:
        img.unmount()


@pytest.mark.slow
def test_cleaning_moves_compressed_clusters(rwimage):
    """Compressed files rewritten in pieces until the cleaner has had to
    move their blocks (compressed blocks move as they are, by their slot):
    every file still reads back, fsck.f2fs agrees."""
    from test_write_space import cleaning_stats
    img = rwimage(size=96 * MiB, options=["io_stats", "compress_extension=*",
                                          "compress_log_size=2"], features=FEATURES)
    p = img.mount()
    rng = random.Random(23)
    fsz = MiB
    # compressed clusters keep their whole reservation: size the files by it
    n = int(os.statvfs(p).f_bavail * 4096 * 0.85) // fsz
    files = {}
    for i in range(n):
        b = bytearray(text(fsz, i) if i % 2 else rng.randbytes(fsz))
        write_file(os.path.join(p, "f%d" % i), b)
        files[i] = b
    written = 0
    while written < 3 * 96 * MiB:
        i = rng.randrange(n)
        fd = os.open(os.path.join(p, "f%d" % i), os.O_WRONLY)
        try:
            for _ in range(8):
                off = rng.randrange(0, fsz // 4096) * 4096
                ln = min(rng.choice((4096, 16384, 65536)), fsz - off)
                d = text(ln, written) if rng.random() < 0.5 else rng.randbytes(ln)
                assert os.pwrite(fd, d, off) == ln
                files[i][off:off + ln] = d
                written += ln
        finally:
            os.close(fd)
    for i, b in files.items():
        with open(os.path.join(p, "f%d" % i), "rb") as f:
            assert f.read() == bytes(b), "f%d differs" % i
    m = img.unmount()
    runs, moved = cleaning_stats(m.stderr())
    assert runs > 0 and moved > 0, m.stderr()
    fsutil.fsck_check(img.image)
    img.mount(options=["ro"])
    try:
        for i, b in files.items():
            with open(os.path.join(img.path, "f%d" % i), "rb") as f:
                assert f.read() == bytes(b), "f%d differs after remount" % i
    finally:
        img.unmount()


def mixed(n, seed):
    """n bytes alternating 24 KiB of text and 40 KiB of random bytes, so
    that one write's clusters mix compressed and raw ones."""
    rng = random.Random(seed)
    out = bytearray()
    while len(out) < n:
        out += text(24 * 1024, rng.randrange(1 << 30)) + rng.randbytes(40 * 1024)
    return bytes(out[:n])


@pytest.mark.parametrize("log,threads", [(2, 0), (2, 1), (5, 4)])
def test_batches_across_nodes(rwimage, log, threads):
    """Writes and reads of many clusters at once (a direct node's clusters
    go together): files spanning the inode's slots and several direct
    nodes, written in 1 MiB + 4097 byte pieces from an unaligned offset,
    compressed and raw clusters mixed in each; then rewritten in the middle;
    read back with aligned, unaligned and small reads, before and after a
    remount; fsck.f2fs agrees.  The codec work on one thread, the default
    (one per CPU) and four."""
    opts = ["compress_extension=*", "compress_log_size=%d" % log]
    img = rwimage(size=160 * MiB, features=FEATURES,
                  options=opts + (["compress_threads=%d" % threads] if threads else []))
    p = img.mount()
    size = 11 * MiB + 777
    b = bytearray(size)
    b[1000:] = mixed(size - 1000, log)
    fd = os.open(os.path.join(p, "f"), os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        for off in range(1000, size, MiB + 4097):
            n = min(MiB + 4097, size - off)
            assert os.pwrite(fd, b[off:off + n], off) == n
        # a rewrite of 3 MiB across a node boundary, then one inside a cluster
        d = mixed(3 * MiB + 5, 99)
        assert os.pwrite(fd, d, 3 * MiB + 333) == len(d)
        b[3 * MiB + 333:3 * MiB + 333 + len(d)] = d
        assert os.pwrite(fd, b"x" * 10, 5 * MiB + 7) == 10
        b[5 * MiB + 7:5 * MiB + 17] = b"x" * 10
    finally:
        os.close(fd)
    assert 0 < cblocks(os.path.join(p, "f"))

    def check():
        path = os.path.join(p, "f")
        with open(path, "rb", buffering=0) as f:
            assert f.read() == bytes(b)
            for off, n in ((0, MiB), (12345, 100000), (4 * MiB - 3, 4096), (size - 10, 10)):
                f.seek(off)
                assert f.read(n) == bytes(b[off:off + n]), (off, n)
    check()
    img.unmount()
    fsutil.fsck_check(img.image)
    p = img.mount(ro=True)
    try:
        check()
    finally:
        img.unmount()


def test_out_of_space_part_way(rwimage):
    """A compressed file written until the space runs out: the write that
    hits it is short (or fails whole), what was written reads back, and
    fsck.f2fs is clean."""
    img = rwimage(size=96 * MiB, features=FEATURES, options=["compress_extension=*"])
    p = img.mount()
    path = os.path.join(p, "f")
    rng = random.Random(5)
    data = bytearray()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        while True:
            d = rng.randbytes(MiB // 2) + text(MiB // 2, len(data))
            try:
                n = os.write(fd, d)
            except OSError as e:
                assert e.errno == errno.ENOSPC
                break
            data += d[:n]
            if n < len(d):
                break
    finally:
        os.close(fd)
    assert len(data) > 32 * MiB
    assert os.path.getsize(path) == len(data)
    with open(path, "rb") as f:
        assert f.read() == bytes(data)
    img.unmount()
    fsutil.fsck_check(img.image)
