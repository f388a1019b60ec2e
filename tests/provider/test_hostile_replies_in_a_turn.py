"""Hostile replies seen from the loop: a turn ends with a reason, never an internal error.

The provider hands the loop arguments that either parse or fail with a ValueError; these tests
hold it to that through a real session, since the loop is what would have crashed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cerveau_tui.bus import Emitter, Recorder
from cerveau_tui.config import load_settings
from cerveau_tui.provider.llama import LlamaProvider
from cerveau_tui.provider.types import ReplyLimits
from cerveau_tui.session import build_session
from cerveau_tui.testing import wire
from cerveau_tui.testing.scripted_server import ScriptedServer

DEEP = '{"path": ' + "[" * 100_000 + "]" * 100_000 + "}"
# The same depth streamed natively, its brackets told apart by their numbers: a run of one
# character is cut as a repetition while it streams (loop/guards/repetition.py), before the parser
# ever sees it. Repeating every 1,000 levels (4,890 characters), more than the watch's longest span.
DEEP_NUMBERED = (
    '{"path": '
    + "".join(f"[{i % 1000}," for i in range(100_000))
    + "[]"
    + "".join(f",{i % 1000}]" for i in reversed(range(100_000)))
    + "}"
)
#: Endless, but never one span of the watch's length again and again (as above).
ENDLESS = " ".join(f"more{i}" for i in range(80)) + " "


def run_turn(tmp_path: Path, entry: dict[str, Any], **provider_kw: Any) -> tuple[Any, Recorder]:
    script = {"responses": [entry, {"content": "done"}]}
    with ScriptedServer(script, piece=4096) as srv:
        settings = load_settings(tmp_path, environ={}, user_config=tmp_path / "none.toml")
        bus = Emitter()
        rec = Recorder(bus)
        session = build_session(settings, bus=bus, provider=LlamaProvider(srv.url, **provider_kw))
        try:
            out = session.engine.run("go")
        finally:
            session.close()
    return out, rec


def sse_line(delta: dict[str, Any], finish: str | None = None) -> str:
    return wire.sse(wire.delta_chunk(delta, "chatcmpl-x", 0, finish)).decode().strip()


def test_native_arguments_100k_deep_are_answered_as_invalid_arguments(tmp_path: Path) -> None:
    entry = {"tool_calls": [{"name": "read_file", "arguments": DEEP_NUMBERED}]}
    out, rec = run_turn(tmp_path, entry, action_mode="native")
    results = [e.payload for e in rec.of("tool_result")]
    assert out.reason == "completed"
    assert [r["ok"] for r in results] == [False] and "invalid arguments" in results[0]["output"]


def test_a_constrained_action_100k_deep_is_answered_as_invalid_arguments(tmp_path: Path) -> None:
    action = '{"tool": "read_file", "arguments": ' + DEEP + "}"
    entry = {"raw_sse": [sse_line({"content": action}), sse_line({}, "stop"), "data: [DONE]"]}
    out, rec = run_turn(tmp_path, entry, action_mode="constrained")
    results = [e.payload for e in rec.of("tool_result")]
    assert out.reason == "completed"
    assert [r["ok"] for r in results] == [False] and "invalid arguments" in results[0]["output"]


def test_endless_output_ends_the_turn_with_a_size_error_a_person_can_read(tmp_path: Path) -> None:
    limits = ReplyLimits(max_reply_bytes=256 * 1024)
    out, rec = run_turn(tmp_path, {"endless": ENDLESS}, limits=limits, max_retries=0)
    errors = [e.payload for e in rec.of("error")]
    assert out.reason == "error"
    assert [e["error_class"] for e in errors] == ["too_large"]
    assert "more than 256 KB" in errors[0]["message"]
