"""Near-green checkpoints over the real blake3 content store."""

from __future__ import annotations

from pathlib import Path

from cerveau_tui.done.near_green import NearGreen, workspace_files
from cerveau_tui.workspace.restore.store import BlobStore


def make(ws: Path) -> NearGreen:
    return NearGreen(BlobStore(ws), ws)


def test_the_first_observation_only_sets_the_bar(tmp_path: Path) -> None:
    near = make(tmp_path)
    assert not near.observe(["tests"], ["a", "b"])
    assert near.snapshot is None


def test_a_better_state_is_snapshotted(tmp_path: Path) -> None:
    (tmp_path / "calc.py").write_text("v1\n")
    near = make(tmp_path)
    near.observe(["tests"], ["a", "b"])
    assert near.observe(["tests"], ["a"])
    assert near.snapshot == {"calc.py": near.snapshot["calc.py"]} and near.best == (1, 1)


def test_fewer_unmet_beats_fewer_errors(tmp_path: Path) -> None:
    near = make(tmp_path)
    near.observe(["lint", "tests"], ["a"])
    assert near.observe(["tests"], ["a", "b", "c"])
    assert not near.observe(["lint", "tests"], [])


def test_new_errors_beyond_the_best_without_progress_ask_for_a_rollback(tmp_path: Path) -> None:
    near = make(tmp_path)
    near.observe(["tests"], ["a", "b"])
    near.observe(["tests"], ["a"])
    assert near.should_roll_back(["tests"], ["a", "x", "y"], progressed=False)
    assert not near.should_roll_back(["tests"], ["a", "x", "y"], progressed=True)
    assert not near.should_roll_back(["tests"], ["a"], progressed=False)


def test_rolling_back_restores_the_best_bytes_and_removes_files_created_since(
    tmp_path: Path,
) -> None:
    (tmp_path / "calc.py").write_text("good\n")
    near = make(tmp_path)
    near.observe(["tests"], ["a", "b"])
    near.observe(["tests"], ["a"])
    (tmp_path / "calc.py").write_text("broken\n")
    (tmp_path / "helper.py").write_text("new\n")
    (tmp_path / "notes.txt").write_text("the person's, not written by the session\n")
    restored = near.roll_back(written=["calc.py", "helper.py"])
    assert restored == ["calc.py", "helper.py"]
    assert (tmp_path / "calc.py").read_text() == "good\n"
    assert not (tmp_path / "helper.py").exists()
    assert (tmp_path / "notes.txt").exists()


def test_snapshots_skip_caches_and_environments(tmp_path: Path) -> None:
    for rel in ("src/a.py", ".venv/lib/x.py", "__pycache__/a.pyc", ".cerveau/blobs/ab/cd", "b.txt"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("x")
    assert workspace_files(tmp_path) == ["b.txt", "src/a.py"]
