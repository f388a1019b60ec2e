"""The summariser (loop/summarise.py): one bounded call with no tools; None when it cannot be
trusted (failed, cut at its cap) or is off, so the window falls back to the brief."""

from __future__ import annotations

from typing import Any

from cerveau_tui.config import Settings
from cerveau_tui.config_sections import ContextConfig
from cerveau_tui.context.window import Handoff
from cerveau_tui.loop.summarise import CONTINUE_HEAD, continuation, summariser, transcript
from cerveau_tui.provider.types import Completion, ErrorClass, ProviderError, ToolCall

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


class CancellableProvider:
    """A server whose handoff is slow: it stops only when the call's cancel flag is set."""

    def __init__(self) -> None:
        self.cancels: list[Any] = []

    def complete(self, messages: Any, tools: Any, *, max_tokens: int, **kw: Any) -> Completion:
        cancel = kw.get("cancel")
        self.cancels.append(cancel)
        if cancel is not None and cancel.is_set():
            raise ProviderError("cancelled", ErrorClass.CANCELLED)
        return Completion(content="Goal: a parser.", finish_reason="stop")


def engine_with(history: list[dict[str, Any]], provider: Any, tmp_path: Any) -> Any:
    from cerveau_tui.bus import Emitter
    from cerveau_tui.loop.approver import DenyAll
    from cerveau_tui.loop.engine import Engine
    from cerveau_tui.tools.registry import Registry

    engine = Engine(
        provider=provider,
        registry=Registry([]),
        bus=Emitter("test"),
        settings=Settings(workspace=tmp_path),
        approver=DenyAll(),
        n_ctx=4096,
    )
    engine.loop_state.history.restore(history)
    engine.loop_state.task = "add a parser"
    return engine


def rounds_of(n: int) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [{"role": "user", "content": "add a parser"}]
    for i in range(n):
        out += [
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [
                    {"id": f"c{i}", "function": {"name": "read_file", "arguments": "{}"}}
                ],
            },
            {"role": "tool", "tool_call_id": f"c{i}", "content": f"result {i}"},
        ]
    return out


def test_the_sessions_interrupt_reaches_the_summary_call(tmp_path: Any) -> None:
    p = CancellableProvider()
    engine = engine_with(rounds_of(4), p, tmp_path)
    engine.compact()
    assert p.cancels and p.cancels[-1] is engine.loop_state.cancel


def test_the_persons_compact_after_an_interrupted_turn_still_gets_a_handoff(tmp_path: Any) -> None:
    p = CancellableProvider()
    engine = engine_with(rounds_of(4), p, tmp_path)
    engine.interrupt()  # the turn before ended on Esc; the flag stays set until something clears it
    assert engine.compact() > 0
    w = engine.loop_state.window  # the block follows the kept rounds (issue 36)
    assert "Goal: a parser." in w.frozen[w.block_start]["content"]


def test_the_summary_calls_input_leaves_room_for_the_system_message_it_opens_with() -> None:
    """The summary request opens with the session's system message (an AGENTS.md makes it
    large): counted out of the room, the request fits the window instead of being refused."""
    from cerveau_tui.bus import Emitter
    from cerveau_tui.context.pack import message_tokens
    from cerveau_tui.loop.model_call import SUMMARY_FRAME, ModelCall
    from cerveau_tui.loop.state import EngineState
    from cerveau_tui.tools.registry import Registry

    given: list[list[dict[str, Any]]] = []

    def fake(msgs: list[dict[str, Any]]) -> str:
        given.append(msgs)
        return "handoff"

    history = rounds_of(40)
    for m in history[2::2]:
        m["content"] = "r" * 150  # each result ~150 tokens: the dropped rounds exceed the room
    system = "s" * 1500
    call = ModelCall(
        provider=FakeProvider(Completion()),  # type: ignore[arg-type]
        registry=Registry([]),
        bus=Emitter("test"),
        state=EngineState(history=history, task="add a parser"),
        system=system,
        n_ctx=4096,
        count_tokens=len,
        brief=lambda n: "brief",
        context=ContextConfig(summary_max_tokens=1024),
        summarise=fake,
    )
    assert call.compact(100_000, full=True, keep_rounds=2) is not None
    sent = sum(message_tokens(m, len) for m in given[0])
    sys_tokens = message_tokens({"role": "system", "content": system}, len)
    assert sys_tokens + sent + SUMMARY_FRAME + 1024 <= 4096


class ModalProvider(FakeProvider):
    def __init__(self, reply: Completion | Exception, mode: str) -> None:
        super().__init__(reply)
        self.mode = mode

    def resolved_mode(self) -> str:
        return self.mode

    def complete(self, messages: Any, tools: Any, *, max_tokens: int, **kw: Any) -> Completion:
        self.calls.append({"messages": messages, "tools": tools, "extra": kw.get("extra")})
        if isinstance(self.reply, Exception):
            raise self.reply
        return self.reply


TOOLS = [{"name": "read_file", "description": "read", "parameters": {"type": "object"}}]


def test_in_native_mode_the_handoff_continues_the_conversation_with_its_tools():
    """Issue 36: the transcript way re-read the dropped rounds under a new prompt and, on a
    one-slot server, evicted the conversation the compaction was about to keep."""
    p = ModalProvider(Completion(content="Goal: a parser.", finish_reason="stop"), "native")
    cont = continuation(p, ContextConfig(), ROUNDS, TOOLS, 2000, task="add a parser")
    assert cont is not None
    out = cont(ROUNDS[:1])
    (call,) = p.calls
    assert call["messages"][:-1] == ROUNDS and call["tools"] == TOOLS and call["extra"] is None
    asked = call["messages"][-1]
    assert asked["content"].startswith(CONTINUE_HEAD) and "add a parser" in asked["content"]
    assert out == Handoff(asked=asked, answer="Goal: a parser.")


def test_in_constrained_mode_the_handoff_is_held_to_the_answer_action():
    p = ModalProvider(Completion(content="Goal: a parser.", finish_reason="stop"), "constrained")
    cont = continuation(p, ContextConfig(), ROUNDS, TOOLS, 2000, task="add a parser")
    assert cont is not None and isinstance(cont([]), Handoff)
    assert p.calls[0]["extra"]["response_format"]["json_schema"]["schema"]["required"] == ["answer"]


def test_a_continuation_that_calls_a_tool_is_no_handoff():
    call = ToolCall(id="c", name="read_file", arguments="{}")
    p = ModalProvider(Completion(tool_calls=[call], finish_reason="tool_calls"), "native")
    cont = continuation(p, ContextConfig(), ROUNDS, TOOLS, 2000, task="add a parser")
    assert cont is not None and cont([]) is None


def test_no_continuation_without_room_for_the_handoff():
    p = ModalProvider(Completion(content="x"), "native")
    assert continuation(p, ContextConfig(), ROUNDS, TOOLS, 100) is None
