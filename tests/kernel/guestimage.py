"""Build what the kernel test guest boots: an uncompressed vmlinux taken out of
Debian's bzImage, and a small initramfs holding busybox, the f2fs/virtio/crypto
kernel modules, a minimal python3 runtime and the guest's init script.

Everything lands in the cache folder ($KERNEL_TEST_CACHE, default
/var/tmp/f2fs-fuse-kernel) and is rebuilt only when an input changed.

    python3 guestimage.py build [--force]     build (or reuse) the cache, print its paths
    python3 guestimage.py info                print what the cache holds

Python standard library only.
"""

import glob
import hashlib
import io
import json
import lzma
import os
import re
import shutil
import stat
import struct
import subprocess
import sys
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_CACHE = "/var/tmp/f2fs-fuse-kernel"
BUILDER_VERSION = "3"

# Modules wanted in the guest.  Their dependencies come from modules.dep;
# names that are built into this kernel are skipped.
WANTED_MODULES = [
    # block devices
    "virtio_ring", "virtio", "virtio_pci_modern_dev", "virtio_pci_legacy_dev",
    "virtio_pci", "virtio_blk",
    # f2fs and what it needs at mount time ("softdep f2fs pre: crc32")
    "crc32_generic", "crc32c_generic", "lz4_compress", "lz4hc_compress",
    "zstd_compress", "f2fs",
    # the quota format of quota_ino filesystems (vfsv1 trees); without it the
    # kernel mounts them with quota off ("Failed to enable quota tracking")
    "quota_tree", "quota_v2",
    # fscrypt algorithms: AES-XTS/CTS, Adiantum, AES-128-CBC-ESSIV (cbc,
    # sha256 and aes are built in)
    "ecb", "xts", "cts", "sha512_generic", "libpoly1305", "libchacha",
    "chacha_generic", "poly1305_generic", "nhpoly1305", "adiantum", "essiv",
]

# Host files the guest runs (with the shared libraries ldd names).
GUEST_PROGRAMS = ["/usr/bin/python3"]
BUSYBOX = "/bin/busybox"
GUEST_PYTHON_IMPORTS = ["os", "sys", "stat", "errno", "hashlib", "struct", "time",
                        "random", "json", "traceback", "socket", "runpy"]


class Unavailable(RuntimeError):
    """Something the guest is made of is not installed (a kernel, busybox)."""


def cache_dir():
    return os.environ.get("KERNEL_TEST_CACHE") or DEFAULT_CACHE


# ---------------------------------------------------------------- kernel

def installed_kernels():
    """[(version, vmlinuz path)] of /boot/vmlinuz-* with modules present, newest first."""
    out = []
    for p in glob.glob("/boot/vmlinuz-*"):
        ver = os.path.basename(p)[len("vmlinuz-"):]
        if os.path.isfile(os.path.join("/lib/modules", ver, "modules.dep")):
            out.append((ver, p))

    def key(item):
        return [int(x) if x.isdigit() else x for x in re.split(r"[.-]", item[0])]
    out.sort(key=key, reverse=True)
    return out


def pick_kernel():
    want = os.environ.get("KERNEL_TEST_KVER")
    ks = installed_kernels()
    if want:
        ks = [k for k in ks if k[0] == want]
    if not ks:
        raise Unavailable("no /boot/vmlinuz-* with /lib/modules/VERSION/modules.dep "
                           "(install linux-image-amd64)%s" % (
                               " matching KERNEL_TEST_KVER=%s" % want if want else ""))
    return ks[0]


_MAGICS = [
    ("xz", b"\xfd7zXZ\x00"),
    ("zstd", b"\x28\xb5\x2f\xfd"),
    ("gzip", b"\x1f\x8b\x08"),
    ("lzma", b"\x5d\x00\x00"),
    ("bzip2", b"BZh"),
    ("lz4", b"\x02\x21\x4c\x18"),
]


def _decompress_at(data, kind, off):
    """Decompress the stream starting at `off`; bytes, or None if it is not one."""
    blob = data[off:]
    try:
        if kind == "xz":
            return lzma.LZMADecompressor(format=lzma.FORMAT_XZ).decompress(blob)
        if kind == "lzma":
            return lzma.LZMADecompressor(format=lzma.FORMAT_ALONE).decompress(blob)
        if kind == "gzip":
            return zlib.decompressobj(31).decompress(blob)
        if kind == "bzip2":
            import bz2
            return bz2.BZ2Decompressor().decompress(blob)
        tool = {"zstd": ["zstd", "-dcq"], "lz4": ["lz4", "-dcq"]}[kind]
        if not shutil.which(tool[0]):
            return None
        r = subprocess.run(tool, input=blob, stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, timeout=300)
        # Trailing bytes after the frame make zstd complain; keep what it wrote.
        return r.stdout or None
    except (lzma.LZMAError, zlib.error, OSError, EOFError, ValueError):
        return None


def extract_vmlinux(bzimage):
    """The uncompressed ELF kernel inside a bzImage (the extract-vmlinux way:
    look for each compressor's magic, try to decompress from there, keep the
    first result that is an ELF file)."""
    with open(bzimage, "rb") as f:
        data = f.read()
    if data[:4] == b"\x7fELF":
        return data
    for kind, magic in _MAGICS:
        start = 0
        tries = 0
        while tries < 64:
            off = data.find(magic, start)
            if off < 0:
                break
            tries += 1
            start = off + 1
            out = _decompress_at(data, kind, off)
            if out and out[:4] == b"\x7fELF":
                return out
    raise RuntimeError("no compressed ELF kernel found inside %s" % bzimage)


def elf_has_pvh_note(elf):
    """True if a 64-bit ELF has the Xen PVH entry note (XEN_ELFNOTE_PHYS32_ENTRY),
    which lets qemu -kernel boot the ELF directly."""
    if elf[:4] != b"\x7fELF" or elf[4] != 2:
        return False
    e_phoff, = struct.unpack_from("<Q", elf, 0x20)
    e_phentsize, e_phnum = struct.unpack_from("<HH", elf, 0x36)
    for i in range(e_phnum):
        p_type, _flags, p_offset, _va, _pa, p_filesz = struct.unpack_from(
            "<IIQQQQ", elf, e_phoff + i * e_phentsize)
        if p_type != 4:       # PT_NOTE
            continue
        pos, end = p_offset, p_offset + p_filesz
        while pos + 12 <= end:
            namesz, descsz, ntype = struct.unpack_from("<III", elf, pos)
            name = elf[pos + 12:pos + 12 + namesz].rstrip(b"\0")
            if name == b"Xen" and ntype == 18:
                return True
            pos += 12 + ((namesz + 3) & ~3) + ((descsz + 3) & ~3)
    return False


# ---------------------------------------------------------------- modules

def _modname(path):
    base = os.path.basename(path)
    base = re.sub(r"\.ko(\.(xz|zst|gz))?$", "", base)
    return base.replace("-", "_")


def read_modules_dep(kver):
    """{module name: (relative path, [dependency names])}."""
    root = os.path.join("/lib/modules", kver)
    mods = {}
    with open(os.path.join(root, "modules.dep")) as f:
        for line in f:
            left, _, right = line.partition(":")
            left = left.strip()
            if not left:
                continue
            mods[_modname(left)] = (left, [_modname(d) for d in right.split()])
    return mods


def builtin_modules(kver):
    names = set()
    p = os.path.join("/lib/modules", kver, "modules.builtin")
    if os.path.isfile(p):
        with open(p) as f:
            for line in f:
                if line.strip():
                    names.add(_modname(line.strip()))
    return names


def resolve_modules(kver, wanted):
    """Load order (dependencies first) of `wanted` and everything they need:
    [(name, path under /lib/modules/KVER)].  Built-in names are dropped;
    a name neither built in nor modular is an error."""
    mods = read_modules_dep(kver)
    builtin = builtin_modules(kver)
    order = []
    seen = set()

    def visit(name, chain):
        if name in seen:
            return
        if name not in mods:
            if name in builtin:
                seen.add(name)
                return
            raise RuntimeError("module %s (needed by %s) not found for kernel %s"
                               % (name, " <- ".join(chain) or "the guest", kver))
        seen.add(name)
        for d in mods[name][1]:
            visit(d, chain + [name])
        order.append((name, mods[name][0]))

    for w in wanted:
        visit(w, [])
    return order


def module_bytes(kver, rel):
    """A module file's contents, decompressed if it is .ko.xz/.ko.zst/.ko.gz."""
    path = os.path.join("/lib/modules", kver, rel)
    with open(path, "rb") as f:
        data = f.read()
    if path.endswith(".xz"):
        return lzma.decompress(data)
    if path.endswith(".gz"):
        return zlib.decompress(data, 31)
    if path.endswith(".zst"):
        return subprocess.run(["zstd", "-dcq"], input=data, stdout=subprocess.PIPE,
                              check=True, timeout=120).stdout
    return data


# ---------------------------------------------------------------- cpio

class Cpio:
    """A writer of "newc" cpio archives (what the kernel's initramfs unpacker
    reads).  Entries are kept in memory and written in the order added;
    parents are created automatically."""

    def __init__(self):
        self.buf = io.BytesIO()
        self.ino = 1
        self.dirs = set()

    def _header(self, name, mode, size, mtime=0, nlink=1, rdev=(0, 0)):
        nb = name.encode() + b"\0"
        hdr = "070701" + "".join("%08X" % v for v in (
            self.ino, mode, 0, 0, nlink, int(mtime), size, 0, 0, rdev[0], rdev[1],
            len(nb), 0))
        self.ino += 1
        self.buf.write(hdr.encode() + nb)
        self._pad()

    def _pad(self):
        n = (-self.buf.tell()) % 4
        if n:
            self.buf.write(b"\0" * n)

    def mkdir(self, name, mode=0o755):
        name = name.strip("/")
        if not name or name in self.dirs:
            return
        parent = os.path.dirname(name)
        if parent:
            self.mkdir(parent)
        self.dirs.add(name)
        self._header(name, stat.S_IFDIR | mode, 0, nlink=2)

    def file(self, name, data, mode=0o644, mtime=0):
        name = name.strip("/")
        self.mkdir(os.path.dirname(name))
        self._header(name, stat.S_IFREG | mode, len(data), mtime=mtime)
        self.buf.write(data)
        self._pad()

    def symlink(self, name, target):
        name = name.strip("/")
        self.mkdir(os.path.dirname(name))
        t = target.encode()
        self._header(name, stat.S_IFLNK | 0o777, len(t))
        self.buf.write(t)
        self._pad()

    def node(self, name, kind, mode, major, minor):
        name = name.strip("/")
        self.mkdir(os.path.dirname(name))
        self._header(name, kind | mode, 0, rdev=(major, minor))

    def copy(self, host_path, name=None, mode=None):
        st = os.stat(host_path)
        with open(host_path, "rb") as f:
            data = f.read()
        self.file(name or host_path, data, mode if mode is not None else stat.S_IMODE(st.st_mode),
                  mtime=st.st_mtime)

    def finish(self):
        self._header("TRAILER!!!", 0, 0)
        n = (-self.buf.tell()) % 512
        self.buf.write(b"\0" * n)
        return self.buf.getvalue()


# ---------------------------------------------------------------- userspace

def shared_libs(program):
    """Paths of the shared libraries (and the loader) `program` needs."""
    r = subprocess.run(["ldd", program], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, timeout=60)
    libs = []
    for line in r.stdout.splitlines():
        m = re.search(r"=>\s*(/\S+)", line) or re.match(r"\s*(/\S+)", line)
        if m:
            libs.append(m.group(1))
    return libs


def python_stdlib_files(python, imports):
    """The stdlib source files (and their cached bytecode) that `python -S`
    loads for `imports`, plus every encodings module.  [(host path)]."""
    code = ("import sys\n"
            "for m in %r:\n"
            "    try: __import__(m)\n"
            "    except ImportError: pass\n"
            "import encodings, os\n"
            "d = os.path.dirname(encodings.__file__)\n"
            "for n in os.listdir(d):\n"
            "    if n.endswith('.py'): print(os.path.join(d, n))\n"
            "for m in list(sys.modules.values()):\n"
            "    f = getattr(m, '__file__', None)\n"
            "    if f: print(f)\n" % (imports,))
    r = subprocess.run([python, "-S", "-E", "-c", code], stdout=subprocess.PIPE,
                       text=True, check=True, timeout=60)
    files = set()
    for f in r.stdout.split():
        files.add(f)
        if f.endswith(".py"):
            try:
                import importlib.util
                pyc = importlib.util.cache_from_source(f)
            except Exception:
                pyc = None
            if pyc and os.path.isfile(pyc):
                files.add(pyc)
    return sorted(files)


def build_initramfs(kver, init_script):
    """The base initramfs (uncompressed newc cpio bytes) and a description."""
    c = Cpio()
    for d in ("bin", "sbin", "usr/bin", "usr/sbin", "proc", "sys", "dev", "tmp", "mnt",
              "out", "ktest", "etc", "root", "run"):
        c.mkdir(d)
    c.node("dev/console", stat.S_IFCHR, 0o600, 5, 1)
    c.node("dev/null", stat.S_IFCHR, 0o666, 1, 3)
    c.copy(BUSYBOX, "bin/busybox", 0o755)
    applets = subprocess.run([BUSYBOX, "--list"], stdout=subprocess.PIPE, text=True,
                             check=True, timeout=60).stdout.split()
    for a in applets:
        if a not in ("busybox",):
            c.symlink("bin/" + a, "busybox")
    c.file("init", init_script.encode(), 0o755)
    c.file("etc/passwd", b"root:x:0:0:root:/root:/bin/sh\n")
    c.file("etc/group", b"root:x:0:\n")

    # modules, decompressed, in load order
    order = resolve_modules(kver, WANTED_MODULES)
    lines = []
    for name, rel in order:
        c.file("lib/modules/%s.ko" % name, module_bytes(kver, rel))
        lines.append(name)
    c.file("ktest/modules.order", ("\n".join(lines) + "\n").encode())

    # python3 and its libraries
    progs = {}
    copied = set()
    for prog in GUEST_PROGRAMS:
        real = os.path.realpath(prog)
        c.copy(real, real.lstrip("/"), 0o755)
        if real != prog:
            c.symlink(prog.lstrip("/"), os.path.basename(real))
        for lib in shared_libs(real):
            if lib not in copied:
                copied.add(lib)
                c.copy(os.path.realpath(lib), lib.lstrip("/"), 0o755)
        progs[prog] = real
    py = os.path.realpath(GUEST_PROGRAMS[0])
    stdlib = python_stdlib_files(py, GUEST_PYTHON_IMPORTS)
    for f in stdlib:
        if f.startswith("/usr/lib/python3"):
            c.copy(f, f.lstrip("/"))
    desc = {"modules": lines, "programs": progs, "python_files": len(stdlib),
            "busybox_applets": len(applets)}
    return c.finish(), desc


def _fingerprint(kver, vmlinuz):
    h = hashlib.sha256()
    h.update(BUILDER_VERSION.encode())
    h.update(kver.encode())
    for p in [vmlinuz, BUSYBOX, os.path.realpath(GUEST_PROGRAMS[0]),
              os.path.join(HERE, "guest", "init"), os.path.abspath(__file__)]:
        st = os.stat(p)
        h.update(("%s %d %d\n" % (p, st.st_size, st.st_mtime_ns)).encode())
    with open(os.path.join(HERE, "guest", "init"), "rb") as f:
        h.update(f.read())
    h.update(repr(WANTED_MODULES).encode())
    return h.hexdigest()[:16]


def _write_atomic(path, data):
    tmp = path + ".tmp.%d" % os.getpid()
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def build(force=False, log=print):
    """Build (or reuse) the cache.  Returns its info dict:
    kernel (path qemu boots), kver, pvh (bool), initramfs, cache."""
    kver, vmlinuz = pick_kernel()
    for prog in [BUSYBOX] + GUEST_PROGRAMS:
        if not os.access(prog, os.X_OK):
            raise Unavailable("%s is missing (run tests/kernel/setup.sh)" % prog)
    cache = cache_dir()
    os.makedirs(cache, exist_ok=True)
    info_path = os.path.join(cache, "guest.json")
    fp = _fingerprint(kver, vmlinuz)
    if not force and os.path.isfile(info_path):
        with open(info_path) as f:
            info = json.load(f)
        if info.get("fingerprint") == fp and all(
                os.path.isfile(info[k]) for k in ("kernel", "initramfs")):
            return info

    log("kernel-test: preparing guest for kernel %s in %s" % (kver, cache))
    vmlinux = os.path.join(cache, "vmlinux-" + kver)
    pvh = False
    try:
        elf = extract_vmlinux(vmlinuz)
        pvh = elf_has_pvh_note(elf)
        if pvh:
            _write_atomic(vmlinux, elf)
        log("kernel-test: vmlinux %d bytes, PVH note: %s" % (len(elf), "yes" if pvh else "no"))
    except RuntimeError as e:
        log("kernel-test: %s; booting the bzImage" % e)
    kernel = vmlinux if pvh else vmlinuz

    with open(os.path.join(HERE, "guest", "init")) as f:
        init_script = f.read()
    cpio, desc = build_initramfs(kver, init_script)
    initramfs = os.path.join(cache, "initramfs-%s.cpio" % kver)
    _write_atomic(initramfs, cpio)
    log("kernel-test: initramfs %d bytes, %d modules" % (len(cpio), len(desc["modules"])))
    info = {"fingerprint": fp, "kver": kver, "vmlinuz": vmlinuz, "kernel": kernel,
            "pvh": pvh, "initramfs": initramfs, "cache": cache}
    info.update(desc)
    _write_atomic(info_path, (json.dumps(info, indent=1) + "\n").encode())
    return info


def main(argv):
    import argparse
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("cmd", choices=("build", "info"))
    ap.add_argument("--force", action="store_true")
    a = ap.parse_args(argv)
    if a.cmd == "build":
        info = build(force=a.force)
    else:
        with open(os.path.join(cache_dir(), "guest.json")) as f:
            info = json.load(f)
    for k in ("kver", "kernel", "pvh", "initramfs"):
        print("%s: %s" % (k, info[k]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
