"""fscrypt keys and policies through f2fs-fusectl: both transports (the
F2FS_IOC_* ioctls and the control socket), -o key_file=, what the kernel
shows after a key comes and goes, and policies set on a fresh image.

F2FS_FUSECTL   path of the tool (default: beside F2FS_FUSE, or build/)
"""

import errno
import os
import shutil
import stat
import subprocess
import tempfile

import pytest

import fsutil
import manifest as M
from conftest import REPO

KEY_ID = "eeec05e6ebadb5814c861095d859e167"
ENC_DIRS = ("enc", "enc64", "enc32", "enc-pad32", "enc-adiantum")
TRANSPORTS = ("ioctl", "socket")


@pytest.fixture(scope="session")
def fusectl(f2fs_fuse):
    path = os.environ.get("F2FS_FUSECTL") or os.path.join(os.path.dirname(f2fs_fuse),
                                                          "f2fs-fusectl")
    if not os.access(path, os.X_OK):
        path = os.path.join(REPO, "build", "f2fs-fusectl")
    if not os.access(path, os.X_OK):
        pytest.fail("f2fs-fusectl not found at %s (run make, or set F2FS_FUSECTL)" % path)
    return path


@pytest.fixture(scope="session")
def key_file(fixtures_dir):
    return os.path.join(fixtures_dir, "crypt.key")


class Ctl:
    """f2fs-fusectl with a chosen transport; run() returns the CompletedProcess."""

    def __init__(self, path, transport="ioctl", socket_path=None, user=None):
        self.path = path
        self.pre = []
        if socket_path:
            self.pre = ["--socket=" + socket_path]
        elif transport == "socket":
            self.pre = ["--socket"]
        self.user = user

    def run(self, *args, input=None, check=True):
        cmd = [self.path] + self.pre + list(args)
        if self.user is not None:
            cmd = ["setpriv", "--reuid=%d" % self.user, "--regid=%d" % self.user,
                   "--clear-groups"] + cmd
        r = subprocess.run(cmd, input=input, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=60)
        if check and r.returncode != 0:
            raise AssertionError("%s exited %d: %s" % (" ".join(cmd), r.returncode,
                                                         r.stderr.decode(errors="replace")))
        return r

    def out(self, *args, **kw):
        return self.run(*args, **kw).stdout.decode()

    def fails(self, *args, input=None):
        """Run, expect a nonzero exit and an error message; return the message."""
        r = self.run(*args, input=input, check=False)
        assert r.returncode != 0, "%s %s succeeded: %s" % (self.path, args, r.stdout)
        msg = r.stderr.decode()
        assert "error:" in msg, msg
        return msg


def key_bytes(key_file):
    with open(key_file, "rb") as f:
        return f.read()


def names(path):
    return set(os.listdir(path))


def manifest_file(fixtures_dir, name):
    return M.parse_file(os.path.join(fixtures_dir, name))


def enc_subtrees(man):
    ents = {p: e for p, e in man.entries.items()
            if p.split("/")[0] in ENC_DIRS}
    return M.Manifest(ents)


def walk_enc(root):
    ents = {}
    errors = []
    for d in ENC_DIRS:
        w = M.walk(os.path.join(root, d), prefix=d)
        ents.update(w.manifest.entries)
        errors += w.errors
    return M.Manifest(ents), errors


def assert_locked(m, fixtures_dir):
    """The view without the key: the kernel's no-key names, ENOKEY for contents."""
    nokey = enc_subtrees(manifest_file(fixtures_dir, "crypt.nokey-manifest.tsv"))
    got, errors = walk_enc(m.path)
    assert errors == []
    diffs = M.compare(nokey, got, ignore_dir_size=True)
    assert diffs == [], M.report(diffs)
    tried = 0
    for p, e in sorted(nokey.entries.items()):
        if e["type"] == "f" and int(e["size"]) > 0 and tried < 10:
            tried += 1
            with pytest.raises(OSError) as ei:
                with open(os.path.join(m.path, os.fsdecode(M.unescape(p))), "rb") as f:
                    f.read(1)
            assert ei.value.errno == errno.ENOKEY, (p, ei.value)
    assert tried > 0


def assert_unlocked(m, fixtures_dir):
    full = manifest_file(fixtures_dir, "crypt.manifest.tsv")
    w = M.walk(m.path)
    assert w.errors == []
    diffs = M.compare(full, w.manifest)
    assert diffs == [], M.report(diffs)


def a_plain_file(fixtures_dir):
    """(path, size) of a non-empty regular file in enc/, by its plaintext name."""
    full = manifest_file(fixtures_dir, "crypt.manifest.tsv")
    for p, e in sorted(full.entries.items()):
        if p.startswith("enc/") and e["type"] == "f" and int(e["size"]) > 4096:
            return os.fsdecode(M.unescape(p)), int(e["size"])
    raise AssertionError("no file in enc/")


# ---------------------------------------------------------------- the fixture


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_key_lifecycle(mount, fixture_image, fixtures_dir, fusectl, key_file, transport):
    ctl = Ctl(fusectl, transport)
    with mount(fixture_image("crypt"), options=("ro",)) as m:
        assert ctl.out("key_status", KEY_ID, m.path) == "Absent\n"
        assert_locked(m, fixtures_dir)
        # names looked up in vain while locked must not stay "absent" once the
        # key is there (nor no-key names once it is gone)
        rel, size = a_plain_file(fixtures_dir)
        plain = os.path.join(m.path, rel)
        nokey_name = os.path.join(m.path, "enc",
                                  sorted(os.listdir(os.path.join(m.path, "enc")))[0])
        assert not os.path.exists(plain)

        out = ctl.out("add_key", m.path, input=key_bytes(key_file))
        assert out == KEY_ID + "\n"
        assert ctl.out("key_status", KEY_ID, m.path) == \
            "Present (user_count=1, added_by_self)\n"
        # the listings cached while locked are gone: plaintext names now
        assert os.path.exists(plain)
        assert not os.path.exists(nokey_name)
        assert_unlocked(m, fixtures_dir)

        # an open file, read while the key was there, must not keep serving
        # plaintext from the kernel's page cache once it is gone
        rel, size = a_plain_file(fixtures_dir)
        fd = os.open(os.path.join(m.path, rel), os.O_RDONLY)
        try:
            assert len(os.pread(fd, size, 0)) == size
            assert ctl.out("remove_key", KEY_ID, m.path) == ""
            with pytest.raises(OSError) as ei:
                os.pread(fd, size, 0)
            assert ei.value.errno == errno.ENOKEY
        finally:
            os.close(fd)
        assert ctl.out("key_status", KEY_ID, m.path) == "Absent\n"
        assert not os.path.exists(os.path.join(m.path, rel))
        assert os.path.exists(nokey_name)
        assert_locked(m, fixtures_dir)

        # and back again, with the key from a file
        assert ctl.out("add_key", "--key-file=" + key_file, m.path) == KEY_ID + "\n"
        assert_unlocked(m, fixtures_dir)
        ctl.out("remove_key", KEY_ID, m.path)
        assert_locked(m, fixtures_dir)


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_get_policy_of_fixture(mount, fixture_image, fusectl, transport):
    ctl = Ctl(fusectl, transport)
    want = {
        "enc": ("AES-256-XTS", "AES-256-CTS", "PAD_4"),
        "enc64": ("AES-256-XTS", "AES-256-CTS", "PAD_4, IV_INO_LBLK_64"),
        "enc32": ("AES-256-XTS", "AES-256-CTS", "PAD_4, IV_INO_LBLK_32"),
        "enc-pad32": ("AES-256-XTS", "AES-256-CTS", "PAD_32"),
        "enc-adiantum": ("Adiantum", "Adiantum", "PAD_4, DIRECT_KEY"),
    }
    with mount(fixture_image("crypt")) as m:
        for d, (c, f, fl) in want.items():
            p = os.path.join(m.path, d)
            assert ctl.out("get_policy", p) == (
                "Encryption policy for %s:\n"
                "\tPolicy version: 2\n"
                "\tMaster key identifier: %s\n"
                "\tContents encryption mode: %s\n"
                "\tFilenames encryption mode: %s\n"
                "\tFlags: %s\n" % (p, KEY_ID, c, f, fl))
        assert "not encrypted" in ctl.fails("get_policy", os.path.join(m.path, "plain-dir"))


def test_key_file_at_mount(mount, fixture_image, fixtures_dir, fusectl, key_file):
    ctl = Ctl(fusectl)
    with mount(fixture_image("crypt"), options=("ro", "key_file=" + key_file)) as m:
        assert_unlocked(m, fixtures_dir)
        assert ctl.out("key_status", KEY_ID, m.path) == \
            "Present (user_count=1, added_by_self)\n"
        ctl.out("remove_key", KEY_ID, m.path)
        assert_locked(m, fixtures_dir)
    # the key never reaches the daemon's output
    raw = key_bytes(key_file)
    assert raw.hex() not in m.stderr()


def test_key_file_repeated(mount, fixture_image, fixtures_dir, fusectl, key_file, tmp_path):
    other = tmp_path / "other.key"
    other.write_bytes(bytes(range(32)))
    ctl = Ctl(fusectl)
    with mount(fixture_image("crypt"),
               options=("ro", "key_file=" + str(other), "key_file=" + key_file)) as m:
        assert_unlocked(m, fixtures_dir)
        other_id = ctl.out("add_key", m.path, input=other.read_bytes()).strip()
        assert len(other_id) == 32 and other_id != KEY_ID
        assert ctl.out("key_status", other_id, m.path).startswith("Present")


@pytest.mark.parametrize("content,why", [
    (b"x" * 15, "too short"),
    (b"x" * 65, "too long"),
    (None, "No such file"),
    (b"", "too short"),
])
def test_key_file_refused(f2fs_fuse, fixture_image, tmp_path, content, why):
    kf = tmp_path / "bad.key"
    if content is not None:
        kf.write_bytes(content)
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    r = subprocess.run([f2fs_fuse, "-f", "-o", "ro,key_file=" + str(kf), fixture_image("crypt"),
                        str(mnt)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=60)
    assert r.returncode != 0
    out = r.stdout.decode()
    assert "key_file" in out and why in out, out
    assert not fsutil.is_fuse_mount(str(mnt))


def test_tool_errors(mount, fixture_image, fusectl, key_file, tmp_path):
    ctl = Ctl(fusectl)
    with mount(fixture_image("crypt")) as m:
        assert "invalid key identifier" in ctl.fails("key_status", "abc", m.path)
        assert "invalid key identifier" in ctl.fails("remove_key", "zz" * 16, m.path)
        assert "not present" in ctl.fails("remove_key", "00" * 16, m.path)
        assert "too short" in ctl.fails("add_key", m.path, input=b"short")
        assert "too long" in ctl.fails("add_key", m.path, input=b"k" * 65)
        assert "invalid contents mode" in ctl.fails("set_policy", "--contents=AES-256-CTS",
                                                    KEY_ID, m.path)
        assert "invalid padding" in ctl.fails("set_policy", "--padding=3", KEY_ID, m.path)
        assert "invalid command" in ctl.fails("frobnicate", m.path)
        # a read-only mount takes no policy
        msg = ctl.fails("set_policy", KEY_ID, os.path.join(m.path, "plain-dir"))
        assert "setting policy" in msg
    # not an f2fs-fuse mount at all
    msg = ctl.fails("key_status", KEY_ID, str(tmp_path))
    assert "not an f2fs-fuse mount" in msg, msg


def test_socket_option_path(mount, fixture_image, fixtures_dir, fusectl, key_file, tmp_path):
    sock = str(tmp_path / "ctl.sock")
    with mount(fixture_image("crypt"), options=("ro", "keyctl_socket=" + sock)) as m:
        assert stat.S_ISSOCK(os.lstat(sock).st_mode)
        ctl = Ctl(fusectl, socket_path=sock)
        assert ctl.out("add_key", m.path, input=key_bytes(key_file)) == KEY_ID + "\n"
        assert_unlocked(m, fixtures_dir)
        # the default place has no socket for this mount
        assert "not an f2fs-fuse mount" in Ctl(fusectl, "socket").fails(
            "key_status", KEY_ID, m.path)
        ctl.out("remove_key", KEY_ID, m.path)
        assert_locked(m, fixtures_dir)
    assert not os.path.exists(sock)


# ---------------------------------------------------------------- permissions


def _can_switch_user():
    return os.geteuid() == 0 and shutil.which("setpriv") is not None


@pytest.fixture
def public_dir():
    """A directory every user can reach (tmp_path is private to root)."""
    d = tempfile.mkdtemp(prefix="f2fs-keys-", dir="/tmp")
    os.chmod(d, 0o755)
    yield d
    shutil.rmtree(d, ignore_errors=True)


@pytest.mark.skipif(not _can_switch_user(), reason="needs root and setpriv")
@pytest.mark.parametrize("transport", TRANSPORTS)
def test_key_claims_per_user(f2fs_fuse, fixture_image, fixtures_dir, fusectl, key_file,
                             public_dir, transport):
    nobody = 65534
    raw = key_bytes(key_file)
    img = os.path.join(public_dir, "crypt.img")
    shutil.copyfile(fixture_image("crypt"), img)
    mnt = os.path.join(public_dir, "mnt")
    root_ctl = Ctl(fusectl, transport)
    user_ctl = Ctl(fusectl, transport, user=nobody)
    with fsutil.mounted(f2fs_fuse, img, mnt, options=("ro", "allow_other")) as m:
        user_ctl.out("add_key", m.path, input=raw)
        assert user_ctl.out("key_status", KEY_ID, m.path) == \
            "Present (user_count=1, added_by_self)\n"
        assert root_ctl.out("key_status", KEY_ID, m.path) == "Present (user_count=1)\n"
        root_ctl.out("add_key", m.path, input=raw)
        assert root_ctl.out("key_status", KEY_ID, m.path) == \
            "Present (user_count=2, added_by_self)\n"
        # dropping one claim leaves the key to the other user
        r = user_ctl.run("remove_key", KEY_ID, m.path)
        assert b"other users" in r.stderr
        assert root_ctl.out("key_status", KEY_ID, m.path) == \
            "Present (user_count=1, added_by_self)\n"
        assert "Permission denied" in user_ctl.fails("remove_key", KEY_ID, m.path)
        assert "Permission denied" in user_ctl.fails("remove_key", "--all-users", KEY_ID,
                                                     m.path)
        assert_unlocked(m, fixtures_dir)
        user_ctl.out("add_key", m.path, input=raw)
        root_ctl.out("remove_key", "--all-users", KEY_ID, m.path)
        assert root_ctl.out("key_status", KEY_ID, m.path) == "Absent\n"
        assert_locked(m, fixtures_dir)


@pytest.mark.skipif(not _can_switch_user(), reason="needs root and setpriv")
@pytest.mark.parametrize("transport", TRANSPORTS)
def test_set_policy_owner_only(f2fs_fuse, fusectl, key_file, public_dir, transport):
    nobody = 65534
    img = os.path.join(public_dir, "rw.img")
    new_image(img)
    mnt = os.path.join(public_dir, "mnt")
    root_ctl = Ctl(fusectl, transport)
    user_ctl = Ctl(fusectl, transport, user=nobody)
    with fsutil.mounted(f2fs_fuse, img, mnt, options=("rw", "allow_other")) as m:
        root_ctl.out("add_key", m.path, input=key_bytes(key_file))
        os.mkdir(os.path.join(m.path, "roots"))
        os.mkdir(os.path.join(m.path, "theirs"))
        os.chown(os.path.join(m.path, "theirs"), nobody, nobody)
        assert "Permission denied" in user_ctl.fails("set_policy", KEY_ID,
                                                     os.path.join(m.path, "roots"))
        # as fscrypt_verify_key_added: a key someone else added is not enough
        assert "not present" in user_ctl.fails("set_policy", KEY_ID,
                                               os.path.join(m.path, "theirs"))
        user_ctl.out("add_key", m.path, input=key_bytes(key_file))
        user_ctl.out("set_policy", KEY_ID, os.path.join(m.path, "theirs"))
        assert "Master key identifier: " + KEY_ID in user_ctl.out(
            "get_policy", os.path.join(m.path, "theirs"))
    fsutil.fsck_check(img)


# ---------------------------------------------------------------- set_policy


def new_image(path):
    with open(path, "wb") as f:
        f.truncate(256 << 20)
    fsutil.run(["mkfs.f2fs", "-f", "-O", "encrypt,extra_attr,inode_checksum", path],
               check=True)


MARKER = b"plaintext-marker-7f3a9c1e-"
LONG_NAME = "a-rather-long-and-distinctive-file-name-" + "q" * 150

POLICIES = {
    "default": ([], "AES-256-XTS", "AES-256-CTS", "PAD_32"),
    "iv-ino-lblk-64": (["--iv-ino-lblk-64"], "AES-256-XTS", "AES-256-CTS",
                       "PAD_32, IV_INO_LBLK_64"),
    "iv-ino-lblk-32": (["--iv-ino-lblk-32"], "AES-256-XTS", "AES-256-CTS",
                       "PAD_32, IV_INO_LBLK_32"),
    "padding-32": (["--padding=32"], "AES-256-XTS", "AES-256-CTS", "PAD_32"),
    "padding-8": (["--padding=8"], "AES-256-XTS", "AES-256-CTS", "PAD_8"),
    "adiantum": (["--contents=Adiantum", "--filenames=Adiantum", "--direct-key"],
                 "Adiantum", "Adiantum", "PAD_32, DIRECT_KEY"),
    "aes-128": (["--contents=AES-128-CBC", "--filenames=AES-128-CTS"], "AES-128-CBC",
                "AES-128-CTS", "PAD_32"),
    "hctr2": (["--filenames=AES-256-HCTR2"], "AES-256-XTS", "AES-256-HCTR2", "PAD_32"),
}


def fill_tree(top):
    """Files, names and sizes that exercise names and contents; returns the marker'd paths."""
    os.mkdir(os.path.join(top, "sub"))
    with open(os.path.join(top, "small.txt"), "wb") as f:
        f.write(MARKER + b"small\n")
    with open(os.path.join(top, "sub", "big.bin"), "wb") as f:
        for i in range(300):
            f.write(MARKER + b"%06d" % i + b"." * 4000)
    with open(os.path.join(top, LONG_NAME), "wb") as f:
        f.write(MARKER + b"long name\n")
    for i in range(40):
        with open(os.path.join(top, "sub", "n%03d" % i), "wb") as f:
            f.write(MARKER + b"%d\n" % i)
    os.symlink("sub/" + "t" * 100, os.path.join(top, "link"))
    os.mkdir(os.path.join(top, "sub", "deeper"))
    with open(os.path.join(top, "sub", "deeper", "sparse"), "wb") as f:
        f.seek(1 << 20)
        f.write(MARKER + b"after a hole")


@pytest.mark.parametrize("kind", sorted(POLICIES))
def test_set_policy_roundtrip(mount, fusectl, key_file, tmp_path, kind):
    opts, contents, filenames, flags = POLICIES[kind]
    img = str(tmp_path / "rw.img")
    new_image(img)
    ctl = Ctl(fusectl)
    raw = key_bytes(key_file)
    with mount(img, options=("rw",)) as m:
        top = os.path.join(m.path, "secret")
        os.mkdir(top)
        assert "not present" in ctl.fails("set_policy", *opts, KEY_ID, top)
        assert ctl.out("add_key", m.path, input=raw) == KEY_ID + "\n"
        ctl.out("set_policy", *opts, KEY_ID, top)
        # again with the same policy is fine; a different one is not
        ctl.out("set_policy", *opts, KEY_ID, top)
        other = ["--padding=4"] if "--padding=4" not in opts else ["--padding=16"]
        assert "different encryption policy" in ctl.fails("set_policy", *other, KEY_ID, top)
        expect = ("Encryption policy for %s:\n"
                  "\tPolicy version: 2\n"
                  "\tMaster key identifier: %s\n"
                  "\tContents encryption mode: %s\n"
                  "\tFilenames encryption mode: %s\n"
                  "\tFlags: %s\n")
        assert ctl.out("get_policy", top) == expect % (top, KEY_ID, contents, filenames, flags)
        fill_tree(top)
        # children inherit the policy
        small = os.path.join(top, "small.txt")
        assert ctl.out("get_policy", small) == expect % (small, KEY_ID, contents, filenames,
                                                          flags)
        nonempty = os.path.join(m.path, "nonempty")
        os.mkdir(nonempty)
        open(os.path.join(nonempty, "f"), "w").close()
        assert "not empty" in ctl.fails("set_policy", KEY_ID, nonempty)
        before = M.walk(top, prefix="secret").manifest
        # locked: no plaintext names, no contents
        ctl.out("remove_key", KEY_ID, m.path)
        locked = names(top)
        assert not locked & {"small.txt", "sub", LONG_NAME, "link"}
        assert len(locked) == 4
        with pytest.raises(OSError) as ei:
            os.mkdir(os.path.join(top, "x"))
        assert ei.value.errno == errno.ENOKEY
    fsutil.fsck_check(img)
    with open(img, "rb") as f:
        disk = f.read()
    assert MARKER not in disk
    assert LONG_NAME.encode() not in disk and b"small.txt" not in disk
    with mount(img, options=("ro", "key_file=" + key_file)) as m:
        after = M.walk(os.path.join(m.path, "secret"), prefix="secret").manifest
        diffs = M.compare(before, after)
        assert diffs == [], M.report(diffs)
        with open(os.path.join(m.path, "secret", "sub", "big.bin"), "rb") as f:
            assert f.read(len(MARKER)) == MARKER


# ---------------------------------------------------------------- churn


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_key_churn_under_readers(mount, fixture_image, fixtures_dir, fusectl, key_file,
                                 transport):
    """Keys removed and added again while threads list and read: every read
    either succeeds with the right contents or fails with ENOKEY, and the
    daemon survives (its exit status and sanitizer output are checked)."""
    import hashlib
    import threading

    ctl = Ctl(fusectl, transport)
    raw = key_bytes(key_file)
    full = manifest_file(fixtures_dir, "crypt.manifest.tsv")
    want = {os.fsdecode(M.unescape(p)): e["content"] for p, e in full.entries.items()
            if e["type"] == "f" and p.split("/")[0] in ENC_DIRS}
    bad = []
    stop = threading.Event()

    def reader(m):
        while not stop.is_set():
            for rel, digest in list(want.items())[:60]:
                try:
                    with open(os.path.join(m.path, rel), "rb") as f:
                        data = f.read()
                except OSError as e:
                    if e.errno not in (errno.ENOKEY, errno.ENOENT):
                        bad.append((rel, e))
                    continue
                if hashlib.sha256(data).hexdigest() != digest:
                    bad.append((rel, "wrong contents"))
            for d in ENC_DIRS:
                try:
                    os.listdir(os.path.join(m.path, d))
                except OSError as e:
                    bad.append((d, e))

    with mount(fixture_image("crypt"), options=("ro", "key_file=" + key_file)) as m:
        threads = [threading.Thread(target=reader, args=(m,)) for _ in range(4)]
        for t in threads:
            t.start()
        try:
            for _ in range(10):
                ctl.out("remove_key", KEY_ID, m.path)
                ctl.out("add_key", m.path, input=raw)
        finally:
            stop.set()
            for t in threads:
                t.join(60)
        assert bad == [], bad[:5]
        assert_unlocked(m, fixtures_dir)
        ctl.out("remove_key", KEY_ID, m.path)
        assert_locked(m, fixtures_dir)


# ---------------------------------------------------------------- kernel ioctls


def _iowr(nr, size):
    return (3 << 30) | (size << 16) | (ord("f") << 8) | nr


def test_kernel_key_status_and_remove_ioctls(mount, fixture_image, fixtures_dir, key_file):
    """FS_IOC_GET_ENCRYPTION_KEY_STATUS and FS_IOC_REMOVE_ENCRYPTION_KEY have
    fixed sizes, so they pass through FUSE as fscryptctl issues them."""
    import fcntl
    import struct

    kid = bytes.fromhex(KEY_ID)

    def status(fd):
        arg = bytearray(struct.pack("II32s", 2, 0, kid) + bytes(128 - 40))
        fcntl.ioctl(fd, _iowr(26, 128), arg)
        return struct.unpack_from("III", arg, 64)

    with mount(fixture_image("crypt"), options=("ro", "key_file=" + key_file)) as m:
        fd = os.open(m.path, os.O_RDONLY)
        try:
            assert status(fd) == (2, 1, 1)      # present, added by self, one user
            arg = bytearray(struct.pack("II32s", 2, 0, kid) + bytes(64 - 40))
            fcntl.ioctl(fd, _iowr(24, 64), arg)
            assert struct.unpack_from("I", arg, 40) == (0,)
            assert status(fd) == (1, 0, 0)      # absent
            with pytest.raises(OSError) as ei:
                fcntl.ioctl(fd, _iowr(24, 64), arg)
            assert ei.value.errno == errno.ENOKEY
        finally:
            os.close(fd)
        assert_locked(m, fixtures_dir)


def _fnv1a64(data):
    h = 0xcbf29ce484222325
    for c in data:
        h = ((h ^ c) * 0x100000001b3) & 0xffffffffffffffff
    return h


def _mount_root(path):
    path = os.path.realpath(path)
    dev = os.stat(path).st_dev
    while path != "/" and os.stat(os.path.dirname(path)).st_dev == dev:
        path = os.path.dirname(path)
    return path


@pytest.mark.skipif(not _can_switch_user(), reason="needs root and setpriv")
def test_socket_of_another_user_is_not_trusted(fusectl, key_file, public_dir):
    """A listener in /tmp/f2fs-fuse-UID made by someone else gets no key."""
    import time

    nobody = 65534
    sock_dir = "/tmp/f2fs-fuse-%d" % os.geteuid()
    if os.path.exists(sock_dir):
        pytest.skip("%s exists" % sock_dir)
    target = os.path.join(public_dir, "not-a-mount")
    os.mkdir(target)
    root = _mount_root(target)
    if os.path.exists("/run/f2fs-fuse/%016x.sock" % _fnv1a64(os.fsencode(root))):
        pytest.skip("a daemon serves %s" % root)
    sock = os.path.join(sock_dir, "%016x.sock" % _fnv1a64(os.fsencode(root)))
    ready = os.path.join(public_dir, "ready")
    os.chmod(public_dir, 0o777)
    server = subprocess.Popen(
        ["setpriv", "--reuid=%d" % nobody, "--regid=%d" % nobody, "--clear-groups",
         "/usr/bin/python3", "-c",
         "import os, socket, sys\n"
         "os.mkdir(sys.argv[1], 0o777)\n"
         "s = socket.socket(socket.AF_UNIX)\n"
         "s.bind(sys.argv[2]); os.chmod(sys.argv[2], 0o777); s.listen(1)\n"
         "open(sys.argv[3], 'w').close()\n"
         "s.settimeout(5)\n"
         "try:\n"
         "    c, _ = s.accept(); print(len(c.recv(4096)))\n"
         "except OSError:\n"
         "    print('none')\n",
         sock_dir, sock, ready], stdout=subprocess.PIPE)
    try:
        for _ in range(200):
            if os.path.exists(ready):
                break
            time.sleep(0.05)
        assert os.path.exists(ready)
        env = {k: v for k, v in os.environ.items() if k != "XDG_RUNTIME_DIR"}
        r = subprocess.run([fusectl, "add_key", target], input=key_bytes(key_file),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60, env=env)
        assert r.returncode != 0
        assert b"served by uid %d" % nobody in r.stderr, r.stderr
        out = server.communicate(timeout=30)[0]
    finally:
        server.kill()
        shutil.rmtree(sock_dir, ignore_errors=True)
    # connected, then dropped before a byte was sent
    assert out.strip() in (b"0", b"none"), out
