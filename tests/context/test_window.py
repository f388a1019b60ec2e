"""The window kept across model calls (context/window.py): compaction at the marks, a prefix that
only grows between compactions, a compaction that drops one contiguous block after the system
message and keeps every other message byte-identical, the summary and its degradation."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from cerveau_tui.context.prune import placeholder
from cerveau_tui.context.window import (
    RESUME_NOTE,
    Handoff,
    Window,
    WindowState,
    WindowStateError,
)

SYSTEM = "You are a coding agent."
TASK = "write twenty files f0..f19, each a paragraph"


def chars(text: str) -> int:
    return len(text)


def write_round(i: int, size: int = 400) -> list[dict[str, Any]]:
    args = json.dumps({"path": f"f{i}.txt", "content": "x" * size})
    return [
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": f"c{i}",
                    "type": "function",
                    "function": {"name": "write_file", "arguments": args},
                }
            ],
        },
        {"role": "tool", "tool_call_id": f"c{i}", "content": f"wrote {size} bytes to f{i}.txt"},
    ]


def read_round(i: int, path: str, size: int = 600) -> list[dict[str, Any]]:
    args = json.dumps({"path": path})
    return [
        {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": f"r{i}",
                    "type": "function",
                    "function": {"name": "read_file", "arguments": args},
                }
            ],
        },
        {"role": "tool", "tool_call_id": f"r{i}", "content": "line\n" * (size // 5)},
    ]


def window(summarise: Any = None, high: float = 0.85, low: float = 0.5) -> Window:
    return Window(
        WindowState(),
        count=chars,
        high_water=high,
        low_water=low,
        summarise=summarise,
        brief=lambda n: f"The person's request, verbatim:\n{TASK}\n(brief for {n} rounds)",
    )


def fit(w: Window, history: list[dict[str, Any]], budget: int, **kw: Any) -> Any:
    return w.fit(SYSTEM, history, budget=budget, request=TASK, **kw)


# --- the marks -----------------------------------------------------------------------------------


def test_a_request_at_the_high_water_mark_is_left_alone():
    history = [{"role": "user", "content": TASK}, *write_round(0), *write_round(1)]
    w = window()
    tokens = w.tokens(SYSTEM, history)
    budget = int(tokens / 0.85) + 1  # tokens <= 0.85 * budget
    assert fit(w, history, budget) is None
    assert w.messages(SYSTEM, history)[1:] == history


def test_a_request_past_the_high_water_mark_compacts_down_to_the_low_water_mark():
    history = [{"role": "user", "content": TASK}]
    for i in range(8):
        history += write_round(i)
    w = window()
    tokens = w.tokens(SYSTEM, history)
    budget = int(tokens / 0.85) - 1  # just past the mark
    done = fit(w, history, budget)
    assert done is not None and done.tokens_before == tokens
    assert done.tokens_after <= 0.5 * budget
    assert w.tokens(SYSTEM, history) == done.tokens_after


def test_compaction_happens_once_then_the_window_only_grows():
    history = [{"role": "user", "content": TASK}]
    for i in range(8):
        history += write_round(i)
    w = window()
    budget = int(w.tokens(SYSTEM, history) / 0.85) - 1
    assert fit(w, history, budget) is not None
    assert fit(w, history, budget) is None  # below the mark now: no second compaction


# --- the prefix ----------------------------------------------------------------------------------


def test_between_compactions_each_request_extends_the_previous_one_message_by_message():
    history = [{"role": "user", "content": TASK}]
    w = window(summarise=lambda msgs: "handoff: wrote some files")
    budget = 3000
    previous: list[str] = []
    extended = compacted = 0
    for i in range(30):
        history += write_round(i)
        done = fit(w, history, budget)
        request = [json.dumps(m, sort_keys=True) for m in w.messages(SYSTEM, history)]
        if done is None and previous:
            assert request[: len(previous)] == previous, f"request {i} rewrote its prefix"
            extended += 1
        compacted += done is not None
        previous = request
    assert compacted >= 2 and extended >= 10  # both cases were exercised


def wire(msgs: list[dict[str, Any]]) -> list[str]:
    return [json.dumps(m, sort_keys=True) for m in msgs]


def test_a_compaction_drops_one_block_after_the_system_message_and_keeps_the_rest_byte_identical():
    """Issue 36: llama-server's --cache-reuse can shift the kept part into place only when the
    new request is the cached one with deletions. The old compaction rewrote kept messages (old
    tool outputs pruned into placeholders) and put its summary right after the system message;
    each compaction then re-read 2.4-3.5k tokens on an 8k window."""
    history = [{"role": "user", "content": TASK}]
    w = window(summarise=lambda msgs: "handoff: wrote some files")
    compacted = 0
    for i in range(60):
        history += write_round(i, 300 + 37 * (i % 5))
        before = wire(w.messages(SYSTEM, history))
        done = fit(w, history, 3000)
        if done is None:
            continue
        compacted += 1
        after = wire(w.messages(SYSTEM, history))
        assert after[0] == before[0]  # the system message
        # What survives is the end of the request before, whole and in order, right after the
        # system message: one block went; then only what stands for it (at most 3 messages).
        kept = max(k for k in range(len(after)) if after[1 : 1 + k] == before[len(before) - k :])
        assert kept >= 2 and len(after) - 1 - kept <= 3
        assert len(before) - 1 - kept >= 2  # at least one whole round went
        s = w.state
        assert after[1 + kept :] == wire(s.frozen[s.block_start : s.block_end])
        assert done.pruned == 0
    assert compacted >= 3


def test_the_kept_messages_are_the_stored_objects_themselves():
    history = [{"role": "user", "content": TASK}]
    for i in range(12):
        history += write_round(i, 800)
    w = window(summarise=lambda msgs: "handoff")
    assert fit(w, history, int(w.tokens(SYSTEM, history) / 0.85) - 1) is not None
    kept = w.state.frozen[: w.state.block_start]
    assert kept and all(any(m is h for h in history) for m in kept)


def test_the_system_message_is_the_same_in_every_request():
    history = [{"role": "user", "content": TASK}]
    w = window(summarise=lambda msgs: "handoff")
    systems = set()
    for i in range(30):
        history += write_round(i)
        fit(w, history, 2500)
        systems.add(json.dumps(w.messages(SYSTEM, history)[0]))
    assert systems == {json.dumps({"role": "system", "content": SYSTEM})}


def test_the_stored_history_is_never_rewritten():
    history = [{"role": "user", "content": TASK}]
    for i in range(10):
        history += write_round(i)
    before = copy.deepcopy(history)
    w = window(summarise=lambda msgs: "handoff")
    fit(w, history, 1500)
    fit(w, history, 600, full=True, keep_rounds=1)
    assert history == before


def test_no_request_holds_a_result_without_its_call():
    history = [{"role": "user", "content": TASK}]
    w = window(summarise=lambda msgs: "handoff")
    for i in range(25):
        history += write_round(i)
        fit(w, history, 2000)
        sent = w.messages(SYSTEM, history)
        called = {tc["id"] for m in sent for tc in m.get("tool_calls") or []}
        assert sent[1]["role"] != "tool"
        assert all(m["tool_call_id"] in called for m in sent if m["role"] == "tool")


# --- what the summary call reads -----------------------------------------------------------------


def summarised(history: list[dict[str, Any]], **kw: Any) -> tuple[Window, list[dict[str, Any]]]:
    seen: list[list[dict[str, Any]]] = []

    def fake(msgs: list[dict[str, Any]]) -> str:
        seen.append(msgs)
        return "handoff"

    w = window(summarise=fake)
    assert fit(w, history, int(w.tokens(SYSTEM, history) / 0.85) - 1, **kw) is not None
    return w, seen[0]


def test_the_summary_call_reads_an_old_result_as_a_placeholder_naming_its_tool_and_path():
    history = [{"role": "user", "content": TASK}, *read_round(0, "notes.txt", 3000)]
    for i in range(6):
        history += write_round(i, 50)
    w, given = summarised(history, full=True, keep_rounds=1)
    expected = (
        "[old result of read_file notes.txt cleared to save room; call it again if you need it]"
    )
    assert placeholder("read_file", "notes.txt") == expected
    assert expected in json.dumps(given) and "line\\nline" not in json.dumps(given)
    assert history[2]["content"].startswith("line\n")  # the stored history keeps the output


def test_the_summary_call_reads_an_old_call_with_its_path_and_without_its_long_content():
    history = [{"role": "user", "content": TASK}]
    for i in range(8):
        history += write_round(i, 800)
    _, given = summarised(history)
    args = json.loads(given[1]["tool_calls"][0]["function"]["arguments"])
    assert args["path"] == "f0.txt" and "800 characters cleared" in args["content"]


def test_the_window_itself_is_never_pruned():
    """A placeholder among the kept messages is a rewrite the server's cache cannot shift past."""
    history = [{"role": "user", "content": TASK}]
    for i in range(8):
        history += write_round(i, 800)
    w, _ = summarised(history)
    sent = json.dumps(w.messages(SYSTEM, history))
    assert "cleared to save room" not in sent and "[cut to save room]" not in sent


def test_the_newest_rounds_stay_verbatim_before_the_block():
    history = [{"role": "user", "content": TASK}]
    for i in range(6):
        history += write_round(i, 800)
    w = window()
    fit(w, history, int(w.tokens(SYSTEM, history) / 0.85) - 1)
    s = w.state
    assert s.frozen[s.block_start - 2 : s.block_start] == history[-2:]
    assert w.messages(SYSTEM, history)[-1] is s.frozen[-1]  # the block is the newest message


# --- the summary ---------------------------------------------------------------------------------


def grow_until_summary(w: Window, budget: int = 1200) -> tuple[Any, list[dict[str, Any]]]:
    history = [{"role": "user", "content": TASK}]
    for i in range(40):
        history += write_round(i)
        done = fit(w, history, budget)
        if done is not None and done.summary_source != "none":
            return done, history
    pytest.fail("no summary compaction")


def test_the_summary_block_carries_the_request_verbatim_and_the_handoff():
    w = window(summarise=lambda msgs: "Done so far: f0-f3.")
    done, _ = grow_until_summary(w)
    block = block_of(w)
    assert done.summary_source == "model" and done.dropped_rounds >= 1
    assert TASK in block and "Done so far: f0-f3." in block


def block_of(w: Window) -> str:
    s = w.state
    assert s.block_end - s.block_start == 1 and s.block_end == len(s.frozen)
    return s.frozen[s.block_start]["content"]


def test_a_failed_summary_falls_back_to_the_brief_and_says_so():
    w = window(summarise=lambda msgs: None)
    done, _ = grow_until_summary(w)
    assert done.summary_source == "brief"
    block = block_of(w)
    assert "(brief for" in block and TASK in block


def test_with_summaries_off_the_brief_is_used():
    done, history = grow_until_summary(window(summarise=None))
    assert done.summary_source == "brief"


def test_the_summariser_is_handed_the_dropped_rounds_within_its_room():
    seen: list[list[dict[str, Any]]] = []

    def fake(msgs: list[dict[str, Any]]) -> str:
        seen.append(msgs)
        return "handoff"

    w = window(summarise=fake)
    history = [{"role": "user", "content": TASK}]
    for i in range(12):
        history += write_round(i)
    w.fit(SYSTEM, history, budget=1500, request=TASK, full=True, keep_rounds=2, summary_room=900)
    assert len(seen) == 1
    given = seen[0]
    assert given[0]["content"] == TASK  # the oldest context first
    assert sum(len(json.dumps(m)) for m in given) < 2000  # cut to the room (pruned, then trimmed)
    assert all(
        m is not history[-1] and m is not history[-2] for m in given
    )  # kept rounds not in it


def test_the_persons_compact_keeps_the_newest_rounds_verbatim():
    history = [{"role": "user", "content": TASK}]
    for i in range(4):
        history += write_round(i)
    history.append({"role": "assistant", "content": "done"})
    w = window(summarise=None)
    done = w.fit(SYSTEM, history, budget=100_000, request=TASK, full=True, keep_rounds=2)
    assert done is not None and done.dropped_rounds == 4 and done.reason == "high_water"
    assert w.messages(SYSTEM, history)[1:4] == history[-3:]  # then the block


def test_a_single_round_cannot_be_compacted():
    history = [{"role": "user", "content": "x" * 5000}]
    w = window()
    assert fit(w, history, 1000) is None
    assert fit(w, history, 1000, measured=6000) is None


def test_the_servers_count_drives_an_overflow_compaction():
    history = [{"role": "user", "content": TASK}]
    for i in range(6):
        history += write_round(i)
    w = window()
    ours = w.tokens(SYSTEM, history)
    done = fit(w, history, ours * 2, measured=ours * 3, reason="server_overflow")
    assert done is not None and done.tokens_before == ours * 3 and done.reason == "server_overflow"


# --- persistence ---------------------------------------------------------------------------------


def test_the_state_survives_a_json_round_trip():
    history = [{"role": "user", "content": TASK}]
    for i in range(10):
        history += write_round(i)
    w = window(summarise=lambda msgs: "handoff")
    fit(w, history, 1500)
    stored = json.loads(json.dumps(w.state.to_dict()))
    back = WindowState.from_dict(stored)
    assert back == w.state
    again = Window(back, count=chars, high_water=0.85, low_water=0.5)
    assert again.messages(SYSTEM, history) == w.messages(SYSTEM, history)


def test_a_malformed_state_is_refused_with_the_field_named():
    with pytest.raises(WindowStateError, match="upto"):
        WindowState.from_dict({"version": 1, "upto": -3, "frozen": []})


def test_a_state_that_does_not_match_the_history_is_dropped():
    history = [{"role": "user", "content": TASK}, *write_round(0)]
    w = Window(
        WindowState(upto=50, frozen=[{"role": "user", "content": "other"}]),
        count=chars,
        high_water=0.85,
        low_water=0.5,
    )
    assert w.messages(SYSTEM, history)[1:] == history


def test_a_constrained_action_kept_beside_its_calls_is_counted_once():
    from cerveau_tui.context.pack import message_tokens

    args = json.dumps({"path": "a.txt", "content": "y" * 300})
    call = {"id": "c", "type": "function", "function": {"name": "write_file", "arguments": args}}
    action = json.dumps({"tool": "write_file", "arguments": json.loads(args)})
    constrained = {"role": "assistant", "content": action, "tool_calls": [call]}
    native = {"role": "assistant", "content": "", "tool_calls": [call]}
    assert message_tokens(constrained, chars) - message_tokens(native, chars) < 40


def test_the_summary_call_reads_the_newest_dropped_results_whole_and_slims_their_calls():
    history = [{"role": "user", "content": TASK}]
    for i in range(5):
        history += read_round(i, f"r{i}.txt", 300)
    recent = write_round(9, 800)
    recent[1]["content"] = "checked: " + "ok " * 200  # a long result the model worked from
    history += [*recent, *write_round(10, 50)]
    _, given = summarised(history, full=True, keep_rounds=1)
    call, result = given[-2], given[-1]  # the newest dropped round
    assert result["content"] == recent[1]["content"]  # its result whole
    assert "800 characters cleared" in call["tool_calls"][0]["function"]["arguments"]
    assert "cleared to save room" in given[2]["content"]  # an older result: a placeholder


def test_the_running_count_equals_a_full_recount_as_history_grows_and_compacts() -> None:
    from cerveau_tui.context.pack import message_tokens

    w = window()
    history: list[dict[str, Any]] = [{"role": "user", "content": TASK}]

    def full() -> int:
        return sum(message_tokens(m, chars) for m in w.messages(SYSTEM, history))

    compacted = 0
    for i in range(40):
        history += write_round(i)
        assert w.tokens(SYSTEM, history) == full()
        if w.fit(SYSTEM, history, budget=6000, request=TASK) is not None:
            compacted += 1
            assert w.tokens(SYSTEM, history) == full()
    assert compacted >= 2


def test_a_stored_call_of_the_wrong_shape_is_refused_not_carried_into_the_count() -> None:
    planted = {
        "upto": 2,
        "frozen": [
            {"role": "user", "content": TASK},
            {"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "function": "rm"}]},
        ],
    }
    with pytest.raises(WindowStateError):
        WindowState.from_dict(planted)


# --- where the block goes ------------------------------------------------------------------------


def test_a_handoff_that_continued_the_conversation_stays_as_it_was_asked_and_answered():
    asked = {"role": "user", "content": "[harness] write the handoff"}
    w = window(summarise=lambda msgs: Handoff(asked=asked, answer="Done so far: f0-f3."))
    done, history = grow_until_summary(w)
    s = w.state
    assert done.summary_source == "model"
    block = s.frozen[s.block_start : s.block_end]
    assert block[0] is asked
    assert block[1] == {"role": "assistant", "content": "Done so far: f0-f3."}
    assert block[2] == {"role": "user", "content": RESUME_NOTE}
    assert w.messages(SYSTEM, history)[-3:] == block  # the newest messages of the request


def test_a_new_request_from_the_person_stays_after_the_block():
    history = [{"role": "user", "content": TASK}]
    for i in range(8):
        history += write_round(i)
    history += [{"role": "assistant", "content": "done"}, {"role": "user", "content": "now f20"}]
    w = window(summarise=lambda msgs: "handoff")
    assert fit(w, history, int(w.tokens(SYSTEM, history) / 0.85) - 1) is not None
    sent = w.messages(SYSTEM, history)
    assert sent[-1] is history[-1] and "handoff" in sent[-2]["content"]
    assert history[w.state.upto :] == [history[-1]]  # it is the tail: the next rounds follow it


def test_the_next_compaction_takes_the_previous_block_so_one_handoff_is_in_the_window():
    n = 0

    def numbered(msgs: list[dict[str, Any]]) -> str:
        nonlocal n
        n += 1
        return f"handoff number {n}"

    history = [{"role": "user", "content": TASK}]
    w = window(summarise=numbered)
    for i in range(60):
        history += write_round(i)
        fit(w, history, 3000)
    assert n >= 3
    sent = json.dumps(w.messages(SYSTEM, history))
    assert sent.count("handoff number") == 1 and f"handoff number {n}" in sent


def test_a_state_stored_before_the_block_was_recorded_takes_all_of_frozen_as_its_block():
    old = {"version": 1, "upto": 3, "frozen": [{"role": "user", "content": "[harness] brief"}]}
    s = WindowState.from_dict(old)
    assert (s.block_start, s.block_end) == (0, 1)
    with pytest.raises(WindowStateError, match="block"):
        WindowState.from_dict({**old, "block_start": 0, "block_end": 5})
