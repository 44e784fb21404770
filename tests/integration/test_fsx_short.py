"""Short runs of the randomized model-based tester (tests/fsx/fsx.py) on
read-write mounts (fixed seeds, both mkfs feature sets), and the smallest
reproductions of what it found, as regression tests.  `make fsx` runs the
long version."""

import os
import subprocess
import sys

import pytest

import fsutil

HERE = os.path.dirname(os.path.abspath(__file__))
FSX = os.path.join(os.path.dirname(HERE), "fsx", "fsx.py")
OPS = int(os.environ.get("F2FS_FSX_OPS", "3000"))
EXTRA = "extra_attr,inode_checksum,flexible_inline_xattr,inode_crtime,sb_checksum"


def run_fsx(args, binary, timeout=600):
    env = dict(os.environ)
    if binary:
        env["F2FS_FUSE"] = binary
    r = subprocess.run([sys.executable, FSX] + args, env=env, stdin=subprocess.DEVNULL,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       errors="replace", timeout=timeout)
    return r.returncode, r.stdout


def fsx_case(f2fs_fuse, tmp_path, seed, features, ops=OPS):
    args = ["--seed", str(seed), "--ops", str(ops), "--image-size", "256M",
            "--remount-every", "300"]
    if features:
        args += ["--features", features]
    rc, out = run_fsx(args + ["--workdir", str(tmp_path)], f2fs_fuse)
    assert rc == 0, "fsx failed (replay: tests/fsx/fsx.py %s)\n%s" % (" ".join(args),
                                                                     out[-8000:])


def test_fsx_model_self_check(tmp_path):
    """The tester against a plain folder: the model itself agrees with Linux."""
    rc, out = run_fsx(["--no-mount", "--seed", "7", "--ops", "300",
                       "--workdir", str(tmp_path)], None)
    assert rc == 0, out[-6000:]


@pytest.mark.slow
@pytest.mark.needs_binary
@pytest.mark.parametrize("seed,features", [(1, None), (2, EXTRA)], ids=["default", "extra"])
def test_fsx_short(f2fs_fuse, tmp_path, seed, features):
    fsx_case(f2fs_fuse, tmp_path, seed, features)


@pytest.mark.slow
@pytest.mark.needs_binary
@pytest.mark.parametrize("seed,opts", [(3, "compress_extension=*,compress_log_size=2,"
                                           "nowriteback"),
                                       (4, "compress_extension=*,compress_algorithm=zstd,"
                                           "compress_log_size=4,compress_chksum,nowriteback"),
                                       (5, "compress_extension=*,compress_log_size=2,writeback"),
                                       (6, "compress_extension=*,compress_algorithm=zstd,"
                                           "compress_log_size=3,writeback")],
                         ids=["lz4-4", "zstd-16", "lz4-4-writeback", "zstd-8-writeback"])
def test_fsx_compressed(f2fs_fuse, tmp_path, seed, opts):
    """Every new file compressed: writes, truncations and reads against the
    model; fallocate left out (a compressed file refuses punch and zero
    ranges, which the model does not know).  With -o writeback, dirty
    clusters meet reads, truncations and remounts."""
    args = ["--seed", str(seed), "--ops", str(OPS), "--image-size", "256M",
            "--remount-every", "300", "--features", "extra_attr,inode_checksum,compression",
            "--mount-options", opts, "--exclude", "falloc", "--compressible"]
    rc, out = run_fsx(args + ["--workdir", str(tmp_path)], f2fs_fuse)
    assert rc == 0, "fsx failed (replay: tests/fsx/fsx.py %s)\n%s" % (" ".join(args),
                                                                     out[-8000:])


def fresh_image(tmp_path, size=128 << 20):
    img = str(tmp_path / "img")
    with open(img, "wb") as f:
        f.truncate(size)
    fsutil.run(["mkfs.f2fs", "-f", img], check=True)
    return img


@pytest.mark.needs_binary
@pytest.mark.parametrize("size,off,length", [(3295, 1631, 1808), (10000, 9000, 5000)],
                         ids=["inline", "blocks"])
def test_zero_range_keep_size(f2fs_fuse, tmp_path, size, off, length):
    sys.path.insert(0, os.path.dirname(FSX))
    import fsx
    img = fresh_image(tmp_path)
    with fsutil.mounted(f2fs_fuse, img, str(tmp_path / "mnt"), options=()) as m:
        p = os.path.join(m.path, "x")
        with open(p, "wb") as f:
            f.write(os.urandom(size))
        fd = os.open(p, os.O_WRONLY)
        try:
            fsx.fallocate(fd, fsx.FALLOC_FL_ZERO_RANGE | fsx.FALLOC_FL_KEEP_SIZE, off, length)
        finally:
            os.close(fd)
        assert os.stat(p).st_size == size


@pytest.mark.needs_binary
def test_fsync_checkpoint_then_many_creates(f2fs_fuse, tmp_path):
    """mkdir e; fsync(e); 37 more inodes; clean unmount: fsck finds e's NAT entry gone."""
    img = fresh_image(tmp_path)
    with fsutil.mounted(f2fs_fuse, img, str(tmp_path / "mnt"), options=()) as m:
        os.mkdir(os.path.join(m.path, "e"))
        fd = os.open(os.path.join(m.path, "e"), os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        for i in range(37):
            open(os.path.join(m.path, "n%d" % i), "wb").close()
    fsutil.fsck_check(img)
