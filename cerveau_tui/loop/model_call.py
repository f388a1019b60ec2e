"""One model call: keep the window, stream the reply onto the bus, report usage.

The window (context/window.py) is kept across the session in `EngineState.window`: before every
call it compacts once when the request would pass the high-water mark, and between compactions the
request only grows at its end, so the server's prefix cache holds. When the server refuses the
prompt anyway (its template adds tokens our count does not see), the window compacts with the
server's own count and the call is retried once; cutting the largest message is the last resort
when the newest round alone does not fit.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from .. import protocol as P
from ..bus import Emitter
from ..config_sections import ContextConfig
from ..context.brief import BriefFacts, build_resume_brief, file_lines
from ..context.budget import fit_result, result_room, shrink_largest
from ..context.pack import message_tokens
from ..context.window import Compaction, Handoff, Summariser, Window
from ..history import denied_calls
from ..hooks import BriefLine, BriefSection, Hook
from ..provider.types import Completion, Delta, ErrorClass, Provider, ProviderError
from ..tools.registry import Registry
from .cache_ledger import Figures, figures_of
from .events import ProgressEvents
from .guards.repetition import RepetitionCut, RepetitionWatch
from .silent_cut import silent_cut
from .state import EngineState
from .summarise import continuation
from .thinking import SOURCE as THINKING
from .thinking import ThinkingStop, ThinkingStopped, end_reasoning, thinking_off

#: Retries after the server refused the prompt: one after compacting with its count, one more
#: after cutting the largest message. More would be the same refusal again.
MAX_OVERFLOW_RETRIES = 2
#: Tokens kept free beside the packed prompt: the chat template's own framing.
TEMPLATE_MARGIN = 64
#: The summary call's own framing (its system and prompt) beside the transcript.
SUMMARY_FRAME = 300


class ModelCall:
    def __init__(
        self,
        *,
        provider: Provider,
        registry: Registry,
        bus: Emitter,
        state: EngineState,
        system: str,
        n_ctx: int,
        count_tokens: Callable[[str], int],
        brief: Callable[[int], str],
        context: ContextConfig | None = None,
        summarise: Summariser | None = None,
        thinking: ThinkingStop | None = None,
        before_compact: Callable[[str], None] | None = None,
    ) -> None:
        self.thinking = thinking  # the person's "stop thinking" (thinking.py)
        self.before_compact = before_compact  # the hooks' point (hooks.Hook.before_compact)
        self.provider = provider
        self.registry = registry
        self.bus = bus
        self.state = state
        self.system = system
        # Once a server was caught cutting prompts, the window it really keeps (silent_cut.py).
        kept = state.cache.window
        self.n_ctx = min(n_ctx, kept) if kept else n_ctx
        self.max_tokens = 0  # the last call's reply cap
        self.count_tokens = count_tokens
        self.brief = brief
        self.context = context or ContextConfig()
        self.window = Window(
            state.window,
            count=count_tokens,
            high_water=self.context.high_water,
            low_water=self.context.low_water,
            summarise=summarise,
            brief=brief,
        )
        self.progress = ProgressEvents(bus)
        self.fixed = 0  # the tool schemas' tokens, beside the messages in every request
        self.sent = 0  # our count of the messages of the last request sent
        self.used = 0  # tokens in the window after the last reply, by the server's count
        self.pending = 0  # tokens of the results added since that reply
        self._system_tokens: int | None = None
        # The last request as sent and the server's figures for it, for the cache ledger
        # (loop/cache_ledger.py; its state lives across turns in EngineState.cache).
        self.sent_messages: list[dict[str, Any]] = []
        self.figures: Figures | None = None
        self.repetition = RepetitionWatch()  # this call's reply, watched as it streams

    def budget(self, max_tokens: int, schemas: list[dict[str, Any]]) -> int:
        """What the prompt may take: n_ctx minus the reply cap, the tool schemas, the framing."""
        self.fixed = self.count_tokens(json.dumps(schemas)) if schemas else 0
        return max(256, self.n_ctx - max_tokens - self.overhead())

    def overhead(self) -> int:
        """What a request costs beside its messages (the tools as the server renders them, the
        template's framing): the server's count of the last request minus ours, once there was
        one; before, the schemas' size and a margin. Ours alone misread a 4k window by ~1k."""
        measured = self.state.window.overhead
        return measured if measured is not None else self.fixed + TEMPLATE_MARGIN

    def compact(
        self,
        budget: int,
        *,
        reason: str = "high_water",
        measured: int | None = None,
        full: bool = False,
        keep_rounds: int | None = None,
    ) -> Compaction | None:
        """Compact the window if it must (always for the person's `full` compact), and say so."""
        plain = self.window.summarise
        must = bool(full or measured or self._over_high(budget))
        if must and self.before_compact is not None:
            self.before_compact(reason)
        if plain is not None and must:
            # In constrained mode the handoff continues the cached conversation (summarise.py).
            request = self.window.messages(self.system, self.state.history)
            room = self.n_ctx - self.window.tokens(self.system, self.state.history)
            cont = continuation(
                self.provider,
                self.context,
                request,
                self.registry.schemas(),
                room - self.overhead() - SUMMARY_FRAME,
                self.state.cancel,
                task=self.state.task,
            )
            self.window.summarise = self._said(cont or plain)
        try:
            return self._fit(budget, reason, measured, full, keep_rounds)
        finally:
            self.window.summarise = plain

    def _said(self, summarise: Summariser) -> Summariser:
        """The summary call streams nothing: without a word the person watched a turn that
        seemed stuck for as long as the model wrote its handoff."""

        def run(dropped: list[dict[str, Any]]) -> str | Handoff | None:
            self.bus.emit(
                P.NoticePayload(
                    text="the window is full: the model is writing a summary of earlier rounds…"
                )
            )
            return summarise(dropped)

        return run

    def _over_high(self, budget: int) -> bool:
        return self.window.tokens(self.system, self.state.history) > self.window.high_water * budget

    def _fit(
        self,
        budget: int,
        reason: str,
        measured: int | None,
        full: bool,
        keep_rounds: int | None,
    ) -> Compaction | None:
        done = self.window.fit(
            self.system,
            self.state.history,
            budget=budget,
            request=self.state.task,
            reason=reason,
            # The window weighs messages: the server's count less what it adds beside them.
            measured=max(1, measured - self.overhead()) if measured else None,
            full=full,
            keep_rounds=keep_rounds,
            summary_room=self.summary_room(),
        )
        if done is not None:
            self.state.cache.compacted = True  # the next request's re-read has a known cause
            # The figures are what the window holds: the messages and what is sent beside them.
            beside = self.overhead()
            self.bus.emit(
                P.Compacted(
                    tokens_before=done.tokens_before + beside,
                    tokens_after=done.tokens_after + beside,
                    dropped_rounds=done.dropped_rounds,
                    summary_source=done.summary_source,
                    pruned=done.pruned,
                    n_ctx=self.n_ctx,
                    reason=done.reason,
                ),
            )
        return done

    def summary_room(self) -> int:
        """Tokens the summary call's transcript may take: the window less the handoff's cap, its
        framing, and the session's system message, which the summary request opens with too
        (uncounted, a 4k window with an AGENTS.md refused the summary and fell back to the brief)."""
        if self._system_tokens is None:  # asked before every call: counted once
            msg = {"role": "system", "content": self.system}
            self._system_tokens = message_tokens(msg, self.count_tokens)
        cap = self.context.summary_max_tokens
        return max(256, self.n_ctx - cap - SUMMARY_FRAME - self._system_tokens)

    def __call__(
        self,
        max_tokens: int,
        attempt: int = 0,
        refused: list[list[dict[str, Any]]] | None = None,
        *,
        only_tools: tuple[str, ...] = (),
        extra: dict[str, Any] | None = None,
        measured: int | None = None,
        shape: Callable[[list[dict[str, Any]]], list[dict[str, Any]]] | None = None,
    ) -> Completion:
        """`only_tools`: the tools this call's reply may use (R1's read-only round); `extra`:
        request fields for this call only (R2's chat_template_kwargs); `shape`: those schemas as
        this call needs them (a tool bounded after a cut-off call, guards/cut_retry.py).

        The tools SENT are always the session's whole registry, byte for byte: they are part of
        the prompt's prefix (loop/narrow.py). What this call may use goes to the provider as
        `narrow`, which only constrained mode's grammar reads; the dispatcher refuses the rest."""
        self.max_tokens = max_tokens
        schemas = self.registry.schemas()
        runs = self.registry.runnable_schemas()  # a delegated child's: fewer than it sends
        usable = self.registry.only(*only_tools).schemas() if only_tools else runs
        usable = shape(usable) if shape else usable
        narrow = usable if usable != schemas else None
        shape = _same(usable)  # a retry of this call below offers exactly the same
        budget = self.budget(max_tokens, schemas)
        refused = refused if refused is not None else []
        # Once per call: before it by the high-water mark, or after the server's first refusal
        # with its own count. A second refusal goes straight to the last resort below.
        compacted = (
            self.compact(
                budget,
                reason="server_overflow" if measured else "high_water",
                measured=measured,
            )
            if attempt <= 1
            else None
        )
        messages = self.window.messages(self.system, self.state.history)
        if refused and (compacted is None or messages in refused):
            # Compacting freed nothing (the bulk is in the newest round): cut the largest message
            # of what was refused instead. Sending the same request again gets the same refusal;
            # measured, `seq 1 3000` on a 4k server retried four identical requests.
            share = min(0.8, budget / max(measured or 1, 1) * 0.9)
            messages = shrink_largest(refused[-1], share, self.count_tokens)
            if messages in refused:
                raise ProviderError(
                    "the prompt does not fit the server's context and nothing in it can be cut",
                    ErrorClass.CONTEXT_OVERFLOW,
                )
        self.progress.reset()
        self.repetition = RepetitionWatch()
        if self.thinking is not None:
            self.thinking.forget()  # pressed before this call's reasoning: nothing to end
        self.sent = sum(message_tokens(m, self.count_tokens) for m in messages)
        self.sent_messages = messages
        try:
            # `extra` and `narrow` only when there are some: scripted providers in tests need not
            # know them.
            optional: dict[str, Any] = {"extra": extra} if extra else {}
            if narrow is not None:
                optional["narrow"] = narrow
            done = self.provider.complete(
                messages,
                schemas,
                max_tokens=max_tokens,
                on_delta=self._on_delta,
                cancel=self.state.cancel,
                **optional,
            )
            self.pending = 0
            return done
        except ThinkingStopped as stopped:
            # Said in the reasoning panel itself, where the person pressed it, and as a notice.
            self.bus.emit(P.ReasoningPayload(text=f"\n[{stopped.notice}]\n"))
            self.bus.emit(P.NoticePayload(text=stopped.notice, source=THINKING))
            return self(
                max_tokens,
                attempt,
                refused,
                only_tools=only_tools,
                extra=thinking_off(extra),
                shape=shape,
            )
        except ProviderError as exc:
            if exc.prompt_tokens:
                # The server's own count of what it refused: the status bar shows that, not the
                # last figure that fitted (it said 28% while the server refused the prompt).
                self.bus.emit(
                    P.UsagePayload(context_tokens=exc.prompt_tokens, n_ctx=self.n_ctx),
                )
            if exc.error_class == ErrorClass.CONTEXT_OVERFLOW and attempt < MAX_OVERFLOW_RETRIES:
                # Said even when only the largest message can be cut (no `compacted` event then).
                self.bus.emit(
                    P.NoticePayload(
                        text="the prompt did not fit the server's context; compacting and retrying"
                    ),
                )
                ours = self.sent + self.overhead()
                return self(
                    max_tokens,
                    attempt + 1,
                    [*refused, messages],
                    only_tools=only_tools,
                    extra=extra,
                    # Without the server's count, ours a quarter up: it refused what we counted.
                    measured=exc.prompt_tokens or int(ours * 1.25) + 1,
                    shape=shape,
                )
            raise

    def _check_cut(self, read: int) -> None:
        """The server read far fewer prompt tokens than were sent: it cut the prompt and said
        nothing (silent_cut.py). Said once per cut, and the window becomes what it keeps."""
        props = self.provider.props() if read < self.sent else None
        ollama = props is not None and props.server == "ollama"
        cut = silent_cut(
            self.sent,
            read,
            n_ctx=self.n_ctx,
            reply_cap=self.max_tokens,
            setting=props.n_ctx if props is not None and ollama else None,
            said=props.ctx_setting if props is not None else "",
        )
        if cut is None:
            return
        self.n_ctx = self.state.cache.window = cut.window
        self.bus.emit(P.NoticePayload(text=cut.text(), level="warning", source="server_cut"))

    def fit_result(self, text: str, max_tokens: int) -> str:
        """A tool result cut to the room left in the window, this round's earlier results
        counted: one result never overflows the window."""
        room = result_room(self.n_ctx, self.used + self.pending, max_tokens)
        shown = fit_result(text, room, self.count_tokens)
        self.pending += self.count_tokens(shown)
        return shown

    def _on_delta(self, d: Delta) -> None:
        self.progress(d)
        found = self.repetition.feed(d.raw, reasoning=d.reasoning)
        if found is not None:  # the provider closes the stream on the way out
            raise RepetitionCut(found)
        if d.content:
            self.bus.emit(P.TokenPayload(text=d.content))
        if d.reasoning:
            self.bus.emit(P.ReasoningPayload(text=d.reasoning))
            if self.thinking is not None and self.thinking.take():
                # Through the server (the stream goes on), else ThinkingStopped: thinking.py.
                said = end_reasoning(self.provider)
                self.bus.emit(P.ReasoningPayload(text=f"\n[{said}]\n"))
                self.bus.emit(P.NoticePayload(text=said, source=THINKING))
        elif d.content and self.thinking is not None:
            self.thinking.forget()  # the answer has started: the reasoning is over

    def publish_usage(self, c: Completion) -> int:
        """Emit the call's usage; returns the tokens now in the context window."""
        t = c.timings
        # The server's own count of the prompt it read; timings when it sent no usage.
        ctx_tokens = c.usage.prompt_tokens or (t.prompt_n + t.cache_n if t is not None else 0)
        # What the next prompt holds at least: this one and the reply (the room for results).
        self.used = ctx_tokens + (c.usage.completion_tokens or (t.predicted_n if t else 0))
        if ctx_tokens and self.sent:
            self._check_cut(ctx_tokens)
            self.state.window.overhead = max(0, ctx_tokens - self.sent)
        self.figures = f = figures_of(c)
        miss = self.state.cache.record(self.sent_messages, f) if f is not None else None
        self.bus.emit(
            P.UsagePayload(
                prompt_tokens=c.usage.prompt_tokens,
                completion_tokens=c.usage.completion_tokens,
                # The server's figures; from `usage.prompt_tokens_details` when it sent no timings.
                cache_n=f.cached if f else 0,
                prompt_n=f.evaluated if f else 0,
                predicted_n=t.predicted_n if t else 0,
                predicted_per_second=t.predicted_per_second if t else 0.0,
                context_tokens=ctx_tokens,
                n_ctx=self.n_ctx,
            ),
        )
        if miss is not None:  # a notice every client shows; the figures are in the usage event
            self.bus.emit(P.NoticePayload(text=miss.text(), level="warning", source="cache_miss"))
        return ctx_tokens


def _same(schemas: list[dict[str, Any]]) -> Callable[[list[dict[str, Any]]], list[dict[str, Any]]]:
    return lambda _offered: schemas


def resume_brief(
    dropped: int, *, state: EngineState, workspace: Path, hooks: Sequence[Hook]
) -> str:
    """The facts for the brief (context/brief.py): the request, what the hooks know (the plan
    reconciled with the disk, the unmet criteria), what failed, what was written."""
    written = sorted(
        {
            str(p.relative_to(workspace)) if p.is_relative_to(workspace) else str(p)
            for p in state.tools.written
        }
        - {"."}
    )
    lines: list[BriefLine | str] = []
    for h in hooks:
        try:
            lines += h.resume_brief()
        except Exception:  # a brief with a hole beats no turn; the hole is not invented over
            continue
    filed = file_lines(lines)
    facts = BriefFacts(
        request=state.task,
        plan=filed[BriefSection.PLAN],
        decisions=filed[BriefSection.DECISION],
        failed=[
            *state.failures,
            *denied_calls(state.history.messages),
            *filed[BriefSection.FAILED],
        ],
        unmet=filed[BriefSection.UNMET],
        written=written,
        notes=filed[BriefSection.NOTE],
    )
    return build_resume_brief(facts)
