"""Running one reply's tool calls: declare, decide at the boundary, execute, report in order."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from ..protocol import EventType, ToolResultPayload
from ..tools.base import RetryClass, ToolError, ToolResult, clean_text, display_path
from .approver import ApprovalDecision, ApprovalRequest, resolved_event
from .schedule import ToolExecution, schedule

if TYPE_CHECKING:
    from ..hooks import TurnContext
    from .engine import Engine


@dataclass
class Executed:
    ex: ToolExecution
    result: ToolResult
    status: str  # done | failed | denied
    stop: bool = False  # the person pressed Esc: stop the turn


def describe_validation(exc: ValidationError) -> str:
    parts = []
    for err in exc.errors():
        loc = ".".join(str(x) for x in err["loc"]) or "arguments"
        parts.append(f"{loc}: {err['msg']}")
    return "; ".join(parts)


class Dispatcher:
    def __init__(self, engine: Engine) -> None:
        self.e = engine

    def verdict(self, ex: ToolExecution) -> Any:
        if self.e.policy is None or ex.declared is None:
            return None
        return self.e.policy.evaluate(ex.name, ex.declared)

    def run_all(self, execs: list[ToolExecution], ctx: TurnContext | None = None) -> list[Executed]:
        verdicts = {ex.index: self.verdict(ex) for ex in execs}
        batches = schedule(
            execs,
            max_parallel=4,
            needs_approval=lambda ex: getattr(verdicts.get(ex.index), "action", "allow") == "ask",
        )
        done: dict[int, Executed] = {}
        for batch in batches:
            if self.e.cancelled:
                for ex in batch:
                    done[ex.index] = Executed(ex, ToolResult(False, "not run: the turn was interrupted"), "failed")
                continue
            if len(batch) == 1:
                ex = batch[0]
                done[ex.index] = self.run_one(ex, verdicts.get(ex.index), ctx=ctx)
            else:
                with ThreadPoolExecutor(max_workers=len(batch)) as pool:
                    futs = {ex.index: pool.submit(self.run_one, ex, verdicts.get(ex.index), ctx=ctx) for ex in batch}
                    for idx, fut in futs.items():
                        done[idx] = fut.result()
            if any(d.stop for d in done.values()):
                break
        return [done[ex.index] for ex in sorted(execs, key=lambda x: x.index) if ex.index in done]

    def judge_now(self, ex: ToolExecution, verdict: Any) -> Any:
        """The verdict on what the call will touch NOW, after the calls before it in the reply ran.

        Found by probing: one reply of `bash: ln -s /anywhere d` then `write_file d/x` was judged
        whole before anything ran, so the write was "inside" when judged and outside when done.
        The declaration is taken again (its realpaths see the new link) and judged again; the
        file tools then open what was judged without following a link (workspace/beneath.py)."""
        tool = self.e.registry.get(ex.name)
        if tool is None or ex.declared is None or ex.error is not None:
            return verdict
        try:
            ex.declared = tool.declare(tool.Args.model_validate(ex.arguments), self.e.tool_context())
        except (ValidationError, ToolError, OSError, ValueError):
            return verdict
        return self.verdict(ex)

    def run_one(self, ex: ToolExecution, verdict: Any, *, grant: Any = None, ctx: TurnContext | None = None) -> Executed:
        e = self.e
        if ex.error is not None:
            return self._finish(ex, ToolResult(False, ex.error, error_class=RetryClass.ARGS), "failed")
        verdict = self.judge_now(ex, verdict)
        if ctx is not None:
            # A hook may refuse a call before it runs (serving on the model's own port): the
            # refusal is the result the model reads, and nothing is asked or executed.
            for h in e.hooks:
                refusal = h.before_tool(ctx, ex.name, ex.arguments)
                if refusal is not None:
                    return self._finish(ex, ToolResult(False, refusal, error_class=RetryClass.ARGS), "denied")
        if verdict is not None and verdict.action == "deny":
            e.bus.emit(EventType.APPROVAL_RESOLVED, {"request_id": "", "call_id": ex.call_id, "decision": "denied", "reason": verdict.reason, "by": "policy"})
            return self._finish(ex, ToolResult(False, f"denied by policy: {verdict.reason}"), "denied")
        if verdict is not None and verdict.action == "ask":
            decision = self._ask(ex, verdict)
            if decision.decision == "stopped":
                return self._stopped(ex)
            if not decision.approved:
                why = f": {decision.reason}" if decision.reason else ""
                text = f"the person denied this call{why}"
                if decision.by == "timeout":
                    text = f"denied: no answer from the person ({decision.reason})"
                return self._finish(ex, ToolResult(False, text), "denied")
            if decision.decision == "approved_session":
                e.policy.grant_session(verdict)
        if verdict is not None and verdict.grant is not None:
            # On `allow` too: a session grant or the network the person granted is room the
            # command must actually get (found: both were accepted, then not applied).
            grant = verdict.grant
        return self._execute(ex, grant)

    def _stopped(self, ex: ToolExecution) -> Executed:
        done = self._finish(ex, ToolResult(False, "denied: the person stopped the turn"), "denied")
        done.stop = True
        return done

    def _ask(self, ex: ToolExecution, verdict: Any) -> ApprovalDecision:
        e = self.e
        d = ex.declared
        paths = [display_path(e.workspace, p) for p in (d.writes if d else [])]
        summary = (d.command if d and d.command else ", ".join(paths)) or ex.name
        req = ApprovalRequest(
            call_id=ex.call_id,
            tool=ex.name,
            summary=summary,
            reason=verdict.reason,
            paths=paths,
            diff=e.preview_diff(ex),
            scope=getattr(verdict, "scope", ""),
        )
        e.emit_tool_status(ex, "waiting")
        decision = e.approver.approve(req)
        resolved_event(e.bus, req, decision)
        return decision

    def _execute(self, ex: ToolExecution, grant: Any, *, rerun: bool = False) -> Executed:
        e = self.e
        tool = e.registry.get(ex.name)
        assert tool is not None
        ctx = e.tool_context(grant)
        if tool.mutates and e.undo_log is not None and ex.declared is not None:
            try:
                if ex.name == "bash":
                    e.undo_log.command_ran(e.bus.turn_id)
                else:
                    e.undo_log.before_write(e.bus.turn_id, ex.declared.writes)
            except OSError as exc:  # bookkeeping must not stop the work; say undo is weaker
                e.bus.emit(EventType.NOTICE, {"text": f"undo will not cover this call: {exc}"})
        e.emit_tool_status(ex, "running")
        started = time.monotonic()
        result = self._invoke(tool, ex, ctx)
        if result.error_class == RetryClass.TRANSIENT and ex.name != "bash" and not e.cancelled:
            # The world was briefly wrong (a file mid-rename, a busy resource): one quiet retry
            # before the model is bothered. Commands are never re-run behind the model's back.
            e.sleep(0.2)
            result = self._invoke(tool, ex, ctx)
        result.meta.setdefault("duration_ms", (time.monotonic() - started) * 1000)
        if not result.ok:
            result.output = shape_failure(result, retried=ex.name != "bash")
        if not result.ok and not rerun and ex.name == "bash" and e.policy is not None and ex.declared is not None:
            # Put to the person once: a rerun that is refused again is the answer, not a new question.
            retry = e.policy.after_failure(ex.name, ex.declared, result.exit_code, result.output) if hasattr(e.policy, "after_failure") else None
            if retry is not None:
                decision = self._ask(ex, retry)
                if decision.approved:
                    if decision.decision == "approved_session":
                        e.policy.grant_session(retry)
                    return self._execute(ex, retry.grant, rerun=True)
        return self._finish(ex, result, "done" if result.ok else "failed")

    def _invoke(self, tool: Any, ex: ToolExecution, ctx: Any) -> ToolResult:
        result = self._invoke_raw(tool, ex, ctx)
        result.output = clean_text(result.output)
        if result.diff is not None:
            result.diff = clean_text(result.diff)
        return result

    def _invoke_raw(self, tool: Any, ex: ToolExecution, ctx: Any) -> ToolResult:
        try:
            return tool.run(tool.Args.model_validate(ex.arguments), ctx)
        except ValidationError as exc:
            return ToolResult(False, f"invalid arguments for {ex.name}: {describe_validation(exc)}", error_class=RetryClass.ARGS)
        except ToolError as exc:
            return ToolResult(False, str(exc), error_class=exc.retry_class)
        except OSError as exc:
            return ToolResult(False, f"{ex.name} failed: {exc.strerror or exc}", error_class=RetryClass.TRANSIENT)
        except Exception as exc:  # a tool bug must not kill the turn; the model and person see it
            return ToolResult(False, f"{ex.name} crashed: {type(exc).__name__}: {exc}", error_class=RetryClass.TRANSIENT)

    def _finish(self, ex: ToolExecution, result: ToolResult, status: str) -> Executed:
        return Executed(ex, result, status)


def shape_failure(result: ToolResult, retried: bool) -> str:
    """The retry class shapes what the model reads: fix the call, or the world was briefly wrong.
    A command's own failure (a non-zero exit) is its output; it needs no preamble."""
    if result.exit_code is not None:
        return result.output
    if result.error_class == RetryClass.ARGS:
        return f"Error (fix the call): {result.output}"
    if result.error_class == RetryClass.TRANSIENT:
        again = "retried once; " if retried else ""
        return f"Error (transient, {again}the same call may work later): {result.output}"
    return result.output


def publish_result(e: Engine, done: Executed, shown: str) -> None:
    r = done.result
    e.bus.emit(
        EventType.TOOL_RESULT,
        ToolResultPayload(
            call_id=done.ex.call_id,
            name=done.ex.name,
            ok=r.ok,
            output=shown,
            error_class=str(r.error_class) if r.error_class else None,
            exit_code=r.exit_code,
            diff=r.diff,
            duration_ms=float(r.meta.get("duration_ms", 0.0)),
            status=done.status,  # type: ignore[arg-type]
            wrote=[display_path(e.workspace, p) for p in r.wrote],
        ),
    )
