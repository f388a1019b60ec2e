"""Regex search over the workspace, respecting .gitignore. Files are read beneath the workspace
without following a link (walk.walk_files lists none), so a link planted to a file outside is
never read with the person's rights.

The pattern is the model's, and it runs in the harness's own process: Python's backtracking `re`
spent forever on `(a+)+$` over a 35-character line, holding the interpreter lock so that not even
Esc could stop it. RE2 (`google-re2`) matches in time linear in the text, whatever the pattern;
the price is no backreferences and no lookaround, said to the model when it uses them. Linear is
not short: a huge tree still takes long, so one search also stops at a deadline, a count of files
and of bytes, or the turn's cancel, and says where it stopped. What it did not read (too large,
binary, a FIFO...) is named in the answer: "no matches" must mean the files were searched.
"""

from __future__ import annotations

import dataclasses
import os
import re
import stat
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

import re2
from pydantic import BaseModel

from ..state_file import kind_of
from ..workspace.io.beneath import FileTooLarge, NotRegularFile, lstat_beneath, read_bytes_beneath
from .args import NonEmpty, PathArg
from .base import (
    Declared,
    Tool,
    ToolContext,
    ToolError,
    ToolResult,
    beneath_errors,
    clean_text,
    locate,
    resolve_path,
)
from .ripgrep import find_rg
from .search_index_session import narrow
from .search_rg import Found, Unavailable
from .search_rg import search as rg_search
from .walk import walk_files

MAX_BYTES = 2_000_000  # one file
MAX_TOTAL_BYTES = 64_000_000  # one search
MAX_FILES = 20_000
DEADLINE_S = 15.0
#: How many names of skipped files one reason lists; the rest are counted.
NAMES_PER_REASON = 3
#: RE2 is linear in the text, but the factor is the pattern's program size once its DFA gives up:
#: `(.*a){90}` (size 994) took 13 s over one 2 MB line, in one C call nothing can interrupt. So
#: one call may cost at most this much (program size x line length, ~1 s at the measured worst
#: rate); a longer line is not searched with that pattern, and the file is named.
MAX_LINE_WORK = 200_000_000
#: Between two looks at the deadline and the cancel, about this much work (size x characters).
CHECK_EVERY_WORK = 20_000_000
#: Patterns up to this RE2 program size go to ripgrep: at most MAX_LINE_WORK over a whole
#: MAX_BYTES line, so the built-in engine would never have set a line aside for them. A larger
#: one keeps the built-in engine, which names the lines it did not give such a pattern.
RG_MAX_PROGRAM = MAX_LINE_WORK // MAX_BYTES
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


def literal_pattern(text: str) -> str:
    """A pattern that matches `text` as it is written, in both engines."""
    return "".join("\\" + c if c in _META else c for c in text)


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


@dataclass
class _Budget:
    """When one search stops: the turn's cancel, a deadline, a count of files or of bytes."""

    clock: Callable[[], float]
    cancel: threading.Event | None
    deadline: float
    files: int = 0
    bytes: int = 0
    stopped: str | None = None

    def keep_going(self) -> bool:
        if self.stopped is None:
            if self.cancel is not None and self.cancel.is_set():
                self.stopped = "cancelled"
            elif self.clock() > self.deadline:
                self.stopped = f"stopped after {DEADLINE_S:.0f} s"
            elif self.files >= MAX_FILES:
                self.stopped = f"stopped after {MAX_FILES} files"
            elif self.bytes >= MAX_TOTAL_BYTES:
                self.stopped = f"stopped after {MAX_TOTAL_BYTES // 1_000_000} MB"
        return self.stopped is None


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
        rx = compile_pattern(args.pattern)
        size = max(int(rx.programsize), 1)
        budget = _Budget(self.clock, ctx.cancel, self.clock() + DEADLINE_S)
        skipped = Skipped()
        ws = Path(os.path.realpath(ctx.workspace))

        def shown(path: Path) -> str:
            return clean_text(os.path.relpath(path, ws))

        t = locate(ctx.workspace, args.path or ".")
        with beneath_errors(t):
            st = lstat_beneath(t.root, t.rel)
            if st is None:
                raise ToolError(f"{t.shown}: no such file or directory")
            files: Iterable[Path]
            rg = find_rg()
            if (
                rg is not None
                and stat.S_ISDIR(st.st_mode)
                and t.inside
                and size <= RG_MAX_PROGRAM
                and budget.keep_going()
                and (left := budget.deadline - self.clock()) > 0
            ):
                exclude, aside = narrow(args.pattern, ctx, ws, t.path)
                try:
                    found = rg_search(
                        args.pattern, t.path, ws, rg=rg, runner=ctx.runner, timeout=left,
                        cancel=ctx.cancel, limit=self.LIMIT, max_bytes=MAX_BYTES,
                        grace=LINES_GRACE_S, exclude=exclude,
                    )  # fmt: skip
                    meta = {"engine": "rg", "indexed_aside": aside}
                    return ToolResult(ok=True, output=_rg_answer(found), meta=meta)
                except Unavailable:
                    pass  # the built-in engine answers this one
            if stat.S_ISDIR(st.st_mode):
                files = walk_files(
                    t.path,
                    ctx.workspace,
                    on_skip=lambda p, why: skipped.add(shown(p), why),
                    keep_going=budget.keep_going,
                )
            elif stat.S_ISREG(st.st_mode):
                files = [t.path]
            else:
                files = []
                skipped.add(t.shown, kind_of(st.st_mode))
        hits: list[str] = []
        for path in files:
            if not budget.keep_going():
                break
            budget.files += 1
            rel = shown(path)
            try:
                data = read_bytes_beneath(t.root, path.relative_to(t.root).as_posix(), MAX_BYTES)
            except FileTooLarge:
                skipped.add(rel, f"larger than {MAX_BYTES // 1_000_000} MB")
                continue
            except NotRegularFile:
                skipped.add(rel, "not a regular file")
                continue
            except (OSError, ValueError):
                skipped.add(rel, "unreadable (gone, or a link swapped in)")
                continue
            budget.bytes += len(data)
            if b"\x00" in data[:4096]:
                skipped.add(rel, "binary")
                continue
            work = 0
            too_long = False
            for n, line in enumerate(data.decode("utf-8", errors="replace").splitlines(), 1):
                cost = size * max(len(line), 1)
                if cost > MAX_LINE_WORK:
                    too_long = True
                    continue
                work += cost
                if work > CHECK_EVERY_WORK:
                    work = 0
                    if not budget.keep_going():
                        break  # mid-file: one file can be many seconds of a large pattern
                if rx.search(line):
                    hits.append(f"{rel}:{n}: {line.strip()[:200]}")
                    if len(hits) >= self.LIMIT:
                        hits.append(
                            f"[... stopped at {self.LIMIT} matches; narrow the pattern or path]"
                        )
                        return ToolResult(ok=True, output="\n".join(hits))
            if too_long:
                skipped.add(rel, "lines too long for a pattern this large (simplify it)")
        return ToolResult(ok=True, output=_answer(hits, skipped, budget))


def _rg_answer(found: Found) -> str:
    skipped = Skipped()
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


def _answer(hits: list[str], skipped: Skipped, budget: _Budget) -> str:
    lines = list(hits) if hits else ["no matches" + (" in what was searched" if skipped else "")]
    if budget.stopped is not None:
        lines.append(
            f"[search {budget.stopped} ({budget.files} files read); the rest of the tree was not "
            "searched: narrow the path or the pattern]"
        )
    if skipped:
        lines.append(skipped.text())
    return "\n".join(lines)
