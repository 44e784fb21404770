"""Compressed files through the page cache (-o writeback): write(2) dirties
pages, and writeback writes each dirty cluster once, whole (the rest of it
read from the file), compressed when it lies inside i_size and saves a
block.  The -o io_stats counters show how often the codec ran and how many
clusters were written; reads see dirty pages; truncation, fsync, O_SYNC,
the release ioctl and a crash with dirty clusters give what a model file
gives; fsck.f2fs after every test that writes."""

import errno
import fcntl
import os
import re
import struct
import threading

import pytest

import fsutil
from test_compress_write import (F2FS_IOC_GET_COMPRESS_BLOCKS, F2FS_IOC_RELEASE_COMPRESS_BLOCKS,
                                 FEATURES, text)
from test_ioctl import extents
from test_keys import fusectl  # noqa: F401
from test_write import MiB, RWImage
from test_writeback import NO_PERIODIC, breaks, crash_after_dir_fsync, daemon_read, geometry

BLK = 4096
WB = ["rw", NO_PERIODIC, "writeback", "dirty_expire_ms=60000", "io_stats",
      "compress_extension=*"]


def ioctl_u64(fd, req):
    return struct.unpack("<Q", fcntl.ioctl(fd, req, b"\0" * 8))[0]


def compression_stats(stderr):
    """(codec runs, clusters written compressed, clusters written raw) from
    the -o io_stats report at unmount."""
    m = re.search(r"compression: (\d+) clusters through the codec; "
                  r"clusters written: (\d+) compressed, (\d+) raw", stderr)
    assert m, "no compression line in:\n" + stderr
    return tuple(int(g) for g in m.groups())


def appends(path, data, piece):
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        for o in range(0, len(data), piece):
            assert os.write(fd, data[o:o + piece]) == len(data[o:o + piece])
    finally:
        os.close(fd)


@pytest.mark.parametrize("piece", [4096, 1000])
def test_appends_compress_each_cluster_once(f2fs_fuse, tmp_path, piece):
    """Small appends to a compressed file: each cluster goes through the
    codec once and is written once, however many writes filled it (at
    write(2), each append rewrote its cluster, and an unaligned one that
    completed it compressed it again).  The partial last cluster is written
    raw, as the kernel leaves it."""
    log = 2
    cbytes = BLK << log
    full = 64
    data = text(full * cbytes + 5000, 3)
    img = RWImage(f2fs_fuse, tmp_path, features=FEATURES, size=128 * MiB,
                  options=WB + ["compress_algorithm=lz4", "compress_log_size=%d" % log])
    try:
        p = img.mount()
        path = os.path.join(p, "f")
        appends(path, data, piece)
        assert daemon_read(path) == data
        m = img.unmount()
        runs, compressed, raw = compression_stats(m.stderr())
        assert (runs, compressed, raw) == (full, full, 1), m.stderr()
        fsutil.fsck_check(img.image)
        p = img.mount(ro=True)
        assert daemon_read(os.path.join(p, "f")) == data
        fd = os.open(os.path.join(p, "f"), os.O_RDONLY)
        try:
            # lz4 saves at least a block of every cluster of this text
            assert ioctl_u64(fd, F2FS_IOC_GET_COMPRESS_BLOCKS) >= full
        finally:
            os.close(fd)
        img.unmount()
    finally:
        img.close()


@pytest.mark.parametrize("algo,log", [("lz4", 2), ("zstd", 3), ("lzo-rle", 4)])
def test_dirty_cluster_cases(f2fs_fuse, tmp_path, algo, log):
    """Against a model file, reading through the daemon between steps (dirty
    pages over the file's clusters): a rewrite inside a compressed cluster,
    a partial cluster at EOF, writes past EOF leaving a hole, truncation
    inside a dirty cluster and up again, an O_SYNC write into a dirty
    cluster, fsync in between; then unmount, fsck, and a read-only remount
    reads the same."""
    cbytes = BLK << log
    img = RWImage(f2fs_fuse, tmp_path, features=FEATURES, size=128 * MiB,
                  options=WB + ["compress_algorithm=" + algo, "compress_log_size=%d" % log,
                                "compress_chksum"])
    try:
        p = img.mount()
        path = os.path.join(p, "f")
        model = bytearray()

        def pwrite(fd, data, off):
            for o in range(0, len(data), 8192):
                piece = data[o:o + 8192]
                assert os.pwrite(fd, piece, off + o) == len(piece)
            if off > len(model):
                model.extend(bytes(off - len(model)))
            model[off:off + len(data)] = data

        def check():
            assert daemon_read(path) == bytes(model)

        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            pwrite(fd, text(6 * cbytes, 1), 0)
            os.fsync(fd)                          # compressed clusters on disk
            assert ioctl_u64(fd, F2FS_IOC_GET_COMPRESS_BLOCKS) > 0
            pwrite(fd, b"rewritten inside a cluster", cbytes + 100)
            pwrite(fd, text(3000, 2), 3 * cbytes - 1000)    # across two clusters
            check()
            pwrite(fd, text(cbytes + 5000, 3), 6 * cbytes)  # a partial cluster at EOF
            check()
            pwrite(fd, text(2000, 4), 10 * cbytes + 300)    # past EOF: a hole between
            check()
            os.ftruncate(fd, 7 * cbytes + 1234)             # inside the dirty EOF cluster
            del model[7 * cbytes + 1234:]
            check()
            os.ftruncate(fd, 9 * cbytes)                    # up again: zeros
            model.extend(bytes(9 * cbytes - len(model)))
            check()
            pwrite(fd, text(100, 5), 7 * cbytes + 2000)
            os.fsync(fd)
            check()
            pwrite(fd, text(5000, 6), 2 * cbytes + 10)      # dirty again, then O_SYNC over it
            sfd = os.open(path, os.O_WRONLY | os.O_SYNC)
            try:
                pwrite(sfd, b"synchronous" * 50, 2 * cbytes + 1000)
            finally:
                os.close(sfd)
            check()
            os.ftruncate(fd, 4 * cbytes + 77)               # into a compressed cluster on disk
            del model[4 * cbytes + 77:]
            pwrite(fd, text(700, 7), 4 * cbytes)            # and dirty in the cut cluster
            check()
        finally:
            os.close(fd)
        check()
        img.unmount()
        fsutil.fsck_check(img.image)
        p = img.mount(ro=True)
        assert daemon_read(os.path.join(p, "f")) == bytes(model)
        img.unmount()
    finally:
        img.close()


def test_release_with_dirty_clusters(f2fs_fuse, tmp_path):
    """F2FS_IOC_RELEASE_COMPRESS_BLOCKS on a file with dirty clusters writes
    them back first, so what it releases is what they saved; the file then
    refuses writes and reads the same."""
    img = RWImage(f2fs_fuse, tmp_path, features=FEATURES, size=128 * MiB,
                  options=WB + ["compress_log_size=3"])
    try:
        p = img.mount()
        path = os.path.join(p, "f")
        data = text(20 * (BLK << 3) + 777, 9)
        appends(path, data, 4096)
        blocks = os.stat(path).st_blocks
        fd = os.open(path, os.O_RDONLY)
        try:
            released = ioctl_u64(fd, F2FS_IOC_RELEASE_COMPRESS_BLOCKS)
        finally:
            os.close(fd)
        # every cluster of this text saves a block, and the partial last one is raw
        assert released >= 20
        assert os.stat(path).st_blocks == blocks - released * (BLK // 512)
        with pytest.raises(OSError) as e:
            appends(path, b"x", 1)
        assert e.value.errno == errno.EPERM
        assert daemon_read(path) == data
        img.unmount()
        fsutil.fsck_check(img.image)
    finally:
        img.close()


def test_fsync_then_crash(f2fs_fuse, tmp_path):
    """SIGKILL with dirty clusters: a compressed file fsync()ed, clusters
    of it dirtied again after, and a file written but never synced, then a
    directory's fsync (a checkpoint, which writes the cached clusters
    first) and the crash: both files read as they were at the checkpoint;
    fsck is clean before and after the next mount."""
    log = 2
    cbytes = BLK << log
    img = RWImage(f2fs_fuse, tmp_path, features=FEATURES, size=128 * MiB,
                  options=WB + ["compress_log_size=%d" % log])
    try:
        p = img.mount()
        a = bytearray(text(40 * cbytes + 3000, 1))
        b = text(30 * cbytes + 100, 2)
        appends(os.path.join(p, "synced"), a, 4096)
        fd = os.open(os.path.join(p, "synced"), os.O_RDWR)
        try:
            os.fsync(fd)
            later = b"dirty after the fsync" * 100
            os.pwrite(fd, later, 3 * cbytes + 5)
            a[3 * cbytes + 5:3 * cbytes + 5 + len(later)] = later
            synced = bytes(a)
        finally:
            os.close(fd)
        appends(os.path.join(p, "dirty"), b, 4096)
        p = crash_after_dir_fsync(img, p, synced, b)
        # a crashed cluster's reserved slots take a new write
        appends(os.path.join(p, "dirty"), b"more", 4)
        img.unmount()
        fsutil.fsck_check(img.image)
    finally:
        img.close()


def test_concurrent_writeback_runs(f2fs_fuse, fusectl, tmp_path):  # noqa: F811
    """8 threads dirty their own compressed files (incompressible data: raw
    clusters, a block per slot) in 64 KiB writes, then fsync them at once.
    Under serialize_io=auto a compressed file's writeback holds the
    writepages lock (the kernel's __should_serialize_io), so each file is
    one physical run, broken only where a segment ends.  (Under never the
    clusters of a direct node are still allocated in one tight loop, after
    their compression, so interleaving there is too rare to test for.)"""
    writers, size = 8, 2 * MiB
    img = RWImage(f2fs_fuse, tmp_path, features=FEATURES, size=512 * MiB,
                  options=WB + ["serialize_io=auto"])
    try:
        p = img.mount()
        seg0, bps = geometry(img.image)
        data = {i: os.urandom(size) for i in range(writers)}
        paths = {i: os.path.join(p, "w%d" % i) for i in data}
        errors = []
        barrier = threading.Barrier(writers)

        def writer(i):
            try:
                fd = os.open(paths[i], os.O_WRONLY | os.O_CREAT, 0o644)
                try:
                    for o in range(0, size, 65536):
                        assert os.write(fd, data[i][o:o + 65536]) == 65536
                    barrier.wait()
                    os.fsync(fd)
                finally:
                    os.close(fd)
            except Exception as e:  # noqa: BLE001 (reported below)
                errors.append((i, e))

        threads = [threading.Thread(target=writer, args=(i,)) for i in data]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert errors == []
        found = {}
        for i in data:
            ext = extents(fusectl, paths[i])
            assert sum(e[2] for e in ext) == size // BLK
            found[i] = breaks(ext, seg0, bps, size // BLK)
            assert daemon_read(paths[i]) == data[i]
        assert all(not b for b in found.values()), found
        img.unmount()
        fsutil.fsck_check(img.image)
    finally:
        img.close()
