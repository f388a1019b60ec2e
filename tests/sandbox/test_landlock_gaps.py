"""The Landlock fallback's known gaps, asserted AS gaps: the probe lands, and the runner says so in
`gaps` (which the UI and `cerveau doctor` show). If a kernel closes one, its test fails and the
gap text must be updated, so the UI never claims a weakness that is gone or hides one that is not."""

from __future__ import annotations

import os
import socket
import uuid

from cerveau_tui.sandbox.command import CommandSpec

from .conftest import PY, Box
from .test_escapes import _wait_gone


def test_gap_git_hooks_are_writable_and_said_so(landlock_runner, box: Box) -> None:
    landlock_runner.run(CommandSpec("echo hook > .git/hooks/pre-commit", box.ws))
    assert (box.ws / ".git" / "hooks" / "pre-commit").exists()
    assert any(".git" in g for g in landlock_runner.gaps)


def test_a_background_process_dies_with_its_command(landlock_runner, box: Box) -> None:
    # Was a gap (it outlived the command, so a process left running changed git settings after
    # the guard's after-check); closed: the command's process group and cgroup die with it.
    if landlock_runner.cap.mode != "cgroup":
        import pytest

        pytest.skip("no pids cgroup here: a setsid process can survive (said in gaps)")
    marker = f"cerveau-llbg-{uuid.uuid4().hex[:8]}"
    landlock_runner.run(CommandSpec(f"setsid sh -c 'sleep 30' {marker} > /dev/null 2>&1 &", box.ws))
    survivors = _wait_gone(marker)
    for pid in survivors:
        os.kill(pid, 9)
    assert survivors == []
    assert not any("can outlive the command" in g for g in landlock_runner.gaps)


def test_udp_does_not_reach_the_host_without_a_network_grant(landlock_runner, box: Box) -> None:
    # Was a gap below Landlock ABI 10; closed by the seccomp filter, which under Landlock
    # refuses every IPv4/IPv6 socket unless the network is granted.
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.settimeout(2)
    try:
        landlock_runner.run(
            CommandSpec(
                f"{PY} -c \"import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b'x', ('127.0.0.1', {port}))\"",
                box.ws,
            )
        )
        import pytest

        with pytest.raises(TimeoutError):
            s.recvfrom(16)
        assert not any("UDP" in g for g in landlock_runner.gaps)
    finally:
        s.close()


def test_landlock_still_protects_outside_the_workspace(landlock_runner, box: Box) -> None:
    res = landlock_runner.run(CommandSpec(f"echo x > {box.outside}/escaped", box.ws))
    assert res.exit_code != 0 and not (box.outside / "escaped").exists()


def test_landlock_helper_refuses_to_run_unconfined_when_a_step_fails(box: Box) -> None:
    import subprocess
    import sys

    marker = box.ws / "ran-unconfined"
    code = (
        "import cerveau_tui.sandbox.landlock_exec as m\n"
        "def boom(*a, **k): raise OSError('landlock refused')\n"
        "m.apply_landlock = boom\n"
        f"m.main(['--workspace', {str(box.ws)!r}, '--', '/bin/sh', '-c', 'echo x > {marker}'])\n"
    )
    res = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=30,
        start_new_session=True,
    )
    assert res.returncode == 126
    assert "could not confine" in res.stderr
    assert not marker.exists()


def test_gap_the_state_folder_is_writable_and_said_so(landlock_runner, box: Box) -> None:
    landlock_runner.run(
        CommandSpec("echo 'sandbox = \"full-access\"' > .cerveau/config.toml", box.ws)
    )
    assert (box.ws / ".cerveau" / "config.toml").exists()
    assert any(".cerveau/" in g for g in landlock_runner.gaps)


def test_gap_tmp_is_not_size_capped_and_said_so(landlock_runner) -> None:
    assert any("/tmp size" in g for g in landlock_runner.gaps)


def test_gap_a_denied_folders_names_are_listable_and_said_so(box: Box) -> None:
    from cerveau_tui.sandbox.landlock import LandlockRunner

    secret_dir = box.root / "home" / ".ssh"
    secret_dir.mkdir(parents=True)
    (secret_dir / "id_rsa").write_text("cerveau-ll-secret\n")
    runner = LandlockRunner(deny_read=[secret_dir])
    res = runner.run(CommandSpec(f"ls {secret_dir}; cat {secret_dir}/id_rsa", box.ws))
    assert "id_rsa" in res.output and "cerveau-ll-secret" not in res.output
    assert any("names stay listable" in g for g in runner.gaps)


def test_landlock_background_processes_are_killed_by_kill_background(
    landlock_runner, box: Box
) -> None:
    # They die with their command now; kill_background is the second line for a cgroup that
    # could not be emptied at once.
    if landlock_runner.cap.mode != "cgroup":
        import pytest

        pytest.skip("no pids cgroup here")
    marker = f"cerveau-llkill-{uuid.uuid4().hex[:8]}"
    landlock_runner.run(CommandSpec(f"setsid sh -c 'sleep 30' {marker} > /dev/null 2>&1 &", box.ws))
    landlock_runner.kill_background()
    survivors = _wait_gone(marker)
    for pid in survivors:
        os.kill(pid, 9)
    assert survivors == []
