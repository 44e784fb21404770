"""Run shell scripts inside a qemu guest booted from the distribution kernel,
with f2fs images attached as virtio disks; collect what the script wrote, its
exit status and the kernel log.  A library for the kernel compatibility tests
and a command line tool.

Guest layout (see guest/init):
  /dev/vda, /dev/vdb, ...  the images, in the order given (also exported to
                           the script as $KTEST_DISK0, $KTEST_DISK1, ...)
  $KTEST_OUT (/out)        files left here come back in GuestResult.files
  /ktest/run               the script's working folder, with the extra files
  /ktest/run/lib           python modules (PYTHONPATH): ktest_guest.py and
                           the integration suite's manifest.py
  python3                  Debian's /usr/bin/python3 with a minimal stdlib
  busybox                  every applet

Environment:
  KERNEL_TEST_CACHE    cache folder made by setup.sh (default /var/tmp/f2fs-fuse-kernel)
  KERNEL_TEST_KVM      unset/0: TCG (default: the KVM on these hosts cannot run a
                       stock kernel); 1: use KVM; auto: probe KVM once (cached)
  KERNEL_TEST_TIMEOUT  hard limit in seconds for one guest run (default 900)
  KERNEL_TEST_KEEP     keep each run's folder (console log, archive) for debugging

Command line:
  python3 run_guest.py [-i IMAGE]... [--file NAME=PATH]... SCRIPT|-c 'CMDS'
      runs the script, prints its stdout/stderr, the f2fs lines of the kernel
      log and the verdict; exit status is the script's.
  python3 run_guest.py manifest IMAGE [-o MOUNTOPTS]
      prints the kernel's manifest of IMAGE.
"""

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
INTEGRATION = os.path.join(REPO, "tests", "integration")
sys.path.insert(0, HERE)

import guestimage  # noqa: E402

QEMU = "qemu-system-x86_64"
DEFAULT_TIMEOUT = float(os.environ.get("KERNEL_TEST_TIMEOUT", "900"))
OUT_DISK_SIZE = 1 << 30
GUEST_MOUNT = "/mnt/f2fs"


class GuestError(AssertionError):
    pass


class GuestUnavailable(RuntimeError):
    """qemu, a kernel or the cache is missing: the tests skip on this one."""


# ---------------------------------------------------------------- result

class GuestResult:
    def __init__(self):
        self.rc = None            # the script's exit status (None: never finished)
        self.console = ""         # the serial console, kernel messages included
        self.stdout = ""
        self.stderr = ""
        self.dmesg = ""
        self.files = {}           # name under $KTEST_OUT -> bytes
        self.elapsed = 0.0
        self.timed_out = False
        self.qemu_rc = None
        self.accel = None
        self.rundir = None

    @property
    def ok(self):
        return self.rc == 0 and "KTEST-RESULT: ok" in self.console

    def text(self, name):
        return self.files[name].decode("utf-8", "surrogateescape")

    def summary(self, tail=60):
        lines = ["guest run: rc=%s qemu_rc=%s timed_out=%s accel=%s %.1fs%s"
                 % (self.rc, self.qemu_rc, self.timed_out, self.accel, self.elapsed,
                    " (kept in %s)" % self.rundir if self.rundir else "")]
        if self.stdout:
            lines += ["--- stdout (tail)"] + self.stdout.splitlines()[-tail:]
        if self.stderr:
            lines += ["--- stderr (tail)"] + self.stderr.splitlines()[-tail:]
        bad = dmesg_f2fs_errors(self.dmesg or self.console)
        if bad:
            lines += ["--- kernel log problems"] + bad[:tail]
        if not self.dmesg or self.rc is None:
            lines += ["--- console (tail)"] + self.console.splitlines()[-tail:]
        return "\n".join(lines)

    def check(self):
        """Raise GuestError unless the script exited 0."""
        if not self.ok:
            raise GuestError(self.summary())
        return self


# ---------------------------------------------------------------- kernel log

_F2FS_BAD = re.compile(
    r"error|inconsisten|corrupt|run fsck|need fsck|fsck|invalid|mismatch|"
    r"failed|fail to|cannot|can't|wrong|bad |broken|sanity|checksum",
    re.I)
_GENERIC_BAD = re.compile(
    r"\bBUG\b|\bWARNING:|Call Trace|Oops|general protection|kernel panic|"
    r"Kernel panic|unable to handle|UBSAN|KASAN|list_(add|del) corruption|"
    r"blk_update_request: I/O error|I/O error, dev vd|Buffer I/O error|"
    r"hung_task|blocked for more than")


def dmesg_f2fs_errors(log):
    """Kernel log lines that mean f2fs (or the kernel) found something wrong:
    "F2FS-fs" lines about errors, inconsistency, corruption or a need for
    fsck, and any BUG/WARNING/Oops/Call Trace/I/O error.  Plain f2fs notices
    (mount options, "Mounted with checkpoint version", quota notes) pass."""
    bad = []
    for line in (log or "").splitlines():
        text = re.sub(r"^\[\s*\d+\.\d+\]\s*", "", line)
        if "F2FS-fs" in text or "f2fs" in text.lower():
            if _F2FS_BAD.search(text):
                bad.append(line)
                continue
        if _GENERIC_BAD.search(text):
            bad.append(line)
    return bad


# ---------------------------------------------------------------- qemu

def guest_info(build=True):
    """The cache description; builds it when missing (that needs the kernel
    package installed; setup.sh does the installing)."""
    if not shutil.which(QEMU):
        raise GuestUnavailable("%s not found (run tests/kernel/setup.sh)" % QEMU)
    try:
        if build:
            return guestimage.build(log=lambda s: print(s, file=sys.stderr))
        with open(os.path.join(guestimage.cache_dir(), "guest.json")) as f:
            return json.load(f)
    except guestimage.Unavailable as e:
        raise GuestUnavailable(str(e))


def _kvm_mode():
    v = os.environ.get("KERNEL_TEST_KVM", "0").strip().lower()
    if v in ("1", "yes", "true", "kvm"):
        return "kvm"
    if v == "auto":
        return "auto"
    return "tcg"


def _kvm_probe(info):
    """Can KVM boot the guest to userspace here?  Probed once per host kernel,
    remembered in the cache."""
    if not os.access("/dev/kvm", os.R_OK | os.W_OK):
        return False
    path = os.path.join(info["cache"], "kvm-probe.json")
    key = os.uname().release + " " + info["kver"]
    try:
        with open(path) as f:
            saved = json.load(f)
        if saved.get("key") == key:
            return saved["ok"]
    except (OSError, ValueError, KeyError):
        pass
    r = run("echo probe", accel="kvm", timeout=45)
    ok = r.ok
    with open(path, "w") as f:
        json.dump({"key": key, "ok": ok, "elapsed": r.elapsed}, f)
    return ok


def _choose_accel(info):
    mode = _kvm_mode()
    if mode == "auto":
        return "kvm" if _kvm_probe(info) else "tcg"
    return mode


def _run_cpio(script, files, env):
    c = guestimage.Cpio()
    c.file("ktest/run/script.sh", script.encode(), 0o755)
    c.file("ktest/run/env", "".join("%s=%s\n" % (k, shlex.quote(str(v)))
                                    for k, v in env.items()).encode())
    for name, data in sorted(files.items()):
        if isinstance(data, str):
            data = data.encode()
        mode = 0o755 if name.endswith((".sh", ".py")) else 0o644
        c.file("ktest/run/" + name, data, mode)
    return c.finish()


def default_lib_files():
    """The python modules every guest gets under /ktest/run/lib."""
    out = {}
    for src in (os.path.join(HERE, "guest", "ktest_guest.py"),
                os.path.join(HERE, "guest", "ktest.sh"),
                os.path.join(INTEGRATION, "manifest.py")):
        with open(src, "rb") as f:
            out["lib/" + os.path.basename(src)] = f.read()
    return out


def run(script, images=(), files=None, timeout=None, memory=1024, smp=1, accel=None,
        guest_timeout=None):
    """Boot the guest, run `script` (busybox sh text) against `images`.

    images: paths of raw images, attached read-write as /dev/vda, /dev/vdb...
    files: {relative name: bytes|str} put into /ktest/run (next to the script).
    Returns a GuestResult; never raises for a failing script (use .check()).
    """
    info = guest_info()
    timeout = timeout or DEFAULT_TIMEOUT
    res = GuestResult()
    res.accel = accel or _choose_accel(info)
    keep = bool(os.environ.get("KERNEL_TEST_KEEP"))
    rundir = tempfile.mkdtemp(prefix="ktest-run-")
    all_files = default_lib_files()
    all_files.update(files or {})
    env = {"KTEST_NDISKS": len(images),
           "KTEST_TIMEOUT": int(guest_timeout or max(30, timeout - 60))}
    try:
        initrd = os.path.join(rundir, "initrd.cpio")
        with open(info["initramfs"], "rb") as src, open(initrd, "wb") as dst:
            shutil.copyfileobj(src, dst, 1 << 20)
            dst.write(_run_cpio(script, all_files, env))
        outdisk = os.path.join(rundir, "out.tar")
        with open(outdisk, "wb") as f:
            f.truncate(OUT_DISK_SIZE)
        console = os.path.join(rundir, "console.log")
        cmd = [QEMU, "-nodefaults", "-no-reboot", "-display", "none", "-monitor", "none",
               "-serial", "file:" + console, "-m", str(memory), "-smp", str(smp),
               "-kernel", info["kernel"], "-initrd", initrd,
               "-append", "console=ttyS0 quiet loglevel=4 panic=-1 oops=panic rdinit=/init "
                          "tsc=reliable no_timer_check mitigations=off"]
        if res.accel == "kvm":
            cmd += ["-accel", "kvm", "-cpu", os.environ.get("KERNEL_TEST_KVM_CPU", "max")]
        else:
            cmd += ["-accel", "tcg", "-cpu", "max"]
        for img in list(images) + [outdisk]:
            cmd += ["-drive", "file=%s,if=virtio,format=raw,cache=unsafe" % img]
        t0 = time.monotonic()
        with open(os.path.join(rundir, "qemu.log"), "wb") as qlog:
            p = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=qlog,
                                 stderr=subprocess.STDOUT, start_new_session=True)
            try:
                res.qemu_rc = p.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                res.timed_out = True
                p.kill()
                p.wait(timeout=30)
        res.elapsed = time.monotonic() - t0
        with open(console, "rb") as f:
            res.console = f.read().decode("utf-8", "replace").replace("\r\n", "\n")
        with open(os.path.join(rundir, "qemu.log"), "rb") as f:
            qtext = f.read().decode("utf-8", "replace")
        if qtext.strip():
            res.console += "\n--- qemu\n" + qtext
        if "KTEST-OUT-WRITTEN" in res.console:
            _read_out(outdisk, res)
        else:
            m = re.search(r"KTEST-DMESG-BEGIN\n(.*?)KTEST-DMESG-END", res.console, re.S)
            if m:
                res.dmesg = m.group(1)
        if res.rc is None:
            m = re.search(r"KTEST-RESULT: (ok|fail rc=(\d+))", res.console)
            if m:
                res.rc = 0 if m.group(1) == "ok" else int(m.group(2))
    finally:
        if keep:
            res.rundir = rundir
            try:
                os.unlink(os.path.join(rundir, "initrd.cpio"))
            except OSError:
                pass
        else:
            shutil.rmtree(rundir, ignore_errors=True)
    return res


def _read_out(outdisk, res):
    with tarfile.open(outdisk, "r:") as tf:
        for m in tf.getmembers():
            if not m.isfile():
                continue
            name = m.name[2:] if m.name.startswith("./") else m.name
            res.files[name] = tf.extractfile(m).read()
    dec = lambda b: b.decode("utf-8", "replace")  # noqa: E731
    res.stdout = dec(res.files.pop("stdout", b""))
    res.stderr = dec(res.files.pop("stderr", b""))
    res.dmesg = dec(res.files.pop("dmesg", b""))
    rc = res.files.pop("rc", b"").strip()
    if rc.isdigit():
        res.rc = int(rc)


# ---------------------------------------------------------------- helpers

def kernel_mount_and_manifest(image, opts=(), check=True):
    """Mount `image` with the kernel's f2fs (mount options `opts`: a string
    or a list), take its manifest inside the guest with the integration
    suite's walker, unmount.  Returns (manifest text, GuestResult); the
    result's files hold "manifest.tsv.ranges", the range digests of files
    too large to hash in the guest (see range_mismatches).  The image is
    attached read-write: the kernel may write a checkpoint on unmount
    unless opts has ro."""
    o = opts if isinstance(opts, str) else ",".join(opts)
    script = "\n".join([
        "set -e",
        ". lib/ktest.sh",
        "kmount %s" % shlex.quote(o),
        "kmanifest manifest.tsv",
        "kumount",
        ""])
    r = run(script, [image])
    if check:
        r.check()
    return r.files.get("manifest.tsv", b"").decode("utf-8", "surrogateescape"), r


def kernel_run(image, script, opts=(), files=None, mount=True, check=True, images=None):
    """Run `script` (busybox sh) with `image` mounted by the kernel at $MNT
    (/mnt/f2fs, mount options `opts`), then sync and unmount.  The functions
    of guest/ktest.sh (kmount, kumount, kmanifest NAME) and python3 -m
    ktest_guest are at hand; files left in $KTEST_OUT come back in
    result.files.  With mount=False the script gets only the devices
    ($KTEST_DISK0, ...).  `images` attaches further disks after `image`.
    Returns the GuestResult (checked unless check=False)."""
    o = opts if isinstance(opts, str) else ",".join(opts)
    head = [". lib/ktest.sh"]
    if mount:
        head += ["kmount %s || { echo 'KTEST: mount failed' >&2; exit 99; }" % shlex.quote(o)]
    body = "(\n%s\n)\nrc=$?\n" % script
    tail = []
    if mount:
        tail += ["kumount || { echo 'KTEST: umount failed' >&2; exit 98; }"]
    tail += ["exit $rc", ""]
    r = run("\n".join(head) + "\n" + body + "\n".join(tail), [image] + list(images or []),
            files=files)
    if check:
        r.check()
    return r


def range_mismatches(ranges_text, root):
    """Check the range digests a guest manifest wrote (kmanifest NAME ->
    NAME.ranges: `path offset length sha256` lines for files too large to
    hash in the guest) against the tree at `root`.  Returns readable
    differences, empty when all match."""
    import hashlib
    sys.path.insert(0, INTEGRATION)
    import manifest as M
    diffs = []
    for line in ranges_text.splitlines():
        if not line.strip():
            continue
        ptxt, off, n, want = line.split("\t")
        off, n = int(off), int(n)
        path = os.path.join(os.fsencode(root), M.unescape(ptxt))
        h = hashlib.sha256()
        try:
            with open(path, "rb") as f:
                f.seek(off)
                left = n
                while left > 0:
                    b = f.read(min(left, 1 << 20))
                    if not b:
                        break
                    h.update(b)
                    left -= len(b)
        except OSError as e:
            diffs.append("%s: reading [%d, +%d): %s" % (ptxt, off, n, e))
            continue
        if h.hexdigest() != want:
            diffs.append("%s: bytes [%d, +%d) differ (kernel %s, here %s)"
                         % (ptxt, off, n, want[:16], h.hexdigest()[:16]))
    return diffs


# ---------------------------------------------------------------- CLI

def _cli(argv):
    import argparse
    if argv and argv[0] == "manifest":
        ap = argparse.ArgumentParser(prog="run_guest.py manifest")
        ap.add_argument("cmd")
        ap.add_argument("image")
        ap.add_argument("-o", "--options", default="")
        a = ap.parse_args(argv)
        text, r = kernel_mount_and_manifest(a.image, a.options, check=False)
        sys.stdout.write(text)
        for line in dmesg_f2fs_errors(r.dmesg):
            print("kernel: " + line, file=sys.stderr)
        if not r.ok:
            print(r.summary(), file=sys.stderr)
        return 0 if r.ok else 1
    ap = argparse.ArgumentParser(prog="run_guest.py", description="run a script in the guest")
    ap.add_argument("script", nargs="?")
    ap.add_argument("-c", dest="command")
    ap.add_argument("-i", "--image", action="append", default=[])
    ap.add_argument("--file", action="append", default=[], metavar="NAME=PATH")
    ap.add_argument("--out", help="folder to write the guest's $KTEST_OUT files into")
    ap.add_argument("--console", action="store_true", help="print the whole console")
    a = ap.parse_args(argv)
    if a.command is not None:
        script = a.command
    elif a.script:
        with open(a.script) as f:
            script = f.read()
    else:
        ap.error("a script or -c is needed")
    files = {}
    for spec in a.file:
        name, _, path = spec.partition("=")
        with open(path, "rb") as f:
            files[name] = f.read()
    r = run(script, a.image, files=files)
    sys.stdout.write(r.stdout)
    sys.stderr.write(r.stderr)
    if a.console:
        print(r.console, file=sys.stderr)
    for line in dmesg_f2fs_errors(r.dmesg):
        print("kernel: " + line, file=sys.stderr)
    if a.out:
        os.makedirs(a.out, exist_ok=True)
        for name, data in r.files.items():
            dst = os.path.join(a.out, name)
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            with open(dst, "wb") as f:
                f.write(data)
        with open(os.path.join(a.out, "dmesg"), "w") as f:
            f.write(r.dmesg)
    print("guest: rc=%s %.1fs accel=%s" % (r.rc, r.elapsed, r.accel), file=sys.stderr)
    if not r.ok and r.rc in (None, 0):
        print(r.summary(), file=sys.stderr)
        return 2
    return r.rc


if __name__ == "__main__":
    sys.exit(_cli(sys.argv[1:]))
