"""The command line: version, help, read-write by default, refusing bad
images, and background (daemonized) mounting."""

import errno
import os
import re
import shutil
import subprocess
import time

import pytest

import fsutil

HERE = os.path.dirname(os.path.abspath(__file__))
MAKEFILE = os.path.join(HERE, "..", "..", "Makefile")


def _version_from_makefile():
    with open(MAKEFILE) as f:
        m = re.search(r"^VERSION\s*:?=\s*(\S+)", f.read(), re.M)
    return m.group(1) if m else None


def _run(argv, timeout=30):
    return fsutil.run(argv, timeout=timeout, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _no_sanitizer(r):
    rep = fsutil.sanitizer_report(r.stdout + r.stderr)
    assert rep is None, rep


def test_version(f2fs_fuse):
    r = _run([f2fs_fuse, "-V"])
    _no_sanitizer(r)
    assert r.returncode == 0, r.stderr
    out = r.stdout + r.stderr
    assert "f2fs-fuse" in out
    ver = _version_from_makefile()
    assert ver and ver in out, out


def test_help(f2fs_fuse):
    for flag in ("-h", "--help"):
        r = _run([f2fs_fuse, flag])
        _no_sanitizer(r)
        assert r.returncode == 0, r.stderr
        out = r.stdout + r.stderr
        assert re.search(r"usage", out, re.I), out
        for word in ("ro", "norecovery", "cache_size", "fsname", "umask"):
            assert word in out, "help does not mention %s:\n%s" % (word, out)


def test_no_arguments_fails(f2fs_fuse):
    r = _run([f2fs_fuse])
    _no_sanitizer(r)
    assert r.returncode != 0


def test_read_write_mount_is_default(f2fs_fuse, fixture_image, tmp_path):
    """Without -o ro, and with -o rw, the mount is writable (as mount(8));
    on a private copy, since the shared one must stay unrecovered."""
    img = tmp_path / "rw.img"
    fsutil.run(["cp", "--sparse=always", fixture_image("recovery"), img], check=True)
    for i, opts in enumerate(((), ("rw",))):
        with fsutil.mounted(f2fs_fuse, img, tmp_path / ("mnt%d" % i), opts) as m:
            p = os.path.join(m.path, "written-%d" % i)
            with open(p, "w") as f:
                f.write("x")
            with open(p) as f:
                assert f.read() == "x"
            with open("/proc/self/mountinfo") as f:
                line = [ln for ln in f if " %s " % m.path in ln][-1]
            assert "rw" in line.split()[5].split(","), line
    fsutil.fsck_check(str(img))


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("losetup"),
                    reason="needs root and losetup for a loop device")
def test_write_protected_device_mounts_read_only(f2fs_fuse, tmp_path):
    """A read-only block device mounts read-only, with the warning mount(8)
    gives ("write-protected, mounting read-only"), as the kernel refuses it
    read-write; Linux would open it read-write and fail each write with
    EPERM (fstests generic/050).  remount,rw is refused."""
    img = tmp_path / "wp.img"
    with open(img, "wb") as f:
        f.truncate(128 << 20)
    fsutil.run(["mkfs.f2fs", "-f", str(img)], check=True)
    r = fsutil.run(["losetup", "--read-only", "--find", "--show", str(img)], timeout=30)
    if r.returncode != 0:
        pytest.skip("no loop devices here: %s" % r.stdout.strip())
    dev = r.stdout.strip().splitlines()[-1]
    try:
        with fsutil.mounted(f2fs_fuse, dev, tmp_path / "mnt", ()) as m:
            assert "write-protected, mounting read-only" in m.stderr()
            with open("/proc/self/mountinfo") as f:
                line = [ln for ln in f if " %s " % m.path in ln][-1]
            assert "ro" in line.split()[5].split(","), line
            with pytest.raises(OSError) as e:
                open(os.path.join(m.path, "x"), "w").close()
            assert e.value.errno == errno.EROFS
            assert os.listdir(m.path) == []
            r = fsutil.run([f2fs_fuse, dev, m.path, "-o", "remount,rw"], timeout=60)
            assert r.returncode != 0 and "cannot be made writable" in r.stdout, r.stdout
    finally:
        fsutil.run(["losetup", "-d", dev], timeout=30)


@pytest.mark.parametrize("what", ["zeros", "random", "missing", "tiny"])
def test_bad_image_refused(f2fs_fuse, tmp_path, what):
    img = tmp_path / "bad.img"
    if what == "zeros":
        with open(img, "wb") as f:
            f.truncate(64 << 20)
    elif what == "random":
        img.write_bytes(os.urandom(1 << 20))
    elif what == "tiny":
        img.write_bytes(b"\x10\x20\xf5\xf2" * 100)
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    r = _run([f2fs_fuse, "-f", "-o", "ro", str(img), str(mnt)])
    try:
        _no_sanitizer(r)
        assert r.returncode != 0
        assert (r.stderr + r.stdout).strip(), "refused without a message"
        assert not fsutil.is_fuse_mount(mnt)
    finally:
        if fsutil.is_fuse_mount(mnt):
            fsutil.run(["fusermount3", "-u", "-z", str(mnt)])


def test_background_mount(f2fs_fuse, fixture_image, tmp_path):
    """Without -f the daemon detaches once mounted (what `make demo` uses)."""
    img = fixture_image("recovery")
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    r = _run([f2fs_fuse, "-o", "ro", img, str(mnt)])
    try:
        _no_sanitizer(r)
        assert r.returncode == 0, r.stderr
        deadline = time.monotonic() + 10
        while not fsutil.is_fuse_mount(mnt) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert fsutil.is_fuse_mount(mnt)
        assert sorted(os.listdir(mnt)) == ["base", "other"]
    finally:
        if fsutil.is_fuse_mount(mnt):
            u = fsutil.run(["fusermount3", "-u", str(mnt)])
            assert u.returncode == 0, u.stdout
    deadline = time.monotonic() + 10
    while fsutil.is_fuse_mount(mnt) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not fsutil.is_fuse_mount(mnt)


def test_background_info_goes_to_syslog(f2fs_fuse, fixture_image, tmp_path):
    """A background daemon's informational lines (roll-forward recovery
    here) go to syslog, not to the terminal that mounted: the same replay in
    the foreground prints its line, so the absence is not an accident."""
    fg_img, bg_img = tmp_path / "fg.img", tmp_path / "bg.img"
    for img in (fg_img, bg_img):
        fsutil.run(["cp", "--sparse=always", fixture_image("recovery"), img], check=True)
    with fsutil.mounted(f2fs_fuse, fg_img, tmp_path / "fgmnt", ("rw",)) as m:
        pass
    assert "roll-forward recovery" in m.stderr()
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    r = _run([f2fs_fuse, "-o", "rw", str(bg_img), str(mnt)])
    try:
        _no_sanitizer(r)
        assert r.returncode == 0, r.stderr
        assert "roll-forward" not in r.stderr + r.stdout
        deadline = time.monotonic() + 10
        while not fsutil.is_fuse_mount(mnt) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert fsutil.is_fuse_mount(mnt)
    finally:
        if fsutil.is_fuse_mount(mnt):
            u = fsutil.run(["fusermount3", "-u", str(mnt)])
            assert u.returncode == 0, u.stdout
    # the daemon writes its last checkpoint after the unmount: wait for it
    deadline = time.monotonic() + 30
    while (fsutil.run(["pgrep", "-f", str(bg_img)]).returncode == 0
           and time.monotonic() < deadline):
        time.sleep(0.05)
    assert fsutil.run(["pgrep", "-f", str(bg_img)]).returncode != 0, "daemon still running"
    fsutil.fsck_check(str(fg_img))
    fsutil.fsck_check(str(bg_img))


def test_fsname_option(mount, fixture_image):
    img = fixture_image("recovery")
    with mount(img, options=("ro", "fsname=myf2fs")) as m:
        with open("/proc/self/mountinfo") as f:
            line = [ln for ln in f if " %s " % m.path in ln][-1]
        source = line.split(" - ")[1].split()[1]
        assert source == "myf2fs", line


def test_mount_fuse3_helper(f2fs_fuse, fixture_image, tmp_path):
    """`mount -t fuse.f2fs-fuse IMG MNT -o ro` goes through mount.fuse3,
    which runs `f2fs-fuse IMG MNT -o ...` found on PATH."""
    img = fixture_image("recovery")
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    env = dict(os.environ, PATH=os.path.dirname(f2fs_fuse) + ":" + os.environ.get("PATH", ""))
    r = fsutil.run(["mount.fuse3", img, str(mnt), "-t", "f2fs-fuse", "-o", "ro"], env=env,
                   timeout=30)
    try:
        assert r.returncode == 0, r.stdout
        assert fsutil.mount_fstype(mnt) == "fuse.f2fs-fuse"
        assert sorted(os.listdir(mnt)) == ["base", "other"]
    finally:
        if fsutil.is_fuse_mount(mnt):
            assert fsutil.run(["fusermount3", "-u", str(mnt)]).returncode == 0


def test_uid_gid_umask_options(mount, fixture_image):
    with mount(fixture_image("recovery"), options=("ro", "uid=1234", "gid=5678", "umask=027")) as m:
        seen = 0
        for dirpath, dirnames, filenames in os.walk(m.path):
            for n in [dirpath] + [os.path.join(dirpath, x) for x in filenames]:
                st = os.lstat(n)
                assert (st.st_uid, st.st_gid) == (1234, 5678), n
                assert st.st_mode & 0o027 == 0, (n, oct(st.st_mode))
                seen += 1
        assert seen >= 10
        st = os.lstat(os.path.join(m.path, "base", "untouched"))
        assert st.st_mode & 0o7777 == 0o640          # 0644 on disk


