"""The session log's records: what a log holds beside the events, one typed model per kind, a
CLOSED union like the events (`LogRecord`).

The log (plan/persist.py) is one JSONL file per session: event lines (no `kind`) and record
lines written by the session (session/journal.py, session/rewind/) for what the events do not
carry. Before, eleven kinds were dicts built in four modules and read back with `.get` in four
others, so a renamed key was a silent default on resume; now each is written from its model and
read back as it.

Reading is tolerant where logs of other versions differ: a field a model does not declare is
ignored (a newer version's addition, an older one's leftover), a field it lacks takes its
default, and a kind this version does not know is `UnknownRecord` (the reader skips it and says
so, never fails). A record whose fields do not fit is pydantic's ValidationError.
"""

from __future__ import annotations

from typing import Annotated, Literal, TypeVar, get_args

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, field_validator

from .base import Event, Payload


class Record(BaseModel):
    model_config = ConfigDict(extra="ignore")

    kind: str

    def dump(self) -> dict[str, object]:
        """The line as written: `kind` first, then the fields that were given (a record never
        grows keys its writer did not set, so what is on disk stays what the writer said)."""
        return {
            "kind": self.kind,
            **self.model_dump(mode="json", exclude_unset=True, exclude={"kind"}),
        }


class SessionHeader(Record):
    """The first line (plan/persist.py): the id, the format, when it started, and its seal."""

    kind: Literal["session"] = "session"
    v: int = 1
    id: str = ""
    started: str | None = None  # ISO 8601, UTC
    seal: str = ""  # person_key.seal_log_header: whose log this is, and where


class WireMessage(BaseModel):
    """What a history message must be to be sent back to the server.

    Never `system`: the engine's history holds none (the window puts the session's own system
    message first), so one in a log was planted, and sent mid-history it would speak with the
    harness's voice, or make the chat template refuse every request of the resumed session."""

    model_config = ConfigDict(extra="allow")

    role: Literal["user", "assistant", "tool"]
    content: str | list[object] | None = None
    tool_calls: list[dict[str, object]] | None = None
    tool_call_id: str | None = None


class MessageRecord(Record):
    """One history message: `m` the wire dict exactly as sent (the server's cache keys on its
    bytes), who put it there and a result's status. Older logs wrote `m` alone."""

    kind: Literal["message"] = "message"
    m: dict[str, object]
    origin: str = "stored"
    status: str = ""

    @field_validator("m")
    @classmethod
    def _a_wire_message(cls, m: dict[str, object]) -> dict[str, object]:
        WireMessage.model_validate(m)
        return m


class ResetRecord(Record):
    """The history was replaced (an old-style compaction; written by older versions only)."""

    kind: Literal["reset"] = "reset"


class WindowRecord(Record):
    """The compacted window's state (context/window.py's own to_dict); the last one wins."""

    kind: Literal["window"] = "window"
    state: dict[str, object]


class ChangesRecord(Record):
    """The paths a turn's fingerprint saw changed (what the older versions' undo reported as not
    restorable). Read so their logs load; not used."""

    kind: Literal["changes"] = "changes"
    turn_id: str = ""
    paths: list[str]


class GrantRecord(Record):
    """An "approve for this session": the scope and the room it gave, sealed (grant_seal.py)."""

    kind: Literal["grant"] = "grant"
    scope_key: str
    scope: str = ""
    extra_writable: list[str] = Field(default_factory=list)
    network: bool = False
    hosts: list[str] = Field(default_factory=list)  # with `network`: the only hosts (none: any)
    mac: str = ""  # restored only when it verifies


class RevokeRecord(Record):
    kind: Literal["revoke"] = "revoke"
    scope_key: str = ""


class UndoRecord(Record):
    """A change of the undo log of older versions (undo is a rewind of the last turn now): which
    blob was which file before which turn (`before`), a command ran in it, or the turn was undone
    (`pop`). Read so their logs load; not used."""

    kind: Literal["undo"] = "undo"
    op: Literal["before", "command", "pop"]
    turn_id: str = ""
    before: dict[str, str | None] = Field(default_factory=dict)
    outside: list[str] = Field(default_factory=list)


class CutRecord(Record):
    """A turn a crash cut off, closed when the session was resumed."""

    kind: Literal["cut"] = "cut"
    turn_id: str


#: Where a restore point was taken: before a turn, before the person's `!cmd`, before a rewind
#: (what forward returns to), or at the end of one of them (the state the harness left).
PointAt = Literal["turn", "command", "rewind", "end"]


class PointRecord(Record):
    """A restore point (session/rewind/points.py, where it is `Point`): `full` a manifest blob,
    else `changes`, the delta from the point before it; the conversation's position (window,
    writes, grants) only for the points a rewind goes to. Mutable: the rewinder fills it in."""

    kind: Literal["restore_point"] = "restore_point"
    id: str
    at: PointAt
    turn_id: str = ""
    task: str = ""
    time: str = ""
    seq: int = 0  # the bus sequence then: the plan ledger's position
    history: int = 0  # len(History) then
    window: dict[str, object] | None = None
    writes: dict[str, int] = Field(default_factory=dict)
    grants: list[str] = Field(default_factory=list)
    full: str = ""
    changes: dict[str, tuple[str, int] | None] = Field(default_factory=dict)


class RewindRecord(Record):
    """A rewind (or its forward) ran: what a resume folds (session/rewind/fold.py)."""

    kind: Literal["rewind"] = "rewind"
    to: str = ""
    mode: Literal["both", "code", "conversation"] = "both"
    forward: bool = False
    turn: int = 0
    history: int = 0
    window: dict[str, object] | None = None
    plan_seq: int = 0
    writes: dict[str, int] = Field(default_factory=dict)
    grants: list[str] = Field(default_factory=list)
    cut_turns: list[str] = Field(default_factory=list)
    undo_cut: list[str] = Field(default_factory=list)  # older versions' undo log: not used


LogRecord = (
    SessionHeader
    | MessageRecord
    | ResetRecord
    | WindowRecord
    | ChangesRecord
    | GrantRecord
    | RevokeRecord
    | UndoRecord
    | CutRecord
    | PointRecord
    | RewindRecord
)

#: Each kind -> its model, derived from the union (the one place a kind is listed).
RECORD_MODELS: dict[str, type[Record]] = {
    get_args(m.model_fields["kind"].annotation)[0]: m for m in get_args(LogRecord)
}
_RECORD: TypeAdapter[LogRecord] = TypeAdapter(Annotated[LogRecord, Field(discriminator="kind")])


class UnknownRecord(ValueError):
    """A kind this version does not know (a newer version's): skipped by the reader, said."""

    def __init__(self, kind: object) -> None:
        super().__init__(f"a record of kind {kind!r}, unknown to this version")
        self.kind = str(kind)


def parse_record(obj: dict[str, object]) -> LogRecord:
    """One record line as its model. Raises UnknownRecord, or ValidationError when its fields do
    not fit."""
    if str(obj.get("kind")) not in RECORD_MODELS:
        raise UnknownRecord(obj.get("kind"))
    return _RECORD.validate_python(obj)


#: Payload fields older versions wrote under another name: event type -> {old name: new name}.
RENAMED: dict[str, dict[str, str]] = {"tool_result": {"paths": "wrote"}}

P = TypeVar("P", bound=Payload)


def read_payload(model: type[P], payload: dict[str, object]) -> P:
    """An event's payload as a log holds it, read as its model: a field this version does not
    declare (another version's) is dropped, not fatal, and a renamed one is read under its name
    now; one that does not fit raises ValidationError. (The bus reads strictly: parse_payload.)"""
    renamed = RENAMED.get(model.event_type, {})
    data = {renamed.get(k, k): v for k, v in payload.items()}
    data.update({k: v for k, v in payload.items() if k not in renamed})  # the new name wins
    return model.model_validate({k: v for k, v in data.items() if k in model.model_fields})


def payload_as(model: type[P], event: Event) -> P | None:
    """The event's payload as `model`: the one the emitter built, else read from the dict as a
    log holds it (read_payload); None when the event is not of that type or does not fit (an
    older version's, said by its absence: a report reads what it can)."""
    if event.type != model.event_type:
        return None
    if isinstance(event._data, model):
        return event._data
    try:
        return read_payload(model, event.payload)
    except ValidationError:
        return None
