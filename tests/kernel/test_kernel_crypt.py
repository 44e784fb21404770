"""fscrypt-encrypted images handed between f2fs-fuse and the kernel's f2fs,
both ways, with the same raw keys on both sides.

f2fs-fuse -> kernel: mkfs.f2fs -O encrypt; a read-write f2fs-fuse mount
    gets a v2 key and a v1 key (f2fs-fusectl add_key), one directory per
    policy kind (guest/ktest_guest.py CRYPT_KINDS: AES-256-XTS/CTS with
    padding 4, 8, 16 and 32, IV_INO_LBLK_64, IV_INO_LBLK_32, Adiantum with
    DIRECT_KEY, AES-128-CBC-ESSIV/CTS, v1 AES-256 and v1 Adiantum) set with
    f2fs-fusectl set_policy, each filled with crypt_tree (sizes around the
    block, a sparse file, truncated files, names from 1 to 255 bytes around
    the padding and no-key limits, UTF-8, a directory of several dentry
    blocks, nesting, symlinks short and long, hard links, a fifo, xattrs);
    the manifest the mount shows, unmount, fsck.f2fs clean, and the
    no-key view of a mount without keys.  In the guest the kernel must
    show that no-key view before the keys are added (its no-key names,
    no-key symlink targets and ENOKEY are the reference), compute the same
    key identifier, read every policy as set, and with the keys show
    exactly f2fs-fuse's manifest, with a clean kernel log.

kernel -> f2fs-fuse: in the same guest run the kernel changes every
    encrypted directory (crypt_more: new files, appends, overwrites,
    truncates, renames within a policy, unlinks, new subdirectories,
    links, xattrs), and makes new directories with policies of its own
    (FS_IOC_SET_ENCRYPTION_POLICY) filled with a smaller crypt_tree; it
    unmounts, and after a remount takes its no-key manifest and, with the
    keys, its manifest.  On the host fsck.f2fs must find the image clean,
    f2fs-fuse with the keys (key_file=, v1_key_file=) must show exactly
    the kernel's manifest, without them exactly its no-key manifest, and
    f2fs-fusectl get_policy must read the kernel's policies.

Two configurations: plain `encrypt`, and `encrypt` with the extra inode
attributes (inode checksums, flexible inline xattrs, crtime).
"""

import hashlib
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "tests", "integration"))
sys.path.insert(0, os.path.join(HERE, "guest"))
sys.path.insert(0, HERE)

import fsutil  # noqa: E402
import manifest as M  # noqa: E402
import run_guest as G  # noqa: E402
import ktest_guest as KG  # noqa: E402
from test_kernel import (EXTRA, MiB, assert_guest_ok, assert_same, f2fs_fuse,  # noqa: E402,F401
                         guest, kernel_manifest, mkfs)

# name: (image size, mkfs -O features)
CRYPT_CONFIGS = {
    "encrypt": (256 * MiB, "encrypt"),
    "encrypt-extra": (256 * MiB, "encrypt," + EXTRA),
}

# The same raw keys on both sides (64 bytes: enough for every mode, v1 included).
KEY_V2 = hashlib.sha512(b"f2fs-fuse kernel crypt test: v2 key").digest()
KEY_V1 = hashlib.sha512(b"f2fs-fuse kernel crypt test: v1 key").digest()
V1_DESC = "f2f5f05ec0ffee01"

# f2fs-fuse sets a policy of every kind; the kernel sets these (a lighter
# tree each: the guest writes under emulation).
HOST_KINDS = sorted(KG.CRYPT_KINDS)
KERNEL_KINDS = ("v2-default", "v2-iv64", "v2-iv32", "v2-adiantum", "v2-aes128", "v1-default")


def host_dir(kind):
    return "enc-" + kind


def kernel_dir(kind):
    return "kernel-" + kind


# ---------------------------------------------------------------- f2fs-fusectl

@pytest.fixture(scope="session")
def fusectl(f2fs_fuse):
    path = os.environ.get("F2FS_FUSECTL") or os.path.join(os.path.dirname(f2fs_fuse),
                                                          "f2fs-fusectl")
    if not os.access(path, os.X_OK):
        pytest.fail("f2fs-fusectl not found at %s (set F2FS_FUSECTL)" % path)
    return path


def ctl(fusectl, *args):
    r = fsutil.run([fusectl] + list(args), timeout=60)
    assert r.returncode == 0, "f2fs-fusectl %s exited %d: %s" % (
        " ".join(args), r.returncode, r.stdout)
    return r.stdout


def fusectl_policy_args(kind):
    """f2fs-fusectl set_policy options for a CRYPT_KINDS entry."""
    version, contents, filenames, flags = KG.CRYPT_KINDS[kind]
    args = ["--contents=" + contents, "--filenames=" + filenames,
            "--padding=%d" % (4 << (flags & 3))]
    if flags & KG.FSCRYPT_POLICY_FLAG_DIRECT_KEY:
        args.append("--direct-key")
    if flags & KG.FSCRYPT_POLICY_FLAG_IV_INO_LBLK_64:
        args.append("--iv-ino-lblk-64")
    if flags & KG.FSCRYPT_POLICY_FLAG_IV_INO_LBLK_32:
        args.append("--iv-ino-lblk-32")
    return args


def fusectl_policy_text(path, kind, key):
    """What f2fs-fusectl get_policy prints for a directory of this kind."""
    version, contents, filenames, flags = KG.CRYPT_KINDS[kind]
    names = ["PAD_%d" % (4 << (flags & 3))]
    for bit, name in ((KG.FSCRYPT_POLICY_FLAG_DIRECT_KEY, "DIRECT_KEY"),
                      (KG.FSCRYPT_POLICY_FLAG_IV_INO_LBLK_64, "IV_INO_LBLK_64"),
                      (KG.FSCRYPT_POLICY_FLAG_IV_INO_LBLK_32, "IV_INO_LBLK_32")):
        if flags & bit:
            names.append(name)
    return ("Encryption policy for %s:\n"
            "\tPolicy version: %d\n"
            "\tMaster key %s: %s\n"
            "\tContents encryption mode: %s\n"
            "\tFilenames encryption mode: %s\n"
            "\tFlags: %s\n" % (path, version, "identifier" if version == 2 else "descriptor",
                               key, contents, filenames, ", ".join(names)))


# ---------------------------------------------------------------- views

def fuse_walk(f2fs_fuse, image, mnt, options):
    with fsutil.mounted(f2fs_fuse, image, mnt, options) as m:
        w = M.walk(m.path)
        assert w.errors == [], "f2fs-fuse could not list: %s" % w.errors[:10]
    return w.manifest


def nokey_sanity(man, dirs):
    """The no-key view hides what it must: no plaintext top-level names in
    the encrypted directories, and ENOKEY for file contents."""
    enc = [p for p in man.entries if p.split("/")[0] in dirs and "/" in p]
    assert len(enc) >= 40 * len(dirs), "too few entries in the no-key view"
    leaked = [p for p in enc if p.split("/", 1)[1] in ("f4096", "holes", "many", "d1")]
    assert not leaked, "plaintext names without the key: %s" % leaked[:5]
    refused = [p for p in enc if man[p]["type"] == "f" and int(man[p]["size"]) > 0]
    assert refused and all(man[p]["content"].startswith("ERR:") for p in refused), \
        "file contents readable without the key"


def policies(text, prefix):
    """{directory name: (kind, key)} from get-policy's lines."""
    out = {}
    for line in text.splitlines():
        path, kind, key = line.split("\t")
        assert path.startswith(prefix), line
        out[path[len(prefix):]] = (kind, key)
    return out


GUEST_CRYPT = """set -e
. lib/ktest.sh
addkeys() {{
	python3 -m ktest_guest add-key $MNT v2.key >$KTEST_OUT/$1.v2.id
	python3 -m ktest_guest add-key $MNT v1.key --descriptor {desc} >$KTEST_OUT/$1.v1.id
}}
# the f2fs-fuse image: the no-key view, then with the keys
kmount
kmanifest nokey-before.tsv
kumount
kmount
addkeys before
kmanifest before.tsv
python3 -m ktest_guest get-policy {host_dirs} >$KTEST_OUT/policies.txt
# the kernel's writes: changes in every encrypted directory, new
# directories with the kernel's own policies
python3 -m ktest_guest crypt-more {host_dirs} --seed 500 >$KTEST_OUT/more.log
v2=$(cat $KTEST_OUT/before.v2.id)
{new_dirs}
python3 -m ktest_guest get-policy {kernel_dirs} >$KTEST_OUT/kernel-policies.txt
kumount
# after a remount: the no-key view, then with the keys
kmount
kmanifest nokey-after.tsv
kumount
kmount
addkeys after
kmanifest after.tsv
kumount
"""


def guest_script():
    host = " ".join("$MNT/" + host_dir(k) for k in HOST_KINDS)
    kern = " ".join("$MNT/" + kernel_dir(k) for k in KERNEL_KINDS)
    lines = []
    for i, kind in enumerate(KERNEL_KINDS):
        d = "$MNT/" + kernel_dir(kind)
        key = "$v2" if KG.CRYPT_KINDS[kind][0] == 2 else V1_DESC
        lines += ["mkdir %s" % d,
                  "python3 -m ktest_guest set-policy %s %s %s" % (d, kind, key),
                  "python3 -m ktest_guest crypt-tree %s --small --seed %d" % (d, 600 + i)]
    return GUEST_CRYPT.format(desc=V1_DESC, host_dirs=host, kernel_dirs=kern,
                              new_dirs="\n".join(lines))


# ---------------------------------------------------------------- the test

@pytest.mark.parametrize("config", sorted(CRYPT_CONFIGS))
def test_encrypted_image_kernel_roundtrip(guest, f2fs_fuse, fusectl, tmp_path, config):
    size, features = CRYPT_CONFIGS[config]
    image = mkfs(tmp_path / (config + ".img"), size, features)
    v2key = tmp_path / "v2.key"
    v1key = tmp_path / "v1.key"
    v2key.write_bytes(KEY_V2)
    v1key.write_bytes(KEY_V1)
    host_dirs = [host_dir(k) for k in HOST_KINDS]

    # 1. f2fs-fuse writes a tree under every policy kind
    with fsutil.mounted(f2fs_fuse, image, tmp_path / "mnt-rw", ("rw",)) as m:
        key_id = ctl(fusectl, "add_key", "--key-file=%s" % v2key, m.path).strip()
        assert len(key_id) == 32, key_id
        assert ctl(fusectl, "add_key", "--descriptor=" + V1_DESC, "--key-file=%s" % v1key,
                   m.path).strip() == V1_DESC
        for i, kind in enumerate(HOST_KINDS):
            d = os.path.join(m.path, host_dir(kind))
            os.mkdir(d)
            key = key_id if KG.CRYPT_KINDS[kind][0] == 2 else V1_DESC
            ctl(fusectl, "set_policy", *fusectl_policy_args(kind), key, d)
            assert ctl(fusectl, "get_policy", d) == fusectl_policy_text(d, kind, key)
            KG.crypt_tree(d, seed=100 + i)
        os.mkdir(os.path.join(m.path, "plain"))
        KG.crypt_tree(os.path.join(m.path, "plain"), seed=99, small=True)
        w = M.walk(m.path)
        assert w.errors == [], "f2fs-fuse could not list its own tree: %s" % w.errors[:10]
    written = w.manifest
    fsutil.fsck_check(image)
    fuse_nokey = fuse_walk(f2fs_fuse, image, tmp_path / "mnt-nokey", ("ro",))
    nokey_sanity(fuse_nokey, host_dirs)

    # 2. the kernel reads it, without and with the keys, then writes
    r = G.run(guest_script(), [image], files={"v2.key": KEY_V2, "v1.key": KEY_V1})
    assert_guest_ok(r, "the kernel's reads and writes of an encrypted image")
    assert r.text("before.v2.id").strip() == key_id, \
        "the kernel computed another key identifier than f2fs-fusectl"
    got = policies(r.text("policies.txt"), "/mnt/f2fs/")
    want = {host_dir(k): (k, key_id if KG.CRYPT_KINDS[k][0] == 2 else V1_DESC)
            for k in HOST_KINDS}
    assert got == want, "the kernel reads other policies than f2fs-fuse set"
    k_nokey, _ = kernel_manifest(r, "nokey-before.tsv")
    assert_same(k_nokey, fuse_nokey, "f2fs-fuse's no-key view vs the kernel's")
    k_before, _ = kernel_manifest(r, "before.tsv")
    assert_same(written, k_before, "the kernel vs what f2fs-fuse wrote")
    got = policies(r.text("kernel-policies.txt"), "/mnt/f2fs/")
    assert got == {kernel_dir(k): (k, key_id if KG.CRYPT_KINDS[k][0] == 2 else V1_DESC)
                   for k in KERNEL_KINDS}

    # 3. back on the host: fsck, f2fs-fuse with and without the keys
    fsutil.fsck_check(image)
    k_after, _ = kernel_manifest(r, "after.tsv")
    k_nokey_after, _ = kernel_manifest(r, "nokey-after.tsv")
    assert k_after.entries != k_before.entries, "the kernel's writes changed nothing"
    nokey_sanity(k_nokey_after, host_dirs + [kernel_dir(k) for k in KERNEL_KINDS])
    opts = ("ro", "key_file=%s" % v2key, "v1_key_file=%s:%s" % (V1_DESC, v1key))
    with fsutil.mounted(f2fs_fuse, image, tmp_path / "mnt-keys", opts) as m:
        w = M.walk(m.path)
        assert w.errors == [], "f2fs-fuse could not list: %s" % w.errors[:10]
        for kind in KERNEL_KINDS:
            d = os.path.join(m.path, kernel_dir(kind))
            key = key_id if KG.CRYPT_KINDS[kind][0] == 2 else V1_DESC
            assert ctl(fusectl, "get_policy", d) == fusectl_policy_text(d, kind, key)
    assert_same(k_after, w.manifest, "f2fs-fuse vs the kernel after the kernel's writes")
    fuse_nokey2 = fuse_walk(f2fs_fuse, image, tmp_path / "mnt-nokey2", ("ro",))
    assert_same(k_nokey_after, fuse_nokey2,
                "f2fs-fuse's no-key view vs the kernel's after the kernel's writes")
