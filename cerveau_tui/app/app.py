"""The Textual app: chat, plan strip, planner, prompt, status bar, approval modal.

The engine runs on its own thread (runner.py). Bus events reach the UI through the bridge's
ordered outbox (bridge.py) and are applied here, on the UI thread only. Text is drained at most
every COALESCE_S; anything else (a tool call, an approval) is applied at once.
"""

from __future__ import annotations

import asyncio
import gc
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import Screen
from textual.widgets import Footer

from ..bus import Emitter
from ..config import Settings, save_user_setting
from ..loop.approver import ApprovalDecision, BusApprover
from ..protocol import Event
from .bridge import Bridge
from .messages import (
    EngineEvent,
    Item,
    JobDone,
    Provisioning,
    SessionFailed,
    SessionReady,
    StreamText,
    Wake,
)
from .plan_model import PLAN_EVENTS, build_report, make_fingerprinter
from .runner import Session, SessionRunner, progress_text
from .screens.approval import ApprovalScreen
from .screens.armed import QUIET_S
from .screens.trust import TrustScreen
from .themes import DEFAULT_THEME, load_themes
from .widgets.chat import ChatView
from .widgets.plan_strip import PlanStrip
from .widgets.planner import PlannerPanel
from .widgets.prompt import PromptInput
from .widgets.status_bar import StatusBar
from .workspace_trust import TrustHooks, answer, review_of, startup_notices

#: How often streamed text reaches the widgets. 50 ms: at a 1,000 tokens/s feed it gave the best
#: key latency of the variants measured (shared/reference/textual.md), and 20 updates a second
#: still reads as smooth.
COALESCE_S = 0.05
ESC_ESC_S = 1.0

#: (bus, approver, progress) -> a built session; runs on the engine thread.
SessionFactory = Callable[[Emitter, BusApprover, Callable[..., None]], Session]


class CerveauApp(App[int]):
    CSS_PATH = Path(__file__).with_name("app.tcss")
    TITLE = "cerveau"
    BINDINGS = [
        Binding("ctrl+c", "interrupt", "Interrupt", id="app.interrupt", priority=True),
        Binding("escape", "escape", "Esc Esc interrupts", id="app.escape", show=False),
        Binding("ctrl+q", "quit", "Quit", id="app.quit", priority=True),
        Binding("f2", "toggle_planner", "Planner", id="app.planner"),
        Binding("f3", "toggle_reasoning", "Reasoning", id="app.reasoning"),
    ]

    def __init__(
        self,
        settings: Settings,
        *,
        session_factory: SessionFactory | None = None,
        bus: Emitter | None = None,
        clock: Callable[[], float] = time.monotonic,
        save_setting: Callable[[str, Any], object] = save_user_setting,
        theme_dirs: list[Path] | None = None,
        quiet_s: float = QUIET_S,
        trust: TrustHooks | None = None,
    ) -> None:
        super().__init__()
        self.settings = settings
        self.bus = bus or Emitter()
        self.approver = BusApprover(self.bus, timeout_s=settings.approval_timeout_s)
        self.clock = clock
        self.quiet_s = quiet_s
        self._save_setting = save_setting
        self._theme_load = load_themes(theme_dirs)
        self.bridge = Bridge(self.post_message)
        self._unsubscribe = self.bus.subscribe(self.bridge)
        self._trust = trust or TrustHooks()
        self.runner: SessionRunner | None = None
        self._session_factory = session_factory
        if session_factory is not None:
            # Looked up when the engine thread starts: the trust dialog may swap the factory.
            self.runner = SessionRunner(
                lambda progress: self._factory()(self.bus, self.approver, progress),
                self.bridge.put,
                cancel_approvals=lambda: self.approver.cancel_all("interrupted"),
            )
        self.busy = False
        self.plan_events: list[Event] = []
        self.report: Any = None
        self._fingerprinter: Any = None
        self.approval_screen: ApprovalScreen | None = None
        self._last_drain = 0.0
        self._drain_timer: Any = None
        self._last_escape = -10.0
        self._saved_theme = settings.theme
        self._stopped = False
        self._exiting = False
        self._started = False

    # --- layout -----------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield PlannerPanel()
        with Vertical(id="main"):
            yield ChatView(show_reasoning=self.settings.show_reasoning)
            yield PlanStrip()
            yield PromptInput()
        yield StatusBar()
        yield Footer()

    @property
    def prompt(self) -> PromptInput:
        # The base screen's: `self.query_one` searches the active screen, a dialog while one is up.
        return self.screen_stack[0].query_one(PromptInput)

    def on_mount(self) -> None:
        for theme in self._theme_load.themes:
            self.register_theme(theme)
        wanted = (
            self.settings.theme if self.settings.theme in self.available_themes else DEFAULT_THEME
        )
        self.theme = wanted if wanted in self.available_themes else "textual-dark"
        self.theme_changed_signal.subscribe(self, self._on_theme_changed)
        if self.settings.keymap:
            self.set_keymap(self.settings.keymap)
        self.set_class(not self.settings.show_reasoning, "-hide-reasoning")
        chat = self.query_one(ChatView)
        for problem in self._theme_load.problems:
            chat.notice(f"theme skipped: {problem}", "warning")
        self.query_one(PromptInput).focus()
        for text, level in startup_notices(self.settings):
            chat.notice(text, level)
        review = review_of(self.settings)
        if review:
            # Before the session is built: what it is built with depends on the answer.
            screen = TrustScreen(
                review, self.settings.workspace_config_path, self.clock, self.prompt, self.quiet_s
            )
            self.push_screen(screen, self._trust_answered)
        else:
            self._start_session()

    def _factory(self) -> SessionFactory:
        assert self._session_factory is not None
        return self._session_factory

    def _start_session(self) -> None:
        if self.runner is not None and not self._started:
            self._started = True
            self.query_one(ChatView).provision("starting the session…")
            self.runner.start()

    def _trust_answered(self, trusted: bool | None) -> None:
        outcome = answer(bool(trusted), self.settings, self._trust)
        if outcome.settings is not self.settings:
            self.settings = outcome.settings
            self.approver.timeout_s = outcome.settings.approval_timeout_s
            if outcome.settings.keymap:
                self.set_keymap(outcome.settings.keymap)
        if outcome.factory is not None:
            self._session_factory = outcome.factory
        chat = self.query_one(ChatView)
        for text, level in outcome.notices:
            chat.notice(text, level)
        self.prompt.focus()
        self._start_session()

    # --- the bridge ----------------------------------------------------------------------------
    def on_wake(self, _: Wake) -> None:
        only_text = self.bridge.take_wake()
        waited = time.monotonic() - self._last_drain
        if only_text and waited < COALESCE_S:
            if self._drain_timer is None:
                self.bridge.defer()
                self._drain_timer = self.set_timer(COALESCE_S - waited, self.drain)
            return
        self.drain()

    def drain(self) -> None:
        if self._drain_timer is not None:
            self._drain_timer.stop()
            self._drain_timer = None
        self._last_drain = time.monotonic()
        items = self.bridge.drain()
        if not items or self._exiting:
            return  # events from the turn being cancelled arrive while the widgets go away
        plan_dirty = False
        with self.batch_update():
            for item in items:
                plan_dirty |= self._apply(item)
        if plan_dirty:
            self.refresh_plan()

    def _apply(self, item: Item) -> bool:
        chat = self.query_one(ChatView)
        if isinstance(item, StreamText):
            chat.stream(item)
            return False
        if isinstance(item, EngineEvent):
            t, p = item.type, item.payload
            chat.apply(item)
            self.query_one(StatusBar).apply(t, p)
            if t == "approval_requested":
                self._ask(p)
            elif t == "approval_resolved" and self.approval_screen is not None:
                self.approval_screen.drop(str(p.get("request_id", "")))
            elif t == "stack_progress":
                chat.provision(progress_text(p.get("stage"), p.get("fraction"), p.get("line")))
            if t == "turn_ended":
                # A full collection when the turn is over, not mid-stream: pruned widgets are
                # cyclic garbage, and with collection deferred (tune_gc) 150 turns held ~100 MB.
                self.call_after_refresh(gc.collect)
            if t in PLAN_EVENTS:
                self._record_plan_event(item.event)
                return True
            return False
        if isinstance(item, Provisioning):
            chat.provision(item.text)
        elif isinstance(item, SessionReady):
            self.query_one(StatusBar).session_ready(item.status)
            model = item.status.get("model") or "model"
            chat.provision(f"ready: {model} at {item.status.get('server_url', '?')}")
        elif isinstance(item, SessionFailed):
            self.query_one(StatusBar).state.phase = "failed"
            self.query_one(StatusBar).refresh_state()
            chat.notice(f"could not start the session: {item.error}", "error")
        elif isinstance(item, JobDone):
            self.busy = False
            chat.settle()
            if item.error:
                chat.notice(f"{item.kind} failed: {item.error}", "error")
            self.refresh_bindings()
        return False

    def _record_plan_event(self, event: Event) -> None:
        # Keep what the report needs, not the tool outputs: 500 turns of logs would stay alive here.
        if event.type == "tool_result" and "output" in event.payload:
            event = event.model_copy(
                update={"payload": {k: v for k, v in event.payload.items() if k != "output"}}
            )
        self.plan_events.append(event)

    def refresh_plan(self) -> None:
        if self._fingerprinter is None:
            self._fingerprinter = make_fingerprinter(self.settings.workspace)
        self.report = build_report(self.plan_events, self.settings.workspace, self._fingerprinter)
        self.query_one(PlanStrip).show(self.report)
        self.query_one(PlannerPanel).show(self.report)

    # --- approvals -----------------------------------------------------------------------------
    def _ask(self, payload: dict[str, Any]) -> None:
        screen = self.approval_screen
        if screen is None or screen.closing:
            screen = ApprovalScreen(
                self._resolve_approval, self.clock, self.quiet_s, sink=self.prompt
            )
            self.approval_screen = screen
            screen.add(payload)
            self.push_screen(screen, lambda _: self._approval_closed(screen))
        else:
            screen.add(payload)

    def _resolve_approval(self, request_id: str, decision: ApprovalDecision) -> None:
        self.approver.resolve(request_id, decision)
        if decision.decision == "stopped" and self.runner is not None:
            # Esc means "deny and stop the turn": the dispatcher stops on this decision, and
            # the engine is told too so queued calls of the same round do not ask again.
            self.runner.interrupt()

    def _approval_closed(self, screen: ApprovalScreen) -> None:
        if self.approval_screen is screen:
            self.approval_screen = None
            self.query_one(PromptInput).focus()

    # --- input ---------------------------------------------------------------------------------
    def on_prompt_input_submitted(self, message: PromptInput.Submitted) -> None:
        text = message.text.strip()
        chat = self.query_one(ChatView)
        # Not started yet (the trust dialog is up): queued like a turn typed while it starts.
        unstarted = self.runner is not None and not self._started
        if self.runner is None or (not unstarted and not self.runner.thread.is_alive()):
            chat.notice(
                "no session: nothing to send to (see the error above; Ctrl+Q quits)", "error"
            )
            return
        if self.runner.session is None:
            chat.notice("the session is still starting; this is sent as soon as it is ready")
        if text.startswith("!"):
            command = text[1:].strip()
            if command:
                if self.busy:
                    chat.notice("the command runs when the current turn ends")
                self.busy = True
                self.runner.exec(command)
            return
        if self.busy:
            if self.runner.steer(text):
                chat.notice(f"steering queued for the next round: {text}")
            return
        self.busy = True
        self.refresh_bindings()
        self.runner.run(text)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "interrupt":
            return True if self.busy else None  # shown dimmed when there is nothing to stop
        return True

    def action_interrupt(self) -> None:
        if self.runner is not None and self.busy:
            self.runner.interrupt()
            self.query_one(ChatView).notice("interrupting…", "warning")

    def action_escape(self) -> None:
        now = self.clock()
        if now - self._last_escape <= ESC_ESC_S:
            self._last_escape = -10.0
            self.action_interrupt()
        else:
            self._last_escape = now

    def action_toggle_planner(self) -> None:
        self.query_one(PlannerPanel).toggle_class("-open")

    def action_toggle_reasoning(self) -> None:
        self.toggle_class("-hide-reasoning")

    async def action_quit(self) -> None:
        self.query_one(ChatView).notice("stopping the session…", "warning")
        await asyncio.to_thread(self.stop_session)
        self._exiting = True
        self.exit(0)

    def stop_session(self) -> bool:
        """Cancel the turn, close the session, join the engine thread. Idempotent."""
        if self._stopped:
            return True
        self._stopped = True
        self.approver.cancel_all("quit")
        gone = self.runner.stop() if self.runner is not None else True
        self._unsubscribe()
        self.bridge.closed = True
        return gone

    def on_unmount(self) -> None:
        self.stop_session()

    # --- themes and the palette ----------------------------------------------------------------
    def _on_theme_changed(self, theme: Any) -> None:
        name = getattr(theme, "name", str(theme))
        if name != self._saved_theme:
            self._saved_theme = name
            try:
                self._save_setting("theme", name)
            except Exception as exc:  # an unwritable config must not break the switch
                self.query_one(ChatView).notice(f"theme not saved: {exc}", "warning")

    def get_system_commands(self, screen: Screen) -> Any:
        yield from super().get_system_commands(screen)
        yield SystemCommand(
            "Toggle planner", "Show or hide the plan panel", self.action_toggle_planner
        )
        yield SystemCommand(
            "Toggle reasoning", "Show or hide the model's reasoning", self.action_toggle_reasoning
        )
        if self.busy:
            yield SystemCommand("Interrupt", "Stop the running turn", self.action_interrupt)
        elif self.runner is not None and self.runner.session is not None:
            yield SystemCommand("Undo last turn", "Put back the files the last turn's tools changed", partial(self.runner.submit, "undo"))
            yield SystemCommand("Compact history", "Replace older rounds with a resume brief", partial(self.runner.submit, "compact"))
            net = bool(getattr(self.settings, "network", False))
            yield SystemCommand(
                "Withdraw network" if net else "Grant network",
                "Commands may reach the network for the rest of this session" if not net else "Commands lose the network again",
                partial(self._toggle, "network", not net),
            )
            discuss = bool(getattr(self.settings, "discuss", False))
            yield SystemCommand(
                "Leave discussion mode" if discuss else "Discussion mode",
                "Read and plan only; the plan guides the next turns" if not discuss else "Back to autopilot: the agent may change files",
                partial(self._toggle, "discuss", not discuss),
            )
        policy = self._policy()
        for key, scope in policy.session_scopes() if policy is not None else []:
            yield SystemCommand(
                f"Revoke session grant: {scope}",
                "Ask again next time instead of approving this for the session",
                partial(self.revoke_grant, key, scope),
            )

    def _toggle(self, kind: str, on: bool) -> None:
        if self.runner is not None:
            self.runner.submit(kind, "on" if on else "off")

    def _policy(self) -> Any:
        session = self.runner.session if self.runner is not None else None
        policy = getattr(getattr(session, "engine", None), "policy", None)
        return policy if hasattr(policy, "session_scopes") else None

    def revoke_grant(self, key: str, scope: str) -> None:
        policy = self._policy()
        if policy is not None and policy.revoke(key):
            self.query_one(ChatView).notice(f"session grant revoked: {scope}")


def tune_gc() -> None:
    """Collect young garbage less often. Textual makes many short-lived cyclic objects per frame,
    and with the default threshold (700) a collection ran every few frames while streaming; with
    this and a full collection at each turn's end (see `_apply`) the measured p99 key latency at
    1,000 tokens/s fell from ~200-300 ms to 30-90 ms (benchmarks/tui_bench.py latency)."""
    gc.set_threshold(20_000, 10, 10)


def default_factory(settings: Settings, resume: str | None = None) -> SessionFactory:
    def factory(bus: Emitter, approver: BusApprover, progress: Callable[..., None]) -> Session:
        from ..session import build_session

        return build_session(settings, bus=bus, approver=approver, progress=progress, resume=resume)  # type: ignore[return-value]

    return factory


def run_app(
    settings: Settings,
    resume: str | None = None,
    reload_settings: Callable[[], Settings] | None = None,
) -> int:
    """`cerveau` with no sub-command: the app, with the session built on the engine thread.
    `reload_settings`: load_settings with the same flags, for after the person trusts a
    workspace config (without it, a trust applies from the next start)."""
    tune_gc()
    trust = TrustHooks(reload=reload_settings, factory_for=lambda s: default_factory(s, resume))
    app = CerveauApp(settings, session_factory=default_factory(settings, resume), trust=trust)
    code = app.run()
    app.stop_session()
    return int(code or 0)
