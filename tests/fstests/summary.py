#!/usr/bin/env python3
"""summary.py CHECK_OUTPUT...: count fstests results from ./check's output.

Prints passed, failed, not run (grouped by the reason fstests gives) and
excluded; for a later file the results of a test override earlier ones, so
an interrupted run and its continuation can be read together.
"""
import re
import sys
from collections import defaultdict

LINE = re.compile(r"^((?:generic|shared|fuse)/\d+)\s+(.*)$")


def classify(rest):
    if "[not run]" in rest:
        return "notrun", rest.split("[not run]", 1)[1].strip()
    if "[expunged]" in rest:
        return "excluded", ""
    if "[failed" in rest or "output mismatch" in rest or "_check_" in rest:
        return "failed", rest.strip()
    if re.search(r"\d+s\s*$", rest):
        return "passed", ""
    return "incomplete", rest.strip()


def main(paths):
    res = {}
    for path in paths:
        with open(path, errors="replace") as f:
            for line in f:
                m = LINE.match(line.rstrip("\n"))
                if m:
                    res[m.group(1)] = classify(m.group(2))
    by = defaultdict(list)
    for t, (kind, why) in sorted(res.items()):
        by[kind].append((t, why))
    print("ran %d: passed %d, failed %d; not run %d; excluded %d; incomplete %d" % (
        len(by["passed"]) + len(by["failed"]), len(by["passed"]), len(by["failed"]),
        len(by["notrun"]), len(by["excluded"]), len(by["incomplete"])))
    for kind in ("failed", "incomplete", "excluded"):
        for t, why in by[kind]:
            print("%-10s %s %s" % (kind, t, why[:100]))
    reasons = defaultdict(list)
    for t, why in by["notrun"]:
        reasons[why].append(t)
    for why, ts in sorted(reasons.items(), key=lambda kv: -len(kv[1])):
        print("notrun %3d  %s: %s" % (len(ts), why, " ".join(ts)))


if __name__ == "__main__":
    main(sys.argv[1:])
