"""The cache probe on the real stack (reference/context.md): a long scripted turn whose every
request is replayed to the real llama-server (SmolLM2-135M, -c 4096). Between compactions the
server must reuse the whole previous prompt from its cache and evaluate only what was appended.
Token counts with a margin, never timings."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

from cerveau_tui.bus import Emitter, Recorder
from cerveau_tui.config import load_settings
from cerveau_tui.loop.approver import ApproveAll
from cerveau_tui.provider.llama import LlamaProvider
from cerveau_tui.session import build_session
from cerveau_tui.testing.cache_probe import CacheProbe
from cerveau_tui.testing.scripted_server import ScriptedServer

pytestmark = pytest.mark.e2e

ROUNDS = 14
#: Tokens of the previous prompt the server may re-evaluate and still count as reused: it always
#: evaluates at least one, and the template may close the previous turn differently.
MARGIN = 16
# Numbered: one sentence written out 20 times is a reply the repetition guard cuts.
PARAGRAPH = " ".join(
    f"{n}. The prefix stays byte-identical between compactions." for n in range(20)
)


@pytest.fixture(scope="module")
def real_4k() -> Iterator[str]:
    from cerveau_tui.stack.paths import stack_paths
    from cerveau_tui.stack.provision import ProvisionError, locate
    from cerveau_tui.stack.server import managed_for

    paths = stack_paths()
    try:
        loc = locate(paths)
    except ProvisionError:
        loc = None
    if loc is None or not loc.ready or loc.binary is None or loc.model is None:
        msg = "real llama-server stack missing; run `python -m cerveau_tui.stack provision`"
        if os.environ.get("CERVEAU_REQUIRE_E2E") == "1":
            pytest.fail(msg)
        pytest.skip(msg)
    server = managed_for(paths, loc.binary, loc.model, n_ctx=4096)
    server.start(timeout_s=120.0)
    try:
        yield server.url
    finally:
        server.stop()


def write(i: int) -> dict[str, Any]:
    args = {"path": f"f{i:02d}.txt", "content": PARAGRAPH}
    return {"tool_calls": [{"name": "write_file", "arguments": args}]}


SCRIPT = {"responses": [*(write(i) for i in range(ROUNDS)), {"content": "done"}]}
ASK = "Write the notes f00.txt to f13.txt, then say done."


def settings_for(tmp_path: Any) -> Any:
    env = {
        "CERVEAU_CONTEXT__SUMMARISE": "false",  # the brief: no slow 135M summary in a test
        "CERVEAU_LIMITS__MAX_ITERATIONS": str(ROUNDS + 5),
        "CERVEAU_TEMPERATURE": "0",
    }
    return load_settings(tmp_path, environ=env, user_config=tmp_path / "none.toml")


def test_between_compactions_the_real_server_evaluates_only_the_appended_tokens(real_4k, tmp_path):
    settings = settings_for(tmp_path)
    bus = Emitter()
    rec = Recorder(bus)
    with ScriptedServer(SCRIPT, n_ctx=1 << 20) as srv, CacheProbe(real_4k, srv.url) as probe:
        s = build_session(
            settings, bus=bus, approver=ApproveAll(), provider=LlamaProvider(probe.url)
        )
        out = s.engine.run(ASK)
        s.close()
    assert out.reason == "completed", out.message
    chats = [r for r in probe.records if r.kind == "chat"]
    assert all(r.status == 200 for r in chats), "the real server refused a request"
    compactions = len(rec.of("compacted"))
    assert compactions >= 1, "the turn never filled the window: it proves nothing"
    reused = broken = 0
    for prev, cur in zip(chats, chats[1:], strict=False):
        if cur.cache_n >= prev.prompt_n + prev.cache_n - MARGIN:
            reused += 1
        else:
            broken += 1
    # Only a compaction may break the cache, and each breaks it once.
    assert broken <= compactions, [(r.prompt_n, r.cache_n) for r in chats]
    assert reused >= len(chats) - 1 - compactions


def test_after_a_compaction_the_real_server_reads_only_what_is_new(real_4k, tmp_path):
    """Issue 36: the compaction drops one block after the system message and keeps the rest
    byte-identical, and the app's server runs with --cache-reuse: the request after it reads what
    the history gained and the block that stands for the dropped rounds, not the kept part again
    (before: 2.4-3.5k tokens re-read at each compaction on an 8k window)."""
    from cerveau_tui.context.pack import message_tokens
    from cerveau_tui.protocol import EventType

    settings = settings_for(tmp_path)
    bus = Emitter()
    with ScriptedServer(SCRIPT, n_ctx=1 << 20) as srv, CacheProbe(real_4k, srv.url) as probe:
        s = build_session(
            settings, bus=bus, approver=ApproveAll(), provider=LlamaProvider(probe.url)
        )
        count, history = s.engine.count_tokens, s.engine.history
        sent: list[int] = []  # len(history) at each reply
        after: list[tuple[int, int, int]] = []  # (chat index, history length, block tokens)

        def seen(ev: Any) -> None:
            if ev.type == EventType.USAGE and ev.payload.get("prompt_tokens"):
                sent.append(len(history))
            elif ev.type == EventType.COMPACTED:
                w = s.engine.loop_state.window
                block = sum(message_tokens(m, count) for m in w.frozen[w.block_start :])
                chats = sum(1 for r in probe.records if r.kind == "chat")
                after.append((chats, len(history), block))

        bus.subscribe(seen)
        out = s.engine.run(ASK)
        messages = list(history)
        s.close()
    assert out.reason == "completed", out.message
    chats = [r for r in probe.records if r.kind == "chat"]
    assert after, "the turn never filled the window: it proves nothing"
    for i, length, block in after:
        appended = sum(message_tokens(m, count) for m in messages[sent[i - 1] : length])
        reread = chats[i].prompt_n - appended - block
        assert reread <= MARGIN * 4, (i, chats[i], appended, block)


def test_doctor_measures_that_the_real_server_shifts_a_kept_part(real_4k):
    from cerveau_tui.stack.capabilities import cache_reuse
    from cerveau_tui.stack.keys import headers_for

    assert cache_reuse(real_4k, headers_for(real_4k)) == "yes"
