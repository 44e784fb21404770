"""File handles: name_to_handle_at(2) and open_by_handle_at(2) on the mount,
as NFS re-export and fstests' exportfs group use them.

A handle is the node id (the f2fs nid) and the inode's i_generation.  It
must open its file after the kernel forgot the inode (drop_caches), after
an unmount and a new daemon, and after renames; it must be ESTALE once
the file is deleted, also when its number is reused by another inode or
by another kind of node, and a forged handle must never mark the image
as needing fsck.  open_by_handle_at needs CAP_DAC_READ_SEARCH: root only.
"""

import ctypes
import ctypes.util
import errno
import os
import struct

import pytest

import fsutil
from test_write import FEATURES, RWImage, both_features

pytestmark = pytest.mark.skipif(os.geteuid() != 0,
                                reason="open_by_handle_at needs CAP_DAC_READ_SEARCH")

_libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
MAX_HANDLE_SZ = 128
FILEID_FUSE = 0x81          # FUSE's handle type: node id and generation
AT_FDCWD = -100


class _FileHandle(ctypes.Structure):
    _fields_ = [("handle_bytes", ctypes.c_uint), ("handle_type", ctypes.c_int),
                ("f_handle", ctypes.c_ubyte * MAX_HANDLE_SZ)]


def name_to_handle(path):
    """(handle_type, bytes) of `path` (not following a final symlink)."""
    fh = _FileHandle(handle_bytes=MAX_HANDLE_SZ)
    mount_id = ctypes.c_int()
    if _libc.name_to_handle_at(AT_FDCWD, os.fsencode(path), ctypes.byref(fh),
                               ctypes.byref(mount_id), 0) != 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e), path)
    return fh.handle_type, bytes(fh.f_handle[:fh.handle_bytes])


def open_by_handle(mnt, handle, flags=os.O_RDONLY):
    """A file descriptor for `handle` on the mount at `mnt`."""
    htype, raw = handle
    fh = _FileHandle(handle_bytes=len(raw), handle_type=htype)
    ctypes.memmove(fh.f_handle, raw, len(raw))
    mfd = os.open(mnt, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fd = _libc.open_by_handle_at(mfd, ctypes.byref(fh), flags)
        if fd < 0:
            e = ctypes.get_errno()
            raise OSError(e, os.strerror(e))
        return fd
    finally:
        os.close(mfd)


def handle_errno(mnt, handle):
    try:
        os.close(open_by_handle(mnt, handle))
    except OSError as e:
        return e.errno
    return 0


def fuse_handle(nodeid, generation):
    """A handle as FUSE encodes one: node id high and low words, generation."""
    return FILEID_FUSE, struct.pack("=III", nodeid >> 32, nodeid & 0xffffffff, generation)


def handle_fields(handle):
    htype, raw = handle
    assert htype == FILEID_FUSE and len(raw) >= 12, handle
    hi, lo, gen = struct.unpack("=III", raw[:12])
    return hi << 32 | lo, gen


def drop_caches():
    """Make the kernel forget every unused dentry and inode (FORGET to the daemon)."""
    os.sync()
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write("2\n")


def fd_path(fd):
    return os.readlink("/proc/self/fd/%d" % fd)


def read_fd(fd):
    with os.fdopen(fd, "rb") as f:
        return f.read()


def assert_clean(img, m):
    """The daemon marked nothing for fsck, and fsck.f2fs agrees."""
    assert "asks for fsck" not in m.stderr(), m.stderr()
    assert "corrupt" not in m.stderr().lower(), m.stderr()
    fsutil.fsck_check(img.image)


def make_tree(top):
    """Files, directories three deep, a hard link and a symlink; returns {rel: data}."""
    data = {}
    os.makedirs(os.path.join(top, "a", "b", "c"))
    for i, rel in enumerate(("f0", "a/f1", "a/b/f2", "a/b/c/f3")):
        data[rel] = (b"%d:" % i) * (1000 * i + 7)
        with open(os.path.join(top, rel), "wb") as f:
            f.write(data[rel])
    os.link(os.path.join(top, "a/f1"), os.path.join(top, "a/b/link"))
    data["a/b/link"] = data["a/f1"]
    os.symlink("f0", os.path.join(top, "sym"))
    return data


DIRS = ("", "a", "a/b", "a/b/c")


def check_handles(mnt, handles, data, moved=None):
    """Open every handle; files by content, directories by the path the
    kernel reconnects them to (through ".." lookups)."""
    moved = moved or (lambda rel: rel)
    for rel, h in sorted(handles.items()):
        fd = open_by_handle(mnt, h)
        if rel in data:
            assert read_fd(fd) == data[rel], rel
        else:
            try:
                want = os.path.join(mnt, moved(rel)).rstrip("/")
                assert fd_path(fd) == want, (rel, fd_path(fd))
                assert os.path.samestat(os.fstat(fd), os.stat(want))
            finally:
                os.close(fd)


@both_features
def test_handles_outlive_caches_and_mounts(f2fs_fuse, tmp_path, fset):
    img = RWImage(f2fs_fuse, tmp_path, features=FEATURES[fset])
    try:
        top = img.mount()
        data = make_tree(top)
        handles = {rel: name_to_handle(os.path.join(top, rel)) for rel in list(data) + list(DIRS)}
        sym = name_to_handle(os.path.join(top, "sym"))
        assert handles["a/b/link"] == handles["a/f1"]
        # node id = nid = st_ino for all but the root, which is FUSE's 1 with generation 0
        for rel in ("f0", "a", "a/b/c/f3"):
            nodeid, gen = handle_fields(handles[rel])
            assert nodeid == os.stat(os.path.join(top, rel)).st_ino
        assert handle_fields(handles[""]) == (1, 0)

        # the kernel still holds the inodes
        check_handles(top, handles, data)
        # it holds none: every handle is looked up by node id, directories by ".." too
        drop_caches()
        check_handles(top, handles, data)
        fd = open_by_handle(top, sym, os.O_PATH | os.O_NOFOLLOW)
        try:
            assert os.readlink("", dir_fd=fd) == "f0"
        finally:
            os.close(fd)
        # handles work for writing too
        fd = open_by_handle(top, handles["a/f1"], os.O_WRONLY | os.O_APPEND)
        os.write(fd, b"more")
        os.close(fd)
        data["a/f1"] += b"more"
        data["a/b/link"] = data["a/f1"]

        # a new daemon knows the same handles
        img.unmount()
        top = img.mount()
        check_handles(top, handles, data)

        # renames of the files' directories do not change them
        os.rename(os.path.join(top, "a"), os.path.join(top, "renamed"))
        os.mkdir(os.path.join(top, "new"))
        os.rename(os.path.join(top, "renamed/b/c"), os.path.join(top, "new/c"))
        img.unmount()
        top = img.mount()

        def moved(rel):
            rel = rel.replace("a/b/c", "new/c", 1) if rel.startswith("a/b/c") else rel
            return "renamed" + rel[1:] if rel.startswith("a") else rel
        drop_caches()
        check_handles(top, handles, data, moved)
        m = img.m
        img.unmount()
        assert_clean(img, m)
    finally:
        img.close()


def test_stale_handles(f2fs_fuse, tmp_path):
    """Deleted files are ESTALE: also once their nid belongs to a new inode
    (another generation) or to a direct node of another file, and handles
    nobody was given are ESTALE too, without marking the image for fsck."""
    img = RWImage(f2fs_fuse, tmp_path)
    try:
        top = img.mount()
        for name in ("gone", "gone-too", "kept"):
            with open(os.path.join(top, name), "wb") as f:
                f.write(name.encode())
        os.mkdir(os.path.join(top, "dir-gone"))
        h = {n: name_to_handle(os.path.join(top, n))
             for n in ("gone", "gone-too", "kept", "dir-gone")}
        nids = {n: handle_fields(h[n])[0] for n in h}
        assert nids["gone-too"] == nids["gone"] + 1, nids

        # unlinked while open: the kernel still has it, the handle works
        fd = os.open(os.path.join(top, "gone"), os.O_RDONLY)
        os.unlink(os.path.join(top, "gone"))
        drop_caches()
        assert read_fd(open_by_handle(top, h["gone"])) == b"gone"
        os.close(fd)

        os.unlink(os.path.join(top, "gone-too"))
        os.rmdir(os.path.join(top, "dir-gone"))
        drop_caches()
        for n in ("gone", "gone-too", "dir-gone"):
            assert handle_errno(top, h[n]) == errno.ESTALE, n

        # a new mount hands out the lowest free nids first: the new file's
        # inode takes the nid of "gone", its first direct node that of "gone-too"
        img.unmount()
        top = img.mount()
        big = os.path.join(top, "big")
        with open(big, "wb") as f:
            f.write(b"\1" * (8 << 20))
        assert os.stat(big).st_ino == nids["gone"]
        drop_caches()
        for n in ("gone", "gone-too", "dir-gone"):
            assert handle_errno(top, h[n]) == errno.ESTALE, n
        # the right generation opens the new file, and only that one
        new = name_to_handle(big)
        assert handle_fields(new)[0] == nids["gone"]
        assert handle_fields(new)[1] != handle_fields(h["gone"])[1]
        assert handle_errno(top, new) == 0
        assert read_fd(open_by_handle(top, h["kept"])) == b"kept"

        # handles that no reply ever carried
        _, root_gen = handle_fields(name_to_handle(top))
        st = os.stat(top)       # st_ino: the root's nid, which is no node id
        kept_gen = handle_fields(h["kept"])[1]
        for nodeid in (2, st.st_ino, 1 << 31, 0xffffffff):
            assert handle_errno(top, fuse_handle(nodeid, 0)) == errno.ESTALE, nodeid
        # the node id is the nid, not just its low 32 bits
        assert handle_errno(top, fuse_handle((1 << 32) + nids["kept"], kept_gen)) \
            == errno.ESTALE
        assert handle_errno(top, fuse_handle(1, root_gen + 1)) == errno.ESTALE
        assert handle_errno(top, fuse_handle(nids["kept"], kept_gen ^ 1)) == errno.ESTALE
        m = img.m
        img.unmount()
        assert_clean(img, m)
        # and the image mounts read-write again (no fsck flag in the checkpoint)
        top = img.mount()
        with open(os.path.join(top, "after"), "w") as f:
            f.write("x")
        img.finish()
    finally:
        img.close()


@pytest.mark.parametrize("with_key", [True, False], ids=["key", "nokey"])
def test_handles_in_encrypted_directories(mount, fixture_image, fixtures_dir, with_key):
    """".." is found in an encrypted directory with or without its key, and
    the kernel reconnects a directory by its plaintext or no-key name."""
    opts = ("ro", "key_file=" + os.path.join(fixtures_dir, "crypt.key")) if with_key \
        else ("ro",)
    with mount(fixture_image("crypt"), options=opts) as m:
        sub = [n for n in os.listdir(os.path.join(m.path, "enc"))
               if os.path.isdir(os.path.join(m.path, "enc", n)) and
               any(os.path.isdir(os.path.join(m.path, "enc", n, c))
                   for c in os.listdir(os.path.join(m.path, "enc", n)))]
        assert sub, os.listdir(os.path.join(m.path, "enc"))
        parent = os.path.join(m.path, "enc", sub[0])
        nested = [os.path.join(parent, c) for c in os.listdir(parent)
                  if os.path.isdir(os.path.join(parent, c))][0]
        handles = {p: name_to_handle(p) for p in (parent, nested)}
        drop_caches()
        for p, h in handles.items():
            fd = open_by_handle(m.path, h)
            try:
                assert fd_path(fd) == p
            finally:
                os.close(fd)
    assert "asks for fsck" not in m.stderr()
