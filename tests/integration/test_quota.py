"""Quota on `mkfs.f2fs -g android` images (quota_ino, project_quota):
read-write mounts keep the user, group and project quota files equal to
what the files on the image use, through every kind of change and through
crash recovery, as fsck.f2fs checks them; limits give EDQUOT; project ids
and PROJINHERIT through chattr/lsattr and their ioctls."""

import array
import fcntl
import os
import shutil
import stat
import struct
import subprocess
import tempfile
import time

import pytest

import fsutil

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
# beside the daemon under test (build-asan/ for make asan), else build/
FUSECTL = os.environ.get("F2FS_FUSECTL") or (
    os.path.join(os.path.dirname(os.environ["F2FS_FUSE"]), "f2fs-fusectl")
    if os.environ.get("F2FS_FUSE") else os.path.join(REPO, "build", "f2fs-fusectl"))

FS_IOC_FSGETXATTR = 0x801C581F
FS_IOC_FSSETXATTR = 0x401C5820
FS_XFLAG_PROJINHERIT = 0x200
TYPES = ("user", "group", "project")
USER = 1000
NO_PERIODIC = "checkpoint_interval=3600"


def need_tools():
    for t in ("mkfs.f2fs", "fsck.f2fs", "chattr", "lsattr", "setpriv"):
        if not shutil.which(t):
            pytest.skip("%s not installed" % t)
    if os.geteuid() != 0:
        pytest.skip("needs root (chown, other users through allow_other)")


def android_image(path, size=256 << 20):
    with open(path, "wb") as f:
        f.truncate(size)
    r = fsutil.run(["mkfs.f2fs", "-f", "-g", "android", str(path)])
    assert r.returncode == 0, r.stdout
    return str(path)


class Image:
    """An android image mounted and remounted read-write (allow_other, so
    other users reach it), crashed with SIGKILL, checked with fsck."""

    def __init__(self, binary, options=()):
        self.binary = binary
        # other users must reach the mount: not under tmp_path, which is root's alone
        self.dir = tempfile.mkdtemp(prefix="f2fs-quota-", dir="/tmp")
        os.chmod(self.dir, 0o755)
        self.image = android_image(os.path.join(self.dir, "android.img"))
        self.path = os.path.join(self.dir, "mnt")
        self.options = ("rw", "allow_other", NO_PERIODIC) + tuple(options)
        self.m = None

    def mount(self, options=()):
        self.m = fsutil.Mount(self.binary, self.image, self.path,
                              self.options + tuple(options)).start()
        return self.path

    def unmount(self):
        m, self.m = self.m, None
        m.unmount()
        m.check_exit()
        return m

    def crash(self):
        m, self.m = self.m, None
        m._kill()
        return m

    def close(self):
        if self.m:
            self.m._kill()
            self.m = None
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture
def img(f2fs_fuse):
    need_tools()
    i = Image(f2fs_fuse)
    yield i
    i.close()


def fusectl(*args, user=None):
    cmd = [FUSECTL] + [str(a) for a in args]
    if user is not None:
        cmd = ["setpriv", "--reuid=%d" % user, "--regid=%d" % user, "--clear-groups"] + cmd
    return subprocess.run(cmd, capture_output=True, text=True, timeout=60)


# root without CAP_SYS_RESOURCE (from the bounding and inheritable sets, so
# the exec does not give it back): the limits apply to it as to anyone
NO_SYS_RESOURCE = ["setpriv", "--inh-caps=-sys_resource", "--bounding-set=-sys_resource"]


def py(code, prefix=NO_SYS_RESOURCE):
    """Run python code under prefix (setpriv ...); its stdout."""
    r = subprocess.run(prefix + ["/usr/bin/python3", "-c", code], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


def report(mnt, qtype):
    """{id: (KiB used, inodes, soft, hard, isoft, ihard)} from f2fs-fusectl quota."""
    r = fusectl("quota", "-" + qtype[0], mnt)
    assert r.returncode == 0, r.stdout + r.stderr
    return parse_report(r.stdout)


def parse_report(text):
    """f2fs-fusectl quota's table as {id: (KiB used, inodes, soft, hard, isoft, ihard)}."""
    out = {}
    for line in text.splitlines():
        f = line.split()
        if f and f[0].isdigit():
            out[int(f[0])] = (int(f[1]), int(f[5]), int(f[2]), int(f[3]), int(f[6]), int(f[7]))
    return out


def get_projid(path):
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    try:
        buf = array.array("B", bytes(28))
        fcntl.ioctl(fd, FS_IOC_FSGETXATTR, buf, True)
        xflags, _, _, projid = struct.unpack_from("<IIII", buf)
        return projid, bool(xflags & FS_XFLAG_PROJINHERIT)
    finally:
        os.close(fd)


def model(mnt, symlink_projid=None):
    """What fsck.f2fs counts: each inode once, (i_blocks - 1) blocks (stat's
    st_blocks) and one inode, for its user, group and project."""
    use = {t: {} for t in TYPES}
    seen = set()
    for top, dirs, files in os.walk(mnt):
        for name in [None] + dirs + files:
            p = top if name is None else os.path.join(top, name)
            st = os.lstat(p)
            if st.st_ino in seen:
                continue
            seen.add(st.st_ino)
            if not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)):
                # no ioctl reaches a symlink's or a fifo's inode: what the test says
                prj = (symlink_projid or {}).get(p, 0)
            else:
                prj = get_projid(p)[0]
            for t, qid in zip(TYPES, (st.st_uid, st.st_gid, prj)):
                kib, n = use[t].get(qid, (0, 0))
                use[t][qid] = (kib + st.st_blocks // 2, n + 1)
    return use


def check_usage(mnt, **kw):
    want = model(mnt, **kw)
    for t in TYPES:
        got = {i: v[:2] for i, v in report(mnt, t).items() if v[0] or v[1]}
        assert got == want[t], "%s quota: reported %s, the files use %s" % (t, got, want[t])
    return want


def write(path, nbytes, mode="wb"):
    with open(path, mode) as f:
        f.write(os.urandom(nbytes))


def workload(p):
    """Every kind of change that moves usage."""
    j = lambda *a: os.path.join(p, *a)   # noqa: E731
    os.makedirs(j("a", "b"))
    write(j("a", "inline"), 100)                      # inline data
    write(j("a", "grow"), 100)
    write(j("a", "grow"), 9000, "ab")                 # inline -> blocks
    write(j("a", "big"), 5 << 20)                     # direct and indirect nodes
    write(j("a", "b", "mid"), 300000)
    for i in range(150):                              # a directory out of its inline area
        write(j("a", "b", "s%03d" % i), 10)
    write(j("a", "xattr"), 10)
    os.setxattr(j("a", "xattr"), "user.big", b"x" * 3000)    # an xattr node
    os.chown(j("a", "big"), USER, USER)
    os.chown(j("a", "b"), USER, 2000)
    os.chown(j("a", "b", "mid"), 3000, USER)
    os.truncate(j("a", "big"), 1 << 20)
    os.truncate(j("a", "b", "mid"), 5000)
    os.truncate(j("a", "grow"), 20 << 20)               # a hole
    os.link(j("a", "big"), j("a", "b", "big-link"))
    os.symlink("x" * 3000, j("a", "longlink"))
    os.symlink("short", j("a", "shortlink"))
    for i in range(0, 150, 3):
        os.unlink(j("a", "b", "s%03d" % i))
    os.rename(j("a", "b", "s001"), j("s001"))
    os.unlink(j("a", "inline"))
    with open(j("a", "falloc"), "wb") as f:
        os.posix_fallocate(f.fileno(), 0, 1 << 20)         # NEW_ADDR reservations
    os.mkfifo(j("a", "fifo"))


def test_android_image_mounts_rw_and_counts(img):
    """The usage f2fs-fusectl reports equals what the files use after each
    kind of change; across a remount; fsck.f2fs finds the files right."""
    p = img.mount()
    before = check_usage(p)
    assert before["user"] == {0: (4, 1)}               # the root directory: one dentry block
    workload(p)
    check_usage(p)
    img.unmount()
    fsutil.fsck_check(img.image)
    p = img.mount()
    check_usage(p)
    shutil.rmtree(os.path.join(p, "a"))
    after = check_usage(p)
    assert after["user"] == {0: (4, 2)}                 # the root and s001 (inline)
    img.unmount()
    fsutil.fsck_check(img.image)


def test_quota_after_crash_recovery(img):
    """fsync()ed changes replayed by roll-forward recovery, and orphans
    freed at mount, are charged and uncharged: the checkpoint after
    recovery has quota files fsck.f2fs agrees with."""
    p = img.mount()
    workload(p)
    img.unmount()
    p = img.mount()
    j = lambda *a: os.path.join(p, *a)   # noqa: E731
    fd = os.open(j("new"), os.O_RDWR | os.O_CREAT, 0o644)
    os.write(fd, os.urandom(200000))
    os.fchown(fd, USER, 4000)
    os.fsync(fd)
    os.close(fd)
    fd = os.open(j("a", "b", "mid"), os.O_WRONLY | os.O_APPEND)
    os.write(fd, os.urandom(3 << 20))
    os.fsync(fd)
    os.close(fd)
    orphan = os.open(j("a", "grow"), os.O_RDONLY)
    os.unlink(j("a", "grow"))
    os.unlink(j("a", "b", "big-link"))
    os.sync()                           # a checkpoint with the orphan in it
    img.crash()
    os.close(orphan)
    p = img.mount()
    assert os.path.getsize(os.path.join(p, "new")) == 200000
    check_usage(p)
    img.unmount()
    fsutil.fsck_check(img.image)


def test_limits_edquot(img):
    """Hard limits stop blocks and inodes with EDQUOT; a soft limit starts
    its grace period and stops writes once it is over; chown into a user
    past its limits fails and changes nothing."""
    p = img.mount(options=("usrquota",))
    os.mkdir(os.path.join(p, "u"))
    os.chown(os.path.join(p, "u"), USER, USER)
    r = fusectl("quota", "-u", "--set", USER, 0, 64, 0, 4, p)
    assert r.returncode == 0, r.stderr
    as_user = ["setpriv", "--reuid=%d" % USER, "--regid=%d" % USER, "--clear-groups"]

    def run(code):
        return subprocess.run(as_user + ["/usr/bin/python3", "-c", code], capture_output=True,
                              text=True, timeout=60)

    r = run("import os\n"
            "f = open(%r, 'wb')\n"
            "try:\n"
            "    f.write(b'x' * (100 << 10)); f.flush()\n"
            "    print('no error')\n"
            "except OSError as e:\n"
            "    print(e.errno)\n" % os.path.join(p, "u", "big"))
    assert r.stdout.split()[-1] == "122", r.stdout + r.stderr    # EDQUOT
    assert os.stat(os.path.join(p, "u", "big")).st_blocks * 512 <= 64 << 10
    rep = report(p, "user")[USER]
    assert rep[0] <= 64 and rep[3] == 64 and rep[5] == 4
    r = run("import os\n"
            "for i in range(5):\n"
            "    try:\n"
            "        open(os.path.join(%r, 'f%%d' %% i), 'w').close()\n"
            "    except OSError as e:\n"
            "        print(i, e.errno); break\n" % os.path.join(p, "u"))
    assert r.stdout.split() == ["2", "122"], r.stdout + r.stderr     # u, big, f0, f1
    # chown into the full user without CAP_SYS_RESOURCE: EDQUOT, the owner stays
    write(os.path.join(p, "rootfile"), 10)
    out = py("import os\n"
             "try:\n"
             "    os.chown(%r, %d, -1); print('ok')\n"
             "except OSError as e:\n"
             "    print(e.errno)\n" % (os.path.join(p, "rootfile"), USER))
    assert out.split() == ["122"], out
    assert os.stat(os.path.join(p, "rootfile")).st_uid == 0
    # soft limit with a grace period of one second
    r = fusectl("quota", "-u", "--set", USER, 0, 0, 0, 0, p)
    assert r.returncode == 0
    for f in os.listdir(os.path.join(p, "u")):
        os.unlink(os.path.join(p, "u", f))
    assert fusectl("quota", "-u", "--grace", 1, 1, p).returncode == 0
    assert fusectl("quota", "-u", "--set", USER, 8, 0, 0, 0, p).returncode == 0
    code = ("import os, sys\n"
            "f = os.open(%r, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)\n"
            "try:\n"
            "    os.write(f, b'x' * 16384); print('ok')\n"
            "except OSError as e:\n"
            "    print(e.errno)\n" % os.path.join(p, "u", "soft"))
    assert run(code).stdout.split() == ["ok"]          # past the soft limit: grace starts
    time.sleep(2.2)
    assert run(code).stdout.split() == ["122"]         # the grace period ran out
    check_usage(p)
    img.unmount()
    fsutil.fsck_check(img.image)
    # the limits and the grace time are in the files: still there after a remount
    p = img.mount()
    rep = report(p, "user")[USER]
    assert rep[2] == 8
    img.unmount()


def has_sys_resource():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("CapEff:"):
                return bool(int(line.split()[1], 16) >> 24 & 1)
    return False


def limited(img):
    """A mount checking every type's limits, with a full user USER (64 KiB,
    3 inodes; the same for group USER) and root's own limits as small."""
    p = img.mount(options=("usrquota", "grpquota", "prjquota"))
    u = os.path.join(p, "u")
    os.mkdir(u)
    os.chown(u, USER, USER)
    for t in ("-u", "-g"):
        r = fusectl("quota", t, "--set", USER, 0, 64, 0, 3, p)
        assert r.returncode == 0, r.stderr
    r = fusectl("quota", "-u", "--set", 0, 0, 64, 0, 3, p)
    assert r.returncode == 0, r.stderr
    return p, u


def outcome(code, prefix=NO_SYS_RESOURCE):
    return py("import os\n"
              "try:\n"
              + "".join("    %s\n" % line for line in code.splitlines()) +
              "    print('ok')\n"
              "except OSError as e:\n"
              "    print(e.errno)\n", prefix).split()


@pytest.mark.skipif(not has_sys_resource(),
                    reason="the test runner has no CAP_SYS_RESOURCE (root in this container "
                           "lacks it, so it is held to the limits as the kernel would hold it)")
def test_limits_root_passes(img):
    """CAP_SYS_RESOURCE passes hard limits and expired grace periods, as the
    kernel's ignore_hardlimit: root writes, creates, links and chowns past
    limits (the usage is counted all the same); fsck.f2fs agrees."""
    p, u = limited(img)
    f = os.path.join(u, "rootwrote")
    write(f, 10)
    os.chown(f, USER, USER)
    write(f, 300 << 10, "ab")                                    # past USER's 64 KiB
    fd = os.open(f, os.O_WRONLY)
    os.posix_fallocate(fd, 0, 1 << 20)
    os.close(fd)
    os.setxattr(f, "user.big", b"x" * 3000)                     # an xattr node
    for i in range(5):                                          # past root's 3 inodes
        os.mkdir(os.path.join(p, "d%d" % i))
    os.chown(os.path.join(p, "d0"), USER, USER)                 # USER's third inode
    os.link(f, os.path.join(p, "d1", "link"))
    rep = report(p, "user")
    assert rep[USER][0] > 1024 and rep[USER][1] == 3, rep      # u, rootwrote, d0
    assert rep[0][1] > 3, rep
    check_usage(p)
    img.unmount()
    fsutil.fsck_check(img.image)


def test_limits_without_sys_resource(img):
    """The user itself, and root without CAP_SYS_RESOURCE, get EDQUOT past
    the limits for writes, new inodes and chown, and nothing changes."""
    p, u = limited(img)
    f = os.path.join(u, "f")
    write(f, 10)
    os.chown(f, USER, USER)
    as_user = ["setpriv", "--reuid=%d" % USER, "--regid=%d" % USER, "--clear-groups"]
    append = ("f = os.open(%r, os.O_WRONLY | os.O_APPEND); d = b'x' * (100 << 10)\n"
              "while d: d = d[os.write(f, d):]" % f)              # short writes, then EDQUOT
    assert outcome(append, as_user) == ["122"]
    assert outcome(append) == ["122"]
    assert os.stat(f).st_size <= 64 << 10
    assert outcome("os.mkdir(%r)" % os.path.join(u, "x"), as_user) == ["ok"]   # the third
    assert outcome("os.mkdir(%r)" % os.path.join(u, "y"), as_user) == ["122"]
    # root has "/" of its 3 inodes: two more, then EDQUOT
    nocap = [outcome("os.mkdir(%r)" % os.path.join(p, "n%d" % i)) for i in range(3)]
    assert nocap == [["ok"], ["ok"], ["122"]], nocap
    assert outcome("os.chown(%r, %d, -1)" % (os.path.join(p, "n0"), USER)) == ["122"]
    assert os.stat(os.path.join(p, "n0")).st_uid == 0
    check_usage(p)
    img.unmount()
    fsutil.fsck_check(img.image)


def test_limits_not_enforced_without_option(img):
    """Without -o usrquota the usage is kept but limits are not checked."""
    p = img.mount()
    assert fusectl("quota", "-u", "--set", 0, 0, 4, 0, 1, p).returncode == 0
    write(os.path.join(p, "f"), 1 << 20)
    os.mkdir(os.path.join(p, "d"))
    check_usage(p)
    img.unmount()
    fsutil.fsck_check(img.image)


def test_quota_permissions(img):
    """Users see their own usage only; setting limits is root's."""
    p = img.mount()
    os.mkdir(os.path.join(p, "u"))
    os.chown(os.path.join(p, "u"), USER, USER)
    r = fusectl("quota", "-u", "--set", 0, 0, 4, 0, 1, p, user=USER)
    assert r.returncode != 0 and "only root" in r.stderr
    r = fusectl("quota", "-u", p, user=USER)
    assert r.returncode == 0, r.stderr
    ids = [line.split()[0] for line in r.stdout.splitlines() if line[:1].isdigit()]
    assert ids == [str(USER)]
    img.unmount()


def test_project_ids(img):
    """chattr -p/+P and lsattr -p; new inodes inherit a PROJINHERIT
    directory's project; link and rename into such a directory of another
    project fail with EXDEV; project usage follows."""
    p = img.mount(options=("prjquota",))
    j = lambda *a: os.path.join(p, *a)   # noqa: E731
    os.mkdir(j("proj"))
    write(j("outside"), 50000)
    r = fsutil.run(["chattr", "-p", "42", "+P", j("proj")])
    assert r.returncode == 0, r.stdout
    r = fsutil.run(["lsattr", "-pd", j("proj")])
    assert r.stdout.split()[0] == "42" and "P" in r.stdout.split()[1], r.stdout
    write(j("proj", "f"), 70000)
    os.mkdir(j("proj", "sub"))
    write(j("proj", "sub", "g"), 10)
    os.symlink("target", j("proj", "link"))
    assert get_projid(j("proj", "f")) == (42, False)     # the project, not +P
    assert get_projid(j("proj", "sub")) == (42, True)
    assert get_projid(j("proj", "sub", "g"))[0] == 42
    for fn in (lambda: os.rename(j("outside"), j("proj", "moved")),
               lambda: os.link(j("outside"), j("proj", "linked"))):
        with pytest.raises(OSError) as e:
            fn()
        assert e.value.errno == 18                    # EXDEV
    os.rename(j("proj", "f"), j("f-out"))             # leaving is allowed
    r = fsutil.run(["chattr", "-p", "7", j("outside")])
    assert r.returncode == 0, r.stdout
    assert get_projid(j("outside"))[0] == 7
    use = check_usage(p, symlink_projid={j("proj", "link"): 42})
    assert use["project"][42][1] == 5     # proj, sub, g, link and f-out, which kept its id
    # a project limit stops writes into the project, and df shows it there
    assert fusectl("quota", "-p", "--set", 42, 0, 64, 0, 10, p).returncode == 0
    sv = os.statvfs(j("proj"))
    assert sv.f_blocks * sv.f_frsize == 64 << 10 and sv.f_files == 10, sv
    assert os.statvfs(p).f_blocks * os.statvfs(p).f_frsize > 64 << 20
    out = py("import os\n"
             "try:\n"
             "    open(%r, 'wb').write(b'x' * (1 << 20)); print('ok')\n"
             "except OSError as e:\n"
             "    print(e.errno)\n" % j("proj", "sub", "big"))
    assert out.split() == ["122"], out
    img.unmount()
    fsutil.fsck_check(img.image)
    p = img.mount()
    assert get_projid(os.path.join(p, "proj", "sub", "g"))[0] == 42
    img.unmount()
