"""Issue 15 item 5: nothing says "ready" before the server answered. A dead --server URL shows a
disconnected state that keeps retrying (an injected sleep; no timing asserted); `cerveau doctor
--server URL` exits non-zero when nothing answers."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from cerveau_tui.app.widgets.entries import NoticeLine
from cerveau_tui.app.widgets.status_bar import StatusBar
from cerveau_tui.cli import main
from cerveau_tui.stack.server import free_port, wait_until_answers
from cerveau_tui.testing.scripted_server import ScriptedServer

from .helpers import engine_app, wait_until


def dead_url() -> str:
    return f"http://127.0.0.1:{free_port()}"


def lines(app) -> list[str]:
    return [n.text for n in app.chat.query(NoticeLine)]


@pytest.mark.anyio
async def test_a_dead_server_url_is_disconnected_and_retrying_never_ready(tmp_path: Path) -> None:
    app, _ = engine_app(tmp_path, dead_url())
    async with app.run_test() as pilot:
        assert await wait_until(pilot, lambda: any("retry 2" in t for t in lines(app)))
        shown = " ".join(lines(app))
        assert "disconnected: nothing answers at" in shown
        assert "ready" not in shown
        assert app.screen_stack[0].query_one(StatusBar).state.phase == "disconnected"
        assert app.runner is not None and app.runner.session is None
        await pilot.press("ctrl+q")
    assert not app.runner.thread.is_alive()  # the retry's sleep woke on quit


@pytest.mark.anyio
async def test_a_live_server_url_says_ready_once_it_answered(tmp_path: Path) -> None:
    with ScriptedServer({"responses": [{"content": "hi"}]}) as srv:
        app, _ = engine_app(tmp_path, srv.url)
        async with app.run_test() as pilot:
            assert await wait_until(pilot, lambda: any(t.startswith("ready") for t in lines(app)))
            assert not any("disconnected" in t for t in lines(app))
            await pilot.press("ctrl+q")


def test_the_wait_retries_with_growing_delays_until_the_server_answers() -> None:
    answers = iter([False, False, False, True])
    said: list[str] = []
    slept: list[float] = []
    failed = wait_until_answers(
        "http://x", lambda s, f, line: said.append(f"{s}: {line}"),
        answers=lambda _url: next(answers), sleep=slept.append,
    )  # fmt: skip
    assert failed == 3 and slept == [1.0, 2.0, 4.0]
    assert said[0] == "disconnected: nothing answers at http://x; retry 1 in 1s"


def test_doctor_exits_non_zero_when_nothing_answers_at_the_server(tmp_path, capsys) -> None:
    url = dead_url()
    assert main(["doctor", "--workspace", str(tmp_path), "--server", url]) == 1
    assert f"nothing answers at {url}" in capsys.readouterr().err


def test_doctor_exits_zero_when_the_server_answers(tmp_path) -> None:
    with ScriptedServer({"responses": []}) as srv:
        assert main(["doctor", "--workspace", str(tmp_path), "--server", srv.url, "--json"]) == 0


def test_quitting_wakes_a_start_up_waiting_for_the_server() -> None:
    from cerveau_tui.app.runner import Cancelled, StartupProgress

    stopping = threading.Event()
    stopping.set()
    with pytest.raises(Cancelled):
        StartupProgress(lambda item: None, stopping).sleep(60.0)
