"""Saving the person's answer about the gate (`[done] gate`) in .cerveau/config.toml, and
putting it in force in the running session."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

import pytest

from cerveau_tui import trust
from cerveau_tui.config import ConfigError, load_settings, trust_store_path
from cerveau_tui.done.gate_setting import save_gate
from cerveau_tui.done.hook import GateHook
from cerveau_tui.session import build_session
from cerveau_tui.testing.scripted_server import ScriptedServer

from .conftest import CALC_BROKEN, TEST_CALC

CONFIG = Path(".cerveau") / "config.toml"


def config(ws: Path, text: str | None) -> Path:
    path = ws / CONFIG
    path.parent.mkdir(parents=True, exist_ok=True)
    if text is not None:
        path.write_text(text)
    return path


def test_a_file_without_done_gets_the_table_appended_and_keeps_its_comments(tmp_path: Path) -> None:
    path = config(tmp_path, '# my settings\nsandbox = "workspace-write"  # keep\n')
    save_gate(tmp_path, "auto", user_config=tmp_path / "user.toml")
    text = path.read_text()
    assert text.startswith('# my settings\nsandbox = "workspace-write"  # keep\n')
    assert tomllib.loads(text) == {"sandbox": "workspace-write", "done": {"gate": "auto"}}


def test_an_existing_done_table_keeps_its_other_keys(tmp_path: Path) -> None:
    path = config(tmp_path, '[done]\nprotected = ["tests/**"]\ngate = "off"\n')
    save_gate(tmp_path, "make check", user_config=tmp_path / "user.toml")
    assert tomllib.loads(path.read_text())["done"] == {
        "protected": ["tests/**"],
        "gate": "make check",
    }


def test_no_file_yet_is_created(tmp_path: Path) -> None:
    config(tmp_path, None)
    save_gate(tmp_path, "auto", user_config=tmp_path / "user.toml")
    assert tomllib.loads((tmp_path / CONFIG).read_text()) == {"done": {"gate": "auto"}}
    assert os.listdir(tmp_path / ".cerveau") == ["config.toml"]  # no temp file left behind


def test_a_symlinked_config_is_refused_and_its_target_untouched(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere.toml"
    target.write_text("x = 1\n")
    (tmp_path / ".cerveau").mkdir()
    (tmp_path / CONFIG).symlink_to(target)
    with pytest.raises(ConfigError, match="symbolic link"):
        save_gate(tmp_path, "auto", user_config=tmp_path / "user.toml")
    assert target.read_text() == "x = 1\n"


def test_a_symlinked_state_folder_is_refused(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir()
    (real / "config.toml").write_text("")
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".cerveau").symlink_to(real)
    with pytest.raises(ConfigError):
        save_gate(ws, "auto", user_config=tmp_path / "user.toml")
    assert (real / "config.toml").read_text() == ""


def test_a_value_of_several_lines_is_refused(tmp_path: Path) -> None:
    path = config(tmp_path, "")
    with pytest.raises(ConfigError, match="one line"):
        save_gate(tmp_path, "pytest\nrm -rf ~", user_config=tmp_path / "user.toml")
    assert path.read_text() == ""


def test_a_file_that_would_not_load_is_not_rewritten(tmp_path: Path) -> None:
    path = config(tmp_path, "[done]\nmax_stall_cycles = 0\n")
    with pytest.raises(ConfigError):
        save_gate(tmp_path, "auto", user_config=tmp_path / "user.toml")
    assert path.read_text() == "[done]\nmax_stall_cycles = 0\n"


def test_a_trusted_file_stays_trusted_after_the_change(tmp_path: Path) -> None:
    user = tmp_path / "user" / "config.toml"
    ws = tmp_path / "ws"
    ws.mkdir()
    path = config(ws, "network = true\n")
    store = trust_store_path(user)
    trust.record(ws, trust.digest(path.read_bytes()), store)
    save_gate(ws, "auto", user_config=user)
    assert trust.is_trusted(ws, trust.digest(path.read_bytes()), store)
    assert load_settings(ws, user_config=user).network is True  # not held back at next start


def test_an_untrusted_file_is_not_trusted_by_the_change(tmp_path: Path) -> None:
    user = tmp_path / "user" / "config.toml"
    path = config(tmp_path, "network = true\n")
    save_gate(tmp_path, "auto", user_config=user)
    assert not trust.is_trusted(tmp_path, trust.digest(path.read_bytes()), trust_store_path(user))


def test_the_session_offers_the_detected_check_once_and_applies_the_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CERVEAU_CONFIG", str(tmp_path / "user" / "config.toml"))
    ws = tmp_path / "ws"
    for rel, text in {"calc.py": CALC_BROKEN, "tests/test_calc.py": TEST_CALC}.items():
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(text)
    with ScriptedServer([{"content": "ok"}]) as srv:
        session = build_session(load_settings(ws, {"server_url": srv.url}))
        try:
            assert session.gate_offer() == "python3 -m pytest -q"
            gate = next(h for h in session.engine.hooks if isinstance(h, GateHook))
            assert gate.done.criteria == ()
            session.set_gate("auto")
            assert [c.command for c in gate.done.criteria] == ["python3 -m pytest -q"]
            assert session.gate_offer() is None  # asked once: decided now
        finally:
            session.close()
    assert tomllib.loads((ws / CONFIG).read_text())["done"]["gate"] == "auto"
    assert load_settings(ws).done.gate == "auto"
