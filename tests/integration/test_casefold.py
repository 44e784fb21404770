"""Casefolded directories (mkfs.f2fs -O casefold -C utf8, chattr +F):
lookups by other spellings reach the same inode, names are kept as given,
creates of another spelling find the existing name, and the kernel's dentry
cache, which compares bytes, never hides or resurrects a name.  Every test
ends with fsck.f2fs, whose own casefolding checks each stored hash, and a
read-only remount that must look the same."""

import array
import errno
import fcntl
import os
import unicodedata

import pytest

import fsutil
from test_write import blob, expect, rwimage, sha, write_file  # noqa: F401

FS_IOC_GETFLAGS = 0x80086601
FS_IOC_SETFLAGS = 0x40086602
FS_CASEFOLD_FL = 0x40000000
KEY_ID = "eeec05e6ebadb5814c861095d859e167"

# (name as created, other spellings that must find it)
NAMES = [
    ("Hello.TXT", ["hello.txt", "HELLO.TXT", "hElLo.TxT"]),
    ("Straße", ["STRASSE", "strasse", "straße", "STRAẞE"]),
    ("Café-nfc", ["CAFE\u0301-NFC", "café-nfc"]),              # NFC vs NFD
    ("Cafe\u0301-nfd", ["CAFÉ-NFD", "café-nfd"]),
    ("Ελληνικά", ["ΕΛΛΗΝΙΚΆ", "ελληνικά"]),
    ("Σίσυφος", ["ΣΊΣΥΦΟΣ", "σίσυφος", "σίσυφοσ"]),           # final sigma
    ("Кириллица", ["КИРИЛЛИЦА", "кириллица"]),
    ("Ǆemal", ["ǆemal", "ǅemal", "DŽEMAL".replace("DŽ", "Ǆ")]),
    ("ＡＢＣ-fullwidth", ["ａｂｃ-FULLWIDTH"]),
    ("İstanbul", ["i\u0307stanbul", "İSTANBUL"]),
    ("Å-angstrom", ["\u212b-ANGSTROM", "a\u030a-angstrom", "å-Angstrom"]),
    ("\u212a-kelvin", ["k-KELVIN", "K-kelvin"]),
    ("ﬁle-ligature", ["FILE-LIGATURE", "file-ligature"]),
    ("한국어", [unicodedata.normalize("NFD", "한국어")]),
    ("中文名字", []),
    ("emoji-😀", ["EMOJI-😀"]),
    ("Ⴀ-georgian", ["ⴀ-GEORGIAN"]),
    ("zero\u200bwidth", ["ZEROWIDTH", "zero\u200bWIDTH"]),     # ignorable dropped
    ("Ꭰ-cherokee", ["ꭰ-CHEROKEE"]),
]
# names that must NOT be found from these
DIFFERENT = [("Hello.TXT", "Hello.TX"), ("Straße", "Strase"), ("Café-nfc", "Cafe-nfc")]


def new_image(path, encoding="utf8", extra=""):
    with open(path, "wb") as f:
        f.truncate(256 << 20)
    feats = "extra_attr,inode_checksum,sb_checksum,casefold" + extra
    fsutil.run(["mkfs.f2fs", "-f", "-O", feats, "-C", encoding, path], check=True)
    return path


def getflags(path):
    fd = os.open(path, os.O_RDONLY)
    try:
        buf = array.array("l", [0])
        fcntl.ioctl(fd, FS_IOC_GETFLAGS, buf, True)
        return buf[0] & 0xffffffff
    finally:
        os.close(fd)


def setflags(path, flags):
    fd = os.open(path, os.O_RDONLY)
    try:
        fcntl.ioctl(fd, FS_IOC_SETFLAGS, array.array("l", [flags]), True)
    finally:
        os.close(fd)


def casefold_dir(path):
    os.mkdir(path)
    setflags(path, getflags(path) | FS_CASEFOLD_FL)
    assert getflags(path) & FS_CASEFOLD_FL


def err(fn, *a):
    try:
        fn(*a)
    except OSError as e:
        return e.errno
    return 0


def check_spellings(d, names=NAMES):
    for name, others in names:
        ino = os.stat(os.path.join(d, name)).st_ino
        for o in others:
            assert os.stat(os.path.join(d, o)).st_ino == ino, (name, o)
    for name, other in DIFFERENT:
        if os.path.exists(os.path.join(d, name)):
            assert err(os.stat, os.path.join(d, other)) == errno.ENOENT, other


@pytest.fixture
def cfimage(rwimage, tmp_path):
    def make(encoding="utf8", extra=""):
        src = new_image(str(tmp_path / "src.img"), encoding, extra)
        return rwimage(source=src)
    return make


def test_casefold_lookup_create_readdir(cfimage):
    img = cfimage()
    p = img.mount()
    d = os.path.join(p, "cf")
    casefold_dir(d)
    plain = os.path.join(p, "plain")
    os.mkdir(plain)
    assert not getflags(plain) & FS_CASEFOLD_FL
    exp = {"cf": {"type": "d"}, "plain": {"type": "d"}}
    for i, (name, _) in enumerate(NAMES):
        write_file(os.path.join(d, name), blob(100 + i, i))
        exp["cf/" + name] = {"content": sha(blob(100 + i, i))}
    # stored and listed as given
    assert sorted(os.listdir(d)) == sorted(n for n, _ in NAMES)
    check_spellings(d)
    # another spelling of an existing name is that name
    for name, others in NAMES:
        for o in others:
            assert err(os.open, os.path.join(d, o), os.O_CREAT | os.O_EXCL | os.O_WRONLY) \
                == errno.EEXIST, o
            assert err(os.mkdir, os.path.join(d, o)) == errno.EEXIST, o
    with open(os.path.join(d, "HELLO.txt"), "rb") as f:
        assert f.read() == blob(100, 0)
    # subdirectories inherit the flag
    os.mkdir(os.path.join(d, "Sub"))
    assert getflags(os.path.join(d, "SUB")) & FS_CASEFOLD_FL
    write_file(os.path.join(d, "sub", "Deep.File"), b"deep")
    assert os.stat(os.path.join(d, "SUB", "deep.FILE")).st_size == 4
    exp["cf/Sub"] = {"type": "d"}
    exp["cf/Sub/Deep.File"] = {"content": sha(b"deep")}
    # not casefolded: two names
    write_file(os.path.join(plain, "Hello.TXT"), b"1")
    write_file(os.path.join(plain, "hello.txt"), b"2")
    exp["plain/Hello.TXT"] = {"content": sha(b"1")}
    exp["plain/hello.txt"] = {"content": sha(b"2")}
    img.finish(expect(exp))
    p = img.mount(ro=True)
    check_spellings(os.path.join(p, "cf"))
    img.unmount()


def test_casefold_many_entries(cfimage):
    """Hundreds of names: multi-level hashed lookups by other spellings."""
    img = cfimage()
    p = img.mount()
    d = os.path.join(p, "many")
    casefold_dir(d)
    names = ["Entry-%04d-Straße-Ωmega" % i for i in range(600)]
    for n in names:
        write_file(os.path.join(d, n), n.encode())
    for n in names[::7]:
        assert os.stat(os.path.join(d, n.upper())).st_size == len(n.encode())
        assert os.stat(os.path.join(d, n.lower())).st_size == len(n.encode())
    for n in names[::3]:
        os.unlink(os.path.join(d, n.upper()))
    left = [n for i, n in enumerate(names) if i % 3]
    assert sorted(os.listdir(d)) == sorted(left)
    img.finish()
    p = img.mount(ro=True)
    for n in left[::5]:
        assert os.path.exists(os.path.join(p, "many", n.swapcase()))
    img.unmount()


def test_casefold_dentry_cache(cfimage):
    """The kernel caches names by their bytes; no spelling may keep a name
    alive after it is gone, nor hide one that was created."""
    img = cfimage()
    p = img.mount()
    d = os.path.join(p, "cf")
    casefold_dir(d)
    j = lambda n: os.path.join(d, n)   # noqa: E731
    # a miss, then a create by another spelling: the first spelling finds it
    assert err(os.stat, j("readme")) == errno.ENOENT
    write_file(j("README"), b"x")
    assert os.stat(j("readme")).st_ino == os.stat(j("README")).st_ino
    # unlink through one spelling: the cached other spelling is gone too
    os.unlink(j("ReadMe"))
    assert err(os.stat, j("readme")) == errno.ENOENT
    assert err(os.stat, j("README")) == errno.ENOENT
    # rename away and back under another spelling
    write_file(j("Photo.JPG"), b"jpg")
    os.stat(j("photo.jpg"))
    os.rename(j("PHOTO.jpg"), j("moved"))
    assert err(os.stat, j("photo.jpg")) == errno.ENOENT
    assert err(os.stat, j("Photo.JPG")) == errno.ENOENT
    os.rename(j("MOVED"), j("photo.JPG"))
    assert os.listdir(d) == ["photo.JPG"]
    # a directory by two spellings is one directory; rmdir by a third
    os.mkdir(j("Dir"))
    assert os.stat(j("dir")).st_ino == os.stat(j("DIR")).st_ino
    write_file(j("dir/f"), b"f")
    assert os.path.exists(j("DIR/F"))
    os.unlink(j("dIr/F"))
    os.rmdir(j("diR"))
    assert err(os.stat, j("Dir")) == errno.ENOENT
    assert err(os.stat, j("dir")) == errno.ENOENT
    # hard links by spelling
    os.link(j("PHOTO.JPG"), j("Link"))
    assert os.stat(j("link")).st_nlink == 2
    assert err(os.link, j("photo.jpg"), j("LINK")) == errno.EEXIST
    # a casefolded directory: renaming over another spelling of itself does nothing
    os.rename(j("link"), j("LINK"))
    assert sorted(os.listdir(d)) == ["Link", "photo.JPG"]
    img.finish(expect({
        "cf": {"type": "d"},
        "cf/photo.JPG": {"content": sha(b"jpg"), "nlink": "2"},
        "cf/Link": {"content": sha(b"jpg"), "nlink": "2"},
    }))


def test_casefold_flag_rules(cfimage):
    """chattr +F only on empty directories, only directories; -F likewise;
    a cached miss from before +F does not hide a later name."""
    img = cfimage()
    p = img.mount()
    d = os.path.join(p, "d")
    os.mkdir(d)
    write_file(os.path.join(d, "file"), b"")
    assert err(setflags, d, FS_CASEFOLD_FL) == errno.ENOTEMPTY
    assert err(setflags, os.path.join(d, "file"), FS_CASEFOLD_FL) == errno.EOPNOTSUPP
    assert err(os.stat, os.path.join(d, "name")) == errno.ENOENT   # a miss, cached?
    os.unlink(os.path.join(d, "file"))
    setflags(d, FS_CASEFOLD_FL)
    assert getflags(d) & FS_CASEFOLD_FL
    write_file(os.path.join(d, "NAME"), b"n")
    assert os.stat(os.path.join(d, "name")).st_size == 1
    os.unlink(os.path.join(d, "NAME"))
    setflags(d, 0)
    assert not getflags(d) & FS_CASEFOLD_FL
    write_file(os.path.join(d, "NAME"), b"n")
    assert err(os.stat, os.path.join(d, "name")) == errno.ENOENT
    img.finish(expect({"d": {"type": "d"}, "d/NAME": {"content": sha(b"n")}}))


def test_casefold_not_utf8(cfimage):
    """Non-strict: a name that is not UTF-8 is kept and matched as bytes.
    Strict (-C utf8:strict): it is refused with EINVAL."""
    img = cfimage()
    p = img.mount()
    d = os.path.join(os.fsencode(p), b"cf")
    casefold_dir(d)
    write_file(d + b"/Bad\xff", b"b")
    assert os.path.exists(d + b"/Bad\xff")
    assert not os.path.exists(d + b"/bad\xff")
    write_file(d + b"/bad\xff", b"c")          # a different name
    assert sorted(os.listdir(d)) == [b"Bad\xff", b"bad\xff"]
    img.finish()

    img = cfimage("utf8:strict")
    p = img.mount()
    d = os.path.join(os.fsencode(p), b"cf")
    casefold_dir(d)
    assert err(write_file, d + b"/Bad\xff", b"b") == errno.EINVAL
    assert err(os.mkdir, d + b"/x\xc0\x80") == errno.EINVAL
    write_file(d + b"/Good", b"g")
    assert os.path.exists(d + b"/GOOD")
    # outside casefolded directories any bytes are fine
    write_file(os.fsencode(p) + b"/Bad\xff", b"b")
    img.finish()


def test_casefold_fsync_recovery(cfimage):
    """A file created and fsync()ed in a casefolded directory comes back by
    roll-forward after a crash, under its spelling and findable by others."""
    img = cfimage()
    p = img.mount(options=("checkpoint_interval=3600",))
    casefold_dir(os.path.join(p, "cf"))
    img.unmount()
    p = img.mount(options=("checkpoint_interval=3600",))
    for name in ("Recovered.TXT", "Straße-fsync"):
        fd = os.open(os.path.join(p, "cf", name), os.O_RDWR | os.O_CREAT, 0o644)
        os.write(fd, name.encode())
        os.fsync(fd)
        os.close(fd)
    img.crash()
    p = img.mount()
    assert sorted(os.listdir(os.path.join(p, "cf"))) == ["Recovered.TXT", "Straße-fsync"]
    assert os.stat(os.path.join(p, "cf", "recovered.txt")).st_size == 13
    assert os.path.exists(os.path.join(p, "cf", "STRASSE-FSYNC"))
    img.finish()


def test_unknown_encoding_refused(f2fs_fuse, tmp_path):
    """An encoding the kernel does not know (s_encoding != 1) is refused."""
    img = str(tmp_path / "cf.img")
    with open(img, "wb") as f:
        f.truncate(128 << 20)
    fsutil.run(["mkfs.f2fs", "-f", "-O", "extra_attr,casefold", "-C", "utf8", img], check=True)
    with open(img, "r+b") as f:
        for sb in (1024, 4096 + 1024):
            f.seek(sb + 2758)
            f.write(b"\x07\x00")
    mnt = tmp_path / "mnt"
    mnt.mkdir()
    r = fsutil.run([f2fs_fuse, "-f", "-o", "ro", img, str(mnt)])
    assert r.returncode != 0
    assert "encoding 7" in (r.stdout or "") + (r.stderr or "")
    assert not fsutil.is_fuse_mount(mnt)


# ---------------------------------------------------------------- + encryption

ENC_NAMES = [n for n in NAMES if n[0] not in ("中文名字",)] + [("L" * 200, ["l" * 200])]


def test_casefold_encrypted(cfimage, fixtures_dir, f2fs_fuse):
    """Encrypted and casefolded: SipHash of the folded plaintext as the
    hash; other spellings found with the key, no-key names without it
    (listed and looked up), roll-forward with the hash kept in i_name."""
    from test_keys import Ctl, key_bytes
    ctl = Ctl(os.path.join(os.path.dirname(f2fs_fuse), "f2fs-fusectl"))
    raw = key_bytes(os.path.join(fixtures_dir, "crypt.key"))
    img = cfimage(extra=",encrypt")
    p = img.mount(options=("checkpoint_interval=3600",))
    assert ctl.out("add_key", p, input=raw) == KEY_ID + "\n"
    d = os.path.join(p, "media")
    os.mkdir(d)
    ctl.out("set_policy", KEY_ID, d)
    setflags(d, getflags(d) | FS_CASEFOLD_FL)
    assert getflags(d) & (FS_CASEFOLD_FL | 0x800) == FS_CASEFOLD_FL | 0x800
    for i, (name, _) in enumerate(ENC_NAMES):
        write_file(os.path.join(d, name), blob(50 + i, i))
    os.mkdir(os.path.join(d, "DCIM"))
    write_file(os.path.join(d, "dcim", "IMG_0001.JPG"), b"jpeg")
    many = ["Picture-%03d.PNG" % i for i in range(150)]
    for n in many:
        write_file(os.path.join(d, "DCIM", n), n.encode())
    check_spellings(d, ENC_NAMES)
    for n in many[::10]:
        assert os.stat(os.path.join(d, "dcim", n.lower())).st_size == len(n)
    img.unmount()
    # a file fsync()ed after the checkpoint: roll-forward without the key
    p = img.mount(options=("checkpoint_interval=3600",))
    ctl.out("add_key", p, input=raw)
    fd = os.open(os.path.join(p, "media", "Synced.Name"), os.O_RDWR | os.O_CREAT, 0o644)
    os.write(fd, b"synced")
    os.fsync(fd)
    os.close(fd)
    img.crash()
    p = img.mount()
    listed = os.listdir(os.path.join(p, "media"))        # no key: no-key names
    assert len(listed) == len(ENC_NAMES) + 2
    assert not set(listed) & {n for n, _ in ENC_NAMES}
    for n in listed:
        os.lstat(os.path.join(p, "media", n))             # each no-key name looks up
    ctl.out("add_key", p, input=raw)
    d = os.path.join(p, "media")
    assert sorted(os.listdir(d)) == sorted([n for n, _ in ENC_NAMES] + ["DCIM", "Synced.Name"])
    check_spellings(d, ENC_NAMES)
    with open(os.path.join(d, "SYNCED.name"), "rb") as f:
        assert f.read() == b"synced"
    # unlink and rename by other spellings
    os.unlink(os.path.join(d, "HELLO.txt"))
    os.rename(os.path.join(d, "straße"), os.path.join(d, "Renamed"))
    assert os.path.exists(os.path.join(d, "RENAMED"))
    assert err(os.stat, os.path.join(d, "STRASSE")) == errno.ENOENT
    img.unmount()
    fsutil.fsck_check(img.image)
    p = img.mount(ro=True)
    ctl.out("add_key", p, input=raw)
    assert os.path.exists(os.path.join(p, "media", "renamed"))
    assert os.path.exists(os.path.join(p, "media", "dcim", "picture-149.png"))
    img.unmount()
