"""Payloads of one tool call's life (call, started, approval, result), of a `!cmd` the person
ran, of an undo, and of a read-only delegation."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from .base import CallStatus, Payload


class ToolCallPayload(Payload):
    event_type = "tool_call"

    call_id: str
    name: str
    arguments: dict[str, Any]
    index: int = 0
    reads: list[str] = Field(default_factory=list)
    writes: list[str] = Field(default_factory=list)
    via: Literal["native", "constrained", "text", "person"] = "native"  # person: a `!cmd`


class ToolStartedPayload(Payload):
    """The call left the queue: waiting for the person's approval, or running."""

    event_type = "tool_started"

    call_id: str
    name: str
    status: Literal[CallStatus.WAITING, CallStatus.RUNNING]


class ToolResultPayload(Payload):
    event_type = "tool_result"

    call_id: str
    name: str
    ok: bool
    output: str = ""
    error_class: str | None = None  # "args" | "transient" | None
    exit_code: int | None = None
    diff: str | None = None
    duration_ms: float = 0.0
    status: Literal[CallStatus.DONE, CallStatus.FAILED, CallStatus.DENIED, CallStatus.GUARDED] = (
        CallStatus.DONE
    )
    wrote: list[str] = Field(default_factory=list)  # workspace-relative paths actually written
    # Which grant let the call through without asking, spelled out ("approved for this session
    # (commands starting with `git push`)"), or the person's one-time yes; "" when none was needed.
    granted_by: str = ""


Decision = Literal[
    "approved", "approved_session", "approved_always", "denied", "denied_always", "stopped"
]
DecidedBy = Literal["person", "policy", "timeout", "session_grant", "headless"]


class ApprovalRequested(Payload):
    event_type = "approval_requested"

    request_id: str
    call_id: str
    tool: str
    summary: str  # the command, or the path being written
    reason: str  # why it crosses the boundary
    paths: list[str] = Field(default_factory=list)
    diff: str | None = None
    scope: str = ""  # what "approve for session" would cover, spelled out
    # Every scope the person could choose, [scope_key, scope] narrowest first; `scope` is one.
    choices: list[list[str]] = Field(default_factory=list)
    timeout_s: float = 0.0
    # The person's own `!cmd`, outside any turn: Esc leaves it not run, it stops no turn.
    outside_turn: bool = False


class ApprovalResolved(Payload):
    event_type = "approval_resolved"

    request_id: str
    call_id: str = ""
    decision: Decision
    reason: str = ""
    by: DecidedBy = "person"
    # What the grant (session, or lasting rule) covers, spelled out; "" for a one-call decision.
    scope: str = ""


class UserExec(Payload):
    event_type = "user_exec"

    command: str


class UndoPayload(Payload):
    event_type = "undo"

    turn_id: str = ""  # the turn whose changes were undone
    restored: list[str] = Field(default_factory=list)
    removed: list[str] = Field(default_factory=list)
    not_restorable: list[str] = Field(default_factory=list)


class Rewound(Payload):
    """A rewind (or its forward) ran: session/rewind/. `mode` says what moved: the files
    ("code"), the history ("conversation") or both."""

    event_type = "rewound"

    turn: int = 0  # the turn rewound to (its start); 0 for a forward or another point
    to: str = ""  # the point, when not a turn's: "before !make clean" (a person's command)
    mode: Literal["both", "code", "conversation"] = "both"
    forward: bool = False
    restored: list[str] = Field(default_factory=list)
    removed: list[str] = Field(default_factory=list)
    refused: list[str] = Field(default_factory=list)  # not put back (a link or folder in the way)
    outside: list[str] = Field(default_factory=list)  # the person's changes overwritten (forced)
    kept: list[str] = Field(default_factory=list)  # left as they are, as asked
    history_len: int = 0
    messages_dropped: int = 0


class Delegated(Payload):
    """A read-only child ran: `started`, then `finished` with what it read and spent."""

    event_type = "delegated"

    task: str
    state: Literal["started", "finished"]
    path: str = "."
    reason: str = ""
    read: list[str] = Field(default_factory=list)
    unread: list[str] = Field(default_factory=list)
    wrote: list[str] = Field(default_factory=list)
    unwritten: list[str] = Field(default_factory=list)
    iterations: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
