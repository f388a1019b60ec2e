"""The session log: every event, one JSON line each, under `<ws>/.cerveau/sessions/<id>.jsonl`.

Persisted so `cerveau report` can rebuild the plan after the run, from the same events the TUI saw.
Append-only and fsync'd per event, so a crash loses at most the line being written; a torn last
line is skipped on load instead of making the whole session unreadable.

The directory is opened beneath the workspace without following links (workspace.io.beneath): a
`.cerveau/sessions` replaced by a link to elsewhere would otherwise receive the next session's
log, written with the person's rights. A planted link is moved aside and a fresh directory made
(`SessionLog.moved_aside`, for the caller to show); loading refuses to read through one.

Each line carries an HMAC under the person's key (`sig`, person_key.py) and the header a seal
of the session id and the workspace: resuming reads only what this harness wrote for this person
here, never a log a cloned repository carried nor a line something else appended.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import re
import stat
import threading
import time
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

from pydantic import ValidationError

from ..person_key import line_verifies, load_key, seal_line, seal_log_header
from ..protocol import Event, PlanReported, ReasoningPayload, ReplyProgress, TokenPayload
from ..protocol.records import SessionHeader
from ..state_file import kind_of
from ..state_home import locate, state_path
from ..workspace.io.beneath import (
    MovedAside,
    UnsafePath,
    move_aside,
    open_dir_beneath,
    open_state_dir,
)

_SESSION_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")

#: Streamed fragments: the whole reply is in assistant_message, and an fsync per token would make
#: the log the slowest part of generation. And the plan report: a view of the plan ledger (its
#: events and writes are logged), recomputed against the disk whenever it is read back.
DEFAULT_SKIP = frozenset(
    {
        TokenPayload.event_type,
        ReasoningPayload.event_type,
        ReplyProgress.event_type,
        PlanReported.event_type,
    }
)


class SessionNotFound(LookupError):
    pass


SESSIONS = ".cerveau/sessions"
#: A line past this is not one of ours: tool results are capped far below (output_cap).
MAX_LINE_CHARS = 16 << 20
_LOG_FLAGS = os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC


def sessions_dir(workspace: Path) -> Path:
    """Where the workspace's logs are: its `.cerveau/sessions` or the alternate's (state_home)."""
    return state_path(workspace, "sessions")


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
        "compacted",
        "session_resumed",
    }
)


class SessionBusy(RuntimeError):
    """Another live process holds this session's log: two writers would interleave histories."""


def _now_iso(clock: Callable[[], float]) -> str:
    return datetime.fromtimestamp(clock(), UTC).isoformat(timespec="seconds")


class SessionLog:
    """A bus subscriber that appends each event to the session's JSONL file.

    Besides events the file holds records (`{"kind": ...}` lines: a header, history messages,
    grants, undo references) that the session layer writes through `append` and `prelude`; an
    event line has no `kind`. The log is held with an exclusive flock while open: a second
    process resuming the same session would interleave two histories in one file (SessionBusy),
    and the lock's absence is how a listing tells a live session from one a crash left."""

    def __init__(
        self,
        workspace: Path,
        session_id: str,
        skip: frozenset[str] = DEFAULT_SKIP,
        clock: Callable[[], float] = time.time,
    ) -> None:
        name = f"{_check_id(session_id)}.jsonl"
        self.path = sessions_dir(workspace) / name
        self.session_id = session_id
        self.skip = skip
        self._lock = threading.Lock()
        #: Called under the lock before each logged event; returns records that must reach the
        #: file before it (the history messages appended since the last event).
        self.prelude: Callable[[Event], list[dict[str, Any]]] | None = None
        root, rel = locate(workspace, "sessions")
        dir_fd, moved = open_state_dir(root, rel)
        #: What was found planted on the way (a link at `.cerveau/sessions`) and moved aside.
        self.moved_aside: list[MovedAside] = moved
        try:
            try:
                fd = os.open(name, _LOG_FLAGS, 0o644, dir_fd=dir_fd)
            except OSError as exc:
                if exc.errno != errno.ELOOP:
                    raise
                # A link planted at this session's own file name: moved aside like the directory.
                self.moved_aside.append(move_aside(dir_fd, name, rel.split("/")))
                fd = os.open(name, _LOG_FLAGS, 0o644, dir_fd=dir_fd)
        finally:
            os.close(dir_fd)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            raise SessionBusy(
                f"session {session_id!r} is open in another cerveau; close it first"
            ) from None
        self._fd: int | None = fd
        # Sealed with the person's key (person_key.py): its header and each line. A log in a
        # cloned repository, or a line appended by anything else, is not one this harness wrote
        # here, and resuming it would hand its history to the model.
        self._key = load_key()
        self._where = os.path.realpath(workspace)
        size = os.fstat(fd).st_size
        if size == 0:
            started = _now_iso(clock)
            seal = seal_log_header(self._key, session_id, Path(workspace), started)
            header = SessionHeader(v=1, id=session_id, started=started, seal=seal)
            self._write([header.dump()])
        elif os.pread(fd, 1, size - 1) != b"\n":
            # A crash tore the last line: without a newline the next record would be glued to
            # it and lost with it on the next read.
            os.write(fd, b"\n")

    def __call__(self, event: Event) -> None:
        with self._lock:
            if self._fd is None:
                return
            before = self.prelude(event) if self.prelude is not None else []
            if event.type in self.skip:
                if before:
                    self._write(before)
                return
            try:
                line = (event.model_dump_json() + "\n").encode("utf-8")
            except ValueError:  # a lone surrogate the model sent: escaped, not the line lost
                line = _line(event.model_dump(mode="json"))
            # One write of the records and the line with O_APPEND: the order on disk is the order
            # in memory, and concurrent writers cannot interleave them.
            lines = [*(_line(r) for r in before), line]
            os.write(self._fd, b"".join(self._sealed(x) for x in lines))
            # fsync costs ~2 ms here; paying it for every event doubled the loop's overhead. The
            # write itself is in the kernel (it survives our crash); fsync guards against a power
            # loss, and is paid where losing the tail would lose a decision or a checkpoint.
            if event.type in DURABLE:
                os.fsync(self._fd)

    def append(
        self,
        records: list[dict[str, Any]],
        *,
        durable: bool = False,
        pending: Callable[[], list[dict[str, Any]]] | None = None,
    ) -> None:
        """Write records (not events) now, after what `pending` returns (taken under the same
        lock as the prelude, so the two never both take the same messages); fsync'd when they
        record a decision (a grant)."""
        with self._lock:
            if self._fd is None:
                return
            records = [*(pending() if pending is not None else []), *records]
            if not records:
                return
            self._write(records)
            if durable:
                os.fsync(self._fd)

    def _write(self, records: list[dict[str, Any]]) -> None:
        assert self._fd is not None
        os.write(self._fd, b"".join(self._sealed(_line(r)) for r in records))

    def _sealed(self, line: bytes) -> bytes:
        return seal_line(self._key, self.session_id, self._where, line[:-1]) + b"\n"

    def close(self) -> None:
        with self._lock:
            if self._fd is not None:
                os.fsync(self._fd)
                os.close(self._fd)  # releases the flock
                self._fd = None


def _line(record: dict[str, Any]) -> bytes:
    text = json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError:
        # A lone surrogate (the model's JSON may carry "\ud800"): escaped, it reads back exactly;
        # raw, the write would fail and the record be lost.
        return (json.dumps(record, separators=(",", ":")) + "\n").encode("ascii")


def _open_sessions(workspace: Path) -> int | None:
    """The sessions directory's fd, None when there is none. SessionNotFound when a link is on the
    way: reading through it would load events from wherever it points."""
    try:
        return open_dir_beneath(*locate(workspace, "sessions"))
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


def open_log(workspace: Path, session_id: str) -> TextIO:
    """One session's log for reading, opened beneath the workspace without following a link.
    Raises SessionNotFound (no such session, or a link on the way) and ValueError (a bad id)."""
    name = f"{_check_id(session_id)}.jsonl"
    dir_fd = _open_sessions(workspace)
    try:
        if dir_fd is None:
            raise FileNotFoundError(name)
        # Non-blocking: a FIFO named like a session log (a cloned repository's) blocked `report
        # ID` and `--resume ID` in open() forever. Refused below unless a regular file.
        fd = os.open(
            name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dir_fd
        )
    except FileNotFoundError:
        raise SessionNotFound(
            f"no session {session_id!r} under {sessions_dir(workspace)}"
        ) from None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise SessionNotFound(
                f"session {session_id!r} is a symbolic link; not following it"
            ) from None
        raise SessionNotFound(f"session {session_id!r} cannot be read: {exc.strerror}") from None
    finally:
        if dir_fd is not None:
            os.close(dir_fd)
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise SessionNotFound(f"session {session_id!r} is {kind_of(mode)}, not a log; not read")
    os.set_blocking(fd, True)
    return os.fdopen(fd, "r", encoding="utf-8", errors="replace")


def sealed_by(key: bytes | None, session_id: str, workspace: Path) -> Callable[[str], bool]:
    """The check `iter_lines` takes to read only the lines this harness wrote for the person."""
    where = os.path.realpath(workspace)
    return lambda line: line_verifies(key, session_id, where, line)


def iter_lines(
    f: TextIO, verify: Callable[[str], bool] | None = None
) -> Iterator[dict[str, Any] | None]:
    """Each line as a JSON object, None for a line that is not one (torn by a crash mid-write:
    skipped and counted by the caller, never fatal). Streamed: a long log is never held whole.
    With `verify`, a line it refuses (no valid seal: not written here by this harness) is None
    too, and a sealed one comes without its `sig`."""
    while True:
        line = f.readline(MAX_LINE_CHARS)
        if not line:
            return
        if len(line) >= MAX_LINE_CHARS and not line.endswith("\n"):
            # Longer than any line this harness writes (a planted file?): skipped whole, in
            # pieces, so one giant line cannot take the memory a listing has.
            while (rest := f.readline(MAX_LINE_CHARS)) and not rest.endswith("\n"):
                pass
            yield None
            continue
        if not line.strip():
            continue
        if verify is not None and not verify(line):
            yield None
            continue
        try:
            obj = json.loads(line)
        except ValueError:
            yield None
            continue
        if isinstance(obj, dict):
            obj.pop("sig", None)
            yield obj
        else:
            yield None


def is_busy(workspace: Path, session_id: str) -> bool:
    """True while a live process holds the session's log (SessionLog's flock)."""
    try:
        f = open_log(workspace, session_id)
    except (SessionNotFound, ValueError):
        return False
    with f:
        try:
            fcntl.flock(f.fileno(), fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(f.fileno(), fcntl.LOCK_UN)
    return False


def latest_session(workspace: Path) -> str:
    ids = list_sessions(workspace)
    if not ids:
        raise SessionNotFound(f"no sessions under {sessions_dir(workspace)}")
    return ids[-1]


def load_events(workspace: Path, session_id: str | None = None) -> list[Event]:
    """The events of one session (the latest when None). Raises SessionNotFound."""
    if session_id is None:
        session_id = latest_session(workspace)
    events: list[Event] = []
    with open_log(workspace, session_id) as f:
        for obj in iter_lines(f):
            if obj is None or "kind" in obj:
                continue  # a torn line from a crash mid-write, or a record that is not an event
            try:
                events.append(Event.model_validate(obj))
            except ValidationError:
                continue
    return events
