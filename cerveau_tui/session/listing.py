"""`cerveau sessions`: the workspace's stored sessions, newest first, and which one "last" is.

Status: `ended` (its last turn ended), `interrupted` (its last turn started and never ended: the
process died mid-turn), `active` (a live cerveau holds its log right now).

`foreign`: a log this harness did not write for this person here (its header's seal does not
verify under the person's key for this session id and workspace: person_key.py). A cloned
repository can commit one; resumed, its conversation would reach the model as the person's. It
is listed and marked, `last` passes over it, and `--resume ID` refuses it.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Literal, TextIO

from pydantic import BaseModel

from ..person_key import load_key, log_header_verifies
from ..plan.persist import (
    SessionNotFound,
    is_busy,
    iter_lines,
    open_log,
    sealed_by,
    sessions_dir,
)
from ..plan.persist import list_sessions as session_ids
from ..text_safety import visible
from .stored import Reader, iso_mtime

Status = Literal["ended", "interrupted", "active"]

#: What a listing shows of the first task: a line, not a pasted file.
FIRST_TASK_CHARS = 200


class SessionSummary(BaseModel):
    id: str
    started: str | None  # ISO 8601, UTC; None for a log older than the header record
    last_active: str  # ISO 8601, UTC (the log's last write)
    first_task: str
    turns: int
    status: Status
    last_reason: str = ""  # how its last turn ended ("completed", "interrupted", ...)
    torn_lines: int = 0  # lines a crash tore, skipped
    foreign: bool = False  # not written by this harness for this person here: never resumed
    # The cache ledger over every turn (turn_ended's sums, the server's own figures): prompt
    # tokens evaluated, and reused from the cache; cache_pct None when no server said.
    prompt_evaluated: int = 0
    prompt_cached: int = 0
    cache_pct: int | None = None


class ResumeError(LookupError):
    """No session to resume, a bad id, or a log that cannot be read: said, never a traceback."""


#: Summaries already read, by workspace and id, with the (inode, mtime, size) they were read at:
#: the palette lists the sessions each time it opens, on the UI thread, and folding every log of
#: a workspace again (~80 ms for a 500-turn one) froze it for each session kept there.
_SEEN: dict[tuple[str, str], tuple[tuple[int, int, int], SessionSummary]] = {}
_SEEN_LOCK = threading.Lock()


def _first_record(f: TextIO) -> dict[str, object] | None:
    for obj in iter_lines(f):
        return obj
    return None


def summarise(workspace: Path, session_id: str) -> SessionSummary:
    with open_log(workspace, session_id) as f:
        # Never cached: the key decides, and it is the person's to replace.
        own = log_header_verifies(
            load_key(create=False), _first_record(f), session_id, Path(workspace)
        )
        f.seek(0)
        st = os.fstat(f.fileno())
        stamp = (st.st_ino, st.st_mtime_ns, st.st_size)
        key = (os.path.realpath(workspace), session_id)
        with _SEEN_LOCK:
            seen = _SEEN.get(key)
        if seen is not None and seen[0] == stamp:
            summary = seen[1]
        else:
            summary = _fold(f, session_id, st.st_mtime_ns, Path(workspace) if own else None)
            with _SEEN_LOCK:
                _SEEN[key] = (stamp, summary)
    # Live, never cached: whether a cerveau holds the log right now. A copy either way: what a
    # caller does with its summary must not change the next listing's.
    update: dict[str, object] = {"foreign": not own}
    if is_busy(workspace, session_id):
        update["status"] = "active"
    return summary.model_copy(update=update)


def _fold(f: TextIO, session_id: str, mtime: int, own: Path | None) -> SessionSummary:
    """`own`: the workspace of a log of the person's own, read as resuming reads it (only the
    lines sealed for them: the turns they had, not lines appended by something else). A foreign
    log is summarised as it claims to be, marked, and never resumed."""
    reader = Reader(session_id, full=False)
    verify = sealed_by(load_key(create=False), session_id, own) if own is not None else None
    for obj in iter_lines(f, verify):
        reader.line(obj)
    s = reader.s
    evaluated, cached = s.prompt_evaluated, s.prompt_cached
    last = s.turns[-1] if s.turns else None
    status: Status = "interrupted" if s.open_turn is not None else "ended"
    return SessionSummary(
        id=session_id,
        started=s.started,
        last_active=iso_mtime(mtime),
        first_task=s.first_task[:FIRST_TASK_CHARS],
        turns=len(s.turns),
        status=status,
        last_reason=(last.reason or "") if last is not None else "",
        torn_lines=s.torn,
        prompt_evaluated=evaluated,
        prompt_cached=cached,
        cache_pct=int(100 * cached / (evaluated + cached)) if evaluated + cached else None,
    )


def list_sessions(workspace: Path) -> list[SessionSummary]:
    """Every readable session of the workspace, newest (last written) first. A log that cannot be
    read is left out of the list rather than failing it."""
    out: list[SessionSummary] = []
    for sid in reversed(session_ids(Path(workspace))):
        try:
            out.append(summarise(Path(workspace), sid))
        except (SessionNotFound, ValueError):
            continue
    return out


def resolve_session(workspace: Path, spec: str) -> str:
    """The id `--resume`/`--continue` name: "" or "last" is the most recent session of the
    person's own (a foreign log is passed over; an id naming one is refused)."""
    workspace = Path(workspace)
    try:
        ids = session_ids(workspace)
    except SessionNotFound as exc:
        raise ResumeError(str(exc)) from None
    if spec in ("", "last"):
        if not ids:
            raise ResumeError(f"no sessions to resume under {sessions_dir(workspace)}")
        return _last_conversation(workspace, ids)
    if spec not in ids:
        try:
            open_log(workspace, spec).close()  # says why: a bad id, a link, unreadable
        except ValueError as exc:
            raise ResumeError(str(exc)) from None
        except SessionNotFound as exc:
            raise ResumeError(f"{exc}; `cerveau sessions` lists them") from None
    try:
        foreign = summarise(workspace, spec).foreign
    except (SessionNotFound, ValueError) as exc:
        raise ResumeError(str(exc)) from None
    if foreign:
        raise ResumeError(f"session {spec!r} {FOREIGN_WHY}; not resuming it")
    return spec


#: What a foreign log is, said the same way wherever one is refused or passed over.
FOREIGN_WHY = (
    "was not written by this harness for you here (its log is not sealed by your key for this"
    " workspace: one a cloned repository carried, or moved from another folder)"
)


def _last_conversation(workspace: Path, ids: list[str]) -> str:
    """The most recent session of the person's own with a turn in it: an app opened and closed
    without a word would otherwise be what `--continue` resumes, instead of the conversation the
    person means. Foreign logs are passed over (foreign_newer_than says which)."""
    own: list[str] = []
    for sid in reversed(ids):
        try:
            summary = summarise(workspace, sid)
        except (SessionNotFound, ValueError):
            continue
        if summary.foreign:
            continue
        if summary.turns:
            return sid
        own.append(sid)
    if not own:
        raise ResumeError(
            f"no session of yours to resume under {sessions_dir(workspace)}: the"
            f" {len(ids)} log(s) there were not written by this harness for you here"
            " (`cerveau sessions` marks them foreign)"
        )
    return own[0]


def foreign_newer_than(workspace: Path, session_id: str) -> list[str]:
    """The foreign logs written after `session_id`'s last write: what `last` passed over."""
    out: list[str] = []
    for s in list_sessions(workspace):
        if s.id == session_id:
            break
        if s.foreign:
            out.append(s.id)
    return out


def sessions_command(workspace: Path, as_json: bool) -> tuple[int, str]:
    """(exit code, text to print)."""
    try:
        found = list_sessions(workspace)
    except SessionNotFound as exc:
        return 1, str(exc)
    if as_json:
        return 0, json.dumps([s.model_dump() for s in found], indent=2)
    # An app opened and closed without a word leaves a log with no turn: listed, a day of them
    # buried the conversations the person came for. The JSON keeps every one (`turns` says).
    talked = [s for s in found if s.turns]
    empty = len(found) - len(talked)
    unlisted = (
        f"{empty} session(s) without a turn not listed (`cerveau sessions --json` lists them)"
        if empty
        else ""
    )
    if not talked:
        where = f"no sessions with a turn under {sessions_dir(Path(workspace))}"
        return 0, where + (f"; {unlisted}" if unlisted else "")
    lines = [
        f"{'ID':<14} {'STARTED':<25} {'LAST ACTIVE':<25} {'TURNS':>5}  {'STATUS':<20} FIRST TASK"
    ]
    for s in talked:
        # The task is the log's text (a model's, a cloned repository's): its control characters
        # shown, not sent to the terminal (a cursor-up and erase would hide the line above).
        task = visible(" ".join(s.first_task.split())[:60])
        status = f"{s.status} FOREIGN" if s.foreign else s.status
        started = visible(s.started or "-")[:25]
        lines.append(
            f"{s.id:<14} {started:<25} {s.last_active:<25} {s.turns:>5}  {status:<20} {task}"
        )
    if any(s.foreign for s in talked):
        lines.append(f"FOREIGN: {FOREIGN_WHY}; never resumed")
    if unlisted:
        lines.append(unlisted)
    return 0, "\n".join(lines)
