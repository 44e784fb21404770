"""Casefold checks run on either side (the kernel's mount in the guest, an
f2fs-fuse mount on the host): the same code asks both drivers.  Names travel
hex-encoded, one per line, so any bytes survive.

  python3 casefold_guest.py create DIR NAMES      create each name (content: the name)
  python3 casefold_guest.py fsync DIR NAMES       the same, each file fsync()ed
  python3 casefold_guest.py try DIR NAMES         the same, printing 0 or -errno per name
  python3 casefold_guest.py probe DIR PROBES      PROBES lines: NAME<TAB>SPELLING...;
                                                  prints per line the inode of the name
                                                  and of each spelling (or -errno)
  python3 casefold_guest.py list DIR              the names readdir shows
  python3 casefold_guest.py unlink DIR NAME       unlink by hex name
  python3 casefold_guest.py casefold DIR          mkdir DIR and set FS_CASEFOLD_FL
"""
import fcntl
import os
import struct
import sys

FS_IOC_GETFLAGS = 0x80086601
FS_IOC_SETFLAGS = 0x40086602
FS_CASEFOLD_FL = 0x40000000


def lines(path):
    with open(path, "rb") as f:
        return [ln.rstrip(b"\n") for ln in f if ln.strip()]


def ino_of(path):
    try:
        return str(os.lstat(path).st_ino)
    except OSError as e:
        return str(-e.errno)


def create(d, names, sync=False, tolerant=False):
    out = []
    for h in lines(names):
        n = bytes.fromhex(h.decode())
        try:
            with open(os.path.join(d, n), "xb") as f:
                f.write(n)
                if sync:
                    f.flush()
                    os.fsync(f.fileno())
            out.append("0")
        except OSError as e:
            if not tolerant:
                raise
            out.append(str(-e.errno))
    return "\n".join(out) + "\n"


def probe(d, probes):
    out = []
    for ln in lines(probes):
        names = [bytes.fromhex(x.decode()) for x in ln.split(b"\t")]
        out.append("\t".join(ino_of(os.path.join(d, n)) for n in names))
    return "\n".join(out) + "\n"


def listdir(d):
    return "".join(n.hex() + "\n" for n in sorted(os.listdir(d)))


def casefold(d):
    os.mkdir(d)
    set_casefold(d)


def set_casefold(d):
    fd = os.open(d, os.O_RDONLY)
    try:
        buf = bytearray(8)
        fcntl.ioctl(fd, FS_IOC_GETFLAGS, buf)
        flags = struct.unpack("<q", bytes(buf))[0] | FS_CASEFOLD_FL
        fcntl.ioctl(fd, FS_IOC_SETFLAGS, bytearray(struct.pack("<q", flags)))
    finally:
        os.close(fd)


def main(argv):
    d = os.fsencode(argv[1])
    if argv[0] in ("create", "fsync"):
        create(d, argv[2], argv[0] == "fsync")
    elif argv[0] == "try":
        sys.stdout.write(create(d, argv[2], tolerant=True))
    elif argv[0] == "probe":
        sys.stdout.write(probe(d, argv[2]))
    elif argv[0] == "list":
        sys.stdout.write(listdir(d))
    elif argv[0] == "unlink":
        os.unlink(os.path.join(d, bytes.fromhex(argv[2])))
    elif argv[0] == "casefold":
        casefold(d)
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
