"""Fixture manifests: parse them, produce them from a directory tree, compare.

The format is documented in /work/shared/fixtures/README.md ("Manifest format").
One line per entry, tab separated:

    path type mode uid gid size nlink mtime content xattrs

Paths (and symlink targets) are escaped: backslash -> \\\\, tab -> \\t,
newline -> \\n, other control bytes -> \\xHH, UTF-8 kept raw.  Bytes that are
not valid UTF-8 are written as \\xHH as well, so any name round-trips.

Internally every entry is a dict of the ten fields as *canonical strings*:
the parser unescapes the path and symlink target to bytes and escapes them
again with `escape()`, so two spellings of one name compare equal.
"""

import errno
import hashlib
import os
import stat

FIELDS = ("type", "mode", "uid", "gid", "size", "nlink", "mtime", "content", "xattrs")
WILDCARD = "*"
SKIP_XATTRS = frozenset({b"security.selinux"})

_TYPE_CHARS = {
    stat.S_IFREG: "f",
    stat.S_IFDIR: "d",
    stat.S_IFLNK: "l",
    stat.S_IFCHR: "c",
    stat.S_IFBLK: "b",
    stat.S_IFIFO: "p",
    stat.S_IFSOCK: "s",
}


class ManifestError(ValueError):
    pass


# ---------------------------------------------------------------- escaping

def escape(raw):
    """bytes -> manifest text."""
    if isinstance(raw, str):
        raw = os.fsencode(raw)
    out = []
    i = 0
    n = len(raw)
    while i < n:
        b = raw[i]
        if b == 0x5C:
            out.append("\\\\")
        elif b == 0x09:
            out.append("\\t")
        elif b == 0x0A:
            out.append("\\n")
        elif b < 0x20 or b == 0x7F:
            out.append("\\x%02x" % b)
        elif b < 0x80:
            out.append(chr(b))
        else:
            # Take the longest valid UTF-8 sequence starting here (1..4 bytes).
            for ln in (2, 3, 4):
                chunk = raw[i:i + ln]
                try:
                    ch = chunk.decode("utf-8")
                except UnicodeDecodeError:
                    continue
                if len(ch) == 1:
                    out.append(ch)
                    i += ln
                    break
            else:
                out.append("\\x%02x" % b)
                i += 1
            continue
        i += 1
    return "".join(out)


def unescape(text):
    """manifest text -> bytes.  Raises ManifestError on a malformed escape."""
    out = bytearray()
    i = 0
    n = len(text)
    while i < n:
        c = text[i]
        if c != "\\":
            out += c.encode("utf-8", "surrogateescape")
            i += 1
            continue
        if i + 1 >= n:
            raise ManifestError("dangling backslash in %r" % text)
        e = text[i + 1]
        if e == "\\":
            out.append(0x5C)
            i += 2
        elif e == "t":
            out.append(0x09)
            i += 2
        elif e == "n":
            out.append(0x0A)
            i += 2
        elif e == "x":
            hh = text[i + 2:i + 4]
            if len(hh) != 2 or any(ch not in "0123456789abcdefABCDEF" for ch in hh):
                raise ManifestError("bad \\x escape in %r" % text)
            out.append(int(hh, 16))
            i += 4
        else:
            raise ManifestError("unknown escape \\%s in %r" % (e, text))
    return bytes(out)


def canonical(text):
    """Re-spell an escaped string the way escape() writes it."""
    return escape(unescape(text))


def _xattr_name_text(name):
    return escape(name).replace(";", "\\x3b").replace("=", "\\x3d")


def _xattr_name_canonical(text):
    # `\x3b`/`\x3d` unescape to `;`/`=` like any \xHH, so the generic route works.
    return _xattr_name_text(unescape(text))


def format_xattrs(pairs):
    """[(name bytes, value bytes)] -> manifest field."""
    items = sorted((n, v) for n, v in pairs if n not in SKIP_XATTRS)
    if not items:
        return "-"
    return ";".join("%s=%s" % (_xattr_name_text(n), hashlib.sha256(v).hexdigest())
                    for n, v in items)


def parse_xattrs(field):
    """Manifest xattrs field -> {canonical name: sha} (None for `*`)."""
    if field == WILDCARD:
        return None
    if field == "-":
        return {}
    res = {}
    for part in field.split(";"):
        name, sep, digest = part.rpartition("=")
        if not sep or not name:
            raise ManifestError("bad xattr item %r" % part)
        res[_xattr_name_canonical(name)] = digest
    return res


def sort_key(path_text):
    return b"" if path_text == "." else unescape(path_text)


# ---------------------------------------------------------------- parsing

class Manifest:
    """entries: {canonical path: {field: value}}; partial: bool."""

    def __init__(self, entries=None, partial=False, comments=None):
        self.entries = dict(entries or {})
        self.partial = partial
        self.comments = list(comments or [])

    def __len__(self):
        return len(self.entries)

    def __contains__(self, path):
        return path in self.entries

    def __getitem__(self, path):
        return self.entries[path]

    def paths(self):
        return sorted(self.entries, key=sort_key)

    def subtree(self, top):
        """Entries at or under `top` (canonical path), as a new Manifest."""
        pre = top + "/"
        return Manifest({p: e for p, e in self.entries.items() if p == top or p.startswith(pre)},
                        self.partial, self.comments)

    def lines(self):
        for p in self.paths():
            e = self.entries[p]
            yield "\t".join([p] + [e[f] for f in FIELDS])

    def text(self, header=True):
        head = []
        if header:
            if self.partial:
                head.append("# options: partial")
            head.append("#path\t" + "\t".join(FIELDS))
        return "\n".join(head + list(self.lines())) + "\n"


def _canonical_content(etype, content):
    if content == WILDCARD or content.startswith("ERR:"):
        return content
    if etype == "l":
        return canonical(content)
    return content


def parse_text(text, name="<manifest>"):
    entries = {}
    partial = False
    comments = []
    for lineno, line in enumerate(text.split("\n"), 1):
        if line.endswith("\r"):
            line = line[:-1]
        if not line:
            continue
        if line.startswith("#"):
            comments.append(line)
            body = line[1:].strip()
            if body.startswith("options:"):
                opts = [o.strip() for o in body[len("options:"):].split(",")]
                if "partial" in opts:
                    partial = True
            continue
        cols = line.split("\t")
        if len(cols) != 1 + len(FIELDS):
            raise ManifestError("%s:%d: expected %d fields, got %d"
                                % (name, lineno, 1 + len(FIELDS), len(cols)))
        path = "." if cols[0] == "." else canonical(cols[0])
        ent = dict(zip(FIELDS, cols[1:]))
        if ent["type"] not in "fdlcbps!" or len(ent["type"]) != 1:
            if ent["type"] != WILDCARD:
                raise ManifestError("%s:%d: bad type %r" % (name, lineno, ent["type"]))
        ent["content"] = _canonical_content(ent["type"], ent["content"])
        if ent["xattrs"] not in (WILDCARD, "-"):
            xs = parse_xattrs(ent["xattrs"])
            ent["xattrs"] = ";".join("%s=%s" % (k, xs[k])
                                     for k in sorted(xs, key=lambda k: unescape(k)))
        if path in entries:
            raise ManifestError("%s:%d: duplicate path %s" % (name, lineno, path))
        entries[path] = ent
    return Manifest(entries, partial, comments)


def parse_file(path):
    with open(path, "r", encoding="utf-8", errors="surrogateescape") as f:
        return parse_text(f.read(), name=str(path))


# ---------------------------------------------------------------- walking

def sha256_file(path, chunk=1 << 20):
    h = hashlib.sha256()
    with open(path, "rb", buffering=0) as f:
        while True:
            b = f.read(chunk)
            if not b:
                break
            h.update(b)
    return h.hexdigest()


def _err(e):
    return "ERR:" + os.strerror(e.errno) if e.errno else "ERR:" + str(e)


def _xattrs_of(path):
    try:
        names = os.listxattr(path, follow_symlinks=False)
    except OSError as e:
        if e.errno in (errno.ENOTSUP, errno.EOPNOTSUPP, errno.ENODATA):
            return "-"
        return _err(e)
    pairs = []
    for n in names:
        nb = os.fsencode(n)
        if nb in SKIP_XATTRS:
            continue
        try:
            v = os.getxattr(path, n, follow_symlinks=False)
        except OSError as e:
            return _err(e)
        pairs.append((nb, v))
    return format_xattrs(pairs)


def entry_of(path, read_content=True, xattrs=True):
    """The manifest fields of one filesystem object (path: bytes or str)."""
    st = os.lstat(path)
    t = _TYPE_CHARS.get(stat.S_IFMT(st.st_mode), "?")
    if t == "f":
        if read_content:
            try:
                content = sha256_file(path)
            except OSError as e:
                content = _err(e)
        else:
            content = WILDCARD
    elif t == "l":
        try:
            content = escape(os.readlink(os.fsencode(path)))
        except OSError as e:
            content = _err(e)
    elif t in "cb":
        content = "%d:%d" % (os.major(st.st_rdev), os.minor(st.st_rdev))
    else:
        content = "-"
    return {
        "type": t,
        "mode": "%04o" % stat.S_IMODE(st.st_mode),
        "uid": str(st.st_uid),
        "gid": str(st.st_gid),
        "size": str(st.st_size),
        "nlink": str(st.st_nlink),
        "mtime": str(st.st_mtime_ns // 1_000_000_000),
        "content": content,
        "xattrs": _xattrs_of(path) if xattrs else WILDCARD,
    }


class Walk:
    """Result of walk(): a Manifest plus the errors hit while listing."""

    def __init__(self, manifest, errors):
        self.manifest = manifest
        self.errors = errors   # [(canonical path, strerror)]


def walk(top, prefix=".", read_content=True, xattrs=True, content_filter=None):
    """Walk the tree at `top` (without following symlinks) into a Manifest.

    Paths are relative to `top`, which itself is `prefix` ("." for the
    root, or e.g. "plain-dir" when walking a subtree of a mount).
    content_filter(path_text) -> bool decides per file whether to read it
    (default: read all when read_content).
    """
    top_b = os.fsencode(top)
    pre_b = b"" if prefix == "." else unescape(prefix)
    entries = {}
    errors = []

    def rel_text(rel_b):
        full = pre_b + (b"/" if pre_b and rel_b else b"") + rel_b
        return escape(full) if full else "."

    stack = [b""]
    while stack:
        rel = stack.pop()
        here = os.path.join(top_b, rel) if rel else top_b
        ptxt = rel_text(rel)
        want = read_content and (content_filter is None or content_filter(ptxt))
        ent = entry_of(here, read_content=want, xattrs=xattrs)
        entries[ptxt] = ent
        if ent["type"] != "d":
            continue
        try:
            with os.scandir(here) as it:
                names = [d.name for d in it]
        except OSError as e:
            errors.append((ptxt, os.strerror(e.errno) if e.errno else str(e)))
            continue
        for nm in names:
            stack.append(os.path.join(rel, nm) if rel else nm)
    return Walk(Manifest(entries), errors)


# ---------------------------------------------------------------- comparing

def compare(expected, actual, ignore_dir_size=False, ignore=(), only=None):
    """Differences between an expected Manifest and an actual one.

    Returns a list of readable strings, empty when they match:
      "missing: PATH", "extra: PATH", "must not exist: PATH",
      "PATH: FIELD expected X got Y" (several fields joined by "; ").
    ignore: fields never compared.  only: if set, compare only these paths.
    Extra entries are reported unless the expected manifest is partial.
    """
    diffs = []
    ignore = set(ignore)
    act = actual.entries if isinstance(actual, Manifest) else actual
    for p in expected.paths():
        if only is not None and p not in only:
            continue
        exp = expected.entries[p]
        got = act.get(p)
        if exp["type"] == "!":
            if got is not None:
                diffs.append("must not exist: %s (found type %s)" % (p, got["type"]))
            continue
        if got is None:
            diffs.append("missing: %s" % p)
            continue
        bad = []
        for f in FIELDS:
            if f in ignore:
                continue
            ev, gv = exp[f], got[f]
            if ev == WILDCARD:
                continue
            if f == "size" and ignore_dir_size and exp["type"] == "d" and got["type"] == "d":
                continue
            if ev != gv:
                bad.append("%s expected %s got %s" % (f, _short(ev), _short(gv)))
        if bad:
            diffs.append("%s: %s" % (p, "; ".join(bad)))
    if not expected.partial:
        for p in sorted(set(act) - set(expected.entries), key=sort_key):
            if only is not None and p not in only:
                continue
            diffs.append("extra: %s" % p)
    return diffs


def _short(v, limit=120):
    return v if len(v) <= limit else v[:limit] + "...(%d chars)" % len(v)


def report(diffs, limit=60):
    """Diff list -> one message for an assertion."""
    if not diffs:
        return "no differences"
    head = diffs[:limit]
    more = len(diffs) - len(head)
    return "%d difference(s):\n  " % len(diffs) + "\n  ".join(head) + (
        "\n  ... and %d more" % more if more > 0 else "")


def read_sums(path):
    """{canonical path: digest} from a "DIGEST PATH" file (sha256sum style)."""
    sums = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            digest, p = line.split()
            sums[canonical(p)] = digest
    return sums
