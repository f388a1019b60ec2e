"""The Approver for a turn driven over ACP: each crossing is put to the client as
`session/request_permission`, with our scopes as its options, and its answer is our decision.

The seam is the headless runner's and the TUI's (loop/approver.py's `Approver`): the policy
decides what asks, the dispatcher acts on the decision; only who answers differs. The options,
narrowest first: allow once; one "allow for this session" per scope the policy offers (the
exact command, the program to one host, the program; the file, its folder); deny; never in this
workspace (a lasting rule, as the TUI's `N`). ACP's answer carries an option id and nothing else,
so what the client cannot say is said in the turn instead (a notice on the bus, which the client
gets as a line of the answer): a request nobody answered within the timeout, an answer that names
no option we offered. Denying on timeout is this approver's job, as it is BusApprover's: the same
`approval_timeout_s`, then denied. A cancel (session/cancel, the engine's `cancel_all`) stops the
waiting request at once; the client's own `cancelled` outcome stops the turn as Esc does.
"""

from __future__ import annotations

import concurrent.futures
import threading
from collections.abc import Callable
from dataclasses import dataclass

from acp import schema as S

from ..bus import Emitter
from ..loop.approver import ApprovalDecision, ApprovalRequest, Decision, requested
from ..protocol import NoticePayload
from ..text_safety import visible, visible_data
from .updates import diff_contents, fenced, kind_of

#: Asks the client (on the connection's loop) and returns the answer as a future the engine's
#: thread can wait on; cancelling the future withdraws the request.
Ask = Callable[
    [S.ToolCallUpdate, list[S.PermissionOption]],
    "concurrent.futures.Future[S.RequestPermissionResponse]",
]


CLIENT_CANCELLED = "cancelled by the client"


@dataclass(frozen=True)
class Choice:
    option: S.PermissionOption
    decision: Decision
    scope_key: str = ""


def choices_for(req: ApprovalRequest) -> list[Choice]:
    """Our answers as ACP options, narrowest first; each option id names what it decides."""
    scopes = list(req.choices) or [("", req.scope or req.summary)]
    default = next((k for k, label in scopes if label == req.scope), scopes[-1][0])
    out = [
        Choice(
            S.PermissionOption(option_id="once", name="Allow once", kind="allow_once"), "approved"
        )
    ]
    for i, (key, label) in enumerate(scopes):
        out.append(
            Choice(
                S.PermissionOption(
                    option_id=f"session-{i}",
                    name=visible(f"Allow for this session: {label}"),
                    kind="allow_always",
                ),
                "approved_session",
                key,
            )
        )
    out.append(
        Choice(S.PermissionOption(option_id="deny", name="Deny", kind="reject_once"), "denied")
    )
    never = dict(scopes).get(default, req.scope)
    out.append(
        Choice(
            S.PermissionOption(
                option_id="never",
                name=visible(f"Never in this workspace: {never}"),
                kind="reject_always",
            ),
            "denied_always",
            default,
        )
    )
    return out


def tool_call_of(req: ApprovalRequest, workspace: str) -> S.ToolCallUpdate:
    """What the client shows in its dialog: the call, why it asks, and the diff it would write."""
    from pathlib import Path

    content: list[
        S.ContentToolCallContent | S.FileEditToolCallContent | S.TerminalToolCallContent
    ] = [
        S.ContentToolCallContent(
            type="content", content=S.TextContentBlock(type="text", text=visible(req.reason))
        )
    ]
    if req.diff:
        diffs = diff_contents(req.diff, Path(workspace))
        content.extend(
            diffs
            or [
                S.ContentToolCallContent(
                    type="content",
                    content=S.TextContentBlock(type="text", text=fenced(visible(req.diff))),
                )
            ]
        )
    return S.ToolCallUpdate(
        tool_call_id=req.call_id,
        title=visible(f"{req.tool}: {req.summary}"),
        kind=kind_of(req.tool),
        status="pending",
        content=content,
        raw_input=visible_data({"paths": req.paths, "scope": req.scope}),
    )


class ClientApprover:
    """Asks the ACP client; waits at most `timeout_s`; `cancel_all` ends every wait."""

    def __init__(self, ask: Ask, bus: Emitter, workspace: str, timeout_s: float = 120.0) -> None:
        self.ask = ask
        self.bus = bus
        self.workspace = workspace
        self.timeout_s = timeout_s
        self._lock = threading.Lock()
        self._pending: dict[str, concurrent.futures.Future[ApprovalDecision]] = {}
        #: Called when the client itself stopped at a dialog (ACP's `cancelled` outcome): the
        #: turn stops as at the TUI's Esc, and the calls queued behind it do not ask again.
        self.on_stop: Callable[[], None] | None = None

    def approve(self, req: ApprovalRequest) -> ApprovalDecision:
        choices = choices_for(req)
        slot: concurrent.futures.Future[ApprovalDecision] = concurrent.futures.Future()
        with self._lock:
            self._pending[req.request_id] = slot
        self.bus.emit(requested(req, self.timeout_s))  # as the TUI's: the log holds it
        asked = self.ask(tool_call_of(req, self.workspace), [c.option for c in choices])
        asked.add_done_callback(lambda f: _settle(slot, _decision(f, choices)))
        try:
            decision = slot.result(timeout=self.timeout_s)
        except concurrent.futures.TimeoutError:
            decision = ApprovalDecision(
                "denied", f"no answer within {self.timeout_s:g} s", by="timeout"
            )
            _settle(slot, decision)
            decision = slot.result()
        finally:
            with self._lock:
                self._pending.pop(req.request_id, None)
            asked.cancel()  # answered, timed out or stopped: the request is withdrawn
        if decision.reason == CLIENT_CANCELLED and self.on_stop is not None:
            self.on_stop()
        if decision.by == "timeout" or decision.reason.startswith("the client"):
            self.bus.emit(
                NoticePayload(
                    text=f"{req.tool} {req.summary}: denied, {decision.reason}",
                    level="warning",
                    source="acp",
                )
            )
        return decision

    def cancel_all(self, reason: str = "interrupted") -> None:
        with self._lock:
            slots = list(self._pending.values())
        for slot in slots:
            _settle(slot, ApprovalDecision("stopped", reason, by="person"))

    @property
    def pending(self) -> list[str]:
        with self._lock:
            return list(self._pending)


def _settle(slot: concurrent.futures.Future[ApprovalDecision], d: ApprovalDecision) -> None:
    try:
        slot.set_result(d)
    except concurrent.futures.InvalidStateError:
        pass  # decided first by another: the timeout, a cancel, the client


def _decision(
    answered: concurrent.futures.Future[S.RequestPermissionResponse], choices: list[Choice]
) -> ApprovalDecision:
    if answered.cancelled():
        return ApprovalDecision("stopped", "the request was withdrawn", by="person")
    exc = answered.exception()
    if exc is not None:  # the client hung up or answered an error
        return ApprovalDecision("denied", f"the client could not answer ({exc})", by="person")
    outcome = answered.result().outcome
    if isinstance(outcome, S.DeniedOutcome):  # ACP's "cancelled": the client stopped the turn
        return ApprovalDecision("stopped", CLIENT_CANCELLED, by="person")
    for c in choices:
        if c.option.option_id == outcome.option_id:
            return ApprovalDecision(c.decision, by="person", scope_key=c.scope_key)
    return ApprovalDecision(
        "denied", f"the client answered {outcome.option_id!r}, an option never offered", by="person"
    )
