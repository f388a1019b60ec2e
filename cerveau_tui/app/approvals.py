"""The approvals queue on the app side: one approval screen at a time, requests queued on it.

The loop's BusApprover blocks the engine thread until `resolve`; the screen (screens/approval.py)
shows the head of its queue and calls back here with the person's decision. When a request is
first on screen, the approver's one countdown starts and the person is rung (attention.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from textual.app import App

from ..loop.approver import ApprovalDecision, BusApprover
from ..protocol import ApprovalRequested
from .attention import Attention
from .widgets.chat import ChatView
from .widgets.prompt import PromptInput

if TYPE_CHECKING:
    from .screens.approval import ApprovalScreen


class Approvals:
    def __init__(
        self,
        app: App[int],
        approver: BusApprover,
        clock: Callable[[], float],
        quiet_s: float,
        interrupt: Callable[[], None],
        attention: Attention | None = None,
    ) -> None:
        self._app = app
        self._approver = approver
        self._clock = clock
        self._quiet_s = quiet_s
        self._interrupt = interrupt
        self._attention = attention
        self.screen: ApprovalScreen | None = None

    @property
    def _prompt(self) -> PromptInput:
        # The base screen's: `app.query_one` searches the active screen, a dialog while one is up.
        return self._app.screen_stack[0].query_one(PromptInput)

    def ask(self, request: ApprovalRequested) -> None:
        screen = self.screen
        if screen is None or screen.closing:
            # Imported with the first request: the screen and its diff and scope views cost the
            # first frame ~30 ms, and many sessions never ask.
            from .screens.approval import ApprovalScreen

            screen = ApprovalScreen(
                self.resolve,
                self._clock,
                self._quiet_s,
                sink=self._prompt,
                countdown=self._approver,
                shown=self.shown,
                say=self._say,
            )
            self.screen = screen
            screen.add(request.model_dump())
            self._app.push_screen(screen, lambda _: self._closed(screen))
        else:
            screen.add(request.model_dump())

    def drop(self, request_id: str) -> None:
        """The request ended elsewhere (the approver's timeout, an interrupt, a policy denial)."""
        if self.screen is not None:
            self.screen.drop(request_id)

    def shown(self, request: dict[str, Any]) -> None:
        self._approver.notified(str(request.get("request_id", "")))
        if self._attention is not None:
            self._attention.waiting(request)

    def _say(self, text: str, level: str) -> None:
        self._app.screen_stack[0].query_one(ChatView).notice(text, level)

    def resolve(self, request_id: str, decision: ApprovalDecision) -> None:
        self._approver.resolve(request_id, decision)
        if decision.decision == "stopped":
            # Esc means "deny and stop the turn": the dispatcher stops on this decision, and
            # the engine is told too so queued calls of the same round do not ask again.
            self._interrupt()

    def _closed(self, screen: ApprovalScreen) -> None:
        if self.screen is screen:
            self.screen = None
            # A dialog that closes while the app tears down finds the main screen's widgets gone
            # (seen under load: NoMatches from a countdown's denial at exit); nothing to focus.
            prompts = self._app.screen_stack[0].query(PromptInput)
            if prompts:
                prompts.first().focus()
