"""The summariser a compaction hands its dropped rounds to (the seed's `Summarise`): one bounded
model call that writes a handoff.

Injected into the window (context/window.py stays pure) by the composition root. Two ways:
`continuation` (the usual one) asks for the handoff as the next message of the conversation the
server has cached, so it costs the question and the answer; `summariser` (where that cannot work:
no room left, a server that refused the prompt) sends the dropped rounds as one transcript with
no tools, so it works the same in native and constrained mode. Degrades honestly: None when the
call fails, is cut at its cap ("length": a handoff cut mid-sentence reads as complete), or the
setting is off; the window then uses the deterministic brief and says so.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any

from ..config import ContextConfig, Settings
from ..context.window import Handoff
from ..provider.types import Provider, ProviderError
from ..text_safety import inert_markers

HANDOFF_SYSTEM = (
    "You write a handoff for another model that will continue a coding task from here without "
    "seeing the conversation. Be factual and short; never invent what the transcript does not say."
)
HANDOFF_PROMPT = (
    "Write the handoff with these headings: Goal (in the person's own words); Done so far; "
    "Decisions and why; In progress; Next steps. Name files and commands exactly."
)
#: One message of the transcript at most this long: the summary call must fit the window.
MESSAGE_CHARS = 2000

Summariser = Callable[[list[dict[str, Any]]], "str | Handoff | None"]


def summariser(
    provider: Provider,
    settings: Settings,
    system: str = "",
    cancel: threading.Event | None = None,
) -> Summariser | None:
    """The session's summariser, or None when `settings.context.summarise` is off.

    `system`: the session's own system message, sent first as in every other request of the
    session (one system message per session: the server's cached prefix holds, and a reader of
    the requests sees one session); the handoff's own instructions travel in the user message.
    `cancel`: the session's interrupt flag. Without it the person's Esc waited for the whole
    handoff (up to summary_max_tokens generated) before the turn saw it."""
    if not settings.context.summarise:
        return None
    cap = settings.context.summary_max_tokens

    def summarise(messages: list[dict[str, Any]]) -> str | None:
        ask = "\n\n".join([HANDOFF_SYSTEM, transcript(messages), HANDOFF_PROMPT])
        request = [
            {"role": "system", "content": system or HANDOFF_SYSTEM},
            {"role": "user", "content": inert_markers(ask)},  # a transcript of what tools said
        ]
        try:
            done = provider.complete(request, [], max_tokens=cap, cancel=cancel)
        except ProviderError:
            return None
        if done.finish_reason == "length" or not done.content.strip():
            return None
        return done.content.strip()

    return summarise


def transcript(messages: list[dict[str, Any]]) -> str:
    """The rounds as plain text: who said what, which call ran, what it returned."""
    lines = ["Transcript of the work so far:"]
    for m in messages:
        role = m.get("role", "")
        content = m.get("content") or ""
        if not isinstance(content, str):
            content = json.dumps(content, ensure_ascii=False)
        calls = m.get("tool_calls") or []
        if role == "assistant" and calls:
            for tc in calls:
                fn = tc.get("function") or {}
                args = str(fn.get("arguments") or "")
                lines.append(f"[agent called {fn.get('name', '?')}] {_cut(args)}")
        elif role == "tool":
            lines.append(f"[result] {_cut(content)}")
        elif role == "assistant":
            lines.append(f"[agent] {_cut(content)}")
        else:
            lines.append(f"[{role}] {_cut(content)}")
    return "\n".join(lines)


def _cut(text: str) -> str:
    return text if len(text) <= MESSAGE_CHARS else text[:MESSAGE_CHARS] + " …[cut]"


#: The reply a continuation summary may take in constrained mode: the answer action, no tool.
ANSWER_ONLY = {
    "type": "json_schema",
    "json_schema": {
        "schema": {
            "type": "object",
            "properties": {"answer": {"type": "string"}},
            "required": ["answer"],
        }
    },
}
CONTINUE_PROMPT = f"{HANDOFF_SYSTEM} {HANDOFF_PROMPT} Give it as your answer; call no tool."
#: How the continuation's question opens: the cache probe (testing/cache_probe.py) knows it by this.
CONTINUE_HEAD = (
    "[harness] The context window is full: the older part of this conversation is removed after "
    "this message."
)
#: Below this many tokens of room a handoff is not worth asking for.
MIN_SUMMARY_TOKENS = 128


def continue_ask(task: str) -> dict[str, Any]:
    """The question a continuation appends. It stays in the window after the compaction (the
    handoff answers it), so it carries the person's request verbatim: the rounds that held it
    may be the ones dropped."""
    said = task.strip() or "(none)"
    return {
        "role": "user",
        "content": f"{CONTINUE_HEAD}\nThe person's request, verbatim:\n{said}\n\n{CONTINUE_PROMPT}",
    }


def continuation(
    provider: Provider,
    context: ContextConfig,
    request: list[dict[str, Any]],
    schemas: list[dict[str, Any]],
    room: int,
    cancel: threading.Event | None = None,
    task: str = "",
) -> Summariser | None:
    """The summary as the next message of the conversation the server has cached: the same
    messages and tools (so the same rendered prompt), one more user message asking for the
    handoff. The server reads only that question; the transcript way sent the dropped rounds
    under a new prompt, re-read them (~1.2k tokens a summary on a 4k window, measured) and, on a
    one-slot server, evicted the conversation, so the request after the compaction re-read all it
    kept. The question and the answer stay in the window (context/window.py's Handoff), where the
    server finds them in its cache too. In constrained mode the reply is held to the answer
    action; in native mode the tools are rendered in the prompt and stay offered (dropping them
    would change the prefix), the question says to call none, and a reply that calls one is no
    handoff. None where this cannot work: summaries off, no tools (nothing the transcript way
    would cost the cache), or too little room left in the window for the handoff."""
    if not context.summarise or not schemas or room < MIN_SUMMARY_TOKENS:
        return None
    try:
        constrained = provider.resolved_mode() == "constrained"
    except Exception:  # noqa: BLE001 - a flaky /props: the plain question, no format
        constrained = False
    cap = min(context.summary_max_tokens, room)
    asked = continue_ask(task)
    ask = [*request, asked]
    extra: dict[str, Any] | None = {"response_format": ANSWER_ONLY} if constrained else None

    def summarise(_dropped: list[dict[str, Any]]) -> Handoff | None:
        try:
            done = provider.complete(ask, schemas, max_tokens=cap, cancel=cancel, extra=extra)
        except ProviderError:
            return None
        if done.finish_reason == "length" or done.tool_calls or not done.content.strip():
            return None
        return Handoff(asked=asked, answer=done.content.strip())

    return summarise
