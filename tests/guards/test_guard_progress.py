"""The work tracker: calm uselessness is seen from the workspace, not from errors."""

from __future__ import annotations

from pathlib import Path

from cerveau_tui.loop.guards.progress import WorkTracker, summarise_actions


def _dir_fingerprint(root: Path):
    def fp() -> str:
        return "|".join(
            f"{p.name}:{p.read_bytes()!r}" for p in sorted(root.rglob("*")) if p.is_file()
        )

    return fp


def test_eight_still_iterations_stall(tmp_path: Path) -> None:
    t = WorkTracker(_dir_fingerprint(tmp_path), limit=8)
    t.reset()
    results = [t.observe(i, ["read_file a.py"]) for i in range(1, 9)]
    assert results[:7] == [None] * 7
    assert results[7] is not None and results[7].iterations == 8


def test_a_write_restarts_the_count(tmp_path: Path) -> None:
    t = WorkTracker(_dir_fingerprint(tmp_path), limit=3)
    t.reset()
    t.observe(1, ["read_file a.py"])
    t.observe(2, ["read_file a.py"])
    (tmp_path / "a.py").write_text("x = 1\n")
    assert t.observe(3, ["write_file a.py"]) is None
    assert t.observe(4, ["read_file a.py"]) is None
    assert t.observe(5, ["read_file a.py"]) is None
    assert t.observe(6, ["read_file a.py"]) is not None


def test_rewriting_identical_bytes_is_not_work(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    t = WorkTracker(_dir_fingerprint(tmp_path), limit=2)
    t.reset()
    (tmp_path / "a.py").write_text("x = 1\n")
    assert t.observe(1, ["write_file a.py"]) is None
    (tmp_path / "a.py").write_text("x = 1\n")
    assert t.observe(2, ["write_file a.py"]) is not None


def test_slow_steady_edits_never_stall(tmp_path: Path) -> None:
    t = WorkTracker(_dir_fingerprint(tmp_path), limit=3)
    t.reset()
    for i in range(1, 30):
        if i % 2 == 0:
            (tmp_path / "a.py").write_text(f"x = {i}\n")
        assert t.observe(i, ["read_file a.py"] if i % 2 else ["edit_file a.py"]) is None


def test_the_stall_message_names_what_was_done() -> None:
    t = WorkTracker(lambda: "same", limit=4)
    t.reset()
    t.observe(3, ["read_file a.py", "search TODO"])
    t.observe(4, ["read_file b.py"])
    t.observe(5, ["read_file a.py"])
    stall = t.observe(6, ["search FIXME"])
    assert stall is not None
    assert "4 iterations without changing any file" in stall.message
    assert "iterations 3-6" in stall.message
    assert "read_file x3 (a.py, b.py)" in stall.message
    assert "search x2 (TODO, FIXME)" in stall.message


def test_reset_forgets_the_streak() -> None:
    t = WorkTracker(lambda: "same", limit=2)
    t.reset()
    t.observe(1, ["list_files ."])
    t.reset()
    assert t.observe(2, ["list_files ."]) is None


def test_summary_counts_and_limits_targets() -> None:
    s = summarise_actions([f"read_file f{i}.py" for i in range(5)] + ["bash ls"])
    assert s == "read_file x5 (f0.py, f1.py, f2.py, +2 more), bash x1 (ls)"
