"""Prompt history per workspace (issue 15, item 9): Up after a restart brings back what was sent
in this workspace; the file is bounded and never written through a link."""

from __future__ import annotations

import json
import os
from pathlib import Path

from cerveau_tui.app.widgets.prompt import HISTORY_REL, PromptHistory

from .helpers import viewer_app


async def test_the_history_survives_a_restart_in_the_same_workspace(tmp_path: Path) -> None:
    app = viewer_app(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("f", "i", "x", "enter")
        await pilot.pause()
    assert json.loads((tmp_path / HISTORY_REL).read_text()) == ["fix"]
    again = viewer_app(tmp_path)
    async with again.run_test(size=(80, 24)) as pilot:
        await pilot.press("up")
        await pilot.pause()
        assert again.prompt.text == "fix"


async def test_another_workspace_has_its_own_history(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    PromptHistory.load(tmp_path / "a").add("only in a")
    app = viewer_app(tmp_path / "b")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("up")
        await pilot.pause()
        assert app.prompt.text == ""


def test_the_history_keeps_the_newest_entries_up_to_its_limit(tmp_path: Path) -> None:
    history = PromptHistory.load(tmp_path, limit=3)
    for text in ("one", "two", "three", "four"):
        history.add(text)
    assert PromptHistory.load(tmp_path, limit=3).entries == ["two", "three", "four"]


def test_a_link_in_place_of_the_history_is_not_followed(tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("[]")
    ws = tmp_path / "ws"
    (ws / ".cerveau").mkdir(parents=True)
    os.symlink(outside, ws / HISTORY_REL)
    history = PromptHistory.load(ws)
    assert history.problem  # said, not silently read through the link
    history.add("secret prompt")
    assert outside.read_text() == "[]"
    assert history.entries == ["secret prompt"]  # this run still has it


def test_a_damaged_history_file_costs_the_history_not_the_prompt(tmp_path: Path) -> None:
    (tmp_path / ".cerveau").mkdir()
    (tmp_path / HISTORY_REL).write_text("{not json")
    history = PromptHistory.load(tmp_path)
    assert history.entries == [] and "not read" in history.problem
