"""A network grant is a network fact (Boundary IV): the Grant a command runs with names the hosts
the proxy lets it reach; the session's "Grant network" is any host; hosts survive every store.
"""

from __future__ import annotations

import json
import secrets
from pathlib import Path

from cerveau_tui.loop.state import EngineState
from cerveau_tui.plan.persist import SessionLog
from cerveau_tui.policy import Policy
from cerveau_tui.policy.rules_store import LastingRule, LastingRules
from cerveau_tui.policy.scopes import merged, scoped_room
from cerveau_tui.sandbox.base import Grant
from cerveau_tui.session import grant_seal
from cerveau_tui.session.journal import Journal
from cerveau_tui.session.resume import restore_grants
from cerveau_tui.session.stored import read_session

from .conftest import PolicyFactory, bash

KEY = secrets.token_bytes(32)
GITHUB = Grant(network=True, hosts=("github.com",))


def _host_granted(policy: Policy, ws: Path) -> Policy:
    v = policy.evaluate("bash", bash(ws, "curl -s https://github.com/a", network=True))
    assert v.action == "ask"
    policy.grant_session(v.choose("command:curl@github.com"))
    return policy


def test_evaluate_gives_a_host_scoped_cover_its_host_only(
    make_policy: PolicyFactory, ws: Path
) -> None:
    policy = _host_granted(make_policy(), ws)
    v = policy.evaluate("bash", bash(ws, "curl -sSL https://github.com/x", network=True))
    assert v.action == "allow" and v.grant == GITHUB


def test_choosing_a_host_scope_runs_this_call_to_that_host_only(
    make_policy: PolicyFactory, ws: Path
) -> None:
    v = make_policy().evaluate("bash", bash(ws, "curl -s https://github.com/a", network=True))
    assert v.grant == Grant(network=True)  # asked: any host until a scope is picked
    assert v.choose("command:curl@github.com").grant == GITHUB
    assert v.choose("command:curl").grant == Grant(network=True)


def test_the_session_network_grant_is_any_host(make_policy: PolicyFactory, ws: Path) -> None:
    v = make_policy(network=True).evaluate(
        "bash", bash(ws, "curl -s https://github.com/a", network=True)
    )
    assert v.action == "allow" and v.grant == Grant(network=True, hosts=())


def test_the_session_network_outranks_a_host_grant(make_policy: PolicyFactory, ws: Path) -> None:
    policy = _host_granted(make_policy(), ws)
    policy.network_grant = lambda: True
    v = policy.evaluate("bash", bash(ws, "curl https://github.com/b", network=True))
    assert v.grant == Grant(network=True)  # any host wins over a list


def test_a_chain_runs_with_the_hosts_of_every_scope_that_covered_it(
    make_policy: PolicyFactory, ws: Path
) -> None:
    policy = _host_granted(make_policy(), ws)
    v = policy.evaluate("bash", bash(ws, "curl https://pypi.org/simple/", network=True))
    policy.grant_session(v.choose("command:curl@pypi.org"))
    chain = "curl https://github.com/a && curl https://pypi.org/b"
    got = policy.evaluate("bash", bash(ws, chain, network=True))
    assert got.action == "allow" and set(got.grant.hosts) == {"github.com", "pypi.org"}  # type: ignore[union-attr]


def test_rooms_merge_any_host_over_lists_and_lists_joined() -> None:
    a, b = Grant(network=True, hosts=("a",)), Grant(network=True, hosts=("b", "a"))
    assert merged(a, b) == Grant(network=True, hosts=("a", "b"))
    assert merged(a, Grant(network=True)) == Grant(network=True)
    assert merged(a, Grant()) == a
    assert merged(Grant(), Grant()) == Grant()


def test_a_lasting_host_rule_keeps_its_hosts_across_a_restart(ws: Path, tmp_path: Path) -> None:
    store = tmp_path / "cfg" / "rules.json"
    policy = Policy(ws, "workspace-write", "on-request", [], lambda: False, True,
                    lasting=LastingRules(ws, store, KEY))  # fmt: skip
    v = policy.evaluate("bash", bash(ws, "curl https://github.com/a", network=True))
    assert policy.keep_rule(v.choose("command:curl@github.com"), "allow")
    assert json.loads(store.read_text())["rules"][0]["hosts"] == ["github.com"]
    later = LastingRules(ws, store, KEY)
    assert later.allows() == {"command:curl@github.com": GITHUB}


def test_a_lasting_rule_whose_hosts_were_edited_is_ignored(ws: Path, tmp_path: Path) -> None:
    store = tmp_path / "cfg" / "rules.json"
    rules = LastingRules(ws, store, KEY)
    assert rules.add("command:curl@github.com", "curl to github", "allow", GITHUB)
    data = json.loads(store.read_text())
    data["rules"][0]["hosts"] = []  # widened to any host by hand
    store.write_text(json.dumps(data))
    assert LastingRules(ws, store, KEY).allows() == {}


def _old_rule(ws: Path, store: Path, scope_key: str) -> None:
    """A rule as written before hosts existed: network true, no `hosts`, sealed over that."""
    from cerveau_tui.person_key import mac

    rule = LastingRule(scope_key, "old", "allow", str(ws.resolve()), Grant(network=True))
    body = rule.body()
    assert "hosts" not in body
    entry = {k: v for k, v in body.items() if k != "purpose"} | {"mac": mac(KEY, body)}
    store.parent.mkdir(parents=True, exist_ok=True)
    store.write_text(json.dumps({"rules": [entry]}))


def test_an_old_host_rule_without_hosts_loads_held_to_its_host(ws: Path, tmp_path: Path) -> None:
    store = tmp_path / "cfg" / "rules.json"
    _old_rule(ws, store, "command:curl@github.com")
    assert LastingRules(ws, store, KEY).allows() == {"command:curl@github.com": GITHUB}


def test_an_old_rule_without_hosts_for_any_host_still_means_any_host(
    ws: Path, tmp_path: Path
) -> None:
    store = tmp_path / "cfg" / "rules.json"
    _old_rule(ws, store, "command:curl")
    assert LastingRules(ws, store, KEY).allows() == {"command:curl": Grant(network=True)}


def test_a_sealed_session_grant_keeps_its_hosts_on_resume(ws: Path, make_policy) -> None:
    log = SessionLog(ws, "h")
    policy = make_policy()
    policy.listener = Journal(log, EngineState(), ws)
    v = policy.evaluate("bash", bash(ws, "curl https://github.com/a", network=True))
    policy.grant_session(v.choose("command:curl@github.com"))
    log.close()
    stored = read_session(ws, "h")
    (record,) = stored.grants.values()
    assert record.hosts == ["github.com"]
    fresh = make_policy()
    assert restore_grants(fresh, stored, ws) == (["commands starting with `curl` to github.com only"], 0)  # fmt: skip
    again = fresh.evaluate("bash", bash(ws, "curl https://github.com/b", network=True))
    assert again.allowed and again.grant == GITHUB  # the room it gave: github.com only


def test_a_session_grant_whose_hosts_were_stripped_does_not_verify(ws: Path) -> None:
    record = {"scope_key": "command:curl@h", "scope": "s", "extra_writable": [], "network": True,
              "hosts": ["h"]}  # fmt: skip
    key = grant_seal.load_key()
    mac = grant_seal.seal(key, record, "s1", ws)
    assert grant_seal.verify(key, record, mac, "s1", ws)
    assert not grant_seal.verify(key, {**record, "hosts": []}, mac, "s1", ws)


def test_an_old_session_grant_without_hosts_still_verifies(ws: Path) -> None:
    old = {"scope_key": "command:curl", "scope": "s", "extra_writable": [], "network": True}
    key = grant_seal.load_key()
    mac = grant_seal.seal(key, old, "s1", ws)
    read_back = {**old, "hosts": [], "mac": mac}  # as GrantRecord.model_dump() gives it now
    assert grant_seal.verify(key, read_back, mac, "s1", ws)


def test_a_key_without_a_host_leaves_the_room_as_it_is() -> None:
    assert scoped_room("command:curl", Grant(network=True)) == Grant(network=True)
    assert scoped_room("exact:curl https://h/", Grant(network=True)) == Grant(network=True)
    assert scoped_room("command:curl@h", Grant()) == Grant()
    both = json.dumps(["command:curl@h", "command:wget@h"])
    assert scoped_room(both, Grant(network=True)) == Grant(network=True, hosts=("h",))


def test_the_dispatcher_hands_the_tool_the_host_limited_grant(ws: Path) -> None:
    """Through the dispatcher to the tool's context (what the sandbox reads): the approving call
    and the next one covered by the scope both run held to the host."""
    from cerveau_tui.loop.approver import ApprovalDecision

    from .test_dispatch_grants import Answers, FakeBash, _run

    policy = Policy(ws, "workspace-write", "on-request", [], lambda: False, True)
    tool = FakeBash("ok", ok=True)
    pick = ApprovalDecision("approved_session", scope_key="command:curl@github.com")
    _run(ws, policy, tool, Answers(pick), "curl -s https://github.com/one")
    _run(ws, policy, tool, Answers(), "curl -sSL https://github.com/two")
    assert tool.rooms == [GITHUB, GITHUB]


def test_a_yes_to_a_command_naming_a_loopback_url_reaches_that_address(
    make_policy: PolicyFactory, ws: Path
) -> None:
    # Found in tmux: `curl http://127.0.0.1:8766/` approved once was refused by the proxy, since
    # "any host" never reaches this machine's own addresses. The yes is to what the dialog shows.
    v = make_policy().evaluate("bash", bash(ws, "curl -s http://127.0.0.1:8766/x", network=True))
    assert v.action == "ask"
    assert v.grant == Grant(network=True, hosts=("*", "127.0.0.1:8766"))


def test_a_programs_any_host_scope_does_not_keep_the_address_one_call_named(
    make_policy: PolicyFactory, ws: Path
) -> None:
    policy = make_policy()
    v = policy.evaluate("bash", bash(ws, "curl -s http://127.0.0.1:8766/x", network=True))
    policy.grant_session(v.choose("command:curl"))
    later = policy.evaluate("bash", bash(ws, "curl -s http://127.0.0.1:8766/y", network=True))
    assert later.action == "allow" and later.grant == Grant(network=True, hosts=())


def test_the_preselected_scope_for_a_command_to_one_host_is_that_host_only(
    make_policy: PolicyFactory, ws: Path
) -> None:
    # Found in tmux (issue 33): `curl` to 127.0.0.1:8765 had "curl, any host", the widest, marked.
    v = make_policy().evaluate(
        "bash", bash(ws, "curl -s -m 3 http://127.0.0.1:8765/", network=True)
    )
    assert [k for k, _ in v.choices] == [
        "exact:curl -s -m 3 http://127.0.0.1:8765/",
        "command:curl@127.0.0.1:8765",
        "command:curl",
    ]
    assert v.scope_key == "command:curl@127.0.0.1:8765"
    assert v.scope == "commands starting with `curl` to 127.0.0.1:8765 only"
