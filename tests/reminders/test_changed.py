"""Changed on disk: a file the model read and something other than its own file tools changed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cerveau_tui.reminders.changed import ChangedOnDiskHook
from cerveau_tui.tools.base import ToolContext
from cerveau_tui.tools.files import EditFile, ReadFile, WriteFile
from cerveau_tui.workspace.fingerprint.fingerprinter import Fingerprinter


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


def read(ws: Path, ctx: Any, path: str) -> None:
    tools = ToolContext(workspace=ws, state=ctx.state)
    assert ReadFile().run(ReadFile.Args(path=path), tools).ok


def test_a_file_the_person_edits_after_the_read_is_named(ws: Path, turn: Any) -> None:
    (ws / "notes.txt").write_text("v1\n")
    hook = ChangedOnDiskHook(Fingerprinter(ws))
    read(ws, turn.ctx, "notes.txt")
    assert hook.reminders(turn.ctx) == []
    (ws / "notes.txt").write_text("v2 by the person\n")
    assert hook.reminders(turn.ctx) == [
        "notes.txt changed on disk since you read it; read it again before editing it."
    ]


def test_one_change_is_named_once_and_a_second_change_again(ws: Path, turn: Any) -> None:
    (ws / "notes.txt").write_text("v1\n")
    hook = ChangedOnDiskHook(Fingerprinter(ws))
    read(ws, turn.ctx, "notes.txt")
    (ws / "notes.txt").write_text("v2\n")
    assert len(hook.reminders(turn.ctx)) == 1
    assert hook.reminders(turn.ctx) == []
    (ws / "notes.txt").write_text("v3, longer\n")
    assert len(hook.reminders(turn.ctx)) == 1


def test_reading_it_again_clears_it(ws: Path, turn: Any) -> None:
    (ws / "notes.txt").write_text("v1\n")
    hook = ChangedOnDiskHook(Fingerprinter(ws))
    read(ws, turn.ctx, "notes.txt")
    (ws / "notes.txt").write_text("v2\n")
    read(ws, turn.ctx, "notes.txt")
    assert hook.reminders(turn.ctx) == []


def test_a_deleted_file_is_named(ws: Path, turn: Any) -> None:
    (ws / "notes.txt").write_text("v1\n")
    hook = ChangedOnDiskHook(Fingerprinter(ws))
    read(ws, turn.ctx, "sub/../notes.txt")
    (ws / "notes.txt").unlink()
    assert hook.reminders(turn.ctx) == ["notes.txt was deleted since you read it."]


def test_the_models_own_write_and_edit_are_not_news(ws: Path, turn: Any) -> None:
    (ws / "a.txt").write_text("alpha\n")
    (ws / "b.txt").write_text("beta\n")
    hook = ChangedOnDiskHook(Fingerprinter(ws))
    tools = ToolContext(workspace=ws, state=turn.ctx.state)
    read(ws, turn.ctx, "a.txt")
    read(ws, turn.ctx, "b.txt")
    WriteFile().run(WriteFile.Args(path="a.txt", content="ALPHA\n"), tools)
    EditFile().run(EditFile.Args(path="b.txt", old="beta", new="BETA"), tools)
    assert hook.reminders(turn.ctx) == []


def test_an_edit_over_someone_elses_change_still_names_it(ws: Path, turn: Any) -> None:
    # The edit folds the person's change in without the model ever seeing it.
    (ws / "b.txt").write_text("beta\ngamma\n")
    hook = ChangedOnDiskHook(Fingerprinter(ws))
    read(ws, turn.ctx, "b.txt")
    (ws / "b.txt").write_text("beta\nGAMMA by the person\n")
    tools = ToolContext(workspace=ws, state=turn.ctx.state)
    EditFile().run(EditFile.Args(path="b.txt", old="beta", new="BETA"), tools)
    assert len(hook.reminders(turn.ctx)) == 1


def test_a_file_never_read_is_never_named(ws: Path, turn: Any) -> None:
    (ws / "other.txt").write_text("v1\n")
    hook = ChangedOnDiskHook(Fingerprinter(ws))
    (ws / "other.txt").write_text("v2\n")
    assert hook.reminders(turn.ctx) == []


def test_the_check_walks_nothing_but_the_files_read(ws: Path, turn: Any) -> None:
    for i in range(50):
        (ws / f"f{i}.txt").write_text(f"{i}\n")
    fp = Fingerprinter(ws)
    hook = ChangedOnDiskHook(fp)
    read(ws, turn.ctx, "f1.txt")
    (ws / "f1.txt").write_text("changed\n")
    hook.reminders(turn.ctx)
    assert fp.hash_count == 1  # one file hashed, no scan of the other 49


def test_a_command_and_the_person_change_files_between_rounds_through_the_engine(
    ws: Path, engine_run: Any
) -> None:
    (ws / "notes.txt").write_text("v1\n")
    (ws / "mine.txt").write_text("m1\n")
    run = engine_run(
        [
            call("read_file", path="notes.txt"),
            call("read_file", path="mine.txt"),
            call("bash", command="echo appended >> notes.txt"),
            call("write_file", path="mine.txt", content="m2\n"),
            {"content": "done"},
            call("list_files", path="."),
            {"content": "done again"},
        ],
        ["work", "more"],
        between=lambda i: (ws / "mine.txt").write_text("the person's m3\n") if i == 0 else None,
    )
    # After the bash call: the command's change, sent last in the next request; not the
    # model's own write of mine.txt.
    assert "notes.txt changed on disk since you read it" in run.messages(3)[-1]["content"]
    assert "mine.txt" not in run.messages(3)[-1]["content"]
    # The next turn: the person's edit of the file the model last wrote.
    assert "mine.txt changed on disk since you read it" in run.messages(5)[-1]["content"]
    told = [e.payload for e in run.rec.of("reminder")]
    assert [t["sources"] for t in told] == [["changed_on_disk"], ["changed_on_disk"]]
    assert "notes.txt" not in told[1]["text"]  # once per change
