"""One way to say "the middle of this text was cut here", for every place that cuts one.

A command's output is cut twice on its way to the screen: the runner keeps a head and a tail of
what the command wrote (sandbox/process.py), then the window keeps a head and a tail of that
(context/budget.py). The tool card, showing the last lines, counted the line breaks it could see:
"3206 earlier lines not shown" under a `seq 1 20000` whose card showed 40. So each cut says how
many line breaks it took away, on a marker line of its own, and counting goes through the markers:
a cut that takes a marker with it adds the marker's count to its own.

The text is a command's output: a command can print a marker line itself. The count it claims is
bounded (a million-digit one made `int` raise) and only ever shown as a count.
"""

from __future__ import annotations

import re

_MARKER = re.compile(r"^\[… ([0-9,]{1,20}) lines, [^\n]* cut[^\n]*…\]$", re.MULTILINE)


def cut_marker(lines: int, what: str) -> str:
    """The marker line (without its newlines) for a cut of `lines` line breaks; `what` says the
    rest ("about 123 bytes cut", "456 characters (…) cut here: …"), and must contain "cut"."""
    return f"[… {lines:,} lines, {what} …]"


def line_breaks(text: str, start: int = 0, end: int | None = None) -> int:
    """The line breaks `text[start:end]` stands for: its own, plus for each marker wholly inside
    it the breaks that marker's cut took, less the ones the marker line added (it is inserted as
    "\\n[marker]\\n" between a head and a tail)."""
    end = len(text) if end is None else end
    breaks = text.count("\n", start, end)
    for m in _MARKER.finditer(text, start, end):
        if m.end() >= end:
            continue  # its closing newline is not in the region: not wholly inside
        own = 1 + (m.start() > start)  # `^` put the opening newline just before it, or none
        breaks += int(m.group(1).replace(",", "")) - own
    return max(breaks, 0)
