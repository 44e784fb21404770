"""Short runs of the randomized model-based tester (tests/fsx/fsx.py) on
read-write mounts: fixed seeds, both mkfs feature sets.  `make fsx` runs
the long version."""

import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
FSX = os.path.join(os.path.dirname(HERE), "fsx", "fsx.py")
OPS = int(os.environ.get("F2FS_FSX_OPS", "2000"))


def run_fsx(args, binary, timeout=600):
    env = dict(os.environ)
    if binary:
        env["F2FS_FUSE"] = binary
    r = subprocess.run([sys.executable, FSX] + args, env=env, stdin=subprocess.DEVNULL,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                       errors="replace", timeout=timeout)
    return r.returncode, r.stdout


def test_fsx_model_self_check(tmp_path):
    """The tester against a plain folder: the model itself agrees with Linux."""
    rc, out = run_fsx(["--no-mount", "--seed", "7", "--ops", "300",
                       "--workdir", str(tmp_path)], None)
    assert rc == 0, out[-6000:]


@pytest.mark.slow
@pytest.mark.needs_binary
@pytest.mark.parametrize("seed,features", [(1, None), (2, "extra")],
                         ids=["default", "extra_attr"])
def test_fsx_short(f2fs_fuse, tmp_path, seed, features):
    args = ["--seed", str(seed), "--ops", str(OPS), "--image-size", "256M",
            "--remount-every", "300", "--workdir", str(tmp_path)]
    if features:
        args += ["--features", features]
    rc, out = run_fsx(args, f2fs_fuse)
    assert rc == 0, "fsx failed (replay: tests/fsx/fsx.py %s)\n%s" % (
        " ".join(args[:-2]), out[-8000:])
