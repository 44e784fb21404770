"""The f2fs ioctls through the mount: Debian's f2fs_io where it has the
command (shutdown, pinfile, defrag_file, getflags), callers of our own for
the rest (F2FS_IOC_GARBAGE_COLLECT{,_RANGE}, WRITE_CHECKPOINT, MOVE_RANGE,
GET_FEATURES, FS_IOC_{GET,SET}FSLABEL), fstrim for FITRIM, and
f2fs-fusectl's extents and status.  fsck.f2fs after every test that
writes."""

import errno
import fcntl
import os
import re
import struct
import subprocess

import pytest

import fsutil
from test_keys import fusectl  # noqa: F401
from test_write import MiB, blob, rwimage, sha, write_file  # noqa: F401

NO_PERIODIC = "checkpoint_interval=3600"
BLK = 4096


def _ioc(d, typ, nr, size):
    return (d << 30) | (size << 16) | (typ << 8) | nr


F2FS = 0xF5
GARBAGE_COLLECT = _ioc(1, F2FS, 6, 4)
WRITE_CHECKPOINT = _ioc(0, F2FS, 7, 0)
DEFRAGMENT = _ioc(3, F2FS, 8, 16)
MOVE_RANGE = _ioc(3, F2FS, 9, 32)
GC_RANGE = _ioc(1, F2FS, 11, 24)
GET_FEATURES = _ioc(2, F2FS, 12, 4)
SET_PIN_FILE = _ioc(1, F2FS, 13, 4)
GET_PIN_FILE = _ioc(2, F2FS, 14, 4)
SHUTDOWN = _ioc(2, ord("X"), 125, 4)
GETFSLABEL = _ioc(2, 0x94, 49, 256)
SETFSLABEL = _ioc(1, 0x94, 50, 256)


def f2fs_io(*args, check=True):
    r = subprocess.run(["f2fs_io"] + [str(a) for a in args], capture_output=True, text=True,
                       timeout=60)
    if check:
        assert r.returncode == 0, (args, r.stdout, r.stderr)
    return r


def ioctl_err(fd, cmd, arg):
    try:
        fcntl.ioctl(fd, cmd, arg)
    except OSError as e:
        return e.errno
    return 0


def extents(ctl, path):
    """f2fs-fusectl extents: [(lblk, pblk, len, flags)]."""
    r = fsutil.run([ctl, "extents", path])
    assert r.returncode == 0, r.stdout + r.stderr
    out = []
    for line in r.stdout.splitlines():
        m = re.match(r"\s*\d+:\s+(\d+)\.\.\s*(\d+):\s+(\d+)\.\.\s*(\d+):\s+(\d+):\s*(\d*)\s*(.*)$",
                     line)
        if m:
            out.append((int(m.group(1)), int(m.group(3)), int(m.group(5)), m.group(7).strip()))
    return out


def image_blocks(image, pblk, n):
    with open(image, "rb") as f:
        f.seek(pblk * BLK)
        return f.read(n * BLK)


def no_sys_admin(*cmd):
    """Run cmd as root without CAP_SYS_ADMIN."""
    return subprocess.run(["setpriv", "--inh-caps=-sys_admin", "--bounding-set=-sys_admin",
                           "--"] + [str(c) for c in cmd], capture_output=True, text=True,
                          timeout=60)


# ---------------------------------------------------------------- shutdown

@pytest.mark.parametrize("mode", [0, 1, 2, 3])
def test_shutdown_then_recover(rwimage, mode):
    """f2fs_io shutdown MODE: changes fail with EIO at once, unmounting
    writes nothing, and the next mount recovers what was fsync()ed (full
    sync: everything; metadata sync: the names and sizes too).  fsck is clean at each step."""
    img = rwimage(options=(NO_PERIODIC,))
    p = img.mount()
    write_file(os.path.join(p, "base"), blob(50000, 1))
    img.unmount()
    p = img.mount()
    fd = os.open(os.path.join(p, "synced"), os.O_RDWR | os.O_CREAT, 0o644)
    os.write(fd, blob(300000, 2))
    os.fsync(fd)
    os.close(fd)
    write_file(os.path.join(p, "unsynced"), blob(7000, 3))
    r = f2fs_io("shutdown", mode, p)
    assert "level=%d" % mode in r.stdout      # the caller's argument is left as it was
    with pytest.raises(OSError) as e:
        write_file(os.path.join(p, "after"), b"x")
    assert e.value.errno == errno.EIO
    with pytest.raises(OSError) as e:
        os.mkdir(os.path.join(p, "dir-after"))
    assert e.value.errno == errno.EIO
    # a second shutdown finds the mount stopped
    assert f2fs_io("shutdown", mode, p, check=False).returncode != 0
    img.unmount()
    fsutil.fsck_check(img.image)
    p = img.mount()
    names = set(os.listdir(p))
    assert {"base", "synced"} <= names
    assert "after" not in names and "dir-after" not in names
    with open(os.path.join(p, "synced"), "rb") as f:
        assert sha(f.read()) == sha(blob(300000, 2))
    if mode == 0:
        with open(os.path.join(p, "unsynced"), "rb") as f:
            assert f.read() == blob(7000, 3)
    elif mode == 1:
        # the kernel's "checkpoint only": the name and size are committed,
        # the data that was never written back reads as zeros
        with open(os.path.join(p, "unsynced"), "rb") as f:
            assert f.read() == bytes(7000)
    else:
        assert "unsynced" not in names
    img.finish()


def test_shutdown_needs_sys_admin(rwimage):
    """As the kernel's: CAP_SYS_ADMIN for shutdown, gc, checkpoints and
    the label; the mount goes on."""
    img = rwimage(options=(NO_PERIODIC,))
    p = img.mount()
    r = no_sys_admin("f2fs_io", "shutdown", 2, p)
    assert r.returncode != 0 and "not permitted" in r.stderr + r.stdout, r
    code = ("import fcntl,os,sys; fd=os.open(sys.argv[1], os.O_RDONLY)\n"
            "for c, a in ((%d, b'\\1\\0\\0\\0'), (%d, 0), (%d, b'x' * 256)):\n"
            "    try: fcntl.ioctl(fd, c, a); print('ok')\n"
            "    except OSError as e: print(e.errno)\n"
            % (GARBAGE_COLLECT, WRITE_CHECKPOINT, SETFSLABEL))
    r = no_sys_admin("python3", "-c", code, p)
    assert r.stdout.split() == [str(errno.EPERM)] * 3, r
    write_file(os.path.join(p, "still"), b"writable")
    img.finish()


# ---------------------------------------------------------------- pinned files

def test_pinfile(rwimage, fusectl):  # noqa: F811
    """f2fs_io pinfile set/get; lsattr shows C; cleaning passes the pinned
    file's blocks by while it moves the unpinned neighbour's."""
    img = rwimage(options=(NO_PERIODIC,))
    p = img.mount()
    pinned, loose = os.path.join(p, "pinned"), os.path.join(p, "loose")
    write_file(pinned, b"")
    assert "un-pinned" in f2fs_io("pinfile", "get", pinned).stdout
    f2fs_io("pinfile", "set", pinned)
    assert "pinned with 0 blocks" in f2fs_io("pinfile", "get", pinned).stdout
    assert "C" in fsutil.run(["lsattr", pinned]).stdout.split()[0]
    # interleave the two files and a third one that goes, so their segments are dirty
    with open(pinned, "wb") as a, open(loose, "wb") as b, open(os.path.join(p, "gone"), "wb") as c:
        for i in range(600):
            a.write(blob(BLK, 10 + i))
            b.write(blob(BLK, 2000 + i))
            c.write(blob(BLK, 5000 + i))
            for f in (a, b, c):
                f.flush()
    os.unlink(os.path.join(p, "gone"))
    fd = os.open(p, os.O_RDONLY)
    assert ioctl_err(fd, WRITE_CHECKPOINT, 0) == 0
    before_pinned, before_loose = extents(fusectl, pinned), extents(fusectl, loose)
    main_blk = min(e[1] for e in before_pinned + before_loose) // 512 * 512
    end_blk = max(e[1] + e[2] for e in before_pinned + before_loose)
    assert ioctl_err(fd, GC_RANGE, struct.pack("IxxxxQQ", 1, main_blk, end_blk - main_blk)) == 0
    os.close(fd)
    assert extents(fusectl, pinned) == before_pinned
    assert extents(fusectl, loose) != before_loose
    # the failures are counted, as the kernel's i_gc_failures
    out = f2fs_io("pinfile", "get", pinned).stdout
    assert re.search(r"pinned with [1-9]\d* blocks", out), out
    fd = os.open(pinned, os.O_RDONLY)      # f2fs_io has no unpin
    assert fcntl.ioctl(fd, SET_PIN_FILE, struct.pack("I", 0)) == struct.pack("I", 0)
    os.close(fd)
    assert "un-pinned" in f2fs_io("pinfile", "get", pinned).stdout
    with open(pinned, "rb") as f:
        assert sha(f.read()) == sha(b"".join(blob(BLK, 10 + i) for i in range(600)))
    img.finish()


# ---------------------------------------------------------------- cleaning, checkpoints

def test_gc_checkpoint_and_status(rwimage, fusectl):  # noqa: F811
    """F2FS_IOC_GARBAGE_COLLECT cleans a section (ENODATA once nothing is
    left to clean), WRITE_CHECKPOINT commits one; f2fs-fusectl status shows
    the counts with the kernel's names, and repeats with -i."""
    img = rwimage(options=(NO_PERIODIC,))
    p = img.mount()
    for i in range(40):
        # on the device now, so that the unlinks below leave holes in segments
        write_file(os.path.join(p, "f%d" % i), blob(256 * 1024, i), sync=True)
    for i in range(0, 40, 2):
        os.unlink(os.path.join(p, "f%d" % i))
    fd = os.open(p, os.O_RDONLY)
    assert ioctl_err(fd, WRITE_CHECKPOINT, 0) == 0
    st = fsutil.run([fusectl, "status", p]).stdout
    dirty = int(re.search(r"- Dirty: (\d+)", st).group(1))
    assert dirty > 0, st
    runs = 0
    while ioctl_err(fd, GARBAGE_COLLECT, struct.pack("I", 1)) == 0:
        runs += 1
        assert runs < 100
    assert ioctl_err(fd, GARBAGE_COLLECT, struct.pack("I", 1)) == errno.ENODATA
    os.close(fd)
    assert runs >= 1
    st = fsutil.run([fusectl, "status", p]).stdout
    for name in ("Utilization:", "Main area:", "- COLD   data:", "- Indir nodes:", "- Prefree:",
                 "- Free:", "CP calls:", "GC calls:", "SSR:", "Device I/O:", ">=512K"):
        assert name in st, (name, st)
    assert int(re.search(r"GC calls: (\d+)", st).group(1)) >= runs
    assert int(re.search(r"- Dirty: (\d+)", st).group(1)) < dirty
    r = fsutil.run([fusectl, "status", "-i", "1", "-c", "2", p])
    assert r.returncode == 0 and r.stdout.count("partition info") == 2
    for i in range(1, 40, 2):
        with open(os.path.join(p, "f%d" % i), "rb") as f:
            assert f.read() == blob(256 * 1024, i)
    img.finish()


# ---------------------------------------------------------------- moving data

def test_defrag_and_extents(rwimage, fusectl):  # noqa: F811
    """f2fs_io defrag_file turns a file written in interleaved blocks into
    one extent; f2fs-fusectl extents names the blocks the data is in (read
    back from the image after unmounting)."""
    img = rwimage(options=(NO_PERIODIC,))
    p = img.mount()
    a, b = os.path.join(p, "a"), os.path.join(p, "b")
    with open(a, "wb") as fa, open(b, "wb") as fb:
        for i in range(64):
            # each block allocated before the other file's next (writeback
            # would allocate each file's dirty blocks as one run)
            fa.write(blob(BLK, i))
            fa.flush()
            os.fsync(fa.fileno())
            fb.write(blob(BLK, 100 + i))
            fb.flush()
            os.fsync(fb.fileno())
    assert len(extents(fusectl, a)) > 1
    r = f2fs_io("defrag_file", 0, 64 * BLK, a)
    ext = extents(fusectl, a)
    assert len(ext) == 1 and ext[0][0] == 0 and ext[0][2] == 64, (r.stdout, ext)
    assert "last" in ext[0][3]
    b_ext = extents(fusectl, b)
    img.unmount()
    assert image_blocks(img.image, ext[0][1], 64) == b"".join(blob(BLK, i) for i in range(64))
    data = b"".join(image_blocks(img.image, e[1], e[2]) for e in b_ext)
    assert data == b"".join(blob(BLK, 100 + i) for i in range(64))
    fsutil.fsck_check(img.image)
    p = img.mount()
    with open(os.path.join(p, "a"), "rb") as f:
        assert f.read() == b"".join(blob(BLK, i) for i in range(64))
    img.finish()


def test_move_range(rwimage):
    """F2FS_IOC_MOVE_RANGE: dst's range holds src's data, src a hole; the
    kernel's EBADF and EINVAL cases."""
    img = rwimage(options=(NO_PERIODIC,))
    p = img.mount()
    src, dst = os.path.join(p, "src"), os.path.join(p, "dst")
    write_file(src, blob(10 * BLK, 1))
    write_file(dst, blob(3 * BLK, 2))
    fs = os.open(src, os.O_RDWR)
    fd = os.open(dst, os.O_RDWR)
    arg = bytearray(struct.pack("IxxxxQQQ", fd, 2 * BLK, 2 * BLK, 4 * BLK))
    fcntl.ioctl(fs, MOVE_RANGE, arg)
    assert struct.unpack("IxxxxQQQ", arg)[3] == 4 * BLK
    ro = os.open(src, os.O_RDONLY)
    assert ioctl_err(ro, MOVE_RANGE, struct.pack("IxxxxQQQ", fd, 0, 0, BLK)) == errno.EBADF
    assert ioctl_err(fs, MOVE_RANGE, struct.pack("IxxxxQQQ", fd, 100, 0, BLK)) == errno.EINVAL
    assert ioctl_err(fs, MOVE_RANGE, struct.pack("IxxxxQQQ", fs, 0, BLK, 2 * BLK)) == errno.EINVAL
    for x in (fs, fd, ro):
        os.close(x)
    s, d = blob(10 * BLK, 1), bytearray(blob(3 * BLK, 2))
    want_src = s[:2 * BLK] + bytes(4 * BLK) + s[6 * BLK:]
    want_dst = bytes(d[:2 * BLK]) + s[2 * BLK:6 * BLK]
    with open(src, "rb") as f:
        assert f.read() == want_src
    with open(dst, "rb") as f:
        assert f.read() == want_dst
    img.finish()


# ---------------------------------------------------------------- superblock

def test_features_label_fitrim(rwimage, tmp_path):
    """GET_FEATURES is the superblock's word; the label round-trips in
    UTF-8 and survives a remount (both superblock copies, checksummed);
    fstrim discards the free segments of an image (its blocks go)."""
    img = rwimage(features="extra_attr,inode_checksum,sb_checksum", options=(NO_PERIODIC,))
    p = img.mount()
    fd = os.open(p, os.O_RDONLY)
    feat = struct.unpack("I", fcntl.ioctl(fd, GET_FEATURES, bytes(4)))[0]
    assert feat & 0x0008 and feat & 0x0020 and feat & 0x0800, hex(feat)   # the -O ones
    label = "données-\U0001f600"
    fcntl.ioctl(fd, SETFSLABEL, label.encode().ljust(256, b"\0"))
    got = fcntl.ioctl(fd, GETFSLABEL, bytes(256)).rstrip(b"\0").decode()
    assert got == label
    assert ioctl_err(fd, SETFSLABEL, b"\xff\xfe".ljust(256, b"\0")) == errno.EINVAL
    os.close(fd)
    write_file(os.path.join(p, "big"), blob(8 * MiB, 1), sync=True)   # in the image
    os.unlink(os.path.join(p, "big"))
    used = os.stat(img.image).st_blocks
    r = fsutil.run(["fstrim", "-v", p])
    assert r.returncode == 0, r.stdout + r.stderr
    trimmed = int(re.search(r"\((\d+) bytes\) trimmed", r.stdout).group(1))
    assert trimmed >= 8 * MiB
    assert os.stat(img.image).st_blocks < used - 8 * MiB // 512 // 2
    img.unmount()
    fsutil.fsck_check(img.image)
    # util-linux reads it as the kernel wrote it
    assert fsutil.run(["blkid", "-o", "value", "-s", "LABEL", img.image]).stdout.strip() == label
    p = img.mount()
    fd = os.open(p, os.O_RDONLY)
    assert fcntl.ioctl(fd, GETFSLABEL, bytes(256)).rstrip(b"\0").decode() == label
    os.close(fd)
    img.finish()


def test_pinned_fallocate_in_place(rwimage, fusectl):  # noqa: F811
    """Android's swap and OTA files: pinned, then fallocated, they get real
    zeroed blocks in whole sections of their own (section-aligned, rounded
    up to whole sections), and writes land in place, so the addresses
    handed out stay true."""
    img = rwimage(options=(NO_PERIODIC,))
    p = img.mount()
    swap = os.path.join(p, "swap")
    write_file(os.path.join(p, "before"), blob(5000, 1))
    write_file(swap, b"")
    f2fs_io("pinfile", "set", swap)
    fsutil.run(["fallocate", "-l", str(3 * MiB), swap], check=True)
    assert os.path.getsize(swap) == 3 * MiB
    with open(swap, "rb") as f:
        assert f.read() == bytes(3 * MiB)
    ext = extents(fusectl, swap)
    assert ext and all(e[1] % 512 == 0 and "unwritten" not in e[3] for e in ext), ext
    assert sum(e[2] for e in ext) == 1024          # 768 blocks asked, whole sections given
    data = blob(3 * MiB, 7)
    with open(swap, "r+b") as f:
        f.write(data)
    assert extents(fusectl, swap) == ext
    img.unmount()
    fsutil.fsck_check(img.image)
    got = b"".join(image_blocks(img.image, e[1], e[2]) for e in ext)
    assert got[:3 * MiB] == data
    p = img.mount()
    with open(os.path.join(p, "swap"), "rb") as f:
        assert f.read() == data
    img.finish()


def test_extents_and_status_read_only(mount, fixture_image, fusectl):  # noqa: F811
    """On a read-only mount of a kernel-written image: compressed clusters
    show as encoded extents, inline files as inline data, and status
    reports from the checkpoint; the changing ioctls are EROFS."""
    with mount(fixture_image("plain")) as m:
        r = fsutil.run([fusectl, "extents", os.path.join(m.path, "compr-lz4", "mixed-512k")])
        assert r.returncode == 0 and "encoded" in r.stdout, r.stdout + r.stderr
        st = fsutil.run([fusectl, "status", m.path])
        assert st.returncode == 0 and "#0, RO, CP: Good" in st.stdout, st.stdout + st.stderr
        fd = os.open(m.path, os.O_RDONLY)
        assert ioctl_err(fd, WRITE_CHECKPOINT, 0) == errno.EROFS
        assert ioctl_err(fd, GARBAGE_COLLECT, struct.pack("I", 1)) == errno.EROFS
        os.close(fd)
        small = [e.path for e in os.scandir(m.path) if e.is_file() and 0 < e.stat().st_size < 2000]
        if small:
            assert "inline_data" in fsutil.run([fusectl, "extents", small[0]]).stdout


def test_shutdown_need_fsck(rwimage):
    """f2fs_io shutdown 4 (F2FS_GOING_DOWN_NEED_FSCK): a checkpoint asking
    for fsck and the mount goes on; the next read-write mount waits for
    fsck.f2fs, after which all is there."""
    img = rwimage(options=(NO_PERIODIC,))
    p = img.mount()
    write_file(os.path.join(p, "kept"), blob(30000, 1))
    f2fs_io("shutdown", 4, p)
    write_file(os.path.join(p, "after"), blob(2000, 2))
    img.unmount()
    m = fsutil.Mount(img.binary, img.image, img.dir / "refused", list(img.options))
    with pytest.raises(fsutil.MountError) as e:
        m.start()
    m._kill()
    assert "needs fsck" in str(e.value)
    r = fsutil.run(["fsck.f2fs", "-f", "-y", img.image])
    assert r.returncode == 0, r.stdout
    fsutil.fsck_check(img.image)
    p = img.mount()
    with open(os.path.join(p, "after"), "rb") as f:
        assert f.read() == blob(2000, 2)
    img.finish()
