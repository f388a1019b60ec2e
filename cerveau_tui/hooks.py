"""Hooks: how mechanisms (guards, plans, the done gate) take part in a turn without the engine
knowing what they mean.

The engine calls every registered hook at fixed points of the turn cycle. A hook may add stable
text to the system prompt, refuse a call before it runs, rewrite what the model reads of a result,
stop the turn after an iteration, or decline the model's final answer and re-enter the loop. Each
mechanism lives in its own package and the engine imports none of them; `cerveau_tui/session.py` wires them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from .history import History, Message
from .protocol import CallStatus, Payload, StopReason

if TYPE_CHECKING:
    from .bus import Emitter
    from .config import Settings


class WriteLog(Protocol):
    """What a hook may know of the session's writes (tools.base.ToolState meets it): the count
    that says "a write happened after the check", and the paths written."""

    @property
    def write_seq(self) -> int: ...

    @property
    def written(self) -> list[Path]: ...


@dataclass
class CallRecord:
    """One executed (or refused) tool call, as hooks see it."""

    iteration: int
    call_id: str
    name: str
    arguments: dict[str, Any]
    ok: bool
    output: str
    exit_code: int | None = None
    command: str | None = None
    wrote: list[str] = field(default_factory=list)  # workspace-relative paths actually written
    error_class: str | None = None
    status: CallStatus = CallStatus.DONE  # done, failed, denied or guarded


class BriefSection(StrEnum):
    """Where a hook's line goes in the resume brief (context/brief.py)."""

    PLAN = "plan"  # one step with its reconciled status
    DECISION = "decision"
    FAILED = "failed"
    UNMET = "unmet"  # one done criterion still unmet
    NOTE = "note"


@dataclass(frozen=True)
class BriefLine:
    """One line a hook gives the resume brief, with the section it belongs to: the brief files
    it by this field, never by how the text starts."""

    section: BriefSection
    text: str


@dataclass
class Stop:
    """End the turn now."""

    reason: StopReason  # e.g. StopReason.STALLED, INCOMPLETE, PARKED
    message: str = ""
    extra: dict[str, Any] = field(default_factory=dict)  # merged into turn_ended's payload


@dataclass
class Reenter:
    """Do not accept the model's final answer; tell it this and run another round."""

    message: str
    max_tokens: int | None = None  # a larger cap for the next request (escalation R2)
    # Only these tools run in the next round, the others refused at dispatch; the tools sent do
    # not change (loop/narrow.py). R1: read-only, diagnose before editing again.
    only_tools: tuple[str, ...] = ()
    # Extra request fields for the next call only (R2: chat_template_kwargs that turn reasoning on).
    request_extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Conversation:
    """The conversation as the server holds it when a turn ends: the messages the next request
    would open with (the answer appended) and the tools sent with them. Turn close continues it
    with one appended instruction (memory/turn_close.py), so the server reads only that."""

    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]]


@dataclass
class TurnContext:
    turn_id: str
    iteration: int
    workspace: Path
    bus: Emitter
    state: WriteLog
    history: History
    settings: Settings
    calls: list[CallRecord] = field(default_factory=list)  # every call of this turn, in order
    max_tokens: int = 512
    # Put a yes/no question to the person: True yes, False no, None nobody there (headless).
    asker: Callable[[str, str], bool | None] | None = None
    system: str = ""  # the session's system message: a hook's own model call opens with it too
    context_tokens: int = 0  # what the window held at the last reply, by the server's count
    n_ctx: int = 0
    # For the next model call only, then cleared (set from a Reenter): see Reenter.
    only_tools: tuple[str, ...] = ()
    request_extra: dict[str, Any] = field(default_factory=dict)
    # The turn's stop (Esc Esc, Ctrl+C): a hook that runs a process passes it on (the precheck).
    cancel: threading.Event | None = None
    # Who decided the last question `ask` put: "person", "timeout", "stopped", "headless".
    # A timeout said "stopped at the person's word" in the chat while the log said `by: timeout`.
    answer_by: str = ""
    # Set when the turn ends (loop/turn.py): what the server's cache holds now.
    conversation: Conversation | None = None

    @property
    def cancelled(self) -> bool:
        return self.cancel is not None and self.cancel.is_set()

    def ask(self, summary: str, reason: str) -> bool | None:
        return self.asker(summary, reason) if self.asker is not None else None

    def tell(self, text: str) -> None:
        """Append a harness message the model reads at its next request."""
        self.history.append(Message.harness(text))

    def emit(self, payload: Payload) -> None:
        self.bus.emit(payload)

    def calls_in(self, iteration: int) -> list[CallRecord]:
        return [c for c in self.calls if c.iteration == iteration]


class Hook:
    """Base hook: every method is optional and the default does nothing."""

    name = "hook"

    def system_sections(self) -> list[str]:
        """Stable text for the system prompt. Must not vary per turn (it is the cache prefix)."""
        return []

    def on_prompt(self, ctx: TurnContext, prompt: str) -> str | None:
        """Return a reason to refuse the person's prompt: nothing of it enters the history, the
        model never reads it, and the turn ends `blocked` with that reason (a person's
        user_prompt hook, person_hooks/)."""
        return None

    def on_turn_start(self, ctx: TurnContext, task: str) -> Stop | None:
        return None

    def before_tool(self, ctx: TurnContext, name: str, arguments: dict[str, Any]) -> str | None:
        """Return a message to refuse the call (the model reads it as the tool's result)."""
        return None

    def on_tool_result(self, ctx: TurnContext, record: CallRecord) -> str | None:
        """Return replacement text for what the model reads of this result (e.g. the breaker's
        question instead of the third identical failure)."""
        return None

    def after_iteration(self, ctx: TurnContext) -> Stop | None:
        return None

    def on_answer(self, ctx: TurnContext, content: str) -> Stop | Reenter | None:
        """The model answered without a tool call. None accepts the answer and ends the turn."""
        return None

    def reminders(self, ctx: TurnContext) -> list[str]:
        """What changed since the model last read (an instruction file, a file on disk, the
        budget, recalled notes): each string is one paragraph of the single reminder message the
        loop appends after the history before the next model call. Never a prefix change."""
        return []

    def resume_brief(self) -> list[BriefLine]:
        """Lines for the resume brief that replaces dropped history: what this mechanism knows
        that reading the workspace cannot recover (the plan's state, the unmet criteria)."""
        return []

    def before_compact(self, reason: str) -> None:
        """The window is about to be compacted ("person", "high_water", ...): the last moment
        the rounds about to be folded are still whole in the request."""
        return None

    def on_turn_end(self, ctx: TurnContext, reason: str) -> dict[str, Any]:
        """Extra fields for the turn_ended payload (verification, unmet, ...)."""
        return {}

    def after_turn(self, ctx: TurnContext, reason: str) -> None:
        """After turn_ended was emitted, off the turn's path (the answer is already on screen):
        distilling notes, mining lessons. The engine runs these in the background and waits for
        them before the next turn starts and at close."""
        return None

    def close(self) -> None:
        return None
