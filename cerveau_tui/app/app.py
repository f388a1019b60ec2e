"""The Textual app shell: bindings, lifecycle, and starting the session.

The engine runs on its own thread (runner.py). Bus events reach the UI through the bridge's
ordered outbox (bridge.py) and are applied by the router (routing.py), on the UI thread only.
The main screen's layout is layout.py; approvals, the palette and the plan views each have their
own module (approvals.py, palette.py, plan_feed.py).
"""

from __future__ import annotations

import asyncio
import os
import signal
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual import events
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding
from textual.screen import Screen

from ..bus import Emitter
from ..config import Settings, save_user_setting
from ..loop.approver import BusApprover
from .approvals import Approvals
from .attention import Attention, terminal_writer
from .bridge import Bridge
from .farewell import say_how_to_continue
from .keys import SCROLL_BINDINGS, Keyboard, is_typing
from .layout import main_layout
from .messages import Item, JobDone, SessionReady, Wake
from .palette import app_commands
from .plan_feed import PlanFeed
from .replay import redraw_items, transcript_of
from .rewind_actions import LastRewind, open_list
from .routing import Router
from .runner import SessionRunner, StartupProgress
from .screens.armed import QUIET_S
from .screens.help import HelpScreen
from .screens.trust import TrustScreen
from .session_actions import offer_gate
from .start import SessionFactory, default_factory, tune_gc
from .state_home_offer import offer_state_home
from .themes import DEFAULT_THEME, ThemeSaver, load_themes
from .widgets.chat import ChatView
from .widgets.header import SessionHeader, facts_of
from .widgets.planner import PlannerPanel
from .widgets.prompt import PromptInput
from .workspace_trust import TrustHooks, answer, review_of, startup_notices

if TYPE_CHECKING:
    from ..session import Session


class CerveauApp(App[int]):
    CSS_PATH = Path(__file__).with_name("app.tcss")
    TITLE = "cerveau"
    BINDINGS = [
        Binding("ctrl+c", "interrupt", "Interrupt", id="app.interrupt", priority=True),
        Binding("escape", "escape", "Esc Esc interrupts or rewinds", id="app.escape", show=False),
        Binding("ctrl+q", "quit", "Quit", id="app.quit", priority=True),
        Binding("f2", "toggle_planner", "Planner", id="app.planner"),
        Binding("f3", "toggle_reasoning", "Reasoning", id="app.reasoning"),
        Binding("f4", "stop_thinking", "Stop thinking", id="app.stop_thinking", show=False),
        Binding("f1", "help", "Help", id="app.help"),
        # `?` reaches here only when the prompt does not take it (prompt.py: it does unless empty).
        Binding("question_mark", "help", "Help", id="app.help_key", show=False),
        *SCROLL_BINDINGS,
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
        handle_signals: bool = False,
    ) -> None:
        super().__init__()
        self._handle_signals = handle_signals
        self.settings = settings
        self.bus = bus or Emitter()
        self.approver = BusApprover(self.bus, timeout_s=settings.approval_timeout_s, clock=clock)
        self.clock = clock
        self.quiet_s = quiet_s
        self._theme_load = load_themes(theme_dirs)
        self._theme_saver = ThemeSaver(settings.theme, save_setting, self._warn)
        self.bridge = Bridge(self.post_message)
        self._unsubscribe = self.bus.subscribe(self.bridge)
        self._trust = trust or TrustHooks()
        self._session_factory = session_factory
        self._ready_status: dict[str, Any] | None = None  # for the header, once the server answered
        self.runner = self._new_runner() if session_factory is not None else None
        self.attention = Attention(terminal_writer(self), clock, lambda: self.settings.notify)
        self.approvals = Approvals(
            self, self.approver, clock, quiet_s, self._stop_turn, self.attention
        )
        self.plan = PlanFeed(lambda: self.screen_stack[0])
        self.busy = self.exiting = False
        self.router = Router(
            self,
            self.bridge,
            self.plan,
            self.approvals,
            self.job_done,
            lambda: self.exiting,
            lambda: self.runner.session if self.runner is not None else None,
            self.attention,
        )
        self.keys = Keyboard(self, clock)
        self.last_rewind = LastRewind()  # what the rewind list's forward row says
        self._stopped = self._started = self._gate_offered = False

    # --- layout and start ------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        yield from main_layout(self.settings.show_reasoning)

    @property
    def prompt(self) -> PromptInput:
        # The base screen's: `self.query_one` searches the active screen, a dialog while one is up.
        return self.screen_stack[0].query_one(PromptInput)

    @property
    def chat(self) -> ChatView:
        return self.screen_stack[0].query_one(ChatView)

    def on_mount(self) -> None:
        if self._handle_signals:
            # SIGTERM killed the app where it stood: the terminal left in the alternate screen
            # with the mouse on, the session not closed. Quit as Ctrl+Q does instead.
            loop = asyncio.get_running_loop()
            loop.add_signal_handler(signal.SIGTERM, lambda: asyncio.ensure_future(self.quit_now()))
            loop.add_signal_handler(signal.SIGHUP, self._hang_up)
        for theme in self._theme_load.themes:
            self.register_theme(theme)
        wanted = (
            self.settings.theme if self.settings.theme in self.available_themes else DEFAULT_THEME
        )
        self.theme = wanted if wanted in self.available_themes else "textual-dark"
        self.theme_changed_signal.subscribe(self, self._theme_saver)
        self.screen_change_signal.subscribe(self, self.router.screen_changed)
        if self.settings.keymap:
            self.set_keymap(self.settings.keymap)
        self.set_class(not self.settings.show_reasoning, "-hide-reasoning")
        chat = self.chat
        for problem in self._theme_load.problems:
            chat.notice(f"theme skipped: {problem}", "warning")
        self.prompt.focus()
        self._show_header()
        for text, level in startup_notices(self.settings):
            chat.notice(text, level)
        for warning in self.settings.warnings:
            chat.notice(warning, "warning")
        # A read-only workspace: where its state could go instead, offered (state_home_offer.py).
        if not offer_state_home(self, self._review_then_start):
            self._review_then_start()

    def _review_then_start(self) -> None:
        review = review_of(self.settings)
        if review:
            # Before the session is built: what it is built with depends on the answer.
            screen = TrustScreen(
                review, self.settings.workspace_config_path, self.clock, self.prompt, self.quiet_s
            )
            self.push_screen(screen, self._trust_answered)
        else:
            self._start_session()

    def _new_runner(self) -> SessionRunner:
        def build(progress: StartupProgress) -> Session:
            # Looked up when the engine thread starts: the trust dialog may swap the factory.
            assert self._session_factory is not None
            return self._redrawn(self._session_factory(self.bus, self.approver, progress))

        return SessionRunner(
            build, self._from_engine, lambda: self.approver.cancel_all("interrupted")
        )

    def _start_session(self) -> None:
        if self.runner is not None and not self._started:
            self._started = True
            self.chat.provision("starting the session…")
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
        chat = self.chat
        for text, level in outcome.notices:
            chat.notice(text, level)
        self.prompt.focus()
        self._show_header()
        self._start_session()

    def _redrawn(self, session: Session) -> Session:
        """Engine thread, before SessionReady: a resumed session's conversation is drawn again."""
        for item in redraw_items(transcript_of(session), self.settings.show_reasoning):
            self.bridge.put(item)
        return session

    def _warn(self, text: str) -> None:
        self.chat.notice(text, "warning")

    # --- the bridge ----------------------------------------------------------------------------
    def _from_engine(self, item: Item) -> None:
        if isinstance(item, SessionReady):  # engine thread: a plain assignment, read on wake
            self._ready_status = dict(item.status)
        self.bridge.put(item)

    def on_wake(self, _: Wake) -> None:
        self.router.wake()
        self._show_header()
        if self._ready_status is not None and not self._gate_offered:
            self._gate_offered = True  # once per start; the answer is saved per workspace
            offer_gate(self)

    def resume_session(self, session_id: str) -> None:
        """The palette's session picker: this session closes, the chosen one opens, redrawn."""
        if self.busy or self.runner is None or self._session_factory is None:
            return
        self.runner.stop()
        self.chat.clear()
        self.plan.clear()
        self._session_factory = default_factory(self.settings, session_id)
        self._ready_status, self._started = None, False
        self.runner = self._new_runner()
        self._start_session()

    def _show_header(self) -> None:
        # Also on every wake: the discussion switch changes the settings with only a notice.
        header = self.screen_stack[0].query_one(SessionHeader)
        if facts_of(self.settings, self._ready_status) != header.facts:
            header.show(self.settings, self._ready_status)

    def job_done(self, item: JobDone) -> None:
        self.busy = False
        chat = self.chat
        chat.settle()
        if item.error:
            chat.notice(f"{item.kind} failed: {item.error}", "error")
        self.refresh_bindings()

    def _stop_turn(self) -> None:
        if self.runner is not None:
            self.runner.interrupt()

    # --- input ---------------------------------------------------------------------------------
    async def on_event(self, event: events.Event) -> None:
        # Before Textual hands it to the focused widget: typing aimed elsewhere is the prompt's.
        if is_typing(event) and self.screen_stack and not self._stopped:
            self.keys.refocus_prompt()
        await super().on_event(event)

    def on_prompt_input_submitted(self, message: PromptInput.Submitted) -> None:
        text = message.text.strip()
        chat = self.chat
        chat.follow()  # what was sent, and what comes back, is at the bottom
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

    def on_prompt_input_help_asked(self, _: PromptInput.HelpAsked) -> None:
        self.action_help()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "interrupt":
            # Ctrl+C copies a selection even during a turn; shown dimmed when nothing to stop.
            return True if self.busy or self._selected_text() else None
        if action == "scroll_chat":
            return self.screen is self.screen_stack[0]  # a dialog's PgUp scrolls the dialog
        return True

    def _selected_text(self) -> str:
        screen = self.screen
        focused = screen.focused
        text = getattr(focused, "selected_text", "") if focused is not None else ""
        return str(text or screen.get_selected_text() or "")

    def action_interrupt(self) -> None:
        selected = self._selected_text()
        if selected:
            self.copy_to_clipboard(selected)
            self.screen.clear_selection()
            self.notify(f"copied {len(selected):,} characters", timeout=2)
            return
        if self.runner is not None and self.busy:
            self.runner.interrupt()
            self.chat.notice("interrupting…", "warning")

    def action_escape(self) -> None:
        self.keys.escape()

    def open_rewind(self) -> None:
        open_list(self)  # Esc Esc on an empty prompt between turns, or the palette

    def action_toggle_planner(self) -> None:
        self.screen_stack[0].query_one(PlannerPanel).toggle_class("-open")

    def action_stop_thinking(self) -> None:
        self.keys.stop_thinking()  # keys.py

    def action_toggle_reasoning(self) -> None:
        self.toggle_class("-hide-reasoning")

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())

    def action_show_help_panel(self) -> None:
        self.action_help()  # Textual's panel lists the focused text area's keys, not the app's

    def action_scroll_chat(self, direction: str) -> None:
        chat = self.chat
        chat.scroll_page_up() if direction == "up" else chat.scroll_page_down()

    async def action_quit(self) -> None:
        if self.keys.may_quit():  # mid-turn, it asks on a screen of its own (keys.py)
            await self.quit_now()

    async def quit_now(self) -> None:
        self.chat.notice("stopping the session…", "warning")
        await asyncio.to_thread(self.stop_session)
        self.exiting = True
        self.exit(0)

    def _hang_up(self) -> None:
        # The terminal is gone: a Textual exit hung writing to it (measured: the app never ended).
        # Close the session (its commands, its server), then leave without touching the tty.
        threading.Thread(target=lambda: (self.stop_session(), os._exit(129)), daemon=True).start()
        self.set_timer(10.0, lambda: os._exit(129))

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

    # --- the palette -------------------------------------------------------------------------
    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        # Textual's "Keys" shows the focused widget's keys (the prompt's text editing): ours instead.
        # Its Screenshot saves to ~/Downloads only; palette.py's falls back when there is none.
        yield from (
            c for c in super().get_system_commands(screen) if c.title not in ("Keys", "Screenshot")
        )
        yield from app_commands(self)


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
    app = CerveauApp(
        settings,
        session_factory=default_factory(settings, resume),
        trust=trust,
        handle_signals=True,
    )
    code = app.run()
    session = app.runner.session if app.runner is not None else None
    app.stop_session()
    say_how_to_continue(session)
    return int(code or 0)
