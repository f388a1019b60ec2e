"""git_guard: what a command leaves for the person's next git is found and undone.

Every security claim is checked from the host: a planted program creates a marker file, and the
person's real git (status, diff, log, add, commit, checkout, branch at a terminal) runs after the
guard. The command itself runs here as a plain host process (the sandbox-level tests, through the
real runners, are in tests/sandbox/test_guarded_git.py).
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from cerveau_tui.testing.git_probe import (
    VECTORS,
    Marker,
    Vector,
    command_for,
    existing_repo,
    host_git,
    make_marker,
    person_git,
    prepare,
)
from cerveau_tui.workspace.git.config_rules import danger
from cerveau_tui.workspace.git.guard import Finding, check, snapshot
from cerveau_tui.workspace.git.quarantine import neutralize


@dataclass
class Place:
    root: Path
    ws: Path
    home: Path
    marker: Marker

    def git(self, *args: str, cwd: str = "") -> subprocess.CompletedProcess[str]:
        return host_git(self.ws / cwd, *args, home=self.home, ceiling=self.root)

    def person(self, cwd: str = "") -> None:
        person_git(self.ws / cwd, home=self.home, ceiling=self.root)

    def command(self, text: str) -> None:
        """The model's command (here a host process in the workspace)."""
        env = {"PATH": "/usr/bin:/bin", "HOME": str(self.ws), "LC_ALL": "C"}
        subprocess.run(["sh", "-c", text], cwd=self.ws, env=env, check=True, capture_output=True)

    def guarded(self, text: str) -> tuple[list[Finding], list[str]]:
        before = snapshot(self.ws)
        self.command(text)
        findings = check(self.ws, before)
        return findings, neutralize(self.ws, findings)


@pytest.fixture
def place(tmp_path: Path) -> Place:
    ws = tmp_path / "ws"
    ws.mkdir()
    return Place(tmp_path, ws, tmp_path / "home", make_marker(tmp_path / "probe"))


IDS = [v.name for v in VECTORS]


@pytest.mark.parametrize("vector", VECTORS, ids=IDS)
def test_each_vector_runs_the_planted_program_without_the_guard(
    place: Place, vector: Vector
) -> None:
    # The control: without it, a probe that cannot detect anything would pass the test below.
    prepare(vector, place.ws, home=place.home, ceiling=place.root)
    place.command(command_for(vector, place.marker))
    place.person(vector.person_cwd)
    assert place.marker.fired()


@pytest.mark.parametrize("vector", VECTORS, ids=IDS)
def test_each_vector_is_undone_before_the_persons_next_git(place: Place, vector: Vector) -> None:
    prepare(vector, place.ws, home=place.home, ceiling=place.root)
    findings, _ = place.guarded(command_for(vector, place.marker))
    place.person(vector.person_cwd)
    assert findings and not place.marker.fired()


def test_a_clean_git_init_and_commit_is_left_alone(place: Place) -> None:
    (place.ws / "main.py").write_text("print(1)\n")
    findings, _ = place.guarded(
        "git init -q && git add -A && git -c user.name=m -c user.email=m@x commit -qm init"
    )
    assert findings == []
    assert place.git("log", "--format=%s").stdout.strip() == "init"


def test_the_persons_own_pager_is_not_reported_when_the_command_sets_a_name(place: Place) -> None:
    existing_repo(place.ws, home=place.home, ceiling=place.root)
    place.git("config", "core.pager", "less -R")
    findings, _ = place.guarded("git config user.name model")
    assert findings == []


def test_a_worktree_added_to_a_repository_with_a_pager_is_not_reported(place: Place) -> None:
    existing_repo(place.ws, home=place.home, ceiling=place.root)
    place.git("config", "core.pager", "less -R")
    findings, _ = place.guarded("git worktree add -q wt")
    assert findings == [] and (place.ws / "wt" / ".git").is_file()


def test_a_changed_config_gets_its_previous_bytes_back(place: Place) -> None:
    existing_repo(place.ws / "sub", home=place.home, ceiling=place.root)
    config = place.ws / "sub" / ".git" / "config"
    original = config.read_bytes()
    place.guarded(f"git -C sub config core.fsmonitor {place.marker.program}")
    assert config.read_bytes() == original


def test_the_commands_version_of_a_restored_config_is_kept_in_the_quarantine(place: Place) -> None:
    existing_repo(place.ws / "sub", home=place.home, ceiling=place.root)
    place.guarded(f"git -C sub config core.fsmonitor {place.marker.program}")
    kept = (place.ws / ".cerveau" / "quarantine" / "1" / "sub__.git__config").read_text()
    assert str(place.marker.program) in kept


def test_a_hook_of_the_person_changed_by_the_command_is_restored_executable(place: Place) -> None:
    existing_repo(place.ws / "sub", home=place.home, ceiling=place.root)
    hook = place.ws / "sub" / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\nexit 0\n")
    hook.chmod(0o755)
    place.guarded(f"printf '#!/bin/sh\\n{place.marker.program}\\n' > sub/.git/hooks/pre-commit")
    assert hook.read_text() == "#!/bin/sh\nexit 0\n" and os.access(hook, os.X_OK)


def test_a_quarantined_repository_is_not_a_repository_for_git(place: Place) -> None:
    place.guarded(f"git init -q && git config core.fsmonitor {place.marker.program}")
    moved = place.ws / ".cerveau" / "quarantine" / "1" / "git"
    place.person(".cerveau/quarantine/1/git")
    assert moved.is_dir() and not place.marker.fired()


def test_the_history_of_a_quarantined_repository_is_kept(place: Place) -> None:
    place.guarded(
        "git init -q && git -c user.name=m -c user.email=m@x commit -q --allow-empty -m kept"
        f" && git config core.fsmonitor {place.marker.program}"
    )
    moved = place.ws / ".cerveau" / "quarantine" / "1" / "git"
    # HEAD was renamed (so git does not discover it); the refs and objects are intact.
    (moved / "HEAD.quarantined").rename(moved / "HEAD")
    log = subprocess.run(
        ["git", "--git-dir", str(moved), "log", "--format=%s"],
        capture_output=True, text=True, env={"PATH": "/usr/bin:/bin", "HOME": str(place.home)},
    )  # fmt: skip
    assert log.stdout.strip() == "kept"


def test_an_included_file_the_command_edits_is_caught(place: Place) -> None:
    existing_repo(place.ws / "sub", home=place.home, ceiling=place.root)
    (place.ws / "shared.cfg").write_text("[user]\n\tname = person\n")
    place.git("config", "include.path", "../../shared.cfg", cwd="sub")
    findings, _ = place.guarded(
        f"printf '[core]\\n\\tfsmonitor = {place.marker.program}\\n' >> shared.cfg"
    )
    place.person("sub")
    assert [f.what for f in findings] == ["core.fsmonitor"] and not place.marker.fired()


def test_a_gitfile_pointing_out_of_the_workspace_is_moved_aside(place: Place) -> None:
    outside = place.root / "elsewhere"
    existing_repo(outside, home=place.home, ceiling=place.root)
    findings, _ = place.guarded(f"mkdir sub && echo 'gitdir: {outside}/.git' > sub/.git")
    assert [f.kind for f in findings] == ["indirection"] and not (
        place.ws / "sub" / ".git"
    ).exists()


def test_a_config_replaced_by_a_link_is_reported(place: Place) -> None:
    existing_repo(place.ws / "sub", home=place.home, ceiling=place.root)
    (place.ws / "evil.cfg").write_text(f"[core]\n\tfsmonitor = {place.marker.program}\n")
    findings, _ = place.guarded("rm sub/.git/config && ln -s ../../evil.cfg sub/.git/config")
    place.person("sub")
    assert "config (link)" in [f.what for f in findings] and not place.marker.fired()


def test_a_config_git_cannot_parse_is_reported(place: Place) -> None:
    existing_repo(place.ws / "sub", home=place.home, ceiling=place.root)
    findings, _ = place.guarded("printf '[core\\n' >> sub/.git/config")
    assert [f.what for f in findings] == ["config (unchecked)"]


@pytest.mark.skipif(os.geteuid() == 0, reason="root lists every folder; nothing is unlistable")
def test_a_folder_the_guard_cannot_list_is_moved_aside(place: Place) -> None:
    findings, _ = place.guarded(
        f"mkdir -p x/sub && cd x/sub && git init -q && git config core.fsmonitor {place.marker.program} && chmod 100 .."
    )
    try:
        assert [f.kind for f in findings] == ["unscannable"] and not (place.ws / "x").exists()
    finally:
        for p in (place.ws / ".cerveau" / "quarantine" / "1").iterdir():
            p.chmod(0o755)


def test_a_planted_program_in_a_nested_repository_is_found_at_depth(place: Place) -> None:
    deep = "a/b/c/d/e/f"
    findings, _ = place.guarded(
        f"mkdir -p {deep} && cd {deep} && git init -q && git config core.pager {place.marker.program}"
    )
    assert [f.describe(place.ws) for f in findings] == [f"core.pager in {deep}/.git/config"]


@pytest.mark.parametrize(
    "key,value",
    [
        ("core.fsmonitor", "/x"),
        ("core.hookspath", "h"),
        ("diff.Foo.textconv", "x"),
        ("filter.x.process", "x"),
        ("alias.st", "!sh -c x"),
        ("alias.lg", "-c core.pager=x log"),
        ("includeif.gitdir:/x/.path", "/y"),
        ("remote.origin.uploadpack", "x"),
        ("somefuture.thing.cmd", "x"),
    ],
)
def test_settings_that_run_programs_are_dangerous(key: str, value: str) -> None:
    assert danger(key, value) is not None


@pytest.mark.parametrize(
    "key,value",
    [
        ("user.name", "x"),
        ("remote.origin.url", "https://example.org/r.git"),
        ("branch.main.remote", "origin"),
        ("core.fsmonitor", "false"),
        ("alias.co", "checkout"),
        ("submodule.lib.path", "lib"),
    ],
)
def test_ordinary_settings_are_not_dangerous(key: str, value: str) -> None:
    assert danger(key, value) is None


def test_a_state_folder_planted_as_a_link_makes_the_quarantine_stay_in_place(place: Place) -> None:
    outside = place.root / "outside"
    outside.mkdir()
    findings, actions = place.guarded(
        f"ln -s {outside} .cerveau && git init -q && git config core.fsmonitor {place.marker.program}"
    )
    place.person()
    assert list(outside.iterdir()) == [] and not place.marker.fired()
    assert actions == ["moved .git to .git.git-guard-quarantined-1"]
