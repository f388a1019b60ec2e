"""state_home.py: the one place that decides where a workspace's state lives."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from cerveau_tui import state_home
from cerveau_tui.config import load_settings
from cerveau_tui.testing.read_only import read_only_tree


@pytest.fixture(autouse=True)
def state_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg"))
    state_home.forget()
    yield tmp_path / "xdg" / "cerveau"
    state_home.forget()


def _ws(tmp_path: Path, name: str = "proj") -> Path:
    ws = tmp_path / name
    ws.mkdir(parents=True)
    return ws


def test_by_default_the_state_is_the_workspaces_own(tmp_path: Path) -> None:
    ws = _ws(tmp_path)
    assert state_home.locate(ws, "sessions") == (ws, ".cerveau/sessions")
    assert state_home.locate(ws) == (ws, ".cerveau")
    assert state_home.state_path(ws, "config.toml") == ws / ".cerveau" / "config.toml"
    assert state_home.shown(ws, "memory.sqlite") == ".cerveau/memory.sqlite"


def test_user_puts_it_under_the_user_state_dir_private_to_the_person(
    tmp_path: Path, state_root: Path
) -> None:
    ws = _ws(tmp_path)
    alt = state_home.choose(ws, "user")
    assert alt is not None and alt.parent == state_root / "workspaces"
    assert alt.name.startswith("proj-") and len(alt.name) == len("proj-") + 12
    assert stat.S_IMODE(os.stat(alt).st_mode) == 0o700
    assert state_home.locate(ws, "sessions") == (alt, "sessions")
    assert state_home.locate(ws) == (alt, "")
    assert state_home.state_path(ws, "config.toml") == alt / "config.toml"
    assert alt in state_home.protected() and state_root / "workspaces" in state_home.protected()
    assert state_home.choose(ws, "workspace") is None
    assert state_home.locate(ws, "sessions") == (ws, ".cerveau/sessions")


def test_two_checkouts_named_alike_never_share_one(tmp_path: Path) -> None:
    a, b = _ws(tmp_path, "a/proj"), _ws(tmp_path, "b/proj")
    assert state_home.alternate_for(a) != state_home.alternate_for(b)
    assert state_home.alternate_for(a) == state_home.alternate_for(a / "." / "")


def test_a_folder_inside_or_holding_the_workspace_is_refused(tmp_path: Path) -> None:
    ws = _ws(tmp_path)
    for bad in (ws / "state", ws, tmp_path):
        with pytest.raises(state_home.StateHomeError, match="inside \\(or holding\\)"):
            state_home.choose(ws, str(bad))
    with pytest.raises(state_home.StateHomeError, match="absolute"):
        state_home.choose(ws, "relative/dir")
    assert state_home.chosen(ws) is None


def test_a_link_planted_where_the_alternate_goes_is_refused_never_followed(
    tmp_path: Path, state_root: Path
) -> None:
    ws = _ws(tmp_path)
    target = _ws(tmp_path, "elsewhere")
    (state_root / "workspaces").mkdir(parents=True)
    state_home.alternate_for(ws).symlink_to(target)
    with pytest.raises(state_home.StateHomeError, match="symbolic link"):
        state_home.choose(ws, "user")
    assert os.listdir(target) == [] and state_home.chosen(ws) is None


def test_auto_is_the_workspace_when_writable_and_the_alternate_when_not(tmp_path: Path) -> None:
    ws = _ws(tmp_path)
    assert state_home.choose(ws, "auto") is None
    src = _ws(tmp_path, "src")
    with read_only_tree(src) as ro:
        why = state_home.unwritable_reason(ro)
        assert why is not None
        assert state_home.choose(ro, "auto") == state_home.alternate_for(ro)
        assert str(state_home.alternate_for(ro)) in state_home.offer(ro, why)
        assert "--state-dir user" in state_home.offer(ro, why)


def test_the_persons_config_chooses_it_and_the_workspace_config_is_read_from_there(
    tmp_path: Path,
) -> None:
    ws = _ws(tmp_path)
    user = tmp_path / "user.toml"
    user.write_text('state_dir = "user"\n')
    alt = state_home.alternate_for(ws)
    settings = load_settings(ws, {}, environ={}, user_config=user)
    assert state_home.chosen(ws) == alt and settings.workspace_config_path == alt / "config.toml"
    (alt / "config.toml").write_text("n_ctx = 4096\n")
    assert load_settings(ws, {}, environ={}, user_config=user).n_ctx == 4096
    # The flag wins over the person's config.
    load_settings(ws, {"state_dir": "workspace"}, environ={}, user_config=user)
    assert state_home.chosen(ws) is None
