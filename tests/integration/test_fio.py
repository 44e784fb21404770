"""fio against the mount with the engines its users run (psync, libaio,
io_uring, mmap, posixaio; buffered and O_DIRECT), each writing random blocks
and reading them back with crc32c verification, then fsck.f2fs on the image.
Also in an encrypted directory, where every block goes through fscrypt."""

import json
import os
import shutil
import subprocess

import pytest

import fsutil
from test_write import MiB, RWImage

ENGINES = [("psync", 0), ("psync", 1), ("libaio", 0), ("libaio", 1), ("io_uring", 0),
           ("io_uring", 1), ("mmap", 0), ("posixaio", 0), ("posixaio", 1)]


def run_fio(directory, engine, direct, rw, size="6m", jobs=2):
    cmd = ["fio", "--name=v", "--directory=" + directory, "--ioengine=" + engine,
           "--direct=%d" % direct, "--rw=" + rw, "--bs=4k", "--bsrange=4k-64k",
           "--size=" + size, "--numjobs=%d" % jobs, "--iodepth=8",
           "--verify=crc32c", "--do_verify=1", "--verify_fatal=1", "--verify_backlog=64",
           "--verify_state_save=0",
           "--output-format=json"]
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       timeout=240, stdin=subprocess.DEVNULL)
    return r


def engine_works_here(engine, direct, tmp_path):
    """The host may lack an engine (io_uring off in a container, no O_DIRECT
    on tmpfs): ask fio on the host's own filesystem first."""
    d = tmp_path / ("probe-%s-%d" % (engine, direct))
    d.mkdir()
    r = run_fio(str(d), engine, direct, "write", size="256k", jobs=1)
    shutil.rmtree(d, ignore_errors=True)
    return r.returncode == 0


def check(r, what):
    assert r.returncode == 0, "%s: fio exited %d\n%s\n%s" % (what, r.returncode, r.stderr[-2000:],
                                                          r.stdout[-2000:])
    out = json.loads(r.stdout[r.stdout.index("{"):])
    for job in out["jobs"]:
        assert job["error"] == 0, "%s: job error %d" % (what, job["error"])
        written = job["write"]["io_bytes"]
        assert written > 0, what
        # the verify pass read back at least everything written
        assert job["read"]["io_bytes"] >= written, (what, job["read"]["io_bytes"], written)


@pytest.fixture(scope="module")
def fio_bin():
    if not shutil.which("fio"):
        pytest.fail("fio is not installed (tests/install-deps.sh installs it)")
    return "fio"


@pytest.mark.slow
@pytest.mark.parametrize("crypt", [False, True], ids=["plain", "encrypted"])
def test_fio_engines_verify(f2fs_fuse, fio_bin, fixtures_dir, tmp_path, crypt):
    usable = [(e, d) for e, d in ENGINES if engine_works_here(e, d, tmp_path)]
    assert ("psync", 0) in usable and ("psync", 1) in usable
    opts = ["rw"]
    if crypt:
        opts.append("key_file=" + os.path.join(fixtures_dir, "crypt.key"))
    img = RWImage(f2fs_fuse, tmp_path, features="encrypt" if crypt else None,
                  size=256 * MiB, options=opts)
    try:
        p = img.mount()
        top = os.path.join(p, "fio")
        os.mkdir(top)
        if crypt:
            ctl = os.path.join(os.path.dirname(f2fs_fuse), "f2fs-fusectl")
            fsutil.run([ctl, "set_policy", "eeec05e6ebadb5814c861095d859e167", top], check=True)
        for engine, direct in usable:
            d = os.path.join(top, "%s-%d" % (engine, direct))
            os.mkdir(d)
            check(run_fio(d, engine, direct, "randwrite"), "%s direct=%d" % (engine, direct))
            # a second pass over the same files: overwrites of allocated blocks
            check(run_fio(d, engine, direct, "randrw"), "%s direct=%d rw" % (engine, direct))
        img.unmount()
        fsutil.fsck_check(img.image)
    finally:
        img.close()
    skipped = sorted(set(ENGINES) - set(usable))
    if skipped:
        print("engines this host cannot run: %s" % skipped)


@pytest.mark.parametrize("engine", ["libaio", "io_uring"])
def test_direct_aio_at_enospc(f2fs_fuse, fio_bin, tmp_path, engine):
    """Asynchronous O_DIRECT writes past the free space fail with ENOSPC,
    never EIO: the kernel turns a short reply to an asynchronous direct
    write into EIO, so a write that runs out of space part way must not
    come back short (fstests generic/299 and 300)."""
    if not engine_works_here(engine, 1, tmp_path):
        pytest.skip("%s with O_DIRECT does not work on this host" % engine)
    img = RWImage(f2fs_fuse, tmp_path, size=160 * MiB, options=["rw"])
    try:
        p = img.mount()
        cmd = ["fio", "--name=full", "--directory=" + p, "--ioengine=" + engine, "--direct=1",
               "--rw=randwrite", "--bs=128k", "--iodepth=32", "--numjobs=2",
               "--filesize=128m", "--size=999g", "--time_based", "--runtime=6",
               "--continue_on_error=write", "--ignore_error=,ENOSPC", "--fallocate=none",
               "--create_on_open=1", "--error_dump=0"]
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           timeout=120, stdin=subprocess.DEVNULL)
        # the image is smaller than the two files: space runs out
        assert "No space left on device" in r.stdout, r.stdout[-2000:]
        assert "Input/output error" not in r.stdout, r.stdout[-3000:]
        img.finish(check_inodes=False)
    finally:
        img.close()


@pytest.mark.parametrize("engine", ["libaio", "io_uring"])
def test_direct_dsync_aio_survives_crash(f2fs_fuse, fio_bin, tmp_path, engine):
    """Asynchronous O_DIRECT | O_DSYNC writes to a file made just before
    are durable when they complete (fstests generic/703): the kernel's
    FUSE sends no FSYNC after an asynchronous direct write, so the daemon
    commits the file's nodes itself. After SIGKILL the file and what fio
    wrote are there."""
    if not engine_works_here(engine, 1, tmp_path):
        pytest.skip("%s with O_DIRECT does not work on this host" % engine)
    img = RWImage(f2fs_fuse, tmp_path, size=256 * MiB,
                  options=["rw", "checkpoint_interval=3600"])
    try:
        p = img.mount()
        path = os.path.join(p, "foo")
        with open(path, "wb") as f:
            os.posix_fallocate(f.fileno(), 0, 16 * MiB)
        cmd = ["fio", "--name=dsync", "--filename=" + path, "--ioengine=" + engine,
               "--direct=1", "--sync=1", "--bs=64k", "--rw=randwrite", "--size=16m",
               "--iodepth=4", "--randseed=7", "--number_ios=64"]
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           timeout=120, stdin=subprocess.DEVNULL)
        assert r.returncode == 0, r.stdout[-2000:]
        with open(path, "rb") as f:
            os.posix_fadvise(f.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)
            before = f.read()
        img.crash()
        fsutil.fsck_check(img.image)
        p = img.mount()
        with open(os.path.join(p, "foo"), "rb") as f:
            assert f.read() == before
        img.finish(check_inodes=False)
    finally:
        img.close()

