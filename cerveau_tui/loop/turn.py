"""One turn: rounds of (call the model, run its tool calls) until it answers and the hooks agree.

`Turn.run` is the seed's iteration; each step is a method that fits on a screen. The turn owns
only what lives for one turn (its context, usage, the calls it ran); what lives across turns is
the engine's `EngineState`, handed in with every other collaborator.
"""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from .. import protocol as P
from ..bus import Emitter
from ..config import Settings
from ..context.budget import reply_cap
from ..history import Message, Origin
from ..hooks import CallRecord, Conversation, Hook, Reenter, Stop, TurnContext
from ..protocol import CallStatus
from ..provider.types import Completion, ErrorClass, ProviderError, Usage
from ..sandbox.base import Grant
from ..tools.base import ToolContext
from ..tools.explore import CHILD_USAGE
from ..tools.registry import Registry
from ..workspace.fingerprint.fingerprinter import Fingerprinter
from .approver import ApprovalRequest, Approver, resolved_event
from .cache_ledger import TurnCache
from .dispatch import Dispatcher
from .events import TurnEvents
from .guards.repeats import is_repeat_with_results
from .guards.repetition import RepetitionCut
from .guards.stops import repeat_stop
from .guards.text_calls import how_to_call_tools_message
from .guards.truncation import is_truncated_tool_call
from .model_call import ModelCall
from .narrow import round_refusal
from .remind import after_turn, remind
from .reply import Reply
from .schedule import ToolExecution
from .state import EngineState, Limits, Outcome
from .stop_notes import StopNotes

MAX_MODEL_FAILURES = 3
INTERRUPTED_REPLY = "[the person interrupted this reply]"


class _End(Exception):
    def __init__(
        self, reason: P.StopReason, message: str = "", extra: dict[str, Any] | None = None
    ) -> None:
        self.reason = reason
        self.message = message
        self.extra = extra or {}

    @classmethod
    def of(cls, stop: Stop) -> _End:
        return cls(stop.reason, stop.message, stop.extra)


class Turn:
    def __init__(
        self,
        task: str,
        *,
        settings: Settings,
        limits: Limits,
        workspace: Path,
        bus: Emitter,
        state: EngineState,
        hooks: Sequence[Hook],
        registry: Registry,
        model: ModelCall,
        dispatcher: Dispatcher,
        events: TurnEvents,
        approver: Approver,
        tool_context: Callable[[Grant | None], ToolContext],
        fingerprinter: Fingerprinter | None = None,
    ) -> None:
        self.task = task
        self.settings = settings
        self.limits = limits
        self.bus = bus
        self.state = state
        self.hooks = hooks
        self.registry = registry
        self.model = model
        self.dispatcher = dispatcher
        self.events = events
        self.approver = approver
        self.fingerprinter = fingerprinter
        self.turn_id = "t-" + uuid.uuid4().hex[:8]
        self.ctx = TurnContext(
            turn_id=self.turn_id,
            iteration=0,
            workspace=workspace,
            bus=bus,
            state=state.tools,
            history=state.history,
            settings=settings,
            max_tokens=reply_cap(model.n_ctx, settings.max_tokens),
            asker=self._ask_person,
            n_ctx=model.n_ctx,
            system=model.system,
            cancel=state.cancel,
        )
        self.reply = Reply(registry, events, self.ctx, lambda: tool_context(None))
        self.usage = Usage()
        self.cache = TurnCache()  # evaluated and reused prompt tokens, the server's figures
        self.context_tokens = 0
        self.model_failures = 0
        self.reason = ""  # how the turn ended, once it has
        # Executed calls with what they returned: a repeat is the same call after the same answer,
        # so polling a command whose output changes is never one.
        self.done_log: list[tuple[str, dict[str, Any], str]] = []
        self.stops = StopNotes(bus, self.turn_id)  # folded at the end (stop_notes.py)
        self.round_only: tuple[str, ...] = ()
        dispatcher.refuse = self._round_refusal

    def _round_refusal(self, tool: str) -> str | None:
        return round_refusal(
            tool,
            discuss=self.settings.discuss,
            only=self.round_only,
            withheld=self.reply.cuts.withheld,
            offered=self.registry.names(),
        )

    def run(self) -> Outcome:
        self._begin()
        reason, message, extra = P.TURN_COMPLETED, "", {}
        try:
            self._admit()
            self._hooks_start()
            while True:
                self._next_round()
                completion = self._complete()
                if completion is None:
                    continue  # a reply that could not be used; the model was told why
                calls = self.reply.calls(completion)
                if calls is not None and not calls:
                    self._answer(completion)  # ends the turn, or re-enters it
                    continue
                execs = self.reply.executions(completion, calls or [])
                self._refuse_repeats(execs)
                if execs:
                    self._run(execs)
                self._after_iteration()
        except _End as end:
            reason, message, extra = end.reason, end.message, end.extra
        except Exception as exc:  # a bug must end the turn with a reason, never hang the client
            reason, message = P.TURN_ERROR, f"internal error: {type(exc).__name__}: {exc}"
            self.bus.emit(P.ErrorPayload(message=message, error_class="internal"))
        return self._end(reason, message, extra)

    # --- the rounds ------------------------------------------------------------------------------

    def _begin(self) -> None:
        self.bus.turn_id = self.turn_id
        self.state.cancel.clear()
        self.bus.emit(P.TurnStarted(input=self.task))
        self.stops.start = len(self.state.history)

    def _admit(self) -> None:
        """The prompt enters the history unless a hook refuses it (a person's user_prompt hook):
        a refused prompt is never sent, not this turn and not with a later one."""
        for h in self.hooks:
            refusal = h.on_prompt(self.ctx, self.task)
            if refusal is not None:
                raise _End(P.StopReason.BLOCKED, refusal)
        self.state.history.append(Message.user(self.task))
        self.stops.start = len(self.state.history)
        self.state.task = self.task

    def _hooks_start(self) -> None:
        for h in self.hooks:
            stop = h.on_turn_start(self.ctx, self.task)
            if stop is not None:
                raise _End.of(stop)
            if self.state.cancelled:
                # Stopped during a hook's start (the precheck's suite): no later hook starts,
                # and no question is put to a person who just said stop.
                raise _End(P.TURN_INTERRUPTED, "interrupted by the person")

    def _next_round(self) -> None:
        if self.state.cancelled:
            raise _End(P.TURN_INTERRUPTED, "interrupted by the person")
        if self.ctx.iteration >= self.limits.max_iterations:
            raise _End(
                P.TURN_MAX_ITERATIONS, f"stopped after {self.ctx.iteration} iterations (the cap)"
            )
        self.ctx.iteration += 1
        for text in self.state.take_steer():
            self.state.history.append(
                Message.user(f"[the person, while you worked] {text}", Origin.STEER)
            )
            self.bus.emit(P.Steer(text=text))
        self.bus.emit(P.IterationStarted(iteration=self.ctx.iteration))

    def _remind(self) -> None:
        if self.settings.context.reminders:
            remind(self.hooks, self.ctx, self.state.history, self.bus)

    def _complete(self) -> Completion | None:
        self._remind()
        only, extra = self.ctx.only_tools, self.ctx.request_extra
        self.ctx.only_tools, self.ctx.request_extra = (), {}  # one call's worth, as Reenter says
        self.round_only = only  # this round's calls: refused outside it (loop/narrow.py)
        try:
            completion = self.model(
                self.ctx.max_tokens, only_tools=only, extra=extra, shape=self.reply.cuts.request
            )
        except ProviderError as exc:
            self.model_failures += 1
            if exc.error_class == ErrorClass.CANCELLED or self.state.cancelled:
                # What the model had said, marked as the person's interrupt: without it the next
                # turn's model never learnt that its reply was cut, nor by whom.
                said = exc.partial.content.strip() if exc.partial is not None else ""
                self.state.history.append(Message.reply(f"{said}\n{INTERRUPTED_REPLY}".strip()))
                raise _End(P.TURN_INTERRUPTED, "interrupted by the person") from exc
            self._on_model_error(exc)
            return None
        except RepetitionCut as cut:
            self.model_failures += 1
            told = self.reply.after_repetition(cut.found)
            if self.model_failures >= MAX_MODEL_FAILURES:
                raise _End(
                    P.TURN_ERROR, f"{self.model_failures} replies in a row cut: {told}"
                ) from cut
            return None
        self.model_failures = 0
        self.usage.add(completion.usage)
        self.context_tokens = self.model.publish_usage(completion)
        self.cache.add(self.model.figures)
        self.ctx.context_tokens = self.context_tokens
        ceiling = self.limits.max_turn_tokens
        if ceiling and self.usage.prompt_tokens + self.usage.completion_tokens > ceiling:
            raise _End(P.TURN_TOKEN_CEILING, f"token ceiling of {ceiling} reached")
        return completion

    def _on_model_error(self, exc: ProviderError) -> None:
        cls = exc.error_class
        if cls == ErrorClass.TRUNCATED_ARGS or is_truncated_tool_call(exc.message):
            # The server refused the cut reply before naming its tool: a larger cap if any.
            self.ctx.tell(self.reply.after_cut("").told)
        elif cls == ErrorClass.PARSE_FAILURE:
            told = "The server could not parse your last tool call. " + how_to_call_tools_message(
                self.registry.names()
            )
            self.bus.emit(
                P.ErrorPayload(message=exc.message, error_class=str(cls), retrying=True),
            )
            self.ctx.tell(told)
        else:
            # Whatever the stream delivered before it broke is kept in the event: nothing is lost.
            partial = getattr(exc, "partial", None)
            kept = {"partial": partial.content} if partial is not None and partial.content else {}
            self.bus.emit(P.ErrorPayload(message=exc.message, error_class=str(cls), **kept))
            raise _End(P.TURN_ERROR, exc.message)
        if self.model_failures >= MAX_MODEL_FAILURES:
            raise _End(
                P.TURN_ERROR,
                f"{self.model_failures} model replies in a row could not be used: {exc.message}",
            )

    def _answer(self, c: Completion) -> None:
        """The model answered without a tool call: the first hook with a say decides."""
        self.state.history.append(Message.reply(c.content))
        self.bus.emit(
            P.AssistantMessage(
                content=c.content, reasoning=c.reasoning, finish_reason=c.finish_reason
            ),
        )
        verdict = None
        for h in self.hooks:
            verdict = h.on_answer(self.ctx, c.content)
            if verdict is not None:
                break
        if isinstance(verdict, Stop):
            raise _End.of(verdict)
        if not isinstance(verdict, Reenter):
            raise _End(P.TURN_COMPLETED, c.content)
        self.ctx.tell(verdict.message)
        if verdict.max_tokens:
            self.ctx.max_tokens = verdict.max_tokens
        self.ctx.only_tools = verdict.only_tools
        self.ctx.request_extra = dict(verdict.request_extra)

    def _after_iteration(self) -> None:
        for h in self.hooks:
            stop = h.after_iteration(self.ctx)
            if stop is not None:
                raise _End.of(stop)

    # --- repeats ---------------------------------------------------------------------------------

    def _refuse_repeats(self, execs: list[ToolExecution]) -> None:
        n = self.limits.max_identical_calls
        repeated = [
            ex
            for ex in execs
            if ex.error is None
            and is_repeat_with_results(self.done_log, (ex.name, ex.arguments), n)
        ]
        if not repeated:
            return
        last = repeated[0]
        told = (
            f"You made the same {last.name} call {n} times in a row with identical arguments and "
            "got the same result each time. Repeating it will not change the result."
        )
        self.events.guard("repeat", f"{last.name} x{n}", self.ctx.iteration, told)
        if self.settings.limits.on_repeat == "ask" and self._person_allows_repeat(last, told):
            self.done_log.clear()  # the person said go on: one more run, then count afresh
            return
        for ex in execs:
            self.state.history.append(Message.result(ex.call_id, told, "not_run"))
            self.events.unrun(ex, told)
        self.stops.add(
            repeat_stop(self.ctx.calls, [(e.call_id, e.name, e.arguments) for e in execs], n)
        )
        raise _End(P.TURN_REPEAT, told)

    def _person_allows_repeat(self, ex: ToolExecution, told: str) -> bool:
        req = ApprovalRequest(
            call_id=ex.call_id,
            tool=ex.name,
            summary=json.dumps(ex.arguments, ensure_ascii=False)[:300],
            reason=f"the model is repeating an identical call. {told} Let it run once more?",
        )
        decision = self.approver.approve(req)
        resolved_event(self.bus, req, decision)
        return decision.approved

    def _ask_person(self, summary: str, reason: str) -> bool | None:
        if self.state.cancelled:
            # Issue 33: after Esc Esc during the precheck a question was raised that no dialog
            # showed, and it waited out its 120 s. A stopped turn asks nothing.
            self.ctx.answer_by = "stopped"
            return False
        req = ApprovalRequest(call_id="", tool="question", summary=summary, reason=reason)
        decision = self.approver.approve(req)
        self.ctx.answer_by = "stopped" if decision.decision == "stopped" else decision.by
        if decision.by == "headless":
            return None  # nobody to ask: not a decision, so no approval event either
        resolved_event(self.bus, req, decision)
        if decision.by == "timeout":
            # The chat says what the log says: nobody answered (not "the person said no").
            self.bus.emit(
                P.NoticePayload(
                    text=f"no answer ({decision.reason}): {summary} (taken as no)",
                    level="warning",
                ),
            )
        return decision.approved

    # --- running the calls -----------------------------------------------------------------------

    def _run(self, execs: list[ToolExecution]) -> None:
        ran = self.dispatcher.run_all(execs, self.ctx)
        for ex in ran:
            self._record(ex)
        done = {ex.index for ex in ran}
        for ex in execs:
            if ex.index not in done:
                self.state.history.append(
                    Message.result(ex.call_id, "not run: the turn was stopped", "not_run")
                )
        if any(ex.stop for ex in ran):
            raise _End(P.TURN_STOPPED, "the person stopped the turn at an approval")
        if self.state.cancelled:
            raise _End(P.TURN_INTERRUPTED, "interrupted by the person")

    def _record(self, ex: ToolExecution) -> None:
        """One finished call: the hooks see it, the model reads it, the person sees it."""
        rec = call_record(ex, self.ctx.iteration, self.ctx.workspace)
        self.ctx.calls.append(rec)
        r = ex.result
        assert r is not None
        if isinstance(child := r.meta.get(CHILD_USAGE), Usage):  # explore: the child's tokens
            self.usage.add(child)
        if not r.ok and ex.status == CallStatus.FAILED:
            what = rec.command or json.dumps(rec.arguments, ensure_ascii=False)[:120]
            first = (r.output.strip().splitlines() or [""])[0][:160]
            self.state.note_failure(f"{rec.name} {what}: {first}")
        shown = r.output
        for h in self.hooks:
            replacement = h.on_tool_result(self.ctx, rec)
            if replacement is not None:
                shown = replacement
        shown = self.model.fit_result(shown, self.ctx.max_tokens)
        self.events.result(ex, shown)
        self.state.history.append(Message.result(ex.call_id, shown, str(ex.status)))
        if ex.error is None:
            self.done_log.append((ex.name, ex.arguments, r.output))

    # --- the end ---------------------------------------------------------------------------------

    def after_turn(self, stop: threading.Event | None = None) -> None:
        """The hooks' work that must not delay the answer; the engine calls this after `run`
        returned (turn_ended is out), in the background. `stop`: set when the next prompt comes
        (Engine.run), so a model call here (turn close's distill) is dropped, not waited for."""
        if stop is not None:
            self.ctx.cancel = stop
        after_turn(self.hooks, self.ctx, self.reason, self.bus)

    def _end(self, reason: P.StopReason, message: str, extra: dict[str, Any]) -> Outcome:
        for h in self.hooks:
            try:
                extra = {**h.on_turn_end(self.ctx, reason), **extra}
            except Exception as exc:
                self.bus.emit(
                    P.ErrorPayload(message=f"{h.name}: {exc}", error_class="internal"),
                )
        # What the next request reads of the rounds a guard stopped: one note (stop_notes.py).
        self.stops.finish(self.state, self.ctx.calls, self.limits.max_identical_calls, self.model)
        # Taken now, before the next turn appends: what turn close continues (memory/turn_close.py).
        self.ctx.conversation = Conversation(
            self.model.window.messages(self.model.system, self.state.history),
            self.registry.schemas(),
        )
        self.events.turn_ended(
            reason,
            self.ctx.iteration,
            self.usage,
            self.context_tokens,
            message,
            {**extra, **self.cache.fields()},
            n_ctx=self.model.n_ctx,
        )
        self.reason = reason
        return Outcome(
            self.turn_id, reason, self.ctx.iteration, self.usage, self.context_tokens, message
        )


def call_record(ex: ToolExecution, iteration: int, workspace: Path) -> CallRecord:
    """What hooks see of a finished call: built here, from the execution, and nowhere else."""
    r = ex.result
    assert r is not None, "a record is made of a finished call"
    return CallRecord(
        iteration=iteration,
        call_id=ex.call_id,
        name=ex.name,
        arguments=ex.arguments,
        ok=r.ok,
        output=r.output,
        exit_code=r.exit_code,
        command=ex.command,
        wrote=[
            str(p.relative_to(workspace)) if p.is_relative_to(workspace) else str(p)
            for p in r.wrote
        ],
        error_class=str(r.error_class) if r.error_class else None,
        status=ex.status,
    )
