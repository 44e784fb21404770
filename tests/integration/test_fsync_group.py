"""Concurrent fsyncs commit as a group: threads fsyncing (or writing
O_SYNC to) their own files share node writes and flushes; after SIGKILL of
the daemon in the middle of it, roll-forward recovery gives every file a
state it had at one of its acknowledged fsyncs or later (never a torn
one), and fsck is clean."""

import os
import re
import threading
import time

import pytest

from test_write import MiB, blob, rwimage  # noqa: F401

NO_PERIODIC = "checkpoint_interval=3600"
THREADS = 8
CHUNK = 256 * 1024
WRAP = 24                # chunks per file before writes wrap to offset 0 (6 MiB: direct nodes)


def chunk(i, k):
    return blob(CHUNK, i * 100003 + k)


def state(i, n):
    """File i after its first n chunk writes."""
    b = bytearray()
    for k in range(n):
        off = (k % WRAP) * CHUNK
        if off == len(b):
            b += chunk(i, k)
        else:
            b[off:off + CHUNK] = chunk(i, k)
    return bytes(b)


class Writer(threading.Thread):
    """Writes chunk after chunk to its file, each made durable by `mode`,
    counting the acknowledged ones, until stopped or the mount dies."""

    def __init__(self, path, i, mode, stop, rounds=None):
        super().__init__(daemon=True)
        self.path, self.i, self.mode, self.stop, self.rounds = path, i, mode, stop, rounds
        self.acked = 0
        self.error = None

    def run(self):
        flags = os.O_WRONLY | os.O_CREAT | (os.O_SYNC if self.mode == "osync" else 0)
        try:
            fd = os.open(self.path, flags, 0o644)
        except OSError as e:
            self.error = e
            return
        try:
            k = 0
            while not self.stop.is_set() and (self.rounds is None or k < self.rounds):
                os.pwrite(fd, chunk(self.i, k), (k % WRAP) * CHUNK)
                if self.mode == "fsync":
                    os.fsync(fd)
                elif self.mode == "fdatasync":
                    os.fdatasync(fd)
                k += 1
                self.acked = k
        except OSError as e:
            self.error = e
        finally:
            try:
                os.close(fd)
            except OSError:
                pass


def run_writers(p, mode, stop, rounds=None):
    ws = [Writer(os.path.join(p, "d", "f%d" % i), i, mode, stop, rounds) for i in range(THREADS)]
    for w in ws:
        w.start()
    return ws


@pytest.mark.parametrize("mode", ["fsync", "fdatasync", "osync"])
def test_concurrent_fsync_crash(rwimage, mode):
    """SIGKILL while 8 threads write and fsync their own files (half of
    them created before the last checkpoint, half after): each file comes
    back as it was at its last acknowledged fsync or at the one in flight."""
    img = rwimage(options=(NO_PERIODIC,), size=512 * MiB)
    p = img.mount()
    os.mkdir(os.path.join(p, "d"))
    for i in range(0, THREADS, 2):
        with open(os.path.join(p, "d", "f%d" % i), "wb") as f:
            f.write(b"old")
    img.unmount()                       # checkpointed: the even files exist in it
    p = img.mount()
    stop = threading.Event()
    ws = run_writers(p, mode, stop)
    deadline = time.monotonic() + 120
    while min(w.acked for w in ws) < WRAP + 4 and time.monotonic() < deadline:
        assert not any(w.error for w in ws), [w.error for w in ws]
        time.sleep(0.05)
    assert min(w.acked for w in ws) >= WRAP + 4, [w.acked for w in ws]
    img.crash()
    stop.set()
    for w in ws:
        w.join(timeout=60)
        assert not w.is_alive()
    # replies sent before the kill may arrive after it: count once all stopped
    acked = [w.acked for w in ws]

    p = img.mount()
    for i, w in enumerate(ws):
        with open(os.path.join(p, "d", "f%d" % i), "rb") as f:
            got = f.read()
        ok = [n for n in (acked[i], acked[i] + 1) if got == state(i, n)]
        assert ok, "f%d: %d bytes match no state at or after %d acknowledged writes" % (
            i, len(got), acked[i])
    img.finish()


def test_fsync_group_commit_counts(rwimage):
    """8 threads fsyncing their own files need fewer node commits (each one
    node write and one flush) than fsyncs, and the image stays clean."""
    img = rwimage(options=(NO_PERIODIC, "io_stats"), size=512 * MiB)
    p = img.mount()
    os.mkdir(os.path.join(p, "d"))
    img.unmount()                       # fsync of a file in a new folder checkpoints
    p = img.mount()
    stop = threading.Event()
    rounds = 30
    ws = run_writers(p, "fsync", stop, rounds=rounds)
    for w in ws:
        w.join(timeout=300)
        assert not w.is_alive()
        assert w.error is None and w.acked == rounds, (w.error, w.acked)
    m = img.unmount()
    out = m.stderr()
    g = re.search(r"fsync: (\d+) node commits for (\d+) requests, (\d+) node blocks", out)
    assert g, out
    commits, requests, blocks = map(int, g.groups())
    assert requests >= THREADS * rounds, out
    assert 0 < commits < requests, out
    assert blocks >= THREADS * rounds, out
    p = img.mount()
    for i in range(THREADS):
        with open(os.path.join(p, "d", "f%d" % i), "rb") as f:
            assert f.read() == state(i, rounds), i
    img.finish()


def test_fsync_checkpoints_merge(rwimage):
    """-o fsync_checkpoint: 8 threads fsyncing at once share checkpoints
    (a checkpoint that began after an fsync was called serves it); every
    acknowledged write survives SIGKILL without roll-forward."""
    img = rwimage(options=(NO_PERIODIC, "fsync_checkpoint", "io_stats"), size=512 * MiB)
    p = img.mount()
    os.mkdir(os.path.join(p, "d"))
    rounds = 12
    ws = run_writers(p, "fsync", threading.Event(), rounds=rounds)
    for w in ws:
        w.join(timeout=300)
        assert not w.is_alive()
        assert w.error is None and w.acked == rounds, (w.error, w.acked)
    m = img.unmount()
    out = m.stderr()
    cps = re.search(r"checkpoints (\d+);", out)
    merged = re.search(r"(\d+) checkpoint requests merged", out)
    assert cps and merged, out
    assert int(merged.group(1)) > 0, out
    assert int(cps.group(1)) + int(merged.group(1)) >= THREADS * rounds, out
    assert int(cps.group(1)) < THREADS * rounds, out

    p = img.mount()
    stop = threading.Event()
    ws = run_writers(p, "fsync", stop, rounds=2 * rounds)
    for w in ws:
        w.join(timeout=300)
        assert w.error is None and w.acked == 2 * rounds, (w.error, w.acked)
    m = img.crash()
    p = img.mount(ro=True)
    try:
        for i in range(THREADS):
            with open(os.path.join(p, "d", "f%d" % i), "rb") as f:
                assert f.read() == state(i, 2 * rounds), i
    finally:
        m = img.unmount()
    assert "recovery" not in m.stderr(), m.stderr()
    img.mount()
    img.finish()
