"""Issue 15 item 5: a header saying what is in force (sandbox mode and backend, approval policy,
autopilot or discussion, native or constrained actions, own or shared server, model and n_ctx);
before the server answered it says what it waits for, never "ready"."""

from __future__ import annotations

from pathlib import Path

from cerveau_tui.app.widgets.header import SessionHeader, facts_of, header_content
from cerveau_tui.config import Settings
from cerveau_tui.testing.scripted_server import ScriptedServer

from .helpers import engine_app, wait_until

READY = {"server_url": "http://127.0.0.1:1", "managed": True, "model": "SmolLM2-135M.gguf",
         "n_ctx": 8192, "action_mode": "constrained", "sandbox_backend": "bubblewrap",
         "sandbox_enforced": True}  # fmt: skip


def text(settings: Settings, status: dict | None) -> str:
    return header_content(facts_of(settings, status)).plain


def test_the_header_names_everything_in_force(tmp_path: Path) -> None:
    s = Settings(workspace=tmp_path, sandbox="read-only", approval="untrusted")
    assert text(s, READY) == (
        "sandbox read-only (bubblewrap) │ approval untrusted │ autopilot │ constrained actions"
        " │ own server │ SmolLM2-135M n_ctx 8,192"
    )


def test_a_shared_server_discussion_mode_and_an_unenforced_sandbox_are_said(tmp_path) -> None:
    s = Settings(workspace=tmp_path, discuss=True)
    shown = text(
        s, {**READY, "managed": False, "sandbox_backend": "none", "sandbox_enforced": False}
    )
    assert "sandbox workspace-write (none, NOT enforced)" in shown
    assert "discussion: read and plan only" in shown and "shared server" in shown


def test_before_the_session_the_header_says_what_it_waits_for(tmp_path: Path) -> None:
    s = Settings(workspace=tmp_path, server_url="http://127.0.0.1:9")
    shown = text(s, None)
    assert shown.endswith("waiting for http://127.0.0.1:9") and "ready" not in shown


async def test_the_running_app_shows_the_servers_facts_in_its_header(tmp_path: Path) -> None:
    with ScriptedServer({"responses": [{"content": "hi"}]}) as srv:
        app, _ = engine_app(tmp_path, srv.url, approval="never")
        async with app.run_test() as pilot:
            header = app.screen_stack[0].query_one(SessionHeader)
            assert await wait_until(pilot, lambda: header.facts.own_server is not None)
            shown = header_content(header.facts).plain
            assert "approval never" in shown and "shared server" in shown
            assert "actions" in shown and "auto actions" not in shown
            await pilot.press("ctrl+q")


def test_what_the_backend_cannot_hold_is_counted_in_red(tmp_path: Path) -> None:
    s = Settings(workspace=tmp_path)
    content = header_content(
        facts_of(s, {**READY, "sandbox_backend": "landlock", "sandbox_gaps": 5})
    )
    assert "sandbox workspace-write (landlock) 5 gaps │" in content.plain
    assert any(
        "error" in str(span.style)
        for span in content.spans
        if "gaps" in content.plain[span.start : span.end]
    )
    assert "gap" not in text(s, READY)
