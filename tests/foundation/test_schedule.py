from pathlib import Path

from cerveau_tui.loop.schedule import ToolExecution, schedule
from cerveau_tui.tools.base import Declared
from cerveau_tui.tools.bash import Bash

WS = Path("/ws")


def ex(i, name, reads=(), writes=(), error=None):
    return ToolExecution(
        i,
        f"c{i}",
        name,
        {},
        Declared(reads=[WS / r for r in reads], writes=[WS / w for w in writes]),
        error,
        tool=Bash() if name == "bash" else None,
    )


def never(_):
    return False


def names(batches):
    return [[e.index for e in b] for b in batches]


def test_reads_run_together():
    b = schedule(
        [ex(0, "read_file", ["a"]), ex(1, "search", ["."]), ex(2, "read_file", ["b"])], 4, never
    )
    assert names(b) == [[0, 1, 2]]


def test_two_writes_to_one_path_run_apart():
    b = schedule([ex(0, "write_file", writes=["a"]), ex(1, "write_file", writes=["a"])], 4, never)
    assert names(b) == [[0], [1]]


def test_writes_to_different_paths_share_a_batch():
    b = schedule([ex(0, "write_file", writes=["a"]), ex(1, "write_file", writes=["b"])], 4, never)
    assert names(b) == [[0, 1]]


def test_read_and_write_of_one_path_run_apart_in_order():
    b = schedule([ex(0, "write_file", writes=["a"]), ex(1, "read_file", ["a"])], 4, never)
    assert names(b) == [[0], [1]]


def test_a_directory_read_conflicts_with_a_write_inside_it():
    b = schedule([ex(0, "search", ["src"]), ex(1, "write_file", writes=["src/x.py"])], 4, never)
    assert names(b) == [[0], [1]]


def test_any_two_bash_calls_run_apart():
    b = schedule([ex(0, "bash"), ex(1, "bash")], 4, never)
    assert names(b) == [[0], [1]]


def test_calls_needing_approval_run_alone():
    calls = [
        ex(0, "read_file", ["a"]),
        ex(1, "write_file", writes=["x"]),
        ex(2, "read_file", ["b"]),
    ]
    b = schedule(calls, 4, lambda e: e.index == 1)
    assert names(b) == [[0], [1], [2]]


def test_declaration_errors_run_alone_in_position():
    calls = [ex(0, "read_file", ["a"]), ex(1, "read_file", error="bad"), ex(2, "read_file", ["b"])]
    assert names(schedule(calls, 4, never)) == [[0], [1], [2]]


def test_max_parallel_caps_a_batch():
    calls = [ex(i, "read_file", [str(i)]) for i in range(5)]
    assert names(schedule(calls, 2, never)) == [[0, 1], [2, 3], [4]]


def test_emission_order_is_kept():
    calls = [
        ex(2, "read_file", ["c"]),
        ex(0, "read_file", ["a"]),
        ex(1, "write_file", writes=["a"]),
    ]
    assert names(schedule(calls, 4, never)) == [[0], [1, 2]]
