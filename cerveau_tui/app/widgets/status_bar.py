"""One line at the bottom: server and model, context used of n_ctx, tokens/s of the last reply,
the iteration, the sandbox state and the verification seal.

"NOT enforced" is spelled out in the error colour because the person's trust in an approval
prompt depends on knowing whether the kernel is backing it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from textual.content import Content
from textual.widgets import Static

from ...protocol import ReplyProgress, TurnEnded, UsagePayload
from .tool_card import draft_summary


@dataclass
class StatusState:
    server: str = ""
    model: str = ""
    context_tokens: int = 0
    n_ctx: int = 0
    tokens_per_s: float = 0.0
    iteration: int = 0
    sandbox: str = ""
    enforced: bool | None = None
    seal: str = ""
    phase: str = "starting"  # starting | disconnected | ready | running | failed
    round_started: float | None = None  # the clock's reading when this round began
    activity: str = ""  # what the round is doing: the prompt, tokens, the call being written


#: One frame per quarter second of the round: the spinner moves because time passed, never
#: because the widget counted its own refreshes.
SPINNER = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"


def elapsed_text(seconds: float) -> str:
    s = int(max(0.0, seconds))
    return f"{s // 60}m{s % 60:02d}s" if s >= 60 else f"{s}s"


def activity_text(p: ReplyProgress) -> str:
    """What the reply is doing, by what the server said: the call being written, the tokens so
    far, the prompt read so far (llama-server with `return_progress`), else just "processing
    prompt…" (the server said nothing yet, and nothing is invented)."""
    if p.tool_name:
        return draft_summary(p)
    if p.tokens:
        return f"{p.tokens:,} tok"
    if p.prompt_total:
        return f"prompt {min(p.prompt_done, p.prompt_total):,}/{p.prompt_total:,}"
    return "processing prompt…"


#: The verification seal (done/criteria.py Verification) as the status bar shows it; "clean"
#: (nothing changed, nothing to check) shows nothing rather than a badge that means nothing.
SEALS: dict[str, tuple[str, str]] = {
    "passed": ("✓ checks passed", "$text-success"),
    "failed": ("✗ checks failed", "bold $text-error"),
    "stale": ("checks stale", "$text-warning"),
    "unavailable": ("no check known", "$text-warning"),
}


def short_server(url: str) -> str:
    return url.split("://", 1)[-1].rstrip("/")


def short_model(name: str) -> str:
    return name[:-5] if name.endswith(".gguf") else name


def status_content(s: StatusState, now: float | None = None) -> Content:
    """Most important first, so a narrow terminal cuts the least useful part (model and server,
    also shown in the chat at start-up), never the sandbox state."""
    parts: list[tuple[str, str] | str] = []

    def sep() -> None:
        parts.append((" │ ", "$text-muted"))

    phase_style = {
        "running": "$text-accent",
        "failed": "$text-error",
        "disconnected": "$text-error",
    }.get(s.phase, "$text-muted")
    running = s.phase == "running" and s.round_started is not None and now is not None
    if running and now is not None and s.round_started is not None:
        took = now - s.round_started
        frame = SPINNER[int(max(0.0, took) * 4) % len(SPINNER)]
        parts.append((f"{frame} running {elapsed_text(took)}", phase_style))
    else:
        parts.append((s.phase, phase_style))
    sep()
    if s.enforced is False:
        parts.append((f"sandbox: {s.sandbox or 'none'} NOT enforced", "bold $text-error"))
    elif s.sandbox:
        parts.append((f"sandbox: {s.sandbox}", "$text-success"))
    else:
        parts.append(("sandbox: ?", "$text-muted"))
    sep()
    if running and s.activity:
        # After the sandbox state, which an 80-column terminal must still show.
        parts.append((s.activity, "$text-accent"))
        sep()
    if s.n_ctx:
        pct = 100.0 * s.context_tokens / s.n_ctx
        style = "$text-error" if pct >= 90 else "$text-warning" if pct >= 75 else ""
        parts.append((f"ctx {s.context_tokens:,}/{s.n_ctx:,} ({pct:.0f}%)", style))
    else:
        parts.append(("ctx –", "$text-muted"))
    sep()
    parts.append(f"{s.tokens_per_s:.1f} tok/s" if s.tokens_per_s else ("– tok/s", "$text-muted"))
    sep()
    parts.append(f"iter {s.iteration}")
    seal = SEALS.get(s.seal)
    if seal is not None:
        sep()
        parts.append(seal)
    sep()
    parts.append((short_model(s.model) or "no model", "bold"))
    if s.server:
        parts.append((f" @ {short_server(s.server)}", "$text-muted"))
    return Content.assemble(*parts)


class StatusBar(Static):
    DEFAULT_CSS = """
    StatusBar { height: 1; background: $panel; color: $foreground; padding: 0 1; }
    """

    #: How often the spinner and the elapsed time move while a round runs.
    TICK_S = 0.25

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__("", id="status", markup=False)
        self.state = StatusState()
        self.clock = clock  # injected: a test sets the time, and the spinner follows it

    def on_mount(self) -> None:
        # The app's injected clock, when it has one: one time for every widget, and a test's.
        app_clock = getattr(self.app, "clock", None)
        if callable(app_clock) and self.clock is time.monotonic:
            self.clock = app_clock
        self.refresh_state()
        self.set_interval(self.TICK_S, self._tick)

    def _tick(self) -> None:
        if self.state.phase == "running":
            self.refresh_state()

    def refresh_state(self) -> None:
        self.update(status_content(self.state, self.clock()))

    def reply_progress(self, p: ReplyProgress) -> None:
        self.state.activity = activity_text(p)
        self.refresh_state()

    def tool_running(self, name: str) -> None:
        self.state.activity = f"{name} running"
        self.refresh_state()

    def session_ready(self, status: dict[str, Any]) -> None:
        s = self.state
        s.server = str(status.get("server_url") or "")
        s.model = str(status.get("model") or "")
        s.n_ctx = int(status.get("n_ctx") or s.n_ctx or 0)
        s.sandbox = str(status.get("sandbox_backend") or "")
        enforced = status.get("sandbox_enforced")
        s.enforced = None if enforced is None else bool(enforced)
        s.phase = "ready"
        self.refresh_state()

    def usage(self, p: UsagePayload) -> None:
        s = self.state
        s.context_tokens = p.context_tokens or s.context_tokens
        s.n_ctx = p.n_ctx or s.n_ctx
        if p.predicted_per_second:
            s.tokens_per_s = p.predicted_per_second
        s.activity = ""
        self.refresh_state()

    def turn_started(self) -> None:
        self.state.phase, self.state.iteration = "running", 0
        self.state.round_started, self.state.activity = self.clock(), ""
        self.refresh_state()

    def iteration_started(self, iteration: int) -> None:
        self.state.iteration = iteration or self.state.iteration + 1
        self.state.round_started, self.state.activity = self.clock(), "processing prompt…"
        self.refresh_state()

    def turn_ended(self, p: TurnEnded) -> None:
        s = self.state
        s.phase, s.round_started, s.activity = "ready", None, ""
        s.iteration = p.iterations or s.iteration
        s.context_tokens = p.context_tokens or s.context_tokens
        s.n_ctx = p.n_ctx or s.n_ctx
        if p.verification:
            s.seal = p.verification
        self.refresh_state()

    def context(self, tokens: int, n_ctx: int = 0) -> None:
        """What the window holds now, when it changed without a reply (a compaction)."""
        self.state.context_tokens = tokens
        self.state.n_ctx = n_ctx or self.state.n_ctx
        self.refresh_state()

    def verification(self, state: str) -> None:
        self.state.seal = state or self.state.seal
        self.refresh_state()
