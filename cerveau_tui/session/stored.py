"""A stored session read back: the log's events and records folded into what resuming needs.

The log (plan/persist.py) is one JSONL file per session. Event lines are the bus's events as the
clients saw them; record lines (`{"kind": ...}`) are what the events do not carry, written by the
journal (session/journal.py):

    session   the header: id, format version, when it started
    message   one history message (`m`, the wire dict as sent), appended in the order the engine
              appended it, with its `origin` and a result's `status` (older logs: `m` alone)
    reset     the history was replaced (an old-style compaction): messages follow from empty
    window    the compacted window's state (EngineState.window.to_dict()), the last one wins
    grant     an "approve for this session" (scope key, scope, the room it gave)
    revoke    one taken back
    undo / changes   the undo log's, in logs of versions before undo became a rewind of the
              last turn: read, not used
    cut       a turn a crash cut off, closed when the session was resumed
    restore_point / rewind   rewind's points and rewinds (session/rewind/points.py); a rewind
              of the conversation cuts what was folded so far back to its point (rewind/fold.py)

Each record is read as its model (protocol/records.py, a closed union like the events). A line
that is not a JSON object (torn by a crash mid-write) is skipped and counted, never fatal; so is a
record whose fields do not validate, and a line without this harness's seal (each line carries an
HMAC under the person's key: person_key.py). A record kind this version does not know is skipped
and named (`unknown`): a newer version's log still resumes here, without what it added.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from ..history import History, Message
from ..person_key import load_key
from ..plan.paths import norm_rel
from ..plan.persist import iter_lines, open_log, sealed_by
from ..plan.state import PLAN_EVENT_TYPES
from ..protocol import (
    AssistantMessage,
    Compacted,
    Event,
    ToolCallPayload,
    ToolResultPayload,
    TurnEnded,
    TurnStarted,
    UndoPayload,
    UsagePayload,
    UserExec,
)
from ..protocol.records import (
    ChangesRecord,
    CutRecord,
    GrantRecord,
    LogRecord,
    MessageRecord,
    PointRecord,
    ResetRecord,
    RevokeRecord,
    RewindRecord,
    SessionHeader,
    UndoRecord,
    UnknownRecord,
    WindowRecord,
    parse_record,
    read_payload,
)

#: How many of the last turns the UI redraws on resume (their messages, tool cards, usage); the
#: plan events are all kept. A day-long session redrawn whole would hold every tool output twice.
TRANSCRIPT_TURNS = 100

TRANSCRIPT_TYPES = frozenset(
    {
        TurnStarted.event_type,
        AssistantMessage.event_type,
        ToolCallPayload.event_type,
        ToolResultPayload.event_type,
        UsagePayload.event_type,
        UserExec.event_type,
        UndoPayload.event_type,
        Compacted.event_type,
        TurnEnded.event_type,
    }
)


#: Events the fold reads (validated as they come); the others are only redrawn.
FOLDED = frozenset({TurnStarted.event_type, TurnEnded.event_type, *PLAN_EVENT_TYPES})


@dataclass
class TurnStatus:
    turn_id: str
    input: str
    reason: str | None = None  # None: never ended (the process died mid-turn)
    unmet: list[str] = field(default_factory=list)
    verification: str | None = None


@dataclass
class StoredSession:
    id: str
    started: str | None = None
    history: History = field(default_factory=History)
    window: dict[str, Any] | None = None
    grants: dict[str, GrantRecord] = field(default_factory=dict)  # in grant order
    plan_events: list[Event] = field(default_factory=list)
    #: rel path -> seq of the last successful write (the plan ledger's other half: plan/state.py)
    writes: dict[str, int] = field(default_factory=dict)
    turns: list[TurnStatus] = field(default_factory=list)
    last_seq: int = 0
    # The cache ledger over every turn (turn_ended's sums, the server's own figures).
    prompt_evaluated: int = 0
    prompt_cached: int = 0
    torn: int = 0  # lines skipped: not JSON, or a record that did not validate
    #: Records of a kind this version does not know (a newer version's), skipped: their kinds.
    unknown: list[str] = field(default_factory=list)
    #: The last turn's tool results as the model was to read them (call id -> output): a kill
    #: between a result's event and its history message leaves the message to be rebuilt.
    last_results: dict[str, str] = field(default_factory=dict)
    #: What each conversation rewind cut, newest last (a forward record puts the last back).
    rewound: list[Any] = field(default_factory=list)
    # The last turns' redraw events, kept as read and validated only when asked for: validating
    # every event of a long log was most of what resuming it cost.
    _recent: deque[list[dict[str, Any]]] = field(
        default_factory=lambda: deque(maxlen=TRANSCRIPT_TURNS)
    )

    @property
    def open_turn(self) -> TurnStatus | None:
        """The last turn, when a crash cut it (started, never ended)."""
        return self.turns[-1] if self.turns and self.turns[-1].reason is None else None

    @property
    def first_task(self) -> str:
        return self.turns[0].input if self.turns else ""

    def transcript(self) -> list[Event]:
        """The stored events the UI redraws: every plan event, and the last turns' messages,
        tool calls and results, usage and ends, in their order."""
        recent: list[Event] = []
        for turn in self._recent:
            for raw in turn:
                try:
                    recent.append(Event.model_validate(raw))
                except ValidationError:
                    continue
        seen = {e.seq for e in recent}
        return sorted(
            [*recent, *(e for e in self.plan_events if e.seq not in seen)], key=lambda e: e.seq
        )


class Reader:
    """Folds one log's lines, in order, into a StoredSession. `full=False` keeps only what a
    listing needs (no history, no transcript): listing a workspace must not load every session."""

    def __init__(self, session_id: str, *, full: bool = True) -> None:
        self.s = StoredSession(session_id)
        self.full = full

    def line(self, obj: dict[str, Any] | None) -> None:
        if obj is None:
            self.s.torn += 1
            return
        try:
            if "kind" in obj:
                self._record(parse_record(obj))
            else:
                self._event(obj)
        except UnknownRecord as exc:
            self.s.unknown.append(exc.kind)
        except (ValidationError, ValueError, TypeError):
            self.s.torn += 1

    def _record(self, r: LogRecord) -> None:
        s = self.s
        match r:
            case SessionHeader():
                s.started = r.started
            case MessageRecord():
                if self.full:
                    s.history.append(Message.from_wire(r.m, r.origin, r.status))
            case ResetRecord():  # written by versions whose compaction replaced the history
                s.history.restore([])
            case WindowRecord():
                s.window = r.state
            case GrantRecord():
                s.grants[r.scope_key] = r
            case RevokeRecord():
                s.grants.pop(r.scope_key, None)
            case UndoRecord() | ChangesRecord():
                pass  # an older version's undo log (undo is a rewind of the last turn now)
            case RewindRecord():
                from .rewind.fold import fold

                fold(s, r, self.full)
            case CutRecord():
                for t in s.turns:
                    if t.turn_id == r.turn_id and t.reason is None:
                        t.reason = "interrupted"
            case PointRecord():
                pass  # rewind's (session/rewind/points.py reads them)

    def _event(self, raw: dict[str, Any]) -> None:
        s = self.s
        kind, seq = raw.get("type"), raw.get("seq")
        if not isinstance(kind, str) or not isinstance(seq, int) or isinstance(seq, bool):
            raise ValueError("not an event")
        s.last_seq = max(s.last_seq, seq)
        if kind == ToolResultPayload.event_type:
            result = read_payload(ToolResultPayload, raw.get("payload") or {})
            if result.ok:
                for rel in result.wrote:
                    s.writes[norm_rel(rel)] = seq
            s.last_results[result.call_id] = result.output
        if kind not in FOLDED:
            if self.full and kind in TRANSCRIPT_TYPES and s._recent:
                s._recent[-1].append(raw)
            return
        ev = Event.model_validate(raw)
        if ev.type == TurnStarted.event_type:
            if s.turns and s.turns[-1].reason is None:
                s.turns[-1].reason = "interrupted"  # a later turn began: this one was cut
            s.turns.append(TurnStatus(ev.turn_id, read_payload(TurnStarted, ev.payload).input))
            s.last_results.clear()
            if self.full:
                s._recent.append([])
        elif ev.type == TurnEnded.event_type:
            ended = read_payload(TurnEnded, ev.payload)
            s.prompt_evaluated += max(0, ended.prompt_evaluated)  # a foreign log says anything
            s.prompt_cached += max(0, ended.prompt_cached)
            for t in reversed(s.turns):
                if t.turn_id == ev.turn_id:
                    t.reason = str(ended.reason)
                    t.unmet = list(ended.unmet)
                    t.verification = ended.verification
                    break
        if ev.type in PLAN_EVENT_TYPES:
            s.plan_events.append(ev)
        elif self.full and s._recent:
            s._recent[-1].append(raw)


def read_session(workspace: Path, session_id: str, *, full: bool = True) -> StoredSession:
    """Raises SessionNotFound (missing, a link, unreadable) and ValueError (a bad id)."""
    reader = Reader(session_id, full=full)
    # Only the lines this harness sealed for the person (person_key.py): one appended by anything
    # else (a command where `.cerveau/` is writable) would reach the model as its own history.
    sealed = sealed_by(load_key(create=False), session_id, workspace)
    with open_log(workspace, session_id) as f:
        for obj in iter_lines(f, sealed):
            reader.line(obj)
    return reader.s


def iso_mtime(ns: int) -> str:
    return datetime.fromtimestamp(ns / 1e9, UTC).isoformat(timespec="seconds")
