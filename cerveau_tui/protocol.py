"""Events that cross the bus, and the payloads that travel in them.

Every client (the TUI, the headless runner, a test) sees a session only through these. An event
is `type`, `session_id`, `turn_id`, `seq`, `ts` and a `payload`; the payload models below document and
validate the shapes the loop emits, and `payload` itself stays a plain dict on the wire so that a
JSON line printed by `cerveau run --json` is exactly the event a widget received.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class EventType(StrEnum):
    SESSION_STARTED = "session_started"
    TURN_STARTED = "turn_started"
    ITERATION_STARTED = "iteration_started"
    TOKEN = "token"  # a fragment of the assistant's visible answer
    REASONING = "reasoning"  # a fragment of reasoning content, kept apart
    ASSISTANT_MESSAGE = "assistant_message"  # the whole reply of one model call
    REPLY_PROGRESS = "reply_progress"  # where a streaming reply stands (throttled by the loop)
    TOOL_CALL = "tool_call"
    TOOL_STARTED = "tool_started"
    TOOL_RESULT = "tool_result"
    APPROVAL_REQUESTED = "approval_requested"
    APPROVAL_RESOLVED = "approval_resolved"
    USAGE = "usage"
    ERROR = "error"
    NOTICE = "notice"  # a line for the person (disclosures, retries)
    STEER = "steer"  # what the person typed while a turn ran, handed to the loop
    USER_EXEC = "user_exec"  # a `!` command the person ran
    GUARD_TRIPPED = "guard_tripped"
    PLAN_COMMITTED = "plan_committed"
    PLAN_UPDATED = "plan_updated"
    CHECKPOINT = "checkpoint"
    DRIFT = "drift"
    TOUCHED_PROTECTED = "touched_protected"
    CHECK = "check"  # done criteria were checked
    ESCALATION = "escalation"
    PARKED = "parked"
    ROLLBACK = "rollback"
    VERIFICATION = "verification"
    STACK_PROGRESS = "stack_progress"
    UNDO = "undo"
    DELEGATED = "delegated"
    COMPACTED = "compacted"  # the window was compacted (context/window.py)
    BUDGET_NOTICE = "budget_notice"  # occupancy crossed 70% or 90% of the window
    REMINDER = "reminder"  # what changed mid-session, appended for the model's next request
    POLISH = "polish"  # the bounded tidy round after a green gate, and what became of it
    LESSONS = "lessons"  # failure-to-fix pairs mined at the end of a turn
    SESSION_RESUMED = "session_resumed"  # this session continues an earlier one
    TURN_ENDED = "turn_ended"


class Event(BaseModel):
    model_config = ConfigDict(frozen=True)

    type: str
    session_id: str
    turn_id: str = ""
    seq: int
    #: When the bus stamped it: seconds since the epoch (bus.Emitter's clock). None only for an
    #: event not from a bus (a log written before events carried it, a report's rebuilt record):
    #: an unknown time is said as unknown, never invented as "now" or 0.
    ts: float | None = None
    payload: dict[str, Any] = Field(default_factory=dict)


# --- payloads -------------------------------------------------------------------------------


class Payload(BaseModel):
    model_config = ConfigDict(extra="allow")


class TurnStarted(Payload):
    input: str


class TokenPayload(Payload):
    text: str


class ToolCallPayload(Payload):
    call_id: str
    name: str
    arguments: dict[str, Any]
    index: int = 0
    reads: list[str] = Field(default_factory=list)
    writes: list[str] = Field(default_factory=list)
    via: Literal["native", "constrained", "text", "person"] = "native"  # person: a `!cmd`


class ToolStartedPayload(Payload):
    """The call left the queue: waiting for the person's approval, or running."""

    call_id: str
    name: str
    status: Literal["waiting", "running"]


class ToolResultPayload(Payload):
    call_id: str
    name: str
    ok: bool
    output: str
    error_class: str | None = None  # "args" | "transient" | None
    exit_code: int | None = None
    diff: str | None = None
    duration_ms: float = 0.0
    # guarded: the loop did not run it (the repeat guard), which is not the person refusing it.
    status: Literal["done", "failed", "denied", "guarded"] = "done"
    wrote: list[str] = Field(default_factory=list)  # workspace-relative paths actually written
    # Which grant let the call through without asking, spelled out ("approved for this session
    # (commands starting with `git push`)"), or the person's one-time yes; "" when none was needed.
    granted_by: str = ""


class ApprovalRequested(Payload):
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


class ApprovalResolved(Payload):
    request_id: str
    call_id: str = ""
    decision: Literal[
        "approved", "approved_session", "approved_always", "denied", "denied_always", "stopped"
    ]
    reason: str = ""
    by: Literal["person", "policy", "timeout", "session_grant", "headless"] = "person"
    # What the grant (session, or lasting rule) covers, spelled out; "" for a one-call decision.
    scope: str = ""


class ReplyProgress(Payload):
    """Where the model's reply stands while it streams: prompt tokens read (when the server
    reports it), tokens generated, and the tool call being written. Cumulative, so a dropped
    or coalesced one loses nothing."""

    tokens: int = 0
    prompt_done: int = 0
    prompt_total: int = 0
    tool_name: str = ""
    tool_chars: int = 0
    tool_head: str = ""  # the first characters of the call's arguments
    # Seconds the server has said nothing new (only keep-alives): 0 while it progresses.
    quiet_s: float = 0.0


class UsagePayload(Payload):
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cache_n: int = 0
    prompt_n: int = 0
    predicted_n: int = 0
    predicted_per_second: float = 0.0
    context_tokens: int = 0
    n_ctx: int = 0


class ErrorPayload(Payload):
    message: str
    error_class: str = "fatal"
    retrying: bool = False


class GuardTripped(Payload):
    guard: Literal[
        "breaker",
        "stall",
        "repeat",
        "truncation",
        "text_tool_call",
        "unknown_tool",
        "port",
        "oversize",
    ]
    reason: str
    iteration: int
    told: str = ""


class Compacted(Payload):
    """The window was compacted once, down to the low-water mark; frozen until the next one.
    summary_source: "model" (a handoff the model wrote), "brief" (the deterministic resume brief,
    the summary failed or is off) or "none" (pruning old tool outputs was enough)."""

    tokens_before: int
    tokens_after: int
    dropped_rounds: int
    summary_source: Literal["model", "brief", "none"]
    pruned: int = 0  # tool outputs replaced by a placeholder
    n_ctx: int = 0
    reason: str = ""  # "high_water", "server_overflow", "person"


class BudgetNotice(Payload):
    percent: int  # the mark crossed: 70 or 90
    context_tokens: int = 0
    n_ctx: int = 0


class ReminderPayload(Payload):
    """The one marked message appended after the history before the next model call."""

    text: str
    sources: list[str] = Field(default_factory=list)  # which hooks spoke


class PolishPayload(Payload):
    result: Literal["kept", "reverted", "skipped"]
    reason: str = ""


class TurnEnded(Payload):
    """The last event of a turn. The hooks' fields (verification, unmet, touched_protected from
    the done gate; handoff when parked; stalled_iterations from the progress guard) are present
    only when a hook gave them: dump with `exclude_unset` to keep the wire as it was."""

    reason: str
    iterations: int
    usage: dict[str, int] = Field(default_factory=dict)
    context_tokens: int = 0
    n_ctx: int = 0
    message: str = ""
    verification: str | None = None
    unmet: list[str] = Field(default_factory=list)
    touched_protected: list[str] = Field(default_factory=list)
    handoff: str | None = None
    stalled_iterations: int | None = None


#: Reasons a turn ends with.
TURN_COMPLETED = "completed"  # the model answered without calling a tool (and the gate settled)
TURN_INTERRUPTED = "interrupted"
TURN_STOPPED = "stopped"  # the person pressed Esc on an approval
TURN_MAX_ITERATIONS = "max_iterations"
TURN_REPEAT = "repeat"
TURN_STALLED = "stalled"
TURN_INCOMPLETE = "incomplete"
TURN_PARKED = "parked"
TURN_TOKEN_CEILING = "token_ceiling"
TURN_ERROR = "error"
