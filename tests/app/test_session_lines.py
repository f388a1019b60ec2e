"""The long-session events reach the person: a compaction with its figures, a budget notice,
the reminder the model was given, the polish's fate. None of them is silent."""

from __future__ import annotations

from pathlib import Path

from cerveau_tui.app.widgets.chat import ChatView
from cerveau_tui.app.widgets.entries import NoticeLine
from cerveau_tui.app.widgets.status_bar import StatusBar
from cerveau_tui.protocol import BudgetNotice, Compacted, PolishPayload, ReminderPayload
from cerveau_tui.protocol.describe import budget_line, compacted_line, polish_line, reminder_line

from .helpers import viewer_app, wait_until


def test_a_compaction_line_gives_the_figures_and_the_summary_source() -> None:
    text, _ = compacted_line(
        Compacted(
            tokens_before=3100,
            tokens_after=1500,
            dropped_rounds=6,
            summary_source="brief",
            pruned=4,
            n_ctx=4096,
        )
    )
    assert "3,100 → 1,500 tokens of 4,096" in text
    assert (
        "6 rounds" in text and "resume brief" in text and "4 old calls and results cleared" in text
    )


def test_a_budget_notice_at_ninety_percent_is_a_warning() -> None:
    assert budget_line(BudgetNotice(percent=90, context_tokens=3700, n_ctx=4096))[1] == "warning"
    assert budget_line(BudgetNotice(percent=70))[1] == "info"


def test_a_reminder_line_names_its_sources_and_its_first_line() -> None:
    p = ReminderPayload(
        text="[reminder header]\nnotes.txt changed on disk since you read it\nsecond",
        sources=["changed_on_disk"],
    )
    text, _ = reminder_line(p)
    assert "changed_on_disk" in text and "notes.txt changed on disk" in text and "+1 lines" in text


def test_a_reverted_polish_is_a_warning() -> None:
    reverted = polish_line(PolishPayload(result="reverted"))
    kept = polish_line(PolishPayload(result="kept"))
    assert reverted is not None and reverted[1] == "warning"
    assert kept is not None and "kept" in kept[0]


def test_no_polish_without_a_gate_is_not_said_every_turn() -> None:
    assert polish_line(PolishPayload(result="skipped", reason="no done gate in use")) is None
    off = polish_line(PolishPayload(result="skipped", reason="polish is off"))
    assert off is not None and "skipped" in off[0]


async def test_a_compacted_event_shows_a_line_and_moves_the_status_bar(tmp_path: Path) -> None:
    app = viewer_app(tmp_path)
    async with app.run_test() as pilot:
        app.bus.emit(
            "compacted",
            {
                "tokens_before": 3000,
                "tokens_after": 1400,
                "dropped_rounds": 5,
                "summary_source": "model",
                "n_ctx": 4096,
            },
        )
        chat = app.query_one(ChatView)
        assert await wait_until(
            pilot, lambda: any("3,000 → 1,400" in str(n.render()) for n in chat.query(NoticeLine))
        )
        bar = app.query_one(StatusBar)
        assert bar.state.context_tokens == 1400 and bar.state.n_ctx == 4096
