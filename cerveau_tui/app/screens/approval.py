"""The approval modal: the loop asked the Approver; the person decides.

Keys never change meaning between dialogs: y approve once, a approve for this session, A always
in this workspace, N never in this workspace (each for the scope chosen with 1-5, narrowest
first, spelled out; the same key again, alone, confirms it: approval_scopes.py), n deny (type a
reason, Enter), Esc deny and stop the turn. A key answers only when pressed on its own (armed.py): quiet before it and after it;
keys that were typing go to the prompt, so a person typing a steering message, however long the
dialog has been up, neither approves anything nor loses a letter. Requests queue: the screen
shows one at a time and re-arms for each one that reaches the head.

ONE countdown: the approver's (loop/approver.py). It starts when a request is first shown here
(`shown`, which also rings the person: attention.py) and this screen only displays it; when the
approver has given up on a request (its timeout, an interrupt), the screen drops it.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.widgets import Input, Static

from ...loop.approver import ApprovalDecision, Countdown
from ..widgets.diff_view import DiffView
from .approval_scopes import (
    BROAD,
    MAX_CHOICES,
    ScopeChoices,
    confirm_content,
    keys_content,
    resolved_line,
)
from .armed import QUIET_S, TICK_S, ArmedModal, KeySink, Say

Resolve = Callable[[str, ApprovalDecision], object]
Shown = Callable[[dict[str, Any]], object]


class ApprovalScreen(ArmedModal[None]):
    CSS_PATH = Path(__file__).with_suffix(".tcss")
    # Under 32 rows the diff gets less room (approval.tcss `-short`), so the question, the diff
    # and the pinned keys and countdown all fit in a 24-row terminal.
    VERTICAL_BREAKPOINTS = [(0, "-short"), (32, "-tall")]
    BINDINGS = [
        Binding("y", "decide('approved')", "Approve once", id="approval.approve"),
        Binding("a", "decide('approved_session')", "Approve for session", id="approval.session"),
        # A lasting rule for this workspace (policy/rules_store.py); confirmed like `a`.
        Binding("A", "decide('approved_always')", "Always here", id="approval.always"),
        # A lasting "never" for this workspace (deny before allow: policy/grants.py); confirmed.
        Binding("N", "decide('denied_always')", "Never here", id="approval.never"),
        Binding("n", "deny_with_reason", "Deny", id="approval.deny"),
        Binding("escape", "decide('stopped')", "Deny and stop", id="approval.stop"),
        # Which scope a / A / N are for; a number is an answer like the others (pressed alone).
        *(
            Binding(str(i + 1), f"choose({i})", f"Scope {i + 1}", id=f"approval.scope{i + 1}")
            for i in range(MAX_CHOICES)
        ),
    ]

    def __init__(
        self,
        resolve: Resolve,
        clock: Callable[[], float],
        quiet_s: float = QUIET_S,
        sink: KeySink | None = None,
        *,
        countdown: Countdown | None = None,
        shown: Shown | None = None,
        say: Say | None = None,
    ) -> None:
        super().__init__(clock, sink, quiet_s, say=say, id="approval")
        self._resolve = resolve
        self._countdown = countdown
        self._on_shown = shown
        self._shown: set[str] = set()  # request ids the person was shown (and rung for)
        self.queue: list[dict[str, Any]] = []
        self.closing = False
        self.decisions: list[tuple[str, ApprovalDecision]] = []  # what this screen resolved
        self._chosen: dict[str, int] = {}  # request id -> the scope the person picked

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static(id="head", markup=False)
            yield Static(id="subject", markup=False)
            with VerticalScroll(id="diff", classes="-empty"):
                pass
            yield Static(id="paths", markup=False)
            # Docked at the dialog's bottom (approval.tcss): on a 24-row terminal a long diff
            # pushed the keys and the countdown out of the dialog; the diff scrolls instead.
            with Vertical(id="answer"):
                yield Static(id="keys", markup=False)
                # Filled at compose, not only on mount: the nesting made a window in which the
                # dialog was up with an empty countdown.
                yield Static(self.countdown_text(), id="countdown", markup=False)
                yield Input(placeholder="why not? (Enter denies; empty is fine)", id="reason")

    def on_mount(self) -> None:
        self._show_head()
        self.set_interval(TICK_S, self.tick)

    # --- the queue ---------------------------------------------------------------------------
    @property
    def current(self) -> dict[str, Any] | None:
        return self.queue[0] if self.queue else None

    def add(self, request: dict[str, Any]) -> None:
        self.queue.append(dict(request))
        if len(self.queue) == 1:
            self.rearm()
        if self.is_mounted:
            self._show_head()

    def drop(self, request_id: str) -> None:
        """A request ended elsewhere (the approver's own timeout, an interrupt)."""
        head = self.current
        self.queue = [r for r in self.queue if r.get("request_id") != request_id]
        if head is not None and head.get("request_id") == request_id:
            self._next()
        elif self.is_mounted:
            self._show_head()

    def _next(self) -> None:
        self.remove_class("-reason")
        self.query_one("#reason", Input).value = ""
        if not self.queue:
            self.closing = True  # a request arriving now needs a new screen, not this one
            self.dismiss(None)
            return
        self.rearm()  # a different question: what was typed for the last one must not answer it
        self._show_head()

    # --- decisions -----------------------------------------------------------------------------
    def on_armed(self) -> None:
        diff = self.query_one("#diff", VerticalScroll)
        if not diff.has_class("-empty"):
            diff.focus()  # so the arrow keys scroll a long diff

    def taking_text(self) -> bool:
        return self.has_class("-reason")  # after `n`: the keys are the reason's

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # While a reason is typed, y/a/n are letters of the reason; only Esc keeps its meaning.
        if self.has_class("-reason") and action == "deny_with_reason":
            return False
        if self.has_class("-reason") and action == "decide" and parameters != ("stopped",):
            return False
        if action == "choose":
            # A number the dialog does not offer is typing, not an answer (it goes to the prompt).
            choices = self.choices()
            index = parameters[0] if parameters else -1
            return (
                not self.has_class("-reason")
                and choices.several
                and (isinstance(index, int) and index < len(choices.options))
            )
        return True

    # --- the scope chosen ----------------------------------------------------------------------
    def changes_question(self, key: str) -> bool:
        return key.isdigit()

    def choices(self) -> ScopeChoices:
        return ScopeChoices.of(self.current or {})

    def chosen(self) -> int:
        head = self.current or {}
        return self._chosen.get(str(head.get("request_id", "")), self.choices().default)

    def action_choose(self, index: int) -> None:
        head = self.current
        if head is None or not self.armed or index >= len(self.choices().options):
            return
        self._chosen[str(head.get("request_id", ""))] = index
        self.show_keys()

    def on_screen_resume(self) -> None:
        super().on_screen_resume()
        self._ring()

    def _ring(self) -> None:
        """The head is on screen: the approver's countdown starts now, and the person is rung."""
        head = self.current
        if head is None or not self.on_screen:
            return
        rid = str(head.get("request_id", ""))
        if rid in self._shown:
            return
        self._shown.add(rid)
        if self._on_shown is not None:
            self._on_shown(head)
        self._show_countdown()

    def action_decide(self, decision: str, reason: str = "") -> None:
        head = self.current
        if head is None or not self.armed:
            return
        choices, chosen = self.choices(), self.chosen()
        scope = choices.label(chosen)
        # Confirmed per scope: `a`, then `2`, then `a` is a new question, not its confirmation.
        if decision in BROAD and not self.confirmed(
            f"{decision}:{chosen}", confirm_content(decision, scope)
        ):
            return
        if decision == "stopped" and not reason:
            outside = bool(head.get("outside_turn"))
            reason = "not run: stopped at its dialog" if outside else "the person stopped the turn"
        if decision == "denied_always" and not reason:
            reason = f"the person never allows this here ({scope})"
        self._finish(
            ApprovalDecision(decision, reason, by="person", scope_key=choices.key(chosen)),  # type: ignore[arg-type]
            scope,
        )

    def action_deny_with_reason(self) -> None:
        if self.current is None or not self.armed:
            return
        self.add_class("-reason")
        self.query_one("#reason", Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self._finish(ApprovalDecision("denied", event.value.strip(), by="person"))

    def _finish(self, decision: ApprovalDecision, scope: str = "") -> None:
        head = self.queue.pop(0)
        rid = str(head.get("request_id", ""))
        self.decisions.append((rid, decision))
        self._resolve(rid, decision)
        line = resolved_line(head, decision, scope)
        if self.say is not None and line is not None:
            self.say(*line)
        self._next()

    def tick(self) -> None:
        head = self.current
        if head is None:
            return
        if self._countdown is not None and self._countdown.seconds_left(head["request_id"]) is None:
            self.drop(str(head["request_id"]))  # the approver gave up on it (timeout, interrupt)
            return
        self.tick_arming()
        self._show_countdown()

    def seconds_left(self) -> float | None:
        head = self.current
        if head is None or self._countdown is None:
            return None
        return self._countdown.seconds_left(str(head.get("request_id", "")))

    # --- rendering -----------------------------------------------------------------------------
    def _show_head(self) -> None:
        head = self.current
        if head is None:
            return
        more = f"  (1 of {len(self.queue)})" if len(self.queue) > 1 else ""
        self.query_one("#head", Static).update(
            Content.assemble(
                (
                    "A question for you"
                    if head.get("tool") == "question"
                    else f"Allow {head.get('tool', '?')}?",
                    "bold $text-warning",
                ),
                (more, "$text-muted"),
                "\n",
                (str(head.get("reason") or "it crosses the boundary"), ""),
            )
        )
        summary = str(head.get("summary") or "")
        prefix = "$ " if head.get("tool") == "bash" else ""
        self.query_one("#subject", Static).update(Content(prefix + summary))
        box = self.query_one("#diff", VerticalScroll)
        box.remove_children()
        diff = head.get("diff")
        box.set_class(not diff, "-empty")
        if diff:
            box.mount(DiffView(str(diff)))
        paths = head.get("paths") or []
        self.query_one("#paths", Static).update(
            Content("paths: " + ", ".join(paths)) if paths else ""
        )
        self.show_keys()
        self._ring()
        self._show_countdown()

    def keys_content(self) -> Content:
        head = self.current or {}
        return keys_content(self.choices(), self.chosen(), bool(head.get("outside_turn")))

    def countdown_text(self) -> str:
        left = self.seconds_left()
        return "" if left is None else f"denies automatically in {max(0, math.ceil(left))} s"

    def _show_countdown(self) -> None:
        self.query_one("#countdown", Static).update(self.countdown_text())
