# SPDX-License-Identifier: GPL-2.0
"""A small, independent, read-only f2fs image parser (python3 stdlib only).

It exists so that the corruption corpus can find the exact bytes of a given
structure (an inode, a dentry, a NAT entry...) in an image, and so that the
tests have an oracle that does not share code with the C core.  Offsets come
from the kernel's include/linux/f2fs_fs.h (the same facts core/format.h
records); the image is held as a bytearray and every accessor works on
absolute byte offsets so that callers can patch fields in place.
"""

import struct
import zlib

BLK = 4096
SB_OFF = 1024
MAGIC = 0xF2F52010
XATTR_MAGIC = 0xF2F52011

# feature bits
F_EXTRA_ATTR = 0x8
F_INODE_CHKSUM = 0x20
F_FLEX_INLINE_XATTR = 0x40
F_SB_CHKSUM = 0x800

# checkpoint flags
CP_COMPACT_SUM = 0x4
CP_LARGE_NAT_BITMAP = 0x400

# i_inline
INLINE_XATTR = 0x01
INLINE_DATA = 0x02
INLINE_DENTRY = 0x04
INLINE_EXTRA_ATTR = 0x20

ADDRS_PER_INODE = 923
ADDRS_PER_BLOCK = 1018
NIDS_PER_BLOCK = 1018
NAT_PER_BLOCK = 455
I_ADDR = 360
I_NID = I_ADDR + 4 * ADDRS_PER_INODE        # 4052
FOOTER = 4072
I_INODE_CHECKSUM = 368

DENTRY_SLOTS = 214
DENTRY_BITMAP = 27
DE_SIZE = 11


def crc32_f2fs(seed, data):
    """f2fs_cal_crc32: reflected 0xEDB88320, no pre/post inversion.

    zlib.crc32(d, v) == ~raw(~v, d), hence raw(s, d) == ~zlib.crc32(d, ~s).
    """
    return (~zlib.crc32(data, (~seed) & 0xFFFFFFFF)) & 0xFFFFFFFF


def chksum(data):
    return crc32_f2fs(MAGIC, data)


def u8(b, o):
    return b[o]


def u16(b, o):
    return struct.unpack_from('<H', b, o)[0]


def u32(b, o):
    return struct.unpack_from('<I', b, o)[0]


def u64(b, o):
    return struct.unpack_from('<Q', b, o)[0]


def p16(b, o, v):
    struct.pack_into('<H', b, o, v & 0xFFFF)


def p32(b, o, v):
    struct.pack_into('<I', b, o, v & 0xFFFFFFFF)


def p64(b, o, v):
    struct.pack_into('<Q', b, o, v & 0xFFFFFFFFFFFFFFFF)


def test_bit(bitmap, nr):
    """f2fs_test_bit: MSB-first within each byte."""
    return (bitmap[nr >> 3] >> (7 - (nr & 7))) & 1


class F2fsError(Exception):
    pass


class Inode:
    """Decoded view of an inode node block at absolute byte offset `off`."""

    def __init__(self, img, nid, blkaddr):
        self.img = img
        self.nid = nid
        self.blkaddr = blkaddr
        self.off = blkaddr * BLK
        b = img.buf
        o = self.off
        self.mode = u16(b, o + 0)
        self.advise = u8(b, o + 2)
        self.inline = u8(b, o + 3)
        self.links = u32(b, o + 12)
        self.size = u64(b, o + 16)
        self.blocks = u64(b, o + 24)
        self.generation = u32(b, o + 68)
        self.current_depth = u32(b, o + 72)
        self.xattr_nid = u32(b, o + 76)
        self.flags = u32(b, o + 80)
        self.dir_level = u8(b, o + 347)
        self.extra_isize = 0
        if self.inline & INLINE_EXTRA_ATTR:
            self.extra_isize = u16(b, o + I_ADDR)
        feat = img.feature
        if (self.inline & INLINE_EXTRA_ATTR) and (feat & F_FLEX_INLINE_XATTR):
            self.inline_xattr_addrs = u16(b, o + I_ADDR + 2)
        elif self.inline & (INLINE_XATTR | INLINE_DENTRY):
            self.inline_xattr_addrs = 50
        else:
            self.inline_xattr_addrs = 0
        self.addrs = ADDRS_PER_INODE - self.extra_isize // 4 - self.inline_xattr_addrs

    # byte offsets of things inside this inode block
    def addr_off(self, idx):
        return self.off + I_ADDR + 4 * (self.extra_isize // 4 + idx)

    def addr(self, idx):
        return u32(self.img.buf, self.addr_off(idx))

    def nid_off(self, i):
        return self.off + I_NID + 4 * i

    def i_nid(self, i):
        return u32(self.img.buf, self.nid_off(i))

    def inline_data_off(self):
        return self.addr_off(1)

    def max_inline_data(self):
        return 4 * (ADDRS_PER_INODE - self.extra_isize // 4 - self.inline_xattr_addrs - 1)

    def inline_xattr_off(self):
        return self.off + I_ADDR + 4 * (ADDRS_PER_INODE - self.inline_xattr_addrs)

    def is_dir(self):
        return (self.mode & 0o170000) == 0o040000

    def is_reg(self):
        return (self.mode & 0o170000) == 0o100000

    def is_lnk(self):
        return (self.mode & 0o170000) == 0o120000


class Image:
    def __init__(self, data):
        self.buf = bytearray(data)
        self.parse_sb()
        self.parse_cp()

    # ---------------- superblock ----------------
    def sb_field(self, off, fmt='<I', copy=0):
        return struct.unpack_from(fmt, self.buf, copy * BLK + SB_OFF + off)[0]

    def parse_sb(self):
        s = SB_OFF
        b = self.buf
        if u32(b, s) != MAGIC:
            raise F2fsError('bad superblock magic')
        self.log_blocks_per_seg = u32(b, s + 20)
        self.bps = 1 << self.log_blocks_per_seg
        self.segment_count_main = u32(b, s + 68)
        self.segment0_blkaddr = u32(b, s + 72)
        self.cp_blkaddr = u32(b, s + 76)
        self.sit_blkaddr = u32(b, s + 80)
        self.nat_blkaddr = u32(b, s + 84)
        self.ssa_blkaddr = u32(b, s + 88)
        self.main_blkaddr = u32(b, s + 92)
        self.root_ino = u32(b, s + 96)
        self.segment_count_nat = u32(b, s + 60)
        self.block_count = u64(b, s + 36)
        self.uuid = bytes(b[s + 108:s + 124])
        self.cp_payload = u32(b, s + 1664)
        self.feature = u32(b, s + 2180)
        self.main_end = self.main_blkaddr + (self.segment_count_main << self.log_blocks_per_seg)
        self.max_nid = NAT_PER_BLOCK * ((self.segment_count_nat >> 1) << self.log_blocks_per_seg)

    def fix_sb_crc(self, copy):
        base = copy * BLK + SB_OFF
        p32(self.buf, base + 3068, chksum(bytes(self.buf[base:base + 3068])))

    # ---------------- checkpoint ----------------
    def cp_block_ok(self, blk):
        o = blk * BLK
        cso = u32(self.buf, o + 164)
        if cso < 192 or cso > 4092:
            return False
        return u32(self.buf, o + cso) == chksum(bytes(self.buf[o:o + cso]))

    def pack_info(self, pack):
        start = self.cp_blkaddr + (pack - 1) * self.bps
        if not self.cp_block_ok(start):
            return None
        total = u32(self.buf, start * BLK + 136)
        if total == 0 or total > self.bps:
            return None
        last = start + total - 1
        if not self.cp_block_ok(last):
            return None
        v1 = u64(self.buf, start * BLK)
        v2 = u64(self.buf, last * BLK)
        if v1 != v2:
            return None
        return start, total, v1

    def parse_cp(self):
        p1 = self.pack_info(1)
        p2 = self.pack_info(2)
        if not p1 and not p2:
            raise F2fsError('no valid checkpoint')
        if p1 and (not p2 or p1[2] >= p2[2]):
            self.cp_pack, (self.cp_start, self.cp_total, self.cp_ver) = 1, p1
        else:
            self.cp_pack, (self.cp_start, self.cp_total, self.cp_ver) = 2, p2
        o = self.cp_start * BLK
        b = self.buf
        self.cp_off = o
        self.ckpt_flags = u32(b, o + 132)
        self.sit_bitmap_size = u32(b, o + 156)
        self.nat_bitmap_size = u32(b, o + 160)
        if self.ckpt_flags & CP_LARGE_NAT_BITMAP:
            self.nat_bitmap_off = o + 192 + 4
        elif self.cp_payload > 0:
            self.nat_bitmap_off = o + 192
        else:
            self.nat_bitmap_off = o + 192 + self.sit_bitmap_size
        self.nat_bitmap = bytes(b[self.nat_bitmap_off:self.nat_bitmap_off + self.nat_bitmap_size])
        start_sum = u32(b, o + 140)
        sum_blk = self.cp_start + start_sum
        if self.ckpt_flags & CP_COMPACT_SUM:
            self.nat_journal_off = sum_blk * BLK          # journal of HOT_DATA first
        else:
            self.nat_journal_off = sum_blk * BLK + 3584   # hot data full summary
        self.cur_data_segno = [u32(b, o + 84 + 4 * i) for i in range(3)]
        self.cur_node_segno = [u32(b, o + 36 + 4 * i) for i in range(3)]

    def cp_blocks(self, pack):
        """(first, last) block numbers of a pack, from its own header."""
        start = self.cp_blkaddr + (pack - 1) * self.bps
        total = u32(self.buf, start * BLK + 136)
        return start, start + total - 1

    def fix_cp_crc(self, blk):
        o = blk * BLK
        cso = u32(self.buf, o + 164)
        p32(self.buf, o + cso, chksum(bytes(self.buf[o:o + cso])))

    # ---------------- NAT ----------------
    def nat_journal(self):
        """[(nid, byte offset of the 9-byte nat entry)] from the NAT journal."""
        o = self.nat_journal_off
        n = u16(self.buf, o)
        out = []
        for i in range(min(n, 38)):
            e = o + 2 + 13 * i
            out.append((u32(self.buf, e), e + 4))
        return out

    def nat_entry_off(self, nid):
        """Byte offset of the live NAT entry for nid (journal first)."""
        for jn, off in self.nat_journal():
            if jn == nid:
                return off
        blk_off = nid // NAT_PER_BLOCK
        seg_off = blk_off >> self.log_blocks_per_seg
        blk = self.nat_blkaddr + (seg_off << self.log_blocks_per_seg << 1) + (blk_off & (self.bps - 1))
        if test_bit(self.nat_bitmap, blk_off):
            blk += self.bps
        return blk * BLK + (nid % NAT_PER_BLOCK) * 9

    def nat_lookup(self, nid):
        o = self.nat_entry_off(nid)
        return u8(self.buf, o), u32(self.buf, o + 1), u32(self.buf, o + 5)

    def node_blkaddr(self, nid):
        if nid == 0 or nid >= self.max_nid:
            raise F2fsError('nid %d out of range' % nid)
        _, _, blk = self.nat_lookup(nid)
        if blk < self.main_blkaddr or blk >= self.main_end:
            raise F2fsError('nid %d at bad block %#x' % (nid, blk))
        if u32(self.buf, blk * BLK + FOOTER) != nid:
            raise F2fsError('nid %d footer mismatch' % nid)
        return blk

    def inode(self, ino):
        return Inode(self, ino, self.node_blkaddr(ino))

    # ---------------- inode checksum ----------------
    def inode_checksum(self, blkaddr):
        o = blkaddr * BLK
        blk = bytes(self.buf[o:o + BLK])
        seed = crc32_f2fs(0xFFFFFFFF, self.uuid)
        ino = blk[FOOTER + 4:FOOTER + 8]
        gen = blk[68:72]
        c = crc32_f2fs(seed, ino)
        c = crc32_f2fs(c, gen)
        c = crc32_f2fs(c, blk[:I_INODE_CHECKSUM])
        c = crc32_f2fs(c, b'\0\0\0\0')
        c = crc32_f2fs(c, blk[I_INODE_CHECKSUM + 4:])
        return c

    def has_inode_checksum(self, ino):
        return (self.feature & F_INODE_CHKSUM) and (ino.inline & INLINE_EXTRA_ATTR) \
            and ino.extra_isize >= I_INODE_CHECKSUM + 4 - I_ADDR

    def fix_inode_checksum(self, ino):
        """Recompute i_inode_checksum of an Inode (if the fs uses them)."""
        if self.has_inode_checksum(ino):
            p32(self.buf, ino.off + I_INODE_CHECKSUM, self.inode_checksum(ino.blkaddr))

    # ---------------- data mapping ----------------
    def dnode_addrs(self, nid):
        blk = self.node_blkaddr(nid)
        return [u32(self.buf, blk * BLK + 4 * i) for i in range(ADDRS_PER_BLOCK)]

    def block_map(self, ino, nblocks):
        """Physical address of each of the first nblocks logical blocks."""
        out = []
        for i in range(min(nblocks, ino.addrs)):
            out.append(ino.addr(i))
        if len(out) >= nblocks:
            return out
        for k in range(2):  # direct nodes
            nid = ino.i_nid(k)
            addrs = self.dnode_addrs(nid) if nid else [0] * ADDRS_PER_BLOCK
            out.extend(addrs[:nblocks - len(out)])
            if len(out) >= nblocks:
                return out
        for k in range(2, 4):  # indirect nodes
            nid = ino.i_nid(k)
            if nid:
                iblk = self.node_blkaddr(nid)
                kids = [u32(self.buf, iblk * BLK + 4 * i) for i in range(NIDS_PER_BLOCK)]
            else:
                kids = [0] * NIDS_PER_BLOCK
            for kid in kids:
                addrs = self.dnode_addrs(kid) if kid else [0] * ADDRS_PER_BLOCK
                out.extend(addrs[:nblocks - len(out)])
                if len(out) >= nblocks:
                    return out
        raise F2fsError('file too large for this parser')

    def read_file(self, ino):
        if ino.inline & INLINE_DATA:
            o = ino.inline_data_off()
            return bytes(self.buf[o:o + min(ino.size, ino.max_inline_data())])
        n = (ino.size + BLK - 1) // BLK
        data = bytearray()
        for a in self.block_map(ino, n):
            if a in (0, 0xFFFFFFFF):
                data += bytes(BLK)
            else:
                data += self.buf[a * BLK:(a + 1) * BLK]
        return bytes(data[:ino.size])

    # ---------------- directories ----------------
    def dentry_area(self, base, nr, bitmap_size, reserved):
        """Describe a dentry area: dict of absolute offsets."""
        return {
            'max': nr,
            'bitmap': base,
            'dentry': base + bitmap_size + reserved,
            'filename': base + bitmap_size + reserved + DE_SIZE * nr,
        }

    def block_area(self, blkaddr):
        return self.dentry_area(blkaddr * BLK, DENTRY_SLOTS, DENTRY_BITMAP, 3)

    def inline_area(self, ino):
        size = ino.max_inline_data()
        nr = size * 8 // ((DE_SIZE + 8) * 8 + 1)
        bsz = (nr + 7) // 8
        reserved = size - (nr * (DE_SIZE + 8) + bsz)
        return self.dentry_area(ino.inline_data_off(), nr, bsz, reserved)

    def area_entries(self, area):
        """[(slot, name bytes, ino, hash, type, dentry byte offset)]"""
        b = self.buf
        out = []
        i = 0
        while i < area['max']:
            if not test_bit_le(b, area['bitmap'], i):
                i += 1
                continue
            de = area['dentry'] + DE_SIZE * i
            h, ino, nlen, ftype = struct.unpack_from('<IIHB', b, de)
            if nlen == 0:
                i += 1
                continue
            nslots = (nlen + 7) // 8
            if i + nslots > area['max']:
                raise F2fsError('dentry name past area end')
            no = area['filename'] + 8 * i
            out.append((i, bytes(b[no:no + nlen]), ino, h, ftype, de))
            i += nslots
        return out

    def dir_areas(self, ino):
        """[(area, blkaddr or None)] for every dentry area of a directory."""
        if ino.inline & INLINE_DENTRY:
            return [(self.inline_area(ino), None)]
        n = (ino.size + BLK - 1) // BLK
        out = []
        for a in self.block_map(ino, n):
            if a not in (0, 0xFFFFFFFF):
                out.append((self.block_area(a), a))
        return out

    def readdir(self, ino):
        ents = []
        for area, blk in self.dir_areas(ino):
            for e in self.area_entries(area):
                ents.append(e + (blk, area))
        return ents

    def lookup_path(self, path):
        """Resolve a '/'-separated path from the root to an Inode."""
        cur = self.inode(self.root_ino)
        for comp in [c for c in path.split('/') if c]:
            name = comp.encode()
            hit = [e for e in self.readdir(cur) if e[1] == name]
            if not hit:
                raise F2fsError('no such entry %r' % comp)
            cur = self.inode(hit[0][2])
        return cur

    def find_dentry(self, dirpath, name):
        d = self.lookup_path(dirpath)
        for e in self.readdir(d):
            if e[1] == name.encode():
                return e
        raise F2fsError('no dentry %r in %r' % (name, dirpath))

    def walk(self, ino=None, prefix='', depth=0):
        """Yield (path, Inode) for every entry reachable from the root."""
        if ino is None:
            ino = self.inode(self.root_ino)
            yield '', ino
        if depth > 64:
            return
        for e in self.readdir(ino):
            name = e[1]
            if name in (b'.', b'..'):
                continue
            child = self.inode(e[2])
            path = prefix + '/' + name.decode('utf-8', 'surrogateescape')
            yield path, child
            if child.is_dir():
                yield from self.walk(child, path, depth + 1)


def test_bit_le(buf, base, nr):
    """test_bit_le: the dentry bitmap is little-endian bit order."""
    return (buf[base + (nr >> 3)] >> (nr & 7)) & 1


def set_bit_le(buf, base, nr):
    buf[base + (nr >> 3)] |= 1 << (nr & 7)
