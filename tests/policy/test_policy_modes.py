"""Sandbox modes x approval policies x enforcement: what crosses, and what a crossing becomes."""

from __future__ import annotations

from pathlib import Path

from cerveau_tui.tools.base import Declared

from .conftest import PolicyFactory, bash, write


def test_read_only_any_write_crosses(make_policy: PolicyFactory, ws: Path) -> None:
    v = make_policy(mode="read-only").evaluate("write_file", write(ws / "a.py"))
    assert v.action == "ask" and "read-only" in v.reason


def test_read_only_bash_runs_in_the_sandbox_without_asking(
    make_policy: PolicyFactory, ws: Path
) -> None:
    v = make_policy(mode="read-only").evaluate("bash", bash(ws, "pytest -q"))
    assert v.action == "allow"
    assert v.grant is not None and v.grant.extra_writable == () and not v.grant.network


def test_read_only_bash_declaring_a_specific_write_asks_for_that_room(
    make_policy: PolicyFactory, ws: Path
) -> None:
    d = Declared(writes=[ws / "out.txt"], command="make report")
    v = make_policy(mode="read-only").evaluate("bash", d)
    assert v.action == "ask"
    assert v.grant is not None and v.grant.extra_writable == (ws,)  # the file's existing parent


def test_full_access_nothing_crosses(make_policy: PolicyFactory, ws: Path, outside: Path) -> None:
    policy = make_policy(mode="full-access", enforced=False)
    assert policy.evaluate("write_file", write(outside / "x")).action == "allow"
    assert policy.evaluate("write_file", write(ws / ".git" / "hooks" / "x")).action == "allow"
    assert policy.evaluate("bash", bash(ws, "curl example.com", network=True)).action == "allow"


def test_unenforced_sandbox_makes_every_command_a_crossing(
    make_policy: PolicyFactory, ws: Path
) -> None:
    for mode in ("read-only", "workspace-write"):
        v = make_policy(mode=mode, enforced=False).evaluate("bash", bash(ws, "ls"))
        assert v.action == "ask"
        assert "NOT enforced" in v.reason


def test_unenforced_sandbox_does_not_touch_app_executed_tools(
    make_policy: PolicyFactory, ws: Path
) -> None:
    assert make_policy(enforced=False).evaluate("write_file", write(ws / "a.py")).action == "allow"


def test_never_denies_crossings_without_asking(
    make_policy: PolicyFactory, ws: Path, outside: Path
) -> None:
    policy = make_policy(approval="never")
    v = policy.evaluate("write_file", write(outside / "x"))
    assert v.action == "deny" and "never" in v.reason
    assert policy.evaluate("write_file", write(ws / "a.py")).action == "allow"


def test_a_refusal_under_never_names_what_is_allowed_without_asking(
    make_policy: PolicyFactory, ws: Path, outside: Path
) -> None:
    """Issue 37: a refused scope names the way forward, in the mode the session is in."""
    v = make_policy(approval="never").evaluate("write_file", write(outside / "x"))
    assert "allowed without asking: reads and writes (not in `.git`) inside the workspace" in (
        v.reason
    )
    ro = make_policy(approval="never", mode="read-only").evaluate("write_file", write(ws / "a"))
    assert "allowed without asking: reads inside the workspace" in ro.reason


def test_never_with_unenforced_sandbox_denies_every_command(
    make_policy: PolicyFactory, ws: Path
) -> None:
    assert (
        make_policy(approval="never", enforced=False).evaluate("bash", bash(ws, "ls")).action
        == "deny"
    )


def test_network_crosses_unless_granted(make_policy: PolicyFactory, ws: Path) -> None:
    v = make_policy().evaluate("bash", bash(ws, "pip install x", network=True))
    assert v.action == "ask" and "network" in v.reason
    assert v.grant is not None and v.grant.network


def test_granted_network_is_passed_to_every_command(make_policy: PolicyFactory, ws: Path) -> None:
    v = make_policy(network=True).evaluate("bash", bash(ws, "pip install x", network=True))
    assert v.action == "allow" and v.grant is not None and v.grant.network
    assert make_policy(network=True).evaluate("bash", bash(ws, "ls")).grant.network  # type: ignore[union-attr]


def test_network_grant_is_looked_up_per_call(ws: Path) -> None:
    from cerveau_tui.policy import Policy

    granted = {"on": False}
    policy = Policy(ws, "workspace-write", "on-request", [], lambda: granted["on"], True)
    assert policy.evaluate("bash", bash(ws, "curl x", network=True)).action == "ask"
    granted["on"] = True  # the person granted it while the turn runs
    assert policy.evaluate("bash", bash(ws, "curl x", network=True)).action == "allow"


def test_untrusted_allows_known_safe_reads(make_policy: PolicyFactory, ws: Path) -> None:
    policy = make_policy(approval="untrusted")
    assert policy.evaluate("read_file", Declared(reads=[ws / "a"])).action == "allow"
    assert policy.evaluate("list_files", Declared(reads=[ws])).action == "allow"
    for cmd in ("ls -la", "cat README.md", "git status", "pwd", "grep -rn foo src"):
        assert policy.evaluate("bash", bash(ws, cmd)).action == "allow", cmd


def test_untrusted_asks_for_everything_else(make_policy: PolicyFactory, ws: Path) -> None:
    policy = make_policy(approval="untrusted")
    assert policy.evaluate("write_file", write(ws / "a.py")).action == "ask"
    for cmd in (
        "rm -rf src",
        "ls; rm -rf src",
        "cat a > b",
        "git push",
        "find . -delete",
        "python -c 1",
        "ls $(rm x)",
    ):
        assert policy.evaluate("bash", bash(ws, cmd)).action == "ask", cmd


def test_on_failure_runs_sandboxable_crossings_sandboxed(
    make_policy: PolicyFactory, ws: Path
) -> None:
    v = make_policy(approval="on-failure").evaluate("bash", bash(ws, "npm install", network=True))
    assert v.action == "allow"
    assert v.grant is not None and not v.grant.network  # first run: without the extra room


def test_on_failure_still_asks_for_app_executed_writes(
    make_policy: PolicyFactory, outside: Path
) -> None:
    assert (
        make_policy(approval="on-failure").evaluate("write_file", write(outside / "x")).action
        == "ask"
    )


def test_on_failure_asks_when_nothing_would_sandbox_the_command(
    make_policy: PolicyFactory, ws: Path
) -> None:
    assert (
        make_policy(approval="on-failure", enforced=False).evaluate("bash", bash(ws, "ls")).action
        == "ask"
    )
