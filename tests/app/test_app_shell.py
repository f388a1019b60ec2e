"""The shell around the chat: themes remembered, keymap, palette, provisioning, pruning."""

from __future__ import annotations

import threading
import tomllib
from pathlib import Path
from typing import Any

from cerveau_tui.app.app import CerveauApp
from cerveau_tui.app.widgets.chat import ChatView
from cerveau_tui.app.widgets.entries import NoticeLine
from cerveau_tui.app.widgets.planner import PlannerPanel
from cerveau_tui.app.widgets.reasoning import ReasoningBlock
from cerveau_tui.config import Settings, save_user_setting

from .helpers import viewer_app, wait_until


async def test_our_themes_are_registered_and_a_switch_is_saved_in_the_user_config(
    tmp_path: Path,
) -> None:
    cfg = tmp_path / "config.toml"
    app = CerveauApp(
        Settings(workspace=tmp_path), save_setting=lambda k, v: save_user_setting(k, v, cfg)
    )
    async with app.run_test() as pilot:
        assert app.theme == "cerveau-dark"
        assert {"cerveau-dark", "cerveau-light"} <= set(app.available_themes)
        app.theme = "cerveau-light"
        assert await wait_until(pilot, lambda: cfg.is_file())
    assert tomllib.loads(cfg.read_text())["theme"] == "cerveau-light"


async def test_the_keymap_from_settings_remaps_a_binding_by_id(tmp_path: Path) -> None:
    app = viewer_app(tmp_path, keymap={"app.planner": "f5"})
    async with app.run_test() as pilot:
        await pilot.press("f2")
        assert not app.query_one(PlannerPanel).has_class("-open")
        await pilot.press("f5")
        assert app.query_one(PlannerPanel).has_class("-open")


async def test_the_palette_toggles_the_planner(tmp_path: Path) -> None:
    app = viewer_app(tmp_path)
    async with app.run_test() as pilot:
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"toggle planner")
        await pilot.pause(0.3)
        await pilot.press("enter")
        assert await wait_until(pilot, lambda: app.query_one(PlannerPanel).has_class("-open"))


async def test_reasoning_is_hidden_when_show_reasoning_is_off_and_toggles_back(
    tmp_path: Path,
) -> None:
    app = viewer_app(tmp_path, show_reasoning=False)
    async with app.run_test() as pilot:
        app.bus.emit("reasoning", {"text": "thinking"})
        assert await wait_until(pilot, lambda: bool(app.query(ReasoningBlock)))
        await pilot.pause()
        assert app.query_one(ReasoningBlock).region.height == 0
        await pilot.press("f3")
        await pilot.pause()
        assert app.query_one(ReasoningBlock).region.height > 0


async def test_provisioning_progress_is_shown_and_quitting_during_it_ends_the_thread(
    tmp_path: Path,
) -> None:
    release = threading.Event()

    def factory(bus: Any, approver: Any, progress: Any) -> Any:
        progress("download", 0.5, "SmolLM2-135M.gguf")
        while not release.wait(0.05):
            progress("download", 0.5, "SmolLM2-135M.gguf")  # raises once the app quits
        raise AssertionError("not reached")

    app = CerveauApp(
        Settings(workspace=tmp_path), session_factory=factory, save_setting=lambda k, v: None
    )
    async with app.run_test() as pilot:
        chat = app.query_one(ChatView)
        assert await wait_until(
            pilot,
            lambda: any(
                n.text == "starting: download 50% SmolLM2-135M.gguf" for n in chat.query(NoticeLine)
            ),
        )
        await pilot.press("ctrl+q")
    assert app.runner is not None and not app.runner.thread.is_alive()


async def test_a_long_session_keeps_only_the_newest_entries_mounted(tmp_path: Path) -> None:
    app = viewer_app(tmp_path)
    async with app.run_test() as pilot:
        chat = app.query_one(ChatView)
        chat.max_entries = 50
        for i in range(120):
            app.bus.emit("turn_started", {"input": f"task {i}"})
            app.bus.emit("turn_ended", {"reason": "interrupted", "iterations": 1})
        assert await wait_until(
            pilot, lambda: any("task 119" in getattr(w, "text", "") for w in chat.children)
        )
        await pilot.pause()
        assert len(chat.children) <= 50
        assert not any("task 0" == getattr(w, "text", "") for w in chat.children)
