"""Images built by mkfs.f2fs + sload.f2fs from generated trees, mounted and
compared attribute by attribute and byte by byte with the source tree.

What is compared and what is not (sload.f2fs 1.15 keeps only some of it)
is described in treegen.py; in short: type, mode, uid, gid, size, nlink,
mtime (seconds), content and symlink targets of every entry, except the
root's mode/owner/mtime and directory sizes.
"""

import errno
import os

import pytest

import fsutil
import manifest as M
import treegen

EXTRA = "extra_attr,inode_checksum,flexible_inline_xattr,inode_crtime,sb_checksum"

# name: (image size, mkfs -O features, tree profile)
CONFIGS = {
    "default": (256 << 20, None, "full"),
    "extra-features": (256 << 20, EXTRA, "full-extra"),
    "small-64m": (64 << 20, None, "small"),
    "sparse-4g": (4 << 30, None, "full"),
    "sparse-4g-extra": (4 << 30, EXTRA, "full-extra"),
}


@pytest.fixture(scope="session")
def trees(tmp_path_factory):
    """profile -> (source root, expected manifest); generated once."""
    base = tmp_path_factory.mktemp("trees")
    cache = {}

    def _get(profile):
        if profile not in cache:
            root = base / profile
            treegen.generate(root, seed=20240601, profile=profile)
            w = M.walk(str(root))
            assert w.errors == []
            cache[profile] = (str(root), treegen.expected_manifest(w))
        return cache[profile]

    return _get


@pytest.fixture(scope="session")
def images(tmp_path_factory, trees):
    """config name -> image path; built (and fsck-checked) once."""
    base = tmp_path_factory.mktemp("images")
    cache = {}

    def _get(name):
        if name not in cache:
            size, features, profile = CONFIGS[name]
            root, _ = trees(profile)
            cache[name] = fsutil.make_image(base / (name + ".img"), root, size, features)
        return cache[name]

    return _get


@pytest.mark.parametrize("config", sorted(CONFIGS))
def test_generated_image_matches_source(mount, images, trees, config):
    _, _, profile = CONFIGS[config]
    _, expected = trees(profile)
    with mount(images(config)) as m:
        w = M.walk(m.path)
    assert w.errors == [], w.errors
    diffs = M.compare(expected, w.manifest)
    assert diffs == [], M.report(diffs)


@pytest.mark.parametrize("config", ["default", "extra-features"])
def test_generated_hard_links_and_inodes(mount, images, trees, config):
    root, expected = trees(CONFIGS[config][2])
    with mount(images(config)) as m:
        src, got = {}, {}
        for p, e in expected.entries.items():
            if e["type"] != "f":
                continue
            rel = os.fsdecode(M.unescape(p))
            src.setdefault(os.lstat(os.path.join(root, rel)).st_ino, set()).add(p)
            got.setdefault(os.lstat(os.path.join(m.path, rel)).st_ino, set()).add(p)
    # the same grouping of names into inodes as in the source tree
    assert sorted(map(sorted, src.values())) == sorted(map(sorted, got.values()))
    assert any(len(g) == 3 for g in got.values())


def test_generated_bigdir_listing(mount, images, trees):
    root, _ = trees("full")
    want = sorted(os.listdir(os.path.join(root, "bigdir")))
    assert len(want) == treegen.PROFILES["full"].bigdir
    with mount(images("default")) as m:
        d = os.path.join(m.path, "bigdir")
        got = os.listdir(d)
        assert len(got) == len(set(got)), "duplicate names in readdir"
        assert sorted(got) == want
        # every name found by lookup, in a different order than readdir's
        for n in reversed(want):
            os.lstat(os.path.join(d, n))
        # names that are not there (some differ in one character)
        for n in want[:50]:
            with pytest.raises(FileNotFoundError):
                os.lstat(os.path.join(d, n + "x"))
            with pytest.raises(FileNotFoundError):
                os.lstat(os.path.join(d, n[:-1] + ("A" if n[-1] != "A" else "B")))
        # readdir with telldir/seekdir-style restarts: scandir twice gives the same
        assert sorted(e.name for e in os.scandir(d)) == want


def test_generated_deep_path_and_long_names(mount, images, trees):
    root, expected = trees(CONFIGS["extra-features"][2])
    deepest = max((p for p in expected.entries if p.startswith("deep/")), key=len)
    with mount(images("extra-features")) as m:
        rel = os.fsdecode(M.unescape(deepest))
        with open(os.path.join(m.path, rel), "rb") as f, open(os.path.join(root, rel), "rb") as g:
            assert f.read() == g.read()
        names = os.listdir(os.path.join(m.path, "names"))
        assert "L" * 255 in names
        assert "\u65e5" * 85 in names
        link = os.readlink(os.path.join(m.path, "links", "len-4095"))
        assert len(link) == 4095
        assert link == os.readlink(os.path.join(root, "links", "len-4095"))
        with pytest.raises(OSError) as ei:
            os.lstat(os.path.join(m.path, "names", "L" * 256))
        assert ei.value.errno in (errno.ENAMETOOLONG, errno.ENOENT)


def test_generated_symlinks_resolve(mount, images, trees):
    root, _ = trees("full")
    with mount(images("default")) as m:
        with open(os.path.join(m.path, "links", "to-file"), "rb") as f, \
                open(os.path.join(root, "sizes", "size-100"), "rb") as g:
            assert f.read() == g.read()
        assert sorted(os.listdir(os.path.join(m.path, "links", "to-dir"))) == \
            sorted(os.listdir(os.path.join(root, "deep")))
        with pytest.raises(FileNotFoundError):
            os.stat(os.path.join(m.path, "links", "dangling-abs"))


# Other mkfs features the driver must read through (sload fills them all):
# feature string -> does mkfs create lost+found
FEATURES = {
    "encrypt": False,
    "quota": False,
    "extra_attr,project_quota": False,
    "extra_attr,verity": False,
    "extra_attr,compression": False,
    "lost_found": True,
    EXTRA + ",encrypt,quota,project_quota,verity,compression,lost_found": True,
}


@pytest.mark.parametrize("features", sorted(FEATURES))
def test_generated_feature_variants(mount, trees, tmp_path, features):
    profile = "small-extra" if "extra_attr" in features else "small"
    root, expected = trees(profile)
    exp = M.Manifest({p: dict(e) for p, e in expected.entries.items()})
    if FEATURES[features]:
        # made by mkfs: root-owned, 0700, empty
        exp.entries["lost+found"] = {
            "type": "d", "mode": "0700", "uid": "0", "gid": "0", "size": "*", "nlink": "2",
            "mtime": "*", "content": "-", "xattrs": "-"}
        exp.entries["."]["nlink"] = str(int(exp["."]["nlink"]) + 1)
    img = fsutil.make_image(tmp_path / "f.img", root, 256 << 20, features)
    with mount(img) as m:
        w = M.walk(m.path)
    assert w.errors == [], w.errors
    diffs = M.compare(exp, w.manifest)
    assert diffs == [], M.report(diffs)
