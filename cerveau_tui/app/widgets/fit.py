"""Lay a bar's parts into the columns there are, by what matters, never by where the edge falls.

At 80 columns the header was cut after `autopilot │`: the action mode and the server, which the
person asked about, were past the edge while nothing said so. Each part says how it may give way:
a shorter form, and a rank (0: never dropped; higher ranks go first). `fit_line` lets the ranked
parts give way one at a time (shortened, then dropped), until the line fits; `fit_lines` wraps the unranked parts onto
more lines instead of dropping them (the header), and keeps a ranked part only where it fits.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from rich.cells import cell_len
from textual.content import Content

SEP = " │ "
SEP_STYLE = "$text-muted"


@dataclass(frozen=True)
class Part:
    text: str
    style: str = ""
    short: str | None = None  # the form for a narrow terminal
    rank: int = 0  # 0: always shown; the highest rank is dropped first
    after: str = ""  # joined without a separator, in its own style (a warning on the part)
    after_style: str = ""

    def base(self, narrow: bool) -> str:
        return one_line(self.short if narrow and self.short is not None else self.text)

    def shown(self, narrow: bool) -> str:
        return self.base(narrow) + one_line(self.after)


def one_line(text: str) -> str:
    """A part as one line: a newline in a grant's scope (the model's command) or a model's name
    (the server's) would otherwise start a line of its own in the bar, one that can say
    anything, `sandbox full-access` included."""
    return " ".join(text.split()) if not text.isprintable() else text


def _width(parts: list[Part], narrow: bool) -> int:
    # Cells, not characters: a wide character (a CJK model name) takes two columns.
    return sum(cell_len(p.shown(narrow)) for p in parts) + len(SEP) * max(0, len(parts) - 1)


def _content(parts: list[Part], narrow: bool) -> Content:
    pieces: list[tuple[str, str] | str] = []
    for i, part in enumerate(parts):
        if i:
            pieces.append((SEP, SEP_STYLE))
        text = part.base(narrow)
        pieces.append((text, part.style) if part.style else text)
        if part.after:
            pieces.append((one_line(part.after), part.after_style))
    return Content.assemble(*pieces)


def fit_line(parts: list[Part], width: int | None) -> Content:
    """One line: everything when it fits (or no width is known); else the ranked parts give way
    one at a time, highest rank first, each shortened before it is dropped (a long model name
    going first keeps `ctx 1,064/8,192 (13%)` whole); then the unranked ones are shortened;
    what is left is cut at the edge."""
    if width is None or _width(parts, False) <= width:
        return _content(parts, False)
    kept = list(parts)
    for part in sorted((p for p in parts if p.rank), key=lambda p: -p.rank):
        i = next(n for n, k in enumerate(kept) if k is part or k.text == part.text)
        if part.short is not None:
            kept[i] = _shortened(part)
            if _width(kept, False) <= width:
                return _content(kept, False)
        del kept[i]
        if _width(kept, False) <= width:
            return _content(kept, False)
    return _content([_shortened(p) for p in kept], False)


def _shortened(part: Part) -> Part:
    return replace(part, text=part.short, short=None) if part.short is not None else part


def fit_lines(parts: list[Part], width: int | None) -> list[Content]:
    """As many lines as the unranked parts need (each cut at the edge if alone wider than it),
    the ranked parts only where they fit on the line they would join."""
    if width is None or _width(parts, False) <= width:
        return [_content(parts, False)]
    lines: list[list[Part]] = [[]]
    for part in parts:
        line = lines[-1]
        if not line or _width([*line, part], True) <= width:
            if not line and part.rank and len(lines) > 1:
                continue  # a ranked part never opens a line of its own
            line.append(part)
        elif not part.rank:
            lines.append([part])
    return [_content(line, True) for line in lines if line]
