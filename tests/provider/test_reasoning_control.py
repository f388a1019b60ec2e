"""Ending the reasoning mid-stream through llama-server's reasoning control
(provider/reasoning_control.py), against the scripted server with and without its control route
(testing/scripted_control.py copies llama-server's answers)."""

from __future__ import annotations

from typing import Any

from cerveau_tui.provider.llama import LlamaProvider
from cerveau_tui.provider.reasoning_control import CONTROL_PATH
from cerveau_tui.provider.types import Delta, ReasoningEnd
from cerveau_tui.testing.scripted_control import ScriptedControl
from cerveau_tui.testing.scripted_server import ScriptedServer

THOUGHT = "Let me think about this very carefully, one step at a time. " * 10
SCRIPT = {"responses": [{"reasoning": THOUGHT, "content": "the answer"}]}
ASK = [{"role": "user", "content": "fix it"}]


def _stream_and_stop(p: LlamaProvider) -> tuple[Any, list[ReasoningEnd]]:
    """Stream one reply; at its first reasoning fragment ask the server to end the reasoning."""
    ended: list[ReasoningEnd] = []

    def on_delta(d: Delta) -> None:
        if d.reasoning and not ended:
            ended.append(p.end_reasoning())

    return p.complete(ASK, [], max_tokens=256, on_delta=on_delta), ended


def test_a_server_with_the_route_ends_the_reasoning_and_the_same_stream_answers() -> None:
    control = ScriptedControl()
    with ScriptedServer(SCRIPT, control=control) as srv:
        p = LlamaProvider(srv.url)
        done, ended = _stream_and_stop(p)
        p.close()
        requests, hits = srv.requests, srv.state.hits
    assert ended == [ReasoningEnd(True)]
    assert len(requests) == 1 and requests[0]["reasoning_control"] is True
    assert done.content == "the answer"  # the model went on to its answer, in the same stream
    assert 0 < len(done.reasoning) < len(THOUGHT) / 4  # what had streamed, kept
    # The probe (no id: a 400) and the end, naming the streamed completion by its id.
    assert control.requests[0] == {"action": "reasoning_end"}
    assert control.requests[1]["action"] == "reasoning_end"
    assert control.requests[1]["id"].startswith("chatcmpl-") and hits[CONTROL_PATH] == 2


def test_the_model_name_goes_with_the_end_for_a_router() -> None:
    control = ScriptedControl()
    with ScriptedServer(SCRIPT, control=control) as srv:
        p = LlamaProvider(srv.url, model="qwen")
        _stream_and_stop(p)
        p.close()
    assert control.requests[1]["model"] == "qwen"


def test_a_server_without_the_route_gets_no_field_and_says_why() -> None:
    with ScriptedServer(SCRIPT) as srv:
        p = LlamaProvider(srv.url)
        done, ended = _stream_and_stop(p)
        p.close()
        requests = srv.requests
    assert ended == [ReasoningEnd(False, "the server has no reasoning control")]
    assert "reasoning_control" not in requests[0]
    assert done.reasoning == THOUGHT  # nothing ended it: the caller has to (loop/thinking.py)


def test_the_route_is_asked_once_per_provider() -> None:
    script = {"responses": [{"content": "one"}, {"content": "two"}]}
    with ScriptedServer(script) as srv:
        p = LlamaProvider(srv.url)
        p.complete(ASK, [], max_tokens=16)
        p.complete(ASK, [], max_tokens=16)
        p.close()
        hits = srv.state.hits
    assert hits[CONTROL_PATH] == 1


def test_a_server_that_is_not_llama_server_is_not_asked() -> None:
    # No /props (a generic OpenAI server): nothing is probed, nothing is added.
    with ScriptedServer(SCRIPT, extras=False) as srv:
        p = LlamaProvider(srv.url)
        _, ended = _stream_and_stop(p)
        p.close()
        hits, requests = srv.state.hits, srv.requests
    assert hits[CONTROL_PATH] == 0 and "reasoning_control" not in requests[0]
    assert not ended[0].ok


def test_a_completion_the_server_did_not_arm_is_refused_with_its_message() -> None:
    # llama-server arms only a template with thinking tags: the end is refused, and said why.
    control = ScriptedControl(arms=False)
    with ScriptedServer(SCRIPT, control=control) as srv:
        p = LlamaProvider(srv.url)
        done, ended = _stream_and_stop(p)
        p.close()
    assert ended == [
        ReasoningEnd(False, "the server refused: reasoning control not enabled for this completion")
    ]
    assert done.reasoning == THOUGHT


def test_an_end_after_the_stream_finished_matches_nothing() -> None:
    control = ScriptedControl()
    with ScriptedServer({"responses": [{"content": "done"}]}, control=control) as srv:
        p = LlamaProvider(srv.url)
        p.complete(ASK, [], max_tokens=16)
        ended = p.end_reasoning()  # the id of the last stream, which has ended
        p.close()
    assert ended == ReasoningEnd(False, "the server refused: no active completion for this id")
