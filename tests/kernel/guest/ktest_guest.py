"""Guest-side helpers, run by the guest's python3 as `python3 -m ktest_guest CMD`.

    manifest DIR [--no-content] [--no-xattrs]   print DIR's manifest (manifest.py format)
"""

import sys


def cmd_manifest(args):
    import manifest
    opts = [a for a in args if a.startswith("--")]
    top = [a for a in args if not a.startswith("--")][0]
    w = manifest.walk(top, read_content="--no-content" not in opts,
                      xattrs="--no-xattrs" not in opts)
    for p, err in w.errors:
        print("walk error: %s: %s" % (p, err), file=sys.stderr)
    sys.stdout.write(w.manifest.text())
    return 1 if w.errors else 0


def main(argv):
    cmds = {"manifest": cmd_manifest}
    if not argv or argv[0] not in cmds:
        print(__doc__, file=sys.stderr)
        return 2
    return cmds[argv[0]](argv[1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
