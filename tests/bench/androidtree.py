#!/usr/bin/env python3
"""An Android-like userdata tree for tests/bench/meta.sh.

  androidtree.py DIR NFILES [SEED]

Apps under data/data/<package>/ with the directories apps keep (cache,
code_cache, files, databases, shared_prefs, no_backup), nested a few
levels deeper under files/ and cache/, and media under media/0/ with
DCIM, Download, Android/data/<package>/files; file sizes drawn from a
small-file mix (half of them under 1 KiB, one in two hundred up to 1 MiB).
The same NFILES and SEED always give the same names and sizes, so every
file system gets the same tree.  Prints the bytes written.
"""
import os
import random
import sys

# (share of files, smallest, largest size in bytes)
SIZES = [(0.50, 0, 1024), (0.30, 1024, 8192), (0.15, 8192, 32768),
         (0.045, 32768, 131072), (0.005, 131072, 1 << 20)]
APP_DIRS = ["cache", "code_cache", "files", "databases", "shared_prefs", "no_backup"]
WORDS = ["com", "android", "google", "app", "media", "provider", "chrome", "gms", "vending",
         "launcher", "settings", "camera", "gallery", "music", "mail", "maps", "photos"]


def size_of(rng):
    x = rng.random()
    for share, lo, hi in SIZES:
        if x < share:
            return rng.randint(lo, hi)
        x -= share
    return 0


def package(rng, i):
    return ".".join([rng.choice(WORDS) for _ in range(rng.randint(2, 4))] + ["p%d" % i])


def build(top, nfiles, seed):
    rng = random.Random(seed)
    dirs = []
    napps = max(1, nfiles // 500)
    for a in range(napps):
        base = os.path.join(top, "data", "data", package(rng, a))
        for d in APP_DIRS:
            dirs.append(os.path.join(base, d))
        # deeper trees where apps keep most of their files
        for d in ("files", "cache"):
            for k in range(rng.randint(1, 6)):
                path = os.path.join(base, d)
                for level in range(rng.randint(1, 5)):
                    path = os.path.join(path, "%s%d_%d" % (rng.choice(WORDS), k, level))
                    dirs.append(path)
        dirs.append(os.path.join(top, "media", "0", "Android", "data", package(rng, a), "files"))
    for d in ("DCIM/Camera", "Download", "Pictures/Screenshots", "Music", "Documents"):
        dirs.append(os.path.join(top, "media", "0", d))
    for d in dirs:
        os.makedirs(d, exist_ok=True)
    buf = bytes(rng.getrandbits(8) for _ in range(4096)) * 256   # 1 MiB, half-compressible
    total = 0
    for i in range(nfiles):
        d = dirs[min(int(rng.paretovariate(1.2)) - 1, len(dirs) - 1) if rng.random() < 0.3
                 else rng.randrange(len(dirs))]
        name = "%s_%d.%s" % (rng.choice(WORDS), i, rng.choice(["db", "xml", "jpg", "dat", "so",
                                                               "json", "tmp", "odex"]))
        n = size_of(rng)
        fd = os.open(os.path.join(d, name), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o660)
        try:
            off = 0
            while off < n:
                off += os.write(fd, buf[:min(n - off, len(buf))])
        finally:
            os.close(fd)
        total += n
    return total


def main():
    top, nfiles = sys.argv[1], int(sys.argv[2])
    seed = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    print(build(top, nfiles, seed))


if __name__ == "__main__":
    main()
