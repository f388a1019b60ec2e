"""A folder outside the workspace that holds a deny-read path is never read through, even with
the person's yes. Found: an approved `search /root` ran rg (a host process, the person's rights)
over /root/.ssh and sent a key's line to the model. Verified from the host: every tool result and
every file the session wrote, not what the tool said."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cerveau_tui.bus import Emitter, Recorder
from cerveau_tui.config import load_settings
from cerveau_tui.loop.approver import ApproveAll
from cerveau_tui.provider.llama import LlamaProvider
from cerveau_tui.session import build_session
from cerveau_tui.testing.scripted_server import ScriptedServer

SECRET = "TOKEN-7f3a9c-vault"


def search(path: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": "search", "arguments": {"pattern": "TOKEN", "path": path}}]}


def test_an_approved_search_of_a_folder_holding_a_secret_reads_none_of_it(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    outside = tmp_path / "outside"
    vault = outside / "vault"
    vault.mkdir(parents=True)
    (vault / "key").write_text(SECRET + "\n")
    (outside / "notes").mkdir()
    (outside / "notes" / "n.txt").write_text("TOKEN-in-the-notes\n")
    (tmp_path / "alias").symlink_to(outside)
    user = tmp_path / "user.toml"
    user.write_text(f'deny_read = ["{vault}"]\n')
    asked = [
        str(outside),
        str(tmp_path),
        str(tmp_path / "alias"),
        f"{vault}/..",
        str(outside / "notes"),
    ]
    script = {"responses": [*(search(p) for p in asked), {"content": "done"}]}
    bus = Emitter()
    rec = Recorder(bus)
    settings = load_settings(ws, environ={}, user_config=user)
    with ScriptedServer(script) as srv:
        s = build_session(settings, bus=bus, approver=ApproveAll(), provider=LlamaProvider(srv.url))
        s.engine.run("find the token")
        s.close()
    results = [e.payload for e in rec.of("tool_result")]
    assert [r["status"] for r in results] == ["denied"] * 4 + ["done"]
    assert all(str(vault) in r["output"] for r in results[:4])
    # The control: the same search over a folder that holds no secret ran and found its line.
    assert "TOKEN-in-the-notes" in results[4]["output"]
    assert not any(SECRET in str(r) for r in results)
    assert not any(SECRET in str(body) for body in srv.requests)
    for f in ws.rglob("*"):
        if f.is_file():
            assert SECRET.encode() not in f.read_bytes(), f
