"""pytest fixtures for the f2fs-fuse integration tests.

F2FS_FUSE       path of the binary under test (the Makefile sets it)
F2FS_FIXTURES   folder of the kernel-written reference images
                (default: ../shared/fixtures beside the repository)
"""

import contextlib
import os
import signal
import subprocess
import threading

import pytest

import fsutil

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))


def _fixtures_dir():
    env = os.environ.get("F2FS_FIXTURES")
    if env:
        return env
    for cand in (os.path.join(os.path.dirname(REPO), "shared", "fixtures"),
                 "/work/shared/fixtures"):
        if os.path.isdir(cand):
            return cand
    return os.path.join(os.path.dirname(REPO), "shared", "fixtures")


FIXTURES = _fixtures_dir()


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: takes more than a few seconds")
    config.addinivalue_line("markers", "needs_binary: mounts through f2fs-fuse")


TEST_TIMEOUT = float(os.environ.get("F2FS_TEST_TIMEOUT", "300"))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    """A per-test time limit (doubled for tests marked slow). When it runs
    out, the daemons are killed, so calls blocked on a hung mount return,
    and a few seconds later the test is failed if it is still running."""
    limit = TEST_TIMEOUT * (2 if item.get_closest_marker("slow") else 1)
    timer = threading.Timer(limit, fsutil.kill_all_daemons)
    timer.daemon = True

    def on_alarm(signum, frame):
        pytest.fail("test did not finish within %.0f s" % limit, pytrace=False)

    old = signal.signal(signal.SIGALRM, on_alarm)
    timer.start()
    signal.setitimer(signal.ITIMER_REAL, limit + 10)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
        timer.cancel()


@pytest.fixture(scope="session")
def f2fs_fuse():
    path = os.environ.get("F2FS_FUSE") or os.path.join(REPO, "build", "f2fs-fuse")
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        pytest.fail("f2fs-fuse binary not found at %s (run make, or set F2FS_FUSE)" % path)
    if not os.path.exists("/dev/fuse"):
        pytest.fail("/dev/fuse is missing: load the fuse module (modprobe fuse)")
    return path


@pytest.fixture
def scratch(tmp_path):
    """A per-test scratch folder."""
    return tmp_path


@pytest.fixture
def mount(f2fs_fuse, tmp_path):
    """mount(image, options=("ro",), extra_args=(), name="mnt") -> context manager.

    Starts `f2fs-fuse -f -o OPTIONS IMAGE MNT`, waits for the FUSE mount,
    yields a fsutil.Mount; on exit unmounts and asserts exit status 0 and
    no sanitizer report in the daemon's output.
    """
    counter = [0]

    @contextlib.contextmanager
    def _mount(image, options=("ro",), extra_args=(), name=None, check=True):
        counter[0] += 1
        mnt = tmp_path / (name or "mnt%d" % counter[0])
        with fsutil.mounted(f2fs_fuse, image, mnt, options, extra_args, check=check) as m:
            yield m

    return _mount


@pytest.fixture(scope="session")
def fixtures_dir():
    if not os.path.isfile(os.path.join(FIXTURES, "README.md")):
        pytest.skip("reference images not found in %s (set F2FS_FIXTURES)" % FIXTURES)
    return FIXTURES


@pytest.fixture(scope="session")
def fixture_image(fixtures_dir, tmp_path_factory):
    """fixture_image(name) -> path of a private, decompressed copy of NAME.img.

    The copies are made once per session; the shared originals are only read.
    """
    cache = {}
    base = tmp_path_factory.mktemp("fixture-images")

    def _get(name):
        if name not in cache:
            src = os.path.join(fixtures_dir, name + ".img.zst")
            dst = str(base / (name + ".img"))
            fsutil.run(["zstd", "-d", "-q", "-f", src, "-o", dst], check=True, timeout=300)
            os.chmod(dst, 0o644)
            cache[name] = dst
        return cache[name]

    return _get


def pytest_sessionfinish(session, exitstatus):
    # Leave no stale mounts behind if a test was interrupted.
    base = str(session.config._tmp_path_factory.getbasetemp()) \
        if hasattr(session.config, "_tmp_path_factory") else None
    if not base:
        return
    try:
        with open("/proc/self/mountinfo") as f:
            points = [fsutil._unoctal(line.split()[4]) for line in f]
    except OSError:
        return
    for p in points:
        if p.startswith(base + "/") and fsutil.is_fuse_mount(p):
            subprocess.run(["fusermount3", "-u", "-z", p], timeout=30,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
