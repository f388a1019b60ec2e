"""A session that cannot open (its log held by another cerveau) lets go of what it started."""

from __future__ import annotations

from pathlib import Path

import pytest

from cerveau_tui.bus import Emitter
from cerveau_tui.config import load_settings
from cerveau_tui.plan.persist import SessionBusy, SessionLog
from cerveau_tui.provider.llama import LlamaProvider
from cerveau_tui.session import build_session
from cerveau_tui.testing.scripted_server import ScriptedServer


def test_a_session_that_cannot_open_its_log_closes_its_provider(tmp_path: Path) -> None:
    held = SessionLog(tmp_path, "held-elsewhere")  # another cerveau has it open
    try:
        with ScriptedServer({"responses": [{"content": "ok"}]}) as srv:
            provider = LlamaProvider(srv.url)
            settings = load_settings(tmp_path, environ={})
            with pytest.raises(SessionBusy):
                build_session(settings, bus=Emitter(), provider=provider, resume="held-elsewhere")
    finally:
        held.close()
    assert provider._client.is_closed
