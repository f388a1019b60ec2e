"""Guard stops that teach instead of tempt (issue 24): the rounds a guard stopped fold into one
harness note for the next request, the session log keeps them, and sessions no guard stopped
are untouched. Rules in loop/guards/stops.py; applied at the turn's end by loop/stop_notes.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from copycat_sessions import LEGIT, PATHOLOGICAL, SessionRun, run_session

from cerveau_tui.config import load_settings
from cerveau_tui.history import HARNESS_MARK, CallRef, Message
from cerveau_tui.hooks import CallRecord
from cerveau_tui.loop.guards.repeats import canonical
from cerveau_tui.loop.guards.stops import (
    GuardStop,
    breaker_stops,
    failing_repeats,
    fold,
    repeat_stop,
    truncation_stop,
)
from cerveau_tui.protocol import CallStatus
from cerveau_tui.session import build_session
from cerveau_tui.testing.copycat import copied_entry
from cerveau_tui.testing.fake_provider import FakeProvider

SESSIONS = {s.name: s for s in [*PATHOLOGICAL, *LEGIT]}


def _round(cid: str, name: str, args: dict, output: str, status: str) -> list[Message]:
    return [
        Message.reply("", [CallRef(cid, name, json.dumps(args))]),
        Message.result(cid, output, status),
    ]


def _stop(*ids: str) -> GuardStop:
    return GuardStop("repeat", ('bash {"command": "x"}',), len(ids), "same", frozenset(ids))


# --- the fold, pure ----------------------------------------------------------------------------


def test_a_turn_ended_by_a_stop_reads_one_note_instead_of_its_stopped_rounds() -> None:
    x = {"command": "python3 t.py"}
    msgs = [
        Message.user("run it"),
        *_round("a", "bash", x, "boom", "failed"),
        *_round("b", "bash", x, "boom", "failed"),
        *_round("c", "bash", x, "told", "not_run"),
    ]
    done = fold(msgs, 1, [_stop("a", "b", "c")])
    assert done is not None
    assert (done.start, done.kept, done.left_out, done.rounds) == (1, [], 6, 3)
    assert "repeat guard" in done.note and 'bash {"command": "x"}' in done.note


def test_a_turn_that_recovered_after_its_stop_keeps_it_verbatim() -> None:
    msgs = [
        Message.user("run it"),
        *_round("a", "bash", {"command": "x"}, "boom", "failed"),
        *_round("b", "bash", {"command": "x"}, "boom", "failed"),
        *_round("c", "edit_file", {"path": "t.py"}, "edited", "done"),
    ]
    assert fold(msgs, 1, [_stop("a", "b")]) is None


def test_rounds_no_stop_names_stay_in_order_before_the_note() -> None:
    msgs = [
        Message.user("run it"),
        *_round("a", "bash", {"command": "x"}, "boom", "failed"),
        *_round("r", "read_file", {"path": "t.py"}, "text", "done"),
        *_round("b", "bash", {"command": "x"}, "boom", "failed"),
    ]
    done = fold(msgs, 1, [_stop("a", "b")])
    assert done is not None
    assert done.kept == [m.wire for m in msgs[3:5]] and done.rounds == 2


def test_a_round_with_a_call_no_stop_names_stays_whole() -> None:
    both = Message.reply("", [CallRef("a", "bash", "{}"), CallRef("r", "read_file", "{}")])
    msgs = [
        Message.user("go"),
        both,
        Message.result("a", "boom", "failed"),
        Message.result("r", "ok", "failed"),
    ]
    assert fold(msgs, 1, [_stop("a")]) is None


def test_nothing_is_folded_without_a_stop_or_before_the_turn() -> None:
    old = _round("a", "bash", {"command": "x"}, "boom", "failed")
    msgs = [Message.user("before"), *old, Message.user("now")]
    assert fold(msgs, 1, []) is None
    assert fold(msgs, 4, [_stop("a")]) is None  # the stopped call is an earlier turn's


def test_the_truncation_guards_notes_fold_and_are_named_by_their_cap() -> None:
    told = "Your `write_file` call was cut off at 512 tokens."
    stop = truncation_stop(["write_file cut off at 512 tokens"], [told])
    assert stop is not None
    msgs = [Message.user("write"), Message.harness(told), Message.harness(told)]
    done = fold(msgs, 1, [stop])
    assert done is not None and done.left_out == 2 and "512 tokens" in done.note
    assert done.note.startswith("Your last turn") and not done.note.startswith(HARNESS_MARK)


def _rec(cid: str, command: str, output: str, code: int = 1) -> CallRecord:
    return CallRecord(
        1, cid, "bash", {"command": command}, code == 0, output, code, command,
        status=CallStatus.DONE if code == 0 else CallStatus.FAILED,
    )  # fmt: skip


def test_the_breakers_stop_is_every_failed_command_of_its_shape_less_the_taken() -> None:
    missing = "ModuleNotFoundError: No module named 'leftpadx'"
    recs = [
        _rec("1", 'python3 -c "import leftpadx"', missing),
        _rec("2", "ls", "a.py", 0),
        _rec("3", 'python3 -c "import leftpadx.core"', missing),
        _rec("4", "cat nope.txt", "cat: nope.txt: No such file or directory"),
    ]
    (stop,) = breaker_stops(recs, ["missing dependency: leftpadx"], frozenset({"3"}))
    assert stop.call_ids == {"1"} and stop.times == 1


def test_a_stall_names_only_calls_that_failed_identically_often_enough() -> None:
    recs = [_rec(str(i), "", "command is empty") for i in range(3)]
    recs.append(_rec("9", "ls x", "No such file"))
    (stop,) = failing_repeats(recs, 3)
    assert stop.call_ids == {"0", "1", "2"} and stop.guard == "stall"
    assert failing_repeats(recs[:2], 3) == []


def test_the_repeat_stop_names_the_refused_call_and_the_identical_runs_before_it() -> None:
    recs = [_rec("0", "ls", "a", 0), _rec("1", "x", "boom"), _rec("2", "x", "boom")]
    stop = repeat_stop(recs, [("3", "bash", {"command": "x"})], 3)
    assert stop.call_ids == {"1", "2", "3"} and "(boom)" in stop.why


def test_the_copycat_copies_the_newest_call_it_can_see_or_answers() -> None:
    call = {"id": "1", "type": "function", "function": {"name": "ls", "arguments": '{"p": 1}'}}
    body = {"messages": [{"role": "assistant", "content": "", "tool_calls": [call]}]}
    assert copied_entry(body) == {"tool_calls": [{"name": "ls", "arguments": {"p": 1}}]}
    assert copied_entry({"messages": []}, "hi") == {"content": "hi"}


# --- in process: the log keeps what the model no longer reads -----------------------------------


def test_the_history_keeps_the_stopped_calls_and_the_window_reads_the_note(tmp_path: Path) -> None:
    same = [FakeProvider.call("list_files", path="missing.txt") for _ in range(3)]
    fake = FakeProvider([*same, "hello to you"])
    settings = load_settings(tmp_path, flags={}, environ={}, user_config=tmp_path / "none.toml")
    s = build_session(settings, provider=fake)
    try:
        assert s.engine.run("list missing.txt").reason == "repeat"
        assert s.engine.run("hello").message == "hello to you"
    finally:
        s.close()
    kept = [c.name for m in s.engine.history.messages for c in m.calls]
    assert kept == ["list_files"] * 3  # the history (and so the log) keeps everything
    sent = fake.requests[-1]["messages"]
    assert not any(m.get("tool_calls") for m in sent)
    notes = [m for m in sent if "stopped by a guard" in (m.get("content") or "")]
    assert len(notes) == 1 and notes[0]["content"].startswith(HARNESS_MARK)
    assert sent[-1] == {"role": "user", "content": "hello"}


# --- through the real CLI, across `--continue` ---------------------------------------------------

_runs: dict[str, SessionRun] = {}


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory):
    def get(name: str) -> SessionRun:
        if name not in _runs:
            _runs[name] = run_session(SESSIONS[name], tmp_path_factory.mktemp(name) / "ws")
        return _runs[name]

    return get


def _request_turns(r: SessionRun) -> list[list[dict]]:
    """The requests of each turn (one usage event per request sent and answered)."""
    out, i = [], 0
    for events in r.turns:
        n = sum(1 for e in events if e["type"] == "usage")
        out.append(r.requests[i : i + n])
        i += n
    return out


@pytest.mark.parametrize("name", [s.name for s in PATHOLOGICAL])
def test_after_a_stop_the_next_turns_never_see_the_stopped_call(run, name: str) -> None:
    r = run(name)
    assert len(r.ended) == len(r.session.turns), r.stderr[-2000:]
    stopped = {key for i, key in r.failing_calls() if i == 0}
    later = [m for reqs in _request_turns(r)[1:] for body in reqs for m in body["messages"]]
    for m in later:
        for c in m.get("tool_calls") or []:
            args = json.loads(c["function"]["arguments"] or "{}")
            assert canonical(c["function"]["name"], args) not in stopped
    assert r.copied_failures() == 0
    assert [e["reason"] for e in r.ended[1:]] == ["completed"] * (len(r.ended) - 1)
    assert len(r.folds) == 1


def test_the_model_is_told_once_which_call_was_stopped_and_why(run) -> None:
    r = run("failing_command")
    first_of_turn2 = _request_turns(r)[1][0]["messages"]
    notes = [m["content"] for m in first_of_turn2 if "stopped by a guard" in m.get("content", "")]
    assert len(notes) == 1
    assert "python3 test_calc.py" in notes[0] and "repeat guard" in notes[0]
    assert first_of_turn2[-1]["content"] == "hello"


@pytest.mark.parametrize("name", [s.name for s in LEGIT])
def test_a_session_no_guard_stopped_is_append_only_and_never_folded(run, name: str) -> None:
    r = run(name)
    assert [e["reason"] for e in r.ended] == ["completed"] * len(r.session.turns), r.stderr[-2000:]
    assert r.guards == [] and r.folds == []
    sent = [b["messages"] for b in r.requests]
    for prev, cur in zip(sent, sent[1:], strict=False):
        assert [json.dumps(m) for m in cur[: len(prev)]] == [json.dumps(m) for m in prev]
