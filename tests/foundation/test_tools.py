import os
from pathlib import Path

import pytest

from cerveau_tui.sandbox.none import NoSandbox
from cerveau_tui.tools.base import PathError, ToolContext, ToolError, ToolState, resolve_path
from cerveau_tui.tools.bash import Bash
from cerveau_tui.tools.files import EditFile, ListFiles, ReadFile, WriteFile
from cerveau_tui.tools.search import Search
from cerveau_tui.workspace.io.beneath import atomic_write_beneath


@pytest.fixture
def ctx(tmp_path):
    return ToolContext(workspace=tmp_path, state=ToolState(), runner=NoSandbox(), bash_timeout=10)


def run(tool, ctx, **kw):
    return tool.run(tool.Args(**kw), ctx)


def test_relative_paths_resolve_against_the_workspace(tmp_path):
    assert resolve_path(tmp_path, "a/b.txt") == Path(os.path.realpath(tmp_path)) / "a/b.txt"


def test_dotdot_is_resolved_to_where_it_lands(tmp_path):
    assert resolve_path(tmp_path, "a/../../x") == Path(os.path.realpath(tmp_path.parent)) / "x"


def test_a_symlink_out_resolves_to_its_target(tmp_path):
    outside = tmp_path.parent / (tmp_path.name + "-out")
    outside.mkdir()
    (tmp_path / "link").symlink_to(outside)
    assert resolve_path(tmp_path, "link/f") == Path(os.path.realpath(outside)) / "f"


def test_tilde_is_not_the_persons_home(tmp_path):
    assert resolve_path(tmp_path, "~/x") == Path(os.path.realpath(tmp_path)) / "~/x"


@pytest.mark.parametrize("bad", ["", "   ", "a\x00b"])
def test_empty_or_nul_paths_are_refused(tmp_path, bad):
    with pytest.raises(PathError):
        resolve_path(tmp_path, bad)


def test_atomic_write_replaces_whole_file_and_keeps_mode(tmp_path):
    f = tmp_path / "s.sh"
    f.write_text("old")
    f.chmod(0o755)
    atomic_write_beneath(tmp_path, f.name, "new")
    assert f.read_text() == "new"
    assert f.stat().st_mode & 0o777 == 0o755
    assert [p.name for p in tmp_path.iterdir()] == ["s.sh"]


def test_atomic_write_failure_keeps_the_old_content(tmp_path, monkeypatch):
    f = tmp_path / "a.txt"
    f.write_text("precious")

    def boom(*a, **k):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError):
        atomic_write_beneath(tmp_path, f.name, "x" * 100)
    assert f.read_text() == "precious"
    assert [p.name for p in tmp_path.iterdir()] == ["a.txt"]


def test_write_file_creates_dirs_records_the_write_and_returns_a_diff(ctx, tmp_path):
    r = run(WriteFile(), ctx, path="src/a.py", content="x = 1\n")
    assert r.ok and (tmp_path / "src/a.py").read_text() == "x = 1\n"
    assert "+x = 1" in r.diff
    assert ctx.state.write_seq == 1


def test_edit_file_replaces_exactly_once(ctx, tmp_path):
    (tmp_path / "a.py").write_text("a = 1\nb = 2\n")
    r = run(EditFile(), ctx, path="a.py", old="b = 2", new="b = 3")
    assert r.ok and (tmp_path / "a.py").read_text() == "a = 1\nb = 3\n"
    assert "-b = 2" in r.diff and "+b = 3" in r.diff


def test_edit_file_says_when_old_text_is_absent(ctx, tmp_path):
    (tmp_path / "a.py").write_text("value = 1\n")
    with pytest.raises(ToolError, match="not found.*Closest line: 'value = 1'"):
        run(EditFile(), ctx, path="a.py", old="valeu = 1", new="v = 2")


def test_edit_file_says_when_old_text_is_ambiguous(ctx, tmp_path):
    (tmp_path / "a.py").write_text("x\nx\n")
    with pytest.raises(ToolError, match="occurs 2 times"):
        run(EditFile(), ctx, path="a.py", old="x", new="y")
    assert (tmp_path / "a.py").read_text() == "x\nx\n"


def test_read_file_refuses_binary_and_directories(ctx, tmp_path):
    (tmp_path / "b.bin").write_bytes(b"\x00\x01\x02")
    (tmp_path / "d").mkdir()
    with pytest.raises(ToolError, match="binary"):
        run(ReadFile(), ctx, path="b.bin")
    with pytest.raises(ToolError, match="directory"):
        run(ReadFile(), ctx, path="d")


def test_list_and_search_respect_gitignore(ctx, tmp_path):
    (tmp_path / ".gitignore").write_text("build/\n*.log\n")
    (tmp_path / "build").mkdir()
    (tmp_path / "build/out.py").write_text("needle\n")
    (tmp_path / "x.log").write_text("needle\n")
    (tmp_path / "keep.py").write_text("needle\n")
    listed = run(ListFiles(), ctx).output.splitlines()
    assert "keep.py" in listed and "x.log" not in listed and "build/out.py" not in listed
    assert run(Search(), ctx, pattern="needle").output == "keep.py:1: needle"


def test_search_reports_a_bad_regex_clearly(ctx):
    with pytest.raises(ToolError, match="invalid regular expression"):
        run(Search(), ctx, pattern="(")


def test_bash_reports_exit_code_and_caps_output(ctx):
    ctx.output_cap = 1000
    r = run(Bash(), ctx, command="yes abcdef | head -c 100000; exit 3")
    assert not r.ok and r.exit_code == 3
    assert r.meta["truncated"] and len(r.output) < 1400
    assert r.output.endswith("[exit code 3]")


def test_bash_timeout_kills_the_process_group(ctx, tmp_path):
    r = run(Bash(), ctx, command="sleep 30 & sleep 30", timeout=1)
    assert r.exit_code is None and "timed out" in r.output


def test_background_processes_are_killed_by_kill_background(ctx, tmp_path):
    r = run(Bash(), ctx, command="(sleep 60 & echo $! > pid) ; true")
    assert r.ok
    pid = int((tmp_path / "pid").read_text())
    os.kill(pid, 0)  # alive
    ctx.runner.kill_background()
    import time

    for _ in range(50):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    else:
        pytest.fail("background process survived kill_background")


def test_failures_are_shaped_by_retry_class():
    from cerveau_tui.loop.dispatch import shape_failure
    from cerveau_tui.tools.base import RetryClass, ToolResult

    assert shape_failure(
        ToolResult(False, "bad path", error_class=RetryClass.ARGS), True
    ).startswith("Error (fix the call)")
    assert "retried once" in shape_failure(
        ToolResult(False, "busy", error_class=RetryClass.TRANSIENT), True
    )
    cmd = ToolResult(False, "boom\n[exit code 2]", error_class=RetryClass.ARGS, exit_code=2)
    assert shape_failure(cmd, False) == cmd.output  # a command's failure is its own output


# --- issue 10: a link swapped in after the verdict is never followed by run() -------------------


@pytest.fixture
def outside(tmp_path):
    out = tmp_path.parent / (tmp_path.name + "-outside")
    out.mkdir()
    (out / "x").write_text("outside's own\n")
    (out / "a.py").write_text("a = 1\n")
    return out


def _listing(d):
    import hashlib

    return {
        str(p.relative_to(d)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(d.rglob("*"))
        if p.is_file()
    }


def _declared_then_swapped(tool, ctx, tmp_path, outside, **kw):
    """declare() while `d` is a real directory (or absent), then `d` replaced by a link out, as a
    command in the same reply would do, then run()."""
    args = tool.Args(**kw)
    declared = tool.declare(args, ctx)
    assert all(
        str(p).startswith(os.path.realpath(tmp_path)) for p in declared.writes + declared.reads
    )
    import shutil

    if (tmp_path / "d").exists():
        shutil.rmtree(tmp_path / "d")
    (tmp_path / "d").symlink_to(outside)
    return tool.run(args, ctx)


def test_write_file_through_a_directory_swapped_for_a_link_is_refused(ctx, tmp_path, outside):
    before = _listing(outside)
    with pytest.raises(PathError, match="symbolic link on the way"):
        _declared_then_swapped(
            WriteFile(), ctx, tmp_path, outside, path="d/x", content="overwritten"
        )
    assert _listing(outside) == before


def test_write_file_of_a_new_file_through_a_link_planted_after_the_verdict_is_refused(
    ctx, tmp_path, outside
):
    before = _listing(outside)
    with pytest.raises(PathError):
        _declared_then_swapped(
            WriteFile(), ctx, tmp_path, outside, path="d/new.txt", content="planted"
        )
    assert _listing(outside) == before and not (outside / "new.txt").exists()


def test_edit_file_through_a_directory_swapped_for_a_link_is_refused(ctx, tmp_path, outside):
    (tmp_path / "d").mkdir()
    (tmp_path / "d/a.py").write_text("a = 1\n")
    before = _listing(outside)
    with pytest.raises(PathError):
        _declared_then_swapped(
            EditFile(), ctx, tmp_path, outside, path="d/a.py", old="a = 1", new="a = 2"
        )
    assert _listing(outside) == before


def test_read_file_of_a_file_swapped_for_a_link_out_is_refused(ctx, tmp_path, outside):
    (tmp_path / "notes.txt").write_text("mine")
    args = ReadFile.Args(path="notes.txt")
    ReadFile().declare(args, ctx)
    (tmp_path / "notes.txt").unlink()
    (tmp_path / "notes.txt").symlink_to(outside / "x")
    with pytest.raises(PathError, match="leads out of the workspace"):
        ReadFile().run(args, ctx)


def test_a_link_pointing_inside_the_workspace_still_works(ctx, tmp_path):
    (tmp_path / "doc").mkdir()
    (tmp_path / "docs").symlink_to("doc")
    assert run(WriteFile(), ctx, path="docs/x.md", content="hi\n").ok
    assert (tmp_path / "doc/x.md").read_text() == "hi\n"
    assert run(ReadFile(), ctx, path="docs/x.md").output == "hi\n"


def test_an_approved_absolute_path_outside_is_written(ctx, outside):
    r = run(WriteFile(), ctx, path=str(outside / "new.txt"), content="asked and approved\n")
    assert r.ok and (outside / "new.txt").read_text() == "asked and approved\n"


def test_search_does_not_read_a_linked_file_pointing_out(ctx, tmp_path, outside):
    (outside / "x").write_text("needle outside\n")
    (tmp_path / "leak.txt").symlink_to(outside / "x")
    (tmp_path / "keep.py").write_text("needle\n")
    assert run(Search(), ctx, pattern="needle").output == "keep.py:1: needle"


def test_list_files_does_not_follow_a_linked_directory(ctx, tmp_path, outside):
    (tmp_path / "d").symlink_to(outside)
    (tmp_path / "keep.py").write_text("k\n")
    assert run(ListFiles(), ctx).output.splitlines() == ["keep.py"]


def test_torn_temp_files_are_never_listed(ctx, tmp_path):
    from cerveau_tui.workspace.io.beneath import TEMP_PREFIX

    (tmp_path / f"{TEMP_PREFIX}abc-keep.py").write_text("torn")
    (tmp_path / "keep.py").write_text("k\n")
    assert run(ListFiles(), ctx).output.splitlines() == ["keep.py"]


STATE_PATHS = [
    ".git/commondir",
    ".git/HEAD",
    "sub/.git/config",
    ".GIT/hooks/x",
    ".cerveau/config.toml",
    "wt/.git",
]


@pytest.mark.parametrize("rel", STATE_PATHS)
def test_write_file_refuses_gits_and_the_harness_state(ctx, tmp_path, rel):
    with pytest.raises(PathError, match="own state; the file tools do not write there"):
        run(WriteFile(), ctx, path=rel, content="planted\n")
    assert not (tmp_path / rel).exists()


@pytest.mark.parametrize("rel", STATE_PATHS)
def test_edit_file_refuses_gits_and_the_harness_state(ctx, tmp_path, rel):
    (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / rel).write_text("original\n")
    with pytest.raises(PathError, match="own state"):
        run(EditFile(), ctx, path=rel, old="original", new="planted")
    assert (tmp_path / rel).read_text() == "original\n"


def test_a_link_into_git_does_not_get_a_write_in(ctx, tmp_path):
    (tmp_path / ".git/hooks").mkdir(parents=True)
    (tmp_path / "hooks").symlink_to(".git/hooks")
    with pytest.raises(PathError, match="git's own state"):
        run(WriteFile(), ctx, path="hooks/pre-commit", content="#!/bin/sh\n")
    assert not (tmp_path / ".git/hooks/pre-commit").exists()


def test_reading_the_harness_state_is_allowed(ctx, tmp_path):
    (tmp_path / ".cerveau").mkdir()
    (tmp_path / ".cerveau/config.toml").write_text("x = 1\n")
    assert run(ReadFile(), ctx, path=".cerveau/config.toml").output == "x = 1\n"


@pytest.mark.parametrize("name", ["test_*.py", "a?.py", "t[12].py"])
def test_write_file_refuses_a_name_with_a_glob_character_and_names_it(ctx, tmp_path, name):
    # Issue 33: `write_file` accepted `test_*.py` and created a file literally named so.
    with pytest.raises(ToolError) as refused:
        run(WriteFile(), ctx, path=f"tests/{name}", content="x = 1\n")
    char = next(c for c in "*?[" if c in name)
    assert f"glob character `{char}`" in str(refused.value)
    assert not (tmp_path / "tests").exists()
