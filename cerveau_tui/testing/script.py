"""The scripted server's script: entries in, one normalised Reply per chat request out (pure).

Entries (`{"responses": [...]}` or a bare list):
  {"content": "...", "reasoning": "..."}                     a plain answer (reasoning optional)
  {"tool_calls": [{"name": N, "arguments": {...}}]}          native tool calls
  {"raw_arguments": "<cut text>", "name": N, "finish_reason": "length"}   a call cut at the cap
  {"error": {"status": 500, "message": "...", "type": "..."}}             an HTTP error body
  {"content": "...", "error": {..., "after_chunks": N}}      an error EVENT after N stream events,
                                                             the way llama-server fails mid-stream
Modifiers on any streamed entry: "die_after_chunks": N (close the socket mid-stream),
"malformed": true (one non-JSON data line after the first content chunk),
"prefill": {"total": 9000, "batch": 512, "every_s": 0.01, "cache": 0} (a slow machine reading a
long prompt: `prompt_progress` chunks, `batch` tokens apart and `every_s` apart, before the reply;
also before a "keepalive" stream: a server that read the prompt, then went quiet),
"silent_s": 20 (nothing at all, not even the headers, for that long before the reply: llama-server
holding its response until the first batch of a long prompt is read; a client that hangs up
meanwhile is counted in the state's `hung_up`).

Hostile streams (each replaces the whole reply, always streamed; the endless ones run until the
client hangs up or the server stops):
  {"keepalive": 0.05}             `: ping` comments every 0.05 s, never a data line
  {"endless": "text"}             content deltas of "text", as fast as the client reads them
  {"raw_sse": ["data: {...}", ...]}   these lines verbatim (each followed by a blank line), then
                                      the stream ends: the script writes its own `data: [DONE]`
  {"long_line": N}                one `data:` line of N bytes, sent in pieces, then [DONE]
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

EXHAUSTED = "(script exhausted)"


@dataclass
class Reply:
    content: str = ""
    reasoning: str = ""
    calls: list[tuple[str, str]] = field(default_factory=list)  # (name, arguments text)
    finish_reason: str = "stop"
    error: dict[str, Any] | None = None
    stream_error: dict[str, Any] | None = None  # sent as `data: {"error": ...}` mid-stream
    die_after_chunks: int | None = None
    malformed: bool = False
    hostile: Hostile | None = None
    prefill: Prefill | None = None
    silent_s: float = 0.0


@dataclass(frozen=True)
class Prefill:
    """llama-server's `return_progress` while it reads the prompt: processed goes from `cache`
    to `total`, `batch` tokens at a time, one chunk every `every_s` seconds."""

    total: int
    batch: int = 512
    every_s: float = 0.0
    cache: int = 0

    def steps(self) -> list[int]:
        """The processed figures, in order, ending at the total."""
        batch = max(1, self.batch)
        return [*range(self.cache + batch, self.total, batch), self.total]


def _prefill(entry: dict[str, Any]) -> Prefill | None:
    raw = entry.get("prefill")
    if raw is None:
        return None
    if not isinstance(raw, dict) or "total" not in raw:
        raise ValueError('"prefill" is {"total": N, "batch": B, "every_s": S, "cache": C}')
    return Prefill(
        total=int(raw["total"]),
        batch=int(raw.get("batch", 512)),
        every_s=float(raw.get("every_s", 0.0)),
        cache=int(raw.get("cache", 0)),
    )


@dataclass
class Hostile:
    """A stream no well-behaved server sends (one of the fields is set)."""

    keepalive_s: float | None = None
    endless: str | None = None
    raw_sse: list[str] | None = None
    long_line: int | None = None


def _hostile(entry: dict[str, Any]) -> Hostile | None:
    if "keepalive" in entry:
        return Hostile(keepalive_s=float(entry["keepalive"]))
    if "endless" in entry:
        return Hostile(endless=str(entry["endless"]) or "x")
    if "raw_sse" in entry:
        lines = entry["raw_sse"]
        if not isinstance(lines, list):
            raise ValueError('"raw_sse" is a list of lines')
        return Hostile(raw_sse=[str(x) for x in lines])
    if "long_line" in entry:
        return Hostile(long_line=int(entry["long_line"]))
    return None


def load_entries(script: dict[str, Any] | list[Any]) -> list[dict[str, Any]]:
    entries = script.get("responses", []) if isinstance(script, dict) else script
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise ValueError('a script is {"responses": [ {...}, ... ]}: a list of objects')
    return entries


def reply_for(entry: dict[str, Any] | None, *, constrained: bool) -> Reply:
    """What the "model" says for this entry. Under a `response_format` schema (constrained action
    mode) llama-server can only return text matching the schema, so calls and answers come back
    as action JSON in `content`, exactly as the real server does."""
    if entry is None:
        entry = {"content": EXHAUSTED}
    hostile = _hostile(entry)
    if hostile is not None:
        return Reply(hostile=hostile, prefill=_prefill(entry), silent_s=_silent(entry))
    mods: dict[str, Any] = {
        "die_after_chunks": entry.get("die_after_chunks"),
        "malformed": bool(entry.get("malformed")),
        "prefill": _prefill(entry),
        "silent_s": _silent(entry),
    }
    if "error" in entry:
        err = {"status": int(entry["error"].get("status", 500)), **entry["error"]}
        if "after_chunks" not in err:
            return Reply(error=err, **mods)
        reply = reply_for({k: v for k, v in entry.items() if k != "error"}, constrained=constrained)
        reply.stream_error = err
        return reply
    reasoning = str(entry.get("reasoning", ""))
    if "raw_arguments" in entry:
        name, raw = str(entry.get("name", "")), str(entry["raw_arguments"])
        finish = str(entry.get("finish_reason", "length"))
        if constrained:
            return Reply(
                content=f'{{"tool": {json.dumps(name)}, "arguments": {raw}',
                reasoning=reasoning,
                finish_reason=finish,
                **mods,
            )
        return Reply(
            content=str(entry.get("content", "")),
            reasoning=reasoning,
            calls=[(name, raw)],
            finish_reason=finish,
            **mods,
        )
    if entry.get("tool_calls"):
        calls = [(str(c["name"]), _args_text(c.get("arguments", {}))) for c in entry["tool_calls"]]
        if constrained:
            name, args = calls[0]  # one action per reply: the schema admits exactly one
            text = json.dumps(
                {"tool": name, "arguments": json.loads(args) if _is_json(args) else args}
            )
            return Reply(
                content=text,
                reasoning=reasoning,
                finish_reason=str(entry.get("finish_reason", "stop")),
                **mods,
            )
        finish = str(entry.get("finish_reason", "tool_calls"))
        return Reply(
            content=str(entry.get("content", "")),
            reasoning=reasoning,
            calls=calls,
            finish_reason=finish,
            **mods,
        )
    content = str(entry.get("content", ""))
    finish = str(entry.get("finish_reason", "stop"))
    if constrained:
        content = json.dumps({"answer": content})
    return Reply(content=content, reasoning=reasoning, finish_reason=finish, **mods)


def _silent(entry: dict[str, Any]) -> float:
    return max(0.0, float(entry.get("silent_s", 0.0)))


def _args_text(arguments: Any) -> str:
    return arguments if isinstance(arguments, str) else json.dumps(arguments)


def _is_json(text: str) -> bool:
    try:
        json.loads(text)
    except (ValueError, RecursionError):  # scripts hold hostile arguments on purpose
        return False
    return True
