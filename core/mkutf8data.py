#!/usr/bin/env python3
"""Generate core/utf8.c's table: the kernel's "nfdicf" folding (the folding
of casefolded f2fs directories, fs/unicode) for Unicode 12.1.0.

  mkutf8data.py UCD_DIR OUT.h

UCD_DIR is a Unicode Character Database (Debian's unicode-data package puts
one in /usr/share/unicode).  The kernel builds its table from the 12.1.0
files; a newer database gives the same table once every character assigned
after 12.1.0 is left out, because Unicode never changes the canonical
decomposition, the combining class or the case folding of an assigned
character (its normalization and case-folding stability policies), and adds
both members of a new case pair in one version.  So this reads the newer
files and keeps only characters whose DerivedAge is 12.1 or older.

What the kernel's mkutf8data derives, and this too:
  - canonical decompositions only (every <tag>ged compatibility mapping of
    UnicodeData.txt is skipped), applied until nothing changes;
  - the C and F case foldings of CaseFolding.txt, then decomposed again;
  - Default_Ignorable_Code_Point (DerivedCoreProperties.txt) folds to
    nothing, assigned or not;
  - Hangul syllables decompose algorithmically (in utf8.c, not here);
  - the canonical combining class, for reordering marks.
"""
import os
import re
import sys

MAX_AGE = (12, 1)


def fields(path):
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if line:
                yield [x.strip() for x in line.split(";")]


def cp_range(s):
    if ".." in s:
        a, b = s.split("..")
        return range(int(a, 16), int(b, 16) + 1)
    return range(int(s, 16), int(s, 16) + 1)


def main():
    ucd, out = sys.argv[1], sys.argv[2]
    for name in ("DerivedAge.txt", "UnicodeData.txt", "CaseFolding.txt",
                 "DerivedCoreProperties.txt"):
        if not os.path.isfile(os.path.join(ucd, name)):
            sys.exit("mkutf8data.py: %s not found: install the Unicode Character "
                     "Database (Debian: unicode-data, `make deps`) or set UCD_DIR"
                     % os.path.join(ucd, name))
    age = {}
    for f in fields(os.path.join(ucd, "DerivedAge.txt")):
        major, minor = (int(x) for x in f[1].split("."))
        for cp in cp_range(f[0]):
            age[cp] = (major, minor)

    # an older database lacks characters the kernel folds
    if max(age.values()) < MAX_AGE:
        sys.exit("mkutf8data.py: %s is Unicode %d.%d; %d.%d or newer is needed"
                 % ((ucd,) + max(age.values()) + MAX_AGE))

    def old(cp):
        return cp in age and age[cp] <= MAX_AGE

    ccc, decomp = {}, {}
    for f in fields(os.path.join(ucd, "UnicodeData.txt")):
        cp = int(f[0], 16)
        if not old(cp):
            continue
        if int(f[3]):
            ccc[cp] = int(f[3])
        if f[5] and not f[5].startswith("<"):
            decomp[cp] = [int(x, 16) for x in f[5].split()]

    fold = {}
    for f in fields(os.path.join(ucd, "CaseFolding.txt")):
        cp = int(f[0], 16)
        if f[1] in ("C", "F") and old(cp):
            fold[cp] = [int(x, 16) for x in f[2].split()]

    # unassigned code points stay ignorable (the reserved ranges of
    # Other_Default_Ignorable_Code_Point predate 12.1); one assigned later,
    # U+180F (14.0), was not ignorable in 12.1 and is left out
    ign = set()
    for f in fields(os.path.join(ucd, "DerivedCoreProperties.txt")):
        if f[1] == "Default_Ignorable_Code_Point":
            ign.update(cp for cp in cp_range(f[0]) if cp not in age or old(cp))
    ignorable = []
    for cp in sorted(ign):
        if ignorable and cp == ignorable[-1][1] + 1:
            ignorable[-1][1] = cp
        else:
            ignorable.append([cp, cp])

    # as mkutf8data: ignorables lose their mappings, nfdi fills in where no
    # folding exists, and both are expanded until they no longer change
    for cp in ign:
        decomp.pop(cp, None)
        fold.pop(cp, None)

    def expand(table, cp, depth=0):
        assert depth < 20
        out = []
        for c in table[cp]:
            if c in ign:
                continue
            out.extend(expand(table, c, depth + 1) if c in table else [c])
        return out

    nfdi = {cp: expand(decomp, cp) for cp in decomp}
    nfdicf = dict(fold)
    for cp, m in nfdi.items():
        nfdicf.setdefault(cp, m)
    nfdicf = {cp: expand(nfdicf, cp) for cp in nfdicf}
    for cp in nfdicf:
        assert all(c not in nfdicf or nfdicf[c] == [c] for c in nfdicf[cp]), hex(cp)

    pool, entries = [], []
    for cp in sorted(set(nfdicf) | set(ccc)):
        if cp in ign:
            continue
        m = nfdicf.get(cp)
        if m is None or m == [cp]:
            off, n = 0, 0xFF            # maps to itself
        else:
            off, n = len(pool), len(m)
            pool.extend(m)
        entries.append((cp, ccc.get(cp, 0), n, off))
    assert len(pool) < 65536 and all(e[2] < 0xFF or e[2] == 0xFF for e in entries)

    with open(out, "w", encoding="ascii") as f:
        f.write("/* Generated by core/mkutf8data.py from the Unicode Character Database\n"
                " * in %s (characters assigned in Unicode <= %d.%d); do not edit. */\n"
                % (ucd, MAX_AGE[0], MAX_AGE[1]))
        f.write("static const uint32_t utf8_pool[%d] = {\n" % max(len(pool), 1))
        for i in range(0, len(pool), 8):
            f.write("\t" + ", ".join("0x%x" % c for c in pool[i:i + 8]) + ",\n")
        f.write("};\n")
        f.write("static const struct utf8_entry utf8_table[%d] = {\n" % len(entries))
        for cp, c, n, off in entries:
            f.write("\t{ 0x%x, %d, %d, %d },\n" % (cp, c, n, off))
        f.write("};\n")
        f.write("static const struct utf8_range utf8_ignorable[%d] = {\n" % len(ignorable))
        for a, b in ignorable:
            f.write("\t{ 0x%x, 0x%x },\n" % (a, b))
        f.write("};\n")


if __name__ == "__main__":
    main()
