"""How long legitimate low-information repeats run in real text files: the evidence for the
repetition guard's LINE_COVER and SHORT_COVER (cerveau_tui/loop/guards/repetition.py, rule 4).

    .venv/bin/python benchmarks/repetition_corpus.py [ROOT ...]
        (default: the venv's site-packages, /usr/lib/python3, /usr/share/doc, this repo's code)

Reads the first 64 KB of every text file (.py .md .rst .txt .csv .tsv .json .toml .yaml .cfg .ini
.html .xml) and finds in each, for a low-information span (shorter than MIN_SPAN or with fewer
than MIN_DISTINCT characters, as the guard classes them):
- the longest run on ONE line (a span of up to 40 characters said again, at least 3 times);
- the longest run of identical lines;
then prints the distribution over files, how many files each cover would cut, and the longest.
Also: runs of 8+ identical high-information lines over LONG_COVER (rule 3's false trips).
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from cerveau_tui.loop.guards.repetition import (  # noqa: E402
    LINE_COVER,
    LONG_COVER,
    MIN_COPIES,
    MIN_DISTINCT,
    MIN_SPAN,
    SHORT_COVER,
)

EXT = {".csv", ".tsv", ".json", ".md", ".rst", ".txt", ".py", ".toml", ".yaml", ".yml", ".cfg"}
EXT |= {".ini", ".html", ".xml"}
ONE_LINE = re.compile(r"(.{1,40}?)\1{2,}")  # `.` stops at a line break: runs within a line


def _low(span: str) -> bool:
    return not (len(span) >= MIN_SPAN and len(set(span)) >= MIN_DISTINCT)


def _primitive(span: str) -> bool:
    return (span + span).find(span, 1) == len(span)


def _texts(roots: list[str]):  # type: ignore[no-untyped-def]
    for root in roots:
        for folder, _, names in os.walk(root):
            for name in names:
                if os.path.splitext(name)[1] not in EXT:
                    continue
                path = os.path.join(folder, name)
                try:
                    with open(path, "rb") as f:
                        yield path, f.read(65536).decode("utf-8")
                except (OSError, UnicodeDecodeError):
                    continue


def scan(text: str) -> tuple[tuple[int, str], tuple[int, str], list[tuple[int, str]]]:
    """(longest one-line low run, longest identical low lines, high-information line runs)."""
    one = max(
        (
            (len(m.group(0)), m.group(1))
            for m in ONE_LINE.finditer(text)
            if _low(m.group(1)) and _primitive(m.group(1))
        ),
        default=(0, ""),
    )
    lines, multi, high, i = text.split("\n"), (0, ""), [], 0
    while i < len(lines):
        j = i
        while j + 1 < len(lines) and lines[j + 1] == lines[i]:
            j += 1
        span, copies = lines[i] + "\n", j - i + 1
        if copies > 1 and _low(span):
            multi = max(multi, (copies * len(span), span))
        elif copies >= MIN_COPIES and copies * len(span) >= LONG_COVER:
            high.append((copies * len(span), span))
        i = j + 1
    return one, multi, high


def _report(name: str, found: list[tuple[int, str, str]], cover: int) -> None:
    vals = sorted(c for c, _, _ in found)
    n = len(vals)
    print(f"\n{name}: {n} files hold one; the longest run per file:")
    print(
        "  " + ", ".join(f"p{q * 100:g} {vals[int(q * (n - 1))]}" for q in (0.5, 0.9, 0.99, 0.999))
    )
    for thr in sorted({200, 300, cover, 400, 600, 1000, 1500, 2000}):
        mark = "  <- the guard's cover" if thr == cover else ""
        print(f"  files a cover of {thr:>4} would cut: {sum(1 for v in vals if v >= thr)}{mark}")
    for c, span, path in sorted(found, reverse=True)[:8]:
        print(f"  {c:6d} {span[:30]!r:34} {path[-70:]}")


def main(argv: list[str]) -> int:
    site = REPO / ".venv" / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}"
    roots = argv or [
        str(site / "site-packages"),
        "/usr/lib/python3",
        "/usr/share/doc",
        str(REPO / "cerveau_tui"),
        str(REPO / "tests"),
    ]
    one_line, multi, high = [], [], []
    files = chars = 0
    for path, text in _texts([r for r in roots if os.path.isdir(r)]):
        files, chars = files + 1, chars + len(text)
        (c1, s1), (c2, s2), h = scan(text)
        if c1:
            one_line.append((c1, s1, path))
        if c2:
            multi.append((c2, s2, path))
        high += [(c, s, path) for c, s in h]
    print(f"{files} files, {chars} characters read")
    _report("low-information span repeated on one line", one_line, LINE_COVER)
    _report("identical low-information lines in a row", multi, SHORT_COVER)
    print(f"\nhigh-information lines, {MIN_COPIES}+ identical over {LONG_COVER}: {len(high)}")
    for c, span, path in sorted(high, reverse=True)[:5]:
        print(f"  {c:6d} {span[:30]!r:34} {path[-70:]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
