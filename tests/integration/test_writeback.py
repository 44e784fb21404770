"""Writeback: how concurrent writers' blocks land on the device, and the
page cache of dirty data (-o writeback).

-o serialize_io decides whose writes allocate (and write) under the mount's
writepages lock, as the kernel's __should_serialize_io does: then each
write takes its blocks as one run from the data log and reaches the device
as one request, instead of interleaving block by block with the other
writers (the seed patch "f2fs: serialize writeback for inline-crypto
inodes").  f2fs-fusectl extents shows where each file's blocks went;
fsck.f2fs after every test."""

import errno
import hashlib
import os
import re
import struct
import threading

import pytest

import fsutil
from test_ioctl import extents
from test_keys import Ctl, fusectl  # noqa: F401
from test_write import (FALLOC_FL_KEEP_SIZE, FALLOC_FL_PUNCH_HOLE, FALLOC_FL_ZERO_RANGE, MiB,
                        RWImage, blob, fallocate)

NO_PERIODIC = "checkpoint_interval=3600"
WRITERS = 8
WRITE = MiB
WRITES = 12
BLK = 4096


def geometry(image):
    """(segment0_blkaddr, blocks per segment) from the superblock."""
    with open(image, "rb") as f:
        f.seek(1024)
        sb = f.read(128)
    log_bps, = struct.unpack_from("<I", sb, 20)
    seg0, = struct.unpack_from("<I", sb, 72)
    return seg0, 1 << log_bps


def breaks(ext, seg0, bps, per_write):
    """Places where a file's next extent does not continue the previous one
    in the middle of a write: neither at a write's first block nor at a
    segment's end (where the log moves on)."""
    out = []
    for a, b in zip(ext, ext[1:]):
        lblk_a, pblk_a, len_a, _ = a
        lblk_b = b[0]
        if lblk_b % per_write == 0:
            continue
        if (pblk_a + len_a - seg0) % bps == 0:
            continue
        out.append((a, b))
    return out


def concurrent_osync_writers(top, seed, prefix="wb"):
    """WRITERS threads, each writing WRITES x WRITE bytes O_SYNC to its own file."""
    data = {}
    errors = []

    def writer(i):
        path = os.path.join(top, "%s.%d" % (prefix, i))
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_SYNC, 0o644)
            try:
                for w in range(WRITES):
                    assert os.write(fd, data[i][w * WRITE:(w + 1) * WRITE]) == WRITE
            finally:
                os.close(fd)
        except Exception as e:  # noqa: BLE001 (reported below)
            errors.append((i, e))

    for i in range(WRITERS):
        data[i] = blob(WRITES * WRITE, seed + i)
    threads = [threading.Thread(target=writer, args=(i,)) for i in range(WRITERS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    return data


def check_files(top, data, prefix="wb"):
    for i, want in data.items():
        with open(os.path.join(top, "%s.%d" % (prefix, i)), "rb") as f:
            got = f.read()
        assert hashlib.sha256(got).hexdigest() == hashlib.sha256(want).hexdigest(), i


def crypt_setup(fusectl, mnt):  # noqa: F811
    """A fresh v2 key and an encrypted directory under mnt."""
    ctl = Ctl(fusectl)
    key_id = ctl.out("add_key", mnt, input=os.urandom(64)).strip()
    top = os.path.join(mnt, "enc")
    os.mkdir(top)
    ctl.out("set_policy", key_id, top)
    return top


@pytest.mark.parametrize("mode,crypt,contiguous", [
    ("auto", True, True),
    ("alloc", True, True),
    ("never", True, False),
    ("auto,min_seq_blocks=64", False, True),
    ("auto,writeback", True, True),
    ("auto", False, "runs"),
    ("auto,direct", True, True),
    ("auto,writeback,direct", True, True),
    ("always,direct", False, True),
], ids=["auto-encrypted", "alloc-encrypted", "never-encrypted", "auto-plain-min_seq_blocks",
        "auto-encrypted-writeback", "auto-plain-unserialized", "auto-encrypted-direct",
        "auto-encrypted-writeback-direct", "always-plain-direct"])
def test_concurrent_writers_runs(f2fs_fuse, fusectl, tmp_path, mode, crypt,  # noqa: F811
                                 contiguous):
    """8 threads write 1 MiB O_SYNC writes to their own files (the seed's
    job).  Serialized (encrypted files under auto and alloc, plain files
    once writes reach min_seq_blocks), every write is one physical run:
    a file's extents only break where a write starts or a segment ends.
    Under never the writers' blocks interleave.  Plain files under auto
    are not serialized but still take runs ("runs"): a write breaks at most
    where its blocks pass from one direct node to the next, where another
    writer's run may come in between (3,072 blocks cross at most 3)."""
    img = RWImage(f2fs_fuse, tmp_path, features="encrypt", size=1024 * MiB,
                  options=["rw", NO_PERIODIC, "serialize_io=" + mode])
    try:
        p = img.mount()
        top = crypt_setup(fusectl, p) if crypt else p
        seg0, bps = geometry(img.image)
        # interleaving needs two writers allocating at the same moment: a
        # few rounds give it the chance
        for rnd in range(1 if contiguous is True else 12):
            prefix = "wb%d" % rnd
            data = concurrent_osync_writers(top, 7 + rnd, prefix)
            found = {}
            for i in data:
                ext = extents(fusectl, os.path.join(top, "%s.%d" % (prefix, i)))
                assert sum(e[2] for e in ext) == WRITES * WRITE // BLK
                found[i] = breaks(ext, seg0, bps, WRITE // BLK)
            check_files(top, data, prefix)
            if contiguous == "runs":
                assert all(len(b) <= 3 for b in found.values()), (rnd, found)
            elif any(found.values()):
                break
            for i in data:
                os.unlink(os.path.join(top, "%s.%d" % (prefix, i)))
        if contiguous is True:
            assert all(not b for b in found.values()), found
        elif not contiguous:
            assert any(found.values()), "no interleaving under serialize_io=never"
        img.unmount()
        fsutil.fsck_check(img.image)
    finally:
        img.close()


@pytest.mark.parametrize("direct", [False, True], ids=["buffered", "direct"])
def test_osync_writes_one_request_each(f2fs_fuse, tmp_path, direct):
    """One writer's 1 MiB O_SYNC writes cost the device two writes each
    (the image opened buffered, or -o direct: from the daemon's own
    aligned buffers):
    the data as one run and the fsync's nodes as one run.  The summary
    block of each segment the data log fills waits for the checkpoint (as
    the kernel keeps it in its meta page cache) instead of a 4 KiB write of
    its own per 2 MiB; the checkpoint at unmount writes them, and fsck
    finds every summary right; after a crash the kernel's roll-forward and
    ours need only the checkpointed ones."""
    n = 64
    img = RWImage(f2fs_fuse, tmp_path, size=512 * MiB,
                  options=["rw", NO_PERIODIC, "serialize_io=always", "io_stats"] +
                  (["direct"] if direct else []))
    try:
        p = img.mount()
        data = blob(n * MiB, 3)
        fd = os.open(os.path.join(p, "f"), os.O_WRONLY | os.O_CREAT | os.O_SYNC, 0o644)
        try:
            for i in range(n):
                assert os.write(fd, data[i * MiB:(i + 1) * MiB]) == MiB
        finally:
            os.close(fd)
        st = img.unmount().stderr()
        m = re.search(r"writes (\d+) \((\d+) bytes\)", st)
        big = re.search(r">=512K\s+\d+\s+(\d+)", st)
        assert m and big, st
        # n data runs (a few split where a segment ends), n node commits,
        # the creation's nodes: not the n / 2 summary blocks besides
        assert int(big.group(1)) >= n - 4, st
        assert int(m.group(1)) <= 2 * n + 8, st
        fsutil.fsck_check(img.image)
        p = img.mount(ro=True)
        assert daemon_read(os.path.join(p, "f")) == data
        img.unmount()
    finally:
        img.close()


def test_serialize_io_option(f2fs_fuse, tmp_path):
    """A mode the daemon does not know refuses the mount."""
    img = RWImage(f2fs_fuse, tmp_path, size=64 * MiB)
    mnt = tmp_path / "bad"
    mnt.mkdir()
    for bad in ("serialize_io=sometimes", "min_seq_blocks=0", "min_seq_blocks=x"):
        r = fsutil.run([f2fs_fuse, "-f", "-o", bad, img.image, str(mnt)], timeout=30)
        assert r.returncode != 0 and "invalid option value" in r.stdout, (bad, r.stdout)


# ---------------------------------------------------------------- -o writeback

WB = ["rw", NO_PERIODIC, "writeback", "dirty_expire_ms=60000"]
# Writes of 128 KiB or more of whole blocks bypass the page cache (they are
# runs already); the tests of the cache write in smaller pieces.
CHUNK = 64 * 1024


def small_writes(fd, data, off=0):
    for o in range(0, len(data), CHUNK):
        piece = data[o:o + CHUNK]
        assert os.pwrite(fd, piece, off + o) == len(piece)


def put_small(path, data):
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        small_writes(fd, data)
    finally:
        os.close(fd)


def crash_after_dir_fsync(img, p, synced, dirty):
    """fsync the top directory (a checkpoint, which writes "dirty"'s data
    from the daemon's page cache first), kill the daemon, fsck, mount
    again: "synced" and "dirty" are back whole.  Returns the new mount
    point."""
    fd = os.open(p, os.O_RDONLY)
    os.fsync(fd)
    os.close(fd)
    img.crash()
    fsutil.fsck_check(img.image)
    p = img.mount()
    assert daemon_read(os.path.join(p, "synced")) == synced
    assert daemon_read(os.path.join(p, "dirty")) == dirty
    return p


def daemon_read(path, n=None):
    """Read through the daemon: the kernel's cached pages of the file go first."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        size = os.fstat(fd).st_size if n is None else n
        out = b""
        while len(out) < size:
            b = os.pread(fd, size - len(out), len(out))
            if not b:
                break
            out += b
        return out
    finally:
        os.close(fd)


def test_writeback_coherence(f2fs_fuse, tmp_path):
    """Dirty data is read back before it is written; truncation, punching,
    zeroing, fallocate and overwrites of dirty ranges give what a model
    file gives, before and after unmount; fsck is clean."""
    img = RWImage(f2fs_fuse, tmp_path, size=256 * MiB, options=WB)
    try:
        p = img.mount()
        path = os.path.join(p, "f")
        model = bytearray()

        def pwrite(fd, data, off):
            small_writes(fd, data, off)
            if off > len(model):
                model.extend(bytes(off - len(model)))
            model[off:off + len(data)] = data

        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            pwrite(fd, blob(3 * MiB + 123, 1), 0)
            for i in range(40):                       # unaligned small writes
                pwrite(fd, blob(1000 + i, 10 + i), 4096 * i * 7 + 333)
            assert daemon_read(path) == bytes(model)
            pwrite(fd, blob(5000, 2), 5 * MiB)          # past EOF: a hole between
            assert daemon_read(path) == bytes(model)
            os.ftruncate(fd, 2 * MiB + 77)              # truncation of dirty data
            del model[2 * MiB + 77:]
            assert daemon_read(path) == bytes(model)
            pwrite(fd, blob(9000, 3), 2 * MiB)          # dirty again, then punched
            fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 1 * MiB, 65536)
            model[MiB:MiB + 65536] = bytes(65536)
            pwrite(fd, blob(70000, 4), 100)
            fallocate(fd, FALLOC_FL_ZERO_RANGE, 50000, 10000)
            model[50000:60000] = bytes(10000)
            pwrite(fd, blob(4096, 5), 8192)
            fallocate(fd, 0, len(model), 3 * 4096)      # extends with zeros
            model.extend(bytes(3 * 4096))
            assert daemon_read(path) == bytes(model)
            os.ftruncate(fd, len(model) + 10)           # extension: zeros
            model.extend(bytes(10))
            pwrite(fd, blob(4096 * 3, 6), 4096 * 100)
        finally:
            os.close(fd)
        assert daemon_read(path) == bytes(model)
        img.unmount()
        fsutil.fsck_check(img.image)
        p = img.mount(ro=True)
        assert daemon_read(os.path.join(p, "f")) == bytes(model)
        img.unmount()
    finally:
        img.close()


def test_writeback_sigkill(f2fs_fuse, tmp_path):
    """SIGKILL with dirty pages: what fsync() returned for survives; a file
    written but not synced has, block by block, its new data or zeros, never
    other data; fsck is clean."""
    img = RWImage(f2fs_fuse, tmp_path, size=256 * MiB, options=WB)
    try:
        p = img.mount()
        a, b = blob(2 * MiB + 5, 1), blob(3 * MiB, 2)
        fd = os.open(os.path.join(p, "synced"), os.O_RDWR | os.O_CREAT, 0o644)
        os.write(fd, a)
        os.fsync(fd)
        os.close(fd)
        put_small(os.path.join(p, "dirty"), b)
        crash_after_dir_fsync(img, p, a, b)
        img.unmount()
        fsutil.fsck_check(img.image)
    finally:
        img.close()


def test_fsync_checkpoint_carries_cached_data(f2fs_fuse, tmp_path):
    """generic/341's sequence: data sync(2) pushed into the daemon (which
    hears no sync), a directory renamed, a new one fsync()ed, a crash.
    The fsync's checkpoint commits the files' sizes, so it writes their
    cached data first: after the crash both files hold their data, not
    holes."""
    img = RWImage(f2fs_fuse, tmp_path, size=256 * MiB, options=WB)
    try:
        p = img.mount()
        os.makedirs(os.path.join(p, "a", "x"))
        foo, bar = b"\xaf" * 32768, b"\xba" * 32768
        put_small(os.path.join(p, "a", "x", "foo"), foo)
        put_small(os.path.join(p, "a", "x", "bar"), bar)
        os.sync()
        os.rename(os.path.join(p, "a", "x"), os.path.join(p, "a", "y"))
        os.mkdir(os.path.join(p, "a", "x"))
        fd = os.open(os.path.join(p, "a", "x"), os.O_RDONLY)
        os.fsync(fd)
        os.close(fd)
        img.crash()
        fsutil.fsck_check(img.image)
        p = img.mount(ro=True)
        assert sorted(os.listdir(os.path.join(p, "a"))) == ["x", "y"]
        assert daemon_read(os.path.join(p, "a", "y", "foo")) == foo
        assert daemon_read(os.path.join(p, "a", "y", "bar")) == bar
        img.unmount()
    finally:
        img.close()


def test_writeback_enospc(f2fs_fuse, tmp_path):
    """Delayed allocation never over-commits: write(2) fails with ENOSPC
    while the space is reserved, and writeback and unmount then succeed
    with fsck clean."""
    img = RWImage(f2fs_fuse, tmp_path, size=128 * MiB, options=WB)
    try:
        p = img.mount()
        written = 0
        fd = os.open(os.path.join(p, "big"), os.O_WRONLY | os.O_CREAT, 0o644)
        try:
            chunk = blob(CHUNK, 3)
            with pytest.raises(OSError) as ei:
                while True:
                    written += os.write(fd, chunk)
            assert ei.value.errno == errno.ENOSPC
            os.fsync(fd)
        finally:
            os.close(fd)
        assert written > 32 * MiB
        assert os.path.getsize(os.path.join(p, "big")) == written
        img.unmount()
        fsutil.fsck_check(img.image)
    finally:
        img.close()


def test_writeback_key_removal(f2fs_fuse, fusectl, tmp_path):  # noqa: F811
    """Removing a key writes the dirty pages of its files first (encrypted):
    after the key comes back, the data reads as written."""
    img = RWImage(f2fs_fuse, tmp_path, features="encrypt", size=256 * MiB, options=WB)
    try:
        p = img.mount()
        key = os.urandom(64)
        ctl = Ctl(fusectl)
        key_id = ctl.out("add_key", p, input=key).strip()
        top = os.path.join(p, "enc")
        os.mkdir(top)
        ctl.out("set_policy", key_id, top)
        data = blob(MiB + 4097, 9)
        put_small(os.path.join(top, "f"), data)
        ctl.out("remove_key", key_id, p)
        with open(img.image, "rb") as f:
            assert data[:4096] not in f.read(), "plaintext on the image"
        ctl.out("add_key", p, input=key)
        assert daemon_read(os.path.join(top, "f")) == data
        img.unmount()
        fsutil.fsck_check(img.image)
    finally:
        img.close()


def test_writeback_shutdown_drops(f2fs_fuse, tmp_path):
    """A shutdown without sync drops the dirty pages: nothing of them
    reaches the image, which fsck finds clean, and fsync()ed data stays."""
    import test_ioctl
    img = RWImage(f2fs_fuse, tmp_path, size=128 * MiB, options=WB)
    try:
        p = img.mount()
        a = blob(300000, 1)
        fd = os.open(os.path.join(p, "synced"), os.O_RDWR | os.O_CREAT, 0o644)
        os.write(fd, a)
        os.fsync(fd)
        os.write(fd, blob(200000, 2))
        os.close(fd)
        test_ioctl.f2fs_io("shutdown", 2, p)
        img.unmount(check=False)
        fsutil.fsck_check(img.image)
        p = img.mount()
        assert daemon_read(os.path.join(p, "synced")) == a
        img.unmount()
        fsutil.fsck_check(img.image)
    finally:
        img.close()


def test_writeback_cleaning_trim_defrag(f2fs_fuse, fusectl, tmp_path):  # noqa: F811
    """Cleaning every section, FITRIM and defragmentation while files have
    dirty pages (over blocks on the device and over reserved ones): the
    moves and discards touch only what is on the device, reads give the
    dirty data all along, and after unmount the image holds it, fsck clean."""
    import test_ioctl
    img = RWImage(f2fs_fuse, tmp_path, size=128 * MiB, options=WB)
    try:
        p = img.mount()
        a, b = os.path.join(p, "a"), os.path.join(p, "b")
        ma = bytearray(blob(600 * BLK, 1))
        with open(a, "wb") as f:                   # on the device, then the log moves on
            f.write(ma)
            f.flush()
            os.fsync(f.fileno())
        with open(os.path.join(p, "filler"), "wb") as f:
            f.write(blob(3 * MiB, 2))
            f.flush()
            os.fsync(f.fileno())
        os.unlink(os.path.join(p, "filler"))
        fd = os.open(a, os.O_RDWR)
        try:
            for off in range(5, len(ma), 37 * BLK + 301):  # dirty pages over written blocks
                d = blob(3000, off)
                assert os.pwrite(fd, d, off) == len(d)
                ma[off:off + len(d)] = d
            tail = blob(50 * BLK + 17, 3)                 # and over reserved ones
            assert os.pwrite(fd, tail, len(ma)) == len(tail)
            ma += tail
        finally:
            os.close(fd)
        mb = blob(2 * MiB + 5, 4)
        put_small(b, mb)                             # only in the page cache
        with open(img.image, "rb") as f:
            sb = f.read(2048)[1024:]
        main = struct.unpack_from("<I", sb, 92)[0]
        seg_main = struct.unpack_from("<I", sb, 68)[0]
        fd = os.open(p, os.O_RDONLY)
        try:
            assert test_ioctl.ioctl_err(fd, test_ioctl.GC_RANGE,
                                        struct.pack("IxxxxQQ", 1, main, seg_main * 512 - 1)) == 0
        finally:
            os.close(fd)
        st = fsutil.run([fusectl, "status", p]).stdout
        assert int(st.split("- data blocks : ")[1].split()[0]) >= 500, st
        assert daemon_read(a) == bytes(ma)
        assert daemon_read(b) == mb
        r = fsutil.run(["fstrim", "-v", p])
        assert r.returncode == 0, r.stdout + r.stderr
        assert daemon_read(a) == bytes(ma)
        assert daemon_read(b) == mb
        with open(b, "r+b") as f:                    # dirty again, then defragmented
            f.seek(MiB)
            f.write(blob(BLK, 5))
        mb = mb[:MiB] + blob(BLK, 5) + mb[MiB + BLK:]
        test_ioctl.f2fs_io("defrag_file", 0, 2 * MiB, b)
        assert daemon_read(b) == mb
        img.unmount()
        fsutil.fsck_check(img.image)
        p = img.mount(ro=True)
        assert daemon_read(os.path.join(p, "a")) == bytes(ma)
        assert daemon_read(os.path.join(p, "b")) == mb
        img.unmount()
    finally:
        img.close()


def test_writeback_truncate_drops(f2fs_fuse, tmp_path):
    """A truncation drops the dirty pages past the new size instead of
    writing them (O_TRUNC rewrites write each version at most once); the
    page it cuts reads zeros past it after an extension."""
    img = RWImage(f2fs_fuse, tmp_path, size=128 * MiB, options=WB + ["io_stats"])
    try:
        p = img.mount()
        f = os.path.join(p, "f")
        fd = os.open(f, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            data = blob(4 * MiB + 100, 1)
            small_writes(fd, data)
            os.ftruncate(fd, MiB + 10)
            assert daemon_read(f) == data[:MiB + 10]
            os.ftruncate(fd, 2 * MiB)
            model = data[:MiB + 10] + bytes(MiB - 10)
            assert daemon_read(f) == model
        finally:
            os.close(fd)
        for i in range(8):                         # rewritten whole, never synced
            put_small(os.path.join(p, "r"), blob(2 * MiB, 10 + i))
        assert daemon_read(os.path.join(p, "r")) == blob(2 * MiB, 10 + i)
        st = img.unmount().stderr()
        wb = [ln for ln in st.splitlines() if "pages dirtied" in ln]
        assert wb, st
        dirtied, written, dropped = (int(x) for x in re.findall(
            r"(\d+) pages dirtied, (\d+) written back, (\d+) dropped", wb[0])[0])
        # 4 MiB cut to 1 MiB and seven 2 MiB versions: never written
        assert dropped >= (3 * MiB + 7 * 2 * MiB) // BLK - 1, wb[0]
        assert written <= (MiB + 2 * MiB) // BLK + 2, wb[0]
        fsutil.fsck_check(img.image)
        p = img.mount(ro=True)
        assert daemon_read(os.path.join(p, "f")) == model
        assert daemon_read(os.path.join(p, "r")) == blob(2 * MiB, 17)
        img.unmount()
    finally:
        img.close()


def wb_status(fusectl, mnt):  # noqa: F811
    """(dirty pages, dirty inodes, dirtied, written, dropped) from f2fs-fusectl status."""
    out = Ctl(fusectl).out("status", mnt)
    m = re.search(r"Dirty data: (\d+) pages \(\d+ KiB\) in (\d+) inodes", out)
    n = re.search(r"pages dirtied (\d+), written back (\d+), dropped (\d+)", out)
    assert m and n, out
    return tuple(int(x) for x in m.groups() + n.groups())


def test_writeback_punch_zero_drops(f2fs_fuse, fusectl, tmp_path):  # noqa: F811
    """Punching a hole in dirty data and zeroing a dirty range drop the
    pages wholly inside the range instead of writing them, and zero the
    parts of the pages the range cuts, as truncation does; f2fs-fusectl
    status counts the dirty pages live; the file reads as a model does,
    before and after unmount; fsck is clean."""
    img = RWImage(f2fs_fuse, tmp_path, size=128 * MiB, options=WB)
    try:
        p = img.mount()
        f = os.path.join(p, "f")
        model = bytearray(blob(4 * MiB, 1))
        fd = os.open(f, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            small_writes(fd, model)
            assert wb_status(fusectl, p)[:3] == (4 * MiB // BLK, 1, 4 * MiB // BLK)
            # 256 pages wholly inside, two pages cut at the edges
            fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, MiB - 100, MiB + 200)
            model[MiB - 100:2 * MiB + 100] = bytes(MiB + 200)
            fallocate(fd, FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE, 3 * MiB + 5, MiB // 2)
            model[3 * MiB + 5:3 * MiB + 5 + MiB // 2] = bytes(MiB // 2)
            # inside one page: nothing dropped, the page zeroed there
            fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 10, 30)
            model[10:40] = bytes(30)
            dirty, inodes, dirtied, written, dropped = wb_status(fusectl, p)
            gone = MiB // BLK + (MiB // 2) // BLK - 1
            assert (dirty, written, dropped) == (4 * MiB // BLK - gone, 0, gone)
            assert daemon_read(f) == bytes(model)
            os.fsync(fd)
            dirty, inodes, dirtied, written, dropped = wb_status(fusectl, p)
            assert (dirty, inodes, written) == (0, 0, 4 * MiB // BLK - gone)
            assert daemon_read(f) == bytes(model)
            # blocks on the device now: the cut pages' blocks are rewritten
            small_writes(fd, blob(2 * BLK, 2), 0)
            model[:2 * BLK] = blob(2 * BLK, 2)
            fallocate(fd, FALLOC_FL_ZERO_RANGE | FALLOC_FL_KEEP_SIZE, 100, BLK)
            model[100:100 + BLK] = bytes(BLK)
            fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 3 * MiB - 7, 20)
            model[3 * MiB - 7:3 * MiB + 13] = bytes(20)
            assert daemon_read(f) == bytes(model)
        finally:
            os.close(fd)
        img.unmount()
        fsutil.fsck_check(img.image)
        p = img.mount(ro=True)
        assert daemon_read(os.path.join(p, "f")) == bytes(model)
        img.unmount()
    finally:
        img.close()


def test_writeback_sync_and_direct_write_through(f2fs_fuse, tmp_path):
    """O_SYNC, O_DSYNC and O_DIRECT writes bypass the page cache (their
    fsync follows, or the caller wants the device), as do buffered writes
    of 128 KiB or more of whole blocks: nothing of them is dirtied; one over a file's dirty pages writes those first, and the file
    reads as the writes were made."""
    import mmap
    img = RWImage(f2fs_fuse, tmp_path, size=128 * MiB, options=WB + ["io_stats"])
    try:
        p = img.mount()
        for name, flag in (("s", os.O_SYNC), ("d", os.O_DSYNC)):
            fd = os.open(os.path.join(p, name), os.O_WRONLY | os.O_CREAT | flag, 0o644)
            try:
                for i in range(4):
                    os.write(fd, blob(MiB, i))
            finally:
                os.close(fd)
        with open(os.path.join(p, "big"), "wb") as g:  # whole blocks, 1 MiB a write
            g.write(blob(2 * MiB, 9))
        f = os.path.join(p, "mix")
        model = bytearray(blob(MiB, 7))
        put_small(f, model)                          # dirty pages
        fd = os.open(f, os.O_WRONLY | os.O_DIRECT)
        try:
            buf = mmap.mmap(-1, 256 * 1024)          # aligned for O_DIRECT
            buf.write(blob(256 * 1024, 8))
            assert os.pwrite(fd, buf, 128 * 1024) == 256 * 1024
            model[128 * 1024:384 * 1024] = blob(256 * 1024, 8)
        finally:
            os.close(fd)
        assert daemon_read(f) == bytes(model)
        for name in ("s", "d"):
            assert daemon_read(os.path.join(p, name)) == b"".join(blob(MiB, i) for i in range(4))
        assert daemon_read(os.path.join(p, "big")) == blob(2 * MiB, 9)
        st = img.unmount().stderr()
        dirtied = int(re.search(r"(\d+) pages dirtied", st).group(1))
        assert dirtied == MiB // BLK, st             # the buffered write's only
        fsutil.fsck_check(img.image)
        p = img.mount(ro=True)
        assert daemon_read(os.path.join(p, "mix")) == bytes(model)
        img.unmount()
    finally:
        img.close()
