#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Access a mounted (possibly corrupted) filesystem and report what happened.

usage: probe.py MOUNTPOINT CHECKS_JSON

CHECKS_JSON is a list of checks as written by make_corpus.py.  For each the
output has {"errno": N} when the access failed, else {"value": ...}: the
sha256 of the contents (read), sorted names (list, listxattr), the target
(readlink), the value in hex (getxattr), the first bytes in hex (read_head),
or null (stat).  Then the whole tree is walked (bounded: depth 64, 20000
entries, 64 MiB of file data), touching every entry with lstat, readdir,
read, readlink and listxattr/getxattr, and the number of entries and of
errors by errno is reported.  Runs in its own process so the caller can
time out a hung filesystem without hanging itself.
"""

import errno
import hashlib
import json
import os
import sys

MAX_DEPTH = 64
MAX_ENTRIES = 20000
MAX_BYTES = 64 << 20
MAX_FILE = 32 << 20
DETAIL = [None]


def do(op, path, check):
    if op == 'stat':
        os.lstat(path)
        return None
    if op == 'read':
        size_before = os.lstat(path).st_size
        h = hashlib.sha256()
        with open(path, 'rb') as f:
            total = 0
            while True:
                b = f.read(1 << 20)
                if not b:
                    break
                total += len(b)
                if total > MAX_FILE:
                    raise OSError(errno.EFBIG, 'file longer than %d bytes' % MAX_FILE)
                h.update(b)
        size = os.lstat(path).st_size
        if total != size_before:
            DETAIL[0] = 'read %d of %d bytes then EOF; st_size after the read: %d' % (
                total, size_before, size)
        return h.hexdigest()
    if op == 'precache':
        import fcntl
        fd = os.open(path, os.O_RDONLY)
        try:
            fcntl.ioctl(fd, 0xF50F)     # F2FS_IOC_PRECACHE_EXTENTS, _IO(0xf5, 15)
        finally:
            os.close(fd)
        return None
    if op == 'read_head':
        with open(path, 'rb') as f:
            return f.read(check['len']).hex()
    if op == 'list':
        return sorted(os.listdir(path))
    if op == 'readlink':
        return os.readlink(path)
    if op == 'listxattr':
        return sorted(os.listxattr(path, follow_symlinks=False))
    if op == 'getxattr':
        return os.getxattr(path, check['name'], follow_symlinks=False).hex()
    raise ValueError('unknown op %r' % op)


def walk(root):
    stats = {'entries': 0, 'bytes': 0, 'errors': {}}

    def fail(e):
        k = str(e.errno)
        stats['errors'][k] = stats['errors'].get(k, 0) + 1

    def visit(path, depth):
        if depth > MAX_DEPTH or stats['entries'] >= MAX_ENTRIES:
            return
        try:
            names = os.listdir(path)
        except OSError as e:
            fail(e)
            return
        for n in names:
            if stats['entries'] >= MAX_ENTRIES:
                return
            stats['entries'] += 1
            p = os.path.join(path, n)
            try:
                st = os.lstat(p)
            except OSError as e:
                fail(e)
                continue
            try:
                for x in os.listxattr(p, follow_symlinks=False):
                    os.getxattr(p, x, follow_symlinks=False)
            except OSError as e:
                fail(e)
            mode = st.st_mode & 0o170000
            try:
                if mode == 0o040000:
                    visit(p, depth + 1)
                elif mode == 0o120000:
                    os.readlink(p)
                elif mode == 0o100000 and stats['bytes'] < MAX_BYTES:
                    with open(p, 'rb') as f:
                        while stats['bytes'] < MAX_BYTES:
                            b = f.read(1 << 20)
                            if not b:
                                break
                            stats['bytes'] += len(b)
            except OSError as e:
                fail(e)

    visit(root, 0)
    try:
        os.statvfs(root)
    except OSError as e:
        fail(e)
    return stats


def main():
    mnt = sys.argv[1]
    checks = json.loads(sys.argv[2])
    results = []
    for c in checks:
        path = os.path.join(mnt, c['path']) if c['path'] else mnt
        DETAIL[0] = None
        try:
            results.append({'value': do(c['op'], path, c), 'detail': DETAIL[0]})
        except OSError as e:
            results.append({'errno': e.errno, 'strerror': e.strerror})
    out = {'checks': results, 'walk': walk(mnt)}
    json.dump(out, sys.stdout)
    return 0


if __name__ == '__main__':
    sys.exit(main())
