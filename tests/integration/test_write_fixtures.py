"""Read-write mounts of copies of the kernel-written reference images: our
changes must leave everything else as the kernel wrote it, and the crash
image must recover to exactly the state the kernel recovered it to."""

import errno
import os

import fsutil
import manifest as M
from test_fixtures import kernel_sums
from test_write import (FALLOC_FL_KEEP_SIZE, FALLOC_FL_PUNCH_HOLE, MiB, RWImage, blob,  # noqa: F401
                        chattr, errno_of, expect, fallocate, lsattr, sha, write_file)

HUGE = 64 * MiB


def _compressed(fixtures_dir):
    paths = set()
    with open(os.path.join(fixtures_dir, "plain.compression.txt"), encoding="utf-8") as f:
        for line in f:
            cols = line.split()
            if len(cols) >= 2 and int(cols[0], 16) & 0x4:   # the compression flag
                paths.add(M.canonical(cols[-1]))
    assert paths
    return paths


def test_plain_fixture_writable(f2fs_fuse, fixture_image, fixtures_dir, tmp_path):
    """New files and a modified file on the kernel's image; untouched entries
    keep every field of the kernel's manifest."""
    plain = M.parse_file(os.path.join(fixtures_dir, "plain.manifest.tsv"))
    huge = {p for p, e in plain.entries.items() if e["type"] == "f" and int(e["size"]) > HUGE}
    img = RWImage(f2fs_fuse, tmp_path, source=fixture_image("plain"), name="plain")
    try:
        p = img.mount()
        new = blob(100 * 1024 + 3, 1)
        write_file(os.path.join(p, "written-by-fuse"), new)
        os.mkdir(os.path.join(p, "fuse-dir"))
        for i in range(50):
            write_file(os.path.join(p, "fuse-dir", "f%02d" % i), blob(i * 997, i))
        with open(os.path.join(p, "small", "f10"), "ab") as f:
            f.write(b" appended")
        with open(os.path.join(p, "small", "f10"), "rb") as f:
            f10 = f.read()
        os.setxattr(os.path.join(p, "written-by-fuse"), "user.fuse", b"yes")

        changed = {".", "small", "small/f10"}
        keep = lambda t: t not in huge and not t.startswith("sparse/")   # noqa: E731
        exp = M.Manifest({k: dict(e) for k, e in plain.entries.items() if k not in changed},
                         partial=True)
        for k in huge:
            exp.entries[k]["content"] = M.WILDCARD
        for k, e in exp.entries.items():
            if k.startswith("sparse/"):
                e["content"] = M.WILDCARD
        for k, digest in kernel_sums().items():
            exp.entries[k]["content"] = digest
        exp.entries["written-by-fuse"] = expect({"x": {
            "type": "f", "content": sha(new), "size": str(len(new)),
            "xattrs": M.format_xattrs([(b"user.fuse", b"yes")])}}).entries["x"]
        exp.entries["small/f10"] = dict(plain["small/f10"], content=sha(f10),
                                        size=str(len(f10)), mtime=M.WILDCARD)
        man = img.finish(exp, content_filter=keep)
        assert man["fuse-dir"]["nlink"] == "2"
        assert len([k for k in man.entries if k.startswith("fuse-dir/")]) == 50
    finally:
        img.close()


def test_recovery_fixture_rolls_forward(f2fs_fuse, fixture_image, fixtures_dir, tmp_path):
    """A read-write mount of the crash image replays what was fsync()ed and
    deletes the orphan: the tree is then exactly the kernel's after its
    recovery, and fsck is clean."""
    want = M.parse_file(os.path.join(fixtures_dir, "recovery.manifest.tsv"))
    img = RWImage(f2fs_fuse, tmp_path, source=fixture_image("recovery"), name="recovery")
    try:
        p = img.mount()
        got = M.walk(p)
        assert got.errors == []
        diffs = M.compare(want, got.manifest)
        assert diffs == [], M.report(diffs)
        man = img.finish()
        diffs = M.compare(want, man)
        assert diffs == [], M.report(diffs)
        # and again, now that there is nothing left to recover
        p = img.mount()
        write_file(os.path.join(p, "after-recovery"), b"new")
        man = img.finish()
        del man.entries["after-recovery"]
        assert M.compare(want, man, ignore=("mtime",), only=set(want.entries) - {"."}) == []
    finally:
        img.close()


def test_crypt_fixture_directory_moves(f2fs_fuse, fixture_image, fixtures_dir, tmp_path):
    """Directories move between directories of the kernel's encrypted tree
    (the ".." chain is followed in its on-disk, plain-text form), and a
    directory still may not move below itself."""
    key = os.path.join(fixtures_dir, "crypt.key")
    img = RWImage(f2fs_fuse, tmp_path, source=fixture_image("crypt"), name="crypt",
                  options=("rw", "key_file=" + key))
    try:
        p = img.mount()
        for pol in ("enc", "enc64", "enc-adiantum"):
            top = os.path.join(p, pol)
            os.makedirs(os.path.join(top, "from", "moved", "inner"))
            write_file(os.path.join(top, "from", "moved", "inner", "f"), blob(5000, 7))
            os.mkdir(os.path.join(top, "to"))
            os.rename(os.path.join(top, "from", "moved"), os.path.join(top, "to", "moved"))
            assert os.listdir(os.path.join(top, "from")) == []
            with open(os.path.join(top, "to", "moved", "inner", "f"), "rb") as f:
                assert f.read() == blob(5000, 7)
            try:
                os.rename(os.path.join(top, "to"), os.path.join(top, "to", "moved", "inner", "x"))
                raise AssertionError("a directory moved below itself")
            except OSError as e:
                assert e.errno == errno.EINVAL, e
        img.unmount()
        fsutil.fsck_check(img.image)
        p = img.mount(options=("ro", "key_file=" + key))
        for pol in ("enc", "enc64", "enc-adiantum"):
            with open(os.path.join(p, pol, "to", "moved", "inner", "f"), "rb") as f:
                assert f.read() == blob(5000, 7)
            assert os.path.realpath(os.path.join(p, pol, "to", "moved", "..")) == \
                os.path.join(p, pol, "to")
        img.unmount()
    finally:
        img.close()


def test_plain_fixture_compressed_files(f2fs_fuse, fixture_image, fixtures_dir, tmp_path):
    """A read-write mount reads the kernel's compressed files and writes into
    them (whole clusters rewritten); punching a hole stays EOPNOTSUPP, as the
    kernel's; deleting them gives back every slot, the COMPRESS_ADDR heads
    included (they count as blocks, as their reserved slots do: fsck.f2fs
    checks the valid block count)."""
    sums = kernel_sums()
    comp = sorted(_compressed(fixtures_dir))
    img = RWImage(f2fs_fuse, tmp_path, source=fixture_image("plain"), name="plain")
    gone = ["compr-lz4/text-1m", "compr-zstd/mixed-512k", "compr-lzorle/with-hole",
            "compr-lz4hc/mixed-512k", "compr-ext/file.cz"]
    try:
        p = img.mount()
        for k in comp:
            with open(os.path.join(p, k), "rb") as f:
                assert sha(f.read()) == sums[k], k
        target = os.path.join(p, "compr-lzo/text-1m")
        with open(target, "rb") as f:
            data = bytearray(f.read())
        fd = os.open(target, os.O_WRONLY)
        try:
            assert os.pwrite(fd, b"x", 0) == 1
            assert os.pwrite(fd, b"y" * 8192, 1 << 19) == 8192
            assert errno_of(fallocate, fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                            4096, 8192) == errno.EOPNOTSUPP
        finally:
            os.close(fd)
        data[0:1] = b"x"
        data[1 << 19:(1 << 19) + 8192] = b"y" * 8192
        assert "c" in lsattr(target)
        assert chattr("-c", target) != 0
        assert "c" in lsattr(target)
        with open(target, "rb") as f:
            assert f.read() == bytes(data)
        sums["compr-lzo/text-1m"] = sha(bytes(data))
        for k in gone:
            os.unlink(os.path.join(p, k))
        exp = expect({k: {"type": "!"} for k in gone})
        for k in comp:
            if k not in gone:
                exp.entries[k] = dict(exp.entries.get(k, {}), **expect(
                    {k: {"content": sums[k]}}).entries[k])
        img.finish(exp, content_filter=lambda t: t.startswith("compr-"), check_inodes=False)
    finally:
        img.close()
