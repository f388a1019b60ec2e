"""Servers other than one llama-server: a router in front of replicas, vLLM, llama-swap.

A router keeps a conversation's KV cache only if every request of it lands on the same replica:
each chat request carries a stable session key header. Without `/props` the window comes from
`/v1/models` (`meta.n_ctx`, vLLM's `max_model_len`), and reasoning arrives as `reasoning` (vLLM)
or `reasoning_content` (llama-server). Each case runs against the scripted server.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from cerveau_tui.bus import Emitter
from cerveau_tui.config import load_settings
from cerveau_tui.loop.approver import ApproveAll
from cerveau_tui.provider.llama import LlamaProvider
from cerveau_tui.provider.types import ProviderError
from cerveau_tui.session import build_session
from cerveau_tui.testing import wire
from cerveau_tui.testing.scripted_server import ScriptedServer

ASK = [{"role": "user", "content": "go"}]


def test_every_chat_request_carries_the_same_session_key() -> None:
    with ScriptedServer({"responses": [{"content": "a"}, {"content": "b"}]}) as srv:
        p = LlamaProvider(srv.url, session_header="x-session-id", session_key=lambda: "s1")
        p.complete(ASK, [], max_tokens=16)
        p.complete(ASK, [], max_tokens=16)
    keys = [h.get("x-session-id") for h in srv.headers]
    assert len(keys) == 2 and keys[0] and keys[0] == keys[1]
    assert keys[0] != "s1"  # a digest: the id names a log on this machine, not for the wire


def test_two_sessions_have_different_keys() -> None:
    keys = []
    with ScriptedServer({"responses": [{"content": "a"}, {"content": "b"}]}) as srv:
        for sid in ("s1", "s2"):
            p = LlamaProvider(srv.url, session_header="x-session-id", session_key=sid.strip)
            p.complete(ASK, [], max_tokens=16)
        keys = [h["x-session-id"] for h in srv.headers]
    assert keys[0] != keys[1]


def test_no_header_name_sends_no_key() -> None:
    with ScriptedServer({"responses": [{"content": "a"}]}) as srv:
        LlamaProvider(srv.url, session_header="", session_key=lambda: "s1").complete(
            ASK, [], max_tokens=16
        )
    assert "x-session-id" not in srv.headers[0]


def test_a_session_sends_its_key_under_the_configured_name(tmp_path: Path) -> None:
    with ScriptedServer({"responses": [{"content": "a"}]}) as srv:
        flags = {"server_url": srv.url, "session_header": "x-affinity"}
        settings = load_settings(tmp_path, environ={}, user_config=tmp_path / "n", flags=flags)
        bus = Emitter()
        s = build_session(settings, bus=bus, approver=ApproveAll())
        s.engine.run("hello")
        s.close()
    chats = srv.headers
    assert chats and all(h.get("x-affinity") for h in chats)
    assert len({h["x-affinity"] for h in chats}) == 1 and bus.session_id not in chats[0].values()


def test_the_default_header_is_x_session_id(tmp_path: Path) -> None:
    settings = load_settings(tmp_path, environ={}, user_config=tmp_path / "n")
    assert settings.session_header == "x-session-id"


def test_without_props_the_window_comes_from_vllms_max_model_len() -> None:
    with ScriptedServer({"responses": []}, extras=False, models={"max_model_len": 32768}) as srv:
        assert LlamaProvider(srv.url).props().n_ctx == 32768


def test_without_props_the_window_comes_from_a_routers_meta_n_ctx() -> None:
    meta = {"meta": {"n_ctx": 16384, "n_ctx_train": 131072}}
    with ScriptedServer({"responses": []}, extras=False, models=meta) as srv:
        assert LlamaProvider(srv.url).props().n_ctx == 16384


def test_the_trained_length_is_not_taken_for_the_window() -> None:
    meta = {"meta": {"n_ctx_train": 131072}}
    with ScriptedServer({"responses": []}, extras=False, models=meta) as srv:
        assert LlamaProvider(srv.url).props().n_ctx is None


def test_props_wins_over_models_when_the_server_has_both() -> None:
    with ScriptedServer({"responses": []}, n_ctx=4096, models={"max_model_len": 32768}) as srv:
        assert LlamaProvider(srv.url).props().n_ctx == 4096


def _raw(*deltas: dict[str, str]) -> list[str]:
    chunks = [wire.delta_chunk(d, "c", 0) for d in deltas]
    chunks.append(wire.delta_chunk({}, "c", 0, "stop"))
    return [wire.sse(c).decode().strip() for c in chunks] + ["data: [DONE]"]


def test_vllms_reasoning_field_is_read_as_reasoning() -> None:
    lines = _raw({"reasoning": "think "}, {"reasoning": "hard"}, {"content": "ok"})
    with ScriptedServer({"responses": [{"raw_sse": lines}]}) as srv:
        done = LlamaProvider(srv.url).complete(ASK, [], max_tokens=16)
    assert (done.reasoning, done.content) == ("think hard", "ok")


def test_llama_servers_reasoning_content_field_is_read_as_reasoning() -> None:
    lines = _raw({"reasoning_content": "think"}, {"content": "ok"})
    with ScriptedServer({"responses": [{"raw_sse": lines}]}) as srv:
        done = LlamaProvider(srv.url).complete(ASK, [], max_tokens=16)
    assert (done.reasoning, done.content) == ("think", "ok")


def test_a_workspace_config_cannot_rename_the_session_header(tmp_path: Path) -> None:
    """The header is sent to the server: a cloned repository must not point it at, say,
    `authorization` without the person's trust."""
    (tmp_path / ".cerveau").mkdir()
    (tmp_path / ".cerveau" / "config.toml").write_text('session_header = "authorization"\n')
    settings = load_settings(tmp_path, environ={}, user_config=tmp_path / "n")
    assert settings.session_header == "x-session-id"
    assert any("session_header" in line for line in settings.workspace_review)


def test_an_error_never_says_the_urls_credentials() -> None:
    """A router behind basic auth (`http://me:secret@host`): every error reaches the chat and
    the session log, so it names the server without them."""
    with ScriptedServer({"responses": [{"error": {"status": 500, "message": "boom"}}]}) as srv:
        plain = srv.url
        with pytest.raises(ProviderError) as info:
            url = plain.replace("http://", "http://me:secret@")
            LlamaProvider(url, max_retries=0).complete(ASK, [], max_tokens=16)
    assert "secret" not in info.value.message and plain in info.value.message
