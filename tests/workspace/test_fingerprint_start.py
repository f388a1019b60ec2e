"""The first fingerprint is built in the background and says its progress; doctor says which
method is in use and why; the walk stays one environment variable away."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from cerveau_tui.workspace.fingerprint import watch
from cerveau_tui.workspace.fingerprint.digest import hash_path
from cerveau_tui.workspace.fingerprint.fingerprinter import PROGRESS_FILES, Fingerprinter

pytestmark = pytest.mark.skipif(
    watch.TreeWatch("/").failed is not None, reason="inotify is not available here"
)


def _tree(root: Path, n: int) -> None:
    for i in range(n):
        d = root / f"d{i % 50}"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"f{i}.txt").write_text(str(i))


def held_in_the_background(gate: threading.Event) -> Callable[[Path, int], str]:
    """A hasher that holds every thread but the test's own until `gate` is set: the first build
    (in the background) is held, a file the test hashes itself is not."""
    test = threading.current_thread()

    def hasher(path: Path, size: int) -> str:
        if threading.current_thread() is not test:
            gate.wait(30)
        return hash_path(path, size)

    return hasher


def test_start_returns_at_once_and_the_first_scan_waits_for_the_build(tmp_path: Path) -> None:
    _tree(tmp_path, 200)
    gate = threading.Event()
    lines: list[str] = []
    fp = Fingerprinter(tmp_path, watch=True, hasher=held_in_the_background(gate))
    fp.start(lambda stage, fraction, line: lines.append(line))
    assert not fp.wait_ready(0.05) and fp.status()["ready"] is False  # start did not block
    got: list[int] = []
    t = threading.Thread(target=lambda: got.append(len(fp.scan())))
    t.start()
    t.join(0.2)
    assert t.is_alive()  # the first round needs it: it waits
    gate.set()
    t.join(30)
    assert got == [200] and fp.status()["method"] == "inotify"
    assert lines == []  # a small tree says nothing
    fp.close()


def test_a_large_tree_says_its_progress(tmp_path: Path) -> None:
    _tree(tmp_path, PROGRESS_FILES + 10)
    lines: list[tuple[str, str]] = []
    fp = Fingerprinter(tmp_path, watch=True)
    fp.start(lambda stage, fraction, line: lines.append((stage, line)))
    assert fp.wait_ready(120)
    assert ("workspace", f"indexing the workspace: {PROGRESS_FILES:,} files") in lines
    assert lines[-1][1].startswith(f"workspace indexed: {PROGRESS_FILES + 10:,} files in")
    assert lines[-1][1].endswith("(inotify)")
    fp.close()


def test_walk_forced_by_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CERVEAU_FINGERPRINT", "walk")
    _tree(tmp_path, 5)
    fp = Fingerprinter(tmp_path, watch=True)
    assert len(fp.scan()) == 5
    assert fp.status()["method"] == "walk" and fp.status()["reason"] == "CERVEAU_FINGERPRINT=walk"
    assert watch.doctor_info(tmp_path)["method"] == "walk"


def test_a_network_filesystem_is_walked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(watch, "fs_type", lambda path: "nfs4")
    fp = Fingerprinter(tmp_path, watch=True)
    fp.scan()
    st = fp.status()
    assert st["method"] == "walk" and "nfs4" in st["reason"]


def test_doctor_json_says_the_method(tmp_path: Path) -> None:
    _tree(tmp_path / "ws", 30)
    command = [sys.executable, "-m", "cerveau_tui", "doctor", "--json"]
    command += ["--workspace", str(tmp_path / "ws")]
    out = subprocess.run(command, capture_output=True, text=True, timeout=120, cwd=tmp_path)
    info = json.loads(out.stdout)["fingerprint"]
    assert info["method"] == "inotify" and info["reason"] is None
    assert info["watches"] == 31  # the root and its 30 folders


def test_a_turn_started_while_building_takes_its_before_at_the_first_call(tmp_path: Path) -> None:
    """scan_soon does not wait; settle (before a turn's first call) takes the snapshot, so what
    the call then changes is the turn's; the progress baseline is a token meanwhile."""
    _tree(tmp_path, 20)
    gate = threading.Event()
    fp = Fingerprinter(tmp_path, watch=True, hasher=held_in_the_background(gate))
    fp.start()
    before = fp.scan_soon()  # returns at once
    token = fp.digest_soon()
    assert token.startswith("pending:") and not fp.wait_ready(0.01)
    assert fp.hash_file("d1/f1.txt") is not None  # the changed-on-disk check does not wait
    gate.set()
    fp.settle()  # the turn's first call: the snapshot is taken before it runs
    (tmp_path / "d0" / "f0.txt").write_text("the call's change")
    assert fp.changed_since(before) == ["d0/f0.txt"]
    assert fp.digest_soon() != token
    fp.close()


def test_a_progress_callback_that_waits_on_the_scan_does_not_deadlock(tmp_path: Path) -> None:
    """The session's progress goes through the bus, whose lock a subscriber may hold while it
    waits for the first scan (the turn's first restore point): on a tree big enough to report
    progress, that hung the first turn for good."""
    _tree(tmp_path, PROGRESS_FILES + 10)
    bus_lock = threading.RLock()
    lines: list[str] = []

    def progress(stage: str, fraction: float | None, line: str) -> None:
        with bus_lock:  # as Emitter.emit delivers
            lines.append(line)

    fp = Fingerprinter(tmp_path, watch=True)
    done = threading.Event()

    def subscriber() -> None:
        with bus_lock:  # a subscriber, under the bus's lock, waits for the first scan
            fp.start(progress)
            fp.scan()
        done.set()

    t = threading.Thread(target=subscriber, daemon=True)
    t.start()
    assert done.wait(120), "the first scan never settled: the build waited on the bus"
    t.join(5)
    fp.close()
    deadline = threading.Event()
    for _ in range(100):
        if any("indexed" in ln for ln in lines):
            break
        deadline.wait(0.05)
    assert any("indexed" in ln for ln in lines), lines
