"""fscrypt v1 keys and policies: keys named by an 8-byte descriptor,
added with `f2fs-fusectl add_key --descriptor=`, `-o v1_key_file=` or
removed and queried by descriptor (also through the kernel's own ioctls),
v1 policies set with a 16-hex-digit descriptor; who may manage v1 keys;
and what is refused (short keys, bad descriptors, v2-only flags).

Uses the helpers of test_keys.py (F2FS_FUSECTL as there).
"""

import errno
import os
import shutil

import pytest

import fsutil
import manifest as M
from test_keys import (LONG_NAME, MARKER, TRANSPORTS, Ctl, _can_switch_user, _iowr,
                       fill_tree, fusectl, names, new_image, public_dir)  # noqa: F401

DESC = "0123456789abcdef"
DESC2 = "fedcba9876543210"

# name: (set_policy options, contents, filenames, flags, key size)
V1_POLICIES = {
    "default": ([], "AES-256-XTS", "AES-256-CTS", "PAD_32", 64),
    # 16 bytes are all AES-128 needs; 32 all Adiantum needs
    "aes-128": (["--contents=AES-128-CBC", "--filenames=AES-128-CTS", "--padding=16"],
                "AES-128-CBC", "AES-128-CTS", "PAD_16", 16),
    "adiantum": (["--contents=Adiantum", "--filenames=Adiantum", "--direct-key"],
                 "Adiantum", "Adiantum", "PAD_32, DIRECT_KEY", 32),
}

EXPECT = ("Encryption policy for %s:\n"
          "\tPolicy version: 1\n"
          "\tMaster key descriptor: %s\n"
          "\tContents encryption mode: %s\n"
          "\tFilenames encryption mode: %s\n"
          "\tFlags: %s\n")


def write_key(path, size, seed=0):
    data = bytes((seed * 31 + i * 7 + 3) & 0xff for i in range(size))
    with open(path, "wb") as f:
        f.write(data)
    return data


def assert_errno(fn, want):
    with pytest.raises(OSError) as ei:
        fn()
    assert ei.value.errno == want, ei.value


def read_all(path):
    with open(path, "rb") as f:
        return f.read()


@pytest.mark.parametrize("kind,transport", [("default", "ioctl"), ("default", "socket"),
                                            ("aes-128", "ioctl"), ("adiantum", "socket")])
def test_v1_roundtrip(mount, fusectl, tmp_path, kind, transport):
    opts, contents, filenames, flags, ksize = V1_POLICIES[kind]
    img = str(tmp_path / "rw.img")
    new_image(img)
    keyf = str(tmp_path / "v1.key")
    raw = write_key(keyf, ksize)
    ctl = Ctl(fusectl, transport)
    with mount(img, options=("rw",)) as m:
        top = os.path.join(m.path, "secret")
        os.mkdir(top)
        # as in the kernel, a v1 policy needs no key to be set; its files do
        ctl.out("set_policy", *opts, DESC, top)
        ctl.out("set_policy", *opts, DESC, top)     # the same again is fine
        assert "different encryption policy" in ctl.fails("set_policy", DESC2, top)
        assert ctl.out("get_policy", top) == EXPECT % (top, DESC, contents, filenames, flags)
        assert_errno(lambda: os.mkdir(os.path.join(top, "x")), errno.ENOKEY)

        assert ctl.out("key_status", DESC, m.path) == "Absent\n"
        assert ctl.out("add_key", "--descriptor=" + DESC, m.path, input=raw) == DESC + "\n"
        # v1 keys have no users, and fscryptctl prints them so
        assert ctl.out("key_status", DESC, m.path) == "Present\n"
        fill_tree(top)
        small = os.path.join(top, "small.txt")
        assert ctl.out("get_policy", small) == EXPECT % (small, DESC, contents, filenames,
                                                          flags)
        assert os.readlink(os.path.join(top, "link")) == "sub/" + "t" * 100
        before = M.walk(top, prefix="secret").manifest

        big = os.path.join(top, "sub", "big.bin")
        fd = os.open(big, os.O_RDONLY)
        try:
            assert os.pread(fd, len(MARKER), 0) == MARKER
            assert ctl.out("remove_key", DESC, m.path) == ""
            # nothing left in the kernel's caches: not the open file's pages ...
            assert_errno(lambda: os.pread(fd, len(MARKER), 0), errno.ENOKEY)
        finally:
            os.close(fd)
        assert ctl.out("key_status", DESC, m.path) == "Absent\n"
        # ... nor the names
        locked = names(top)
        assert not locked & {"small.txt", "sub", LONG_NAME, "link"}
        assert len(locked) == 4
        assert not os.path.exists(small)
        assert_errno(lambda: os.mkdir(os.path.join(top, "x")), errno.ENOKEY)
        assert "not present" in ctl.fails("remove_key", DESC, m.path)

        # back with the key from a file: the plaintext names replace the no-key ones
        assert ctl.out("add_key", "--descriptor=" + DESC, "--key-file=" + keyf,
                       m.path) == DESC + "\n"
        assert os.path.exists(small) and not (locked & names(top))
        diffs = M.compare(before, M.walk(top, prefix="secret").manifest)
        assert diffs == [], M.report(diffs)
    fsutil.fsck_check(img)
    disk = open(img, "rb").read()
    assert MARKER not in disk
    assert LONG_NAME.encode() not in disk and b"small.txt" not in disk

    with mount(img, options=("ro", "v1_key_file=%s:%s" % (DESC, keyf))) as m:
        top = os.path.join(m.path, "secret")
        diffs = M.compare(before, M.walk(top, prefix="secret").manifest)
        assert diffs == [], M.report(diffs)
        assert read_all(os.path.join(top, "sub", "big.bin")).startswith(MARKER)
        assert ctl.out("key_status", DESC, m.path) == "Present\n"
        ctl.out("remove_key", DESC, m.path)
        assert names(top) == locked
    assert raw.hex() not in m.stderr()

    with mount(img, options=("ro",)) as m:
        top = os.path.join(m.path, "secret")
        assert names(top) == locked      # the same no-key names from the same ciphertext
        for n in locked:
            p = os.path.join(top, n)
            if os.path.isfile(p) and not os.path.islink(p) and os.path.getsize(p):
                assert_errno(lambda: read_all(p), errno.ENOKEY)
        ctl.out("add_key", "--descriptor=" + DESC, m.path, input=raw)
        diffs = M.compare(before, M.walk(top, prefix="secret").manifest)
        assert diffs == [], M.report(diffs)


def test_v1_and_v2_keys_side_by_side(mount, fusectl, tmp_path):
    """A v1 key and a v2 key come and go independently."""
    img = str(tmp_path / "rw.img")
    new_image(img)
    v1 = write_key(str(tmp_path / "v1.key"), 64, seed=1)
    v2 = write_key(str(tmp_path / "v2.key"), 64, seed=2)
    ctl = Ctl(fusectl)
    with mount(img, options=("rw",)) as m:
        d1, d2 = os.path.join(m.path, "one"), os.path.join(m.path, "two")
        os.mkdir(d1)
        os.mkdir(d2)
        ctl.out("add_key", "--descriptor=" + DESC, m.path, input=v1)
        kid = ctl.out("add_key", m.path, input=v2).strip()
        ctl.out("set_policy", DESC, d1)
        ctl.out("set_policy", kid, d2)
        for d in (d1, d2):
            with open(os.path.join(d, "f"), "wb") as f:
                f.write(MARKER + d.encode())
        ctl.out("remove_key", DESC, m.path)
        assert "f" not in names(d1)
        assert read_all(os.path.join(d2, "f")) == MARKER + d2.encode()
        ctl.out("add_key", "--descriptor=" + DESC, m.path, input=v1)
        ctl.out("remove_key", kid, m.path)
        assert read_all(os.path.join(d1, "f")) == MARKER + d1.encode()
        assert "f" not in names(d2)
    fsutil.fsck_check(img)


def test_v1_refused(mount, fusectl, tmp_path):
    img = str(tmp_path / "rw.img")
    new_image(img)
    ctl = Ctl(fusectl)
    good = write_key(str(tmp_path / "good.key"), 64)
    short = write_key(str(tmp_path / "short.key"), 32, seed=5)
    with mount(img, options=("rw",)) as m:
        # descriptors: exactly 16 hex digits
        for bad in ("0123", DESC + "0", "0123456789abcdeg", "ee" * 16):
            assert "invalid key descriptor" in ctl.fails(
                "add_key", "--descriptor=" + bad, m.path, input=good)
        assert "invalid key identifier" in ctl.fails("key_status", DESC[:-1], m.path)
        assert "invalid key identifier" in ctl.fails("remove_key", "zz" * 8, m.path)
        assert "too short" in ctl.fails("add_key", "--descriptor=" + DESC, m.path,
                                        input=b"k" * 15)
        assert "not present" in ctl.fails("remove_key", DESC, m.path)

        # one key per descriptor: the same again is fine, another is refused
        ctl.out("add_key", "--descriptor=" + DESC, m.path, input=good)
        ctl.out("add_key", "--descriptor=" + DESC, m.path, input=good)
        assert "different key is present" in ctl.fails(
            "add_key", "--descriptor=" + DESC, m.path, input=short)

        # what a v1 context cannot hold
        d = os.path.join(m.path, "d")
        os.mkdir(d)
        assert "no --iv-ino-lblk-64" in ctl.fails("set_policy", "--iv-ino-lblk-64", DESC, d)
        assert "no --data-unit-size" in ctl.fails("set_policy", "--data-unit-size=4096",
                                                  DESC, d)
        assert "invalid policy" in ctl.fails("set_policy", "--filenames=AES-256-HCTR2",
                                             DESC, d)

        # a key shorter than the modes need: refused by set_policy ...
        ctl.out("add_key", "--descriptor=" + DESC2, m.path, input=short)
        msg = ctl.fails("set_policy", DESC2, d)
        assert "too short for AES-256-XTS/AES-256-CTS" in msg and "64 bytes" in msg, msg
        ctl.out("set_policy", "--contents=Adiantum", "--filenames=Adiantum", DESC2, d)
        # ... and, for a policy set before the key came, by every file under it
        ctl.out("remove_key", DESC2, m.path)
        e = os.path.join(m.path, "e")
        os.mkdir(e)
        ctl.out("set_policy", DESC2, e)
        ctl.out("add_key", "--descriptor=" + DESC2, m.path, input=short)

        def write_file():
            with open(os.path.join(e, "f"), "wb") as f:
                f.write(MARKER)
        # names (AES-256-CTS) take a 32-byte key; contents (AES-256-XTS) do not
        assert_errno(write_file, errno.ENOKEY)
        assert "too short for AES-256-XTS (32 < 64 bytes)" in m.stderr(), m.stderr()
    fsutil.fsck_check(img)


@pytest.mark.parametrize("value,why", [
    ("{dir}/good.key", "expected DESCRIPTOR:PATH"),
    (DESC + ":", "expected DESCRIPTOR:PATH"),
    ("0123456789abcde:{dir}/good.key", "expected DESCRIPTOR:PATH"),
    (DESC + ":{dir}/short.key", "too short"),
    (DESC + ":{dir}/missing.key", "No such file"),
])
def test_v1_key_file_refused(f2fs_fuse, tmp_path, value, why):
    write_key(str(tmp_path / "good.key"), 64)
    write_key(str(tmp_path / "short.key"), 15)
    img = str(tmp_path / "rw.img")
    new_image(img)
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    r = fsutil.run([f2fs_fuse, "-f", "-o", "ro,v1_key_file=" + value.format(dir=tmp_path),
                    img, str(mnt)], timeout=60)
    assert r.returncode != 0
    assert "v1_key_file" in r.stdout and why in r.stdout, r.stdout
    assert not fsutil.is_fuse_mount(str(mnt))


def test_v1_key_file_conflict(f2fs_fuse, tmp_path):
    a = tmp_path / "a.key"
    b = tmp_path / "b.key"
    write_key(str(a), 64, seed=1)
    write_key(str(b), 64, seed=2)
    img = str(tmp_path / "rw.img")
    new_image(img)
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    r = fsutil.run([f2fs_fuse, "-f", "-o", "ro,v1_key_file=%s:%s,v1_key_file=%s:%s"
                    % (DESC, a, DESC, b), img, str(mnt)], timeout=60)
    assert r.returncode != 0
    assert "another key was given for the same descriptor" in r.stdout, r.stdout
    assert not fsutil.is_fuse_mount(str(mnt))


@pytest.mark.skipif(not _can_switch_user(), reason="needs root and setpriv")
@pytest.mark.parametrize("transport", TRANSPORTS)
def test_v1_keys_need_root_or_the_mounter(f2fs_fuse, fusectl, public_dir, transport):
    """As the kernel's CAP_SYS_ADMIN rule: another user may neither add nor
    remove a v1 key (here the daemon runs as root); anyone may ask."""
    nobody = 65534
    img = os.path.join(public_dir, "rw.img")
    new_image(img)
    raw = write_key(os.path.join(public_dir, "v1.key"), 64)
    mnt = os.path.join(public_dir, "mnt")
    root_ctl = Ctl(fusectl, transport)
    user_ctl = Ctl(fusectl, transport, user=nobody)
    with fsutil.mounted(f2fs_fuse, img, mnt, options=("rw", "allow_other")) as m:
        msg = user_ctl.fails("add_key", "--descriptor=" + DESC, m.path, input=raw)
        assert "Permission denied" in msg and "v1 keys" in msg, msg
        assert user_ctl.out("key_status", DESC, m.path) == "Absent\n"
        root_ctl.out("add_key", "--descriptor=" + DESC, m.path, input=raw)
        assert user_ctl.out("key_status", DESC, m.path) == "Present\n"
        d = os.path.join(m.path, "theirs")
        os.mkdir(d)
        os.chown(d, nobody, nobody)
        # the directory's owner sets the policy; the key is root's business
        user_ctl.out("set_policy", DESC, d)
        with open(os.path.join(d, "f"), "wb") as f:
            f.write(MARKER)
        for args in (("remove_key", DESC), ("remove_key", "--all-users", DESC)):
            msg = user_ctl.fails(*args, m.path)
            assert "Permission denied" in msg, msg
        assert read_all(os.path.join(d, "f")) == MARKER
        root_ctl.out("remove_key", DESC, m.path)
        assert "f" not in names(d)
    fsutil.fsck_check(img)


def test_kernel_ioctls_with_descriptor(mount, tmp_path):
    """FS_IOC_GET_ENCRYPTION_KEY_STATUS and FS_IOC_REMOVE_ENCRYPTION_KEY
    with a descriptor key specifier, as fscryptctl or the kernel's tests
    issue them."""
    import fcntl
    import struct

    img = str(tmp_path / "rw.img")
    new_image(img)
    keyf = str(tmp_path / "v1.key")
    write_key(keyf, 64)
    desc = bytes.fromhex(DESC)

    def spec(reserved=0):
        return struct.pack("II32s", 1, reserved, desc)

    def status(fd):
        arg = bytearray(spec() + bytes(128 - 40))
        fcntl.ioctl(fd, _iowr(26, 128), arg)
        return struct.unpack_from("III", arg, 64)

    with mount(img, options=("ro", "v1_key_file=%s:%s" % (DESC, keyf))) as m:
        fd = os.open(m.path, os.O_RDONLY)
        try:
            assert status(fd) == (2, 0, 0)      # present, no users
            bad = bytearray(spec(reserved=1) + bytes(64 - 40))
            assert_errno(lambda: fcntl.ioctl(fd, _iowr(24, 64), bad), errno.EINVAL)
            arg = bytearray(spec() + bytes(64 - 40))
            fcntl.ioctl(fd, _iowr(24, 64), arg)
            assert struct.unpack_from("I", arg, 40) == (0,)
            assert status(fd) == (1, 0, 0)      # absent
            assert_errno(lambda: fcntl.ioctl(fd, _iowr(24, 64), arg), errno.ENOKEY)
        finally:
            os.close(fd)
