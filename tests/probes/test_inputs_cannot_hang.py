"""No input can hang or crash the harness (issue 20): each bad input is built on disk, the harness's
own code is called on it, and the call must come back with a clear message.

A hang is detected, not timed: the call runs in a thread (or, when the old failure held the
interpreter lock, in a child process) and a join that runs out means it never returned. The
bounds are generous; nothing here asserts how fast anything is.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest

from cerveau_tui.tools.base import ToolContext, ToolError, ToolState
from cerveau_tui.tools.search import Search
from cerveau_tui.tools.walk import MAX_DEPTH, walk_files

T = TypeVar("T")
HANG = 60.0  # seconds after which a call is taken to never return


def returns(fn: Callable[[], T]) -> T:
    """fn's result (or its exception, raised here); a failure when it never comes back."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # handed to the test, which asserts on it
            box["error"] = exc

    th = threading.Thread(target=target, daemon=True)
    th.start()
    th.join(HANG)
    if th.is_alive():
        pytest.fail(f"{getattr(fn, '__name__', fn)} never returned: the harness hangs")
    if "error" in box:
        raise box["error"]
    return box["value"]


def search(ws: Path, pattern: str, path: str = ".", **ctx: Any) -> str:
    tool = Search()
    context = ToolContext(workspace=ws, state=ToolState(), **ctx)
    return returns(lambda: tool.run(tool.Args(pattern=pattern, path=path), context)).output


# --- search: the model's regex ------------------------------------------------------------------


def test_a_catastrophic_regex_returns_instead_of_holding_the_interpreter(tmp_path: Path) -> None:
    # In a child process: the old engine held the GIL, so a thread's join could never time out.
    (tmp_path / "a.txt").write_text("a" * 35 + "b\n")
    code = textwrap.dedent(
        f"""
        from pathlib import Path
        from cerveau_tui.tools.base import ToolContext, ToolState
        from cerveau_tui.tools.search import Search
        s = Search()
        ctx = ToolContext(workspace=Path({str(tmp_path)!r}), state=ToolState())
        print(s.run(s.Args(pattern="(a+)+$"), ctx).output)
        """
    )
    try:
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, timeout=HANG
        )
    except subprocess.TimeoutExpired:
        pytest.fail("search with (a+)+$ never returned")
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "no matches"


def test_a_backreference_is_a_clear_error_naming_what_is_unsupported(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("aa\n")
    with pytest.raises(ToolError, match=r"backreferences.*lookahead"):
        search(tmp_path, r"(a)\1")


def test_lookaround_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ToolError, match="invalid regular expression.*RE2"):
        search(tmp_path, r"foo(?=bar)")


def test_a_bad_pattern_writes_nothing_to_the_terminal(tmp_path: Path) -> None:
    # RE2 logs parse errors to stderr by default: over the TUI that is garbage on the screen.
    code = (
        "from cerveau_tui.tools.search import compile_pattern\n"
        "try:\n    compile_pattern('(?<=a)b')\nexcept Exception:\n    pass\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=HANG)
    assert out.returncode == 0 and out.stderr == ""


def test_ordinary_patterns_still_match_per_line(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text("def alpha(x):\n    return x\ndef beta():\n")
    assert search(tmp_path, r"^def \w+\(") == "m.py:1: def alpha(x):\nm.py:3: def beta():"


def test_a_cancelled_turn_stops_the_search(tmp_path: Path) -> None:
    for i in range(5):
        (tmp_path / f"f{i}.txt").write_text("needle\n")
    cancel = threading.Event()
    cancel.set()
    out = search(tmp_path, "needle", cancel=cancel)
    assert "needle" not in out.split("[")[0] and "cancelled" in out


def test_the_deadline_stops_a_long_search_and_says_so(tmp_path: Path) -> None:
    for i in range(5):
        (tmp_path / f"f{i}.txt").write_text("nothing\n")
    ticks = iter(range(0, 10_000, 10))  # each look at the clock is ten seconds later
    tool = Search()
    tool.clock = lambda: float(next(ticks))  # type: ignore[method-assign]
    ctx = ToolContext(workspace=tmp_path, state=ToolState())
    out = returns(lambda: tool.run(tool.Args(pattern="needle"), ctx)).output
    assert "stopped after" in out and "not searched" in out


# --- search: what it did not read ----------------------------------------------------------------


def test_a_file_over_the_size_limit_is_named_not_silently_no_matches(tmp_path: Path) -> None:
    (tmp_path / "big.log").write_bytes(b"needle\n" + b"x" * 3_000_000)
    out = search(tmp_path, "needle")
    assert out.startswith("no matches in what was searched")
    assert "larger than 2 MB: big.log" in out


def test_binary_and_fifo_files_are_named_with_their_reason(tmp_path: Path) -> None:
    (tmp_path / "b.bin").write_bytes(b"needle\x00\x01")
    os.mkfifo(tmp_path / "pipe")
    (tmp_path / "ok.txt").write_text("needle\n")
    out = search(tmp_path, "needle")
    assert out.splitlines()[0] == "ok.txt:1: needle"
    assert "binary: b.bin" in out and "a named pipe (FIFO): pipe" in out


def test_a_fifo_named_directly_is_named_not_read(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    assert "a named pipe (FIFO): pipe" in search(tmp_path, "x", path="pipe")


def test_many_skipped_files_are_counted_with_a_few_names(tmp_path: Path) -> None:
    for i in range(10):
        (tmp_path / f"b{i}.bin").write_bytes(b"\x00")
    out = search(tmp_path, "x")
    assert "[not searched (10 files): binary: b0.bin, b1.bin, b2.bin and 7 more]" in out


def test_a_tree_deeper_than_the_walk_goes_is_named_not_a_crash(tmp_path: Path) -> None:
    # Built with dir fds: the path is longer than PATH_MAX, as a shell loop of `cd a; mkdir a` makes.
    fd = os.open(tmp_path, os.O_RDONLY | os.O_DIRECTORY)
    for _ in range(MAX_DEPTH + 900):
        os.mkdir("a", dir_fd=fd)
        sub = os.open("a", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = sub
    os.close(fd)
    (tmp_path / "top.txt").write_text("needle\n")
    out = search(tmp_path, "needle")
    assert out.splitlines()[0] == "top.txt:1: needle"
    assert f"deeper than {MAX_DEPTH} folders" in out
    assert [p.name for p in returns(lambda: list(walk_files(tmp_path, tmp_path)))] == ["top.txt"]


def test_a_file_name_that_is_not_utf8_does_not_break_the_answer(tmp_path: Path) -> None:
    os.close(os.open(os.fsencode(tmp_path) + b"/bad\xff.txt", os.O_CREAT | os.O_WRONLY))
    with open(os.fsencode(tmp_path) + b"/bad\xff.txt", "w") as f:
        f.write("needle\n")
    out = search(tmp_path, "needle")
    out.encode("utf-8")  # what the model is sent must encode
    assert ".txt:1: needle" in out
