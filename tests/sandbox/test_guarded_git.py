"""GuardedRunner over the REAL runners (bubblewrap, Landlock, NoSandbox): whatever the command plants for git, the person's next git
(run on the host afterwards, with a marker program) runs nothing.

Bubblewrap binds the root `.git` read-only only when it exists, so most vectors are real gaps
under it (the control test shows which); NoSandbox runs on the host, so only in a tmp folder.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from cerveau_tui.sandbox.bubblewrap import BubblewrapRunner
from cerveau_tui.sandbox.command import CommandSpec
from cerveau_tui.sandbox.guarded import GuardedRunner
from cerveau_tui.sandbox.landlock import LandlockRunner, landlock_abi
from cerveau_tui.sandbox.none import NoSandbox
from cerveau_tui.testing.git_probe import (
    VECTORS,
    Marker,
    Vector,
    command_for,
    host_git,
    make_marker,
    person_git,
    prepare,
)
from cerveau_tui.workspace.git.guard import Finding

from .conftest import require_bwrap

# The root `.git` exists before the command and bubblewrap binds it read-only: the plant fails.
_BLOCKED_BY_BWRAP = {"hook_in_existing_root_repo"}


@dataclass
class Place:
    root: Path
    ws: Path
    home: Path
    marker: Marker

    def person(self, cwd: str = "") -> None:
        person_git(self.ws / cwd, home=self.home, ceiling=self.root)


@pytest.fixture
def place(tmp_path: Path) -> Place:
    ws = tmp_path / "ws"
    ws.mkdir()
    return Place(tmp_path, ws, tmp_path / "home", make_marker(tmp_path / "probe"))


@pytest.fixture(params=["bubblewrap", "landlock", "none"])
def inner(request: pytest.FixtureRequest) -> BubblewrapRunner | LandlockRunner | NoSandbox:
    if request.param == "bubblewrap":
        require_bwrap()
        return BubblewrapRunner()
    if request.param == "landlock":
        if landlock_abi() < 1:
            pytest.skip("Landlock is not available in this kernel")
        return LandlockRunner()
    return NoSandbox()


IDS = [v.name for v in VECTORS]


@pytest.mark.parametrize("vector", VECTORS, ids=IDS)
def test_each_vector_is_undone_before_the_persons_next_git(
    inner, place: Place, vector: Vector
) -> None:  # type: ignore[no-untyped-def]
    prepare(vector, place.ws, home=place.home, ceiling=place.root)
    GuardedRunner(inner).run(CommandSpec(command_for(vector, place.marker), place.ws, timeout=60))
    place.person(vector.person_cwd)
    assert not place.marker.fired()


@pytest.mark.parametrize(
    "vector", [v for v in VECTORS if v.name not in _BLOCKED_BY_BWRAP], ids=lambda v: v.name
)
def test_each_vector_is_a_real_gap_under_bubblewrap_alone(place: Place, vector: Vector) -> None:
    # The control for the test above: without the guard, the sandbox lets each of these through.
    require_bwrap()
    prepare(vector, place.ws, home=place.home, ceiling=place.root)
    BubblewrapRunner().run(CommandSpec(command_for(vector, place.marker), place.ws, timeout=60))
    place.person(vector.person_cwd)
    assert place.marker.fired()


def test_the_model_is_told_in_the_output_and_the_notes(inner, place: Place) -> None:  # type: ignore[no-untyped-def]
    result = GuardedRunner(inner).run(
        CommandSpec(
            f"git init -q && git config core.fsmonitor {place.marker.program} && echo done",
            place.ws,
        )
    )
    expected = (
        "[harness] this command left code for your next git command (core.fsmonitor in .git/config)"
    )
    assert expected in result.output and any(expected in n for n in result.notes)


def test_on_findings_receives_what_was_found(inner, place: Place) -> None:  # type: ignore[no-untyped-def]
    seen: list[list[Finding]] = []
    GuardedRunner(inner, on_findings=seen.append).run(
        CommandSpec(f"git init -q && git config core.pager {place.marker.program}", place.ws)
    )
    assert [[f.what for f in batch] for batch in seen] == [["core.pager"]]


def test_a_clean_init_and_commit_by_the_command_keeps_working(inner, place: Place) -> None:  # type: ignore[no-untyped-def]
    result = GuardedRunner(inner).run(
        CommandSpec(
            "echo x > a.txt && git init -q && git add -A && git -c user.name=m -c user.email=m@x commit -qm init",
            place.ws,
        )
    )
    log = host_git(place.ws, "log", "--format=%s", home=place.home, ceiling=place.root)
    assert result.exit_code == 0 and result.notes == [] and log.stdout.strip() == "init"


def test_full_access_commands_are_checked_too(place: Place) -> None:
    require_bwrap()
    GuardedRunner(BubblewrapRunner()).run(
        CommandSpec(
            f"git init -q && git config core.fsmonitor {place.marker.program}",
            place.ws,
            mode="full-access",
        )
    )
    place.person()
    assert not place.marker.fired() and not (place.ws / ".git").exists()


def test_a_command_that_plants_nothing_returns_the_inner_result_untouched(
    inner, place: Place
) -> None:  # type: ignore[no-untyped-def]
    result = GuardedRunner(inner).run(CommandSpec("echo hello", place.ws))
    assert result.output == "hello\n" and result.notes == []


def test_the_inner_runners_backend_and_enforcement_show_through(inner) -> None:  # type: ignore[no-untyped-def]
    guarded = GuardedRunner(inner)
    assert (guarded.backend, guarded.enforced) == (inner.backend, inner.enforced)


def test_kill_background_reaches_the_inner_runner() -> None:
    killed: list[bool] = []

    class Inner(NoSandbox):
        def kill_background(self) -> None:
            killed.append(True)

    GuardedRunner(Inner()).kill_background()
    assert killed == [True]


def test_a_check_that_cannot_run_says_so_instead_of_passing(place: Place) -> None:
    def broken(data: bytes) -> None:
        raise OSError("git is gone")

    host_git(place.ws, "init", "-q", home=place.home, ceiling=place.root)
    result = GuardedRunner(NoSandbox(), parse=broken).run(CommandSpec("true", place.ws))
    assert "the git guard could not check this command (git is gone)" in result.output
