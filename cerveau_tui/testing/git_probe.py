"""The person's next git commands, run on the host, and the ways a command plants code for them.

Tests of the git guard must prove from the host side that nothing the model left runs: so each
vector plants a program that creates a marker file, and `person_git` runs, as the person would
with their own rights, the commands that trigger every planted kind (status and diff for
fsmonitor and filters, add and commit for filters and hooks, checkout for post-checkout, branch
and log AT A TERMINAL for pagers, which git starts only on a tty). The marker exists or not.
"""

from __future__ import annotations

import os
import pty
import select
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

GIT = "/usr/bin/git"


@dataclass(frozen=True)
class Marker:
    path: Path  # created when the planted program runs
    program: Path  # the planted program (an absolute path, valid on the host)

    def fired(self) -> bool:
        return self.path.exists()


def make_marker(directory: Path) -> Marker:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "MARKER"
    program = directory / "plant.sh"
    program.write_text(f"#!/bin/sh\ntouch '{path}'\ncat >/dev/null 2>&1 </dev/null\nexit 0\n")
    program.chmod(0o755)
    return Marker(path, program)


def person_env(home: Path, ceiling: Path) -> dict[str, str]:
    home.mkdir(parents=True, exist_ok=True)
    return {
        "PATH": "/usr/bin:/bin",
        "HOME": str(home),
        "LC_ALL": "C",
        "PAGER": "cat",  # an unplanted repository pages into cat, never into a waiting less
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CEILING_DIRECTORIES": str(ceiling),
        "GIT_AUTHOR_NAME": "person",
        "GIT_AUTHOR_EMAIL": "person@example.org",
        "GIT_COMMITTER_NAME": "person",
        "GIT_COMMITTER_EMAIL": "person@example.org",
    }


def person_git(cwd: Path, *, home: Path, ceiling: Path) -> None:
    """The person's usual next commands in `cwd`; failures (no repository any more) are fine."""
    env = person_env(home, ceiling)
    for args in (
        ["status"],
        ["diff"],
        ["log", "-1"],
        ["add", "-A"],
        ["commit", "-qm", "person's commit", "--allow-empty"],
        ["checkout", "-q", "-b", f"person-{time.monotonic_ns()}"],
    ):
        subprocess.run(
            [GIT, *args],
            cwd=cwd,
            env=env,
            capture_output=True,
            timeout=30,
            stdin=subprocess.DEVNULL,
        )
    for args in (["branch"], ["log", "-1"]):
        at_terminal([GIT, *args], cwd=cwd, env=env)


def at_terminal(argv: list[str], *, cwd: Path, env: dict[str, str], timeout: float = 20.0) -> None:
    """Run argv on a pseudo-terminal (git starts a pager only when stdout is a tty)."""
    pid, fd = pty.fork()
    if pid == 0:  # child
        try:
            os.chdir(cwd)
            os.execve(argv[0], argv, env)
        finally:
            os._exit(127)
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([fd], [], [], 0.2)
            if ready:
                try:
                    if not os.read(fd, 4096):
                        break
                except OSError:
                    break
            elif os.waitpid(pid, os.WNOHANG) != (0, 0):
                pid = 0
                break
    finally:
        os.close(fd)
        if pid:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            os.waitpid(pid, 0)


def host_git(cwd: Path, *args: str, home: Path, ceiling: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [GIT, *args], cwd=cwd, env=person_env(home, ceiling), capture_output=True, text=True, timeout=30,
    )  # fmt: skip


def existing_repo(path: Path, *, home: Path, ceiling: Path) -> None:
    """A repository the person had before the command: one commit."""
    path.mkdir(parents=True, exist_ok=True)
    (path / "README").write_text("the person's work\n")
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "first"]):
        host_git(path, *args, home=home, ceiling=ceiling).check_returncode()


@dataclass(frozen=True)
class Vector:
    """A way to plant code: what existed before (`before`: "" none, "root" or "sub" repository),
    the model's command (`{m}` is the marker program), where the person then runs git."""

    name: str
    before: str
    command: str
    person_cwd: str = ""


_CONF = "printf '[core]\\n\\tfsmonitor = {m}\\n'"
_HOOK = "printf '#!/bin/sh\\n{m}\\n'"
_BARE = "mkdir -p {d}/objects {d}/refs && echo 'ref: refs/heads/main' > {d}/HEAD"

VECTORS = [
    Vector("init_fsmonitor_at_root", "", "git init -q && git config core.fsmonitor {m}"),
    Vector(
        "init_hook_at_root",
        "",
        "git init -q && " + _HOOK + " > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit",
    ),
    Vector(
        "nested_init_fsmonitor",
        "root",
        "mkdir -p sub && cd sub && git init -q && git config core.fsmonitor {m}",
        "sub",
    ),
    Vector(
        "gitfile_to_planted_dir",
        "",
        _BARE.format(d="planted")
        + " && "
        + _CONF
        + " > planted/config && mkdir sub && echo 'gitdir: ../planted' > sub/.git",
        "sub",
    ),
    Vector(
        "dotgit_symlink_to_planted_dir",
        "",
        _BARE.format(d="planted")
        + " && "
        + _CONF
        + " > planted/config && mkdir sub && ln -s ../planted sub/.git",
        "sub",
    ),
    Vector(
        "commondir_in_existing_repo",
        "sub",
        "mkdir -p planted/objects planted/refs && "
        + _CONF
        + " > planted/config && echo ../../planted > sub/.git/commondir",
        "sub",
    ),
    Vector(
        "hooks_added_to_existing_repo",
        "sub",
        _HOOK + " > sub/.git/hooks/pre-commit && chmod +x sub/.git/hooks/pre-commit"
        " && cp sub/.git/hooks/pre-commit sub/.git/hooks/post-checkout",
        "sub",
    ),
    Vector(
        "fsmonitor_watchman_hook",
        "sub",
        _HOOK + " > sub/.git/hooks/fsmonitor-watchman && chmod +x sub/.git/hooks/fsmonitor-watchman"
        " && git -C sub config core.fsmonitor .git/hooks/fsmonitor-watchman",
        "sub",
    ),
    Vector(
        "hook_in_existing_root_repo",
        "root",
        _HOOK + " > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit",
    ),
    Vector(
        "include_path_to_planted_config",
        "sub",
        _CONF + " > inc.cfg && git -C sub config include.path ../../inc.cfg",
        "sub",
    ),
    Vector(
        "bare_repo_laid_out_in_sub",
        "",
        _BARE.format(d="sub")
        + " && printf '[core]\\n\\tbare = true\\n\\tpager = {m}\\n' > sub/config",
        "sub",
    ),
    Vector(
        "bare_repo_laid_out_at_root",
        "",
        _BARE.format(d=".")
        + " && printf '[core]\\n\\tbare = true\\n\\tpager = {m}\\n' > config && echo work > main.py",
    ),
    Vector(
        "filter_clean_with_gitattributes",
        "sub",
        "git -C sub config filter.x.clean {m} && echo '*.txt filter=x' > sub/.gitattributes && echo hi > sub/a.txt",
        "sub",
    ),
    Vector(
        "hooks_path_to_workspace_dir",
        "sub",
        "mkdir -p myhooks && "
        + _HOOK
        + " > myhooks/pre-commit && chmod +x myhooks/pre-commit && git -C sub config core.hooksPath ../myhooks",
        "sub",
    ),
]


def prepare(vector: Vector, ws: Path, *, home: Path, ceiling: Path) -> None:
    if vector.before == "root":
        existing_repo(ws, home=home, ceiling=ceiling)
    elif vector.before == "sub":
        existing_repo(ws / "sub", home=home, ceiling=ceiling)


def command_for(vector: Vector, marker: Marker) -> str:
    return vector.command.replace("{m}", str(marker.program))


@dataclass(frozen=True)
class ToolOutcome:
    ok: bool
    output: str


def file_tool(ws: Path, name: str, **arguments: str) -> ToolOutcome:
    """The model's `write_file` / `edit_file` call, run as the session runs it (the tool's own
    run() through a ToolContext); a refusal is an outcome, not an exception."""
    from ..tools.base import ToolContext, ToolError, ToolState
    from ..tools.files import EditFile, WriteFile

    tool = {"write_file": WriteFile(), "edit_file": EditFile()}[name]
    ctx = ToolContext(workspace=ws, state=ToolState())
    try:
        result = tool.run(tool.Args(**arguments), ctx)
    except ToolError as exc:
        return ToolOutcome(False, str(exc))
    return ToolOutcome(result.ok, result.output)
