"""Helpers shared by the integration tests: mounting through f2fs-fuse,
checking images with fsck.f2fs, building images with mkfs/sload.

Every external command runs with a timeout so a hung daemon or tool fails
the test instead of hanging the run.
"""

import contextlib
import os
import re
import shutil
import signal
import subprocess
import time

MOUNT_TIMEOUT = float(os.environ.get("F2FS_TEST_MOUNT_TIMEOUT", "30"))
EXIT_TIMEOUT = float(os.environ.get("F2FS_TEST_EXIT_TIMEOUT", "60"))
TOOL_TIMEOUT = 300

SANITIZER_MARKS = (
    "ERROR: AddressSanitizer",
    "ERROR: LeakSanitizer",
    "runtime error:",
    "WARNING: ThreadSanitizer",
    "ERROR: MemorySanitizer",
)


def run(cmd, timeout=TOOL_TIMEOUT, check=False, **kw):
    """subprocess.run with text output captured and a timeout."""
    kw.setdefault("stdout", subprocess.PIPE)
    kw.setdefault("stderr", subprocess.STDOUT)
    kw.setdefault("stdin", subprocess.DEVNULL)
    r = subprocess.run([str(c) for c in cmd], timeout=timeout, text=True,
                       errors="replace", **kw)
    if check and r.returncode != 0:
        raise AssertionError("%s exited %d:\n%s" % (" ".join(map(str, cmd)), r.returncode,
                                                     r.stdout))
    return r


# ---------------------------------------------------------------- mounts

def _unoctal(s):
    return re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), s)


def mount_fstype(path):
    """fstype of the mount whose mount point is exactly `path`, else None."""
    want = os.path.realpath(path)
    found = None
    with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as f:
        for line in f:
            left, _, right = line.partition(" - ")
            cols = left.split()
            if len(cols) >= 5 and _unoctal(cols[4]) == want:
                found = right.split()[0] if right else "?"
    return found           # the last one listed is the top of the stack


def is_fuse_mount(path):
    t = mount_fstype(path)
    return t is not None and (t == "fuse" or t.startswith("fuse."))


def sanitizer_report(text):
    """The first sanitizer line in `text`, or None."""
    for line in text.splitlines():
        if any(m in line for m in SANITIZER_MARKS):
            return line
    return None


def default_signals():
    """Run in the daemon's child before exec: a background job of a
    non-interactive shell (`make test &`, nohup) starts with SIGINT, SIGQUIT
    (and SIGHUP) ignored, the daemon would inherit that, and libfuse leaves an
    ignored signal ignored, so the signal tests would wait for nothing."""
    for sig in (signal.SIGINT, signal.SIGQUIT, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)


class MountError(AssertionError):
    pass


LIVE = set()      # Mounts whose daemon may still run (for the test watchdog)


def kill_all_daemons():
    """SIGKILL every daemon still running: a hung daemon then fails the
    requests blocked on it (ENOTCONN) instead of hanging the run."""
    for m in list(LIVE):
        if m.proc and m.proc.poll() is None:
            try:
                os.killpg(m.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass


class Mount:
    """A running `f2fs-fuse -f` daemon with its mount point."""

    def __init__(self, binary, image, path, options=("ro",), extra_args=(), log=None):
        self.binary = str(binary)
        self.image = str(image)
        self.path = str(path)
        self.options = list(options)
        self.extra_args = list(extra_args)
        self.log = str(log) if log else self.path.rstrip("/") + ".stderr"
        self.proc = None
        self.returncode = None
        self._logf = None

    @property
    def argv(self):
        argv = [self.binary, "-f"]
        if self.options:
            argv += ["-o", ",".join(self.options)]
        return argv + self.extra_args + [self.image, self.path]

    def stderr(self):
        try:
            with open(self.log, encoding="utf-8", errors="replace") as f:
                return f.read()
        except FileNotFoundError:
            return ""

    def start(self):
        os.makedirs(self.path, exist_ok=True)
        if is_fuse_mount(self.path):
            raise MountError("%s is already a mount point" % self.path)
        self._logf = open(self.log, "wb")
        self.proc = subprocess.Popen(self.argv, stdin=subprocess.DEVNULL,
                                     stdout=self._logf, stderr=subprocess.STDOUT,
                                     start_new_session=True,
                                     preexec_fn=default_signals)
        LIVE.add(self)
        deadline = time.monotonic() + MOUNT_TIMEOUT
        while time.monotonic() < deadline:
            if is_fuse_mount(self.path):
                return self
            rc = self.proc.poll()
            if rc is not None:
                self.returncode = rc
                self._close_log()
                raise MountError("%s exited %d before mounting; output:\n%s"
                                 % (" ".join(self.argv), rc, self.stderr()))
            time.sleep(0.05)
        self._kill()
        raise MountError("%s did not mount within %.0f s; output:\n%s"
                         % (" ".join(self.argv), MOUNT_TIMEOUT, self.stderr()))

    def _close_log(self):
        LIVE.discard(self)
        if self._logf:
            self._logf.close()
            self._logf = None

    def _kill(self):
        if self.proc and self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                pass
        if is_fuse_mount(self.path):
            run(["fusermount3", "-u", "-z", self.path], timeout=30)
        self._close_log()

    def unmount(self):
        """fusermount3 -u, wait for the daemon; return its exit status."""
        if self.proc is None:
            return self.returncode
        errors = []
        deadline = time.monotonic() + 20
        while is_fuse_mount(self.path):
            r = run(["fusermount3", "-u", self.path], timeout=30)
            if r.returncode == 0:
                break
            errors.append(r.stdout.strip())
            if time.monotonic() > deadline:
                run(["fusermount3", "-u", "-z", self.path], timeout=30)
                break
            time.sleep(0.2)
        try:
            self.returncode = self.proc.wait(timeout=EXIT_TIMEOUT)
        except subprocess.TimeoutExpired:
            stacks = thread_stacks(self.proc.pid)
            self._kill()
            raise MountError("%s did not exit within %.0f s after unmount; output:\n%s\n"
                             "threads:\n%s" % (self.binary, EXIT_TIMEOUT, self.stderr(), stacks))
        finally:
            self._close_log()
        return self.returncode

    def check_exit(self):
        """Assert a clean exit and no sanitizer report."""
        out = self.stderr()
        rep = sanitizer_report(out)
        if rep:
            raise MountError("sanitizer report from %s: %s\n%s" % (self.binary, rep, out))
        if self.returncode != 0:
            raise MountError("%s exited with status %s; output:\n%s"
                             % (" ".join(self.argv), self.returncode, out))


def thread_stacks(pid):
    """Where each thread of a stuck daemon is: gdb's backtraces if gdb is
    installed, else each thread's kernel wait channel and stack."""
    if shutil.which("gdb"):
        r = subprocess.run(["gdb", "-p", str(pid), "-batch", "-nx",
                            "-ex", "thread apply all bt",
                            # the request loop's state (fuse/loop.c), if the
                            # main thread is in it
                            "-ex", "thread 1",
                            "-ex", "frame function watch",
                            "-ex", "print *l"],
                           stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, timeout=60)
        return r.stdout
    out = []
    for tid in sorted(os.listdir("/proc/%d/task" % pid), key=int):
        base = "/proc/%d/task/%s/" % (pid, tid)
        parts = [tid]
        for name in ("comm", "wchan", "stack"):
            try:
                with open(base + name) as f:
                    parts.append(f.read().strip())
            except OSError:
                pass
        out.append(" | ".join(parts))
    return "\n".join(out)


@contextlib.contextmanager
def mounted(binary, image, path, options=("ro",), extra_args=(), log=None, check=True):
    """Mount `image` at `path` with `binary -f`, yield the Mount, unmount.

    On leaving: unmount, wait for the daemon, assert exit status 0 and no
    sanitizer output (unless check=False).
    """
    m = Mount(binary, image, path, options, extra_args, log).start()
    failed = False
    try:
        yield m
    except BaseException:
        failed = True
        raise
    finally:
        try:
            m.unmount()
        except MountError:
            if not failed:
                raise
        if failed:
            # shown by pytest with the failure ("Captured stdout")
            print("%s exited with status %s; its output:\n%s"
                  % (" ".join(m.argv), m.returncode, m.stderr()))
        elif check:
            m.check_exit()


# ---------------------------------------------------------------- fsck

def fsck_problems(output, returncode):
    """Signs in fsck.f2fs (1.15) output that it found something to fix.

    A clean run exits 0, prints only "[Ok..]" result lines and "Done".
    Problems show as a non-zero exit, "[Fail]" result lines, "[ASSERT]"
    lines and "[FIX]" lines (printed, with --dry-run, for what it would
    have changed), and for quota files "Fixing Quota file" and "[ERROR]".
    "[FSCK] fixing SIT types" and "other corrupted bugs  [Ok..]" appear on
    clean images too and are not problems.
    """
    probs = []
    if returncode != 0:
        probs.append("exit status %d" % returncode)
    for line in output.splitlines():
        s = line.strip()
        if "[Fail]" in s or "[FIX]" in s or "[ASSERT]" in s:
            probs.append(s)
        # quota files that do not match the usage fsck counts: it rewrites them
        # (even with --dry-run) and says so only in these lines
        elif "Fixing Quota file" in s or s.startswith("[ERROR]") or "[QUOTA WARNING]" in s:
            probs.append(s)
    if not re.search(r"^Done", output, re.M):
        probs.append("no 'Done' line")
    return probs


def fsck_check(image):
    """Run fsck.f2fs -f --dry-run on `image`; assert it is clean. Returns the output."""
    r = run(["fsck.f2fs", "-f", "--dry-run", image])
    probs = fsck_problems(r.stdout, r.returncode)
    if probs:
        shown = probs[:10] + (["... %d more" % (len(probs) - 10)] if len(probs) > 10 else [])
        tail = r.stdout if len(r.stdout) < 6000 else "...\n" + r.stdout[-6000:]
        raise AssertionError("fsck.f2fs finds problems in %s: %s\n%s"
                             % (image, "; ".join(shown), tail))
    return r.stdout


# ---------------------------------------------------------------- images

def make_image(image, tree, size, features=None, label=None):
    """mkfs.f2fs + sload.f2fs `tree` into a sparse image of `size` bytes;
    checked with fsck.f2fs before it is returned."""
    image = str(image)
    if os.path.exists(image):
        os.unlink(image)
    with open(image, "wb") as f:
        f.truncate(size)
    cmd = ["mkfs.f2fs", "-f"]
    if features:
        cmd += ["-O", features]
    if label:
        cmd += ["-l", label]
    run(cmd + [image], check=True)
    # sload.f2fs 1.15 (Debian) can exit 1 after a successful load; its
    # result is judged by fsck below instead.
    r = run(["sload.f2fs", "-f", str(tree), "-P", image])
    try:
        fsck_check(image)
    except AssertionError as e:
        raise AssertionError("%s\nsload.f2fs exited %d:\n%s" % (e, r.returncode, r.stdout[-4000:]))
    return image
