"""on-failure: a command the sandbox refused is offered a rerun with exactly the room it lacked."""

from __future__ import annotations

from pathlib import Path

from .conftest import PolicyFactory, bash


def test_read_only_file_system_error_offers_the_refused_path(
    make_policy: PolicyFactory, ws: Path, outside: Path
) -> None:
    out = f"touch: cannot touch '{outside}/x': Read-only file system\n"
    v = make_policy(approval="on-failure").after_failure(
        "bash", bash(ws, f"touch {outside}/x"), 1, out
    )
    assert v is not None and v.action == "ask"
    assert v.grant is not None and v.grant.extra_writable == (outside,)
    assert not v.grant.network
    assert v.scope_key == f"command:touch {outside}/x" or v.scope_key.startswith("command:touch")


def test_shell_redirection_error_offers_the_refused_path(
    make_policy: PolicyFactory, ws: Path, outside: Path
) -> None:
    out = f"/bin/sh: 1: cannot create {outside}/f: Read-only file system\n"
    v = make_policy(approval="on-failure").after_failure("bash", bash(ws, "echo > f"), 2, out)
    assert v is not None and v.grant is not None and v.grant.extra_writable == (outside,)


def test_network_error_offers_the_network(make_policy: PolicyFactory, ws: Path) -> None:
    out = "curl: (6) Could not resolve host: example.com\n"
    v = make_policy(approval="on-failure").after_failure(
        "bash", bash(ws, "curl example.com"), 6, out
    )
    assert v is not None and v.grant is not None and v.grant.network
    assert "network" in v.reason


def test_read_only_mode_failure_offers_the_workspace(make_policy: PolicyFactory, ws: Path) -> None:
    out = "/bin/sh: 1: cannot create a.txt: Read-only file system\n"
    v = make_policy(mode="read-only", approval="on-failure").after_failure(
        "bash", bash(ws, "echo > a.txt"), 2, out
    )
    assert v is not None and v.grant is not None and ws in v.grant.extra_writable


def test_success_is_not_a_failure(make_policy: PolicyFactory, ws: Path) -> None:
    assert (
        make_policy(approval="on-failure").after_failure(
            "bash", bash(ws, "x"), 0, "Permission denied"
        )
        is None
    )


def test_an_ordinary_failure_is_not_offered_a_rerun(make_policy: PolicyFactory, ws: Path) -> None:
    assert (
        make_policy(approval="on-failure").after_failure(
            "bash", bash(ws, "pytest"), 1, "1 failed, 3 passed"
        )
        is None
    )


def test_never_policy_offers_no_reruns(make_policy: PolicyFactory, ws: Path) -> None:
    out = "Read-only file system: '/etc/x'"
    assert make_policy(approval="never").after_failure("bash", bash(ws, "x"), 1, out) is None


def test_on_request_offers_a_rerun_the_person_could_grant(
    make_policy: PolicyFactory, ws: Path
) -> None:
    # Issue 10: under the default policy a refusal the person could grant was a silent failure.
    out = "touch: cannot touch '/etc/x': Read-only file system"
    v = make_policy(approval="on-request").after_failure("bash", bash(ws, "touch /etc/x"), 1, out)
    assert v is not None and v.action == "ask" and "/etc" in v.reason and v.scope


def test_never_offers_a_writable_root(make_policy: PolicyFactory, ws: Path) -> None:
    out = "mkdir: cannot create directory '/nonexistent-root-dir': Read-only file system"
    v = make_policy(approval="on-failure").after_failure(
        "bash", bash(ws, "mkdir /nonexistent-root-dir"), 1, out
    )
    assert v is None  # "/" would be "unsandboxed" under another name
