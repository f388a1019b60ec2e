"""The guards as Hooks: how the breaker, the progress tracker and the port guard join a turn.

Each publishes `guard_tripped` (guard, reason, iteration, told) when it acts, so the TUI can show
a distinct chat line and a test can assert which guard acted and when.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...hooks import BriefLine, BriefSection, CallRecord, Hook, Stop, TurnContext
from ...protocol import TURN_STALLED, CallStatus, GuardTripped
from ...tools.plan_tools import CommitPlan
from .breaker import Breaker
from .ports import live_stack_section, port_refusal, serve_port_conflict
from .progress import WorkTracker

# The argument that best names what a call was about, for "read_file x5 (a.py, b.py)".
_TARGET_KEYS = ("path", "command", "pattern", "query", "url", "name")


def _emit(ctx: TurnContext, guard: str, reason: str, iteration: int, told: str) -> None:
    ctx.emit(GuardTripped(guard=guard, reason=reason, iteration=iteration, told=told))  # type: ignore[arg-type]


def action_of(record: CallRecord) -> str:
    target: Any = next(
        (record.arguments.get(k) for k in _TARGET_KEYS if record.arguments.get(k)), ""
    )
    if record.command:
        target = record.command
    return f"{record.name} {' '.join(str(target).split())}".strip()


class BreakerHook(Hook):
    """Counts command failures by shape; at the threshold the model reads a question, not the error."""

    name = "breaker"

    def __init__(self, threshold: int = 3) -> None:
        self.breaker = Breaker(threshold)
        self.tripped: list[str] = []  # shapes that tripped, for the resume brief (bounded)

    def on_turn_start(self, ctx: TurnContext, task: str) -> Stop | None:
        # A new instruction from the person is new information: streaks start again.
        self.breaker.reset()
        return None

    def resume_brief(self) -> list[BriefLine]:
        """What failed by shape survives a compaction: the summary of dropped rounds must not
        invite the model to try the same failing command again."""
        return [
            BriefLine(
                BriefSection.FAILED, f"{shape} kept failing the same way (the breaker stopped it)"
            )
            for shape in self.tripped
        ]

    def on_tool_result(self, ctx: TurnContext, record: CallRecord) -> str | None:
        if record.command is None or record.status == CallStatus.DENIED:
            return None  # not a command (the record of a command tool names its command)
        trip = self.breaker.observe(record.command, record.exit_code, record.output)
        if trip is None:
            return None
        _emit(ctx, "breaker", trip.shape, record.iteration, trip.question)
        if trip.shape not in self.tripped:
            self.tripped = [*self.tripped[-4:], trip.shape]
        return trip.question


class ProgressHook(Hook):
    """Stops the turn after `limit` consecutive iterations that leave the workspace byte-identical."""

    name = "progress"

    def __init__(self, fingerprint: Callable[[], str], limit: int = 8) -> None:
        self.tracker = WorkTracker(fingerprint, limit)

    def on_turn_start(self, ctx: TurnContext, task: str) -> Stop | None:
        self.tracker.reset()
        return None

    def after_iteration(self, ctx: TurnContext) -> Stop | None:
        calls = ctx.calls_in(ctx.iteration)
        revised = any(c.name == CommitPlan.name and c.ok for c in calls)
        stall = self.tracker.observe(ctx.iteration, [action_of(c) for c in calls], revised)
        if stall is None:
            return None
        reason = f"workspace unchanged for {stall.iterations} iterations"
        _emit(ctx, "stall", reason, ctx.iteration, stall.message)
        return Stop(TURN_STALLED, stall.message, {"stalled_iterations": stall.iterations})


class PortHook(Hook):
    """Names the live stack in the system prompt and refuses commands that would serve on it."""

    name = "ports"

    def __init__(
        self, reserved: dict[int, str], services: list[tuple[str, str]] | None = None
    ) -> None:
        self.reserved = dict(reserved)
        # (name, url) pairs for the prompt; without them, loopback URLs are derived from the ports.
        self.services = (
            services
            if services is not None
            else [
                (name, f"http://127.0.0.1:{port}") for port, name in sorted(self.reserved.items())
            ]
        )

    def system_sections(self) -> list[str]:
        section = live_stack_section(self.services)
        return [section] if section else []

    def before_tool(self, ctx: TurnContext, name: str, arguments: dict[str, Any]) -> str | None:
        command = arguments.get("command")
        if not isinstance(command, str):
            return None  # only a command tool's arguments carry a command
        port = serve_port_conflict(command, self.reserved)
        if port is None:
            return None
        service = self.reserved[port]
        told = port_refusal(command, port, service, self.reserved)
        _emit(ctx, "port", f"serve on port {port} ({service})", ctx.iteration, told)
        return told
