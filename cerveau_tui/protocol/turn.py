"""Payloads of a session and its turns: start, the model's stream, usage, errors, the window,
and the end. (Tool calls are in tools.py; the plan and the done gate in gate.py.)"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field

from .base import Payload, StopReason


class SessionStarted(Payload):
    event_type = "session_started"

    server_url: str = ""
    n_ctx: int = 0
    sandbox: dict[str, Any] = Field(default_factory=dict)  # backend, enforced, notes, gaps
    model: str = ""
    mode: str = ""
    approval: str = ""
    # What the workspace's config asked for and was held back: held_back, in_force, asked.
    workspace_config: dict[str, Any] = Field(default_factory=dict)
    held_back: list[str] = Field(default_factory=list)  # the keys (issue 20's interface)


class SessionResumed(Payload):
    """This session continues an earlier one: what came back."""

    event_type = "session_resumed"

    session_id: str
    messages: int = 0
    turns: int = 0
    plan_events: int = 0
    grants: list[str] = Field(default_factory=list)  # the scopes restored, spelled out
    grants_dropped: int = 0
    undo_turns: int = 0
    window: bool = False
    interrupted_turn: str | None = None
    unfinished_calls: int = 0
    torn_lines: int = 0
    last_reason: str = ""
    last_unmet: list[str] = Field(default_factory=list)


class StackProgress(Payload):
    event_type = "stack_progress"

    stage: str
    fraction: float | None = None
    line: str = ""


class TurnStarted(Payload):
    event_type = "turn_started"

    input: str


class IterationStarted(Payload):
    event_type = "iteration_started"

    iteration: int


class TokenPayload(Payload):
    event_type = "token"

    text: str


class ReasoningPayload(Payload):
    event_type = "reasoning"

    text: str


class AssistantMessage(Payload):
    event_type = "assistant_message"

    content: str = ""
    reasoning: str = ""
    finish_reason: str | None = None


class Steer(Payload):
    event_type = "steer"

    text: str


class ReplyProgress(Payload):
    """Where the model's reply stands while it streams: prompt tokens read (when the server
    reports it), tokens generated, and the tool call being written. Cumulative, so a dropped
    or coalesced one loses nothing."""

    event_type = "reply_progress"

    tokens: int = 0
    prompt_done: int = 0
    prompt_total: int = 0
    tool_name: str = ""
    tool_chars: int = 0
    tool_head: str = ""  # the first characters of the call's arguments
    # Seconds the server has said nothing new (only keep-alives): 0 while it progresses.
    quiet_s: float = 0.0


class UsagePayload(Payload):
    event_type = "usage"

    prompt_tokens: int = 0
    completion_tokens: int = 0
    cache_n: int = 0
    prompt_n: int = 0
    predicted_n: int = 0
    predicted_per_second: float = 0.0
    context_tokens: int = 0
    n_ctx: int = 0


class ErrorPayload(Payload):
    event_type = "error"

    message: str
    error_class: str = "fatal"
    retrying: bool = False
    partial: str | None = None  # what the stream delivered before it broke


class NoticePayload(Payload):
    """A line for the person that no other event says. Never a second telling of a fact that has
    its own event (a rollback, a protected write): the chat showed those twice."""

    event_type = "notice"

    text: str
    level: Literal["info", "warning", "error", "success"] = "info"
    source: str = ""  # who speaks: "boundary", "plan", "memory", a reminder's name


class GuardTripped(Payload):
    event_type = "guard_tripped"

    guard: Literal[
        "breaker",
        "stall",
        "repeat",
        "truncation",
        "text_tool_call",
        "unknown_tool",
        "port",
        "oversize",
        "repetition",
    ]
    reason: str
    iteration: int
    told: str = ""


class Compacted(Payload):
    """The window was compacted once, down to the low-water mark; frozen until the next one.
    summary_source: "model" (a handoff the model wrote), "brief" (the deterministic resume brief,
    the summary failed or is off) or "none" (pruning old tool outputs was enough)."""

    event_type = "compacted"

    tokens_before: int
    tokens_after: int
    dropped_rounds: int
    summary_source: Literal["model", "brief", "none"]
    pruned: int = 0  # tool outputs replaced by a placeholder
    n_ctx: int = 0
    reason: str = ""  # "high_water", "server_overflow", "person"


class BudgetNotice(Payload):
    event_type = "budget_notice"

    percent: int  # the mark crossed: 70 or 90
    context_tokens: int = 0
    n_ctx: int = 0


class ReminderPayload(Payload):
    """The one marked message appended after the history before the next model call."""

    event_type = "reminder"

    text: str
    sources: list[str] = Field(default_factory=list)  # which hooks spoke


class TurnEnded(Payload):
    """The last event of a turn. The hooks' fields (verification, unmet, touched_protected from
    the done gate; handoff when parked; stalled_iterations from the progress guard) are present
    only when a hook gave them: sparse, so the wire keeps "not said" apart from "empty"."""

    event_type = "turn_ended"
    sparse: ClassVar[bool] = True

    reason: StopReason
    iterations: int
    usage: dict[str, int] = Field(default_factory=dict)
    context_tokens: int = 0
    n_ctx: int = 0
    # The cache ledger's sums over the turn (loop/cache_ledger.py), in the server's own figures:
    # prompt tokens it evaluated, and prompt tokens it reused from its cache.
    prompt_evaluated: int = 0
    prompt_cached: int = 0
    message: str = ""
    verification: str | None = None
    unmet: list[str] = Field(default_factory=list)
    touched_protected: list[str] = Field(default_factory=list)
    handoff: str | None = None
    stalled_iterations: int | None = None
