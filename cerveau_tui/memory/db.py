"""The one way the harness opens its SQLite state (`.cerveau/memory.sqlite`): bounded, checked, and
replaced rather than trusted when it is not what this harness writes.

The file sits in the workspace, so a cloned repository can ship one. Two of those were tried: a
`notes` VIEW over a recursive CTE that never ends (`CREATE TABLE IF NOT EXISTS` leaves a view of
that name alone) hung the first model call at 100% CPU, since recall read it; a corrupted file was
an `internal` error at every session. So here:
- every query runs under a progress handler that aborts it after STEP_BUDGET virtual-machine
  steps (a count, not a clock: the same on a slow machine, and testable);
- at open, the file must pass `quick_check`, hold no view, trigger or virtual table (this
  harness makes none; each can run arbitrary SQL when a table is read or written), and answer
  the store's own queries (`probes`); `trusted_schema` is off for whatever remains;
- the file must carry this person's seal (an HMAC under the grant key, kept outside every
  workspace, over its id and the folder it lives in): a cloned repository's ordinary-looking
  `notes` reached the model as "notes from earlier sessions", prompt injection by memory; a
  database copied from another workspace is not this one's either;
- a file that fails any of it, or a query that is aborted or finds corruption later, is moved
  aside to `<name>.corrupt-<UTC time>` (with its journal files), said once as a warning, and a
  fresh database takes its place. A lock held by another process is not corruption: that query
  just answers nothing this time.

The file holds two tables, notes (memory/store.py's MemoryStore) and lessons (LessonStore): this
module alone opens it (`MemoryDB`), with one schema and one set of probes for both, so the two
cannot disagree on what a usable file is. A file written before the lessons table existed gets
it at its next open (`CREATE TABLE IF NOT EXISTS`); nothing else has changed in its format.

SQLite opens its files by name, following links, with the person's rights. So `.cerveau` is
opened beneath the workspace without following links (a planted link is moved aside), the
database and its side files are checked not to be links (moved aside too), and the database is
named through `/proc/self/fd/<dir fd>`, the directory just checked. WAL mode opens the side files
once, at connect, and keeps them open: a `.cerveau` swapped later cannot redirect a journal
created mid-session.
"""

from __future__ import annotations

import os
import sqlite3
import stat
import threading
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from ..state_home import locate, shown, state_path
from ..workspace.io.beneath import MovedAside, lstat_beneath, move_aside, open_state_dir

T = TypeVar("T")

#: The progress handler runs every STEP_EVERY instructions; a query gets STEP_BUDGET of those
#: (50 million instructions): recall over a few thousand notes takes well under one percent.
STEP_EVERY = 1_000
STEP_BUDGET = 50_000
#: A state file bigger than this is not one this harness wrote (notes and lessons are bounded).
MAX_DB_BYTES = 64 * 1024 * 1024

_SIDE = ("-wal", "-shm", "-journal")
OWNER = "cerveau_owner"  # one row: the database's id and this person's seal over it
_BUSY = {sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED} if hasattr(sqlite3, "SQLITE_BUSY") else {5, 6}


class NotOurs(Exception):
    """The database is not one this harness wrote: a view, a trigger, a file too big..."""


@dataclass(frozen=True)
class SetAside:
    """A state database that could not be used, renamed out of the way; shown as a warning."""

    path: str  # relative to the workspace
    moved_to: str
    why: str

    def __str__(self) -> str:
        return (
            f"{self.path} could not be used ({self.why}); moved it aside to {self.moved_to} "
            "and started a fresh one (its notes and lessons are not recalled)"
        )


def _code(exc: BaseException) -> int | None:
    code = getattr(exc, "sqlite_errorcode", None)
    return None if code is None else int(code) & 0xFF


class StateDB:
    """One bounded connection to the database `name` in the open directory `dir_fd` (named
    through /proc/self/fd so the directory checked is the one opened). `shown`: its path for
    messages. `schema`: run at every open. `probes`: queries that must compile against it."""

    def __init__(
        self,
        dir_fd: int,
        name: str,
        shown: str,
        schema: str,
        probes: Iterable[str] = (),
        *,
        timeout: float = 5.0,
        clock: Callable[[], float] = time.time,
        budget: int = STEP_BUDGET,
        fallback: str | None = None,
        key: Callable[[], bytes | None] | None = None,
    ) -> None:
        self._dir_fd, self._name, self._shown = dir_fd, name, shown
        # Where no /proc is mounted: the path, as the stores named it before.
        self._fallback = fallback or shown
        self._schema, self._probes = schema, list(probes)
        self._timeout, self._clock, self._budget = timeout, clock, budget
        self._steps = 0
        self._key = key or _person_key
        self.lock = threading.Lock()
        #: What was moved aside since the owner last took them (take_set_aside).
        self.set_aside: list[SetAside] = []
        self.conn = self._open()

    # --- opening ------------------------------------------------------------------------------

    def _where(self) -> str:
        proc = f"/proc/self/fd/{self._dir_fd}"
        return f"{proc}/{self._name}" if os.path.isdir(proc) else self._fallback

    def _progress(self) -> int:
        self._steps += 1
        return 1 if self._steps > self._budget else 0

    def _connect(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self._where(), check_same_thread=False, timeout=self._timeout)
        conn.set_progress_handler(self._progress, STEP_EVERY)
        return conn

    def _check(self, conn: sqlite3.Connection) -> None:
        self._steps = 0
        conn.execute("PRAGMA trusted_schema = OFF")
        conn.execute("PRAGMA cell_size_check = ON")
        row = conn.execute("PRAGMA quick_check(1)").fetchone()
        if row is None or row[0] != "ok":
            raise NotOurs(f"integrity check: {row[0] if row else 'no answer'}")
        for kind, name, sql in conn.execute("SELECT type, name, sql FROM sqlite_master"):
            if kind in ("view", "trigger"):
                raise NotOurs(f"it holds a {kind} ({name}), which this harness never makes")
            if kind == "table" and str(sql or "").lstrip().upper().startswith("CREATE VIRTUAL"):
                raise NotOurs(f"it holds a virtual table ({name})")
        conn.execute("PRAGMA journal_mode=WAL")
        conn.executescript(self._schema)
        for probe in self._probes:
            conn.execute(probe).fetchall()
        self._own(conn)

    def _own(self, conn: sqlite3.Connection) -> None:
        """Seal a fresh database as this person's; refuse one that is not sealed so."""
        key = self._key()
        if key is None:
            return  # no key can be read or made: nothing to seal with (the grants say so too)
        from ..person_key import mac, verifies

        conn.execute(f"CREATE TABLE IF NOT EXISTS {OWNER} (id TEXT NOT NULL, mac TEXT NOT NULL)")
        row = conn.execute(f"SELECT id, mac FROM {OWNER} LIMIT 1").fetchone()
        if row is None:
            if self._holds_rows(conn):
                raise NotOurs(
                    "it is not sealed as yours (planted by a repository, or written before "
                    "state files were sealed)"
                )
            db_id = uuid.uuid4().hex
            with conn:
                conn.execute(
                    f"INSERT INTO {OWNER} VALUES (?, ?)", (db_id, mac(key, self._body(db_id)))
                )
        elif not verifies(key, self._body(str(row[0])), row[1]):
            raise NotOurs("its seal is not yours for this folder (copied or planted)")

    def _body(self, db_id: str) -> dict[str, str]:
        try:
            folder = os.readlink(f"/proc/self/fd/{self._dir_fd}")
        except OSError:
            folder = os.path.dirname(os.path.realpath(self._fallback))
        return {"kind": "state-db", "name": self._name, "folder": folder, "id": db_id}

    @staticmethod
    def _holds_rows(conn: sqlite3.Connection) -> bool:
        names = [
            r[0]
            for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            if not str(r[0]).startswith("sqlite_") and r[0] != OWNER
        ]
        quoted = ('"' + n.replace('"', '""') + '"' for n in names)
        return any(conn.execute(f"SELECT 1 FROM {q} LIMIT 1").fetchone() for q in quoted)

    def _too_big(self) -> bool:
        try:
            st = os.stat(self._name, dir_fd=self._dir_fd, follow_symlinks=False)
        except FileNotFoundError:
            return False
        return stat.S_ISREG(st.st_mode) and st.st_size > MAX_DB_BYTES

    def _open(self) -> sqlite3.Connection:
        conn: sqlite3.Connection | None = None
        try:
            if self._too_big():
                raise NotOurs(f"larger than {MAX_DB_BYTES // (1024 * 1024)} MB")
            conn = self._connect()
            self._check(conn)
            return conn
        except (sqlite3.DatabaseError, NotOurs) as exc:
            if conn is not None:
                conn.close()
            if isinstance(exc, sqlite3.DatabaseError) and _code(exc) in _BUSY:
                raise
            self._move_aside(_why(exc))
        conn = self._connect()
        try:
            self._check(conn)
        except BaseException:
            conn.close()
            raise
        return conn

    def _move_aside(self, why: str) -> None:
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime(self._clock()))
        aside = f"{self._name}.corrupt-{stamp}"
        n = 1
        while _exists(self._dir_fd, aside):
            n += 1
            aside = f"{self._name}.corrupt-{stamp}-{n}"
        for suffix in ("", *_SIDE):
            try:
                os.rename(
                    self._name + suffix,
                    aside + suffix,
                    src_dir_fd=self._dir_fd,
                    dst_dir_fd=self._dir_fd,
                )
            except FileNotFoundError:
                continue
        parent = self._shown.rsplit("/", 1)[0]
        self.set_aside.append(SetAside(self._shown, f"{parent}/{aside}", why))

    # --- using --------------------------------------------------------------------------------

    def run(self, fn: Callable[[sqlite3.Connection], T], default: T, *, write: bool = False) -> T:
        """fn(conn) with its query bounded (in a transaction when `write`). When the database
        turns out corrupt or a query runs past its budget, the file is set aside, a fresh one
        opened, and `default` returned; a lock held elsewhere returns `default` alone."""
        with self.lock:
            self._steps = 0
            try:
                if write:
                    with self.conn:
                        return fn(self.conn)
                return fn(self.conn)
            except sqlite3.DatabaseError as exc:
                if _code(exc) in _BUSY:
                    return default
                self.conn.close()
                self._move_aside(_why(exc))
                self.conn = self._connect()
                self._check(self.conn)
                return default

    def take_set_aside(self) -> list[SetAside]:
        with self.lock:
            out, self.set_aside = self.set_aside, []
        return out

    def close(self) -> None:
        with self.lock:
            self.conn.close()


def _person_key() -> bytes | None:
    from ..person_key import load_key

    return load_key(create=True)


def _exists(dir_fd: int, name: str) -> bool:
    try:
        os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        return True
    except FileNotFoundError:
        return False


def _why(exc: BaseException) -> str:
    if isinstance(exc, sqlite3.OperationalError) and "interrupt" in str(exc).lower():
        return "a query ran past its bound"
    if isinstance(exc, NotOurs):
        return str(exc)
    return f"{type(exc).__name__}: {exc}"


# --- memory.sqlite: the one file of notes and lessons ------------------------------------------

DB = "memory.sqlite"
_DB_FILES = (DB, *(DB + s for s in _SIDE))

SCHEMA = """
CREATE TABLE IF NOT EXISTS notes (
    id INTEGER PRIMARY KEY,
    kind TEXT NOT NULL,           -- 'fact' | 'lesson'
    text TEXT NOT NULL,
    key TEXT NOT NULL UNIQUE,     -- normalised text, for deduplication
    seen INTEGER NOT NULL DEFAULT 1,
    created REAL NOT NULL,
    updated REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS lessons (
    id INTEGER PRIMARY KEY,
    kind TEXT NOT NULL,           -- 'breaker' | 'gate' | 'denied'
    trigger TEXT NOT NULL,        -- what failed
    fix TEXT NOT NULL,            -- what then worked
    stack TEXT NOT NULL DEFAULT '',
    words TEXT NOT NULL DEFAULT '',
    key TEXT NOT NULL UNIQUE,     -- for deduplication
    seen INTEGER NOT NULL DEFAULT 1,
    created REAL NOT NULL,
    updated REAL NOT NULL
);
"""
NOTE_COLUMNS = "id, kind, text, seen, created, updated"
LESSON_COLUMNS = "id, kind, trigger, fix, stack, seen, created, updated"
#: A file whose tables lack a column the stores read is not one this harness wrote.
PROBES = (
    f"SELECT {NOTE_COLUMNS}, key FROM notes LIMIT 0",
    f"SELECT {LESSON_COLUMNS}, words, key FROM lessons LIMIT 0",
)


class MemoryDB(StateDB):
    """The workspace's memory.sqlite, opened beneath it and checked (the module's docstring).
    `moved_aside`: what was found in the way at the opening (a link, a FIFO, a file not ours)."""

    def __init__(self, workspace: Path, clock: Callable[[], float] = time.time) -> None:
        self.path = state_path(workspace, DB)
        dir_fd, moved = memory_dir(Path(workspace))
        try:
            super().__init__(
                dir_fd, DB, shown(workspace, DB), SCHEMA, PROBES, clock=clock,
                fallback=str(self.path),
            )  # fmt: skip
        except BaseException:
            os.close(dir_fd)
            raise
        self.moved_aside: list[MovedAside | SetAside] = [*moved, *self.take_set_aside()]

    @staticmethod
    def exists(workspace: Path) -> bool:
        """Whether there can be anything to recall: asking must not create the database."""
        st = lstat_beneath(*locate(workspace, DB))
        return st is not None and stat.S_ISREG(st.st_mode)

    def close(self) -> None:
        super().close()
        if self._dir_fd >= 0:
            os.close(self._dir_fd)
            self._dir_fd = -1


def memory_dir(workspace: Path) -> tuple[int, list[MovedAside]]:
    """`.cerveau/` opened beneath the workspace, with any non-file planted where the database
    or its journal go moved aside."""
    root, rel = locate(workspace)  # `.cerveau`, or the alternate itself (state_home.py)
    fd, moved = open_state_dir(root, rel)
    try:
        for name in _DB_FILES:
            st = lstat_beneath(fd, name)
            if st is not None and not stat.S_ISREG(st.st_mode):
                moved.append(move_aside(fd, name, [rel] if rel else []))
    except BaseException:
        os.close(fd)
        raise
    return fd, moved
