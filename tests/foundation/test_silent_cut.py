"""A server that cuts the prompt and says nothing is caught (issue 36): the rules of
loop/silent_cut.py, then whole sessions on the scripted server cutting prompts from the left,
as a plain OpenAI-compatible server and as Ollama (provider/ollama.py, its /api/show stubbed)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cerveau_tui.bus import Emitter
from cerveau_tui.config import load_settings
from cerveau_tui.loop.silent_cut import FLOOR, silent_cut
from cerveau_tui.provider.llama import LlamaProvider
from cerveau_tui.session import build_session
from cerveau_tui.testing.scripted_server import ScriptedServer

# --- the rules, pure ----------------------------------------------------------------------------


def test_a_server_reading_more_than_was_sent_is_no_cut() -> None:
    assert silent_cut(1000, 1200, n_ctx=8192, reply_cap=512) is None


def test_a_shortfall_within_the_tolerance_is_no_cut() -> None:
    """Our count may be an estimate: a fifth less, and the floor, are counting, not a cut."""
    assert silent_cut(1000, 800 - FLOOR + 1, n_ctx=8192, reply_cap=512) is None


def test_a_prompt_read_as_a_third_is_a_cut_and_the_window_becomes_what_it_keeps() -> None:
    cut = silent_cut(6000, 2000, n_ctx=8192, reply_cap=512)
    assert cut is not None and cut.window == 2512
    assert "read 2,000 prompt tokens of the ~6,000 sent" in cut.text()


def test_the_window_never_passes_the_setting_the_server_states() -> None:
    cut = silent_cut(6000, 2000, n_ctx=8192, reply_cap=512, setting=2048, said="Ollama's num_ctx")
    assert cut is not None and cut.window == 2048 and "(Ollama's num_ctx)" in cut.text()


# --- sessions on a server that cuts -----------------------------------------------------------

#: Numbered lines, not one character 3,000 times, which the repetition guard cuts.
TEXT = "".join(
    f"line {i}: the note grows the prompt by its own words, {i * 7} of them\n" for i in range(50)
)
NOTES = [
    {"tool_calls": [{"name": "write_file", "arguments": {"path": f"n{i}.txt", "content": TEXT}}]}
    for i in range(5)
]


def _run(tmp_path: Path, **srv: Any) -> tuple[list[dict[str, Any]], list[dict[str, Any]], Any]:
    ws = tmp_path / "ws"
    ws.mkdir()
    settings = load_settings(
        ws,
        flags={"done": {"gate": "off"}, "max_tokens": 512},
        environ={},
        user_config=tmp_path / "none.toml",
    )
    bus = Emitter()
    events: list[dict[str, Any]] = []
    bus.subscribe(lambda e: events.append({"type": str(e.type), "payload": e.payload}))
    script = [*NOTES, {"content": "done"}]
    with ScriptedServer(script, n_ctx=1 << 20, **srv) as server:
        provider = LlamaProvider(server.url, n_ctx=settings.n_ctx)
        s = build_session(settings, bus=bus, provider=provider)
        try:
            s.engine.run("write five notes")
            n_ctx = s.engine.loop_state.cache.window
        finally:
            s.close()
        return list(server.requests), events, n_ctx


def _cuts(events: list[dict[str, Any]]) -> list[str]:
    return [
        e["payload"]["text"]
        for e in events
        if e["type"] == "notice" and e["payload"].get("source") == "server_cut"
    ]


def test_a_server_cutting_from_the_left_is_said_and_the_window_shrinks_to_it(
    tmp_path: Path,
) -> None:
    requests, events, window = _run(tmp_path, keeps=1500)
    said = _cuts(events)
    assert said and "it cut the prompt silently" in said[0]
    assert window is not None and window <= 1500 + 512
    compacted = [e for e in events if e["type"] == "compacted"]
    assert compacted, "the next request was compacted to the window the server keeps"
    assert "options" not in requests[0]  # not Ollama: nothing of Ollama's is sent


def test_a_server_that_keeps_everything_is_never_said_to_cut(tmp_path: Path) -> None:
    _, events, window = _run(tmp_path)
    assert _cuts(events) == [] and window is None


def test_ollama_is_asked_its_num_ctx_which_becomes_the_window_and_each_request_states_it(
    tmp_path: Path,
) -> None:
    requests, events, _ = _run(tmp_path, extras=False, ollama={"num_ctx": 2048}, keeps=2048)
    assert all(r["options"] == {"num_ctx": 2048} for r in requests)
    started = [e["payload"] for e in events if e["type"] == "session_started"]
    assert started and started[0]["n_ctx"] == 2048
    # The window was Ollama's from the start: compacted to fit, never cut.
    assert _cuts(events) == []


def test_ollama_without_a_stated_num_ctx_is_caught_and_named(tmp_path: Path) -> None:
    requests, events, window = _run(tmp_path, extras=False, ollama={}, keeps=1024)
    assert requests[0]["options"]["num_ctx"] > 1024  # ours, stated: the OpenAI route ignored it
    said = _cuts(events)
    assert said and "Ollama's num_ctx (its default, OLLAMA_CONTEXT_LENGTH)" in said[0]
    assert window is not None and window <= 1024 + 512
