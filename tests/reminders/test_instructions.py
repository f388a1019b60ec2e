"""The instruction chain: AGENTS.md read once into the prefix; what changes later is a reminder."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from cerveau_tui.context.pack import BASE_SYSTEM, system_prompt
from cerveau_tui.hooks import CallRecord
from cerveau_tui.reminders.instructions import InstructionsHook


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


def test_root_and_user_agents_md_follow_the_base_prompt(ws: Path, home: Path) -> None:
    (home / "AGENTS.md").write_text("Answer in French.\n")
    (ws / "AGENTS.md").write_text("Run `make check` before you finish.\n")
    system = system_prompt(InstructionsHook(ws, home, 8192).system_sections())
    assert system.startswith(BASE_SYSTEM)
    user_at, ws_at = system.index("Answer in French."), system.index("Run `make check`")
    assert len(BASE_SYSTEM) < user_at < ws_at


def test_no_agents_md_adds_nothing_to_the_prefix(ws: Path, home: Path) -> None:
    assert InstructionsHook(ws, home, 8192).system_sections() == []


def test_a_long_agents_md_is_cut_at_the_cap_and_says_so(ws: Path, home: Path) -> None:
    (ws / "AGENTS.md").write_text("rule\n" * 1000)  # 5,000 bytes
    (section,) = InstructionsHook(ws, home, 1024).system_sections()
    assert section.count("rule") == 1024 // 5 + 1  # the head, a partial line included
    assert "AGENTS.md is 5000 bytes; only the first 1024 are shown" in section


def test_a_symlinked_agents_md_is_not_followed(ws: Path, home: Path, tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOKEN=hunter2\n")
    os.symlink(secret, ws / "AGENTS.md")
    hook = InstructionsHook(ws, home, 8192)
    assert hook.system_sections() == []
    assert any("symbolic link" in w for w in hook.warnings)


def test_a_symlink_planted_later_is_not_read_into_a_reminder(
    ws: Path, home: Path, tmp_path: Path, turn: Any
) -> None:
    hook = InstructionsHook(ws, home, 8192)
    secret = tmp_path / "secret.txt"
    secret.write_text("TOKEN=hunter2\n")
    os.symlink(secret, ws / "AGENTS.md")
    assert hook.reminders(turn.ctx) == []


def test_a_changed_root_agents_md_is_one_reminder_with_the_new_text(
    ws: Path, home: Path, turn: Any
) -> None:
    (ws / "AGENTS.md").write_text("Use tabs.\n")
    hook = InstructionsHook(ws, home, 8192)
    assert hook.reminders(turn.ctx) == []
    (ws / "AGENTS.md").write_text("Use four spaces.\n")
    (said,) = hook.reminders(turn.ctx)
    assert "AGENTS.md at the workspace root changed" in said and "Use four spaces." in said
    assert hook.reminders(turn.ctx) == []  # once per content


def test_an_agents_md_that_appears_at_the_root_is_told(ws: Path, home: Path, turn: Any) -> None:
    hook = InstructionsHook(ws, home, 8192)
    (ws / "AGENTS.md").write_text("New rules.\n")
    (said,) = hook.reminders(turn.ctx)
    assert "appeared" in said and "New rules." in said


def test_an_agents_md_in_a_folder_the_model_read_in_is_told(
    ws: Path, home: Path, turn: Any
) -> None:
    (ws / "src" / "core").mkdir(parents=True)
    (ws / "src" / "core" / "x.py").write_text("x = 1\n")
    (ws / "src" / "AGENTS.md").write_text("No prints in src.\n")
    hook = InstructionsHook(ws, home, 8192)
    assert hook.reminders(turn.ctx) == []  # the model has not been in src/ yet
    turn.ctx.calls.append(
        CallRecord(1, "c1", "read_file", {"path": "src/core/x.py"}, True, "x = 1")
    )
    (said,) = hook.reminders(turn.ctx)
    assert "in src/" in said and "No prints in src." in said


def test_many_new_agents_md_are_told_two_a_call(ws: Path, home: Path, turn: Any) -> None:
    for name in ("a", "b", "c"):
        (ws / name).mkdir()
        (ws / name / "AGENTS.md").write_text(f"rules of {name}\n")
        turn.ctx.calls.append(CallRecord(1, name, "list_files", {"path": name}, True, ""))
    hook = InstructionsHook(ws, home, 8192)
    first, second = hook.reminders(turn.ctx), hook.reminders(turn.ctx)
    assert [len(first), len(second)] == [2, 1]
    assert "rules of c" in second[0]


@pytest.mark.parametrize(
    "path", ["a\x00b", "../../etc", "/etc/passwd", "x/" * 2000, ".git/hooks", "\udcff"]
)
def test_whatever_path_the_model_names_the_check_neither_fails_nor_leaves(
    ws: Path, home: Path, turn: Any, path: str
) -> None:
    hook = InstructionsHook(ws, home, 8192)
    turn.ctx.calls.append(CallRecord(1, "c", "read_file", {"path": path}, False, ""))
    assert hook.reminders(turn.ctx) == []


def test_the_warnings_reach_the_person_once_at_the_first_turn(
    ws: Path, home: Path, turn: Any, tmp_path: Path
) -> None:
    os.symlink(tmp_path, ws / "AGENTS.md")
    hook = InstructionsHook(ws, home, 8192)
    hook.on_turn_start(turn.ctx, "go")
    hook.on_turn_start(turn.ctx, "again")
    (notice,) = [e.payload for e in turn.rec.of("notice")]
    assert notice["level"] == "warning" and "symbolic link" in notice["text"]


def test_a_removed_agents_md_is_said_once(ws: Path, home: Path, turn: Any) -> None:
    (ws / "AGENTS.md").write_text("Use tabs.\n")
    hook = InstructionsHook(ws, home, 8192)
    (ws / "AGENTS.md").unlink()
    (said,) = hook.reminders(turn.ctx)
    assert "removed" in said
    assert hook.reminders(turn.ctx) == []


def test_through_the_engine_the_system_message_never_changes_and_the_change_is_one_reminder(
    ws: Path, engine_run: Any
) -> None:
    (ws / "AGENTS.md").write_text("Rule one: be brief.\n")

    def edit(i: int) -> None:
        if i == 0:
            (ws / "AGENTS.md").write_text("Rule two: cite the file you read.\n")

    run = engine_run(
        [{"content": "ok"}, call("list_files", path="."), {"content": "done"}],
        ["first", "second"],
        between=edit,
    )
    systems = {r["messages"][0]["content"] for r in run.requests}
    assert len(run.requests) == 3 and len(systems) == 1
    (system,) = systems
    assert "Rule one: be brief." in system and "Rule two" not in system
    assert "Rule two: cite the file you read." in run.last_user(1)
    told = [e.payload["text"] for e in run.rec.of("reminder")]
    assert len(told) == 1 and "Rule two" in told[0]


def test_a_folder_reached_after_many_files_were_read_is_still_watched(
    ws: Path, home: Path, turn: Any
) -> None:
    (ws / "src").mkdir()
    for i in range(300):
        (ws / "src" / f"m{i}.py").write_text("x = 1\n")
        turn.ctx.calls.append(
            CallRecord(1, f"c{i}", "read_file", {"path": f"src/m{i}.py"}, True, "")
        )
    hook = InstructionsHook(ws, home, 8192)
    assert hook.reminders(turn.ctx) == []
    (ws / "late").mkdir()
    (ws / "late" / "AGENTS.md").write_text("Rules for late/.\n")
    turn.ctx.calls.append(CallRecord(1, "l", "list_files", {"path": "late"}, True, ""))
    (said,) = hook.reminders(turn.ctx)
    assert "in late/" in said and "Rules for late/." in said
