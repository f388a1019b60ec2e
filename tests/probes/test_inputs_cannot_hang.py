"""No input can hang or crash the harness (issue 20): each bad input is built on disk, the harness's
own code is called on it, and the call must come back with a clear message.

A hang is detected, not timed: the call runs in a thread (or, when the old failure held the
interpreter lock, in a child process) and a join that runs out means it never returned. The
bounds are generous; nothing here asserts how fast anything is.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest

from cerveau_tui.tools.base import ToolContext, ToolError, ToolState
from cerveau_tui.tools.search import Search

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


def test_a_large_pattern_over_a_long_line_returns(tmp_path: Path) -> None:
    # RE2's worst case was program size x line length in one uninterruptible call of the
    # harness's: (.*a){90} took 13 s over one 2 MB line. The model's pattern now runs in rg, in a
    # process of its own under the search's deadline: the harness's lock is never held by it.
    (tmp_path / "long.txt").write_text("a" * 1_500_000 + "\n")
    (tmp_path / "short.txt").write_text("a" * 100 + "\n")
    out = search(tmp_path, "(.*a){90}")
    assert [line.split(":")[0] for line in out.splitlines()] == ["long.txt", "short.txt"]


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
    ticks = iter(range(0, 10_000, 20))  # each look at the clock is twenty seconds later
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


def _deep_tree(root: Path, depth: int) -> None:
    """`a/a/a/...` `depth` deep, built with dir fds: longer than PATH_MAX, as a shell loop of
    `cd a; mkdir a` makes it."""
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    for _ in range(depth):
        os.mkdir("a", dir_fd=fd)
        sub = os.open("a", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = sub
    os.close(fd)


def _remove_deep_tree(root: Path) -> None:
    # shutil.rmtree (and so pytest's tmp_path cleanup) recurses, and dies on this tree too.
    fds = [os.open(root, os.O_RDONLY | os.O_DIRECTORY)]
    while True:
        try:
            fds.append(os.open("a", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fds[-1]))
        except FileNotFoundError:
            break
    os.close(fds.pop())
    while fds:
        fd = fds.pop()
        os.rmdir("a", dir_fd=fd)
        os.close(fd)


def test_a_tree_deeper_than_the_old_walk_went_is_searched_not_a_crash() -> None:
    # Deeper than Python's recursion limit (the old walk's RecursionError). Not under tmp_path:
    # pytest's own cleanup recurses too and would die on it, in whichever session ran next.
    root = Path(tempfile.mkdtemp(prefix="cerveau-deep-tree-"))
    try:
        _deep_tree(root, 1100)
        (root / "top.txt").write_text("needle\n")
        out = search(root, "needle")
    finally:
        _remove_deep_tree(root)
        shutil.rmtree(root)
    assert out.splitlines()[0] == "top.txt:1: needle"


def test_a_file_name_that_is_not_utf8_does_not_break_the_answer(tmp_path: Path) -> None:
    os.close(os.open(os.fsencode(tmp_path) + b"/bad\xff.txt", os.O_CREAT | os.O_WRONLY))
    with open(os.fsencode(tmp_path) + b"/bad\xff.txt", "w") as f:
        f.write("needle\n")
    out = search(tmp_path, "needle")
    out.encode("utf-8")  # what the model is sent must encode
    assert ".txt:1: needle" in out


# --- config and state files that are not regular files -------------------------------------------


def _plant(path: Path, kind: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "directory":
        path.mkdir()
    elif kind == "socket":
        import socket

        s = socket.socket(socket.AF_UNIX)
        s.bind(str(path))
        s.close()


@pytest.mark.parametrize(
    "kind,said",
    [("fifo", "a named pipe"), ("directory", "a directory"), ("socket", "a socket")],
)
def test_a_workspace_config_that_is_not_a_file_is_a_clear_error(
    tmp_path: Path, kind: str, said: str
) -> None:
    from cerveau_tui.config import ConfigError, load_settings

    ws = tmp_path / "ws"
    _plant(ws / ".cerveau" / "config.toml", kind)
    with pytest.raises(ConfigError, match=f"config.toml is {said}.*, not a regular file"):
        returns(lambda: load_settings(ws, environ={}, user_config=tmp_path / "none.toml"))


def test_the_cli_exits_2_with_one_line_on_a_fifo_config(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    _plant(ws / ".cerveau" / "config.toml", "fifo")
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp_path / "home"),
        "CERVEAU_CONFIG": str(tmp_path / "home" / "config.toml"),
    }
    try:
        out = subprocess.run(
            [sys.executable, "-m", "cerveau_tui", "run", "hi", "--json"],
            cwd=ws,
            env=env,
            capture_output=True,
            text=True,
            timeout=HANG,
        )
    except subprocess.TimeoutExpired:
        pytest.fail("start-up hung on a FIFO .cerveau/config.toml")
    assert out.returncode == 2
    assert out.stderr.strip().splitlines() == [
        f"cerveau: {ws / '.cerveau' / 'config.toml'} is a named pipe (FIFO), not a regular file; "
        "not read"
    ]


@pytest.mark.parametrize("kind", ["fifo", "directory"])
def test_a_user_config_that_is_not_a_file_is_a_clear_error(tmp_path: Path, kind: str) -> None:
    from cerveau_tui.config import ConfigError, _read_toml

    ucp = tmp_path / "config.toml"
    _plant(ucp, kind)
    with pytest.raises(ConfigError, match="not a regular file"):
        returns(lambda: _read_toml(ucp))


@pytest.mark.parametrize("kind", ["fifo", "directory"])
def test_a_trust_store_that_is_not_a_file_trusts_nothing_and_returns(
    tmp_path: Path, kind: str
) -> None:
    from cerveau_tui import trust

    store = tmp_path / "trusted-workspaces.json"
    _plant(store, kind)
    assert returns(lambda: trust.is_trusted(tmp_path, "0" * 64, store)) is False


def test_a_prompt_history_that_is_a_fifo_is_a_problem_not_a_hang(tmp_path: Path) -> None:
    from cerveau_tui.app.widgets.prompt import HISTORY_REL, PromptHistory

    _plant(tmp_path / HISTORY_REL, "fifo")
    history = returns(lambda: PromptHistory.load(tmp_path))
    assert history.entries == [] and "not read" in history.problem


# --- a gated turn's snapshots over a workspace holding special files ----------------------------


def _special_workspace(ws: Path) -> None:
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "a.py").write_text("x = 1\n")
    _plant(ws / "pipe", "fifo")
    _plant(ws / "src" / "sock", "socket")


def test_the_near_green_listing_holds_only_regular_files(tmp_path: Path) -> None:
    from cerveau_tui.done.near_green import workspace_files

    _special_workspace(tmp_path)
    assert returns(lambda: workspace_files(tmp_path)) == ["src/a.py"]


def test_a_snapshot_leaves_a_fifo_out_instead_of_raising(tmp_path: Path) -> None:
    from cerveau_tui.workspace.restore.store import BlobStore

    _special_workspace(tmp_path)
    snap = returns(lambda: BlobStore(tmp_path).snapshot_files(["pipe", "src/a.py"]))
    assert list(snap) == ["src/a.py"]
    assert (tmp_path / "pipe").is_fifo()  # and a restore of it would not delete the FIFO


def test_the_green_checkpoint_is_taken_in_a_workspace_with_a_fifo(tmp_path: Path) -> None:
    # The polish round's capture() read the FIFO and ended the gated turn as "internal error".
    from cerveau_tui.done.near_green import NearGreen
    from cerveau_tui.workspace.restore.store import BlobStore

    _special_workspace(tmp_path)
    near = NearGreen(BlobStore(tmp_path), tmp_path)
    returns(near.capture)
    assert near.snapshot is not None and set(near.snapshot) == {"src/a.py"}


def test_the_near_green_listing_survives_a_tree_deeper_than_the_recursion_limit() -> None:
    from cerveau_tui.done.near_green import workspace_files

    root = Path(tempfile.mkdtemp(prefix="cerveau-deep-tree-"))
    try:
        _deep_tree(root, 1100)
        (root / "top.py").write_text("x\n")
        listed = returns(lambda: workspace_files(root))
    finally:
        _remove_deep_tree(root)
        shutil.rmtree(root)
    assert listed == ["top.py"]


# --- SQLite state: a cloned memory.sqlite is attacker content ----------------------------------

ENDLESS_VIEW = """
CREATE VIEW notes AS
WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c)
SELECT x AS id, 'fact' AS kind, 'planted' AS text, 'k' || x AS key, 1 AS seen,
       0.0 AS created, 0.0 AS updated FROM c;
"""


def _planted_db(ws: Path, sql: str | None = None, raw: bytes | None = None) -> Path:
    import sqlite3

    db = ws / ".cerveau" / "memory.sqlite"
    db.parent.mkdir(parents=True, exist_ok=True)
    if raw is not None:
        db.write_bytes(raw)
    else:
        conn = sqlite3.connect(db)
        conn.executescript(sql or "")
        conn.commit()
        conn.close()
    return db


def _host_schema(db: Path) -> list[tuple[str, str]]:
    import sqlite3

    conn = sqlite3.connect(db)
    try:
        return sorted(conn.execute("SELECT type, name FROM sqlite_master").fetchall())
    finally:
        conn.close()


def _set_aside_files(ws: Path) -> list[str]:
    return sorted(p.name for p in (ws / ".cerveau").iterdir() if ".corrupt-" in p.name)


def in_child(code: str) -> str:
    """Run `code` in a child interpreter; its stdout, or a failure when it never ends. For hangs
    inside SQLite: a thread stuck in a query keeps the connection's mutex, and the test's own
    teardown then blocks on it instead of reporting."""
    try:
        out = subprocess.run(
            [sys.executable, "-c", textwrap.dedent(code)],
            capture_output=True,
            text=True,
            timeout=HANG,
        )
    except subprocess.TimeoutExpired:
        pytest.fail("the call never returned: the harness hangs")
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_a_memory_db_with_an_endless_view_is_set_aside_not_read(tmp_path: Path) -> None:
    _planted_db(tmp_path, ENDLESS_VIEW)
    said = in_child(
        f"""
        from pathlib import Path
        from cerveau_tui.memory.store import MemoryStore
        store = MemoryStore(Path({str(tmp_path)!r}), clock=lambda: 1_800_000_000.0)
        assert store.notes() == []
        print("\\n".join(str(m) for m in store.moved_aside))
        store.close()
        """
    ).splitlines()
    assert len(said) == 1 and "view (notes)" in said[0] and "moved it aside" in said[0]
    assert _set_aside_files(tmp_path) == ["memory.sqlite.corrupt-20270115T080000Z"]
    assert ("view", "notes") in _host_schema(tmp_path / ".cerveau" / _set_aside_files(tmp_path)[0])
    assert ("table", "notes") in _host_schema(tmp_path / ".cerveau" / "memory.sqlite")


def test_a_corrupted_memory_db_is_set_aside_and_a_fresh_one_works(tmp_path: Path) -> None:
    from cerveau_tui.memory.store import MemoryStore

    _planted_db(tmp_path, raw=b"SQLite format 3\x00" + os.urandom(8192))
    store = returns(lambda: MemoryStore(tmp_path))
    try:
        assert store.add("fact", "the tests live in tests/probes") is True
        assert [n.text for n in store.notes()] == ["the tests live in tests/probes"]
        said = [str(m) for m in store.moved_aside]
    finally:
        store.close()
    assert len(said) == 1 and "could not be used" in said[0]
    assert len(_set_aside_files(tmp_path)) == 1


def test_a_trigger_in_a_cloned_lessons_db_is_set_aside(tmp_path: Path) -> None:
    from cerveau_tui.memory.store import LessonStore

    _planted_db(
        tmp_path,
        "CREATE TABLE lessons (id INTEGER PRIMARY KEY, kind TEXT, trigger TEXT, fix TEXT,"
        " stack TEXT, words TEXT, key TEXT UNIQUE, seen INTEGER, created REAL, updated REAL);"
        "CREATE TABLE log (x); CREATE TRIGGER spy AFTER INSERT ON lessons"
        " BEGIN INSERT INTO log VALUES (new.fix); END;",
    )
    store = returns(lambda: LessonStore(tmp_path))
    try:
        said = [str(m) for m in store.moved_aside]
        assert store.lessons() == []
    finally:
        store.close()
    assert len(said) == 1 and "trigger (spy)" in said[0]
    assert ("trigger", "spy") not in _host_schema(tmp_path / ".cerveau" / "memory.sqlite")


def test_a_table_without_the_stores_columns_is_set_aside(tmp_path: Path) -> None:
    from cerveau_tui.memory.store import MemoryStore

    _planted_db(tmp_path, "CREATE TABLE notes (only TEXT);")
    store = returns(lambda: MemoryStore(tmp_path))
    try:
        assert returns(lambda: store.notes()) == []
        assert len(store.moved_aside) == 1
    finally:
        store.close()


def test_a_query_past_its_step_budget_is_aborted_and_the_file_set_aside(tmp_path: Path) -> None:
    from cerveau_tui.memory.db import StateDB

    schema = "CREATE TABLE IF NOT EXISTS t (x INTEGER);"
    _planted_db(
        tmp_path,
        schema + "INSERT INTO t SELECT value FROM (WITH RECURSIVE c(value) AS"
        " (SELECT 1 UNION ALL SELECT value + 1 FROM c LIMIT 20000) SELECT value FROM c);",
    )
    fd = os.open(tmp_path / ".cerveau", os.O_RDONLY | os.O_DIRECTORY)
    try:
        db = returns(
            # No seal to check (key None): this probe is about the step budget, and a planted
            # file is refused as unsealed before any query otherwise (test_state_seal.py).
            lambda: StateDB(
                fd, "memory.sqlite", ".cerveau/memory.sqlite", schema, budget=100, key=lambda: None
            )
        )
        assert db.set_aside == []  # opening fits the budget
        query = "SELECT a.x FROM t a, t b WHERE a.x * b.x = -1"  # 400 million row pairs
        assert (
            returns(lambda: db.run(lambda c: c.execute(query).fetchall(), "aborted")) == "aborted"
        )
        assert [a.why for a in db.take_set_aside()] == ["a query ran past its bound"]
        assert db.run(lambda c: c.execute("SELECT count(*) FROM t").fetchone()[0], -1) == 0
        db.close()
    finally:
        os.close(fd)
    assert len(_set_aside_files(tmp_path)) == 1


def test_a_fifo_where_the_memory_db_goes_is_moved_aside(tmp_path: Path) -> None:
    from cerveau_tui.memory.store import MemoryStore

    _plant(tmp_path / ".cerveau" / "memory.sqlite", "fifo")
    store = returns(lambda: MemoryStore(tmp_path))
    try:
        assert store.add("fact", "a note about src/main.py here") is True
    finally:
        store.close()
    assert (tmp_path / ".cerveau" / "memory.sqlite").is_file()


def test_a_headless_turn_with_turn_close_and_an_endless_view_completes(tmp_path: Path) -> None:
    from cerveau_tui.testing.cli import run_cli
    from cerveau_tui.testing.scripted_server import ScriptedServer

    _planted_db(tmp_path, ENDLESS_VIEW)
    with ScriptedServer({"responses": [{"content": "hello"}]}) as srv:
        code, events, err = run_cli(
            tmp_path, srv.url, "say hi", env={"CERVEAU_TURN_CLOSE": "true"}, timeout=HANG
        )
    ended = [e["payload"] for e in events if e["type"] == "turn_ended"]
    assert code == 0, err
    assert ended and ended[-1]["reason"] == "completed"
    notices = [e["payload"]["text"] for e in events if e["type"] == "notice"]
    assert sum("memory.sqlite could not be used" in n for n in notices) == 1


# --- walks over the workspace that the harness makes by itself ---------------------------------


def test_a_fifo_named_gitignore_does_not_block_the_fingerprint_scan(tmp_path: Path) -> None:
    from cerveau_tui.workspace.fingerprint.fingerprinter import Fingerprinter

    (tmp_path / "a.py").write_text("x\n")
    _plant(tmp_path / "sub" / ".gitignore", "fifo")
    (tmp_path / "sub" / "b.py").write_text("y\n")
    returns(Fingerprinter(tmp_path).scan)  # once blocked in open() forever, after every command


def test_a_gitignore_linked_to_a_device_is_not_read(tmp_path: Path) -> None:
    from cerveau_tui.workspace.fingerprint.fingerprinter import Fingerprinter

    (tmp_path / ".gitignore").symlink_to("/dev/zero")  # read without end, into memory
    (tmp_path / "a.py").write_text("x\n")
    returns(Fingerprinter(tmp_path).scan)


def test_a_session_starts_in_a_tree_deeper_than_the_recursion_limit() -> None:
    # The start-up sweep of torn temp files used os.fwalk (recursive): "could not start a session:
    # maximum recursion depth exceeded". Under /var/tmp: the sandbox's /tmp is private.
    from cerveau_tui.testing.cli import run_cli
    from cerveau_tui.testing.scripted_server import ScriptedServer

    root = Path(tempfile.mkdtemp(prefix="cerveau-deep-tree-", dir="/var/tmp"))
    try:
        _deep_tree(root, 1100)
        script = {
            "responses": [
                {"tool_calls": [{"name": "bash", "arguments": {"command": "true"}}]},
                {"content": "done"},
            ]
        }
        with ScriptedServer(script) as srv:
            code, events, err = run_cli(root, srv.url, "look", timeout=HANG)
    finally:
        _remove_deep_tree(root)
        shutil.rmtree(root)
    assert code == 0, err
    assert [e["payload"]["reason"] for e in events if e["type"] == "turn_ended"] == ["completed"]


def test_the_torn_temp_sweep_is_bounded_in_depth_and_still_sweeps(tmp_path: Path) -> None:
    from cerveau_tui.workspace.io.beneath import TEMP_PREFIX, sweep_torn_temps

    (tmp_path / "d").mkdir()
    torn = tmp_path / "d" / f"{TEMP_PREFIX}abc-x.py"
    torn.write_text("half")
    os.utime(torn, (0, 0))
    assert returns(lambda: sweep_torn_temps(tmp_path)) == [f"d/{TEMP_PREFIX}abc-x.py"]
    assert not torn.exists()


def test_a_package_json_swapped_for_a_fifo_reads_as_empty(tmp_path: Path) -> None:
    from cerveau_tui.adapters.node import _package_json

    _plant(tmp_path / "package.json", "fifo")
    assert returns(lambda: _package_json(tmp_path)) == {}


def test_a_gated_turn_in_a_workspace_with_a_fifo_ends_completed_not_internal() -> None:
    # The polish round's green checkpoint read the FIFO: "internal error: NotRegularFile".
    from cerveau_tui.testing.cli import run_cli
    from cerveau_tui.testing.scripted_server import ScriptedServer

    ws = Path(tempfile.mkdtemp(prefix="cerveau-fifo-gate-", dir="/var/tmp"))
    try:
        (ws / "a.py").write_text("x = 1\n")
        os.mkfifo(ws / "pipe")
        _plant(ws / ".cerveau" / "verify", "fifo")  # a leftover scratch path, as a FIFO
        write = {"name": "write_file", "arguments": {"path": "b.py", "content": "y = 2\n"}}
        script = {"responses": [{"tool_calls": [write]}, *[{"content": "done"}] * 3]}
        with ScriptedServer(script) as srv:
            code, events, err = run_cli(ws, srv.url, "add b.py", "--gate", "true", timeout=HANG)
        assert (ws / "b.py").read_text() == "y = 2\n" and (ws / "pipe").is_fifo()
    finally:
        shutil.rmtree(ws)
    assert code == 0, err
    assert [e for e in events if e["type"] == "error"] == []
    assert [e["payload"]["reason"] for e in events if e["type"] == "turn_ended"] == ["completed"]


def test_a_session_log_that_is_a_fifo_is_refused_not_waited_on(tmp_path: Path) -> None:
    from cerveau_tui.plan.persist import SessionNotFound, open_log

    _plant(tmp_path / ".cerveau" / "sessions" / "20261201-abcdef.jsonl", "fifo")
    with pytest.raises(SessionNotFound, match="is a named pipe"):
        returns(lambda: open_log(tmp_path, "20261201-abcdef"))
