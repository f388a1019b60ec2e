from __future__ import annotations

from cerveau_tui.plan.detect import looks_like_plan_file, plan_from_markdown


def test_a_numbered_list_becomes_steps_with_backticked_files() -> None:
    text = "# Plan\n\n1. Write the parser in `src/parser.py`\n2. Add tests in `tests/test_parser.py`\n3. Run `pytest -q`\n"
    steps = plan_from_markdown(text)
    assert steps is not None
    assert [(s.id, s.files) for s in steps] == [
        ("1", ["src/parser.py"]),
        ("2", ["tests/test_parser.py"]),
        ("3", []),
    ]
    assert steps[0].title == "Write the parser in `src/parser.py`"


def test_a_checkbox_list_becomes_steps() -> None:
    steps = plan_from_markdown("- [ ] scaffold `app.py`\n- [x] write **README** `README.md`\n")
    assert steps is not None
    assert [(s.title, s.files) for s in steps] == [
        ("scaffold `app.py`", ["app.py"]),
        ("write README `README.md`", ["README.md"]),
    ]


def test_sub_bullets_give_their_files_to_the_step_above() -> None:
    text = "1. Models\n   - create `app/models.py`\n   - 2) nested `app/db.py`\n2. Views\n   - `app/views.py`\n"
    steps = plan_from_markdown(text)
    assert steps is not None and len(steps) == 2
    assert steps[0].files == ["app/models.py", "app/db.py"]
    assert steps[1].files == ["app/views.py"]


def test_step_headings_become_steps() -> None:
    text = "## Step 1: Parser\nEdit `p.py`.\n1. detail\n## Step 2: CLI\nEdit `cli.py`.\n"
    steps = plan_from_markdown(text)
    assert steps is not None
    assert [(s.title, s.files) for s in steps] == [("Parser", ["p.py"]), ("CLI", ["cli.py"])]


def test_a_single_item_is_not_a_plan() -> None:
    assert plan_from_markdown("1. only one thing\n") is None
    assert plan_from_markdown("Just prose about `a.py`.\n") is None


def test_lists_inside_code_fences_are_ignored() -> None:
    assert plan_from_markdown("```\n1. a\n2. b\n```\n") is None


def test_a_later_notes_section_does_not_add_steps_or_files() -> None:
    text = "# Plan\n1. a `a.py`\n2. b `b.py`\n\n## Notes\n1. see `c.py`\n2. and more\n"
    steps = plan_from_markdown(text)
    assert steps is not None and [s.files for s in steps] == [["a.py"], ["b.py"]]


def test_commands_and_calls_in_backticks_are_not_files() -> None:
    steps = plan_from_markdown("1. run `pytest -q` and `main()`\n2. bump `1.2`\n")
    assert steps is not None and [s.files for s in steps] == [[], []]


def test_plan_named_files_are_plan_files() -> None:
    assert looks_like_plan_file("PLAN.md", "1. a\n2. b\n")
    assert looks_like_plan_file("docs/todo.md", "1. a\n2. b\n")


def test_a_readme_with_install_steps_is_not_a_plan_file() -> None:
    assert not looks_like_plan_file("README.md", "# Install\n1. pip install x\n2. run x\n")


def test_a_readme_with_a_plan_heading_or_checkboxes_is() -> None:
    assert looks_like_plan_file("README.md", "## Implementation plan\n1. a\n2. b\n")
    assert looks_like_plan_file("notes.md", "- [ ] a\n- [ ] b\n")


def test_only_markdown_files_are_plan_files() -> None:
    assert not looks_like_plan_file("plan.txt", "1. a\n2. b\n")


def test_well_known_extensionless_files_count() -> None:
    steps = plan_from_markdown("1. add a `Makefile`\n2. add `docker/Dockerfile`\n")
    assert steps is not None and [s.files for s in steps] == [["Makefile"], ["docker/Dockerfile"]]
