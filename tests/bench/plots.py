#!/usr/bin/env python3
"""PNG pictures of a benchmark run, for docs/benchmarks.md (Debian's
python3-matplotlib; the tables stay the reference, the pictures show them).

    plots.py RESULTS INFO OUTDIR     writes OUTDIR/bench-*.png, prints their names
    plots.py writeback RESULTS INFO OUTDIR
                                     make bench-writeback's bench-wb-*.png
    plots.py --precache JSON PNG     the picture of tests/bench/precache.py's run

- bench-ratios.png: every f2fs-fuse / peer row of the tables as a ratio bar,
  with the row's target marked (figures in different units side by side);
- bench-throughput.png: the throughput rows as grouped bars, f2fs-fuse beside
  each peer, in MiB/s;
- bench-w2-io-sizes.png: the seed job's device writes by request size, as a
  share of the count (what the seed patch reported) and, where the run
  recorded bytes per size, of the bytes;
- bench-wb-io-sizes.png (make bench-writeback): the seed's job on encrypted
  files, device writes by size as a share of the count and of the bytes, one
  bar per binary and serialize_io mode, image opened -o direct and buffered.
"""

import os
import statistics
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import benchutil  # noqa: E402

# (id, short label, f2fs-fuse key, peer key, peer, target or None); what
# benchutil's tables compare, in the same order.
RATIO_ROWS = [
    ("1", "seq read", "seq_f2fs", "seq_raw", "raw", 0.80),
    ("2", "4K rand read", "rr_f2fs", "rr_fuse2fs", "fuse2fs", 1.00),
    ("3", "find+stat", "meta_f2fs", "meta_fuse2fs", "fuse2fs", 1.00),
    ("4", "seq read", "seq_f2fs", "seq_fuse2fs", "fuse2fs", 1.00),
    ("W1a", "seq write", "wseq_f2fs", "wseq_ext4", "fuse2fs", 1.00),
    ("W1b", "seq write", "wseq_f2fs", "wseq_raw", "raw", 0.70),
    ("W2a", "8x1M O_SYNC", "seed_f2fs", "seed_ext4", "fuse2fs", 1.00),
    ("W2b", "8x1M O_SYNC", "seed_f2fs", "seed_raw", "raw", None),
    ("W3a", "4K write+fsync", "rwr_f2fs", "rwr_ext4", "fuse2fs", 1.00),
    ("W3b", "4K write+fsync", "rwr_f2fs", "rwr_raw", "raw", None),
    ("W4a", "create/stat/unlink", "meta_cycle_f2fs", "meta_cycle_ext4", "fuse2fs", 1.00),
    ("W4b", "create/stat/unlink", "meta_cycle_f2fs", "meta_cycle_raw", "raw", None),
    ("C2", "write, encrypted", "encw_enc", "encw_plain", "plain dir", 0.85),
    ("C3", "read, encrypted", "encr_enc", "encr_plain", "plain dir", 0.85),
]

# throughput rows (bytes/s): (label, [(who, key), ...])
THROUGHPUT = [
    ("seq read", [("f2fs-fuse", "seq_f2fs"), ("fuse2fs", "seq_fuse2fs"), ("raw", "seq_raw")]),
    ("seq write", [("f2fs-fuse", "wseq_f2fs"), ("fuse2fs", "wseq_ext4"), ("raw", "wseq_raw")]),
    ("8 x 1 MiB O_SYNC", [("f2fs-fuse", "seed_f2fs"), ("fuse2fs", "seed_ext4"),
                          ("raw", "seed_raw")]),
    ("encrypted write", [("f2fs-fuse", "encw_enc"), ("plain dir", "encw_plain")]),
    ("encrypted read", [("f2fs-fuse", "encr_enc"), ("plain dir", "encr_plain")]),
]

COLORS = {"f2fs-fuse": "#1f77b4", "fuse2fs": "#ff7f0e", "raw": "#7f7f7f", "plain dir": "#2ca02c"}


def median(res, key):
    vals = res.get(key)
    return statistics.median(vals) if vals else None


def plot_ratios(res, path):
    rows = []
    for rid, label, a, b, peer, target in RATIO_ROWS:
        va, vb = median(res, a), median(res, b)
        if va is not None and vb:
            rows.append(("%s %s\nvs %s" % (rid, label, peer), va / vb, target))
    if not rows:
        return False
    fig, ax = plt.subplots(figsize=(8, 0.45 * len(rows) + 1.2))
    y = range(len(rows))
    colors = ["#2ca02c" if t is None or r >= t else "#d62728" for _, r, t in rows]
    ax.barh(list(y), [r for _, r, _ in rows], color=colors, height=0.6)
    for i, (_, r, t) in enumerate(rows):
        ax.text(r, i, " %.2f" % r, va="center", fontsize=8)
        if t is not None:
            ax.plot([t, t], [i - 0.4, i + 0.4], color="black", linewidth=1.5)
    ax.set_yticks(list(y))
    ax.set_yticklabels([lbl for lbl, _, _ in rows], fontsize=7)
    ax.invert_yaxis()
    ax.axvline(1.0, color="#999999", linewidth=0.8, linestyle="--")
    ax.set_xlabel("f2fs-fuse / peer (medians; black tick = target; red = target missed)")
    ax.set_title("f2fs-fuse against its peers, same run, same disk", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def plot_throughput(res, path):
    groups = []
    for label, members in THROUGHPUT:
        vals = [(who, median(res, key)) for who, key in members]
        vals = [(who, v) for who, v in vals if v is not None]
        if vals:
            groups.append((label, vals))
    if not groups:
        return False
    fig, ax = plt.subplots(figsize=(8, 3.6))
    width = 0.26
    seen = set()
    for gi, (label, vals) in enumerate(groups):
        for vi, (who, v) in enumerate(vals):
            x = gi + (vi - (len(vals) - 1) / 2.0) * width
            mib = v / 1048576.0
            ax.bar(x, mib, width, color=COLORS.get(who, "#9467bd"),
                   label=who if who not in seen else None)
            seen.add(who)
            ax.text(x, mib, "%.0f" % mib, ha="center", va="bottom", fontsize=7)
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels([g for g, _ in groups], fontsize=8)
    ax.set_ylabel("MiB/s (median)")
    ax.set_title("Throughput", fontsize=10)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def plot_io_sizes(res, path):
    keys = [benchutil.io_bucket_key(b) for b in benchutil.IO_BUCKETS]
    counts = [median(res, "seed_f2fs_iow_" + k) for k in keys]
    if any(c is None for c in counts) or not sum(counts):
        return False
    byte_keys = ["seed_f2fs_iowb_" + k for k in keys]
    nbytes = [median(res, k) for k in byte_keys]
    have_bytes = all(v is not None for v in nbytes) and sum(nbytes) > 0
    fig, ax = plt.subplots(figsize=(8, 3.4))
    x = range(len(keys))
    total = float(sum(counts))
    width = 0.4 if have_bytes else 0.6
    ax.bar([i - (width / 2 if have_bytes else 0) for i in x],
           [100.0 * c / total for c in counts], width, label="share of writes (count)",
           color="#1f77b4")
    if have_bytes:
        tb = float(sum(nbytes))
        ax.bar([i + width / 2 for i in x], [100.0 * b / tb for b in nbytes], width,
               label="share of bytes", color="#ff7f0e")
    ax.set_xticks(list(x))
    ax.set_xticklabels(benchutil.IO_BUCKETS, fontsize=8)
    ax.set_xlabel("device write size")
    ax.set_ylabel("%")
    ax.set_title("8 jobs x 1 MiB O_SYNC writes: f2fs-fuse's writes to the image by size",
                 fontsize=10)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def plot_wb_io_sizes(res, info, path):
    keys = [benchutil.io_bucket_key(b) for b in benchutil.IO_BUCKETS]
    bins = benchutil.wb_binaries(info)
    panels = []
    for io, io_label in (("direct", "-o direct"), ("buf", "buffered")):
        series = []
        for name, modes in bins:
            for mode in modes:
                k = benchutil.wb_key("seed", name, "enc", mode, io)
                counts = [median(res, "%s_iow_%s" % (k, b)) for b in keys]
                nbytes = [median(res, "%s_iowb_%s" % (k, b)) for b in keys]
                if any(c is None for c in counts) or not sum(counts):
                    continue
                label = mode if len(bins) == 1 else "%s %s" % (name, mode)
                if mode == "default":
                    label = "%s (defaults)" % name
                have_b = all(v is not None for v in nbytes) and sum(nbytes) > 0
                series.append((label, [100.0 * c / sum(counts) for c in counts],
                               [100.0 * v / sum(nbytes) for v in nbytes] if have_b else None))
        if series:
            panels.append((io_label, series))
    if not panels:
        return False
    fig, axes = plt.subplots(len(panels), 2, figsize=(11, 3.2 * len(panels)), squeeze=False)
    palette = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
               "#7f7f7f", "#bcbd22"]
    for row, (io_label, series) in enumerate(panels):
        for col, what in ((0, "count"), (1, "bytes")):
            ax = axes[row][col]
            width = 0.8 / len(series)
            for si, (label, by_count, by_bytes) in enumerate(series):
                vals = by_count if col == 0 else by_bytes
                if vals is None:
                    continue
                xs = [i - 0.4 + width * (si + 0.5) for i in range(len(keys))]
                ax.bar(xs, vals, width, label=label, color=palette[si % len(palette)])
            ax.set_xticks(range(len(keys)))
            ax.set_xticklabels(benchutil.IO_BUCKETS, fontsize=7)
            ax.set_ylim(0, 100)
            ax.set_ylabel("% of device writes" if col == 0 else "% of bytes written", fontsize=8)
            ax.set_title("encrypted, image %s: by %s" % (io_label, what), fontsize=9)
            if row == 0 and col == 0:
                ax.legend(fontsize=7, title="serialize_io", title_fontsize=7)
    fig.suptitle("%s jobs x 1 MiB O_SYNC writes: f2fs-fuse's writes to the image by size"
                 % benchutil.one(info, "wb_jobs", "8"), fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def main_writeback(argv):
    res = benchutil.load_results(argv[0])
    info = benchutil.load_info(argv[1])
    outdir = argv[2]
    os.makedirs(outdir, exist_ok=True)
    path = os.path.join(outdir, "bench-wb-io-sizes.png")
    if plot_wb_io_sizes(res, info, path):
        print(os.path.basename(path))
    elif os.path.exists(path):
        os.remove(path)


def precache_png(results, out):
    """bench-precache.png: extent precache time per file size, node read-ahead off,
    on (default depth, and one request in flight), and the limit; medians with
    every run as a dot (tests/bench/precache.py)."""
    series = [("node_ra=0", "0", "#7f7f7f"), ("node_ra (default)", "default", "#1f77b4"),
              ("node_ra, depth 1", "depth1", "#2ca02c")]
    fig, ax = plt.subplots(figsize=(7, 4))
    x = list(range(len(results)))
    w = 0.2
    for k, (label, key, color) in enumerate(series):
        meds = [statistics.median(r["ms"] for r in res["runs"][key]) for res in results]
        ax.bar([i + (k - 1.5) * w for i in x], meds, w, label=label, color=color)
        for i, res in enumerate(results):
            ax.scatter([i + (k - 1.5) * w] * len(res["runs"][key]),
                       [r["ms"] for r in res["runs"][key]], s=6, color="black", zorder=3)
    lim = [statistics.median(res["limit"]["ms"]) for res in results]
    ax.bar([i + 1.5 * w for i in x], lim, w, label="limit (nodelimit)", color="#ff7f0e")
    ax.set_xticks(x)
    ax.set_xticklabels(["%d GiB" % res["gib"] for res in results])
    ax.set_ylabel("F2FS_IOC_PRECACHE_EXTENTS, cold (ms)")
    ax.set_yscale("log")
    ax.legend(fontsize=8)
    ax.set_title("Extent precache: node read-ahead off / on, and the limit")
    fig.tight_layout()
    fig.savefig(out, dpi=100)
    plt.close(fig)
    print(os.path.basename(out))


def main(argv):
    if len(argv) == 5 and argv[1] == "writeback":
        return main_writeback(argv[2:])
    if len(argv) == 4 and argv[1] == "--precache":
        import json
        with open(argv[2]) as f:
            precache_png(json.load(f), argv[3])
        return
    if len(argv) != 4:
        sys.exit(__doc__)
    res = benchutil.load_results(argv[1])
    outdir = argv[3]
    os.makedirs(outdir, exist_ok=True)
    for name, fn in (("bench-ratios.png", plot_ratios),
                     ("bench-throughput.png", plot_throughput),
                     ("bench-w2-io-sizes.png", plot_io_sizes)):
        path = os.path.join(outdir, name)
        if fn(res, path):
            print(name)
        elif os.path.exists(path):
            os.remove(path)      # never leave a picture of an older run


if __name__ == "__main__":
    main(sys.argv)

