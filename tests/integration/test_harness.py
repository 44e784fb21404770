"""Tests of the test helpers themselves (no f2fs-fuse needed): the manifest
parser against the kernel's fixture manifests, the walker and comparator on
a local tree, the fsck checker on a good and a damaged image."""

import hashlib
import os
import struct

import pytest

import fsutil
import manifest as M
import treegen


# ---------------------------------------------------------------- escaping

@pytest.mark.parametrize("raw,text", [
    (b"plain", "plain"),
    (b"back\\slash", "back\\\\slash"),
    (b"tab\there", "tab\\there"),
    (b"new\nline", "new\\nline"),
    (b"ctl\x01\x7f", "ctl\\x01\\x7f"),
    ("caf\u00e9".encode(), "caf\u00e9"),
    ("\U0001f600".encode(), "\U0001f600"),
    (b"bad\xff\xfe", "bad\\xff\\xfe"),
    (b"trunc\xe6\x97", "trunc\\xe6\\x97"),
])
def test_escape_roundtrip(raw, text):
    assert M.escape(raw) == text
    assert M.unescape(text) == raw


def test_unescape_rejects_malformed():
    for bad in ("x\\", "x\\q", "x\\x4", "x\\xzz"):
        with pytest.raises(M.ManifestError):
            M.unescape(bad)


def test_xattr_field_escapes_separators():
    field = M.format_xattrs([(b"user.a;b", b"1"), (b"user.c=d", b""), (b"security.selinux", b"x")])
    assert field == "user.a\\x3bb=%s;user.c\\x3dd=%s" % (
        hashlib.sha256(b"1").hexdigest(), hashlib.sha256(b"").hexdigest())
    assert M.parse_xattrs(field) == {"user.a\\x3bb": hashlib.sha256(b"1").hexdigest(),
                                     "user.c\\x3dd": hashlib.sha256(b"").hexdigest()}
    assert M.parse_xattrs("-") == {}
    assert M.parse_xattrs("*") is None


# ---------------------------------------------------------------- fixture manifests

@pytest.mark.parametrize("name", ["plain.manifest.tsv", "crypt.manifest.tsv",
                                  "crypt.nokey-manifest.tsv", "recovery.manifest.tsv",
                                  "recovery.guaranteed.tsv"])
def test_fixture_manifests_parse(fixtures_dir, name):
    path = os.path.join(fixtures_dir, name)
    m = M.parse_file(path)
    with open(path, encoding="utf-8", errors="surrogateescape") as f:
        lines = [ln.rstrip("\n") for ln in f if ln.strip() and not ln.startswith("#")]
    assert len(m) == len(lines) > 0
    assert m.partial == (name == "recovery.guaranteed.tsv")
    info = os.path.join(fixtures_dir, name.split(".")[0] + ".info")
    if name.endswith(".manifest.tsv") and os.path.exists(info):
        with open(info) as f:
            counts = [ln.split("=", 1)[1] for ln in f if ln.startswith("entries=")]
        if counts:
            assert len(m) == int(counts[0])
    # every line survives parse + re-format unchanged (canonical spelling)
    if name != "recovery.guaranteed.tsv":
        assert list(m.lines()) == lines


def test_fixture_manifest_details(fixtures_dir):
    m = M.parse_file(os.path.join(fixtures_dir, "plain.manifest.tsv"))
    assert m["."]["type"] == "d"
    assert "names/tab\\there" in m and M.unescape("names/tab\\there") == b"names/tab\there"
    assert m["special/bigdev"]["content"] == "4095:1048575"
    assert m["links/len-4095"]["size"] == "4095" == str(len(M.unescape(m["links/len-4095"]["content"])))
    g = M.parse_file(os.path.join(fixtures_dir, "recovery.guaranteed.tsv"))
    assert g["orphan-victim"]["type"] == "!"


# ---------------------------------------------------------------- walker + comparator

@pytest.fixture(scope="module")
def small_tree(tmp_path_factory):
    root = tmp_path_factory.mktemp("harness") / "tree"
    treegen.generate(root, seed=7, profile="small")
    return str(root)


def test_generator_is_deterministic(tmp_path, small_tree):
    other = tmp_path / "again"
    treegen.generate(other, seed=7, profile="small")
    a = M.walk(small_tree).manifest
    b = M.walk(str(other)).manifest
    # the root's mtime is set explicitly too, so everything must agree
    assert M.compare(a, b) == []
    c = tmp_path / "seed8"
    treegen.generate(c, seed=8, profile="small")
    assert M.compare(a, M.walk(str(c)).manifest) != []


def test_walk_matches_itself_and_reformats(small_tree):
    w = M.walk(small_tree)
    assert w.errors == []
    m = w.manifest
    assert M.compare(m, m) == []
    again = M.parse_text(m.text())
    assert M.compare(again, m) == [] and M.compare(m, again) == []
    kinds = {e["type"] for e in m.entries.values()}
    assert kinds == {"f", "d", "l"}
    assert m["names/" + "L" * 255]["type"] == "f"
    assert m["names/new\\nline"]["type"] == "f"
    assert m["names/latin1-\\xe9\\xff"]["type"] == "f"   # latin-1 bytes: not UTF-8
    assert m["links/len-4095"]["size"] == "4095"
    assert m["perm/mode-7777"]["mode"] == "7777"
    assert m["hard/three"]["nlink"] == "3"


def test_walk_records_content_and_errors(tmp_path):
    (tmp_path / "f").write_bytes(b"abc")
    os.symlink("f", tmp_path / "l")
    os.mkfifo(tmp_path / "p")
    m = M.walk(str(tmp_path)).manifest
    assert m["f"]["content"] == hashlib.sha256(b"abc").hexdigest()
    assert m["f"]["size"] == "3"
    assert m["l"]["content"] == "f" and m["l"]["type"] == "l"
    assert m["p"]["type"] == "p" and m["p"]["content"] == "-"
    os.chmod(tmp_path / "f", 0)
    if os.geteuid() != 0:
        assert M.walk(str(tmp_path)).manifest["f"]["content"] == "ERR:Permission denied"


def test_compare_reports_each_kind_of_difference(small_tree):
    exp = M.walk(small_tree).manifest
    act = {p: dict(e) for p, e in exp.entries.items()}
    act["sizes/size-1"]["content"] = "0" * 64
    act["perm/mode-0644"]["mode"] = "0640"
    act["perm/owner-2"]["uid"] = "1"
    del act["links/to-file"]
    act["surprise"] = dict(exp["sizes/size-1"])
    diffs = M.compare(exp, act)
    assert "sizes/size-1: content expected %s got %s" % (exp["sizes/size-1"]["content"], "0" * 64) in diffs
    assert "perm/mode-0644: mode expected 0644 got 0640" in diffs
    assert "perm/owner-2: uid expected 1000 got 1" in diffs
    assert "missing: links/to-file" in diffs
    assert "extra: surprise" in diffs
    assert len(diffs) == 5
    # wildcard and partial manifests
    exp2 = M.Manifest({p: dict(e) for p, e in exp.entries.items()}, partial=True)
    exp2.entries["perm/mode-0644"]["mode"] = "*"
    exp2.entries["gone"] = dict(exp["sizes/size-1"], type="!")
    d2 = M.compare(exp2, act)
    assert "perm/mode-0644: mode expected 0644 got 0640" not in d2
    assert not any(d.startswith("extra:") for d in d2)
    act["gone"] = dict(exp["sizes/size-1"])
    assert "must not exist: gone (found type f)" in M.compare(exp2, act)


def test_compare_directory_sizes_optional(small_tree):
    exp = M.walk(small_tree).manifest
    act = {p: dict(e) for p, e in exp.entries.items()}
    other = str(int(exp["deep"]["size"]) + 1)
    act["deep"]["size"] = other
    assert M.compare(exp, act) == ["deep: size expected %s got %s" % (exp["deep"]["size"], other)]
    assert M.compare(exp, act, ignore_dir_size=True) == []


def test_expected_manifest_from_tree(small_tree):
    w = M.walk(small_tree)
    exp = treegen.expected_manifest(w)
    assert exp["."]["mode"] == "*"
    assert exp["deep"]["nlink"] == "3"
    assert exp["deep/" + "/".join("level-%02d" % i for i in range(40))]["nlink"] == "2"
    assert exp["sizes/size-4096"]["content"] == w.manifest["sizes/size-4096"]["content"]


# ---------------------------------------------------------------- fsck checker

def test_fsck_check_accepts_good_and_rejects_damaged(tmp_path, small_tree):
    img = str(tmp_path / "t.img")
    fsutil.make_image(img, small_tree, 64 << 20)
    out = fsutil.fsck_check(img)
    assert "Done" in out
    # Damage one inode's link count (no inode checksum by default); fsck
    # must notice. Find the inode block of perm/mode-0644 by its footer.
    st_mode = 0o100644
    with open(img, "r+b") as f:
        data = f.read()
        hit = None
        name = b"mode-0644"
        for off in range(0, len(data), 4096):
            blk = data[off:off + 4096]
            nid, ino = struct.unpack_from("<II", blk, 4096 - 24)
            if nid and nid == ino and struct.unpack_from("<H", blk, 0)[0] == st_mode:
                namelen = struct.unpack_from("<I", blk, 88)[0]       # i_namelen
                if blk[92:92 + namelen] == name:                       # i_name
                    hit = off
                    break
        assert hit is not None, "inode block of mode-0644 not found"
        f.seek(hit + 12)
        f.write(struct.pack("<I", 5))
    r = fsutil.run(["fsck.f2fs", "-f", "--dry-run", img])
    probs = fsutil.fsck_problems(r.stdout, r.returncode)
    assert probs, r.stdout
    with pytest.raises(AssertionError):
        fsutil.fsck_check(img)


def test_sanitizer_report_detection():
    assert fsutil.sanitizer_report("x\n==1==ERROR: AddressSanitizer: heap-use-after-free\n")
    assert fsutil.sanitizer_report("core/node.c:12:5: runtime error: shift exponent 40\n")
    assert fsutil.sanitizer_report("f2fs-fuse: mounted\n") is None


# ---------------------------------------------------------------- mount helper

@pytest.mark.parametrize("tail,complaint", [
    ('echo "==1==ERROR: AddressSanitizer: heap-buffer-overflow" >&2; exit $rc', "sanitizer"),
    ('echo "x.c:1:2: runtime error: signed integer overflow" >&2; exit $rc', "sanitizer"),
    ("exit 3", "status 3"),
])
def test_mount_helper_catches_bad_exits(f2fs_fuse, fixture_image, tmp_path, tail, complaint):
    """The mount context manager fails a test whose daemon exits non-zero
    or prints a sanitizer report, even when everything else went well."""
    wrapper = tmp_path / "wrapped-f2fs-fuse"
    wrapper.write_text('#!/bin/sh\n"%s" "$@"\nrc=$?\n%s\n' % (f2fs_fuse, tail))
    wrapper.chmod(0o755)
    with pytest.raises(fsutil.MountError) as ei:
        with fsutil.mounted(str(wrapper), fixture_image("recovery"), tmp_path / "mnt") as m:
            assert os.listdir(m.path)
    assert complaint in str(ei.value)
    assert not fsutil.is_fuse_mount(tmp_path / "mnt")


def test_mount_helper_reports_early_exit(f2fs_fuse, tmp_path):
    img = tmp_path / "zero.img"
    img.write_bytes(b"\0" * 4096)
    with pytest.raises(fsutil.MountError) as ei:
        with fsutil.mounted(f2fs_fuse, img, tmp_path / "mnt"):
            pass
    assert "before mounting" in str(ei.value)
