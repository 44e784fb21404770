"""Many readers at once through one mount: threads and processes reading
different files and the same files, with parallel directory listings; every
result checked against the source tree."""

import hashlib
import os
import random
import subprocess
import threading

import pytest

import fsutil
import manifest as M
import treegen

THREADS = 8
ROUNDS = 3


@pytest.fixture(scope="module")
def source(tmp_path_factory):
    base = tmp_path_factory.mktemp("concurrency")
    root = base / "tree"
    treegen.generate(root, seed=99, profile="full")
    w = M.walk(str(root))
    img = fsutil.make_image(base / "c.img", root, 512 << 20)
    files = {os.fsdecode(M.unescape(p)): e["content"]
             for p, e in w.manifest.entries.items() if e["type"] == "f"}
    dirs = {}
    for p, e in w.manifest.entries.items():
        if e["type"] == "d":
            rel = "" if p == "." else os.fsdecode(M.unescape(p))
            dirs[rel] = sorted(os.listdir(os.path.join(str(root), rel)))
    return str(root), img, files, dirs


def _run_threads(fns):
    errors = []
    lock = threading.Lock()

    def wrap(fn):
        try:
            fn()
        except BaseException as e:          # reported below
            with lock:
                errors.append("%s: %r" % (fn.__name__, e))

    ts = [threading.Thread(target=wrap, args=(fn,), daemon=True) for fn in fns]
    for t in ts:
        t.start()
    for t in ts:
        t.join(timeout=300)
        assert not t.is_alive(), "reader thread hung"
    return errors


def test_parallel_readers_threads(mount, source):
    _, img, files, dirs = source
    names = sorted(files)
    big = [n for n in names if n.startswith("sizes/big-")]
    assert big
    with mount(img) as m:
        def reader(seed):
            def fn():
                rng = random.Random(seed)
                for _ in range(ROUNDS):
                    order = names[:]
                    rng.shuffle(order)
                    for n in order[:400] + big:
                        got = M.sha256_file(os.path.join(m.path, n), chunk=rng.choice((4096, 65536, 1 << 20)))
                        assert got == files[n], n
            fn.__name__ = "reader-%d" % seed
            return fn

        def lister(seed):
            def fn():
                rng = random.Random(seed)
                keys = sorted(dirs)
                for _ in range(ROUNDS * 20):
                    d = rng.choice(keys + ["bigdir"] * 5)
                    got = sorted(os.listdir(os.path.join(m.path, d)))
                    assert got == dirs[d], d
            fn.__name__ = "lister-%d" % seed
            return fn

        errors = _run_threads([reader(i) for i in range(THREADS)] +
                              [lister(100 + i) for i in range(3)])
    assert errors == [], "\n".join(errors)


def test_same_file_shared_fd_preads(mount, source):
    """Threads pread() one descriptor of one big file at random offsets."""
    root, img, files, _ = source
    name = max((n for n in files if n.startswith("sizes/big-")),
               key=lambda n: os.path.getsize(os.path.join(root, n)))
    with open(os.path.join(root, name), "rb") as f:
        data = f.read()
    assert len(data) > 1 << 20
    with mount(img) as m:
        fd = os.open(os.path.join(m.path, name), os.O_RDONLY)
        try:
            def worker(seed):
                def fn():
                    rng = random.Random(seed)
                    for _ in range(300):
                        off = rng.randrange(0, len(data))
                        ln = rng.choice((1, 100, 4095, 4096, 4097, 131072, 300000))
                        assert os.pread(fd, ln, off) == data[off:off + ln], (off, ln)
                fn.__name__ = "pread-%d" % seed
                return fn
            errors = _run_threads([worker(i) for i in range(THREADS)])
        finally:
            os.close(fd)
    assert errors == [], "\n".join(errors)


def test_parallel_reader_processes(mount, source):
    """Separate processes (sha256sum) over the whole tree, split and overlapping."""
    _, img, files, _ = source
    names = sorted(files)
    with mount(img) as m:
        chunks = [names[i::4] for i in range(4)] + [names[::7], names[::7]]
        procs = []
        for i, chunk in enumerate(chunks):
            lst = os.path.join(os.path.dirname(m.path), "list-%d" % i)
            with open(lst, "wb") as f:
                f.write(b"\0".join(os.fsencode(n) for n in chunk) + b"\0")
            procs.append((chunk, subprocess.Popen(
                "xargs -0 sha256sum --zero -- < %s" % lst, shell=True, cwd=m.path,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE)))
        for chunk, p in procs:
            out, err = p.communicate(timeout=300)
            assert p.returncode == 0, err.decode(errors="replace")
            got = {}
            for rec in out.split(b"\0"):
                if rec:
                    digest, _, n = rec.partition(b"  ")
                    got[os.fsdecode(n)] = digest.decode()
            assert got == {n: files[n] for n in chunk}


def test_walk_while_reading(mount, source):
    """Full tree walks in parallel with big-file readers: same manifest each time."""
    root, img, files, _ = source
    exp = treegen.expected_manifest(M.walk(root))
    big = [n for n in files if n.startswith("sizes/big-")]
    with mount(img) as m:
        results = []

        def walker():
            results.append(M.compare(exp, M.walk(m.path).manifest))

        def reader():
            for _ in range(5):
                for n in big:
                    with open(os.path.join(m.path, n), "rb") as f:
                        assert hashlib.sha256(f.read()).hexdigest() == files[n]

        errors = _run_threads([walker, walker, walker, reader, reader])
    assert errors == [], "\n".join(errors)
    assert len(results) == 3
    for diffs in results:
        assert diffs == [], M.report(diffs)
