"""The chat's lines for the gate's and the memory's events, as the person reads them (issue 22):
the count of lessons the hook stored, a park said once."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cerveau_tui.app.widgets.chat import ChatView
from cerveau_tui.app.widgets.entries import NoticeLine

from .helpers import viewer_app, wait_until


async def chat_lines(tmp_path: Path, events: list[tuple[str, dict[str, Any]]], want: str) -> str:
    app = viewer_app(tmp_path)
    async with app.run_test() as pilot:
        for type_, payload in events:
            app.bus.emit(type_, payload)
        chat = app.query_one(ChatView)
        await wait_until(
            pilot, lambda: any(want in str(n.render()) for n in chat.query(NoticeLine))
        )
        return "\n".join(str(n.render()) for n in chat.query(NoticeLine))


async def test_the_chat_counts_the_lessons_the_hook_stored(tmp_path: Path) -> None:
    stored = [
        {"id": 1, "kind": "denied", "text": "`rm -rf /` was denied; used `rm build/`"},
        {"id": 2, "kind": "gate", "text": "ImportError cleared by adding calc.py"},
    ]
    shown = await chat_lines(
        tmp_path, [("lessons", {"stored": stored, "text": "learnt: two"})], "lessons learnt"
    )
    assert "lessons learnt this turn: 2" in shown, shown


async def test_a_park_reads_parked_once(tmp_path: Path) -> None:
    parked = {
        "handoff": "# handoff",
        "unmet": ["tests"],
        "path": ".cerveau/handoff.md",
        "text": "parked: the escalation ladder ran out; handoff in .cerveau/handoff.md",
    }
    shown = await chat_lines(tmp_path, [("parked", parked)], "escalation ladder ran out")
    assert "parked: the escalation ladder" in shown and "parked: parked:" not in shown, shown
