#!/usr/bin/env python3
"""Compressed files benchmark (make bench-compress, root).

A compressible file (text: the uncompressed files of /usr/share/doc and
/usr/share/common-licenses, concatenated and repeated to the size) and an
incompressible one (/dev/urandom), each written and read back per
algorithm (lz4, zstd, lzo, and plain: the same file not compressed), in
one run:

- write: the file copied into a fresh, empty image with 1 MiB write(2)s
  from a copy in /dev/shm, then fsync() (as dd bs=1M conv=fsync), on a
  mount with compress_extension=* and the algorithm (clusters of 4 blocks,
  the default);
- read: after an unmount and the host's caches dropped, a fresh read-only
  mount reads the file with 1 MiB read(2)s (cold: nothing in the daemon,
  the kernel's page cache of the file empty);
- both mounts open the image O_DIRECT (-o direct), so every byte of the
  file's blocks crosses the device; the daemon's CPU time (user + system,
  /proc/PID/stat) is taken over each phase and given per GiB of the file;
- blocks saved: F2FS_IOC_GET_COMPRESS_BLOCKS after the write.

Runs alternate (each run goes over every file and algorithm in turn) and
the tables give medians.  The first run checks every read against the
source (untimed).

    compress.py --build BUILD [--size-mib 1024] [--runs 3] [--algs lz4,zstd,lzo,plain]
                [--dir DIR] [--json OUT] [--png OUT] [--md OUT] [--label TEXT]
                [--write-kib 1024] [--kinds text,rand] [--opts writeback,...]

--write-kib sets the size of the write(2)s (4: an appender's 4 KiB pieces,
which with --opts writeback go through the page cache).

--md replaces the section "Compressed files (make bench-compress)" of OUT
(docs/benchmarks.md) with the run's tables.  Targets (issue 13, not
asserted): compressible lz4 read at least as fast as plain, lz4 write at
least 0.8x plain's speed.
"""

import argparse
import fcntl
import hashlib
import json
import os
import re
import shutil
import statistics
import struct
import subprocess
import sys
import time

from benchutil import Mount  # noqa: E402

MiB = 1 << 20
GiB = 1 << 30
F2FS_IOC_GET_COMPRESS_BLOCKS = 0x8008f511
FEATURES = "extra_attr,inode_checksum,compression"
SECTION = "## Compressed files (make bench-compress)"
SKIP_EXT = (".gz", ".xz", ".bz2", ".zst", ".png", ".jpg", ".gif", ".zip", ".svgz", ".pdf",
            ".ico", ".woff", ".woff2", ".ttf")


def log(*a):
    print(*a, file=sys.stderr, flush=True)




def drop_caches():
    subprocess.run(["sync"], check=True)
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write("3\n")


def make_text(path, size):
    """The text files of /usr/share/doc, concatenated in name order and
    repeated to size bytes."""
    roots = ["/usr/share/doc", "/usr/share/common-licenses"]
    files = []
    for root in roots:
        for d, _, names in os.walk(root):
            for n in names:
                p = os.path.join(d, n)
                if n.endswith(SKIP_EXT) or os.path.islink(p) or not os.path.isfile(p):
                    continue
                files.append(p)
    files.sort()
    chunk = bytearray()
    for p in files:
        try:
            with open(p, "rb") as f:
                b = f.read()
        except OSError:
            continue
        if b and b"\0" not in b[:4096]:
            chunk += b
    if not chunk:
        raise RuntimeError("no text under " + " ".join(roots))
    with open(path, "wb") as out:
        done = 0
        while done < size:
            n = min(len(chunk), size - done)
            out.write(chunk[:n])
            done += n


def make_rand(path, size):
    with open(path, "wb") as out:
        for _ in range(0, size, 64 * MiB):
            out.write(os.urandom(min(64 * MiB, size)))
        out.truncate(size)


def sha_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while True:
            b = f.read(4 * MiB)
            if not b:
                return h.hexdigest()
            h.update(b)


def mount_opts(args, alg):
    """An algorithm, "plain", or either with more options: lz4@compress_threads=1."""
    extra = args.opts.split(",") if args.opts else []
    if "@" in alg:
        alg, more = alg.split("@", 1)
        extra += more.split("+")
    if alg == "plain":
        return extra
    return ["compress_algorithm=" + alg, "compress_extension=*"] + extra


def fresh_image(image, size):
    if os.path.exists(image):
        os.unlink(image)
    with open(image, "wb") as f:
        f.truncate(size * 2 + 512 * MiB)
    subprocess.run(["mkfs.f2fs", "-q", "-f", "-O", FEATURES, image], check=True,
                   stdout=subprocess.DEVNULL)


def write_phase(args, image, src, alg):
    mnt = os.path.join(args.dir, "mnt")
    drop_caches()
    m = Mount(args.binary, image, mnt, ["rw", "direct"] + mount_opts(args, alg))
    try:
        path = os.path.join(mnt, "f")
        buf = bytearray(args.write_kib * 1024)
        with open(src, "rb", buffering=0) as s:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            try:
                c0 = m.cpu()
                t0 = time.perf_counter()
                while True:
                    n = s.readinto(buf)
                    if not n:
                        break
                    mv = memoryview(buf)[:n]
                    while mv:
                        mv = mv[os.write(fd, mv):]
                os.fsync(fd)
                t = time.perf_counter() - t0
                cpu = m.cpu() - c0
            finally:
                os.close(fd)
        saved = 0
        if not alg.startswith("plain"):
            fd = os.open(path, os.O_RDONLY)
            try:
                saved = struct.unpack("<Q", fcntl.ioctl(fd, F2FS_IOC_GET_COMPRESS_BLOCKS,
                                                        b"\0" * 8))[0]
            finally:
                os.close(fd)
    finally:
        m.close()
    return t, cpu, saved


def read_phase(args, image, size, alg, check=None):
    mnt = os.path.join(args.dir, "mnt")
    drop_caches()
    opts = [o for o in mount_opts(args, alg) if not o.startswith("compress_")
            or o.startswith("compress_threads")]
    m = Mount(args.binary, image, mnt, ["ro", "direct"] + opts)
    try:
        buf = bytearray(MiB)
        total = 0
        fd = os.open(os.path.join(mnt, "f"), os.O_RDONLY)
        try:
            c0 = m.cpu()
            t0 = time.perf_counter()
            while True:
                n = os.readv(fd, [buf])
                if not n:
                    break
                total += n
            t = time.perf_counter() - t0
            cpu = m.cpu() - c0
        finally:
            os.close(fd)
        if total != size:
            raise RuntimeError("read %d bytes of %d" % (total, size))
        if check and sha_file(os.path.join(mnt, "f")) != check:
            raise RuntimeError("the file read back differs from its source")
    finally:
        m.close()
    return t, cpu


def fsck(image):
    r = subprocess.run(["fsck.f2fs", "--dry-run", image], capture_output=True, text=True)
    if r.returncode:
        raise RuntimeError("fsck.f2fs: " + r.stdout[-2000:])


def mibs(size, t):
    return size / MiB / t


def run(args):
    size = args.size_mib * MiB
    os.makedirs(args.dir, exist_ok=True)
    srcdir = "/dev/shm/f2fs-bench-compress"
    os.makedirs(srcdir, exist_ok=True)
    srcs = {k: os.path.join(srcdir, k) for k in args.kinds}
    for kind, p in srcs.items():
        if not os.path.exists(p) or os.path.getsize(p) != size:
            log("making the %s source (%d MiB)" % (kind, args.size_mib))
            (make_text if kind == "text" else make_rand)(p, size)
    sums = {k: sha_file(p) for k, p in srcs.items()}
    image = os.path.join(args.dir, "c.f2fs")
    res = {}
    try:
        for r in range(args.runs):
            for kind in srcs:
                for alg in args.algs:
                    fresh_image(image, size)
                    wt, wcpu, saved = write_phase(args, image, srcs[kind], alg)
                    if r == 0:
                        fsck(image)
                    rt, rcpu = read_phase(args, image, size, alg, sums[kind] if r == 0 else None)
                    e = res.setdefault(kind, {}).setdefault(alg, {
                        "write_s": [], "write_cpu": [], "read_s": [], "read_cpu": [],
                        "saved": []})
                    e["write_s"].append(wt)
                    e["write_cpu"].append(wcpu)
                    e["read_s"].append(rt)
                    e["read_cpu"].append(rcpu)
                    e["saved"].append(saved)
                    log("run %d %s %-5s write %.2f s (cpu %.2f s) read %.2f s (cpu %.2f s) "
                        "saved %d" % (r + 1, kind, alg, wt, wcpu, rt, rcpu, saved))
    finally:
        if os.path.exists(image):
            os.unlink(image)
        if not args.keep_sources:
            shutil.rmtree(srcdir, ignore_errors=True)
    return res


def medians(res, size):
    """Per file and algorithm: MiB/s, CPU s per GiB, blocks saved, ratios to plain."""
    out = {}
    for kind, algs in res.items():
        for alg, e in algs.items():
            w = statistics.median(e["write_s"])
            rd = statistics.median(e["read_s"])
            out.setdefault(kind, {})[alg] = {
                "write_mibs": mibs(size, w), "read_mibs": mibs(size, rd),
                "write_cpu_per_gib": statistics.median(e["write_cpu"]) * GiB / size,
                "read_cpu_per_gib": statistics.median(e["read_cpu"]) * GiB / size,
                "saved": int(statistics.median(e["saved"])),
            }
        plain = out[kind].get("plain")
        for alg, m in out[kind].items():
            if plain:
                m["write_ratio"] = m["write_mibs"] / plain["write_mibs"]
                m["read_ratio"] = m["read_mibs"] / plain["read_mibs"]
    return out


def table(med, size, args, load):
    blocks = size // 4096
    lines = [
        SECTION,
        "",
        "`make bench-compress` (`tests/bench/compress.py`, `BENCH_COMPRESS_ARGS`).",
        "%s. %s; %d runs alternating over files and algorithms, medians; "
        "load average %s (1/5/15 min) before the run, %s after." % (
            args.label, "%d MiB files" % args.size_mib if size < GiB
            else "%d GiB files" % (size // GiB), args.runs, load[0], load[1]),
        "Each write goes to a fresh image (%s write(2)s from /dev/shm, then" % (
            "1 MiB" if args.write_kib == 1024 else "%d KiB" % args.write_kib),
        "fsync); each read is cold (host caches dropped, fresh read-only mount,",
        "1 MiB read(2)s); both mounts `-o direct`. Clusters of 4 blocks,",
        "`compress_extension=*`. Speed in MiB/s of the file, ratio to plain",
        "(the same file not compressed) in brackets; CPU is the daemon's user +",
        "system time per GiB of the file; blocks saved is",
        "F2FS_IOC_GET_COMPRESS_BLOCKS of %d." % blocks,
        "",
        "| file | algorithm | write MiB/s (x plain) | write CPU s/GiB | read MiB/s (x plain) "
        "| read CPU s/GiB | blocks saved |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for kind in med:
        for alg, m in med[kind].items():
            lines.append("| %s | %s | %.0f (%.2fx) | %.2f | %.0f (%.2fx) | %.2f | %s |" % (
                kind, alg, m["write_mibs"], m.get("write_ratio", 0), m["write_cpu_per_gib"],
                m["read_mibs"], m.get("read_ratio", 0), m["read_cpu_per_gib"],
                "-" if alg.startswith("plain") else "%d (%.0f%%)" % (m["saved"], 100 * m["saved"] / blocks)))
    lz4 = med.get("text", {}).get("lz4")
    if lz4 and "read_ratio" in lz4:
        lines += ["", "Targets (compressible lz4): read at least as fast as plain: %.2fx (%s); "
                  "write within 0.8x of plain: %.2fx (%s)." % (
                      lz4["read_ratio"], "met" if lz4["read_ratio"] >= 1 else "not met",
                      lz4["write_ratio"], "met" if lz4["write_ratio"] >= 0.8 else "not met")]
    if args.png:
        lines += ["", "![compressed files](%s)" % os.path.basename(args.png)]
    return "\n".join(lines) + "\n"


def write_md(path, text):
    """Replace (or append) the section in path."""
    with open(path) as f:
        doc = f.read()
    start = doc.find(SECTION)
    if start < 0:
        doc = doc.rstrip("\n") + "\n\n" + text
    else:
        nxt = re.search(r"^## ", doc[start + len(SECTION):], re.M)
        end = start + len(SECTION) + nxt.start() if nxt else len(doc)
        doc = doc[:start] + text + ("\n" + doc[end:] if nxt else "")
    with open(path, "w") as f:
        f.write(doc)


def plot(med, png, title):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    kinds = list(med)
    algs = list(next(iter(med.values())))
    fig, axes = plt.subplots(1, 3, figsize=(13, 4))
    for ax, (key, label) in zip(axes, [("write_mibs", "write MiB/s"), ("read_mibs", "read MiB/s"),
                                       ("read_cpu_per_gib", "CPU s/GiB (read, write)")]):
        w = 0.8 / len(algs)
        for i, alg in enumerate(algs):
            xs = [k + i * w for k in range(len(kinds))]
            color = "C%d" % i
            if key == "read_cpu_per_gib":
                ax.bar(xs, [med[k][alg]["write_cpu_per_gib"] for k in kinds], w * 0.5,
                       color=color, hatch="//", alpha=0.55, edgecolor="black", linewidth=0.3)
                ax.bar([x + w * 0.5 for x in xs], [med[k][alg][key] for k in kinds], w * 0.5,
                       color=color)
            else:
                ax.bar(xs, [med[k][alg][key] for k in kinds], w, label=alg, color=color)
        ax.set_xticks([k + 0.4 - w / 2 for k in range(len(kinds))])
        ax.set_xticklabels(kinds)
        ax.set_title(label)
    axes[0].legend(fontsize=8)
    axes[2].set_title("CPU s/GiB (hatched: write, solid: read)")
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    fig.savefig(png, dpi=90)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", required=True)
    ap.add_argument("--size-mib", type=int, default=1024)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--algs", default="lz4,zstd,lzo,plain")
    ap.add_argument("--dir", default="/var/tmp/f2fs-bench-compress")
    ap.add_argument("--json")
    ap.add_argument("--png")
    ap.add_argument("--md")
    ap.add_argument("--label", default="")
    ap.add_argument("--opts", default="", help="more mount options, for every mount")
    ap.add_argument("--write-kib", type=int, default=1024, help="size of the write(2)s")
    ap.add_argument("--kinds", default="text,rand", help="files: text (compressible), rand")
    ap.add_argument("--keep-sources", action="store_true")
    ap.add_argument("--replot", metavar="JSON", help="only draw --png from a run's --json")
    args = ap.parse_args()
    if args.replot:
        with open(args.replot) as f:
            saved = json.load(f)
        plot(saved["medians"], args.png, "compressed files, %s, load %s -> %s" % (
            args.label, saved["load"][0], saved["load"][1]))
        return
    args.binary = os.path.join(args.build, "f2fs-fuse")
    args.algs = args.algs.split(",")
    args.kinds = args.kinds.split(",")
    if args.write_kib < 1 or set(args.kinds) - {"text", "rand"}:
        ap.error("--write-kib must be positive, --kinds text and/or rand")
    if not args.label:
        args.label = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    load0 = "/".join(open("/proc/loadavg").read().split()[:3])
    res = run(args)
    load1 = "/".join(open("/proc/loadavg").read().split()[:3])
    size = args.size_mib * MiB
    med = medians(res, size)
    text = table(med, size, args, (load0, load1))
    print(text)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"runs": res, "medians": med, "size": size, "load": [load0, load1],
                   "label": args.label}, f, indent=1)
    if args.png:
        plot(med, args.png, "compressed files, %s, load %s -> %s" % (args.label, load0, load1))
    if args.md:
        write_md(args.md, text)


if __name__ == "__main__":
    main()
