"""The scripted server's `/apply-template`: its ChatML rendering, and a template that drops the
reasoning of assistant turns before the last user message (as Qwen3's and DeepSeek R1's do), for
the doctor's template check (provider/template_check.py)."""

from __future__ import annotations

from typing import Any

from .script_state import render_prompt


def apply_template(body: dict[str, Any], *, drops_reasoning: bool) -> dict[str, Any]:
    messages = list(body.get("messages") or [])
    last_user = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1)
    shown = []
    for i, m in enumerate(messages):
        thought = m.get("reasoning_content")
        if isinstance(thought, str) and thought and not (drops_reasoning and i < last_user):
            m = {**m, "content": f"<think>{thought}</think>{m.get('content') or ''}"}
        shown.append(m)
    return {"prompt": render_prompt({**body, "messages": shown})}
