"""R4's expert: a second configured server/model asked for advice on a stalled failure.

Advice, not control: the expert reads the handoff and answers in prose; the local model applies
it through the same tools and boundary. Handing the turn to a second model would give it tools
without the session's approvals behind them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Expert = Callable[[str], str]

_SYSTEM = (
    "You are an expert software engineer advising a smaller coding model that is stuck. Read the "
    "situation and reply with a short, concrete plan: the root cause, and the exact change to make "
    "(file, function, what to write). Do not ask questions."
)


def expert_from_settings(settings: Any) -> Expert | None:
    """An Expert over `settings.expert` (server_url, model, max_tokens); None when unset."""
    cfg = getattr(settings, "expert", None)
    if cfg is None:
        return None
    from ..provider.llama import LlamaProvider

    provider = LlamaProvider(
        cfg.server_url, model=cfg.model, temperature=0.2, timeout_s=settings.request_timeout_s
    )

    def ask(situation: str) -> str:
        messages = [{"role": "system", "content": _SYSTEM}, {"role": "user", "content": situation}]
        return provider.complete(messages, [], max_tokens=cfg.max_tokens).content

    return ask
