"""Runner behaviour through the real backends: grants widen the boundary for ONE command, hygiene
(stdin, terminal, timeout, interrupt), exit codes."""

from __future__ import annotations

import socket
import threading

import pytest

from cerveau_tui.sandbox.base import Grant
from cerveau_tui.sandbox.command import CommandSpec
from cerveau_tui.sandbox.none import NoSandbox

from .conftest import PY, Box


def test_exit_code_and_output_come_back(runner, box: Box) -> None:
    res = runner.run(CommandSpec("echo out; echo err >&2; exit 3", box.ws))
    assert res.exit_code == 3 and "out" in res.output and "err" in res.output


def test_a_grant_widens_the_boundary_for_that_one_command(runner, box: Box) -> None:
    res = runner.run(
        CommandSpec(
            f"echo x > {box.outside}/granted", box.ws, grant=Grant(extra_writable=(box.outside,))
        )
    )
    assert res.exit_code == 0 and (box.outside / "granted").exists()
    runner.run(CommandSpec(f"echo x > {box.outside}/next", box.ws))
    assert not (box.outside / "next").exists()


def test_network_grant_reaches_a_host_listener(runner, box: Box) -> None:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(1)
    s.setblocking(False)
    port = s.getsockname()[1]
    # Through the harness's proxy (the proxy variables), granted by address: a grant is served
    # by the proxy only, and the host's loopback only when the grant names it (Boundary IV).
    res = runner.run(
        CommandSpec(
            f"{PY} -c \"import urllib.request as u; u.urlopen('http://127.0.0.1:{port}/', timeout=2)\"",
            box.ws,
            grant=Grant(network=True, hosts=(f"127.0.0.1:{port}",)),
        )
    )
    try:
        conn, _ = s.accept()
        conn.close()
    except BlockingIOError:
        pytest.fail(f"granted network did not connect: {res.output}")
    finally:
        s.close()


def test_read_only_mode_refuses_workspace_writes(runner, box: Box) -> None:
    res = runner.run(CommandSpec("echo x > a.txt", box.ws, mode="read-only"))
    assert res.exit_code != 0 and not (box.ws / "a.txt").exists()


def test_read_only_mode_with_the_workspace_granted(runner, box: Box) -> None:
    runner.run(
        CommandSpec(
            "echo x > a.txt", box.ws, mode="read-only", grant=Grant(extra_writable=(box.ws,))
        )
    )
    assert (box.ws / "a.txt").exists()


def test_stdin_is_not_a_terminal_and_empty(runner, box: Box) -> None:
    res = runner.run(CommandSpec("cat; tty; echo done", box.ws, timeout=20))
    assert "not a tty" in res.output and res.output.rstrip().endswith("done")


def test_timeout_kills_the_command(runner, box: Box) -> None:
    res = runner.run(CommandSpec("sleep 30", box.ws, timeout=0.5))
    assert res.timed_out and res.exit_code is None


def test_cancel_interrupts_the_command(runner, box: Box) -> None:
    cancel = threading.Event()
    timer = threading.Timer(0.3, cancel.set)
    timer.start()
    res = runner.run(CommandSpec("sleep 30", box.ws, timeout=60, cancel=cancel))
    timer.cancel()
    assert res.interrupted and res.exit_code is None


def test_full_access_runs_without_the_sandbox_and_says_so(bwrap_runner, box: Box) -> None:
    res = bwrap_runner.run(CommandSpec(f"echo x > {box.outside}/full", box.ws, mode="full-access"))
    assert (box.outside / "full").exists()
    assert any("without the sandbox" in n for n in res.notes)


def test_no_sandbox_reports_itself_unenforced() -> None:
    assert NoSandbox().enforced is False and NoSandbox().backend == "none"


def test_no_sandbox_tracks_and_kills_background_groups(box: Box) -> None:
    runner = NoSandbox()
    res = runner.run(CommandSpec("sleep 30 > /dev/null 2>&1 &", box.ws))
    assert res.background_pgid is not None
    runner.kill_background()
    import os
    import time

    for _ in range(40):
        try:
            os.killpg(res.background_pgid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    with pytest.raises(ProcessLookupError):
        os.killpg(res.background_pgid, 0)


def test_a_granted_git_objects_folder_does_not_open_the_hooks(bwrap_runner, box: Box) -> None:
    (box.ws / ".git" / "objects").mkdir()
    res = bwrap_runner.run(
        CommandSpec(
            "echo o > .git/objects/o; echo h > .git/hooks/pre-commit",
            box.ws,
            grant=Grant(extra_writable=(box.ws / ".git" / "objects",)),
        )
    )
    assert (box.ws / ".git" / "objects" / "o").exists(), res.output
    assert not (box.ws / ".git" / "hooks" / "pre-commit").exists()


def test_on_failure_rerun_of_a_git_commit_gets_git_objects_not_hooks(
    bwrap_runner, box: Box
) -> None:
    """End to end: the first run fails on the read-only .git, after_failure offers room, the rerun
    with that room succeeds and the hooks stay read-only."""
    from cerveau_tui.policy import Policy
    from cerveau_tui.tools.base import Declared

    env = {
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
    }
    import shutil
    import subprocess

    shutil.rmtree(box.ws / ".git")
    subprocess.run(["git", "init", "-q", str(box.ws)], check=True)
    (box.ws / "a.txt").write_text("a\n")
    policy = Policy(box.ws, "workspace-write", "on-failure", [], lambda: False, True)
    cmd = "git add a.txt && git commit -qm first"
    declared = Declared(reads=[box.ws], writes=[box.ws], command=cmd)
    verdict = policy.evaluate("bash", declared)
    first = bwrap_runner.run(CommandSpec(cmd, box.ws, grant=verdict.grant, env=env))
    assert first.exit_code != 0
    retry = policy.after_failure("bash", declared, first.exit_code, first.output)
    assert retry is not None and retry.action == "ask", first.output
    assert all((box.ws / ".git") in (p, *p.parents) for p in retry.grant.extra_writable)  # type: ignore[union-attr]
    second = bwrap_runner.run(CommandSpec(cmd, box.ws, grant=retry.grant, env=env))
    assert second.exit_code == 0, second.output
    assert not (box.ws / ".git" / "hooks" / "pre-commit").exists()
