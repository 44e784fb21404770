"""What survives a crash (SIGKILL of the daemon): fsync()ed data through
roll-forward recovery, periodic checkpoints, orphans; and the options
that steer it (checkpoint_interval=, fsync_checkpoint, io_stats)."""

import os
import re
import signal
import subprocess
import time

import fsutil
import pytest
from test_write import MiB, blob, expect, fsck_inode_count, rwimage, sha, write_file  # noqa: F401

NO_PERIODIC = "checkpoint_interval=3600"


@pytest.mark.parametrize("direct", [False, True], ids=["buffered", "direct"])
def test_fsync_survives_crash(rwimage, direct):
    """fsync()ed and fdatasync()ed files come back after a crash by
    roll-forward on the next read-write mount; fsck is clean after.  With
    -o direct too: the roll-forward's held writes once went out unaligned
    and the mount failed with EINVAL."""
    img = rwimage(options=(NO_PERIODIC,) + (("direct",) if direct else ()))
    p = img.mount()
    j = lambda *a: os.path.join(p, *a)   # noqa: E731
    write_file(j("base"), blob(20000, 1))
    os.mkdir(j("dir"))
    write_file(j("dir", "old"), blob(3 * MiB, 2))
    img.unmount()                       # checkpointed
    p = img.mount()
    j = lambda *a: os.path.join(p, *a)   # noqa: E731
    fd = os.open(j("new"), os.O_RDWR | os.O_CREAT, 0o644)
    os.write(fd, blob(100000, 3))
    os.fsync(fd)
    os.close(fd)
    fd = os.open(j("base"), os.O_WRONLY | os.O_APPEND)
    os.write(fd, b"appended")
    os.fsync(fd)
    os.close(fd)
    fd = os.open(j("dir", "old"), os.O_WRONLY)
    os.pwrite(fd, b"overwritten", MiB)
    os.fdatasync(fd)
    os.close(fd)
    fd = os.open(j("new-inline"), os.O_RDWR | os.O_CREAT, 0o600)
    os.write(fd, b"small and fsynced")
    os.fsync(fd)
    os.close(fd)
    img.crash()

    p = img.mount()
    old = bytearray(blob(3 * MiB, 2))
    old[MiB:MiB + 11] = b"overwritten"
    img.finish(expect({
        "new": {"content": sha(blob(100000, 3)), "size": "100000"},
        "base": {"content": sha(blob(20000, 1) + b"appended")},
        "dir/old": {"content": sha(bytes(old))},
        "new-inline": {"content": sha(b"small and fsynced"), "mode": "0600"},
    }))


def test_fsync_checkpoint_option(rwimage):
    """-o fsync_checkpoint: an fsync commits a checkpoint, so even a new
    directory's files survive a crash, with no recovery to do."""
    img = rwimage(options=(NO_PERIODIC, "fsync_checkpoint"))
    p = img.mount()
    os.makedirs(os.path.join(p, "a", "b"))
    fd = os.open(os.path.join(p, "a", "b", "f"), os.O_RDWR | os.O_CREAT, 0o644)
    os.write(fd, b"checkpointed")
    os.fsync(fd)
    os.close(fd)
    img.crash()
    p = img.mount(ro=True)
    try:
        with open(os.path.join(p, "a", "b", "f"), "rb") as f:
            assert f.read() == b"checkpointed"
    finally:
        m = img.unmount()
    assert "recovery" not in m.stderr(), m.stderr()
    fsutil.fsck_check(img.image)


def test_unsynced_changes_lost_in_crash(rwimage):
    """With no fsync and no periodic checkpoint, a crash returns the image to
    its last checkpoint, consistently."""
    img = rwimage(options=(NO_PERIODIC,))
    p = img.mount()
    write_file(os.path.join(p, "kept"), b"checkpointed at unmount")
    img.unmount()
    p = img.mount()
    write_file(os.path.join(p, "lost"), b"never synced")
    os.unlink(os.path.join(p, "kept"))
    img.crash()
    fsutil.fsck_check(img.image)
    img.mount()
    img.finish(expect({"kept": {"content": sha(b"checkpointed at unmount")},
                       "lost": {"type": "!"}}))


def test_periodic_checkpoint(rwimage):
    """-o checkpoint_interval=1: changes reach a checkpoint within seconds
    without any fsync, from the maintenance thread."""
    img = rwimage(options=("checkpoint_interval=1",))
    p = img.mount()
    write_file(os.path.join(p, "periodic"), blob(50000, 1))
    os.mkdir(os.path.join(p, "dir"))
    time.sleep(3.5)
    img.crash()
    fsutil.fsck_check(img.image)
    img.mount()
    img.finish(expect({"periodic": {"content": sha(blob(50000, 1))}, "dir": {"type": "d"}}))


def test_orphan_freed_after_crash(rwimage):
    """A file unlinked while open and checkpointed as an orphan is freed by
    the next read-write mount after a crash."""
    img = rwimage(options=(NO_PERIODIC,))
    p = img.mount()
    write_file(os.path.join(p, "victim"), blob(2 * MiB, 1))
    write_file(os.path.join(p, "other"), b"other")
    fd = os.open(os.path.join(p, "victim"), os.O_RDONLY)
    os.unlink(os.path.join(p, "victim"))
    dfd = os.open(p, os.O_RDONLY)
    os.fsync(dfd)                        # a checkpoint that records the orphan
    os.close(dfd)
    img.crash()
    os.close(fd)
    img.mount()
    man = img.finish(expect({"victim": {"type": "!"}, "other": {"content": sha(b"other")}}))
    assert sorted(man.entries) == [".", "other"]


def test_io_stats_option(rwimage):
    """-o io_stats prints the counts and bytes by request size at unmount;
    1 MiB writes reach the core whole (max_write), and the page cache writes
    a file back as one run, so the data shows as large device writes; the
    bytes of each bucket lie within its sizes."""
    img = rwimage(options=("io_stats",))
    p = img.mount()
    write_file(os.path.join(p, "f"), blob(4 * MiB, 1))
    m = img.unmount()
    out = m.stderr()
    assert "I/O statistics" in out, out
    for word in ("reads", "writes", "write bytes", "4K", ">=512K"):
        assert word in out, out
    # "size reads writes read-bytes write-bytes" after the log prefix
    rows = {f[-5]: [int(v) for v in f[-4:]] for f in (ln.split() for ln in out.splitlines())
            if len(f) >= 5 and re.fullmatch(r"[<>=]*\d+K", f[-5])}
    assert ">=512K" in rows and "4K" in rows, out
    _, writes, _, wbytes = rows[">=512K"]
    assert writes >= 1 and wbytes >= writes * 512 * 1024 and wbytes >= 3 * MiB, out
    _, writes4k, _, wbytes4k = rows["4K"]
    assert wbytes4k <= writes4k * 4096, out
    m = re.search(r"writes (\d+) \((\d+) bytes\)", out)
    assert m and sum(r[3] for r in rows.values()) == int(m.group(2)), out
    fsutil.fsck_check(img.image)


def op_counts(text):
    """The last whole block of FUSE request counts in a daemon's output
    (it ends with the total): {kind: n}, None before the first."""
    counts = cur = None
    for ln in text.splitlines():
        if "FUSE requests (kind" in ln:
            cur = {}
            continue
        m = re.search(r"\bop (\S+)\s+(\d+)", ln)
        if m and cur is not None:
            cur[m.group(1)] = int(m.group(2))
            if m.group(1) == "total":
                counts, cur = cur, None
    return counts


def test_request_counts(rwimage):
    """SIGUSR1 prints the FUSE requests so far and the daemon carries on;
    -o io_stats prints them again at unmount.  A missing name is looked up
    once (the kernel caches its absence); a new file with 4 KiB written
    is one LOOKUP, CREATE and WRITE, and a RELEASE (which the kernel sends
    after close() has returned)."""
    img = rwimage(options=("io_stats",))
    p = img.mount()
    for _ in range(3):
        assert not os.path.exists(os.path.join(p, "missing"))
    write_file(os.path.join(p, "f"), blob(4096, 1))
    os.kill(img.m.proc.pid, signal.SIGUSR1)
    deadline = time.monotonic() + 10
    while op_counts(img.m.stderr()) is None and time.monotonic() < deadline:
        time.sleep(0.05)
    live = op_counts(img.m.stderr())
    assert live is not None, img.m.stderr()
    assert img.m.proc.poll() is None
    assert live.get("LOOKUP") == 2, live
    for kind in ("CREATE", "WRITE"):
        assert live.get(kind) == 1, live
    m = img.unmount()
    final = op_counts(m.stderr())
    assert final and final["total"] >= live["total"], m.stderr()
    assert final.get("RELEASE") == 1, final
    fsutil.fsck_check(img.image)


def test_bad_option_values(f2fs_fuse, tmp_path):
    img = tmp_path / "x.img"
    with open(img, "wb") as f:
        f.truncate(64 * MiB)
    fsutil.run(["mkfs.f2fs", "-f", img], check=True)
    (tmp_path / "mnt").mkdir()
    for opt in ("checkpoint_interval=0", "checkpoint_interval=abc", "checkpoint_interval=-1",
                "checkpoint_interval="):
        r = fsutil.run([f2fs_fuse, "-f", "-o", opt, img, tmp_path / "mnt"], timeout=30,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        assert r.returncode != 0, opt
        assert "checkpoint_interval" in r.stdout, r.stdout
        assert not fsutil.is_fuse_mount(tmp_path / "mnt")


def test_help_lists_write_options(f2fs_fuse):
    r = fsutil.run([f2fs_fuse, "--help"], timeout=30)
    for word in ("checkpoint_interval", "fsync_checkpoint", "io_stats", "-o rw"):
        assert word in r.stdout, r.stdout


def test_inode_count_helper_sees_fsck_output(rwimage):
    """The harness's inode count comes from fsck's summary line."""
    img = rwimage()
    img.mount()
    img.unmount()
    assert fsck_inode_count(fsutil.fsck_check(img.image)) == 1


def test_fsync_after_delete_recovers_within_user_blocks(rwimage):
    """Space freed by a delete that no checkpoint has committed yet is
    reused by an fsync()ed file: roll-forward brings the file back on top of
    the checkpoint, where the deleted file still counts.  The fsync must not
    leave a log whose replay holds more blocks than the checkpoint allows
    users (the kernel refuses such a checkpoint: "Wrong valid_user_blocks")."""
    img = rwimage(size=256 * MiB, options=(NO_PERIODIC,))
    p = img.mount()
    sv = os.statvfs(p)
    half = (sv.f_bavail * sv.f_frsize * 53 // 100) // MiB * MiB
    write_file(os.path.join(p, "old"), blob(half, 1))
    img.unmount()                       # checkpointed with "old"
    p = img.mount()
    os.unlink(os.path.join(p, "old"))   # not checkpointed
    fd = os.open(os.path.join(p, "new"), os.O_RDWR | os.O_CREAT, 0o644)
    os.write(fd, blob(half, 2))
    os.fsync(fd)
    os.close(fd)
    img.crash()

    p = img.mount()
    st = os.statvfs(p)
    assert st.f_bfree <= st.f_blocks
    got = img.finish()
    assert got["new"]["content"] == sha(blob(half, 2))
