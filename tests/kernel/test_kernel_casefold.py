"""Casefolded directories, both ways: f2fs-fuse and the kernel's f2fs (the
Debian 6.1 kernel under qemu) must give the same answer for every spelling
of every name, whoever created it, in a casefolded directory and in one
that is casefolded and encrypted.

f2fs-fuse creates names from many scripts (mkfs.f2fs -O casefold -C utf8,
chattr +F, f2fs-fusectl set_policy); the kernel looks each one up by other
spellings (case, NFC/NFD, full foldings, ignorables, mark order, and some
that must not match) and reports the inode or errno of each; the kernel
then creates names of its own, unlinks one of f2fs-fuse's by another
spelling and makes a casefolded directory; f2fs-fuse reads all of it and
must answer every probe exactly as the kernel did.  fsck.f2fs between the
steps, whose own folding checks every hash it can compute.
"""
import hashlib
import os
import sys
import unicodedata

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "tests", "integration"))
sys.path.insert(0, os.path.join(HERE, "guest"))
sys.path.insert(0, HERE)

import fsutil  # noqa: E402
import run_guest as G  # noqa: E402
import casefold_guest as CG  # noqa: E402
from test_kernel import MiB, assert_guest_ok, f2fs_fuse, guest  # noqa: E402,F401

KEY = hashlib.sha512(b"f2fs-fuse kernel casefold test key").digest()
FEATURES = "extra_attr,inode_checksum,sb_checksum,flexible_inline_xattr,encrypt,casefold"

NFD = lambda s: unicodedata.normalize("NFD", s)   # noqa: E731
NFC = lambda s: unicodedata.normalize("NFC", s)   # noqa: E731
ENC = lambda s: s.encode("utf-8", "surrogateescape")   # noqa: E731

# created by f2fs-fuse
HOST_NAMES = [
    "Hello.TXT", "Straße", "Café-NFC", NFD("Café-NFD"), "Ελληνικά", "Σίσυφος",
    "Кириллица", "Ǆemal", "ＡＢＣ-fullwidth", "İstanbul", "Å-ring", "\u212b-angstrom",
    "\u212a-kelvin", "ﬁle", "한국어", "中文名字", "emoji-😀", "Ⴀ-georgian", "zero\u200bwidth",
    "Ꭰ-cherokee", "Աբգ-armenian", "Ⰰ-glagolitic", "𐐀-deseret", "𞤀-adlam", "𐒰-osage",
    "Ấ-vietnamese", "\u05e9\u05b8\u05c1-hebrew", "ŉ-napostrophe", "ǰ-jcaron", "ᾈ-iota",
    "\ua7c7-new-in-13", "Name-%s" % ("x" * 200), "a\u0301\u0327-mark-order",
]
# not UTF-8 (bytes as surrogate escapes): a stray continuation byte, which
# the kernel's folding passes through (inside a run of marks once per pass
# of its ordering), and a byte no UTF-8 has, which makes the name opaque
HOST_RAW = ["Mixed\udc80Byte", "A\u0301\udc80\u0327-run", "\u00e9\udc80-tail", "Bad\udcffName"]
# created by the kernel
KERNEL_NAMES = [
    "Kernel-Ünïcödé", "ΚΕΡΝΕΛ-Ωμέγα", "Привет-МИР", "Ǳ-digraph", "ΐ-dialytika", "ﬀ-ligature",
    "Ⓐ-circled", "𐲀-hungarian", "𑢠-warang", "𖹀-medefaidrin", "Ⲁ-coptic",
    "\u05e9\u05c1\u05b8-marks", NFD("Ỗ-stack"), "ẞ-capital-sharp", "soft\u00adhyphen",
]


def spellings(name):
    """Other spellings to probe: most must reach the name, a few must not."""
    out = {name.upper(), name.lower(), name.swapcase(), NFD(name), NFC(name),
           NFD(name.upper()), NFC(name.lower()), name.casefold(),
           name.replace("\u200b", ""), name.replace("\u00ad", "")}
    out.discard(name)
    out = sorted(s for s in out if len(ENC(s)) <= 255)
    # the last two must miss
    return [name] + out + [name[:-1], name + "x"]


def probe_lines(names):
    return "".join("\t".join(ENC(s).hex() for s in spellings(n)) + "\n" for n in names)


def hexlines(names):
    return "".join(ENC(n).hex() + "\n" for n in names)


def guest_script():
    return """set -e
. lib/ktest.sh
kmount
python3 -m ktest_guest add-key $MNT cf.key >$KTEST_OUT/keyid
for d in cf media; do
	python3 casefold_guest.py probe $MNT/$d host.probes >$KTEST_OUT/$d.host.probed
	python3 casefold_guest.py create $MNT/$d kernel.names
	python3 casefold_guest.py probe $MNT/$d kernel.probes >$KTEST_OUT/$d.kernel.probed
	python3 casefold_guest.py unlink $MNT/$d {gone}
	python3 casefold_guest.py list $MNT/$d >$KTEST_OUT/$d.list
done
python3 casefold_guest.py casefold $MNT/kdir
python3 casefold_guest.py create $MNT/kdir kernel.names
kumount
""".format(gone="HELLO.txt".encode().hex())


def fusectl(f2fs_fuse):
    from test_keys import Ctl
    return Ctl(os.path.join(os.path.dirname(f2fs_fuse), "f2fs-fusectl"))


def mkfs_casefold(image, size, features=FEATURES, encoding="utf8"):
    image = str(image)
    with open(image, "wb") as f:
        f.truncate(size)
    fsutil.run(["mkfs.f2fs", "-f", "-O", features, "-C", encoding, image], check=True)
    return image


def casefold_dirs(ctl, top):
    """cf: casefolded; media: encrypted (v2, KEY), then casefolded.
    Returns the key identifier."""
    key_id = ctl.out("add_key", top, input=KEY).strip()
    CG.casefold(os.path.join(top, "cf"))
    media = os.path.join(top, "media")
    os.mkdir(media)
    ctl.out("set_policy", key_id, media)
    CG.set_casefold(media)
    return key_id


def same_inode_answers(text):
    """Rows of inode answers; the first is the name itself."""
    return [row.split("\t") for row in text.splitlines()]


def test_casefold_both_ways(guest, f2fs_fuse, tmp_path):
    ctl = fusectl(f2fs_fuse)
    image = mkfs_casefold(tmp_path / "cf.img", 256 * MiB)
    files = {"cf.key": KEY, "host.probes": probe_lines(HOST_NAMES + HOST_RAW),
             "kernel.probes": probe_lines(KERNEL_NAMES), "kernel.names": hexlines(KERNEL_NAMES),
             "casefold_guest.py": open(os.path.join(HERE, "guest", "casefold_guest.py")).read()}
    for n, t in files.items():
        if n.endswith((".probes", ".names")):
            (tmp_path / n).write_text(t)
    host_names = tmp_path / "host.names"
    host_names.write_text(hexlines(HOST_NAMES + HOST_RAW))

    with fsutil.mounted(f2fs_fuse, image, tmp_path / "mnt1", ("rw",)) as m:
        key_id = casefold_dirs(ctl, m.path)
        host_probed = {}
        for d in ("cf", "media"):
            CG.create(os.fsencode(os.path.join(m.path, d)), str(host_names))
            host_probed[d] = CG.probe(os.fsencode(os.path.join(m.path, d)),
                                      str(tmp_path / "host.probes"))
    fsutil.fsck_check(image)

    r = G.run(guest_script(), [image], files=files)
    assert_guest_ok(r, "the kernel probes and adds casefolded names")
    assert r.text("keyid").strip() == key_id
    for d in ("cf", "media"):
        # the kernel answers every spelling of f2fs-fuse's names as f2fs-fuse did
        assert r.text(d + ".host.probed") == host_probed[d], d
        # and the answers are the expected ones: every spelling but the last
        # two finds the name, except that a letter newer than Unicode 12.1.0
        # has no folding (U+A7C7's lower case U+A7C8 is another name)
        rows = same_inode_answers(host_probed[d])[:len(HOST_NAMES)]
        missed = [(HOST_NAMES[i], row) for i, row in enumerate(rows)
                  if set(row[1:-2]) - {row[0]} or set(row[-2:]) != {"-2"}]
        assert [n for n, _ in missed] == ["\ua7c7-new-in-13"], "%s: %s" % (d, missed)
    fsutil.fsck_check(image)

    with fsutil.mounted(f2fs_fuse, image, tmp_path / "mnt2", ("rw",)) as m:
        ctl.out("add_key", m.path, input=KEY)
        for d in ("cf", "media"):
            top = os.fsencode(os.path.join(m.path, d))
            assert CG.probe(top, str(tmp_path / "kernel.probes")) == \
                r.text(d + ".kernel.probed"), d
            assert CG.listdir(top) == r.text(d + ".list"), d
            assert not os.path.exists(os.path.join(m.path, d, "hello.txt"))
            # names the kernel wrote read back with the kernel's content
            for n in KERNEL_NAMES:
                with open(os.path.join(m.path, d, n.upper()), "rb") as f:
                    assert f.read() == n.encode(), n
        kdir = os.path.join(m.path, "kdir")
        assert CG.listdir(os.fsencode(kdir)) == hexlines(sorted(KERNEL_NAMES, key=str.encode))
        assert os.path.exists(os.path.join(kdir, "привет-мир"))
    fsutil.fsck_check(image)


# ---------------------------------------------------------------- roll-forward

SYNCED_FUSE = ["Synced-By-FUSE.Txt", "Straße-fsync", "Ελληνικά-fsync", "L" * 200]
SYNCED_KERNEL = ["Synced-By-Kernel.TXT", "Ωμέγα-fsync", "K" * 200]

GUEST_RECOVERY = """set -e
. lib/ktest.sh
kmount
python3 -m ktest_guest add-key $MNT cf.key >$KTEST_OUT/keyid
for d in media cf; do
	python3 casefold_guest.py probe $MNT/$d fuse.probes >$KTEST_OUT/$d.fuse.probed
	python3 casefold_guest.py fsync $MNT/$d kernel.names
done
dmesg >$KTEST_OUT/dmesg-before-crash
kcrash
"""


def test_casefold_recovery_both_ways(guest, f2fs_fuse, tmp_path):
    """Names fsync()ed in casefolded (and encrypted + casefolded) directories
    after the last checkpoint: the kernel's roll-forward relinks those
    f2fs-fuse wrote, f2fs-fuse's those the kernel wrote.  Recovery runs
    without the key, so the hash of an encrypted + casefolded name comes
    from after the name in i_name, where the other driver put it (a 200-byte
    name leaves room for it)."""
    ctl = fusectl(f2fs_fuse)
    image = mkfs_casefold(tmp_path / "cfr.img", 128 * MiB)
    (tmp_path / "fuse.names").write_text(hexlines(SYNCED_FUSE))
    (tmp_path / "kernel.probes").write_text(probe_lines(SYNCED_KERNEL))
    with fsutil.mounted(f2fs_fuse, image, tmp_path / "mnt1", ("rw",)) as m:
        casefold_dirs(ctl, m.path)
    # fsync()ed names, then SIGKILL: no checkpoint after them
    m = fsutil.Mount(f2fs_fuse, image, tmp_path / "mnt2", ("rw", "checkpoint_interval=3600"))
    m.start()
    try:
        ctl.out("add_key", m.path, input=KEY)
        for d in ("cf", "media"):
            CG.create(os.fsencode(os.path.join(m.path, d)), str(tmp_path / "fuse.names"),
                      sync=True)
    finally:
        m._kill()
    # read-only, nothing is recovered: the names are in fsync()ed nodes only
    with fsutil.mounted(f2fs_fuse, image, tmp_path / "mnt-ro", ("ro", "norecovery")) as m:
        for d in ("cf", "media"):
            assert os.listdir(os.path.join(m.path, d)) == [], d

    files = {"cf.key": KEY, "fuse.probes": probe_lines(SYNCED_FUSE),
             "kernel.names": hexlines(SYNCED_KERNEL),
             "casefold_guest.py": open(os.path.join(HERE, "guest", "casefold_guest.py")).read()}
    r = G.run(GUEST_RECOVERY, [image], files=files)
    assert r.ok, r.summary()
    bad = G.dmesg_f2fs_errors(r.text("dmesg-before-crash"))
    assert not bad, bad
    for d in ("cf", "media"):
        rows = same_inode_answers(r.text(d + ".fuse.probed"))
        assert len(rows) == len(SYNCED_FUSE)
        for n, row in zip(SYNCED_FUSE, rows):
            assert int(row[0]) > 0 and set(row[1:-2]) <= {row[0]}, (d, n, row)

    with fsutil.mounted(f2fs_fuse, image, tmp_path / "mnt3", ("rw",)) as m:
        ctl.out("add_key", m.path, input=KEY)
        for d in ("cf", "media"):
            top = os.fsencode(os.path.join(m.path, d))
            rows = same_inode_answers(CG.probe(top, str(tmp_path / "kernel.probes")))
            for n, row in zip(SYNCED_KERNEL, rows):
                assert int(row[0]) > 0 and set(row[1:-2]) <= {row[0]}, (d, n, row)
            assert sorted(os.listdir(os.path.join(m.path, d))) == \
                sorted(SYNCED_FUSE + SYNCED_KERNEL)
            for n in SYNCED_FUSE + SYNCED_KERNEL:
                with open(os.path.join(m.path, d, n.swapcase()), "rb") as f:
                    assert f.read() == n.encode(), (d, n)
    # relinked by roll-forward, not found in a checkpoint: all of them, the
    # encrypted ones with the hash the kernel kept after their names
    relinked = m.stderr().count("recovery: inode")
    assert relinked == 2 * len(SYNCED_KERNEL), m.stderr()
    fsutil.fsck_check(image)


# ---------------------------------------------------------------- strict

STRICT_NAMES = [b"Bad\xffName", b"A\x80-stray", b"\xc0\x80-overlong", b"\xed\xa0\x80-surrogate",
                b"\xe4\xb8-truncated", "Good-Straße".encode(), b"\x80-first"]

GUEST_STRICT = """set -e
. lib/ktest.sh
kmount
python3 casefold_guest.py casefold $MNT/kcf
python3 casefold_guest.py try $MNT/kcf strict.names >$KTEST_OUT/kcf.tried
python3 casefold_guest.py try $MNT/cf strict.probe >$KTEST_OUT/cf.tried
python3 casefold_guest.py list $MNT/cf >$KTEST_OUT/cf.list
kumount
"""


def test_casefold_strict_both_ways(guest, f2fs_fuse, tmp_path):
    """-C utf8:strict: the names each driver refuses (EINVAL) and accepts
    in a casefolded directory are the same; a stray continuation byte after
    the first is no error to the kernel's folding, so not to ours."""
    image = mkfs_casefold(tmp_path / "strict.img", 128 * MiB, "extra_attr,casefold",
                          "utf8:strict")
    names = "".join(n.hex() + "\n" for n in STRICT_NAMES)
    # the kernel tries the accepted ones again by other spellings: all EEXIST
    again = "".join(n.upper().hex() + "\n" for n in STRICT_NAMES)
    (tmp_path / "strict.names").write_text(names)
    with fsutil.mounted(f2fs_fuse, image, tmp_path / "mnt", ("rw",)) as m:
        CG.casefold(os.path.join(m.path, "cf"))
        mine = CG.create(os.fsencode(os.path.join(m.path, "cf")), str(tmp_path / "strict.names"),
                         tolerant=True)
        listed = CG.listdir(os.fsencode(os.path.join(m.path, "cf")))
    assert mine.split() == ["-22", "0", "-22", "-22", "-22", "0", "-22"], mine
    fsutil.fsck_check(image)
    files = {"strict.names": names, "strict.probe": again,
             "casefold_guest.py": open(os.path.join(HERE, "guest", "casefold_guest.py")).read()}
    r = G.run(GUEST_STRICT, [image], files=files)
    assert_guest_ok(r, "the kernel in strict mode")
    assert r.text("kcf.tried") == mine
    assert r.text("cf.tried").split() == [
        "-22" if a == "-22" else "-17" for a in mine.split()], r.text("cf.tried")
    assert r.text("cf.list") == listed
    fsutil.fsck_check(image)
