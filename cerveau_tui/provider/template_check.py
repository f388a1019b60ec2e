"""Does the model's chat template keep earlier turns byte-stable? Asked of the server itself.

The prefix cache holds only while each request's rendered prompt begins with the previous one.
Some templates rewrite earlier turns when a conversation grows (Qwen3 and DeepSeek R1 drop the
reasoning of every assistant turn before the last user message); peers' users found it only by
reading the wire with mitmproxy. So `cerveau doctor` renders a small conversation with and without
its last turn (`POST /apply-template`, `POST /tokenize`) for each kind of earlier message, and
says which kinds the template rewrites and how many tokens that re-reads.

A probe is `earlier` (a request's messages, ending where the model is to reply) and `later`
(the same conversation one turn on). Stable: the render of `earlier` is a prefix of the render of
`later`. A probe the server could not render is "unavailable", never "stable".
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

Post = Callable[[str, dict[str, Any]], dict[str, Any]]

_SYS = {"role": "system", "content": "You are a coding agent."}
_U1 = {"role": "user", "content": "List the files."}
_CALL = {
    "id": "call_1",
    "type": "function",
    "function": {"name": "list_files", "arguments": '{"path": "."}'},
}
_TOOL = {"role": "tool", "tool_call_id": "call_1", "content": "a.py\nb.py"}
_NEXT = [
    {"role": "assistant", "content": "There are two files."},
    {"role": "user", "content": "Thanks. Now read a.py."},
]

#: (kind, earlier): `later` is earlier + _NEXT.
PROBES: list[tuple[str, list[dict[str, Any]]]] = [
    ("plain turns", [_SYS, _U1, {"role": "assistant", "content": "Sure."}, _U1]),
    (
        "tool calls and results",
        [_SYS, _U1, {"role": "assistant", "content": "", "tool_calls": [_CALL]}, _TOOL],
    ),
    (
        "reasoning",
        [
            _SYS,
            _U1,
            {
                "role": "assistant",
                "content": "",
                "reasoning_content": "The person wants the files; list them.",
                "tool_calls": [_CALL],
            },
            _TOOL,
        ],
    ),
]

#: What the harness does about a rewritten kind (said by doctor beside the finding).
WHAT_WE_DO = {
    "reasoning": (
        "the harness sends no reasoning back (the history keeps content and tool calls), so a "
        "template that drops it costs at most the last reply's tokens per request"
    ),
    "tool calls and results": (
        "nothing the harness can change: each such request re-reads from the rewritten turn; "
        "the cache_miss notice names it"
    ),
    "plain turns": (
        "nothing the harness can change: each such request re-reads from the rewritten turn; "
        "the cache_miss notice names it"
    ),
}


@dataclass(frozen=True)
class ProbeResult:
    kind: str
    state: str  # "stable" | "rewritten" | "unavailable"
    reread_tokens: int = 0  # tokens of the earlier render a request re-reads (rewritten only)
    detail: str = ""


def check_template(post: Post) -> list[ProbeResult]:
    return [_probe(post, kind, earlier) for kind, earlier in PROBES]


def _probe(post: Post, kind: str, earlier: list[dict[str, Any]]) -> ProbeResult:
    try:
        before = _render(post, earlier)
        after = _render(post, [*earlier, *_NEXT])
    except (ValueError, KeyError, OSError) as exc:
        return ProbeResult(kind, "unavailable", detail=str(exc)[:200])
    if after.startswith(before):
        return ProbeResult(kind, "stable")
    common = _common_prefix(before, after)
    try:
        total = len(_tokens(post, before))
        kept = len(_tokens(post, before[:common]))
    except (ValueError, KeyError, OSError):
        total = kept = 0
    snippet = before[common : common + 60].replace("\n", "\\n")
    return ProbeResult(kind, "rewritten", max(0, total - kept), f"changes at: {snippet!r}")


def _render(post: Post, messages: list[dict[str, Any]]) -> str:
    prompt = post("/apply-template", {"messages": messages}).get("prompt")
    if not isinstance(prompt, str):
        raise ValueError("no prompt in the /apply-template answer")
    return prompt


def _tokens(post: Post, text: str) -> list[Any]:
    tokens = post("/tokenize", {"content": text}).get("tokens")
    if not isinstance(tokens, list):
        raise ValueError("no tokens in the /tokenize answer")
    return tokens


def _common_prefix(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def http_post(base_url: str, timeout_s: float = 30.0) -> Post:
    """A Post for a llama-server at base_url (loopback never through a proxy)."""
    import httpx

    from ..stack.keys import headers_for as server_headers

    base = base_url.rstrip("/")
    base = base[: -len("/v1")] if base.endswith("/v1") else base
    local = httpx.URL(base).host in ("127.0.0.1", "localhost", "::1")

    def post(path: str, body: dict[str, Any]) -> dict[str, Any]:
        try:
            with httpx.Client(
                trust_env=not local, timeout=timeout_s, headers=server_headers(base)
            ) as c:
                r = c.post(base + path, json=body)
        except httpx.HTTPError as exc:
            raise OSError(f"{path}: {exc}") from exc
        if r.status_code != 200:
            raise ValueError(f"{path}: HTTP {r.status_code}: {r.text[:160]}")
        out = r.json()
        if not isinstance(out, dict):
            raise ValueError(f"{path}: not an object")
        return out

    return post
