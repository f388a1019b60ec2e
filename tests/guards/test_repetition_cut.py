"""A reply that repeats itself is cut while it streams, through the real CLI on the scripted server:
the cut is a `notice` from the guard, nothing of the reply runs, and the next request differs
(issue 37: a `write_file` streamed "This is a test." for 3 minutes until the token cap)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cerveau_tui.loop.guards.repetition import LINE_COVER
from cerveau_tui.loop.reply import AFTER_REPETITION
from cerveau_tui.protocol import parse_payload
from cerveau_tui.protocol.describe import describe
from cerveau_tui.testing.cli import run_cli
from cerveau_tui.testing.scripted_server import ScriptedServer

LOOP = "This is a test. " * 160  # 2,560 characters, as the failure streamed


def _run(tmp_path: Path, first: dict[str, Any], **srv: Any) -> tuple[Path, list, list]:
    ws = tmp_path / "ws"
    ws.mkdir()
    with ScriptedServer({"responses": [first, {"content": "done"}]}, **srv) as server:
        code, events, err = run_cli(ws, server.url, "write a test file")
        assert code == 0, err[-2000:]
        return ws, events, list(server.requests)


def _of(events: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [e["payload"] for e in events if e["type"] == kind]


def test_a_write_file_repeating_its_content_is_cut_and_the_next_request_differs(
    tmp_path: Path,
) -> None:
    call = {"name": "write_file", "arguments": {"path": "t.txt", "content": LOOP}}
    ws, events, requests = _run(tmp_path, {"tool_calls": [call]})
    notices = [n for n in _of(events, "notice") if n.get("source") == "guard"]
    assert len(notices) == 1 and "repeating: a span of 16 characters" in notices[0]["text"]
    assert not (ws / "t.txt").exists() and not _of(events, "tool_call")
    assert _of(events, "turn_ended")[-1]["reason"] == "completed"
    # Cut well before the end of what the model would have streamed.
    times = int(notices[0]["text"].rsplit("x ", 1)[1])
    assert times * 16 < len(LOOP) // 4
    # The next request is a different one: the model told in one line, sampled against repeats.
    assert len(requests) == 2
    first, second = requests
    assert all(second.get(k) == v for k, v in AFTER_REPETITION.items())
    assert not any(k in first for k in AFTER_REPETITION)
    told = json.dumps(second["messages"][len(first["messages"]) :])
    assert "stopped: it repeated the same 16 characters" in told


def test_an_answer_repeating_itself_is_cut_in_constrained_mode_too(tmp_path: Path) -> None:
    _, events, requests = _run(tmp_path, {"content": LOOP}, supports_tools=False)
    assert [n for n in _of(events, "notice") if n.get("source") == "guard"]
    assert [g["guard"] for g in _of(events, "guard_tripped")] == ["repetition"]
    assert len(requests) == 2 and _of(events, "turn_ended")[-1]["message"] == "done"


def test_a_reasoning_stream_repeating_itself_is_cut_and_the_next_request_differs(
    tmp_path: Path,
) -> None:
    """The reasoning is watched as the answer is: a model thinking in a loop is cut too."""
    thinking = {"reasoning": "Let me look at calc.py again. " * 100, "content": "never seen"}
    _, events, requests = _run(tmp_path, thinking)
    notices = [n for n in _of(events, "notice") if n.get("source") == "guard"]
    assert len(notices) == 1 and "repeating: a span of 30 characters" in notices[0]["text"]
    assert "never seen" not in json.dumps(_of(events, "assistant_message"))
    assert len(requests) == 2 and all(requests[1].get(k) == v for k, v in AFTER_REPETITION.items())
    assert _of(events, "turn_ended")[-1]["message"] == "done"


def test_the_chat_says_a_cut_once(tmp_path: Path) -> None:
    """The chat and the headless transcript show the events' lines (protocol/describe.py): the
    guard's event and its notice are one cut, one line, not "guard repetition" + "reply cut"."""
    _, events, _ = _run(tmp_path, {"content": LOOP}, supports_tools=False)
    assert _of(events, "guard_tripped") and _of(events, "notice")  # both events still sent
    lines = [describe(parse_payload(e["type"], e["payload"])) for e in events]
    said = [line[0] for line in lines if line is not None and "repeating" in line[0]]
    assert said == ["reply cut: repeating: a span of 16 characters x 30"]


def test_dot_one_in_a_plan_s_check_is_cut_within_a_line_s_length(tmp_path: Path) -> None:
    """The failure: ".1.1.1" in a commit_plan's check ran 670 characters over 2m18s; a plain
    span on one line is certain at LINE_COVER (guards/repetition.py), not at 2,000."""
    step = {"id": "1", "title": "run the tests", "files": ["calc.py"], "check": "1" + ".1" * 1000}
    call = {"name": "commit_plan", "arguments": {"steps": [step]}}
    _, events, requests = _run(tmp_path, {"tool_calls": [call]}, supports_tools=False)
    (cut,) = [g for g in _of(events, "guard_tripped") if g["guard"] == "repetition"]
    assert cut["reason"].startswith("repeating: a span of 2 characters x ")
    assert 2 * int(cut["reason"].rsplit("x ", 1)[1]) <= LINE_COVER + 2
    assert not _of(events, "plan_committed") and len(requests) == 2
