"""Directory name indexes (core/dcache.c): lookups answered from the index
must be the lookups the dentry-block scan gives, through creates, unlinks,
renames over names, subdirectories moving between parents and block punches,
and must agree with a mount that has no index (-o dcache_size=0)."""

import errno
import os
import random
import re

import fsutil
from test_handles import drop_caches
from test_write import MiB, rwimage  # noqa: F401


def lookup(path):
    """(st_ino, is_dir) through a LOOKUP, or None for ENOENT."""
    try:
        st = os.lstat(path)
    except OSError as e:
        assert e.errno == errno.ENOENT, e
        return None
    return st.st_ino, os.path.isdir(path)


def check_names(root, model, probes):
    """Every modelled name and every probe looks up as the model says; the
    kernel's dentry cache is dropped first so each one reaches the daemon."""
    drop_caches()
    listing = {e.name: e.inode() for e in os.scandir(root)}
    assert set(listing) == set(model), sorted(set(listing) ^ set(model))[:10]
    for name in sorted(model) + probes:
        got = lookup(os.path.join(root, name))
        if name in model:
            assert got is not None, name
            assert got[0] == listing[name], name
            assert got[1] == (model[name] == "d"), name
        else:
            assert got is None, name


def test_index_follows_every_change(rwimage):
    img = rwimage(size=256 * MiB)
    p = img.mount()
    root = os.path.join(p, "big")
    os.mkdir(root)
    rng = random.Random(7)
    model = {}
    for i in range(3000):
        name = "f%05d-%s" % (i, "x" * rng.randrange(0, 40))
        with open(os.path.join(root, name), "wb") as f:
            f.write(b"%d" % i)
        model[name] = "f"
    for i in range(20):
        os.mkdir(os.path.join(root, "sub%02d" % i))
        model["sub%02d" % i] = "d"
    probes = ["absent-%d" % i for i in range(50)]
    check_names(root, model, probes)          # builds the index

    names = sorted(n for n in model if model[n] == "f")
    # unlinks, with a whole block's worth in a row so blocks get punched
    for n in names[:400] + names[1000::7]:
        os.unlink(os.path.join(root, n))
        del model[n]
    # rename over existing names (the entry is repointed) and to new names
    files = sorted(n for n in model if model[n] == "f")
    for a, b in zip(files[0:200:2], files[1:200:2]):
        os.rename(os.path.join(root, a), os.path.join(root, b))
        del model[a]
    for n in files[300:340]:
        os.rename(os.path.join(root, n), os.path.join(root, n + ".moved"))
        del model[n]
        model[n + ".moved"] = "f"
    # subdirectories leave and return (".." of each is repointed)
    os.mkdir(os.path.join(p, "elsewhere"))
    for i in range(0, 20, 2):
        os.rename(os.path.join(root, "sub%02d" % i), os.path.join(p, "elsewhere", "s%d" % i))
        del model["sub%02d" % i]
    for i in range(0, 20, 4):
        os.rename(os.path.join(p, "elsewhere", "s%d" % i), os.path.join(root, "back%02d" % i))
        model["back%02d" % i] = "d"
    for i in range(1, 20, 4):
        os.rmdir(os.path.join(root, "sub%02d" % i))
        del model["sub%02d" % i]
    # new names, some reusing removed ones
    for i in range(600):
        name = "new%04d" % i if i % 3 else names[i]
        with open(os.path.join(root, name), "wb") as f:
            f.write(b"n")
        model[name] = "f"
    probes += names[400:420] + files[0:200:2][:20]
    check_names(root, model, probes)
    img.unmount()
    fsutil.fsck_check(img.image)

    # the scan, without an index, gives the same answers
    p = img.mount(options=["dcache_size=0"])
    check_names(os.path.join(p, "big"), model, probes)
    img.unmount()


def test_index_off_and_tiny_budget(rwimage):
    """dcache_size=0 and a budget too small for the directory: lookups scan."""
    img = rwimage(size=64 * MiB)
    p = img.mount()
    root = os.path.join(p, "d")
    os.mkdir(root)
    model = {}
    for i in range(800):
        open(os.path.join(root, "n%d" % i), "wb").close()
        model["n%d" % i] = "f"
    img.unmount()
    fsutil.fsck_check(img.image)
    for k, opts in enumerate((["dcache_size=0"], ["dcache_size=4K"])):
        p = img.mount(options=opts)
        root = os.path.join(p, "d")
        check_names(root, model, ["n%d" % i for i in range(800, 820)])
        os.unlink(os.path.join(root, "n%d" % k))
        del model["n%d" % k]
        check_names(root, model, ["n%d" % k])
        img.unmount()
        fsutil.fsck_check(img.image)


def device_reads(stderr):
    """The image reads -o io_stats counted, from the unmount report."""
    m = re.search(r":\s+reads (\d+) \(\d+ bytes\)", stderr)
    if m:
        return int(m.group(1))
    raise AssertionError("no io_stats reads line in:\n" + stderr)


def test_stat_after_listing_reads_inodes_in_batches(rwimage):
    """find | xargs stat on a cold mount: once a directory is indexed, a
    lookup that misses reads its siblings' inode blocks ahead together, so
    the device sees a few large reads, not one per file.  With node_ra=0
    (no read-ahead) the same walk reads every inode on its own."""
    img = rwimage(size=128 * MiB)
    p = img.mount()
    for d in range(3):
        os.mkdir(os.path.join(p, "d%d" % d))
        for i in range(500):
            open(os.path.join(p, "d%d" % d, "f%04d" % i), "wb").close()
    img.unmount()
    reads = {}
    for opts in (["io_stats"], ["io_stats", "node_ra=0"]):
        p = img.mount(options=opts)
        drop_caches()
        for d in range(3):
            root = os.path.join(p, "d%d" % d)
            for e in sorted(os.listdir(root)):
                os.lstat(os.path.join(root, e))
        m = img.unmount()
        reads[opts[-1]] = device_reads(m.stderr())
        fsutil.fsck_check(img.image)
    # without read-ahead every one of the 1,500 inodes is a read of its own
    assert reads["node_ra=0"] >= 1500, reads
    # with it, at most a few per directory (dentry blocks read the same in both)
    assert reads["io_stats"] + 1400 < reads["node_ra=0"], reads


def test_cold_stat_reads_inode_windows(rwimage):
    """Files made in turn in several directories have their inodes side by
    side in the node log, but not beside their siblings: an inode read
    brings its aligned window of neighbours along (as ext4's inode
    read-ahead), so a cold stat of each file by path costs about one read
    per 16 inodes, where reading each inode (node_ra=0) costs one per
    file."""
    img = rwimage(size=128 * MiB)
    p = img.mount()
    for d in range(4):
        os.mkdir(os.path.join(p, "d%d" % d))
    names = [os.path.join("d%d" % (i % 4), "f%04d" % i) for i in range(800)]
    for n in names:
        open(os.path.join(p, n), "wb").close()
    img.unmount()
    reads = {}
    for opts in (["io_stats"], ["io_stats", "node_ra=0"]):
        p = img.mount(options=opts)
        drop_caches()
        for n in names:
            assert os.lstat(os.path.join(p, n)).st_size == 0
        m = img.unmount()
        reads[opts[-1]] = device_reads(m.stderr())
        fsutil.fsck_check(img.image)
    assert reads["node_ra=0"] >= 800, reads
    assert reads["io_stats"] * 4 < reads["node_ra=0"], reads
