"""`search` and `list_files` answered by ripgrep (tools/ripgrep.py runs it).

A search is two rg runs in the sandbox. The first reads the whole tree once and prints only the
count of matching lines of each file that matches (`--count`), and on stderr its `--debug` log,
which names each file it did not search and why: binary, over the size cap, a FIFO or device.
The second prints the lines of only the first of those files, in the walk's order (walk_key),
until the cap: the cap costs nothing to honour, and the answer says exactly what it left out
(how many more lines, in which files). "no matches" means the files were searched.

Measured on 100,000 files (benchmarks/scale.py): printing every file searched (--include-zero)
cost as much again as the search (rg resolves each path it prints, a readlink per component),
and a second walk to find FIFOs or large files (find, rg --files) ~40% more; the log costs
nothing. Links are never followed, so never named either.
"""

from __future__ import annotations

import heapq
import os
import re
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from ..sandbox.base import Runner
from . import ripgrep
from .base import clean_text

_GLOB_META = re.compile(r"[\\\[\]*?{}!]")


class Unavailable(Exception):
    """rg could not answer this call: it refused the pattern (Rust's regex is not RE2 at the
    edges) or could not start. The message is rg's."""


@dataclass
class Found:
    hits: list[str] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (shown path, reason)
    stopped: str | None = None
    more: str = ""  # what the cap left out, said after the hits


def search(
    pattern: str,
    root: Path,
    ws: Path,
    *,
    rg: str,
    runner: Runner | None,
    timeout: float,
    cancel: threading.Event | None,
    limit: int,
    max_bytes: int,
    grace: float = 3.0,
    only: str | None = None,
) -> Found:
    """`only`: the one entry of `root` to search (a file the model named: a glob that overrides
    .gitignore too)."""
    started = time.monotonic()
    base = ripgrep.common(rg, ws)
    # --debug: rg's log names what it did not search (binary, too large, a FIFO), one line each,
    # on stderr. Only the files that match are printed: rg resolves each path it prints (a
    # readlink per component), which doubled the cost of a 100,000-file count that printed all.
    count = [*base, "--debug", "--count", "--max-filesize", str(max_bytes)]
    if only is not None:
        # A glob with no `/` matches the name (one anchored by `/` is read from rg's cwd, the
        # workspace); --max-depth 1 keeps it to root's own entries.
        count += ["--max-depth", "1", "--glob", _GLOB_META.sub(r"\\\g<0>", only)]
    count += ["--regexp", pattern, "--", str(root)]
    first = ripgrep.run([("count", count)], ws, runner, timeout, cancel)
    code = first.codes.get("count")
    per_file = ripgrep.counts(first.sections.get("count", ""))
    if first.stopped is None and code not in (0, 1):
        # rg refused the pattern (Rust's regex syntax is not RE2's at the edges) or did not run.
        err = first.sections.get("count_err", first.result.output).splitlines()
        raise Unavailable(" ".join(x for x in err if not x.startswith("rg: DEBUG|"))[-300:])
    found = Found(stopped=first.stopped)

    def shown(path: str) -> str:
        return clean_text(_rel(path, ws))

    # rg printed every path under the absolute root: the walk's order is theirs as they are.
    matched = sorted(per_file.items(), key=lambda x: ripgrep.walk_key(x[0]))
    chosen: list[str] = []
    running = 0
    for path, n in matched:
        if running >= limit:
            break
        real = path if "\ufffd" not in path else _recover(path)
        if real is not None:
            chosen.append(real)
        running += n
    total = sum(n for _, n in matched)
    if chosen and found.stopped != "cancelled":
        # Out of time for the whole tree or not, the lines of what it found get a little time.
        timeout = max(timeout - (time.monotonic() - started), grace)
        second = ripgrep.run(
            [("lines", [*base, "--line-number", "--with-filename", "--max-count", str(limit),
                        "--max-columns", "1000", "--max-columns-preview",
                        "--regexp", pattern, "--", *chosen])],
            ws, runner, timeout, cancel,
        )  # fmt: skip
        found.stopped = found.stopped or second.stopped
        got = ripgrep.lines(second.sections.get("lines", ""))
        got.sort(key=lambda x: (ripgrep.walk_key(x[0]), x[1]))
        got = got[:limit]
        found.hits = [f"{shown(p)}:{n}: {text.strip()[:200]}" for p, n, text in got]
        per_shown = Counter(p for p, _, _ in got)
        # The files not shown whole: every one counted, the first few named (a name costs).
        rest = [(p, n - per_shown[p]) for p, n in matched if n > per_shown[p]]
        if rest and found.hits:
            named = [(shown(p), n) for p, n in rest[:5]]
            found.more = _left_out(
                named, len(rest), len(found.hits), total, len(per_shown), len(matched), limit
            )
    told = ripgrep.not_searched(first.sections.get("count_err", ""), max_bytes)
    found.skipped = sorted(
        ((shown(p), why) for p, why in told), key=lambda x: ripgrep.walk_key(x[0])
    )
    return found


def _recover(shown_path: str) -> str | None:
    """The real name of a path rg printed with bytes that are not UTF-8 (the runner decodes its
    output with replacement): each such component found again among its folder's entries, as
    the surrogate-escaped str that execve turns back into those bytes."""
    parts = shown_path.split("/")
    here = "/"
    for part in parts[1:]:
        if "\ufffd" in part:
            try:
                entries = os.listdir(here)
            except OSError:
                return None
            part = next((e for e in entries if clean_text(e) == part), "")
            if not part:
                return None
        here = os.path.join(here, part)
    return here


def _rel(path: str, base: Path) -> str:
    """`path` relative to `base`: rg printed it under `base`, so a prefix cut (os.path.relpath
    costs microseconds each, over tens of thousands of paths)."""
    prefix = str(base).rstrip("/") + "/"
    return path[len(prefix) :] if path.startswith(prefix) else os.path.relpath(path, base)


def _left_out(
    named: list[tuple[str, int]],
    n_rest: int,
    hits: int,
    total: int,
    in_files: int,
    files: int,
    limit: int,
) -> str:
    """`[... 100 of 2345 matching lines shown (the cap is 100), in 3 of 87 files; not shown:
    2245 lines, in a.py (12), b.py (40) ... and 80 more files; narrow the pattern or path]`"""
    top = ", ".join(f"{p} ({n})" for p, n in named)
    tail = f" and {n_rest - len(named)} more files" if n_rest > len(named) else ""
    return (
        f"[... {hits} of {total} matching lines shown (the cap is {limit}), in {in_files} of "
        f"{files} files; not shown: {total - hits} lines, in {top}{tail}; narrow the pattern or "
        "path]"
    )


def list_files(root: Path, ws: Path, *, rg: str, runner: Runner | None, timeout: float, cancel: threading.Event | None, limit: int) -> tuple[list[str], str]:  # fmt: skip
    """The files under `root` (relative to it), the first `limit` in the walk's order, sorted;
    and what was left out, said by folder ("" when nothing was)."""
    res = ripgrep.run([("files", [*ripgrep.common(rg, ws), "--files", "--", str(root)])], ws, runner, timeout, cancel)  # fmt: skip
    if res.codes.get("files") not in (0, 1) and res.stopped is None:
        raise Unavailable(res.result.output[:300])
    rels = [_rel(p, root) for p in ripgrep.names(res.sections.get("files", ""))]
    # As the built-in walk did: the first limit + 1 in its order, sorted, cut to the limit.
    first = heapq.nsmallest(limit + 1, rels, key=ripgrep.walk_key)
    shown = sorted(clean_text(r) for r in first)[:limit]
    stopped = f" (the listing {res.stopped}: there may be more)" if res.stopped else ""
    if len(rels) <= limit:
        return shown, (f"[listing {res.stopped}: there may be more files]" if stopped else "")
    seen = set(shown)
    rest = Counter(
        r.split("/", 1)[0] + ("/" if "/" in r else "") for r in rels if clean_text(r) not in seen
    )
    top = ", ".join(f"{clean_text(d)} ({n})" for d, n in rest.most_common(6))
    others = f" and {len(rest) - 6} more" if len(rest) > 6 else ""
    return shown, (
        f"[... {limit} of {len(rels)} files shown{stopped}; not shown: {len(rels) - limit}, "
        f"in {top}{others}; list a subdirectory]"
    )
