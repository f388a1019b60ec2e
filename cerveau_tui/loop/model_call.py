"""One model call: pack the window, stream the reply onto the bus, report usage.

The window is packed afresh every round; when the server says it did not fit, the squeeze is
remembered for the session and the call retried. What was dropped is replaced by the resume brief.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from .. import protocol as P
from ..bus import Emitter
from ..context.budget import fit_result, result_room, shrink_largest
from ..context.pack import pack
from ..hooks import Hook
from ..protocol import EventType
from ..provider.types import Completion, Delta, ErrorClass, Provider, ProviderError
from ..tools.registry import Registry
from .events import ProgressEvents
from .state import EngineState

#: Overflow retries before the turn ends on it: each packs 20% tighter.
MAX_OVERFLOW_RETRIES = 3


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
    ) -> None:
        self.provider = provider
        self.registry = registry
        self.bus = bus
        self.state = state
        self.system = system
        self.n_ctx = n_ctx
        self.count_tokens = count_tokens
        self.brief = brief
        self.progress = ProgressEvents(bus)
        self.used = 0  # tokens in the window after the last reply, by the server's count
        self.pending = 0  # tokens of the results added since that reply

    def __call__(
        self,
        max_tokens: int,
        attempt: int = 0,
        refused: list[list[dict[str, Any]]] | None = None,
        *,
        only_tools: tuple[str, ...] = (),
        extra: dict[str, Any] | None = None,
    ) -> Completion:
        """`only_tools`: offer just these this call (R1's read-only round); `extra`: request
        fields for this call only (R2's chat_template_kwargs)."""
        registry = self.registry.only(*only_tools) if only_tools else self.registry
        schemas = registry.schemas()
        fixed = self.count_tokens(json.dumps(schemas)) if schemas else 0
        budget = max(256, int((self.n_ctx - max_tokens - fixed - 64) * self.state.squeeze))
        messages, _, dropped = pack(
            self.system,
            self.state.history,
            budget=budget,
            count=self.count_tokens,
            brief=self.brief,
        )
        refused = refused if refused is not None else []
        if messages in refused:
            # Packing tighter dropped nothing more (the bulk is in the newest round): cut the
            # largest message instead. Sending the same request again gets the same refusal;
            # measured, `seq 1 3000` on a 4k server retried four identical requests.
            messages = shrink_largest(messages, self.state.squeeze, self.count_tokens)
            if messages in refused:
                raise ProviderError(
                    "the prompt does not fit the server's context and nothing in it can be cut",
                    ErrorClass.CONTEXT_OVERFLOW,
                )
        if dropped:
            self.bus.emit(
                EventType.NOTICE,
                {
                    "text": f"{dropped} earlier rounds were compacted into a resume brief to fit n_ctx={self.n_ctx}"
                },
            )
        self.progress.reset()
        try:
            # `extra` only when there is some: scripted providers in tests need not know it.
            done = self.provider.complete(
                messages,
                schemas,
                max_tokens=max_tokens,
                on_delta=self._on_delta,
                cancel=self.state.cancel,
                **({"extra": extra} if extra else {}),
            )
            self.pending = 0
            return done
        except ProviderError as exc:
            if exc.prompt_tokens:
                # The server's own count of what it refused: the status bar shows that, not the
                # last figure that fitted (it said 28% while the server refused the prompt).
                self.bus.emit(
                    EventType.USAGE,
                    P.UsagePayload(context_tokens=exc.prompt_tokens, n_ctx=self.n_ctx),
                )
            # Our count is the model's own tokenizer, but the server's template adds its own tokens;
            # on overflow, pack tighter and try again rather than ending the turn.
            # The squeeze is remembered for the session, so the next round does not overflow again.
            if exc.error_class == ErrorClass.CONTEXT_OVERFLOW and attempt < MAX_OVERFLOW_RETRIES:
                self.state.squeeze *= 0.8
                self.bus.emit(
                    EventType.NOTICE,
                    {
                        "text": "the prompt did not fit the server's context; compacting and retrying"
                    },
                )
                return self(
                    max_tokens,
                    attempt + 1,
                    [*refused, messages],
                    only_tools=only_tools,
                    extra=extra,
                )
            raise

    def fit_result(self, text: str, max_tokens: int) -> str:
        """A tool result cut to the room left in the window, this round's earlier results
        counted: one result never overflows the window."""
        room = result_room(self.n_ctx, self.used + self.pending, max_tokens)
        shown = fit_result(text, room, self.count_tokens)
        self.pending += self.count_tokens(shown)
        return shown

    def _on_delta(self, d: Delta) -> None:
        self.progress(d)
        if d.content:
            self.bus.emit(EventType.TOKEN, {"text": d.content})
        if d.reasoning:
            self.bus.emit(EventType.REASONING, {"text": d.reasoning})

    def publish_usage(self, c: Completion) -> int:
        """Emit the call's usage; returns the tokens now in the context window."""
        t = c.timings
        # The server's own count of the prompt it read; timings when it sent no usage.
        ctx_tokens = c.usage.prompt_tokens or (t.prompt_n + t.cache_n if t is not None else 0)
        # What the next prompt holds at least: this one and the reply (the room for results).
        self.used = ctx_tokens + (c.usage.completion_tokens or (t.predicted_n if t else 0))
        self.bus.emit(
            EventType.USAGE,
            P.UsagePayload(
                prompt_tokens=c.usage.prompt_tokens,
                completion_tokens=c.usage.completion_tokens,
                cache_n=t.cache_n if t else 0,
                prompt_n=t.prompt_n if t else 0,
                predicted_n=t.predicted_n if t else 0,
                predicted_per_second=t.predicted_per_second if t else 0.0,
                context_tokens=ctx_tokens,
                n_ctx=self.n_ctx,
            ),
        )
        return ctx_tokens


def resume_brief(
    dropped: int, *, state: EngineState, workspace: Path, hooks: Sequence[Hook]
) -> str:
    """What cannot be recovered by reading the workspace: the goal, and what was done."""
    written = sorted(
        {
            str(p.relative_to(workspace)) if p.is_relative_to(workspace) else str(p)
            for p in state.tools.written
        }
        - {"."}
    )
    lines = [f"[harness] {dropped} earlier rounds were removed to keep the context window small."]
    if state.task:
        lines.append(f"The task was: {state.task[:600]}")
    if written:
        lines.append("Files you already wrote: " + ", ".join(written[:20]))
    if state.failures:
        lines.append("What already failed (do not repeat it blindly):")
        lines.extend(f"- {f}" for f in state.failures[-5:])
    for h in hooks:
        try:
            lines.extend(h.resume_brief())
        except Exception:  # a brief with a hole beats no turn; the hole is not invented over
            continue
    return "\n".join(lines)
