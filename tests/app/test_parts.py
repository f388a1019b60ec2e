"""The pure parts of the app: streaming split, the bridge's coalescing, themes, diffs, cards."""

from __future__ import annotations

from pathlib import Path

import pytest

from cerveau_tui.app.bridge import Bridge
from cerveau_tui.app.messages import EngineEvent, StreamText, Wake
from cerveau_tui.app.themes import BUILTIN_THEMES_DIR, load_themes, theme_from_toml
from cerveau_tui.app.widgets.answer import split_settled
from cerveau_tui.app.widgets.diff_view import highlight_diff
from cerveau_tui.app.widgets.status_bar import StatusState, status_content
from cerveau_tui.app.widgets.tool_card import clip_output
from cerveau_tui.bus import Emitter
from cerveau_tui.protocol.describe import summarize_arguments


def test_settled_markdown_ends_at_the_last_blank_line() -> None:
    assert split_settled("one\n\ntwo\n\nthr") == ("one\n\ntwo\n\n", "thr")


def test_a_blank_line_inside_an_open_code_fence_does_not_settle() -> None:
    text = "intro\n\n```py\na = 1\n\nb = 2\n"
    assert split_settled(text) == ("intro\n\n", "```py\na = 1\n\nb = 2\n")


def test_a_closed_fence_settles_at_the_blank_line_after_it() -> None:
    text = "```\nx\n\n```\n\nafter"
    assert split_settled(text) == ("```\nx\n\n```\n\n", "after")


def test_the_bridge_merges_tokens_and_wakes_the_app_once() -> None:
    posted: list[Wake] = []
    bus = Emitter()
    bridge = Bridge(posted.append)
    bus.subscribe(bridge)
    for word in ["a", "b", "c"]:
        bus.emit("token", {"text": word})
    assert len(posted) == 1
    assert bridge.drain() == [StreamText("answer", "abc")]


def test_the_bridge_keeps_text_and_events_in_order() -> None:
    bus = Emitter()
    bridge = Bridge(lambda m: None)
    bus.subscribe(bridge)
    bus.emit("token", {"text": "x"})
    bus.emit("tool_call", {"call_id": "1", "name": "bash", "arguments": {}})
    bus.emit("token", {"text": "y"})
    bus.emit("reasoning", {"text": "r"})
    items = bridge.drain()
    assert [type(i).__name__ for i in items] == [
        "StreamText",
        "EngineEvent",
        "StreamText",
        "StreamText",
    ]
    assert isinstance(items[1], EngineEvent) and items[1].type == "tool_call"
    assert [i.kind for i in items if isinstance(i, StreamText)] == ["answer", "answer", "reasoning"]


def test_while_a_drain_is_deferred_text_does_not_wake_but_an_event_does() -> None:
    posted: list[Wake] = []
    bridge = Bridge(posted.append)
    bridge.put_text("answer", "a")
    assert bridge.take_wake() is True
    bridge.defer()
    bridge.put_text("answer", "b")
    assert len(posted) == 1
    bridge.put(EngineEvent.__new__(EngineEvent))
    assert len(posted) == 2


def test_our_dark_and_light_themes_load_from_the_themes_folder() -> None:
    loaded = load_themes([BUILTIN_THEMES_DIR])
    names = {t.name: t.dark for t in loaded.themes}
    assert names == {"cerveau-dark": True, "cerveau-light": False}
    assert loaded.problems == []


def test_a_broken_theme_file_is_reported_not_fatal(tmp_path: Path) -> None:
    (tmp_path / "bad.toml").write_text("name = 'bad'\n")
    (tmp_path / "worse.toml").write_text("primary = \n")
    loaded = load_themes([tmp_path])
    assert loaded.themes == []
    assert len(loaded.problems) == 2
    with pytest.raises(ValueError, match="primary"):
        theme_from_toml(tmp_path / "bad.toml")


def test_a_diff_is_coloured_with_theme_variables_only() -> None:
    content = highlight_diff("--- a/x\n+++ b/x\n@@ -1 +1 @@\n-old\n+new\n")
    styles = {str(span.style) for span in content.spans}
    assert "$text-success" in styles and "$text-error" in styles
    assert not any("#" in s for s in styles)


def test_a_card_summarises_a_call_by_its_command_or_path() -> None:
    assert summarize_arguments("bash", {"command": "ls   -la\nsrc"}) == "ls -la src"
    assert summarize_arguments("write_file", {"path": "a.py", "content": "x" * 500}) == "a.py"
    assert summarize_arguments("x", {"k": "v" * 200}, width=20).endswith("…")


def test_long_output_keeps_its_last_lines_and_says_how_many_were_cut() -> None:
    text = clip_output("\n".join(str(i) for i in range(100)), max_lines=5)
    assert text.splitlines() == ["… 95 earlier lines not shown", "95", "96", "97", "98", "99"]


def test_an_unenforced_sandbox_is_spelled_out() -> None:
    text = status_content(StatusState(sandbox="none", enforced=False)).plain
    assert "sandbox: none NOT enforced" in text
    text = status_content(
        StatusState(sandbox="bubblewrap", enforced=True, n_ctx=8192, context_tokens=2048)
    ).plain
    assert "sandbox: bubblewrap" in text and "ctx 2,048/8,192 (25%)" in text


def test_the_verification_seal_shows_failed_checks_and_hides_clean() -> None:
    assert "✗ checks failed" in status_content(StatusState(seal="failed")).plain
    assert "clean" not in status_content(StatusState(seal="clean")).plain


async def test_a_streamed_answer_ends_as_markdown_with_everything_it_received(
    tmp_path: Path,
) -> None:
    from textual.widgets import Markdown

    from cerveau_tui.app.widgets.answer import StreamingAnswer

    from .helpers import viewer_app, wait_until

    app = viewer_app(tmp_path)
    text = "Intro paragraph.\n\n" + "".join(f"- item {i}\n" for i in range(300)) + "\nlast words"
    async with app.run_test() as pilot:
        for i in range(0, len(text), 5):
            app.bus.emit("token", {"text": text[i : i + 5]})
        app.bus.emit("assistant_message", {})
        assert await wait_until(pilot, lambda: bool(app.query(StreamingAnswer)))
        answer = app.query_one(StreamingAnswer)
        assert await wait_until(pilot, lambda: answer.finished and bool(answer.query(Markdown)))
        await pilot.pause()
        assert answer.source == text
        shown = "".join(m.source for m in answer.query(Markdown))
        assert "item 0" in shown and "item 299" in shown and shown.endswith("last words")
