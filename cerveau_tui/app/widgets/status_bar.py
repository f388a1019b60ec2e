"""One line at the bottom: the turn's elapsed time, the sandbox state, what the round is doing,
its tokens so far and the rate they arrive at (live_rate.py), the context used of n_ctx, the
iteration, the verification seal, the model and server.

Tried on a slow server, it showed the previous round's figures: `ctx 0/8,192` through the whole
first round, 5.8 tok/s while the server did 0.3-1.3, and `running Ns` restarted every round.
Now the time is the turn's, the rate and the tokens are this round's as they arrive, and the
context is the server's prompt count plus what was generated since, `?` until one is known.
Narrow, the parts take short forms and the least useful go first (fit.py).

"NOT enforced" is spelled out in the error colour because the person's trust in an approval
prompt depends on knowing whether the kernel is backing it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from textual.content import Content
from textual.widgets import Static

from ...protocol import ReplyProgress, TurnEnded, UsagePayload
from .fit import Part, fit_line
from .live_rate import TokenSamples
from .tool_card import draft_summary, short_count


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
    turn_started: float | None = None  # when the turn began: the elapsed time is the turn's
    round_tokens: int = 0  # generated this round so far (every call of the round)
    prompt_total: int = 0  # the prompt of the call streaming now, as the server counts it
    cache_pct: int | None = None  # the last request's prompt reused from the server's cache
    quiet_since: float | None = None  # when the server last said anything new, once it went quiet
    samples: TokenSamples = field(default_factory=TokenSamples)
    short_activity: str = ""  # the activity for a narrow terminal ("" : the same)
    # The done check running now (check_started until its check): its command and start.
    check_command: str = ""
    check_started: float | None = None
    # Approval dialogs open now (request ids): a `!cmd` waiting on one said "ready" (issue 33).
    waiting: set[str] = field(default_factory=set)


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


def quiet_text(s: StatusState, now: float) -> str:
    """ "server quiet for 40 s" once the provider said the server went quiet (keep-alives only,
    reply_progress `quiet_s`), counted on from then: the person sees the wait before the call
    gives up at request_timeout_s, instead of a spinner that looks the same as progress."""
    if s.quiet_since is None:
        return ""
    quiet = max(0.0, now - s.quiet_since)
    return f"server quiet for {f'{int(quiet)} s' if quiet < 60 else elapsed_text(quiet)}"


def short_server(url: str) -> str:
    return url.split("://", 1)[-1].rstrip("/")


def short_model(name: str) -> str:
    return name[:-5] if name.endswith(".gguf") else name


def rate_text(rate: float) -> str:
    return f"{rate:.1f} tok/s" if rate >= 0.1 or rate == 0 else f"{rate:.2f} tok/s"


def check_part(s: StatusState, now: float) -> Part:
    """ "check `pytest -q` 12s · Esc Esc stops it": issue 33's precheck ran for 30 s under
    "running … iter 0", and nothing said a suite was running, nor how to stop it."""
    took = elapsed_text(now - (s.check_started or now))
    cmd = s.check_command if len(s.check_command) <= 48 else s.check_command[:47] + "…"
    return Part(
        f"check {cmd} {took} · Esc Esc stops it", "$text-warning", f"check {took} · Esc Esc stops"
    )


def _context_part(s: StatusState, running: bool) -> Part:
    tokens = s.context_tokens
    if running and s.prompt_total:
        tokens = max(tokens, s.prompt_total + s.round_tokens)  # the window as it fills
    if not s.n_ctx:
        return Part("ctx –", "$text-muted", rank=2)
    if not tokens:
        return Part(f"ctx ?/{s.n_ctx:,}", "$text-muted", f"ctx ?/{short_count(s.n_ctx)}", 2)
    pct = 100.0 * tokens / s.n_ctx
    style = "$text-error" if pct >= 90 else "$text-warning" if pct >= 75 else ""
    return Part(f"ctx {tokens:,}/{s.n_ctx:,} ({pct:.0f}%)", style, f"ctx {pct:.0f}%", 2)


def status_parts(s: StatusState, now: float | None = None) -> list[Part]:
    """Most important first, so a narrow terminal loses the least useful part (model and
    server, also shown in the chat at start-up), never the sandbox state."""
    parts: list[Part] = []
    style = {"running": "$text-accent", "failed": "$text-error", "disconnected": "$text-error"}
    phase_style = style.get(s.phase, "$text-muted")
    started = s.turn_started if s.turn_started is not None else s.round_started
    running = s.phase == "running" and started is not None and now is not None
    if running and now is not None and started is not None:
        took = now - started
        frame = SPINNER[int(max(0.0, took) * 4) % len(SPINNER)]
        parts.append(Part(f"{frame} running {elapsed_text(took)}", phase_style))
    elif s.waiting:
        # Outside a turn (the person's `!cmd`) nothing else says a dialog holds things up.
        parts.append(Part("waiting for your answer", "$text-warning", "waiting for you"))
    else:
        parts.append(Part(s.phase, phase_style))
    if s.enforced is False:
        parts.append(Part(f"sandbox: {s.sandbox or 'none'} NOT enforced", "bold $text-error"))
    elif s.sandbox:
        parts.append(Part(f"sandbox: {s.sandbox}", "$text-success"))
    else:
        parts.append(Part("sandbox: ?", "$text-muted"))
    rate = s.samples.rate_at(now) if running and now is not None else None
    live = f" · {rate_text(rate)}" if rate is not None else ""
    if running and now is not None and s.check_started is not None:
        parts.append(check_part(s, now))
    elif running and s.activity:
        # After the sandbox state, which an 80-column terminal must still show.
        short = s.short_activity or s.activity
        if s.activity.endswith(" tok"):  # the tokens are the activity: the rate joins them
            parts.append(Part(s.activity + live, "$text-accent", short + live))
        else:
            parts.append(Part(s.activity, "$text-accent", short))
            if s.round_tokens:
                parts.append(Part(f"{s.round_tokens:,} tok{live}", "$text-accent", rank=1))
    quiet = quiet_text(s, now) if running and now is not None else ""
    if quiet:
        parts.append(Part(quiet, "$text-warning", quiet.replace("server quiet for", "quiet")))
    parts.append(_context_part(s, running))
    if s.cache_pct is not None:  # a cheap round and a full re-read look alike otherwise
        low = "$text-warning" if s.cache_pct < 50 else ""
        parts.append(Part(f"cache {s.cache_pct}%", low, rank=3))
    if not running:
        # Between turns: the server's own figure for the last reply, which is what it was.
        tps = s.tokens_per_s
        parts.append(
            Part(rate_text(tps), rank=3) if tps else Part("– tok/s", "$text-muted", rank=3)
        )
    parts.append(Part(f"iter {s.iteration}", rank=3))
    seal = SEALS.get(s.seal)
    if seal is not None:
        parts.append(Part(seal[0], seal[1], rank=1))
    model = short_model(s.model) or "no model"
    parts.append(Part(model + (f" @ {short_server(s.server)}" if s.server else ""), rank=4))
    return parts


def status_content(s: StatusState, now: float | None = None, width: int | None = None) -> Content:
    return fit_line(status_parts(s, now), width)


class StatusBar(Static):
    DEFAULT_CSS = """
    StatusBar { height: 1; background: $panel; color: $foreground; padding: 0 1; }
    """

    #: How often the spinner and the elapsed time move while a round runs.
    TICK_S = 0.25

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        super().__init__("", id="status", markup=False)
        self.state = StatusState()
        self._round_base = 0  # tokens of this round's calls that ended
        self._call_tokens = 0  # the streaming call's, as its last progress said
        self._since_progress = 0  # text fragments received since that progress
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
        width = self.content_size.width if self.is_attached else 0
        self.update(status_content(self.state, self.clock(), width or None))

    def on_resize(self) -> None:
        self.refresh_state()

    def reply_progress(self, p: ReplyProgress) -> None:
        s = self.state
        if p.tokens < self._call_tokens:  # a new call of the same round (a retry, a summary)
            self._round_base += self._call_tokens
        self._call_tokens, self._since_progress = p.tokens, 0
        s.round_tokens = self._round_base + p.tokens
        s.prompt_total = p.prompt_total or s.prompt_total
        if p.tokens:
            s.samples.add(self.clock(), s.round_tokens)
        s.activity = f"{s.round_tokens:,} tok" if p.tokens and not p.tool_name else activity_text(p)
        s.short_activity = draft_summary(p, width=0) if p.tool_name else ""
        s.quiet_since = self.clock() - p.quiet_s if p.quiet_s else None
        self.refresh_state()

    def streamed(self, fragments: int) -> None:
        """Text arrived: fragments since the last progress count as tokens (less the one the
        progress already counted: it is sent with its delta's fragment), so the count and the
        rate move with every token on a slow server, not every 16th."""
        s = self.state
        if s.phase != "running" or not self._call_tokens:
            return
        self._since_progress += fragments
        s.quiet_since = None  # text arrived: the server is not quiet
        live = self._round_base + self._call_tokens + max(0, self._since_progress - 1)
        if live > s.round_tokens:
            s.round_tokens = live
            s.samples.add(self.clock(), live)
            if s.activity.endswith(" tok"):
                s.activity = f"{live:,} tok"
        self.refresh_state()

    def _new_round(self) -> None:
        s = self.state
        s.round_tokens = s.prompt_total = self._round_base = self._call_tokens = 0
        self._since_progress = 0
        s.samples.clear()
        s.quiet_since = None

    def check_started(self, command: str) -> None:
        self.state.check_command, self.state.check_started = command, self.clock()
        self.refresh_state()

    def check_ended(self) -> None:
        self.state.check_command, self.state.check_started = "", None
        self.refresh_state()

    def approval_asked(self, request_id: str) -> None:
        self.state.waiting.add(request_id)
        self.refresh_state()

    def approval_resolved(self, request_id: str) -> None:
        self.state.waiting.discard(request_id)
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
        if p.prompt_n + p.cache_n:
            s.cache_pct = int(100 * p.cache_n / (p.prompt_n + p.cache_n))
        self._round_base = s.round_tokens  # the call ended: its tokens stay the round's
        self._call_tokens = self._since_progress = 0
        s.prompt_total = 0  # the server's count is in context_tokens now
        s.activity, s.quiet_since = "", None
        self.refresh_state()

    def turn_started(self) -> None:
        self.state.phase, self.state.iteration = "running", 0
        self.state.round_started, self.state.activity = self.clock(), ""
        self.state.turn_started = self.state.round_started
        self._new_round()
        self.refresh_state()

    def iteration_started(self, iteration: int) -> None:
        self.state.iteration = iteration or self.state.iteration + 1
        self.state.round_started, self.state.activity = self.clock(), "processing prompt…"
        self._new_round()
        self.refresh_state()

    def turn_ended(self, p: TurnEnded) -> None:
        s = self.state
        s.phase, s.round_started, s.activity = "ready", None, ""
        s.turn_started = s.quiet_since = s.check_started = None
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
