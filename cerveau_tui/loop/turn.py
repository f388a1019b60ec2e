"""One turn, round by round. Separate from engine.py so each concept fits on a screen."""

from __future__ import annotations

import json
import uuid
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from .. import protocol as P
from ..hooks import CallRecord, Reenter, Stop, TurnContext
from ..protocol import EventType
from ..provider.types import Completion, ErrorClass, ProviderError, ToolCall, Usage
from ..tools.base import ToolError
from .approver import ApprovalRequest, resolved_event
from .dispatch import describe_validation, publish_result
from .guards.repeats import is_repeat_with_results
from .guards.text_calls import (
    extract_text_tool_calls,
    how_to_call_tools_message,
    unknown_tool_message,
)
from .guards.truncation import (
    is_truncated_tool_call,
    looks_truncated,
    truncated_call_message,
    wrong_args_message,
)
from .model_call import call_model, publish_usage
from .schedule import ToolExecution

if TYPE_CHECKING:
    from .engine import Engine, Outcome

MAX_MODEL_FAILURES = 3


class _End(Exception):
    def __init__(self, reason: str, message: str = "", extra: dict[str, Any] | None = None) -> None:
        self.reason = reason
        self.message = message
        self.extra = extra or {}


def run_turn(e: Engine, task: str) -> Outcome:
    from .engine import Outcome

    turn_id = "t-" + uuid.uuid4().hex[:8]
    e.bus.turn_id = turn_id
    e._cancel.clear()
    e.bus.emit(EventType.TURN_STARTED, P.TurnStarted(input=task))
    e.history.append({"role": "user", "content": task})
    e._task = task
    ctx = TurnContext(
        turn_id=turn_id,
        iteration=0,
        workspace=e.workspace,
        bus=e.bus,
        state=e.state,
        history=e.history,
        settings=e.settings,
        max_tokens=e.settings.max_tokens,
        asker=lambda summary, reason: _ask_person(e, summary, reason),
    )
    usage = Usage()
    context_tokens = 0
    fp = e.tool_extra.get("fingerprinter")
    before = fp.scan() if fp is not None else None
    reason, message, extra = P.TURN_COMPLETED, "", {}
    # Executed calls with what they returned: a repeat is the same call after the same answer,
    # so polling a command whose output changes is never one.
    done_log: list[tuple[str, dict[str, Any], str]] = []
    failures = 0
    try:
        for h in e.hooks:
            stop = h.on_turn_start(ctx, task)
            if stop is not None:
                raise _End(stop.reason, stop.message, stop.extra)
        while True:
            if e.cancelled:
                raise _End(P.TURN_INTERRUPTED, "interrupted by the person")
            if ctx.iteration >= e.limits.max_iterations:
                raise _End(P.TURN_MAX_ITERATIONS, f"stopped after {ctx.iteration} iterations (the cap)")
            ctx.iteration += 1
            for text in e._take_steer():
                e.history.append({"role": "user", "content": f"[the person, while you worked] {text}"})
                e.bus.emit(EventType.STEER, {"text": text})
            e.bus.emit(EventType.ITERATION_STARTED, {"iteration": ctx.iteration})

            try:
                completion = call_model(e, ctx)
                failures = 0
            except ProviderError as exc:
                failures += 1
                if exc.error_class == ErrorClass.CANCELLED or e.cancelled:
                    raise _End(P.TURN_INTERRUPTED, "interrupted by the person") from exc
                _on_model_error(e, ctx, exc, failures)
                continue

            usage.add(completion.usage)
            context_tokens = publish_usage(e, completion)
            if e.limits.max_turn_tokens and usage.prompt_tokens + usage.completion_tokens > e.limits.max_turn_tokens:
                raise _End(P.TURN_TOKEN_CEILING, f"token ceiling of {e.limits.max_turn_tokens} reached")

            calls = completion.tool_calls
            spent = False  # the model printed an unknown tool as text and was told: no answer
            if not calls and completion.content:
                text_calls = _text_calls(e, ctx, completion)
                spent = text_calls is None
                calls = text_calls or []
            if not calls and not spent:
                e.history.append({"role": "assistant", "content": completion.content})
                e.bus.emit(EventType.ASSISTANT_MESSAGE, {"content": completion.content, "reasoning": completion.reasoning, "finish_reason": completion.finish_reason})
                verdict = None
                for h in e.hooks:
                    verdict = h.on_answer(ctx, completion.content)
                    if verdict is not None:
                        break
                if isinstance(verdict, Stop):
                    raise _End(verdict.reason, verdict.message, verdict.extra)
                if isinstance(verdict, Reenter):
                    ctx.tell(verdict.message)
                    if verdict.max_tokens:
                        ctx.max_tokens = verdict.max_tokens
                    continue
                raise _End(P.TURN_COMPLETED, completion.content)

            execs = _prepare(e, ctx, completion, calls) if calls else []
            n = e.limits.max_identical_calls
            repeated = [ex for ex in execs if ex.error is None and is_repeat_with_results(done_log, (ex.name, ex.arguments), n)]
            if repeated:
                last = repeated[0]
                told = (
                        f"You made the same {last.name} call {n} times in a row with identical arguments and "
                    "got the same result each time. Repeating it will not change the result."
                )
                e.guard(ctx, "repeat", f"{last.name} x{n}", told)
                if e.settings.limits.on_repeat == "ask" and _person_allows_repeat(e, last, told):
                    done_log.clear()  # the person said go on: one more run, then count afresh
                else:
                    _answer_unrun(e, execs, told)
                    raise _End(P.TURN_REPEAT, told)
            if execs:
                done_log.extend(_run_execs(e, ctx, execs))
            for h in e.hooks:
                stop = h.after_iteration(ctx)
                if stop is not None:
                    raise _End(stop.reason, stop.message, stop.extra)
    except _End as end:
        reason, message, extra = end.reason, end.message, end.extra
    except Exception as exc:  # a bug must end the turn with a reason, never hang the client
        reason, message = P.TURN_ERROR, f"internal error: {type(exc).__name__}: {exc}"
        e.bus.emit(EventType.ERROR, P.ErrorPayload(message=message, error_class="internal"))
    if fp is not None and before is not None:
        try:
            e.turn_changes[turn_id] = fp.changed_since(before)
        except OSError:
            pass
    for h in e.hooks:
        try:
            extra = {**h.on_turn_end(ctx, reason), **extra}
        except Exception as exc:
            e.bus.emit(EventType.ERROR, P.ErrorPayload(message=f"{h.name}: {exc}", error_class="internal"))
    e.bus.emit(
        EventType.TURN_ENDED,
        {
            "reason": reason,
            "iterations": ctx.iteration,
            "usage": {"prompt_tokens": usage.prompt_tokens, "completion_tokens": usage.completion_tokens},
            "context_tokens": context_tokens,
            "message": message,
            **extra,
        },
    )
    return Outcome(turn_id, reason, ctx.iteration, usage, context_tokens, message)


def _on_model_error(e: Engine, ctx: TurnContext, exc: ProviderError, failures: int) -> None:
    cls = exc.error_class
    if cls == ErrorClass.TRUNCATED_ARGS or is_truncated_tool_call(exc.message):
        told = truncated_call_message("your last tool", ctx.max_tokens)
        e.guard(ctx, "truncation", "server could not parse a cut-off tool call", told)
        ctx.tell(told)
    elif cls == ErrorClass.PARSE_FAILURE:
        told = "The server could not parse your last tool call. " + how_to_call_tools_message(e.registry.names())
        e.bus.emit(EventType.ERROR, P.ErrorPayload(message=exc.message, error_class=str(cls), retrying=True))
        ctx.tell(told)
    else:
        # Whatever the stream delivered before it broke is kept in the event: nothing is lost.
        partial = getattr(exc, "partial", None)
        kept = {"partial": partial.content} if partial is not None and partial.content else {}
        e.bus.emit(EventType.ERROR, P.ErrorPayload(message=exc.message, error_class=str(cls), **kept))
        raise _End(P.TURN_ERROR, exc.message)
    if failures >= MAX_MODEL_FAILURES:
        raise _End(P.TURN_ERROR, f"{failures} model replies in a row could not be used: {exc.message}")


def _text_calls(e: Engine, ctx: TurnContext, c: Completion) -> list[ToolCall] | None:
    """Tool calls printed as text, executed (and disclosed). None when the text named only tools
    that do not exist: the model is told the real ones, and the round is spent."""
    found = extract_text_tool_calls(c.content, e.registry.names())
    if not found:
        return []
    known = [t for t in found if t.known]
    if not known:
        bad = found[0].name
        told = unknown_tool_message(bad, e.registry.names())
        e.guard(ctx, "unknown_tool", f"unknown tool {bad!r} printed as text", told)
        e.history.append({"role": "assistant", "content": c.content})
        ctx.tell(told)
        return None
    calls = [ToolCall("text-" + uuid.uuid4().hex[:8], t.name, json.dumps(t.arguments)) for t in known]
    told = f"executed {len(calls)} tool call(s) the model printed as text: " + ", ".join(t.name for t in known)
    e.guard(ctx, "text_tool_call", "tool call printed as text", told)
    e.bus.emit(EventType.NOTICE, {"text": told})
    c.content = ""
    return calls


def _prepare(e: Engine, ctx: TurnContext, c: Completion, calls: list[ToolCall]) -> list[ToolExecution]:
    """Validate each call; only calls whose arguments parse enter the history (cut-off JSON in
    history makes the server fail every later request)."""
    execs: list[ToolExecution] = []
    history_calls: list[dict[str, Any]] = []
    cut: list[str] = []
    for i, call in enumerate(calls):
        tool = e.registry.get(call.name)
        if tool is None:
            told = unknown_tool_message(call.name, e.registry.names())
            e.guard(ctx, "unknown_tool", f"unknown tool {call.name!r}", told)
            ex = ToolExecution(i, call.id, call.name, {}, error=told)
        else:
            try:
                args = call.parsed()
                declared_args = tool.Args.model_validate(args)
                ex = ToolExecution(i, call.id, call.name, args)
                ex.declared = tool.declare(declared_args, e.tool_context())
            except ValueError as exc:  # json.JSONDecodeError and pydantic's ValidationError
                if is_truncated_tool_call(finish_reason=c.finish_reason, arguments=call.arguments) or (
                    c.finish_reason == "length" and looks_truncated(call.arguments)
                ):
                    told = truncated_call_message(call.name, ctx.max_tokens)
                    e.guard(ctx, "truncation", f"{call.name} arguments cut off at {ctx.max_tokens} tokens", told)
                    cut.append(told)
                    continue
                detail = describe_validation(exc) if isinstance(exc, ValidationError) else str(exc)
                ex = ToolExecution(i, call.id, call.name, {}, error=wrong_args_message(call.name, detail, tool.schema()["parameters"]))
            except ToolError as exc:  # a path that cannot be resolved
                ex = ToolExecution(i, call.id, call.name, args, error=str(exc))
        execs.append(ex)
        e._emit_call(ex, via=c.via)
        history_calls.append(
            {"id": ex.call_id, "type": "function", "function": {"name": ex.name, "arguments": json.dumps(ex.arguments)}}
        )
    if history_calls:
        # In constrained mode the action text is kept as generated (when nothing was cut or
        # rewritten) so the provider can replay it verbatim and the server's cache holds.
        content = c.raw if c.via == "constrained" and len(history_calls) == len(calls) and not cut else c.content
        e.history.append({"role": "assistant", "content": content or "", "tool_calls": history_calls})
    elif c.content:
        e.history.append({"role": "assistant", "content": c.content})
    for told in cut:
        ctx.tell(told)
    return execs


def _ask_person(e: Engine, summary: str, reason: str) -> bool | None:
    req = ApprovalRequest(call_id="", tool="question", summary=summary, reason=reason)
    decision = e.approver.approve(req)
    if decision.by == "headless":
        return None  # nobody to ask: not a decision, so no approval event either
    resolved_event(e.bus, req, decision)
    return decision.approved


def _person_allows_repeat(e: Engine, ex: ToolExecution, told: str) -> bool:
    req = ApprovalRequest(
        call_id=ex.call_id,
        tool=ex.name,
        summary=json.dumps(ex.arguments, ensure_ascii=False)[:300],
        reason=f"the model is repeating an identical call. {told} Let it run once more?",
    )
    decision = e.approver.approve(req)
    resolved_event(e.bus, req, decision)
    return decision.approved


def _answer_unrun(e: Engine, execs: list[ToolExecution], text: str) -> None:
    for ex in execs:
        e.history.append({"role": "tool", "tool_call_id": ex.call_id, "content": text})
        e.bus.emit(EventType.TOOL_RESULT, P.ToolResultPayload(call_id=ex.call_id, name=ex.name, ok=False, output=text, status="denied"))


def _run_execs(e: Engine, ctx: TurnContext, execs: list[ToolExecution]) -> list[tuple[str, dict[str, Any], str]]:
    results = e._dispatch.run_all(execs, ctx)
    executed: list[tuple[str, dict[str, Any], str]] = []
    stop = False
    for done in results:
        r = done.result
        rec = CallRecord(
            iteration=ctx.iteration,
            call_id=done.ex.call_id,
            name=done.ex.name,
            arguments=done.ex.arguments,
            ok=r.ok,
            output=r.output,
            exit_code=r.exit_code,
            command=done.ex.arguments.get("command") if done.ex.name == "bash" else None,
            wrote=[str(p.relative_to(e.workspace)) if p.is_relative_to(e.workspace) else str(p) for p in r.wrote],
            error_class=str(r.error_class) if r.error_class else None,
            status=done.status,
        )
        ctx.calls.append(rec)
        if not r.ok and done.status == "failed":
            what = rec.command or json.dumps(rec.arguments, ensure_ascii=False)[:120]
            first = (r.output.strip().splitlines() or [""])[0][:160]
            e.failures = [*e.failures[-9:], f"{rec.name} {what}: {first}"]
        shown = r.output
        for h in e.hooks:
            replacement = h.on_tool_result(ctx, rec)
            if replacement is not None:
                shown = replacement
        publish_result(e, done, shown)
        e.history.append({"role": "tool", "tool_call_id": done.ex.call_id, "content": shown})
        if done.ex.error is None:
            executed.append((done.ex.name, done.ex.arguments, r.output))
        stop = stop or done.stop
    ran = {d.ex.index for d in results}
    for ex in execs:
        if ex.index not in ran:
            e.history.append({"role": "tool", "tool_call_id": ex.call_id, "content": "not run: the turn was stopped"})
    if stop:
        raise _End(P.TURN_STOPPED, "the person stopped the turn at an approval")
    if e.cancelled:
        raise _End(P.TURN_INTERRUPTED, "interrupted by the person")
    return executed
