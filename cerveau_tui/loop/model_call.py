"""One model call: pack the window, stream the reply onto the bus, report usage.

The window is packed afresh every round; when the server says it did not fit, the squeeze is
remembered for the session and the call retried. What was dropped is replaced by the resume brief.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from .. import protocol as P
from ..context.pack import pack
from ..protocol import EventType
from ..provider.types import Completion, Delta, ErrorClass, ProviderError

if TYPE_CHECKING:
    from ..hooks import TurnContext
    from .engine import Engine


def call_model(e: Engine, ctx: TurnContext, attempt: int = 0) -> Completion:
    schemas = e.registry.schemas()
    fixed = e.count_tokens(json.dumps(schemas)) if schemas else 0
    budget = max(256, int((e.n_ctx - ctx.max_tokens - fixed - 64) * e.squeeze))
    messages, _, dropped = pack(
        e.system, e.history, budget=budget, count=e.count_tokens, brief=lambda n: resume_brief(e, n)
    )
    if dropped:
        e.bus.emit(EventType.NOTICE, {"text": f"{dropped} earlier rounds were compacted into a resume brief to fit n_ctx={e.n_ctx}"})

    def on_delta(d: Delta) -> None:
        if d.content:
            e.bus.emit(EventType.TOKEN, {"text": d.content})
        if d.reasoning:
            e.bus.emit(EventType.REASONING, {"text": d.reasoning})

    try:
        return e.provider.complete(messages, schemas, max_tokens=ctx.max_tokens, on_delta=on_delta, cancel=e._cancel)
    except ProviderError as exc:
        # Our count is the model's own tokenizer, but the server's template adds its own tokens;
        # on overflow, pack tighter and try again rather than ending the turn.
        # The squeeze is remembered for the session, so the next round does not overflow again.
        if exc.error_class == ErrorClass.CONTEXT_OVERFLOW and attempt < 3:
            e.squeeze *= 0.8
            e.bus.emit(EventType.NOTICE, {"text": "the prompt did not fit the server's context; compacting and retrying"})
            return call_model(e, ctx, attempt + 1)
        raise


def resume_brief(e: Engine, dropped: int) -> str:
    """What cannot be recovered by reading the workspace: the goal, and what was done."""
    written = sorted({str(p.relative_to(e.workspace)) if p.is_relative_to(e.workspace) else str(p) for p in e.state.written} - {"."})
    lines = [f"[harness] {dropped} earlier rounds were removed to keep the context window small."]
    task = e._task
    if task:
        lines.append(f"The task was: {task[:600]}")
    if written:
        lines.append("Files you already wrote: " + ", ".join(written[:20]))
    if e.failures:
        lines.append("What already failed (do not repeat it blindly):")
        lines.extend(f"- {f}" for f in e.failures[-5:])
    for h in e.hooks:
        try:
            lines.extend(h.resume_brief())
        except Exception:  # a brief with a hole beats no turn; the hole is not invented over
            continue
    return "\n".join(lines)


def publish_usage(e: Engine, c: Completion) -> int:
    t = c.timings
    if t is not None and (t.prompt_n or t.cache_n):
        ctx_tokens = t.prompt_n + t.cache_n + t.predicted_n
    else:
        ctx_tokens = c.usage.prompt_tokens + c.usage.completion_tokens
    e.bus.emit(
        EventType.USAGE,
        P.UsagePayload(
            prompt_tokens=c.usage.prompt_tokens,
            completion_tokens=c.usage.completion_tokens,
            cache_n=t.cache_n if t else 0,
            prompt_n=t.prompt_n if t else 0,
            predicted_n=t.predicted_n if t else 0,
            predicted_per_second=t.predicted_per_second if t else 0.0,
            context_tokens=ctx_tokens,
            n_ctx=e.n_ctx,
        ),
    )
    return ctx_tokens
