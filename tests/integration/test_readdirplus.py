"""Listings with attributes (READDIRPLUS, -o readdirplus=always|adaptive|auto|never).

With readdirplus the kernel links every listed entry as if looked up, so a
stat walk after a listing costs no LOOKUP round trip; the attributes it
got that way must be exactly those a LOOKUP gives, and stay right through
changes made after the listing."""

import errno
import os
import re
import signal
import stat
import time

import pytest

import fsutil
from test_handles import drop_caches
from test_write_durability import op_counts
from test_write import MiB, rwimage, write_file  # noqa: F401


def op_count(stderr, op):
    """How many requests of kind op the -o io_stats report at unmount counted."""
    m = re.search(r"op %s\s+(\d+)" % op, stderr)
    return int(m.group(1)) if m else 0


def shown(st):
    return (stat.S_IFMT(st.st_mode), stat.S_IMODE(st.st_mode), st.st_size, st.st_nlink,
            st.st_uid, st.st_gid, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)


def make_tree(p):
    os.mkdir(os.path.join(p, "d"))
    d = os.path.join(p, "d")
    for i in range(300):
        write_file(os.path.join(d, "f%03d" % i), b"x" * (i * 37))
        os.chmod(os.path.join(d, "f%03d" % i), 0o600 + i % 64)
    for i in range(10):
        os.mkdir(os.path.join(d, "sub%d" % i))
        os.symlink("f%03d" % i, os.path.join(d, "l%d" % i))
    os.link(os.path.join(d, "f000"), os.path.join(d, "hard"))
    os.chown(os.path.join(d, "f001"), 1234, 5678)
    return d


def walk(d):
    drop_caches()
    return {e: shown(os.lstat(os.path.join(d, e))) for e in sorted(os.listdir(d))}


def test_stat_after_listing_costs_no_lookup(rwimage):
    """A cold listing then an lstat of each entry: no LOOKUP with the
    default, one per entry with readdirplus=never, and the same attributes
    either way."""
    img = rwimage(size=64 * MiB)
    make_tree(img.mount())
    img.unmount()
    fsutil.fsck_check(img.image)
    seen, lookups, plus = {}, {}, {}
    for mode in ("always", "never", "auto"):
        p = img.mount(options=["ro", "io_stats", "readdirplus=" + mode])
        seen[mode] = walk(os.path.join(p, "d"))
        m = img.unmount()
        lookups[mode] = op_count(m.stderr(), "LOOKUP")
        plus[mode] = op_count(m.stderr(), "READDIRPLUS")
    assert len(seen["always"]) == 321
    assert seen["always"] == seen["never"] == seen["auto"]
    # "d" itself, and nothing per entry
    assert lookups["always"] < 5 and plus["always"] > 0, (lookups, plus)
    assert lookups["never"] >= 321 and plus["never"] == 0, (lookups, plus)


def test_listed_entries_follow_changes(rwimage):
    """Entries the kernel linked from a listing are updated by the changes
    that follow: unlink, rename over, link, chmod, truncate, a new name."""
    img = rwimage(size=64 * MiB)
    p = img.mount()
    d = make_tree(p)
    img.unmount()
    p = img.mount()
    d = os.path.join(p, "d")
    drop_caches()
    before = {e: shown(os.lstat(os.path.join(d, e))) for e in os.listdir(d)}
    assert before["hard"][3] == 2
    os.unlink(os.path.join(d, "f002"))
    os.rename(os.path.join(d, "f003"), os.path.join(d, "f004"))
    os.link(os.path.join(d, "f005"), os.path.join(d, "f005.2"))
    os.chmod(os.path.join(d, "f006"), 0o640)
    os.truncate(os.path.join(d, "f007"), 1)
    os.unlink(os.path.join(d, "hard"))
    write_file(os.path.join(d, "new"), b"new")
    for gone in ("f002", "f003", "hard"):
        try:
            os.lstat(os.path.join(d, gone))
            raise AssertionError(gone + " still there")
        except OSError as e:
            assert e.errno == errno.ENOENT
    assert os.lstat(os.path.join(d, "f004")).st_ino == before["f003"][8]
    assert os.lstat(os.path.join(d, "f004")).st_size == 3 * 37
    assert os.lstat(os.path.join(d, "f005")).st_nlink == 2
    assert stat.S_IMODE(os.lstat(os.path.join(d, "f006")).st_mode) == 0o640
    assert os.lstat(os.path.join(d, "f007")).st_size == 1
    assert os.lstat(os.path.join(d, "f000")).st_nlink == 1
    after = {e: shown(os.lstat(os.path.join(d, e))) for e in os.listdir(d)}
    img.unmount()
    fsutil.fsck_check(img.image)
    # a fresh mount, listed cold, shows the same
    p = img.mount(options=["ro"])
    assert walk(os.path.join(p, "d")) == after
    img.unmount()


def test_bad_readdirplus_value_is_refused(rwimage, tmp_path):
    img = rwimage(size=64 * MiB)
    mnt = tmp_path / "bad-mnt"
    mnt.mkdir()
    r = fsutil.run([img.binary, "-f", "-o", "readdirplus=sometimes", img.image, str(mnt)])
    assert r.returncode != 0
    assert "readdirplus" in r.stdout, r.stdout
    assert not fsutil.is_fuse_mount(mnt)


def ra_blocks(stderr):
    m = re.search(r"read-ahead: (\d+) blocks in (\d+) requests", stderr)
    assert m, stderr
    return int(m.group(1))


def test_listing_reads_dentry_blocks_ahead(rwimage):
    """A cold listing of a directory of many dentry blocks asks for them in
    batches (read ahead into the cache), not one read at a time; with
    node_ra=0 nothing is read ahead; the names are the same either way."""
    img = rwimage(size=128 * MiB)
    p = img.mount()
    os.mkdir(os.path.join(p, "big"))
    names = sorted("entry-with-a-longer-name-%05d" % i for i in range(3000))
    for n in names:
        open(os.path.join(p, "big", n), "wb").close()
    img.unmount()
    fsutil.fsck_check(img.image)
    got = {}
    for opts in (["readdirplus=never", "io_stats"], ["readdirplus=never", "io_stats", "node_ra=0"]):
        p = img.mount(options=opts)
        drop_caches()
        listed = sorted(os.listdir(os.path.join(p, "big")))
        got[opts[-1]] = ra_blocks(img.unmount().stderr())
        assert listed == names
    assert got["io_stats"] >= 20, got
    assert got["node_ra=0"] == 0, got


def test_lookups_after_a_listing_of_names_read_inodes_ahead(rwimage):
    """With names alone listed, the first lookup of an entry whose inode
    is not in memory reads the inodes of all the directory's entries ahead
    in one batch, also in a small directory whose entries stay inline (it
    never gets a name index); node_ra=0 reads nothing ahead; the
    attributes are the same either way."""
    img = rwimage(size=64 * MiB)
    p = img.mount()
    os.mkdir(os.path.join(p, "small"))
    for i in range(40):
        write_file(os.path.join(p, "small", "f%02d" % i), b"y" * i)
    img.unmount()
    fsutil.fsck_check(img.image)
    seen, ra = {}, {}
    for opts in (["io_stats"], ["io_stats", "node_ra=0"]):
        p = img.mount(options=["ro", "readdirplus=never"] + opts)
        seen[opts[-1]] = walk(os.path.join(p, "small"))
        ra[opts[-1]] = ra_blocks(img.unmount().stderr())
    assert len(seen["io_stats"]) == 40
    assert seen["io_stats"] == seen["node_ra=0"]
    assert ra["io_stats"] >= 39 and ra["node_ra=0"] == 0, ra


def live_lookups(img):
    """LOOKUP requests the daemon has had so far (its SIGUSR1 report)."""
    done = len(re.findall(r"\bop total\s", img.m.stderr()))
    os.kill(img.m.proc.pid, signal.SIGUSR1)
    deadline = time.monotonic() + 10
    while len(re.findall(r"\bop total\s", img.m.stderr())) <= done:
        assert time.monotonic() < deadline, img.m.stderr()
        time.sleep(0.02)
    return op_counts(img.m.stderr()).get("LOOKUP", 0)


def list_and_stat(d):
    return {e: shown(os.lstat(os.path.join(d, e))) for e in sorted(os.listdir(d))}


def pin_dirs(p, names):
    """Open the directories: their dentries stay while other tests drop
    the kernel's caches, so listing one again looks up nothing."""
    return [os.open(os.path.join(p, n), os.O_RDONLY | os.O_DIRECTORY) for n in names]


def within(t0, limit, what):
    """readdirplus=adaptive keeps attributes on for a second: a machine
    that stalled longer than the test's margin says nothing about it."""
    if time.monotonic() - t0 > limit:
        pytest.skip("the machine stalled %s (more than %.1f s)" % (what, limit))


def test_adaptive_attributes_follow_lookups(rwimage):
    """readdirplus=adaptive: a listing carries names alone, but
    subdirectories with their attributes, until its entries are looked up
    (each lstat of a file after it is a LOOKUP); the next listing then
    carries attributes (its lstats need no request); a second and more
    without such lookups, names alone again.  The attributes are those
    readdirplus=always gives."""
    img = rwimage(size=64 * MiB)
    p = img.mount()
    for d in "abc":
        os.mkdir(os.path.join(p, d))
        for i in range(50):
            write_file(os.path.join(p, d, "f%02d" % i), b"z" * i)
            os.chmod(os.path.join(p, d, "f%02d" % i), 0o600 + i)
        os.mkdir(os.path.join(p, d, "sub"))
    img.unmount()
    fsutil.fsck_check(img.image)

    p = img.mount(options=["ro", "readdirplus=always"])
    drop_caches()
    want = {d: list_and_stat(os.path.join(p, d)) for d in "abc"}
    img.unmount()

    p = img.mount(options=["ro", "io_stats", "readdirplus=adaptive"])
    drop_caches()
    fds = pin_dirs(p, "abc")
    try:
        n0 = live_lookups(img)
        got_a = list_and_stat(os.path.join(p, "a"))
        t = time.monotonic()
        got_b = list_and_stat(os.path.join(p, "b"))
        within(t, 0.9, "between the lookups in a and the listing of b")
        n1 = live_lookups(img)
        time.sleep(1.5)
        got_c = list_and_stat(os.path.join(p, "c"))
        n2 = live_lookups(img)
    finally:
        for fd in fds:
            os.close(fd)
    img.unmount()
    assert (got_a, got_b, got_c) == (want["a"], want["b"], want["c"])
    assert len(got_a) == 51
    # a: every file ("sub" came with its attributes); b: none (at most a
    # probe if this ran slowly)
    assert 50 <= n1 - n0 <= 51, (n0, n1, n2)
    # c, after a second and a half without lookups: every file again
    assert n2 - n1 == 50, (n0, n1, n2)


def test_adaptive_probe_keeps_attributes_on(rwimage):
    """readdirplus=adaptive: past half of the second that attributes stay
    on, a listing sends one file without them; a walk that stats what it
    lists looks that one up, which keeps attributes on for another second:
    directories listed 0.6 s and 1.2 s after the walk's first lookups cost
    one LOOKUP each (without the probe, the second would have lapsed and
    cost one per file)."""
    img = rwimage(size=64 * MiB)
    p = img.mount()
    for d in "abcd":
        os.mkdir(os.path.join(p, d))
        for i in range(30):
            write_file(os.path.join(p, d, "f%02d" % i), b"p" * i)
    img.unmount()
    fsutil.fsck_check(img.image)
    p = img.mount(options=["ro", "io_stats", "readdirplus=adaptive"])
    drop_caches()
    fds = pin_dirs(p, "abcd")
    try:
        counts = [live_lookups(img)]
        list_and_stat(os.path.join(p, "a"))
        t = time.monotonic()
        list_and_stat(os.path.join(p, "b"))
        counts.append(live_lookups(img))
        for d in "cd":
            time.sleep(0.6)
            # listed before the attributes' second since t (the last lookup
            # that renewed them came before it) is over
            within(t, 0.95, "before the listing of " + d)
            t = time.monotonic()
            assert len(list_and_stat(os.path.join(p, d))) == 30
            counts.append(live_lookups(img))
    finally:
        for fd in fds:
            os.close(fd)
    img.unmount()
    steps = [y - x for x, y in zip(counts, counts[1:])]
    # a and b: a's files; c and d: their probes
    assert steps[0] in (30, 31) and steps[1:] == [1, 1], (counts, steps)
