"""Everything the person reads from the model is escaped (issue 20): its terminal escape
sequences are shown, never acted on. Checked on the bytes the real CLI wrote (headless text,
`sessions`, `report`, `doctor`) and on what Textual would write to the terminal for the app's
widgets: no ESC, C1 or carriage return of the model's reaches the terminal."""

from __future__ import annotations

import asyncio
import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from cerveau_tui.testing.scripted_server import ScriptedServer
from cerveau_tui.text_safety import json_visible, visible

CERVEAU = str(Path(sys.executable).parent / "cerveau")

CLIPBOARD = "\x1b]52;c;Y3VybCBhdHRhY2tlcnxzaA==\x07"  # OSC 52: writes the person's clipboard
CLEAR = "\x1b[2J"
HIDE_LINE = "\x1b[1A\x1b[2K"  # cursor up, erase the line: what ran is gone from the screen
EVIL = f"ok{CLIPBOARD}{CLEAR}{HIDE_LINE}\rshown\x9b31m\x7f\u202eend"
#: Raw, any of these acts on a terminal (0x9b is an 8-bit CSI; U+202E reorders the line).
ACTIVE = ("\x1b", "\x9b", "\x07", "\r", "\x7f", "\u202e")


def _raw_controls(text: str) -> list[str]:
    return [c for c in ACTIVE if c in text]


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "CERVEAU_CONFIG": str(tmp_path / "person" / "config.toml")}


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    (tmp_path / "ws").mkdir()
    return tmp_path / "ws"


def _cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [CERVEAU, *args], env=env, capture_output=True, text=True, timeout=180,
        encoding="utf-8", errors="surrogateescape",
    )  # fmt: skip


HOSTILE_TURN = {
    "responses": [
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "a.txt", "content": EVIL}}]},
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "a.txt"}}]},
        {"content": f"answer {EVIL}"},
    ]
}


# -- the one helper -------------------------------------------------------------------------------


@pytest.mark.parametrize("seq", [CLIPBOARD, CLEAR, HIDE_LINE, "\r", "\x9b", "\x7f", "\u202e"])
def test_visible_shows_each_control_as_an_escape(seq: str) -> None:
    shown = visible(f"a{seq}b")
    assert _raw_controls(shown) == [] and shown.startswith("a\\") and shown.endswith("b")


def test_visible_keeps_newlines_tabs_and_text() -> None:
    assert visible("line 1\n\tline 2 é 漢") == "line 1\n\tline 2 é 漢"


def test_json_visible_is_the_same_json_value_with_nothing_raw() -> None:
    line = json.dumps({"t": EVIL}, ensure_ascii=False)
    assert _raw_controls(json_visible(line)) == []
    assert json.loads(json_visible(line)) == {"t": EVIL}


# -- the CLI, on its real output ----------------------------------------------------------------


def test_headless_text_output_shows_the_models_escapes_and_sends_none(
    ws: Path, env: dict[str, str]
) -> None:
    with ScriptedServer(HOSTILE_TURN) as srv:
        proc = _cli(env, "run", "--workspace", str(ws), "--server", srv.url, "go")
    assert proc.returncode == 0, proc.stderr
    assert _raw_controls(proc.stdout) == [] and _raw_controls(proc.stderr) == []
    assert "\\x1b]52;c;" in proc.stdout and "\\x1b[2J" in proc.stdout  # shown, as sent
    assert (ws / "a.txt").read_bytes().decode() == EVIL  # the file holds what the model wrote


def test_headless_json_output_carries_the_text_exactly_and_nothing_raw(
    ws: Path, env: dict[str, str]
) -> None:
    with ScriptedServer(HOSTILE_TURN) as srv:
        proc = _cli(env, "run", "--json", "--workspace", str(ws), "--server", srv.url, "go")
    assert proc.returncode == 0, proc.stderr
    assert _raw_controls(proc.stdout) == []
    events = [json.loads(line) for line in proc.stdout.splitlines()]
    answers = [e["payload"]["content"] for e in events if e["type"] == "assistant_message"]
    assert f"answer {EVIL}" in answers


def _session_with(ws: Path, env: dict[str, str], task: str, script: dict[str, Any]) -> None:
    with ScriptedServer(script) as srv:
        proc = _cli(env, "run", "--json", "--workspace", str(ws), "--server", srv.url, task)
    assert proc.returncode == 0, proc.stderr


def test_sessions_listing_shows_a_first_task_s_escapes(ws: Path, env: dict[str, str]) -> None:
    _session_with(ws, env, f"task {EVIL}", {"responses": [{"content": "done"}]})
    proc = _cli(env, "sessions", "--workspace", str(ws))
    assert proc.returncode == 0, proc.stderr
    assert _raw_controls(proc.stdout) == [] and "\\x1b]52" in proc.stdout
    listed = json.loads(_cli(env, "sessions", "--workspace", str(ws), "--json").stdout)
    assert listed[0]["first_task"].startswith(f"task {EVIL}"[:40])


def test_report_shows_a_plan_s_escapes(ws: Path, env: dict[str, str]) -> None:
    plan = [{"id": "s1", "title": f"step {EVIL}", "files": ["a.txt"]}]
    script = {
        "responses": [
            {"tool_calls": [{"name": "commit_plan", "arguments": {"steps": plan}}]},
            {"content": "planned"},
        ]
    }
    _session_with(ws, env, "plan it", script)
    proc = _cli(env, "report", "--workspace", str(ws))
    assert proc.returncode == 0, proc.stderr
    assert "step ok" in proc.stdout, proc.stdout
    assert _raw_controls(proc.stdout) == [] and "\\x1b]52" in proc.stdout


def test_doctor_shows_a_server_s_escapes(ws: Path, env: dict[str, str]) -> None:
    props = {"model_path": f"/m/{EVIL}.gguf", "build_info": f"b1-{EVIL}"}
    with ScriptedServer({"responses": []}, props=props) as srv:
        proc = _cli(env, "doctor", "--workspace", str(ws), "--server", srv.url)
    assert proc.returncode == 0, proc.stderr
    assert _raw_controls(proc.stdout) == [] and "\\x1b]52" in proc.stdout


# -- the TUI: what Textual would write to the terminal --------------------------------------------


def _drawn(*widgets: Any) -> str:
    """The terminal bytes of one full frame of an app holding `widgets`."""
    from textual.app import App, ComposeResult

    import cerveau_tui.app  # noqa: F401 - the app's import is what guards the terminal

    class Frame(App[None]):
        def compose(self) -> ComposeResult:
            yield from widgets

    async def frame() -> str:
        app = Frame()
        async with app.run_test(size=(120, 30)) as pilot:
            await pilot.pause()
            update = app.screen._compositor.render_update(full=True)
            return str(update.render_segments(app.console))

    return asyncio.run(frame())


def _planted_in(frame: str) -> list[str]:
    # Textual's own output is full of ESC (its cursor moves and colours): look for the model's.
    planted = ["\x1b]52", "\x1b[2J", "\x1b[1A", "\x1b[2K", "\x9b", "\u202e", "\r", "\x7f"]
    return [p for p in planted if p in frame]


def test_a_chat_line_of_the_model_s_text_draws_no_control_to_the_terminal() -> None:
    from textual.widgets import Markdown, Static

    from cerveau_tui.app.widgets.entries import NoticeLine, UserMessage

    frame = _drawn(NoticeLine(EVIL), UserMessage(EVIL), Markdown(EVIL), Static(EVIL, markup=False))
    assert _planted_in(frame) == []
    assert "shown" in frame


def test_a_link_whose_address_holds_an_escape_is_drawn_without_the_link() -> None:
    from rich.console import Console
    from rich.segment import Segment
    from rich.style import Style
    from textual.strip import Strip

    import cerveau_tui.app  # noqa: F401

    strip = Strip([Segment("click", Style(link=f"https://x.example/{CLIPBOARD}"))])
    out = strip.render(Console(file=io.StringIO(), force_terminal=True))
    assert "\x1b]52" not in out and "click" in out


def test_the_bridge_shows_the_escapes_and_leaves_the_logged_event_as_sent() -> None:
    from cerveau_tui.app.bridge import Bridge
    from cerveau_tui.app.messages import EngineEvent, StreamText
    from cerveau_tui.protocol import Event

    bridge = Bridge(lambda _wake: None)
    event = Event(type="tool_result", session_id="s", seq=1,
                  payload={"call_id": "c1", "output": EVIL})  # fmt: skip
    bridge(event)
    bridge(Event(type="token", session_id="s", seq=2, payload={"text": EVIL}))
    shown, text = bridge.drain()
    assert isinstance(shown, EngineEvent) and isinstance(text, StreamText)
    assert shown.payload["output"] == visible(EVIL) and text.text == visible(EVIL)
    assert event.payload["output"] == EVIL  # the session log's copy is what the model sent


def test_a_cloned_workspace_config_s_key_is_shown_escaped_in_the_error(
    ws: Path, env: dict[str, str]
) -> None:
    (ws / ".cerveau").mkdir()
    (ws / ".cerveau" / "config.toml").write_text('"evil\\u001b[2J\\u001b]52;c;eA==\\u0007" = 1\n')
    proc = _cli(env, "doctor", "--workspace", str(ws), "--server", "http://127.0.0.1:9")
    assert proc.returncode != 0
    assert _raw_controls(proc.stderr) == [] and "evil\\x1b[2J" in proc.stderr
