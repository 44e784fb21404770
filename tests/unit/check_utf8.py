#!/usr/bin/env python3
"""Compare core/utf8.c's folding of every code point with one computed
independently from Python's unicodedata tables.

  check_utf8.py TEST_UTF8_BINARY [UCD_DIR]

For every code point assigned in Unicode 12.1.0 or earlier (DerivedAge.txt
of UCD_DIR, default /usr/share/unicode) the expected folding is
NFD(casefold(NFD(c))) without Default_Ignorable_Code_Point, which is what
the kernel's mkutf8data computes; every other code point must come back
unchanged (U+180F, ignorable only since 14.0, included), except the
ignorable unassigned ones, which fold to nothing.  Python's unicodedata is
of a newer Unicode version; for characters of 12.1.0 it agrees, by Unicode's
stability policies.  Exits 1 on any difference.
"""
import os
import subprocess
import sys
import unicodedata


def ranges(path, want=None):
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            cps, val = [x.strip() for x in line.split(";")[:2]]
            if want and val != want:
                continue
            a, _, b = cps.partition("..")
            yield range(int(a, 16), int(b or a, 16) + 1), val


def main():
    binary = sys.argv[1]
    ucd = sys.argv[2] if len(sys.argv) > 2 else "/usr/share/unicode"
    age = {}
    for r, v in ranges(os.path.join(ucd, "DerivedAge.txt")):
        for cp in r:
            age[cp] = tuple(int(x) for x in v.split("."))
    ign = set()
    for r, _ in ranges(os.path.join(ucd, "DerivedCoreProperties.txt"),
                       "Default_Ignorable_Code_Point"):
        ign.update(cp for cp in r if cp not in age or age[cp] <= (12, 1))

    def expect(cp):
        if cp in ign:
            return ""
        if cp not in age or age[cp] > (12, 1):
            return chr(cp)
        s = unicodedata.normalize("NFD", chr(cp)).casefold()
        s = unicodedata.normalize("NFD", s)
        return "".join(c for c in s if ord(c) not in ign)

    out = subprocess.run([binary, "--dump"], check=True, capture_output=True, text=True).stdout
    bad = checked = 0
    for line in out.splitlines():
        cp, _, hexbytes = line.partition(":")
        cp = int(cp, 16)
        got = bytes.fromhex(hexbytes).decode("utf-8", "surrogateescape")
        want = expect(cp)
        checked += 1
        if got != want:
            bad += 1
            if bad <= 20:
                print("U+%04X: got %s, want %s" % (cp, got.encode().hex(), want.encode().hex()))
    print("check_utf8: %d code points, %d differ (Python unicodedata %s)"
          % (checked, bad, unicodedata.unidata_version))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
