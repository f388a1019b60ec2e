"""A tools/call result as the model reads it: text, bounded and escaped like a command's output.

A server chooses every byte it returns. Its text reaches the person's terminal (`cerveau run`,
the session log shown later) and the model's window, so: the content blocks become plain text
(an image or audio block is named, never inlined as base64 that would fill the window), every
terminal control is shown as an escape (text_safety.visible: an OSC 52 in a result wrote the
person's clipboard), and the whole is cut to the session's output cap, head and tail kept, as
a command's output is (sandbox/process.cap_output).
"""

from __future__ import annotations

import json
from typing import Any

from ..sandbox.process import cap_output
from ..text_safety import visible

MAX_BLOCKS = 100


def render(result: dict[str, Any], cap: int) -> tuple[str, bool, bool]:
    """(text, is_error, truncated)."""
    parts: list[str] = []
    content = result.get("content")
    blocks = content if isinstance(content, list) else []
    for block in blocks[:MAX_BLOCKS]:
        parts.append(_block(block))
    if len(blocks) > MAX_BLOCKS:
        parts.append(f"[{len(blocks) - MAX_BLOCKS} more content blocks not shown]")
    structured = result.get("structuredContent")
    if structured is not None and not any(p.strip() for p in parts):
        parts.append(json.dumps(structured, ensure_ascii=False)[: cap * 2])
    text = "\n".join(p for p in parts if p) or "(no content)"
    text, truncated = cap_output(visible(text), cap)
    return text, result.get("isError") is True, truncated


def _block(block: Any) -> str:
    if not isinstance(block, dict):
        return ""
    kind = block.get("type")
    if kind == "text":
        text = block.get("text")
        return text if isinstance(text, str) else ""
    if kind in ("image", "audio"):
        mime = str(block.get("mimeType", "?"))[:60]
        size = len(str(block.get("data", ""))) * 3 // 4
        return f"[{kind} {mime}, about {size} bytes, not shown]"
    if kind == "resource_link":
        return f"[resource {str(block.get('uri', ''))[:300]}]"
    if kind == "resource":
        raw = block.get("resource")
        res: dict[str, Any] = raw if isinstance(raw, dict) else {}
        text = res.get("text")
        uri = str(res.get("uri", ""))[:300]
        return f"[resource {uri}]\n{text}" if isinstance(text, str) else f"[resource {uri}]"
    return f"[a {str(kind)[:40]} block, not shown]"
