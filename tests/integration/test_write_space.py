"""Space accounting on a read-write mount: statfs, running out of space and
recovering, and rewriting far more than the image holds (cleaning)."""

import errno
import os
import random
import re
import subprocess

import pytest

import fsutil
import manifest as M

from test_keys import KEY_ID, fusectl  # noqa: F401
from test_write import MiB, RWImage, blob, errno_of, expect, rwimage, sha, write_file  # noqa: F401


def fill(path, chunk=MiB, seed=0):
    """Write `path` in `chunk`-sized writes until ENOSPC; (bytes, sha256)."""
    import hashlib
    h = hashlib.sha256()
    done = 0
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    rng = random.Random(seed)
    try:
        while True:
            b = rng.randbytes(chunk)
            try:
                n = os.write(fd, b)
            except OSError as e:
                assert e.errno == errno.ENOSPC, e
                break
            h.update(b[:n])
            done += n
    finally:
        os.close(fd)
    return done, h.hexdigest()


def test_statfs_follows_writes(rwimage):
    img = rwimage()
    p = img.mount()
    s0 = os.statvfs(p)
    assert s0.f_namemax == 255 and s0.f_bsize == 4096
    write_file(os.path.join(p, "ten"), blob(10 * MiB, 1))
    s1 = os.statvfs(p)
    used = s0.f_bfree - s1.f_bfree
    assert 2560 <= used <= 2560 + 64, used
    assert s1.f_blocks == s0.f_blocks
    for i in range(100):
        write_file(os.path.join(p, "e%03d" % i), b"")
    s2 = os.statvfs(p)
    assert s1.f_ffree - s2.f_ffree >= 100, (s1.f_ffree, s2.f_ffree)
    os.unlink(os.path.join(p, "ten"))
    s3 = os.statvfs(p)
    assert s3.f_bfree >= s2.f_bfree + 2560 - 8, (s2.f_bfree, s3.f_bfree)
    img.finish(expect({"ten": {"type": "!"}}))
    p = img.mount(ro=True)
    try:
        s4 = os.statvfs(p)
    finally:
        img.unmount()
    assert (s4.f_bfree, s4.f_ffree) == (s3.f_bfree, s3.f_ffree)


@pytest.mark.slow
def test_enospc_and_recover(rwimage):
    """Fill the image with one file, then with small files, until ENOSPC;
    what was written stays intact; after deleting, as much fits again."""
    img = rwimage(size=96 * MiB)
    p = img.mount()
    avail = os.statvfs(p).f_bavail * 4096
    n1, h1 = fill(os.path.join(p, "big"))
    assert n1 >= avail * 0.8, (n1, avail)
    st = os.statvfs(p)
    assert st.f_bavail * 4096 < 4 * MiB, st
    assert os.stat(os.path.join(p, "big")).st_size == n1
    # the write that failed must leave no blocks behind
    img.unmount()
    fsutil.fsck_check(img.image)
    p = img.mount()
    # small files and directories until that fails too
    made = 0
    for i in range(5000):
        err = errno_of(write_file, os.path.join(p, "s%04d" % i), b"x" * 5000)
        if err:
            assert err == errno.ENOSPC, err
            break
        made += 1
    err = errno_of(os.mkdir, os.path.join(p, "dir-when-full"))
    assert err in (0, errno.ENOSPC), err
    os.unlink(os.path.join(p, "big"))
    n2, h2 = fill(os.path.join(p, "again"), chunk=256 * 1024, seed=1)
    assert n2 >= n1 * 0.8, (n1, n2)
    assert sha(open(os.path.join(p, "again"), "rb").read()) == h2
    for i in range(0, made, 2):
        os.unlink(os.path.join(p, "s%04d" % i))
    # freed by truncation, usable at once
    os.truncate(os.path.join(p, "again"), n2 // 2)
    write_file(os.path.join(p, "after"), blob(4 * MiB, 2))
    img.finish(expect({"again": {"size": str(n2 // 2)}, "big": {"type": "!"},
                       "after": {"content": sha(blob(4 * MiB, 2))}}))


@pytest.mark.slow
def test_churn_never_enospc(rwimage):
    """40 MiB of live data on a 128 MiB image, rewritten (whole files,
    partial overwrites, delete and recreate, some fsyncs) until four times
    the image size has been written: cleaning must keep up."""
    img = rwimage(size=128 * MiB)
    p = img.mount()
    rng = random.Random(7)
    files = {}
    for i in range(10):
        b = bytearray(blob(4 * MiB, i))
        write_file(os.path.join(p, "f%d" % i), b)
        files[i] = b
    written = 40 * MiB
    it = 0
    while written < 4 * 128 * MiB:
        it += 1
        i = rng.randrange(10)
        path = os.path.join(p, "f%d" % i)
        kind = rng.random()
        if kind < 0.5:
            b = bytearray(blob(4 * MiB, 1000 + it))
            write_file(path, b)
            files[i] = b
            written += len(b)
        elif kind < 0.8:
            off = rng.randrange(0, 4 * MiB - 4096)
            n = rng.randrange(1, 512 * 1024)
            n = min(n, 4 * MiB - off)
            d = blob(n, 2000 + it)
            fd = os.open(path, os.O_WRONLY)
            os.pwrite(fd, d, off)
            if it % 7 == 0:
                os.fsync(fd)
            os.close(fd)
            files[i][off:off + n] = d
            written += n
        else:
            os.unlink(path)
            b = bytearray(blob(4 * MiB, 3000 + it))
            write_file(path, b)
            files[i] = b
            written += len(b)
    for i, b in files.items():
        with open(os.path.join(p, "f%d" % i), "rb") as f:
            assert sha(f.read()) == sha(bytes(b)), "f%d differs" % i
    img.finish(expect({"f%d" % i: {"content": sha(bytes(b)), "size": str(4 * MiB)}
                       for i, b in files.items()}))


def cleaning_stats(stderr):
    """(cleaning runs, data blocks moved) from -o io_stats output."""
    m = re.search(r"cleaning: (\d+) runs, \d+ sections, (\d+) data and \d+ node blocks moved",
                  stderr)
    assert m, stderr
    return int(m.group(1)), int(m.group(2))


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["plain", "encrypted"])
def test_churn_near_full(rwimage, fusectl, fixtures_dir, kind):
    """Live data at 95% of what statfs offers, rewritten in small random
    pieces until four times the image size has gone through: cleaning must
    keep up without ENOSPC, and must really have moved blocks (in the
    encrypted directory as ciphertext: what reads back is the plaintext)."""
    key = os.path.join(fixtures_dir, "crypt.key")
    opts = ["io_stats"]
    if kind == "encrypted":
        opts.append("key_file=" + key)
    img = rwimage(size=128 * MiB, features="encrypt" if kind == "encrypted" else None,
                  options=opts)
    p = img.mount()
    top = os.path.join(p, "d")
    os.mkdir(top)
    if kind == "encrypted":
        subprocess.run([fusectl, "set_policy", KEY_ID, top], check=True, timeout=60)
    fsz = 2 * MiB
    n = int(os.statvfs(p).f_bavail * 4096 * 0.95) // fsz
    rng = random.Random(17)
    files = {}
    for i in range(n):
        b = bytearray(rng.randbytes(fsz))
        write_file(os.path.join(top, "f%d" % i), b)
        files[i] = b
    written = 0
    while written < 4 * 128 * MiB:
        i = rng.randrange(n)
        fd = os.open(os.path.join(top, "f%d" % i), os.O_WRONLY)
        try:
            for _ in range(8):
                off = rng.randrange(0, fsz // 4096) * 4096
                d = rng.randbytes(min(rng.choice((4096, 16384, 65536)), fsz - off))
                assert os.pwrite(fd, d, off) == len(d)
                files[i][off:off + len(d)] = d
                written += len(d)
        finally:
            os.close(fd)
    want = {"d/f%d" % i: {"content": sha(bytes(b)), "size": str(fsz)} for i, b in files.items()}
    before = M.walk(p)
    assert before.errors == []
    diffs = M.compare(expect(want), before.manifest)
    assert not diffs, M.report(diffs)
    m = img.unmount()
    runs, moved = cleaning_stats(m.stderr())
    assert runs > 0 and moved > 0, m.stderr()
    fsutil.fsck_check(img.image)
    img.mount(options=["ro"] + opts[1:])
    after = M.walk(img.path)
    assert after.errors == []
    diffs = M.compare(expect(want), after.manifest)
    assert not diffs, M.report(diffs)
    img.unmount()
