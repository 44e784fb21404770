"""Writeback: how concurrent writers' blocks land on the device.

-o serialize_io decides whose writes allocate (and write) under the mount's
writepages lock, as the kernel's __should_serialize_io does: then each
write takes its blocks as one run from the data log and reaches the device
as one request, instead of interleaving block by block with the other
writers (the seed patch "f2fs: serialize writeback for inline-crypto
inodes").  f2fs-fusectl extents shows where each file's blocks went;
fsck.f2fs after every test."""

import hashlib
import os
import struct
import threading

import pytest

import fsutil
from test_ioctl import extents
from test_keys import Ctl, fusectl  # noqa: F401
from test_write import MiB, RWImage, blob

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
], ids=["auto-encrypted", "alloc-encrypted", "never-encrypted", "auto-plain-min_seq_blocks"])
def test_concurrent_writers_runs(f2fs_fuse, fusectl, tmp_path, mode, crypt,  # noqa: F811
                                 contiguous):
    """8 threads write 1 MiB O_SYNC writes to their own files (the seed's
    job).  Serialized (encrypted files under auto and alloc, plain files
    once writes reach min_seq_blocks), every write is one physical run:
    a file's extents only break where a write starts or a segment ends.
    Under never the writers' blocks interleave."""
    img = RWImage(f2fs_fuse, tmp_path, features="encrypt", size=1024 * MiB,
                  options=["rw", NO_PERIODIC, "serialize_io=" + mode])
    try:
        p = img.mount()
        top = crypt_setup(fusectl, p) if crypt else p
        seg0, bps = geometry(img.image)
        # interleaving needs two writers allocating at the same moment: a
        # few rounds give it the chance
        for rnd in range(1 if contiguous else 12):
            prefix = "wb%d" % rnd
            data = concurrent_osync_writers(top, 7 + rnd, prefix)
            found = {}
            for i in data:
                ext = extents(fusectl, os.path.join(top, "%s.%d" % (prefix, i)))
                assert sum(e[2] for e in ext) == WRITES * WRITE // BLK
                found[i] = breaks(ext, seg0, bps, WRITE // BLK)
            check_files(top, data, prefix)
            if any(found.values()):
                break
            for i in data:
                os.unlink(os.path.join(top, "%s.%d" % (prefix, i)))
        if contiguous:
            assert all(not b for b in found.values()), found
        else:
            assert any(found.values()), "no interleaving under serialize_io=never"
        img.unmount()
        fsutil.fsck_check(img.image)
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
