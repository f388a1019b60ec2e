"""A call the policy lets through because of a grant names that grant (`Verdict.granted_by`, on
the tool_result and the card); a call that needs none names none."""

from __future__ import annotations

from pathlib import Path

from cerveau_tui.policy.verdict import Verdict
from cerveau_tui.sandbox.base import Grant

from .conftest import PolicyFactory, bash


def _grant_touch_room(policy, outside: Path) -> None:  # type: ignore[no-untyped-def]
    # What the rerun dialog grants for `touch` after the sandbox refused a write outside.
    room = Grant(extra_writable=(outside,))
    v = Verdict("ask", "", room, "commands starting with `touch`", "command:touch")
    policy.grant_session(v)


def test_a_command_run_with_a_grants_room_names_that_grant(
    make_policy: PolicyFactory, ws: Path, outside: Path
) -> None:
    policy = make_policy()
    _grant_touch_room(policy, outside)
    v = policy.evaluate("bash", bash(ws, f"touch {outside}/b"))
    assert v.action == "allow" and v.grant is not None and outside in v.grant.extra_writable
    assert v.granted_by == "approved for this session (commands starting with `touch`)"


def test_a_command_no_grant_covers_names_none(
    make_policy: PolicyFactory, ws: Path, outside: Path
) -> None:
    policy = make_policy()
    _grant_touch_room(policy, outside)
    v = policy.evaluate("bash", bash(ws, "ls src"))
    assert v.action == "allow" and v.granted_by == ""


def test_a_network_call_under_a_host_grant_names_it(make_policy: PolicyFactory, ws: Path) -> None:
    policy = make_policy()
    first = policy.evaluate("bash", bash(ws, "curl -s http://h.example/one", network=True))
    assert first.action == "ask"
    policy.grant_session(first.choose("command:curl@h.example"))
    v = policy.evaluate("bash", bash(ws, "curl http://h.example/two", network=True))
    assert v.action == "allow" and "commands starting with `curl` to h.example" in v.granted_by
