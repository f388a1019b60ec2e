"""Skills: an index small enough for a 4k window in the prefix, the body loaded on trigger."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from cerveau_tui.context.pack import estimate_tokens
from cerveau_tui.reminders.skills import (
    MAX_INDEXED,
    MalformedSkill,
    SkillsHook,
    load_skills,
    parse_skill,
)
from cerveau_tui.tools.base import ToolContext, ToolError, ToolState
from cerveau_tui.tools.skill import LoadSkill


def skill(name: str, description: str, body: str = "Step 1. Do it.") -> str:
    return f"---\nname: {name}\ndescription: {description}\n---\n{body}\n"


def put(folder: Path, file: str, text: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / file).write_text(text)


def test_a_skill_file_is_its_name_description_and_body() -> None:
    s = parse_skill(skill("release", "how to cut a release", "Tag it.\nPush it."), "x.md")
    assert (s.name, s.description, s.body) == (
        "release",
        "how to cut a release",
        "Tag it.\nPush it.",
    )


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("no front matter\n", "front matter"),
        ("---\nname: a\ndescription: b\nbody\n", "not closed"),
        ("---\nname: ../etc\ndescription: b\n---\nbody\n", "not a skill name"),
        ("---\nname: a\n---\nbody\n", "no description"),
        ("---\nname: a\ndescription: b\n---\n\n", "no body"),
    ],
)
def test_a_malformed_skill_says_what_is_wrong(text: str, says: str) -> None:
    with pytest.raises(MalformedSkill, match=says):
        parse_skill(text, "bad.md")


def test_a_malformed_file_is_skipped_with_a_warning_and_the_rest_load(ws: Path, home: Path) -> None:
    put(home / "skills", "good.md", skill("good", "a fine skill"))
    put(home / "skills", "bad.md", "no front matter at all\n")
    book = load_skills(ws, home)
    assert list(book.skills) == ["good"]
    assert any("bad.md" in w and "front matter" in w for w in book.warnings)


def test_workspace_skills_are_read_and_replace_a_user_skill_of_that_name(
    ws: Path, home: Path
) -> None:
    put(home / "skills", "deploy.md", skill("deploy", "the user's way"))
    put(ws / ".cerveau" / "skills", "deploy.md", skill("deploy", "this project's way"))
    assert load_skills(ws, home).skills["deploy"].description == "this project's way"


def test_a_symlinked_workspace_skill_is_not_followed(ws: Path, home: Path, tmp_path: Path) -> None:
    put(tmp_path / "elsewhere", "s.md", skill("stolen", "read through a link"))
    (ws / ".cerveau" / "skills").mkdir(parents=True)
    os.symlink(tmp_path / "elsewhere" / "s.md", ws / ".cerveau" / "skills" / "s.md")
    book = load_skills(ws, home)
    assert book.skills == {}
    assert any("symbolic link" in w for w in book.warnings)


def test_the_index_of_many_skills_stays_small_for_a_4k_window(ws: Path, home: Path) -> None:
    for i in range(40):
        words = " ".join(f"word{j}" for j in range(60))  # 350 characters of prose
        put(home / "skills", f"s{i:02}.md", skill(f"skill-{i:02}", words))
    (index,) = SkillsHook(load_skills(ws, home)).system_sections()
    tokens = estimate_tokens(index)
    print(f"skills index: 40 skills, {len(index)} chars, {tokens} tokens (estimate)")
    assert index.count("\n- skill-") <= MAX_INDEXED
    assert "more; load_skill" in index
    assert tokens <= 500  # an eighth of a 4k window at most, whatever the files say
    assert "word30" not in index  # descriptions are cut at ~100 characters


def test_the_index_names_each_skill_and_its_description(ws: Path, home: Path) -> None:
    put(home / "skills", "r.md", skill("release", "how to cut a release"))
    (index,) = SkillsHook(load_skills(ws, home)).system_sections()
    assert "- release: how to cut a release" in index and "Step 1" not in index


def test_no_skills_no_index(ws: Path, home: Path) -> None:
    assert SkillsHook(load_skills(ws, home)).system_sections() == []


def test_load_skill_returns_the_body(ws: Path, home: Path) -> None:
    put(home / "skills", "r.md", skill("release", "how to cut a release", "Tag, then push."))
    tool = LoadSkill(load_skills(ws, home))
    out = tool.run(LoadSkill.Args(name="release"), ToolContext(workspace=ws, state=ToolState()))
    assert out.ok and "Tag, then push." in out.output


def test_load_skill_of_an_unknown_name_lists_the_skills(ws: Path, home: Path) -> None:
    put(home / "skills", "r.md", skill("release", "how to cut a release"))
    tool = LoadSkill(load_skills(ws, home))
    with pytest.raises(ToolError, match="the skills are: release"):
        tool.run(LoadSkill.Args(name="nope"), ToolContext(workspace=ws, state=ToolState()))


def test_a_long_body_is_cut_at_the_cap_and_says_so(ws: Path, home: Path) -> None:
    put(home / "skills", "r.md", skill("big", "a big one", "x" * 5000))
    body = load_skills(ws, home, cap=1000).body("big")
    assert body is not None and body.count("x") == 1000 and "only the first 1000" in body


def test_the_model_loads_a_skill_by_tool_through_the_engine(home: Path, engine_run: Any) -> None:
    put(home / "skills", "r.md", skill("release", "how to cut a release", "Tag, then push."))
    run = engine_run(
        [
            {"tool_calls": [{"name": "load_skill", "arguments": {"name": "release"}}]},
            {"content": "done"},
        ],
        ["release it"],
    )
    assert "- release: how to cut a release" in run.messages(0)[0]["content"]
    assert "load_skill" in [t["function"]["name"] for t in run.requests[0]["tools"]]
    tool_msgs = [m for m in run.messages(1) if m["role"] == "tool"]
    assert "Tag, then push." in tool_msgs[-1]["content"]


def test_a_malformed_skill_is_a_warning_to_the_person_at_the_first_turn(
    ws: Path, home: Path, turn: Any
) -> None:
    put(home / "skills", "bad.md", "---\nname: bad\n---\nbody\n")
    hook = SkillsHook(load_skills(ws, home))
    hook.on_turn_start(turn.ctx, "go")
    hook.on_turn_start(turn.ctx, "again")
    (notice,) = [e.payload for e in turn.rec.of("notice")]
    assert notice["level"] == "warning" and "bad.md: no description" in notice["text"]
