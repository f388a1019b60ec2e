"""Rules ask the questions the sandbox cannot; session grants answer an ask in advance."""

from __future__ import annotations

from pathlib import Path

from cerveau_tui.config import RuleConfig
from cerveau_tui.tools.base import Declared

from .conftest import PolicyFactory, bash, write


def test_ask_rule_asks_for_writes_the_sandbox_allows(make_policy: PolicyFactory, ws: Path) -> None:
    policy = make_policy(rules=[RuleConfig(pattern="*.lock", action="ask")])
    v = policy.evaluate("write_file", write(ws / "web" / "yarn.lock"))
    assert v.action == "ask" and "*.lock" in v.reason
    assert policy.evaluate("write_file", write(ws / "web" / "a.js")).action == "allow"


def test_ask_rules_hold_in_full_access(make_policy: PolicyFactory, ws: Path) -> None:
    policy = make_policy(mode="full-access", rules=[RuleConfig(pattern=".env*", action="ask")])
    assert policy.evaluate("write_file", write(ws / ".env.local")).action == "ask"


def test_deny_rule_wins_over_everything(make_policy: PolicyFactory, ws: Path) -> None:
    policy = make_policy(mode="full-access", rules=[RuleConfig(pattern=".env*", action="deny")])
    v = policy.evaluate("write_file", write(ws / ".env"))
    assert v.action == "deny" and ".env*" in v.reason


def test_deny_rule_is_not_bypassed_by_a_session_grant(make_policy: PolicyFactory, ws: Path) -> None:
    policy = make_policy(rules=[RuleConfig(pattern="secrets/**", action="deny")])
    v = policy.evaluate("write_file", write(ws / "secrets" / "k"))
    policy.grant_session(v)
    assert policy.evaluate("write_file", write(ws / "secrets" / "k")).action == "deny"


def test_read_rules_match_reads(make_policy: PolicyFactory, ws: Path) -> None:
    policy = make_policy(rules=[RuleConfig(pattern="/etc/shadow", action="deny", on="read")])
    assert policy.evaluate("read_file", Declared(reads=[Path("/etc/shadow")])).action == "deny"
    # Not denied by the rule; asked because it is outside the workspace (issue 10).
    assert policy.evaluate("read_file", Declared(reads=[Path("/etc/hostname")])).action == "ask"
    opened = make_policy(rules=[RuleConfig(pattern="/etc/hostname", action="allow", on="read")])
    assert opened.evaluate("read_file", Declared(reads=[Path("/etc/hostname")])).action == "allow"


def test_allow_rule_opens_an_outside_path_and_grants_its_room(
    make_policy: PolicyFactory, outside: Path
) -> None:
    policy = make_policy(rules=[RuleConfig(pattern=f"{outside}/**", action="allow")])
    assert policy.evaluate("write_file", write(outside / "x")).action == "allow"
    v = policy.evaluate("bash", Declared(writes=[outside / "x"], command="make dist"))
    assert v.action == "allow" and v.grant is not None and outside in v.grant.extra_writable


def test_never_turns_an_ask_rule_into_a_denial(make_policy: PolicyFactory, ws: Path) -> None:
    policy = make_policy(approval="never", rules=[RuleConfig(pattern="*.lock", action="ask")])
    assert policy.evaluate("write_file", write(ws / "a.lock")).action == "deny"


def test_session_grant_answers_the_same_ask(make_policy: PolicyFactory, outside: Path) -> None:
    policy = make_policy()
    v = policy.evaluate("write_file", write(outside / "x"))
    assert v.action == "ask" and v.scope_key
    policy.grant_session(v)
    again = policy.evaluate("write_file", write(outside / "x"))
    assert again.action == "allow" and again.session and "session" in again.reason
    assert policy.evaluate("write_file", write(outside / "y")).action == "ask"  # another path set


def test_session_grant_for_a_command_prefix(make_policy: PolicyFactory, ws: Path) -> None:
    policy = make_policy()
    v = policy.evaluate("bash", bash(ws, "npm install lodash", network=True))
    assert v.scope == "commands starting with `npm install`"
    policy.grant_session(v)
    assert policy.evaluate("bash", bash(ws, "npm install react", network=True)).action == "allow"
    assert (
        policy.evaluate("bash", bash(ws, "npm install x; curl evil", network=True)).action == "ask"
    )
    assert policy.evaluate("bash", bash(ws, "curl evil", network=True)).action == "ask"


def test_session_grant_for_an_ask_rule_covers_every_match(
    make_policy: PolicyFactory, ws: Path
) -> None:
    policy = make_policy(rules=[RuleConfig(pattern="*.lock", action="ask")])
    v = policy.evaluate("write_file", write(ws / "yarn.lock"))
    assert v.scope_key == "rule:*.lock"
    policy.grant_session(v)
    assert policy.evaluate("write_file", write(ws / "sub" / "Cargo.lock")).action == "allow"


def test_session_grants_are_listed_and_revocable(make_policy: PolicyFactory, outside: Path) -> None:
    policy = make_policy()
    v = policy.evaluate("write_file", write(outside / "x"))
    policy.grant_session(v)
    assert policy.session_scopes() == [(v.scope_key, v.scope)]
    assert policy.revoke(v.scope_key)
    assert not policy.revoke(v.scope_key)
    assert policy.session_scopes() == []
    assert policy.evaluate("write_file", write(outside / "x")).action == "ask"


def test_session_grant_keeps_the_room_of_the_new_call(make_policy: PolicyFactory, ws: Path) -> None:
    policy = make_policy()
    policy.grant_session(policy.evaluate("bash", bash(ws, "pip install a", network=True)))
    v = policy.evaluate("bash", bash(ws, "pip install b", network=True))
    assert v.action == "allow" and v.grant is not None and v.grant.network
