"""THE glob dialect of the product (rules, protected paths, done criteria all import this one).

gitignore-like, because that is the dialect people already write:
- `*` matches within one path segment, `?` one character of a segment, `[abc]` / `[!abc]` a class;
- `**` matches across segments (`a/**/b` also matches `a/b`; a trailing `/**` matches everything
  beneath);
- a pattern without `/` (other than a trailing one) matches the basename of any segment, anywhere:
  `*.lock` matches `web/yarn.lock`;
- a pattern with a `/` is anchored at the start of the path; a leading `/` only says "anchored";
- a pattern that matches a directory matches everything beneath it (`.git` matches
  `.git/hooks/pre-commit`), as gitignore does: a rule about a folder is a rule about its contents;
- `\\` escapes the next character.

Paths are given relative to the workspace (`src/a.py`); a path outside it is given absolute
(`/etc/passwd`), and a leading `/` is ignored on both sides so `/etc/**` matches it.
"""

from __future__ import annotations

import re
from functools import lru_cache

__all__ = ["glob_match", "glob_regex"]


def glob_match(pattern: str, rel_path: str, *, case_sensitive: bool = True) -> bool:
    path = _normalise_path(rel_path)
    if not path:
        return False
    rx = glob_regex(pattern, case_sensitive)
    return rx is not None and rx.match(path) is not None


def _normalise_path(rel_path: str) -> str:
    path = rel_path
    while path.startswith("./"):
        path = path[2:]
    return path.strip("/")


@lru_cache(maxsize=512)
def glob_regex(pattern: str, case_sensitive: bool = True) -> re.Pattern[str] | None:
    """The compiled regular expression for a pattern (None for an empty pattern, which matches
    nothing: an empty rule in a config must not silently cover every path)."""
    pat = pattern.strip()
    while pat.startswith("./"):
        pat = pat[2:]
    pat = pat.rstrip("/") if pat not in ("/",) else ""
    if not pat:
        return None
    anchored = "/" in pat
    pat = pat.lstrip("/")
    if not pat:
        return None
    body = _translate(pat)
    prefix = "" if anchored else "(?:.*/)?"
    flags = 0 if case_sensitive else re.IGNORECASE
    return re.compile(f"{prefix}{body}(?:/.*)?\\Z", flags | re.DOTALL)


def _translate(pat: str) -> str:
    out: list[str] = []
    i, n = 0, len(pat)
    while i < n:
        c = pat[i]
        if c == "\\" and i + 1 < n:
            out.append(re.escape(pat[i + 1]))
            i += 2
            continue
        if c == "*":
            if pat.startswith("**", i):
                at_seg_start = i == 0 or pat[i - 1] == "/"
                after = i + 2
                if at_seg_start and after < n and pat[after] == "/":
                    out.append("(?:.*/)?")  # `**/` : zero or more whole segments
                    i = after + 1
                    continue
                if at_seg_start and after == n:
                    # trailing `/**`: everything beneath (the directory itself is covered by the
                    # caller's `(?:/.*)?` suffix when the preceding `/` is dropped)
                    if out and out[-1] == "/":
                        out.pop()
                        out.append("(?:/.*)?")
                    else:
                        out.append(".*")
                    i = after
                    continue
                out.append(".*")
                i = after
                continue
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            j = i + 1
            if j < n and pat[j] in "!^":
                j += 1
            if j < n and pat[j] == "]":
                j += 1
            while j < n and pat[j] != "]":
                j += 1
            if j >= n:
                out.append(re.escape(c))
            else:
                inner = pat[i + 1 : j]
                neg = inner[:1] in ("!", "^")
                if neg:
                    inner = inner[1:]
                inner = inner.replace("\\", "\\\\")
                out.append(f"[{'^' if neg else ''}{inner}]" if not neg else f"(?!/)[^{inner}]")
                i = j
        elif c == "/":
            out.append("/")
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)
