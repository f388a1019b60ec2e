"""A streaming reply reports where it stands: tokens so far, the prompt read (llama-server's
`prompt_progress`), and the tool call being written, natively and as a constrained JSON action."""

from __future__ import annotations

from cerveau_tui.bus import Emitter, Recorder
from cerveau_tui.config import load_settings
from cerveau_tui.loop.approver import ApproveAll
from cerveau_tui.loop.events import PROGRESS_EVERY, ProgressEvents
from cerveau_tui.provider.constrained import ActionProgress
from cerveau_tui.provider.llama import LlamaProvider
from cerveau_tui.provider.sse import StreamAssembler
from cerveau_tui.provider.types import Delta
from cerveau_tui.session import build_session
from cerveau_tui.testing.scripted_server import ScriptedServer

from .test_llama_provider import ASK, TOOLS, provider

BIG = {"path": "parser.py", "content": "x = 1\n" * 300}


def test_every_request_asks_for_prompt_progress() -> None:
    with ScriptedServer({"responses": [{"content": "ok"}]}) as srv:
        provider(srv.url).complete(ASK, TOOLS, max_tokens=16)
    assert srv.requests[0]["return_progress"] is True


def test_prompt_progress_chunks_are_read_as_processed_of_total() -> None:
    asm = StreamAssembler()
    asm.feed({"choices": [], "prompt_progress": {"total": 4000, "cache": 0, "processed": 1200}})
    assert asm.moved
    d = asm.progress(Delta())
    assert (d.prompt_done, d.prompt_total) == (1200, 4000)


def test_native_tool_arguments_report_their_growing_size() -> None:
    script = {"responses": [{"tool_calls": [{"name": "write_file", "arguments": BIG}]}]}
    with ScriptedServer(script, piece=20) as srv:
        seen: list[Delta] = []
        provider(srv.url, action_mode="native").complete(
            ASK, TOOLS, max_tokens=4096, on_delta=seen.append
        )
    sizes = [d.tool_chars for d in seen if d.tool_name == "write_file"]
    assert len(sizes) > 10 and sizes == sorted(sizes) and sizes[-1] > 1500
    assert '"parser.py"' in seen[-1].tool_head and seen[-1].tokens >= len(sizes)


def test_a_constrained_action_reports_the_call_as_it_streams() -> None:
    script = {"responses": [{"tool_calls": [{"name": "write_file", "arguments": BIG}]}]}
    with ScriptedServer(script, supports_tools=False, piece=20) as srv:
        seen: list[Delta] = []
        done = provider(srv.url).complete(ASK, TOOLS, max_tokens=4096, on_delta=seen.append)
    assert done.via == "constrained" and all(d.content == "" for d in seen)
    named = [d for d in seen if d.tool_name == "write_file"]
    assert named and named[-1].tool_chars > 1500 and '"parser.py"' in named[-1].tool_head


def test_action_progress_names_the_tool_only_once_its_arguments_start() -> None:
    p = ActionProgress()
    for piece in ['{"to', 'ol": "wri', 'te_file", "argu', 'ments": {"path": "a.py"', ', "c']:
        p.feed(piece)
    assert (
        p.name == "write_file"
        and p.head.startswith('{"path": "a.py"')
        and p.chars == len(p.head) == 19
    )


def test_an_answer_is_not_mistaken_for_a_call() -> None:
    p = ActionProgress()
    p.feed('{"answer": "the tool is fine"}')
    assert p.name == "" and p.chars == 0


def test_progress_is_throttled_by_tokens_not_by_a_clock() -> None:
    bus = Emitter()
    rec = Recorder(bus)
    progress = ProgressEvents(bus)
    for n in range(1, 3 * PROGRESS_EVERY + 1):
        progress(Delta(tokens=n))
    assert [e.payload["tokens"] for e in rec.of("reply_progress")] == [
        1,
        1 + PROGRESS_EVERY,
        1 + 2 * PROGRESS_EVERY,
    ]
    progress(Delta(tokens=50, tool_name="bash"))  # a new call is shown at once
    assert rec.of("reply_progress")[-1].payload["tool_name"] == "bash"


def test_a_turn_puts_reply_progress_on_the_bus(tmp_path) -> None:
    script = {
        "responses": [
            {"tool_calls": [{"name": "write_file", "arguments": BIG}]},
            {"content": "done"},
        ]
    }
    with ScriptedServer(script, piece=20) as srv:
        settings = load_settings(tmp_path, environ={}, user_config=tmp_path / "n")
        bus = Emitter()
        rec = Recorder(bus)
        s = build_session(settings, bus=bus, approver=ApproveAll(), provider=LlamaProvider(srv.url))
        s.engine.run("write parser.py")
        s.close()
    writing = [e.payload for e in rec.of("reply_progress") if e.payload.get("tool_name")]
    assert writing and writing[-1]["tool_name"] == "write_file"
    assert writing[-1]["tool_chars"] > writing[0]["tool_chars"]
