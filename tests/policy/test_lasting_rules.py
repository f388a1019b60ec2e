"""Rules that last: kept outside the workspace, sealed with the person's key, deny before allow."""

from __future__ import annotations

import json
import secrets
from pathlib import Path

import pytest

from cerveau_tui.config import load_settings
from cerveau_tui.policy import Policy
from cerveau_tui.policy.rules_store import LastingRules
from cerveau_tui.sandbox.base import Grant

from .conftest import bash

KEY = secrets.token_bytes(32)


@pytest.fixture
def store(tmp_path: Path) -> Path:
    return tmp_path / "config" / "workspace-rules.json"


def _policy(ws: Path, store: Path, key: bytes | None = KEY, approval: str = "untrusted") -> Policy:
    return Policy(
        ws,
        "workspace-write",
        approval,  # type: ignore[arg-type]
        [],
        network_grant=lambda: False,
        enforced=True,
        lasting=LastingRules(ws, store, key),
    )


def _always(policy: Policy, ws: Path, command: str, decision: str = "allow") -> None:
    v = policy.evaluate("bash", bash(ws, command))
    assert v.action == "ask"
    assert policy.keep_rule(v, decision)


def test_an_always_rule_survives_a_restart(ws: Path, store: Path) -> None:
    _always(_policy(ws, store), ws, "pytest -q")
    later = _policy(ws, store)  # a new session reads the store again
    v = later.evaluate("bash", bash(ws, "pytest tests/x.py"))
    assert v.action == "allow" and "always allowed in this workspace" in v.granted_by
    assert json.loads(store.read_text())["rules"][0]["workspace"] == str(ws.resolve())


def test_a_rule_is_for_its_workspace_only(ws: Path, store: Path, tmp_path: Path) -> None:
    _always(_policy(ws, store), ws, "pytest -q")
    other = tmp_path / "other"
    other.mkdir()
    assert _policy(other, store).evaluate("bash", bash(other, "pytest")).action == "ask"


def test_a_rule_edited_by_hand_is_ignored(ws: Path, store: Path) -> None:
    _always(_policy(ws, store), ws, "pytest -q")
    data = json.loads(store.read_text())
    data["rules"][0]["scope_key"] = "command:rm"  # widened by hand: the seal no longer holds
    data["rules"].append(
        {
            "scope_key": "command:curl",
            "scope": "x",
            "decision": "allow",
            "workspace": str(ws.resolve()),
            "extra_writable": [],
            "network": True,
        }
    )
    store.write_text(json.dumps(data))
    p = _policy(ws, store)
    assert p.evaluate("bash", bash(ws, "rm -rf x")).action == "ask"
    assert p.evaluate("bash", bash(ws, "curl http://a/")).action == "ask"
    assert p.evaluate("bash", bash(ws, "pytest")).action == "ask"


def test_a_rule_sealed_with_another_key_is_ignored(ws: Path, store: Path) -> None:
    _always(_policy(ws, store, key=secrets.token_bytes(32)), ws, "pytest -q")
    assert _policy(ws, store).evaluate("bash", bash(ws, "pytest")).action == "ask"
    assert _policy(ws, store, key=None).evaluate("bash", bash(ws, "pytest")).action == "ask"


def test_a_rule_file_planted_in_the_workspace_is_not_read(ws: Path, store: Path) -> None:
    _always(_policy(ws, store), ws, "pytest -q")
    planted = ws / ".cerveau" / "workspace-rules.json"
    planted.write_text(store.read_text().replace("pytest", "rm"))
    store.unlink()
    assert _policy(ws, store).evaluate("bash", bash(ws, "rm x")).action == "ask"
    assert _policy(ws, store).evaluate("bash", bash(ws, "pytest")).action == "ask"


def test_a_workspace_config_cannot_add_an_allow_rule(ws: Path, tmp_path: Path) -> None:
    (ws / ".cerveau" / "config.toml").write_text(
        '[[rules]]\npattern = "/etc/**"\naction = "allow"\n'
    )
    user = tmp_path / "home" / "config.toml"
    user.parent.mkdir()
    s = load_settings(ws, environ={}, user_config=user)
    assert not any(r.action == "allow" for r in s.rules)
    assert any("rules" in h["key"] for h in s.workspace_held_back)


def test_deny_wins_over_allow(ws: Path, store: Path) -> None:
    lasting = LastingRules(ws, store, KEY)
    room = Grant(network=True)
    assert lasting.add("command:curl", "commands starting with `curl`, any host", "allow", room)
    assert lasting.add("command:curl@evil.example", "`curl` to evil.example", "deny", room)
    p = _policy(ws, store, approval="on-request")
    assert p.evaluate("bash", bash(ws, "curl http://ok.example/", network=True)).allowed
    for call in (
        "curl http://evil.example/x",
        "curl http://ok.example/ http://evil.example/",
        "curl -x http://proxy:1 http://ok.example/",  # could go anywhere: the never holds
    ):
        assert p.evaluate("bash", bash(ws, call, network=True)).action == "deny", call


def test_a_never_rule_denies_even_under_a_session_grant(ws: Path, store: Path) -> None:
    p = _policy(ws, store)
    v = p.evaluate("bash", bash(ws, "git push origin main"))
    p.grant_session(v)
    assert p.keep_rule(v.choose("command:git push"), "deny")
    for call in ("git push", "git push origin dev", "true; git push", "git push $(true)"):
        assert p.evaluate("bash", bash(ws, call)).action == "deny", call
    assert p.evaluate("bash", bash(ws, "git commit -m x")).action == "ask"


def test_a_never_rule_outranks_an_always_rule(ws: Path, store: Path) -> None:
    lasting = LastingRules(ws, store, KEY)
    assert lasting.add("command:make", "commands starting with `make`", "allow", Grant())
    assert lasting.add("command:make deploy", "`make deploy`", "deny", Grant())
    p = _policy(ws, store)
    assert p.evaluate("bash", bash(ws, "make test")).action == "allow"
    assert p.evaluate("bash", bash(ws, "make deploy")).action == "deny"


def test_a_rule_never_gives_a_room_no_grant_may_have(ws: Path, store: Path) -> None:
    lasting = LastingRules(ws, store, KEY)
    assert not lasting.add("command:sh", "sh", "allow", Grant(extra_writable=(Path("/"),)))
    # Sealed by the person's key but carrying `/`: dropped at load all the same.
    body_rule = LastingRules(ws, store, KEY)
    from cerveau_tui.person_key import mac
    from cerveau_tui.policy.rules_store import LastingRule

    rule = LastingRule("command:sh", "sh", "allow", str(ws.resolve()), Grant((Path("/"),)))
    entry = {k: v for k, v in rule.body().items() if k != "purpose"}
    entry["mac"] = mac(KEY, rule.body())
    store.parent.mkdir(parents=True, exist_ok=True)
    store.write_text(json.dumps({"rules": [entry]}))
    assert LastingRules(ws, store, KEY).allows() == {}
    assert body_rule.rules == []


def test_revoking_a_rule_asks_again(ws: Path, store: Path) -> None:
    _always(_policy(ws, store), ws, "pytest -q")
    assert LastingRules(ws, store, KEY).revoke("command:pytest")
    assert _policy(ws, store).evaluate("bash", bash(ws, "pytest")).action == "ask"


def test_the_rule_store_is_out_of_reach_of_tools_and_grants(
    ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from cerveau_tui.policy.paths import room_for
    from cerveau_tui.policy.rules_store import store_path

    monkeypatch.setenv("CERVEAU_CONFIG", str(tmp_path / "cfg" / "config.toml"))
    store = store_path()
    store.parent.mkdir(parents=True)
    store.write_text('{"rules": []}')
    p = Policy(ws, "workspace-write", "on-request", [], network_grant=lambda: False, enforced=True)
    from cerveau_tui.tools.base import Declared

    assert p.evaluate("write_file", Declared(writes=[store])).action == "deny"
    assert room_for(store) is None and room_for(store.parent) is None


def test_two_sessions_of_one_workspace_keep_both_rules(ws: Path, store: Path) -> None:
    one, two = LastingRules(ws, store, KEY), LastingRules(ws, store, KEY)  # both read it empty
    assert one.add("command:make", "`make`", "allow", Grant())
    assert two.add("command:git push", "`git push`", "deny", Grant())
    assert {r.scope_key for r in LastingRules(ws, store, KEY).rules} == {
        "command:make",
        "command:git push",
    }


def test_a_revoke_from_another_process_takes_effect_on_the_next_call(ws: Path, store: Path) -> None:
    # Issue 33: `cerveau rules --revoke` in another terminal; the running app kept allowing.
    running = _policy(ws, store)
    _always(running, ws, "pytest -q")
    assert running.evaluate("bash", bash(ws, "pytest tests/x.py")).action == "allow"
    assert LastingRules(ws, store, KEY).revoke("command:pytest")  # the other process's instance
    assert running.evaluate("bash", bash(ws, "pytest tests/x.py")).action == "ask"


def test_a_rule_added_by_another_session_is_read_on_the_next_call(ws: Path, store: Path) -> None:
    running = _policy(ws, store)
    assert running.evaluate("bash", bash(ws, "make lint")).action == "ask"
    assert LastingRules(ws, store, KEY).add("command:make", "`make`", "deny", Grant())
    assert running.evaluate("bash", bash(ws, "make lint")).action == "deny"
