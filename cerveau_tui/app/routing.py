"""The main screen's event routing: what each engine item means for the widgets, in ONE `match`.

Items arrive from the bridge's outbox (bridge.py), in order, on the UI thread. Each engine event
is typed once (wire.py) and routed by its payload's class: an event with a widget of its own (a
card, the status bar) goes to it; every other one is a chat line from protocol/describe.py, the
same line `cerveau run` prints. Streamed text is drained at most every COALESCE_S; anything else
(a tool call, an approval) is applied at once.
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable
from functools import cached_property
from typing import TYPE_CHECKING, Any

from textual.app import App

from ..protocol import (
    ApprovalRequested,
    ApprovalResolved,
    AssistantMessage,
    CallStatus,
    CheckPayload,
    CheckStarted,
    Compacted,
    ErrorPayload,
    IterationStarted,
    ReplyProgress,
    StackProgress,
    Steer,
    ToolCallPayload,
    ToolResultPayload,
    ToolStartedPayload,
    TurnEnded,
    TurnStarted,
    UsagePayload,
    VerificationPayload,
)
from ..protocol.base import Payload
from ..protocol.describe import describe, progress_text
from ..text_safety import visible
from .approvals import Approvals
from .attention import Attention
from .bridge import Bridge
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
from .widgets.chat import ChatView
from .widgets.header import SessionHeader
from .widgets.status_bar import StatusBar
from .widgets.tool_card import DraftCard
from .wire import Untyped, typed

if TYPE_CHECKING:
    from ..session import Session

#: How often streamed text reaches the widgets. 50 ms: at a 1,000 tokens/s feed it gave the best
#: key latency of the variants measured (shared/reference/textual.md), and 20 updates a second
#: still reads as smooth.
COALESCE_S = 0.05

#: Decisions that leave a grant in force beyond the call: the header lists them.
GRANTING = ("approved_session", "approved_always")


def grant_shown(scope: str, lasting: bool) -> str:
    """A grant as the header lists it: a lasting rule says so (it outlives the session)."""
    return f"always: {scope}" if lasting else scope


class Router:
    """Drains the bridge and applies each item to the main screen's widgets.

    `exiting` says the app is going away; `job_done` is the app's: a finished job ends `busy`;
    `session` is the session the grants are read from."""

    def __init__(
        self,
        app: App[Any],
        bridge: Bridge,
        plan: PlanFeed,
        approvals: Approvals,
        job_done: Callable[[JobDone], None],
        exiting: Callable[[], bool],
        session: Callable[[], Session | None],
        attention: Attention | None = None,
    ) -> None:
        self.app = app
        self.bridge = bridge
        self.plan = plan
        self.approvals = approvals
        self._job_done = job_done
        self._exiting = exiting
        self._session = session  # the runner's, once built (None while it starts)
        self._attention = attention  # rings the person when a long turn ends
        self._last_drain = 0.0
        self._drain_timer: Any = None
        self._draft: DraftCard | None = None  # the call being written, until its card comes
        self._said_error = ""  # this turn's last error on screen (describe.turn_ended_line)

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
                if state == CallStatus.RUNNING:
                    status.tool_running(name)
            case ToolResultPayload():
                card = chat.card(payload.call_id)
                if card is not None:
                    card.show_result(payload)
            case ApprovalRequested():
                chat.card_status(payload.call_id, CallStatus.WAITING)
                status.approval_asked(payload.request_id)
                self.approvals.ask(payload)
            case ApprovalResolved(call_id=call_id, decision=decision, request_id=request_id):
                denied = decision.startswith("denied") or decision == "stopped"
                chat.card_status(call_id, CallStatus.DENIED if denied else CallStatus.RUNNING)
                self.approvals.drop(request_id)
                status.approval_resolved(request_id)
                if decision in GRANTING and payload.scope:  # the policy's words
                    self.header.grant(grant_shown(payload.scope, decision == "approved_always"))
            case UsagePayload():
                self.draft(None)
                status.usage(payload)
            case Steer(text=text):
                chat.user(text, "steer")
            case AssistantMessage():
                chat.settle()
            case IterationStarted(iteration=iteration):
                status.iteration_started(iteration)
            case StackProgress():
                chat.provision(progress_text(payload.stage, payload.fraction, payload.line))
            case Untyped():
                self.untyped(payload)
            case _:
                self.said(payload)

    def said(self, payload: Payload) -> None:
        """Every other event is a line in the chat: protocol/describe.py's, the same line the
        headless transcript prints. Some also move the status bar."""
        chat, status = self.chat, self.status
        match payload:
            case ErrorPayload(message=message):
                self._said_error = message
            case TurnEnded():
                self.draft(None)
                chat.settle()
                status.turn_ended(payload)
                if self._attention is not None:
                    self._attention.turn_ended()
            case Compacted():
                status.context(payload.tokens_after, payload.n_ctx)
            case VerificationPayload():
                status.verification(payload.state)
            case CheckStarted(command=command):
                status.check_started(command)
            case CheckPayload():
                status.check_ended()
        line = describe(payload, self._said_error)
        if line is not None and line[0]:
            chat.notice(*line)
        if isinstance(payload, TurnEnded):
            self._said_error = ""
            # A full collection when the turn is over, not mid-stream: pruned widgets are
            # cyclic garbage, and with collection deferred (tune_gc) 150 turns held ~100 MB.
            self.app.call_after_refresh(gc.collect)

    def screen_changed(self, screen: object) -> None:
        if screen is self.app.screen_stack[0]:  # back from the palette, where grants are revoked
            self.grants()

    def grants(self) -> None:
        """The grants in force as the session holds them, read when the engine is idle (ready,
        a job done, the palette closed): revoked ones go, a resumed session's appear."""
        session = self._session()
        if session is None:
            return
        try:
            scopes = [visible(str(scope)) for _, scope in session.session_grants()]
            # The workspace's "always" rules are in force too (found: the header dropped one
            # given in the dialog as soon as the turn ended, keeping the session's only).
            lasting = session.lasting_rules()
            scopes += [grant_shown(visible(str(s)), True) for _, s, d in lasting if d == "allow"]
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
        """An event outside the protocol, or whose payload does not fit its model (a log from
        another version): said, never dropped without a word."""
        if event.problem:
            self.chat.notice(f"{event.type}: {event.problem}", "warning")
