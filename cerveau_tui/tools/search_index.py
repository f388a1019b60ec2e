"""A trigram prefilter for `search`: which files a pattern cannot match, so rg need not read them.

At 100,000 files rg spent 2.5-5 s of a loaded 2-core machine reading 370 MB for every search
(benchmarks/scale.py): the walk is 0.6 s of it, the reading the rest. The index says, for each
file's content (keyed by its blake3, the fingerprint's digest), a 1024-bit Bloom signature of the
trigrams inside its whitespace-separated tokens. A pattern's required literals (`required_pieces`)
give trigrams that every matching file holds; a file whose signature lacks one of them cannot
match, and its folder, when every entry in it is such a file, is not even walked.

The answer still comes from rg in the sandbox, walking the tree with its own rules: the files set
aside are given to it as an extra ignore file (search_index_file.exclusions), and only a file rg would have
searched silently is ever set aside, so what rg says (the hits, the counts, "binary", "larger
than", a FIFO, an unreadable file) is what it says without the index:
- a file is set aside only when the fingerprint's current digest of it is the digest the
  signature was built from (a file changed since, by a command or anyone, is read by rg);
  never a binary one, a UTF-16 one (rg transcodes it), a large one, an unreadable one;
- a folder only when its mtime is the one recorded (no entry came or went), and every entry
  recorded in it was a regular file, a link (rg follows none), an ignored-by-name folder or a
  folder set aside as well: a FIFO, a folder the fingerprint skips, anything unknown keeps it in;
- any subset of what may be set aside is as correct as all of it, so the ignore file is cut to
  what the sandbox's argv can carry, and a pattern with no usable literal sets nothing aside.
"""

from __future__ import annotations

from functools import reduce
from operator import or_

SIG_BITS = 1024
SIG_BYTES = SIG_BITS // 8
#: Flags of a file record: any of them keeps the file in rg's hands.
BINARY, UTF16, LARGE, UNREADABLE = 1, 2, 4, 8
#: Files from this size are not indexed (rg's --max-filesize is 2 MB: kept well clear of it).
LARGE_BYTES = 1_000_000


def trigram_bits(token: bytes) -> int:
    """The signature bits of a token's trigrams (a stable hash: built and read by two processes)."""
    m = 0
    for i in range(len(token) - 2):
        v = (token[i] << 16) | (token[i + 1] << 8) | token[i + 2]
        m |= 1 << (((v * 0x9E3779B1) >> 12) & (SIG_BITS - 1))
    return m


class Signer:
    """Signatures of file contents, with the tokens' bits cached (bounded)."""

    CACHE = 200_000

    def __init__(self) -> None:
        self._cache: dict[bytes, int] = {}

    def sign(self, data: bytes) -> int:
        cache = self._cache
        tokens = set(data.split())
        for t in tokens:
            if t not in cache:
                cache[t] = trigram_bits(t)
        sig = reduce(or_, map(cache.__getitem__, tokens), 0)
        if len(cache) > self.CACHE:
            cache.clear()
        return sig


def flags_of(data: bytes) -> int:
    f = BINARY if b"\x00" in data else 0
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        f |= UTF16
    return f


# --- the pattern's required literals ---------------------------------------------------------

_BREAK_ESCAPES = set("dDwWsSbBAzntrfvae")
_META = set(".^$")


def required_pieces(pattern: str) -> list[bytes] | None:
    """Byte strings (no whitespace, 3+ bytes) every match of `pattern` contains; None or [] when
    none can be said. Conservative by construction: only top-level literal runs of a pattern
    with no top-level `|`, no inline flags (`(?i)`, `(?x)`...), nothing read inside a group or
    a class, a quantified character dropped, an escape other than punctuation or a one-letter
    class ending the run; anything unusual (`\\x41`, `\\p{L}`, a nested class) gives None."""
    if "(?" in pattern:
        return None
    runs: list[str] = []
    cur: list[str] = []
    i, n, depth = 0, len(pattern), 0

    def end() -> None:
        if cur:
            runs.append("".join(cur))
            cur.clear()

    while i < n:
        c = pattern[i]
        if c == "\\":
            if i + 1 >= n:
                return None
            e = pattern[i + 1]
            i += 2
            if depth:
                continue
            if e.isascii() and not e.isalnum() and e.isprintable() and e != " ":
                cur.append(e)
            elif e in _BREAK_ESCAPES:
                end()
            else:
                return None
            continue
        if c == "[":
            j = _class_end(pattern, i)
            if j is None:
                return None
            end()
            i = j
            continue
        if c == "(":
            end()
            depth += 1
        elif c == ")":
            if depth == 0:
                return None
            depth -= 1
        elif depth:
            pass
        elif c == "|":
            return None
        elif c in "?*+{":
            if cur:
                cur.pop()  # the quantified character may be absent (or be read as a run's end)
            end()
            if c == "{":
                j = pattern.find("}", i)
                if j < 0:
                    return None
                i = j
        elif c in _META:
            end()
        else:
            cur.append(c)
        i += 1
    if depth:
        return None
    end()
    pieces: list[bytes] = []
    for r in runs:
        pieces += [p for p in r.encode("utf-8", "surrogatepass").split() if len(p) >= 3]
    return pieces


def _class_end(pattern: str, i: int) -> int | None:
    """Index just past the class opening at `i`; None for a nested or unclosed one."""
    j = i + 1
    if j < len(pattern) and pattern[j] == "^":
        j += 1
    if j < len(pattern) and pattern[j] == "]":
        j += 1
    while j < len(pattern):
        c = pattern[j]
        if c == "\\":
            j += 2
            continue
        if c == "[":
            return None
        if c == "]":
            return j + 1
        j += 1
    return None


def need_bits(pattern: str) -> list[int]:
    """The signature bit positions every matching file has set; [] when none is known."""
    pieces = required_pieces(pattern)
    if not pieces:
        return []
    mask = reduce(or_, map(trigram_bits, pieces), 0)
    return [b for b in range(SIG_BITS) if mask >> b & 1]
