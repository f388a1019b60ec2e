"""One model call: pack the window, stream the reply onto the bus, report usage.

The window is packed afresh every round; when the server says it did not fit, the squeeze is
remembered for the session and the call retried. What was dropped is replaced by the resume brief.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path

from .. import protocol as P
from ..bus import Emitter
from ..context.pack import pack
from ..hooks import Hook
from ..protocol import EventType
from ..provider.types import Completion, Delta, ErrorClass, Provider, ProviderError
from ..tools.registry import Registry
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

    def __call__(self, max_tokens: int, attempt: int = 0) -> Completion:
        schemas = self.registry.schemas()
        fixed = self.count_tokens(json.dumps(schemas)) if schemas else 0
        budget = max(256, int((self.n_ctx - max_tokens - fixed - 64) * self.state.squeeze))
        messages, _, dropped = pack(
            self.system,
            self.state.history,
            budget=budget,
            count=self.count_tokens,
            brief=self.brief,
        )
        if dropped:
            self.bus.emit(
                EventType.NOTICE,
                {
                    "text": f"{dropped} earlier rounds were compacted into a resume brief to fit n_ctx={self.n_ctx}"
                },
            )
        try:
            return self.provider.complete(
                messages,
                schemas,
                max_tokens=max_tokens,
                on_delta=self._on_delta,
                cancel=self.state.cancel,
            )
        except ProviderError as exc:
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
                return self(max_tokens, attempt + 1)
            raise

    def _on_delta(self, d: Delta) -> None:
        if d.content:
            self.bus.emit(EventType.TOKEN, {"text": d.content})
        if d.reasoning:
            self.bus.emit(EventType.REASONING, {"text": d.reasoning})

    def publish_usage(self, c: Completion) -> int:
        """Emit the call's usage; returns the tokens now in the context window."""
        t = c.timings
        if t is not None and (t.prompt_n or t.cache_n):
            ctx_tokens = t.prompt_n + t.cache_n + t.predicted_n
        else:
            ctx_tokens = c.usage.prompt_tokens + c.usage.completion_tokens
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
