"""Budget notice: 70% and 90% of the window, once per crossing, re-armed by falling below."""

from __future__ import annotations

from typing import Any

from cerveau_tui.reminders.budget import BudgetHook


def at(hook: BudgetHook, turn: Any, tokens: int) -> list[str]:
    turn.ctx.context_tokens = tokens
    return hook.reminders(turn.ctx)


def notices(turn: Any) -> list[int]:
    return [e.payload["percent"] for e in turn.rec.of("budget_notice")]


def test_crossing_70_is_one_event_and_one_reminder(turn: Any) -> None:
    hook = BudgetHook()
    assert at(hook, turn, 2000) == []  # 49% of 4096
    (said,) = at(hook, turn, 2900)  # 71%
    assert "over 70% full (2,900 of 4,096 tokens)" in said
    assert at(hook, turn, 3000) == []
    assert notices(turn) == [70]


def test_crossing_90_after_70_is_told_too_once(turn: Any) -> None:
    hook = BudgetHook()
    at(hook, turn, 2900)
    (said,) = at(hook, turn, 3700)  # 90.3%
    assert "over 90% full" in said
    assert at(hook, turn, 3800) == []
    assert notices(turn) == [70, 90]


def test_a_jump_past_both_marks_is_one_reminder_of_the_higher_and_two_events(turn: Any) -> None:
    hook = BudgetHook()
    (said,) = at(hook, turn, 4000)
    assert "over 90% full" in said
    assert notices(turn) == [70, 90]


def test_falling_below_a_mark_re_arms_it(turn: Any) -> None:
    hook = BudgetHook()
    at(hook, turn, 2900)
    assert at(hook, turn, 1600) == []  # compacted to 39%
    assert len(at(hook, turn, 2900)) == 1
    assert notices(turn) == [70, 70]


def test_an_unknown_count_at_a_turns_start_re_arms_nothing(turn: Any) -> None:
    hook = BudgetHook()
    at(hook, turn, 2900)
    assert at(hook, turn, 0) == []  # a new turn's context, before its first reply
    assert at(hook, turn, 2950) == []
    assert notices(turn) == [70]


def test_the_event_goes_out_after_the_round_even_before_the_next_call(turn: Any) -> None:
    hook = BudgetHook()
    turn.ctx.context_tokens = 3000
    hook.after_iteration(turn.ctx)
    assert notices(turn) == [70]
    assert len(hook.reminders(turn.ctx)) == 1  # and the model still hears of it


def test_a_crossing_through_the_engine_reaches_the_next_request(
    ws: Any, settings: Any, engine_run: Any
) -> None:
    # Room for the file without a compaction: a small reply cap and the high-water mark at the
    # top, so occupancy climbs past 70% of the window (the scripted server counts bytes / 4).
    settings.max_tokens = 256
    settings.context.high_water = 1.0
    (ws / "big.txt").write_text("word " * 2000)
    run = engine_run(
        [
            {"tool_calls": [{"name": "read_file", "arguments": {"path": "big.txt"}}]},
            {"tool_calls": [{"name": "list_files", "arguments": {"path": "."}}]},
            {"content": "done"},
        ],
        ["read it"],
        n_ctx=4096,
    )
    assert [e.payload["percent"] for e in run.rec.of("budget_notice")] == [70]
    last = run.messages(2)[-1]
    assert last["role"] == "user" and "over 70% full" in last["content"]
