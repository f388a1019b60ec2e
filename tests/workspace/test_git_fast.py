"""The git guard without its walk when the change set says nothing git reads moved (git_fast):
the same vectors as tests/sandbox/test_guarded_git.py, each after a quiet command so the check
starts from the REUSED snapshot, with the session's real watch (a Fingerprinter(watch=True)), the
real NoSandbox runner, and the person's real git afterwards (host side)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from cerveau_tui.sandbox.command import CommandSpec
from cerveau_tui.sandbox.guarded import GuardedRunner
from cerveau_tui.sandbox.none import NoSandbox
from cerveau_tui.testing.git_probe import (
    VECTORS,
    Marker,
    Vector,
    command_for,
    existing_repo,
    make_marker,
    person_git,
    prepare,
)
from cerveau_tui.workspace.fingerprint import watch
from cerveau_tui.workspace.fingerprint.fingerprinter import Fingerprinter
from cerveau_tui.workspace.git import fast as git_fast
from cerveau_tui.workspace.git import guard as git_guard

pytestmark = pytest.mark.skipif(
    watch.TreeWatch("/").failed is not None, reason="inotify is not available here"
)


@dataclass
class Place:
    root: Path
    ws: Path
    home: Path
    marker: Marker

    def person(self, cwd: str = "") -> None:
        person_git(self.ws / cwd, home=self.home, ceiling=self.root)


@pytest.fixture
def place(tmp_path: Path) -> Any:
    ws = tmp_path / "ws"
    ws.mkdir()
    yield Place(tmp_path, ws, tmp_path / "home", make_marker(tmp_path / "probe"))
    git_fast.forget(ws)


@pytest.fixture
def walks(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The guard's full walks, counted (the real snapshot runs)."""
    seen: list[str] = []
    real = git_fast.snapshot

    def counted(ws: Any, **kw: Any) -> Any:
        seen.append(str(ws))
        return real(ws, **kw)

    monkeypatch.setattr(git_fast, "snapshot", counted)
    monkeypatch.setattr(git_guard, "snapshot", counted)
    return seen


def watching(ws: Path) -> Fingerprinter:
    fp = Fingerprinter(ws, watch=True)
    fp.scan()
    assert watch.current(ws) is not None, fp.status()
    return fp


def quiet(ws: Path) -> None:
    r = GuardedRunner(NoSandbox()).run(CommandSpec("echo quiet > quiet.txt", workspace=ws))
    assert r.exit_code == 0 and r.notes == []


@pytest.mark.parametrize("vector", VECTORS, ids=[v.name for v in VECTORS])
def test_each_vector_after_a_quiet_command_is_undone(place: Place, vector: Vector) -> None:
    prepare(vector, place.ws, home=place.home, ceiling=place.root)
    fp = watching(place.ws)
    quiet(place.ws)
    quiet(place.ws)  # the second starts from the reused snapshot
    GuardedRunner(NoSandbox()).run(
        CommandSpec(command_for(vector, place.marker), workspace=place.ws, timeout=60)
    )
    place.person(vector.person_cwd)
    assert not place.marker.fired()
    fp.close()


_DEEP = [v for v in VECTORS if v.before in ("", "sub")]


@pytest.mark.parametrize("vector", _DEEP, ids=[v.name for v in _DEEP])
def test_each_vector_planted_inside_node_modules_is_undone(place: Place, vector: Vector) -> None:
    """node_modules is watched for names only and never fingerprinted: still seen by the guard."""
    deep = place.ws / "node_modules" / "pkg"
    deep.mkdir(parents=True)
    if vector.before == "sub":
        existing_repo(deep / "sub", home=place.home, ceiling=place.root)
    fp = watching(place.ws)
    quiet(place.ws)
    quiet(place.ws)
    cmd = f"cd node_modules/pkg && {command_for(vector, place.marker)}"
    GuardedRunner(NoSandbox()).run(CommandSpec(cmd, workspace=place.ws, timeout=60))
    place.person(f"node_modules/pkg/{vector.person_cwd}".rstrip("/"))
    assert not place.marker.fired()
    fp.close()


def test_quiet_commands_walk_nothing(place: Place, walks: list[str]) -> None:
    existing_repo(place.ws, home=place.home, ceiling=place.root)
    fp = watching(place.ws)
    quiet(place.ws)
    first = len(walks)
    for i in range(3):
        GuardedRunner(NoSandbox()).run(
            CommandSpec(f"mkdir -p src/m{i} && echo {i} > src/m{i}/f", workspace=place.ws)
        )
    assert len(walks) == first
    GuardedRunner(NoSandbox()).run(
        CommandSpec("git init -q sub", workspace=place.ws)
    )  # a repository: walk
    assert len(walks) > first
    fp.close()


def test_no_watch_walks_every_command(place: Place, walks: list[str]) -> None:
    quiet(place.ws)
    quiet(place.ws)
    assert len(walks) == 4


def test_an_existing_bare_repo_in_node_modules_edited_in_place(place: Place) -> None:
    """A quiet folder gets no content events: the control files the snapshot read are re-read."""
    bare = place.ws / "node_modules" / "b"
    bare.parent.mkdir()
    existing_repo(place.ws / "node_modules" / "tmp", home=place.home, ceiling=place.root)
    (place.ws / "node_modules" / "tmp" / ".git").rename(bare)
    fp = watching(place.ws)
    quiet(place.ws)
    quiet(place.ws)
    r = GuardedRunner(NoSandbox()).run(
        CommandSpec(
            f"printf '[core]\\n\\tpager = {place.marker.program}\\n' >> node_modules/b/config",
            workspace=place.ws,
        )
    )
    assert "core.pager" in r.output
    place.person("node_modules/b")
    assert not place.marker.fired()
    fp.close()


def test_a_watch_that_overflowed_walks(place: Place, walks: list[str]) -> None:
    fp = watching(place.ws)
    quiet(place.ws)
    tw = watch.current(place.ws)
    assert tw is not None
    with tw._lock:
        tw._log.append(("all", ""))  # what an IN_Q_OVERFLOW leaves in the journal
    before = len(walks)
    quiet(place.ws)
    assert len(walks) == before + 1
    fp.close()
