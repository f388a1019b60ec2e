"""What the harness relies on, checked once when it starts its own server, with a line for each
thing missing.

Switching the embedded server from a source build to a wheel (issue 34) changed who compiled it
and with which options; a feature the harness uses silently gone would show as a slow resume
(no slot restore), a status line stuck on "processing" (no prompt progress) or token counts off
(no /tokenize) long after the start. Each check is one cheap request on a fresh server; the whole
set takes well under a second with the small model.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

#: `--cache-reuse N` on every server we start (server.py) and `n_cache_reuse` in every request
#: (provider/llama.py; a `--server` recent enough takes it there). After a compaction the request
#: is the cached one with its oldest rounds deleted (context/window.py), and llama-server shifts
#: the kept part's KV into place instead of re-reading it, for any run of at least N tokens that
#: matches. The kept part is one run of hundreds to thousands of tokens (at least the newest
#: round), a handoff's question and answer one of a few hundred; 128 reuses both, and a shorter
#: N would let a tool call's header matched somewhere in the dropped part (~10-40 tokens) be
#: shifted into a context it was not computed in. Measured: benchmarks/context.py (issue 36).
CACHE_REUSE_TOKENS = 128

#: The filename a check saves slot 0 under; removed again at once.
PROBE_SLOT_FILE = "cerveau-capability-probe.bin"


@dataclass
class Capabilities:
    n_ctx: int | None = None
    native_tools: bool = False
    have: list[str] = field(default_factory=list)
    #: One line per missing capability: what is missing and what the person will notice.
    missing: list[str] = field(default_factory=list)

    def summary(self) -> str:
        if self.missing:
            return "missing: " + "; ".join(self.missing)
        return "capabilities: " + ", ".join(self.have)


def _constrained_body() -> dict[str, Any]:
    # How the harness gets tool calls from a template without tool support (llama-server.md:
    # json_schema constrained every reply); one token is enough to see it accepted.
    schema = {"type": "object", "properties": {"tool": {"const": "bash"}}, "required": ["tool"]}
    return {
        "messages": [{"role": "user", "content": "hi"}],
        "max_tokens": 1,
        "stream": True,
        "return_progress": True,
        "response_format": {"type": "json_schema", "json_schema": {"schema": schema}},
    }


def check(
    url: str,
    headers: dict[str, str],
    slot_dir: Path | None,
    client_factory: Callable[[], httpx.Client] | None = None,
) -> Capabilities:
    caps = Capabilities()
    # No kept-alive connection: after the streamed reply the server may close its end, and the
    # next request on the pooled connection failed "Server disconnected without sending a
    # response" (seen under load as a missing slot save/restore).
    fresh = httpx.Limits(max_keepalive_connections=0)
    client = (
        client_factory or (lambda: httpx.Client(trust_env=False, timeout=30.0, limits=fresh))
    )()
    with client:
        _props(client, url, headers, caps)
        _tokenize(client, url, headers, caps)
        _stream(client, url, headers, caps)
        _slots(client, url, headers, caps, slot_dir)
        _control(client, url, headers, caps)
        # The probe's "hi" left its prompt in slot 0: the harness's first request then found 6
        # tokens of the template's preamble cached (test_slot_resume_real's control saw
        # cache_n 6, not 0). A fresh server starts with an empty slot.
        try:
            client.post(url + "/slots/0", params={"action": "erase"}, headers=headers)
        except httpx.HTTPError:
            pass
    return caps


def _props(c: httpx.Client, url: str, h: dict[str, str], caps: Capabilities) -> None:
    try:
        props = c.get(url + "/props", headers=h).json()
        n_ctx = props.get("default_generation_settings", {}).get("n_ctx")
    except (httpx.HTTPError, ValueError, AttributeError):
        props, n_ctx = {}, None
    if isinstance(n_ctx, int) and n_ctx > 0:
        caps.n_ctx = n_ctx
        caps.have.append(f"n_ctx {n_ctx}")
    else:
        caps.missing.append("/props n_ctx (the context budget falls back to the configured n_ctx)")
    tmpl = props.get("chat_template_caps") if isinstance(props, dict) else None
    caps.native_tools = bool(isinstance(tmpl, dict) and tmpl.get("supports_tools"))


def _tokenize(c: httpx.Client, url: str, h: dict[str, str], caps: Capabilities) -> None:
    try:
        tokens = c.post(url + "/tokenize", json={"content": "hello"}, headers=h).json()["tokens"]
        ok = isinstance(tokens, list) and len(tokens) > 0
    except (httpx.HTTPError, ValueError, KeyError, TypeError):
        ok = False
    if ok:
        caps.have.append("tokenize")
    else:
        caps.missing.append("/tokenize (token counts are estimated, not exact)")


def _stream(c: httpx.Client, url: str, h: dict[str, str], caps: Capabilities) -> None:
    status, progress = 0, False
    try:
        with c.stream(
            "POST", url + "/v1/chat/completions", json=_constrained_body(), headers=h
        ) as r:
            status = r.status_code
            for line in r.iter_lines():
                progress = progress or '"prompt_progress"' in line
    except httpx.HTTPError:
        pass
    mode = "native" if caps.native_tools else "constrained"
    if status == 200:
        caps.have.append(f"tool calls ({mode})")
    else:
        caps.missing.append(f"tool calls: a json_schema reply was refused (HTTP {status})")
    if progress:
        caps.have.append("prompt progress")
    elif status == 200:
        caps.missing.append("prompt progress (the status line says only 'processing')")


def _slots(
    c: httpx.Client, url: str, h: dict[str, str], caps: Capabilities, slot_dir: Path | None
) -> None:
    if slot_dir is None:
        return
    why = ""
    try:
        for action in ("save", "restore"):
            r = c.post(
                url + "/slots/0", params={"action": action}, json={"filename": PROBE_SLOT_FILE},
                headers=h,
            )  # fmt: skip
            if r.status_code != 200:
                why = f"{action}: HTTP {r.status_code} {r.text[:120]}"
                break
            # The file must land IN the folder: the wheel's server joined the path without a
            # separator and wrote beside it (wheel_server.slot_dir adds it).
            if action == "save" and not (slot_dir / PROBE_SLOT_FILE).is_file():
                why = f"the save did not land in {slot_dir}"
                break
    except httpx.HTTPError as exc:
        why = f"{type(exc).__name__}: {exc}"
    finally:
        (slot_dir / PROBE_SLOT_FILE).unlink(missing_ok=True)
    if not why:
        caps.have.append("slot save/restore")
    else:
        caps.missing.append(
            f"slot save/restore ({why}; a resumed session reads its whole history again)"
        )


def _control(c: httpx.Client, url: str, h: dict[str, str], caps: Capabilities) -> None:
    try:
        r = c.post(
            url + "/v1/chat/completions/control",
            json={"id": "cerveau-capability-probe", "action": "reasoning_end"}, headers=h,
        )  # fmt: skip
        ok = r.status_code != 404 and isinstance(r.json(), dict)
    except (httpx.HTTPError, ValueError):
        ok = False
    if ok:
        caps.have.append("reasoning control")
    else:
        caps.missing.append("reasoning control (stopping a model's thinking is done client-side)")


def _numbered(word: str, n: int) -> str:
    return " ".join(f"{word} {i}." for i in range(n))


def cache_reuse(url: str, headers: dict[str, str], client: httpx.Client | None = None) -> str:
    """Whether the server shifts a kept part into place after a block before it was dropped, as
    it must after a compaction: "yes", "no", or "unknown" (it sent no cache figures, or refused).
    Measured, since llama-server's /props does not say: two short requests, the second the
    first without its first message and with one more at its end (~300 tokens read in all)."""
    sys_msg = {"role": "system", "content": "cerveau doctor: a cache reuse probe."}
    dropped = {"role": "user", "content": _numbered("dropped", 30)}
    kept = {"role": "user", "content": _numbered("kept", 2 * CACHE_REUSE_TOKENS // 3)}
    new = {"role": "user", "content": "new"}
    own = client is None
    c = client or httpx.Client(trust_env=False, timeout=120.0)
    try:
        figures = []
        for messages in ([sys_msg, dropped, kept], [sys_msg, kept, new]):
            body = {
                "messages": messages, "max_tokens": 1, "n_predict": 1, "temperature": 0,
                "cache_prompt": True, "n_cache_reuse": CACHE_REUSE_TOKENS,
            }  # fmt: skip
            r = c.post(url + "/v1/chat/completions", json=body, headers=headers)
            t = r.json().get("timings") if r.status_code == 200 else None
            if not isinstance(t, dict) or not isinstance(t.get("cache_n"), int):
                return "unknown"
            figures.append(t["cache_n"])
    except (httpx.HTTPError, ValueError, AttributeError):
        return "unknown"
    finally:
        if own:
            c.close()
    # The kept message alone is over CACHE_REUSE_TOKENS tokens; the common prefix is the system
    # message (~15 tokens): reused beyond it only when the kept part was shifted.
    return "yes" if figures[1] >= CACHE_REUSE_TOKENS else "no"
