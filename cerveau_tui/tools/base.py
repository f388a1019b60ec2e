"""What a tool is: a name, a pydantic argument model, a retry class, and two methods.

`declare` says, before anything runs, which paths the call reads and writes and which command it
runs; the scheduler and the policy decide on that declaration. `run` does the work. A tool never
talks to the person and never prints: it returns a ToolResult, and the loop publishes it.
"""

from __future__ import annotations

import difflib
import os
import threading
from collections.abc import Callable, Collection, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel

from ..bus import Emitter
from ..plan.state import PlanState
from ..sandbox.base import Grant, Runner
from ..workspace.fingerprint.fingerprinter import Fingerprinter
from ..workspace.io.beneath import FileTooLarge, NotRegularFile, UnsafePath
from ..workspace.restore.store import BlobStore
from .args import inline_refs


class RetryClass(StrEnum):
    ARGS = "args"  # the call was wrong: fix the arguments
    TRANSIENT = "transient"  # the world was briefly wrong: the same call may work again


class ToolError(Exception):
    """A failure the model can act on; its message is what the model reads."""

    def __init__(self, message: str, retry_class: RetryClass = RetryClass.ARGS) -> None:
        super().__init__(message)
        self.retry_class = retry_class


class PathError(ToolError):
    pass


@dataclass(frozen=True)
class ToolAction:
    """A call into something the harness runs for the model (an MCP server's tool), judged by
    what it is, not by paths: the policy asks unless the person marked it read-only, and a
    remote server's call is a network crossing (policy/actions.py)."""

    summary: str  # what the dialog names: "time/get_current_time"
    #: (scope_key, scope) narrowest first: "approve for session" covers one of them.
    scopes: tuple[tuple[str, str], ...]
    read_only: bool = False  # marked so by the person in their config, never by the server
    remote: str | None = None  # the host a remote server is reached at


@dataclass
class Declared:
    reads: list[Path] = field(default_factory=list)
    writes: list[Path] = field(default_factory=list)
    command: str | None = None
    network: bool = False
    action: ToolAction | None = None


@dataclass
class ToolResult:
    ok: bool
    output: str
    error_class: RetryClass | None = None
    exit_code: int | None = None
    diff: str | None = None
    wrote: list[Path] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass
class ToolState:
    """What tools share across one session: the write sequence and the paths written.

    write_seq is a COUNT, not a clock: "a write happened after the check" is answered by comparing
    two counts, and a rewrite of an already-written file still moves it.
    """

    write_seq: int = 0
    written: list[Path] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    # Workspace-relative path -> blake3 of the bytes the model was shown by read_file: without
    # it a file the person (or a command) changed after the model read it was edited from the
    # model's stale copy, and nobody said so (reminders/changed.py compares the disk to this).
    reads: dict[str, str] = field(default_factory=dict)

    def record_write(self, path: Path) -> None:
        with self.lock:
            self.write_seq += 1
            if path not in self.written:
                self.written.append(path)

    def record_read(self, rel: str, digest: str) -> None:
        with self.lock:
            self.reads[rel] = digest

    def record_own_write(self, rel: str, digest: str, before: str | None = None) -> None:
        """The model's own file tool wrote these bytes: it knows them, so a file it had read is
        not "changed on disk" by its own edit. `before`: the digest the edit started from; when
        someone else had changed the file since the read, the record stays stale so their change
        is still named (an edit folds it in without showing it to the model)."""
        with self.lock:
            if rel in self.reads and (before is None or self.reads[rel] == before):
                self.reads[rel] = digest

    def read_digests(self) -> dict[str, str]:
        with self.lock:
            return dict(self.reads)


#: Hand one question to a read-only child turn: (task, path) -> a result whose str() the model
#: reads and whose `reason` says how the child turn ended (loop.delegate.DelegateResult).
Delegator = Callable[[str, str], Any]


@dataclass
class ToolContext:
    """Everything a tool may use, each collaborator named and typed. Absent (None) means the
    session has none, and the tool degrades as its docstring says (no fingerprinter: a command
    is assumed to have written; no store: a checkpoint compares but cannot restore)."""

    workspace: Path
    state: ToolState
    runner: Runner | None = None
    mode: str = "workspace-write"
    grant: Grant | None = None  # for this one call, after approval
    cancel: threading.Event | None = None
    bash_timeout: float = 120.0
    output_cap: int = 16_000
    bus: Emitter | None = None  # for tools that publish (commit_plan, update_plan)
    fingerprinter: Fingerprinter | None = None
    store: BlobStore | None = None
    plan: PlanState | None = None  # the session's plan, shared with the PlanHook
    delegate: Delegator | None = None


class Tool:
    name: ClassVar[str]
    description: ClassVar[str]
    Args: ClassVar[type[BaseModel]]
    retry_class: ClassVar[RetryClass] = RetryClass.ARGS
    mutates: ClassVar[bool] = False  # may change the workspace (marks the verification stale)
    # Runs a command the harness cannot see into: two of them never run at once, a transient
    # failure is never retried behind the model's back, undo can only say it cannot put back.
    runs_command: ClassVar[bool] = False

    def declare(self, args: BaseModel, ctx: ToolContext) -> Declared:
        return Declared()

    def preview(self, args: BaseModel, ctx: ToolContext) -> str | None:
        """What an approval dialog shows before the call runs (a diff), computed without
        changing anything; None when there is nothing to show."""
        return None

    def run(self, args: BaseModel, ctx: ToolContext) -> ToolResult:
        raise NotImplementedError

    @classmethod
    def schema(cls) -> dict[str, Any]:
        """Generated from `Args`, never written by hand: the constraints the model validates are
        the ones the grammar enforces (tools/args.py)."""
        params = inline_refs(cls.Args.model_json_schema())
        return {"name": cls.name, "description": cls.description, "parameters": params}


def resolve_path(workspace: Path, raw: str) -> Path:
    """Resolve a model-supplied path against the workspace root.

    Relative paths are taken from the root; `~` is NOT expanded (the model's home is not the
    person's); the result is normalised lexically and then realpath'd so a symlink pointing out is
    seen for where it lands. Whether that is allowed is the policy's call, not this function's.
    """
    if not isinstance(raw, str) or raw.strip() == "":
        raise PathError("path is empty; give a path relative to the workspace root")
    if "\x00" in raw:
        raise PathError("path contains a NUL byte")
    p = Path(raw.strip())
    if not p.is_absolute():
        p = workspace / p
    return Path(os.path.realpath(p))


@dataclass(frozen=True)
class Target:
    """Where a run() opens a path: `rel` beneath `root`, never following a link at open time.

    `path` is the realpath now, which is what declare() gave the policy when nothing changed in
    between; `root` is the workspace realpath for a path in it, `/` for one outside.
    """

    path: Path
    root: Path
    rel: str
    inside: bool
    shown: str
    asked: str = ""  # the path as the model named it, normalised (a link's own name counts too)


def _lexically_under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def locate(workspace: Path, raw: str) -> Target:
    """The Target of a model-supplied path at run() time.

    A path named inside the workspace whose realpath now lands outside it went through a link
    out: refused, whatever was judged. declare() saw the realpath of that moment; a link planted
    since (`ln -s /anywhere d` in the same reply) would otherwise take the write outside unasked.
    The model can name the outside path itself, which the policy then judges as such.
    """
    path = resolve_path(workspace, raw)
    ws = Path(os.path.realpath(workspace))
    shown = display_path(workspace, path)
    rel = path.relative_to(ws).as_posix() if _lexically_under(str(path), str(ws)) else None
    given = Path(raw.strip())
    lexical = os.path.normpath(given if given.is_absolute() else ws / given)
    if rel is not None:
        asked = os.path.relpath(lexical, ws) if _lexically_under(lexical, str(ws)) else lexical
        return Target(path, ws, "" if rel == "." else rel, True, shown, asked)
    if any(_lexically_under(lexical, str(r)) for r in {str(ws), os.path.abspath(workspace)}):
        raise PathError(
            f"{raw.strip()}: a symbolic link on the way leads out of the workspace (to {path}); "
            f"refusing to follow it. If you mean that file, give its absolute path {path}"
        )
    return Target(path, Path("/"), path.relative_to("/").as_posix(), False, shown, lexical)


def refuse_state_write(t: Target) -> None:
    """Writes into git's or the harness's own state are refused here, whatever the policy says:
    a git hook or `.git/config` runs with the person's rights on their next commit, `.git/commondir`
    redirects the repository, and `.cerveau/` holds the session log, blobs and config the harness
    trusts. Case-insensitive: a case-insensitive volume opens `.GIT/hooks` as `.git/hooks`."""
    parts = [p.casefold() for p in t.rel.split("/") if p]
    if ".git" in parts or ".git" in (p.casefold() for p in t.asked.split("/")):
        raise PathError(f"{t.shown} is git's own state; the file tools do not write there")
    if t.inside and parts and parts[0] == ".cerveau":
        raise PathError(f"{t.shown} is the harness's own state; the file tools do not write there")


#: How many existing paths a "no such file" names: the way forward, never the tree.
NEAREST = 3


def nearest_paths(asked: str, known: Collection[str], n: int = NEAREST) -> list[str]:
    """The existing paths closest by name to one that does not exist, best first.

    Found (issue 37): `read_file test_recipes.py`, then `list_files test_recipes.py` twice, each
    "no such file", until the repeat guard ended the turn; the file list the session keeps had
    `tests/test_recipes.py` all along. A path that ends in what was asked (the same name in
    another folder, shallowest first), else names close by spelling (difflib on the names)."""
    asked = asked.strip().strip("/").removeprefix("./")
    if not asked:
        return []
    tail = "/" + asked
    same = sorted((p for p in known if p.endswith(tail)), key=lambda p: (p.count("/"), p))
    if same:  # the name itself exists: that is the answer, not names spelt like it
        return same[:n]
    base = asked.rsplit("/", 1)[-1]
    by_name: dict[str, list[str]] = {}
    for p in known:
        name = p.rsplit("/", 1)[-1]
        # A name that close differs by a few characters: difflib over every name of a
        # 100,000-file tree took 0.5 s for a name close to none, over those this long 0.1 s.
        if abs(len(name) - len(base)) <= 3:
            by_name.setdefault(name, []).append(p)
    names = difflib.get_close_matches(base, by_name, n=n, cutoff=0.7)
    return [p for name in names for p in sorted(by_name[name])][:n]


def known_paths(ctx: ToolContext) -> list[str]:
    """The workspace's files and their folders as the fingerprint last saw them (no new walk);
    empty before its first scan, or without one."""
    snap = ctx.fingerprinter.last if ctx.fingerprinter is not None else None
    if snap is None:
        return []
    files = list(snap)
    folders = {f.rsplit("/", 1)[0] for f in files if "/" in f}
    return [*files, *sorted(folders)]


def no_such(ctx: ToolContext, t: Target, what: str = "file") -> ToolError:
    """'no such file', with the nearest existing paths when there are any."""
    near = nearest_paths(t.asked or t.shown, known_paths(ctx)) if t.inside else []
    hint = f"; did you mean {', '.join(near)}?" if near else ""
    return ToolError(f"{t.shown}: no such {what}{hint}")


@contextmanager
def beneath_errors(t: Target) -> Iterator[None]:
    """The beneath.* failures, as errors the model can act on (a retry would fail the same)."""
    try:
        yield
    except UnsafePath as exc:
        raise PathError(str(exc)) from exc
    except FileTooLarge as exc:
        raise ToolError(f"{t.shown} is {exc.size} bytes, too large to read whole") from exc
    except NotRegularFile as exc:
        raise ToolError(
            f"{t.shown} is not a regular file (a device, socket or FIFO); not read"
        ) from exc
    except NotADirectoryError as exc:
        raise ToolError(f"{t.shown}: a component on the way is a file, not a directory") from exc


def clean_text(text: str) -> str:
    """Text safe to put in JSON and send: a file name that is not UTF-8 arrives from the OS as
    lone surrogates, which no encoder accepts; they become U+FFFD instead of crashing the turn."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def display_path(workspace: Path, path: Path) -> str:
    try:
        return clean_text(str(path.relative_to(Path(os.path.realpath(workspace)))))
    except ValueError:
        return clean_text(str(path))
