"""mount -o remount: mount(8) hands it to mount.fuse3, which runs
"f2fs-fuse SOURCE MOUNTPOINT -o ...,remount,..."; that process changes the
running mount (read-only and back, the per-mount flags) and tells the
daemon, which commits a checkpoint when the mount becomes read-only.
Remounting is mount(2) with MS_REMOUNT: root only.
"""

import errno
import os
import shutil
import subprocess

import pytest

import fsutil
from test_keys import KEY_ID, Ctl, fusectl, key_bytes, key_file, new_image  # noqa: F401
from test_write import RWImage, fsck_inode_count

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="remounting needs root")

# What mount(8) gives mount.fuse3 for "mount -o remount,ro MNT": the
# options of /proc/self/mountinfo with the new ones.
FROM_MOUNT8 = "nosuid,nodev,relatime,remount,user_id=0,group_id=0,default_permissions"


def remount(f2fs_fuse, image, mnt, opts, user=None):
    """f2fs-fuse as mount.fuse3 starts it; returns the CompletedProcess."""
    cmd = [f2fs_fuse, str(image), str(mnt), "-o", opts]
    if user is not None:
        cmd = ["setpriv", "--reuid=%d" % user, "--regid=%d" % user, "--clear-groups"] + cmd
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60,
                       text=True)
    rep = fsutil.sanitizer_report(r.stdout + r.stderr)
    assert rep is None, rep
    return r


def mount_opts(path):
    """(per-mount options, super options) of the topmost mount at `path`."""
    found = None
    with open("/proc/self/mountinfo") as f:
        for line in f:
            left, _, right = line.partition(" - ")
            cols = left.split()
            if fsutil._unoctal(cols[4]) == os.path.realpath(path):
                found = (set(cols[5].split(",")), set(right.split()[2].split(",")))
    assert found, path
    return found


def errno_of(fn, *args):
    try:
        fn(*args)
    except OSError as e:
        return e.errno
    return 0


def write(path, data=b"x", flags=os.O_WRONLY | os.O_CREAT | os.O_TRUNC):
    fd = os.open(path, flags, 0o644)
    try:
        os.write(fd, data)
    finally:
        os.close(fd)




def test_remount_read_only_and_back(f2fs_fuse, tmp_path):
    img = RWImage(f2fs_fuse, tmp_path, options=("checkpoint_interval=3600",))
    try:
        top = img.mount()
        write(os.path.join(top, "before"), b"written before")
        os.mkdir(os.path.join(top, "dir"))
        shutil.copy("/bin/true", os.path.join(top, "true"))
        os.chmod(os.path.join(top, "true"), 0o755)
        reader = open(os.path.join(top, "before"), "rb")

        r = remount(f2fs_fuse, img.image, top, "ro," + FROM_MOUNT8)
        assert r.returncode == 0, r.stderr
        assert r.stderr == ""
        per_mount, sb = mount_opts(top)
        assert "ro" in sb and "ro" in per_mount
        assert {"nosuid", "nodev"} <= per_mount      # as mount(8) asked, again
        assert "remounted read-only" in img.m.stderr()
        # The daemon committed a checkpoint (the periodic one is an hour
        # away): the image is whole, with the new files, while the mount
        # is read-only.
        assert fsck_inode_count(fsutil.fsck_check(img.image)) == 4

        # the kernel refuses every change; reads and exec still work
        for fn, args in ((write, (os.path.join(top, "new"),)),
                         (write, (os.path.join(top, "before"), b"y", os.O_WRONLY)),
                         (os.mkdir, (os.path.join(top, "d2"),)),
                         (os.unlink, (os.path.join(top, "before"),)),
                         (os.rename, (os.path.join(top, "dir"), os.path.join(top, "d3"))),
                         (os.chmod, (os.path.join(top, "before"), 0o600)),
                         (os.truncate, (os.path.join(top, "before"), 0)),
                         (os.setxattr, (os.path.join(top, "before"), "user.a", b"1"))):
            assert errno_of(fn, *args) == errno.EROFS, fn
        assert reader.read() == b"written before"
        assert subprocess.run([os.path.join(top, "true")], timeout=30).returncode == 0

        # back to read-write: the same daemon takes changes again
        r = remount(f2fs_fuse, img.image, top, "rw," + FROM_MOUNT8)
        assert r.returncode == 0, r.stderr
        per_mount, sb = mount_opts(top)
        assert "rw" in sb and "rw" in per_mount
        assert "remounted read-write" in img.m.stderr()
        write(os.path.join(top, "after"), b"written after")
        reader.close()
        img.finish()
    finally:
        img.close()


def test_remount_flags_and_refusals(f2fs_fuse, tmp_path):
    img = RWImage(f2fs_fuse, tmp_path)
    try:
        top = img.mount()
        # per-mount flags change; options not given keep their state
        r = remount(f2fs_fuse, img.image, top, "remount,noexec")
        assert r.returncode == 0, r.stderr
        per_mount, _ = mount_opts(top)
        assert {"rw", "noexec", "nosuid", "nodev"} <= per_mount
        r = remount(f2fs_fuse, img.image, top, "remount,exec,cache_size=1M")
        assert r.returncode == 0, r.stderr
        assert "cache_size=1M stays as mounted" in r.stderr
        assert "noexec" not in mount_opts(top)[0]

        # a file open for writing keeps the mount writable, as for any file system
        with open(os.path.join(top, "busy"), "wb"):
            r = remount(f2fs_fuse, img.image, top, "ro,remount")
            assert r.returncode != 0
            assert "open for writing" in r.stderr
        assert "rw" in mount_opts(top)[1]

        # only root may remount
        if shutil.which("setpriv"):
            r = remount(f2fs_fuse, img.image, top, "ro,remount", user=65534)
            assert r.returncode != 0 and "only root may remount" in r.stderr, r.stderr
            assert "rw" in mount_opts(top)[1]

        # not a mount of ours
        other = tmp_path / "plain-dir"
        other.mkdir()
        r = remount(f2fs_fuse, img.image, other, "ro,remount")
        assert r.returncode != 0 and "not a FUSE mount" in r.stderr
        img.finish()

    finally:
        img.close()


def fsync_dir(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)    # a directory fsync commits a checkpoint
    finally:
        os.close(fd)


def test_remount_read_write_of_read_only_mount(f2fs_fuse, tmp_path):
    """A -o ro mount made read-write (fstests generic/417): the daemon opens
    the image again for writing, frees the orphans the read-only mount left
    and takes changes.  Refused while another read-only mount shares the
    image, and while fsync()ed data waits for roll-forward recovery."""
    img = RWImage(f2fs_fuse, tmp_path, options=("checkpoint_interval=3600",))
    try:
        # an orphan in the last checkpoint: unlinked while open, then a crash
        top = img.mount()
        write(os.path.join(top, "kept"), b"kept")
        write(os.path.join(top, "victim"), b"v" * (2 << 20))
        fd = os.open(os.path.join(top, "victim"), os.O_RDONLY)
        os.unlink(os.path.join(top, "victim"))
        fsync_dir(top)
        img.crash()
        os.close(fd)

        top = img.mount(ro=True)
        assert "left for a read-write mount to free" in img.m.stderr()
        free_ro = os.statvfs(top).f_bfree
        assert errno_of(write, os.path.join(top, "new")) == errno.EROFS
        r = remount(f2fs_fuse, img.image, top, "rw," + FROM_MOUNT8)
        assert r.returncode == 0, r.stderr
        per_mount, sb = mount_opts(top)
        assert "rw" in sb and "rw" in per_mount
        log = img.m.stderr()
        assert "image reopened read-write" in log and "freed orphan inode" in log, log
        # read-only for ioctls until the kernel's mount changed, then read-write
        assert log.index("image reopened read-write") < log.index("remounted read-write"), log
        assert os.statvfs(top).f_bfree >= free_ro + 512
        write(os.path.join(top, "after"), b"written after the remount")
        # and back: the same daemon, now writable, commits at remount,ro
        r = remount(f2fs_fuse, img.image, top, "ro," + FROM_MOUNT8)
        assert r.returncode == 0, r.stderr
        assert fsck_inode_count(fsutil.fsck_check(img.image)) == 3
        r = remount(f2fs_fuse, img.image, top, "rw," + FROM_MOUNT8)
        assert r.returncode == 0, r.stderr
        img.unmount()

        # a second read-only mount shares the image: no writer's claim
        top = img.mount(ro=True)
        other = fsutil.Mount(f2fs_fuse, img.image, tmp_path / "other", ["ro"]).start()
        try:
            r = remount(f2fs_fuse, img.image, top, "rw," + FROM_MOUNT8)
            assert r.returncode != 0
            assert "cannot be made writable" in r.stderr, r.stderr
            assert "another read-only mount shares it" in img.m.stderr()
            assert "ro" in mount_opts(top)[1]
            assert os.listdir(top) and errno_of(write, os.path.join(top, "x")) == errno.EROFS
        finally:
            other.unmount()
        # with it gone the claim is free
        r = remount(f2fs_fuse, img.image, top, "rw," + FROM_MOUNT8)
        assert r.returncode == 0, r.stderr
        img.unmount()

        # fsync()ed data after the last checkpoint: a read-only mount does not
        # replay it, and the remount is refused rather than change files the
        # kernel has cached; a read-write mount then replays it
        top = img.mount()
        with open(os.path.join(top, "kept"), "r+b") as f:
            f.write(b"synced")
            f.flush()
            os.fsync(f.fileno())
        img.crash()
        top = img.mount(ro=True)
        r = remount(f2fs_fuse, img.image, top, "rw," + FROM_MOUNT8)
        assert r.returncode != 0
        assert "roll-forward recovery is pending" in img.m.stderr()
        assert "ro" in mount_opts(top)[1]
        with open(os.path.join(top, "kept"), "rb") as f:
            assert f.read() == b"kept"
        img.unmount()
        top = img.mount()
        with open(os.path.join(top, "kept"), "rb") as f:
            assert f.read() == b"synced"
        img.finish()
    finally:
        img.close()


def test_remount_read_only_refuses_set_policy(f2fs_fuse, fusectl, key_file, tmp_path):
    """Encryption policies are set by ioctl or socket, which the kernel's
    read-only check does not cover: the daemon refuses them itself."""
    image = str(tmp_path / "crypt.img")
    new_image(image)
    ctl = Ctl(fusectl)
    with fsutil.mounted(f2fs_fuse, image, tmp_path / "mnt", ("rw",)) as m:
        ctl.out("add_key", m.path, input=key_bytes(key_file))
        os.mkdir(os.path.join(m.path, "empty"))
        r = remount(f2fs_fuse, image, m.path, "ro,remount")
        assert r.returncode == 0, r.stderr
        for transport in ("ioctl", "socket"):
            msg = Ctl(fusectl, transport).fails("set_policy", KEY_ID,
                                                os.path.join(m.path, "empty"))
            assert "Read-only file system" in msg, msg
        r = remount(f2fs_fuse, image, m.path, "rw,remount")
        assert r.returncode == 0, r.stderr
        ctl.out("set_policy", KEY_ID, os.path.join(m.path, "empty"))
    fsutil.fsck_check(image)


def _mount8_available():
    return all(shutil.which(t) for t in ("unshare", "mount", "mount.fuse3")) and \
        os.path.isdir("/usr/local/sbin")


@pytest.mark.skipif(not _mount8_available(), reason="needs unshare, mount(8) and mount.fuse3")
def test_remount_through_mount8(f2fs_fuse, tmp_path):
    """mount(8) runs mount.fuse3 with a fixed PATH: in a private mount
    namespace, a folder with f2fs-fuse covers /usr/local/sbin, and
    "mount -o remount,ro MNT" works as it does with the binary installed."""
    sbin = tmp_path / "sbin"
    sbin.mkdir()
    shutil.copy(f2fs_fuse, sbin / "f2fs-fuse")
    img = RWImage(f2fs_fuse, tmp_path)
    try:
        top = img.mount()
        write(os.path.join(top, "f"), b"data")

        def mount8(*args):
            script = 'mount --bind "$1" /usr/local/sbin && shift && exec mount "$@"'
            return subprocess.run(["unshare", "--mount", "--propagation", "private", "sh",
                                   "-c", script, "sh", str(sbin)] + list(args),
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                  text=True, timeout=60)
        r = mount8("-o", "remount,ro", top)
        assert r.returncode == 0, r.stdout
        per_mount, sb = mount_opts(top)
        assert "ro" in sb and {"nosuid", "nodev"} <= per_mount
        assert errno_of(write, os.path.join(top, "g")) == errno.EROFS
        assert fsck_inode_count(fsutil.fsck_check(img.image)) == 2
        # as fstests' _scratch_remount does it: type, source and mount point
        r = mount8("-t", "fuse.f2fs-fuse", "-o", "remount,rw", img.image, top)
        assert r.returncode == 0, r.stdout
        assert "rw" in mount_opts(top)[1]
        write(os.path.join(top, "g"), b"more")
        img.finish()
    finally:
        img.close()
