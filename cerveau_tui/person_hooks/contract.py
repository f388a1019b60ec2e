"""The contract a person's hook is held to, as pure functions: what it reads, how it is started,
what its exit means. One contract for every event, as peers' hooks use it (Claude Code, Codex).

The attack it is built against: every byte of a tool call's arguments is the model's, and a hook
sees them. A hook whose command line held them (`fmt {path}`) would run `$(touch /tmp/pwned)` the
first time the model named such a file. So nothing of the event reaches a command line: the
person's command is argv (a list as written, or a string split into words by shlex with nothing
expanded), and the event travels as JSON on the hook's stdin. Getting it there through the
sandbox's launcher, which gives a command /dev/null for stdin and one pipe for its output, takes a
fixed wrapper script: the event in an environment variable expanded inside double quotes (a value
the shell never parses again) piped to the argv, and the hook's stderr kept apart in a private
temporary file, printed after a random separator the hook cannot know in advance.

Exit 0 goes on, exit 2 blocks (the event says what blocking means), anything else is a visible
error that blocks nothing; killed at its timeout, the same. stdout is context for the model,
bounded, added as a reminder after the history (never a prefix change).
"""

from __future__ import annotations

import json
import os
import secrets
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..policy.glob import glob_match
from ..policy.paths import Boundary
from ..protocol.person_hooks import HookOutcome
from ..tools.base import PathError, resolve_path

#: The environment variable the wrapper pipes to the hook's stdin.
EVENT_VAR = "CERVEAU_HOOK_EVENT"
#: The event as JSON stays under this (one environment string may hold 128 KiB on Linux):
#: the longest strings of the arguments or the output are cut first, and say so.
EVENT_MAX_BYTES = 64 * 1024
#: What of a hook's stdout the model reads, and of its stderr the model or the person reads.
CONTEXT_MAX_BYTES = 4096
STDERR_MAX_BYTES = 4096
#: The events that can block something with exit 2; at the others exit 2 is an error.
BLOCKING = frozenset({"user_prompt", "pre_tool", "post_tool", "turn_end"})


def argv_of(command: str | list[str]) -> list[str]:
    """The person's command as argv: a list as written; a string split as a shell splits words
    (quotes, backslashes), with no variable, glob or substitution expanded (shlex)."""
    return list(command) if isinstance(command, list) else shlex.split(command)


def hook_name(name: str, command: str | list[str]) -> str:
    if name:
        return name
    argv = argv_of(command)
    return argv[0].rsplit("/", 1)[-1] if argv else "hook"


def wrapper(argv: list[str], separator: str) -> str:
    """The fixed `sh -c` script that runs argv with the event on its stdin. Its only variable
    parts are the person's argv (quoted word by word) and our separator; the event is
    "$CERVEAU_HOOK_EVENT", expanded inside double quotes, so none of its bytes is parsed."""
    return "\n".join(
        [
            "err=$(mktemp) || exit 125",
            f'printf "%s" "${EVENT_VAR}" | {shlex.join(argv)} 2>"$err"',
            "rc=$?",
            f"printf '\\n%s\\n' {separator}",
            f'head -c {STDERR_MAX_BYTES} "$err"',
            'rm -f "$err"',
            'exit "$rc"',
        ]
    )


def new_separator() -> str:
    return "cerveau-hook-" + secrets.token_hex(16)


def split_output(output: str, separator: str) -> tuple[str, str]:
    """(stdout, stderr) of the wrapper's output: the last separator line divides them. Absent
    (the hook was killed before the wrapper printed it), everything is stdout."""
    head, found, tail = output.rpartition(f"\n{separator}\n")
    if not found:
        return output, ""
    return head, tail


def outcome(
    event: str, exit_code: int | None, *, timed_out: bool, interrupted: bool
) -> HookOutcome:
    """`event` "" where nothing can be blocked any more."""
    if exit_code is None:
        return "stopped" if interrupted and not timed_out else "timeout"
    if exit_code == 0:
        return "ok"
    if exit_code == 2 and event in BLOCKING:
        return "blocked"
    return "error"


def clip(text: str, limit: int) -> str:
    """At most `limit` bytes of text, cut on a character, saying how much was cut."""
    data = text.encode("utf-8", "replace")
    if len(data) <= limit:
        return text
    kept = data[:limit].decode("utf-8", "ignore")
    return f"{kept}\n[{len(data) - limit} more bytes cut]"


def event_json(event: dict[str, Any], limit: int = EVENT_MAX_BYTES) -> str:
    """The event as one JSON line under `limit` bytes: the longest strings are cut until it fits
    (a written file's content, a command's output), each saying how much it lost."""
    cap = limit
    while True:
        # ASCII: a lone surrogate the model sent ("\ud800") cannot be encoded into an environment
        # string, and raised in the launcher; escaped, any JSON parser reads it back.
        text = json.dumps(_capped(event, cap))
        if len(text.encode()) <= limit or cap <= 64:
            return text
        cap //= 2


def _capped(value: Any, cap: int) -> Any:
    if isinstance(value, str):
        return clip(value, cap)
    if isinstance(value, dict):
        return {str(k): _capped(v, cap) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_capped(v, cap) for v in value]
    return value


def call_paths(workspace: Path, arguments: dict[str, Any]) -> tuple[str, ...]:
    """The call's `path` as the tool will act on it, in the names a path glob is matched against
    (workspace-relative inside, absolute outside: policy/paths.Boundary): resolved by the file
    tools' own resolver (tools/base.resolve_path: `..` folded, links followed), plus the name as
    asked with `.`/`..`/`//` folded (a link's own name counts too, as the policy counts it).

    Found by probing: matched on the text of the argument, a hook blocking `write_file(src/**)`
    let through `x/../src/h`, the workspace's absolute path to `src/d`, and `lnk/f` through a
    link `lnk -> src`: each written into src/ on the host. One resolver for the tool and the
    matcher is what makes the two agree. () for a call that names no path."""
    raw = arguments.get("path")
    if not isinstance(raw, str) or not raw.strip():
        return ()
    try:
        resolved = resolve_path(workspace, raw)
    except PathError:
        return ()
    boundary = Boundary(workspace)
    given = raw.strip()
    lexical = Path(os.path.normpath(given if os.path.isabs(given) else boundary.workspace / given))
    names = [boundary.match_name(resolved), boundary.match_name(lexical)]
    under = os.path.abspath(workspace)  # the workspace as named, when it is itself a link
    if lexical.is_relative_to(under) and under != str(boundary.workspace):
        names.append(lexical.relative_to(under).as_posix())
    if os.path.isdir(resolved):  # a folder a tool walks: said by its trailing `/`, `./` the root
        names = [f"{n}/" if n else "./" for n in names]
    return tuple(dict.fromkeys(n for n in names if n))


def _may_hold(pattern: str, folder: str) -> bool:
    """Whether a folder (`src/`, `./` the root) may hold a path the glob matches: any folder for
    a pattern without a `/` (it matches a name anywhere), else the folders on the way to, or
    beneath, its literal head (`secrets/**` from `./` or `secrets/`, not from `docs/`)."""
    pat = pattern.strip()
    while pat.startswith("./"):
        pat = pat[2:]
    if "/" not in pat.rstrip("/"):
        return True
    head: list[str] = []
    for seg in pat.strip("/").split("/"):
        if any(c in seg for c in "*?[\\"):
            break
        head.append(seg)
    segs = [p for p in folder.split("/") if p and p != "."]
    n = min(len(head), len(segs))
    return head[:n] == segs[:n]


@dataclass(frozen=True)
class Matcher:
    """`match`: alternatives separated by `|`, each a tool-name glob, optionally with a path
    glob in parentheses: `bash`, `write_file|edit_file`, `*(src/**)`, `write_file(*.py)`. "" matches
    every call. The product's one glob dialect (policy/glob.py).

    A path glob is matched against the call's `path` as the tool will resolve it (`call_paths`),
    never the model's spelling of it, so `./src/x`, `a/../src/x`, the absolute path and a link
    into src/ are all src/x. A call on a folder (list_files, search, explore walk it) matches when
    the folder may hold a path the glob matches: `*(secrets/**)` holds for a search of the whole
    workspace, whose results would show secrets/' contents. What it cannot promise: a command
    (`bash`) names no path the harness can know before it runs, so a path alternative never
    matches it: a person who must keep the model out of src/ blocks `bash` by name (or reads
    `tool.arguments.command` in the hook)."""

    alternatives: tuple[tuple[str, str | None], ...]

    @classmethod
    def parse(cls, match: str) -> Matcher:
        alts: list[tuple[str, str | None]] = []
        for part in (p.strip() for p in match.split("|")):
            if not part:
                continue
            if part.endswith(")") and "(" in part:
                name, _, path = part[:-1].partition("(")
                alts.append((name.strip() or "*", path.strip()))
            else:
                alts.append((part, None))
        return cls(tuple(alts))

    def __call__(self, tool: str, paths: Sequence[str]) -> bool:
        """`paths`: call_paths of the call (every name it goes by)."""
        if not self.alternatives:
            return True
        for name, pattern in self.alternatives:
            if not glob_match(name, tool):
                continue
            if pattern is None:
                return True
            if any(glob_match(pattern, p) or (p.endswith("/") and _may_hold(pattern, p))
                   for p in paths):  # fmt: skip
                return True
        return False
