"""A done check runs only with the person's yes when the sandbox is not enforced, as every model
command does then: a cloned repository's `[done]` command ran with the person's full rights at
the first turn's precheck. Checked from the host side: the command's marker file."""

from __future__ import annotations

from pathlib import Path

from cerveau_tui.bus import Emitter
from cerveau_tui.config import Settings
from cerveau_tui.done.wire import done_hooks
from cerveau_tui.history import History
from cerveau_tui.hooks import TurnContext
from cerveau_tui.sandbox.none import NoSandbox
from cerveau_tui.testing.cli import run_cli
from cerveau_tui.testing.scripted_server import ScriptedServer
from cerveau_tui.tools.base import ToolState


def planted(ws: Path, marker: Path) -> None:
    (ws / ".cerveau").mkdir(parents=True)
    (ws / ".cerveau" / "config.toml").write_text(
        f'[[done.criteria]]\nname = "tests"\ncommand = "touch {marker}"\n'
    )


def test_headless_with_no_sandbox_the_workspace_check_does_not_run(tmp_path: Path) -> None:
    ws, marker = tmp_path / "ws", tmp_path / "ran-with-your-rights"
    planted(ws, marker)
    with ScriptedServer({"responses": [{"content": "Done."}]}) as srv:
        # Trusted, so the criteria apply (untrusted they are held back: test_config_only_tightens)
        # and what is checked is the consent the unenforced sandbox needs.
        code, events, err = run_cli(
            ws,
            srv.url,
            "say done",
            "--trust-workspace-config",
            env={"CERVEAU_SANDBOX_BACKEND": "none"},
        )
    assert code == 0, err[-800:]
    assert not marker.exists()
    said = " ".join(str(e["payload"].get("text", "")) for e in events if e["type"] == "notice")
    assert "done check not run" in said


def _start(tmp_path: Path, answer: bool | None) -> tuple[Path, list[str]]:
    ws, marker = tmp_path / "ws", tmp_path / "marker"
    planted(ws, marker)
    from cerveau_tui.config import load_settings

    settings = load_settings(ws, user_config=tmp_path / "none.toml", trust_workspace=True)
    asked: list[str] = []

    def ask(summary: str, reason: str) -> bool | None:
        asked.append(summary)
        return answer

    hooks = done_hooks(settings, NoSandbox())
    ctx = TurnContext(
        turn_id="t1",
        iteration=0,
        workspace=ws,
        bus=Emitter(),
        state=ToolState(),
        history=History(),
        settings=Settings(workspace=ws),
        asker=ask,
    )
    for h in hooks:
        h.on_turn_start(ctx, "fix it")
    return marker, asked


def test_with_the_persons_yes_the_check_runs(tmp_path: Path) -> None:
    marker, asked = _start(tmp_path, True)
    assert asked and "touch" in asked[0]
    assert marker.exists()  # the precheck ran it


def test_with_the_persons_no_it_does_not(tmp_path: Path) -> None:
    marker, asked = _start(tmp_path, False)
    assert asked and not marker.exists()
