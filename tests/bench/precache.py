#!/usr/bin/env python3
"""Extent precache benchmark (make bench-precache), measured the way the
kernel's node read-ahead patch measured it.

For each size: an image with one file whose largest extent is 1 GiB at
offset 0 and whose remaining range is 100 MiB extents, made as the patch
made it (the file written whole, then every other 100 MiB range from 1 GiB
on overwritten with fresh data, then unmounted).  Then, in one run, cold
each time (a fresh read-only mount of the image opened O_DIRECT, -o direct):

- F2FS_IOC_PRECACHE_EXTENTS with node_ra=0 and with the default, five
  alternating runs each; the node blocks read and the device read requests
  each made (from -o io_stats, minus a mount that only opens the file);
- the limit: tests/bench/nodelimit reading exactly the same node blocks
  straight from the image, sorted and coalesced, O_DIRECT;
- the first cold sequential read of the whole file, without and with a
  precache before it (plain, precache, precache, plain: means of two).

    precache.py --build BUILD [--sizes 5,10,20] [--runs 5] [--dir DIR]
                [--json OUT] [--png OUT]

Sizes are GiB.  Prints the patch's table and ours; targets (not timed
assertions): reduction >= 80% at every size, precache <= 1.5x the limit,
cold sequential read after a precache no slower than without.
"""

import argparse
import fcntl
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

from benchutil import Mount  # noqa: E402

MiB = 1 << 20
GiB = 1 << 30
F2FS_IOC_PRECACHE_EXTENTS = 0xF50F


def log(*a):
    print(*a, file=sys.stderr, flush=True)



def stats(text):
    reads = int(re.search(r"reads (\d+) \((\d+) bytes\)", text).group(1))
    read_bytes = int(re.search(r"reads \d+ \((\d+) bytes\)", text).group(1))
    m = re.search(r"precache: (\d+) direct nodes; node read-ahead: (\d+) blocks in (\d+) "
                  r"requests", text)
    return {"reads": reads, "read_bytes": read_bytes, "precache_nodes": int(m.group(1)),
            "ra_blocks": int(m.group(2)), "ra_requests": int(m.group(3))}


def make_file(args, image, size):
    mnt = os.path.join(args.dir, "mnt-make")
    m = Mount(args.binary, image, mnt, ["rw"])
    path = os.path.join(mnt, "big")
    pat = os.urandom(64 * MiB)
    fresh = os.urandom(64 * MiB)
    t0 = time.time()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        for off in range(0, size, 64 * MiB):
            os.pwrite(fd, pat, off)
        os.fsync(fd)
        # every other 100 MiB range from 1 GiB on, as the patch's dd commands
        for mib in range(1024, size // MiB, 200):
            n = min(100, size // MiB - mib) * MiB
            done = 0
            while done < n:
                k = min(64 * MiB, n - done)
                os.pwrite(fd, fresh[:k], mib * MiB + done)
                done += k
        os.fsync(fd)
    finally:
        os.close(fd)
    ino = os.stat(path).st_ino
    m.close()
    log("  made %d GiB in %.0f s (inode %d)" % (size // GiB, time.time() - t0, ino))
    return ino


VARIANTS = {"0": ["node_ra=0"], "default": [], "depth1": ["node_ra_depth=1"]}


def timed_precache(args, image, variant, with_ioctl=True):
    opts = ["ro", "direct", "io_stats"] + VARIANTS[variant]
    mnt = os.path.join(args.dir, "mnt")
    m = Mount(args.binary, image, mnt, opts)
    ms = None
    try:
        fd = os.open(os.path.join(mnt, "big"), os.O_RDONLY)
        try:
            if with_ioctl:
                t0 = time.perf_counter()
                fcntl.ioctl(fd, F2FS_IOC_PRECACHE_EXTENTS)
                ms = (time.perf_counter() - t0) * 1e3
        finally:
            os.close(fd)
    finally:
        out = m.close()
    return ms, stats(out)


def seq_read(args, image, precache):
    mnt = os.path.join(args.dir, "mnt")
    m = Mount(args.binary, image, mnt, ["ro", "direct"])
    try:
        fd = os.open(os.path.join(mnt, "big"), os.O_RDONLY)
        try:
            pre = 0.0
            t0 = time.perf_counter()
            if precache:
                fcntl.ioctl(fd, F2FS_IOC_PRECACHE_EXTENTS)
                pre = time.perf_counter() - t0
            total = 0
            while True:
                b = os.read(fd, 4 * MiB)
                if not b:
                    break
                total += len(b)
            t = time.perf_counter() - t0
        finally:
            os.close(fd)
    finally:
        m.close()
    return {"s": t, "precache_s": pre, "bytes": total}


def bench_size(args, gib):
    size = gib * GiB
    image = os.path.join(args.dir, "precache-%d.img" % gib)
    with open(image, "wb") as f:
        f.truncate(size + size // 2 + 2 * GiB)
    subprocess.run(["mkfs.f2fs", "-f", "-q", image], check=True, stdout=subprocess.DEVNULL)
    ino = make_file(args, image, size)
    r = {"gib": gib, "runs": {v: [] for v in VARIANTS}}
    _, base = timed_precache(args, image, "default", with_ioctl=False)
    r["baseline"] = base
    for i in range(args.runs):
        for v in VARIANTS:
            ms, st = timed_precache(args, image, v)
            st["ms"] = ms
            st["dev_reads"] = st["reads"] - base["reads"]
            st["blocks_read"] = (st["read_bytes"] - base["read_bytes"]) // 4096
            r["runs"][v].append(st)
            log("  %d GiB run %d %s: %.1f ms, %d device reads, %d blocks" %
                (gib, i, v, ms, st["dev_reads"], st["blocks_read"]))
    out = subprocess.run([args.nodelimit, image, str(ino), str(args.runs)], check=True,
                         capture_output=True, text=True).stdout.split()
    r["limit"] = {"nodes": int(out[1]), "requests": int(out[3]),
                  "ms": [float(x) for x in out[5:]]}
    log("  limit: %s" % r["limit"])
    # plain, precache, precache, plain: a drift in the machine's load and what
    # the host caches of the image fall on both alike; each the mean of two
    seq = {False: [], True: []}
    for pre in (False, True, True, False):
        seq[pre].append(seq_read(args, image, pre))
        log("  seq read %s: %.2f s" % ("with precache" if pre else "plain", seq[pre][-1]["s"]))
    for pre, key in ((False, "seq_plain"), (True, "seq_precache")):
        r[key] = {"s": statistics.mean(x["s"] for x in seq[pre]),
                  "precache_s": statistics.mean(x["precache_s"] for x in seq[pre]),
                  "runs": seq[pre]}
    log("  seq read: %.2f s plain, %.2f s with precache (%.3f s of it)" %
        (r["seq_plain"]["s"], r["seq_precache"]["s"], r["seq_precache"]["precache_s"]))
    os.unlink(image)
    return r


def med(runs, key):
    return statistics.median(x[key] for x in runs)


def table(results):
    lines = ["Seed patch (SM8750 phone, kernel f2fs):", "",
             "| File size | Before | After | Reduction |", "|---|---|---|---|",
             "| 5GB | 101.8ms | 37.0ms | 72.1% |", "| 10GB | 222.9ms | 56.0ms | 74.9% |",
             "| 20GB | 446.2ms | 116.4ms | 73.9% |", "",
             "f2fs-fuse (medians of %d cold runs each, node_ra=0 vs the default):" %
             len(results[0]["runs"]["0"]), "",
             "| File size | Before | After | Reduction | After, 1 request in flight | "
             "Limit | After / limit | "
             "Node blocks read (before / after / limit) | Device reads (before / after / "
             "limit) | Cold seq read, plain / after precache (precache incl.), means of 2 |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        b, a = med(r["runs"]["0"], "ms"), med(r["runs"]["default"], "ms")
        lim = statistics.median(r["limit"]["ms"])
        d1 = med(r["runs"]["depth1"], "ms")
        lines.append("| %dGB | %.1fms | %.1fms | %.1f%% | %.1fms | %.1fms | %.2fx | %d / %d / %d | "
                     "%d / %d / %d | %.2fs / %.2fs (%.3fs) |" % (
                         r["gib"], b, a, 100 * (1 - a / b), d1, lim, a / lim,
                         med(r["runs"]["0"], "blocks_read"),
                         med(r["runs"]["default"], "blocks_read"), r["limit"]["nodes"],
                         med(r["runs"]["0"], "dev_reads"),
                         med(r["runs"]["default"], "dev_reads"), r["limit"]["requests"],
                         r["seq_plain"]["s"], r["seq_precache"]["s"],
                         r["seq_precache"]["precache_s"]))
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--sizes", default="5,10,20")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--dir", default="/var/tmp/f2fs-fuse-bench-precache")
    ap.add_argument("--json", default=None)
    ap.add_argument("--png", default=None)
    args = ap.parse_args()
    args.binary = os.path.join(args.build, "f2fs-fuse")
    args.nodelimit = os.path.join(args.build, "tests", "bench", "nodelimit")
    os.makedirs(args.dir, exist_ok=True)
    sizes = [int(s) for s in args.sizes.split(",")]
    need = (max(sizes) * 3 // 2 + 2) * GiB
    free = shutil.disk_usage(args.dir).free
    if free < need:
        sys.exit("precache.py: %s has %.1f GiB free, %d GiB sizes need %.1f GiB" %
                 (args.dir, free / GiB, max(sizes), need / GiB))
    results = []
    for gib in sizes:
        log("== %d GiB" % gib)
        results.append(bench_size(args, gib))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    if args.png and args.json:
        # plots.py needs Debian's python3-matplotlib, which another python3 may lack
        subprocess.run(["/usr/bin/python3", os.path.join(os.path.dirname(
            os.path.abspath(__file__)), "plots.py"), "--precache", args.json, args.png])
    print(table(results))


if __name__ == "__main__":
    main()
