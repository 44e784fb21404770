"""Corrupted images through the real binary.

tests/corrupt/make_corpus.py writes (once per session) two clean base images
and a list of single-corruption variants, each with its expected outcome:
the mount is refused with a message naming the damaged structure, or the
mount succeeds and given accesses fail with EIO/EUCLEAN (or succeed with
contents the independent parser tests/corrupt/f2fsimg.py computed).  For
every variant this test also requires:
  - no crash: the daemon exits by itself with status 0 after unmount (or
    with a plain nonzero status when it refuses the image), never by a
    signal, and prints no sanitizer report;
  - no hang: every mount, access and unmount runs under a timeout (the
    accesses run in a separate process, tests/corrupt/probe.py);
  - no writes: the image is byte-for-byte unchanged (sha256) afterwards.
"""

import hashlib
import json
import os
import shutil
import subprocess
import sys

import pytest

import fsutil

HERE = os.path.dirname(os.path.abspath(__file__))
CORRUPT = os.path.join(os.path.dirname(HERE), "corrupt")
sys.path.insert(0, CORRUPT)
import make_corpus  # noqa: E402

PROBE_TIMEOUT = float(os.environ.get("F2FS_TEST_PROBE_TIMEOUT", "120"))
NAMES = [v[0] for v in make_corpus.VARIANTS]


def _have_tools():
    return all(shutil.which(t) or os.path.exists("/usr/sbin/" + t) or os.path.exists("/sbin/" + t)
               for t in ("mkfs.f2fs", "sload.f2fs", "fsck.f2fs"))


@pytest.fixture(scope="session")
def corpus(tmp_path_factory):
    if not _have_tools():
        pytest.skip("mkfs.f2fs, sload.f2fs and fsck.f2fs are needed to build the corpus")
    out = tmp_path_factory.mktemp("corrupt-corpus")
    env = dict(os.environ)
    env["PATH"] = env.get("PATH", "") + ":/usr/sbin:/sbin"
    r = subprocess.run([sys.executable, os.path.join(CORRUPT, "make_corpus.py"), str(out)],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       timeout=900, env=env)
    assert r.returncode == 0, "make_corpus.py failed:\n" + r.stdout
    with open(out / "corpus.json") as f:
        data = json.load(f)
    variants = {v["name"]: v for v in data["variants"]}
    return {"dir": str(out), "bases": data["bases"], "variants": variants}


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for b in iter(lambda: f.read(1 << 20), b""):
            h.update(b)
    return h.hexdigest()


def materialise(corpus, v, dest):
    base = os.path.join(corpus["dir"], corpus["bases"][v["base"]])
    make_corpus.apply_patch(base, v["patch"], dest)
    return dest


def describe(v):
    return "%s [%s]: %s" % (v["name"], v["structure"], v["description"])


def check_refused(f2fs_fuse, image, mnt, v):
    m = fsutil.Mount(f2fs_fuse, image, mnt, options=("ro",))
    try:
        m.start()
    except fsutil.MountError as e:
        out = m.stderr()
        msg = str(e)
        assert "did not mount within" not in msg, "%s: hang at mount\n%s" % (describe(v), msg)
        rep = fsutil.sanitizer_report(out)
        assert rep is None, "%s: sanitizer report: %s\n%s" % (describe(v), rep, out)
        rc = m.returncode
        assert rc is not None and rc > 0, \
            "%s: daemon died with status %s (a signal is a crash)\n%s" % (describe(v), rc, out)
        low = out.lower()
        assert any(k.lower() in low for k in v["expect"]["keywords"]), \
            "%s: refused, but no message names one of %s:\n%s" % (
                describe(v), v["expect"]["keywords"], out)
        return
    # it mounted: that is the failure; clean up first
    try:
        probe = run_probe(mnt, [])
        walked = probe.get("walk") if probe else None
    finally:
        m.unmount()
    pytest.fail("%s: corrupted image was mounted (expected refusal naming %s); walk: %s\n%s"
                % (describe(v), v["expect"]["keywords"], walked, m.stderr()))


def run_probe(mnt, checks):
    r = subprocess.run([sys.executable, os.path.join(CORRUPT, "probe.py"), str(mnt),
                        json.dumps(checks)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True, timeout=PROBE_TIMEOUT)
    assert r.returncode == 0, "probe failed (%d):\n%s" % (r.returncode, r.stderr)
    return json.loads(r.stdout)


def judge(check, res):
    """None if res satisfies check, else a message."""
    op, path, want = check["op"], check["path"] or ".", check["result"]
    got_errno = res.get("errno")
    what = "%s(%s)" % (op, path)
    errnos = check.get("errnos", make_corpus.ERR)
    if want == "error":
        if got_errno is None:
            return "%s succeeded (%r%s), expected errno in %s" % (
                what, res.get("value"), "; " + res["detail"] if res.get("detail") else "", errnos)
        if got_errno not in errnos:
            return "%s failed with errno %d (%s), expected one of %s" % (
                what, got_errno, res.get("strerror"), errnos)
        return None
    if got_errno is not None:
        if want == "any" and got_errno in errnos:
            return None
        return "%s failed with errno %d (%s), expected success%s" % (
            what, got_errno, res.get("strerror"),
            " or errno in %s" % errnos if want == "any" else "")
    val = res.get("value")
    if op == "read" and "sha256" in check and val != check["sha256"]:
        return "%s: contents differ (sha256 %s, expected %s%s)" % (
            what, val, check["sha256"], "; " + res["detail"] if res.get("detail") else "")
    if op in ("list", "listxattr") and "names" in check and val != sorted(check["names"]):
        return "%s returned %s, expected %s" % (what, val, sorted(check["names"]))
    if op == "readlink" and "target" in check and val != check["target"]:
        return "%s returned %r, expected %r" % (what, val, check["target"])
    if op == "getxattr" and "value_hex" in check and val != check["value_hex"]:
        return "%s returned %s, expected %s" % (what, val, check["value_hex"])
    if op == "read_head":
        data = bytes.fromhex(val)
        prefix = bytes.fromhex(check["prefix_hex"])
        if not data.startswith(prefix[:len(data)]) or any(data[len(prefix):]):
            return "%s returned %d bytes that are neither the original data nor zeros: %s" % (
                what, len(data), data[:64].hex())
    return None


def check_mounts(f2fs_fuse, image, mnt, v):
    checks = v["expect"]["checks"]
    with fsutil.mounted(f2fs_fuse, image, mnt, options=("ro",)) as m:
        try:
            probe = run_probe(mnt, checks)
        except subprocess.TimeoutExpired:
            pytest.fail("%s: accesses did not finish within %.0f s (hang)\n%s"
                        % (describe(v), PROBE_TIMEOUT, m.stderr()))
    # leaving the with-block asserted exit status 0 and no sanitizer report
    problems = [p for p in (judge(c, r) for c, r in zip(checks, probe["checks"])) if p]
    assert not problems, "%s:\n  %s\nwalk: %s\ndaemon output:\n%s" % (
        describe(v), "\n  ".join(problems), probe["walk"], m.stderr())


@pytest.mark.needs_binary
@pytest.mark.parametrize("name", NAMES)
def test_corrupt_image(name, corpus, f2fs_fuse, tmp_path):
    v = corpus["variants"][name]
    image = materialise(corpus, v, str(tmp_path / (name + ".img")))
    before = sha256_file(image)
    mnt = tmp_path / "mnt"
    try:
        if v["expect"]["mount"] == "refused":
            check_refused(f2fs_fuse, image, mnt, v)
        else:
            check_mounts(f2fs_fuse, image, mnt, v)
    finally:
        after = sha256_file(image)
        assert after == before, "%s: the image was modified by a read-only mount" % describe(v)


@pytest.mark.needs_binary
@pytest.mark.parametrize("base", ["A", "B"])
def test_corpus_base_images_mount(base, corpus, f2fs_fuse, tmp_path):
    """The clean bases must mount and read in full, or the variants prove nothing."""
    image = str(tmp_path / "base.img")
    shutil.copyfile(os.path.join(corpus["dir"], corpus["bases"][base]), image)
    before = sha256_file(image)
    with fsutil.mounted(f2fs_fuse, image, tmp_path / "mnt", options=("ro",)):
        probe = run_probe(tmp_path / "mnt", [])
    assert probe["walk"]["errors"] == {}, "errors reading clean base %s: %s" % (base, probe)
    assert probe["walk"]["entries"] > 3
    assert sha256_file(image) == before
