"""A server URL with `user:password@` (a proxy, a hosted router) is used to connect, and never
said: not on the JSON stream, not in the session's log, not in the status the TUI draws."""

from __future__ import annotations

from pathlib import Path

from cerveau_tui.app.widgets.header import facts_of
from cerveau_tui.config import Settings
from cerveau_tui.testing.scripted_server import ScriptedServer

SECRET = "hunter2-not-for-the-log"


def _with_credentials(url: str) -> str:
    return url.replace("http://", f"http://someone:{SECRET}@", 1)


def test_credentials_in_the_server_url_are_not_in_the_stream_or_the_log(cli, tmp_path):
    with ScriptedServer({"responses": [{"content": "hello"}]}) as srv:
        code, events, out = cli(tmp_path, _with_credentials(srv.url), "say hello")
    assert code == 0, out
    assert SECRET not in out
    logs = list(Path(tmp_path, ".cerveau").rglob("*.jsonl"))
    assert logs and not any(SECRET in p.read_text() for p in logs)


def test_the_header_waiting_for_a_server_does_not_show_its_password() -> None:
    settings = Settings(server_url=f"http://someone:{SECRET}@127.0.0.1:9")
    assert SECRET not in facts_of(settings, None).waiting_for
    assert "127.0.0.1:9" in facts_of(settings, None).waiting_for
