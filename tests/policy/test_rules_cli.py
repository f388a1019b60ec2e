"""`cerveau rules`: lists the sealed lasting rules as {scope, decision, workspace}; revokes one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cerveau_tui.policy.rules_store import LastingRules, store_path
from cerveau_tui.sandbox.base import Grant


def _cli(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "cerveau_tui.cli", "rules", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    config = tmp_path / "home" / "config.toml"
    monkeypatch.setenv("CERVEAU_CONFIG", str(config))
    return {**os.environ, "CERVEAU_CONFIG": str(config)}


def test_rules_json_lists_scope_decision_and_workspace(env: dict[str, str], tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    rules = LastingRules(ws)
    assert rules.add("command:pytest", "commands starting with `pytest`", "allow", Grant())
    assert rules.add("command:git push", "commands starting with `git push`", "deny", Grant())
    # An entry written without the seal is not a rule and is not listed as one.
    data = json.loads(store_path().read_text())
    data["rules"].append(
        {"scope_key": "command:rm", "scope": "rm", "decision": "allow", "workspace": str(ws)}
    )
    store_path().write_text(json.dumps(data))
    out = _cli(env, "--json", "-w", str(ws))
    assert out.returncode == 0, out.stderr
    rows = json.loads(out.stdout)
    assert {(r["scope"], r["decision"], r["workspace"]) for r in rows} == {
        ("commands starting with `pytest`", "allow", str(ws.resolve())),
        ("commands starting with `git push`", "deny", str(ws.resolve())),
    }


def test_rules_revoke_takes_the_rule_out_of_the_store(env: dict[str, str], tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    assert LastingRules(ws).add("command:pytest", "`pytest`", "allow", Grant())
    out = _cli(env, "-w", str(ws), "--revoke", "command:pytest")
    assert out.returncode == 0, out.stderr
    assert json.loads(store_path().read_text())["rules"] == []
    assert _cli(env, "-w", str(ws), "--revoke", "command:pytest").returncode == 1
