"""The hardened argv, as a list (never a shell string): pure checks, no process started."""

from __future__ import annotations

from pathlib import Path

import pytest

from cerveau_tui.sandbox.base import Grant
from cerveau_tui.sandbox.bubblewrap import BRIDGE, BWRAP_PATHS, BubblewrapRunner
from cerveau_tui.sandbox.command import CommandSpec

from .conftest import Box


@pytest.fixture
def runner() -> BubblewrapRunner:
    return BubblewrapRunner(bwrap="/usr/bin/bwrap")  # argv only: need not exist


def _pairs(argv: list[str], flag: str) -> list[tuple[str, str]]:
    return [(argv[i + 1], argv[i + 2]) for i, a in enumerate(argv) if a == flag]


def test_hardening_flags_are_always_present(runner: BubblewrapRunner, box: Box) -> None:
    argv = runner.argv(CommandSpec("true", box.ws), seccomp_fd=7)
    for flag in (
        "--unshare-user",
        "--unshare-pid",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
        "--unshare-net",
        "--disable-userns",
        "--die-with-parent",
        "--new-session",
        "--clearenv",
    ):
        assert flag in argv, flag
    assert argv[argv.index("--cap-drop") + 1] == "ALL"
    assert argv[argv.index("--seccomp") + 1] == "7"
    assert argv[-4:] == ["--", "/bin/sh", "-c", "true"]
    assert argv[0] in BWRAP_PATHS


def test_the_command_is_one_argument_never_spliced(runner: BubblewrapRunner, box: Box) -> None:
    cmd = "echo a; --bind / / ; $(x)"
    argv = runner.argv(CommandSpec(cmd, box.ws))
    assert argv[-1] == cmd and argv.count("--bind") == 1


def test_network_is_unshared_even_when_granted(runner: BubblewrapRunner, box: Box) -> None:
    # A grant is served by the proxy through the bridge, never by the host's namespace.
    argv = runner.argv(CommandSpec("true", box.ws, grant=Grant(network=True)))
    assert "--unshare-net" in argv and str(BRIDGE) in argv


def test_workspace_is_writable_in_workspace_write_and_not_in_read_only(
    runner: BubblewrapRunner, box: Box
) -> None:
    ws = str(box.ws)
    assert (ws, ws) in _pairs(runner.argv(CommandSpec("true", box.ws)), "--bind")
    ro = runner.argv(CommandSpec("true", box.ws, mode="read-only"))
    assert (ws, ws) in _pairs(ro, "--ro-bind") and (ws, ws) not in _pairs(ro, "--bind")


def test_git_and_the_app_config_are_bound_read_only_after_the_workspace(
    runner: BubblewrapRunner, box: Box
) -> None:
    argv = runner.argv(CommandSpec("true", box.ws))
    ro = [src for src, _ in _pairs(argv, "--ro-bind-try")]
    assert str(box.ws / ".git") in ro and str(box.ws / ".cerveau" / "config.toml") in ro
    assert argv.index("--ro-bind-try") > argv.index("--bind")


def test_granted_paths_are_bound_writable(runner: BubblewrapRunner, box: Box) -> None:
    argv = runner.argv(CommandSpec("true", box.ws, grant=Grant(extra_writable=(box.outside,))))
    assert (str(box.outside), str(box.outside)) in _pairs(argv, "--bind-try")


def test_a_grant_inside_git_goes_on_top_of_the_read_only_git(
    runner: BubblewrapRunner, box: Box
) -> None:
    hooks = box.ws / ".git" / "hooks"
    argv = runner.argv(CommandSpec("true", box.ws, grant=Grant(extra_writable=(hooks,))))
    i_bind = max(i for i, a in enumerate(argv) if a == "--bind-try" and argv[i + 1] == str(hooks))
    i_ro = max(i for i, a in enumerate(argv) if a == "--ro-bind-try" and argv[i + 1] == str(hooks))
    assert i_bind > i_ro


def test_secrets_are_not_in_the_command_environment(
    runner: BubblewrapRunner, box: Box, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-secret")
    argv = runner.argv(CommandSpec("true", box.ws))
    assert "sk-secret" not in " ".join(argv)
    assert ("HOME", "/tmp/home") in _pairs(argv, "--setenv")


def test_workspace_symlink_is_resolved(runner: BubblewrapRunner, box: Box) -> None:
    alias = box.root / "alias"
    alias.symlink_to(box.ws)
    argv = runner.argv(CommandSpec("true", alias))
    assert argv[argv.index("--chdir") + 1] == str(box.ws)
    assert str(alias) not in argv


def test_missing_bwrap_is_an_error_not_a_silent_fallback(monkeypatch: pytest.MonkeyPatch) -> None:
    import cerveau_tui.sandbox.bubblewrap as bw

    monkeypatch.setattr(bw, "BWRAP_PATHS", ("/nonexistent/bwrap",))
    with pytest.raises(FileNotFoundError):
        bw.BubblewrapRunner()


def test_find_bwrap_skips_a_binary_inside_the_workspace(
    box: Box, monkeypatch: pytest.MonkeyPatch
) -> None:
    import cerveau_tui.sandbox.bubblewrap as bw

    planted = box.ws / "bwrap"
    planted.write_text("#!/bin/sh\n")
    planted.chmod(0o755)
    monkeypatch.setattr(bw, "BWRAP_PATHS", (str(planted),))
    assert bw.find_bwrap(exclude_under=box.ws) is None
    assert Path(str(planted)).exists()


def test_granting_git_keeps_hooks_and_config_read_only(runner: BubblewrapRunner, box: Box) -> None:
    git = box.ws / ".git"
    argv = runner.argv(CommandSpec("true", box.ws, grant=Grant(extra_writable=(git,))))
    i_git = max(i for i, a in enumerate(argv) if a == "--bind-try" and argv[i + 1] == str(git))
    for sub in (git / "hooks", git / "config"):
        i_ro = max(
            i for i, a in enumerate(argv) if a == "--ro-bind-try" and argv[i + 1] == str(sub)
        )
        assert i_ro > i_git, sub


def test_read_only_mode_with_the_workspace_granted_keeps_git_read_only(
    runner: BubblewrapRunner, box: Box
) -> None:
    argv = runner.argv(
        CommandSpec("true", box.ws, mode="read-only", grant=Grant(extra_writable=(box.ws,)))
    )
    i_ws = max(i for i, a in enumerate(argv) if a == "--bind-try" and argv[i + 1] == str(box.ws))
    i_git = max(
        i
        for i, a in enumerate(argv)
        if a == "--ro-bind-try" and argv[i + 1] == str(box.ws / ".git")
    )
    assert i_git > i_ws


def test_the_whole_state_folder_is_bound_read_only(runner: BubblewrapRunner, box: Box) -> None:
    argv = runner.argv(CommandSpec("true", box.ws))
    cerveau = str(box.ws / ".cerveau")
    assert (cerveau, cerveau) in _pairs(argv, "--ro-bind-try")


@pytest.mark.parametrize("where", ["/tmp", "/dev/shm"])
def test_ram_filesystems_are_sized(box: Box, where: str) -> None:
    argv = BubblewrapRunner(bwrap="/usr/bin/bwrap", tmp_mb=64).argv(CommandSpec("true", box.ws))
    i = next(i for i, a in enumerate(argv) if a == "--tmpfs" and argv[i + 1] == where)
    assert argv[i - 2 : i] == ["--size", str(64 * 1024 * 1024)]


def test_dev_is_remounted_read_only_after_its_shm(runner: BubblewrapRunner, box: Box) -> None:
    argv = runner.argv(CommandSpec("true", box.ws))
    i_shm = next(i for i, a in enumerate(argv) if a == "--tmpfs" and argv[i + 1] == "/dev/shm")
    i_ro = next(i for i, a in enumerate(argv) if a == "--remount-ro" and argv[i + 1] == "/dev")
    assert i_ro > i_shm


def test_a_runner_built_bare_masks_the_default_secrets(box: Box) -> None:
    from cerveau_tui.deny_read import DEFAULT_DENY_READ, deny_read_paths

    assert BubblewrapRunner(bwrap="/usr/bin/bwrap").deny_read == deny_read_paths(DEFAULT_DENY_READ)
