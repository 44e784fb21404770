#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Print (name, hash_code) pairs read from dentries of f2fs images, as a C
table for test_hash.c.  The hash values are the ones stored on disk by the
writer of each image (the Linux kernel for the fixture, f2fs-tools' sload.f2fs
for a generated image), read with the independent parser in
tests/corrupt/f2fsimg.py.

usage: gen_hash_vectors.py IMAGE [max names per length]
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'corrupt'))
import f2fsimg  # noqa: E402


def c_string(b):
    out = []
    for c in b:
        if 0x20 <= c < 0x7f and c not in (0x22, 0x5c, 0x3f):
            out.append(chr(c))
        else:
            out.append('\\%03o' % c)
    return '"' + ''.join(out) + '"'


def main():
    img = f2fsimg.Image(open(sys.argv[1], 'rb').read())
    per_len = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
    seen = {}

    def visit(ino, depth):
        for e in img.readdir(ino):
            name, cino, h = e[1], e[2], e[3]
            seen.setdefault(name, h)
            if name in (b'.', b'..') or depth > 60:
                continue
            c = img.inode(cino)
            if c.is_dir():
                visit(c, depth + 1)

    visit(img.inode(img.root_ino), 0)
    count = {}
    for name in sorted(seen, key=lambda n: (len(n), n)):
        odd = any(c >= 0x80 or c < 0x20 or c in b' \\' for c in name)
        if count.get(len(name), 0) >= per_len and not odd:
            continue
        count[len(name)] = count.get(len(name), 0) + 1
        print('\t{ %s, %d, 0x%08x },' % (c_string(name), len(name), seen[name]))


if __name__ == '__main__':
    main()
