"""Issue 15 item 7, what a new user meets first: `--version`, a `.cerveau/` that keeps itself out
of git, a stray CERVEAU_* variable said once as a warning instead of a refusal to start."""

from __future__ import annotations

import subprocess
import sys

import pytest

from cerveau_tui import __version__
from cerveau_tui.cli import main
from cerveau_tui.config import load_settings
from cerveau_tui.provider.llama import LlamaProvider
from cerveau_tui.sandbox.protect import ensure_state_dir
from cerveau_tui.session import build_session
from cerveau_tui.testing.scripted_server import ScriptedServer


def test_version_prints_the_package_version(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out.strip() == f"cerveau {__version__}"


def test_a_new_session_makes_a_state_folder_git_ignores(tmp_path):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    settings = load_settings(tmp_path, environ={}, user_config=tmp_path / "n")
    with ScriptedServer({"responses": [{"content": "hi"}]}) as srv:
        build_session(settings, provider=LlamaProvider(srv.url)).close()
    assert (tmp_path / ".cerveau").is_dir()
    status = subprocess.run(
        ["git", "-C", str(tmp_path), "status", "--porcelain", "--untracked-files=all"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert ".cerveau" not in status.stdout


def test_the_state_folder_of_the_sandbox_is_ignored_and_a_persons_gitignore_is_kept(tmp_path):
    ensure_state_dir(tmp_path)
    assert (tmp_path / ".cerveau/.gitignore").read_text().splitlines()[-1] == "*"
    (tmp_path / ".cerveau/.gitignore").write_text("sessions/\n")
    ensure_state_dir(tmp_path)
    assert (tmp_path / ".cerveau/.gitignore").read_text() == "sessions/\n"


def test_a_planted_gitignore_link_is_not_written_through(tmp_path):
    (tmp_path / ".cerveau").mkdir()
    target = tmp_path / "elsewhere"
    (tmp_path / ".cerveau/.gitignore").symlink_to(target)
    ensure_state_dir(tmp_path)
    assert not target.exists()


def test_a_stray_variable_is_one_warning_on_stderr_and_the_command_runs(tmp_path):
    env = {"CERVEAU_NOT_A_SETTING": "1", "CERVEAU_CONFIG": str(tmp_path / "none.toml")}
    proc = subprocess.run(
        [sys.executable, "-m", "cerveau_tui", "report", "--workspace", str(tmp_path)],
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", **env},
        timeout=60,
    )
    assert "invalid settings" not in proc.stderr
    assert proc.stderr.count("ignored CERVEAU_NOT_A_SETTING: no such setting") == 1


def test_screenshot_goes_to_the_state_folder_when_there_is_no_downloads(tmp_path):
    from cerveau_tui.app.palette import screenshot_dir

    out = screenshot_dir(tmp_path / "no-downloads", tmp_path / "state")
    assert out == tmp_path / "state/screenshots" and out.is_dir()
    assert screenshot_dir(tmp_path, tmp_path / "state") == tmp_path


async def test_the_palettes_screenshot_saves_a_file_without_downloads(tmp_path, monkeypatch):
    import platformdirs

    from .helpers import viewer_app, wait_until

    monkeypatch.setattr(platformdirs, "user_downloads_path", lambda: tmp_path / "none")
    monkeypatch.setattr(platformdirs, "user_state_path", lambda _name: tmp_path / "state")
    app = viewer_app(tmp_path / "ws")
    async with app.run_test() as pilot:
        shot = [c for c in app.get_system_commands(app.screen) if c.title == "Screenshot"]
        assert len(shot) == 1
        shot[0].callback()
        assert await wait_until(pilot, lambda: any((tmp_path / "state").rglob("*.svg")))


async def test_an_error_is_shown_once_not_again_in_the_turns_end_line(tmp_path):
    from cerveau_tui.app.widgets.entries import NoticeLine

    from .helpers import engine_app, wait_until

    script = {"responses": [{"error": {"status": 500, "message": "boom"}}] * 6}
    with ScriptedServer(script) as srv:
        app, rec = engine_app(tmp_path, srv.url)
        async with app.run_test() as pilot:
            assert await wait_until(pilot, lambda: app.runner.session is not None)
            await pilot.press(*"hi", "enter")
            assert await wait_until(pilot, lambda: bool(rec.of("turn_ended")) and not app.busy)
            await pilot.pause()
            texts = [n.text for n in app.chat.query(NoticeLine)]
            assert sum("boom" in t for t in texts) == 1, texts
            assert "turn ended: error (the error above)" in texts
            await pilot.press("ctrl+q")
