"""The summariser (loop/summarise.py): one bounded call with no tools; None when it cannot be
trusted (failed, cut at its cap) or is off, so the window falls back to the brief."""

from __future__ import annotations

from typing import Any

from cerveau_tui.config import Settings
from cerveau_tui.config_sections import ContextConfig
from cerveau_tui.loop.summarise import summariser, transcript
from cerveau_tui.provider.types import Completion, ErrorClass, ProviderError

ROUNDS = [
    {"role": "user", "content": "add a parser"},
    {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {"id": "c1", "function": {"name": "write_file", "arguments": '{"path": "p.py"}'}}
        ],
    },
    {"role": "tool", "tool_call_id": "c1", "content": "wrote p.py"},
]


class FakeProvider:
    def __init__(self, reply: Completion | Exception) -> None:
        self.reply = reply
        self.calls: list[dict[str, Any]] = []

    def complete(self, messages: Any, tools: Any, *, max_tokens: int, **kw: Any) -> Completion:
        self.calls.append({"messages": messages, "tools": tools, "max_tokens": max_tokens})
        if isinstance(self.reply, Exception):
            raise self.reply
        return self.reply


def settings(**context: Any) -> Settings:
    return Settings(context=ContextConfig(**context))


def test_a_handoff_is_one_call_with_no_tools_and_the_summary_cap():
    p = FakeProvider(Completion(content="Goal: a parser.", finish_reason="stop"))
    out = summariser(p, settings(summary_max_tokens=333))(ROUNDS)  # type: ignore[arg-type, misc]
    assert out == "Goal: a parser."
    (call,) = p.calls
    assert call["tools"] == [] and call["max_tokens"] == 333
    assert "add a parser" in call["messages"][-1]["content"]


def test_a_failed_call_gives_no_summary():
    p = FakeProvider(ProviderError("boom", ErrorClass.TRANSIENT))
    assert summariser(p, settings())(ROUNDS) is None  # type: ignore[arg-type, misc]


def test_a_summary_cut_at_its_cap_is_not_used():
    p = FakeProvider(Completion(content="Goal: a par", finish_reason="length"))
    assert summariser(p, settings())(ROUNDS) is None  # type: ignore[arg-type, misc]


def test_summaries_off_means_no_summariser():
    assert summariser(FakeProvider(Completion()), settings(summarise=False)) is None  # type: ignore[arg-type]


def test_the_transcript_names_calls_and_results_as_plain_text():
    text = transcript(ROUNDS)
    assert '[agent called write_file] {"path": "p.py"}' in text and "[result] wrote p.py" in text
