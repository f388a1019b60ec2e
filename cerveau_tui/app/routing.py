"""The main screen's event routing: what each engine item means for the widgets, in ONE `match`.

Items arrive from the bridge's outbox (bridge.py), in order, on the UI thread. Each engine event
is typed once (wire.py) and routed by its payload's class; an event with no model yet is matched
by its type and read as a dict in `describe` (lines.py). Streamed text is drained at most every
COALESCE_S; anything else (a tool call, an approval) is applied at once.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable
from functools import cached_property
from typing import Any

from textual.app import App

from ..protocol import (
    TURN_COMPLETED,
    ApprovalRequested,
    ApprovalResolved,
    BudgetNotice,
    Compacted,
    ErrorPayload,
    EventType,
    GuardTripped,
    PolishPayload,
    ReminderPayload,
    ReplyProgress,
    ToolCallPayload,
    ToolResultPayload,
    ToolStartedPayload,
    TurnEnded,
    TurnStarted,
    UsagePayload,
)
from ..text_safety import visible
from .approvals import Approvals
from .attention import Attention
from .bridge import Bridge
from .lines import (
    budget_line,
    compacted_line,
    describe,
    polish_line,
    reminder_line,
    turn_ended_line,
)
from .messages import (
    EngineEvent,
    Item,
    JobDone,
    Provisioning,
    SessionFailed,
    SessionReady,
    StreamText,
)
from .plan_feed import PlanFeed
from .plan_model import PLAN_EVENTS
from .runner import progress_text
from .widgets.chat import ChatView
from .widgets.header import SessionHeader
from .widgets.status_bar import StatusBar
from .widgets.tool_card import DraftCard
from .wire import Untyped, typed

#: How often streamed text reaches the widgets. 50 ms: at a 1,000 tokens/s feed it gave the best
#: key latency of the variants measured (shared/reference/textual.md), and 20 updates a second
#: still reads as smooth.
COALESCE_S = 0.05

#: Decisions that leave a grant in force beyond the call: the header lists them.
GRANTING = ("approved_session", "approved_always")


class Router:
    """Drains the bridge and applies each item to the main screen's widgets.

    `exiting` says the app is going away; `job_done` is the app's: a finished job ends `busy`."""

    def __init__(
        self,
        app: App[Any],
        bridge: Bridge,
        plan: PlanFeed,
        approvals: Approvals,
        job_done: Callable[[JobDone], None],
        exiting: Callable[[], bool],
        attention: Attention | None = None,
    ) -> None:
        self.app = app
        self.bridge = bridge
        self.plan = plan
        self.approvals = approvals
        self._job_done = job_done
        self._exiting = exiting
        self._attention = attention  # rings the person when a long turn ends
        self._last_drain = 0.0
        self._drain_timer: Any = None
        self._draft: DraftCard | None = None  # the call being written, until its card comes
        self._said_error = ""  # this turn's last error on screen (lines.turn_ended_line)

    # --- draining ------------------------------------------------------------------------------
    def wake(self) -> None:
        only_text = self.bridge.take_wake()
        waited = time.monotonic() - self._last_drain
        if only_text and waited < COALESCE_S:
            if self._drain_timer is None:
                self.bridge.defer()
                self._drain_timer = self.app.set_timer(COALESCE_S - waited, self.drain)
            return
        self.drain()

    def drain(self) -> None:
        if self._drain_timer is not None:
            self._drain_timer.stop()
            self._drain_timer = None
        self._last_drain = time.monotonic()
        items = self.bridge.drain()
        if not items or self._exiting():
            return  # events from the turn being cancelled arrive while the widgets go away
        plan_dirty = False
        with self.app.batch_update():
            for item in items:
                plan_dirty |= self.apply(item)
        if plan_dirty:
            self.plan.refresh()

    # --- applying ------------------------------------------------------------------------------
    # Looked up once: a query for the status bar walks past every widget in the chat, and it
    # ran for each event. The main screen's widgets are composed once and never replaced.
    @cached_property
    def chat(self) -> ChatView:
        return self.app.screen_stack[0].query_one(ChatView)

    @cached_property
    def header(self) -> SessionHeader:
        return self.app.screen_stack[0].query_one(SessionHeader)

    @cached_property
    def status(self) -> StatusBar:
        return self.app.screen_stack[0].query_one(StatusBar)

    def apply(self, item: Item) -> bool:
        """Show one item; True when it may change the plan report."""
        chat = self.chat
        match item:
            case StreamText():
                chat.stream(item)
                self.status.streamed(item.fragments)
            case EngineEvent():
                self.event(item)
                if item.type in PLAN_EVENTS:
                    self.plan.record(item.event)
                    return True
            case Provisioning(text=text):
                chat.provision(text)
                # The status bar says what the header says: not "starting" while nothing answers.
                self.status.state.phase = (
                    "disconnected" if text.startswith("disconnected") else "starting"
                )
                self.status.refresh_state()
            case SessionReady(status=status):
                self.status.session_ready(status)
                self.grants()  # a resumed session's, restored from its journal
                model = status.get("model") or "model"
                chat.provision(f"ready: {model} at {status.get('server_url', '?')}")
            case SessionFailed(error=error):
                self.status.state.phase = "failed"
                self.status.refresh_state()
                chat.notice(f"could not start the session: {error}", "error")
            case JobDone():
                self._job_done(item)
                self.grants()
        return False

    def event(self, item: EngineEvent) -> None:
        chat, status = self.chat, self.status
        payload = typed(item.event)
        match payload:
            case TurnStarted(input=text):
                chat.user(text)
                status.turn_started()
                if self._attention is not None:
                    self._attention.turn_started()
            case ReplyProgress():
                status.reply_progress(payload)
                self.draft(payload)
            case ToolCallPayload():
                self.draft(None)
                chat.tool_call(payload, item.event.seq)
            case ToolStartedPayload(call_id=call_id, status=state, name=name):
                chat.card_status(call_id, state)
                if state == "running":
                    status.tool_running(name)
            case ToolResultPayload():
                card = chat.card(payload.call_id)
                if card is not None:
                    card.show_result(payload)
            case ApprovalRequested():
                chat.card_status(payload.call_id, "waiting")
                self.approvals.ask(payload)
            case ApprovalResolved(call_id=call_id, decision=decision, request_id=request_id):
                denied = decision.startswith("denied") or decision == "stopped"
                chat.card_status(call_id, "denied" if denied else "running")
                self.approvals.drop(request_id)
                scope = str(getattr(payload, "scope", "") or "")  # the policy's words
                if decision in GRANTING and scope:
                    self.header.grant(scope)
            case UsagePayload():
                self.draft(None)
                status.usage(payload)
            case ErrorPayload(message=message, retrying=retrying):
                chat.notice(f"error: {message}" + (" (retrying)" if retrying else ""), "error")
                self._said_error = message
            case GuardTripped(guard=guard, reason=reason):
                chat.notice(f"guard {guard}: {reason}", "warning")
            case TurnEnded():
                self.draft(None)
                chat.settle()
                status.turn_ended(payload)
                if self._attention is not None:
                    self._attention.turn_ended()
                if payload.reason != TURN_COMPLETED:
                    chat.notice(*turn_ended_line(payload, self._said_error))
                self._said_error = ""
                # A full collection when the turn is over, not mid-stream: pruned widgets are
                # cyclic garbage, and with collection deferred (tune_gc) 150 turns held ~100 MB.
                self.app.call_after_refresh(gc.collect)
            case Compacted():
                chat.notice(*compacted_line(payload))
                status.context(payload.tokens_after, payload.n_ctx)
            case BudgetNotice():
                chat.notice(*budget_line(payload))
            case ReminderPayload():
                chat.notice(*reminder_line(payload))
            case PolishPayload():
                if (polished := polish_line(payload)) is not None:
                    chat.notice(*polished)
            case Untyped():
                self.untyped(payload)

    def screen_changed(self, screen: object) -> None:
        if screen is self.app.screen_stack[0]:  # back from the palette, where grants are revoked
            self.grants()

    def grants(self) -> None:
        """The grants in force as the session holds them, read when the engine is idle (ready,
        a job done, the palette closed): revoked ones go, a resumed session's appear."""
        runner = getattr(self.app, "runner", None)
        session = runner.session if runner is not None else None
        held = getattr(session, "session_grants", None)
        if not callable(held):
            return
        try:
            scopes = [visible(str(scope)) for _, scope in held()]
        except RuntimeError:  # changed while read (a grant given this instant): the event has it
            return
        self.header.show_grants(scopes)

    def draft(self, p: ReplyProgress | None) -> None:
        """The card of the call being written: shown as its arguments stream, gone when the
        reply ends (its real card follows)."""
        if p is not None and p.tool_name:
            if self._draft is None:
                self.chat.settle()
                self._draft = DraftCard(p)
                self.chat.add(self._draft)
            else:
                self._draft.show(p)
        elif p is None and self._draft is not None:
            self._draft.remove()
            self._draft = None

    def untyped(self, event: Untyped) -> None:
        """Events with no payload model yet (or one that did not fit): read as their dict."""
        chat, p = self.chat, event.payload
        if event.problem:
            chat.notice(f"{event.type}: {event.problem}", "warning")
        match event.type:
            case EventType.STEER:
                chat.user(str(p.get("text", "")), "steer")
            case EventType.ASSISTANT_MESSAGE:
                chat.settle()
            case EventType.ITERATION_STARTED:
                self.status.iteration_started(int(p.get("iteration") or 0))
            case EventType.STACK_PROGRESS:
                chat.provision(progress_text(p.get("stage"), p.get("fraction"), p.get("line")))
            case _:
                if event.type == EventType.VERIFICATION:
                    self.status.verification(str(p.get("state") or ""))
                line = describe(event.type, p)
                if line and line[0]:
                    chat.notice(*line)
