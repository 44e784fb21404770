#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Which calls between core/ files run upward (docs/design.md, "core/, floor by floor").

    tests/layers.py [BUILD]      (make check-layers)

Reads the symbols of BUILD/core/*.o with nm: a symbol one object leaves
undefined and another defines is a call (or a reference) from the first
file to the second.  Prints every call that goes to a higher floor and every
call between two files of one floor; exits 1 if one runs upward that
docs/design.md does not name (ALLOWED), or if a core file is on no floor.
"""
import glob
import os
import subprocess
import sys

# ground floor first; keep in step with docs/design.md
FLOORS = [
    ["msg", "platform", "crc", "hash", "utf8", "lzorle"],
    ["dev", "cache", "extent_cache", "dcache", "pagecache"],
    ["nat", "segment", "dquot", "quota_tree"],
    ["node"],
    ["checkpoint"],
    ["inode"],
    ["xattr", "acl"],
    ["crypt"],
    ["data", "inline", "compress", "verity", "writeback"],
    ["dir", "quota"],
    ["gc", "recovery"],
    ["vfs", "namei", "file", "ioctl"],
    ["super"],
]


# the upward calls docs/design.md names, with the reason
ALLOWED = {
    ("inode", "f2fs_compress_check_inode", "compress"),
    ("inode", "f2fs_compress_drop_cache", "compress"),
    ("checkpoint", "f2fs_quota_sync", "quota"),
}


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    floor = {f: i for i, files in enumerate(FLOORS) for f in files}
    objs = sorted(glob.glob(os.path.join(build, "core", "*.o")))
    if not objs:
        print("layers.py: no objects in %s/core: build first" % build, file=sys.stderr)
        return 2
    defined, needed = {}, {}
    for obj in objs:
        name = os.path.basename(obj)[:-2]
        out = subprocess.run(["nm", obj], capture_output=True, text=True, check=True).stdout
        needed[name] = set()
        for line in out.splitlines():
            parts = line.split()
            if len(parts) == 3 and parts[1] in "TDBR":
                defined[parts[2]] = name
            elif len(parts) == 2 and parts[0] == "U":
                needed[name].add(parts[1])
    unplaced = sorted(set(needed) - set(floor))
    up, named, level = [], [], []
    for name, syms in needed.items():
        for sym in syms:
            to = defined.get(sym)
            if not to or to == name or name not in floor:
                continue
            if floor[to] > floor[name] and (name, sym, to) not in ALLOWED:
                up.append((name, sym, to))
            elif floor[to] > floor[name]:
                named.append((name, sym, to))
            elif floor[to] == floor[name]:
                level.append((name, sym, to))
    for name in unplaced:
        print("%s.c is on no floor: add it to tests/layers.py and docs/design.md" % name)
    for name, sym, to in sorted(level):
        print("same floor: %s.c -> %s (%s.c)" % (name, sym, to))
    for name, sym, to in sorted(named):
        print("named in docs/design.md: %s.c -> %s (%s.c)" % (name, sym, to))
    for name, sym, to in sorted(up, key=lambda c: (floor[c[0]], c)):
        print("UPWARD: %s.c (floor %d) -> %s (%s.c, floor %d)"
              % (name, floor[name], sym, to, floor[to]))
    print("%d upward call(s) besides the %d named, %d between files of one floor"
          % (len(up), len(named), len(level)))
    return 1 if up or unplaced else 0


if __name__ == "__main__":
    sys.exit(main())
