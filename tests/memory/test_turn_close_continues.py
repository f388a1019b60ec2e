"""Turn close continues the cached conversation (issue 36): the distill request is the turn's last
request as sent, the answer appended, plus ONE instruction; the server evaluates only that. And a
prompt sent while a distill runs starts at once: the distill is dropped and said."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from cerveau_tui.bus import Emitter, Recorder
from cerveau_tui.config import load_settings
from cerveau_tui.loop.cache_ledger import figures_of
from cerveau_tui.memory.turn_close import DISTILL_PROMPT, DROPPED, TURN_CLOSE_SCHEMA
from cerveau_tui.provider.llama import LlamaProvider
from cerveau_tui.provider.types import Completion
from cerveau_tui.session import build_session
from cerveau_tui.testing.scripted_server import ScriptedServer

NOTE = "The entry point is main.py and it reads settings.toml"
WRITE = {"tool_calls": [{"name": "write_file", "arguments": {"path": "main.py", "content": "1\n"}}]}
DISTILL = {"content": '{"facts": ["' + NOTE + '"], "lessons": []}'}


class Figures(LlamaProvider):
    """The provider, keeping the server's own figures (timings) of every reply."""

    def __init__(self, url: str) -> None:
        super().__init__(url)
        self.figures: list[tuple[int, int]] = []  # (prompt_n evaluated, cache_n reused)

    def complete(self, *a: Any, **kw: Any) -> Completion:
        done = super().complete(*a, **kw)
        f = figures_of(done)
        self.figures.append((f.evaluated, f.cached) if f else (-1, -1))
        return done


def _session(tmp_path: Path, provider: LlamaProvider, bus: Emitter | None = None) -> Any:
    settings = load_settings(
        tmp_path, flags={"turn_close": True}, environ={}, user_config=tmp_path / "n"
    )
    return build_session(settings, bus=bus or Emitter(), provider=provider)


def _turn_then_distill(tmp_path: Path, supports_tools: bool) -> tuple[list[dict], list, Recorder]:
    script = {"responses": [WRITE, {"content": "done"}, DISTILL]}
    with ScriptedServer(script, supports_tools=supports_tools) as srv:
        provider = Figures(srv.url)
        bus = Emitter()
        rec = Recorder(bus)
        s = _session(tmp_path, provider, bus)
        s.engine.run("write main.py")
        s.engine.settle()
        s.close()
        return list(srv.requests), provider.figures, rec


def test_native_the_distill_is_the_last_request_plus_the_answer_and_one_instruction(tmp_path):
    (first, last, distill), figures, rec = _turn_then_distill(tmp_path, supports_tools=True)
    assert distill["tools"] == last["tools"] == first["tools"]  # the same tools, byte for byte
    sent = distill["messages"]
    assert sent[: len(last["messages"])] == last["messages"]  # the cached conversation
    assert sent[len(last["messages"])] == {"role": "assistant", "content": "done"}
    assert len(sent) == len(last["messages"]) + 2 and sent[-1]["role"] == "user"
    assert sent[-1]["content"].startswith(DISTILL_PROMPT)
    # Native: a schema beside tools makes llama-server render another tool prompt (a new prefix).
    assert "response_format" not in distill
    assert any("remembered: " + NOTE in e.payload["text"] for e in rec.of("notice"))
    # The server's own figures: the distill reused the whole last request and read only the
    # answer and the instruction (the scripted tokenizer: ~4 bytes a token).
    evaluated, reused = figures[-1]
    assert reused >= figures[-2][0] + figures[-2][1] - 1
    assert evaluated <= (len("done") + len(sent[-1]["content"]) + 80) // 4


def test_constrained_the_reply_is_held_to_the_schema_and_the_prompt_is_the_same(tmp_path):
    (first, last, distill), figures, rec = _turn_then_distill(tmp_path, supports_tools=False)
    # Constrained mode renders the tools into the system message: the same one, the same rest.
    assert distill["messages"][0] == last["messages"][0] == first["messages"][0]
    assert distill["messages"][: len(last["messages"])] == last["messages"]
    assert distill["messages"][-1] == {"role": "user", "content": DISTILL_PROMPT}
    assert distill["response_format"]["json_schema"]["schema"] == TURN_CLOSE_SCHEMA
    assert figures[-1][1] >= sum(figures[-2]) - 1  # the whole last request reused
    assert any("remembered: " + NOTE in e.payload["text"] for e in rec.of("notice"))


def test_a_prompt_sent_during_a_distill_starts_without_waiting_for_it(tmp_path):
    # The distill's reply never comes (pings only, until the client hangs up): a next turn that
    # waited for it would never start.
    script = {"responses": [WRITE, {"content": "done"}, {"keepalive": 0.05}, {"content": "two"}]}
    with ScriptedServer(script) as srv:
        bus = Emitter()
        rec = Recorder(bus)
        s = _session(tmp_path, LlamaProvider(srv.url), bus)
        s.engine.run("write main.py")
        while len(srv.requests) < 3:  # the distill is at the server
            threading.Event().wait(0.01)
        second: list[Any] = []
        t = threading.Thread(target=lambda: second.append(s.engine.run("next")), daemon=True)
        t.start()
        t.join(120)  # a bound for a broken build, not a timing: the turn ends or the test fails
        started = bool(second) and second[0].reason == "completed"
        s.engine.settle(60)
        s.close()
        requests = list(srv.requests)
    assert started and requests[3]["messages"][-1]["content"] == "next"
    notices = [e.payload for e in rec.of("notice") if e.payload.get("source") == "memory"]
    assert [n["text"] for n in notices] == [DROPPED]
    assert notices[0].get("level", "info") == "info"  # quiet: a dropped note is not a warning
