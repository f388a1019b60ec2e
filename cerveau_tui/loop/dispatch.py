"""Running one reply's tool calls: decide at the boundary, execute, report in order.

Each call is one ToolExecution, declared and validated once by the turn; the dispatcher fills in
its verdict, status and result. Its collaborators are handed in (the engine builds one per turn),
so nothing here reaches into another object's private state.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

from pydantic import ValidationError

from ..hooks import Hook, TurnContext
from ..policy.judge import Judge
from ..policy.verdict import Verdict
from ..protocol import CallStatus
from ..sandbox.base import Grant
from ..tools.base import RetryClass, Tool, ToolContext, ToolError, ToolResult, clean_text
from ..tools.registry import Registry
from .approver import ApprovalDecision, ApprovalRequest, Approver, resolved_event
from .events import TurnEvents
from .schedule import ToolExecution, schedule
from .state import EngineState

MAX_PARALLEL = 4

ToolContextFactory = Callable[[Grant | None], ToolContext]


def describe_validation(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors():
        loc = ".".join(str(x) for x in err["loc"]) or "arguments"
        parts.append(f"{loc}: {err['msg']}")
    return "; ".join(parts)


class Dispatcher:
    def __init__(
        self,
        *,
        registry: Registry,
        judge: Judge | None,
        approver: Approver,
        events: TurnEvents,
        hooks: Sequence[Hook],
        state: EngineState,
        tool_context: ToolContextFactory,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.registry = registry
        self.judge = judge
        self.approver = approver
        self.events = events
        self.hooks = hooks
        self.state = state
        self.tool_context = tool_context
        self.sleep = sleep  # injected: a test of the transient retry should not wait
        #: What this round may not call (loop/narrow.py): set by the turn, read before the policy.
        self.refuse: Callable[[str], str | None] = lambda _name: None
        #: The person's own `!cmd` (Engine.exec): its dialog's Esc stops no turn, and "the
        #: person stopped the turn" was untrue there (issue 33).
        self.outside_turn = False

    def _stopped_text(self) -> str:
        if self.outside_turn:
            return "not run: you pressed Esc at its dialog (no turn was running)"
        return "denied: the person stopped the turn"

    def verdict(self, ex: ToolExecution) -> Verdict | None:
        if self.judge is None or ex.declared is None:
            return None
        return self.judge.evaluate(ex.name, ex.declared)

    def run_all(
        self, execs: list[ToolExecution], ctx: TurnContext | None = None
    ) -> list[ToolExecution]:
        """The calls in emission order, each finished; a batch after an Esc is not run."""
        for ex in execs:
            ex.verdict = self.verdict(ex)
        batches = schedule(
            execs,
            max_parallel=MAX_PARALLEL,
            needs_approval=lambda ex: ex.verdict is not None and ex.verdict.action == "ask",
        )
        ran: list[ToolExecution] = []
        for batch in batches:
            if self.state.cancelled:
                for ex in batch:
                    ran.append(ex.finish(ToolResult(False, INTERRUPTED_UNRUN), CallStatus.FAILED))
                continue
            if len(batch) == 1:
                ran.append(self.run_one(batch[0], ctx=ctx))
            else:
                with ThreadPoolExecutor(max_workers=len(batch)) as pool:
                    futs = [pool.submit(self.run_one, ex, ctx=ctx) for ex in batch]
                    ran.extend(f.result() for f in futs)
            if any(ex.stop for ex in ran):
                break
        return sorted(ran, key=lambda x: x.index)

    def judge_now(self, ex: ToolExecution) -> Verdict | None:
        """The verdict on what the call will touch NOW, after the calls before it in the reply ran.

        Found by probing: one reply of `bash: ln -s /anywhere d` then `write_file d/x` was judged
        whole before anything ran, so the write was "inside" when judged and outside when done.
        The declaration is taken again (its realpaths see the new link) and judged again; the
        file tools then open what was judged without following a link (workspace/io/beneath.py)."""
        if ex.tool is None or ex.args is None or ex.declared is None or ex.error is not None:
            return ex.verdict
        try:
            ex.declared = ex.tool.declare(ex.args, self.tool_context(None))
        except (ToolError, OSError, ValueError):
            return ex.verdict
        return self.verdict(ex)

    def run_one(
        self, ex: ToolExecution, *, grant: Grant | None = None, ctx: TurnContext | None = None
    ) -> ToolExecution:
        if ex.error is not None:
            return ex.finish(
                ToolResult(False, ex.error, error_class=RetryClass.ARGS), CallStatus.FAILED
            )
        ex.verdict = verdict = self.judge_now(ex)
        if ctx is not None:
            # A hook may refuse a call before it runs (serving on the model's own port): the
            # refusal is the result the model reads, and nothing is asked or executed.
            for h in self.hooks:
                refusal = h.before_tool(ctx, ex.name, ex.arguments)
                if refusal is not None:
                    return ex.finish(
                        ToolResult(False, refusal, error_class=RetryClass.ARGS), CallStatus.DENIED
                    )
            # The round's narrowing (R1's read-only round, discussion mode, a withheld tool): a
            # refusal, never a changed tools list, so the server's cached prefix holds.
            refusal = self.refuse(ex.name)
            if refusal is not None:
                return ex.finish(
                    ToolResult(False, refusal, error_class=RetryClass.ARGS), CallStatus.DENIED
                )
        if verdict is not None and verdict.action == "deny":
            self.events.denied_by_policy(ex, verdict.reason)
            return ex.finish(
                ToolResult(False, f"denied by policy: {verdict.reason}"), CallStatus.DENIED
            )
        if verdict is not None and verdict.action == "ask":
            decision = self._ask(ex, verdict)
            if decision.decision == "stopped":
                ex.stop = True
                return ex.finish(ToolResult(False, self._stopped_text()), CallStatus.DENIED)
            if not decision.approved:
                return ex.finish(ToolResult(False, _denial_text(decision)), CallStatus.DENIED)
            ex.verdict = verdict = self._granted(verdict, decision)
        if verdict is not None and verdict.grant is not None:
            # On `allow` too: a session grant or the network the person granted is room the
            # command must actually get (found: both were accepted, then not applied).
            grant = verdict.grant
        return self._execute(ex, grant)

    def _granted(self, verdict: Verdict, decision: ApprovalDecision) -> Verdict:
        """The verdict with the scope the person chose, its grant given (for the session, or as a
        lasting rule of this workspace), and which yes let the call through, for its card."""
        chosen = verdict.choose(decision.scope_key)
        if self.judge is not None and decision.decision in ("approved_session", "approved_always"):
            kept = decision.decision == "approved_always" and self.judge.keep_rule(chosen, "allow")
            if not kept:  # no store (an unwritable config dir): it lasts the session
                self.judge.grant_session(chosen)
            chosen.granted_by = (
                f"{'always allowed in this workspace' if kept else 'approved for this session'}"
                f" ({chosen.scope})"
            )
        else:
            chosen.granted_by = "approved by the person, this call only"
        return chosen

    def _ask(self, ex: ToolExecution, verdict: Verdict) -> ApprovalDecision:
        d = ex.declared
        # What the yes makes writable, not the workspace root a command declares (found: a write
        # outside the workspace asked with `paths: .`).
        root = self.events.workspace
        room = list(verdict.grant.extra_writable) if verdict.grant is not None else []
        named = [p for p in (d.writes if d else []) if p != root and p not in room]
        paths = self.events.shown([*room, *named])
        # A command, else what an action names (an MCP call's server/tool), else the paths.
        said = d.command or (d.action.summary if d.action else None) if d else None
        summary = (said or ", ".join(paths)) or ex.name
        req = ApprovalRequest(
            call_id=ex.call_id,
            tool=ex.name,
            summary=summary,
            reason=verdict.reason,
            paths=paths,
            diff=self._preview(ex),
            scope=verdict.scope,
            choices=list(verdict.choices),
            outside_turn=self.outside_turn,
        )
        self.events.status(ex, CallStatus.WAITING)
        decision = self.approver.approve(req)
        lasting = ("approved_session", "approved_always", "denied_always")
        scope = verdict.choose(decision.scope_key).scope if decision.decision in lasting else ""
        resolved_event(self.events.bus, req, decision, scope)
        if decision.decision == "denied_always" and self.judge is not None:
            self.judge.keep_rule(verdict.choose(decision.scope_key), "deny")
        return decision

    def _preview(self, ex: ToolExecution) -> str | None:
        if ex.tool is None or ex.args is None:
            return None
        return ex.tool.preview(ex.args, self.tool_context(None))

    def _execute(
        self, ex: ToolExecution, grant: Grant | None, *, rerun: bool = False
    ) -> ToolExecution:
        tool = ex.tool
        assert tool is not None, "a call without a tool carries an error and never executes"
        ctx = self.tool_context(grant)
        self.events.status(ex, CallStatus.RUNNING)
        started = time.monotonic()
        result = self._invoke(tool, ex, ctx)
        if (
            result.error_class == RetryClass.TRANSIENT
            and not tool.runs_command
            and not self.state.cancelled
        ):
            # The world was briefly wrong (a file mid-rename, a busy resource): one quiet retry
            # before the model is bothered. Commands are never re-run behind the model's back.
            self.sleep(0.2)
            result = self._invoke(tool, ex, ctx)
        result.meta.setdefault("duration_ms", (time.monotonic() - started) * 1000)
        if not result.ok:
            result.output = shape_failure(
                result, retried=not tool.runs_command, interrupted=self.state.cancelled
            )
        if not result.ok and not rerun and tool.runs_command:
            asked = self._approved_rerun(ex, result, grant)
            if asked is not None:
                retry, decision = asked
                if decision.approved:
                    ex.verdict = retry = self._granted(retry, decision)
                    return self._execute(ex, retry.grant, rerun=True)
                # Said as what it is: the person refused the room (found: a denied `!cmd`
                # showed as "failed" with only the sandbox's error).
                ex.stop = ex.stop or decision.decision == "stopped"
                said = (
                    self._stopped_text()
                    if decision.decision == "stopped"
                    else _denial_text(decision)
                )
                result.output = f"{said} (asked: {retry.reason})\n{result.output}"
                return ex.finish(result, CallStatus.DENIED)
        return ex.finish(result, CallStatus.DONE if result.ok else CallStatus.FAILED)

    def _approved_rerun(
        self, ex: ToolExecution, result: ToolResult, ran_with: Grant | None
    ) -> tuple[Verdict, ApprovalDecision] | None:
        """Put to the person once: a rerun that is refused again is the answer, not a new
        question; nor is a rerun with no more room than it had (found: a call approved with the
        network failed on DNS, and a second "rerun with more room?" offered the same network)."""
        if self.judge is None or ex.declared is None:
            return None
        retry = self.judge.after_failure(ex.name, ex.declared, result.exit_code, result.output)
        if retry is None or retry.grant is None or _within(retry.grant, ran_with):
            return None
        return retry, self._ask(ex, retry)

    def _invoke(self, tool: Tool, ex: ToolExecution, ctx: ToolContext) -> ToolResult:
        result = self._invoke_raw(tool, ex, ctx)
        result.output = clean_text(result.output)
        if result.diff is not None:
            result.diff = clean_text(result.diff)
        return result

    def _invoke_raw(self, tool: Tool, ex: ToolExecution, ctx: ToolContext) -> ToolResult:
        try:
            args = ex.args if ex.args is not None else tool.Args.model_validate(ex.arguments)
            return tool.run(args, ctx)
        except ValidationError as exc:
            return ToolResult(
                False,
                f"invalid arguments for {ex.name}: {describe_validation(exc)}",
                error_class=RetryClass.ARGS,
            )
        except ToolError as exc:
            return ToolResult(False, str(exc), error_class=exc.retry_class)
        except OSError as exc:
            return ToolResult(
                False, f"{ex.name} failed: {exc.strerror or exc}", error_class=RetryClass.TRANSIENT
            )
        except Exception as exc:  # a tool bug must not kill the turn; the model and person see it
            return ToolResult(
                False,
                f"{ex.name} crashed: {type(exc).__name__}: {exc}",
                error_class=RetryClass.TRANSIENT,
            )


def _within(more: Grant, had: Grant | None) -> bool:
    """True when `more` adds no room to `had`."""
    had = had or Grant()
    return (not more.network or had.network) and all(
        p in had.extra_writable for p in more.extra_writable
    )


def _denial_text(decision: ApprovalDecision) -> str:
    if decision.by == "timeout":
        return f"denied: no answer from the person ({decision.reason})"
    why = f": {decision.reason}" if decision.reason else ""
    return f"the person denied this call{why}"


#: What the model reads for a call the person's interrupt kept from running.
INTERRUPTED_UNRUN = "not run: the person interrupted the turn"


def shape_failure(result: ToolResult, retried: bool, interrupted: bool = False) -> str:
    """The retry class shapes what the model reads: fix the call, or the world was briefly wrong.
    A command's own failure (a non-zero exit) is its output; it needs no preamble. A call the
    person interrupted was not wrong: "Error (fix the call)" sent the model fixing a sound call."""
    if interrupted:
        return f"Interrupted by the person while it ran (the call itself was not wrong): {result.output}"
    if result.exit_code is not None:
        return result.output
    if result.error_class == RetryClass.ARGS:
        return f"Error (fix the call): {result.output}"
    if result.error_class == RetryClass.TRANSIENT:
        again = "retried once; " if retried else ""
        return f"Error (transient, {again}the same call may work later): {result.output}"
    return result.output
