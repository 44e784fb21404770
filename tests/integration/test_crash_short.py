"""Short runs of the crash-consistency test (tests/crash/crashtest.py):
a few daemon kills at random moments during a mixed workload, and the
ACE-style suite of one- and two-operation sequences ending in fsync.
`make crashtest` runs the long version."""

import os
import re
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
CRASH = os.path.join(os.path.dirname(HERE), "crash", "crashtest.py")


def run_crash(args, binary, timeout=600):
    env = dict(os.environ, F2FS_FUSE=binary)
    r = subprocess.run([sys.executable, CRASH] + args, env=env, stdin=subprocess.DEVNULL,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       errors="replace", timeout=timeout)
    return r.returncode, r.stdout


@pytest.mark.slow
@pytest.mark.needs_binary
def test_crash_random_kills(f2fs_fuse, tmp_path):
    args = ["--seed", "1", "--iterations", "8", "--fresh-every", "4",
            "--time-limit", "240", "--workdir", str(tmp_path)]
    rc, out = run_crash(args, f2fs_fuse)
    assert rc == 0, "crashtest failed (rerun: tests/crash/crashtest.py %s)\n%s" % (
        " ".join(args[:-2]), out[-8000:])


@pytest.mark.slow
@pytest.mark.needs_binary
def test_crash_random_kills_nearly_full(f2fs_fuse, tmp_path):
    """The same on images nine tenths full with half-used segments: the data
    logs recycle free slots (SSR) and cleaning runs while the daemon dies."""
    args = ["--seed", "2", "--iterations", "8", "--fresh-every", "4", "--ballast", "0.9",
            "--image-size", "96M", "--time-limit", "240", "--workdir", str(tmp_path)]
    rc, out = run_crash(args, f2fs_fuse)
    assert rc == 0, "crashtest failed (rerun: tests/crash/crashtest.py %s)\n%s" % (
        " ".join(args[:-2]), out[-8000:])


@pytest.mark.slow
@pytest.mark.needs_binary
def test_crash_random_kills_quota(f2fs_fuse, tmp_path):
    """The same on quota_ino images with project quota: after every kill and
    recovery fsck.f2fs checks the user, group and project quota files."""
    args = ["--seed", "3", "--iterations", "8", "--fresh-every", "4",
            "--features", "extra_attr,project_quota,quota",
            "--time-limit", "240", "--workdir", str(tmp_path)]
    rc, out = run_crash(args, f2fs_fuse)
    assert rc == 0, "crashtest failed (rerun: tests/crash/crashtest.py %s)\n%s" % (
        " ".join(args[:-2]), out[-8000:])


@pytest.mark.slow
@pytest.mark.needs_binary
def test_crash_random_kills_compressed(f2fs_fuse, tmp_path):
    """The same with every file compressed (lz4, clusters of 4 blocks, -o
    compress_extension=*): writeback compresses dirty clusters while the
    daemon dies, and fsync of a compressed file commits a checkpoint.
    Atomic writes are left out: a compressed file with blocks refuses them
    (EINVAL), as the kernel's f2fs_ioc_start_atomic_write does."""
    args = ["--seed", "4", "--iterations", "8", "--fresh-every", "4",
            "--features", "extra_attr,compression",
            "--mount-options", "compress_algorithm=lz4,compress_extension=*",
            "--exclude", "atomic",
            "--ace", "--ace-len", "1",
            "--time-limit", "240", "--workdir", str(tmp_path)]
    rc, out = run_crash(args, f2fs_fuse)
    assert rc == 0, "crashtest failed (rerun: tests/crash/crashtest.py %s)\n%s" % (
        " ".join(args[:-2]), out[-8000:])
    # the files checked after the kills were compressed ones
    got = re.search(r"crashtest: random: .*compressed files read (\d+)", out)
    assert got and int(got.group(1)) > 0, out[-8000:]


@pytest.mark.slow
@pytest.mark.needs_binary
def test_crash_ace_sequences(f2fs_fuse, tmp_path):
    args = ["--seed", "1", "--ace-only", "--ace-len", "2", "--ace-quick",
            "--time-limit", "240", "--workdir", str(tmp_path)]
    rc, out = run_crash(args, f2fs_fuse)
    assert rc == 0, "crashtest failed (rerun: tests/crash/crashtest.py %s)\n%s" % (
        " ".join(args[:-2]), out[-8000:])


@pytest.mark.slow
@pytest.mark.needs_binary
def test_crash_shutdown_faults(f2fs_fuse, tmp_path):
    """F2FS_IOC_SHUTDOWN (no sync) as the fault, on nearly full images: the
    daemon must then unmount cleanly having written nothing more, and the
    next mount recover as after a kill."""
    args = ["--seed", "3", "--iterations", "6", "--fresh-every", "3", "--ballast", "0.9",
            "--image-size", "96M", "--fault", "shutdown", "--ace", "--ace-len", "1",
            "--time-limit", "240", "--workdir", str(tmp_path)]
    rc, out = run_crash(args, f2fs_fuse)
    assert rc == 0, "crashtest failed (rerun: tests/crash/crashtest.py %s)\n%s" % (
        " ".join(args[:-2]), out[-8000:])
