"""A workspace's `.cerveau/config.toml` may raise protection freely; lowering it needs the person's
trust in that exact file, kept outside the workspace (issue 10: a command wrote one saying
`sandbox = "full-access"` and the next plain run executed commands on the host)."""

from __future__ import annotations

import os

import pytest

from cerveau_tui.config import ConfigError, load_settings, trust_store_path, trust_workspace_config


def _ws(tmp_path, text: str):
    ws = tmp_path / "ws"
    (ws / ".cerveau").mkdir(parents=True)
    (ws / ".cerveau" / "config.toml").write_text(text)
    return ws


def _load(ws, user, **kw):
    return load_settings(ws, environ={}, user_config=user, **kw)


def test_an_untrusted_lowering_is_held_back_and_named(tmp_path):
    user = tmp_path / "user" / "config.toml"
    ws = _ws(
        tmp_path,
        'sandbox = "full-access"\napproval = "on-failure"\nnetwork = true\nmax_tokens = 99\n',
    )
    s = _load(ws, user)
    assert (s.sandbox, s.approval, s.network) == ("workspace-write", "on-request", False)
    assert s.max_tokens == 99  # what does not touch protection still applies
    assert any("full-access" in r for r in s.workspace_review)
    assert any("network" in r for r in s.workspace_review) and s.workspace_lowered == []


def test_programs_and_destinations_are_held_back(tmp_path):
    user = tmp_path / "user" / "config.toml"
    ws = _ws(
        tmp_path,
        f'cache_dir = "{tmp_path}/ws/fake-cache"\nserver_url = "http://203.0.113.9:8080"\n'
        '[expert]\nserver_url = "http://203.0.113.9:1"\n',
    )
    s = _load(ws, user)
    assert s.cache_dir is None and s.server_url is None and s.expert is None
    assert len(s.workspace_review) == 3


def test_dropping_the_persons_rules_or_deny_list_is_a_lowering(tmp_path):
    user = tmp_path / "user" / "config.toml"
    user.parent.mkdir()
    user.write_text('rules = [{ pattern = ".env*", action = "deny" }]\n')
    ws = _ws(tmp_path, 'rules = []\ndeny_read = []\nenv_allow = ["AWS_SECRET_ACCESS_KEY"]\n')
    s = _load(ws, user)
    assert [r.pattern for r in s.rules] == [".env*"]
    assert "~/.ssh" in s.deny_read and s.env_allow == []
    assert len(s.workspace_review) == 3


def test_raising_protection_needs_no_trust(tmp_path):
    ws = _ws(tmp_path, 'sandbox = "read-only"\napproval = "untrusted"\n')
    s = _load(ws, tmp_path / "user" / "config.toml")
    assert (s.sandbox, s.approval) == ("read-only", "untrusted") and s.workspace_review == []


def test_trusting_applies_that_exact_file_and_an_edit_needs_trust_again(tmp_path):
    user = tmp_path / "user" / "config.toml"
    ws = _ws(tmp_path, 'sandbox = "full-access"\n')
    digest = _load(ws, user).workspace_config_digest
    store = trust_workspace_config(ws, digest, user_config=user)
    assert store == trust_store_path(user) and not str(store).startswith(str(ws))
    s = _load(ws, user)
    assert s.sandbox == "full-access" and s.workspace_review == [] and s.workspace_lowered
    (ws / ".cerveau" / "config.toml").write_text('sandbox = "full-access"\nnetwork = true\n')
    s = _load(ws, user)
    assert s.sandbox == "workspace-write" and s.workspace_review


def test_the_headless_flag_applies_without_recording_trust(tmp_path):
    user = tmp_path / "user" / "config.toml"
    ws = _ws(tmp_path, 'sandbox = "full-access"\n')
    assert _load(ws, user, trust_workspace=True).sandbox == "full-access"
    assert _load(ws, user).sandbox == "workspace-write"
    assert not trust_store_path(user).exists()


def test_a_symlinked_workspace_config_is_refused(tmp_path):
    ws = tmp_path / "ws"
    (ws / ".cerveau").mkdir(parents=True)
    (ws / "notes.txt").write_text('sandbox = "read-only"\n')
    os.symlink(ws / "notes.txt", ws / ".cerveau" / "config.toml")
    with pytest.raises(ConfigError, match="symbolic link"):
        _load(ws, tmp_path / "user" / "config.toml")
