"""Quota files and project ids between f2fs-fuse and the kernel, both ways,
on a `mkfs.f2fs -g android` image (quota_ino, project_quota).

f2fs-fuse writes a tree (every kind of change that moves usage, a
project-inherit directory); fsck.f2fs agrees with its quota files. The
kernel mounts the image with quota on (its log must not say the files are
corrupt or cannot be loaded), reads the project ids f2fs-fuse set, and
changes the tree, updating f2fs-fuse's quota trees in place; fsck.f2fs must
agree with them again. f2fs-fuse then reports exactly what the files on the
image use from the kernel's quota files, reads the kernel's project ids,
writes more, and the kernel mounts that cleanly once more."""

import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "integration"))

import fsutil  # noqa: E402
import run_guest as G  # noqa: E402
import test_quota as Q  # noqa: E402
from test_kernel import assert_guest_ok, f2fs_fuse, guest  # noqa: E402,F401

MiB = 1 << 20

# FS_IOC_FSGETXATTR in the guest: "path<TAB>projid<TAB>PROJINHERIT" lines
PROJIDS = (
    "import fcntl, os, struct, sys\n"
    "for p in sys.argv[1:]:\n"
    "    fd = os.open(p, os.O_RDONLY)\n"
    "    b = bytearray(28)\n"
    "    fcntl.ioctl(fd, 0x801C581F, b, True)\n"
    "    os.close(fd)\n"
    "    x, _, _, prj = struct.unpack_from('<IIII', b)\n"
    "    print('%s\\t%d\\t%d' % (os.path.relpath(p, '/mnt/f2fs'), prj, bool(x & 0x200)))\n"
)

GUEST_QUOTA = """set -e
. lib/ktest.sh
cat >/tmp/projids.py <<'EOF'
""" + PROJIDS + """EOF
kmount
python3 /tmp/projids.py $MNT/proj $MNT/proj/f $MNT/proj/sub $MNT/proj/sub/g $MNT/outside \
    >$KTEST_OUT/projids.txt
# the kernel's changes: new files (in the project too), growth, chown, unlink
mkdir $MNT/k
i=0
while [ $i -lt 40 ]; do echo kernel >$MNT/k/f$i; i=$((i+1)); done
dd if=/dev/zero of=$MNT/k/big bs=4k count=300 2>/dev/null
chown 1000:1000 $MNT/k/big
dd if=/dev/zero of=$MNT/proj/kfile bs=4k count=10 2>/dev/null
mkdir $MNT/proj/ksub
dd if=/dev/zero bs=4k count=50 2>/dev/null >>$MNT/a/b/mid
rm -f $MNT/a/big $MNT/k/f3 $MNT/outside
kumount
kmount
python3 /tmp/projids.py $MNT/proj/kfile $MNT/proj/ksub >$KTEST_OUT/kprojids.txt
kumount
"""

GUEST_MOUNT = """set -e
. lib/ktest.sh
kmount
ls -R $MNT >/dev/null
echo more >$MNT/k/after
kumount
"""


def parse_projids(text):
    return {p: (int(prj), inh == "1") for p, prj, inh in
            (ln.split("\t") for ln in text.splitlines())}


def test_quota_and_project_ids_both_ways(guest, f2fs_fuse, tmp_path):
    Q.need_tools()
    img = Q.Image(f2fs_fuse)
    try:
        p = img.mount()
        Q.workload(p)
        os.mkdir(os.path.join(p, "proj"))
        Q.write(os.path.join(p, "outside"), 30000)
        assert fsutil.run(["chattr", "-p", "42", "+P", os.path.join(p, "proj")]).returncode == 0
        Q.write(os.path.join(p, "proj", "f"), 100000)
        os.mkdir(os.path.join(p, "proj", "sub"))
        Q.write(os.path.join(p, "proj", "sub", "g"), 10)
        assert fsutil.run(["chattr", "-p", "7", os.path.join(p, "outside")]).returncode == 0
        mine = {rel: Q.get_projid(os.path.join(p, rel))
                for rel in ("proj", "proj/f", "proj/sub", "proj/sub/g", "outside")}
        Q.check_usage(p)
        img.unmount()
        fsutil.fsck_check(img.image)

        r = G.run(GUEST_QUOTA, [img.image])
        assert_guest_ok(r, "the kernel mounts f2fs-fuse's quota files and changes the tree")
        assert parse_projids(r.text("projids.txt")) == mine
        assert parse_projids(r.text("kprojids.txt")) == {"proj/kfile": (42, False),
                                                        "proj/ksub": (42, True)}
        # the kernel updated f2fs-fuse's trees in place: fsck agrees with them
        fsutil.fsck_check(img.image)

        p = img.mount()
        use = Q.check_usage(p)                  # the kernel's files, read by f2fs-fuse
        assert use["project"][42][1] == 6       # proj, f, sub, g, kfile, ksub
        assert Q.get_projid(os.path.join(p, "proj", "kfile")) == (42, False)
        Q.write(os.path.join(p, "proj", "after"), 50000)
        os.chown(os.path.join(p, "k", "big"), 2000, 2000)
        Q.check_usage(p)
        img.unmount()
        fsutil.fsck_check(img.image)

        r = G.run(GUEST_MOUNT, [img.image])
        assert_guest_ok(r, "the kernel mounts the quota files f2fs-fuse rewrote")
        fsutil.fsck_check(img.image)
    finally:
        img.close()


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))
