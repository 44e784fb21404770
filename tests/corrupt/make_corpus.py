#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Write a corpus of deliberately corrupted f2fs images.

usage: make_corpus.py OUTDIR [--only NAME[,NAME...]] [--images] [--bases-only]

Two base images are made with mkfs.f2fs + sload.f2fs from trees generated
here (each checked with fsck.f2fs), then each variant applies one targeted
corruption, located by parsing the image with the independent parser in
f2fsimg.py, and recomputes the checksums that protect the corrupted field
when the point is to reach the check behind them (e.g. the inode checksum
after changing i_extra_isize).  OUTDIR gets the two base images and
corpus.json, which lists every variant:

  name, base, structure, description, patch (the changed 4 KiB blocks:
  [[block number, hex]]; apply_patch() makes the image), image (only with
  --images, which also writes every variant as a sparse image file),
  expect: {"mount": "refused", "keywords": [...]}       the mount must fail and
                                                        its message name one keyword
       or {"mount": "ok", "checks": [CHECK...]}
  CHECK:  {"op": "stat"|"read"|"list"|"readlink"|"listxattr"|"getxattr"|"read_head",
           "path": "a/b", "result": "error", "errnos": [5, 117]}
       or the op with "result": "ok" and what it must return:
           read -> "sha256", list -> "names" (without . and ..), readlink -> "target",
           listxattr -> "names", getxattr -> "name" + "value_hex"
       or "result": "any": success or one of "errnos"; for read_head ("prefix_hex",
           "len") success means the first len bytes start with the prefix and are
           zero after it.  "any" checks are there to prove the access terminates.

Expected results of "ok" checks are computed with f2fsimg.py from the
corrupted image or the source tree, never from the driver under test.

Base images (sizes are what mkfs.f2fs 1.15 and sload need):
  A: 128 MiB, -O extra_attr,inode_checksum,inode_crtime,sb_checksum.  The tree has
     inline files, a 200 KiB file (i_addr only), a 6 MiB file (direct nodes), a 13 MiB
     file (indirect node), symlinks, "many/" with 600 entries (two hash levels of dentry
     blocks), "sub/" (converted to an inline-dentry directory by some variants: sload.f2fs
     1.15 never writes inline dentries).  No flexible_inline_xattr here: sload.f2fs 1.15
     lays out files larger than 867 blocks as if there were no inline xattr area and then
     sets i_inline_xattr_size to 50, which shifts their blocks from 867 on.
  B: 64 MiB, A's features + flexible_inline_xattr, small files only: for
     i_inline_xattr_size and for inline xattrs written by hand (sload.f2fs 1.15 copies no
     xattrs).
  C: 64 MiB, A's features + compression, with compressed files made by hand: Debian's
     sload.f2fs 1.15 is built without its compressors, so compress_base() turns the
     clusters of two loaded files into lz4-compressed clusters as the kernel lays them
     out (COMPRESS_ADDR, the compressed block, NEW_ADDR reservations; i_compr_blocks;
     one file with compress_chksum), encoding with the small LZ4 block encoder below,
     and fsck.f2fs -y then drops the blocks the clusters no longer use from the SIT.
     fsck.f2fs must find the result clean.
"""

import hashlib
import json
import os
import random
import shutil
import struct
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import f2fsimg as F  # noqa: E402
from f2fsimg import p16, p32, p64, u16, u32  # noqa: E402

EIO, EBADMSG, EUCLEAN = 5, 74, 117
ERR = [EIO, EUCLEAN]
ERR_CSUM = [EIO, EBADMSG, EUCLEAN]   # a checksum mismatch may surface as EBADMSG (EFSBADCRC)

FEATURES_A = 'extra_attr,inode_checksum,inode_crtime,sb_checksum'
FEATURES_B = 'extra_attr,inode_checksum,flexible_inline_xattr,inode_crtime,sb_checksum'
UUID = '6f2a1c3e-5b7d-4e8f-9a0b-1c2d3e4f5a6b'
TIMESTAMP = '1700000000'


def pattern(n, seed):
    """Deterministic pseudo-random file contents."""
    return random.Random(seed).randbytes(n)


def write(path, data):
    with open(path, 'wb') as f:
        f.write(data)


CONTENT_A = {
    'hello': lambda: b'hello world\n',
    'small': lambda: pattern(3000, 1),
    'medium': lambda: pattern(200 * 1024 + 17, 2),
    'big': lambda: pattern(6 * 1024 * 1024 + 5, 3),
    'huge': lambda: pattern(13 * 1024 * 1024 + 9, 4),
}
# sha256 and crc32 of the source files, for checks on files whose mapping is corrupted
ORIG = {}
ORIG_CRC = {}


def tree_a(root):
    for name, gen in CONTENT_A.items():
        data = gen()
        ORIG[name] = hashlib.sha256(data).hexdigest()
        ORIG_CRC[name] = F.crc32_f2fs(0xFFFFFFFF, data)
        write(os.path.join(root, name), data)
    write(os.path.join(root, 'empty'), b'')
    os.symlink('hello', os.path.join(root, 'link'))
    os.symlink('t' * 3000, os.path.join(root, 'longlink'))
    os.mkdir(os.path.join(root, 'many'))
    for i in range(600):
        write(os.path.join(root, 'many', 'f%04d' % i), b'%d\n' % i)
    os.mkdir(os.path.join(root, 'sub'))
    write(os.path.join(root, 'sub', 'a'), b'aaa\n')
    write(os.path.join(root, 'sub', 'bb'), b'bbbb\n')
    os.mkdir(os.path.join(root, 'sub', 'inner'))
    write(os.path.join(root, 'sub', 'inner', 'c'), b'c\n')


FEATURES_C = 'extra_attr,inode_checksum,inode_crtime,sb_checksum,compression'
# text compresses to one block per 4-block cluster; the last cluster of each file
# stays raw (the kernel leaves a cluster raw when compressing saves nothing)
COMPR_FILES = {'c-lz4': 0, 'c-chk': 1}     # name -> i_compress_flag (1: compress_chksum)
COMPR_LOG = 2
COMPR_CLUSTERS = 4                          # 3 compressed + 1 raw


def text(n, seed):
    words = [b'the', b'quick', b'brown', b'fox', b'jumps', b'over', b'lazy', b'dog', b'f2fs']
    r = random.Random(seed)
    out = bytearray()
    while len(out) < n:
        out += b'%06d ' % len(out) + b' '.join(words[r.randrange(3):]) + b'\n'
    return bytes(out[:n])


def tree_c(root):
    for name in COMPR_FILES:
        data = text(COMPR_CLUSTERS * (4096 << COMPR_LOG), sum(name.encode()))
        write(os.path.join(root, name), data)
    write(os.path.join(root, 'plain'), pattern(20000, 9))
    for name in list(COMPR_FILES) + ['plain']:
        with open(os.path.join(root, name), 'rb') as f:
            data = f.read()
        ORIG[name] = hashlib.sha256(data).hexdigest()
        ORIG_CRC[name] = F.crc32_f2fs(0xFFFFFFFF, data)


def lz4_block(data):
    """A greedy LZ4 block-format encoder: literals and matches with liblz4's end
    rules (no match starts in the last 12 bytes, the last 5 are literals)."""
    n, out, table = len(data), bytearray(), {}
    anchor = i = 0

    def length(v):
        while v >= 255:
            out.append(255)
            v -= 255
        out.append(v)

    def sequence(lits, off=None, mlen=0):
        token = min(len(lits), 15) << 4 | (min(mlen - 4, 15) if off else 0)
        out.append(token)
        if len(lits) >= 15:
            length(len(lits) - 15)
        out.extend(lits)
        if off:
            out.extend(struct.pack('<H', off))
            if mlen - 4 >= 15:
                length(mlen - 4 - 15)

    while i <= n - 12:
        key = data[i:i + 4]
        j = table.get(key)
        table[key] = i
        if j is None or i - j > 65535:
            i += 1
            continue
        m = 4
        while i + m < n - 5 and data[j + m] == data[i + m]:
            m += 1
        sequence(data[anchor:i], i - j, m)
        i += m
        anchor = i
    sequence(data[anchor:])
    return bytes(out)


I_COMPR_BLOCKS, I_COMPRESS_ALGORITHM, I_LOG_CLUSTER_SIZE, I_COMPRESS_FLAG = 384, 392, 393, 394
COMPRESS_ADDR, NEW_ADDR = 0xFFFFFFFE, 0xFFFFFFFF


def compress_base(path):
    """Turn the files of COMPR_FILES into compressed files (see the docstring: base C)."""
    with open(path, 'rb') as f:
        img = F.Image(f.read())
    cs = 1 << COMPR_LOG
    for name, flag in COMPR_FILES.items():
        ino = img.lookup_path(name)
        assert ino.extra_isize * 1 + F.I_ADDR >= I_COMPRESS_FLAG + 2, 'no room for compression'
        b = img.buf
        data = img.read_file(ino)
        for c in range(COMPR_CLUSTERS - 1):
            raw = data[c * cs * F.BLK:(c + 1) * cs * F.BLK]
            z = lz4_block(raw)
            assert 24 + len(z) <= F.BLK, len(z)
            chk = F.chksum(z) if flag & 1 else 0
            blk = ino.addr(c * cs + 1)
            b[blk * F.BLK:(blk + 1) * F.BLK] = (struct.pack('<II16x', len(z), chk) + z).ljust(
                F.BLK, b'\0')
            p32(b, ino.addr_off(c * cs), COMPRESS_ADDR)
            for k in range(2, cs):
                p32(b, ino.addr_off(c * cs + k), NEW_ADDR)
        p32(b, ino.off + 80, F.u32(b, ino.off + 80) | 0x4)           # F2FS_COMPR_FL
        p64(b, ino.off + I_COMPR_BLOCKS, (COMPR_CLUSTERS - 1) * (cs - 1))
        b[ino.off + I_COMPRESS_ALGORITHM] = 1                        # lz4
        b[ino.off + I_LOG_CLUSTER_SIZE] = COMPR_LOG
        p16(b, ino.off + I_COMPRESS_FLAG, flag)
        b[ino.off + 348:ino.off + 360] = bytes(12)                   # no largest extent
        refix_inode(img, ino)
    with open(path, 'r+b') as f:
        f.write(img.buf)
    run(['fsck.f2fs', '-f', '-y', path])
    r = run(['fsck.f2fs', '-f', path])
    if r.returncode or b'[Fail]' in r.stdout:
        raise SystemExit('fsck.f2fs rejects compressed base image %s:\n%s'
                         % (path, r.stdout.decode(errors='replace')))


def tree_b(root):
    write(os.path.join(root, 'hello'), b'hello world\n')
    write(os.path.join(root, 'x'), b'')
    write(os.path.join(root, 'y'), b'why\n')
    os.mkdir(os.path.join(root, 'sub'))
    write(os.path.join(root, 'sub', 'a'), b'aaa\n')


def run(cmd):
    return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          stdin=subprocess.DEVNULL, timeout=300)


def make_base(path, size_mb, features, fill):
    src = tempfile.mkdtemp(prefix='f2fs-corpus-tree-')
    try:
        fill(src)
        with open(path, 'wb') as f:
            f.truncate(size_mb << 20)
        r = run(['mkfs.f2fs', '-f', '-q', '-O', features, '-U', UUID, '-T', TIMESTAMP, path])
        if r.returncode:
            raise SystemExit('mkfs.f2fs failed:\n' + r.stdout.decode(errors='replace'))
        # sload.f2fs 1.15 may exit nonzero after a good load: fsck decides
        run(['sload.f2fs', '-f', src, '-T', TIMESTAMP, path])
        r = run(['fsck.f2fs', path])
        if r.returncode:
            raise SystemExit('fsck.f2fs rejects base image %s:\n%s'
                             % (path, r.stdout.decode(errors='replace')))
        return src
    except BaseException:
        shutil.rmtree(src, ignore_errors=True)
        raise


# ------------------------------------------------------------------ helpers

def sb_off(copy):
    return copy * F.BLK + F.SB_OFF


def valid_packs(img):
    return [p for p in (1, 2) if img.pack_info(p)]


def ok_listing(img, path):
    d = img.lookup_path(path)
    return sorted(e[1].decode('utf-8', 'surrogateescape') for e in img.readdir(d)
                  if e[1] not in (b'.', b'..'))


def sha(data):
    return hashlib.sha256(data).hexdigest()


def err(op, path, errnos=ERR, **kw):
    c = {'op': op, 'path': path, 'result': 'error', 'errnos': errnos}
    c.update(kw)
    return c


def ok(op, path, **kw):
    c = {'op': op, 'path': path, 'result': 'ok'}
    c.update(kw)
    return c


def any_(op, path, errnos=ERR, **kw):
    c = {'op': op, 'path': path, 'result': 'any', 'errnos': errnos}
    c.update(kw)
    return c


def ok_read(img, path):
    data = img.read_file(img.lookup_path(path))
    return ok('read', path, sha256=sha(data), crc32=F.crc32_f2fs(0xFFFFFFFF, data))


def ok_list(img, path):
    return ok('list', path, names=ok_listing(img, path))


def refused(*keywords):
    return {'mount': 'refused', 'keywords': list(keywords)}


def mounts(*checks):
    return {'mount': 'ok', 'checks': list(checks)}


def set_inode_field(img, path, off, fmt, value, fix=True):
    ino = img.lookup_path(path)
    struct.pack_into(fmt, img.buf, ino.off + off, value)
    if fix:
        img.fix_inode_checksum(F.Inode(img, ino.nid, ino.blkaddr))
    return ino


def refix_inode(img, ino):
    img.fix_inode_checksum(F.Inode(img, ino.nid, ino.blkaddr))


def no_extent(img, path):
    """Clear a file's on-disk largest extent (i_ext), so that reads must go through
    i_addr and the node tree: with a valid extent the kernel, and a driver with an
    extent cache, never look at the corrupted address."""
    ino = img.lookup_path(path)
    img.buf[ino.off + 348:ino.off + 360] = bytes(12)
    refix_inode(img, ino)
    return F.Inode(img, ino.nid, ino.blkaddr)


def make_inline_dir(img, path):
    """Turn a small directory's dentry block into inline dentries, as the kernel lays
    them out (dots included), and drop the block from the inode."""
    d = img.lookup_path(path)
    ents = img.readdir(d)
    b = img.buf
    # the inode keeps its extra attrs; INLINE_XATTR gives the default 50-word area
    b[d.off + 3] |= F.INLINE_DENTRY
    if not img.feature & F.F_FLEX_INLINE_XATTR:
        b[d.off + 3] |= F.INLINE_XATTR
    nd = F.Inode(img, d.nid, d.blkaddr)
    start = nd.addr_off(0)
    end = nd.off + F.I_ADDR + 4 * F.ADDRS_PER_INODE
    b[start:end] = bytes(end - start)
    area = img.inline_area(nd)
    slot = 0
    for _, name, cino, h, ftype, _de, *_ in ents:
        nslots = (len(name) + 7) // 8
        F.set_bit_le(b, area['bitmap'], slot)
        struct.pack_into('<IIHB', b, area['dentry'] + F.DE_SIZE * slot, h, cino, len(name), ftype)
        b[area['filename'] + 8 * slot:area['filename'] + 8 * slot + len(name)] = name
        slot += nslots
    assert slot <= area['max']
    p64(b, nd.off + 16, nd.max_inline_data())          # i_size as the kernel sets it
    p64(b, nd.off + 24, max(1, F.u64(b, nd.off + 24) - 1))  # i_blocks: one block less
    p32(b, nd.off + 72, 0)                              # i_current_depth
    refix_inode(img, nd)
    return F.Inode(img, d.nid, d.blkaddr)


def write_inline_xattrs(img, path, entries, terminate=True, header=True):
    """Write raw xattr entries [(index, name, value)] into a file's inline xattr area."""
    ino = img.lookup_path(path)
    assert ino.inline & F.INLINE_XATTR and ino.inline_xattr_addrs
    o = ino.inline_xattr_off()
    size = 4 * ino.inline_xattr_addrs
    area = bytearray(size)
    pos = 0
    if header:
        struct.pack_into('<II', area, 0, F.XATTR_MAGIC, 1)
        pos = 24
    for idx, name, value, *raw in entries:
        nlen = raw[0] if raw else len(name)
        vlen = raw[1] if raw else len(value)
        struct.pack_into('<BBH', area, pos, idx, nlen & 0xFF, vlen & 0xFFFF)
        body = name + value
        area[pos + 4:pos + 4 + len(body)] = body[:size - pos - 4]
        pos += (4 + len(body) + 3) & ~3
    filled = 0
    if not terminate:
        # fill the rest with 8-byte entries "user.z" = "" up to the very end, so the
        # list has no zero end marker inside the area
        while pos + 8 <= size:
            struct.pack_into('<BBH', area, pos, 1, 1, 0)
            area[pos + 4:pos + 8] = b'z\0\0\0'
            pos += 8
            filled += 1
        assert pos == size
    img.buf[o:o + size] = area[:size]
    refix_inode(img, ino)
    return filled


def first_real_dentry(img, dirpath, name=None):
    d = img.lookup_path(dirpath)
    for e in img.readdir(d):
        if e[1] in (b'.', b'..'):
            continue
        if name is None or e[1] == name.encode():
            return e
    raise F.F2fsError('no dentry in %s' % dirpath)


# ------------------------------------------------------------------ variants

VARIANTS = []


def variant(name, base, structure, desc):
    def deco(fn):
        VARIANTS.append((name, base, structure, desc, fn))
        return fn
    return deco


# ---- superblock ----

@variant('sb_magic_both', 'A', 'superblock', 'magic zeroed in both superblock copies')
def _(img):
    for c in (0, 1):
        p32(img.buf, sb_off(c), 0)
    return refused('superblock')


@variant('sb_magic_first', 'A', 'superblock',
         'magic zeroed in the first copy only: the backup must be used')
def _(img):
    p32(img.buf, sb_off(0), 0xDEADBEEF)
    return mounts(ok_read(img, 'hello'), ok_list(img, 'many'))


@variant('sb_crc_both', 'A', 'superblock', 'a volume-name byte changed, sb crc left stale')
def _(img):
    for c in (0, 1):
        img.buf[sb_off(c) + 124] ^= 0x41
    return refused('superblock')


@variant('sb_log_blocksize', 'A', 'superblock', 'log_blocksize 13 (8 KiB), crc fixed')
def _(img):
    for c in (0, 1):
        p32(img.buf, sb_off(c) + 16, 13)
        img.fix_sb_crc(c)
    return refused('superblock')


@variant('sb_segment_count_main', 'A', 'superblock',
         'segment_count_main larger than segment_count, crc fixed')
def _(img):
    for c in (0, 1):
        o = sb_off(c) + 68
        p32(img.buf, o, u32(img.buf, o) + 1000)
        img.fix_sb_crc(c)
    return refused('superblock')


@variant('sb_segment_count_nat_zero', 'A', 'superblock', 'segment_count_nat 0, crc fixed')
def _(img):
    for c in (0, 1):
        p32(img.buf, sb_off(c) + 60, 0)
        img.fix_sb_crc(c)
    return refused('superblock')


@variant('sb_nat_blkaddr', 'A', 'superblock', 'nat_blkaddr moved by one segment, crc fixed')
def _(img):
    for c in (0, 1):
        o = sb_off(c) + 84
        p32(img.buf, o, u32(img.buf, o) + 512)
        img.fix_sb_crc(c)
    return refused('superblock')


@variant('sb_block_count_huge', 'A', 'superblock', 'block_count 2^40, crc fixed')
def _(img):
    for c in (0, 1):
        p64(img.buf, sb_off(c) + 36, 1 << 40)
        img.fix_sb_crc(c)
    return refused('superblock')


# ---- checkpoint ----

@variant('cp_crc_both', 'A', 'checkpoint', 'a byte of every checkpoint pack changed, crc stale')
def _(img):
    for p in (1, 2):
        first, _ = img.cp_blocks(p)
        img.buf[first * F.BLK + 168] ^= 0xFF
    return refused('checkpoint')


@variant('cp_crc_current', 'A', 'checkpoint',
         'the newer pack has a bad crc: the older pack must be used')
def _(img):
    assert len(valid_packs(img)) == 2, 'base image needs two valid packs'
    cur = img.cp_pack
    first, _ = img.cp_blocks(cur)
    img.buf[first * F.BLK + 168] ^= 0xFF
    old = F.Image(bytes(img.buf))          # the oracle's view of the older pack
    assert old.cp_pack != cur
    return mounts(ok('list', '', names=ok_listing(old, '')))


def cp_all_packs(img, fn):
    for p in valid_packs(img):
        first, last = img.cp_blocks(p)
        for blk in (first, last):
            fn(blk * F.BLK)
            img.fix_cp_crc(blk)


@variant('cp_pack_total_huge', 'A', 'checkpoint',
         'cp_pack_total_block_count 0x7fffffff in every pack, crc fixed')
def _(img):
    cp_all_packs(img, lambda o: p32(img.buf, o + 136, 0x7FFFFFFF))
    return refused('checkpoint')


@variant('cp_nat_bitmap_size', 'A', 'checkpoint',
         'nat_ver_bitmap_bytesize off by 8 in every pack, crc fixed')
def _(img):
    cp_all_packs(img, lambda o: p32(img.buf, o + 160, u32(img.buf, o + 160) + 8))
    return refused('checkpoint')


@variant('cp_cur_segno', 'A', 'checkpoint',
         'cur_data_segno[0] beyond the main area in every pack, crc fixed')
def _(img):
    cp_all_packs(img, lambda o: p32(img.buf, o + 84, 0x00FFFFF0))
    return refused('checkpoint')


@variant('cp_checksum_offset', 'A', 'checkpoint', 'checksum_offset 4093 in every pack')
def _(img):
    for p in valid_packs(img):
        first, last = img.cp_blocks(p)
        for blk in (first, last):
            p32(img.buf, blk * F.BLK + 164, 4093)
    return refused('checkpoint')


@variant('cp_start_sum_huge', 'A', 'checkpoint',
         'cp_pack_start_sum past the pack in every pack, crc fixed')
def _(img):
    cp_all_packs(img, lambda o: p32(img.buf, o + 140, 0x10000))
    return refused('checkpoint')


@variant('cp_nat_journal_count', 'A', 'checkpoint',
         'the NAT journal of the current pack claims 0xffff entries')
def _(img):
    p16(img.buf, img.nat_journal_off, 0xFFFF)
    # the summaries are not covered by the cp crc; the kernel refuses counts above
    # NAT_JOURNAL_ENTRIES (restore_curseg_summaries: "invalid journal entries")
    return refused('journal', 'checkpoint', 'summary', 'NAT')


# ---- NAT ----

def nat_set_blk(img, nid, blkaddr):
    o = img.nat_entry_off(nid)
    p32(img.buf, o + 5, blkaddr)


@variant('nat_file_out_of_main', 'A', 'NAT', "hello's NAT entry points past the main area")
def _(img):
    ino = img.lookup_path('hello')
    nat_set_blk(img, ino.nid, img.main_end + 100)
    return mounts(err('stat', 'hello'), ok_read(img, 'small'))


@variant('nat_file_past_device', 'A', 'NAT', "hello's NAT entry is 0xfffffff0")
def _(img):
    ino = img.lookup_path('hello')
    nat_set_blk(img, ino.nid, 0xFFFFFFF0)
    return mounts(err('stat', 'hello'), ok_read(img, 'small'))


@variant('nat_file_into_metadata', 'A', 'NAT', "hello's NAT entry points at the SIT area")
def _(img):
    ino = img.lookup_path('hello')
    nat_set_blk(img, ino.nid, img.sit_blkaddr)
    return mounts(err('stat', 'hello'), ok_read(img, 'small'))


@variant('nat_file_wrong_node', 'A', 'NAT',
         "hello's NAT entry points at small's inode block (footer nid mismatch)")
def _(img):
    ino = img.lookup_path('hello')
    other = img.lookup_path('small')
    nat_set_blk(img, ino.nid, other.blkaddr)
    return mounts(err('stat', 'hello'), ok_read(img, 'small'))


@variant('nat_root_null', 'A', 'NAT', "the root inode's NAT entry is NULL_ADDR")
def _(img):
    nat_set_blk(img, img.root_ino, 0)
    return refused('root', 'inode', 'node', 'NAT')


@variant('nat_root_out_of_main', 'A', 'NAT', "the root inode's NAT entry is past the device")
def _(img):
    nat_set_blk(img, img.root_ino, 0xFFFFFF00)
    return refused('root', 'inode', 'node', 'NAT')


@variant('nat_dnode_out_of_main', 'A', 'NAT', "big's first direct node's NAT entry is bogus")
def _(img):
    ino = no_extent(img, 'big')
    nid = ino.i_nid(0)
    assert nid, 'big has no direct node'
    nat_set_blk(img, nid, img.main_end + 7)
    return mounts(ok('stat', 'big'), err('read', 'big'), ok_read(img, 'medium'))


# ---- node chains ----

@variant('dnode_points_to_inode', 'A', 'node',
         "big's i_nid[0] is big's own inode nid: the inode is read as a direct node")
def _(img):
    ino = no_extent(img, 'big')
    p32(img.buf, ino.nid_off(0), ino.nid)
    refix_inode(img, ino)
    return mounts(ok('stat', 'big'), err('read', 'big'), ok_read(img, 'medium'))


@variant('dnode_points_to_other_inode', 'A', 'node',
         "big's i_nid[0] is medium's inode nid")
def _(img):
    ino = no_extent(img, 'big')
    p32(img.buf, ino.nid_off(0), img.lookup_path('medium').nid)
    refix_inode(img, ino)
    return mounts(ok('stat', 'big'), err('read', 'big'), ok_read(img, 'medium'))


@variant('dnode_nid_out_of_range', 'A', 'node', "big's i_nid[0] is beyond max_nid")
def _(img):
    ino = no_extent(img, 'big')
    p32(img.buf, ino.nid_off(0), img.max_nid + 10)
    refix_inode(img, ino)
    return mounts(ok('stat', 'big'), err('read', 'big'))


@variant('indirect_self_loop', 'A', 'node',
         "huge's indirect node lists its own nid as its first child")
def _(img):
    ino = no_extent(img, 'huge')
    ind = ino.i_nid(2)
    assert ind, 'huge has no indirect node'
    blk = img.node_blkaddr(ind)
    p32(img.buf, blk * F.BLK, ind)
    return mounts(ok('stat', 'huge'), err('read', 'huge'), ok_read(img, 'big'))


@variant('indirect_to_inode', 'A', 'node', "huge's indirect node's first child is huge's inode")
def _(img):
    ino = no_extent(img, 'huge')
    blk = img.node_blkaddr(ino.i_nid(2))
    p32(img.buf, blk * F.BLK, ino.nid)
    return mounts(ok('stat', 'huge'), err('read', 'huge'))


@variant('indirect_as_dnode', 'A', 'node', "big's i_nid[0] is huge's indirect node")
def _(img):
    ino = no_extent(img, 'big')
    p32(img.buf, ino.nid_off(0), img.lookup_path('huge').i_nid(2))
    refix_inode(img, ino)
    return mounts(ok('stat', 'big'), err('read', 'big'))


@variant('node_footer_nid', 'A', 'node', "big's direct node footer names another nid")
def _(img):
    nid = no_extent(img, 'big').i_nid(0)
    blk = img.node_blkaddr(nid)
    p32(img.buf, blk * F.BLK + F.FOOTER, nid + 1)
    return mounts(ok('stat', 'big'), err('read', 'big'))


@variant('ra_indirect_child_footer', 'A', 'node',
         "huge's indirect node's first child names another nid in its footer (read ahead)")
def _(img):
    ind = no_extent(img, 'huge').i_nid(2)
    assert ind, 'huge has no indirect node'
    child = F.u32(img.buf, img.node_blkaddr(ind) * F.BLK)
    blk = img.node_blkaddr(child)
    p32(img.buf, blk * F.BLK + F.FOOTER, child + 1)
    return mounts(ok('stat', 'huge'), err('precache', 'huge'), err('read', 'huge'),
                  ok_read(img, 'big'))


@variant('ra_inode_nodes_swapped', 'A', 'NAT',
         "huge's first direct node's NAT entry points at its second direct node (read ahead "
         "together from the inode)")
def _(img):
    ino = no_extent(img, 'huge')
    nat_set_blk(img, ino.i_nid(0), img.node_blkaddr(ino.i_nid(1)))
    return mounts(ok('stat', 'huge'), err('precache', 'huge'), err('read', 'huge'),
                  ok_read(img, 'big'))


@variant('ra_indirect_child_out_of_range', 'A', 'node',
         "huge's indirect node's first child is beyond max_nid (read ahead)")
def _(img):
    ind = no_extent(img, 'huge').i_nid(2)
    p32(img.buf, img.node_blkaddr(ind) * F.BLK, img.max_nid + 5)
    return mounts(ok('stat', 'huge'), err('precache', 'huge'), err('read', 'huge'),
                  ok_read(img, 'big'))


@variant('xattr_nid_self', 'A', 'node', "hello's i_xattr_nid is its own inode")
def _(img):
    set_inode_field(img, 'hello', 76, '<I', img.lookup_path('hello').nid)
    return mounts(ok_read(img, 'hello'), err('listxattr', 'hello'))


@variant('xattr_nid_out_of_range', 'A', 'node', "hello's i_xattr_nid is beyond max_nid")
def _(img):
    set_inode_field(img, 'hello', 76, '<I', img.max_nid + 1)
    return mounts(err('listxattr', 'hello'))


# ---- inode fields ----

@variant('inode_extra_isize_odd', 'A', 'inode', "hello's i_extra_isize is 26 (not a multiple of 4)")
def _(img):
    set_inode_field(img, 'hello', F.I_ADDR, '<H', 26)
    return mounts(err('stat', 'hello'), ok_read(img, 'small'))


@variant('inode_extra_isize_big', 'A', 'inode', "hello's i_extra_isize is 400")
def _(img):
    set_inode_field(img, 'hello', F.I_ADDR, '<H', 400)
    return mounts(err('stat', 'hello'), ok_read(img, 'small'))


@variant('inode_extra_isize_huge', 'A', 'inode', "medium's i_extra_isize is 0xfffc")
def _(img):
    set_inode_field(img, 'medium', F.I_ADDR, '<H', 0xFFFC)
    return mounts(err('stat', 'medium'), ok_read(img, 'small'))


@variant('inode_inline_xattr_size_huge', 'B', 'inode', "hello's i_inline_xattr_size is 0xffff")
def _(img):
    set_inode_field(img, 'hello', F.I_ADDR + 2, '<H', 0xFFFF)
    return mounts(err('stat', 'hello'), ok_read(img, 'y'))


@variant('inode_inline_xattr_size_big', 'B', 'inode',
         "hello's i_inline_xattr_size is 913 words (inline data would not fit)")
def _(img):
    set_inode_field(img, 'hello', F.I_ADDR + 2, '<H', 913)
    return mounts(err('stat', 'hello'), ok_read(img, 'y'))


@variant('inode_checksum', 'A', 'inode', "hello's i_inode_checksum flipped")
def _(img):
    ino = img.lookup_path('hello')
    assert img.has_inode_checksum(ino)
    img.buf[ino.off + F.I_INODE_CHECKSUM] ^= 0x5A
    return mounts(err('stat', 'hello', ERR_CSUM), ok_read(img, 'small'))


@variant('inode_checksum_body', 'A', 'inode', "a byte of hello's inline data changed, checksum stale")
def _(img):
    ino = img.lookup_path('hello')
    img.buf[ino.inline_data_off()] ^= 0x20
    return mounts(err('stat', 'hello', ERR_CSUM))


@variant('inode_checksum_root', 'A', 'inode', "the root inode's checksum flipped")
def _(img):
    ino = img.lookup_path('')
    img.buf[ino.off + F.I_INODE_CHECKSUM] ^= 0x01
    return refused('root', 'inode', 'checksum')


@variant('root_not_dir', 'A', 'inode', 'the root inode has a regular-file mode')
def _(img):
    set_inode_field(img, '', 0, '<H', 0o100644)
    return refused('root', 'directory')


@variant('inline_size_huge', 'A', 'inode', "inline file hello has i_size 2^40")
def _(img):
    set_inode_field(img, 'hello', 16, '<Q', 1 << 40)
    return mounts(any_('read_head', 'hello', prefix_hex=b'hello world\n'.hex(), len=65536))


@variant('size_max', 'A', 'inode', "medium has i_size 2^64-1")
def _(img):
    set_inode_field(img, 'medium', 16, '<Q', 0xFFFFFFFFFFFFFFFF)
    return mounts(any_('read_head', 'medium', prefix_hex=pattern(4096, 2).hex(), len=4096),
                  ok_read(img, 'small'))


@variant('inline_data_flag_on_big', 'A', 'inode', "big claims INLINE_DATA with a 6 MiB size")
def _(img):
    ino = img.lookup_path('big')
    img.buf[ino.off + 3] |= F.INLINE_DATA
    refix_inode(img, ino)
    return mounts(any_('read_head', 'big', prefix_hex='', len=8192), ok_read(img, 'medium'))


@variant('symlink_size_huge', 'A', 'inode', "symlink link has i_size 1 MiB")
def _(img):
    set_inode_field(img, 'link', 16, '<Q', 1 << 20)
    return mounts(any_('readlink', 'link'), ok_read(img, 'hello'))


@variant('dir_depth_huge', 'A', 'inode', "many/ has i_current_depth 0xffffffff")
def _(img):
    set_inode_field(img, 'many', 72, '<I', 0xFFFFFFFF)
    return mounts(any_('stat', 'many/f0001', ERR + [2]), ok_read(img, 'hello'))


@variant('dir_size_huge', 'A', 'inode', "many/ has i_size 512 GiB (its name index sized from it)")
def _(img):
    set_inode_field(img, 'many', 16, '<Q', 1 << 39)
    # the fourth lookup in a directory builds its name index
    return mounts(*[any_('stat', 'many/f%04d' % i, ERR + [2]) for i in range(1, 7)],
                  any_('list', 'many'), ok_read(img, 'hello'))


@variant('dir_size_depth_huge', 'A', 'inode', "many/ has i_size 512 GiB and i_current_depth 63")
def _(img):
    set_inode_field(img, 'many', 16, '<Q', 1 << 39, fix=False)
    set_inode_field(img, 'many', 72, '<I', 63)
    return mounts(*[any_('stat', 'many/f%04d' % i, ERR + [2]) for i in range(1, 7)],
                  any_('stat', 'many/absent', ERR + [2]), ok_read(img, 'hello'))


@variant('dir_level_huge', 'A', 'inode', "many/ has i_dir_level 255")
def _(img):
    set_inode_field(img, 'many', 347, '<B', 255)
    return mounts(any_('stat', 'many/f0001', ERR + [2]), ok_read(img, 'hello'))


# ---- data block addresses ----

@variant('iaddr_past_device', 'A', 'data', "medium's first i_addr is 0xfffffff0")
def _(img):
    ino = no_extent(img, 'medium')
    p32(img.buf, ino.addr_off(0), 0xFFFFFFF0)
    refix_inode(img, ino)
    return mounts(err('read', 'medium'), ok_read(img, 'small'))


@variant('iaddr_into_metadata', 'A', 'data', "medium's sixth i_addr points into the NAT area")
def _(img):
    ino = no_extent(img, 'medium')
    p32(img.buf, ino.addr_off(5), img.nat_blkaddr)
    refix_inode(img, ino)
    return mounts(err('read', 'medium'), ok_read(img, 'small'))


@variant('dnode_addr_past_device', 'A', 'data', "an address in big's direct node is past the device")
def _(img):
    blk = img.node_blkaddr(no_extent(img, 'big').i_nid(0))
    p32(img.buf, blk * F.BLK + 4 * 3, img.block_count + 10)
    return mounts(err('read', 'big'), ok_read(img, 'medium'))


@variant('dir_block_past_device', 'A', 'data', "many/'s first dentry block address is bogus")
def _(img):
    ino = img.lookup_path('many')
    p32(img.buf, ino.addr_off(0), img.main_end + 3)
    refix_inode(img, ino)
    return mounts(err('list', 'many'), ok_read(img, 'hello'))


@variant('extent_past_device', 'A', 'inode', "medium's i_ext starts at 0xfffffff0")
def _(img):
    ino = img.lookup_path('medium')
    struct.pack_into('<III', img.buf, ino.off + 348, 0, 0xFFFFFFF0, 10)
    refix_inode(img, ino)
    # The kernel's sanity_check_inode calls such an inode corrupted (EUCLEAN); a driver
    # that ignores or distrusts i_ext may instead read the data through i_addr.  Either
    # is fine, reading through the bogus extent is not.
    return mounts(any_('read', 'medium', sha256=ORIG['medium'], crc32=ORIG_CRC['medium']),
                  ok_read(img, 'small'))


@variant('extent_len_huge', 'A', 'inode', "big's i_ext length runs past the main area")
def _(img):
    ino = img.lookup_path('big')
    fofs, blk, ln = struct.unpack_from('<III', img.buf, ino.off + 348)
    struct.pack_into('<III', img.buf, ino.off + 348, 0, blk or img.main_blkaddr, 0x7FFFFFFF)
    refix_inode(img, ino)
    return mounts(any_('read', 'big', sha256=ORIG['big'], crc32=ORIG_CRC['big']),
                  ok_read(img, 'small'))


@variant('extent_into_metadata', 'A', 'inode', "medium's i_ext points at the checkpoint area")
def _(img):
    ino = img.lookup_path('medium')
    struct.pack_into('<III', img.buf, ino.off + 348, 0, img.cp_blkaddr, 4)
    refix_inode(img, ino)
    return mounts(any_('read', 'medium', sha256=ORIG['medium'], crc32=ORIG_CRC['medium']),
                  ok_read(img, 'small'))


# ---- dentries in blocks ----

def dentry_in(img, dirpath, name):
    for e in img.readdir(img.lookup_path(dirpath)):
        if e[1] == name.encode():
            return e
    raise F.F2fsError('no %s in %s' % (name, dirpath))


@variant('dentry_namelen_300', 'A', 'dentry', "many/f0005's name_len is 300")
def _(img):
    e = dentry_in(img, 'many', 'f0005')
    p16(img.buf, e[5] + 8, 300)
    return mounts(err('list', 'many'), ok_read(img, 'hello'))


@variant('dentry_namelen_ffff', 'A', 'dentry', "many/f0007's name_len is 0xffff")
def _(img):
    e = dentry_in(img, 'many', 'f0007')
    p16(img.buf, e[5] + 8, 0xFFFF)
    return mounts(err('list', 'many'), ok_read(img, 'hello'))


@variant('dentry_slot_past_block', 'A', 'dentry',
         "a 16-byte name in the last slot of a dentry block of many/")
def _(img):
    areas = img.dir_areas(img.lookup_path('many'))
    for area, _blk in areas:
        last = area['max'] - 1
        if not F.test_bit_le(img.buf, area['bitmap'], last):
            break
    else:
        raise F.F2fsError('no free last slot')
    F.set_bit_le(img.buf, area['bitmap'], last)
    struct.pack_into('<IIHB', img.buf, area['dentry'] + F.DE_SIZE * last, 0x1234,
                     img.lookup_path('hello').nid, 16, 1)
    return mounts(err('list', 'many'), ok_read(img, 'hello'))


@variant('dentry_bitmap_past_end', 'A', 'dentry',
         'bits 214 and 215 (past the 214 slots) set in every dentry block bitmap of many/')
def _(img):
    areas = img.dir_areas(img.lookup_path('many'))
    for area, _blk in areas:
        F.set_bit_le(img.buf, area['bitmap'], 214)
        F.set_bit_le(img.buf, area['bitmap'], 215)
    return mounts(ok_list(img, 'many'), ok('stat', 'many/f0599'))


@variant('dentry_ino_zero', 'A', 'dentry', "many/f0010's ino is 0")
def _(img):
    e = dentry_in(img, 'many', 'f0010')
    p32(img.buf, e[5] + 4, 0)
    return mounts(err('stat', 'many/f0010', ERR + [2]), ok('stat', 'many/f0011'))


@variant('dentry_ino_huge', 'A', 'dentry', "many/f0012's ino is beyond max_nid")
def _(img):
    e = dentry_in(img, 'many', 'f0012')
    p32(img.buf, e[5] + 4, img.max_nid + 100)
    return mounts(err('stat', 'many/f0012'), ok('stat', 'many/f0013'))


@variant('dentry_ino_node_ino', 'A', 'dentry', "many/f0014's ino is 1 (the node inode)")
def _(img):
    e = dentry_in(img, 'many', 'f0014')
    p32(img.buf, e[5] + 4, 1)
    return mounts(err('stat', 'many/f0014'), ok('stat', 'many/f0015'))


@variant('dentry_ino_unused_nid', 'A', 'dentry', "many/f0016's ino is a free nid")
def _(img):
    e = dentry_in(img, 'many', 'f0016')
    free = None
    for nid in range(img.max_nid - 1, 3, -1):
        if img.nat_lookup(nid)[2] == 0:
            free = nid
            break
    p32(img.buf, e[5] + 4, free)
    return mounts(err('stat', 'many/f0016', ERR + [2]), ok('stat', 'many/f0017'))


@variant('dentry_ino_is_dnode', 'A', 'dentry', "many/f0018's ino is big's direct node nid")
def _(img):
    e = dentry_in(img, 'many', 'f0018')
    p32(img.buf, e[5] + 4, img.lookup_path('big').i_nid(0))
    return mounts(err('stat', 'many/f0018'), ok('stat', 'many/f0019'))


@variant('dentry_dir_loop', 'A', 'dentry', "sub/inner's ino is the root: a directory cycle")
def _(img):
    e = dentry_in(img, 'sub', 'inner')
    p32(img.buf, e[5] + 4, img.root_ino)
    # the walk must terminate; what stat shows is not specified
    return mounts(any_('stat', 'sub/inner'), ok_read(img, 'hello'))


# ---- inline dentries ----

@variant('inline_dir_ok', 'A', 'dentry',
         'sub/ converted to an inline-dentry directory, uncorrupted (control)')
def _(img):
    make_inline_dir(img, 'sub')
    return mounts(ok_list(img, 'sub'), ok_read(img, 'sub/a'), ok_read(img, 'sub/inner/c'))


@variant('inline_dentry_namelen_huge', 'A', 'dentry', "inline dir sub/: a's name_len is 0x7fff")
def _(img):
    make_inline_dir(img, 'sub')
    e = dentry_in(img, 'sub', 'a')
    p16(img.buf, e[5] + 8, 0x7FFF)
    refix_inode(img, img.lookup_path('sub'))
    return mounts(err('list', 'sub'), ok_read(img, 'hello'))


@variant('inline_dentry_slot_past_end', 'A', 'dentry',
         'inline dir sub/: a 24-byte name in the last inline slot')
def _(img):
    d = make_inline_dir(img, 'sub')
    area = img.inline_area(d)
    last = area['max'] - 1
    F.set_bit_le(img.buf, area['bitmap'], last)
    struct.pack_into('<IIHB', img.buf, area['dentry'] + F.DE_SIZE * last, 0x777,
                     img.lookup_path('hello').nid, 24, 1)
    refix_inode(img, d)
    return mounts(err('list', 'sub'), ok_read(img, 'hello'))


@variant('inline_dentry_bitmap_past_end', 'A', 'dentry',
         'inline dir sub/: bitmap bits past the last slot set')
def _(img):
    d = make_inline_dir(img, 'sub')
    area = img.inline_area(d)
    nbits = ((area['max'] + 7) // 8) * 8
    for bit in range(area['max'], nbits):
        F.set_bit_le(img.buf, area['bitmap'], bit)
    refix_inode(img, d)
    return mounts(ok_list(img, 'sub'), ok_read(img, 'sub/a'))


@variant('inline_dentry_ino_huge', 'A', 'dentry', "inline dir sub/: bb's ino is 0xffffffff")
def _(img):
    make_inline_dir(img, 'sub')
    e = dentry_in(img, 'sub', 'bb')
    p32(img.buf, e[5] + 4, 0xFFFFFFFF)
    refix_inode(img, img.lookup_path('sub'))
    return mounts(err('stat', 'sub/bb'), ok_read(img, 'sub/a'))


# ---- xattrs (hand-written inline xattrs on B:/x) ----

@variant('xattr_ok', 'B', 'xattr', 'x carries user.test=hello in its inline xattr area (control)')
def _(img):
    write_inline_xattrs(img, 'x', [(1, b'test', b'hello')])
    return mounts(ok('listxattr', 'x', names=['user.test']),
                  ok('getxattr', 'x', name='user.test', value_hex=b'hello'.hex()))


@variant('xattr_value_size_huge', 'B', 'xattr', "x's inline xattr claims a 0xffff-byte value")
def _(img):
    write_inline_xattrs(img, 'x', [(1, b'test', b'hello', 4, 0xFFFF)])
    return mounts(err('getxattr', 'x', name='user.test'), ok_read(img, 'y'))


@variant('xattr_name_len_past_end', 'B', 'xattr', "x's inline xattr name_len 255 runs past the area")
def _(img):
    write_inline_xattrs(img, 'x', [(1, b'test', b'hello', 255, 5)])
    return mounts(err('listxattr', 'x'), ok_read(img, 'y'))


@variant('xattr_no_terminator', 'B', 'xattr',
         "x's inline xattr entries fill the area to the last byte, no end marker")
def _(img):
    n = write_inline_xattrs(img, 'x', [(1, b'test', b'hello')], terminate=False)
    # The kernel's list_for_each_xattr reads the end marker from the zeroed
    # XATTR_PADDING_SIZE bytes after the area, so an exactly full area is a valid list
    # (duplicated names included); the point is that nothing is read past the area.
    return mounts(ok('listxattr', 'x', names=['user.test'] + ['user.z'] * n),
                  ok('getxattr', 'x', name='user.test', value_hex=b'hello'.hex()))


@variant('xattr_bad_index', 'B', 'xattr', "x's inline xattr has name index 200")
def _(img):
    write_inline_xattrs(img, 'x', [(200, b'test', b'hello'), (1, b'ok', b'v')])
    # an unknown namespace is skipped by listxattr (the kernel does the same)
    return mounts(ok('listxattr', 'x', names=['user.ok']),
                  ok('getxattr', 'x', name='user.ok', value_hex=b'v'.hex()))


@variant('xattr_value_past_end', 'B', 'xattr',
         "x's last inline xattr value runs past the inline area")
def _(img):
    ino = img.lookup_path('x')
    size = 4 * ino.inline_xattr_addrs
    filler = size - 24 - 4 - 8 - 4
    write_inline_xattrs(img, 'x', [(1, b'a', b'v' * (filler - 1)), (1, b'zz', b'', 2, 600)])
    return mounts(err('getxattr', 'x', name='user.zz'), ok_read(img, 'y'))


# ------------------------------------------------------------------ main

# ---- compressed clusters (base C) ----

def ok_src(name):
    return ok('read', name, sha256=ORIG[name], crc32=ORIG_CRC[name])


def compr_checks(*bad):
    """Reads of the compressed files: the damaged ones fail with EIO, the
    others (and the uncompressed neighbour) read their source bytes."""
    checks = [err('read', n, [EIO]) if n in bad else ok_src(n) for n in COMPR_FILES]
    return mounts(*checks, ok_src('plain'))


def cluster_block(img, name, cluster):
    """The compressed data block of a cluster: its block number and byte offset."""
    ino = img.lookup_path(name)
    blk = ino.addr(cluster << COMPR_LOG | 1)
    return ino, blk * F.BLK


@variant('compr_intact', 'C', 'compressed cluster',
         'an unused byte of the last compressed block changed: both files still read')
def _(img):
    _, o = cluster_block(img, 'c-lz4', 0)
    img.buf[o + F.BLK - 1] ^= 0xff
    return compr_checks()


@variant('compr_clen', 'C', 'compressed cluster',
         'clen larger than the compressed blocks hold (4096 - 24 + 1)')
def _(img):
    _, o = cluster_block(img, 'c-lz4', 1)
    p32(img.buf, o, F.BLK - 24 + 1)
    return compr_checks('c-lz4')


@variant('compr_clen_short', 'C', 'compressed cluster',
         'clen cut to 40 bytes: the lz4 data ends early')
def _(img):
    _, o = cluster_block(img, 'c-lz4', 2)
    p32(img.buf, o, 40)
    return compr_checks('c-lz4')


@variant('compr_data', 'C', 'compressed cluster',
         'a match offset in the lz4 data beyond the start of the output')
def _(img):
    _, o = cluster_block(img, 'c-lz4', 0)
    # the first sequence's literals end where its 16-bit match offset starts
    tok = img.buf[o + 24]
    lits = tok >> 4
    assert lits < 15 and tok & 15 != 15, tok
    struct.pack_into('<H', img.buf, o + 25 + lits, 0xffff)
    return compr_checks('c-lz4')


@variant('compr_chksum', 'C', 'compressed cluster',
         'compress_chksum set and the stored checksum off by one bit')
def _(img):
    _, o = cluster_block(img, 'c-chk', 1)
    img.buf[o + 4] ^= 1
    return compr_checks('c-chk')


@variant('compr_chksum_data', 'C', 'compressed cluster',
         'compress_chksum set, a literal byte of the compressed data changed')
def _(img):
    _, o = cluster_block(img, 'c-chk', 2)
    img.buf[o + 25] ^= 0x20
    return compr_checks('c-chk')


@variant('compr_two_heads', 'C', 'compressed cluster',
         'COMPRESS_ADDR in a reserved slot of a compressed cluster')
def _(img):
    ino = img.lookup_path('c-lz4')
    p32(img.buf, ino.addr_off(1 << COMPR_LOG | 2), COMPRESS_ADDR)
    refix_inode(img, ino)
    return compr_checks('c-lz4')


@variant('compr_no_blocks', 'C', 'compressed cluster',
         'a COMPRESS_ADDR cluster whose slots are all reservations')
def _(img):
    ino = img.lookup_path('c-chk')
    p32(img.buf, ino.addr_off(1), NEW_ADDR)
    refix_inode(img, ino)
    return compr_checks('c-chk')


@variant('compr_block_outside', 'C', 'compressed cluster',
         'a compressed block address beyond the main area')
def _(img):
    ino = img.lookup_path('c-lz4')
    p32(img.buf, ino.addr_off(2 << COMPR_LOG | 1), 0x7ffffff0)
    refix_inode(img, ino)
    return compr_checks('c-lz4')


@variant('compr_head_in_raw', 'C', 'compressed cluster',
         'COMPRESS_ADDR inside the raw last cluster')
def _(img):
    ino = img.lookup_path('c-chk')
    p32(img.buf, ino.addr_off((COMPR_CLUSTERS - 1) << COMPR_LOG | 2), COMPRESS_ADDR)
    refix_inode(img, ino)
    return compr_checks('c-chk')


@variant('compr_algorithm', 'C', 'inode', 'i_compress_algorithm 9 (there are four)')
def _(img):
    set_inode_field(img, 'c-lz4', I_COMPRESS_ALGORITHM, '<B', 9)
    return mounts(err('stat', 'c-lz4'), ok_src('c-chk'))


@variant('compr_log_size', 'C', 'inode', 'i_log_cluster_size 9 (at most 8)')
def _(img):
    set_inode_field(img, 'c-lz4', I_LOG_CLUSTER_SIZE, '<B', 9)
    return mounts(err('stat', 'c-lz4'), ok_src('c-chk'))


@variant('compr_level', 'C', 'inode', 'lz4 at level 2 (lz4hc levels are 3-12)')
def _(img):
    set_inode_field(img, 'c-chk', I_COMPRESS_FLAG, '<H', 2 << 8 | 1)
    return mounts(err('stat', 'c-chk'), ok_src('c-lz4'))


@variant('compr_blocks', 'C', 'inode', 'i_compr_blocks larger than i_blocks')
def _(img):
    set_inode_field(img, 'c-lz4', I_COMPR_BLOCKS, '<Q', 1 << 40)
    return mounts(err('stat', 'c-lz4'), ok_src('c-chk'))


def block_patch(old, new):
    """[[block number, hex of the new block]] for every 4 KiB block that differs."""
    out = []
    big = 256 * F.BLK
    for c in range(0, len(new), big):
        if old[c:c + big] == new[c:c + big]:     # bytes/bytearray compare: memcmp
            continue
        for o in range(c, min(c + big, len(new)), F.BLK):
            if old[o:o + F.BLK] != new[o:o + F.BLK]:
                out.append([o // F.BLK, bytes(new[o:o + F.BLK]).hex()])
    return out


def write_text_manifest(f, listing):
    """The corpus in a line format for the C unit test (tests/unit/test_parse_corpus.c):
        variant NAME BASE refused|ok
        patch BLOCK HEX
        check OP RESULT PATH ERRNOS EXTRA...     (PATH "." for the root, ERRNOS
                                                  comma-separated; EXTRA by op:
                                                  read: crc32 of the contents,
                                                  list/listxattr: number of names,
                                                  readlink: target, getxattr: name
                                                  value-hex, read_head: len prefix-hex;
                                                  "-" for none)
        end
    The crc32 is f2fs_crc32(0xffffffff, data) (the same raw CRC as f2fsimg.crc32_f2fs)."""
    for v in listing:
        e = v['expect']
        f.write('variant %s %s %s\n' % (v['name'], v['base'], 'refused' if e['mount'] == 'refused'
                                          else 'ok'))
        for blk, hexdata in v['patch']:
            f.write('patch %d %s\n' % (blk, hexdata))
        for c in e.get('checks', []):
            extra = ['-']
            op = c['op']
            if op == 'read' and 'sha256' in c:
                extra = ['%08x' % c['crc32']]
            elif op in ('list', 'listxattr') and 'names' in c:
                extra = [str(len(c['names']))]
            elif op == 'readlink' and 'target' in c:
                extra = [c['target']]
            elif op == 'getxattr':
                extra = [c['name'], c.get('value_hex') or '-']
            elif op == 'read_head':
                extra = [str(c['len']), c['prefix_hex'] or '-']
            f.write('check %s %s %s %s %s\n' % (op, c['result'], c['path'] or '.',
                                                 ','.join(map(str, c.get('errnos', ERR))),
                                                 ' '.join(extra)))
        f.write('end\n')


def apply_patch(base_path, patch, out_path):
    """Materialise a variant: a sparse copy of its base with the patched blocks."""
    subprocess.run(['cp', '--sparse=always', base_path, out_path], check=True)
    with open(out_path, 'r+b') as f:
        for blk, hexdata in patch:
            f.seek(blk * F.BLK)
            f.write(bytes.fromhex(hexdata))


def main():
    args = sys.argv[1:]
    if not args or args[0].startswith('-'):
        print(__doc__)
        return 2
    out = os.path.abspath(args.pop(0))
    only = None
    images = False
    while args:
        a = args.pop(0)
        if a == '--only':
            only = set(args.pop(0).split(','))
        elif a == '--images':
            images = True
        elif a == '--bases-only':     # the base images alone (fuzzing seeds)
            only = set()
        else:
            raise SystemExit('unknown argument %s' % a)
    os.makedirs(out, exist_ok=True)
    bases = {}
    trees = []
    try:
        for key, mb, feat, fill in (('A', 128, FEATURES_A, tree_a), ('B', 64, FEATURES_B, tree_b),
                                    ('C', 64, FEATURES_C, tree_c)):
            path = os.path.join(out, 'base-%s.img' % key)
            trees.append(make_base(path, mb, feat, fill))
            if key == 'C':
                compress_base(path)
            with open(path, 'rb') as f:
                bases[key] = f.read()
        listing = []
        for name, base, structure, desc, fn in VARIANTS:
            if only is not None and name not in only:
                continue
            img = F.Image(bases[base])
            expect = fn(img)
            patch = block_patch(bases[base], img.buf)
            if not patch:
                raise SystemExit('variant %s changed nothing' % name)
            ent = {'name': name, 'base': base, 'structure': structure, 'description': desc,
                   'expect': expect, 'patch': patch}
            if images:
                ent['image'] = name + '.img'
                write_sparse(os.path.join(out, ent['image']), img.buf)
            listing.append(ent)
        with open(os.path.join(out, 'corpus.json'), 'w') as f:
            json.dump({'bases': {k: 'base-%s.img' % k for k in bases}, 'variants': listing},
                      f, indent=1)
        with open(os.path.join(out, 'corpus.txt'), 'w') as f:
            write_text_manifest(f, listing)
        print('%d variants in %s' % (len(listing), out))
    finally:
        for t in trees:
            shutil.rmtree(t, ignore_errors=True)
    return 0


def write_sparse(path, buf):
    """Write buf, skipping all-zero 64 KiB chunks (the images are mostly empty)."""
    chunk = 65536
    zero = bytes(chunk)
    mv = memoryview(buf)
    with open(path, 'wb') as f:
        for o in range(0, len(buf), chunk):
            piece = mv[o:o + chunk]
            if piece == zero[:len(piece)]:
                f.seek(len(piece), 1)
            else:
                f.write(piece)
        f.truncate(len(buf))


if __name__ == '__main__':
    sys.exit(main())
