"""The one place the loop's tool and turn events are made: call, started, result, approval
resolved (in approver.py, which the app imports for its first frame without the turn's machinery
this module pulls in), turn ended, guard tripped. Each goes out as its payload model from
protocol.py, so a `--json` line and a widget's message are the same typed fact (before, one tool
call was emitted from four modules, two of them as hand-built dicts).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from ..bus import Emitter
from ..protocol import (
    CallStatus,
    GuardTripped,
    ReplyProgress,
    ToolCallPayload,
    ToolResultPayload,
    ToolStartedPayload,
    TurnEnded,
)
from ..provider.types import Delta, Usage
from ..tools.base import Declared, display_path
from .approver import approval_resolved
from .schedule import ToolExecution

#: A progress event every this many generated fragments: at 1,000 tokens/s that is 60 events a
#: second, few enough for the bus and the app, often enough that the figure visibly moves.
PROGRESS_EVERY = 16


class ProgressEvents:
    """Throttles reply progress by what changed, never by a clock: every PROGRESS_EVERY
    tokens, and at once when the prompt progress moves or a new call's name appears."""

    def __init__(self, bus: Emitter) -> None:
        self.bus = bus
        self._last: tuple[int, int, str] = (-PROGRESS_EVERY, -1, "")
        self._quiet = False

    def reset(self) -> None:
        self._last, self._quiet = (-PROGRESS_EVERY, -1, ""), False

    def __call__(self, d: Delta) -> None:
        tokens, prompt, name = self._last
        # The provider says quiet at most once a second: each goes out, and so does the first
        # progress after it (the status bar stops counting the quiet).
        quiet = bool(d.quiet_s)
        if (
            d.tokens - tokens < PROGRESS_EVERY
            and d.prompt_done == prompt
            and d.tool_name == name
            and not quiet
            and not self._quiet
        ):
            return
        self._last, self._quiet = (d.tokens, d.prompt_done, d.tool_name), quiet
        self.bus.emit(
            ReplyProgress(
                tokens=d.tokens,
                prompt_done=d.prompt_done,
                prompt_total=d.prompt_total,
                tool_name=d.tool_name,
                tool_chars=d.tool_chars,
                tool_head=d.tool_head,
                quiet_s=d.quiet_s,
            ),
        )


class TurnEvents:
    def __init__(self, bus: Emitter, workspace: Path) -> None:
        self.bus = bus
        self.workspace = workspace

    def shown(self, paths: list[Path]) -> list[str]:
        return [display_path(self.workspace, p) for p in paths]

    def call(self, ex: ToolExecution, via: str) -> None:
        d = ex.declared or Declared()
        self.bus.emit(
            ToolCallPayload(
                call_id=ex.call_id,
                name=ex.name,
                arguments=ex.arguments,
                index=ex.index,
                reads=self.shown(d.reads),
                writes=self.shown(d.writes),
                via=via,  # type: ignore[arg-type]
            ),
        )

    def status(
        self, ex: ToolExecution, status: Literal[CallStatus.WAITING, CallStatus.RUNNING]
    ) -> None:
        self.bus.emit(
            ToolStartedPayload(call_id=ex.call_id, name=ex.name, status=status),
        )

    def result(self, ex: ToolExecution, shown: str) -> None:
        """`shown` is what the model reads (a hook may have replaced the tool's output)."""
        r = ex.result
        assert r is not None, "a result is published after the call finished"
        self.bus.emit(
            ToolResultPayload(
                call_id=ex.call_id,
                name=ex.name,
                ok=r.ok,
                output=shown,
                error_class=str(r.error_class) if r.error_class else None,
                exit_code=r.exit_code,
                diff=r.diff,
                duration_ms=float(r.meta.get("duration_ms", 0.0)),
                status=ex.status,  # type: ignore[arg-type]
                wrote=self.shown(r.wrote),
                granted_by=ex.verdict.granted_by if ex.verdict is not None else "",
            ),
        )

    def unrun(self, ex: ToolExecution, text: str) -> None:
        """A call the loop refused to run at all (a repeat): `guarded`, with why. Not `denied`,
        which says the person (or the policy) refused it."""
        self.bus.emit(
            ToolResultPayload(
                call_id=ex.call_id,
                name=ex.name,
                ok=False,
                output=text,
                status=CallStatus.GUARDED,
            ),
        )

    def denied_by_policy(self, ex: ToolExecution, reason: str) -> None:
        approval_resolved(
            self.bus,
            request_id="",
            call_id=ex.call_id,
            decision="denied",
            reason=reason,
            by="policy",
        )

    def guard(self, guard: str, reason: str, iteration: int, told: str) -> None:
        self.bus.emit(
            GuardTripped(guard=guard, reason=reason, iteration=iteration, told=told),  # type: ignore[arg-type]
        )

    def turn_ended(
        self,
        reason: str,
        iterations: int,
        usage: Usage,
        context_tokens: int,
        message: str,
        extra: dict[str, Any],
        n_ctx: int = 0,
    ) -> None:
        payload = TurnEnded.model_validate(
            {
                "reason": reason,
                "iterations": iterations,
                "usage": {
                    "prompt_tokens": usage.prompt_tokens,
                    "completion_tokens": usage.completion_tokens,
                },
                "context_tokens": context_tokens,
                **({"n_ctx": n_ctx} if n_ctx else {}),
                "message": message,
                **extra,
            }
        )
        # Only what was said: a turn without the gate has no `verification` key, as before.
        self.bus.emit(payload)
