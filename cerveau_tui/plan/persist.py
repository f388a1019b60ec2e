"""The session log: every event, one JSON line each, under `<ws>/.cerveau/sessions/<id>.jsonl`.

Persisted so `cerveau report` can rebuild the plan after the run, from the same events the TUI saw.
Append-only and fsync'd per event, so a crash loses at most the line being written; a torn last
line is skipped on load instead of making the whole session unreadable.

The directory is opened beneath the workspace without following links (workspace.beneath): a
`.cerveau/sessions` replaced by a link to elsewhere would otherwise receive the next session's
log, written with the person's rights. A planted link is moved aside and a fresh directory made
(`SessionLog.moved_aside`, for the caller to show); loading refuses to read through one.
"""

from __future__ import annotations

import errno
import json
import os
import re
import threading
from pathlib import Path

from pydantic import ValidationError

from ..protocol import Event, EventType
from ..workspace.beneath import MovedAside, UnsafePath, move_aside, open_dir_beneath, open_state_dir
from .render import render_text
from .report import build_report_at

_SESSION_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")

#: Streamed fragments: the whole reply is in assistant_message, and an fsync per token would make
#: the log the slowest part of generation.
DEFAULT_SKIP = frozenset({EventType.TOKEN, EventType.REASONING})


class SessionNotFound(LookupError):
    pass


SESSIONS = ".cerveau/sessions"
_LOG_FLAGS = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC


def sessions_dir(workspace: Path) -> Path:
    return Path(workspace) / ".cerveau" / "sessions"


def _check_id(session_id: str) -> str:
    if not _SESSION_ID.match(session_id):
        raise ValueError(f"invalid session id {session_id!r}")
    return session_id


DURABLE = frozenset(
    {
        "turn_ended",
        "checkpoint",
        "plan_committed",
        "plan_updated",
        "approval_resolved",
        "parked",
        "rollback",
    }
)


class SessionLog:
    """A bus subscriber that appends each event to the session's JSONL file."""

    def __init__(
        self, workspace: Path, session_id: str, skip: frozenset[str] = DEFAULT_SKIP
    ) -> None:
        name = f"{_check_id(session_id)}.jsonl"
        self.path = sessions_dir(workspace) / name
        self.skip = skip
        self._lock = threading.Lock()
        self.events: list[Event] = []  # what was logged, for an in-process report
        dir_fd, moved = open_state_dir(Path(workspace), SESSIONS)
        #: What was found planted on the way (a link at `.cerveau/sessions`) and moved aside.
        self.moved_aside: list[MovedAside] = moved
        try:
            try:
                fd = os.open(name, _LOG_FLAGS, 0o644, dir_fd=dir_fd)
            except OSError as exc:
                if exc.errno != errno.ELOOP:
                    raise
                # A link planted at this session's own file name: moved aside like the directory.
                self.moved_aside.append(move_aside(dir_fd, name, SESSIONS.split("/")))
                fd = os.open(name, _LOG_FLAGS, 0o644, dir_fd=dir_fd)
        finally:
            os.close(dir_fd)
        self._fd: int | None = fd

    def __call__(self, event: Event) -> None:
        if event.type in self.skip:
            return
        line = (event.model_dump_json() + "\n").encode("utf-8")
        with self._lock:
            if self._fd is None:
                return
            self.events.append(event)
            # One write of the whole line with O_APPEND: concurrent writers cannot interleave it.
            os.write(self._fd, line)
            # fsync costs ~2 ms here; paying it for every event doubled the loop's overhead. The
            # write itself is in the kernel (it survives our crash); fsync guards against a power
            # loss, and is paid where losing the tail would lose a decision or a checkpoint.
            if event.type in DURABLE:
                os.fsync(self._fd)

    def close(self) -> None:
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None


def _open_sessions(workspace: Path) -> int | None:
    """The sessions directory's fd, None when there is none. SessionNotFound when a link is on the
    way: reading through it would load events from wherever it points."""
    try:
        return open_dir_beneath(Path(workspace), SESSIONS)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except UnsafePath as exc:
        raise SessionNotFound(f"not reading sessions: {exc}") from None


def list_sessions(workspace: Path) -> list[str]:
    """Session ids, oldest first (by last write). Links in the directory are not sessions."""
    fd = _open_sessions(workspace)
    if fd is None:
        return []
    try:
        with os.scandir(fd) as it:
            found = []
            for e in it:
                if not e.name.endswith(".jsonl") or not e.is_file(follow_symlinks=False):
                    continue
                found.append((e.stat(follow_symlinks=False).st_mtime_ns, e.name[: -len(".jsonl")]))
    finally:
        os.close(fd)
    found.sort()
    return [stem for _, stem in found]


def load_events(workspace: Path, session_id: str | None = None) -> list[Event]:
    """The events of one session (the latest when None). Raises SessionNotFound."""
    if session_id is None:
        ids = list_sessions(workspace)
        if not ids:
            raise SessionNotFound(f"no sessions under {sessions_dir(workspace)}")
        session_id = ids[-1]
    name = f"{_check_id(session_id)}.jsonl"
    dir_fd = _open_sessions(workspace)
    try:
        if dir_fd is None:
            raise FileNotFoundError(name)
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
        with os.fdopen(fd, "r", encoding="utf-8", errors="replace") as f:
            raw = f.read()
    except FileNotFoundError:
        raise SessionNotFound(
            f"no session {session_id!r} under {sessions_dir(workspace)}"
        ) from None
    except OSError as exc:
        if exc.errno != errno.ELOOP:
            raise
        raise SessionNotFound(
            f"session {session_id!r} is a symbolic link; not following it"
        ) from None
    finally:
        if dir_fd is not None:
            os.close(dir_fd)
    events: list[Event] = []
    for line in raw.splitlines():
        if not line.strip():
            continue
        try:
            events.append(Event.model_validate(json.loads(line)))
        except (ValueError, ValidationError):
            continue  # a torn line from a crash mid-write
    return events


def report_command(workspace: Path, session: str | None, as_json: bool) -> tuple[int, str]:
    """`cerveau report`: (exit code, text to print)."""
    workspace = Path(workspace)
    try:
        events = load_events(workspace, session)
    except (SessionNotFound, ValueError) as exc:
        return 1, str(exc)
    sid = session or (events[0].session_id if events else (list_sessions(workspace) or ["?"])[-1])
    report = build_report_at(events, workspace)
    if as_json:
        return 0, json.dumps({"session": sid, **report.to_json()}, indent=2)
    return 0, render_text(report, sid)
